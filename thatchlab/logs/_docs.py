"""Numpydoc paragraphs the log readers, validators and writers share, each written once.

They are filled into the docstrings by :func:`thatchlab.core.docstrings.fill_doc` at import
time; see that module for the placeholder rule.
"""

from __future__ import annotations

_ERRORS = """
errors : {"raise", "report"}, default="raise"
    ``"raise"`` fails on the first bad row; ``"report"`` keeps the valid
    rows and returns the rejected ones with their reasons.
"""

#: ``Parameters``, ``Returns`` and ``Raises`` of every ``validate_*`` function.
VALIDATE = """
Parameters
----------
df : pandas.DataFrame
    The log as read (text times are parsed); it is not modified.
source : str, optional
    The file the frame came from, named in the messages.
""" + _ERRORS.lstrip("\n") + """
Returns
-------
pandas.DataFrame or tuple of pandas.DataFrame
    The validated, typed copy, or ``(valid, rejected)`` with ``errors="report"``.

Raises
------
LogValidationError
    With ``errors="raise"``, at the first bad row, naming file, row,
    column and what was expected.
"""

#: ``Parameters``, ``Returns`` and ``Raises`` of every ``read_*`` function that validates.
READ = """
Parameters
----------
path : str or path-like
    A ``.jsonl``, ``.csv`` or ``.parquet`` file.
""" + _ERRORS.lstrip("\n") + """
Returns
-------
pandas.DataFrame or tuple of pandas.DataFrame
    The validated log sorted by ``ts`` (stably; a ``UserWarning`` says
    how many rows moved), or ``(valid, rejected)`` with ``errors="report"``.

Raises
------
LogValidationError
    The file is missing or unreadable, or (with ``errors="raise"``) holds
    a bad row.
"""

#: ``path`` and ``Returns`` of every ``write_*`` function.
WRITE_PATH = """
path : str or path-like
    The file to write; its suffix (``.jsonl``, ``.csv`` or ``.parquet``) picks the format.

Returns
-------
pathlib.Path
    The file written.
"""

#: ``Parameters``, ``Returns`` and ``Raises`` of every ``write_*`` function that validates first.
WRITE = """
Parameters
----------
df : pandas.DataFrame
    The log; it is validated first and not modified.
""" + WRITE_PATH.lstrip("\n") + """
Raises
------
LogValidationError
    A bad row, an unknown suffix or a value the format cannot hold.
"""
