"""`skillwire validate` (a skillwire choice): the server's own rules, portability warnings, output and exit codes.

Exit status: 0 when nothing would be refused (warnings alone are 0), 1 when a skill would be
refused, 2 for usage. `--format json` keeps a stable schema (version 1).
"""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import pytest

from skillwire.cli.main import main
from skillwire.cli.validate import FIXES
from skillwire.core.fields import ALLOWED_TOOLS_FORMAT, COMPATIBILITY_FORMAT, LICENSE_FORMAT, METADATA_FORMAT
from skillwire.sources.folder.source import FolderSource
from tests.support.kdense import write_kdense_tree
from tests.support.servers import EXAMPLE_SKILLS


def _write_skill(root: Path, folder: str, frontmatter: str, body: str = "Body.\n") -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{frontmatter}---\n{body}", encoding="utf-8")
    return path


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    _write_skill(root, "good", "name: good\ndescription: A good skill\n")
    _write_skill(root, "warned", "name: warned\ndescription: Warned skill\nenabled: yes\n")
    _write_skill(root, "misnamed", "name: other\ndescription: Misnamed\n")
    _write_skill(root, "broken", "name: broken\ndescription: Use when: it breaks\n")
    (root / "nofront").mkdir()
    (root / "nofront" / "SKILL.md").write_text("# just markdown\n", encoding="utf-8")
    return root


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["validate", *args])
    return code, capsys.readouterr().out


def test_a_clean_tree_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write_skill(tmp_path, "good", "name: good\ndescription: A good skill\n")
    code, out = _run(capsys, str(tmp_path))
    assert code == 0
    assert out.splitlines()[0] == "1 skill ok, 0 refused, 0 warnings"


def test_warnings_alone_exit_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write_skill(tmp_path, "warned", "name: warned\ndescription: Warned\nenabled: yes\n")
    code, out = _run(capsys, str(tmp_path))
    assert code == 0
    assert "[yaml11-bool]" in out
    assert "fix: write it in quotes: 'yes'" in out


