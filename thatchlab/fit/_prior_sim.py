"""Coverage of PriorFitter's intervals with soft signals, by simulation (private).

A generator independent of the fitter plants a Beta(K·P0, K·(1−P0)) confirm
probability per item and writes an interleaved signal log; :func:`coverage`
fits it under each ``soft`` treatment and counts how often the 95 % profile
intervals hold the planted K and P0. Two meanings of a soft signal:

- ``"refusal"`` (what :class:`~thatchlab.synth.PreferenceWorld` writes): a
  signal is a confirm with the item's probability ``p``, else a refusal, and
  a refusal is voiced softly with probability ``soft_share``;
- ``"noise"``: a signal is soft with probability ``soft_share`` whatever
  ``p`` is, else a confirm with probability ``p`` or a disconfirm.

The figures in :class:`~thatchlab.fit.PriorFitter`'s docstring come from
``python -m thatchlab.fit._prior_sim`` (about four minutes).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["coverage", "soft_log"]

_MEANINGS = ("refusal", "noise")


def soft_log(rng: np.random.Generator, k: float, p0: float, n_items: int = 150, soft_share: float = 0.25,
             meaning: str = "refusal", n_range: tuple[int, int] = (2, 14)) -> pd.DataFrame:
    """A signal log (``item_id``, ``signal``) of items with planted Beta(K·P0, K·(1−P0)) confirm rates.

    Each item gets ``n ~ Uniform{n_range[0], …, n_range[1] − 1}`` signals;
    items interleave in the log. ``meaning`` says how a soft signal arises
    (see the module docstring).

    >>> log = soft_log(np.random.default_rng(0), 6.0, 0.7, n_items=5)
    >>> sorted(set(log["signal"])) <= ["confirm", "disconfirm", "soft"], log["item_id"].nunique()
    (True, 5)
    """
    if meaning not in _MEANINGS:
        raise ValueError(f"meaning: expected one of {list(_MEANINGS)}, got {meaning!r}")
    p = rng.beta(k * p0, k * (1.0 - p0), size=n_items)
    n = rng.integers(n_range[0], n_range[1], size=n_items)
    item = np.repeat(np.arange(n_items), n)
    rng.shuffle(item)
    yes = rng.random(item.size) < p[item]
    soft = rng.random(item.size) < soft_share
    if meaning == "refusal":
        sig = np.where(yes, "confirm", np.where(soft, "soft", "disconfirm"))
    else:
        sig = np.where(soft, "soft", np.where(yes, "confirm", "disconfirm"))
    return pd.DataFrame({"item_id": item, "signal": sig})


#: (soft, objective) pairs :func:`coverage` reports.
OPTIONS = (("refusal", "auto"), ("fractional", "prequential"), ("fractional", "marginal"), ("exclude", "auto"))


def coverage(reps: int = 200, k: float = 6.0, p0: float = 0.7, n_items: int = 150, soft_share: float = 0.25,
             meaning: str = "refusal", seed: int = 0, options=OPTIONS, alpha: float = 0.05) -> pd.DataFrame:
    """Per option: ``reps``, interval hits of K and P0, coverage, mean bias of P0 and median K.

    Every option fits the same ``reps`` logs. Returns one row per
    ``(soft, objective)`` with columns ``reps``, ``hits_k``, ``hits_p0``,
    ``cover_k``, ``cover_p0``, ``bias_p0`` (mean ``p0_ − P0``), ``median_k``
    and ``boundary`` (fits at K = ∞ or 0).
    """
    from thatchlab.fit.prior import PriorFitter

    rng = np.random.default_rng(seed)
    logs = [soft_log(rng, k, p0, n_items, soft_share, meaning) for _ in range(int(reps))]
    rows = []
    for soft, objective in options:
        hk = hp = nb = 0
        p_hat, k_hat = [], []
        for log in logs:
            f = PriorFitter(soft=soft, objective=objective, alpha=alpha).fit(log)
            s = f.summary_
            hk += bool(s.loc["k", "ci_lower"] <= k <= s.loc["k", "ci_upper"])
            hp += bool(s.loc["p0", "ci_lower"] <= p0 <= s.loc["p0", "ci_upper"])
            nb += bool(f.boundary_)
            p_hat.append(f.p0_)
            k_hat.append(f.k_)
        rows.append({"soft": soft, "objective": objective, "reps": int(reps), "hits_k": hk, "hits_p0": hp,
                     "cover_k": hk / reps, "cover_p0": hp / reps, "bias_p0": float(np.mean(p_hat)) - p0,
                     "median_k": float(np.median(k_hat)), "boundary": nb})
    return pd.DataFrame(rows)


def _preference_world_coverage(reps: int = 100, k: float = 6.0, p0: float = 0.7, soft_share: float = 0.25,
                               n_sessions: int = 3000, options=OPTIONS) -> pd.DataFrame:
    """The same study on :class:`PreferenceWorld` logs replayed through the prediction engine (slow)."""
    from thatchlab import replay
    from thatchlab.fit.prior import PriorFitter
    from thatchlab.synth import PreferenceWorld

    signals = []
    for seed in range(int(reps)):
        w = PreferenceWorld(n_users=10, n_situations=20, phrasings_per_situation=2, noise=0.0, seed=seed,
                            prior=(k, p0))
        res = replay.run(w.log(n_sessions, soft_share=soft_share), "prediction", embedder=w.lookup_embedder())
        signals.append(res.prior_signals())
    rows = []
    for soft, objective in options:
        fits = [PriorFitter(soft=soft, objective=objective).fit(s) for s in signals]
        hk = sum(bool(f.summary_.loc["k", "ci_lower"] <= k <= f.summary_.loc["k", "ci_upper"]) for f in fits)
        hp = sum(bool(f.summary_.loc["p0", "ci_lower"] <= p0 <= f.summary_.loc["p0", "ci_upper"]) for f in fits)
        rows.append({"soft": soft, "objective": objective, "reps": int(reps), "hits_k": hk, "hits_p0": hp,
                     "cover_k": hk / reps, "cover_p0": hp / reps,
                     "bias_p0": float(np.mean([f.p0_ for f in fits])) - p0,
                     "median_k": float(np.median([f.k_ for f in fits])),
                     "boundary": sum(bool(f.boundary_) for f in fits)})
    return pd.DataFrame(rows)


def main() -> None:  # pragma: no cover - the study behind the docstring's figures
    import os

    os.environ.setdefault("TQDM_DISABLE", "1")
    pd.set_option("display.width", 160)
    for meaning in _MEANINGS:
        print(f"independent generator, softs as {meaning!r}, K=6, P0=0.7, 150 items, 25 % soft")
        print(coverage(200, meaning=meaning).round(3).to_string(index=False))
    print("PreferenceWorld(prior=(6, 0.7), noise=0) + replay, 3000 sessions, soft_share=0.25")
    print(_preference_world_coverage(100).round(3).to_string(index=False))


if __name__ == "__main__":  # pragma: no cover
    main()
