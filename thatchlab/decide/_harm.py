"""Who a change hurts: each user's paired effect and the harm check of :func:`~thatchlab.decide.decide`.

A change can improve the pooled metric while hurting a minority badly (26 users helped a little,
4 hurt a lot). When a sweep's log names users (``attrs["cluster_parents"]["user"]``: sessions
nested in users), each user's effect is the paired difference of the two configurations over
that user's own test sessions, with the same CR2 t interval as the pooled one
(:func:`~thatchlab.decide._testing.paired_difference`). A user is *hurt* when the interval lies on
the worsening side beyond ``margin`` (its better-side bound worsens the metric by more than the
margin). The screen is per user and deliberately unadjusted for the number of users: it errs
toward not shipping, and the table says how many users it looked at.

A user's interval is wide (a few sessions each), so most users' intervals include 0 even when the
change moves them. The table therefore shows two classifications side by side: ``direction``, the
sign of the user's point effect (``"worse"``, ``"better"``, ``"no change"``; ``"unknown"`` without
an effect), which shows how the users split however noisy each one is, and the interval flags
``worse`` / ``better`` / ``hurt``, which are what the harm *decision* uses. The summary counts users
both ways.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from thatchlab.decide._testing import interval_at, paired_difference

__all__ = ["PER_USER_COLUMNS", "per_user_effects", "harm_summary"]

#: Columns of :attr:`Decision.per_user`, worst user first.
PER_USER_COLUMNS = ("user", "sessions", "rows", "delta", "ci_lower", "ci_upper", "worsening",
                    "direction", "worse", "better", "hurt")


def per_user_effects(stats, parents: dict, metric: str, ref: str, cid: str, alpha: float, lower: bool,
                     margin: float = 0.0, segment: str = "test") -> pd.DataFrame:
    """Each user's test effect of configuration ``cid`` against ``ref`` (columns
    :data:`PER_USER_COLUMNS`, the most worsened user first).

    ``stats`` are the session-level sums, ``parents`` ``{session: user}``. ``delta`` is
    ``m(cid) − m(ref)`` over the user's sessions with its ``1 − α`` interval (NaN with fewer than
    two sessions holding data); ``worsening`` is the delta signed so that positive is worse;
    ``direction`` classifies the user by the sign of ``worsening`` alone (``"worse"``,
    ``"better"``, ``"no change"`` at exactly 0, ``"unknown"`` when NaN); ``worse`` says the
    interval lies on the worsening side of 0, ``better`` on the improving side, and ``hurt``
    beyond ``margin`` on the worsening side.

    >>> from thatchlab.sweep.resampling import ClusterStats
    >>> sums = {"a": {("m", "test"): (np.array([4.0, 4.0, 2.0, 2.0]), np.full(4, 10.0))},
    ...         "b": {("m", "test"): (np.array([5.0, 5.1, 1.0, 1.1]), np.full(4, 10.0))}}
    >>> s = ClusterStats.merge(sums, "session", {"test": np.array(["s1", "s2", "s3", "s4"])})
    >>> t = per_user_effects(s, {"s1": "u1", "s2": "u1", "s3": "u2", "s4": "u2"}, "m", "a", "b", 0.05, True)
    >>> t[["user", "direction", "worse", "better", "hurt"]].values.tolist()
    [['u1', 'worse', True, False, True], ['u2', 'better', False, True, False]]
    """
    labels = np.asarray(stats.labels[segment], dtype=object)
    users = np.array([parents[x] for x in labels], dtype=object)
    (num_r,), (den_r,) = stats.sums(metric, segment, [ref])
    (num_c,), (den_c,) = stats.sums(metric, segment, [cid])
    sign = 1.0 if lower else -1.0  # worsening = sign · delta for a minimised metric
    rows = []
    for user in pd.unique(users):
        idx = np.flatnonzero(users == user)
        r = paired_difference(num_r[idx], den_r[idx], num_c[idx], den_c[idx], None, alpha)
        lo, hi = interval_at(r, alpha)
        best_side = lo if lower else -hi  # the bound nearest "better", as a worsening
        worst_side = hi if lower else -lo  # the bound nearest "worse", as a worsening
        worsening = sign * r["delta"]
        rows.append({"user": user, "sessions": int(r["n_clusters"]), "rows": float(den_r[idx].sum()),
                     "delta": r["delta"], "ci_lower": lo, "ci_upper": hi, "worsening": worsening,
                     "direction": _direction(worsening),
                     "worse": bool(math.isfinite(best_side) and best_side > 0),
                     "better": bool(math.isfinite(worst_side) and worst_side < 0),
                     "hurt": bool(math.isfinite(best_side) and best_side > margin)})
    table = pd.DataFrame(rows, columns=list(PER_USER_COLUMNS))
    return table.sort_values("worsening", ascending=False, kind="stable").reset_index(drop=True)


def _direction(worsening: float) -> str:
    if not math.isfinite(worsening):
        return "unknown"
    return "worse" if worsening > 0 else ("better" if worsening < 0 else "no change")


def harm_summary(table: pd.DataFrame, margin: float, allowed: bool) -> dict:
    """The harm check of one comparison: users looked at, the share whose interval is on the
    worsening side, the worst decile's mean worsening, the users counted by the sign of their
    point effect (``by_sign``) and by their interval (``by_interval``: ``worse``, ``better`` or
    ``unclear`` when it includes 0), the same counts in words (``split``), the hurt users and
    whether the check holds (no user hurt, or ``allowed``). Only the intervals decide.

    >>> t = pd.DataFrame({"user": ["a", "b", "c"], "worsening": [0.2, 0.01, -0.1],
    ...                   "direction": ["worse", "worse", "better"], "worse": [True, False, False],
    ...                   "better": [False, False, True], "hurt": [True, False, False]})
    >>> s = harm_summary(t, 0.0, False)
    >>> s["by_sign"], s["by_interval"], s["holds"]
    ({'worse': 2, 'better': 1, 'no change': 0}, {'worse': 1, 'better': 1, 'unclear': 1}, False)
    >>> s["split"]
    'by point effect 2 worse, 1 better; by interval 1 worse, 1 better, 1 unclear'
    """
    n = len(table)
    decile = table["worsening"].head(max(1, math.ceil(n / 10))) if n else table["worsening"]
    hurt = table.loc[table["hurt"], "user"].tolist()
    direction = table["direction"].value_counts()
    by_sign = {k: int(direction.get(k, 0)) for k in ("worse", "better", "no change")}
    if direction.get("unknown", 0):
        by_sign["unknown"] = int(direction["unknown"])
    worse, better = int(table["worse"].sum()), int(table["better"].sum())
    by_interval = {"worse": worse, "better": better, "unclear": n - worse - better}
    sign_words = ", ".join(f"{v} {k}" for k, v in by_sign.items() if v or k != "no change")
    split = (f"by point effect {sign_words}; by interval {worse} worse, {better} better, "
             f"{by_interval['unclear']} unclear")
    return {"users": n, "share_worse": float(table["worse"].mean()) if n else float("nan"),
            "worst_decile": float(decile.mean()) if n else float("nan"), "by_sign": by_sign,
            "by_interval": by_interval, "split": split, "margin": float(margin),
            "hurt": hurt, "allowed": bool(allowed), "holds": bool(allowed or not hurt)}
