"""The judged recall touches of a recall log as the rows the derive coefficients are fitted on."""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.core.dtypes import native_times
from thatchlab.core.errors import InputError, TimeError
from thatchlab.core.frames import float_column, plain_columns
from thatchlab.core.time import utc_column

__all__ = ["recall_features"]

_DAY_NS = 86_400 * 10**9
_NAT = np.iinfo(np.int64).min


def recall_features(recalls: pd.DataFrame) -> pd.DataFrame:
    """``ts, age_days, is_atom, corroboration, consumed`` of the judged touches of a recall log.

    ``age_days = (ts − created_at)`` in days (or an ``age_days`` column as given).

    Parameters
    ----------
    recalls : DataFrame
        A recall log: ``ts``, ``created_at`` (or ``age_days``), ``is_atom``,
        ``corroboration`` and ``consumed`` (null = not judged).

    Returns
    -------
    DataFrame
        One row per judged touch: ``ts`` (when the log has it), ``age_days``,
        ``is_atom`` (bool), ``corroboration`` (float) and ``consumed`` (0.0 or
        1.0).

    Raises
    ------
    InputError
        When a column is missing.

    Examples
    --------
    >>> from thatchlab.synth.recall import RecallWorld
    >>> list(recall_features(RecallWorld(n_memories=10, n_recalls=30, seed=1).log).columns)
    ['ts', 'age_days', 'is_atom', 'corroboration', 'consumed']
    """
    if not isinstance(recalls, pd.DataFrame):
        raise InputError(f"recalls: expected a pandas DataFrame, got {type(recalls).__name__}")
    need = ("is_atom", "corroboration", "consumed")
    missing = [c for c in need if c not in recalls.columns]
    if missing or not ({"ts", "created_at"} <= set(recalls.columns) or "age_days" in recalls.columns):
        raise InputError(f"recalls: missing column(s) {missing or ['ts', 'created_at']}; expected a recall "
                         "log (ts, created_at, is_atom, corroboration, consumed) or an age_days column")
    recalls = plain_columns(recalls).reset_index(drop=True)
    judged_rows = np.flatnonzero(recalls["consumed"].notna().to_numpy(bool))
    judged = recalls.take(judged_rows).reset_index(drop=True)
    ts = _utc_ns(recalls["ts"], "ts").take(judged_rows).reset_index(drop=True) if "ts" in recalls.columns else None
    if "age_days" in judged.columns:
        age = float_column(recalls["age_days"], "recalls", "age_days")[judged_rows]
    else:
        created = _utc_ns(recalls["created_at"], "created_at").array.asi8[judged_rows]
        age = (ts.array.asi8 - created) / _DAY_NS
        age[(created == _NAT) | (ts.array.asi8 == _NAT)] = np.nan       # a missing time: no age
    corr = float_column(recalls["corroboration"], "recalls", "corroboration")[judged_rows]
    for name, values in (("age_days" if "age_days" in judged.columns else "created_at", age), ("corroboration", corr)):
        if np.isnan(values).any():      # a judged touch the fit cannot place
            row = int(judged_rows[np.flatnonzero(np.isnan(values))[0]])
            raise InputError(f"recalls row {row}, column {name!r}: expected a value on a judged touch, got null")
    out = pd.DataFrame({"age_days": age, "is_atom": judged["is_atom"].astype(bool).to_numpy(),
                        "corroboration": corr,
                        "consumed": judged["consumed"].astype(bool).astype(np.float64).to_numpy()})
    if ts is not None:
        out.insert(0, "ts", ts)
    return out


def _utc_ns(col: pd.Series, name: str) -> pd.Series:
    """A time column as ``datetime64[ns, UTC]`` (Arrow timestamps read as pandas' own; text parsed,
    a naive time taken as UTC); a cell that is no time raises :class:`TimeError` naming its row."""
    try:
        return pd.to_datetime(native_times(col), utc=True).dt.as_unit("ns")
    except (ValueError, TypeError, OverflowError):   # pandas' parse errors: name the cell instead
        utc_column(col.reset_index(drop=True), f"recalls.{name}")    # raises, naming the row
        raise TimeError(f"recalls.{name}: expected aware times") from None
