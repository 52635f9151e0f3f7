"""Columnar SQLite export and import: the same file, the same tables, the same errors.

The thatch sections write and read whole columns at a time (one fetch per
table, types checked on the fetched cells, each vector a view of its BLOB,
NaN and infinity looked for a run of vectors at a time, the round-trip check
comparing runs of vectors as matrices). These tests pin what must not change
with that: the rows, values and SQLite types in the file, the tables read
back, and the exact message of every refused cell (the first bad column in
column order, at its first bad row in rowid order; the first non-finite
vector by position).
"""

import sqlite3

import numpy as np
import pandas as pd
import pytest

from tests._stores import edited_export
from thatchlab.core.errors import StoreSchemaError
from thatchlab.core.sqlite import connect_readonly
from thatchlab.scoring import BehaviorEngine, PredictionEngine
from thatchlab.store import export_sqlite, import_sqlite
from thatchlab.store._thatch import _CHUNK, ThatchSection

TS = ["2026-01-01T00:00:00Z", "2026-01-02T03:04:05.678Z"]
STORES = ["global", "project", "other"]


def _vec(i, rng):
    """Vectors of three dimensions and three models (and None), interleaved."""
    r = i % 7
    if r == 0:
        return None
    if r in (1, 4):
        return rng.normal(size=4).astype(np.float32)                    # model 'a', dim 4
    if r == 2:
        return (rng.normal(size=6) * 1e30).astype(np.float32)           # model 'b', dim 6
    if r == 3:
        return np.array([-0.0, 0.0, 1e-45], np.float32)                 # no model, dim 3
    if r == 5:
        return np.zeros(4, np.float32)
    return rng.normal(size=6)                                           # float64, model 'b'


def _model(i):
    return {0: "a", 1: "a", 2: "b", 3: None, 4: "a", 5: "a", 6: "b"}[i % 7]


def _tables(kind, n, stream=1):
    rng = np.random.default_rng(stream)
    fk = "prediction_id" if kind == "prediction" else "behavior_id"
    matchers = pd.DataFrame({
        "id": [f"m{i}" for i in range(n)], "store": [STORES[i % 3] for i in range(n)],
        "description": [f"situation é {i}" for i in range(n)], "embedding": [_vec(i, rng) for i in range(n)],
        "model": [_model(i) for i in range(n)], "created_at": [TS[i % 2] for i in range(n)],
        "updated_at": [TS[(i + 1) % 2] for i in range(n)]})
    c = rng.integers(0, 6, n).astype(float)
    d = rng.integers(0, 4, n) + 0.25 * rng.integers(0, 3, n)
    items = pd.DataFrame({
        "id": [f"p{i}" for i in range(n)], "store": [STORES[(i + 1) % 3] for i in range(n)],
        "statement": [f"do {i}" for i in range(n)], "rationale": [None if i % 3 else f"because {i}" for i in range(n)],
        "embedding": [_vec(i + 3, rng) for i in range(n)], "model": [_model(i + 3) for i in range(n)],
        "confidence": (c + 2.5) / (c + d + 5), "confirm_count": c, "disconfirm_count": d,
        "created_at": TS[0], "updated_at": TS[1]})
    extra = list(range(0, n, 5))
    edges = pd.DataFrame({"matcher_id": [f"m{i}" for i in range(n)] + [f"m{i}" for i in extra],
                          fk: [f"p{i}" for i in range(n)] + [f"p{(i * 7 + 1) % n}" for i in extra],
                          "weight": [1.0] * n + [0.25] * len(extra), "created_at": TS[0]})
    edges = edges.drop_duplicates(["matcher_id", fk]).reset_index(drop=True)
    prov = pd.DataFrame({"id": [f"v{i}" for i in range(n)], fk: [f"p{i}" for i in range(n)],
                         "signal": [["confirm", "soft", "create"][i % 3] for i in range(n)],
                         "detail": [None if i % 2 else f"d{i}" for i in range(n)], "created_at": TS[1]})
    return {"stores": pd.DataFrame({"name": STORES}), "matchers": matchers, "items": items, "edges": edges,
            "provenance": prov}


@pytest.fixture
def engines():
    pred = PredictionEngine.from_tables(_tables("prediction", 120), project_store="project")
    beh = BehaviorEngine.from_tables(_tables("behavior", 80, stream=2), project_store="project")
    return pred, beh


