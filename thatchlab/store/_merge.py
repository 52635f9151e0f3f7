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
3. under that lock the backup is taken with SQLite's backup API from a
   connection to the live file and written atomically beside it, with the
   production file's owner and mode;
4. in the same transaction the exported engines' rows are replaced and the
   ``stores`` entries they need added; ``integrity_check`` and
   ``foreign_key_check`` run before ``COMMIT``; any failure rolls back, so
   production holds exactly its old content. The file itself is written in
   place, so its owner and mode stay as they were.

Before any of that, the export's vectors must be in production's embedding
space: the ``model`` tags and vector lengths of its rows are compared with
production's, and another model is refused (:class:`ModelMismatchError`).

:func:`restore` puts a backup back with the backup API, taking its safety
copy of production under the lock that copy holds; the backup's marker lists
the tables its merge created, which the restore removes again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import signal
import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path

from thatchlab.core.errors import (
    InputError,
    ModelMismatchError,
    StoreConflictError,
    StoreSchemaError,
    StoreWriteError,
    ThatchlabError,
    UnreviewedError,
)
from thatchlab.core.schema import ENGINE_TABLES, STORES_DDL, thatch_ddl
from thatchlab.core.sqlite import (
    SQLITE_HEADER,
    connect_readonly,
    connect_readwrite,
    file_uri,
    is_busy,
    quote_name,
    table_names,
)
from thatchlab.embed import model_basename
from thatchlab.store._backups import check_restorable, update_marker, write_backup
from thatchlab.store._core import (
    ENGINE_KEYS,
    _section,
    connect_bytes,
    read_contents,
    write_bytes_atomic,
)
from thatchlab.store._releases import check_merge_release

__all__ = ["merge_into", "restore", "MergeResult", "RestoreResult", "DEFAULT_TIMEOUT"]

#: Seconds a merge or restore waits for another writer of production before giving up.
DEFAULT_TIMEOUT = 30.0


