"""The state of a scoring engine: the stores and the four production tables in memory.

:class:`EngineState` keeps the rows of ``stores``, matchers, items, edges and
provenance as columns in insertion order (SQLite rowid order), the matcher
and item vectors as :class:`~thatchlab.core.vectors.VectorRows` for cosine
scans, and id → position maps. Everything is readable through public
methods (:class:`TableView` columns and cells, positions, edge lists, vector
masks). Its write methods (:meth:`EngineState.add_item` and the like) are
the steps the engine's tools are made of, unchecked: rows should change only
through those tools. :attr:`EngineState.tables`
gives DataFrames with production's columns and :meth:`EngineState.from_tables`
rebuilds a state from such frames. Ids are uuid5 over the row's table, store,
text and how many rows with the same key came before.
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Mapping

import numpy as np
import pandas as pd

from thatchlab.core.docstrings import fill_doc
from thatchlab.scoring._ids import ID_NAMESPACE, deterministic_id, prov_text
from thatchlab.scoring._load import (
    NO_MODEL,
    codes_of,
    column_values,
    float_values,
    model_codes_of,
    nullable_values,
    table_frame,
    vector_cells,
)
from thatchlab.scoring._rows import Rows, SerialIndex, VectorTableRows
from thatchlab.scoring._view import TableView

__all__ = ["EngineState", "TableView", "TABLE_COLUMNS", "deterministic_id", "ID_NAMESPACE"]

#: Stored columns of each table, in production's order (vectors live apart; the
#: item foreign key of edges and provenance is called ``item_id`` here).
TABLE_COLUMNS = {
    "matchers": ("id", "store", "description", "model", "created_at", "updated_at"),
    "items": ("id", "store", "statement", "rationale", "model", "confidence", "confirm_count",
              "disconfirm_count", "created_at", "updated_at"),
    "edges": ("matcher_id", "item_id", "weight", "created_at"),
    "provenance": ("id", "item_id", "signal", "detail", "created_at"),
}
_TEXT_OF = {"matchers": "description", "items": "statement"}

# parameters several methods share, written once (filled in by fill_doc)
_TABLE_DIM = """
table : {"matchers", "items"}
    The table scanned.
dim : int
    The query's dimension.
"""
_STORES_MODEL = """
stores : list of str, default=None
    The stores scanned; all when None.
model : str, default=None
    A model tag the rows must carry (or none); any when None.
