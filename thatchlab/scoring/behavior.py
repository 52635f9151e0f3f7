"""The agent's self-discipline rules: "when situation X, do Y" (seed 003).

:class:`BehaviorEngine` is the scoring engine with the behavior tables,
codify (confidence-neutral) and ham/spam feedback (confirm/disconfirm), and
version-stamped default seeding into the ``global`` store. We follow
production's seeding rule: lookup by the ``seed-key:`` stamp, never touching
behaviors without a stamp.
"""

from __future__ import annotations

import json
import re
from importlib import resources

import pandas as pd

from thatchlab.core.errors import InputError
from thatchlab.core.params import BEHAVIOR_SIGNALS
from thatchlab.scoring.engine import EngineConfig, Reply, ScoringEngine, _check_text

__all__ = ["BehaviorEngine", "BEHAVIOR_CONFIG", "default_behaviors", "laziness_flags"]

BEHAVIOR_CONFIG = EngineConfig(
    kind="behavior", noun="behavior", plural="behaviors",
    header="[thatch] Situational behaviors", verb_untested="consider", verb_tested="do",
    signals=BEHAVIOR_SIGNALS, create_signal="codify", created_word="codified")

_STAMP_KEY = re.compile(r"seed-key:(\S+)")
_STAMP_VERSION = re.compile(r"seed-version:(\S+)")


def default_behaviors() -> pd.DataFrame:
    """The default behaviors shipped with thatchlab (key, situation, behavior, rationale)."""
    text = resources.files("thatchlab").joinpath("data/default_behaviors.json").read_text("utf-8")
    return pd.DataFrame(json.loads(text), columns=["key", "situation", "behavior", "rationale"])


class BehaviorEngine(ScoringEngine):
    """Situational behaviors of the agent, scored like predictions.

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

    def codify(self, situation: str, behavior: str, rationale=None, store=None, now=None) -> Reply:
        """The ``behavior_codify`` tool: create or link a rule; confidence unchanged."""
        return self._write(situation, behavior, "codify", rationale, store, now)

    def feedback(self, behavior: str, relevant: bool, context: str = "", store=None, now=None, *,
                 vector=None) -> Reply:
        """Ham (``relevant=True`` → confirm) or spam (→ disconfirm) for the
        behavior nearest to ``behavior`` (raw cosine ≥ dedup_cosine) in ``store``.

        ``vector`` is ``behavior``'s passage vector when already embedded (replays)."""
        _check_text("behavior", behavior)
        if not isinstance(relevant, bool):
            if relevant in (0, 1):
                relevant = bool(relevant)
            else:
                raise InputError(f"relevant: expected true or false, got {relevant!r}")
        if context is not None and not isinstance(context, str):
            raise InputError(f"context: expected text, got {type(context).__name__}")
        store = self.project_store if store is None else store
        _check_text("store", store)
        from thatchlab.core.time import iso_ms, iso_s, resolve_now

        t = resolve_now(now, self.clock)
        ipos = self._find_in_store(behavior, store, vector)
        if ipos is None:
            return Reply(text=f'No behavior matching "{behavior}" found in "{store}".',
                         action="not_found", store=store)
        signal = "confirm" if relevant else "disconfirm"
        detail = f"{'ham' if relevant else 'spam'}: {context or ''}"
        self._apply_signal(ipos, signal, iso_ms(t))
        self._record(ipos, signal, detail, iso_s(t))
        return Reply(text=f'[{signal}] "{self._i["statement"][ipos]}" {self._counts_text(ipos)}',
                     action=signal, store=self._i["store"][ipos], item_id=self._i["id"][ipos],
                     signal=signal, confidence=self._i["confidence"][ipos],
                     confirm_count=self._i["confirm_count"][ipos],
                     disconfirm_count=self._i["disconfirm_count"][ipos])

    def seed_defaults(self, version: str, now=None, defaults: pd.DataFrame | None = None) -> pd.DataFrame:
        """Seed the default behaviors into ``global``, idempotently across versions.

        For each default (key, situation, behavior, rationale): a ``global``
        behavior whose rationale carries ``seed-key:{key}`` with the same
        ``seed-version`` is skipped; with another version it is deleted and
        re-created (the matcher is reused); behaviors without a stamp are never
        touched. Returns one row per default with the action taken.
        """
        _check_text("version", version)
        if any(ch.isspace() for ch in version):
            raise InputError(f"version: expected no whitespace, got {version!r}")
        defaults = default_behaviors() if defaults is None else defaults
        actions = []
        for row in defaults.itertuples(index=False):
            found = None
            for j, (store, rat) in enumerate(zip(self._i["store"], self._i["rationale"])):
                if store == "global" and rat:
                    m = _STAMP_KEY.search(rat)
                    if m and m.group(1) == row.key:
                        found = j
                        break
            if found is not None:
                mv = _STAMP_VERSION.search(self._i["rationale"][found])
                if mv and mv.group(1) == version:
                    actions.append({"key": row.key, "action": "skipped"})
                    continue
                self._delete_item(found)
                action = "replaced"
            else:
                action = "created"
            rationale = f"{row.rationale} seed-key:{row.key} seed-version:{version}"
            self._seed_one(row.situation, row.behavior, rationale, now)
            actions.append({"key": row.key, "action": action})
        return pd.DataFrame(actions, columns=["key", "action"])

    def _seed_one(self, situation, behavior, rationale, now):
        """Codify into ``global`` always creating a new behavior (never linking
        to someone else's rule), reusing a near-identical global matcher."""
        self._write(situation, behavior, "codify", rationale, "global", now, force_new=True)


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

    >>> laziness_flags("Skip the tests when the change looks small")
    ['skip_checks']
    >>> laziness_flags("Run the full test suite before every commit")
    []
    """
    if not isinstance(text, str):
        raise InputError(f"text: expected text, got {type(text).__name__}")
    low = text.lower()
    return [name for name, pat in _LAZY_PATTERNS.items() if re.search(pat, low)]
