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
  0o600 and atomic replacement (temp file + rename) are defence in depth on top.
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
import hashlib
import os
import secrets
import shutil
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path
from urllib.parse import unquote_to_bytes

from skillwire.errors import InvalidSkillUri, SkillwireError
from skillwire.host.entry import EntryResource
from skillwire.host.verify import verify_bytes

#: Agent folders whose `skills` subfolder is a filesystem-skill discovery path.
AGENT_FOLDERS = (".claude", ".agents", ".codex", ".gemini", ".cursor")
SKILLS_FOLDER = "skills"
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
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


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
        # Resolved once: every containment check below compares real paths against this one.
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
        parent = self.root
        for name in names:
            decoded.append(self._decode_component(parent, name))
            parent = parent / name
        label, scheme, *segments = decoded
        return label, f"{scheme}://{'/'.join(segments)}"

    def _decode_component(self, parent: Path, name: str) -> str:
        if name.startswith(_HASHED):
            digest = name[len(_HASHED) :]
            try:
                original = (parent / (name + _SEGMENT_SUFFIX)).read_bytes()
            except OSError:
                raise ValueError(f"{parent / name}: the file naming this hashed segment is missing") from None
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

    # -- content -------------------------------------------------------------------------------------------------------

    def get(self, origin: str, resource: EntryResource) -> bytes | None:
        """The cached bytes of `resource`, re-hashed now and equal to its size and digest; else None.

        A file that fails the check is deleted (a cache miss): the caller reads it afresh.
        """
        path = self.path_for(origin, resource.uri)
        try:
            fd = os.open(path, os.O_RDONLY | _O_NOFOLLOW)
        except OSError:
            # Missing, or a symlink planted in the cache (O_NOFOLLOW refuses it): a miss either way.
            if path.is_symlink():
                _unlink(path)
            return None
        with os.fdopen(fd, "rb") as fh:
            info = os.fstat(fh.fileno())
            if not stat.S_ISREG(info.st_mode):
                return None
            data = fh.read(resource.size + 1) if info.st_size == resource.size else None
        if data is None or len(data) != resource.size or _sha256(data) != resource.digest:
            _unlink(path)
            return None
        return data

    def put(self, origin: str, resource: EntryResource, data: bytes) -> None:
        """Store `data` for `resource` after checking its size and digest (VerificationError if they differ)."""
        verify_bytes(resource, data)
        components = _components(origin, resource.uri)
        self._ensure_root()
        parent = self.root
        for raw in components[:-1]:
            name = _component(raw)
            if name.startswith(_HASHED):
                _write_atomic(parent, name + _SEGMENT_SUFFIX, raw.encode("utf-8"))
            parent = parent / name
            _make_dir(parent)
        # Containment on the resolved real path: a directory swapped for a symlink after we made
        # it must not carry MCP content out of the cache (into a skill discovery folder, say).
        if not parent.resolve().is_relative_to(self.root):
            raise CacheError(f"{parent} leads outside the cache root {self.root}; not writing {resource.uri[:200]}")
        leaf = _component(components[-1])
        if leaf.startswith(_HASHED):
            _write_atomic(parent, leaf + _SEGMENT_SUFFIX, components[-1].encode("utf-8"))
        try:
            _write_atomic(parent, leaf, data)
        except OSError as err:
            raise CacheError(f"cannot cache {resource.uri[:200]} at {parent / leaf}: {err.strerror or err}") from err

    def remove_origin(self, origin: str) -> None:
        """Delete everything cached for the server labelled `origin` (call it when the user removes the server)."""
        folder = self.root / _component(_label(origin))
        if folder.is_symlink() or folder.is_file():
            _unlink(folder)
        elif folder.is_dir():
            shutil.rmtree(folder)

    def _ensure_root(self) -> None:
        _make_dir(self.root, parents=True)
        marker = self.root / MARKER_NAME
        if not marker.is_file():
            _write_atomic(self.root, MARKER_NAME, MARKER_TEXT.encode("utf-8"))


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


def _sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


# -- disk --------------------------------------------------------------------------------------------------------------


def _make_dir(path: Path, *, parents: bool = False) -> None:
    if parents and not path.parent.exists():
        _make_dir(path.parent, parents=True)
    try:
        path.mkdir(mode=DIR_MODE)
    except FileExistsError:
        if path.is_symlink() or not path.is_dir():
            raise CacheError(f"{path} exists and is not a directory the cache made") from None
        return
    os.chmod(path, DIR_MODE)  # mkdir's mode is masked by the umask; set it exactly


def _write_atomic(folder: Path, name: str, data: bytes) -> None:
    """Write `folder/name` whole or not at all: a private temp file in the same folder, then rename."""
    temp = folder / f".tmp-{secrets.token_hex(8)}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW, FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), FILE_MODE)
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(temp, folder / name)
    except BaseException:
        _unlink(temp)
        raise


def _unlink(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
