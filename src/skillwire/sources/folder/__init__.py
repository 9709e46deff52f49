"""Skills kept in folders on disk: walked, hashed on every core, followed as they change, restored from a cache."""

from skillwire.sources.folder.source import FolderSource

__all__ = ["FolderSource"]
