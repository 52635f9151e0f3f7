"""omi's belief model: currency instead of clock-based forgetting.

A memory row's read-side *currency* halves every half-life since it was last
evidenced (``0.5 ** (age / half_life)``); named-date claims are current until
their ``valid_to`` and history after it; bands split currency into current,
fading and history. Only evidence events (restated, contradicted, resolved,
review, delete) change a row; reads never write and nothing changes on time
alone. New claims pass an admission gate that consults a judge only for
close neighbours.

Production's edge cases are reproduced, not tidied away:

* ``valid_to`` is checked before the half-life, so a named-date row with a
  half-life of 0 and ``valid_to`` one second ago has currency 0.0 (band
  ``history``) instead of raising;
* a NaN half-life gives currency NaN, and NaN falls in band ``history``
  (both band thresholds compare false); None stays None;
* the age is an absolute time difference: last evidence at
  ``2026-10-24T02:07:33+01:00`` and now ``2026-10-25T01:07:33+00:00`` are
  86,400 s apart, so a one-day half-life gives exactly 0.5 even where the
  wall clock says 23 hours (the reference functions convert to UTC first);
* a stored half-life wins whatever the class says:
  ``derive_half_life_days(stored=7.0, belief_class="nonsense")`` is 7.0; an
  empty class ``""`` is no class; an unknown class raises only when no
  half-life is stored;
* under release ``4d5d5c5``, a ``contradicted`` event from a less
  authoritative source still lowers the row's confidence (to 0.0 under the
  default ``contradiction_factor``) and marks it contradicted, it just cannot
  supersede; a judgment that names an event but no row is applied to the
  top-scoring neighbour;
* under release ``17fecf7`` (the default: omi's ``belief_evidence.py`` blob
  17fecf7a with ``belief_source_policy.py`` @d3bbcc94 and ``belief_model.py``
  blob 275b9e2f) only eligible rows reach the judge, a candidate needs
  independent authoritative evidence (same subject, disjoint non-empty
  evidence families, source authority above 0 and at least the row's), the
  judge must name a candidate or the claim is ``unrelated``, a less
  authoritative source writes nothing, the event lands at the later of the
  two rows' original evidence times, ``automation_paused`` stops judged
  events, the views add ``released`` and the proactive bar is replayed.
  Rows carry ``source_authority`` (0-5), ``evidence_families``,
  ``evidence_time``, ``eligible`` and ``subject_entity_id``
  (:data:`EVIDENCE_COLUMNS`).

Public names: :func:`compute_currency`, :func:`currency_band`,
:func:`derive_half_life_days`, :data:`BELIEF_PRIORS`, :class:`BeliefParams`,
:class:`BeliefStore`, :func:`admit` and the judges :class:`OracleJudge`,
:class:`SimilarityJudge`, :class:`CallableJudge`; the source policy's
:func:`source_authority`, :func:`same_subject`, :func:`independent_evidence`,
:func:`original_evidence_time` and :data:`SOURCE_AUTHORITY`.
"""

from thatchlab.belief._admit import (
    JUDGE_EVENTS,
    CallableJudge,
    Judgment,
    OracleJudge,
    SimilarityJudge,
    admit,
)
from thatchlab.belief._currency import (
    band_reference,
    compute_currency,
    currency_band,
    currency_reference,
    evidence_clock,
)
from thatchlab.belief._exposure import exposure_segments
from thatchlab.belief._half_life import derive_half_life_days
from thatchlab.belief._policy import (
    EVIDENCE_COLUMNS,
    DerivedAuthority,
    independent_evidence,
    original_evidence_time,
    same_subject,
    source_authority,
)
from thatchlab.belief._store import MEMORY_COLUMNS, BeliefStore
from thatchlab.core.params.belief import (
    BELIEF_BANDS,
    BELIEF_CLASSES,
    BELIEF_PRIORS,
    BELIEF_STATUSES,
    BELIEF_VIEWS,
    EVIDENCE_EVENTS,
    RELEASE_VIEWS,
    SOURCE_AUTHORITY,
    BeliefParams,
)

__all__ = ["exposure_segments",
    "compute_currency", "currency_band", "derive_half_life_days", "evidence_clock",
    "currency_reference", "band_reference", "BELIEF_PRIORS", "BELIEF_CLASSES", "BELIEF_STATUSES",
    "BELIEF_BANDS", "BELIEF_VIEWS", "EVIDENCE_EVENTS", "BeliefParams", "BeliefStore",
    "MEMORY_COLUMNS", "admit", "Judgment", "JUDGE_EVENTS", "OracleJudge", "SimilarityJudge",
    "CallableJudge", "EVIDENCE_COLUMNS", "SOURCE_AUTHORITY", "RELEASE_VIEWS", "source_authority",
    "same_subject", "independent_evidence", "original_evidence_time", "DerivedAuthority",
]
