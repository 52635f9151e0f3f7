"""Column dtypes beside NumPy's: Arrow-backed, ``string`` and categorical columns.

Frames reach thatchlab from ``read_parquet(dtype_backend="pyarrow")``, polars'
``to_pandas``, DuckDB's ``.df()`` and pandas 3's default strings as well as
from NumPy-backed constructors. These helpers let the fast paths take every
such column without a per-row Python pass:

* :func:`native_times` turns an Arrow timestamp column into pandas' own
  ``datetime64`` of the same unit and zone (missing values ``NaT``);
* :func:`is_text_dtype` tells a column whose every present cell is a ``str``
  by its dtype (``string``, ``string[pyarrow]``, Arrow ``string``/``large_string``,
  a categorical of such categories);
* :func:`all_text` answers "is every cell a ``str``?" from the dtype where it
  can and falls back to one pass over an object column only;
* :func:`factorize` codes a column (missing values ``-1`` or a code of their
  own, uniques optionally sorted) with the uniques as plain Python objects,
  so a result built from them is the same whatever the column's backing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.core._buffers import fixed_values, validity_bits
from thatchlab.core.docstrings import fill_doc

__all__ = ["is_arrow_timestamp", "is_arrow_dictionary", "is_timestamp_dtype", "native_times", "arrow_array", "epoch_ns", "float_values", "dictionary_codes", "bool_values", "present", "text_equal", "object_text", "nonempty_text", "is_text_dtype", "all_text",
           "factorize"]


# the one-parameter sections most of these functions share (filled in by fill_doc)
_PARAMS_COLUMN = """
Parameters
----------
s : pandas.Series
    A column.
"""
_PARAMS_DTYPE = """
Parameters
----------
dtype : dtype
    A column's dtype.
