"""What an export ships, what it declares and what nobody reviewed: the manifest's account of its values.

Every parameter value an export carries is one of three things, per engine:

- *shipped*: a :class:`~thatchlab.tune.Decision` chose it on held-out data;
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

from thatchlab.core.errors import InputError
from thatchlab.core.params.production import (
    differences,
    engine_key,
    env_line,
    production_params,
    setting,
)

__all__ = ["Review", "review", "check_params_match", "DECIDABLE"]

#: The export keywords a decision may be given for.
DECIDABLE = ("prediction", "behavior")


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
            reference = production_params(engine)
            if constants and key in DECIDABLE:
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
        left = {k: v for k, v in differences(engine, params, reference).items() if k not in ship}
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