def _same_tables(a, b):
    for name in ("stores", "matchers", "items", "edges", "provenance"):
        x, y = a.tables[name], b.tables[name]
        assert list(x.columns) == list(y.columns) and len(x) == len(y), name
        assert [str(t) for t in x.dtypes] == [str(t) for t in y.dtypes], name
        for col in x.columns:
            xs, ys = x[col].tolist(), y[col].tolist()
            if col == "embedding":
                assert [None if u is None else (u.dtype.str, u.shape, u.tobytes()) for u in xs] == \
                       [None if v is None else (v.dtype.str, v.shape, v.tobytes()) for v in ys], (name, col)
            else:
                assert [type(u) for u in xs] == [type(v) for v in ys], (name, col)
                assert xs == ys, (name, col)


def _expected_rows(frame, columns):
    """The rows as the row-by-row writer made them: each vector as its own '<f4' bytes."""
    out = []
    for r in frame[columns].itertuples(index=False):
        # a missing cell is NULL: None in an object column, NaN in pandas 3's str
        out.append(tuple(None if v is None or (isinstance(v, float) and v != v and c != "embedding")
                         else np.asarray(v, "<f4").tobytes() if c == "embedding" else v
                         for c, v in zip(columns, r)))
    return out


def test_round_trip_of_mixed_dimensions_models_and_null_vectors(tmp_path, engines):
    pred, beh = engines
    res = export_sqlite(tmp_path / "a.db", prediction=pred, behavior=beh)
    back = import_sqlite(res.path)
    _same_tables(pred, back.prediction)
    _same_tables(beh, back.behavior)
    m = back.prediction.tables["matchers"]["embedding"].tolist()
    assert {None if v is None else len(v) for v in m} == {None, 3, 4, 6}
    assert all(v.dtype == np.float32 for v in m if v is not None)
    # what was read back writes the very same file
    again = export_sqlite(tmp_path / "b.db", prediction=back.prediction, behavior=back.behavior)
    assert again.path.read_bytes() == res.path.read_bytes()
    assert again.manifest_path.read_text() == res.manifest_path.read_text().replace('"a.db"', '"b.db"')


def test_exported_rows_are_the_row_by_row_values_and_types(tmp_path, engines):
    pred, beh = engines
    path = export_sqlite(tmp_path / "a.db", prediction=pred, behavior=beh).path
    con = sqlite3.connect(path)
    try:
        for eng, kind in ((pred, "prediction"), (beh, "behavior")):
            sec = ThatchSection(kind)
            frames = sec.frames(eng, {"k": 5.0, "p0": 0.5})
            for part in ("matchers", "items", "edges", "provenance"):
                cols = sec._cols(part)
                got = con.execute(f"SELECT {', '.join(cols)} FROM {sec.t[part]} ORDER BY rowid").fetchall()
                frame = frames[part].rename(columns={"item_id": sec.t["item_fk"]})
                assert got == _expected_rows(frame, cols), (kind, part)
                types = con.execute(f"SELECT DISTINCT {', '.join(f'typeof({c})' for c in cols)} "
                                    f"FROM {sec.t[part]}").fetchall()
                for row in types:
                    kinds = dict(zip(cols, row))
                    assert kinds.get("embedding", "blob") in ("blob", "null")
                    for c in ("confidence", "confirm_count", "disconfirm_count", "weight"):
                        assert kinds.get(c, "real") == "real"
    finally:
        con.close()


def test_imported_vectors_are_float32_and_equal_to_the_blobs(tmp_path, engines):
    pred, _ = engines
    path = export_sqlite(tmp_path / "a.db", prediction=pred).path
    con = sqlite3.connect(path)
    blobs = [b for (b,) in con.execute("SELECT embedding FROM predictions ORDER BY rowid")]
    con.close()
    cells = import_sqlite(path).prediction.tables["items"]["embedding"].tolist()
    assert [None if v is None else v.tobytes() for v in cells] == blobs
    assert all(type(v) is np.ndarray and v.dtype == np.float32 and v.ndim == 1 for v in cells if v is not None)


# ------------------------------------------------------------------ refused cells
def _corrupt(tmp_path, engines, *sql):
    pred, beh = engines
    return edited_export(tmp_path, *sql, prediction=pred, behavior=beh)


