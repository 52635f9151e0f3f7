"""Errors raised by thatchlab.

Every error the toolkit raises on bad input is a :class:`ThatchlabError`
subclass, so callers can catch one type. Messages name the file, row and
column involved (when there is one) and what was expected instead.
"""

from __future__ import annotations

import inspect
import os
import warnings

__all__ = [
    "warn",
    "ThatchlabError",
    "InputError",
    "TimeError",
    "MetricInputError",
    "ParamsError",
    "LogValidationError",
    "EmbeddingError",
    "EmbeddingLookupError",
    "StoreSchemaError",
    "StoreWriteError",
    "ExportExistsError",
    "ModelMismatchError",
    "UnreviewedError",
    "StoreConflictError",
    "ReleaseMismatchError",
]


class ThatchlabError(Exception):
    """Base class of every error raised by thatchlab on bad input or state.

    Catch it to handle any of thatchlab's refusals in one place; the
    subclasses say what kind of input was refused (and most are also a
    ``ValueError`` or an ``OSError``, as the standard library would raise).

    See Also
    --------
    InputError, ParamsError, LogValidationError, StoreSchemaError : Common subclasses.

    Examples
    --------
    >>> from thatchlab.core.params import ScoringParams
    >>> try:
    ...     ScoringParams(k=-1)
    ... except ThatchlabError as err:
    ...     print(type(err).__name__, err)
    ParamsError k: expected > 0, got -1
    """


class InputError(ThatchlabError, ValueError):
    """An argument has a value the engine cannot accept (unknown signal, empty text...)."""


class TimeError(InputError):
    """A timestamp is naive, unparsable or otherwise unusable."""


class MetricInputError(InputError):
    """Outcomes or forecasts a metric cannot score: labels outside {0, 1}, forecasts outside
    [0, 1], NaN, negative weights or mismatched lengths (as scikit-learn refuses them)."""


class ParamsError(ThatchlabError, ValueError):
    """A parameter dataclass got a value outside its domain or an unknown key."""


class LogValidationError(ThatchlabError, ValueError):
    """A log failed validation.

    Parameters
    ----------
    message : str
        The error's text (names the first problem).
    file : str, optional
        The file read, when there is one.
    row : int, optional
        The row of the first problem.
    column : str, optional
        The column of the first problem.
    expected : str, optional
        What was expected there.
    failures : pandas.DataFrame, optional
        Every problem found (row, column, value, expected), when known.

    Attributes
    ----------
    file, row, column, expected : the location of the first problem and what
        was expected there (any may be ``None`` when not applicable).
    failures : pandas.DataFrame or None
        Every problem found (row, column, value, expected), when known.
    """

    def __init__(self, message, *, file=None, row=None, column=None, expected=None,
                 failures=None):
        super().__init__(message)
        self.file = file
        self.row = row
        self.column = column
        self.expected = expected
        self.failures = failures


class EmbeddingError(ThatchlabError, ValueError):
    """An embedding is unusable: NaN or infinite values, wrong dimension, wrong model."""


class EmbeddingLookupError(EmbeddingError):
    """A :class:`~thatchlab.embed.LookupEmbedder` has no vector for a text.

    Parameters
    ----------
    message : str
        The error's text.
    text : str, optional
        The text that has no vector.

    Attributes
    ----------
    text : str or None
        The text that has no vector.
    """

    def __init__(self, message, *, text=None):
        super().__init__(message)
        self.text = text


class StoreSchemaError(ThatchlabError):
    """A SQLite file is corrupt, foreign, or lacks tables/columns thatchlab needs."""


class StoreWriteError(ThatchlabError, OSError):
    """An export or merge could not be written; the target is left as it was."""


class ExportExistsError(StoreWriteError, FileExistsError):
    """The export target exists and ``overwrite=True`` was not given."""


class ModelMismatchError(ThatchlabError, ValueError):
    """Vectors made with one embedding model are declared as another's."""


class UnreviewedError(ThatchlabError, ValueError):
    """An export carries parameter values no decision shipped, and the merge was not told to allow them.

    Parameters
    ----------
    message : str
        The error's text.
    unreviewed : dict, optional
        ``{engine: {parameter: value}}``, as the export's manifest lists them.

    Attributes
    ----------
    unreviewed : dict
        ``{engine: {parameter: value}}``, as the export's manifest lists them.
    """

    def __init__(self, message, *, unreviewed=None):
        super().__init__(message)
        self.unreviewed = unreviewed or {}


class StoreConflictError(ThatchlabError):
    """A merge would replace production rows that changed after the log the export was replayed from.

    Parameters
    ----------
    message : str
        The error's text.
    count : int, default=0
        The production rows newer than ``log_end``.
    log_end : str, optional
        The export's ``log_end``.

    Attributes
    ----------
    count : int
        The production rows newer than ``log_end``.
    log_end : str
        The export's ``log_end``.
    """

    def __init__(self, message, *, count=0, log_end=None):
        super().__init__(message)
        self.count = count
        self.log_end = log_end


class ReleaseMismatchError(ThatchlabError, ValueError):
    """A merge was given an export made for another production release than the one the
    production file's schema shows (and was not told to allow it).

    Parameters
    ----------
    message : str
        The error's text.
    export_release : str, optional
        The release the export was made for.
    production_release : str, optional
        The release production's schema shows.

    Attributes
    ----------
    export_release, production_release : str
        The release the export was made for, and the one production's schema shows.
    """

    def __init__(self, message, *, export_release=None, production_release=None):
        super().__init__(message)
        self.export_release = export_release
        self.production_release = production_release


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """Issue a warning attributed to the first caller outside thatchlab (the user's own line).

    A fixed ``stacklevel`` is right only for one call depth; this walks out
    of the package's frames instead, so a warning raised deep inside a
    replay points at the notebook cell or script line that asked for it.

    Parameters
    ----------
    message : str
        The warning's text.
    category : type of Warning, default=UserWarning
        The warning's class.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn("look here")
    >>> caught[0].filename.endswith("errors.py")
    False
    """
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    frame, level = inspect.currentframe().f_back, 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    del frame
    warnings.warn(message, category, stacklevel=level)
