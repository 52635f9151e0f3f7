"""Row storage behind :class:`~thatchlab.scoring.EngineState` (private to the scoring package).

Each table keeps one Python list per column (O(1) appends, cheap cell
updates) and a serial number per row; matchers and items add their vectors,
an id → position map and store / model codes as int arrays, so the masks of
a cosine scan are vectorised. Whole columns can be appended at once
(``extend``), which is how a state is loaded from tables, and rows can be
removed by position without rebuilding the other rows' columns.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from thatchlab.core.vectors import VectorRows

__all__ = ["IntColumn", "Rows", "VectorTableRows", "SerialIndex", "column_array", "NUMERIC_COLUMNS"]

#: Columns read as float64 (the others as object arrays).
NUMERIC_COLUMNS = frozenset({"confidence", "confirm_count", "disconfirm_count", "weight"})


class IntColumn:
    """A growable int64 array: amortised O(1) appends, vectorised reads."""

    __slots__ = ("_buf", "_n")

    def __init__(self):
        self._buf = np.zeros(16, dtype=np.int64)
        self._n = 0

    def __len__(self):
        return self._n

    def append(self, value: int):
        if self._n == len(self._buf):
            self._buf = np.concatenate([self._buf, np.zeros(len(self._buf), dtype=np.int64)])
        self._buf[self._n] = value
        self._n += 1

    def extend(self, values):
        values = np.asarray(values, dtype=np.int64).reshape(-1)
        need = self._n + values.size
        if need > len(self._buf):
            grown = np.zeros(max(need, 2 * len(self._buf)), dtype=np.int64)
            grown[: self._n] = self._buf[: self._n]
            self._buf = grown
        self._buf[self._n: need] = values
        self._n = need

    @property
    def values(self) -> np.ndarray:
        """The live values (a view: copy before handing it out)."""
        return self._buf[: self._n]

    def keep(self, mask: np.ndarray):
        kept = self.values[mask]
        self._buf = np.concatenate([kept, np.zeros(max(16, len(kept)), dtype=np.int64)])
        self._n = len(kept)


class Rows:
    """One table's rows: a Python list per column and each row's serial number.

    The serial is the row's insertion number in this state (0 for the first
    row ever added, never reused after a delete), so it names a row across
    the position shifts a delete causes.

    Attributes
    ----------
    next_serial : int
        The serial the next added row gets: how many rows were ever added.
    """

    def __init__(self, columns: tuple):
        self.columns = columns
        self.data: dict[str, list] = {c: [] for c in columns}
        self.serial = IntColumn()
        self.next_serial = 0

    def __len__(self):
        return len(self.serial)

    def __getitem__(self, column: str) -> list:
        return self.data[column]

    def append(self, **values) -> int:
        pos = len(self)
        for c in self.columns:
            self.data[c].append(values[c])
        self.serial.append(self.next_serial)
        self.next_serial += 1
        return pos

    def extend(self, **columns) -> int:
        """Append whole columns (equal lengths, every column named); returns the
        position of the first new row."""
        start = len(self)
        n = len(columns[self.columns[0]])
        for c in self.columns:
            values = columns[c]
            if len(values) != n:
                raise ValueError(f"column {c!r}: {len(values)} values, expected {n}")
            self.data[c].extend(values)
        self.serial.extend(np.arange(self.next_serial, self.next_serial + n, dtype=np.int64))
        self.next_serial += n
        return start

    def keep(self, mask: np.ndarray):
        """Drop the rows where ``mask`` is False (order kept)."""
        keep = np.flatnonzero(mask).tolist()
        for c in self.columns:
            col = self.data[c]
            self.data[c] = [col[j] for j in keep]
        self.serial.keep(mask)

    def drop(self, positions):
        """Remove the rows at ``positions`` (order kept). A few rows are deleted from
        each column list in place (a memmove each), many by one rebuild."""
        drop = sorted({int(p) for p in positions})
        if not drop:
            return
        if len(drop) > 16:
            mask = np.ones(len(self), dtype=bool)
            mask[drop] = False
            self.keep(mask)
            return
        for c in self.columns:
            col = self.data[c]
            for j in reversed(drop):
                del col[j]
        mask = np.ones(len(self), dtype=bool)
        mask[drop] = False
        self.serial.keep(mask)

    def positions_of_serials(self, serials) -> np.ndarray:
        """Current positions of rows given by serial (serials increase along the rows)."""
        return np.searchsorted(self.serial.values, np.asarray(serials, dtype=np.int64))


class VectorTableRows(Rows):
    """Rows with a vector each (matchers, items): ids, store and model codes for masks."""

    def __init__(self, columns: tuple):
        super().__init__(columns)
        self.vectors = VectorRows()
        self.position: dict[str, int] = {}
        self.store_code = IntColumn()
        self.model_code = IntColumn()

    def add(self, vector, store_code: int, model_code: int, **values) -> int:
        pos = self.append(**values)
        self.vectors.append(vector, values["model"])
        self.position[values["id"]] = pos
        self.store_code.append(store_code)
        self.model_code.append(model_code)
        return pos

    def add_many(self, vectors, store_codes, model_codes, **columns) -> int:
        """Append whole columns with their vectors and codes (the bulk form of :meth:`add`)."""
        start = self.extend(**columns)
        self.vectors.extend(vectors, columns["model"])
        self.position.update(zip(columns["id"], range(start, start + len(columns["id"]))))
        self.store_code.extend(store_codes)
        self.model_code.extend(model_codes)
        return start

    def delete(self, pos: int):
        mask = np.ones(len(self), dtype=bool)
        mask[pos] = False
        gone = self.data["id"][pos]
        self.drop([pos])
        self.store_code.keep(mask)
        self.model_code.keep(mask)
        self.vectors.delete([pos])
        ids, position = self.data["id"], self.position
        if position.get(gone) == pos:           # the id's last row is gone
            del position[gone]
            try:
                j = ids.index(gone, 0, pos)     # an earlier row with the same id (C speed)
            except ValueError:
                j = None
            if j is not None:
                j = max(k for k in range(j, pos) if ids[k] == gone)
                position[gone] = j
        for j in range(pos, len(ids)):          # later rows shift up by one
            position[ids[j]] = j


class SerialIndex:
    """key → the rows of one table with that key, in insertion order.

    Rows are held by serial (their insertion number, which a delete never
    changes), so removing some rows leaves every other key's entry valid;
    :meth:`get` turns serials into current positions (they are the same
    until the table's first delete).
    """

    __slots__ = ("_rows", "_serials")

    def __init__(self, rows: Rows):
        self._rows = rows
        self._serials: dict = defaultdict(list)

    def add_many(self, keys, first_serial: int):
        """Index rows ``first_serial, first_serial + 1, …`` under ``keys``."""
        serials = self._serials
        for j, key in enumerate(keys, start=first_serial):
            serials[key].append(j)

    def get(self, key, default=()):
        """Current positions of the rows with ``key`` (``default`` when none)."""
        found = self._serials.get(key)
        if not found:
            return default
        rows = self._rows
        if rows.next_serial == len(rows):      # no row was ever removed: serial = position
            return list(found)
        return rows.positions_of_serials(found).tolist()

    def pop(self, key) -> list:
        """Forget ``key``; returns its serials."""
        return self._serials.pop(key, [])

    def remove(self, key, serial: int):
        found = self._serials.get(key)
        if found is not None:
            found.remove(serial)
            if not found:
                del self._serials[key]


def column_array(values, column: str) -> np.ndarray:
    if column in NUMERIC_COLUMNS:
        out = np.asarray(values, dtype=np.float64)
    else:
        out = np.empty(len(values), dtype=object)
        out[:] = values
    return out

