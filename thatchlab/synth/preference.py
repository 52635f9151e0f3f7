"""Synthetic users with planted preferences (thatch's prediction engine).

:class:`PreferenceWorld` plants, for every (user, situation), which of two
competing preferences the user holds and how firmly (the probability they
confirm it), with drift and answer noise. Situations are named several ways
so the embedder has to recognise them. ``world.log(n)`` writes an open-loop
interaction log (feedback does not depend on what an engine surfaces).

The closed loop, where the engine's own nudges decide what the simulated user
reacts to, is :mod:`thatchlab.synth.closed_loop` (:func:`~thatchlab.synth.simulate`,
:func:`~thatchlab.synth.simulate_many`); it plays the world through the
world's public simulation hooks (:meth:`PreferenceWorld.initial_state`,
:meth:`~PreferenceWorld.drift`, :meth:`~PreferenceWorld.p_true`,
:meth:`~PreferenceWorld.answer`, :meth:`~PreferenceWorld.draw_matcher`), as
:class:`~thatchlab.synth.BehaviorWorld` does.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.core.errors import InputError
from thatchlab.embed import LookupEmbedder
from thatchlab.synth._preference_texts import MATCHER_TEMPLATES, PROMPT_TEMPLATES, SITUATIONS
from thatchlab.synth._sessions import SESSION_GAP, finish_log

__all__ = ["PreferenceWorld"]


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


def _checked_prior(n_users, n_situations, phrasings_per_situation, drift_rate, noise, prior):
    """Check :class:`PreferenceWorld`'s arguments; return ``prior`` as ``(K, P0)`` floats or ``None``."""
    if not 1 <= int(n_situations) <= len(SITUATIONS):
        raise InputError(f"n_situations: expected 1..{len(SITUATIONS)}, got {n_situations}")
    if int(n_users) < 1 or int(phrasings_per_situation) < 1:
        raise InputError("n_users and phrasings_per_situation must be at least 1")
    if not (0 <= drift_rate <= 1 and 0 <= noise < 0.5):
        raise InputError("drift_rate must be in [0, 1] and noise in [0, 0.5)")
    if prior is None:
        return None
    try:
        k, p0 = (float(x) for x in prior)
    except (TypeError, ValueError):
        raise InputError(f"prior: expected (K, P0), got {prior!r}") from None
    if not (np.isfinite(k) and k > 0 and 0 < p0 < 1):
        raise InputError(f"prior: expected K > 0 and 0 < P0 < 1, got K={k}, P0={p0}")
    return (k, p0)


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
    start : aware time of the first session.
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

    Notes
    -----
    Simulations play the world through its hooks, each drawing from the
    generator the caller passes: :meth:`initial_state` (the mutable truth),
    :meth:`drift`, :meth:`p_true`, :meth:`answer` and :meth:`draw_matcher`.
    A log is reproducible only if the hooks are called in the same order.

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
        self.prior = _checked_prior(n_users, n_situations, phrasings_per_situation, drift_rate, noise, prior)
        self.n_users, self.n_situations = int(n_users), int(n_situations)
        self.phrasings_per_situation, self.drift_rate, self.noise = int(phrasings_per_situation), drift_rate, noise
        self.seed, self.start = seed, pd.Timestamp(start)
        rng = np.random.default_rng(seed)          # one generator: situations, phrasings, then preferences
        self._draw_situations(rng)
        self.stores = [f"user-{u:02d}" for u in range(self.n_users)]
        self._draw_preferences(rng)

    def _draw_situations(self, rng) -> None:
        """Pick the situations, then per situation its matcher and its prompt phrasings."""
        chosen = sorted(rng.choice(len(SITUATIONS), self.n_situations, replace=False).tolist())
        rows = []
        self.matchers, self.prompts = {}, {}
        for j, k in enumerate(chosen):
            names, a, b, beh = SITUATIONS[k]
            rows.append({"situation": j, "name": names[0], "option_a": a, "option_b": b, "behavior": beh})
            self.matchers[j] = _phrasings(rng, names, MATCHER_TEMPLATES, self.phrasings_per_situation)
            self.prompts[j] = _phrasings(rng, names, PROMPT_TEMPLATES, self.phrasings_per_situation)
        self.situations = pd.DataFrame(rows)

    def _draw_preferences(self, rng) -> None:
        """Plant every (store, situation)'s confirm probabilities of both options."""
        n = self.n_users * self.n_situations
        if self.prior is None:
            prefers = np.where(rng.random(n) < 0.5, "a", "b")
            strength = rng.uniform(0.65, 0.95, n).round(3)
            p_a = np.where(prefers == "a", strength, 1 - strength)
            p_b = np.where(prefers == "a", 1 - strength, strength)
        else:
            k, p0 = self.prior
            p_a, p_b = rng.beta(k * p0, k * (1 - p0), size=(2, n))
            prefers = np.where(p_a >= p_b, "a", "b")
            strength = np.maximum(p_a, p_b)
        self.preference = pd.DataFrame({
            "store": np.repeat(self.stores, self.n_situations),
            "situation": np.tile(np.arange(self.n_situations), self.n_users),
            "prefers": prefers, "strength": strength, "p_a": p_a, "p_b": p_b})

    # ------------------------------------------------------------------ simulation hooks
    def initial_state(self) -> dict:
        """The planted truth as state a simulation mutates.

        Returns
        -------
        dict
            ``(store, situation) → [prefers, p_a, p_b]``, a fresh copy of
            :attr:`preference`; :meth:`drift` swaps entries in place.
        """
        return {(r.store, r.situation): [r.prefers, r.p_a, r.p_b] for r in self.preference.itertuples()}

    def drift(self, rng, state: dict, key: tuple) -> None:
        """Maybe flip one user's preference before they answer.

        Draws one uniform from ``rng`` (none when ``drift_rate`` is 0); below
        ``drift_rate``, ``state[key]`` swaps its options.

        Parameters
        ----------
        rng : numpy Generator.
        state : from :meth:`initial_state`, changed in place.
        key : ``(store, situation)``.
        """
        if self.drift_rate and rng.random() < self.drift_rate:
            prefers, p_a, p_b = state[key]
            state[key] = ["b" if prefers == "a" else "a", p_b, p_a]

    def p_true(self, state: dict, store: str, situation: int, statement: str) -> float:
        """Planted probability that the user of ``store`` confirms ``statement`` in ``situation``.

        Parameters
        ----------
        state : dict
            From :meth:`initial_state`.
        store : str
            The user's store.
        situation : int
            The situation.
        statement : str
            The statement answered.

        Returns
        -------
        float
            The current ``p_a`` or ``p_b`` from ``state``; 0 for a statement
            that is neither of the situation's options.
        """
        _, p_a, p_b = state[(store, situation)]
        row = self.situations.iloc[situation]
        if statement == row["option_a"]:
            return float(p_a)
        if statement == row["option_b"]:
            return float(p_b)
        return 0.0

    def answer(self, rng, p: float) -> bool:
        """Whether the user confirms, given planted probability ``p`` and answer noise.

        Draws one uniform from ``rng`` and compares it with
        ``p·(1 − noise) + (1 − p)·noise``.

        Parameters
        ----------
        rng : numpy.random.Generator
            The simulation's generator.
        p : float
            The planted confirm probability.

        Returns
        -------
        bool
            True when the user confirms.
        """
        p_obs = p * (1 - self.noise) + (1 - p) * self.noise
        return bool(rng.random() < p_obs)

    def draw_matcher(self, rng, situation: int) -> str:
        """One of ``situation``'s matcher phrasings, drawn uniformly (one integer from ``rng``).

        Parameters
        ----------
        rng : numpy.random.Generator
            The simulation's generator.
        situation : int
            The situation.

        Returns
        -------
        str
            The phrasing.
        """
        return self.matchers[situation][int(rng.integers(len(self.matchers[situation])))]

    # ------------------------------------------------------------------ texts
    def texts(self) -> dict:
        """All texts by role: ``matchers``, ``statements``, ``prompts``.

        Returns
        -------
        dict
            Role → sorted list of texts (statements include the behaviors).
        """
        return {"matchers": sorted({t for v in self.matchers.values() for t in v}),
                "statements": sorted(set(self.situations["option_a"]) | set(self.situations["option_b"])
                                     | set(self.situations["behavior"])),
                "prompts": sorted({t for v in self.prompts.values() for t in v})}

    def lookup_embedder(self, dim: int = 32, spread: float = 0.5, seed: int | None = None):
        """A :class:`~thatchlab.embed.LookupEmbedder` with planted geometry, for model-free tests.

        Matcher phrasings and prompts of one situation share a random centre
        (cosine ≈ 1 / (1 + spread²) between them); each statement has its own
        direction. Deterministic given the world and ``seed``.

        Parameters
        ----------
        dim : int, default=32
            Vector length.
        spread : float, default=0.5
            How far each phrasing sits from its situation's centre.
        seed : int, optional
            Seed of the vectors (default: derived from the world's seed).

        Returns
        -------
        LookupEmbedder
            Named ``synthetic-{dim}d``.
        """
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

        Parameters
        ----------
        n_sessions : int
            Sessions in the log.
        seed : int, optional
            Seed of the log's generator (default: derived from the world's seed).
        soft_share : float, default=0.25
            Share of refusals recorded as ``soft`` rather than ``disconfirm``.

        Returns
        -------
        pandas.DataFrame
            A validated interaction log, two rows per session.

        Raises
        ------
        InputError
            ``soft_share`` outside [0, 1].

        See Also
        --------
        thatchlab.synth.simulate : The closed loop.
        """
        if not 0 <= soft_share <= 1:
            raise InputError(f"soft_share: expected a share in [0, 1], got {soft_share!r}")
        rng = np.random.default_rng(self.seed + 1 if seed is None else seed)
        state, rows = self.initial_state(), []
        for k in range(int(n_sessions)):
            u, s = int(rng.integers(self.n_users)), int(rng.integers(self.n_situations))
            store, sess = self.stores[u], f"s{k:05d}"
            t = self.start + k * SESSION_GAP + pd.Timedelta(seconds=int(rng.integers(0, 600)))
            rows.append({"ts": t, "session": sess, "store": store, "kind": "message",
                         "text": self.prompts[s][int(rng.integers(len(self.prompts[s])))]})
            self.drift(rng, state, (store, s))
            opt = self.situations.iloc[s]["option_a" if rng.random() < 0.5 else "option_b"]
            p = self.p_true(state, store, s, opt)
            if rng.random() < 0.1:
                signal = "create"
            elif self.answer(rng, p):
                signal = "confirm"
            else:
                signal = "soft" if rng.random() < soft_share else "disconfirm"
            rows.append({"ts": t + pd.Timedelta(seconds=45), "session": sess, "store": store,
                         "kind": "prediction_update", "matcher": self.draw_matcher(rng, s), "statement": opt,
                         "signal": signal, "p_true": p})
        return finish_log(rows)
