"""The state of a scoring engine: the four production tables as rows in memory.

Rows live in column lists in insertion order (SQLite rowid order), with the
matcher and item vectors in :class:`~thatchlab.core.vectors.VectorRows` for
cosine scans. ``tables`` exposes them as DataFrames with production's columns;
``from_tables`` rebuilds an engine from such frames. Ids are uuid5 over the
row's table, store, text and how many rows with the same key came before.
"""

from __future__ import annotations

import uuid
from collections import Counter, defaultdict

import numpy as np
import pandas as pd

from thatchlab.core.vectors import VectorRows

__all__ = ["EngineState", "deterministic_id", "ID_NAMESPACE"]

#: The fixed namespace of every deterministic id thatchlab derives.
ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_DNS, "thatchlab.ids")


def deterministic_id(table: str, store: str, text: str, n: int) -> str:
    """uuid5 over :data:`ID_NAMESPACE` and ``table␟store␟text␟n``.

    ``n`` counts earlier rows with the same (table, store, text), deleted
    ones included, so replays reproduce the same ids.

    >>> deterministic_id("predictions", "project", "use tabs", 0) == deterministic_id(
    ...     "predictions", "project", "use tabs", 0)
    True
    """
    return str(uuid.uuid5(ID_NAMESPACE, "\x1f".join([table, store, text, str(n)])))


