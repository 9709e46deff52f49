"""`core.fixes.FIXES`: every rule id a source or a rule module can refuse a skill for has its fix, and no fix is stale.

The rule ids are read from the code itself with `ast`, so a new refusal written anywhere in `core/` or `sources/`
without a fix fails here. A rule id reaches a refusal in a few ways, and each is followed:

- a literal passed where a function or class takes a parameter (or dataclass field) named `rule`
  (`Refusal(path, "submodule", ...)`, `SkillError(..., rule="name-mismatch")`, `where.error(msg, "yaml-...", ...)`,
  `_LinkError("link-dangles", ...)`);
- a module constant passed there (`PROBLEM_RULE`), a local `rule = "a" if ... else "b"`, or a call to a function
  whose returns are literals (`_name_rule(problem)`);
- the optional-field rules (`fields.RULES`), which carry their own fix.

What is not a literal, a constant or such a call (`err.rule`, a parameter) passes on a rule id found elsewhere.
The host's pull rules (`core/hosting/pull_rules.py`) have their own table, tested beside them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import skillwire
from skillwire.core.fields import RULES as OPTIONAL_FIELD_RULES
from skillwire.core.fixes import FIXES

PACKAGE = Path(skillwire.__file__).parent
SCANNED = ("core", "sources")
SKIPPED = (
    "core/hosting",  # the host's pull rules: their own FIXES, checked in tests/core/hosting/test_pull_rules.py
    "core/lint.py",  # portability warnings, not refusals: each `LintWarning` carries its own fix
)
RULE_ID = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
RULE_PARAM = "rule"


def _modules() -> Iterator[tuple[Path, ast.Module]]:
    for top in SCANNED:
        for path in sorted((PACKAGE / top).rglob("*.py")):
            rel = path.relative_to(PACKAGE).as_posix()
            if not rel.startswith(SKIPPED):
                yield path, ast.parse(path.read_text("utf-8"), filename=rel)


@dataclass
class _Code:
    """What the scan needs to know about the code: where a rule parameter sits, constants, literal-returning calls."""

    rule_position: dict[str, int] = field(default_factory=dict)  # callable name -> index of `rule` among call args
    constants: dict[str, set[str]] = field(default_factory=dict)  # module-level NAME = "literal"
    returns: dict[str, set[str]] = field(default_factory=dict)  # function name -> the literals it returns

    def learn(self, tree: ast.Module) -> None:
        for stmt in tree.body:
            if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant):
                for target in stmt.targets:
                    if isinstance(target, ast.Name) and isinstance(stmt.value.value, str):
                        self.constants.setdefault(target.id, set()).add(stmt.value.value)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                params = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
                if RULE_PARAM in params:
                    bound = 1 if params[0] in ("self", "cls") else 0  # a method: the call does not pass it
                    self.rule_position[node.name] = params.index(RULE_PARAM) - bound
                found = [r.value for r in ast.walk(node) if isinstance(r, ast.Return) and r.value is not None]
                if found and all(_literals(v) for v in found):
                    self.returns[node.name] = {s for v in found for s in _literals(v)}
            elif isinstance(node, ast.ClassDef):
                init = next((b for b in node.body if isinstance(b, ast.FunctionDef) and b.name == "__init__"), None)
                if init is not None:
                    params = [a.arg for a in init.args.args][1:]
                else:  # a dataclass: its annotated fields, in order
                    params = [
                        b.target.id
                        for b in node.body
                        if isinstance(b, ast.AnnAssign) and isinstance(b.target, ast.Name)
                    ]
                if RULE_PARAM in params:
                    self.rule_position[node.name] = params.index(RULE_PARAM)

    def rule_ids(self, tree: ast.Module) -> Iterator[tuple[str, int]]:
        """Every rule id (and its line) a call or a `rule = ...` assignment in `tree` names."""
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
                argument = next((k.value for k in node.keywords if k.arg == RULE_PARAM), None)
                position = self.rule_position.get(name) if name else None
                if argument is None and position is not None and position < len(node.args):
                    argument = node.args[position]
                if argument is not None:
                    yield from ((rule, node.lineno) for rule in self.resolve(argument))
            elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == RULE_PARAM for t in node.targets
            ):
                yield from ((rule, node.lineno) for rule in self.resolve(node.value))

    def resolve(self, expr: ast.expr) -> set[str]:
        """The rule ids `expr` can be: literals, constants, a literal-returning function's returns."""
        if isinstance(expr, ast.Name) and expr.id in self.constants:
            return self.constants[expr.id]
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in self.returns:
            return self.returns[expr.func.id]
        if isinstance(expr, ast.IfExp):
            return self.resolve(expr.body) | self.resolve(expr.orelse)
        return _literals(expr)


def _literals(expr: ast.expr) -> set[str]:
    """The string literals `expr` is (one, or either branch of a conditional), or nothing."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return {expr.value}
    if isinstance(expr, ast.IfExp):
        body, orelse = _literals(expr.body), _literals(expr.orelse)
        return body | orelse if body and orelse else set()
    return set()


def emitted_rule_ids() -> dict[str, str]:
    """Every rule id the scanned code can refuse a skill for, with one place (module:line) that names it."""
    trees = list(_modules())
    code = _Code()
    for _, tree in trees:
        code.learn(tree)
    found: dict[str, str] = {rule.id: "core/fields.py" for rule in OPTIONAL_FIELD_RULES}
    for path, tree in trees:
        for rule, line in code.rule_ids(tree):
            if RULE_ID.fullmatch(rule):  # a message or a log format string passed in that place is no rule id
                found.setdefault(rule, f"{path.relative_to(PACKAGE).as_posix()}:{line}")
    return found


def test_the_scan_finds_rule_ids_however_they_reach_a_refusal() -> None:
    """The collector itself: one id from each way of naming one, so a scan that finds nothing cannot pass."""
    found = emitted_rule_ids()
    for rule in (
        "tree-too-deep",  # Refusal(path, "...", message) in a git source
        "duplicate-path",  # Refusal in the generated source
        "link-dangles",  # a git link error class taking the rule first
        "yaml-duplicate-key",  # where.error(message, "...", line) in the frontmatter parser
        "name-mismatch",  # SkillError(..., rule="...")
        "package-unreadable",  # a module constant
        "file-name-control",  # a function returning literals
        "unreadable",  # a local `rule = "..." if ... else "..."`
        "metadata-format",  # the optional-field rules
    ):
        assert rule in found, rule


def test_every_rule_id_a_source_can_emit_has_a_fix() -> None:
    missing = {rule: where for rule, where in emitted_rule_ids().items() if not FIXES.get(rule)}
    assert not missing, f"rule ids with no fix in core/fixes.py: {missing}"


def test_every_fix_is_for_a_rule_id_something_emits() -> None:
    assert not set(FIXES) - set(emitted_rule_ids()), "fixes for rule ids nothing emits (renamed or removed?)"


def test_fixes_are_short_actionable_lines() -> None:
    for rule, fix in FIXES.items():
        assert fix == fix.strip(), rule
        assert 0 < len(fix) <= 160, rule
        assert "\n" not in fix, rule
        assert fix[0].islower(), rule  # the house voice: "rename it ...", an instruction with no full stop
        assert not fix.endswith("."), rule
