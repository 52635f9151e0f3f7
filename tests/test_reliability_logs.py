"""Malformed logs into every reader: every failure is a ThatchlabError, never a raw pandas error.

Hypothesis damages small valid logs taken from the bundled ``data/`` files —
dropped columns, cells of the wrong type, naive or unparsable timestamps,
junk bytes, truncated JSON lines, empty files, CSV without a header — and
feeds them to the file readers and to the ``validate_*`` functions. A log
that still looks valid may pass; anything else must raise a subclass of
:class:`thatchlab.core.errors.ThatchlabError`.
"""

import json
import math
import tempfile
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from thatchlab import logs
from thatchlab.core.errors import ThatchlabError

DATA = Path(__file__).resolve().parents[1] / "data"

#: reader, validator, sample file, its time columns
KINDS = {
    "interaction": (logs.read_interaction_log, logs.validate_interaction_log, "interactions.jsonl", ("ts",)),
    "memory": (logs.read_memory_log, logs.validate_memory_log, "memory_log.jsonl", ("ts", "valid_to")),
    "recall": (logs.read_recall_log, logs.validate_recall_log, "recall_log.jsonl", ("ts", "created_at")),
    "event": (logs.read_event_log, logs.validate_event_log, "events.jsonl", ("ts",)),
    "recall_stream": (logs.read_recall_stream, logs.validate_recall_stream, "recalls.jsonl", ("ts",)),
}
_ROWS: dict = {}

