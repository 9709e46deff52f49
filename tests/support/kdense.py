"""Skills shaped like K-Dense's `rowan` and `markdown-mermaid-writing`: their frontmatter, a short body.

Their `metadata` values are a list of strings and a list of mappings: FastMCP's client rejects a whole listing over
them and the TS SDK's `SkillsClient` rejects the entries, so the server refuses them (`metadata-format`).
"""

from __future__ import annotations

from pathlib import Path

ROWAN_MD = """---
name: rowan
description: Rowan is a cloud-native molecular modeling and medicinal-chemistry workflow platform with a Python API.
license: Proprietary (API key required)
compatibility: Python 3.12+, API key required
metadata:
  skill-author: Rowan Science
  trigger-keywords: ["pKa prediction", "molecular docking", "conformer search", "SMILES"]
---

# Rowan
"""

MERMAID_MD = """---
name: markdown-mermaid-writing
description: >
  Comprehensive markdown and Mermaid diagram writing skill that establishes text-based
  diagrams as the DEFAULT documentation standard.
allowed-tools: [Read, Write, Edit, Bash]
license: Apache-2.0
metadata:
  skill-author: Clayton Young / Superior Byte Works, LLC (@borealBytes)
  skill-version: "1.0.0"
  skill-contributors:
    - name: Clayton Young
      org: Superior Byte Works, LLC / @borealBytes
      role: Author and originator
    - name: K-Dense Team
      org: K-Dense Inc.
      role: Integration target and community feedback
---

# Markdown and Mermaid Writing
"""

GOOD_MD = """---
name: good
description: A skill whose optional fields follow the Agent Skills rules.
license: MIT
compatibility: Requires git
metadata:
  author: example-org
  version: "1.0"
allowed-tools: Read Bash(git:*)
---

# Good
"""


def write_kdense_tree(root: Path) -> Path:
    """`root` holding `rowan`, `markdown-mermaid-writing` (both refused) and `good` (served)."""
    for folder, text in (("rowan", ROWAN_MD), ("markdown-mermaid-writing", MERMAID_MD), ("good", GOOD_MD)):
        (root / folder).mkdir(parents=True)
        (root / folder / "SKILL.md").write_text(text, encoding="utf-8")
    return root
