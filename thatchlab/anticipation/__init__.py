"""Anticipation: temporal pattern mining and prefetch (mnemo's anticipation engine).

Four pattern types are mined from event and recall streams — sequential
("after A, B follows"), periodic ("Monday 8–10, the agent asks about X"),
conditional ("when X is mentioned, Y is needed") and co-occurrence ("A, B, C
are recalled together") — and a :class:`Prefetcher` injects the top facts
they predict before a session's first recall.
"""

from thatchlab.anticipation._mine import (
    PATTERN_COLUMNS,
    PATTERN_TYPES,
    event_recall_union,
    in_lookback,
    mine,
)
from thatchlab.anticipation._miners import (
    co_recall_count,
    cooccurrence_groups,
    mine_conditional,
    mine_cooccurrence,
    mine_periodic,
    slot_of,
)
from thatchlab.anticipation._prefetch import CUE_KINDS, Prefetcher
from thatchlab.anticipation._sequential import mine_sequential

__all__ = ["mine_sequential", "mine_periodic", "mine_conditional", "mine_cooccurrence",
           "co_recall_count", "cooccurrence_groups", "slot_of", "mine", "in_lookback",
           "event_recall_union", "Prefetcher", "CUE_KINDS", "PATTERN_COLUMNS", "PATTERN_TYPES"]
