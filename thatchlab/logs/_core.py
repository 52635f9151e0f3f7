"""Reading and writing long-format logs.

Every log kind (interaction, memory, recall, event/recall streams) is a
pandas DataFrame with one row per event. This module holds what their readers
and writers share: format detection (JSONL, CSV, Parquet), the pyarrow read
path with its line-by-line fallback, cell decoding and the checks a writer
makes; the validation itself is :mod:`thatchlab.logs._validate`.

Row numbers are 0-based positions in the table as read ("data rows": blank
lines and a CSV header are not counted); messages about a file also give the
line the row starts on, e.g. ``data row 3 (line 5)``.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import Callable, Iterable, Mapping

import numpy as np
import pandas as pd

from thatchlab.core.errors import LogValidationError
from thatchlab.core.time import TIME_RANGE
from thatchlab.logs import _jsonl

__all__ = ["read_table", "write_table", "log_format", "surrogate_rows", "COLUMN_KINDS", "TIME_RANGE"]

_FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".csv": "csv",
            ".parquet": "parquet", ".pq": "parquet"}



def raw_values(series: pd.Series):
    """A Series' values without a copy, through public API: its extension array (categorical,
    tz-aware times, nullable types) or its numpy array."""
    if isinstance(series.dtype, pd.api.extensions.ExtensionDtype):
        return series.array
    return series.to_numpy(copy=False)

def log_format(path, fmt: str | None = None) -> str:
    """The log format of ``path`` from its suffix (or ``fmt`` when given).

    Parameters
    ----------
    path : str or path-like
        The file; only its suffix is read.
    fmt : {"jsonl", "csv", "parquet"}, optional
        The format to use whatever the suffix.

    Returns
    -------
    str
        ``"jsonl"``, ``"csv"`` or ``"parquet"``.

    Raises
    ------
    LogValidationError
        ``fmt`` is none of the three, or the suffix names no known format.

    Examples
    --------
    >>> log_format("events.ndjson"), log_format("x.txt", "csv")
    ('jsonl', 'csv')
    """
    if fmt is not None:
        if fmt not in ("jsonl", "csv", "parquet"):
            raise LogValidationError(f"{path}: unknown format {fmt!r}; expected jsonl, csv or parquet",
                                     file=str(path), expected="jsonl, csv or parquet")
        return fmt
    suffix = Path(path).suffix.lower()
    if suffix not in _FORMATS:
        raise LogValidationError(
            f"{path}: cannot tell the format from the suffix {suffix!r}; "
            f"expected one of {sorted(_FORMATS)}", file=str(path), expected=str(sorted(_FORMATS)))
    return _FORMATS[suffix]


#: Column kinds a reader may be told (``columns=`` of :func:`read_table`).
COLUMN_KINDS = ("text", "time", "number", "bool", "texts", "numbers")



def _arrow_type(kind):
    import pyarrow as pa  # heavy: pandas 2 does not load Arrow; only Arrow paths need it

    return {"text": pa.string(), "time": pa.string(), "number": pa.float64(), "bool": pa.bool_(),
            "texts": pa.list_(pa.string()), "numbers": pa.list_(pa.float64())}[kind]


def read_table(path, *, fmt: str | None = None, json_columns: Iterable[str] = (),
               columns: Mapping[str, str] | None = None, required: Iterable[str] = ()) -> pd.DataFrame:
    """Read a JSONL, CSV or Parquet file into a DataFrame (no validation).

    Files are parsed by pyarrow into columns (no per-row Python objects):
    JSON lines with an explicit schema built from ``columns`` (column name →
    one of :data:`COLUMN_KINDS`; other fields are inferred), CSV with every
    column as text, Parquet reading only the ``columns`` named (every column
    without them). A JSON file pyarrow refuses (a value of another type than
    its column's, a lone surrogate, a key given twice...) is read line by
    line with ``json.loads`` instead, so that validation can name the row and
    column of the odd value; so is a file pyarrow would read otherwise than
    ``json.loads`` (:mod:`thatchlab.logs._jsonl`: lines that are not one
    object each, blank lines and spaces around objects included; bytes that
    are not UTF-8; ``NaN``, infinities or ``-0`` in a float column; in a
    column ``columns`` does not name, integers beyond int64, nested values
    or nulls among text or booleans), and one lacking a ``required`` column,
    so that the column is reported missing rather than null. Either way the
    values are those ``json.loads`` reads, the named columns typed by kind.

    Parameters
    ----------
    path : str or path-like
        The file.
    fmt : {"jsonl", "csv", "parquet"}, optional
        The format, when the suffix does not say it.
    json_columns : iterable of str, default=()
        CSV columns that hold JSON text (lists) to decode.
    columns : mapping of str to str, optional
        Column name → one of :data:`COLUMN_KINDS`: the types the named
        columns are read as.
    required : iterable of str, default=()
        Columns the caller needs; a JSON file lacking one is read line by
        line, so the column is reported missing rather than null.

    Returns
    -------
    pandas.DataFrame
        The table as read, unvalidated.

    Raises
    ------
    LogValidationError
        The file is missing or unreadable.

    See Also
    --------
    write_table : the writer whose files this reads back as written.
    """
    fmt = log_format(_existing_file(path), fmt)
    return _numbered(_read_source(path, fmt, json_columns, columns, required, arrow=False), path, fmt)


def read_log(path, validate: Callable, *, errors: str = "raise", fmt: str | None = None,
             json_columns: Iterable[str] = (), columns: Mapping[str, str] | None = None,
             required: Iterable[str] = (), categorical: bool = False, validate_view: Callable | None = None):
    """``validate(read_table(path, ...), source=str(path), errors=errors)``, validating in columns when it can.

    A JSON-lines file pyarrow parsed is validated first on a frame built
    straight from its columns (:func:`validation_frame`: ``time`` columns
    already parsed, ``text`` columns as categoricals when ``categorical``, or
    objects sharing one ``str`` per distinct text) with ``errors="raise"``;
    ``validate_view`` (default ``validate``) validates that view, and must
    return what ``validate`` returns for the plain frame whenever it succeeds.
    When that finds a problem (or with ``errors="report"``) the file is read
    again into the plain frame :func:`read_table` returns and that is
    validated, so the result and every message are those of
    ``validate(read_table(...))``.
    """
    fmt = log_format(_existing_file(path), fmt)
    src = _read_source(path, fmt, json_columns, columns, required, arrow=errors == "raise")
    if not isinstance(src, pd.DataFrame):  # a pyarrow table
        view = _guarded(path, fmt, lambda: validation_frame(src, columns, categorical=categorical))
        del src  # the table's memory goes back before validation allocates the result
        _release_arrow_memory()
        if view is not None:
            try:
                return (validate_view or validate)(view, source=str(path), errors="raise")
            except (LogValidationError, Exception):  # the reference path below names the problem
                pass
        del view
        src = _read_source(path, fmt, json_columns, columns, required, arrow=False)
    return validate(_numbered(src, path, fmt), source=str(path), errors=errors)


def _release_arrow_memory() -> None:
    import pyarrow as pa  # heavy: pandas 2 does not load Arrow; only Arrow paths need it

    pa.default_memory_pool().release_unused()


def block_frame(block: np.ndarray, names: list, others: Mapping, order: list, index=None,
                like: pd.DataFrame | None = None) -> pd.DataFrame:
    """A frame of columns ``order``: ``names`` are the rows of the 2-D object ``block`` (held as
    one consolidated block, not copied), the columns of ``others`` (arrays or Series) are
    inserted where ``order`` puts them. ``like``'s attrs are kept."""
    index = pd.RangeIndex(block.shape[1]) if index is None else index
    # the names' Index as a frame built from a dict has it (str on pandas 3, object before)
    out = pd.DataFrame(block.T, columns=pd.Index(list(names)), index=index, dtype=object, copy=False)
    at = {c: i for i, c in enumerate(order)}
    for c in sorted(others, key=at.__getitem__):
        v = others[c]
        out.insert(at[c], c, pd.Series(raw_values(v) if isinstance(v, pd.Series) else v, index=index, copy=False))
    return out.__finalize__(like, method="copy") if like is not None else out


def _guarded(path, fmt, fn):
    try:
        return fn()
    except LogValidationError:
        raise
    except (MemoryError, RecursionError, Exception) as exc:  # pyarrow/pandas parse errors of many kinds
        raise LogValidationError(f"{path}: cannot read as {fmt} ({type(exc).__name__}: {_one_line(exc)})",
                                 file=str(path), expected=f"a {fmt} file") from None


def _existing_file(path):
    """``path``, once it is known to name a file (a typed error for a missing path or a directory)."""
    p = Path(path)
    if p.is_dir():
        raise LogValidationError(f"{path}: is a directory; expected a log file (JSONL, CSV or Parquet)",
                                 file=str(path), expected="a log file")
    if p.is_symlink() and not p.exists():
        try:
            p.resolve(strict=False)
        except (RuntimeError, OSError):  # a loop (RuntimeError before Python 3.13)
            raise LogValidationError(f"{path}: a symbolic link loop; expected a log file", file=str(path),
                                     expected="a log file") from None
    if p.exists() and not p.is_file():
        raise LogValidationError(f"{path}: not a regular file (a FIFO, a socket or a device); expected a log file",
                                 file=str(path), expected="a log file")
    if not p.is_file():
        raise LogValidationError(f"{path}: no such file", file=str(path), expected="a log file")
    return path


_EXPECTED_CONTENT = {"jsonl": "one JSON object per line", "csv": "a header line and data rows",
                     "parquet": "a Parquet file"}


def _empty(path, fmt):
    return LogValidationError(f"{path}: empty file; expected {_EXPECTED_CONTENT[fmt]}", file=str(path),
                              expected=_EXPECTED_CONTENT[fmt])


def _read_source(path, fmt, json_columns, columns, required, *, arrow: bool):
    """The parsed file: a DataFrame, or with ``arrow`` the pyarrow table of a JSON-lines file pyarrow read."""
    p = Path(_existing_file(path))
    if p.stat().st_size == 0:
        if fmt == "jsonl" and required:  # no line, no object: a log of no rows
            return _no_rows(required)
        raise _empty(path, fmt)

    def parse():
        if fmt == "jsonl":
            return _read_jsonl(p, path, columns, tuple(required), arrow=arrow)
        if fmt == "csv":
            df = _read_csv(p, path)
            for col in json_columns:
                if col in df.columns:
                    df[col] = _decode_json_cells(df[col], path, col)
            return df
        return _read_parquet(p, columns)

    return _guarded(path, fmt, parse)


def _numbered(df: pd.DataFrame, path, fmt: str) -> pd.DataFrame:
    """``df`` (the reader's own frame) with a 0-based RangeIndex, the valid-UTF-8 flag set and its
    source recorded (:data:`SOURCE`), so that validation can give a bad row's line."""
    flag = df.attrs.get(_UTF8, False)
    if not (isinstance(df.index, pd.RangeIndex) and df.index.start == 0 and df.index.step == 1):
        df = df.reset_index(drop=True)
    df.attrs[_UTF8] = flag
    if fmt != "parquet":
        df.attrs[SOURCE] = (str(path), fmt)
    return df


#: ``DataFrame.attrs`` key of a frame read from a text file: ``(path, format)``. Validation names
#: each bad row's line from it, and drops it from what it returns (rows may be dropped later).
SOURCE = "thatchlab.source"


def row_label(attrs: Mapping, rows) -> dict:
    """How a message names each of ``rows`` (data rows, from 0) of a frame with these ``attrs``:
    ``"data row 3 (line 5)"`` for a frame read from a JSONL or CSV file, else ``"row 3"``."""
    rows = sorted({int(r) for r in rows})
    source = attrs.get(SOURCE)
    if source is None:
        return {r: f"row {r}" for r in rows}
    lines = _lines_of(*source, rows)
    return {r: f"data row {r} (line {lines[r]})" if r in lines else f"data row {r}" for r in rows}


def _lines_of(path, fmt, rows) -> dict:
    """The line each of the data ``rows`` starts on (a scan of the file, made only to word an error)."""
    want, out = set(rows), {}
    try:
        records = _jsonl_records(path) if fmt == "jsonl" else _csv_records(path)
        for row, line, _ in records:
            if row in want:
                out[row] = line
                if len(out) == len(want):
                    break
    except (OSError, UnicodeDecodeError, csv.Error):
        pass
    return out


def _jsonl_records(path):
    """``(data row, line, raw bytes)`` of each non-blank line of a JSON-lines file (a BOM dropped)."""
    with open(path, "rb") as fh:
        row = 0
        for line, raw in enumerate(fh, start=1):
            if line == 1:
                raw = raw.removeprefix(_jsonl.BOM)
            if raw.strip():
                yield row, line, raw
                row += 1


def _csv_records(path):
    """``(data row, first line, fields)`` of each record after a CSV file's header (blank lines skipped,
    as pyarrow skips them; a quoted value may span lines)."""
    with open(path, encoding="utf-8-sig", newline="") as fh:
        reader = csv.reader(fh)
        row, end = -1, 0
        for fields in reader:
            start, end = end + 1, reader.line_num
            if not fields:
                continue
            if row >= 0:
                yield row, start, fields
            row += 1


def copy_frame(df: pd.DataFrame, deep: bool = True) -> pd.DataFrame:
    """A copy of ``df`` made column by column (same columns, index, dtypes, attrs).

    ``DataFrame.copy`` first consolidates same-dtype columns into one 2-D
    block, which copies each of them once more and makes later column
    assignments split the block again; here every column keeps its own.
    ``deep=False`` shares the column arrays (assigning a column of the copy
    replaces it there only; nothing may write into the shared arrays).
    """
    out = frame_of({i: (raw_values(df.iloc[:, i]).copy() if deep else raw_values(df.iloc[:, i]))
                    for i in range(df.shape[1])}, index=df.index)
    out.columns = df.columns
    return out.__finalize__(df, method="copy")


def frame_of(columns: Mapping, index=None, like: pd.DataFrame | None = None) -> pd.DataFrame:
    """A frame holding the given column arrays or Series as they are (no copy, no consolidation).

    Series are taken by value (their index ignored); ``like``'s attrs are kept.
    """
    data = {k: (raw_values(v) if isinstance(v, pd.Series) else v) for k, v in columns.items()}
    if index is None:
        index = pd.RangeIndex(len(next(iter(data.values())))) if data else pd.RangeIndex(0)
    # Series of the arrays' own dtype: an object array is not scanned for times to infer
    data = {k: pd.Series(v, index=index, dtype=v.dtype if isinstance(v, np.ndarray) else None, copy=False)
            for k, v in data.items()}
    out = pd.DataFrame(data, index=index, copy=False)
    return out.__finalize__(like, method="copy") if like is not None else out


def _one_line(exc) -> str:
    return " ".join(str(exc).split())[:300]


#: ``DataFrame.attrs`` key set on frames whose text pyarrow decoded (always valid Unicode).
_UTF8 = "thatchlab.valid_utf8"
#: ``attrs`` key: optional columns the source did not have, added by a reader as typed nulls
#: (validation reports a row that needs one as a missing column, not as a null value).
ABSENT = "thatchlab.absent_columns"


def _to_pandas(table, self_destruct: bool = True) -> pd.DataFrame:
    df = table.to_pandas(self_destruct=self_destruct, split_blocks=True, deduplicate_objects=True)
    for i in range(df.shape[1]):  # zero-copy numbers are read-only views of Arrow memory
        values = raw_values(df.iloc[:, i])
        base = getattr(values, "_ndarray", values)
        if isinstance(base, np.ndarray) and not base.flags.writeable:
            df.isetitem(i, values.copy())
    df.attrs[_UTF8] = True
    return df


#: The UTC times the columnar pass keeps from pyarrow's ISO 8601 parse (1678 to 2261): within a day
#: of them every local time and offset fits pandas' nanoseconds, so pandas reads the same instant.
#: Columns with a time outside (or that pyarrow refuses) go through ``_parse_times``.
_ARROW_TIMES = (pd.Timestamp("1678-01-01", tz="UTC").value, pd.Timestamp("2262-01-01", tz="UTC").value)


def validation_frame(table, columns: Mapping[str, str] | None, *, categorical: bool = False):
    """The frame to validate a pyarrow ``table`` on, built column by column (None when it cannot be).

    ``time`` columns (of ``columns``) whose every value pyarrow parses as ISO
    8601 with an offset, within :data:`_ARROW_TIMES`, become
    ``datetime64[ns, UTC]`` (the times ``_parse_times`` gives them), other
    ``time`` columns stay text; ``text`` columns become categoricals
    (``categorical``) or object arrays sharing one ``str`` per distinct text;
    every other column is converted as :func:`read_table` converts it.
    """
    import pyarrow as pa  # heavy: pandas 2 does not load Arrow; only Arrow paths need it

    names = table.column_names
    if len(set(names)) != len(names):
        return None
    kinds = dict(columns or {})
    own = {c for c in names if kinds.get(c) in ("text", "time") and pa.types.is_string(table.schema.field(c).type)}
    rest = [c for c in names if c not in own]
    rest_df = _to_pandas(table.select(rest), self_destruct=False) if rest else None
    data = {}
    for name in names:
        if name not in own:
            data[name] = raw_values(rest_df[name])
        elif kinds[name] == "time":
            parsed = _arrow_times(table.column(name))
            data[name] = parsed if parsed is not None else _arrow_texts(table.column(name), False)
        else:
            data[name] = _arrow_texts(table.column(name), categorical)
    out = frame_of(data, index=pd.RangeIndex(table.num_rows))
    out.attrs[_UTF8] = True
    return out


def _arrow_texts(col, categorical: bool):
    """A pyarrow string column as a Categorical, or as objects (None for null) sharing one str per text."""
    import pyarrow.compute as pc  # heavy: pandas 2 does not load Arrow; only Arrow paths need it

    n = len(col)
    if col.null_count == n:
        codes, cats = np.full(n, -1, dtype=np.int8), np.empty(0, dtype=object)
    else:
        # one array: the chunks' dictionaries would need unifying, several times slower than a copy
        enc = pc.dictionary_encode(col.combine_chunks())
        cats = enc.dictionary.to_numpy(zero_copy_only=False).astype(object, copy=False)
        codes = enc.indices.fill_null(-1).to_numpy(zero_copy_only=False)
    if categorical:
        return pd.Categorical.from_codes(codes, categories=pd.Index(cats, dtype=object))
    return np.append(cats, None)[codes]


def _arrow_times(col):
    """A pyarrow string column of times as ``datetime64[ns, UTC]``, or None unless pyarrow parses
    every value as a time with an offset within :data:`_ARROW_TIMES`."""
    import pyarrow as pa  # heavy: pandas 2 does not load Arrow; only Arrow paths need it
    import pyarrow.compute as pc  # heavy: pandas 2 does not load Arrow; only Arrow paths need it

    try:  # the cast to an aware type refuses text without an offset
        col = pc.cast(col, pa.timestamp("ns", tz="UTC"))
    except (pa.ArrowException, ValueError, OverflowError):
        return None
    if col.null_count < len(col):
        bounds = pc.min_max(col.cast(pa.int64()))
        if bounds["min"].as_py() < _ARROW_TIMES[0] or bounds["max"].as_py() >= _ARROW_TIMES[1]:
            return None
    return raw_values(col.to_pandas().dt.tz_convert("UTC").dt.as_unit("ns"))


def _read_jsonl(p: Path, path, columns, required, arrow: bool = False):
    """A JSON-lines file parsed by pyarrow (a table with ``arrow``, else its frame), or read line by
    line when :func:`_arrow_jsonl` gives no table."""
    import pyarrow as pa  # heavy: pandas 2 does not load Arrow; only Arrow paths need it

    with pa.memory_map(str(p)) as source:  # the file's bytes, mapped (not copied) while parsed
        table = _arrow_jsonl(source.read_buffer(), dict(columns or {}), required)
    if table is None:
        return _read_jsonl_lines(p, path, required)
    return table if arrow else _to_pandas(table)


def _arrow_jsonl(data, kinds: Mapping[str, str], required):
    """pyarrow's table of the JSON-lines bytes ``data``, or None when it would not hold what
    ``json.loads`` reads line by line (:mod:`thatchlab.logs._jsonl`: lines that are not one object
    each, bytes that are not UTF-8, values stored otherwise), when pyarrow refuses the bytes, or
    when a ``required`` column is missing or null throughout."""
    import pyarrow as pa  # heavy: pandas 2 does not load Arrow; only Arrow paths need it
    import pyarrow.json as pj  # heavy: pandas 2 does not load Arrow; only Arrow paths need it

    buf = np.frombuffer(data, dtype=np.uint8)
    lines = _jsonl.object_lines(buf)
    # The explicit schema names only the fields the file's first lines use: pyarrow fills every
    # named field row by row, so the many optional fields a log kind knows (absent from most files)
    # would cost it about two thirds more time. Later fields are inferred and checked below.
    seen = _jsonl.leading_keys(buf) if lines is not None else None
    if seen is None or not _jsonl.is_utf8(buf):
        return None
    del buf
    fields = [(c, _arrow_type(k)) for c, k in kinds.items() if c in seen]
    # one thread: pyarrow's pool keeps the pages each parsing thread used (~90 MB more of a 1M-row
    # log's after the table is gone), for ~0.3 s of parsing on two cores
    read = pj.ReadOptions(use_threads=False)

    def parse(schema_fields):
        return pj.read_json(pa.BufferReader(data), read_options=read, parse_options=pj.ParseOptions(
            explicit_schema=pa.schema(schema_fields) if schema_fields else None,
            unexpected_field_behavior="infer"))

    try:
        table = parse(fields)
        # the frame json.loads gives has its columns in order of first appearance: the first lines'
        # keys, then what pyarrow inferred further down (in the order it met them)
        order = seen + [c for c in table.column_names if c not in seen]
        named = {c for c, _ in fields}
        late = [c for c in table.column_names if c in kinds and c not in named]
        if late:  # fields first seen further down: cast what casts exactly, else read them by name
            table = _cast_late(table, late, kinds)
            if table is None:
                fields = [(c, _arrow_type(k)) for c, k in kinds.items() if c in named or c in late]
                table = parse(fields)
        inferred = [f.name for f in table.schema if pa.types.is_timestamp(f.type)]
        if inferred:  # pyarrow reads ISO-looking text as naive times: keep it text, validation parses it
            table = parse(fields + [(c, pa.string()) for c in inferred])
    except (pa.ArrowException, ValueError):  # odd values: read line by line for row-level messages
        return None
    if (table.num_rows != lines or set(order) != set(table.column_names) or not _jsonl.same_as_json(table, kinds)
            or any(c not in table.column_names or table.column(c).null_count == table.num_rows for c in required)):
        return None
    return table.select(order)


def _cast_late(table, late, kinds):
    """``table`` with the inferred columns ``late`` cast to their kinds' types, or None unless each
    is all null or already of its type (then the reader parses again, naming them)."""
    import pyarrow as pa  # heavy: pandas 2 does not load Arrow; only Arrow paths need it

    for c in late:
        want, col = _arrow_type(kinds[c]), table.column(c)
        if col.type == want:
            continue
        if not pa.types.is_null(col.type):
            return None
        table = table.set_column(table.column_names.index(c), c, pa.nulls(table.num_rows, want))
    return table


def _no_rows(required) -> pd.DataFrame:
    """The frame of a JSON-lines log holding no line: its ``required`` columns and no row."""
    return pd.DataFrame({c: pd.Series(dtype=object) for c in required})


def _read_jsonl_lines(p: Path, path, required=()) -> pd.DataFrame:
    rows = []
    for row, lineno, raw in _jsonl_records(p):
        where = f"{path}: data row {row} (line {lineno})"
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise LogValidationError(f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start}); "
                                     "expected UTF-8 JSON", file=str(path), row=row,
                                     expected="UTF-8 text") from None
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, integers of > 4300 digits
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else _one_line(exc)
            raise LogValidationError(f"{where}: not valid JSON ({reason}); expected one JSON object per line",
                                     file=str(path), row=row, expected="one JSON object per line") from None
        if not isinstance(obj, dict):
            raise LogValidationError(f"{where}: expected a JSON object, got {type(obj).__name__}",
                                     file=str(path), row=row, expected="a JSON object")
        rows.append(obj)
    if not rows:
        if required:  # blank lines only: a log of no rows, as a 0-byte file
            return _no_rows(required)
        raise _empty(path, "jsonl")
    names = list(dict.fromkeys(k for r in rows for k in r))
    try:
        index = pd.Index(names)  # the names' dtype as every reader has it (str on pandas 3)
    except UnicodeEncodeError:  # a key with a lone surrogate, for validation to report
        index = pd.Index(names, dtype=object)
    return pd.DataFrame({c: _json_column([r.get(c, np.nan) for r in rows]) for c in names}, columns=index)


