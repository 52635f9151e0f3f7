"""Event and recall streams of mnemo's anticipation engine.

An event stream has one row per workspace event (``ts, workspace, session,
name, entities``); a recall stream one row per fact recalled by the agent
(``ts, workspace, session, fact_id, entities``). ``entities`` is a list of
entity names mentioned by the row (a JSON array in CSV files; null means
none). Validation names the file, row, column and what was expected.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.core.docstrings import fill_doc
from thatchlab.core.dtypes import is_text_dtype, nonempty_text, object_text
from thatchlab.logs import _docs
from thatchlab.logs._core import read_table, write_table
from thatchlab.logs._order import read_in_time_order
from thatchlab.logs._validate import LogSpec, RowRule, validate_frame

__all__ = ["EVENT_SPEC", "RECALL_SPEC", "validate_event_log", "read_event_log",
           "validate_recall_stream", "read_recall_stream", "write_stream"]


def _text(col):
    def test(df):
        return pd.Series(nonempty_text(df[col]), index=df.index)
    return RowRule(col, "non-empty text", test)


def _is_entity_list(v) -> bool:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return True
    if isinstance(v, (list, tuple, np.ndarray)):
        return all(isinstance(x, str) and x != "" for x in v)
    return False


_ENTITIES = RowRule("entities", 'a list of entity names (JSON array such as ["prod", "billing"]) or null',
                    lambda df: df["entities"].map(_is_entity_list))

EVENT_SPEC = LogSpec(name="event stream", required=("ts", "workspace", "session", "name"),
                     optional=("entities",), times=("ts",),
                     rules=(RowRule("ts", "a timezone-aware ISO-8601 time (not null)",
                                    lambda df: df["ts"].notna()),
                            _text("workspace"), _text("session"), _text("name"), _ENTITIES))
RECALL_SPEC = LogSpec(name="recall stream", required=("ts", "workspace", "session", "fact_id"),
                      optional=("entities",), times=("ts",),
                      rules=(RowRule("ts", "a timezone-aware ISO-8601 time (not null)",
                                     lambda df: df["ts"].notna()),
                             _text("workspace"), _text("session"), _text("fact_id"), _ENTITIES))


def _normalise(out):
    """``entities`` as lists; text held in a ``string``/Arrow/categorical column as the object
    column of ``str`` an object frame gives."""
    def texts(frame):
        for col in frame.columns:
            if col != "entities" and is_text_dtype(frame[col].dtype):
                frame[col] = object_text(frame[col])

    def one(v):
        if v is None or (isinstance(v, float) and np.isnan(v)):
            return []
        return [str(x) for x in v]
    if isinstance(out, tuple):
        valid, rejected = out
        valid["entities"] = [one(v) for v in valid["entities"]]
        texts(valid)
        return valid, rejected
    out["entities"] = [one(v) for v in out["entities"]]
    texts(out)
    return out


@fill_doc(validate=_docs.VALIDATE)
def validate_event_log(df: pd.DataFrame, source=None, errors: str = "raise"):
    """Validate an event stream; ``entities`` come back as lists (``[]`` for null).

    {validate}

    See Also
    --------
    read_event_log : reads and validates a file.
    validate_recall_stream : the recall stream's sibling.

    Examples
    --------
    >>> df = pd.DataFrame({"ts": ["2026-01-05T09:00:00Z"], "workspace": ["w"],
    ...                    "session": ["s1"], "name": ["deploy.success"]})
    >>> validate_event_log(df)["entities"].tolist()
    [[]]
    """
    return _normalise(validate_frame(df, EVENT_SPEC, source=source, errors=errors))


@fill_doc(validate=_docs.VALIDATE)
def validate_recall_stream(df: pd.DataFrame, source=None, errors: str = "raise"):
    """Validate a recall stream; ``entities`` come back as lists (``[]`` for null).

    {validate}

    See Also
    --------
    read_recall_stream : reads and validates a file.
    validate_event_log : the event stream's sibling.

    Examples
    --------
    >>> df = pd.DataFrame({"ts": ["2026-01-05T09:00:00Z"], "workspace": ["w"],
    ...                    "session": ["s1"], "fact_id": ["weekly_metrics"], "entities": [["kpi"]]})
    >>> validate_recall_stream(df)["entities"].tolist()
    [['kpi']]
    """
    return _normalise(validate_frame(df, RECALL_SPEC, source=source, errors=errors))


@fill_doc(read=_docs.READ)
def read_event_log(path, errors: str = "raise"):
    """Read and validate an event stream from JSONL, CSV (``entities`` as JSON arrays) or Parquet.

    {read}

    See Also
    --------
    validate_event_log : the checks applied.
    read_recall_stream : the recall stream's reader.
    write_stream : the writer.
    """
    raw = read_table(path, json_columns=["entities"], required=EVENT_SPEC.required,
                     columns={"ts": "time", "workspace": "text", "session": "text", "name": "text",
                              "entities": "texts"})
    return read_in_time_order(validate_event_log(raw, source=str(path), errors=errors), path, errors)


@fill_doc(read=_docs.READ)
def read_recall_stream(path, errors: str = "raise"):
    """Read and validate a recall stream from JSONL, CSV (``entities`` as JSON arrays) or Parquet.

    {read}

    See Also
    --------
    validate_recall_stream : the checks applied.
    read_event_log : the event stream's reader.
    write_stream : the writer.
    """
    raw = read_table(path, json_columns=["entities"], required=RECALL_SPEC.required,
                     columns={"ts": "time", "workspace": "text", "session": "text", "fact_id": "text",
                              "entities": "texts"})
    return read_in_time_order(validate_recall_stream(raw, source=str(path), errors=errors), path, errors)


@fill_doc(write_path=_docs.WRITE_PATH)
def write_stream(df: pd.DataFrame, path):
    """Write an event or recall stream (``entities`` as JSON arrays in CSV).

    Parameters
    ----------
    df : pandas.DataFrame
        The stream; it is not modified.
    {write_path}

    Raises
    ------
    LogValidationError
        An unknown suffix or a value the format cannot hold.

    See Also
    --------
    read_event_log, read_recall_stream : read it back.
    """
    # list cells are detected and JSON-encoded by write_table itself
    return write_table(df, path)
