"""Frames at the boundary: what a public entry point does first with a frame it is handed.

Some Arrow column types have no place in the rest of the package, so they are
turned into their plain equivalents once, here (:func:`plain_columns`):

* a column in which no cell holds a value reaches pandas in Arrow's ``null`` type
  (``null[pyarrow]``) when it was read by ``read_parquet(dtype_backend="pyarrow")``,
  by polars (``pl.Null``) or by DuckDB from Arrow; it becomes what pandas' NumPy
  reader makes of the same file, an ``object`` column of ``None``;
* text in Arrow's ``string_view`` layout (polars' own, and what Arrow tables built
  with views hold), alone or inside a dictionary or a list, becomes ``large_string``,
  the layout Arrow's ``take``, ``filter`` and set-lookup kernels read (they have no
  view kernels); a list view (Arrow's other list layout) becomes a list.

Such a frame then gives exactly what its object form gives. The cells of frames
nobody validated are read as numbers by :func:`float_column` (a column) and
:func:`number_cell` (one cell), and as group keys by :func:`key_column`, which
name what they cannot read.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.core.errors import InputError

__all__ = ["is_arrow_null", "plain_columns", "need_columns", "float_column", "number_cell", "key_column", "cell_repr"]


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
                changed[i] = _cast(df.iloc[:, i], plain)
    if not changed:
        return df
    out = df.copy(deep=False)
    for i, col in changed.items():
        out.isetitem(i, col)
    return out


def _cast(col: pd.Series, arrow_type) -> pd.Series:
    """``col`` cast to ``arrow_type``; as objects (lists of ``str``, None) where Arrow has no such cast
    or its cast is not a valid array."""
    import pyarrow as pa  # heavy: Arrow only for Arrow-backed columns

    data = col.array.__arrow_array__()
    try:
        cast = data.cast(arrow_type)
        cast.validate(full=True)          # pyarrow 26 casts a list view holding a null to an invalid list
        return pd.Series(pd.arrays.ArrowExtensionArray(cast), index=col.index)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
        cells = np.empty(len(col), dtype=object)
        cells[:] = data.to_pylist()
        return pd.Series(cells, index=col.index)


def _plain_text_type(dtype):
    """The Arrow type to read a column holding ``string_view`` text or a list view as (the text as
    ``large_string`` in the same dictionary or list around it; a list view as a list); None for any
    other column."""
    if not isinstance(dtype, pd.ArrowDtype):
        return None
    import pyarrow as pa  # heavy: Arrow only for Arrow-backed columns

    if not hasattr(pa.types, "is_string_view"):
        return None
    return _without_views(dtype.pyarrow_dtype, pa)


def _without_views(t, pa):
    """``t`` with ``string_view`` replaced by ``large_string`` and list views by lists (recursively; pandas 2
    reads no list view's cells as lists), or None when ``t`` holds neither."""
    if pa.types.is_string_view(t):
        return pa.large_string()
    if pa.types.is_dictionary(t):
        inner = _without_views(t.value_type, pa)
        return None if inner is None else pa.dictionary(t.index_type, inner, t.ordered)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or _is_list_view(t, pa):
        inner = _without_views(t.value_type, pa)
        if inner is None and not _is_list_view(t, pa):
            return None
        inner = t.value_type if inner is None else inner
        if pa.types.is_list(t):
            return pa.list_(inner)
        if pa.types.is_fixed_size_list(t):
            return pa.list_(inner, t.list_size)
        return pa.large_list(inner)                 # a large list, or a list view read as a list
    return None


def _is_list_view(t, pa) -> bool:
    return any(getattr(pa.types, name, lambda _: False)(t) for name in ("is_list_view", "is_large_list_view"))


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


def float_column(s: pd.Series, what: str, column: str) -> np.ndarray:
    """A column of numbers as float64 (NaN where missing); :class:`InputError` names the first cell
    that is neither missing nor a number (text that spells a number counts as one; a boolean does not).

    Parameters
    ----------
    s : pandas.Series
        The column.
    what : str
        How the message names the frame (``"{what} row i, column c"``; rows by position).
    column : str
        How the message names the column.

    Returns
    -------
    numpy.ndarray
        One float64 per cell.

    Raises
    ------
    InputError
        A cell that is not a number.

    Examples
    --------
    >>> float_column(pd.Series([0.5, None, "0.25"], dtype=object), "obs", "c").tolist()
    [0.5, nan, 0.25]
    """
    if pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype):
        return s.to_numpy(np.float64, na_value=np.nan)
    cells = s.to_numpy(object)
    present = ~pd.isna(cells)
    numbers = np.full(len(cells), np.nan)
    flags = np.fromiter((isinstance(v, (bool, np.bool_)) for v in cells), dtype=bool, count=len(cells))
    try:        # float() of each cell, in C: exact for text (pandas' own text parser is not, on pandas 2)
        numbers[present] = cells[present].astype(np.float64)
    except (TypeError, ValueError):
        flags |= present & ~np.fromiter((_spells_number(v) for v in cells), dtype=bool, count=len(cells))
    if flags.any():
        i = int(np.flatnonzero(flags)[0])
        raise InputError(f"{what} row {i}, column {column!r}: expected a number, got {cells[i]!r}")
    return numbers


