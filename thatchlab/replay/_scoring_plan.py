"""The vectorised replay of the scoring engines, built for sweeps.

:func:`prepare` does the one-time work: (1) the writes run once, in log
order, through the engine's own tools (:mod:`._scoring_writes`), and (2)
every message and query text is embedded once and its matcher cosines found
(:mod:`._scoring_reads`); neither depends on K, P0, W_SOFT or the thresholds.
:meth:`ScoringPlan.run` then answers one parameter setting with array
operations: the posterior of the count history, the nudge rules as group
operations (:mod:`._scoring_nudges`), the regimes and the reply texts (they
print confidences, so they depend on K and P0).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.core.errors import ParamsError
from thatchlab.core.params import ScoringParams
from thatchlab.logs import applied, sort_by_time
from thatchlab.metrics.scoring import replay_metrics
from thatchlab.replay._hook import hook_skipped
from thatchlab.replay._regime_broadcast import RegimeTable
from thatchlab.replay._scoring_common import (
    EVENT_COLUMNS,
    LIST_KINDS,
    ReplayResult,
    check_log,
    foreign_model_metrics,
    initial_engine,
    replayed_kinds,
)
from thatchlab.replay._scoring_nudges import item_vectors, nudge_reads
from thatchlab.replay._scoring_reads import ReadCosines
from thatchlab.replay._scoring_writes import run_writes
from thatchlab.scoring import counts_text
from thatchlab.scoring.rules import drops_near_duplicates

__all__ = ["prepare", "ScoringPlan", "WRITE_RULE", "write_rule"]

#: The fields that shape a replay's writes: one plan serves every configuration sharing them.
WRITE_RULE = ("dedup_cosine", "dedup_scope", "release")


def write_rule(params: ScoringParams) -> tuple:
    """The values of :data:`WRITE_RULE` in ``params`` (what a plan was prepared for)."""
    return (float(params.dedup_cosine), params.dedup_scope, params.release)


def prepare(log, engine: str = "prediction", embedder=None, initial=None, dedup_cosine: float = 0.85,
            dedup_scope: str | None = None, *, release: str = "latest", validated: bool = False,
            strict_model: bool = False) -> ScoringPlan:
    """Run the parameter-independent part of a replay once.

    Parameters
    ----------
    log, engine, embedder, initial : as for :func:`thatchlab.replay.run`.
    dedup_cosine, dedup_scope, release : the write rule (the dedup of the writes and the
        thatch release whose write semantics apply); a plan serves every
        :class:`~thatchlab.core.params.ScoringParams` with these three values.
    strict_model : the engine's research mode that skips rows tagged with
        another model (False: production, the tag filters nothing); it shapes
        the writes' dedup, so a plan serves one value.

    Returns
    -------
    ScoringPlan
        ``plan.run(params)`` → :class:`~thatchlab.replay.ReplayResult`.

    Examples
    --------
    >>> import pandas as pd
    >>> from thatchlab.embed import LookupEmbedder
    >>> from thatchlab.core.params import ScoringParams
    >>> emb = LookupEmbedder({"writing tests": [1, 0], "use pytest": [0, 1],
    ...                       "I am writing tests now": [1, 0.1]})
    >>> log = pd.DataFrame({"ts": ["2026-01-01T09:00:00Z", "2026-01-01T09:05:00Z"],
    ...     "session": ["s1", "s2"], "kind": ["prediction_update", "message"],
    ...     "matcher": ["writing tests", None], "statement": ["use pytest", None],
    ...     "signal": ["confirm", None], "text": [None, "I am writing tests now"]})
    >>> plan = prepare(log, embedder=emb)
    >>> [float(plan.run(ScoringParams(k=k)).nudges["score"].iloc[0]) for k in (1, 5, 20)]
    [0.746, 0.58, 0.521]
    """
    log = log if validated else sort_by_time(check_log(log), "interaction log")
    eng = initial_engine(initial, engine, embedder, ScoringParams(dedup_cosine=dedup_cosine,
                                                                  dedup_scope=dedup_scope, release=release),
                         strict_model=strict_model)
    return ScoringPlan(log, engine, eng)


def _stores(log: pd.DataFrame, project_store: str) -> np.ndarray:
    """Each event's store: its ``store``, else the project store (one shared str object)."""
    stores = log["store"].to_numpy(object).copy()
    stores[pd.isna(stores)] = project_store
    return stores


