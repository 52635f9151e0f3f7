"""The main job's steps: each replays, sweeps or fits one engine, has thatchlab.decide.policy decide, and returns
its report section."""

from __future__ import annotations

from thatchlab.core.display import plural
from thatchlab.decide.policy import HOLDOUT, MainJobPolicy, row_at, rows_at
from thatchlab.run._common import (
    _PARAMS,
    FORECAST_METRIC,
    GUARD_METRIC,
    REGIME_METRICS,
    THRESHOLD_METRIC,
    Section,
    _embedder,
    _metrics_frame,
    _params,
    _save,
)


def _policy(ctx) -> MainJobPolicy:
    """The decision policy in force: thatchlab.decide.policy with the configured holdout."""
    return MainJobPolicy(holdout=ctx["cfg"].get("sweep", {}).get("holdout", HOLDOUT))


def _ran_under(ctx, engine) -> str:
    """Words for the parameters ``engine`` ran with: production's values, or the configured ones."""
    return "the configured parameters" if ctx["cfg"].get(engine) else "production's values"


def _scoring(ctx, engine, filename):
    from thatchlab.logs import read_interaction_log
    from thatchlab.plots import prequential_reliability_diagram, regime_bars
    from thatchlab.replay import run

    path = ctx["data"] / filename
    if not path.is_file():
        return None
    log = read_interaction_log(path)
    params = _params(ctx["cfg"], engine)
    res = run(log, engine=engine, params=params, embedder=_embedder(ctx))
    ctx["state"][engine] = res
    ctx["state"][f"{engine}:log"] = log
    ctx["state"][f"{engine} replay:metrics"] = res.metrics
    sec = Section(f"{engine.capitalize()} engine: replay of {filename}",
                  f"{plural(len(log), 'event')} replayed under {_ran_under(ctx, engine)} (listed at the top) with the "
                  f"{res.embedder} embedder.")
    sec.tables.append(("Replay metrics", _metrics_frame(res.metrics)))
    regimes = res.events.loc[res.events["kind"] == "message", "regime"].value_counts().rename("messages")
    sec.tables.append(("Nudge regimes", regimes.to_frame()))
    sec.figures.append(("Reliability of the prequential forecasts",
                        _save(prequential_reliability_diagram({"defaults": res}), ctx["out"], f"{engine}_reliability")))
    sec.figures.append(("Regimes per message", _save(regime_bars({"defaults": res}), ctx["out"], f"{engine}_regimes")))
    return sec


def _prediction(ctx):
    return _scoring(ctx, "prediction", "interactions.jsonl")


def _behavior(ctx):
    return _scoring(ctx, "behavior", "behavior_interactions.jsonl")


