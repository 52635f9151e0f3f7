"""Backups of a production file: one new file per merge or restore, never overwritten, each with a marker.

A backup is a complete copy of the production file taken under its write
lock (:func:`write_backup`), named ``<name>.<UTC time>.bak`` beside it
(``.1``, ``.2``… if two land in the same microsecond) — never an existing
name. Its content is exactly production's at that moment; what thatchlab
knows about it lives outside it, in ``<backup>.json`` (the *marker*): the
production file it was taken of, its sha256, when and why, and its tables'
row counts. :func:`list_backups` reads the markers, :func:`prune_backups`
removes the oldest beyond a count (never the first nor the newest), and
:func:`check_restorable` refuses to put back anything that is not a backup
of that production file.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import os
import sqlite3
from pathlib import Path

import pandas as pd

from thatchlab.core.errors import StoreSchemaError, StoreWriteError
from thatchlab.core.schema import ENGINE_TABLES
from thatchlab.core.sqlite import connect_readonly, table_names

__all__ = ["backup_path_for", "write_backup", "read_marker", "list_backups", "prune_backups",
           "check_restorable", "MARKER_KIND"]

MARKER_KIND = "thatchlab.backup"
#: Tables thatchlab writes into a production file (their rows may differ between a backup and now).
_OURS = {"stores", "thatchlab_meta", *(t for eng in ENGINE_TABLES.values()
                                       for k, t in eng.items() if k != "item_fk")}


def _stamp(now: _dt.datetime) -> str:
    return now.strftime("%Y%m%dT%H%M%S%fZ")


def backup_path_for(production: Path, now: _dt.datetime | None = None) -> Path:
    """A new backup name beside ``production``: ``<name>.<UTC time>.bak``, never an existing file."""
    production = Path(production)
    now = now or _dt.datetime.now(_dt.timezone.utc)
    base = production.with_name(f"{production.name}.{_stamp(now)}.bak")
    path, n = base, 0
    while path.exists() or _marker_path(path).exists():
        n += 1
        path = base.with_name(f"{base.name[:-4]}.{n}.bak")
    return path


def _marker_path(backup: Path) -> Path:
    return Path(backup).with_name(Path(backup).name + ".json")


def _counts(con) -> dict:
    return {t: con.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0]
            for t in sorted(table_names(con)) if not t.startswith("sqlite_")}


def write_backup(production: Path, data: bytes, reason: str, like: os.stat_result, write_atomic) -> Path:
    """Write ``data`` (production's content) as a new backup with its marker; return its path.

    ``write_atomic(path, data, like=...)`` writes a file atomically with production's owner
    and mode. The marker is written first: a backup never exists without one.
    """
    path = backup_path_for(production)
    mem = sqlite3.connect(":memory:")
    try:
        mem.deserialize(data)
        counts = _counts(mem)
    finally:
        mem.close()
    marker = {"kind": MARKER_KIND, "production": str(Path(production).resolve()), "file": path.name,
              "sha256": hashlib.sha256(data).hexdigest(), "reason": reason,
              "taken_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z"),
              "tables": counts}
    write_atomic(_marker_path(path), (json.dumps(marker, indent=1, sort_keys=True) + "\n").encode("utf-8"),
                 like=like)
    try:
        write_atomic(path, data, like=like)
    except BaseException:
        with contextlib.suppress(OSError):
            _marker_path(path).unlink()
        raise
    return path


def read_marker(backup: Path) -> dict | None:
    """The marker of ``backup`` (None when there is none or it is not one)."""
    p = _marker_path(backup)
    try:
        out = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return out if isinstance(out, dict) and out.get("kind") == MARKER_KIND else None


def list_backups(production) -> pd.DataFrame:
    """The backups thatchlab took of ``production``, oldest first.

    Columns: ``path``, ``taken_at`` (UTC text), ``reason`` (``merge``, ``before restore``),
    ``bytes``, ``tables`` (row counts per table) and ``intact`` (the file's sha256 equals its
    marker's).
    """
    production = Path(production)
    want = str(production.resolve())
    rows = []
    for marker_file in sorted(production.parent.glob(f"{production.name}.*.bak.json")):
        backup = marker_file.with_name(marker_file.name[:-5])
        marker = read_marker(backup)
        if marker is None or marker.get("production") != want or not backup.is_file():
            continue
        data = backup.read_bytes()
        rows.append({"path": backup, "taken_at": marker.get("taken_at"), "reason": marker.get("reason"),
                     "bytes": len(data), "tables": marker.get("tables", {}),
                     "intact": hashlib.sha256(data).hexdigest() == marker.get("sha256")})
    out = pd.DataFrame(rows, columns=["path", "taken_at", "reason", "bytes", "tables", "intact"])
    return out.sort_values(["taken_at", "path"], kind="stable").reset_index(drop=True)


def prune_backups(production, keep: int) -> list:
    """Remove the oldest backups of ``production`` beyond ``keep``; never the first nor the newest.

    Returns the removed paths. ``keep`` counts every backup left, the first and the newest
    included (so at least 2 stay when there are 2 or more).
    """
    if isinstance(keep, bool) or not isinstance(keep, int) or keep < 0:
        raise StoreWriteError(f"keep: expected a count >= 0, got {keep!r}")
    table = list_backups(production)
    paths = list(table["path"])
    if len(paths) <= max(keep, 2):
        return []
    protected = {paths[0], paths[-1]}
    removable = [p for p in paths if p not in protected]
    n_remove = len(paths) - max(keep, 2)
    removed = []
    for p in removable[:n_remove]:
        Path(p).unlink()
        with contextlib.suppress(FileNotFoundError):
            _marker_path(p).unlink()
        removed.append(Path(p))
    return removed


def _their_schema(con) -> dict:
    """``{name: sql}`` of the tables (and their indexes and triggers) thatchlab does not write."""
    rows = con.execute("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")
    return {(t, n): sql for t, n, tbl, sql in rows.fetchall() if tbl not in _OURS}


def check_restorable(backup: Path, production: Path) -> dict:
    """The marker of ``backup`` if it is a backup thatchlab took of ``production``; else a typed error.

    Refused: a file without a marker (an export, any other database), a backup of another
    file, one whose bytes changed since it was taken, a *production* argument that is itself a
    backup (the arguments swapped), and a backup whose other tables (those thatchlab never
    writes) differ in name or schema from production's now.
    """
    backup, production = Path(backup), Path(production)
    if read_marker(production) is not None:
        raise StoreSchemaError(f"{production}: is itself a backup thatchlab took (it has a marker "
                               f"{_marker_path(production).name}); the arguments are restore BACKUP PRODUCTION")
    marker = read_marker(backup)
    if marker is None:
        with contextlib.closing(connect_readonly(backup)) as con:
            kind = "a thatchlab export" if "thatchlab_meta" in table_names(con) else "a database"
        raise StoreSchemaError(f"{backup}: is {kind}, not a backup thatchlab took (no marker "
                               f"{_marker_path(backup).name} beside it); refusing to restore it over {production}")
    if marker.get("production") != str(production.resolve()):
        raise StoreSchemaError(f"{backup}: is a backup of {marker.get('production')}, not of {production.resolve()}; "
                               "refusing to restore it")
    data = backup.read_bytes()
    if hashlib.sha256(data).hexdigest() != marker.get("sha256"):
        raise StoreSchemaError(f"{backup}: its content changed since it was taken (sha256 differs from its "
                               "marker); refusing to restore it")
    with contextlib.closing(connect_readonly(backup)) as b, contextlib.closing(connect_readonly(production)) as p:
        theirs_b, theirs_p = _their_schema(b), _their_schema(p)
    if theirs_b != theirs_p:
        diff = sorted({k[1] for k in set(theirs_b) ^ set(theirs_p)}
                      | {k[1] for k in set(theirs_b) & set(theirs_p) if theirs_b[k] != theirs_p[k]})
        raise StoreSchemaError(f"{backup}: its other tables differ from {production}'s now ({', '.join(diff)}); "
                               "it is not a backup of this file as it stands; refusing to restore it")
    return marker
