"""The spec's Example Message Flow, against a real server over stdio and streamable HTTP.

A copy of examples/skills/pdf-processing (the spec's example, byte for byte) is
served from a fresh folder; the host lists, reads SKILL.md, lists templates/,
then the server gains templates/credit-note.md and the host refreshes the entry
with skills/get.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.support.servers import (
    EXAMPLE_SKILLS,
    EXTENSION_ID,
    MODES,
    TRANSPORTS,
    Mode,
    ServerTarget,
    Transport,
    canonical_json,
    connect,
    directory_read,
    resources_read,
    serve_target,
    skills_get,
    skills_list,
)
from tests.support.spec_example import CREDIT_NOTE_RESOURCE, SPEC_RESOURCES

pytestmark = pytest.mark.anyio

SKILL_URI = "skill://pdf-processing/SKILL.md"
TEMPLATES_URI = "skill://pdf-processing/templates"

SKILL_MD_TEXT = (
    "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\n"
    "# PDF processing\n\nChoose the matching template from `templates/`.\n"
)
CREDIT_NOTE = b"# Credit note\n\nInvoice:\nCredit amount:\n"

SPEC_FRONTMATTER = {"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents"}
SPEC_ENTRY: dict[str, Any] = {"uri": SKILL_URI, "frontmatter": SPEC_FRONTMATTER, "resources": SPEC_RESOURCES}
SPEC_TEMPLATES_CHILDREN: list[dict[str, Any]] = [
    {"uri": "skill://pdf-processing/templates/invoice.md", "name": "invoice.md", "mimeType": "text/markdown"},
    {
        "uri": "skill://pdf-processing/templates/purchase-order.md",
        "name": "purchase-order.md",
        "mimeType": "text/markdown",
    },
]
CREDIT_NOTE_CHILD: dict[str, Any] = {
    "uri": "skill://pdf-processing/templates/credit-note.md",
    "name": "credit-note.md",
    "mimeType": "text/markdown",
}
TTL_MS = 300_000
CACHE_SCOPE = "public"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module scope, so the read-only tests can share one connection per transport and mode."""
    return "asyncio"


@dataclass
class Served:
    target: ServerTarget
    skill_dir: Path

    def client(self, mode: Mode = "modern") -> AbstractAsyncContextManager[Client]:
        return connect(self.target, mode=mode)


@contextmanager
def serve_spec_example(transport: Transport, base: Path) -> Iterator[Served]:
    """A fresh copy of the spec's pdf-processing skill under `base`, served over `transport`."""
    root = base / "skills"
    skill_dir = root / "pdf-processing"
    shutil.copytree(EXAMPLE_SKILLS / "pdf-processing", skill_dir)
    with serve_target(transport, [root], base / "logs") as target:
        yield Served(target, skill_dir)


@pytest.fixture(params=TRANSPORTS)
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Served]:
    """A private copy served over the parametrized transport, for a test that changes the skill on disk."""
    with serve_spec_example(request.param, tmp_path) as served:
        yield served


