"""The configuration that tells a scoring engine which of thatch's two engines it is.

Production thatch runs the same four-table engine twice, once for predictions
and once for behaviors; they differ only in table names, nouns, reply wording
and the signals a write accepts. :class:`EngineConfig` holds those differences.
"""

from __future__ import annotations

from dataclasses import dataclass

from thatchlab.core.schema import ENGINE_TABLES

__all__ = ["EngineConfig"]


@dataclass(frozen=True)
class EngineConfig:
    """What distinguishes the prediction and behavior engines.

    Parameters
    ----------
    kind : str
        ``"prediction"`` or ``"behavior"``: the table names' family.
    noun, plural : str
        ``"prediction"``/``"predictions"`` or ``"behavior"``/``"behaviors"``.
    header : str
        The nudge block's header.
    verb_untested, verb_tested : str
        The verb of a line when the evidence count is 0, and otherwise.
    signals : tuple of str
        The signals a write may carry.
    create_signal : str
        The confidence-neutral signal (``"create"`` / ``"codify"``).
    created_word : str
        ``"created"`` / ``"codified"``.

    Attributes
    ----------
    tables : dict
        The production table names of the engine's kind.
    """

    kind: str                   # "prediction" | "behavior"
    noun: str                   # "prediction" | "behavior"
    plural: str                 # "predictions" | "behaviors"
    header: str                 # nudge block header
    verb_untested: str          # verb when evidence_count == 0
    verb_tested: str            # verb otherwise
    signals: tuple              # signals a write may carry
    create_signal: str          # the confidence-neutral signal ("create" / "codify")
    created_word: str           # "created" / "codified"

    @property
    def tables(self) -> dict:
        """The production table names of the engine's kind (``ENGINE_TABLES[kind]``)."""
        return ENGINE_TABLES[self.kind]
