"""The scoring engine: formulas, nudge rules, reply texts, dedup, failure atomicity.

Most tests run against both engines (the conformance suite): predictions and
behaviors are one engine with two configurations.
"""

import uuid

import numpy as np
import pandas as pd
import pytest

from tests._vectors import at_cos, basis
from thatchlab.core.errors import (
    EmbeddingError,
    EmbeddingLookupError,
    InputError,
    ThatchlabError,
    TimeError,
)
from thatchlab.core.params import ScoringParams
from thatchlab.embed import LookupEmbedder
from thatchlab.scoring import (
    ID_NAMESPACE,
    BehaviorEngine,
    PredictionEngine,
    deterministic_id,
    evidence_count,
    posterior_confidence,
)

T0 = "2026-11-29T21:00:00.123456Z"
T1 = "2026-11-30T08:15:30.999Z"


# ---------------------------------------------------------------- formulas
@pytest.mark.parametrize("c, d, k, p0, expected", [
    (0, 0, 5, 0.5, 0.5), (1, 0, 5, 0.5, 3.5 / 6), (0, 1, 5, 0.5, 2.5 / 6), (0, 0.25, 5, 0.5, 2.5 / 5.25),
    (3, 0, 5, 0.5, 5.5 / 8), (0, 0.5, 5, 0.5, 2.5 / 5.5), (2, 1, 10, 0.3, 5 / 13), (0, 0, 1, 0.9, 0.9),
])
def test_posterior_confidence_literals(c, d, k, p0, expected):
    assert posterior_confidence(c, d, k, p0) == pytest.approx(expected, abs=1e-15)


def test_posterior_is_vectorised():
    out = posterior_confidence(np.array([0, 1, 2]), np.array([0, 0, 1.25]))
    np.testing.assert_allclose(out, [0.5, 3.5 / 6, 4.5 / 8.25])


@pytest.mark.parametrize("c, d, n", [(0, 0, 0), (0, 0.25, 0), (0, 0.5, 1), (2, 0.25, 2), (2, 0.5, 3),
                                     (1, 1.75, 3), (0, 1.5, 2)])
def test_evidence_count_is_math_round(c, d, n):
    assert evidence_count(c, d) == n


def test_deterministic_id_formula():
    expected = str(uuid.uuid5(ID_NAMESPACE, "predictions\x1fproject\x1fuse tabs\x1f0"))
    assert deterministic_id("predictions", "project", "use tabs", 0) == expected
    assert deterministic_id("predictions", "project", "use tabs", 1) != expected


# ---------------------------------------------------------------- fixtures
ENGINES = {
    "prediction": (PredictionEngine, lambda e, m, s, sig="create", r=None, store=None, now=T0:
                   e.update(m, s, sig, r, store=store, now=now)),
    "behavior": (BehaviorEngine, lambda e, m, s, sig="codify", r=None, store=None, now=T0:
                 e.codify(m, s, r, store=store, now=now)),
}


@pytest.fixture(params=sorted(ENGINES))
def kind(request):
    return request.param


def make(kind, vectors, queries=None, **params):
    cls, write = ENGINES[kind]
    emb = LookupEmbedder(vectors, queries=queries, name="toy")
    return cls(emb, params=ScoringParams(**params)), write


def conf_at(eng, statement):
    items = eng.tables["items"]
    return float(items.loc[items["statement"] == statement, "confidence"].iloc[0])


# ---------------------------------------------------------------- nudge rules
def test_nudge_block_text_and_untested_verb(kind):
    vecs = {"writing tests": basis(0), "use pytest": basis(1), "I am writing tests now": basis(0)}
    eng, write = make(kind, vecs)
    write(eng, "writing tests", "use pytest")
    n = eng.nudge("I am writing tests now")
    header = {"prediction": "[thatch] User decision model", "behavior": "[thatch] Situational behaviors"}[kind]
    verb = {"prediction": "you may prefer", "behavior": "consider"}[kind]
    assert n.text == f"{header}\n- [0.50 conf, 0 tests] When writing tests: {verb} use pytest"
    assert n.regime == "ambiguous"
    row = n.items.iloc[0]
    assert (row["confidence"], row["evidence_count"], row["score"]) == (0.5, 0, 0.5)
    assert row["matcher_description"] == "writing tests" and row["statement"] == "use pytest"


