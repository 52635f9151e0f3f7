"""Replay of a recall log through ai-memory's confidence pipeline.

Each recall touch (in time order) may be sampled into the shadow log (caller
value beside the derived one), then decays the stored confidence when decay
on recall is on; the consumption verdicts of the log form the recall ledger
that backfills outcomes before each calibration sweep. The result holds the
observations, one calibration report per window, the final memory state and
the reliability of caller and derived confidence against consumption.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from thatchlab.calibration import (
    CalibrationReport,
    CalibrationState,
    backfill_recall_outcomes,
    calibrate_from_shadow,
    decayed,
    derive,
    derive_signals,
    freshness_factor,
    recall_features,
    recall_score,
    shadow_sample,
    signals_json,
)
from thatchlab.core.errors import InputError
from thatchlab.core.params import at_least
from thatchlab.core.params.calibration import CalibrationParams
from thatchlab.logs import sort_by_time
from thatchlab.logs.recall import read_recall_log, validate_recall_log
from thatchlab.metrics.calibration import calibration_summary, reliability_curve

__all__ = ["CalibrationResult", "run_calibration", "recall_ledger", "decay_touches", "decay_ranking_study"]

_DAY_NS = 86_400 * 10**9


@dataclass
class CalibrationResult:
    """What :func:`run_calibration` produced.

    Every parameter is kept as the attribute of the same name.

    Parameters
    ----------
    events : pandas.DataFrame
        Per recall touch (log order after a stable sort by ``ts``): the stored confidence before and
        after the touch, whether it was sampled.
    observations : pandas.DataFrame
        The shadow observations, outcomes backfilled from the whole ledger.
    reports : list
        One :class:`CalibrationReport` per window (chronological); ``report`` is the last;
        ``windows`` their rows in long form with ``window_end``.
    reliability : pandas.DataFrame
        Reliability-curve rows for ``caller`` and ``derived`` confidence against consumption on the
        judged sampled touches.
    state : CalibrationState
        The final :class:`CalibrationState` (memories + observations).
    metrics : dict
        Scalars (Brier, ECE, log-loss of caller and derived; counts).
    params : CalibrationParams, default=CalibrationParams()
        The parameters used; ``release`` (a property) is the ai-memory release replayed.
    windows : pandas.DataFrame
        The reports' rows in long form with ``window_end`` first.
    log : pandas.DataFrame, default=None
        The replayed recall log, validated and sorted (what :meth:`derive_rows` reads).
    """

    events: pd.DataFrame
    observations: pd.DataFrame
    reports: list
    windows: pd.DataFrame
    reliability: pd.DataFrame
    state: CalibrationState
    metrics: dict
    params: CalibrationParams = field(default_factory=CalibrationParams)
    log: pd.DataFrame = field(repr=False, default=None)

    def derive_rows(self) -> pd.DataFrame:
        """The judged touches of the replayed log, what :class:`~thatchlab.fit.DeriveWeightsFitter`
        fits (``ts, age_days, is_atom, corroboration, consumed``; see
        :func:`thatchlab.calibration.recall_features`).

        Returns
        -------
        pandas.DataFrame
            Columns ``ts, age_days, is_atom, corroboration, consumed``.

        Raises
        ------
        InputError
            The result does not hold its log.
        """
        if self.log is None:
            raise InputError("derive_rows: this result does not hold its log; replay with run_calibration")
        return recall_features(self.log)

    @property
    def release(self) -> str:
        """The ai-memory release replayed (``params.release``)."""
        return self.params.release

    @property
    def report(self) -> CalibrationReport:
        """The last window's calibration report."""
        return self.reports[-1]

    @property
    def memories(self) -> pd.DataFrame:
        """The final memories table (``state.memories``)."""
        return self.state.memories

    @property
    def tables(self) -> dict:
        """The final state's tables (``state.tables``)."""
        return self.state.tables


def recall_ledger(log: pd.DataFrame) -> pd.DataFrame:
    """The ``recall_observations`` ledger of a validated recall log: its judged touches.

    Parameters
    ----------
    log : pandas.DataFrame
        A validated recall log.

    Returns
    -------
    pandas.DataFrame
        Columns ``recall_id, memory_id, retriever, rank, score, consumed (0/1), observed_at``.

    Examples
    --------
    >>> from thatchlab.synth.recall import RecallWorld
    >>> list(recall_ledger(RecallWorld(n_memories=10, n_recalls=30, seed=1).log).columns)
    ['recall_id', 'memory_id', 'retriever', 'rank', 'score', 'consumed', 'observed_at']
    """
    judged = log.loc[log["consumed"].notna()]
    return pd.DataFrame({
        "recall_id": judged["recall_id"].to_numpy(object),
        "memory_id": judged["memory_id"].to_numpy(object),
        "retriever": judged["retriever"].to_numpy(object) if "retriever" in judged else None,
        "rank": judged["rank"].to_numpy(),
        "score": judged["score"].to_numpy(np.float64),
        "consumed": judged["consumed"].astype(bool).astype(np.int64).to_numpy(),
        "observed_at": judged["ts"].reset_index(drop=True),
    })


