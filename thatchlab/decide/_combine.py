"""Decisions on several metrics of one engine joined into one, the joint change checked on each.

:func:`combine_decisions` is re-exported by :mod:`thatchlab.decide.decide` and
:mod:`thatchlab.decide`; the :class:`~thatchlab.decide.Decision` it builds lives in
:mod:`thatchlab.decide._decision`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

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
from thatchlab.sweep import config_id, describe
from thatchlab.sweep.resampling import cluster_resamples, segment_stream

__all__ = ["combine_decisions"]


def combine_decisions(decisions, results: pd.DataFrame | None = None) -> Decision:
    """Join decisions on different metrics of one engine into one, checking the joint change.

    Each parameter's evidence row is taken from the first decision (in the given order) whose
    metric identifies it and that considered it; a parameter no metric identifies keeps its first
    evidence row (never shipped). Example: K and P0 decided on ``log_loss``, the threshold on
    ``interruption_rate`` under a constraint. What ships is built in the given order, a
    pre-declared gatekeeping order: the first decision that ships something contributes its
    shipped configuration (tested as a whole by that decision); each later one adds its own only
    if it changes no parameter an earlier decision considered (else the two disagree and the later
    one's changes are kept at the default), and the joint configuration is a row of ``results``
    (one sweep scored on every part's metric) that, against the default on the test stretch,
    improves *every* contributing part's metric (paired, that part's ``α``, resamples and t
    reference) and meets every part's constraint. Without ``results`` only one decision may
    contribute; the others' changes are kept and the reason says the combination was never scored.
    Each part controls its own family-wise error at its ``α``: pass ``alpha`` divided by the
    number of parts to each :func:`decide` for ``α`` over all of them (the main job does).

    Parameters
    ----------
    decisions : iterable of Decision
        Decisions of one engine from one default, in gatekeeping order.
    results : DataFrame, optional
        The sweep that scored every part's metric (read once, through its description).

    Returns
    -------
    Decision
        ``params`` is the common default with the accepted changes; ``metric`` joins the metrics
        with ``" + "``; ``combined`` holds the shipped configuration's ``config_id``, ``params``,
        ``delta``, ``ci_lower``, ``ci_upper`` and ``n_clusters`` on the first contributing metric,
        ``checks`` (per metric, the joint configuration's paired test) and ``parts`` (each part's
        own ``combined``); ``optimism`` is NaN, see ``parts``; ``n_configs`` is the largest of the
        parts'.

    Raises
    ------
    InputError
        When there is no decision, or they differ in engine or default.

    See Also
    --------
    decide : One metric's decision.

    Examples
    --------
    >>> import numpy as np
    >>> from thatchlab.decide import decide, planted_sweep
    >>> frame = planted_sweep(30, -0.05, np.random.default_rng(0))
    >>> combine_decisions([decide(frame, "log_loss", n_boot=200)], frame).metric
    'log_loss'
    """
    decisions, sweep = _read_parts(decisions, results)
    chosen = _evidence_rows(decisions)
    joint = _accept_in_order(decisions, sweep)
    rows = _merged_rows(decisions, chosen, joint)
    return _joint_decision(decisions, rows, joint)


def _read_parts(decisions, results) -> tuple:
    """The decisions, checked to share an engine and a default, and the description of ``results``
    (None without it)."""
    decisions = list(decisions)
    if not decisions:
        raise InputError("combine_decisions: expected at least one Decision")
    first = decisions[0]
    for d in decisions[1:]:
        if d.engine != first.engine:
            raise InputError(f"combine_decisions: decisions of engines {first.engine!r} and {d.engine!r}")
        if d.default != first.default:
            raise InputError("combine_decisions: the decisions start from different defaults")
    return decisions, (describe(results) if results is not None else None)


def _evidence_rows(decisions) -> dict:
    """Each parameter's evidence row: from the first decision whose metric identifies it, else its
    first row."""
    chosen: dict = {}
    for d in decisions:  # identified first
        for row in d.evidence.to_dict("records"):
            if row["parameter"] not in chosen and row["parameter"] not in d.unidentified:
                chosen[row["parameter"]] = dict(row)
    for d in decisions:
        for row in d.evidence.to_dict("records"):
            chosen.setdefault(row["parameter"], dict(row))
    return chosen


@dataclass
class _Joint:
    """What the serial combination accepted: the changes, the contributing decisions, the joint
    configuration's checks per metric and, per refused parameter, why."""

    accepted: dict = field(default_factory=dict)
    contributors: list = field(default_factory=list)
    checks: dict = field(default_factory=dict)
    refused: dict = field(default_factory=dict)


def _accept_in_order(decisions, sweep) -> _Joint:
    """Walk the decisions in order, adding each one's shipped changes when they clash with nothing
    considered before and the joint configuration passes every contributing part's checks."""
    joint = _Joint()
    considered: set = set()
    for d in decisions:
        mine = dict(d.combined.get("params") or {})
        if mine:
            trial = {**joint.accepted, **mine}
            why = _why_refused(d, mine, trial, considered, joint, sweep, decisions[0].default)
            if why is None:
                joint.accepted, joint.contributors = trial, [*joint.contributors, d]
            else:
                for p in mine:
                    joint.refused.setdefault(p, why)
        considered |= set(d.evidence["parameter"]) - set(d.unidentified)
    return joint


def _why_refused(d, mine, trial, considered, joint, sweep, default) -> str | None:
    """Why decision ``d``'s shipped changes ``mine`` cannot join the accepted ones (None: they can);
    records the joint configuration's checks in ``joint.checks``."""
    accepted, contributors = joint.accepted, joint.contributors
    clash = sorted(p for p in mine if p in considered and p not in accepted)
    if clash:
        return (f"the {d.metric} decision ships ({_pairs(mine)}), but an earlier decision considered "
                f"{', '.join(clash)} and kept production's default")
    if contributors and sweep is None:
        return (f"the {d.metric} decision ships ({_pairs(mine)}), but together with ({_pairs(accepted)}) "
                "that configuration was never scored (pass the sweep that scored both metrics as results=)")
    if contributors:
        got = _joint_checks(sweep, default.replace(**trial), default, [*contributors, d])
        joint.checks = {**joint.checks, **got["checks"]}
        if got["failed"]:
            return (f"the {d.metric} decision ships ({_pairs(mine)}), but together with "
                    f"({_pairs(accepted)}) the configuration {got['failed']}")
    return None


def _merged_rows(decisions, chosen, joint) -> list:
    """The evidence rows in field order, marked shipped as the combination decided, with the
    reason of a later part that shipped a parameter and of every refusal."""
    first = decisions[0]
    fields = [f.name for f in dataclasses.fields(first.params)]
    rows = [chosen[f] for f in fields if f in chosen]
    for row in rows:
        p = row["parameter"]
        was = bool(row["shipped"])
        row["shipped"] = p in joint.accepted
        if p in joint.accepted and not was:  # shipped by a later part: its row explains it
            row.update(next(r for d in joint.contributors for r in d.evidence.to_dict("records")
                            if r["parameter"] == p and r["shipped"]))
        if p in joint.refused:
            row["shipped"] = False
            row["reason"] = f"keeps {p}={getattr(first.default, p)!r}: {joint.refused[p]}"
    return rows


def _joint_decision(decisions, rows, joint) -> Decision:
    """The joined :class:`Decision`: merged evidence, the accepted changes on the common default."""
    first = decisions[0]
    fields = [f.name for f in dataclasses.fields(first.params)]
    evidence = pd.DataFrame(rows, columns=list(EVIDENCE_COLUMNS))
    evidence["shipped"] = evidence["shipped"].astype(bool)
    unidentified = [f for f in fields if f in set(evidence["parameter"])
                    and all(f in d.unidentified for d in decisions if f in d.evidence["parameter"].tolist())]
    cand = {r["parameter"]: r["candidate"] for r in rows if r["parameter"] not in unidentified}
    accepted = joint.accepted
    return Decision(first.engine, " + ".join(dict.fromkeys(d.metric for d in decisions)),
                    first.default.replace(**accepted), first.default, first.default.replace(**cand), evidence,
                    _joint_record(decisions, joint), float("nan"), max(d.n_configs for d in decisions),
                    unidentified, first.alpha, first.n_boot, first.cluster, first.seed, None, decisions)


def _joint_record(decisions, joint) -> dict:
    """:attr:`Decision.combined` of the joined decision (see :func:`combine_decisions`)."""
    first, contributors, accepted = decisions[0], joint.contributors, joint.accepted
    nan = float("nan")
    lead = contributors[0].combined if contributors else decisions[0].combined
    combined = {"config_id": (config_id(first.engine, first.default.replace(**accepted)) if accepted else None),
                "params": dict(accepted),
                **{k: lead.get(k, nan) for k in ("delta", "ci_lower", "ci_upper", "p_value", "detectable",
                                                  "n_clusters", "df")},
                "metric": (contributors[0].metric if contributors else decisions[0].metric),
                "checks": joint.checks, "parts": {d.metric: d.combined for d in decisions},
                "procedure": ("serial combination in the given order ("
                              + ", ".join(d.metric for d in decisions)
                              + "): a later decision's shipped configuration is added only if the joint "
                              "configuration improves every contributing metric on test and meets every "
                              "constraint")}
    if len(contributors) > 1:
        head = joint.checks[contributors[0].metric]
        combined.update({k: head[k] for k in ("delta", "ci_lower", "ci_upper", "p_value", "n_clusters")})
    return combined


def _pairs(changes: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in changes.items())


def _joint_checks(sweep, joint, default, parts) -> dict:
    """The joint configuration against the default on each part's metric and constraint (test)."""
    stats = sweep.clusters
    jid, did = config_id(sweep.spec.name, joint), config_id(sweep.spec.name, default)
    out, failed = {}, None
    if stats is None or jid not in set(stats.config_ids) or jid not in sweep.config_ids:
        return {"checks": {}, "failed": "was not scored by the sweep passed as results"}
    for d in parts:
        if (d.metric, "test") not in stats.num_index:
            return {"checks": out, "failed": f"has no {d.metric} sums in the sweep passed as results"}
        W = cluster_resamples(len(stats.labels["test"]), d.n_boot, d.seed, segment_stream("test"))
        (n0, d0), (n1, d1) = (tuple(a[0] for a in stats.sums(d.metric, "test", [c])) for c in (did, jid))
        r = paired_difference(n0, d0, n1, d1, W, d.alpha)
        lower = sweep.minimizes(d.metric)
        p = improvement_pvalue(r, lower)
        lo, hi = interval_at(r, d.alpha)
        cons = check_constraint(stats, sweep.rows, d.constraint, jid, W, d.alpha) if d.constraint else {}
        out[d.metric] = {"delta": r["delta"], "ci_lower": lo, "ci_upper": hi, "p_value": p,
                         "n_clusters": r["n_clusters"], "constraint": cons,
                         "passed": bool(math.isfinite(p) and p <= d.alpha and all(c["holds"] for c in cons.values()))}
        if failed is None and not out[d.metric]["passed"]:
            bad = [f"{m} = {c['value']:.4g} is not {c['rule']}" for m, c in cons.items() if not c["holds"]]
            failed = (f"fails on test: {'; '.join(bad)}" if bad else
                      f"does not improve test {d.metric} ({r['delta']:+.4g}, {span(r, d.alpha)} "
                      f"{describe_interval(lo, hi, lower)})")
    return {"checks": out, "failed": failed}
