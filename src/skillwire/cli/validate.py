"""`skillwire validate SOURCE...`: what a server would refuse, and what another host may read differently.

SOURCE is anything `skillwire serve` takes (`sources.spec`: a folder, KIND:TARGET, PREFIX=SOURCE). Refusals come
from the source's own scan, the very code `skillwire serve` runs (every source builds skills with the core rules
of `skill_rules`); warnings come from `skillwire.core.lint`, on SKILL.md bytes read through the catalog. For folders,
files a skill's folder holds but the server leaves out are reported too. Exit status: 0 when nothing would be
refused (warnings alone are fine), 1 when something would be, 2 for usage errors.

`--format json` prints one object, schema version 1 (stable: keys are only ever added):

    {"version": 1,
     "skills":   [{"uri", "path", "files", "size"}],                       served skills
     "refused":  [{"path", "line", "rule", "message", "fix", "skill"}],   skill=false: a skipped path, no skill refused
     "warnings": [{"path", "line", "column", "rule", "message", "fix"}],
     "summary":  {"skills", "refused", "skipped", "warnings", "ok"}}
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from skillwire.cli.errors import UsageError, nothing_found
from skillwire.cli.formats import Annotation, Level, emit, repo_path
from skillwire.cli.output import Styled, Terminal
from skillwire.core.catalog import Catalog, FileContent
from skillwire.core.errors import SpecError
from skillwire.core.fixes import FIXES
from skillwire.core.lint import LintWarning, lint_skill_md
from skillwire.core.skill_rules import shown_name
from skillwire.sources.folder.source import FolderFile
from skillwire.sources.ignore import IGNORE_FILE
from skillwire.sources.port import SourceOptions
from skillwire.sources.safe_open import read_regular
from skillwire.sources.spec import open_sources, parse_spec

MAX_SKILL_MD_BYTES = 8 << 20  # a SKILL.md larger than this is not linted (the frontmatter sits at its start anyway)

SCHEMA_VERSION = 1
DUPLICATE_NAME = "duplicate-name"  # a warning: the spec allows it, hosts that key skills by name do not
_QUIET = frozenset({IGNORE_FILE, ".gitkeep"})  # left out on purpose: saying so would be noise
PER_GROUP = 3  # example paths shown per message without -v


def run_validate(args: argparse.Namespace) -> int:
    roots = [Path(s.target) for s in map(parse_spec, args.paths) if s.kind == "folder"]
    try:  # project ignores: a repo's .venv and node_modules hold no skills
        source = open_sources(args.paths, SourceOptions(project_ignores=True))
    except SpecError as error:
        raise UsageError(str(error)) from None
    catalog = source.scan()
    nothing = nothing_found(catalog, args.paths)
    if nothing is not None:
        raise nothing
    warnings = duplicate_name_warnings(catalog, roots) + _lint_all(catalog, roots) + _not_served(catalog)
    report = ValidateReport(build_report(catalog, roots, warnings))
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


def serve_report(catalog: Catalog, paths: Sequence[str]) -> ValidateReport:
    """`serve --format json|github`'s start summary: validate's report of what is served, refused and duplicated."""
    roots = [Path(p) for p in paths]
    return ValidateReport(build_report(catalog, roots, duplicate_name_warnings(catalog, roots)))


def duplicate_name_warnings(catalog: Catalog, roots: Sequence[Path]) -> list[LintWarning]:
    """One warning per name that several served skills share, naming every one of their SKILL.md paths."""
    out = []
    for name, uris in catalog.duplicate_names().items():
        paths = [_shown(catalog, uri, roots) for uri in uris]
        out.append(
            LintWarning(
                path=paths[0],
                line=None,
                column=None,
                rule=DUPLICATE_NAME,
                message=f"the name '{name}' is used by {len(paths)} skills: {', '.join(paths)}; "
                "a host that keys skills by name sees only one",
                fix="rename all but one of them (the folder and its 'name'), or serve them from separate servers",
            )
        )
    return out


def build_report(catalog: Catalog, roots: Sequence[Path], warnings: Sequence[LintWarning]) -> dict[str, Any]:
    """The JSON report (schema version 1) for a scanned catalog and its lint warnings."""
    skills = [
        {"uri": s.uri, "path": _shown(catalog, s.uri, roots), "files": len(s.files), "size": s.total_size}
        for s in catalog.skills
    ]
    refused = [
        {
            "path": r.path,
            "line": r.line,
            "rule": r.rule,
            "message": r.message,
            "fix": FIXES.get(r.rule),
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


def _lint_all(catalog: Catalog, roots: Sequence[Path]) -> list[LintWarning]:
    """Lint every served SKILL.md, and the SKILL.md of every skill refused for its frontmatter or name."""
    targets: list[tuple[FileContent, str]] = []  # (how to read it, path to show)
    for skill in catalog.skills:
        served = catalog.file(skill.uri)
        if served is not None:
            targets.append((served.content, _shown(catalog, skill.uri, roots)))
    for refusal in catalog.refusals:  # a refused skill in a folder: its SKILL.md is read from where it was found
        if refusal.skill and os.path.basename(refusal.path) == "SKILL.md" and _in_any(refusal.path, roots):
            targets.append((_AnyFile(refusal.path), refusal.path))
    out: list[LintWarning] = []
    for content, shown in targets:
        # the file may have been swapped for a FIFO or a device since the scan: never wait, never over-read
        raw = content.read(MAX_SKILL_MD_BYTES)
        if raw is None or len(raw) > MAX_SKILL_MD_BYTES:
            continue
        out.extend(lint_skill_md(raw, path=shown))
    return out


def _not_served(catalog: Catalog) -> list[LintWarning]:
    """Files and folders inside served skills that the server leaves out (built-in ignores, .skillwireignore).

    The catalog is the truth: whatever is on disk under a skill's folder but in no manifest is not served, so no
    ignore rule is restated here. A `.gitkeep` (and a folder holding nothing else) is left out on purpose: no
    warning for it.
    """
    served: set[str] = set()
    skill_dirs: set[str] = set()
    for skill in catalog.skills:
        for f in skill.files:
            entry = catalog.file(f.uri)
            if entry is not None and isinstance(entry.content, FolderFile):
                served.add(entry.content.path)
                if f.rel_path == "SKILL.md":
                    skill_dirs.add(os.path.dirname(entry.content.path))
    out: list[LintWarning] = []
    seen: set[str] = set()
    for top in sorted(skill_dirs):
        for folder, dirs, files in os.walk(top):
            for name in list(dirs):
                path = os.path.join(folder, name)
                if not any(s.startswith(path + os.sep) for s in served) and path not in seen:
                    dirs.remove(name)
                    seen.add(path)
                    if not _only_placeholders(path):
                        out.append(_ignored(path + os.sep, "folder"))
            for name in files:
                path = os.path.join(folder, name)
                if name not in _QUIET and path not in served and path not in seen and not os.path.islink(path):
                    seen.add(path)
                    out.append(_ignored(path, "file"))
    return out


def _only_placeholders(folder: str) -> bool:
    """True if `folder` holds no file but `.gitkeep` placeholders (at any depth): nothing anyone meant to serve."""
    return all(name in _QUIET for _, _, files in os.walk(folder) for name in files)


def _ignored(path: str, kind: str) -> LintWarning:
    return LintWarning(
        path=shown_name(path),  # a name that is not UTF-8 is shown escaped: JSON and the terminal can carry it
        line=None,
        column=None,
        rule="not-served",
        message=f"this {kind} is in the skill's folder but is not served (built-in ignore rules or .skillwireignore)",
        fix="delete it, or if the skill needs it, take it out of .skillwireignore",
    )


def _in_any(path: str, roots: Sequence[Path]) -> bool:
    """True if `path` (as a refusal names it) lies under one of the folder `roots` as they were given."""
    return any(path == str(root) or path.startswith(str(root).rstrip(os.sep) + os.sep) for root in roots)


def _shown(catalog: Catalog, uri: str, roots: Sequence[Path]) -> str:
    """The SKILL.md path as the user would write it: under the root they named, not the resolved real path."""
    served = catalog.file(uri)
    if served is None or not isinstance(served.content, FolderFile):
        return uri
    location = served.content.path
    for root in roots:
        real = os.path.realpath(root)
        if location.startswith(real.rstrip(os.sep) + os.sep):
            # shown_name: a root's own path may hold bytes that are not UTF-8
            return shown_name(os.path.join(str(root), os.path.relpath(location, real)))
    return shown_name(location)


@dataclass(frozen=True, slots=True)
class _AnyFile:
    """A SKILL.md named by a refusal: read as a regular file, not checked inside a root (the user named it)."""

    path: str

    def read(self, limit: int) -> bytes | None:
        try:
            return read_regular(self.path, limit=limit)
        except OSError:
            return None


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
    "DUPLICATE_NAME",
    "FIXES",
    "SCHEMA_VERSION",
    "ValidateReport",
    "build_report",
    "duplicate_name_warnings",
    "headline",
    "print_human",
    "run_validate",
    "serve_report",
]
