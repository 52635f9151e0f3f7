"""Step 1 of the vectorised replay: the write pass (thatch).

Every write of the log (updates, codify, feedback, deletes) runs once, in log
order, through the engine's own tools, with passage vectors embedded in one
batch and dedup cosines looked up (:mod:`._dedup_lookup`). From the
:class:`~thatchlab.scoring.WriteResult` of each write the pass records,
independently of K, P0, W_SOFT and thresholds: per matcher, item and edge the
log position where it appeared (and an item's deletion); per item the
history of count increments (confirm, hard disconfirm, soft), from which any
parameter setting recomputes counts and stored confidence; and per write
what its reply needs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from thatchlab.core.params import ScoringParams
from thatchlab.core.progress import progress
from thatchlab.logs import applied, mark_checked_args
from thatchlab.replay._dedup_lookup import PrecomputedDedup
from thatchlab.replay._grouping import group_rank
from thatchlab.scoring import posterior_confidence

__all__ = ["WritePass", "MatcherTimeline", "ItemTimeline", "EdgeTimeline", "CountHistory", "HistoryValues",
           "WriteRecords", "run_writes"]

_KIND_OF_WRITE = {"prediction_update", "behavior_codify", "behavior_feedback", "prediction_delete",
                  "behavior_delete", "prediction_mark_checked"}


def _objects(values) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


@dataclass(frozen=True)
class MatcherTimeline:
    """The matchers after the pass (never deleted), in insertion order."""

    id: np.ndarray            # object
    description: np.ndarray   # object
    store: np.ndarray         # object
    created_at: np.ndarray    # log position of the write that added it; -1 when present at the start


@dataclass(frozen=True)
class ItemTimeline:
    """Every item the pass saw, in order of appearance (those present at the start first)."""

    id: np.ndarray              # object
    statement: np.ndarray       # object
    store: np.ndarray           # object
    deleted_at: np.ndarray      # log position of its deletion; ``never`` when it stays
    statement_rank: np.ndarray  # rank of the statement in code-point order (equal texts share one)


@dataclass(frozen=True)
class EdgeTimeline:
    """Every edge the pass saw, grouped by matcher, in insertion order within a matcher."""

    matcher: np.ndarray     # index into MatcherTimeline
    item: np.ndarray        # index into ItemTimeline
    weight: np.ndarray
    created_at: np.ndarray  # log position of the write that added it; -1 when present at the start
    order: np.ndarray       # insertion number over all edges
    start: np.ndarray       # edges of matcher m are [start[m], start[m + 1])


@dataclass(frozen=True)
class HistoryValues:
    """Counts and stored confidence after every history entry under one parameter setting."""

    confirm_count: np.ndarray
    disconfirm_count: np.ndarray
    confidence: np.ndarray


@dataclass(frozen=True)
class CountHistory:
    """Count increments of every item, grouped by item, chronological within an item.

    An item present at the start opens with its stored counts and confidence
    (kept as is until its next signal); an item the pass creates opens with
    an empty entry; each confirm, disconfirm or soft signal adds one entry.
    """

    item: np.ndarray              # index into ItemTimeline
    position: np.ndarray          # log position (-1: the starting state)
    confirms: np.ndarray          # added to c
    disconfirms: np.ndarray       # hard disconfirms added to d
    softs: np.ndarray             # soft signals (each adds soft_weight to d)
    fixed_confidence: np.ndarray  # stored confidence kept as is (NaN: the posterior)
    step: np.ndarray              # index of the entry within its item
    stride: int                   # > every position + 1, for the (item, position) search key

    def replay(self, params: ScoringParams) -> HistoryValues:
        """Counts and confidence after each entry under ``params``, summed in the
        engine's order (one addition per signal) so values are bit-identical."""
        c = self.confirms.copy()
        d = self.disconfirms + params.soft_weight * self.softs
        for at_step in self._entries_by_step():
            c[at_step] = c[at_step - 1] + c[at_step]
            d[at_step] = d[at_step - 1] + d[at_step]
        conf = posterior_confidence(c, d, params.k, params.p0)
        conf = np.where(np.isnan(self.fixed_confidence), conf, self.fixed_confidence)
        return HistoryValues(np.atleast_1d(c), np.atleast_1d(d), np.atleast_1d(conf))

    def _entries_by_step(self):
        for k in range(1, int(self.step.max()) + 1 if len(self.step) else 0):
            yield np.flatnonzero(self.step == k)

    def entry_before(self, item: np.ndarray, position: np.ndarray) -> np.ndarray:
        """Index of each ``item``'s latest entry strictly before log ``position``."""
        key = self.item * self.stride + (self.position + 1)
        return np.searchsorted(key, item * self.stride + (position + 1), side="left") - 1


@dataclass(frozen=True)
class WriteRecords:
    """One row per write of the engine, in log order."""

    position: np.ndarray      # log position
    action: np.ndarray        # the reply's action label (created, created+confirm, linked, ...)
    item_id: np.ndarray       # object
    matcher_id: np.ndarray    # object
    signal: np.ndarray        # object (None for deletes and not found)
    reply_prefix: np.ndarray  # object: the reply text without its counts
    shows_counts: np.ndarray  # bool: the reply ends with the counts at ``entry_after``
    entry_after: np.ndarray   # history entry with the item's counts after the write (-1: none)
    entry_before: np.ndarray  # entry just before a counting signal: its forecast (-1: none)


