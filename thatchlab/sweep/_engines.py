"""Sweep adapters of the belief, calibration and anticipation replays (omi, ai-memory, mnemo).

Each adapter replays the time-sorted log with the engine's own ``run_*``
function and scores any stretch of it from the replay's per-unit outputs
(reads, judged recalls, prefetched sessions), so validation and test
segments come from one replay per configuration. Bootstrap intervals
resample memories (belief: reads of one memory are one cluster), judged
recalls (calibration) and sessions (anticipation) with the same resamples
for every configuration. The belief adapter re-runs
the event loop only when a non-prior field changes; half-life priors alone
only rescore the reads.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from thatchlab.calibration import derive
from thatchlab.core.errors import InputError
from thatchlab.core.params.anticipation import AnticipationParams
from thatchlab.core.params.belief import BeliefParams
from thatchlab.core.params.calibration import CalibrationParams
from thatchlab.logs.memory import validate_memory_log
from thatchlab.logs.recall import read_recall_log, validate_recall_log
from thatchlab.logs.streams import validate_event_log, validate_recall_stream
from thatchlab.metrics.calibration import brier, calibration_summary, clip_eps
from thatchlab.replay.anticipation import run_anticipation
from thatchlab.replay.belief import run_belief
from thatchlab.replay.calibration import run_calibration
from thatchlab.sweep.registry import EngineSpec, Prepared, frame_evaluator

__all__ = ["belief_spec", "calibration_spec", "anticipation_spec"]


def _sorted(log: pd.DataFrame) -> pd.DataFrame:
    order = np.argsort(log["ts"].to_numpy(), kind="stable")
    return log.iloc[order].reset_index(drop=True)


def _ns(ts: pd.Series) -> np.ndarray:
    return ts.dt.as_unit("ns").array.asi8.astype(np.int64)


def _memory_clusters(ids) -> tuple[np.ndarray, np.ndarray]:
    """Cluster code of every log row by the memory it concerns (a row without one: its own)."""
    raw = np.asarray(ids, dtype=object)
    text = np.array([f"\x00row {i}" if v is None or v != v else str(v) for i, v in enumerate(raw)], dtype=object)
    codes, labels = pd.factorize(text, sort=True)
    return codes.astype(np.int64), np.asarray(labels, dtype=object)


def _loss_rows(y: np.ndarray, p: np.ndarray) -> dict:
    """Per-row log-loss and squared error of forecasts ``p`` for outcomes ``y`` (the rows' sums
    over their count are :func:`~thatchlab.metrics.calibration.log_loss` and ``brier``)."""
    eps = clip_eps(p)
    q = np.clip(p, eps, 1 - eps)
    return {"log_loss": -(y * np.log(q) + (1 - y) * np.log1p(-q)), "brier": (p - y) ** 2}


# -- belief -----------------------------------------------------------------------------------
_BELIEF_LOOP_FIELDS = ("contradiction_factor", "supersede", "min_score", "k")


def _belief_prepare(log, base, embedder=None, params_list=None):
    log = _sorted(validate_memory_log(log))
    target = log["target_memory_id"] if "target_memory_id" in log.columns else pd.Series(None, index=log.index)
    codes, labels = _memory_clusters(target.where(target.notna(), log["memory_id"]))
    return Prepared(log, _ns(log["ts"]), None, _belief_estimator(), clusters=codes, cluster_labels=labels,
                    cluster_unit="memory")


def _belief_estimator():
    return "replay: currency at reads vs still_true (AUC, Brier)"


def _belief_outputs(prepared, params_list):
    base_runs: dict = {}
    for params in params_list:
        key = tuple(getattr(params, f) for f in _BELIEF_LOOP_FIELDS)
        if key not in base_runs:
            base_runs[key] = run_belief(prepared.data, params)
        res = base_runs[key]
        res = res if res.params == params else res.rescore(params)
        ev = res.events
        yield pd.DataFrame({"position": ev["position"].to_numpy(np.int64),
                            "currency": ev["currency"].to_numpy(np.float64),
                            "still_true": ev["still_true"], "useful_now": ev["useful_now"].to_numpy(bool),
                            "memory_id": ev["memory_id"].astype(str).to_numpy(object)})


def _belief_score(frame, prepared, params):
    lab = frame[frame["still_true"].notna() & frame["currency"].notna()]
    y = lab["still_true"].astype(bool).to_numpy()
    c = lab["currency"].to_numpy(np.float64)
    if len(np.unique(y)) == 2:
        from sklearn.metrics import roc_auc_score  # heavy: scikit-learn, only with both labels

        auc = float(roc_auc_score(y, c))
    else:
        auc = float("nan")
    u = lab["useful_now"].to_numpy(bool)
    return {"auc": auc, "brier": brier(y, c),
            "useful_now_precision": float(y[u].mean()) if u.any() else float("nan"),
            "useful_now_recall": float(u[y].mean()) if y.any() else float("nan"),
            "n_labelled": int(len(lab))}


def _belief_ratios(frame) -> dict:
    lab = frame["still_true"].notna().to_numpy() & frame["currency"].notna().to_numpy()
    y = frame["still_true"].to_numpy(dtype=float, na_value=0.0)
    c = np.nan_to_num(frame["currency"].to_numpy(np.float64))
    return {"brier": (np.where(lab, (c - y) ** 2, 0.0), lab.astype(np.float64))}


def belief_spec() -> EngineSpec:
    return EngineSpec("belief", BeliefParams, _belief_prepare,
                      frame_evaluator(_belief_outputs, _belief_score, cluster="memory_id", ratios=_belief_ratios),
                      {"auc": "max", "brier": "min", "useful_now_precision": "max",
                       "useful_now_recall": "max"}, _belief_estimator(), extra_scores=("n_labelled",),
                      ratio_metrics=("brier",), version="belief-2: per-memory sums of the Brier score")


# -- calibration ------------------------------------------------------------------------------
_DAY_NS = 86_400 * 10**9
#: The derive coefficients, at their class defaults (a replay key that ignores them).
_DERIVE_DEFAULTS = {"intercept": 0.5, "atom_bump": 0.1, "corroboration_weight": 0.05, "age_penalty": 0.02,
                    "half_life_days": 30.0, "baseline": 0.5}


def _calibration_prepare(log, base, embedder=None, params_list=None):
    log = read_recall_log(log) if isinstance(log, (str, Path)) else validate_recall_log(log)
    log = _sorted(log)
    codes, labels = _memory_clusters(log["memory_id"])
    return Prepared(log, _ns(log["ts"]), None, _calibration_estimator(), clusters=codes, cluster_labels=labels,
                    cluster_unit="memory")


def _calibration_estimator():
    return "replay: caller and derived confidence vs consumption of sampled recalls"


def _calibration_outputs(prepared, params_list):
    log = prepared.data
    age = (_ns(log["ts"]) - _ns(log["created_at"])) / _DAY_NS
    runs: dict = {}
    for params in params_list:
        # the derive coefficients reach the replay's events only through decay or auto-confidence
        key = (params if params.decay_on_recall or params.auto_confidence
               else params.replace(**_DERIVE_DEFAULTS))
        if key not in runs:
            runs[key] = run_calibration(log, params)
        ev = runs[key].events
        judged = (ev["sampled"].to_numpy(bool) & ev["consumed"].notna().to_numpy())
        derived = np.asarray(derive(age, log["is_atom"].to_numpy(), log["corroboration"].to_numpy(),
                                    **params.derive_kwargs()), dtype=np.float64)
        yield pd.DataFrame({"position": np.flatnonzero(judged).astype(np.int64),
                            "consumed": ev["consumed"].to_numpy(dtype=float, na_value=np.nan)[judged],
                            "caller": ev["confidence_before"].to_numpy(np.float64)[judged],
                            "derived": derived[judged]})


def _calibration_ratios(frame) -> dict:
    y = frame["consumed"].to_numpy(np.float64)
    ok = ~np.isnan(y)
    out = {}
    for name in ("caller", "derived"):
        p = frame[name].to_numpy(np.float64)
        good = ok & ~np.isnan(p)
        rows = _loss_rows(np.where(good, y, 0.0), np.where(good, p, 0.5))
        for k, v in rows.items():
            out[f"{name}_{k}"] = (np.where(good, v, 0.0), good.astype(np.float64))
    return out


def _calibration_score(frame, prepared, params):
    y = frame["consumed"].to_numpy(np.float64)
    out = {}
    for name in ("caller", "derived"):
        summ = calibration_summary(y, frame[name].to_numpy(np.float64))
        for k in ("brier", "log_loss", "ece"):
            out[f"{name}_{k}"] = float(summ[k])
    out["consumption_rate"] = float(y.mean()) if y.size else float("nan")
    out["n_judged"] = int(y.size)
    return out


def calibration_spec() -> EngineSpec:
    metrics = {f"{n}_{k}": "min" for n in ("caller", "derived") for k in ("brier", "log_loss", "ece")}
    return EngineSpec("calibration", CalibrationParams, _calibration_prepare,
                      frame_evaluator(_calibration_outputs, _calibration_score, ratios=_calibration_ratios),
                      metrics, _calibration_estimator(), extra_scores=("consumption_rate", "n_judged"),
                      ratio_metrics=tuple(f"{n}_{k}" for n in ("caller", "derived") for k in ("brier", "log_loss")),
                      version="calibration-2: per-memory sums of Brier and log-loss")


# -- anticipation -----------------------------------------------------------------------------
def _anticipation_prepare(log, base, embedder=None, params_list=None):
    if isinstance(log, dict):
        log = (log.get("events"), log.get("recalls"))
    if not (isinstance(log, (tuple, list)) and len(log) == 2):
        raise InputError("log: the anticipation engine expects (events, recalls) or "
                         "{'events': ..., 'recalls': ...}")
    events = validate_event_log(log[0], source="events")
    recalls = _sorted(validate_recall_stream(log[1], source="recalls"))
    # the recall stream is the time axis: sessions are judged at their first recall, and a
    # session is the resampling unit (every recall row carries its session's code)
    codes, labels = _memory_clusters(recalls["workspace"].astype(str) + "\x1f" + recalls["session"].astype(str))
    return Prepared((events, recalls), _ns(recalls["ts"]), None, _anticipation_estimator(), clusters=codes,
                    cluster_labels=labels, cluster_unit="session")


def _anticipation_estimator():
    return "replay: daily mining, prefetch judged against each session's later recalls"


def _anticipation_outputs(prepared, params_list):
    events, recalls = prepared.data
    keys = (recalls["workspace"].astype(str) + "\x1f" + recalls["session"].astype(str)).to_numpy(object)
    first = pd.Series(np.arange(len(keys)), index=keys).groupby(level=0).min()
    for params in params_list:
        s = run_anticipation(events, recalls, params).sessions
        skey = (s["workspace"].astype(str) + "\x1f" + s["session"].astype(str)).to_numpy(object)
        yield pd.DataFrame({"time_ns": _ns(s["t0"]) if len(s) else np.zeros(0, np.int64),
                            "position": first.reindex(skey).to_numpy(np.int64) if len(s) else np.zeros(0, np.int64),
                            "useful": s["useful"].to_numpy(np.float64),
                            "n_prefetched": s["prefetched"].map(len).to_numpy(np.float64),
                            "n_later": s["later_facts"].map(len).to_numpy(np.float64),
                            "round_trips_saved": s["round_trips_saved"].to_numpy(np.float64),
                            "false_prefetches": s["false_prefetches"].to_numpy(np.float64)})


def _anticipation_score(frame, prepared, params):
    n = len(frame)
    useful = frame["useful"].to_numpy(np.float64)
    n_pre = frame["n_prefetched"].sum()

    def mean(x):
        return float(np.mean(x)) if n else float("nan")

    return {"hit_rate_at_k": mean(useful > 0), "precision_at_k": mean(useful / params.k),
            "prefetch_precision": float(useful.sum() / n_pre) if n_pre else float("nan"),
            "recall_at_k": mean(useful / np.maximum(frame["n_later"].to_numpy(), 1.0)),
            "round_trips_saved_per_session": mean(frame["round_trips_saved"]),
            "false_prefetches_per_session": mean(frame["false_prefetches"]),
            "sessions": int(n)}


def _anticipation_ratios(frame) -> dict:
    """Per session (one row each): the per-session means as ratios of session sums."""
    one = np.ones(len(frame))
    useful = frame["useful"].to_numpy(np.float64)
    return {"hit_rate_at_k": ((useful > 0).astype(np.float64), one),
            "prefetch_precision": (useful, frame["n_prefetched"].to_numpy(np.float64)),
            "recall_at_k": (useful / np.maximum(frame["n_later"].to_numpy(np.float64), 1.0), one),
            "round_trips_saved_per_session": (frame["round_trips_saved"].to_numpy(np.float64), one),
            "false_prefetches_per_session": (frame["false_prefetches"].to_numpy(np.float64), one)}


def anticipation_spec() -> EngineSpec:
    return EngineSpec("anticipation", AnticipationParams, _anticipation_prepare,
                      frame_evaluator(_anticipation_outputs, _anticipation_score, where="position",
                                      ratios=_anticipation_ratios),
                      {"hit_rate_at_k": "max", "precision_at_k": "max", "prefetch_precision": "max",
                       "recall_at_k": "max", "round_trips_saved_per_session": "max",
                       "false_prefetches_per_session": "min"}, _anticipation_estimator(),
                      extra_scores=("sessions",),
                      ratio_metrics=("hit_rate_at_k", "prefetch_precision", "recall_at_k",
                                     "round_trips_saved_per_session", "false_prefetches_per_session"),
                      version="anticipation-2: sessions placed at their first recall's row; per-session sums")
