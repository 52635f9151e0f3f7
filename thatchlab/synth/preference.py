"""Synthetic users with planted preferences, and agent behaviors with planted relevance (thatch).

:class:`PreferenceWorld` plants, for every (user, situation), which of two
competing preferences the user holds and how firmly (the probability they
confirm it), with drift and answer noise. Situations are named several ways
so the embedder has to recognise them. ``world.log(n)`` writes an open-loop
interaction log (feedback does not depend on what an engine surfaces);
:func:`simulate` runs the closed loop, where the engine's own nudges decide
what the simulated user reacts to, and :func:`simulate_many` runs many
parameter settings through the same world in lockstep, as arrays.
:class:`BehaviorWorld` plants the true relevance of codified rules for
ham/spam feedback.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.core.errors import InputError, ParamsError
from thatchlab.core.jsfmt import js_round, r3
from thatchlab.core.params import ScoringParams
from thatchlab.core.vectors import exact_cosines
from thatchlab.logs.interaction import validate_interaction_log
from thatchlab.scoring.confidence import posterior_confidence
from thatchlab.synth._preference_texts import MATCHER_TEMPLATES, PROMPT_TEMPLATES, SITUATIONS

__all__ = ["PreferenceWorld", "BehaviorWorld", "simulate", "simulate_many", "sample_interaction_logs"]

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

    n_sessions = _session_count(n_sessions)
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


def _session_count(n_sessions) -> int:
    """``n_sessions`` as a positive int (a simulated log needs at least one session)."""
    if isinstance(n_sessions, bool) or not isinstance(n_sessions, (int, np.integer)) or n_sessions < 1:
        raise InputError(f"n_sessions: expected a whole number of sessions >= 1, got {n_sessions!r}")
    return int(n_sessions)


def simulate_many(world: PreferenceWorld, params_list, n_sessions: int = 200, seed: int = 0,
                  embedder=None) -> list[pd.DataFrame]:
    """:func:`simulate` for many parameter settings at once, in lockstep.

    Every setting plays the same world with the same random draws: session
    ``k`` has the same user, situation, time, prompt, drift and matcher
    phrasing under every setting, and the user's answer uses the same
    uniform draw, compared with the probability of whatever that setting
    surfaced. Each setting's simulated user therefore answers that setting's
    own nudges, and the log of setting ``j`` equals
    ``simulate(world, params_list[j], n_sessions, seed, embedder)``
    frame for frame.

    The settings advance together as arrays, one row per setting: the
    prompt, matcher and statement vectors are embedded once and their exact
    cosines computed once; settings that share ``dedup_cosine`` share the
    matchers (whose dedup does not depend on what was surfaced), so one
    prompt-to-matcher cosine row serves all of them; the top matchers,
    thresholds, scores, one-row-per-item ranking, regimes, answers, item
    dedup and posterior updates are array operations across settings.

    The embedder must give a text the same vector however texts are batched
    (true of :class:`~thatchlab.embed.LookupEmbedder` and of cached
    models). Settings whose dedup rule could give one statement two items
    (a statement's cosine with itself below ``dedup_cosine``) are run one
    :func:`simulate` each.

    Parameters
    ----------
    world : the :class:`PreferenceWorld`.
    params_list : sequence of :class:`~thatchlab.core.params.ScoringParams`
        (``None`` entries mean production's defaults).
    n_sessions, seed, embedder : as for :func:`simulate`.

    Returns
    -------
    list of DataFrame, one log per setting, in ``params_list`` order.

    Examples
    --------
    >>> w = PreferenceWorld(n_users=2, n_situations=3, phrasings_per_situation=2, seed=0)
    >>> emb = w.lookup_embedder()
    >>> logs = simulate_many(w, [ScoringParams(), ScoringParams(threshold=0.99)], n_sessions=20,
    ...                      seed=1, embedder=emb)
    >>> logs[0].equals(simulate(w, ScoringParams(), n_sessions=20, seed=1, embedder=emb))
    True
    >>> logs[1].loc[logs[1]["kind"] == "message", "regime"].unique().tolist()
    ['none']
    """
    params = []
    for j, p in enumerate(list(params_list)):
        p = ScoringParams() if p is None else p
        if not isinstance(p, ScoringParams):
            raise ParamsError(f"params_list[{j}]: expected ScoringParams, got {type(p).__name__}")
        params.append(p)
    n_sessions = _session_count(n_sessions)
    if not params:
        return []
    emb = world.lookup_embedder() if embedder is None else embedder
    draws = _SessionDraws(world, n_sessions, seed)
    space = _TextSpace(world, emb, draws)
    out: list = [None] * len(params)
    groups: dict = {}
    for j, p in enumerate(params):
        groups.setdefault(float(p.dedup_cosine), []).append(j)
    template = None
    for dedup, members in groups.items():
        if not space.supports(dedup):
            for j in members:
                out[j] = simulate(world, params[j], n_sessions, seed, emb)
            continue
        run = _Lockstep(world, space, draws, [params[j] for j in members], dedup)
        if template is None:
            template = _finish(run.rows(0))          # one log validated; the others share its columns
        for r, j in enumerate(members):
            out[j] = run.frame(r, template)
    return out


class _SessionDraws:
    """The random draws of :func:`simulate`'s sessions, which no setting changes.

    Per session: user, situation, time, prompt, the state after drift, the
    answer's uniform draw and the matcher phrasing, drawn in
    :func:`simulate`'s order from one generator.
    """

    def __init__(self, world: PreferenceWorld, n_sessions: int, seed: int):
        rng = np.random.default_rng(seed)
        state = world._state()
        self.user, self.situation, self.prompt, self.matcher, self.draw = [], [], [], [], []
        self.ts, self.ts2, self.prefers, self.p_a, self.p_b = [], [], [], [], []
        for k in range(n_sessions):
            u, s = int(rng.integers(world.n_users)), int(rng.integers(world.n_situations))
            t = world.start + k * _GAP + pd.Timedelta(seconds=int(rng.integers(0, 600)))
            prompt = world.prompts[s][int(rng.integers(len(world.prompts[s])))]
            world._drift(rng, state, (world.stores[u], s))
            r = float(rng.random())                 # the answer's (or the stated preference's) draw
            matcher = world._matcher(rng, s)
            prefers, p_a, p_b = state[(world.stores[u], s)]
            self.user.append(u)
            self.situation.append(s)
            self.prompt.append(prompt)
            self.matcher.append(matcher)
            self.draw.append(r)
            self.ts.append(t)
            self.ts2.append(t + pd.Timedelta(seconds=45))
            self.prefers.append(prefers)
            self.p_a.append(float(p_a))
            self.p_b.append(float(p_b))


class _TextSpace:
    """Every text a closed loop can write or read, embedded once, and the exact cosines
    the engine would compute between them (the engine's own float64 formula)."""

    def __init__(self, world: PreferenceWorld, emb, draws: _SessionDraws):
        from thatchlab.scoring.prediction import PredictionEngine

        eng = PredictionEngine(emb)
        sit = world.situations
        self.statements = sorted(set(sit["option_a"]) | set(sit["option_b"]))
        self.stmt_index = {t: j for j, t in enumerate(self.statements)}
        self.prompts = sorted(set(draws.prompt))
        self.prompt_index = {t: j for j, t in enumerate(self.prompts)}
        self.matchers = sorted(set(draws.matcher))
        self.matcher_index = {t: j for j, t in enumerate(self.matchers)}
        q = eng.embed_queries(self.prompts)
        m = eng.embed_passages(self.matchers)
        st = eng.embed_passages(self.statements)
        self.same_dim = q.shape[1] == m.shape[1] == st.shape[1] and q.shape[1] > 0
        if self.same_dim:
            self.prompt_matcher = _pair_cosines(m, q)      # [prompt, matcher]: stored row vs query
            self.matcher_matcher = _pair_cosines(m, m)     # [query matcher, stored matcher]
            self.stmt_stmt = _pair_cosines(st, st)         # [query statement, stored statement]
        # per situation: which option each statement is (0 = a, 1 = b, 2 = neither)
        self.option_of = np.full((len(sit), len(self.statements)), 2, dtype=np.int64)
        for s, (a, b) in enumerate(zip(sit["option_a"], sit["option_b"])):
            self.option_of[s, self.stmt_index[b]] = 1
            self.option_of[s, self.stmt_index[a]] = 0       # option_a is tested first
        self.option_a = np.array([self.stmt_index[a] for a in sit["option_a"]])
        self.option_b = np.array([self.stmt_index[b] for b in sit["option_b"]])
        order = sorted(range(len(self.statements)), key=lambda j: self.statements[j])
        self.stmt_rank = np.empty(len(self.statements), dtype=np.int64)
        self.stmt_rank[order] = np.arange(len(order))

    def supports(self, dedup: float) -> bool:
        """Whether settings with this dedup threshold can run as arrays: one vector size,
        and every statement dedups to its own item once it has one."""
        return bool(self.same_dim and (np.diag(self.stmt_stmt) >= dedup).all())


def _pair_cosines(stored: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Exact cosines ``[i, j]`` of query ``i`` against stored vector ``j``, one pair per row of
    :func:`~thatchlab.core.vectors.exact_cosines` (the engine's own formula, bit for bit)."""
    nq, ns = len(query), len(stored)
    a = np.repeat(stored.astype(np.float64)[None, :, :], nq, axis=0).reshape(nq * ns, -1)
    b = np.repeat(query.astype(np.float64), ns, axis=0)
    return exact_cosines(a, b).reshape(nq, ns)


class _Lockstep:
    """Settings sharing one dedup threshold, advanced session by session as arrays.

    State per setting ``g``, user store ``u`` and statement ``j`` (the item
    whose stored statement is ``j``; one per statement, see
    :meth:`_TextSpace.supports`): counts, stored confidence, existence and
    creation order; edges per (setting, store, matcher slot, statement).
    Matcher slots are shared: their dedup depends only on the matcher texts.
    """

    def __init__(self, world, space: _TextSpace, draws: _SessionDraws, params: list, dedup: float):
        self.world, self.space, self.draws, self.params = world, space, draws, params
        G, U, NS = len(params), world.n_users, len(space.statements)
        n_m = len(space.matchers)

        def col(name, dtype=np.float64):
            return np.array([getattr(p, name) for p in params], dtype=dtype)

        k, p0 = col("k"), col("p0")
        noise_floor, threshold, top = col("noise_floor"), col("threshold"), col("top_matchers", np.int64)
        max_items, min_conf = col("max_items", np.int64), col("min_confidence")
        strong_conf, strong_ev = col("strong_confidence"), col("strong_evidence", np.int64)
        margin = np.array([int(js_round(p.conflict_margin * 1000)) for p in params], dtype=np.int64)
        min_chars = col("min_prompt_chars", np.int64)
        c = np.zeros((G, U, NS))
        d = np.zeros((G, U, NS))
        conf = np.zeros((G, U, NS))
        exists = np.zeros((G, U, NS), dtype=bool)
        serial = np.zeros((G, U, NS), dtype=np.int64)
        edge = np.zeros((G, U, n_m, NS), dtype=bool)
        slots: list[list[int]] = [[] for _ in range(U)]       # per store: matcher text of each slot
        rows = np.arange(G)
        n_keep = int(min(max_items.max(), NS))
        T = int(top.max())
        n = len(draws.user)
        self.surfaced = np.full((n, G, n_keep), -1, dtype=np.int64)
        self.regime = np.empty((n, G), dtype=object)
        self.statement = np.zeros((n, G), dtype=np.int64)
        self.confirm = np.zeros((n, G), dtype=bool)
        self.p_true = np.zeros((n, G))
        inf = np.inf
        for i in range(n):
            u, s = draws.user[i], draws.situation[i]
            prompt = draws.prompt[i]
            skipped = len(prompt) < min_chars
            # -- the nudge, every setting at once
            n_items = np.zeros(G, dtype=np.int64)
            regime = np.where(skipped, "skipped", "none").astype(object)
            top_item = np.zeros(G, dtype=np.int64)
            if slots[u] and not skipped.all():
                cos = space.prompt_matcher[space.prompt_index[prompt], slots[u]]
                rounded = r3(cos)
                order = np.argsort(-rounded, kind="stable")          # ties: slot (insertion) order
                cos_o, rc_o = cos[order], rounded[order]
                above = cos_o[None, :] >= noise_floor[:, None]
                sel = above & (np.cumsum(above, axis=1) <= top[:, None]) & (rc_o[None, :] >= threshold[:, None])
                sel[skipped] = False
                t = min(T, len(order))
                pick = np.argsort(~sel, axis=1, kind="stable")[:, :t]  # selected slots, in rank order
                sel_t = np.take_along_axis(sel, pick, 1)
                slot_t = order[pick]
                conf_u = conf[:, u]
                linked = edge[rows[:, None], u, slot_t] & sel_t[:, :, None]
                linked &= (conf_u >= min_conf[:, None])[:, None, :]
                score = r3(rc_o[pick][:, :, None] * conf_u[:, None, :])
                score = np.where(linked, score, -inf)
                best = score.max(axis=1)
                best_rank = score.argmax(axis=1)                      # first = best-ranked matcher
                present = best > -inf
                ranked = np.lexsort((np.broadcast_to(space.stmt_rank, best.shape), -best), axis=1)
                n_items = np.minimum(present.sum(axis=1), max_items)
                if n_items.any():
                    ranked = ranked[:, :n_keep]
                    sc = np.take_along_axis(best, ranked, 1)
                    who = np.take_along_axis(slot_t, np.take_along_axis(best_rank, ranked, 1), 1)
                    top_item = ranked[:, 0]
                    top_k = js_round(sc[:, 0] * 1000)
                    later = (np.arange(n_keep)[None, :] >= 1) & (np.arange(n_keep)[None, :] < n_items[:, None])
                    competing = (later & (who == who[:, :1]) &
                                 (top_k[:, None] - js_round(np.where(later, sc, 0.0) * 1000) <= margin[:, None])
                                 ).any(axis=1)
                    c_top, d_top, conf_top = (x[rows, u, top_item] for x in (c, d, conf))
                    strong = ((conf_top >= strong_conf) & (js_round(c_top + d_top) >= strong_ev) & ~competing)
                    has = n_items > 0
                    regime[has] = np.where(strong[has], "strong", "ambiguous")
                    keep = np.arange(n_keep)[None, :] < n_items[:, None]
                    self.surfaced[i] = np.where(keep, ranked, -1)
            self.regime[i] = regime
            # -- the user's answer, to each setting's own top item
            has = n_items > 0
            prefers = draws.prefers[i]
            if draws.draw[i] < world.noise:
                prefers = "b" if prefers == "a" else "a"
            stated = space.option_a[s] if prefers == "a" else space.option_b[s]
            stmt = np.where(has, top_item, stated)
            which = space.option_of[s, stmt]
            p = np.where(which == 0, draws.p_a[i], np.where(which == 1, draws.p_b[i], 0.0))
            p_obs = p * (1 - world.noise) + (1 - p) * world.noise
            confirm = np.where(has, draws.draw[i] < p_obs, True)
            self.statement[i], self.confirm[i], self.p_true[i] = stmt, confirm, p
            # -- the write: matcher dedup (shared), item dedup per setting, link, signal
            mt = space.matcher_index[draws.matcher[i]]
            slot = None
            if slots[u]:
                mcos = space.matcher_matcher[mt, slots[u]]
                j = int(np.argmax(mcos))
                slot = j if mcos[j] >= dedup else None
            if slot is None:
                slots[u].append(mt)
                slot = len(slots[u]) - 1
            scos = np.where(exists[:, u], space.stmt_stmt[stmt], -inf)
            mx = scos.max(axis=1)
            found = mx >= dedup
            tie = exists[:, u] & (scos == mx[:, None])
            target = np.where(found, np.argmin(np.where(tie, serial[:, u], np.iinfo(np.int64).max), axis=1), stmt)
            new = ~found
            exists[rows[new], u, target[new]] = True
            serial[rows[new], u, target[new]] = i
            edge[rows, u, slot, target] = True
            c[rows, u, target] += confirm
            d[rows, u, target] += ~confirm
            conf[rows, u, target] = posterior_confidence(c[rows, u, target], d[rows, u, target], k, p0)

    def rows(self, g: int) -> list:
        """Setting ``g``'s log as :func:`simulate`'s row dicts (to validate one log)."""
        w, dr, sp = self.world, self.draws, self.space
        out = []
        for i in range(len(dr.user)):
            store, sess = w.stores[dr.user[i]], f"s{i:05d}"
            out.append({"ts": dr.ts[i], "session": sess, "store": store, "kind": "message",
                        "text": dr.prompt[i], "surfaced": self._surfaced(i, g), "propensity": 1.0,
                        "regime": self.regime[i, g]})
            out.append({"ts": dr.ts2[i], "session": sess, "store": store, "kind": "prediction_update",
                        "matcher": dr.matcher[i], "statement": sp.statements[self.statement[i, g]],
                        "signal": "confirm" if self.confirm[i, g] else "disconfirm",
                        "p_true": float(self.p_true[i, g])})
        return out

    def _surfaced(self, i: int, g: int) -> list:
        return [self.space.statements[j] for j in self.surfaced[i, g] if j >= 0]

    def frame(self, g: int, template: pd.DataFrame) -> pd.DataFrame:
        """Setting ``g``'s validated log: ``template`` (another setting's validated log of the
        same sessions) with the columns that depend on the setting replaced."""
        n = len(self.draws.user)
        msg, upd = np.arange(0, 2 * n, 2), np.arange(1, 2 * n, 2)
        out = template.copy()
        statements = np.asarray(self.space.statements, dtype=object)
        for name, values, at in (("surfaced", [self._surfaced(i, g) for i in range(n)], msg),
                                 ("regime", list(self.regime[:, g]), msg),
                                 ("statement", list(statements[self.statement[:, g]]), upd),
                                 ("signal", list(np.where(self.confirm[:, g], "confirm", "disconfirm")
                                                 .astype(object)), upd)):
            column = template[name].to_numpy(dtype=object).copy()
            column[at] = _objects(values)
            out[name] = column
        p_true = template["p_true"].to_numpy(dtype=np.float64).copy()
        p_true[upd] = self.p_true[:, g]
        out["p_true"] = p_true
        return out


def _objects(values: list) -> np.ndarray:
    """A 1-d object array of ``values`` (lists stay whole cells; numpy strings become str)."""
    arr = np.empty(len(values), dtype=object)
    arr[:] = [str(v) if isinstance(v, np.str_) else v for v in values]
    return arr


def _finish(rows) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    df["ts"] = pd.to_datetime(df["ts"], utc=True)
    return validate_interaction_log(df)


#: The prior planted in the bundled interaction log: (K, P0). K equals production's 5, P0 is
#: not production's 0.5 (see :func:`sample_interaction_logs` and ``data/README.md``).
SAMPLE_PRIOR = (5.0, 0.2)


def sample_interaction_logs() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The bundled sample logs ``data/interactions.jsonl`` and ``data/behavior_interactions.jsonl``.

    A 60-user, 12-situation preference world (4 phrasings each, no drift, no
    answer noise, seed 2026) whose every item's confirm probability is drawn
    from a planted prior Beta(K·P0, K·(1 − P0)) with K = 5 (production's value:
    right) and P0 = 0.2 (production's 0.5 is wrong: most predictions an agent
    writes are refused), observed open loop for 3,000 sessions; and a
    10-situation behavior world (mislink rate 0.3, seed 2026) for 300 sessions.
    """
    world = PreferenceWorld(n_users=60, n_situations=12, phrasings_per_situation=4, drift_rate=0.0,
                            noise=0.0, seed=2026, prior=SAMPLE_PRIOR)
    behaviors = BehaviorWorld(n_situations=10, phrasings_per_situation=3, mislink_rate=0.3, seed=2026)
    return world.log(3000), behaviors.log(300)


# the behavior world is built on a preference world; it lives beside, and is re-exported here
from thatchlab.synth.behavior import BehaviorWorld  # noqa: E402
