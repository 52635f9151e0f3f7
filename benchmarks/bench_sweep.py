"""Benchmark: a 1,000-configuration sweep against one single-configuration replay.

A random interaction log (messages near one of many situations, random unit
vectors served by a ``LookupEmbedder``, so no model) is swept over K, P0 and
the soft weight with a 20 % holdout: one plan (writes replayed once, every
text embedded once, one cosine matrix), then every configuration scored by
broadcasting the count histories. The baseline, measured in the same run, is
one ``replay.run`` of the same log under a single configuration. On a sample
of configurations the broadcast forecasts must equal ``plan.run``'s stored
confidences bit for bit, and the validation and test scores must equal
``prequential_scores`` of that replay (soft rows at the metric's fixed weight) to 1e-12 relative (the same sums in
another order); exit 1 otherwise.

    python benchmarks/bench_sweep.py          # 50,000 events, 1,000 configurations
    python benchmarks/bench_sweep.py --ci     # 3,000 events, 1,000 configurations

Fair clocks: BLAS/OpenMP threads are pinned to the same count for both sides
(``benchmarks/_util.py``, printed); both the single replay and the sweep
start from the same in-memory log and embedder, are run once untimed to
warm caches and imports, then timed best of ``--repeat`` (the same N).

Last line: ``RESULT bench=sweep configs=<n> ratio=<sweep_s / single_s> arrow_ratio=<sweep_s / the same sweep
 of the log Arrow-backed (string[pyarrow] text, Arrow timestamps)>``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _util  # noqa: E402,I001  (pins threads before numpy starts its pools)

import numpy as np
import pandas as pd

from thatchlab.core.params import ScoringParams
from thatchlab.embed import LookupEmbedder
from thatchlab.metrics.scoring import METRIC_SOFT_WEIGHT, prequential_scores
from thatchlab.replay.scoring import prepare, run
from thatchlab.sweep import sweep
from thatchlab.sweep._scoring_engines import forecast_matrix


def make_log(n_events: int, n_situations: int = 200, dim: int = 64, seed: int = 0):
    """Messages near a situation's matcher; 40 % followed by a confirm/disconfirm/soft update."""
    rng = np.random.default_rng(seed)
    sit = rng.standard_normal((n_situations, dim))
    sit /= np.linalg.norm(sit, axis=1, keepdims=True)
    vectors = {f"when situation {i} comes up": sit[i] for i in range(n_situations)}
    for i in range(n_situations):
        for j in range(3):
            vectors[f"prefer option {j} for situation {i}"] = rng.standard_normal(dim)
    n_msg = int(np.ceil(n_events / 1.4))
    which = rng.integers(0, n_situations, n_msg)
    noise = rng.standard_normal((n_msg, dim)) * (0.9 / np.sqrt(dim))
    follow = rng.random(n_msg) < 0.4
    option = rng.choice(3, size=n_msg, p=[0.7, 0.2, 0.1])
    u = rng.random(n_msg)
    signal = np.where(u < 0.7, "confirm", np.where(u < 0.85, "disconfirm", "soft"))
    rows = []
    t0 = pd.Timestamp("2026-01-01T00:00:00Z")
    for m in range(n_msg):
        if len(rows) >= n_events:
            break
        i = int(which[m])
        text = f"prompt number {m} on topic {i}"
        vectors[text] = sit[i] + noise[m]
        ts = t0 + pd.Timedelta(seconds=60 * m)
        rows.append((ts, f"s{m}", "message", text, None, None, None))
        if follow[m] and len(rows) < n_events:
            rows.append((ts + pd.Timedelta(seconds=20), f"s{m}", "prediction_update", None,
                         f"when situation {i} comes up", f"prefer option {int(option[m])} for situation {i}",
                         str(signal[m])))
    log = pd.DataFrame(rows, columns=["ts", "session", "kind", "text", "matcher", "statement", "signal"])
    emb = LookupEmbedder({k: np.asarray(v, dtype=np.float32) for k, v in vectors.items()}, name="random-64")
    return log, emb


