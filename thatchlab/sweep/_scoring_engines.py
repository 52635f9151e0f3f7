"""Sweep adapter of the prediction and behavior replays (thatch).

``prepare`` builds one vectorised-replay plan per dedup rule in the sweep
(each text embedded once, each cosine matrix computed once per
``dedup_cosine``); the plans hold vectors, never the embedding model, so
Dask workers need no model. Configurations that differ only in K, P0 and
the soft weight are scored by broadcasting each item's count history over
all of them at once (the prequential forecast metrics). The regime
metrics broadcast too: configurations that differ only in the threshold,
the strong bar (confidence, evidence) or the conflict margin share one
candidate pass at the group's lowest threshold (``plan.regime_table``: the
top-``top_matchers`` cut comes before the threshold, so a higher threshold
only drops candidate rows); each distinct threshold then redoes the item
selection as group operations on that table, and every strong bar and
margin of that threshold is a column of one boolean matrix.

Every configuration also reports, per segment, the per-session sums of its
ratio metrics (log-loss and Brier are weighted means, the regime rates are
count ratios), so a sweep can resample sessions once and score every
configuration on the same resamples.
"""

from __future__ import annotations

import weakref

import numpy as np
import pandas as pd

from thatchlab.core.errors import InputError, warn
from thatchlab.core.jsfmt import js_round
from thatchlab.core.params.scoring import ScoringParams
from thatchlab.embed import default_embedder
from thatchlab.logs import sort_by_time
from thatchlab.metrics.calibration import calibration_bins, clip_eps
from thatchlab.metrics.scoring import METRIC_SOFT_WEIGHT, prequential_scores, regime_rates
from thatchlab.replay.scoring import check_log
from thatchlab.replay.scoring import prepare as plan_for
from thatchlab.sweep.registry import CLUSTERS_KEY, EngineSpec, Prepared, metric_list
from thatchlab.sweep.resampling import (
    bootstrap_interval,
    cluster_resamples,
    cluster_sums,
    percentile_interval,
    ratio_resamples,
    segment_clusters,
    segment_stream,
)

__all__ = ["prediction_spec", "behavior_spec", "FORECAST_METRICS", "REGIME_METRICS", "forecast_matrix",
           "forecast_scores", "forecast_cluster_sums", "regime_cluster_sums", "regimes_from_nudges",
           "SENSITIVITY", "RATIO_METRICS", "COUNTS", "METRIC_SOFT_WEIGHT"]

#: Prequential scores of the confidence forecasts (depend on K, P0, soft weight only).
FORECAST_METRICS = {"log_loss": "min", "brier": "min", "ece": "min"}
#: Nudge outcomes (depend on thresholds and regime parameters too).
REGIME_METRICS = {"interruption_rate": "min", "wrong_silent_follow_rate": "min", "coverage": "max",
                  "nudge_net_rate": "max"}
#: The metrics that are ratios of per-session sums (ECE is not: its bins are not additive).
RATIO_METRICS = ("log_loss", "brier", "interruption_rate", "wrong_silent_follow_rate", "coverage",
                 "nudge_net_rate")

#: The weight of a soft signal in the weighted log-loss and Brier of *every* configuration:
#: production's default soft weight. A configuration's own ``soft_weight`` moves its forecasts
#: (a soft signal counts ``soft_weight`` of a disconfirm in the posterior), never the metric's
#: weights, so every configuration is scored on one metric and differences between them are
#: differences in forecasts alone (scoring each under its own weight would compare different
#: metrics: ``soft_weight = 0`` would simply drop the soft rows it forecasts worst). One
#: definition, :data:`thatchlab.metrics.scoring.METRIC_SOFT_WEIGHT`, which a replay's metrics use too.

_DEDUP = ("dedup_cosine", "dedup_scope", "release")  # the write rule (replay's WRITE_RULE)
_FORECAST_MOVERS = ("k", "p0", "soft_weight", *_DEDUP)
# what decides which items a message surfaces (and so whether it is skipped, none, or has items)
_NUDGE_MOVERS = ("threshold", "top_matchers", "max_items", "noise_floor", "min_prompt_chars",
                 "min_confidence", "k", "p0", "soft_weight", *_DEDUP)
