"""The official MCP conformance suite's Skills extension scenarios, against `skillwire serve examples/skills`,
against the same files served by every other source kind (`tests.support.source_makers.MAKERS`), and through a
gateway (`serve mcp:URL` in front of `serve examples/skills`).

The suite exits 0 when checks are SKIPPED (for example when the extension is not
declared), so this test reads every checks.json and fails on any status other
than SUCCESS, warnings and skips included. Results are copied to
test-artifacts/conformance/ in the repository for people to look at.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import forkserver
from tests.support.conformance import assert_all_success, keep_artifacts, require_tools, run_suite
from tests.support.servers import EXAMPLE_SKILLS, http_server, serve_command
from tests.support.source_makers import MAKERS

SCENARIOS = ("sep-2640-skills-enumeration", "sep-2640-skills-manifest", "sep-2640-skills-directory")
SUITE_TIMEOUT_S = 300
# "serve": the command line over a folder; every other source kind through tests/support/source_server.py, but
# "package-installed", which serves through a FolderSource as "serve" does (the contract suite covers it).
SERVED = ("serve", "gateway", *(kind for kind in MAKERS if kind not in ("folder", "package-installed")))

pytestmark = pytest.mark.conformance


@pytest.fixture(scope="module", params=SERVED)
def server_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    require_tools()
    kind: str = request.param
    scratch = str(tmp_path_factory.mktemp(f"source-{kind}"))
    if kind == "gateway":  # `serve mcp:URL` in front of `serve examples/skills`: the same URIs, verified, re-served
        with http_server([EXAMPLE_SKILLS], "--no-watch") as upstream:
            gateway = serve_command([], f"mcp:{upstream.url}", "--http", "127.0.0.1:0", "--gateway-cache", scratch)
            with http_server([], command=gateway) as server:
                yield server.url
                server.assert_alive()
        return
    command = (
        None
        if kind == "serve"
        else forkserver.command(["-m", "tests.support.source_server", kind, str(EXAMPLE_SKILLS), scratch])
    )
    with http_server([EXAMPLE_SKILLS], command=command) as server:
        yield server.url
        server.assert_alive()


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_conformance_scenario(scenario: str, server_url: str, tmp_path: Path) -> None:
    """Spec MUSTs and SHOULDs for servers, judged by the official suite: every check must be SUCCESS."""
    out = tmp_path / "results"
    run = run_suite(["server", "--url", server_url], scenario, out, tmp_path, timeout=SUITE_TIMEOUT_S)
    keep_artifacts("conformance", f"server-{scenario}-*", out)  # the last source kind's results are kept
    assert_all_success(scenario, run, run.output)
    assert run.returncode == 0, f"conformance {scenario} exited non-zero although every check passed\n{run.output}"