def _sweep(ctx):
    import warnings

    from thatchlab.plots import decision_forest, metric_heatmap, pareto_plot
    from thatchlab.sweep import pareto

    log = ctx["state"].get("prediction:log")
    if log is None:
        return None
    policy = _policy(ctx)
    holdout = policy.holdout
    base = _params(ctx["cfg"], "prediction")  # what production runs: the comparison's default
    space = ctx["sweep_space"] or ctx["cfg"].get("sweep", {}).get("space")
    out = policy.decide_prediction(log, base, space=space, embedder=_embedder(ctx))
    res, decision, decisions, fitted = out.sweep, out.decision, out.parts, out.candidate
    ctx["state"].update({"sweep": res, "prediction outcome": out, "prior before test": out.prior_fit,
                         "prior candidate": fitted, "decision": decision, "best_params": decision.params})
    tables, figures, notes = [], [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the report states ties and unidentified parameters
        keys = list(out.forecast_space)
        if out.prior is not None and len(keys) >= 2:
            figures.append((f"Validation log-loss over {keys[0]} and {keys[1]} (production's threshold)",
                            _save(metric_heatmap(rows_at(res, out.nudge_space, base), keys[0], keys[1],
                                                 FORECAST_METRIC), ctx["out"], "sweep_heatmap")))
        if out.nudge is not None:
            sub = rows_at(res, out.forecast_space, base)  # the forecast parameters at production's values
            default = row_at(res, out.space, base)
            notes.append(f"The nudge parameters ({', '.join(out.nudge_space)}) are decided on {THRESHOLD_METRIC} "
                         f"(which items surface), with K, P0 and the soft weight at production's values, "
                         + (f"subject to {GUARD_METRIC} ≤ {out.guard:.4f} (production's on validation)."
                            if out.guard is not None else f"unconstrained: no strong message had an outcome on "
                            f"validation under production's values, so {GUARD_METRIC} is undefined there."))
            front = pareto(sub, list(REGIME_METRICS))
            shown = front[list(out.nudge_space) + [f"val_{m}" for m in (THRESHOLD_METRIC, *REGIME_METRICS)]
                          + [f"test_{m}" for m in (THRESHOLD_METRIC, *REGIME_METRICS)]].reset_index(drop=True)
            why = _no_front(sub) if len(front) == 0 else None
            shown.attrs["empty_reason"] = why
            tables.append(("Pareto front of interruptions and wrong silent follows (validation, production's "
                           "K and P0)", shown))
            caption = ("Interruptions against wrong silent follows: every configuration at production's "
                       "K and P0, the Pareto front, production's default and what the threshold decision ships")
            if why is not None:  # a figure of no point: the reason stands in its place
                figures.append((caption, None, why))
            else:
                chosen = row_at(res, out.space, out.nudge.params)
                figures.append((caption, _save(pareto_plot(sub, front, *REGIME_METRICS, default=default,
                                                           chosen=chosen), ctx["out"], "sweep_pareto")))
    shipped = decision.shipped_parameters()
    ctx["state"]["prediction sweep:metrics"] = {
        "n_configs": len(res), "shipped": ", ".join(shipped) or "nothing",
        **{f"optimism_{d.metric}": d.optimism for d in decisions}}
    unidentified = decision.unidentified
    configured = "the configured parameters" if ctx["cfg"].get("prediction") else "production's values"
    sec = Section(
        "Prediction engine: holdout sweep and decision",
        f"{plural(len(res), 'configuration')} scored on a time-based holdout of {holdout:g} (validation = "
        f"the {holdout:g} before the last {holdout:g} of the log, test = the last {holdout:g}), against "
        f"{configured}: what production runs. Each decision tests one candidate as a whole against it on "
        "the test stretch (a paired bootstrap over sessions, Student's t with one degree of freedom fewer "
        "than the sessions), and only if it improves are the configurations keeping part of its changes "
        "tested (Holm's correction) to drop changes that add nothing. K and P0 are decided on "
        f"{FORECAST_METRIC} with the prior fitted on the log before the test stretch as the candidate"
        + (f" (K = {fitted['k']:g}, P0 = {fitted['p0']:g})" if fitted else
           " (the fit was unusable here, so the validation winner is the candidate)")
        + f"; the main job's {plural(len(policy.rules), 'decision')} are made at α = {policy.level:g} each "
        f"({policy.alpha:g} over all), and the "
        "threshold decision's change is added only if the joint configuration improves both metrics on "
        "test. "
        + (f"Shipped: {', '.join(f'{p} = {getattr(decision.params, p)!r}' for p in shipped)}. "
           if shipped else "Nothing is shipped: production's values stay. ")
        + (f"Not identified by their metric on this data (never shipped): {', '.join(unidentified)}. "
           if unidentified else "")
        + "The candidates' optimism (their validation advantage over production's minus their test "
        "advantage): " + "; ".join(f"{d.metric} {d.optimism:.4g}" for d in decisions) + ". "
        + " ".join(notes))
    sec.tables.append(("Decision evidence, one row per parameter", decision.evidence))
    sec.tables.extend(tables)
    for d in decisions:
        sec.figures.append((f"The {d.metric} decision's intervals: each change alone and each configuration "
                            "tested as a whole", _save(decision_forest(d), ctx["out"], f"decision_{d.metric}")))
    sec.figures.extend(figures)
    return sec


def _no_front(rows) -> str:
    """Why a sweep's rows give no Pareto front of interruptions and wrong silent follows, in words."""
    import numpy as np

    if len(rows) == 0:
        return "no configuration at production's K and P0 was scored"
    inter, wrong = (rows[f"val_{m}"].to_numpy(dtype=float) for m in REGIME_METRICS)
    if not np.isfinite(wrong).any():
        return ("no message reached the strong regime with an outcome on validation under any configuration, "
                "so wrong silent follows cannot be estimated")
    if not np.isfinite(inter).any():
        return "no live message fell on validation, so interruptions cannot be estimated"
    return ("no configuration has both rates on validation (each lacks one: no strong message with an outcome, "
            "or no live message)")


def _prior(ctx):
    from thatchlab.core.params.production import production_params
    from thatchlab.fit import PriorFitter
    from thatchlab.plots import prior_profile

    res = ctx["state"].get("prediction")
    if res is None:
        return None
    prov = res.tables["provenance"].rename(columns={"prediction_id": "item_id"})
    fit = PriorFitter(soft_weight=res.params.soft_weight).fit(prov[["item_id", "signal"]])
    ctx["state"]["prior"] = fit
    ctx["state"]["prior fit:metrics"] = {"k": fit.k_, "p0": fit.p0_, "log_likelihood": fit.log_likelihood_}
    prod = production_params("prediction")
    sec = Section("Prediction engine: empirical-Bayes prior",
                  ("K and P0 fitted by the weighted prequential log score of every prediction's signals "
                   "(soft signals as disconfirms of weight soft_weight, the sweep's own objective)"
                   if fit.objective_ == "prequential" else
                   "K and P0 fitted by the beta-binomial marginal likelihood of every prediction's "
                   "confirm/disconfirm counts") + f" ({fit.assumption_}), with profile-likelihood intervals, "
                  f"on the whole log. Production hard-codes K = {prod.k:g} and P0 = {prod.p0:g}. " + _prior_verdict(ctx))
    sec.tables.append(("Fitted prior", fit.summary_))
    if fit.k_ not in (0.0, float("inf")):
        sec.figures.append(("Profile likelihood of K", _save(prior_profile(fit, "k"), ctx["out"], "prior_profile")))
    return sec


def _prior_verdict(ctx) -> str:
    """The prior fit reconciled with the decision, in words."""
    fit, fitted = ctx["state"].get("prior before test"), ctx["state"].get("prior candidate") or {}
    decision = ctx["state"].get("decision")
    if decision is None or not fitted:
        return "The fit was not tested on held-out data (no sweep, or the fit is at a boundary): not shipped."
    s = fit.summary_
    part = next((d for d in decision.parts if d.metric == FORECAST_METRIC), None)
    gate = part.combined.get("gate", {}) if part is not None else {}
    head = (f"Fitted on the log before the test stretch: K ≈ {fitted['k']:g} "
            f"[{s.loc['k', 'ci_lower']:.3g}, {s.loc['k', 'ci_upper']:.3g}], P0 ≈ {fitted['p0']:g} "
            f"[{s.loc['p0', 'ci_lower']:.3g}, {s.loc['p0', 'ci_upper']:.3g}]; as a whole it changes held-out "
            f"{FORECAST_METRIC} by {gate.get('delta', float('nan')):+.4g} "
            f"[{gate.get('ci_lower', float('nan')):.4g}, {gate.get('ci_upper', float('nan')):.4g}] against "
            "production's values")
    shipped = [p for p in ("k", "p0") if p in decision.shipped_parameters()]
    if shipped:
        return head + f": ships {', '.join(f'{p} = {getattr(decision.params, p):g}' for p in shipped)}" + (
            "" if len(shipped) == 2 else f" (the other adds nothing the data can show: production's "
            f"{'K' if 'k' not in shipped else 'P0'} stays)") + "."
    return head + ": not shipped."


def _belief(ctx):
    from thatchlab.fit import HalfLifeFitter
    from thatchlab.logs import read_memory_log
    from thatchlab.plots import currency_curves
    from thatchlab.replay import run_belief

    path = ctx["data"] / "memory_log.jsonl"
    if not path.is_file():
        return None
    log = read_memory_log(path)
    res = run_belief(log, _params(ctx["cfg"], "belief"))
    fit = HalfLifeFitter().fit_from_log(log)
    ctx["state"]["belief"] = res
    ctx["state"]["belief fit"] = fit
    ctx["state"]["belief decision"] = _policy(ctx).decide_half_lives(log, _params(ctx["cfg"], "belief"))
    ctx["state"]["belief replay and fit:metrics"] = res.metrics
    sec = Section("Belief model: currency against truth, fitted half-lives",
                  f"{plural(len(log), 'memory-log event')}; currency and band recorded at each labelled read. "
                  f"Time-only transitions (must be 0): {res.metrics['time_only_transitions']}.")
    sec.tables.append(("Replay metrics", _metrics_frame(res.metrics)))
    sec.tables.append(("Band × truth", res.band_table))
    sec.tables.append(("Fitted half-lives (exponential MLE per class)", fit.summary_))
    sec.figures.append(("Currency curves: priors and fitted half-lives",
                        _save(currency_curves(res.params, fitted=fit.half_life_), ctx["out"], "belief_currency")))
    return sec


def _calibration(ctx):
    from thatchlab.fit import DeriveWeightsFitter
    from thatchlab.logs import read_recall_log
    from thatchlab.plots import reliability_diagram
    from thatchlab.replay import run_calibration

    path = ctx["data"] / "recall_log.jsonl"
    if not path.is_file():
        return None
    log = read_recall_log(path)
    res = run_calibration(log, _params(ctx["cfg"], "calibration"))
    fit = DeriveWeightsFitter().fit(log)
    ctx["state"]["calibration"] = res
    ctx["state"]["derive fit"] = fit
    ctx["state"]["calibration decision"] = _policy(ctx).decide_derive_coefficients(
        log, _params(ctx["cfg"], "calibration"))
    ctx["state"]["calibration replay and fit:metrics"] = res.metrics
    sec = Section("Confidence calibration: shadow report, reliability, fitted derive coefficients",
                  "The last window's calibration report, as production prints it:",
                  preformatted=[res.report.to_ascii()])
    sec.tables.append(("Reliability of caller vs derived confidence", _metrics_frame(res.metrics)))
    sec.tables.append(("Derive coefficients by maximum likelihood of consumption", fit.summary_))
    sec.figures.append(("Reliability diagram", _save(reliability_diagram(res.reliability), ctx["out"],
                                                      "calibration_reliability")))
    return sec


def _anticipation(ctx):
    from thatchlab.anticipation import mine_sequential
    from thatchlab.logs import read_event_log, read_recall_stream
    from thatchlab.plots import confidence_modes_plot
    from thatchlab.replay import run_anticipation

    ev_path, rc_path = ctx["data"] / "events.jsonl", ctx["data"] / "recalls.jsonl"
    if not (ev_path.is_file() and rc_path.is_file()):
        return None
    events, recalls = read_event_log(ev_path), read_recall_stream(rc_path)
    params = _params(ctx["cfg"], "anticipation")
    res = run_anticipation(events, recalls, params)
    ctx["state"]["anticipation"] = res
    ctx["state"]["anticipation replay:metrics"] = res.metrics
    seed = mine_sequential(events, window=params.window, min_obs=params.min_obs, min_conf=params.min_conf,
                           mode="seed")
    frac = mine_sequential(events, window=params.window, min_obs=params.min_obs, min_conf=params.min_conf,
                           mode="fraction")
    sec = Section("Anticipation: mined patterns and prefetch savings",
                  f"{plural(len(events), 'event')} and {plural(len(recalls), 'recall')}; patterns re-mined daily at 06:30 UTC "
                  f"over the trailing {params.lookback}, prefetching k = {params.k} facts per session.")
    sec.tables.append(("Replay metrics", _metrics_frame(res.metrics)))
    sec.tables.append(("Recall round-trips, tokens and latency per session", res.roi()))
    sec.figures.append(("Sequential confidence: mnemo's production SQL (pair counts) vs true fractions",
                        _save(confidence_modes_plot(seed, frac), ctx["out"], "anticipation_modes")))
    return sec


def _export(ctx):
    from thatchlab.store import export_sqlite

    st = ctx["state"]
    kwargs, params = {}, {}
    for engine in ("prediction", "behavior"):
        res = st.get(engine)
        if res is not None:
            from thatchlab.replay.scoring import engine_class

            kwargs[engine] = engine_class(engine).from_tables(res.tables, embedder=ctx["embedder"],
                                                              params=res.params)
    if st.get("belief") is not None:
        kwargs["beliefs"] = st["belief"].state
    if st.get("calibration") is not None:
        kwargs["calibration"] = st["calibration"].state
    if st.get("anticipation") is not None:
        kwargs["patterns"] = st["anticipation"].patterns
    if not kwargs:
        return None, None
    decision = {}
    if "decision" in st and "prediction" in kwargs:
        decision["prediction"] = st["decision"]
    for key, name in (("beliefs", "belief decision"), ("calibration", "calibration decision")):
        if st.get(name) is not None and key in kwargs:
            decision[key] = st[name]
    decision = decision or None
    # configured engines: their values are what production runs (declared, never shipped)
    keys = {"prediction": "prediction", "behavior": "behavior", "belief": "beliefs", "calibration": "calibration",
            "anticipation": "patterns"}
    declared = {keys[e]: _params(ctx["cfg"], e) for e in _PARAMS
                if ctx["cfg"].get(e) and keys[e] in kwargs and not (decision and keys[e] in decision)}
    ends = [st[f"{e}:log"]["ts"].max() for e in ("prediction", "behavior")
            if st.get(f"{e}:log") is not None and len(st[f"{e}:log"])]
    res = export_sqlite(ctx["out"] / "thatch.db", params=params or None, decision=decision,
                        declared=declared or None, log_end=max(ends) if ends else None, overwrite=True, **kwargs)
    st["export"] = res
    return res.path, res.manifest_path


