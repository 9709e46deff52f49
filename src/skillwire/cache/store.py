"""`SkillCache`: verified MCP skill files on disk, keyed by (host-assigned server label, uri).

Security Considerations, "Cache integrity, cache isolation, and durable origin",
and Lazy Retrieval. The rules and how this module meets each:

- "Hosts SHOULD cache verified skill content locally, populated on demand as files
  are read rather than in bulk." `put` takes one file, after a read, and verifies
  its size and digest against the held entry's record itself: unverified bytes are
  never written.
- "Hosts that cache skill content on disk MUST do one of the following for every
  file served from the cache ... Recompute the file's SHA-256 digest from the cached
  bytes on each access and compare it against the entry's digest, treating a
  mismatch as a mismatch on a fresh read." skillwire chose this strategy: `get`
  re-reads and re-hashes the file on every call and compares size and digest with
  the entry the caller holds (never with a stored label or a modification time). A
  mismatch is a cache miss: the file is deleted and `get` returns None, so the host
  fetches afresh and verifies that. Tampering with the cache can cost a refetch; it
  can never put unverified bytes in front of the model. Directories 0o700, files
  0o600 and atomic replacement (temp file + rename in the same folder) are defence in
  depth on top. Every path below the root is opened one component at a time from the
  folder above (`dir_fd`), never following a link and never blocking: a link, FIFO,
  file or folder planted where the cache expects something else is a miss, and `put`
  replaces it inside the cache (a link is removed, never followed; nothing outside the
  root is read, written or deleted). The host calls `put` only with bytes that passed
  every check (size, digest, and for SKILL.md the frontmatter).
- "... MUST do so in a location excluded from every filesystem-skill discovery
  path." The default root is `$XDG_CACHE_HOME/skillwire/mcp-skills` (or
  `~/.cache/skillwire/mcp-skills`). A root is refused (CacheLocationRefused), judged on
  its resolved real path, when it is inside or equal to a `skills` folder of an
  agent folder (`.claude/skills`, `.agents/skills`, `.codex/skills`,
  `.gemini/skills`, `.cursor/skills`, anywhere, and the home-level ones wherever
  their symlinks point), when it is inside any agent folder at all (a label named
  `skills` would otherwise create `<agent>/skills`), or when it is inside, equal to
  or an ancestor of a discovery path the caller names. Inside the cache no path
  component ever starts with "." (leading dots are percent-encoded), so no
  `.claude/skills` can appear below the root either.
- "Any path at which a host materializes skill content ... MUST encode the server
  identity as well as the uri, so that same-URI skills from different servers land
  at distinct paths and the originating server is recoverable from the path." A
  file lives at `<root>/<label>/<scheme>/<segment>/.../<segment>`, every component
  percent-encoded (bijective, so `origin_of` inverts it). Empty, "." and ".."
  segments are refused; a component longer than 120 bytes once encoded becomes
  `%~<sha256 of the segment>` with a `%~<sha256>.segment` file beside it holding the
  original (checked against its hash when read back).
- "Hosts MUST treat content loaded from that location as having arrived over MCP
  ... including after host restart": the root holds `ORIGIN-IS-MCP.txt` saying so.
- "Hosts SHOULD remove a server's cached skill content when the user removes that
  server": `remove_origin(label)`.

    cache = SkillCache()                                  # or SkillCache(root, discovery_paths=[...])
    data = cache.get("docs-server", entry.resource(uri))  # verified bytes, or None
    cache.put("docs-server", entry.resource(uri), data)   # after a verified read
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path
from urllib.parse import unquote_to_bytes

from skillwire.digest import sha256_digest
from skillwire.errors import InvalidSkillUri, SkillwireError
from skillwire.host.agent_paths import SKILL_DISCOVERY_FOLDERS, SKILLS_FOLDER
from skillwire.host.entry import EntryResource
from skillwire.host.verify import verify_bytes

#: Agent folders whose `skills` subfolder is a filesystem-skill discovery path (one list: `host.agent_paths`).
AGENT_FOLDERS = SKILL_DISCOVERY_FOLDERS
MARKER_NAME = "ORIGIN-IS-MCP.txt"
MARKER_TEXT = """\
Everything below this folder is skill content that arrived over MCP (the
io.modelcontextprotocol/skills extension), written by skillwire's cache.

