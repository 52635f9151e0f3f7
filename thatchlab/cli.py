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
def demo(out: Path = typer.Option(Path("reports/demo"), help="directory for the exported store"),
         version: str = typer.Option("0.1.0", help="seed version stamped on default behaviors")):
    """Scripted session through both scoring engines with the bundled model.

    Prints the replies and nudge blocks and exports the store.
    """
    from .demo import run_demo

    result = run_demo(out, version=version)
    typer.echo(result.text())


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
