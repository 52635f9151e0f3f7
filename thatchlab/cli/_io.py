"""Files in and out of the verbs: tables written by suffix, config mappings, ``name value`` lines.

The helpers import neither pandas nor an engine: they work on the frames
and paths the verbs hand them, and raise thatchlab's error types.
"""

from __future__ import annotations

import csv
import errno
import json
import os
import re
import tomllib
from pathlib import Path

import typer

from thatchlab.core.errors import InputError, ThatchlabError

__all__ = ["TABLE_SUFFIXES", "os_error_text", "without_errno", "write_frame", "write_atomic", "write_out", "check_out",
           "check_file_out", "check_resolves", "check_distinct", "check_not_inputs",
           "read_mapping", "is_sqlite", "fmt_value", "echo_pairs"]

#: Suffixes of the tables the verbs write.
TABLE_SUFFIXES = (".csv", ".parquet", ".json")


def os_error_text(exc: OSError) -> str:
    """What an OS error means for the path it names, in words (never Python's ``[Errno N]`` form).

    >>> os_error_text(FileNotFoundError(2, "No such file or directory", "/nonexistent/a.csv"))
    '/nonexistent/a.csv: no such file or directory'
    """
    name = exc.filename
    if name is None:
        return (exc.strerror or type(exc).__name__).lower() if exc.strerror else without_errno(str(exc))
    path = Path(os.fsdecode(name)) if isinstance(name, (str, bytes, os.PathLike)) else None
    if isinstance(exc, FileExistsError) and path is not None and path.exists() and not path.is_dir():
        return f"{name}: is a file; expected a directory there (or nothing)"
    if isinstance(exc, FileExistsError):
        return f"{name}: already exists"
    if isinstance(exc, NotADirectoryError):
        return f"{name}: a part of this path is a file; expected directories up to the last part"
    if isinstance(exc, IsADirectoryError):
        return f"{name}: is a directory; expected a file"
    if isinstance(exc, PermissionError):
        return f"{name}: permission denied"
    if isinstance(exc, FileNotFoundError):
        return f"{name}: no such file or directory"
    if exc.errno == errno.ENOSPC:
        return f"{name}: no space left on the device"
    if exc.errno == errno.ELOOP:
        return f"{name}: a symbolic link loop; expected a path that resolves"
    what = (exc.strerror or type(exc).__name__).lower()
    return f"{name}: {what}" + (f" ({exc.filename2})" if exc.filename2 else "")


_ERRNO = re.compile(r"\[Errno -?\d+\] ([^:\]]+?)(?:: '([^']*)')?(?=$|[);,]|: )")


def without_errno(text: str) -> str:
    """``text`` with Python's ``[Errno N] Reason: 'path'`` pieces worded as ``path: reason``.

    >>> without_errno("x.csv: cannot write (FileExistsError: [Errno 17] File exists: 'out')")
    'x.csv: cannot write (FileExistsError: out: file exists)'
    """
    return _ERRNO.sub(lambda m: f"{m.group(2)}: {m.group(1).lower()}" if m.group(2) else m.group(1).lower(), text)


def write_frame(df, path: Path) -> None:
    """Write a DataFrame as CSV, Parquet or JSON, chosen by the suffix of ``path``.

    Parameters
    ----------
    df : pandas.DataFrame
        The table. An ``embedding`` column is kept (as lists of floats) only
        in Parquet; CSV and JSON drop it. CSV quotes every text field and
        leaves numbers bare, so text holding line breaks (a lone ``\\r`` too),
        quotes, commas or edge spaces reads back as written.
    path : Path
        The file to write; its parent directories are created.

    Raises
    ------
    InputError
        When the suffix is not ``.csv``, ``.parquet`` or ``.json``.
    """
    suffix = path.suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        raise InputError(f"{path}: unknown output format {suffix!r}; expected .csv, .parquet or .json")
    out = df.copy()
    if "embedding" in out.columns and suffix != ".parquet":
        out = out.drop(columns=["embedding"])
    if suffix == ".parquet":
        out = out.assign(**{c: out[c].map(lambda v: None if v is None else list(map(float, v)))
                            for c in out.columns if c == "embedding"})
    path.parent.mkdir(parents=True, exist_ok=True)

    def write(tmp):
        if suffix == ".csv":  # every text field quoted: a lone \r, a line break or a quote reads back as written
            out.to_csv(tmp, index=False, encoding="utf-8", quoting=csv.QUOTE_NONNUMERIC)
        elif suffix == ".parquet":
            out.to_parquet(tmp, index=False)
        else:
            out.to_json(tmp, orient="records", indent=1, date_format="iso")

    try:
        write_atomic(path, write)
    except (UnicodeEncodeError, ValueError, TypeError, OverflowError) as exc:  # a value the format cannot hold
        raise InputError(f"{path}: cannot write ({type(exc).__name__}: {' '.join(str(exc).split())[:200]}); "
                         "nothing written") from None


