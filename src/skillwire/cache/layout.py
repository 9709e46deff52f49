"""Where a (server label, uri) lives below the cache root: one percent-encoded path component per part, and back.

The path encodes the server identity as well as the uri (Security Considerations: durable origin), bijectively, so
`decode_component` recovers both. Case and a leading "." are encoded too; a component too long for a file name is
hashed, with a `.segment` file beside it holding the original.

    names = [component(raw) for raw in components("docs-server", "skill://pdf/SKILL.md")]
    # ['docs-server', 'skill', 'pdf', '%53%4B%49%4C%4C.md']
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from urllib.parse import unquote_to_bytes

from skillwire.cache.disk import READ_FLAGS, read_at_most, write_atomic
from skillwire.core.errors import InvalidSkillUri

MAX_COMPONENT = 120  # bytes of an encoded path component before it is hashed (NAME_MAX is usually 255)
_HASHED = "%~"  # percent-encoding never produces "%~", so hashed names cannot collide with encoded ones
_SEGMENT_SUFFIX = ".segment"
_UNRESERVED = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789-._~")
_MAX_SEGMENT_FILE = 1024 * 1024  # a `.segment` file holds one URI segment; anything bigger is not one we wrote


def checked_label(origin: str) -> str:
    """`origin` itself, once it is known to be a usable server label (a non-empty string)."""
    if not isinstance(origin, str) or not origin:
        raise ValueError("a server label must be a non-empty string")
    return origin


def components(origin: str, uri: str) -> list[str]:
    """[label, scheme, *segments] of `uri` served by `origin`, refusing what cannot be a file path."""
    scheme, sep, rest = uri.partition("://")
    if not sep or not scheme:
        raise InvalidSkillUri(uri, "a cached resource URI has the form scheme://path")
    segments = rest.split("/")
    if any(s in ("", ".", "..") for s in segments):
        raise InvalidSkillUri(uri, "a cached resource URI has no empty, '.' or '..' segment")
    return [checked_label(origin), scheme, *segments]


def component(raw: str) -> str:
    """One path component: percent-encoded (leading "." and every upper-case letter too), or hashed if long.

    Upper case is encoded so that two labels or segments that differ only in case stay
    apart on case-insensitive file systems; a leading "." so that nothing in the cache
    is a hidden folder an agent might scan (".claude").
    """
    data = raw.encode("utf-8", errors="surrogatepass")
    out = []
    for i, byte in enumerate(data):
        if byte in _UNRESERVED and not (i == 0 and byte == ord(".")):
            out.append(chr(byte))
        else:
            out.append(f"%{byte:02X}")
    encoded = "".join(out)
    if len(encoded) > MAX_COMPONENT:
        return _HASHED + hashlib.sha256(data).hexdigest()
    return encoded


def remember_segment(folder: int, name: str, raw: str) -> None:
    """Beside a hashed `name` in `folder`, write the `.segment` file holding the `raw` part it stands for."""
    if name.startswith(_HASHED):
        write_atomic(folder, name + _SEGMENT_SUFFIX, raw.encode("utf-8", errors="surrogatepass"))


def decode_component(folder: int | None, parent: Path, name: str) -> str:
    """The raw label, scheme or segment that `name` encodes; a hashed one is read back from its `.segment` file."""
    if name.startswith(_HASHED):
        digest = name[len(_HASHED) :]
        original = None if folder is None else _read_small(folder, name + _SEGMENT_SUFFIX)
        if original is None:
            raise ValueError(f"{parent / name}: the file naming this hashed segment is missing")
        if hashlib.sha256(original).hexdigest() != digest:
            raise ValueError(f"{parent / name}: the file naming this hashed segment was altered")
        return original.decode("utf-8", errors="surrogatepass")
    try:
        decoded = unquote_to_bytes(name).decode("utf-8", errors="surrogatepass")
    except UnicodeDecodeError:
        decoded = None
    if decoded is None or component(decoded) != name:
        raise ValueError(f"{name!r} is not a path component the cache writes")
    return decoded


def _read_small(folder: int, name: str) -> bytes | None:
    """A regular file of at most _MAX_SEGMENT_FILE bytes, read without following a link or blocking; else None."""
    try:
        fd = os.open(name, READ_FLAGS, dir_fd=folder)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = read_at_most(fd, _MAX_SEGMENT_FILE + 1)
    finally:
        os.close(fd)
    return data if len(data) <= _MAX_SEGMENT_FILE else None
