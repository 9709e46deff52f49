"""The official MCP conformance suite's Skills extension scenarios, against `skillwire serve examples/skills`.

The suite exits 0 when checks are SKIPPED (for example when the extension is not
declared), so this test reads every checks.json and fails on any status other
than SUCCESS, warnings and skips included. Results are copied to
test-artifacts/conformance/ in the repository for people to look at.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.conformance import assert_all_success, keep_artifacts, require_tools, run_suite
from tests.support.servers import EXAMPLE_SKILLS, http_server

SCENARIOS = ("sep-2640-skills-enumeration", "sep-2640-skills-manifest", "sep-2640-skills-directory")
SUITE_TIMEOUT_S = 300

pytestmark = pytest.mark.conformance


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    require_tools()
    with http_server([EXAMPLE_SKILLS]) as server:
        yield server.url
        server.assert_alive()


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_conformance_scenario(scenario: str, server_url: str, tmp_path: Path) -> None:
    """Spec MUSTs and SHOULDs for servers, judged by the official suite: every check must be SUCCESS."""
    out = tmp_path / "results"
    run = run_suite(["server", "--url", server_url], scenario, out, tmp_path, timeout=SUITE_TIMEOUT_S)
    keep_artifacts("conformance", f"server-{scenario}-*", out)
    assert_all_success(scenario, run, run.output)
    assert run.returncode == 0, f"conformance {scenario} exited non-zero although every check passed\n{run.output}"
