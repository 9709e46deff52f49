"""The files every source kind is given in the contract tests: one case per group of rules.

Only what every kind can hold: regular files with UTF-8 names and folders (a path ending in "/" is a folder, made
empty), no links, no bytes that are not UTF-8 in a name. Folder-only behaviour (links, FIFOs, permissions) is
tested in tests/sources.
"""

from __future__ import annotations


def skill_md(name: str, description: str = "Does things. Use it when asked.", extra: str = "") -> bytes:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n# {name}\n\nBody.\n".encode()


CASES: dict[str, dict[str, bytes]] = {
    "served": {
        "pdf/SKILL.md": skill_md("pdf", extra="license: MIT\nmetadata:\n  version: '1.0'\n"),
        "pdf/templates/invoice.md": b"# Invoice\r\nCRLF kept as stored\r\n",
        "pdf/templates/deep/er/note.txt": b"deep\n",
        "pdf/scripts/run.py": b"print('hi')\n",
        "pdf/blob": b"\x00\x01\x02binary",
        "pdf/notes": b"plain text, no extension\n",
        "pdf/bom.md": b"\xef\xbb\xbfstarts with a BOM\n",
        "acme/billing/refunds/SKILL.md": skill_md("refunds"),
        "acme/billing/refunds/examples/email.md": b"Dear customer\n",
        "review/SKILL.md": skill_md("review"),
        "review/security/SKILL.md": skill_md("security"),
        "review/security/checklist.md": b"- inputs\n",
        "review/general.md": b"- style\n",
        "unicode/SKILL.md": skill_md("unicode"),
        "unicode/r\u00e9sum\u00e9 notes.md": b"percent-encoded in its URI\n",
        "loose/README.md": b"no skill here\n",
    },
    "refused": {
        "no-frontmatter/SKILL.md": b"# just markdown\n",
        "mismatch/SKILL.md": skill_md("other-name"),
        "Bad-Name/SKILL.md": skill_md("Bad-Name"),
        "no-description/SKILL.md": b"---\nname: no-description\n---\n",
        "bad-yaml/SKILL.md": b"---\nname: bad-yaml\ndescription: [unclosed\n---\n",
        "bad@authority/x/SKILL.md": skill_md("x"),
        "bad-license/SKILL.md": skill_md("bad-license", extra="license: [1, 2]\n"),
        "control/SKILL.md": skill_md("control"),
        "control/tab\there.md": b"a tab in the name\n",
        "backslash/SKILL.md": skill_md("backslash"),
        "backslash/a\\b.md": b"a backslash in the name\n",
        "caf\u00e9/SKILL.md": skill_md("caf\u00e9"),
        "ok/SKILL.md": skill_md("ok"),
    },
    "ignored": {
        "tidy/SKILL.md": skill_md("tidy"),
        "tidy/.skillwireignore": b"*.tmp\nbuild/\n!keep.tmp\n",
        "tidy/a.tmp": b"ignored\n",
        "tidy/keep.tmp": b"kept by negation\n",
        "tidy/build/out.bin": b"ignored folder\n",
        "tidy/.git/config": b"[core]\n",
        "tidy/__pycache__/m.cpython-311.pyc": b"\x00",
        "tidy/m.pyc": b"\x00",
        "tidy/.DS_Store": b"\x00",
        "tidy/._resource": b"\x00",
        "tidy/.gitkeep": b"",
        "tidy/.hidden/visible.md": b"hidden folders are served\n",
        ".skillwireignore": b"drafts/\n",
        "drafts/wip/SKILL.md": skill_md("wip"),
        ".curated/kept/SKILL.md": skill_md("kept"),
        "unruly/SKILL.md": skill_md("unruly"),
        "unruly/.skillwireignore": b"\xff not UTF-8\n",
    },
    "folders": {
        "pdf/SKILL.md": skill_md("pdf"),
        "pdf/.skillwireignore": b"build/\n",
        "pdf/empty/": b"",
        "pdf/deep/er/est/": b"",
        "pdf/ignored-only/.DS_Store": b"\x00",
        "pdf/ignored-only/__pycache__/m.pyc": b"\x00",
        "pdf/build/": b"",
        "pdf/build/out.bin": b"ignored folder\n",
        "pdf/scripts/run.py": b"print(1)\n",
        "pdf/scripts/spare/": b"",
        "pdf/scripts/": b"",
        "pdf/nested/SKILL.md": skill_md("nested"),
        "pdf/nested/drafts/": b"",
        "beside/empty/": b"",
    },
    "root": {  # the root itself is a skill (named as the root), holding a nested one
        "SKILL.md": skill_md("skills"),
        "guide.md": b"# Guide\n",
        "sub/SKILL.md": skill_md("sub"),
        "sub/x.md": b"x\n",
    },
    "limits": {
        "many/SKILL.md": skill_md("many"),
        **{f"many/f{i:03}.md": b"x" for i in range(512)},
        "fits/SKILL.md": skill_md("fits"),
        **{f"fits/f{i:03}.md": b"x" for i in range(511)},
    },
}