@dataclass(frozen=True)
class WritePass:
    """Everything step 1 yields."""

    matchers: MatcherTimeline
    items: ItemTimeline
    edges: EdgeTimeline
    history: CountHistory
    writes: WriteRecords
    tables: dict              # the engine's tables after the pass
    final_entries: np.ndarray  # last history entry of each row of ``tables["items"]``


class _Recorder:
    """Collects the pass's rows in Python lists (one append per write), then freezes them."""

    def __init__(self, state, never: int):
        self.never = never
        self.item_index: dict[str, int] = {}
        self.item_cols = {"id": [], "statement": [], "store": [], "deleted_at": []}
        self.last_entry: list[int] = []
        self.hist = {"item": [], "position": [], "confirms": [], "disconfirms": [], "softs": [], "fixed": []}
        self.edge_cols = {"matcher_id": [], "item_id": [], "weight": [], "created_at": []}
        self.matcher_created_at = [-1] * state.n_matchers
        self.write_cols = {k: [] for k in ("position", "action", "item_id", "matcher_id", "signal",
                                           "reply_prefix", "shows_counts", "entry_after", "entry_before")}
        items = state.items
        for iid, stmt, store, c, d, conf in zip(items["id"], items["statement"], items["store"],
                                                items["confirm_count"], items["disconfirm_count"],
                                                items["confidence"]):
            i = self._add_item(iid, stmt, store)
            self._add_entry(i, -1, float(c), float(d), 0.0, float(conf))
        edges = state.edges
        for mid, iid, w in zip(edges["matcher_id"], edges["item_id"], edges["weight"]):
            self._add_edge(mid, iid, float(w), -1)

    def _add_item(self, iid, statement, store) -> int:
        i = len(self.item_cols["id"])
        self.item_index[iid] = i
        for key, value in (("id", iid), ("statement", statement), ("store", store), ("deleted_at", self.never)):
            self.item_cols[key].append(value)
        self.last_entry.append(-1)
        return i

    def _add_entry(self, i, position, confirms, disconfirms, softs, fixed):
        for key, value in (("item", i), ("position", position), ("confirms", confirms),
                           ("disconfirms", disconfirms), ("softs", softs), ("fixed", fixed)):
            self.hist[key].append(value)
        self.last_entry[i] = len(self.hist["item"]) - 1

    def _add_edge(self, matcher_id, item_id, weight, position):
        for key, value in (("matcher_id", matcher_id), ("item_id", item_id), ("weight", weight),
                           ("created_at", position)):
            self.edge_cols[key].append(value)

    def record(self, position: int, reply):
        """What one write did, from its typed result."""
        res = reply.result
        if res.matcher_created:
            self.matcher_created_at.append(position)
        before = -1
        if res.action == "deleted":
            self.item_cols["deleted_at"][self.item_index[res.item_id]] = position
        elif res.action not in ("not_found", "marked"):   # a pair verdict touches no item
            if res.item_created:
                self._add_entry(self._add_item(res.item_id, res.statement, res.store), position,
                                0.0, 0.0, 0.0, np.nan)
            i = self.item_index[res.item_id]
            for edge in res.new_edges:
                self._add_edge(edge.matcher_id, edge.item_id, edge.weight, position)
            if res.counts_changed:
                before = self.last_entry[i]
                self._add_entry(i, position, float(res.signal == "confirm"), float(res.signal == "disconfirm"),
                                float(res.signal == "soft"), np.nan)
        after = self.last_entry[self.item_index[res.item_id]] if res.signal is not None else -1
        for key, value in (("position", position), ("action", reply.action), ("item_id", reply.item_id),
                           ("matcher_id", reply.matcher_id), ("signal", reply.signal),
                           ("reply_prefix", res.reply_prefix), ("shows_counts", res.shows_counts),
                           ("entry_after", after), ("entry_before", before)):
            self.write_cols[key].append(value)

    # ----------------------------------------------------------------- freezing
    def freeze(self, state, tables: dict, stride: int) -> WritePass:
        matchers = MatcherTimeline(state.matchers["id"], state.matchers["description"], state.matchers["store"],
                                   np.asarray(self.matcher_created_at, dtype=np.int64))
        statements = _objects(self.item_cols["statement"])
        items = ItemTimeline(_objects(self.item_cols["id"]), statements, _objects(self.item_cols["store"]),
                             np.asarray(self.item_cols["deleted_at"], dtype=np.int64),
                             np.unique(statements, return_inverse=True)[1].astype(np.int64).reshape(-1))
        history, sorted_index = self._history(stride)
        final_entries = sorted_index[np.asarray(
            [self.last_entry[self.item_index[iid]] for iid in tables["items"]["id"]], dtype=np.int64)]
        return WritePass(matchers, items, self._edges(state), history, self._writes(sorted_index), tables,
                         final_entries)

    def _edges(self, state) -> EdgeTimeline:
        cols = self.edge_cols
        matcher = np.asarray([state.matcher_position(m) for m in cols["matcher_id"]], dtype=np.int64)
        order = np.arange(len(matcher), dtype=np.int64)
        by_matcher = np.lexsort((order, matcher))
        matcher = matcher[by_matcher]
        item = np.asarray([self.item_index[i] for i in cols["item_id"]], dtype=np.int64)[by_matcher]
        return EdgeTimeline(matcher, item, np.asarray(cols["weight"], dtype=np.float64)[by_matcher],
                            np.asarray(cols["created_at"], dtype=np.int64)[by_matcher], order[by_matcher],
                            np.searchsorted(matcher, np.arange(state.n_matchers + 1)))

    def _history(self, stride: int) -> tuple[CountHistory, np.ndarray]:
        """The history sorted by item (chronological within one), and each raw entry's new index."""
        item = np.asarray(self.hist["item"], dtype=np.int64)
        by_item = np.lexsort((np.arange(len(item)), item))
        sorted_index = np.empty_like(by_item)
        sorted_index[by_item] = np.arange(len(by_item))
        item = item[by_item]

        def col(key, dtype):
            return np.asarray(self.hist[key], dtype=dtype)[by_item]

        return CountHistory(item, col("position", np.int64), col("confirms", np.float64),
                            col("disconfirms", np.float64), col("softs", np.float64), col("fixed", np.float64),
                            group_rank(item), stride), sorted_index

    def _writes(self, sorted_index: np.ndarray) -> WriteRecords:
        cols = self.write_cols

        def entry(key):
            raw = np.asarray(cols[key], dtype=np.int64)
            return np.where(raw >= 0, sorted_index[np.maximum(raw, 0)] if len(sorted_index) else raw, -1)

        return WriteRecords(np.asarray(cols["position"], dtype=np.int64), _objects(cols["action"]),
                            _objects(cols["item_id"]), _objects(cols["matcher_id"]), _objects(cols["signal"]),
                            _objects(cols["reply_prefix"]), np.asarray(cols["shows_counts"], dtype=bool),
                            entry("entry_after"), entry("entry_before"))


