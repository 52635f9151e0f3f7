"""``thatchlab ingest``: production records of an agent host or a memory system, read into thatchlab's logs."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd
import typer

from thatchlab import logs
from thatchlab.cli._inputs import choice, get_embedder
from thatchlab.cli._io import check_file_out, check_not_inputs, echo_pairs, write_atomic
from thatchlab.core.errors import InputError
from thatchlab.logs import ingest as ing
from thatchlab.logs.ingest import grow

__all__ = ["ingest", "SOURCES"]

#: What ``ingest`` reads, and the log each gives.
SOURCES = {"claude-code": "interaction log", "opencode": "interaction log", "omi": "memory log",
           "ai-memory": "recall log (+ observations, outcomes)", "mnemo": "event and recall streams"}
_TRANSCRIPTS = ("claude-code", "opencode")


def _beside(out: Path, name: str) -> Path:
    return out.with_name(f"{out.stem}.{name}{out.suffix}")


def _outputs(source: str, out: Path) -> dict:
    """Table name → the file it is written to."""
    if source == "ai-memory":
        return {"recalls": out, "observations": _beside(out, "observations"), "outcomes": _beside(out, "outcomes")}
    if source == "mnemo":
        return {"events": _beside(out, "events"), "recalls": _beside(out, "recalls")}
    return {"memories" if source == "omi" else "interactions": out}


def _read(source: str, table: str, path: Path):
    if source in _TRANSCRIPTS:
        return logs.read_interaction_log(path)
    if source == "omi":
        return logs.read_memory_log(path)
    if source == "mnemo":
        return logs.read_event_log(path) if table == "events" else logs.read_recall_stream(path)
    return logs.read_table(path)


def _write(source: str, table: str, df, path: Path):
    if source in _TRANSCRIPTS:
        return logs.write_interaction_log(df, path)
    if source == "omi":
        return logs.write_memory_log(df, path)
    if source == "mnemo":
        return logs.write_stream(df, path)
    return logs.write_table(df, path)


def _grown(source: str, table: str, df, target: Path):
    """``(log to write, Growth or None)``: ``df`` merged into the log already at ``target``.

    The fresh rows go through the same writer and reader as the file first, so both sides are
    compared as the format holds them (CSV's text, Parquet's types) and only real changes count.
    """
    if not target.exists() or "record_id" not in df.columns or _holds_nothing(target):
        return df, None
    existing = _read(source, table, target)
    if len(existing) == 0:  # a log of no rows (a header alone): nothing to keep
        return df, None
    with tempfile.TemporaryDirectory(prefix="thatchlab-ingest-") as tmp:
        same_format = Path(tmp) / f"fresh{target.suffix}"
        _write(source, table, df, same_format)
        fresh = _read(source, table, same_format)
    g = grow(existing, fresh)
    order = [c for c in df.columns if c in g.log.columns] + [c for c in g.log.columns if c not in df.columns]
    g.log = g.log[order]  # a reader may order extra columns differently from the adapter
    return g.log, g


def _holds_nothing(path: Path) -> bool:
    """Whether ``path`` is a file of no bytes or of blank lines only (an earlier ingest of nothing)."""
    if not path.is_file():
        return False
    if path.stat().st_size > 4096:
        return False
    return not path.read_bytes().removeprefix(b"\xef\xbb\xbf").strip()


#: What a source's rows are, for the message of an ingest that found none.
_ROWS = {"claude-code": "prompt or thatch tool call", "opencode": "prompt or thatch tool call",
         "omi": "memory", "ai-memory": "recall, observation or outcome", "mnemo": "event or recall"}


def _counts(counter) -> str:
    return ", ".join(f"{k} {v}" for k, v in counter.items() if v)


def _nothing_found(source: str, path: Path, out: Path, res) -> str:
    """The message of an ingest whose source gave no row: the input, and what it held by kind."""
    held = []
    if res.read:
        held.append(f"read: {_counts(res.read)}")
    found = getattr(res, "found", None)
    if found:
        held.append(f"records by kind: {_counts(dict(sorted(found.items())))}")
    if res.skipped:
        held.append(f"skipped: {_counts(dict(sorted(res.skipped.items())))}")
    what = "; ".join(held) if held else "no record read"
    kept = f"{out} left as it was" if out.exists() else "nothing written"
    return (f"{path}: no {_ROWS[source]} found to ingest ({what}); expected {SOURCES[source]} records "
            f"of {source}; {kept}")


def ingest(source: str = typer.Argument(..., help="claude-code, opencode, omi, ai-memory or mnemo"),
           path: Path = typer.Argument(..., help="claude-code: a .jsonl transcript, a project folder or "
                                                  "~/.claude/projects; opencode: its data dir, its opencode.db or "
                                                  "its legacy storage folder; omi: the /v3/memories JSON; "
                                                  "ai-memory: the database; mnemo: the mnemo_event dump (CSV, "
                                                  "Parquet or JSON lines)"),
           out: Path = typer.Option(..., help="the log to write (.jsonl, .csv or .parquet). An existing one is "
                                              "grown by record id: rows the source completed are updated in place, "
                                              "new ones added, rows no longer in the source kept. ai-memory also "
                                              "writes <stem>.observations and <stem>.outcomes beside it; mnemo "
                                              "writes <stem>.events and <stem>.recalls"),
           server: str = typer.Option("thatch", help="claude-code/opencode: the name thatch's MCP server is registered "
                                                     "as, bare (thatch) or as a prefix (mcp__plugin_thatch_thatch__); "
                                                     "its tools are read as mcp__<server>__<tool>, "
                                                     "mcp__plugin_<plugin>_<server>__<tool>, <server>_<tool> and plain "
                                                     "<tool>"),
           subagents: str = typer.Option("calls", help="claude-code/opencode: what is read of sub-agents. calls (the "
                                                       "default): their thatch calls are rows, their delegation prompts "
                                                       "counted; all: their prompts too, as message rows; none: nothing "
                                                       "of them"),
           engine: str = typer.Option(None, help="claude-code/opencode: keep only this engine's statements in "
                                                 "'surfaced' (prediction or behavior)"),
           project_store: str = typer.Option(
               "auto", help="claude-code/opencode: the store of rows whose call named none. 'auto' (the default) "
                            "names it as thatch does: the store production's own replies in the session name "
                            "('[codified] acme/app :: ...'), else owner/repo from the project directory's git "
                            "origin (thatch's detectRepo rule) when the directory exists here, else the folder "
                            "name, with a warning. 'cwd': always the folder name; any other text: that store"),
           recalls: Path = typer.Option(None, help="mnemo: the recall telemetry dump"),
           redact: bool = typer.Option(False, help="claude-code/opencode: replace prompt, context and rationale "
                                                   "texts by stable hashes and write their vectors to "
                                                   "<stem>.lookup.parquet"),
           lookup: Path = typer.Option(None, help="--redact: a text, embedding table to take the vectors from "
                                                  "instead of the bundled model"),
           dry_run: bool = typer.Option(False, "--dry-run", help="print what would be read, skipped and written; "
                                                                 "write nothing")):
    """Read an agent host's transcripts or a memory system's records into a thatchlab log."""
    _check_options(source, path, out, engine, subagents, redact, lookup, recalls)
    res = _adapt(source, path, recalls, server=server, subagents=subagents, engine=engine,
                 project_store=project_store)
    _echo_read(source, path, res)
    tables = dict(res.tables)
    if all(df is None or len(df) == 0 for df in tables.values()):  # never a log of no rows
        raise InputError(_nothing_found(source, path, out, res))
    lookup_rows = None
    if redact:
        tables["interactions"], lookup_rows = ing.redact(tables["interactions"], get_embedder(lookup))
    planned = []  # every output merged and checked before the first is written
    for table, target in _outputs(source, out).items():
        df = tables.get(table)
        if df is not None:
            planned.append((table, target, *_grown(source, table, df, target)))
    _write_planned(source, out, planned, dry_run)
    if lookup_rows is not None and not dry_run:
        _write_lookup(lookup_rows, out)
    if dry_run:
        typer.echo("dry run: nothing written")


def _check_options(source, path, out, engine, subagents, redact, lookup, recalls) -> None:
    """Fail before any work on an unknown source or option value, or an output that would replace an input."""
    choice("SOURCE", source, tuple(SOURCES))
    check_file_out(out, "--out")
    logs.log_format(out)  # an unknown suffix fails before any work
    if engine is not None:
        choice("--engine", engine, ("prediction", "behavior"))
    choice("--subagents", subagents, ("calls", "all", "none"))
    if redact and source not in _TRANSCRIPTS:
        raise InputError("--redact: only transcripts (claude-code, opencode) are redacted")
    if lookup is not None and not redact:
        raise InputError("--lookup: used only with --redact")
    if recalls is not None and source != "mnemo":
        raise InputError("--recalls: only mnemo takes a recall dump")
    if out.is_dir():
        raise InputError(f"--out {out}: is a directory; expected a log file (.jsonl, .csv or .parquet)")
    check_not_inputs([("--out", target) for target in _outputs(source, out).values()],
                     [("PATH", path), ("--recalls", recalls), ("--lookup", lookup)])


def _adapt(source, path, recalls, *, server, subagents, engine, project_store):
    """The source's adapter run on ``path`` (an ``IngestResult``)."""
    if source == "claude-code":
        return ing.claude_code(path, server=server, subagents=subagents, engine=engine, project_store=project_store)
    if source == "opencode":
        return ing.opencode(path, subagents=subagents, engine=engine, project_store=project_store, server=server)
    if source == "omi":
        return ing.omi_memories(path)
    if source == "ai-memory":
        return ing.ai_memory(path)
    return ing.mnemo_events(path, recalls)


def _echo_read(source, path, res) -> None:
    """Print what the adapter read, never ran, stripped and skipped, and its warnings."""
    typer.echo(f"read {path} ({SOURCES[source]})")
    echo_pairs([(f"  {k}", v) for k, v in res.read.items() if v])
    if res.not_run:
        typer.echo("calls that never ran (kept as rows a replay skips, skip_reason set):")
        echo_pairs([(f"  {k}", v) for k, v in sorted(res.not_run.items())])
    if res.stripped:
        typer.echo("stripped from prompts (host context, not typed by the user):")
        echo_pairs([(f"  {k}", v) for k, v in sorted(res.stripped.items())])
    if res.skipped:
        typer.echo("skipped:")
        echo_pairs([(f"  {k}", v) for k, v in sorted(res.skipped.items())])
    for line in res.warnings:
        typer.echo(f"warning: {line}", err=True)


def _write_planned(source, out: Path, planned, dry_run: bool) -> None:
    """Write (or, on a dry run, name) each planned table; a grown log the source left as it was is not rewritten."""
    verb = "would write" if dry_run else "wrote"
    if not dry_run:
        out.parent.mkdir(parents=True, exist_ok=True)
    for table, target, df, growth in planned:
        if growth is not None and growth.unchanged == len(df) and not growth.kept:
            typer.echo(f"{target}: unchanged ({len(df)} rows, as the source holds them)")
            continue
        if not dry_run:
            _write(source, table, df, target)
        grown = "" if growth is None else " (" + ", ".join(f"{v} {k}" for k, v in growth.lines()) + ")"
        typer.echo(f"{verb} {len(df)} rows to {target}{grown}")


def _write_lookup(rows, out: Path) -> None:
    """Write (or grow) ``<stem>.lookup.parquet`` beside the redacted log."""
    target = out.with_name(f"{out.stem}.lookup.parquet")
    if target.exists():
        old = pd.read_parquet(target)
        rows = pd.concat([old, rows[~rows["text"].isin(set(old["text"]))]], ignore_index=True)
    table = rows.assign(embedding=rows["embedding"].map(lambda v: [float(x) for x in v]))
    write_atomic(target, lambda tmp: table.to_parquet(tmp, index=False))
    typer.echo(f"wrote {len(table)} vectors to {target} (replay the log with --lookup {target})")
