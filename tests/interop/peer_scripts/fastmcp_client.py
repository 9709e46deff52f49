"""FastMCP 4.1's Skills client against a Skills server, for the interop tests (tests/interop/test_fastmcp.py).

    python tests/interop/peer_scripts/fastmcp_client.py '{"transport": "http", "url": "http://127.0.0.1:PORT/mcp"}'
    python tests/interop/peer_scripts/fastmcp_client.py '{"transport": "stdio", "command": "python", "args": [...]}'

FastMCP speaks Skills on the 2026-07-28 era only. The client connects with `mode="auto"` (it probes
`server/discover`; a pinned version would skip the probe and so never see the server's capabilities) and
`protocolVersion` in the summary says which era it settled on. One connection:
`list_skills()` (every page), then for every skill `get_skill()` and `read_resource()` of every file in its
manifest. FastMCP's client does not verify reads itself, so this script does, as a host must: each file's bytes
(text as UTF-8, blobs base64-decoded) against the manifest's size and digest. Prints one JSON object on stdout,
the shape `tools/node/skills-client-interop.mjs` prints:
  {client, protocolVersion, era, skills: [uri], files: {uri: sha256 hex}, verified: n, failures: [{step, uri, error}]}
fastmcp is imported by name: it lives in the FastMCP peer venv, not in the project's.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import importlib
import importlib.metadata
import json
import sys
from typing import Any

MODERN = "2026-07-28"


def _bytes_of(contents: list[Any]) -> bytes:
    if len(contents) != 1:
        raise ValueError(f"{len(contents)} contents in one read, expected 1")
    item = contents[0]
    blob = getattr(item, "blob", None)
    return base64.b64decode(blob) if blob is not None else str(item.text).encode("utf-8")


async def run(config: dict[str, Any]) -> dict[str, Any]:
    fastmcp: Any = importlib.import_module("fastmcp")
    skills_client: Any = importlib.import_module("fastmcp.skills.client")
    stdio: Any = importlib.import_module("fastmcp.client.transports")
    if config["transport"] == "http":
        target: Any = config["url"]
    else:
        target = stdio.StdioTransport(command=config["command"], args=config["args"])
    summary: dict[str, Any] = {
        "client": f"fastmcp {importlib.metadata.version('fastmcp')} Client (skills mixin)",
        "protocolVersion": None,
        "era": None,
        "skills": [],
        "files": {},
        "verified": 0,
        "failures": [],
    }
    client = fastmcp.Client(target, mode="auto", extensions=[skills_client.SkillsClientExtension()])
    async with client:
        summary["protocolVersion"] = client.protocol_version
        summary["era"] = "modern" if client.protocol_version == MODERN else "legacy"
        try:
            listing = await client.list_skills()
        except Exception as err:
            summary["failures"].append({"step": "list", "error": f"{type(err).__name__}: {err}"})
            return summary
        for entry in listing:
            summary["skills"].append(entry.uri)
            try:
                skill = await client.get_skill(entry.uri)
            except Exception as err:
                summary["failures"].append({"step": "get", "uri": entry.uri, "error": f"{type(err).__name__}: {err}"})
                skill = entry
            if skill.resources == "dynamic":
                summary["failures"].append({"step": "list", "uri": entry.uri, "error": "resources is dynamic"})
                continue
            for resource in skill.resources:
                try:
                    data = _bytes_of(await client.read_resource(resource.uri))
                except Exception as err:
                    failure = {"step": "read", "uri": resource.uri, "error": f"{type(err).__name__}: {err}"}
                    summary["failures"].append(failure)
                    continue
                digest = hashlib.sha256(data).hexdigest()
                summary["files"][resource.uri] = digest
                if len(data) == resource.size and f"sha256:{digest}" == resource.digest:
                    summary["verified"] += 1
                else:
                    error = f"read {len(data)} bytes sha256:{digest}, manifest {resource.size} {resource.digest}"
                    summary["failures"].append({"step": "verify", "uri": resource.uri, "error": error})
    return summary


def main() -> None:
    summary = asyncio.run(run(json.loads(sys.argv[1])))
    sys.stdout.write(json.dumps(summary))


if __name__ == "__main__":
    main()
