"""The examples for the package and generated sources (docs/sources/) run as written: `examples/packaged-skills` (a
distribution declaring a skill folder) and `examples/generated_skills.py` (a server with a generated skill)."""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path
from types import ModuleType

import pytest
from mcp import Client

from skillwire.sources.packages.source import PackageSource
from tests.support.servers import REPO_ROOT, directory_read, resources_read, skills_list, wire
from tests.support.wheels import build_wheel

EXAMPLES = REPO_ROOT / "examples"

pytestmark = pytest.mark.anyio


def test_the_packaged_skills_example_declares_a_skill_folder_that_serves(tmp_path: Path) -> None:
    """`examples/packaged-skills`, built as its pyproject.toml says (package and entry point), serves its skill."""
    project = EXAMPLES / "packaged-skills"
    meta = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))
    name, version = meta["project"]["name"], meta["project"]["version"]
    entry_points = meta["project"]["entry-points"]["skillwire.skills"]
    packages = [pattern.removesuffix("*") for pattern in meta["tool"]["setuptools"]["packages"]["find"]["include"]]
    files = {
        p.relative_to(project).as_posix(): p.read_bytes()
        for package in packages
        for p in sorted((project / package).rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }
    wheel = build_wheel(tmp_path, name, version, files, entry_points)
    catalog = PackageSource([name], path=[str(wheel)]).scan()
    assert catalog.refusals == ()
    [skill] = catalog.skills
    assert [f.uri for f in skill.files] == ["skill://release-notes/SKILL.md", "skill://release-notes/template.md"]


def _generated_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generated_skills_example", EXAMPLES / "generated_skills.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_the_generated_skills_example_serves_a_dynamic_skill() -> None:
    """`examples/generated_skills.py`'s MCPServer lists its skill as "dynamic", browses and reads it."""
    example = _generated_example()
    async with Client(example.mcp, cache=None) as client:
        [entry] = wire(await skills_list(client))["skills"]
        data = wire(await directory_read(client, "skill://reports/daily/data"))["resources"]
        csv = wire(await resources_read(client, "skill://reports/daily/data/today.csv"))["contents"][0]
    assert (entry["uri"], entry["resources"]) == ("skill://reports/daily/SKILL.md", "dynamic")
    assert [r["name"] for r in data] == ["today.csv"]
    assert csv["text"].startswith("date,region,orders\n")