FAST = settings(max_examples=35, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def sample_rows(kind, n=8):
    """The first ``n`` rows of the bundled sample of ``kind`` (as JSON dicts)."""
    if kind not in _ROWS:
        with open(DATA / KINDS[kind][2], encoding="utf-8") as fh:
            _ROWS[kind] = [json.loads(next(fh)) for _ in range(n)]
    return [dict(r) for r in _ROWS[kind]]


def must_be_thatchlab(fn, *args):
    """Call ``fn``; pass if it returns or raises a ThatchlabError, fail on any other exception."""
    try:
        fn(*args)
    except ThatchlabError as exc:
        assert str(exc)  # a message naming the problem
    except Exception as exc:  # pragma: no cover - the failure this file hunts for
        pytest.fail(f"{fn.__name__} raised {type(exc).__name__}: {exc}")


junk_values = st.one_of(
    st.none(), st.booleans(), st.integers(-10**12, 10**12), st.just(10**30),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
    st.sampled_from(["2026-01-05T09:00:00", "2026-13-45T99:00:00Z", "yesterday", "", "NaT", "1e400",
                     "2026-01-05 09:00", "2026-01-05T09:00:00+02:00", "confirm", "true"]),
    st.lists(st.integers(0, 5), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@st.composite
def damaged_rows(draw, kind):
    rows = sample_rows(kind)
    cols = list(rows[0])
    rows = rows[: draw(st.integers(0, len(rows)))]
    dropped = draw(st.lists(st.sampled_from(cols), unique=True, max_size=len(cols)))
    for _ in range(draw(st.integers(0, 6))):
        if not rows:
            break
        r = draw(st.integers(0, len(rows) - 1))
        rows[r][draw(st.sampled_from(cols))] = draw(junk_values)
    for col in KINDS[kind][3]:
        if rows and draw(st.booleans()):
            r = draw(st.integers(0, len(rows) - 1))
            rows[r][col] = draw(st.sampled_from(["2026-01-05T09:00:00", "05/01/2026", "not a time",
                                                  "2026-02-30T00:00:00Z", 1767600000, None]))
    if draw(st.booleans()) and rows:
        rows[0]["extra_column"] = draw(junk_values)
    return [{k: v for k, v in r.items() if k not in dropped} for r in rows]


def _frame(rows):
    return pd.DataFrame.from_records(rows) if rows else pd.DataFrame()


def _jsonable(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


@pytest.mark.parametrize("kind", list(KINDS))
def test_validators_raise_only_thatchlab_errors(kind):
    validate = KINDS[kind][1]

    @FAST
    @given(rows=damaged_rows(kind), report=st.booleans())
    def check(rows, report):
        df = _frame(rows)
        if report:
            must_be_thatchlab(lambda d: validate(d, errors="report"), df)
        else:
            must_be_thatchlab(validate, df)

    check()


@pytest.mark.parametrize("kind", list(KINDS))
def test_readers_raise_only_thatchlab_errors_on_damaged_files(kind):
    read = KINDS[kind][0]

    @FAST
    @given(rows=damaged_rows(kind), fmt=st.sampled_from(["jsonl", "csv", "parquet"]))
    def check(rows, fmt):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / f"log.{fmt}"
            if fmt == "jsonl":
                path.write_text("".join(json.dumps({k: _jsonable(v) for k, v in r.items()}, default=str) + "\n"
                                        for r in rows), encoding="utf-8")
            elif fmt == "csv":
                _frame(rows).to_csv(path, index=False)
            else:
                df = _frame(rows)
                # parquet needs one type per column: store the damaged cells as text
                df = df.astype(object).map(lambda v: None if v is None else json.dumps(_jsonable(v), default=str)
                                           if isinstance(v, (list, dict)) else str(v))
                df.to_parquet(path, index=False)
            must_be_thatchlab(read, path)

    check()


def _good_jsonl(kind) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in sample_rows(kind)).encode()


def _good_csv(kind) -> bytes:
    return _frame(sample_rows(kind)).to_csv(index=False).encode()


@pytest.mark.parametrize("kind", list(KINDS))
def test_readers_raise_only_thatchlab_errors_on_broken_bytes(kind):
    read = KINDS[kind][0]

    @FAST
    @given(how=st.sampled_from(["junk", "truncate", "empty", "headerless", "splice", "blank"]),
           fmt=st.sampled_from(["jsonl", "csv", "parquet"]), junk=st.binary(min_size=1, max_size=64),
           cut=st.floats(0.0, 1.0))
    def check(how, fmt, junk, cut):
        good = _good_csv(kind) if fmt == "csv" else _good_jsonl(kind)
        if fmt == "parquet":
            buf = tempfile.SpooledTemporaryFile()
            _frame(sample_rows(kind)).astype(str).to_parquet(buf, index=False)
            buf.seek(0)
            good = buf.read()
        if how == "junk":
            data = junk
        elif how == "truncate":
            data = good[: int(len(good) * cut)]
        elif how == "empty":
            data = b""
        elif how == "blank":
            data = b"\n\n  \n"
        elif how == "headerless":
            data = b"\n".join(good.splitlines()[1:])
        else:
            pos = int(len(good) * cut)
            data = good[:pos] + junk + good[pos:]
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / f"log.{fmt}"
            path.write_bytes(data)
            must_be_thatchlab(read, path)

    check()


@pytest.mark.parametrize("kind", list(KINDS))
def test_missing_file_and_unknown_suffix(kind, tmp_path):
    read = KINDS[kind][0]
    with pytest.raises(ThatchlabError, match="no such file"):
        read(tmp_path / "absent.jsonl")
    (tmp_path / "log.txt").write_text("{}\n")
    with pytest.raises(ThatchlabError, match="suffix"):
        read(tmp_path / "log.txt")


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_undamaged_sample_still_reads(kind, tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(_good_jsonl(kind))
    assert len(KINDS[kind][0](path)) == 8


ODD_FRAMES = {
    "duplicate first column": lambda df: pd.concat([df, df[[df.columns[0]]]], axis=1),
    "duplicate second column": lambda df: pd.concat([df, df[[df.columns[1]]]], axis=1),
    "integer column names": lambda df: df.set_axis(range(df.shape[1]), axis=1),
    "not a frame": lambda df: df.to_dict("records"),
    "None": lambda df: None,
    "epoch seconds as ts": lambda df: df.assign(ts=1767600000),
    "naive datetime ts": lambda df: df.assign(ts=pd.Timestamp("2026-01-01")),
    "period ts": lambda df: df.assign(ts=pd.Period("2026-01")),
    "timedelta ts": lambda df: df.assign(ts=pd.Timedelta("1d")),
    "multi-index": lambda df: df.set_index([df.columns[0], df.columns[1]]),
    "repeated index": lambda df: df.set_axis([0] * len(df), axis=0),
    "all NaN": lambda df: df.map(lambda v: float("nan")),
    "bytes cells": lambda df: df.map(lambda v: b"\xff\xfe"),
    "huge integers": lambda df: df.map(lambda v: 10**30),
    "nested objects": lambda df: df.map(lambda v: {"a": [1]}),
    "no rows": lambda df: df.iloc[:0],
    "no columns": lambda df: df.iloc[:, :0],
}


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("damage", list(ODD_FRAMES))
def test_odd_frames_into_validators(kind, damage):
    frame = ODD_FRAMES[damage](_frame(sample_rows(kind, 5)))
    for errors in ("raise", "report"):
        must_be_thatchlab(lambda d, e=errors: KINDS[kind][1](d, errors=e), frame)


@pytest.mark.parametrize("kind", list(KINDS))
def test_duplicate_columns_name_the_column(kind):
    df = _frame(sample_rows(kind, 3))
    with pytest.raises(ThatchlabError, match="duplicate column"):
        KINDS[kind][1](pd.concat([df, df[["ts"]]], axis=1))
