"""Skills at a commit of a git repository, pinned or following a ref (pygit2, no checkout)."""

from __future__ import annotations

from skillwire.core.errors import SourceError, SpecError
from skillwire.sources.git.source import GitSource
from skillwire.sources.port import SkillSource, SourceOptions

__all__ = ["GitSource", "open_spec"]


def open_spec(target: str, options: SourceOptions) -> SkillSource:
    """`git:PATH@REF`: REF after the last `@` (a branch, tag or commit; HEAD without one). Blob digests are kept
    beside the folder digest cache (`FILE.git-blobs`) when there is one."""
    path, at, ref = target.rpartition("@")
    if not at:
        path, ref = target, "HEAD"
    if not path or not ref:
        raise SpecError(f"git:{target}: needs git:PATH@REF (REF a branch, tag or commit; default HEAD)")
    cache = options.digest_cache + ".git-blobs" if options.digest_cache else None
    try:
        return GitSource(path, ref, digest_cache=cache)
    except SourceError as exc:
        raise SpecError(str(exc)) from None
