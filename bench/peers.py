"""skillwire beside other Skills servers, on the same generated catalog, over streamable HTTP.

python -m bench.peers --skills 10000 [--json results.json]

Servers, one at a time (the server under test and this client share the machine's cores):

  skillwire    `skillwire serve ROOT --http HOST:PORT --no-watch --quiet` (this project)
  agentskills  agentskills-mcp-server 0.7.x, its own CLI with a generated config (one entry per skill)
  fastmcp      FastMCP 4.1.x experimental Skills extension (`bench/peer_servers/fastmcp_skills.py`)
  ts-sdk       the official TypeScript SDK v2's skills server (@modelcontextprotocol/server 2.4 `ext/skills`, on
               node:http through @modelcontextprotocol/node: `bench/peer_servers/ts_sdk_skills.mjs`)
  bare-sdk     the `mcp` SDK's floor: one static resource for any read (`bench/peer_servers/bare_sdk.py`)
and, not run by default (`bench.floor` runs them): skillwire-watch (the watcher on) and skillwire-warm (the
watcher on, a `--digest-cache` written by an unmeasured start first), each measured to its first answer only.

The Python peers live in their own virtual environments inside the checkout (`.cache/peers/NAME`, created with
Python 3.12 and reused while they hold the right version), the TypeScript one in `.cache/peers/ts-sdk` (npm, with
the `node` on PATH, 20 or later). Every server runs with logging at warning and JSON responses.

Measured for each: time from spawn to the first answer, RSS then; a full enumeration of the catalog
(`skills/list` until no `nextCursor`, or `resources/list` where a server has no `skills/list`), checked
against the catalog; `resources/read` of random SKILL.md files with 1, 8 and 32 concurrent clients for a fixed
time, every answer checked against the file: its bytes' sha256 against the file's (the bare SDK's one static
text: its length), errors and wrong answers counted apart, not as throughput; peak RSS (VmHWM of the server's
process tree) at the end. The server's CPU time is read from /proc for startup, the enumeration and per read, and
so is the CPU that other processes on the machine used meanwhile: throughput is only comparable between servers
measured on an otherwise idle machine.

The client is the same for every server: raw JSON-RPC POSTs with one keep-alive `httpx2.AsyncClient`. A server
that speaks 2026-07-28 gets stateless requests (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `_meta`);
otherwise each client opens its own `initialize` session.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import fcntl
import hashlib
import importlib.metadata
import json
import os
import platform
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx2

from bench.generate import generate

HOST = "127.0.0.1"
MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
SKILLS_EXT = "io.modelcontextprotocol/skills"
ACCEPT = "application/json, text/event-stream"
CLIENT_INFO = {"name": "skillwire-bench", "version": "0"}
CLIENT_CAPS: dict[str, Any] = {"extensions": {SKILLS_EXT: {}}}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    "io.modelcontextprotocol/clientCapabilities": CLIENT_CAPS,
}
METHOD_NOT_FOUND = -32601
HERE = Path(__file__).resolve().parent
SERVER_ORDER = ("skillwire", "skillwire-watch", "skillwire-warm", "agentskills", "fastmcp", "ts-sdk", "bare-sdk")
DEFAULT_SERVERS = ("skillwire", "agentskills", "fastmcp", "ts-sdk", "bare-sdk")
TS_PACKAGES = (("@modelcontextprotocol/server", "2.4.0"), ("@modelcontextprotocol/node", "2.1.2"))
"""The TypeScript SDK v2's server package (its `ext/skills`) and its node:http adapter, pinned."""


def log(message: str) -> None:
    print(f"bench.peers: {message}", file=sys.stderr, flush=True)


def short(text: str, width: int = 44) -> str:
    one = " ".join(text.split())
    return one if len(one) <= width else one[: width - 1] + "…"


# ---------------------------------------------------------------------------------------------------------------
# Peer environments


@dataclass(frozen=True)
class PeerPackage:
    """A peer server installed from PyPI into its own venv."""

    name: str
    requirement: str
    python: str  # major.minor of the interpreter the venv is made with
    pins: tuple[tuple[str, str], ...]  # (distribution, version prefix) that `pip freeze` must show
    # Made over the running venv's packages (a .pth, this interpreter's version only): pip installs what they lack,
    # and a version they hold that the peer cannot use is installed into the peer's venv, ahead of them. The
    # interop tests' FastMCP shares the SDK and its dependencies with skillwire at the same versions: its venv
    # takes 2 s of CPU to make instead of 14, while the tests run.
    layered: bool = False


PEER_PACKAGES = {
    "agentskills": PeerPackage(
        "agentskills",
        "agentskills-mcp-server[fs]>=0.7,<0.8",
        "3.12",
        (("agentskills-mcp-server", "0.7."), ("agentskills-fs", "")),
    ),
    "fastmcp": PeerPackage("fastmcp", "fastmcp>=4.1,<4.2", "3.12", (("fastmcp", "4.1."),)),
}


def cache_root() -> Path:
    """Inside the checkout (`.cache/peers`, ignored by git, removed by `make clean`): what `make bench` and the
    interop tests install stays beside `.venv` instead of under the user's home."""
    return Path(__file__).resolve().parent.parent / ".cache" / "peers"


def _runs(python: str) -> bool:
    try:
        return (
            subprocess.run([python, "-c", "import venv"], capture_output=True, timeout=60, check=False).returncode == 0
        )
    except OSError:
        return False


def find_python(version: str) -> str:
    """An interpreter for `version` (e.g. "3.12"): the running one's base, a pyenv install, `pythonX.Y` on PATH."""
    base = Path(sys.base_prefix) / "bin" / f"python{version}"  # what this process's venv was made from
    if version == f"{sys.version_info.major}.{sys.version_info.minor}" and base.exists() and _runs(str(base)):
        return str(base)
    pyenv = shutil.which("pyenv")
    if pyenv is not None:
        out = subprocess.run([pyenv, "root"], capture_output=True, text=True, check=False)
        versions = Path(out.stdout.strip()) / "versions"
        if out.returncode == 0 and versions.is_dir():

            def key(path: Path) -> tuple[int, ...]:
                return tuple(int(part) if part.isdigit() else -1 for part in re.split(r"[.\-]", path.name))

            for folder in sorted(versions.glob(f"{version}.*"), key=key, reverse=True):
                candidate = folder / "bin" / f"python{version}"
                if candidate.exists() and _runs(str(candidate)):
                    return str(candidate)
    on_path = shutil.which(f"python{version}")
    if on_path is not None and _runs(on_path):  # a pyenv shim may exist and still refuse to run
        return on_path
    raise RuntimeError(f"no Python {version} found (looked in `pyenv root`/versions and for python{version} on PATH)")


