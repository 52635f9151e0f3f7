"""Loading an engine from tables in bulk gives the state a row-by-row build gives.

The reference below adds every row through the state's own write methods, one
at a time (the path engine writes take); the bulk loader must agree with it on
everything a later read or write can see: the tables, the vector matrices to
the bit, store and model codes, the edge and provenance indexes and the id
counters (checked by writing after the load).
"""

import numpy as np
import pandas as pd
import pytest

from thatchlab.core.schema import ENGINE_TABLES
from thatchlab.embed import LookupEmbedder
from thatchlab.scoring import BehaviorEngine, EngineState, PredictionEngine
from thatchlab.scoring.state import prov_text

TS = "2026-01-01T00:00:00.000Z"
NAMES = ENGINE_TABLES["prediction"]


def _missing(v):
    return v is None or (isinstance(v, float) and np.isnan(v))


def _cell_vector(v):
    if _missing(v):
        return None
    if isinstance(v, (bytes, bytearray, memoryview)):
        return np.frombuffer(bytes(v), dtype="<f4").astype(np.float32)
    return np.asarray(v, dtype=np.float32)


def row_by_row(tables, names=NAMES) -> EngineState:
    """The state built one row at a time through the write methods."""
    st = EngineState(names)
    fk = names["item_fk"]
    for name in tables["stores"]["name"]:
        st.ensure_store(name)
    m, it = tables["matchers"], tables["items"]
    for name in list(m["store"]) + list(it["store"]):
        st.ensure_store(name)
    for r in m.to_dict("records"):
        model = None if _missing(r["model"]) else r["model"]
        st.add_matcher(r["id"], r["store"], r["description"], _cell_vector(r["embedding"]), model,
                       r["created_at"], r["updated_at"])
        st._id_counts[(names["matchers"], r["store"], r["description"])] += 1
    for r in it.to_dict("records"):
        model = None if _missing(r["model"]) else r["model"]
        rationale = None if _missing(r["rationale"]) else r["rationale"]
        st.add_item(r["id"], r["store"], r["statement"], rationale, _cell_vector(r["embedding"]), model,
                    float(r["confidence"]), float(r["confirm_count"]), float(r["disconfirm_count"]),
                    r["created_at"], r["updated_at"])
        st._id_counts[(names["items"], r["store"], r["statement"])] += 1
    for r in tables["edges"].to_dict("records"):
        st.add_edge(r["matcher_id"], r[fk], float(r["weight"]), r["created_at"])
    for r in tables["provenance"].to_dict("records"):
        detail = None if _missing(r["detail"]) else r["detail"]
        st.add_provenance(r["id"], r[fk], r["signal"], detail, r["created_at"])
        pos = st.item_position(r[fk])
        store = st.items.cell("store", pos) if pos is not None else ""
        st._id_counts[(names["provenance"], store, prov_text(r[fk], r["signal"], detail))] += 1
    return st


def assert_same_state(a: EngineState, b: EngineState):
    a._count_loaded_ids()
    b._count_loaded_ids()
    assert a._stores == b._stores and a._store_codes == b._store_codes
    assert a._model_codes == b._model_codes
    for name in ("_matchers", "_items"):
        x, y = getattr(a, name), getattr(b, name)
        assert _same_columns(x.data, y.data)
        assert x.position == y.position
        np.testing.assert_array_equal(x.store_code.values, y.store_code.values)
        np.testing.assert_array_equal(x.model_code.values, y.model_code.values)
        np.testing.assert_array_equal(x.serial.values, y.serial.values)
        vx, vy = x.vectors, y.vectors
        assert len(vx) == len(vy)
        np.testing.assert_array_equal(vx._dims[: len(vx)], vy._dims[: len(vy)])
        assert sorted(vx._blocks) == sorted(vy._blocks)
        for dim in vx._blocks:  # bit for bit, zero rows included
            assert vx._blocks[dim][: len(vx)].tobytes() == vy._blocks[dim][: len(vy)].tobytes()
        for i in range(len(vx)):
            u, v = vx.vector(i), vy.vector(i)
            assert (u is None and v is None) or (u.dtype == v.dtype == np.float32 and u.tobytes() == v.tobytes())
        assert vx._models == vy._models
    for name in ("_edges", "_provenance"):
        x, y = getattr(a, name), getattr(b, name)
        assert _same_columns(x.data, y.data)
        np.testing.assert_array_equal(x.serial.values, y.serial.values)
        assert x.next_serial == y.next_serial
    assert a._edge_keys == b._edge_keys
    for name in ("_edges_by_matcher", "_edges_by_item", "_provenance_by_item"):
        assert dict(getattr(a, name)._serials) == dict(getattr(b, name)._serials)
    assert +a._id_counts == +b._id_counts