@dataclass
class MergeResult:
    """What a merge replaced (or, on a dry run, would replace) and where the backup is.

    ``replaced`` maps each replaced table to the rows it holds afterwards,
    ``removed`` to the rows it held before; ``kept`` lists the production
    tables left exactly as they were; ``added_stores`` the ``stores``
    entries added for the new rows.
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
    """What :func:`restore` put back: ``counts`` maps each table to its rows now; ``safety_path``
    is the backup of production taken just before; ``notes`` says what else happened (a page size
    that changed since the backup)."""

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

    Only the tables of the engines listed in the export's ``thatchlab_meta``
    change (a prediction-only export leaves behaviors alone); the ``stores``
    the new rows need are added; every other table and row, and the file's
    owner and mode, are kept. The work is one transaction in the live file
    under its write lock (see the module notes); on any failure it is rolled
    back and production holds exactly what it held before.

    Parameters
    ----------
    export_path : a file written by :func:`~thatchlab.store.export_sqlite`.
    production_db : the production SQLite file; it must exist and be a database.
    backup : keep the content before the merge as a new file
        ``<name>.<UTC time>.bak`` (taken under the same lock, before anything
        is written, with production's owner and mode, and a marker
        ``<backup>.json`` beside it); an existing backup is never written
        over, and a failed merge keeps the backup it took. ``False`` writes
        none.
    dry_run : report what would change (``replaced``, ``removed``, ``kept``,
        ``added_stores``) without writing anything: the merge runs on an
        in-memory copy of production.
    verify_manifest : check the export's sha256 against ``<stem>.manifest.json``
        beside it; a missing manifest is refused unless this is ``False``.
    timeout : seconds to wait for another writer of production; a lock held
        longer raises :class:`StoreWriteError` saying production is busy.
    all_stores : replace the exported engines' rows in every store of
        production; by default only in the stores the export holds rows for
        (other stores keep theirs).
    replace_newer : replace production rows (of the exported engines, in the
        stores being replaced) that changed after the export's ``log_end``;
        without it such rows raise :class:`StoreConflictError` naming their
        count, and nothing changes.
    allow_model_mismatch : merge an export whose vectors come from another
        embedding model than production's rows (their ``model`` tags name
        other weights, or their vectors have another length); without it
        such an export raises :class:`ModelMismatchError` naming both models,
        before anything is written. Production compares its query vectors
        with the stored ones, so vectors of another model make every nudge
        after the merge noise; re-export in production's space instead
        (``thatchlab export --embedder``).
    allow_unreviewed : merge an export whose ``thatchlab_meta`` lists
        ``unreviewed`` values (parameters no decision shipped); without it
        such an export raises :class:`UnreviewedError` naming each one, before
        production is opened.
    allow_release_mismatch : merge an export made for another thatch release
        than the one production's schema shows (a ``prediction_dedup_pairs``
        table: ``07ecf87``; none: ``v0.1.30``); without it such an export
        raises :class:`ReleaseMismatchError` naming both, before production
        is written.

    Raises
    ------
    StoreSchemaError
        The export is not one (or fails validation, naming table, row and
        column), its sha256 differs from the manifest, it lists no engines,
        or production is not a database or lacks a column the export holds.
    StoreWriteError
        Production stayed busy, or writing failed; nothing was changed.
    UnreviewedError
        The export carries unreviewed values and ``allow_unreviewed`` is false.
    StoreConflictError
        Production holds rows newer than the export's ``log_end`` in the
        stores being replaced, and ``replace_newer`` is false.
    ModelMismatchError
        Production's rows were embedded by another model than the export's,
        and ``allow_model_mismatch`` is false.

    ``MergeResult.code_changes`` maps each engine to the shipped values that
    live in production's code (K and P0 of the scoring engines), each as a
    pair of production's value (or None) and the shipped one. A merge ships
    rows, not code, so these take effect only when production's code is
    changed (the CLI prints them); ``MergeResult.environment`` lists the
    settings to put in production's environment.

    Production's triggers on the tables the merge writes are dropped inside
    the transaction and re-created, with their own SQL, before it commits: a
    trigger never fires on the merge's deletes and inserts, so every table
    the merge does not replace stays exactly as it was (``triggers`` lists
    them, on a dry run too).
    """
    export_path, production_db = Path(export_path), Path(production_db)
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
    con = deferred = None
    try:
        if dry_run:
            con = sqlite3.connect(":memory:", isolation_level=None)
            with contextlib.closing(connect_readonly(production_db, timeout=timeout)) as src:
                _backup(src, con, production_db, timeout)
            copy = bytearray(con.serialize())
            copy[18:20] = b"\x01\x01"  # a copy of a WAL file, held in memory in rollback mode
            con.deserialize(bytes(copy))
        else:
            con = connect_readwrite(production_db, timeout=timeout)
        _require_some_tables(con, production_db)
        # foreign keys stay off while rows are replaced: a cascade must never reach a table
        # thatchlab does not know; foreign_key_check refuses dangling references instead
        con.execute("PRAGMA foreign_keys = OFF")
        con.execute("ATTACH DATABASE ':memory:' AS ex")  # ATTACH is refused inside a transaction
        con.deserialize(data, name="ex")
        con.execute("BEGIN IMMEDIATE")  # production's write lock, waiting up to `timeout`
        try:
            fk_before = set(con.execute("PRAGMA main.foreign_key_check").fetchall())
            _check_embedding_space(con, production_db, export_path, result, allow_model_mismatch)
            if backup and not dry_run:
                plan = {"export": str(export_path.resolve()), "engines": list(engines),
                        "created": _tables_to_create(con, engines)}
                result.backup_path = _write_backup(production_db, timeout, "merge", merge=plan)
            triggers = _lift_triggers(con, engines, result)
            _apply(con, engines, result, all_stores=all_stores, replace_newer=replace_newer)
            for _, sql in triggers:
                con.execute(sql)
            _check_merged(con, production_db, fk_before)
            if dry_run:
                con.execute("ROLLBACK")
            else:
                deferred = _SigintDeferred()  # from COMMIT on, a Ctrl-C cannot make a success look failed
                deferred.__enter__()
                con.execute("COMMIT")
                if result.backup_path is not None:
                    _record_merge(production_db, result)
        except BaseException:
            if deferred is not None:
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
        if deferred is not None and deferred.active:
            deferred.__exit__(None, None, None)
            result.interrupted = deferred.hit
    return result


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
    """
    _check_timeout(timeout)
    backup, production = Path(backup), Path(production)
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
    safety: list = []

    def progress(status, remaining, total):
        if status in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
            raise _Busy()
        if not safety:  # the first page is copied: production's write lock is ours until the copy commits
            safety.append(_write_backup(production, timeout, "before restore", locked_file=not wal))

    try:
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
    except ThatchlabError:
        raise
    except (OSError, sqlite3.Error) as exc:
        raise _write_error(production, exc, timeout, "restore failed", "production was left as it was") from None
    return RestoreResult(path=production, backup_path=backup, counts=counts,
                         safety_path=safety[0] if safety else None, notes=notes)


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


# ------------------------------------------------------------------ the export
def _load_export(export_path: Path, verify_manifest: bool):
    """The export's bytes and its engines, after every check a merge makes before writing."""
    if export_path.is_dir():
        raise StoreSchemaError(f"{export_path}: is a directory; expected a thatchlab export")
    if not export_path.is_file():
        raise StoreSchemaError(f"{export_path}: no such file")
    try:
        data = export_path.read_bytes()
    except OSError as exc:
        raise StoreSchemaError(f"{export_path}: cannot read ({exc})") from None
    if data[:len(SQLITE_HEADER)] != SQLITE_HEADER:
        raise StoreSchemaError(f"{export_path}: not a readable SQLite database (no SQLite header)")
    if len(data) < 512:  # a database is whole pages of at least 512 bytes, header included
        raise StoreSchemaError(f"{export_path}: not a readable SQLite database ({len(data)} bytes; "
                               "truncated)")
    manifest_path = export_path.with_name(export_path.stem + ".manifest.json")
    manifest = _manifest(manifest_path) if verify_manifest and manifest_path.is_file() else None
    if manifest is not None:
        want, got = manifest.get("sha256"), hashlib.sha256(data).hexdigest()
        if want != got:
            raise StoreSchemaError(f"{export_path}: sha256 {got} differs from {want!r} in {manifest_path.name}: "
                                   "the file changed after it was exported; refusing to merge it")
    if data[18] != 1 or data[19] != 1:
        raise StoreSchemaError(f"{export_path}: the export is in WAL mode; exports are written in "
                               "rollback-journal mode (run PRAGMA journal_mode=DELETE on it first)")
    with contextlib.closing(connect_bytes(data)) as ex:
        engines = _engines_of(ex, export_path)
        if verify_manifest and manifest is None:
            raise StoreSchemaError(f"{export_path}: no manifest {manifest_path.name} beside it to check the "
                                   "file's sha256 against; pass verify_manifest=False (--no-verify-manifest) "
                                   "to merge without that check")
        res = ex.execute("PRAGMA integrity_check").fetchall()
        if res != [("ok",)]:
            raise StoreSchemaError(f"{export_path}: the export fails its integrity check ({res[:3]})")
        meta = read_contents(ex, export_path).meta  # exactly what import_sqlite checks
        unreviewed = meta.get("unreviewed") or {}
        log_end = meta.get("log_end")
        if not engines:
            raise StoreSchemaError(f"{export_path}: table 'thatchlab_meta', row 'engines' lists no engine "
                                   "([]); there is nothing to merge")
    if manifest is not None and manifest.get("engines") != engines:
        raise StoreSchemaError(f"{export_path}: engines {engines} differ from {manifest.get('engines')!r} in "
                               f"{manifest_path.name}")
    if manifest is not None and (manifest.get("unreviewed") or {}) != unreviewed:
        raise StoreSchemaError(f"{export_path}: unreviewed values {unreviewed} differ from "
                               f"{manifest.get('unreviewed')!r} in {manifest_path.name}")
    return data, engines, unreviewed, log_end, {"embedder": meta.get("embedder"), "manifest": manifest}


