"""Atomic SQLite export and read-only import, shared by every store section.

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

The export builds the database in memory, runs ``PRAGMA integrity_check``
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
    ModelMismatchError,
    StoreSchemaError,
    StoreWriteError,
    ThatchlabError,
)
from thatchlab.core.schema import ENGINE_TABLES, META_DDL, SCHEMA_VERSION, STORES_DDL
from thatchlab.core.sqlite import SQLITE_HEADER, connect_readonly, database_label
from thatchlab.embed import embedder_identity
from thatchlab.store._releases import check_asked, choose_release
from thatchlab.store._review import (
    check_params_match,
    log_end_text,
    manifest_for,
    newest_change,
    review,
)

__all__ = ["export_sqlite", "import_sqlite", "ExportResult", "StoreContents", "SECTIONS",
           "PRODUCTION_CONSTANTS", "THRESHOLD_ENV",
           "atomic_sqlite", "write_bytes_atomic", "connect_bytes", "read_contents", "check_engines",
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
class ExportResult:
    """Where an export went and what it holds."""

    path: Path
    manifest_path: Path
    counts: dict
    model: str | None
    engines: list

    def __fspath__(self):
        return str(self.path)


@dataclass
class StoreContents:
    """What :func:`import_sqlite` found in a file.

    Attributes are ``None`` for sections the file does not hold; ``releases`` is
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


def _params_for(key, params, obj, sec):
    if params is None:
        return sec.default_params(obj)
    if isinstance(params, dict):
        return params.get(key, sec.default_params(obj))
    # one params object: it serves every section whose params type it is
    default = sec.default_params(obj)
    if default is not None and type(default) is not type(params):
        return default
    return params


#: The scoring constants production thatch hard-codes (it reads only the thresholds
#: from its environment).
PRODUCTION_CONSTANTS = {"k": 5.0, "p0": 0.5, "soft_weight": 0.25}
#: The environment variable production reads for each scoring engine's nudge threshold.
THRESHOLD_ENV = {"prediction": "THATCH_PREDICTION_THRESHOLD", "behavior": "THATCH_BEHAVIOR_THRESHOLD"}
_SCORING = ("prediction", "behavior")