def decay_touches(ts_ns, created_ns, memory_codes, start_confidence, half_life_days):
    """Stored confidence before and after each recall touch under decay on recall.

    Rows must be in time order. A touch replaces confidence by ``decayed(c, age)``
    with age since the memory's previous touch (else its ``created_at``), so
    touches compound exactly as production's successive updates do.

    Parameters
    ----------
    ts_ns : array-like of int
        Each touch's time, ns since the epoch, in time order.
    created_ns : array-like of int
        Each touched memory's ``created_at``, ns since the epoch.
    memory_codes : array-like of int
        Each touch's memory, as an integer code.
    start_confidence : array-like of float
        Each touch's memory's starting confidence.
    half_life_days : float
        The decay half-life.

    Returns
    -------
    before, after : numpy.ndarray
        The stored confidence before and after each touch.

    Examples
    --------
    >>> day = 86_400 * 10**9
    >>> before, after = decay_touches([30 * day, 60 * day], [0, 0], [0, 0], [0.8, 0.8], 30.0)
    >>> before.tolist(), after.tolist()
    ([0.8, 0.4], [0.4, 0.2])
    """
    ts_ns = np.asarray(ts_ns, dtype=np.int64)
    raw = np.asarray(memory_codes)
    codes = pd.Series(raw)
    # previous touch of the same memory, in integer nanoseconds (a float shift would round)
    order = np.argsort(raw, kind="stable")
    same = np.zeros(len(raw), dtype=bool)
    same[1:] = raw[order][1:] == raw[order][:-1]
    prev_sorted = np.where(same, np.concatenate(([0], ts_ns[order][:-1])), 0)
    first = np.empty(len(raw), dtype=bool)
    first[order] = ~same
    prev_ns = np.empty(len(raw), dtype=np.int64)
    prev_ns[order] = prev_sorted
    prev_ns = np.where(first, np.asarray(created_ns, dtype=np.int64), prev_ns)
    factor = np.asarray(freshness_factor((ts_ns - prev_ns) / _DAY_NS, half_life_days), dtype=np.float64)
    c0 = np.asarray(start_confidence, dtype=np.float64)
    step = np.where(first, c0 * factor, factor)
    # sequential products ((c0·f1)·f2)·f3 … equal the one-at-a-time updates bit for bit
    after = np.clip(pd.Series(step).groupby(codes).cumprod().to_numpy(), 0.0, 1.0)
    before = pd.Series(after).groupby(codes).shift(1).to_numpy()
    before = np.where(first, c0, before)
    return before, after


#: The most report windows one replay makes: a log's span over ``window_days``, past which a time far
#: from the others (a wrong year) would have the replay run for hours.
MAX_WINDOWS = 20000


def _windows(start_ns, end_ns, window_days):
    if window_days <= 0:
        return [end_ns]
    w = int(round(window_days * _DAY_NS))
    n = max(1, math.ceil((end_ns - start_ns) / w))
    if n > MAX_WINDOWS:
        raise InputError(f"run_calibration: the log spans {(end_ns - start_ns) / _DAY_NS:.0f} days "
                         f"({pd.Timestamp(start_ns, tz='UTC')} to {pd.Timestamp(end_ns, tz='UTC')}), {n} report "
                         f"windows of {window_days:g} days; expected at most {MAX_WINDOWS} (a time far from the "
                         "others is likely a wrong year; or take longer windows)")
    return [end_ns - (n - 1 - k) * w for k in range(n)]


