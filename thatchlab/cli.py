"""The ``thatchlab`` command.

Every verb has ``--help``; bad input ends with one line naming the problem
and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from .errors import ThatchlabError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="thatchlab: replay, measure, tune and export the math behind agent memory.")


@app.callback()
def _root():
    """thatchlab: replay, measure, tune and export the math behind agent memory."""


@app.command()
def run(data: Path = typer.Option(Path("data"), help="directory holding the sample logs"),
        out: Path = typer.Option(Path("reports/run"), help="directory for the report and the export"),
        config: Path = typer.Option(None, help="JSON or TOML file of per-engine parameters")):
    """The main job: replay every engine, sweep, fit, report and export."""
    from .run import run_all

    res = run_all(data, out, config=config)
    for name, secs in res.timings.items():
        typer.echo(f"  {name:<28} {secs:6.1f} s")
    if res.skipped:
        typer.echo(f"  skipped (no log): {', '.join(res.skipped)}")
    typer.echo(f"report: {res.report_path}   export: {res.export_path}   manifest: {res.manifest_path}")


@app.command()
def demo(out: Path = typer.Option(Path("reports/demo"), help="directory for the exported store"),
         version: str = typer.Option("0.1.0", help="seed version stamped on default behaviors")):
    """Scripted session through both scoring engines with the bundled model.

    Prints the replies and nudge blocks and exports the store.
    """
    from .demo import run_demo

    result = run_demo(out, version=version)
    typer.echo(result.text())


def _write_frame(df, path: Path):
    """Write a DataFrame as CSV, Parquet or JSON (by suffix)."""
    from .errors import InputError

    suffix = path.suffix.lower()
    out = df.copy()
    if "embedding" in out.columns and suffix != ".parquet":
        out = out.drop(columns=["embedding"])
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".csv":
        out.to_csv(path, index=False)
    elif suffix == ".parquet":
        out = out.assign(**{c: out[c].map(lambda v: None if v is None else list(map(float, v)))
                            for c in out.columns if c == "embedding"})
        out.to_parquet(path, index=False)
    elif suffix == ".json":
        out.to_json(path, orient="records", indent=1, date_format="iso")
    else:
        raise InputError(f"{path}: unknown output format {suffix!r}; expected .csv, .parquet or .json")


@app.command("import")
def import_(path: Path = typer.Argument(..., help="a thatch or thatchlab SQLite file (opened read-only)"),
            out: Path = typer.Option(None, help="directory to write every table into"),
            fmt: str = typer.Option("csv", "--format", help="csv, parquet or json")):
    """Read a store and print what it holds; optionally write its tables out."""
    from .store import import_sqlite

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
                _write_frame(df, out / f"{key}_{name}.{fmt}")
    for key in ("beliefs", "calibration", "patterns"):
        obj = getattr(contents, key)
        if obj is None:
            continue
        frames = obj if isinstance(obj, dict) else {key: getattr(obj, "frame", obj)}
        for name, df in frames.items():
            if hasattr(df, "to_csv"):
                typer.echo(f"  {key}: {name} {len(df)}")
                if out is not None:
                    _write_frame(df, out / f"{name}.{fmt}")
    if out is not None:
        typer.echo(f"tables written to {out}")


@app.command()
def merge(export: Path = typer.Argument(..., help="a thatchlab export"),
          production: Path = typer.Argument(..., help="the production thatch file to update"),
          backup: bool = typer.Option(True, help="keep <production>.bak")):
    """Replace the exported engines' rows in a production file, keeping every other table."""
    from .store import merge_into

    res = merge_into(export, production, backup=backup)
    for table, n in res.replaced.items():
        typer.echo(f"  {table}: {res.removed.get(table, 0)} rows replaced by {n}")
    typer.echo(f"merged {', '.join(res.engines)} into {res.path}"
               + (f" (backup: {res.backup_path})" if res.backup_path else ""))


def main(argv=None):
    """Entry point: run the app, turning thatchlab errors into one clear line."""
    try:
        app(args=argv, standalone_mode=False)
    except ThatchlabError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except (typer.Abort, KeyboardInterrupt):
        typer.echo("aborted", err=True)
        sys.exit(130)
    except Exception as exc:  # usage errors of the (vendored) click parser
        if hasattr(exc, "show") and hasattr(exc, "exit_code"):
            msg = exc.format_message() if hasattr(exc, "format_message") else str(exc)
            if msg:
                typer.echo(f"error: {msg} (see --help)", err=True)
            sys.exit(exc.exit_code or 2)
        if type(exc).__name__ == "Exit" and hasattr(exc, "exit_code"):
            sys.exit(exc.exit_code)
        raise


if __name__ == "__main__":  # pragma: no cover
    main()