def export_sqlite(path, *, prediction=None, behavior=None, beliefs=None, calibration=None,
                  patterns=None, production_model=None, allow_model_mismatch=False, params=None,
                  decision=None, production_constants=None, declared=None, log_end=None,
                  overwrite=False) -> ExportResult:
    """Write engine state as a SQLite file production opens unchanged, plus a manifest.

    Parameters
    ----------
    path : target file (``.db``/``.sqlite``). Its directory must exist.
    prediction, behavior : scoring engines (their tables are written in the
        production thatch DDL; a ``stores`` table with ``global`` is always present).
    beliefs, calibration, patterns : state of the other engines, when given.
    production_model : the model name to declare; ``None`` means the vectors'
        own model. Declaring another model raises :class:`ModelMismatchError`
        unless ``allow_model_mismatch=True``.
    params : one params object or a mapping ``{"prediction": ScoringParams, ...}``;
        defaults to each engine's own (or the decision's, see ``decision``).
        Every value that differs from what production runs (the parameter
        reference, :func:`thatchlab.core.params.production.production_params`)
        and that no decision shipped is listed in the manifest under
        ``unreviewed`` (``{engine: {parameter: value}}``) — never as an
        environment line or a recommended change — and
        :func:`~thatchlab.store.merge_into` refuses the export unless allowed.
    decision : a :class:`thatchlab.decide.Decision` or a mapping ``{engine: Decision}``
        (scoring engines). The engine's parameters become the decision's
        ``params`` (its default with only the shipped values changed); ``params``
        given for the same engine must equal them (else :class:`InputError`
        naming each parameter). The manifest's ``decisions[engine]`` holds one
        record per parameter and one ``"parameter": "combined"`` record (the
        shipped configuration as a whole); each shipped parameter appears as an
        ``environment`` line (a setting production reads) or under
        ``recommended_production_changes`` (a constant in its code). A decision
        that ships a parameter production has no setting for is refused.
    declared : ``{engine: params}`` production already runs (e.g. a
        ``--config`` it was started with): listed under ``declared``, the
        reference for ``unreviewed``, never shipped. A decision's ``default``
        is declared the same way.
    production_constants : the K, P0 and soft weight production runs, as a
        mapping; ``None`` means its hard-coded :data:`PRODUCTION_CONSTANTS`.
        The scoring engines' ``confidence`` column is recomputed under these
        constants — the ones production applies to the next signal — so the
        shipped rows agree with what production computes later. A tuned K or
        P0 appears in the manifest as a recommended production change
        (``recommended_production_changes``), never baked into the rows.
    log_end : the time of the last event of the log the state was replayed
        from (a datetime or ISO-8601 text; recorded as ISO-8601 UTC in
        ``thatchlab_meta`` and the manifest). A merge refuses to replace
        production rows that changed after it. ``None``: the newest change
        time among the export's own rows.
    overwrite : replace an existing target (otherwise :class:`ExportExistsError`).

    Returns
    -------
    ExportResult with ``path``, ``manifest_path`` and row ``counts``.
    """
    path = Path(path)
    given = {k: v for k, v in dict(prediction=prediction, behavior=behavior, beliefs=beliefs,
                                   calibration=calibration, patterns=patterns).items() if v is not None}
    sections = {k: _section(k) for k in given}
    check_export_target(path, overwrite)
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise StoreWriteError(f"{path}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise StoreWriteError(f"{path}: directory {parent} is not writable")

    models = {k: sections[k].model(obj) for k, obj in given.items()}
    vector_models = sorted({m for m in models.values() if m})
    if production_model is not None and vector_models and not allow_model_mismatch:
        wrong = [m for m in vector_models if m != production_model]
        if wrong:
            raise ModelMismatchError(
                f"{path}: vectors were made with {wrong} but production_model={production_model!r}; "
                "thresholds do not transfer between models (pass allow_model_mismatch=True to "
                "declare it anyway)")
    model = production_model if production_model is not None else (
        vector_models[0] if len(vector_models) == 1 else (vector_models or None))
    decisions = _decisions_for(decision, given)
    chosen = {}
    for k, obj in given.items():
        if k in decisions:
            explicit = _explicit_params(params, k, decisions[k].params)
            if explicit is not None:
                check_params_match(k, explicit, decisions[k].params)
            chosen[k] = decisions[k].params
        else:
            chosen[k] = _params_for(k, params, obj, sections[k])
    constants = _production_constants(production_constants)
    account = review(chosen, decisions, _declared_for(declared, given),
                     constants if production_constants is not None else None)
    # the scoring sections compute `confidence` under the params they are handed: hand them
    # production's constants, so the rows agree with what production computes next
    written = {k: (p.replace(**constants) if k in _SCORING and p is not None else p)
               for k, p in chosen.items()}

    releases = {sections[k].ENGINE: p.release for k, p in chosen.items() if getattr(p, "release", None)}
    counts: dict = {}

    def build(conn):
        conn.execute(STORES_DDL)
        conn.execute("INSERT OR IGNORE INTO stores(name) VALUES ('global')")
        # the scoring DDL is always written, so production can open any export
        for key in ("prediction", "behavior"):
            sec = sections.get(key) or _section(key)
            sec.create(conn)
        for key, obj in given.items():
            sec = sections[key]
            if key not in ("prediction", "behavior"):
                sec.create(conn)
            counts.update(sec.write(conn, obj, written[key]))
        conn.execute(META_DDL)
        digest["log_end"] = log_end_text(log_end, path) if log_end is not None else newest_change(conn)
        meta = {
            "schema_version": str(SCHEMA_VERSION),
            "thatchlab_version": __version__,
            "model": json.dumps(model),
            "engines": json.dumps([sections[k].ENGINE for k in given]),
            "params": json.dumps({k: (p.to_dict() if p is not None else None) for k, p in chosen.items()},
                                 sort_keys=True),
            # inside the file, so a merge sees it even without the manifest
            "unreviewed": json.dumps(account.unreviewed, sort_keys=True),
            "log_end": json.dumps(digest["log_end"]),
            # the production release each engine was replayed and exported for
            "releases": json.dumps(releases, sort_keys=True),
        }
        # the embedding space of the vectors (a merge refuses another space than production's)
        digest["embedder"] = _embedder_record(conn, given, sections)
        meta["embedder"] = json.dumps(digest["embedder"], sort_keys=True)
        conn.executemany("INSERT INTO thatchlab_meta(key, value) VALUES (?, ?)", sorted(meta.items()))

    digest: dict = {}

    def verify(data):
        with contextlib.closing(connect_bytes(data)) as conn:
            for key, obj in given.items():
                back = sections[key].read(conn)
                try:
                    sections[key].check_equal(obj, back, written[key])
                except AssertionError as exc:
                    raise StoreWriteError(f"{path}: round-trip check of {key!r} failed: {exc}") from None
                del back
        digest["sha256"] = hashlib.sha256(data).hexdigest()  # the bytes the file is written from

    atomic_sqlite(path, build, verify=verify)
    manifest_path = path.with_name(path.stem + ".manifest.json")
    manifest = manifest_for(path, model, [sections[k].ENGINE for k in given], given, chosen, counts, account,
                            constants, digest["sha256"])
    manifest["log_end"] = digest["log_end"]
    manifest["releases"] = releases
    manifest["embedder"] = digest["embedder"]
    _atomic_text(manifest_path, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return ExportResult(path=path, manifest_path=manifest_path, counts=counts, model=model,
                        engines=[sections[k].ENGINE for k in given])


def _embedder_record(conn, given, sections) -> dict | None:
    """``{"name", "dim", "fingerprint"}`` of the scoring engines' vectors (None without them).

    The name is the rows' ``model``; the fingerprint (see
    :func:`thatchlab.embed.embedder_identity`) is taken from the engine's
    embedder when its name is the rows' model, else it is unknown (``None``).
    """
    out = None
    for key in _SCORING:
        obj = given.get(key)
        if obj is None:
            continue
        name = sections[key].model(obj)
        t = ENGINE_TABLES[key]
        dims = sorted({r[0] for table in (t["matchers"], t["items"]) for r in conn.execute(
            f"SELECT DISTINCT length(embedding) / 4 FROM {table} WHERE embedding IS NOT NULL")})
        record = {"name": name, "dim": dims[0] if len(dims) == 1 else (dims or None), "fingerprint": None}
        if name is not None and getattr(obj, "model_name", None) == name:
            ident = embedder_identity(obj.embedder)
            if record["dim"] is None or ident["dim"] == record["dim"]:
                record["fingerprint"] = ident["fingerprint"]
                record["dim"] = ident["dim"] if record["dim"] is None else record["dim"]
        if out is None or (out["fingerprint"] is None and record["fingerprint"] is not None):
            out = record
    return out


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


def _explicit_params(params, key, like):
    """The params the caller passed for ``key`` explicitly, if any (a mapping entry, or one object
    of the decision's params type)."""
    if params is None:
        return None
    if isinstance(params, dict):
        return params.get(key)
    return params if type(params) is type(like) else None


def _declared_for(declared, given) -> dict:
    """``{key: params}`` production is declared to run, for the engines being exported."""
    if declared is None:
        return {}
    if not isinstance(declared, dict):
        raise ThatchlabError("declared: expected a mapping {engine: params production runs}")
    out = {}
    for key, p in declared.items():
        if key not in given:
            raise ThatchlabError(f"declared for {key!r} given but no {key} engine is exported")
        base = _section(key).default_params(given[key])
        if isinstance(p, dict) and base is not None:
            p = type(base).from_dict(p)
        if base is not None and type(p) is not type(base):
            raise ThatchlabError(f"declared for {key!r}: expected {type(base).__name__}, got {type(p).__name__}")
        out[key] = p
    return out


#: The export keyword of each engine a decision can be made for.
_DECISION_KEYS = {"prediction": "prediction", "behavior": "behavior", "belief": "beliefs",
                  "calibration": "calibration", "anticipation": "patterns"}


def _decisions_for(decision, given) -> dict:
    """``{export keyword: decision}`` for the engines being exported."""
    if decision is None:
        return {}
    if isinstance(decision, dict):
        out = dict(decision)
    else:
        engine = getattr(decision, "engine", None)
        if engine is None:
            scoring = [k for k in given if k in _SCORING]
            if len(scoring) != 1:
                raise ThatchlabError("decision: name its engine (pass {'prediction': decision, ...})")
            engine = scoring[0]
        out = {_DECISION_KEYS.get(engine, engine): decision}
    for key in list(out):
        if key in ("belief", "anticipation"):  # the engine's name for its export keyword
            out[_DECISION_KEYS[key]] = out.pop(key)
    for key, dec in out.items():
        if key not in _DECISION_KEYS.values():
            raise ThatchlabError(f"decision: expected one for {', '.join(repr(k) for k in _DECISION_KEYS.values())}, "
                                 f"got {key!r}")
        if key not in given:
            raise ThatchlabError(f"decision for {key!r} given but no {key} engine is exported")
        for attr in ("params", "to_records", "shipped_parameters"):
            if not hasattr(dec, attr):
                raise ThatchlabError(f"decision for {key!r}: expected a thatchlab.decide.Decision "
                                     f"(it has no {attr!r})")
    return out


def _production_constants(declared) -> dict:
    out = dict(PRODUCTION_CONSTANTS)
    if declared is None:
        return out
    if not isinstance(declared, dict):
        declared = {k: getattr(declared, k) for k in PRODUCTION_CONSTANTS}
    unknown = sorted(set(declared) - set(PRODUCTION_CONSTANTS))
    if unknown:
        raise ThatchlabError(f"production_constants: unknown name(s) {unknown}; expected "
                             f"{sorted(PRODUCTION_CONSTANTS)}")
    for name, value in declared.items():
        try:
            v = float(value)
        except (TypeError, ValueError):
            v = float("nan")
        if not (v == v and v >= 0 and (name != "p0" or 0 < v < 1) and (name != "k" or v > 0)):
            raise ThatchlabError(f"production_constants: {name}={value!r} is not a valid value")
        out[name] = v
    return out


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

    Returns a :class:`StoreContents` whose ``prediction``/``behavior`` are
    engines (given ``embedder`` for later queries), and ``beliefs``,
    ``calibration``, ``patterns`` the other engines' state, each ``None``
    when absent.

    ``release`` is the production release to build the engines for: a name
    (``"v0.1.30"``, ``"latest"``; it applies to every engine whose system
    knows it) or a mapping ``{system or engine: name}``. By default each
    engine opens in the release the file's ``thatchlab_meta`` names, else —
    a production thatch file, which has no ``thatchlab_meta`` — the release
    its schema shows (a ``prediction_dedup_pairs`` table: ``07ecf87``; none:
    ``v0.1.30``), else the system's newest. ``StoreContents.releases`` says
    which; a name no held system knows raises :class:`ReleaseError`. A corrupt, foreign or incomplete file raises
    :class:`StoreSchemaError` naming what is missing; so does a value of the
    wrong type (text in a number column, an embedding that is not float32
    bytes of one dimension), naming its table, row and column, and a
    ``thatchlab_meta`` ``engines`` entry that is not a list of engines the
    file holds, a value outside what production assumes (a confidence
    outside [0, 1], a negative count, a time not in production's text
    formats), a schema or thatchlab version newer than this release, and a
    manifest beside the file whose sha256 is not the file's (the database and
    its manifest do not belong together). Without a manifest (production's
    own files) ``StoreContents.manifest`` is None.
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
