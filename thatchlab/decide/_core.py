"""Decisions from a sweep: ship a configuration only when the held-out data shows it helps.

A sweep's winner on validation is a *candidate*. :func:`decide` tests what
would ship, as a whole, on the *test* segment: the candidate configuration
``θ̂`` against production's default ``θ₀`` first (the gate, at ``α``), then —
only if the gate passes — the configurations that keep a proper subset of
its changes, each against ``θ₀`` with Holm's step-down procedure at ``α``, to
drop changes that add nothing. Every configuration compared is a row of the
sweep, and differences are paired: both configurations are rescored on the
same cluster resamples (sessions drawn with replacement, the same draws for
every configuration), studentized with ``G − 1`` degrees of freedom
(:mod:`thatchlab.decide._testing`). What ships is one of those rows, with its
own interval; otherwise production's default stays and the evidence says why.

Only ratio metrics (``m = Σ_c num_c / Σ_c den_c`` over clusters ``c``) are
supported: the sweep records their per-cluster sums for every configuration
(``results.attrs["clusters"]``), so a resample of clusters rescored for all
configurations costs a matrix product (:mod:`thatchlab.sweep.resampling`).

:func:`decide` reads the frame once, as a :class:`~thatchlab.sweep.SweepDescription`
(engine, directions, per-cluster sums and the levels above them, identification,
release), then runs top to bottom on that description: the inputs, the candidate
and what it changes, the test stretch, the gate, the reduction family, the
constraint, the looks ledger and the record. Its steps follow it in that order.
The record it returns is :class:`Decision` (:mod:`thatchlab.decide._decision`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from functools import cached_property
from itertools import combinations

import numpy as np
import pandas as pd

from thatchlab.core.errors import InputError, warn
from thatchlab.core.params.production import production_params, setting
from thatchlab.decide._combine import combine_decisions
from thatchlab.decide._decision import EVIDENCE_COLUMNS, Decision
from thatchlab.decide._harm import harm_summary, per_user_effects
from thatchlab.decide._looks import append_look, read_looks
from thatchlab.decide._testing import (
    MIN_CLUSTERS,
    POWER,
    bootstrap_pvalue,
    check_constraint,
    describe_interval,
    detectable,
    holm,
    holm_levels,
    improvement_pvalue,
    interval_at,
    paired_difference,
    sequence_rho,
    span,
)
from thatchlab.sweep import config_id, describe
from thatchlab.sweep.reading import n_competitors, never_shipped, pick_candidate
from thatchlab.sweep.resampling import cluster_resamples, segment_stream

__all__ = ["decide", "Decision", "combine_decisions", "holm", "bootstrap_pvalue", "paired_difference",
           "EVIDENCE_COLUMNS", "POWER", "MIN_CLUSTERS"]

_holm_levels = holm_levels  # the old private name


def decide(results: pd.DataFrame, metric: str, *, default=None, constraint: dict | None = None,
           alpha: float = 0.05, n_boot: int = 1000, cluster: str | None = None, seed: int = 0,
           candidate=None, harm_margin: float = 0.0, allow_harm: bool = False, sequential: bool = False,
           looks=None) -> Decision:
    """Decide which configuration of a sweep to ship, testing what ships as a whole.

    :mod:`thatchlab.decide`'s notes state the procedure step by step (gate, Holm reduction family,
    constraint, harm), the release rule and each engine's metrics.

    Parameters
    ----------
    results : DataFrame
        A :func:`~thatchlab.sweep.sweep` result scored on ``metric`` with per-cluster sums
        (``attrs["clusters"]``), or a planted frame (:func:`~thatchlab.decide.planted_sweep`
        lists what one carries); read once, through its :class:`~thatchlab.sweep.SweepDescription`.
    metric : str
        A ratio of per-cluster sums the engine registers (``EngineSpec.ratio_metrics``), in its
        registered direction; ECE and AUC are not ratios of sums and are refused.
    default : params, optional
        What production runs (default: :func:`~thatchlab.core.params.production.production_params`
        under the release the sweep replayed).
    constraint : dict, optional
        ``{metric: (op, value)}``: the candidate is the best on validation among the rows meeting
        it (:func:`~thatchlab.sweep.best`); a configuration ships only if its test value does too.
    alpha : float, default=0.05
        Family-wise error rate of one decision (over every hypothesis tested).
    n_boot : int, default=1000
        Cluster resamples (drawn once from ``seed``, shared by every configuration).
    cluster : str, optional
        The resampling unit, the level at which rows depend: None takes ``"user"`` when the log
        named users (``attrs["cluster_parents"]``), else the sweep's unit (``"session"``, belief and
        calibration ``"memory"``); given, that unit or a level it recorded (evidence ``cluster``).
    seed : int, default=0
        Seed of the resamples.
    candidate : params, optional
        Test this instead of the validation winner: a value chosen without the test stretch (e.g.
        :class:`~thatchlab.fit.PriorFitter` on the training and validation rows); it, and the
        configurations keeping part of its changes, must be rows of the sweep.
    harm_margin, allow_harm : float, default=0.0; bool, default=False
        With users, each one's paired effect over their test sessions (:attr:`Decision.per_user`,
        :attr:`Decision.harm`): a configuration with a user's interval on the worsening side by
        more than ``harm_margin`` (metric units) ships only with ``allow_harm=True``.
    sequential, looks : bool, default=False; str or Path, optional
        ``sequential=True`` tests with anytime-valid confidence sequences: deciding again as the
        log grows keeps the error at ``α`` over any number of looks (intervals about 1.5× wider
        at 100 clusters). ``looks`` names a JSON ledger each call appends to; a plain decision on
        a ledger holding looks at this engine and metric warns its error holds for one look only.

    Returns
    -------
    Decision
        What ships, production's default, the candidate and the evidence per parameter.

    Raises
    ------
    InputError
        When an argument or the frame cannot be used, or the sweep lacks a row or sums it needs.

    See Also
    --------
    combine_decisions : Join decisions on several metrics of one engine.

    Examples
    --------
    >>> from thatchlab.synth import PreferenceWorld
    >>> from thatchlab.sweep import sweep
    >>> w = PreferenceWorld(n_users=2, n_situations=4, seed=0)
    >>> res = sweep(w.log(120), {"k": [2.0, 5.0]}, "log_loss", embedder=w.lookup_embedder())
    >>> list(decide(res, "log_loss", n_boot=200).evidence.columns) == list(EVIDENCE_COLUMNS)
    True
    """
    sweep = describe(results)  # the frame, read once
    inputs = _read_inputs(sweep, metric, default, cluster, alpha)
    case = _pick_and_check(sweep, inputs, metric, candidate, constraint, alpha)
    earlier = _earlier_looks(looks, inputs.spec.name, metric, sequential)
    test = _test_stretch(sweep, inputs, case, n_boot, seed, alpha, sequential, harm_margin, allow_harm)
    gate, reduction, shipping = _test_on_test_stretch(sweep, case, test, constraint)
    looked = _record_look(looks, earlier, case, inputs, gate, shipping, sequential)
    return _decision(sweep, inputs, case, test, gate, reduction, shipping, constraint, looked,
                     candidate is not None, n_boot, seed, sequential)


# -- 1. the inputs ---------------------------------------------------------------------------------
@dataclass
class _Inputs:
    """What decide reads off the description before picking: the engine, the sums at the resampling
    level, that level, production's default, the metric's direction and the never-shipped fields."""

    spec: object
    stats: object
    cluster: str
    default: object
    lower: bool
    fixed: list


def _read_inputs(sweep, metric, default, cluster, alpha) -> _Inputs:
    """Check the frame and the arguments; production's default under the sweep's one release."""
    spec, stats, cluster = _check_frame(sweep, metric, cluster, alpha)
    default = _check_default(spec, default, sweep.release())
    lower = sweep.minimizes(metric)
    # the release is the context of the comparison, never a candidate
    fixed = [*never_shipped(spec), *(["release"] if hasattr(default, "release") else [])]
    return _Inputs(spec, stats, cluster, default, lower, fixed)


def _check_frame(sweep, metric, cluster, alpha) -> tuple:
    """The engine spec, the per-cluster sums and the cluster unit of a sweep frame decide can use."""
    spec, stats = sweep.spec, sweep.clusters
    if not spec.ratio_metrics:
        raise InputError(f"decide: not supported for engine {spec.name!r} yet: its sweep records no "
                         "per-cluster sums (supported engines: prediction, behavior, belief, calibration, "
                         "anticipation)")
    if metric not in spec.ratio_metrics:
        raise InputError(f"decide: {metric!r} is not a ratio of per-cluster sums, so no paired cluster "
                         f"bootstrap; supported metrics: {', '.join(spec.ratio_metrics)}")
    if stats is None or (metric, "test") not in stats.num_index:
        raise InputError(f"decide: results carry no per-cluster sums of {metric!r} "
                         "(attrs['clusters']); pass the frame thatchlab.sweep.sweep returned, scored on "
                         f"{metric!r} (metric=[...] for several)")
    parents = sweep.cluster_parents
    if cluster is None:  # the level at which rows depend: users when the log names them
        cluster = "user" if "user" in parents else stats.unit
    if cluster != stats.unit:
        if cluster not in parents:
            levels = [stats.unit, *parents]
            raise InputError(f"cluster: this sweep's clusters are {' or '.join(map(repr, levels))}, "
                             f"got {cluster!r}")
        stats = stats.coarsen(parents[cluster], cluster)
    if not 0 < alpha < 1:
        raise InputError(f"alpha: expected 0 < alpha < 1, got {alpha!r}")
    return spec, stats, cluster


def _check_default(spec, default, release=None):
    """Production's parameters (``default``, or the engine's production default under the sweep's
    ``release`` when None); a given default must be of the sweep's release."""
    if default is None:
        default = production_params(spec.name, release or "latest")
    if not isinstance(default, spec.params_class):
        raise InputError(f"default: expected {spec.params_class.__name__}, got {type(default).__name__}")
    theirs = getattr(default, "release", None)
    if release is not None and theirs is not None and theirs != release:
        raise InputError(f"default: it is production under release {theirs!r} but the sweep replayed "
                         f"release {release!r}; pass production's values under {release!r} "
                         f"(production_params({spec.name!r}, release={release!r}))")
    return default


