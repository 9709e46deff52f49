"""MCP Inspector's CLI (`@modelcontextprotocol/inspector --cli`) with `--verify` against `skillwire serve`.

`--method skills/list --verify` reads every file of every skill, checks it against the manifest (size, digest,
frontmatter) and the extension's conformance rules, and prints one JSON report per skill; it exits 7 when
anything fails. One run per (transport, era); the digests it reports must be those of the files on disk.
The Inspector keeps a catalog in its home folder: the run gets a HOME under tmp_path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.interop.clients import (
    NODE,
    NODE_TOOLS,
    ClientRun,
    Skillwire,
    assert_every_file_verified,
    need_node_tools,
    record,
    run_process,
)
from tests.support.servers import Mode, Transport

INSPECTOR = NODE_TOOLS / "node_modules" / "@modelcontextprotocol" / "inspector"
CLI = NODE_TOOLS / "node_modules" / ".bin" / "mcp-inspector"


def inspector_version() -> str:
    version: str = json.loads((INSPECTOR / "package.json").read_text(encoding="utf-8"))["version"]
    return version


def run_from_reports(transport: str, era: str, stdout: str) -> ClientRun:
    """The summary of `--verify`'s per-skill JSON lines: a skill or file that is not "verified" is a failure."""
    reports: list[dict[str, Any]] = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    files: dict[str, str] = {}
    failures: list[dict[str, Any]] = []
    verified = 0
    for report in reports:
        if not report.get("ok") or report.get("conformance") or report.get("frontmatter"):
            failures.append({"step": "verify", "uri": report.get("uri"), "error": report})
        for file in report.get("files", []):
            if file.get("status") == "verified":
                verified += 1
                files[file["uri"]] = str(file["actualDigest"]).removeprefix("sha256:")
            else:
                failures.append({"step": "verify", "uri": file.get("uri"), "error": file})
    return ClientRun(
        client=f"MCP Inspector {inspector_version()} --cli --verify",
        transport=transport,
        era=era,
        skills=tuple(str(r["uri"]) for r in reports),
        files=files,
        verified=verified,
        failures=tuple(failures),
    )


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_inspector_verify_passes_every_skill(
    transport: Transport, era: Mode, skillwire: Skillwire, expected: dict[str, str], tmp_path: Path
) -> None:
    """A skillwire choice checked by a real client: the Inspector's `--verify` finds every file verified."""
    need_node_tools("@modelcontextprotocol/inspector")
    target = [skillwire.url] if transport == "http" else ["--", *skillwire.command]
    command = [str(NODE), str(CLI), "--cli", "--method", "skills/list", "--verify", "--protocol-era", era, *target]
    # run_process fails the test on a non-zero exit: 7 (a check failed) or 8 (not fully checked).
    stdout = run_process(command, env={"HOME": str(tmp_path), "MCP_CATALOG_PATH": str(tmp_path / "mcp.json")})
    run = run_from_reports(transport, era, stdout)
    record(run)
    assert_every_file_verified(run, expected)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_inspector_reads_a_skill_directory_page_by_page(
    era: Mode, skillwire: Skillwire, roots: tuple[Path, ...], tmp_path: Path
) -> None:
    """Issue 11's TS/Inspector rejection of directory reads: the Inspector reads every page, on both eras."""
    need_node_tools("@modelcontextprotocol/inspector")
    base = [str(NODE), str(CLI), "--cli", skillwire.url, "--method", "resources/directory/read"]
    base += ["--uri", "skill://many-folders", "--protocol-era", era, "--format", "json"]
    env = {"HOME": str(tmp_path), "MCP_CATALOG_PATH": str(tmp_path / "mcp.json")}
    children: dict[str, dict[str, Any]] = {}
    cursor: list[str] = []
    for _ in range(10):
        result = json.loads(run_process([*base, *cursor], env=env))["result"]
        # ttlMs and cacheScope are sent on 2026-07-28 only: their presence says which era the Inspector spoke.
        assert ("ttlMs" in result and "cacheScope" in result) == (era == "modern")
        children.update({child["uri"]: child for child in result["resources"]})
        if "nextCursor" not in result:
            break
        cursor = ["--cursor", result["nextCursor"]]
    folders = {"skill://many-folders/" + name for name in ("assets", "references", "scripts")}
    assert set(children) == {"skill://many-folders/SKILL.md", *folders}
    assert all(children[uri]["mimeType"] == "inode/directory" for uri in folders)
    assert children["skill://many-folders/SKILL.md"]["size"] == (roots[1] / "many-folders" / "SKILL.md").stat().st_size
