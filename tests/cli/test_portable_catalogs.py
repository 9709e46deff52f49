"""Portable catalogs (issue 22, skillwire choices: the CLI is ours): `serve` warns at start about exactly what
`validate` warns about, grouped by rule; `--strict-portable` refuses such skills instead; a duplicate name reached
through a linked folder names two paths; a host that never reads the server's stderr still gets answers.

`serve` runs as a real process where its output or the protocol is the point (one process per test); `validate` and
the report functions run in-process.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from skillwire.cli.main import main
from tests.support.kdense import write_kdense_tree
from tests.support.servers import EXAMPLE_SKILLS, REPO_ROOT, run_skillwire, serve_command, skills_list
from tests.support.skills import write_skill

pytestmark = pytest.mark.anyio

RUN_TIMEOUT_S = 60.0
ANSWER_DEADLINE_S = 30.0  # a server blocked on its stderr never answers: far past a slow start on a loaded machine

# Each trips one portability rule: FastMCP's client rejects a whole listing for an allowed-tools list; the
# TypeScript SDK's YAML parser reads `[a: b]` as a mapping; YAML 1.1 reads `yes` as a boolean.
TOOLS_LIST_MD = "---\nname: tools\ndescription: Uses tools\nallowed-tools: [Read, Write]\n---\nBody.\n"
FLOW_MAPPING_MD = "---\nname: flow\ndescription: Tags\ntags: [key: value]\n---\nBody.\n"
YAML11_MD = "---\nname: yaml11\ndescription: Flags\nmetadata:\n  enabled: yes\n---\nBody.\n"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _write(root: Path, folder: str, text: str) -> None:
    (root / folder).mkdir(parents=True, exist_ok=True)
    (root / folder / "SKILL.md").write_text(text, encoding="utf-8")


@pytest.fixture
def traps(tmp_path: Path) -> Path:
    """A collection with a warning of every kind: portability traps, a name reached twice through a linked folder,
    a file the server leaves out, and a refused skill whose SKILL.md has a trap of its own."""
    root = tmp_path / "traps"
    _write(root, "tools", TOOLS_LIST_MD)
    _write(root, "flow", FLOW_MAPPING_MD)
    _write(root, "team-a/yaml11", YAML11_MD)
    (root / "team-b").symlink_to("team-a", target_is_directory=True)  # skill://team-b/yaml11: the same SKILL.md
    (root / "tools" / ".DS_Store").write_bytes(b"\0")  # built-in ignore: not served
    _write(root, "misnamed", "---\nname: other\ndescription: Misnamed\nversion: 0755\n---\nBody.\n")
    write_skill(root, "good")
    return root


def _validate(*args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = main(["validate", "--format", "json", *args])
    return code, json.loads(capsys.readouterr().out)


def _serve_report(*args: str, cwd: Path = REPO_ROOT) -> dict[str, Any]:
    """`serve ARGS --format json` on stdio with stdin closed: its start report (on stderr), then it stops."""
    run = run_skillwire("serve", *args, "--format", "json", "--no-watch", timeout=RUN_TIMEOUT_S)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "", "stdout is the MCP channel"
    report: dict[str, Any] = json.loads(run.stderr)
    return report


def test_serve_and_validate_report_the_same_warnings_on_every_collection_the_tests_hold(
    traps: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`serve` said 0 warnings where `validate` said 3 and 5 on two real collections; now both call one function.
    Each collection the tests hold, under its own prefix (one server): the examples, the K-Dense tree, the traps."""
    kdense = write_kdense_tree(tmp_path / "kdense")
    specs = [f"examples={EXAMPLE_SKILLS}", f"kdense={kdense}", f"traps={traps}"]
    _, validated = _validate(*specs, capsys=capsys)
    served = _serve_report(*specs)
    assert served["warnings"] == validated["warnings"]
    assert served["refused"] == validated["refused"]
    rules = {w["rule"] for w in served["warnings"]}
    assert {"allowed-tools-list", "colon-in-value", "yaml11-bool", "duplicate-name", "not-served"} <= rules, rules
    assert "yaml11-octal" in rules  # the refused skill's SKILL.md is linted too