# -- 2. what the candidate changes (_picking.pick_candidate picks it) -----------------------------
@dataclass
class _Case:
    """One decision's setting: the metric, production's default, the candidate and its changes.

    ``fixed``: fields production has no setting for; ``unidentified``: swept
    fields the metric cannot see (``denominator``: those of them that change
    which rows the metric counts); ``differ``: the fields (not fixed) where the
    candidate differs from the default; ``considered``: the fields with an
    evidence row; ``tested``: ``differ`` less the unidentified (``D``).
    """

    spec: object
    metric: str
    default: object
    candidate: object
    lower: bool
    alpha: float
    fixed: list
    unidentified: list
    differ: list
    considered: list
    tested: list
    denominator: list = field(default_factory=list)

    @cached_property
    def full(self):
        """``θ̂``: the default with every tested change."""
        return self.theta(self.tested)

    @property
    def sign(self) -> float:
        """``+1`` for a minimised metric, ``−1`` for a maximised one: improvement = sign · (default − changed)."""
        return 1.0 if self.lower else -1.0

    def theta(self, changes):
        """``θ_A``: the default with the candidate's values of ``changes``."""
        return self.default.replace(**{f: getattr(self.candidate, f) for f in changes})

    def cid(self, params) -> str:
        """The sweep's ``config_id`` of ``params``."""
        return config_id(self.spec.name, params)

    def short(self, params) -> str:
        """The fields where ``params`` differs from the default, as ``(a=1, b=2)``."""
        return _short(params, self.spec, self.default)


