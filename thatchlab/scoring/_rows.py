"""Row storage behind :class:`~thatchlab.scoring.EngineState` (private to the scoring package).

Each table keeps one Python list per column (O(1) appends, cheap cell
updates) and a serial number per row; matchers and items add their vectors,
an id → position map and store / model codes as int arrays, so the masks of
a cosine scan are vectorised.
"""

from __future__ import annotations

import numpy as np

from thatchlab.core.vectors import VectorRows

__all__ = ["IntColumn", "Rows", "VectorTableRows", "column_array", "NUMERIC_COLUMNS"]

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
    """

    def __init__(self, columns: tuple):
        self.columns = columns
        self.data: dict[str, list] = {c: [] for c in columns}
        self.serial = IntColumn()
        self._next_serial = 0

    def __len__(self):
        return len(self.serial)

    def __getitem__(self, column: str) -> list:
        return self.data[column]

    def append(self, **values) -> int:
        pos = len(self)
        for c in self.columns:
            self.data[c].append(values[c])
        self.serial.append(self._next_serial)
        self._next_serial += 1
        return pos

    def keep(self, mask: np.ndarray):
        """Drop the rows where ``mask`` is False (order kept)."""
        keep = np.flatnonzero(mask).tolist()
        for c in self.columns:
            col = self.data[c]
            self.data[c] = [col[j] for j in keep]
        self.serial.keep(mask)


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

    def delete(self, pos: int):
        mask = np.ones(len(self), dtype=bool)
        mask[pos] = False
        self.keep(mask)
        self.store_code.keep(mask)
        self.model_code.keep(mask)
        self.vectors.delete([pos])
        self.position = {x: j for j, x in enumerate(self.data["id"])}


def column_array(values, column: str) -> np.ndarray:
    if column in NUMERIC_COLUMNS:
        out = np.asarray(values, dtype=np.float64)
    else:
        out = np.empty(len(values), dtype=object)
        out[:] = values
    return out