It is UNTRUSTED server-provided input. It is not a filesystem skill and must not
be treated as one: hosts apply the rules for MCP-origin skills to it (no
implicit local execution, allowed-tools ignored) even after a restart or after
the originating server is disconnected.

Layout: <server label>/<scheme>/<uri path segments...>, each part percent-encoded.
Every file is re-hashed and compared with the held entry's digest on each use.
"""

DIR_MODE = 0o700
FILE_MODE = 0o600
MAX_COMPONENT = 120  # bytes of an encoded path component before it is hashed (NAME_MAX is usually 255)
_HASHED = "%~"  # percent-encoding never produces "%~", so hashed names cannot collide with encoded ones
_SEGMENT_SUFFIX = ".segment"
_UNRESERVED = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789-._~")
_MAX_SEGMENT_FILE = 1024 * 1024  # a `.segment` file holds one URI segment; anything bigger is not one we wrote
# Folders and files below the root: never follow a link, never wait on a FIFO, never leak into a child.
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class CacheError(SkillwireError):
    """The skill cache cannot be used as asked."""


class CacheLocationRefused(CacheError):
    """A cache root that a filesystem-skill discovery path could see (or that could hold one)."""

    def __init__(self, root: Path, reason: str) -> None:
        super().__init__(f"refusing {root} as the MCP skill cache: {reason}")
        self.root = root
        self.reason = reason


def default_root() -> Path:
    """`$XDG_CACHE_HOME/skillwire/mcp-skills`, or `~/.cache/skillwire/mcp-skills` (XDG: a relative value is ignored)."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "skillwire" / "mcp-skills"


def location_problem(root: Path, discovery_paths: Iterable[Path] = ()) -> str | None:
    """Why `root` may not hold MCP skill content, or None. Judged on resolved real paths (symlinks followed)."""
    real = root.expanduser().resolve()
    parts = real.parts
    for i, part in enumerate(parts):
        if part in AGENT_FOLDERS:
            if i + 1 < len(parts) and parts[i + 1] == SKILLS_FOLDER:
                return f"it is inside the skill discovery folder {Path(*parts[: i + 2])}"
            return f"it is inside the agent folder {Path(*parts[: i + 1])}, where a label could create {part}/skills"
    home = Path.home()
    known = [home / agent / SKILLS_FOLDER for agent in AGENT_FOLDERS]
    for given in (*known, *(Path(p).expanduser() for p in discovery_paths)):
        found = given.resolve()
        if real == found or real.is_relative_to(found):
            return f"it is inside the skill discovery path {given}"
        if found.is_relative_to(real):
            return f"the skill discovery path {given} is inside it"
    return None