def _pick_and_check(sweep, inputs, metric, candidate, constraint, alpha) -> _Case:
    """The candidate (the validation winner unless given, never-shipped fields at the default), what
    it changes, and the check that the sweep scored it and the default with per-cluster sums."""
    picked = pick_candidate(sweep.rows, metric, inputs.spec, inputs.default, inputs.fixed, candidate, constraint)
    case = _what_changes(sweep, metric, inputs, picked, alpha)
    _check_rows(sweep, inputs.stats, case)
    return case


def _what_changes(sweep, metric, inputs, candidate, alpha) -> _Case:
    """Which fields the candidate changes, and which of those the metric can see (the tested ones)."""
    spec, default, fixed, lower = inputs.spec, inputs.default, inputs.fixed, inputs.lower
    fields = [f.name for f in dataclasses.fields(spec.params_class)]
    ident = sweep.identification(metric)
    unidentified = list(ident["unidentified"])
    differ = [f for f in fields if getattr(candidate, f) != getattr(default, f) and f not in fixed]
    considered = [f for f in fields if f in differ or f in ident["swept"]]
    tested = [f for f in differ if f not in unidentified]
    return _Case(spec, metric, default, candidate, lower, alpha, fixed, unidentified, differ, considered, tested,
                 list(ident["denominator"]))


