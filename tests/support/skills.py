"""Skill folders written by a test: one SKILL.md with a name and a description, in a folder under `root`.

write_skill(tmp_path, "acme/pdf")                  # skill://acme/pdf/SKILL.md, named pdf
write_skill(tmp_path, "bad", name="other")         # refused: its name is not its folder's
"""

from __future__ import annotations

from pathlib import Path


def write_skill(root: Path, folder: str, name: str | None = None, description: str = "A skill") -> Path:
    """Write `root/folder/SKILL.md` (named after the folder's last part unless `name` says otherwise); the folder."""
    skill = root / folder
    skill.mkdir(parents=True, exist_ok=True)
    (skill / "SKILL.md").write_text(
        f"---\nname: {name or folder.rsplit('/', 1)[-1]}\ndescription: {description}\n---\nBody.\n", encoding="utf-8"
    )
    return skill
