"""Parameters and vocabularies of omi's belief model.

A belief's currency halves every half-life since it was last evidenced; the
half-life comes from the belief's class. The per-class priors are omi's
hand-set guesses, kept here as :class:`BeliefParams` fields so replays and fits can
vary them. ``thatchlab.belief`` re-exports :data:`BELIEF_PRIORS`.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from thatchlab.core.errors import ParamsError
from thatchlab.core.params._base import ParamsBase, check_int, check_number
from thatchlab.core.params._releases import latest_release, resolve_release

__all__ = [
    "BeliefParams", "BELIEF_PRIORS", "BELIEF_CLASSES", "BELIEF_STATUSES", "BELIEF_BANDS",
    "BELIEF_VIEWS", "EVIDENCE_EVENTS", "MEMORY_LOG_KINDS", "NO_DECAY_MEMORY_KINDS",
    "MEMORY_TIERS", "RELEASE_VIEWS", "SOURCE_AUTHORITY", "OWNER_AUTHORSHIP_MIN", "USER_SUBJECT_SCOPE",
]

#: Belief classes, each with a half-life prior (a :class:`BeliefParams` field).
BELIEF_CLASSES = ("identity", "relationship", "preference", "state", "plan", "episodic",
                  "meta_residue", "meta_standing")
#: Stored ``status`` values of a memory row.
BELIEF_STATUSES = ("active", "contradicted", "superseded")
#: Currency bands, from most to least current.
BELIEF_BANDS = ("current", "fading", "history")
#: Views of :meth:`thatchlab.belief.BeliefStore.view` under release ``4d5d5c5``.
BELIEF_VIEWS = ("useful_now", "history", "all")
#: The views each omi release reads with: ``17fecf7`` follows ``belief_model.py`` (blob 275b9e2f),
#: whose list view selector also knows ``released`` (the list as shipped before the belief model).
RELEASE_VIEWS = MappingProxyType({"4d5d5c5": BELIEF_VIEWS,
                                  "17fecf7": ("released", "useful_now", "history", "all")})
#: omi's source order (``belief_source_policy.py`` @d3bbcc94): ordering values on a 0-5 scale,
#: not confidences. A user-asserted record ranks ``user_direct``.
SOURCE_AUTHORITY = MappingProxyType({"unknown": 0, "assistant": 0, "inferred": 1, "third_party": 1,
                                     "screen": 2, "user_spoken": 3, "user_written": 4, "user_direct": 5})
#: The lowest source authority that counts as owner-authored (``user_spoken``): a record below it
#: never passes the proactive bar of release ``17fecf7``.
OWNER_AUTHORSHIP_MIN = SOURCE_AUTHORITY["user_spoken"]
#: The subject scope that is bound to the account: two records about it are about the same subject.
USER_SUBJECT_SCOPE = "primary_user"
#: Events that may touch a stored row (``unrelated`` writes nothing).
EVIDENCE_EVENTS = ("restated", "contradicted", "resolved", "unrelated", "review", "delete")
#: The ``kind`` column of a memory log.
MEMORY_LOG_KINDS = ("write",) + EVIDENCE_EVENTS + ("read",)
#: Memory kinds (the row's ``kind``) that never decay when no class is known.
NO_DECAY_MEMORY_KINDS = ("document", "trigger")
#: Tiers seen in production rows; only ``short_term`` changes the derived half-life.
MEMORY_TIERS = ("short_term", "long_term", "archive")


def _prior(name, value):
    if value is None:
        return None
    return check_number(name, value, lo=0, lo_open=True)


@dataclass(frozen=True)
class BeliefParams(ParamsBase):
    """Half-life priors per belief class and the evidence/admission settings.

    A prior of ``None`` means the class never decays (currency stays 1.0).
    Defaults are omi's priors and production's constants.

    Parameters
    ----------
    identity : float or None, default=None
        Half-life in days of identity beliefs (``None`` = no decay).
    relationship : float or None, default=None
        Half-life in days of relationship beliefs.
    preference : float or None, default=180.0
        Half-life in days of preferences.
    state : float or None, default=30.0
        Half-life in days of states.
    plan : float or None, default=30.0
        Half-life in days of plans without a named ``valid_to``.
    episodic : float or None, default=7.0
        Half-life in days of episodic memories.
    meta_residue : float or None, default=1.0
        Half-life in days of session residue.
    meta_standing : float or None, default=None
        Half-life in days of standing instructions.
    contradiction_factor : float, default=0.0
        Confidence is multiplied by this on an applied contradiction (0.0 = production, which
        sets it to 0).
    supersede : bool, default=True
        Whether an authoritative contradiction naming a new row supersedes the old one.
    min_score : float, default=0.75
        The admission judge is consulted only for neighbours with similarity ``>= min_score``.
    k : int, default=5
        How many nearest rows the admission gate retrieves per claim.
    automation_paused : bool, default=False
        omi's incident stop (``MEMORY_BELIEF_AUTOMATION_PAUSED``, release ``17fecf7`` only):
        admission consults no judge and judged evidence events write nothing, while reads,
        reviews and deletes go on.
    release : str, default="17fecf7"
        The omi evidence code replayed (``"4d5d5c5"``, ``"17fecf7"``; ``"latest"``: the
        newest). See :mod:`thatchlab.belief` for what each one does.

    Attributes
    ----------
    priors : mapping
        Belief class → half-life in days (or ``None``), read-only.
    views : tuple of str
        The read views of this release.

    Raises
    ------
    ParamsError
        A field outside its domain, an unknown release, or ``automation_paused`` under
        ``4d5d5c5``.

    See Also
    --------
    ScoringParams, CalibrationParams, AnticipationParams : The other engines' parameters.

    Examples
    --------
    >>> p = BeliefParams(preference=90)
    >>> p.priors["preference"], p.priors["identity"], p.half_life_for("episodic")
    (90.0, None, 7.0)
    """

    identity: float | None = None
    relationship: float | None = None
    preference: float | None = 180.0
    state: float | None = 30.0
    plan: float | None = 30.0
    episodic: float | None = 7.0
    meta_residue: float | None = 1.0
    meta_standing: float | None = None
    contradiction_factor: float = 0.0
    supersede: bool = True
    min_score: float = 0.75
    k: int = 5
    automation_paused: bool = False
    release: str = latest_release("omi")

    def _validate(self) -> dict:
        out = {c: _prior(c, getattr(self, c)) for c in BELIEF_CLASSES}
        if not isinstance(self.supersede, bool):
            raise ParamsError(f"supersede: expected True or False, got {self.supersede!r}")
        if not isinstance(self.automation_paused, bool):
            raise ParamsError(f"automation_paused: expected True or False, got {self.automation_paused!r}")
        release = resolve_release("omi", self.release)
        if self.automation_paused and release == "4d5d5c5":
            raise ParamsError("automation_paused: release '4d5d5c5' has no automation pause (it came with "
                              "'17fecf7'); use release='17fecf7' or leave automation_paused False")
        out.update(
            contradiction_factor=check_number("contradiction_factor", self.contradiction_factor,
                                              lo=0, hi=1),
            min_score=check_number("min_score", self.min_score, lo=-1, hi=1),
            k=check_int("k", self.k, lo=1),
            release=release,
        )
        return out

    @property
    def views(self) -> tuple:
        """The read views of this release (``released`` came with ``17fecf7``)."""
        return RELEASE_VIEWS[self.release]

    @property
    def priors(self) -> MappingProxyType:
        """Read-only mapping belief class → half-life in days (or ``None``)."""
        return MappingProxyType({c: getattr(self, c) for c in BELIEF_CLASSES})

    def half_life_for(self, belief_class: str) -> float | None:
        """The prior of one class; an unknown class raises :class:`ParamsError`.

        Parameters
        ----------
        belief_class : str
            One of :data:`BELIEF_CLASSES`.

        Returns
        -------
        float or None
            The half-life in days (``None``: the class never decays).

        Raises
        ------
        ParamsError
            ``belief_class`` is not a belief class.
        """
        if belief_class not in BELIEF_CLASSES:
            raise ParamsError(f"belief_class: expected one of {list(BELIEF_CLASSES)}, "
                              f"got {belief_class!r}")
        return getattr(self, belief_class)


#: omi's half-life priors (days) per belief class; ``None`` = no decay.
BELIEF_PRIORS = BeliefParams().priors