def _check_rows(sweep, stats, case) -> None:
    """Refuse unless the default and the candidate are sweep rows with per-cluster sums."""
    default, full = case.default, case.full
    label = {case.cid(default): f"production's default configuration {_short(default, case.spec)}",
             case.cid(full): f"the candidate {case.short(full)}"}
    cids = [case.cid(default), case.cid(full)]
    have = sweep.config_ids
    missing = [label[c] for c in cids if c not in have]
    if missing:
        raise InputError("decide: the sweep has no row for " + "; ".join(dict.fromkeys(missing))
                         + ". decide compares the candidate with production's default configuration "
                         "and never approximates either: include production's default values in the "
                         "space (a grid over each parameter's values and its default)")
    try:
        stats.rows(cids)
    except KeyError as err:
        raise InputError("decide: no per-cluster sums for " + "; ".join(label[c] for c in err.args[0])
                         + " (rows read back from an older cache); rerun the sweep") from None


# -- 3. the test stretch, resampled once -----------------------------------------------------------
def _test_stretch(sweep, inputs, case, n_boot, seed, alpha, sequential, harm_margin, allow_harm) -> _TestStretch:
    """The test clusters' sums and resamples, with the confidence sequence's ``rho`` when
    ``sequential`` and the users (the harm check) when the log names them."""
    test = _TestStretch(inputs.stats, case.metric, n_boot, seed, alpha)
    test.rho = sequence_rho(alpha) if sequential else None
    test.users = _Users.of(sweep, case.metric, alpha, inputs.lower, harm_margin, allow_harm)
    test.default_cid = case.cid(inputs.default)
    return test


class _TestStretch:
    """The test segment's per-cluster sums of ``metric`` and one set of cluster resamples ``W``,
    shared by every configuration compared (so every difference is paired)."""

    def __init__(self, stats, metric, n_boot, seed, alpha):
        self.stats, self.metric, self.alpha = stats, metric, alpha
        self.W = cluster_resamples(len(stats.labels["test"]), n_boot, seed, segment_stream("test"))
        self._sums = {}
        self.users: _Users | None = None
        self.rho: float | None = None
        self.default_cid: str | None = None

    def sums(self, cid) -> tuple:
        """``(num, den)`` of configuration ``cid`` over the test clusters."""
        if cid not in self._sums:
            num, den = self.stats.sums(self.metric, "test", [cid])
            self._sums[cid] = (num[0], den[0])
        return self._sums[cid]

    def compare(self, cid, ref) -> dict:
        """:func:`~thatchlab.decide._testing.paired_difference` of ``cid`` minus ``ref`` (marked
        sequential, so its intervals and p-values are the confidence sequence's, when asked)."""
        r = paired_difference(*self.sums(ref), *self.sums(cid), self.W, self.alpha)
        if self.rho is not None:
            r["sequential"] = {"rho": self.rho}
        return r

    def constraint(self, results, constraint, cid) -> dict:
        """:func:`~thatchlab.decide._testing.check_constraint` of ``cid`` on these resamples, and the
        harm check of ``cid`` against the default when users are known (key ``"harm"``)."""
        out = check_constraint(self.stats, results, constraint, cid, self.W, self.alpha)
        if self.users is not None and self.default_cid is not None and cid != self.default_cid:
            out["harm"] = self.users.check(cid, self.default_cid)
        return out

    def harm(self, cid, ref) -> tuple:
        """``(per-user table, harm summary)`` of ``cid`` against ``ref``; ``(None, None)`` without users."""
        if self.users is None or cid == ref:
            return None, None
        return self.users.table(cid, ref), self.users.summary(cid, ref)


@dataclass
class _Users:
    """The session-level sums and each session's user, for per-user effects and the harm check."""

    stats: object
    parents: dict
    metric: str
    alpha: float
    lower: bool
    margin: float
    allowed: bool

    @classmethod
    def of(cls, sweep, metric, alpha, lower, margin, allowed):
        users = sweep.cluster_parents.get("user")
        stats = sweep.clusters
        if not users or stats is None or stats.unit != "session":
            return None
        if not (isinstance(margin, (int, float)) and math.isfinite(margin) and margin >= 0):
            raise InputError(f"harm_margin: expected a finite number >= 0, got {margin!r}")
        return cls(stats, users, metric, alpha, lower, float(margin), bool(allowed))

    def table(self, cid, ref) -> pd.DataFrame:
        return per_user_effects(self.stats, self.parents, self.metric, ref, cid, self.alpha, self.lower,
                                self.margin)

    def summary(self, cid, ref) -> dict:
        return harm_summary(self.table(cid, ref), self.margin, self.allowed)

    def check(self, cid, ref) -> dict:
        """The harm check in the shape of a constraint check (``rule``, ``value``, ``holds``, ``text``)."""
        s = self.summary(cid, ref)
        text = (f"it hurts {len(s['hurt'])} of {s['users']} users beyond the harm margin {s['margin']:g} "
                f"({', '.join(map(str, s['hurt'][:5]))}{', …' if len(s['hurt']) > 5 else ''}: each one's "
                f"interval lies on the worsening side; allow_harm=True ships it anyway; {s['split']})")
        return {"rule": f"no user hurt beyond {s['margin']:g}", "value": float(len(s["hurt"])),
                "ci_lower": float("nan"), "ci_upper": float("nan"), "holds": s["holds"], "text": text}


