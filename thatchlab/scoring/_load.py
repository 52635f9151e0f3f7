"""Reading tables into an :class:`~thatchlab.scoring.EngineState` and writing them back
(private to the scoring package).

Whole columns are read at once (``tolist``), missing cells become None and
vector cells float32 arrays; :func:`table_frame` turns one table's rows into
a DataFrame with production's columns.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.scoring._rows import Rows, column_array

__all__ = ["column_values", "nullable_values", "float_values", "codes_of", "model_codes_of", "vector_cells",
           "table_frame", "NO_MODEL"]

NO_MODEL = -1  # model code of a row without a model tag


def column_values(df: pd.DataFrame, column: str) -> list:
    """A column as a list of Python values (what ``itertuples`` yields)."""
    return df[column].tolist()


def nullable_values(df: pd.DataFrame, column: str) -> list:
    """:func:`column_values` with missing cells (None, NaN) as None; only the cells pandas
    reports missing are looked at one by one."""
    col = df[column]
    values = col.tolist()
    missing = col.isna().to_numpy()
    if missing.any():
        for j in np.flatnonzero(missing).tolist():
            values[j] = _none(values[j])
    return values


def float_values(df: pd.DataFrame, column: str) -> list:
    """A column as a list of Python floats."""
    col = df[column]
    if col.dtype == np.float64:
        return col.tolist()             # already Python floats
    return [float(v) for v in col.tolist()]


def codes_of(values: list, codes: dict) -> np.ndarray:
    """Each value's code in ``codes`` (every value is a key)."""
    return np.fromiter(map(codes.__getitem__, values), dtype=np.int64, count=len(values))


def model_codes_of(models: list, codes: dict) -> np.ndarray:
    """Each model tag's code, :data:`NO_MODEL` for None."""
    if None not in codes:
        codes = {**codes, None: NO_MODEL}
    return codes_of(models, codes)


def vector_cells(df: pd.DataFrame) -> list:
    """The ``embedding`` column as vectors or None: array cells pass as they are (the
    vector rows convert what is not float32), missing cells become None and bytes are
    read as little-endian float32."""
    values = df["embedding"].tolist()
    nd = np.ndarray
    for j in [j for j, v in enumerate(values) if type(v) is not nd]:
        values[j] = _vec_or_none(values[j])
    return values


def table_frame(rows: Rows, columns: list, rename: dict | None = None) -> pd.DataFrame:
    """One table as a DataFrame: float64 for the numeric columns, object otherwise
    (each column a fresh array, handed to pandas without another copy). An empty
    table's columns are float64 but for ``embedding``, as pandas types an empty list."""
    data = {}
    empty = len(rows) == 0
    for c in columns:
        if c == "embedding":
            values = rows.vectors.cells()
        else:
            values = np.zeros(0, dtype=np.float64) if empty else column_array(rows[c], c)
        data[c if rename is None else rename.get(c, c)] = values
    return pd.DataFrame(data, columns=list(data), copy=False)


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
