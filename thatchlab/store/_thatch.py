"""Store sections for the scoring engines: the four production thatch tables.

Rows are written in insertion order (SQLite rowid order), embeddings as
little-endian float32 BLOBs, timestamps as production's text, and the
``confidence`` column recomputed under the constants production applies to
the next signal (its hard-coded K and P0 unless the caller declares others),
so the shipped state agrees with what production computes one signal later.
"""

from __future__ import annotations

import functools
import gc
import json
import sqlite3
from itertools import repeat

import numpy as np
import pandas as pd

from thatchlab.core.errors import StoreSchemaError
from thatchlab.core.params import ScoringParams, at_least
from thatchlab.core.schema import ENGINE_TABLES, PREDICTION_DEDUP_PAIRS_DDL, thatch_ddl
from thatchlab.core.sqlite import database_label, require_tables
from thatchlab.scoring import posterior_confidence
from thatchlab.scoring.behavior import BehaviorEngine
from thatchlab.scoring.prediction import PredictionEngine
from thatchlab.store._cells import (
    check_cells,
    check_domains,
    check_fetched,
    check_fetched_vectors,
    check_finite_blocks,
    check_vectors,
    plain_reader,
)

_COLUMNS = {
    "matchers": ["id", "store", "description", "embedding", "model", "created_at", "updated_at"],
    "items": ["id", "store", "statement", "rationale", "embedding", "model", "confidence",
              "confirm_count", "disconfirm_count", "created_at", "updated_at"],
    "edges": ["matcher_id", "{fk}", "weight", "created_at"],
    "provenance": ["id", "{fk}", "signal", "detail", "created_at"],
}
#: What production assumes of the values (see ``_cells.check_domains``): confidences in
#: [0, 1], counts and weights >= 0, times in its own text formats.
_DOMAINS = {
    "matchers": {"created_at": ("time",), "updated_at": ("time",)},
    "items": {"confidence": ("range", 0.0, 1.0), "confirm_count": ("range", 0.0, None),
              "disconfirm_count": ("range", 0.0, None), "created_at": ("time",), "updated_at": ("time",)},
    "edges": {"weight": ("range", 0.0, None), "created_at": ("time",)},
    "provenance": {"created_at": ("time",)},
}
#: The SQLite type of every column as production writes it (see ``_cells.check_cells``).
_KINDS = {
    "matchers": {"id": "text", "store": "text", "description": "text", "embedding": "blob?",
                 "model": "text?", "created_at": "text", "updated_at": "text"},
    "items": {"id": "text", "store": "text", "statement": "text", "rationale": "text?", "embedding": "blob?",
              "model": "text?", "confidence": "num", "confirm_count": "num", "disconfirm_count": "num",
              "created_at": "text", "updated_at": "text"},
    "edges": {"matcher_id": "text", "{fk}": "text", "weight": "num", "created_at": "text"},
    "provenance": {"id": "text", "{fk}": "text", "signal": "text", "detail": "text?", "created_at": "text"},
}


def _blob(v):
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return None
    return np.asarray(v, dtype="<f4").tobytes()


#: little-endian float32: a cell of this dtype is written as its own bytes
_F4 = np.dtype("<f4")
_LITTLE = _F4 is np.dtype(np.float32)
#: vectors decoded at a time to check them (a few MB, reused from cache)
_CHUNK = 2048


def _blobs(cells) -> list:
    """The BLOB ``_blob`` makes of each cell. A C-contiguous little-endian float32 array
    is handed to ``sqlite3`` as it is: it binds the array's bytes, which are the bytes
    ``_blob`` would make (unless an adapter for arrays is registered)."""
    if (np.ndarray, sqlite3.PrepareProtocol) in getattr(sqlite3, "adapters", {}):
        return [_blob(v) for v in cells]
    nd, f4 = np.ndarray, _F4
    return [v if type(v) is nd and v.dtype is f4 and v.flags.c_contiguous else _blob(v) for v in cells]


