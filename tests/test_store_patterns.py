"""Export/import of mined patterns through the ``temporal_patterns`` table."""

from __future__ import annotations

import sqlite3

import pandas as pd
import pytest

from thatchlab.anticipation import mine
from thatchlab.core.errors import ExportExistsError, StoreSchemaError, StoreWriteError
from thatchlab.core.params import AnticipationParams
from thatchlab.store import export_sqlite, import_sqlite
from thatchlab.synth import PatternWorld


@pytest.fixture(scope="module")
def patterns():
    ev, rc = PatternWorld(n_workspaces=2, days=35, seed=2).generate()
    return mine(ev, rc, "2026-02-09T06:30:00Z", AnticipationParams(min_obs=3, mode="seed"))


def test_round_trip(tmp_path, patterns):
    assert set(patterns.type) == {"sequential", "periodic", "conditional", "co-occurrence"}
    res = export_sqlite(tmp_path / "p.db", patterns=patterns)
    assert res.counts == {"temporal_patterns": len(patterns)}
    assert res.engines == ["anticipation"]
    back = import_sqlite(tmp_path / "p.db").patterns
    pd.testing.assert_frame_equal(back, patterns)
    assert back.attrs["params"]["mode"] == "seed"
    assert back.attrs["now"] == pd.Timestamp("2026-02-09T06:30:00Z").isoformat()
    with sqlite3.connect(tmp_path / "p.db") as conn:
        row = conn.execute("SELECT type, trigger_name, last_seen FROM temporal_patterns WHERE id = 0").fetchone()
    assert row[0] == "sequential" and row[2].endswith("Z")
    with pytest.raises(ExportExistsError):
        export_sqlite(tmp_path / "p.db", patterns=patterns)


def test_bad_file_and_bad_rows(tmp_path, patterns):
    path = tmp_path / "p.db"
    export_sqlite(path, patterns=patterns).manifest_path.unlink()  # edited below: no manifest fits it
    with sqlite3.connect(path) as conn:
        conn.execute("ALTER TABLE temporal_patterns DROP COLUMN slot")
    with pytest.raises(StoreSchemaError, match="temporal_patterns.*slot"):
        import_sqlite(path)
    with pytest.raises(Exception, match="missing column"):
        export_sqlite(tmp_path / "q.db", patterns=patterns.drop(columns="confidence"))
    assert not (tmp_path / "q.db").exists()


def test_empty_patterns_round_trip(tmp_path):
    empty = mine(pd.DataFrame({"ts": pd.Series(dtype="datetime64[ns, UTC]"), "workspace": [], "session": [],
                               "name": [], "entities": []}),
                 pd.DataFrame({"ts": pd.Series(dtype="datetime64[ns, UTC]"), "workspace": [], "session": [],
                               "fact_id": [], "entities": []}), "2026-01-01T00:00:00Z")
    export_sqlite(tmp_path / "e.db", patterns=empty)
    back = import_sqlite(tmp_path / "e.db").patterns
    assert back.empty and list(back.columns) == list(empty.columns)


@pytest.mark.parametrize(("column", "value", "expected"), [
    ("observations", "x", "a whole number >= 0, got 'x'"),          # before: a raw ValueError from int()
    ("confidence", "high", "a finite number >= 0, got 'high'"),      # before: a raw ValueError from float()
    ("last_seen", "yesterday", "an aware time, got 'yesterday'"),    # before: pandas' raw DateParseError
    ("last_seen", "2026-01-01T00:00:00", "an aware time, got '2026-01-01T00:00:00'"),
    ("weeks", 2.5, r"a whole number >= 0, got 2\.5"),                # before: written as 2, silently
    ("confidence", -1.0, r"a finite number >= 0, got -1\.0"),        # before: SQLite's CHECK, no row named
    ("type", "weird", r"one of \['sequential', 'periodic', 'conditional', 'co-occurrence'\], got 'weird'"),
    ("workspace", None, "a value, got None"),                        # before: SQLite's NOT NULL, no row named
    ("avg_delay_s", float("inf"), "a finite number, got inf"),
])
def test_a_bad_cell_is_named_by_row_and_column_and_nothing_is_written(tmp_path, patterns, column, value, expected):
    bad = patterns.copy()
    bad[column] = bad[column].astype(object)
    bad.loc[3, column] = value
    with pytest.raises(StoreWriteError, match=rf"patterns row 3, column '{column}': expected {expected}"):
        export_sqlite(tmp_path / "p.db", patterns=bad)
    assert list(tmp_path.iterdir()) == []


def test_whole_floats_and_aware_text_are_written_as_the_table_holds_them(tmp_path, patterns):
    edited = patterns.copy()
    edited["observations"] = edited["observations"].astype(float)
    edited["last_seen"] = [t.isoformat() for t in edited["last_seen"]]
    export_sqlite(tmp_path / "a.db", patterns=patterns)
    export_sqlite(tmp_path / "b.db", patterns=edited)
    rows = []
    for name in ("a.db", "b.db"):
        with sqlite3.connect(tmp_path / name) as conn:
            rows.append(conn.execute("SELECT * FROM temporal_patterns ORDER BY id").fetchall())
    assert rows[0] == rows[1]
