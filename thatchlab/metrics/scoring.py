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

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from thatchlab.core.errors import InputError, warn
from thatchlab.core.params import ScoringParams
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


@dataclass(frozen=True)
class Estimate:
    """A counterfactual estimate: ``value`` with a bootstrap interval (NaN when not asked).

    ``estimator`` is ``replay`` (mean over matched rows; Li et al. 2011 — unbiased
    only when the logging policy chose uniformly at random), ``ips``
    (Σ 1[match]·v / p / n), ``snips`` (Σ 1[match]·v / p / Σ 1[match] / p;
    Swaminathan & Joachims 2015) or ``dr`` (doubly robust, :func:`doubly_robust`).
    ``assumption`` says in words what the value assumes about the logging
    policy (see :data:`ESTIMATOR_ASSUMPTIONS`). ``ess`` is the effective
    sample size of the weights (:func:`effective_sample_size`; ``n_matched``
    for replay matching); ``interval`` names how ``ci_low``/``ci_high`` were
    found (``bootstrap-t``, ``percentile`` or empty when not asked).

    Parameters
    ----------
    estimator : str
        ``replay``, ``ips``, ``snips`` or ``dr``.
    value : float
        The estimate.
    ci_low, ci_high : float
        The interval's ends (NaN when not asked).
    n : int
        Logged rows.
    n_matched : int
        Rows where the new policy takes the logged action.
    assumption : str, default=""
        What the value assumes, in words.
    ess : float, default=nan
        The effective sample size of the weights.
    interval : str, default=""
        How the interval was found.

    See Also
    --------
    estimate : Replay matching, IPS and SNIPS estimates.
    doubly_robust : The doubly robust estimate.

    Examples
    --------
    >>> Estimate("replay", 0.5, 0.25, 0.75, n=10, n_matched=4).ci_high
    0.75
    """

    estimator: str
    value: float
    ci_low: float
    ci_high: float
    n: int
    n_matched: int
    assumption: str = ""
    ess: float = math.nan
    interval: str = ""


#: What each estimator assumes about the log, in words carried by every result.
ESTIMATOR_ASSUMPTIONS = {
    "direct": ("every message counts as logged: honest only for the parameters that "
               "produced the log"),
    "replay": ("replay matching is unbiased only if the logging policy chose what to surface "
               "uniformly at random; the log has no propensities, so this estimate assumes it"),
    "ips": ("inverse-propensity weighting assumes the logged propensities are right and "
            "positive for every list the new policy surfaces"),
    "snips": ("self-normalised inverse-propensity weighting assumes the logged propensities are "
              "right and positive for every list the new policy surfaces"),
    "dr": ("doubly robust: unbiased when either the logged propensities or the reward model are "
           "right; the propensities must be positive for every list the new policy surfaces"),
}
#: Below this effective sample size of the weights an IPS/SNIPS/DR interval is not trusted: a few
#: heavily weighted rows carry the estimate, and the benchmark (``bench_ope_coverage``) finds the
#: bootstrap-t interval's coverage falling under 0.93 in worlds whose effective sample size is smaller.
ESS_FLOOR = 20.0
#: Appended for ratio metrics, whose propensity normalisers cancel.
RATIO_NOTE = "for a ratio metric IPS and SNIPS coincide (the normalisers cancel)"


def assumption_text(estimator: str, ratio: bool = False) -> str:
    """The assumption sentence of ``estimator`` (plus the ratio note for IPS/SNIPS ratios).

    Parameters
    ----------
    estimator : str
        A key of :data:`ESTIMATOR_ASSUMPTIONS`.
    ratio : bool, default=False
        The metric is a ratio of means.

    Returns
    -------
    str
        The sentence.

    Examples
    --------
    >>> assumption_text("snips", ratio=True).endswith("the normalisers cancel)")
    True
    """
    text = ESTIMATOR_ASSUMPTIONS[estimator]
    if ratio and estimator in ("ips", "snips"):
        text += "; " + RATIO_NOTE
    return text


