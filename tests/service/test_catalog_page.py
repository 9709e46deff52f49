"""The catalog page over plain HTTP against a real `skillwire serve --http` process.

skillwire choices: `GET /` lists the served skills (linking to `/skills/<skill-path>`)
and the refused ones with their rule and reason; a skill's page shows its frontmatter,
its files with sizes and short digests, and its SKILL.md body rendered as Markdown;
everything taken from the skills is HTML-escaped; every page carries a CSP that allows
no external resource and `nosniff`. The MCP endpoint beside it keeps working.
"""

from __future__ import annotations

import hashlib
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from email.message import Message
from pathlib import Path

import pytest

from tests.support.servers import (
    HttpServer,
    ServerTarget,
    SkillsListResult,
    connect,
    http_server,
    serve_target,
    skills_list,
)

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'"

ALPHA_MD = """---
name: alpha
description: Turn spreadsheets into charts
license: MIT
---

# Alpha charts

Use the **template** in `templates/chart.md` and read [the guide](https://example.com/guide).

## Steps

- open the sheet
- pick a *chart* type
1. first
2. second

```python
print("a < b")
```

| Chart | Use |
|-------|-----|
| bar   | **counts** |

> Check the axis labels.

---

See [the template](templates/chart.md) or <mailto:charts@example.com>.
"""

EVIL_MD = f"""---
name: evil
description: "Tricky {SCRIPT} {IMG} text"
---

# Heading {SCRIPT}

Body {IMG} and `{SCRIPT}` and [link {IMG}](javascript:alert(1)).

- item {SCRIPT}

```
{IMG}
```
"""

REFUSED_MD = f"""---
name: "{SCRIPT}"
description: Its name is not its folder's
---
# Refused
"""


def catalog_tree(root: Path) -> Path:
    """Skills for the page: `alpha` (with a template), `beta`, `evil` (HTML in every field) and a refused one."""
    (root / "alpha" / "templates").mkdir(parents=True)
    (root / "alpha" / "SKILL.md").write_text(ALPHA_MD, encoding="utf-8")
    (root / "alpha" / "templates" / "chart.md").write_text("# Chart\n", encoding="utf-8")
    (root / "beta").mkdir()
    (root / "beta" / "SKILL.md").write_text(
        "---\nname: beta\ndescription: Draft release notes from merged changes\n---\n# Beta\n", encoding="utf-8"
    )
    (root / "evil").mkdir()
    (root / "evil" / "SKILL.md").write_text(EVIL_MD, encoding="utf-8")
    (root / "broken").mkdir()
    (root / "broken" / "SKILL.md").write_text(REFUSED_MD, encoding="utf-8")
    return root


@dataclass
class Page:
    status: int
    headers: Message
    text: str


def base_url(server: HttpServer) -> str:
    return server.url.removesuffix("/mcp")


def get(url: str) -> Page:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return Page(response.status, response.headers, response.read().decode("utf-8"))
    except urllib.error.HTTPError as err:
        return Page(err.code, err.headers, err.read().decode("utf-8"))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    root = catalog_tree(tmp_path_factory.mktemp("catalog") / "skills")
    with http_server([root]) as running:
        yield running
        running.assert_alive()


def _main(page: Page) -> str:
    """The page's content, without the inline script and style (which are ours, not the skills')."""
    match = re.search(r"<main>(.*)</main>", page.text, re.DOTALL)
    assert match, page.text
    return match.group(1)


def test_index_lists_skills_with_links_and_descriptions(server: HttpServer) -> None:
    page = get(base_url(server) + "/")
    assert page.status == 200
    assert page.headers["Content-Type"].startswith("text/html")
    main = _main(page)
    for name in ("alpha", "beta", "evil"):
        assert f'href="/skills/{name}"' in main
    assert "Turn spreadsheets into charts" in main
    assert 'id="search"' in main


def test_index_lists_refused_skills_with_reasons(server: HttpServer) -> None:
    main = _main(get(base_url(server) + "/"))
    refused = main[main.index('id="refused"') :]
    assert "broken" in refused
    assert "Refused (1)" in refused
    assert 'href="/skills/broken"' not in main


def test_skill_page_renders_skill_md_frontmatter_and_files(server: HttpServer) -> None:
    page = get(base_url(server) + "/skills/alpha")
    assert page.status == 200
    main = _main(page)
    assert "<h1>alpha</h1>" in main
    assert "<h2>Alpha charts</h2>" in main  # markdown h1 under the page's own h1
    assert "<h3>Steps</h3>" in main
    assert "<strong>template</strong>" in main
    assert "<code>templates/chart.md</code>" in main
    assert "<ul>\n<li>open the sheet</li>\n<li>pick a <em>chart</em> type</li>\n</ul>" in main
    assert "<ol>\n<li>first</li>\n<li>second</li>\n</ol>" in main
    assert '<pre><code class="language-python">print(&quot;a &lt; b&quot;)\n</code></pre>' in main
    assert '<a href="https://example.com/guide" rel="noopener noreferrer nofollow">the guide</a>' in main
    assert '<a href="mailto:charts@example.com" rel="noopener noreferrer nofollow">' in main
    assert '<span class="link" title="templates/chart.md">the template</span>' in main  # not a link on this page
    assert "name: alpha" not in main.split('id="skill-md"')[1]  # the frontmatter is a table, not body text
    assert "<th>license</th><td>MIT</td>" in main
    digest = "sha256:" + hashlib.sha256(b"# Chart\n").hexdigest()
    files = main[main.index('id="files"') :]
    assert "<code>templates/chart.md</code>" in files
    assert f'title="{digest}"' in files
    assert f">{digest[:19]}…<" in files
    assert "8 B" in files


