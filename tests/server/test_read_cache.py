"""The read cache (skillwire choice, issue 13): verified bytes of hot files answer reads from memory, and a file
changed at its source, a rebuilt catalog or a hidden skill is never answered from it."""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from skillwire.cli.main import main
from skillwire.core.catalog import Catalog, StampedContent
from skillwire.core.scopes import Visibility
from skillwire.server.read_cache import ReadCache
from skillwire.server.skill_service import ServeOptions, SkillService
from skillwire.sources.digest_cache import RACY_NS
from skillwire.sources.folder.source import FolderSource
from tests.sources.contract.cases import skill_md

pytestmark = pytest.mark.anyio

SKILLS = ("hot", "edited", "rebuilt", "hidden", "shown")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder per test's skill, written once and left alone long enough that its stamps vouch for its bytes
    (a file changed within the last two seconds is never cached: timestamps are coarser than writes)."""
    base = tmp_path_factory.mktemp("skills")
    for name in SKILLS:
        (base / name).mkdir()
        (base / name / "SKILL.md").write_bytes(skill_md(name))
        (base / name / "notes.md").write_bytes(f"{name} notes, first version\n".encode())
        (base / name / "logo.bin").write_bytes(b"\x89PNG\x00\x01" + name.encode())
    time.sleep(RACY_NS / 1e9 + 0.1)
    return base


def _text(result: dict[str, object]) -> object:
    contents = result["contents"]
    assert isinstance(contents, list)
    return contents[0].get("text", contents[0].get("blob"))


async def test_a_hot_file_is_answered_from_memory_with_the_same_contents(root: Path) -> None:
    """The second read of an unchanged file is a cache hit and answers exactly what the first read sent."""
    service = SkillService(FolderSource([root]))
    first = await service.read_resource("skill://hot/notes.md", modern=True)
    blob = await service.read_resource("skill://hot/logo.bin", modern=False)
    assert service.read_cache.hits == 0
    assert len(service.read_cache) == 2
    assert await service.read_resource("skill://hot/notes.md", modern=True) == first
    assert await service.read_resource("skill://hot/logo.bin", modern=False) == blob
    assert service.read_cache.hits == 2
    assert _text(first) == "hot notes, first version\n"


async def test_a_file_changed_at_its_source_is_never_answered_from_the_cache(root: Path) -> None:
    """An edit of the same size changes the file's stamp: the read misses, re-hashes, rebuilds and sends the new
    bytes, never the cached ones."""
    service = SkillService(FolderSource([root]))
    notes = root / "edited" / "notes.md"
    assert _text(await service.read_resource("skill://edited/notes.md", modern=True)) == "edited notes, first version\n"
    assert len(service.read_cache) == 1
    notes.write_bytes(b"edited notes, other version\n")  # the same size
    assert _text(await service.read_resource("skill://edited/notes.md", modern=True)) == "edited notes, other version\n"
    assert service.read_cache.hits == 0
    assert service.stats.rehash_mismatches == 1
    assert len(service.read_cache) == 0  # just written: its stamp is too recent to vouch for its bytes


async def test_a_rebuilt_catalog_starts_with_an_empty_cache(root: Path) -> None:
    """Entries hold for the snapshot they were verified against: a rebuild (watcher, SIGHUP) drops them all."""
    service = SkillService(FolderSource([root]))
    await service.read_resource("skill://rebuilt/notes.md", modern=True)
    assert len(service.read_cache) == 1
    await service.rebuild()
    assert len(service.read_cache) == 0
    await service.read_resource("skill://rebuilt/notes.md", modern=True)
    assert service.read_cache.hits == 0
    assert len(service.read_cache) == 1


async def test_a_cached_file_of_a_hidden_skill_is_answered_as_missing(root: Path) -> None:
    """A caller whose scope hides the skill gets -32602 even though another caller's read put the file in the
    cache; a caller who sees it gets the cached bytes."""
    service = SkillService(FolderSource([root]))
    await service.read_resource("skill://hidden/notes.md", modern=True)
    with pytest.raises(MCPError) as refused:
        await service.read_resource("skill://hidden/notes.md", modern=True, scope=Visibility(["shown"]))
    assert refused.value.error.code == -32602
    seen = await service.read_resource("skill://hidden/notes.md", modern=True, scope=Visibility(["hidden"]))
    assert _text(seen) == "hidden notes, first version\n"
    assert service.read_cache.hits == 1


async def test_a_read_cache_of_zero_bytes_keeps_nothing(root: Path) -> None:
    """`read_cache_bytes=0` turns the cache off: every read goes to the file."""
    service = SkillService(FolderSource([root]), ServeOptions(read_cache_bytes=0))
    for _ in range(2):
        await service.read_resource("skill://shown/notes.md", modern=True)
    assert len(service.read_cache) == 0
    assert service.read_cache.hits == 0


class _Held(StampedContent):
    """Bytes in memory with a stamp the test sets (an honest stand-in for a file: the cache reads nothing)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.now = 1

    def read(self, limit: int) -> bytes | None:
        return self.data[: limit + 1]

    def read_stamped(self, limit: int) -> tuple[bytes | None, int | None]:
        return self.read(limit), self.now

    def stamp(self) -> int | None:
        return self.now


