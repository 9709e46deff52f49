"""`/healthz`, `/readyz` and `/metrics` on a real `skillwire serve --http` (issue 13, "For operators").

skillwire choices: the probes answer without a token (load balancers and kubelets send none) and say which
snapshot is served; `/metrics` is the Prometheus text format, checked with the Prometheus client's own parser,
and its labels come from fixed sets whatever clients send. All three sit behind the same Host/Origin checks as
`/mcp`. With authentication on (issue 19, hole 7), catalog-wide facts are for operators only: without a token
carrying the `skillwire:operator` scope the probes say ready or not and nothing else, and `/metrics` is refused.
"""

from __future__ import annotations

import http.client
import json
import random
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx2
import pytest
from deploy.rollout import readiness
from mcp.shared.exceptions import MCPError
from mcp_types import Request
from prometheus_client.parser import text_string_to_metric_families
from starlette.applications import Starlette

from skillwire.server.skill_service import SkillService
from skillwire.service.ops import METHODS, ServerMetrics, ops_routes, snapshot_id
from skillwire.sources.folder.source import FolderSource
from skillwire.sources.memory.source import MemorySource
from tests.sources.contract.cases import skill_md
from tests.support.servers import (
    MODES,
    HttpServer,
    Mode,
    ServerTarget,
    SkillsListResult,
    connect,
    http_server,
    resources_read,
    skills_get,
    skills_list,
)

pytestmark = pytest.mark.anyio

TOKEN = "ops-token-0123456789abcdef0123"  # the operator's: Prometheus and the rollout tool send it
CALLER = "caller-token-0123456789abcdef01"  # a client's: it may read skills, not catalog-wide figures
OPS_PATHS = ("/healthz", "/readyz", "/metrics")
PROBES = ("/healthz", "/readyz")
Sample = tuple[str, tuple[tuple[str, str], ...]]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def write_skill(folder: Path, *, name: str | None = None, files: dict[str, str] | None = None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name or folder.name}\ndescription: Does things\n---\n# Hi\n")
    for rel, text in (files or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)


def make_root(base: Path) -> Path:
    root = base / "skills"
    write_skill(root / "acme" / "alpha", files={"notes.md": "alpha notes\n"})
    write_skill(root / "beta", files={"docs/guide.md": "guide\n", "docs/drift.md": "first\n"})
    (root / "beta" / "empty").mkdir()
    write_skill(root / "misnamed", name="other")  # refused: the name differs from the folder
    return root


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerTarget]:
    base = tmp_path_factory.mktemp("ops")
    root = make_root(base)
    with http_server([root], "--no-watch", "--quiet") as server:
        yield ServerTarget("http", (root,), base / "logs", http=server)
        server.assert_alive()


@pytest.fixture(scope="module")
def authenticated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    base = tmp_path_factory.mktemp("ops-auth")
    tokens = base / "tokens.txt"
    tokens.write_text(f"{TOKEN} subject=prometheus scopes=skillwire:operator\n{CALLER} subject=ci scopes=skills:read\n")
    tokens.chmod(0o600)
    options = ("--no-watch", "--quiet", "--token-file", str(tokens), "--required-scope", "skills:read")
    with http_server([make_root(base)], *options) as server:
        yield server


