"""Shared log machinery: formats, atomic writes, row-precise validation, report mode."""

import pandas as pd
import pandera.pandas as pa
import pytest

from thatchlab.core.errors import LogValidationError
from thatchlab.logs import LogSpec, RowRule, read_table, validate_frame, write_table

SPEC = LogSpec(
    "test log", required=("ts", "kind", "x"), optional=("y",), times=("ts",),
    schema=pa.DataFrameSchema({
        "kind": pa.Column(str, pa.Check.isin(["a", "b"], error="one of a, b")),
        "x": pa.Column("float64", pa.Check.ge(0, error="a number >= 0"), coerce=True, nullable=True)}),
    rules=(RowRule("x", "a value when kind is b", lambda d: ~((d["kind"] == "b") & d["x"].isna())),))

ROWS = pd.DataFrame({"ts": ["2026-01-01T00:00:00Z", "2026-01-01T00:00:00", "2026-01-02T00:00:00Z"],
                     "kind": ["a", "b", "c"], "x": [1.0, None, -2.0]})


def test_raise_names_file_row_column_and_expectation():
    with pytest.raises(LogValidationError) as err:
        validate_frame(ROWS, SPEC, source="f.jsonl")
    e = err.value
    assert (e.file, e.row, e.column) == ("f.jsonl", 1, "ts")
    assert "timezone-aware" in e.expected and "3 more problem(s)" in str(e)
    assert len(e.failures) == 4


def test_report_mode_returns_valid_rows_and_reasons():
    before = ROWS.copy()
    valid, rejected = validate_frame(ROWS, SPEC, errors="report")
    assert len(valid) == 1 and str(valid["ts"].dtype) == "datetime64[ns, UTC]" and "y" in valid
    assert rejected["row"].tolist() == [1, 2]
    assert "x: expected a value when kind is b, got null" in rejected["reason"].iloc[0]
    assert "kind: expected one of a, b, got 'c'" in rejected["reason"].iloc[1]
    pd.testing.assert_frame_equal(ROWS, before)  # input untouched


def test_missing_column():
    with pytest.raises(LogValidationError, match=r"missing column\(s\) \['x'\]"):
        validate_frame(ROWS.drop(columns="x"), SPEC)


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_round_trip_with_list_columns(tmp_path, suffix):
    df = pd.DataFrame({"ts": pd.to_datetime(["2026-01-01T00:00:00Z"], utc=True), "tags": [["a", "b"]], "n": [1]})
    path = write_table(df, tmp_path / f"t{suffix}", json_columns=["tags"])
    back = read_table(path, json_columns=["tags"])
    assert list(back["tags"].iloc[0]) == ["a", "b"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"t{suffix}"]


