"""A folder outside the one under attack, to prove a planted link never lets skillwire read, write or delete it.

victim = victim_folder(tmp_path)      # invoice.md and a.md, named like files skillwire handles
before = snapshot(victim)
...                                   # plant links to it, run the attack
assert snapshot(victim) == before
"""

from __future__ import annotations

from pathlib import Path


def victim_folder(tmp_path: Path) -> Path:
    """`tmp_path/victim` holding files named like cached or served ones: nothing may read, write or delete them."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "invoice.md").write_bytes(b"the victim's own invoice.md\n")
    (victim / "a.md").write_bytes(b"the victim's own a.md\n")
    return victim


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file directly in `folder`, by name, with its bytes."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}
