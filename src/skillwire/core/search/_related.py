"""Stand-ins: a word the catalog keeps writing beside a query word counts, weighed down, as that word.

Skill descriptions name a task once by its own word and again the ways people ask for it ("Draft release notes
... Use when the user asks to compose release notes"). So the skills that use a rare query word ("compose") mostly
also use the word other skills of the same task are written with ("draft"), though those skills never say
"compose". When at least half the skills using a word also use another one, at least twice, and together far more
often than chance (LIFT), the other word stands in for it: a skill holding the stand-in and not the word scores as
if it held the word, times RELATED_WEIGHT and the share. Learned from listing text only, so stand-ins follow the
catalog as it changes; pure (the index counts, this decides).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Mapping

RELATED_WEIGHT = 0.7  # a stand-in's match counts at most this much of the query word's own
SUPPORT = 2  # a word in fewer skills, or a pair seen together fewer times, teaches nothing
SHARE = 0.5  # the least share of the word's skills that must also hold the stand-in
LIFT = 20.0  # how many times more often than chance the two must meet
MAX_DOCUMENTS = 500  # a word in more skills matches enough of them itself (and would cost too much to learn from)
KEPT = 3  # stand-ins remembered per word, best first (a query uses the best one it does not already ask for)


def stand_ins(
    documents: int,
    together: Mapping[int, int],
    documents_of: Callable[[int], int],
    total: int,
    name_of: Callable[[int], str],
) -> tuple[tuple[int, float], ...]:
    """The best stand-ins (term, share) for a word held by `documents` of `total` documents.

    `together` counts, for each other term, the word's documents that hold it too; `documents_of` gives a term's
    own document count and `name_of` its text (ties break on it, so the answer does not depend on term ids).
    """
    if not SUPPORT <= documents <= MAX_DOCUMENTS:
        return ()
    found = []
    for term, count in together.items():
        share = count / documents
        if count < SUPPORT or share < SHARE:
            continue
        lift = share * total / documents_of(term)
        if lift >= LIFT:
            found.append((-share * math.log(lift), name_of(term), term, share))
    return tuple((term, share) for _, _, term, share in heapq.nsmallest(KEPT, found))
