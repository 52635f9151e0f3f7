"""Messages' top items under many thresholds from one candidate pass (built for regime sweeps).

A message keeps the top ``top_matchers`` matchers by rounded cosine and
*then* drops those below the threshold, so the candidate rows found at the
lowest threshold of a group hold the rows of every higher one: a higher
threshold only removes the rows whose matcher's rounded cosine is below it,
and the engine's order of the rows that stay (score, statement, matcher
id, item id) does not change. :class:`RegimeTable` builds and orders
those rows once; :meth:`RegimeTable.tops` redoes, for one threshold, the
rest of the nudge as group operations on them: each item's first (best)
row, under ``07ecf87`` the near-duplicate rule on those, the ``max_items``
cut, and per message what the strong bar and the conflict margin look at (top item's stored confidence and evidence, the
thousandths between its score and the best other surfaced item of its
matcher) plus the logged outcome that attribution ties to the top item.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np
import pandas as pd

from thatchlab.core.jsfmt import js_round
from thatchlab.core.params import ScoringParams
from thatchlab.replay._grouping import group_rank
from thatchlab.replay._scoring_nudges import greedy_keep, ordered_rows, within_read_pairs
from thatchlab.scoring import evidence_count
from thatchlab.scoring.rules import drops_near_duplicates

__all__ = ["RegimeTable", "MessageTops", "margin_thousandths", "NO_RIVAL", "OUTCOME_RIGHT", "OUTCOME_WRONG"]

#: ``MessageTops.gap`` of a message whose top matcher surfaced no other item.
NO_RIVAL = np.iinfo(np.int64).max
#: ``MessageTops.outcome`` codes: the top item's first attributed signal was a confirm
#: (a right silent follow if strong), a disconfirm or soft (wrong); 0: none.
OUTCOME_RIGHT, OUTCOME_WRONG = 1, 2
_OUTCOME_CODE = {"confirm": OUTCOME_RIGHT, "disconfirm": OUTCOME_WRONG, "soft": OUTCOME_WRONG}

# plan -> its (position, item id) -> outcome lookup (parameter-independent)
_FEEDBACK: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class MessageTops:
    """Per message that surfaces an item under one threshold, its top item.

    ``read`` indexes the plan's reads; ``gap`` is the top score minus the
    best score of another surfaced item reached through the top item's
    matcher, in integer thousandths (:data:`NO_RIVAL` when none);
    ``outcome`` is 0, :data:`OUTCOME_RIGHT` or :data:`OUTCOME_WRONG`.
    """

    read: np.ndarray
    confidence: np.ndarray
    evidence: np.ndarray
    gap: np.ndarray
    outcome: np.ndarray

    def strong(self, strong_confidence, strong_evidence, conflict_margin) -> np.ndarray:
        """Bool ``(n_messages, n_settings)``: strong under each (confidence, evidence, margin)
        setting: top confidence ≥ the bar, evidence ≥ the bar and no rival within the margin
        (compared in integer thousandths, as the engine does)."""
        sc = np.asarray(strong_confidence, dtype=np.float64)[None, :]
        se = np.asarray(strong_evidence, dtype=np.int64)[None, :]
        margin = np.array([margin_thousandths(m) for m in np.atleast_1d(conflict_margin)], dtype=np.int64)
        return ((self.confidence[:, None] >= sc) & (self.evidence[:, None] >= se)
                & (self.gap[:, None] > margin[None, :]))

    @property
    def right(self) -> np.ndarray:
        """Bool: the top item's attributed outcome is a confirm."""
        return self.outcome == OUTCOME_RIGHT

    @property
    def wrong(self) -> np.ndarray:
        """Bool: the top item's attributed outcome is a disconfirm or soft."""
        return self.outcome == OUTCOME_WRONG


def margin_thousandths(conflict_margin: float) -> int:
    """The conflict margin as the engine compares it, in integer thousandths."""
    return int(js_round(float(conflict_margin) * 1000))


