"""``thatchlab run`` (the main job on a data directory) and ``thatchlab demo`` (the scripted session)."""

from __future__ import annotations

from pathlib import Path

import typer

from thatchlab import run as job
from thatchlab.cli import demo as scripted
from thatchlab.cli._inputs import model_embedder
from thatchlab.core.errors import InputError

__all__ = ["run", "demo"]


def run(data: Path = typer.Option(None, help="directory holding the logs (default: the samples bundled "
                                              "with thatchlab, thatchlab.datasets)"),
        out: Path = typer.Option(Path("reports/run"), help="directory for the report and the export"),
        config: Path = typer.Option(None, help="JSON or TOML file of per-engine parameters"),
        release: list[str] = typer.Option(None, "--release", help="SYSTEM=RELEASE: replay that production "
                                          "release of a system (thatch, omi, ai-memory, mnemo; repeatable); "
                                          "default: each system's newest"),
        embedder: str = typer.Option(None, help="a sentence-transformers model (local directory or cached name) "
                                                "to embed every text with instead of the bundled one, e.g. a "
                                                "local copy of production's bge-small-en-v1.5, so the export "
                                                "merges into production's embedding space")):
    """The main job: replay every engine, sweep, fit, report and export."""
    res = job.run_all(data, out, config=config, release=release or None,
                  embedder=None if embedder is None else model_embedder(embedder))
    for name, secs in res.timings.items():
        typer.echo(f"  {name:<28} {secs:6.1f} s")
    if res.skipped:
        typer.echo(f"  skipped (no log): {', '.join(res.skipped)}")
    typer.echo(f"report: {res.report_path}   export: {res.export_path}   manifest: {res.manifest_path}")


def demo(out: Path = typer.Option(Path("reports/demo"), help="directory for the exported store"),
         version: str = typer.Option("0.1.0", help="seed version stamped on default behaviors")):
    """Scripted session through both scoring engines with the bundled model.

    Prints the replies and nudge blocks and exports the store.
    """
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: is a file; expected a directory for the exported store")

    result = scripted.run_demo(out, version=version)
    typer.echo(result.text())
