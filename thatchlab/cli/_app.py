"""The typer app behind ``thatchlab``: its verbs in help order, and :func:`main`, which owns the exit codes.

Verbs: ``run`` (the main job), ``demo``, ``import``, ``merge``, ``restore``, ``replay``,
``sweep``, ``fit``, ``calibrate``, ``mine``, ``export``, ``synth``, ``ingest`` and
``fidelity``. Logs
are read as JSONL, CSV or Parquet and tables written as CSV, Parquet or
JSON, by suffix. Every verb has ``--help``; bad input ends with one line
naming the problem and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import functools
import os
import sys
import warnings

import typer
from typer.core import TyperCommand

from thatchlab import __version__
from thatchlab.cli import _fidelity, _fit, _ingest, _job, _mine, _replay, _store, _synth
from thatchlab.cli._io import os_error_text, without_errno
from thatchlab.core.errors import ThatchlabError

__all__ = ["app", "main", "VERBS"]

_HELP = "thatchlab: replay, measure, tune and export the math behind agent memory."

app = typer.Typer(add_completion=False, no_args_is_help=True, help=_HELP)


def _print_version(value: bool):
    if value:
        typer.echo(f"thatchlab {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                       help="print the version and exit")):
    """thatchlab: replay, measure, tune and export the math behind agent memory."""


#: Verb name → function, in the order ``thatchlab --help`` lists them.
VERBS = {
    "run": _job.run,
    "demo": _job.demo,
    "import": _store.import_,
    "merge": _store.merge,
    "restore": _store.restore,
    "prune-backups": _store.prune_backups,
    "replay": _replay.replay,
    "sweep": _replay.sweep,
    "decide": _replay.decide,
    "fit": _fit.fit,
    "calibrate": _fit.calibrate,
    "mine": _mine.mine,
    "export": _store.export,
    "synth": _synth.synth,
    "ingest": _ingest.ingest,
    "fidelity": _fidelity.fidelity,
}


def one_line(text) -> str:
    """``text`` on one line, printable on any terminal (a lone surrogate becomes ``\\udXXX``).

    >>> one_line("bad\\nvalue")
    'bad value'
    """
    flat = " ".join(str(text).replace("\r", "\n").split("\n"))
    return flat.encode("utf-8", "backslashreplace").decode("utf-8")


def fail(message) -> None:
    """Print the one ``error:`` line of a failed verb on stderr."""
    if isinstance(message, OSError):
        message = os_error_text(message)
    typer.echo(f"error: {without_errno(one_line(message))}", err=True)


_INTERRUPTED = []


def interrupted() -> None:
    """Print the one line of an interrupted verb on stderr."""
    _INTERRUPTED.append(True)
    typer.echo("interrupted", err=True)


def _said_interrupted() -> bool:
    return bool(_INTERRUPTED)


def _warning_line(message, category, filename, lineno, file=None, line=None):
    typer.echo(f"warning: {message}", err=True)


def guarded(verb):
    """``verb`` with thatchlab's exits, the same under :func:`main` and typer's own runner.

    A :class:`~thatchlab.core.errors.ThatchlabError` or an OS error prints one
    ``error:`` line and exits 2; Ctrl-C (KeyboardInterrupt) prints
    ``interrupted`` and exits 130. Outputs are written atomically, so an
    interrupted verb leaves no file that looks complete. Warnings (a log not
    in time order, say) print as one ``warning:`` line each.
    """
    @functools.wraps(verb)
    def run(*args, **kwargs):
        try:
            with warnings.catch_warnings():  # a warning is one "warning:" line, not a source excerpt
                warnings.showwarning = _warning_line
                return verb(*args, **kwargs)
        except ThatchlabError as exc:
            fail(exc)
        except OSError as exc:  # unreadable/unwritable paths, full disks
            fail(exc)
        except KeyboardInterrupt:
            interrupted()
            raise typer.Exit(130) from None
        raise typer.Exit(2)
    return run


class _Command(TyperCommand):
    """A verb whose help shows no type for on/off flags (typer prints ``<bool>`` there, which says nothing)."""

    def get_params(self, ctx):
        params = super().get_params(ctx)
        for p in params:
            if getattr(p, "is_flag", False) and p.metavar is None:
                p.metavar = ""
        return params


for _name, _verb in VERBS.items():
    app.command(_name, cls=_Command)(guarded(_verb))


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
    error of the parser (one ``error:`` line); 130 on Ctrl-C (one
    ``interrupted`` line); 1 for anything unexpected, whose traceback
    ``THATCHLAB_DEBUG=1`` shows instead.
    """
    _INTERRUPTED.clear()
    try:
        code = app(args=argv, standalone_mode=False)
    except ThatchlabError as exc:
        fail(exc)
        sys.exit(2)
    except (typer.Abort, KeyboardInterrupt):
        interrupted()
        sys.exit(130)
    except Exception as exc:  # usage errors of the (vendored) click parser
        if hasattr(exc, "show") and hasattr(exc, "exit_code"):
            msg = exc.format_message() if hasattr(exc, "format_message") else str(exc)
            if msg:
                fail(f"{msg} (see --help)")
            sys.exit(exc.exit_code or 2)
        if type(exc).__name__ == "Exit" and hasattr(exc, "exit_code"):
            sys.exit(exc.exit_code)
        if isinstance(exc, OSError):  # unreadable/unwritable paths, full disks
            fail(exc)
            sys.exit(2)
        if os.environ.get("THATCHLAB_DEBUG"):
            raise
        fail(f"unexpected {type(exc).__name__}: {' '.join(str(exc).split()) or 'no message'} "
             "(set THATCHLAB_DEBUG=1 for the traceback)")
        sys.exit(1)
    # typer returns the code of a typer.Exit in this mode (a verb's exit 2, or
    # 130 for a Ctrl-C that arrived outside a verb, which it printed nothing for)
    if isinstance(code, int) and code:
        if code == 130 and not _said_interrupted():
            interrupted()
        sys.exit(code)
