"""Benchmark: a 1,000-configuration regime sweep against one single-configuration replay.

The random interaction log of ``bench_sweep`` (messages near one of many
situations, random unit vectors served by a ``LookupEmbedder``, so no
model), swept over the threshold, the strong bar (confidence, evidence) and
the conflict margin with a 20 % holdout, scored on ``interruption_rate`` and
``wrong_silent_follow_rate``. The sweep builds one plan (writes replayed
once, every text embedded once, one cosine matrix), then one candidate table
at the lowest threshold: each threshold redoes the item selection on it and
every strong bar and margin is a column. The baseline, measured in the same
run, is one ``replay.run`` of the same log under a single configuration;
both sides are warmed first on a small log (scikit-learn, pyarrow and every
lazy import loaded). On a sample of configurations the sweep's rates and
message counts must equal those of ``plan.run`` with ``regime_outcomes``
exactly; exit 1 otherwise. Also prints the process's peak RSS and the
memory of the per-session sums (``attrs["clusters"]``). The same sweep also
runs on the log Arrow-backed (``string[pyarrow]`` text, Arrow timestamps, as
``read_parquet(dtype_backend="pyarrow")`` gives it) and must give the same table;
``arrow_ratio`` is the sweep's time over that run's.

    python benchmarks/bench_sweep_regime.py          # 50,000 messages, 1,000 configurations
    python benchmarks/bench_sweep_regime.py --ci     # 2,000 messages, 1,000 configurations

Fair clocks: threads pinned the same for both sides (``_util``, printed);
both sides warmed on the same small log, then timed best of ``--repeat``
(the same N, default 2) from the same in-memory log and embedder.

Last line: ``RESULT bench=sweep_regime configs=<n> ratio=<sweep_s / single_s> arrow_ratio=<sweep_s / the same
sweep of the log Arrow-backed; target >= 0.8>``.
"""

from __future__ import annotations

import resource
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _util  # noqa: E402,I001  (pins threads before numpy starts its pools)

import numpy as np
from bench_sweep import make_log

from thatchlab.core.params import ScoringParams
from thatchlab.metrics.scoring import regime_outcomes, regime_rates
from thatchlab.replay.scoring import prepare, run
from thatchlab.sweep import sweep

SPACE = {"threshold": [round(float(t), 3) for t in np.linspace(0.3, 0.75, 10)],
         "strong_confidence": [0.5, 0.6, 0.7, 0.8, 0.9], "strong_evidence": [0, 1, 3, 5],
         "conflict_margin": [0.0, 0.02, 0.05, 0.1, 0.2]}
METRICS = ["interruption_rate", "wrong_silent_follow_rate"]


def _sweep(log, emb, space=SPACE):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a blind parameter on a small log is no error
        return sweep(log, space, METRICS, embedder=emb, holdout=0.2)


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def main(argv=None) -> int:
    args = _util.parse(__doc__.splitlines()[0])
    _util.pin_threads()
    print(_util.describe_threads())
    repeat = args.repeat or 2
    n_messages = 2_000 if args.ci else 50_000
    n_configs = int(np.prod([len(v) for v in SPACE.values()]))
    log, emb = make_log(int(n_messages * 1.4) + 1)
    print(f"events={len(log)} messages={int((log['kind'] == 'message').sum())} "
          f"updates={int((log['kind'] == 'prediction_update').sum())} configs={n_configs}")

    # warm both sides: every lazy import (scikit-learn's bins, pyarrow's round trip, the plan)
    small, small_emb = make_log(300, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the random log's silence diagnostics
        run(small, "prediction", ScoringParams(), embedder=small_emb)
    _sweep(small, small_emb, {"threshold": [0.5, 0.6], "strong_confidence": [0.6, 0.7]})

    def _single():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return run(log, "prediction", ScoringParams(), embedder=emb)

    single_s, single = _util.best_of(_single, repeat=repeat, warmup=0)
    print(f"single replay: {single_s:.3f} s, best of {repeat} "
          f"(interruption_rate={single.metrics['interruption_rate']:.6f})")

    sweep_s, res = _util.best_of(_sweep, log, emb, repeat=repeat, warmup=0)
    print(f"sweep: {sweep_s:.3f} s for {len(res)} configurations "
          f"({1000 * sweep_s / len(res):.2f} ms per configuration)")
    arrow_s = _util.arrow_run(_sweep, log, res, emb, repeat=repeat, warmup=0)
    if arrow_s is None:
        return 1
    print(f"the same sweep on the Arrow-backed log: {arrow_s:.3f} s, identical (arrow_ratio "
          f"{sweep_s / arrow_s:.3f}, target >= 0.8)")
    stats = res.attrs["clusters"]
    sessions = {s: len(v) for s, v in stats.labels.items()}
    print(f"per-session sums: {stats.nbytes() / 2**20:.1f} MiB for {len(stats.config_ids)} configurations, "
          f"sessions per segment {sessions}")
    print(f"peak RSS: {_peak_rss_mb():.0f} MiB")

    # the same counts and rates as one replay per configuration, on a sample
    plan = prepare(log, "prediction", embedder=emb)
    n = len(log)
    a, b = int(np.floor(0.6 * n)), int(np.floor(0.8 * n))
    rng = np.random.default_rng(1)
    for i in sorted(int(i) for i in rng.choice(len(res), size=5, replace=False)):
        row = res.iloc[i]
        p = ScoringParams(**{f: row[f].item() if hasattr(row[f], "item") else row[f] for f in SPACE})
        r = plan.run(p, metrics=False)
        oc = regime_outcomes(r.events, r.nudges)
        for seg, inside in (("val", (oc["position"] >= a) & (oc["position"] < b)), ("test", oc["position"] >= b)):
            ref = regime_rates(oc[inside])
            for m in (*METRICS, "coverage", "n_messages"):
                got, want = row[f"{seg}_{m}"], ref[m]
                if not (got == want or (np.isnan(got) and np.isnan(want))):
                    print(f"MISMATCH config {i} {seg}_{m}: sweep {got!r} vs replay {want!r}")
                    return 1
    print("rates and message counts equal to plan.run on 5 sampled configurations")
    print(_util.result("sweep_regime", configs=len(res), single_s=single_s, sweep_s=sweep_s,
                       ratio=sweep_s / single_s, arrow_ratio=sweep_s / arrow_s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
