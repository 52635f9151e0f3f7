"""Benchmark: does ``decide`` hold on fleet-shaped worlds? A statistics study, not a timing.

Worlds are planted here, outside the code under test, as sweep-shaped frames (production's
default and one changed configuration scored on ``interruption_rate``, a minimised rate), with
test sessions nested in users. Each user has a base rate (Beta around 0.4), sessions of
Poisson(15) + 1 messages, and its own effect of the change ``δ_u``; interruptions are binomial.
Validation always prefers the change, so ``decide`` tests it in every world.

- ``nested``: 8 users × 10 sessions, ``δ_u ~ N(0, 0.05)`` (a null change whose effect varies by
  user). ``decide`` clusters by user (the default when users exist) vs by session.
- ``unbalanced``: 10, 30 and 100 users, one user holding half the rows, ``δ_u ~ N(0, 0.05)``.
  Beside ``decide`` (CR2 over users, effective-cluster df) the same sums are tested with the
  textbook CR1 t with ``G − 1`` df (what decide did before): the rate it would have shipped.
- ``harm``: 30 users, 26 helped (``δ = −0.05``) and 4 hurt (``δ = +0.15``). ``decide`` by default
  (harm check on) vs ``allow_harm=True``. ``split_shown`` counts worlds whose per-user table shows
  the split: some user worse and some better by the sign of the point effect (its ``direction``
  column, counted in ``harm["by_sign"]``); ``split_flagged`` counts worlds where the *intervals*
  already flag a worsened user and a helped one (a user's interval over 8 sessions is wide, so a
  helped user's often includes 0); ``hurt_shown`` counts worlds where each of the four planted hurt
  users is ``"worse"`` in that column, and ``by_sign_worse`` is the mean number of users it calls
  worse (the four hurt ones plus helped users whose noisy point effect came out above 0).
- ``5 looks``: 20 users, ``δ_u ~ N(0, 0.03)``, decided at 2, 4, 6, 8 and 10 sessions per user;
  a world counts if some look ships. ``decide(sequential=True)`` vs a plain ``decide`` each time.

Nominal false-ship: ``α/2 = 2.5 %`` (target ≤ 3.5 %); harm worlds: ships ≤ 5 % by default.

    python benchmarks/bench_decide_fleets.py          # 400 worlds per cell (nested: 1,500)
    python benchmarks/bench_decide_fleets.py --ci     # 30 worlds per cell

Last line: ``RESULT bench=decide_fleets nested=<rate> by_session=<rate> unbalanced=<worst rate>
cr1=<worst rate> harm_ship=<rate> harm_allowed=<rate> split_shown=<rate> split_flagged=<rate>
hurt_shown=<rate> by_sign_worse=<mean> looks_sequential=<rate> looks_plain=<rate> worlds=<per cell>
ratio=<worst null rate / 0.025>``.
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _util  # noqa: E402,I001  (pins BLAS/OpenMP threads before numpy starts its pools)

import numpy as np
import pandas as pd

from thatchlab.core.params import ScoringParams
from thatchlab.decide import decide
from thatchlab.sweep.resampling import ClusterStats
from thatchlab.sweep import config_id
from thatchlab.decide._testing import t_quantile

METRIC, ALPHA = "interruption_rate", 0.05
CHANGED = ScoringParams(threshold=0.65)
FULL = {"reps": 400, "nested": 1500}  # the nested cell decides twice a world and is cheap: more worlds
CI = {"reps": 30, "nested": 30}
LOOKS = 5


def sessions(rng, users: int, sessions, effects, half: bool = False) -> dict:
    """Per-session counts of a fleet: interruptions under the default (``d``) and the change (``c``),
    messages (``n``), the session's position within its user (``i``), its label and user."""
    per_user = np.full(users, sessions) if np.isscalar(sessions) else np.asarray(sessions)
    if half:  # the first user holds as many sessions as all the others together
        per_user = per_user.copy()
        per_user[0] = per_user[1:].sum()
    base = rng.beta(8, 12, users)  # around 0.4
    out = {"d": [], "c": [], "n": [], "i": [], "label": [], "user": []}
    for u in range(users):
        m = rng.poisson(15, per_user[u]) + 1
        p0 = np.full(per_user[u], base[u])
        out["d"].append(rng.binomial(m, p0))
        out["c"].append(rng.binomial(m, np.clip(p0 + effects[u], 0.0, 1.0)))
        out["n"].append(m)
        out["i"].append(np.arange(per_user[u]))
        out["label"] += [f"u{u}-s{i}" for i in range(per_user[u])]
        out["user"] += [f"u{u}"] * per_user[u]
    return {k: (np.concatenate(v) if k in "dcni" else np.array(v, dtype=object)) for k, v in out.items()}


def frame_of(data: dict, keep=None) -> pd.DataFrame:
    """The two-configuration sweep frame of the sessions ``keep`` (a mask; all by default)."""
    keep = np.ones(len(data["n"]), dtype=bool) if keep is None else keep
    num_d, num_c, den = (data[k][keep].astype(np.float64) for k in ("d", "c", "n"))
    parts, table = {}, []
    for params, val, num in ((ScoringParams(), 0.45, num_d), (CHANGED, 0.40, num_c)):
        cid = config_id("prediction", params)
        parts[cid] = {(METRIC, "test"): (num, den), (METRIC, "val"): (num_d, den)}
        table.append({**params.to_dict(), "config_id": cid, "engine": "prediction", f"val_{METRIC}": val,
                      f"test_{METRIC}": float(num.sum() / den.sum())})
    frame = pd.DataFrame(table)
    labels = data["label"][keep]
    frame.attrs.update(engine="prediction", metric=METRIC, metrics=[METRIC], holdout="0.2",
                       clusters=ClusterStats.merge(parts, "session", {"test": labels, "val": labels}),
                       cluster_parents={"user": dict(zip(labels, data["user"][keep]))},
                       unidentified=[], identification={METRIC: []})
    return frame


