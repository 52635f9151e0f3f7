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

A merge's backup marker also says what the merge did (``merge``: the export,
its engines, the tables it created, and once it committed the rows it
removed and added per table). Restoring the backup puts production back as
it was before the merge: the page copy removes the tables the merge created,
so the check that production's *other* tables still match the backup leaves
out every table thatchlab writes (any engine's) and those the merge created.

A merge or restore killed while writing a backup leaves a temporary file
(and perhaps a marker without its backup); :func:`clean_orphans` removes
those of processes that are gone, and every backup written, listed or
pruned runs it first.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import glob
import hashlib
import json
import os
import sqlite3
from pathlib import Path

import pandas as pd

from thatchlab.core.errors import StoreSchemaError, StoreWriteError, ThatchlabError
from thatchlab.core.sqlite import connect_readonly, quote_name, table_names
from thatchlab.store._core import written_tables

__all__ = ["backup_path_for", "write_backup", "read_marker", "update_marker", "list_backups", "prune_backups",
           "check_restorable", "restorable_problem", "clean_orphans", "ours", "MARKER_KIND"]

MARKER_KIND = "thatchlab.backup"


def ours() -> set:
    """Tables thatchlab writes into a production file, any engine's (their rows and their presence
    may differ between a backup and now)."""
    return written_tables()


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
    return {t: con.execute(f"SELECT COUNT(*) FROM {quote_name(t)}").fetchone()[0]
            for t in sorted(table_names(con)) if not t.startswith("sqlite_")}


def _temp_for(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def _write_temp(path: Path, data: bytes, like: os.stat_result) -> Path:
    """``data`` in a temporary file beside ``path`` with ``like``'s owner and mode, fsynced."""
    tmp = _temp_for(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        try:
            with contextlib.suppress(PermissionError):  # only root may give a file away
                os.fchown(fd, like.st_uid, like.st_gid)
            os.fchmod(fd, like.st_mode & 0o7777)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:  # a full disk, a size limit: no partial file stays
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return tmp


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_backup(production: Path, data: bytes, reason: str, like: os.stat_result, write_atomic,
                 merge: dict | None = None) -> Path:
    """Write ``data`` (production's content) as a new backup with its marker; return its path.

    ``write_atomic(path, data, like=...)`` writes a file atomically with production's owner
    and mode (the marker). The backup's bytes go to a temporary file first, then the marker,
    then the temporary file is renamed: a backup never exists without its marker, and a
    kill at any point leaves only files :func:`clean_orphans` removes. ``merge``: what the
    merge taking this backup will do (recorded under ``merge`` in the marker).
    """
    production = Path(production)
    clean_orphans(production)
    path = backup_path_for(production)
    with contextlib.closing(sqlite3.connect(":memory:")) as mem:
        mem.deserialize(data)
        counts = _counts(mem)
    marker = {"kind": MARKER_KIND, "production": str(production.resolve()), "file": path.name,
              "sha256": hashlib.sha256(data).hexdigest(), "reason": reason,
              "taken_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z"),
              "tables": counts}
    if merge is not None:
        marker["merge"] = merge
    tmp = _write_temp(path, data, like)
    try:
        write_atomic(_marker_path(path), _marker_bytes(marker), like=like)
        try:
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                _marker_path(path).unlink()
            raise
        _fsync_dir(path.parent)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    return path


def _marker_bytes(marker: dict) -> bytes:
    return (json.dumps(marker, indent=1, sort_keys=True) + "\n").encode("utf-8")


def update_marker(backup: Path, write_atomic, like: os.stat_result, **fields) -> None:
    """Add ``fields`` to the ``merge`` entry of ``backup``'s marker (written atomically)."""
    marker = read_marker(backup)
    if marker is None:
        return
    marker["merge"] = {**(marker.get("merge") or {}), **fields}
    write_atomic(_marker_path(backup), _marker_bytes(marker), like=like)


def _pid_gone(pid: int) -> bool:
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError):
        return False
    return False


def clean_orphans(production) -> list:
    """Remove what backups of ``production`` killed mid-write left behind; return the removed paths.

    A temporary file (``.<name>.<time>.bak.<pid>.tmp``, or its marker's) whose
    process is gone, and a marker whose backup does not exist while no live
    process is still writing it.
    """
    production = Path(production)
    removed, live = [], set()
    for tmp in sorted(production.parent.glob(f".{glob_escape(production.name)}.*.bak*.tmp")):
        try:
            pid = int(tmp.name.rsplit(".", 2)[-2])
        except (ValueError, IndexError):
            continue
        target = tmp.name[1:].rsplit(".", 2)[0]
        if not _pid_gone(pid):
            live.add(target)
            continue
        with contextlib.suppress(OSError):  # gone meanwhile, or a directory we may not write to
            tmp.unlink()
            removed.append(tmp)
    for marker_file in sorted(production.parent.glob(f"{glob_escape(production.name)}.*.bak.json")):
        backup = marker_file.with_name(marker_file.name[:-5])
        if backup.exists() or backup.name in live or marker_file.name in live:
            continue
        if read_marker(backup) is None:
            continue  # not a marker of ours: not ours to remove
        with contextlib.suppress(OSError):
            marker_file.unlink()
            removed.append(marker_file)
    return removed


def glob_escape(name: str) -> str:
    """``name`` with the characters ``glob`` reads as patterns matched literally."""
    return glob.escape(name)


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
    ``bytes``, ``tables`` (row counts per table), ``intact`` (the file's sha256 equals its
    marker's), ``restorable`` (:func:`~thatchlab.store.restore` would put it back now: the
    same check) and ``problem`` (why not, else ``None``). Temporary files and markers left by
    a killed writer are removed first (:func:`clean_orphans`).

    Parameters
    ----------
    production : str or os.PathLike
        The production file whose backups are listed.

    Returns
    -------
    pandas.DataFrame
        One row per backup, with the columns above.

    See Also
    --------
    prune_backups : remove the oldest of them.
    restore : put one back.
    """
    production = Path(production)
    clean_orphans(production)
    want = str(production.resolve())
    rows = []
    for marker_file in sorted(production.parent.glob(f"{glob_escape(production.name)}.*.bak.json")):
        backup = marker_file.with_name(marker_file.name[:-5])
        marker = read_marker(backup)
        if marker is None or marker.get("production") != want or not backup.is_file():
            continue
        data = backup.read_bytes()
        intact = hashlib.sha256(data).hexdigest() == marker.get("sha256")
        problem = restorable_problem(backup, production, marker=marker, data=data)
        rows.append({"path": backup, "taken_at": marker.get("taken_at"), "reason": marker.get("reason"),
                     "bytes": len(data), "tables": marker.get("tables", {}), "intact": intact,
                     "restorable": problem is None, "problem": problem})
    out = pd.DataFrame(rows, columns=["path", "taken_at", "reason", "bytes", "tables", "intact", "restorable",
                                      "problem"])
    return out.sort_values(["taken_at", "path"], kind="stable").reset_index(drop=True)


def prune_backups(production, keep: int) -> list:
    """Remove the oldest backups of ``production`` beyond ``keep``; never the first nor the newest.

    Parameters
    ----------
    production : str or os.PathLike
        The production file whose backups are pruned.
    keep : int
        How many backups stay: every backup left counts, the first and the newest included (so at
        least 2 stay when there are 2 or more).

    Returns
    -------
    list of pathlib.Path
        The removed paths.

    Raises
    ------
    StoreWriteError
        ``keep`` is not a count >= 0.

    See Also
    --------
    list_backups : the backups there are.
    """
    if isinstance(keep, bool) or not isinstance(keep, int) or keep < 0:
        raise StoreWriteError(f"keep: expected a count >= 0, got {keep!r}")
    clean_orphans(production)
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


def _their_schema(con, skip=frozenset()) -> dict:
    """``{(type, name): sql}`` of the tables (and their indexes and triggers) thatchlab does not write,
    leaving out ``skip`` too."""
    skip = ours() | set(skip)
    rows = con.execute("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")
    return {(t, n): sql for t, n, tbl, sql in rows.fetchall() if tbl not in skip}


def restorable_problem(backup: Path, production: Path, *, marker: dict | None = None,
                       data: bytes | None = None) -> str | None:
    """Why ``backup`` cannot be restored into ``production`` now (the message
    :func:`check_restorable` raises), or ``None`` when it can."""
    try:
        check_restorable(backup, production, marker=marker, data=data)
    except ThatchlabError as exc:  # not a backup of it as it stands, or production unreadable now
        return str(exc)
    except sqlite3.DatabaseError as exc:
        return f"{backup}: not a readable SQLite database ({exc})"
    return None


def check_restorable(backup: Path, production: Path, *, marker: dict | None = None,
                     data: bytes | None = None) -> dict:
    """The marker of ``backup`` if it is a backup thatchlab took of ``production``; else a typed error.

    Refused: a file without a marker (an export, any other database), a backup of another
    file, one whose bytes changed since it was taken, a *production* argument that is itself a
    backup (the arguments swapped), and a backup whose other tables differ in name or schema
    from production's now. *Other* tables are those no thatchlab engine writes and no merge
    created: the tables a merge created (listed in the marker of the backup it took) are
    removed by restoring that backup, and those are expected to be in production and not in
    the backup. ``data``: the backup's bytes, when already read (they are what is checked).
    """
    backup, production = Path(backup), Path(production)
    if read_marker(production) is not None:
        raise StoreSchemaError(f"{production}: is itself a backup thatchlab took (it has a marker "
                               f"{_marker_path(production).name}); the arguments are restore BACKUP PRODUCTION")
    marker = marker if marker is not None else read_marker(backup)
    if marker is None:
        with contextlib.closing(connect_readonly(backup)) as con:
            kind = "a thatchlab export" if "thatchlab_meta" in table_names(con) else "a database"
        raise StoreSchemaError(f"{backup}: is {kind}, not a backup thatchlab took (no marker "
                               f"{_marker_path(backup).name} beside it); refusing to restore it over {production}")
    if marker.get("production") != str(production.resolve()):
        raise StoreSchemaError(f"{backup}: is a backup of {marker.get('production')}, not of {production.resolve()}; "
                               "refusing to restore it")
    data = backup.read_bytes() if data is None else data
    if hashlib.sha256(data).hexdigest() != marker.get("sha256"):
        raise StoreSchemaError(f"{backup}: its content changed since it was taken (sha256 differs from its "
                               "marker); refusing to restore it")
    created = set((marker.get("merge") or {}).get("created") or [])
    with contextlib.closing(sqlite3.connect(":memory:")) as b, \
            contextlib.closing(connect_readonly(production)) as p:
        b.deserialize(data)
        theirs_b, theirs_p = _their_schema(b, created), _their_schema(p, created)
    if theirs_b != theirs_p:
        diff = sorted({k[1] for k in set(theirs_b) ^ set(theirs_p)}
                      | {k[1] for k in set(theirs_b) & set(theirs_p) if theirs_b[k] != theirs_p[k]})
        raise StoreSchemaError(f"{backup}: its other tables differ from {production}'s now ({', '.join(diff)}); "
                               "it is not a backup of this file as it stands (production's own schema changed "
                               "since it was taken); refusing to restore it")
    return marker