def test_prompt_length_gate(kind):
    vecs = {"m": basis(0), "s": basis(1), "123456789": basis(0), "1234567890": basis(0)}
    eng, write = make(kind, vecs)
    write(eng, "m", "s")
    short = eng.nudge("123456789")
    assert short.regime == "skipped" and short.text == "" and len(short.items) == 0
    assert eng.nudge("1234567890").regime == "ambiguous"


@pytest.mark.parametrize("cos, surfaces", [(0.5996, True), (0.5995, True), (0.59949, False), (0.5994, False)])
def test_threshold_applies_to_rounded_cosine(kind, cos, surfaces):
    vecs = {"matcher": basis(0), "item": basis(3), "the prompt text": at_cos(cos)}
    eng, write = make(kind, vecs)
    write(eng, "matcher", "item")
    n = eng.nudge("the prompt text")
    assert (len(n.items) == 1) is surfaces
    if surfaces:
        assert n.items["cosine"].iloc[0] == 0.6 and n.items["score"].iloc[0] == 0.3


def test_noise_floor_drops_tiny_cosines_before_rounding(kind):
    vecs = {"m1": at_cos(0.0096, other=1), "i1": basis(3), "m2": at_cos(0.0104, other=2), "i2": basis(4),
            "the prompt text": basis(0)}
    eng, write = make(kind, vecs, threshold=0.0)
    write(eng, "m1", "i1")
    write(eng, "m2", "i2")
    # m1's cosine 0.0096 < 0.01 is dropped even though r3 would make it 0.01
    n = eng.nudge("the prompt text")
    assert n.items["statement"].tolist() == ["i2"]
    assert n.items["cosine"].tolist() == [0.01]


def test_top_matchers_then_ties_in_insertion_order(kind):
    # six matchers with the same rounded cosine; only the first five inserted count
    # (their mutual cosines are 0.81, below the matcher dedup cosine)
    vecs = {"the prompt text": basis(0, dim=16)}
    for j in range(6):
        vecs[f"m{j}"] = at_cos(0.9 + 0.0001 * (j % 2), dim=16, other=1 + j)  # r3 → 0.9 for all
        vecs[f"i{j}"] = basis(8 + j, dim=16)
    eng, write = make(kind, vecs, max_items=10)
    for j in range(6):
        write(eng, f"m{j}", f"i{j}")
    n = eng.nudge("the prompt text")
    assert sorted(n.items["statement"]) == ["i0", "i1", "i2", "i3", "i4"]


def test_statement_order_breaks_score_ties_in_code_points(kind):
    vecs = {"m": basis(0), "the prompt text": basis(0), "b rule": basis(1), "B rule": basis(2),
            "a rule": basis(3)}
    eng, write = make(kind, vecs)
    for s in ("b rule", "a rule", "B rule"):
        write(eng, "m", s)
    assert eng.nudge("the prompt text").items["statement"].tolist() == ["B rule", "a rule", "b rule"]


def test_item_reached_by_two_matchers_is_kept_once_with_its_best_row(kind):
    vecs = {"m-near": basis(0), "m-far": at_cos(0.8), "item": basis(3), "the prompt text": basis(0)}
    eng, write = make(kind, vecs)
    write(eng, "m-far", "item")
    write(eng, "m-near", "item")
    n = eng.nudge("the prompt text")
    assert len(n.items) == 1
    assert n.items["matcher_description"].iloc[0] == "m-near"
    assert n.items["score"].iloc[0] == 0.5  # 1.0 × 1 × 0.5, not summed with 0.8 × 0.5


def test_max_items_caps_the_nudge(kind):
    vecs = {"m": basis(0), "the prompt text": basis(0)}
    for j in range(7):
        vecs[f"rule {j}"] = basis(1 + j, dim=9)
    vecs = {k: (v + [0.0] * (9 - len(v))) for k, v in vecs.items()}
    eng, write = make(kind, vecs)
    for j in range(7):
        write(eng, "m", f"rule {j}")
    n = eng.nudge("the prompt text")
    assert n.items["statement"].tolist() == [f"rule {j}" for j in range(5)]