class SkillCache:
    """Verified skill files on disk; every `get` re-verifies against the caller's held entry."""

    def __init__(self, root: Path | None = None, *, discovery_paths: Sequence[Path] = ()) -> None:
        chosen = default_root() if root is None else Path(root).expanduser()
        problem = location_problem(chosen, discovery_paths)
        if problem is not None:
            raise CacheLocationRefused(chosen, problem)
        # Resolved once (the user's own folders above it may be links); below it, every open walks by dir_fd.
        self.root: Path = chosen.resolve()

    # -- paths ---------------------------------------------------------------------------------------------------------

    def path_for(self, origin: str, uri: str) -> Path:
        """Where the file `uri` served by the server labelled `origin` lives (it may not exist)."""
        return self.root.joinpath(*(_component(c) for c in _components(origin, uri)))

    def origin_of(self, path: Path) -> tuple[str, str]:
        """(label, uri) recovered from a cache file path; ValueError if `path` is not one."""
        absolute = Path(os.path.abspath(path))
        try:
            relative = absolute.relative_to(self.root)
        except ValueError:
            raise ValueError(f"{path} is not inside the cache root {self.root}") from None
        names = relative.parts
        if len(names) < 3:
            raise ValueError(f"{path} is not a cached file (expected <label>/<scheme>/<segments...>)")
        decoded: list[str] = []
        folder = _open_root(self.root)
        try:
            for i, name in enumerate(names):
                decoded.append(_decode_component(folder, self.root.joinpath(*names[:i]), name))
                if folder is not None and i + 1 < len(names):
                    child = _try_open_dir(folder, name)
                    os.close(folder)
                    folder = child
        finally:
            if folder is not None:
                os.close(folder)
        label, scheme, *segments = decoded
        return label, f"{scheme}://{'/'.join(segments)}"

    # -- content -------------------------------------------------------------------------------------------------------

    def get(self, origin: str, resource: EntryResource) -> bytes | None:
        """The cached bytes of `resource`, re-hashed now and equal to its size and digest; else None.

        A file that fails the check (or a link, FIFO or other non-file in its place) is removed:
        a cache miss, so the caller reads it afresh.
        """
        names = [_component(c) for c in _components(origin, resource.uri)]
        folder = _open_root(self.root)
        if folder is None:
            return None
        try:
            for name in names[:-1]:
                child = _try_open_dir(folder, name)
                if child is None:
                    return None  # missing, or not a real folder: `put` replaces it
                os.close(folder)
                folder = child
            data = _read_regular(folder, names[-1], limit=resource.size)
            if data is None or len(data) != resource.size or sha256_digest(data) != resource.digest:
                _remove_file(folder, names[-1])
                return None
            return data
        finally:
            os.close(folder)

    def put(self, origin: str, resource: EntryResource, data: bytes) -> None:
        """Store `data` for `resource` after checking its size and digest (VerificationError if they differ).

        Call it only with bytes that passed every check the host makes (for SKILL.md, the frontmatter too).
        """
        verify_bytes(resource, data)
        raws = _components(origin, resource.uri)
        shown = resource.uri[:200].encode("unicode_escape").decode("ascii")
        try:
            folder = self._ensure_root()
        except OSError as err:
            raise CacheError(f"cannot use the cache root {self.root}: {err.strerror or err}") from err
        try:
            for raw in raws[:-1]:
                name = _component(raw)
                if name.startswith(_HASHED):
                    _write_atomic(folder, name + _SEGMENT_SUFFIX, raw.encode("utf-8", errors="surrogatepass"))
                child = _enter_dir(folder, name)
                os.close(folder)
                folder = child
            leaf = _component(raws[-1])
            if leaf.startswith(_HASHED):
                _write_atomic(folder, leaf + _SEGMENT_SUFFIX, raws[-1].encode("utf-8", errors="surrogatepass"))
            _write_atomic(folder, leaf, data)
        except OSError as err:
            where = self.path_for(origin, resource.uri)
            raise CacheError(f"cannot cache {shown} at {where}: {err.strerror or err}") from err
        finally:
            os.close(folder)

    def remove_origin(self, origin: str) -> None:
        """Delete everything cached for the server labelled `origin` (call it when the user removes the server)."""
        name = _component(_label(origin))
        folder = _open_root(self.root)
        if folder is None:
            return
        try:
            _clear(folder, name)
        except OSError as err:
            raise CacheError(f"cannot remove {self.root / name}: {err.strerror or err}") from err
        finally:
            os.close(folder)

    def _ensure_root(self) -> int:
        """Make the root (0o700) and its marker if needed; the root's folder, opened without following a link."""
        _make_dirs(self.root)
        try:
            folder = os.open(self.root, _DIR_FLAGS)
        except OSError as err:
            raise CacheError(f"the cache root {self.root} is not a folder (a link or a file is in its place)") from err
        try:
            if not _is_regular(folder, MARKER_NAME):
                _clear(folder, MARKER_NAME)
                _write_atomic(folder, MARKER_NAME, MARKER_TEXT.encode("utf-8"))
        except BaseException:
            os.close(folder)
            raise
        return folder


# -- encoding ----------------------------------------------------------------------------------------------------------