def run_calibration(log, params: CalibrationParams | None = None, sample_rate=None, seed=0):
    """Replay a recall log: shadow sampling, decay on touches, backfill, reports, reliability.

    Parameters
    ----------
    log : recall log DataFrame or path (validated with ``validate_recall_log``).
    params : :class:`CalibrationParams` (derive coefficients, half-life, baseline,
        ``window_days``, ``decay_on_recall``, ``auto_confidence``).
    sample_rate : shadow sampling rate; ``None`` uses ``params.sample_rate`` (1.0).
    seed : seed of the sampling generator (``numpy.random.default_rng(seed)``).

    Returns
    -------
    CalibrationResult

    Notes
    -----
    Touches are processed in ``ts`` order (stable). With ``decay_on_recall`` the
    stored value starts at the memory's first logged ``caller_confidence`` (or
    the derived value at age 0 with ``auto_confidence``) and each touch applies
    :func:`~thatchlab.calibration.decayed` since the previous touch; the shadow
    row keeps the value before the touch. Without decay the stored value is
    the row's logged ``caller_confidence``. Report windows end at the last
    recall and every ``window_days`` before it, back to the first recall; each
    report sees the observations and ledger rows up to its end, as a sweep run
    at that moment would. Reliability uses each sampled touch's own
    ``consumed`` verdict (the report's utility uses production's per-memory
    backfill). GC is not applied; see :func:`~thatchlab.calibration.gc_observations`.

    The report follows ``params.release``: from ``a78a228`` on, each window
    backfills outcomes and its rows carry ``consume_access_divergence``, with a
    memory's ``access_count`` at the window's end taken as the number of its
    logged recall touches up to then (production adds one per touch); a
    ``v0.7.0`` report has neither utility nor divergence and backfills nothing
    (``observations`` and the metrics still use the backfilled outcomes). The
    sweep is the admin one (every observation).

    Raises
    ------
    InputError
        The recall log is empty (or does not validate).

    Examples
    --------
    >>> from thatchlab.synth.recall import RecallWorld
    >>> res = run_calibration(RecallWorld(n_memories=20, n_recalls=200, seed=1).log)
    >>> res.metrics["n_recalls"], res.metrics["n_observations"]
    (200, 200)
    """
    params = CalibrationParams.coerce(params)
    rate = params.sample_rate if sample_rate is None else sample_rate
    log = _recall_log(log)
    ts_ns = log["ts"].array.asi8
    created_ns = log["created_at"].array.asi8
    codes, mem_ids = pd.factorize(log["memory_id"], sort=False)
    kw = params.derive_kwargs()
    start_mem, signals = _starting_confidence(log, codes, params, kw)
    before, after = _stored_confidence(log, ts_ns, created_ns, codes, start_mem[codes], params)
    sampled, obs = _shadow_rows(log, before, rate, seed, params)
    ledger = recall_ledger(log)
    reports, windows = _window_reports(obs, ledger, ts_ns, codes, mem_ids, params)
    final_obs, _ = backfill_recall_outcomes(obs, ledger)
    judged, y, p_caller, p_derived, curves = _reliability(log, sampled, before, ts_ns, created_ns, kw)
    memories = _final_memories(ts_ns, codes, after, mem_ids, signals, params)
    events = pd.DataFrame({"ts": log["ts"], "recall_id": log["recall_id"], "memory_id": log["memory_id"],
                           "confidence_before": before, "confidence_after": after, "sampled": sampled,
                           "consumed": log["consumed"]})
    metrics = _metrics(log, mem_ids, obs, final_obs, reports, judged, y, p_caller, p_derived)
    state = CalibrationState(memories=memories, observations=final_obs, params=params)
    return CalibrationResult(log=log, events=events, observations=final_obs, reports=reports, windows=windows,
                             reliability=curves, state=state, metrics=metrics, params=params)


def _recall_log(log) -> pd.DataFrame:
    """The recall log read or validated, non-empty, stably sorted by ``ts``."""
    if isinstance(log, (str, Path)):
        log = read_recall_log(log)
    else:
        log = validate_recall_log(log)
    if len(log) == 0:
        raise InputError("run_calibration: the recall log is empty; expected at least one recall row")
    return sort_by_time(log, "recall log")


def _starting_confidence(log, codes, params, kw):
    """Each memory's first stored confidence (its first logged caller value, or the derived value at
    age 0 with ``auto_confidence``) and the derive signals behind it."""
    first_rows = pd.Series(np.arange(len(log))).groupby(codes).first().to_numpy()
    if params.auto_confidence:
        sig = derive_signals(0.0, log["is_atom"].to_numpy()[first_rows],
                             log["corroboration"].to_numpy()[first_rows], kw["baseline"], kw["half_life_days"])
        start_mem = np.asarray(derive(0.0, log["is_atom"].to_numpy()[first_rows],
                                      log["corroboration"].to_numpy()[first_rows], **kw), dtype=np.float64)
        signals = np.asarray(signals_json(sig), dtype=object)
    else:
        start_mem = log["caller_confidence"].to_numpy(np.float64)[first_rows]
        signals = np.full(len(first_rows), None, dtype=object)
    return start_mem, signals


