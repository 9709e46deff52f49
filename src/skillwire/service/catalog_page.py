"""The catalog page: `GET /` on the HTTP server shows people what the server publishes.

One self-contained HTML response per page (inline CSS and a few lines of vanilla JS,
no build step): `/` lists every served skill with a search box (name and description,
filtered as you type; `/?q=pdf` applies a query on load) and the refused skills with
their reasons and fixes; `/skills/<skill-path>` shows one skill's SKILL.md rendered as
Markdown (markdown-it-py, raw HTML off), its frontmatter and its files with sizes and digests. Both read the same
`SkillService` snapshot the MCP endpoint serves, and SKILL.md is read through
`SkillService.read_resource`, so the page shows only bytes that match the manifest.
With a scopes policy (`callers`), each request sees the caller's view, as `/mcp`
would answer that caller (its bearer token), and no refusals (they name paths on disk).

Everything shown is HTML-escaped before any markup is added, and the responses carry
a Content-Security-Policy that allows no external resource at all.

    routes = catalog_routes(service)
    app = server.streamable_http_app(..., custom_starlette_routes=routes)
"""

from __future__ import annotations

import functools
import json
import re
from html import escape
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import anyio.to_thread
from mcp.shared.exceptions import MCPError
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

from skillwire.core.fixes import FIXES
from skillwire.core.manifest import Skill
from skillwire.core.scoped_catalog import ScopedCatalog
from skillwire.core.scopes import CallerResolver, Visibility
from skillwire.core.version import __version__
from skillwire.server.skill_service import Listing, SkillService

SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}

DIGEST_SHOWN = 12  # hex digits of a digest shown in tables (the full digest is in the cell's title)


def catalog_routes(service: SkillService, callers: CallerResolver | None = None) -> list[Route]:
    """The page's routes: `/` (the catalog) and `/skills/<skill-path>` (one skill), as each caller may see them."""

    async def scope() -> Visibility | None:
        return None if callers is None else await callers.scope()

    async def index(request: Request) -> HTMLResponse:
        return _page("Skills", render_index(service.view(service.catalog, await scope())))

    async def skill(request: Request) -> HTMLResponse:
        path = request.path_params["path"].strip("/")
        visibility = await scope()
        found = _find(service.view(service.catalog, visibility), path)
        if found is None:
            body = f'<p><a href="/">&larr; all skills</a></p><h1>No skill at {escape(path)}</h1>'
            return _page("Not found", body, status=404)
        name = str(found.frontmatter.get("name", found.name))
        return _page(name, await render_skill(service, found, scope=visibility))

    return [
        Route("/", index, methods=["GET", "HEAD"]),
        Route("/skills/{path:path}", skill, methods=["GET", "HEAD"]),
    ]


def _find(catalog: Listing, path: str) -> Skill | None:
    for s in catalog.skills:
        if "/".join(s.skill_path) == path:
            return s
    return None


def _page(title: str, body: str, *, status: int = 200) -> HTMLResponse:
    html = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)} · skillwire</title><style>{_CSS}</style></head>"
        f"<body><main>{body}</main>"
        f"<footer>skillwire {escape(__version__)} · MCP endpoint: <code>/mcp</code></footer>"
        f"<script>{_JS}</script></body></html>"
    )
    return HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)


# -- pages -------------------------------------------------------------------------------------------------------------


def render_index(catalog: Listing) -> str:
    skills = catalog.skills
    items = []
    for s in skills:
        name = str(s.frontmatter.get("name", s.name))
        description = str(s.frontmatter.get("description", ""))
        path = "/".join(s.skill_path)
        items.append(
            '<li class="skill">'
            f'<a class="name" href="/skills/{escape(_url_path(path))}">{escape(name)}</a>'
            f' <span class="path">{escape(path)}</span>'
            f'<p class="description">{escape(description)}</p>'
            f'<span class="meta">{len(s.files)} file{"s" if len(s.files) != 1 else ""} · '
            f"{escape(_total(s))}</span></li>"
        )
    listing = f'<ul id="skills">{"".join(items)}</ul>' if items else "<p>This server publishes no skills.</p>"
    refusals = catalog.refusals
    if isinstance(catalog, ScopedCatalog):
        refused = ""  # a refusal names a path on disk, perhaps of a skill this caller cannot see
    elif refusals:
        rows = "".join(
            f"<tr><td><code>{escape(r.path)}</code>{'' if r.line is None else f' line {r.line}'}</td>"
            f"<td><code>{escape(r.rule)}</code></td><td>{escape(r.message)}</td>"
            f'<td class="fix">{escape(r.fix or FIXES.get(r.rule, ""))}</td></tr>'
            for r in refusals
        )
        refused = (
            f'<section id="refused"><h2>Refused ({len(refusals)})</h2>'
            "<p>Found on disk but not served: why, and how to fix it (as <code>skillwire validate</code> says).</p>"
            "<table><thead><tr><th>Path</th><th>Rule</th><th>Reason</th><th>Fix</th></tr></thead>"
            f"<tbody>{rows}</tbody></table></section>"
        )
    else:
        refused = '<section id="refused"><h2>Refused (0)</h2><p>Nothing was refused.</p></section>'
    return (
        f"<h1>Skills <small>({len(skills)})</small></h1>"
        '<input id="search" type="search" placeholder="Search by name or description" autocomplete="off" autofocus>'
        f'<p id="count" aria-live="polite">{len(skills)} of {len(skills)} skills</p>'
        f'{listing}<p id="none" hidden>No skill matches.</p>{refused}'
    )


