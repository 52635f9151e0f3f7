"""What an export ships, what it declares and what nobody reviewed: the manifest's account of its values.

Every parameter value an export carries is one of three things, per engine:

- *shipped*: a :class:`~thatchlab.decide.Decision` chose it on held-out data;
  it travels as an environment line (a setting production reads) or as a
  recommended production change (a constant in production's code), with the
  decision's evidence beside it;
- *declared*: the caller says production already runs it (the decision's
  ``default``, or ``declared=``); it is what the comparison was against, so
  nothing about it ships;
- *unreviewed*: anything else that differs from what production runs
  (:func:`thatchlab.core.params.production.production_params`). It is listed
  under ``unreviewed`` — never as an environment line or a recommended change —
  and :func:`~thatchlab.store.merge_into` refuses the export unless told to
  allow it.
"""

from __future__ import annotations

import dataclasses
import math

import pandas as pd

from thatchlab import __version__
from thatchlab.core.errors import InputError, ThatchlabError
from thatchlab.core.jsfmt import js_number
from thatchlab.core.params.production import (
    differences,
    engine_key,
    env_line,
    production_params,
    setting,
)
from thatchlab.core.schema import SCHEMA_VERSION

__all__ = ["Review", "review", "check_params_match", "SCORING_KEYS", "manifest_for", "log_end_text", "newest_change"]

#: The scoring engines' export keywords (their K, P0 and soft weight are production constants).
SCORING_KEYS = ("prediction", "behavior")


@dataclasses.dataclass
class Review:
    """The manifest's account of one export's parameter values (see the module notes)."""

    environment: list
    recommended: dict
    unreviewed: dict
    declared: dict
    shipped: dict
    records: dict


def _fields_differ(a, b) -> list:
    return [f.name for f in dataclasses.fields(a) if getattr(a, f.name) != getattr(b, f.name)]


def check_params_match(key: str, params, decision_params) -> None:
    """Raise :class:`InputError` naming each field where explicit ``params`` contradict the decision's."""
    if type(params) is not type(decision_params):
        raise InputError(f"params for {key!r}: expected {type(decision_params).__name__} beside its decision, "
                         f"got {type(params).__name__}")
    wrong = _fields_differ(params, decision_params)
    if wrong:
        pairs = "; ".join(f"{f}={getattr(params, f)!r} but the decision ships {f}={getattr(decision_params, f)!r}"
                          for f in wrong)
        raise InputError(f"params for {key!r} contradict the decision passed beside them: {pairs}. Pass the "
                         "decision alone (its params are what ships) or params alone (then every value that "
                         "differs from production's is listed as unreviewed)")


def _json(v):
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def combined_record(decision) -> dict:
    """The ``"parameter": "combined"`` record of a decision: the shipped configuration as a whole."""
    rec = getattr(decision, "combined_record", None)
    if callable(rec):
        return rec()
    c = getattr(decision, "combined", {}) or {}
    shipped = list(decision.shipped_parameters())
    return {"parameter": "combined", "shipped": bool(shipped), "params": dict(c.get("params") or {}),
            **{k: _json(c.get(k, float("nan"))) for k in ("delta", "ci_lower", "ci_upper", "n_clusters")}}


