"""`skillwire inspect` against real servers: the table as a real `python -m skillwire` process, the rest in-process.

Spec MUST exercised through `--verify`: a host "MUST verify the content against that entry's
digest and size" and compare SKILL.md frontmatter with the entry. skillwire choices: the table,
`--json`, and exit status 1 on any failure, naming the file.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support.cli import run_cli
from tests.support.servers import HttpServer, run_skillwire

RUN_TIMEOUT_S = 60.0
TAMPERED = f"{sys.executable} -m tests.support.hostile tampered"


def _inspect(*args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("inspect", *args)


def test_inspect_shows_the_server_the_extension_and_a_table(server: HttpServer) -> None:
    run = run_skillwire("inspect", server.url, timeout=RUN_TIMEOUT_S)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("server: skillwire (self-reported)")
    assert lines[1] == "extension: io.modelcontextprotocol/skills declared, with directoryRead"
    assert "5 skills:" in lines
    row = next(line for line in lines if "skill://pdf-processing/SKILL.md" in line)
    assert row.split()[:3] == ["pdf-processing", "skill://pdf-processing/SKILL.md", "3"]
    assert "sha256:" in row


def test_verify_passes_against_skillwires_own_server(server: HttpServer) -> None:
    run = _inspect(server.url, "--verify")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "FAIL" not in run.stdout
    assert "verified 10 files: all match their manifest" in run.stdout


def test_json_output(server: HttpServer) -> None:
    run = _inspect(server.url, "--json", "--verify")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert set(report) == {"version", "server", "extension", "skills", "problems", "complete", "verify"}
    assert report["extension"] == {"declared": True, "directoryRead": True}
    assert report["verify"] == {"checked": 10, "failures": [], "ok": True}
    for skill in report["skills"]:
        assert set(skill) == {"name", "uri", "files", "size", "digest", "dynamic"}
        assert skill["dynamic"] is False


def test_verify_fails_against_a_tampered_server_and_names_the_file() -> None:
    run = _inspect(TAMPERED, "--verify")
    assert run.returncode == 1, run.stdout + run.stderr
    fails = [line for line in run.stdout.splitlines() if line.startswith("FAIL")]
    assert len(fails) == 1
    assert fails[0].startswith("FAIL skill://refund-policy/SKILL.md: digest sha256:")
    assert "verified 1 file: 1 failed" in run.stdout


def test_an_unreachable_server_is_one_error_line() -> None:
    run = _inspect("http://127.0.0.1:9/mcp")
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert run.stderr.startswith("skillwire: error: cannot talk to http://127.0.0.1:9/mcp")
