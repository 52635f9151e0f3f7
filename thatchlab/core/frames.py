"""Frames at the boundary: what a public entry point does first with a frame it is handed.

Two Arrow column types have no place in the rest of the package, so they are
turned into their plain equivalents once, here:

* a column in which no cell holds a value reaches pandas in Arrow's ``null`` type
  (``null[pyarrow]``) when it was read by ``read_parquet(dtype_backend="pyarrow")``,
  by polars (``pl.Null``) or by DuckDB from Arrow; it becomes what pandas' NumPy
  reader makes of the same file, an ``object`` column of ``None``;
* text in Arrow's ``string_view`` layout (polars' own, and what Arrow tables built
  with views hold), alone or as a dictionary's values, becomes ``large_string``,
  the layout Arrow's ``take``, ``filter`` and set-lookup kernels read (they have no
  view kernels).

Such a frame then gives exactly what its object form gives.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.core.errors import InputError

__all__ = ["is_arrow_null", "plain_columns", "need_columns"]


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


def plain_columns(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with each column of Arrow's ``null`` type as an ``object`` column of ``None`` and each
    ``string_view`` text column (or dictionary of it) as ``large_string``.

    The input is not modified: a shallow copy (index, names and ``attrs`` kept)
    is returned when some column changes, else ``df`` itself.

    Parameters
    ----------
    df : pandas.DataFrame
        A frame as handed over.

    Returns
    -------
    pandas.DataFrame
        The frame with no ``null[pyarrow]`` or view-text column.

    Examples
    --------
    >>> import pyarrow as pa
    >>> df = pd.DataFrame({"a": pd.array([None, None], dtype=pd.ArrowDtype(pa.null())),
    ...                    "b": pd.array(["x", None], dtype=pd.ArrowDtype(pa.string_view()))})
    >>> out = plain_columns(df)
    >>> str(out["a"].dtype), out["a"].tolist(), str(out["b"].dtype), str(df["b"].dtype)
    ('object', [None, None], 'large_string[pyarrow]', 'string_view[pyarrow]')
    """
    changed = {}
    for i, dtype in enumerate(df.dtypes):
        if is_arrow_null(dtype):
            changed[i] = pd.Series(np.full(len(df), None, dtype=object), index=df.index)
        else:
            plain = _plain_text_type(dtype)
            if plain is not None:
                data = df.iloc[:, i].array.__arrow_array__()
                changed[i] = pd.Series(pd.arrays.ArrowExtensionArray(data.cast(plain)), index=df.index)
    if not changed:
        return df
    out = df.copy(deep=False)
    for i, col in changed.items():
        out.isetitem(i, col)
    return out


def _plain_text_type(dtype):
    """The Arrow type to read a ``string_view`` column (or a dictionary of one) as; None for any other."""
    if not isinstance(dtype, pd.ArrowDtype):
        return None
    import pyarrow as pa  # heavy: Arrow only for Arrow-backed columns

    if not hasattr(pa.types, "is_string_view"):
        return None
    t = dtype.pyarrow_dtype
    if pa.types.is_string_view(t):
        return pa.large_string()
    if pa.types.is_dictionary(t) and pa.types.is_string_view(t.value_type):
        return pa.dictionary(t.index_type, pa.large_string(), t.ordered)
    return None


def need_columns(df, what: str, columns) -> pd.DataFrame:
    """Check that ``df`` is a frame holding ``columns``; return it as :func:`plain_columns` does.

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
        ``df``, its ``null[pyarrow]`` and view-text columns made plain (:func:`plain_columns`).

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
    return plain_columns(df)
