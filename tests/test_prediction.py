"""Prediction engine: update replies, query, two roundings of displayed confidence."""

import pytest

from tests._vectors import at_cos, basis
from thatchlab.embed import LookupEmbedder
from thatchlab.scoring import PredictionEngine

T = "2026-03-01T12:00:00Z"
VECS = {"writing tests": basis(0), "use pytest": basis(1), "pytest please": basis(1),
        "testing code": at_cos(0.8, other=2), "I am writing tests now": basis(0),
        "nothing related at all": basis(5), "use tabs": basis(3), "editing files": basis(4)}


@pytest.fixture
def eng():
    return PredictionEngine(LookupEmbedder(VECS, name="toy"))


def test_update_reply_texts(eng):
    assert eng.update("writing tests", "use pytest", "create", "seen", now=T).text == \
        '[created] project :: "use pytest" for "writing tests"'
    assert eng.update("writing tests", "pytest please", "confirm", "said so", now=T).text == \
        '[confirm] "use pytest" confidence=0.58 (1/0)'
    assert eng.update("testing code", "use pytest", "create", "x", now=T).text == \
        '[linked] "use pytest" for "testing code" confidence=0.58 (1/0)'
    assert eng.update("writing tests", "use pytest", "soft", "hm", now=T).text == \
        '[soft] "use pytest" confidence=0.56 (1/0.25)'
    assert eng.update("writing tests", "use pytest", "disconfirm", "no", now=T).text == \
        '[disconfirm] "use pytest" confidence=0.48 (1/1.25)'
    assert eng.update("editing files", "use tabs", "disconfirm", "no", store="global", now=T).text == \
        '[created + disconfirm] "use tabs" confidence=0.42 (0/1)'


def test_create_is_confidence_neutral_and_recorded(eng):
    eng.update("writing tests", "use pytest", "confirm", "a", now=T)
    eng.update("testing code", "use pytest", "create", "b", now=T)
    t = eng.tables
    assert t["items"][["confirm_count", "disconfirm_count"]].values.tolist() == [[1.0, 0.0]]
    assert t["provenance"][["signal", "detail"]].values.tolist() == [["confirm", "a"], ["create", "b"]]
    assert len(t["edges"]) == 2


def test_two_roundings_in_nudge_one_in_update(eng):
    eng.update("writing tests", "use pytest", "soft", None, now=T)
    reply = eng.update("writing tests", "use pytest", "soft", None, now=T)
    # stored 2.5 / 5.5 = 0.4545…: replies format it directly, nudges round to 0.455 first
    assert reply.text == '[soft] "use pytest" confidence=0.45 (0/0.5)'
    n = eng.nudge("I am writing tests now")
    assert n.text.splitlines()[1] == "- [0.46 conf, 1 tests] When writing tests: you tend to use pytest"
    assert n.items["confidence"].tolist() == [0.455] and n.items["score"].tolist() == [0.455]


def test_query_reply_lines_and_store_scope(eng):
    eng.update("writing tests", "use pytest", "confirm", None, now=T)
    eng.update("editing files", "use tabs", "create", None, store="global", now=T)
    assert eng.query("I am writing tests now").text == \
        "[0.58 conf, 1 tests] When writing tests: you tend to use pytest"
    assert eng.query("I am writing tests now", store="global").text == "No matching predictions found."
    assert eng.query("nothing related at all").text == "No matching predictions found."


def test_query_keeps_all_items_above_query_threshold():
    vecs = {"m": basis(0), "the prompt text": basis(0)}
    for j in range(8):
        vecs[f"p{j}"] = basis(1 + j, dim=9)
    vecs = {k: v + [0.0] * (9 - len(v)) for k, v in vecs.items()}
    eng = PredictionEngine(LookupEmbedder(vecs))
    for j in range(8):
        eng.update("m", f"p{j}", "create", None, now=T)
    assert len(eng.query("the prompt text").items) == 8
    assert len(eng.nudge("the prompt text").items) == 5
    eng.set_params(query_threshold=1.01 - 0.02)
    assert len(eng.query("the prompt text").items) == 8