def effective_sample_size(weights) -> float:
    """Kish's effective sample size of importance weights, ``(Σ w)² / Σ w²`` (0 when every weight is 0).

    ``n`` equal weights give ``n``; one row holding all the weight gives 1.

    Parameters
    ----------
    weights : array-like of float
        The importance weights.

    Returns
    -------
    float
        The effective sample size.

    Examples
    --------
    >>> effective_sample_size([2.0, 2.0, 0.0, 0.0]), effective_sample_size([10.0, 1.0])
    (2.0, 1.198019801980198)
    """
    w = np.asarray(weights, dtype=np.float64)
    sq = float(np.sum(w * w))
    return float(np.sum(w)) ** 2 / sq if sq > 0 else 0.0


def _point_se(values, match, prop, estimator, den=None):
    """The estimate and its linearised standard error along the last axis.

    ``ips`` without a denominator is a plain mean of ``w·v`` (its standard
    error the sample one); the others are ratios ``Σ w·v / Σ w·d`` (``d`` = 1
    without a denominator) with the delta-method influence
    ``w·(v − θ·d) / mean(w·d)``.
    """
    weight = match if estimator == "replay" else match / prop
    n = values.shape[-1]
    dd = np.ones_like(values) if den is None else den
    with np.errstate(invalid="ignore", divide="ignore"):
        if estimator == "ips" and den is None:
            theta = (values * weight).sum(axis=-1) / n
            psi = values * weight - theta[..., None]
        else:
            norm = (dd * weight).sum(axis=-1)
            theta = np.where(norm > 0, (values * weight).sum(axis=-1) / np.where(norm > 0, norm, 1.0), np.nan)
            psi = weight * (values - theta[..., None] * dd) / np.where(norm > 0, norm / n, 1.0)[..., None]
        se = np.sqrt((psi * psi).sum(axis=-1) / max(n - 1, 1) / n)
    return theta, se


def _bootstrap_t(theta, se, boot_theta, boot_se, alpha):
    """The studentized (bootstrap-t) interval ``[θ̂ − q₁₋α/₂·se, θ̂ − q_α/₂·se]``, ``q`` the quantiles
    (inverted CDF) of ``t* = (θ* − θ̂)/se*``. A resample whose ``se*`` is 0 (it drew none of the few
    rows that carry the estimate, so every weighted value is equal) is studentized by the sample's
    ``se`` instead, so it counts as a resample far from ``θ̂`` rather than as an infinite ``t*``;
    with ``se`` 0 too the interval is the point."""
    d = boot_theta - theta
    scale = np.where(boot_se > 0, boot_se, se)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(scale > 0, d / np.where(scale > 0, scale, 1.0), 0.0)
    t = t[np.isfinite(t)]
    if not t.size or not np.isfinite(theta):
        return math.nan, math.nan
    hi_q = float(np.quantile(t, 1 - alpha / 2, method="inverted_cdf"))
    lo_q = float(np.quantile(t, alpha / 2, method="inverted_cdf"))
    return float(theta - hi_q * se), float(theta - lo_q * se)


def _point(values, match, prop, estimator, den=None):
    """The estimate along the last axis (rows of a bootstrap matrix at once)."""
    weight = match if estimator == "replay" else match / prop
    num = (values * weight).sum(axis=-1)
    if den is not None:
        norm = (den * weight).sum(axis=-1)
    elif estimator == "ips":
        norm = np.full(np.shape(num), float(values.shape[-1]))
    else:
        norm = weight.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(norm > 0, num / np.where(norm > 0, norm, 1.0), np.nan)


