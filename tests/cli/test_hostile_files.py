"""`skillwire validate` and `skillwire serve` over hostile files, as real subprocesses writing to real pipes.

skillwire choices (issue 9): a file whose name is not UTF-8 is refused with rule `file-name-encoding`, shown
escaped (`bad\\xff.md`) in text and JSON alike; a FIFO named `.skillwireignore` is reported, never read.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.servers import http_server, run_skillwire

FREEZE_S = 20.0  # a hang runs into this; an answer takes a second or two
BAD_NAME = b"bad\xff.md"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """Skills `alpha` (holding a file whose name is not UTF-8) and `beta` (clean)."""
    root = tmp_path / "skills"
    for name in ("alpha", "beta"):
        (root / name).mkdir(parents=True)
        (root / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Skill {name}\n---\n# {name}\n")
    open(os.fsencode(root / "alpha") + b"/" + BAD_NAME, "wb").close()
    return root


def test_validate_text_refuses_a_name_that_is_not_utf8_and_shows_it_escaped(tree: Path) -> None:
    """`validate` crashed with UnicodeEncodeError on a file named bad\\xff.md."""
    done = run_skillwire("validate", str(tree), timeout=FREEZE_S)
    assert done.returncode == 1, done.stderr
    assert "1 skill ok, 1 refused" in done.stdout
    assert "[file-name-encoding]" in done.stdout
    assert "alpha/bad\\xff.md" in done.stdout
    assert "rename it to valid UTF-8" in done.stdout
    assert "Traceback" not in done.stderr
    assert "error" not in done.stderr


def test_validate_json_refuses_a_name_that_is_not_utf8_and_shows_it_escaped(tree: Path) -> None:
    """`validate --format json` crashed on the same file: the report must stay valid UTF-8 JSON."""
    open(os.fsencode(tree / "beta") + b"/cache\xfe.pyc", "wb").close()  # ignored, so listed as not served
    done = run_skillwire("validate", str(tree), "--format", "json", timeout=FREEZE_S)
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert [s["uri"] for s in report["skills"]] == ["skill://beta/SKILL.md"]
    [refused] = report["refused"]
    assert refused["rule"] == "file-name-encoding"
    assert refused["path"].endswith("alpha/bad\\xff.md")
    assert "bad\\xff.md" in refused["message"]
    assert refused["fix"] == "rename it to valid UTF-8"
    assert [w["path"].rsplit("/", 1)[-1] for w in report["warnings"] if w["rule"] == "not-served"] == ["cache\\xfe.pyc"]


def test_a_fifo_named_skillwireignore_does_not_hang_validate(tree: Path) -> None:
    """A FIFO named .skillwireignore hung `validate` at start (the ignore file was opened for reading)."""
    os.mkfifo(tree / "beta" / ".skillwireignore")
    done = run_skillwire("validate", str(tree), "--format", "json", timeout=FREEZE_S)
    report = json.loads(done.stdout)
    found = [(r["rule"], r["skill"]) for r in report["refused"] if r["path"].endswith("beta/.skillwireignore")]
    assert found == [("not-a-file", True)]  # the skill whose ignore file cannot be read is refused, not hung on


def test_a_fifo_named_skillwireignore_does_not_hang_serve(tmp_path: Path) -> None:
    """The same FIFO, at the root, hung `skillwire serve` at start: it must start, report it and serve."""
    root = tmp_path / "skills"
    (root / "alpha").mkdir(parents=True)
    (root / "alpha" / "SKILL.md").write_text("---\nname: alpha\ndescription: Skill alpha\n---\n")
    os.mkfifo(root / ".skillwireignore")
    with http_server([root], timeout=FREEZE_S) as server:
        assert "serving 1 skill" in server.stderr
        assert ".skillwireignore" in server.stderr
        assert "not a regular file" in server.stderr
        server.assert_alive()
