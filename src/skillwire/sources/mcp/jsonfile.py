"""Reading the small JSON files an operator hands a gateway (a lock, its pending changes, upstream credentials).

One way for all of them: a regular file only (a FIFO or a device is refused at once, never waited on), at most a
size cap, valid JSON; each failure is a SpecError naming the file, in one line, never quoting its content.
"""

from __future__ import annotations

import json
import os

from skillwire.core.errors import SpecError
from skillwire.sources.safe_open import read_regular

__all__ = ["read_json_file"]


def read_json_file(path: str | os.PathLike[str], *, limit: int, what: str, missing_ok: bool = False) -> object:
    """The JSON value in the file at `path` (None when it does not exist and `missing_ok`); `what` names the kind
    of file in the error ("a lock", "a credentials file")."""
    try:
        data = read_regular(os.fspath(path), limit=limit, follow_links=True)
    except FileNotFoundError:
        if missing_ok:
            return None
        raise SpecError(f"{path}: no such file") from None
    except OSError as err:
        raise SpecError(f"{path}: cannot be read: {err.strerror or err}") from None
    if len(data) > limit:
        raise SpecError(f"{path}: larger than {limit >> 20} MB; not {what}")
    try:
        return json.loads(data)
    except ValueError as err:
        raise SpecError(f"{path}: not JSON ({err})") from None
