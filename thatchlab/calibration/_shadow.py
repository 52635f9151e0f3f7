"""Shadow observations of ai-memory's confidence: sampling, backfill, report, GC.

Shadow mode records, for a sample of recall touches, the caller's confidence
beside the value the derive engine would have computed; an offline sweep
backfills each observation's recall outcome from the consumption ledger and
aggregates a per-(namespace, source) calibration report. Shadow never changes
the caller's value. Public names are re-exported by :mod:`thatchlab.calibration`.

As in production: the report's window is ``observed_at >= now − days`` with
no upper bound (``days`` in 0..=36500, so ``days=0`` keeps rows at or after
``now``); the window and GC compare the stored ``observed_at`` text with the
cutoff written as ``…+00:00`` (``2025-12-11T19:19:39Z`` is inside the 1-day
window ending ``2025-12-12T19:19:39.890849474Z`` because ``'Z' > '.'``);
consumption utility counts every non-null outcome as judged, legacy
``recalled``/``skipped`` included; the signal record keeps the stored
corroboration count as an exact integer.
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

from thatchlab.calibration._audience import (
    CalibrationAudience,
    is_substrate_namespace,
    readable_memories,
)
from thatchlab.calibration._derive import derive, derive_signals, signals_json
from thatchlab.calibration._report import CalibrationReport, empty_rows, report_rows
from thatchlab.calibration._window import (
    MAX_WINDOW_DAYS,
    before_cutoff,
    cutoff_ns,
    cutoff_text,
    finite_days,
    observed_at_text,
    window_days,
)
from thatchlab.core.dtypes import is_text_dtype, native_times
from thatchlab.core.errors import InputError, warn
from thatchlab.core.frames import float_column, key_column, need_columns
from thatchlab.core.params import at_least, latest_release, resolve_release
from thatchlab.core.params.calibration import CalibrationParams
from thatchlab.core.schema import OBSERVATION_COLUMNS, OBSERVED_AT_TEXT
from thatchlab.core.time import as_utc, utc_column

__all__ = ["OBSERVATION_COLUMNS", "LEDGER_ABSENT_WARNING", "shadow_sample", "backfill_recall_outcomes",
           "calibrate_from_shadow", "gc_observations", "cutoff_text", "observed_at_text",
           "OBSERVED_AT_TEXT", "MAX_WINDOW_DAYS"]

LEDGER_ABSENT_WARNING = "recall_observations ledger absent, skipping consumption utility backfill"
_DAY_NS = 86_400 * 10**9


def _rng(rng) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        return np.random.default_rng(int(rng))
    raise InputError(f"rng: expected a numpy.random.Generator or an integer seed, got {rng!r}")


def shadow_sample(recalls: pd.DataFrame, sample_rate, rng, *, params: CalibrationParams | None = None):
    """Shadow observations for a sample of recall touches.

    One draw per row in row order, ``rng.random(len(recalls)) < rate`` with the
    rate clamped to [0, 1]; each kept row records the caller's confidence as
    it was (never changed), and ``derived_confidence = derive(age, is_atom,
    corroboration, params.baseline, params.half_life_days)`` with ``age =
    (ts − created_at)`` in days. ``recall_outcome`` starts NULL.

    Parameters
    ----------
    recalls : DataFrame
        ``memory_id, namespace, source, ts`` (or ``observed_at``), ``caller_confidence``,
        ``created_at`` (or ``age_days``), ``is_atom``, ``corroboration`` — e.g. a recall log.
    sample_rate : float
        The share of rows kept, clamped to [0, 1] (NaN keeps none).
    rng : numpy.random.Generator or int
        The generator of the draws (or an int seed).
    params : CalibrationParams, default=None
        Derive coefficients, half-life and baseline; the defaults when None.

    Returns
    -------
    DataFrame
        :data:`OBSERVATION_COLUMNS`; ``signals`` is the JSON record.

    Raises
    ------
    InputError
        A missing column, a ``sample_rate`` that is not a number, or an
        ``rng`` that is neither a generator nor an int.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> r = pd.DataFrame({"memory_id": ["m1"], "namespace": ["ns"], "source": ["user"],
    ...                   "ts": ["2026-01-31T00:00:00Z"], "caller_confidence": [0.9],
    ...                   "created_at": ["2026-01-01T00:00:00Z"], "is_atom": [False], "corroboration": [0]})
    >>> obs = shadow_sample(r, 1.0, np.random.default_rng(0))
    >>> round(float(obs["derived_confidence"][0]), 6), float(obs["caller_confidence"][0]), obs["recall_outcome"][0]
    (0.493069, 0.9, None)
    """
    params = params if params is not None else CalibrationParams()
    tcol = "ts" if "ts" in getattr(recalls, "columns", ()) else "observed_at"
    acol = "created_at" if "created_at" in getattr(recalls, "columns", ()) else "age_days"
    recalls = need_columns(recalls, "shadow_sample recalls", ("memory_id", "namespace", "source", tcol,
                                                               "caller_confidence", acol, "is_atom", "corroboration"))
    keep = _rng(rng).random(len(recalls)) < _rate(sample_rate)
    caller = float_column(recalls["caller_confidence"], "shadow_sample recalls", "caller_confidence")[keep]
    float_column(recalls["corroboration"], "shadow_sample recalls", "corroboration")   # text refused by row
    sub = recalls.loc[keep]
    observed = utc_column(sub[tcol].reset_index(drop=True), f"recalls.{tcol}")
    age = _ages(sub, acol, observed, np.flatnonzero(keep))
    atom = pd.notna(sub["is_atom"]).to_numpy() & sub["is_atom"].to_numpy(object).astype(bool)
    counts = pd.to_numeric(sub["corroboration"], errors="coerce")
    if pd.api.types.is_integer_dtype(counts.dtype):
        # integers go through as stored, so the signal record keeps them exact (2**53 + 1, -5)
        corr = counts.fillna(0).to_numpy(np.int64)
    else:
        corr = np.nan_to_num(counts.to_numpy(np.float64))
    kw = params.derive_kwargs()
    derived = derive(age, atom, corr, **kw)
    sig = derive_signals(age, atom, corr, kw["baseline"], kw["half_life_days"])
    return pd.DataFrame({
        "memory_id": sub["memory_id"].to_numpy(object),
        "namespace": sub["namespace"].to_numpy(object),
        "source": sub["source"].to_numpy(object),
        "observed_at": observed,
        "caller_confidence": caller,
        "derived_confidence": np.asarray(derived, dtype=np.float64).reshape(-1),
        "signals": pd.Series(signals_json(sig) if len(sub) else [], dtype=object),
        "recall_outcome": pd.Series([None] * len(sub), dtype=object),
    })


def _ages(sub: pd.DataFrame, acol: str, observed: pd.Series, rows: np.ndarray) -> np.ndarray:
    """Each kept touch's age in days: ``ts − created_at`` (a missing ``created_at`` raises, naming
    the row of ``recalls``), or the ``age_days`` given."""
    if acol != "created_at":
        return sub["age_days"].to_numpy(np.float64)
    created = utc_column(sub["created_at"].reset_index(drop=True), "recalls.created_at")
    missing = created.isna().to_numpy()
    if missing.any():
        raise InputError(f"shadow_sample recalls row {int(rows[np.flatnonzero(missing)[0]])}, column "
                         "'created_at': expected an aware time, got null")
    return (observed.array.asi8 - created.array.asi8) / _DAY_NS


def _rate(sample_rate) -> float:
    """The sample rate clamped to [0, 1] (NaN keeps none); InputError unless it is a number."""
    try:
        rate = float(sample_rate)
    except (TypeError, ValueError):
        raise InputError(f"sample_rate: expected a number in [0, 1], got {sample_rate!r}") from None
    return 0.0 if np.isnan(rate) else min(max(rate, 0.0), 1.0)


def _consumed(values, what) -> np.ndarray:
    s = pd.Series(values)
    if s.dtype == bool:
        return s.to_numpy()
    mapped = s.map(lambda v: {True: 1.0, False: 0.0, "true": 1.0, "false": 0.0, "1": 1.0, "0": 0.0}.get(v, v)
                   if isinstance(v, (bool, str, np.bool_)) else v)
    num = pd.to_numeric(mapped, errors="coerce").to_numpy(np.float64)
    bad = ~np.isin(num, (0.0, 1.0)) & ~np.isnan(num)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"{what}: row {i}, column 'consumed': expected 0/1 or true/false, got {s.iloc[i]!r}")
    return num == 1.0


def backfill_recall_outcomes(obs: pd.DataFrame, ledger: pd.DataFrame | None):
    """Fill NULL ``recall_outcome`` from the recall-observations ledger, joined on memory_id.

    A NULL outcome becomes ``consumed`` when any ledger row of the memory is
    consumed, ``unconsumed`` when rows exist but none is, and stays NULL with
    no ledger row; outcomes already set are kept. A missing ledger (``None``)
    warns and updates nothing. The input is not modified.

    Parameters
    ----------
    obs : DataFrame
        Shadow observations with ``memory_id`` (and ``recall_outcome``; NULL
        everywhere when absent).
    ledger : DataFrame or None
        The recall-observations ledger: ``memory_id`` and ``consumed`` (0/1
        or true/false).

    Returns
    -------
    observations : DataFrame
        A copy of ``obs`` with outcomes filled.
    n_updated : int
        How many outcomes were filled.

    Raises
    ------
    InputError
        A missing column, or a ``consumed`` value that is not 0/1 or
        true/false.

    Examples
    --------
    >>> import pandas as pd
    >>> obs = pd.DataFrame({"memory_id": ["a", "b", "c"], "recall_outcome": [None, None, None]})
    >>> led = pd.DataFrame({"memory_id": ["a", "a", "b"], "consumed": [0, 1, 0]})
    >>> out, n = backfill_recall_outcomes(obs, led)
    >>> out["recall_outcome"].tolist(), n
    (['consumed', 'unconsumed', None], 2)
    """
    obs = need_columns(obs, "backfill observations", ("memory_id",))
    out = obs.copy()
    if "recall_outcome" not in out.columns:
        out["recall_outcome"] = None
    outcome = out["recall_outcome"].astype(object)
    out["recall_outcome"] = outcome.where(outcome.notna(), None)  # NULL is None in any text dtype
    if ledger is None:
        warn(LEDGER_ABSENT_WARNING, UserWarning)
        return out, 0
    ledger = need_columns(ledger, "recall_observations ledger", ("memory_id", "consumed"))
    ids = key_column(ledger["memory_id"], "recall_observations ledger", "memory_id")
    any_consumed = pd.Series(_consumed(ledger["consumed"].to_numpy(), "recall_observations ledger"),
                             index=ids.to_numpy()).groupby(level=0).any()
    verdict = pd.Series(np.where(any_consumed.to_numpy(), "consumed", "unconsumed"),
                        index=any_consumed.index, dtype=object)
    mapped = out["memory_id"].map(verdict)
    fill = out["recall_outcome"].isna() & mapped.notna()
    out.loc[fill, "recall_outcome"] = mapped[fill]
    return out, int(fill.sum())


def calibrate_from_shadow(obs: pd.DataFrame, now, days=30, *, audience=None, memories=None, ledger=None,
                          release=None) -> CalibrationReport:
    """Aggregate shadow observations into the per-(namespace, source) calibration report.

    Keeps the rows with ``observed_at >= now − days``, compared as production
    compares them (the stored text against :func:`cutoff_text`), and reports
    per group the count, median, mean, buckets and, from ``a78a228`` on, the
    consumption utility and the consume/access divergence. The exact rules of
    the window, the aggregates and each release are in :mod:`thatchlab.calibration`.

    Parameters
    ----------
    obs : DataFrame
        Shadow observations: ``namespace``, ``source``, ``observed_at``,
        ``derived_confidence`` and, for utility, ``recall_outcome`` (and
        ``memory_id`` for the joins).
    now : aware time
        The end of the window (engines never read the clock).
    days : float, default=30
        The window's length in days: 0..=36500 (``v0.7.0``: any finite number).
    audience : CalibrationAudience, str or None, default=None
        ``None`` or ``"admin"`` for the global sweep, else a caller (``0a5770a`` on).
    memories : DataFrame, default=None
        ai-memory's memories (``id``, ``access_count``, ``namespace``,
        ``metadata``, ``lifecycle_state``); needed for a caller.
    ledger : DataFrame, default=None
        The recall-observations ledger the admin sweep backfills from.
    release : str, default=None
        The ai-memory release; the newest when None.

    Returns
    -------
    CalibrationReport
        The report of the observations in the window.

    Raises
    ------
    InputError
        A caller under a release before ``0a5770a``, ``days`` out of range,
        a missing column, a caller without ``memories``, duplicate memory
        ids, a text ``access_count``, or a cutoff outside the years pandas
        represents.
    CallerRequiredError
        An empty, anonymous or ill-shaped caller.

    See Also
    --------
    backfill_recall_outcomes : The backfill the admin sweep runs first.
    gc_observations : Deletes the observations older than a retention.

    Examples
    --------
    >>> import pandas as pd
    >>> obs = pd.DataFrame({"namespace": ["a", "a"], "source": ["user", "user"],
    ...     "observed_at": pd.to_datetime(["2026-01-01", "2026-01-02"], utc=True),
    ...     "derived_confidence": [0.4, 0.7], "recall_outcome": ["consumed", None]})
    >>> print(calibrate_from_shadow(obs, "2026-01-02T00:00:00Z", days=1).to_ascii(), end="")
    CONFIDENCE CALIBRATION REPORT (window: 1 days, observations: 2)
    <BLANKLINE>
    NAMESPACE                 SOURCE         COUNT  MEDIAN    MEAN    UTIL  HISTOGRAM (0.0..1.0)
    a                         user               2    0.55    0.55    1.00  ....#..#..
    """
    rel, aud = _release_and_audience(release, audience)
    judges = at_least("ai-memory", rel, "a78a228")
    d = window_days(days) if judges else finite_days(days)
    obs, memories = _check_tables(obs, aud, memories)
    if judges and aud.is_admin and ledger is not None:
        obs, _ = backfill_recall_outcomes(obs, ledger)
    before, present = before_cutoff(obs, cutoff_ns(now, d, days))
    mask = present & ~before          # a missing time never falls in a window
    pos = None if memories is None else _memory_positions(obs, memories)
    access = _access_per_row(memories, pos) if judges and pos is not None else None
    if not aud.is_admin:
        mask &= _caller_reads(obs, memories, aud.caller, pos)
    n = int(mask.sum())
    rows = report_rows(obs, np.flatnonzero(mask), access=access, release=rel) if n else empty_rows(rel)
    return CalibrationReport(window_days=int(d) if d == int(d) else d, total_observations=n, rows=rows,
                             release=rel, audience=aud.caller)


def _release_and_audience(release, audience):
    """The resolved release and audience; a caller needs release ``0a5770a`` or later."""
    rel = resolve_release("ai-memory", latest_release("ai-memory") if release is None else release)
    aud = CalibrationAudience.coerce(audience)
    if not aud.is_admin and not at_least("ai-memory", rel, "0a5770a"):
        raise InputError(f"audience: release {rel!r} of ai-memory aggregates every observation (no caller "
                         f"scope before '0a5770a'); got caller {aud.caller!r}; pass release='0a5770a' or "
                         "audience=None")
    return rel, aud


def _check_tables(obs: pd.DataFrame, aud: CalibrationAudience, memories):
    """``(obs, memories)`` checked for the columns the report reads (:func:`need_columns`); a caller's
    sweep needs ``memories``."""
    obs = need_columns(obs, "calibrate_from_shadow observations",
                       ("namespace", "source", "observed_at", "derived_confidence"))
    if not aud.is_admin and memories is None:
        raise InputError(f"memories: a sweep scoped to caller {aud.caller!r} joins each observation to its "
                         "memory; expected the memories table (id, namespace, metadata, lifecycle_state, "
                         "access_count), got None")
    if memories is not None:
        memories = need_columns(memories, "calibrate_from_shadow memories", ("id",))
    return obs, memories


def _access_per_row(memories: pd.DataFrame, pos: np.ndarray) -> np.ndarray:
    """Per observation, its memory's access count: a left join, 0 without the memory."""
    counts = _access_counts(memories)
    return np.where(pos >= 0, counts.take(np.maximum(pos, 0)) if len(counts) else 0.0, 0.0)