def test_min_confidence_is_off_by_default(kind):
    vecs = {"m": basis(0), "rule": basis(1), "the prompt text": basis(0)}
    eng, write = make(kind, vecs)
    write(eng, "m", "rule")
    assert len(eng.nudge("the prompt text").items) == 1
    eng.set_params(min_confidence=0.51)
    assert len(eng.nudge("the prompt text").items) == 0
    assert eng.nudge("the prompt text").regime == "none"


def _tagged_tables(kind):
    """Tables written by an embedder named ``model-a`` (8-d), plus one matcher and item of
    another dimension (4-d) tagged ``model-c``, and the passage vectors used."""
    vecs = {"m": basis(0), "m2": at_cos(0.8), "rule a": basis(1), "rule b": basis(2),
            "the prompt text": basis(0)}
    cls, write = ENGINES[kind]
    eng = cls(LookupEmbedder(vecs, name="model-a"))
    write(eng, "m", "rule a")
    write(eng, "m2", "rule b")
    tables = eng.tables
    fk = eng.config.tables["item_fk"]
    ts = tables["matchers"]["created_at"].iloc[0]
    extra_m = {"id": "m4", "store": "project", "description": "four dims",
               "embedding": np.asarray([1, 0, 0, 0], dtype=np.float32), "model": "model-c",
               "created_at": ts, "updated_at": ts}
    extra_i = {**tables["items"].iloc[0].to_dict(), "id": "i4", "statement": "rule c",
               "embedding": np.asarray([0, 1, 0, 0], dtype=np.float32), "model": "model-c"}
    tables["matchers"] = pd.concat([tables["matchers"], pd.DataFrame([extra_m])], ignore_index=True)
    tables["items"] = pd.concat([tables["items"], pd.DataFrame([extra_i])], ignore_index=True)
    tables["edges"] = pd.concat([tables["edges"], pd.DataFrame(
        [{"matcher_id": "m4", fk: "i4", "weight": 1.0, "created_at": ts}])], ignore_index=True)
    return cls, tables, vecs


def test_model_tags_are_informational(kind):
    # production matches on dimension only: rows tagged model-a answer an embedder named
    # model-b exactly as they answer model-a, and the nudge reports how many it scored
    cls, tables, vecs = _tagged_tables(kind)
    own = cls.from_tables(tables, embedder=LookupEmbedder(vecs, name="model-a"))
    other = cls.from_tables(tables, embedder=LookupEmbedder(vecs, name="model-b"))
    a, b = own.nudge("the prompt text"), other.nudge("the prompt text")
    assert b.items["statement"].tolist() == a.items["statement"].tolist() == ["rule a", "rule b"]
    assert b.items["score"].tolist() == a.items["score"].tolist() == [0.5, 0.4]
    assert b.text == a.text and b.regime == a.regime == "ambiguous"
    # the 4-d row (tagged model-c) is never scored, so it is never counted either
    assert (a.n_foreign_model, b.n_foreign_model) == (0, 2)
    qa, qb = own.query("the prompt text"), other.query("the prompt text")
    assert qb.text == qa.text and qb.items["statement"].tolist() == ["rule a", "rule b"]
    assert (qa.n_foreign_model, qb.n_foreign_model) == (0, 2)
    assert other.nudge("the prompt text", stores=["global"]).n_foreign_model == 0  # nothing scored there
    assert other.nudge("short").n_foreign_model == 0  # skipped: nothing scored


def test_other_dimensions_are_never_scored(kind):
    cls, tables, vecs = _tagged_tables(kind)
    four = {"a four-d prompt": [1, 0, 0, 0], "x": [1, 0, 0, 0]}
    eng = cls.from_tables(tables, embedder=LookupEmbedder(four, name="model-c"))
    n = eng.nudge("a four-d prompt")
    # production compares by dimension: the 4-d prompt meets only the 4-d row, whatever came first
    assert n.items["statement"].tolist() == ["rule c"] and n.n_foreign_model == 0
    eight = cls.from_tables(tables, embedder=LookupEmbedder(vecs, name="model-a"))
    assert "rule c" not in eight.nudge("the prompt text").items["statement"].tolist()


