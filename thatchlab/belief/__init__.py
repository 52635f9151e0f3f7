"""The belief model of seed 001: currency instead of clock-based forgetting.

A memory row's read-side *currency* halves every half-life since it was last
evidenced (``0.5 ** (age / half_life)``); named-date claims are current until
their ``valid_to`` and history after it; bands split currency into current,
fading and history. Only evidence events (restated, contradicted, resolved,
review, delete) change a row; reads never write and nothing changes on time
alone. New claims pass an admission gate that consults a judge only for
close neighbours.

Public names: :func:`compute_currency`, :func:`currency_band`,
:func:`derive_half_life_days`, :data:`BELIEF_PRIORS`, :class:`BeliefParams`,
:class:`BeliefStore`, :func:`admit` and the judges :class:`OracleJudge`,
:class:`SimilarityJudge`, :class:`CallableJudge`.
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
    derive_half_life_days,
    evidence_clock,
)
from thatchlab.belief._store import MEMORY_COLUMNS, BeliefStore
from thatchlab.core.params.belief import (
    BELIEF_BANDS,
    BELIEF_CLASSES,
    BELIEF_PRIORS,
    BELIEF_STATUSES,
    BELIEF_VIEWS,
    EVIDENCE_EVENTS,
    BeliefParams,
)

__all__ = [
    "compute_currency", "currency_band", "derive_half_life_days", "evidence_clock",
    "currency_reference", "band_reference", "BELIEF_PRIORS", "BELIEF_CLASSES", "BELIEF_STATUSES",
    "BELIEF_BANDS", "BELIEF_VIEWS", "EVIDENCE_EVENTS", "BeliefParams", "BeliefStore",
    "MEMORY_COLUMNS", "admit", "Judgment", "JUDGE_EVENTS", "OracleJudge", "SimilarityJudge",
    "CallableJudge",
]