def _json_column(values: list) -> pd.Series:
    """A column of ``json.loads`` values typed as pandas infers them (as the columnar path has them),
    except text pandas 3's ``str`` cannot hold (a lone surrogate, the very value this path exists to
    report), which stays object."""
    try:
        return pd.Series(values)
    except UnicodeEncodeError:
        return pd.Series(values, dtype=object)


def _read_csv(p: Path, path) -> pd.DataFrame:
    import pyarrow as pa  # heavy: pandas 2 does not load Arrow; only Arrow paths need it
    import pyarrow.csv as pc  # heavy: pandas 2 does not load Arrow; only Arrow paths need it

    with open(p, encoding="utf-8-sig", newline="") as fh:
        try:
            header = next((f for f in csv.reader(fh) if f), None)
        except UnicodeDecodeError as exc:
            raise LogValidationError(f"{path}: the header is not UTF-8 text ({exc.reason}); expected UTF-8 CSV",
                                     file=str(path), expected="UTF-8 text") from None
    if not header:
        raise _empty(path, "csv")
    convert = pc.ConvertOptions(column_types={c: pa.string() for c in header}, strings_can_be_null=True,
                                null_values=[""], quoted_strings_can_be_null=True)
    try:
        table = pc.read_csv(str(p), parse_options=pc.ParseOptions(newlines_in_values=True),
                            convert_options=convert)
    except pa.ArrowInvalid:
        _refuse_ragged_rows(p, path, len(header))
        raise
    return _to_pandas(table)


