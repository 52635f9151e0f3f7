"""The store verbs: ``export`` a replayed engine to SQLite, ``import`` a store's tables, ``merge`` into
production and ``restore`` a merge's backup."""

from __future__ import annotations

import json
import signal
import sqlite3
import threading
from pathlib import Path

import typer

from thatchlab import store
from thatchlab.cli._inputs import (
    SCORING,
    check_seconds,
    choice,
    engine_params,
    get_embedder,
    load_log,
)
from thatchlab.cli._io import (
    check_file_out,
    check_not_inputs,
    check_resolves,
    echo_pairs,
    read_mapping,
    write_frame,
)
from thatchlab.core.display import plural
from thatchlab.core.errors import ExportExistsError, InputError
from thatchlab.core.params import SYSTEMS
from thatchlab.decide import Decision
from thatchlab.replay import run as run_replay
from thatchlab.replay.scoring import engine_class
from thatchlab.store import (
    check_export_target,
    export_sqlite,
    list_backups,
)
from thatchlab.store import prune_backups as prune
from thatchlab.store import restore as restore_backup

__all__ = ["export", "import_", "merge", "restore", "prune_backups"]


def import_(path: Path = typer.Argument(..., help="a thatch or thatchlab SQLite file (opened read-only)"),
            out: Path = typer.Option(None, help="directory to write every table into"),
            fmt: str = typer.Option("csv", "--format", help="csv, parquet or json")):
    """Read a store and print what it holds; optionally write its tables out."""
    if out is not None and out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: is a file; expected a directory to write the tables into")
    contents = store.import_sqlite(path)
    typer.echo(f"{path}")
    if contents.meta:
        typer.echo(f"  thatchlab export, model {contents.meta.get('model')!r}, "
                   f"engines {contents.meta.get('engines')}")
    if contents.releases:
        typer.echo("  releases: " + ", ".join(f"{e} {SYSTEMS[e]} {r}" for e, r in contents.releases.items()))
    for key in ("prediction", "behavior"):
        eng = getattr(contents, key)
        if eng is None:
            continue
        tables = eng.tables
        counts = ", ".join(f"{name} {len(df)}" for name, df in tables.items())
        typer.echo(f"  {key}: {counts}")
        if out is not None:
            for name, df in tables.items():
                write_frame(df, out / f"{key}_{name}.{fmt}")
    for key in ("beliefs", "calibration", "patterns"):
        obj = getattr(contents, key)
        if obj is None:
            continue
        frames = obj if isinstance(obj, dict) else {key: obj} if hasattr(obj, "to_csv") else obj.tables
        typer.echo(f"  {key}: " + ", ".join(f"{name} {len(df)}" for name, df in frames.items()))
        if out is not None:
            for name, df in frames.items():
                write_frame(df, out / f"{name}.{fmt}")
    if contents.manifest is None:
        typer.echo("  no manifest beside it (a production file, or an export whose manifest was removed)")
    if out is not None:
        typer.echo(f"tables written to {out}")


def merge(export: Path = typer.Argument(..., help="a thatchlab export (its manifest beside it)"),
          production: Path = typer.Argument(..., help="the production thatch file to update (it may be in use)"),
          backup: bool = typer.Option(True, help="write a new backup <production>.<UTC time>.bak first, taken "
                                                 "under production's write lock (never over an existing one)"),
          dry_run: bool = typer.Option(False, "--dry-run", help="report what would change; write nothing"),
          verify_manifest: bool = typer.Option(True, help="check the export's sha256 against its manifest"),
          timeout: float = typer.Option(30.0, help="seconds to wait for another writer of production"),
          allow_unreviewed: bool = typer.Option(False, "--allow-unreviewed",
                                                help="merge parameter values no decision shipped"),
          all_stores: bool = typer.Option(False, "--all-stores",
                                          help="replace the engines' rows in every store, not only the export's"),
          replace_newer: bool = typer.Option(False, "--replace-newer",
                                             help="replace production rows changed after the export's log ended"),
          allow_release_mismatch: bool = typer.Option(
              False, "--allow-release-mismatch",
              help="merge an export made for another thatch release than production's schema shows"),
          allow_model_mismatch: bool = typer.Option(False, "--allow-model-mismatch",
                                                    help="merge vectors of another embedding model than "
                                                         "production's rows (every nudge after it is noise)")):
    """Replace the exported engines' rows in a production file, keeping every other table and store.

    One transaction in the live file under its write lock: a failure leaves
    production exactly as it was, and the backup taken before stays.
    """
    check_seconds("--timeout", timeout)
    res = store.merge_into(export, production, backup=backup, dry_run=dry_run, verify_manifest=verify_manifest,
                     timeout=timeout, allow_unreviewed=allow_unreviewed, all_stores=all_stores,
                     replace_newer=replace_newer, allow_release_mismatch=allow_release_mismatch,
                     allow_model_mismatch=allow_model_mismatch)
    main_thread = threading.current_thread() is threading.main_thread()
    old = signal.signal(signal.SIGINT, signal.SIG_IGN) if main_thread else None  # the report, printed whole
    try:
        _merge_report(res)
    finally:
        if main_thread:
            signal.signal(signal.SIGINT, old)


