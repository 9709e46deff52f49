"""The client's checks that turn a server's answers into values (the wire shapes themselves are `core.wire`'s).

An answer is hostile input: whatever the spec does not allow becomes `UnexpectedResponse` (the peer is wrong, not
us), naming the method and the problem. Results keep every key the server sent, so the checks here name the fault.

    data = content_bytes(uri, read_result.contents)       # the one content item's bytes, or UnexpectedResponse
    item = directory_item(directory, raw)                 # a direct child, or None
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass

from mcp_types import BlobResourceContents, TextResourceContents
from pydantic import ValidationError

from skillwire.core.errors import UnexpectedResponse
from skillwire.core.mime import DIRECTORY_MIME_TYPE
from skillwire.core.uri import normal_uri, same_uri
from skillwire.core.wire import RESOURCES_READ


@dataclass(frozen=True, slots=True)
class DirectoryListingItem:
    """One direct child from resources/directory/read: a file, or a directory (`mimeType: inode/directory`)."""

    uri: str
    name: str
    mime_type: str | None = None
    size: int | None = None
    description: str | None = None

    @property
    def is_directory(self) -> bool:
        return self.mime_type == DIRECTORY_MIME_TYPE


# -- checks ------------------------------------------------------------------------------------------------------------


def content_bytes(uri: str, contents: Sequence[TextResourceContents | BlobResourceContents]) -> bytes:
    """The bytes of the one content item a resources/read result must hold (for `uri` in any spelling `same_uri`
    accepts, and nothing else)."""
    if len(contents) != 1:
        raise UnexpectedResponse(RESOURCES_READ, f"expected one content item, got {len(contents)}", uri=uri)
    item = contents[0]
    if not same_uri(item.uri, uri):
        raise UnexpectedResponse(RESOURCES_READ, f"the content item is for {item.uri[:200]!r}", uri=uri)
    if isinstance(item, TextResourceContents):
        try:
            return item.text.encode("utf-8")
        except UnicodeEncodeError:
            raise UnexpectedResponse(RESOURCES_READ, "text holds a lone surrogate (not UTF-8)", uri=uri) from None
    assert isinstance(item, BlobResourceContents)
    try:
        return base64.b64decode(item.blob, validate=True)
    except (binascii.Error, ValueError):
        raise UnexpectedResponse(RESOURCES_READ, "blob is not valid base64", uri=uri) from None


def directory_item(directory: str, raw: object) -> DirectoryListingItem | None:
    """A child of `directory` from its wire form, or None if it is not a direct child with a uri.

    Compared in normal form (`core.uri.normal_uri`): a child spelled another way than the directory asked for
    (raw UTF-8, lowercase `%xx`) is still its child. The item keeps the uri as the server sent it."""
    if not isinstance(raw, dict):
        return None
    uri = raw.get("uri")
    if not isinstance(uri, str):
        return None
    prefix = normal_uri(directory) + "/"
    normal = normal_uri(uri)
    if not normal.startswith(prefix):
        return None
    tail = normal[len(prefix) :]
    if tail in ("", ".", "..") or "/" in tail:
        return None
    name, mime, size, description = raw.get("name"), raw.get("mimeType"), raw.get("size"), raw.get("description")
    return DirectoryListingItem(
        uri=uri,
        name=name if isinstance(name, str) else tail,
        mime_type=mime if isinstance(mime, str) else None,
        size=size if isinstance(size, int) and not isinstance(size, bool) and size >= 0 else None,
        description=description if isinstance(description, str) else None,
    )


def first_error(err: ValidationError) -> str:
    """Where a result failed the SDK's schema, and why, for an UnexpectedResponse."""
    first = err.errors()[0] if err.errors() else None
    if first is None:
        return "does not match the schema"
    where = ".".join(str(p) for p in first.get("loc", ())) or "(result)"
    return f"{where}: {first.get('msg', 'invalid')}"
