"""The closed loop: a :class:`~thatchlab.synth.PreferenceWorld` played against the prediction engine.

:func:`simulate` runs one parameter setting, where the engine's own nudges
decide what the simulated user reacts to; :func:`simulate_many` runs many
settings through the same world in lockstep, as arrays (the machinery lives
in :mod:`thatchlab.synth._lockstep`), giving each setting the log
:func:`simulate` would.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.core.errors import ParamsError
from thatchlab.core.params import ScoringParams
from thatchlab.scoring.prediction import PredictionEngine
from thatchlab.scoring.rules import drops_near_duplicates
from thatchlab.synth._lockstep import Lockstep, SessionDraws, TextSpace
from thatchlab.synth._sessions import SESSION_GAP, finish_log, session_count
from thatchlab.synth.preference import PreferenceWorld

__all__ = ["simulate", "simulate_many"]


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

    Parameters
    ----------
    world : PreferenceWorld
        The world played.
    params : ScoringParams, optional
        The engine's parameters (default: production's).
    n_sessions : int, default=200
        Sessions played.
    seed : int, default=0
        Seed of the session draws.
    embedder : Embedder, optional
        Default: ``world.lookup_embedder()``.

    Returns
    -------
    pandas.DataFrame
        A validated interaction log, two rows per session.

    See Also
    --------
    simulate_many : Many settings at once.

    Examples
    --------
    >>> w = PreferenceWorld(n_users=1, n_situations=2, phrasings_per_situation=2, seed=0)
    >>> log = simulate(w, n_sessions=6, seed=0, embedder=w.lookup_embedder())
    >>> log["regime"].dropna().tolist()[:2]
    ['none', 'none']
    """
    n_sessions = session_count(n_sessions)
    params = ScoringParams() if params is None else params
    emb = world.lookup_embedder() if embedder is None else embedder
    eng = PredictionEngine(emb, params=params)
    rng = np.random.default_rng(seed)
    state, rows = world.initial_state(), []
    for k in range(int(n_sessions)):
        u, s = int(rng.integers(world.n_users)), int(rng.integers(world.n_situations))
        store, sess = world.stores[u], f"s{k:05d}"
        t = world.start + k * SESSION_GAP + pd.Timedelta(seconds=int(rng.integers(0, 600)))
        prompt = world.prompts[s][int(rng.integers(len(world.prompts[s])))]
        eng.project_store = store
        nudge = eng.nudge(prompt)
        surfaced = nudge.items["statement"].tolist()
        rows.append({"ts": t, "session": sess, "store": store, "kind": "message", "text": prompt,
                     "surfaced": surfaced, "propensity": 1.0, "regime": nudge.regime})
        world.drift(rng, state, (store, s))
        if surfaced:
            stmt = surfaced[0]
            p = world.p_true(state, store, s, stmt)
            signal = "confirm" if world.answer(rng, p) else "disconfirm"
        else:
            prefers = state[(store, s)][0]
            if rng.random() < world.noise:
                prefers = "b" if prefers == "a" else "a"
            stmt = world.situations.iloc[s]["option_" + prefers]
            p, signal = world.p_true(state, store, s, stmt), "confirm"
        matcher = world.draw_matcher(rng, s)
        t2 = t + pd.Timedelta(seconds=45)
        eng.update(matcher, stmt, signal, now=t2)
        rows.append({"ts": t2, "session": sess, "store": store, "kind": "prediction_update",
                     "matcher": matcher, "statement": stmt, "signal": signal, "p_true": p})
    return finish_log(rows)


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
    list of DataFrame
        One log per setting, in ``params_list`` order.

    Raises
    ------
    ParamsError
        An entry of ``params_list`` that is neither None nor ScoringParams.

    See Also
    --------
    simulate : One setting.

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
    params = _checked_settings(params_list)
    n_sessions = session_count(n_sessions)
    if not params:
        return []
    emb = world.lookup_embedder() if embedder is None else embedder
    draws = SessionDraws(world, n_sessions, seed)
    space = TextSpace(world, emb, draws)
    out: list = [None] * len(params)
    template = None
    for (dedup, near), members in _lockstep_groups(params).items():
        if not space.supports(dedup, near):
            for j in members:
                out[j] = simulate(world, params[j], n_sessions, seed, emb)
            continue
        run = Lockstep(world, space, draws, [params[j] for j in members], dedup)
        if template is None:
            template = finish_log(run.rows(0))      # one log validated; the others share its columns
        for r, j in enumerate(members):
            out[j] = run.frame(r, template)
    return out


def _checked_settings(params_list) -> list:
    """Every setting as ScoringParams (``None``: production's defaults); anything else raises."""
    params = []
    for j, p in enumerate(list(params_list)):
        p = ScoringParams() if p is None else p
        if not isinstance(p, ScoringParams):
            raise ParamsError(f"params_list[{j}]: expected ScoringParams, got {type(p).__name__}")
        params.append(p)
    return params


def _lockstep_groups(params: list) -> dict:
    """Positions of the settings that can advance together, by (dedup threshold, whether the
    release drops near-duplicate nudge items), in order of first appearance."""
    groups: dict = {}
    for j, p in enumerate(params):
        groups.setdefault((float(p.dedup_cosine), drops_near_duplicates(p)), []).append(j)
    return groups
