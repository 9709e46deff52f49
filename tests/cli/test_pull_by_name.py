"""`skillwire pull SERVER NAME DEST`: a skill named as people name it, found in the server's listing (issue 11).

skillwire choices: the name is the frontmatter `name` of a listed skill; one match is pulled as its URI would be;
two skills with the name at different paths (legal in the spec) is an error listing both, never a guess; an
unknown name suggests the closest listed names. Real servers: the module's HTTP server, and `skillwire serve`
started over stdio by the command itself.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from skillwire.cli.main import main
from tests.support.servers import EXAMPLE_SKILLS, HttpServer, serve_command
from tests.support.skills import write_skill


def test_pull_by_name_pulls_the_one_skill_with_that_name(
    server: HttpServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`pull URL git-workflow DEST` needed `skill://git-workflow/SKILL.md`; now the name is enough."""
    dest = tmp_path / "git"
    assert main(["pull", server.url, "git-workflow", str(dest)]) == 0
    assert capsys.readouterr().out.startswith("pulled skill://git-workflow/SKILL.md (")
    assert (dest / "SKILL.md").read_bytes() == (EXAMPLE_SKILLS / "git-workflow" / "SKILL.md").read_bytes()
    assert json.loads((dest / ".skillwire-provenance.json").read_text())["skill"] == "skill://git-workflow/SKILL.md"


def test_an_ambiguous_name_is_an_error_listing_every_candidate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two skills named `pdf` (at acme/pdf and globex/pdf): nothing is written, both URIs are listed."""
    write_skill(tmp_path / "skills", "acme/pdf")
    write_skill(tmp_path / "skills", "globex/pdf")
    dest = tmp_path / "dest"
    command = shlex.join(serve_command([tmp_path / "skills"]))
    assert main(["pull", command, "pdf", str(dest)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "skillwire: error: 2 skills are named 'pdf'; pull one by its URI:"
    assert err[1:] == ["  skill://acme/pdf/SKILL.md", "  skill://globex/pdf/SKILL.md"]
    assert not dest.exists()


@pytest.mark.parametrize(
    ("typed", "suggested"),
    [("git-workfow", "git-workflow"), ("pdf-processor", "pdf-processing"), ("refund", "refunds")],
)
def test_an_unknown_name_suggests_close_matches(
    server: HttpServer, typed: str, suggested: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A typo names the skills it may have meant, and nothing is written."""
    assert main(["pull", server.url, typed, str(tmp_path / "dest")]) == 1
    line = capsys.readouterr().err.strip()
    assert line.startswith(f"skillwire: error: no skill named '{typed}' on this server; did you mean {suggested}")
    assert not (tmp_path / "dest").exists()


def test_a_name_like_nothing_listed_says_how_to_list(
    server: HttpServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No close name: the error says where the names are, rather than guessing."""
    assert main(["pull", server.url, "zzzz", str(tmp_path / "dest")]) == 1
    assert "no skill named 'zzzz' on this server (`skillwire inspect` lists them)" in capsys.readouterr().err