def _same_columns(x: dict, y: dict) -> bool:
    if x.keys() != y.keys():
        return False
    for c in x:
        if len(x[c]) != len(y[c]):
            return False
        for u, v in zip(x[c], y[c]):
            if not (u == v or (_missing(u) and _missing(v))):
                return False
            if type(u) is not type(v):
                return False
    return True


def odd_tables(n=40, seed=0):
    """Tables with every kind of cell a loader meets: vectors as float32 and float64
    arrays, lists, bytes, None, NaN, empty, all-zero, two dimensions interleaved;
    missing models, rationales and details; a repeated edge, edges and provenance
    pointing at an absent item, a store the stores table does not list."""
    rng = np.random.default_rng(seed)
    dims = np.where(rng.random(n) < 0.3, 3, 5)

    def cell(j, kind):
        v = rng.normal(size=int(dims[j]))
        return [v.astype(np.float32), v, v.tolist(), v.astype("<f4").tobytes(), None, float("nan"),
                np.zeros(0, dtype=np.float32), np.zeros(int(dims[j]), dtype=np.float32)][kind]

    kinds = rng.integers(0, 8, n)
    stores = [["project", "global", "other"][j % 3] for j in range(n)]
    models = [["random", None, float("nan"), "older"][j % 4] for j in range(n)]
    matchers = pd.DataFrame({
        "id": [f"m{j}" for j in range(n)], "store": stores, "description": [f"when {j % 7}" for j in range(n)],
        "embedding": [cell(j, k) for j, k in enumerate(kinds)], "model": models, "created_at": TS,
        "updated_at": TS})
    c = rng.integers(0, 4, n).astype(float)
    items = pd.DataFrame({
        "id": [f"p{j}" for j in range(n)], "store": stores[::-1], "statement": [f"do {j % 5}" for j in range(n)],
        "rationale": [None if j % 3 else f"because {j}" for j in range(n)],
        "embedding": [cell(j, k) for j, k in enumerate(kinds[::-1])], "model": models[::-1],
        "confidence": (c + 2.5) / (c + 5), "confirm_count": c, "disconfirm_count": 0.0, "created_at": TS,
        "updated_at": TS})
    src = list(range(n)) + [0, 3, 3]
    dst = list(range(n)) + [1, 3, n + 5]          # (m3, p3) repeats; p{n+5} does not exist
    edges = pd.DataFrame({"matcher_id": [f"m{j}" for j in src], "prediction_id": [f"p{j}" for j in dst],
                          "weight": [1.0] * len(src), "created_at": TS})
    prov = pd.DataFrame({"id": [f"v{j}" for j in range(6)],
                         "prediction_id": ["p0", "p0", "p2", f"p{n + 5}", "p4", "p4"],
                         "signal": ["create", "confirm", "soft", "confirm", "confirm", "confirm"],
                         "detail": [None, "said so", float("nan"), "gone", "x", "x"], "created_at": TS})
    return {"stores": pd.DataFrame({"name": ["global", "project"]}), "matchers": matchers, "items": items,
            "edges": edges, "provenance": prov}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bulk_load_equals_row_by_row(seed):
    tables = odd_tables(seed=seed)
    assert_same_state(EngineState.from_tables(tables, NAMES), row_by_row(tables))


