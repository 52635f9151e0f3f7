"""Decisions on several metrics of one engine joined into one, the joint change checked on each.

:func:`combine_decisions` is re-exported by :mod:`thatchlab.decide.decide` and
:mod:`thatchlab.decide`; the :class:`~thatchlab.decide.Decision` it builds lives in
:mod:`thatchlab.decide._decision`.
"""

from __future__ import annotations

import dataclasses
import math

import pandas as pd

from thatchlab.core.errors import InputError
from thatchlab.decide._decision import EVIDENCE_COLUMNS, Decision
from thatchlab.decide._testing import (
    check_constraint,
    describe_interval,
    improvement_pvalue,
    interval_at,
    paired_difference,
    span,
)
from thatchlab.sweep import config_id
from thatchlab.sweep.reading import minimizes, spec_of
from thatchlab.sweep.resampling import cluster_resamples, segment_stream

__all__ = ["combine_decisions"]


def combine_decisions(decisions, results: pd.DataFrame | None = None) -> Decision:
    """Join decisions on different metrics of one engine into one, checking the joint change.

    Each parameter's evidence row is taken from the first decision (in the
    given order) whose metric identifies it and that considered it; a
    parameter no metric identifies keeps its first evidence row (never
    shipped). Example: K and P0 decided on ``log_loss``, the threshold on
    ``interruption_rate`` under a constraint.

    What ships is built in the given order, a pre-declared gatekeeping order:
    the first decision that ships something contributes its shipped
    configuration (tested as a whole by that decision); each later one adds
    its own shipped configuration only if

    - it changes no parameter an earlier decision considered (else the two
      disagree and the later one's changes are kept at the default), and
    - the joint configuration is a row of ``results`` (one sweep scored on
      every part's metric) and, against the default on the test stretch, it
      improves *every* contributing part's metric (paired, that part's
      ``α``, resamples and t reference) and meets every part's constraint.

    Without ``results`` only one decision may contribute; the others' changes
    are kept and the reason says the combination was never scored. Each
    part controls its own family-wise error at its ``α``: pass ``alpha``
    divided by the number of parts to each :func:`decide` for ``α`` over all
    of them (the main job does).

    The merged ``params`` is the common default with the accepted changes;
    ``metric`` joins the metrics with ``" + "``; ``combined`` holds the
    shipped configuration's ``config_id``, ``params``, ``delta``,
    ``ci_lower``, ``ci_upper`` and ``n_clusters`` on the first contributing
    metric, ``checks`` (per metric, the joint configuration's paired test) and
    ``parts`` (each part's own ``combined``); ``optimism`` is NaN, see
    ``parts``; ``n_configs`` is the largest of the parts'.
    """
    decisions = list(decisions)
    if not decisions:
        raise InputError("combine_decisions: expected at least one Decision")
    first = decisions[0]
    for d in decisions[1:]:
        if d.engine != first.engine:
            raise InputError(f"combine_decisions: decisions of engines {first.engine!r} and {d.engine!r}")
        if d.default != first.default:
            raise InputError("combine_decisions: the decisions start from different defaults")
    chosen: dict = {}
    for d in decisions:  # identified first
        for row in d.evidence.to_dict("records"):
            if row["parameter"] not in chosen and row["parameter"] not in d.unidentified:
                chosen[row["parameter"]] = dict(row)
    for d in decisions:
        for row in d.evidence.to_dict("records"):
            chosen.setdefault(row["parameter"], dict(row))
    fields = [f.name for f in dataclasses.fields(first.params)]
    spec = spec_of(results) if results is not None else None
    accepted: dict = {}
    contributors: list = []
    considered: set = set()
    checks: dict = {}
    refused: dict = {}  # parameter -> why a part's shipped value was not added
    for d in decisions:
        mine = dict(d.combined.get("params") or {})
        if mine:
            clash = sorted(p for p in mine if p in considered and p not in accepted)
            trial = {**accepted, **mine}
            why = None
            if clash:
                why = (f"the {d.metric} decision ships ({_pairs(mine)}), but an earlier decision considered "
                       f"{', '.join(clash)} and kept production's default")
            elif contributors and results is None:
                why = (f"the {d.metric} decision ships ({_pairs(mine)}), but together with ({_pairs(accepted)}) "
                       "that configuration was never scored (pass the sweep that scored both metrics as results=)")
            elif contributors:
                got = _joint_checks(results, spec, first.default.replace(**trial), first.default,
                                    [*contributors, d])
                checks = {**checks, **got["checks"]}
                if got["failed"]:
                    why = (f"the {d.metric} decision ships ({_pairs(mine)}), but together with "
                           f"({_pairs(accepted)}) the configuration {got['failed']}")
            if why is None:
                accepted, contributors = trial, [*contributors, d]
            else:
                for p in mine:
                    refused.setdefault(p, why)
        considered |= set(d.evidence["parameter"]) - set(d.unidentified)
    rows = [chosen[f] for f in fields if f in chosen]
    for row in rows:
        p = row["parameter"]
        was = bool(row["shipped"])
        row["shipped"] = p in accepted
        if p in accepted and not was:  # shipped by a later part: its row explains it
            row.update(next(r for d in contributors for r in d.evidence.to_dict("records")
                            if r["parameter"] == p and r["shipped"]))
        if p in refused:
            row["shipped"] = False
            row["reason"] = f"keeps {p}={getattr(first.default, p)!r}: {refused[p]}"
    evidence = pd.DataFrame(rows, columns=list(EVIDENCE_COLUMNS))
    evidence["shipped"] = evidence["shipped"].astype(bool)
    unidentified = [f for f in fields if f in chosen and all(f in d.unidentified for d in decisions
                                                             if f in d.evidence["parameter"].tolist())]
    cand = {r["parameter"]: r["candidate"] for r in rows if r["parameter"] not in unidentified}
    nan = float("nan")
    lead = contributors[0].combined if contributors else decisions[0].combined
    combined = {"config_id": (config_id(first.engine, first.default.replace(**accepted)) if accepted else None),
                "params": dict(accepted),
                **{k: lead.get(k, nan) for k in ("delta", "ci_lower", "ci_upper", "p_value", "detectable",
                                                  "n_clusters", "df")},
                "metric": (contributors[0].metric if contributors else decisions[0].metric),
                "checks": checks, "parts": {d.metric: d.combined for d in decisions},
                "procedure": ("serial combination in the given order ("
                              + ", ".join(d.metric for d in decisions)
                              + "): a later decision's shipped configuration is added only if the joint "
                              "configuration improves every contributing metric on test and meets every "
                              "constraint")}
    if len(contributors) > 1:
        head = checks[contributors[0].metric]
        combined.update({k: head[k] for k in ("delta", "ci_lower", "ci_upper", "p_value", "n_clusters")})
    return Decision(first.engine, " + ".join(dict.fromkeys(d.metric for d in decisions)),
                    first.default.replace(**accepted), first.default, first.default.replace(**cand), evidence,
                    combined, nan, max(d.n_configs for d in decisions), unidentified, first.alpha,
                    first.n_boot, first.cluster, first.seed, None, decisions)


