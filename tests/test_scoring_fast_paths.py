"""The nudge's and the replay's fast paths give production's numbers, bit for bit.

Each fast path is compared with the plain definition it replaces: Python
float rounding with :mod:`thatchlab.core.jsfmt`, the ranking with a brute
force over every matcher's exact cosine followed by the rules in numpy, the
lazy items frame with the eager one, the word-at-a-time hit search with
``np.nonzero``, the one-``strftime`` stamps with ``iso_ms``/``iso_s``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from thatchlab.core.jsfmt import js_round, r3
from thatchlab.core.params import ScoringParams
from thatchlab.core.time import iso_ms, iso_s, resolve_now
from thatchlab.core.vectors import VectorRows, exact_cosines
from thatchlab.embed import LookupEmbedder
from thatchlab.scoring import ITEM_COLUMNS, PredictionEngine, evidence_count, posterior_confidence
from thatchlab.scoring._rank import js_round1, r3_1
from thatchlab.scoring.engine import _stamps


def _awkward_floats(rng, n=20_000):
    halves = (rng.integers(-10_000, 10_000, n) + 0.5) / 1000.0
    near = np.nextafter(halves, np.where(rng.random(n) < 0.5, -np.inf, np.inf))
    rand = rng.normal(size=n) * 10.0 ** rng.integers(-6, 6, n)
    special = np.array([0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 0.49999999999999994, -0.49999999999999994,
                        2.0 ** 52, 2.0 ** 52 + 1, 2.0 ** 53, -(2.0 ** 53), 1e300, -1e300,
                        np.nan, np.inf, -np.inf, 5e-324, -5e-324])
    return np.concatenate([halves, near, rand, special])


def _same_bits(a, b) -> bool:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def test_python_rounding_is_js_round_and_r3():
    xs = _awkward_floats(np.random.default_rng(0))
    assert _same_bits([js_round1(x) for x in xs.tolist()], js_round(xs))
    assert _same_bits([r3_1(x) for x in xs.tolist()], r3(xs))


def test_posterior_of_python_floats_is_the_array_formula():
    rng = np.random.default_rng(1)
    for _ in range(2000):
        c, d = float(rng.integers(0, 50)), float(rng.integers(0, 40)) + 0.25 * float(rng.integers(0, 4))
        k, p0 = float(rng.uniform(0.01, 50)), float(rng.uniform(0, 1))
        fast = posterior_confidence(c, d, k, p0)
        slow = posterior_confidence(np.float64(c), np.float64(d), np.float64(k), np.float64(p0))
        assert type(fast) is float and _same_bits(fast, slow)
    assert posterior_confidence(0.0, 0.0, 5, 1) == posterior_confidence(0, 0, 5.0, 1.0) == 1.0


def test_stamps_are_iso_ms_and_iso_s():
    rng = np.random.default_rng(2)
    base = pd.Timestamp("1990-01-01T00:00:00Z")
    for offset in rng.integers(0, 10 ** 18, 500).tolist() + [0, 999_999, 1_000_000]:
        t = resolve_now(base + pd.Timedelta(int(offset), unit="ns"))
        assert _stamps(t) == (iso_ms(t), iso_s(t))


# ---------------------------------------------------------------- ranking against a brute force
def _reference(eng, qvec, stores, threshold, max_items):
    """Every usable matcher's exact cosine, then production's rules in numpy (the
    engine's code before the fast path)."""
    p, st = eng.params, eng.state
    qvec = np.asarray(qvec, dtype=np.float32)
    usable = st.usable("matchers", len(qvec), stores=stores, model=eng.scan_model)
    pos = np.flatnonzero(usable)
    rows = np.vstack([st.vector("matchers", int(j)) for j in pos]).astype(np.float64) if len(pos) else \
        np.zeros((0, len(qvec)))
    cos = exact_cosines(rows, np.ascontiguousarray(np.broadcast_to(qvec.astype(np.float64), rows.shape)))
    keep = cos >= p.noise_floor
    pos, rounded = pos[keep], r3(cos[keep])
    order = np.argsort(-rounded, kind="stable")[: p.top_matchers]
    order = order[rounded[order] >= threshold]
    m_pos, m_cos = pos[order], rounded[order]
    items, matchers = st.items, st.matchers
    cand = []
    for mp, rc in zip(m_pos.tolist(), m_cos.tolist()):
        for e in st.edges_of_matcher(matchers["id"][mp]):
            ip = st.item_position(st.edges["item_id"][e])
            if ip is not None:
                cand.append((mp, ip, rc, float(st.edges["weight"][e]), float(items["confidence"][ip])))
    m, i, c, w, f = (np.asarray([r[k] for r in cand], dtype=np.int64 if k < 2 else np.float64)
                     for k in range(5))
    # production's SQL order: statement, then matcher id, then item id (ORDER BY p.statement over
    # the edges' (matcher_id, item_id) index; sysread/thatch src/scoring-engine.ts scoreItems)
    o = sorted(range(len(i)), key=lambda k: (items["statement"][i[k]], matchers["id"][m[k]], items["id"][i[k]]))
    o = np.asarray(o, dtype=np.int64)
    m, i, c, w, f = m[o], i[o], c[o], w[o], f[o]
    o = np.flatnonzero(f >= p.min_confidence)
    m, i, c, w, f = m[o], i[o], c[o], w[o], f[o]
    score = r3(c * w * f)
    o = np.argsort(-score, kind="stable")
    m, i, c, w, f, score = m[o], i[o], c[o], w[o], f[o], score[o]
    first = np.sort(np.unique(i, return_index=True)[1])
    if p.release == "07ecf87":
        # sysread/thatch src/scoring-engine.ts @0182ac19: an item whose embedding has cosine
        # >= 0.85 with a kept higher-scoring item's (same length) is dropped, before the cut
        kept = []
        for k in first.tolist():
            v = st.vector("items", int(i[k]))
            if v is None or not any(len(u) == len(v) and _js_cosine(u, v) >= 0.85 for u in kept):
                kept.append(v) if v is not None else None
            else:
                first = first[first != k]
    first = first if max_items is None else first[:max_items]
    m, i, c, w, f, score = m[first], i[first], c[first], w[first], f[first], score[first]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NaN counts cast to int64, as before
        evidence = evidence_count(items.take("confirm_count", i), items.take("disconfirm_count", i))
    return pd.DataFrame({
        "confidence": r3(f), "evidence_count": evidence, "matcher_description": matchers.take("description", m),
        "statement": items.take("statement", i), "score": score, "item_id": items.take("id", i),
        "matcher_id": matchers.take("id", m), "store": items.take("store", i), "cosine": c, "weight": w,
        "stored_confidence": f}, columns=ITEM_COLUMNS).astype(  # texts as object on pandas 3 too, as
        {c: object for c in ("matcher_description", "statement", "item_id", "matcher_id", "store")})  # nudges


def _js_cosine(a, b) -> float:
    """sysread/thatch src/vector-math.ts cosineSimilarity, one addition at a time in Python."""
    dot = ma = mb = 0.0
    for x, y in zip(np.asarray(a, dtype=np.float32).tolist(), np.asarray(b, dtype=np.float32).tolist()):
        dot += x * y
        ma += x * x
        mb += y * y
    den = math.sqrt(ma) * math.sqrt(mb)
    return 0.0 if den == 0 else dot / den


def _reference_regime(eng, items):
    p = eng.params
    if len(items) == 0:
        return "none"
    score, mid = items["score"].to_numpy(), items["matcher_id"].to_numpy(object)
    top_k = int(js_round(score[0] * 1000))
    margin = int(js_round(p.conflict_margin * 1000))
    competing = bool(((mid[1:] == mid[0]) & (top_k - js_round(score[1:] * 1000) <= margin)).any()) \
        if len(score) > 1 else False
    strong = (items["stored_confidence"].iloc[0] >= p.strong_confidence
              and int(items["evidence_count"].iloc[0]) >= p.strong_evidence and not competing)
    return "strong" if strong else "ambiguous"


def _awkward_engine(seed, n=300, dim=8, odd=True):
    """Matchers on few directions (ties in rounded cosine), repeated statements, shared
    items, several edges per matcher; with ``odd``, weights and counts a study's tables
    may hold (0, negative, inf, NaN) and an edge into a missing item."""
    rng = np.random.default_rng(seed)
    dirs = rng.normal(size=(6, dim))
    m = dirs[rng.integers(0, 6, n)] + rng.normal(scale=0.05, size=(n, dim)) * (rng.random((n, 1)) < 0.5)
    m[rng.random(n) < 0.1] = 0.0          # zero vectors: cosine 0
    stores = rng.choice(["project", "global", "elsewhere"], n)
    ts = "2026-01-01T00:00:00.000Z"
    n_items = n // 2
    c = rng.integers(0, 6, n_items).astype(float)
    d = rng.integers(0, 4, n_items) + 0.25 * rng.integers(0, 3, n_items)
    conf = (c + 2.5) / (c + d + 5)
    if odd:
        conf[rng.random(n_items) < 0.05] = np.nan
        c[rng.random(n_items) < 0.03] = np.nan
    vecs = rng.normal(size=(n_items, dim))
    # near duplicates: a third of the items lie close to another item's vector (cosines around 0.85
    # and above), a few have no vector or another length
    twin = rng.integers(0, n_items, n_items)
    near = rng.random(n_items) < 0.33
    vecs[near] = vecs[twin[near]] + rng.normal(scale=rng.choice([0.05, 0.4, 0.6], int(near.sum()))[:, None],
                                                size=(int(near.sum()), dim))
    embedding = list(vecs.astype(np.float32))
    for j in np.flatnonzero(rng.random(n_items) < 0.03).tolist():
        embedding[j] = None if j % 2 else embedding[j][: dim // 2].copy()
    items = pd.DataFrame({"id": [f"p{i}" for i in range(n_items)], "store": rng.choice(["project", "global"], n_items),
                          "statement": [f"rule {i % 17}" for i in range(n_items)], "rationale": None,
                          "embedding": embedding, "model": "toy",
                          "confidence": conf, "confirm_count": c, "disconfirm_count": d,
                          "created_at": ts, "updated_at": ts})
    src = rng.integers(0, n, 3 * n)
    dst = [f"p{j}" for j in rng.integers(0, n_items, 3 * n)]
    weight = rng.choice([1.0, 0.5, 2.0], 3 * n)
    if odd:
        weight[rng.random(3 * n) < 0.05] = 0.0
        weight[::37], weight[::41], weight[::43] = -0.5, np.inf, np.nan
        dst[5] = "missing item"
    edges = pd.DataFrame({"matcher_id": [f"m{j}" for j in src], "prediction_id": dst, "weight": weight,
                          "created_at": ts}).drop_duplicates(["matcher_id", "prediction_id"])
    tables = {"stores": pd.DataFrame({"name": ["global", "project", "elsewhere"]}),
              "matchers": pd.DataFrame({"id": [f"m{i}" for i in range(n)], "store": stores,
                                        "description": [f"when {i}" for i in range(n)],
                                        "embedding": list(m.astype(np.float32)), "model": "toy",
                                        "created_at": ts, "updated_at": ts}),
              "items": items, "edges": edges,
              "provenance": pd.DataFrame(columns=["id", "prediction_id", "signal", "detail", "created_at"])}
    queries = dirs[rng.integers(0, 6, 12)] + rng.normal(scale=0.3, size=(12, dim))
    emb = LookupEmbedder({"unused": np.ones(dim)}, queries={f"the query number {j}": q for j, q in enumerate(queries)},
                         name="toy")
    return tables, emb, queries


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("odd", [False, True])
@pytest.mark.parametrize("release", ["v0.1.30", "07ecf87"])
def test_nudges_and_queries_equal_the_brute_force(seed, odd, release):
    tables, emb, queries = _awkward_engine(seed, odd=odd)
    settings = [ScoringParams(release=release),
                ScoringParams(threshold=0.3, top_matchers=2, max_items=3, release=release),
                ScoringParams(threshold=0.95, noise_floor=0.5, release=release),
                ScoringParams(min_confidence=0.5, threshold=0.1, release=release)]
    for params in settings:
        eng = PredictionEngine.from_tables(tables, embedder=emb, params=params)
        for j, q in enumerate(queries):
            for stores in (None, ["elsewhere"], ["project", "elsewhere", "global"]):
                use = eng._default_stores() if stores is None else stores
                expected = _reference(eng, q, use, params.threshold, params.max_items)
                try:
                    want = _reference_regime(eng, expected)
                except (ValueError, OverflowError) as exc:  # a NaN or infinite top score
                    with pytest.raises(type(exc)), warnings.catch_warnings():
                        warnings.simplefilter("ignore", RuntimeWarning)
                        eng.nudge(f"the query number {j}", stores=stores)
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    n = eng.nudge(f"the query number {j}", stores=stores)
                pd.testing.assert_frame_equal(n.items, expected, check_exact=True)
                assert n.regime == want
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    queried = eng.query_vector(q, store=stores[0] if stores else None)
                pd.testing.assert_frame_equal(
                    queried.items, _reference(eng, q, [stores[0]] if stores else use,
                                              params.query_threshold, None), check_exact=True)


# --------------------------------------------------------------- the lazy items frame
def _engine():
    emb = LookupEmbedder({"writing tests": [1, 0, 0], "use pytest": [0, 1, 0], "unit tests": [0.8, 0, 0.6],
                          "prefer small tests": [0, 0.5, 0.866]})
    eng = PredictionEngine(emb)
    eng.update("writing tests", "use pytest", "confirm", now="2026-01-01T00:00:00Z")
    eng.update("unit tests", "prefer small tests", "create", now="2026-01-01T00:01:00Z")
    return eng


def test_nudge_items_are_built_once_and_equal_the_eager_frame():
    eng = _engine()
    n = eng.nudge("writing tests")
    assert len(n) == 2 and n.text.startswith("[thatch] User decision model")
    records = n.records()
    items = n.items
    assert n.items is items                        # built on first access, then kept
    assert records == items.to_dict(orient="records") == n.records()
    assert [type(v) for v in records[0].values()] == [float, int, str, str, float, str, str, str, float, float,
                                                       float]
    assert items.dtypes.astype(str).tolist() == ["float64", "int64", "object", "object", "float64", "object",
                                                 "object", "object", "float64", "float64", "float64"]
    eager, _ = eng._rank(np.asarray(eng.embed_queries(["writing tests"])[0]), eng._default_stores(),
                         eng.params.threshold, eng.params.max_items)
    pd.testing.assert_frame_equal(items, eager, check_exact=True)
    assert "rows>" in repr(n)
    n.items = items.head(1)
    assert len(n) == 1 and len(n.records()) == 1


def test_empty_and_skipped_nudges_keep_their_frames():
    eng = _engine()
    none = eng.nudge("writing tests", threshold=1.5)
    assert (none.regime, none.text, len(none), none.records()) == ("none", "", 0, [])
    assert none.items.dtypes.astype(str).tolist()[:2] == ["float64", "int64"] and len(none.items) == 0
    skipped = eng.nudge("short")
    assert skipped.regime == "skipped" and list(skipped.items.columns) == ITEM_COLUMNS and len(skipped) == 0


# --------------------------------------------------------------- scans and the state's caches
def test_scan_equals_the_masked_cosines_and_caches_follow_writes():
    rng = np.random.default_rng(4)
    rows = VectorRows()
    rows.extend(list(rng.normal(size=(500, 6)).astype(np.float32)) + [None, np.zeros(6, np.float32)],
                ["a"] * 502)
    q = rng.normal(size=6).astype(np.float32)
    for mask in (rows.usable(6), rows.usable(6) & (rng.random(502) < 0.1)):
        for floor, top in ((None, None), (0.2, None), (0.2, 3), (-1.0, 1)):
            pos, cos = rows.scan(q, mask, int(mask.sum()), floor=floor, top=top)
            ref_pos, ref_cos = rows.cosines(q, mask, floor=floor, top=top)
            assert pos.tolist() == ref_pos.tolist() and _same_bits(cos, ref_cos)
    eng = _engine()
    st = eng.state
    mask, n = st.scan_rows("matchers", 3, stores=["project"])
    assert n == 2 and not mask.flags.writeable
    assert st.scan_rows("matchers", 3, stores=["project"])[0] is mask   # cached
    eng.update("brand new situation", "use pytest", "create", now="2026-01-01T00:02:00Z",
               vectors=([0, 0, 1], [0, 1, 0]))
    assert st.scan_rows("matchers", 3, stores=["project"])[1] == 3      # a write clears the cache
    n_added = st.items.n_added
    eng.delete("prefer small tests", vector=[0, 0.5, 0.866])
    assert st.scan_rows("items", 3)[1] == 1 and st.items.n_added == n_added and len(st.items) == 1
    which, item, weight, conf = st.edges_from([0, 2])
    assert which == [0, 1] and item == [0, 0] and weight == [1.0, 1.0] and len(conf) == 2
    assert st.items.cells("statement", [0]) == ["use pytest"]


@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (7, 13), (40, 31), (64, 64)])
@pytest.mark.parametrize("share", [0.0, 0.01, 0.5, 1.0])
def test_hits_found_word_by_word_equal_nonzero(shape, share):
    from thatchlab.replay._scoring_reads import _at_least

    rng = np.random.default_rng(shape[0] * 100 + shape[1])
    block = (rng.random(shape) < share).astype(np.float32) + rng.normal(scale=0.01, size=shape).astype(np.float32)
    scratch = np.ones(block.size + 16, dtype=bool)   # stale flags past the block must not count
    bars = rng.choice(np.array([0.5, 0.2, 0.9], dtype=np.float32), shape[0])
    got = _at_least(block, bars, scratch)
    want = np.nonzero(block >= bars[:, None])
    assert [g.tolist() for g in got] == [w.tolist() for w in want]


