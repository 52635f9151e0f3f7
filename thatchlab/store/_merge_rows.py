"""Replacing the exported engines' rows inside a merge's transaction.

The thatch engines' rows are replaced store by store (refusing production rows newer than the
export's ``log_end`` unless asked); another engine's tables are replaced whole. Production's
triggers on the written tables are lifted for the replacement and re-created by the caller.
"""

from __future__ import annotations

import sqlite3

from thatchlab.core.errors import StoreConflictError, StoreSchemaError
from thatchlab.core.schema import ENGINE_TABLES, thatch_ddl
from thatchlab.core.sqlite import quote_name, table_names
from thatchlab.store._core import ENGINE_KEYS, _section


def _tables_to_create(con, engines) -> list:
    """The tables merging ``engines`` creates in production (those it writes that production lacks)."""
    have = table_names(con)
    want = {"stores"}
    for engine in engines:
        if engine in ENGINE_TABLES:
            want |= {v for k, v in ENGINE_TABLES[engine].items() if k != "item_fk"}
        else:
            want |= {t for t in _section(ENGINE_KEYS[engine]).TABLES if _ex_columns(con, t)}
    return sorted(want - have)


def _lift_triggers(con, engines, result) -> list:
    """Drop production's triggers on the tables the merge writes; return ``(name, sql)`` to re-create."""
    written = {"stores"}
    for engine in engines:
        if engine in ENGINE_TABLES:
            written |= {v for k, v in ENGINE_TABLES[engine].items() if k != "item_fk"}
        else:
            written |= set(_section(ENGINE_KEYS[engine]).TABLES)
    rows = con.execute("SELECT name, tbl_name, sql FROM main.sqlite_master WHERE type = 'trigger' "
                       "ORDER BY rowid").fetchall()
    lifted = [(name, sql) for name, tbl, sql in rows if tbl in written and sql]
    for name, _ in lifted:
        con.execute(f"DROP TRIGGER main.{quote_name(name)}")
    result.triggers = [name for name, _ in lifted]
    return lifted


# ------------------------------------------------------------------ the transaction
def _main_columns(con, table) -> list:
    return [r[1] for r in con.execute(f"PRAGMA main.table_info({quote_name(table)})")]


def _ex_columns(con, table) -> list:
    return [r[1] for r in con.execute(f"PRAGMA ex.table_info({quote_name(table)})")]


def _count(con, table) -> int:
    return con.execute(f"SELECT COUNT(*) FROM main.{quote_name(table)}").fetchone()[0]


def _newer_than(con, t, where: str, args: list, log_end: str) -> int:
    """Production rows of one engine (in ``where``'s stores) whose last change is after ``log_end``:
    an item or matcher updated later, or an item with a later provenance row. A change time that
    cannot be read as a time counts as later: nothing says the row is older than the log."""
    item_fk = t["item_fk"]
    later = "coalesce(julianday({col}) > julianday(?), 1)"
    n = 0
    for table in (t["items"], t["matchers"]):
        n += con.execute(f"SELECT COUNT(*) FROM main.{table} WHERE ({where}) AND "
                         f"{later.format(col='updated_at')}", [*args, log_end]).fetchone()[0]
    n += con.execute(f"SELECT COUNT(DISTINCT p.{item_fk}) FROM main.{t['provenance']} p "
                     f"JOIN main.{t['items']} i ON i.id = p.{item_fk} WHERE ({where.replace('store', 'i.store')}) "
                     f"AND {later.format(col='p.created_at')} AND NOT {later.format(col='i.updated_at')}",
                     [*args, log_end, log_end]).fetchone()[0]
    return int(n)


