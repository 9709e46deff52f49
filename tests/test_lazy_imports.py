"""skillwire choice: the core, `import skillwire`, every `--help` and `validate` run without the SDK's server stack.

Issue 11: `skillwire --help` took 2 s, most of it importing `mcp`. Each check runs in a fresh interpreter and reads
`sys.modules` afterwards, so one test's imports cannot hide another's. No timing is asserted; speed is measured by
hand (`python -X importtime -c "import skillwire.cli.main"`).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

import skillwire
import skillwire.sources

HEAVY = ("mcp", "mcp_types", "uvicorn", "starlette", "httpx2", "pydantic")
"""The SDK and what it stands on: none of it is needed to name a skill, parse a URI or print help."""

CORE = (
    "skillwire.core.uri",
    "skillwire.core.names",
    "skillwire.core.digest",
    "skillwire.core.frontmatter",
    "skillwire.core.manifest",
    "skillwire.core.catalog",
    "skillwire.core.scoped_catalog",
    "skillwire.core.display",
    "skillwire.core.scopes",
    "skillwire.core.lint",
    "skillwire.sources.folder.source",
    "skillwire.sources.generated.source",
    "skillwire.sources.packages.source",
    "skillwire.core.hosting.verify",
    "skillwire.core.hosting.policy",
    "skillwire.core.hosting.window",
    "skillwire.core.hosting.approvals",
    "skillwire.host.prompt",
    "skillwire.core.hosting.results",
)

_REPORT = textwrap.dedent(
    """
    import json, sys
    heavy = {heavy!r}
    print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in heavy)))
    """
)


def _heavy_modules_after(code: str, *args: str, heavy: tuple[str, ...] = HEAVY) -> list[str]:
    """Run `code` in a fresh interpreter (argv after it: `args`) and return the `heavy` modules it left loaded."""
    script = textwrap.dedent(code) + _REPORT.format(heavy=heavy)
    done = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(done.stdout.splitlines()[-1])
    return loaded


def test_import_skillwire_does_not_load_the_sdk() -> None:
    """`import skillwire` once imported the whole server stack (1.2 s) to define names nobody had used yet."""
    assert _heavy_modules_after("import skillwire") == []


def test_import_skillwire_uri_does_not_load_the_sdk() -> None:
    """A host that only parses skill:// URIs went through the package `__init__` and paid for the SDK."""
    assert _heavy_modules_after("import skillwire.core.uri") == []


def test_core_modules_do_not_load_the_sdk() -> None:
    """The core (spec rules as values and functions) and the folder scan `validate` uses stand without the SDK."""
    code = "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)\n"
    assert _heavy_modules_after(code, *CORE) == []


def test_every_help_is_built_without_the_sdk() -> None:
    """`skillwire --help` and each command's `--help` (defaults included) print without importing the SDK."""
    code = """
    import contextlib, io, sys
    from skillwire.cli.main import main
    for command in ([], ["serve"], ["validate"], ["host"], ["inspect"], ["pull"]):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            main([*command, "--help"])
        assert "usage: skillwire" in out.getvalue(), (command, out.getvalue())
    """
    assert _heavy_modules_after(code) == []


