"""Parameters of the anticipation engine (mnemo: temporal pattern mining and prefetch)."""

from __future__ import annotations

import zoneinfo
from dataclasses import dataclass

import pandas as pd

from thatchlab.core.errors import ParamsError
from thatchlab.core.params._base import ParamsBase, check_choice, check_int, check_number
from thatchlab.core.params._releases import latest_release, resolve_release

__all__ = ["AnticipationParams", "SEQUENTIAL_MODES", "parse_duration"]

#: ``seed`` counts every (A, B) pair as mnemo's SQL does (production, the default); ``fraction``
#: counts A occurrences (thatchlab's study option).
SEQUENTIAL_MODES = ("fraction", "seed")


def parse_duration(name: str, value) -> pd.Timedelta:
    """Parse a positive duration (``"24h"``, ``"30d"``, a Timedelta) or raise ParamsError.

    Parameters
    ----------
    name : str
        The field's name, for the error message.
    value : str or pandas.Timedelta
        The duration.

    Returns
    -------
    pandas.Timedelta
        The duration, greater than zero.

    Raises
    ------
    ParamsError
        ``value`` is not a duration or not positive.

    Examples
    --------
    >>> parse_duration("window", "24h").total_seconds()
    86400.0
    """
    try:
        td = pd.Timedelta(value)
    except (TypeError, ValueError):
        raise ParamsError(f"{name}: expected a duration such as '24h' or '30d', got {value!r}") from None
    if td is pd.NaT or pd.isna(td) or td <= pd.Timedelta(0):
        raise ParamsError(f"{name}: expected a positive duration, got {value!r}")
    return td


@dataclass(frozen=True)
class AnticipationParams(ParamsBase):
    """Mining thresholds, prefetch size and round-trip costs of the anticipation engine.

    Defaults follow mnemo's description: a 24 h sequential window, 30 days of history,
    at least 3 observations and confidence above 0.5, top-3 prefetch, about
    200 ms and 150 tokens per recall round-trip. ``slot_hours`` must divide 24.
    ``mode="seed"`` (the default) counts pairs as mnemo's SQL does; ``"fraction"`` is thatchlab's
    study option. ``release`` is ``"seed"``, mnemo's only production.

    Parameters
    ----------
    window : str, default="24h"
        Sequential window: B must follow A strictly within it.
    lookback : str, default="30d"
        Mining covers ``[now - lookback, now)``.
    min_obs : int, default=3
        Fewest observations of a pattern (every pattern type).
    min_conf : float, default=0.5
        Confidence must exceed this (sequential, conditional, co-occurrence).
    min_share : float, default=0.5
        Periodic patterns: the topic's smallest share of its slot's recalls (thatchlab's rule).
    slot_hours : int, default=2
        Width of a periodic slot in hours, a divisor of 24.
    timezone : str, default="UTC"
        IANA time zone the periodic slots are cut in.
    k : int, default=3
        Facts prefetched per session.
    latency_ms_per_recall : float, default=200.0
        Milliseconds one recall round-trip costs, for the savings estimate.
    tokens_per_recall : float, default=150.0
        Tokens one recall round-trip costs, for the savings estimate.
    mode : {"seed", "fraction"}, default="seed"
        How sequential confidence counts: mnemo's pair count, or the share of A followed by B.
    release : str, default="seed"
        The mnemo release replayed.

    Attributes
    ----------
    window_td, lookback_td : pandas.Timedelta
        ``window`` and ``lookback`` as Timedeltas.

    Raises
    ------
    ParamsError
        A field outside its domain (a bad duration, a slot width not dividing 24, an unknown
        time zone or mode).

    See Also
    --------
    ScoringParams, BeliefParams, CalibrationParams : The other engines' parameters.

    Examples
    --------
    >>> p = AnticipationParams()
    >>> p.window, p.lookback, p.k, p.mode, p.release
    ('24h', '30d', 3, 'seed', 'seed')
    >>> p.replace(min_conf=0.7).min_conf
    0.7
    """

    window: str = "24h"
    lookback: str = "30d"
    min_obs: int = 3
    min_conf: float = 0.5
    min_share: float = 0.5
    slot_hours: int = 2
    timezone: str = "UTC"
    k: int = 3
    latency_ms_per_recall: float = 200.0
    tokens_per_recall: float = 150.0
    mode: str = "seed"
    release: str = latest_release("mnemo")

    def _validate(self) -> dict:
        window = self.window if isinstance(self.window, str) else str(parse_duration("window", self.window))
        lookback = self.lookback if isinstance(self.lookback, str) else str(
            parse_duration("lookback", self.lookback))
        parse_duration("window", window)
        parse_duration("lookback", lookback)
        slot_hours = check_int("slot_hours", self.slot_hours, lo=1, hi=24)
        if 24 % slot_hours:
            raise ParamsError(f"slot_hours: expected a divisor of 24 (1, 2, 3, 4, 6, 8, 12, 24), got {self.slot_hours!r}")
        try:
            zoneinfo.ZoneInfo(str(self.timezone))
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            raise ParamsError(f"timezone: expected an IANA time zone name such as 'UTC' or "
                              f"'Europe/Paris', got {self.timezone!r}") from None
        return dict(
            window=window,
            lookback=lookback,
            min_obs=check_int("min_obs", self.min_obs, lo=1),
            min_conf=check_number("min_conf", self.min_conf, lo=0),
            min_share=check_number("min_share", self.min_share, lo=0, hi=1),
            slot_hours=slot_hours,
            timezone=str(self.timezone),
            k=check_int("k", self.k, lo=1),
            latency_ms_per_recall=check_number("latency_ms_per_recall", self.latency_ms_per_recall, lo=0),
            tokens_per_recall=check_number("tokens_per_recall", self.tokens_per_recall, lo=0),
            mode=check_choice("mode", self.mode, SEQUENTIAL_MODES),
            release=resolve_release("mnemo", self.release),
        )

    @property
    def window_td(self) -> pd.Timedelta:
        """The sequential window as a Timedelta."""
        return pd.Timedelta(self.window)

    @property
    def lookback_td(self) -> pd.Timedelta:
        """The mining lookback as a Timedelta."""
        return pd.Timedelta(self.lookback)
