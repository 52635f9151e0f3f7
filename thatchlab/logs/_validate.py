"""Validating long-format logs against their spec.

A :class:`LogSpec` says what one log kind must look like; :func:`validate_frame`
turns schema failures into :class:`~thatchlab.core.errors.LogValidationError`
naming file, row, column and what was expected, or, with ``errors="report"``,
returns the valid rows plus a table of rejected rows with reasons. Row numbers
are 0-based positions in the table as read; for a frame a reader made from a
JSONL or CSV file the message says so and gives the row's line as well
(``data row 3 (line 5)``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from thatchlab.core.dtypes import native_times, nonempty_text
from thatchlab.core.errors import LogValidationError
from thatchlab.core.frames import plain_columns
from thatchlab.core.time import TIME_RANGE
from thatchlab.logs._core import (
    _SURROGATE,
    _UTF8,
    ABSENT,
    SOURCE,
    _show,
    copy_frame,
    row_label,
    surrogate_rows,
)

__all__ = ["LogSpec", "RowRule", "validate_frame", "numbers_ok", "number_values", "missing_cells", "text_ok"]


@dataclass(frozen=True)
class RowRule:
    """A rule over whole rows: ``test(df)`` returns a boolean Series, True where
    the row is valid; failures are reported against ``column`` with ``expected``.

    Parameters
    ----------
    column : str
        The column a failure is reported against.
    expected : str
        What the row should have held, in words.
    test : callable
        ``test(df) -> pandas.Series`` of booleans; a rule that raises flags every row.
    """

    column: str
    expected: str
    test: Callable[[pd.DataFrame], pd.Series]


@dataclass(frozen=True)
class LogSpec:
    """What a log kind must look like.

    Parameters
    ----------
    name : str
        A label for messages ("interaction log"...).
    required : tuple of str
        Columns that must be present.
    optional : tuple of str, default=()
        Columns that may be absent (added as nulls).
    times : tuple of str, default=()
        Aware-timestamp columns (naive or unparsable values fail).
    schema : pandera.DataFrameSchema or None, default=None
        The value checks, applied after the time columns are parsed.
    rules : tuple of RowRule, default=()
        Row-level rules (kind-specific required fields and such).

    See Also
    --------
    validate_frame : applies a spec.
    """

    name: str
    required: tuple[str, ...]
    optional: tuple[str, ...] = ()
    times: tuple[str, ...] = ()
    schema: object = None
    rules: tuple[RowRule, ...] = field(default_factory=tuple)


def validate_frame(df: pd.DataFrame, spec: LogSpec, *, source=None, errors: str = "raise", copy: bool = True):
    """Validate ``df`` against ``spec``.

    Returns the validated copy (time columns as ``datetime64[ns, UTC]``,
    optional columns added as nulls) with ``errors="raise"``, or the tuple
    ``(valid_rows, rejected)`` with ``errors="report"``, where ``rejected``
    holds the offending original rows plus ``row``, ``column`` and ``reason``.
    The input is never modified.

    Parameters
    ----------
    df : pandas.DataFrame
        The log as read.
    spec : LogSpec
        What the log kind must look like.
    source : str, optional
        The file the frame came from, named in the messages.
    errors : {"raise", "report"}, default="raise"
        Fail on the first problem, or report the rejected rows.
    copy : bool, default=True
        ``False`` is for callers that build their result from new arrays
        anyway: the returned frame then shares the input's column arrays
        (columns are replaced in it, never written into).

    Returns
    -------
    pandas.DataFrame or tuple of pandas.DataFrame
        The validated frame, or ``(valid_rows, rejected)`` with ``errors="report"``.

    Raises
    ------
    LogValidationError
        ``df`` is not a frame, repeats a column or lacks a required one; with
        ``errors="raise"``, any bad value (the first one named, the others counted).
    ValueError
        ``errors`` is neither ``"raise"`` nor ``"report"``.
    """
    if errors not in ("raise", "report"):
        raise ValueError("errors must be 'raise' or 'report'")
    where = f"{source}: " if source is not None else ""
    _check_columns(df, spec, where, source)
    df = plain_columns(df)   # Arrow null columns as None, view text as large_string
    absent = {c for c in spec.optional if c not in df.columns} | set(df.attrs.get(ABSENT, ()))
    out = _working_copy(df, spec, copy)
    failures = _cell_failures(df, out, spec)
    if spec.schema is not None:
        failures.extend(_pandera_failures(out, spec.schema))
    failures.extend(_rule_failures(out, spec.rules))
    if not failures:
        return out if errors == "raise" else (out, _empty_rejected(df))
    table = _failure_table(failures)
    if errors == "raise":
        _raise_first(table, df, absent, f"{where}{spec.name}", source)
    return _split_rejected(df, out, table)


def _check_columns(df, spec: LogSpec, where: str, source) -> None:
    """Raise unless ``df`` is a frame with each column once and every required column present."""
    label = spec.name
    if not isinstance(df, pd.DataFrame):
        raise LogValidationError(f"{where}{label}: expected a pandas DataFrame, got {type(df).__name__}",
                                 file=source)
    dup = df.columns[df.columns.duplicated()].unique().tolist()
    if dup:
        raise LogValidationError(f"{where}{label}: duplicate column name(s) {dup}; expected each column once",
                                 file=source, column=str(dup[0]), expected="unique column names")
    missing = [c for c in spec.required if c not in df.columns]
    if missing:
        raise LogValidationError(
            f"{where}{label}: missing column(s) {missing}; expected columns {list(spec.required)}",
            file=source, column=missing[0], expected=f"columns {list(spec.required)}")


def _working_copy(df: pd.DataFrame, spec: LogSpec, copy: bool) -> pd.DataFrame:
    """The frame to validate: positions as index, no reader bookkeeping, optional columns added as nulls."""
    out = copy_frame(df, deep=copy)
    out.index = pd.RangeIndex(len(out))
    out.attrs.pop(SOURCE, None)  # its rows may be dropped or reordered later: lines would not match
    out.attrs.pop(ABSENT, None)
    for col in spec.optional:
        if col not in out.columns:
            out[col] = None
    return out


def _cell_failures(df: pd.DataFrame, out: pd.DataFrame, spec: LogSpec) -> list:
    """Lone surrogates in any text, then unusable times; parses ``spec.times`` in ``out`` as it goes."""
    failures: list[tuple[int, str, object, str]] = []
    for col in out.columns if not df.attrs.get(_UTF8, False) else ():
        bad = surrogate_rows(out[col])
        failures.extend((int(i), col, out[col].iloc[int(i)], _SURROGATE) for i in bad)
    for col in spec.times:
        if col not in out.columns:
            continue
        parsed, bad = _parse_times(out[col])
        failures.extend((i, col, out[col].iloc[i], why) for i, why in bad)
        out[col] = parsed
    return failures


def _rule_failures(out: pd.DataFrame, rules) -> list:
    """``(row, column, value, expected)`` of every row a row rule rejects."""
    failures = []
    for rule in rules:
        try:
            ok = rule.test(out)
        except Exception:  # a rule that cannot evaluate flags every row
            ok = pd.Series(False, index=out.index)
        ok = pd.Series(ok, index=out.index)
        if isinstance(ok.dtype, pd.CategoricalDtype):  # a rule mapped a categorical column: its categories
            ok = ok.astype(object)                      # may lack False (or be none at all, on 0 rows)
        ok = ok.fillna(False).astype(bool)
        for i in np.flatnonzero(~ok.to_numpy()):
            val = out[rule.column].iloc[i] if rule.column in out.columns else None
            failures.append((int(i), rule.column, val, rule.expected))
    return failures


def _failure_table(failures: list) -> pd.DataFrame:
    """One row per failing (row, column), in row order: ``row``, ``column``, ``value``, ``expected``."""
    rows, cols, values, expected = zip(*failures)  # text as object on any pandas: str cannot hold a
    return (pd.DataFrame({"row": list(rows), "column": pd.Series(cols, dtype=object),  # lone surrogate
                          "value": pd.Series(values, dtype=object), "expected": pd.Series(expected, dtype=object)})
            .drop_duplicates(subset=["row", "column"]).sort_values(["row"], kind="stable")
            .reset_index(drop=True))


def _raise_first(table: pd.DataFrame, df: pd.DataFrame, absent: set, what: str, source) -> None:
    """Raise the error of the first failure (or of a column the source lacks), counting the rest."""
    needs = table[table["column"].isin(absent) & table["value"].isna()]
    if len(needs):  # a column the source lacks: say so, not "got null" per row
        col = needs["column"].iloc[0]
        rows = needs.loc[needs["column"] == col, "row"].astype(int).tolist()
        others = len(table) - len(rows)
        more = f" ({others} more problem(s))" if others else ""
        raise LogValidationError(
            f"{what}: missing column {col!r}: {len(rows)} row(s) need it, the first "
            f"{row_label(df.attrs, [rows[0]])[rows[0]]}: expected {needs['expected'].iloc[0]}{more}",
            file=source, row=rows[0], column=col, expected=f"a column {col!r}", failures=table)
    first = table.iloc[0]
    more = f" ({len(table) - 1} more problem(s))" if len(table) > 1 else ""
    raise LogValidationError(
        f"{what}: {row_label(df.attrs, [first['row']])[int(first['row'])]}, column {first['column']!r}: "
        f"expected {first['expected']}, got {_show(first['value'])}{more}",
        file=source, row=int(first["row"]), column=first["column"], expected=first["expected"],
        failures=table)


def _split_rejected(df: pd.DataFrame, out: pd.DataFrame, table: pd.DataFrame):
    """``(valid_rows, rejected)``: the rows without failures, and the original rows with their reasons."""
    bad_rows = sorted(set(table["row"].astype(int)))
    reasons = table.groupby("row", sort=True).apply(
        lambda g: "; ".join(f"{c}: expected {e}, got {_show(v)}" for c, e, v in
                            zip(g["column"], g["expected"], g["value"])), include_groups=False)
    rejected = df.reset_index(drop=True).iloc[bad_rows].copy()
    rejected.insert(0, "row", bad_rows)
    rejected["column"] = table.groupby("row", sort=True)["column"].first().to_numpy()
    rejected["reason"] = reasons.to_numpy()
    valid = out.drop(index=bad_rows).reset_index(drop=True)
    return valid, rejected.reset_index(drop=True)


def _empty_rejected(df):
    r = df.iloc[0:0].copy()
    r.insert(0, "row", pd.Series(dtype="int64"))
    r["column"] = pd.Series(dtype=object)
    r["reason"] = pd.Series(dtype=object)
    return r


_TIME = "a timezone-aware ISO-8601 time (e.g. 2026-01-01T09:00:00Z)"
_IN_RANGE = f"a time within the supported range {TIME_RANGE} (pandas' nanosecond timestamps)"
_LO, _HI = pd.Timestamp.min.tz_localize("UTC"), pd.Timestamp.max.tz_localize("UTC")
_AWARE = r"[T ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?\s*(?:[zZ]|[+-]\d\d(?::?\d\d)?)\s*$"  # a time, then an offset


def _parse_times(col: pd.Series):
    """``(parsed, bad)``: the column as ``datetime64[ns, UTC]`` and ``(row, expected)`` of each unusable value.

    ISO text with an offset is parsed in one vectorised pass; only the values
    that pass misses are looked at one by one (other spellings pandas reads,
    naive times, times outside the nanosecond range).
    """
    n = len(col)
    col = native_times(col)         # Arrow timestamps: pandas' own, no pass per row
    if isinstance(col.dtype, pd.DatetimeTZDtype) or pd.api.types.is_datetime64_dtype(col.dtype):
        naive = not isinstance(col.dtype, pd.DatetimeTZDtype)
        present = col.notna().to_numpy()
        if naive:
            bad = [(int(i), _TIME) for i in np.flatnonzero(present)]
            return pd.Series(pd.NaT, index=col.index, dtype="datetime64[ns, UTC]"), bad
        utc = col.dt.tz_convert("UTC")
        out_of_range = present & ((utc < _LO) | (utc > _HI)).to_numpy()
        if out_of_range.any():
            utc = utc.where(~out_of_range)
        return utc.dt.as_unit("ns"), [(int(i), _IN_RANGE) for i in np.flatnonzero(out_of_range)]
    vals = col.to_numpy(object)
    is_str = np.fromiter((type(v) is str for v in vals), dtype=bool, count=n)
    parsed = np.full(n, np.datetime64("NaT", "ns"), dtype="datetime64[ns]")  # UTC wall times
    if is_str.any():
        import pyarrow as pa  # heavy: pandas 2 does not load Arrow; only Arrow paths need it
        import pyarrow.compute as pc  # heavy: pandas 2 does not load Arrow; only Arrow paths need it

        text = pd.Series(vals[is_str], dtype=object)
        try:  # pyarrow's regex engine is several times faster than Python's
            aware = pc.match_substring_regex(pa.array(vals[is_str], type=pa.string()), _AWARE)
            aware = aware.to_numpy(zero_copy_only=False).astype(bool)
        except (pa.ArrowException, UnicodeError):  # text pyarrow cannot hold (a lone surrogate)
            aware = text.str.contains(_AWARE, regex=True).to_numpy(dtype=bool)
        got = pd.to_datetime(text.where(aware), format="ISO8601", utc=True, errors="coerce")
        # pandas 3 parses beyond the nanosecond range (to a coarser unit): those are looked at one by one
        got = got.where((got >= _LO) & (got <= _HI))
        parsed[is_str] = got.dt.tz_localize(None).dt.as_unit("ns").to_numpy()
    present = col.notna().to_numpy()
    bad = []
    for i in np.flatnonzero(present & np.isnat(parsed)):
        ts, why = _one_time(vals[i])
        if ts is None:
            bad.append((int(i), why))
        else:
            parsed[i] = ts.tz_localize(None).to_datetime64()
    return pd.Series(parsed, index=col.index).dt.tz_localize("UTC"), bad


def _one_time(v):
    """A value the vectorised pass missed: ``(Timestamp, None)`` or ``(None, expected)``."""
    if isinstance(v, (bool, np.bool_, int, float, np.integer, np.floating)):
        return None, _TIME + " (not an epoch number, which is ambiguous)"
    try:
        ts = pd.Timestamp(v)
    except pd.errors.OutOfBoundsDatetime:
        return None, _IN_RANGE
    except (TypeError, ValueError, OverflowError):
        return None, _TIME
    if ts is pd.NaT or pd.isna(ts) or ts.tzinfo is None:
        return None, _TIME
    ts = ts.tz_convert("UTC")
    if ts < _LO or ts > _HI:
        return None, _IN_RANGE
    return ts.as_unit("ns"), None


def number_values(s: pd.Series):
    """``(values, is_number)`` of a column: float64 values (NaN where not a number) and a mask
    of the cells holding a number. Booleans are not numbers; text is a number
    when it reads as one (a CSV cell)."""
    n = len(s)
    if pd.api.types.is_bool_dtype(s.dtype):
        return np.full(n, np.nan), np.zeros(n, dtype=bool)
    if pd.api.types.is_numeric_dtype(s.dtype):
        vals = s.astype("float64").to_numpy(dtype="float64", na_value=np.nan)
        return vals, ~np.isnan(vals)
    obj = s.to_numpy(object)
    if pd.api.types.infer_dtype(obj, skipna=True) in ("floating", "empty"):  # floats and nulls only
        vals = np.full(n, np.nan)
        null = pd.isna(obj)
        vals[~null] = obj[~null].astype(np.float64)
        return vals, ~np.isnan(vals)
    is_bool = np.fromiter((isinstance(v, (bool, np.bool_)) for v in obj), dtype=bool, count=n)
    cand = obj.copy()
    cand[is_bool] = None
    vals = pd.to_numeric(pd.Series(cand, dtype=object), errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
    return vals, ~np.isnan(vals)


def missing_cells(s: pd.Series, isnull) -> np.ndarray:
    """Per cell, whether it is missing: ``isnull`` asked of each cell of an object column (a log's
    own idea of null), pandas' missing values of any other column (the only ones it can hold)."""
    if s.dtype == object:
        return np.fromiter((bool(isnull(v)) for v in s.to_numpy(object)), dtype=bool, count=len(s))
    return s.isna().to_numpy(bool)