async def render_skill(service: SkillService, skill: Skill, *, scope: Visibility | None = None) -> str:
    name = str(skill.frontmatter.get("name", skill.name))
    try:
        result = await service.read_resource(skill.uri, modern=True, scope=scope)
        content: dict[str, Any] = result["contents"][0]
        text = content.get("text")
        if isinstance(text, str):  # in a worker thread: a long SKILL.md must not hold up /mcp's requests
            body = await anyio.to_thread.run_sync(render_markdown, strip_frontmatter(text))
        else:
            body = "<p>SKILL.md is not UTF-8 text.</p>"
    except MCPError as err:
        body = f'<p class="error">SKILL.md cannot be read: {escape(str(err))}</p>'
    fm_rows = "".join(
        f"<tr><th>{escape(str(k))}</th><td>{escape(_value(v))}</td></tr>" for k, v in skill.frontmatter.items()
    )
    file_rows = "".join(
        f"<tr><td><code>{escape(f.rel_path)}</code></td><td>{escape(f.mime_type)}</td>"
        + (
            '<td class="num">generated</td><td>none (made at each read)</td></tr>'
            if skill.dynamic
            else f'<td class="num">{escape(_size(f.size))}</td>'
            f'<td><code title="{escape(f.digest)}">{escape(_short(f.digest))}</code></td></tr>'
        )
        for f in skill.files
    )
    return (
        '<p><a href="/">&larr; all skills</a></p>'
        f'<h1>{escape(name)}</h1><p class="path"><code>{escape(skill.uri)}</code></p>'
        f'<h2>Frontmatter</h2><table id="frontmatter"><tbody>{fm_rows}</tbody></table>'
        f"<h2>Files <small>({len(skill.files)} · {escape(_total(skill))})</small></h2>"
        '<table id="files"><thead><tr><th>Path</th><th>Type</th><th>Size</th><th>Digest</th></tr></thead>'
        f"<tbody>{file_rows}</tbody></table>"
        f'<h2>SKILL.md</h2><article id="skill-md">{body}</article>'
    )


def _url_path(path: str) -> str:
    return quote(path, safe="/")


def _value(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _short(digest: str) -> str:
    algorithm, sep, hexdigits = digest.partition(":")
    return f"{algorithm}:{hexdigits[:DIGEST_SHOWN]}…" if sep else digest[:DIGEST_SHOWN]


def _total(skill: Skill) -> str:
    """A skill's size, or "generated" for a dynamic skill (its files have no size until they are read)."""
    return "generated" if skill.dynamic else _size(skill.total_size)


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / (1024 * 1024):.1f} MiB"


# -- Markdown --------------------------------------------------------------------------------------------------------

_FRONTMATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n.*?^---[ \t]*(?:\r?\n|\Z)", re.DOTALL | re.MULTILINE)
_SAFE_SCHEMES = ("http:", "https:", "mailto:")  # a link elsewhere (relative, javascript:, data:, file:) is text
_LINK_REL = "noopener noreferrer nofollow"
# markdown-it-py is pure Python: about 2 s per 100,000 characters at worst (a run of `[`), 0.1 s for prose. The
# Agent Skills spec asks for a SKILL.md under 500 lines; the rest of a longer one is left out, and said so.
MAX_RENDERED_CHARS = 64 * 1024


# CommonMark plus tables; raw HTML is not recognised (`html: False`), so `<script>` in SKILL.md is shown as text;
# images are off (the page loads nothing from elsewhere: its CSP would block them anyway). markdown-it-py also
# refuses `javascript:`, `vbscript:`, `file:` and most `data:` URLs as links, and bounds nesting (maxNesting).
# Made on the first page rendered: a server nobody browses does not hold markdown-it (about 1 MB).
@functools.cache
def _markdown() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable("table").disable("image")