_STRONG_MOVERS = ("strong_confidence", "strong_evidence", "conflict_margin")
#: Which parameters can move each metric. Forecasts are the stored confidences before each
#: signal: the count history (dedup rule) and the posterior's K, P0 and soft weight, never
#: a read threshold (the soft weight moves forecasts only: the metrics weigh soft rows
#: :data:`METRIC_SOFT_WEIGHT` for every configuration). Coverage counts messages that surfaced an item, whatever their regime;
#: the strong/ambiguous split (interruptions, silent follows) also moves with the strong bar.
#: ``query_threshold`` moves no scored metric: queries are not messages.
SENSITIVITY = {**{m: _FORECAST_MOVERS for m in ("log_loss", "brier", "ece")},
               "coverage": _NUDGE_MOVERS,
               "nudge_net_rate": _NUDGE_MOVERS,
               "interruption_rate": _NUDGE_MOVERS + _STRONG_MOVERS,
               "wrong_silent_follow_rate": _NUDGE_MOVERS + _STRONG_MOVERS}
#: Which parameters change the rows a metric counts: ``min_prompt_chars`` decides which messages
#: are skipped, so every per-message rate counts other messages under another value (a shorter
#: bar adds short prompts to the denominator); never identified by those metrics.
DENOMINATORS = {m: ("min_prompt_chars",) for m in ("coverage", "nudge_net_rate", "interruption_rate",
                                                   "wrong_silent_follow_rate")}
_FORECAST_ESTIMATOR = "prequential: stored confidence before each signal as a forecast of confirm"
_REGIME_ESTIMATOR = "direct: logged feedback attributed to the replayed nudges"
_SIGNALS = ("confirm", "disconfirm", "soft")


class _MemoEmbedder:
    """Embeds each (kind, text) once across the plans of one sweep."""

    def __init__(self, inner):
        self._inner, self._memo = inner, {}
        self.name = getattr(inner, "name", None)
        self.dim = getattr(inner, "dim", None)

    def _get(self, texts, kind, fn):
        todo = [t for t in dict.fromkeys(texts) if (kind, t) not in self._memo]
        if todo:
            for t, v in zip(todo, np.asarray(fn(todo))):
                self._memo[(kind, t)] = v
        return np.stack([self._memo[(kind, t)] for t in texts]) if texts else np.zeros((0, self.dim or 0))

    def embed_queries(self, texts):
        return self._get(list(texts), "query", self._inner.embed_queries)

    def embed_passages(self, texts):
        return self._get(list(texts), "passage", self._inner.embed_passages)

    def __getattr__(self, name):
        return getattr(self._inner, name)


def _sessions(log):
    """Cluster code of every log row: its ``session`` (a row without one is its own cluster)."""
    raw = log["session"].to_numpy(object) if "session" in log.columns else np.full(len(log), None, object)
    text = np.array([f"\x00row {i}" if v is None or v != v else str(v) for i, v in enumerate(raw)], dtype=object)
    codes, labels = pd.factorize(text, sort=True)
    return codes.astype(np.int64), np.asarray(labels, dtype=object)


def session_parents(log, codes, labels) -> dict | None:
    """``{"user": {session label: user}}`` when the log has a ``user`` column naming one user per
    session (sessions nested in users); None without users. A session that names two users
    cannot be nested: the sweep warns and records no user level."""
    if "user" not in log.columns:
        return None
    users = log["user"].to_numpy(object)
    known = np.array([u is not None and u == u for u in users], dtype=bool)
    if not known.any():
        return None
    parents: dict = {}
    crossed = set()
    for code, user in zip(codes[known], users[known]):
        label = str(labels[code])
        if parents.setdefault(label, str(user)) != str(user):
            crossed.add(label)
    for code in np.unique(codes[~known]):
        parents.setdefault(str(labels[code]), f"\x00no user: {labels[code]}")  # its own cluster
    if crossed:
        warn(f"sweep: {len(crossed)} session(s) name more than one user (the first: "
             f"{sorted(crossed)[0]!r}), so sessions are not nested in users; decisions cluster by session",
             UserWarning)
        return None
    return {"user": parents}


def _rule(params):
    return (float(params.dedup_cosine), params.dedup_scope, params.release)


