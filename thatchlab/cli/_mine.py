"""``thatchlab mine``: the anticipation engine's four pattern types over one lookback window."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import typer

from thatchlab import logs
from thatchlab.anticipation import PATTERN_TYPES
from thatchlab.anticipation import mine as mine_all
from thatchlab.cli._inputs import check_calendar, check_calendar_time, choice, epoch, parse_time
from thatchlab.cli._io import check_not_inputs, check_out, echo_pairs, write_out
from thatchlab.core.params import AnticipationParams

__all__ = ["mine"]


def mine(events: Path = typer.Argument(..., help="the event stream (JSONL, CSV or Parquet)"),
         recalls: Path = typer.Argument(..., help="the recall stream (JSONL, CSV or Parquet)"),
         now: str = typer.Option(None, help="aware ISO time; patterns are mined over [now - lookback, now) "
                                            "(default: one second after the last event or recall)"),
         mode: str = typer.Option("seed", help="sequential confidence: seed (mnemo's SQL: every pair counts; "
                                               "production) or fraction (thatchlab's study option: the share "
                                               "of trigger occurrences followed)"),
         window: str = typer.Option("24h", help="how soon B must follow A (e.g. 24h, 90min)"),
         lookback: str = typer.Option("30d", help="how far back to mine"),
         out: Path = typer.Option(None, help="write the patterns (.csv, .parquet or .json)")):
    """Mine sequential, periodic, conditional and co-occurrence patterns and count them."""
    choice("--mode", mode, ("fraction", "seed"))
    check_out(out)
    check_not_inputs([("--out", out)], [("EVENTS", events), ("RECALLS", recalls)])
    params = AnticipationParams(window=window, lookback=lookback, mode=mode)
    ev, rc = logs.read_event_log(events), logs.read_recall_stream(recalls)
    at = parse_time(now, "--now")
    check_calendar([(events, ev, ["ts"]), (recalls, rc, ["ts"])], f"{events} and {recalls}")
    check_calendar_time(at, "--now")
    if at is None:
        last = pd.concat([ev["ts"], rc["ts"]]).max()
        at = epoch() if pd.isna(last) else last + pd.Timedelta(seconds=1)
    patterns = mine_all(ev, rc, at, params)
    counts = patterns["type"].value_counts()
    try:
        start = (at - pd.Timedelta(lookback)).isoformat()
    except (OverflowError, pd.errors.OutOfBoundsDatetime):  # before 1677: mine() takes every earlier row
        start = "the earliest time"
    typer.echo(f"patterns mined over [{start}, {at.isoformat()}):")
    echo_pairs([(t, int(counts.get(t, 0))) for t in PATTERN_TYPES] + [("total", len(patterns))])
    if out is not None:
        patterns = patterns.copy()
        patterns.attrs = {}
        write_out(patterns, out)
