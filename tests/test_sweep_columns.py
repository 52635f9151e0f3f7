"""sweep: one column set per engine and split, whatever metrics are optimised.

Sweeps of one engine on one split, optimising different metrics (one or
several), return the same columns in the same order: absent scores are NaN,
never missing columns, so two sweeps concatenate into one aligned frame.
Also through the cache, on Dask, with Optuna and from the command line.
"""

import dataclasses
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import TimeSeriesSplit

from tests._sweep_logs import interaction_log
from thatchlab.core.errors import InputError
from thatchlab.sweep import best, get_engine, holdout_segments, pareto, sweep
from thatchlab.sweep._columns import META_COLUMNS, score_segments
from thatchlab.sweep._runner import SCORED_COLUMN

SPLITS = {"holdout": 0.2, "folds": TimeSeriesSplit(n_splits=3)}

#: engine -> (search space, two single metrics, a list of metrics)
CASES = {
    "prediction": ({"k": [2.0, 5.0], "threshold": [0.55, 0.6]}, "log_loss", "interruption_rate",
                   ["coverage", "brier"]),
    "behavior": ({"k": [2.0, 5.0], "threshold": [0.55, 0.6]}, "brier", "wrong_silent_follow_rate",
                 ["interruption_rate", "ece"]),
    "belief": ({"episodic": [3.0, 7.0]}, "brier", "auc", ["useful_now_recall", "brier"]),
    "calibration": ({"half_life_days": [7.0, 30.0]}, "caller_brier", "derived_ece",
                    ["derived_log_loss", "caller_ece"]),
    "anticipation": ({"k": [1, 3]}, "hit_rate_at_k", "false_prefetches_per_session",
                     ["prefetch_precision", "recall_at_k"]),
}


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return fn(*args, **kw)


@pytest.fixture(scope="module")
def logs():
    from thatchlab.synth import BeliefWorld, PatternWorld, RecallWorld
    from thatchlab.synth.behavior import BehaviorWorld

    pred, emb = interaction_log(n_events=300, seed=1)
    bw = BehaviorWorld(seed=0)
    return {"prediction": (pred, emb), "behavior": (bw.log(150), bw.lookup_embedder()),
            "belief": (BeliefWorld(seed=0).log(n_memories=30, days=60), None),
            "calibration": (RecallWorld(n_memories=20, n_recalls=300, seed=1).log, None),
            "anticipation": (PatternWorld(n_workspaces=1, days=21, seed=0).generate(), None)}


def _sweep(logs, engine, metric, holdout=0.2, **kw):
    log, emb = logs[engine]
    return _quiet(sweep, log, CASES[engine][0], metric, engine=engine, embedder=emb, holdout=holdout, **kw)


@pytest.mark.parametrize("split", list(SPLITS))
@pytest.mark.parametrize("engine", list(CASES))
def test_every_metric_gives_the_same_columns(logs, engine, split):
    holdout = SPLITS[split]
    _, one, other, several = CASES[engine]
    a = _sweep(logs, engine, one, holdout)
    b = _sweep(logs, engine, other, holdout)
    c = _sweep(logs, engine, several, holdout)
    assert list(a.columns) == list(b.columns) == list(c.columns)
    assert a.attrs["metric"] == one and b.attrs["metric"] == other and c.attrs["metric"] == several[0]
    assert c.attrs["metrics"] == several
    # the declared layout: every parameter, every score in every segment, the bookkeeping last
    spec = get_engine(engine)
    fields = [f.name for f in dataclasses.fields(spec.params_class)]
    names = score_segments(holdout_segments(_times(logs, engine), holdout))
    folds = [n for n in names if n not in ("val", "test")]
    assert bool(folds) == (split == "folds")
    scores = []
    for seg in names:
        kept = spec.metrics if (folds and seg == "val") else spec.score_names()
        scores += [f"{seg}_{s}" for s in kept]
    assert list(a.columns) == fields + scores + list(META_COLUMNS)
    # nothing is reordered by the optimised metric: columns lead with the registered first metric
    first = next(c for c in a.columns if c.startswith("val_"))
    assert first == f"val_{next(iter(spec.metrics))}"
    # the scores an engine fills do not depend on what is optimised
    for res, asked in ((a, [one]), (b, [other]), (c, several)):
        filled = spec.filled(asked)
        for col in scores:
            score = col.split("_", 1)[1]
            if score not in filled:
                assert res[col].isna().all(), (asked, col)
        common = [col for col in scores if col.split("_", 1)[1] in spec.filled([one])
                  and col.split("_", 1)[1] in filled]
        pd.testing.assert_frame_equal(res[fields + common], a[fields + common])
    # one aligned frame
    both = pd.concat([a, b, c], ignore_index=True)
    assert list(both.columns) == list(a.columns) and len(both) == 3 * len(a)


