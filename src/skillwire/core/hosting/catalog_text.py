"""The catalog as text for a model's system prompt, within a character budget.

A model uses the skills it is shown well, and a large catalog shown whole costs tokens and attention. This builds
the lines a host puts in the system prompt: the most relevant skills first (the caller ranks them), each line with
its handle (which tells same-name skills apart) and its origin, descriptions cut to a readable length, and a closing
line saying how many more skills exist and that `search_skills` finds them. Pure and deterministic: the same items
and budget give the same text; the text is never longer than the budget.

    text = catalog_text(ranked_items, budget=2_000, total=len(all_items))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

DESCRIPTION_CHARS = 200  # a description longer than this is cut (with an ellipsis): one skill must not crowd out others
HEADER = "Skills you can load with load_skill (handle [origin]: what it is for):"
SHORTEST_LINE = 16  # no catalog line is shorter: bounds how many skills a budget can show
CONVERSATION_CHARS = 2_000  # the end of a conversation that ranks the catalog (recent turns matter most)


class ListedSkill(Protocol):
    """What the builder needs of a catalog item (`Host.catalog()` items have it)."""

    @property
    def handle(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def origin(self) -> str: ...
    @property
    def mcp(self) -> bool: ...
    @property
    def declined(self) -> str | None: ...


def origin_label(item: ListedSkill) -> str:
    """How a line names where a skill comes from: `mcp-server:LABEL`, or `local` for the host's own."""
    return f"mcp-server:{item.origin}" if item.mcp else "local"


def catalog_line(item: ListedSkill) -> str:
    """One skill as a line: `- handle [origin]: description` (display-safe text is the caller's: `Host.catalog`)."""
    description = " ".join(item.description.split())
    if len(description) > DESCRIPTION_CHARS:
        description = description[: DESCRIPTION_CHARS - 1].rstrip() + "…"
    return f"- {item.handle} [{origin_label(item)}]: {description}"


def closing_line(more: int) -> str:
    noun = "skill is" if more == 1 else "skills are"
    return f"{more:,} more {noun} not listed here: call search_skills with a few words to find one."


def catalog_text(ranked: Sequence[ListedSkill], *, budget: int, total: int | None = None) -> str:
    """The prompt text for `ranked` (best first) in at most `budget` characters.

    `total`: how many loadable skills exist in all (default: len(ranked)); the closing line counts the ones left out.
    Declined items (not loadable) are never shown. "" when not even one line and the closing line fit.
    """
    loadable = [item for item in ranked if item.declined is None]
    total = len(loadable) if total is None else max(total, len(loadable))
    lines = [HEADER]
    used = len(HEADER)
    shown = 0
    for item in loadable:
        line = catalog_line(item)
        rest = total - shown - 1
        reserve = 1 + len(closing_line(rest)) if rest else 0  # room for the closing line after this one
        if used + 1 + len(line) + reserve > budget:
            break
        lines.append(line)
        used += 1 + len(line)
        shown += 1
    if shown < total:
        closing = closing_line(total - shown)
        if shown == 0:
            return closing if len(closing) <= budget else ""
        lines.append(closing)
    text = "\n".join(lines)
    return text if len(text) <= budget else ""