def test_writes_dedup_and_lookups_ignore_model_tags(kind):
    cls, tables, vecs = _tagged_tables(kind)
    _, write = ENGINES[kind]
    other = cls.from_tables(tables, embedder=LookupEmbedder(vecs, name="model-b"))
    res = write(other, "m", "rule a", now=T1).result
    # the matcher and the item tagged model-a are found: linked, nothing new
    assert (res.action, res.matcher_created, res.item_created, res.new_edges) == ("linked", False, False, ())
    assert res.matcher_id == tables["matchers"]["id"].iloc[0]
    assert other.state.n_matchers == 3 and other.state.n_items == 3
    if kind == "behavior":
        fb = other.feedback("rule b", True, "it helped", now=T1)
        assert (fb.action, fb.confirm_count) == ("confirm", 1.0)
    deleted = other.delete("rule a")
    assert (deleted.action, deleted.result.statement) == ("deleted", "rule a")
    assert other.state.items["statement"].tolist() == ["rule b", "rule c"]


def test_strict_model_filters_by_tag(kind):
    cls, tables, vecs = _tagged_tables(kind)
    _, write = ENGINES[kind]
    strict = cls.from_tables(tables, embedder=LookupEmbedder(vecs, name="model-b"), strict_model=True)
    assert strict.get_params(deep=False)["strict_model"] is True
    n = strict.nudge("the prompt text")
    # model-a rows are skipped, so nothing is scored and nothing is foreign
    assert len(n.items) == 0 and n.regime == "none" and n.n_foreign_model == 0
    assert strict.query("the prompt text").text == f"No matching {strict.config.plural} found."
    assert strict.delete("rule a").action == "not_found"
    res = write(strict, "m", "rule a", now=T1).result
    assert (res.action, res.matcher_created, res.item_created) == ("created", True, True)
    assert strict.state.matchers["model"].tolist() == ["model-a", "model-a", "model-c", "model-b"]
    # its own rows stay usable
    mine = strict.nudge("the prompt text")
    assert mine.items["statement"].tolist() == ["rule a"] and mine.items["score"].tolist() == [0.5]
    # strict_model is a constructor parameter: set_params toggles it and checks its type
    strict.set_params(strict_model=False)
    assert strict.nudge("the prompt text").n_foreign_model == 2
    with pytest.raises(InputError, match="strict_model"):
        strict.set_params(strict_model="yes")
    with pytest.raises(InputError, match="strict_model"):
        cls(strict_model=1)
    assert strict.strict_model is False


def test_untagged_rows_are_never_foreign(kind):
    cls, tables, vecs = _tagged_tables(kind)
    tables["matchers"]["model"] = None
    strict = cls.from_tables(tables, embedder=LookupEmbedder(vecs, name="model-b"), strict_model=True)
    n = strict.nudge("the prompt text")
    assert n.items["statement"].tolist() == ["rule a", "rule b"] and n.n_foreign_model == 0


def test_nudge_searches_project_and_global_only(kind):
    vecs = {"m": basis(0), "rule a": basis(1), "rule b": basis(2), "rule c": basis(3),
            "the prompt text": basis(0)}
    eng, write = make(kind, vecs)
    write(eng, "m", "rule a", store="global")
    write(eng, "m", "rule b")
    write(eng, "m", "rule c", store="elsewhere")
    assert sorted(eng.nudge("the prompt text").items["statement"]) == ["rule a", "rule b"]
    assert eng.nudge("the prompt text", stores=["elsewhere"]).items["statement"].tolist() == ["rule c"]


# ---------------------------------------------------------------- regimes
def _strong_engine(kind, second_cos=None):
    vecs = {"m": basis(0), "top rule": basis(1), "other rule": basis(2), "the prompt text": basis(0)}
    eng, write = make(kind, vecs)
    write(eng, "m", "top rule")
    write(eng, "m", "other rule")
    return eng


