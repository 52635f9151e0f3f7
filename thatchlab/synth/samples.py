"""The worlds behind the bundled sample interaction logs, and the prior planted in them.

``data/interactions.jsonl`` and ``data/behavior_interactions.jsonl`` (also
bundled under :mod:`thatchlab.datasets`) are :func:`sample_interaction_logs`
written with :func:`thatchlab.logs.write_interaction_log`, byte for byte.
"""

from __future__ import annotations

import pandas as pd

from thatchlab.synth.behavior import BehaviorWorld
from thatchlab.synth.preference import PreferenceWorld

__all__ = ["SAMPLE_PRIOR", "sample_interaction_logs"]

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

    Returns
    -------
    (DataFrame, DataFrame)
        The preference log (6,000 rows) and the behavior log.
    """
    world = PreferenceWorld(n_users=60, n_situations=12, phrasings_per_situation=4, drift_rate=0.0,
                            noise=0.0, seed=2026, prior=SAMPLE_PRIOR)
    behaviors = BehaviorWorld(n_situations=10, phrasings_per_situation=3, mislink_rate=0.3, seed=2026)
    return world.log(3000), behaviors.log(300)
