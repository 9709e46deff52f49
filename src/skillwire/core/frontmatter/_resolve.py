"""The YAML 1.2 core-schema resolver: which JavaScript value a scalar becomes, as yaml v2 decides.

Both parsers (the fast path and the composer) resolve scalars here, so they cannot disagree on
`yes`, `0755` or `1e3`. Numbers are JavaScript doubles; keys are stringified as `String(value)`.

    resolve_plain("0755")          # 755 (YAML 1.2: decimal, not octal)
    resolve_tagged("!!int", "1.5") # "1.5" (JS keeps the string of a tag that does not apply)
    js_key(1.5)                    # "1.5"
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import TypeAlias

JSONValue: TypeAlias = bool | int | float | str | list["JSONValue"] | dict[str, "JSONValue"] | None

Raw: TypeAlias = JSONValue  # a value before JSON checks: numbers may still be NaN/Infinity

# yaml v2 core schema (schema/core/*.js), in the order the tags are tried. The tests are
# mutually exclusive, so one alternation tells which tag a plain scalar resolves to.
CORE = re.compile(
    r"(?P<null>~|[Nn]ull|NULL|)"  # nullTag (the empty plain scalar is null)
    r"|(?P<bool>[Tt]rue|TRUE|[Ff]alse|FALSE)"  # boolTag: no yes/no/on/off/y/n
    r"|(?P<oct>0o[0-7]+)"  # intOct: 0o17 (0755 is decimal 755)
    r"|(?P<int>[-+]?[0-9]+)"  # int: no 1_000, no 1:30
    r"|(?P<hex>0x[0-9a-fA-F]+)"  # intHex
    r"|(?P<special>[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)"  # floatNaN
    r"|(?P<exp>[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+)"  # floatExp
    r"|(?P<float>[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*))"  # float
)
# The first characters a plain scalar that is not a string can have.
CORE_FIRST = frozenset("~nNtTfF0123456789+-.")
YAML_TAG = "tag:yaml.org,2002:"
# An explicit core tag applies only if one of its own tests matches; otherwise JS
# warns "Unresolved tag" and keeps the string (`!!int 1.5` is "1.5", `!!float 1` is "1").
_TAG_GROUPS = {
    "null": ("null",),
    "bool": ("bool",),
    "int": ("oct", "int", "hex"),
    "float": ("special", "exp", "float"),
}
# YAML 1.1 types that JS builds as Uint8Array/Date/Symbol (scalars) or Map/Set/pairs.
UNSUPPORTED_SCALAR_TAGS = frozenset(("binary", "timestamp", "merge"))
UNSUPPORTED_COLLECTION_TAGS = {"omap": False, "pairs": False, "set": True}  # name -> is a mapping


def resolve_plain(value: str) -> Raw:
    """The JavaScript value of an untagged plain scalar: yaml v2 core-schema resolution."""
    if value and value[0] not in CORE_FIRST:
        return value
    match = CORE.fullmatch(value)
    return value if match is None else _construct(match.lastgroup, value)


def resolve_tagged(tag: str, value: str) -> Raw:
    """The JavaScript value of a scalar with an explicit `tag` not in UNSUPPORTED_SCALAR_TAGS."""
    if tag == "!" or not tag.startswith(YAML_TAG):
        return value  # non-specific and unknown tags: JS keeps the string
    groups = _TAG_GROUPS.get(tag[len(YAML_TAG) :])
    if groups is not None:
        match = CORE.fullmatch(value)
        if match is not None and match.lastgroup in groups:
            return _construct(match.lastgroup, value)
    return value  # !!str, a core tag whose tests fail, and tags that do not apply to scalars (!!map, !!set...)


def integral_as_int(number: float) -> int | float:
    """A finite double as a JSON value: an `int` if JSON.stringify prints it as an integer."""
    if number.is_integer() and abs(number) < 1e21:
        return int(number)
    return number


def _construct(group: str | None, value: str) -> Raw:
    """The JavaScript value of a plain scalar that matched core-schema test `group`."""
    if group == "null":
        return None
    if group == "bool":
        return value[0] in "tT"
    if group == "int":
        digits = value.lstrip("+-").lstrip("0")
        if len(digits) <= 15:
            return int(value)
        if len(digits) > 400:  # beyond any double (and Python's int-parsing limit): parseInt gives Infinity
            return -math.inf if value.startswith("-") else math.inf
        return _to_double(int(value))
    if group == "oct":
        return _to_double(int(value[2:], 8))
    if group == "hex":
        return _to_double(int(value[2:], 16))
    if group == "special":
        if value[-3:].lower() == "nan":
            return math.nan
        return -math.inf if value.startswith("-") else math.inf
    return float(value)  # exp, float: parseFloat


def _to_double(number: int) -> int | float:
    """A parsed integer as JavaScript holds it: exact up to 2**53, else the nearest double."""
    if -(2**53) <= number <= 2**53:
        return number
    try:
        return float(number)
    except OverflowError:
        return math.inf if number > 0 else -math.inf


def js_key(raw: Raw) -> str:
    """The property name JavaScript gives a scalar key: String(value), null -> ''."""
    if raw is None:
        return ""
    if raw is True:
        return "true"
    if raw is False:
        return "false"
    if isinstance(raw, str):
        return raw
    if isinstance(raw, int):
        return str(raw)
    assert isinstance(raw, float)
    return js_number_str(raw)


def js_number_str(number: float) -> str:
    """ECMAScript Number::toString(10) (shortest round-trip digits, as Python's repr)."""
    if math.isnan(number):
        return "NaN"
    if number == 0:
        return "0"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    if number < 0:
        return "-" + js_number_str(-number)
    _, digit_tuple, exponent = Decimal(repr(number)).normalize().as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple))
    k = len(digits)
    n = exponent + k  # number = 0.digits * 10**n
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + digits
    e = n - 1
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"
