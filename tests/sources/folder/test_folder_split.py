"""A cold scan walks on every core (skillwire choice, issue 13): folders handed to worker processes are walked,
hashed and their skills built exactly as the serial walk and index do them: the same skills, refusals (in order),
digests, empty branches, links, loops and ignore rules; a worker that dies or answers nonsense loses nothing."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from skillwire.core.catalog import Refusal
from skillwire.sources import worker_pool
from skillwire.sources.folder import hash as folder_hash
from skillwire.sources.folder import split as folder_split
from skillwire.sources.folder.records import Built, RootState
from skillwire.sources.folder.source import FolderSource
from tests.sources.folder.test_folder_pool import mixed_tree
from tests.sources.folder.test_incremental import picture, write_skill


def split_tree(root: Path, outside: Path) -> None:
    """Folders that are handed off (team/ lists eight skill folders), with every case the walk tells apart inside
    and above them."""
    mixed_tree(root)
    (root / "team/.skillwireignore").write_text("*.tmp\nskip-me/\n")  # rules from above a handed-off folder
    (root / "team/s2/x.tmp").write_text("ignored")
    (root / "team/s2/.skillwireignore").write_text("*.log\n")  # rules of a skill inside a handed-off folder
    (root / "team/s2/x.log").write_text("ignored")
    (root / "team/s3/skip-me").mkdir()
    (root / "team/s3/skip-me/gone.md").write_text("ignored")
    (root / "team/s3/only-ignored").mkdir()  # an empty branch: it holds only ignored files
    (root / "team/s3/only-ignored/x.tmp").write_text("ignored")
    os.symlink(root / "team/s1", root / "team/s1-again")  # a linked skill folder, followed (inside the root)
    os.symlink(root / "team", root / "team/s4/loop")  # link-loop
    os.symlink(outside, root / "team/s2/escape.md")  # link-escapes
    os.mkfifo(root / "team/s5/pipe")  # not-a-file, never opened
    with open(os.fsencode(root / "team/s0") + b"/bad\xff.md", "wb"):  # file-name-encoding
        pass
    write_skill(root / "team/s0/inner", description="Nested")  # a nested skill inside a handed-off folder
    # A skill whose refs/ lists FANOUT folders: handed off inside the skill, bad paths found on both sides.
    big = root / "alone/big"
    write_skill(big, description="Big")
    for name in ("r1", "r2", "r3", "r4", "r5"):
        (big / "refs" / name).mkdir(parents=True)
        (big / "refs" / name / "a.md").write_text(name)
        os.symlink(root / "nowhere", big / "refs" / name / "dangling")  # link-dangles, five times
    for n in range(100):  # until the walk meets one of this folder's own bad paths after the handed-off ones
        os.symlink(root / "nowhere", big / f"dangling-{n}")
        if [e.name for e in os.scandir(big)][-1].startswith("dangling"):
            break
    # Folders below which only handed-off empty folders lie; one no URI can name.
    for name in ("e1", "e2", "e3/deeper", "e4", "ctl\x01x"):
        (root / "hollow/only" / name).mkdir(parents=True)
    (root / "loose").mkdir()
    os.symlink(root / "nowhere", root / "loose/dangling")  # outside every skill: a skipped path
    for name in "abcde":
        (root / "loose" / name).mkdir()


def serial(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(folder_split, "FANOUT", 10**9)  # no folder is handed off: the serial walk and index


def parallel(monkeypatch: pytest.MonkeyPatch, sent: list[object]) -> None:
    """Every folder listing five folders hands them off (the root lists four: it is walked here), to two worker
    processes from the first file on."""
    monkeypatch.setattr(folder_split, "FANOUT", 5)
    monkeypatch.setattr(folder_split, "PARALLEL_FROM", 0)
    monkeypatch.setattr(worker_pool, "cores", lambda: 2)
    send = worker_pool._Worker.send

    def counted(worker: worker_pool._Worker[Any], chunk: Any, task: worker_pool.Task) -> None:
        sent.append(chunk)
        send(worker, chunk, task)

    monkeypatch.setattr(worker_pool._Worker, "send", counted)


def inside(source: FolderSource) -> dict[str, Any]:
    """What the source keeps of its one root: records, bad paths in order, folders, skills and their results."""
    [state] = source._states
    assert isinstance(state, RootState)

    def result(r: Built | Refusal) -> object:
        if isinstance(r, Refusal):
            return r
        return (r.skill.to_entry(), r.skill.folders, r.moved, r.display, r.real_dir, r.rules, r.signature)

    def frontmatter(fm: object) -> object:
        return (type(fm).__name__, str(fm), fm.rule, fm.path) if isinstance(fm, Exception) else fm  # type: ignore[attr-defined]

    return {
        "files": [
            (f.rel, f.location, f.size, f.stamp, f.digest, f.mime, frontmatter(f.frontmatter), f.ident)
            for f in state.files
        ],
        "rels": [f.rel for f in state.files],
        "bad_paths": state.bad_paths,
        "folders": state.folders,
        "skill_dirs": state.skill_dirs,
        "rules": state.rules,
        "results": {d: result(r) for d, r in state.results.items()},
        "linked": state.linked,
    }


def scanned(root: Path, **options: Any) -> tuple[dict[str, Any], dict[str, Any], list[Refusal]]:
    source = FolderSource([root], **options)
    catalog = source.scan()
    return picture(catalog), inside(source), list(catalog.refusals)


def serial_split_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Any]:
    """`split_tree` made under `tmp_path`, and what the serial scan finds there."""
    root = tmp_path / "skills"
    (tmp_path / "outside.md").write_text("secret")
    split_tree(root, tmp_path / "outside.md")
    with monkeypatch.context() as patch:
        serial(patch)
        return root, scanned(root)


def test_a_cold_scan_walking_in_worker_processes_equals_the_serial_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same skills, manifests, directories, refusals in the same order, records, bad paths in walk order, empty
    branches, rules and links, whether folders were walked here or by two worker processes."""
    root, expected = serial_split_tree(tmp_path, monkeypatch)
    sent: list[object] = []
    parallel(monkeypatch, sent)
    assert scanned(root) == expected
    assert len(sent) > 3  # worker processes walked folders
    shown, state, _ = expected
    rules = {rule for _, rule, _ in shown["refusals"]}
    assert rules >= {"link-loop", "link-escapes", "not-a-file", "file-name-encoding", "link-dangles", "yaml-syntax"}
    assert {"hollow/only/e1", "hollow/only/e3/deeper", "loose/a", "team/s3/only-ignored"} <= set(state["folders"])
    assert "hollow/only/ctl\x01x" not in state["folders"]
    assert state["linked"]
    assert "team/s0/inner" in state["skill_dirs"]