def _same_vectors(xs, ys) -> bool:
    """Whether two embedding columns hold the same vectors: both None, or the same
    little-endian float32 bytes.

    Cells that are 1-d float32 arrays of one length on both sides are compared
    a run at a time as matrices of their bit patterns; any other cell as bytes.
    """
    if len(xs) != len(ys):
        return False
    kx, ky = _kinds(xs), _kinds(ys)
    one_by_one = np.flatnonzero((kx == -2) | (ky == -2))
    for j in one_by_one.tolist():
        u, v = xs[j], ys[j]
        if not ((u is None and v is None) or (u is not None and v is not None and
                np.asarray(u, "<f4").tobytes() == np.asarray(v, "<f4").tobytes())):
            return False
    rest = (kx != -2) & (ky != -2)
    if (kx[rest] != ky[rest]).any():
        return False        # a vector against None, or vectors of two lengths
    for dim in dict.fromkeys(kx[rest].tolist()):
        if dim <= 0:
            continue        # both None (or both empty)
        rows = np.flatnonzero(rest & (kx == dim)).tolist()
        a, b = (np.empty(min(len(rows), _CHUNK) * dim, dtype=_F4) for _ in range(2))
        for lo in range(0, len(rows), _CHUNK):
            at = rows[lo: lo + _CHUNK]
            m = len(at) * dim
            np.concatenate([xs[j] for j in at], out=a[:m])
            np.concatenate([ys[j] for j in at], out=b[:m])
            if not np.array_equal(a[:m].view(np.uint32), b[:m].view(np.uint32)):
                return False
    return True


def _kinds(cells) -> np.ndarray:
    """Per cell: its length when it is a 1-d float32 array, -1 for None, -2 otherwise."""
    nd, f4 = np.ndarray, _F4
    return np.array([v.size if type(v) is nd and v.dtype is f4 and v.ndim == 1 else -1 if v is None else -2
                     for v in cells], dtype=np.int64)


def _lengths(blobs) -> np.ndarray:
    """Each BLOB's byte length, -1 for None."""
    n = len(blobs)
    present = [b for b in blobs if b is not None]
    if len(present) == n:
        return np.fromiter(map(len, blobs), dtype=np.int64, count=n)
    out = np.full(n, -1, dtype=np.int64)
    mask = np.array([b is not None for b in blobs], dtype=bool)
    out[mask] = np.fromiter(map(len, present), dtype=np.int64, count=len(present))
    return out


def _vectors(blobs, lengths) -> tuple[np.ndarray, object]:
    """The embedding cells of ``blobs`` (float32 BLOBs whose ``lengths`` ``check_vectors``
    accepted, -1 for None), and their vectors as matrices for checks.

    Each cell is a float32 view of its BLOB (None stays None), read-only like
    the BLOB: no vector is copied. The second value yields ``(positions, matrix)`` for runs of up to
    :data:`_CHUNK` vectors of one dimension, decoded a run at a time.
    """
    n = len(blobs)
    have = np.flatnonzero(lengths >= 0)
    if len(have) == n:
        cells = list(map(np.frombuffer, blobs, repeat(_F4, n)))
    else:
        cells = [None] * n
        for j, v in zip(have.tolist(), map(np.frombuffer, [blobs[j] for j in have.tolist()], repeat(_F4))):
            cells[j] = v
    if not _LITTLE:
        cells = [None if v is None else v.astype(np.float32) for v in cells]
    return np.fromiter(cells, dtype=object, count=n), _runs(blobs, lengths)


