"""PEP 562 lazy exports: a package names its public names and the modules defining them, imported on first use.

    __getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)

So `import skillwire` (or `skillwire.sources`) loads nothing else, and `skillwire.Host` loads what `Host` needs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, namespace: dict[str, Any], table: Mapping[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of `package`, whose globals are `namespace`, exporting `table` (name ->
    module): a name's module is imported on first access, and the name is then kept like a plain import would."""

    def __getattr__(name: str) -> object:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value  # later lookups find it directly and skip this function
        return value

    def __dir__() -> list[str]:
        """The public names count as attributes before they are loaded (for `dir()` and completion)."""
        return sorted({*namespace, *table})

    return __getattr__, __dir__
