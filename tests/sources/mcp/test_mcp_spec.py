"""`mcp:` specs (issue 21): the forms `serve` takes, what people see of them, and a first start that cannot reach its
upstream. In-process: no server is started (an unreachable upstream is a closed port)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from skillwire.cli.main import main
from skillwire.core.errors import SpecError
from skillwire.sources import SourceOptions, open_sources
from skillwire.sources.composite import CompositeSource
from skillwire.sources.mcp import McpSource, parse_upstream


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed: a connection is refused at once)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_http_and_stdio_upstreams_are_shown_without_credentials() -> None:
    """A URL's user, password and query never reach the label, logs or `_meta`; a stdio command is split as a shell
    would and shown as given; two spellings of one upstream key the same state only when they are the same text."""
    web = parse_upstream("https://bot:s3cret@tools.example:8443/mcp?token=abc#x")
    assert web.target == "https://bot:s3cret@tools.example:8443/mcp?token=abc#x"
    assert web.shown == "https://tools.example:8443/mcp?..."
    stdio = parse_upstream("stdio:python -m vendor.server --root 'a b'")
    assert stdio.target == ["python", "-m", "vendor.server", "--root", "a b"]
    assert stdio.shown == "stdio:python -m vendor.server --root 'a b'"
    assert len({web.key, stdio.key, parse_upstream("https://tools.example:8443/mcp").key}) == 3


@pytest.mark.parametrize(
    ("target", "why"),
    [("ftp://tools.example/mcp", "needs mcp:https://"), ("stdio:", "no command"), ("https:///mcp", "no host")],
)
def test_a_target_that_names_no_upstream_is_a_spec_error(target: str, why: str) -> None:
    with pytest.raises(SpecError, match=why):
        open_sources([f"vendor=mcp:{target}"], SourceOptions())


def test_a_prefixed_mcp_spec_opens_a_gateway_source_under_its_prefix(tmp_path: Path) -> None:
    """`vendor=mcp:URL` beside a folder: a composite whose member is an McpSource keeping its content in
    `--gateway-cache`. Nothing is fetched while opening."""
    source = open_sources(
        [str(tmp_path), "vendor=mcp:https://tools.example/mcp"], SourceOptions(gateway_cache=str(tmp_path / "gw"))
    )
    assert isinstance(source, CompositeSource)
    member = source.members[1]
    assert member.prefix == ("vendor",)
    assert isinstance(member.source, McpSource)
    assert member.source.label == "mcp https://tools.example/mcp"
    assert member.source.cache.root == (tmp_path / "gw").resolve()
    assert not (tmp_path / "gw").exists()


def test_serving_only_an_upstream_that_cannot_be_reached_and_has_no_state_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A first start with nothing verified yet has nothing to serve: one line naming the upstream (once) and why."""
    url = f"http://127.0.0.1:{closed_port()}/mcp"
    assert main(["serve", f"vendor=mcp:{url}", "--gateway-cache", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"skillwire: error: mcp {url}: cannot be refreshed" in err
    assert err.count(url) == 1, err  # before: "mcp URL: mcp URL cannot be refreshed"
    assert "Traceback" not in err