# -- 4.-6. on the test stretch: the gate, the reduction family (Holm), the constraint ---------------
def _test_on_test_stretch(sweep, case, test, constraint) -> tuple:
    """``(gate, reduction, shipping)``: the serial gatekeeper run on the test stretch."""
    gate = _gate(case, test)
    reduction = _reduce(case, test, gate, sweep)
    shipping = _ship(case, test, gate, reduction, sweep.rows, constraint)
    return gate, reduction, shipping


# -- 4. the gate: the candidate against the default ------------------------------------------------
@dataclass
class _Gate:
    """The candidate ``θ̂`` against the default: its paired test, the test clusters, whether it passed."""

    result: dict
    n_clusters: int
    few: bool
    p_value: float
    passed: bool


def _gate(case, test) -> _Gate:
    """The joint change at ``α``: passed when its ``1 − α`` interval lies on the improving side of 0
    and at least :data:`MIN_CLUSTERS` test clusters hold data."""
    gate = test.compare(case.cid(case.full), case.cid(case.default))
    n_cl = gate["n_clusters"]
    few = n_cl < MIN_CLUSTERS
    p = improvement_pvalue(gate, case.lower)
    passed = bool(case.tested) and not few and math.isfinite(p) and p <= case.alpha
    return _Gate(gate, n_cl, few, p, passed)


# -- 5. the reduction family, Holm -----------------------------------------------------------------
@dataclass
class _Reduction:
    """The proper subsets ``A`` of the tested changes with a sweep row, each ``θ_A`` against the default.

    ``family[A]`` its paired test, ``p`` the directional p-values (NaN as 1),
    ``adjusted``/``levels`` Holm's adjusted p-values and levels, ``rejected``
    the subsets Holm rejects (only after the gate), ``over[A]`` the candidate
    against ``θ_A`` and ``adds[A]`` whether that rest of the change helps;
    ``sufficient`` the rejected subsets the rest adds nothing to (smallest
    first, ties: larger gain), ``others`` the remaining rejected ones.
    """

    subsets: list
    family: dict
    p: np.ndarray
    adjusted: dict
    levels: dict
    rejected: list
    over: dict
    adds: dict
    sufficient: list
    others: list


def _reduce(case, test, gate, sweep) -> _Reduction:
    """Every proper subset of the tested changes that the sweep scored, against the default, Holm at ``α``."""
    have = set(sweep.config_ids) & set(test.stats.config_ids)
    tested, alpha, lower, cid, theta = case.tested, case.alpha, case.lower, case.cid, case.theta
    subsets = [A for r in range(1, len(tested)) for A in combinations(tested, r) if cid(theta(A)) in have]
    default_id, full_id = cid(case.default), cid(case.full)
    family = {A: test.compare(cid(theta(A)), default_id) for A in subsets}
    fam_p = np.nan_to_num([improvement_pvalue(family[A], lower) for A in subsets], nan=1.0)
    adjusted = dict(zip(subsets, holm(fam_p))) if subsets else {}
    levels = dict(zip(subsets, holm_levels(fam_p, alpha))) if subsets else {}
    rejected = [A for A in subsets if gate.passed and adjusted[A] <= alpha]
    over = {A: test.compare(full_id, cid(theta(A))) for A in rejected}  # θ̂ − θ_A: what the rest adds
    adds = {A: improvement_pvalue(over[A], lower) <= alpha for A in rejected}

    def gain(A):
        return -case.sign * family[A]["delta"]

    sufficient = sorted((A for A in rejected if not adds[A]), key=lambda A: (len(A), -gain(A)))
    others = sorted((A for A in rejected if adds[A]), key=lambda A: -gain(A))
    return _Reduction(subsets, family, fam_p, adjusted, levels, rejected, over, adds, sufficient, others)