def fleet(rng, users: int, n_sessions, effects, half: bool = False) -> pd.DataFrame:
    """A two-configuration sweep frame over ``users`` with the planted per-user ``effects``."""
    return frame_of(sessions(rng, users, n_sessions, effects, half))


def ships(frame, **kw) -> bool:
    d = decide(frame, METRIC, n_boot=50, **kw)
    return bool(d.shipped_parameters()), d


def cr1_ships(frame) -> bool:
    """The textbook CR1 t over users with G − 1 df on the same sums (the pre-CR2 rule)."""
    s = frame.attrs["clusters"].coarsen(frame.attrs["cluster_parents"]["user"], "user")
    (n0,), (d0,) = s.sums(METRIC, "test", [frame["config_id"].iloc[0]])
    (n1,), (d1,) = s.sums(METRIC, "test", [frame["config_id"].iloc[1]])
    m0, m1 = n0.sum() / d0.sum(), n1.sum() / d1.sum()
    e = (n1 - m1 * d1) / d1.sum() - (n0 - m0 * d0) / d0.sum()
    g = len(e)
    se = math.sqrt(g / (g - 1) * float(np.sum(e * e)))
    return (m1 - m0) + t_quantile(1 - ALPHA / 2, g - 1) * se < 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ci", action="store_true", help="run the small size CI uses (seconds)")
    ap.add_argument("--seed", type=int, default=20261205)
    args = ap.parse_args()
    _util.pin_threads()
    print(_util.describe_threads())
    size = CI if args.ci else FULL
    reps, nested_reps = size["reps"], size["nested"]
    rng = np.random.default_rng(args.seed)
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        counts = {"user": 0, "session": 0}
        for _ in range(nested_reps):
            frame = fleet(rng, 8, 10, rng.normal(0, 0.05, 8))
            counts["user"] += ships(frame)[0]
            counts["session"] += ships(frame, cluster="session")[0]
        rows.append({"world": "nested", "users": 8, "decide": counts["user"], "other": counts["session"],
                     "other_is": "cluster=session", "worlds": nested_reps})
        for users in (10, 30, 100):
            ours = cr1 = 0
            for _ in range(reps):
                frame = fleet(rng, users, 4, rng.normal(0, 0.05, users), half=True)
                ours += ships(frame)[0]
                cr1 += cr1_ships(frame)
            rows.append({"world": "unbalanced", "users": users, "decide": ours, "other": cr1,
                         "other_is": "CR1 t(G-1)"})
        effects = np.r_[np.full(26, -0.05), np.full(4, 0.15)]
        shipped = allowed = split = flagged = first = n_worse = 0
        hurt_users = {f"u{u}" for u in range(26, 30)}
        for _ in range(reps):
            frame = fleet(rng, 30, 8, effects)
            got, d = ships(frame)
            shipped += got
            allowed += ships(frame, allow_harm=True)[0]
            t, by_sign = d.per_user, d.harm["by_sign"]
            split += bool(by_sign["worse"] and by_sign["better"])
            flagged += bool(t["worse"].any() and t["better"].any())
            first += bool((t.loc[t["user"].isin(hurt_users), "direction"] == "worse").all())
            n_worse += by_sign["worse"]
        rows.append({"world": "harm", "users": 30, "decide": shipped, "other": allowed,
                     "other_is": "allow_harm=True", "split_shown": split, "split_flagged": flagged,
                     "hurt_shown": first, "by_sign_worse": n_worse / reps})
        seq = plain = 0
        for _ in range(reps):  # five looks as the log grows: 2, 4, ... 10 sessions per user
            data = sessions(rng, 20, 10, rng.normal(0, 0.03, 20))
            frames = [frame_of(data, data["i"] < 2 * k) for k in range(1, LOOKS + 1)]
            plain += any(ships(f)[0] for f in frames)
            seq += any(ships(f, sequential=True)[0] for f in frames)
        rows.append({"world": f"{LOOKS} looks", "users": 20, "decide": seq, "other": plain,
                     "other_is": "plain decide at each look"})
    table = pd.DataFrame(rows)
    table["worlds"] = table["worlds"].fillna(reps).astype(int) if "worlds" in table else reps
    table["decide_rate"] = table["decide"] / table["worlds"]
    table["other_rate"] = table["other"] / table["worlds"]
    with pd.option_context("display.width", 200):
        print(table.to_string(index=False))
    null = table[~table["world"].isin(["harm", f"{LOOKS} looks"])]
    looks = table[table["world"] == f"{LOOKS} looks"].iloc[0]
    unb = table[table["world"] == "unbalanced"]
    harm = table[table["world"] == "harm"].iloc[0]
    worst = float(null["decide_rate"].max())
    print(f"RESULT bench=decide_fleets nested={table['decide_rate'].iloc[0]:.4f} "
          f"by_session={table['other_rate'].iloc[0]:.4f} unbalanced={unb['decide_rate'].max():.4f} "
          f"cr1={unb['other_rate'].max():.4f} harm_ship={harm['decide_rate']:.4f} "
          f"harm_allowed={harm['other_rate']:.4f} split_shown={harm['split_shown'] / reps:.4f} "
          f"split_flagged={harm['split_flagged'] / reps:.4f} hurt_shown={harm['hurt_shown'] / reps:.4f} "
          f"by_sign_worse={harm['by_sign_worse']:.2f} "
          f"looks_sequential={looks['decide_rate']:.4f} looks_plain={looks['other_rate']:.4f} "
          f"worlds={reps} ratio={max(worst, looks['decide_rate']) / (ALPHA / 2):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