def test_rounding_helpers_agree_on_integral_and_huge_values():
    for x in (0.0, 1.0, -1.0, 123456789.0, 2.0 ** 60, -(2.0 ** 60)):
        assert js_round1(x) == js_round(x) and math.copysign(1, js_round1(x)) == math.copysign(1, js_round(x))


# --------------------------------------------------------------- writes
def test_deterministic_ids_are_uuid5():
    import uuid

    from thatchlab.scoring import ID_NAMESPACE, deterministic_id

    rng = np.random.default_rng(5)
    for j in range(3000):
        text = "".join(chr(c) for c in rng.integers(32, 0x2FFF, int(rng.integers(0, 30))) if not 0xD800 <= c <= 0xDFFF)
        args = (["predictions", "behaviors", "provenance"][j % 3], ["project", "global", ""][j % 3], text, j)
        assert deterministic_id(*args) == str(uuid.uuid5(ID_NAMESPACE, "\x1f".join([*args[:3], str(j)])))


def test_counts_text_remembers_nothing_wrong():
    from thatchlab.core.jsfmt import js_number, to_fixed
    from thatchlab.scoring import counts_text

    for conf, c, d in ((0.0, 0, 0), (-0.0, 0.0, -0.0), (0.625, 1, 1.25), (0.185, 2.0, 0.5), (1, 3, 0)):
        want = f"confidence={to_fixed(conf, 2)} ({js_number(c)}/{js_number(d)})"
        assert counts_text(conf, c, d) == counts_text(conf, c, d) == want


