"""core.sqlite: escaped paths, and read-only opens that create no file."""

import sqlite3

import pytest

from thatchlab.core.errors import StoreSchemaError
from thatchlab.core.sqlite import connect_readonly, database_label


def _wal_db(path):
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("CREATE TABLE t (x)")
    con.execute("INSERT INTO t VALUES (1), (2)")
    con.commit()
    con.close()


@pytest.mark.parametrize("name", ["plain.db", "p#1.db", "q?x=1.db", "pct%41.db", "a b.db", "ünï.db"])
def test_a_closed_wal_database_opens_read_only_without_creating_files(tmp_path, name):
    path = tmp_path / name
    _wal_db(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]
    con = connect_readonly(path)
    assert con.execute("SELECT x FROM t ORDER BY x").fetchall() == [(1,), (2,)]
    assert database_label(con) == str(path.resolve())
    with pytest.raises(sqlite3.OperationalError):
        con.execute("INSERT INTO t VALUES (3)")  # still read-only
    con.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_an_open_wal_database_is_read_live(tmp_path):
    path = tmp_path / "live.db"
    _wal_db(path)
    writer = sqlite3.connect(path)
    writer.execute("INSERT INTO t VALUES (3)")
    writer.commit()  # committed into the WAL, not checkpointed while the writer stays open
    try:
        con = connect_readonly(path)
        assert con.execute("SELECT COUNT(*) FROM t").fetchone() == (3,)
        assert database_label(con) == str(path.resolve())
        con.close()
    finally:
        writer.close()


def test_errors_name_the_file(tmp_path):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"x" * 4096)
    with pytest.raises(StoreSchemaError, match="bad.db"):
        connect_readonly(bad)
    with pytest.raises(StoreSchemaError, match="is a directory"):
        connect_readonly(tmp_path)
    with pytest.raises(StoreSchemaError, match="no such file"):
        connect_readonly(tmp_path / "missing.db")
    assert not (tmp_path / "missing.db").exists()
