"""Skills with the edges a client trips on, and the bytes every interop client must read back.

    root = write_edge_skills(tmp_path / "edge")
    expected = expected_files([EXAMPLE_SKILLS, root])   # {"skill://.../SKILL.md": sha256 hex, ...}

The edges: a skill nested inside another, a binary file (NUL, 0xFF, invalid UTF-8), a file whose name is not
ASCII, a skill with several folders (two levels deep), and text with CRLF line ends and a byte-order mark. The
expected digests are computed here from the files on disk, apart from skillwire, so a client that verified
against the server's manifest and reports the same digests has read the bytes on disk.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote, unquote

BINARY = bytes(range(256)) + b"\x00\xff\xfe\x80PNG\r\n\x1a\n" * 4


def _skill_md(name: str, description: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n\n{body}\n"


def write_edge_skills(root: Path) -> Path:
    """Write the edge-case skills under `root` (created) and return it."""
    files: dict[str, bytes] = {
        "outer/SKILL.md": _skill_md("outer", "A skill holding another skill", "See [inner](inner/SKILL.md).").encode(),
        "outer/notes.md": b"Notes of the outer skill.\n",
        "outer/inner/SKILL.md": _skill_md("inner", "A skill nested inside another", "Nested.").encode(),
        "outer/inner/data.txt": b"inner data\n",
        "binary/SKILL.md": _skill_md("binary", "A skill carrying a binary file", "Use assets/blob.bin.").encode(),
        "binary/assets/blob.bin": BINARY,
        "unicode/SKILL.md": _skill_md("unicode", "A skill whose files have names beyond ASCII", "Café.").encode(),
        "unicode/références/café résumé.md": "# Café\n\nRésumé: naïve, 日本語, emoji 🎉.\n".encode(),
        "many-folders/SKILL.md": (
            "\ufeff---\r\nname: many-folders\r\ndescription: A skill with several folders, CRLF and a BOM\r\n---\r\n"
            "\r\nSee scripts/, references/ and assets/.\r\n"
        ).encode(),
        "many-folders/scripts/run.sh": b"#!/bin/sh\necho run\n",
        "many-folders/scripts/lib/helpers.py": b"def helper() -> int:\r\n    return 1\r\n",
        "many-folders/references/guide.md": b"# Guide\n",
        "many-folders/references/deep/er/still.md": b"deep\n",
        "many-folders/assets/empty.txt": b"",
    }
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return root


def skill_uri(relative: str) -> str:
    """The `skill://` URI of a file at `relative` (slash-separated) under a served root."""
    return "skill://" + quote(relative, safe="/")


def normal_uri(uri: str) -> str:
    """`uri` spelled as `skill_uri` spells it: servers may leave UTF-8 raw or percent-encode it in either case."""
    return skill_uri(unquote(uri.removeprefix("skill://")))


def expected_files(roots: Sequence[Path]) -> dict[str, str]:
    """Every file under `roots` as {URI: sha256 hex of its bytes on disk}, hidden files left out."""
    found: dict[str, str] = {}
    for root in roots:
        for folder, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            for name in names:
                if name.startswith("."):
                    continue
                path = Path(folder) / name
                relative = path.relative_to(root).as_posix()
                found[skill_uri(relative)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def expected_skills(roots: Sequence[Path]) -> set[str]:
    """The SKILL.md URI of every skill under `roots`."""
    return {uri for uri in expected_files(roots) if uri.endswith("/SKILL.md")}
