"""Fuzzed logs into every reader and every verb: a typed error or success, never another exception.

Rows are built from the columns a log kind knows plus odd values (huge,
non-finite and boolean numbers, times outside pandas' range or without an
offset, lone surrogates, NUL bytes, lists, objects), with columns dropped or
added, and written as JSON lines or CSV (sometimes empty, with a BOM, or
with blank lines). The command line runs in-process through typer's
``CliRunner``: exit 0, or exit 2 with exactly one ``error:`` line.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from thatchlab import logs
from thatchlab.core.errors import ThatchlabError

DATA = Path(__file__).resolve().parents[1] / "data"
SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

TIMES = st.sampled_from(["2026-01-01T09:00:00Z", "2026-01-02T10:30:00.5+02:00", "2026-01-01T09:00:00",
                         "9999-12-31T23:59:59Z", "0001-01-01T00:00:00Z", "1677-09-21T00:00:00Z", "2026-13-45",
                         "", "now", "2026-01-03"])
TEXT = st.text(alphabet=st.characters(codec=None, categories=None), max_size=6) | st.sampled_from(
    ["a", "m1", "\x00", "x\x00y", "\ud800", "tea\udfff", " ", "write", "read", "message", "prediction_update",
     "confirm", "preference", "user", "true", "1", "NaN", "Infinity"])
NUMBER = (st.integers(-(2 ** 70), 2 ** 70) | st.floats(allow_nan=True, allow_infinity=True)
          | st.sampled_from([0, 1, 2, 0.5, 1e308, -1e308, 2 ** 63, 2 ** 63 - 1, -(2 ** 63) - 1]))
VALUE = st.none() | st.booleans() | NUMBER | TEXT | TIMES | st.lists(TEXT | NUMBER, max_size=3) | st.just({"a": 1})

KINDS = {
    "interaction": (logs.read_interaction_log, ("ts", "session", "kind", "store", "text", "matcher", "statement",
                                               "signal", "relevant", "rationale", "propensity", "surfaced",
                                               "embedding")),
    "memory": (logs.read_memory_log, logs.MEMORY_LOG_COLUMNS),
    "recall": (logs.read_recall_log, logs.RECALL_COLUMNS),
    "events": (logs.read_event_log, ("ts", "workspace", "session", "name", "entities")),
    "recalls": (logs.read_recall_stream, ("ts", "workspace", "session", "fact_id", "entities")),
}


def _value_for(col):
    if col in ("ts", "created_at", "valid_to"):
        return TIMES | VALUE
    return VALUE


@st.composite
def rows(draw, columns):
    keep = draw(st.lists(st.sampled_from(columns), unique=True, min_size=0, max_size=len(columns)))
    if draw(st.booleans()):
        keep = list(columns)  # most files have every column: reach the value checks
    extra = draw(st.sampled_from([[], ["extra"], ["\ud800col"]]))
    n = draw(st.integers(0, 4))
    return [{c: draw(_value_for(c)) for c in keep + extra} for _ in range(n)]


@st.composite
def log_bytes(draw, columns):
    """``(suffix, bytes)`` of a JSON-lines or CSV file of odd rows."""
    recs = draw(rows(columns))
    suffix = draw(st.sampled_from([".jsonl", ".csv"]))
    if suffix == ".jsonl":
        text = "".join(json.dumps(r, ensure_ascii=True) + "\n" for r in recs)  # surrogates as \\udXXX escapes
        if draw(st.booleans()):
            text = text.replace("\n", "\n\n", 1)
    else:
        cols = list(dict.fromkeys(c for r in recs for c in r))
        buf = io.StringIO()
        w = csv.writer(buf)
        if cols:
            w.writerow(cols)
        for r in recs:
            w.writerow(["" if r.get(c) is None else json.dumps(r[c]) if isinstance(r.get(c), (list, dict))
                        else str(r[c]) for c in cols])
        text = buf.getvalue()
    data = text.encode("utf-8", "surrogatepass")
    if draw(st.integers(0, 5)) == 0:
        data = b"\xef\xbb\xbf" + data
    if draw(st.integers(0, 7)) == 0:
        data = data[: draw(st.integers(0, len(data)))]
    return suffix, data


def _read_or_typed_error(reader, path):
    """A reader either returns a validated DataFrame or raises a typed error naming the file."""
    try:
        out = reader(path)
    except ThatchlabError as exc:
        assert str(path.name) in str(exc), exc
        return None
    assert isinstance(out, pd.DataFrame)
    return out


@pytest.mark.parametrize("kind", list(KINDS))
def test_readers_give_a_frame_or_a_typed_error(kind, tmp_path):
    reader, columns = KINDS[kind]

    @SETTINGS
    @given(log_bytes(columns))
    def check(case):
        suffix, data = case
        path = tmp_path / f"log{suffix}"
        path.write_bytes(data)
        _read_or_typed_error(reader, path)

    check()


@pytest.mark.parametrize("kind", list(KINDS))
def test_parquet_of_odd_values(kind, tmp_path):
    import pandas as pd

    reader, columns = KINDS[kind]

    @settings(max_examples=20, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(rows(columns))
    def check(recs):
        try:  # pyarrow stores only columns of one type: coerce mixed ones to text
            df = pd.DataFrame(recs)  # pandas 3 infers str names and values: a lone surrogate fails here
            df = df.astype({c: str for c in df.columns if df[c].map(type).nunique() > 1})
            df.to_parquet(tmp_path / "log.parquet", index=False)
        except Exception:  # values Parquet cannot hold are not a reader's concern
            return
        _read_or_typed_error(reader, tmp_path / "log.parquet")

    check()


# ----------------------------------------------------------------------------------- the verbs
def _invoke(argv):
    from typer.testing import CliRunner

    from thatchlab.cli import app

    res = CliRunner().invoke(app, argv)
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise res.exception
    assert res.exit_code in (0, 2), (argv, res.exit_code, res.output)
    if res.exit_code == 2:
        lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: "), (argv, res.stderr)
    return res


@pytest.fixture(scope="module")
def lookup(tmp_path_factory):
    import numpy as np
    import pandas as pd

    texts = ["a", "m1", "write", "help me", "tea", "\x00", "x\x00y"]
    path = tmp_path_factory.mktemp("fuzz") / "lookup.parquet"
    pd.DataFrame({"text": texts, "embedding": list(np.random.default_rng(0).normal(size=(len(texts), 4)))}
                 ).to_parquet(path, index=False)
    return path


VERB_ARGS = {
    "replay-belief": ("memory", lambda p, tmp, lk: ["replay", str(p), "--engine", "belief",
                                                    "--events-out", str(tmp / "e.csv")]),
    "replay-calibration": ("recall", lambda p, tmp, lk: ["replay", str(p), "--engine", "calibration",
                                                         "--metrics-out", str(tmp / "m.json")]),
    "replay-prediction": ("interaction", lambda p, tmp, lk: ["replay", str(p), "--engine", "prediction",
                                                             "--lookup", str(lk)]),
    "replay-anticipation": ("events", lambda p, tmp, lk: ["replay", str(p), "--engine", "anticipation",
                                                          "--recalls", str(DATA / "recalls.jsonl")]),
    "sweep-belief": ("memory", lambda p, tmp, lk: ["sweep", str(p), "--engine", "belief", "--space",
                                                   '{"state": [5, 10]}', "--metric", "auc"]),
    "fit-halflife": ("memory", lambda p, tmp, lk: ["fit", "halflife", str(p), "--out", str(tmp / "h.json")]),
    "fit-derive": ("recall", lambda p, tmp, lk: ["fit", "derive", str(p)]),
    "fit-prior": ("interaction", lambda p, tmp, lk: ["fit", "prior", str(p), "--lookup", str(lk)]),
    "calibrate": ("recall", lambda p, tmp, lk: ["calibrate", str(p), "--json"]),
    "mine": ("recalls", lambda p, tmp, lk: ["mine", str(DATA / "events.jsonl"), str(p), "--out",
                                            str(tmp / "p.parquet")]),
    "export": ("interaction", lambda p, tmp, lk: ["export", str(p), "--engine", "behavior", "--out",
                                                  str(tmp / "x.db"), "--lookup", str(lk), "--overwrite"]),
    "import": (None, lambda p, tmp, lk: ["import", str(p)]),
    "merge": (None, lambda p, tmp, lk: ["merge", str(p), str(tmp / "prod.db")]),
}


@pytest.mark.parametrize("verb", list(VERB_ARGS))
def test_verbs_exit_0_or_2_with_one_error_line(verb, tmp_path, lookup):
    kind, argv = VERB_ARGS[verb]
    columns = KINDS[kind][1] if kind else ("ts", "memory_id")

    @settings(max_examples=30, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(log_bytes(columns), st.booleans())
    def check(case, sqlite_header):
        suffix, data = case
        if kind is None:  # a store verb: bytes that may start like SQLite
            suffix, data = ".db", (b"SQLite format 3\x00" if sqlite_header else b"") + data
        path = tmp_path / f"in{suffix}"
        path.write_bytes(data)
        _invoke(argv(path, tmp_path, lookup))

    check()


@SETTINGS
@given(kind=st.sampled_from(["preference", "behavior", "belief", "recall", "patterns", "nope"]),
       size=st.integers(-2, 12), seed=st.integers(-5, 2 ** 40),
       suffix=st.sampled_from([".jsonl", ".csv", ".parquet", ".txt"]),
       option=st.sampled_from([[], ["--now", "9999-01-01T00:00:00Z"], ["--now", "2026-01-01T00:00:00"]]))
def test_synth_calibrate_and_mine_options(tmp_path_factory, kind, size, seed, suffix, option):
    tmp = tmp_path_factory.mktemp("synth")
    _invoke(["synth", kind, "--out", str(tmp / f"s{suffix}"), "--size", str(size), "--seed", str(seed)])
    _invoke(["calibrate", str(DATA / "recall_log.jsonl"), *option])
    _invoke(["mine", str(DATA / "events.jsonl"), str(DATA / "recalls.jsonl"), *option])


def test_run_and_demo_on_bad_input():
    _invoke(["run", "--data", "/nonexistent/data", "--out", "/nonexistent/out"])
    _invoke(["demo", "--out", "/dev/null/demo"])


# ----------------------------------------------------------------------------------- the reliability figures
def test_reliability_fuzz_at_ci_size_has_no_raw_wrong_or_lossy_outcome():
    """Issue 36 point 9: benchmarks/fuzz_reliability.py (the README's reliability figures at full size)
    at CI size: every outcome is a typed error or a success that reads back."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "fuzz_reliability.py"
    spec = importlib.util.spec_from_file_location("fuzz_reliability", path)
    fuzz = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fuzz)
    counts = fuzz.run_fuzz(fuzz.CI, seed=0)
    bad = {t: {k: c[k] for k in ("raw", "silently wrong", "data loss") if c[k]}
           for t, c in counts["by_target"].items() if c["raw"] or c["silently wrong"] or c["data loss"]}
    assert (counts["raw"], counts["silently wrong"], counts["data loss"]) == (0, 0, 0), bad
    assert counts["tried"] == 144 and counts["typed"] + counts["ok"] == 144
