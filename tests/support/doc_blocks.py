"""The fenced blocks of the README and the documentation site (`docs/**/*.md`), and a sandbox to run them in.

    for block in all_blocks(): ...           # every ``` block, with its page, line, language and text
    block = find("docs/sources/git.md", "git init")   # the one block of that page holding that text

A block is an example when a reader would run or copy it: code (python, sh, json, toml, yaml, nginx, markdown, a
bare fence) or a `text` transcript holding a `$ ` command. Other `text` blocks show output (a refusal summary, a
benchmark table) and need no runner. MyST directives (```{toctree}, ```{include}, ...) are not blocks of either kind.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.support import forkserver
from tests.support.servers import REPO_ROOT

_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,})(?P<info>[^`\n]*)$")
EXAMPLE_LANGUAGES = frozenset({"python", "sh", "json", "toml", "yaml", "nginx", "markdown", ""})


@dataclass(frozen=True)
class Block:
    """One fenced block: `page` relative to the repository root, `line` of its opening fence (1-based)."""

    page: str
    line: int
    lang: str
    text: str

    @property
    def is_example(self) -> bool:
        if self.lang.startswith("{"):
            return False
        return self.lang in EXAMPLE_LANGUAGES or any(line.startswith("$ ") for line in self.text.splitlines())

    def __str__(self) -> str:
        return f"{self.page}:{self.line} ({self.lang or 'bare'} block)"


def pages() -> list[Path]:
    """README.md and every Markdown page of the site."""
    return [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").rglob("*.md"))]


def blocks_of(path: Path) -> list[Block]:
    """Every fenced block of one page, its text dedented by the fence's own indent (a block inside a list item)."""
    found: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    page = path.relative_to(REPO_ROOT).as_posix()
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        indent, fence = len(opening["indent"]), opening["fence"]
        body: list[str] = []
        j = i + 1
        while j < len(lines) and lines[j].strip() != fence:
            body.append(lines[j][indent:] if lines[j][:indent].strip() == "" else lines[j])
            j += 1
        found.append(Block(page, i + 1, opening["info"].strip().split(" ")[0], "".join(f"{b}\n" for b in body)))
        i = j + 1
    return found


def all_blocks() -> list[Block]:
    return [block for path in pages() for block in blocks_of(path)]


def find(page: str, needle: str) -> Block:
    """The one block of `page` whose text holds `needle` (a test claims a block by what it says, not where it is)."""
    matches = [b for b in blocks_of(REPO_ROOT / page) if needle in b.text]
    assert len(matches) == 1, f"{page}: {len(matches)} blocks hold {needle!r}, expected exactly one"
    return matches[0]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


# -- the sandbox: a folder like the repository root, where a reader runs the examples ------------------------------


@dataclass
class Sandbox:
    """A working folder holding a copy of examples/, a PATH whose `skillwire` is this checkout's (through the test
    fork server), a cache folder of its own, and the ports a page names (8000, 8001, ...) mapped to free ones."""

    root: Path
    env: dict[str, str]
    ports: dict[str, str] = field(default_factory=dict)
    background: list[subprocess.Popen[str]] = field(default_factory=list)

    def localize(self, text: str) -> str:
        """`text` with the page's ports replaced by this sandbox's."""
        for page_port, port in self.ports.items():
            text = text.replace(f"127.0.0.1:{page_port}", f"127.0.0.1:{port}")
        return text

    def run(
        self, command: str, *, stdin: str = "", timeout: float = 60.0, merged: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """One shell command line, as a reader types it, in the sandbox; `merged`: stderr comes in stdout, in the
        order it was written, as a terminal shows it."""
        return subprocess.run(
            ["bash", "-c", self.localize(command)],
            cwd=self.root,
            env=self.env,
            input=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if merged else subprocess.PIPE,
            text=True,
            timeout=timeout,
            check=False,
        )

    def start(self, command: str, *, ready: str = "listening on", timeout: float = 30.0) -> str:
        """A long-running command (a server, a `... &` line), left running until the sandbox closes; returns what it
        wrote up to the line holding `ready`."""
        process = subprocess.Popen(
            ["bash", "-c", f"exec {self.localize(command).removesuffix('&').strip()}"],
            cwd=self.root,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.background.append(process)
        assert process.stdout is not None
        seen: list[str] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            seen.append(line)
            if ready in line:
                return "".join(seen)
        raise AssertionError(f"`{command}` did not print {ready!r} within {timeout:.0f} s:\n{''.join(seen)}")


def _skillwire_shim(folder: Path) -> None:
    """`skillwire` on the sandbox's PATH: this checkout's command, started through the test fork server."""
    folder.mkdir()
    argv = " ".join(f"'{part}'" for part in forkserver.command(["-m", "skillwire"]))
    shim = folder / "skillwire"
    shim.write_text(f'#!/bin/sh\nexec {argv} "$@"\n', encoding="utf-8")
    shim.chmod(0o755)


@contextmanager
def sandbox(tmp_path: Path, *page_ports: str) -> Iterator[Sandbox]:
    """A sandbox in `tmp_path`; `page_ports` are the ports the page's commands name, each given a free one."""
    root = tmp_path / "checkout"
    root.mkdir()
    shutil.copytree(REPO_ROOT / "examples", root / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("src", "tools"):  # a relative PYTHONPATH=src still finds this checkout; tools/node for the pages
        (root / name).symlink_to(REPO_ROOT / name)
    _skillwire_shim(tmp_path / "bin")
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(tmp_path / "bin"), str(Path(sys.executable).parent), env.get("PATH", "")])
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    env["PYTHONUNBUFFERED"] = "1"  # stdout written at once, as to a terminal, so it interleaves with stderr as there
    box = Sandbox(root, env, {port: str(free_port()) for port in page_ports})
    try:
        yield box
    finally:
        for process in box.background:
            process.terminate()
        for process in box.background:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if process.stdout is not None:
                process.stdout.close()


# -- transcripts: `$ command` lines and the output shown under each -------------------------------------------------


@dataclass(frozen=True)
class Step:
    command: str
    shown: str  # the output the page shows under the command


def transcript(block: Block) -> list[Step]:
    steps: list[Step] = []
    for line in block.text.splitlines(keepends=True):
        if line.startswith("$ "):
            steps.append(Step(line[2:].rstrip("\n"), ""))
        else:
            assert steps, f"{block}: output before the first `$ ` command"
            steps[-1] = Step(steps[-1].command, steps[-1].shown + line)
    return steps


def matches(shown: str, actual: str) -> bool:
    """Whether `actual` is what the page shows: line for line, where a line `...` (at any indent) stands for any
    number of lines."""
    pattern = [r"(?:[^\n]*\n)*?" if line.strip() == "..." else re.escape(line) + r"\n" for line in shown.splitlines()]
    return re.fullmatch("".join(pattern), actual if actual.endswith("\n") or not actual else actual + "\n") is not None