def test_the_cache_is_bounded_by_bytes_and_drops_the_least_recently_used() -> None:
    """However many files are read, what is kept stays under the capacity; the oldest unused entry goes first."""
    catalog = Catalog((), {})
    cache = ReadCache(capacity=3_000)
    held = _Held(b"x" * 1000)
    for i in range(10):
        cache.put(catalog, held, 1, 1000, {"uri": f"skill://a/{i}.md", "mimeType": "text/markdown", "text": "x" * 1000})
        assert cache.used <= cache.capacity
        cache.get("skill://a/0.md", catalog)  # kept in use: never the one dropped
    assert cache.get("skill://a/0.md", catalog) is not None
    assert cache.get("skill://a/9.md", catalog) is not None
    assert cache.get("skill://a/1.md", catalog) is None
    assert len(cache) == 2


def test_an_entry_whose_stamp_changed_is_dropped() -> None:
    """A stamp that moved on means other bytes: the entry answers nothing and goes."""
    catalog = Catalog((), {})
    cache = ReadCache()
    held = _Held(b"one")
    cache.put(catalog, held, 1, 3, {"uri": "skill://a/x.md", "mimeType": "text/plain", "text": "one"})
    held.now = 2
    assert cache.get("skill://a/x.md", catalog) is None
    assert len(cache) == 0
    assert cache.used == 0


@pytest.mark.parametrize("value", ["-1", "many"])
def test_a_bad_read_cache_size_is_a_usage_error_naming_the_flag(
    tmp_path: Path, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`skillwire serve --read-cache-mb` takes a whole number of MiB, 0 or more, before anything is scanned."""
    with pytest.raises(SystemExit) as exited:
        main(["serve", str(tmp_path), "--read-cache-mb", value])
    assert exited.value.code == 2
    assert "argument --read-cache-mb:" in capsys.readouterr().err


def test_an_entry_kept_for_a_newer_snapshot_drops_every_older_one() -> None:
    """A catalog swapped in without a rebuild (a scheduled switch) leaves no entry of the previous one behind."""
    before, after = Catalog((), {}), Catalog((), {})
    cache = ReadCache()
    held = _Held(b"one")
    cache.put(before, held, 1, 3, {"uri": "skill://a/x.md", "mimeType": "text/plain", "text": "one"})
    cache.put(after, held, 1, 3, {"uri": "skill://a/y.md", "mimeType": "text/plain", "text": "one"})
    assert cache.get("skill://a/x.md", after) is None
    assert len(cache) == 1
    assert cache.get("skill://a/y.md", after) is not None


@pytest.mark.parametrize(
    ("size", "text"), [(0, ""), (40, "a line of notes, forty characters long.\n"), (4000, "é" * 2000)]
)
def test_what_the_cache_counts_is_what_its_entries_hold_in_memory(size: int, text: str) -> None:
    """Memory per cached item is bounded (issue 23): the bytes tracemalloc sees the entries hold (the text, the URI,
    the record and its slot) are at most what the cache counts against its capacity, and not far below it, so
    `--read-cache-mb` bounds the memory the cache really takes. A skillwire choice."""
    catalog = Catalog((), {})
    cache = ReadCache(capacity=1 << 30)
    held = _Held(b"")
    count = 2000
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(count):  # each contents dict, text and URI made here and held by the cache alone
            uri = f"skill://team-{i % 3}/area-{i % 17}/skill-{i:05d}/references/doc-{i % 4}.md"
            cache.put(catalog, held, 1, size, {"uri": uri, "mimeType": "text/markdown", "text": text + str(i)})
        held_bytes = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(cache) == count
    assert held_bytes <= cache.used, (held_bytes / count, cache.used / count)
    assert held_bytes >= 0.7 * cache.used, (held_bytes / count, cache.used / count)