def _label(origin: str) -> str:
    if not isinstance(origin, str) or not origin:
        raise ValueError("a server label must be a non-empty string")
    return origin


def _components(origin: str, uri: str) -> list[str]:
    """[label, scheme, *segments] of `uri` served by `origin`, refusing what cannot be a file path."""
    scheme, sep, rest = uri.partition("://")
    if not sep or not scheme:
        raise InvalidSkillUri(uri, "a cached resource URI has the form scheme://path")
    segments = rest.split("/")
    if any(s in ("", ".", "..") for s in segments):
        raise InvalidSkillUri(uri, "a cached resource URI has no empty, '.' or '..' segment")
    return [_label(origin), scheme, *segments]


def _component(raw: str) -> str:
    """One path component: percent-encoded (leading "." and every upper-case letter too), or hashed if long.

    Upper case is encoded so that two labels or segments that differ only in case stay
    apart on case-insensitive file systems; a leading "." so that nothing in the cache
    is a hidden folder an agent might scan (".claude").
    """
    data = raw.encode("utf-8", errors="surrogatepass")
    out = []
    for i, byte in enumerate(data):
        if byte in _UNRESERVED and not (i == 0 and byte == ord(".")):
            out.append(chr(byte))
        else:
            out.append(f"%{byte:02X}")
    encoded = "".join(out)
    if len(encoded) > MAX_COMPONENT:
        return _HASHED + hashlib.sha256(data).hexdigest()
    return encoded


# -- disk --------------------------------------------------------------------------------------------------------------
# Below the root, every path is walked one component at a time with `dir_fd`, each opened with O_NOFOLLOW
# (a link planted anywhere in the cache is never followed: O_NOFOLLOW on a whole path covers only its last
# component) and O_NONBLOCK (a FIFO planted at a cached path is never waited on). Nothing here resolves a path
# and then opens it, which a swap between the two steps could defeat.


def _open_root(root: Path) -> int | None:
    """The root folder, or None if it does not exist (or is not a real folder: nothing is cached there)."""
    try:
        return os.open(root, _DIR_FLAGS)
    except OSError:
        return None


def _try_open_dir(folder: int, name: str) -> int | None:
    """The real folder `name` in `folder`, or None (missing, a link, a file, a FIFO, unreadable)."""
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=folder)
    except OSError:
        return None


def _enter_dir(folder: int, name: str) -> int:
    """The real folder `name` in `folder`, made (0o700) if missing; whatever else is there is replaced first."""
    child = _try_open_dir(folder, name)
    if child is not None:
        return child
    _clear(folder, name)  # a planted link, file or FIFO: removed from the cache, never followed
    os.mkdir(name, DIR_MODE, dir_fd=folder)
    child = os.open(name, _DIR_FLAGS, dir_fd=folder)
    os.fchmod(child, DIR_MODE)  # mkdir's mode is masked by the umask; set it exactly
    return child


def _read_regular(folder: int, name: str, *, limit: int) -> bytes | None:
    """At most `limit` + 1 bytes of the regular file `name` in `folder`; None for anything else or a size other
    than `limit` (checked before reading)."""
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=folder)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size != limit:
            return None
        return _read_at_most(fd, limit + 1)
    finally:
        os.close(fd)


def _is_regular(folder: int, name: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _remove_file(folder: int, name: str) -> None:
    """Remove `name` from `folder` unless it is a folder (a link is removed itself, never its target).

    Best effort: whatever stays is a miss again on the next `get`, and `put` replaces it.
    """
    with contextlib.suppress(OSError):
        if not stat.S_ISDIR(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode):
            os.unlink(name, dir_fd=folder)


def _clear(folder: int, name: str) -> None:
    """Remove whatever `name` is in `folder`: a folder with everything in it, or a file, link or FIFO.

    A link is removed itself, never its target; nothing outside the cache is deleted.
    """
    try:
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        _remove_tree(folder, name)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=folder)


