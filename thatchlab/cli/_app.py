"""The typer app behind ``thatchlab``: its verbs in help order, and :func:`main`, which owns the exit codes.

Verbs: ``run`` (the main job), ``demo``, ``import``, ``merge``, ``replay``,
``sweep``, ``fit``, ``calibrate``, ``mine``, ``export`` and ``synth``. Logs
are read as JSONL, CSV or Parquet and tables written as CSV, Parquet or
JSON, by suffix. Every verb has ``--help``; bad input ends with one line
naming the problem and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import os
import sys

import typer

from thatchlab.cli import _fit, _job, _mine, _replay, _store, _synth
from thatchlab.core.errors import ThatchlabError

__all__ = ["app", "main", "VERBS"]

_HELP = "thatchlab: replay, measure, tune and export the math behind agent memory."

app = typer.Typer(add_completion=False, no_args_is_help=True, help=_HELP)


@app.callback()
def _root():
    """thatchlab: replay, measure, tune and export the math behind agent memory."""


#: Verb name → function, in the order ``thatchlab --help`` lists them.
VERBS = {
    "run": _job.run,
    "demo": _job.demo,
    "import": _store.import_,
    "merge": _store.merge,
    "replay": _replay.replay,
    "sweep": _replay.sweep,
    "fit": _fit.fit,
    "calibrate": _fit.calibrate,
    "mine": _mine.mine,
    "export": _store.export,
    "synth": _synth.synth,
}
for _name, _verb in VERBS.items():
    app.command(_name)(_verb)


def main(argv=None):
    """Run the command line, turning every failure into one ``error:`` line and an exit code.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after ``thatchlab`` (default: ``sys.argv[1:]``).

    Notes
    -----
    Exit codes: 0 on success (``--help`` too); 2 for a
    :class:`~thatchlab.core.errors.ThatchlabError`, an OS error or a usage
    error of the parser; 130 when aborted; 1 for anything unexpected, whose
    traceback ``THATCHLAB_DEBUG=1`` shows instead.
    """
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
        if isinstance(exc, OSError):  # unreadable/unwritable paths, full disks
            typer.echo(f"error: {exc}", err=True)
            sys.exit(2)
        if os.environ.get("THATCHLAB_DEBUG"):
            raise
        msg = " ".join(str(exc).split()) or "no message"
        typer.echo(f"error: unexpected {type(exc).__name__}: {msg} (set THATCHLAB_DEBUG=1 for the traceback)",
                   err=True)
        sys.exit(1)