def test_serve_help_shows_the_defaults_of_the_server_modules() -> None:
    """The defaults `serve --help` prints come from light modules but must still be the ones the server uses."""
    from skillwire.server import defaults
    from skillwire.server import skill_service as service
    from skillwire.service import limits

    assert (service.ServeOptions().page_size, service.ServeOptions().ttl_ms) == (
        defaults.DEFAULT_PAGE_SIZE,
        defaults.DEFAULT_TTL_MS,
    )
    help_text = subprocess.run(
        [sys.executable, "-m", "skillwire", "serve", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    flat = " ".join(help_text.split())
    assert f"(default {limits.DEFAULT_MAX_CONNECTIONS}," in flat
    assert f"(default {limits.DEFAULT_READ_BUDGET_BYTES >> 20})" in flat


def test_validate_does_not_load_the_sdk(tmp_path: Path) -> None:
    """`skillwire validate` only walks folders and applies the rules: it must not start the SDK to do that."""
    skill = tmp_path / "skills" / "demo" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: demo\ndescription: A demo skill\n---\nBody.\n", encoding="utf-8")
    code = """
    import contextlib, io, sys
    from skillwire.cli.main import main
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(["validate", sys.argv[1]])
    assert status == 0 and "1 skill" in out.getvalue(), (status, out.getvalue())
    """
    assert _heavy_modules_after(code, str(tmp_path / "skills")) == []


LAZY_PACKAGES = (skillwire, skillwire.sources)
"""The packages whose public names load on first use: the whole API, and what a source author imports."""


@pytest.mark.parametrize(
    ("package", "name"),
    [(p, name) for p in LAZY_PACKAGES for name in sorted(set(p.__all__) - {"__version__"})],
    ids=lambda v: getattr(v, "__name__", v),
)
def test_lazy_name_is_the_object_its_module_defines(package: ModuleType, name: str) -> None:
    """Each public name, loaded on first access, is the very object of the module that defines it."""
    module = __import__(package._LAZY[name], fromlist=[name])
    assert getattr(package, name) is getattr(module, name)


@pytest.mark.parametrize("package", LAZY_PACKAGES, ids=lambda p: p.__name__)
def test_type_checkers_see_the_same_names_as_the_runtime(package: ModuleType) -> None:
    """The `TYPE_CHECKING` imports (what mypy and IDEs see) match the lazy table and cover all of `__all__`."""
    tree = ast.parse(Path(package.__file__ or "").read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    seen = {alias.name: node.module for node in block.body if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert seen == package._LAZY
    assert set(seen) | {"__version__"} == set(package.__all__) | {"__version__"}


def test_a_source_author_imports_load_no_git_and_no_watcher() -> None:
    """skillwire choice (issue 20): `skillwire.sources` runs before any of its modules, and a new source's imports
    (the port, the builder, a composite, the registry, the light kinds) need neither pygit2 nor watchfiles."""
    code = """
    from skillwire.sources import (
        KINDS, CatalogBuilder, CompositeSource, FolderSource, Member, MemorySource, PackageSource, SkillSource,
        SourceFile, WatchableSource, build_catalog, open_sources,
    )
    """
    assert _heavy_modules_after(code, heavy=(*HEAVY, "pygit2", "watchfiles")) == []


def test_a_folder_served_without_ignore_files_never_loads_the_ignore_matcher(tmp_path: Path) -> None:
    """skillwire choice (issue 23): `serve` imports what it needs before its first answer; the `.gitignore`-style
    matcher (pathspec) loads with the first `.skillwireignore` read."""
    (tmp_path / "alpha").mkdir()
    (tmp_path / "alpha" / "SKILL.md").write_text("---\nname: alpha\ndescription: A\n---\n")
    code = """
    import sys
    import skillwire.cli.serve, skillwire.service.run, skillwire.service.watch, skillwire.sources.folder.watch
    from skillwire.sources.folder.source import FolderSource
    assert len(FolderSource([sys.argv[1]]).scan()) == 1
    """
    assert _heavy_modules_after(code, str(tmp_path), heavy=("pathspec",)) == []
    (tmp_path / "alpha" / ".skillwireignore").write_text("*.tmp\n")
    assert "pathspec" in _heavy_modules_after(code, str(tmp_path), heavy=("pathspec",))


def test_unknown_name_is_an_attribute_error() -> None:
    """A name that is not public raises AttributeError (so `hasattr` and `getattr(..., default)` keep working)."""
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = skillwire.no_such_name
    assert getattr(skillwire, "_private", None) is None
    assert set(skillwire.__all__) <= set(dir(skillwire))
