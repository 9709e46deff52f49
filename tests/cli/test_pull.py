"""`skillwire pull` (a skillwire choice built on the spec's verification MUSTs).

"hosts MUST NOT use the unverified content": pull verifies every file before writing any, so a
tampered skill leaves nothing on disk. A good skill round-trips byte for byte, with a provenance file.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.servers import EXAMPLE_SKILLS, HttpServer, run_skillwire

RUN_TIMEOUT_S = 60.0
TAMPERED = f"{sys.executable} -m tests.support.hostile tampered"


def _pull(*args: str) -> subprocess.CompletedProcess[str]:
    return run_skillwire("pull", *args, timeout=RUN_TIMEOUT_S)


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_pull_round_trips_a_skill_byte_for_byte(server: HttpServer, tmp_path: Path) -> None:
    dest = tmp_path / "code-review"
    run = _pull(server.url, "skill://code-review/SKILL.md", str(dest))
    assert run.returncode == 0, run.stderr
    pulled = _tree(dest)
    provenance = json.loads(pulled.pop(".skillwire-provenance.json"))
    assert pulled == _tree(EXAMPLE_SKILLS / "code-review")  # nested skill included: it is in the manifest
    assert provenance["server"] == server.url
    assert provenance["skill"] == "skill://code-review/SKILL.md"
    assert {f["path"] for f in provenance["files"]} == set(pulled)
    assert all(f["digest"].startswith("sha256:") for f in provenance["files"])
    assert provenance["pulledAt"]
    assert [p.name for p in tmp_path.iterdir()] == ["code-review"]  # no staging folder left


def test_pull_into_an_empty_existing_folder(server: HttpServer, tmp_path: Path) -> None:
    run = _pull(server.url, "skill://git-workflow/SKILL.md", str(tmp_path))
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "SKILL.md").read_bytes() == (EXAMPLE_SKILLS / "git-workflow" / "SKILL.md").read_bytes()


def test_a_tampered_skill_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    dest = tmp_path / "refund-policy"
    run = _pull(TAMPERED, "skill://refund-policy/SKILL.md", str(dest))
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert "verification failed, nothing written: skill://refund-policy/SKILL.md: digest" in run.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_non_empty_dest_is_refused(server: HttpServer, tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    run = _pull(server.url, "skill://git-workflow/SKILL.md", str(tmp_path))
    assert run.returncode == 1
    assert "is not empty" in run.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_an_agent_skill_folder_is_refused_without_force(server: HttpServer, tmp_path: Path) -> None:
    dest = tmp_path / ".claude" / "skills" / "git-workflow"
    run = _pull(server.url, "skill://git-workflow/SKILL.md", str(dest))
    assert run.returncode == 1
    assert "agent skill folder" in run.stderr
    assert not (tmp_path / ".claude").exists()
    run = _pull(server.url, "skill://git-workflow/SKILL.md", str(dest), "--force")
    assert run.returncode == 0, run.stderr
    assert (dest / "SKILL.md").is_file()


def test_an_unknown_skill_is_one_error_line(server: HttpServer, tmp_path: Path) -> None:
    run = _pull(server.url, "skill://nope/SKILL.md", str(tmp_path / "x"))
    assert run.returncode == 1
    assert run.stderr.count("\n") == 1
    assert "the server answered with an error" in run.stderr
    assert "skill://nope/SKILL.md" in run.stderr
