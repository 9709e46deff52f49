"""The block extraction fast path (`frontmatter/_fast_block.py`) finds exactly what FRONTMATTER_BLOCK matches.

`parse_skill_md` finds the frontmatter with `frontmatter_block`, not with the conformance suite's
expression (whose lazy group tries the closing line at every character). These tests compare the
two on every SKILL.md of the frontmatter tests and on random texts made of the pieces that matter
(openings, closings, line breaks); tests/property/test_frontmatter_properties.py adds any text.
"""

from __future__ import annotations

import random

import pytest

from skillwire.core.frontmatter import FRONTMATTER_BLOCK
from skillwire.core.frontmatter._fast_block import frontmatter_block
from tests.core import test_frontmatter
from tests.core.test_frontmatter_fast import _parametrized_values


def expected_block(text: str) -> tuple[str, int] | None:
    """The general path: the expression's group 1 and the end of its match, or None."""
    match = FRONTMATTER_BLOCK.match(text)
    return None if match is None else (match.group(1), match.end())


def test_block_extraction_matches_the_expression_on_the_suite() -> None:
    """skillwire guarantee: on every SKILL.md of the frontmatter tests the fast path finds the expression's block."""
    raws = [value for value in _parametrized_values(test_frontmatter) if isinstance(value, bytes)]
    assert len(raws) >= 20
    for raw in raws:
        text = raw.decode("utf-8", "replace").removeprefix("\ufeff")
        assert frontmatter_block(text) == expected_block(text), text


BLOCK_PIECES = [
    *("---", "--- ", "---\t", " ---", "----", "-- -", "\n---", "\r\n---", "\n---\n", "\n--- \t\r\n", "\r---"),
    *("\n", "\n", "\r\n", "\r", "a: 1", "x", "", " ", "\t"),
]


@pytest.mark.parametrize("seed", range(3))
def test_block_extraction_matches_the_expression_on_random_texts(seed: int) -> None:
    """skillwire guarantee: on random openings, closings and line breaks the fast path finds the expression's block."""
    rng = random.Random(seed)
    found = 0
    for _ in range(5000):
        opening = rng.choice(("---\n", "---\r\n", "---\n", "--- \n", "---\r", "\n---\n", ""))
        text = opening + "".join(rng.choice(BLOCK_PIECES) for _ in range(rng.randint(0, 12)))
        expected = expected_block(text)
        assert frontmatter_block(text) == expected, repr(text)
        found += expected is not None
    assert found >= 1000, found  # many texts do have a closing line
