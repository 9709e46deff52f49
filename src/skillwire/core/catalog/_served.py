"""What a catalog holds besides skills: each served file with how to read its bytes, and what was refused.

`FileContent` is the one way the server reads a file; `StampedContent` and `GeneratedContent` are the two kinds
it treats apart (kept in memory while unchanged, produced at each read).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Protocol

from skillwire.core.manifest import SkillFile


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why something under a root is not served: where, which rule, and a readable reason.

    `skill` is True when a whole skill was left out, False for a skipped path
    (for example a dangling link outside any skill). `fix`: how to fix this one, when the rule's own fix
    (`core.fixes.FIXES`) does not say it (a portability refusal's fix names the value to quote).
    """

    path: str
    rule: str
    message: str
    line: int | None = None
    skill: bool = True
    fix: str | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return f"{where}: {self.message} [{self.rule}]"


class FileContent(Protocol):
    """How to read the bytes of one served file, as its source indexed it (a path, a blob, bytes in memory)."""

    def read(self, limit: int) -> bytes | None:
        """At most `limit` + 1 bytes of the file; None when it can no longer be read as what was indexed (gone,
        no longer a regular file, moved out of its root). Bytes that changed are returned: the caller checks the
        digest. Blocks at most as long as reading `limit` bytes takes (never waits on a FIFO or a lock)."""
        ...


class StampedContent(ABC):
    """A `FileContent` that can tell, without reading, whether its file is still the one it last read.

    A stamp is an int that changes whenever the stored bytes may have (a file's device, inode, size, mtime and
    ctime, hashed). It is what lets the server keep the verified bytes of a hot file in memory instead of
    reading and hashing them again on every request (`server/read_cache.py`). A base class rather than a
    Protocol for the reason `GeneratedContent` gives: the server asks `isinstance` on every read.
    """

    __slots__ = ()

    @abstractmethod
    def read(self, limit: int) -> bytes | None:
        """As `FileContent.read`."""

    @abstractmethod
    def read_stamped(self, limit: int) -> tuple[bytes | None, int | None]:
        """`read(limit)`, and the stamp the file had before its bytes were read; None for the stamp when it cannot
        vouch for them (it changed too recently: timestamps are coarser than writes)."""

    @abstractmethod
    def stamp(self) -> int | None:
        """The file's stamp now, reading no content (None if it cannot be had); equal stamps mean equal bytes."""


class GeneratedContent(ABC):
    """A generated (dynamic) skill's file: its bytes are produced when it is read, and no digest binds them.

    The server calls `generate` instead of `read` (there are no indexed bytes to read). A base class rather than a
    Protocol: the server asks `isinstance` on every read, which costs a Protocol's attribute walk (tens of
    microseconds) but a class check almost nothing.
    """

    __slots__ = ()

    def read(self, limit: int) -> bytes | None:
        return None

    @abstractmethod
    async def generate(self, limit: int) -> bytes:
        """The file's bytes now, at most `limit` of them; `errors.GenerationError` when they cannot be produced
        (the generator failed or took too long) or are more than `limit`. Never blocks the event loop."""


@dataclass(frozen=True, slots=True)
class ServedFile:
    """A file the catalog serves: its manifest record, how to read its bytes, and the skills listing it.

    A dynamic skill's file has a `GeneratedContent` and a record without digest or size.
    """

    file: SkillFile
    content: FileContent
    skills: tuple[str, ...]
    is_skill_md: bool
