"""`skillwire serve --http` behind a real nginx terminating TLS, configured as docs/deploying.md says.

One nginx master (Debian's package, installed by `make test`) with its own config, certificate and logs in a
temporary folder, listening on 127.0.0.1 with a self-signed certificate for `skills.test`, in front of
`skillwire serve --http 127.0.0.1:0 --public-url https://skills.test:PORT`. Clients use the public URL as a
person would: `skills.test` is mapped to 127.0.0.1 in this process (as `curl --resolve` does) and the
certificate is trusted through `SSL_CERT_FILE`, so SNI, `Host` and certificate checks are the real ones.

    with nginx_proxy(tmp, cert) as nginx:    # on a free port, proxying nowhere yet
        nginx.point_at(backend_port)           # rewrite the config and reload
"""

from __future__ import annotations

import datetime
import os
import pwd
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from deploy.fleet import stop as stop_process
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.subscriptions import ResourcesListChanged
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from skillwire.client.session import SkillsClient
from skillwire.core.hosting.verify import verify_bytes
from tests.support.doc_blocks import find
from tests.support.oidc import OidcProvider, oidc_provider
from tests.support.servers import EXAMPLE_SKILLS, HttpServer, http_server

PUBLIC_NAME = "skills.test"  # RFC 2606: a name that never resolves anywhere but here
SCOPE = "skills:read"
START_TIMEOUT_S = 10.0
DEADLINE_S = 10.0


# `$http_host`, not `$host`: `$host` drops the port, and a public URL with a port then matches no allowed Host.
def _documented_location() -> str:
    """The nginx `location` block of docs/deploying.md, with its backend port made a placeholder: the test runs
    exactly what users are told to write."""
    block = find("docs/deploying.md", "proxy_pass http://127.0.0.1:8000;").text
    return block.replace("127.0.0.1:8000", "127.0.0.1:BACKEND")


PROXY_LOCATION = _documented_location()


# -- nginx -------------------------------------------------------------------------------------------------------------


def _nginx() -> str:
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/sbin")
    if found is None:
        pytest.fail("nginx is missing: `make test` installs it (Debian's `nginx` package)", pytrace=False)
    return found


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass(frozen=True)
class Certificate:
    """A self-signed certificate for `skills.test` (its own CA), as PEM files."""

    cert: Path
    key: Path


def make_certificate(folder: Path) -> Certificate:
    """A P-256 key and a one-day self-signed certificate whose only name is `skills.test`."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, PUBLIC_NAME)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(PUBLIC_NAME)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    paths = Certificate(folder / "cert.pem", folder / "key.pem")
    paths.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths.key.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    paths.key.chmod(0o600)
    return paths


def nginx_config(prefix: Path, *, port: int, backend_port: int, cert: Certificate) -> str:
    """A whole nginx.conf: everything it writes stays under `prefix`; one TLS server holding the documented block."""
    user = pwd.getpwuid(os.getuid()).pw_name  # as root, workers would otherwise run as `nobody`
    return f"""
user {user};
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log info;
events {{ worker_connections 64; }}
http {{
    access_log {prefix}/access.log;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    server {{
        listen 127.0.0.1:{port} ssl;
        server_name {PUBLIC_NAME};
        ssl_certificate {cert.cert};
        ssl_certificate_key {cert.key};
{PROXY_LOCATION.replace("BACKEND", str(backend_port))}
    }}
}}
"""


def _serves_our_certificate(port: int, cert: Certificate) -> bool:
    """True once 127.0.0.1:`port` completes a TLS handshake for `skills.test` with our certificate: our nginx,
    not another process that took the port first."""
    context = ssl.create_default_context(cafile=str(cert.cert))
    try:
        with (
            socket.create_connection(("127.0.0.1", port), timeout=2) as raw,
            context.wrap_socket(raw, server_hostname=PUBLIC_NAME),
        ):
            return True
    except OSError:  # refused, reset, or ssl.SSLError: not (yet) ours
        return False


@dataclass
class Nginx:
    """Our own nginx master (not the system service), on `port`, whose backend can be changed by a reload."""

    prefix: Path
    port: int
    cert: Certificate
    process: subprocess.Popen[bytes]

    def error_log(self) -> str:
        log = self.prefix / "error.log"
        return log.read_text(errors="replace") if log.exists() else ""

    def workers(self) -> set[int]:
        """The master's worker processes now."""
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        return {int(pid) for pid in children.read_text().split()} if children.exists() else set()

    def point_at(self, backend_port: int) -> None:
        """Rewrite the config for `backend_port` and reload (SIGHUP); return once the old workers are gone."""
        self.prefix.joinpath("nginx.conf").write_text(
            nginx_config(self.prefix, port=self.port, backend_port=backend_port, cert=self.cert), encoding="utf-8"
        )
        old = self.workers()
        self.process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + START_TIMEOUT_S
        while old & self.workers() or not self.workers():  # an old worker would still proxy to the closed port
            if self.process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"nginx did not reload; error log:\n{self.error_log()}", pytrace=False)
            time.sleep(0.02)