def get(url: str, path: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """GET `path` on the server at `url` (its /mcp URL) with exactly `headers` (Host defaults to the URL's)."""
    parts = urlsplit(url)
    assert parts.hostname is not None
    assert parts.port is not None
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        conn.request("GET", path, headers={"Host": parts.netloc, **(headers or {})})
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def scrape(url: str, headers: dict[str, str] | None = None) -> tuple[str, dict[Sample, float]]:
    """The /metrics text and every sample in it, parsed by the Prometheus client's text-format parser."""
    status, head, body = get(url, "/metrics", headers)
    assert status == 200, body
    assert head["content-type"].startswith("text/plain; version=")
    text = body.decode("utf-8")
    samples: dict[Sample, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[sample.name, tuple(sorted(sample.labels.items()))] = sample.value
    return text, samples


class OddRequest(Request[dict[str, Any] | None, Literal["zz/odd-method"]]):
    """A method no server serves; its name stands for anything a client might choose."""

    method: Literal["zz/odd-method"] = "zz/odd-method"
    params: dict[str, Any] | None = None


async def test_healthz_and_readyz_say_alive_ready_and_which_snapshot(served: ServerTarget) -> None:
    """/readyz: generation, counts and a content fingerprint equal to a fresh scan of the same folder elsewhere."""
    status, head, body = get(served.url, "/healthz")
    assert (status, json.loads(body)) == (200, {"status": "ok"})
    assert head["cache-control"] == "no-store"
    status, _, body = get(served.url, "/readyz")
    ready = json.loads(body)
    assert status == 200
    fresh = FolderSource(served.roots).scan()
    assert ready == {
        "status": "ready",
        "generation": ready["generation"],
        "skills": 2,
        "files": len(fresh.files_page(None, 1000).items),
        "snapshot": snapshot_id(fresh),  # another process, another hash seed: the same fingerprint
        "since": ready["since"],  # when this catalog began to be served (Unix time)
    }
    assert isinstance(ready["since"], float)
    _, samples = scrape(served.url)
    assert samples["skillwire_catalog_generation", ()] == ready["generation"]
    assert samples["skillwire_ready", ()] == 1


@pytest.mark.parametrize("mode", MODES)
async def test_metrics_count_requests_by_method_and_outcome_on_both_eras(served: ServerTarget, mode: Mode) -> None:
    """Prometheus text parser: requests by method and outcome, latency, catalog size, refusals by rule."""
    _, before = scrape(served.url)
    async with connect(served, mode=mode) as client:
        await skills_list(client)
        await skills_list(client)
        with pytest.raises(MCPError):
            await skills_get(client, "skill://nowhere/SKILL.md")
        with pytest.raises(MCPError):
            await client.session.send_request(OddRequest(params=None), SkillsListResult)
    _, after = scrape(served.url)

    def grew(name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0) - before.get(key, 0)

    assert grew("skillwire_requests_total", method="skills/list", outcome="ok") == 2
    assert grew("skillwire_requests_total", method="skills/get", outcome="invalid_params") == 1
    assert grew("skillwire_requests_total", method="other", outcome="method_not_found") == 1
    handshake = "server/discover" if mode == "modern" else "initialize"
    assert grew("skillwire_requests_total", method=handshake, outcome="ok") >= 1
    assert grew("skillwire_request_duration_seconds_count", method="skills/list") == 2
    assert after["skillwire_request_duration_seconds_bucket", (("le", "+Inf"), ("method", "skills/list"))] >= 2
    assert after["skillwire_catalog_skills", ()] == 2
    assert after["skillwire_catalog_refusals", (("rule", "name-mismatch"),)] == 1
    assert after["skillwire_index_duration_seconds", ()] > 0
    assert after["process_resident_memory_bytes", ()] > 0


async def test_label_values_come_from_fixed_sets_whatever_clients_send(served: ServerTarget) -> None:
    """Cardinality is bounded: a method name a client chose never becomes a label, nor does a URI."""
    odd = f"skill://x{random.randrange(10**9)}/SKILL.md"
    async with connect(served, mode="modern") as client:
        with pytest.raises(MCPError):
            await skills_get(client, odd)
        with pytest.raises(MCPError):
            await client.session.send_request(OddRequest(params=None), SkillsListResult)
    text, samples = scrape(served.url)
    assert odd not in text
    assert "zz/odd-method" not in text
    methods = {dict(labels)["method"] for name, labels in samples if name.startswith("skillwire_request")}
    assert methods <= METHODS | {"other"}
    outcomes = {dict(labels)["outcome"] for name, labels in samples if name == "skillwire_requests_total"}
    assert outcomes <= {"ok", "invalid_params", "method_not_found", "internal_error", "error"}


async def test_a_read_that_finds_changed_bytes_is_counted_as_a_rehash_mismatch(served: ServerTarget) -> None:
    """A file edited behind the server's back (no watcher): the read re-hashes, rebuilds, and the counter says so."""
    _, before = scrape(served.url)
    drift = served.roots[0] / "beta" / "docs" / "drift.md"
    drift.write_text(drift.read_text() + "changed behind the server's back\n")
    async with connect(served, mode="modern") as client:
        assert (await resources_read(client, "skill://beta/docs/drift.md")).contents
    _, after = scrape(served.url)
    key = ("skillwire_rehash_mismatches_total", ())
    assert after[key] - before.get(key, 0) == 1
    assert after["skillwire_catalog_generation", ()] > before["skillwire_catalog_generation", ()]


@pytest.mark.parametrize("path", OPS_PATHS)
def test_ops_endpoints_refuse_a_foreign_host_or_origin(served: ServerTarget, path: str) -> None:
    """The same DNS-rebinding guard as /mcp: 421 for a Host it is not known by, 403 for a foreign Origin."""
    assert get(served.url, path, {"Host": "attacker.example:80"})[0] == 421
    assert get(served.url, path, {"Origin": "http://attacker.example"})[0] == 403
    assert get(served.url, path)[0] == 200


def test_with_authentication_the_probes_say_ready_and_nothing_about_the_catalog(authenticated: HttpServer) -> None:
    """Attack (issue 19, hole 7): `/readyz` without a token showed the whole catalog's skill and file counts and a
    fingerprint that changes with any skill. Now a probe without the operator scope (no token, a bad one, a
    client's) learns ready or not, and nothing else; status codes are as before, so kubelets and balancers work."""
    for headers in ({}, {"Authorization": "Bearer not-the-token"}, {"Authorization": f"Bearer {CALLER}"}):
        assert [
            (status, json.loads(body)) for status, _, body in (get(authenticated.url, p, headers) for p in PROBES)
        ] == [
            (200, {"status": "ok"}),
            (200, {"status": "ready"}),
        ]
    status, _, body = get(authenticated.url, "/readyz", {"Authorization": f"Bearer {TOKEN}"})
    ready = json.loads(body)
    assert (status, ready["status"], ready["skills"], ready["snapshot"][:7]) == (200, "ready", 2, "sha256:")


def test_with_authentication_metrics_need_the_operator_scope_and_nothing_more(authenticated: HttpServer) -> None:
    """Attack (issue 19, hole 7): any valid token read `/metrics` (catalog counts, traffic). Now a client's token
    gets 403 naming the scope it lacks; the operator's token scrapes, yet (lacking the server's required scope)
    opens no session: Prometheus's credential reads no skill."""
    assert get(authenticated.url, "/metrics")[0] == 401
    assert get(authenticated.url, "/metrics", {"Authorization": "Bearer not-the-token"})[0] == 401
    status, head, body = get(authenticated.url, "/metrics", {"Authorization": f"Bearer {CALLER}"})
    assert (status, b"skillwire_catalog" in body) == (403, False)
    assert 'error="insufficient_scope"' in head["www-authenticate"]
    assert 'scope="skillwire:operator"' in head["www-authenticate"]  # RFC 6750 §3: the scope it needs
    _, samples = scrape(authenticated.url, {"Authorization": f"Bearer {TOKEN}"})
    assert samples["skillwire_catalog_skills", ()] == 2
    opening = httpx2.post(
        authenticated.url,
        json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        headers={"Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream"},
        timeout=20,
    )
    assert opening.status_code == 403
    assert TOKEN not in authenticated.stderr


def test_the_rollout_tool_reads_readyz_detail_with_the_operator_token_and_says_so_without(
    authenticated: HttpServer,
) -> None:
    """deploy/rollout.py watches `/readyz` detail (revision, next, since): with authentication on it sends the
    operator's token, and without one it says what it needs instead of waiting for a revision it cannot see."""
    assert readiness(authenticated.url, token=TOKEN)["skills"] == 2
    with pytest.raises(RuntimeError, match="only to an operator: pass --token-file"):
        readiness(authenticated.url, token=CALLER)


async def test_readyz_says_starting_until_a_restored_catalog_is_checked_against_the_disk(tmp_path: Path) -> None:
    """A catalog restored from the digest cache is served at once, but a balancer should wait for the disk check.

    In process, through the real routes (an ASGI transport, no socket): the flip is driven by `rebuild()`, the call
    the server makes in the background after a restore.
    """
    root, cache = make_root(tmp_path), tmp_path / "digests.json"
    FolderSource([root], digest_cache=cache).scan()
    service = SkillService(FolderSource([root], digest_cache=cache))
    assert service.restored
    app = Starlette(routes=ops_routes(service, ServerMetrics(service)))
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url="http://127.0.0.1") as client:
        starting = await client.get("/readyz")
        assert starting.status_code == 503
        assert starting.json()["status"] == "starting"
        assert (await client.get("/healthz")).status_code == 200
        await service.rebuild()
        ready = await client.get("/readyz")
        assert ready.status_code == 200
        assert ready.json()["generation"] == 1
        assert ready.json()["snapshot"] == starting.json()["snapshot"]  # the same content, checked now
        assert "skillwire_ready 1.0" in (await client.get("/metrics")).text


class PinnedSource(MemorySource):
    """A memory source that says which revision it serves, as a source kept in git would (its commit)."""

    @property
    def revision(self) -> str | None:
        return "1a2b3c4"


async def test_readyz_names_the_revision_the_source_port_reports() -> None:
    """`/readyz` takes the revision from `SkillSource.revision` (one notion for every source), ready at once when
    nothing was restored; a source without one says none."""
    for source, revision in ((PinnedSource({"pdf/SKILL.md": skill_md("pdf")}), "1a2b3c4"), (MemorySource({}), None)):
        service = SkillService(source)
        app = Starlette(routes=ops_routes(service, ServerMetrics(service)))
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            ready = await client.get("/readyz")
        assert ready.status_code == 200
        assert ready.json().get("revision") == revision


def test_metrics_pass_promtool_check_metrics(served: ServerTarget) -> None:
    """Prometheus's own linter passes the `/metrics` body (a skillwire choice: the exposition is what real scrapers
    accept). `make test` installs promtool; without it this fails, never skips."""
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.fail("promtool is missing: `make test` installs it (Debian's `prometheus` package)", pytrace=False)
    _, _, body = get(served.url, "/metrics")
    checked = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True, timeout=60, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr
