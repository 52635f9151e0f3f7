"""merge_into: ship an export into a production file that holds more than thatchlab knows."""

import sqlite3

import pytest

from tests._vectors import basis
from thatchlab.core.errors import StoreSchemaError
from thatchlab.core.schema import STORES_DDL, thatch_ddl
from thatchlab.embed import LookupEmbedder
from thatchlab.scoring import BehaviorEngine, PredictionEngine
from thatchlab.store import export_sqlite, merge_into

T = "2026-02-01T10:00:00Z"


def _production(path, wal=False):
    con = sqlite3.connect(path)
    if wal:
        con.execute("PRAGMA journal_mode=WAL")
    con.execute(STORES_DDL)
    for kind in ("prediction", "behavior"):
        for stmt in thatch_ddl(kind):
            con.execute(stmt)
    con.execute("INSERT INTO stores VALUES ('global'), ('old-repo')")
    con.execute("INSERT INTO predictions (id, store, statement) VALUES ('old-p', 'old-repo', 'old prediction')")
    con.execute("INSERT INTO prediction_matchers (id, store, description) VALUES ('old-m', 'old-repo', 'old m')")
    con.execute("INSERT INTO prediction_edges (matcher_id, prediction_id) VALUES ('old-m', 'old-p')")
    con.execute("INSERT INTO behaviors (id, store, statement) VALUES ('keep-b', 'global', 'a user rule')")
    con.execute("CREATE TABLE entries (id INTEGER PRIMARY KEY, body TEXT, embedding BLOB)")
    con.execute("CREATE TABLE dedup_pairs (a INTEGER, b INTEGER)")
    con.execute("CREATE TABLE something_else (k TEXT, v TEXT)")
    con.executemany("INSERT INTO entries (body) VALUES (?)", [(f"memory {i}",) for i in range(50)])
    con.execute("INSERT INTO dedup_pairs VALUES (1, 2)")
    con.execute("INSERT INTO something_else VALUES ('x', 'y')")
    con.commit()
    return con


def _export(tmp_path):
    vecs = {"writing tests": basis(0), "use pytest": basis(1)}
    eng = PredictionEngine(LookupEmbedder(vecs, name="toy"), project_store="new-repo")
    eng.update("writing tests", "use pytest", "confirm", "x", now=T)
    return export_sqlite(tmp_path / "export.db", prediction=eng).path, eng


def _rows(path, sql):
    con = sqlite3.connect(path)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_merge_replaces_only_exported_engine_and_keeps_everything_else(tmp_path):
    prod = tmp_path / "thatch.db"
    _production(prod).close()
    before_entries = _rows(prod, "SELECT * FROM entries ORDER BY id")
    before_dump = list(sqlite3.connect(prod).iterdump())
    export, eng = _export(tmp_path)
    res = merge_into(export, prod)
    assert _rows(prod, "SELECT statement FROM predictions") == [("use pytest",)]
    assert _rows(prod, "SELECT id FROM behaviors") == [("keep-b",)]  # prediction-only export
    assert _rows(prod, "SELECT * FROM entries ORDER BY id") == before_entries
    assert _rows(prod, "SELECT * FROM dedup_pairs") == [(1, 2)]
    assert _rows(prod, "SELECT * FROM something_else") == [("x", "y")]
    assert _rows(prod, "SELECT name FROM stores ORDER BY rowid") == [("global",), ("old-repo",), ("new-repo",)]
    assert _rows(prod, "SELECT COUNT(*) FROM prediction_edges") == [(1,)]
    assert _rows(prod, "PRAGMA integrity_check") == [("ok",)]
    assert list(sqlite3.connect(res.backup_path).iterdump()) == before_dump
    assert res.removed["predictions"] == 1 and res.replaced["predictions"] == 1
    assert res.engines == ["prediction"]
    ids = eng.tables["items"]["id"].tolist()
    assert _rows(prod, "SELECT id FROM predictions") == [(ids[0],)]


def test_merge_sees_uncheckpointed_wal_content(tmp_path):
    prod = tmp_path / "thatch.db"
    con = _production(prod, wal=True)  # left open: its writes may live in the WAL
    con.execute("INSERT INTO entries (body) VALUES ('written last')")
    con.commit()
    export, _ = _export(tmp_path)
    merge_into(export, prod, backup=False)
    con.close()
    assert _rows(prod, "SELECT body FROM entries ORDER BY id DESC LIMIT 1") == [("written last",)]
    assert not (tmp_path / "thatch.db.bak").exists()


def test_failed_merge_leaves_production_untouched(tmp_path):
    prod = tmp_path / "thatch.db"
    _production(prod).close()
    before = prod.read_bytes()
    not_export = tmp_path / "plain.db"
    sqlite3.connect(not_export).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(StoreSchemaError, match="not a thatchlab export"):
        merge_into(not_export, prod)
    assert prod.read_bytes() == before
    export, _ = _export(tmp_path)
    # a production table lacking an exported column: the transaction is refused
    con = sqlite3.connect(prod)
    con.execute("DROP TABLE prediction_provenance")
    con.execute("CREATE TABLE prediction_provenance (id TEXT PRIMARY KEY, prediction_id TEXT, signal TEXT)")
    con.commit()
    con.close()
    before = prod.read_bytes()
    with pytest.raises(StoreSchemaError, match="lacks column"):
        merge_into(export, prod)
    assert prod.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_merge_behaviors_leaves_predictions(tmp_path):
    prod = tmp_path / "thatch.db"
    _production(prod).close()
    vecs = {"committing": basis(0), "run the linter": basis(1)}
    beh = BehaviorEngine(LookupEmbedder(vecs, name="toy"))
    beh.codify("committing", "run the linter", "r", now=T)
    export = export_sqlite(tmp_path / "b.db", behavior=beh).path
    merge_into(export, prod)
    assert _rows(prod, "SELECT statement FROM behaviors") == [("run the linter",)]
    assert _rows(prod, "SELECT statement FROM predictions") == [("old prediction",)]
