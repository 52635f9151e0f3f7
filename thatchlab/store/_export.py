"""The export: engine state written as a SQLite file production opens unchanged, plus a manifest.

:func:`export_sqlite` checks the target and the declared model, settles each engine's parameters
(a decision's, the caller's or the engine's own), accounts for what differs from production
(:mod:`thatchlab.store._review`), then builds and verifies the file through
:func:`~thatchlab.store._core.atomic_sqlite` and writes the manifest beside it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from thatchlab import __version__
from thatchlab.core.errors import ModelMismatchError, StoreWriteError, ThatchlabError
from thatchlab.core.schema import ENGINE_TABLES, META_DDL, SCHEMA_VERSION, STORES_DDL
from thatchlab.embed import embedder_identity
from thatchlab.store._core import (
    _atomic_text,
    _section,
    atomic_sqlite,
    check_export_target,
    connect_bytes,
)
from thatchlab.store._review import (
    check_params_match,
    log_end_text,
    manifest_for,
    newest_change,
    review,
)

__all__ = ["export_sqlite", "ExportResult", "PRODUCTION_CONSTANTS", "THRESHOLD_ENV"]


@dataclass
class ExportResult:
    """Where an export went and what it holds.

    Every parameter is kept as the attribute of the same name; ``os.fspath(result)`` is ``path``.

    Parameters
    ----------
    path : pathlib.Path
        The exported SQLite file.
    manifest_path : pathlib.Path
        The manifest written beside it (``<stem>.manifest.json``).
    counts : dict
        ``{table: rows written}``.
    model : str or list or None
        The embedding model declared (a list when the vectors' models differ; None without vectors).
    engines : list
        The engines exported, as recorded in ``thatchlab_meta``.
    """

    path: Path
    manifest_path: Path
    counts: dict
    model: str | None
    engines: list

    def __fspath__(self):
        return str(self.path)


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

    How parameters, decisions, production's constants and ``log_end`` are recorded is described
    in :mod:`thatchlab.store` (what an export records).

    Parameters
    ----------
    path : str or os.PathLike
        Target file (``.db``/``.sqlite``). Its directory must exist.
    prediction, behavior : ScoringEngine, default=None
        Scoring engines (their tables are written in the production thatch DDL; a ``stores`` table
        with ``global`` is always present).
    beliefs, calibration, patterns : object, default=None
        State of the other engines, when given.
    production_model : str, default=None
        The model name to declare; ``None`` means the vectors' own model.
    allow_model_mismatch : bool, default=False
        Declare a ``production_model`` other than the vectors' own.
    params : params object or dict, default=None
        One params object or a mapping ``{"prediction": ScoringParams, ...}``; defaults to each
        engine's own (or the decision's). Values no decision shipped are listed as ``unreviewed``.
    decision : Decision or dict, default=None
        A :class:`thatchlab.decide.Decision` or a mapping ``{engine: Decision}`` (scoring engines)
        whose ``params`` the engine is exported with.
    production_constants : dict, default=None
        The K, P0 and soft weight production runs; ``None`` means :data:`PRODUCTION_CONSTANTS`.
    declared : dict, default=None
        ``{engine: params}`` production already runs (the reference for ``unreviewed``).
    log_end : datetime or str, default=None
        The time of the last event of the log the state was replayed from; ``None``: the newest
        change time among the export's own rows.
    overwrite : bool, default=False
        Replace an existing target (an earlier export only, see :func:`check_export_target`).

    Returns
    -------
    ExportResult
        The file's ``path``, its ``manifest_path`` and the row ``counts``.

    Raises
    ------
    ExportExistsError
        The target exists and ``overwrite`` is false, or it is not an earlier export.
    StoreWriteError
        The directory is missing or not writable, or the round-trip check failed.
    ModelMismatchError
        ``production_model`` is not the vectors' model and ``allow_model_mismatch`` is false.
    InputError
        ``params`` given for an engine differ from its decision's (naming each parameter).

    See Also
    --------
    import_sqlite, merge_into

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from thatchlab.embed import LookupEmbedder
    >>> from thatchlab.scoring import PredictionEngine
    >>> eng = PredictionEngine(LookupEmbedder({"writing tests": [1, 0], "use pytest": [0, 1]}, name="toy"))
    >>> _ = eng.update("writing tests", "use pytest", "confirm", None, now="2026-01-01T09:00:00Z")
    >>> res = export_sqlite(Path(tempfile.mkdtemp()) / "thatch.db", prediction=eng)
    >>> res.model, res.engines, res.counts["predictions"], res.manifest_path.name
    ('toy', ['prediction'], 1, 'thatch.manifest.json')
    """
    given = {k: v for k, v in dict(prediction=prediction, behavior=behavior, beliefs=beliefs,
                                   calibration=calibration, patterns=patterns).items() if v is not None}
    return _export(Path(path), given, production_model=production_model, allow_mismatch=allow_model_mismatch,
                   params=params, decision=decision, production_constants=production_constants,
                   declared=declared, log_end=log_end, overwrite=overwrite)


def _export(path: Path, given: dict, *, production_model, allow_mismatch, params, decision,
            production_constants, declared, log_end, overwrite) -> ExportResult:
    """:func:`export_sqlite`'s steps: check the target, settle the parameters, build and verify the
    file atomically, then write the manifest."""
    sections = {k: _section(k) for k in given}
    check_export_target(path, overwrite)
    _check_directory(path)
    model = _declared_model(path, given, sections, production_model, allow_mismatch)
    decisions = _decisions_for(decision, given)
    chosen = _chosen_params(given, sections, params, decisions)
    constants = _production_constants(production_constants)
    account = review(chosen, decisions, _declared_for(declared, given),
                     constants if production_constants is not None else None)
    # the scoring sections compute `confidence` under the params they are handed: hand them
    # production's constants, so the rows agree with what production computes next
    written = {k: (p.replace(**constants) if k in _SCORING and p is not None else p)
               for k, p in chosen.items()}
    releases = {sections[k].ENGINE: p.release for k, p in chosen.items() if getattr(p, "release", None)}
    file = _ExportFile(path, given, sections, chosen, written, model, account, releases, log_end)
    atomic_sqlite(path, file.build, verify=file.verify)
    manifest = manifest_for(path, model, [sections[k].ENGINE for k in given], given, chosen, file.counts,
                            account, constants, file.digest["sha256"])
    manifest.update(log_end=file.digest["log_end"], releases=releases, embedder=file.digest["embedder"])
    manifest_path = path.with_name(path.stem + ".manifest.json")
    _atomic_text(manifest_path, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return ExportResult(path=path, manifest_path=manifest_path, counts=file.counts, model=model,
                        engines=[sections[k].ENGINE for k in given])


def _check_directory(path: Path) -> None:
    """The target's directory exists and is writable."""
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise StoreWriteError(f"{path}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise StoreWriteError(f"{path}: directory {parent} is not writable")


def _declared_model(path: Path, given: dict, sections: dict, production_model, allow_mismatch: bool):
    """The model the export declares: ``production_model``, checked against the vectors' own
    models unless a mismatch is allowed, else the vectors' model (a list when they differ)."""
    models = {k: sections[k].model(obj) for k, obj in given.items()}
    vector_models = sorted({m for m in models.values() if m})
    if production_model is not None and vector_models and not allow_mismatch:
        wrong = [m for m in vector_models if m != production_model]
        if wrong:
            raise ModelMismatchError(
                f"{path}: vectors were made with {wrong} but production_model={production_model!r}; "
                "thresholds do not transfer between models (pass allow_model_mismatch=True to "
                "declare it anyway)")
    return production_model if production_model is not None else (
        vector_models[0] if len(vector_models) == 1 else (vector_models or None))


def _chosen_params(given: dict, sections: dict, params, decisions: dict) -> dict:
    """Each engine's parameters: its decision's (explicit ones must equal them), else the caller's
    or the engine's own."""
    chosen = {}
    for k, obj in given.items():
        if k in decisions:
            explicit = _explicit_params(params, k, decisions[k].params)
            if explicit is not None:
                check_params_match(k, explicit, decisions[k].params)
            chosen[k] = decisions[k].params
        else:
            chosen[k] = _params_for(k, params, obj, sections[k])
    return chosen


class _ExportFile:
    """How the export's database is built (every section's tables and ``thatchlab_meta``) and
    verified (each section read back from the serialized bytes equals what was given)."""

    def __init__(self, path, given, sections, chosen, written, model, account, releases, log_end):
        self.path, self.given, self.sections = path, given, sections
        self.chosen, self.written, self.model = chosen, written, model
        self.account, self.releases, self.log_end = account, releases, log_end
        self.counts: dict = {}
        self.digest: dict = {}

    def build(self, conn) -> None:
        """Create and fill every table of the export in ``conn``."""
        conn.execute(STORES_DDL)
        conn.execute("INSERT OR IGNORE INTO stores(name) VALUES ('global')")
        # the scoring DDL is always written, so production can open any export
        for key in ("prediction", "behavior"):
            sec = self.sections.get(key) or _section(key)
            sec.create(conn)
        for key, obj in self.given.items():
            sec = self.sections[key]
            if key not in ("prediction", "behavior"):
                sec.create(conn)
            self.counts.update(sec.write(conn, obj, self.written[key]))
        conn.execute(META_DDL)
        self.digest["log_end"] = log_end_text(self.log_end, self.path) if self.log_end is not None \
            else newest_change(conn)
        conn.executemany("INSERT INTO thatchlab_meta(key, value) VALUES (?, ?)", sorted(self.meta(conn).items()))

    def meta(self, conn) -> dict:
        """The ``thatchlab_meta`` rows, values as JSON text."""
        meta = {
            "schema_version": str(SCHEMA_VERSION),
            "thatchlab_version": __version__,
            "model": json.dumps(self.model),
            "engines": json.dumps([self.sections[k].ENGINE for k in self.given]),
            "params": json.dumps({k: (p.to_dict() if p is not None else None) for k, p in self.chosen.items()},
                                 sort_keys=True),
            # inside the file, so a merge sees it even without the manifest
            "unreviewed": json.dumps(self.account.unreviewed, sort_keys=True),
            "log_end": json.dumps(self.digest["log_end"]),
            # the production release each engine was replayed and exported for
            "releases": json.dumps(self.releases, sort_keys=True),
        }
        # the embedding space of the vectors (a merge refuses another space than production's)
        self.digest["embedder"] = _embedder_record(conn, self.given, self.sections)
        meta["embedder"] = json.dumps(self.digest["embedder"], sort_keys=True)
        return meta

    def verify(self, data: bytes) -> None:
        """Read every section back from ``data`` and compare it with what was given."""
        with contextlib.closing(connect_bytes(data)) as conn:
            for key, obj in self.given.items():
                back = self.sections[key].read(conn)
                try:
                    self.sections[key].check_equal(obj, back, self.written[key])
                except AssertionError as exc:
                    raise StoreWriteError(f"{self.path}: round-trip check of {key!r} failed: {exc}") from None
                del back
        self.digest["sha256"] = hashlib.sha256(data).hexdigest()  # the bytes the file is written from


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
