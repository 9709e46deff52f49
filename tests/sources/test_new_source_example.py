"""The new-source guide's example is a complete source kind (skillwire choice, issue 20): taken from
docs/new-source.md as written, registered with one line, opened from a `KIND:TARGET` spec and served in-process.
"""

from __future__ import annotations

import ast
import base64
import io
import sys
import tarfile
import types
from pathlib import Path
from typing import Any

import pytest

from skillwire import SkillService
from skillwire.core.digest import sha256_digest
from skillwire.sources import KINDS, SourceOptions, SpecError, open_sources
from tests.sources.contract.cases import skill_md
from tests.support.doc_blocks import find
from tests.support.servers import REPO_ROOT

GUIDE = REPO_ROOT / "docs" / "new-source.md"

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def example() -> str:
    """The guide's example (docs/new-source.md, "A complete example"), byte for byte."""
    return find("docs/new-source.md", "class TarSource:").text


def registration() -> tuple[str, str]:
    """The guide's one line for `KINDS`, read as the dictionary entry it is: (kind, opener)."""
    line = find("docs/new-source.md", '"tar": "skillwire.sources.tar:open_spec",').text
    [(kind, opener)] = ast.literal_eval("{" + line + "}").items()
    return kind, opener


@pytest.fixture
def tar_kind(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """The example as an importable module, registered as the kind `tar` with the guide's one line."""
    module = types.ModuleType("tar_source_example")
    exec(compile(example(), str(GUIDE), "exec"), module.__dict__)  # the repository's own guide
    monkeypatch.setitem(sys.modules, module.__name__, module)
    kind, opener = registration()
    assert opener.endswith(":open_spec"), opener  # the guide's module is named for where it would live in skillwire
    monkeypatch.setitem(KINDS, kind, f"{module.__name__}:{opener.rpartition(':')[2]}")
    return module


def make_tar(path: Path, files: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w") as tar:
        for name, data in files.items():
            member = tarfile.TarInfo(name)
            member.size = len(data)
            tar.addfile(member, io.BytesIO(data))
        folder = tarfile.TarInfo("bundle/skills/pdf/forms")
        folder.type = tarfile.DIRTYPE
        tar.addfile(folder)  # a folder entry: nothing to serve
        link = tarfile.TarInfo("bundle/skills/pdf/link.md")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(link)  # not a regular file: never read
    return path


def test_the_example_imports_only_public_names() -> None:
    """A source author needs no deep import: the example reaches `skillwire.sources` and nothing below it."""
    tree = ast.parse(example())
    modules = [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    modules += [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    assert [m for m in modules if m and m.startswith("skillwire")] == ["skillwire.sources"]
    assert len(example().splitlines()) <= 45


async def test_the_example_serves_a_tar_files_skills_through_the_skill_service(
    tar_kind: types.ModuleType, tmp_path: Path
) -> None:
    """`tar:FILE#ROOT` opens the example's source; skills/list lists what the archive holds under ROOT and every
    read sends bytes matching the digest the listing published; a hostile name and a bad skill are refused."""
    files = {
        "bundle/skills/pdf/SKILL.md": skill_md("pdf"),
        "./bundle/skills/pdf/forms/w9.md": b"# W-9\r\n",
        "bundle/skills/pdf/blob.bin": bytes(range(256)),
        "bundle/skills/bad/SKILL.md": skill_md("other"),
        "bundle/skills/../../etc/x": b"crafted\n",
        "bundle/other/SKILL.md": skill_md("other"),
    }
    archive = make_tar(tmp_path / "skills.tar", files)
    source = open_sources([f"tar:{archive}#bundle/skills"], SourceOptions())
    assert isinstance(source, tar_kind.TarSource)
    service = SkillService(source)
    listed: list[dict[str, Any]] = service.list_skills(None, modern=True)["skills"]
    assert [s["uri"] for s in listed] == ["skill://pdf/SKILL.md"]
    resources = listed[0]["resources"]
    assert [r["uri"] for r in resources] == [
        "skill://pdf/SKILL.md",
        "skill://pdf/blob.bin",
        "skill://pdf/forms/w9.md",
    ]
    for resource in resources:
        content = (await service.read_resource(resource["uri"], modern=True))["contents"][0]
        data = base64.b64decode(content["blob"]) if "blob" in content else content["text"].encode()
        assert sha256_digest(data) == resource["digest"]
        assert len(data) == resource["size"]
    assert (await service.read_resource("skill://pdf/forms/w9.md", modern=True))["contents"][0]["text"] == "# W-9\r\n"
    refused = sorted((r.path, r.rule, r.skill) for r in service.refusals)
    assert refused == [
        (f"tar {archive}/../../etc/x", "path-invalid", False),
        (f"tar {archive}/bad/SKILL.md", "name-mismatch", True),
    ]


def test_a_wrong_target_is_a_spec_error(tar_kind: types.ModuleType, tmp_path: Path) -> None:
    """The example's opener says what it needs, through the registry, like every built-in kind."""
    with pytest.raises(SpecError, match=r"needs tar:FILE"):
        open_sources([f"tar:{tmp_path / 'missing.tar'}"], SourceOptions())


def test_a_tar_whose_root_is_a_skill_takes_the_roots_name(tar_kind: types.ModuleType, tmp_path: Path) -> None:
    """With no ROOT the whole archive is the root: a SKILL.md at its top makes one skill named as the file."""
    archive = make_tar(tmp_path / "notes.tar", {"SKILL.md": skill_md("notes"), "a.md": b"a\n"})
    catalog = tar_kind.TarSource(str(archive)).scan()
    assert [s.uri for s in catalog.skills] == ["skill://notes/SKILL.md"]
