"""The agent's self-discipline rules: "when situation X, do Y" (thatch's behavior engine).

:class:`BehaviorEngine` is the scoring engine with the behavior tables,
codify (confidence-neutral) and ham/spam feedback (confirm/disconfirm), and
version-stamped default seeding into the ``global`` store
(:mod:`thatchlab.scoring.seeding`).
"""

from __future__ import annotations

import re

import pandas as pd

from thatchlab.core.docstrings import fill_doc
from thatchlab.core.errors import InputError
from thatchlab.core.params import BEHAVIOR_SIGNALS
from thatchlab.scoring.engine import (
    _ENGINE_PARAMS,
    _STORE_NOW_PARAMS,
    EngineConfig,
    Reply,
    ScoringEngine,
    _check_text,
)
from thatchlab.scoring.seeding import default_behaviors, seed_defaults

__all__ = ["BehaviorEngine", "BEHAVIOR_CONFIG", "default_behaviors", "laziness_flags"]

BEHAVIOR_CONFIG = EngineConfig(
    kind="behavior", noun="behavior", plural="behaviors",
    header="[thatch] Situational behaviors", verb_untested="consider", verb_tested="do",
    signals=BEHAVIOR_SIGNALS, create_signal="codify", created_word="codified")


@fill_doc(engine_params=_ENGINE_PARAMS)
class BehaviorEngine(ScoringEngine):
    """Situational behaviors of the agent, scored like predictions.

    {engine_params}

    Attributes
    ----------
    state : EngineState
        The rows (read-only; only the tools change them).
    dedup_lookup : DedupLookup or None
        Optional source of approximate cosines for the dedup searches.

    See Also
    --------
    PredictionEngine : The same engine over predictions.

    Examples
    --------
    >>> from thatchlab.embed import LookupEmbedder
    >>> emb = LookupEmbedder({"before committing": [1, 0], "run the tests": [0, 1]})
    >>> eng = BehaviorEngine(emb)
    >>> eng.codify("before committing", "run the tests", "caught bugs",
    ...            now="2026-01-01T00:00:00Z").text
    '[codified] project :: "run the tests" for "before committing"'
    >>> eng.feedback("run the tests", True, "fixed a bug", now="2026-01-02T00:00:00Z").text
    '[confirm] "run the tests" confidence=0.58 (1/0)'
    """

    config = BEHAVIOR_CONFIG
    _matcher_arg = "situation"

    @fill_doc(store_now_params=_STORE_NOW_PARAMS)
    def codify(self, situation: str, behavior: str, rationale=None, store=None, now=None, *,
               vectors=None) -> Reply:
        """The ``behavior_codify`` tool: create or link a rule; confidence unchanged.

        Parameters
        ----------
        situation : str
            When the rule applies (the matcher).
        behavior : str
            What to do.
        rationale : str, default=None
            Why; recorded with the rule and in the provenance.
        {store_now_params}
        vectors : pair of array-like, default=None
            The passage vectors of ``(situation, behavior)`` when already
            embedded (replays).

        Returns
        -------
        Reply
            The tool's reply.

        See Also
        --------
        feedback : Confirm or disconfirm a rule.
        """
        return self.write(situation, behavior, "codify", rationale, store, now, vectors=vectors)

    def feedback(self, behavior: str, relevant: bool, context: str = "", store=None, now=None, *,
                 vector=None) -> Reply:
        """Ham (``relevant=True`` → confirm) or spam (→ disconfirm) for the
        behavior nearest to ``behavior`` (raw cosine ≥ dedup_cosine) in ``store``
        (default the project store; from release ``07ecf87`` on, ``"unknown"`` is ``global``).

        Parameters
        ----------
        behavior : str
            The rule's text, searched by cosine.
        relevant : bool
            Ham (True) or spam (False); 1 and 0 are accepted.
        context : str, default=""
            Recorded in the provenance after ``ham:``/``spam:``.
        store : str, default=None
            The store searched; the project store when None.
        now : time, default=None
            The time of the signal; the engine's clock when None.
        vector : array-like, default=None
            ``behavior``'s passage vector when already embedded (replays).

        Returns
        -------
        Reply
            ``confirm``/``disconfirm``, or ``not_found``.

        Raises
        ------
        InputError
            An empty ``behavior``, a ``relevant`` that is not a bool, or a
            ``context`` that is not text.
        """
        _check_text("behavior", behavior)
        if not isinstance(relevant, bool):
            if relevant in (0, 1):
                relevant = bool(relevant)
            else:
                raise InputError(f"relevant: expected true or false, got {relevant!r}")
        if context is not None and not isinstance(context, str):
            raise InputError(f"context: expected text, got {type(context).__name__}")
        store = self._target_store(store)
        signal = "confirm" if relevant else "disconfirm"
        detail = f"{'ham' if relevant else 'spam'}: {context or ''}"
        return self._reply(self._signal(behavior, signal, detail, store, now, vector))

    def seed_defaults(self, version: str, now=None, defaults: pd.DataFrame | None = None) -> pd.DataFrame:
        """Seed the default behaviors into ``global``, idempotently across versions
        (see :func:`thatchlab.scoring.seeding.seed_defaults`).

        Parameters
        ----------
        version : str
            The seed version stamped into each rationale (no whitespace).
        now : time, default=None
            The time of the writes; the engine's clock when None.
        defaults : DataFrame, default=None
            ``key``, ``situation``, ``behavior``, ``rationale``; the bundled
            defaults when None.

        Returns
        -------
        DataFrame
            One row per default: ``key`` and ``action``.
        """
        return seed_defaults(self, version, now=now, defaults=defaults)


#: Phrases that mark a rule as a shortcut rather than a discipline.
_LAZY_PATTERNS = {
    "skip_checks": r"\bskip(ping)?\b.*\b(test|tests|check|checks|review|verification|lint)\b",
    "no_need": r"\b(no need to|don'?t bother|do not bother|needn'?t)\b",
    "assume": r"\bassume\b.*\b(works|correct|fine|passes)\b",
    "without_verifying": r"\bwithout\s+(testing|checking|verifying|reading|running)\b",
    "less_thorough": r"\b(less thorough|cut corners|quick and dirty|good enough)\b",
    "avoid_work": r"\b(avoid|stop)\s+(checking|testing|reading|investigating|verifying)\b",
    "just_answer": r"\bjust\s+(guess|answer|say|claim)\b",
}


def laziness_flags(text: str) -> list[str]:
    """Heuristic check of a proposed rule for shortcuts (the anti-laziness guard).

    Production enforces the guard with a prompt instruction, not code; this
    is a documented heuristic offered to callers: it returns the names of the
    patterns that match (empty when none does). It is deliberately simple
    and will miss paraphrases.

    Parameters
    ----------
    text : str
        A proposed rule.

    Returns
    -------
    list of str
        The names of the matching patterns, in their fixed order.

    Raises
    ------
    InputError
        When ``text`` is not text.

    Examples
    --------
    >>> laziness_flags("Skip the tests when the change looks small")
    ['skip_checks']
    >>> laziness_flags("Run the full test suite before every commit")
    []
    """
    if not isinstance(text, str):
        raise InputError(f"text: expected text, got {type(text).__name__}")
    low = text.lower()
    return [name for name, pat in _LAZY_PATTERNS.items() if re.search(pat, low)]