def _runs(blobs, lengths):
    """``(positions, matrix)`` for each run of up to :data:`_CHUNK` BLOBs of one length,
    in position order within a length: the run's vectors decoded into one matrix."""
    for length in dict.fromkeys(lengths.tolist()):
        if length < 0:
            continue
        rows = np.flatnonzero(lengths == length)
        for lo in range(0, len(rows), _CHUNK):
            at = rows[lo: lo + _CHUNK]
            joined = b"".join([blobs[j] for j in at.tolist()])
            yield at, np.frombuffer(joined, dtype="<f4").reshape(len(at), length // 4)


def _without_gc(fn):
    """``fn`` run with the cyclic collector paused: reading or writing a large store makes
    hundreds of thousands of row tuples and no cycles, and the collector's passes over
    them would cost more than the work."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        enabled = gc.isenabled()
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            if enabled:
                gc.enable()
    return run


class ThatchSection:
    """One scoring engine's tables as a store section (see ``store._core``)."""

    def __init__(self, kind: str):
        self.KEY = kind
        self.ENGINE = kind
        self.t = ENGINE_TABLES[kind]
        self.TABLES = (self.t["matchers"], self.t["items"], self.t["edges"], self.t["provenance"])

    def _cols(self, part):
        return [c.format(fk=self.t["item_fk"]) for c in _COLUMNS[part]]

    def _engine_cls(self):
        if self.KEY == "prediction":
            return PredictionEngine
        return BehaviorEngine

    def create(self, conn):
        for stmt in thatch_ddl(self.KEY):
            conn.execute(stmt)

    def default_params(self, engine):
        return engine.params

    def model(self, engine):
        state = getattr(engine, "state", None)
        if hasattr(state, "matchers") and hasattr(state, "items"):    # the two columns, not every table
            matchers, items = state.matchers["model"], state.items["model"]
        else:
            matchers, items = engine.tables["matchers"]["model"], engine.tables["items"]["model"]
        models = {m for m in matchers.tolist() if m}
        models |= {m for m in items.tolist() if m}
        if not models:
            return engine.model_name
        return sorted(models)[0] if len(models) == 1 else ",".join(sorted(models))

    def frames(self, engine, constants=None):
        """The engine's tables with ``confidence`` recomputed under ``constants``.

        ``constants`` has ``k`` and ``p0`` (a ``ScoringParams`` or a mapping);
        ``None`` keeps the stored column.
        """
        tables = engine.tables
        items = tables["items"].copy()
        if constants is not None and len(items):
            k, p0 = _constant(constants, "k"), _constant(constants, "p0")
            items["confidence"] = posterior_confidence(items["confirm_count"].to_numpy(),
                                                       items["disconfirm_count"].to_numpy(), k, p0)
        return {"stores": tables["stores"], "matchers": tables["matchers"], "items": items,
                "edges": tables["edges"], "provenance": tables["provenance"]}

    @_without_gc
    def write(self, conn, engine, params):
        """Insert the engine's rows, ``confidence`` recomputed under ``params``' K and P0."""
        f = self.frames(engine, params)
        conn.executemany("INSERT OR IGNORE INTO stores(name) VALUES (?)",
                         [(s,) for s in f["stores"]["name"].tolist()])
        t = self.t
        # whole columns zipped into rows (the cells as the frames hold them, numbers as floats)
        m = f["matchers"]
        cols = _named(m, ["id", "store", "description"]) + [_blobs(m["embedding"].tolist())]
        cols += _named(m, ["model", "created_at", "updated_at"])
        conn.executemany(
            f"INSERT INTO {t['matchers']} (id, store, description, embedding, model, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)", zip(*cols))
        it = f["items"]
        cols = _named(it, ["id", "store", "statement", "rationale"]) + [_blobs(it["embedding"].tolist())]
        cols += _named(it, ["model"]) + _floats(it, ["confidence", "confirm_count", "disconfirm_count"])
        cols += _named(it, ["created_at", "updated_at"])
        conn.executemany(
            f"INSERT INTO {t['items']} (id, store, statement, rationale, embedding, model, confidence, "
            "confirm_count, disconfirm_count, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)", zip(*cols))
        e = f["edges"]
        cols = _columns(e, [0, 1]) + [[float(v) for v in e.iloc[:, 2].tolist()]] + _columns(e, [3])
        conn.executemany(
            f"INSERT INTO {t['edges']} (matcher_id, {t['item_fk']}, weight, created_at) VALUES (?,?,?,?)",
            zip(*cols))
        p = f["provenance"]
        conn.executemany(
            f"INSERT INTO {t['provenance']} (id, {t['item_fk']}, signal, detail, created_at) VALUES (?,?,?,?,?)",
            zip(*_columns(p, range(p.shape[1]))))
        counts = {"stores": len(f["stores"]), t["matchers"]: len(m), t["items"]: len(it),
                  t["edges"]: len(e), t["provenance"]: len(p)}
        if self._has_pairs(engine, params):
            pairs = engine.dedup_pairs
            conn.execute(PREDICTION_DEDUP_PAIRS_DDL)
            conn.executemany("INSERT INTO prediction_dedup_pairs (store, id_a, id_b, status, checked_at) "
                             "VALUES (?, ?, ?, ?, ?)", pairs.itertuples(index=False, name=None))
            counts[_PAIRS] = len(pairs)
        return counts

    def _has_pairs(self, engine, params) -> bool:
        """Whether an export of ``engine`` holds ``prediction_dedup_pairs``: a prediction
        engine written for thatch ``07ecf87`` or later (the release of ``params``, else the
        engine's), whose production creates the table."""
        if self.KEY != "prediction" or not hasattr(engine, "dedup_pairs"):
            return False
        release = getattr(params, "release", None) or engine.params.release
        return at_least("thatch", release, "07ecf87")

    def present(self, conn) -> bool:
        row = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?",
                           (self.t["items"],)).fetchone()
        return row is not None

    @_without_gc
    def read_frames(self, conn, label=None) -> dict:
        """The section's five tables of ``conn`` as DataFrames (rows in rowid order, text
        and key columns as objects, numbers as float64, embeddings as float32 arrays or
        None). A cell of the wrong SQLite type, an embedding that is not float32 bytes of
        its model's one dimension, or a vector holding NaN or infinity raises
        :class:`StoreSchemaError` naming its table, row and column."""
        t = self.t
        if label is None:
            label = database_label(conn) or self.KEY
        require_tables(conn, label, {
            "stores": ["name"], t["matchers"]: self._cols("matchers"), t["items"]: self._cols("items"),
            t["edges"]: self._cols("edges"), t["provenance"]: self._cols("provenance")})
        # SQLite keeps text in a REAL column and any bytes in a BLOB one: reject what
        # production would choke on before building an engine from it
        specs = [("stores", {"name": "text"}, "name")]
        for part in ("matchers", "items", "edges", "provenance"):
            kinds = {c.format(fk=t["item_fk"]): k for c, k in _KINDS[part].items()}
            specs.append((t[part], kinds, "id" if "id" in kinds else None))
        vector_tables = (t["matchers"], t["items"])

        def check_in_sql():
            for table, kinds, key in specs:
                check_cells(conn, label, table, kinds, key=key)
            check_vectors(conn, label, vector_tables)

        # a plain connection's values tell their SQLite types: each table is read once and
        # checked as read, scanned again only to name a bad cell
        plain = plain_reader(conn)
        if not plain:
            check_in_sql()
        names = {"stores": ["name"]}
        names.update({t[part]: self._cols(part) for part in ("matchers", "items", "edges", "provenance")})
        try:
            data = {table: _fetch(conn, table, names[table]) for table, _, _ in specs}
        except sqlite3.Error:
            if plain:   # what the checks find comes first, as when they run before reading
                check_in_sql()
            raise
        if plain:
            for table, kinds, key in specs:
                check_fetched(conn, label, table, kinds, data[table], key=key)
        lengths = {table: _lengths(data[table]["embedding"]) for table in vector_tables}
        if plain:
            check_fetched_vectors(conn, label, vector_tables,
                                  [(data[table]["model"], lengths[table].tolist()) for table in vector_tables])
        stores, matchers, items, edges, prov = (_frame(data[table], names[table]) for table, _, _ in specs)
        for part, df in (("matchers", matchers), ("items", items)):
            cells, blocks = _vectors(data[t[part]]["embedding"], lengths[t[part]])
            df["embedding"] = cells if len(cells) else []    # pandas types an empty column float64
            check_finite_blocks(label, t[part], df["id"].to_numpy(), blocks, "embedding")
        for col in ("confidence", "confirm_count", "disconfirm_count"):
            items[col] = items[col].astype(np.float64)
        edges["weight"] = edges["weight"].astype(np.float64)
        if "global" not in set(stores["name"]):
            raise StoreSchemaError(f"{label}: table 'stores' lacks the 'global' store")
        for part in ("matchers", "items", "edges", "provenance"):
            check_domains(conn, label, t[part], _DOMAINS[part], key="id" if part in ("matchers", "items",
                                                                                      "provenance") else None)
        return {"stores": stores, "matchers": matchers, "items": items, "edges": edges,
                "provenance": prov}

    def read(self, conn, *, embedder=None, project_store=None, release=None):
        """The engine a file holds, with the params ``thatchlab_meta`` records (defaults
        otherwise), built for ``release`` when given."""
        frames = self.read_frames(conn)
        params = None
        try:
            row = conn.execute("SELECT value FROM thatchlab_meta WHERE key='params'").fetchone()
            if row:
                p = json.loads(row[0]).get(self.KEY)
                params = ScoringParams.from_dict(p) if p else None
        except Exception:  # a production file has no meta table
            params = None
        if release is not None:
            params = (params if params is not None else ScoringParams()).replace(release=release)
        if project_store is None:
            others = [s for s in frames["stores"]["name"].tolist() if s != "global"]
            project_store = others[0] if len(others) == 1 else "project"
        if self.KEY == "prediction":
            pairs = _read_pairs(conn)
            if pairs is not None:
                frames["dedup_pairs"] = pairs
        return self._engine_cls().from_tables(frames, embedder=embedder, params=params,
                                              project_store=project_store)

    @_without_gc
    def check_equal(self, given, back, params):
        a = self.frames(given, params)
        b = self.frames(back, None)
        # the stores table is shared by both engines: what one engine wrote must be there
        missing = set(a["stores"]["name"]) - set(b["stores"]["name"])
        if missing:
            raise AssertionError(f"stores {sorted(missing)} missing after re-reading")
        for name in ("matchers", "items", "edges", "provenance"):
            x, y = a[name], b[name]
            if list(x.columns) != list(y.columns) or len(x) != len(y):
                raise AssertionError(f"{name}: shape or columns differ")
            for col in x.columns:
                xs, ys = x[col].tolist(), y[col].tolist()
                if col == "embedding":
                    same = _same_vectors(xs, ys)
                else:
                    same = xs == ys or all((u == v) or (_isnull(u) and _isnull(v)) for u, v in zip(xs, ys))
                if not same:
                    raise AssertionError(f"{name}.{col} differs after re-reading")
        if self._has_pairs(given, params) and \
                given.dedup_pairs.values.tolist() != back.dedup_pairs.values.tolist():
            raise AssertionError(f"{_PAIRS} differs after re-reading")


