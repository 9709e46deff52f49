"""Three `skillwire serve` replicas behind a real nginx (Debian's), configured by `deploy/fleet.py`.

Replicas serving one folder are interchangeable for 2026-07-28 (stateless) clients: the same request gets the same
bytes from each, and a cursor from one continues on another. A 2025-11-25 session lives in one replica: its id names
that replica and nginx routes on the name. Everything runs on loopback; nginx and the replicas are this module's own.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import kubernetes_validate
import pytest
import yaml
from deploy.fleet import Fleet, Upstream, nginx_site, running_fleet
from mcp import Client

from skillwire.cli.main import _parser, main
from skillwire.service.rollout import parse_plan
from tests.support.servers import EXAMPLE_SKILLS, REPO_ROOT, skills_list

KUBERNETES = REPO_ROOT / "deploy" / "kubernetes" / "skillwire.yaml"
MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
PAGE_SIZE = 2  # examples/skills has 5 skills: three pages, two cursors to hand over
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "replica-test", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/skills": {}}},
}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    prefix = tmp_path_factory.mktemp("fleet")
    with running_fleet([EXAMPLE_SKILLS], replicas=3, serve_args=("--page-size", str(PAGE_SIZE)), prefix=prefix) as f:
        yield f
        for replica in f.replicas:
            assert replica.popen.poll() is None, f"replica {replica.name} exited:\n{''.join(replica.lines)}"


def post(url: str, method: str, params: dict[str, Any], *, request_id: int = 1) -> bytes:
    """One stateless 2026-07-28 request; the raw response body."""
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": method,
    }
    if method == "resources/read":
        headers["Mcp-Name"] = params["uri"]
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": MODERN_META}}
    response = httpx2.post(url, content=json.dumps(body).encode(), headers=headers, timeout=10)
    assert response.headers["content-type"].startswith("application/json"), response.text
    return response.content


def result(body: bytes) -> dict[str, Any]:
    message = json.loads(body)
    assert "result" in message, message
    found: dict[str, Any] = message["result"]
    return found


def listing(url_for_page: Any) -> list[str]:
    """Every skill URI of skills/list, page by page; page `n` asked of `url_for_page(n)`."""
    uris: list[str] = []
    cursor: str | None = None
    for page in range(100):
        answer = result(post(url_for_page(page), "skills/list", {"cursor": cursor} if cursor else {}))
        uris += [entry["uri"] for entry in answer["skills"]]
        cursor = answer.get("nextCursor")
        if cursor is None:
            return uris
    raise AssertionError("more than 100 pages for 5 skills")


def test_the_shipped_nginx_config_is_what_the_fleet_renders() -> None:
    """deploy/nginx/skillwire.conf cannot drift from the config the tests run."""
    replicas = [Upstream(f"r{i}", f"127.0.0.1:{8000 + i}") for i in (1, 2, 3)]
    shipped = (REPO_ROOT / "deploy" / "nginx" / "skillwire.conf").read_text(encoding="utf-8")
    assert shipped == nginx_site(replicas, "127.0.0.1:8000")


def test_the_kubernetes_nginx_config_is_what_the_fleet_renders_for_pods() -> None:
    """deploy/kubernetes/skillwire.yaml's ConfigMap routes sessions to StatefulSet pods exactly as the tested config."""
    docs = {doc["kind"] + "/" + doc["metadata"]["name"]: doc for doc in yaml.safe_load_all(KUBERNETES.read_text())}
    pods = [Upstream(f"skillwire-{i}", f"skillwire-{i}.skillwire-replicas:8000") for i in range(3)]
    assert docs["ConfigMap/skillwire-nginx"]["data"]["skillwire.conf"] == nginx_site(pods, "8080")
    statefulset = docs["StatefulSet/skillwire"]["spec"]
    assert statefulset["replicas"] == len(pods)
    assert statefulset["serviceName"] == "skillwire-replicas"
    args = statefulset["template"]["spec"]["containers"][0]["args"]
    assert "--replica-name=$(POD_NAME)" in args


def test_the_kubernetes_manifests_mount_the_rollout_plan_where_the_replicas_read_it() -> None:
    """deploy/kubernetes/skillwire.yaml carries the rollout plan: a ConfigMap holding a plan skillwire's parser
    reads (exactly as deploy/rollout.py writes it), mounted read-only as a folder (a subPath would never see a new
    plan) at the path `--rollout-plan` names, beside the one git source a plan needs, starting at the plan's commit;
    and every resource passes Kubernetes' own schemas, strictly."""
    loaded = list(yaml.safe_load_all(KUBERNETES.read_text()))
    for resource in loaded:
        kubernetes_validate.validate(resource, kubernetes_validate.latest_version(), strict=True)
    docs = {doc["kind"] + "/" + doc["metadata"]["name"]: doc for doc in loaded}
    pod = docs["StatefulSet/skillwire"]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    args = _parser().parse_args([a.replace("$(POD_NAME)", "skillwire-0") for a in container["args"]])
    assert args.command == "serve"
    assert args.http == "0.0.0.0:8000"  # a plan is followed over HTTP only
    [source] = args.paths
    assert source.startswith("git:")
    folder, name = posixpath.split(args.rollout_plan)
    [mount] = [m for m in container["volumeMounts"] if m["mountPath"] == folder]
    assert mount["readOnly"] is True
    assert "subPath" not in mount
    [volume] = [v for v in pod["volumes"] if v["name"] == mount["name"]]
    config_map = docs["ConfigMap/" + volume["configMap"]["name"]]
    assert "items" not in volume["configMap"]  # every key is a file of its own name
    text = config_map["data"][name]
    plan = parse_plan(text.encode())
    assert plan.to_json() == text.encode()
    assert source.rpartition("@")[2] == plan.commit  # a fresh deploy starts at the commit the plan names


