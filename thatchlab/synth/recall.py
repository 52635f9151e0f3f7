"""A synthetic ai-memory recall world with planted consumption odds.

Memories carry the derive signals (age via ``created_at``, atom derivation,
corroboration); the true probability that a recalled memory is consumed is the
derive formula under *planted* coefficients, so a fitter that reads only the
recall log should recover them. Callers state an over-confident value loosely
related to the truth, as real callers do.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.calibration import derive, recall_score
from thatchlab.core.params.calibration import CalibrationParams
from thatchlab.logs.recall import RECALL_COLUMNS
from thatchlab.replay.calibration import recall_ledger

__all__ = ["RecallWorld", "PLANTED"]

#: Default planted truth: deliberately away from the hand-set 0.5 / 0.1 / 0.05 / 0.02 / 30 days.
PLANTED = CalibrationParams(intercept=0.6, atom_bump=0.2, corroboration_weight=0.15,
                            age_penalty=0.05, half_life_days=20.0, baseline=0.5)
_DAY_NS = 86_400 * 10**9


class RecallWorld:
    """Memories, a recall stream and a consumption ledger with a known truth.

    Parameters
    ----------
    n_memories, n_recalls : sizes (``n_recalls`` rows = touches, ``per_recall`` per recall id).
    days : length of the simulated period.
    planted : :class:`CalibrationParams` whose derive coefficients, half-life and
        baseline give the true consumption probability of each touch.
    per_recall : memories returned per recall (ranked by ``text + confidence × 2``).
    namespaces : the memories' namespaces.
    sources : the memories' sources.
    start : aware start time.
    seed : seed of the world's generator.

    Attributes
    ----------
    memories : ``memory_id, namespace, source, created_at, is_atom, corroboration, caller_confidence``.
    log : the recall log (``logs.recall`` columns), time-ordered.
    truth : per log row, the planted consumption probability.
    ledger : the ``recall_observations`` ledger (judged touches).

    Examples
    --------
    >>> w = RecallWorld(n_memories=50, n_recalls=300, seed=3)
    >>> len(w.log), sorted(w.log["namespace"].unique())[:2]
    (300, ['ops', 'personal'])
    """

    def __init__(self, n_memories=400, n_recalls=6000, days=120.0, planted: CalibrationParams = PLANTED,
                 per_recall=3, namespaces=("work", "personal", "ops"),
                 sources=("user", "assistant", "api"), start="2026-01-01T00:00:00Z", seed=0):
        self.n_memories, self.n_recalls, self.days = int(n_memories), int(n_recalls), float(days)
        self.planted, self.per_recall, self.seed = planted, int(per_recall), seed
        self.namespaces, self.sources = tuple(namespaces), tuple(sources)
        self.start = pd.Timestamp(start)
        rng = np.random.default_rng(seed)
        self.memories = self._memories(rng)
        self.log, self.truth = self._recalls(rng)
        self.ledger = recall_ledger(self.log)

    def _memories(self, rng) -> pd.DataFrame:
        n = self.n_memories
        # created over the first 80% of the period, whole seconds
        created = np.sort(rng.uniform(0, 0.8 * self.days * 86_400, n)).round()
        is_atom = rng.random(n) < 0.3
        corroboration = np.minimum(rng.geometric(0.25, n) - 1, 40)
        p_write = np.asarray(derive(0.0, is_atom, corroboration, **self.planted.derive_kwargs()))
        caller = np.clip(0.75 + 0.4 * (p_write - 0.5) + rng.normal(0, 0.08, n), 0.05, 0.99).round(3)
        return pd.DataFrame({
            "memory_id": [f"m{i:05d}" for i in range(n)],
            "namespace": np.asarray(self.namespaces, dtype=object)[rng.integers(0, len(self.namespaces), n)],
            "source": np.asarray(self.sources, dtype=object)[rng.integers(0, len(self.sources), n)],
            "created_at": self.start + pd.to_timedelta(created, unit="s"),
            "is_atom": is_atom,
            "corroboration": corroboration.astype(np.int64),
            "caller_confidence": caller,
        })

    def _recalls(self, rng):
        m = self.memories
        k = self.per_recall
        n_q = -(-self.n_recalls // k)
        created_s = ((m["created_at"] - self.start).dt.total_seconds()).to_numpy()
        first = created_s[min(k, len(m)) - 1] + 60.0
        q_times = np.sort(rng.uniform(first, self.days * 86_400, n_q)).round()
        text = rng.gamma(2.0, 1.0, len(m))  # how well each memory matches typical queries
        rows = []
        for q, t in enumerate(q_times):
            avail = int(np.searchsorted(created_s, t, side="right"))
            pick = rng.choice(avail, size=min(k, avail), replace=False)
            score = text[pick] + rng.normal(0, 0.5, len(pick))
            total = np.asarray(recall_score(score, m["caller_confidence"].to_numpy()[pick]))
            order = np.argsort(-total, kind="stable")
            for rank, j in enumerate(order, start=1):
                rows.append((q, t, pick[j], rank, round(float(total[j]), 4)))
        rows = rows[: self.n_recalls]
        q_idx, t_s, mem, rank, score = (np.asarray(c) for c in zip(*rows, strict=True))
        ts = self.start + pd.to_timedelta(t_s, unit="s")
        sub = m.iloc[mem].reset_index(drop=True)
        age = (t_s - created_s[mem]) / 86_400.0
        p = np.asarray(derive(age, sub["is_atom"].to_numpy(), sub["corroboration"].to_numpy(),
                              **self.planted.derive_kwargs()))
        consumed = rng.random(len(p)) < p
        log = pd.DataFrame({
            "ts": pd.Series(ts).dt.as_unit("ns"), "recall_id": [f"r{q:06d}" for q in q_idx],
            "memory_id": sub["memory_id"].to_numpy(object), "namespace": sub["namespace"].to_numpy(object),
            "source": sub["source"].to_numpy(object), "caller_confidence": sub["caller_confidence"].to_numpy(),
            "created_at": sub["created_at"].dt.as_unit("ns").to_numpy(), "is_atom": sub["is_atom"].to_numpy(),
            "corroboration": sub["corroboration"].to_numpy(), "rank": pd.array(rank, dtype="Int64"),
            "score": score.astype(np.float64), "consumed": pd.array(consumed, dtype="boolean"),
        })
        log["created_at"] = pd.to_datetime(log["created_at"], utc=True).dt.as_unit("ns")
        return log[list(RECALL_COLUMNS)], pd.Series(p, name="p_consumed")