def _make_prepare(engine: str):
    def prepare(log, base, embedder=None, params_list=None):
        log = sort_by_time(check_log(log), "interaction log")  # once for every plan below
        if "surfaced" in log.columns and log["surfaced"].notna().any():
            warn("sweep: this log records what its logging system surfaced (a closed-loop log); the "
                          "sweep's feedback metrics (interruption and wrong-silent-follow rates, coverage, "
                          "nudge_net_rate) use the logged feedback as replayed (the direct estimator), which "
                          "assumes feedback does not depend on what was surfaced; compare with "
                          "metrics.counterfactual_metrics (replay matching, SNIPS) before deciding on them",
                          UserWarning)
        rules = dict.fromkeys([_rule(base)] + [_rule(p) for p in (params_list or [])])
        if embedder is None:
            embedder = default_embedder()
        memo = _MemoEmbedder(embedder)
        plans = {rule: plan_for(log, engine, embedder=memo, dedup_cosine=rule[0], dedup_scope=rule[1],
                                release=rule[2], validated=True)
                 for rule in rules}
        times = log["ts"].dt.as_unit("ns").array.asi8.astype(np.int64)
        name = next(iter(plans.values())).embedder_name
        codes, labels = _sessions(log)
        # the lowest threshold of each nudge group, so every chunk of it builds one table
        floors: dict = {}
        for p in params_list or ():
            key = _nudge_key(p)
            floors[key] = min(floors.get(key, np.inf), float(p.threshold))
        return Prepared({"plans": plans, "log": log, "floors": floors}, times, name, _FORECAST_ESTIMATOR,
                        clusters=codes, cluster_labels=labels, cluster_unit="session",
                        cluster_parents=session_parents(log, codes, labels))

    return prepare


def forecast_matrix(plan, params_list):
    """Prequential forecasts of every confirm/disconfirm/soft signal under many settings at once.

    Replays the plan's per-item count history with ``d = d_hard + W·n_soft``
    and the posterior ``(c + K·P0) / (c + d + K)`` for all configurations as
    columns (the same arithmetic, element by element, as one replay).
    Returns ``(positions, item_ids, signals, F)`` with ``F`` of shape
    ``(n_signals, n_configs)``: the stored confidence just before each signal.
    """
    k = np.array([p.k for p in params_list], dtype=np.float64)
    p0 = np.array([p.p0 for p in params_list], dtype=np.float64)
    w = np.array([p.soft_weight for p in params_list], dtype=np.float64)
    hist, writes = plan.history, plan.writes
    c = hist.confirms.copy()
    d = hist.disconfirms[:, None] + w[None, :] * hist.softs[:, None]
    for r in range(1, int(hist.step.max()) + 1 if len(hist.step) else 0):
        j = np.flatnonzero(hist.step == r)
        c[j] = c[j - 1] + c[j]
        d[j] = d[j - 1] + d[j]
    conf = (c[:, None] + k * p0) / (c[:, None] + d + k)
    conf = np.where(np.isnan(hist.fixed_confidence)[:, None], conf, hist.fixed_confidence[:, None])
    before = writes.entry_before
    sel = (before >= 0) & np.isin(writes.signal.astype(str), _SIGNALS)
    return (writes.position[sel], writes.item_id[sel], writes.signal[sel],
            conf[before[sel]] if sel.any() else np.zeros((0, len(params_list))))


def forecast_scores(y, soft, F, soft_weights, n_bins: int = 10) -> dict:
    """Weighted log-loss, Brier and ECE of every column of forecasts ``F`` at once.

    ``y`` is 1 for confirm and 0 otherwise; a soft row weighs ``soft_weights[j]``
    in column ``j``, other rows 1 (the sweep passes :data:`METRIC_SOFT_WEIGHT` for every
    column: one metric for every configuration). Same definitions as
    :func:`thatchlab.metrics.scoring.prequential_scores` (log-loss with
    forecasts clipped to ``[eps, 1 − eps]``, ``eps`` the machine epsilon of
    ``F``'s dtype, as scikit-learn and :func:`thatchlab.metrics.calibration.log_loss` clip; ECE over scikit-learn's ``n_bins`` uniform bins,
    ``Σ_b (W_b / W)·|observed_b − mean_forecast_b|``), vectorised over
    configurations; values agree with it up to floating-point summation order.
    Returns arrays (one value per column) keyed by metric.
    """
    n, m = F.shape
    if n == 0:
        nan = np.full(m, np.nan)
        return {"n_forecasts": np.zeros(m, dtype=np.int64), "log_loss": nan, "brier": nan.copy(),
                "ece": nan.copy()}
    y = np.asarray(y, dtype=np.float64)[:, None]
    w = np.where(np.asarray(soft, dtype=bool)[:, None], np.asarray(soft_weights, dtype=np.float64)[None, :], 1.0)
    wsum = w.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        eps = clip_eps(F)
        p = np.clip(F, eps, 1 - eps)
        ll = -(y * np.log(p) + (1 - y) * np.log1p(-p))
        log_loss = (ll * w).sum(axis=0) / wsum
        brier = np.round(((y - F) ** 2 * w).sum(axis=0) / wsum, 15)

        # scikit-learn's calibration_curve bins, as metrics.ece uses
        b = calibration_bins(F.ravel(), n_bins=n_bins)[1].reshape(F.shape)
        flat = (b + n_bins * np.arange(m)[None, :]).ravel()
        wb = np.bincount(flat, weights=w.ravel(), minlength=n_bins * m).reshape(m, n_bins)
        wp = np.bincount(flat, weights=(w * F).ravel(), minlength=n_bins * m).reshape(m, n_bins)
        wy = np.bincount(flat, weights=(w * y).ravel(), minlength=n_bins * m).reshape(m, n_bins)
        gap = np.where(wb > 0, np.abs(wy / wb - wp / wb), 0.0)
        ece = np.round((wb / wsum[:, None] * gap).sum(axis=1), 12)
    return {"n_forecasts": np.full(m, n, dtype=np.int64), "log_loss": log_loss, "brier": brier, "ece": ece}