"""


def _arrow_type(dtype):
    return dtype.pyarrow_dtype if isinstance(dtype, pd.ArrowDtype) else None


@fill_doc(params_dtype=_PARAMS_DTYPE)
def is_arrow_timestamp(dtype) -> bool:
    """Whether ``dtype`` is an Arrow-backed timestamp (``timestamp[unit, tz][pyarrow]``).

    {params_dtype}

    Returns
    -------
    bool
        True for an ``ArrowDtype`` of a timestamp type.

    See Also
    --------
    is_timestamp_dtype
    """
    import pyarrow as pa  # heavy: Arrow only for Arrow-backed columns

    t = _arrow_type(dtype)
    return t is not None and pa.types.is_timestamp(t)


@fill_doc(params_dtype=_PARAMS_DTYPE)
def is_arrow_dictionary(dtype) -> bool:
    """Whether ``dtype`` is an Arrow dictionary (Arrow's categorical: ``dictionary<...>[pyarrow]``).

    {params_dtype}

    Returns
    -------
    bool
        True for an ``ArrowDtype`` of a dictionary type.
    """
    import pyarrow as pa  # heavy: Arrow only for Arrow-backed columns

    t = _arrow_type(dtype)
    return t is not None and pa.types.is_dictionary(t)


@fill_doc(params_dtype=_PARAMS_DTYPE)
def is_timestamp_dtype(dtype) -> bool:
    """Whether ``dtype`` holds instants: ``datetime64[...]`` (aware or naive) or an Arrow timestamp.

    {params_dtype}

    Returns
    -------
    bool
        Whether the column holds times.

    See Also
    --------
    is_arrow_timestamp
    """
    return (isinstance(dtype, pd.DatetimeTZDtype) or pd.api.types.is_datetime64_dtype(dtype)
            or is_arrow_timestamp(dtype))


@fill_doc(params_column=_PARAMS_COLUMN)
def native_times(s: pd.Series) -> pd.Series:
    """``s`` with an Arrow timestamp dtype turned into pandas' ``datetime64`` (same unit and zone,
    nulls as ``NaT``), and ``string_view`` text into ``large_string`` (pandas' dtype checks
    cannot ask a view dtype for its scalar type); any other column is returned as it is.

    {params_column}

    Returns
    -------
    pandas.Series
        ``datetime64`` for an Arrow timestamp column, ``large_string`` for ``string_view`` text,
        else ``s`` itself.

    See Also
    --------
    epoch_ns
    """
    t = _arrow_type(s.dtype)
    if t is None:
        return s
    import pyarrow as pa  # heavy: Arrow only for Arrow-backed columns

    if hasattr(pa.types, "is_string_view") and pa.types.is_string_view(t):
        return pd.Series(pd.arrays.ArrowExtensionArray(arrow_array(s)), index=s.index, name=s.name)
    if not is_arrow_timestamp(s.dtype):
        return s
    # Arrow stores epoch counts in UTC: view them as datetime64 (a null is NaT), no object pass
    chunks = [fixed_values(c.view(pa.int64()), np.iinfo(np.int64).min) for c in arrow_array(s).chunks]
    ints = np.concatenate(chunks) if chunks else np.empty(0, dtype=np.int64)
    values = ints.view(f"datetime64[{t.unit}]")
    out = pd.Series(values, index=s.index, name=s.name, copy=False)
    if t.tz is None:
        return out
    return out.dt.tz_localize("UTC").dt.tz_convert(t.tz)


@fill_doc(params_column=_PARAMS_COLUMN)
def epoch_ns(s: pd.Series):
    """UTC epoch nanoseconds of an aware nanosecond time column (``datetime64[ns, tz]`` or an Arrow
    ``timestamp[ns, tz]``; a missing value is int64's minimum, as ``asi8`` gives it), read without
    a copy where the data allow; None for any other column.

    {params_column}

    Returns
    -------
    numpy.ndarray or None
        int64 nanoseconds since the epoch, or None.

    See Also
    --------
    native_times
    """
    if isinstance(s.dtype, pd.DatetimeTZDtype) and s.dtype.unit == "ns":
        return s.array.asi8
    t = _arrow_type(s.dtype)
    if t is None or not is_arrow_timestamp(s.dtype) or t.unit != "ns" or t.tz is None:
        return None
    import pyarrow as pa  # heavy: Arrow only for Arrow-backed columns

    chunks = [fixed_values(c.view(pa.int64()), np.iinfo(np.int64).min) for c in arrow_array(s).chunks]
    return np.concatenate(chunks) if len(chunks) != 1 else chunks[0]


@fill_doc(params_column=_PARAMS_COLUMN)
def float_values(s: pd.Series) -> np.ndarray:
    """A numeric column as float64 NumPy with NaN for a missing value (Arrow ``double`` read from its buffers).

    {params_column}

    Returns
    -------
    numpy.ndarray
        float64 values; possibly a read-only view of the column's data.
    """
    if str(_arrow_type(s.dtype)) == "double":
        parts = [fixed_values(c, np.nan) for c in arrow_array(s).chunks]
        return np.concatenate(parts) if len(parts) != 1 else parts[0]
    return s.to_numpy(np.float64, na_value=np.nan)


def arrow_array(s: pd.Series):
    """The Arrow data of an Arrow-backed or ``string`` column (one chunked array, no copy for Arrow).

    ``string_view`` text (what polars holds) is read as ``large_string``: Arrow's
    ``take`` and set-lookup kernels have no view kernels.

    Parameters
    ----------
    s : pandas.Series
        An Arrow-backed or ``string`` column.

    Returns
    -------
    pyarrow.ChunkedArray
        The column's data.
    """
    import pyarrow as pa  # heavy: Arrow only for Arrow-backed columns

    data = s.array.__arrow_array__()
    data = data if isinstance(data, pa.ChunkedArray) else pa.chunked_array([data])
    if hasattr(pa.types, "is_string_view") and pa.types.is_string_view(data.type):
        data = data.cast(pa.large_string())
    return data


@fill_doc(params_dtype=_PARAMS_DTYPE)
def is_text_dtype(dtype) -> bool:
    """Whether every present cell of a column of ``dtype`` is a ``str``, known from the dtype alone.

    {params_dtype}

    Returns
    -------
    bool
        True for ``string``, Arrow text (a dictionary of text included) and categoricals of text.

    See Also
    --------
    all_text : The same question for a column, looking at cells when it must.

    Examples
    --------
    >>> is_text_dtype(pd.StringDtype()), is_text_dtype(np.dtype(object))
    (True, False)
    """
    import pyarrow as pa  # heavy: Arrow only for Arrow-backed columns

    if isinstance(dtype, pd.StringDtype):
        return True
    t = _arrow_type(dtype)
    if t is not None:
        if pa.types.is_dictionary(t):                  # Arrow's categorical
            t = t.value_type
        return pa.types.is_string(t) or pa.types.is_large_string(t) or (
            hasattr(pa.types, "is_string_view") and pa.types.is_string_view(t))
    if isinstance(dtype, pd.CategoricalDtype):
        cats = dtype.categories
        return is_text_dtype(cats.dtype) or (cats.dtype == object and (
            len(cats) == 0 or all_text(pd.Series(cats, dtype=object))))   # no category: every cell missing
    return False


@fill_doc(params_column=_PARAMS_COLUMN)
def all_text(s: pd.Series) -> bool:
    """Whether every cell of ``s`` is a ``str`` (a missing cell is not); vectorised unless ``s`` holds objects.

    {params_column}

    Returns
    -------
    bool
        Whether every cell is text.

    See Also
    --------
    is_text_dtype

    Examples
    --------
    >>> all_text(pd.Series(["a", "b"])), all_text(pd.Series(["a", None]))
    (True, False)
    """
    if is_text_dtype(s.dtype):
        return not bool(s.isna().any())
    if s.dtype != object:
        return False
    return pd.api.types.infer_dtype(s, skipna=False) == "string"


def dictionary_codes(s: pd.Series):
    """(codes with -1 for a missing cell, object array of the distinct values) of a text column.

    Parameters
    ----------
    s : pandas.Series
        A text-dtype column (categorical, ``string`` or Arrow text).

    Returns
    -------
    codes : numpy.ndarray
        Per cell, the index of its value in ``values`` (-1: missing).
    values : numpy.ndarray
        Object array of the distinct values.

    See Also
    --------
    factorize
    """
    if isinstance(s.dtype, pd.CategoricalDtype):
        return (np.asarray(s.array.codes),
                np.asarray(s.array.categories.astype(object), dtype=object))
    if is_arrow_dictionary(s.dtype):
        return _dictionary_indices(arrow_array(s))
    return _encode(arrow_array(s))


def _dictionary_indices(data):
    """:func:`dictionary_codes` of an Arrow dictionary array, read from its indices (no hashing).

    Chunks with different dictionaries are unified first (those holding a null, which Arrow cannot
    unify, are decoded and encoded afresh). A dictionary may repeat a value or hold a null: the
    codes then name each value's first entry, and -1 where the entry is null."""
    import pyarrow as pa  # heavy: Arrow only for Arrow-backed columns

    if data.num_chunks == 0:
        return np.empty(0, dtype=np.intp), np.empty(0, dtype=object)
    if data.num_chunks > 1:
        try:
            data = data.unify_dictionaries()
        except pa.ArrowInvalid:
            return _encode(data.cast(data.type.value_type))
    values = np.array(data.chunk(0).dictionary.to_pylist(), dtype=object)
    parts = [fixed_values(c.indices, -1) for c in data.chunks]
    codes = parts[0] if len(parts) == 1 else np.concatenate(parts)
    first, distinct = pd.factorize(values, use_na_sentinel=True)
    if len(distinct) == len(values) and not (first < 0).any():
        return codes, values
    remap = np.append(first, -1)                      # code -1 (a null index) stays -1
    return remap[codes], np.asarray(distinct, dtype=object)


def _encode(data):
    """:func:`dictionary_codes` of Arrow text data (a chunked array)."""
    import pyarrow.compute as pc  # heavy: Arrow only for Arrow-backed columns

    enc = pc.dictionary_encode(data)
    if enc.num_chunks != 1:
        enc = enc.unify_dictionaries()
    if enc.num_chunks == 0:
        return np.empty(0, dtype=np.intp), np.empty(0, dtype=object)
    dictionary = enc.chunk(0).dictionary
    parts = [fixed_values(c.indices, -1) for c in enc.chunks]
    codes = parts[0] if len(parts) == 1 else np.concatenate(parts)
    return codes, np.array(dictionary.to_pylist(), dtype=object)


#: Rows :func:`_factorize_few` reads its value set from.
_HEAD = 4096


def _take_text(s: pd.Series, rows):
    """The Arrow text of ``s`` at positions ``rows`` (a chunked array)."""
    import pyarrow as pa  # heavy: Arrow only for Arrow-backed columns
    import pyarrow.compute as pc  # heavy: Arrow only for Arrow-backed columns

    return pc.take(arrow_array(s), pa.array(np.asarray(rows, dtype=np.int64)))


def _factorize_few(taken, *, sort: bool, use_na_sentinel: bool):
    """:func:`factorize`'s answer for few-valued Arrow text ``taken``, or None.

    The distinct values of the first :data:`_HEAD` rows, put in the asked
    order first (by value; or, unsorted, in order of first appearance, which
    ``unique`` keeps), are looked up in one ``index_in`` pass, so its
    positions are already the codes: no remapping pass. A missing cell gets
    -1, or with ``use_na_sentinel=False`` the code after the values (the
    missing value sorts last); unsorted with a missing cell kept as a value,
    its place depends on where it first appears, and the answer is None.
    None as well when any present cell is not among the first rows' values.
    """
    import pyarrow as pa  # heavy: Arrow only for Arrow-backed columns
    import pyarrow.compute as pc  # heavy: Arrow only for Arrow-backed columns

    has_missing = taken.null_count > 0
    if has_missing and not (sort or use_na_sentinel):
        return None
    head = pc.unique(taken.slice(0, _HEAD)).drop_null().to_pylist()
    if 4 * len(head) > min(len(taken), _HEAD):      # many distinct values: no small set to look up
        return None
    values = sorted(head) if sort else head           # str order: code points, as NumPy sorts str
    found = pc.index_in(taken, value_set=pa.array(values, type=taken.type))
    if found.null_count != taken.null_count:          # some present cell is not in the set
        return None
    missing = -1 if use_na_sentinel else len(values)
    parts = [fixed_values(c, missing) for c in found.chunks]
    codes = (np.concatenate(parts) if len(parts) > 1 else parts[0]) if parts else np.empty(0, np.intp)
    if has_missing and not use_na_sentinel:
        values = values + [np.nan]
    uniques = np.empty(len(values), dtype=object)
    uniques[:] = values
    return codes.astype(np.intp), uniques


def bool_values(data) -> np.ndarray:
    """An Arrow boolean (chunked) array as a NumPy bool array, a null as False.

    Parameters
    ----------
    data : pyarrow.Array or pyarrow.ChunkedArray
        Booleans.

    Returns
    -------
    numpy.ndarray
        One bool per value.
    """
    out = []
    for c in (data.chunks if hasattr(data, "chunks") else [data]):
        valid, value = c.buffers()[0], c.buffers()[1]
        bits = validity_bits(value, c.offset, len(c))
        out.append(bits & validity_bits(valid, c.offset, len(c)) if valid is not None else bits)
    return np.concatenate(out) if out else np.zeros(0, dtype=bool)


@fill_doc(params_column=_PARAMS_COLUMN)
def present(s: pd.Series) -> np.ndarray:
    """``s.notna()`` as a NumPy bool array (read from the validity bitmap of an Arrow-backed column).

    {params_column}

    Returns
    -------
    numpy.ndarray
        One bool per cell, True where a value is present.
    """
    if is_arrow_dictionary(s.dtype):                  # a null may hide in the dictionary itself
        return dictionary_codes(s)[0] >= 0
    if isinstance(s.dtype, pd.ArrowDtype) or (isinstance(s.dtype, pd.StringDtype) and s.dtype.storage == "pyarrow"):
        parts = [validity_bits(c.buffers()[0], c.offset, len(c)) for c in arrow_array(s).chunks]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=bool)
    return s.notna().to_numpy(bool)


