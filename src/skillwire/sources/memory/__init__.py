"""Skills whose files are held in memory: for embedding, and the honest fake in tests."""

from skillwire.sources.memory.source import MemorySource

__all__ = ["MemorySource"]