def _remove_tree(folder: int, name: str) -> None:
    """Delete the folder `name` and everything below it, walking by file descriptor.

    Not `shutil.rmtree`: it opens folders without O_NONBLOCK, so a FIFO swapped in for a folder
    while it walks would make it wait for a writer. Here every folder is opened with _DIR_FLAGS
    (no link followed, never blocking); an entry that stopped being a folder is unlinked instead.
    """
    opened: list[tuple[int, str]] = []  # the open folders from `name` down to the one being emptied
    try:
        opened.append((os.open(name, _DIR_FLAGS, dir_fd=folder), name))
    except OSError as err:
        if err.errno not in (errno.ENOTDIR, errno.ELOOP):
            raise
        os.unlink(name, dir_fd=folder)  # swapped for a file, link or FIFO since it was looked at
        return
    try:
        while opened:
            fd, _ = opened[-1]
            child = _first_entry(fd)
            if child is None:
                os.close(fd)
                _, emptied = opened.pop()
                os.rmdir(emptied, dir_fd=opened[-1][0] if opened else folder)
                continue
            child_name, is_dir = child
            if is_dir:
                try:
                    opened.append((os.open(child_name, _DIR_FLAGS, dir_fd=fd), child_name))
                    continue
                except OSError as err:
                    if err.errno not in (errno.ENOTDIR, errno.ELOOP):
                        raise
            os.unlink(child_name, dir_fd=fd)
    finally:
        for fd, _ in opened:
            os.close(fd)


def _first_entry(folder: int) -> tuple[str, bool] | None:
    """One entry of `folder` (its name, and whether it is a folder, links not followed), or None if it is empty."""
    with os.scandir(folder) as entries:
        for entry in entries:
            return entry.name, entry.is_dir(follow_symlinks=False)
    return None


def _make_dirs(path: Path) -> None:
    """The root and any missing folders above it, each made 0o700 (the folders above are the user's own)."""
    if not path.parent.exists():
        _make_dirs(path.parent)
    try:
        path.mkdir(mode=DIR_MODE)
    except FileExistsError:
        return
    os.chmod(path, DIR_MODE)


def _write_atomic(folder: int, name: str, data: bytes) -> None:
    """Write `name` in `folder` whole or not at all: a private temp file in the same folder, then rename over it."""
    temp = f".tmp-{secrets.token_hex(8)}"
    fd = os.open(temp, _CREATE_FLAGS, FILE_MODE, dir_fd=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), FILE_MODE)
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
        except IsADirectoryError:
            # A folder where the file belongs (planted, or left by another entry's `name/...`): replace it.
            _clear(folder, name)
            os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=folder)
        raise


def _decode_component(folder: int | None, parent: Path, name: str) -> str:
    """The raw label, scheme or segment that `name` encodes; a hashed one is read back from its `.segment` file."""
    if name.startswith(_HASHED):
        digest = name[len(_HASHED) :]
        original = None if folder is None else _read_small(folder, name + _SEGMENT_SUFFIX)
        if original is None:
            raise ValueError(f"{parent / name}: the file naming this hashed segment is missing")
        if hashlib.sha256(original).hexdigest() != digest:
            raise ValueError(f"{parent / name}: the file naming this hashed segment was altered")
        return original.decode("utf-8", errors="surrogatepass")
    try:
        decoded = unquote_to_bytes(name).decode("utf-8", errors="surrogatepass")
    except UnicodeDecodeError:
        decoded = None
    if decoded is None or _component(decoded) != name:
        raise ValueError(f"{name!r} is not a path component the cache writes")
    return decoded


def _read_small(folder: int, name: str) -> bytes | None:
    """A regular file of at most _MAX_SEGMENT_FILE bytes, read without following a link or blocking; else None."""
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=folder)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = _read_at_most(fd, _MAX_SEGMENT_FILE + 1)
    finally:
        os.close(fd)
    return data if len(data) <= _MAX_SEGMENT_FILE else None


def _read_at_most(fd: int, limit: int) -> bytes:
    """Up to `limit` bytes from a regular file (fewer only at its end)."""
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(fd, min(left, 1024 * 1024))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
