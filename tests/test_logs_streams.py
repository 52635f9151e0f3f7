"""Event and recall streams: validation with row-precise errors, JSONL/CSV/Parquet round trips."""

from __future__ import annotations

import pandas as pd
import pytest

from thatchlab.core.errors import LogValidationError
from thatchlab.logs import (
    read_event_log,
    read_recall_stream,
    validate_event_log,
    validate_recall_stream,
    write_stream,
)


@pytest.fixture
def events():
    return pd.DataFrame({"ts": ["2026-01-05T09:00:00Z", "2026-01-05T10:00:00+01:00"],
                         "workspace": ["w", "w"], "session": ["s1", "s2"],
                         "name": ["deploy.success", "billing.spike"], "entities": [["prod", "api"], None]})


def test_validate_event_log_normalises(events):
    out = validate_event_log(events)
    assert out.ts.tolist() == [pd.Timestamp("2026-01-05T09:00Z")] * 2
    assert out.entities.tolist() == [["prod", "api"], []]
    assert events.entities.tolist()[1] is None  # input untouched


@pytest.mark.parametrize("column, value, expected", [
    ("ts", "2026-01-05T09:00:00", "timezone-aware"),
    ("name", "", "non-empty text"),
    ("workspace", None, "non-empty text"),
    ("entities", "prod", "list of entity names"),
    ("entities", ["prod", 3], "list of entity names"),
])
def test_validation_names_row_and_column(events, column, value, expected):
    bad = events.copy()
    bad[column] = bad[column].astype(object)
    bad.at[1, column] = value
    with pytest.raises(LogValidationError, match=f"row 1, column '{column}': expected .*{expected}") as exc:
        validate_event_log(bad, source="events.jsonl")
    assert (exc.value.row, exc.value.column, exc.value.file) == (1, column, "events.jsonl")


def test_report_mode_and_missing_columns(events):
    bad = events.copy()
    bad.at[0, "session"] = ""
    valid, rejected = validate_event_log(bad, errors="report")
    assert len(valid) == 1 and rejected.row.tolist() == [0]
    with pytest.raises(LogValidationError, match="missing column"):
        validate_recall_stream(events)


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_round_trip(tmp_path, events, suffix):
    recalls = events.rename(columns={"name": "fact_id"})
    write_stream(validate_event_log(events), tmp_path / f"e{suffix}")
    write_stream(validate_recall_stream(recalls), tmp_path / f"r{suffix}")
    back = read_event_log(tmp_path / f"e{suffix}")
    pd.testing.assert_frame_equal(back, validate_event_log(events))
    assert read_recall_stream(tmp_path / f"r{suffix}").entities.tolist() == [["prod", "api"], []]
    if suffix == ".csv":
        assert '"[""prod"", ""api""]"' in (tmp_path / "e.csv").read_text()
