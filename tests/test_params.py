"""ScoringParams: production defaults, validation, replace, dict round trip; and the
get_params/set_params contract (ParamsMixin) of every engine and fitter."""

import dataclasses

import pytest
from sklearn.base import clone

from thatchlab.belief import BeliefStore
from thatchlab.core.errors import InputError, ParamsError, ThatchlabError
from thatchlab.core.params import BeliefParams, EstimatorParamsError, ParamsMixin, ScoringParams
from thatchlab.embed import LookupEmbedder
from thatchlab.fit import DeriveWeightsFitter, HalfLifeFitter, PriorFitter
from thatchlab.scoring import BehaviorEngine, PredictionEngine


def test_production_defaults():
    p = ScoringParams()
    assert (p.k, p.p0, p.soft_weight) == (5.0, 0.5, 0.25)
    assert (p.threshold, p.query_threshold, p.dedup_cosine) == (0.60, 0.60, 0.85)
    assert (p.top_matchers, p.max_items, p.noise_floor, p.min_prompt_chars) == (5, 5, 0.01, 10)
    assert p.dedup_scope is None and p.item_dedup_scope == "store+global" and p.release == "07ecf87"
    assert (p.min_confidence, p.strong_confidence, p.strong_evidence, p.conflict_margin) == (0.0, 0.70, 3, 0.10)


def test_frozen():
    with pytest.raises(AttributeError):
        ScoringParams().k = 3


@pytest.mark.parametrize("field, value", [
    ("k", 0), ("k", -1), ("k", float("nan")), ("p0", 1.5), ("soft_weight", -0.1),
    ("threshold", 2), ("top_matchers", 0), ("top_matchers", 2.5), ("max_items", "5x"),
    ("dedup_scope", "global"), ("strong_evidence", -1), ("conflict_margin", -0.01), ("k", True),
])
def test_invalid_values_raise_params_error(field, value):
    with pytest.raises(ParamsError) as err:
        ScoringParams(**{field: value})
    assert field in str(err.value)
    assert isinstance(err.value, ThatchlabError)


def test_replace_validates_and_keeps_the_rest():
    p = ScoringParams().replace(k=10, dedup_scope="store")
    assert p.k == 10.0 and p.dedup_scope == "store" and p.p0 == 0.5
    with pytest.raises(ParamsError):
        ScoringParams().replace(k=-1)
    with pytest.raises(ParamsError, match="unknown"):
        ScoringParams().replace(kk=1)


def test_dict_round_trip_and_unknown_keys():
    p = ScoringParams(k=7, threshold=0.55, top_matchers=3)
    d = p.to_dict()
    assert d["k"] == 7.0 and d["top_matchers"] == 3
    assert ScoringParams.from_dict(d) == p
    with pytest.raises(ParamsError, match="unknown"):
        ScoringParams.from_dict({**d, "bogus": 1})


def test_integral_floats_are_coerced_to_int():
    assert ScoringParams(top_matchers=3.0).top_matchers == 3
    assert isinstance(ScoringParams(max_items=4.0).max_items, int)


# -- ParamsMixin: one get_params/set_params contract for every engine and fitter --------------

_EMB = LookupEmbedder({"writing tests": [1.0, 0.0], "use pytest": [0.0, 1.0]})

#: name → (factory, constructor parameters, held dataclass, a valid change, an invalid value)
ESTIMATORS = {
    "prediction": (lambda: PredictionEngine(_EMB), ["embedder", "params", "project_store", "clock", "strict_model"],
                   ScoringParams, ("k", 10.0), ("k", -1)),
    "behavior": (lambda: BehaviorEngine(_EMB, project_store="repo"), ["embedder", "params", "project_store", "clock",
                                                                       "strict_model"],
                 ScoringParams, ("threshold", 0.5), ("project_store", "  ")),
    "belief": (BeliefStore, ["params"], BeliefParams, ("preference", 50.0), ("preference", -1)),
    "prior": (PriorFitter, ["soft_weight", "alpha", "objective", "soft"], None, ("alpha", 0.1), ("soft_weight", -0.5)),
    "halflife": (HalfLifeFitter, ["alpha", "weibull"], None, ("weibull", True), ("alpha", 1.5)),
    "derive": (DeriveWeightsFitter, ["params", "fit_baseline", "alpha", "eps", "calibrate", "random_state"], None, ("eps", 1e-4),
               ("fit_baseline", "yes")),
}


@pytest.fixture(params=list(ESTIMATORS))
def case(request):
    factory, init, held, change, invalid = ESTIMATORS[request.param]
    return factory(), init, held, change, invalid


def _field_names(held):
    return [f.name for f in dataclasses.fields(held)] if held is not None else []


def test_every_engine_and_fitter_uses_the_mixin(case):
    obj = case[0]
    assert isinstance(obj, ParamsMixin)
    assert type(obj).get_params is ParamsMixin.get_params and type(obj).set_params is ParamsMixin.set_params