def _refuse_ragged_rows(p: Path, path, width: int) -> None:
    """Raise for the first CSV record without the header's ``width`` fields (if there is one)."""
    for row, line, fields in _csv_records(p):
        if len(fields) != width:
            raise LogValidationError(
                f"{path}: data row {row} (line {line}) has {len(fields)} fields, expected {width} "
                f"(one per header column)", file=str(path), row=row, expected=f"{width} fields")


def _read_parquet(p: Path, columns) -> pd.DataFrame:
    """Every column of a Parquet file, as JSON lines and CSV keep theirs (``columns`` only types them:
    a log's extra columns, an ingested ``record_id`` or ``cwd``, must survive a round trip)."""
    import pyarrow.parquet as pq  # heavy: pandas 2 does not load Arrow; only Arrow paths need it

    return _to_pandas(pq.read_table(p))


def _decode_json_cells(col: pd.Series, path, column) -> pd.Series:
    vals = col.to_numpy(object)
    has = col.notna().to_numpy()
    out = np.full(len(vals), None, dtype=object)
    for i in np.flatnonzero(has):
        out[i] = _decode_json_cell(vals[i], path, int(i), column)
    return pd.Series(out, index=col.index, dtype=object)


def _decode_json_cell(value, path, row, column):
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    try:
        return json.loads(value)
    except (TypeError, ValueError, RecursionError):
        where = row_label({SOURCE: (str(path), "csv")}, [row])[row]
        raise LogValidationError(
            f"{path}: {where}, column {column!r}: expected JSON text (e.g. [\"a\", \"b\"]), got {value!r}",
            file=str(path), row=row, column=column, expected="JSON text") from None


