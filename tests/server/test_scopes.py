"""Caller-scoped catalogs over real HTTP: the SDK's bearer auth, a scopes policy file, two or more callers.

Issue 10 acceptance (skillwire's choice of what "scoped" means, on the spec's errors): two callers with
different scopes see different catalogs; skills/list, skills/get, resources/read, resources/list,
resources/directory/read and the catalog page agree for each; a skill outside a caller's scope answers
exactly as one that never existed (the spec's -32602 for anything not served), with no bytes of it.
The server is `tests.support.scoped_server`: production code end to end except the token verifier,
which is an exact lookup in a table of test tokens.
"""

from __future__ import annotations

import base64
import json
import os
import re
import sys
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import pytest
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.server.subscriptions import ResourcesListChanged, ResourceUpdated
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from skillwire.core.catalog import encode_cursor
from tests.support.servers import (
    INVALID_PARAMS,
    HttpServer,
    Method,
    error_json,
    http_server,
    send,
)

pytestmark = pytest.mark.anyio

DEADLINE_S = 10.0
SECRET = "SECRET-MARKER"

SKILLS: dict[str, dict[str, str]] = {
    "acme/billing/refunds": {"references/GUIDE.md": f"refund guide {SECRET}\n", "templates/a.md": "a\n"},
    "acme/billing/invoices": {"scripts/run.sh": f"echo {SECRET}\n"},
    "acme/support/triage": {"notes/x.md": "triage notes\n"},
    "git-workflow": {"docs/usage.md": "git usage\n"},
    "outer": {"notes.md": "outer notes\n"},
    "outer/inner": {"data.txt": "inner data\n"},
    "secret/plans": {"plans.md": f"the plans {SECRET}\n"},
}

POLICY = """\
# What each caller of the test server may see.
unmatched = ["git-workflow"]

[[grant]]
scope = "skills:billing"
skills = ["acme/billing/**"]

[[grant]]
claim = { groups = "support" }
skills = ["acme/support/*", "git-workflow"]

[[grant]]
scope = "skills:outer"
skills = ["outer"]

[[grant]]
scope = "skills:inner"
skills = ["outer/inner"]

[[grant]]
subject = "ci"
skills = ["**"]
"""

TOKENS: dict[str, dict[str, Any]] = {
    "tok-billing": {"client_id": "billing-app", "scopes": ["skills:billing"], "subject": "alice"},
    "tok-support": {
        "client_id": "support-app",
        "scopes": ["profile"],
        "subject": "bob",
        "claims": {"groups": ["staff", "support"]},
    },
    "tok-outer": {"client_id": "o", "scopes": ["skills:outer"], "subject": "olga"},
    "tok-inner": {"client_id": "i", "scopes": ["skills:inner"], "subject": "ivan"},
    "tok-nobody": {"client_id": "n", "scopes": [], "subject": "carol"},
    "tok-ci": {"client_id": "ci-app", "scopes": [], "subject": "ci"},
}

VISIBLE: dict[str, set[str]] = {
    "tok-billing": {"acme/billing/refunds", "acme/billing/invoices"},
    "tok-support": {"acme/support/triage", "git-workflow"},
    "tok-outer": {"outer"},
    "tok-inner": {"outer/inner"},
    "tok-nobody": {"git-workflow"},
    "tok-ci": set(SKILLS),
}


def skill_uri(path: str) -> str:
    return f"skill://{path}/SKILL.md"


def write_tree(root: Path) -> None:
    (root / "acme" / "billing" / "broken-secret").mkdir(parents=True)
    (root / "acme" / "billing" / "broken-secret" / "SKILL.md").write_text("---\nname: other\n---\n")  # refused
    for path, files in SKILLS.items():
        folder = root / path
        folder.mkdir(parents=True, exist_ok=True)
        name = path.rsplit("/", 1)[-1]
        (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: The {name} skill\n---\n# {name}\n")
        for rel, text in files.items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_text(text)


def scoped_command(root: Path, policy: Path, tokens: Path, *options: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "tests.support.scoped_server",
        str(root),
        "--scopes",
        str(policy),
        "--tokens",
        str(tokens),
        *options,
    ]


def start(tmp: Path, policy_text: str = POLICY, *options: str) -> tuple[Path, Path, Any]:
    root = tmp / "skills"
    write_tree(root)
    policy = tmp / "scopes.toml"
    policy.write_text(policy_text)
    tokens = tmp / "tokens.json"
    tokens.write_text(json.dumps(TOKENS))
    return root, policy, http_server([], command=scoped_command(root, policy, tokens, *options))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """One server for the tests that only read: page size 1, so every listing pages and hands out cursors."""
    _, _, running = start(tmp_path_factory.mktemp("scoped"), POLICY, "--page-size", "1", "--no-watch")
    with running as started:
        yield started
        started.assert_alive()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def caller(url: str, token: str | None, *, mode: str = "auto", **kwargs: Any) -> AsyncIterator[Client]:
    """An SDK client that sends `token` as its bearer token on every request."""
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(
            streamable_http_client(url, http_client=http), mode=mode, cache=None, read_timeout_seconds=30, **kwargs
        ) as client,
    ):
        yield client