def text_ok(s: pd.Series, *, nullable: bool = False, isnull=None) -> np.ndarray:
    """Per cell, a non-empty ``str`` (or, when ``nullable``, a missing cell as ``isnull`` sees it).

    Text dtypes (``string``, Arrow text, categoricals) are judged by their distinct values in one
    vectorised pass; an object column a cell at a time."""
    ok = nonempty_text(s)
    return ok | missing_cells(s, isnull) if nullable else ok


def numbers_ok(s: pd.Series, *, whole: bool = False, low=None, high=None, nullable: bool = True,
               finite: bool = True) -> pd.Series:
    """True where a cell is a number meeting the conditions (or null when ``nullable``).

    ``whole`` asks for a whole number that fits int64 (so ``1e308``, ``inf``
    and integers beyond 2**63 fail); ``low``/``high`` are inclusive bounds.
    """
    vals, is_num = number_values(s)
    ok = is_num.copy()
    with np.errstate(invalid="ignore"):
        if finite or whole:
            ok &= np.isfinite(vals)
        if whole:
            ok &= (vals == np.floor(vals)) & (vals >= -(2.0 ** 63)) & (vals < 2.0 ** 63)
        if low is not None:
            ok &= vals >= low
        if high is not None:
            ok &= vals <= high
    if nullable:
        ok |= s.isna().to_numpy()
    return pd.Series(ok, index=s.index)


