"""``thatchlab synth``: a synthetic log from one of the seeded worlds, with planted ground truth."""

from __future__ import annotations

from pathlib import Path

import typer

from thatchlab import logs
from thatchlab import synth as worlds
from thatchlab.cli._inputs import choice
from thatchlab.cli._io import check_file_out
from thatchlab.core.errors import InputError

__all__ = ["synth", "KINDS", "SIZES"]

#: The logs ``synth`` writes, one per world.
KINDS = ("preference", "behavior", "belief", "recall", "patterns")
#: Per kind: what ``--size`` counts and the largest size accepted, about a million rows each (a
#: session is about 2 rows, a memory about 10, a day of patterns about 30), which a laptop holds
#: in memory and writes within minutes.
SIZES = {"preference": ("sessions", 500_000), "behavior": ("sessions", 500_000),
         "belief": ("memories", 100_000), "recall": ("recall rows", 1_000_000), "patterns": ("days", 36_500)}


def synth(kind: str = typer.Argument(..., help="preference, behavior, belief, recall or patterns"),
          out: Path = typer.Option(..., help="the log file (.jsonl, .csv or .parquet); patterns writes "
                                             "<stem>.events<suffix> and <stem>.recalls<suffix>"),
          seed: int = typer.Option(0, help="seed of the world's generator"),
          size: int = typer.Option(None, help="sessions (preference, behavior; at most 500000), memories "
                                              "(belief; at most 100000), recall rows (recall; at most 1000000) "
                                              "or days (patterns; at most 36500)"),
          overwrite: bool = typer.Option(False, help="replace an existing log (without it an existing file "
                                                     "is refused)")):
    """Write a synthetic log from a seeded world with planted ground truth."""
    choice("KIND", kind, KINDS)
    if size is not None:
        unit, largest = SIZES[kind]
        if size < 1:
            raise InputError(f"--size: expected an integer >= 1, got {size}")
        if size > largest:
            raise InputError(f"--size: {kind} accepts at most {largest} {unit} (about a million rows), "
                             f"got {size}")
    if seed < 0:
        raise InputError(f"--seed: expected an integer >= 0, got {seed}")
    check_file_out(out, "--out")
    logs.log_format(out)  # fail on an unknown suffix before generating anything
    targets = ([out.with_name(f"{out.stem}.{name}{out.suffix}") for name in ("events", "recalls")]
               if kind == "patterns" else [out])
    for target in targets:
        if target.is_dir():
            raise InputError(f"--out {target}: is a directory; expected a log file")
        if target.exists() and not overwrite:
            raise InputError(f"--out {target}: the file exists (a log you may need); pass --overwrite to "
                             "replace it, or choose another path")
    out.parent.mkdir(parents=True, exist_ok=True)
    written = []
    if kind == "preference":
        log = worlds.PreferenceWorld(seed=seed).log(size or 100)
        written.append((logs.write_interaction_log(log, out), len(log)))
    elif kind == "behavior":
        log = worlds.BehaviorWorld(seed=seed).log(size or 60)
        written.append((logs.write_interaction_log(log, out), len(log)))
    elif kind == "belief":
        log = worlds.BeliefWorld(seed=seed).log(n_memories=size or 100)
        written.append((logs.write_memory_log(log, out), len(log)))
    elif kind == "recall":
        n = size or 1500
        log = worlds.RecallWorld(n_memories=max(10, n // 10), n_recalls=n, seed=seed).log
        written.append((logs.write_table(log, out), len(log)))
    else:
        ev, rc = worlds.PatternWorld(n_workspaces=2, days=size or 28, seed=seed).generate()
        for name, df in (("events", ev), ("recalls", rc)):
            written.append((logs.write_stream(df, out.with_name(f"{out.stem}.{name}{out.suffix}")), len(df)))
    for path, n in written:
        typer.echo(f"wrote {n} rows to {path}")