@contextmanager
def nginx_proxy(prefix: Path, cert: Certificate, *, attempts: int = 5) -> Iterator[Nginx]:
    """Start nginx on a free loopback port (another, if that one is taken first), proxying to a closed port
    until `point_at`; SIGQUIT and wait at the end."""
    prefix.mkdir(parents=True, exist_ok=True)
    conf = prefix / "nginx.conf"
    for _ in range(attempts):
        port = _free_port()
        conf.write_text(nginx_config(prefix, port=port, backend_port=9, cert=cert), encoding="utf-8")
        process = subprocess.Popen(
            [_nginx(), "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "error.log"), "-g", "daemon off;"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        nginx = Nginx(prefix, port, cert, process)
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while process.poll() is None and time.monotonic() < deadline:
                if _serves_our_certificate(port, cert):
                    yield nginx
                    return
                time.sleep(0.05)
        finally:
            _stop_nginx(process)
    pytest.fail(f"nginx did not listen on 127.0.0.1 ({attempts} ports tried); error log:\n{nginx.error_log()}")


def _stop_nginx(process: subprocess.Popen[bytes]) -> None:
    stop_process(process, sig=signal.SIGQUIT)  # graceful: workers finish, the master removes its pid file


# -- the deployment ----------------------------------------------------------------------------------------------------


@dataclass
class Proxied:
    """skillwire behind nginx: the public URL clients use, the backend, its skills folder, and a token-file token."""

    public: str
    backend: HttpServer
    root: Path
    token: str
    op: OidcProvider

    @property
    def mcp(self) -> str:
        return f"{self.public}/mcp"

    def bearer(self, token: str | None = None) -> dict[str, str]:
        return {"Authorization": f"Bearer {token or self.token}"}


def _map_public_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """`skills.test` resolves to 127.0.0.1 in this process, and nothing else changes (as `curl --resolve`)."""
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        return real("127.0.0.1" if host in (PUBLIC_NAME, PUBLIC_NAME.encode()) else host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxied]:
    _nginx()  # fail (never skip) before starting anything
    tmp = tmp_path_factory.mktemp("proxy")
    root = tmp / "skills"
    shutil.copytree(EXAMPLE_SKILLS, root)
    cert = make_certificate(tmp)
    token = secrets.token_urlsafe(32)
    tokens = tmp / "tokens"
    tokens.write_text(f"{token} subject=ci scopes={SCOPE}\n", encoding="utf-8")
    tokens.chmod(0o600)
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("SSL_CERT_FILE", str(cert.cert))  # httpx2 trusts exactly this certificate
        _map_public_name(monkeypatch)
        with nginx_proxy(tmp / "nginx", cert) as nginx:
            public = f"https://{PUBLIC_NAME}:{nginx.port}"
            options = ("--public-url", public, "--token-file", str(tokens), "--quiet")
            with oidc_provider() as op, http_server([root], *options, "--auth-issuer", op.issuer) as backend:
                nginx.point_at(_port(backend.url))
                yield Proxied(public, backend, root, token, op)
                backend.assert_alive()
                assert token not in backend.stderr


def _port(url: str) -> int:
    port = urlsplit(url).port
    assert port is not None
    return port


def _get(url: str, headers: dict[str, str] | None = None) -> httpx2.Response:
    return httpx2.get(url, headers=headers or {}, timeout=20)


# -- through the proxy -------------------------------------------------------------------------------------------------


async def _read_everything(url: str, headers: dict[str, str], mode: str) -> tuple[str, dict[str, bytes]]:
    """The protocol version negotiated, and every file of every listed skill, each checked against its digest."""
    files: dict[str, bytes] = {}
    async with SkillsClient.connect(url, headers=headers, mode=mode) as client:
        listing = await client.list_entries()
        assert listing.complete
        assert not listing.problems
        for entry in listing.entries:
            assert not isinstance(entry.resources, str)
            for resource in entry.resources:
                data = await client.read(resource.uri)
                verify_bytes(resource, data)
                files[resource.uri.removeprefix("skill://")] = data
        return client.protocol_version, files


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_every_example_skill_reads_byte_for_byte_through_nginx_over_https(proxied: Proxied, mode: str) -> None:
    """docs/deploying.md: a client on the public https URL lists and reads every file, 2026-07-28 and `initialize`."""
    version, files = anyio.run(_read_everything, proxied.mcp, proxied.bearer(), mode)
    on_disk = {p.relative_to(proxied.root).as_posix(): p.read_bytes() for p in proxied.root.rglob("*") if p.is_file()}
    assert files == on_disk
    if mode == "legacy":
        assert version in HANDSHAKE_PROTOCOL_VERSIONS  # a session kept by Mcp-Session-Id, through nginx
    else:
        assert version == "2026-07-28"


def test_401_through_nginx_names_metadata_on_the_public_url(proxied: Proxied) -> None:
    """RFC 9728 behind a proxy: the challenge and the metadata speak of https://skills.test:PORT, not the backend."""
    response = httpx2.post(proxied.mcp, json={}, headers={"Accept": "application/json, text/event-stream"}, timeout=20)
    assert response.status_code == 401
    metadata_url = f"{proxied.public}/.well-known/oauth-protected-resource/mcp"
    assert f'resource_metadata="{metadata_url}"' in response.headers["www-authenticate"]
    metadata = _get(metadata_url).json()
    assert metadata["resource"] == proxied.mcp
    assert metadata["authorization_servers"] == [proxied.op.issuer]


def test_a_token_for_the_public_url_reads_and_one_for_the_backend_url_does_not(proxied: Proxied) -> None:
    """RFC 8707 behind a proxy: the audience is the public resource URL; a token for the backend's URL is refused."""
    # Signed with the key the issuer publishes (its test instance issues tokens for loopback resources only).
    public_token = proxied.op.key.sign(proxied.op.claims(resource=proxied.mcp, scope=SCOPE))
    _, files = anyio.run(_read_everything, proxied.mcp, proxied.bearer(public_token), "auto")
    assert "pdf-processing/SKILL.md" in files
    backend_token = proxied.op.token(resource=proxied.backend.url, scope=SCOPE)  # a real one, for the backend
    assert _get(f"{proxied.public}/", proxied.bearer(backend_token)).status_code == 401


def test_a_foreign_host_passed_through_nginx_gets_421(proxied: Proxied) -> None:
    """DNS rebinding through the proxy: nginx forwards the client's Host, and skillwire refuses one it is not."""
    for host in ("evil.example", f"evil.example:{proxied.public.rsplit(':', 1)[1]}"):
        response = _get(f"{proxied.public}/", {**proxied.bearer(), "Host": host})
        assert response.status_code == 421, (host, response.status_code)
    foreign_origin = _get(f"{proxied.public}/", {**proxied.bearer(), "Origin": "https://evil.example"})
    assert foreign_origin.status_code == 403


def test_the_catalog_page_works_through_nginx_with_the_token(proxied: Proxied) -> None:
    """docs/deploying.md: the catalog page and a skill page answer through the proxy with the token, 401 without."""
    for path in ("/", "/skills/pdf-processing"):
        assert _get(proxied.public + path).status_code == 401
        page = _get(proxied.public + path, {**proxied.bearer(), "Origin": proxied.public})
        assert page.status_code == 200, page.text[:300]
        assert "pdf-processing" in page.text


@asynccontextmanager
async def _client(url: str, headers: dict[str, str]) -> AsyncIterator[Client]:
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(url, http_client=http), mode="auto", cache=None, read_timeout_seconds=30) as c,
    ):
        yield c


def test_a_change_reaches_a_listen_stream_through_nginx_at_once(proxied: Proxied) -> None:
    """A subscriptions/listen event crosses nginx as it happens, not when a buffer fills (`proxy_buffering off`;
    the SDK also sends `X-Accel-Buffering: no`: with both undone, this fails)."""

    async def scenario() -> None:
        async with (
            _client(proxied.mcp, proxied.bearer()) as client,
            client.listen(resources_list_changed=True) as subscription,
        ):
            assert subscription.honored.resources_list_changed is True
            skill = proxied.root / "proxy-news"
            skill.mkdir()
            (skill / "SKILL.md").write_text(
                "---\nname: proxy-news\ndescription: Added while a listen stream was open.\n---\nBody.\n",
                encoding="utf-8",
            )
            with anyio.fail_after(DEADLINE_S):
                event = await subscription.__anext__()
            assert isinstance(event, ResourcesListChanged)

    anyio.run(scenario)
