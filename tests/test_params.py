"""ScoringParams: production defaults, validation, replace, dict round trip."""

import pytest

from thatchlab.core.errors import ParamsError, ThatchlabError
from thatchlab.core.params import ScoringParams


def test_production_defaults():
    p = ScoringParams()
    assert (p.k, p.p0, p.soft_weight) == (5.0, 0.5, 0.25)
    assert (p.threshold, p.query_threshold, p.dedup_cosine) == (0.60, 0.60, 0.85)
    assert (p.top_matchers, p.max_items, p.noise_floor, p.min_prompt_chars) == (5, 5, 0.01, 10)
    assert p.dedup_scope == "store+global"
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