def _forecast_scores(frame, soft_weight):
    return prequential_scores(frame, soft_weight)


def _regime_scores(outcomes):
    rates = regime_rates(outcomes)
    return {k: rates[k] for k in REGIME_METRICS} | {"n_messages": rates["n_messages"]}


_REGIME_FIELDS = ("strong_confidence", "strong_evidence", "conflict_margin")
# broadcast within a regime group: the message threshold, the strong bar and the margin
# (``query_threshold`` moves no scored metric: queries are not messages)
_BROADCAST_FIELDS = ("threshold", "query_threshold", *_REGIME_FIELDS)


def _nudge_key(params) -> tuple:
    """The fields a regime group shares (every field but :data:`_BROADCAST_FIELDS`)."""
    return tuple((f, v) for f, v in params.to_dict().items() if f not in _BROADCAST_FIELDS)


def regimes_from_nudges(events: pd.DataFrame, nudges: pd.DataFrame, params) -> np.ndarray:
    """The regime of every event under ``params``'s regime fields, from a replay's nudges.

    The nudges of a replay do not depend on ``strong_confidence``,
    ``strong_evidence`` or ``conflict_margin``; only the classification does:
    a message is ``strong`` when its top item's stored
    confidence ≥ ``strong_confidence``, its evidence count ≥
    ``strong_evidence`` and no other surfaced item from the same matcher
    scores within ``conflict_margin`` (compared in integer thousandths);
    other messages with items are ``ambiguous``; ``none`` and ``skipped``
    stay. Returns the new ``regime`` column (object array, events order).
    """
    reg = events["regime"].to_numpy(object).copy()
    reg[reg == "strong"] = "ambiguous"
    is_msg = (events["kind"] == "message").to_numpy()
    if len(nudges) == 0:
        return reg
    pos = nudges["position"].to_numpy(np.int64)
    rank = nudges["rank"].to_numpy(np.int64)
    matcher = nudges["matcher_id"].to_numpy(object)
    k = js_round(nudges["score"].to_numpy(np.float64) * 1000).astype(np.int64)
    top = rank == 0
    top_k = pd.Series(k[top], index=pos[top])
    top_m = pd.Series(matcher[top], index=pos[top])
    tk = top_k.reindex(pos).to_numpy()
    tm = top_m.reindex(pos).to_numpy(object)
    margin = int(js_round(params.conflict_margin * 1000))
    competing = np.unique(pos[(rank > 0) & (matcher == tm) & (tk - k <= margin)])
    strong = (top & (nudges["stored_confidence"].to_numpy(np.float64) >= params.strong_confidence)
              & (nudges["evidence_count"].to_numpy(np.int64) >= params.strong_evidence)
              & ~np.isin(pos, competing))
    at = pos[strong]
    at = at[is_msg[at]]
    reg[at] = "strong"
    return reg


