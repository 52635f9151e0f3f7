"""What a merge checks before it writes: the export (bytes, manifest, engines, unreviewed values),
the embedding space of its vectors against production's, production's path and the timeout.

Every check raises a typed error naming the file and what was expected, before production is written.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import sqlite3
from pathlib import Path

from thatchlab.core.errors import InputError, ModelMismatchError, StoreSchemaError
from thatchlab.core.schema import ENGINE_TABLES
from thatchlab.core.sqlite import SQLITE_HEADER, quote_name, table_names
from thatchlab.embed import model_basename
from thatchlab.store._core import connect_bytes, read_contents


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


def _check_timeout(timeout) -> float:
    try:
        t = float(timeout)
    except (TypeError, ValueError):
        t = float("nan")
    if isinstance(timeout, bool) or not (math.isfinite(t) and 0 <= t <= 86400):
        raise InputError(f"timeout: expected a finite number of seconds between 0 and 86400, got {timeout!r}")
    return t
