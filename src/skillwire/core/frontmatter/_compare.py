"""Comparison: which frontmatter fields differ, as a host must check them against a listing.

Spec, Frontmatter Verification: hosts "compare it field-by-field against the entry's
frontmatter. Any discrepancy MUST be treated as a verification failure". Values are
compared as JSON values, as a JavaScript host would see them after `JSON.parse`.

    frontmatter_differences({"name": "a", "n": 1}, {"name": "a", "n": 1.0})   # ()
    frontmatter_differences({"name": "a"}, {"name": "b", "x": True})           # ('name', 'x')
"""

from __future__ import annotations

import math
from collections.abc import Mapping


def frontmatter_differences(expected: Mapping[str, object], actual: Mapping[str, object]) -> tuple[str, ...]:
    """Top-level field names whose values differ between two frontmatter objects.

    Numbers compare as JavaScript doubles (1 == 1.0), booleans never equal numbers, object
    key order is irrelevant, array order matters. A field missing on either side counts.
    Returns field names in `expected` order, then extra `actual` fields; () means identical.
    """
    names = list(expected)
    names.extend(name for name in actual if name not in expected)
    return tuple(
        name
        for name in names
        if name not in expected or name not in actual or not _json_equal(expected[name], actual[name])
    )


def _json_equal(a: object, b: object) -> bool:
    """Equal as JSON values seen by JavaScript: doubles for numbers, no bool/number mixing."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return _as_double(a) == _as_double(b)
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    return False


def _as_double(number: int | float) -> float:
    """A number as the double JavaScript holds (a huge int overflows to +-Infinity)."""
    try:
        return float(number)
    except OverflowError:
        return math.inf if number > 0 else -math.inf