def _frozen(python: Path) -> dict[str, str]:
    out = subprocess.run(
        [str(python), "-m", "pip", "freeze", "--disable-pip-version-check"], capture_output=True, text=True, check=True
    )
    found: dict[str, str] = {}
    for line in out.stdout.splitlines():
        name, sep, version = line.partition("==")
        if sep:
            found[re.sub(r"[-_.]+", "-", name).lower()] = version.strip()
    return found


def _satisfied(python: Path, package: PeerPackage) -> dict[str, str] | None:
    """The pinned versions when the venv at `python` holds them all, else None."""
    try:
        frozen = _frozen(python)
    except (OSError, subprocess.CalledProcessError):
        return None
    versions = {}
    for dist, prefix in package.pins:
        version = frozen.get(dist)
        if version is None or not version.startswith(prefix):
            return None
        versions[dist] = version
    return versions


def ensure_peer_venv(package: PeerPackage, root: Path | None = None) -> tuple[Path, dict[str, str]]:
    """The interpreter of `package`'s venv, created and installed when missing or at the wrong version (idempotent).

    One process at a time: the benchmark and the interop tests (tests/interop) may set up the same venv at once.
    """
    venv = (root or cache_root()) / package.name
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f"{package.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _ensure_peer_venv(package, venv)


def _ensure_peer_venv(package: PeerPackage, venv: Path) -> tuple[Path, dict[str, str]]:
    python = venv / "bin" / "python"
    if python.exists():
        versions = _satisfied(python, package)
        if versions is not None:
            log(f"reusing {venv} ({', '.join(f'{d} {v}' for d, v in versions.items())})")
            return python, versions
        log(f"{venv} does not hold {package.requirement}: reinstalling")
    elif package.layered:
        log(f"creating {venv} over {sys.prefix}")
        venv.parent.mkdir(parents=True, exist_ok=True)
        # no pip of its own: the running venv's, seen through the .pth, installs into this one
        subprocess.run([sys.executable, "-m", "venv", "--clear", "--without-pip", str(venv)], check=True)
        found = subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        )
        below = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
        (Path(found.stdout.strip()) / "_over_skillwire_venv.pth").write_text("".join(f"{p}\n" for p in below))
    else:
        base = find_python(package.python)
        log(f"creating {venv} with {base}")
        venv.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([base, "-m", "venv", "--clear", str(venv)], check=True)
    log(f"installing {package.requirement!r} into {venv}")
    subprocess.run(
        # --no-compile: a module is byte-compiled when first imported, so the many never imported cost nothing
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-compile",
            package.requirement,
        ],
        check=True,
        stdout=sys.stderr,
    )
    versions = _satisfied(python, package)
    if versions is None:
        raise RuntimeError(f"{venv}: {package.requirement} not installed after pip install")
    log(f"installed {', '.join(f'{d} {v}' for d, v in versions.items())}")
    return python, versions


def ensure_ts_peer(root: Path | None = None) -> tuple[list[str], dict[str, str]]:
    """The command that starts the TypeScript SDK's skills server (HOST, PORT and ROOT follow), and the versions:
    `TS_PACKAGES` installed with npm into `.cache/peers/ts-sdk` when missing or at another version (idempotent)."""
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("no `node` on PATH (Node.js 20 or later runs the TypeScript SDK)")
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    if int(version.lstrip("v").split(".")[0]) < 20:
        raise RuntimeError(f"node {version} is too old for the TypeScript SDK v2 (20 or later)")
    folder = (root or cache_root()) / "ts-sdk"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / "ts-sdk.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = _npm_versions(folder)
        if any(found.get(name) != want for name, want in TS_PACKAGES):
            npm = shutil.which("npm")
            if npm is None:
                raise RuntimeError("no `npm` on PATH to install the TypeScript SDK")
            (folder / "package.json").write_text(json.dumps({"name": "skillwire-bench-ts-peer", "private": True}))
            wanted = [f"{name}@{want}" for name, want in TS_PACKAGES]
            log(f"installing {' '.join(wanted)} into {folder}")
            subprocess.run(
                [npm, "install", "--no-audit", "--no-fund", "--save-exact", *wanted],
                cwd=folder,
                check=True,
                stdout=sys.stderr,
            )
            found = _npm_versions(folder)
        else:
            log(f"reusing {folder} ({', '.join(f'{n} {v}' for n, v in found.items())})")
        # Beside its node_modules, so that its imports resolve (ES modules do not look at NODE_PATH).
        shutil.copyfile(HERE / "peer_servers" / "ts_sdk_skills.mjs", folder / "ts_sdk_skills.mjs")
    return [node, str(folder / "ts_sdk_skills.mjs")], {**found, "node": version}


def _npm_versions(folder: Path) -> dict[str, str]:
    found = {}
    for name, _ in TS_PACKAGES:
        with contextlib.suppress(OSError, ValueError):
            found[name] = json.loads((folder / "node_modules" / name / "package.json").read_text())["version"]
    return found


# ---------------------------------------------------------------------------------------------------------------
# Catalog


@dataclass
class Catalog:
    root: Path
    skills: list[tuple[str, int]]  # (path under root, e.g. "team-a/area-0/skill-00000"; SKILL.md size)
    files: int
    total_bytes: int
    digests: dict[str, str] = field(default_factory=dict)  # SKILL.md URI -> sha256 hex of its bytes

    @property
    def uris(self) -> dict[str, int]:
        return {f"skill://{path}/SKILL.md": size for path, size in self.skills}

    def targets(self) -> list[tuple[str, int, str | None]]:
        """What the read load asks for: each SKILL.md, its size and its digest."""
        return [(uri, size, self.digests.get(uri)) for uri, size in self.uris.items()]

    @property
    def median_skill_md(self) -> int:
        return int(statistics.median(size for _, size in self.skills))


