"""SkillCache on real temporary folders (Security Considerations: cache integrity, isolation, durable origin)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from skillwire.cache import MARKER_NAME, SkillCache, default_root, location_problem
from skillwire.core.errors import CacheError, CacheLocationRefused, DigestMismatch, InvalidSkillUri, SizeMismatch
from skillwire.core.hosting.entry import EntryResource
from tests.support.victims import snapshot, victim_folder

LABEL = "docs-server"
URI = "skill://pdf-processing/templates/invoice.md"
DATA = b"# Invoice\r\n\r\nCustomer:\r\nAmount:\r\n"


def record(uri: str, data: bytes) -> EntryResource:
    return EntryResource(uri, "sha256:" + hashlib.sha256(data).hexdigest(), len(data))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake home folder, so the home-level discovery folders checked are under tmp_path."""
    fake = tmp_path / "home"
    fake.mkdir()
    monkeypatch.setenv("HOME", str(fake))
    return fake


@pytest.fixture
def cache(tmp_path: Path, home: Path) -> SkillCache:
    return SkillCache(tmp_path / "cache")


@pytest.fixture
def umask_zero() -> Iterator[None]:
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def below_root(cache: SkillCache, path: Path) -> tuple[str, ...]:
    return path.resolve().relative_to(cache.root).parts


# -- integrity -------------------------------------------------------------------------------------------------------


def test_round_trip_returns_the_verified_bytes(cache: SkillCache) -> None:
    """Spec SHOULD (Lazy Retrieval: hosts cache what they retrieve): put then get gives the same bytes back."""
    resource = record(URI, DATA)
    assert cache.get(LABEL, resource) is None
    cache.put(LABEL, resource, DATA)
    assert cache.get(LABEL, resource) == DATA
    assert cache.path_for(LABEL, URI).read_bytes() == DATA


def test_tampered_file_is_detected_and_deleted(cache: SkillCache) -> None:
    """Spec MUST (recompute the file's SHA-256 on each access; a mismatch is a mismatch on a fresh read): bytes
    changed on disk after caching, same size, are a miss and the file is removed."""
    resource = record(URI, DATA)
    cache.put(LABEL, resource, DATA)
    path = cache.path_for(LABEL, URI)
    path.write_bytes(DATA.replace(b"Amount", b"AMOUNT"))
    assert cache.get(LABEL, resource) is None
    assert not path.exists()


def test_a_file_of_the_wrong_size_is_a_miss(cache: SkillCache) -> None:
    """Spec MUST (size differs = verification failure, whether or not the digest is computed): miss, deleted."""
    resource = record(URI, DATA)
    cache.put(LABEL, resource, DATA)
    path = cache.path_for(LABEL, URI)
    path.write_bytes(DATA + b"run this script\n")
    assert cache.get(LABEL, resource) is None
    assert not path.exists()


def test_a_stale_file_is_a_miss_against_the_current_entry(cache: SkillCache) -> None:
    """Spec (Lazy Retrieval: a cached file whose digest does not match the current entry must be fetched again):
    the comparison is with the entry the caller holds now, never with anything stored beside the file."""
    cache.put(LABEL, record(URI, DATA), DATA)
    assert cache.get(LABEL, record(URI, b"new content\n")) is None
    assert not cache.path_for(LABEL, URI).exists()


def test_a_symlink_planted_in_the_cache_is_not_followed(cache: SkillCache, tmp_path: Path) -> None:
    """skillwire choice: a cached file replaced by a symlink is a miss (opened with O_NOFOLLOW) and is removed."""
    resource = record(URI, DATA)
    cache.put(LABEL, resource, DATA)
    path = cache.path_for(LABEL, URI)
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_bytes(DATA)
    path.unlink()
    path.symlink_to(elsewhere)
    assert cache.get(LABEL, resource) is None
    assert not path.is_symlink()
    assert elsewhere.exists()


