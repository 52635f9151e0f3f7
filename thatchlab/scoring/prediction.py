"""The user decision model: "when X, the user tends to Y" (thatch's prediction engine).

:class:`PredictionEngine` is the scoring engine configured with the
prediction tables, the confirm/disconfirm/soft/create signals and the
prediction reply texts. Only user feedback moves confidence; untested
predictions stay at the prior and nothing decays with time.
"""

from __future__ import annotations

from thatchlab.core.params import PREDICTION_SIGNALS
from thatchlab.scoring.engine import EngineConfig, Reply, ScoringEngine

__all__ = ["PredictionEngine", "PREDICTION_CONFIG"]

PREDICTION_CONFIG = EngineConfig(
    kind="prediction", noun="prediction", plural="predictions",
    header="[thatch] User decision model", verb_untested="you may prefer", verb_tested="you tend to",
    signals=PREDICTION_SIGNALS, create_signal="create", created_word="created")


class PredictionEngine(ScoringEngine):
    """Predictions of the user's decisions, exactly as production thatch scores them.

    >>> from thatchlab.embed import LookupEmbedder
    >>> emb = LookupEmbedder({"writing tests": [1, 0], "use pytest": [0, 1],
    ...                       "I am writing tests now": [1, 0.1]})
    >>> eng = PredictionEngine(emb)
    >>> eng.update("writing tests", "use pytest", "confirm", "said so",
    ...            now="2026-01-01T00:00:00Z").text
    '[created + confirm] "use pytest" confidence=0.58 (1/0)'
    >>> print(eng.nudge("I am writing tests now").text)
    [thatch] User decision model
    - [0.58 conf, 1 tests] When writing tests: you tend to use pytest
    """

    config = PREDICTION_CONFIG

    def update(self, matcher: str, prediction: str, signal: str, rationale=None, store=None,
               now=None, *, vectors=None) -> Reply:
        """The ``prediction_update`` tool: one transaction of matcher dedup,
        prediction dedup, link, signal and provenance.

        ``vectors`` are the passage vectors of ``(matcher, prediction)`` when
        already embedded (replays); ``reply.result`` is the
        :class:`~thatchlab.scoring.WriteResult`."""
        return self.write(matcher, prediction, signal, rationale, store, now, vectors=vectors)
