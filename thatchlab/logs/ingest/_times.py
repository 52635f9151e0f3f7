"""Times as the ingest adapters meet them: ISO text with or without an offset, epoch numbers."""

from __future__ import annotations

from collections import Counter

import pandas as pd

__all__ = ["utc_text"]


def utc_text(value, counter: Counter, what: str):
    """``value`` as aware ISO text in UTC, or None when it is missing or unreadable.

    Naive times are read as UTC and counted under ``naive <what> read as UTC``;
    unreadable ones are counted under ``unreadable <what>``.

    >>> c = Counter()
    >>> utc_text("2026-01-05 09:00:00+02", c, "time"), utc_text("2026-01-05T09:00:00", c, "time")
    ('2026-01-05T07:00:00.000000Z', '2026-01-05T09:00:00.000000Z')
    >>> utc_text("soon", c, "time"), utc_text("9999-01-01T00:00:00Z", c, "time"), dict(c)
    (None, None, {'naive time read as UTC': 1, 'unreadable time': 1, 'time outside 1677-2262 (read as none)': 1})
    """
    if value is None or (isinstance(value, float) and value != value) or value is pd.NaT:
        return None
    if isinstance(value, bool):
        counter[f"unreadable {what}"] += 1
        return None
    try:
        ts = pd.Timestamp(value)
    except (ValueError, TypeError, OverflowError):
        counter[f"unreadable {what}"] += 1
        return None
    if ts is pd.NaT or pd.isna(ts):
        counter[f"unreadable {what}"] += 1
        return None
    if ts.tzinfo is None:
        counter[f"naive {what} read as UTC"] += 1
        ts = ts.tz_localize("UTC")
    try:  # a log's times are nanosecond timestamps: 1677-09-21 to 2262-04-11
        ts.as_unit("ns")
    except (ValueError, OverflowError):
        counter[f"{what} outside 1677-2262 (read as none)"] += 1
        return None
    return ts.tz_convert("UTC").strftime("%Y-%m-%dT%H:%M:%S.%fZ")