#: What :func:`pandas.api.types.infer_dtype` calls a column whose cells can all be hashed.
_HASHABLE_KINDS = frozenset({"empty", "string", "bytes", "integer", "floating", "mixed-integer-float", "decimal",
                             "boolean", "datetime", "datetime64", "date", "timedelta", "timedelta64", "time",
                             "period", "categorical"})


def key_column(s: pd.Series, what: str, column: str) -> pd.Series:
    """Check that every cell of ``s`` can key a group (a value that hashes, not a list or a dict);
    return ``s``.

    Only an ``object`` column can hold such cells; its cells are looked at one by one
    only when pandas cannot tell its kind in one pass (text, numbers, times, none at all).

    Parameters
    ----------
    s : pandas.Series
        The key column.
    what : str
        How the message names the frame (``"{what}: row i, column c"``; rows by position).
    column : str
        How the message names the column.

    Returns
    -------
    pandas.Series
        ``s`` itself.

    Raises
    ------
    InputError
        A cell that cannot key a group (the first one).

    Examples
    --------
    >>> key_column(pd.Series(["a", None, 3], dtype=object), "recalls", "fact_id").tolist()
    ['a', None, 3]
    >>> key_column(pd.Series(["a", ["b"]], dtype=object), "recalls", "fact_id")
    Traceback (most recent call last):
    ...
    thatchlab.core.errors.InputError: recalls: row 1, column 'fact_id': expected text or a number, got a list ['b']
    """
    if s.dtype != object or pd.api.types.infer_dtype(s, skipna=True) in _HASHABLE_KINDS:
        return s
    for i, v in enumerate(s.to_numpy(object)):
        try:
            hash(v)
        except TypeError:
            raise InputError(f"{what}: row {i}, column {column!r}: expected text or a number, "
                             f"got a {type(v).__name__} {cell_repr(v)}") from None
    return s


def cell_repr(v, width: int = 60) -> str:
    """A cell as an error message shows it: its ``repr``, cut to ``width`` characters.

    Parameters
    ----------
    v : object
        The cell.
    width : int, default=60
        The most characters shown (an ellipsis ends a cut ``repr``).

    Returns
    -------
    str
        The ``repr``, cut.

    Examples
    --------
    >>> cell_repr(["x" * 80], width=12)
    "['xxxxxxx..."
    """
    text = repr(v)
    return text if len(text) <= width else text[:width - 3] + "..."


def _spells_number(v) -> bool:
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return True


def number_cell(v, *, whole: bool = False, nonnegative: bool = False):
    """One cell as a number, or None when it is not one that fits.

    A real number or text spelling one counts, when finite; a boolean does not.

    Parameters
    ----------
    v : object
        The cell.
    whole : bool, default=False
        Require a whole number (returned as ``int``).
    nonnegative : bool, default=False
        Require ``>= 0``.

    Returns
    -------
    float, int or None
        The number, or None.

    Examples
    --------
    >>> number_cell("3", whole=True), number_cell(2.5, whole=True), number_cell(True), number_cell(-1.0)
    (3, None, None, -1.0)
    """
    if isinstance(v, (bool, np.bool_)):
        return None
    try:
        n = float(v)
    except (TypeError, ValueError):
        return None
    if not np.isfinite(n) or (whole and n != int(n)) or (nonnegative and n < 0):
        return None
    return int(n) if whole else n