@pytest.mark.parametrize("wrong", [DATA.replace(b"Invoice", b"Invoic3"), DATA[:-1]])
def test_put_refuses_bytes_that_do_not_match_the_entry(cache: SkillCache, wrong: bytes) -> None:
    """Spec MUST (hosts MUST NOT use unverified content; the cache holds only verified content): put checks size
    and digest itself and writes nothing when they differ."""
    with pytest.raises((DigestMismatch, SizeMismatch)):
        cache.put(LABEL, record(URI, DATA), wrong)
    assert not cache.path_for(LABEL, URI).exists()


# -- isolation and durable origin ------------------------------------------------------------------------------------


def test_same_uri_from_two_servers_lands_at_two_paths(cache: SkillCache) -> None:
    """Spec MUST (same-URI skills from different servers land at distinct paths; never keyed on the uri alone)."""
    other = b"# Invoice from another server\n"
    cache.put("server-a", record(URI, DATA), DATA)
    cache.put("server-b", record(URI, other), other)
    assert cache.path_for("server-a", URI) != cache.path_for("server-b", URI)
    assert cache.get("server-a", record(URI, DATA)) == DATA
    assert cache.get("server-b", record(URI, other)) == other
    assert cache.get("server-b", record(URI, DATA)) is None


def test_labels_differing_only_in_case_stay_apart(cache: SkillCache) -> None:
    """skillwire choice: upper case is percent-encoded, so case-insensitive file systems keep labels apart."""
    assert cache.path_for("Docs", URI) != cache.path_for("docs", URI)
    assert below_root(cache, cache.path_for("Docs", URI))[0].lower() != "docs"


@pytest.mark.parametrize(
    ("label", "uri"),
    [
        (LABEL, URI),
        ("Docs Server/2", "skill://acme/billing/refunds/SKILL.md"),
        ("..", "github://owner/repo/skills/refunds/SKILL.md"),
        ("ünïcödé", "skill://a/%2e%2e/x%2Fy.md"),
        (".claude", "skills://x/.hidden/SKILL.md"),
        ("l" * 400, "skill://a/" + "s" * 300 + "/" + "f" * 300 + ".md"),
    ],
)
def test_origin_and_uri_are_recoverable_from_the_path(cache: SkillCache, label: str, uri: str) -> None:
    """Spec MUST (the originating server is recoverable from the path): `origin_of` inverts `path_for`, also for
    hashed long components once the file is stored."""
    data = b"content\n"
    cache.put(label, record(uri, data), data)
    path = cache.path_for(label, uri)
    assert cache.origin_of(path) == (label, uri)
    assert cache.get(label, record(uri, data)) == data


@pytest.mark.parametrize(
    "uri",
    [
        "skill://a/%2e%2e/%2E%2E/etc/passwd",
        "skill://a/.git/config",
        "skill://..%2f..%2f/x",
        "skill://a/" + "x" * 5000,
        "skill://a/" + "/".join(["d"] * 40) + "/f.md",
        "skill://a/back\\slash/..\\..\\x",
    ],
)
def test_hostile_uris_stay_under_the_root(cache: SkillCache, uri: str) -> None:
    """skillwire choice (Security Considerations: content stays in the excluded location): every component is
    percent-encoded, none starts with '.', long ones are hashed; the file lands under the root."""
    data = b"x"
    cache.put(LABEL, record(uri, data), data)
    path = cache.path_for(LABEL, uri)
    parts = below_root(cache, path)
    assert parts, path
    assert all(not p.startswith(".") and len(p.encode()) <= 130 for p in parts)
    assert path.resolve().is_relative_to(cache.root)
    assert cache.get(LABEL, record(uri, data)) == data


@pytest.mark.parametrize(
    "uri",
    ["skill://a/../../etc/passwd", "skill://a/./x", "skill://a//x", "skill://a/x/", "no-scheme/x", "://x"],
)
def test_uris_with_traversal_segments_are_refused(cache: SkillCache, uri: str) -> None:
    """skillwire choice: '..', '.' and empty segments (and URIs without scheme://) have no cache path at all."""
    with pytest.raises(InvalidSkillUri):
        cache.path_for(LABEL, uri)


