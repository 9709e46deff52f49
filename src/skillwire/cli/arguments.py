"""Value types for the command line's numeric options: a bad value is argparse's usage error, naming the flag.

Shared by `serve` (`source_options.py`) and the commands that talk to a server (`client_options.py`).
"""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """--max-pages, --max-connections, ...: a whole number, 1 or more."""
    return _at_least(text, 1, "a positive whole number")


def positive_float(text: str) -> float:
    """--timeout, --idle-timeout, ...: a finite number above 0."""
    try:
        number = float(text)
    except ValueError:
        number = 0.0
    if not 0 < number < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number")
    return number


def page_size(text: str) -> int:
    """--page-size: a whole number from 1 to 10000 (argparse names the flag in its error)."""
    number = positive_int(text)
    if number > 10_000:
        raise argparse.ArgumentTypeError(f"{text!r} is more than 10000")
    return number


def whole(text: str) -> int:
    """--ttl-ms, --read-cache-mb: a whole number, 0 or more."""
    return _at_least(text, 0, "a whole number of 0 or more")


def _at_least(text: str, low: int, what: str) -> int:
    try:
        number = int(text)
    except ValueError:
        number = low - 1
    if number < low:
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}")
    return number
