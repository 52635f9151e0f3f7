"""Metrics of a prediction/behavior replay (thatch).

Prequential scores treat each item's stored confidence just before a
confirm/disconfirm/soft signal as a forecast of ``confirm``. Attribution ties
logged feedback to the items a message surfaced; regime outcomes turn each
nudge into a silent follow (right or wrong), an interruption or an ask.
Logged feedback only exists for what the logging system surfaced, so the
feedback-dependent metrics of a counterfactual setting go through an explicit
estimator: replay matching, IPS / SNIPS with logged propensities, or the doubly
robust estimator with a cross-fitted scikit-learn reward model.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.core.params import ScoringParams
from thatchlab.metrics._counterfactual import (
    ESS_FLOOR,
    ESTIMATOR_ASSUMPTIONS,
    Estimate,
    assumption_text,
    doubly_robust,
    effective_sample_size,
    estimate,
)
from thatchlab.metrics.calibration import brier, calibration_bins, log_loss

#: The weight of a soft signal in every prequential score: production's default, for every configuration.
METRIC_SOFT_WEIGHT = ScoringParams().soft_weight

__all__ = ["ESTIMATOR_ASSUMPTIONS", "assumption_text", "prequential", "prequential_scores", "weighted_reliability", "attribute", "regime_outcomes",
           "regime_rates", "Estimate", "estimate", "doubly_robust", "effective_sample_size", "ESS_FLOOR",
           "replay_metrics", "counterfactual_metrics",
           "SIGNAL_OUTCOMES"]

#: Forecast outcome and weight of each confidence-changing signal (soft → weight W_SOFT).
SIGNAL_OUTCOMES = {"confirm": 1.0, "disconfirm": 0.0, "soft": 0.0}


def prequential(events: pd.DataFrame, soft_weight: float = 0.25) -> pd.DataFrame:
    """One row per forecastable signal of a replay's ``events``.

    Columns ``position, item_id, signal, forecast, y, weight``: ``forecast``
    is the stored confidence before the signal, ``y`` = 1 for confirm and 0
    for disconfirm or soft, ``weight`` = 1, or ``soft_weight`` for soft.
    ``create``/``codify`` are not forecastable.

    Parameters
    ----------
    events : DataFrame
        A replay's ``events`` (``position``, ``item_id``, ``signal``,
        ``forecast``).
    soft_weight : float, default=0.25
        The weight of a soft signal.

    Returns
    -------
    DataFrame
        One row per forecastable signal (columns above).

    See Also
    --------
    prequential_scores : Their log-loss, Brier and ECE.

    Examples
    --------
    >>> ev = pd.DataFrame({"position": [0, 1], "item_id": ["a", "a"], "signal": ["confirm", "soft"],
    ...                    "forecast": [0.5, 0.583]})
    >>> prequential(ev)[["y", "weight"]].values.tolist()
    [[1.0, 1.0], [0.0, 0.25]]
    """
    mask = events["signal"].isin(list(SIGNAL_OUTCOMES)) & events["forecast"].notna()
    out = events.loc[mask, ["position", "item_id", "signal", "forecast"]].reset_index(drop=True)
    out["y"] = out["signal"].map(SIGNAL_OUTCOMES).astype("float64")
    out["weight"] = np.where(out["signal"] == "soft", float(soft_weight), 1.0)
    return out


def weighted_reliability(y, p, weight=None, n_bins: int = 10) -> pd.DataFrame:
    """Reliability-diagram data with sample weights, on ``n_bins`` uniform bins of [0, 1].

    Per non-empty bin: ``mean_forecast`` = Σw·p / Σw, ``observed`` = Σw·y / Σw,
    ``count`` (rows) and ``weight`` (Σw); the bins are scikit-learn's
    ``calibration_curve`` bins (:func:`thatchlab.metrics.calibration.calibration_bins`),
    a forecast on an inner edge belonging to the bin below it.

    Parameters
    ----------
    y : array-like of float
        The 0/1 outcomes.
    p : array-like of float
        The forecasts.
    weight : array-like of float, default=None
        Sample weights (``None``: all 1).
    n_bins : int, default=10
        How many uniform bins.

    Returns
    -------
    DataFrame
        Per non-empty bin: ``bin``, ``bin_lo``, ``bin_hi``,
        ``mean_forecast``, ``observed``, ``count``, ``weight``.

    See Also
    --------
    thatchlab.metrics.calibration.reliability_curve : The unweighted curve.

    Examples
    --------
    >>> weighted_reliability([1, 0, 0], [0.55, 0.52, 0.1], [1, 0.25, 1])["observed"].round(3).tolist()
    [0.0, 0.8]
    """
    y = np.asarray(y, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    w = np.ones_like(p) if weight is None else np.asarray(weight, dtype=np.float64)
    cols = ["bin", "bin_lo", "bin_hi", "mean_forecast", "observed", "count", "weight"]
    if p.size == 0:
        return pd.DataFrame(columns=cols)
    edges, idx = calibration_bins(p, n_bins=n_bins)
    df = pd.DataFrame({"bin": idx, "wp": w * p, "wy": w * y, "w": w})
    g = df.groupby("bin", sort=True)
    s = g[["wp", "wy", "w"]].sum()
    out = pd.DataFrame({"bin": s.index.to_numpy(), "bin_lo": edges[s.index.to_numpy()],
                        "bin_hi": edges[s.index.to_numpy() + 1], "mean_forecast": (s["wp"] / s["w"]).to_numpy(),
                        "observed": (s["wy"] / s["w"]).to_numpy(), "count": g.size().to_numpy(),
                        "weight": s["w"].to_numpy()})
    return out[cols]


def prequential_scores(events: pd.DataFrame, soft_weight: float = 0.25, n_bins: int = 10) -> dict:
    """Weighted log-loss, Brier and ECE of the prequential forecasts.

    ``ECE = Σ_b (W_b / W) · |observed_b − mean_forecast_b|`` over the
    weighted bins of :func:`weighted_reliability`. Empty → NaN scores.

    Parameters
    ----------
    events : DataFrame
        A replay's ``events`` (``position``, ``item_id``, ``signal``,
        ``forecast``).
    soft_weight : float, default=0.25
        The weight of a soft signal.
    n_bins : int, default=10
        The bins of the ECE.

    Returns
    -------
    dict
        ``n_forecasts``, ``log_loss``, ``brier`` and ``ece``.

    See Also
    --------
    prequential : The forecasts scored.

    Examples
    --------
    >>> ev = pd.DataFrame({"position": [0, 1], "item_id": ["a", "a"], "signal": ["confirm", "disconfirm"],
    ...                    "forecast": [0.5, 0.5]})
    >>> s = prequential_scores(ev)
    >>> s["n_forecasts"], s["brier"], round(s["log_loss"], 4), s["ece"]
    (2, 0.25, 0.6931, 0.0)
    """
    pq = prequential(events, soft_weight)
    if pq.empty:
        return {"n_forecasts": 0, "log_loss": float("nan"), "brier": float("nan"), "ece": float("nan")}
    curve = weighted_reliability(pq["y"], pq["forecast"], pq["weight"], n_bins)
    wsum = curve["weight"].sum()
    ece = float((curve["weight"] / wsum * (curve["observed"] - curve["mean_forecast"]).abs()).sum())
    return {"n_forecasts": int(len(pq)), "log_loss": log_loss(pq["y"], pq["forecast"], pq["weight"]),
            "brier": brier(pq["y"], pq["forecast"], pq["weight"]), "ece": round(ece, 12)}


def attribute(events: pd.DataFrame, nudges: pd.DataFrame) -> pd.DataFrame:
    """Tie feedback to surfaced items.

    An update or feedback event is the outcome of an item a message surfaced
    when it resolves (by the dedup rule: its ``item_id``) to that item, in
    the same session, after the message and before the session's next
    message; the first such confirm/disconfirm/soft counts.

    Parameters
    ----------
    events : DataFrame
        A replay's ``events`` (``position``, ``kind``, ``session``,
        ``item_id``, ``signal``).
    nudges : DataFrame
        A replay's ``nudges`` (``position``, ``rank``, ``item_id``).

    Returns
    -------
    DataFrame
        One row per surfaced item of a message: ``position, rank, item_id,
        session, outcome`` (``confirm``/``disconfirm``/``soft`` or None when
        unresolved), ``outcome_position`` and ``resolved``.

    See Also
    --------
    regime_outcomes : What each message's regime led to.
    """
    msgs = events["kind"].to_numpy(object) == "message"
    anchor = pd.Series(np.where(msgs, events["position"].to_numpy(), np.nan), index=events.index)
    anchor = anchor.groupby(events["session"].to_numpy(object)).ffill()
    fb = events["signal"].isin(list(SIGNAL_OUTCOMES)) & events["item_id"].notna() & anchor.notna() & ~msgs
    out_ev = pd.DataFrame({"anchor": anchor[fb].astype("int64"), "item_id": events.loc[fb, "item_id"],
                           "outcome": events.loc[fb, "signal"], "outcome_position": events.loc[fb, "position"]})
    out_ev = out_ev.drop_duplicates(["anchor", "item_id"], keep="first")
    is_msg_pos = set(events.loc[msgs, "position"].tolist())
    sur = nudges.loc[nudges["position"].isin(is_msg_pos), ["position", "rank", "item_id"]]
    sess = events.set_index("position")["session"]
    sur = sur.assign(session=sess.reindex(sur["position"]).to_numpy())
    res = sur.merge(out_ev, how="left", left_on=["position", "item_id"], right_on=["anchor", "item_id"])
    res = res.drop(columns=["anchor"])
    res["outcome"] = res["outcome"].astype(object).where(res["outcome"].notna(), None)
    res["outcome_position"] = res["outcome_position"].astype("float64")
    res["resolved"] = res["outcome"].notna()
    return res.reset_index(drop=True)


def regime_outcomes(events: pd.DataFrame, nudges: pd.DataFrame, attributed: pd.DataFrame | None = None
                    ) -> pd.DataFrame:
    """Per message: ``regime`` and what it led to.

    ``strong`` → ``follow_right`` (top item's outcome confirm),
    ``follow_wrong`` (disconfirm or soft) or ``follow_unresolved``;
    ``ambiguous`` → ``interruption``; ``none`` → ``ask``; ``skipped`` → ``skipped``.
    ``attributed`` is :func:`attribute` of the same events and nudges when the
    caller already has it (computed here otherwise).

    Parameters
    ----------
    events : DataFrame
        A replay's ``events``.
    nudges : DataFrame
        A replay's ``nudges``.
    attributed : DataFrame, default=None
        :func:`attribute` of the two, when already computed.

    Returns
    -------
    DataFrame
        One row per message: ``position``, ``session``, ``regime``,
        ``outcome`` and ``top_outcome`` (the top item's feedback or None).

    See Also
    --------
    regime_rates : Counts and rates of these outcomes.
    """
    att = attribute(events, nudges) if attributed is None else attributed
    top = att[att["rank"] == 0].set_index("position")["outcome"]
    m = events.loc[events["kind"] == "message", ["position", "session", "regime"]].reset_index(drop=True)
    o = top.reindex(m["position"]).to_numpy(object)
    strong = m["regime"].to_numpy(object) == "strong"
    res = np.select([strong & (o == "confirm"), strong & np.isin(o, ["disconfirm", "soft"]), strong,
                     m["regime"] == "ambiguous", m["regime"] == "none"],
                    ["follow_right", "follow_wrong", "follow_unresolved", "interruption", "ask"], "skipped")
    m["outcome"] = res
    m["top_outcome"] = [None if (v is None or v != v) else v for v in o]
    return m


def regime_rates(outcomes: pd.DataFrame) -> dict:
    """Counts and rates from :func:`regime_outcomes`.

    ``interruption_rate = (ambiguous + none) / (messages − skipped)``;
    ``wrong_silent_follow_rate = wrong / strong with an outcome``;
    ``coverage`` = share of non-skipped messages that surfaced an item;
    ``nudge_net_rate = (top items confirmed − top items contradicted) / (messages − skipped)``:
    per live message, +1 when the top surfaced item's following feedback confirms
    it, −1 when it disconfirms (or softly refuses) it, 0 otherwise — it moves with
    which items surface (the thresholds), whatever the regime (needs the
    ``top_outcome`` column of :func:`regime_outcomes`; 0 counts without it).

    Parameters
    ----------
    outcomes : DataFrame
        :func:`regime_outcomes`' frame (``regime``, ``outcome`` and
        optionally ``top_outcome``).

    Returns
    -------
    dict
        The counts (``n_messages``, ``n_skipped``, ...) and the rates above.

    See Also
    --------
    regime_outcomes : The frame counted.

    Examples
    --------
    >>> oc = pd.DataFrame({"regime": ["strong", "strong", "ambiguous", "none", "skipped"],
    ...     "outcome": ["follow_right", "follow_wrong", "interruption", "ask", "skipped"]})
    >>> r = regime_rates(oc)
    >>> r["interruption_rate"], r["wrong_silent_follow_rate"], r["coverage"]
    (0.5, 0.5, 0.75)
    """
    c = outcomes["regime"].value_counts()
    o = outcomes["outcome"].value_counts()
    n = int(len(outcomes))
    skipped = int(c.get("skipped", 0))
    amb, none, strong = int(c.get("ambiguous", 0)), int(c.get("none", 0)), int(c.get("strong", 0))
    right, wrong = int(o.get("follow_right", 0)), int(o.get("follow_wrong", 0))
    live = n - skipped
    if "top_outcome" in outcomes.columns:
        top = outcomes["top_outcome"].to_numpy(object)[outcomes["regime"].to_numpy(object) != "skipped"]
        confirmed, contradicted = int(np.sum(top == "confirm")), int(np.isin(top, ["disconfirm", "soft"]).sum())
    else:
        confirmed = contradicted = 0
    return {"n_messages": n, "n_skipped": skipped, "n_strong": strong, "n_ambiguous": amb, "n_none": none,
            "n_follow_right": right, "n_follow_wrong": wrong,
            "n_follow_unresolved": int(o.get("follow_unresolved", 0)),
            "interruption_rate": (amb + none) / live if live else float("nan"),
            "wrong_silent_follow_rate": wrong / (right + wrong) if right + wrong else float("nan"),
            "coverage": (strong + amb) / live if live else float("nan"),
            "n_top_confirmed": confirmed, "n_top_contradicted": contradicted,
            "nudge_net_rate": (confirmed - contradicted) / live if live else float("nan")}


def _feedback_arrays(result, log):
    """Per message: wrong follow, followed, confirmed and resolved surfaced items,
    whether the replay surfaced the logged list, propensities and the estimator."""
    ev, nu = result.events, result.nudges
    att = attribute(ev, nu)
    oc = regime_outcomes(ev, nu, att)
    msgs = oc["position"].to_numpy()
    res_att = att[att["resolved"]]
    conf = (res_att["outcome"] == "confirm").groupby(res_att["position"]).sum()
    resolved = res_att.groupby("position").size()
    arrays = {"wrong_silent_follow_rate": ((oc["outcome"] == "follow_wrong").to_numpy(float),
                                           oc["outcome"].isin(["follow_right", "follow_wrong"]).to_numpy(float)),
              "precision": (conf.reindex(msgs, fill_value=0).to_numpy(float),
                            resolved.reindex(msgs, fill_value=0).to_numpy(float))}
    top = oc["top_outcome"].to_numpy(object)
    live = (oc["regime"].to_numpy(object) != "skipped").astype(float)
    net = (top == "confirm").astype(float) - np.isin(top, ["disconfirm", "soft"]).astype(float)
    arrays["nudge_net_rate"] = (net * live, live)
    match, prop, est = np.ones(len(msgs)), None, "direct"
    if log is not None and "surfaced" in log.columns:
        logged = log["surfaced"].to_numpy(object)[msgs]
        if any(x is not None for x in logged):
            lists = nu.groupby("position")["statement"].agg(list)
            replayed = [lists.get(pp, []) for pp in msgs]
            match = np.array([lg is not None and list(lg) == r for lg, r in zip(logged, replayed)], dtype=float)
            est = "replay"
            pr = log["propensity"].to_numpy(float)[msgs] if "propensity" in log.columns else None
            if pr is not None and np.isfinite(pr[match > 0]).all() and (match > 0).any():
                prop, est = np.where(np.isfinite(pr), pr, 1.0), "snips"
    return oc, att, arrays, match, prop, est


def counterfactual_metrics(result, log: pd.DataFrame, estimator: str = "auto", n_boot: int = 200,
                           seed: int = 0, alpha: float = 0.05, interval: str = "bootstrap-t") -> pd.DataFrame:
    """Feedback-dependent metrics of a replay with their estimator and bootstrap interval.

    One row per metric (``wrong_silent_follow_rate``: wrong / strong follows
    with an outcome; ``precision``: confirmed / resolved surfaced items;
    ``nudge_net_rate``: top items confirmed minus contradicted per live
    message) with
    ``estimator, value, ci_low, ci_high, n, n_matched, ess`` (the interval is
    the bootstrap-t of :func:`estimate`; ``ess`` the effective sample size of
    the weights, with a warning below :data:`ESS_FLOOR`). Messages count when
    the replay surfaced exactly the logged ``surfaced`` list (replay
    matching), weighted by 1 / ``propensity`` for ``ips``/``snips``; a log
    without ``surfaced`` uses every message as logged (``direct``, honest
    only under the logging parameters). ``estimator="auto"`` picks snips
    when propensities are logged, else replay matching. The ``assumption``
    column says in words what each value assumes about the logging policy.

    Parameters
    ----------
    result : ReplayResult
        The replay.
    log : DataFrame
        The interaction log it replayed (``surfaced`` and ``propensity``
        when logged).
    estimator : {"auto", "replay", "ips", "snips"}, default="auto"
        As :func:`estimate`.
    n_boot : int, default=200
        Bootstrap resamples (0: no interval).
    seed : int, default=0
        Seed of the resampling.
    alpha : float, default=0.05
        1 − the interval's level.
    interval : {"bootstrap-t", "percentile"}, default="bootstrap-t"
        As :func:`estimate`.

    Returns
    -------
    DataFrame
        One row per metric: ``metric, estimator, value, ci_low, ci_high, n,
        n_matched, ess, assumption``.

    See Also
    --------
    replay_metrics : Every scalar metric of a replay.
    """
    _, _, arrays, match, prop, est = _feedback_arrays(result, log)
    if estimator == "auto":
        estimator = "replay" if est == "direct" else est
        label = est
    else:
        label = estimator
    rows = []
    for name, (num, den) in arrays.items():
        e = estimate(num, match, prop if estimator != "replay" else None, estimator, den, n_boot, seed, alpha,
                     interval)
        rows.append({"metric": name, "estimator": label, "value": e.value, "ci_low": e.ci_low,
                     "ci_high": e.ci_high, "n": e.n, "n_matched": e.n_matched, "ess": e.ess,
                     "assumption": assumption_text(label, ratio=True)})
    return pd.DataFrame(rows)


def replay_metrics(result, log: pd.DataFrame | None = None) -> dict:
    """The scalar metrics of a :class:`~thatchlab.replay.ReplayResult`.

    Regime counts and rates and coverage come from the replay itself; the
    prequential scores from its count histories. Feedback-dependent metrics
    (``wrong_silent_follow_rate_est``, ``precision``, ``nudge_net_rate_est``) go through
    :func:`counterfactual_metrics` (no interval); ``estimator`` names the
    estimator used (``direct``, ``replay`` or ``snips``) and ``n_matched``
    the messages it used. Soft signals weigh production's default soft
    weight (``ScoringParams().soft_weight``) in the prequential scores
    whatever the replay's own ``soft_weight``: one metric for every
    configuration, as the sweeps score it (a replay's ``soft_weight`` moves
    its forecasts, not the yardstick).

    Parameters
    ----------
    result : ReplayResult
        The replay.
    log : DataFrame, default=None
        The log it replayed: with a ``surfaced`` column the feedback-dependent
        metrics use replay matching (or SNIPS with ``propensity``); without
        one, or ``None``, every message counts as logged (``direct``).

    Returns
    -------
    dict
        Metric name → value.

    See Also
    --------
    counterfactual_metrics : The feedback-dependent metrics with intervals.
    """
    ev = result.events
    out = {"n_events": int(len(ev))}
    oc, att, arrays, match, prop, est = _feedback_arrays(result, log)
    for key, value in regime_rates(oc).items():
        out[key] = value
        if key == "n_skipped":  # short messages; calls that never ran are their own count beside them
            out["n_calls_not_run"] = int(ev["action"].eq("skipped").sum()) if "action" in ev.columns else 0
    out.update(prequential_scores(ev, METRIC_SOFT_WEIGHT))
    out["n_surfaced"] = int(len(att))
    out["n_unresolved"] = int((~att["resolved"]).sum())
    e_name = "replay" if est == "direct" else est
    out["estimator"] = est
    out["n_matched"] = int(match.sum())
    for key, name in (("wrong_silent_follow_rate_est", "wrong_silent_follow_rate"), ("precision", "precision"),
                      ("nudge_net_rate_est", "nudge_net_rate")):
        num, den = arrays[name]
        out[key] = estimate(num, match, prop, e_name, den).value
    return out
