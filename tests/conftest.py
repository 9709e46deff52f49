"""Suite-wide settings: the hypothesis profiles of the property tests (tests/property).

`default` keeps `make test` fast and reproducible (derandomized, no example database);
`long` (SKILLWIRE_HYPOTHESIS=long, as `make fuzz` sets it) tries many more examples.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# Derandomized with no database: every run, on every machine and in CI, tries the same examples.
settings.register_profile(
    "default",
    max_examples=100,
    derandomize=True,
    database=None,
    deadline=2000,  # ms per example: far above a normal example's time, so only a real stall trips it
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
# Random and far longer: for a search run by hand (`make fuzz`), not for CI.
settings.register_profile(
    "long",
    max_examples=5000,
    derandomize=False,
    database=None,
    deadline=5000,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("SKILLWIRE_HYPOTHESIS", "default"))
