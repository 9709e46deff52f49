"""Skills at a commit of a git repository, pinned or following a ref (pygit2, no checkout)."""

from skillwire.sources.git.source import GitSource

__all__ = ["GitSource"]
