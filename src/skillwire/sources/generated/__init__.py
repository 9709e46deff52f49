"""Skills whose files are produced when read (`"resources": "dynamic"`)."""

from skillwire.sources.generated.source import GeneratedSkill, GeneratedSource

__all__ = ["GeneratedSkill", "GeneratedSource"]