def test_remove_origin_deletes_only_that_server(cache: SkillCache) -> None:
    """Spec SHOULD (remove a server's cached skill content when the user removes that server)."""
    cache.put("server-a", record(URI, DATA), DATA)
    cache.put("server-b", record(URI, DATA), DATA)
    cache.remove_origin("server-a")
    assert not cache.path_for("server-a", URI).exists()
    assert cache.get("server-b", record(URI, DATA)) == DATA
    cache.remove_origin("never-seen")  # a no-op


def test_root_carries_an_mcp_origin_marker(cache: SkillCache) -> None:
    """Spec MUST (content from the cache is treated as having arrived over MCP, also after restart): the root
    holds a marker saying so (skillwire choice of how)."""
    cache.put(LABEL, record(URI, DATA), DATA)
    marker = (cache.root / MARKER_NAME).read_text(encoding="utf-8")
    assert "arrived over MCP" in marker
    assert "UNTRUSTED" in marker


@pytest.mark.usefixtures("umask_zero")
def test_files_are_private_and_written_atomically(cache: SkillCache) -> None:
    """skillwire choice (defence in depth): folders 0o700, files 0o600 whatever the umask; no temp file left."""
    cache.put(LABEL, record(URI, DATA), DATA)
    for path in [cache.root, *cache.root.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), path
        assert not path.name.startswith(".tmp-")


# -- location rule ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "inside",
    [
        ".claude/skills",
        ".claude/skills/mcp-cache",
        ".agents/skills/x",
        ".codex/skills",
        ".gemini/skills/a/b",
        ".cursor/skills/c",
        ".claude/cache",
    ],
)
def test_a_root_inside_a_discovery_folder_is_refused(tmp_path: Path, home: Path, inside: str) -> None:
    """Spec MUST (cache MCP content in a location excluded from every filesystem-skill discovery path): a root in
    an agent's `skills` folder, or anywhere in an agent folder (where a label could make `skills`), is refused."""
    for base in (home, tmp_path / "project"):
        with pytest.raises(CacheLocationRefused):
            SkillCache(base / inside)


def test_a_symlink_into_a_discovery_folder_is_refused(tmp_path: Path, home: Path) -> None:
    """Spec MUST (excluded location), skillwire choice (judged on the resolved real path): a root that is a
    symlink into `~/.claude/skills` is refused."""
    target = home / ".claude" / "skills"
    target.mkdir(parents=True)
    link = tmp_path / "innocent-cache"
    link.symlink_to(target)
    with pytest.raises(CacheLocationRefused):
        SkillCache(link / "mcp")


def test_a_root_near_a_given_discovery_path_is_refused(tmp_path: Path, home: Path) -> None:
    """Spec MUST (excluded from every discovery path) on a user-given list: inside, equal to, or containing one."""
    skills = tmp_path / "team" / "skills"
    for root in (skills, skills / "cache", tmp_path / "team"):
        with pytest.raises(CacheLocationRefused) as caught:
            SkillCache(root, discovery_paths=[skills])
        assert caught.value.root == root
    assert location_problem(tmp_path / "cache", [skills]) is None