def _pairs(changes: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in changes.items())


def _joint_checks(results, spec, joint, default, parts) -> dict:
    """The joint configuration against the default on each part's metric and constraint (test)."""
    stats = results.attrs.get("clusters")
    jid, did = config_id(spec.name, joint), config_id(spec.name, default)
    out, failed = {}, None
    if stats is None or jid not in set(stats.config_ids) or jid not in set(results["config_id"]):
        return {"checks": {}, "failed": "was not scored by the sweep passed as results"}
    for d in parts:
        if (d.metric, "test") not in stats.num_index:
            return {"checks": out, "failed": f"has no {d.metric} sums in the sweep passed as results"}
        W = cluster_resamples(len(stats.labels["test"]), d.n_boot, d.seed, segment_stream("test"))
        (n0, d0), (n1, d1) = (tuple(a[0] for a in stats.sums(d.metric, "test", [c])) for c in (did, jid))
        r = paired_difference(n0, d0, n1, d1, W, d.alpha)
        lower = minimizes(results, d.metric, None, spec)
        p = improvement_pvalue(r, lower)
        lo, hi = interval_at(r, d.alpha)
        cons = check_constraint(stats, results, d.constraint, jid, W, d.alpha) if d.constraint else {}
        out[d.metric] = {"delta": r["delta"], "ci_lower": lo, "ci_upper": hi, "p_value": p,
                         "n_clusters": r["n_clusters"], "constraint": cons,
                         "passed": bool(math.isfinite(p) and p <= d.alpha and all(c["holds"] for c in cons.values()))}
        if failed is None and not out[d.metric]["passed"]:
            bad = [f"{m} = {c['value']:.4g} is not {c['rule']}" for m, c in cons.items() if not c["holds"]]
            failed = (f"fails on test: {'; '.join(bad)}" if bad else
                      f"does not improve test {d.metric} ({r['delta']:+.4g}, {span(r, d.alpha)} "
                      f"{describe_interval(lo, hi, lower)})")
    return {"checks": out, "failed": failed}
