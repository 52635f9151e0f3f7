"""Decisions from a sweep: ship a parameter change only when the held-out data shows it helps.

A sweep's winner on validation is a *candidate*. :func:`decide` compares it
with production's defaults one parameter at a time on the *test* segment:
for each parameter ``p`` where they differ, production's default
configuration ``θ₀`` against ``θ₀`` with ``p`` alone set to the candidate's
value. Differences are paired: both configurations are rescored on the same
cluster resamples (sessions drawn with replacement, the same draws for
every configuration), and the parameters of one decision are corrected
together with Holm's step-down procedure. A change ships only when its
corrected interval excludes zero in the improving direction; otherwise
production's default stays and the evidence says why.

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
from statistics import NormalDist

import numpy as np
import pandas as pd

from thatchlab.core.errors import InputError
from thatchlab.tune._picking import _constraint_mask, _direction, _spec_of, best, identification
from thatchlab.tune.registry import cluster_resamples, ratio_resamples, segment_stream
from thatchlab.tune.sweep import config_id

__all__ = ["decide", "Decision", "combine_decisions", "holm", "bootstrap_pvalue", "paired_difference",
           "EVIDENCE_COLUMNS", "POWER"]

#: The columns of :attr:`Decision.evidence`, in order (also the keys of :meth:`Decision.to_records`).
EVIDENCE_COLUMNS = ("parameter", "default", "candidate", "shipped", "reason", "metric", "delta",
                    "ci_lower", "ci_upper", "n_clusters", "detectable")
#: The power at which :attr:`Decision.evidence`'s ``detectable`` difference would be found.
POWER = 0.8


def holm(pvalues) -> np.ndarray:
    """Holm's step-down adjusted p-values (Holm 1979), in the input order.

    With the ``m`` p-values sorted ascending, ``p̃_(i) = max_{j ≤ i} min(1, (m − j + 1)·p_(j))``
    (``i, j`` 1-based). Rejecting ``p̃ ≤ α`` controls the family-wise error at ``α``.

    >>> holm([0.01, 0.04, 0.03]).tolist()
    [0.03, 0.06, 0.06]
    >>> holm([]).tolist()
    []
    """
    p = np.asarray(pvalues, dtype=np.float64)
    m = p.size
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adj
    return np.round(out, 15)


def _holm_levels(pvalues, alpha: float) -> np.ndarray:
    """The level Holm tests each hypothesis at: ``α / (m − rank)`` (rank 0 = smallest p)."""
    p = np.asarray(pvalues, dtype=np.float64)
    m = p.size
    ranks = np.empty(m, dtype=np.int64)
    ranks[np.argsort(p, kind="stable")] = np.arange(m)
    return alpha / (m - ranks)


def bootstrap_pvalue(draws) -> float:
    """Two-sided bootstrap p-value of "the difference is 0" from resampled differences.

    ``p = min(1, 2·min((1 + #{δ* ≤ 0}) / (B + 1), (1 + #{δ* ≥ 0}) / (B + 1)))`` over
    the ``B`` finite draws: small when nearly every resample falls on one side
    of zero, consistent with the percentile interval (it excludes 0 at level
    ``1 − a`` roughly when ``p < a``). All draws exactly 0 give 1.

    >>> bootstrap_pvalue(np.full(99, -0.1))
    0.02
    >>> bootstrap_pvalue(np.r_[-np.ones(50), np.ones(50)])
    1.0
    """
    d = np.asarray(draws, dtype=np.float64)
    d = d[np.isfinite(d)]
    if d.size == 0:
        return float("nan")
    b = d.size
    lo, hi = (1 + np.count_nonzero(d <= 0)) / (b + 1), (1 + np.count_nonzero(d >= 0)) / (b + 1)
    return float(min(1.0, 2 * min(lo, hi)))


def paired_difference(num_a, den_a, num_b, den_b, weights, alpha: float = 0.05) -> dict:
    """Paired cluster-bootstrap difference ``m_b − m_a`` of two ratio metrics.

    ``m = Σ_c num_c / Σ_c den_c`` over the same clusters ``c`` for both
    configurations; ``weights`` ``(B, n_clusters)`` are cluster resamples
    (:func:`~thatchlab.tune.registry.cluster_resamples`: clusters drawn with
    replacement), applied to *both*, so ``δ*_b = m*_b(b) − m*_b(a)`` keeps
    the within-cluster correlation of the two configurations. The interval
    is the percentile interval ``[q_{α/2}, q_{1−α/2}]`` of ``δ*``.

    Returns
    -------
    dict
        ``delta`` (the point difference), ``ci_lower``, ``ci_upper``, ``se``
        (standard deviation of ``δ*``), ``p_value`` (:func:`bootstrap_pvalue`),
        ``draws`` (the ``δ*``).

    Examples
    --------
    >>> W = cluster_resamples(3, 200, seed=0)
    >>> out = paired_difference([1.0, 1.0, 1.0], [2.0, 2.0, 2.0], [2.0, 2.0, 2.0], [2.0, 2.0, 2.0], W)
    >>> out["delta"], out["ci_lower"], out["ci_upper"]
    (0.5, 0.5, 0.5)
    """
    a = ratio_resamples(num_a, den_a, weights)[:, 0]
    b = ratio_resamples(num_b, den_b, weights)[:, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        delta = float(np.sum(num_b) / np.sum(den_b) - np.sum(num_a) / np.sum(den_a))
    draws = b - a
    finite = draws[np.isfinite(draws)]
    if finite.size == 0:
        return {"delta": delta, "ci_lower": float("nan"), "ci_upper": float("nan"), "se": float("nan"),
                "p_value": float("nan"), "draws": draws}
    lo, hi = np.quantile(finite, [alpha / 2, 1 - alpha / 2])
    return {"delta": delta, "ci_lower": float(lo), "ci_upper": float(hi),
            "se": float(np.std(finite, ddof=1)) if finite.size > 1 else 0.0,
            "p_value": bootstrap_pvalue(finite), "draws": draws}


def _detectable(se: float, level: float) -> float:
    """Smallest true difference found with probability :data:`POWER` at two-sided ``level``."""
    z = NormalDist()
    return float((z.inv_cdf(1 - level / 2) + z.inv_cdf(POWER)) * se)


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
        Holm-corrected paired cluster-bootstrap interval), ``n_clusters``
        (test clusters with data), ``detectable`` (the smallest difference
        detectable with 80 % power at the corrected level).
    combined : ``delta``, ``ci_lower``, ``ci_upper`` (uncorrected ``1 − α``),
        ``p_value`` and ``detectable`` of the whole change, default → candidate.
    optimism : the candidate's advantage over the default on validation minus
        its advantage on test, each advantage signed so that positive means
        better: ``s·(val₀ − val_c) − s·(test₀ − test_c)`` with ``s = +1`` for
        a minimised metric, ``−1`` for a maximised one. Positive: validation
        flattered the winner (selection among ``n_configs`` configurations).
    n_configs : configurations that competed for the candidate (finite
        validation score, constraint satisfied).
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

    def merge(self, *others) -> Decision:
        """This decision joined with ``others`` (see :func:`combine_decisions`)."""
        return combine_decisions([self, *others])

    def _summary(self) -> str:
        shipped = self.shipped_parameters()
        what = ", ".join(f"{p}={getattr(self.params, p)!r}" for p in shipped) or "nothing (production's defaults)"
        c = self.combined
        lines = [f"Decision({self.engine}, {self.metric}): ship {what}",
                 f"  {self.n_configs} configurations compared; optimism {self.optimism:.4g}"
                 if isinstance(self.optimism, float) and math.isfinite(self.optimism)
                 else f"  {self.n_configs} configurations compared"]
        if isinstance(c.get("delta"), float) and math.isfinite(c["delta"]):
            lines.append(f"  candidate vs default: {c['delta']:+.4g} [{c['ci_lower']:.4g}, {c['ci_upper']:.4g}]")
        if self.unidentified:
            lines.append(f"  unidentified by the metric: {', '.join(self.unidentified)}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        cols = ["parameter", "default", "candidate", "shipped", "delta", "ci_lower", "ci_upper"]
        table = self.evidence[cols].to_string(index=False) if len(self.evidence) else "(no parameter differs)"
        reasons = "\n".join(f"  {r.parameter}: {r.reason}" for r in self.evidence.itertuples())
        return f"{self._summary()}\n{table}\n{reasons}"

    def _repr_html_(self) -> str:
        head = "<br>".join(html.escape(line) for line in self._summary().splitlines())
        return f"<p>{head}</p>{self.evidence.to_html(index=False)}"


def _row_for(results, cids, label_of) -> None:
    have = set(results["config_id"]) if "config_id" in results.columns else set()
    missing = [label_of[c] for c in cids if c not in have]
    if missing:
        raise InputError("decide: the sweep has no row for " + "; ".join(dict.fromkeys(missing))
                         + ". decide compares production's default with the default changed one "
                         "parameter at a time and never approximates them: include production's "
                         "default values in the space (a grid over each parameter's values and its "
                         "default)")


def decide(results: pd.DataFrame, metric: str, *, default=None, constraint: dict | None = None,
           alpha: float = 0.05, n_boot: int = 1000, cluster: str = "session", seed: int = 0) -> Decision:
    """Decide which of a sweep's parameter changes to ship, with paired clustered evidence.

    Parameters
    ----------
    results : DataFrame
        A :func:`~thatchlab.tune.sweep` result of the ``prediction`` or
        ``behavior`` engine (it records per-session sums in
        ``attrs["clusters"]``), scored on ``metric``.
    metric : str
        A ratio metric: ``log_loss``, ``brier``, ``interruption_rate``,
        ``wrong_silent_follow_rate`` or ``coverage`` (ECE and AUC are not
        ratios of cluster sums and are refused). Its direction is the
        registered one.
    default : params, optional
        Production's parameters (default: the engine's params class
        defaults, which are production's).
    constraint : dict, optional
        ``{metric: (op, value)}`` on validation values for choosing the
        candidate (:func:`~thatchlab.tune.best`).
    alpha : float
        Family-wise error rate of one decision.
    n_boot : int
        Cluster resamples (drawn once from ``seed``, shared by every configuration).
    cluster : str
        The resampling unit; the scoring engines' is ``"session"``: the
        ``session`` of the log row each scored event (forecast signal,
        message) came from.
    seed : int
        Seed of the resamples.

    Returns
    -------
    Decision

    Notes
    -----
    For each parameter ``p`` where the candidate ``θ̂`` differs from the
    default ``θ₀`` and the metric identifies ``p``, ``δ_p = m_test(θ₀[p ← θ̂_p])
    − m_test(θ₀)``, with ``B`` resamples ``δ*_p`` drawing the test segment's
    clusters with replacement (the same draws for every configuration).
    Bootstrap p-values (:func:`bootstrap_pvalue`) are Holm-adjusted across the
    decision's parameters (:func:`holm`); ``p``'s corrected interval is the
    percentile interval at its Holm level ``α/(m − r)`` (``r``: its rank by
    p-value, from 0). ``p`` ships when its adjusted p-value is ≤ ``α`` and the
    corrected interval lies entirely on the improving side of 0.
    ``detectable = (z_{1−a/2} + z_{0.8})·SE(δ*)`` at that level ``a``: the
    smallest true difference the test data would find with 80 % power.
    Parameters shipped separately are evaluated separately; ``combined``
    reports the joint change ``θ₀ → θ̂``.

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
                         "per-cluster sums (supported engines: prediction, behavior)")
    if metric not in spec.ratio_metrics:
        raise InputError(f"decide: {metric!r} is not a ratio of per-cluster sums, so no paired cluster "
                         f"bootstrap; supported metrics: {', '.join(spec.ratio_metrics)}")
    if stats is None or (metric, "test") not in stats.num_index:
        raise InputError(f"decide: results carry no per-cluster sums of {metric!r} "
                         "(attrs['clusters']); pass the frame tune.sweep returned, scored on "
                         f"{metric!r} (metric=[...] for several)")
    if cluster != stats.unit:
        raise InputError(f"cluster: this sweep's clusters are {stats.unit!r}, got {cluster!r}")
    if not 0 < alpha < 1:
        raise InputError(f"alpha: expected 0 < alpha < 1, got {alpha!r}")
    default = spec.params_class() if default is None else default
    if not isinstance(default, spec.params_class):
        raise InputError(f"default: expected {spec.params_class.__name__}, got {type(default).__name__}")
    lower = _direction(results, metric, None, spec)
    sign = 1.0 if lower else -1.0  # improvement = sign · (default − changed)
    picked = best(results, metric, constraint=constraint)
    candidate = picked.params
    ident = identification(results, metric, spec)
    unidentified = list(ident["unidentified"])
    fields = [f.name for f in dataclasses.fields(spec.params_class)]
    differ = [f for f in fields if getattr(candidate, f) != getattr(default, f)]
    considered = [f for f in fields if f in differ or f in ident["swept"]]
    tested = [f for f in differ if f not in unidentified]

    def cid(p):
        return config_id(spec.name, p)

    singles = {f: default.replace(**{f: getattr(candidate, f)}) for f in tested}
    label = {cid(default): f"production's default configuration {_short(default, spec)}",
             cid(candidate): f"the candidate {_short(candidate, spec)}"}
    for f, p in singles.items():
        label.setdefault(cid(p), f"the default with {f}={getattr(p, f)!r} alone changed")
    need = [cid(default), *(cid(p) for p in singles.values()), cid(candidate)]
    _row_for(results, need, label)
    try:
        stats.rows(need)
    except KeyError as err:
        raise InputError("decide: no per-cluster sums for " + "; ".join(label[c] for c in err.args[0])
                         + " (rows read back from an older cache); rerun the sweep") from None

    n_cl = len(stats.labels["test"])
    W = cluster_resamples(n_cl, n_boot, seed, segment_stream("test"))
    # one row per compared configuration, gathered from the compact sums (never the full matrices)
    num0, den0 = stats.sums(metric, "test", [cid(default)])
    raw = {}
    for f, p in singles.items():
        num, den = stats.sums(metric, "test", [cid(p)])
        raw[f] = paired_difference(num0[0], den0[0], num[0], den[0], W, alpha) | {
            "n_clusters": int(np.count_nonzero((den0[0] > 0) | (den[0] > 0)))}
    pvals = [raw[f]["p_value"] for f in tested]
    adjusted = dict(zip(tested, holm(np.nan_to_num(pvals, nan=1.0)))) if tested else {}
    levels = dict(zip(tested, _holm_levels(np.nan_to_num(pvals, nan=1.0), alpha))) if tested else {}

    rows, ship = [], {}
    for f in considered:
        d_val, c_val = getattr(default, f), getattr(candidate, f)
        row = dict(parameter=f, default=d_val, candidate=c_val, shipped=False, metric=metric, delta=np.nan,
                   ci_lower=np.nan, ci_upper=np.nan, n_clusters=n_cl, detectable=np.nan)
        if f in unidentified:
            row["reason"] = (f"not identified: {metric} cannot see {f} on this data (changing it alone never "
                             f"changes the score), so production's default {f}={d_val!r} stays")
        elif f not in differ:
            row["reason"] = f"the best configuration on validation already uses production's default {f}={d_val!r}"
        else:
            r, level = raw[f], levels[f]
            draws = r["draws"][np.isfinite(r["draws"])]
            lo, hi = (np.quantile(draws, [level / 2, 1 - level / 2]) if draws.size else (np.nan, np.nan))
            row.update(delta=r["delta"], ci_lower=float(lo), ci_upper=float(hi), n_clusters=r["n_clusters"],
                       detectable=_detectable(r["se"], level))
            better = (hi < 0) if lower else (lo > 0)
            worse = (lo > 0) if lower else (hi < 0)
            ok = better and adjusted[f] <= alpha
            span = f"Holm-corrected {1 - level:.1%} interval [{lo:.4g}, {hi:.4g}]"
            if ok:
                row["reason"] = (f"ships {f}={c_val!r}: test {metric} {'falls' if lower else 'rises'} by "
                                 f"{abs(r['delta']):.4g} against the default, {span} excludes 0 "
                                 f"(adjusted p = {adjusted[f]:.3g})")
                ship[f] = c_val
            elif draws.size and not np.any(draws) and r["delta"] == 0:
                row["reason"] = (f"keeps {f}={d_val!r}: changing it alone to {c_val!r} leaves test {metric} "
                                 "exactly unchanged (on every resample); no evidence for a change")
            elif worse:
                row["reason"] = (f"keeps {f}={d_val!r}: on test the candidate value {c_val!r} makes {metric} "
                                 f"worse ({r['delta']:+.4g}, {span})")
            else:
                row["reason"] = (f"keeps {f}={d_val!r}: no improvement the test data can show; {span} of "
                                 f"{metric}(candidate {c_val!r}) − {metric}(default) contains 0 (the data "
                                 f"could detect about {_detectable(r['se'], level):.3g})")
            row["shipped"] = bool(ok)
        rows.append(row)
    evidence = pd.DataFrame(rows, columns=list(EVIDENCE_COLUMNS))
    evidence["shipped"] = evidence["shipped"].astype(bool)

    numc, denc = stats.sums(metric, "test", [cid(candidate)])
    joint = paired_difference(num0[0], den0[0], numc[0], denc[0], W, alpha)
    combined = {"delta": joint["delta"], "ci_lower": joint["ci_lower"], "ci_upper": joint["ci_upper"],
                "p_value": joint["p_value"], "detectable": _detectable(joint["se"], alpha)}
    by_id = results.set_index("config_id")
    v0, vc = (float(by_id.loc[cid(x), f"val_{metric}"]) for x in (default, candidate))
    t0, tc = (float(by_id.loc[cid(x), f"test_{metric}"]) for x in (default, candidate))
    optimism = sign * (v0 - vc) - sign * (t0 - tc)
    vals = pd.to_numeric(results[f"val_{metric}"], errors="coerce").to_numpy(np.float64)
    n_configs = int(np.count_nonzero(np.isfinite(vals) & _constraint_mask(results, constraint)))
    return Decision(spec.name, metric, default.replace(**ship), default, candidate, evidence, combined,
                    float(optimism), n_configs, unidentified, alpha, int(n_boot), cluster, int(seed),
                    constraint)


def _short(params, spec) -> str:
    """The fields of ``params`` that differ from the params class defaults, as ``(a=1, b=2)``."""
    base = spec.params_class()
    diff = {f.name: getattr(params, f.name) for f in dataclasses.fields(params)
            if getattr(params, f.name) != getattr(base, f.name)}
    return "(" + ", ".join(f"{k}={v!r}" for k, v in diff.items()) + ")" if diff else "(all defaults)"


def combine_decisions(decisions) -> Decision:
    """Join decisions on different metrics of one engine into one.

    Each parameter is taken from the first decision (in the given order)
    whose metric identifies it and that considered it; a parameter no
    metric identifies keeps its first evidence row (never shipped). Example:
    K, P0 and the soft weight decided on ``log_loss``, the threshold and the
    strong bar on ``interruption_rate`` under a constraint.

    The merged ``params`` is the common default with every shipped value;
    ``metric`` joins the metrics with ``" + "``; ``combined`` holds each
    part's combined difference under ``"parts"`` (its own ``delta`` is NaN:
    no single metric scores the merged change); ``optimism`` is NaN, see
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
                chosen[row["parameter"]] = row
    for d in decisions:
        for row in d.evidence.to_dict("records"):
            chosen.setdefault(row["parameter"], row)
    fields = [f.name for f in dataclasses.fields(first.params)]
    rows = [chosen[f] for f in fields if f in chosen]
    evidence = pd.DataFrame(rows, columns=list(EVIDENCE_COLUMNS))
    evidence["shipped"] = evidence["shipped"].astype(bool)
    ship = {r["parameter"]: r["candidate"] for r in rows if r["shipped"]}
    unidentified = [f for f in fields if f in chosen and all(f in d.unidentified for d in decisions
                                                             if f in d.evidence["parameter"].tolist())]
    cand = {r["parameter"]: r["candidate"] for r in rows if r["parameter"] not in unidentified}
    nan = float("nan")
    return Decision(first.engine, " + ".join(dict.fromkeys(d.metric for d in decisions)),
                    first.default.replace(**ship), first.default, first.default.replace(**cand), evidence,
                    {"delta": nan, "ci_lower": nan, "ci_upper": nan,
                     "parts": {d.metric: d.combined for d in decisions}},
                    nan, max(d.n_configs for d in decisions), unidentified, first.alpha, first.n_boot,
                    first.cluster, first.seed, None, decisions)
