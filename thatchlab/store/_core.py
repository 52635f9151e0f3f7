"""Atomic SQLite writes and read-only import, shared by every store section.

A *section* is a module that knows one engine's tables. It provides

``KEY``      the keyword of :func:`export_sqlite` it serves (``"prediction"``...),
``ENGINE``   the engine name recorded in ``thatchlab_meta``,
``TABLES``   the tables it owns,
``create(conn)``                  create its tables,
``write(conn, obj, params)``      insert ``obj``'s rows; return ``{table: n_rows}``,
``present(conn) -> bool``         whether a file holds this section's tables,
``read(conn)``                    rebuild the object from the file (the scoring
                                  sections also take ``embedder=``),
``check_equal(a, b, params)``     raise AssertionError if what was given (``a``,
                                  as written under ``params``) and what was read
                                  back (``b``) differ,
``default_params(obj)``           the params object to record (or ``None``),
``model(obj)``                    the embedding model name of its vectors (or ``None``).

The export (:mod:`thatchlab.store._export`) builds the database in memory, runs ``PRAGMA integrity_check``
and ``PRAGMA foreign_key_check``, re-reads every section from the serialized
bytes and compares it with what was given (the manifest's sha256 is of those
bytes), and only then writes a temporary file beside the target, fsyncs it
and replaces the target with ``os.replace``: a failure (or a kill) at any
point leaves the old target intact and no partial file.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import importlib
import json
import os
import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from thatchlab import __version__
from thatchlab.core.errors import (
    ExportExistsError,
    StoreSchemaError,
    StoreWriteError,
    ThatchlabError,
)
from thatchlab.core.schema import ENGINE_TABLES, SCHEMA_VERSION
from thatchlab.core.sqlite import SQLITE_HEADER, connect_readonly, database_label
from thatchlab.store._releases import check_asked, choose_release

__all__ = ["import_sqlite", "StoreContents", "SECTIONS", "atomic_sqlite", "write_bytes_atomic", "connect_bytes", "read_contents", "check_engines",
           "ENGINE_KEYS", "check_export_target", "written_tables"]

#: export keyword → section module. Sections load lazily.
SECTIONS = {
    "prediction": "thatchlab.store.thatch_prediction",
    "behavior": "thatchlab.store.thatch_behavior",
    "beliefs": "thatchlab.store.belief",
    "calibration": "thatchlab.store.calibration",
    "patterns": "thatchlab.store.patterns",
}


def _section(key: str):
    try:
        return importlib.import_module(SECTIONS[key])
    except ModuleNotFoundError as exc:  # a section whose engine has not landed
        raise ThatchlabError(f"store section {key!r} is not available in this thatchlab ({exc})") from None


def _available_sections():
    out = {}
    for key in SECTIONS:
        try:
            out[key] = importlib.import_module(SECTIONS[key])
        except ModuleNotFoundError:
            continue
    return out


@dataclass
class StoreContents:
    """What :func:`import_sqlite` found in a file.

    Every parameter is kept as the attribute of the same name (also readable as
    ``contents["prediction"]``); sections the file does not hold are ``None``.

    Parameters
    ----------
    path : pathlib.Path
        The file read.
    prediction, behavior : PredictionEngine or BehaviorEngine, default=None
        The scoring engines.
    beliefs : BeliefStore, default=None
        omi's belief store.
    calibration : CalibrationState, default=None
        ai-memory's calibration state.
    patterns : pandas.DataFrame, default=None
        mnemo's mined patterns.
    meta : dict, default={}
        ``thatchlab_meta``, values decoded.
    manifest : dict, default=None
        The manifest beside the file (None for production's own files).
    releases : dict, default={}
        ``{engine: release}`` the engines were built for.
    """

    path: Path
    prediction: object = None
    behavior: object = None
    beliefs: object = None
    calibration: object = None
    patterns: object = None
    meta: dict = field(default_factory=dict)
    manifest: dict | None = None
    releases: dict = field(default_factory=dict)

    def __getitem__(self, key):
        return getattr(self, key)


def written_tables() -> set:
    """Every table an export (or a merge of one) writes: ``stores``, ``thatchlab_meta`` and each
    available engine section's tables."""
    out = {"stores", "thatchlab_meta", "prediction_dedup_pairs",  # 07ecf87 exports write the pair verdicts
           *(t for eng in ENGINE_TABLES.values() for k, t in eng.items() if k != "item_fk")}
    for sec in _available_sections().values():
        out |= set(sec.TABLES)
    return out


def check_export_target(path, overwrite: bool = False) -> None:
    """Refuse an export target that must not be replaced, before any work.

    An existing file needs ``overwrite``; even then only an earlier export
    (a SQLite file holding ``thatchlab_meta`` and no table an export does not
    write) or an empty file is replaced. A production store (its
    ``entries``, ``dedup_pairs``…), a log or any other file raises
    :class:`ExportExistsError` pointing to a merge, which updates a
    production file in place and keeps a backup.

    Parameters
    ----------
    path : str or os.PathLike
        The export's target file.
    overwrite : bool, default=False
        Whether an existing target (an earlier export or an empty file) may be replaced.

    Raises
    ------
    StoreWriteError
        The target is a directory.
    ExportExistsError
        The target exists without ``overwrite``, or is not an earlier export.
    """
    path = Path(path)
    if path.is_dir():
        raise StoreWriteError(f"{path}: is a directory; expected a file path")
    if not path.exists():
        return
    if not overwrite:
        raise ExportExistsError(f"{path}: export target exists; pass overwrite=True to replace it")
    what = _not_an_export(path)
    if what is not None:
        raise ExportExistsError(
            f"{path}: is not a thatchlab export ({what}); overwrite replaces only an earlier export, never a "
            f"production store or a log. To ship into a production file, export elsewhere and merge: "
            f"thatchlab merge EXPORT {path} (thatchlab.store.merge_into), which keeps every other table and "
            "a backup")


def _not_an_export(path: Path) -> str | None:
    """What ``path`` is when it is not an earlier export (None when it is one, or empty)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except OSError as exc:
        return f"unreadable: {exc}"
    if not head:
        return None
    if head != SQLITE_HEADER:
        return "not a SQLite database: a log or another file"
    try:
        with contextlib.closing(connect_readonly(path)) as conn:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except (ThatchlabError, sqlite3.DatabaseError) as exc:
        return f"not a readable SQLite database: {exc}"
    tables = {t for t in tables if not t.startswith("sqlite_")}
    foreign = sorted(tables - written_tables())
    if foreign:
        return f"it holds tables no export writes: {', '.join(foreign[:8])}{', …' if len(foreign) > 8 else ''}"
    if "thatchlab_meta" not in tables:
        return "it has no thatchlab_meta table: a production store"
    return None


def _fsync_dir(directory: Path):
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _atomic_text(path: Path, text: str):
    try:
        write_bytes_atomic(path, text.encode("utf-8"))
    except OSError as exc:
        raise StoreWriteError(f"{path}: cannot write ({exc})") from None


def _stale_temps(path: Path):
    """Temp files of earlier writers to ``path`` that died (a SIGKILL leaves them)."""
    for p in path.parent.glob(f".{path.name}.*.tmp"):
        try:
            pid = int(p.name[len(path.name) + 2:].split(".")[0])
        except ValueError:
            continue
        if pid == os.getpid():
            continue
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            yield p
        except PermissionError:
            continue


def write_bytes_atomic(path, data: bytes, like: os.stat_result | None = None):
    """Write ``data`` to ``path`` atomically: temp file beside it, fsync, ``os.replace``.

    The file is built in memory first, so the temp file exists only for the
    moment of one write and fsync; temp files left by killed writers are
    removed on the next write. ``like`` (an ``os.stat`` result) gives the new
    file that owner and mode, e.g. a production file's backup.
    """
    path = Path(path)
    for stale in _stale_temps(path):
        with contextlib.suppress(OSError):
            stale.unlink()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644 if like is None else 0o600)
        try:
            if like is not None:
                with contextlib.suppress(PermissionError):  # only root may give a file away
                    os.fchown(fd, like.st_uid, like.st_gid)
                os.fchmod(fd, like.st_mode & 0o7777)
            view = memoryview(data)
            while view:
                n = os.write(fd, view)
                view = view[n:]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        _fsync_dir(path.parent)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def connect_bytes(data: bytes) -> sqlite3.Connection:
    """An in-memory connection holding a serialized database."""
    conn = sqlite3.connect(":memory:")
    conn.deserialize(data)
    return conn


def atomic_sqlite(path, build, *, verify=None):
    """Build a SQLite database in memory and write it to ``path`` atomically.

    ``build(conn)`` runs inside one transaction with foreign keys on;
    integrity and foreign-key checks run, then ``verify(data)`` on the
    serialized bytes, and only then is the file written (see
    :func:`write_bytes_atomic`). A failure anywhere leaves ``path`` as it was.
    """
    path = Path(path)
    try:
        conn = sqlite3.connect(":memory:", isolation_level=None)
        try:
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("BEGIN")
            build(conn)
            conn.execute("COMMIT")
            check_integrity(conn, path)
            data = conn.serialize()
        finally:
            conn.close()
        if verify is not None:
            verify(data)
        write_bytes_atomic(path, data)
    except ThatchlabError:
        raise
    except (OSError, sqlite3.Error) as exc:
        raise StoreWriteError(f"{path}: cannot write ({type(exc).__name__}: {exc}); "
                              "the target was left as it was") from None


def check_integrity(conn, label):
    """Run ``PRAGMA integrity_check`` and ``foreign_key_check``; raise on problems."""
    res = conn.execute("PRAGMA integrity_check").fetchall()
    if res != [("ok",)]:
        raise StoreWriteError(f"{label}: integrity check failed: {res[:3]}")
    fk = conn.execute("PRAGMA foreign_key_check").fetchall()
    if fk:
        raise StoreWriteError(f"{label}: foreign key check failed: {fk[:3]}")


def import_sqlite(path, embedder=None, release=None) -> StoreContents:
    """Open an exported (or production) file read-only and rebuild the state found.

    Parameters
    ----------
    path : str or os.PathLike
        An export, or a production file.
    embedder : Embedder, default=None
        The embedder the scoring engines are given for later queries.
    release : str or dict, default=None
        The production release to build the engines for: a name (``"v0.1.30"``, ``"latest"``; it
        applies to every engine whose system knows it) or a mapping ``{system or engine: name}``.
        By default each engine opens in the release the file's ``thatchlab_meta`` names, else — a
        production thatch file, which has no ``thatchlab_meta`` — the release its schema shows (a
        ``prediction_dedup_pairs`` table: ``07ecf87``; none: ``v0.1.30``), else the system's
        newest. ``StoreContents.releases`` says which.

    Returns
    -------
    StoreContents
        ``prediction``/``behavior`` are engines (given ``embedder`` for later queries), and
        ``beliefs``, ``calibration``, ``patterns`` the other engines' state, each ``None`` when
        absent. Without a manifest (production's own files) ``manifest`` is None.

    Raises
    ------
    ReleaseError
        A release name no held system knows.
    StoreSchemaError
        A corrupt, foreign or incomplete file (naming what is missing); a value of the wrong type
        (text in a number column, an embedding that is not float32 bytes of one dimension), naming
        its table, row and column; a ``thatchlab_meta`` ``engines`` entry that is not a list of
        engines the file holds; a value outside what production assumes (a confidence outside
        [0, 1], a negative count, a time not in production's text formats); a schema or thatchlab
        version newer than this release; or a manifest beside the file whose sha256 is not the
        file's (the database and its manifest do not belong together).

    See Also
    --------
    export_sqlite : write such a file.

    Examples
    --------
    >>> import tempfile, pathlib, thatchlab
    >>> from thatchlab.store import export_sqlite
    >>> emb = thatchlab.LookupEmbedder({"writing tests": [1, 0], "use pytest": [0, 1]}, name="toy")
    >>> eng = thatchlab.PredictionEngine(emb)
    >>> _ = eng.update("writing tests", "use pytest", "confirm", None, now="2026-01-01T09:00:00Z")
    >>> path = export_sqlite(pathlib.Path(tempfile.mkdtemp()) / "thatch.db", prediction=eng).path
    >>> back = import_sqlite(path, embedder=emb)
    >>> back.meta["engines"], back.releases["prediction"], len(back.prediction.tables["items"]), back.beliefs
    (['prediction'], '07ecf87', 1, None)
    """
    path = Path(path)
    manifest_path = path.with_name(path.stem + ".manifest.json")
    manifest = None
    if manifest_path.is_file():
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise StoreSchemaError(f"{manifest_path}: not a readable manifest ({exc})") from None
        want = manifest.get("sha256") if isinstance(manifest, dict) else None
        got = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
        if want != got:
            raise StoreSchemaError(f"{path}: the database and its manifest {manifest_path.name} do not belong "
                                   f"together (sha256 {got} of the file, {want!r} in the manifest): an "
                                   "interrupted or edited export; export again")
    with contextlib.closing(connect_readonly(path)) as conn:
        out = read_contents(conn, path, embedder=embedder, release=release)
    out.manifest = manifest
    return out


#: engine name recorded in ``thatchlab_meta`` → export keyword of its section.
ENGINE_KEYS = {"prediction": "prediction", "behavior": "behavior", "belief": "beliefs",
               "calibration": "calibration", "anticipation": "patterns"}


def read_contents(conn, path, embedder=None, release=None) -> StoreContents:
    """What :func:`import_sqlite` returns, read from an open connection.

    The one validation of a store file: :func:`import_sqlite` runs it on the
    file, a merge on the export's bytes before anything is written.
    """
    try:
        tables = {r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table'").fetchall()}
    except sqlite3.DatabaseError as exc:
        raise StoreSchemaError(f"{path}: not a readable SQLite database ({exc})") from None
    meta = {}
    if "thatchlab_meta" in tables:
        try:
            rows = conn.execute("SELECT key, value FROM thatchlab_meta").fetchall()
        except sqlite3.DatabaseError as exc:
            raise StoreSchemaError(f"{path}: cannot read table 'thatchlab_meta' ({exc})") from None
        for k, v in rows:
            try:
                meta[k] = json.loads(v)
            except (TypeError, json.JSONDecodeError):
                meta[k] = v
    _check_versions(meta, path)
    out = StoreContents(path=path, meta=meta)
    prefixes = tuple(x for x in (str(path), database_label(conn)) if x)
    found = []
    held = [(key, sec) for key, sec in _available_sections().items() if _present(sec, conn, path)]
    check_asked(release, [sec.ENGINE for _, sec in held], path)
    for key, sec in held:
        chosen, _ = choose_release(sec.ENGINE, release, meta, tables, path)
        out.releases[sec.ENGINE] = chosen
        try:
            if key in ("prediction", "behavior"):
                setattr(out, key, sec.read(conn, embedder=embedder, release=chosen))
            else:
                setattr(out, key, _with_release(sec.read(conn), chosen))
        except StoreSchemaError as exc:
            msg = str(exc)
            own = str(path)
            for other in prefixes:  # an in-memory copy's label: name the file instead
                if other != own and msg.startswith(other + ":"):
                    msg = own + msg[len(other):]
                    break
            raise StoreSchemaError(msg if msg.startswith(own) else f"{path}: {msg}") from None
        except sqlite3.DatabaseError as exc:
            raise StoreSchemaError(f"{path}: cannot read section {key!r} ({exc})") from None
        found.append(sec.ENGINE)
    if not found:
        raise StoreSchemaError(
            f"{path}: no thatchlab or thatch tables found; expected 'stores' with "
            "'predictions'/'behaviors' (thatch) or another engine's export tables "
            f"(found tables: {sorted(tables) or 'none'})")
    if "engines" in meta:
        check_engines(meta["engines"], found, path)
    return out


def _present(sec, conn, path) -> bool:
    try:
        return bool(sec.present(conn))
    except sqlite3.DatabaseError as exc:
        raise StoreSchemaError(f"{path}: cannot read section {sec.ENGINE!r} ({exc})") from None


def _with_release(obj, release: str):
    """``obj`` (belief store, calibration state, patterns frame) with its params under ``release``."""
    params = getattr(obj, "params", None)
    if hasattr(params, "replace") and hasattr(params, "release"):
        obj.params = params.replace(release=release)
    attrs = getattr(obj, "attrs", None)
    if isinstance(attrs, dict) and isinstance(attrs.get("params"), dict):
        attrs["params"] = {**attrs["params"], "release": release}
    return obj


def _version_tuple(text):
    m = re.match(r"^(\d+)\.(\d+)(?:\.(\d+))?", str(text))
    return None if m is None else tuple(int(x or 0) for x in m.groups())


def _check_versions(meta, label) -> None:
    """Refuse a file written by a newer thatchlab (or a schema this release does not know)."""
    if "schema_version" in meta:
        v = meta["schema_version"]
        try:
            ok = int(str(v)) == float(str(v)) and 1 <= int(str(v)) <= SCHEMA_VERSION
        except ValueError:
            ok = False
        if not ok:
            raise StoreSchemaError(f"{label}: table 'thatchlab_meta', row 'schema_version' is {v!r}; this "
                                   f"release reads schema versions 1 to {SCHEMA_VERSION}")
    if "thatchlab_version" in meta:
        theirs, ours = _version_tuple(meta["thatchlab_version"]), _version_tuple(__version__)
        if theirs is None or (ours is not None and theirs > ours):
            raise StoreSchemaError(f"{label}: table 'thatchlab_meta', row 'thatchlab_version' is "
                                   f"{meta['thatchlab_version']!r}; this release ({__version__}) reads files "
                                   "written by itself or an older thatchlab")


def check_engines(engines, found, label) -> list:
    """Check a ``thatchlab_meta`` ``engines`` value: a JSON list of distinct engine names,
    each of whose tables the file holds (``found``); return it."""
    names = sorted(ENGINE_KEYS)
    if not isinstance(engines, list) or not all(isinstance(e, str) for e in engines):
        raise StoreSchemaError(f"{label}: table 'thatchlab_meta', row 'engines', column 'value' is "
                               f"{engines!r}; expected a JSON list of engine names from {names}")
    unknown = [e for e in engines if e not in ENGINE_KEYS]
    if unknown:
        raise StoreSchemaError(f"{label}: table 'thatchlab_meta', row 'engines', column 'value' names "
                               f"unknown engine(s) {unknown}; expected names from {names}")
    if len(set(engines)) != len(engines):
        raise StoreSchemaError(f"{label}: table 'thatchlab_meta', row 'engines', column 'value' lists an "
                               f"engine twice ({engines})")
    absent = [e for e in engines if e not in found]
    if absent:
        raise StoreSchemaError(f"{label}: table 'thatchlab_meta', row 'engines' lists {absent} but the "
                               f"file holds no tables of {'it' if len(absent) == 1 else 'them'}")
    return engines


def utc_now_text():  # for backups and report names; never used inside engines
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
