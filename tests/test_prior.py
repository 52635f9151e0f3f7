"""PriorFitter: empirical-Bayes K and P0 of the scoring engine's prior."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import betaln

from thatchlab.core.errors import InputError
from thatchlab.core.params import ScoringParams
from thatchlab.fit import PriorFitter
from thatchlab.fit.prior import (
    beta_binomial_loglik,
    prequential_loglik,
    signal_counts,
    signal_sequence,
)
from thatchlab.scoring import posterior_confidence


def _signals(counts):
    """A signal log from per-item (confirms, disconfirms, softs)."""
    rows = []
    for i, (c, d, s) in enumerate(counts):
        rows += [(f"item{i}", "create")] + [(f"item{i}", "confirm")] * c
        rows += [(f"item{i}", "disconfirm")] * d + [(f"item{i}", "soft")] * s
    return pd.DataFrame(rows, columns=["item_id", "signal"])


@pytest.fixture
def overdispersed():
    rng = np.random.default_rng(7)
    n = rng.integers(3, 12, size=300)
    c = rng.binomial(n, rng.beta(2.0, 6.0, size=300))
    return c, n - c


def test_loglik_is_the_prequential_log_score():
    # confirm, confirm, disconfirm on one item: the posterior's one-step forecasts
    k, p0 = 5.0, 0.4
    f1 = posterior_confidence(0, 0, k, p0)
    f2 = posterior_confidence(1, 0, k, p0)
    f3 = posterior_confidence(2, 0, k, p0)
    expected = math.log(f1) + math.log(f2) + math.log(1 - f3)
    assert beta_binomial_loglik([2], [1], k, p0) == pytest.approx(expected, abs=1e-12)
    assert beta_binomial_loglik([1], [0], 5, 0.5) == pytest.approx(math.log(0.5), abs=1e-15)


def test_loglik_binomial_limit():
    assert beta_binomial_loglik([3, 1], [1, 2], math.inf, 0.6) == pytest.approx(
        4 * math.log(0.6) + 3 * math.log(0.4), abs=1e-12)
    assert beta_binomial_loglik([3], [1], 1e9, 0.6) == pytest.approx(
        3 * math.log(0.6) + math.log(0.4), abs=1e-5)


def test_signal_counts_soft_is_fractional():
    s = pd.DataFrame({"item_id": ["a", "a", "a", "b", "b"],
                      "signal": ["create", "confirm", "soft", "soft", "disconfirm"]})
    out = signal_counts(s, soft_weight=0.25)
    assert out.to_dict("list") == {"item_id": ["a", "b"], "c": [1.0, 0.0], "d": [0.25, 1.25]}
    assert signal_counts(s, soft_weight=1.0)["d"].tolist() == [1.0, 2.0]


def test_unknown_signal_names_row():
    s = pd.DataFrame({"item_id": ["a", "a"], "signal": ["confirm", "maybe"]})
    with pytest.raises(InputError, match=r"row 1, column 'signal'.*'maybe'"):
        PriorFitter().fit(s)
    with pytest.raises(InputError, match="missing column"):
        PriorFitter().fit(pd.DataFrame({"item_id": ["a"]}))


def test_one_sided_signals_raise():
    with pytest.raises(InputError, match="same way"):
        PriorFitter().fit(_signals([(3, 0, 0), (2, 0, 0)]))
    with pytest.raises(InputError, match="no confirm"):
        PriorFitter().fit(_signals([(0, 0, 0)]))


def test_fit_recovers_and_summary(overdispersed):
    c, d = overdispersed
    f = PriorFitter().fit_counts(c, d)
    assert not f.boundary_
    assert list(f.summary_.index) == ["k", "p0"]
    assert list(f.summary_.columns) == ["coef", "ci_lower", "ci_upper"]
    assert f.summary_.loc["k", "ci_lower"] < 8.0 < f.summary_.loc["k", "ci_upper"]
    assert f.summary_.loc["p0", "ci_lower"] < 0.25 < f.summary_.loc["p0", "ci_upper"]
    for row in ("k", "p0"):
        s = f.summary_.loc[row]
        assert s["ci_lower"] < s["coef"] < s["ci_upper"]
    # the maximum beats the production default and nearby points
    assert f.log_likelihood_ >= beta_binomial_loglik(c, d, 5.0, 0.5)
    for dk, dp in ((1.1, 1.0), (0.9, 1.0), (1.0, 1.02), (1.0, 0.98)):
        assert f.log_likelihood_ >= beta_binomial_loglik(c, d, f.k_ * dk, f.p0_ * dp)
    # profile deviance is 0 at the estimate and the cut at the interval ends
    prof = f.profile("k", [f.k_, f.summary_.loc["k", "ci_lower"], f.summary_.loc["k", "ci_upper"]])
    assert prof["deviance"].tolist() == pytest.approx([0.0, 3.841459, 3.841459], abs=1e-3)
    assert f.to_params() == ScoringParams(k=f.k_, p0=f.p0_)


def test_fit_from_signal_log_matches_counts():
    s = _signals([(3, 1, 0), (0, 2, 1), (4, 0, 2), (1, 1, 0), (5, 3, 0)])
    f = PriorFitter(soft_weight=0.25, objective="marginal", soft="fractional").fit(s)
    g = PriorFitter().fit_counts([3, 0, 4, 1, 5], [1, 2.25, 0.5, 1, 3])
    assert f.k_ == g.k_ and f.p0_ == g.p0_
    assert f.log_likelihood_ == pytest.approx(
        beta_binomial_loglik([3, 0, 4, 1, 5], [1, 2.25, 0.5, 1, 3], f.k_, f.p0_), abs=1e-12)


def test_boundary_fit_no_overdispersion():
    rng = np.random.default_rng(3)
    n = np.full(400, 6)
    c = rng.binomial(n, 0.4)
    f = PriorFitter().fit_counts(c, n - c)
    assert f.boundary_ and math.isinf(f.k_)
    assert f.p0_ == pytest.approx(c.sum() / n.sum(), abs=1e-12)
    assert math.isinf(f.summary_.loc["k", "ci_upper"])
    assert 0 < f.summary_.loc["k", "ci_lower"] < math.inf
    assert f.summary_.loc["p0", "ci_lower"] < f.p0_ < f.summary_.loc["p0", "ci_upper"]
    assert f.log_likelihood_ == pytest.approx(beta_binomial_loglik(c, n - c, math.inf, f.p0_), abs=1e-9)
    with pytest.raises(InputError, match="boundary"):
        f.to_params()
    # every item with the same share of confirms: less spread than binomial, still K = inf
    g = PriorFitter().fit_counts(np.full(50, 3), np.full(50, 1))
    assert g.boundary_ and math.isinf(g.k_) and g.p0_ == 0.75


def test_params_api():
    f = PriorFitter(soft_weight=0.5)
    assert f.get_params() == {"soft_weight": 0.5, "alpha": 0.05, "objective": "auto", "soft": "refusal"}
    assert f.set_params(alpha=0.1).alpha == 0.1
    with pytest.raises(InputError):
        PriorFitter(alpha=1.5)
    with pytest.raises(InputError):
        f.set_params(k=3)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=1, max_size=12),
       st.floats(0.1, 50), st.floats(0.05, 0.95), st.randoms())
def test_loglik_properties(pairs, k, p0, rnd):
    c = np.array([a for a, _ in pairs], dtype=float)
    d = np.array([b for _, b in pairs], dtype=float)
    ll = beta_binomial_loglik(c, d, k, p0)
    assert ll <= 1e-12  # a log-probability of integer sequences
    perm = list(range(len(pairs)))
    rnd.shuffle(perm)
    assert beta_binomial_loglik(c[perm], d[perm], k, p0) == pytest.approx(ll, abs=1e-9)
    a, b = k * p0, k * (1 - p0)
    assert ll == pytest.approx(float(np.sum(betaln(a + c, b + d) - betaln(a, b))), abs=1e-9)


def test_interval_coverage_simulation():
    """Plant K = 8, P0 = 0.3; 200 seeded replications; 95 % profile intervals cover at about 95 %."""
    rng = np.random.default_rng(2026)
    k_true, p_true, reps, items = 8.0, 0.3, 200, 120
    n = rng.integers(2, 10, size=(reps, items))
    p = rng.beta(k_true * p_true, k_true * (1 - p_true), size=(reps, items))
    c = rng.binomial(n, p)
    hit_k = hit_p = 0
    for r in range(reps):
        s = PriorFitter().fit_counts(c[r], n[r] - c[r]).summary_
        hit_k += s.loc["k", "ci_lower"] <= k_true <= s.loc["k", "ci_upper"]
        hit_p += s.loc["p0", "ci_lower"] <= p_true <= s.loc["p0", "ci_upper"]
    assert 0.88 <= hit_k / reps <= 0.99
    assert 0.88 <= hit_p / reps <= 0.99


def test_fit_from_a_production_store(tmp_path):
    """Signals read back from an exported store's provenance give the same fit as the replay's events."""
    from tests._sweep_logs import interaction_log
    from thatchlab.logs import signals_from_store
    from thatchlab.replay.scoring import run
    from thatchlab.scoring import PredictionEngine
    from thatchlab.store import export_sqlite

    log, emb = interaction_log(n_events=300, seed=4)
    res = run(log, "prediction", ScoringParams(), embedder=emb)
    engine = PredictionEngine.from_tables(res.tables, embedder=emb)
    out = export_sqlite(tmp_path / "store.db", prediction=engine)
    signals = signals_from_store(out.path)
    assert set(signals["signal"]) <= {"create", "confirm", "disconfirm", "soft"}
    from_store = PriorFitter().fit(signals)
    ev = res.events
    from_events = PriorFitter().fit(ev.loc[ev["signal"].notna(), ["item_id", "signal"]])
    assert from_store.k_ == from_events.k_ and from_store.p0_ == from_events.p0_
    assert from_store.n_items_ == from_events.n_items_ > 3


# -- the BaseFitter conventions ---------------------------------------------------------------

def test_fit_returns_self_and_the_repr_says_what_was_fitted(overdispersed):
    c, d = overdispersed
    f = PriorFitter()
    assert repr(f) == "<PriorFitter: not fitted>"
    assert f.fit_counts(c, d) is f
    assert f.n_ == f.n_items_ == int(np.sum((c + d) > 0))
    assert repr(f) == f"<PriorFitter: fitted with {f.n_} items, k_={f.k_:.4g}, p0_={f.p0_:.4g}>"
    s = _signals([(3, 0, 0), (0, 3, 0), (2, 0, 1)])
    g = PriorFitter(objective="marginal", soft="fractional")
    assert g.fit(s) is g and repr(g) == "<PriorFitter: fitted with 3 items, k_=0.4882, p0_=0.5784>"


def test_confidence_interval_is_the_two_summary_columns(overdispersed):
    f = PriorFitter().fit_counts(*overdispersed)
    pd.testing.assert_frame_equal(f.confidence_interval_, f.summary_[["ci_lower", "ci_upper"]])
    assert f.summary_.index.name == "param"


def test_print_summary_shows_the_fit_and_every_parameter(overdispersed, capsys):
    f = PriorFitter(alpha=0.1).fit_counts(*overdispersed)
    f.print_summary()
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == repr(f)
    assert "fitted = empirical-Bayes prior strength K and mean P0" in out
    assert f"n = {f.n_} items" in out
    assert f"log-likelihood = {f.log_likelihood_:.1f}" in out  # |ℓ| >= 1000: one decimal
    assert "intervals = 90% (alpha = 0.1)" in out and "boundary fit = False" in out
    rows = {line.split()[0]: line.split()[1:] for line in lines if line.split()[:1] in (["k"], ["p0"])}
    assert rows["k"] == [f"{v:.4g}" for v in f.summary_.loc["k"]]
    assert rows["p0"] == [f"{v:.4g}" for v in f.summary_.loc["p0"]]


def test_learned_state_before_fit_raises_not_fitted():
    from thatchlab.core.errors import ThatchlabError
    from thatchlab.fit import NotFittedError

    f = PriorFitter()
    for name in ("summary_", "confidence_interval_", "log_likelihood_", "k_", "n_"):
        with pytest.raises(NotFittedError, match=f"PriorFitter is not fitted: call fit\\(\\) before reading {name}"):
            getattr(f, name)
    with pytest.raises(NotFittedError):
        f.print_summary()
    with pytest.raises(ThatchlabError):
        f.to_params()
    assert not hasattr(f, "summary_")  # an AttributeError too
    fitted = PriorFitter().fit_counts([3, 0, 4, 1, 5], [1, 2.25, 0.5, 1, 3])
    with pytest.raises(AttributeError) as err:
        _ = fitted.no_such_thing_
    assert not isinstance(err.value, NotFittedError)


# -- the prequential objective (issue 12, item 9) -----------------------------------------------

def _loop_score(signals, k, p0, soft_weight=0.25):
    """The weighted prequential log score, one signal at a time (the reference for the vectorised one)."""
    state, total = {}, 0.0
    for item, sig in zip(signals["item_id"], signals["signal"]):
        c, d = state.get(item, (0.0, 0.0))
        f = p0 if math.isinf(k) else (c + k * p0) / (c + d + k)
        if sig == "confirm":
            total, c = total + math.log(f), c + 1
        elif sig == "disconfirm":
            total, d = total + math.log(1 - f), d + 1
        elif sig == "soft":
            total, d = total + soft_weight * math.log(1 - f), d + soft_weight
        state[item] = (c, d)
    return total


def _mixed_log(n_items=150, seed=5, soft_share=0.4):
    """Interleaved signals of overdispersed items; refusals are soft with probability ``soft_share``."""
    rng = np.random.default_rng(seed)
    p = rng.beta(1.5, 2.5, size=n_items)
    n = rng.integers(1, 12, size=n_items)
    item = np.repeat(np.arange(n_items), n)
    rng.shuffle(item)  # items interleave, as in a real log
    yes = rng.random(item.size) < p[item]
    soft = rng.random(item.size) < soft_share
    sig = np.where(yes, "confirm", np.where(soft, "soft", "disconfirm"))
    return pd.DataFrame({"item_id": [f"i{j}" for j in item], "signal": sig})


def test_signal_sequence_counts_before_each_signal():
    s = pd.DataFrame({"item_id": ["a", "b", "a", "a", "b", "a"],
                      "signal": ["create", "soft", "confirm", "soft", "disconfirm", "confirm"]})
    seq = signal_sequence(s, soft_weight=0.25)
    assert seq["item_id"].tolist() == ["b", "a", "a", "b", "a"]
    assert seq["c"].tolist() == [0.0, 0.0, 1.0, 0.0, 1.0]
    assert seq["d"].tolist() == [0.0, 0.0, 0.0, 0.25, 0.25]
    assert seq["y"].tolist() == [0.0, 1.0, 0.0, 0.0, 1.0]
    assert seq["weight"].tolist() == [0.25, 1.0, 0.25, 1.0, 1.0]


@pytest.mark.parametrize("k, p0, soft_weight", [(5.0, 0.5, 0.25), (0.7, 0.2, 0.25), (40.0, 0.8, 1.0),
                                                (3.0, 0.4, 0.0), (math.inf, 0.35, 0.25)])
def test_prequential_loglik_is_the_loop_over_signals(k, p0, soft_weight):
    s = _mixed_log(n_items=30, seed=1)
    seq = signal_sequence(s, soft_weight)
    got = prequential_loglik(seq["c"], seq["d"], seq["y"], k, p0, seq["weight"])
    assert got == pytest.approx(_loop_score(s, k, p0, soft_weight), rel=1e-12, abs=1e-12)


def test_prequential_loglik_is_the_sweeps_log_loss():
    """ℓ / Σw is minus the weighted log-loss of the forecasts (c + K·P0)/(c + d + K) the metrics score."""
    from thatchlab.metrics import prequential_scores

    s = _mixed_log(n_items=40, seed=2)
    seq = signal_sequence(s, 0.25)
    k, p0 = 3.0, 0.45
    ev = pd.DataFrame({"position": np.arange(len(seq)), "item_id": seq["item_id"], "signal": seq["signal"],
                       "forecast": posterior_confidence(seq["c"], seq["d"], k, p0)})
    scores = prequential_scores(ev, 0.25)
    ll = prequential_loglik(seq["c"], seq["d"], seq["y"], k, p0, seq["weight"])
    assert scores["n_forecasts"] == len(seq)
    assert -ll / seq["weight"].sum() == pytest.approx(scores["log_loss"], rel=1e-12)


def test_without_soft_signals_the_two_objectives_agree():
    s = _mixed_log(n_items=200, seed=3, soft_share=0.0)
    assert not (s["signal"] == "soft").any()
    marg = PriorFitter(objective="marginal").fit(s)
    preq = PriorFitter(objective="prequential").fit(s)
    auto = PriorFitter().fit(s)
    assert auto.objective_ == marg.objective_ == "marginal" and preq.objective_ == "prequential"
    assert not marg.boundary_ and not preq.boundary_
    assert preq.k_ == pytest.approx(marg.k_, rel=1e-6, abs=1e-6)
    assert preq.p0_ == pytest.approx(marg.p0_, abs=1e-6)
    assert preq.log_likelihood_ == pytest.approx(marg.log_likelihood_, rel=1e-9)
    pd.testing.assert_frame_equal(preq.summary_, marg.summary_, rtol=1e-4)
    assert (auto.k_, auto.p0_) == (marg.k_, marg.p0_)


def test_soft_signals_fit_the_prequential_score():
    s = _mixed_log(n_items=200, seed=4)
    f = PriorFitter(soft="fractional").fit(s)
    assert f.objective_ == "prequential" and not f.boundary_
    assert list(f.summary_.index) == ["k", "p0"]
    seq = f.sequence_
    assert f.log_likelihood_ == pytest.approx(_loop_score(s, f.k_, f.p0_), rel=1e-12)
    for dk, dp in ((1.05, 1.0), (0.95, 1.0), (1.0, 1.02), (1.0, 0.98)):
        assert f.log_likelihood_ >= prequential_loglik(seq["c"], seq["d"], seq["y"], f.k_ * dk, f.p0_ * dp,
                                                       seq["weight"])
    for row in ("k", "p0"):
        lo, coef, hi = f.summary_.loc[row, ["ci_lower", "coef", "ci_upper"]]
        assert lo < coef < hi
    prof = f.profile("k", [f.k_, f.summary_.loc["k", "ci_lower"], f.summary_.loc["k", "ci_upper"]])
    assert prof["deviance"].tolist() == pytest.approx([0.0, 3.841458820694124, 3.841458820694124], abs=2e-3)
    # the pseudo-likelihood on the same log lands elsewhere
    marg = PriorFitter(objective="marginal", soft="fractional").fit(s)
    assert abs(marg.k_ - f.k_) > 0.05 * f.k_


def test_prequential_boundary_fit():
    """One shared confirm probability: the score rises with K, so K = inf at the weighted pooled share."""
    rng = np.random.default_rng(8)
    item = rng.integers(0, 300, size=2400)
    yes = rng.random(item.size) < 0.6
    sig = np.where(yes, "confirm", np.where(rng.random(item.size) < 0.5, "soft", "disconfirm"))
    s = pd.DataFrame({"item_id": item, "signal": sig})
    f = PriorFitter(soft="fractional").fit(s)
    assert f.objective_ == "prequential" and f.boundary_ and math.isinf(f.k_)
    w = np.where(sig == "soft", 0.25, 1.0)
    assert f.p0_ == pytest.approx(w[yes].sum() / w.sum(), rel=1e-12)
    assert f.log_likelihood_ == pytest.approx(_loop_score(s, math.inf, f.p0_), rel=1e-12)
    assert math.isinf(f.summary_.loc["k", "ci_upper"]) and 0 < f.summary_.loc["k", "ci_lower"]
    with pytest.raises(InputError, match="boundary"):
        f.to_params()


def test_objective_argument_and_summary(capsys):
    with pytest.raises(InputError, match="objective"):
        PriorFitter(objective="likelihood")
    with pytest.raises(InputError, match="needs the signal sequence"):
        PriorFitter(objective="prequential").fit_counts([3, 1], [1, 2])
    assert PriorFitter().fit_counts([3, 1, 0], [1, 2.25, 3]).objective_ == "marginal"
    f = PriorFitter(soft="fractional").fit(_mixed_log(n_items=60, seed=6))
    f.print_summary()
    out = capsys.readouterr().out
    assert "objective = prequential" in out
    assert "fitted = empirical-Bayes prior strength K and mean P0 (weighted prequential log score)" in out
    g = PriorFitter(objective="marginal").fit(_mixed_log(n_items=60, seed=6))
    g.print_summary()
    out = capsys.readouterr().out
    assert "objective = marginal" in out and "(beta-binomial marginal likelihood)" in out
    assert f.to_params() == ScoringParams(k=f.k_, p0=f.p0_)


# -- how soft signals enter: refusal (default), fractional, exclude ----------------------------

def test_soft_option_is_checked():
    with pytest.raises(InputError, match=r"soft: expected one of \['refusal', 'fractional', 'exclude'\]"):
        PriorFitter(soft="half")
    assert PriorFitter().soft == "refusal"
    assert PriorFitter().set_params(soft="exclude").soft == "exclude"


def test_each_soft_treatment_is_the_log_it_stands_for():
    """refusal = the softs rewritten as disconfirms; exclude = the softs deleted; fractional = weight 0.25."""
    s = _mixed_log(n_items=200, seed=4)
    soft = s["signal"] == "soft"
    as_disconfirm = s.assign(signal=s["signal"].where(~soft, "disconfirm"))
    refusal = PriorFitter().fit(s)
    want = PriorFitter().fit(as_disconfirm)
    assert refusal.objective_ == "marginal" and (refusal.k_, refusal.p0_) == (want.k_, want.p0_)
    pd.testing.assert_frame_equal(refusal.summary_, want.summary_)
    assert refusal.counts_["d"].tolist() == want.counts_["d"].tolist()
    # the prequential score of integer counts is the same function: same estimate
    preq = PriorFitter(objective="prequential").fit(s)
    assert preq.k_ == pytest.approx(refusal.k_, rel=1e-6) and preq.p0_ == pytest.approx(refusal.p0_, abs=1e-7)
    assert preq.likelihood_ == "exact" and preq.log_likelihood_ == pytest.approx(refusal.log_likelihood_, rel=1e-9)

    excl = PriorFitter(soft="exclude").fit(s)
    want = PriorFitter().fit(s[~soft])
    assert (excl.k_, excl.p0_, excl.n_items_) == (want.k_, want.p0_, want.n_items_)
    assert excl.n_soft_ == int(soft.sum()) > 0 and want.n_soft_ == 0

    frac = PriorFitter(soft="fractional").fit(s)
    assert frac.objective_ == "prequential"
    assert frac.log_likelihood_ == pytest.approx(_loop_score(s, frac.k_, frac.p0_, 0.25), rel=1e-12)
    # the planted mean is 1.5 / 4 = 0.375 and 40 % of the refusals are soft: counting them as 0.25 or
    # dropping them raises the confirm share
    assert refusal.p0_ < frac.p0_ < excl.p0_
    assert (round(refusal.p0_, 4), round(frac.p0_, 4), round(excl.p0_, 4)) == (0.3908, 0.4655, 0.4915)


def test_summary_names_the_soft_treatment_and_its_assumption(capsys):
    s = _mixed_log(n_items=60, seed=6)
    n_soft = int((s["signal"] == "soft").sum())
    want = {"refusal": (1.0, "exact", "refusal (a full disconfirm)"),
            "fractional": (0.25, "pseudo", "pseudo-likelihood"),
            "exclude": (0.0, "exact", "soft signals dropped")}
    for soft, (weight, likelihood, words) in want.items():
        f = PriorFitter(soft=soft).fit(s)
        attrs = f.summary_.attrs
        assert {k: attrs[k] for k in ("soft", "soft_weight", "n_soft", "likelihood")} == {
            "soft": soft, "soft_weight": weight, "n_soft": n_soft, "likelihood": likelihood}
        assert words in attrs["assumption"] == f.assumption_ and f.likelihood_ == likelihood
        assert f.confidence_interval_.attrs["soft"] == soft  # the attrs travel with copies
        f.print_summary()
        out = capsys.readouterr().out
        assert f"soft signals = {soft} ({n_soft} in the log)" in out
        assert f"assumption = {f.assumption_}" in out
        assert ("likelihood = pseudo-likelihood" if likelihood == "pseudo" else "likelihood = exact") in out
    assert "weight 0.25 in the weighted prequential log score" in PriorFitter(soft="fractional").fit(s).assumption_
    assert "in the beta-binomial likelihood" in PriorFitter(soft="fractional", objective="marginal").fit(s).assumption_
    # no soft signal at all: every treatment is the same exact fit and says so
    none = _mixed_log(n_items=60, seed=6, soft_share=0.0)
    fits = [PriorFitter(soft=soft).fit(none) for soft in want]
    assert len({(f.k_, f.p0_) for f in fits}) == 1
    assert all(f.likelihood_ == "exact" and f.assumption_.startswith("no soft signal") for f in fits)
    # per-item counts: taken as given, fractional ones named a pseudo-likelihood
    g = PriorFitter().fit_counts([3, 0, 4, 1, 5], [1, 2.25, 0.5, 1, 3])
    assert (g.summary_.attrs["soft"], g.likelihood_) == ("counts", "pseudo")
    assert PriorFitter().fit_counts([3, 0, 4, 1, 5], [1, 2, 0, 1, 3]).likelihood_ == "exact"


def test_soft_treatments_coverage_simulation():
    """Planted K = 6, P0 = 0.7, a quarter of the refusals soft; 40 seeded logs of 150 items per treatment.

    The docstring's 200-rep figures come from the same generator
    (``python -m thatchlab.fit._prior_sim``); here, 40 reps keep it quick.
    """
    from thatchlab.fit._prior_sim import coverage

    cov = coverage(reps=40, seed=0).set_index(["soft", "objective"])
    assert cov["reps"].eq(40).all() and cov["boundary"].eq(0).all()
    ref = cov.loc[("refusal", "auto")]
    assert ref["hits_k"] >= 34 and ref["hits_p0"] >= 34           # nominal 38 of 40
    assert abs(ref["bias_p0"]) < 0.01
    for option in (("fractional", "prequential"), ("fractional", "marginal"), ("exclude", "auto")):
        row = cov.loc[option]
        assert row["bias_p0"] > 0.03 and row["hits_p0"] <= 26    # P0 pulled up, intervals miss it
    assert cov.loc[("exclude", "auto"), "bias_p0"] > cov.loc[("fractional", "prequential"), "bias_p0"]
    # softs that are noise (unrelated to the item's rate): dropping them is the exact treatment
    noise = coverage(reps=40, seed=1, meaning="noise",
                     options=(("refusal", "auto"), ("exclude", "auto"))).set_index("soft")
    assert noise.loc["exclude", "hits_p0"] >= 34 and abs(noise.loc["exclude", "bias_p0"]) < 0.01
    assert noise.loc["refusal", "bias_p0"] < -0.03 and noise.loc["refusal", "hits_p0"] <= 26