def estimate(values, match, propensity=None, estimator: str = "auto", denominator=None, n_boot: int = 0,
             seed: int = 0, alpha: float = 0.05, interval: str = "bootstrap-t") -> Estimate:
    """Estimate a per-row mean (or ratio of means) of a new policy from logged rows.

    ``ess`` is the effective sample size of the weights 1[match]/p
    (:func:`effective_sample_size`). When an interval is asked for IPS or
    SNIPS and ``ess`` is below :data:`ESS_FLOOR` (20), a UserWarning says the
    interval rests on too few effective rows to be trusted.

    Parameters
    ----------
    values : array-like of float
        Per logged row, the outcome the metric counts (e.g. 1 = wrong follow).
    match : array-like of bool
        Per row, whether the new policy takes the logged action (surfaces the same list).
    propensity : array-like of float, default=None
        Per row, the logging policy's probability of the logged action.
    estimator : {"auto", "replay", "ips", "snips"}, default="auto"
        ``auto``: snips when propensities are given, else replay.
    denominator : array-like of float, default=None
        Optional per-row denominator: the estimate is then the ratio of the
        two weighted sums (e.g. wrong follows / strong follows).
    n_boot : int, default=0
        Bootstrap resamples of rows for the interval (0 = none).
    seed : int, default=0
        Seed of the resampling.
    alpha : float, default=0.05
        1 − the interval's level.
    interval : {"bootstrap-t", "percentile"}, default="bootstrap-t"
        ``bootstrap-t``: the studentized bootstrap, each resample's estimate
        minus the estimate over its linearised standard error; it follows
        the skew a few heavily weighted rows give IPS, where the percentile
        interval falls short.

    Returns
    -------
    Estimate
        The value, its interval and what it assumes.

    Raises
    ------
    InputError
        When ``estimator`` or ``interval`` is unknown, or an estimator other
        than replay has no propensities.

    See Also
    --------
    doubly_robust : The doubly robust estimate, with a reward model.

    Examples
    --------
    >>> estimate([1, 0, 1, 1], [True, True, False, True]).value
    0.6666666666666666
    >>> e = estimate([1, 0, 1, 1], [True, True, False, True], [0.5, 1.0, 1.0, 0.5])
    >>> e.estimator, round(e.value, 4), round(e.ess, 4)
    ('snips', 0.8, 2.7778)
    """
    v = np.asarray(values, dtype=np.float64)
    m = np.asarray(match, dtype=np.float64)
    d = None if denominator is None else np.asarray(denominator, dtype=np.float64)
    if estimator == "auto":
        estimator = "replay" if propensity is None else "snips"
    if estimator not in ("replay", "ips", "snips"):
        raise InputError(f"estimator: expected 'replay', 'ips', 'snips' or 'auto', got {estimator!r}")
    if estimator != "replay" and propensity is None:
        raise InputError(f"estimator {estimator!r} needs propensities")
    if interval not in ("bootstrap-t", "percentile"):
        raise InputError(f"interval: expected 'bootstrap-t' or 'percentile', got {interval!r}")
    p = np.ones_like(v) if propensity is None else np.asarray(propensity, dtype=np.float64)
    value = float(_point(v, m, p, estimator, d))
    ess = effective_sample_size(m if estimator == "replay" else m / p)
    lo = hi = float("nan")
    if n_boot and len(v):
        lo, hi = _resampled_interval(v, m, p, d, estimator, n_boot, seed, alpha, interval)
        if estimator != "replay" and ess < ESS_FLOOR:
            warn(f"estimate: the {estimator} weights' effective sample size is {ess:.3g}, below the floor "
                 f"of {ESS_FLOOR:g}: a few heavily weighted rows carry the estimate and its interval is "
                 "not trusted", UserWarning)
    return Estimate(estimator, value, lo, hi, int(len(v)), int(m.sum()),
                    assumption_text(estimator, ratio=d is not None), ess, interval if n_boot and len(v) else "")


def _resampled_interval(v, m, p, d, estimator, n_boot, seed, alpha, interval):
    """:func:`estimate`'s interval from ``n_boot`` resamples of the rows: the percentile interval of
    the resampled estimates, or the bootstrap-t (NaN ends when no resample gives an estimate)."""
    lo = hi = float("nan")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(v), size=(int(n_boot), len(v)))
    if interval == "percentile":
        boots = _point(v[idx], m[idx], p[idx], estimator, None if d is None else d[idx])
        boots = boots[np.isfinite(boots)]
        if boots.size:
            lo, hi = (float(x) for x in np.quantile(boots, [alpha / 2, 1 - alpha / 2]))
    else:
        theta, se = _point_se(v, m, p, estimator, d)
        bt, bse = _point_se(v[idx], m[idx], p[idx], estimator, None if d is None else d[idx])
        keep = np.isfinite(bt)
        lo, hi = _bootstrap_t(float(theta), float(se), bt[keep], bse[keep], alpha)
    return lo, hi