def write_atomic(path: Path, write) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then move it into place.

    The target appears only once complete: an error or a Ctrl-C during
    ``write`` removes the temporary file and leaves ``path`` as it was.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def write_out(df, path: Path) -> None:
    """:func:`write_frame`, turning the writers' own errors into one clear InputError.

    Parameters
    ----------
    df : pandas.DataFrame
        The table to write.
    path : Path
        The output file (``.csv``, ``.parquet`` or ``.json``).
    """
    try:
        write_frame(df, path)
    except ThatchlabError:
        raise
    except OSError as exc:  # a directory where the file goes, a file where a directory is expected...
        raise InputError(f"{path}: cannot write ({os_error_text(exc)})") from None
    except Exception as exc:  # pyarrow errors
        raise InputError(f"{path}: cannot write ({type(exc).__name__}: {without_errno(str(exc))})") from None


def check_out(*paths) -> None:
    """Fail before any work when an output file has an unknown suffix.

    Parameters
    ----------
    *paths : Path or None
        The output options of a verb; ``None`` (not given) is skipped.
    """
    for path in paths:
        if path is not None:
            check_file_out(path)
        if path is not None and Path(path).suffix.lower() not in TABLE_SUFFIXES:
            raise InputError(f"{path}: unknown output format {Path(path).suffix!r}; "
                             "expected .csv, .parquet or .json")


def check_file_out(path: Path, option: str | None = None) -> None:
    """Fail before any work when an output file's path names a directory, or runs through a file.

    >>> check_file_out(Path("/"), "--out")
    Traceback (most recent call last):
    ...
    thatchlab.core.errors.InputError: --out /: is a directory; expected a file to write
    """
    path = Path(path)
    named = f"{option} {path}" if option else str(path)
    if path.is_dir():
        raise InputError(f"{named}: is a directory; expected a file to write")
    for where in path.parents:  # the first part of the path that exists must be a directory
        if where.exists():
            if not where.is_dir():
                raise InputError(f"{named}: {where} is a file; expected a directory there")
            return


def check_resolves(*paths) -> None:
    """Fail before any work when a path is (or runs through) a symbolic link loop.

    >>> import os, tempfile
    >>> d = Path(tempfile.mkdtemp()); os.symlink(d / "b", d / "a"); os.symlink(d / "a", d / "b")
    >>> check_resolves(d / "a")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    thatchlab.core.errors.InputError: .../a: a symbolic link loop; expected a path that resolves to a file
    """
    for path in paths:
        if path is None:
            continue
        try:
            Path(path).resolve(strict=False)
            os_loop = False
        except RuntimeError:  # Python < 3.13 reports a loop so
            os_loop = True
        except OSError as exc:
            os_loop = exc.errno == errno.ELOOP
            if not os_loop:
                raise
        if os_loop:
            raise InputError(f"{path}: a symbolic link loop; expected a path that resolves to a file")


def check_distinct(*options) -> None:
    """Fail before any work when two output options name one file.

    Parameters
    ----------
    *options : (str, Path or None)
        ``(option, path)`` pairs; ``None`` (not given) is skipped. Paths are
        compared once resolved (``./a.csv`` and ``a.csv``, a symlink and its
        target), and by device and inode when both exist (a hard link).

    >>> check_distinct(("--events-out", Path("a.csv")), ("--metrics-out", Path("./a.csv")))
    Traceback (most recent call last):
    ...
    thatchlab.core.errors.InputError: --events-out and --metrics-out both name a.csv; expected two different files (the second write would replace the first)
    """
    seen = []
    for option, path in options:
        if path is None:
            continue
        p = Path(path)
        for other, q in seen:
            same = p.resolve() == q.resolve()
            if not same and p.exists() and q.exists():
                same = os.path.samefile(p, q)
            if same:
                raise InputError(f"{other} and {option} both name {path}; expected two different files "
                                 "(the second write would replace the first)")
        seen.append((option, p))