@pytest.fixture(scope="module", params=TRANSPORTS)
def shared(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One server per transport for the module's read-only tests, which never change the skill."""
    with serve_spec_example(request.param, tmp_path_factory.mktemp(f"shared-{request.param}")) as served:
        yield served


@pytest.fixture(scope="module")
async def modern(shared: Served) -> AsyncIterator[Client]:
    """One modern (server/discover) connection per transport, shared by read-only tests."""
    async with shared.client("modern") as client:
        yield client


@pytest.fixture(scope="module")
async def legacy(shared: Served) -> AsyncIterator[Client]:
    """One legacy (initialize) connection per transport, shared by read-only tests."""
    async with shared.client("legacy") as client:
        yield client


def _by_uri(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(items, key=lambda item: str(item.get("uri")))


def _as_in_spec(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A directory read's files without `size`: the spec's examples show uri, name and mimeType only.

    skillwire gives a file the Resource metadata resources/list gives it (size included), as "Files carry their
    ordinary Resource metadata" allows; the sizes are checked against the manifest here.
    """
    sizes = {r["uri"]: r["size"] for r in [*SPEC_RESOURCES, CREDIT_NOTE_RESOURCE]}
    for item in items:
        if item["mimeType"] != "inode/directory":
            assert item["size"] == sizes[item["uri"]]
    return _by_uri([{k: v for k, v in item.items() if k != "size"} for item in items])


def test_fixture_bytes_are_the_specs() -> None:
    """The bundled example is the spec's example, so the digests below are the spec's own."""
    skill = EXAMPLE_SKILLS / "pdf-processing"
    assert (skill / "SKILL.md").read_bytes() == SKILL_MD_TEXT.encode()
    for resource in SPEC_RESOURCES:
        rel = resource["uri"].removeprefix("skill://pdf-processing/")
        data = (skill / rel).read_bytes()
        assert len(data) == resource["size"]
        assert "sha256:" + hashlib.sha256(data).hexdigest() == resource["digest"]
    assert "sha256:" + hashlib.sha256(CREDIT_NOTE).hexdigest() == CREDIT_NOTE_RESOURCE["digest"]
    assert len(CREDIT_NOTE) == CREDIT_NOTE_RESOURCE["size"]


async def test_discover_declares_extension_and_resources(modern: Client) -> None:
    discover = modern.session.discover_result
    assert discover is not None, "the modern client should have learned capabilities from server/discover"
    capabilities = modern.server_capabilities
    assert capabilities.extensions is not None, "server/discover declares no extensions"
    assert capabilities.extensions.get(EXTENSION_ID) == {"directoryRead": True}
    assert capabilities.resources is not None, "declaring the extension requires the resources capability"


async def test_legacy_initialize_declares_extension_and_resources(legacy: Client) -> None:
    initialized = legacy.session.initialize_result
    assert initialized is not None
    capabilities = legacy.server_capabilities
    assert capabilities.extensions is not None, "the initialize result declares no extensions"
    assert capabilities.extensions.get(EXTENSION_ID) == {"directoryRead": True}
    assert capabilities.resources is not None


@pytest.mark.parametrize("mode", MODES)
async def test_skills_list_is_the_specs_entry(modern: Client, legacy: Client, mode: Mode) -> None:
    listing = await skills_list(modern if mode == "modern" else legacy)
    raw = listing.model_dump(mode="json", by_alias=True, exclude_unset=True)
    assert canonical_json(listing.skills) == canonical_json([SPEC_ENTRY])
    assert listing.skills[0]["resources"] == SPEC_RESOURCES, "SKILL.md first, then the templates, as in the spec"
    assert "nextCursor" not in raw
    if mode == "modern":
        assert raw.get("resultType") == "complete"
        assert raw.get("ttlMs") == TTL_MS
        assert raw.get("cacheScope") == CACHE_SCOPE
    else:
        assert "ttlMs" not in raw, "2026-only cache hints on a handshake-era connection"
        assert "cacheScope" not in raw


@pytest.mark.parametrize("mode", MODES)
async def test_read_skill_md_is_the_specs_text(modern: Client, legacy: Client, mode: Mode) -> None:
    result = await resources_read(modern if mode == "modern" else legacy, SKILL_URI)
    raw = result.model_dump(mode="json", by_alias=True, exclude_unset=True)
    assert result.contents == [{"uri": SKILL_URI, "mimeType": "text/markdown", "text": SKILL_MD_TEXT}]
    assert len(SKILL_MD_TEXT.encode()) == 151
    if mode == "modern":
        assert raw.get("resultType") == "complete"
        assert raw.get("ttlMs") == TTL_MS
        assert raw.get("cacheScope") == CACHE_SCOPE


async def test_directory_read_lists_the_templates(modern: Client) -> None:
    result = await directory_read(modern, TEMPLATES_URI)
    raw = result.model_dump(mode="json", by_alias=True, exclude_unset=True)
    assert _as_in_spec(result.resources) == _by_uri(SPEC_TEMPLATES_CHILDREN)
    assert raw.get("resultType") == "complete"
    assert "nextCursor" not in raw


async def test_directory_read_of_the_skill_root(modern: Client) -> None:
    result = await directory_read(modern, "skill://pdf-processing")
    assert _as_in_spec(result.resources) == [
        # Spec, Resource Metadata: SKILL.md named and described from its frontmatter, as in resources/list
        {
            "uri": SKILL_URI,
            "name": "pdf-processing",
            "description": SPEC_FRONTMATTER["description"],
            "mimeType": "text/markdown",
        },
        {"uri": TEMPLATES_URI, "name": "templates", "mimeType": "inode/directory"},
    ]


async def test_invoice_read_verifies_against_the_entry(modern: Client) -> None:
    """The host reads invoice.md and checks size and digest against the held entry."""
    entry = (await skills_list(modern)).skills[0]
    held = {r["uri"]: r for r in entry["resources"]}
    uri = "skill://pdf-processing/templates/invoice.md"
    contents = (await resources_read(modern, uri)).contents
    assert len(contents) == 1
    assert contents[0]["mimeType"] == "text/markdown"
    data = contents[0]["text"].encode("utf-8")
    assert len(data) == held[uri]["size"]
    assert "sha256:" + hashlib.sha256(data).hexdigest() == held[uri]["digest"]


async def test_added_file_shows_in_directory_read(served: Served) -> None:
    """The spec's flow: after credit-note.md is added, a directory read lists it (a live observation)."""
    async with served.client("modern") as client:
        assert (await skills_list(client)).skills[0]["resources"] == SPEC_RESOURCES
        (served.skill_dir / "templates" / "credit-note.md").write_bytes(CREDIT_NOTE)
        result = await directory_read(client, TEMPLATES_URI)
    assert _as_in_spec(result.resources) == _by_uri([*SPEC_TEMPLATES_CHILDREN, CREDIT_NOTE_CHILD]), (
        "resources/directory/read does not show templates/credit-note.md, added after the listing"
    )


async def test_added_file_refreshes_through_skills_get(served: Served) -> None:
    """The spec's flow: the host refreshes with skills/get and receives the four-file manifest."""
    async with served.client("modern") as client:
        before = await skills_list(client)
        assert before.skills[0]["resources"] == SPEC_RESOURCES
        assert canonical_json((await skills_get(client, SKILL_URI)).skill) == canonical_json(SPEC_ENTRY)

        (served.skill_dir / "templates" / "credit-note.md").write_bytes(CREDIT_NOTE)

        refreshed = await skills_get(client, SKILL_URI)
        # Only under the refreshed entry does the host read credit-note.md, and verify it.
        credit_note = await resources_read(client, CREDIT_NOTE_RESOURCE["uri"])
    raw = refreshed.model_dump(mode="json", by_alias=True, exclude_unset=True)
    assert raw.get("resultType") == "complete"
    assert raw.get("ttlMs") == TTL_MS
    assert raw.get("cacheScope") == CACHE_SCOPE
    skill = refreshed.skill
    assert skill["uri"] == SKILL_URI
    assert skill["frontmatter"] == SPEC_FRONTMATTER
    expected = [*SPEC_RESOURCES, CREDIT_NOTE_RESOURCE]
    assert canonical_json(_by_uri(skill["resources"])) == canonical_json(_by_uri(expected)), (
        "skills/get after templates/credit-note.md was added does not return the spec's four-file manifest; "
        f"got {[r['uri'] for r in skill['resources']]}"
    )
    assert credit_note.contents == [
        {"uri": CREDIT_NOTE_RESOURCE["uri"], "mimeType": "text/markdown", "text": CREDIT_NOTE.decode()}
    ]