def _message(path):
    with pytest.raises(StoreSchemaError) as info:
        import_sqlite(path)
    return str(info.value)


def _message_checked_in_sql(path, kind="prediction"):
    """The message when every check runs as SQL scans before reading (a connection with a
    text factory of its own cannot tell types from the fetched cells)."""
    con = connect_readonly(path)
    con.text_factory = lambda b: b.decode("utf-8")
    try:
        with pytest.raises(StoreSchemaError) as info:
            ThatchSection(kind).read_frames(con, label=str(path))
        return str(info.value)
    finally:
        con.close()


NUM = "expected a number (REAL or INTEGER)"
CASES = [
    (["UPDATE predictions SET confidence = 'not a number' WHERE rowid = 2"],
     "table 'predictions', row id='p1' (rowid 2), column 'confidence' holds TEXT 'not a number'; " + NUM),
    # two bad columns: the first in column order is named, though the other's bad row comes first
    (["UPDATE predictions SET confidence = 'x' WHERE rowid = 1", "UPDATE predictions SET store = X'01' "
      "WHERE rowid = 5"],
     "table 'predictions', row id='p4' (rowid 5), column 'store' holds BLOB X'01'; expected text"),
    (["UPDATE predictions SET confirm_count = 9e999 WHERE rowid IN (4, 9)"],
     "table 'predictions', row id='p3' (rowid 4), column 'confirm_count' holds REAL Inf; " + NUM),
    (["UPDATE predictions SET disconfirm_count = -9e999 WHERE rowid = 7"],
     "table 'predictions', row id='p6' (rowid 7), column 'disconfirm_count' holds REAL -Inf; " + NUM),
    (["UPDATE prediction_matchers SET embedding = '0.1,0.2' WHERE rowid >= 3"],
     "table 'prediction_matchers', row id='m2' (rowid 3), column 'embedding' holds TEXT '0.1,0.2'; "
     "expected a BLOB or NULL"),
    (["UPDATE prediction_matchers SET model = X'07' WHERE rowid = 3"],
     "table 'prediction_matchers', row id='m2' (rowid 3), column 'model' holds BLOB X'07'; expected text or NULL"),
    (["UPDATE predictions SET rationale = X'00' WHERE rowid = 6"],
     "table 'predictions', row id='p5' (rowid 6), column 'rationale' holds BLOB X'00'; expected text or NULL"),
    (["UPDATE prediction_edges SET created_at = X'00' WHERE rowid = 3"],
     "table 'prediction_edges', row 3, column 'created_at' holds BLOB X'00'; expected text"),
    (["UPDATE prediction_edges SET weight = 'heavy' WHERE rowid = 2"],
     "table 'prediction_edges', row 2, column 'weight' holds TEXT 'heavy'; " + NUM),
    (["UPDATE prediction_provenance SET detail = X'0102' WHERE rowid = 4"],
     "table 'prediction_provenance', row id='v3' (rowid 4), column 'detail' holds BLOB X'0102'; "
     "expected text or NULL"),
    (["INSERT INTO stores VALUES (X'00')"],
     "table 'stores', row name=b'\\x00' (rowid 4), column 'name' holds BLOB X'00'; expected text"),
    # a bad prediction table is named before a bad behavior one (sections in order)
    (["UPDATE behaviors SET confidence = 'x' WHERE rowid = 1", "UPDATE predictions SET confidence = 'y' "
      "WHERE rowid = 3"],
     "table 'predictions', row id='p2' (rowid 3), column 'confidence' holds TEXT 'y'; " + NUM),
    (["UPDATE predictions SET embedding = X'010203' WHERE rowid = 2"],
     "table 'predictions', row id='p1' (rowid 2), column 'embedding' holds 3 bytes; expected float32 values "
     "(dimension × 4 bytes)"),
    (["UPDATE prediction_matchers SET embedding = X'' WHERE rowid = 2"],
     "table 'prediction_matchers', row id='m1' (rowid 2), column 'embedding' holds 0 bytes; expected float32 "
     "values (dimension × 4 bytes)"),
    # model 'a' is dimension 4 (first seen at m1): an item of model 'a' with 2 values
    (["UPDATE predictions SET embedding = X'0000803F0000803F' WHERE rowid = 3"],
     "table 'predictions', row id='p2' (rowid 3), column 'embedding' holds 2 float32 values (8 bytes) but "
     "the vectors of model 'a' have dimension 4 (e.g. table 'prediction_matchers', id='m1')"),
    # a wrong dimension in matchers is found before a bad length later in the same table
    (["UPDATE prediction_matchers SET embedding = X'0000803F' WHERE rowid = 5",
      "UPDATE prediction_matchers SET embedding = X'01' WHERE rowid = 9"],
     "table 'prediction_matchers', row id='m4' (rowid 5), column 'embedding' holds 1 float32 values (4 bytes) "
     "but the vectors of model 'a' have dimension 4 (e.g. table 'prediction_matchers', id='m1')"),
    (["UPDATE prediction_matchers SET embedding = X'0000C07F0000803F0000803F0000803F' WHERE rowid = 12"],
     "table 'prediction_matchers', row id='m11' (position 11), column 'embedding' holds NaN or infinite values"),
]


