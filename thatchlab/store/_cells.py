"""Cell converters shared by the store sections: Python values SQLite accepts."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = ["opt", "time_text"]


def opt(v):
    """None for every flavour of missing (None, NA, NaT, NaN); numpy scalars as Python values."""
    if v is None or v is pd.NA or v is pd.NaT or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, np.generic):
        return v.item()
    return v


def time_text(v):
    """An aware time as full-precision ISO text with ``Z`` (None when missing)."""
    v = opt(v)
    return None if v is None else pd.Timestamp(v).tz_convert("UTC").strftime("%Y-%m-%dT%H:%M:%S.%fZ")
