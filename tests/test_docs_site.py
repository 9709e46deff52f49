"""The site's link checker (docs/linkcheck.py, run by `make docs` on the built site) finds what is broken."""

from __future__ import annotations

from pathlib import Path

from docs.linkcheck import broken_links, main, undocumented


def _page(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"<!doctype html><html><body>{body}</body></html>", encoding="utf-8")


def test_missing_pages_and_anchors_are_found_and_the_rest_pass(tmp_path: Path) -> None:
    _page(
        tmp_path / "index.html",
        '<a href="guide/a.html#usage">ok</a> <a href="guide/a.html#gone">anchor</a> <a href="nope.html">file</a>'
        ' <img src="_images/x.png"> <a href="https://example.com/x#y">external</a> <a href="#top">self</a>'
        ' <a href="../outside.html">outside</a> <span id="top"></span>',
    )
    _page(tmp_path / "guide" / "a.html", '<h2 id="usage">Usage</h2><a href="../index.html#top">back</a>')
    assert sorted(broken_links(tmp_path)) == [
        "index.html: ../outside.html (no such file)",
        "index.html: _images/x.png (no such file)",
        "index.html: guide/a.html#gone (no element with that id)",
        "index.html: nope.html (no such file)",
    ]
    (tmp_path / "_images").mkdir()
    (tmp_path / "_images" / "x.png").write_bytes(b"png")
    assert len(broken_links(tmp_path)) == 3
    assert main([str(tmp_path)]) == 1
    assert main([str(tmp_path / "guide")]) == 2  # no index.html: not a built site


def test_a_public_name_missing_from_the_api_reference_is_found(tmp_path: Path) -> None:
    _page(tmp_path / "reference" / "api.html", '<dt id="skillwire.Host">Host</dt><dt id="skillwire.ServeOptions">')
    assert undocumented(tmp_path, ["Host", "ServeOptions", "SkillCache"]) == ["SkillCache"]
    assert undocumented(tmp_path / "elsewhere", ["Host"]) == ["Host"]  # no API page at all
