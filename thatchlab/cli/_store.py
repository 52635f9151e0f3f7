"""The store verbs: ``export`` a replayed engine to SQLite, ``import`` a store's tables, ``merge`` into
production and ``restore`` a merge's backup."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from thatchlab.cli._inputs import SCORING, choice, engine_params, get_embedder, load_log
from thatchlab.cli._io import echo_pairs, read_mapping, write_frame

__all__ = ["export", "import_", "merge", "restore"]


def import_(path: Path = typer.Argument(..., help="a thatch or thatchlab SQLite file (opened read-only)"),
            out: Path = typer.Option(None, help="directory to write every table into"),
            fmt: str = typer.Option("csv", "--format", help="csv, parquet or json")):
    """Read a store and print what it holds; optionally write its tables out."""
    from thatchlab.store import import_sqlite

    contents = import_sqlite(path)
    typer.echo(f"{path}")
    if contents.meta:
        typer.echo(f"  thatchlab export, model {contents.meta.get('model')!r}, "
                   f"engines {contents.meta.get('engines')}")
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
        frames = obj if isinstance(obj, dict) else {key: getattr(obj, "frame", obj)}
        for name, df in frames.items():
            if hasattr(df, "to_csv"):
                typer.echo(f"  {key}: {name} {len(df)}")
                if out is not None:
                    write_frame(df, out / f"{name}.{fmt}")
    if out is not None:
        typer.echo(f"tables written to {out}")


def merge(export: Path = typer.Argument(..., help="a thatchlab export (its manifest beside it)"),
          production: Path = typer.Argument(..., help="the production thatch file to update (it may be in use)"),
          backup: bool = typer.Option(True, help="keep <production>.bak, taken under production's write lock"),
          dry_run: bool = typer.Option(False, "--dry-run", help="report what would change; write nothing"),
          verify_manifest: bool = typer.Option(True, help="check the export's sha256 against its manifest"),
          timeout: float = typer.Option(30.0, help="seconds to wait for another writer of production"),
          allow_unreviewed: bool = typer.Option(False, "--allow-unreviewed",
                                                help="merge parameter values no decision shipped")):
    """Replace the exported engines' rows in a production file, keeping every other table.

    One transaction in the live file under its write lock: a failure leaves
    production exactly as it was.
    """
    from thatchlab.store import merge_into

    res = merge_into(export, production, backup=backup, dry_run=dry_run, verify_manifest=verify_manifest,
                     timeout=timeout, allow_unreviewed=allow_unreviewed)
    for engine, values in res.unreviewed.items():
        typer.echo(f"  unreviewed ({engine}): " + ", ".join(f"{k}={v!r}" for k, v in values.items())
                   + " — no decision shipped these; merged because --allow-unreviewed was given")
    verb = "would be replaced" if res.dry_run else "replaced"
    for table, n in res.replaced.items():
        typer.echo(f"  {table}: {res.removed.get(table, 0)} rows {verb} by {n}")
    if res.added_stores:
        typer.echo(f"  stores: {'would add' if res.dry_run else 'added'} {', '.join(res.added_stores)}")
    typer.echo(f"  kept as they were: {', '.join(res.kept) or 'no other tables'}")
    if res.dry_run:
        typer.echo(f"dry run: nothing written; merging {', '.join(res.engines)} into {res.path} would succeed")
    else:
        typer.echo(f"merged {', '.join(res.engines)} into {res.path}"
                   + (f" (backup: {res.backup_path})" if res.backup_path else ""))


def restore(backup: Path = typer.Argument(..., help="a backup of a merge (<production>.bak)"),
            production: Path = typer.Argument(..., help="the production file to put it back into"),
            timeout: float = typer.Option(30.0, help="seconds to wait for another writer of production")):
    """Put a merge's backup back into the production file, under its write lock, keeping owner and mode."""
    from thatchlab.store import restore as restore_backup

    res = restore_backup(backup, production, timeout=timeout)
    echo_pairs(sorted(res.counts.items()))
    typer.echo(f"restored {res.backup_path} into {res.path}")


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
           lookup: Path = typer.Option(None, help="table of text, embedding used instead of the bundled model")):
    """Replay an interaction log and export the final state as a production SQLite store."""
    from thatchlab.core.errors import ExportExistsError, InputError
    from thatchlab.replay import run as run_replay
    from thatchlab.replay.scoring import engine_class
    from thatchlab.store import export_sqlite

    choice("--engine", engine, SCORING)
    if out.exists() and not overwrite:  # refused before the replay, not after it
        raise ExportExistsError(f"{out}: the file exists; pass --overwrite to replace it")
    dec = None
    if decision is not None:
        from thatchlab.tune import Decision

        dec = Decision.from_dict(read_mapping(decision, "decision"), source=str(decision))
        if dec.engine != engine:
            raise InputError(f"--decision {decision}: a decision for engine {dec.engine!r}, not {engine!r}")
    p = engine_params(engine, params) if params is not None or dec is None else dec.params
    emb = get_embedder(lookup)
    res = run_replay(load_log(engine, log), engine=engine, params=p, embedder=emb)
    state = engine_class(engine).from_tables(res.tables, embedder=emb, params=res.params)
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        result = export_sqlite(out, **{engine: state}, params={engine: p}, overwrite=overwrite,
                               decision=None if dec is None else {engine: dec},
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
    typer.echo(f"exported {', '.join(result.engines)} (model {result.model!r}) to {result.path}; "
               f"manifest: {result.manifest_path}")
