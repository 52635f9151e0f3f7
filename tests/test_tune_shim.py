"""thatchlab.tune, split into fit / sweep / decide (issue 35), keeps every public name for one release."""

from __future__ import annotations

import importlib
import warnings

import pytest

import thatchlab
import thatchlab.decide
import thatchlab.fit
import thatchlab.sweep
import thatchlab.tune as tune

OLD_ALL = ["BaseFitter", "NotFittedError", "HalfLifeFitter", "exposure_segments", "DeriveWeightsFitter",
           "PriorFitter", "transfer_threshold", "sweep", "best", "BestConfig", "holdout_segments", "config_id",
           "EngineSpec", "ClusterStats", "Prepared", "Segment", "engines", "get_engine", "register_engine",
           "decide", "Decision", "save_sweep", "load_sweep", "combine_decisions", "decide_calibration",
           "planted_sweep", "pareto", "identification", "metric_direction", "policy", "MainJobPolicy",
           "PredictionOutcome", "RULES"]  # thatchlab.tune.__all__ before the split


@pytest.mark.parametrize("name", OLD_ALL)
def test_every_old_name_resolves_to_its_new_home_with_a_warning(name):
    home = tune.MOVED[name]
    vars(tune).pop(name, None)  # the shim caches a name after its first warning (an earlier test may have)
    with pytest.warns(DeprecationWarning, match=rf"thatchlab\.tune\.{name} is deprecated .* use {home}\.{name}"):
        value = getattr(tune, name)
    assert value is getattr(importlib.import_module(home), name)


def test_the_split_follows_what_users_do():
    assert sorted(tune.MOVED) == sorted(OLD_ALL)
    assert {n for n, home in tune.MOVED.items() if home == "thatchlab.fit"} == {
        "BaseFitter", "NotFittedError", "PriorFitter", "HalfLifeFitter", "exposure_segments",
        "DeriveWeightsFitter", "transfer_threshold"}
    assert {n for n, home in tune.MOVED.items() if home == "thatchlab.decide"} == {
        "decide", "Decision", "combine_decisions", "decide_calibration", "planted_sweep", "policy",
        "MainJobPolicy", "PredictionOutcome", "RULES"}


@pytest.mark.parametrize("old,new,name", [
    ("thatchlab.tune.prior", "thatchlab.fit.prior", "PriorFitter"),
    ("thatchlab.tune.halflife", "thatchlab.fit.halflife", "weibull_mle"),
    ("thatchlab.tune.persist", "thatchlab.sweep.persist", "sidecar_path"),
    ("thatchlab.tune.registry", "thatchlab.sweep.registry", "EngineSpec"),
    ("thatchlab.tune.resampling", "thatchlab.sweep.resampling", "cluster_resamples"),
    ("thatchlab.tune.policy", "thatchlab.decide.policy", "HOLDOUT"),
    ("thatchlab.tune.calibration_study", "thatchlab.decide.calibration_study", "planted_sweep"),
])
def test_old_public_modules_forward_with_a_warning(old, new, name):
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=rf"{old}\.{name} is deprecated .* use {new}\.{name}"):
        value = getattr(module, name)
    assert value is getattr(importlib.import_module(new), name)


def test_unknown_names_still_raise_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        tune.nope  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        importlib.import_module("thatchlab.tune.prior").nope  # noqa: B018


def test_the_new_packages_import_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in ("thatchlab.fit", "thatchlab.sweep", "thatchlab.decide"):
            importlib.reload(importlib.import_module(name))


def test_calling_the_sweep_package_still_sweeps_for_one_release(monkeypatch):
    seen = {}
    monkeypatch.setattr(thatchlab.sweep, "sweep", lambda *a, **k: seen.setdefault("args", (a, k)) or "ran")
    with pytest.warns(DeprecationWarning, match="call thatchlab.sweep.sweep"):
        thatchlab.sweep("log", {"k": [1.0]}, "brier")
    assert seen["args"] == (("log", {"k": [1.0]}, "brier"), {})
    assert thatchlab.best is thatchlab.sweep.best
    assert thatchlab.PriorFitter is thatchlab.fit.PriorFitter


@pytest.mark.parametrize("old,new,name", [
    ("thatchlab.tune.sweep", "thatchlab.sweep", "config_id"),
    ("thatchlab.tune.sweep", "thatchlab.sweep", "holdout_segments"),
    ("thatchlab.tune.decide", "thatchlab.decide", "Decision"),
    ("thatchlab.tune.decide", "thatchlab.decide._core", "EVIDENCE_COLUMNS"),
])
def test_the_old_sweep_and_decide_modules_forward_too(old, new, name):
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=rf"{old}\.{name} is deprecated .* use {new}\.{name}"):
        value = getattr(module, name)
    assert value is getattr(importlib.import_module(new), name)


def test_the_old_sweep_and_decide_modules_are_callable_as_the_functions_were(monkeypatch):
    # once `import thatchlab.tune.decide` has run, `thatchlab.tune.decide` may be that module: calling
    # it must still decide (with the warning), as calling the function of the same name did
    monkeypatch.setattr(thatchlab.decide, "decide", lambda *a, **k: ("decided", a))
    monkeypatch.setattr(thatchlab.sweep, "sweep", lambda *a, **k: ("swept", a))
    with pytest.warns(DeprecationWarning, match="use thatchlab.decide.decide"):
        assert importlib.import_module("thatchlab.tune.decide")("r", "log_loss") == ("decided", ("r", "log_loss"))
    with pytest.warns(DeprecationWarning, match="use thatchlab.sweep.sweep"):
        assert importlib.import_module("thatchlab.tune.sweep")("log", {}) == ("swept", ("log", {}))
