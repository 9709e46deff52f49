"""Where server content must not land on the user's disk: agent configuration paths and unsafe file names.

A skill served over MCP is untrusted input (Security Considerations: "content loaded from that
location" stays MCP-origin). Written into a folder where an agent is later opened, some paths stop
being content and become the agent's own configuration: `.claude/settings.json` runs hooks,
`.claude/skills/x/SKILL.md` is a trusted local skill, `CLAUDE.md` and `AGENTS.md` are standing
instructions. This module is the one list of such paths (used by `skillwire pull` and by the cache's
location rule) and the one rule for characters a written file name may not hold. No I/O.

    agent_config_match(("x", ".Claude", "settings.json"))   # the AgentPath for ".claude/"
    name_problem_chars("evil\u202etxt.md")                   # ["\\u202e"]
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from skillwire.core.display import UNSAFE_IN_NAME, terminal_safe


@dataclass(frozen=True, slots=True)
class AgentPath:
    """One agent-configuration path: its `/`-separated segments, and what an agent does with it."""

    path: str
    what: str

    @property
    def segments(self) -> tuple[str, ...]:
        return tuple(self.path.rstrip("/").split("/"))


#: Agent folders whose `skills` subfolder is a filesystem-skill discovery path (the cache's location rule).
SKILL_DISCOVERY_FOLDERS: tuple[str, ...] = (".claude", ".agents", ".codex", ".gemini", ".cursor")
SKILLS_FOLDER = "skills"

#: Paths an agent opened in a folder reads as its own configuration, matched case-insensitively at any depth.
#: A path ending in "/" is a folder (everything inside counts); the others are files (or folders) of that name.
AGENT_CONFIG_PATHS: tuple[AgentPath, ...] = (
    AgentPath(".claude/", "Claude Code's settings, hooks, commands and skills"),
    AgentPath(".agents/", "agent skills and settings shared by several agents"),
    AgentPath(".cursor/", "Cursor's rules, settings and skills"),
    AgentPath(".gemini/", "Gemini CLI's settings and skills"),
    AgentPath(".codex/", "Codex's settings and skills"),
    AgentPath(".vscode/", "VS Code's workspace settings and tasks"),
    AgentPath(".windsurf/", "Windsurf's rules and workflows"),
    AgentPath(".roo/", "Roo Code's rules"),
    AgentPath(".kiro/", "Kiro's steering files and hooks"),
    AgentPath(".github/instructions/", "GitHub Copilot's instruction files"),
    AgentPath(".github/prompts/", "GitHub Copilot's prompt files"),
    AgentPath(".github/chatmodes/", "GitHub Copilot's chat modes"),
    AgentPath(".github/copilot-instructions.md", "GitHub Copilot's standing instructions"),
    AgentPath(".clinerules", "Cline's rules"),
    AgentPath(".cursorrules", "Cursor's standing rules"),
    AgentPath(".windsurfrules", "Windsurf's standing rules"),
    AgentPath(".roomodes", "Roo Code's modes"),
    AgentPath(".mcp.json", "the MCP servers an agent starts in this folder"),
    AgentPath("CLAUDE.md", "Claude Code's standing instructions"),
    AgentPath("CLAUDE.local.md", "Claude Code's personal standing instructions"),
    AgentPath("AGENTS.md", "standing instructions read by many agents"),
    AgentPath("GEMINI.md", "Gemini CLI's standing instructions"),
)


def disk_key(segment: str) -> str:
    """A file name as the most lenient file system compares it: two names with one key are one file on some disk.

    Case-insensitive file systems (macOS, Windows) open ".Claude" as ".claude", macOS normalizes Unicode,
    and Windows drops trailing dots and spaces ("CLAUDE.md." is "CLAUDE.md").
    """
    return unicodedata.normalize("NFC", segment).casefold().rstrip(". ")


_FOLDED = tuple((tuple(disk_key(s) for s in p.segments), p) for p in AGENT_CONFIG_PATHS)


def agent_config_match(segments: Sequence[str]) -> tuple[AgentPath, int] | None:
    """The agent-configuration path that `segments` (a path, split) sits at or inside, and where it starts.

    Matched at any depth: a skill folder nested as `x/.claude/settings.json` still lands under the
    folder it is written to, and an agent opened at `x` reads it.
    """
    folded = [disk_key(s) for s in segments]
    for start in range(len(folded)):
        for pattern, found in _FOLDED:
            if tuple(folded[start : start + len(pattern)]) == pattern:
                return found, start
    return None


def name_problem_chars(name: str) -> list[str]:
    """The characters of a file name that no written file may hold, escaped for display (empty if none).

    Control characters (C0, DEL, C1), bidi embeddings, overrides and isolates, zero-width and tag characters,
    the BOM, line or paragraph separators and bytes that are not UTF-8 make a name display as something it is
    not, or break a terminal line: the same classes `terminal_safe` shows as escapes (`display.UNSAFE_IN_NAME`).
    """
    found: list[str] = []
    for match in UNSAFE_IN_NAME.finditer(name):
        shown = terminal_safe(match.group())
        if shown not in found:
            found.append(shown)
    return found