def _confirm(eng, statement, n, now=T1):
    for _ in range(n):
        if isinstance(eng, PredictionEngine):
            eng.update("m", statement, "confirm", None, now=now)
        else:
            eng.feedback(statement, True, "ctx", now=now)


def test_regime_strong_needs_confidence_evidence_and_no_competitor(kind):
    eng = _strong_engine(kind)
    _confirm(eng, "top rule", 3)  # (3+2.5)/8 = 0.6875 < 0.70
    assert eng.nudge("the prompt text").regime == "ambiguous"
    _confirm(eng, "top rule", 1)  # 6.5/9 = 0.722; other rule scores 0.5: 0.722 - 0.5 > 0.10
    n = eng.nudge("the prompt text")
    assert n.items["score"].tolist() == [0.722, 0.5]
    assert n.regime == "strong"


def test_regime_competing_margin_is_inclusive_in_thousandths(kind):
    eng = _strong_engine(kind)
    _confirm(eng, "top rule", 4)   # 0.722
    _confirm(eng, "other rule", 2)  # 4.5/7 = 0.643 → 0.722 − 0.643 = 0.079 ≤ 0.10: competing
    assert eng.nudge("the prompt text").regime == "ambiguous"
    eng.set_params(conflict_margin=0.078)
    assert eng.nudge("the prompt text").regime == "strong"
    eng.set_params(conflict_margin=0.079)  # exactly the gap: inclusive
    assert eng.nudge("the prompt text").regime == "ambiguous"


def test_regime_none_when_nothing_surfaces(kind):
    vecs = {"m": basis(0), "rule": basis(1), "the prompt text": basis(5)}
    eng, write = make(kind, vecs)
    write(eng, "m", "rule")
    n = eng.nudge("the prompt text")
    assert n.regime == "none" and n.text == ""


# ---------------------------------------------------------------- writes
def test_matcher_and_item_dedup_at_raw_cosine_085(kind):
    vecs = {"m": basis(0), "m close": at_cos(0.85), "m apart": at_cos(0.849),
            "rule": basis(3), "rule close": at_cos(0.851, axis=3, other=4), "rule apart": at_cos(0.84, axis=3, other=4)}
    eng, write = make(kind, vecs)
    write(eng, "m", "rule")
    write(eng, "m close", "rule close")
    write(eng, "m apart", "rule apart")
    t = eng.tables
    assert t["matchers"]["description"].tolist() == ["m", "m apart"]
    assert t["items"]["statement"].tolist() == ["rule", "rule apart"]
    assert len(t["edges"]) == 2  # (m, rule) linked once; (m apart, rule apart)


def test_item_dedup_scope_store_plus_global_or_store(kind):
    vecs = {"m": basis(0), "rule": basis(1), "rule again": basis(1)}
    eng, write = make(kind, vecs)
    write(eng, "m", "rule", store="global")
    write(eng, "m", "rule again", store="project")
    assert eng.tables["items"]["store"].tolist() == ["global"]
    eng2, write2 = make(kind, vecs, dedup_scope="store")
    write2(eng2, "m", "rule", store="global")
    write2(eng2, "m", "rule again", store="project")
    assert eng2.tables["items"]["store"].tolist() == ["global", "project"]


def test_existing_edge_keeps_its_weight(kind):
    vecs = {"m": basis(0), "rule": basis(1), "the prompt text": basis(0)}
    eng, write = make(kind, vecs)
    write(eng, "m", "rule")
    tables = eng.tables
    tables["edges"].loc[0, "weight"] = 0.5
    eng2 = type(eng).from_tables(tables, embedder=eng.embedder)
    write(eng2, "m", "rule")
    assert eng2.tables["edges"]["weight"].tolist() == [0.5]
    assert eng2.nudge("the prompt text").items["score"].tolist() == [0.25]