# -- 6. the constraint, and what ships -------------------------------------------------------------
@dataclass
class _Shipping:
    """What ships: ``options`` in order of preference, each one's constraint ``checks`` on test,
    ``shipped`` (the first whose checks hold; None: nothing), ``params`` (``θ_shipped``) and
    ``own`` (the paired test of the shipped configuration, else of the candidate)."""

    options: list
    checks: dict
    shipped: tuple | None
    params: object
    own: dict


def _ship(case, test, gate, red, results, constraint) -> _Shipping:
    """The first option (sufficient subsets, the candidate, the other rejected subsets) whose test
    values satisfy the constraint; none when the gate failed."""
    options = [*red.sufficient, tuple(case.tested), *red.others] if gate.passed else []
    checks = {A: test.constraint(results, constraint, case.cid(case.theta(A))) for A in options}
    shipped = next((A for A in options if all(c["holds"] for c in checks[A].values())), None)
    params = case.theta(shipped) if shipped is not None else None
    own = gate.result if shipped is None or tuple(shipped) == tuple(case.tested) else red.family[shipped]
    return _Shipping(options, checks, shipped, params, own)


# -- 7. the evidence, parameter by parameter -------------------------------------------------------
def _evidence(case, gate, red, ship, unit) -> pd.DataFrame:
    """One row per considered parameter (columns :data:`EVIDENCE_COLUMNS`), its reason in words."""
    g, alpha, metric, lower = gate.result, case.alpha, case.metric, case.lower
    gate_desc = (f"the candidate {case.short(case.full)} against production's default: test {metric} "
                 f"{g['delta']:+.4g}, {span(g, alpha)} "
                 f"{describe_interval(*interval_at(g, alpha), lower)} (p = {gate.p_value:.3g})")
    rows = [_evidence_row(f, case, gate, red, ship, unit, gate_desc) for f in case.considered]
    evidence = pd.DataFrame(rows, columns=list(EVIDENCE_COLUMNS))
    evidence["shipped"] = evidence["shipped"].astype(bool)
    return evidence


def _evidence_row(f, case, gate, red, ship, unit, gate_desc) -> dict:
    """Parameter ``f``'s evidence: its interval alone (when the sweep has it) and why it ships or not."""
    metric, alpha, lower, spec = case.metric, case.alpha, case.lower, case.spec
    d_val, c_val = getattr(case.default, f), getattr(case.candidate, f)
    row = dict(parameter=f, default=d_val, candidate=c_val, shipped=False, metric=metric, delta=np.nan,
               ci_lower=np.nan, ci_upper=np.nan, n_clusters=gate.n_clusters, cluster=unit,
               detectable=np.nan)
    if f in case.fixed:
        row["candidate"] = d_val
        row["reason"] = (f"never ships: production has no setting for {f} ({setting(spec.name, f).name}); "
                         f"the candidate is the best configuration keeping {f}={d_val!r}")
        return row
    if f in case.denominator:
        row["reason"] = (f"not identified: {f} changes which rows {metric} counts (its denominator), so "
                         f"scores under different values are rates over different rows and cannot be "
                         f"compared; production's default {f}={d_val!r} stays")
        return row
    if f in case.unidentified:
        row["reason"] = (f"not identified: {metric} cannot see {f} on this data (changing it alone never "
                         f"changes the score), so production's default {f}={d_val!r} stays")
        return row
    if f not in case.differ:
        row["reason"] = f"the best configuration on validation already uses production's default {f}={d_val!r}"
        return row
    tested, shipped, own, S = case.tested, ship.shipped, ship.own, ship.params
    alone, level = ((gate.result, alpha) if len(tested) == 1 else
                    (red.family.get((f,)), red.levels.get((f,), np.nan)))
    note = ""
    if alone is not None and len(tested) > 1:
        lo, hi = interval_at(alone, level)
        row.update(delta=alone["delta"], ci_lower=lo, ci_upper=hi,
                   detectable=detectable(alone["se"], alone["df"], level))
        note = (f"; alone, {f}={c_val!r} changes test {metric} by {alone['delta']:+.4g}, Holm-level "
                f"{span(alone, level)} {describe_interval(lo, hi, lower)}")
    elif alone is not None:
        g = gate.result
        lo, hi = interval_at(g, alpha)
        row.update(delta=g["delta"], ci_lower=lo, ci_upper=hi, detectable=detectable(g["se"], g["df"], alpha))
    else:
        note = f"; the sweep has no row changing {f} alone"
    if gate.few:
        row["reason"] = (f"keeps {f}={d_val!r}: only {gate.n_clusters} test {_plural(unit)} hold data and decide "
                         f"needs at least {MIN_CLUSTERS} to compare configurations; nothing ships")
    elif shipped is not None and f in shipped:
        row["shipped"] = True
        how = ("its own paired interval" if tuple(shipped) == tuple(tested)
               else f"Holm-adjusted p = {red.adjusted[shipped]:.3g} in the reduction family")
        row["reason"] = (f"ships {f}={c_val!r} as part of {case.short(S)}: test {metric} "
                         f"{'falls' if lower else 'rises'} by {abs(own['delta']):.4g} against the "
                         f"default, {span(own, alpha)} {describe_interval(*interval_at(own, alpha), lower)} "
                         f"({how})" + note)
    elif shipped is not None:
        over = red.over[shipped]
        why = (f"{case.short(S)} without it improves test {metric} by {abs(own['delta']):.4g} "
               f"(Holm-adjusted p = {red.adjusted[shipped]:.3g}), and the candidate is not shown better "
               f"than it ({over['delta']:+.4g}, {span(over, alpha)} "
               f"{describe_interval(*interval_at(over, alpha), lower)})")
        if shipped not in red.sufficient:
            why = (f"the candidate fails the constraint on test, and {case.short(S)} without "
                   f"{f} satisfies it and improves test {metric} by {abs(own['delta']):.4g} "
                   f"(Holm-adjusted p = {red.adjusted[shipped]:.3g})")
        row["reason"] = f"keeps {f}={d_val!r}: {why}" + note
    elif gate.passed:
        bad = "; ".join(_failed(m, c) for m, c in ship.checks[tuple(tested)].items() if not c["holds"])
        alt = (", and no reduced configuration that improves satisfies it" if len(ship.options) > 1 else "")
        row["reason"] = (f"keeps {f}={d_val!r}: {gate_desc}, but on test the candidate's {bad}{alt}; "
                         "nothing ships" + note)
    else:
        row["reason"] = f"keeps {f}={d_val!r}: nothing ships — {gate_desc}" + note
    return row


