"""The catalog page in a real headless Chromium (Debian's `chromium`, installed by `make test`).

A real `skillwire serve --http 127.0.0.1:0` serves the bundled examples plus the page
tests' tree (a skill with HTML in every field, and a refused one). Chromium runs the
page's inline script under its Content-Security-Policy: `--dump-dom` prints the DOM
after the script ran, so `/?q=...` (applied on load, as typing would) shows the
filtering, and the skill page shows what the browser built from our markup. Screenshots
are saved in `test-artifacts/`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.service.test_catalog_page import base_url, catalog_tree
from tests.support.servers import EXAMPLE_SKILLS, REPO_ROOT, HttpServer, http_server

ARTIFACTS = REPO_ROOT / "test-artifacts"
BROWSER_TIMEOUT_S = 60.0
WINDOW = "1200,900"


def chromium() -> str:
    """The Chromium binary; the test fails (never skips) without it."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail(
            "Chromium is not installed: run `make test` (it installs Debian's `chromium` package), "
            "or `apt-get install -y chromium`",
            pytrace=False,
        )
    return found


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    root = catalog_tree(tmp_path_factory.mktemp("browser") / "skills")
    with http_server([EXAMPLE_SKILLS, root]) as running:
        yield running
        running.assert_alive()


def run_chromium(tmp_path: Path, *args: str) -> str:
    command = [
        chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
        *args,
    ]
    # Chromium writes crash-report settings under $XDG_CONFIG_HOME and GLib's dconf under $XDG_CACHE_HOME, whatever
    # --user-data-dir says: both point into the test's folder, so `make test` leaves nothing in the user's home.
    home = tmp_path / "chromium-home"
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
    }
    result = subprocess.run(command, capture_output=True, text=True, timeout=BROWSER_TIMEOUT_S, check=False, env=env)
    assert result.returncode == 0, f"chromium exited with {result.returncode}; stderr:\n{result.stderr[-4000:]}"
    return result.stdout


def dump_dom(tmp_path: Path, url: str) -> str:
    dom = run_chromium(tmp_path, "--dump-dom", url)
    assert "<main>" in dom, f"chromium printed no page for {url}:\n{dom[:2000]}"
    return dom


Dom = Callable[[str], str]


@pytest.fixture(scope="module")
def page_dom(server: HttpServer, tmp_path_factory: pytest.TempPathFactory) -> Dom:
    """The DOM Chromium builds for a path of the module's server, built once per path: the server is read-only."""
    built: dict[str, str] = {}

    def of(path: str) -> str:
        if path not in built:
            built[path] = dump_dom(tmp_path_factory.mktemp("chromium"), base_url(server) + path)
        return built[path]

    return of


def screenshot(tmp_path: Path, url: str, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    target = ARTIFACTS / name
    target.unlink(missing_ok=True)
    run_chromium(tmp_path, f"--screenshot={target}", f"--window-size={WINDOW}", url)
    assert target.is_file(), f"no screenshot at {target}"
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", f"{target} is not a PNG"
    return target


def items(dom: str) -> dict[str, bool]:
    """Each listed skill's name and whether it is visible (the script sets `hidden` on the others)."""
    found = re.findall(r'<li class="skill"( hidden="")?>\s*<a class="name" href="[^"]*">([^<]*)</a>', dom)
    return {name: not hidden for hidden, name in found}


def test_index_loads_and_lists_every_skill(server: HttpServer, page_dom: Dom, tmp_path: Path) -> None:
    dom = page_dom("/")
    shown = items(dom)
    assert {"alpha", "beta", "evil", "pdf-processing", "code-review", "refunds"} <= set(shown)
    assert all(shown.values()), shown
    assert f"{len(shown)} of {len(shown)} skills" in dom  # written by the script: it ran under the CSP
    screenshot(tmp_path, base_url(server) + "/", "catalog-page.png")


def test_search_filters_by_name_and_description(server: HttpServer, page_dom: Dom, tmp_path: Path) -> None:
    by_name = items(page_dom("/?q=pdf"))
    assert [n for n, visible in by_name.items() if visible] == ["pdf-processing"], by_name
    assert len(by_name) > 1  # the others are still in the page, hidden
    dom = page_dom("/?q=release%20notes")  # words from beta's description
    by_description = items(dom)
    assert [n for n, visible in by_description.items() if visible] == ["beta"], by_description
    assert f"1 of {len(by_description)} skills" in dom
    nothing = page_dom("/?q=zzzz-no-such-skill")
    assert not any(items(nothing).values())
    assert '<p id="none">No skill matches.</p>' in nothing
    screenshot(tmp_path, base_url(server) + "/?q=review", "catalog-search.png")


def test_skill_page_shows_rendered_skill_md_and_file_table(server: HttpServer, page_dom: Dom, tmp_path: Path) -> None:
    dom = page_dom("/skills/alpha")
    assert "<h1>alpha</h1>" in dom
    assert "<h2>Alpha charts</h2>" in dom
    assert "<li>open the sheet</li>" in dom
    files = dom[dom.index('id="files"') :]
    assert "<code>SKILL.md</code>" in files
    assert "<code>templates/chart.md</code>" in files
    assert re.search(r'<code title="sha256:[0-9a-f]{64}">sha256:[0-9a-f]{12}…</code>', files)
    screenshot(tmp_path, base_url(server) + "/skills/alpha", "catalog-skill.png")


def test_skill_page_shows_tables_quotes_rules_and_safe_links_in_the_browser(
    server: HttpServer, page_dom: Dom, tmp_path: Path
) -> None:
    """SKILL.md rendered by markdown-it-py: what Chromium builds from it (issue 11)."""
    dom = page_dom("/skills/alpha")
    body = dom[dom.index('id="skill-md"') :]
    assert re.search(r"<table>\s*<thead>\s*<tr>\s*<th>Chart</th>", body)
    assert re.search(r"<blockquote>\s*<p>Check the axis labels.</p>\s*</blockquote>", body)
    assert "<hr>" in body
    assert '<a href="https://example.com/guide" rel="noopener noreferrer nofollow">the guide</a>' in body
    index = page_dom("/")
    assert "use 1-64 lowercase letters, digits and single hyphens" in index[index.index('id="refused"') :]
    screenshot(tmp_path, base_url(server) + "/skills/alpha", "catalog-markdown.png")


def test_html_injection_is_shown_as_text_in_the_browser(server: HttpServer, page_dom: Dom, tmp_path: Path) -> None:
    for path in ("/", "/skills/evil"):
        dom = page_dom(path)
        main = dom[dom.index("<main>") : dom.index("</main>")]
        assert "<img" not in main, path
        assert "<script" not in main, path
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in main, path
        assert "&lt;img src=x onerror=alert(1)&gt;" in main, path
    screenshot(tmp_path, base_url(server) + "/skills/evil", "catalog-injection.png")
