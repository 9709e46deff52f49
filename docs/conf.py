"""Sphinx configuration for skillwire's documentation site (`make docs`: sphinx-build -W, warnings are errors).

Sphinx, MyST-Parser, Furo and sphinx-argparse rather than MkDocs, Material and mkdocstrings: MkDocs 1.x has had no
release since 2024 and Material is in maintenance mode, while Zensical, their successor, is pre-1.0 and its current
releases do not install from PyPI here; each of these is released from a maintained project this year, installs as
pure-Python wheels, builds offline, and turns every warning (a broken link or anchor included) into a failure.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))  # this checkout's skillwire, whatever the environment has installed

project = "skillwire"
copyright = "the skillwire authors"
extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinxarg.ext"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "build"]
html_theme = "furo"
html_title = "skillwire"
html_static_path: list[str] = []

# Markdown pages: headings get GitHub's anchors, so a link written as `page.md#a-heading` works on the site and on
# GitHub alike, and Sphinx checks that every such link and anchor exists (a missing one is a warning, so an error).
myst_heading_anchors = 4
myst_enable_extensions = ["deflist"]

# The API reference: skillwire.__all__, documented from the docstrings and type hints of the objects themselves.
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": True}
default_role = "code"  # a docstring's `name` is code, as in the Markdown pages
smartquotes = False  # `--http` stays two hyphens and quotes stay as typed, in prose and in generated help alike


def _examples_as_code(app: object, what: str, name: str, obj: object, options: object, lines: list[str]) -> None:
    """skillwire's docstrings show an example as a block indented under a blank line (as Markdown does); reST would
    read it as a quotation, so each such block becomes a literal block."""
    out: list[str] = []
    for line in lines:
        if line.startswith("    ") and out and not out[-1].strip():
            above = next((previous for previous in reversed(out) if previous.strip()), "")
            if not above.startswith(" ") and not above.rstrip().endswith("::"):  # not already inside a block
                out.extend(["::", ""])
        out.append(line)
    lines[:] = out


def setup(app: object) -> None:
    app.connect("autodoc-process-docstring", _examples_as_code)  # type: ignore[attr-defined]
