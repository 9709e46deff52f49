"""skillwire's own `Host` as the client: load every skill a server lists and read every file through the host.

    run = await host_reads_everything("FastMCP 4.1.7", url)
    assert_host_read_disk(run, one_root)

The user approves every load and grants nothing. Files are asked for as a model would ask: by their path in the
skill's folder, not percent-encoded. Every read goes through the host's verification (size, digest, frontmatter).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from urllib.parse import unquote

from skillwire import ApproveLoads, Host
from tests.interop.clients import ClientRun
from tests.interop.fixture import expected_files, normal_uri
from tests.support.servers import MODERN_VERSION

LABEL = "peer"


async def host_reads_everything(server: str, url: str) -> ClientRun:
    """Load every listed skill from the server at `url` and read each file of its held entry, verified."""
    files: dict[str, str] = {}
    skills: list[str] = []
    failures: list[dict[str, str]] = []
    reads = 0
    async with Host(prompt=ApproveLoads()) as host:
        await host.add_server(LABEL, url)
        protocol_version = host.client(LABEL).protocol_version
        failures += [{"step": "list", "error": str(problem)} for problem in host.problems(LABEL)]
        for item in host.catalog():
            skills.append(item.uri)
            loaded = await host.load_skill(item.handle)
            window = host.window(item.handle)
            if loaded.grants or isinstance(window.entry.resources, str):
                failures.append({"step": "load", "uri": item.uri, "error": "granted something, or dynamic"})
                continue
            for record in window.entry.resources:
                relative = unquote(record.uri[len(window.entry.root_uri) + 1 :])
                data = await host.read_skill_file(item.handle, relative)
                reads += 1
                files[normal_uri(record.uri)] = hashlib.sha256(data).hexdigest()
    return ClientRun(
        client="skillwire Host",
        server=server,
        transport="http",
        era="modern" if protocol_version == MODERN_VERSION else "legacy",
        protocol_version=protocol_version,
        skills=tuple(skills),
        files=files,
        verified=reads,
        failures=tuple(failures),
    )


def assert_host_read_disk(run: ClientRun, root: Path) -> None:
    """The host loaded every skill under `root` and read every file's exact bytes on the 2026-07-28 era."""
    expected = {normal_uri(uri): digest for uri, digest in expected_files([root]).items()}
    assert run.failures == ()
    assert run.protocol_version == MODERN_VERSION
    assert sorted(normal_uri(uri) for uri in run.skills) == sorted(uri for uri in expected if uri.endswith("/SKILL.md"))
    assert run.files == expected
