"""The one place a SQLite file is opened.

Every reader of a production file (thatch stores, ai-memory databases) and
every export goes through these helpers, so paths are always escaped the same
way: a path is turned into a ``file:`` URI with every reserved character
(``#``, ``?``, ``%``, spaces, non-ASCII) percent-encoded, a read-only open
never creates a file, and a read-write open (``mode=rw``) never creates one
either: it opens a database that is already there, with a busy timeout, so
SQLite's own locks and WAL decide who writes when.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from thatchlab.core.errors import StoreSchemaError, StoreWriteError

__all__ = ["file_uri", "database_label", "SNAPSHOT_MAX_BYTES", "connect_readonly", "connect_readwrite", "connect_own", "is_busy", "table_names", "table_columns",
           "require_tables", "SQLITE_HEADER", "quote_name"]

#: The first 16 bytes of every SQLite database file (checked on bytes already read, never by
#: opening a file another connection of this process may have locked).
SQLITE_HEADER = b"SQLite format 3\x00"


def file_uri(path, mode: str = "ro") -> str:
    """The SQLite URI of ``path`` with reserved characters escaped.

    Parameters
    ----------
    path : str or os.PathLike
        The database file (made absolute).
    mode : {"ro", "rw", "rwc"}, default="ro"
        SQLite's open mode: read-only, read-write, or read-write creating the file.

    Returns
    -------
    str
        A ``file:`` URI to open with ``uri=True``.

    Examples
    --------
    >>> file_uri("/tmp/p#1/thatch.db")
    'file:///tmp/p%231/thatch.db?mode=ro'
    >>> file_uri("/tmp/a b/%41.db", mode="rw")
    'file:///tmp/a%20b/%2541.db?mode=rw'
    """
    return f"{Path(path).absolute().as_uri()}?mode={mode}"


#: Files up to this size are read through an in-memory snapshot when no other
#: connection has them open (see :func:`connect_readonly`).
SNAPSHOT_MAX_BYTES = 256 * 1024 * 1024
_SIDECARS = ("-wal", "-shm", "-journal")


class _Snapshot(sqlite3.Connection):
    """An in-memory copy of a database file that remembers which file it copies."""

    source_path: str | None = None


def database_label(conn) -> str:
    """The file a connection reads (for error messages): its snapshot's source or its main path.

    Parameters
    ----------
    conn : sqlite3.Connection
        An open connection, as :func:`connect_readonly` returns it.

    Returns
    -------
    str
        The file's path (``""`` for an in-memory database).
    """
    src = getattr(conn, "source_path", None)
    if src:
        return src
    row = conn.execute("PRAGMA database_list").fetchone()
    return row[2] if row and row[2] else ""


def _fingerprint(p: Path):
    st = p.stat()
    return st.st_ino, st.st_size, st.st_mtime_ns


def _snapshot(p: Path):
    """The file copied into memory without creating a file, or None when it changed meanwhile."""
    side = [p.with_name(p.name + s) for s in _SIDECARS]
    before = _fingerprint(p)
    src = sqlite3.connect(file_uri(p.resolve(), "ro") + "&immutable=1", uri=True)
    try:
        src.execute("SELECT name FROM sqlite_master LIMIT 1").fetchall()
        mem = sqlite3.connect(":memory:", factory=_Snapshot)
        src.backup(mem)
    finally:
        src.close()
    if any(x.exists() for x in side) or _fingerprint(p) != before:
        mem.close()  # a writer appeared while we copied: read through SQLite's locks instead
        return None
    mem.source_path = str(p.resolve())
    mem.execute("PRAGMA query_only = ON")
    return mem


def connect_readonly(path, timeout: float = 5.0) -> sqlite3.Connection:
    """Open a SQLite file read-only, creating no file beside it.

    A plain read-only open of a WAL-mode database that no process has open
    makes SQLite create its ``-wal`` and ``-shm`` files. So when none of the
    file's ``-wal``/``-shm``/``-journal`` companions exist (nobody has it open
    for writing) and it is at most :data:`SNAPSHOT_MAX_BYTES`, the file is
    copied into memory through an ``immutable`` open (which creates nothing),
    and the copy is kept only if the file did not change meanwhile; otherwise
    it is read through SQLite's normal locking, whose companion files already
    exist. The snapshot's ``source_path`` names the file for error messages
    (:func:`database_label`).

    A missing path, a directory, or a file that is not a readable SQLite
    database raises :class:`~thatchlab.core.errors.StoreSchemaError`; a file
    another process holds locked for longer than ``timeout`` seconds raises
    :class:`~thatchlab.core.errors.StoreWriteError` saying so.

    Parameters
    ----------
    path : str or os.PathLike
        An existing SQLite file.
    timeout : float, default=5.0
        Seconds to wait for another process's lock.

    Returns
    -------
    sqlite3.Connection
        A read-only connection (an in-memory snapshot, or the file itself).

    Raises
    ------
    StoreSchemaError
        A missing path, a directory, or not a readable SQLite database.
    StoreWriteError
        The file stays locked by another process for longer than ``timeout``.

    See Also
    --------
    connect_readwrite, connect_own
    """
    p = _existing_database(path)
    try:
        if (p.stat().st_size <= SNAPSHOT_MAX_BYTES
                and not any(p.with_name(p.name + s).exists() for s in _SIDECARS)):
            conn = _snapshot(p)
            if conn is not None:
                return conn
        conn = sqlite3.connect(file_uri(p.resolve(), "ro"), uri=True, timeout=timeout)
        conn.execute("SELECT name FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.DatabaseError as exc:
        if is_busy(exc):
            raise StoreWriteError(f"{p}: the database is locked by another process (an exclusive lock held "
                                  f"for more than {timeout:g} s); try again when it is done") from None
        raise StoreSchemaError(f"{p}: not a readable SQLite database ({exc})") from None
    except UnicodeDecodeError as exc:  # a damaged schema: a table name that is not UTF-8
        raise StoreSchemaError(f"{p}: not a readable SQLite database (its schema holds text that is not "
                               f"UTF-8: {exc.reason})") from None
    return conn


def connect_readwrite(path, timeout: float = 5.0) -> sqlite3.Connection:
    """Open an existing SQLite file for writing, in autocommit mode (``isolation_level=None``).

    The caller starts its own transactions (``BEGIN IMMEDIATE`` takes the
    write lock, waiting up to ``timeout`` seconds for another writer).
    Nothing is created: a missing path or a file that is not a SQLite
    database raises :class:`~thatchlab.core.errors.StoreSchemaError`; a
    database locked for longer than ``timeout`` raises
    :class:`~thatchlab.core.errors.StoreWriteError`.

    Parameters
    ----------
    path : str or os.PathLike
        An existing SQLite file.
    timeout : float, default=5.0
        Seconds to wait for another writer's lock.

    Returns
    -------
    sqlite3.Connection
        A read-write connection in autocommit mode.

    Raises
    ------
    StoreSchemaError
        A missing path, a directory, or not a writable SQLite database.
    StoreWriteError
        The database stays locked for longer than ``timeout``.

    See Also
    --------
    connect_readonly, connect_own
    """
    p = _existing_database(path)
    conn = None
    try:
        conn = sqlite3.connect(file_uri(p.resolve(), "rw"), uri=True, timeout=timeout, isolation_level=None)
        conn.execute("SELECT name FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.DatabaseError as exc:
        if conn is not None:
            conn.close()
        if is_busy(exc):
            raise StoreWriteError(f"{p}: the database is busy (locked by another process for more than "
                                  f"{timeout:g} s)") from None
        raise StoreSchemaError(f"{p}: not a writable SQLite database ({exc})") from None
    return conn


def connect_own(path, timeout: float = 30.0) -> sqlite3.Connection:
    """Open (creating it if needed) a database thatchlab itself owns, such as the embedding cache.

    The path is escaped like every other open (``mode=rwc``), in autocommit mode
    with a busy timeout, so several processes can share the file.

    Parameters
    ----------
    path : str or os.PathLike
        The database file (created when missing).
    timeout : float, default=30.0
        Seconds to wait for another process's lock.

    Returns
    -------
    sqlite3.Connection
        A read-write connection in autocommit mode.

    See Also
    --------
    connect_readwrite
    """
    return sqlite3.connect(file_uri(Path(path).resolve(), "rwc"), uri=True, timeout=timeout,
                           isolation_level=None)


def is_busy(exc) -> bool:
    """Whether a SQLite error means another connection holds a lock.

    Parameters
    ----------
    exc : sqlite3.Error
        The error caught.

    Returns
    -------
    bool
        True for ``SQLITE_BUSY`` and ``SQLITE_LOCKED`` (or, without an error code, a message
        saying locked or busy).
    """
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(exc) or "busy" in str(exc)


def _existing_database(path) -> Path:
    """``path`` as a Path when it is a regular file that can be a SQLite database.

    Only ``stat`` is used: opening and closing the file outside SQLite would
    release every POSIX lock this process holds on it, including the write
    lock of another connection (SQLite's own opens share those locks safely).
    """
    p = Path(path)
    if p.is_dir():
        raise StoreSchemaError(f"{p}: is a directory; expected a SQLite file")
    if not p.is_file():
        raise StoreSchemaError(f"{p}: no such file")
    size = p.stat().st_size
    # SQLite takes an empty file for an empty database, and a short one too; a database
    # file is whole pages of at least 512 bytes, so a shorter one that has bytes is not one
    if 0 < size < 512:
        raise StoreSchemaError(f"{p}: not a readable SQLite database (file is not a database: "
                               f"{size} bytes, shorter than one page)")
    return p


def quote_name(name: str) -> str:
    """``name`` as a quoted SQL identifier: any table, index or trigger name, a ``"`` in it included.

    Parameters
    ----------
    name : str
        The identifier.

    Returns
    -------
    str
        The identifier in double quotes, each ``"`` doubled.

    Examples
    --------
    >>> quote_name('entries'), quote_name('my "old" table')
    ('"entries"', '"my ""old"" table"')
    """
    return '"' + str(name).replace('"', '""') + '"'


def table_names(conn) -> set[str]:
    """Names of the tables in an open database.

    Parameters
    ----------
    conn : sqlite3.Connection
        An open connection.

    Returns
    -------
    set of str
        The table names.

    See Also
    --------
    table_columns, require_tables
    """
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def table_columns(conn, table) -> list[str]:
    """Column names of ``table`` (empty when the table does not exist).

    Parameters
    ----------
    conn : sqlite3.Connection
        An open connection.
    table : str
        The table's name.

    Returns
    -------
    list of str
        The column names in table order.

    See Also
    --------
    table_names, require_tables
    """
    return [r[1] for r in conn.execute(f"PRAGMA table_info({quote_name(table)})").fetchall()]


def require_tables(conn, label, tables: dict):
    """Raise StoreSchemaError naming each missing table or column.

    Parameters
    ----------
    conn : sqlite3.Connection
        An open connection.
    label : str
        How the error message names the database.
    tables : dict
        Table name → the columns it must have.

    Raises
    ------
    StoreSchemaError
        At the first table missing, or the first table missing columns (all of its missing
        columns named).

    See Also
    --------
    table_names, table_columns
    """
    for table, cols in tables.items():
        have = table_columns(conn, table)
        if not have:
            raise StoreSchemaError(f"{label}: missing table {table!r}")
        missing = [c for c in cols if c not in have]
        if missing:
            raise StoreSchemaError(f"{label}: table {table!r} lacks column(s) {missing}")
