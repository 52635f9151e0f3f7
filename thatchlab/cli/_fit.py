"""``thatchlab fit`` (the prior, belief half-lives or derive coefficients) and ``thatchlab calibrate`` (the report)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import typer

from thatchlab import logs
from thatchlab.calibration import MAX_WINDOW_DAYS, calibrate_from_shadow
from thatchlab.cli._inputs import (
    SCORING,
    check_calendar,
    check_calendar_time,
    check_number,
    choice,
    epoch,
    get_embedder,
    parse_time,
)
from thatchlab.cli._io import check_not_inputs, check_out, is_sqlite, write_out
from thatchlab.core.errors import InputError
from thatchlab.core.params import CalibrationParams, at_least, resolve_release
from thatchlab.fit import DeriveWeightsFitter, HalfLifeFitter, PriorFitter
from thatchlab.logs.ai_memory import read_ai_memory
from thatchlab.replay import run as run_replay
from thatchlab.replay import run_calibration

__all__ = ["fit", "calibrate"]


def fit(what: str = typer.Argument(..., help="prior, halflife or derive"),
        input: Path = typer.Argument(..., help="prior: a thatch store or an interaction log; halflife: a memory "
                                               "log; derive: a recall log"),
        engine: str = typer.Option("prediction", help="prior from an interaction log: prediction or behavior"),
        lookup: Path = typer.Option(None, help="prior from an interaction log: table of text, embedding"),
        out: Path = typer.Option(None, help="write the fitted summary (.csv, .parquet or .json)")):
    """Fit the prior (K, P0), the belief half-lives or the derive coefficients and print the summary."""
    choice("WHAT", what, ("prior", "halflife", "derive"))
    check_out(out)
    check_not_inputs([("--out", out)], [("INPUT", input), ("--lookup", lookup)])
    if what == "prior":
        choice("--engine", engine, SCORING)
        if is_sqlite(input):
            signals = logs.signals_from_store(input)
            signals = signals[signals["kind"] == engine]
            fitter = PriorFitter().fit(signals)
        else:
            res = run_replay(logs.read_interaction_log(input), engine=engine, embedder=get_embedder(lookup))
            prov = res.tables["provenance"].rename(columns={f"{engine}_id": "item_id"})
            fitter = PriorFitter(soft_weight=res.params.soft_weight).fit(prov[["item_id", "signal"]])
    elif what == "halflife":
        log = logs.read_memory_log(input)
        check_calendar([(input, log, ["ts"])], input)
        if not (log["kind"] == "write").any():
            raise InputError(f"{input}: the memory log has no write rows; expected memories to fit half-lives on")
        fitter = HalfLifeFitter().fit_from_log(log)
    else:
        log = logs.read_recall_log(input)
        check_calendar([(input, log, ["ts", "created_at"])], input)
        fitter = DeriveWeightsFitter().fit(log)
    summary = fitter.summary_
    typer.echo(summary.to_string(float_format=lambda x: f"{x:.6g}"))
    if out is not None:
        if summary.index.name is None and not isinstance(summary.index, pd.RangeIndex):
            summary = summary.rename_axis("param")
        write_out(summary.reset_index() if summary.index.name else summary, out)


def calibrate(input: Path = typer.Argument(..., help="a recall log, or an ai-memory SQLite database"),
              days: float = typer.Option(30.0, help="window in days (observed_at >= now - days), "
                                                    "0 to 36500"),
              now: str = typer.Option(None, help="aware ISO time closing the window (default: a recall log's "
                                                 "last replayed report; a database's last observation)"),
              audience: str = typer.Option(None, help="a database: scope the report to this caller (agent id), as "
                                                      "ai-memory 0a5770a does; default: the admin sweep"),
              release: str = typer.Option("latest", help="the ai-memory release whose report to compute "
                                                         "(v0.7.0, a78a228, 0a5770a or latest)"),
              json_: bool = typer.Option(False, "--json", help="print the report as JSON")):
    """Print the confidence calibration report of a recall log's replay or of an ai-memory database.

    On a database the admin sweep first backfills recall outcomes from the ledger (a78a228 on; the
    file is not written) and reads access counts from memories; --audience CALLER keeps the rows the
    caller may read and backfills nothing."""
    rel = resolve_release("ai-memory", release)
    if at_least("ai-memory", rel, "a78a228"):
        days = check_number("--days", days, 0, MAX_WINDOW_DAYS, "number of days")
    at = parse_time(now, "--now")
    check_calendar_time(at, "--now")
    if is_sqlite(input):
        tables = read_ai_memory(input)
        obs = tables.observations
        check_calendar([(input, obs, ["observed_at"])], input)
        if at is None:
            at = obs["observed_at"].max() if len(obs) else epoch()
        report = calibrate_from_shadow(obs, at, days=days, audience=audience, memories=tables.memories,
                                       ledger=tables.ledger, release=rel)
    else:
        if audience is not None:
            raise InputError(f"--audience: {input} is a recall log, which carries no memory visibility "
                             "(metadata, lifecycle); expected an ai-memory SQLite database")
        log = logs.read_recall_log(input)
        check_calendar([(input, log, ["ts", "created_at"])], input)
        res = run_calibration(log, CalibrationParams(window_days=days, release=rel))
        obs = res.state.observations
        if at is None and res.reports:
            report = res.reports[-1]
        else:
            if at is None:
                at = obs["observed_at"].max() if len(obs) else epoch()
            report = calibrate_from_shadow(obs, at, days=days, release=rel)
    typer.echo(report.to_json(indent=1) if json_ else report.to_ascii().rstrip("\n"))