def _times(logs, engine):
    log, emb = logs[engine]
    spec = get_engine(engine)
    kw = {"embedder": emb} if emb is not None else {}
    return spec.prepare(log, spec.params_class(), **kw).times


@pytest.mark.parametrize("engine", ["prediction", "behavior"])
def test_forecast_requests_leave_the_regime_scores_nan(logs, engine):
    forecast = _sweep(logs, engine, "log_loss")
    regime = _sweep(logs, engine, "interruption_rate")
    for seg in ("val", "test"):
        for score in ("interruption_rate", "wrong_silent_follow_rate", "coverage", "n_messages"):
            assert forecast[f"{seg}_{score}"].isna().all()
            assert regime[f"{seg}_{score}"].notna().any()
        for score in ("log_loss", "brier", "ece", "n_forecasts"):
            np.testing.assert_array_equal(forecast[f"{seg}_{score}"].to_numpy(np.float64),
                                          regime[f"{seg}_{score}"].to_numpy(np.float64))
    # the unscored metric is named, not silently picked as all-NaN
    with pytest.raises(InputError, match="no scores in column 'val_interruption_rate'"):
        best(forecast, "interruption_rate")
    with pytest.raises(InputError, match="no scores in column 'val_coverage'"):
        pareto(forecast, ["log_loss", "coverage"])
    with pytest.raises(InputError, match="no scores in column 'val_coverage'"):
        best(forecast, "log_loss", constraint={"coverage": (">=", 0.1)})


@pytest.mark.parametrize("engine", ["prediction", "belief"])
def test_intervals_columns_are_the_same_for_every_metric(logs, engine):
    _, one, other, several = CASES[engine]
    a = _sweep(logs, engine, one, intervals=10, seed=1)
    b = _sweep(logs, engine, other, intervals=10, seed=1)
    c = _sweep(logs, engine, several, intervals=10, seed=1)
    assert list(a.columns) == list(b.columns) == list(c.columns)
    plain = _sweep(logs, engine, one)
    spec = get_engine(engine)
    bounds = [f"{seg}_{m}_{end}" for seg in ("val", "test") for m in spec.metrics for end in ("lo", "hi")]
    assert [col for col in a.columns if col not in plain.columns] == bounds
    for res, asked in ((a, [one]), (b, [other]), (c, several)):
        for seg in ("val", "test"):
            for m in spec.metrics:
                lo = res[f"{seg}_{m}_lo"]
                assert lo.notna().any() if m in asked else lo.isna().all(), (asked, seg, m)


def _counting_prediction_spec():
    """The prediction engine's spec, counting in ``calls["n"]`` the configurations it evaluates."""
    base = get_engine("prediction")
    calls = {"n": 0}

    def counting(prepared, params_list, segments, metric=None, boot=None):
        calls["n"] += len(params_list)
        return base.evaluate(prepared, params_list, segments, metric, boot)

    return dataclasses.replace(base, evaluate=counting), calls


def test_cache_keeps_the_columns_and_never_reuses_rows_scored_for_less(logs, tmp_path):
    log, emb = logs["prediction"]
    space = CASES["prediction"][0]
    spec, calls = _counting_prediction_spec()
    cache = tmp_path / "c.parquet"

    def run(metric, engine=spec):
        calls["n"] = 0
        return _quiet(sweep, log, space, metric, engine=engine, embedder=emb, cache=cache)

    fresh_f = _quiet(sweep, log, space, "log_loss", embedder=emb)
    fresh_r = _quiet(sweep, log, space, "interruption_rate", embedder=emb)
    forecast = run("log_loss")
    assert calls["n"] == 4
    regime = run("interruption_rate")
    assert calls["n"] == 4  # the forecast rows hold no regime score: rescored
    pd.testing.assert_frame_equal(regime, fresh_r)
    for metric, fresh in (("log_loss", fresh_f), ("interruption_rate", fresh_r),
                          (["wrong_silent_follow_rate", "log_loss"], None)):
        again = run(metric)
        assert calls["n"] == 0, metric
        assert list(again.columns) == list(forecast.columns)
        assert SCORED_COLUMN not in again.columns
        if fresh is not None:
            pd.testing.assert_frame_equal(again.drop(columns="sweep_id"), fresh.drop(columns="sweep_id"))
    pd.testing.assert_frame_equal(forecast.drop(columns="sweep_id"), fresh_f.drop(columns="sweep_id"))
    # every request keeps its per-cluster sums through the cache
    assert ("interruption_rate", "test") in run("interruption_rate").attrs["clusters"].num_index
    assert ("log_loss", "test") in run("log_loss").attrs["clusters"].num_index