def test_unreadable_files(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": 1}\nnot json\n')
    with pytest.raises(LogValidationError, match=r"bad.jsonl: data row 1 \(line 2\): not valid JSON"):
        read_table(bad)
    (tmp_path / "x.txt").write_text("a,b\n")
    with pytest.raises(LogValidationError, match="cannot tell the format"):
        read_table(tmp_path / "x.txt")
    with pytest.raises(LogValidationError, match="no such file"):
        read_table(tmp_path / "missing.csv")


# ---------------------------------------------------------------- issue 13: odd values of fuzzed logs
import json  # noqa: E402

import numpy as np  # noqa: E402

from thatchlab import logs  # noqa: E402
from thatchlab.core.errors import ThatchlabError  # noqa: E402

RECALL_ROW = {"ts": "2026-01-02T00:00:00Z", "recall_id": "r1", "memory_id": "m1", "namespace": "ns",
              "source": "user", "caller_confidence": 0.9, "created_at": "2026-01-01T00:00:00Z",
              "is_atom": False, "corroboration": 2, "rank": 1, "score": 1.5, "consumed": True}
MEMORY_ROW = {"ts": "2026-01-01T00:00:00Z", "memory_id": "m1", "kind": "write", "text": "likes tea",
              "belief_class": "preference"}
MESSAGE_ROW = {"ts": "2026-01-01T09:00:00Z", "session": "s1", "kind": "message", "text": "help me"}


def _jsonl(tmp_path, rows, raw=None, name="log.jsonl"):
    path = tmp_path / name
    if raw is not None:
        path.write_text(raw, encoding="utf-8", errors="surrogatepass")
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _first_error(reader, path):
    with pytest.raises(LogValidationError) as err:
        reader(path)
    return err.value


@pytest.mark.parametrize("value", ['"Infinity"', "Infinity", "1e308", "99999999999999999999", "true", "-1", "2.5",
                                   "NaN"])
def test_corroboration_must_be_a_finite_whole_count_that_fits_int64(tmp_path, value):
    line = json.dumps(RECALL_ROW).replace('"corroboration": 2', f'"corroboration": {value}')
    e = _first_error(logs.read_recall_log, _jsonl(tmp_path, None, raw=line + "\n"))
    assert (e.file, e.row, e.column) == (str(tmp_path / "log.jsonl"), 0, "corroboration")
    assert any(w in e.expected for w in ("whole number", "greater_than_or_equal_to(0)", "not null"))


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
@pytest.mark.parametrize("value", ["inf", "1e308", "True"])
def test_corroboration_from_csv_and_parquet_text(tmp_path, suffix, value):
    df = pd.DataFrame([RECALL_ROW]).assign(corroboration=value)
    path = write_table(df, tmp_path / f"r{suffix}")
    e = _first_error(logs.read_recall_log, path)
    assert (e.row, e.column) == (0, "corroboration")


def test_booleans_are_not_numbers(tmp_path):
    for col in ("caller_confidence", "score", "rank"):
        e = _first_error(logs.read_recall_log, _jsonl(tmp_path, [{**RECALL_ROW, col: True}]))
        assert (e.row, e.column) == (0, col)
    for col in ("half_life_days", "authority"):
        e = _first_error(logs.read_memory_log, _jsonl(tmp_path, [{**MEMORY_ROW, col: True}]))
        assert (e.row, e.column) == (0, col)
    e = _first_error(logs.read_interaction_log, _jsonl(tmp_path, [{**MESSAGE_ROW, "propensity": True}]))
    assert (e.row, e.column) == (0, "propensity")


@pytest.mark.parametrize("ts", ["9999-01-01T00:00:00Z", "1000-01-01T00:00:00+00:00", "0001-01-01T00:00:00Z"])
def test_times_outside_the_nanosecond_range_name_the_supported_range(tmp_path, ts):
    for reader, row in ((logs.read_interaction_log, MESSAGE_ROW), (logs.read_memory_log, MEMORY_ROW),
                        (logs.read_recall_log, RECALL_ROW)):
        e = _first_error(reader, _jsonl(tmp_path, [{**row, "ts": ts}]))
        assert (e.row, e.column) == (0, "ts") and "1677-09-21" in str(e) and "2262-04-11" in str(e)


def test_parquet_times_outside_the_nanosecond_range(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"ts": pa.array([pd.Timestamp("2026-01-01", tz="UTC").to_pydatetime(),
                                      pd.Timestamp("3000-01-01", tz="UTC").to_pydatetime()],
                                     type=pa.timestamp("us", tz="UTC")),
                      "session": ["s", "s"], "kind": ["message", "message"], "text": ["a", "b"]})
    pq.write_table(table, tmp_path / "i.parquet")
    e = _first_error(logs.read_interaction_log, tmp_path / "i.parquet")
    assert (e.row, e.column) == (1, "ts") and "supported range" in str(e)


