"""Merge an export into a live production file, and put a backup back, without losing what it holds.

A production thatch file also holds memories (``entries``, ``dedup_pairs``)
and tables thatchlab does not know; shipping a replacement file would lose
them, and so would any copy-and-swap of a file other processes have open.
:func:`merge_into` therefore works *in* the live file, through SQLite:

1. the export is read once as bytes, its sha256 checked against its
   manifest, and validated exactly as :func:`~thatchlab.store.import_sqlite`
   validates a file (types, vector lengths, columns, the ``engines`` entry);
2. production is opened with SQLite (never created, never copied over) and
   ``BEGIN IMMEDIATE`` takes its write lock, waiting up to a busy timeout
   for another writer; its WAL is SQLite's business, so rows that live only
   in ``-wal`` are seen and kept;
3. under that lock, before anything is written, the backup is taken with
   SQLite's backup API from a connection to the live file and written
   atomically beside it, with the production file's owner and mode; an
   existing backup is never written over, and a failed merge keeps the
   backup it took;
4. in the same transaction the exported engines' rows are replaced and the
   ``stores`` entries they need added; ``integrity_check`` and
   ``foreign_key_check`` run before ``COMMIT``; any failure rolls back, so
   production holds exactly its old content. The file itself is written in
   place, so its owner and mode stay as they were.

Before any of that, the export's vectors must be in production's embedding
space: the ``model`` tags and vector lengths of its rows are compared with
production's, and another model is refused (:class:`ModelMismatchError`).
Production compares its query vectors with the stored ones, so vectors of
another model make every nudge after the merge noise; re-export in
production's space instead (``thatchlab export --embedder``).

:func:`restore` puts a backup back with the backup API, taking its safety
copy of production under the lock that copy holds; the backup's marker lists
the tables its merge created, which the restore removes again.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path

from thatchlab.core.errors import (
    StoreSchemaError,
    StoreWriteError,
    ThatchlabError,
    UnreviewedError,
)
from thatchlab.core.schema import ENGINE_TABLES, STORES_DDL
from thatchlab.core.sqlite import (
    connect_readonly,
    connect_readwrite,
    file_uri,
    is_busy,
    quote_name,
    table_names,
)
from thatchlab.store._backups import check_restorable, update_marker, write_backup
from thatchlab.store._core import (
    connect_bytes,
    write_bytes_atomic,
)
from thatchlab.store._merge_checks import (
    _check_embedding_space,
    _check_production_path,
    _check_timeout,
    _describe_unreviewed,
    _load_export,
    _production_changes,
    _require_some_tables,
)
from thatchlab.store._merge_rows import (  # _replace_thatch is looked up here at call time: tests patch it
    _lift_triggers,
    _replace_tables,
    _replace_thatch,
    _tables_to_create,
)
from thatchlab.store._releases import check_merge_release

__all__ = ["merge_into", "restore", "MergeResult", "RestoreResult", "DEFAULT_TIMEOUT"]

#: Seconds a merge or restore waits for another writer of production before giving up.
DEFAULT_TIMEOUT = 30.0


@dataclass
class MergeResult:
    """What a merge replaced (or, on a dry run, would replace) and where the backup is.

    Every parameter is kept as the attribute of the same name.

    Parameters
    ----------
    path : pathlib.Path
        The production file.
    backup_path : pathlib.Path or None
        The backup taken before the merge (None without one).
    engines : list
        The engines merged.
    replaced : dict, default={}
        Each replaced table → the rows it holds afterwards.
    removed : dict, default={}
        Each replaced table → the rows removed from it.
    kept : list, default=[]
        The production tables left exactly as they were.
    added_stores : list, default=[]
        The ``stores`` entries added for the new rows.
    dry_run : bool, default=False
        Whether nothing was written.
    unreviewed : dict, default={}
        The export's unreviewed values (``{engine: {parameter: value}}``).
    log_end : str or None, default=None
        The export's ``log_end``.
    stores : list, default=[]
        The stores whose rows were replaced.
    added : dict, default={}
        Each replaced table → the export's rows inserted.
    kept_rows : dict, default={}
        Each replaced table → the production rows it kept (other stores').
    triggers : list, default=[]
        Production's triggers on the tables the merge writes: dropped inside the transaction and
        re-created, with their own SQL, before it commits, so a trigger never fires on the merge's
        deletes and inserts and every table the merge does not replace stays exactly as it was
        (listed on a dry run too).
    newer : int, default=0
        Production rows replaced that changed after ``log_end`` (with ``replace_newer``).
    all_stores, replace_newer : bool, default=False
        The options the merge ran with.
    interrupted : bool, default=False
        A Ctrl-C arrived after ``COMMIT`` (the merge succeeded; the interrupt was held back).
    embedder : dict or None, default=None
        The export's embedding space (``name``, ``dim``, ``fingerprint``).
    production_models : dict, default={}
        ``{model tag: vector lengths}`` of production's rows before the merge.
    model_mismatch : str or None, default=None
        The mismatch that ``allow_model_mismatch`` let through (None when the spaces agree).
    code_changes : dict, default={}
        Each engine → the shipped values that live in production's code (K and P0 of the scoring
        engines), each as a pair of production's value (or None) and the shipped one. A merge ships
        rows, not code, so these take effect only when production's code is changed (the CLI
        prints them).
    environment : list, default=[]
        The settings to put in production's environment.
    """

    path: Path
    backup_path: Path | None
    engines: list
    replaced: dict = field(default_factory=dict)
    removed: dict = field(default_factory=dict)
    kept: list = field(default_factory=list)
    added_stores: list = field(default_factory=list)
    dry_run: bool = False
    unreviewed: dict = field(default_factory=dict)
    log_end: str | None = None
    stores: list = field(default_factory=list)
    added: dict = field(default_factory=dict)
    kept_rows: dict = field(default_factory=dict)
    triggers: list = field(default_factory=list)
    newer: int = 0
    all_stores: bool = False
    replace_newer: bool = False
    interrupted: bool = False
    embedder: dict | None = None
    production_models: dict = field(default_factory=dict)
    model_mismatch: str | None = None
    code_changes: dict = field(default_factory=dict)
    environment: list = field(default_factory=list)


@dataclass
class RestoreResult:
    """What :func:`restore` put back.

    Every parameter is kept as the attribute of the same name.

    Parameters
    ----------
    path : pathlib.Path
        The production file.
    backup_path : pathlib.Path
        The backup restored.
    counts : dict, default={}
        Each table → its rows now.
    safety_path : pathlib.Path or None, default=None
        The backup of production taken just before.
    notes : list, default=[]
        What else happened (a page size that changed since the backup).
    """

    path: Path
    backup_path: Path
    counts: dict = field(default_factory=dict)
    safety_path: Path | None = None
    notes: list = field(default_factory=list)


class _Busy(Exception):
    """Raised from a backup's progress callback when the other side stays locked."""