def write_table(df: pd.DataFrame, path, *, fmt: str | None = None,
                json_columns: Iterable[str] = ()) -> Path:
    """Write a log atomically as JSONL, CSV or Parquet (chosen by suffix).

    Timestamps are written as ISO-8601 text with ``Z``; list/array cells as
    JSON arrays in JSONL and CSV. CSV quotes every text field (numbers are
    left bare), so any text reads back as written through :func:`read_table`:
    line breaks (``\\n``, ``\\r``, ``\\r\\n``), quotes, commas, leading and
    trailing spaces and NUL. An empty text reads back as null, as in every
    CSV file. The input frame is not modified.

    Parameters
    ----------
    df : pandas.DataFrame
        The log.
    path : str or path-like
        The file; written to a temporary file beside it, then moved into place.
    fmt : {"jsonl", "csv", "parquet"}, optional
        The format, when the suffix does not say it.
    json_columns : iterable of str, default=()
        Columns to write as JSON text in CSV (list cells are found anyway).

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    LogValidationError
        An unknown format, a lone surrogate in a text, or a value the format
        cannot hold (nothing is written then).

    See Also
    --------
    read_table : reads the file back.
    """
    fmt = log_format(path, fmt)
    p = Path(path)
    _refuse_surrogates(df, path)
    out = df.copy()
    for col in out.columns:
        if isinstance(out[col].dtype, pd.DatetimeTZDtype) and fmt != "parquet":
            out[col] = out[col].map(_iso_or_none)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    try:
        if fmt == "jsonl":
            with open(tmp, "w", encoding="utf-8") as fh:
                for rec in out.to_dict(orient="records"):
                    fh.write(json.dumps({k: _jsonable(v) for k, v in rec.items()},
                                        ensure_ascii=False, allow_nan=False) + "\n")
        elif fmt == "csv":
            auto = [c for c in out.columns
                    if out[c].map(lambda v: isinstance(v, (list, tuple, np.ndarray))).any()]
            for col in dict.fromkeys(list(json_columns) + auto):  # each column encoded once
                if col in out.columns:
                    out[col] = out[col].map(lambda v: None if _isnull(v) else json.dumps(_jsonable(v)))
            # every text field quoted, numbers bare: a lone \r (a line end to a CSV reader) stays text
            out.to_csv(tmp, index=False, quoting=csv.QUOTE_NONNUMERIC)
        else:
            out.to_parquet(tmp, index=False)
        os.replace(tmp, p)
    except (ValueError, TypeError, OverflowError) as exc:  # a value the format cannot hold
        raise LogValidationError(f"{path}: cannot write as {fmt} ({type(exc).__name__}: {_one_line(exc)})",
                                 file=str(path), expected=f"values a {fmt} file can hold") from None
    finally:
        if tmp.exists():
            tmp.unlink()
    return p