def _merge_report(res) -> None:
    if res.interrupted:
        typer.echo("  (Ctrl-C arrived after the merge committed: it stands)")
    for engine, values in res.unreviewed.items():
        typer.echo(f"  unreviewed ({engine}): " + ", ".join(f"{k}={v!r}" for k, v in values.items())
                   + " — no decision shipped these; merged because --allow-unreviewed was given")
    would = "would be " if res.dry_run else ""
    if res.stores:
        typer.echo(f"  stores {would}replaced: {', '.join(res.stores)}"
                   + ("" if res.all_stores else " (the export's; every other store keeps its rows)"))
    for table, n in res.replaced.items():
        typer.echo(f"  {table}: {res.removed.get(table, 0)} rows {would}replaced by {res.added.get(table, n)}"
                   f", {res.kept_rows.get(table, 0)} kept; {n} after")
    if res.added_stores:
        typer.echo(f"  stores: {'would add' if res.dry_run else 'added'} {', '.join(res.added_stores)}")
    if res.triggers:
        typer.echo(f"  production triggers on these tables, kept out of the merge and re-created: "
                   f"{', '.join(res.triggers)}")
    if res.newer:
        typer.echo(f"  {res.newer} row(s) newer than the export's log end ({res.log_end}) {would}replaced "
                   "(--replace-newer)")
    typer.echo(f"  kept as they were: {', '.join(res.kept) or 'no other tables'}")
    if res.model_mismatch:
        typer.echo(f"  warning: {res.model_mismatch} (merged because --allow-model-mismatch was given)")
    for line in res.environment:
        typer.echo(f"  production setting to make: {line} (in production's environment)")
    for engine, changes in res.code_changes.items():
        what = ", ".join(f"{_CODE_NAMES.get(k, k)} = {_number(old)} -> {_number(new)}" if old is not None
                         else f"{_CODE_NAMES.get(k, k)} = {_number(new)}" for k, (old, new) in changes.items())
        typer.echo(f"  production code change to make ({engine}): {what} — constants in production's code; "
                   "a merge ships rows, not code, so they take effect only when that code is changed")
    if res.dry_run:
        typer.echo(f"dry run: nothing written; merging {', '.join(res.engines)} into {res.path} would succeed")
    else:
        typer.echo(f"merged {', '.join(res.engines)} into {res.path}"
                   + (f" (backup: {res.backup_path})" if res.backup_path else ""))


#: How production's code names the scoring constants a decision can ship.
_CODE_NAMES = {"k": "K", "p0": "P0", "soft_weight": "W_SOFT"}


def _number(value) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def restore(backup: Path = typer.Argument(..., help="a backup of a merge (<production>.<UTC time>.bak); with "
                                                    "--list, the production file"),
            production: Path = typer.Argument(None, help="the production file to put it back into"),
            list_: bool = typer.Option(False, "--list", help="list the backups of the production file given"),
            timeout: float = typer.Option(30.0, help="seconds to wait for another writer of production")):
    """Put a merge's backup back into its production file (a safety backup is taken first)."""
    check_seconds("--timeout", timeout)
    check_resolves(backup, production)
    if list_:
        if production is not None:
            raise InputError("restore --list: give the production file only")
        table = list_backups(backup)
        if not len(table):
            typer.echo(f"no backups of {backup}")
        for r in table.itertuples():
            rows = ", ".join(f"{t} {n}" for t, n in r.tables.items())
            state = ("CHANGED since taken" if not r.intact else "intact" if r.restorable
                     else f"intact, but restore refuses it now: {r.problem}")
            typer.echo(f"{r.path}  {r.taken_at}  {r.reason}  {state}  ({rows})")
        return
    if production is None:
        raise InputError("restore: expected BACKUP PRODUCTION (or --list PRODUCTION)")
    try:
        res = restore_backup(backup, production, timeout=timeout)
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:  # a damaged schema read while checking
        raise InputError(f"{production} or {backup}: not a readable SQLite database ({type(exc).__name__}: "
                         f"{' '.join(str(exc).split())[:200]}); nothing was restored") from None
    echo_pairs(sorted(res.counts.items()))
    typer.echo(f"restored {res.backup_path} into {res.path} (production as it was before: {res.safety_path})")
    for note in res.notes:
        typer.echo(f"note: {note}")


