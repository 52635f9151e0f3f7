"""What the scoring engine's tools return: typed write results, replies and nudges.

A write (update, codify, feedback, delete) produces a :class:`WriteResult`,
the structured account of what it did; the reply text production prints is
formatted from it (:attr:`WriteResult.text`), never the other way round. The
:class:`Reply` a tool returns carries that text, its familiar fields and the
result itself; :class:`Nudge` is the auto-fire result for one prompt.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from thatchlab.core.jsfmt import js_number, to_fixed

__all__ = ["EdgeRow", "WriteResult", "WRITE_ACTIONS", "Reply", "Nudge", "counts_text"]

#: The values of :attr:`WriteResult.action`.
WRITE_ACTIONS = ("created", "linked", "applied", "deleted", "not_found")


def counts_text(confidence: float, confirm_count: float, disconfirm_count: float) -> str:
    """The counts part of a write reply, as production prints it.

    >>> counts_text(3.5 / 6, 1.0, 0.0)
    'confidence=0.58 (1/0)'
    >>> counts_text(0.4, 0.0, 1.25)
    'confidence=0.40 (0/1.25)'
    """
    return f"confidence={to_fixed(confidence, 2)} ({js_number(confirm_count)}/{js_number(disconfirm_count)})"


@dataclass(frozen=True)
class EdgeRow:
    """One matcher → item edge as written (production's edge columns; the item
    foreign key is called ``item_id`` whatever the engine)."""

    matcher_id: str
    item_id: str
    weight: float
    created_at: str


@dataclass(frozen=True)
class WriteResult:
    """What one write did, field by field.

    Attributes
    ----------
    action : str
        ``created`` (a new item), ``linked`` (an existing item under the
        confidence-neutral signal), ``applied`` (an existing item whose counts
        the signal changed), ``deleted`` or ``not_found``.
    store : str
        The item's store; for ``not_found``, the store searched.
    item_id, statement : str or None
        The item written or deleted and its statement as stored.
    matcher_id : str or None
        The matcher of an update or codify (None for feedback and deletes).
    matcher_created, item_created : bool
        Whether this write added the matcher / the item.
    signal : str or None
        The signal recorded in provenance (None for deletes and not found).
    counts_changed : bool
        Whether the signal changed the counts (confirm, disconfirm, soft).
    confirm_count, disconfirm_count, confidence : float or None
        The item's counts and stored confidence after the write (None for
        deletes and not found).
    new_edges : tuple of EdgeRow
        Edges this write added (an existing edge is never re-added).
    reply_prefix : str
        The reply text without its counts part.
    shows_counts : bool
        Whether the reply ends with :func:`counts_text` of the final counts.

    Examples
    --------
    >>> from thatchlab.embed import LookupEmbedder
    >>> from thatchlab.scoring import PredictionEngine
    >>> eng = PredictionEngine(LookupEmbedder({"writing tests": [1, 0], "use pytest": [0, 1]}))
    >>> res = eng.update("writing tests", "use pytest", "confirm", now="2026-01-01T00:00:00Z").result
    >>> res.action, res.item_created, res.matcher_created, res.counts_changed, len(res.new_edges)
    ('created', True, True, True, 1)
    >>> res.reply_prefix, res.shows_counts, res.text
    ('[created + confirm] "use pytest"', True, '[created + confirm] "use pytest" confidence=0.58 (1/0)')
    """

    action: str
    store: str
    item_id: str | None = None
    statement: str | None = None
    matcher_id: str | None = None
    matcher_created: bool = False
    item_created: bool = False
    signal: str | None = None
    counts_changed: bool = False
    confirm_count: float | None = None
    disconfirm_count: float | None = None
    confidence: float | None = None
    new_edges: tuple = ()
    reply_prefix: str = ""
    shows_counts: bool = False

    @property
    def text(self) -> str:
        """The reply text production prints for this write."""
        if not self.shows_counts:
            return self.reply_prefix
        return f"{self.reply_prefix} {counts_text(self.confidence, self.confirm_count, self.disconfirm_count)}"


@dataclass
class Reply:
    """A tool reply: ``text`` exactly as production prints it, plus its fields.

    ``action`` is the engine's label (``created``, ``codified``,
    ``created+confirm``, ``linked``, ``confirm``, ``deleted``, ``not_found``,
    ``query``, ``list``...); ``result`` is the :class:`WriteResult` of a
    write (None for queries and lists). ``n_foreign_model`` is set on
    query replies only: how many of the matchers the query scored carry a
    model tag other than the embedder's (see :attr:`Nudge.n_foreign_model`).
    """

    text: str
    action: str = ""
    store: str | None = None
    item_id: str | None = None
    matcher_id: str | None = None
    signal: str | None = None
    confidence: float | None = None
    confirm_count: float | None = None
    disconfirm_count: float | None = None
    items: pd.DataFrame | None = None
    result: WriteResult | None = None
    n_foreign_model: int | None = None

    def __str__(self):
        return self.text


@dataclass
class Nudge:
    """The auto-fire result for one prompt.

    ``items`` has the columns of :data:`~thatchlab.scoring.ITEM_COLUMNS`
    (``confidence`` is the 3-decimal rounded stored confidence, ``score`` the
    rounded score); ``text`` is the block production injects (empty when
    nothing surfaced); ``regime`` is ``strong``, ``ambiguous``, ``none`` or
    ``skipped``.

    ``n_foreign_model`` counts the matchers this nudge scored (every matcher
    of ``stores`` with a vector of the prompt's dimension) whose model tag is
    set and differs from the embedder's name. Production never filters on
    the tag, so such rows are scored like any other; a count above 0 means
    cosines compared vectors of two models (0 for a skipped nudge, which
    scores nothing).
    """

    prompt: str
    items: pd.DataFrame
    text: str
    regime: str
    stores: list = field(default_factory=list)
    n_foreign_model: int = 0

    def __str__(self):
        return self.text

    def __len__(self):
        return len(self.items)