def _shared(values: np.ndarray) -> np.ndarray:
    """``values`` (objects) with equal texts sharing one str object; None stays None."""
    codes, uniques = pd.factorize(values)
    return np.append(uniques.astype(object), None)[codes]


#: The object columns of the events frame (the others: int64 ``position``, ``ts``, float64 counts).
_EVENT_OBJECTS = [c for c in EVENT_COLUMNS if c not in ("position", "ts", "n_items", "n_foreign_model",
                                                        "forecast", "confidence")]


def _events_frame(block: np.ndarray, others: dict) -> pd.DataFrame:
    """:func:`~thatchlab.replay.scoring.events_frame` of the object columns ``block`` (rows in
    :data:`_EVENT_OBJECTS` order, nulls made None here) and the arrays of ``others``.

    The block is held as it is (the frame is born consolidated, so metrics
    that copy it copy each column once); the others are inserted, copied,
    where :data:`EVENT_COLUMNS` puts them.
    """
    index = pd.RangeIndex(block.shape[1])
    for row in block:
        row[pd.isna(row)] = None
    df = pd.DataFrame(block.T, columns=pd.Index(list(_EVENT_OBJECTS)), index=index, dtype=object,  # as the events path
                      copy=False)
    at = {c: i for i, c in enumerate(EVENT_COLUMNS)}
    for c in sorted(others, key=at.__getitem__):
        df.insert(at[c], c, pd.Series(others[c], index=index, copy=False))
    return df


