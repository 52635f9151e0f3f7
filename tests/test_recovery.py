"""End to end: a world with a planted prior → replay → PriorFitter recovers K and P0."""

import numpy as np
import pytest

from thatchlab import replay
from thatchlab.core.errors import InputError
from thatchlab.fit import PriorFitter
from thatchlab.synth import PreferenceWorld

PLANTED_K, PLANTED_P0 = 6.0, 0.7


@pytest.fixture(scope="module")
def planted_world():
    return PreferenceWorld(n_users=20, n_situations=20, phrasings_per_situation=2, noise=0.0,
                           seed=11, prior=(PLANTED_K, PLANTED_P0))


def test_planted_strengths_follow_the_beta_prior(planted_world):
    p = np.r_[planted_world.preference["p_a"], planted_world.preference["p_b"]]
    assert len(p) == 800
    # Beta(4.2, 1.8): mean 0.7, variance P0(1-P0)/(K+1) = 0.03
    assert p.mean() == pytest.approx(PLANTED_P0, abs=0.02)
    assert p.var() == pytest.approx(PLANTED_P0 * (1 - PLANTED_P0) / (PLANTED_K + 1), rel=0.15)


def _fit_world(seed, n_users=10, n_sessions=3000):
    w = PreferenceWorld(n_users=n_users, n_situations=20, phrasings_per_situation=2, noise=0.0,
                        seed=seed, prior=(PLANTED_K, PLANTED_P0))
    log = w.log(n_sessions, soft_share=0.0)
    res = replay.run(log, "prediction", embedder=w.lookup_embedder())
    # every item the replay holds is one planted (user, option)
    assert len(res.tables["items"]) <= 2 * n_users * 20
    signals = res.tables["provenance"].rename(columns={"prediction_id": "item_id"})
    return PriorFitter().fit(signals)


def _covers(fit):
    s = fit.summary_
    return (bool(s.loc["k", "ci_lower"] <= PLANTED_K <= s.loc["k", "ci_upper"]),
            bool(s.loc["p0", "ci_lower"] <= PLANTED_P0 <= s.loc["p0", "ci_upper"]))


def test_synth_replay_fit_covers_the_planted_prior():
    fit = _fit_world(seed=0)
    assert _covers(fit) == (True, True)
    assert fit.k_ == pytest.approx(PLANTED_K, rel=0.5)
    assert fit.p0_ == pytest.approx(PLANTED_P0, abs=0.05)


def test_recovery_intervals_cover_across_worlds():
    # 40 worlds of this size covered K in 36 and P0 in 38 (nominal 95%); 8 here keep it quick
    hits = np.array([_covers(_fit_world(seed, n_sessions=2000)) for seed in range(1, 9)])
    assert hits[:, 0].sum() >= 6 and hits[:, 1].sum() >= 6


def test_default_world_has_no_planted_prior():
    w = PreferenceWorld(n_users=2, n_situations=3, seed=1)
    assert w.prior is None
    pref = w.preference
    np.testing.assert_allclose(pref["p_a"] + pref["p_b"], 1.0)
    with pytest.raises(InputError, match="prior"):
        PreferenceWorld(prior=(0, 0.5))
