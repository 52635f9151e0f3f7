"""Frames at the boundary: what a public entry point does first with a frame it is handed.

A column in which no cell holds a value reaches pandas in Arrow's ``null`` type
(``null[pyarrow]``) when it was read by ``read_parquet(dtype_backend="pyarrow")``,
by polars (``pl.Null``) or by DuckDB from Arrow. Nothing downstream should have
to know that type: it is turned into what pandas' NumPy reader makes of the same
file, an ``object`` column of ``None``, so such a frame gives exactly what its
object form gives.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.core.errors import InputError

__all__ = ["is_arrow_null", "null_columns_as_none", "need_columns"]


def is_arrow_null(dtype) -> bool:
    """Whether ``dtype`` is Arrow's ``null`` type (a column that can hold no value).

    Parameters
    ----------
    dtype : dtype-like
        A column's dtype.

    Returns
    -------
    bool
        True for ``pd.ArrowDtype(pa.null())``.

    Examples
    --------
    >>> import pyarrow as pa
    >>> is_arrow_null(pd.ArrowDtype(pa.null())), is_arrow_null(np.dtype(object))
    (True, False)
    """
    if not isinstance(dtype, pd.ArrowDtype):
        return False
    import pyarrow as pa  # heavy: Arrow only for Arrow-backed columns

    return pa.types.is_null(dtype.pyarrow_dtype)


def null_columns_as_none(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with each column of Arrow's ``null`` type as an ``object`` column of ``None``.

    The input is not modified: a shallow copy (index, names and ``attrs`` kept)
    is returned when some column changes, else ``df`` itself.

    Parameters
    ----------
    df : pandas.DataFrame
        A frame as handed over.

    Returns
    -------
    pandas.DataFrame
        The frame with no ``null[pyarrow]`` column.

    Examples
    --------
    >>> import pyarrow as pa
    >>> df = pd.DataFrame({"a": [1, 2], "b": pd.array([None, None], dtype=pd.ArrowDtype(pa.null()))})
    >>> out = null_columns_as_none(df)
    >>> str(out["b"].dtype), out["b"].tolist(), str(df["b"].dtype)
    ('object', [None, None], 'null[pyarrow]')
    """
    where = [i for i, dtype in enumerate(df.dtypes) if is_arrow_null(dtype)]
    if not where:
        return df
    out = df.copy(deep=False)
    for i in where:
        out.isetitem(i, pd.Series(np.full(len(df), None, dtype=object), index=df.index))
    return out


def need_columns(df, what: str, columns) -> pd.DataFrame:
    """Check that ``df`` is a frame holding ``columns``; return it as :func:`null_columns_as_none` does.

    Parameters
    ----------
    df : object
        What the caller handed over.
    what : str
        How the messages name it.
    columns : sequence of str
        The columns it must have.

    Returns
    -------
    pandas.DataFrame
        ``df``, its ``null[pyarrow]`` columns as ``object`` columns of ``None``.

    Raises
    ------
    InputError
        ``df`` is not a DataFrame, or lacks a column (all missing ones named).

    Examples
    --------
    >>> need_columns(pd.DataFrame({"ts": []}), "events", ["ts"]).columns.tolist()
    ['ts']
    """
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"{what}: expected a pandas DataFrame, got {type(df).__name__}")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InputError(f"{what}: missing column(s) {missing}; expected columns {list(columns)}")
    return null_columns_as_none(df)
