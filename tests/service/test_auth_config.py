"""`serve --http` authentication options: what is refused before the server listens (skillwire choices)."""

from __future__ import annotations

import pytest

from skillwire.cli.main import main


def test_serve_refuses_auth_options_on_stdio(capsys: pytest.CaptureFixture[str]) -> None:
    """Authentication applies to HTTP callers: asking for it on stdio is a usage error, not silently ignored."""
    assert main(["serve", "examples/skills", "--token-file", "x"]) == 2
    assert "apply to --http only" in capsys.readouterr().err


def test_serve_refuses_a_plain_http_issuer_off_loopback(capsys: pytest.CaptureFixture[str]) -> None:
    """Attack: keys fetched over plain HTTP from another host could be swapped on the path; refuse before listening."""
    args = ["serve", "examples/skills", "--http", "127.0.0.1:0", "--quiet", "--auth-issuer", "http://id.example.com"]
    assert main(args) == 1
    assert capsys.readouterr().err == (
        "skillwire: error: --auth-issuer must be https (plain http only on loopback), not 'http://id.example.com'\n"
    )
