"""Skills whose files are produced when they are read: entries say `"resources": "dynamic"`.

Spec, Resources: "When a skill's content is generated dynamically, such that stable digests cannot be published,
the server MUST set resources to the string 'dynamic'." Reading Directories: "For a dynamically generated skill, a
directory read is the only way to discover the skill's files." A `GeneratedSkill` declares its path, its
frontmatter and the names of its files up front (so listing, `skills/get` and directory reads need no generator),
and gives each file's content as bytes, text, or a callable run at each read. A callable may be a plain function
(run on a worker thread, so it may block) or an `async def` (awaited; it must not block). Each read is capped at
the spec's 16 MiB per-skill total and `timeout` seconds; a generator that raises, hangs or produces too much gives
the client -32603 with a reason and no internals (the exception goes to the server's log).

SKILL.md is the frontmatter, written from the declared fields, followed by `instructions`: the entry's frontmatter
is parsed from those very bytes, so it equals the frontmatter of every SKILL.md served. Names and fields pass the
same rules as every other skill's (`skill_rules`), checked when the skill is made.

    def today() -> str:
        return "region,total\\nnorth,12\\n"

    daily = GeneratedSkill("reports/daily", description="Assemble today's report from live data",
                           instructions="# Daily report\\nRead data/today.csv.\\n", files={"data/today.csv": today})
    service = SkillService(GeneratedSource([daily]))
"""

from __future__ import annotations

import inspect
import json
import logging
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import anyio
import anyio.to_thread

from skillwire.core.catalog import Catalog, GeneratedContent
from skillwire.core.errors import FrontmatterError, GenerationError
from skillwire.core.manifest import Skill
from skillwire.core.mime import mime_type_for
from skillwire.core.skill_rules import FileFacts, build_skill, read_frontmatter
from skillwire.core.uri import SKILL_FILE
from skillwire.sources.building import CatalogBuilder

__all__ = [
    "DEFAULT_THREADS",
    "DEFAULT_TIMEOUT_S",
    "Content",
    "GeneratedFile",
    "GeneratedSkill",
    "GeneratedSource",
    "Part",
    "Producer",
]

logger = logging.getLogger(__name__)

Content = bytes | str
"""A file's bytes, or text (sent as UTF-8)."""
Producer = Callable[[], Content] | Callable[[], Awaitable[Content]]
"""Makes a file's content when it is read: a function (run on a worker thread) or a coroutine function."""
Part = Content | Producer
"""A generated skill's file: fixed content, or a producer called at each read."""

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")  # a key YAML reads as this very string when written bare...
_YAML_WORDS = frozenset({"true", "false", "null", "yes", "no", "on", "off", "y", "n"})  # ...unless it is one of these

DEFAULT_TIMEOUT_S = 30.0
"""How long one file may take to produce before the read fails."""
DEFAULT_THREADS = 8
"""Plain-function producers running at once, per source (anyio's shared pool, which file reads use, has 40)."""


@dataclass(frozen=True)
class GeneratedSkill:
    """A skill at `path` ("team/reports/daily": its last segment is its name) whose files are made when read.

    `description` and `frontmatter` (more fields: license, metadata, ...) make SKILL.md's frontmatter;
    `instructions` is SKILL.md's body; `files` maps each other file's path in the skill ("data/today.csv") to its
    content. Raises `SkillError` (a rule's id in `.rule`) or ValueError when the skill breaks a rule.
    """

    path: str
    description: str
    instructions: Part
    files: Mapping[str, Part] = field(default_factory=dict)
    frontmatter: Mapping[str, Any] = field(default_factory=dict)
    skill: Skill = field(init=False, repr=False, compare=False)
    head: bytes = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        skill_path = tuple(self.path.split("/"))
        if any(p in ("", ".", "..") for p in skill_path):
            raise ValueError(f"skill path {self.path!r} must be '/'-separated names (no empty, '.' or '..' segment)")
        for rel in self.files:
            if rel == SKILL_FILE or rel.startswith("/") or any(p in ("", ".", "..") for p in rel.split("/")):
                raise ValueError(
                    f"file {rel!r} must be a path in the skill ('/'-separated names, not SKILL.md: that is the "
                    "instructions)"
                )
        head = _frontmatter_head({"name": skill_path[-1], "description": self.description, **self.frontmatter})
        names = sorted([SKILL_FILE, *self.files])
        facts = [FileFacts(rel, 0, "", mime_type_for(rel)) for rel in names]  # by name: no content to sniff yet
        built = build_skill(skill_path, facts, read_frontmatter(head))
        object.__setattr__(self, "head", head)
        object.__setattr__(self, "skill", Skill(built.skill_path, built.frontmatter, built.files, dynamic=True))