def _near_threshold_vectors(rng, n, dim=16, dedup=0.85):
    """Unit vectors whose cosines to a shared direction put many pairs near ``dedup``."""
    u = rng.normal(size=dim)
    u /= np.linalg.norm(u)
    out = []
    for _ in range(n):
        w = rng.normal(size=dim)
        w -= (w @ u) * u
        w /= np.linalg.norm(w)
        c = np.sqrt(dedup) + rng.normal(scale=0.002)
        out.append((c * u + np.sqrt(max(0.0, 1 - c * c)) * w).astype(np.float32))
    return out


def test_dedup_from_precomputed_cosines_decides_as_the_scan():
    from thatchlab.replay._dedup_lookup import PrecomputedDedup

    rng = np.random.default_rng(6)
    m_texts = [f"situation number {i}" for i in range(25)]
    i_texts = [f"preference number {i}" for i in range(25)]
    vectors = dict(zip(m_texts + i_texts, _near_threshold_vectors(rng, 50)))
    cos = [float(vectors[a] @ vectors[b] / np.linalg.norm(vectors[a]) / np.linalg.norm(vectors[b]))
           for a in m_texts for b in m_texts if a < b]
    assert sum(abs(c - 0.85) < 2e-3 for c in cos) > 10   # decisions the exact cosines make
    plain, looked_up = (PredictionEngine(LookupEmbedder(vectors)) for _ in range(2))
    looked_up.dedup_lookup = PrecomputedDedup(looked_up.state, {"matchers": m_texts, "items": i_texts}, vectors)
    for j in range(120):
        m, s = m_texts[int(rng.integers(25))], i_texts[int(rng.integers(25))]
        sig = ["create", "confirm", "disconfirm", "soft"][j % 4]
        now = pd.Timestamp("2026-01-01T00:00:00Z") + pd.Timedelta(minutes=j)
        if j % 17 == 16:
            a, b = (e.delete(s, vector=vectors[s]) for e in (plain, looked_up))
        else:
            a, b = (e.update(m, s, sig, now=now, vectors=(vectors[m], vectors[s])) for e in (plain, looked_up))
        assert (a.text, a.result) == (b.text, b.result)
    for name in ("matchers", "items", "edges", "provenance"):
        pd.testing.assert_frame_equal(plain.tables[name].drop(columns="embedding", errors="ignore"),
                                      looked_up.tables[name].drop(columns="embedding", errors="ignore"))
