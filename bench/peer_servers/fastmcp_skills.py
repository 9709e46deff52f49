"""FastMCP's experimental Skills extension (SEP-2640) serving a folder of skills over streamable HTTP.

    python bench/peer_servers/fastmcp_skills.py ROOT HOST PORT        (in a venv with fastmcp 4.1.x)

Set up as FastMCP documents it ("Experimental Skills Extension"): a `SkillsDirectoryProvider` over ROOT with
`experimental_skills=True`, registered on the server, and a `SkillsExtension` bound to that same provider. Every
folder under ROOT holding a SKILL.md is a skill named by its relative path, so `team-a/area-0/skill-00000` is
`skill://team-a/area-0/skill-00000/SKILL.md`, as skillwire names it. Pagination is FastMCP's default (no
`list_page_size`: `skills/list` answers in one page). Logging is kept at warning and responses are JSON, the
transport settings every server in `bench.peers` runs with.

fastmcp is imported by name at run time: it is not installed in the project's environment (nor type-checked there).
"""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path
from typing import Any


def build(root: Path) -> Any:
    fastmcp: Any = importlib.import_module("fastmcp")
    providers: Any = importlib.import_module("fastmcp.server.providers.skills")
    extension: Any = importlib.import_module("fastmcp.skills.extension")
    server = fastmcp.FastMCP("fastmcp-skills")
    skills = providers.SkillsDirectoryProvider(root, experimental_skills=True)
    server.add_provider(skills)
    server.add_extension(extension.SkillsExtension(providers=[skills]))
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("root", type=Path)
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    args = parser.parse_args()
    build(args.root).run(
        transport="http",
        host=args.host,
        port=args.port,
        path="/mcp",
        json_response=True,
        log_level="warning",
        show_banner=False,
    )


if __name__ == "__main__":
    main()
