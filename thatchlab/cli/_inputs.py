"""What the verbs read from their arguments: engine names, parameters, embedders, logs and times.

Each helper validates one kind of argument and raises a
:class:`~thatchlab.core.errors.ThatchlabError` naming the option or the
file, which :func:`thatchlab.cli.main` prints as one ``error:`` line.
"""

from __future__ import annotations

from pathlib import Path

from thatchlab.cli._io import read_mapping

__all__ = ["SCORING", "REPLAY_ENGINES", "choice", "engine_params", "get_embedder", "load_log", "parse_time",
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
    from thatchlab.core.errors import InputError

    if value not in allowed:
        raise InputError(f"{option}: expected one of {', '.join(allowed)}, got {value!r}")
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
    from thatchlab.core.errors import ParamsError
    from thatchlab.run import _PARAMS

    cls = _PARAMS[engine]
    if path is None:
        return cls()
    cfg = read_mapping(path, "config")
    sections = set(_PARAMS) | {"sweep"}
    if set(cfg) <= sections and all(isinstance(v, dict) for v in cfg.values()):
        cfg = cfg.get(engine, {})
    try:
        return cls.from_dict(cfg)
    except ParamsError as exc:
        raise ParamsError(f"{path}: {exc}") from None


def get_embedder(lookup: Path | None):
    """A LookupEmbedder from a ``text, embedding`` table, else the bundled model.

    Parameters
    ----------
    lookup : Path or None
        A table (JSONL, CSV or Parquet) with ``text`` and ``embedding`` columns.
    """
    if lookup is None:
        from thatchlab.embed import default_embedder

        return default_embedder()
    from thatchlab.core.errors import InputError
    from thatchlab.embed import LookupEmbedder
    from thatchlab.logs import read_table

    table = read_table(lookup, json_columns=["embedding"])
    missing = {"text", "embedding"} - set(table.columns)
    if missing:
        raise InputError(f"{lookup}: missing column(s) {sorted(missing)}; expected a table with text and embedding")
    return LookupEmbedder(table[["text", "embedding"]], name=Path(lookup).stem)


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
    from thatchlab import logs
    from thatchlab.core.errors import InputError

    if engine in SCORING:
        return logs.read_interaction_log(path)
    if engine == "belief":
        return logs.read_memory_log(path)
    if engine == "calibration":
        return logs.read_recall_log(path)
    if recalls is None:
        raise InputError("--recalls: the anticipation engine needs the recall stream (LOG is the event stream)")
    return logs.read_event_log(path), logs.read_recall_stream(recalls)


def parse_time(value: str | None, option: str):
    """An aware ISO time as a UTC Timestamp (``None`` passes through); errors name ``option``."""
    from thatchlab.core.time import as_utc

    return None if value is None else as_utc(value, what=option)


def epoch():
    """The Unix epoch in UTC (the window's end when there is nothing to report)."""
    import pandas as pd

    return pd.Timestamp(0, tz="UTC")
