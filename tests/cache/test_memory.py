"""MemoryCache: verified files in memory, bounded in bytes (Lazy Retrieval: hosts SHOULD cache what they retrieve).

What it keeps is keyed by (server label, uri, digest), so an entry whose digest changed is never answered from it;
it holds at most its bound, each file charged its bytes, key and bookkeeping, least recently used out first.
"""

from __future__ import annotations

import hashlib
import random

import pytest

from skillwire.cache import ContentCache, MemoryCache, SkillCache
from skillwire.cache.memory import DEFAULT_MEMORY_CACHE_BYTES, ITEM_OVERHEAD
from skillwire.core.errors import DigestMismatch, SizeMismatch
from skillwire.core.hosting.entry import EntryResource

LABEL = "docs"
URI = "skill://pdf-processing/templates/invoice.md"
DATA = b"# Invoice\n\nCustomer:\nAmount:\n"


def record(uri: str, data: bytes) -> EntryResource:
    return EntryResource(uri, "sha256:" + hashlib.sha256(data).hexdigest(), len(data))


def charge(uri: str, data: bytes, label: str = LABEL) -> int:
    """What one file costs against the bound, computed here from the documented rule."""
    digest = record(uri, data).digest
    return len(data) + len(label) + len(uri) + len(digest) + ITEM_OVERHEAD


def test_both_caches_are_content_caches() -> None:
    """The host asks one Protocol of either store (and of a store of its author's own)."""
    assert isinstance(MemoryCache(), ContentCache)
    assert issubclass(SkillCache, ContentCache)


def test_the_default_bound_is_32_mib_and_a_file_over_an_eighth_of_it_is_not_kept() -> None:
    cache = MemoryCache()
    assert (cache.max_bytes, cache.max_item_bytes) == (32 * 1024 * 1024, 4 * 1024 * 1024)
    assert DEFAULT_MEMORY_CACHE_BYTES == 32 * 1024 * 1024


def test_round_trip_and_another_spelling_of_the_uri() -> None:
    """A kept file is answered for its uri in any spelling `same_uri` holds equal."""
    cache = MemoryCache()
    uri = "skill://pdf-processing/templates/caf%C3%A9.md"
    assert cache.get(LABEL, record(uri, DATA)) is None
    cache.put(LABEL, record(uri, DATA), DATA)
    assert cache.get(LABEL, record(uri, DATA)) == DATA
    assert cache.get(LABEL, record("skill://pdf-processing/templates/café.md", DATA)) == DATA
    assert cache.get("other-server", record(uri, DATA)) is None
    assert len(cache) == 1


def test_a_changed_digest_is_never_answered() -> None:
    """The held entry lists another digest for the uri (the file changed): a miss, whatever is kept."""
    cache = MemoryCache()
    cache.put(LABEL, record(URI, DATA), DATA)
    changed = DATA + b"Due:\n"
    assert cache.get(LABEL, record(URI, changed)) is None
    same_size = DATA.replace(b"Amount", b"Amounx")
    assert cache.get(LABEL, record(URI, same_size)) is None


def test_an_entry_whose_size_disagrees_with_the_digest_gets_nothing() -> None:
    cache = MemoryCache()
    cache.put(LABEL, record(URI, DATA), DATA)
    lying = record(URI, DATA)
    assert cache.get(LABEL, EntryResource(URI, lying.digest, lying.size + 1)) is None


@pytest.mark.parametrize(("wrong", "error"), [(DATA + b"x", SizeMismatch), (DATA.upper(), DigestMismatch)])
def test_put_refuses_bytes_that_do_not_match_the_record(wrong: bytes, error: type[Exception]) -> None:
    cache = MemoryCache()
    with pytest.raises(error):
        cache.put(LABEL, record(URI, DATA), wrong)
    assert len(cache) == 0
    assert cache.charged == 0


def test_a_file_over_the_item_bound_is_not_kept() -> None:
    cache = MemoryCache(8 * 1024)
    assert cache.max_item_bytes == 1024
    big, small = b"x" * 1025, b"y" * 1024
    cache.put(LABEL, record(URI, big), big)
    assert cache.get(LABEL, record(URI, big)) is None
    cache.put(LABEL, record(URI + ".2", small), small)
    assert cache.get(LABEL, record(URI + ".2", small)) == small


def test_the_least_recently_used_file_goes_first() -> None:
    files = {f"skill://s/{i}.md": bytes([65 + i]) * 100 for i in range(4)}
    room = sum(charge(uri, data) for uri, data in list(files.items())[:3])
    cache = MemoryCache(room, max_item_bytes=100)
    uris = list(files)
    for uri in uris[:3]:
        cache.put(LABEL, record(uri, files[uri]), files[uri])
    assert cache.get(LABEL, record(uris[0], files[uris[0]])) is not None  # 0 is now more recent than 1 and 2
    cache.put(LABEL, record(uris[3], files[uris[3]]), files[uris[3]])
    kept = [uri for uri in uris if cache.get(LABEL, record(uri, files[uri])) is not None]
    assert kept == [uris[0], uris[2], uris[3]]
    assert cache.charged == room


def test_the_total_never_passes_the_bound() -> None:
    """Many files of many sizes (empty ones too: each is charged its key and bookkeeping): the charged total,
    recomputed here file by file, never passes the bound; no file over the item bound is held."""
    rng = random.Random(20)
    bound = 64 * 1024
    cache = MemoryCache(bound)
    kept: dict[str, bytes] = {}
    for i in range(2_000):
        uri = f"skill://s/{i}-{'n' * rng.randrange(0, 300)}.md"
        data = rng.randbytes(rng.choice((0, 1, 50, 900, 4_000, 9_000)))  # 9,000: over the item bound (8 KiB)
        cache.put(LABEL, record(uri, data), data)
        kept[uri] = data
        assert cache.charged <= bound
    held = {uri: data for uri, data in kept.items() if cache.get(LABEL, record(uri, data)) is not None}
    assert len(held) == len(cache)
    assert cache.charged == sum(charge(uri, data) for uri, data in held.items())
    assert all(len(data) <= cache.max_item_bytes for data in held.values())
    largest = charge("skill://s/9999-" + "n" * 300 + ".md", b"x" * cache.max_item_bytes)
    assert cache.charged > bound - largest  # full but for the room of one file


def test_many_empty_files_are_bounded_too() -> None:
    cache = MemoryCache(10_000)
    for i in range(1_000):
        cache.put(LABEL, record(f"skill://s/{i}.md", b""), b"")
    assert 0 < len(cache) <= 10_000 // ITEM_OVERHEAD


def test_remove_origin_forgets_that_server_only() -> None:
    cache = MemoryCache()
    for label in ("a", "b"):
        cache.put(label, record(URI, DATA), DATA)
    cache.remove_origin("a")
    assert cache.get("a", record(URI, DATA)) is None
    assert cache.get("b", record(URI, DATA)) == DATA
    assert cache.charged == charge(URI, DATA, "b")


def test_a_negative_bound_is_refused() -> None:
    with pytest.raises(ValueError, match="max_bytes"):
        MemoryCache(-1)