def test_a_refused_skill_exits_1_and_the_summary_comes_first(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(capsys, str(tree))
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "2 skills ok, 3 refused, 1 warning (in 1 file)"
    assert "\x1b[" not in out  # not a terminal: no colour
    assert "[name-mismatch] 1" in out
    assert f"{tree / 'misnamed' / 'SKILL.md'}:2" in out
    assert "fix: make 'name' equal the folder name" in out
    assert f"{tree / 'broken' / 'SKILL.md'}:3" in out  # the yaml-syntax refusal names the line


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["validate"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        main(["validate", ".", "--format", "xml"])
    assert exc.value.code == 2


def test_json_output_has_the_documented_schema(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(capsys, str(tree), "--format", "json")
    assert code == 1
    report = json.loads(out)
    assert set(report) == {"version", "skills", "refused", "warnings", "summary"}
    assert report["version"] == 1
    assert set(report["summary"]) == {"skills", "refused", "skipped", "warnings", "ok"}
    assert report["summary"] == {"skills": 2, "refused": 3, "skipped": 0, "warnings": 1, "ok": False}
    assert {s["uri"] for s in report["skills"]} == {"skill://good/SKILL.md", "skill://warned/SKILL.md"}
    for skill in report["skills"]:
        assert set(skill) == {"uri", "path", "files", "size"}
    for refusal in report["refused"]:
        assert set(refusal) == {"path", "line", "rule", "message", "fix", "skill"}
        assert refusal["fix"]
    (warning,) = report["warnings"]
    assert set(warning) == {"path", "line", "column", "rule", "message", "fix"}
    assert (warning["rule"], warning["line"], warning["column"]) == ("yaml11-bool", 4, 10)
    assert {r["rule"] for r in report["refused"]} == {"name-mismatch", "yaml-syntax", "frontmatter-missing"}


def test_refusals_are_exactly_the_servers(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same code as `skillwire serve`: every refusal of FolderSource.scan, nothing more or less."""
    _, out = _run(capsys, str(tree), "--format", "json")
    scanned = FolderSource([tree]).scan().refusals
    reported = json.loads(out)["refused"]
    assert [(r["path"], r["rule"], r["line"], r["message"]) for r in reported] == [
        (r.path, r.rule, r.line, r.message) for r in scanned
    ]


def test_hundreds_of_refusals_are_grouped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for i in range(200):
        _write_skill(tmp_path, f"skill-{i}", f"name: wrong-{i}\ndescription: Broken\n")
    code, out = _run(capsys, str(tmp_path))
    assert code == 1
    assert out.splitlines()[0] == "0 skills ok, 200 refused, 0 warnings"
    assert "(200) name … differs from its folder …; they must be equal" in out
    assert "... and 197 more" in out
    assert len(out.splitlines()) < 20
    code, out = _run(capsys, str(tmp_path), "-v")
    assert out.count("SKILL.md:2") == 200


def test_a_missing_path_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Nothing to check at all is exit 2 with one line (issue 11); a missing root beside good ones is a refusal."""
    assert main(["validate", str(tmp_path / "missing")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "missing: root folder cannot be opened" in captured.err


def test_files_the_server_leaves_out_are_warned_about(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 5: validate names files that would be ignored, from the catalog itself (no rule is restated)."""
    skill = tmp_path / "good"
    _write_skill(tmp_path, "good", "name: good\ndescription: A good skill\n")
    (skill / "__pycache__").mkdir()
    (skill / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (skill / "notes.log").write_text("log", encoding="utf-8")
    (skill / "kept.md").write_text("kept", encoding="utf-8")
    (skill / ".skillwireignore").write_text("*.log\n", encoding="utf-8")
    code, out = _run(capsys, str(tmp_path), "--format", "json")
    assert code == 0
    flagged = sorted(w["path"].rsplit("good", 1)[-1] for w in json.loads(out)["warnings"] if w["rule"] == "not-served")
    assert flagged == ["/__pycache__/", "/notes.log"]


def test_a_reader_that_goes_away_ends_the_command_quietly(monkeypatch: pytest.MonkeyPatch) -> None:
    """skillwire choice: `skillwire validate ... | head -n 1` prints no BrokenPipeError line; status 141 as a shell."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line is written
    stdout = os.fdopen(write_end, "w", buffering=1)  # line-buffered: the first line meets the closed pipe
    stderr = io.StringIO()
    monkeypatch.setattr(sys, "stdout", stdout)
    monkeypatch.setattr(sys, "stderr", stderr)
    try:
        status = main(["validate", str(EXAMPLE_SKILLS)])
    finally:
        stdout.close()
    assert status == 141
    assert stderr.getvalue() == ""


def test_kdense_metadata_lists_are_refused_with_rule_and_fix_in_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """K-Dense's rowan and markdown-mermaid-writing: metadata values that are lists were reported as 'ok'."""
    root = write_kdense_tree(tmp_path / "skills")
    code, out = _run(capsys, str(root))
    assert code == 1
    assert out.splitlines()[0].startswith("1 skill ok, 2 refused")
    assert "[metadata-format] 2" in out
    assert "(2) metadata … is a list; metadata values must be strings" in out  # the two messages, grouped
    assert f"{root / 'rowan' / 'SKILL.md'}:2" in out
    assert f"{root / 'markdown-mermaid-writing' / 'SKILL.md'}:2" in out
    assert f"fix: {FIXES['metadata-format']}" in out
    assert "quote numbers and booleans, join a list into one string" in out


def test_kdense_metadata_lists_are_refused_with_rule_and_fix_in_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same refusals in `--format json`: rule, message and fix per skill."""
    root = write_kdense_tree(tmp_path / "skills")
    code, out = _run(capsys, str(root), "--format", "json")
    assert code == 1
    report = json.loads(out)
    refused = {Path(r["path"]).parent.name: r for r in report["refused"]}
    assert set(refused) == {"rowan", "markdown-mermaid-writing"}
    assert refused["rowan"]["message"] == "metadata 'trigger-keywords' is a list; metadata values must be strings"
    assert refused["markdown-mermaid-writing"]["message"].startswith("metadata 'skill-contributors' is a list")
    for r in refused.values():
        assert (r["rule"], r["fix"], r["skill"]) == ("metadata-format", FIXES["metadata-format"], True)
    assert [s["uri"] for s in report["skills"]] == ["skill://good/SKILL.md"]
    # markdown-mermaid-writing's list-valued allowed-tools is allowed, but warned about
    warned = [w for w in report["warnings"] if w["rule"] == "allowed-tools-list"]
    assert len(warned) == 1
    assert warned[0]["fix"] == "write it as one string: allowed-tools: Read Write Edit Bash"


def test_every_optional_field_rule_has_its_fix_in_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each new rule reaches `validate` with the fix held beside it in `skillwire.core.fields`."""
    cases = {
        "lic": "license: [MIT]\n",
        "compat": f"compatibility: {'x' * 501}\n",
        "meta": "metadata:\n  skills_count: 28\n",
        "tools": "allowed-tools: {Read: true}\n",
    }
    for folder, extra in cases.items():
        _write_skill(tmp_path, folder, f"name: {folder}\ndescription: D\n{extra}")
    code, out = _run(capsys, str(tmp_path), "--format", "json")
    assert code == 1
    got = {Path(r["path"]).parent.name: (r["rule"], r["fix"]) for r in json.loads(out)["refused"]}
    assert got == {
        "lic": ("license-format", LICENSE_FORMAT.fix),
        "compat": ("compatibility-format", COMPATIBILITY_FORMAT.fix),
        "meta": ("metadata-format", METADATA_FORMAT.fix),
        "tools": ("allowed-tools-format", ALLOWED_TOOLS_FORMAT.fix),
    }


def test_validate_takes_the_source_specs_serve_takes(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`validate` works through the port: a prefixed source and a plain one together, skills, refusals and lint
    warnings alike, and a skill path both offer is refused naming both."""
    other = tmp_path / "other"
    _write_skill(other, "good", "name: good\ndescription: Also good\n")
    code, out = _run(capsys, "--format", "json", str(tree), f"team={tree}", str(other))
    report = json.loads(out)
    uris = {s["uri"] for s in report["skills"]}
    assert {"skill://team/good/SKILL.md", "skill://team/warned/SKILL.md", "skill://warned/SKILL.md"} <= uris
    # Plain folders are one folder source, as before: the first root serves good/, the second's copy is refused.
    assert [r["rule"] for r in report["refused"] if str(other) in r["path"]] == ["duplicate-uri"]
    assert sum(w["rule"] == "yaml11-bool" for w in report["warnings"]) == 2  # read through each source's catalog
    assert code == 1
    code, out = _run(capsys, "--format", "json", f"team={tree}", f"team={other}")
    duplicate = [r for r in json.loads(out)["refused"] if r["rule"] == "duplicate-uri"]
    assert len(duplicate) == 2
    assert all(str(tree) in r["message"] and str(other) in r["message"] for r in duplicate)
