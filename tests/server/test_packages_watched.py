"""`skillwire serve --packages` follows pip: a distribution installed, upgraded or uninstalled in the served venv,
or an editable install's source folder edited in place, is served anew without SIGHUP (skillwire choices;
list_changed is the MCP notification). Real wheels, a real venv, real pip, a real server over HTTP.

One venv and one server for the module; each test works on a distribution of its own, so the order does not
matter. Every check polls with a generous deadline (`soon`) that only detects a freeze.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from mcp import Client, types

from skillwire.core.digest import sha256_digest
from tests.support.polling import eventually
from tests.support.servers import REQUEST_TIMEOUT_S, all_skills, http_server, resources_read
from tests.support.wheels import build_wheel, fresh_venv, package_files, pip_install, pip_uninstall

pytestmark = pytest.mark.anyio

DEADLINE_S = 60.0  # pip, the watcher's debounce and a rescan on a busy machine; a freeze never ends
T = TypeVar("T")


def skill(name: str, description: str) -> dict[str, bytes]:
    return {f"{name}/SKILL.md": f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n".encode()}


@dataclass(frozen=True)
class Served:
    """The running server's URL, the venv's python, where the test's wheels are, and the editable source folder."""

    url: str
    python: Path
    wheels: Path
    editable: Path


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`skillwire serve --packages` run by the python of a fresh venv holding one editable install (PEP 660: a
    wheel of a `.pth` naming a source folder, read at start-up), the others installed by the tests as they go."""
    wheels = tmp_path_factory.mktemp("wheels")
    source = tmp_path_factory.mktemp("editable")
    for rel, data in package_files("edit_skills", skill("edited", "Before the edit.")).items():
        (source / rel).parent.mkdir(parents=True, exist_ok=True)
        (source / rel).write_bytes(data)
    editable = build_wheel(
        wheels,
        "edit-skills",
        "1.0",
        {"__editable__.edit_skills-1.0.pth": f"{source}\n".encode()},
        {"edit": "edit_skills:skills"},
    )
    python = fresh_venv(tmp_path_factory.mktemp("venv") / "venv", [editable])
    command = [str(python), "-m", "skillwire", "serve", "--packages", "--http", "127.0.0.1:0"]
    with http_server([], command=command) as server:
        yield Served(server.url, python, wheels, source / "edit_skills" / "skills")
        server.assert_alive()


def wheel_of(served: Served, name: str, version: str, skills: dict[str, bytes]) -> Path:
    package = name.replace("-", "_")
    return build_wheel(served.wheels, name, version, package_files(package, skills), {"main": f"{package}:skills"})


async def test_a_distribution_installed_while_serving_is_served_and_clients_are_told(served: Served) -> None:
    """pip install into the served venv: its skill appears in skills/list, and a connected handshake-era client
    gets notifications/resources/list_changed."""
    told = anyio.Event()

    async def on_message(message: types.ServerNotification | Exception) -> None:
        if isinstance(message, types.ResourceListChangedNotification):
            told.set()

    wheel = wheel_of(served, "install-skills", "1.0", skill("installed", "Installed while serving."))
    async with Client(served.url, mode="legacy", cache=None, message_handler=on_message) as client:
        assert "skill://installed/SKILL.md" not in await _listing(client)
        await anyio.to_thread.run_sync(pip_install, served.python, [wheel])
        entry = await soon(lambda: _entry(client, "skill://installed/SKILL.md"), "the installed skill is listed")
        with anyio.fail_after(DEADLINE_S):
            await told.wait()
    assert entry["frontmatter"]["description"] == "Installed while serving."


async def test_an_upgrade_serves_the_new_bytes_and_no_longer_the_old_digest(served: Served) -> None:
    """pip upgrading a distribution to a version with a changed file: the new bytes are listed and read, and the
    old file's digest is in no manifest any more."""
    old = {**skill("upgraded", "Upgraded while serving."), "upgraded/notes.md": b"version one\n"}
    new = {**old, "upgraded/notes.md": b"version two, longer\r\n"}
    notes = "skill://upgraded/notes.md"
    async with Client(served.url, cache=None, read_timeout_seconds=REQUEST_TIMEOUT_S) as client:
        await anyio.to_thread.run_sync(pip_install, served.python, [wheel_of(served, "upgrade-skills", "1.0", old)])
        await soon(lambda: _digest_listed(client, notes, sha256_digest(old["upgraded/notes.md"])), "version 1")
        await anyio.to_thread.run_sync(pip_install, served.python, [wheel_of(served, "upgrade-skills", "2.0", new)])
        await soon(lambda: _digest_listed(client, notes, sha256_digest(new["upgraded/notes.md"])), "version 2")
        listed = {r["digest"] for e in await all_skills(client) for r in e["resources"]}
        read = (await resources_read(client, notes)).contents[0]
    assert sha256_digest(old["upgraded/notes.md"]) not in listed
    assert read["text"].encode() == new["upgraded/notes.md"]


async def test_an_uninstalled_distribution_is_no_longer_served(served: Served) -> None:
    """pip uninstall from the served venv: the distribution's skill leaves skills/list."""
    wheel = wheel_of(served, "remove-skills", "1.0", skill("removed", "Uninstalled while serving."))
    async with Client(served.url, cache=None, read_timeout_seconds=REQUEST_TIMEOUT_S) as client:
        await anyio.to_thread.run_sync(pip_install, served.python, [wheel])
        await soon(lambda: _entry(client, "skill://removed/SKILL.md"), "the skill to remove is listed")
        await anyio.to_thread.run_sync(pip_uninstall, served.python, ["remove-skills"])
        await soon(lambda: _absent(client, "skill://removed/SKILL.md"), "the uninstalled skill leaves the list")


async def test_an_editable_installs_skill_edited_in_place_is_served_anew(served: Served) -> None:
    """A file in an editable install's source folder edited in place: skills/list shows the edit."""
    uri = "skill://edited/SKILL.md"
    async with Client(served.url, cache=None, read_timeout_seconds=REQUEST_TIMEOUT_S) as client:
        before = await soon(lambda: _entry(client, uri), "the editable install's skill is listed")
        assert before["frontmatter"]["description"] == "Before the edit."
        (served.editable / "edited" / "SKILL.md").write_bytes(skill("edited", "After the edit.")["edited/SKILL.md"])
        await soon(lambda: _described(client, uri, "After the edit."), "the edit is listed")


# -- helpers ----------------------------------------------------------------------------------------------------------


async def soon(check: Callable[[], Awaitable[T | None]], what: str) -> T:
    """`eventually`, with this module's deadline (pip and a rescan on a busy machine)."""
    return await eventually(check, what, deadline_s=DEADLINE_S, step_s=0.2)


async def _listing(client: Client) -> dict[str, dict[str, Any]]:
    return {entry["uri"]: entry for entry in await all_skills(client)}


async def _entry(client: Client, uri: str) -> dict[str, Any] | None:
    return (await _listing(client)).get(uri)


async def _absent(client: Client, uri: str) -> bool:
    return uri not in await _listing(client)


async def _described(client: Client, uri: str, description: str) -> bool:
    entry = await _entry(client, uri)
    return entry is not None and entry["frontmatter"]["description"] == description


async def _digest_listed(client: Client, uri: str, digest: str) -> bool:
    return any(r["uri"] == uri and r["digest"] == digest for e in await all_skills(client) for r in e["resources"])
