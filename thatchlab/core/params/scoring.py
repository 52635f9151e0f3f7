"""Parameters of the prediction and behavior scoring engines (thatch)."""

from __future__ import annotations

from dataclasses import dataclass

from thatchlab.core.params._base import ParamsBase, check_choice, check_int, check_number
from thatchlab.core.params._releases import latest_release, resolve_release

__all__ = ["ScoringParams", "PREDICTION_SIGNALS", "BEHAVIOR_SIGNALS", "DEDUP_SCOPES", "RELEASE_DEDUP_SCOPE"]

#: Signals a prediction update may carry; ``soft`` is a fractional disconfirm.
PREDICTION_SIGNALS = ("confirm", "disconfirm", "soft", "create")
#: Provenance signals of the behavior engine (feedback maps ham/spam to confirm/disconfirm).
BEHAVIOR_SIGNALS = ("confirm", "disconfirm", "codify")
DEDUP_SCOPES = ("store+global", "store")
#: The item dedup scope of each thatch release's writes: v0.1.30 searches the target store only,
#: 07ecf87 the target store and ``global``.
RELEASE_DEDUP_SCOPE = {"v0.1.30": "store", "07ecf87": "store+global"}


@dataclass(frozen=True)
class ScoringParams(ParamsBase):
    """Parameters of the shared scoring engine, production defaults.

    Production hard-codes ``k``, ``p0`` and ``soft_weight`` and reads the two
    nudge thresholds from ``THATCH_PREDICTION_THRESHOLD`` /
    ``THATCH_BEHAVIOR_THRESHOLD``; the regime fields are thatchlab's explicit
    version of the ambiguity surfacing production leaves to the LLM.

    ``release`` names the thatch code replayed (``"v0.1.30"``, ``"07ecf87"``; default and
    ``"latest"``: the newest); rules that changed between releases follow it.
    ``dedup_scope=None`` (the default) is the release's own item dedup scope
    (:attr:`item_dedup_scope`); ``"store"`` or ``"store+global"`` override it for studies.

    Parameters
    ----------
    k : float, default=5.0
        Prior strength K of the posterior confidence ``(c + K·P0) / (c + d + K)``: the larger,
        the slower confidence moves (production hard-codes it).
    p0 : float, default=0.5
        Prior mean P0, the confidence a new item starts at (hard-coded).
    soft_weight : float, default=0.25
        What one ``soft`` signal adds to the disconfirm count (hard-coded).
    threshold : float, default=0.60
        Nudge threshold: a matcher whose rounded cosine to the prompt is below it is dropped
        (``THATCH_PREDICTION_THRESHOLD`` / ``THATCH_BEHAVIOR_THRESHOLD``).
    query_threshold : float, default=0.60
        The same threshold for explicit queries (hard-coded).
    dedup_cosine : float, default=0.85
        Raw cosine from which a write reuses an existing matcher or item, and feedback and
        deletes find their item (hard-coded).
    top_matchers : int, default=5
        Matchers kept per prompt after sorting by rounded cosine (hard-coded).
    max_items : int, default=5
        Items shown in one nudge (hard-coded).
    noise_floor : float, default=0.01
        Cosines below it are dropped before rounding (hard-coded).
    min_prompt_chars : int, default=10
        A prompt shorter than this (Python ``len``) gets no nudge: regime ``skipped``.
    dedup_scope : {None, "store", "store+global"}, default=None
        Where a write's item dedup searches; None follows the release.
    min_confidence : float, default=0.0
        Items with a lower stored confidence are not surfaced; production never filters on
        confidence, so 0 reproduces it (a study option).
    strong_confidence : float, default=0.70
        Regime classifier: the stored confidence the top item needs for ``strong``.
    strong_evidence : int, default=3
        Regime classifier: the evidence count the top item needs for ``strong``.
    conflict_margin : float, default=0.10
        Regime classifier: another item of the same matcher within this score margin
        (inclusive) makes the nudge ``ambiguous``.
    release : str, default="07ecf87"
        The thatch release replayed.

    Attributes
    ----------
    item_dedup_scope : str
        The stores a write's item dedup searches: ``dedup_scope`` if set, else the release's.

    Raises
    ------
    ParamsError
        A field outside its domain or an unknown release.

    See Also
    --------
    BeliefParams, CalibrationParams, AnticipationParams : The other engines' parameters.

    Examples
    --------
    >>> ScoringParams().k, ScoringParams(k=10).replace(p0=0.3).p0
    (5.0, 0.3)
    >>> ScoringParams().release, ScoringParams(release="v0.1.30").item_dedup_scope
    ('07ecf87', 'store')
    """

    k: float = 5.0
    p0: float = 0.5
    soft_weight: float = 0.25
    threshold: float = 0.60
    query_threshold: float = 0.60
    dedup_cosine: float = 0.85
    top_matchers: int = 5
    max_items: int = 5
    noise_floor: float = 0.01
    min_prompt_chars: int = 10
    dedup_scope: str | None = None
    min_confidence: float = 0.0
    strong_confidence: float = 0.70
    strong_evidence: int = 3
    conflict_margin: float = 0.10
    release: str = latest_release("thatch")

    def _validate(self) -> dict:
        return dict(
            k=check_number("k", self.k, lo=0, lo_open=True),
            p0=check_number("p0", self.p0, lo=0, hi=1),
            soft_weight=check_number("soft_weight", self.soft_weight, lo=0),
            threshold=check_number("threshold", self.threshold, lo=-1, hi=1),
            query_threshold=check_number("query_threshold", self.query_threshold, lo=-1, hi=1),
            dedup_cosine=check_number("dedup_cosine", self.dedup_cosine, lo=-1, hi=1),
            top_matchers=check_int("top_matchers", self.top_matchers, lo=1),
            max_items=check_int("max_items", self.max_items, lo=1),
            noise_floor=check_number("noise_floor", self.noise_floor, lo=-1, hi=1),
            min_prompt_chars=check_int("min_prompt_chars", self.min_prompt_chars, lo=0),
            dedup_scope=(None if self.dedup_scope is None
                         else check_choice("dedup_scope", self.dedup_scope, DEDUP_SCOPES)),
            min_confidence=check_number("min_confidence", self.min_confidence, lo=0, hi=1),
            strong_confidence=check_number("strong_confidence", self.strong_confidence, lo=0, hi=1),
            strong_evidence=check_int("strong_evidence", self.strong_evidence, lo=0),
            conflict_margin=check_number("conflict_margin", self.conflict_margin, lo=0),
            release=resolve_release("thatch", self.release),
        )

    @property
    def item_dedup_scope(self) -> str:
        """The stores a write's item dedup searches: ``dedup_scope`` if set, else the release's."""
        return self.dedup_scope or RELEASE_DEDUP_SCOPE[self.release]
