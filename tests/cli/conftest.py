"""Shared fixtures for the command-line tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.servers import EXAMPLE_SKILLS, HttpServer, http_server


@pytest.fixture(scope="module")
def server() -> Iterator[HttpServer]:
    """`skillwire serve examples/skills --http` for one test module, checked alive at the end."""
    with http_server([EXAMPLE_SKILLS]) as running:
        yield running
        running.assert_alive()