def test_bulk_load_across_chunks_and_dimensions():
    # more rows than one normalisation chunk, two dimensions interleaved (rows of a
    # dimension not consecutive) and runs of one dimension
    rng = np.random.default_rng(7)
    n = 2600
    dims = np.where((np.arange(n) // 700) % 2 == 0, 8, np.where(rng.random(n) < 0.5, 8, 6))
    vecs = [rng.normal(size=int(d)).astype(np.float32) for d in dims]
    vecs[5] = np.zeros(8, dtype=np.float32)
    tables = {"stores": pd.DataFrame({"name": ["global"]}),
              "matchers": pd.DataFrame({"id": [f"m{j}" for j in range(n)], "store": "global",
                                        "description": [f"s{j}" for j in range(n)], "embedding": vecs,
                                        "model": "x", "created_at": TS, "updated_at": TS}),
              "items": pd.DataFrame({"id": ["p0"], "store": "global", "statement": ["s"], "rationale": None,
                                     "embedding": [vecs[0]], "model": "x", "confidence": 0.5,
                                     "confirm_count": 0.0, "disconfirm_count": 0.0, "created_at": TS,
                                     "updated_at": TS}),
              "edges": pd.DataFrame(columns=["matcher_id", "prediction_id", "weight", "created_at"]),
              "provenance": pd.DataFrame(columns=["id", "prediction_id", "signal", "detail", "created_at"])}
    assert_same_state(EngineState.from_tables(tables, NAMES), row_by_row(tables))


def test_loaded_tables_read_back_and_inputs_untouched():
    tables = odd_tables()
    before = {k: v.copy(deep=True) for k, v in tables.items()}
    back = PredictionEngine.from_tables(tables).tables
    for name in ("matchers", "items", "edges", "provenance"):
        pd.testing.assert_frame_equal(tables[name].drop(columns="embedding", errors="ignore"),
                                      before[name].drop(columns="embedding", errors="ignore"))
    assert back["matchers"]["id"].tolist() == tables["matchers"]["id"].tolist()
    assert back["edges"].shape[0] == len(tables["edges"]) - 1       # the repeated pair kept once
    for got, given in zip(back["items"]["embedding"], tables["items"]["embedding"]):
        want = _cell_vector(given)
        assert (got is None and want is None) or np.array_equal(got, want)


def _vectors(texts, dim=5, seed=3):
    rng = np.random.default_rng(seed)
    return {t: rng.normal(size=dim) for t in texts}


@pytest.mark.parametrize("cls, write", [
    (PredictionEngine, lambda e, m, s, now: e.update(m, s, "confirm", "r", store="project", now=now)),
    (BehaviorEngine, lambda e, m, s, now: e.codify(m, s, "r", store="project", now=now)),
])
def test_writes_after_a_load_count_the_loaded_ids(cls, write):
    """Ids of new rows count the loaded rows with the same key, also after a delete."""
    texts = [f"when {j}" for j in range(7)] + [f"do {j}" for j in range(5)] + ["fresh", "new rule"]
    emb = LookupEmbedder(_vectors(texts), name="random")
    names = ENGINE_TABLES[cls.config.kind]
    tables = odd_tables()
    it = tables["items"]
    it.loc[4, "store"] = "project"
    it.at[4, "embedding"] = target = np.arange(1, 6, dtype=np.float32)    # p4 has provenance
    for name in ("edges", "provenance"):
        tables[name] = tables[name].rename(columns={"prediction_id": names["item_fk"]})
    loaded = cls.from_tables(tables, embedder=emb, params=None)
    reference = cls(embedder=emb)
    reference._state = row_by_row(tables, names)
    for eng in (loaded, reference):
        assert eng.delete("do 4", store="project", vector=target).action == "deleted"
        write(eng, "fresh", "new rule", "2026-02-01T00:00:00Z")
        write(eng, "when 1", "do 2", "2026-02-02T00:00:00Z")
    pd.testing.assert_frame_equal(loaded.tables["matchers"].drop(columns="embedding"),
                                  reference.tables["matchers"].drop(columns="embedding"))
    for name in ("items", "edges", "provenance"):
        x = loaded.tables[name].drop(columns="embedding", errors="ignore")
        y = reference.tables[name].drop(columns="embedding", errors="ignore")
        pd.testing.assert_frame_equal(x, y)
    assert_same_state(loaded.state, reference.state)


def test_store_file_loads_through_the_same_path(tmp_path):
    from thatchlab.core.sqlite import connect_readonly
    from thatchlab.store import export_sqlite, import_sqlite
    from thatchlab.store._thatch import ThatchSection

    rng = np.random.default_rng(5)
    texts = [f"when {j}" for j in range(30)] + [f"do {j}" for j in range(30)]
    emb = LookupEmbedder({t: rng.normal(size=6) for t in texts}, name="random")
    eng = PredictionEngine(emb)
    for j in range(30):
        eng.update(f"when {j}", f"do {(j * 7) % 30}", ["create", "confirm", "soft"][j % 3],
                   store=["project", "global"][j % 2], now="2026-01-01T00:00:00Z")
    export_sqlite(tmp_path / "s.db", prediction=eng, params=eng.params)
    back = import_sqlite(tmp_path / "s.db", embedder=emb).prediction
    conn = connect_readonly(tmp_path / "s.db")
    try:
        frames = ThatchSection("prediction").read_frames(conn)
    finally:
        conn.close()
    assert_same_state(back.state, row_by_row(frames))
    assert back.nudge("when 3").items["item_id"].tolist() == eng.nudge("when 3").items["item_id"].tolist()


def test_odd_vectors_normalise_the_same_in_bulk_and_one_by_one():
    from thatchlab.core.vectors import VectorRows

    vecs = [np.array([1, np.nan, 2], np.float32), np.zeros(3, np.float32), np.array([-0.0, 0, 0], np.float32),
            np.array([3, 4, 0], np.float32), np.array([np.inf, 1, 1], np.float32), None,
            np.array([1e-30, 0, 0], np.float32)]
    bulk, single = VectorRows(), VectorRows()
    with np.errstate(invalid="ignore"):
        bulk.extend(vecs, [None] * len(vecs))
        for v in vecs:
            single.append(v)
    assert bulk._blocks[3][: len(vecs)].tobytes() == single._blocks[3][: len(vecs)].tobytes()
    assert bulk.usable(3).tolist() == single.usable(3).tolist() == [True] * 5 + [False, True]