def _stored_confidence(log, ts_ns, created_ns, codes, c0, params):
    """The stored confidence before and after every touch."""
    if params.decay_on_recall:
        return decay_touches(ts_ns, created_ns, codes, c0, params.half_life_days)
    if params.auto_confidence:
        return c0, c0
    # without decay the stored value is whatever the caller last wrote
    stored = log["caller_confidence"].to_numpy(np.float64)
    return stored, stored


def _shadow_rows(log, before, rate, seed, params):
    """Which touches are sampled into the shadow log, and the shadow observations they make."""
    rate_c = 0.0 if not np.isfinite(float(rate)) else min(max(float(rate), 0.0), 1.0)
    sampled = np.random.default_rng(seed).random(len(log)) < rate_c
    frame = log.assign(caller_confidence=before)
    # the same draws as shadow_sample(frame, rate, default_rng(seed)), kept aligned with the log rows
    obs = shadow_sample(frame.loc[sampled], 1.0, np.random.default_rng(seed), params=params)
    return sampled, obs


def _window_reports(obs, ledger, ts_ns, codes, mem_ids, params):
    """One calibration report per window, each seeing what a sweep at the window's end would see,
    and their rows in long form with ``window_end`` first."""
    end_ns, start_ns = int(ts_ns.max()), int(ts_ns.min())
    reports, long = [], []
    obs_t = obs["observed_at"].array.asi8
    led_t = ledger["observed_at"].array.asi8
    judges = at_least("ai-memory", params.release, "a78a228")
    touch_order = np.argsort(ts_ns, kind="stable")
    touch_ts, touch_mem = ts_ns[touch_order], codes[touch_order]
    for t_end in _windows(start_ns, end_ns, params.window_days):
        if judges:
            seen, _ = backfill_recall_outcomes(obs.loc[obs_t <= t_end], ledger.loc[led_t <= t_end])
            # each recall touch adds one to the memory's access_count, as production's touch does
            upto = int(np.searchsorted(touch_ts, t_end, side="right"))
            touched = pd.DataFrame({"id": np.asarray(mem_ids, dtype=object),
                                    "access_count": np.bincount(touch_mem[:upto], minlength=len(mem_ids))})
        else:                           # v0.7.0 had no backfill and no access evidence
            seen, touched = obs.loc[obs_t <= t_end], None
        rep = calibrate_from_shadow(seen, pd.Timestamp(t_end, tz="UTC"), days=params.window_days,
                                    memories=touched, release=params.release)
        reports.append(rep)
        long.append(rep.to_frame().assign(window_end=pd.Timestamp(t_end, tz="UTC")))
    windows = pd.concat(long, ignore_index=True)
    return reports, windows[["window_end"] + [c for c in windows.columns if c != "window_end"]]


def _reliability(log, sampled, before, ts_ns, created_ns, kw):
    """Caller and derived confidence against each judged sampled touch's own ``consumed`` verdict."""
    judged = sampled & log["consumed"].notna().to_numpy()
    y = log["consumed"].to_numpy(dtype=float, na_value=np.nan)[judged]
    p_caller = np.asarray(before)[judged]
    p_derived = np.asarray(derive((ts_ns - created_ns) / _DAY_NS, log["is_atom"].to_numpy(),
                                  log["corroboration"].to_numpy(), **kw))[judged]
    curves = pd.concat([reliability_curve(y, p_caller).assign(confidence="caller"),
                        reliability_curve(y, p_derived).assign(confidence="derived")], ignore_index=True)
    curves = curves[["confidence"] + [c for c in curves.columns if c != "confidence"]]
    return judged, y, p_caller, p_derived, curves


def _final_memories(ts_ns, codes, after, mem_ids, signals, params) -> pd.DataFrame:
    """The memories table after the last touch: confidence, its source, signals and decay time."""
    last_ns = pd.Series(ts_ns).groupby(codes).max().to_numpy()
    final_conf = pd.Series(after).groupby(codes).last().to_numpy()
    if params.decay_on_recall:
        source = np.full(len(mem_ids), "decayed", dtype=object)
        decayed_at = pd.Series(pd.to_datetime(last_ns, utc=True)).dt.as_unit("ns")
        signals = np.full(len(mem_ids), None, dtype=object)
    else:
        source = np.full(len(mem_ids), "auto_derived" if params.auto_confidence else "caller_provided",
                         dtype=object)
        decayed_at = pd.Series(pd.NaT, index=range(len(mem_ids)), dtype="datetime64[ns, UTC]")
    return pd.DataFrame({"id": np.asarray(mem_ids, dtype=object), "confidence": final_conf,
                         "confidence_source": source, "confidence_signals": signals,
                         "confidence_decayed_at": decayed_at})


