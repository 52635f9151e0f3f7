"""Synthetic users with planted preferences, and agent behaviors with planted relevance (thatch).

:class:`PreferenceWorld` plants, for every (user, situation), which of two
competing preferences the user holds and how firmly (the probability they
confirm it), with drift and answer noise. Situations are named several ways
so the embedder has to recognise them. ``world.log(n)`` writes an open-loop
interaction log (feedback does not depend on what an engine surfaces);
:func:`simulate` runs the closed loop, where the engine's own nudges decide
what the simulated user reacts to. :class:`BehaviorWorld` plants the true
relevance of codified rules for ham/spam feedback.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.core.errors import InputError
from thatchlab.core.params import ScoringParams
from thatchlab.logs.interaction import validate_interaction_log
from thatchlab.synth._preference_texts import MATCHER_TEMPLATES, PROMPT_TEMPLATES, SITUATIONS

__all__ = ["PreferenceWorld", "BehaviorWorld", "simulate", "sample_interaction_logs"]

_GAP = pd.Timedelta(minutes=47)


def _phrasings(rng, names, templates, n):
    combos = [t.format(s=s) for s in names for t in templates]
    pick = rng.permutation(len(combos))[:n]
    return [combos[j] for j in sorted(pick)]


def _vectors(texts_by_group, dim, spread, rng):
    """Unit vectors: one random centre per group, each text = centre + spread × noise."""
    out = {}
    for texts in texts_by_group:
        centre = rng.normal(size=dim)
        centre /= np.linalg.norm(centre)
        for t in texts:
            if t in out:
                continue
            noise = rng.normal(size=dim)
            noise /= np.linalg.norm(noise)
            v = centre + spread * noise
            out[t] = v / np.linalg.norm(v)
    return out


class PreferenceWorld:
    """Users whose decisions follow planted preferences.

    Parameters
    ----------
    n_users : users; user ``u`` writes to store ``user-{u:02d}``.
    n_situations : situations drawn from our text table (at most 20).
    phrasings_per_situation : distinct matcher phrasings and prompt phrasings per situation.
    drift_rate : per session, the probability that the user's preference in
        that situation flips before they answer.
    noise : probability that an answer contradicts the user's true preference.
    seed : seed of the world (preferences, phrasings, logs).
    prior : ``None`` (default) or ``(K, P0)``. By default the preferred option
        is confirmed with a strength drawn from Uniform(0.65, 0.95) and the
        other option with ``1 − strength``, so no planted K exists. With
        ``prior=(K, P0)`` every option of every (user, situation) — every item
        the engine will hold — gets its own confirm probability drawn from
        Beta(K·P0, K·(1 − P0)), the prior the scoring engine assumes, so a
        fitted K and P0 can be checked against the planted ones (use
        ``noise=0``: answer noise moves each probability towards ½).

    Attributes
    ----------
    situations : DataFrame ``situation, name, option_a, option_b, behavior``.
    matchers, prompts : dict situation → list of phrasings.
    preference : DataFrame ``store, situation, prefers (a|b), strength, p_a, p_b``
        (the initial truth; ``p_a``/``p_b`` are the probabilities of confirming
        each option, ``prefers`` the likelier one and ``strength`` its
        probability).

    Examples
    --------
    >>> w = PreferenceWorld(n_users=2, n_situations=3, phrasings_per_situation=2, seed=1)
    >>> log = w.log(4)
    >>> log["kind"].value_counts().to_dict()
    {'message': 4, 'prediction_update': 4}
    """

    def __init__(self, n_users: int = 5, n_situations: int = 12, phrasings_per_situation: int = 4,
                 drift_rate: float = 0.0, noise: float = 0.05, seed: int = 0,
                 start: str = "2026-01-05T09:00:00Z", prior: tuple[float, float] | None = None):
        if not 1 <= int(n_situations) <= len(SITUATIONS):
            raise InputError(f"n_situations: expected 1..{len(SITUATIONS)}, got {n_situations}")
        if int(n_users) < 1 or int(phrasings_per_situation) < 1:
            raise InputError("n_users and phrasings_per_situation must be at least 1")
        if not (0 <= drift_rate <= 1 and 0 <= noise < 0.5):
            raise InputError("drift_rate must be in [0, 1] and noise in [0, 0.5)")
        if prior is not None:
            try:
                k, p0 = (float(x) for x in prior)
            except (TypeError, ValueError):
                raise InputError(f"prior: expected (K, P0), got {prior!r}") from None
            if not (np.isfinite(k) and k > 0 and 0 < p0 < 1):
                raise InputError(f"prior: expected K > 0 and 0 < P0 < 1, got K={k}, P0={p0}")
            prior = (k, p0)
        self.prior = prior
        self.n_users, self.n_situations = int(n_users), int(n_situations)
        self.phrasings_per_situation, self.drift_rate, self.noise = int(phrasings_per_situation), drift_rate, noise
        self.seed, self.start = seed, pd.Timestamp(start)
        rng = np.random.default_rng(seed)
        chosen = sorted(rng.choice(len(SITUATIONS), self.n_situations, replace=False).tolist())
        rows = []
        self.matchers, self.prompts = {}, {}
        for j, k in enumerate(chosen):
            names, a, b, beh = SITUATIONS[k]
            rows.append({"situation": j, "name": names[0], "option_a": a, "option_b": b, "behavior": beh})
            self.matchers[j] = _phrasings(rng, names, MATCHER_TEMPLATES, self.phrasings_per_situation)
            self.prompts[j] = _phrasings(rng, names, PROMPT_TEMPLATES, self.phrasings_per_situation)
        self.situations = pd.DataFrame(rows)
        self.stores = [f"user-{u:02d}" for u in range(self.n_users)]
        n = self.n_users * self.n_situations
        if prior is None:
            prefers = np.where(rng.random(n) < 0.5, "a", "b")
            strength = rng.uniform(0.65, 0.95, n).round(3)
            p_a = np.where(prefers == "a", strength, 1 - strength)
            p_b = np.where(prefers == "a", 1 - strength, strength)
        else:
            k, p0 = prior
            p_a, p_b = rng.beta(k * p0, k * (1 - p0), size=(2, n))
            prefers = np.where(p_a >= p_b, "a", "b")
            strength = np.maximum(p_a, p_b)
        self.preference = pd.DataFrame({
            "store": np.repeat(self.stores, self.n_situations),
            "situation": np.tile(np.arange(self.n_situations), self.n_users),
            "prefers": prefers, "strength": strength, "p_a": p_a, "p_b": p_b})

    # ------------------------------------------------------------------ truth
    def _state(self):
        """Per (store, situation): ``[prefers, p_a, p_b]`` (drift swaps them)."""
        return {(r.store, r.situation): [r.prefers, r.p_a, r.p_b] for r in self.preference.itertuples()}

    def _p_true(self, state, store, s, statement) -> float:
        """Planted probability that the user confirms ``statement`` in situation ``s``."""
        _, p_a, p_b = state[(store, s)]
        row = self.situations.iloc[s]
        if statement == row["option_a"]:
            return float(p_a)
        if statement == row["option_b"]:
            return float(p_b)
        return 0.0

    def _answer(self, rng, p) -> bool:
        p_obs = p * (1 - self.noise) + (1 - p) * self.noise
        return bool(rng.random() < p_obs)

    def _drift(self, rng, state, key):
        if self.drift_rate and rng.random() < self.drift_rate:
            prefers, p_a, p_b = state[key]
            state[key] = ["b" if prefers == "a" else "a", p_b, p_a]

    def texts(self) -> dict:
        """All texts by role: ``matchers``, ``statements``, ``prompts``."""
        return {"matchers": sorted({t for v in self.matchers.values() for t in v}),
                "statements": sorted(set(self.situations["option_a"]) | set(self.situations["option_b"])
                                     | set(self.situations["behavior"])),
                "prompts": sorted({t for v in self.prompts.values() for t in v})}

    def lookup_embedder(self, dim: int = 32, spread: float = 0.5, seed: int | None = None):
        """A :class:`~thatchlab.embed.LookupEmbedder` with planted geometry, for model-free tests.

        Matcher phrasings and prompts of one situation share a random centre
        (cosine ≈ 1 / (1 + spread²) between them); each statement has its own
        direction. Deterministic given the world and ``seed``.
        """
        from thatchlab.embed import LookupEmbedder

        rng = np.random.default_rng(self.seed + 7919 if seed is None else seed)
        groups = [self.matchers[s] + self.prompts[s] for s in range(self.n_situations)]
        groups += [[t] for t in self.texts()["statements"]]
        vecs = _vectors(groups, dim, spread, rng)
        return LookupEmbedder({t: v for t, v in vecs.items()}, name=f"synthetic-{dim}d")

    # ------------------------------------------------------------------ logs
    def log(self, n_sessions: int, seed: int | None = None, soft_share: float = 0.25) -> pd.DataFrame:
        """An open-loop interaction log of ``n_sessions`` sessions.

        Each session: a ``message`` (a prompt phrasing), then one
        ``prediction_update`` on a random option of the situation: ``create``
        (10%), else ``confirm`` with the planted probability (noisy), else
        ``soft`` (``soft_share`` of refusals, 25% by default) or
        ``disconfirm``. Extra column ``p_true`` is the planted confirm
        probability of the update's statement.
        """
        if not 0 <= soft_share <= 1:
            raise InputError(f"soft_share: expected a share in [0, 1], got {soft_share!r}")
        rng = np.random.default_rng(self.seed + 1 if seed is None else seed)
        state, rows = self._state(), []
        for k in range(int(n_sessions)):
            u, s = int(rng.integers(self.n_users)), int(rng.integers(self.n_situations))
            store, sess = self.stores[u], f"s{k:05d}"
            t = self.start + k * _GAP + pd.Timedelta(seconds=int(rng.integers(0, 600)))
            rows.append({"ts": t, "session": sess, "store": store, "kind": "message",
                         "text": self.prompts[s][int(rng.integers(len(self.prompts[s])))]})
            self._drift(rng, state, (store, s))
            opt = self.situations.iloc[s]["option_a" if rng.random() < 0.5 else "option_b"]
            p = self._p_true(state, store, s, opt)
            if rng.random() < 0.1:
                signal = "create"
            elif self._answer(rng, p):
                signal = "confirm"
            else:
                signal = "soft" if rng.random() < soft_share else "disconfirm"
            rows.append({"ts": t + pd.Timedelta(seconds=45), "session": sess, "store": store,
                         "kind": "prediction_update", "matcher": self._matcher(rng, s), "statement": opt,
                         "signal": signal, "p_true": p})
        return _finish(rows)

    def _matcher(self, rng, s):
        return self.matchers[s][int(rng.integers(len(self.matchers[s])))]


def simulate(world: PreferenceWorld, params: ScoringParams | None = None, n_sessions: int = 200,
             seed: int = 0, embedder=None) -> pd.DataFrame:
    """Closed loop: the engine's nudges decide what the simulated user answers.

    Each session the user sends a prompt; the engine nudges under ``params``.
    ``strong`` → the agent silently follows the top item and the user
    confirms or corrects it; ``ambiguous`` → the agent asks about the top
    item (an interruption) and the user answers; ``none`` → the agent asks
    and the user states a preference (their true one, except with
    probability ``noise``), recorded as ``confirm``. Answers follow the
    planted truth. The log carries ``surfaced`` (the statements nudged) and
    ``propensity`` = 1 (a deterministic policy), plus ``p_true`` and ``regime``.

    >>> w = PreferenceWorld(n_users=1, n_situations=2, phrasings_per_situation=2, seed=0)
    >>> log = simulate(w, n_sessions=6, seed=0, embedder=w.lookup_embedder())
    >>> log["regime"].dropna().tolist()[:2]
    ['none', 'none']
    """
    from thatchlab.scoring.prediction import PredictionEngine

    params = ScoringParams() if params is None else params
    emb = world.lookup_embedder() if embedder is None else embedder
    eng = PredictionEngine(emb, params=params)
    rng = np.random.default_rng(seed)
    state, rows = world._state(), []
    for k in range(int(n_sessions)):
        u, s = int(rng.integers(world.n_users)), int(rng.integers(world.n_situations))
        store, sess = world.stores[u], f"s{k:05d}"
        t = world.start + k * _GAP + pd.Timedelta(seconds=int(rng.integers(0, 600)))
        prompt = world.prompts[s][int(rng.integers(len(world.prompts[s])))]
        eng.project_store = store
        nudge = eng.nudge(prompt)
        surfaced = nudge.items["statement"].tolist()
        rows.append({"ts": t, "session": sess, "store": store, "kind": "message", "text": prompt,
                     "surfaced": surfaced, "propensity": 1.0, "regime": nudge.regime})
        world._drift(rng, state, (store, s))
        if surfaced:
            stmt = surfaced[0]
            p = world._p_true(state, store, s, stmt)
            signal = "confirm" if world._answer(rng, p) else "disconfirm"
        else:
            prefers = state[(store, s)][0]
            if rng.random() < world.noise:
                prefers = "b" if prefers == "a" else "a"
            stmt = world.situations.iloc[s]["option_" + prefers]
            p, signal = world._p_true(state, store, s, stmt), "confirm"
        matcher = world._matcher(rng, s)
        t2 = t + pd.Timedelta(seconds=45)
        eng.update(matcher, stmt, signal, now=t2)
        rows.append({"ts": t2, "session": sess, "store": store, "kind": "prediction_update",
                     "matcher": matcher, "statement": stmt, "signal": signal, "p_true": p})
    return _finish(rows)


class BehaviorWorld:
    """Codified agent behaviors whose true relevance is planted.

    Every situation gets its helpful behavior (true relevance drawn in
    [0.75, 0.95]); with probability ``mislink_rate`` a situation also gets
    another situation's behavior codified for it, relevant there only with
    probability in [0.05, 0.25]. Feedback is ham (relevant) with the planted
    probability; the item a behavior resolves to is shared across situations,
    as in production.

    >>> bw = BehaviorWorld(n_situations=3, seed=2)
    >>> bw.log(5)["kind"].value_counts().to_dict()["message"]
    5
    """

    def __init__(self, n_situations: int = 10, phrasings_per_situation: int = 3, mislink_rate: float = 0.3,
                 seed: int = 0, start: str = "2026-02-02T09:00:00Z"):
        self.world = PreferenceWorld(n_users=1, n_situations=n_situations,
                                     phrasings_per_situation=phrasings_per_situation, seed=seed, start=start)
        rng = np.random.default_rng(seed + 3)
        sit = self.world.situations
        links = [{"situation": s, "behavior": sit.iloc[s]["behavior"],
                  "relevance": round(float(rng.uniform(0.75, 0.95)), 3)} for s in range(len(sit))]
        for s in range(len(sit)):
            if len(sit) > 1 and rng.random() < mislink_rate:
                other = int((s + 1 + rng.integers(len(sit) - 1)) % len(sit))
                links.append({"situation": s, "behavior": sit.iloc[other]["behavior"],
                              "relevance": round(float(rng.uniform(0.05, 0.25)), 3)})
        self.links = pd.DataFrame(links)
        self.seed = seed

    def lookup_embedder(self, dim: int = 32, spread: float = 0.5):
        """Model-free vectors with planted geometry (see :meth:`PreferenceWorld.lookup_embedder`)."""
        return self.world.lookup_embedder(dim, spread)

    def log(self, n_sessions: int, store: str = "project") -> pd.DataFrame:
        """Codify every link once, then per session a prompt and ham/spam feedback
        (with probability 0.7 per linked behavior); ``p_true`` = planted relevance."""
        rng = np.random.default_rng(self.seed + 5)
        w, rows = self.world, []
        t0 = w.start - pd.Timedelta(days=1)
        for j, r in enumerate(self.links.itertuples()):
            rows.append({"ts": t0 + pd.Timedelta(minutes=j), "session": "setup", "store": store,
                         "kind": "behavior_codify", "matcher": w._matcher(rng, r.situation),
                         "statement": r.behavior, "rationale": "learned from a past session"})
        for k in range(int(n_sessions)):
            s = int(rng.integers(w.n_situations))
            t = w.start + k * _GAP
            sess = f"b{k:05d}"
            rows.append({"ts": t, "session": sess, "store": store, "kind": "message",
                         "text": w.prompts[s][int(rng.integers(len(w.prompts[s])))]})
            for r in self.links[self.links["situation"] == s].itertuples():
                if rng.random() < 0.7:
                    rel = bool(rng.random() < r.relevance)
                    rows.append({"ts": t + pd.Timedelta(seconds=30), "session": sess, "store": store,
                                 "kind": "behavior_feedback", "statement": r.behavior, "relevant": rel,
                                 "text": "it fit the task" if rel else "not useful here",
                                 "p_true": r.relevance})
        return _finish(rows)


def _finish(rows) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    df["ts"] = pd.to_datetime(df["ts"], utc=True)
    return validate_interaction_log(df)


def sample_interaction_logs() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The bundled sample logs ``data/interactions.jsonl`` and ``data/behavior_interactions.jsonl``.

    A 4-user, 12-situation preference world (4 phrasings each, drift 0.01,
    noise 0.05, seed 2026) observed open loop for 600 sessions, and a
    10-situation behavior world (mislink rate 0.3, seed 2026) for 300 sessions.
    """
    world = PreferenceWorld(n_users=4, n_situations=12, phrasings_per_situation=4, drift_rate=0.01,
                            noise=0.05, seed=2026)
    behaviors = BehaviorWorld(n_situations=10, phrasings_per_situation=3, mislink_rate=0.3, seed=2026)
    return world.log(600), behaviors.log(300)