@fill_doc(params_column=_PARAMS_COLUMN)
def object_text(s: pd.Series) -> pd.Series:
    """A text-dtype column as an object column of ``str`` with ``None`` where a cell is missing
    (what an object frame holds); any other column is returned as it is.

    {params_column}

    Returns
    -------
    pandas.Series
        An object column for text dtypes, else ``s`` itself.
    """
    if not is_text_dtype(s.dtype):
        return s
    codes, values = dictionary_codes(s)
    cells = np.append(values, np.array([None], dtype=object))[np.where(codes < 0, len(values), codes)]
    return pd.Series(cells, index=s.index, name=s.name, dtype=object)


@fill_doc(params_column=_PARAMS_COLUMN)
def nonempty_text(s: pd.Series) -> np.ndarray:
    """Per cell, whether it is a non-empty ``str``; a text dtype is judged by its distinct values.

    {params_column}

    Returns
    -------
    numpy.ndarray
        One bool per cell.
    """
    if is_text_dtype(s.dtype):
        codes, values = dictionary_codes(s)
        ok = np.array([isinstance(v, str) and v != "" for v in values], dtype=bool)
        return np.append(ok, False)[codes]
    return np.fromiter((isinstance(v, str) and v != "" for v in s.tolist()), dtype=bool, count=len(s))