# -- what each caller sees ---------------------------------------------------------------------------------------------


async def pages(
    client: Client, method: Method, key: str, params: dict[str, Any] | None = None
) -> tuple[list[dict[str, Any]], list[str]]:
    """Every item of a paged listing, and every cursor handed out on the way."""
    items: list[dict[str, Any]] = []
    cursors: list[str] = []
    cursor: str | None = None
    for _ in range(1_000):
        call = dict(params or {})
        if cursor is not None:
            call["cursor"] = cursor
        result = await send(client, method, call or None)
        items.extend(result[key])
        cursor = result.get("nextCursor")
        if cursor is None:
            return items, cursors
        cursors.append(cursor)
    raise AssertionError(f"{method} never stopped paging")


async def walk(client: Client, directory: str, cursors: list[str]) -> set[str]:
    """Every file URI below `directory`, by resources/directory/read alone."""
    found: set[str] = set()
    children, handed = await pages(client, "resources/directory/read", "resources", {"uri": directory})
    cursors.extend(handed)
    for child in children:
        if child["mimeType"] == "inode/directory":
            found |= await walk(client, child["uri"], cursors)
        else:
            found.add(child["uri"])
    return found


def page(server: HttpServer, path: str, token: str | None) -> tuple[int, str]:
    base = server.url.rsplit("/mcp", 1)[0]
    request = urllib.request.Request(base + path)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def cursor_key(cursor: str) -> str:
    data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    key: str = data["k"]
    return key


@pytest.mark.parametrize("token", ["tok-billing", "tok-support", "tok-nobody", "tok-ci"])
async def test_each_caller_sees_its_own_catalog_and_every_verb_and_the_page_agree(
    server: HttpServer, token: str
) -> None:
    """Issue 10: list, get, read, directory read, resources/list and the page show a caller the same skills."""
    expected = {skill_uri(p) for p in VISIBLE[token]}
    async with caller(server.url, token) as client:
        entries, cursors = await pages(client, "skills/list", "skills")
        assert {e["uri"] for e in entries} == expected
        files: set[str] = set()
        for entry in entries:
            got = await send(client, "skills/get", {"uri": entry["uri"]})
            assert got["skill"] == entry
            assert got["cacheScope"] == "private", "a scoped answer must not be shared between callers"
            listed = {r["uri"] for r in entry["resources"]}
            files |= listed
            for uri in listed:
                read = await send(client, "resources/read", {"uri": uri})
                assert read["contents"][0]["uri"] == uri
            assert await walk(client, entry["uri"].rsplit("/SKILL.md", 1)[0], cursors) >= listed
        resources, handed = await pages(client, "resources/list", "resources")
        cursors += handed
        assert {r["uri"] for r in resources} == files
        visible_keys = expected | files | {u.rsplit("/", 1)[0] for u in files}
        for cursor in cursors:
            assert cursor_key(cursor) in visible_keys, "a cursor named something the caller cannot see"
    status, html = page(server, "/", token)
    assert status == 200
    assert set(re.findall(r'href="/skills/([^"]+)"', html)) == VISIBLE[token]
    assert "Refused" not in html
    assert "broken-secret" not in html, "a refusal names a path on disk: not for a scoped caller"
    for path in SKILLS:
        status, html = page(server, "/skills/" + quote(path), token)
        assert status == (200 if path in VISIBLE[token] else 404), path
        if path not in VISIBLE[token]:
            assert SECRET not in html
            assert html == page(server, "/skills/never/existed", token)[1].replace("never/existed", path)


def guesses() -> list[str]:
    """200 URIs a support caller might try for skills it cannot see: files, folders, variants, deeper paths."""
    hidden = [p for p in SKILLS if p not in VISIBLE["tok-support"]]
    out: list[str] = []
    for path in hidden:
        out += [skill_uri(path), f"skill://{path}", skill_uri(path).replace("SKILL.md", "%53KILL.md")]
        for rel in SKILLS[path]:
            out += [f"skill://{path}/{rel}", f"skill://{path}/{rel.rsplit('/', 1)[0]}"]
        out += [f"skill://{path}/references/GUIDE{i}.md" for i in range(40)]
    out += ["skill://acme/billing", "skill://acme", "skill://secret", "skill://outer/inner/data.txt"]
    return list(dict.fromkeys(out))[:200]