def prune_backups(production: Path = typer.Argument(..., help="the production file whose backups to prune"),
                  keep: int = typer.Option(..., help="backups to keep (the first and the newest always stay)")):
    """Remove the oldest backups of a production file beyond --keep; never the first nor the newest."""
    if keep < 0:
        raise InputError(f"--keep: expected a count >= 0, got {keep}")
    check_resolves(production)
    removed = prune(production, keep)
    for p in removed:
        typer.echo(f"removed {p}")
    typer.echo(f"{plural(len(removed), 'backup')} removed")


def export(log: Path = typer.Argument(..., help="an interaction log (JSONL, CSV or Parquet)"),
           engine: str = typer.Option(..., help="prediction or behavior"),
           out: Path = typer.Option(..., help="the SQLite file to write"),
           params: Path = typer.Option(None, help="JSON/TOML parameters of the engine (replay and export); values "
                                                  "that differ from production's and no decision shipped are "
                                                  "listed as unreviewed"),
           decision: Path = typer.Option(None, help="a decision written by `thatchlab decide --out`: its params "
                                                    "are replayed and exported, with its evidence"),
           overwrite: bool = typer.Option(False, help="replace an existing file"),
           production_model: str = typer.Option(None, help="the embedding model production will use"),
           allow_model_mismatch: bool = typer.Option(False, help="export even if the vectors' model differs"),
           lookup: Path = typer.Option(None, help="table of text, embedding used instead of the bundled model"),
           embedder: str = typer.Option(None, help="a sentence-transformers model (a local directory, or a name in "
                                                   "the Hugging Face cache) every text is embedded with instead of "
                                                   "the bundled model, e.g. a local copy of production's "
                                                   "bge-small-en-v1.5, so the export is in production's space")):
    """Replay an interaction log and export the final state as a production SQLite store."""
    choice("--engine", engine, SCORING)
    check_file_out(out, "--out")  # a directory is not a store to replace
    check_not_inputs([("--out", out), ("--out's manifest", out.with_name(out.stem + ".manifest.json"))],
                     [("LOG", log), ("--params", params), ("--decision", decision), ("--lookup", lookup)],
                     hint="export to a new file; to update a production store, `thatchlab merge` the export into it")
    if out.exists() and not overwrite:  # refused before the replay, not after it
        raise ExportExistsError(f"{out}: the file exists; pass --overwrite to replace it")
    check_export_target(out, overwrite)  # only an earlier export is replaced, never production or a log
    dec = None
    if decision is not None:
        dec = Decision.from_dict(read_mapping(decision, "decision"), source=str(decision))
        if dec.engine != engine:
            raise InputError(f"--decision {decision}: a decision for engine {dec.engine!r}, not {engine!r}")
    p = engine_params(engine, params) if params is not None or dec is None else dec.params
    emb = get_embedder(lookup, embedder)
    data = load_log(engine, log)
    res = run_replay(data, engine=engine, params=p, embedder=emb)
    state = engine_class(engine).from_tables(res.tables, embedder=emb, params=res.params)
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        result = export_sqlite(out, **{engine: state}, params={engine: p}, overwrite=overwrite,
                               decision=None if dec is None else {engine: dec},
                               log_end=data["ts"].max() if len(data) else None,
                               production_model=production_model, allow_model_mismatch=allow_model_mismatch)
    except ExportExistsError:
        raise ExportExistsError(f"{out}: the file exists; pass --overwrite to replace it") from None
    echo_pairs(sorted(result.counts.items()))
    manifest = json.loads(result.manifest_path.read_text(encoding="utf-8"))
    for line in manifest["environment"]:
        typer.echo(f"  environment: {line}")
    for key, changes in manifest["recommended_production_changes"].items():
        typer.echo(f"  recommended production change ({key}): "
                   + ", ".join(f"{k}={v!r}" for k, v in changes.items()))
    for key, values in manifest["unreviewed"].items():
        typer.echo(f"  unreviewed ({key}): " + ", ".join(f"{k}={v!r}" for k, v in values.items())
                   + " — no decision shipped these; merge refuses them without --allow-unreviewed")
    ident = manifest.get("embedder") or {}
    if ident.get("fingerprint"):
        typer.echo(f"  embedder: {ident.get('name')} ({ident.get('dim')}-d, fingerprint {ident['fingerprint']})")
    typer.echo(f"exported {', '.join(result.engines)} (model {result.model!r}) to {result.path}; "
               f"manifest: {result.manifest_path}")
