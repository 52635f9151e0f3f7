"""ai-memory's confidence pipeline: derive, decay, shadow observations, calibration.

A memory's confidence is derived from observable signals (age, atom
derivation, corroboration) blended toward a per-source baseline as it ages,
decays with a half-life on recall touches, is observed in shadow beside the
caller's value, and is calibrated per (namespace, source) with consumption
utility from the recall ledger, as ai-memory does.

The report follows an ai-memory release (``release=``, default the newest):
``v0.7.0`` reports count, median, mean and buckets; ``a78a228`` backfills
outcomes and adds consumption utility and the consume/access divergence;
``0a5770a`` takes an audience — the admin sweep, or one caller's readable
rows (:class:`CalibrationAudience`, refused with production's text by
:class:`CallerRequiredError`).

Production's edges are kept, each with its example:

* ``derive`` and ``decayed`` use production's formula shape,
  ``exp(−age·ln 2 / hl)`` (not ``2 ** (−age / hl)``), in its operation order
  with the C library's ``exp`` and ``log10``: bit-identical to the same
  expression in plain Python floats; production's compiled code can differ
  only where it fuses a multiply-add, by at most 1 ulp;
* the signal record keeps the stored corroboration count as an exact
  integer (``-5`` stays ``-5``, ``2**53 + 1`` stays exact) while derive uses
  ``max(n, 0)`` in floats;
* consumption utility is consumed / judged with *every* non-null outcome
  judged, legacy ``recalled`` and ``skipped`` included: one ``recalled`` row
  gives 0.0, not None; None only when nothing is judged;
* the ASCII table prints a missing utility as ``n/a`` and ``-0.0`` as
  ``0.00``;
* the window is ``observed_at >= now − days`` with no upper bound and
  ``days`` in 0..=36500: ``days=0`` keeps a row an hour after ``now``;
* the window and GC compare ``observed_at`` as RFC 3339 *text* against the
  cutoff written with ``+00:00`` and 0, 3, 6 or 9 fractional digits; a row
  stored as ``2025-12-11T19:19:39Z`` with now
  ``2025-12-12T19:19:39.890849474Z`` and ``days=1`` is inside the window and
  survives GC, since ``'Z' > '.'``, although it is 0.89 s older than the
  cutoff ``2025-12-11T19:19:39.890849474+00:00``.
"""

from thatchlab.calibration._derive import (
    EPS,
    LN2,
    SIGNAL_FIELDS,
    confidence_tier,
    decayed,
    derive,
    derive_signals,
    freshness_factor,
    recall_score,
    signals_json,
)
from thatchlab.calibration._features import recall_features

__all__ = [
    "recall_features",
    "EPS",
    "LN2",
    "derive",
    "derive_signals",
    "signals_json",
    "freshness_factor",
    "decayed",
    "confidence_tier",
    "recall_score",
    "ConfidenceSource",
    "CONFIDENCE_SOURCES",
    "CalibrationParams",
    "CalibrationReport",
    "CalibrationState",
    "SIGNAL_FIELDS",
    "shadow_sample",
    "backfill_recall_outcomes",
    "calibrate_from_shadow",
    "gc_observations",
    "OBSERVATION_COLUMNS",
    "MEMORY_COLUMNS",
    "LEDGER_ABSENT_WARNING",
    "cutoff_text",
    "observed_at_text",
    "OBSERVED_AT_TEXT",
    "MAX_WINDOW_DAYS",
    "CalibrationAudience",
    "CallerRequiredError",
    "CALLER_REQUIRED_REFUSAL",
    "REPORT_COLUMNS",
    "DIVERGENCE_FIELDS",
]

from thatchlab.calibration._audience import (  # noqa: E402
    CALLER_REQUIRED_REFUSAL,
    CalibrationAudience,
    CallerRequiredError,
)
from thatchlab.calibration._report import DIVERGENCE_FIELDS, REPORT_COLUMNS, CalibrationReport  # noqa: E402
from thatchlab.calibration._shadow import (  # noqa: E402
    LEDGER_ABSENT_WARNING,
    MAX_WINDOW_DAYS,
    OBSERVATION_COLUMNS,
    OBSERVED_AT_TEXT,
    backfill_recall_outcomes,
    calibrate_from_shadow,
    cutoff_text,
    gc_observations,
    observed_at_text,
    shadow_sample,
)
from thatchlab.calibration._state import (  # noqa: E402
    CONFIDENCE_SOURCES,
    MEMORY_COLUMNS,
    CalibrationParams,
    CalibrationState,
    ConfidenceSource,
)