def strip_frontmatter(text: str) -> str:
    """SKILL.md's body: the text after the closing `---` of its frontmatter (all of it if there is none)."""
    return _FRONTMATTER.sub("", text, count=1)


def render_markdown(text: str) -> str:
    """SKILL.md's body as HTML: CommonMark with tables, every piece of text escaped, raw HTML shown as text.

    Headings move down one level (the page's own `<h1>` is the skill's name). A link to an http(s) or mailto URL
    is a link that opens without a referrer; any other target (a file of the skill, a relative path) is shown
    as its text, with the target in its title. Past `MAX_RENDERED_CHARS` the text is cut, and a line says so.
    """
    cut = len(text) - MAX_RENDERED_CHARS
    markdown = _markdown()
    tokens = markdown.parse(text[:MAX_RENDERED_CHARS])
    for token in tokens:
        if token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(int(token.tag[1]) + 1, 6)}"
        for child in token.children or ():
            if child.type != "link_open":
                continue
            href = str(child.attrGet("href") or "")
            if href.lower().startswith(_SAFE_SCHEMES):
                child.attrSet("rel", _LINK_REL)
            else:
                child.tag, child.attrs = "span", {"class": "link", "title": href}
                _closing_link(token.children or [], child).tag = "span"
    html = str(markdown.renderer.render(tokens, markdown.options, {}))
    if cut > 0:
        html += f'<p class="error">{cut:,} more characters are not shown here; read SKILL.md over MCP.</p>'
    return html


def _closing_link(children: list[Token], opening: Token) -> Token:
    """The `link_close` token that ends the link `opening` starts (links do not nest in CommonMark)."""
    start = children.index(opening)
    return next(t for t in children[start + 1 :] if t.type == "link_close")


# -- inline assets -----------------------------------------------------------------------------------------------------

_CSS = """
:root{color-scheme:light dark;--fg:#1d2330;--muted:#667085;--bg:#fff;--card:#f6f7f9;--line:#e3e6ea;--accent:#2457c5}
@media (prefers-color-scheme:dark){:root{--fg:#e6e8eb;--muted:#98a2b3;--bg:#14171c;--card:#1c2028;
--line:#2c323c;--accent:#7aa2f7}}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:960px;margin:0 auto;padding:24px 20px}
footer{max-width:960px;margin:0 auto;padding:12px 20px 32px;color:var(--muted);font-size:13px}
h1{font-size:26px;margin:8px 0 16px}h1 small,h2 small{color:var(--muted);font-weight:400}
h2{font-size:18px;margin:28px 0 10px}
a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}
code,pre{font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:10px 12px;overflow:auto}
#search{width:100%;font:inherit;padding:10px 12px;border:1px solid var(--line);border-radius:8px;
background:var(--card);color:inherit}
#count{color:var(--muted);font-size:13px;margin:8px 0}
#skills{list-style:none;padding:0;margin:0;display:grid;gap:10px}
.skill{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:12px 14px}
.skill .name{font-weight:600;font-size:16px}.path,.meta{color:var(--muted);font-size:13px}
.description{margin:4px 0}
table{border-collapse:collapse;width:100%;font-size:14px}
th,td{text-align:left;border-bottom:1px solid var(--line);padding:6px 8px;vertical-align:top}
#frontmatter th{width:180px;color:var(--muted);font-weight:500}.num{text-align:right;white-space:nowrap}
#skill-md{border:1px solid var(--line);border-radius:8px;padding:4px 18px}
.link{border-bottom:1px dotted var(--muted)}.error{color:#c0392b}
blockquote{margin:12px 0;padding:2px 14px;border-left:3px solid var(--line);color:var(--muted)}
hr{border:0;border-top:1px solid var(--line);margin:18px 0}
"""

_JS = """
(function(){
  var box=document.getElementById('search'); if(!box) return;
  var items=[].slice.call(document.querySelectorAll('#skills .skill'));
  var count=document.getElementById('count'), none=document.getElementById('none');
  function apply(){
    var words=box.value.toLowerCase().split(/\\s+/).filter(Boolean), shown=0;
    items.forEach(function(li){
      var hay=(li.querySelector('.name').textContent+' '+li.querySelector('.description').textContent).toLowerCase();
      var ok=words.every(function(w){return hay.indexOf(w)>=0;});
      li.hidden=!ok; if(ok) shown++;
    });
    count.textContent=shown+' of '+items.length+' skills';
    none.hidden=shown>0||items.length===0;
  }
  var q=new URLSearchParams(location.search).get('q'); if(q) box.value=q;
  box.addEventListener('input',function(){
    var u=new URL(location.href);
    if(box.value) u.searchParams.set('q',box.value); else u.searchParams.delete('q');
    history.replaceState(null,'',u); apply();
  });
  apply();
})();
"""
