"""Check every internal link of the built site: `python docs/linkcheck.py build/docs` (run by `make docs`).

Sphinx (with MyST) already fails the build on a Markdown link to a missing page or heading. This reads what was
actually written, every `href` and `src` of every HTML page (the theme's navigation, the generated command-line
and API references, the included SECURITY.md and ARCHITECTURE.md), and checks that each relative target exists and,
for `#anchor`, that an element of that page carries that id. External links (a scheme or `//`) are not fetched: the
build runs offline. It also checks that the API reference documents every name of `skillwire.__all__`.
"""

from __future__ import annotations

import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class _Page(HTMLParser):
    """The ids a page defines and the links it makes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name in ("id", "name") and (name == "id" or tag == "a"):
                self.ids.add(value)
            elif name in ("href", "src"):
                self.links.append(value)


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def broken_links(site: Path) -> list[str]:
    """Each internal link of `site` whose file or anchor is missing, as `page: link (why)`."""
    pages = {path.resolve(): _parse(path) for path in sorted(site.rglob("*.html"))}
    broken = []
    for path, page in pages.items():
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith("//") or link.startswith("data:"):
                continue
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            where = f"{path.relative_to(site.resolve())}: {link}"
            if not target.is_relative_to(site.resolve()) or not target.exists():
                broken.append(f"{where} (no such file)")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{where} (no element with that id)")
    return broken


def undocumented(site: Path, names: list[str]) -> list[str]:
    """The names of `skillwire.__all__` the built API reference has no entry for (no element with id skillwire.NAME)."""
    page = site / "reference" / "api.html"
    ids = _parse(page).ids if page.is_file() else set()
    return [name for name in names if f"skillwire.{name}" not in ids]


def main(argv: list[str]) -> int:
    [site] = argv
    root = Path(site)
    if not (root / "index.html").is_file():
        print(f"{site}: no built site here (index.html is missing)", file=sys.stderr)
        return 2
    import skillwire  # this checkout's, as the build documented it (docs/conf.py puts src/ first)

    broken = broken_links(root) + [
        f"reference/api.html: no entry for skillwire.{name}" for name in undocumented(root, skillwire.__all__)
    ]
    for line in broken:
        print(f"broken: {line}", file=sys.stderr)
    count = sum(1 for _ in root.rglob("*.html"))
    print(f"{site}: {count} pages, {len(broken)} broken internal links", file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
    sys.exit(main(sys.argv[1:]))
