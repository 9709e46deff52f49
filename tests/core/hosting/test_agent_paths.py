"""The one list of agent-configuration paths and the one rule for unsafe file-name characters (issue 9, hole 7)."""

from __future__ import annotations

import pytest

from skillwire.core.hosting.agent_paths import AGENT_CONFIG_PATHS, agent_config_match, disk_key, name_problem_chars


@pytest.mark.parametrize(
    ("path", "pattern"),
    [
        (".claude/settings.json", ".claude/"),
        (".claude/skills/x/SKILL.md", ".claude/"),
        (".agents/skills/y/SKILL.md", ".agents/"),
        ("CLAUDE.md", "CLAUDE.md"),
        ("x/.Claude/settings.json", ".claude/"),  # any depth, any case
        ("deep/er/AGENTS.MD", "AGENTS.md"),
        ("CLAUDE.md.", "CLAUDE.md"),  # Windows drops a trailing dot
        (".github/copilot-instructions.md", ".github/copilot-instructions.md"),
        (".github/instructions/a.instructions.md", ".github/instructions/"),
        (".clinerules", ".clinerules"),
        (".clinerules/rules.md", ".clinerules"),
        (".mcp.json", ".mcp.json"),
        (".vscode/tasks.json", ".vscode/"),
    ],
)
def test_agent_configuration_is_found_at_any_depth_in_any_case(path: str, pattern: str) -> None:
    """skillwire choice (issue 9): these paths are an agent's own configuration wherever they land under DEST."""
    match = agent_config_match(path.split("/"))
    assert match is not None
    assert match[0].path == pattern


@pytest.mark.parametrize(
    "path",
    ["docs/claude.txt", "my.claude/x", ".claudex/settings.json", ".github/workflows/ci.yml", "notes/AGENTS.txt"],
)
def test_ordinary_paths_are_not_agent_configuration(path: str) -> None:
    """skillwire choice: only whole segments match, so ordinary files with similar names are written."""
    assert agent_config_match(path.split("/")) is None


def test_the_brief_list_is_covered() -> None:
    """skillwire choice: the paths issue 9 names are all in the one list."""
    listed = {p.path for p in AGENT_CONFIG_PATHS}
    required = {".claude/", ".agents/", ".cursor/", ".gemini/", ".codex/", ".github/copilot-instructions.md"}
    required |= {".github/instructions/", ".vscode/", ".windsurf/", ".clinerules", ".mcp.json", "CLAUDE.md"}
    required |= {"AGENTS.md", "GEMINI.md", ".cursorrules"}
    assert required <= listed


@pytest.mark.parametrize(
    ("name", "found"),
    [
        ("a\x1b]0;x\x07.md", ["\\x1b", "\\x07"]),
        ("a\x7f", ["\\x7f"]),
        ("a\x85b", ["\\u0085"]),  # C1
        ("invoice-\u202egpj.exe", ["\\u202e"]),
        ("read\u200bme", ["\\u200b"]),
        ("x\u2066y\u2069", ["\\u2066", "\\u2069"]),
        ("line\u2028break", ["\\u2028"]),
        ("\ufeffbom", ["\\ufeff"]),
        ("bad\udcff.md", ["\\xff"]),  # a byte that is not UTF-8 (surrogate-escaped)
        ("tab\there", ["\\t"]),
        ("café-日本.md", []),
    ],
)
def test_control_bidi_and_zero_width_characters_are_named(name: str, found: list[str]) -> None:
    """skillwire choice (issue 9): names with these characters show as something else; each is named, escaped."""
    assert name_problem_chars(name) == found


def test_disk_key_folds_case_unicode_form_and_trailing_dots() -> None:
    """skillwire choice: two names one lenient disk holds as one file have one key."""
    assert disk_key("Cafe\u0301.MD. ") == disk_key("café.md")
