"""`SkillCache`: verified MCP skill files on disk, keyed by (host-assigned server label, uri).

Security Considerations, "Cache integrity, cache isolation, and durable origin",
and Lazy Retrieval. The rules and how the cache meets each (this module holds the
cache and where its root may be; `layout.py` names the paths below the root,
`disk.py` opens them without following a link):

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

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from skillwire.cache.disk import (
    DIR_FLAGS,
    clear,
    enter_dir,
    is_regular,
    make_dirs,
    open_root,
    read_regular,
    remove_file,
    try_open_dir,
    write_atomic,
)
from skillwire.cache.layout import checked_label, component, components, decode_component, remember_segment
from skillwire.core.digest import sha256_digest
from skillwire.core.errors import CacheError, CacheLocationRefused
from skillwire.core.hosting.agent_paths import SKILL_DISCOVERY_FOLDERS, SKILLS_FOLDER
from skillwire.core.hosting.entry import EntryResource
from skillwire.core.hosting.verify import verify_bytes

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


def default_root() -> Path:
    """`$XDG_CACHE_HOME/skillwire/mcp-skills`, or `~/.cache/skillwire/mcp-skills` (XDG: a relative value is ignored)."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "skillwire" / "mcp-skills"


def location_problem(root: Path, discovery_paths: Iterable[str | os.PathLike[str]] = ()) -> str | None:
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

    def __init__(
        self, root: str | os.PathLike[str] | None = None, *, discovery_paths: Sequence[str | os.PathLike[str]] = ()
    ) -> None:
        """`root`: where files are kept (default `default_root()`; `~` is expanded). `discovery_paths`: extra
        filesystem-skill discovery folders the cache must stay out of."""
        chosen = default_root() if root is None else Path(root).expanduser()
        problem = location_problem(chosen, discovery_paths)
        if problem is not None:
            raise CacheLocationRefused(chosen, problem)
        # Resolved once (the user's own folders above it may be links); below it, every open walks by dir_fd.
        self.root: Path = chosen.resolve()

    # -- paths ---------------------------------------------------------------------------------------------------------

    def path_for(self, origin: str, uri: str) -> Path:
        """Where the file `uri` served by the server labelled `origin` lives (it may not exist)."""
        return self.root.joinpath(*(component(c) for c in components(origin, uri)))

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
        folder = open_root(self.root)
        try:
            for i, name in enumerate(names):
                decoded.append(decode_component(folder, self.root.joinpath(*names[:i]), name))
                if folder is not None and i + 1 < len(names):
                    child = try_open_dir(folder, name)
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
        names = [component(c) for c in components(origin, resource.uri)]
        folder = open_root(self.root)
        if folder is None:
            return None
        try:
            for name in names[:-1]:
                child = try_open_dir(folder, name)
                if child is None:
                    return None  # missing, or not a real folder: `put` replaces it
                os.close(folder)
                folder = child
            data = read_regular(folder, names[-1], limit=resource.size)
            if data is None or len(data) != resource.size or sha256_digest(data) != resource.digest:
                remove_file(folder, names[-1])
                return None
            return data
        finally:
            os.close(folder)

    def put(self, origin: str, resource: EntryResource, data: bytes) -> None:
        """Store `data` for `resource` after checking its size and digest (VerificationError if they differ).

        Call it only with bytes that passed every check the host makes (for SKILL.md, the frontmatter too).
        """
        verify_bytes(resource, data)
        raws = components(origin, resource.uri)
        shown = resource.uri[:200].encode("unicode_escape").decode("ascii")
        try:
            folder = self._ensure_root()
        except OSError as err:
            raise CacheError(f"cannot use the cache root {self.root}: {err.strerror or err}") from err
        try:
            for raw in raws[:-1]:
                name = component(raw)
                remember_segment(folder, name, raw)
                child = enter_dir(folder, name)
                os.close(folder)
                folder = child
            leaf = component(raws[-1])
            remember_segment(folder, leaf, raws[-1])
            write_atomic(folder, leaf, data)
        except OSError as err:
            where = self.path_for(origin, resource.uri)
            raise CacheError(f"cannot cache {shown} at {where}: {err.strerror or err}") from err
        finally:
            os.close(folder)

    def remove_origin(self, origin: str) -> None:
        """Delete everything cached for the server labelled `origin` (call it when the user removes the server)."""
        name = component(checked_label(origin))
        folder = open_root(self.root)
        if folder is None:
            return
        try:
            clear(folder, name)
        except OSError as err:
            raise CacheError(f"cannot remove {self.root / name}: {err.strerror or err}") from err
        finally:
            os.close(folder)

    def _ensure_root(self) -> int:
        """Make the root (0o700) and its marker if needed; the root's folder, opened without following a link."""
        make_dirs(self.root)
        try:
            folder = os.open(self.root, DIR_FLAGS)
        except OSError as err:
            raise CacheError(f"the cache root {self.root} is not a folder (a link or a file is in its place)") from err
        try:
            if not is_regular(folder, MARKER_NAME):
                clear(folder, MARKER_NAME)
                write_atomic(folder, MARKER_NAME, MARKER_TEXT.encode("utf-8"))
        except BaseException:
            os.close(folder)
            raise
        return folder
