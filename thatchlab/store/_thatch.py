"""Store sections for the scoring engines: the four production thatch tables.

Rows are written in insertion order (SQLite rowid order), embeddings as
little-endian float32 BLOBs, timestamps as production's text, and the
``confidence`` column recomputed under the constants production applies to
the next signal (its hard-coded K and P0 unless the caller declares others),
so the shipped state agrees with what production computes one signal later.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from thatchlab.core.errors import StoreSchemaError
from thatchlab.core.params import ScoringParams
from thatchlab.core.schema import ENGINE_TABLES, thatch_ddl
from thatchlab.core.sqlite import database_label, require_tables
from thatchlab.scoring import posterior_confidence
from thatchlab.store._cells import check_cells, check_finite, check_vectors

_COLUMNS = {
    "matchers": ["id", "store", "description", "embedding", "model", "created_at", "updated_at"],
    "items": ["id", "store", "statement", "rationale", "embedding", "model", "confidence",
              "confirm_count", "disconfirm_count", "created_at", "updated_at"],
    "edges": ["matcher_id", "{fk}", "weight", "created_at"],
    "provenance": ["id", "{fk}", "signal", "detail", "created_at"],
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


def _vec(b):
    if b is None:
        return None
    return np.frombuffer(bytes(b), dtype="<f4").astype(np.float32)


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
            from thatchlab.scoring.prediction import PredictionEngine
            return PredictionEngine
        from thatchlab.scoring.behavior import BehaviorEngine
        return BehaviorEngine

    def create(self, conn):
        for stmt in thatch_ddl(self.KEY):
            conn.execute(stmt)

    def default_params(self, engine):
        return engine.params

    def model(self, engine):
        models = {m for m in engine.tables["matchers"]["model"].tolist() if m}
        models |= {m for m in engine.tables["items"]["model"].tolist() if m}
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

    def write(self, conn, engine, params):
        """Insert the engine's rows, ``confidence`` recomputed under ``params``' K and P0."""
        f = self.frames(engine, params)
        conn.executemany("INSERT OR IGNORE INTO stores(name) VALUES (?)",
                         [(s,) for s in f["stores"]["name"].tolist()])
        t = self.t
        m = f["matchers"]
        conn.executemany(
            f"INSERT INTO {t['matchers']} (id, store, description, embedding, model, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(r.id, r.store, r.description, _blob(r.embedding), r.model, r.created_at, r.updated_at)
             for r in m.itertuples(index=False)])
        it = f["items"]
        conn.executemany(
            f"INSERT INTO {t['items']} (id, store, statement, rationale, embedding, model, confidence, "
            "confirm_count, disconfirm_count, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            [(r.id, r.store, r.statement, r.rationale, _blob(r.embedding), r.model, float(r.confidence),
              float(r.confirm_count), float(r.disconfirm_count), r.created_at, r.updated_at)
             for r in it.itertuples(index=False)])
        e = f["edges"]
        conn.executemany(
            f"INSERT INTO {t['edges']} (matcher_id, {t['item_fk']}, weight, created_at) VALUES (?,?,?,?)",
            [(r[0], r[1], float(r[2]), r[3]) for r in e.itertuples(index=False)])
        p = f["provenance"]
        conn.executemany(
            f"INSERT INTO {t['provenance']} (id, {t['item_fk']}, signal, detail, created_at) VALUES (?,?,?,?,?)",
            [tuple(r) for r in p.itertuples(index=False)])
        return {"stores": len(f["stores"]), t["matchers"]: len(m), t["items"]: len(it),
                t["edges"]: len(e), t["provenance"]: len(p)}

    def present(self, conn) -> bool:
        row = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?",
                           (self.t["items"],)).fetchone()
        return row is not None

    def read_frames(self, conn, label=None) -> dict:
        t = self.t
        if label is None:
            label = database_label(conn) or self.KEY
        require_tables(conn, label, {
            "stores": ["name"], t["matchers"]: self._cols("matchers"), t["items"]: self._cols("items"),
            t["edges"]: self._cols("edges"), t["provenance"]: self._cols("provenance")})
        # SQLite keeps text in a REAL column and any bytes in a BLOB one: reject what
        # production would choke on before building an engine from it
        check_cells(conn, label, "stores", {"name": "text"}, key="name")
        for part in ("matchers", "items", "edges", "provenance"):
            kinds = {c.format(fk=t["item_fk"]): k for c, k in _KINDS[part].items()}
            check_cells(conn, label, t[part], kinds, key="id" if "id" in kinds else None)
        check_vectors(conn, label, (t["matchers"], t["items"]))

        def q(table, cols):
            rows = conn.execute(f"SELECT {', '.join(cols)} FROM {table} ORDER BY rowid").fetchall()
            return pd.DataFrame(rows, columns=cols, dtype=object)

        stores = q("stores", ["name"])
        matchers = q(t["matchers"], self._cols("matchers"))
        items = q(t["items"], self._cols("items"))
        edges = q(t["edges"], self._cols("edges"))
        prov = q(t["provenance"], self._cols("provenance"))
        for part, df in (("matchers", matchers), ("items", items)):
            df["embedding"] = [_vec(b) for b in df["embedding"]]
            check_finite(label, t[part], df, "embedding")
        for col in ("confidence", "confirm_count", "disconfirm_count"):
            items[col] = items[col].astype(np.float64)
        edges["weight"] = edges["weight"].astype(np.float64)
        if "global" not in set(stores["name"]):
            raise StoreSchemaError(f"{label}: table 'stores' lacks the 'global' store")
        return {"stores": stores, "matchers": matchers, "items": items, "edges": edges,
                "provenance": prov}

    def read(self, conn, *, embedder=None, project_store=None):
        frames = self.read_frames(conn)
        params = None
        try:
            row = conn.execute("SELECT value FROM thatchlab_meta WHERE key='params'").fetchone()
            if row:
                p = json.loads(row[0]).get(self.KEY)
                params = ScoringParams.from_dict(p) if p else None
        except Exception:  # a production file has no meta table
            params = None
        if project_store is None:
            others = [s for s in frames["stores"]["name"].tolist() if s != "global"]
            project_store = others[0] if len(others) == 1 else "project"
        return self._engine_cls().from_tables(frames, embedder=embedder, params=params,
                                              project_store=project_store)

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
                    same = all((u is None and v is None) or (u is not None and v is not None and
                               np.asarray(u, "<f4").tobytes() == np.asarray(v, "<f4").tobytes())
                               for u, v in zip(xs, ys))
                else:
                    same = all((u == v) or (_isnull(u) and _isnull(v)) for u, v in zip(xs, ys))
                if not same:
                    raise AssertionError(f"{name}.{col} differs after re-reading")


def _constant(constants, name):
    value = constants.get(name) if isinstance(constants, dict) else getattr(constants, name)
    return float(value)


def _isnull(v):
    return v is None or (isinstance(v, float) and np.isnan(v))
