"""Merge an export into a live production file without losing what it holds.

A production thatch file also holds memories (``entries``, ``dedup_pairs``)
and tables thatchlab does not know; shipping a replacement file would lose
them. :func:`merge_into` works on an in-memory copy of the production file
(SQLite's backup API, so WAL content is included), replaces only the rows of
the engines the export holds, in one transaction, checks integrity, keeps a
backup of the original and writes the merged file atomically.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from thatchlab.core.errors import StoreSchemaError, StoreWriteError, ThatchlabError
from thatchlab.core.schema import ENGINE_TABLES, STORES_DDL, thatch_ddl
from thatchlab.core.sqlite import connect_readonly
from thatchlab.store._core import _section, check_integrity, write_bytes_atomic

__all__ = ["merge_into", "MergeResult"]


@dataclass
class MergeResult:
    """What a merge replaced and where the backup is."""

    path: Path
    backup_path: Path | None
    engines: list
    replaced: dict = field(default_factory=dict)   # table → rows now in production
    removed: dict = field(default_factory=dict)    # table → rows that were replaced


def _engines_of(export_conn, label) -> list:
    try:
        row = export_conn.execute("SELECT value FROM thatchlab_meta WHERE key='engines'").fetchone()
    except sqlite3.DatabaseError:
        row = None
    if row is None:
        raise StoreSchemaError(f"{label}: not a thatchlab export (no thatchlab_meta 'engines' entry)")
    return json.loads(row[0])


def merge_into(export_path, production_db, backup: bool = True) -> MergeResult:
    """Replace the engines' rows of ``production_db`` with those of ``export_path``.

    Only the tables of the engines listed in the export's ``thatchlab_meta``
    change (a prediction-only export leaves behaviors alone); the ``stores``
    the new rows need are added; every other table and row is kept. The work
    happens on a copy in one transaction, followed by ``PRAGMA
    integrity_check`` and ``foreign_key_check``; with ``backup=True`` the
    original is kept as ``<name>.bak``; the merged copy then replaces the
    production file atomically. On any failure production is untouched.

    Stop production's processes (or make sure they are idle) before merging:
    a write that lands between the copy and the swap would be lost.
    """
    export_path, production_db = Path(export_path), Path(production_db)
    with contextlib.closing(connect_readonly(export_path)) as ex:
        engines = _engines_of(ex, export_path)
    if not production_db.is_file():
        raise StoreSchemaError(f"{production_db}: no such production file")
    with contextlib.closing(connect_readonly(production_db)):
        pass  # a corrupt or non-SQLite production file raises StoreSchemaError here
    backup_path = production_db.with_name(production_db.name + ".bak") if backup else None
    result = MergeResult(path=production_db, backup_path=backup_path, engines=engines)
    try:
        con = sqlite3.connect("file:thatchlab-merge?mode=memory", uri=True, isolation_level=None)
        try:
            with contextlib.closing(connect_readonly(production_db)) as src:
                src.backup(con)  # a consistent copy, WAL content included
            original = con.serialize()
            con.execute("PRAGMA foreign_keys = ON")
            con.execute("ATTACH DATABASE ? AS ex", (f"file:{export_path.resolve()}?mode=ro",))
            con.execute("BEGIN IMMEDIATE")
            con.execute(STORES_DDL.replace("stores", "main.stores", 1))
            con.execute("INSERT OR IGNORE INTO main.stores(name) VALUES ('global')")
            for engine in engines:
                if engine in ENGINE_TABLES:
                    _replace_thatch(con, engine, result)
                else:
                    _replace_tables(con, engine, result)
            con.execute("COMMIT")
            con.execute("DETACH DATABASE ex")
            check_integrity(con, production_db)
            merged = con.serialize()
        finally:
            con.close()
        if backup_path is not None:
            write_bytes_atomic(backup_path, original)
        # the old WAL/SHM belong to the old file: the merged file has none
        for side in ("-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(str(production_db) + side)
        write_bytes_atomic(production_db, merged)
    except ThatchlabError:
        raise
    except (OSError, sqlite3.Error) as exc:
        raise StoreWriteError(f"{production_db}: merge failed ({type(exc).__name__}: {exc}); "
                              "production was left as it was") from None
    return result


def _replace_thatch(con, engine, result):
    t = ENGINE_TABLES[engine]
    for stmt in thatch_ddl(engine):
        con.execute(stmt.replace("CREATE TABLE IF NOT EXISTS ", "CREATE TABLE IF NOT EXISTS main.", 1))
    for table in (t["provenance"], t["edges"], t["items"], t["matchers"]):
        result.removed[table] = con.execute(f"SELECT COUNT(*) FROM main.{table}").fetchone()[0]
        con.execute(f"DELETE FROM main.{table}")
    con.execute("INSERT OR IGNORE INTO main.stores(name) SELECT name FROM ex.stores")
    for table in (t["matchers"], t["items"], t["edges"], t["provenance"]):
        cols = [r[1] for r in con.execute(f"PRAGMA ex.table_info({table})")]
        have = {r[1] for r in con.execute(f"PRAGMA main.table_info({table})")}
        missing = [c for c in cols if c not in have]
        if missing:
            raise StoreSchemaError(f"production table {table!r} lacks column(s) {missing}")
        col_list = ", ".join(cols)
        con.execute(f"INSERT INTO main.{table} ({col_list}) SELECT {col_list} FROM ex.{table} ORDER BY rowid")
        result.replaced[table] = con.execute(f"SELECT COUNT(*) FROM main.{table}").fetchone()[0]


def _replace_tables(con, engine, result):
    key = {"belief": "beliefs", "calibration": "calibration", "anticipation": "patterns"}.get(engine, engine)
    sec = _section(key)
    for table in sec.TABLES:
        row = con.execute("SELECT sql FROM ex.sqlite_master WHERE type='table' AND name=?", (table,)).fetchone()
        if row is None:
            continue
        exists = con.execute("SELECT 1 FROM main.sqlite_master WHERE type='table' AND name=?",
                             (table,)).fetchone()
        result.removed[table] = con.execute(f"SELECT COUNT(*) FROM main.{table}").fetchone()[0] if exists else 0
        con.execute(f"DROP TABLE IF EXISTS main.{table}")
        con.execute(row[0].replace(table, f"main.{table}", 1))
        con.execute(f"INSERT INTO main.{table} SELECT * FROM ex.{table} ORDER BY rowid")
        result.replaced[table] = con.execute(f"SELECT COUNT(*) FROM main.{table}").fetchone()[0]
