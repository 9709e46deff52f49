"""Where a YAML error points: the SKILL.md path and the file line of a line of the frontmatter text.

The frontmatter starts on line 2 of SKILL.md and libyaml counts lines from 0, so every error of
the composer and of the YAML 1.2 checks turns a 0-based line of the text into a file line here.

    where = Where("skills/pdf/SKILL.md", first_line=2, last_line=9)
    raise where.error("duplicate key 'name'", "yaml-duplicate-key", mark_of(event).line)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

import yaml
from yaml.events import Event

from skillwire.core.errors import FrontmatterError

AnyMark: TypeAlias = "yaml.error.Mark | yaml._yaml.Mark"


@dataclass(frozen=True, slots=True)
class Where:
    """The file a YAML text comes from, and the file lines of its first and last lines."""

    path: str
    first_line: int
    last_line: int  # errors at the end of the text point at its last line

    def line(self, index: int) -> int:
        """The file line of 0-based line `index` of the text."""
        return min(self.first_line + index, self.last_line)

    def error(self, message: str, rule: str, index: int | None) -> FrontmatterError:
        """A `FrontmatterError` at 0-based text line `index` (None: no line)."""
        line = self.line(index) if index is not None else None
        return FrontmatterError(message, rule=rule, path=self.path, line=line)


def mark_of(event: Event) -> AnyMark:
    """Where `event` starts (both parsers set marks on every event)."""
    mark = event.start_mark
    assert mark is not None
    return mark
