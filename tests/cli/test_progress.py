"""The indexing progress bar: drawn for large catalogs, erased when done, silent for small ones."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from skillwire.cli import progress
from skillwire.cli.progress import ProgressBar
from skillwire.sources.folder import index as folder_index
from skillwire.sources.folder.source import FolderSource


def test_large_catalogs_get_a_bar_that_is_erased_at_the_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "MIN_FILES", 10)
    monkeypatch.setattr(progress, "_REDRAW_S", 0.0)
    monkeypatch.setattr(folder_index, "PROGRESS_EVERY", 4)
    for i in range(4):
        folder = tmp_path / f"s{i}"
        folder.mkdir()
        (folder / "SKILL.md").write_text(f"---\nname: s{i}\ndescription: d\n---\n")
        for j in range(3):
            (folder / f"f{j}.md").write_text("x\n")
    out = io.StringIO()
    calls: list[tuple[int, int]] = []
    bar = ProgressBar(out)

    def spy(done: int, total: int) -> None:
        calls.append((done, total))
        bar(done, total)

    FolderSource([tmp_path], progress=spy).scan()
    assert calls == [(4, 16), (8, 16), (12, 16), (16, 16)]
    text = out.getvalue()
    assert "indexing [" in text
    assert "/16 files" in text
    assert text.endswith("\r\x1b[K")  # nothing of the bar is left on the line


def test_small_catalogs_draw_nothing() -> None:
    out = io.StringIO()
    bar = ProgressBar(out)
    bar(10, 100)
    bar(100, 100)
    assert out.getvalue() == ""
