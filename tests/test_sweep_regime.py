"""Regime sweeps broadcast thresholds, strong bars and margins (issue 16, item 3).

The amortised evaluation (one candidate table per nudge group, one item
selection per threshold, the strong bars and margins as columns) must give
exactly what one ``plan.run`` per nudge setting gives, reclassified per
regime setting: every score, interval and per-session sum, bit for bit.
"""

import dataclasses
import itertools
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from thatchlab import logs
from thatchlab.core.params import ScoringParams
from thatchlab.embed import LookupEmbedder
from thatchlab.metrics.scoring import regime_outcomes
from thatchlab.sweep import get_engine, holdout_segments, sweep
from thatchlab.sweep._scoring_engines import (
    _REGIME_ESTIMATOR,
    _REGIME_FIELDS,
    METRIC_SOFT_WEIGHT,
    _events_sums,
    _forecast_scores,
    _local,
    _ratio_interval,
    _regime_scores,
    regime_cluster_sums,
    regimes_from_nudges,
)
from thatchlab.sweep.registry import (
    CLUSTERS_KEY,
    bootstrap_interval,
    cluster_resamples,
    metric_list,
    segment_clusters,
    segment_stream,
)
from thatchlab.synth import PreferenceWorld

DATA = Path(__file__).resolve().parents[1] / "data"
METRICS = ("interruption_rate", "wrong_silent_follow_rate", "coverage", "nudge_net_rate", "log_loss", "ece")


def per_setting(prepared, params_list, segments, metric=None, boot=None):
    """The regime evaluation before the broadcast: one ``plan.run`` per nudge-determining
    setting, its nudges reclassified per regime setting (the reference)."""
    wanted = metric_list(metric)
    plans = prepared.data["plans"]
    rows = [{CLUSTERS_KEY: {}} for _ in params_list]
    universes = {seg.name: segment_clusters(prepared, seg) for seg in segments}
    resamples = ({seg.name: cluster_resamples(len(universes[seg.name]), boot["n"], boot["seed"],
                                              segment_stream(seg.name)) for seg in segments} if boot else {})
    by_nudge: dict = {}
    for i, p in enumerate(params_list):
        key = tuple(v for f, v in p.to_dict().items() if f not in _REGIME_FIELDS)
        by_nudge.setdefault(key, []).append(i)
    for group in by_nudge.values():
        p0_ = params_list[group[0]]
        plan = plans[(float(p0_.dedup_cosine), p0_.dedup_scope, p0_.release)]
        res = plan.run(p0_, metrics=False)
        forecast, fsums = {}, {}
        for seg in segments:
            ev = res.events[seg.mask(res.events["position"])]
            # one metric for every configuration: soft rows weigh production's default soft weight
            forecast[seg.name] = _forecast_scores(ev, METRIC_SOFT_WEIGHT)
            fsums[seg.name] = _events_sums(prepared, universes[seg.name], ev, METRIC_SOFT_WEIGHT)
        for i in group:
            p = params_list[i]
            events = res.events.assign(regime=regimes_from_nudges(res.events, res.nudges, p))
            outcomes = regime_outcomes(events, res.nudges)
            for seg in segments:
                oc = outcomes[seg.mask(outcomes["position"])]
                universe = universes[seg.name]
                rsums = regime_cluster_sums(oc, _local(prepared, universe, oc["position"]), len(universe))
                sums = {**fsums[seg.name], **rsums}
                rows[i].update({f"{seg.name}_{k}": v for k, v in forecast[seg.name].items()})
                rows[i].update({f"{seg.name}_{k}": v for k, v in _regime_scores(oc).items()})
                rows[i][CLUSTERS_KEY].update({(m, seg.name): v for m, v in sums.items()})
                for m in wanted if boot else ():
                    if m in sums:
                        lo, hi = _ratio_interval(*sums[m], resamples[seg.name], boot["alpha"])[0]
                    else:
                        ev = res.events[seg.mask(res.events["position"])]
                        lo, hi = bootstrap_interval(
                            ev, lambda d, m=m, w=p.soft_weight: _forecast_scores(d, w)[m], n=boot["n"],
                            alpha=boot["alpha"], seed=boot["seed"], cluster="session",
                            stream=segment_stream(seg.name))
                    rows[i][f"{seg.name}_{m}_lo"], rows[i][f"{seg.name}_{m}_hi"] = lo, hi
            rows[i]["estimator"] = _REGIME_ESTIMATOR
    return rows


