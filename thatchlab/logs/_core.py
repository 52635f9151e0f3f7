"""Reading, writing and validating long-format logs.

Every log kind (interaction, memory, recall, event/recall streams) is a
pandas DataFrame with one row per event. This module holds what they share:
format detection (JSONL, CSV, Parquet), the validation pass that turns schema
failures into :class:`~thatchlab.core.errors.LogValidationError` naming file, row,
column and what was expected, and the ``errors="report"`` mode that returns
the valid rows plus a table of rejected rows with reasons.

Row numbers are 0-based positions in the table as read (for a JSONL file,
row ``r`` is line ``r + 1``; for a CSV file, line ``r + 2`` after the header).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import numpy as np
import pandas as pd

from thatchlab.core.errors import LogValidationError

__all__ = ["read_table", "write_table", "LogSpec", "RowRule", "validate_frame", "log_format"]

_FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".csv": "csv",
            ".parquet": "parquet", ".pq": "parquet"}


def log_format(path, fmt: str | None = None) -> str:
    """The log format of ``path`` from its suffix (or ``fmt`` when given)."""
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


def read_table(path, *, fmt: str | None = None, json_columns: Iterable[str] = ()) -> pd.DataFrame:
    """Read a JSONL, CSV or Parquet file into a DataFrame (no validation).

    ``json_columns`` name CSV columns that hold JSON text (lists) to decode.
    A missing or unreadable file raises :class:`LogValidationError`.
    """
    fmt = log_format(path, fmt)
    p = Path(path)
    if not p.is_file():
        raise LogValidationError(f"{path}: no such file", file=str(path))
    try:
        if fmt == "jsonl":
            rows = []
            with open(p, encoding="utf-8") as fh:
                for lineno, line in enumerate(fh, start=1):
                    if not line.strip():
                        continue
                    try:
                        obj = json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise LogValidationError(
                            f"{path}: line {lineno} (row {len(rows)}): not valid JSON ({exc.msg}); "
                            "expected one JSON object per line",
                            file=str(path), row=len(rows), expected="one JSON object per line") from None
                    if not isinstance(obj, dict):
                        raise LogValidationError(
                            f"{path}: line {lineno} (row {len(rows)}): expected a JSON object, "
                            f"got {type(obj).__name__}", file=str(path), row=len(rows),
                            expected="a JSON object")
                    rows.append(obj)
            df = pd.DataFrame.from_records(rows)
        elif fmt == "csv":
            df = pd.read_csv(p, dtype=str, keep_default_na=False, na_values=[""])
            for col in json_columns:
                if col in df.columns:
                    df[col] = [_decode_json_cell(v, path, i, col) for i, v in enumerate(df[col])]
        else:
            df = pd.read_parquet(p)
    except LogValidationError:
        raise
    except Exception as exc:  # pandas/pyarrow parse errors of many kinds
        raise LogValidationError(f"{path}: cannot read as {fmt} ({type(exc).__name__}: {exc})",
                                 file=str(path), expected=f"a {fmt} file") from None
    return df.reset_index(drop=True)


def _decode_json_cell(value, path, row, column):
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    try:
        return json.loads(value)
    except (TypeError, json.JSONDecodeError):
        raise LogValidationError(
            f"{path}: row {row}, column {column!r}: expected JSON text (e.g. [\"a\", \"b\"]), got {value!r}",
            file=str(path), row=row, column=column, expected="JSON text") from None


def write_table(df: pd.DataFrame, path, *, fmt: str | None = None,
                json_columns: Iterable[str] = ()) -> Path:
    """Write a log atomically as JSONL, CSV or Parquet (chosen by suffix).

    Timestamps are written as ISO-8601 text with ``Z``; list/array cells as
    JSON arrays in JSONL and CSV. The input frame is not modified.
    """
    fmt = log_format(path, fmt)
    p = Path(path)
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
            out.to_csv(tmp, index=False)
        else:
            out.to_parquet(tmp, index=False)
        os.replace(tmp, p)
    finally:
        if tmp.exists():
            tmp.unlink()
    return p


def _iso_or_none(v):
    if v is None or v is pd.NaT or pd.isna(v):
        return None
    return v.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _isnull(v) -> bool:
    if v is None:
        return True
    if isinstance(v, float) and np.isnan(v):
        return True
    return v is pd.NaT


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


@dataclass(frozen=True)
class RowRule:
    """A rule over whole rows: ``test(df)`` returns a boolean Series, True where
    the row is valid; failures are reported against ``column`` with ``expected``."""

    column: str
    expected: str
    test: Callable[[pd.DataFrame], pd.Series]


@dataclass(frozen=True)
class LogSpec:
    """What a log kind must look like.

    Attributes
    ----------
    name : a label for messages ("interaction log"...).
    required : columns that must be present.
    optional : columns that may be absent (added as nulls).
    times : aware-timestamp columns (naive or unparsable values fail).
    schema : a pandera ``DataFrameSchema`` for the value checks, applied after
        the time columns are parsed; may be ``None``.
    rules : row-level rules (kind-specific required fields and such).
    """

    name: str
    required: tuple[str, ...]
    optional: tuple[str, ...] = ()
    times: tuple[str, ...] = ()
    schema: object = None
    rules: tuple[RowRule, ...] = field(default_factory=tuple)


def validate_frame(df: pd.DataFrame, spec: LogSpec, *, source=None, errors: str = "raise"):
    """Validate ``df`` against ``spec``.

    Returns the validated copy (time columns as ``datetime64[ns, UTC]``,
    optional columns added as nulls) with ``errors="raise"``, or the tuple
    ``(valid_rows, rejected)`` with ``errors="report"``, where ``rejected``
    holds the offending original rows plus ``row``, ``column`` and ``reason``.
    The input is never modified.
    """
    if errors not in ("raise", "report"):
        raise ValueError("errors must be 'raise' or 'report'")
    where = f"{source}: " if source is not None else ""
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
    out = df.copy().reset_index(drop=True)
    for col in spec.optional:
        if col not in out.columns:
            out[col] = None
    failures: list[tuple[int, str, object, str]] = []

    for col in spec.times:
        if col not in out.columns:
            continue
        parsed, bad = _parse_times(out[col])
        for i in bad:
            failures.append((i, col, out[col].iloc[i], "a timezone-aware ISO-8601 time (e.g. 2026-01-01T09:00:00Z)"))
        out[col] = parsed

    if spec.schema is not None:
        failures.extend(_pandera_failures(out, spec.schema))

    for rule in spec.rules:
        try:
            ok = rule.test(out)
        except Exception:  # a rule that cannot evaluate flags every row
            ok = pd.Series(False, index=out.index)
        ok = pd.Series(ok, index=out.index).fillna(False).astype(bool)
        for i in np.flatnonzero(~ok.to_numpy()):
            val = out[rule.column].iloc[i] if rule.column in out.columns else None
            failures.append((int(i), rule.column, val, rule.expected))

    if not failures:
        return out if errors == "raise" else (out, _empty_rejected(df))

    table = (pd.DataFrame(failures, columns=["row", "column", "value", "expected"])
             .drop_duplicates(subset=["row", "column"]).sort_values(["row"], kind="stable")
             .reset_index(drop=True))
    if errors == "raise":
        first = table.iloc[0]
        more = f" ({len(table) - 1} more problem(s))" if len(table) > 1 else ""
        raise LogValidationError(
            f"{where}{label}: row {int(first['row'])}, column {first['column']!r}: "
            f"expected {first['expected']}, got {_show(first['value'])}{more}",
            file=source, row=int(first["row"]), column=first["column"], expected=first["expected"],
            failures=table)
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


def _show(v) -> str:
    if _isnull(v) or (isinstance(v, np.floating) and np.isnan(v)):
        return "null"
    if isinstance(v, (np.generic,)):
        v = v.item()
    return repr(v)


def _empty_rejected(df):
    r = df.iloc[0:0].copy()
    r.insert(0, "row", pd.Series(dtype="int64"))
    r["column"] = pd.Series(dtype=object)
    r["reason"] = pd.Series(dtype=object)
    return r


def _parse_times(col: pd.Series):
    if isinstance(col.dtype, pd.DatetimeTZDtype):
        return col.dt.tz_convert("UTC").dt.as_unit("ns"), []
    if pd.api.types.is_datetime64_dtype(col.dtype):
        bad = [i for i, v in enumerate(col) if not pd.isna(v)]
        return pd.Series(pd.NaT, index=col.index, dtype="datetime64[ns, UTC]"), bad
    values, bad = [], []
    for i, v in enumerate(col.tolist()):
        if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NaT:
            values.append(pd.NaT)
            continue
        try:
            if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
                raise ValueError("epoch numbers are ambiguous")
            ts = pd.Timestamp(v)
            if ts is pd.NaT or ts.tzinfo is None:
                raise ValueError("naive")
            values.append(ts.tz_convert("UTC"))
        except (TypeError, ValueError):
            values.append(pd.NaT)
            bad.append(i)
    return pd.Series(pd.to_datetime(values, utc=True), index=col.index).dt.as_unit("ns"), bad


def _pandera_failures(df: pd.DataFrame, schema) -> list:
    import pandera.pandas as pa  # lazy: pandera is slow to import

    try:
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
