"""Hashing on every core (skillwire choice, issue 13): worker processes fill in exactly what the serial
`hash_file` does, and a scan that uses them publishes the same catalog as one that does not."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from skillwire.sources import worker_pool
from skillwire.sources.folder import pool as folder_pool
from skillwire.sources.folder.pool import hash_files
from skillwire.sources.folder.records import FileRecord
from skillwire.sources.folder.source import FolderSource
from tests.sources.folder.test_incremental import picture, write_skill


def mixed_tree(root: Path) -> None:
    """Skills with every kind of file the hashing tells apart: text, binary, empty, over a read chunk (1 MiB),
    a SKILL.md that parses and ones that do not."""
    for i in range(6):
        write_skill(root / f"team/s{i}", description=f"Skill {i}")
        (root / f"team/s{i}/notes.md").write_text(f"note {i}\n" * i)
        (root / f"team/s{i}/blob.bin").write_bytes(bytes(range(256)) * (i + 1))
        (root / f"team/s{i}/empty.txt").write_bytes(b"")
    (root / "team/s0/big.dat").write_bytes(b"\x00\x01" * (700 * 1024))
    (root / "team/bad").mkdir()
    (root / "team/bad/SKILL.md").write_text("---\nname: [unclosed\n---\n")
    (root / "team/nofm").mkdir()
    (root / "team/nofm/SKILL.md").write_text("no frontmatter here\n")


def jobs_of(root: Path) -> list[tuple[FileRecord, str]]:
    real = os.path.realpath(root)
    paths = sorted(str(p) for p in Path(real).rglob("*") if p.is_file())
    jobs = [(FileRecord(os.path.relpath(p, real), None), p) for p in paths]
    jobs.append((FileRecord("team/s1/gone.md", None), real + "/team/s1/gone.md"))  # listed, then removed
    return jobs


def fields(rec: FileRecord) -> tuple[object, ...]:
    fm = rec.frontmatter
    shown = (type(fm).__name__, fm.message, fm.rule, fm.path, fm.line) if isinstance(fm, Exception) else fm
    return (rec.rel, rec.size, rec.stamp, rec.digest, rec.mime, shown, rec.ident)


def test_worker_processes_hash_every_file_as_the_serial_path_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sizes, stamps, digests, MIME types, parsed frontmatter, frontmatter errors and read errors are equal."""
    mixed_tree(tmp_path)
    monkeypatch.setattr(folder_pool, "CHUNK", 3)  # many chunks: some hashed by the worker, some here
    real = os.path.realpath(tmp_path)
    serial, parallel = jobs_of(tmp_path), jobs_of(tmp_path)
    serial_errors = hash_files(serial, real, workers=0)
    done: list[int] = []
    parallel_errors = hash_files(parallel, real, done.append, workers=1)
    assert [fields(r) for r, _ in parallel] == [fields(r) for r, _ in serial]
    assert any(isinstance(r.frontmatter, Exception) for r, _ in parallel)  # the error case was crossed too
    assert sum(done) == len(parallel)

    def shown(errors: dict[int, OSError], jobs: list[tuple[FileRecord, str]]) -> list[tuple[str, str, int | None]]:
        return [(r.rel, type(errors[id(r)]).__name__, errors[id(r)].errno) for r, _ in jobs if id(r) in errors]

    assert (
        shown(parallel_errors, parallel)
        == shown(serial_errors, serial)
        == [("team/s1/gone.md", "FileNotFoundError", 2)]
    )


def test_a_rescan_hashing_in_worker_processes_publishes_the_serial_catalog(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same skills, manifests, MIME types, directories and refusals, whichever path hashed the files a rescan
    finds new (a cold scan walks and hashes on every core its own way: `test_folder_split`)."""
    source = FolderSource([tmp_path])
    source.scan()  # nothing there yet: every file is new to the rescan, read and hashed
    mixed_tree(tmp_path)
    serial = picture(FolderSource([tmp_path]).scan())
    monkeypatch.setattr(folder_pool, "CHUNK", 4)
    monkeypatch.setattr(worker_pool, "workers_for", lambda items: 1)
    applied: list[int] = []
    apply = folder_pool._apply

    def counted(chunk: Sequence[folder_pool.Job], done: list[Any], errors: dict[int, OSError]) -> None:
        applied.append(len(chunk))
        apply(chunk, done, errors)

    monkeypatch.setattr(folder_pool, "_apply", counted)
    assert picture(source.scan(1)) == serial
    assert applied  # a worker process hashed some of the files
    assert {rule for _, rule, _ in serial["refusals"]} >= {"yaml-syntax", "frontmatter-missing"}


def test_files_a_dead_worker_leaves_are_hashed_by_the_scan_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker that ends at once (here `false` instead of Python) costs nothing but time: the records are filled
    in exactly as the serial path fills them."""
    mixed_tree(tmp_path)
    monkeypatch.setattr(folder_pool, "CHUNK", 3)
    real = os.path.realpath(tmp_path)
    serial, parallel = jobs_of(tmp_path), jobs_of(tmp_path)
    hash_files(serial, real, workers=0)
    monkeypatch.setattr(sys, "executable", shutil.which("false"))
    hash_files(parallel, real, workers=2)
    assert [fields(r) for r, _ in parallel] == [fields(r) for r, _ in serial]
