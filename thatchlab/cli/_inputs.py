"""What the verbs read from their arguments: engine names, parameters, embedders, logs and times.

Each helper validates one kind of argument and raises a
:class:`~thatchlab.core.errors.ThatchlabError` naming the option or the
file, which :func:`thatchlab.cli.main` prints as one ``error:`` line.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from thatchlab import logs
from thatchlab.cli._io import read_mapping
from thatchlab.core.errors import InputError, ParamsError
from thatchlab.core.params.production import ENGINE_PARAMS, production_params
from thatchlab.core.time import as_utc
from thatchlab.embed import (
    BGE_QUERY_PREFIX,
    LookupEmbedder,
    SentenceTransformerEmbedder,
    default_embedder,
    same_model_name,
)
from thatchlab.logs import read_table
from thatchlab.replay import PRODUCTION_MODEL

__all__ = ["SCORING", "REPLAY_ENGINES", "MAX_SECONDS", "CALENDAR", "MAX_SPAN_DAYS", "choice", "check_seconds",
           "check_number", "check_count", "check_calendar", "check_calendar_time", "engine_params", "get_embedder", "model_embedder", "load_log", "parse_time",
           "epoch"]

#: The two engines that replay an interaction log with an embedder.
SCORING = ("prediction", "behavior")
#: Every engine ``replay`` and ``sweep`` accept.
REPLAY_ENGINES = ("prediction", "behavior", "belief", "calibration", "anticipation")


def choice(option: str, value: str, allowed) -> str:
    """``value`` when it is one of ``allowed``, else an InputError naming ``option``.

    >>> choice("--engine", "belief", REPLAY_ENGINES)
    'belief'
    """
    if value not in allowed:
        raise InputError(f"{option}: expected one of {', '.join(allowed)}, got {value!r}")
    return value


#: The longest wait a ``--timeout`` accepts: one day, in seconds.
MAX_SECONDS = 86400.0


def check_number(option: str, value, low: float, high: float, what: str = "number") -> float:
    """``value`` as a float when it is finite and in ``[low, high]``, else an InputError naming
    ``option``, the range and the value given.

    ``nan``, ``inf`` and numbers too large for any use (``1e308``) are refused
    here, before they reach code that would overflow on them.

    >>> check_number("--days", 7, 0, 36500, "number of days")
    7.0
    >>> check_number("--days", float("nan"), 0, 36500, "number of days")
    Traceback (most recent call last):
    ...
    thatchlab.core.errors.InputError: --days: expected a finite number of days between 0 and 36500, got nan
    """
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        x = math.nan
    if not (math.isfinite(x) and low <= x <= high):
        raise InputError(f"{option}: expected a finite {what} between {low:g} and {high:g}, got {value!r}")
    return x


def check_seconds(option: str, value, max: float = MAX_SECONDS) -> float:
    """``value`` when it is a finite number of seconds in ``[0, max]``, else an InputError naming ``option``.

    >>> check_seconds("--timeout", 30.0)
    30.0
    >>> check_seconds("--timeout", float("nan"))
    Traceback (most recent call last):
    ...
    thatchlab.core.errors.InputError: --timeout: expected a finite number of seconds between 0 and 86400, got nan
    """
    return check_number(option, value, 0.0, max, "number of seconds")


def check_count(option: str, value, low: int, high: int, what: str = "an integer") -> int:
    """``value`` when it is an integer in ``[low, high]``, else an InputError naming ``option``,
    the range and the value given.

    >>> check_count("--size", 10, 1, 500000, "a number of sessions")
    10
    >>> check_count("--size", 10**12, 1, 500000, "a number of sessions")
    Traceback (most recent call last):
    ...
    thatchlab.core.errors.InputError: --size: expected a number of sessions between 1 and 500000, got 1000000000000
    """
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InputError(f"{option}: expected {what} between {low} and {high}, got {value!r}")
    return value


def engine_params(engine: str, path: Path | None):
    """Parameters of ``engine`` from a config file (the engine's defaults without one).

    Parameters
    ----------
    engine : str
        An engine name of ``thatchlab run``'s parameter table.
    path : Path or None
        Either ``thatchlab run``'s per-engine config (``{engine: {...}}``,
        other sections ignored) or a flat mapping of this engine's fields.

    Returns
    -------
    ParamsBase
        The engine's parameter dataclass.
    """
    cls = ENGINE_PARAMS[engine]
    if path is None:
        return production_params(engine)
    cfg = read_mapping(path, "config")
    sections = set(ENGINE_PARAMS) | {"sweep"}
    if set(cfg) <= sections and all(isinstance(v, dict) for v in cfg.values()):
        cfg = cfg.get(engine, {})
    try:  # the fields not given are what production runs
        return cls.from_dict({**production_params(engine).to_dict(), **cfg})
    except ParamsError as exc:
        raise ParamsError(f"{path}: {exc}") from None


def get_embedder(lookup: Path | None, model: str | None = None):
    """A LookupEmbedder from a ``text, embedding`` table, a sentence-transformers model, else the bundled one.

    Parameters
    ----------
    lookup : Path or None
        A table (JSONL, CSV or Parquet) with ``text`` and ``embedding`` columns.
    model : str or None
        ``--embedder``: a local sentence-transformers directory or a model name in the
        Hugging Face cache. Production's own model (any copy of bge-small-en-v1.5) is
        run as production runs it: mean pooling, its query prefix, and the tag
        production writes (``Xenova/bge-small-en-v1.5``); any other model as it is,
        tagged with its name (a directory's name).
    """
    if lookup is not None and model is not None:
        raise InputError("--embedder and --lookup: give one source of vectors, not both")
    if model is not None:
        return model_embedder(model)
    if lookup is None:
        return default_embedder()
    table = read_table(lookup, json_columns=["embedding"])
    missing = {"text", "embedding"} - set(table.columns)
    if missing:
        raise InputError(f"{lookup}: missing column(s) {sorted(missing)}; expected a table with text and embedding")
    return LookupEmbedder(table[["text", "embedding"]], name=Path(lookup).stem)


def model_embedder(name_or_path: str):
    """The embedder of ``--embedder NAME_OR_PATH`` (see :func:`get_embedder`).

    >>> emb = model_embedder("/models/bge-small-en-v1.5")
    >>> emb.name, emb.pooling, emb.query_prefix.startswith("Represent this sentence")
    ('Xenova/bge-small-en-v1.5', 'mean', True)
    >>> model_embedder("/models/my-model").name
    'my-model'
    """
    if not isinstance(name_or_path, str) or not name_or_path.strip():
        raise InputError(f"--embedder: expected a model directory or name, got {name_or_path!r}")
    if same_model_name(name_or_path, PRODUCTION_MODEL):
        return SentenceTransformerEmbedder(name_or_path, pooling="mean", query_prefix=BGE_QUERY_PREFIX,
                                           name=PRODUCTION_MODEL)
    return SentenceTransformerEmbedder(name_or_path)


def load_log(engine: str, path: Path, recalls: Path | None = None):
    """Read and validate the log ``engine`` replays.

    Parameters
    ----------
    engine : str
        One of :data:`REPLAY_ENGINES`.
    path : Path
        The interaction, memory or recall log; for anticipation the event stream.
    recalls : Path or None
        Anticipation only: the recall stream (required).

    Returns
    -------
    DataFrame, or ``(events, recalls)`` for anticipation.
    """
    if engine in SCORING:
        return logs.read_interaction_log(path)
    if engine == "belief":
        log = logs.read_memory_log(path)
        check_calendar([(path, log, ["ts"])], path)
        return log
    if engine == "calibration":
        log = logs.read_recall_log(path)
        check_calendar([(path, log, ["ts", "created_at"])], path)
        return log
    if recalls is None:
        raise InputError("--recalls: the anticipation engine needs the recall stream (LOG is the event stream)")
    ev, rc = logs.read_event_log(path), logs.read_recall_stream(recalls)
    check_calendar([(path, ev, ["ts"]), (recalls, rc, ["ts"])], f"{path} and {recalls}")
    return ev, rc


#: The times the engines that count in days (belief half-lives, calibration windows, pattern mining,
#: anticipation) take: pandas' nanosecond range less a margin at each end, so that adding a window,
#: a half-life or a day to a time never leaves it.
CALENDAR = ("1678-01-01", "2262-01-01")
#: The longest stretch one log may cover, in days (a century): a wider one is a time far from the
#: others (a wrong year), which would make every daily or windowed pass run over centuries.
MAX_SPAN_DAYS = 36500


def check_calendar(frames, source) -> None:
    """Fail when a time of ``frames`` is outside :data:`CALENDAR` or they span more than
    :data:`MAX_SPAN_DAYS`; the message names the file, the row, the column and the time.

    Parameters
    ----------
    frames : list of ``(source, DataFrame, columns)``: the logs a verb reads and their time columns.
    source : what to name when the times of several files are compared (the verb's inputs).

    >>> import pandas as pd
    >>> df = pd.DataFrame({"ts": pd.to_datetime(["2026-01-01", "2262-04-10"], utc=True)})
    >>> check_calendar([("log.jsonl", df, ["ts"])], "log.jsonl")
    Traceback (most recent call last):
    ...
    thatchlab.core.errors.InputError: log.jsonl: data row 1, column 'ts': 2262-04-10 00:00:00+00:00 is outside 1678-01-01 to 2262-01-01 (UTC), the times the day-counting engines take (a day, a window or a half-life added to it would leave pandas' range)
    """
    lo, hi = (pd.Timestamp(t, tz="UTC") for t in CALENDAR)
    first = last = None  # (time, file, row, column)
    for name, df, columns in frames:
        for col in columns:
            if col not in df.columns or len(df) == 0:
                continue
            s = pd.to_datetime(df[col], utc=True)
            ok = s.notna().to_numpy()
            bad = ok & ((s < lo) | (s >= hi)).to_numpy()
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise InputError(f"{name}: data row {i}, column {col!r}: {s.iloc[i]} is outside {CALENDAR[0]} to "
                                 f"{CALENDAR[1]} (UTC), the times the day-counting engines take (a day, a window or "
                                 "a half-life added to it would leave pandas' range)")
            if not ok.any():
                continue
            i_min, i_max = int(s.to_numpy().argmin()), int(s.to_numpy().argmax())
            if first is None or s.iloc[i_min] < first[0]:
                first = (s.iloc[i_min], name, i_min, col)
            if last is None or s.iloc[i_max] > last[0]:
                last = (s.iloc[i_max], name, i_max, col)
    if first is not None and (last[0] - first[0]) > pd.Timedelta(days=MAX_SPAN_DAYS):
        days = (last[0] - first[0]).days
        raise InputError(f"{source}: the times span {days} days, from {first[0]} ({first[1]}, data row {first[2]}, "
                         f"column {first[3]!r}) to {last[0]} ({last[1]}, data row {last[2]}, column {last[3]!r}); "
                         f"expected at most {MAX_SPAN_DAYS} days (a century): a time that far from the others is "
                         "likely a wrong year")


def check_calendar_time(at, option: str) -> None:
    """Fail when the time ``at`` an option gave (None passes) is outside :data:`CALENDAR`.

    >>> import pandas as pd
    >>> check_calendar_time(pd.Timestamp("2262-04-01", tz="UTC"), "--now")
    Traceback (most recent call last):
    ...
    thatchlab.core.errors.InputError: --now: 2262-04-01 00:00:00+00:00 is outside 1678-01-01 to 2262-01-01 (UTC), the times the day-counting engines take
    """
    if at is not None and not pd.Timestamp(CALENDAR[0], tz="UTC") <= at < pd.Timestamp(CALENDAR[1], tz="UTC"):
        raise InputError(f"{option}: {at} is outside {CALENDAR[0]} to {CALENDAR[1]} (UTC), the times the "
                         "day-counting engines take")


def parse_time(value: str | None, option: str):
    """An aware ISO time as a UTC Timestamp (``None`` passes through); errors name ``option``."""
    return None if value is None else as_utc(value, what=option)


def epoch():
    """The Unix epoch in UTC (the window's end when there is nothing to report)."""
    return pd.Timestamp(0, tz="UTC")