def test_a_lone_surrogate_is_refused_with_row_and_column(tmp_path):
    raw = json.dumps(MESSAGE_ROW) + "\n" + json.dumps(MESSAGE_ROW).replace("help me", "bad \\ud800 text") + "\n"
    path = tmp_path / "log.jsonl"
    path.write_text(raw)  # JSON escape of a lone surrogate: valid JSON, not valid Unicode
    e = _first_error(logs.read_interaction_log, path)
    assert (e.row, e.column) == (1, "text") and "surrogate" in e.expected
    e = _first_error(logs.read_event_log, _jsonl(tmp_path, None, raw='{"ts": "2026-01-01T00:00:00Z", '
                                                  '"workspace": "w", "session": "s", "name": "x\\udc80"}\n'))
    assert (e.row, e.column) == (0, "name")


def test_writers_refuse_a_lone_surrogate_and_write_nothing(tmp_path):
    df = pd.DataFrame({"ts": ["2026-01-01T00:00:00Z"] * 2, "session": ["s", "s"], "kind": ["message"] * 2,
                       "text": pd.Series(["fine", "bad \ud800"], dtype=object)})  # str cannot hold it
    for suffix in (".jsonl", ".csv", ".parquet"):
        with pytest.raises(LogValidationError) as err:
            logs.write_interaction_log(df, tmp_path / f"out{suffix}")
        assert (err.value.row, err.value.column) == (1, "text")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_text_with_nul_round_trips_through_our_writers(tmp_path, suffix):
    df = pd.DataFrame([{**MESSAGE_ROW, "text": "before\x00after"}, {**MESSAGE_ROW, "text": "line\nbreak, \"q\""}])
    path = logs.write_interaction_log(df, tmp_path / f"i{suffix}")
    assert logs.read_interaction_log(path)["text"].tolist() == ["before\x00after", "line\nbreak, \"q\""]


def test_embedding_values_a_float32_cannot_hold_are_refused(tmp_path):
    e = _first_error(logs.read_interaction_log, _jsonl(tmp_path, [{**MESSAGE_ROW, "embedding": [1.0, 1e300]}]))
    assert (e.row, e.column) == (0, "embedding")
    e = _first_error(logs.read_interaction_log, _jsonl(tmp_path, [{**MESSAGE_ROW, "embedding": [10 ** 400]}]))
    assert (e.row, e.column) == (0, "embedding")


def test_header_only_and_empty_files(tmp_path):
    (tmp_path / "m.csv").write_text("ts,memory_id,kind\n")
    assert len(logs.read_memory_log(tmp_path / "m.csv")) == 0
    for name, text in (("e.csv", ""), ("blank.csv", "\n\n"), ("e.parquet", "")):
        (tmp_path / name).write_text(text)
        with pytest.raises(LogValidationError, match=f"{name}: empty file; expected "):
            logs.read_memory_log(tmp_path / name)
    # no line is no object: an empty JSON-lines file is a log of no rows (issue 36 point 6), the file
    # an ingest of nothing once wrote reads back instead of blocking every later command
    for name, text in (("e.jsonl", ""), ("blank.jsonl", "\n  \n\n")):
        (tmp_path / name).write_text(text)
        for read, first in ((logs.read_memory_log, "ts"), (logs.read_interaction_log, "ts"),
                            (logs.read_recall_log, "ts"), (logs.read_event_log, "ts")):
            df = read(tmp_path / name)
            assert len(df) == 0 and df.columns[0] == first
        with pytest.raises(LogValidationError, match=f"{name}: empty file; expected "):
            logs.read_table(tmp_path / name)  # no kind, no columns: still refused


def test_a_bom_is_not_part_of_the_first_column(tmp_path):
    for name, text in (("b.jsonl", json.dumps(MEMORY_ROW) + "\n"),
                       ("b.csv", "ts,memory_id,kind,text\n2026-01-01T00:00:00Z,m1,write,tea\n")):
        (tmp_path / name).write_bytes(b"\xef\xbb\xbf" + text.encode())
        assert logs.read_memory_log(tmp_path / name)["memory_id"].tolist() == ["m1"]


def test_a_missing_required_column_is_reported_missing_not_null(tmp_path):
    e = _first_error(logs.read_recall_log, _jsonl(tmp_path, [{k: v for k, v in RECALL_ROW.items() if k != "ts"}]))
    assert "missing column(s) ['ts']" in str(e)