def forecast_cluster_sums(y, soft, F, soft_weights, codes, n_clusters) -> dict:
    """Per-cluster sums of the weighted log-loss and Brier of every column of ``F``.

    With row weights ``w_ij`` (``soft_weights[j]`` for a soft row, else 1),
    ``num_log_loss[j, c] = Σ_{i∈c} w_ij·(−y_i ln p_ij − (1−y_i) ln(1−p_ij))``
    (``p`` clipped as in :func:`forecast_scores`), ``num_brier[j, c] = Σ_{i∈c}
    w_ij (y_i − F_ij)²`` and ``den[j, c] = Σ_{i∈c} w_ij`` (one array shared by
    both), so ``Σ_c num / Σ_c den`` is the segment's score.
    Returns ``{metric: (num, den)}`` with arrays ``(n_configs, n_clusters)``.

    >>> out = forecast_cluster_sums([1, 0], [False, True], np.array([[0.8], [0.4]]), [0.5], [0, 1], 2)
    >>> num, den = out["brier"]
    >>> num.round(6).tolist(), den.tolist()
    ([[0.04, 0.08]], [[1.0, 0.5]])
    """
    F = np.asarray(F, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)[:, None]
    w = np.where(np.asarray(soft, dtype=bool)[:, None], np.asarray(soft_weights, dtype=np.float64)[None, :],
                 1.0) * np.ones((1, F.shape[1]))
    eps = clip_eps(F)
    p = np.clip(F, eps, 1 - eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        ll = -(y * np.log(p) + (1 - y) * np.log1p(-p))
    den = cluster_sums(codes, n_clusters, w)
    return {"log_loss": (cluster_sums(codes, n_clusters, ll * w), den),
            "brier": (cluster_sums(codes, n_clusters, (y - F) ** 2 * w), den)}


def regime_cluster_sums(outcomes: pd.DataFrame, codes, n_clusters) -> dict:
    """Per-cluster numerators and denominators of the regime rates of :func:`regime_outcomes`.

    ``interruption_rate``: ambiguous + none over non-skipped messages;
    ``wrong_silent_follow_rate``: wrong over right + wrong silent follows;
    ``coverage``: strong + ambiguous over non-skipped messages;
    ``nudge_net_rate``: top items confirmed minus contradicted over non-skipped
    messages (the definitions of :func:`thatchlab.metrics.scoring.regime_rates`).
    Returns ``{metric: (num, den)}``, arrays ``(n_clusters,)``.
    """
    reg = outcomes["regime"].to_numpy(object)
    oc = outcomes["outcome"].to_numpy(object)
    live = (reg != "skipped").astype(np.float64)
    follows = np.isin(oc, ["follow_right", "follow_wrong"]).astype(np.float64)

    def s(x):
        return cluster_sums(codes, n_clusters, np.asarray(x, dtype=np.float64))

    live_c = s(live)
    top = (outcomes["top_outcome"].to_numpy(object) if "top_outcome" in outcomes.columns
           else np.full(len(reg), None, dtype=object))
    net = (top == "confirm").astype(np.float64) - np.isin(top, ["disconfirm", "soft"]).astype(np.float64)
    return {"interruption_rate": (s(np.isin(reg, ["ambiguous", "none"])), live_c),
            "wrong_silent_follow_rate": (s(oc == "follow_wrong"), s(follows)),
            "coverage": (s(np.isin(reg, ["strong", "ambiguous"])), live_c),
            "nudge_net_rate": (s(net * live), live_c)}


def _local(prepared, universe, positions):
    """Index of each position's cluster within a segment's cluster universe."""
    return np.searchsorted(universe, prepared.clusters[np.asarray(positions, dtype=np.int64)])


def _ratio_interval(num, den, W, alpha):
    """Percentile intervals of every configuration's ratio under the shared resamples ``W``."""
    draws = ratio_resamples(num, den, W)
    return [percentile_interval(draws[:, j], alpha) for j in range(draws.shape[1])]


def _events_sums(prepared, universe, events, soft_weight):
    """Per-cluster log-loss and Brier sums of one replay's forecasts (the prequential rows)."""
    sig = events["signal"].to_numpy(object)
    f = events["forecast"].to_numpy(np.float64)
    sel = np.isin(sig, _SIGNALS) & np.isfinite(f)
    codes = _local(prepared, universe, events["position"].to_numpy(np.int64)[sel])
    out = forecast_cluster_sums(sig[sel] == "confirm", sig[sel] == "soft", f[sel][:, None], [soft_weight],
                                codes, len(universe))
    den = out["log_loss"][1][0]  # one object for both, so ClusterStats stacks it once
    return {m: (num[0], den) for m, (num, _) in out.items()}


def _evaluate(prepared, params_list, segments, metric=None, boot=None):
    """Score ``params_list`` on ``segments``, broadcasting over configurations.

    Forecast metrics only: K, P0 and the soft weight broadcast over one count
    history. Regime metrics: one candidate table per group of configurations
    sharing every field but the threshold, strong bar and margin
    (:func:`_regime_rows`).

    Each row also carries, under :data:`~thatchlab.sweep.registry.CLUSTERS_KEY`,
    ``{(metric, segment): (num, den)}``: per-session sums of the ratio
    metrics over the segment's sessions (:func:`segment_clusters`). With
    ``boot``, intervals of the requested metrics use the resamples
    :func:`cluster_resamples` ``(n_sessions, n, seed, segment)``, the same
    for every configuration.
    """
    wanted = metric_list(metric) if metric is not None else ()
    plans = prepared.data["plans"]
    rows = [{CLUSTERS_KEY: {}} for _ in params_list]
    universes = {seg.name: segment_clusters(prepared, seg) for seg in segments}
    resamples = ({seg.name: cluster_resamples(len(universes[seg.name]), boot["n"], boot["seed"],
                                              segment_stream(seg.name)) for seg in segments}
                 if boot else {})
    by_rule: dict = {}
    for i, p in enumerate(params_list):
        by_rule.setdefault(_rule(p), []).append(i)
    for rule, idx in by_rule.items():
        if rule not in plans:
            raise InputError(f"dedup_cosine={rule[0]}, dedup_scope={rule[1]!r}, release={rule[2]!r} was not "
                             "prepared; search the write rule with search='grid' or 'random'")
        plan = plans[rule]
        if all(m in FORECAST_METRICS for m in wanted):
            chunk = [params_list[i] for i in idx]
            pos, items, sig, F = forecast_matrix(plan, chunk)
            sw = [METRIC_SOFT_WEIGHT] * len(chunk)  # one metric: fixed weights (forecasts use each own)
            y, soft = sig == "confirm", sig == "soft"
            for seg in segments:
                inside = seg.mask(pos)
                scores = forecast_scores(y[inside], soft[inside], F[inside], sw)
                universe = universes[seg.name]
                codes = _local(prepared, universe, pos[inside])
                sums = forecast_cluster_sums(y[inside], soft[inside], F[inside], sw, codes, len(universe))
                bounds = {m: _ratio_interval(*sums[m], resamples[seg.name], boot["alpha"])
                          for m in wanted if boot and m in sums}
                for col, i in enumerate(idx):
                    rows[i].update({f"{seg.name}_{k}": v[col].item() for k, v in scores.items()})
                    rows[i][CLUSTERS_KEY].update({(m, seg.name): (num[col], den[col])
                                                  for m, (num, den) in sums.items()})
                    for m in wanted if boot else ():
                        if m in bounds:
                            lo, hi = bounds[m][col]
                        else:  # ECE: resample the sessions of the segment's forecasts
                            part = pd.DataFrame({"position": pos[inside], "item_id": items[inside],
                                                 "signal": sig[inside], "forecast": F[inside, col],
                                                 "cluster": codes})
                            lo, hi = bootstrap_interval(
                                part, lambda d, w=sw[col], m=m: _forecast_scores(d, w)[m], n=boot["n"],
                                alpha=boot["alpha"], seed=boot["seed"], cluster="cluster",
                                stream=segment_stream(seg.name))
                        rows[i][f"{seg.name}_{m}_lo"], rows[i][f"{seg.name}_{m}_hi"] = lo, hi
            for i in idx:
                rows[i]["estimator"] = _FORECAST_ESTIMATOR
            continue
        _regime_rows(prepared, plan, params_list, idx, segments, universes, resamples, wanted, boot, rows)
    return rows


# plan -> (nudge key, floor, RegimeTable, history values): the last group's table, reused by
# the next chunks of the same group
_TABLES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _regime_table(prepared, plan, p, thresholds):
    """The candidate table of ``p``'s nudge group down to the lowest of ``thresholds`` (and of
    the group's thresholds known at prepare time), with the history values under ``p``."""
    key = _nudge_key(p)
    floor = min(min(thresholds), prepared.data.get("floors", {}).get(key, np.inf))
    hit = _TABLES.get(plan)
    if hit is not None and hit[0] == key and hit[1] <= floor:
        return hit[2], hit[3]
    values = plan.history.replay(p)
    table = plan.regime_table(p, floor, values)
    _TABLES[plan] = (key, floor, table, values)
    return table, values


def _forecast_events(plan, values) -> pd.DataFrame:
    """The columns of a replay's events the forecast scores read (every log row, position
    order): session, item id, signal and the stored confidence before each signal."""
    log, w = plan.log, plan.writes
    n = len(log)
    session = log["session"].astype(object).where(log["session"].notna(), None).to_numpy(object)
    item_id = np.full(n, None, dtype=object)
    signal = np.full(n, None, dtype=object)
    item_id[w.position], signal[w.position] = w.item_id, w.signal
    forecast = np.full(n, np.nan)
    before = w.entry_before
    forecast[w.position[before >= 0]] = values.confidence[before[before >= 0]]
    return pd.DataFrame({"position": np.arange(n, dtype=np.int64), "session": session, "item_id": item_id,
                         "signal": signal, "forecast": forecast})


def _rate(num: int, den: int) -> float:
    return num / den if den else float("nan")


def _regime_rows(prepared, plan, params_list, idx, segments, universes, resamples, wanted, boot, rows):
    """Fill ``rows[i]`` for the configurations ``idx`` of one plan, on regime metrics.

    Groups share every field but the threshold, strong bar and margin: one candidate table
    and one forecast pass per group, one :meth:`RegimeTable.tops` per distinct threshold,
    then every strong bar and margin of that threshold at once (a boolean column each).
    Sums of 0/1 per session are exact, so the counts and rates equal a replay's.
    """
    reads = plan.reads
    msg = np.flatnonzero(~reads.is_query)
    msg_pos = reads.position[msg]
    groups: dict = {}
    for i in idx:
        groups.setdefault(_nudge_key(params_list[i]), []).append(i)
    for group in groups.values():
        p_ = params_list[group[0]]
        table, values = _regime_table(prepared, plan, p_, [params_list[i].threshold for i in group])
        events = _forecast_events(plan, values)
        fixed = {seg.name: _segment_fixed(prepared, seg, universes[seg.name], events, table, msg, msg_pos,
                                          wanted, boot) for seg in segments}
        by_threshold: dict = {}
        for i in group:
            by_threshold.setdefault(params_list[i].threshold, []).append(i)
        for t, sub in by_threshold.items():
            tops = table.tops(t, p_.max_items)
            has = np.zeros(len(reads.position), dtype=bool)
            has[tops.read] = True
            strong = tops.strong([params_list[i].strong_confidence for i in sub],
                                 [params_list[i].strong_evidence for i in sub],
                                 [params_list[i].conflict_margin for i in sub])
            for seg in segments:
                _threshold_rows(prepared, seg, universes[seg.name], fixed[seg.name], reads, tops, has, strong,
                                sub, resamples, wanted, boot, rows)
        for i in group:
            rows[i]["estimator"] = _REGIME_ESTIMATOR


def _segment_fixed(prepared, seg, universe, events, table, msg, msg_pos, wanted, boot) -> dict:
    """What one segment's rows share across thresholds: forecast scores and sums, the live
    messages and their per-session sums, and ECE intervals (resampled over the segment's sessions)."""
    n_cl = len(universe)
    ev = events[seg.mask(events["position"])]
    inside = seg.mask(msg_pos)
    reads_in = msg[inside]
    live = ~table.skipped[reads_in]
    ece = {}
    for m in wanted if boot else ():
        if m not in RATIO_METRICS:  # ECE: resample the sessions of the segment's events
            ece[m] = bootstrap_interval(
                ev, lambda d, m=m: _forecast_scores(d, METRIC_SOFT_WEIGHT)[m], n=boot["n"],
                alpha=boot["alpha"], seed=boot["seed"], cluster="session",
                stream=segment_stream(seg.name))
    codes = _local(prepared, universe, msg_pos[inside])
    return dict(forecast=_forecast_scores(ev, METRIC_SOFT_WEIGHT),
                fsums=_events_sums(prepared, universe, ev, METRIC_SOFT_WEIGHT),
                reads=reads_in, codes=codes, n_cl=n_cl, n_messages=int(inside.sum()), n_live=int(live.sum()),
                live_c=cluster_sums(codes, n_cl, live.astype(np.float64)), ece=ece)


def _threshold_rows(prepared, seg, universe, f, reads, tops, has, strong, sub, resamples, wanted, boot, rows):
    """The rows of the configurations ``sub`` (one threshold, a strong bar and margin per column
    of ``strong``) on one segment: rates, per-session sums and their intervals."""
    right, wrong = strong & tops.right[:, None], strong & tops.wrong[:, None]
    top_pos = reads.position[tops.read]
    net_top = tops.right.astype(np.float64) - tops.wrong.astype(np.float64)
    n_cl, live_c = f["n_cl"], f["live_c"]
    covered = has[f["reads"]]
    cover_c = cluster_sums(f["codes"], n_cl, covered.astype(np.float64))
    n_cover = int(covered.sum())
    tin = seg.mask(top_pos)
    tc = _local(prepared, universe, top_pos[tin])
    s_in, r_in, w_in = strong[tin], right[tin], wrong[tin]
    strong_c = cluster_sums(tc, n_cl, s_in.astype(np.float64))
    wrong_c = cluster_sums(tc, n_cl, w_in.astype(np.float64))
    follow_c = cluster_sums(tc, n_cl, (r_in | w_in).astype(np.float64))
    net_c = cluster_sums(tc, n_cl, net_top[tin])
    n_net = float(net_top[tin].sum())
    interrupt_c = live_c[None, :] - strong_c
    n_strong, n_right, n_wrong = s_in.sum(axis=0), r_in.sum(axis=0), w_in.sum(axis=0)
    n_live = f["n_live"]
    for col, i in enumerate(sub):
        ns, nr, nw = int(n_strong[col]), int(n_right[col]), int(n_wrong[col])
        regime = {"interruption_rate": _rate(n_live - ns, n_live),
                  "wrong_silent_follow_rate": _rate(nw, nr + nw),
                  "coverage": _rate(n_cover, n_live), "nudge_net_rate": n_net / n_live
                  if n_live else float("nan"), "n_messages": f["n_messages"]}
        sums = {**f["fsums"], "interruption_rate": (interrupt_c[col], live_c),
                "wrong_silent_follow_rate": (wrong_c[col], follow_c[col]),
                "coverage": (cover_c, live_c), "nudge_net_rate": (net_c, live_c)}
        rows[i].update({f"{seg.name}_{k}": v for k, v in f["forecast"].items()})
        rows[i].update({f"{seg.name}_{k}": v for k, v in regime.items()})
        rows[i][CLUSTERS_KEY].update({(m, seg.name): v for m, v in sums.items()})
        for m in wanted if boot else ():
            if m in sums:
                lo, hi = _ratio_interval(*sums[m], resamples[seg.name], boot["alpha"])[0]
            else:
                lo, hi = f["ece"][m]
            rows[i][f"{seg.name}_{m}_lo"], rows[i][f"{seg.name}_{m}_hi"] = lo, hi


#: The definition of the scores (a sweep's cache key holds it): soft rows weigh
#: :data:`METRIC_SOFT_WEIGHT` in every configuration's metrics; log-loss clips at machine epsilon.
SCORES_VERSION = ("scores-3: fixed soft weight in the metrics, log-loss clipped at machine epsilon, "
                  "nudge_net_rate")

#: The per-segment counts besides the metrics: forecasts scored, messages replayed.
COUNTS = ("n_forecasts", "n_messages")


def _fills(metrics) -> tuple:
    """What :func:`_evaluate` reports for ``metrics``: the forecast scores alone when every
    metric asked is a forecast metric, every score otherwise."""
    forecast = (*FORECAST_METRICS, "n_forecasts")
    if all(m in FORECAST_METRICS for m in metrics):
        return forecast
    return (*forecast, *REGIME_METRICS, "n_messages")


def _spec(engine: str) -> EngineSpec:
    return EngineSpec(engine, ScoringParams, _make_prepare(engine), _evaluate,
                      {**FORECAST_METRICS, **REGIME_METRICS}, _FORECAST_ESTIMATOR,
                      sensitivity=SENSITIVITY, denominators=DENOMINATORS, ratio_metrics=RATIO_METRICS,
                      extra_scores=COUNTS,
                      fills=_fills, version=SCORES_VERSION)


def prediction_spec() -> EngineSpec:
    return _spec("prediction")


def behavior_spec() -> EngineSpec:
    return _spec("behavior")