def test_serve_and_validate_agree_on_a_plain_folder_with_a_linked_folder(
    traps: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same on one folder given as it is (no prefix): paths as the user wrote the root."""
    _, validated = _validate(str(traps), capsys=capsys)
    assert _serve_report(str(traps))["warnings"] == validated["warnings"]


def test_a_duplicate_name_through_a_linked_folder_names_two_different_paths(
    traps: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`team-b` links to `team-a`: two skills, one SKILL.md on disk. Before, the warning named
    `team-a/yaml11/SKILL.md` twice (the resolved path); each is named by the path it is served from."""
    _, report = _validate(str(traps), capsys=capsys)
    (duplicate,) = [w for w in report["warnings"] if w["rule"] == "duplicate-name"]
    first, second = str(traps / "team-a/yaml11/SKILL.md"), str(traps / "team-b/yaml11/SKILL.md")
    assert f"is used by 2 skills: {first}, {second};" in duplicate["message"]
    linted = sorted(w["path"] for w in report["warnings"] if w["rule"] == "yaml11-bool")
    assert linted == [f"{first}", f"{second}"]
    assert sorted(s["path"] for s in report["skills"] if "yaml11" in s["uri"]) == [first, second]


def test_serve_groups_warnings_by_rule_like_refusals(tmp_path: Path) -> None:
    """40 names used twice: one group line with its count, five examples and how many more (before: one line per
    name, ~80 KB of stderr on a large collection); `-v` lists every one."""
    for i in range(40):
        write_skill(tmp_path, f"a/shared-{i:02d}")
        write_skill(tmp_path, f"b/shared-{i:02d}")
    _write(tmp_path, "tools", TOOLS_LIST_MD)
    run = run_skillwire("serve", str(tmp_path), "--no-watch", timeout=RUN_TIMEOUT_S)
    assert run.returncode == 0, run.stderr
    lines = run.stderr.splitlines()
    assert "skillwire: 41 warnings (served, but hosts may read them differently):" in lines, run.stderr
    assert "  [duplicate-name] 40" in lines, run.stderr
    assert "    ... and 35 more (-v lists every one)" in lines, run.stderr
    assert "  [allowed-tools-list] 1" in lines, run.stderr
    assert len([line for line in lines if "is used by 2 skills" in line]) == 5, run.stderr
    verbose = run_skillwire("serve", str(tmp_path), "--no-watch", "-v", timeout=RUN_TIMEOUT_S)
    assert len([line for line in verbose.stderr.splitlines() if "is used by 2 skills" in line]) == 40


def test_validate_strict_portable_refuses_with_the_rule_its_message_and_fix(
    traps: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A portability warning becomes a refusal (exit 1): the rule id, the message, the fix; one per skill."""
    code, report = _validate("--strict-portable", str(traps), capsys=capsys)
    assert code == 1
    refused = {r["path"]: r for r in report["refused"]}
    tools = refused[str(traps / "tools/SKILL.md")]
    assert tools["rule"] == "allowed-tools-list"
    assert tools["line"] == 4
    assert tools["fix"] == "write it as one string: allowed-tools: Read Write"
    assert "allowed-tools is a YAML list" in tools["message"]
    assert refused[str(traps / "flow/SKILL.md")]["rule"] == "colon-in-value"
    assert {s["uri"] for s in report["skills"]} == {"skill://good/SKILL.md"}
    assert not {"allowed-tools-list", "colon-in-value", "yaml11-bool"} & {w["rule"] for w in report["warnings"]}


@pytest.fixture
def errlog() -> Iterator[Any]:
    """A pipe for a server's stderr that nothing reads (as some stdio hosts do)."""
    read_fd, write_fd = os.pipe()
    with os.fdopen(write_fd, "w") as write_end:
        yield write_end
    os.close(read_fd)


async def _list_over_stdio(root: Path, *options: str, errlog: Any) -> list[dict[str, Any]]:
    """initialize + skills/list (every page) over stdio, within `ANSWER_DEADLINE_S`."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    command = serve_command([root], *options)
    params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=REPO_ROOT)
    skills: list[dict[str, Any]] = []
    with anyio.fail_after(ANSWER_DEADLINE_S):
        async with Client(stdio_client(params, errlog=errlog), mode="legacy", cache=None) as client:
            cursor = None
            while True:
                page = await skills_list(client, cursor)
                skills += page.skills
                cursor = page.next_cursor
                if cursor is None:
                    return skills


async def test_serve_strict_portable_does_not_list_what_it_refuses(traps: Path, errlog: Any) -> None:
    """skills/list over stdio lists only the portable skills under --strict-portable."""
    skills = await _list_over_stdio(traps, "--strict-portable", "--no-watch", "--quiet", errlog=errlog)
    assert sorted(s["uri"] for s in skills) == ["skill://good/SKILL.md"]


async def test_a_host_that_never_reads_stderr_still_gets_answers(tmp_path: Path, errlog: Any) -> None:
    """A stdio host that does not drain the server's stderr: before, `serve -v` on 500 shared names wrote more than
    the pipe holds before answering, blocked, and `initialize` got no answer; stderr now never blocks the protocol."""
    name = "a-skill-name-long-enough-to-fill-a-pipe-with-warnings"
    for i in range(500):
        write_skill(tmp_path, f"first/{name}-{i:03d}")
        write_skill(tmp_path, f"second/{name}-{i:03d}")
    skills = await _list_over_stdio(tmp_path, "-v", "--no-watch", errlog=errlog)
    assert len(skills) == 1000