async def test_200_guessed_uris_outside_a_callers_scope_answer_exactly_as_never_existing_ones(
    server: HttpServer,
) -> None:
    """Issue 10: a hidden skill is indistinguishable from a missing one: the same -32602 error, no bytes of it."""
    uris = guesses()
    assert len(uris) == 200
    never = "skill://never-existed/x/SKILL.md"
    methods: list[Method] = ["resources/read", "skills/get", "resources/directory/read"]
    async with caller(server.url, "tok-support") as client:
        reference: dict[str, str] = {}
        for method in methods:
            with pytest.raises(MCPError) as missing:
                await send(client, method, {"uri": never})
            reference[method] = error_json(missing.value).replace(never, "<URI>")
        answered = 0
        for uri in uris:
            for method in methods:
                with pytest.raises(MCPError) as hidden:
                    await send(client, method, {"uri": uri})
                assert hidden.value.error.code == INVALID_PARAMS
                text = error_json(hidden.value)
                assert SECRET not in text
                assert text.replace(json.dumps(uri)[1:-1], "<URI>") == reference[method], (method, uri)
                answered += 1
        assert answered == 600


async def test_a_forged_cursor_naming_a_hidden_skill_pages_as_one_naming_no_skill(server: HttpServer) -> None:
    """Issue 10: pagination cannot be used to probe for hidden skills (keys that sort alike page alike)."""
    pairs = [
        ("skill://acme/billing/refunds/SKILL.md", "skill://acme/billing/zzz-never/SKILL.md"),
        ("skill://outer/SKILL.md", "skill://outer0-never/SKILL.md"),
        ("skill://secret/plans/SKILL.md", "skill://secret/zzz-never/SKILL.md"),
    ]
    async with caller(server.url, "tok-support") as client:
        for hidden, missing in pairs:
            a = await send(client, "skills/list", {"cursor": encode_cursor("skills", hidden)})
            b = await send(client, "skills/list", {"cursor": encode_cursor("skills", missing)})
            assert a == b


async def test_a_nested_skill_hidden_from_a_caller_is_plain_files_of_the_enclosing_skill_it_sees(
    server: HttpServer,
) -> None:
    """Spec Nested Skills + skillwire choice: files a visible skill lists are readable; the nested skill is not a
    skill for that caller. A caller seeing only the nested skill sees nothing of the enclosing one."""
    async with caller(server.url, "tok-outer") as client:
        assert (await send(client, "resources/read", {"uri": "skill://outer/inner/data.txt"}))["contents"]
        assert (await send(client, "resources/read", {"uri": "skill://outer/inner/SKILL.md"}))["contents"]
        kids, _ = await pages(client, "resources/directory/read", "resources", {"uri": "skill://outer/inner"})
        assert {k["uri"] for k in kids} == {"skill://outer/inner/SKILL.md", "skill://outer/inner/data.txt"}
        with pytest.raises(MCPError, match="No skill is served"):
            await send(client, "skills/get", {"uri": "skill://outer/inner/SKILL.md"})
        listed, _ = await pages(client, "resources/list", "resources")
        nested_md = [r for r in listed if r["uri"] == "skill://outer/inner/SKILL.md"]
        assert nested_md == [{**nested_md[0], "name": "SKILL.md"}], "shown as a plain file, not as a skill"
        assert "description" not in nested_md[0]
    async with caller(server.url, "tok-inner") as client:
        for uri in ("skill://outer/SKILL.md", "skill://outer/notes.md"):
            with pytest.raises(MCPError, match="No resource is served"):
                await send(client, "resources/read", {"uri": uri})
        # skill://outer is only a prefix level on the way to the one skill this caller sees: none of its files
        levels, _ = await pages(client, "resources/directory/read", "resources", {"uri": "skill://outer"})
        assert [k["uri"] for k in levels] == ["skill://outer/inner"]
        kids, _ = await pages(client, "resources/directory/read", "resources", {"uri": "skill://outer/inner"})
        assert {k["uri"] for k in kids} == {"skill://outer/inner/SKILL.md", "skill://outer/inner/data.txt"}