def doubly_robust(values, match, propensity, features, target_features, reward_model=None, n_folds: int = 2,
                  n_boot: int = 0, seed: int = 0, alpha: float = 0.05) -> Estimate:
    r"""The doubly robust estimate of a new policy's per-row mean, with a cross-fitted reward model.

    For logged row :math:`i` with outcome :math:`v_i`, propensity :math:`p_i`
    of the logged action and :math:`m_i = 1` when the new policy takes that
    action, a reward model :math:`\hat q` predicts the outcome from the
    features of a (context, action) pair. The estimate is the mean of

    .. math::

        \phi_i = \hat q(x_i, \pi(x_i)) + \frac{m_i}{p_i}\,(v_i - \hat q(x_i, a_i)),

    the direct method's prediction for the new policy's action corrected by
    the inverse-propensity-weighted residual of the logged one (Dudík,
    Langford & Li 2011; the form Open Bandit Pipeline's ``DoublyRobust``
    estimates). It is unbiased when either the propensities or the reward
    model are right. **Cross-fitting**: the rows are split into ``n_folds``
    folds (shuffled by ``seed``) and each fold's :math:`\hat q` is fitted on
    the other folds' logged rows only, so no row's residual is shrunk by a
    model that saw it.

    Parameters
    ----------
    values : array-like of float
        Per logged row, the outcome :math:`v_i`.
    match : array-like of bool
        Per row, :math:`m_i`: the new policy takes the logged action.
    propensity : array-like of float
        Per row, :math:`p_i`, in (0, 1] for every matched row.
    features, target_features : array-like of shape (n, k)
        Each row's logged (context, action) pair, and its (context, new
        policy's action) pair (2-d arrays or frames of the same width).
    reward_model : scikit-learn regressor or classifier, default=None
        :math:`\hat q`, cloned per fold (``None``: a ``LogisticRegression``
        when every value is 0 or 1, else a ``Ridge``).
    n_folds : int, default=2
        Cross-fitting folds, 2 to ``n``.
    n_boot : int, default=0
        Resamples for the interval (0 = none): the bootstrap-t of the mean
        of :math:`\phi`, rows resampled, the fitted models held.
    seed : int, default=0
        Seed of the folds and of the resampling.
    alpha : float, default=0.05
        1 − the interval's level.

    Returns
    -------
    Estimate
        ``estimator="dr"``, the value, its interval and ``ess``, the effective sample
        size of :math:`m_i/p_i` (a UserWarning says when an interval has < :data:`ESS_FLOOR`).

    Raises
    ------
    InputError
        When inputs differ in rows or width, a matched row has no probability,
        ``n_folds`` is out of range or a classifier gets values other than 0/1.

    See Also
    --------
    estimate : Replay matching, IPS and SNIPS.

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> x = np.array([[0.0], [1.0], [0.0], [1.0]] * 10)  # the outcome is the feature: q̂ is exact
    >>> e = doubly_robust([0, 1, 0, 1] * 10, [1, 1, 0, 0] * 10, [0.5] * 40, x, x, LinearRegression())
    >>> e.estimator, round(e.value, 6), e.ess
    ('dr', 0.5, 20.0)
    """
    v, m, p, xl, xt = _dr_inputs(values, match, propensity, features, target_features, n_folds)
    n = len(v)
    q_logged, q_target = _cross_fitted_rewards(v, xl, xt, reward_model, n_folds, seed)
    w = np.where(m > 0, m / np.where(p > 0, p, 1.0), 0.0)
    phi = q_target + w * (v - q_logged)
    value = float(phi.mean()) if n else math.nan
    ess = effective_sample_size(w)
    lo, hi = _dr_interval(phi, value, ess, n_boot, seed, alpha) if n_boot and n > 1 else (math.nan, math.nan)
    return Estimate("dr", value, lo, hi, n, int(m.sum()), assumption_text("dr"), ess,
                    "bootstrap-t" if n_boot and n > 1 else "")