# -- the looks ledger ------------------------------------------------------------------------------
def _earlier_looks(looks, engine, metric, sequential) -> int:
    """Looks the ledger holds at this engine and metric; warns when a plain decision repeats them."""
    if looks is None:
        return 0
    n = sum(1 for r in read_looks(looks) if r.get("engine") == engine and r.get("metric") == metric)
    if n and not sequential:
        warn(f"decide: the looks ledger {looks} records {n} earlier look(s) at {engine} {metric}; a plain "
             "decision's error rate holds for one look only, so deciding again as the log grows ships a "
             "change that does nothing more often: pass sequential=True", UserWarning)
    return n


def _record_look(looks, earlier, case, inputs, gate, shipping, sequential) -> int:
    """Append this look to the ledger (when one is named); the number of looks before this one."""
    if looks is None:
        return earlier
    return append_look(looks, _look_record(inputs.spec.name, case.metric, sequential, inputs.stats.unit, gate,
                                           shipping, case.alpha))


def _look_record(engine, metric, sequential, unit, gate, shipping, alpha) -> dict:
    lo, hi = interval_at(gate.result, alpha)
    return {"engine": engine, "metric": metric, "sequential": bool(sequential), "cluster": unit,
            "n_clusters": int(gate.n_clusters), "delta": gate.result["delta"], "ci_lower": lo, "ci_upper": hi,
            "shipped": shipping.params is not None}


def _failed(metric, check) -> str:
    """Why one check of the candidate fails on test, in words."""
    if "text" in check:
        return check["text"]
    bound = check.get("bound", float("nan"))
    said = f", {check['basis']} {bound:.4g}" if math.isfinite(bound) else ""
    return (f"{metric} = {check['value']:.4g}{said} (interval [{check['ci_lower']:.4g}, "
            f"{check['ci_upper']:.4g}]) is not {check['rule']}")