def test_timestamps_follow_production_formats(kind):
    vecs = {"m": basis(0), "rule": basis(1)}
    eng, write = make(kind, vecs)
    write(eng, "m", "rule", now=T0)
    t = eng.tables
    assert t["matchers"]["created_at"].tolist() == ["2026-11-29T21:00:00.123Z"]
    assert t["items"]["updated_at"].tolist() == ["2026-11-29T21:00:00.123Z"]
    assert t["edges"]["created_at"].tolist() == ["2026-11-29T21:00:00.123Z"]
    assert t["provenance"]["created_at"].tolist() == ["2026-11-29T21:00:00Z"]
    write(eng, "m", "rule", now=T1)  # create/codify on an existing item: counts unchanged
    assert eng.tables["items"]["updated_at"].tolist() == ["2026-11-29T21:00:00.123Z"]
    _confirm(eng, "rule", 1, now=T1)
    assert eng.tables["items"]["updated_at"].tolist() == ["2026-11-30T08:15:30.999Z"]
    assert eng.tables["matchers"]["updated_at"].tolist() == ["2026-11-29T21:00:00.123Z"]


def test_time_comes_from_now_then_clock(kind):
    vecs = {"m": basis(0), "rule": basis(1)}
    cls, write = ENGINES[kind]
    eng = cls(LookupEmbedder(vecs), clock=lambda: pd.Timestamp("2026-05-01T10:00:00Z"))
    write(eng, "m", "rule", now=None)
    assert eng.tables["provenance"]["created_at"].tolist() == ["2026-05-01T10:00:00Z"]


def test_ids_are_deterministic_and_count_earlier_rows(kind):
    vecs = {"m": basis(0), "rule": basis(1)}
    a, write = make(kind, vecs)
    b, _ = make(kind, vecs)
    for eng in (a, b):
        write(eng, "m", "rule")
        eng.delete("rule")
        write(eng, "m", "rule")
    ta, tb = a.tables, b.tables
    for name in ("matchers", "items", "provenance"):
        assert ta[name]["id"].tolist() == tb[name]["id"].tolist()
    table = "predictions" if kind == "prediction" else "behaviors"
    # the re-created item is the second row ever with this (table, store, text)
    assert ta["items"]["id"].tolist() == [deterministic_id(table, "project", "rule", 1)]


def test_delete_cascades_but_keeps_matchers(kind):
    vecs = {"m": basis(0), "rule": basis(1), "rule-ish": at_cos(0.86, axis=1, other=2),
            "rule far": at_cos(0.84, axis=1, other=2)}
    eng, write = make(kind, vecs)
    write(eng, "m", "rule")
    noun = "prediction" if kind == "prediction" else "behavior"
    assert eng.delete("rule far").text == f'No {noun} matching "rule far" found in "project".'
    assert eng.delete("rule-ish", store="global").text == f'No {noun} matching "rule-ish" found in "global".'
    assert eng.delete("rule-ish").text == '[deleted] "rule" from "project"'
    t = eng.tables
    assert len(t["items"]) == 0 and len(t["edges"]) == 0 and len(t["provenance"]) == 0
    assert t["matchers"]["description"].tolist() == ["m"]


def test_list_text_exact(kind):
    vecs = {"m": basis(0), "m2": basis(2), "rule": basis(1), "second": basis(3)}
    eng, write = make(kind, vecs)
    write(eng, "m", "rule", r="because", now="2026-01-01T00:00:00Z")
    write(eng, "m2", "rule", r="again", now="2026-01-02T00:00:00Z")
    write(eng, "m", "second", now="2026-01-03T00:00:00Z")
    _confirm(eng, "second", 1, now="2026-01-04T00:00:00Z")
    sig = "create" if kind == "prediction" else "codify"
    second_prov = {"prediction": "    - [2026-01-04] confirm: ",
                   "behavior": "    - [2026-01-04] confirm: ham: ctx"}[kind]
    expected = "\n".join([
        "[0.58 conf, 1 tests] second",
        "  matchers:",
        '    - "m" (w:1)',
        "  provenance:",
        second_prov,
        f"    - [2026-01-03] {sig}: ",
        "",
        "[0.50 conf, 0 tests] rule",
        "  rationale: because",
        "  matchers:",
        '    - "m" (w:1)',
        '    - "m2" (w:1)',
        "  provenance:",
        f"    - [2026-01-02] {sig}: again",
        f"    - [2026-01-01] {sig}: because",
    ])
    assert eng.list().text == expected
    plural = "predictions" if kind == "prediction" else "behaviors"
    assert eng.list("global").text == f'No {plural} in "global".'


