"""The floor plan holds: every import inside skillwire points down the layers ARCHITECTURE.md draws.

Read from the code's own `import` statements (module level, inside functions and under `TYPE_CHECKING` alike:
an arrow is an arrow), so a new module cannot slip an upward import past review. `skillwire/__init__.py` (the
public face, which names everything) and `__main__.py` stand above the plan and are not checked.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import skillwire

PACKAGE = Path(skillwire.__file__).parent

#: Lowest first. A module may import its own layer's modules and any lower layer's; modules of different packages
#: within one layer never import each other (they are independent adapters or independent sides).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("skillwire.core",),
    ("skillwire.core.hosting",),
    ("skillwire.client", "skillwire.cache"),
    ("skillwire.sources",),
    ("skillwire.server", "skillwire.host"),
    ("skillwire.service",),
    ("skillwire.cli",),
)


def part_of(module: str) -> str | None:
    """The longest layer package `module` belongs to, or None for the face (`skillwire`, `skillwire.__main__`)."""
    best: str | None = None
    for layer in LAYERS:
        for part in layer:
            if (module == part or module.startswith(part + ".")) and (best is None or len(part) > len(best)):
                best = part
    return best


def level_of(part: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if part in layer)


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, module: str) -> Iterator[tuple[int, str]]:
    """(line, imported module) for every import of a `skillwire` module in `path`, relative ones resolved."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "skillwire":
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target.split(".")[0] != "skillwire":
                continue
            # `from skillwire.sources import folder` may import a module of that package: judge the deepest name
            # (`from skillwire import X` names the public face itself)
            for alias in node.names:
                yield node.lineno, target if target == "skillwire" else f"{target}.{alias.name}"


def violations(root: Path) -> list[str]:
    """Every import in the package at `root` that runs up the layers or across one layer's packages."""
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        module = module_name(path, root)
        here = part_of(module)
        if here is None:
            continue
        for line, target in imports_of(path, module):
            there = part_of(target)
            if there is None:
                if target == "skillwire":
                    found.append(f"{module}:{line} imports the public face `skillwire`; import the module itself")
                continue
            if there == here:
                continue
            if level_of(there) > level_of(here):
                found.append(f"{module}:{line} imports {target}: {here} is below {there}")
            elif level_of(there) == level_of(here):
                found.append(f"{module}:{line} imports {target}: {here} and {there} are independent")
    return sorted(set(found))


def test_every_import_points_down_the_layers() -> None:
    assert violations(PACKAGE) == []


def test_every_package_of_skillwire_is_placed_on_a_layer() -> None:
    packages = {module_name(p, PACKAGE) for p in PACKAGE.glob("*/__init__.py")}
    placed = {part for layer in LAYERS for part in layer}
    assert packages - placed == set()


@pytest.mark.parametrize(
    ("where", "code", "expected"),
    [
        (
            "core/uri.py",
            "from skillwire.server.extension import SkillsExtension\n",
            "skillwire.core is below skillwire.server",
        ),
        ("core/hosting/entry.py", "import skillwire.host.host\n", "skillwire.core.hosting is below skillwire.host"),
        (
            "client/session.py",
            "from skillwire.cache import store\n",
            "skillwire.client and skillwire.cache are independent",
        ),
        ("server/extension.py", "from ..service import run\n", "skillwire.server is below skillwire.service"),
        (
            "client/session.py",
            "from skillwire.sources.port import SkillSource\n",
            "skillwire.client is below skillwire.sources",
        ),
        ("sources/port.py", "from skillwire import Host\n", "imports the public face"),
    ],
)
def test_the_check_fails_when_a_lower_layer_imports_a_higher_one(
    tmp_path: Path, where: str, code: str, expected: str
) -> None:
    root = tmp_path / "skillwire"
    for part in ("core/hosting", "client", "cache", "server", "service", "sources", "host"):
        (root / part).mkdir(parents=True, exist_ok=True)
        (root / part / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / where).write_text(code)
    found = violations(root)
    assert len(found) == 1, found
    assert expected in found[0]


def test_a_host_loads_none_of_skillwires_server_side() -> None:
    """`skillwire.Host` needs the client, the cache and the core: never the server, the service, sources or pygit2.

    (The SDK's own `mcp/__init__.py` imports its server package, and with it Starlette and uvicorn, on any `import
    mcp`; no client of the SDK can avoid that today: modelcontextprotocol/python-sdk#1617, #1770.)
    """
    script = textwrap.dedent(
        """
        import json, sys, skillwire
        skillwire.Host
        print(json.dumps(sorted(sys.modules)))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    loaded = set(json.loads(done.stdout))
    assert "skillwire.host.host" in loaded
    server_side = sorted(
        m
        for m in loaded
        if m.split(".")[:2] in (["skillwire", "server"], ["skillwire", "service"], ["skillwire", "sources"])
    )
    assert server_side == []
    assert not {"pygit2", "markdown_it", "prometheus_client", "jwt"} & loaded