def test_skill_page_renders_tables_blockquotes_and_rules(server: HttpServer) -> None:
    """The home-made renderer showed `| a | b |`, `> ...` and `---` as paragraphs of text (issue 11)."""
    main = _main(get(base_url(server) + "/skills/alpha"))
    body = main.split('id="skill-md"')[1]
    assert "<table>\n<thead>\n<tr>\n<th>Chart</th>\n<th>Use</th>" in body
    assert "<td>bar</td>\n<td><strong>counts</strong></td>" in body
    assert "<blockquote>\n<p>Check the axis labels.</p>\n</blockquote>" in body
    assert "<hr />" in body


def test_index_says_how_to_fix_each_refused_skill(server: HttpServer) -> None:
    """A refused skill's entry gives its rule, its reason and the fix `skillwire validate` gives (issue 11)."""
    main = _main(get(base_url(server) + "/"))
    refused = main[main.index('id="refused"') :]
    assert "<th>Rule</th><th>Reason</th><th>Fix</th>" in refused
    row = next(r for r in refused.split("<tr>") if "broken" in r)
    assert "<code>name-format</code>" in row
    assert '<td class="fix">use 1-64 lowercase letters, digits and single hyphens</td>' in row


def test_injection_in_name_description_and_body_is_shown_as_text(server: HttpServer) -> None:
    for url in ("/", "/skills/evil"):
        page = get(base_url(server) + url)
        assert page.status == 200
        main = _main(page)
        assert "<script" not in main, url
        assert "<img" not in main, url
        assert 'href="javascript' not in main, url
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in main, url
        assert "&lt;img src=x onerror=alert(1)&gt;" in main, url
    # the only script element on a page is ours, at the end
    assert get(base_url(server) + "/skills/evil").text.count("<script") == 1
    index = _main(get(base_url(server) + "/"))
    refused = index[index.index('id="refused"') :]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in refused  # the refused skill's name, in its reason
    evil = _main(get(base_url(server) + "/skills/evil"))
    assert "<h2>Heading &lt;script&gt;alert(1)&lt;/script&gt;</h2>" in evil
    assert "<code>&lt;script&gt;alert(1)&lt;/script&gt;</code>" in evil
    assert "<pre><code>&lt;img src=x onerror=alert(1)&gt;\n</code></pre>" in evil
    assert "<a " not in evil.replace('<a href="/">', "")  # javascript: is no link, not even as a span


def test_security_headers_on_every_page(server: HttpServer) -> None:
    for url in ("/", "/?q=%3Cscript%3E", "/skills/alpha", "/skills/no-such-skill"):
        page = get(base_url(server) + url)
        assert page.headers["Content-Security-Policy"] == CSP, url
        assert page.headers["X-Content-Type-Options"] == "nosniff", url


def test_unknown_skill_is_404_and_escaped(server: HttpServer) -> None:
    page = get(base_url(server) + "/skills/%3Cscript%3Ealert(1)%3C/script%3E")
    assert page.status == 404
    assert "<script>alert" not in _main(page)
    assert "&lt;script&gt;" in _main(page)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_mcp_endpoint_still_serves_the_same_catalog(tmp_path: Path) -> None:
    root = catalog_tree(tmp_path / "skills")
    with serve_target("http", [root], tmp_path / "logs") as target:
        assert target.http is not None
        names = {e["frontmatter"]["name"] for e in (await _list(target)).skills}
        main = _main(get(base_url(target.http) + "/"))
        assert names == {"alpha", "beta", "evil"}
        assert len(re.findall(r'<li class="skill"', main)) == len(names)


async def _list(target: ServerTarget) -> SkillsListResult:
    async with connect(target) as client:
        return await skills_list(client)


@pytest.mark.parametrize(
    "source",
    [
        f"<div>{SCRIPT}</div>\n",  # an HTML block
        f"text {IMG} and <a href='javascript:alert(1)'>x</a>\n",  # inline HTML
        "[x](javascript:alert(1)) [y](JAVASCRIPT:alert(1)) [z](data:text/html;base64,PHNjcmlwdD4=)\n",
        "<javascript:alert(1)> [w](vbscript:msgbox) [v](file:///etc/passwd)\n",
        '[t](https://example.com "a\\" onmouseover=\\"alert(1)")\n',
        "![i](https://example.com/x.png) ![j](javascript:alert(1))\n",
        "> " * 200 + "deep\n",  # nesting past markdown-it's maxNesting
        "| a |\n|---|\n| <img src=x> |\n",
    ],
)
def test_markdown_turns_no_source_text_into_markup(source: str) -> None:
    """Raw HTML stays text, only http(s)/mailto targets become links, no image is loaded (skillwire choice)."""
    from skillwire.service.catalog_page import render_markdown

    html = render_markdown(source)
    for tag in ("<script", "<img", "<div"):
        assert tag not in html
    for scheme in ("javascript", "data", "file"):
        assert f'href="{scheme}' not in html.lower()
    assert "vbscript" not in "".join(re.findall(r'href="[^"]*"', html))
    assert "onmouseover=" not in html.replace("onmouseover=&quot;", "")  # only ever inside an escaped attribute


def test_a_long_skill_md_is_rendered_up_to_the_cap_and_says_so() -> None:
    """Rendering is pure Python (seconds per 100,000 hostile characters): past the cap the page says what it left."""
    from skillwire.service.catalog_page import MAX_RENDERED_CHARS, render_markdown

    html = render_markdown("x" * (MAX_RENDERED_CHARS + 5_000))
    assert html.endswith('<p class="error">5,000 more characters are not shown here; read SKILL.md over MCP.</p>')
    assert html.count("x") == MAX_RENDERED_CHARS