def _dr_inputs(values, match, propensity, features, target_features, n_folds):
    """:func:`doubly_robust`'s inputs as float arrays (features 2-d), checked: one row each, the
    same feature width, a probability for every matched row, and a usable number of folds."""
    v = np.asarray(values, dtype=np.float64)
    m = np.asarray(match, dtype=np.float64)
    p = np.asarray(propensity, dtype=np.float64)
    xl = np.asarray(features, dtype=np.float64)
    xt = np.asarray(target_features, dtype=np.float64)
    n = len(v)
    if xl.ndim == 1:
        xl = xl[:, None]
    if xt.ndim == 1:
        xt = xt[:, None]
    if not (len(m) == len(p) == len(xl) == len(xt) == n):
        raise InputError(f"doubly_robust: values, match, propensity, features and target_features need one "
                         f"row each; got {n}, {len(m)}, {len(p)}, {len(xl)}, {len(xt)}")
    if xl.shape[1] != xt.shape[1]:
        raise InputError(f"doubly_robust: features have {xl.shape[1]} columns, target_features "
                         f"{xt.shape[1]}; expected the same")
    bad = np.flatnonzero((m > 0) & ~((p > 0) & (p <= 1)))
    if bad.size:
        raise InputError(f"doubly_robust: propensity row {int(bad[0])}: expected a probability in (0, 1] "
                         f"for a matched row, got {p[bad[0]]!r}")
    if not 2 <= int(n_folds) <= n:
        raise InputError(f"n_folds: expected 2 ≤ n_folds ≤ {n} rows, got {n_folds!r}")
    return v, m, p, xl, xt


def _cross_fitted_rewards(v, xl, xt, reward_model, n_folds, seed):
    """The reward model's predictions for the logged and the target pairs, each row's from a model
    fitted on the other folds (a class-1 probability for a classifier)."""
    from sklearn.base import clone, is_classifier  # heavy: sklearn models
    from sklearn.linear_model import LogisticRegression, Ridge  # heavy: sklearn models

    n = len(v)
    binary = bool(np.isin(v, (0.0, 1.0)).all())
    template = reward_model if reward_model is not None else (LogisticRegression() if binary else Ridge())
    folds = np.random.default_rng(seed).permutation(n) % int(n_folds)
    q_logged, q_target = np.empty(n), np.empty(n)

    classifier = is_classifier(template)
    if classifier and not binary:
        raise InputError("reward_model: a classifier needs values of 0 or 1; give a regressor for "
                         "other outcomes")

    def predict(model, x):
        if classifier:
            return model.predict_proba(x)[:, list(model.classes_).index(1)]
        return model.predict(x)

    for k in range(int(n_folds)):
        test, train = folds == k, folds != k
        y_train = v[train]
        if classifier and np.unique(y_train).size < 2:  # one class only: the model is that constant
            q_logged[test] = q_target[test] = float(y_train[0]) if y_train.size else 0.0
            continue
        model = clone(template).fit(xl[train], y_train.astype(int) if classifier else y_train)
        q_logged[test], q_target[test] = predict(model, xl[test]), predict(model, xt[test])
    return q_logged, q_target


def _dr_interval(phi, value, ess, n_boot, seed, alpha):
    """The bootstrap-t interval of the mean of ``phi`` (rows resampled, the fitted models held), with
    a UserWarning when the weights' effective sample size ``ess`` is below the floor."""
    n = len(phi)
    se = float(phi.std(ddof=1) / math.sqrt(n))
    idx = np.random.default_rng(seed).integers(0, n, size=(int(n_boot), n))
    boot = phi[idx]
    lo, hi = _bootstrap_t(value, se, boot.mean(axis=1), boot.std(axis=1, ddof=1) / math.sqrt(n), alpha)
    if ess < ESS_FLOOR:
        warn(f"doubly_robust: the weights' effective sample size is {ess:.3g}, below the floor of "
             f"{ESS_FLOOR:g}: the correction term rests on a few rows and its interval is not trusted",
             UserWarning)
    return lo, hi


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
