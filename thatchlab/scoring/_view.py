"""A read-only view of one table of an :class:`~thatchlab.scoring.EngineState`.

:class:`TableView` reads whole columns, single cells, rows and positions out of
the state's row storage, always as fresh values, so callers can look at the
tables without being able to change them.
"""

from __future__ import annotations

import numpy as np

from thatchlab.core.docstrings import fill_doc
from thatchlab.scoring._rows import Rows, column_array

__all__ = ["TableView"]

# the Parameters section of take and cells, written once (filled in by fill_doc)
_COLUMN_POSITIONS = """
Parameters
----------
column : str
    The column.
positions : iterable of int
    Row positions.
"""


class TableView:
    """Read-only access to one table of an :class:`EngineState`, in insertion order.

    Columns are those of :data:`TABLE_COLUMNS` (vectors are read with
    :meth:`EngineState.vector`). Reads return fresh numpy arrays (``float64``
    for counts, confidences and weights, ``object`` otherwise); changing
    them never changes the state.

    Parameters
    ----------
    rows : Rows
        The table's rows (internal).
    name : str
        The production table name.

    Attributes
    ----------
    name : str
        The production table name.
    columns : tuple of str
        The column names.
    n_added : int
        How many rows were ever added.
    serials : ndarray
        Each row's serial.

    Examples
    --------
    >>> from thatchlab.embed import LookupEmbedder
    >>> from thatchlab.scoring import PredictionEngine
    >>> eng = PredictionEngine(LookupEmbedder({"writing tests": [1, 0], "use pytest": [0, 1]}))
    >>> _ = eng.update("writing tests", "use pytest", "confirm", now="2026-01-01T00:00:00Z")
    >>> items = eng.state.items
    >>> len(items), items["statement"].tolist(), items["confirm_count"].tolist()
    (1, ['use pytest'], [1.0])
    >>> items.row(0)["confidence"], items.take("id", [0]).tolist() == [items.row(0)["id"]]
    (0.5833333333333334, True)
    >>> items.cell("statement", 0), items.cell("confirm_count", 0)
    ('use pytest', 1.0)
    """

    def __init__(self, rows: Rows, name: str):
        self._rows = rows
        self.name = name

    @property
    def columns(self) -> tuple:
        """The column names."""
        return self._rows.columns

    def __len__(self):
        return len(self._rows)

    def __contains__(self, column):
        return column in self._rows.data

    def __getitem__(self, column: str) -> np.ndarray:
        """One whole column."""
        return column_array(self._rows[column], column)

    @fill_doc(column_positions=_COLUMN_POSITIONS)
    def take(self, column: str, positions) -> np.ndarray:
        """The values of ``column`` at ``positions`` (in that order).

        {column_positions}

        Returns
        -------
        ndarray
            A fresh array (float64 for numbers, object otherwise).

        See Also
        --------
        cells : The same as a list of the stored values.
        """
        col = self._rows[column]
        idx = positions.tolist() if isinstance(positions, np.ndarray) else [int(p) for p in positions]
        return column_array([col[p] for p in idx], column)

    def cell(self, column: str, position: int):
        """The stored Python value of ``column`` at one ``position`` (no copy of the column).

        Parameters
        ----------
        column : str
            The column.
        position : int
            The row's position.

        Returns
        -------
        object
            The value.
        """
        return self._rows.data[column][position]

    @fill_doc(column_positions=_COLUMN_POSITIONS)
    def cells(self, column: str, positions) -> list:
        """The values of ``column`` at ``positions`` as a list of the stored Python values.

        {column_positions}

        Returns
        -------
        list
            The values, in the order of ``positions``.

        See Also
        --------
        take : The same as a typed array.
        """
        col = self._rows[column]
        return [col[p] for p in positions]

    def row(self, position: int) -> dict:
        """One row as a dict of column → value.

        Parameters
        ----------
        position : int
            The row's position.

        Returns
        -------
        dict
            The row.
        """
        return {c: self._rows.data[c][position] for c in self._rows.columns}

    @property
    def n_added(self) -> int:
        """How many rows were ever added (the next row's serial): with ``len``, it tells
        whether the table changed since it was last looked at."""
        return self._rows.next_serial

    @property
    def serials(self) -> np.ndarray:
        """Each row's serial: its insertion number in this state (0 first), increasing
        along the rows and never reused after a delete — a stable name for a row
        while positions shift."""
        return self._rows.serial.values.copy()

    def __repr__(self):
        return f"TableView({self.name!r}, rows={len(self)}, columns={list(self.columns)})"