# -- 8. the shipped configuration as a whole -------------------------------------------------------
def _combined(case, test, gate, red, ship, results, constraint, n_boot) -> dict:
    """:attr:`Decision.combined`: the shipped configuration (else the candidate) against the default,
    the gate, the reduction family, the constraint and the procedure in words."""
    alpha, lower, cid, S, own, g = case.alpha, case.lower, case.cid, ship.params, ship.own, gate.result
    unit, n_cl = test.stats.unit, gate.n_clusters
    target = case.full if S is None else S
    return {"config_id": None if S is None else cid(S),
            "params": {} if S is None else {f: getattr(S, f) for f in ship.shipped},
            "delta": own["delta"], "ci_lower": interval_at(own, alpha)[0],
            "ci_upper": interval_at(own, alpha)[1], "p_value": improvement_pvalue(own, lower),
            "detectable": detectable(own["se"], own["df"], alpha), "n_clusters": n_cl, "df": own["df"],
            "candidate_config_id": cid(case.full),
            "gate": {"config_id": cid(case.full), "delta": g["delta"], "ci_lower": interval_at(g, alpha)[0],
                     "ci_upper": interval_at(g, alpha)[1], "p_value": gate.p_value, "passed": gate.passed},
            "family": [{"changes": list(A), "config_id": cid(case.theta(A)), "delta": red.family[A]["delta"],
                        "ci_lower": interval_at(red.family[A], red.levels[A])[0],
                        "ci_upper": interval_at(red.family[A], red.levels[A])[1],
                        "p_value": float(red.p[i]), "p_adjusted": float(red.adjusted[A]),
                        "rejected": A in red.rejected, "rest_adds": red.adds.get(A)}
                       for i, A in enumerate(red.subsets)],
            "constraint": test.constraint(results, constraint, cid(target)) if constraint else None,
            "procedure": (f"serial gatekeeper: the candidate against the default at alpha={alpha:g}, "
                          f"then {len(red.subsets)} reduced configurations with Holm at alpha={alpha:g}; "
                          f"paired differences over {n_cl} {_plural(unit)} with CR2 cluster-robust standard "
                          + ("errors and anytime-valid confidence sequences (valid over any number of looks)"
                             if own.get("sequential") else
                             f"errors and t with {own['df']:.3g} degrees of freedom (the effective number of "
                             f"{_plural(unit)} less one)"))}


# -- 9. what selection on validation cost ----------------------------------------------------------
def _optimism(case, results) -> float:
    """The candidate's advantage over the default on validation minus its advantage on test."""
    by_id = results.set_index("config_id")
    v0, vc = (float(by_id.loc[case.cid(x), f"val_{case.metric}"]) for x in (case.default, case.full))
    t0, tc = (float(by_id.loc[case.cid(x), f"test_{case.metric}"]) for x in (case.default, case.full))
    return case.sign * (v0 - vc) - case.sign * (t0 - tc)


# -- 10. the record --------------------------------------------------------------------------------
def _decision(sweep, inputs, case, test, gate, red, ship, constraint, looked, chosen_elsewhere, n_boot, seed,
              sequential) -> Decision:
    """The :class:`Decision`: what ships, the evidence, the joint record, what selection cost and
    the harm of what ships (else of the candidate) against the default."""
    metric, default, alpha = case.metric, inputs.default, case.alpha
    evidence = _evidence(case, gate, red, ship, inputs.stats.unit)
    combined = _combined(case, test, gate, red, ship, sweep.rows, constraint, n_boot)
    optimism = _optimism(case, sweep.rows)
    n_configs = 1 if chosen_elsewhere else n_competitors(sweep.rows, metric, constraint)
    shipped = default if ship.params is None else ship.params
    per_user, harm = test.harm(case.cid(case.full if ship.params is None else ship.params), case.cid(default))
    return Decision(inputs.spec.name, metric, shipped, default, case.candidate, evidence, combined, float(optimism),
                    n_configs, case.unidentified, alpha, int(n_boot), inputs.cluster, int(seed), constraint,
                    per_user=per_user, harm=harm, looks=int(looked), sequential=bool(sequential))


# -- words -----------------------------------------------------------------------------------------
def _plural(unit) -> str:
    unit = str(unit)
    return unit[:-1] + "ies" if unit.endswith("y") else unit + "s"


def _short(params, spec, reference=None) -> str:
    """The fields of ``params`` that differ from ``reference`` (the class defaults), as ``(a=1, b=2)``."""
    base = spec.params_class() if reference is None else reference
    diff = {f.name: getattr(params, f.name) for f in dataclasses.fields(params)
            if getattr(params, f.name) != getattr(base, f.name)}
    return "(" + ", ".join(f"{k}={v!r}" for k, v in diff.items()) + ")" if diff else "(all defaults)"
