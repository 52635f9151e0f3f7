"""Signal logs read for the prior: which rows confirm, disconfirm or soften an item, and how often.

A signal log is checked and reduced to flags per row, then to each item's weighted confirm and
disconfirm totals (:func:`signal_counts`) or to the counts every signal saw just before it, in log
order (:func:`signal_sequence`). These are the data both objectives of the prior are read on.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.core.dtypes import factorize, is_text_dtype
from thatchlab.core.errors import InputError
from thatchlab.core.frames import key_column, plain_columns

__all__ = ["signal_counts", "signal_sequence"]

_POSITIVE = ("confirm",)
_NEGATIVE = ("disconfirm",)
_IGNORED = ("create", "codify")


def _signal_column(signals: pd.DataFrame) -> pd.Series:
    """The checked ``signal`` column of a signal log (InputError naming the first bad row)."""
    if not isinstance(signals, pd.DataFrame):
        raise InputError(f"signals: expected a DataFrame with columns item_id, signal, "
                         f"got {type(signals).__name__}")
    missing = [col for col in ("item_id", "signal") if col not in signals.columns]
    if missing:
        raise InputError(f"signals: missing column(s) {missing}; expected item_id, signal")
    sig = signals["signal"].astype(object)
    known = sig.isin(_POSITIVE + _NEGATIVE + ("soft",) + _IGNORED)
    if not known.all():
        row = int(np.flatnonzero(~known.to_numpy())[0])
        raise InputError(f"signals row {row}, column 'signal': expected one of "
                         f"{list(_POSITIVE + _NEGATIVE + ('soft',) + _IGNORED)}, got {sig.iloc[row]!r}")
    return sig


def _signal_flags(signals: pd.DataFrame) -> dict:
    """A checked signal log as arrays: signals, item ids and codes, and confirm/disconfirm/soft flags.

    Items are coded once (``pd.factorize``, in order of first appearance); a
    missing item id raises :class:`InputError` naming its row.
    """
    if isinstance(signals, pd.DataFrame):
        signals = plain_columns(signals)
    if isinstance(signals, pd.DataFrame) and "item_id" in signals.columns and "signal" in signals.columns \
            and is_text_dtype(signals["signal"].dtype) and is_text_dtype(signals["item_id"].dtype):
        return _text_signal_flags(signals)
    sig = _signal_column(signals)
    item = key_column(signals["item_id"], "signals", "item_id").to_numpy()
    codes, items = pd.factorize(item)
    if codes.size and codes.min() < 0:
        row = int(np.flatnonzero(codes < 0)[0])
        raise InputError(f"signals row {row}, column 'item_id': expected an item id, got {item[row]!r}")
    return {"signal": sig.to_numpy(), "item": item, "codes": codes, "items": items,
            "conf": sig.isin(_POSITIVE).to_numpy(), "dis": sig.isin(_NEGATIVE).to_numpy(),
            "soft": (sig == "soft").to_numpy()}


def _text_signal_flags(signals: pd.DataFrame) -> dict:
    """:func:`_signal_flags` of ``string``/Arrow/categorical columns: both coded through their
    distinct values (no object per row), the same arrays and the same errors."""
    known_names = _POSITIVE + _NEGATIVE + ("soft",) + _IGNORED
    s_codes, s_values = factorize(signals["signal"])
    known = np.append(np.isin(s_values, np.array(known_names, dtype=object)), False)[s_codes]
    if not known.all():
        row = int(np.flatnonzero(~known)[0])
        got = signals["signal"].iloc[row]
        raise InputError(f"signals row {row}, column 'signal': expected one of {list(known_names)}, "
                         f"got {None if pd.isna(got) else got!r}")
    codes, items = factorize(signals["item_id"])
    if codes.size and codes.min() < 0:
        row = int(np.flatnonzero(codes < 0)[0])
        raise InputError(f"signals row {row}, column 'item_id': expected an item id, got None")

    def flag(names):
        return np.isin(s_values, np.array(names, dtype=object))[s_codes]

    return {"signal": s_values[s_codes], "item": items[codes], "codes": codes, "items": items,
            "conf": flag(_POSITIVE), "dis": flag(_NEGATIVE), "soft": flag(("soft",))}


def _counts(flags: dict, soft_weight: float) -> pd.DataFrame:
    """:func:`signal_counts` of :func:`_signal_flags`: integer tallies per item, then ``d = n_dis + w·n_soft``."""
    codes, m = flags["codes"], len(flags["items"])
    c = np.bincount(codes, weights=flags["conf"], minlength=m)
    d = np.bincount(codes, weights=flags["dis"], minlength=m)
    if flags["soft"].any():
        d = d + float(soft_weight) * np.bincount(codes, weights=flags["soft"], minlength=m)
    return pd.DataFrame({"item_id": flags["items"], "c": c, "d": d})


def _sequence(flags: dict, soft_weight: float) -> pd.DataFrame:
    """:func:`signal_sequence` of :func:`_signal_flags`: per-item tallies before each row, then ``d``."""
    codes = flags["codes"]
    order = np.argsort(codes, kind="stable")  # each item's rows together, in log order
    ranked = codes[order]
    first = np.ones(ranked.size, dtype=bool)
    first[1:] = ranked[1:] != ranked[:-1]
    start = np.maximum.accumulate(np.where(first, np.arange(ranked.size), 0))

    def before(flag):  # how many of the item's earlier rows carry ``flag`` (integer tallies: exact)
        ranked_flag = flag[order].astype(np.int64)
        run = np.cumsum(ranked_flag) - ranked_flag
        out = np.empty(ranked.size, dtype=np.float64)
        out[order] = run - run[start]
        return out

    soft = flags["soft"]
    d = before(flags["dis"])
    if soft.any():
        d = d + float(soft_weight) * before(soft)
    scored = flags["conf"] | flags["dis"] | soft
    out = pd.DataFrame({"item_id": flags["item"], "signal": flags["signal"], "c": before(flags["conf"]),
                        "d": d, "y": flags["conf"].astype(np.float64),
                        "weight": np.where(soft, float(soft_weight), 1.0)})
    return out[scored].reset_index(drop=True)


def signal_counts(signals: pd.DataFrame, soft_weight: float = 0.25) -> pd.DataFrame:
    """Per-item counts ``c`` (confirms) and ``d`` (disconfirms + soft_weight × softs).

    ``create``/``codify`` signals change no count; other signals, and a
    missing item id, raise :class:`~thatchlab.core.errors.InputError` naming
    the row. Items in order of first appearance; ``d`` is the disconfirm
    tally plus ``soft_weight`` times the soft tally.

    Parameters
    ----------
    signals : DataFrame
        A signal log with columns ``item_id`` and ``signal`` (``confirm``,
        ``disconfirm``, ``soft``, ``create`` or ``codify``).
    soft_weight : float, default=0.25
        What a ``soft`` signal adds to ``d`` (production's 0.25).

    Returns
    -------
    DataFrame
        One row per item: ``item_id``, ``c``, ``d``.

    Raises
    ------
    InputError
        When ``signals`` is no frame, lacks a column, or a row holds an
        unknown signal or no item id.

    See Also
    --------
    signal_sequence : The counts before each signal, in log order.

    Examples
    --------
    >>> s = pd.DataFrame({"item_id": ["a", "a", "b"], "signal": ["confirm", "soft", "create"]})
    >>> signal_counts(s).to_dict("list")
    {'item_id': ['a', 'b'], 'c': [1.0, 0.0], 'd': [0.25, 0.0]}
    """
    return _counts(_signal_flags(signals), soft_weight)


def signal_sequence(signals: pd.DataFrame, soft_weight: float = 0.25) -> pd.DataFrame:
    """One row per forecastable signal, in log order, with the item's counts just before it.

    The rows of ``signals`` are taken in the order the signals happened. For
    each ``confirm``/``disconfirm``/``soft`` row: ``c`` and ``d`` are the
    item's confirm count and disconfirm weight from the item's earlier rows
    (a confirm adds 1 to ``c``, a disconfirm 1 to ``d``, a soft
    ``soft_weight`` to ``d``: ``d`` is the earlier disconfirms plus
    ``soft_weight`` times the earlier softs); ``y`` = 1 for a confirm, 0
    otherwise; ``weight`` = 1, or ``soft_weight`` for a soft. Per-item
    running tallies (one stable sort by item), no loop over signals.
    ``create``/``codify`` rows are dropped.

    Parameters
    ----------
    signals : DataFrame
        A signal log with columns ``item_id`` and ``signal``, rows in the
        order the signals happened.
    soft_weight : float, default=0.25
        What a ``soft`` signal adds to ``d``, and its ``weight``.

    Returns
    -------
    DataFrame
        One row per scored signal: ``item_id``, ``signal``, ``c``, ``d``,
        ``y``, ``weight``.

    Raises
    ------
    InputError
        As :func:`signal_counts`.

    See Also
    --------
    signal_counts : Each item's totals.

    Examples
    --------
    >>> s = pd.DataFrame({"item_id": ["a", "a", "b", "a"], "signal": ["confirm", "soft", "create", "confirm"]})
    >>> signal_sequence(s)[["item_id", "c", "d", "y", "weight"]].values.tolist()
    [['a', 0.0, 0.0, 1.0, 1.0], ['a', 1.0, 0.0, 0.0, 0.25], ['a', 1.0, 0.25, 1.0, 1.0]]
    """
    return _sequence(_signal_flags(signals), soft_weight)
