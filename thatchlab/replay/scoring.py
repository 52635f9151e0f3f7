"""Replay of an interaction log through the prediction or behavior engine (thatch).

Two paths give identical results. ``path="events"`` drives the engine's
public tools one event at a time — the reference. ``path="vectorised"`` runs
the writes once through the same tools (with precomputed vectors and a
:class:`~thatchlab.scoring.DedupLookup`) and computes every nudge from one
message × matcher cosine matrix (:func:`prepare` →
:class:`~thatchlab.replay._scoring_plan.ScoringPlan`), so a sweep over K, P0,
W_SOFT and thresholds reuses all the expensive work. Both read the engine
only through the public API of :mod:`thatchlab.scoring`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from thatchlab.core.display import RichDisplay
from thatchlab.core.errors import InputError, warn
from thatchlab.core.params import ScoringParams
from thatchlab.logs import applied, sort_by_time
from thatchlab.logs.interaction import validate_interaction_log
from thatchlab.replay._diagnostics import SILENT_SHARE, silence_diagnostics, silent_share
from thatchlab.scoring import ITEM_COLUMNS, ScoringEngine, posterior_confidence

__all__ = ["ReplayResult", "run", "prepare", "EVENT_COLUMNS", "NUDGE_COLUMNS", "ENGINE_KINDS", "LIST_KINDS",
           "foreign_model_metrics"]

#: Columns of :attr:`ReplayResult.events`, one row per log event in log order.
EVENT_COLUMNS = ["position", "ts", "session", "store", "kind", "regime", "n_items", "n_foreign_model", "action",
                 "item_id", "matcher_id", "signal", "forecast", "confidence", "reply"]
#: Columns of :attr:`ReplayResult.nudges`, one row per surfaced item (messages and queries).
NUDGE_COLUMNS = ["position", "rank", "item_id", "statement", "matcher_id", "matcher_description", "store",
                 "score", "cosine", "weight", "confidence", "stored_confidence", "evidence_count"]
#: Log kinds each engine acts on (messages are read by both).
ENGINE_KINDS = {"prediction": ("prediction_update", "prediction_query", "prediction_delete", "prediction_list"),
                "behavior": ("behavior_codify", "behavior_feedback", "behavior_delete", "behavior_list")}
#: The list tool's kind per engine: its reply prints the whole store at that moment.
LIST_KINDS = {"prediction": "prediction_list", "behavior": "behavior_list"}


@dataclass
class ReplayResult(RichDisplay):
    """What :func:`run` returns.

    Attributes
    ----------
    events : DataFrame, one row per log event in log order (:data:`EVENT_COLUMNS`):
        messages carry ``regime``, ``n_items`` and the nudge block in ``reply``;
        messages and queries carry ``n_foreign_model``, how many of the
        matchers they scored have a model tag other than the embedder's
        (:attr:`~thatchlab.scoring.Nudge.n_foreign_model`; NaN on other rows);
        writes carry ``action`` (``created``, ``created+confirm``, ``linked``,
        ``confirm``, ``deleted``, ``not_found``...), ``item_id``, ``signal``,
        ``forecast`` (stored confidence before a confirm/disconfirm/soft
        signal) and ``confidence`` (after) and the reply text; rows of the
        other engine have action ``ignored``, rows with a ``skip_reason`` (tool
        calls that never ran in production) action ``skipped``.
    nudges : DataFrame, one row per surfaced item of a message or query
        (:data:`NUDGE_COLUMNS`), ``rank`` 0 first.
    tables : the final engine state (``stores, matchers, items, edges, provenance``).
    metrics : dict of scalars (see :func:`thatchlab.metrics.scoring.replay_metrics`), plus
        :func:`foreign_model_metrics`.
    engine : ``"prediction"`` or ``"behavior"``.
    embedder : the embedding model's name.
    params : the :class:`~thatchlab.core.params.ScoringParams` used.
    path : ``"events"`` or ``"vectorised"``.
    strict_model : whether scans skipped rows of another model's tag (see
        :class:`~thatchlab.scoring.ScoringEngine`; False is production).
    diagnostics : sentences explaining a mostly silent replay (more than half
        of the scored messages surfaced nothing): each message's best matcher
        cosine (median, 90th percentile) beside the threshold, and what to do
        about an embedder/threshold mismatch; empty otherwise.
    """

    events: pd.DataFrame
    nudges: pd.DataFrame
    tables: dict
    metrics: dict = field(default_factory=dict)
    engine: str = "prediction"
    embedder: str | None = None
    params: ScoringParams = field(default_factory=ScoringParams)
    path: str = "vectorised"
    strict_model: bool = False
    diagnostics: list = field(default_factory=list)

    def prior_signals(self) -> pd.DataFrame:
        """The signal log :class:`~thatchlab.tune.PriorFitter` fits from: ``item_id, signal, ts``.

        One row per provenance row of the final state, in insertion order
        (``create``/``codify`` rows included; the fitter counts the signals).
        """
        prov = self.tables["provenance"]
        fk = "prediction_id" if "prediction_id" in prov.columns else "behavior_id"
        out = prov.rename(columns={fk: "item_id", "created_at": "ts"})[["item_id", "signal", "ts"]]
        return out.reset_index(drop=True)

    def _display_(self):
        metrics = pd.DataFrame({"value": pd.Series(
            {k: v for k, v in self.metrics.items() if isinstance(v, (int, float)) and not isinstance(v, bool)},
            dtype="float64")})
        facts = {"engine": self.engine, "path": self.path, "embedder": self.embedder,
                 "events": f"{len(self.events):,}", "nudged items": f"{len(self.nudges):,}"}
        if self.diagnostics:
            facts["diagnostics"] = " ".join(self.diagnostics)
        return "Replay", facts, {"metrics": metrics, "events": self.events}

    def __repr__(self):
        return (f"ReplayResult(engine={self.engine!r}, path={self.path!r}, events={len(self.events)}, "
                f"nudges={len(self.nudges)}, embedder={self.embedder!r}, metrics={len(self.metrics)})")


def engine_class(engine: str):
    from thatchlab.scoring.behavior import BehaviorEngine
    from thatchlab.scoring.prediction import PredictionEngine

    if engine not in ("prediction", "behavior"):
        raise InputError(f"engine: expected 'prediction' or 'behavior', got {engine!r}")
    return PredictionEngine if engine == "prediction" else BehaviorEngine


def initial_engine(initial, engine: str, embedder, params: ScoringParams,
                   strict_model: bool = False) -> ScoringEngine:
    """A fresh engine of kind ``engine`` holding ``initial``'s state (never modifying it).

    ``initial`` may be None, a :class:`~thatchlab.store.StoreContents`
    (``store.import_sqlite(path)``), an engine, or a dict of tables; the new
    engine scans with ``strict_model`` whatever ``initial``'s setting.
    """
    cls = engine_class(engine)
    project = "project"
    tables = None
    if initial is not None:
        obj = initial
        if not isinstance(obj, (dict, ScoringEngine)) and hasattr(obj, engine):
            obj = getattr(obj, engine)
        if isinstance(obj, ScoringEngine):
            if obj.config.kind != engine:
                raise InputError(f"initial: expected {engine} engine state, got a {obj.config.kind} engine")
            project = obj.project_store
            if embedder is None:  # the embedder as given (None: not loaded yet)
                embedder = obj.get_params(deep=False)["embedder"]
            tables = obj.tables
        elif isinstance(obj, dict):
            tables = obj
        elif obj is not None:
            raise InputError("initial: expected None, store.import_sqlite(...) contents, an engine or "
                             f"a dict of tables, got {type(initial).__name__}")
    if embedder is None:
        from thatchlab.embed import default_embedder

        embedder = default_embedder()
    if tables is None:
        return cls(embedder=embedder, params=params, project_store=project, strict_model=strict_model)
    return cls.from_tables(tables, embedder=embedder, params=params, project_store=project,
                           strict_model=strict_model)


def check_log(log, source=None) -> pd.DataFrame:
    """The validated, typed log (a copy)."""
    return validate_interaction_log(log, source=source)


def _row_vector(v):
    return None if v is None else np.asarray(v, dtype=np.float32)


def run(log, engine: str = "prediction", params: ScoringParams | None = None, embedder=None,
        initial=None, path: str = "vectorised", *, strict_model: bool = False) -> ReplayResult:
    """Replay an interaction log through an engine under ``params``.

    Parameters
    ----------
    log : an interaction log DataFrame (see :mod:`thatchlab.logs.interaction`; validated here).
    engine : ``"prediction"`` or ``"behavior"``; the other engine's rows are ignored.
    params : :class:`~thatchlab.core.params.ScoringParams` (production defaults when None).
    embedder : an Embedder; None uses ``initial``'s or the bundled model.
    initial : starting state: ``store.import_sqlite(path)``, an engine, or tables.
    path : ``"vectorised"`` (fast, :func:`prepare` + ``plan.run``) or
        ``"events"`` (the engine API, event by event). Both give identical
        ``events``, ``nudges`` and ``tables``. A log holding the engine's
        list rows (``prediction_list``/``behavior_list``) replays on the
        events path whatever ``path`` says (a list reply prints the whole
        store as it was at that moment, which the vectorised pass does not
        keep); the result's ``path`` says which ran.
    strict_model : False (production) scores every row with a vector of the
        query's dimension whatever its model tag; True also skips rows tagged
        with another model than the embedder's, in every scan (research).

    Each event's store is its ``store`` column (the project store when null);
    writes go there and nudges search ``[store, "global"]``. Events run in
    time order with ``now = ts``: the log is sorted stably by ``ts`` (ties
    keep file order), with a ``UserWarning`` saying how many rows moved when
    it was not in time order; ``events`` follow that order.

    Examples
    --------
    >>> import pandas as pd
    >>> from thatchlab.embed import LookupEmbedder
    >>> emb = LookupEmbedder({"writing tests": [1, 0], "use pytest": [0, 1],
    ...                       "I am writing tests now": [1, 0.1]})
    >>> log = pd.DataFrame({"ts": ["2026-01-01T09:00:00Z", "2026-01-01T09:05:00Z"],
    ...     "session": ["s1", "s2"], "kind": ["prediction_update", "message"],
    ...     "matcher": ["writing tests", None], "statement": ["use pytest", None],
    ...     "signal": ["confirm", None], "text": [None, "I am writing tests now"]})
    >>> res = run(log, embedder=emb)
    >>> res.events[["kind", "action", "regime"]].values.tolist()
    [['prediction_update', 'created+confirm', None], ['message', None, 'ambiguous']]
    >>> res.nudges[["statement", "score"]].values.tolist()
    [['use pytest', 0.58]]
    """
    from thatchlab.metrics.scoring import replay_metrics

    params = ScoringParams.coerce(params)
    if path not in ("vectorised", "events"):
        raise InputError(f"path: expected 'vectorised' or 'events', got {path!r}")
    log = sort_by_time(check_log(log), "interaction log")
    if path == "vectorised" and engine in LIST_KINDS and ((log["kind"] == LIST_KINDS[engine]) & applied(log)).any():
        path = "events"  # list replies need the state at each list row
    if path == "events":
        res = _run_events(log, engine, params, embedder, initial, strict_model)
    else:
        from thatchlab.replay._scoring_plan import prepare as _prepare

        plan = _prepare(log, engine, embedder=embedder, initial=initial, dedup_cosine=params.dedup_cosine,
                        dedup_scope=params.dedup_scope, validated=True, strict_model=strict_model)
        res = plan.run(params, metrics=False)
    res.metrics = {**replay_metrics(res, log), **foreign_model_metrics(res.events)}
    if silent_share(res.events) > SILENT_SHARE:
        probe = initial_engine(initial, engine, embedder, params)
        res.diagnostics = silence_diagnostics(log, res.events, res.tables["matchers"], probe.embedder,
                                              params.threshold, probe.project_store)
        warn("replay: " + " ".join(res.diagnostics), UserWarning)
    return res


def foreign_model_metrics(events: pd.DataFrame) -> dict:
    """Metrics of the rows scored with another model's tag, from :attr:`ReplayResult.events`.

    ``n_foreign_model_reads`` counts the messages and queries whose scan
    scored at least one matcher tagged with a model other than the
    embedder's; ``n_foreign_model_rows`` is the most such matchers one read
    scored. Both 0 means every cosine compared the embedder's own (or
    untagged) vectors.

    >>> ev = pd.DataFrame({"n_foreign_model": [float("nan"), 0.0, 2.0, 3.0]})
    >>> foreign_model_metrics(ev)
    {'n_foreign_model_reads': 2, 'n_foreign_model_rows': 3}
    """
    n = events["n_foreign_model"].to_numpy(np.float64)
    n = n[~np.isnan(n)]
    return {"n_foreign_model_reads": int(np.count_nonzero(n > 0)),
            "n_foreign_model_rows": int(n.max()) if n.size else 0}


def prepare(log, engine: str = "prediction", embedder=None, initial=None, dedup_cosine: float = 0.85,
            dedup_scope: str = "store+global", *, strict_model: bool = False, validated: bool = False):
    """One-time work of the vectorised replay (writes, embeddings, cosines) for sweeps;
    see :func:`thatchlab.replay._scoring_plan.prepare`.

    ``validated=True`` says ``log`` is already what :func:`check_log` followed
    by :func:`~thatchlab.logs.sort_by_time` returns (a sweep validates once
    for all its plans); it is not checked again.
    """
    from thatchlab.replay._scoring_plan import prepare as _prepare

    return _prepare(log, engine, embedder=embedder, initial=initial, dedup_cosine=dedup_cosine,
                    dedup_scope=dedup_scope, strict_model=strict_model, validated=validated)


def _event_row(pos, ev, store):
    return {"position": pos, "ts": ev["ts"], "session": ev["session"], "store": store, "kind": ev["kind"],
            "regime": None, "n_items": np.nan, "n_foreign_model": np.nan, "action": None, "item_id": None, "matcher_id": None,
            "signal": None, "forecast": np.nan, "confidence": np.nan, "reply": None}


def _run_events(log: pd.DataFrame, engine: str, params: ScoringParams, embedder, initial,
                strict_model: bool = False) -> ReplayResult:
    """The reference path: every event through the engine's public API."""
    from thatchlab.core.progress import progress

    eng = initial_engine(initial, engine, embedder, params, strict_model)
    default_store = eng.project_store
    kinds = ENGINE_KINDS[engine]
    items = eng.state.items
    conf_by_id = dict(zip(items["id"].tolist(), items["confidence"].tolist()))
    p_new = posterior_confidence(0.0, 0.0, params.k, params.p0)
    rows, nudges = [], []
    records = log.to_dict(orient="records")
    for pos, ev in enumerate(progress(records, total=len(records), desc="replay events")):
        store = ev["store"] if ev["store"] is not None else default_store
        row = _event_row(pos, ev, store)
        rows.append(row)
        kind = ev["kind"]
        if ev.get("skip_reason") is not None:  # a call that never ran in production
            row["action"] = "skipped"
            continue
        if kind != "message" and kind not in kinds:
            row["action"] = "ignored"
            continue
        eng.project_store = store
        now = ev["ts"]
        if kind in ("message", "prediction_query"):
            vec = _row_vector(ev["embedding"])
            if kind == "message":
                if vec is not None and len(ev["text"]) >= params.min_prompt_chars:
                    out = eng.nudge_vector(vec, prompt=ev["text"])
                else:
                    out = eng.nudge(ev["text"])
                row["regime"], row["reply"] = out.regime, out.text
            else:
                out = eng.query(ev["text"]) if vec is None else eng.query_vector(vec)
                row["action"], row["reply"] = "query", out.text
            row["n_foreign_model"] = out.n_foreign_model
            # a nudge's rows as dicts without building its frame (the same values as items.to_dict)
            records = out.records() if kind == "message" else out.items.to_dict(orient="records")
            row["n_items"] = len(records)
            for rank, it in enumerate(records):
                nudges.append({"position": pos, "rank": rank, **{c: it[c] for c in NUDGE_COLUMNS[2:]}})
            continue
        if kind == LIST_KINDS[engine]:
            listed = eng.list(store)
            row["action"], row["reply"] = "list", listed.text
            continue
        if kind == "prediction_update":
            reply = eng.update(ev["matcher"], ev["statement"], ev["signal"], ev["rationale"], now=now)
        elif kind == "behavior_codify":
            reply = eng.codify(ev["matcher"], ev["statement"], ev["rationale"], now=now)
        elif kind == "behavior_feedback":
            reply = eng.feedback(ev["statement"], bool(ev["relevant"]), ev["text"] or "", now=now)
        else:  # deletes
            reply = eng.delete(ev["statement"])
        row.update(action=reply.action, item_id=reply.item_id, matcher_id=reply.matcher_id, reply=reply.text)
        result = reply.result
        if result.signal is not None:
            row["signal"] = result.signal
            if result.counts_changed:  # the stored confidence before the signal is its forecast
                row["forecast"] = p_new if result.item_created else conf_by_id.get(result.item_id, p_new)
            row["confidence"] = reply.confidence
            conf_by_id[reply.item_id] = reply.confidence
    return ReplayResult(events=events_frame(rows), nudges=nudges_frame(nudges), tables=eng.tables,
                        engine=engine, embedder=getattr(eng.embedder, "name", None), params=params,
                        path="events", strict_model=eng.strict_model)


def events_frame(rows) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=EVENT_COLUMNS)
    df["position"] = df["position"].astype("int64")
    for col in ("n_items", "n_foreign_model", "forecast", "confidence"):
        df[col] = df[col].astype("float64")
    for col in ("session", "store", "kind", "regime", "action", "item_id", "matcher_id", "signal", "reply"):
        df[col] = df[col].astype(object).where(df[col].notna(), None)
    return df


def nudges_frame(rows) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=NUDGE_COLUMNS)
    for col in ("position", "rank", "evidence_count"):
        df[col] = df[col].astype("int64")
    for col in ("score", "cosine", "weight", "confidence", "stored_confidence"):
        df[col] = df[col].astype("float64")
    for col in ("item_id", "statement", "matcher_id", "matcher_description", "store"):
        df[col] = df[col].astype(object)
    return df.reset_index(drop=True)


assert set(NUDGE_COLUMNS[2:]) <= set(ITEM_COLUMNS)