def test_reader_results_match_the_line_by_line_path(tmp_path):
    """The pyarrow path and the line-by-line fallback give the same validated frame."""
    from thatchlab.logs import _core

    path = DATA / "recall_log.jsonl"
    fast = logs.read_recall_log(path)
    slow = logs.validate_recall_log(_core._read_jsonl_lines(path, str(path)))
    pd.testing.assert_frame_equal(fast, slow)


def test_typed_errors_only_on_odd_number_spellings(tmp_path):
    for value in ("1e999", "-0", "0x10", '""', "[]", "{}", str(2 ** 63), str(-(2 ** 63) - 1)):
        line = json.dumps(RECALL_ROW).replace('"rank": 1', f'"rank": {value}')
        # none of these spells a rank: each is refused with a typed error naming the column
        # (or, for 0x10, the line that is not JSON)
        with pytest.raises(ThatchlabError, match="column 'rank'|data row 0 \\(line 1\\): not valid JSON"):
            logs.read_recall_log(_jsonl(tmp_path, None, raw=line + "\n"))


DATA = __import__("pathlib").Path(__file__).resolve().parents[1] / "data"
_ = np


# ---------------------------------------------------------------- issue 17: wording, time order, speed
def test_messages_say_data_row_and_line(tmp_path):
    rows = [dict(MEMORY_ROW, memory_id=f"m{i}") for i in range(4)]
    rows[2]["kind"] = "bogus"
    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps(rows[0]) + "\n\n" + "".join(json.dumps(r) + "\n" for r in rows[1:]))
    e = _first_error(logs.read_memory_log, path)
    assert "m.jsonl: memory log: data row 2 (line 4), column 'kind'" in str(e) and e.row == 2
    csv_path = tmp_path / "m.csv"
    csv_path.write_text('ts,memory_id,kind,text\n2026-01-01T00:00:00Z,m1,write,"two\nlines"\n'
                        "2026-01-01T00:00:00Z,m2,bogus,x\n")
    assert "data row 1 (line 4), column 'kind'" in str(_first_error(logs.read_memory_log, csv_path))
    # a frame (not a file) has rows, not lines
    with pytest.raises(LogValidationError, match=r"memory log: row 2, column 'kind'"):
        logs.validate_memory_log(pd.DataFrame(rows))


