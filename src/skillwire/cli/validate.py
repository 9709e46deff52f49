"""`skillwire validate SOURCE...`: what a server would refuse, and what another host may read differently.

SOURCE is anything `skillwire serve` takes (`sources.spec`: a folder, KIND:TARGET, PREFIX=SOURCE). Refusals come
from the source's own scan, the very code `skillwire serve` runs (every source builds skills with the core rules
of `skill_rules`); warnings are `catalog_warnings`, the very function `skillwire serve` warns with at start.
`--strict-portable` refuses a skill with a portability warning, as `serve --strict-portable` does. Exit status: 0
when nothing would be refused (warnings alone are fine), 1 when something would be, 2 for usage errors.

`--format json` prints one object, schema version 1 (stable: keys are only ever added):

    {"version": 1,
     "skills":   [{"uri", "path", "files", "size"}],                       served skills
     "refused":  [{"path", "line", "rule", "message", "fix", "skill"}],   skill=false: a skipped path, no skill refused
     "warnings": [{"path", "line", "column", "rule", "message", "fix"}],
     "summary":  {"skills", "refused", "skipped", "warnings", "ok"}}
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from skillwire.cli.catalog_warnings import FolderRoots, catalog_warnings
from skillwire.cli.errors import UsageError, nothing_found
from skillwire.cli.formats import Annotation, Level, emit, repo_path
from skillwire.cli.output import Styled, Terminal
from skillwire.core.catalog import Catalog
from skillwire.core.errors import SpecError
from skillwire.core.fixes import FIXES
from skillwire.core.lint import LintWarning
from skillwire.server.portability import PortabilityCheck
from skillwire.sources.port import SourceOptions
from skillwire.sources.spec import open_sources

SCHEMA_VERSION = 1
PER_GROUP = 3  # example paths shown per message without -v


def run_validate(args: argparse.Namespace) -> int:
    try:  # project ignores: a repo's .venv and node_modules hold no skills
        roots = FolderRoots(args.paths)
        source = open_sources(args.paths, SourceOptions(project_ignores=True))
    except SpecError as error:
        raise UsageError(str(error)) from None
    catalog = source.scan()
    nothing = nothing_found(catalog, args.paths)
    if nothing is not None:
        raise nothing
    check = PortabilityCheck(roots.shown)
    if args.strict_portable:  # what serve --strict-portable would refuse, refused here too
        catalog = check.screen(catalog)
    report = ValidateReport(build_report(catalog, roots, catalog_warnings(catalog, roots, check)))
    emit(args.format, report, verbose=args.verbose)  # a reader that went away is told here, as main() expects
    return 1 if report.data["summary"]["refused"] else 0


@dataclass(frozen=True, slots=True)
class ValidateReport:
    """The validate report (schema version 1) in the three `--format`s."""

    data: dict[str, Any]

    def as_json(self) -> dict[str, Any]:
        return self.data

    def annotations(self) -> list[Annotation]:
        """A refused skill is an error; a skipped path and a warning are warnings; each with its fix."""
        out = []
        for item in [*self.data["refused"], *self.data["warnings"]]:
            level: Level = "error" if item.get("skill") else "warning"
            message = item["message"] + (f" (fix: {item['fix']})" if item.get("fix") else "")
            where = repo_path(str(item["path"]))
            out.append(Annotation(level, message, item["rule"], where, item.get("line"), item.get("column")))
        return out

    def summary(self) -> str:
        return headline(self.data)

    def print_text(self, out: TextIO, *, colour: bool, verbose: bool) -> None:
        print_human(self.data, out, colour=colour, verbose=verbose)


def build_report(catalog: Catalog, roots: FolderRoots, warnings: Sequence[LintWarning]) -> dict[str, Any]:
    """The JSON report (schema version 1) for a scanned catalog and its warnings (`catalog_warnings`); `serve
    --format json|github` prints it too."""
    skills = [
        {"uri": s.uri, "path": roots.shown(catalog, s.uri), "files": len(s.files), "size": s.total_size}
        for s in catalog.skills
    ]
    refused = [
        {
            "path": r.path,
            "line": r.line,
            "rule": r.rule,
            "message": r.message,
            "fix": r.fix or FIXES.get(r.rule),
            "skill": r.skill,
        }
        for r in catalog.refusals
    ]
    warned = [
        {"path": w.path, "line": w.line, "column": w.column, "rule": w.rule, "message": w.message, "fix": w.fix}
        for w in warnings
    ]
    n_refused = sum(r.skill for r in catalog.refusals)
    summary = {
        "skills": len(skills),
        "refused": n_refused,
        "skipped": len(catalog.refusals) - n_refused,
        "warnings": len(warned),
        "ok": n_refused == 0,
    }
    return {"version": SCHEMA_VERSION, "skills": skills, "refused": refused, "warnings": warned, "summary": summary}


# -- human output ---------------------------------------------------------------------------------------------------

# Names, paths and numbers in a message: messages that differ only there are one group.
_VARIABLE = re.compile(r"('[^']*'|\"[^\"]*\"|(?<![\w.])\d+(?![\w.]))")


def headline(report: dict[str, Any]) -> str:
    """The summary line: "3 skills ok, 1 refused, 2 warnings (in 2 files)"."""
    s = report["summary"]
    warned_files = len({w["path"] for w in report["warnings"]})
    return (
        f"{s['skills']} skill{'s' * (s['skills'] != 1)} ok, {s['refused']} refused, "
        f"{s['warnings']} warning{'s' * (s['warnings'] != 1)}"
        + (f" (in {warned_files} file{'s' * (warned_files != 1)})" if warned_files else "")
        + (f", {s['skipped']} path{'s' * (s['skipped'] != 1)} skipped" if s["skipped"] else "")
    )


def print_human(report: dict[str, Any], out: TextIO, *, colour: bool, verbose: bool) -> None:
    """Summary line first, then refusals and warnings grouped by rule (most common first)."""
    term = Terminal(out, colour=colour)  # paths and messages name files on disk: every part is escaped
    term.say(Styled("green" if report["summary"]["ok"] else "red", headline(report)))
    refused = [r for r in report["refused"] if r["skill"]]
    skipped = [r for r in report["refused"] if not r["skill"]]
    if refused:
        term.say()
        term.say(Styled("red", f"refused: {len(refused)} (the server leaves these out)"))
        _groups(refused, term, verbose, lambda r: r.get("fix"))
    if report["warnings"]:
        term.say()
        term.say(Styled("yellow", f"warnings: {len(report['warnings'])} (served, but hosts may read them differently)"))
        _groups(report["warnings"], term, verbose, lambda w: w.get("fix"))
    if skipped:
        term.say()
        term.say(Styled("yellow", f"skipped: {len(skipped)} path(s) outside any skill"))
        _groups(skipped, term, verbose, lambda r: r.get("fix"))
    if not verbose and _truncated(report):
        term.say()
        term.say("(-v lists every path; --format json gives everything)")
    out.flush()


def _groups(
    items: Sequence[dict[str, Any]],
    term: Terminal,
    verbose: bool,
    fix: Callable[[dict[str, Any]], str | None],
) -> None:
    by_rule: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        by_rule.setdefault(item["rule"], []).append(item)
    for rule, group in sorted(by_rule.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        term.say("  ", Styled("bold", "[" + rule + "]"), f" {len(group)}")
        # Same message but for names and numbers: one line and a few example paths.
        by_shape: dict[str, list[dict[str, Any]]] = {}
        for item in group:
            by_shape.setdefault(_shape(item["message"]), []).append(item)
        for same in sorted(by_shape.values(), key=lambda v: -len(v)):
            message = _merged([i["message"] for i in same])
            count = f"({len(same)}) " if len(same) > 1 else ""
            term.say(f"    {count}{message}")
            shown = same if verbose else same[:PER_GROUP]
            shared = len({fix(i) for i in group}) == 1
            for item in shown:
                own = "" if shared or not fix(item) else f"  fix: {fix(item)}"
                term.say("      ", Styled("dim", _where(item)), own)
            if len(same) > len(shown):
                term.say(f"      ... and {len(same) - len(shown)} more")
        hint = fix(group[0])
        if hint and len({fix(i) for i in group}) == 1:
            term.say(f"    fix: {hint}")


def _shape(message: str) -> str:
    return _VARIABLE.sub("…", message)


def _merged(messages: Sequence[str]) -> str:
    """One message for a group: the parts every message shares, '…' where they differ."""
    split = [_VARIABLE.split(m) for m in messages]
    parts = [p if all(s[i] == p for s in split) else "…" for i, p in enumerate(split[0])]
    return "".join(parts)


def _where(item: dict[str, Any]) -> str:
    where = str(item["path"])
    if item.get("line") is not None:
        where += f":{item['line']}"
        if item.get("column") is not None:
            where += f":{item['column']}"
    return where


def _truncated(report: dict[str, Any]) -> bool:
    counts: dict[str, int] = {}
    for item in [*report["refused"], *report["warnings"]]:
        key = item["rule"] + _shape(item["message"])
        counts[key] = counts.get(key, 0) + 1
    return any(n > PER_GROUP for n in counts.values())


__all__ = [
    "FIXES",
    "SCHEMA_VERSION",
    "ValidateReport",
    "build_report",
    "headline",
    "print_human",
    "run_validate",
]