def _caller_reads(obs: pd.DataFrame, memories: pd.DataFrame, caller: str, pos: np.ndarray) -> np.ndarray:
    """Per observation, whether ``caller`` may read it: its memory exists and is readable
    (:func:`readable_memories`) and its namespace is not a substrate namespace."""
    readable = readable_memories(memories, caller)
    joined = pos >= 0
    seen = np.zeros(len(obs), dtype=bool)
    seen[joined] = readable.take(pos[joined])
    own_ns = np.fromiter((is_substrate_namespace(ns) is False for ns in obs["namespace"].tolist()),
                         dtype=bool, count=len(obs))
    return seen & own_ns


def _memory_positions(obs: pd.DataFrame, memories: pd.DataFrame) -> np.ndarray:
    """Per observation, the position of its memory in ``memories`` (``-1``: none; ids are unique)."""
    ids = memories["id"]
    absent = ids.isna().to_numpy(bool)
    if absent.any():
        i = int(np.flatnonzero(absent)[0])
        raise InputError(f"memories: row {i}, column 'id': expected a memory id, got null; ai-memory's "
                         "memories.id is a primary key")
    key_column(ids, "memories", "id")
    dup = ids.duplicated(keep=False)
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise InputError(f"memories: row {i}, column 'id': duplicate id {ids.iloc[i]!r}; ai-memory's "
                         "memories.id is a primary key")
    index = pd.Index(ids.to_numpy(object))
    if "memory_id" not in obs.columns:
        return np.full(len(obs), -1, dtype=np.intp)
    return index.get_indexer(obs["memory_id"].to_numpy(object))


