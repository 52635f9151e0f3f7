"""PriorFitter's prequential objective is the sweep's own score: same values, same best K (issue 12, item 9)."""

import math

import numpy as np
import pandas as pd
import pytest

from thatchlab import replay
from thatchlab.core.params import ScoringParams
from thatchlab.fit import PriorFitter
from thatchlab.fit.prior import prequential_loglik
from thatchlab.metrics import prequential, prequential_scores
from thatchlab.sweep import sweep
from thatchlab.synth import PreferenceWorld

#: The sweep's holdout: validation = rows [0.02 n, 0.51 n), test = [0.51 n, n).
HOLDOUT = 0.49


@pytest.fixture(scope="module")
def planted():
    """A log with soft signals (a quarter of the refusals) from items whose confirm rates follow Beta(6·0.7, 6·0.3)."""
    world = PreferenceWorld(n_users=10, n_situations=20, phrasings_per_situation=2, noise=0.0, seed=0,
                            prior=(6.0, 0.7))
    log = world.log(3000)
    log["ts"] = pd.to_datetime(log["ts"], utc=True)
    log = log.iloc[np.argsort(log["ts"].to_numpy(), kind="stable")].reset_index(drop=True)  # the sweep's order
    emb = world.lookup_embedder()
    res = replay.run(log, "prediction", embedder=emb)
    signals = res.tables["provenance"].rename(columns={"prediction_id": "item_id"})
    return log, emb, res, signals


def test_fitter_and_sweep_agree_on_k(planted):
    """The fitter's K is where the sweep's own weighted prequential log-loss is lowest.

    The sweep scores a configuration on its validation and test windows only,
    while the fitter scores every signal of the log; a single window (at most
    half the log) is a smaller sample whose best K wanders further than the
    fitter's interval allows. So the comparison pools the sweep's two windows
    with ``holdout = 0.49``: they cover the rows from 2 % of the log on, and
    their weighted losses combine with each window's soft-aware signal weights
    (which do not depend on K). First, every sweep score is checked to be the
    fitter's objective on that window's signals. The pooled sweep loss is
    then lowest within one grid step of the fitter's K, inside its interval,
    and lower at the fitter's K than at the pseudo-likelihood's K.
    """
    log, emb, res, signals = planted
    fit = PriorFitter(soft="fractional").fit(signals)  # production's soft rule: the sweep's own score
    marg = PriorFitter(objective="marginal", soft="fractional").fit(signals)
    assert fit.objective_ == "prequential" and (signals["signal"] == "soft").any()
    assert not fit.boundary_ and marg.k_ > 1.1 * fit.k_  # the pseudo-likelihood's K sits higher

    # the fitter's objective at its estimate is the replay's own prequential log-loss over the whole log
    seq = fit.sequence_
    at_fit = prequential_scores(replay.run(log, "prediction", ScoringParams(k=fit.k_, p0=fit.p0_),
                                           embedder=emb).events, 0.25)
    assert at_fit["n_forecasts"] == len(seq)
    assert -fit.log_likelihood_ / seq["weight"].sum() == pytest.approx(at_fit["log_loss"], rel=1e-9)

    ratio = 1.1
    grid = sorted([float(k) for k in np.exp(np.arange(math.log(2.0), math.log(20.0), math.log(ratio)))]
                  + [fit.k_, marg.k_])
    sw = sweep(log, {"k": grid, "p0": [fit.p0_]}, "log_loss", engine="prediction", embedder=emb,
               holdout=HOLDOUT).sort_values("k").reset_index(drop=True)

    # each window's score is the fitter's objective on that window's signals
    pq = prequential(res.events)
    assert (pq["item_id"].to_numpy() == seq["item_id"].to_numpy()).all()
    assert (pq["signal"].to_numpy() == seq["signal"].to_numpy()).all()
    n = len(log)
    a, b = int(math.floor((1 - 2 * HOLDOUT) * n)), int(math.floor((1 - HOLDOUT) * n))
    pos = pq["position"].to_numpy()
    windows = {"val": (pos >= a) & (pos < b), "test": pos >= b}
    weight = {name: float(seq["weight"][rows].sum()) for name, rows in windows.items()}
    for row in sw.itertuples():
        for name, rows in windows.items():
            part = seq[rows]
            own = -prequential_loglik(part["c"], part["d"], part["y"], row.k, row.p0, part["weight"]) / weight[name]
            assert getattr(row, f"{name}_log_loss") == pytest.approx(own, rel=1e-9)
            assert getattr(row, f"{name}_n_forecasts") == int(rows.sum())

    pooled = (sw["val_log_loss"] * weight["val"] + sw["test_log_loss"] * weight["test"]) / sum(weight.values())
    k_best = float(sw.loc[pooled.idxmin(), "k"])
    lo, hi = fit.summary_.loc["k", ["ci_lower", "ci_upper"]]
    assert lo <= k_best <= hi
    assert abs(math.log(k_best / fit.k_)) <= math.log(ratio) + 1e-9
    at = dict(zip(sw["k"], pooled))
    assert at[fit.k_] < at[marg.k_]


def test_default_soft_treatment_recovers_the_planted_prior(planted):
    """PreferenceWorld voices a quarter of the refusals softly: counted as refusals, the fit covers (6, 0.7).

    Counted at production's weight 0.25 (the sweep's score) or dropped, the
    refusals go partly missing and P0's interval sits above the planted 0.7.
    """
    signals = planted[3]
    fit = PriorFitter().fit(signals)
    assert fit.soft_ == "refusal" and fit.likelihood_ == "exact" and fit.n_soft_ == 181
    s = fit.summary_
    assert s.loc["k", "ci_lower"] <= 6.0 <= s.loc["k", "ci_upper"]
    assert s.loc["p0", "ci_lower"] <= 0.7 <= s.loc["p0", "ci_upper"]
    assert (round(fit.k_, 3), round(fit.p0_, 4)) == (5.301, 0.7139)
    for soft in ("fractional", "exclude"):
        other = PriorFitter(soft=soft).fit(signals)
        assert other.summary_.loc["p0", "ci_lower"] > 0.72 and other.p0_ > fit.p0_ + 0.03