class ScoringPlan:
    """The prepared replay of one log (see :func:`prepare`).

    Attributes
    ----------
    matchers, items, edges : the timelines of the write pass
        (:class:`~thatchlab.replay._scoring_writes.MatcherTimeline`, ``ItemTimeline``, ``EdgeTimeline``).
    history : :class:`~thatchlab.replay._scoring_writes.CountHistory`, each item's count increments.
    writes : :class:`~thatchlab.replay._scoring_writes.WriteRecords`, one row per write.
    reads : :class:`~thatchlab.replay._scoring_reads.ReadCosines`, the reads and their cosines.
    """

    def __init__(self, log: pd.DataFrame, engine: str, eng):
        self.log, self.engine = log, engine
        self.write_rule = write_rule(eng.params)
        self.config = eng.config
        self.embedder_name = getattr(eng.embedder, "name", None)
        self.strict_model = eng.strict_model
        self.stores = _stores(log, eng.project_store)
        # the near-duplicate rule of a release's nudges compares item vectors: keep those the
        # pass deletes (present at the start) before the writes run
        near = drops_near_duplicates(eng.params)
        state = eng.state
        before = ({iid: state.vector("items", pos) for pos, iid in enumerate(state.items["id"].tolist())}
                  if near else {})
        self.kinds = replayed_kinds(engine, eng)
        written = run_writes(eng, log, self.stores, self.kinds)
        self.matchers, self.items, self.edges = written.matchers, written.items, written.edges
        #: item vectors aligned with ``items`` (None when the release has no near-duplicate rule)
        self.item_vectors = item_vectors(eng, self.items, before) if near else None
        self.history, self.writes = written.history, written.writes
        self._tables_after, self._final_entries = written.tables, written.final_entries
        # prompts the release's hook gave no nudge read as skipped (replay._hook)
        self.reads = ReadCosines(log, engine, self.stores, eng, self.matchers,
                                 hook_skipped=hook_skipped(log, eng.params.release))

    def run(self, params: ScoringParams | None = None, *, metrics: bool = True) -> ReplayResult:
        """Replay under ``params`` (same dedup rule as the plan)."""
        p = ScoringParams() if params is None else params
        if not isinstance(p, ScoringParams):
            raise ParamsError(f"params: expected ScoringParams, got {type(p).__name__}")
        if write_rule(p) != self.write_rule:
            said = ", ".join(f"{k}={v!r}" for k, v in zip(WRITE_RULE, self.write_rule))
            asked = ", ".join(f"{k}={v!r}" for k, v in zip(WRITE_RULE, write_rule(p)))
            raise ParamsError(f"params: this plan was prepared with {said}; prepare another plan for {asked}")
        values = self.history.replay(p)
        nudges, outcomes = nudge_reads(self, p, values)
        res = ReplayResult(events=self._events(values, outcomes), nudges=nudges, tables=self._final_tables(values),
                           engine=self.engine, embedder=self.embedder_name, params=p, path="vectorised",
                           strict_model=self.strict_model)
        if metrics:
            res.metrics = {**replay_metrics(res, self.log), **foreign_model_metrics(res.events)}
        return res

    def regime_table(self, params: ScoringParams, floor: float, values=None):
        """Every message's ordered candidate rows under ``params`` for all thresholds ≥ ``floor``
        (:class:`~thatchlab.replay._regime_broadcast.RegimeTable`: the top items of many
        thresholds from one candidate pass, for regime sweeps)."""
        return RegimeTable(self, params, floor, values)

    def _events(self, values, outcomes) -> pd.DataFrame:
        """One row per log event: the reads' outcomes, the writes' actions and replies."""
        log, n = self.log, len(self.log)
        kinds = log["kind"].to_numpy(object)
        block = np.empty((len(_EVENT_OBJECTS), n), dtype=object)  # the object columns, written in place
        rows = dict(zip(_EVENT_OBJECTS, block))
        rows["session"][:], rows["store"][:], rows["kind"][:] = log["session"].to_numpy(object), self.stores, kinds
        col = {c: rows[c] for c in ("regime", "action", "item_id", "matcher_id", "signal", "reply")}
        for c in col.values():
            c[:] = None
        num = {c: np.full(n, np.nan) for c in ("n_items", "n_foreign_model", "forecast", "confidence")}
        own = np.isin(kinds, self.kinds) | (kinds == "message")
        col["action"][~own] = "ignored"
        # list rows: the plan keeps no state per row, so no reply (run() takes the events path for them)
        col["action"][kinds == LIST_KINDS[self.engine]] = "list"
        col["action"][~applied(log).to_numpy(dtype=bool)] = "skipped"  # calls that never ran in production
        reads = self.reads.position
        col["regime"][reads] = outcomes.regime
        num["n_items"][reads] = outcomes.n_items
        num["n_foreign_model"][reads] = outcomes.n_foreign_model
        col["reply"][reads] = outcomes.reply
        col["action"][reads[self.reads.is_query]] = "query"
        w = self.writes
        for c in ("action", "item_id", "matcher_id", "signal"):
            col[c][w.position] = getattr(w, c)
        after, before = w.entry_after, w.entry_before
        num["confidence"][w.position[after >= 0]] = values.confidence[after[after >= 0]]
        num["forecast"][w.position[before >= 0]] = values.confidence[before[before >= 0]]
        col["reply"][w.position] = self._write_replies(values)
        col["regime"][:] = _shared(col["regime"])  # a few labels, not one str object per read
        return _events_frame(block, {"position": np.arange(n, dtype=np.int64), "ts": log["ts"].array, **num})

    def _write_replies(self, values) -> np.ndarray:
        """Each write's reply text: its prefix, plus the counts under this setting when shown."""
        w = self.writes
        texts = w.reply_prefix.copy()
        for j in np.flatnonzero(w.shows_counts):
            a = w.entry_after[j]
            texts[j] = (f"{texts[j]} "
                        f"{counts_text(values.confidence[a], values.confirm_count[a], values.disconfirm_count[a])}")
        return texts

    def _final_tables(self, values) -> dict:
        """The tables after the pass, with every item's counts and confidence under this setting."""
        tables = {k: v.copy() for k, v in self._tables_after.items()}
        items = tables["items"]
        if len(items):
            items["confirm_count"] = values.confirm_count[self._final_entries]
            items["disconfirm_count"] = values.disconfirm_count[self._final_entries]
            items["confidence"] = values.confidence[self._final_entries]
        return tables
