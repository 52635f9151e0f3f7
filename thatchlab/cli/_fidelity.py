"""``thatchlab fidelity``: which thatch release wrote a log (each release's agreement with what production logged)."""

from __future__ import annotations

import warnings
from pathlib import Path

import typer

from thatchlab.cli._inputs import choice, engine_params, get_embedder
from thatchlab.cli._io import check_out, write_out
from thatchlab.logs import read_interaction_log
from thatchlab.replay.fidelity import fidelity_by_release
from thatchlab.store import import_sqlite

__all__ = ["fidelity"]


def fidelity(log: Path = typer.Argument(..., help="an interaction log with production's replies and nudges "
                                                  "(e.g. written by `thatchlab ingest`; JSONL, CSV or Parquet)"),
             release: list[str] = typer.Option([], help="a thatch release to try (repeatable; default: every "
                                                        "known release)"),
             engine: str = typer.Option(None, help="prediction or behavior (default: the engines the log holds)"),
             lookup: Path = typer.Option(None, help="table of text, embedding used instead of the bundled model "
                                                    "(exact agreement needs production's model or the log's vectors)"),
             config: Path = typer.Option(None, help="JSON/TOML parameters of the replays (their release is "
                                                    "replaced by each one tried)"),
             initial: Path = typer.Option(None, help="a thatch store (SQLite) the replays start from"),
             out: Path = typer.Option(None, help="write the table (.csv, .parquet or .json)")):
    """Replay a log under each thatch release and say which one it matches."""
    if engine is not None:
        choice("--engine", engine, ("prediction", "behavior"))
    check_out(out)
    params = engine_params(engine or "prediction", config)
    start = None
    if initial is not None:
        start = import_sqlite(initial)
    with warnings.catch_warnings(record=True) as caught:  # the reader's warnings (e.g. time order)
        warnings.simplefilter("always", UserWarning)
        data = read_interaction_log(log)
        res = fidelity_by_release(data, get_embedder(lookup), releases=release or None, engines=engine,
                                  params=params, initial=start)
    for w in caught:
        if issubclass(w.category, UserWarning):
            typer.echo(f"warning: {w.message}", err=True)
    typer.echo(res.summary())
    if out is not None:
        write_out(res.table, out)