def test_a_csv_row_with_extra_or_missing_fields_is_named(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("ts,memory_id,kind\n2026-01-01T00:00:00Z,m1,write\n\n2026-01-01T00:00:00Z,m2,write,extra\n")
    e = _first_error(logs.read_memory_log, path)
    assert str(e) == f"{path}: data row 1 (line 4) has 4 fields, expected 3 (one per header column)"
    assert (e.row, e.expected) == (1, "3 fields")
    path.write_text("ts,memory_id,kind\n2026-01-01T00:00:00Z,m1\n")
    assert "data row 0 (line 2) has 2 fields, expected 3" in str(_first_error(logs.read_memory_log, path))


def test_a_directory_is_named_a_directory(tmp_path):
    for reader in (logs.read_memory_log, logs.read_interaction_log, read_table):
        with pytest.raises(LogValidationError, match="is a directory; expected a log file"):
            reader(tmp_path)
    (tmp_path / "d.jsonl").mkdir()
    with pytest.raises(LogValidationError, match="d.jsonl: is a directory"):
        logs.read_recall_log(tmp_path / "d.jsonl")


READERS = [(logs.read_memory_log, MEMORY_ROW), (logs.read_recall_log, RECALL_ROW),
           (logs.read_interaction_log, MESSAGE_ROW),
           (logs.read_event_log, {"ts": "2026-01-01T00:00:00Z", "workspace": "w", "session": "s", "name": "open",
                                  "entities": ["a"]}),
           (logs.read_recall_stream, {"ts": "2026-01-01T00:00:00Z", "workspace": "w", "session": "s",
                                      "fact_id": "f", "entities": ["a"]})]


@pytest.mark.parametrize("reader,row", READERS, ids=lambda v: getattr(v, "__name__", ""))
def test_readers_sort_by_time_stably_and_say_how_many_rows_moved(tmp_path, reader, row):
    days = [3, 1, 2, 1]  # two rows tie on day 1: they keep their file order
    rows = [dict(row, ts=f"2026-01-0{d}T00:00:00Z", marker=f"r{i}") for i, d in enumerate(days)]
    path = _jsonl(tmp_path, rows)
    with pytest.warns(UserWarning, match=r"log.jsonl was not in time order: 3 of 4 rows were reordered by 'ts'"):
        out = reader(path)
    assert out["marker"].tolist() == ["r1", "r3", "r2", "r0"] and out.attrs["reordered"] == 3
    assert out.index.equals(pd.RangeIndex(4))
    import warnings
    ordered = _jsonl(tmp_path, [rows[i] for i in (1, 3, 2, 0)], name="sorted.jsonl")
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*not in time order")
        again = reader(ordered)
    assert again.attrs["reordered"] == 0
    pd.testing.assert_frame_equal(again.drop(columns="marker"), out.drop(columns="marker"))


def test_report_mode_sorts_the_valid_rows(tmp_path):
    rows = [dict(MEMORY_ROW, ts="2026-01-03T00:00:00Z", memory_id="late"), dict(MEMORY_ROW, kind="bogus"),
            dict(MEMORY_ROW, ts="2026-01-01T00:00:00Z", memory_id="early")]
    with pytest.warns(UserWarning, match="not in time order"):
        valid, rejected = logs.read_memory_log(_jsonl(tmp_path, rows), errors="report")
    assert valid["memory_id"].tolist() == ["early", "late"] and rejected["row"].tolist() == [1]


def test_fields_first_seen_far_down_the_file_keep_their_types(tmp_path):
    """The reader names in pyarrow's schema only the fields its first lines use; fields that appear
    later are read as their declared kinds (or the file is read again naming them)."""
    head = [dict(MESSAGE_ROW, text=f"message {i}") for i in range(3000)]  # > 64 KB of lines without them
    late = [dict(MESSAGE_ROW, propensity=1),
            dict(MESSAGE_ROW, kind="behavior_feedback", text="it helped", statement="s", relevant=True),
            dict(MESSAGE_ROW, kind="prediction_update", text=None, matcher="m", statement="s", signal="confirm")]
    fast = logs.read_interaction_log(_jsonl(tmp_path, head + late))
    assert fast["propensity"].iloc[-3] == 1.0 and fast["propensity"].dtype == "float64"
    assert bool(fast["relevant"].iloc[-2]) is True and fast["matcher"].iloc[-1] == "m"
    ref = logs.validate_interaction_log(__import__("thatchlab.logs._core", fromlist=["_"])._read_jsonl_lines(
        tmp_path / "log.jsonl", "log.jsonl"))
    pd.testing.assert_frame_equal(fast, ref, check_categorical=False)
    # a late field of the wrong type is still named with its row
    bad = dict(late[2], matcher=5)
    e = _first_error(logs.read_interaction_log, _jsonl(tmp_path, head + [bad], name="bad.jsonl"))
    assert (e.row, e.column) == (3000, "matcher")


def test_zero_rows_of_category_less_categoricals_validate():
    """Issue 36 point 7: a rule mapping a categorical column gave a categorical without False among its
    categories, and ``fillna(False)`` raised a raw TypeError."""
    for validate, columns in ((logs.validate_memory_log, logs.MEMORY_LOG_COLUMNS),
                              (logs.validate_recall_log, logs.RECALL_COLUMNS),
                              (logs.validate_event_log, ("ts", "workspace", "session", "name", "entities")),
                              (logs.validate_recall_stream, ("ts", "workspace", "session", "fact_id", "entities"))):
        out = validate(pd.DataFrame({c: pd.Categorical([]) for c in columns}))
        assert len(out) == 0 and list(out.columns)[:2] == list(columns)[:2]
