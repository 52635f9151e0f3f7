"""Store section "beliefs": belief_memories export and import."""

from __future__ import annotations

import sqlite3

import pandas as pd
import pytest

from thatchlab.belief import BeliefParams, BeliefStore
from thatchlab.core.errors import ExportExistsError, StoreSchemaError
from thatchlab.replay import run_belief
from thatchlab.store import export_sqlite, import_sqlite
from thatchlab.synth import BeliefWorld


@pytest.fixture(scope="module")
def result():
    log = BeliefWorld(named_date_share=0.3, seed=4).log(n_memories=60, days=60)
    return run_belief(log, BeliefParams(preference=80, contradiction_factor=0.25))


def test_round_trip_keeps_rows_order_and_params(tmp_path, result):
    out = export_sqlite(tmp_path / "beliefs.db", beliefs=result)
    assert out.engines == ["belief"] and out.counts == {"belief_memories": len(result.state)}
    back = import_sqlite(out.path).beliefs
    assert isinstance(back, BeliefStore)
    pd.testing.assert_frame_equal(back.memories, result.state.memories)
    assert back.params == result.params
    now = pd.Timestamp("2026-03-15T00:00:00Z")
    pd.testing.assert_frame_equal(back.view(now, "all"), result.state.view(now, "all"))
    with sqlite3.connect(out.path) as conn:
        ev = conn.execute("SELECT evidence, captured_at FROM belief_memories ORDER BY rowid LIMIT 1").fetchone()
    assert ev[0].startswith("[") and ev[1].endswith("Z")


def test_export_accepts_a_dataframe_and_is_atomic(tmp_path):
    df = pd.DataFrame([dict(id="m1", text="is a nurse", belief_class="identity",
                            captured_at="2026-01-01T00:00:00Z", evidence=["c1"], corroboration_count=1)])
    path = tmp_path / "b.db"
    export_sqlite(path, beliefs=df)
    before = path.read_bytes()
    with pytest.raises(ExportExistsError):
        export_sqlite(path, beliefs=df)
    assert path.read_bytes() == before
    assert import_sqlite(path).beliefs.row("m1")["evidence"] == ["c1"]


def test_import_of_an_incomplete_table_names_what_is_missing(tmp_path):
    path = tmp_path / "bad.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE belief_memories (id TEXT PRIMARY KEY, text TEXT)")
    with pytest.raises(StoreSchemaError, match="lacks column"):
        import_sqlite(path)