def test_list_keeps_newest_ten_provenance_rows(kind):
    vecs = {"m": basis(0), "rule": basis(1)}
    eng, write = make(kind, vecs)
    write(eng, "m", "rule", now="2026-01-01T00:00:00Z")
    for day in range(2, 14):
        _confirm(eng, "rule", 1, now=f"2026-01-{day:02d}T00:00:00Z")
    lines = [ln for ln in eng.list().text.splitlines() if ln.startswith("    - [")]
    assert len(lines) == 10
    assert lines[0].startswith("    - [2026-01-13]") and lines[-1].startswith("    - [2026-01-04]")


def test_list_orders_by_stored_confidence_ties_in_insertion_order(kind):
    vecs = {"m": basis(0), "first": basis(1), "second": basis(2), "third": basis(3)}
    eng, write = make(kind, vecs)
    for s in ("first", "second", "third"):
        write(eng, "m", s)
    _confirm(eng, "third", 1)
    assert eng.list().items["statement"].tolist() == ["third", "first", "second"]


# ---------------------------------------------------------------- bad input
class NaNEmbedder:
    name, dim, query_prefix = "nan", 3, ""

    def embed_queries(self, texts):
        return np.full((len(texts), 3), np.nan, dtype=np.float32)

    embed_passages = embed_queries


class WrongDimEmbedder(NaNEmbedder):
    name = "wrong"

    def embed_passages(self, texts):
        return np.ones((len(texts), 4), dtype=np.float32)

    embed_queries = embed_passages


def _snapshot(eng):
    return {k: v.copy() for k, v in eng.tables.items()}


def _assert_same(before, after):
    for k in before:
        pd.testing.assert_frame_equal(before[k].drop(columns=["embedding"], errors="ignore"),
                                      after[k].drop(columns=["embedding"], errors="ignore"))


@pytest.mark.parametrize("case", ["unknown_signal", "empty_matcher", "empty_statement", "missing_text",
                                  "naive_time", "nan_vectors", "wrong_dim", "blank_store"])
def test_bad_input_raises_and_writes_nothing(kind, case):
    vecs = {"m": basis(0), "rule": basis(1), "other": basis(2)}
    eng, write = make(kind, vecs)
    write(eng, "m", "rule")
    before = _snapshot(eng)
    cls = type(eng)
    with pytest.raises(ThatchlabError) as err:
        if case == "unknown_signal":
            if kind == "prediction":
                eng.update("m", "other", "maybe", None, now=T0)
            else:
                eng.write_result("m", "other", "confirmish", None, None, T0)
        elif case == "empty_matcher":
            write(eng, "  ", "other")
        elif case == "empty_statement":
            write(eng, "m", "")
        elif case == "missing_text":
            write(eng, "m", "not in the table")
        elif case == "naive_time":
            write(eng, "m", "other", now="2026-01-01T00:00:00")
        elif case == "nan_vectors":
            eng2 = cls.from_tables(eng.tables, embedder=NaNEmbedder())
            before = _snapshot(eng2)
            eng = eng2
            write(eng, "m", "other")
        elif case == "wrong_dim":
            eng2 = cls.from_tables(eng.tables, embedder=WrongDimEmbedder())
            before = _snapshot(eng2)
            eng = eng2
            write(eng, "m", "other")
        elif case == "blank_store":
            write(eng, "m", "other", store="")
    expected = {"unknown_signal": InputError, "empty_matcher": InputError, "empty_statement": InputError,
                "missing_text": EmbeddingLookupError, "naive_time": TimeError, "nan_vectors": EmbeddingError,
                "wrong_dim": EmbeddingError, "blank_store": InputError}[case]
    assert isinstance(err.value, expected)
    _assert_same(before, _snapshot(eng))


def test_missing_text_error_names_the_text(kind):
    eng, write = make(kind, {"m": basis(0)})
    with pytest.raises(EmbeddingLookupError, match="never embedded"):
        write(eng, "m", "never embedded")


def test_get_and_set_params(kind):
    eng, _ = make(kind, {"m": basis(0)})
    assert eng.get_params()["params"] == ScoringParams()
    eng.set_params(k=10, threshold=0.5)
    assert eng.params.k == 10 and eng.params.threshold == 0.5