def _describe_unreviewed(unreviewed: dict) -> str:
    return "; ".join(f"{engine}: " + ", ".join(f"{k}={v!r}" for k, v in values.items())
                     for engine, values in unreviewed.items())


def _manifest(path: Path) -> dict:
    try:
        out = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise StoreSchemaError(f"{path}: not a readable manifest ({exc})") from None
    if not isinstance(out, dict) or "sha256" not in out:
        raise StoreSchemaError(f"{path}: not a thatchlab manifest (no 'sha256')")
    return out


def _engines_of(export_conn, label) -> list:
    try:
        row = export_conn.execute("SELECT value FROM thatchlab_meta WHERE key='engines'").fetchone()
    except sqlite3.DatabaseError:
        row = None
    if row is None:
        raise StoreSchemaError(f"{label}: not a thatchlab export (no thatchlab_meta 'engines' entry)")
    try:
        return json.loads(row[0])
    except (TypeError, json.JSONDecodeError):
        raise StoreSchemaError(f"{label}: table 'thatchlab_meta', row 'engines', column 'value' is "
                               f"{row[0]!r}; expected a JSON list of engine names") from None


def _production_changes(manifest) -> dict:
    """``code_changes`` and ``environment`` of a merge, from the export's manifest (none without one)."""
    if not isinstance(manifest, dict):
        return {}
    constants = manifest.get("production_constants") or {}
    code = {}
    for key, changes in (manifest.get("recommended_production_changes") or {}).items():
        if isinstance(changes, dict):
            code[key] = {name: (constants.get(name), value) for name, value in changes.items()}
    env = [line for line in manifest.get("environment") or [] if isinstance(line, str)]
    return {"code_changes": code, "environment": env}