def merge_into(export_path, production_db, backup: bool = True, dry_run: bool = False, *,
               verify_manifest: bool = True, timeout: float = DEFAULT_TIMEOUT,
               allow_unreviewed: bool = False, all_stores: bool = False,
               replace_newer: bool = False, allow_release_mismatch: bool = False,
               allow_model_mismatch: bool = False) -> MergeResult:
    """Replace the engines' rows of ``production_db`` with those of ``export_path``.

    Only the tables of the engines listed in the export's ``thatchlab_meta`` change (a prediction-only
    export leaves behaviors alone); the ``stores`` the new rows need are added; every other table and
    row, and the file's owner and mode, are kept. The work is one transaction in the live file under
    its write lock (see the module notes); on any failure it is rolled back and production holds
    exactly what it held before.

    Parameters
    ----------
    export_path : str or os.PathLike
        A file written by :func:`~thatchlab.store.export_sqlite`.
    production_db : str or os.PathLike
        The production SQLite file; it must exist and be a database.
    backup : bool, default=True
        Keep the content before the merge as a new file ``<name>.<UTC time>.bak`` with a marker
        ``<backup>.json`` beside it (see the module notes); ``False`` writes none.
    dry_run : bool, default=False
        Report what would change (``replaced``, ``removed``, ``kept``, ``added_stores``) without
        writing anything: the merge runs on an in-memory copy of production.
    verify_manifest : bool, default=True
        Check the export's sha256 against ``<stem>.manifest.json`` beside it (which must exist).
    timeout : float, default=DEFAULT_TIMEOUT
        Seconds to wait for another writer of production.
    allow_unreviewed : bool, default=False
        Merge an export listing ``unreviewed`` values (parameters no decision shipped).
    all_stores : bool, default=False
        Replace the exported engines' rows in every store of production; by default only in the
        stores the export holds rows for (other stores keep theirs).
    replace_newer : bool, default=False
        Replace production rows (in the stores being replaced) changed after the export's ``log_end``.
    allow_release_mismatch : bool, default=False
        Merge an export made for another thatch release than the one production's schema shows (a
        ``prediction_dedup_pairs`` table: ``07ecf87``; none: ``v0.1.30``).
    allow_model_mismatch : bool, default=False
        Merge an export whose vectors come from another embedding model than production's rows
        (other ``model`` tags or vector lengths), which makes every later nudge noise (module notes).

    Returns
    -------
    MergeResult
        What was replaced, removed, kept and added, and where the backup is.

    Raises
    ------
    StoreSchemaError
        The export is not one, fails validation (naming table, row and column) or its manifest, or
        lists no engines; or production is not a database or lacks a column the export holds.
    StoreWriteError
        Production stayed busy longer than ``timeout``, or writing failed; nothing was changed.
    UnreviewedError, ReleaseMismatchError, StoreConflictError, ModelMismatchError
        Refusals the ``allow_*`` and ``replace_newer`` options lift, raised before anything is
        written (naming each unreviewed value, both releases, the count of newer rows, both models).

    See Also
    --------
    export_sqlite, restore

    Examples
    --------
    >>> import pathlib, tempfile, thatchlab
    >>> from thatchlab.store import export_sqlite
    >>> emb = thatchlab.LookupEmbedder({"writing tests": [1, 0], "use pytest": [0, 1]}, name="toy")
    >>> eng = thatchlab.PredictionEngine(emb)
    >>> _ = eng.update("writing tests", "use pytest", "confirm", None, now="2026-01-01T09:00:00Z")
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> prod = export_sqlite(folder / "thatch.db", prediction=eng).path  # stands in for production
    >>> res = merge_into(export_sqlite(folder / "next.db", prediction=eng).path, prod)
    >>> res.replaced["predictions"], res.backup_path is not None
    (1, True)
    """
    return _merge(Path(export_path), Path(production_db), backup=backup, dry_run=dry_run,
                  verify_manifest=verify_manifest, timeout=timeout, allow_unreviewed=allow_unreviewed,
                  all_stores=all_stores, replace_newer=replace_newer, allow_release_mismatch=allow_release_mismatch,
                  allow_model_mismatch=allow_model_mismatch)


