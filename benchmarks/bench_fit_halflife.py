"""Benchmark: per-class half-lives by HalfLifeFitter against lifelines' ExponentialFitter.

Right-censored exposure segments (random unit-free data, no model) are drawn
for eight belief classes, each with its own planted half-life (days) and a
censoring time per segment. Two fits in the same run:

* **ours**: one ``HalfLifeFitter().fit(durations, events, groups=classes)``
  (closed-form rate per class, exact Poisson intervals, log-likelihoods);
* **peer**: lifelines' ``ExponentialFitter`` fitted on each class's
  segments (what a survival-analysis user would run), half-life
  ``λ · ln 2`` from its scale ``λ``.

The half-lives must agree to 1e-5 relative (lifelines maximises numerically)
or the script exits non-zero. Times are the best of ``--repeat`` runs.

    python benchmarks/bench_fit_halflife.py          # 8 classes x 100,000 segments
    python benchmarks/bench_fit_halflife.py --ci     # 8 classes x 2,000 segments

Last line: ``RESULT bench=fit_halflife classes=8 segments=<n> ratio=<lifelines_s / ours_s>``.
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from pathlib import Path

import numpy as np
from lifelines import ExponentialFitter

from thatchlab.tune import HalfLifeFitter

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import timed  # noqa: E402

HALF_LIVES = {"identity": 900.0, "relationship": 400.0, "preference": 180.0, "state": 30.0, "plan": 30.0,
              "episodic": 7.0, "meta_residue": 1.0, "meta_standing": 365.0}


def make_segments(per_class: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    names = list(HALF_LIVES)
    groups = np.repeat(np.array(names, dtype=object), per_class)
    hl = np.repeat([HALF_LIVES[n] for n in names], per_class)
    life = rng.exponential(hl / math.log(2.0))
    censor = rng.uniform(0.0, 2.0, groups.size) * hl
    return np.minimum(life, censor), life <= censor, groups


def ours(t, e, g):
    return HalfLifeFitter().fit(t, e, groups=g).half_life_


def peer(t, e, g):
    out = {}
    for name in sorted(set(g)):
        sel = g == name
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            f = ExponentialFitter().fit(t[sel], e[sel])
        out[name] = float(f.lambda_) * math.log(2.0)
    return out




def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ci", action="store_true", help="small size for CI")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    per_class = 2_000 if args.ci else 100_000
    t, e, g = make_segments(per_class)
    print(f"classes={len(HALF_LIVES)} segments={t.size:,} events={int(e.sum()):,}")
    ours_s, got = timed(lambda: ours(t, e, g), repeat=args.repeat)
    peer_s, ref = timed(lambda: peer(t, e, g), repeat=args.repeat)
    worst = max(abs(got[k] - ref[k]) / ref[k] for k in ref)
    for k in sorted(ref):
        print(f"  {k:<14} planted {HALF_LIVES[k]:>6.1f}  ours {got[k]:>10.4f}  lifelines {ref[k]:>10.4f}")
    if set(got.index) != set(ref) or not worst <= 1e-5:
        print(f"MISMATCH: half-lives differ by {worst:.2e} relative", file=sys.stderr)
        return 1
    print(f"half-lives equal (largest relative difference {worst:.1e}); "
          f"HalfLifeFitter {ours_s:.4f} s, lifelines ExponentialFitter per class {peer_s:.4f} s")
    print(f"RESULT bench=fit_halflife classes={len(HALF_LIVES)} segments={t.size} ratio={peer_s / ours_s:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