def _pandera_failures(df: pd.DataFrame, schema) -> list:
    import pandera.pandas as pa  # heavy: pandera adds ~0.5 s to import; only value checks need it

    try:
        with warnings.catch_warnings():  # pandera's own use of a pandas deprecation, not the user's concern
            warnings.simplefilter("ignore", FutureWarning)
            schema.validate(df, lazy=True)
        return []
    except pa.errors.SchemaErrors as exc:
        fc = exc.failure_cases
    except pa.errors.SchemaError as exc:  # pragma: no cover - lazy mode collects
        return [(0, getattr(exc, "column_name", None) or "?", None, str(exc))]
    out = []
    seen_cols = set()
    for rec in fc.to_dict(orient="records"):
        idx = rec.get("index")
        col = rec.get("column")
        check = str(rec.get("check"))
        if idx is None or (isinstance(idx, float) and np.isnan(idx)):
            # a column-level failure without a row (e.g. a check that raised
            # after a failed coercion); report it only if nothing row-level is known
            seen_cols.add((col, check))
            continue
        expected = _expected_text(check)
        out.append((int(idx), col if col is not None else "?", rec.get("failure_case"), expected))
    if not out and seen_cols:
        col, check = sorted(seen_cols, key=str)[0]
        out.append((0, col or "?", None, _expected_text(check)))
    return out


def _expected_text(check: str) -> str:
    if check.startswith("coerce_dtype(") or check.startswith("dtype("):
        inner = check.split("(", 1)[1].rstrip(")").strip("'")
        return {"float64": "a number", "int64": "an integer", "bool": "true or false",
                "str": "text", "object": "a value"}.get(inner, f"type {inner}")
    if check == "not_nullable":
        return "a value (not null)"
    return check