class RegimeTable:
    """Ordered candidate rows of every message under one nudge setting, for thresholds ≥ ``floor``.

    ``params`` gives everything but the threshold (noise floor, top matchers,
    prompt-length gate, min confidence, K, P0, soft weight); ``values`` are
    the history's values under it (``plan.history.replay(params)``). Queries
    contribute no rows.
    """

    def __init__(self, plan, params: ScoringParams, floor: float, values=None):
        reads = plan.reads
        self.floor = float(floor)
        values = plan.history.replay(params) if values is None else values
        n_reads = len(reads.position)
        self.n_reads = n_reads
        self.skipped = ~reads.is_query & (reads.length < params.min_prompt_chars)
        rows = ordered_rows(plan, params, np.full(n_reads, self.floor), self.skipped | reads.is_query, values)
        self.read, self.matcher = rows.read, rows.matcher
        self.confidence = rows.confidence
        self.evidence = (evidence_count(values.confirm_count[rows.entry], values.disconfirm_count[rows.entry])
                         if len(rows.entry) else np.zeros(0, dtype=np.int64))
        self.thousandths = js_round(rows.score * 1000).astype(np.int64)
        # rounded cosines as codes: rounded ≥ t ⟺ code ≥ searchsorted(cosines, t)
        self._cosines, self.code = np.unique(np.asarray(rows.cosine, dtype=np.float64), return_inverse=True)
        self.code = self.code.astype(np.int64).reshape(-1)
        self.prev = self._earlier_best(rows.item, len(plan.items.id))
        n = len(self.read)
        self.start = np.arange(n, dtype=np.int64) - group_rank(self.read)  # first row of the read's block
        self.outcome = _outcomes(plan, reads.position[self.read], plan.items.id[rows.item])
        # 07ecf87: (earlier row, later row) pairs of one message whose items are near duplicates;
        # which of them drop depends on the rows a threshold leaves, so tops() runs the greedy pass
        self._near = None
        if drops_near_duplicates(params):
            a, b = within_read_pairs(plan, self.read, rows.item)
            other = rows.item[a] != rows.item[b]
            self._near = (a[other], b[other])

    def _earlier_best(self, item: np.ndarray, n_items: int) -> np.ndarray:
        """Per row, the highest cosine code of the earlier rows of its (read, item), −1 when none."""
        n = len(self.read)
        out = np.full(n, -1, dtype=np.int64)
        if not n:
            return out
        key = self.read * (n_items + 1) + item
        order = np.argsort(key, kind="stable")  # engine order within each (read, item)
        k = key[order]
        start = np.r_[True, k[1:] != k[:-1]]
        offset = (np.cumsum(start) - 1) * (len(self._cosines) + 1)
        run = np.maximum.accumulate(self.code[order] + offset)  # running best within the group
        prev = np.r_[-1, run[:-1] - offset[1:]]
        prev[start] = -1
        out[order] = prev
        return out

    def tops(self, threshold: float, max_items: int) -> MessageTops:
        """The top item of every message that surfaces one at ``threshold`` (≥ ``floor``)."""
        if threshold < self.floor:
            raise ValueError(f"threshold {threshold} is below the table's floor {self.floor}")
        cut = np.searchsorted(self._cosines, threshold, side="left")
        first = (self.code >= cut) & (self.prev < cut)  # the item's best row among those left
        if self._near is not None and len(self._near[0]):
            first = greedy_keep(first, *self._near)  # 07ecf87: near duplicates of kept items drop
        before = np.cumsum(first) - first
        rank = before - before[self.start]
        surfaced = np.flatnonzero(first & (rank < max_items))
        rank = rank[surfaced]
        top = surfaced[rank == 0]
        top_read = self.read[top]
        top_of = np.full(self.n_reads, -1, dtype=np.int64)
        top_of[top_read] = top
        other = surfaced[rank > 0]
        lead = top_of[self.read[other]]
        same = self.matcher[other] == self.matcher[lead]
        rival, lead = other[same], lead[same]
        gap = np.full(self.n_reads, NO_RIVAL, dtype=np.int64)
        np.minimum.at(gap, self.read[rival], self.thousandths[lead] - self.thousandths[rival])
        return MessageTops(top_read, self.confidence[top], self.evidence[top], gap[top_read], self.outcome[top])


def _feedback(plan):
    """Sorted ``(message position × n_ids + item id code)`` keys of attributed feedback, their
    outcome codes and the item id index; the rule of
    :func:`thatchlab.metrics.scoring.attribute`: the first confirm/disconfirm/soft on an item
    in the message's session, after it and before the session's next message."""
    if plan in _FEEDBACK:
        return _FEEDBACK[plan]
    log, w = plan.log, plan.writes
    n = len(log)
    kinds = log["kind"].to_numpy(object)
    session = log["session"].astype(object).where(log["session"].notna(), None).to_numpy(object)
    signal = np.full(n, None, dtype=object)
    item_id = np.full(n, None, dtype=object)
    signal[w.position], item_id[w.position] = w.signal, w.item_id
    msgs = kinds == "message"
    anchor = pd.Series(np.where(msgs, np.arange(n), np.nan)).groupby(session).ffill()
    fb = (pd.Series(signal).isin(list(_OUTCOME_CODE)) & pd.Series(item_id).notna() & anchor.notna()
          & ~msgs).to_numpy()
    ev = pd.DataFrame({"anchor": anchor[fb].astype("int64").to_numpy(), "item_id": item_id[fb],
                       "outcome": signal[fb]}).drop_duplicates(["anchor", "item_id"], keep="first")
    ids = pd.Index(pd.unique(np.concatenate([plan.items.id.astype(object), ev["item_id"].to_numpy(object)])))
    key = ev["anchor"].to_numpy(np.int64) * max(1, len(ids)) + ids.get_indexer(ev["item_id"].to_numpy(object))
    order = np.argsort(key, kind="stable")
    code = np.array([_OUTCOME_CODE[s] for s in ev["outcome"].to_numpy(object)], dtype=np.int8)
    out = (key[order], code[order], ids)
    _FEEDBACK[plan] = out
    return out


def _outcomes(plan, position: np.ndarray, item_id: np.ndarray) -> np.ndarray:
    """The outcome code of each (message position, item id)."""
    keys, codes, ids = _feedback(plan)
    out = np.zeros(len(position), dtype=np.int8)
    if not len(keys) or not len(position):
        return out
    key = position.astype(np.int64) * max(1, len(ids)) + ids.get_indexer(np.asarray(item_id, dtype=object))
    at = np.minimum(np.searchsorted(keys, key), len(keys) - 1)
    hit = keys[at] == key
    out[hit] = codes[at[hit]]
    return out
