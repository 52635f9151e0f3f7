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

import numpy as np
import pandas as pd

from thatchlab.core.errors import InputError, warn
from thatchlab.core.params import ScoringParams
from thatchlab.core.progress import progress
from thatchlab.logs import applied, mark_checked_args, sort_by_time
from thatchlab.metrics.scoring import replay_metrics
from thatchlab.replay._diagnostics import SILENT_SHARE, silence_diagnostics, silent_share
from thatchlab.replay._hook import hook_skipped
from thatchlab.replay._scoring_common import (
    ENGINE_KINDS,
    EVENT_COLUMNS,
    LIST_KINDS,
    NUDGE_COLUMNS,
    ReplayResult,
    check_log,
    engine_class,  # noqa: F401  (re-exported: the command line and the main job use it)
    events_frame,
    foreign_model_metrics,
    initial_engine,
    nudges_frame,
    replayed_kinds,
    row_vector,
)
from thatchlab.replay._scoring_plan import prepare as _prepare
from thatchlab.scoring import posterior_confidence

__all__ = ["ReplayResult", "run", "prepare", "EVENT_COLUMNS", "NUDGE_COLUMNS", "ENGINE_KINDS", "LIST_KINDS",
           "foreign_model_metrics"]

def run(log, engine: str = "prediction", params: ScoringParams | None = None, embedder=None,
        initial=None, path: str = "vectorised", *, strict_model: bool = False) -> ReplayResult:
    """Replay an interaction log through an engine under ``params``.

    Parameters
    ----------
    log : pandas.DataFrame
        An interaction log (see :mod:`thatchlab.logs.interaction`; validated here).
    engine : {"prediction", "behavior"}, default="prediction"
        The engine replayed; the other engine's rows are ignored.
    params : ScoringParams, default=None
        :class:`~thatchlab.core.params.ScoringParams` (production defaults when None).
    embedder : Embedder, default=None
        None uses ``initial``'s or the bundled model.
    initial : StoreContents or ScoringEngine or dict, default=None
        Starting state: ``store.import_sqlite(path)``, an engine, or tables.
    path : {"vectorised", "events"}, default="vectorised"
        ``"vectorised"`` (fast, :func:`prepare` + ``plan.run``) or ``"events"`` (the engine API,
        event by event). Both give identical ``events``, ``nudges`` and ``tables``. A log holding
        the engine's list rows (``prediction_list``/``behavior_list``) replays on the events path
        whatever ``path`` says (a list reply prints the whole store as it was at that moment, which
        the vectorised pass does not keep); the result's ``path`` says which ran.
    strict_model : bool, default=False
        False (production) scores every row with a vector of the query's dimension whatever its
        model tag; True also skips rows tagged with another model than the embedder's, in every
        scan (research).

    Returns
    -------
    ReplayResult
        The events, nudges, final tables and metrics.

    Raises
    ------
    InputError
        ``path`` is neither ``"vectorised"`` nor ``"events"`` (or the log does not validate).

    See Also
    --------
    prepare : the one-time part of the vectorised path, for sweeps.

    Notes
    -----
    Messages the hook of ``params.release`` gave no nudge replay as regime
    ``skipped`` (:mod:`thatchlab.replay._hook`): under ``07ecf87`` chat echoes
    (``[chat] `` prompts) and prompts of task sub-agent sessions (``subagent``
    ``"task"``); under ``v0.1.30`` prompts before which production printed an
    extraction nudge (``logged_extraction``).

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
    params = ScoringParams.coerce(params)
    if path not in ("vectorised", "events"):
        raise InputError(f"path: expected 'vectorised' or 'events', got {path!r}")
    log = sort_by_time(check_log(log), "interaction log")
    res = _replay(log, engine, params, embedder, initial, path, strict_model)
    res.metrics = {**replay_metrics(res, log), **foreign_model_metrics(res.events)}
    _explain_silence(res, log, engine, params, embedder, initial)
    return res


def _replay(log, engine, params, embedder, initial, path, strict_model) -> ReplayResult:
    """The replay on the path asked for (the events path when the log lists the store)."""
    if path == "vectorised" and engine in LIST_KINDS and ((log["kind"] == LIST_KINDS[engine]) & applied(log)).any():
        path = "events"  # list replies need the state at each list row
    if path == "events":
        return _run_events(log, engine, params, embedder, initial, strict_model)
    plan = _prepare(log, engine, embedder=embedder, initial=initial, dedup_cosine=params.dedup_cosine,
                    dedup_scope=params.dedup_scope, release=params.release, validated=True,
                    strict_model=strict_model)
    return plan.run(params, metrics=False)


def _explain_silence(res, log, engine, params, embedder, initial) -> None:
    """When most scored messages surfaced nothing, say why in ``res.diagnostics`` and warn."""
    if silent_share(res.events) > SILENT_SHARE:
        probe = initial_engine(initial, engine, embedder, params)
        res.diagnostics = silence_diagnostics(log, res.events, res.tables["matchers"], probe.embedder,
                                              params.threshold, probe.project_store)
        warn("replay: " + " ".join(res.diagnostics), UserWarning)


def prepare(log, engine: str = "prediction", embedder=None, initial=None, dedup_cosine: float = 0.85,
            dedup_scope: str | None = None, *, release: str = "latest", strict_model: bool = False,
            validated: bool = False):
    """One-time work of the vectorised replay (writes, embeddings, cosines) for sweeps;
    see :func:`thatchlab.replay._scoring_plan.prepare`.

    ``validated=True`` says ``log`` is already what :func:`check_log` followed
    by :func:`~thatchlab.logs.sort_by_time` returns (a sweep validates once
    for all its plans); it is not checked again.

    Parameters
    ----------
    log, engine, embedder, initial : object
        As for :func:`run`.
    dedup_cosine : float, default=0.85
        The write rule's dedup threshold.
    dedup_scope : str, default=None
        The write rule's dedup scope.
    release : str, default="latest"
        The thatch release whose write semantics apply.
    strict_model : bool, default=False
        The engine's research mode that skips rows tagged with another model.
    validated : bool, default=False
        ``log`` is already checked and sorted.

    Returns
    -------
    ScoringPlan
        ``plan.run(params)`` → :class:`~thatchlab.replay.ReplayResult`.
    """
    return _prepare(log, engine, embedder=embedder, initial=initial, dedup_cosine=dedup_cosine,
                    dedup_scope=dedup_scope, release=release, strict_model=strict_model, validated=validated)


def _event_row(pos, ev, store):
    return {"position": pos, "ts": ev["ts"], "session": ev["session"], "store": store, "kind": ev["kind"],
            "regime": None, "n_items": np.nan, "n_foreign_model": np.nan, "action": None, "item_id": None, "matcher_id": None,
            "signal": None, "forecast": np.nan, "confidence": np.nan, "reply": None}


def _run_events(log: pd.DataFrame, engine: str, params: ScoringParams, embedder, initial,
                strict_model: bool = False) -> ReplayResult:
    """The reference path: every event through the engine's public API."""
    eng = initial_engine(initial, engine, embedder, params, strict_model)
    default_store = eng.project_store
    kinds = replayed_kinds(engine, eng)
    items = eng.state.items
    conf_by_id = dict(zip(items["id"].tolist(), items["confidence"].tolist()))
    p_new = posterior_confidence(0.0, 0.0, params.k, params.p0)
    rows, nudges = [], []
    records = log.to_dict(orient="records")
    hook = hook_skipped(log, params.release)  # prompts production's hook gave no nudge
    for pos, ev in enumerate(progress(records, total=len(records), desc="replay events")):
        store = ev["store"] if ev["store"] is not None else default_store
        row = _event_row(pos, ev, store)
        rows.append(row)
        kind = ev["kind"]
        if ev.get("skip_reason") is not None:  # a call that never ran in production
            row["action"] = "skipped"
            continue
        if hook[pos]:  # a message: nothing scored, as for a prompt under min_prompt_chars
            row.update(regime="skipped", reply="", n_items=0, n_foreign_model=0)
            continue
        if kind != "message" and kind not in kinds:
            row["action"] = "ignored"
            continue
        eng.project_store = store
        now = ev["ts"]
        if kind in ("message", "prediction_query"):
            vec = row_vector(ev["embedding"])
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
            listed = eng.list(ev["store"])  # none named: the release's default (07ecf87: project + global)
            row["action"], row["reply"] = "list", listed.text
            continue
        if kind == "prediction_update":
            reply = eng.update(ev["matcher"], ev["statement"], ev["signal"], ev["rationale"], now=now)
        elif kind == "behavior_codify":
            reply = eng.codify(ev["matcher"], ev["statement"], ev["rationale"], now=now)
        elif kind == "behavior_feedback":
            reply = eng.feedback(ev["statement"], bool(ev["relevant"]), ev["text"] or "", now=now)
        elif kind == "prediction_mark_checked":
            reply = eng.mark_checked(*mark_checked_args(ev.get("args")), now=now)
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

