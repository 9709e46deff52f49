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


def test_validate_refuses_a_file_name_with_control_characters_and_shows_it_escaped(tree: Path) -> None:
    """A file named with ESC and BEL in beta was listed though no read could name it; and its name must not reach
    the terminal raw (ESC ] 0; retitles the window)."""
    (tree / "beta" / "esc\x1b]0;owned\x07.md").write_bytes(b"e")
    done = run_skillwire("validate", str(tree), timeout=FREEZE_S)
    assert done.returncode == 1, done.stderr
    assert "0 skills ok, 2 refused" in done.stdout
    assert "[file-name-control]" in done.stdout
    assert "beta/esc\\x1b]0;owned\\x07.md" in done.stdout
    assert "rename it without control characters" in done.stdout
    assert "\x1b" not in done.stdout + done.stderr
    report = json.loads(run_skillwire("validate", str(tree), "--format", "json", timeout=FREEZE_S).stdout)
    [refused] = [r for r in report["refused"] if r["rule"] == "file-name-control"]
    assert refused["path"].endswith("beta/esc\\x1b]0;owned\\x07.md")
    assert refused["fix"] == "rename it without control characters (tab, newline, escape)"


def test_validate_refuses_a_skill_holding_a_file_whose_uri_is_too_long(tree: Path) -> None:
    """Six nested folders of 120 'é' each in beta: the deepest file's URI is over 4096 characters, which no read
    accepts, yet beta validated as servable."""
    deep = tree / "beta" / "/".join(["\u00e9" * 120] * 6)
    deep.mkdir(parents=True)
    (deep / "deep.md").write_bytes(b"d")
    done = run_skillwire("validate", str(tree), "--format", "json", timeout=FREEZE_S)
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    [refused] = [r for r in report["refused"] if r["rule"] == "uri-too-long"]
    assert refused["path"] == str(deep / "deep.md")
    length = len("skill://beta/" + "/".join(["%C3%A9" * 120] * 6) + "/deep.md")  # 4346
    assert f"{length} characters long, over the limit of 4096" in refused["message"]
    assert refused["fix"] == "shorten folder or file names"


def test_validate_passes_a_skill_whose_ignored_links_are_broken(tmp_path: Path) -> None:
    """A dangling `x.tmp` under a `*.tmp` ignore rule and a `.DS_Store` linking to itself refused their skill
    (link-dangles, unreadable), though both names are ignored."""
    skill = tmp_path / "skills" / "alpha"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: alpha\ndescription: Skill alpha\n---\n# alpha\n")
    (skill / ".skillwireignore").write_text("*.tmp\n")
    (skill / "x.tmp").symlink_to("no/such/target")
    (skill / ".DS_Store").symlink_to(".DS_Store")
    (skill / "kept.md").symlink_to("no/such/target")  # not ignored: still refuses, as before
    done = run_skillwire("validate", str(skill.parent), "--format", "json", timeout=FREEZE_S)
    assert [(r["rule"], r["path"].rsplit("/", 1)[-1]) for r in json.loads(done.stdout)["refused"]] == [
        ("link-dangles", "kept.md")
    ]
    (skill / "kept.md").unlink()
    done = run_skillwire("validate", str(skill.parent), timeout=FREEZE_S)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 skill ok" in done.stdout