def test_project_ignores_and_a_root_that_is_a_skill_walk_alike_in_worker_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`.gitignore` rules and virtualenvs above handed-off folders, and a root skill holding handed-off folders
    (its files hashed after, as the serial path does), give the serial result."""
    project = tmp_path / "project"
    mixed_tree(project)
    (project / ".gitignore").write_text("team/s4/\n")
    (project / "team/venv").mkdir()
    (project / "team/venv/pyvenv.cfg").write_text("home = /usr\n")
    write_skill(project / "team/venv/lib/skill")
    rooted = tmp_path / "rooted"
    write_skill(rooted, description="Root")
    for name in "abcde":
        (rooted / "refs" / name).mkdir(parents=True)
        (rooted / "refs" / name / "notes.md").write_text(name * 10)
    with monkeypatch.context() as patch:
        serial(patch)
        expected = [scanned(project, project_ignores=True), scanned(rooted)]
    sent: list[object] = []
    parallel(monkeypatch, sent)
    assert [scanned(project, project_ignores=True), scanned(rooted)] == expected
    assert sent
    assert "skill://team/s4/SKILL.md" not in str(expected[0][0]["skills"])
    assert [s["uri"] for s in expected[1][0]["skills"]] == ["skill://rooted/SKILL.md"]
    assert len(expected[1][0]["skills"][0]["resources"]) == 6  # the files below the handed-off folders too


def test_folders_a_dead_worker_had_are_walked_by_the_scan_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Workers that end at once (here `false` instead of Python) cost nothing but time."""
    root, expected = serial_split_tree(tmp_path, monkeypatch)
    sent: list[object] = []
    parallel(monkeypatch, sent)
    monkeypatch.setattr(sys, "executable", "/bin/false")
    assert scanned(root) == expected
    assert sent