async def test_no_token_gets_401_on_mcp_and_an_empty_page(server: HttpServer) -> None:
    """Issue 10: the page never shows an anonymous caller more than the policy's `anonymous` (nothing here)."""
    status, html = page(server, "/", None)
    assert status == 200
    assert re.findall(r'href="/skills/([^"]+)"', html) == []
    assert page(server, "/skills/git-workflow", None)[0] == 404
    request = urllib.request.Request(server.url, data=b"{}", method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 401


# -- the policy file changes -------------------------------------------------------------------------------------------


async def listed(url: str, token: str) -> set[str]:
    async with caller(url, token) as client:
        entries, _ = await pages(client, "skills/list", "skills")
    return {e["uri"] for e in entries}


async def test_an_edited_policy_applies_to_the_next_request_and_a_bad_one_keeps_the_previous(tmp_path: Path) -> None:
    """Issue 10: the policy is re-read when it changes; a broken edit keeps the one in force and warns once."""
    _, policy, running = start(tmp_path, POLICY, "--no-watch")
    with running as server:
        assert await listed(server.url, "tok-billing") == {skill_uri(p) for p in VISIBLE["tok-billing"]}
        replacement = tmp_path / "new.toml"
        replacement.write_text(POLICY.replace('skills = ["acme/billing/**"]', 'skills = ["secret/**"]'))
        os.replace(replacement, policy)  # how editors and config managers save: a new file under the old name
        assert await listed(server.url, "tok-billing") == {skill_uri("secret/plans")}
        policy.write_text(POLICY.replace('skills = ["acme/billing/**"]', 'skills = ["outer", "outer/**"]'))  # in place
        assert await listed(server.url, "tok-billing") == {skill_uri("outer"), skill_uri("outer/inner")}
        policy.write_text(POLICY + "\n[[grant]]\nscope = 'x'\nskils = ['typo']\n")
        for _ in range(3):
            assert await listed(server.url, "tok-billing") == {skill_uri("outer"), skill_uri("outer/inner")}
        policy.write_text(POLICY)
        assert await listed(server.url, "tok-billing") == {skill_uri(p) for p in VISIBLE["tok-billing"]}
        with anyio.fail_after(DEADLINE_S):
            while server.stderr.count("scopes policy reloaded") < 3:
                await anyio.sleep(0.05)
        warnings = [line for line in server.stderr.splitlines() if "not reloaded" in line]
        assert len(warnings) == 1, server.stderr
        assert "grant 6" in warnings[0]
        assert "skils" in warnings[0]
        server.assert_alive()


# -- notifications -----------------------------------------------------------------------------------------------------


async def test_change_notifications_reach_only_callers_who_can_see_the_change(tmp_path: Path) -> None:
    """Issue 10: a client is never told about a change to a skill it cannot see, nor any URI of one."""
    root, _, running = start(tmp_path, POLICY)
    hidden_file = "skill://acme/billing/refunds/references/GUIDE.md"
    legacy_events: list[str] = []

    async def on_message(message: types.ServerNotification | Exception) -> None:
        if isinstance(message, types.ResourceListChangedNotification):
            legacy_events.append("list_changed")

    with running as server:
        async with (
            caller(server.url, "tok-billing") as billing,
            caller(server.url, "tok-support") as support,
            caller(server.url, "tok-support", mode="legacy", message_handler=on_message) as support_legacy,
        ):
            assert support_legacy.session.initialize_result is not None
            async with (
                billing.listen(resources_list_changed=True, resource_subscriptions=[hidden_file]) as billing_sub,
                support.listen(resources_list_changed=True, resource_subscriptions=[hidden_file]) as support_sub,
            ):
                (root / "acme/billing/refunds/references/GUIDE.md").write_text("edited\n")
                with anyio.fail_after(DEADLINE_S):
                    seen = [await billing_sub.__anext__(), await billing_sub.__anext__()]
                assert seen == [ResourcesListChanged(), ResourceUpdated(uri=hidden_file)]
                with anyio.move_on_after(1.5):  # billing was told; support must have been passed over
                    leaked = await support_sub.__anext__()
                    raise AssertionError(f"told about a change it cannot see: {leaked!r}")
                assert legacy_events == []
                (root / "acme/support/triage/notes/x.md").write_text("edited\n")
                with anyio.fail_after(DEADLINE_S):
                    assert await support_sub.__anext__() == ResourcesListChanged()
                with anyio.fail_after(DEADLINE_S):
                    while not legacy_events:
                        await anyio.sleep(0.05)
        server.assert_alive()


async def test_a_policy_edit_tells_exactly_the_callers_whose_view_it_changed(tmp_path: Path) -> None:
    """Issue 10: a policy reload is news to a client whose view changed, and to no other."""
    _, policy, running = start(tmp_path, POLICY, "--no-watch")
    with running as server:
        async with (
            caller(server.url, "tok-billing") as billing,
            caller(server.url, "tok-support") as support,
            billing.listen(resources_list_changed=True) as billing_sub,
            support.listen(resources_list_changed=True) as support_sub,
        ):
            policy.write_text(POLICY.replace('skills = ["acme/billing/**"]', 'skills = ["secret/**"]'))
            assert await listed(server.url, "tok-ci") == {skill_uri(p) for p in SKILLS}  # a request: the reload
            with anyio.fail_after(DEADLINE_S):
                assert await billing_sub.__anext__() == ResourcesListChanged()
            with anyio.move_on_after(1.5):
                leaked = await support_sub.__anext__()
                raise AssertionError(f"told about a policy change that changed nothing it sees: {leaked!r}")
            assert await listed(server.url, "tok-billing") == {skill_uri("secret/plans")}
        server.assert_alive()
