"""Replay of the anticipation engine: mine daily, prefetch for the next day's sessions (mnemo).

Patterns are re-mined every day at 06:30 UTC over the trailing lookback
``[run − lookback, run)``; each session whose first recall falls in the 24 h
after a run is prefetched with that run's patterns, just before its first
recall. The session's recalls from then on are what the prefetch is judged
against, so no session ever sees patterns mined from its own future.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from thatchlab.anticipation import Prefetcher, mine, slot_of
from thatchlab.core.errors import InputError
from thatchlab.core.params.anticipation import AnticipationParams, parse_duration
from thatchlab.logs import sort_by_time
from thatchlab.logs.streams import validate_event_log, validate_recall_stream

__all__ = ["run_anticipation", "AnticipationReplayResult", "RUN_TIME"]

#: mnemo's daily mining time (UTC).
RUN_TIME = pd.Timedelta(hours=6, minutes=30)


@dataclass
class AnticipationReplayResult:
    """What a replay of the anticipation engine measured.

    Every parameter is kept as the attribute of the same name.

    Parameters
    ----------
    sessions : pandas.DataFrame
        One row per evaluated session (workspace, session, t0 = first recall, run_at, prefetched
        facts, later recalls, hit, useful, false prefetches, round-trips saved).
    runs : pandas.DataFrame
        One row per mining run (run_at, patterns per type, sessions served).
    patterns : pandas.DataFrame
        The patterns of the last run.
    metrics : dict
        Scalar metrics (see :func:`run_anticipation`).
    params : AnticipationParams, default=AnticipationParams()
        The parameters used; ``release`` (a property) is the mnemo release replayed.
    """

    sessions: pd.DataFrame
    runs: pd.DataFrame
    patterns: pd.DataFrame
    metrics: dict
    params: AnticipationParams = field(default_factory=AnticipationParams)

    @property
    def release(self) -> str:
        """The mnemo release replayed (``params.release``: ``"seed"``, its only production)."""
        return self.params.release

    def roi(self) -> pd.DataFrame:
        """Per-session recall round-trips, tokens and latency without and with anticipation.

        Costs use ``tokens_per_recall`` and ``latency_ms_per_recall``; the
        tokens that injected facts themselves occupy are not counted.

        Returns
        -------
        pandas.DataFrame
            One row per evaluated session.
        """
        m, p = self.metrics, self.params
        before = m["recalls_per_session"]
        saved = m["round_trips_saved_per_session"]
        rows = {"without anticipation": before, "with anticipation": before - saved, "saved": saved}
        return pd.DataFrame({
            "recall round-trips / session": rows,
            "tokens / session": {k: v * p.tokens_per_recall for k, v in rows.items()},
            "latency ms / session": {k: v * p.latency_ms_per_recall for k, v in rows.items()},
        })


def _first_recalls(recalls):
    first = recalls.groupby(["workspace", "session"], sort=True, observed=True)["ts"].min().rename("t0").reset_index()
    return first


def run_anticipation(events: pd.DataFrame, recalls: pd.DataFrame, params: AnticipationParams | None = None,
                     *, warmup="7d") -> AnticipationReplayResult:
    """Replay daily mining and per-session prefetch over event and recall streams.

    A run happens every day at 06:30 UTC, from the first 06:30 at least
    ``warmup`` after the streams begin; it mines :func:`~thatchlab.anticipation.mine`
    over ``[run − lookback, run)`` and serves the sessions whose first recall
    ``t0`` lies in ``[run, run + 1 day)``. The prefetch cues are the
    session's events before ``t0`` (names and entities) and the slot of
    ``t0``; the top ``k`` facts are injected.

    Metrics (over evaluated sessions, i.e. sessions with a recall served by a run):

    * ``hit_rate_at_k``: share of sessions where a prefetched fact is recalled later;
    * ``precision_at_k``: mean of (prefetched facts recalled later) / k;
    * ``prefetch_precision``: prefetched facts recalled later / facts prefetched;
    * ``recall_at_k``: mean of (distinct later facts prefetched) / (distinct later facts);
    * ``round_trips_saved_per_session``: later recall rows whose fact was prefetched, per session;
    * ``tokens_saved_per_session`` and ``latency_saved_ms_per_session``: the same times the per-recall costs;
    * ``false_prefetches`` (total) and ``false_prefetches_per_session``: prefetched facts never recalled later;
    * ``recalls_per_session``, ``prefetched_per_session``, ``sessions``, ``runs``.

    Parameters
    ----------
    events : pandas.DataFrame
        The event stream (see :mod:`thatchlab.logs`), mined and used for cues.
    recalls : pandas.DataFrame
        The recall stream; sessions are evaluated against it.
    params : AnticipationParams, default=None
        The mining and prefetch parameters (mnemo's defaults when None).
    warmup : str or pandas.Timedelta, default="7d"
        How long after the streams begin the first daily run may happen.

    Returns
    -------
    AnticipationReplayResult
        The metrics above, the runs, the sessions and the mined patterns.

    Raises
    ------
    InputError
        The recall stream is empty, or no session starts after the warm-up.

    Examples
    --------
    >>> from thatchlab.synth import PatternWorld
    >>> ev, rc = PatternWorld(n_workspaces=1, days=21, seed=0).generate()
    >>> res = run_anticipation(ev, rc)
    >>> 0 <= res.metrics["hit_rate_at_k"] <= 1
    True
    """
    params = AnticipationParams.coerce(params)
    warm = parse_duration("warmup", warmup)
    events = sort_by_time(validate_event_log(events, source="events"), "event stream")
    recalls = sort_by_time(validate_recall_stream(recalls, source="recalls"), "recall stream")
    if recalls.empty:
        raise InputError("recalls: the recall stream is empty; expected at least one recall to "
                         "prefetch for")
    sess = _served_sessions(events, recalls, params, warm, warmup)
    pick, runs, patterns = _daily_runs(events, recalls, sess, _session_cues(events, sess), params)
    return _evaluate(sess, recalls, pick, runs, patterns, params)


def _served_sessions(events, recalls, params, warm, warmup) -> pd.DataFrame:
    """The sessions a daily run serves: those whose first recall ``t0`` comes after the first run,
    each with its run time, a ``key`` and the slot of ``t0``."""
    begin = min(events["ts"].min() if len(events) else recalls["ts"].min(), recalls["ts"].min())
    first_run = (begin + warm - RUN_TIME).ceil("D") + RUN_TIME
    sess = _first_recalls(recalls)
    sess["run_at"] = (sess["t0"] - RUN_TIME).dt.floor("D") + RUN_TIME
    sess = sess[sess["run_at"] >= first_run].reset_index(drop=True)
    if sess.empty:
        raise InputError(f"recalls: no session starts after the warm-up (first daily run at "
                         f"{first_run.isoformat()}, {warmup} after the streams begin); expected "
                         "streams that span more than the warm-up")
    sess["key"] = np.arange(len(sess))
    sess["slot"] = slot_of(sess["t0"], slot_hours=params.slot_hours, timezone=params.timezone).to_numpy()
    return sess


def _session_cues(events, sess) -> pd.DataFrame:
    """The cues known before each session's first recall: its events' names and entities, and its
    slot; one row per ``(key, cue)`` with the session's run time."""
    before = events.merge(sess[["workspace", "session", "t0", "key"]], on=["workspace", "session"])
    before = before[before["ts"] < before["t0"]]
    ev_cues = before[["key", "workspace", "name"]].rename(columns={"name": "cue"}).assign(cue_kind="event")
    lens = before["entities"].map(len).to_numpy(dtype=np.int64)
    idx = np.repeat(np.arange(len(before)), lens)
    ent_cues = pd.DataFrame({"key": before["key"].to_numpy()[idx], "workspace": before["workspace"].to_numpy()[idx],
                             "cue": [x for v in before["entities"] for x in v], "cue_kind": "entity"})
    slot_cues = sess[["key", "workspace", "slot"]].rename(columns={"slot": "cue"}).assign(cue_kind="slot")
    cues = pd.concat([c for c in (ev_cues, ent_cues, slot_cues) if len(c)], ignore_index=True)
    return cues.merge(sess[["key", "run_at"]], on="key")


def _daily_runs(events, recalls, sess, cues, params) -> tuple:
    """Mine at each run and prefetch for the sessions it serves: the picks, one row per run, and
    the last run's patterns."""
    picks, runs, patterns = [], [], None
    for run_at, group in sess.groupby("run_at", sort=True):
        patterns = mine(events, recalls, run_at, params)
        run_cues = cues[cues["run_at"] == run_at][["key", "workspace", "cue_kind", "cue"]]
        picks.append(Prefetcher(patterns, params).prefetch_many(run_cues, k=params.k))
        counts = patterns["type"].value_counts()
        runs.append({"run_at": run_at, "sessions": len(group), "patterns": len(patterns),
                     **{f"n_{t}": int(counts.get(t, 0)) for t in
                        ("sequential", "periodic", "conditional", "co-occurrence")}})
    runs = pd.DataFrame(runs)
    picks = [p for p in picks if len(p)]
    pick = pd.concat(picks, ignore_index=True) if picks else pd.DataFrame(columns=["key", "fact_id", "rank"])
    return pick, runs, patterns


def _ids_by_key(df) -> dict:
    """``{key: [fact_id, ...]}`` in row order. Not ``groupby().agg(list)``: pandas 2 casts the lists
    back to the column's dtype, which fails for an Arrow-backed ``fact_id``."""
    ids = df["fact_id"].to_numpy(dtype=object)
    return {k: ids[rows].tolist() for k, rows in df.groupby("key").indices.items()}


def _evaluate(sess, recalls, pick, runs, patterns, params):
    later = recalls.merge(sess[["workspace", "session", "key", "t0"]], on=["workspace", "session"])
    later = later[later["ts"] >= later["t0"]]
    pre = _ids_by_key(pick)
    later_facts = {k: sorted(set(ids)) for k, ids in _ids_by_key(later).items()}
    n_later = later.groupby("key").size().to_dict()
    saved_rows = later.merge(pick[["key", "fact_id"]], on=["key", "fact_id"]).groupby("key").size().to_dict()

    out = sess.copy()
    out["prefetched"] = [pre.get(k, []) for k in out["key"]]
    out["later_facts"] = [later_facts.get(k, []) for k in out["key"]]
    out["later_recalls"] = [int(n_later.get(k, 0)) for k in out["key"]]
    out["useful"] = [len(set(p) & set(f)) for p, f in zip(out["prefetched"], out["later_facts"])]
    out["false_prefetches"] = out["prefetched"].map(len) - out["useful"]
    out["hit"] = out["useful"] > 0
    out["round_trips_saved"] = [int(saved_rows.get(k, 0)) for k in out["key"]]
    out = out.drop(columns="key")

    n = len(out)
    k = params.k
    n_pre = int(out["prefetched"].map(len).sum())
    saved = out["round_trips_saved"].sum()

    def mean(x):
        return float(np.mean(x)) if n else float("nan")

    metrics = {
        "sessions": int(n),
        "runs": int(len(runs)),
        "hit_rate_at_k": mean(out["hit"]),
        "precision_at_k": mean(out["useful"] / k),
        "prefetch_precision": float(out["useful"].sum() / n_pre) if n_pre else float("nan"),
        "recall_at_k": mean(out["useful"] / out["later_facts"].map(len).clip(lower=1)),
        "recalls_per_session": mean(out["later_recalls"]),
        "prefetched_per_session": mean(out["prefetched"].map(len)),
        "round_trips_saved_per_session": mean(out["round_trips_saved"]),
        "tokens_saved_per_session": mean(out["round_trips_saved"]) * params.tokens_per_recall,
        "latency_saved_ms_per_session": mean(out["round_trips_saved"]) * params.latency_ms_per_recall,
        "round_trips_saved": int(saved),
        "false_prefetches": int(out["false_prefetches"].sum()),
        "false_prefetches_per_session": mean(out["false_prefetches"]),
    }
    if patterns is None:
        patterns = pd.DataFrame()
    return AnticipationReplayResult(sessions=out, runs=runs, patterns=patterns, metrics=metrics, params=params)
