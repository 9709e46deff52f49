"""The catalog page: `GET /` on the HTTP server shows people what the server publishes.

One self-contained HTML response per page (inline CSS and a few lines of vanilla JS,
no build step): `/` lists every served skill with a search box (name and description,
filtered as you type; `/?q=pdf` applies a query on load) and the refused skills with
their reasons; `/skills/<skill-path>` shows one skill's SKILL.md rendered as simple
Markdown, its frontmatter and its files with sizes and digests. Both read the same
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

import json
import re
from html import escape
from typing import Any
from urllib.parse import quote

from mcp.shared.exceptions import MCPError
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

import skillwire
from skillwire.manifest import Skill
from skillwire.scoped_catalog import ScopedCatalog
from skillwire.scopes import CallerResolver, Visibility
from skillwire.server.service import Listing, SkillService

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
        f"<footer>skillwire {escape(skillwire.__version__)} · MCP endpoint: <code>/mcp</code></footer>"
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
            f"<td><code>{escape(r.rule)}</code></td><td>{escape(r.message)}</td></tr>"
            for r in refusals
        )
        refused = (
            f'<section id="refused"><h2>Refused ({len(refusals)})</h2>'
            "<p>Found on disk but not served, and why.</p>"
            f"<table><thead><tr><th>Path</th><th>Rule</th><th>Reason</th></tr></thead><tbody>{rows}</tbody></table>"
            "</section>"
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
        body = (
            render_markdown(strip_frontmatter(text)) if isinstance(text, str) else "<p>SKILL.md is not UTF-8 text.</p>"
        )
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


# -- a small, safe Markdown renderer -----------------------------------------------------------------------------------

_FRONTMATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n.*?^---[ \t]*(?:\r?\n|\Z)", re.DOTALL | re.MULTILINE)
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t#]*$")
_BULLET = re.compile(r"^[ \t]*[-*+][ \t]+(.*)$")
_ORDERED = re.compile(r"^[ \t]*\d{1,9}[.)][ \t]+(.*)$")
_FENCE = re.compile(r"^[ \t]*(```+|~~~+)")
_LINK = re.compile(r"!?\[([^\]]*)\]\(([^)\s]*)(?:\s+&quot;[^)]*&quot;)?\)")
_STRONG = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])")


def strip_frontmatter(text: str) -> str:
    """SKILL.md's body: the text after the closing `---` of its frontmatter (all of it if there is none)."""
    return _FRONTMATTER.sub("", text, count=1)


def render_markdown(text: str) -> str:
    """Headings, paragraphs, lists, code spans and fenced blocks, bold and italics; links as their text.

    Every line is HTML-escaped before any markup is recognised, so nothing in `text`
    can produce a tag or an attribute: raw HTML in the source is shown as text.
    """
    out: list[str] = []
    paragraph: list[str] = []
    list_kind: str | None = None
    list_items: list[str] = []
    fence: str | None = None
    code: list[str] = []

    def flush() -> None:
        nonlocal list_kind
        if paragraph:
            out.append(f"<p>{_inline(' '.join(paragraph))}</p>")
            paragraph.clear()
        if list_kind is not None:
            out.append(f"<{list_kind}>{''.join(f'<li>{_inline(i)}</li>' for i in list_items)}</{list_kind}>")
            list_items.clear()
            list_kind = None

    for raw in text.splitlines():
        line = escape(raw, quote=True)
        if fence is not None:
            if raw.strip().startswith(fence):
                out.append(f"<pre><code>{chr(10).join(code)}</code></pre>")
                code.clear()
                fence = None
            else:
                code.append(line)
            continue
        if m := _FENCE.match(raw):
            flush()
            fence = m.group(1)[0] * 3
            continue
        if not raw.strip():
            flush()
            continue
        if m := _HEADING.match(line):
            flush()
            tag = f"h{min(len(m.group(1)) + 1, 6)}"  # the page's own <h1> is the skill's name
            out.append(f"<{tag}>{_inline(m.group(2))}</{tag}>")
            continue
        bullet, ordered = _BULLET.match(line), _ORDERED.match(line)
        if bullet or ordered:
            kind = "ul" if bullet else "ol"
            item = (bullet or ordered).group(1)  # type: ignore[union-attr]
            if paragraph or (list_kind is not None and list_kind != kind):
                flush()
            list_kind = kind
            list_items.append(item)
            continue
        if list_kind is not None and raw[:1] in (" ", "\t"):
            list_items[-1] += " " + line.strip()
            continue
        if list_kind is not None:
            flush()
        paragraph.append(line.strip())
    if fence is not None:
        out.append(f"<pre><code>{chr(10).join(code)}</code></pre>")
    flush()
    return "".join(out)


def _inline(escaped: str) -> str:
    """Inline markup on already-escaped text: code spans are kept verbatim, links become their text."""
    parts = re.split(r"(`+)(.+?)\1", escaped)
    out: list[str] = []
    # re.split with two groups yields: text, ticks, code, text, ticks, code, ..., text
    for i in range(0, len(parts), 3):
        out.append(_emphasis(parts[i]))
        if i + 2 < len(parts):
            out.append(f"<code>{parts[i + 2].strip()}</code>")
    return "".join(out)


def _emphasis(escaped: str) -> str:
    text = _LINK.sub(lambda m: f'<span class="link" title="{m.group(2)}">{m.group(1)}</span>', escaped)
    text = _STRONG.sub(lambda m: f"<strong>{m.group(1) or m.group(2)}</strong>", text)
    return _EMPHASIS.sub(r"<em>\1</em>", text)


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