def _merge(export_path: Path, production_db: Path, *, backup, dry_run, verify_manifest, timeout,
           allow_unreviewed, all_stores, replace_newer, allow_release_mismatch,
           allow_model_mismatch) -> MergeResult:
    """:func:`merge_into`'s steps: check the export and production before anything is opened for
    writing, then open production (or an in-memory copy of it) and merge under its write lock."""
    _check_timeout(timeout)
    data, engines, unreviewed, log_end, info = _load_export(export_path, verify_manifest)
    if unreviewed and not allow_unreviewed:
        raise UnreviewedError(
            f"{export_path}: carries parameter values no decision shipped ({_describe_unreviewed(unreviewed)}); "
            "they differ from what production runs and were never tested against it. Decide them "
            "(thatchlab.decide.decide, thatchlab decide) and export with the decision, or pass allow_unreviewed=True "
            "(--allow-unreviewed) to merge them anyway; production was not touched",
            unreviewed=unreviewed)
    _check_production_path(production_db)
    check_merge_release(data, export_path, production_db, allow=allow_release_mismatch)
    result = MergeResult(path=production_db, backup_path=None, engines=engines, dry_run=dry_run,
                         unreviewed=unreviewed, log_end=log_end, embedder=info["embedder"],
                         **_production_changes(info["manifest"]))
    con, deferred = None, _SigintDeferred()  # entered at COMMIT only
    try:
        con = _open_production(production_db, timeout, dry_run)
        _attach_and_lock(con, data, production_db)
        try:
            _merge_locked(con, export_path, engines, result, deferred, backup=backup, timeout=timeout,
                          allow_model_mismatch=allow_model_mismatch, all_stores=all_stores,
                          replace_newer=replace_newer)
        except BaseException:
            deferred.__exit__(None, None, None)
            _rollback(con)
            raise
    except ThatchlabError:
        raise
    except (OSError, sqlite3.Error) as exc:
        raise _write_error(production_db, exc, timeout, "merge failed", "the transaction was rolled back and "
                           "production was left as it was") from None
    finally:
        if con is not None:
            con.close()
        if deferred.active:
            deferred.__exit__(None, None, None)
            result.interrupted = deferred.hit
    return result


