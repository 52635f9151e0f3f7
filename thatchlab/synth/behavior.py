"""A world of codified agent behaviors with planted relevance (thatch's behavior engine).

Built on a :class:`~thatchlab.synth.preference.PreferenceWorld`'s situations,
texts, matcher phrasings (through its :meth:`~thatchlab.synth.PreferenceWorld.draw_matcher`
hook) and session spacing; re-exported by :mod:`thatchlab.synth`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.synth._sessions import SESSION_GAP, finish_log
from thatchlab.synth.preference import PreferenceWorld

__all__ = ["BehaviorWorld"]


class BehaviorWorld:
    """Codified agent behaviors whose true relevance is planted.

    Every situation gets its helpful behavior (true relevance drawn in
    [0.75, 0.95]); with probability ``mislink_rate`` a situation also gets
    another situation's behavior codified for it, relevant there only with
    probability in [0.05, 0.25]. Feedback is ham (relevant) with the planted
    probability; the item a behavior resolves to is shared across situations,
    as in production.

    Parameters
    ----------
    n_situations : int, default=10
        Situations of the underlying :class:`~thatchlab.synth.PreferenceWorld` (one user).
    phrasings_per_situation : int, default=3
        Matcher and prompt phrasings per situation.
    mislink_rate : float, default=0.3
        Probability that a situation also gets another situation's behavior.
    seed : int, default=0
        Seed of the world (its preference world, links and logs).
    start : str, default="2026-02-02T09:00:00Z"
        Time of the first session (aware).

    Attributes
    ----------
    world : PreferenceWorld
        The situations, texts and phrasings the behaviors live in.
    links : pandas.DataFrame
        ``situation, behavior, relevance``: every codified link and its planted relevance.

    See Also
    --------
    PreferenceWorld : The same situations with planted preferences.

    Examples
    --------
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
        """Model-free vectors with planted geometry (see :meth:`PreferenceWorld.lookup_embedder`).

        Parameters
        ----------
        dim : int, default=32
            Vector length.
        spread : float, default=0.5
            How far phrasings of one situation sit from their shared centre.

        Returns
        -------
        LookupEmbedder
            Vectors for every matcher, prompt and statement of the world.
        """
        return self.world.lookup_embedder(dim, spread)

    def log(self, n_sessions: int, store: str = "project") -> pd.DataFrame:
        """Codify every link once, then per session a prompt and ham/spam feedback
        (with probability 0.7 per linked behavior); ``p_true`` = planted relevance.

        Parameters
        ----------
        n_sessions : int
            Sessions after the codifying setup.
        store : str, default="project"
            The store every row writes to.

        Returns
        -------
        pandas.DataFrame
            A validated interaction log (``behavior_codify``, ``message`` and
            ``behavior_feedback`` rows).
        """
        rng = np.random.default_rng(self.seed + 5)
        w, rows = self.world, []
        t0 = w.start - pd.Timedelta(days=1)
        for j, r in enumerate(self.links.itertuples()):
            rows.append({"ts": t0 + pd.Timedelta(minutes=j), "session": "setup", "store": store,
                         "kind": "behavior_codify", "matcher": w.draw_matcher(rng, r.situation),
                         "statement": r.behavior, "rationale": "learned from a past session"})
        for k in range(int(n_sessions)):
            s = int(rng.integers(w.n_situations))
            t = w.start + k * SESSION_GAP
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
        return finish_log(rows)