@pytest.mark.parametrize("sql, message", CASES)
def test_each_refused_cell_is_named_as_before(tmp_path, engines, sql, message):
    path = _corrupt(tmp_path, engines, *sql)
    got = _message(path)
    assert got == f"{path}: {message}"
    assert _message_checked_in_sql(path) == got   # the SQL-only checks name the same cell in the same words


DIM = {"a": 4, "b": 6, None: 3}


def _nonfinite(dim, value):
    """A little-endian float32 vector of ``dim`` values with ``value`` second, as SQL hex."""
    v = np.linspace(0.5, 2.0, dim).astype("<f4")
    v[1] = value
    return v.tobytes().hex().upper()


@pytest.mark.parametrize("k", [1, 4, 11, 57, 118])
def test_a_nan_vector_at_row_k_is_reported_at_row_k(tmp_path, engines, k):
    # later infinite vectors, of the same and of other dimensions, do not take its place
    sql = [f"UPDATE predictions SET embedding = X'{_nonfinite(DIM[_model(k + 3)], np.nan)}' WHERE rowid = {k + 1}"]
    sql += [f"UPDATE predictions SET embedding = X'{_nonfinite(DIM[_model(j + 3)], np.inf)}' WHERE rowid = {j + 1}"
            for j in range(k + 1, min(k + 4, 120))]
    path = _corrupt(tmp_path, engines, *sql)
    assert _message(path) == (f"{path}: table 'predictions', row id='p{k}' (position {k}), column 'embedding' "
                              "holds NaN or infinite values")


def test_nonfinite_vectors_beyond_the_first_run_are_found_at_their_row(tmp_path):
    n = _CHUNK * 2 + 300
    tables = _tables("prediction", n)
    rng = np.random.default_rng(3)
    tables["matchers"]["embedding"] = list(rng.normal(size=(n, 4)).astype(np.float32))
    tables["matchers"]["model"] = "a"
    pred = PredictionEngine.from_tables(tables, project_store="project")
    res = export_sqlite(tmp_path / "big.db", prediction=pred)
    path = res.path
    res.manifest_path.unlink()  # the cells are edited below: the manifest no longer describes the file
    k = _CHUNK + 77
    con = sqlite3.connect(path)
    con.execute(f"UPDATE prediction_matchers SET embedding = X'{_nonfinite(4, -np.inf)}' WHERE rowid = {k + 1}")
    con.execute(f"UPDATE prediction_matchers SET embedding = X'{_nonfinite(4, np.nan)}' WHERE rowid = {n}")
    con.commit()
    con.close()
    assert _message(path) == (f"{path}: table 'prediction_matchers', row id='m{k}' (position {k}), column "
                              "'embedding' holds NaN or infinite values")


def test_rows_read_as_row_objects_make_the_same_frames(tmp_path, engines):
    pred, _ = engines
    path = export_sqlite(tmp_path / "a.db", prediction=pred).path
    con = connect_readonly(path)
    try:
        plain = ThatchSection("prediction").read_frames(con)
        con.row_factory = sqlite3.Row      # rows as Row objects change nothing
        again = ThatchSection("prediction").read_frames(con)
    finally:
        con.close()
    for name in plain:
        pd.testing.assert_frame_equal(plain[name].drop(columns="embedding", errors="ignore"),
                                      again[name].drop(columns="embedding", errors="ignore"))