def _open_production(production_db: Path, timeout, dry_run: bool) -> sqlite3.Connection:
    """Production opened for writing, or on a dry run an in-memory copy of it."""
    if not dry_run:
        return connect_readwrite(production_db, timeout=timeout)
    con = sqlite3.connect(":memory:", isolation_level=None)
    with contextlib.closing(connect_readonly(production_db, timeout=timeout)) as src:
        _backup(src, con, production_db, timeout)
    copy = bytearray(con.serialize())
    copy[18:20] = b"\x01\x01"  # a copy of a WAL file, held in memory in rollback mode
    con.deserialize(bytes(copy))
    return con


def _attach_and_lock(con, data: bytes, production_db: Path) -> None:
    """Attach the export as ``ex`` and take production's write lock (``BEGIN IMMEDIATE``)."""
    _require_some_tables(con, production_db)
    # foreign keys stay off while rows are replaced: a cascade must never reach a table
    # thatchlab does not know; foreign_key_check refuses dangling references instead
    con.execute("PRAGMA foreign_keys = OFF")
    con.execute("ATTACH DATABASE ':memory:' AS ex")  # ATTACH is refused inside a transaction
    con.deserialize(data, name="ex")
    con.execute("BEGIN IMMEDIATE")  # production's write lock, waiting up to `timeout`


def _merge_locked(con, export_path: Path, engines, result, deferred, *, backup, timeout,
                  allow_model_mismatch, all_stores, replace_newer) -> None:
    """Under the write lock: check the embedding space, back up, replace the rows with production's
    triggers lifted, check the result, then commit (or roll back a dry run)."""
    production_db = result.path
    fk_before = set(con.execute("PRAGMA main.foreign_key_check").fetchall())
    _check_embedding_space(con, production_db, export_path, result, allow_model_mismatch)
    if backup and not result.dry_run:
        plan = {"export": str(export_path.resolve()), "engines": list(engines),
                "created": _tables_to_create(con, engines)}
        result.backup_path = _write_backup(production_db, timeout, "merge", merge=plan)
    triggers = _lift_triggers(con, engines, result)
    _apply(con, engines, result, all_stores=all_stores, replace_newer=replace_newer)
    for _, sql in triggers:
        con.execute(sql)
    _check_merged(con, production_db, fk_before)
    if result.dry_run:
        con.execute("ROLLBACK")
        return
    deferred.__enter__()  # from COMMIT on, a Ctrl-C cannot make a success look failed
    con.execute("COMMIT")
    if result.backup_path is not None:
        _record_merge(production_db, result)


def _write_error(production, exc, timeout, what: str, after: str) -> StoreWriteError:
    """The typed error of a merge or restore that SQLite or the OS stopped: busy, or failed."""
    if is_busy(exc):
        return StoreWriteError(f"{production}: production is busy: another connection held its write lock "
                               f"for more than {timeout:g} s; nothing was changed")
    return StoreWriteError(f"{production}: {what} ({type(exc).__name__}: {exc}); {after}")


class _SigintDeferred:
    """Hold back SIGINT (main thread only) and remember whether one arrived."""

    def __init__(self):
        self.hit, self.active, self._old = False, False, None

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self._old = signal.signal(signal.SIGINT, self._note)
            self.active = True
        return self

    def _note(self, signum, frame):
        self.hit = True

    def __exit__(self, *exc):
        if self.active:
            signal.signal(signal.SIGINT, self._old)
            self.active = False
        return False


