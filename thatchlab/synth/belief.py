"""A synthetic memory world with planted belief lifetimes (omi's belief model).

Each memory belongs to a belief class; it stays true for an exponential
lifetime with the class's planted half-life (so the belief model's own
assumption holds and a fitter can recover the truth), is restated now and
then while true, ends by an authoritative contradiction, a resolution or a
refuting review, and is read at random times with a ``still_true`` label.
Weak (less authoritative) contradictions, unrelated claims and user deletes
add the noise the replay must ignore.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from thatchlab.belief import source_authority
from thatchlab.core.params.belief import BELIEF_CLASSES
from thatchlab.logs.memory import MEMORY_LOG_COLUMNS, validate_memory_log

__all__ = ["BeliefWorld", "PLANTED_HALF_LIVES", "sample_memory_log"]

#: Default planted half-lives (days); ``None`` = the belief never ends.
PLANTED_HALF_LIVES = {"identity": None, "relationship": 400.0, "preference": 90.0, "state": 20.0,
                      "plan": 12.0, "episodic": 4.0, "meta_residue": 2.0, "meta_standing": None,
                      "unclassified": 30.0}
_DEFAULT_MIX = {"identity": 0.06, "relationship": 0.06, "preference": 0.2, "state": 0.2,
                "plan": 0.14, "episodic": 0.14, "meta_residue": 0.08, "meta_standing": 0.04,
                "unclassified": 0.08}
_TOPICS = {
    "identity": ["is a nurse", "grew up in Lisbon", "is left-handed", "speaks Dutch"],
    "relationship": ["has a sister called Ana", "works with Priya", "is married to Sam"],
    "preference": ["prefers green tea", "likes window seats", "reads on paper", "runs at dawn"],
    "state": ["is training for a race", "has a sore knee", "is learning Rust", "is job hunting"],
    "plan": ["plans a trip to Oslo", "will repaint the kitchen", "means to adopt a cat"],
    "episodic": ["went to a jazz concert", "cooked paella", "missed the train"],
    "meta_residue": ["asked about the last reply", "pasted a stack trace"],
    "meta_standing": ["wants answers in bullet points", "wants metric units"],
    "unclassified": ["mentioned the blue folder", "noted a parking spot"],
}


def _ts(start: pd.Timestamp, days) -> pd.Series:
    # millisecond timestamps, so the log round-trips exactly through JSONL text
    return (start + pd.to_timedelta(np.round(np.asarray(days) * 86_400_000.0), unit="ms")
            ).as_unit("ns") if np.ndim(days) else start + pd.Timedelta(milliseconds=round(days * 86_400_000.0))


@dataclass
class BeliefWorld:
    """Memories with planted lifetimes per belief class, written as a memory log.

    Parameters
    ----------
    half_lives : class → planted half-life in days (``None`` = never ends);
        defaults to :data:`PLANTED_HALF_LIVES` (key ``unclassified`` for rows
        without a class).
    mix : class → share of memories.
    restate_rate, read_rate, weak_contradiction_rate, unrelated_rate, delete_rate : float
        Events per memory per day (Poisson).
    end_mix : shares of how a belief's end is observed
        (``contradicted``, ``resolved``, ``review``).
    named_date_share : share of plans that carry a named ``valid_to`` (they
        end at that date with no event).
    user_asserted_share : share of rows marked user asserted (authority 2, else 1).
    seed : seed of the ``numpy.random.Generator``.

    Examples
    --------
    >>> log = BeliefWorld(seed=3).log(n_memories=20, days=30)
    >>> log["kind"].iloc[0], bool(log["ts"].is_monotonic_increasing)
    ('write', True)
    >>> set(log.loc[log["kind"] == "read", "still_true"].dropna()) <= {True, False}
    True
    """

    half_lives: dict = field(default_factory=lambda: dict(PLANTED_HALF_LIVES))
    mix: dict = field(default_factory=lambda: dict(_DEFAULT_MIX))
    restate_rate: float = 0.03
    read_rate: float = 0.08
    weak_contradiction_rate: float = 0.005
    unrelated_rate: float = 0.005
    delete_rate: float = 0.002
    end_mix: dict = field(default_factory=lambda: {"contradicted": 0.6, "resolved": 0.3, "review": 0.1})
    named_date_share: float = 0.0
    user_asserted_share: float = 0.05
    seed: int = 0

    def log(self, n_memories: int = 200, days: float = 120.0, start="2026-01-01T00:00:00Z",
            seed: int | None = None) -> pd.DataFrame:
        """A validated memory log (sorted by ``ts``); the truth goes to ``truth_``.

        Parameters
        ----------
        n_memories : int, default=200
            Memories written.
        days : float, default=120.0
            Length of the simulated period; memories are captured in its first 60%.
        start : str or pandas.Timestamp, default="2026-01-01T00:00:00Z"
            Aware time of day 0.
        seed : int, optional
            Seed of this log's generator (default: the world's ``seed``).

        Returns
        -------
        pandas.DataFrame
            The memory log (:data:`thatchlab.logs.memory.MEMORY_LOG_COLUMNS`). Afterwards
            ``truth_`` holds per memory its class, planted half-life, capture time, true end,
            delete time and whether it has a named date.
        """
        rng = np.random.default_rng(self.seed if seed is None else seed)
        start = pd.Timestamp(start).tz_convert("UTC")
        lives = self._lifetimes(rng, n_memories, days)
        recs, truth = [], []
        for i in range(n_memories):
            self._memory_events(rng, i, lives, days, recs, truth)
        df = _event_frame(recs, start)
        self.truth_ = _truth_frame(truth, start)
        # state each source's authority on omi's 0-5 scale, as production's writer records it (the
        # source policy's rule: user asserted -> 5, else the authority rounded down), so a replay
        # under any release reads it rather than deriving it
        stated = df["authority"].notna() | df["user_asserted"].notna()
        df["source_authority"] = pd.array([source_authority(r) if k else None
                                           for r, k in zip(df.to_dict("records"), stated)], dtype="Int64")
        return validate_memory_log(df[list(MEMORY_LOG_COLUMNS)])

    def _lifetimes(self, rng, n_memories: int, days: float) -> dict:
        """Every memory's class, capture time, authority, planted end, named date, delete time and
        the way its end is observed, drawn in this order from ``rng``."""
        classes = list(self.mix)
        p = np.array([self.mix[c] for c in classes], dtype=float)
        cls = rng.choice(classes, size=n_memories, p=p / p.sum())
        t0 = rng.uniform(0, 0.6 * days, n_memories)
        ua = rng.random(n_memories) < self.user_asserted_share
        hl = np.array([self.half_lives.get(c) or np.inf for c in cls], dtype=float)
        life = rng.exponential(np.where(np.isinf(hl), 1.0, hl / np.log(2)))
        life = np.where(np.isinf(hl), np.inf, life)
        named = (cls == "plan") & (rng.random(n_memories) < self.named_date_share)
        deleted = t0 + rng.exponential(1.0 / self.delete_rate, n_memories) if self.delete_rate > 0 \
            else np.full(n_memories, np.inf)
        ends = list(self.end_mix)
        pe = np.array([self.end_mix[k] for k in ends], dtype=float)
        end_kind = rng.choice(ends, size=n_memories, p=pe / pe.sum())
        return dict(cls=cls, t0=t0, ua=ua, auth=np.where(ua, 2.0, 1.0), end=t0 + life, named=named,
                    deleted=deleted, end_kind=end_kind)

    def _memory_events(self, rng, i: int, lives: dict, days: float, recs: list, truth: list) -> None:
        """Memory ``i``'s events (write, restatements, its observed end, noise, reads, delete) appended
        to ``recs`` and its planted truth to ``truth``."""
        cls, t0, auth, end = lives["cls"], lives["t0"], lives["auth"], lives["end"]
        named, deleted = lives["named"], lives["deleted"]

        def ev(t, mid, kind, **kw):
            recs.append(dict(t=t, memory_id=mid, kind=kind, **kw))

        mid, c = f"m{i:05d}", str(cls[i])
        topic = _TOPICS[c][i % len(_TOPICS[c])]
        stop = min(days, deleted[i])
        klass = None if c == "unclassified" else c
        ev(t0[i], mid, "write", text=f"user {topic} (#{i})", belief_class=klass,
           tier="short_term" if klass is None and i % 2 else "long_term", memory_kind="fact",
           user_asserted=bool(lives["ua"][i]), authority=auth[i], subject_scope="primary_user",
           valid_to=end[i] if named[i] else None)
        true_until = min(end[i], stop)
        for j, t in enumerate(self._times(rng, t0[i], true_until, self.restate_rate)):
            if rng.random() < 0.1:
                ev(t, mid, "review", confirmed=True)
            else:
                ev(t, f"{mid}-r{j}", "restated", target_memory_id=mid, authority=auth[i])
        if end[i] < stop and not named[i]:
            k = str(lives["end_kind"][i])
            if k == "review":
                ev(end[i], mid, "review", confirmed=False)
            else:
                ev(end[i], f"{mid}-{k[0]}", k, target_memory_id=mid,
                   authority=auth[i] + float(rng.integers(0, 2)))
        for j, t in enumerate(self._times(rng, t0[i], stop, self.weak_contradiction_rate)):
            ev(t, f"{mid}-w{j}", "contradicted", target_memory_id=mid, authority=auth[i] - 1.0)
        for j, t in enumerate(self._times(rng, t0[i], stop, self.unrelated_rate)):
            ev(t, f"{mid}-u{j}", "unrelated")
        for t in self._times(rng, t0[i], stop, self.read_rate):
            ev(t, mid, "read", still_true=bool(t < end[i]))
        if deleted[i] < days:
            ev(deleted[i], mid, "delete")
        truth.append(dict(memory_id=mid, belief_class=klass, planted_half_life_days=self.half_lives.get(c),
                          captured_at=t0[i], true_end=end[i], deleted=deleted[i], named_date=bool(named[i])))

    @staticmethod
    def _times(rng, a: float, b: float, rate: float) -> np.ndarray:
        """Sorted event times of a Poisson process of ``rate`` per day on (a, b)."""
        if rate <= 0 or not b > a:
            return np.empty(0)
        n = rng.poisson(rate * (b - a))
        return np.sort(rng.uniform(a, b, n))


def _event_frame(recs: list, start: pd.Timestamp) -> pd.DataFrame:
    """The events in time order (ties: order of writing) with their day offsets as timestamps and
    every memory log column present."""
    df = pd.DataFrame(recs)
    order = np.lexsort((np.arange(len(df)), df["t"].to_numpy()))
    df = df.iloc[order].reset_index(drop=True)
    df["ts"] = _ts(start, df.pop("t").to_numpy())
    if "valid_to" in df.columns:
        vt = df["valid_to"].astype(float)
        df["valid_to"] = pd.Series(pd.NaT, index=df.index, dtype="datetime64[ns, UTC]")
        m = vt.notna().to_numpy()
        df.loc[m, "valid_to"] = _ts(start, vt[m].to_numpy())
    for col in MEMORY_LOG_COLUMNS:
        if col not in df.columns:
            df[col] = None
    return df


def _truth_frame(truth: list, start: pd.Timestamp) -> pd.DataFrame:
    """The planted truth per memory, its day offsets as timestamps (``NaT`` where never)."""
    tr = pd.DataFrame(truth)
    for col in ("captured_at", "true_end", "deleted"):
        finite = np.isfinite(tr[col].to_numpy(dtype=float))
        vals = pd.Series(pd.NaT, index=tr.index, dtype="datetime64[ns, UTC]")
        vals[finite] = _ts(start, tr.loc[finite, col].to_numpy(dtype=float))
        tr[col] = vals
    return tr


def sample_memory_log() -> pd.DataFrame:
    """The bundled ``data/memory_log.jsonl``: 150 memories over 120 days, seed 2026,
    a fifth of the plans with a named date.

    Returns
    -------
    pandas.DataFrame
        The memory log.

    Examples
    --------
    >>> int((sample_memory_log()["kind"] == "write").sum())
    150
    """
    return BeliefWorld(named_date_share=0.2, seed=2026).log(n_memories=150, days=120.0)


assert set(PLANTED_HALF_LIVES) == set(BELIEF_CLASSES) | {"unclassified"}