def _same_file(p: Path, q: Path) -> bool:
    try:
        if p.resolve() == q.resolve():
            return True
        return p.exists() and q.exists() and os.path.samefile(p, q)
    except (OSError, RuntimeError):  # unreadable or looping paths: the verb's own reads name them
        return False


def check_not_inputs(outputs, inputs, hint: str = "choose another path") -> None:
    """Fail before any work when an output option names one of the verb's inputs.

    Parameters
    ----------
    outputs, inputs : iterables of (str, Path or None)
        ``(option, path)`` pairs; ``None`` (not given) is skipped. Paths are
        compared as :func:`check_distinct` compares them.
    hint : str
        What to do instead, in the error's parentheses.

    >>> check_not_inputs([("--events-out", Path("log.csv"))], [("LOG", Path("./log.csv"))])
    Traceback (most recent call last):
    ...
    thatchlab.core.errors.InputError: --events-out log.csv: is LOG, an input of this command; writing it would replace what is being read (choose another path)
    """
    outputs = list(outputs)
    given = [(name, Path(q)) for name, q in inputs if q is not None]
    check_resolves(*(q for _, q in given), *(p for _, p in outputs))  # a symbolic link loop is named first
    for option, path in outputs:
        if path is None:
            continue
        for name, q in given:
            if _same_file(Path(path), q):
                raise InputError(f"{option} {path}: is {name}, an input of this command; writing it would "
                                 f"replace what is being read ({hint})")


def read_mapping(path: Path, what: str) -> dict:
    """A JSON or TOML file (TOML by its ``.toml`` suffix) holding a mapping.

    Parameters
    ----------
    path : Path
        The file.
    what : str
        What the file holds (``"config"``, ``"space"``), named in the errors.

    Returns
    -------
    dict
        The parsed mapping.
    """
    if Path(path).is_dir():
        raise InputError(f"{path}: is a directory; expected a JSON or TOML {what} file")
    if not Path(path).is_file():
        raise InputError(f"{path}: no such {what} file")
    try:
        text = Path(path).read_text(encoding="utf-8")
        if Path(path).suffix.lower() == ".toml":
            data = tomllib.loads(text)
        else:
            data = json.loads(text)
    except RecursionError:
        raise InputError(f"{path}: the {what} nests arrays or objects too deeply to read; expected a flat "
                         "mapping of JSON or TOML") from None
    except (ValueError, OSError) as exc:
        raise InputError(f"{path}: cannot read the {what} ({exc}); expected JSON or TOML") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a mapping in the {what} file, got {type(data).__name__}")
    return data


def is_sqlite(path: Path) -> bool:
    """True when ``path`` has a SQLite suffix or starts with SQLite's file header.

    >>> is_sqlite(Path("store.db")), is_sqlite(Path("/nonexistent/log.jsonl"))
    (True, False)
    """
    if Path(path).suffix.lower() in (".db", ".sqlite", ".sqlite3"):
        return True
    if not Path(path).is_file():  # a FIFO would block the read below; its reader names what it is
        return False
    try:
        with open(path, "rb") as fh:
            return fh.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def fmt_value(v) -> str:
    """One printed value: floats to six significant digits, everything else as ``str``.

    >>> fmt_value(0.123456789), fmt_value(3), fmt_value(True), fmt_value(None)
    ('0.123457', '3', 'True', 'None')
    """
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def echo_pairs(pairs) -> None:
    """Print ``name value`` lines with the names padded to one width.

    >>> echo_pairs([("brier", 0.25), ("n_events", 300)])
    brier     0.25
    n_events  300
    """
    pairs = list(pairs)
    width = max((len(str(k)) for k, _ in pairs), default=0)
    for k, v in pairs:
        typer.echo(f"{str(k):<{width}}  {fmt_value(v)}")