# ---------------------------------------------------------------- public state and write results
def test_write_results_describe_every_action(kind):
    vecs = {"m": basis(0), "m2": basis(2), "rule": basis(1), "rule again": basis(1), "other": basis(3)}
    eng, write = make(kind, vecs)
    created = write(eng, "m", "rule").result
    assert (created.action, created.item_created, created.matcher_created, created.counts_changed) == \
        ("created", True, True, False)
    assert [e.matcher_id for e in created.new_edges] == [created.matcher_id]
    assert not created.shows_counts and created.text == created.reply_prefix
    linked = write(eng, "m2", "rule again").result
    assert (linked.action, linked.item_id, linked.item_created, linked.matcher_created) == \
        ("linked", created.item_id, False, True)
    assert linked.shows_counts and linked.text.endswith("confidence=0.50 (0/0)")
    again = write(eng, "m", "rule").result
    assert again.action == "linked" and again.new_edges == ()  # the edge exists already
    if kind == "prediction":
        reply = eng.update("m", "rule", "soft", None, now=T0)
    else:
        reply = eng.feedback("rule", False, "no", now=T0)
    applied = reply.result
    assert applied.action == "applied" and applied.counts_changed and reply.action == applied.signal
    assert (reply.text, reply.confidence, reply.disconfirm_count) == \
        (applied.text, applied.confidence, applied.disconfirm_count)
    assert eng.delete("other").result.action == "not_found"
    deleted = eng.delete("rule").result
    assert (deleted.action, deleted.item_id, deleted.statement) == ("deleted", created.item_id, "rule")


class _RecordingLookup:
    """Approximations from exact cosines, recording every search."""

    def __init__(self, eng):
        self.eng, self.calls = eng, []

    def approx_cosines(self, table, text, vector, positions):
        self.calls.append((table, text, len(positions)))
        vecs = np.vstack([self.eng.state.vector(table, int(p)) for p in positions]).astype(np.float64)
        return (vecs @ vector) / (np.linalg.norm(vecs, axis=1) * np.linalg.norm(vector))


def test_a_dedup_lookup_supplies_approximations_but_not_decisions(kind):
    vecs = {"m": basis(0), "m close": at_cos(0.86), "rule": basis(1), "rule close": at_cos(0.9, axis=1, other=2),
            "far": basis(3)}
    plain, write = make(kind, vecs)
    hooked, _ = make(kind, vecs)
    hooked.dedup_lookup = _RecordingLookup(hooked)
    for eng in (plain, hooked):
        write(eng, "m", "rule")
        write(eng, "m close", "rule close")
        write(eng, "m", "far")
    _assert_same(plain.tables, hooked.tables)
    assert ("items", "rule close", 1) in hooked.dedup_lookup.calls
    assert len(hooked.tables["items"]) == 2 and len(hooked.tables["matchers"]) == 1


def test_state_views_are_read_only_copies(kind):
    eng, write = make(kind, {"m": basis(0), "rule": basis(1)})
    write(eng, "m", "rule")
    st = eng.state
    conf = st.items["confidence"]
    conf[0] = 0.0
    assert st.items["confidence"].tolist() == [0.5]
    iid, mid = st.items["id"][0], st.matchers["id"][0]
    assert (st.item_position(iid), st.matcher_position(mid), st.item_position("nope")) == (0, 0, None)
    assert st.edges_of_matcher(mid) == st.edges_of_item(iid) == (0,) and st.provenance_of_item(iid) == (0,)
    assert st.items.serials.tolist() == [0] and st.n_provenance == 1
    assert st.usable("items", 8, stores=["project"]).tolist() == [True]  # basis vectors are 8-d
    assert st.usable("items", 8, stores=["global"]).tolist() == [False]
    assert st.usable("items", 8, model="another").tolist() == [False]
    assert st.foreign_model("items", "another").tolist() == [True]
    assert st.foreign_model("items", "toy").tolist() == st.foreign_model("items", None).tolist() == [False]
    assert st.usable("items", 4).tolist() == [False]
