"""Floods from hostile upstreams that are real processes (issue 21, "Bad input": huge answers), over both upstream
transports: the answer is cut off as it arrives, so the gateway's memory stays small, and only that skill is
refused. Two processes: a stdio upstream the gateway starts itself (`mcp:stdio:...`), and an HTTP one."""

from __future__ import annotations

import shlex
import time
import tracemalloc
from pathlib import Path

from skillwire.sources.mcp import GatewayCache, McpSource, parse_upstream
from tests.support.flood import hostile_command, hostile_http

MIB = 1024 * 1024


def scan_measured(source: McpSource) -> tuple[list[tuple[str, str]], float, float]:
    """The refusals (rule, message) of one scan, its seconds, and the MiB Python allocated at its peak."""
    tracemalloc.start()
    started = time.monotonic()
    try:
        catalog = source.scan()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return [(r.rule, r.message) for r in catalog.refusals], time.monotonic() - started, peak / MIB


def test_a_64_mib_answer_to_a_101_byte_file_from_a_stdio_upstream_is_cut_off(tmp_path: Path) -> None:
    """`mcp:stdio:COMMAND`: the gateway starts the upstream; its 64 MiB answer stops past the size listed."""
    upstream = parse_upstream("stdio:" + shlex.join(hostile_command("huge-read")))
    refusals, seconds, peak = scan_measured(McpSource(upstream, cache=GatewayCache(tmp_path)))
    [(rule, message)] = refusals
    assert rule == "upstream-mismatch"
    assert "skill://huge/SKILL.md: the resources/read answer passed" in message
    assert peak < 16, f"{peak:.1f} MiB allocated for a 101-byte file"
    assert seconds < 30
    assert not list((tmp_path / "content").glob("*/*"))


def test_an_endless_answer_from_an_http_upstream_is_cut_off(tmp_path: Path) -> None:
    with hostile_http("endless-read") as url:
        refusals, seconds, peak = scan_measured(McpSource(parse_upstream(url), cache=GatewayCache(tmp_path)))
    [(rule, message)] = refusals
    assert rule == "upstream-mismatch"
    assert "answer passed" in message
    assert peak < 16, f"{peak:.1f} MiB allocated for a 101-byte file"
    assert seconds < 30