def load_catalog(root: Path) -> Catalog:
    skills: list[tuple[str, int]] = []
    digests: dict[str, str] = {}
    files = total = 0
    for folder, _, names in os.walk(root):
        for name in names:
            size = os.path.getsize(os.path.join(folder, name))
            files += 1
            total += size
            if name == "SKILL.md":
                rel = Path(folder).relative_to(root).as_posix()
                skills.append((rel, size))
                digests[f"skill://{rel}/SKILL.md"] = hashlib.sha256(Path(folder, name).read_bytes()).hexdigest()
    skills.sort()
    return Catalog(root, skills, files, total, digests)


def agentskills_config(catalog: Catalog, path: Path) -> dict[str, Any]:
    """agentskills-mcp-server's config for the catalog: one `fs` entry per skill, caps raised to fit.

    Its `fs` provider takes each immediate subfolder of `root` holding a SKILL.md as a skill named by the folder,
    so each entry's root is the skill's parent folder; `skill_paths` publishes it at the same URI as skillwire.
    """
    ids = [rel.rsplit("/", 1)[-1] for rel, _ in catalog.skills]
    if len(set(ids)) != len(ids):
        raise ValueError("skill folder names must be unique for agentskills-mcp-server ids")
    config = {
        "name": "agentskills-bench",
        "skills": [
            {"id": id_, "provider": "fs", "options": {"root": str((catalog.root / rel).parent)}}
            for id_, (rel, _) in zip(ids, catalog.skills, strict=True)
        ],
        "skill_paths": {id_: rel for id_, (rel, _) in zip(ids, catalog.skills, strict=True)},
        "page_size": 100,
        "max_skills": max(128, len(ids)),
        "max_total_bytes": max(64 * 1024 * 1024, 2 * catalog.total_bytes),
    }
    path.write_text(json.dumps(config))
    return config


# ---------------------------------------------------------------------------------------------------------------
# JSON-RPC client


class RpcError(Exception):
    def __init__(self, code: int | None, message: str) -> None:
        super().__init__(f"{code}: {message}" if code is not None else message)
        self.code = code
        self.message = message


def _header_value(value: str) -> str:
    """As the SDK's `encode_header_value`: printable ASCII verbatim, anything else base64-wrapped."""
    if re.fullmatch(r"[\x20-\x7E]*", value) and value == value.strip() and not value.startswith("=?base64?"):
        return value
    return f"=?base64?{base64.b64encode(value.encode()).decode('ascii')}?="


class Session:
    """One client's view of a server: stateless 2026-07-28 requests, or an `initialize` session."""

    def __init__(self, http: httpx2.AsyncClient, url: str, *, modern: bool) -> None:
        self.http = http
        self.url = url
        self.modern = modern
        self.version = MODERN if modern else HANDSHAKE
        self.session_id: str | None = None
        self.server_result: dict[str, Any] = {}
        self._next_id = 0

    @property
    def era(self) -> str:
        return f"{MODERN} stateless" if self.modern else f"{self.version} session"

    async def open(self) -> None:
        """Handshake era: `initialize` and `notifications/initialized`."""
        self.server_result = await self.call(
            "initialize", {"protocolVersion": HANDSHAKE, "capabilities": CLIENT_CAPS, "clientInfo": CLIENT_INFO}
        )
        self.version = str(self.server_result.get("protocolVersion", HANDSHAKE))
        await self._post({"jsonrpc": "2.0", "method": "notifications/initialized"}, "notifications/initialized", None)

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        request_id = self._next_id
        if self.modern:
            params = {**params, "_meta": MODERN_META}
        body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        response = await self._post(body, method, params.get("uri") if method == "resources/read" else None)
        message = _response_message(response, request_id)
        if "error" in message:
            error = message["error"]
            raise RpcError(error.get("code"), str(error.get("message", error)))
        if "result" not in message:
            raise RpcError(None, f"HTTP {response.status_code}: no result in {short(response.text, 120)}")
        result: dict[str, Any] = message["result"]
        return result

    async def _post(self, body: dict[str, Any], method: str, name: str | None) -> httpx2.Response:
        headers = {"Accept": ACCEPT, "Content-Type": "application/json", "MCP-Protocol-Version": self.version}
        if self.modern:
            headers["Mcp-Method"] = method
            if name is not None:
                headers["Mcp-Name"] = _header_value(name)
        elif self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        response = await self.http.post(self.url, content=json.dumps(body).encode(), headers=headers)
        if session_id := response.headers.get("mcp-session-id"):
            self.session_id = session_id
        return response


def _response_message(response: httpx2.Response, request_id: int) -> dict[str, Any]:
    ctype = response.headers.get("content-type", "")
    try:
        if ctype.startswith("text/event-stream"):
            for line in response.text.splitlines():
                if line.startswith("data:") and line[5:].strip():
                    message = json.loads(line[5:])
                    if isinstance(message, dict) and message.get("id") == request_id:
                        return message
            raise RpcError(None, f"HTTP {response.status_code}: no answer to request {request_id} in the SSE stream")
        if ctype.startswith("application/json"):
            message = json.loads(response.content)
            if isinstance(message, dict):
                return message
    except json.JSONDecodeError as exc:
        raise RpcError(None, f"HTTP {response.status_code}: bad JSON ({exc})") from None
    raise RpcError(None, f"HTTP {response.status_code} {ctype or 'no content-type'}: {short(response.text, 160)}")


async def connect(http: httpx2.AsyncClient, url: str) -> Session:
    """2026-07-28 (`server/discover`) when the server speaks it, else an `initialize` session."""
    modern = Session(http, url, modern=True)
    try:
        result = await modern.call("server/discover", {})
        if MODERN in result.get("supportedVersions", []):
            modern.server_result = result
            return modern
    except RpcError:
        pass
    session = Session(http, url, modern=False)
    await session.open()
    return session


