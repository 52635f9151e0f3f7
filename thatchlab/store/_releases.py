"""Which production release a store file was made for, and whether an export fits a production file.

An export names the release of every engine it holds (``thatchlab_meta`` row ``releases``,
``{engine: release}``, and the manifest's ``releases``). A production thatch file names none, but
its schema tells: thatch's ``src/db.ts`` creates the ``prediction_dedup_pairs`` table
(``CREATE TABLE IF NOT EXISTS``, on every open) from the releases after v0.1.30 on
(sysread/thatch src/db.ts @2ed97f2a; the stored version read was 09b805fe), and v0.1.30 has no
such table. So a file holding thatch's tables and ``prediction_dedup_pairs`` is ``07ecf87``, one
without it ``v0.1.30``. The other systems' files carry no such mark.

>>> schema_release({"stores", "predictions", "prediction_dedup_pairs"})
'07ecf87'
>>> schema_release({"stores", "predictions"})
'v0.1.30'
>>> schema_release({"belief_memories"}) is None
True
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Mapping

from thatchlab.core.errors import ReleaseMismatchError, ThatchlabError
from thatchlab.core.params import (
    RELEASES,
    SYSTEMS,
    ReleaseError,
    latest_release,
    release_names,
    resolve_release,
)
from thatchlab.core.sqlite import connect_readonly, table_names

__all__ = ["DEDUP_PAIRS_TABLE", "THATCH_TABLES", "schema_release", "meta_releases", "choose_release",
           "check_asked", "check_merge_release", "export_meta", "engine_params_key"]

#: The table whose presence marks a thatch file written by a release after v0.1.30.
DEDUP_PAIRS_TABLE = "prediction_dedup_pairs"
#: Tables any thatch release's file holds (one of them is enough to call a file thatch's).
THATCH_TABLES = ("predictions", "behaviors")
#: engine name → its key in ``thatchlab_meta``'s ``params`` (the export keyword).
_PARAMS_KEY = {"prediction": "prediction", "behavior": "behavior", "belief": "beliefs",
               "calibration": "calibration", "anticipation": "patterns"}


def engine_params_key(engine: str) -> str:
    """The export keyword under which ``thatchlab_meta``'s ``params`` holds ``engine``'s values."""
    return _PARAMS_KEY[engine]


def schema_release(tables) -> str | None:
    """The thatch release a file's table names show (None when it holds no thatch tables)."""
    tables = set(tables)
    if not tables & set(THATCH_TABLES):
        return None
    return "07ecf87" if DEDUP_PAIRS_TABLE in tables else "v0.1.30"


def meta_releases(meta: Mapping) -> dict:
    """``{engine: release}`` a file's ``thatchlab_meta`` names: its ``releases`` row, else the
    ``release`` field of each engine's recorded params (files written before the row existed)."""
    out = {}
    params = meta.get("params") if isinstance(meta.get("params"), Mapping) else {}
    for engine, key in _PARAMS_KEY.items():
        p = params.get(key)
        if isinstance(p, Mapping) and isinstance(p.get("release"), str):
            out[engine] = p["release"]
    named = meta.get("releases")
    if isinstance(named, Mapping):
        out.update({k: v for k, v in named.items() if k in _PARAMS_KEY and isinstance(v, str)})
    return out


def _asked(release, engine: str):
    """The release asked for ``engine`` (None: not asked). A mapping is keyed by engine, export
    keyword or system name; a single name applies to every engine whose system knows it."""
    system = SYSTEMS[engine]
    if isinstance(release, Mapping):
        for key in (engine, _PARAMS_KEY[engine], system):
            if key in release:
                return resolve_release(system, release[key])
        return None
    try:
        return resolve_release(system, release)
    except ReleaseError:
        return None


def choose_release(engine: str, release, meta: Mapping, tables, label) -> tuple[str, str]:
    """``(release, why)`` a file's ``engine`` opens in: the one asked for, else the one
    ``thatchlab_meta`` names, else (a production file without ``thatchlab_meta``) the one its
    schema shows for thatch, else the newest. ``why`` is ``"asked"``, ``"meta"``, ``"schema"`` or
    ``"newest"``."""
    system = SYSTEMS[engine]
    if release is not None:
        got = _asked(release, engine)
        if got is not None:
            return got, "asked"
    releases = meta_releases(meta)
    # an engine the file holds but the meta does not name (thatch's other, empty section) follows
    # the release named for its system
    same = [r for e, r in releases.items() if SYSTEMS[e] == system]
    named = releases.get(engine, same[0] if same else None)
    if named is not None:
        try:
            return resolve_release(system, named), "meta"
        except ReleaseError as exc:
            raise ReleaseError(f"{label}: table 'thatchlab_meta' names {engine} release {named!r}: "
                               f"{exc}") from None
    if "thatchlab_meta" not in set(tables) and system == "thatch":
        shown = schema_release(tables)
        if shown is not None:
            return shown, "schema"
    return latest_release(system), "newest"