def _surrogate_free(v) -> bool:
    if isinstance(v, str):
        try:
            v.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    if isinstance(v, (list, tuple, np.ndarray)):
        return all(_surrogate_free(x) for x in v)
    return True


def surrogate_rows(col: pd.Series) -> np.ndarray:
    """Positions of the cells of ``col`` holding text that is not valid Unicode (a lone surrogate).

    Text read by pyarrow is always valid; Python objects are checked with one
    encode of the joined text, and cell by cell only when that fails.
    """
    if col.dtype != object or len(col) == 0:
        return np.zeros(0, dtype=np.int64)
    vals = col.to_numpy(object)
    flat = []
    for v in vals:
        if type(v) is str:
            flat.append(v)
        elif isinstance(v, (list, tuple, np.ndarray)):
            flat.extend(x for x in v if type(x) is str)
    try:
        "".join(flat).encode("utf-8")
        return np.zeros(0, dtype=np.int64)
    except UnicodeEncodeError:
        return np.array([i for i, v in enumerate(vals) if not _surrogate_free(v)], dtype=np.int64)


_SURROGATE = "valid Unicode text (no lone surrogate such as \\ud800)"


def _refuse_surrogates(df: pd.DataFrame, path) -> None:
    for col in df.columns:
        if not _surrogate_free(str(col)):
            raise LogValidationError(f"{path}: column name {col!r}: expected {_SURROGATE}",
                                     file=str(path), column=str(col), expected=_SURROGATE)
        bad = surrogate_rows(df[col])
        if len(bad):
            raise LogValidationError(
                f"{path}: row {int(bad[0])}, column {col!r}: expected {_SURROGATE}, got "
                f"{_show(df[col].iloc[int(bad[0])])}; nothing written",
                file=str(path), row=int(bad[0]), column=str(col), expected=_SURROGATE)


def _iso_or_none(v):
    if v is None or v is pd.NaT or pd.isna(v):
        return None
    return v.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _isnull(v) -> bool:
    if v is None or v is pd.NaT or v is pd.NA:
        return True
    return isinstance(v, (float, np.floating)) and bool(np.isnan(v))


def _jsonable(v):
    if isinstance(v, np.ndarray):
        return [_jsonable(x) for x in v.tolist()]
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return None if np.isnan(v) else float(v)
    if isinstance(v, float) and np.isnan(v):
        return None
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, pd.Timestamp):
        return _iso_or_none(v)
    if v is pd.NaT:
        return None
    return v

def _show(v) -> str:
    if _isnull(v) or (isinstance(v, np.floating) and np.isnan(v)):
        return "null"
    if isinstance(v, (np.generic,)):
        v = v.item()
    return repr(v)