async def new_session(template: Session) -> Session:
    """Another client like `template`: the same object's settings, and its own session when the era has them."""
    if template.modern:
        session = Session(template.http, template.url, modern=True)
        session.server_result = template.server_result
        return session
    session = Session(template.http, template.url, modern=False)
    await session.open()
    return session


# ---------------------------------------------------------------------------------------------------------------
# Workloads


@dataclass
class Enumeration:
    method: str = "skills/list"
    status: str = "ok"  # ok | timeout | error
    seconds: float = 0.0
    pages: int = 0
    first_page_s: float = 0.0
    slowest_page_s: float = 0.0
    entries: int = 0
    found: int = 0  # distinct catalog skills seen
    missing: int = 0
    unexpected: int = 0
    incomplete: int = 0  # skills/list entries whose resources are not all the skill's files
    error: str = ""


async def enumerate_catalog(session: Session, catalog: Catalog, files_per_skill: int, timeout: float) -> Enumeration:
    expected = catalog.uris
    seen: set[str] = set()
    result = Enumeration()
    start = time.perf_counter()

    async def pages(method: str, key: str, keep: Callable[[dict[str, Any]], str | None]) -> None:
        cursor: str | None = None
        while True:
            began = time.perf_counter()
            page = await session.call(method, {"cursor": cursor} if cursor else {})
            took = time.perf_counter() - began
            result.pages += 1
            result.first_page_s = result.first_page_s or took
            result.slowest_page_s = max(result.slowest_page_s, took)
            for item in page.get(key, []):
                result.entries += 1
                uri = keep(item)
                if uri is not None:
                    seen.add(uri)
            cursor = page.get("nextCursor")
            if not cursor:
                return

    def skill_entry(entry: dict[str, Any]) -> str:
        if len(entry.get("resources", [])) != files_per_skill:
            result.incomplete += 1
        return str(entry.get("uri"))

    def skill_md(resource: dict[str, Any]) -> str | None:
        uri = str(resource.get("uri"))
        return uri if uri.endswith("/SKILL.md") else None

    try:
        async with asyncio.timeout(timeout):
            try:
                await pages("skills/list", "skills", skill_entry)
            except RpcError as exc:
                if exc.code != METHOD_NOT_FOUND or result.pages:
                    raise
                result.method = "resources/list"
                result.entries = 0
                await pages("resources/list", "resources", skill_md)
    except TimeoutError:
        result.status = "timeout"
        result.error = f"no end after {timeout:.0f} s ({result.pages} pages, {len(seen)} skills)"
    except (RpcError, httpx2.HTTPError) as exc:
        result.status = "error"
        result.error = f"{type(exc).__name__}: {exc}" if isinstance(exc, httpx2.HTTPError) else str(exc)
    result.seconds = time.perf_counter() - start
    result.found = len(seen & expected.keys())
    result.missing = len(expected.keys() - seen)
    result.unexpected = len(seen - expected.keys())
    return result


@dataclass
class Load:
    clients: int
    seconds: float = 0.0
    ok: int = 0
    errors: int = 0  # JSON-RPC errors and HTTP/transport failures
    wrong: int = 0  # answers whose content is not the file's bytes
    rps: float = 0.0
    p50_ms: float = 0.0
    p99_ms: float = 0.0
    server_cpu_ms_per_read: float | None = None  # server CPU time over the counted window / answers counted
    other_cpu_share: float | None = None  # CPU used by neither server nor bench client, share of all cores
    error: str = ""


def _content(result: dict[str, Any]) -> bytes | None:
    contents = result.get("contents") or [{}]
    first = contents[0]
    if "text" in first:
        return str(first["text"]).encode()
    if "blob" in first:
        return base64.b64decode(first["blob"])
    return None


def _wrong(data: bytes | None, size: int, digest: str | None) -> str:
    """Why an answer is not the file's bytes ("" when it is): its length, then its sha256 when one is known."""
    if data is None:
        return "no contents"
    if len(data) != size:
        return f"{len(data)} bytes, expected {size}"
    if digest is not None and hashlib.sha256(data).hexdigest() != digest:
        return "bytes that do not match the file's sha256"
    return ""


