"""``prediction_dedup_pairs`` in exports and imports (thatch ``07ecf87`` on).

The DDL follows sysread/thatch's prediction-dedup design (src/db.ts @2ed97f2a as the release table
names it): ``store, id_a, id_b, status, checked_at``, key ``(store, id_a, id_b)``; the upsert and
the canonical id order follow src/prediction.ts ``markPairChecked``. v0.1.30 has no such table.
"""

from __future__ import annotations

import sqlite3

import pytest

from tests._stores import rows
from thatchlab.core.errors import StoreSchemaError
from thatchlab.core.params import ScoringParams
from thatchlab.embed import LookupEmbedder
from thatchlab.scoring import PredictionEngine
from thatchlab.store import export_sqlite, import_sqlite

EMB = LookupEmbedder({"writing tests": [1.0, 0.0], "use pytest": [0.0, 1.0]})
T0 = "2026-10-01T09:00:00Z"


def _engine(release):
    eng = PredictionEngine(EMB, params=ScoringParams(release=release), project_store="repo")
    eng.update("writing tests", "use pytest", "confirm", now=T0)
    return eng


def _tables(path):
    with sqlite3.connect(path) as con:
        return [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]


def test_export_writes_the_pairs_and_import_reads_them(tmp_path):
    eng = _engine("07ecf87")
    eng.mark_checked("p2", "p1", "duplicate", now=T0)
    eng.mark_checked("p3", "p1", "distinct", store="global", now="2026-10-01T09:00:07.500Z")
    out = export_sqlite(tmp_path / "new.db", prediction=eng)
    assert out.counts["prediction_dedup_pairs"] == 2
    assert rows(tmp_path / "new.db", "SELECT * FROM prediction_dedup_pairs ORDER BY rowid") == [
        ("repo", "p1", "p2", "duplicate", "2026-10-01T09:00:00Z"),
        ("global", "p1", "p3", "distinct", "2026-10-01T09:00:07Z")]
    back = import_sqlite(tmp_path / "new.db", embedder=EMB).prediction
    assert back.dedup_pairs.values.tolist() == eng.dedup_pairs.values.tolist()
    # an empty table is still created: production 07ecf87 has it in every database
    export_sqlite(tmp_path / "empty.db", prediction=_engine("07ecf87"))
    assert "prediction_dedup_pairs" in _tables(tmp_path / "empty.db")


def test_v0130_exports_have_no_pairs_table(tmp_path):
    export_sqlite(tmp_path / "old.db", prediction=_engine("v0.1.30"))
    assert "prediction_dedup_pairs" not in _tables(tmp_path / "old.db")
    assert import_sqlite(tmp_path / "old.db", embedder=EMB).prediction.dedup_pairs.empty


def test_a_bad_pairs_cell_is_named(tmp_path):
    export_sqlite(tmp_path / "x.db", prediction=_engine("07ecf87"))
    with sqlite3.connect(tmp_path / "x.db") as con:
        con.execute("INSERT INTO prediction_dedup_pairs VALUES ('repo', 'a', 'b', X'00', 'x')")
    (tmp_path / "x.manifest.json").unlink()   # an edited file: read as a production database
    with pytest.raises(StoreSchemaError, match=r"prediction_dedup_pairs', row 1, column 'status' holds b'\\x00'"):
        import_sqlite(tmp_path / "x.db", embedder=EMB)
