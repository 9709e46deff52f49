"""The spec's Example Message Flow, as printed there: the pdf-processing manifest and the added credit note.

Tests compare against these literal values, never against digests computed from our own files.
"""

from __future__ import annotations

from typing import Any

SPEC_RESOURCES: list[dict[str, Any]] = [
    {
        "uri": "skill://pdf-processing/SKILL.md",
        "digest": "sha256:99b737495721155ece826d57521e2d66141ebdc1344a400487481ea2642ab19e",
        "size": 151,
    },
    {
        "uri": "skill://pdf-processing/templates/invoice.md",
        "digest": "sha256:61f4ea6d2c75fde1b4977219e7e3107d491c3c26aefb6686e84d6281c088d9ee",
        "size": 29,
    },
    {
        "uri": "skill://pdf-processing/templates/purchase-order.md",
        "digest": "sha256:f2ff774b1737ff3dec81c47946f9976f18a1a9f69dda0a81f22eabd95173c158",
        "size": 35,
    },
]
CREDIT_NOTE_RESOURCE: dict[str, Any] = {
    "uri": "skill://pdf-processing/templates/credit-note.md",
    "digest": "sha256:766bffa8d4908ce897e1727ca22e4bf0fa796620b35218ce2132a124545626f1",
    "size": 39,
}