def test_replicas_answer_the_same_request_with_the_same_bytes(fleet: Fleet) -> None:
    """Manifests, cursors, file contents, directory reads and errors are byte-identical on every replica."""
    first_page = result(post(fleet.replica_url(0), "skills/list", {}))
    requests: list[tuple[str, dict[str, Any]]] = [
        ("skills/list", {}),
        ("skills/list", {"cursor": first_page["nextCursor"]}),
        ("skills/get", {"uri": "skill://code-review/SKILL.md"}),
        ("resources/read", {"uri": "skill://code-review/SKILL.md"}),
        ("resources/list", {}),
        ("resources/directory/read", {"uri": "skill://code-review"}),
        ("skills/get", {"uri": "skill://no-such-skill/SKILL.md"}),
        ("skills/list", {"cursor": "not-a-cursor"}),
    ]
    for method, params in requests:
        answers = {post(fleet.replica_url(i), method, params) for i in range(3)}
        assert len(answers) == 1, f"{method} {params} differs between replicas: {answers}"
    error = json.loads(post(fleet.replica_url(1), "skills/get", {"uri": "skill://no-such-skill/SKILL.md"}))
    assert error["error"]["code"] == -32602


def test_a_cursor_from_one_replica_continues_on_the_next_without_repeat_or_gap(fleet: Fleet) -> None:
    """Page 1 from r1, page 2 from r2, page 3 from r3: the same skills, once each, as one replica lists them."""
    alone = listing(lambda page: fleet.replica_url(0))
    handed_over = listing(lambda page: fleet.replica_url(page % 3))
    assert len(alone) == 5
    assert handed_over == alone


def test_stateless_requests_through_nginx_reach_every_replica(fleet: Fleet) -> None:
    """Round robin: 30 stateless requests through the balancer are answered by all three replicas, all alike."""
    before = len(fleet.access_log())
    answers = {post(fleet.url, "skills/list", {}) for _ in range(30)}
    assert len(answers) == 1
    lines = fleet.access_log()[before:]
    upstreams = {match.group(1) for line in lines if (match := re.search(r"upstream=(\S+)", line))}
    replicas = {fleet.replica_url(i).split("//")[1].split("/")[0] for i in range(3)}
    assert upstreams == replicas, lines


def test_a_handshake_session_through_nginx_stays_on_the_replica_that_created_it(fleet: Fleet) -> None:
    """A 2025-11-25 SDK client through the balancer: every request of its session reaches one replica."""

    async def use_session() -> None:
        async with Client(fleet.url, mode="legacy", cache=None, read_timeout_seconds=10) as client:
            assert client.protocol_version == HANDSHAKE
            for _ in range(12):  # with round robin over 3 replicas, 2 of 3 of these would be refused
                listed = await skills_list(client)
                assert len(listed.skills) == PAGE_SIZE

    before = len(fleet.access_log())
    anyio.run(use_session)
    lines = [line for line in fleet.access_log()[before:] if "session=r" in line]
    sessions = {re.search(r"session=(\S+)", line).group(1) for line in lines}  # type: ignore[union-attr]
    assert len(sessions) == 1, lines
    (session,) = sessions
    assert re.fullmatch(r"r[123]\.[0-9a-f]{32}", session), session
    upstreams = {re.search(r"upstream=(\S+)", line).group(1) for line in lines}  # type: ignore[union-attr]
    owner = fleet.replica_url(int(session[1]) - 1).split("//")[1].split("/")[0]
    assert upstreams == {owner}, lines
    assert len(lines) >= 12


def test_a_session_id_of_one_replica_is_unknown_to_another(fleet: Fleet) -> None:
    """Sessions are per replica (why routing matters): r1's session id sent straight to r2 gets 404, as the
    transport specifies for an unknown session, so a client misrouted by some other balancer starts again."""
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    opened = httpx2.post(fleet.replica_url(0), json=init, headers=headers, timeout=10)
    session = opened.headers["mcp-session-id"]
    assert session.startswith("r1.")
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    session_headers = {**headers, "Mcp-Session-Id": session, "MCP-Protocol-Version": HANDSHAKE}
    assert httpx2.post(fleet.replica_url(0), json=ping, headers=session_headers, timeout=10).status_code == 200
    assert httpx2.post(fleet.replica_url(1), json=ping, headers=session_headers, timeout=10).status_code == 404


def test_a_replica_name_that_a_balancer_cannot_match_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """`--replica-name` must be a DNS label (it is matched by nginx's regex) and needs --http (parser in-process)."""
    with pytest.raises(SystemExit) as exited:
        main(["serve", str(EXAMPLE_SKILLS), "--http", "127.0.0.1:0", "--replica-name", "R 1.x"])
    assert exited.value.code == 2
    assert "replica name 'R 1.x' must be 1-32 lowercase letters" in capsys.readouterr().err
    assert main(["serve", str(EXAMPLE_SKILLS), "--replica-name", "r1"]) == 2
    assert "--replica-name applies to --http only" in capsys.readouterr().err
