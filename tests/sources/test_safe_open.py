"""`open_regular` / `read_regular`: the one way an indexed file is opened (issue 9, hole 2).

skillwire choice: never wait on a FIFO, never follow a link in the last component, refuse anything but a
regular file, check where the open file really is, and read at most limit + 1 bytes.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillwire.sources.safe_open import UnsafeFile, read_regular

FREEZE_S = 20


@pytest.fixture(autouse=True)
def no_hang() -> Iterator[None]:
    """An open that waits on a FIFO would hang the test run: fail it instead (SIGALRM, POSIX)."""

    def hung(signum: int, frame: object) -> None:
        raise AssertionError("the open waited on a FIFO")

    signal.signal(signal.SIGALRM, hung)
    signal.alarm(FREEZE_S)
    yield
    signal.alarm(0)


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    """A FIFO swapped in for a file blocked open() until a writer came (forever)."""
    fifo = tmp_path / "invoice.md"
    os.mkfifo(fifo)
    with pytest.raises(UnsafeFile, match="not a regular file"):
        read_regular(str(fifo), limit=10)


def test_a_link_in_the_last_component_is_not_followed(tmp_path: Path) -> None:
    """A link to /dev/zero swapped in for a file was read until memory ran out."""
    link = tmp_path / "invoice.md"
    os.symlink("/dev/zero", link)
    with pytest.raises(OSError, match="symbolic links"):  # ELOOP: O_NOFOLLOW
        read_regular(str(link), limit=10)
    with pytest.raises(UnsafeFile):  # followed on purpose (a cache path a person chose): still not a file
        read_regular(str(link), limit=10, follow_links=True)


def test_at_most_limit_plus_one_bytes_are_read(tmp_path: Path) -> None:
    big = tmp_path / "big.bin"
    big.write_bytes(b"x" * 100_000)
    assert len(read_regular(str(big), limit=10)) == 11
    assert len(read_regular(str(big))) == 100_000
    assert read_regular(str(big), limit=1_000_000) == b"x" * 100_000


def test_a_folder_swapped_for_a_link_is_caught_by_the_real_path(tmp_path: Path) -> None:
    """A folder on the way replaced by a link to elsewhere: the open file is not where it was indexed."""
    root = tmp_path / "root"
    (root / "templates").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "invoice.md").write_bytes(b"outside\n")
    real = os.path.realpath(root) + "/templates/invoice.md"
    os.rename(root / "templates", root / "old")
    os.symlink(tmp_path / "outside", root / "templates")
    with pytest.raises(UnsafeFile, match="another place"):
        read_regular(real, limit=100, real_path=real)
    with pytest.raises(UnsafeFile):
        read_regular(real, limit=100, within=os.path.realpath(root))
    assert read_regular(real, limit=100, within=str(tmp_path)) == b"outside\n"  # inside that folder: fine
