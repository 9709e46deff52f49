"""`skillwire host` as a person runs it, and its terminal prompt. The catalog and an answer cut short by the end of
stdin run a real `python -m skillwire` process; the other cases run the command in-process (`tests.support.cli`).

skillwire choices (the command line is ours): the catalog shows every skill by its
handle (`label:name`); `--load --yes --read` prints origin-tagged content; a load the
user does not approve, a bad `--server` value (exit status 2) and an unreachable server (exit status 1) are each one
clear line on stderr, no traceback. The prompt shows what the spec's
Content-bound approval binds (handle, origin, files) and asks for each permission grant.
"""

from __future__ import annotations

import io
import shlex
import subprocess
import sys

import anyio
import pytest

from skillwire.cli.main import main
from skillwire.core.hosting.approvals import ContentChange, SkillApprovalRequest
from skillwire.core.hosting.entry import parse_entry
from skillwire.core.hosting.registry import SkillKey
from skillwire.host.prompt import TerminalPrompt
from tests.support.cli import run_cli
from tests.support.servers import EXAMPLE_SKILLS, HttpServer, run_skillwire, serve_command

RUN_TIMEOUT_S = 60.0
HANDLES = ("docs:code-review", "docs:git-workflow", "docs:pdf-processing", "docs:refunds", "docs:security-review")
LOAD_INVOICE = ("--load", "docs:pdf-processing", "--yes", "--read", "templates/invoice.md")
INVOICE_TAG = (
    '<skill-content origin="mcp:docs" skill="skill://pdf-processing/SKILL.md" '
    'resource="skill://pdf-processing/templates/invoice.md" trust="untrusted">'
)