def _metrics(log, mem_ids, obs, final_obs, reports, judged, y, p_caller, p_derived) -> dict:
    """Counts, consumption rates and the Brier, ECE and log-loss of caller and derived confidence."""
    cal_caller = calibration_summary(y, p_caller)
    cal_derived = calibration_summary(y, p_derived)
    n_judged_obs = int(final_obs["recall_outcome"].notna().sum())
    n_consumed_obs = int((final_obs["recall_outcome"] == "consumed").sum())
    metrics = {
        "n_recalls": int(len(log)), "n_memories": int(len(mem_ids)), "n_observations": int(len(obs)),
        "n_judged": int(judged.sum()),
        "consumption_rate": float(np.mean(y)) if y.size else float("nan"),
        "consumption_utility": n_consumed_obs / n_judged_obs if n_judged_obs else float("nan"),
        "report_groups": int(len(reports[-1].rows)),
        "mean_caller_confidence": float(np.mean(p_caller)) if y.size else float("nan"),
        "mean_derived_confidence": float(np.mean(p_derived)) if y.size else float("nan"),
    }
    for name, summ in (("caller", cal_caller), ("derived", cal_derived)):
        for k in ("brier", "ece", "log_loss"):
            metrics[f"{name}_{k}"] = float(summ[k])
    return metrics


def decay_ranking_study(log, half_lives=(7.0, 15.0, 30.0, 60.0, 120.0), confidence_weight=2.0):
    """What a decay half-life does to recall ranking, per half-life.

    Each logged row's text score is ``score − confidence_weight × caller_confidence``;
    under decay the memory ranks by ``text + confidence_weight × decayed(caller,
    age, half_life)`` with ``age = ts − created_at`` (the compounded decay of all
    earlier touches). Per half-life: the share of recalls (with ≥ 2 memories)
    whose top memory changes against no decay, and the mean age in days of the
    top memory (``inf`` half-life = no decay).

    Returns
    -------
    pandas.DataFrame
        Columns ``half_life_days, top1_changed, mean_top1_age_days, n_recalls``.

    Parameters
    ----------
    log : pandas.DataFrame or str or os.PathLike
        A recall log (or its path).
    half_lives : sequence of float, default=(7.0, 15.0, 30.0, 60.0, 120.0)
        The half-lives in days (``inf`` for no decay).
    confidence_weight : float, default=2.0
        The weight of confidence in the ranking score.

    Examples
    --------
    >>> from thatchlab.synth.recall import RecallWorld
    >>> s = decay_ranking_study(RecallWorld(n_memories=30, n_recalls=300, seed=1).log, (30.0, float("inf")))
    >>> float(s["top1_changed"].iloc[-1]), int(s["n_recalls"].iloc[0])
    (0.0, 100)
    """
    log = validate_recall_log(log) if not isinstance(log, (str, Path)) else read_recall_log(log)
    log = log.loc[log["score"].notna()].reset_index(drop=True)
    multi = log.groupby("recall_id")["memory_id"].transform("size").to_numpy() >= 2
    log = log.loc[multi].reset_index(drop=True)
    caller = log["caller_confidence"].to_numpy(np.float64)
    text = log["score"].to_numpy(np.float64) - confidence_weight * caller
    age = (log["ts"].array.asi8 - log["created_at"].array.asi8) / _DAY_NS
    rid = log["recall_id"].to_numpy(object)

    def top(score):
        order = pd.DataFrame({"r": rid, "s": score, "i": np.arange(len(score))}).sort_values(
            ["r", "s", "i"], ascending=[True, False, True], kind="stable")
        return order.groupby("r", sort=True)["i"].first().to_numpy()

    base_top = top(np.asarray(recall_score(text, caller, confidence_weight)))
    rows = []
    for hl in half_lives:
        conf = caller if not np.isfinite(hl) else np.asarray(decayed(caller, age, hl))
        t = top(np.asarray(recall_score(text, conf, confidence_weight)))
        rows.append((float(hl), float(np.mean(t != base_top)) if len(t) else float("nan"),
                     float(np.mean(age[t])) if len(t) else float("nan"), int(len(t))))
    return pd.DataFrame(rows, columns=["half_life_days", "top1_changed", "mean_top1_age_days", "n_recalls"])
