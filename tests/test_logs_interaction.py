"""The interaction log: validation, formats, rejected rows and store signals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from thatchlab.core.errors import LogValidationError, StoreSchemaError
from thatchlab.embed import LookupEmbedder
from thatchlab.logs import (
    INTERACTION_COLUMNS,
    read_interaction_log,
    signals_from_store,
    validate_interaction_log,
    write_interaction_log,
)
from thatchlab.scoring import BehaviorEngine, PredictionEngine


@pytest.fixture
def good_log():
    return pd.DataFrame({
        "ts": ["2026-01-01T09:00:00Z", "2026-01-01T09:00:30+01:00", "2026-01-01T09:02:00Z",
               "2026-01-01T09:03:00Z", "2026-01-01T09:04:00Z"],
        "session": ["s1", "s1", "s1", "s2", "s2"],
        "store": [None, "proj", None, "global", None],
        "kind": ["message", "prediction_update", "behavior_feedback", "prediction_delete", "behavior_codify"],
        "text": ["please help with tests", None, "it helped", None, None],
        "matcher": [None, "writing tests", None, None, "before committing"],
        "statement": [None, "use pytest", "run the tests", "use pytest", "run the tests"],
        "signal": [None, "soft", None, None, None],
        "relevant": [None, None, "true", None, None],
        "surfaced": [["use pytest"], None, None, None, None],
        "propensity": [0.8, None, None, None, None],
        "embedding": [[1.0, 0.0], None, None, None, None]})


def test_validate_types_and_does_not_modify(good_log):
    before = good_log.copy(deep=True)
    v = validate_interaction_log(good_log)
    pd.testing.assert_frame_equal(good_log, before)
    assert list(v.columns) == list(INTERACTION_COLUMNS)
    assert str(v["ts"].dtype) == "datetime64[ns, UTC]"
    assert v["ts"].iloc[1] == pd.Timestamp("2026-01-01T08:00:30Z")
    assert v["relevant"].tolist()[2] is True
    assert v["propensity"].iloc[0] == 0.8
    assert v["surfaced"].iloc[0] == ["use pytest"]
    assert v["embedding"].iloc[0].dtype == np.float32


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_round_trip(tmp_path, good_log, suffix):
    path = write_interaction_log(good_log, tmp_path / f"log{suffix}")
    with pytest.warns(UserWarning, match=r"log\S* was not in time order: 2 of 5 rows were reordered"):
        back = read_interaction_log(path)  # the fixture's rows are not in time order: read back sorted
    want = validate_interaction_log(good_log).sort_values("ts", kind="stable")
    assert back.attrs["reordered"] == 2 and back["ts"].is_monotonic_increasing
    for col in INTERACTION_COLUMNS:
        for a, b in zip(back[col].tolist(), want[col].tolist()):
            if isinstance(a, np.ndarray):
                assert np.array_equal(a, b)
            elif isinstance(a, list) or not pd.isna(a):
                assert a == b, (col, a, b)
            else:
                assert pd.isna(b), (col, a, b)


@pytest.mark.parametrize("col, value, row, expected", [
    ("kind", "prediction_upsert", 1, "one of"),
    ("signal", "maybe", 1, "prediction_update"),
    ("signal", None, 1, "prediction_update"),
    ("relevant", None, 2, "behavior_feedback"),
    ("statement", None, 3, "delete"),
    ("matcher", "", 4, "behavior_codify"),
    ("text", None, 0, "message"),
    ("ts", "2026-01-01T09:00:00", 0, "timezone-aware"),
    ("propensity", 1.5, 0, "(0, 1]"),
    ("session", "", 3, "non-empty"),
])
def test_errors_name_row_column_expected(good_log, col, value, row, expected):
    bad = good_log.copy()
    bad[col] = bad[col].astype(object)
    bad.at[row, col] = value
    with pytest.raises(LogValidationError) as info:
        validate_interaction_log(bad, source="log.jsonl")
    err = info.value
    assert (err.file, err.row, err.column) == ("log.jsonl", row, col)
    assert expected in err.expected
    assert f"row {row}" in str(err) and "log.jsonl" in str(err)


def test_missing_column_and_report_mode(good_log):
    with pytest.raises(LogValidationError, match="missing column"):
        validate_interaction_log(good_log.drop(columns=["kind"]))
    bad = good_log.copy()
    bad.at[1, "signal"] = "nope"
    bad.at[3, "kind"] = "weird"
    valid, rejected = validate_interaction_log(bad, errors="report")
    assert len(valid) == 3
    assert rejected["row"].tolist() == [1, 3]
    assert rejected["column"].tolist() == ["signal", "kind"]
    assert "expected one of" in rejected["reason"].iloc[1]


def test_jsonl_line_error(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_text('{"ts": "2026-01-01T00:00:00Z", "session": "s", "kind": "message", "text": "hello there"}\n'
                 '{"ts": "2026-01-01T00:00:00Z", "session": "s", "kind": "message"}\n')
    with pytest.raises(LogValidationError) as info:
        read_interaction_log(p)
    assert info.value.row == 1 and info.value.column == "text" and str(p) in str(info.value)


def test_signals_from_store(tmp_path):
    from thatchlab.store import export_sqlite

    emb = LookupEmbedder({"writing tests": [1, 0, 0], "use pytest": [0, 1, 0], "before commit": [0, 0, 1],
                          "run the tests": [1, 1, 0]})
    p = PredictionEngine(emb)
    p.update("writing tests", "use pytest", "create", "seen", now="2026-01-01T09:00:00Z")
    p.update("writing tests", "use pytest", "confirm", None, now="2026-01-02T09:00:00.900Z")
    b = BehaviorEngine(emb)
    b.codify("before commit", "run the tests", "caught a bug", now="2026-01-03T09:00:00Z")
    b.feedback("run the tests", False, "not now", now="2026-01-04T09:00:00Z")
    path = tmp_path / "thatch.db"
    export_sqlite(path, prediction=p, behavior=b)
    sig = signals_from_store(path)
    assert list(sig.columns) == ["item_id", "kind", "store", "statement", "signal", "ts"]
    assert sig["kind"].tolist() == ["prediction", "prediction", "behavior", "behavior"]
    assert sig["signal"].tolist() == ["create", "confirm", "codify", "disconfirm"]
    assert sig["statement"].tolist() == ["use pytest", "use pytest", "run the tests", "run the tests"]
    assert sig["ts"].iloc[1] == pd.Timestamp("2026-01-02T09:00:00Z")  # provenance keeps seconds
    assert sig["item_id"].iloc[0] == p.tables["items"]["id"].iloc[0]
    empty = tmp_path / "empty.db"
    import sqlite3

    sqlite3.connect(empty).execute("CREATE TABLE x (a)").connection.close()
    with pytest.raises(StoreSchemaError, match="provenance"):
        signals_from_store(empty)


def test_a_missing_column_is_named_as_missing(tmp_path):
    """A column the file lacks is reported as missing, not as a null in each row that needs it."""
    import json

    import pandas as pd
    import pytest

    from thatchlab.core.errors import LogValidationError
    from thatchlab.logs import read_interaction_log, validate_interaction_log

    rows = [{"ts": "2026-01-05T09:00:00Z", "session": "s1", "kind": "message", "text": "hello there friend"},
            {"ts": "2026-01-05T09:01:00Z", "session": "s1", "kind": "prediction_update",
             "matcher": "when greeting", "statement": "say hi"}]
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    with pytest.raises(LogValidationError, match=r"log.jsonl: interaction log: missing column 'signal': "
                                                 r"1 row\(s\) need it, the first data row 1 \(line 2\)") as err:
        read_interaction_log(path)
    assert err.value.column == "signal" and err.value.row == 1
    with pytest.raises(LogValidationError, match=r"^interaction log: missing column 'signal'"):
        validate_interaction_log(pd.DataFrame(rows))
