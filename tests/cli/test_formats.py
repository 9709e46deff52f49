"""One `--format text|json|github` on every command that reports, and duplicate names warned about (issue 11).

skillwire choices (the CLI is ours). `github` prints GitHub Actions workflow commands escaped as the runner
unescapes them (actions/toolkit `command.ts`: `%`, CR, LF in the message; also `:` and `,` in properties) and
terminal safe. `inspect --json` stays as a deprecated alias of `--format json`. Two skills with one name in one
listing are legal (the spec tells skills apart by path) but a host keying by name sees one: serve and validate warn.
Argument handling and reports run in-process; a real server only where the report is about one.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from skillwire.cli.catalog_warnings import FolderRoots, catalog_warnings
from skillwire.cli.formats import Annotation, github_command
from skillwire.cli.main import main
from skillwire.cli.serve import print_summary
from skillwire.sources.folder.source import FolderSource
from tests.support.doc_blocks import find, transcript
from tests.support.servers import HttpServer, run_skillwire
from tests.support.skills import write_skill

TAMPERED = f"{sys.executable} -m tests.support.hostile tampered"
FREEZE_S = 60.0


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exited:
        code = int(exited.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


# -- the format itself -------------------------------------------------------------------------------------------------


def test_github_command_escapes_values_as_the_runner_unescapes_them() -> None:
    """A file name holding `,` or `:` cannot end its property or add one; CR/LF cannot start a second command."""
    annotation = Annotation(
        "error", "50% done\r\n::warning::forged", title="rule:x", file="a,line=9:b%.md", line=3, col=7
    )
    assert github_command(annotation) == (
        "::error file=a%2Cline=9%3Ab%25.md,line=3,col=7,title=rule%3Ax::50%25 done%0D%0A::warning::forged"
    )


def test_github_command_is_terminal_safe() -> None:
    """Escape sequences in a message (a file name, a server's text) are shown, never sent to the terminal."""
    line = github_command(Annotation("warning", "name \x1b]0;owned\x07 \u202egnp.exe \u2028x", file="s\x1b[2J.md"))
    assert line == "::warning file=s\\x1b[2J.md::name \\x1b]0;owned\\x07 \\u202egnp.exe \\u2028x"


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "."],
        ["serve", "."],
        ["inspect", "http://127.0.0.1:9/mcp"],
        ["host", "--server", "a=http://127.0.0.1:9/mcp"],
        ["pull", "http://127.0.0.1:9/mcp", "x", "dest"],
    ],
)
def test_every_reporting_command_takes_one_format_option(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """The same three choices everywhere (before: validate had human|json, inspect --json, the rest nothing)."""
    code, _, err = _run([*argv, "--format", "xml"], capsys)
    assert code == 2
    assert "argument --format: invalid choice: 'xml' (choose from 'text', 'json', 'github')" in err


# -- validate ----------------------------------------------------------------------------------------------------------


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    """A folder with one good skill, one refused (its name is not its folder's) and two sharing the name `pdf`."""
    write_skill(tmp_path, "good")
    write_skill(tmp_path, "bad", name="other")
    write_skill(tmp_path, "acme/pdf")
    write_skill(tmp_path, "globex/pdf")
    return tmp_path


def test_validate_github_annotates_refusals_and_warnings_with_their_fix(
    mixed: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refusal is an `::error` at its file and line, titled with its rule; then one summary line."""
    monkeypatch.chdir(mixed)  # annotations name files relative to the checkout, as GitHub matches them
    code, out, _ = _run(["validate", "--format", "github", "."], capsys)
    assert code == 1
    lines = out.splitlines()
    error = next(line for line in lines if line.startswith("::error "))
    assert error.startswith("::error file=bad/SKILL.md,line=2,title=name-mismatch::")
    assert "(fix: make 'name' equal the folder name (or rename the folder))" in error
    warning = next(line for line in lines if "title=duplicate-name" in line)
    assert warning.startswith("::warning file=acme/pdf/SKILL.md,title=duplicate-name::the name 'pdf' is used by 2")
    assert "./acme/pdf/SKILL.md, ./globex/pdf/SKILL.md" in warning  # as the root was written
    assert lines[-1] == "3 skills ok, 1 refused, 1 warning (in 1 file)"


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_validate_names_both_paths_of_a_duplicate_name(
    mixed: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two skills named `pdf` at two paths: validate said nothing (a host keying by name sees only one)."""
    code, out, _ = _run(["validate", "--format", fmt, str(mixed)], capsys)
    assert code == 1  # for the refused one; the duplicate is a warning
    if fmt == "json":
        (warning,) = [w for w in json.loads(out)["warnings"] if w["rule"] == "duplicate-name"]
        message = warning["message"]
    else:
        message = out[out.index("[duplicate-name]") :]
    assert str(mixed / "acme/pdf/SKILL.md") in message
    assert str(mixed / "globex/pdf/SKILL.md") in message


def test_validate_still_accepts_format_human(mixed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--format human` (validate's old name for text) keeps working in scripts that used it."""
    code, out, _ = _run(["validate", "--format", "human", str(mixed / "good")], capsys)
    assert code == 0
    assert out.startswith("1 skill ok")


def test_a_failed_command_is_a_github_error_annotation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Under --format github the one error line also reaches the workflow's annotations."""
    code, out, err = _run(["validate", "--format", "github", str(tmp_path / "missing")], capsys)
    assert code == 2
    assert out.startswith("::error title=skillwire::")
    assert "root folder cannot be opened" in out
    assert "skillwire: error: " in err


# -- serve -------------------------------------------------------------------------------------------------------------


def test_serve_summary_warns_about_duplicate_names(mixed: Path) -> None:
    """The start summary names every skill that shares a name (before: nothing was said), grouped by rule."""
    import io

    out = io.StringIO()
    catalog = FolderSource([mixed]).scan()
    print_summary(catalog, out, warnings=catalog_warnings(catalog, FolderRoots([str(mixed)])))
    assert (
        "skillwire: 1 warning (served, but hosts may read them differently):\n  [duplicate-name] 1\n" in out.getvalue()
    )
    assert (
        f"the name 'pdf' is used by 2 skills: {mixed}/acme/pdf/SKILL.md, {mixed}/globex/pdf/SKILL.md" in out.getvalue()
    )


def test_serve_summary_in_github_format_goes_to_stderr(mixed: Path) -> None:
    """`serve --format github` annotates refusals and duplicates on stderr; stdout stays the MCP channel."""
    run = run_skillwire("serve", str(mixed), "--format", "github", timeout=FREEZE_S)  # stdin ends: serve stops
    assert run.returncode == 0, run.stderr
    assert run.stdout == ""
    assert "::error file=" in run.stderr
    assert "title=name-mismatch::" in run.stderr
    assert "title=duplicate-name::the name 'pdf' is used by 2 skills" in run.stderr
    assert run.stderr.count("is used by") == 1, run.stderr  # the service's own log line is not said a second time


# -- inspect, host, pull -----------------------------------------------------------------------------------------------


def test_inspect_json_is_format_json_and_json_stays_its_alias(
    server: HttpServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """`inspect --json` (deprecated) prints exactly what `--format json` prints."""
    code, by_format, _ = _run(["inspect", server.url, "--format", "json"], capsys)
    assert code == 0
    code, by_alias, _ = _run(["inspect", server.url, "--json"], capsys)
    assert code == 0
    assert json.loads(by_alias) == json.loads(by_format)
    assert len(json.loads(by_format)["skills"]) == 5


def test_inspect_github_annotates_each_file_that_fails_verification(capsys: pytest.CaptureFixture[str]) -> None:
    """A tampered file is an `::error` titled `verify`, naming it; the summary line counts it."""
    code, out, _ = _run(["inspect", TAMPERED, "--verify", "--format", "github"], capsys)
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("::error title=verify::skill://refund-policy/SKILL.md: digest")
    assert lines[-1] == "1 skill, verified 1 file, 1 failed"


def test_host_listing_in_json_and_github(server: HttpServer, capsys: pytest.CaptureFixture[str]) -> None:
    """`host`'s listing as JSON (handles, origins) and, for a server that cannot be used, a GitHub error."""
    code, out, _ = _run(["host", "--server", f"docs={server.url}", "--format", "json"], capsys)
    assert code == 0
    report = json.loads(out)
    assert {s["handle"] for s in report["skills"]} >= {"docs:pdf-processing", "docs:refunds"}
    assert {s["origin"] for s in report["skills"]} == {"docs"}
    gone = shlex.join([sys.executable, "-c", "pass"])  # a "server" that exits at once
    code, out, _ = _run(
        ["host", "--server", f"docs={server.url}", "--server", f"gone={gone}", "--format", "github"], capsys
    )
    assert code == 1
    assert out.splitlines()[0].startswith("::error title=gone::server 'gone' (")
    assert out.splitlines()[-1] == "5 skills"


def test_host_refuses_a_report_format_with_load(capsys: pytest.CaptureFixture[str]) -> None:
    """--format reports the listing; --load prints a skill's text, so asking for both is a usage error."""
    code, _, err = _run(["host", "--server", "a=http://127.0.0.1:9/mcp", "--load", "a:x", "--format", "json"], capsys)
    assert code == 2
    assert "--format json reports the listing" in err


def test_pull_reports_in_json(server: HttpServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`pull --format json` says what was written where, for a script to use."""
    code, out, err = _run(
        ["pull", server.url, "skill://git-workflow/SKILL.md", str(tmp_path / "g"), "--format", "json"], capsys
    )
    assert code == 0, err
    report = json.loads(out)
    assert report["skill"] == "skill://git-workflow/SKILL.md"
    assert report["dest"] == str(tmp_path / "g")
    assert "SKILL.md" in report["files"]
    assert report["verified"] is True


def test_the_docs_github_example_is_what_validate_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The skill authors' page's `validate --format github .` block (docs/getting-started/skill-authors.md), run as
    written in the folder it describes."""
    [step] = transcript(find("docs/getting-started/skill-authors.md", "$ skillwire validate --format github ."))
    shown = step.shown
    write_skill(tmp_path, "Wrong")
    write_skill(tmp_path, "acme/pdf")
    write_skill(tmp_path, "globex/pdf")
    monkeypatch.chdir(tmp_path)
    code, out, _ = _run(["validate", "--format", "github", "."], capsys)
    assert code == 1
    assert out == shown