def test_a_worker_answering_nonsense_has_its_folders_walked_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A worker that answers every task with something else (a wrong shape, wrong types) is not trusted: what it
    had is walked by the scan itself, and the catalog is the serial one."""
    root, expected = serial_split_tree(tmp_path, monkeypatch)
    liar = tmp_path / "liar"
    liar.write_text(
        f"#!{sys.executable}\n"
        "import pickle, sys\n"
        "tasks, answers = sys.stdin.buffer, sys.stdout.buffer\n"
        "lies = [[('x',) * 15], [], 'nonsense', [tuple([[1]] * 15)]]\n"
        "n = 0\n"
        "while True:\n"
        "    try:\n"
        "        pickle.load(tasks)\n"
        "    except EOFError:\n"
        "        break\n"
        "    pickle.dump(lies[n % len(lies)], answers)\n"
        "    answers.flush()\n"
        "    n += 1\n"
    )
    liar.chmod(0o755)
    sent: list[object] = []
    parallel(monkeypatch, sent)
    monkeypatch.setattr(sys, "executable", str(liar))
    assert scanned(root) == expected
    assert len(sent) > 3
    assert "answered what cannot be used" in caplog.text


def test_files_removed_between_a_handed_off_walk_and_its_read_are_just_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file renamed away after the walk of its handed-off folder listed it costs its skill nothing (a skill
    whose SKILL.md went is no skill), as in the serial scan; nothing is left of them in the index."""
    root = tmp_path / "root"
    for name in "abcde":
        write_skill(root / "team" / name)
    (root / "team/b/notes.md").write_text("going\n")
    monkeypatch.setattr(folder_split, "FANOUT", 5)
    read = folder_hash.hash_file

    def remove_first(*args: Any) -> OSError | None:
        if (root / "team/c/SKILL.md").exists():
            (root / "team/b/notes.md").unlink()
            (root / "team/c/SKILL.md").unlink()
        return read(*args)

    monkeypatch.setattr(folder_split, "hash_file", remove_first)
    source = FolderSource([root])
    catalog = source.scan()
    assert not (root / "team/c/SKILL.md").exists()
    assert [s.uri for s in catalog.skills] == [f"skill://team/{n}/SKILL.md" for n in "abde"]
    assert catalog.refusals == ()
    monkeypatch.setattr(folder_split, "FANOUT", 10**9)
    assert picture(catalog) == picture(FolderSource([root]).scan())
    assert [f[0] for f in inside(source)["files"]] == [f"team/{n}/SKILL.md" for n in "abde"]


def test_progress_of_a_scan_on_every_core_ends_with_every_file_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The progress callback hears of the files read in worker processes, and its last call says all are done."""
    root, _ = serial_split_tree(tmp_path, monkeypatch)
    parallel(monkeypatch, [])
    calls: list[tuple[int, int]] = []
    FolderSource([root], progress=lambda done, total: calls.append((done, total))).scan()
    assert len(calls) > 3
    done, total = calls[-1]
    assert done == total >= 30
    assert all(d <= t for d, t in calls)
