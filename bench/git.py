"""The git source beside the folder source on the same generated content: cold index, restart, one-file change.

python -m bench.git --skills 10000

The content (bench/generate.py) is written to a folder and committed, as it is, into a repository in that folder
(made with the `git` command, as a person would). Each measurement runs in a fresh subprocess; the page cache is
warm for all of them. Modes:

  folder-cold   FolderSource.scan() of the folder, no digest cache
  git-cold      GitSource(repo, "main").scan(), no digest cache: every blob read and hashed
  git-restart   the same with a blob digest cache written by an earlier scan: no blob hashed, SKILL.md files read
  folder-edit   scan(), append to one file, update([that file]) (the update is timed)
  git-commit    scan(), append to one file and commit it, scan() again (the second scan is timed)

`hashed` is the number of blobs the timed part hashed (GitSource.digests.hashed): the commit costs one.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench.generate import generate
from bench.index import arguments, peak_rss, run

LABELS = {
    "folder-cold": "folder: cold scan (no cache)",
    "git-cold": "git: cold scan (no cache)",
    "git-restart": "git: restart with the blob digest cache",
    "folder-edit": "folder: one file edited, update([path])",
    "git-commit": "git: one-file commit, scan of the new commit",
}

_GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "-c", "gc.auto=0"]


def _git(root: Path, *args: str) -> None:
    subprocess.run([*_GIT, *args], cwd=root, check=True, capture_output=True)


def _child(mode: str, root: str, cache: str) -> None:
    """One measurement in this (fresh) process; prints JSON."""
    from skillwire.sources.folder.source import FolderSource
    from skillwire.sources.git.source import GitSource

    hashed = 0
    start = time.perf_counter()
    if mode == "folder-cold":
        files = FolderSource([root]).scan().file_count
    elif mode == "folder-edit":
        folder = FolderSource([root])
        folder.scan()
        target = next(Path(root).rglob("doc-0.md"))
        start = time.perf_counter()
        with target.open("ab") as fh:
            fh.write(b"edited\n")
        files = folder.update([str(target)], 1).file_count
    elif mode in ("git-cold", "git-restart"):
        source = GitSource(root, "main", digest_cache=cache if mode == "git-restart" else None)
        files = source.scan().file_count
        hashed = source.digests.hashed
    else:
        source = GitSource(root, "main")
        source.scan()
        target = next(Path(root).rglob("doc-1.md"))
        with target.open("ab") as fh:
            fh.write(b"edited\n")
        _git(Path(root), "commit", "-q", "-m", "edit one file", "--", str(target.relative_to(root)))
        before = source.digests.hashed
        start = time.perf_counter()
        files = source.scan(1).file_count
        hashed = source.digests.hashed - before
    elapsed = time.perf_counter() - start
    print(json.dumps({"s": elapsed, "rss": peak_rss(), "files": files, "hashed": hashed}))


def main() -> None:
    args = arguments(_child, __doc__)
    if args is None:
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp, "skills")
        cache = Path(tmp, "blobs.json")
        size = generate(root, skills=args.skills, files=args.files)
        _git(root, "init", "-q", "-b", "main")
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", "generated skills")
        from skillwire.sources.git.source import GitSource  # here: a child measures its own import

        GitSource(root, "main", digest_cache=cache).scan()  # writes the blob digest cache
        results: dict[str, list[dict[str, float]]] = {m: [] for m in LABELS}
        for _ in range(args.runs):
            for mode, found in results.items():
                found.append(run(mode, root, cache, module="bench.git"))
    files = int(results["folder-cold"][0]["files"])
    print(f"catalog: {args.skills} skills x {args.files} files = {files} files, {size:,} bytes (page cache warm)")
    print("each measurement is a fresh process; best and median of", args.runs)
    print(f"{'measure':<48}{'best s':>9}{'median s':>10}{'hashed':>8}{'peak RSS MB':>13}")
    for mode, label in LABELS.items():
        times = [r["s"] for r in results[mode]]
        hashed = max(int(r["hashed"]) for r in results[mode])
        rss = max(r["rss"] for r in results[mode])
        shown = str(hashed) if mode.startswith("git") else "-"
        print(f"{label:<48}{min(times):>9.3f}{statistics.median(times):>10.3f}{shown:>8}{rss / 1e6:>13.1f}")


if __name__ == "__main__":
    main()