@dataclass(frozen=True)
class GeneratedSource:
    """A source serving `GeneratedSkill` values: its catalog never changes, its files are produced at each read.

    `timeout`: seconds one file may take to produce; `threads`: how many plain-function producers may run at once
    (a limiter of their own, so slow producers never hold the shared worker threads that large file reads and
    rebuilds use); `label`: the source in messages."""

    skills: Sequence[GeneratedSkill]
    timeout: float = field(default=DEFAULT_TIMEOUT_S, kw_only=True)
    threads: int = field(default=DEFAULT_THREADS, kw_only=True)
    label: str = field(default="generated", kw_only=True)
    revision: str | None = field(default=None, init=False)
    _limiter: anyio.CapacityLimiter = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "skills", tuple(self.skills))
        if not self.timeout > 0:
            raise ValueError(f"timeout must be positive, not {self.timeout}")
        if self.threads < 1:
            raise ValueError(f"threads must be at least 1, not {self.threads}")
        object.__setattr__(self, "_limiter", anyio.CapacityLimiter(self.threads))

    def scan(self, generation: int = 0) -> Catalog:
        """The catalog of the skills, by the shared builder (a path given twice is refused, the first kept)."""
        builder = CatalogBuilder()
        for generated in self.skills:
            contents = {
                f.uri: GeneratedFile(f.uri, generated.instructions, self.timeout, self._limiter, generated.head)
                if f.rel_path == SKILL_FILE
                else GeneratedFile(f.uri, generated.files[f.rel_path], self.timeout, self._limiter)
                for f in generated.skill.files
            }
            builder.add(generated.skill, contents, where=f"{self.label}/{generated.path}")
        return builder.build(generation)


@dataclass(frozen=True, slots=True)
class GeneratedFile(GeneratedContent):
    """One generated file: `prefix` (SKILL.md's frontmatter) then `part`'s content, made at each read."""

    uri: str
    part: Part
    timeout: float
    threads: anyio.CapacityLimiter
    prefix: bytes = b""

    async def generate(self, limit: int) -> bytes:
        data = self.prefix + await self._produce(limit)
        if len(data) > limit:
            raise GenerationError(self.uri, f"generated {len(data):,} bytes, over the limit of {limit:,}")
        return data

    async def _produce(self, limit: int) -> bytes:
        part = self.part
        if isinstance(part, bytes | str):
            return _encoded(self.uri, part)
        try:
            with anyio.fail_after(self.timeout):
                if inspect.iscoroutinefunction(part):
                    value: object = await part()
                else:
                    value = await anyio.to_thread.run_sync(part, abandon_on_cancel=True, limiter=self.threads)
                    if inspect.isawaitable(value):  # a callable object or partial wrapping a coroutine function
                        value = await cast("Awaitable[object]", value)
        except TimeoutError:
            logger.warning("generating %s took longer than %s s; the read failed", self.uri, self.timeout)
            raise GenerationError(self.uri, f"generating the content took longer than {self.timeout:g} s") from None
        except Exception:
            logger.exception("generating %s failed", self.uri)
            raise GenerationError(self.uri, "the server could not generate this content") from None
        if not isinstance(value, bytes | str):
            logger.warning("the generator of %s returned %s, not bytes or str", self.uri, type(value).__name__)
            raise GenerationError(self.uri, "the server could not generate this content")
        return _encoded(self.uri, value)


def _encoded(uri: str, value: Content) -> bytes:
    if isinstance(value, bytes):
        return value
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        logger.warning("the generator of %s returned text that is not valid Unicode (a lone surrogate)", uri)
        raise GenerationError(uri, "the server could not generate this content") from None


def _frontmatter_head(fields: Mapping[str, Any]) -> bytes:
    """SKILL.md's frontmatter block for `fields`: each value written as JSON, which YAML 1.2 reads back unchanged.

    The block is parsed again by the one SKILL.md parser (`read_frontmatter`); a field that would not come back
    equal (a float such as NaN, a value YAML reads otherwise) is a ValueError naming it.
    """
    lines = ["---"]
    for key, value in fields.items():
        if not isinstance(key, str):
            raise ValueError(f"frontmatter keys must be strings, not {key!r}")
        try:
            written = key if _PLAIN_KEY.fullmatch(key) and key.lower() not in _YAML_WORDS else json.dumps(key)
            lines.append(f"{written}: {json.dumps(value, ensure_ascii=False)}")
        except (TypeError, ValueError) as exc:
            raise ValueError(f"frontmatter field {key!r} is not JSON: {exc}") from None
    try:
        head = ("\n".join([*lines, "---"]) + "\n").encode("utf-8")
        parsed, _ = read_frontmatter(head)
    except UnicodeEncodeError:
        raise ValueError("the frontmatter holds text that is not valid Unicode (a lone surrogate)") from None
    except FrontmatterError as err:
        raise ValueError(f"the frontmatter cannot be written as YAML: {err.message}") from None
    if parsed != dict(fields):
        changed = sorted(k for k in fields if parsed.get(k, object()) != fields[k])
        raise ValueError(f"frontmatter field(s) {', '.join(changed)} would not read back unchanged from YAML")
    return head
