"""Pinning (issue 21, point 4): a gateway with --lock serves exactly the locked versions; an upstream change is held
as pending until `skillwire lock accept`; a locked skill the upstream dropped keeps being served from the cache.

Real processes: a watched `skillwire serve` upstream and a gateway `skillwire serve vendor=mcp:URL --lock FILE`;
the `skillwire lock` commands run in-process on the same files.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from skillwire.client.session import SkillsClient
from skillwire.core.errors import RequestFailed, SpecError, VerificationError
from skillwire.core.hosting.verify import verify_bytes
from skillwire.core.wire import INVALID_PARAMS
from skillwire.sources.mcp import LockFile
from tests.support.cli import run_cli
from tests.support.doc_blocks import Block, find, matches, transcript
from tests.support.servers import HttpServer, http_server, serve_command
from tests.support.skills import write_skill

pytestmark = pytest.mark.anyio

WITHIN_S = 15.0  # generous: what is pinned here is what is served, not how fast (test_following.py times that)
FORMS = "skill://vendor/pdf/forms.md"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _until(done: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WITHIN_S
    while not done():
        assert time.monotonic() < deadline, f"{what} within {WITHIN_S} s"
        time.sleep(0.05)


async def _served(gateway: HttpServer) -> dict[str, bytes] | None:
    """Every file the gateway serves, read and verified against its listing: {uri: bytes}; None when the catalog
    changed between the listing and a read (a listed file no longer served, or served with other bytes once a
    change was accepted: the walk must start again; a caller that expects a steady catalog gets None and fails)."""
    files: dict[str, bytes] = {}
    async with SkillsClient.connect(gateway.url) as client:
        listing = await client.list_entries()
        for entry in listing.entries:
            assert not isinstance(entry.resources, str)
            for resource in entry.resources:
                try:
                    data = await client.read(resource.uri, size=resource.size)
                except RequestFailed as error:
                    if error.code != INVALID_PARAMS or "No resource is served" not in str(error):
                        raise
                    return None
                try:
                    verify_bytes(resource, data)
                except VerificationError:
                    return None
                files[resource.uri] = data
    return files


async def _served_until(gateway: HttpServer, done: Callable[[dict[str, bytes]], bool], what: str) -> dict[str, bytes]:
    with anyio.fail_after(WITHIN_S, shield=False):
        while (files := await _served(gateway)) is None or not done(files):
            await anyio.sleep(0.1)
    return files


async def test_an_upstream_change_is_held_by_the_lock_until_accepted(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    pdf = write_skill(root, "pdf", description="Fill PDF forms")
    (pdf / "forms.md").write_text("# Forms, first edition\n", encoding="utf-8")
    write_skill(root, "notes", description="Take notes")
    lock, cache = tmp_path / "skills.lock", tmp_path / "gateway"
    with http_server([root], "--quiet") as upstream:
        vendor = f"vendor=mcp:{upstream.url}"
        options = ("--http", "127.0.0.1:0", "--gateway-cache", str(cache), "--lock", str(lock))
        with http_server([], command=serve_command([], vendor, *options)) as gateway:
            locked = json.loads(lock.read_text(encoding="utf-8"))  # written from the first verified state
            assert locked["upstreams"] == [upstream.url]
            assert [s["uri"] for s in locked["skills"]] == ["skill://notes/SKILL.md", "skill://pdf/SKILL.md"]
            assert {f["path"] for f in locked["skills"][1]["files"]} == {"SKILL.md", "forms.md"}
            first = await _served_until(gateway, lambda files: True, "a first walk")
            assert first[FORMS] == b"# Forms, first edition\n"

            (pdf / "forms.md").write_text("# Forms, second edition\n", encoding="utf-8")
            shutil.rmtree(root / "notes")
            pending = Path(f"{lock}.pending")
            _until(lambda: pending.exists() and len(json.loads(pending.read_text())["skills"]) == 2, "held")
            assert await _served(gateway) == first  # the edit and the removal are held: the locked versions stay
            assert "no longer offered upstream; serving the locked version from the gateway cache" in gateway.stderr

            shown = run_cli("lock", "show", "skills.lock", "--gateway-cache", "gateway", cwd=tmp_path)
            assert shown.returncode == 0, shown.stderr
            assert f"changed  skill://pdf/SKILL.md  from {upstream.url}" in shown.stdout
            assert f"removed  skill://notes/SKILL.md  from {upstream.url}" in shown.stdout
            assert "~ forms.md  23 -> 24 bytes" in shown.stdout
            assert "-# Forms, first edition" in shown.stdout
            assert "+# Forms, second edition" in shown.stdout

            accepted = run_cli("lock", "accept", "skills.lock", "skill://pdf/SKILL.md", cwd=tmp_path)
            assert accepted.returncode == 0, accepted.stderr
            assert accepted.stdout == f"accepted: changed skill://pdf/SKILL.md from {upstream.url}\n"
            # docs/sources/gateway.md shows this very scene: both commands, as written, print what it shows
            page = find("docs/sources/gateway.md", "$ skillwire lock show skills.lock").text
            steps = transcript(Block("", 0, "text", page.replace("http://127.0.0.1:8001/mcp", upstream.url)))
            assert [s.command for s in steps] == [
                "skillwire lock show skills.lock --gateway-cache gateway",
                "skillwire lock accept skills.lock skill://pdf/SKILL.md",
            ]
            assert matches(steps[0].shown, shown.stdout), shown.stdout
            assert matches(steps[1].shown, accepted.stdout)
            now = await _served_until(gateway, lambda f: f.get(FORMS) == b"# Forms, second edition\n", "accepted")
            assert "skill://vendor/notes/SKILL.md" in now  # its removal is still held

            assert run_cli("lock", "accept", str(lock), "--all").returncode == 0
            await _served_until(gateway, lambda f: "skill://vendor/notes/SKILL.md" not in f, "removal accepted")
            assert not pending.exists()
            gateway.assert_alive()


def test_a_lock_file_that_is_not_one_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "skills.lock"
    for text, said in (
        ("{", "not JSON"),
        ('{"format": "other"}', "not a skillwire lock"),
        ('{"format": "skillwire-lock", "version": 9}', "version 9"),
        (
            '{"format": "skillwire-lock", "version": 1, "upstreams": [], "skills": [{"upstream": "u", "uri": "x", '
            '"files": [{"path": "SKILL.md", "digest": "md5:1", "size": 1}]}]}',
            "sha256 digest",
        ),
    ):
        path.write_text(text, encoding="utf-8")
        with pytest.raises(SpecError, match=said):
            LockFile(path).load()
        run = run_cli("lock", "show", str(path))
        assert run.returncode == 1
        assert run.stderr.count("\n") == 1
        assert said in run.stderr


def test_lock_commands_say_what_is_wrong(tmp_path: Path) -> None:
    missing = run_cli("lock", "show", str(tmp_path / "none.lock"))
    assert missing.returncode == 1
    assert "no such lock file" in missing.stderr
    (tmp_path / "a.lock").write_text('{"format": "skillwire-lock", "version": 1, "upstreams": [], "skills": []}')
    unknown = run_cli("lock", "accept", str(tmp_path / "a.lock"), "skill://x/SKILL.md")
    assert unknown.returncode == 1
    assert "no held change for skill://x/SKILL.md" in unknown.stderr
    both = run_cli("lock", "accept", str(tmp_path / "a.lock"))
    assert both.returncode == 2
    assert "or --all" in both.stderr
    nothing = run_cli("lock", "show", str(tmp_path / "a.lock"))
    assert nothing.returncode == 0
    assert nothing.stdout.startswith("no change held")


def test_a_fifo_named_as_the_lock_or_the_credentials_is_refused_at_once(tmp_path: Path) -> None:
    """A FIFO is never waited on (no writer would ever come): one line, at once, for `lock show` and for `serve`."""
    fifo = tmp_path / "skills.lock"
    os.mkfifo(fifo)
    shown = run_cli("lock", "show", str(fifo), timeout=10)
    assert shown.returncode == 1
    assert "not a regular file" in shown.stderr
    served = run_cli("serve", "v=mcp:http://h/mcp", "--upstream-credentials", str(fifo), "--quiet", timeout=10)
    assert served.returncode == 2
    assert "not a regular file" in served.stderr