def _replace_thatch(con, engine, result):
    t = ENGINE_TABLES[engine]
    fk = t["item_fk"]
    for stmt in thatch_ddl(engine):
        con.execute(stmt.replace("CREATE TABLE IF NOT EXISTS ", "CREATE TABLE IF NOT EXISTS main.", 1))
    for table in (t["matchers"], t["items"], t["edges"], t["provenance"]):
        cols, have = _ex_columns(con, table), set(_main_columns(con, table))
        missing = [c for c in cols if c not in have]
        if missing:
            raise StoreSchemaError(f"{result.path}: production table {table!r} lacks column(s) {missing} "
                                   "the export holds")
    if result.all_stores:
        stores = [r[0] for r in con.execute(
            f"SELECT store FROM main.{t['matchers']} UNION SELECT store FROM main.{t['items']} "
            f"UNION SELECT store FROM ex.{t['matchers']} UNION SELECT store FROM ex.{t['items']} ORDER BY 1")]
    else:
        stores = [r[0] for r in con.execute(
            f"SELECT store FROM ex.{t['matchers']} UNION SELECT store FROM ex.{t['items']} ORDER BY 1")]
    for name in stores:
        if name not in result.stores:
            result.stores.append(name)
    marks = ", ".join("?" for _ in stores) or "NULL"
    where = f"store IN ({marks})"
    if result.log_end:
        newer = _newer_than(con, t, where, stores, result.log_end)
        if newer and not result.replace_newer:
            raise StoreConflictError(
                f"{result.path}: {newer} {engine} row(s) in the stores being replaced "
                f"({', '.join(stores)}) changed after the export's log ended ({result.log_end}): production "
                "learned them after the log this export was replayed from, and the merge would replace "
                "them. Replay from a fresh snapshot of production, or pass replace_newer=True "
                "(--replace-newer) to replace them anyway; nothing was changed", count=newer,
                log_end=result.log_end)
        result.newer += newer
    items = f"SELECT id FROM main.{t['items']} WHERE {where}"
    matchers = f"SELECT id FROM main.{t['matchers']} WHERE {where}"
    deletes = [(t["provenance"], f"{fk} IN ({items})", stores),
               (t["edges"], f"matcher_id IN ({matchers}) OR {fk} IN ({items})", stores + stores),
               (t["items"], where, stores), (t["matchers"], where, stores)]
    for table, cond, args in deletes:
        total = _count(con, table)
        gone = con.execute(f"DELETE FROM main.{table} WHERE {cond}", args).rowcount
        result.removed[table] = result.removed.get(table, 0) + gone
        result.kept_rows[table] = total - gone
    had = {r[0] for r in con.execute("SELECT name FROM main.stores")}
    for (name,) in con.execute("SELECT name FROM ex.stores ORDER BY rowid").fetchall():
        if name not in had and name not in result.added_stores:
            result.added_stores.append(name)
    con.execute("INSERT OR IGNORE INTO main.stores(name) SELECT name FROM ex.stores ORDER BY rowid")
    for table in (t["matchers"], t["items"], t["edges"], t["provenance"]):
        col_list = ", ".join(_ex_columns(con, table))
        try:
            n = con.execute(f"INSERT INTO main.{table} ({col_list}) SELECT {col_list} FROM ex.{table} "
                            "ORDER BY rowid").rowcount
        except sqlite3.IntegrityError as exc:
            raise StoreSchemaError(f"{result.path}: the export's {table} rows collide with rows production "
                                   f"keeps in other stores ({exc}); merge with all_stores=True (--all-stores) "
                                   "to replace every store; nothing was changed") from None
        result.added[table] = n
        result.replaced[table] = _count(con, table)


def _replace_tables(con, engine, result):
    sec = _section(ENGINE_KEYS[engine])
    for table in sec.TABLES:
        cols = _ex_columns(con, table)
        if not cols:
            continue  # the export holds no such table: production's is not the export's to replace
        have = _main_columns(con, table)
        if have:
            missing = [c for c in cols if c not in have]
            if missing:
                raise StoreSchemaError(f"{result.path}: production table {table!r} lacks column(s) {missing} "
                                       "the export holds")
            extra = [c for c in have if c not in cols]
            if extra:
                raise StoreSchemaError(f"{result.path}: production table {table!r} has column(s) {extra} the "
                                       "export does "
                                       "not hold; replacing its rows would lose them")
            result.removed[table] = _count(con, table)
            con.execute(f"DELETE FROM main.{table}")
        else:
            for stmt in sec.DDL:
                if f" {table} (" in stmt or f"ON {table}(" in stmt:
                    con.execute(stmt.replace(" IF NOT EXISTS ", " IF NOT EXISTS main.", 1))
            result.removed[table] = 0
        col_list = ", ".join(cols)
        result.added[table] = con.execute(f"INSERT INTO main.{table} ({col_list}) SELECT {col_list} FROM "
                                          f"ex.{table} ORDER BY rowid").rowcount
        result.kept_rows[table] = 0
        result.replaced[table] = _count(con, table)
