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

from tests.support.servers import EXAMPLE_SKILLS, REPO_ROOT

README = REPO_ROOT / "README.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def python_blocks() -> list[str]:
    return _BLOCK.findall(README.read_text(encoding="utf-8"))


def host_example() -> str:
    """The first Python block of the README's "Host library" section."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("\n## Host library\n") :]
    found = _BLOCK.search(section)
    assert found is not None, "the README's Host library section has no Python block"
    return found.group(1)


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
    shutil.copytree(EXAMPLE_SKILLS, tmp_path / "examples" / "skills")
    script = tmp_path / "host_example.py"
    script.write_text(host_example(), encoding="utf-8")
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])  # `skillwire` itself
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    run = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        input="y\n",
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert "docs:pdf-processing docs Extract, fill, and assemble PDF documents" in run.stdout, run.stdout
    assert '<skill-content origin="mcp:docs" skill="skill://pdf-processing/SKILL.md"' in run.stdout
    assert "skill://pdf-processing/templates/invoice.md" in run.stdout
    assert "# Invoice" in run.stdout
    assert "['list_skills', 'search_skills', 'load_skill', 'read_skill_file', 'list_skill_directory']" in run.stdout
    assert "Load this skill? [y/N, v to read its SKILL.md first]" in run.stderr
    assert "skill://pdf-processing/SKILL.md" in (tmp_path / "approvals.json").read_text(encoding="utf-8")
    assert list((tmp_path / "cache").rglob("invoice.md")), "the cache holds the verified file"