def test_default_root_follows_xdg(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """skillwire choice: `$XDG_CACHE_HOME/skillwire/mcp-skills`, else `~/.cache/...` (a relative XDG is ignored)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_root() == tmp_path / "xdg" / "skillwire" / "mcp-skills"
    assert SkillCache().root == (tmp_path / "xdg" / "skillwire" / "mcp-skills").resolve()
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")
    assert default_root() == home / ".cache" / "skillwire" / "mcp-skills"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_root() == home / ".cache" / "skillwire" / "mcp-skills"


def test_nothing_is_written_until_a_put(tmp_path: Path, home: Path) -> None:
    """Spec SHOULD (populated on demand as files are read): creating a cache touches no disk."""
    SkillCache(tmp_path / "cache")
    assert not (tmp_path / "cache").exists()


def test_origin_of_refuses_paths_it_did_not_make(cache: SkillCache, tmp_path: Path) -> None:
    """skillwire choice: only paths the cache writes decode; an altered hashed-segment record is detected."""
    with pytest.raises(ValueError, match="not inside"):
        cache.origin_of(tmp_path / "elsewhere" / "x")
    with pytest.raises(ValueError, match="not a cached file"):
        cache.origin_of(cache.root / MARKER_NAME)
    with pytest.raises(ValueError, match="not a path component"):
        cache.origin_of(cache.root / "Upper" / "skill" / "a")
    uri = "skill://a/" + "s" * 300
    cache.put(LABEL, record(uri, b"x"), b"x")
    path = cache.path_for(LABEL, uri)
    sidecar = path.with_name(path.name + ".segment")
    sidecar.write_bytes(b"forged")
    with pytest.raises(ValueError, match="altered"):
        cache.origin_of(path)


# -- planted links, FIFOs and layout clashes (issue 9, hole 6) --------------------------------------------------------

FREEZE_TIMEOUT_S = 15.0


def _call_or_unfreeze(fifo: Path, call: Callable[[], object]) -> object:
    """Run `call` in a thread; if it is still blocked after FREEZE_TIMEOUT_S, open the FIFO's write end to free it
    (so a frozen cache fails this test instead of hanging the suite) and fail."""
    outcome: list[object] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as err:  # handed to the test's thread below
            errors.append(err)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(FREEZE_TIMEOUT_S)
    if worker.is_alive():
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(FREEZE_TIMEOUT_S)
        pytest.fail(f"the cache blocked on the FIFO planted at {fifo.name} for {FREEZE_TIMEOUT_S:.0f} s")
    if errors:
        raise errors[0]
    return outcome[0]


def test_a_directory_symlink_planted_in_the_cache_is_never_followed(cache: SkillCache, tmp_path: Path) -> None:
    """Issue 9 hole 6: a folder of the cache swapped for a link to a victim folder; a read (a miss) and a refetch
    must leave the victim untouched (O_NOFOLLOW on the whole path covered only the last component: the victim's
    invoice.md was read, then deleted as a mismatch) and the refetch lands inside the cache."""
    resource = record(URI, DATA)
    cache.put(LABEL, resource, DATA)
    templates = cache.path_for(LABEL, URI).parent
    victim = victim_folder(tmp_path)
    before = snapshot(victim)
    shutil.rmtree(templates)
    templates.symlink_to(victim, target_is_directory=True)
    assert cache.get(LABEL, resource) is None
    assert snapshot(victim) == before
    cache.put(LABEL, resource, DATA)  # the host's refetch
    assert snapshot(victim) == before
    assert not templates.is_symlink()
    assert templates.is_dir()
    assert cache.get(LABEL, resource) == DATA


def test_a_label_folder_planted_as_a_symlink_is_replaced_not_followed(cache: SkillCache, tmp_path: Path) -> None:
    """Issue 9 hole 6: the link can sit at any depth, the server's own folder included; removing the server
    removes the link, never the victim's files."""
    victim = victim_folder(tmp_path)
    before = snapshot(victim)
    cache.put("other", record(URI, DATA), DATA)  # makes the root
    label_folder = cache.root / LABEL
    label_folder.symlink_to(victim, target_is_directory=True)
    resource = record(URI, DATA)
    assert cache.get(LABEL, resource) is None
    cache.put(LABEL, resource, DATA)
    assert cache.get(LABEL, resource) == DATA
    label_folder.rename(tmp_path / "kept")
    label_folder.symlink_to(victim, target_is_directory=True)
    cache.remove_origin(LABEL)
    assert not label_folder.exists()
    assert not label_folder.is_symlink()
    assert snapshot(victim) == before


def test_a_fifo_planted_at_a_cached_path_is_a_miss_not_a_freeze(cache: SkillCache) -> None:
    """Issue 9 hole 6: a FIFO at a cached file's path froze `get` for good (open waited for a writer); now it is
    a miss, removed, and the next put stores the verified bytes there."""
    resource = record(URI, DATA)
    cache.put(LABEL, resource, DATA)
    path = cache.path_for(LABEL, URI)
    path.unlink()
    os.mkfifo(path)
    assert _call_or_unfreeze(path, lambda: cache.get(LABEL, resource)) is None
    cache.put(LABEL, resource, DATA)
    assert stat.S_ISREG(path.lstat().st_mode)
    assert cache.get(LABEL, resource) == DATA


def test_a_fifo_or_file_planted_where_a_folder_belongs_is_replaced(cache: SkillCache) -> None:
    """Issue 9 hole 6: a FIFO (or a plain file) in place of a cache folder is a miss and is replaced by put."""
    resource = record(URI, DATA)
    cache.put(LABEL, resource, DATA)
    templates = cache.path_for(LABEL, URI).parent
    shutil.rmtree(templates)
    os.mkfifo(templates)
    assert _call_or_unfreeze(templates, lambda: cache.get(LABEL, resource)) is None
    assert _call_or_unfreeze(templates, lambda: cache.put(LABEL, resource, DATA)) is None
    assert cache.get(LABEL, resource) == DATA
    shutil.rmtree(templates)
    templates.write_bytes(b"not a folder\n")
    cache.put(LABEL, resource, DATA)
    assert cache.get(LABEL, resource) == DATA


def test_a_file_and_a_folder_of_one_name_from_two_entries_replace_each_other(cache: SkillCache) -> None:
    """Issue 9 hole 6: `skill://a/sub` cached as a file, then `skill://a/sub/file.md` from a later entry (or the
    reverse) is no raw IsADirectoryError: the newer content replaces the older inside the cache."""
    as_file, inside = record("skill://a/sub", b"a file\n"), record("skill://a/sub/file.md", b"inside\n")
    cache.put(LABEL, as_file, b"a file\n")
    cache.put(LABEL, inside, b"inside\n")
    assert cache.get(LABEL, inside) == b"inside\n"
    assert cache.get(LABEL, as_file) is None
    cache.put(LABEL, as_file, b"a file\n")
    assert cache.get(LABEL, as_file) == b"a file\n"
    assert cache.get(LABEL, inside) is None


def test_a_cache_root_swapped_for_a_symlink_is_refused(tmp_path: Path, home: Path) -> None:
    """skillwire choice (held before issue 9, kept by the fd walk): the root itself replaced by a link after it was
    chosen is refused by put and a miss for get; the victim is untouched."""
    cache = SkillCache(tmp_path / "cache")
    resource = record(URI, DATA)
    cache.put(LABEL, resource, DATA)
    victim = victim_folder(tmp_path)
    before = snapshot(victim)
    shutil.rmtree(cache.root)
    cache.root.symlink_to(victim, target_is_directory=True)
    assert cache.get(LABEL, resource) is None
    with pytest.raises(CacheError):
        cache.put(LABEL, resource, DATA)
    assert snapshot(victim) == before


def test_a_folder_planted_at_a_cached_path_is_removed_without_following_what_it_holds(
    cache: SkillCache, tmp_path: Path
) -> None:
    """Issue 9 hole 6: a folder at a cached file's path, holding a link to a victim folder, a FIFO and nested
    folders, is a miss; put removes it by file descriptor (the link itself, never the victim's files) and writes."""
    resource = record(URI, DATA)
    path = cache.path_for(LABEL, URI)
    victim = victim_folder(tmp_path)
    before = snapshot(victim)
    cache.put(LABEL, resource, DATA)
    path.unlink()
    (path / "deep" / "er").mkdir(parents=True)
    (path / "deep" / "er" / "x.md").write_bytes(b"x")
    (path / "link").symlink_to(victim, target_is_directory=True)
    os.mkfifo(path / "deep" / "pipe")
    assert _call_or_unfreeze(path / "deep" / "pipe", lambda: cache.get(LABEL, resource)) is None
    assert _call_or_unfreeze(path / "deep" / "pipe", lambda: cache.put(LABEL, resource, DATA)) is None
    assert cache.get(LABEL, resource) == DATA
    assert snapshot(victim) == before