@fill_doc(params_column=_PARAMS_COLUMN)
def text_equal(s: pd.Series, value: str) -> np.ndarray:
    """Per row, whether the cell is the ``str`` ``value`` (a missing or non-text cell is not), vectorised.

    Arrow text is compared by Arrow's kernel, a categorical through its
    categories; an object column compares each cell that is a ``str``.

    {params_column}
    value : str
        The text to look for.

    Returns
    -------
    numpy.ndarray
        One bool per cell.
    """
    if isinstance(s.dtype, pd.CategoricalDtype) or is_arrow_dictionary(s.dtype):
        codes, cats = dictionary_codes(s)
        hit = np.append(np.array([isinstance(c, str) and c == value for c in cats], dtype=bool), False)
        return hit.take(np.asarray(codes, dtype=np.intp))
    if is_text_dtype(s.dtype):
        import pyarrow as pa  # heavy: Arrow only for Arrow-backed columns
        import pyarrow.compute as pc  # heavy: Arrow only for Arrow-backed columns

        data = arrow_array(s)
        return bool_values(pc.equal(data, pa.scalar(value, type=data.type)))
    objects = s.to_numpy(object)
    return np.fromiter((isinstance(v, str) and v == value for v in objects), dtype=bool, count=len(objects)) \
        if s.dtype == object else np.zeros(len(s), dtype=bool)


