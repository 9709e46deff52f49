"""Error Handling on the wire, and hostile requests, over stdio and streamable HTTP.

The served root is a copy of pdf-processing plus a skill (`leaky`) holding
symbolic links that lead out of the root and a root-level link to a folder
outside it. Next to the root (outside it) sit files holding a random canary
token: no response or error, for any request, may ever contain it. Every
hostile request must get -32602, and the server must keep answering afterwards.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.support.servers import (
    EXAMPLE_SKILLS,
    INVALID_PARAMS,
    MODES,
    TRANSPORTS,
    Method,
    Mode,
    Params,
    ServerTarget,
    Transport,
    all_skills,
    connect,
    error_json,
    resources_list,
    send,
    serve_target,
    skills_get,
)

pytestmark = pytest.mark.anyio

# Content that must never leave the server: the canary files' token and /etc/passwd's first line.
PASSWD_MARKERS = ("root:x:0:0", "/bin/sh", "/usr/sbin/nologin")
HEADER_MISMATCH = -32020


@dataclass(frozen=True)
class Layout:
    base: Path  # holds the root and, outside it, the canary files
    root: Path  # the served folder
    secret: Path  # outside the root
    token: str


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> Layout:
    base = tmp_path_factory.mktemp("wire-errors")
    token = "CANARY-" + secrets.token_hex(16)
    secret = base / "secret.txt"
    secret.write_text(f"{token}\n", encoding="utf-8")
    outside = base / "outside"
    outside.mkdir()
    (outside / "SKILL.md").write_text(f"---\nname: outside\ndescription: {token}\n---\n{token}\n", encoding="utf-8")
    (outside / "notes.md").write_text(f"{token}\n", encoding="utf-8")

    root = base / "root"
    shutil.copytree(EXAMPLE_SKILLS / "pdf-processing", root / "pdf-processing")
    leaky = root / "leaky"
    leaky.mkdir()
    (leaky / "SKILL.md").write_text("---\nname: leaky\ndescription: Holds links that leave the root\n---\n")
    os.symlink(secret, leaky / "notes.md")  # absolute link out of the root
    os.symlink(os.path.relpath(secret, leaky), leaky / "relative.md")  # relative link out of the root
    os.symlink(outside, leaky / "escape")  # a folder link out of the root
    os.symlink(outside, root / "outside")  # a root-level folder link that would look like a skill
    return Layout(base=base, root=root, secret=secret, token=token)


@pytest.fixture(scope="module", params=TRANSPORTS)
def target(request: pytest.FixtureRequest, layout: Layout) -> Iterator[ServerTarget]:
    transport: Transport = request.param
    with serve_target(transport, [layout.root], layout.base / f"logs-{transport}") as served:
        yield served


@pytest.fixture(scope="module")
async def client(target: ServerTarget) -> AsyncIterator[Client]:
    """One connection per transport for the whole module: a crash on any case breaks every later one."""
    async with connect(target, mode="modern") as connected:
        yield connected


@pytest.fixture(scope="module")
async def legacy_client(target: ServerTarget) -> AsyncIterator[Client]:
    """One legacy (initialize) connection per transport, for the cases that run in both modes."""
    async with connect(target, mode="legacy") as connected:
        yield connected


# "{secret}" and "{root}" stand for the absolute paths of the canary file and the served root.
HOSTILE_URIS: list[tuple[str, object]] = [
    ("dotdot", "skill://pdf-processing/../../etc/passwd"),
    ("dotdot-secret", "skill://pdf-processing/templates/../../../secret.txt"),
    ("dotdot-authority", "skill://../secret.txt"),
    ("dotdot-dir", "skill://pdf-processing/templates/.."),
    ("dot", "skill://pdf-processing/./SKILL.md"),
    ("pct-dots", "skill://pdf-processing/%2e%2e/%2e%2e/etc/passwd"),
    ("pct-dots-upper", "skill://pdf-processing/%2E%2E/%2E%2E/secret.txt"),
    ("pct-dots-authority", "skill://%2e%2e/secret.txt"),
    ("pct-slash", "skill://pdf-processing/..%2F..%2F..%2Fsecret.txt"),
    ("pct-slash-lower", "skill://pdf-processing/templates%2f..%2f..%2f..%2fsecret.txt"),
    ("pct-slash-in-name", "skill://pdf-processing/templates%2Finvoice.md"),
    ("pct-backslash", "skill://pdf-processing/..%5C..%5C..%5Csecret.txt"),
    ("backslash", "skill://pdf-processing\\..\\..\\secret.txt"),
    ("backslash-file", "skill://pdf-processing/templates\\invoice.md"),
    ("pct-nul", "skill://pdf-processing/SKILL.md%00.txt"),
    ("pct-nul-dir", "skill://pdf-processing/templates%00"),
    ("raw-nul", "skill://pdf-processing/SKILL.md\x00"),
    ("raw-nul-traversal", "skill://pdf-processing/\x00/../../secret.txt"),
    ("overlong-utf8-dot", "skill://pdf-processing/%c0%ae%c0%ae/secret.txt"),
    ("absolute-path", "/etc/passwd"),
    ("absolute-secret", "{secret}"),
    ("file-scheme", "file:///etc/passwd"),
    ("file-secret", "file://{secret}"),
    ("file-root", "file://{root}/pdf-processing/SKILL.md"),
    ("skill-absolute", "skill:///etc/passwd"),
    ("skill-secret-path", "skill://{secret}"),
    ("http-scheme", "http://127.0.0.1/etc/passwd"),
    ("https-scheme", "https://example.com/pdf-processing/SKILL.md"),
    ("github-scheme", "github://owner/repo/skills/refunds/SKILL.md"),
    ("scheme-case", "SKILL://pdf-processing/SKILL.md/../../../secret.txt"),
    ("relative", "pdf-processing/SKILL.md"),
    ("query", "skill://pdf-processing/SKILL.md?path=../../secret.txt"),
    ("fragment", "skill://pdf-processing/SKILL.md#../../secret.txt"),
    ("double-slash", "skill://pdf-processing//SKILL.md"),
    ("trailing-slash", "skill://pdf-processing/templates/"),
    ("symlink-file", "skill://leaky/notes.md"),
    ("symlink-relative", "skill://leaky/relative.md"),
    ("symlink-dir-file", "skill://leaky/escape/notes.md"),
    ("symlink-dir", "skill://leaky/escape"),
    ("refused-skill-md", "skill://leaky/SKILL.md"),
    ("refused-root", "skill://leaky"),
    ("root-symlink-skill", "skill://outside/SKILL.md"),
    ("root-symlink-file", "skill://outside/notes.md"),
    ("root-symlink-dir", "skill://outside"),
    ("overlong-10k", "skill://pdf-processing/" + "a" * 10_000),
    ("overlong-10k-segments", "skill://" + "a/" * 5_000 + "SKILL.md"),
    ("empty", ""),
    ("scheme-only", "skill://"),
    ("scheme-colon", "skill:"),
    ("number", 42),
    ("float", 1.5),
    ("bool", True),
    ("object", {"uri": "skill://pdf-processing/SKILL.md", "path": "/etc/passwd"}),
    ("array", ["skill://pdf-processing/SKILL.md"]),
    ("null", None),
]


_MISSING = object()
HOSTILE_IDS = [case for case, _ in HOSTILE_URIS]
METHODS: tuple[Method, ...] = ("resources/read", "skills/get", "resources/directory/read")

BAD_CURSORS: list[tuple[str, object]] = [
    ("garbage", "garbage"),
    ("empty", ""),
    ("base64-list", "WzFd"),  # base64 of [1]
    ("base64-other-scope", "eyJ2IjoxLCJzIjoicmVzb3VyY2VzIiwiayI6InNraWxsOi8vcGRmLXByb2Nlc3NpbmcvU0tJTEwubWQifQ"),
    ("number", 7),
    ("object", {"k": "skill://pdf-processing/SKILL.md"}),
    ("array", ["garbage"]),
    ("bool", False),
    ("long", "A" * 10_000),
]


def _resolve(uri: object, layout: Layout) -> object:
    if isinstance(uri, str):
        return uri.replace("{secret}", str(layout.secret)).replace("{root}", str(layout.root))
    return uri


def _params(uri: object) -> Params:
    return {} if uri is _MISSING else {"uri": uri}


def _assert_no_leak(layout: Layout, text: str) -> None:
    assert layout.token not in text, "content from outside the served root reached the client"
    for marker in PASSWD_MARKERS:
        assert marker not in text, f"/etc/passwd content ({marker!r}) reached the client"


def _codes(target: ServerTarget, method: Method, params: Params) -> frozenset[int]:
    """-32602, except where the SDK's HTTP layer answers before any skillwire code runs.

    Over 2026-07-28 HTTP, `resources/read` must carry an `Mcp-Name` header equal to
    `params.uri`; a non-string uri can never match a header, so the SDK's inbound
    ladder rejects it with -32020 (header mismatch) before the request reaches the server.
    """
    uri = params.get("uri")
    if target.transport == "http" and method == "resources/read" and uri is not None and not isinstance(uri, str):
        return frozenset({INVALID_PARAMS, HEADER_MISMATCH})
    return frozenset({INVALID_PARAMS})


async def _expect_invalid_params(
    layout: Layout, client: Client, method: Method, params: Params, codes: frozenset[int] = frozenset({INVALID_PARAMS})
) -> MCPError:
    try:
        result: dict[str, Any] = await send(client, method, params)
    except MCPError as err:
        caught = err
    else:
        _assert_no_leak(layout, json.dumps(result))
        raise AssertionError(f"{method} {params!r:.200} succeeded instead of -32602: {json.dumps(result)[:300]}")
    _assert_no_leak(layout, error_json(caught))
    assert caught.code in codes, (
        f"{method} {params!r:.200}: expected {sorted(codes)}, got {caught.code}: {caught.message}"
    )
    return caught


# -- the spec's two error examples ------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_unknown_skill_error(client: Client, legacy_client: Client, layout: Layout, mode: Mode) -> None:
    uri = "skill://acme/billing/chargebacks/SKILL.md"
    connected = client if mode == "modern" else legacy_client
    err = await _expect_invalid_params(layout, connected, "skills/get", {"uri": uri})
    assert err.message == f"No skill is served at {uri}"


@pytest.mark.parametrize(
    "uri",
    ["skill://pdf-processing/templates/invoice.md", "skill://pdf-processing", "skill://pdf-processing/templates"],
)
async def test_skills_get_of_what_is_not_a_skill_md(client: Client, layout: Layout, uri: str) -> None:
    err = await _expect_invalid_params(layout, client, "skills/get", {"uri": uri})
    assert err.message == f"No skill is served at {uri}"


@pytest.mark.parametrize("mode", MODES)
async def test_not_a_directory_error(client: Client, legacy_client: Client, layout: Layout, mode: Mode) -> None:
    uri = "skill://pdf-processing/SKILL.md"
    connected = client if mode == "modern" else legacy_client
    err = await _expect_invalid_params(layout, connected, "resources/directory/read", {"uri": uri})
    assert err.message == f"{uri} is not a directory resource"


async def test_directory_read_of_a_supporting_file(client: Client, layout: Layout) -> None:
    uri = "skill://pdf-processing/templates/invoice.md"
    err = await _expect_invalid_params(layout, client, "resources/directory/read", {"uri": uri})
    assert err.message == f"{uri} is not a directory resource"


@pytest.mark.parametrize(
    ("method", "uri"),
    [
        ("resources/read", "skill://pdf-processing/templates/missing.md"),
        ("resources/read", "skill://nowhere/SKILL.md"),
        ("resources/read", "skill://pdf-processing/templates"),
        ("resources/directory/read", "skill://pdf-processing/missing"),
        ("resources/directory/read", "skill://nowhere"),
    ],
)
async def test_unknown_resources(client: Client, layout: Layout, method: Method, uri: str) -> None:
    err = await _expect_invalid_params(layout, client, method, {"uri": uri})
    assert uri in err.message, "an informative message names the URI"


# -- hostile requests -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("case", HOSTILE_IDS)
async def test_hostile_uri(client: Client, target: ServerTarget, layout: Layout, method: Method, case: str) -> None:
    params = _params(_resolve(dict(HOSTILE_URIS)[case], layout))
    await _expect_invalid_params(layout, client, method, params, _codes(target, method, params))


@pytest.mark.parametrize("method", METHODS)
async def test_missing_uri(client: Client, layout: Layout, method: Method) -> None:
    await _expect_invalid_params(layout, client, method, _params(_MISSING))


@pytest.mark.parametrize(("case", "cursor"), BAD_CURSORS, ids=[c for c, _ in BAD_CURSORS])
async def test_bad_cursor_on_skills_list(client: Client, layout: Layout, case: str, cursor: object) -> None:
    await _expect_invalid_params(layout, client, "skills/list", {"cursor": cursor})


@pytest.mark.parametrize(("case", "cursor"), BAD_CURSORS, ids=[c for c, _ in BAD_CURSORS])
async def test_bad_cursor_on_directory_read(client: Client, layout: Layout, case: str, cursor: object) -> None:
    params: Params = {"uri": "skill://pdf-processing", "cursor": cursor}
    await _expect_invalid_params(layout, client, "resources/directory/read", params)


async def test_refused_skill_is_not_listed(client: Client, layout: Layout) -> None:
    """The skill holding links out of the root is refused; the root-level link serves nothing."""
    entries = await all_skills(client)
    assert [e["uri"] for e in entries] == ["skill://pdf-processing/SKILL.md"]
    listing = await resources_list(client)
    uris = [r["uri"] for r in listing.resources]
    assert uris, "resources/list lists the served files"
    assert all(u.startswith("skill://pdf-processing/") for u in uris), uris
    _assert_no_leak(layout, json.dumps(entries) + json.dumps(listing.resources))


async def test_refused_skill_get(client: Client, layout: Layout) -> None:
    err = await _expect_invalid_params(layout, client, "skills/get", {"uri": "skill://leaky/SKILL.md"})
    assert err.message == "No skill is served at skill://leaky/SKILL.md"


async def test_server_survives_everything(target: ServerTarget, layout: Layout) -> None:
    """Every hostile request in a row on a fresh connection, then an ordinary skills/list still works."""
    async with connect(target, mode="modern") as client:
        for method in METHODS:
            for _case, uri in HOSTILE_URIS:
                params = _params(_resolve(uri, layout))
                await _expect_invalid_params(layout, client, method, params, _codes(target, method, params))
            await _expect_invalid_params(layout, client, method, _params(_MISSING))
        for _case, cursor in BAD_CURSORS:
            await _expect_invalid_params(layout, client, "skills/list", {"cursor": cursor})
        entries = await all_skills(client)
        assert [e["uri"] for e in entries] == ["skill://pdf-processing/SKILL.md"]
        got = await skills_get(client, "skill://pdf-processing/SKILL.md")
        assert got.skill["frontmatter"]["name"] == "pdf-processing"
    target.assert_alive()
