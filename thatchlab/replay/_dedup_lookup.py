"""Dedup cosines looked up, not scanned, for the vectorised replay's write pass.

Every write searches the nearest matcher and item by raw cosine. Before the
pass, one float32 matrix per table (matchers, items) holds the cosines
between each write text of the log and every vector a row of that table can
carry during the pass: the vectors of the rows present at the start, then
the passage vector of each write text (a row the pass adds carries its
text's vector). :class:`PrecomputedDedup` is the engine's
:class:`~thatchlab.scoring.DedupLookup`: it answers a search by reading the
row of the searched text at the columns of the usable rows. The engine keeps
the rows within ``MARGIN`` of the best and recomputes them in float64, so
each decision is still the engine's own.
"""

from __future__ import annotations

import numpy as np

__all__ = ["PrecomputedDedup", "MAX_LOOKUP", "unit_rows"]

#: Largest cosine matrix (float32 cells) built per table; beyond it the engine scans as usual.
MAX_LOOKUP = 60_000_000
_TEXT_COLUMN = {"matchers": "description", "items": "statement"}


def unit_rows(mat64: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), as float32."""
    norms = np.sqrt(np.einsum("ij,ij->i", mat64, mat64)) if len(mat64) else np.zeros(0)
    out = np.divide(mat64, norms[:, None], out=np.zeros_like(mat64), where=norms[:, None] > 0)
    return out.astype(np.float32)


class _TableCosines:
    """The cosine matrix of one table and the map from its rows to the matrix's columns.

    Columns ``0..n0-1`` are the rows present at the start, column ``n0 + j``
    the vector of write text ``j``. Rows are named by their serial (stable
    across deletes); a row added later is mapped, when first seen, to the
    column of its text.
    """

    def __init__(self, state, table: str, texts: list, vectors: dict):
        view = getattr(state, table)
        self._view, self._text_column = view, _TEXT_COLUMN[table]
        n0 = len(view)
        dim = len(vectors[texts[0]])
        start = [state.vector(table, j) for j in range(n0)]
        columns = [v if v is not None and len(v) == dim else np.zeros(dim, dtype=np.float32)
                   for v in start + [vectors[t] for t in texts]]
        unit = unit_rows(np.vstack(columns).astype(np.float64))
        self.cosines = unit[n0:] @ unit.T  # write text × column
        self.query_row = {t: j for j, t in enumerate(texts)}
        self.column_of_text = {t: n0 + j for j, t in enumerate(texts)}
        serials = view.serials
        self._last_seen = int(serials.max()) if n0 else -1
        self._column_of_serial = np.full(self._last_seen + len(texts) + 2, -1, dtype=np.int64)
        self._column_of_serial[serials] = np.arange(n0)
        self._key = None                   # (rows, rows ever added) when the map below was made
        self._column_of_position = np.zeros(0, dtype=np.int64)
        self._missing = False              # whether some row of the map has no column

    def approx(self, text: str, positions: np.ndarray) -> np.ndarray | None:
        columns = self._columns()[positions]
        if self._missing and columns.size and columns.min() < 0:
            return None  # a row whose vector the matrix lacks: let the engine scan
        return self.cosines[self.query_row[text], columns]

    def _columns(self) -> np.ndarray:
        """Each current row's column, rebuilt only when the table changed since the last
        search (rows added or deleted: its length or its count of rows ever added moved)."""
        key = (len(self._view), self._view.n_added)
        if key != self._key:
            serials = self._view.serials
            self._map_new_rows(serials)
            self._column_of_position = self._column_of_serial[serials]
            self._missing = bool((self._column_of_position < 0).any())
            self._key = key
        return self._column_of_position

    def _map_new_rows(self, serials: np.ndarray):
        """Give the rows added since the last search the column of their text."""
        fresh = np.flatnonzero(serials > self._last_seen)
        if not fresh.size:
            return
        new_serials = serials[fresh]
        top = int(new_serials.max())
        if top >= len(self._column_of_serial):
            grown = np.full(max(2 * len(self._column_of_serial), top + 1), -1, dtype=np.int64)
            grown[: len(self._column_of_serial)] = self._column_of_serial
            self._column_of_serial = grown
        texts = self._view.take(self._text_column, fresh)
        self._column_of_serial[new_serials] = [self.column_of_text.get(t, -1) for t in texts]
        self._last_seen = top


class PrecomputedDedup:
    """A :class:`~thatchlab.scoring.DedupLookup` over cosines computed once.

    Parameters
    ----------
    state : the engine's :class:`~thatchlab.scoring.EngineState` (read, never changed).
    texts : mapping ``"matchers"`` / ``"items"`` → the write texts searched in that table.
    vectors : mapping text → its passage vector (the vectors the writes pass in).
    max_entries : a table whose matrix would exceed this many cells gets no
        lookup (the engine scans it), so memory stays bounded.
    """

    def __init__(self, state, texts: dict, vectors: dict, max_entries: int | None = None):
        limit = MAX_LOOKUP if max_entries is None else max_entries
        self._tables = {}
        for table, table_texts in texts.items():
            n_columns = len(getattr(state, table)) + len(table_texts)
            if table_texts and len(table_texts) * n_columns <= limit:
                self._tables[table] = _TableCosines(state, table, list(table_texts), vectors)

    def approx_cosines(self, table: str, text: str, vector: np.ndarray,
                       positions: np.ndarray) -> np.ndarray | None:
        side = self._tables.get(table)
        if side is None or text not in side.query_row:
            return None
        return side.approx(text, positions)
