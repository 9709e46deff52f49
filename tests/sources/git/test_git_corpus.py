"""Real-data check (skipped without `../shared/corpus`): the two corpus collections committed into a fresh repository.

Issue 12's acceptance: with some files stored with CRLF line ends, the git source's catalog equals the folder
catalog of a checkout made with `core.autocrlf=false`, and keeps the stored bytes when the checkout is made with
`core.autocrlf=true` (the folder catalog then differs: it serves the converted bytes of the checkout).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skillwire.core.catalog import Catalog
from skillwire.core.digest import sha256_digest
from skillwire.core.manifest import SkillFile
from skillwire.sources.folder.source import FolderSource
from skillwire.sources.git.source import GitSource
from tests.support.git_repos import git, git_bytes, git_init
from tests.support.servers import REPO_ROOT

CORPUS = REPO_ROOT.parent / "shared" / "corpus"
CRLF_EVERY = 7  # every 7th text file of a skill is stored with CRLF line ends

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="real-data check: ../shared/corpus is not here")


def _blobs(repo: Path, ids: list[str]) -> list[bytes]:
    """The contents of blobs `ids`, read with one `git cat-file --batch`."""
    out = git_bytes(repo, "cat-file", "--batch", stdin="".join(i + "\n" for i in ids).encode())
    found = []
    at = 0
    for _ in ids:
        header_end = out.index(b"\n", at)
        size = int(out[at:header_end].split()[2])
        found.append(out[header_end + 1 : header_end + 1 + size])
        at = header_end + 1 + size + 1
    return found


def _shape(catalog: Catalog, prefix: str) -> tuple[dict[str, Any], set[tuple[str, str]]]:
    skills = {
        s.uri: (s.frontmatter, [(f.rel_path, f.digest, f.size, f.mime_type) for f in s.files]) for s in catalog.skills
    }
    refusals = {(r.path.removeprefix(prefix), r.rule) for r in catalog.refusals}
    return skills, refusals


@pytest.fixture(scope="module")
def corpus_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, bytes]]:
    """A repository holding the corpus as one commit, then some of its skill files rewritten with CRLF line ends."""
    repo = git_init(tmp_path_factory.mktemp("corpus") / "repo")
    git(repo, "--work-tree", str(CORPUS), "add", "-A", ".")
    git(repo, "commit", "-q", "-m", "the corpus as exported")
    staged = [line.split(None, 3) for line in git(repo, "ls-files", "-s", "-z").split("\0") if line]
    chosen = [(blob, path) for _, blob, _, path in staged if path.endswith((".md", ".py"))][::CRLF_EVERY]
    contents = _blobs(repo, [blob for blob, _ in chosen])
    crlf: dict[str, bytes] = {}
    for (_, path), data in zip(chosen, contents, strict=True):
        if b"\r" not in data and b"\0" not in data and b"\n" in data:
            crlf[path] = data.replace(b"\n", b"\r\n")
    rewritten = tmp_path_factory.mktemp("crlf")
    files = [rewritten / str(i) for i in range(len(crlf))]
    for file, data in zip(files, crlf.values(), strict=True):
        file.write_bytes(data)
    blobs = git(repo, "hash-object", "-w", "--no-filters", "--stdin-paths", stdin="\n".join(map(str, files)).encode())
    index = "".join(f"100644 {blob}\t{path}\n" for blob, path in zip(blobs.split(), crlf, strict=True))
    git(repo, "update-index", "--index-info", stdin=index.encode())
    git(repo, "commit", "-q", "-m", "some files with CRLF line ends")
    return repo, crlf


def test_git_catalog_equals_the_folder_catalog_of_an_autocrlf_false_checkout(
    corpus_repo: tuple[Path, dict[str, bytes]], tmp_path: Path
) -> None:
    """Issue 12 acceptance: same content, same skills, refusals, digests and types, from the commit or a checkout."""
    repo, crlf = corpus_repo
    assert len(crlf) > 50
    checkout = tmp_path / "checkout"
    git(tmp_path, "clone", "-q", "-c", "core.autocrlf=false", str(repo), str(checkout))
    from_git = GitSource(repo, "main").scan()
    from_folder = FolderSource([checkout]).scan()
    assert len(from_git.skills) > 200
    assert _shape(from_git, f"{repo}@main:") == _shape(from_folder, f"{checkout}/")


def test_git_catalog_keeps_the_stored_bytes_when_the_checkout_converts_them(
    corpus_repo: tuple[Path, dict[str, bytes]], tmp_path: Path
) -> None:
    """Issue 12 acceptance: with core.autocrlf=true a checkout's bytes (and its folder catalog) differ; git's do not."""
    repo, crlf = corpus_repo
    checkout = tmp_path / "checkout"
    git(tmp_path, "clone", "-q", "-c", "core.autocrlf=true", str(repo), str(checkout))
    from_git = _by_path(GitSource(repo, "main").scan())
    from_folder = _by_path(FolderSource([checkout]).scan())
    assert set(from_git) == set(from_folder)
    assert from_git != from_folder
    lf = next(p for p in sorted(from_git) if p.endswith("/SKILL.md") and p not in crlf)
    stored = git_bytes(repo, "cat-file", "blob", f"HEAD:{lf}")
    converted = (checkout / lf).read_bytes()
    assert stored.replace(b"\n", b"\r\n") == converted  # the checkout's conversion, not the commit's bytes
    assert from_git[lf].digest == sha256_digest(stored)
    assert from_folder[lf].digest == sha256_digest(converted)
    kept = [p for p in crlf if p in from_git]
    assert kept
    source = GitSource(repo, "main")
    catalog = source.scan()
    for path in kept[:5]:
        assert from_git[path].digest == sha256_digest(crlf[path])
        served = catalog.file(from_git[path].uri)
        assert served is not None
        assert served.content.read(len(crlf[path])) == crlf[path]


def _by_path(catalog: Catalog) -> dict[str, SkillFile]:
    """Every served file by its path in the repository (or checkout)."""
    return {"/".join(s.skill_path) + "/" + f.rel_path: f for s in catalog.skills for f in s.files}
