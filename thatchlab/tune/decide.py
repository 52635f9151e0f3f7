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
(:mod:`thatchlab.tune._testing`). What ships is one of those rows, with its
own interval; otherwise production's default stays and the evidence says why.

Only ratio metrics (``m = Σ_c num_c / Σ_c den_c`` over clusters ``c``) are
supported: the sweep records their per-cluster sums for every configuration
(``results.attrs["clusters"]``), so a resample of clusters rescored for all
configurations costs a matrix product.
"""

from __future__ import annotations

import dataclasses
import html
import math
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from thatchlab.core.errors import InputError
from thatchlab.core.params.production import production_params, setting
from thatchlab.tune._picking import _constraint_mask, _direction, _spec_of, best, identification
from thatchlab.tune._testing import (
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
    span,
)
from thatchlab.tune.registry import cluster_resamples, segment_stream
from thatchlab.tune.sweep import config_id

__all__ = ["decide", "Decision", "combine_decisions", "holm", "bootstrap_pvalue", "paired_difference",
           "EVIDENCE_COLUMNS", "POWER", "MIN_CLUSTERS"]

#: The columns of :attr:`Decision.evidence`, in order (also the keys of :meth:`Decision.to_records`).
EVIDENCE_COLUMNS = ("parameter", "default", "candidate", "shipped", "reason", "metric", "delta",
                    "ci_lower", "ci_upper", "n_clusters", "detectable")
_holm_levels = holm_levels  # the old private name


def _json(v):
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


@dataclass
class Decision:
    """What to ship, parameter by parameter, and the evidence for it (see :func:`decide`).

    Attributes
    ----------
    engine, metric : the engine and the metric decided on (``"a + b"`` for merged decisions).
    params : production's default with only the shipped values changed: what to ship.
    default : production's parameters.
    candidate : the best configuration on validation (under the constraint);
        unidentified parameters at their default.
    evidence : DataFrame, one row per parameter considered, columns
        :data:`EVIDENCE_COLUMNS`: ``parameter`` (bare field name), ``default``,
        ``candidate``, ``shipped``, ``reason`` (words), ``metric``,
        ``delta`` (test metric of the default with this parameter alone
        changed, minus the default's), ``ci_lower``/``ci_upper`` (its
        interval: at ``α`` when it is the only change, else at its Holm level
        in the reduction family), ``n_clusters`` (test clusters with data),
        ``detectable`` (the smallest difference detectable with 80 % power
        at that level). ``shipped`` is true exactly for the parameters the
        shipped configuration changes.
    combined : the shipped configuration against the default: ``config_id``
        and ``params`` (its changed fields; None and ``{}`` when nothing
        ships, and then the other keys describe the candidate's gate test),
        ``delta``, ``ci_lower``, ``ci_upper`` (its own ``1 − α`` interval),
        ``p_value`` (directional, unadjusted), ``detectable``, ``n_clusters``,
        ``df``; ``candidate_config_id``, ``gate`` (the joint test), ``family``
        (the reduction family: one dict per subset), ``constraint`` (per
        constrained metric: rule, the shipped or candidate configuration's
        test ``value`` and interval, ``holds``) and ``procedure`` (words).
    optimism : the candidate's advantage over the default on validation minus
        its advantage on test, each advantage signed so that positive means
        better: ``s·(val₀ − val_c) − s·(test₀ − test_c)`` with ``s = +1`` for
        a minimised metric, ``−1`` for a maximised one. Positive: validation
        flattered the winner (selection among ``n_configs`` configurations).
    n_configs : configurations that competed for the candidate (finite
        validation score, constraint satisfied); 1 when the candidate was
        given (chosen without the sweep's validation scores).
    unidentified : swept parameters the metric cannot see (never shipped).
    """

    engine: str
    metric: str
    params: object
    default: object
    candidate: object
    evidence: pd.DataFrame
    combined: dict
    optimism: float
    n_configs: int
    unidentified: list
    alpha: float = 0.05
    n_boot: int = 1000
    cluster: str = "session"
    seed: int = 0
    constraint: dict | None = None
    parts: list = field(default_factory=list)

    def shipped_parameters(self) -> list:
        """Names of the parameters whose candidate value ships."""
        ev = self.evidence
        return ev.loc[ev["shipped"].astype(bool), "parameter"].tolist()

    def to_records(self) -> list:
        """The evidence as JSON-safe dicts (keys: :data:`EVIDENCE_COLUMNS`), for a manifest."""
        return [{c: _json(row[c]) for c in EVIDENCE_COLUMNS} for _, row in self.evidence.iterrows()]

    def combined_record(self) -> dict:
        """The shipped configuration as a whole, as one manifest record (``"parameter": "combined"``).

        Keys: ``parameter``, ``shipped`` (something ships), ``params`` (the shipped
        changes), ``config_id``, ``metric``, ``delta``, ``ci_lower``, ``ci_upper``
        (the shipped configuration against the default; when nothing ships, the
        candidate's gate test), ``n_clusters``, ``detectable`` and ``reason``.
        """
        c = self.combined
        shipped = self.shipped_parameters()
        what = ", ".join(f"{k}={v!r}" for k, v in (c.get("params") or {}).items())
        if shipped:
            reason = (f"ships ({what}) as one configuration scored on the test stretch: {c.get('metric', self.metric)} "
                      f"{_num(c.get('delta'))} [{_num(c.get('ci_lower'))}, {_num(c.get('ci_upper'))}] against "
                      "the default")
        elif math.isfinite(_float(c.get("delta"))):
            reason = (f"nothing ships: the candidate changes {c.get('metric', self.metric)} by {_num(c.get('delta'))} "
                      f"[{_num(c.get('ci_lower'))}, {_num(c.get('ci_upper'))}] against the default")
        else:
            reason = "nothing ships: no configuration other than the default was scored"
        return {"parameter": "combined", "shipped": bool(shipped), "params": _jsonable(c.get("params") or {}),
                "config_id": c.get("config_id"), "metric": c.get("metric", self.metric),
                **{k: _json(_float(c.get(k))) for k in ("delta", "ci_lower", "ci_upper", "detectable")},
                "n_clusters": _json(c.get("n_clusters")), "reason": reason}

    def to_dict(self) -> dict:
        """Everything needed to export this decision, as JSON-safe values (see :meth:`from_dict`)."""
        return _jsonable({
            "kind": "thatchlab.decision", "version": 1, "engine": self.engine, "metric": self.metric,
            "params": self.params.to_dict(), "default": self.default.to_dict(),
            "candidate": self.candidate.to_dict(), "evidence": self.to_records(), "combined": self.combined,
            "optimism": self.optimism, "n_configs": self.n_configs, "unidentified": list(self.unidentified),
            "alpha": self.alpha, "n_boot": self.n_boot, "cluster": self.cluster, "seed": self.seed,
            "constraint": {k: list(v) for k, v in (self.constraint or {}).items()} or None,
            "parts": [d.to_dict() for d in self.parts]})

    @classmethod
    def from_dict(cls, data, source="decision") -> Decision:
        """A decision written by :meth:`to_dict` (``thatchlab decide --out``).

        >>> from thatchlab.tune.calibration_study import planted_sweep
        >>> d = decide(planted_sweep(12, -0.05, np.random.default_rng(1)), "log_loss", n_boot=200)
        >>> back = Decision.from_dict(d.to_dict())
        >>> back.params == d.params, back.shipped_parameters() == d.shipped_parameters()
        (True, True)
        """
        from thatchlab.core.params.production import ENGINE_PARAMS

        if not isinstance(data, dict) or data.get("kind") != "thatchlab.decision":
            raise InputError(f"{source}: not a thatchlab decision (expected the JSON `thatchlab decide` writes)")
        try:
            pcls = ENGINE_PARAMS[data["engine"]]
            evidence = pd.DataFrame(data["evidence"], columns=list(EVIDENCE_COLUMNS))
            evidence["shipped"] = evidence["shipped"].astype(bool)
            for col in ("delta", "ci_lower", "ci_upper", "detectable"):
                evidence[col] = pd.to_numeric(evidence[col], errors="coerce")
            out = cls(data["engine"], data["metric"], pcls.from_dict(data["params"]),
                      pcls.from_dict(data["default"]), pcls.from_dict(data["candidate"]), evidence,
                      _unjson(data.get("combined") or {}), _float(data.get("optimism")),
                      int(data.get("n_configs", 0)), list(data.get("unidentified") or []),
                      float(data.get("alpha", 0.05)), int(data.get("n_boot", 1000)),
                      data.get("cluster", "session"), int(data.get("seed", 0)),
                      {k: tuple(v) for k, v in (data.get("constraint") or {}).items()} or None,
                      [cls.from_dict(p, source) for p in data.get("parts") or []])
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, InputError):
                raise
            raise InputError(f"{source}: not a readable decision ({type(exc).__name__}: {exc})") from None
        changed = {f for f in out.params.to_dict() if getattr(out.params, f) != getattr(out.default, f)}
        if changed != set(out.shipped_parameters()):
            raise InputError(f"{source}: its params change {sorted(changed)} but its evidence ships "
                             f"{sorted(out.shipped_parameters())}; the file was edited or is corrupt")
        return out

    def merge(self, *others) -> Decision:
        """This decision joined with ``others`` (see :func:`combine_decisions`)."""
        from thatchlab.tune._combine import combine_decisions

        return combine_decisions([self, *others])

    def summary(self) -> str:
        """What ships, how many configurations competed, the tested configuration's interval, in a few lines."""
        shipped = self.shipped_parameters()
        what = ", ".join(f"{p}={getattr(self.params, p)!r}" for p in shipped) or "nothing (production's defaults)"
        c = self.combined
        lines = [f"Decision({self.engine}, {self.metric}): ship {what}",
                 f"  {self.n_configs} configurations compared; optimism {self.optimism:.4g}"
                 if isinstance(self.optimism, float) and math.isfinite(self.optimism)
                 else f"  {self.n_configs} configurations compared"]
        if isinstance(c.get("delta"), float) and math.isfinite(c["delta"]):
            what_ = "shipped configuration" if c.get("config_id") else "candidate"
            lines.append(f"  {what_} vs default: {c['delta']:+.4g} [{c['ci_lower']:.4g}, {c['ci_upper']:.4g}]")
        if self.unidentified:
            lines.append(f"  unidentified by the metric: {', '.join(self.unidentified)}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        cols = ["parameter", "default", "candidate", "shipped", "delta", "ci_lower", "ci_upper"]
        table = self.evidence[cols].to_string(index=False) if len(self.evidence) else "(no parameter differs)"
        reasons = "\n".join(f"  {r.parameter}: {r.reason}" for r in self.evidence.itertuples())
        return f"{self.summary()}\n{table}\n{reasons}"

    def _repr_html_(self) -> str:
        head = "<br>".join(html.escape(line) for line in self.summary().splitlines())
        return f"<p>{head}</p>{self.evidence.to_html(index=False)}"


def _plural(unit) -> str:
    unit = str(unit)
    return unit[:-1] + "ies" if unit.endswith("y") else unit + "s"


def _float(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("nan")


def _num(v) -> str:
    x = _float(v)
    return f"{x:+.4g}" if math.isfinite(x) else "undefined"


def _jsonable(v):
    """``v`` with numpy scalars as Python numbers, tuples as lists and non-finite floats as None."""
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.ndarray):
        return None  # resample draws: not part of the record
    return _json(v)


_NUMBERS = {"delta", "ci_lower", "ci_upper", "p_value", "p_adjusted", "detectable", "se", "value"}


def _unjson(v, key=None):
    """The inverse of :func:`_jsonable` for a decision's ``combined`` (a None number → NaN)."""
    if isinstance(v, dict):
        return {k: _unjson(x, k) for k, x in v.items()}
    if isinstance(v, list):
        return [_unjson(x) for x in v]
    return float("nan") if v is None and key in _NUMBERS else v


def _row_for(results, cids, label_of) -> None:
    have = set(results["config_id"]) if "config_id" in results.columns else set()
    missing = [label_of[c] for c in cids if c not in have]
    if missing:
        raise InputError("decide: the sweep has no row for " + "; ".join(dict.fromkeys(missing))
                         + ". decide compares the candidate with production's default configuration "
                         "and never approximates either: include production's default values in the "
                         "space (a grid over each parameter's values and its default)")


def decide(results: pd.DataFrame, metric: str, *, default=None, constraint: dict | None = None,
           alpha: float = 0.05, n_boot: int = 1000, cluster: str | None = None, seed: int = 0,
           candidate=None) -> Decision:
    """Decide which configuration of a sweep to ship, testing what ships as a whole.

    Parameters
    ----------
    results : DataFrame
        A :func:`~thatchlab.tune.sweep` result of the ``prediction`` or
        ``behavior`` engine (it records per-session sums in
        ``attrs["clusters"]``), of the ``belief`` or ``calibration`` engine
        (per-memory sums) or of the ``anticipation`` engine (per-session sums),
        scored on ``metric``. A planted frame works
        too (simulation studies): rows with the parameter columns, a
        ``config_id`` column (:func:`~thatchlab.tune.config_id` ``(engine,
        params)``), ``val_<metric>``/``test_<metric>`` columns, and attrs
        ``engine``, ``metric``, ``metrics``, ``holdout``, ``unidentified``,
        ``identification`` and ``clusters``: a
        :class:`~thatchlab.tune.ClusterStats` from
        ``ClusterStats.merge({config_id: {(metric, segment): (num, den)}},
        unit, {segment: labels})``.
    metric : str
        A ratio metric: scoring engines ``log_loss``, ``brier``,
        ``interruption_rate``, ``wrong_silent_follow_rate``, ``coverage``,
        ``nudge_net_rate``; belief ``brier`` (currency against
        ``still_true``); calibration ``derived_log_loss``, ``derived_brier``,
        ``caller_log_loss``, ``caller_brier``; anticipation (per session)
        ``hit_rate_at_k``, ``prefetch_precision``, ``recall_at_k``,
        ``round_trips_saved_per_session``, ``false_prefetches_per_session``
        (ECE and AUC are not ratios of cluster sums and are refused). Its
        direction is the registered one.
    default : params, optional
        What production runs (default:
        :func:`~thatchlab.core.params.production.production_params`).
    constraint : dict, optional
        ``{metric: (op, value)}``: the candidate is the best on validation
        among the rows satisfying it (:func:`~thatchlab.tune.best`), and a
        configuration ships only if its *test* value satisfies it too.
    alpha : float
        Family-wise error rate of one decision (over every hypothesis tested).
    n_boot : int
        Cluster resamples (drawn once from ``seed``, shared by every configuration).
    cluster : str, optional
        The resampling unit; None takes the sweep's own (the scoring engines':
        ``"session"``; belief and calibration: ``"memory"``). Given, it must
        be the sweep's.
    seed : int
        Seed of the resamples.
    candidate : params, optional
        Test this configuration instead of the validation winner: a value chosen
        without the test stretch, e.g. a fitter's estimate on the log before it
        (:class:`~thatchlab.tune.PriorFitter` on the training and validation
        rows). It must be a row of the sweep, as must the configurations keeping
        part of its changes that the reduction step tests.

    Returns
    -------
    Decision

    Notes
    -----
    Let ``D`` be the parameters where the candidate ``θ̂`` differs from the
    default ``θ₀`` (unidentified ones are at their default) and
    ``θ_A = θ₀[A ← θ̂_A]`` for ``A ⊆ D``. Every comparison is the paired
    difference ``δ_A = m_test(θ_A) − m_test(θ₀)`` over the test clusters
    (:func:`~thatchlab.tune._testing.paired_difference`: cluster-bootstrap
    SE with the CR1 factor ``√(G/(G−1))``, Student's t with ``G − 1``
    degrees of freedom, Cameron & Miller 2015), tested one-sided for
    improvement. The procedure is a serial gatekeeper (family-wise error
    ``≤ α`` over everything tested):

    1. *Gate*: ``θ_D = θ̂`` against ``θ₀`` at ``α`` (its ``1 − α`` interval
       on the improving side of 0). Not passed: nothing ships.
    2. *Reduction family*, only after the gate: every proper non-empty
       ``A ⊂ D`` with a sweep row, ``θ_A`` against ``θ₀``, Holm at ``α``.
    3. A rejected ``θ_A`` *replaces* ``θ̂`` when the rest of the change adds
       nothing the data can show: ``θ̂`` is not better than ``θ_A`` at ``α``
       (paired). The smallest such ``A`` ships (ties: the larger test
       improvement); none: ``θ̂`` ships. Under a ``constraint`` the first of
       these (then the other rejected subsets) whose test value satisfies
       the constraint ships; none: nothing ships.

    Below :data:`MIN_CLUSTERS` test clusters nothing ships (the reason names
    the count). The t reference keeps the false-ship rate at or below the
    nominal one-sided ``α/2`` down to 5 clusters where the percentile
    interval does not (``benchmarks/bench_decide_calibration.py``).

    Examples
    --------
    >>> from thatchlab.synth import PreferenceWorld
    >>> from thatchlab.tune import sweep
    >>> w = PreferenceWorld(n_users=2, n_situations=4, seed=0)
    >>> res = sweep(w.log(120), {"k": [2.0, 5.0]}, "log_loss", embedder=w.lookup_embedder())
    >>> d = decide(res, "log_loss", n_boot=200)
    >>> list(d.evidence.columns) == list(EVIDENCE_COLUMNS)
    True
    """
    spec = _spec_of(results)
    stats = results.attrs.get("clusters")
    if not spec.ratio_metrics:
        raise InputError(f"decide: not supported for engine {spec.name!r} yet: its sweep records no "
                         "per-cluster sums (supported engines: prediction, behavior, belief, calibration, "
                         "anticipation)")
    if metric not in spec.ratio_metrics:
        raise InputError(f"decide: {metric!r} is not a ratio of per-cluster sums, so no paired cluster "
                         f"bootstrap; supported metrics: {', '.join(spec.ratio_metrics)}")
    if stats is None or (metric, "test") not in stats.num_index:
        raise InputError(f"decide: results carry no per-cluster sums of {metric!r} "
                         "(attrs['clusters']); pass the frame tune.sweep returned, scored on "
                         f"{metric!r} (metric=[...] for several)")
    if cluster is None:
        cluster = stats.unit
    if cluster != stats.unit:
        raise InputError(f"cluster: this sweep's clusters are {stats.unit!r}, got {cluster!r}")
    if not 0 < alpha < 1:
        raise InputError(f"alpha: expected 0 < alpha < 1, got {alpha!r}")
    default = production_params(spec.name) if default is None else default
    if not isinstance(default, spec.params_class):
        raise InputError(f"default: expected {spec.params_class.__name__}, got {type(default).__name__}")
    lower = _direction(results, metric, None, spec)
    sign = 1.0 if lower else -1.0  # improvement = sign · (default − changed)
    fields = [f.name for f in dataclasses.fields(spec.params_class)]
    # parameters production has no setting for are studied, never shipped: the candidate is the
    # best configuration that keeps them at the default
    fixed = [f for f in fields if setting(spec.name, f).kind == "none"]
    pool = results
    for f in fixed:
        if f in results.columns:
            pool = pool[pool[f] == getattr(default, f)]
    pool.attrs.update(results.attrs)
    chosen_elsewhere = candidate is not None
    try:
        if candidate is not None:
            if not isinstance(candidate, spec.params_class):
                raise InputError(f"candidate: expected {spec.params_class.__name__}, got {type(candidate).__name__}")
            candidate = candidate.replace(**{f: getattr(default, f) for f in fixed})
        else:
            candidate = best(pool if len(pool) else results, metric, constraint=constraint).params
    except InputError as err:
        held = [f for f in fixed if f in results.columns and results[f].nunique() > 1]
        raise InputError(f"{err}" + (f" among the configurations keeping {', '.join(held)} at production's "
                                      "default (production has no setting for them, so they never ship)"
                                      if held else "")) from None
    ident = identification(results, metric, spec)
    unidentified = list(ident["unidentified"])
    differ = [f for f in fields if getattr(candidate, f) != getattr(default, f) and f not in fixed]
    considered = [f for f in fields if f in differ or f in ident["swept"]]
    tested = [f for f in differ if f not in unidentified]

    def cid(p):
        return config_id(spec.name, p)

    def theta(changes):
        return default.replace(**{f: getattr(candidate, f) for f in changes})

    full = theta(tested)
    label = {cid(default): f"production's default configuration {_short(default, spec)}",
             cid(full): f"the candidate {_short(full, spec, default)}"}
    _row_for(results, [cid(default), cid(full)], label)
    have = set(results["config_id"]) & set(stats.config_ids)
    try:
        stats.rows([cid(default), cid(full)])
    except KeyError as err:
        raise InputError("decide: no per-cluster sums for " + "; ".join(label[c] for c in err.args[0])
                         + " (rows read back from an older cache); rerun the sweep") from None
    subsets = [A for r in range(1, len(tested)) for A in combinations(tested, r) if cid(theta(A)) in have]

    W = cluster_resamples(len(stats.labels["test"]), n_boot, seed, segment_stream("test"))
    sums = {}

    def of(p):
        key = cid(p)
        if key not in sums:
            num, den = stats.sums(metric, "test", [key])
            sums[key] = (num[0], den[0])
        return sums[key]

    def compare(p, ref=default):
        return paired_difference(*of(ref), *of(p), W, alpha)

    gate = compare(full)
    n_cl = gate["n_clusters"]
    few = n_cl < MIN_CLUSTERS
    gate_p = improvement_pvalue(gate, lower)
    passed = bool(tested) and not few and math.isfinite(gate_p) and gate_p <= alpha
    family = {A: compare(theta(A)) for A in subsets}
    fam_p = np.nan_to_num([improvement_pvalue(family[A], lower) for A in subsets], nan=1.0)
    adjusted = dict(zip(subsets, holm(fam_p))) if subsets else {}
    levels = dict(zip(subsets, holm_levels(fam_p, alpha))) if subsets else {}
    rejected = [A for A in subsets if passed and adjusted[A] <= alpha]
    over = {A: compare(full, theta(A)) for A in rejected}  # θ̂ − θ_A: what the rest of the change adds
    adds = {A: improvement_pvalue(over[A], lower) <= alpha for A in rejected}

    def gain(A):
        return -sign * family[A]["delta"]

    sufficient = sorted((A for A in rejected if not adds[A]), key=lambda A: (len(A), -gain(A)))
    others = sorted((A for A in rejected if adds[A]), key=lambda A: -gain(A))
    options = [*sufficient, tuple(tested), *others] if passed else []
    checks = {A: check_constraint(stats, results, constraint, cid(theta(A)), W, alpha) for A in options}
    shipped = next((A for A in options if all(c["holds"] for c in checks[A].values())), None)
    S = theta(shipped) if shipped is not None else None
    own = (gate if shipped is None or tuple(shipped) == tuple(tested) else family[shipped])
    gate_desc = (f"the candidate {_short(full, spec, default)} against production's default: test {metric} "
                 f"{gate['delta']:+.4g}, {span(gate, alpha)} "
                 f"{describe_interval(*interval_at(gate, alpha), lower)} (p = {gate_p:.3g})")

    rows = []
    for f in considered:
        d_val, c_val = getattr(default, f), getattr(candidate, f)
        row = dict(parameter=f, default=d_val, candidate=c_val, shipped=False, metric=metric, delta=np.nan,
                   ci_lower=np.nan, ci_upper=np.nan, n_clusters=n_cl, detectable=np.nan)
        rows.append(row)
        if f in fixed:
            row["candidate"] = d_val
            row["reason"] = (f"never ships: production has no setting for {f} ({setting(spec.name, f).name}); "
                             f"the candidate is the best configuration keeping {f}={d_val!r}")
            continue
        if f in unidentified:
            row["reason"] = (f"not identified: {metric} cannot see {f} on this data (changing it alone never "
                             f"changes the score), so production's default {f}={d_val!r} stays")
            continue
        if f not in differ:
            row["reason"] = f"the best configuration on validation already uses production's default {f}={d_val!r}"
            continue
        alone, level = ((gate, alpha) if len(tested) == 1 else
                        (family.get((f,)), levels.get((f,), np.nan)))
        note = ""
        if alone is not None and len(tested) > 1:
            lo, hi = interval_at(alone, level)
            row.update(delta=alone["delta"], ci_lower=lo, ci_upper=hi,
                       detectable=detectable(alone["se"], alone["df"], level))
            note = (f"; alone, {f}={c_val!r} changes test {metric} by {alone['delta']:+.4g}, Holm-level "
                    f"{span(alone, level)} {describe_interval(lo, hi, lower)}")
        elif alone is not None:
            lo, hi = interval_at(gate, alpha)
            row.update(delta=gate["delta"], ci_lower=lo, ci_upper=hi,
                       detectable=detectable(gate["se"], gate["df"], alpha))
        else:
            note = f"; the sweep has no row changing {f} alone"
        if few:
            row["reason"] = (f"keeps {f}={d_val!r}: only {n_cl} test {_plural(stats.unit)} hold data and decide "
                             f"needs at least {MIN_CLUSTERS} to compare configurations; nothing ships")
        elif shipped is not None and f in shipped:
            row["shipped"] = True
            how = ("its own paired interval" if tuple(shipped) == tuple(tested)
                   else f"Holm-adjusted p = {adjusted[shipped]:.3g} in the reduction family")
            row["reason"] = (f"ships {f}={c_val!r} as part of {_short(S, spec, default)}: test {metric} "
                             f"{'falls' if lower else 'rises'} by {abs(own['delta']):.4g} against the "
                             f"default, {span(own, alpha)} {describe_interval(*interval_at(own, alpha), lower)} "
                             f"({how})" + note)
        elif shipped is not None:
            why = (f"{_short(S, spec, default)} without it improves test {metric} by {abs(own['delta']):.4g} "
                   f"(Holm-adjusted p = {adjusted[shipped]:.3g}), and the candidate is not shown better "
                   f"than it ({over[shipped]['delta']:+.4g}, {span(over[shipped], alpha)} "
                   f"{describe_interval(*interval_at(over[shipped], alpha), lower)})")
            if shipped not in sufficient:
                why = (f"the candidate fails the constraint on test, and {_short(S, spec, default)} without "
                       f"{f} satisfies it and improves test {metric} by {abs(own['delta']):.4g} "
                       f"(Holm-adjusted p = {adjusted[shipped]:.3g})")
            row["reason"] = f"keeps {f}={d_val!r}: {why}" + note
        elif passed:
            bad = "; ".join(f"{m} = {c['value']:.4g} (interval [{c['ci_lower']:.4g}, {c['ci_upper']:.4g}]) "
                            f"is not {c['rule']}" for m, c in checks[tuple(tested)].items() if not c["holds"])
            alt = (", and no reduced configuration that improves satisfies it" if len(options) > 1 else "")
            row["reason"] = (f"keeps {f}={d_val!r}: {gate_desc}, but on test the candidate's {bad}{alt}; "
                             "nothing ships" + note)
        else:
            row["reason"] = f"keeps {f}={d_val!r}: nothing ships — {gate_desc}" + note
    evidence = pd.DataFrame(rows, columns=list(EVIDENCE_COLUMNS))
    evidence["shipped"] = evidence["shipped"].astype(bool)

    target = full if S is None else S
    combined = {"config_id": None if S is None else cid(S),
                "params": {} if S is None else {f: getattr(S, f) for f in shipped},
                "delta": own["delta"], "ci_lower": interval_at(own, alpha)[0],
                "ci_upper": interval_at(own, alpha)[1], "p_value": improvement_pvalue(own, lower),
                "detectable": detectable(own["se"], own["df"], alpha), "n_clusters": n_cl, "df": own["df"],
                "candidate_config_id": cid(full),
                "gate": {"config_id": cid(full), "delta": gate["delta"], "ci_lower": interval_at(gate, alpha)[0],
                         "ci_upper": interval_at(gate, alpha)[1], "p_value": gate_p, "passed": passed},
                "family": [{"changes": list(A), "config_id": cid(theta(A)), "delta": family[A]["delta"],
                            "ci_lower": interval_at(family[A], levels[A])[0],
                            "ci_upper": interval_at(family[A], levels[A])[1],
                            "p_value": float(fam_p[i]), "p_adjusted": float(adjusted[A]),
                            "rejected": A in rejected, "rest_adds": adds.get(A)}
                           for i, A in enumerate(subsets)],
                "constraint": (check_constraint(stats, results, constraint, cid(target), W, alpha)
                               if constraint else None),
                "procedure": (f"serial gatekeeper: the candidate against the default at alpha={alpha:g}, "
                              f"then {len(subsets)} reduced configurations with Holm at alpha={alpha:g}; "
                              f"paired cluster bootstrap ({int(n_boot)} resamples of {n_cl} {_plural(stats.unit)}), "
                              f"t with {max(n_cl - 1, 0)} degrees of freedom")}
    by_id = results.set_index("config_id")
    v0, vc = (float(by_id.loc[cid(x), f"val_{metric}"]) for x in (default, full))
    t0, tc = (float(by_id.loc[cid(x), f"test_{metric}"]) for x in (default, full))
    optimism = sign * (v0 - vc) - sign * (t0 - tc)
    vals = pd.to_numeric(results[f"val_{metric}"], errors="coerce").to_numpy(np.float64)
    n_configs = (1 if chosen_elsewhere else
                 int(np.count_nonzero(np.isfinite(vals) & _constraint_mask(results, constraint))))
    return Decision(spec.name, metric, default if S is None else S, default, candidate, evidence, combined,
                    float(optimism), n_configs, unidentified, alpha, int(n_boot), cluster, int(seed),
                    constraint)


def _short(params, spec, reference=None) -> str:
    """The fields of ``params`` that differ from ``reference`` (the class defaults), as ``(a=1, b=2)``."""
    base = spec.params_class() if reference is None else reference
    diff = {f.name: getattr(params, f.name) for f in dataclasses.fields(params)
            if getattr(params, f.name) != getattr(base, f.name)}
    return "(" + ", ".join(f"{k}={v!r}" for k, v in diff.items()) + ")" if diff else "(all defaults)"


# the joint of decisions on several metrics lives beside: it builds Decisions
from thatchlab.tune._combine import combine_decisions  # noqa: E402