class EngineState:
    """Rows of stores, matchers, items, edges and provenance (see the module docstring).

    Subclasses provide ``config`` (an :class:`~thatchlab.scoring.EngineConfig`)
    and the constructor arguments ``embedder``, ``params``, ``project_store``.
    """

    # ------------------------------------------------------------------ state
    def _reset_state(self):
        self._stores: list[str] = ["global"]
        # matchers (append-only)
        self._m = {k: [] for k in ("id", "store", "description", "model", "created_at", "updated_at")}
        self._m_vec = VectorRows()
        self._m_pos: dict[str, int] = {}
        self._m_store_code: list[int] = []
        # items
        self._i = {k: [] for k in ("id", "store", "statement", "rationale", "model", "confidence",
                                   "confirm_count", "disconfirm_count", "created_at", "updated_at")}
        self._i_vec = VectorRows()
        self._i_pos: dict[str, int] = {}
        # edges and provenance in insertion order
        self._e = {k: [] for k in ("matcher_id", "item_id", "weight", "created_at")}
        self._e_by_matcher: dict[str, list[int]] = defaultdict(list)
        self._e_keys: set = set()
        self._p = {k: [] for k in ("id", "item_id", "signal", "detail", "created_at")}
        self._id_counts: Counter = Counter()
        self._version = 0

    # ------------------------------------------------------------- tables
    @property
    def tables(self) -> dict:
        """The state as DataFrames with production columns: ``stores``,
        ``matchers``, ``items``, ``edges``, ``provenance`` (rows in insertion order;
        ``embedding`` cells are float32 arrays or None)."""
        fk = self.config.tables["item_fk"]
        stores = pd.DataFrame({"name": pd.Series(self._stores, dtype=object)})
        matchers = pd.DataFrame({
            "id": self._m["id"], "store": self._m["store"], "description": self._m["description"],
            "embedding": _obj([self._m_vec.vector(i) for i in range(len(self._m_vec))]),
            "model": self._m["model"], "created_at": self._m["created_at"],
            "updated_at": self._m["updated_at"]},
            columns=["id", "store", "description", "embedding", "model", "created_at", "updated_at"])
        items = pd.DataFrame({
            "id": self._i["id"], "store": self._i["store"], "statement": self._i["statement"],
            "rationale": self._i["rationale"],
            "embedding": _obj([self._i_vec.vector(i) for i in range(len(self._i_vec))]),
            "model": self._i["model"],
            "confidence": np.asarray(self._i["confidence"], dtype=np.float64),
            "confirm_count": np.asarray(self._i["confirm_count"], dtype=np.float64),
            "disconfirm_count": np.asarray(self._i["disconfirm_count"], dtype=np.float64),
            "created_at": self._i["created_at"], "updated_at": self._i["updated_at"]},
            columns=["id", "store", "statement", "rationale", "embedding", "model", "confidence",
                     "confirm_count", "disconfirm_count", "created_at", "updated_at"])
        edges = pd.DataFrame({"matcher_id": self._e["matcher_id"], fk: self._e["item_id"],
                              "weight": np.asarray(self._e["weight"], dtype=np.float64),
                              "created_at": self._e["created_at"]},
                             columns=["matcher_id", fk, "weight", "created_at"])
        provenance = pd.DataFrame({"id": self._p["id"], fk: self._p["item_id"],
                                   "signal": self._p["signal"], "detail": self._p["detail"],
                                   "created_at": self._p["created_at"]},
                                  columns=["id", fk, "signal", "detail", "created_at"])
        for df in (matchers, items, edges, provenance):
            for col in df.columns:
                if df[col].dtype != np.float64:
                    df[col] = df[col].astype(object)
        return {"stores": stores, "matchers": matchers, "items": items, "edges": edges,
                "provenance": provenance}

    @classmethod
    def from_tables(cls, tables: dict, *, embedder=None, params=None, project_store="project",
                    clock=None):
        """Rebuild an engine from DataFrames shaped like :attr:`tables`
        (e.g. read from a production store). Inputs are copied, not modified."""
        eng = cls(embedder=embedder, params=params, project_store=project_store, clock=clock)
        eng._load_tables(tables)
        return eng

    def _load_tables(self, tables: dict):
        fk = self.config.tables["item_fk"]
        self._reset_state()
        for name in tables["stores"]["name"].tolist():
            self._ensure_store(name)
        m = tables["matchers"]
        for row in m.itertuples(index=False):
            self._ensure_store(row.store)
            self._add_matcher_row(row.id, row.store, row.description, _vec_or_none(row.embedding),
                                  _none(row.model), row.created_at, row.updated_at)
            self._id_counts[(self.config.tables["matchers"], row.store, row.description)] += 1
        it = tables["items"]
        for row in it.itertuples(index=False):
            self._ensure_store(row.store)
            self._add_item_row(row.id, row.store, row.statement, _none(row.rationale),
                               _vec_or_none(row.embedding), _none(row.model), float(row.confidence),
                               float(row.confirm_count), float(row.disconfirm_count),
                               row.created_at, row.updated_at)
            self._id_counts[(self.config.tables["items"], row.store, row.statement)] += 1
        for row in tables["edges"].itertuples(index=False):
            self._add_edge(row.matcher_id, getattr(row, fk), float(row.weight), row.created_at)
        for row in tables["provenance"].itertuples(index=False):
            item_id = getattr(row, fk)
            self._add_provenance_row(row.id, item_id, row.signal, _none(row.detail), row.created_at)
            pos = self._i_pos.get(item_id)
            store = self._i["store"][pos] if pos is not None else ""
            self._id_counts[(self.config.tables["provenance"], store,
                             _prov_text(item_id, row.signal, _none(row.detail)))] += 1

    # ------------------------------------------------------------ low-level rows
    def _ensure_store(self, name):
        if name not in self._stores:
            self._stores.append(name)

    def _store_code(self, name) -> int:
        return self._stores.index(name)

    def _add_matcher_row(self, mid, store, description, vec, model, created_at, updated_at):
        pos = len(self._m["id"])
        for k, v in (("id", mid), ("store", store), ("description", description), ("model", model),
                     ("created_at", created_at), ("updated_at", updated_at)):
            self._m[k].append(v)
        self._m_vec.append(vec, model)
        self._m_pos[mid] = pos
        self._m_store_code.append(self._store_code(store))
        self._m_store_arr = None
        self._version += 1
        return pos

    def _add_item_row(self, iid, store, statement, rationale, vec, model, confidence, c, d,
                      created_at, updated_at):
        pos = len(self._i["id"])
        for k, v in (("id", iid), ("store", store), ("statement", statement),
                     ("rationale", rationale), ("model", model), ("confidence", confidence),
                     ("confirm_count", c), ("disconfirm_count", d), ("created_at", created_at),
                     ("updated_at", updated_at)):
            self._i[k].append(v)
        self._i_vec.append(vec, model)
        self._i_pos[iid] = pos
        self._version += 1
        return pos

    def _add_edge(self, matcher_id, item_id, weight, created_at):
        key = (matcher_id, item_id)
        if key in self._e_keys:
            return False
        pos = len(self._e["matcher_id"])
        self._e["matcher_id"].append(matcher_id)
        self._e["item_id"].append(item_id)
        self._e["weight"].append(weight)
        self._e["created_at"].append(created_at)
        self._e_by_matcher[matcher_id].append(pos)
        self._e_keys.add(key)
        self._version += 1
        return True

    def _add_provenance_row(self, pid, item_id, signal, detail, created_at):
        for k, v in (("id", pid), ("item_id", item_id), ("signal", signal), ("detail", detail),
                     ("created_at", created_at)):
            self._p[k].append(v)

    def _next_id(self, table_key: str, store: str, text: str) -> str:
        table = self.config.tables[table_key]
        key = (table, store, text)
        n = self._id_counts[key]
        self._id_counts[key] = n + 1
        return deterministic_id(table, store, text, n)

    def _delete_item(self, pos: int):
        iid = self._i["id"][pos]
        for k in self._i:
            del self._i[k][pos]
        self._i_vec.delete([pos])
        self._i_pos = {x: j for j, x in enumerate(self._i["id"])}
        keep = [j for j, x in enumerate(self._e["item_id"]) if x != iid]
        for k in self._e:
            self._e[k] = [self._e[k][j] for j in keep]
        self._e_keys = set(zip(self._e["matcher_id"], self._e["item_id"]))
        self._e_by_matcher = defaultdict(list)
        for j, m in enumerate(self._e["matcher_id"]):
            self._e_by_matcher[m].append(j)
        keep = [j for j, x in enumerate(self._p["item_id"]) if x != iid]
        for k in self._p:
            self._p[k] = [self._p[k][j] for j in keep]
        self._version += 1


def _prov_text(item_id: str, signal: str, detail) -> str:
    return f"{item_id}\x1f{signal}\x1f{detail if detail is not None else ''}"


def _none(v):
    if v is None:
        return None
    if isinstance(v, float) and np.isnan(v):
        return None
    return v


def _vec_or_none(v):
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return None
    if isinstance(v, (bytes, bytearray, memoryview)):
        return np.frombuffer(bytes(v), dtype="<f4").astype(np.float32)
    return np.asarray(v, dtype=np.float32)


def _obj(values) -> np.ndarray:
    arr = np.empty(len(values), dtype=object)
    arr[:] = values
    return arr
