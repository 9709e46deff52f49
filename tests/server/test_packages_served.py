"""Issue 12 acceptance: a package built in the test (a wheel with skills, installed into a venv) is served with
`--packages`, over HTTP, to real clients; and the same wheel imported as a zip archive."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from skillwire import ApproveLoads, Host
from skillwire.core.digest import sha256_digest
from tests.support.servers import REQUEST_TIMEOUT_S, all_skills, directory_read, http_server, resources_read
from tests.support.wheels import build_wheel, fresh_venv, package_files

pytestmark = pytest.mark.anyio

SKILLS = {
    "pdf/SKILL.md": b"---\nname: pdf\ndescription: Fill PDF forms. Use it for forms.\n---\n\nSee templates/.\n",
    "pdf/templates/invoice.md": b"# Invoice\r\nCRLF kept as stored\r\n",
    "team/review/SKILL.md": b"---\nname: review\ndescription: Review a change.\nlicense: MIT\n---\n# Review\n",
    "Bad/SKILL.md": b"---\nname: Bad\ndescription: Upper case is refused.\n---\n",
}
URIS = ["skill://pdf/SKILL.md", "skill://team/review/SKILL.md"]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A pure wheel of the distribution `acme-skills` 1.2.0 whose package `acme_skills` ships SKILLS."""
    where = tmp_path_factory.mktemp("wheel")
    files = {**package_files("acme_skills", SKILLS), "acme_skills/__init__.py": b"raise SystemExit('never run')\n"}
    return build_wheel(where, "acme-skills", "1.2.0", files, {"acme": "acme_skills:skills"})


@pytest.fixture(scope="module")
def installed_url(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`skillwire serve --packages` run by the Python of a fresh venv the wheel was pip-installed into."""
    python = fresh_venv(tmp_path_factory.mktemp("venv") / "venv", [wheel])
    command = [str(python), "-m", "skillwire", "serve", "--packages", "--http", "127.0.0.1:0"]
    with http_server([], command=command) as server:
        assert "package acme-skills 1.2.0 (acme = acme_skills:skills)/Bad/SKILL.md" in server.stderr
        yield server.url
        server.assert_alive()


async def _observe(url: str) -> tuple[list[dict[str, Any]], dict[str, bytes], list[str]]:
    """Every entry, the bytes of every listed file, and the names in the pdf skill's templates folder."""
    async with Client(url, cache=None, read_timeout_seconds=REQUEST_TIMEOUT_S) as client:
        entries = await all_skills(client)
        data: dict[str, bytes] = {}
        for entry in entries:
            for resource in entry["resources"]:
                contents = (await resources_read(client, resource["uri"])).contents[0]
                data[resource["uri"]] = contents["text"].encode("utf-8")  # every file here is UTF-8 text
        folder = (await directory_read(client, "skill://pdf/templates")).resources
    return entries, data, [r["name"] for r in folder]


async def test_a_wheel_installed_in_a_fresh_venv_is_served_with_packages(installed_url: str) -> None:
    """The installed distribution's skills are served with complete manifests whose digests match the bytes
    read (CRLF kept), its directories read, and a skill breaking a rule refused naming the distribution."""
    entries, data, templates = await _observe(installed_url)
    assert [e["uri"] for e in entries] == URIS
    for entry in entries:
        for resource in entry["resources"]:
            assert sha256_digest(data[resource["uri"]]) == resource["digest"]
            assert len(data[resource["uri"]]) == resource["size"]
    assert data["skill://pdf/templates/invoice.md"] == SKILLS["pdf/templates/invoice.md"]
    assert templates == ["invoice.md"]


async def test_skillwires_host_loads_an_installed_packages_skill(installed_url: str) -> None:
    """A real host verifies what the package source serves (size, digest, frontmatter) and loads it."""
    async with Host(prompt=ApproveLoads()) as host:
        await host.add_server("pkg", installed_url)
        loaded = await host.load_skill("pkg:pdf")
        invoice = await host.read_skill_file("pkg:pdf", "templates/invoice.md")
    assert "See templates/." in loaded.text
    assert invoice == SKILLS["pdf/templates/invoice.md"]


async def test_a_wheel_imported_as_a_zip_archive_is_served_the_same(wheel: Path, installed_url: str) -> None:
    """The same wheel on PYTHONPATH (a zip import: no real path, read through importlib.resources) serves the same
    entries and bytes as the installed one, restricted with --packages=NAME."""
    command = ["env", f"PYTHONPATH={wheel}", sys.executable, "-m", "skillwire", "serve", "--packages=acme-skills"]
    with http_server([], command=[*command, "--http", "127.0.0.1:0"]) as zipped:
        from_zip = await _observe(zipped.url)
        zipped.assert_alive()
    assert from_zip == await _observe(installed_url)
