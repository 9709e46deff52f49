"""`ClientLimits`: the caps a host holds one server to (issue 9, holes 4 and 5), checked when they are built.

skillwire choices: every cap is a positive whole number; a read's bound on the wire is its listed
size times the worst JSON or base64 encoding plus an envelope; the defaults take a real catalog of
100,000 skills.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError, replace
from typing import Any

import pytest

from skillwire import MAX_TOTAL_BYTES, ClientLimits
from skillwire.core.hosting.limits import DEFAULT_LIMITS, WIRE_BYTES_PER_BYTE


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "10", None])
@pytest.mark.parametrize(
    "name",
    [
        "max_listing_pages",
        "max_listing_entries",
        "max_listing_bytes",
        "max_stalled_pages",
        "max_response_bytes",
        "max_read_bytes",
        "envelope_bytes",
    ],
)
def test_every_limit_must_be_a_positive_int(name: str, value: Any) -> None:
    """skillwire choice: a cap of 0, a negative, a float, a bool or a string is refused, naming the field."""
    with pytest.raises(ValueError, match=f"ClientLimits.{name} must be a positive int"):
        ClientLimits(**{name: value})


@pytest.mark.parametrize("value", [0, -1, float("nan"), float("inf"), True, "10", None])
@pytest.mark.parametrize("name", ["max_stalled_seconds", "max_listing_seconds"])
def test_every_time_limit_must_be_a_positive_finite_number_of_seconds(name: str, value: Any) -> None:
    """skillwire choice: a time limit may be a fraction of a second, but not 0, negative, NaN, infinite or a bool."""
    with pytest.raises(ValueError, match=f"ClientLimits.{name} must be a positive number of seconds"):
        ClientLimits(**{name: value})
    quarter: dict[str, Any] = {name: 0.25}
    assert getattr(ClientLimits(**quarter), name) == 0.25


def test_a_listing_that_adds_nothing_ends_within_10_s_by_default() -> None:
    """Issue 19, hole 8: the default stall time is under the issue's 10 s; the default listing time is some 8 times
    what 100,000 real skills in pages of 10 took (76 s, `python -m bench.host_listing --page-size 10`)."""
    assert DEFAULT_LIMITS.max_stalled_seconds < 10
    assert DEFAULT_LIMITS.max_stalled_pages <= 16
    assert DEFAULT_LIMITS.max_listing_seconds >= 600


def test_one_page_cannot_be_larger_than_the_whole_listing() -> None:
    """skillwire choice: max_response_bytes above max_listing_bytes is a contradiction, refused with both numbers."""
    with pytest.raises(ValueError, match="cannot exceed max_listing_bytes"):
        ClientLimits(max_listing_bytes=1000, max_response_bytes=2000)


def test_limits_are_a_frozen_value() -> None:
    """skillwire choice: limits are a value; a changed copy is made with `replace`."""
    with pytest.raises(FrozenInstanceError):
        DEFAULT_LIMITS.max_listing_pages = 1  # type: ignore[misc]
    assert replace(DEFAULT_LIMITS, max_listing_pages=5).max_listing_pages == 5


def test_a_read_is_bounded_by_its_listed_size_times_the_worst_encoding_plus_the_envelope() -> None:
    """skillwire choice: JSON escapes one byte as up to six (`\\u0001`); base64 grows it by 4/3: six bounds both."""
    limits = ClientLimits(envelope_bytes=1000)
    assert WIRE_BYTES_PER_BYTE == 6
    assert limits.read_bound(101) == 101 * 6 + 1000
    assert limits.read_bound(0) == 1000
    assert limits.read_bound(None) == limits.max_read_bytes * 6 + 1000


def test_a_read_of_unlisted_size_is_bounded_by_the_specs_per_skill_total() -> None:
    """Spec Limits: a skill is at most 16 MiB; with no size listed (dynamic), that is the content bound."""
    assert DEFAULT_LIMITS.max_read_bytes == MAX_TOTAL_BYTES


def test_the_defaults_take_a_catalog_of_100000_skills() -> None:
    """skillwire choice: 100,000 skills at 10 per page, about 2 KB of entry each, fit every default cap."""
    assert DEFAULT_LIMITS.max_listing_pages >= 100_000 // 10
    assert DEFAULT_LIMITS.max_listing_entries >= 100_000
    assert DEFAULT_LIMITS.max_listing_bytes >= 100_000 * 2_000
