"""Every public constructor and function that takes a filesystem path takes a `str` as well as a `Path` (issue 20).

Each case passes `str` paths and checks that the path was used (skills found there, a cache written there, a
refusal naming it), in-process. mypy checks this file too: a parameter annotated `Path` alone fails it. (Git and
the digest caches are reached through `FolderSource` and `GitSource`; `Host` takes no path of its own.)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from skillwire import (
    Approval,
    FolderSource,
    JsonApprovalStore,
    PackageSource,
    PolicyFile,
    SkillCache,
    SkillsExtension,
)
from skillwire.core.errors import CacheLocationRefused
from skillwire.core.hosting.registry import SkillKey
from skillwire.sources.git.source import GitSource
from tests.support.git_repos import commit_folder
from tests.support.wheels import build_wheel, package_files

SKILL_MD = b"---\nname: pdf\ndescription: Fills PDF forms.\n---\n# PDF\n"


def _skills(tmp_path: Path) -> Path:
    (tmp_path / "skills" / "pdf").mkdir(parents=True)
    (tmp_path / "skills" / "pdf" / "SKILL.md").write_bytes(SKILL_MD)
    return tmp_path / "skills"


def folder_source(tmp_path: Path) -> None:
    root = _skills(tmp_path)
    assert [s.uri for s in FolderSource([str(root)]).scan().skills] == ["skill://pdf/SKILL.md"]


def folder_source_digest_cache(tmp_path: Path) -> None:
    root, cache = _skills(tmp_path), tmp_path / "state" / "digests.json"
    FolderSource([str(root)], digest_cache=str(cache)).scan()
    assert cache.is_file()


def folder_source_update(tmp_path: Path) -> None:
    root = _skills(tmp_path)
    source = FolderSource([str(root)])
    source.scan()
    (root / "pdf" / "forms.md").write_bytes(b"# Forms\n")
    [skill] = source.update([str(root / "pdf" / "forms.md")], generation=1).skills
    assert [f.rel_path for f in skill.files] == ["SKILL.md", "forms.md"]


def extension_from_paths(tmp_path: Path) -> None:
    root = _skills(tmp_path)
    assert SkillsExtension.from_paths([str(root)]).service.catalog.skill_uris == ["skill://pdf/SKILL.md"]


def git_source(tmp_path: Path) -> None:
    repo, cache = tmp_path / "repo", tmp_path / "state" / "blobs.json"
    commit_folder(_skills(tmp_path), repo)
    assert [s.uri for s in GitSource(str(repo), digest_cache=str(cache)).scan().skills] == ["skill://pdf/SKILL.md"]
    assert cache.is_file()


def package_source(tmp_path: Path) -> None:
    files = package_files("acme_tools", {"pdf/SKILL.md": SKILL_MD})
    wheel = build_wheel(tmp_path, "acme-tools", "1.0", files, {"main": "acme_tools:skills"})
    assert [s.uri for s in PackageSource(path=[str(wheel)]).scan().skills] == ["skill://pdf/SKILL.md"]
    assert PackageSource(path=[wheel]).scan().skill_uris == ["skill://pdf/SKILL.md"]  # a Path too (found nothing)


def skill_cache(tmp_path: Path) -> None:
    assert SkillCache(str(tmp_path / "cache")).root == (tmp_path / "cache").resolve()
    with pytest.raises(CacheLocationRefused, match="discovery path"):
        SkillCache(str(tmp_path / "agent" / "cache"), discovery_paths=[str(tmp_path / "agent")])


def approval_store(tmp_path: Path) -> None:
    path = tmp_path / "approvals.json"
    approval = Approval(SkillKey("docs", "skill://pdf/SKILL.md"), frozenset({("skill://pdf/SKILL.md", "sha256:0")}))
    JsonApprovalStore(str(path)).put(approval)
    assert JsonApprovalStore(str(path)).get(approval.key) == approval


def policy_file(tmp_path: Path) -> None:
    path = tmp_path / "scopes.toml"
    path.write_text('[[grant]]\nscope = "docs"\nskills = ["pdf"]\n', encoding="utf-8")
    assert PolicyFile.load(str(path)).path == str(path)


CASES: dict[str, Callable[[Path], None]] = {
    "FolderSource": folder_source,
    "FolderSource(digest_cache=)": folder_source_digest_cache,
    "FolderSource.update": folder_source_update,
    "SkillsExtension.from_paths": extension_from_paths,
    "GitSource": git_source,
    "PackageSource(path=)": package_source,
    "SkillCache": skill_cache,
    "JsonApprovalStore": approval_store,
    "PolicyFile.load": policy_file,
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_a_str_path_is_taken_where_a_path_is(case: Callable[[Path], None], tmp_path: Path) -> None:
    """skillwire choice (issue 20): `str` or `os.PathLike` wherever the public API takes a path, as `open` does."""
    case(tmp_path)
