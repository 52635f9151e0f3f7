"""``thatchlab ingest``: production records of an agent host or a memory system, read into thatchlab's logs."""

from __future__ import annotations

from pathlib import Path

import typer

from thatchlab.cli._inputs import choice, get_embedder
from thatchlab.cli._io import echo_pairs

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
    from thatchlab import logs

    if source in _TRANSCRIPTS:
        return logs.read_interaction_log(path)
    if source == "omi":
        return logs.read_memory_log(path)
    if source == "mnemo":
        return logs.read_event_log(path) if table == "events" else logs.read_recall_stream(path)
    return logs.read_table(path)


def _write(source: str, table: str, df, path: Path):
    from thatchlab import logs

    if source in _TRANSCRIPTS:
        return logs.write_interaction_log(df, path)
    if source == "omi":
        return logs.write_memory_log(df, path)
    if source == "mnemo":
        return logs.write_stream(df, path)
    return logs.write_table(df, path)


def _merge(existing, fresh):
    """``existing`` plus the rows of ``fresh`` it has not seen (by ``record_id``), in time order."""
    import pandas as pd

    from thatchlab.logs.ingest import new_rows

    add = new_rows(existing, fresh)
    if not len(add):
        return existing, 0
    both = pd.concat([existing, add], ignore_index=True)
    return both.sort_values("ts", kind="stable").reset_index(drop=True), len(add)


def ingest(source: str = typer.Argument(..., help="claude-code, opencode, omi, ai-memory or mnemo"),
           path: Path = typer.Argument(..., help="claude-code: a .jsonl transcript, a project folder or "
                                                  "~/.claude/projects; opencode: its storage folder; omi: the "
                                                  "JSON export; ai-memory: the database; mnemo: the mnemo_event "
                                                  "dump (CSV, Parquet or JSON lines)"),
           out: Path = typer.Option(..., help="the log to write (.jsonl, .csv or .parquet); an existing one gets "
                                              "only the records it has not seen. ai-memory also writes "
                                              "<stem>.observations and <stem>.outcomes beside it; mnemo writes "
                                              "<stem>.events and <stem>.recalls"),
           server: str = typer.Option("thatch", help="claude-code: the name thatch's MCP server is registered as"),
           subagents: bool = typer.Option(False, help="claude-code/opencode: also read subagent transcripts"),
           engine: str = typer.Option(None, help="claude-code/opencode: keep only this engine's statements in "
                                                 "'surfaced' (prediction or behavior)"),
           project_store: str = typer.Option(None, help="claude-code/opencode: the store of rows naming none "
                                                        "('cwd': the working directory's last part)"),
           recalls: Path = typer.Option(None, help="mnemo: the recall telemetry dump"),
           redact: bool = typer.Option(False, help="claude-code/opencode: replace prompt, context and rationale "
                                                   "texts by stable hashes and write their vectors to "
                                                   "<stem>.lookup.parquet"),
           lookup: Path = typer.Option(None, help="--redact: a text, embedding table to take the vectors from "
                                                  "instead of the bundled model")):
    """Read an agent host's transcripts or a memory system's records into a thatchlab log."""
    from thatchlab import logs
    from thatchlab.core.errors import InputError
    from thatchlab.logs import ingest as ing

    choice("SOURCE", source, tuple(SOURCES))
    logs.log_format(out)  # an unknown suffix fails before any work
    if engine is not None:
        choice("--engine", engine, ("prediction", "behavior"))
    if redact and source not in _TRANSCRIPTS:
        raise InputError("--redact: only transcripts (claude-code, opencode) are redacted")
    if lookup is not None and not redact:
        raise InputError("--lookup: used only with --redact")
    if recalls is not None and source != "mnemo":
        raise InputError("--recalls: only mnemo takes a recall dump")
    if source == "claude-code":
        res = ing.claude_code(path, server=server, subagents=subagents, engine=engine, project_store=project_store)
    elif source == "opencode":
        res = ing.opencode(path, subagents=subagents, engine=engine, project_store=project_store)
    elif source == "omi":
        res = ing.omi_memories(path)
    elif source == "ai-memory":
        res = ing.ai_memory(path)
    else:
        res = ing.mnemo_events(path, recalls)
    typer.echo(f"read {path} ({SOURCES[source]})")
    echo_pairs([(f"  {k}", v) for k, v in res.read.items() if v])
    if res.skipped:
        typer.echo("skipped:")
        echo_pairs([(f"  {k}", v) for k, v in sorted(res.skipped.items())])
    tables = dict(res.tables)
    lookup_rows = None
    if redact:
        tables["interactions"], lookup_rows = ing.redact(tables["interactions"], get_embedder(lookup))
    out.parent.mkdir(parents=True, exist_ok=True)
    for table, target in _outputs(source, out).items():
        df = tables.get(table)
        if df is None:
            continue
        n_new = len(df)
        if target.exists() and source != "ai-memory" and "record_id" in df.columns:
            df, n_new = _merge(_read(source, table, target), df)
            if n_new == 0:
                typer.echo(f"{target}: nothing new ({len(df)} rows kept)")
                continue
        _write(source, table, df, target)
        grown = f" ({n_new} new)" if n_new != len(df) else ""
        typer.echo(f"wrote {len(df)} rows to {target}{grown}")
    if lookup_rows is not None:
        _write_lookup(lookup_rows, out)


def _write_lookup(rows, out: Path) -> None:
    """Write (or grow) ``<stem>.lookup.parquet`` beside the redacted log."""
    import pandas as pd

    from thatchlab.cli._io import write_atomic

    target = out.with_name(f"{out.stem}.lookup.parquet")
    if target.exists():
        old = pd.read_parquet(target)
        rows = pd.concat([old, rows[~rows["text"].isin(set(old["text"]))]], ignore_index=True)
    table = rows.assign(embedding=rows["embedding"].map(lambda v: [float(x) for x in v]))
    write_atomic(target, lambda tmp: table.to_parquet(tmp, index=False))
    typer.echo(f"wrote {len(table)} vectors to {target} (replay the log with --lookup {target})")
