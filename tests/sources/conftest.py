"""Shared fixtures for the source tests."""

from __future__ import annotations

import os
from typing import Any

import pytest


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files opened with os.open from now on (the real os.open, counted): what a scan reads."""
    seen: list[str] = []
    real_open = os.open

    def counting_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        seen.append(os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", counting_open)
    return seen
