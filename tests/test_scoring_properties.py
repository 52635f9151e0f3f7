"""Hypothesis properties of the scoring engine on lookup vectors.

Vectors come from a small pool of random directions (plus near-copies, so
dedup collisions happen), and operation sequences are random: the
properties must hold after any of them.
"""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from thatchlab.core.params import ScoringParams
from thatchlab.embed import LookupEmbedder
from thatchlab.scoring import BehaviorEngine, PredictionEngine, posterior_confidence

DIM = 6
N_TEXTS = 12


def _pool(seed):
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(N_TEXTS // 2, DIM))
    near = base + rng.normal(scale=0.15, size=base.shape)  # often above cosine 0.85
    vecs = np.vstack([base, near])
    return {f"sample text {i}": vecs[i].tolist() for i in range(N_TEXTS)}


counts = st.floats(min_value=0, max_value=1e4, allow_nan=False)
ks = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False)
p0s = st.floats(min_value=0, max_value=1, allow_nan=False)


@given(counts, counts, ks, p0s)
def test_posterior_stays_in_unit_interval_between_prior_and_data(c, d, k, p0):
    conf = posterior_confidence(c, d, k, p0)
    assert -1e-12 <= conf <= 1 + 1e-12
    if c + d > 0:
        mean = c / (c + d)
        assert min(p0, mean) - 1e-9 <= conf <= max(p0, mean) + 1e-9


@given(counts, counts, ks, p0s, st.floats(min_value=0.01, max_value=10))
def test_posterior_rises_with_confirms_and_falls_with_disconfirms(c, d, k, p0, step):
    assert posterior_confidence(c + step, d, k, p0) >= posterior_confidence(c, d, k, p0) - 1e-12
    assert posterior_confidence(c, d + step, k, p0) <= posterior_confidence(c, d, k, p0) + 1e-12


signals = st.lists(st.sampled_from(["confirm", "disconfirm", "soft"]), min_size=1, max_size=12)


@settings(max_examples=40, deadline=None)
@given(signals, st.randoms(use_true_random=False))
def test_counts_do_not_depend_on_signal_order(seq, rnd):
    vecs = {"m": [1.0, 0.0], "rule": [0.0, 1.0]}
    shuffled = list(seq)
    rnd.shuffle(shuffled)
    finals = []
    for order in (seq, shuffled):
        eng = PredictionEngine(LookupEmbedder(vecs))
        for s in order:
            eng.update("m", "rule", s, None, now="2026-01-01T00:00:00Z")
        row = eng.tables["items"].iloc[0]
        finals.append((row["confirm_count"], row["disconfirm_count"], row["confidence"]))
    assert finals[0] == finals[1]


op = st.tuples(st.sampled_from(["write", "write", "write", "signal", "delete", "nudge"]),
               st.integers(0, N_TEXTS - 1), st.integers(0, N_TEXTS - 1),
               st.sampled_from(["project", "global", "other"]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.lists(op, min_size=1, max_size=25),
       st.sampled_from(["prediction", "behavior"]), st.sampled_from(["store+global", "store"]),
       st.integers(1, 4))
def test_engine_invariants_after_any_sequence(seed, ops, kind, scope, max_items):
    vecs = _pool(seed)
    params = ScoringParams(dedup_scope=scope, max_items=max_items, threshold=0.3)
    emb = LookupEmbedder(vecs)
    eng = PredictionEngine(emb, params) if kind == "prediction" else BehaviorEngine(emb, params)
    for action, a, b, store in ops:
        ma, tb = f"sample text {a}", f"sample text {b}"
        if action == "write":
            if kind == "prediction":
                eng.update(ma, tb, "create", None, store=store, now="2026-01-01T00:00:00Z")
            else:
                eng.codify(ma, tb, None, store=store, now="2026-01-01T00:00:00Z")
        elif action == "signal":
            if kind == "prediction":
                eng.update(ma, tb, "confirm", None, store=store, now="2026-01-01T00:00:00Z")
            else:
                eng.feedback(tb, True, "ctx", store=store, now="2026-01-01T00:00:00Z")
        elif action == "delete":
            eng.delete(tb, store=store)
        else:
            n = eng.nudge(ma)
            assert len(n.items) <= max_items
            assert n.items["item_id"].is_unique
            assert list(n.items["score"]) == sorted(n.items["score"], reverse=True)
    t = eng.tables
    # no two items in one store above the dedup cosine (scope "store" or "store+global" alike)
    items = t["items"]
    for _store, group in items.groupby("store"):
        if len(group) < 2:
            continue
        m = np.vstack(group["embedding"].to_numpy()).astype(np.float64)
        m /= np.linalg.norm(m, axis=1, keepdims=True)
        cos = m @ m.T
        np.fill_diagonal(cos, -1)
        assert cos.max() < params.dedup_cosine
    # likewise for matchers
    for _store, group in t["matchers"].groupby("store"):
        if len(group) < 2:
            continue
        m = np.vstack(group["embedding"].to_numpy()).astype(np.float64)
        m /= np.linalg.norm(m, axis=1, keepdims=True)
        cos = m @ m.T
        np.fill_diagonal(cos, -1)
        assert cos.max() < params.dedup_cosine
    # referential integrity of the cascade
    fk = "prediction_id" if kind == "prediction" else "behavior_id"
    assert set(t["edges"][fk]) <= set(items["id"])
    assert set(t["provenance"][fk]) <= set(items["id"])
    assert set(t["edges"]["matcher_id"]) <= set(t["matchers"]["id"])
    assert t["items"]["id"].is_unique and t["matchers"]["id"].is_unique and t["provenance"]["id"].is_unique
