"""`GatewayCache` (issue 21, point 2): content by digest, verified before it is kept and on every read, never through
a link or a FIFO planted in the cache, and bounded by the documented eviction rule and byte cap."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from skillwire.core.digest import sha256_digest
from skillwire.sources.mcp import GatewayCache

DAY = 24 * 3600.0


def path_of(root: Path, digest: str) -> Path:
    return root / "content" / digest[7:9] / digest[9:]


def state_listing(*datas: bytes) -> dict[str, object]:
    """A kept state whose one skill lists a file for each of `datas` (what eviction reads)."""
    resources = [{"uri": f"skill://x/{i}.md", "digest": sha256_digest(d), "size": len(d)} for i, d in enumerate(datas)]
    entry = {"uri": "skill://x/SKILL.md", "frontmatter": {"name": "x", "description": "x"}, "resources": resources}
    return {"format": "skillwire-gateway-state", "version": 1, "skills": [{"entry": entry, "verifiedAt": 0}]}


def test_only_bytes_that_hash_to_their_digest_are_kept_and_a_changed_file_is_deleted_on_read(tmp_path: Path) -> None:
    cache = GatewayCache(tmp_path)
    data = b"# Guide\n"
    digest = sha256_digest(data)
    with pytest.raises(ValueError, match="hash to"):
        cache.put(digest, b"# Guide!")
    assert not path_of(tmp_path, digest).exists()
    assert cache.put(digest, data)
    assert cache.read(digest, len(data)) == data
    assert oct(path_of(tmp_path, digest).stat().st_mode & 0o777) == "0o600"
    path_of(tmp_path, digest).write_bytes(b"# Gu1de\n")
    assert cache.read(digest, len(data)) is None
    assert not path_of(tmp_path, digest).exists()


def test_a_link_or_a_fifo_planted_at_a_digest_is_never_followed_nor_waited_on(tmp_path: Path) -> None:
    """A link to a file outside the cache holding the right bytes is still not read through; a FIFO does not
    block the read. Both are removed; the outside file is untouched."""
    cache = GatewayCache(tmp_path / "cache")
    data = b"secret outside\n"
    digest = sha256_digest(data)
    outside = tmp_path / "outside.md"
    outside.write_bytes(data)
    cache.put(sha256_digest(b"x"), b"x")  # makes the folders
    place = path_of(tmp_path / "cache", digest)
    place.parent.mkdir(exist_ok=True)
    place.symlink_to(outside)
    assert cache.read(digest, len(data)) is None
    assert not place.is_symlink()
    assert outside.read_bytes() == data
    os.mkfifo(place)
    started = time.monotonic()
    assert cache.read(digest, len(data)) is None
    assert time.monotonic() - started < 5


def test_eviction_keeps_what_a_state_or_a_running_refresh_needs_and_deletes_the_rest(tmp_path: Path) -> None:
    """Content no state references goes; a state unused for 30 days goes first, taking its content with it; a temp
    file an hour old goes, a fresh one (a write in progress) stays; pinned content stays."""
    cache = GatewayCache(tmp_path)
    kept, dropped, pinned, stale = b"kept\n", b"dropped\n", b"pinned\n", b"stale\n"
    for data in (kept, dropped, pinned, stale):
        cache.put(sha256_digest(data), data)
    cache.save_state("aa", state_listing(kept))
    cache.save_state("bb", state_listing(stale))
    old = time.time() - 31 * DAY
    os.utime(tmp_path / "upstreams" / "bb.json", (old, old))
    shard = path_of(tmp_path, sha256_digest(kept)).parent
    (shard / ".tmp-old").write_bytes(b"crashed")
    os.utime(shard / ".tmp-old", (time.time() - 2 * 3600, time.time() - 2 * 3600))
    (shard / ".tmp-new").write_bytes(b"being written")
    with cache.pinned([sha256_digest(pinned)]):
        freed = cache.evict()
    assert freed == len(dropped) + len(stale)
    left = {p.name for p in (tmp_path / "content").glob("*/*")}
    assert left == {path_of(tmp_path, sha256_digest(d)).name for d in (kept, pinned)} | {".tmp-new"}
    assert sorted(p.name for p in (tmp_path / "upstreams").iterdir()) == ["aa.json"]
    assert cache.used_bytes == len(kept) + len(pinned)


def test_the_byte_cap_is_never_passed_and_unreferenced_content_makes_room(tmp_path: Path) -> None:
    cache = GatewayCache(tmp_path, max_bytes=10)
    first, second = b"12345678", b"abcdefgh"
    assert cache.put(sha256_digest(first), first)
    cache.save_state("aa", state_listing(first))
    assert not cache.put(sha256_digest(second), second)  # the kept state's content is never evicted for room
    assert not path_of(tmp_path, sha256_digest(second)).exists()
    cache.save_state("aa", state_listing())
    assert cache.put(sha256_digest(second), second)  # now the first is referenced by nothing: evicted for room
    assert not path_of(tmp_path, sha256_digest(first)).exists()
    assert cache.used_bytes == len(second) <= cache.max_bytes
