"""How to fix a skill the server refuses, by rule id: one table for `validate`, the catalog page and the docs.

The rule ids are the server's (`Refusal.rule`); the refusal's message says what is wrong, the fix what to do.
The optional-field rules carry their fix with them (`fields.RULES`) and are merged in here.

    FIXES["name-mismatch"]   # "make 'name' equal the folder name (or rename the folder)"
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from skillwire.core.fields import RULES as OPTIONAL_FIELD_RULES

__all__ = ["FIXES"]

FIXES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "root-missing": "check the path",
        "root-not-folder": "pass a folder of skills, or a skill folder",
        "unreadable": "fix the file's permissions",
        "link-dangles": "remove the link or restore its target",
        "link-escapes": "copy the target into the skill instead of linking outside the served root",
        "link-loop": "remove the link",
        "not-a-file": "remove it: only regular files and folders can be served",
        "file-name-encoding": "rename it to valid UTF-8",
        "file-name-control": "rename it without control characters (tab, newline, escape)",
        "file-name-backslash": "rename it without '\\'",
        "path-invalid": "rename it: a path of names (none empty, '.' or '..') that no folder also has",
        "uri-too-long": "shorten folder or file names",
        "duplicate-uri": "rename one of the folders, or serve one source under a prefix (PREFIX=SOURCE)",
        "overlapping-sources": "serve one of the sources under a prefix (PREFIX=SOURCE) outside the other's skills",
        "path-authority": "rename the top folder to lowercase letters, digits and '-'",
        "not-utf8": "save SKILL.md as UTF-8",
        "frontmatter-missing": "start SKILL.md with '---', the fields 'name' and 'description', then '---'",
        "frontmatter-empty": "add 'name' and 'description' between the '---' lines",
        "frontmatter-unterminated": "add a '---' line after the last field",
        "frontmatter-not-mapping": "write the frontmatter as 'key: value' lines",
        "yaml-syntax": "quote values that contain ': ', ' #' or start with a symbol; indent with spaces",
        "yaml-duplicate-key": "keep one of the two fields",
        "yaml-not-json": "quote the value so it is a string",
        "yaml-alias-limit": "write the values out instead of using aliases",
        "yaml-too-deep": "flatten the frontmatter: nest lists and mappings at most 64 levels deep",
        "yaml-surrogate": "write the whole character (a \\ud83d\\ude00 pair, or the character itself), not half",
        "name-missing": "add 'name: <folder name>' to the frontmatter",
        "name-format": "use 1-64 lowercase letters, digits and single hyphens",
        "name-mismatch": "make 'name' equal the folder name (or rename the folder)",
        "description-missing": "add 'description: what the skill does and when to use it'",
        "description-format": "make 'description' a string of 1-1024 characters",
        "limit-files": "split the skill, or ignore build output in .skillwireignore",
        "limit-size": "split the skill, or move large assets out of it",
        # git sources: what a commit's tree holds that a folder on disk cannot
        "submodule": "serve the submodule's repository as a source of its own, or copy its files in",
        "tree-entry-invalid": "rewrite the commit without the entry: git itself never writes such a name",
        "tree-too-deep": "flatten the folders: nest them at most 256 deep",
        "tree-too-large": "serve a smaller repository, or fewer links to folders (each link walks its folder again)",
        # generated and package sources
        "duplicate-path": "give each generated skill its own path",
        "package-unreadable": "fix the distribution's 'skillwire.skills' entry point, or reinstall the distribution",
        # mcp sources (a gateway): what an upstream MCP server lists or serves that cannot be passed on
        "upstream-mismatch": "the upstream served bytes its own manifest does not list: tell its operator; the skill "
        "is served again once every byte verifies",
        "upstream-unreadable": "check the upstream server (the message names the read that failed); the skill is "
        "served once every file can be read and verified",
        "upstream-entry-invalid": "ask the upstream's operator to fix the entry (the message names the rule it breaks)",
        "upstream-dynamic": "read dynamic skills from the upstream directly: a gateway serves verified content only",
        "upstream-unavailable": "check that the upstream is running and reachable; its last verified state is served "
        "meanwhile",
        "gateway-cache-full": "raise the gateway cache's cap (--gateway-cache-mb) or give it a larger disk",
        "upstream-locked-missing": "accept the upstream's version (skillwire lock accept), or restore the gateway "
        "cache that held the locked one",
        **{rule.id: rule.fix for rule in OPTIONAL_FIELD_RULES},  # license, compatibility, metadata, allowed-tools
    }
)
