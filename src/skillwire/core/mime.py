"""MIME types for skill files, from a table pinned in this package.

The machine's `/etc/mime.types` (which `mimetypes` reads) differs between hosts,
so two servers would describe the same file differently; this table does not.
Resource Metadata: SKILL.md "mimeType SHOULD be text/markdown".

    mime_type_for("SKILL.md")          # 'text/markdown'
    mime_type_for("scripts/run.py")    # 'text/x-python'
"""

from __future__ import annotations

DIRECTORY_MIME_TYPE = "inode/directory"
DEFAULT_MIME_TYPE = "application/octet-stream"

_BY_EXTENSION: dict[str, str] = {
    # text and markup
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".mdx": "text/markdown",
    ".txt": "text/plain",
    ".text": "text/plain",
    ".rst": "text/x-rst",
    ".adoc": "text/asciidoc",
    ".html": "text/html",
    ".htm": "text/html",
    ".css": "text/css",
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".xml": "application/xml",
    ".svg": "image/svg+xml",
    # data and configuration
    ".json": "application/json",
    ".jsonl": "application/jsonl",
    ".ndjson": "application/x-ndjson",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".toml": "application/toml",
    ".ini": "text/plain",
    ".cfg": "text/plain",
    ".conf": "text/plain",
    ".env": "text/plain",
    ".sql": "application/sql",
    ".graphql": "application/graphql",
    # code
    ".py": "text/x-python",
    ".pyi": "text/x-python",
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".cjs": "text/javascript",
    ".ts": "text/x-typescript",
    ".tsx": "text/x-typescript",
    ".jsx": "text/javascript",
    ".sh": "application/x-sh",
    ".bash": "application/x-sh",
    ".zsh": "application/x-sh",
    ".ps1": "text/plain",
    ".rb": "text/x-ruby",
    ".go": "text/x-go",
    ".rs": "text/x-rust",
    ".java": "text/x-java",
    ".kt": "text/x-kotlin",
    ".swift": "text/x-swift",
    ".c": "text/x-c",
    ".h": "text/x-c",
    ".cpp": "text/x-c++",
    ".hpp": "text/x-c++",
    ".cs": "text/x-csharp",
    ".php": "application/x-httpd-php",
    ".pl": "text/x-perl",
    ".lua": "text/x-lua",
    ".r": "text/x-r",
    ".ipynb": "application/x-ipynb+json",
    # documents and media
    ".pdf": "application/pdf",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".ico": "image/vnd.microsoft.icon",
    ".mp3": "audio/mpeg",
    ".wav": "audio/wav",
    ".mp4": "video/mp4",
    ".woff": "font/woff",
    ".woff2": "font/woff2",
    ".ttf": "font/ttf",
    ".otf": "font/otf",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    # archives
    ".zip": "application/zip",
    ".gz": "application/gzip",
    ".tar": "application/x-tar",
}

_BY_NAME: dict[str, str] = {
    "SKILL.md": "text/markdown",
    "Makefile": "text/x-makefile",
    "Dockerfile": "text/plain",
    "LICENSE": "text/plain",
    "LICENSE.txt": "text/plain",
}


def mime_type_for(path: str) -> str:
    """The MIME type for a file at `path` (`/`-separated), by name and then by extension."""
    name = path.rsplit("/", 1)[-1]
    if name in _BY_NAME:
        return _BY_NAME[name]
    dot = name.rfind(".")
    if dot <= 0:
        return DEFAULT_MIME_TYPE
    return _BY_EXTENSION.get(name[dot:].lower(), DEFAULT_MIME_TYPE)
