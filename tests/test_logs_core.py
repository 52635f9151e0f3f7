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
    with pytest.raises(LogValidationError, match=r"line 2 \(row 1\): not valid JSON"):
        read_table(bad)
    with pytest.raises(LogValidationError, match="cannot tell the format"):
        read_table(tmp_path / "x.txt")
    with pytest.raises(LogValidationError, match="no such file"):
        read_table(tmp_path / "missing.csv")
