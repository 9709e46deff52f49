"""skillwire choice (issue 20): one exception tree. Every module of the package is imported and its exception classes
looked at, so a class defined outside `skillwire.core.errors` fails here unless it is internal and says why."""

from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil

import skillwire
from skillwire.cli.errors import CliError
from skillwire.core.errors import SkillwireError

INTERNAL = {
    "skillwire.client.bounded.ResponseOverLimit": "an httpx2 StreamError the SDK makes one error answer of; "
    "SkillsClient raises ResponseTooLarge",
    "skillwire.service.jwt_verifier.IssuerUnavailable": "caught by the JWT verifier: the token is refused, and logged",
    "skillwire.service.listen_limits.ListenRefused": "caught by StreamGate: sent as a JSON-RPC error",
    "skillwire.service.rollout.BadPlan": "caught by follow_plan (logged) and by `serve --plan` (one line)",
    "skillwire.sources.folder.records.NeedFullScan": "caught by FolderSource: the root is scanned again",
    "skillwire.sources.git.tree.TreeTooLarge": "caught by GitSource: the commit is refused",
    "skillwire.sources.packages.tree.TreeProblem": "caught by PackageSource: the package is refused",
    "skillwire.sources.safe_open.UnsafeFile": "an OSError: a source refuses the file, as any unreadable one",
}
"""Exceptions that never reach a caller of the API, and where each is caught. The CLI's own (`CliError` and its
subclasses in `skillwire.cli`, reported by `main` as one line and an exit status) and names with a leading underscore
need no entry."""


@functools.cache
def defined_exceptions() -> dict[str, type[BaseException]]:
    """Every exception class a module of the package defines, by its dotted name (the entry points excepted)."""
    found: dict[str, type[BaseException]] = {}
    for module_info in pkgutil.walk_packages(skillwire.__path__, "skillwire."):
        if module_info.name.rpartition(".")[2] == "__main__":  # runs the CLI when imported
            continue
        module = importlib.import_module(module_info.name)
        for name, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == module.__name__:
                found[f"{module.__name__}.{name}"] = value
    return found


def stray(found: dict[str, type[BaseException]]) -> list[str]:
    """The classes that break the rule: every exception is in `core.errors`, or internal and accounted for."""
    return sorted(
        name
        for name, cls in found.items()
        if cls.__module__ != "skillwire.core.errors"
        and not cls.__name__.startswith("_")
        and not (issubclass(cls, CliError) and cls.__module__.startswith("skillwire.cli."))
        and name not in INTERNAL
    )


def test_every_exception_is_in_the_tree_or_internal() -> None:
    """A public exception class outside `skillwire.core.errors` is a second tree: move it there (and export it), or
    make it private, or list it in INTERNAL with where it is caught."""
    assert stray(defined_exceptions()) == []


def test_no_internal_exception_claims_to_be_a_skillwire_error() -> None:
    """`except SkillwireError` catches only classes drawn in the tree: an internal one must not subclass it."""
    found = defined_exceptions()
    assert [
        n for n, c in found.items() if issubclass(c, SkillwireError) and c.__module__ != "skillwire.core.errors"
    ] == []


def test_every_internal_entry_still_names_a_class() -> None:
    """INTERNAL does not outlive the classes it excuses."""
    assert set(INTERNAL) <= set(defined_exceptions())


def test_a_stray_exception_is_caught() -> None:
    """The check can fail: a public exception class defined in another module is reported."""

    class Refused(Exception):
        pass

    Refused.__module__ = "skillwire.host.somewhere"
    assert stray({"skillwire.host.somewhere.Refused": Refused}) == ["skillwire.host.somewhere.Refused"]
