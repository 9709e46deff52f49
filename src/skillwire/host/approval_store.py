"""`JsonApprovalStore`: durable approvals in one JSON file, written atomically with mode 0600.

The adapter half of `core/hosting/approvals.py` (whose rules and Protocols are pure): only approvals that can be
content-bound are written; a dynamic skill's approval stays in memory for the session.

    store = JsonApprovalStore("~/.config/skillwire/approvals.json")   # a str or a Path; `~` is expanded
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from skillwire.core.errors import ApprovalFileError
from skillwire.core.hosting.approvals import Approval, MemoryApprovalStore
from skillwire.core.hosting.registry import SkillKey

_FORMAT = 1


class JsonApprovalStore:
    """Durable approvals in one JSON file (written atomically, mode 0600); session approvals in memory."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()
        self._session = MemoryApprovalStore()
        self._durable: dict[SkillKey, Approval] = self._load()

    def get(self, key: SkillKey) -> Approval | None:
        return self._session.get(key) or self._durable.get(key)

    def put(self, approval: Approval) -> None:
        if approval.session_only:
            self._session.put(approval)
            return
        self._durable[approval.key] = approval
        self._save()

    def revoke(self, key: SkillKey) -> None:
        self._session.revoke(key)
        if self._durable.pop(key, None) is not None:
            self._save()

    def remove_origin(self, origin: str) -> None:
        self._session.remove_origin(origin)
        before = len(self._durable)
        self._durable = {k: v for k, v in self._durable.items() if k.origin != origin}
        if len(self._durable) != before:
            self._save()

    def _load(self) -> dict[SkillKey, Approval]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise ApprovalFileError(
                f"{self.path}: cannot read approvals ({exc}); move it aside to start afresh"
            ) from exc
        try:
            if raw.get("format") != _FORMAT:
                raise ValueError(f"unknown format {raw.get('format')!r}")
            out: dict[SkillKey, Approval] = {}
            for item in raw["approvals"]:
                key = SkillKey(str(item["origin"]), str(item["uri"]))
                content = frozenset((str(u), str(d)) for u, d in item["content"])
                out[key] = Approval(key, content, frozenset(str(g) for g in item.get("grants", [])))
            return out
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ApprovalFileError(
                f"{self.path}: not an approvals file ({exc}); move it aside to start afresh"
            ) from exc

    def _save(self) -> None:
        data: dict[str, Any] = {
            "format": _FORMAT,
            "approvals": [
                {
                    "origin": a.key.origin,
                    "uri": a.key.uri,
                    "content": sorted([u, d] for u, d in a.content),
                    "grants": sorted(a.grants),
                }
                for a in sorted(self._durable.values(), key=lambda a: (a.key.origin, a.key.uri))
            ],
        }
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".approvals-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh, indent=1)
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