def check_asked(release, engines, label) -> None:
    """Refuse a ``release=`` that names no release of any engine the file holds."""
    if release is None:
        return
    if isinstance(release, Mapping):
        for key in release:
            systems = {SYSTEMS[e] for e in engines}
            keys = set(engines) | {_PARAMS_KEY[e] for e in engines} | systems
            if key not in keys:
                known = sorted(set(RELEASES) | set(_PARAMS_KEY) | set(_PARAMS_KEY.values()))
                if key not in known:
                    raise ReleaseError(f"release: {key!r} is neither a system ({', '.join(sorted(RELEASES))}) "
                                       "nor an engine")
                raise ReleaseError(f"{label}: release given for {key!r} but the file holds no "
                                   f"{key} tables (it holds {', '.join(engines) or 'none'})")
        return
    if not any(_asked(release, e) is not None for e in engines):
        systems = dict.fromkeys(SYSTEMS[e] for e in engines)
        known = "; ".join(f"{system}: {', '.join(release_names(system))}" for system in systems)
        raise ReleaseError(f"{label}: release {release!r} is no release of the systems this file holds "
                           f"({known}; or 'latest')")


def production_releases(path) -> tuple[dict, str]:
    """``({engine: release}, how)`` of the thatch engines a production file shows: the ones its
    own ``thatchlab_meta`` names (a file thatchlab wrote), else its schema's, for both engines
    (``{}`` when it holds no thatch tables). ``how`` says which, in words."""
    with contextlib.closing(connect_readonly(path)) as con:
        tables = set(table_names(con))
        meta = {}
        if "thatchlab_meta" in tables:
            with contextlib.suppress(sqlite3.Error):
                meta = _decoded(con.execute("SELECT key, value FROM thatchlab_meta").fetchall())
    shown = schema_release(tables)
    if shown is None:
        return {}, ""
    named = {e: r for e, r in meta_releases(meta).items() if SYSTEMS[e] == "thatch"}
    if named:
        return ({e: named.get(e, next(iter(named.values()))) for e in ("prediction", "behavior")},
                "its thatchlab_meta names it")
    how = f"its schema has {'a' if shown == '07ecf87' else 'no'} {DEDUP_PAIRS_TABLE} table"
    return {"prediction": shown, "behavior": shown}, how


def _decoded(rows) -> dict:
    out = {}
    for k, v in rows:
        try:
            out[k] = json.loads(v)
        except (TypeError, ValueError):
            out[k] = v
    return out


def export_meta(data: bytes) -> dict:
    """The ``thatchlab_meta`` rows (JSON values decoded) of an export held as bytes."""
    con = sqlite3.connect(":memory:")
    try:
        con.deserialize(data)
        rows = con.execute("SELECT key, value FROM thatchlab_meta").fetchall()
    except sqlite3.Error:
        return {}
    finally:
        con.close()
    return _decoded(rows)


def check_merge_release(meta, export_path, production_db, allow: bool = False) -> dict:
    """Refuse to merge an export made for another thatch release than the production file's
    schema shows (:class:`ReleaseMismatchError`, naming both), unless ``allow``.

    Returns ``{engine: (export release, production release)}`` of every mismatch (empty when they
    agree, when the export names no release, or when production holds no thatch tables).
    Production is only read. ``meta`` is the export's ``thatchlab_meta`` (or its bytes).
    """
    if isinstance(meta, (bytes, bytearray)):
        meta = export_meta(bytes(meta))
    named = {e: r for e, r in meta_releases(meta).items() if SYSTEMS[e] == "thatch"}
    engines = meta.get("engines") if isinstance(meta.get("engines"), list) else []
    named = {e: r for e, r in named.items() if e in engines}
    if not named:
        return {}
    try:
        shows, how = production_releases(production_db)
    except (sqlite3.Error, ThatchlabError):  # the merge's own checks name an unreadable production file
        return {}
    if not shows:
        return {}
    wrong = {e: (r, shows[e]) for e, r in named.items() if r != shows[e]}
    if wrong and not allow:
        parts = ", ".join(f"{e} for thatch {r}" for e, (r, _) in wrong.items())
        shown = next(iter(wrong.values()))[1]
        raise ReleaseMismatchError(
            f"{export_path}: the export was made {parts}, but {production_db} runs thatch {shown} "
            f"({how}); replay and export under release {shown!r} (--release thatch={shown}), or "
            "pass allow_release_mismatch=True (--allow-release-mismatch) to merge it anyway; production "
            "was not touched",
            export_release=next(iter(wrong.values()))[0], production_release=shown)
    return wrong