def main(argv=None) -> int:
    args = _util.parse(__doc__.splitlines()[0])
    _util.pin_threads()
    print(_util.describe_threads())
    repeat = args.repeat or 2
    n_events = 3_000 if args.ci else 50_000
    space = {"k": list(np.geomspace(0.5, 50.0, 10)), "p0": list(np.linspace(0.2, 0.8, 10)),
             "soft_weight": list(np.linspace(0.0, 1.0, 10))}
    n_configs = int(np.prod([len(v) for v in space.values()]))
    log, emb = make_log(n_events)
    print(f"events={len(log)} messages={int((log['kind'] == 'message').sum())} "
          f"updates={int((log['kind'] == 'prediction_update').sum())} configs={n_configs}")

    single_s, single = _util.best_of(run, log, "prediction", ScoringParams(), embedder=emb, repeat=repeat)
    print(f"single replay: {single_s:.3f} s, best of {repeat} after 1 warm-up "
          f"(log_loss={single.metrics['log_loss']:.6f})")

    sweep_s, res = _util.best_of(sweep, log, space, "log_loss", embedder=emb, holdout=0.2, repeat=repeat)
    print(f"best of {repeat} after 1 warm-up; "f"sweep: {sweep_s:.3f} s for {len(res)} configurations "
          f"({1000 * sweep_s / len(res):.2f} ms per configuration)")
    arrow_s = _util.arrow_run(sweep, log, res, space, "log_loss", embedder=emb, holdout=0.2, repeat=repeat)
    if arrow_s is None:
        return 1
    print(f"the same sweep on the Arrow-backed log: {arrow_s:.3f} s, identical (arrow_ratio "
          f"{sweep_s / arrow_s:.3f}, target >= 0.8)")

    # identical to one replay per configuration, on a sample
    plan = prepare(log, "prediction", embedder=emb)
    n = len(log)
    a, b = int(np.floor(0.6 * n)), int(np.floor(0.8 * n))
    rng = np.random.default_rng(1)
    sample = [int(i) for i in rng.choice(len(res), size=5, replace=False)]
    configs = [ScoringParams(k=res["k"].iloc[i], p0=res["p0"].iloc[i], soft_weight=res["soft_weight"].iloc[i])
               for i in sample]
    fpos, _, _, F = forecast_matrix(plan, configs)
    for j, (i, p) in enumerate(zip(sample, configs)):
        row = res.iloc[i]
        ev = plan.run(p, metrics=False).events
        # the broadcast forecasts are bit for bit the replay's stored confidences
        if not np.array_equal(ev.set_index("position").loc[fpos, "forecast"].to_numpy(), F[:, j]):
            print(f"MISMATCH config {i}: broadcast forecasts differ from the replay's")
            return 1
        pos = ev["position"]
        for seg, mask in (("val", (pos >= a) & (pos < b)), ("test", pos >= b)):
            ref = prequential_scores(ev[mask], METRIC_SOFT_WEIGHT)  # one metric for every configuration
            if row[f"{seg}_n_forecasts"] != ref["n_forecasts"]:
                print(f"MISMATCH config {i} {seg}_n_forecasts")
                return 1
            for m in ("log_loss", "brier", "ece"):  # the same sums, in another order
                if not np.isclose(row[f"{seg}_{m}"], ref[m], rtol=1e-12, atol=1e-15):
                    print(f"MISMATCH config {i} {seg}_{m}: sweep {row[f'{seg}_{m}']!r} vs replay {ref[m]!r}")
                    return 1
    print("forecasts bit-identical and scores equal (rtol 1e-12) on 5 sampled configurations")
    print(_util.result("sweep", configs=len(res), events=len(log), single_s=single_s, sweep_s=sweep_s,
                       ratio=sweep_s / single_s, arrow_ratio=sweep_s / arrow_s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