@pytest.mark.parametrize("absent", ["dropped", "nan"])
def test_an_older_cache_is_reused_only_for_what_its_rows_hold(logs, tmp_path, absent):
    """Rows written without a record of their scores (older caches), in the old column order:
    regime rows serve a regime request; forecast-only rows under the same sweep id do not."""
    log, emb = logs["prediction"]
    space = CASES["prediction"][0]
    spec, calls = _counting_prediction_spec()
    cache = tmp_path / "c.parquet"
    fresh = _quiet(sweep, log, space, "interruption_rate", embedder=emb, cache=cache)
    rows = pd.read_parquet(cache).drop(columns=SCORED_COLUMN)
    old = rows[list(rows.columns[::-1])]  # another column order
    old.to_parquet(cache, index=False)
    calls["n"] = 0
    res = _quiet(sweep, log, space, "interruption_rate", engine=spec, embedder=emb, cache=cache)
    assert calls["n"] == 0
    pd.testing.assert_frame_equal(res, fresh)
    regime = [c for c in rows.columns if c.split("_", 1)[-1] in
              ("interruption_rate", "wrong_silent_follow_rate", "coverage", "n_messages")]
    # forecast-only rows under the same sweep id: the regime columns missing, or NaN beside other rows
    (rows.drop(columns=regime) if absent == "dropped" else rows.assign(**{c: np.nan for c in regime})
     ).to_parquet(cache, index=False)
    calls["n"] = 0
    res = _quiet(sweep, log, space, "interruption_rate", engine=spec, embedder=emb, cache=cache)
    assert calls["n"] == 4
    pd.testing.assert_frame_equal(res, fresh)


def test_optuna_and_dask_give_the_same_columns(logs):
    distributed = pytest.importorskip("distributed")
    log, _ = logs["belief"]
    grid = _sweep(logs, "belief", "brier")
    opt = _quiet(sweep, log, {"episodic": (1.0, 30.0)}, "auc", engine="belief", search="optuna", n_trials=2)
    assert list(opt.columns) == list(grid.columns)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:
        remote = _quiet(sweep, log, CASES["belief"][0], "auc", engine="belief", backend="dask", client=client)
        pred, emb = logs["prediction"]
        local = _quiet(sweep, pred, CASES["prediction"][0], "interruption_rate", embedder=emb)
        on_dask = _quiet(sweep, pred, CASES["prediction"][0], "log_loss", embedder=emb, backend="dask",
                         client=client, chunk_size=1)
    pd.testing.assert_frame_equal(remote, grid)
    assert list(on_dask.columns) == list(local.columns)


def test_undeclared_scores_are_kept_after_the_declared_ones(logs):
    spec = dataclasses.replace(get_engine("belief"), extra_scores=())
    res = _quiet(sweep, logs["belief"][0], {"episodic": [7.0]}, "auc", engine=spec)
    assert list(res.columns) == list(_sweep(logs, "belief", "auc").columns)
    assert res["test_n_labelled"].gt(0).all()


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_cli_sweep_writes_the_same_columns_for_every_metric(logs, tmp_path, capsys):
    from thatchlab import logs as tl
    from thatchlab.cli import main

    log, emb = logs["prediction"]
    path, lookup = tmp_path / "log.jsonl", tmp_path / "lookup.csv"
    tl.write_interaction_log(log, path)
    vocab = list(pd.unique(pd.concat([log[c] for c in ("text", "matcher", "statement")]).dropna()))
    tl.write_table(pd.DataFrame({"text": vocab, "embedding": list(emb.embed_passages(vocab))}), lookup)
    headers = []
    for metric in ("log_loss", "interruption_rate"):
        out = tmp_path / f"{metric}.csv"
        with pytest.raises(SystemExit) as exc:
            main(["sweep", str(path), "--engine", "prediction", "--lookup", str(lookup), "--space",
                  json.dumps(CASES["prediction"][0]), "--metric", metric, "--out", str(out)])
            raise SystemExit(0)
        capsys.readouterr()
        assert (exc.value.code or 0) == 0
        headers.append(list(pd.read_csv(out).columns))
    assert headers[0] == headers[1]
    assert pd.read_csv(tmp_path / "log_loss.csv")["val_interruption_rate"].isna().all()