"""
#: the whole Parameters section of the cosine scans
_SCAN_PARAMS = "Parameters\n----------\n" + _TABLE_DIM.lstrip("\n") + _STORES_MODEL.lstrip("\n")


class EngineState:
    """Stores and the matchers, items, edges and provenance rows of one engine.

    Parameters
    ----------
    names : mapping
        Production table names (``matchers``, ``items``, ``edges``,
        ``provenance``) and the item foreign-key column (``item_fk``), as in
        :data:`thatchlab.core.schema.ENGINE_TABLES`.

    Attributes
    ----------
    matchers, items, edges, provenance : TableView
        Read-only columns of each table.
    names : dict
        The table names given.
    stores : tuple of str
        Store names in insertion order.
    n_matchers, n_items, n_edges, n_provenance : int
        Rows of each table.
    tables : dict of DataFrame
        The state with production columns.

    Notes
    -----
    The ``table`` argument of the vector methods is ``"matchers"`` or
    ``"items"``. Positions are row indices in insertion order; a delete
    shifts later items' positions down (their serials stay).

    The write methods (:meth:`ensure_store`, :meth:`next_id`,
    :meth:`add_matcher`, :meth:`add_item`, :meth:`add_edge`,
    :meth:`add_provenance`, :meth:`set_counts`, :meth:`delete_item`) apply
    one step of a write as given, without the engine's checks, dedup or
    confidence rule; use the engine's tools to change a state.

    Examples
    --------
    >>> from thatchlab.embed import LookupEmbedder
    >>> from thatchlab.scoring import PredictionEngine
    >>> eng = PredictionEngine(LookupEmbedder({"writing tests": [1, 0], "use pytest": [0, 1]}))
    >>> _ = eng.update("writing tests", "use pytest", "create", now="2026-01-01T00:00:00Z")
    >>> st = eng.state
    >>> st.n_matchers, st.n_items, st.n_edges, st.stores
    (1, 1, 1, ('global', 'project'))
    >>> iid = st.items["id"][0]
    >>> st.item_position(iid), st.edges_of_item(iid), st.vector("items", 0).tolist()
    (0, (0,), [0.0, 1.0])
    >>> st.usable("matchers", 2, stores=["global"]).tolist()
    [False]
    >>> st.foreign_model("matchers", "another-model").tolist(), st.matchers["model"].tolist()
    ([True], ['lookup'])
    """

    def __init__(self, names: Mapping[str, str]):
        self.names = dict(names)
        self._stores: list[str] = ["global"]
        self._store_codes: dict[str, int] = {"global": 0}
        self._model_codes: dict[str, int] = {}
        self._matchers = VectorTableRows(TABLE_COLUMNS["matchers"])
        self._items = VectorTableRows(TABLE_COLUMNS["items"])
        self._edges = Rows(TABLE_COLUMNS["edges"])
        self._provenance = Rows(TABLE_COLUMNS["provenance"])
        self._edge_keys: set = set()
        self._edges_by_matcher = SerialIndex(self._edges)
        self._edges_by_item = SerialIndex(self._edges)
        self._provenance_by_item = SerialIndex(self._provenance)
        self._id_counts: Counter = Counter()
        self._pending_ids: list = []        # loaded (table, store, text) columns not yet counted
        self._scan_cache: dict = {}         # scan masks and counts until matchers or items change
        self.matchers = TableView(self._matchers, self.names["matchers"])
        self.items = TableView(self._items, self.names["items"])
        self.edges = TableView(self._edges, self.names["edges"])
        self.provenance = TableView(self._provenance, self.names["provenance"])

    # ------------------------------------------------------------------ reads
    @property
    def stores(self) -> tuple:
        """Store names in insertion order (``global`` first)."""
        return tuple(self._stores)

    @property
    def n_matchers(self) -> int:
        """How many matchers."""
        return len(self._matchers)

    @property
    def n_items(self) -> int:
        """How many items."""
        return len(self._items)

    @property
    def n_edges(self) -> int:
        """How many edges."""
        return len(self._edges)

    @property
    def n_provenance(self) -> int:
        """How many provenance rows."""
        return len(self._provenance)

    def matcher_position(self, matcher_id: str) -> int | None:
        """Position of a matcher by id (None when absent).

        Parameters
        ----------
        matcher_id : str
            The matcher's id.

        Returns
        -------
        int or None
            Its position.

        See Also
        --------
        item_position : The same for items.
        """
        return self._matchers.position.get(matcher_id)

    def item_position(self, item_id: str) -> int | None:
        """Position of an item by id (None when absent).

        Parameters
        ----------
        item_id : str
            The item's id.

        Returns
        -------
        int or None
            Its position.

        See Also
        --------
        matcher_position : The same for matchers.
        """
        return self._items.position.get(item_id)

    def edges_of_matcher(self, matcher_id: str) -> tuple:
        """Positions of a matcher's edges, in insertion order.

        Parameters
        ----------
        matcher_id : str
            The matcher's id.

        Returns
        -------
        tuple of int
            Edge positions.

        See Also
        --------
        edges_of_item : The edges into an item.
        """
        return tuple(self._edges_by_matcher.get(matcher_id, ()))

    def edges_of_item(self, item_id: str) -> tuple:
        """Positions of the edges into an item, in insertion order.

        Parameters
        ----------
        item_id : str
            The item's id.

        Returns
        -------
        tuple of int
            Edge positions.

        See Also
        --------
        edges_of_matcher : The edges of a matcher.
        """
        return tuple(self._edges_by_item.get(item_id, ()))

    def provenance_of_item(self, item_id: str) -> tuple:
        """Positions of an item's provenance rows, in insertion order.

        Parameters
        ----------
        item_id : str
            The item's id.

        Returns
        -------
        tuple of int
            Provenance positions.
        """
        return tuple(self._provenance_by_item.get(item_id, ()))

    def has_edge(self, matcher_id: str, item_id: str) -> bool:
        """Whether the matcher is linked to the item.

        Parameters
        ----------
        matcher_id : str
            The matcher's id.
        item_id : str
            The item's id.

        Returns
        -------
        bool
            True when the edge exists.
        """
        return (matcher_id, item_id) in self._edge_keys

    def vector(self, table: str, position: int) -> np.ndarray | None:
        """The float32 vector of one row as stored (None when the row has none).

        Parameters
        ----------
        table : {"matchers", "items"}
            The table.
        position : int
            The row's position.

        Returns
        -------
        ndarray or None
            The vector.
        """
        return self._vector_rows(table).vectors.vector(position)

    @fill_doc(scan_params=_SCAN_PARAMS)
    def usable(self, table: str, dim: int, *, stores=None, model: str | None = None) -> np.ndarray:
        """Boolean mask of the rows a cosine scan may use.

        A row is usable when it has a vector of dimension ``dim`` (production
        compares a query with every row of its own dimension, however many
        dimensions the store holds) and lives in one of ``stores`` (all stores
        when None).
        Like production, the engine's scans name no ``model``: a row's model
        tag never filters it. Naming ``model`` (the engine's ``strict_model``
        mode) also requires the row to carry that tag or none.

        {scan_params}

        Returns
        -------
        ndarray of bool
            One flag per row.

        See Also
        --------
        scan_rows : The same mask, cached, with its count.
        """
        rows = self._vector_rows(table)
        ok = rows.vectors.usable(dim)
        if stores is not None:
            store_code = rows.store_code.values
            in_stores = np.zeros(len(store_code), dtype=bool)
            for s in stores:  # one or two stores: comparisons beat np.isin
                if s in self._store_codes:
                    in_stores |= store_code == self._store_codes[s]
            ok &= in_stores
        if model is not None:
            code = self._model_codes.get(model, NO_MODEL - 1)
            models = rows.model_code.values
            ok &= (models == code) | (models == NO_MODEL)
        return ok

    def foreign_model(self, table: str, model: str | None) -> np.ndarray:
        """Boolean mask of the rows whose model tag is set and differs from ``model``.

        Rows without a tag are never foreign; with ``model`` None (an
        embedder without a name) no row is, since nothing can be compared.
        The comparison is on integer model codes, so it costs one pass over an
        int array (nothing when the state holds no other tag).

        Parameters
        ----------
        table : {"matchers", "items"}
            The table.
        model : str or None
            The embedder's model name.

        Returns
        -------
        ndarray of bool
            One flag per row.
        """
        rows = self._vector_rows(table)
        n = len(rows)
        codes = self._model_codes
        if model is None or not codes or (len(codes) == 1 and model in codes):
            return np.zeros(n, dtype=bool)
        models = rows.model_code.values
        own = codes.get(model)
        foreign = models != NO_MODEL
        if own is not None:
            foreign &= models != own
        return foreign

    # ------------------------------------------------------------------ scans
    @fill_doc(scan_params=_SCAN_PARAMS)
    def scan_rows(self, table: str, dim: int, *, stores=None, model: str | None = None) -> tuple:
        """``(mask, count)``: :meth:`usable` and how many rows it holds, kept until the
        table next changes (the mask is shared between calls, so it is read-only).

        {scan_params}

        Returns
        -------
        mask : ndarray of bool
            :meth:`usable`'s mask (read-only).
        count : int
            How many rows it holds.
        """
        key = (table, int(dim), None if stores is None else tuple(stores), model)
        hit = self._scan_cache.get(key)
        if hit is None:
            mask = self.usable(table, dim, stores=stores, model=model)
            mask.flags.writeable = False
            hit = (mask, int(np.count_nonzero(mask)))
            self._cache(key, hit)
        return hit

    @fill_doc(scan_params=_SCAN_PARAMS)
    def scan_positions(self, table: str, dim: int, *, stores=None, model: str | None = None) -> np.ndarray:
        """The positions of ``scan_rows(...)``'s mask (ascending, read-only), cached likewise.

        {scan_params}

        Returns
        -------
        ndarray of int
            The positions (read-only).
        """
        key = ("positions", table, int(dim), None if stores is None else tuple(stores), model)
        hit = self._scan_cache.get(key)
        if hit is None:
            hit = np.flatnonzero(self.scan_rows(table, dim, stores=stores, model=model)[0])
            hit.flags.writeable = False
            self._cache(key, hit)
        return hit

    @fill_doc(table_dim=_TABLE_DIM, stores_model=_STORES_MODEL)
    def n_foreign_model(self, table: str, dim: int, own: str | None, *, stores=None,
                        model: str | None = None) -> int:
        """How many rows of ``scan_rows(table, dim, stores=stores, model=model)`` carry a
        model tag other than ``own`` (see :meth:`foreign_model`); cached likewise.

        Parameters
        ----------
        {table_dim}
        own : str or None
            The embedder's model name.
        {stores_model}

        Returns
        -------
        int
            The count.
        """
        key = ("foreign", table, int(dim), None if stores is None else tuple(stores), model, own)
        hit = self._scan_cache.get(key)
        if hit is None:
            foreign = self.foreign_model(table, own)
            hit = int(np.count_nonzero(foreign & self.scan_rows(table, dim, stores=stores, model=model)[0])) \
                if foreign.any() else 0
            self._cache(key, hit)
        return hit

    @fill_doc(stores_model=_STORES_MODEL)
    def cosines(self, table: str, query, *, stores=None, model: str | None = None, floor=None,
                top: int | None = None) -> tuple:
        """``(positions, cosines)`` of the usable rows (:meth:`usable`) that may reach
        ``floor`` and rank among the ``top`` largest after 3-decimal rounding.

        Positions ascend; cosines are exact (float64 ``dot / (|a| |b|)``). A
        float32 scan of every usable row finds the candidates; rows it leaves
        out are certain to miss the floor or the top.

        Parameters
        ----------
        table : {"matchers", "items"}
            The table scanned.
        query : array-like
            The query vector.
        {stores_model}
        floor : float, default=None
            The smallest rounded cosine wanted; none when None.
        top : int, default=None
            How many of the largest rounded cosines are wanted; all when None.

        Returns
        -------
        positions : ndarray of int
            Ascending positions.
        cosines : ndarray of float64
            Their exact cosines.

        See Also
        --------
        cosines_at : Exact cosines at given positions.
        """
        q = np.asarray(query)
        mask, n = self.scan_rows(table, len(q), stores=stores, model=model)
        return self._vector_rows(table).vectors.scan(q, mask, n, floor=floor, top=top)

    def cosines_at(self, table: str, query, positions) -> np.ndarray:
        """Exact float64 cosines between ``query`` and the rows at ``positions``.

        Parameters
        ----------
        table : {"matchers", "items"}
            The table.
        query : array-like
            The query vector.
        positions : array-like of int
            Row positions.

        Returns
        -------
        ndarray of float64
            One cosine per position.
        """
        return self._vector_rows(table).vectors.exact(query, positions)

    def edges_from(self, matcher_positions) -> tuple:
        """The edges of each matcher in turn (insertion order) into items that exist.

        Parameters
        ----------
        matcher_positions : iterable of int
            Matcher positions.

        Returns
        -------
        tuple of list
            Four lists: ``which`` (the index into ``matcher_positions`` of
            each edge's matcher), the item's position, the edge weight and the
            item's stored confidence (floats).
        """
        ids, edge_item, edge_weight = self._matchers["id"], self._edges["item_id"], self._edges["weight"]
        position, confidence, by_matcher = self._items.position, self._items["confidence"], self._edges_by_matcher
        which, item, weight = [], [], []
        for j, m in enumerate(matcher_positions):
            for e in by_matcher.get(ids[m], ()):
                i = position.get(edge_item[e])
                if i is not None:  # an edge loaded without its item leads nowhere
                    which.append(j)
                    item.append(i)
                    weight.append(float(edge_weight[e]))
        return which, item, weight, [float(confidence[i]) for i in item]

    def _cache(self, key, value):
        if len(self._scan_cache) >= 256:  # many store sets (fleets): start again
            self._scan_cache.clear()
        self._scan_cache[key] = value

    # ------------------------------------------------------------- DataFrames
    @property
    def tables(self) -> dict:
        """The state as DataFrames with production columns: ``stores``,
        ``matchers``, ``items``, ``edges``, ``provenance`` (rows in insertion
        order; ``embedding`` cells are float32 arrays or None)."""
        fk = self.names["item_fk"]
        stores = pd.DataFrame({"name": pd.Series(self._stores, dtype=object)})
        matchers = table_frame(self._matchers, ["id", "store", "description", "embedding", "model", "created_at",
                                           "updated_at"])
        items = table_frame(self._items, ["id", "store", "statement", "rationale", "embedding", "model", "confidence",
                                     "confirm_count", "disconfirm_count", "created_at", "updated_at"])
        edges = table_frame(self._edges, ["matcher_id", "item_id", "weight", "created_at"], {"item_id": fk})
        provenance = table_frame(self._provenance, ["id", "item_id", "signal", "detail", "created_at"], {"item_id": fk})
        return {"stores": stores, "matchers": matchers, "items": items, "edges": edges,
                "provenance": provenance}

    @classmethod
    def from_tables(cls, tables: dict, names: Mapping[str, str]) -> EngineState:
        """A state holding DataFrames shaped like :attr:`tables` (copied, not modified).

        Loading works on whole columns: each column is read once as a list,
        array cells of the embedding column are taken as they are (only other
        cells are converted one by one), each dimension's vectors are
        normalised into their matrix in large chunks, codes and the edge set
        come from whole columns, and the per-text id counters, which only
        writes read, are filled on the first write. A 100,000-matcher store
        loads in well under a second. The state equals one built row by row
        through the write path (stores and model codes in order of first
        appearance, a repeated (matcher, item) edge kept once, ids counted
        per text).

        Parameters
        ----------
        tables : dict of DataFrame
            ``stores``, ``matchers``, ``items``, ``edges`` and ``provenance``.
        names : mapping
            The table names and item foreign key (see the class).

        Returns
        -------
        EngineState
            The state.
        """
        enabled = gc.isenabled()
        gc.disable()      # hundreds of thousands of new objects, no cycles: skip the collector's passes
        try:
            return cls._from_tables(tables, names)
        finally:
            if enabled:
                gc.enable()

    @classmethod
    def _from_tables(cls, tables: dict, names: Mapping[str, str]) -> EngineState:
        state = cls(names)
        fk = state.names["item_fk"]
        m, it = tables["matchers"], tables["items"]
        m_store, i_store = column_values(m, "store"), column_values(it, "store")
        for name in dict.fromkeys(column_values(tables["stores"], "name") + m_store + i_store):
            state.ensure_store(name)
        m_model, i_model = nullable_values(m, "model"), nullable_values(it, "model")
        for model in dict.fromkeys(m_model + i_model):
            state._model_code(model)
        m_desc = column_values(m, "description")
        state._matchers.add_many(
            vector_cells(m), codes_of(m_store, state._store_codes), model_codes_of(m_model, state._model_codes),
            id=column_values(m, "id"), store=m_store, description=m_desc, model=m_model,
            created_at=column_values(m, "created_at"), updated_at=column_values(m, "updated_at"))
        i_stmt = column_values(it, "statement")
        state._items.add_many(
            vector_cells(it), codes_of(i_store, state._store_codes), model_codes_of(i_model, state._model_codes),
            id=column_values(it, "id"), store=i_store, statement=i_stmt, rationale=nullable_values(it, "rationale"),
            model=i_model, confidence=float_values(it, "confidence"), confirm_count=float_values(it, "confirm_count"),
            disconfirm_count=float_values(it, "disconfirm_count"), created_at=column_values(it, "created_at"),
            updated_at=column_values(it, "updated_at"))
        # edges: a repeated (matcher, item) pair is kept once, at its first row
        e = tables["edges"]
        e_m, e_i, e_w, e_t = column_values(e, "matcher_id"), column_values(e, fk), float_values(e, "weight"), column_values(e, "created_at")
        keys = set(zip(e_m, e_i))
        if len(keys) < len(e_m):
            first, seen = [], set()
            for j, key in enumerate(zip(e_m, e_i)):
                if key not in seen:
                    seen.add(key)
                    first.append(j)
            e_m, e_i, e_w, e_t = ([col[j] for j in first] for col in (e_m, e_i, e_w, e_t))
        state._edge_keys = keys
        state._edges.extend(matcher_id=e_m, item_id=e_i, weight=e_w, created_at=e_t)
        state._edges_by_matcher.add_many(e_m, 0)
        state._edges_by_item.add_many(e_i, 0)
        pr = tables["provenance"]
        p_item, p_sig, p_detail = column_values(pr, fk), column_values(pr, "signal"), nullable_values(pr, "detail")
        state._provenance.extend(id=column_values(pr, "id"), item_id=p_item, signal=p_sig, detail=p_detail,
                                 created_at=column_values(pr, "created_at"))
        state._provenance_by_item.add_many(p_item, 0)
        # id counters are only read by writes: their keys are counted on the first one
        state._pending_ids = [(state.names["matchers"], m_store, m_desc), (state.names["items"], i_store, i_stmt),
                              (state.names["provenance"], p_item, p_sig, p_detail)]
        return state

    def __repr__(self):
        return (f"EngineState(stores={len(self._stores)}, matchers={self.n_matchers}, items={self.n_items}, "
                f"edges={self.n_edges}, provenance={self.n_provenance})")

    # ------------------------------------------------------------------ helpers
    def _vector_rows(self, table: str) -> VectorTableRows:
        if table == "matchers":
            return self._matchers
        if table == "items":
            return self._items
        raise ValueError(f"table: expected 'matchers' or 'items', got {table!r}")

    def _model_code(self, model) -> int:
        if model is None:
            return NO_MODEL
        return self._model_codes.setdefault(model, len(self._model_codes))

    # ------------------------------------------------------------------ writes
    # One step each of the engine's transactions, applied as given: no input checks,
    # no dedup, no confidence rule (those are the engine's). Call the engine's tools.
    def ensure_store(self, name: str):
        """Add the store ``name`` after the others unless it is already present.

        Parameters
        ----------
        name : str
            The store.
        """
        if name not in self._store_codes:
            self._store_codes[name] = len(self._stores)
            self._stores.append(name)

    def next_id(self, table_key: str, store: str, text: str) -> str:
        """The next deterministic id of ``text`` in ``store`` (:func:`deterministic_id`),
        counting it.

        Parameters
        ----------
        table_key : str
            ``"matchers"``, ``"items"`` or ``"provenance"`` (mapped to the
            production table name of :attr:`names`).
        store : str
            The row's store (a provenance row's is its item's).
        text : str
            The description, statement or :func:`prov_text` of the row.

        Returns
        -------
        str
            The id.
        """
        self._count_loaded_ids()
        table = self.names[table_key]
        key = (table, store, text)
        n = self._id_counts[key]
        self._id_counts[key] = n + 1
        return deterministic_id(table, store, text, n)

    def add_matcher(self, mid, store, description, vector, model, created_at, updated_at) -> int:
        """Append one matcher (``store`` must exist: :meth:`ensure_store`); returns its position.

        Parameters
        ----------
        mid : str
            The matcher's id.
        store : str
            Its store.
        description : str
            Its text.
        vector : array-like or None
            Its passage vector.
        model : str or None
            Its model tag.
        created_at, updated_at : str
            Its times (ISO text).

        Returns
        -------
        int
            Its position.
        """
        self._scan_cache.clear()
        return self._matchers.add(vector, self._store_codes[store], self._model_code(model), id=mid, store=store,
                                  description=description, model=model, created_at=created_at,
                                  updated_at=updated_at)

    def add_item(self, iid, store, statement, rationale, vector, model, confidence, c, d, created_at,
                 updated_at) -> int:
        """Append one item with confidence and confirm / disconfirm counts ``c``, ``d``
        (``store`` must exist); returns its position.

        Parameters
        ----------
        iid : str
            The item's id.
        store : str
            Its store.
        statement : str
            Its text.
        rationale : str or None
            Its rationale.
        vector : array-like or None
            Its passage vector.
        model : str or None
            Its model tag.
        confidence : float
            Its stored confidence.
        c, d : float
            Its confirm and disconfirm counts.
        created_at, updated_at : str
            Its times (ISO text).

        Returns
        -------
        int
            Its position.
        """
        self._count_loaded_ids()    # provenance keys read the item positions a new row may change
        self._scan_cache.clear()
        return self._items.add(vector, self._store_codes[store], self._model_code(model), id=iid, store=store,
                               statement=statement, rationale=rationale, model=model, confidence=confidence,
                               confirm_count=c, disconfirm_count=d, created_at=created_at,
                               updated_at=updated_at)

    def add_edge(self, matcher_id, item_id, weight, created_at) -> bool:
        """Add an edge unless (matcher, item) is already linked; True when added.

        Parameters
        ----------
        matcher_id : str
            The matcher's id.
        item_id : str
            The item's id.
        weight : float
            The edge's weight.
        created_at : str
            Its time (ISO text).

        Returns
        -------
        bool
            Whether it was added.
        """
        key = (matcher_id, item_id)
        if key in self._edge_keys:
            return False
        self._edges.append(matcher_id=matcher_id, item_id=item_id, weight=weight, created_at=created_at)
        self._edge_keys.add(key)
        serial = self._edges.next_serial - 1
        self._edges_by_matcher.add_many([matcher_id], serial)
        self._edges_by_item.add_many([item_id], serial)
        return True

    def add_provenance(self, pid, item_id, signal, detail, created_at):
        """Append one provenance row of the item ``item_id``.

        Parameters
        ----------
        pid : str
            The row's id.
        item_id : str
            The item's id.
        signal : str
            The signal recorded.
        detail : str or None
            The rationale or context.
        created_at : str
            Its time (ISO text, seconds).
        """
        self._provenance.append(id=pid, item_id=item_id, signal=signal, detail=detail,
                                created_at=created_at)
        self._provenance_by_item.add_many([item_id], self._provenance.next_serial - 1)

    def set_counts(self, pos: int, c: float, d: float, confidence: float, updated_at: str):
        """Set the confirm / disconfirm counts, confidence and ``updated_at`` of the item at ``pos``.

        Parameters
        ----------
        pos : int
            The item's position.
        c, d : float
            The confirm and disconfirm counts.
        confidence : float
            The stored confidence.
        updated_at : str
            The time (ISO text).
        """
        items = self._items
        items["confirm_count"][pos] = c
        items["disconfirm_count"][pos] = d
        items["confidence"][pos] = confidence
        items["updated_at"][pos] = updated_at

    def _count_loaded_ids(self):
        """Count the (table, store, text) keys of the rows a load brought in.

        Only writes read the counts, so a load leaves them pending and the first
        write (or delete, which moves the item positions provenance keys look up)
        counts them all in one pass. A provenance row's store is its item's, or
        ``""`` when the item is absent.
        """
        if not self._pending_ids:
            return
        (m_table, m_store, m_text), (i_table, i_store, i_text), (p_table, p_item, p_sig, p_det) = \
            self._pending_ids
        self._pending_ids = []
        counts = self._id_counts
        counts.update(zip([m_table] * len(m_text), m_store, m_text))
        counts.update(zip([i_table] * len(i_text), i_store, i_text))
        if p_item:
            position, item_store = self._items.position, self._items["store"]
            counts.update((p_table, item_store[position[iid]] if iid in position else "", prov_text(iid, sig, det))
                          for iid, sig, det in zip(p_item, p_sig, p_det))

    def delete_item(self, pos: int):
        """Remove the item at ``pos``; its edges and provenance cascade, matchers stay.

        Only the deleted rows are touched: the item's edges and provenance
        are found through the indexes (which hold serials, so other rows'
        entries stay valid while positions shift), removed from the column
        lists in place, and the matchers' edge lists lose just those edges.

        Parameters
        ----------
        pos : int
            The item's position.
        """
        self._count_loaded_ids()
        self._scan_cache.clear()
        iid = self._items["id"][pos]
        self._items.delete(pos)
        edge_pos = self._edges_by_item.get(iid, [])
        edge_serials = self._edges_by_item.pop(iid)
        matcher_ids = [self._edges["matcher_id"][j] for j in edge_pos]
        for mid, serial in zip(matcher_ids, edge_serials):
            self._edges_by_matcher.remove(mid, serial)
            self._edge_keys.discard((mid, iid))
        self._edges.drop(edge_pos)
        self._provenance.drop(self._provenance_by_item.get(iid, []))
        self._provenance_by_item.pop(iid)
