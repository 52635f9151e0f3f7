"""An engine rebuilt with ``from_tables`` nudges the stores its tables hold."""

from __future__ import annotations

import numpy as np
import pytest

from thatchlab.core.params import ScoringParams
from thatchlab.embed import LookupEmbedder
from thatchlab.scoring import BehaviorEngine, PredictionEngine

T0 = "2026-01-01T00:00:00Z"
PROMPT = "writing tests for the parser"


def _embedder():
    vecs = {"writing tests": [1.0, 0.0, 0.0], "use pytest": [0.0, 1.0, 0.0],
            PROMPT: [0.99, 0.1, 0.0], "global rule": [0.0, 0.0, 1.0]}
    return LookupEmbedder(vecs, name="lookup")


def _write(eng, matcher, statement, store=None):
    if isinstance(eng, PredictionEngine):
        return eng.update(matcher, statement, "confirm", store=store, now=T0)
    return eng.codify(matcher, statement, store=store, now=T0)


@pytest.mark.parametrize("cls", [PredictionEngine, BehaviorEngine])
def test_rebuilt_engine_nudges_the_tables_store(cls):
    emb = _embedder()
    eng = cls(emb, project_store="my-repo")
    _write(eng, "writing tests", "use pytest")
    before = eng.nudge(PROMPT)
    assert len(before) == 1 and "use pytest" in before.text

    back = cls.from_tables(eng.tables, embedder=emb)
    assert back.project_store == "my-repo"
    after = back.nudge(PROMPT)
    assert after.text == before.text
    assert after.regime == before.regime and after.stores == before.stores == ["my-repo", "global"]
    assert after.records() == before.records()


@pytest.mark.parametrize("cls", [PredictionEngine, BehaviorEngine])
def test_from_tables_project_store_choice(cls):
    emb = _embedder()
    # v0.1.30 writes each copy into the store named (from 07ecf87 on, a write finding "use
    # pytest" in global lands there instead, so no second project store would appear)
    eng = cls(emb, params=ScoringParams(release="v0.1.30"), project_store="my-repo")
    _write(eng, "writing tests", "use pytest")
    _write(eng, "global rule", "use pytest", store="global")
    # global rows do not count: the one other store is chosen
    assert cls.from_tables(eng.tables, embedder=emb).project_store == "my-repo"
    # a name given wins
    named = cls.from_tables(eng.tables, embedder=emb, project_store="elsewhere")
    assert named.project_store == "elsewhere"
    assert "use pytest" not in named.nudge(PROMPT).text
    # several project stores: the constructor's default
    _write(eng, "writing tests", "use pytest", store="other-repo")
    assert cls.from_tables(eng.tables, embedder=emb).project_store == "project"
    # no rows, or only global ones: the default too
    assert cls.from_tables(cls(emb).tables, embedder=emb).project_store == "project"
    only_global = cls(emb)
    _write(only_global, "global rule", "use pytest", store="global")
    assert cls.from_tables(only_global.tables, embedder=emb).project_store == "project"


def test_rebuilt_engine_writes_go_to_the_tables_store():
    emb = _embedder()
    eng = PredictionEngine(emb, project_store="my-repo")
    _write(eng, "writing tests", "use pytest")
    back = PredictionEngine.from_tables(eng.tables, embedder=emb)
    reply = back.update("writing tests", "use pytest", "confirm", now=T0)
    assert reply.store == "my-repo" and reply.action == "confirm"
    np.testing.assert_array_equal(back.state.items["confirm_count"], [2.0])
