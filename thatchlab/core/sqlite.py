"""The one place a SQLite file is opened.

Every reader of a production file (thatch stores, ai-memory databases) and
every export goes through these helpers, so paths are always escaped the same
way: a path is turned into a ``file:`` URI with every reserved character
(``#``, ``?``, ``%``, spaces, non-ASCII) percent-encoded, and a read-only open
never creates a file.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from thatchlab.core.errors import StoreSchemaError

__all__ = ["file_uri", "connect_readonly", "table_names", "table_columns", "require_tables"]


def file_uri(path, mode: str = "ro") -> str:
    """The SQLite URI of ``path`` with reserved characters escaped.

    >>> file_uri("/tmp/p#1/thatch.db")
    'file:///tmp/p%231/thatch.db?mode=ro'
    >>> file_uri("/tmp/a b/%41.db", mode="rw")
    'file:///tmp/a%20b/%2541.db?mode=rw'
    """
    return f"{Path(path).absolute().as_uri()}?mode={mode}"


def connect_readonly(path) -> sqlite3.Connection:
    """Open a SQLite file read-only.

    A missing path, a directory, or a file that is not a readable SQLite
    database raises :class:`~thatchlab.core.errors.StoreSchemaError`.
    """
    p = Path(path)
    if p.is_dir():
        raise StoreSchemaError(f"{p}: is a directory; expected a SQLite file")
    if not p.is_file():
        raise StoreSchemaError(f"{p}: no such file")
    try:
        conn = sqlite3.connect(file_uri(p.resolve(), "ro"), uri=True)
        conn.execute("SELECT name FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.DatabaseError as exc:
        raise StoreSchemaError(f"{p}: not a readable SQLite database ({exc})") from None
    return conn


def table_names(conn) -> set[str]:
    """Names of the tables in an open database."""
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def table_columns(conn, table) -> list[str]:
    """Column names of ``table`` (empty when the table does not exist)."""
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})").fetchall()]


def require_tables(conn, label, tables: dict):
    """Raise StoreSchemaError naming each missing table or column.

    ``tables`` maps table name → the columns it must have.
    """
    for table, cols in tables.items():
        have = table_columns(conn, table)
        if not have:
            raise StoreSchemaError(f"{label}: missing table {table!r}")
        missing = [c for c in cols if c not in have]
        if missing:
            raise StoreSchemaError(f"{label}: table {table!r} lacks column(s) {missing}")
