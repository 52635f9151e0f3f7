"""ai-memory's confidence pipeline: derive, decay, shadow observations, calibration.

A memory's confidence is derived from observable signals (age, atom
derivation, corroboration) blended toward a per-source baseline as it ages,
decays with a half-life on recall touches, is observed in shadow beside the
caller's value, and is calibrated per (namespace, source) with consumption
utility from the recall ledger, as ai-memory does.

:func:`calibrate_from_shadow` reports one row per (namespace, source),
sorted by namespace then source, over ``derived_confidence``: the count, the
median (the mean of the two middle values for an even count), the mean, 10
buckets ``min(int(clamp(v, 0, 1)·10), 9)`` and ``consumption_utility =
consumed / judged``, where *judged* is every non-null ``recall_outcome`` and
only ``consumed`` counts above the line (None when nothing in the group is
judged).

The report follows an ai-memory release (``release=``, default the newest,
``CalibrationParams().release``), after ``alphaonedev/ai-memory-mcp``
``src/confidence/calibrate.rs``:

* ``v0.7.0`` (release/v0.7.0) reports count, median, mean and buckets only:
  no utility, no divergence and no backfill (``ledger`` is not read); its
  ``days`` is not range-checked, so a negative one puts the cutoff after
  ``now``;
* ``a78a228`` (@a78a2284), with a ``ledger`` given, first backfills the NULL
  outcomes from it (:func:`backfill_recall_outcomes`, as the sweep does
  before it aggregates); its rows add ``consumption_utility`` and
  ``consume_access_divergence``, whose access counts come from ``memories``
  (``id``, ``access_count``) by a left join: an observation without its
  memory, or with no ``memories`` given, counts access 0;
* ``0a5770a`` (@0a5770af) takes an audience. ``audience=None`` or
  ``"admin"`` is ``a78a228`` exactly (``"admin"`` names that sweep; an agent
  literally called ``admin`` is ``CalibrationAudience.for_caller("admin")``).
  A caller (an agent id, or a :class:`CalibrationAudience`) needs
  ``memories``, keeps only the observations whose memory exists and which
  the caller may read (visibility, lifecycle, and no substrate namespace on
  the observation or on the memory; see
  :mod:`thatchlab.calibration._audience`), and never backfills; an empty,
  anonymous or ill-shaped caller raises :class:`CallerRequiredError` with
  production's refusal text. Earlier releases take no caller.

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
* the window is ``observed_at >= now − days`` (inclusive) with no upper
  bound and ``days`` in 0..=36500 (anything else raises, ``v0.7.0``
  excepted): ``days=0`` keeps the rows at or after ``now``, a row an hour
  after ``now`` included;
* the window and GC compare ``observed_at`` as RFC 3339 *text* against the
  cutoff written as :func:`cutoff_text` does, with ``+00:00`` and 0, 3, 6 or
  9 fractional digits; a row stored as ``2025-12-11T19:19:39Z`` with now
  ``2025-12-12T19:19:39.890849474Z`` and ``days=1`` is inside the window and
  survives GC, since at the first difference ``'Z' > '.'``, although it is
  0.89 s older than the cutoff ``2025-12-11T19:19:39.890849474+00:00``.
  Text is compared as stored (``observed_at`` given as strings, or the
  ``observed_at_text`` column of
  :func:`thatchlab.logs.read_shadow_observations`); timestamps are compared
  as the text thatchlab writes for them (:func:`observed_at_text`), which
  orders like the instants.

That last edge on a one-row frame:

>>> import pandas as pd
>>> z = pd.DataFrame({"namespace": ["a"], "source": ["user"], "observed_at": ["2025-12-11T19:19:39Z"],
...                   "derived_confidence": [0.5], "recall_outcome": [None]})
>>> calibrate_from_shadow(z, "2025-12-12T19:19:39.890849474Z", days=1).total_observations
1
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
