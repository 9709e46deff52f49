"""Errors a command reports as one line, without a traceback, and the exit status each one means.

raise CliError("cannot listen on 127.0.0.1:80: permission denied")     # exit 1: it failed
raise UsageError("no skill found under 'skills/'")                     # exit 2: the command was asked wrongly
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skillwire.core.catalog import Catalog

__all__ = ["CliError", "UsageError", "nothing_found"]

_BAD_ROOT = ("root-missing", "root-not-folder", "upstream-unavailable")


class CliError(Exception):
    """A failure to report as one line, without a traceback (exit status 1)."""

    status: int = 1


class UsageError(CliError):
    """The command cannot do what it was asked, as asked: exit status 2, like argparse's usage errors."""

    status = 2


def nothing_found(catalog: Catalog, paths: Sequence[str]) -> UsageError | None:
    """Why `serve` or `validate` has nothing to work on (no usable root, or not one SKILL.md), else None.

    A bad root beside good ones is only reported (the others are served). Refused skills count as found:
    the summary says why each is refused.
    """
    if len(catalog) or any(r.skill and r.rule not in _BAD_ROOT for r in catalog.refusals):
        return None
    bad = [r for r in catalog.refusals if r.rule in _BAD_ROOT]
    if bad and len(bad) == len(paths):
        return UsageError("; ".join(f"{r.path}: {r.message}" for r in bad))
    shown = ", ".join(str(p) for p in paths)
    return UsageError(f"no skill found under {shown} (a skill is a folder holding a SKILL.md)")