def restore(backup, production, *, timeout: float = DEFAULT_TIMEOUT) -> RestoreResult:
    """Put a backup of a merge back into the live ``production`` file, after taking a safety backup.

    Only a backup thatchlab took of *this* production file is restored
    (:func:`~thatchlab.store._backups.check_restorable`: its marker names
    this file, its bytes are what was taken, its other tables match
    production's; an export, a backup of another file or swapped arguments
    raise :class:`StoreSchemaError` and nothing changes). The backup's pages
    are copied into production with SQLite's backup API, which takes
    production's write lock at its first step and holds it until the copy
    commits as one transaction (waiting up to ``timeout`` for another
    writer). Right after that first step, under the same lock, production's
    current content is written as a new backup (reason ``before restore``,
    ``RestoreResult.safety_path``): no write can land between the safety
    copy and the restore. The file is written in place, so its owner, mode
    and journal mode stay; the tables a merge created are gone again, every
    other table holds the backup's rows.

    Parameters
    ----------
    backup : str or os.PathLike
        A backup a merge took of ``production``.
    production : str or os.PathLike
        The live production file.
    timeout : float, default=DEFAULT_TIMEOUT
        Seconds to wait for another writer of production.

    Returns
    -------
    RestoreResult
        The rows per table now, the safety backup's path and notes.

    Raises
    ------
    StoreSchemaError
        The backup is not one of this file (or fails its integrity check, or holds no tables), or
        both paths are the same file.
    StoreWriteError
        Production stayed busy longer than ``timeout``, or the copy failed; nothing was changed.
    InputError
        ``timeout`` is not a number of seconds between 0 and 86400.

    See Also
    --------
    merge_into : what took the backup.
    list_backups : the backups there are.
    """
    _check_timeout(timeout)
    backup, production = Path(backup), Path(production)
    data = _checked_backup(backup, production, timeout)
    try:
        counts, safety, notes = _copy_backup(data, production, timeout)
    except ThatchlabError:
        raise
    except (OSError, sqlite3.Error) as exc:
        raise _write_error(production, exc, timeout, "restore failed", "production was left as it was") from None
    return RestoreResult(path=production, backup_path=backup, counts=counts,
                         safety_path=safety[0] if safety else None, notes=notes)


def _checked_backup(backup: Path, production: Path, timeout) -> bytes:
    """The backup's bytes, once it is known intact, non-empty and restorable into ``production``."""
    _check_production_path(production)
    if backup.resolve() == production.resolve():
        raise StoreSchemaError(f"{backup}: the backup and production are the same file")
    with contextlib.closing(connect_readonly(backup, timeout=timeout)) as src:
        res = src.execute("PRAGMA integrity_check").fetchall()
        if res != [("ok",)]:
            raise StoreSchemaError(f"{backup}: the backup fails its integrity check ({res[:3]}); "
                                   "refusing to restore it")
        if not table_names(src):
            raise StoreSchemaError(f"{backup}: the backup holds no tables; refusing to restore it")
    data = backup.read_bytes()
    check_restorable(backup, production, data=data)  # the bytes checked are the bytes restored
    return data