#: :func:`factorize` of Arrow text over at most this share of the rows takes those rows before
#: encoding them (gathering a row costs less than half of hashing it).
_TAKE_FIRST = 0.6


def factorize(s: pd.Series, rows=None, *, sort: bool = False, use_na_sentinel: bool = True):
    """``pd.factorize(s.to_numpy(object)[rows], ...)`` for any backing: ``(codes, uniques)``.

    ``uniques`` is an object ndarray of plain Python values (``str`` for text)
    in order of first appearance (``sort=True``: sorted); with
    ``use_na_sentinel=False`` the missing values, if any, are one unique held
    as ``nan``, in order of appearance (last when sorted), as ``pd.factorize``
    of an object array gives them. A text column (``string``, Arrow text, a categorical of text) is
    coded once through its categories or Arrow's dictionary encoding (of the
    ``rows`` alone when they are at most ``_TAKE_FIRST`` (0.6) of the column:
    Arrow hashes every row it encodes, and gathering a row costs less; text
    with few distinct values is then looked up in the first rows' values put
    in the asked order, so the lookup's positions are the codes) and the
    few distinct values are ordered afterwards; only an object column is
    hashed value by value (by pandas, in C).

    Parameters
    ----------
    s : pandas.Series
        A column of any backing.
    rows : array-like of int, optional
        Positions to code, in this order (default: every row).
    sort : bool, default=False
        Order the uniques by value.
    use_na_sentinel : bool, default=True
        Code a missing value -1; False gives it a code of its own.

    Returns
    -------
    codes : numpy.ndarray
        ``intp`` code per coded row.
    uniques : numpy.ndarray
        Object array of the distinct values.

    See Also
    --------
    dictionary_codes

    Examples
    --------
    >>> codes, uniques = factorize(pd.Series(["b", "a", "b"], dtype="string"), sort=True)
    >>> codes.tolist(), uniques.tolist()
    ([1, 0, 1], ['a', 'b'])
    """
    if not is_text_dtype(s.dtype):
        values = s.to_numpy(object)
        if rows is not None:
            values = values.take(rows)
        codes, uniques = pd.factorize(values, sort=sort, use_na_sentinel=use_na_sentinel)
        return np.asarray(codes, dtype=np.intp), np.asarray(uniques, dtype=object)
    coded = isinstance(s.dtype, pd.CategoricalDtype) or is_arrow_dictionary(s.dtype)    # codes at hand
    if rows is not None and not coded and len(rows) <= _TAKE_FIRST * len(s):
        # a few of the rows: gathering them costs less than hashing the others (Arrow's hash is per row)
        taken = _take_text(s, rows)
        answer = _factorize_few(taken, sort=sort, use_na_sentinel=use_na_sentinel)
        if answer is not None:
            return answer
        codes, values = _encode(taken)
        rows, all_seen = None, True                   # the dictionary holds only values of these rows
    else:
        codes, values = dictionary_codes(s)
        all_seen = False
    return _in_order(codes if rows is None else codes.take(rows), values, all_seen=all_seen, sort=sort,
                     use_na_sentinel=use_na_sentinel)