# ------------------------------------------------------------------ the embedding space
def _vector_models(con, schema: str) -> dict:
    """``{model tag: sorted vector lengths}`` of the scoring rows holding a vector in ``schema``."""
    out: dict = {}
    for engine in ("prediction", "behavior"):
        t = ENGINE_TABLES[engine]
        for table in (t["matchers"], t["items"]):
            cols = [r[1] for r in con.execute(f"PRAGMA {schema}.table_info({quote_name(table)})")]
            if "model" not in cols or "embedding" not in cols:
                continue
            for model, dim in con.execute(f"SELECT DISTINCT model, length(embedding) / 4 FROM "
                                          f"{schema}.{quote_name(table)} WHERE embedding IS NOT NULL"):
                out.setdefault(model if isinstance(model, str) and model else None, set()).add(dim)
    return {k: sorted(v) for k, v in out.items()}


def _describe_models(models: dict) -> str:
    return ", ".join(f"{m!r} ({'/'.join(str(d) for d in dims)}-d)" if m else
                     f"untagged ({'/'.join(str(d) for d in dims)}-d)" for m, dims in models.items())


def _check_embedding_space(con, production, export_path, result, allow: bool) -> None:
    """Refuse (ModelMismatchError) an export whose vectors live in another space than production's rows."""
    theirs, ours = _vector_models(con, "main"), _vector_models(con, "ex")
    result.production_models = theirs
    if not theirs or not ours:
        return  # production holds no vectors yet, or the export none: nothing to compare
    names = {model_basename(m) for m in theirs if m} | {model_basename(m) for m in ours if m}
    dims = {d for v in theirs.values() for d in v} | {d for v in ours.values() for d in v}
    if len(names) <= 1 and len(dims) == 1:
        return
    fp = (result.embedder or {}).get("fingerprint") if isinstance(result.embedder, dict) else None
    message = (f"{production}: its rows were embedded by {_describe_models(theirs)} but the export "
               f"{export_path.name}'s by {_describe_models(ours)}"
               + (f" (fingerprint {fp})" if fp else "")
               + ": production compares its query vectors with the stored ones, so vectors of another model "
               "make every nudge after the merge noise")
    if allow:
        result.model_mismatch = message
        return
    raise ModelMismatchError(
        message + ". Export in production's space (thatchlab export --embedder PATH_OR_NAME of production's "
        "model, e.g. a local copy of it), or pass allow_model_mismatch=True (--allow-model-mismatch) to merge "
        "anyway; production was not touched")


# ------------------------------------------------------------------ production
def _check_production_path(path: Path):
    if path.is_dir():
        raise StoreSchemaError(f"{path}: is a directory; expected the production SQLite file")
    if not path.is_file():
        raise StoreSchemaError(f"{path}: no such file (the production database)")
    if path.stat().st_size == 0:
        raise StoreSchemaError(f"{path}: the file is empty; not a production database")


def _require_some_tables(con, path):
    if not table_names(con):
        raise StoreSchemaError(f"{path}: holds no tables; not a production database")


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


def _check_timeout(timeout) -> float:
    try:
        t = float(timeout)
    except (TypeError, ValueError):
        t = float("nan")
    if isinstance(timeout, bool) or not (math.isfinite(t) and 0 <= t <= 86400):
        raise InputError(f"timeout: expected a finite number of seconds between 0 and 86400, got {timeout!r}")
    return t


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


def _check_merged(con, label, fk_before):
    res = con.execute("PRAGMA main.integrity_check").fetchall()
    if res != [("ok",)]:
        raise StoreWriteError(f"{label}: integrity check of the merged content failed: {res[:3]}; "
                              "rolled back, production was left as it was")
    new = [r for r in con.execute("PRAGMA main.foreign_key_check").fetchall() if r not in fk_before]
    if new:
        raise StoreWriteError(f"{label}: the merge would leave rows pointing at rows that are gone "
                              f"(foreign_key_check: {new[:3]}); rolled back, production was left as it was")


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
