"""Figures of sweeps, decisions and fits: metric heatmaps, metric-vs-parameter curves, decision forest plots,
prior profiles.

The reliability diagram of a tuned replay is
:func:`thatchlab.plots.scoring.prequential_reliability_diagram`; this module
adds the views a sweep and the :class:`~thatchlab.fit.PriorFitter` need.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.sweep import metric_direction

__all__ = ["metric_heatmap", "metric_curve", "prior_profile", "pareto_plot", "decision_forest", "per_user_forest",
           "param_label",
           "metric_label"]

_PARAM_UNITS = {
    "k": "prior strength K (pseudo-signals)", "p0": "prior mean P0 (probability)",
    "soft_weight": "soft weight (disconfirm fraction)", "threshold": "nudge threshold (cosine)",
    "query_threshold": "query threshold (cosine)", "dedup_cosine": "dedup threshold (cosine)",
    "strong_confidence": "strong confidence (probability)", "strong_evidence": "strong evidence (signals)",
    "conflict_margin": "conflict margin (score)", "half_life_days": "half-life (days)",
    "top_matchers": "top matchers (count)", "max_items": "max items (count)",
}
_METRIC_UNITS = {
    "log_loss": "log-loss (nats per signal)", "brier": "Brier score (squared probability)",
    "ece": "ECE (probability)", "auc": "AUC (probability)", "interruption_rate": "interruption rate (fraction)",
    "wrong_silent_follow_rate": "wrong silent follows (fraction)", "coverage": "coverage (fraction)",
    "hit_rate_at_k": "hit rate at k (fraction)", "precision_at_k": "precision at k (fraction)",
}


def param_label(name: str) -> str:
    """Axis label with units for a parameter (``"{name} (days)"`` for belief half-lives).

    Parameters
    ----------
    name : str
        A parameter name (a belief class names its half-life).

    Returns
    -------
    str
        The label, e.g. ``"prior strength K (pseudo-signals)"``.

    See Also
    --------
    metric_label : the label of a metric.
    """
    if name in _PARAM_UNITS:
        return _PARAM_UNITS[name]
    if name in ("identity", "relationship", "preference", "state", "plan", "episodic", "meta_residue",
                "meta_standing"):
        return f"{name} half-life (days)"
    return f"{name} (parameter value)"


def metric_label(metric: str, segment: str = "val") -> str:
    """Axis label with units for ``<segment>_<metric>``.

    Parameters
    ----------
    metric : str
        A metric name (``"brier"``, ``"log_loss"``...).
    segment : str, default="val"
        The segment whose column is labelled.

    Returns
    -------
    str
        The label, with the metric's units.

    See Also
    --------
    param_label : the label of a parameter.
    """
    base = _METRIC_UNITS.get(metric)
    if base is None:
        base = f"{metric} ({'fraction' if metric.endswith('rate') else 'score'})"
    where = {"val": "validation", "test": "held-out test"}.get(segment, segment)
    return f"{where} {base}"


def _best_over_others(results, keys, column, minimize):
    """One row per value of ``keys``: the best ``column`` over the other parameters."""
    df = results.dropna(subset=[column])
    order = df[column] if minimize else -df[column]
    df = df.assign(_key=order.to_numpy()).sort_values("_key", kind="stable")
    return df.drop_duplicates(list(keys), keep="first").drop(columns="_key")


def metric_heatmap(results: pd.DataFrame, x: str, y: str, metric: str, segment: str = "val",
                   minimize: bool = True, title: str | None = None):
    """Heatmap of ``<segment>_<metric>`` over two swept parameters.

    Where other parameters vary too, each cell shows the best value over
    them (``minimize`` says which is best). The best cell is outlined.

    Parameters
    ----------
    results : pandas.DataFrame
        A sweep's results (one row per configuration).
    x, y : str
        The two swept parameters (columns).
    metric : str
        The metric; the column drawn is ``<segment>_<metric>``.
    segment : str, default="val"
        The segment scored.
    minimize : bool, default=True
        Whether lower values are better.
    title : str, default=None
        The axes title (one naming the metric when None).

    Returns
    -------
    matplotlib.figure.Figure
        The heatmap, best cell outlined.

    See Also
    --------
    metric_curve : one parameter at a time.

    Examples
    --------
    >>> res = pd.DataFrame({"k": [1, 1, 5, 5], "p0": [0.3, 0.5, 0.3, 0.5],
    ...                     "val_brier": [0.3, 0.2, 0.25, 0.22]})
    >>> fig = metric_heatmap(res, "k", "p0", "brier")
    >>> fig.axes[0].get_xlabel(), fig.axes[0].get_ylabel()
    ('prior strength K (pseudo-signals)', 'prior mean P0 (probability)')
    """
    from matplotlib.figure import Figure  # heavy: matplotlib only when a figure is drawn

    column = f"{segment}_{metric}"
    best = _best_over_others(results, (x, y), column, minimize)
    grid = best.pivot(index=y, columns=x, values=column).sort_index().sort_index(axis=1)
    fig = Figure(figsize=(6.5, 5))
    ax = fig.add_subplot(1, 1, 1)
    im = ax.imshow(grid.to_numpy(dtype=float), origin="lower", aspect="auto", cmap="viridis_r" if minimize
                   else "viridis")
    ax.set_xticks(range(grid.shape[1]), [f"{v:.3g}" if isinstance(v, float) else str(v) for v in grid.columns],
                  rotation=45, ha="right")
    ax.set_yticks(range(grid.shape[0]), [f"{v:.3g}" if isinstance(v, float) else str(v) for v in grid.index])
    vals = grid.to_numpy(dtype=float)
    if np.isfinite(vals).any():
        flat = np.nanargmin(vals) if minimize else np.nanargmax(vals)
        r, c = np.unravel_index(flat, vals.shape)
        ax.add_patch(_rect(c - 0.5, r - 0.5))
    ax.set_xlabel(param_label(x))
    ax.set_ylabel(param_label(y))
    fig.colorbar(im, ax=ax, label=metric_label(metric, segment))
    ax.set_title(title or f"{metric_label(metric, segment)} over {x} and {y}")
    fig.tight_layout()
    return fig


def _rect(x, y):
    from matplotlib.patches import Rectangle  # heavy: matplotlib only when a figure is drawn

    return Rectangle((x, y), 1, 1, fill=False, edgecolor="red", linewidth=2)


def metric_curve(results: pd.DataFrame, param: str, metric: str, segments=("val", "test"),
                 minimize: bool = True, log_x: bool = False, title: str | None = None):
    """``<segment>_<metric>`` against one parameter, with bootstrap intervals when present.

    For each value of ``param`` the configuration with the best validation
    score over the other parameters is shown (validation and its held-out
    test score); ``<segment>_<metric>_lo``/``_hi`` columns (``intervals=True``
    in the sweep) are drawn as bands.

    Parameters
    ----------
    results : pandas.DataFrame
        A sweep's results (one row per configuration).
    param : str
        The parameter on the x axis.
    metric : str
        The metric; columns ``<segment>_<metric>`` are drawn.
    segments : sequence of str, default=("val", "test")
        The segments drawn.
    minimize : bool, default=True
        Whether lower values are better.
    log_x : bool, default=False
        A logarithmic x axis.
    title : str, default=None
        The axes title (one naming the metric when None).

    Returns
    -------
    matplotlib.figure.Figure
        One line (and band) per segment.

    See Also
    --------
    metric_heatmap : two parameters at a time.

    Examples
    --------
    >>> res = pd.DataFrame({"k": [1.0, 5.0, 20.0], "val_brier": [0.3, 0.2, 0.25],
    ...                     "test_brier": [0.31, 0.22, 0.24]})
    >>> metric_curve(res, "k", "brier").axes[0].get_ylabel()
    'Brier score (squared probability)'
    """
    from matplotlib.figure import Figure  # heavy: matplotlib only when a figure is drawn

    best = _best_over_others(results, (param,), f"val_{metric}", minimize).sort_values(param)
    fig = Figure(figsize=(6, 4.2))
    ax = fig.add_subplot(1, 1, 1)
    xs = best[param].to_numpy(dtype=float)
    for j, seg in enumerate(segments):
        col = f"{seg}_{metric}"
        if col not in best.columns:
            continue
        label = {"val": "validation", "test": "held-out test"}.get(seg, seg)
        ax.plot(xs, best[col].to_numpy(dtype=float), marker="o", color=f"C{j}", label=label)
        if f"{col}_lo" in best.columns:
            ax.fill_between(xs, best[f"{col}_lo"].to_numpy(dtype=float), best[f"{col}_hi"].to_numpy(dtype=float),
                            color=f"C{j}", alpha=0.2, label=f"{label} 95% bootstrap interval")
    if log_x:
        ax.set_xscale("log")
    ax.set_xlabel(param_label(param) + (" (log scale)" if log_x else ""))
    ax.set_ylabel(_METRIC_UNITS.get(metric, metric_label(metric, "")[1:]))
    ax.set_title(title or f"{metric} against {param}")
    ax.legend(frameon=False)
    fig.tight_layout()
    return fig


def prior_profile(fitter, param: str = "k", n: int = 60, title: str | None = None):
    """Profile-likelihood deviance of K or P0 from a fitted :class:`~thatchlab.fit.PriorFitter`.

    Plots ``2(ℓ̂ − ℓ_profile)`` over a range around the estimate, the
    χ²₁ cut that defines the interval, the estimate and the interval ends.

    Parameters
    ----------
    fitter : PriorFitter
        A fitted :class:`~thatchlab.fit.PriorFitter`.
    param : {"k", "p0"}, default="k"
        The profiled parameter.
    n : int, default=60
        Points of the profile.
    title : str, default=None
        The axes title (one naming the parameter when None).

    Returns
    -------
    matplotlib.figure.Figure
        The deviance curve, the cut, the estimate and the interval ends.

    Examples
    --------
    >>> import numpy as np
    >>> from thatchlab.fit import PriorFitter
    >>> rng = np.random.default_rng(0)
    >>> c = rng.binomial(8, rng.beta(2, 3, 200))
    >>> prior_profile(PriorFitter().fit_counts(c, 8 - c)).axes[0].get_ylabel()
    'profile deviance 2(ℓ̂ − ℓ) (log-likelihood units)'
    """
    from matplotlib.figure import Figure  # heavy: matplotlib only when a figure is drawn
    from scipy.stats import chi2  # heavy: SciPy takes about 0.5 s to import

    s = fitter.summary_.loc[param]
    coef, lo, hi = float(s["coef"]), float(s["ci_lower"]), float(s["ci_upper"])
    if param == "k":
        centre = coef if np.isfinite(coef) else (lo if np.isfinite(lo) and lo > 0 else 100.0)
        left = lo / 2 if np.isfinite(lo) and lo > 0 else centre / 20
        right = hi * 2 if np.isfinite(hi) else centre * 50
        grid = np.geomspace(left, right, n)
    else:
        width = max(hi - lo, 1e-3)
        grid = np.linspace(max(lo - width, 1e-4), min(hi + width, 1 - 1e-4), n)
    prof = fitter.profile(param, grid)
    cut = float(chi2.ppf(1 - fitter.alpha, 1))  # the profile interval's deviance cut
    fig = Figure(figsize=(6, 4.2))
    ax = fig.add_subplot(1, 1, 1)
    ax.plot(prof["value"], prof["deviance"], color="C0", label="profile deviance")
    ax.axhline(cut, color="0.5", linestyle="--", label=f"χ²₁ cut ({1 - fitter.alpha:.0%} interval)")
    for v, style in ((coef, "-"), (lo, ":"), (hi, ":")):
        if np.isfinite(v) and grid[0] <= v <= grid[-1]:
            ax.axvline(v, color="C3", linestyle=style, linewidth=1)
    if param == "k":
        ax.set_xscale("log")
    ax.set_ylim(0, max(3 * cut, 1.0))
    ax.set_xlabel(("prior strength K (pseudo-signals, log scale)" if param == "k" else "prior mean P0 (probability)"))
    ax.set_ylabel("profile deviance 2(ℓ̂ − ℓ) (log-likelihood units)")
    ax.set_title(title or f"Profile likelihood of {param}" + (" (boundary fit: K = ∞)" if fitter.boundary_ else ""))
    ax.legend(frameon=False)
    fig.tight_layout()
    return fig


def pareto_plot(results: pd.DataFrame, front: pd.DataFrame, x: str, y: str, *, default=None,
                chosen=None, segment: str = "val", title: str | None = None):
    """Every configuration on two metrics, the non-dominated front drawn as a line.

    ``front`` is :func:`thatchlab.sweep.pareto`'s result for ``[x, y]``;
    ``default`` and ``chosen`` (rows or mappings with the two score columns)
    are marked, so a reader sees where production's default sits and what a
    decision picked. Configurations with the same scores share a point (their
    count is its size).

    Parameters
    ----------
    results : pandas.DataFrame
        A sweep's results (one row per configuration).
    front : pandas.DataFrame
        :func:`thatchlab.sweep.pareto`'s result for ``[x, y]``.
    x, y : str
        The two metrics (columns ``<segment>_<x>``, ``<segment>_<y>``).
    default : pandas.Series or dict, default=None
        Production's default configuration, marked.
    chosen : pandas.Series or dict, default=None
        The configuration a decision picked, marked.
    segment : str, default="val"
        The segment scored.
    title : str, default=None
        The axes title.

    Returns
    -------
    matplotlib.figure.Figure
        The scatter and its front (or a note saying there is nothing to show).

    Examples
    --------
    >>> res = pd.DataFrame({"val_interruption_rate": [0.2, 0.3, 0.1, 0.3],
    ...                     "val_wrong_silent_follow_rate": [0.1, 0.05, 0.2, 0.1]})
    >>> fig = pareto_plot(res, res.iloc[[0, 1, 2]], "interruption_rate", "wrong_silent_follow_rate")
    >>> fig.axes[0].get_xlabel()
    'interruption rate (fraction)'
    >>> none = res.assign(val_wrong_silent_follow_rate=float("nan"))
    >>> pareto_plot(none, none.iloc[:0], "interruption_rate", "wrong_silent_follow_rate").axes[0].texts[0].get_text()
    'Nothing to show: no configuration has wrong_silent_follow_rate on val'
    """
    from matplotlib.figure import Figure  # heavy: matplotlib only when a figure is drawn

    xc, yc = f"{segment}_{x}", f"{segment}_{y}"
    pts = results[[xc, yc]].apply(pd.to_numeric, errors="coerce").dropna()
    counts = pts.groupby([xc, yc]).size().reset_index(name="n")
    fig = Figure(figsize=(6, 4.2))
    ax = fig.add_subplot(1, 1, 1)
    ax.scatter(counts[xc], counts[yc], s=18 + 12 * counts["n"], color="0.65", label="configurations")
    f = front[[xc, yc]].apply(pd.to_numeric, errors="coerce").drop_duplicates().sort_values([xc, yc])
    ax.plot(f[xc], f[yc], marker="o", color="C0", label="Pareto front")
    for row, style, label in ((default, dict(marker="s", color="C3"), "production default"),
                              (chosen, dict(marker="*", color="C2", markersize=14), "shipped")):
        if row is not None:
            ax.plot([float(row[xc])], [float(row[yc])], linestyle="none", markersize=style.pop("markersize", 9),
                    label=label, **style)
    ax.set_xlabel(_METRIC_UNITS.get(x, x))
    ax.set_ylabel(_METRIC_UNITS.get(y, y))
    ax.set_title(title or f"{x} against {y} ({'validation' if segment == 'val' else segment})")
    if len(pts) == 0:  # no point to draw: the figure says why instead of showing empty axes
        have = results[[xc, yc]].apply(pd.to_numeric, errors="coerce").notna().any()
        why = (f"no configuration has {y} on {segment}" if have[xc] or not have[yc] else
               f"no configuration has {x} on {segment}")
        ax.text(0.5, 0.5, f"Nothing to show: {why}", ha="center", va="center", wrap=True, transform=ax.transAxes)
    else:
        ax.legend(frameon=False)
    fig.tight_layout()
    return fig


def decision_forest(decision, title: str | None = None):
    """A decision's intervals on one axis: each parameter changed alone, each configuration tested, what ships.

    One row per evidence row with an interval (the default with that
    parameter alone changed: described, not the test), one per tested
    configuration of :attr:`~thatchlab.decide.Decision.combined` (the candidate,
    the gate, then the reduced configurations of the family), each a point
    estimate of (configuration − default) on the test stretch with its
    interval; the shipped configuration is drawn in colour, the rest in grey.
    A vertical line marks 0; the improving side is labelled.

    Parameters
    ----------
    decision : Decision
        A :class:`thatchlab.decide.Decision`.
    title : str, default=None
        The axes title (one naming the decision's metric when None).

    Returns
    -------
    matplotlib.figure.Figure
        The forest plot.

    See Also
    --------
    per_user_forest : the same decision, user by user.

    Examples
    --------
    >>> import numpy as np
    >>> from thatchlab.decide import decide, planted_sweep
    >>> d = decide(planted_sweep(30, -0.03, np.random.default_rng(1)), "log_loss", n_boot=100)
    >>> fig = decision_forest(d)
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['k alone', 'candidate (k=20.0): gate']
    """
    from matplotlib.figure import Figure  # heavy: matplotlib only when a figure is drawn

    c = decision.combined
    rows = []  # (label, delta, lo, hi, shipped)
    for r in decision.evidence.itertuples():
        if np.isfinite(r.delta) and np.isfinite(r.ci_lower) and np.isfinite(r.ci_upper):
            rows.append((f"{r.parameter} alone", r.delta, r.ci_lower, r.ci_upper, False))
    shipped_id = c.get("config_id")

    def changes(p) -> str:
        return ", ".join(f"{k}={v!r}" for k, v in p.items()) or "all defaults"

    gate = c.get("gate")
    if isinstance(gate, dict) and np.isfinite(gate.get("delta", np.nan)):
        cand = {f: getattr(decision.candidate, f) for f in decision.evidence["parameter"]
                if getattr(decision.candidate, f) != getattr(decision.default, f)}
        rows.append((f"candidate ({changes(cand)}): gate", gate["delta"], gate["ci_lower"], gate["ci_upper"],
                     gate.get("config_id") == shipped_id))
    for fam in c.get("family") or []:
        lo, hi = fam.get("ci_lower", np.nan), fam.get("ci_upper", np.nan)
        if np.isfinite(fam.get("delta", np.nan)):
            rows.append((f"keeps {', '.join(fam['changes'])}", fam["delta"], lo, hi,
                         fam.get("config_id") == shipped_id))
    fig = Figure(figsize=(8.0, 0.55 * max(len(rows), 2) + 1.4))
    ax = fig.add_subplot(1, 1, 1)
    for y, (_, d, lo, hi, shipped) in enumerate(rows):
        colour = "C2" if shipped else "0.55"
        ax.plot([lo, hi], [y, y], color=colour, lw=2.2 if shipped else 1.5)
        ax.plot([d], [y], "o", color=colour, markersize=7 if shipped else 5)
    ax.axvline(0.0, color="0.2", lw=0.8, ls="--")
    ax.set_yticks(range(len(rows)), [r[0] for r in rows])
    ax.set_ylim(len(rows) - 0.5, -0.5)
    lower = metric_direction(decision.metric.split(" + ")[0]) == "min"
    unit = _METRIC_UNITS.get(decision.metric, decision.metric)
    ax.set_xlabel(f"test {unit}: configuration − default ({'left' if lower else 'right'} is better)")
    what = ", ".join(f"{k}={v!r}" for k, v in (c.get("params") or {}).items())
    ax.set_title(title or f"{decision.engine} decision on {decision.metric}: "
                          + (f"ships {what}" if what else "ships nothing"))
    fig.tight_layout()
    return fig


def per_user_forest(decision, title: str | None = None):
    """Each user's test effect of a decision's change, worst first: the per-user forest plot.

    One row per user of :attr:`~thatchlab.decide.Decision.per_user` (configuration − default over
    that user's test sessions, with its interval); users hurt beyond the harm margin are drawn in
    red, users whose interval is on the improving side in green, the rest in grey. A decision
    whose sweep named no users has no per-user table: the figure says so in its place.

    Parameters
    ----------
    decision : Decision
        A :class:`thatchlab.decide.Decision` (its ``per_user``, ``harm``, ``metric`` and ``engine``).
    title : str, default=None
        The axes title (one naming the decision's metric when None).

    Returns
    -------
    matplotlib.figure.Figure
        The forest plot (or a note when the sweep named no users).

    See Also
    --------
    decision_forest : the decision's configurations.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from types import SimpleNamespace
    >>> t = pd.DataFrame({"user": ["a", "b"], "delta": [0.1, -0.05], "ci_lower": [0.02, -0.09],
    ...                   "ci_upper": [0.18, -0.01], "hurt": [True, False], "worse": [True, False]})
    >>> d = SimpleNamespace(per_user=t, metric="interruption_rate", engine="prediction",
    ...                     harm={"margin": 0.0, "hurt": ["a"], "users": 2})
    >>> [x.get_text() for x in per_user_forest(d).axes[0].get_yticklabels()]
    ['a', 'b']
    """
    from matplotlib.figure import Figure  # heavy: matplotlib only when a figure is drawn

    table = getattr(decision, "per_user", None)
    fig = Figure(figsize=(8.0, 0.32 * max(0 if table is None else len(table), 4) + 1.4))
    ax = fig.add_subplot(1, 1, 1)
    if table is None or not len(table):
        ax.axis("off")
        ax.text(0.5, 0.5, "no per-user table: the sweep's log named no users (a `user` column),\n"
                          "so effects could not be split by user", ha="center", va="center")
        return fig
    lower = metric_direction(decision.metric.split(" + ")[0]) == "min"
    for y, r in enumerate(table.itertuples()):
        better = (r.ci_upper < 0) if lower else (r.ci_lower > 0)
        colour = "C3" if r.hurt else ("C2" if better else "0.55")
        ax.plot([r.ci_lower, r.ci_upper], [y, y], color=colour, lw=1.6)
        ax.plot([r.delta], [y], "o", color=colour, markersize=4)
    ax.axvline(0.0, color="0.2", lw=0.8, ls="--")
    ax.set_yticks(range(len(table)), [str(u) for u in table["user"]])
    ax.set_ylim(len(table) - 0.5, -0.5)
    unit = _METRIC_UNITS.get(decision.metric, decision.metric)
    ax.set_xlabel(f"test {unit} per user: configuration − default ({'left' if lower else 'right'} is better)")
    harm = getattr(decision, "harm", None) or {}
    ax.set_title(title or f"{decision.engine}: {len(harm.get('hurt', []))} of {harm.get('users', len(table))} "
                          f"users hurt beyond {harm.get('margin', 0):g}")
    fig.tight_layout()
    return fig