def _access_counts(memories: pd.DataFrame) -> np.ndarray:
    """``COALESCE(access_count, 0)`` per memory; absent column = 0; text raises."""
    if "access_count" not in memories.columns:
        return np.zeros(len(memories))
    values = memories["access_count"].astype(object)
    num = pd.to_numeric(values, errors="coerce")
    bad = num.isna() & values.notna()
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"memories: row {i}, column 'access_count': expected a number, got {values.iloc[i]!r}")
    return num.fillna(0.0).to_numpy(np.float64)


def gc_observations(obs: pd.DataFrame, now, retention_days):
    """Delete observations strictly older than ``now − retention_days``.

    ``retention_days <= 0`` deletes nothing. The input is not modified. The
    age test is production's string comparison, as in
    :func:`calibrate_from_shadow`: a row stored as ``2025-12-11T19:19:39Z``
    with now ``2025-12-12T19:19:39.890849474Z`` and a retention of 1 day is
    kept, although it is 0.89 s older than the cutoff.

    Parameters
    ----------
    obs : DataFrame
        Shadow observations with ``observed_at``.
    now : aware time
        The time of the GC.
    retention_days : float
        How many days of observations are kept.

    Returns
    -------
    kept : DataFrame
        The rows kept, with a fresh ``RangeIndex`` (``string_view`` text comes back as
        ``large_string``: pandas cannot filter a view column).
    n_deleted : int
        How many rows were deleted.

    Raises
    ------
    InputError
        A missing column or a ``retention_days`` that is not a finite number.

    See Also
    --------
    calibrate_from_shadow : The report over the same window test.

    Examples
    --------
    >>> import pandas as pd
    >>> obs = pd.DataFrame({"observed_at": pd.to_datetime(["2026-01-01", "2026-01-10"], utc=True)})
    >>> kept, n = gc_observations(obs, "2026-01-11T00:00:00Z", 9)
    >>> len(kept), n
    (1, 1)
    >>> gc_observations(pd.DataFrame({"observed_at": ["2025-12-11T19:19:39Z"]}),
    ...                 "2025-12-12T19:19:39.890849474Z", 1)[1]
    0
    """
    obs = need_columns(obs, "gc_observations observations", ("observed_at",))
    r = finite_days(retention_days, "retention_days")
    if r <= 0:
        return obs.copy(), 0
    cutoff = as_utc(now, what="now").as_unit("ns").value - int(round(r * _DAY_NS))
    old, _ = before_cutoff(obs, cutoff)
    kept = obs
    for j in range(obs.shape[1]):
        col = obs.iloc[:, j]
        readable = native_times(col) if is_text_dtype(col.dtype) else col     # string_view as large_string
        if readable is not col:
            kept = kept.copy(deep=False) if kept is obs else kept
            kept.isetitem(j, readable)
    return kept.loc[~old].reset_index(drop=True), int(old.sum())
