"""The TypeScript SDK v2's `SkillsClient` (@modelcontextprotocol/client, `ext/skills`) against `skillwire serve`.

One run per (transport, era): list every page, get each skill, read every manifest file with the SDK's own
verification (size, digest, and frontmatter for SKILL.md), and walk each skill's folders with directory reads.
The driver is tools/node/skills-client-interop.mjs; it prints the digests of the bytes it read, which must be the
digests of the files on disk.
"""

from __future__ import annotations

import json

import pytest

from tests.interop.clients import (
    NODE,
    NODE_TOOLS,
    Skillwire,
    assert_every_file_verified,
    need_node_tools,
    record,
    run_json_client,
)
from tests.support.servers import MODERN_VERSION, Mode, Transport

DRIVER = NODE_TOOLS / "skills-client-interop.mjs"
PROTOCOL = {"legacy": "2025-11-25", "modern": MODERN_VERSION}


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_skills_client_verifies_every_file_and_walks_every_folder(
    transport: Transport, era: Mode, skillwire: Skillwire, expected: dict[str, str]
) -> None:
    """A skillwire choice checked by a real client: every skill and file passes the TS SDK's verification."""
    need_node_tools("@modelcontextprotocol/client")
    config = {**skillwire.config(transport), "era": era}
    run = run_json_client(transport, era, [str(NODE), str(DRIVER), json.dumps(config)])
    record(run)
    assert run.protocol_version == PROTOCOL[era]
    assert_every_file_verified(run, expected)
    assert set(run.directory_files) == set(expected), "directory reads must reach every served file"