async def read_load(
    sessions: Sequence[Session],
    targets: Sequence[tuple[str, int] | tuple[str, int, str | None]],
    *,
    duration: float,
    warmup: float,
    seed: int,
    server_cpu: Callable[[], float],
) -> Load:
    """`resources/read` from len(sessions) concurrent clients: `warmup` s uncounted, then `duration` s counted.

    `targets`: (uri, size) or (uri, size, sha256 hex) of the files asked for; each answer is checked against them."""
    load = Load(clients=len(sessions))
    latencies: list[float] = []

    async def client(index: int, session: Session, until: float, counted: bool) -> None:
        rng = random.Random(seed * 1000 + index)
        while time.perf_counter() < until:
            target = targets[rng.randrange(len(targets))]
            uri, size, digest = target[0], target[1], target[2] if len(target) > 2 else None
            began = time.perf_counter()
            try:
                result = await session.call("resources/read", {"uri": uri})
            except (RpcError, httpx2.HTTPError) as exc:
                if counted:
                    load.errors += 1
                    load.error = load.error or (str(exc) or type(exc).__name__)
                continue
            if not counted:
                continue
            latencies.append(time.perf_counter() - began)
            wrong = _wrong(_content(result), size, digest)
            if not wrong:
                load.ok += 1
            else:
                load.wrong += 1
                load.error = load.error or f"{uri}: {wrong}"

    if warmup > 0:
        until = time.perf_counter() + warmup
        await asyncio.gather(*(client(i, s, until, False) for i, s in enumerate(sessions)))
    cpu_before, busy_before, own_before = server_cpu(), machine_busy_seconds(), time.process_time()
    start = time.perf_counter()
    await asyncio.gather(*(client(i, s, start + duration, True) for i, s in enumerate(sessions)))
    load.seconds = time.perf_counter() - start
    server = server_cpu() - cpu_before
    other = machine_busy_seconds() - busy_before - server - (time.process_time() - own_before)
    load.other_cpu_share = max(0.0, other) / (load.seconds * (os.cpu_count() or 1))
    answered = load.ok + load.wrong + load.errors
    if answered:
        load.server_cpu_ms_per_read = 1000 * server / answered
    load.rps = load.ok / load.seconds
    if latencies:
        latencies.sort()
        load.p50_ms = 1000 * latencies[len(latencies) // 2]
        load.p99_ms = 1000 * latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    return load


# ---------------------------------------------------------------------------------------------------------------
# Server processes


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def _tree(pid: int) -> list[int]:
    pids = [pid]
    for current in pids:
        for task in Path(f"/proc/{current}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                pids.extend(int(child) for child in task.read_text().split())
    return pids


_TICK = os.sysconf("SC_CLK_TCK")


_QUIET_WINDOW_S = 0.3


def cpu_seconds(pid: int) -> float:
    """User + system CPU time used so far by the process and its descendants, the live ones and those their parent
    has waited for (a watcher process that ended still counts: without it, the sum fell when one did)."""
    ticks = 0
    for member in _tree(pid):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
            # utime, stime, cutime, cstime: fields 14 to 17 of stat (cutime: the children it has waited for)
            ticks += int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
    return ticks / _TICK


def machine_busy_seconds() -> float:
    """CPU time all cores have spent not idle since boot (/proc/stat), in seconds."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    guest = sum(fields[8:10])  # guest time is already counted in user/nice
    return (sum(fields) - idle - guest) / _TICK


def memory_mib(pid: int, key: str) -> float:
    """Sum of `key` (VmRSS, VmHWM) over the process and its descendants, in MiB."""
    total_kib = 0
    for member in _tree(pid):
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{member}/status").read_text().splitlines():
                if line.startswith(key + ":"):
                    total_kib += int(line.split()[1])
    return total_kib / 1024


def tail(path: Path, lines: int = 6) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(line.strip() for line in text[-lines:] if line.strip())


def last_error_line(path: Path) -> str:
    """The most telling line of a crashed server's output: its last exception line, else its last line."""
    try:
        text = [line.strip() for line in path.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    for line in reversed(text):
        if re.match(r"^[\w.]*(Error|Exception|Exit)\b", line) or re.match(r"^[\w.]+Error:", line):
            return line
    return text[-1] if text else ""


@dataclass
class Launch:
    argv: list[str]
    versions: dict[str, str]
    python: str
    notes: list[str] = field(default_factory=list)
    enumerate: bool = True
    targets: str = "catalog"  # catalog: SKILL.md of random skills; their expected sizes. "static": one size.
    reads: bool = True
    prime: list[str] | None = None  # run first to its first answer and stopped, unmeasured (a warm cache's writer)


@dataclass
class ServerResult:
    name: str
    versions: dict[str, str] = field(default_factory=dict)
    python: str = ""
    era: str = ""
    declares_skills: bool | None = None
    notes: list[str] = field(default_factory=list)
    setup_error: str = ""
    load_average: tuple[float, float, float] = (0.0, 0.0, 0.0)  # when the server was started
    ready_s: float | None = None
    ready_cpu_s: float | None = None  # server CPU time used to get there
    ready_error: str = ""
    rss_ready_mib: float | None = None
    settle_s: float | None = None  # from the first answer until the server went quiet (work it left for later)
    settle_cpu_s: float | None = None  # server CPU time used meanwhile
    enumeration: Enumeration | None = None
    enumeration_cpu_s: float | None = None  # server CPU time during the enumeration
    enumeration_other_cpu_share: float | None = None  # CPU used by neither server nor bench client, share of cores
    loads: list[Load] = field(default_factory=list)
    load_error: str = ""
    peak_rss_mib: float | None = None
    crashed: str = ""


class ServerDied(Exception):
    pass


async def wait_ready(proc: subprocess.Popen[bytes], http: httpx2.AsyncClient, url: str, timeout: float) -> Session:
    deadline = time.perf_counter() + timeout
    while True:
        if proc.poll() is not None:
            raise ServerDied(f"exited with {proc.returncode} before answering")
        try:
            return await connect(http, url)
        except httpx2.TransportError:
            if time.perf_counter() > deadline:
                raise TimeoutError(f"no answer after {timeout:.0f} s") from None
            await asyncio.sleep(0.02)


async def settle(pid: int, timeout: float) -> tuple[float, float]:
    """Wait until the server's processes are quiet (at most one clock tick of CPU over `_QUIET_WINDOW_S`): work a
    server leaves for after its first answer (a file watcher's set-up, a catch-up rescan) is then not charged to
    the reads measured next. The seconds from now until quiet (the window itself not counted) and the CPU used."""
    started, cpu_start = time.perf_counter(), cpu_seconds(pid)
    last = cpu_start
    while time.perf_counter() - started < timeout:
        await asyncio.sleep(_QUIET_WINDOW_S)
        now = cpu_seconds(pid)
        if now - last <= 1 / _TICK:
            return max(0.0, time.perf_counter() - started - _QUIET_WINDOW_S), last - cpu_start
        last = now
    return time.perf_counter() - started, last - cpu_start


def stop(proc: subprocess.Popen[bytes]) -> None:
    """End the server's process group (it was started in its own session)."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


async def bench_server(
    name: str, launch: Launch, catalog: Catalog, args: argparse.Namespace, work: Path
) -> ServerResult:
    result = ServerResult(name, versions=launch.versions, python=launch.python, notes=launch.notes)
    result.load_average = os.getloadavg()
    port = free_port()
    url = f"http://{HOST}:{port}/mcp"
    argv = [part.replace("{port}", str(port)) for part in launch.argv]
    log_path = work / f"{name}.log"
    if launch.prime is not None:
        result.ready_error = await _prime([part.replace("{port}", str(port)) for part in launch.prime], url, args, work)
        if result.ready_error:
            return result
    log(f"{name}: starting {' '.join(argv)}")
    with open(log_path, "wb") as out:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    limits = httpx2.Limits(
        max_connections=max(args.concurrency) * 2, max_keepalive_connections=max(args.concurrency) * 2
    )
    timeout = httpx2.Timeout(max(args.timeout, args.startup_timeout) + 30)
    try:
        async with httpx2.AsyncClient(limits=limits, timeout=timeout, trust_env=False) as http:
            try:
                session = await wait_ready(proc, http, url, args.startup_timeout)
            except (ServerDied, TimeoutError, RpcError, httpx2.HTTPError) as exc:
                result.ready_error = f"{exc}: {last_error_line(log_path)}" if isinstance(exc, ServerDied) else str(exc)
                return result
            result.ready_s = time.perf_counter() - started
            result.ready_cpu_s = cpu_seconds(proc.pid)
            result.rss_ready_mib = memory_mib(proc.pid, "VmRSS")
            result.era = session.era
            caps = session.server_result.get("capabilities", {})
            result.declares_skills = SKILLS_EXT in (caps.get("extensions") or {})
            log(f"{name}: ready in {result.ready_s:.2f} s ({session.era}), RSS {result.rss_ready_mib:.0f} MiB")
            result.settle_s, result.settle_cpu_s = await settle(proc.pid, args.startup_timeout)
            log(f"{name}: quiet {result.settle_s:.2f} s after its first answer ({result.settle_cpu_s:.2f} s CPU)")

            if launch.enumerate:
                cpu_before, busy_before, own_before = cpu_seconds(proc.pid), machine_busy_seconds(), time.process_time()
                result.enumeration = await enumerate_catalog(session, catalog, args.files, args.timeout)
                result.enumeration_cpu_s = cpu_seconds(proc.pid) - cpu_before
                other = (
                    machine_busy_seconds() - busy_before - result.enumeration_cpu_s - (time.process_time() - own_before)
                )
                capacity = max(result.enumeration.seconds, 0.01) * (os.cpu_count() or 1)
                result.enumeration_other_cpu_share = max(0.0, other) / capacity
                e = result.enumeration
                log(f"{name}: {e.method} {e.status} in {e.seconds:.2f} s, {e.found}/{len(catalog.skills)} skills")

            if launch.targets == "static":
                size = catalog.median_skill_md
                targets: list[tuple[str, int, str | None]] = [(uri, size, None) for uri in catalog.uris]
            else:
                targets = catalog.targets()
            for clients in args.concurrency if launch.reads else ():
                if proc.poll() is not None:
                    break
                try:
                    sessions = [session] + [await new_session(session) for _ in range(clients - 1)]
                except (RpcError, httpx2.HTTPError) as exc:
                    result.load_error = f"cannot open {clients} sessions: {exc}"
                    break
                load = await read_load(
                    sessions,
                    targets,
                    duration=args.duration,
                    warmup=args.warmup,
                    seed=clients,
                    server_cpu=lambda: cpu_seconds(proc.pid),
                )
                result.loads.append(load)
                log(f"{name}: {clients} clients: {load.rps:,.0f} reads/s, {load.errors} errors, {load.wrong} wrong")
            if proc.poll() is None:
                result.peak_rss_mib = memory_mib(proc.pid, "VmHWM")
    finally:
        if proc.poll() is not None and not result.ready_error:
            result.crashed = f"exited with {proc.returncode}: {last_error_line(log_path)}"
        stop(proc)
    return result


async def _prime(argv: list[str], url: str, args: argparse.Namespace, work: Path) -> str:
    """Run `argv` to its first answer and stop it (a warm start's cache written first); why it failed, or ""."""
    log(f"priming: {' '.join(argv)}")
    with open(work / "prime.log", "wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        async with httpx2.AsyncClient(timeout=httpx2.Timeout(args.startup_timeout + 30), trust_env=False) as http:
            await wait_ready(proc, http, url, args.startup_timeout)
    except (ServerDied, TimeoutError, RpcError, httpx2.HTTPError) as exc:
        return f"priming failed: {exc}"
    finally:
        stop(proc)
    return ""


def launches(catalog: Catalog, work: Path, wanted: Sequence[str]) -> dict[str, Launch | str]:
    """How to start each wanted server, or why it cannot be (a failed peer setup)."""
    here_python = f"{platform.python_version()} ({sys.executable})"
    mcp_version = importlib.metadata.version("mcp")
    out: dict[str, Launch | str] = {}
    for name in wanted:
        if name.startswith("skillwire"):
            exe = Path(sys.executable).parent / "skillwire"
            command = str(exe) if exe.exists() else (shutil.which("skillwire") or "skillwire")
            serve = [command, "serve", str(catalog.root), "--http", f"{HOST}:{{port}}", "--quiet"]
            versions = {"skillwire": importlib.metadata.version("skillwire"), "mcp": mcp_version}
            if name == "skillwire":
                note = "--no-watch, page size 100 (default), no --digest-cache (cold start)"
                out[name] = Launch([*serve, "--no-watch"], versions, here_python, [note])
            elif name == "skillwire-watch":
                note = "the watcher on (serve's default), no --digest-cache (cold start)"
                out[name] = Launch(serve, versions, here_python, [note], enumerate=False, reads=False)
            else:
                cache = ["--digest-cache", str(work / "skillwire.digests")]
                note = "the watcher on, a --digest-cache written by an unmeasured --no-watch start first"
                out[name] = Launch(
                    [*serve, *cache],
                    versions,
                    here_python,
                    [note],
                    enumerate=False,
                    reads=False,
                    prime=[*serve, "--no-watch", *cache],
                )
        elif name == "ts-sdk":
            try:
                ts_command, versions = ensure_ts_peer()
            except (OSError, RuntimeError, ValueError, subprocess.CalledProcessError) as exc:
                out[name] = f"setup failed: {exc}"
                continue
            shown = {"ts server": versions[TS_PACKAGES[0][0]], "node adapter": versions[TS_PACKAGES[1][0]]}
            out[name] = Launch(
                [*ts_command, str(catalog.root), HOST, "{port}"],
                shown,
                f"n/a (node {versions['node']})",
                [
                    f"{', '.join(f'{n} {v}' for n, v in versions.items())}: loadSkills(ROOT) + createMcpHandler "
                    "(JSON responses) + toNodeHandler on node:http; default page size"
                ],
            )
        elif name == "bare-sdk":
            size = catalog.median_skill_md
            out[name] = Launch(
                [sys.executable, str(HERE / "peer_servers" / "bare_sdk.py"), HOST, "{port}", str(size)],
                {"mcp": mcp_version},
                here_python,
                [f"one static {size}-byte resource (median SKILL.md) for any resources/read; no enumeration"],
                enumerate=False,
                targets="static",
            )
        else:
            try:
                python, versions = ensure_peer_venv(PEER_PACKAGES[name])
                frozen = _frozen(python)
                versions["mcp"] = frozen.get("mcp", "?")
                py_version = subprocess.run(
                    [str(python), "-c", "import platform; print(platform.python_version())"],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout.strip()
            except (OSError, RuntimeError, subprocess.CalledProcessError) as exc:
                out[name] = f"setup failed: {exc}"
                continue
            if name == "agentskills":
                config_path = work / "agentskills.json"
                config = agentskills_config(catalog, config_path)
                config_arg = ["--config", str(config_path)]
                out[name] = Launch(
                    [str(python), str(HERE / "peer_servers" / "agentskills_cli.py"), HOST, "{port}", *config_arg],
                    versions,
                    f"{py_version} ({python})",
                    [
                        f"config: {len(config['skills'])} entries (provider fs, root = skill's parent folder), "
                        f"skill_paths for skillwire's URIs, page_size {config['page_size']}, "
                        f"max_skills {config['max_skills']} (default 128), "
                        f"max_total_bytes {config['max_total_bytes']:,} (default 67,108,864)"
                    ],
                )
            else:
                out[name] = Launch(
                    [str(python), str(HERE / "peer_servers" / "fastmcp_skills.py"), str(catalog.root), HOST, "{port}"],
                    versions,
                    f"{py_version} ({python})",
                    ["SkillsDirectoryProvider(ROOT, experimental_skills=True) + SkillsExtension; default page size"],
                )
    return out


# ---------------------------------------------------------------------------------------------------------------
# Report


def _enumeration_cells(e: Enumeration | None, total: int) -> tuple[str, str, str]:
    if e is None:
        return "n/a", "n/a", "n/a"
    pages = f"{e.pages} page" + ("s" if e.pages != 1 else "")
    if e.status == "ok":
        found = f"{e.found}/{total}" + ("" if e.found == total else f" ({e.missing} missing)")
        if e.unexpected:
            found += f" +{e.unexpected} unknown"
        if e.incomplete:
            found += f", {e.incomplete} incomplete"
        return f"{e.method}, {pages}", f"{e.seconds:.2f}", found
    if e.status == "timeout":
        return f"{e.method}, {pages}", f"timeout ({e.seconds:.0f})", f"{e.found}/{total}"
    return e.method, "error: " + short(e.error, 36), f"{e.found}/{total}"


def _load_cell(load: Load | None) -> str:
    if load is None:
        return "not run"
    if load.ok == 0 and (load.errors or load.wrong):
        return "error: " + short(load.error, 36)
    cell = f"{load.rps:,.0f}"
    bad = load.errors + load.wrong
    if bad:
        cell += f" ({bad} bad)"
    return cell


def table(results: Sequence[ServerResult], catalog: Catalog, concurrency: Sequence[int], duration: float) -> str:
    total = len(catalog.skills)
    rows: list[tuple[str, list[str]]] = []

    def row(label: str, cell: Callable[[ServerResult], str]) -> None:
        rows.append((label, [cell(r) for r in results]))

    def failed(r: ServerResult) -> str | None:
        if r.setup_error:
            return short(r.setup_error)
        if r.ready_error:
            return "no start: " + short(r.ready_error, 34)
        return None

    row("version", lambda r: ", ".join(f"{k} {v}" for k, v in r.versions.items()) or "?")
    row("python", lambda r: r.python.split(" ")[0] or "?")
    row("protocol era used", lambda r: failed(r) or r.era)
    row(
        "declares skills extension",
        lambda r: "" if failed(r) else {True: "yes", False: "no", None: "?"}[r.declares_skills],
    )
    row("startup: spawn to first answer (s)", lambda r: failed(r) or f"{r.ready_s:.2f}")
    row(
        "  server CPU to get there (s)",
        lambda r: "" if failed(r) or r.ready_cpu_s is None else f"{r.ready_cpu_s:.2f}",
    )
    row("RSS at ready (MiB)", lambda r: "" if failed(r) or r.rss_ready_mib is None else f"{r.rss_ready_mib:.0f}")
    cells = {r.name: _enumeration_cells(r.enumeration, total) for r in results}
    row("enumerate: method", lambda r: "" if failed(r) else cells[r.name][0])
    row("enumerate: time (s)", lambda r: "" if failed(r) else cells[r.name][1])
    row("enumerate: skills found", lambda r: "" if failed(r) else cells[r.name][2])
    row(
        "  first / slowest page (s)",
        lambda r: (
            ""
            if failed(r) or r.enumeration is None or not r.enumeration.pages
            else f"{r.enumeration.first_page_s:.3f} / {r.enumeration.slowest_page_s:.3f}"
        ),
    )
    row(
        "enumerate: server CPU (s)",
        lambda r: "" if failed(r) or r.enumeration_cpu_s is None else f"{r.enumeration_cpu_s:.2f}",
    )
    row(
        "  CPU used by other processes",
        lambda r: "" if r.enumeration_other_cpu_share is None else f"{100 * r.enumeration_other_cpu_share:.0f}%",
    )
    for clients in concurrency:
        loads = {r.name: next((load for load in r.loads if load.clients == clients), None) for r in results}
        label = f"resources/read/s, {clients} client{'s' if clients > 1 else ''}"
        rows.append((label, ["" if failed(r) else _load_cell(loads[r.name]) for r in results]))
        if clients == 1:
            latency = []
            for r in results:
                load = loads[r.name]
                ok = not failed(r) and load is not None and load.ok
                latency.append(f"{load.p50_ms:.2f} / {load.p99_ms:.2f}" if ok and load is not None else "")
            rows.append(("  read latency p50 / p99 (ms), 1 client", latency))
    cpu_label = "server CPU ms per read, " + " / ".join(str(c) for c in concurrency) + " clients"
    cpu_cells = []
    for r in results:
        per = [
            next(
                (f"{x.server_cpu_ms_per_read:.2f}" for x in r.loads if x.clients == c and x.server_cpu_ms_per_read), "-"
            )
            for c in concurrency
        ]
        cpu_cells.append("" if failed(r) or not r.loads else " / ".join(per))
    rows.append((cpu_label, cpu_cells))
    other_cells = []
    for r in results:
        shares = [next((x.other_cpu_share for x in r.loads if x.clients == c), None) for c in concurrency]
        other_cells.append(" / ".join("-" if x is None else f"{100 * x:.0f}%" for x in shares) if r.loads else "")
    rows.append(("  CPU used by other processes, same levels", other_cells))
    row("peak RSS, VmHWM (MiB)", lambda r: "" if r.peak_rss_mib is None else f"{r.peak_rss_mib:.0f}")
    row("crashed", lambda r: short(r.crashed) if r.crashed else "no")

    width0 = max(len(label) for label, _ in rows)
    widths = [max(len(r.name), *(len(cells_[i]) for _, cells_ in rows)) for i, r in enumerate(results)]
    lines = [
        f"catalog: {total:,} skills x {catalog.files // max(total, 1)} files, {catalog.total_bytes / 2**20:.1f} MiB"
        f" | machine: {os.cpu_count()} cores, {platform.machine()}, Linux {platform.release()}"
        f" | bench client: Python {platform.python_version()}, httpx2 {importlib.metadata.version('httpx2')},"
        f" reads {duration:g} s per level",
        "",
        " " * width0 + "  " + "  ".join(r.name.ljust(w) for r, w in zip(results, widths, strict=True)),
    ]
    lines.append("-" * len(lines[-1]))
    for label, cells_ in rows:
        lines.append(label.ljust(width0) + "  " + "  ".join(c.ljust(w) for c, w in zip(cells_, widths, strict=True)))
    notes: list[str] = []
    for r in results:
        notes.extend(f"[{r.name}] {note}" for note in r.notes)
        for what, text in (
            ("setup", r.setup_error),
            ("startup", r.ready_error),
            ("enumerate", r.enumeration.error if r.enumeration else ""),
            ("reads", r.load_error),
            ("crash", r.crashed),
        ):
            if text:
                notes.append(f"[{r.name}] {what}: {short(text, 300)}")
        for load in r.loads:
            if load.error:
                notes.append(
                    f"[{r.name}] reads, {load.clients} clients: {load.errors} errors, {load.wrong} wrong;"
                    f" first: {short(load.error, 200)}"
                )
    if notes:
        lines += ["", *notes]
    return "\n".join(line.rstrip() for line in lines)


# ---------------------------------------------------------------------------------------------------------------


async def run(args: argparse.Namespace, work: Path) -> tuple[Catalog, list[ServerResult]]:
    root = work / "catalog"
    if args.catalog is not None:
        root = args.catalog.resolve()
    else:
        log(f"generating {args.skills} skills x {args.files} files under {root}")
        generate(root, skills=args.skills, files=args.files)
    catalog = load_catalog(root)
    if not catalog.skills:
        raise SystemExit(f"no skills under {root}")
    results: list[ServerResult] = []
    for name, launch in launches(catalog, work, args.servers).items():
        if isinstance(launch, str):
            results.append(ServerResult(name, setup_error=launch))
            continue
        results.append(await bench_server(name, launch, catalog, args, work))
    return catalog, results


def _concurrency(text: str) -> list[int]:
    levels = [int(part) for part in text.split(",") if part.strip()]
    if not levels or min(levels) < 1:
        raise argparse.ArgumentTypeError("a comma-separated list of positive integers")
    return levels


def _servers(text: str) -> list[str]:
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = set(names) - set(SERVER_ORDER)
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"choose from {', '.join(SERVER_ORDER)}")
    return names


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.peers", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--skills", type=int, default=10000, help="catalog size (default 10000)")
    parser.add_argument("--files", type=int, default=5, help="files per skill, SKILL.md included (default 5)")
    parser.add_argument("--catalog", type=Path, help="serve this existing catalog instead of generating one")
    parser.add_argument(
        "--servers",
        type=_servers,
        default=list(DEFAULT_SERVERS),
        help=f"comma-separated subset of {','.join(SERVER_ORDER)} (run in the order given; default: "
        f"{','.join(DEFAULT_SERVERS)})",
    )
    parser.add_argument("--concurrency", type=_concurrency, default=[1, 8, 32], help="default 1,8,32")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds counted per concurrency level")
    parser.add_argument("--warmup", type=float, default=1.0, help="uncounted seconds before each level")
    parser.add_argument("--timeout", type=float, default=300.0, help="limit for the enumeration (s, default 300)")
    parser.add_argument("--startup-timeout", type=float, default=600.0, help="limit for startup (s, default 600)")
    parser.add_argument("--json", type=Path, help="write the raw results here")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (catalog, configs, server logs)")
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="skillwire-peers-"))
    try:
        catalog, results = asyncio.run(run(args, work))
        print(table(results, catalog, args.concurrency, args.duration))
        if args.json is not None:
            raw = {
                "catalog": {
                    "skills": len(catalog.skills),
                    "files": catalog.files,
                    "bytes": catalog.total_bytes,
                    "median_skill_md": catalog.median_skill_md,
                },
                "machine": {
                    "cores": os.cpu_count(),
                    "arch": platform.machine(),
                    "kernel": platform.release(),
                    "python": platform.python_version(),
                },
                "settings": {
                    "concurrency": args.concurrency,
                    "duration": args.duration,
                    "warmup": args.warmup,
                    "timeout": args.timeout,
                    "startup_timeout": args.startup_timeout,
                },
                "servers": [asdict(r) for r in results],
            }
            args.json.write_text(json.dumps(raw, indent=2) + "\n")
            log(f"raw results in {args.json}")
    finally:
        if args.keep:
            log(f"work folder kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