def _write(eng, event: dict, now, vectors: dict):
    """One logged write through the engine's tool, with its precomputed passage vectors."""
    kind, statement = event["kind"], event["statement"]
    if kind == "prediction_update":
        return eng.update(event["matcher"], statement, event["signal"], event["rationale"], now=now,
                          vectors=(vectors[event["matcher"]], vectors[statement]))
    if kind == "behavior_codify":
        return eng.codify(event["matcher"], statement, event["rationale"], now=now,
                          vectors=(vectors[event["matcher"]], vectors[statement]))
    if kind == "behavior_feedback":
        return eng.feedback(statement, bool(event["relevant"]), event["text"] or "", now=now,
                            vector=vectors[statement])
    if kind == "prediction_mark_checked":
        return eng.mark_checked(*mark_checked_args(event.get("args")), now=now)
    return eng.delete(statement, vector=vectors[statement])


#: Writes turned into row dicts at a time (all of them at once would hold one dict per write).
_CHUNK = 4096


def _write_events(log, positions: np.ndarray):
    """``(row dict, ts, position)`` of each write, in order, a chunk of rows at a time."""
    for start in range(0, len(positions), _CHUNK):
        chunk = positions[start:start + _CHUNK]
        rows = log.iloc[chunk]
        yield from zip(rows.to_dict(orient="records"), rows["ts"].tolist(), chunk.tolist())


def run_writes(eng, log, stores: np.ndarray, write_kinds) -> WritePass:
    """Run every write of ``log`` whose kind is in ``write_kinds`` through ``eng`` (changed in place).

    ``stores`` is each event's store (the project store where the log has none).
    """
    kinds = log["kind"].to_numpy(object)
    positions = np.flatnonzero(np.isin(kinds, [k for k in write_kinds if k in _KIND_OF_WRITE])
                               & applied(log).to_numpy(dtype=bool))  # calls that never ran write nothing
    matcher_texts = set(log["matcher"].to_numpy(object)[positions]) - {None}
    item_texts = set(log["statement"].to_numpy(object)[positions]) - {None}
    # every write text embedded once, as a passage
    texts = sorted(matcher_texts | item_texts)
    vectors = dict(zip(texts, eng.embed_passages(texts))) if texts else {}
    stride = len(log) + 2  # > every log position + 1; also the "never deleted" position
    recorder = _Recorder(eng.state, never=stride)
    eng.dedup_lookup = PrecomputedDedup(eng.state, {"matchers": sorted(matcher_texts), "items": sorted(item_texts)},
                                        vectors)
    try:
        for event, now, pos in progress(_write_events(log, positions), total=len(positions), desc="replay writes"):
            eng.project_store = stores[pos]
            recorder.record(pos, _write(eng, event, now, vectors))
    finally:
        eng.dedup_lookup = None
    return recorder.freeze(eng.state, eng.tables, stride)
