"""The README's Python examples import only from `skillwire`, and its host example runs as written (issue 11).

The host example is taken from the README byte for byte and run in a fresh interpreter, from a folder holding a
copy of examples/skills (the README says it runs from the repository root), answering the approval prompt `y`.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.support.servers import EXAMPLE_SKILLS, REPO_ROOT, resources_list, resources_read, wire

README = REPO_ROOT / "README.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def python_blocks() -> list[str]:
    return _BLOCK.findall(README.read_text(encoding="utf-8"))


def host_example(title: str = "Host library") -> str:
    """The first Python block of the README's section `title`."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index(f"\n## {title}\n") :]
    found = _BLOCK.search(section)
    assert found is not None, f"the README's {title} section has no Python block"
    return found.group(1)


def run_example(source: str, tmp_path: Path, answer: str = "") -> subprocess.CompletedProcess[str]:
    """Run a README script in a fresh interpreter from a folder holding a copy of examples/skills."""
    shutil.copytree(EXAMPLE_SKILLS, tmp_path / "examples" / "skills")
    script = tmp_path / "example.py"
    script.write_text(source, encoding="utf-8")
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])  # `skillwire` itself
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    return subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        input=answer,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


def test_readme_python_examples_import_only_from_skillwire() -> None:
    """skillwire choice (issue 11): an example shows the public API, so no skillwire import reaches past it."""
    blocks = python_blocks()
    assert len(blocks) >= 3
    deep = []
    for block in blocks:
        tree = compile(block, "README.md", "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("skillwire."):
                deep.append(node.module)
            elif isinstance(node, ast.Import):
                deep.extend(alias.name for alias in node.names if alias.name.startswith("skillwire."))
    assert deep == []


def test_readme_host_example_runs_as_written(tmp_path: Path) -> None:
    """skillwire choice (issue 11): the README's host script lists, asks, loads, verifies and reads, as it says."""
    run = run_example(host_example(), tmp_path, answer="y\n")
    assert run.returncode == 0, run.stderr
    assert "docs:pdf-processing docs Extract, fill, and assemble PDF documents" in run.stdout, run.stdout
    assert '<skill-content origin="mcp:docs" skill="skill://pdf-processing/SKILL.md"' in run.stdout
    assert "skill://pdf-processing/templates/invoice.md" in run.stdout
    assert "# Invoice" in run.stdout
    assert "['list_skills', 'search_skills', 'load_skill', 'read_skill_file', 'list_skill_directory']" in run.stdout
    assert "Load this skill? [y/N, v to read its SKILL.md first]" in run.stderr
    assert "skill://pdf-processing/SKILL.md" in (tmp_path / "approvals.json").read_text(encoding="utf-8")
    assert list((tmp_path / "cache").rglob("invoice.md")), "the cache holds the verified file"


def test_readme_large_catalogs_example_prints_what_the_readme_shows(tmp_path: Path) -> None:
    """skillwire choice (issue 14): the search, catalog prompt and search_skills output in the README is real."""
    run = run_example(host_example("Large catalogs"), tmp_path)
    assert run.returncode == 0, run.stderr
    text = README.read_text(encoding="utf-8")
    section = text[text.index("\n## Large catalogs\n") :]
    shown = section.split("```text\n", 1)[1].split("```", 1)[0]
    assert run.stdout == shown


def _embedding_server(source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Run a README block that builds an `MCPServer` named `mcp`, in-process from a folder holding `skills/`."""
    shutil.copytree(EXAMPLE_SKILLS, tmp_path / "skills")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    exec(compile(source, "README.md", "exec"), namespace)
    return namespace["mcp"]


@pytest.mark.anyio
async def test_readme_embedding_examples_serve_reads_of_skill_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """skillwire choice (issue 20): the README's servers that embed the extension are whole: a skill file listed by
    resources/list is read by resources/read (the generated one runs without its final `mcp.run()`)."""
    text = README.read_text(encoding="utf-8")
    generated = _BLOCK.search(text[text.index("\n### Generated skills\n") :])
    assert generated is not None
    assert generated.group(1).endswith("mcp.run()\n")
    blocks = {
        "skill://pdf-processing/SKILL.md": host_example("Python API"),
        "skill://reports/daily/data/today.csv": generated.group(1).removesuffix("mcp.run()\n"),
    }
    for uri, source in blocks.items():
        async with Client(_embedding_server(source, tmp_path / uri.split("/")[2], monkeypatch), cache=None) as client:
            listed = [r["uri"] for r in wire(await resources_list(client))["resources"]]
            [read] = wire(await resources_read(client, uri))["contents"]
        assert uri in listed
        assert read["uri"] == uri
    capsys.readouterr()  # the refusals the first block prints (none for examples/skills)