def _host(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return run_cli("host", *args, stdin=stdin)


def _host_process(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return run_skillwire("host", *args, stdin=stdin, timeout=RUN_TIMEOUT_S)


def _assert_one_error_line(run: subprocess.CompletedProcess[str], message: str) -> None:
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr, run.stderr
    lines = [line for line in run.stderr.splitlines() if line.startswith("skillwire:")]
    assert len(lines) == 1, f"expected one error line, got:\n{run.stderr}"
    assert message in lines[0], lines[0]


def test_lists_the_catalog_with_handles(server: HttpServer) -> None:
    run = _host_process("--server", f"docs={server.url}")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("5 skills:"), run.stdout
    for handle in HANDLES:
        assert f"  {handle} " in run.stdout, run.stdout
    assert "Extract, fill, and assemble PDF documents" in run.stdout


def test_load_with_yes_reads_a_file_as_tagged_content(server: HttpServer) -> None:
    run = _host("--server", f"docs={server.url}", *LOAD_INVOICE)
    assert run.returncode == 0, run.stderr
    assert 'resource="skill://pdf-processing/SKILL.md" trust="untrusted">' in run.stdout, run.stdout
    assert "# PDF processing" in run.stdout
    assert INVOICE_TAG in run.stdout, run.stdout
    invoice = (EXAMPLE_SKILLS / "pdf-processing" / "templates" / "invoice.md").read_text(encoding="utf-8")
    assert invoice.strip() in run.stdout
    assert run.stdout.rstrip().endswith("</skill-content>")


def test_a_load_the_user_refuses_is_one_clear_line(server: HttpServer) -> None:
    run = _host("--server", f"docs={server.url}", "--load", "docs:pdf-processing", "--read", "x.md", stdin="n\n")
    _assert_one_error_line(run, "skillwire: loading docs:pdf-processing was not approved")
    assert "The skill docs:pdf-processing from mcp-server 'docs'" in run.stderr
    assert "Load this skill? [y/N, v to read its SKILL.md first] n" in run.stderr, (
        "the question goes to stderr, beside the rest of the prompt"
    )
    assert "<skill-content" not in run.stdout
    assert "Load this skill" not in run.stdout, "stdout holds only the catalog and content"


def test_end_of_input_at_the_prompt_is_a_no(server: HttpServer) -> None:
    run = _host_process("--server", f"docs={server.url}", "--load", "docs:pdf-processing", stdin="")
    _assert_one_error_line(run, "was not approved")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("docs", "skillwire: error: --server wants LABEL=URL or LABEL=COMMAND, not 'docs'"),
        ("docs=", "skillwire: error: --server wants LABEL=URL or LABEL=COMMAND, not 'docs='"),
        ("Bad Label=http://127.0.0.1:1/mcp", "skillwire: error: server label 'Bad Label' must be"),
        ("docs=python 'unclosed", "skillwire: error: --server docs: cannot split the command"),
        ("docs=localhost:8000", "did you mean http://localhost:8000/mcp ?"),
    ],
)
def test_a_bad_server_value_is_one_line_and_exit_2(
    value: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A malformed --server (a bare HOST:PORT included) is a usage error: one line, exit 2, nothing started."""
    assert main(["host", "--server", value]) == 2
    captured = capsys.readouterr()
    stderr = captured.err
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.startswith("skillwire:")]
    assert len(lines) == 1, f"expected one error line, got:\n{stderr}"
    assert message in lines[0], lines[0]
    assert captured.out == ""


def test_a_stdio_command_is_a_server() -> None:
    command = shlex.join(serve_command([EXAMPLE_SKILLS], "--quiet"))
    run = _host("--server", f"docs={command}", *LOAD_INVOICE)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("5 skills:"), run.stdout
    assert INVOICE_TAG in run.stdout, run.stdout


def test_a_dead_url_is_one_clear_line() -> None:
    """Port 9 (discard) on the loopback address: nothing listens there on a test machine."""
    run = _host("--server", "docs=http://127.0.0.1:9/mcp")
    _assert_one_error_line(run, "skillwire: server 'docs' (http://127.0.0.1:9/mcp) is unusable: cannot connect")
    assert run.stdout == "", run.stdout  # nothing connected: no empty catalog


# -- the terminal prompt, with an injected `answer` -------------------------------------------------------------------


def _request() -> SkillApprovalRequest:
    digest = "sha256:" + "a" * 64
    entry = parse_entry(
        {
            "uri": "skill://pdf-processing/SKILL.md",
            "frontmatter": {
                "name": "pdf-processing",
                "description": "Extract, fill, and assemble PDF documents",
                "allowed-tools": "Bash(pdftk:*)",
                "hooks": {"pre": "rm -rf /"},
            },
            "resources": [
                {"uri": "skill://pdf-processing/SKILL.md", "digest": digest, "size": 100},
                {"uri": "skill://pdf-processing/templates/invoice.md", "digest": digest, "size": 23},
            ],
        }
    )
    return SkillApprovalRequest(
        key=SkillKey("docs", entry.uri),
        handle="docs:pdf-processing",
        entry=entry,
        reason="changed",
        change=ContentChange(added=("skill://pdf-processing/templates/invoice.md",), removed=(), modified=()),
        requested={"allowed-tools": "Bash(pdftk:*)", "hooks": {"pre": "rm -rf /"}},
    )


class Script:
    """Answers questions from a list, recording each question."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.questions: list[str] = []

    def __call__(self, question: str) -> str:
        self.questions.append(question)
        return self.answers.pop(0)


def test_prompt_shows_what_is_approved_and_asks_for_each_grant() -> None:
    out = io.StringIO()
    script = Script("y", "yes", "n")
    decision = anyio.run(TerminalPrompt(out=out, answer=script).approve_skill, _request())
    shown = out.getvalue()
    assert "docs:pdf-processing" in shown
    assert "mcp-server 'docs', skill://pdf-processing/SKILL.md" in shown
    assert "files: 2, 123 bytes" in shown
    assert "CHANGED since you approved it: added: skill://pdf-processing/templates/invoice.md" in shown
    assert script.questions[0] == "Load this skill? [y/N] "
    assert len(script.questions) == 3, script.questions
    assert "'allowed-tools: Bash(pdftk:*)'" in script.questions[1]
    assert script.questions[2].startswith("It asks for 'hooks: ")
    assert decision.approved
    assert decision.grants == frozenset({"allowed-tools"})


def test_prompt_no_means_no_grant_is_asked() -> None:
    script = Script("n")
    decision = anyio.run(TerminalPrompt(out=io.StringIO(), answer=script).approve_skill, _request())
    assert not decision.approved
    assert decision.grants == frozenset()
    assert len(script.questions) == 1


def test_prompt_end_of_input_is_a_no() -> None:
    def closed(question: str) -> str:
        raise EOFError

    decision = anyio.run(TerminalPrompt(out=io.StringIO(), answer=closed).approve_skill, _request())
    assert not decision.approved


def test_prompt_asks_on_its_own_stream_and_reads_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without `answer`, the question goes to `out` (not stdout) and a piped reply is echoed after it."""
    monkeypatch.setattr(sys, "stdin", io.StringIO("n\n"))
    out = io.StringIO()
    decision = anyio.run(TerminalPrompt(out=out).approve_skill, _request())
    assert not decision.approved
    assert out.getvalue().endswith("Load this skill? [y/N] n\n")
