"""Behavior engine: codify, ham/spam feedback, version-stamped seeding, laziness flags."""

import pytest

from tests._vectors import at_cos, basis
from thatchlab.core.errors import InputError
from thatchlab.embed import LookupEmbedder
from thatchlab.scoring import BehaviorEngine, default_behaviors, laziness_flags

T = "2026-03-01T12:00:00Z"


@pytest.fixture
def eng():
    vecs = {"before committing": basis(0), "run the tests": basis(1), "run all tests": at_cos(0.9, axis=1, other=2),
            "write docs": basis(3), "about to push": at_cos(0.9, other=4)}
    return BehaviorEngine(LookupEmbedder(vecs, name="toy"))


def test_codify_and_link_replies(eng):
    assert eng.codify("before committing", "run the tests", "caught bugs", now=T).text == \
        '[codified] project :: "run the tests" for "before committing"'
    assert eng.codify("about to push", "run all tests", "again", now=T).text == \
        '[linked] "run the tests" for "about to push" confidence=0.50 (0/0)'
    prov = eng.tables["provenance"]
    assert prov[["signal", "detail"]].values.tolist() == [["codify", "caught bugs"], ["codify", "again"]]


def test_feedback_ham_spam_and_not_found(eng):
    eng.codify("before committing", "run the tests", None, now=T)
    assert eng.feedback("run all tests", True, "it helped", now=T).text == \
        '[confirm] "run the tests" confidence=0.58 (1/0)'
    assert eng.feedback("run the tests", False, "not here", now=T).text == \
        '[disconfirm] "run the tests" confidence=0.50 (1/1)'
    assert eng.feedback("write docs", True, "x", now=T).text == \
        'No behavior matching "write docs" found in "project".'
    assert eng.feedback("run the tests", True, "x", store="global", now=T).text == \
        'No behavior matching "run the tests" found in "global".'
    prov = eng.tables["provenance"]
    assert prov[["signal", "detail"]].values.tolist()[1:] == [["confirm", "ham: it helped"],
                                                              ["disconfirm", "spam: not here"]]


def test_feedback_rejects_non_boolean_relevance(eng):
    eng.codify("before committing", "run the tests", None, now=T)
    with pytest.raises(InputError):
        eng.feedback("run the tests", "yes", "x", now=T)


def _seed_engine():
    d = default_behaviors()
    texts = list(d["situation"]) + list(d["behavior"]) + ["a user situation", "a user rule"]
    vecs = {t: basis(i, dim=len(texts)) for i, t in enumerate(texts)}
    return BehaviorEngine(LookupEmbedder(vecs, name="toy")), d


def test_seed_defaults_is_idempotent_and_versioned():
    eng, d = _seed_engine()
    first = eng.seed_defaults("1.0.0", now=T)
    assert first["action"].tolist() == ["created"] * len(d)
    items = eng.tables["items"]
    assert set(items["store"]) == {"global"}
    assert items["rationale"].iloc[0].endswith(f"seed-key:{d['key'].iloc[0]} seed-version:1.0.0")
    ids = items["id"].tolist()
    assert eng.seed_defaults("1.0.0", now=T)["action"].tolist() == ["skipped"] * len(d)
    assert eng.tables["items"]["id"].tolist() == ids
    n_matchers = len(eng.tables["matchers"])
    assert eng.seed_defaults("1.1.0", now=T)["action"].tolist() == ["replaced"] * len(d)
    assert len(eng.tables["matchers"]) == n_matchers  # matchers reused
    assert len(eng.tables["items"]) == len(d)
    assert all(r.endswith("seed-version:1.1.0") for r in eng.tables["items"]["rationale"])


def test_seed_defaults_never_touches_unstamped_behaviors():
    eng, d = _seed_engine()
    eng.codify(d["situation"].iloc[0], d["behavior"].iloc[0], "made by the user", store="global", now=T)
    eng.seed_defaults("1.0.0", now=T)
    items = eng.tables["items"]
    user = items[items["rationale"] == "made by the user"]
    assert len(user) == 1
    assert len(items) == len(d) + 1


def test_default_behaviors_are_ours_and_complete():
    d = default_behaviors()
    assert list(d.columns) == ["key", "situation", "behavior", "rationale"]
    assert len(d) == 6 and d["key"].is_unique


@pytest.mark.parametrize("text, flags", [
    ("Skip the tests when the change looks small", ["skip_checks"]),
    ("No need to read the docs", ["no_need"]),
    ("Assume the build works", ["assume"]),
    ("Commit without testing if in a hurry", ["without_verifying"]),
    ("Run the full test suite before every commit", []),
])
def test_laziness_flags(text, flags):
    assert laziness_flags(text) == flags