def _copy_backup(data: bytes, production: Path, timeout) -> tuple:
    """Copy the backup's pages into production a page a step, writing the safety backup under the
    lock the first step takes; ``(rows per table, [safety path], notes)``."""
    safety: list = []

    def progress(status, remaining, total):
        if status in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
            raise _Busy()
        if not safety:  # the first page is copied: production's write lock is ours until the copy commits
            safety.append(_write_backup(production, timeout, "before restore", locked_file=not wal))

    with contextlib.closing(connect_bytes(data)) as src, \
            contextlib.closing(connect_readwrite(production, timeout=timeout)) as dst:
        # in WAL mode readers see the committed state beside the copy's lock; in rollback mode the
        # copy's exclusive lock keeps them out, and the file holds the committed state until it commits
        wal = str(dst.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal"
        notes, was_wal = _match_page_size(src, dst, wal)
        wal = was_wal
        try:
            src.backup(dst, pages=1, progress=progress)  # a page a step: the lock is held from step one
        except _Busy:
            raise StoreWriteError(f"{production}: production is busy: another connection held its lock "
                                  f"for more than {timeout:g} s; nothing was changed") from None
        if notes:  # back to WAL, as production ran
            dst.execute("PRAGMA journal_mode=WAL")
        res = dst.execute("PRAGMA integrity_check").fetchall()
        if res != [("ok",)]:  # pragma: no cover - the copy of an intact file is intact
            raise StoreWriteError(f"{production}: integrity check after restoring failed: {res[:3]}")
        counts = {t: dst.execute(f"SELECT COUNT(*) FROM {quote_name(t)}").fetchone()[0]
                  for t in sorted(table_names(dst)) if not t.startswith("sqlite_")}
    return counts, safety, notes


def _match_page_size(src, dst, wal: bool) -> tuple:
    """SQLite cannot copy pages into a WAL-mode file whose page size differs from the source's
    (production may have been vacuumed to another page size since the backup). Take production
    out of WAL mode for the copy (which needs no other connection open: SQLite refuses otherwise,
    and nothing changes), so the copy brings back the backup's page size with its rows, and say
    so. Returns ``(notes, wal still on)``."""
    theirs = int(src.execute("PRAGMA page_size").fetchone()[0])
    ours = int(dst.execute("PRAGMA page_size").fetchone()[0])
    if theirs == ours or not wal:
        return [], wal
    mode = str(dst.execute("PRAGMA journal_mode=DELETE").fetchone()[0]).lower()
    if mode == "wal":
        raise StoreWriteError("production's page size changed since the backup "
                              f"({theirs} → {ours} bytes) and, in WAL mode, SQLite copies pages only between "
                              "equal page sizes; close the other connections to production (stop thatch) so "
                              "restore can leave WAL mode for the copy; nothing was changed")
    return [f"production's page size changed since the backup ({ours} → {theirs} bytes, the backup's): "
            "restored with the backup's page size, leaving WAL mode for the copy and returning to it"], False


def _rollback(con):
    with contextlib.suppress(sqlite3.Error):
        if con.in_transaction:
            con.execute("ROLLBACK")


def _backup(src, dst, label, timeout):
    """SQLite's backup API in one step, giving up when a lock is held longer than ``timeout``."""

    def progress(status, remaining, total):
        if status in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
            raise _Busy()

    # the busy handler of each connection waits up to its timeout before a step reports busy
    with contextlib.suppress(sqlite3.Error):
        src.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
    try:
        src.backup(dst, pages=-1, progress=progress)
    except _Busy:
        raise StoreWriteError(f"{label}: production is busy: another connection held its lock for more "
                              f"than {timeout:g} s; nothing was changed") from None


def _record_merge(production: Path, result) -> None:
    """Add the rows the merge removed and added per table to its backup's marker (best effort: the
    tables it created are in the marker already, which is all a restore needs)."""
    with contextlib.suppress(OSError, ValueError):
        update_marker(result.backup_path, write_bytes_atomic, os.stat(production),
                      removed=dict(result.removed), added=dict(result.added),
                      added_stores=list(result.added_stores))


def _write_backup(production: Path, timeout, reason: str, merge: dict | None = None,
                  locked_file: bool = False) -> Path:
    """A consistent copy of the live file as a new backup (with its marker); returns its path.

    Called while the merge holds production's write lock: the read-only
    connection sees the last committed state (WAL included) and nothing can
    commit until the merge does. ``locked_file``: this process holds the
    exclusive lock of a rollback-journal file whose changes are not written
    yet (a restore's first step), so the file itself is the committed state
    and is read without taking a lock.
    """
    st = os.stat(production)
    mem = sqlite3.connect(":memory:")
    try:
        if locked_file:
            src = sqlite3.connect(file_uri(production.resolve(), "ro") + "&immutable=1", uri=True)
        else:
            src = connect_readonly(production, timeout=timeout)
        with contextlib.closing(src):
            _backup(src, mem, production, timeout)
        data = bytearray(mem.serialize())
    finally:
        mem.close()
    # bytes 18-19 say "WAL" when production is in WAL mode; the copy is a complete file
    # in rollback-journal mode, so it opens (read-only too) without -wal/-shm beside it
    data[18:20] = b"\x01\x01"
    return write_backup(production, bytes(data), reason, st, write_bytes_atomic, merge=merge)


def _apply(con, engines, result, all_stores: bool = False, replace_newer: bool = False):
    result.all_stores, result.replace_newer = bool(all_stores), bool(replace_newer)
    before = sorted(t for t in table_names(con) if not t.startswith("sqlite_"))
    if any(e in ENGINE_TABLES for e in engines):
        con.execute(STORES_DDL.replace("stores", "main.stores", 1))
        con.execute("INSERT OR IGNORE INTO main.stores(name) VALUES ('global')")
    for engine in engines:
        if engine in ENGINE_TABLES:
            _replace_thatch(con, engine, result)
        else:
            _replace_tables(con, engine, result)
    touched = set(result.replaced) | ({"stores"} if result.added_stores else set())
    result.kept = [t for t in before if t not in touched]


def _check_merged(con, label, fk_before):
    res = con.execute("PRAGMA main.integrity_check").fetchall()
    if res != [("ok",)]:
        raise StoreWriteError(f"{label}: integrity check of the merged content failed: {res[:3]}; "
                              "rolled back, production was left as it was")
    new = [r for r in con.execute("PRAGMA main.foreign_key_check").fetchall() if r not in fk_before]
    if new:
        raise StoreWriteError(f"{label}: the merge would leave rows pointing at rows that are gone "
                              f"(foreign_key_check: {new[:3]}); rolled back, production was left as it was")