def review(chosen: dict, decisions: dict, declared: dict, constants: dict | None = None) -> Review:
    """Sort each engine's values in ``chosen`` ``{key: params}`` into shipped, declared and unreviewed.

    ``constants``: the K, P0 and soft weight the caller declared production runs (scoring
    engines), part of what production runs."""
    env, recommended, unreviewed, declared_out, shipped_out, records = [], {}, {}, {}, {}, {}
    for key, params in chosen.items():
        if params is None:
            continue
        engine = engine_key(key)
        dec = decisions.get(key)
        reference = declared.get(key)
        if dec is not None:
            default = getattr(dec, "default", None)
            if reference is not None and default is not None and _fields_differ(reference, default):
                raise InputError(f"declared for {key!r}: differs from the default its decision was made "
                                 f"against in {', '.join(_fields_differ(reference, default))}")
            reference = default if reference is None else reference
        if reference is None:
            reference = production_params(engine, getattr(params, "release", "latest"))
            if constants and key in SCORING_KEYS:
                reference = reference.replace(**constants)
        theirs = differences(engine, reference)
        if theirs:
            declared_out[key] = {k: _json(v) for k, v in theirs.items()}
        ship = {}
        if dec is not None:
            for name in dec.shipped_parameters():
                where = setting(engine, name)
                if where.kind == "none":
                    raise InputError(f"decision for {key!r} ships {name}, which production has no setting "
                                     f"for ({where.name}); it cannot ship")
                ship[name] = getattr(params, name)
            records[key] = [*dec.to_records(), combined_record(dec)]
        # the release is the context of every value (declared, never shipped, never unreviewed)
        left = {k: v for k, v in differences(engine, params, reference).items()
                if k not in ship and setting(engine, k).kind != "release"}
        if left:
            unreviewed[key] = {k: _json(v) for k, v in left.items()}
        for name, value in ship.items():
            if setting(engine, name).kind == "env":
                env.append(env_line(engine, name, value))
            else:
                recommended.setdefault(key, {})[name] = _json(value)
        if ship:
            shipped_out[key] = {k: _json(v) for k, v in ship.items()}
    return Review(env, recommended, unreviewed, declared_out, shipped_out, records)


_CHANGE_COLUMNS = ("updated_at", "created_at", "observed_at", "confidence_decayed_at", "ts")


def log_end_text(value, path) -> str:
    """``value`` as ISO-8601 UTC text with milliseconds and ``Z`` (a typed error when it is no time)."""
    try:
        t = pd.Timestamp(value)
    except (TypeError, ValueError):
        t = None
    if t is None or t is pd.NaT or t != t:
        raise ThatchlabError(f"{path}: log_end: expected a timestamp, got {value!r}")
    if t.tzinfo is None:
        raise ThatchlabError(f"{path}: log_end: expected a timezone-aware timestamp (UTC), got {value!r}")
    t = t.tz_convert("UTC")
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def newest_change(conn) -> str | None:
    """The newest change time among an export's own rows (None when no row carries one)."""
    best, best_jd = None, None
    for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
        cols = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
        for col in cols:
            if col not in _CHANGE_COLUMNS:
                continue
            row = conn.execute(f'SELECT "{col}", julianday("{col}") AS jd FROM "{table}" '
                               f'WHERE jd IS NOT NULL ORDER BY jd DESC LIMIT 1').fetchone()
            if row is not None and (best_jd is None or row[1] > best_jd):
                best, best_jd = row[0], row[1]
    return best


def manifest_for(path, model, engines, given, chosen, counts, account, constants, sha256) -> dict:
    """The ``<stem>.manifest.json`` of an export: what it holds, and the account of its values."""
    notes = []
    if any(k in given for k in SCORING_KEYS):
        notes.append(
            "Production hard-codes K=5, P0=0.5 and W_SOFT=0.25 in its scoring engine and reads "
            "only the nudge thresholds from its environment. The exported "
            f"confidence column was computed under K={js_number(constants['k'])}, "
            f"P0={js_number(constants['p0'])}, the constants production applies to the next "
            "signal.")
    if account.recommended:
        notes.append(
            "The values under recommended_production_changes were shipped by a decision (its "
            "evidence is under decisions); they reach production only by changing its code, and "
            "are not baked into the rows.")
    if account.unreviewed:
        notes.append(
            "The values under unreviewed differ from what production runs and no decision shipped "
            "them: they are neither environment lines nor recommended changes, and a merge refuses "
            "this export unless told to allow them (--allow-unreviewed).")
    out = {
        "file": path.name,
        "sha256": sha256,
        "schema_version": SCHEMA_VERSION,
        "thatchlab_version": __version__,
        "model": model,
        "engines": engines,
        "params": {k: (p.to_dict() if p is not None else None) for k, p in chosen.items()},
        "counts": counts,
        "environment": account.environment,
        "unreviewed": account.unreviewed,
        "declared": account.declared,
        "shipped": account.shipped,
        "notes": notes,
    }
    if any(k in given for k in SCORING_KEYS):
        out["production_constants"] = constants
    out["recommended_production_changes"] = account.recommended
    if account.records:
        out["decisions"] = account.records
    return out