def test_get_params_keys_are_the_constructor_args_and_the_dataclass_fields(case):
    obj, init, held, _, _ = case
    assert list(obj.get_params(deep=False)) == init
    assert list(obj.get_params()) == init + _field_names(held)
    if held is not None:
        assert isinstance(obj.params, held)
        assert obj.get_params()["params"] is obj.params
        assert {k: obj.get_params()[k] for k in _field_names(held)} == dataclasses.asdict(held())


def test_set_params_of_get_params_is_a_noop_returning_self(case):
    obj, _, held, _, _ = case
    before = obj.get_params()
    held_before = obj.params if held is not None else None
    assert obj.set_params(**before) is obj
    assert obj.get_params() == before
    assert obj.set_params() is obj and obj.get_params() == before
    if held is not None:
        assert obj.params is held_before  # an unchanged dataclass is not even rebuilt


def test_set_params_changes_exactly_the_named_parameter(case):
    obj, _, held, (name, value), _ = case
    before = obj.get_params()
    assert obj.set_params(**{name: value}) is obj
    after = obj.get_params()
    assert after[name] == value
    changed = {k for k in after if k != "params" and after[k] != before[k]}
    assert changed == {name}
    if held is not None:
        assert getattr(obj.params, name) == value and isinstance(obj.params, held)


def test_unknown_name_raises_params_error_listing_every_valid_name(case):
    obj, init, held, _, _ = case
    before = obj.get_params()
    with pytest.raises(ParamsError) as err:
        obj.set_params(bogus=1)
    msg = str(err.value)
    assert "unknown parameter(s) ['bogus']" in msg and type(obj).__name__ in msg
    assert msg.endswith("valid parameters: " + ", ".join(init + _field_names(held)))
    assert isinstance(err.value, InputError) and isinstance(err.value, EstimatorParamsError)
    assert obj.get_params() == before


def test_invalid_value_raises_params_error_and_changes_nothing(case):
    obj, _, _, (good, good_value), (name, value) = case
    before = obj.get_params()
    with pytest.raises(ParamsError, match=name):
        obj.set_params(**{good: good_value, name: value})
    assert obj.get_params() == before  # the valid change in the same call is undone too


def test_invalid_constructor_value_raises_params_error():
    with pytest.raises(ParamsError, match="alpha"):
        PriorFitter(alpha=0)
    with pytest.raises(ParamsError, match="alpha"):
        HalfLifeFitter(alpha="0.05")
    with pytest.raises(ParamsError, match="params: expected CalibrationParams"):
        DeriveWeightsFitter(params=ScoringParams())
    with pytest.raises(ParamsError, match="eps"):
        DeriveWeightsFitter(eps=0.5)


def test_constructor_copy_and_sklearn_clone_give_equal_params(case):
    obj, _, _, (name, value), _ = case
    obj.set_params(**{name: value})
    copy = type(obj)(**obj.get_params(deep=False))
    assert copy is not obj and copy.get_params() == obj.get_params()
    cloned, want = clone(obj).get_params(), obj.get_params()
    cloned.pop("embedder", None), want.pop("embedder", None)  # scikit-learn deep-copies the embedder
    assert cloned == want and cloned[name] == value


def test_params_dataclass_of_the_wrong_type_is_refused():
    eng = PredictionEngine(_EMB)
    with pytest.raises(ParamsError, match="params: expected ScoringParams, got BeliefParams"):
        eng.set_params(params=BeliefParams())
    assert eng.params == ScoringParams()
    store = BeliefStore()
    with pytest.raises(ParamsError, match="params: expected BeliefParams, got dict"):
        store.set_params(params={"preference": 3})
    assert store.params == BeliefParams()


def test_fields_apply_on_top_of_a_new_dataclass():
    eng = PredictionEngine(_EMB).set_params(params=ScoringParams(p0=0.3), k=7)
    assert (eng.params.k, eng.params.p0) == (7.0, 0.3)
    assert eng.get_params()["params"] == ScoringParams(k=7, p0=0.3)
    assert BeliefStore().set_params(plan=3, state=4).params == BeliefParams(plan=3, state=4)


def test_engine_embedder_is_reported_as_given_without_loading_a_model():
    eng = PredictionEngine()
    assert eng.get_params()["embedder"] is None and eng.model_name is None
    assert eng.set_params(embedder=_EMB).get_params()["embedder"] is _EMB
    assert eng.embedder is _EMB


def test_replays_take_a_flat_mapping_of_parameters():
    from thatchlab.core.errors import ParamsError as PE

    assert ScoringParams.coerce(None) == ScoringParams()
    assert ScoringParams.coerce({"k": 2.0}) == ScoringParams(k=2.0)
    assert BeliefParams.coerce({"plan": 3}) == BeliefParams(plan=3)
    p = ScoringParams(p0=0.3)
    assert ScoringParams.coerce(p) is p
    with pytest.raises(PE, match=r"unknown parameter\(s\) \['kk'\]"):
        ScoringParams.coerce({"kk": 1})
    with pytest.raises(PE, match="params: expected ScoringParams or a mapping of its fields, got BeliefParams"):
        ScoringParams.coerce(BeliefParams())
