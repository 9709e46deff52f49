"""The composer's records: anchored nodes with yaml v2's alias bookkeeping, and collections being built.

yaml v2 refuses an alias whose expansion would count over `maxAliasCount` (a billion-laughs guard);
its count depends on the aliases inside the anchored node, so each anchor keeps what getAliasCount
reads. Each open mapping or sequence is a `Frame` on the composer's stack.

    anchor = Anchor(value, collection=False)
    anchor.compute_alias_count()   # 1 for a scalar
"""

from __future__ import annotations

from yaml.events import Event

from skillwire.core.frontmatter._resolve import JSONValue, Raw


class Anchor:
    """An anchored node, with yaml v2's alias bookkeeping (the `anchors` map of toJS)."""

    __slots__ = ("alias_count", "collection", "complete", "count", "has_scalar", "height", "sources", "value")

    def __init__(self, value: Raw, *, collection: bool) -> None:
        self.value = value
        self.collection = collection
        self.complete = not collection  # a collection is complete at its end event
        self.count = 1
        self.height = 0  # levels of collections in the value (0 for a scalar), set at its end event
        self.alias_count = 0  # getAliasCount, computed at the first alias (again while 0)
        # What getAliasCount reads of an anchored collection: whether it has a scalar
        # leaf, and the anchors of the aliases inside it (their counts are read late).
        self.has_scalar = False
        self.sources: list[Anchor] = []

    def compute_alias_count(self) -> int:
        """yaml v2 getAliasCount: the largest leaf below (scalar 1, alias uses x its count)."""
        if not self.collection:
            return 1
        count = 1 if self.has_scalar else 0
        for source in self.sources:
            count = max(count, source.count * source.alias_count)
        return count


class Frame:
    """A mapping or sequence being built."""

    __slots__ = (
        "anchor",
        "container",
        "flow",
        "flow_start",
        "has_key",
        "has_scalar",
        "height",
        "indent",
        "key",
        "seen",
        "sources",
    )

    def __init__(
        self,
        container: dict[str, JSONValue] | list[JSONValue],
        anchor: Anchor | None,
        flow: bool,
        indent: int,
        flow_start: int | None,
    ) -> None:
        self.container = container
        self.anchor = anchor
        self.flow = flow
        self.indent = indent  # spaces the lines of a flow node inside must have (JS `indentNext`)
        self.flow_start = flow_start  # for an outermost flow collection: its first line
        self.has_key = False  # a mapping's key is read and waits for its value
        self.key = ""
        # JSON key -> (identity as yaml v2's duplicate check sees it, key event, key text)
        self.seen: dict[str, tuple[object, Event, str | None]] = {}
        self.has_scalar = False  # some scalar leaf below (not through aliases)
        self.sources: list[Anchor] = []  # anchors of the aliases below
        self.height = 1  # levels of collections in this one's value so far (itself included)