def _in_order(codes, values, *, all_seen: bool, sort: bool, use_na_sentinel: bool):
    """:func:`factorize`'s ``(codes, uniques)`` from a dictionary's ``codes`` (-1: missing) and
    ``values``, ordered as asked; ``all_seen``: every value occurs among ``codes``."""
    k = len(values)
    slot = codes.astype(np.intp)
    missing = slot < 0
    any_missing = bool(missing.any())
    if any_missing:
        slot[missing] = k                             # a missing cell counts in slot k
    if sort:
        if all_seen:
            seen = np.append(np.ones(k, dtype=bool), any_missing)
        else:
            seen = np.bincount(slot, minlength=k + 1).astype(bool)
        present_ = np.flatnonzero(seen[:k])
        order = present_[np.argsort(values[present_].astype(str), kind="stable")]
        if seen[k] and not use_na_sentinel:           # the missing value sorts last
            order = np.append(order, k)
    else:                                             # order of first appearance, missing included
        order = pd.unique(slot).astype(np.intp)       # integer hashing, in C
        if use_na_sentinel:
            order = order[order < k]
    uniques = np.append(values, np.array([np.nan], dtype=object))[order]
    if len(order) == k + any_missing and np.array_equal(order, np.arange(len(order))):
        return slot, uniques                          # already in the asked order: the slots are the codes
    remap = np.full(k + 1, -1, dtype=np.intp)
    remap[order] = np.arange(len(order))
    return remap.take(slot), uniques