_PAIRS = "prediction_dedup_pairs"


def _read_pairs(conn):
    """``prediction_dedup_pairs`` in rowid order as a DataFrame of texts, or None when the file
    has no such table (production before ``07ecf87``). A cell that is not text raises
    :class:`StoreSchemaError` naming its row and column."""
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (_PAIRS,)).fetchone() is None:
        return None
    label = database_label(conn) or "prediction"
    cols = ["store", "id_a", "id_b", "status", "checked_at"]
    require_tables(conn, label, {_PAIRS: cols})
    cur = conn.cursor()
    cur.row_factory = None
    rows = cur.execute(f"SELECT {', '.join(cols)} FROM {_PAIRS} ORDER BY rowid").fetchall()
    for j, row in enumerate(rows, start=1):
        for col, value in zip(cols, row):
            if not isinstance(value, str):
                raise StoreSchemaError(f"{label}: table {_PAIRS!r}, row {j}, column {col!r} holds "
                                       f"{value!r}; expected text")
    return pd.DataFrame(rows, columns=cols, dtype=object)


def _fetch(conn, table, cols) -> dict:
    """``{column: tuple of cells}`` of ``table`` in rowid order."""
    cur = conn.cursor()
    cur.row_factory = None      # rows as tuples, whatever the connection makes of them
    rows = cur.execute(f"SELECT {', '.join(cols)} FROM {table} ORDER BY rowid").fetchall()
    return dict(zip(cols, zip(*rows))) if rows else {c: () for c in cols}


def _frame(columns: dict, cols) -> pd.DataFrame:
    """Fetched columns as a DataFrame of object columns."""
    n = len(columns[cols[0]])
    if not n:
        return pd.DataFrame([], columns=cols, dtype=object)
    data = {c: np.fromiter(columns[c], dtype=object, count=n) for c in cols}
    return pd.DataFrame(data, columns=cols, copy=False)


def _named(df, cols) -> list:
    """The named columns of ``df`` as lists of their cells."""
    return [df[c].tolist() for c in cols]


def _floats(df, cols) -> list:
    """The named columns of ``df`` as lists of Python floats."""
    return [[float(v) for v in df[c].tolist()] for c in cols]


def _columns(df, positions) -> list:
    """The columns of ``df`` at ``positions`` as lists of their cells."""
    return [df.iloc[:, k].tolist() for k in positions]


def _constant(constants, name):
    value = constants.get(name) if isinstance(constants, dict) else getattr(constants, name)
    return float(value)


def _isnull(v):
    return v is None or (isinstance(v, float) and np.isnan(v))