def _same_value(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and np.isnan(a):
        return np.isnan(b)
    return a == b


def assert_rows_identical(got, ref):
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        assert list(g) == list(r)
        for key in r:
            if key == CLUSTERS_KEY:
                continue
            assert _same_value(g[key], r[key]), (key, g[key], r[key])
        gc, rc = g[CLUSTERS_KEY], r[CLUSTERS_KEY]
        assert list(gc) == list(rc)
        for key in rc:
            for a, b in zip(gc[key], rc[key]):
                assert a.dtype == b.dtype == np.float64 and a.shape == b.shape
                assert np.array_equal(a, b), key
        for seg in {s for _, s in rc}:
            # shared denominators stay shared (ClusterStats stacks them once)
            assert gc[("log_loss", seg)][1] is gc[("brier", seg)][1]
            assert gc[("interruption_rate", seg)][1] is gc[("coverage", seg)][1]


def _moves(params_list, rows, field, metric="val_interruption_rate") -> bool:
    """Whether changing ``field`` alone changes ``metric`` somewhere in the grid."""
    frame = pd.DataFrame([p.to_dict() | {metric: r[metric]} for p, r in zip(params_list, rows)])
    others = [f for f in frame.columns if f not in (field, metric)]
    return bool((frame.groupby(others, dropna=False)[metric].nunique() > 1).any())


def _prepared(log, emb, params_list, engine="prediction"):
    spec = get_engine(engine)
    prepared = spec.prepare(log, ScoringParams(), embedder=emb, params_list=params_list)
    return spec, prepared, holdout_segments(prepared.times, 0.2)


def _grid(base, **axes):
    names = list(axes)
    return [base.replace(**dict(zip(names, combo))) for combo in itertools.product(*axes.values())]


@pytest.fixture(scope="module")
def world():
    w = PreferenceWorld(seed=0)
    return w.log(500), w.lookup_embedder()


def _random_vectors(log, dim=8, seed=7):
    texts = sorted({t for c in ("text", "matcher", "statement") for t in log[c].dropna()})
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((len(texts), dim)).astype(np.float32)
    return LookupEmbedder(dict(zip(texts, vectors)), name=f"random-{dim}")


@pytest.fixture(scope="module")
def interactions():
    log = logs.read_interaction_log(DATA / "interactions.jsonl")
    return log, _random_vectors(log)


def test_broadcast_equals_per_setting_replays_on_a_synthetic_world(world):
    log, emb = world
    params_list = _grid(ScoringParams(), k=[2.0, 5.0], threshold=[0.3, 0.6, 0.8, 0.85, 0.9],
                        strong_confidence=[0.0, 0.55, 0.7, 0.9], strong_evidence=[0, 1, 3, 8],
                        conflict_margin=[0.0, 0.004, 0.03, 0.1, 1.0])
    spec, prepared, segments = _prepared(log, emb, params_list)
    got = spec.evaluate(prepared, params_list, segments, METRICS, None)
    assert_rows_identical(got, per_setting(prepared, params_list, segments, METRICS, None))
    # the grid is not degenerate: regimes move with every broadcast field
    for field in ("threshold", "strong_confidence", "strong_evidence", "conflict_margin", "k"):
        assert _moves(params_list, got, field), field
    frame = pd.DataFrame([{k: v for k, v in r.items() if k != CLUSTERS_KEY} for r in got])
    assert frame["val_coverage"].nunique() >= 3
    assert frame["val_wrong_silent_follow_rate"].notna().any()


def test_broadcast_equals_per_setting_replays_on_the_interaction_data(interactions):
    log, emb = interactions
    params_list = _grid(ScoringParams(), max_items=[2, 5], threshold=[0.2, 0.4, 0.55, 0.7],
                        strong_confidence=[0.0, 0.6, 0.8], strong_evidence=[0, 2, 4],
                        conflict_margin=[0.0, 0.05, 0.2])
    spec, prepared, segments = _prepared(log, emb, params_list)
    got = spec.evaluate(prepared, params_list, segments, METRICS, None)
    assert_rows_identical(got, per_setting(prepared, params_list, segments, METRICS, None))
    for field in ("threshold", "strong_confidence", "strong_evidence", "conflict_margin", "max_items"):
        assert _moves(params_list, got, field, "test_interruption_rate"), field


@pytest.mark.parametrize("engine, path", [("prediction", "interactions.jsonl"),
                                          ("behavior", "behavior_interactions.jsonl")])
def test_edge_settings_equal_per_setting(engine, path):
    """Thresholds below the noise floor or above every cosine, prompts all too short, one
    matcher or one item per message, a high noise floor; both engines."""
    log = logs.read_interaction_log(DATA / path)
    emb = _random_vectors(log, dim=6, seed=11)
    params_list = [*_grid(ScoringParams(), threshold=[-0.5, 0.0, 0.5, 1.0], min_prompt_chars=[10, 10_000],
                          strong_confidence=[0.0, 0.7], conflict_margin=[0.0, 0.5]),
                   *_grid(ScoringParams(), threshold=[0.3, 0.6], top_matchers=[1, 5], max_items=[1, 3],
                          noise_floor=[0.01, 0.5], strong_evidence=[0, 2], conflict_margin=[0.0, 0.1])]
    spec, prepared, segments = _prepared(log, emb, params_list, engine)
    got = spec.evaluate(prepared, params_list, segments, METRICS, None)
    assert_rows_identical(got, per_setting(prepared, params_list, segments, METRICS, None))


def test_intervals_and_chunks_equal_per_setting(world):
    """In chunks (the table reused across them, or rebuilt lower) and with intervals."""
    log, emb = world
    params_list = _grid(ScoringParams(), threshold=[0.6, 0.3, 0.45], strong_confidence=[0.5, 0.7],
                        conflict_margin=[0.0, 0.1])
    spec, prepared, segments = _prepared(log, emb, None)  # no floors known at prepare time
    boot = {"n": 12, "alpha": 0.1, "seed": 3}
    ref = per_setting(prepared, params_list, segments, METRICS, boot)
    got = [row for s in range(0, len(params_list), 5)
           for row in spec.evaluate(prepared, params_list[s:s + 5], segments, METRICS, boot)]
    assert_rows_identical(got, ref)


@pytest.mark.parametrize("data", ["world", "interactions"])
def test_sweep_frames_and_cluster_sums_equal_per_setting(data, request):
    log, emb = request.getfixturevalue(data)
    space = {"threshold": [0.35, 0.6, 0.85], "strong_confidence": [0.5, 0.7], "strong_evidence": [1, 3],
             "conflict_margin": [0.0, 0.1]}
    spec = get_engine("prediction")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        got = sweep(log, space, list(METRICS[:2]), embedder=emb, chunk_size=7)
        ref = sweep(log, space, list(METRICS[:2]), embedder=emb, chunk_size=7,
                    engine=dataclasses.replace(spec, evaluate=per_setting))
    pd.testing.assert_frame_equal(got, ref, check_exact=True)
    a, b = got.attrs["clusters"], ref.attrs["clusters"]
    assert a.config_ids == b.config_ids and list(a.num) == list(b.num)
    for key in a.num:
        assert np.array_equal(a.num[key], b.num[key]) and np.array_equal(a.den[key], b.den[key])
    assert a.nbytes() == b.nbytes()
