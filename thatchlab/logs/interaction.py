"""The interaction log of the prediction and behavior engines (thatch).

One row per event a thatch deployment saw: a user ``message`` (the prompt that
may fire a nudge), the prediction tools (``prediction_update``,
``prediction_query``, ``prediction_list``, ``prediction_delete``) and the
behavior tools (``behavior_codify``, ``behavior_feedback``, ``behavior_list``,
``behavior_delete``), and from thatch ``07ecf87`` on ``prediction_mark_checked`` (a
verdict on a pair of predictions, its arguments in ``args``). Optional columns carry what the logging system surfaced
(``surfaced``), the probability it had of surfacing exactly that
(``propensity``) and a logged vector for ``text`` (``embedding``). Logs read
from an agent host's transcripts (:mod:`thatchlab.logs.ingest`) also carry
what production answered (:data:`LOGGED_COLUMNS`). :func:`signals_from_store`
turns a production store's provenance into a signal log.
"""

from __future__ import annotations

import contextlib
import json

import numpy as np
import pandas as pd

from thatchlab.core.docstrings import fill_doc
from thatchlab.core.dtypes import dictionary_codes, is_text_dtype
from thatchlab.core.errors import StoreSchemaError
from thatchlab.core.frames import plain_columns
from thatchlab.core.params.scoring import PREDICTION_SIGNALS
from thatchlab.core.sqlite import connect_readonly
from thatchlab.logs import _docs
from thatchlab.logs._core import ABSENT, block_frame, copy_frame, read_log, write_table
from thatchlab.logs._order import read_in_time_order
from thatchlab.logs._validate import LogSpec, RowRule, numbers_ok, validate_frame

__all__ = ["INTERACTION_KINDS", "INTERACTION_COLUMNS", "LOGGED_COLUMNS", "INTERACTION_LOG", "applied",
           "validate_interaction_log", "mark_checked_args",
           "read_interaction_log", "write_interaction_log", "signals_from_store"]

#: Event kinds of the interaction log.
INTERACTION_KINDS = ("message", "prediction_update", "prediction_query", "prediction_delete",
                     "behavior_codify", "behavior_feedback", "behavior_delete", "prediction_list",
                     "behavior_list", "prediction_mark_checked")
#: Columns in order; only ``ts``, ``session`` and ``kind`` are required.
INTERACTION_COLUMNS = ("ts", "session", "store", "kind", "text", "matcher", "statement", "signal",
                       "relevant", "rationale", "propensity", "surfaced", "embedding")
#: Optional columns of an ingested log, kept after :data:`INTERACTION_COLUMNS` when present:
#: the host's record id (``record_id``, what a re-ingest de-duplicates on), tool arguments
#: without a column of their own (``args``, JSON text), the reply production returned
#: (``logged_reply``), and on messages the nudge text production injected (``logged_nudge``)
#: with its parsed lines (``logged_items``, a list of objects; JSON text on disk), and
#: ``skip_reason``: why a tool call never ran in production (rejected by the user, an
#: error, still running), text on rows a replay skips and null on every row it applies.
#: What thatch's prompt hook did besides nudging, which a replay needs to follow a release's
#: hook rules (:mod:`thatchlab.replay`): ``logged_extraction``, on messages, the first line
#: of the extraction nudge the hook printed before the prompt (null when it printed none or
#: its output was not recorded), and ``subagent``, on every row of a sub-agent's session,
#: ``"task"`` (a sub-agent the model dispatched) or ``"extraction"`` (thatch's own
#: extraction child), null in a top-level session.
LOGGED_COLUMNS = ("record_id", "args", "logged_reply", "logged_nudge", "logged_items", "skip_reason",
                  "logged_extraction", "subagent")
_LOGGED_TEXTS = ("record_id", "args", "logged_reply", "logged_nudge", "skip_reason", "logged_extraction",
                 "subagent")
_TEXTS = ("session", "store", "kind", "text", "matcher", "statement", "signal", "rationale")
_BOOL_TEXT = {"true": True, "false": False, "1": True, "0": False, "True": True, "False": False}
#: What the reader parses each column as (the rest is inferred).
_READ_AS = {"ts": "time", **{c: "text" for c in _TEXTS}, "relevant": "bool", "propensity": "number",
            "surfaced": "texts", "embedding": "numbers", **{c: "text" for c in LOGGED_COLUMNS}}


def _isnull(v) -> bool:
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    return isinstance(v, (float, np.floating)) and bool(np.isnan(v))


def _is_text(v) -> bool:
    return isinstance(v, str) and v.strip() != ""


def _is_str(s: pd.Series) -> pd.Series:
    """True where a cell is a ``str`` (not a subclass such as ``numpy.str_``)."""
    return pd.Series(_str_cells(s, nonempty=False), index=s.index)


def _nonempty(s: pd.Series) -> pd.Series:
    """Vectorised :func:`_is_text` over a column."""
    return pd.Series(_str_cells(s, nonempty=True), index=s.index)


def _str_cells(s: pd.Series, nonempty: bool) -> np.ndarray:
    """Per cell: a ``str`` (that is not blank, with ``nonempty``). A categorical is judged by its
    categories; object cells by their set of types and distinct blank texts, then cell by cell
    only where those do not settle it."""
    if isinstance(s.dtype, pd.CategoricalDtype):
        per_category = _str_values(s.cat.categories.to_numpy(object), nonempty)
        return np.append(per_category, False)[s.cat.codes.to_numpy()]  # code -1 (null) → False
    if is_text_dtype(s.dtype):       # string / Arrow text: judged by its distinct values
        codes, values = dictionary_codes(s)
        return np.append(_str_values(values, nonempty), False)[codes]
    if s.dtype != object:
        return (s.map(type).eq(str) & (s.map(_is_text) if nonempty else True)).to_numpy(dtype=bool)
    return _str_values(s.to_numpy(object), nonempty)


def _str_values(vals: np.ndarray, nonempty: bool) -> np.ndarray:
    types = set(map(type, vals))
    if types <= {str}:
        is_str = np.ones(len(vals), dtype=bool)
    elif types <= {str, type(None)}:
        is_str = np.not_equal(vals, None)
    else:
        is_str = np.fromiter((type(v) is str for v in vals), dtype=bool, count=len(vals))
    if not nonempty:
        return is_str
    texts = vals[is_str] if not is_str.all() else vals
    blank = {v for v in set(texts) if v.strip() == ""}
    if blank:
        is_str[np.flatnonzero(is_str)[np.fromiter((v in blank for v in texts), dtype=bool, count=len(texts))]] = False
    return is_str


def applied(df: pd.DataFrame) -> pd.Series:
    """True on the rows a replay applies: every row but those with a ``skip_reason`` (calls that
    never ran in production, kept in an ingested log so a study can count them).

    Parameters
    ----------
    df : pandas.DataFrame
        An interaction log (without ``skip_reason`` every row applies).

    Returns
    -------
    pandas.Series
        Booleans on ``df``'s index.

    Examples
    --------
    >>> applied(pd.DataFrame({"kind": ["message", "prediction_update"], "skip_reason": [None, "rejected"]})).tolist()
    [True, False]
    """
    if "skip_reason" not in df.columns:
        return pd.Series(True, index=df.index)
    return df["skip_reason"].isna()


def _need_text(col, kinds):
    """``col`` must be non-empty text on applied rows of ``kinds`` (and text or null elsewhere).

    A skipped row (a call that never ran) keeps whatever arguments the call had."""
    def test(df):
        need = df["kind"].isin(kinds) & applied(df)
        ok_type = df[col].isna() | _is_str(df[col])
        return ok_type & (~need | _nonempty(df[col]))
    return test


def _list_ok(v, elem) -> bool:
    if _isnull(v):
        return True
    if isinstance(v, np.ndarray):
        v = v.tolist()
    return isinstance(v, (list, tuple)) and all(elem(x) for x in v)


def _lists_ok(s: pd.Series, elem, nonempty=False) -> pd.Series:
    """Null, or a list whose elements pass ``elem`` (checked only on non-null rows)."""
    return _on_present(s, lambda v: _list_ok(v, elem) and (not nonempty or len(v) > 0))


def _on_present(s: pd.Series, test) -> pd.Series:
    """True on null rows, ``test(v)`` elsewhere."""
    has = s.notna().to_numpy(dtype=bool)
    out = np.ones(len(s), dtype=bool)
    vals = s.to_numpy(object)[has]
    out[has] = np.fromiter((bool(test(v)) for v in vals), dtype=bool, count=len(vals))
    return pd.Series(out, index=s.index)


def _number(x) -> bool:
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        return False
    return isinstance(x, (int, np.integer)) or bool(np.isfinite(x))  # ints of any size are finite


_F32_MAX = float(np.finfo(np.float32).max)


def _vector_number(x) -> bool:
    """An element of an embedding: a finite number a float32 can hold."""
    return _number(x) and abs(x) <= _F32_MAX


def _probability_ok(s: pd.Series) -> pd.Series:
    return numbers_ok(s, low=np.nextafter(0.0, 1.0), high=1.0)


def _on_kind(df, kind, test, s: pd.Series) -> np.ndarray:
    """``test(s)`` on rows of ``kind`` (computed on those rows only), ``s`` null elsewhere."""
    on = (df["kind"] == kind).to_numpy(dtype=bool)
    out = s.isna().to_numpy(dtype=bool, copy=True)  # written below: pandas 3 views are read-only
    if on.any():
        out[on] = np.asarray(test(s[on]), dtype=bool)
    return out


def _if_present(col, test):
    """A rule over an optional ingest column: every row passes when the column is absent."""
    def rule(df):
        return test(df) if col in df.columns else pd.Series(True, index=df.index)
    return rule


def mark_checked_args(value):
    """``(id_a, id_b, status)`` of a ``prediction_mark_checked`` row's ``args``, or None.

    ``args`` is JSON text (or a dict) of the tool's arguments; the two prediction ids
    and the verdict must be non-empty texts (other keys, such as ``store``, are ignored:
    the row's ``store`` column names the store).

    Parameters
    ----------
    value : str or dict
        The row's ``args``.

    Returns
    -------
    tuple of str or None
        ``(id_a, id_b, status)``, or None when ``args`` lacks one of them.

    Examples
    --------
    >>> mark_checked_args('{"id_a": "p1", "id_b": "p2", "status": "distinct"}')
    ('p1', 'p2', 'distinct')
    >>> mark_checked_args('{"id_a": "p1"}') is None
    True
    """
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if not isinstance(value, dict):
        return None
    out = tuple(value.get(k) for k in ("id_a", "id_b", "status"))
    return out if all(isinstance(v, str) and v.strip() for v in out) else None


def _mark_checked_ok(df) -> np.ndarray:
    """Applied ``prediction_mark_checked`` rows need ``args`` naming the pair and the verdict."""
    on = ((df["kind"] == "prediction_mark_checked") & applied(df)).to_numpy(dtype=bool)
    ok = np.ones(len(df), dtype=bool)
    if on.any():
        cells = df["args"].to_numpy(object) if "args" in df.columns else np.full(len(df), None, dtype=object)
        for j in np.flatnonzero(on).tolist():
            ok[j] = mark_checked_args(cells[j]) is not None
    return ok


def _items_ok(df) -> pd.Series:
    """``logged_items``: null, or (on messages) a list of objects."""
    ok = _lists_ok(df["logged_items"], lambda x: isinstance(x, dict))
    return ok & ((df["kind"] == "message") | df["logged_items"].isna())


INTERACTION_LOG = LogSpec(
    name="interaction log",
    required=("ts", "session", "kind"),
    optional=INTERACTION_COLUMNS[2:],
    times=("ts",),
    rules=(
        RowRule("ts", "a timezone-aware ISO-8601 time", lambda df: df["ts"].notna()),
        RowRule("session", "a non-empty text id", lambda df: _nonempty(df["session"])),
        RowRule("kind", f"one of {list(INTERACTION_KINDS)}", lambda df: df["kind"].isin(INTERACTION_KINDS)),
        RowRule("store", "a non-empty store name or null",
                lambda df: df["store"].isna() | _nonempty(df["store"])),
        RowRule("text", "a non-empty text on message and prediction_query rows",
                _need_text("text", ("message", "prediction_query"))),
        RowRule("matcher", "a non-empty text on prediction_update and behavior_codify rows",
                _need_text("matcher", ("prediction_update", "behavior_codify"))),
        RowRule("statement", "a non-empty text on update, codify, feedback and delete rows",
                _need_text("statement", ("prediction_update", "prediction_delete", "behavior_codify",
                                         "behavior_feedback", "behavior_delete"))),
        RowRule("signal", f"one of {list(PREDICTION_SIGNALS)} on prediction_update rows "
                          "(null or 'codify' on behavior_codify, null elsewhere; text or null on skipped rows)",
                lambda df: np.where(~applied(df), df["signal"].isna() | _is_str(df["signal"]),
                                    np.where(df["kind"] == "prediction_update", df["signal"].isin(PREDICTION_SIGNALS),
                                             np.where(df["kind"] == "behavior_codify",
                                                      df["signal"].isna() | df["signal"].eq("codify"),
                                                      df["signal"].isna())))),
        RowRule("relevant", "true or false on behavior_feedback rows (null elsewhere; also null on skipped rows)",
                lambda df: _on_kind(df, "behavior_feedback", lambda s: s.map(type).isin([bool, np.bool_]),
                                    df["relevant"]) | (~applied(df) & df["relevant"].isna()).to_numpy()),
        RowRule("rationale", "text or null", lambda df: df["rationale"].isna() | _is_str(df["rationale"])),
        RowRule("propensity", "a probability in (0, 1] or null",
                lambda df: _probability_ok(df["propensity"])),
        RowRule("surfaced", "a JSON list of statements on message rows, or null",
                lambda df: _lists_ok(df["surfaced"], lambda x: isinstance(x, str))
                & ((df["kind"] == "message") | df["surfaced"].isna())),
        RowRule("embedding", "a list of finite float32 numbers (a vector for text) or null",
                lambda df: _lists_ok(df["embedding"], _vector_number, nonempty=True)),
        *(RowRule(c, "text or null", _if_present(c, lambda df, c=c: df[c].isna() | _is_str(df[c])))
          for c in _LOGGED_TEXTS),
        RowRule("logged_items", "a JSON list of objects on message rows, or null",
                _if_present("logged_items", _items_ok)),
        RowRule("args", "a JSON object with non-empty texts id_a, id_b and status on "
                        "prediction_mark_checked rows", _mark_checked_ok),
    ),
)


def _pre(df: pd.DataFrame, as_is: bool = False) -> pd.DataFrame:
    """Booleans, numbers and lists spelled as text decoded. ``as_is`` (the columnar view of a
    file, validated only to succeed) leaves columns with nothing to decode as they are instead
    of making them objects as the reference path does (its rejected rows show them so)."""
    out = copy_frame(df, deep=False)  # columns are replaced, never written into; validation copies

    def on_present(col, fn):
        if col in out.columns:
            if as_is and (pd.api.types.is_float_dtype(out[col].dtype) or not out[col].notna().any()):
                return
            col_s = out[col].astype(object)
            has = col_s.notna()
            if has.any():
                col_s[has] = col_s[has].map(fn)
            out[col] = col_s

    on_present("relevant", lambda v: _BOOL_TEXT.get(v, v) if isinstance(v, str) else
               (bool(v) if _number(v) and v in (0, 1) else v))
    on_present("propensity", lambda v: _to_float(v) if isinstance(v, str) else v)
    on_present("surfaced", _decode_list)
    on_present("embedding", _decode_list)
    on_present("logged_items", _decode_list)
    if as_is:
        _add_absent(out)
    return out


def _add_absent(view: pd.DataFrame) -> None:
    """The optional columns ``view`` lacks, as nulls of the types they end up as (``relevant``
    boolean, ``propensity`` float64, the others categoricals without categories): every rule and
    :func:`_typed` give for them what they give for the column of ``None`` validation would add,
    without looking at a million ``None``."""
    n = len(view)
    view.attrs[ABSENT] = tuple(c for c in INTERACTION_LOG.optional if c not in view.columns)
    for col in INTERACTION_LOG.optional:
        if col in view.columns:
            continue
        if col == "relevant":
            view[col] = pd.arrays.BooleanArray(np.zeros(n, dtype=bool), np.ones(n, dtype=bool))
        elif col == "propensity":
            view[col] = np.full(n, np.nan)
        else:
            view[col] = pd.Categorical.from_codes(np.full(n, -1, dtype=np.int8), categories=pd.Index([], dtype=object))


def _to_float(v):
    try:
        return float(v)
    except ValueError:
        return v


def _decode_list(v):
    if isinstance(v, str):
        with contextlib.suppress(json.JSONDecodeError, RecursionError):
            return json.loads(v)
    if isinstance(v, np.ndarray):
        return v.tolist()
    return v


def _typed(df: pd.DataFrame) -> pd.DataFrame:
    """The validated frame typed, columns in order (``df`` is validate_frame's own copy).

    The object columns are written straight into one 2-D block, so the
    frame is born consolidated: copying it later (sorting, ``reset_index``)
    copies each column once instead of once and again to consolidate.
    """
    order = list(INTERACTION_COLUMNS) + [c for c in df.columns if c not in INTERACTION_COLUMNS]
    texts = (*_TEXTS, *(c for c in LOGGED_COLUMNS if c in df.columns))
    lists = {"surfaced": lambda v: [str(x) for x in v], "embedding": lambda v: np.asarray(v, dtype=np.float32)}
    others = {"ts": df["ts"], "relevant": _booleans(df["relevant"]), "propensity": _floats(df["propensity"])}
    others.update({c: df[c] for c in order if c not in others and c not in texts and c not in lists
                   and df[c].dtype != object})
    names = [c for c in order if c not in others]
    block = np.empty((len(names), len(df)), dtype=object)
    for col, row in zip(names, block):  # np.empty's object rows start as None
        if col in texts:
            _objects_or_none(df[col], out=row)
        elif col in lists:
            has = df[col].notna().to_numpy(dtype=bool)
            if has.any():
                row[has] = _objects([lists[col](v) for v in df[col].to_numpy(object)[has]])
        else:  # an extra column of objects, as it is
            row[:] = df[col].to_numpy(object)
    return block_frame(block, names, others, order, index=df.index, like=df)


def _objects(values: list) -> np.ndarray:
    """A 1-D object array of ``values`` (never a 2-D array of equal-length lists)."""
    arr = np.empty(len(values), dtype=object)
    arr[:] = values
    return arr


def _objects_or_none(s: pd.Series, out: np.ndarray) -> np.ndarray:
    """Object cells into ``out``, None for null (a categorical's cells share its categories' str objects)."""
    if isinstance(s.dtype, pd.CategoricalDtype):
        if len(s.cat.categories):  # else every cell is null, and ``out`` holds None already
            np.take(np.append(s.cat.categories.to_numpy(object), None), s.cat.codes.to_numpy(), out=out,
                    mode="wrap")  # code -1 (null) is the None appended; "raise" would buffer the output
        else:
            out[:] = None
        return out
    out[:] = s.to_numpy(object)
    out[s.isna().to_numpy(dtype=bool)] = None
    return out


def _booleans(s: pd.Series):
    """Validated ``relevant`` cells (booleans or null) as a nullable ``boolean`` array."""
    if isinstance(s.dtype, pd.BooleanDtype):
        return s.array.copy()
    null = s.isna().to_numpy(dtype=bool)
    if s.dtype == object and set(map(type, s.to_numpy(object)[~null])) <= {bool, np.bool_}:
        values = np.zeros(len(s), dtype=bool)
        values[~null] = s.to_numpy(object)[~null].astype(bool)
        return pd.arrays.BooleanArray(values, null)
    rel = s.astype(object)
    return rel.where(rel.notna(), None).astype("boolean")


def _floats(s: pd.Series):
    """Validated ``propensity`` cells (numbers or null) as float64."""
    if s.dtype == np.float64:
        return s.to_numpy(copy=True)
    null = s.isna().to_numpy(dtype=bool)
    if s.dtype == object and pd.api.types.infer_dtype(s.to_numpy(object), skipna=True) in (
            "floating", "integer", "mixed-integer-float", "empty"):
        out = np.full(len(s), np.nan)
        out[~null] = s.to_numpy(object)[~null].astype(np.float64)
        return out
    return pd.to_numeric(s.astype(object).where(~null, None), errors="coerce").astype("float64")


@fill_doc(validate=_docs.VALIDATE)
def validate_interaction_log(df: pd.DataFrame, source=None, errors: str = "raise"):
    """Validate an interaction log and return it typed (a new frame; the input is untouched).

    Required columns ``ts, session, kind``; optional (null when absent)
    ``store, text, matcher, statement, signal, relevant, rationale,
    propensity, surfaced, embedding``. Per kind:

    - ``message``, ``prediction_query``: ``text`` (the prompt / query context);
    - ``prediction_update``: ``matcher``, ``statement``, ``signal`` ∈
      {confirm, disconfirm, soft, create};
    - ``behavior_codify``: ``matcher`` (the situation), ``statement`` (the behavior);
    - ``behavior_feedback``: ``statement``, ``relevant`` (true = ham), context in ``text``;
    - ``*_delete``: the text to match in ``statement``;
    - ``prediction_mark_checked`` (thatch ``07ecf87`` on): ``args``, JSON text of an object
      with the two prediction ids ``id_a``, ``id_b`` and the verdict ``status``
      (:func:`mark_checked_args`).

    ``store`` null means the engine's project store. ``surfaced`` (messages
    only) is a list of statements, ``propensity`` a probability in (0, 1],
    ``embedding`` a vector for ``text`` (JSON text in CSV is decoded).
    ``prediction_list`` / ``behavior_list`` rows list ``store`` (the project
    store when null). The ingest columns of :data:`LOGGED_COLUMNS` are
    checked when present (texts, and ``logged_items`` a list of objects on
    messages) and kept after the standard columns.

    {validate}

    See Also
    --------
    read_interaction_log : reads and validates a file.

    Examples
    --------
    >>> import pandas as pd
    >>> log = pd.DataFrame({"ts": ["2026-01-01T09:00:00Z", "2026-01-01T09:01:00Z"],
    ...     "session": ["s1", "s1"], "kind": ["message", "prediction_update"],
    ...     "text": ["help me write the tests", None], "matcher": [None, "writing tests"],
    ...     "statement": [None, "use pytest"], "signal": [None, "confirm"]})
    >>> v = validate_interaction_log(log)
    >>> v["kind"].tolist(), str(v["ts"].dtype)
    (['message', 'prediction_update'], 'datetime64[ns, UTC]')
    """
    return _validated(_pre(plain_columns(df)) if isinstance(df, pd.DataFrame) else df, source, errors)


def _validated(df_in, source, errors):
    # _typed builds every column of the result anew, so validation need not copy the input first
    res = validate_frame(df_in, INTERACTION_LOG, source=source, errors=errors, copy=False)
    if errors == "raise":
        return _typed(res)
    valid, rejected = res
    return _typed(valid), rejected


@fill_doc(read=_docs.READ)
def read_interaction_log(path, errors: str = "raise"):
    """Read an interaction log (JSONL, CSV or Parquet) and validate it (see
    :func:`validate_interaction_log`); rows sorted by ``ts``, stably.

    A JSON-lines file is parsed by pyarrow and validated in columns (text as
    categoricals, absent optional columns as typed nulls); the result is the
    frame ``validate_interaction_log`` gives for the file read line by line
    with ``json.loads``. Files pyarrow would read otherwise (blank lines,
    several objects on a line, bytes that are not UTF-8, ``NaN`` or ``-0``
    in a float column, and the rest :func:`~thatchlab.logs.read_table`
    lists) are read line by line instead, more slowly. A file that fails
    validation is read again into :func:`~thatchlab.logs.read_table`'s frame,
    so each error is the one ``validate_interaction_log`` raises for it.

    {read}

    See Also
    --------
    validate_interaction_log : the checks applied.
    write_interaction_log : the writer.
    """
    log = read_log(path, validate_interaction_log, errors=errors, json_columns=("surfaced", "embedding"),
                   columns=_READ_AS, required=INTERACTION_LOG.required, categorical=True,
                   validate_view=lambda view, source, errors: _validated(_pre(view, as_is=True), source, errors))
    return read_in_time_order(log, path, errors)


@fill_doc(write=_docs.WRITE)
def write_interaction_log(df: pd.DataFrame, path):
    """Validate and write an interaction log (format by suffix); returns the path.

    Lists (``surfaced``, ``embedding``) become JSON arrays in JSONL and CSV;
    ``logged_items`` is written as JSON text in every format.

    {write}

    See Also
    --------
    read_interaction_log : reads it back.
    """
    log = validate_interaction_log(df)
    out = log.copy()
    if "logged_items" in out.columns:
        out["logged_items"] = out["logged_items"].map(
            lambda v: None if v is None else json.dumps(v, ensure_ascii=False))
    out["relevant"] = out["relevant"].astype(object).map(lambda v: None if _isnull(v) else bool(v))
    out["embedding"] = out["embedding"].map(lambda v: None if v is None else [float(x) for x in v])
    return write_table(out, path, json_columns=("surfaced", "embedding"))


def signals_from_store(path) -> pd.DataFrame:
    """A thatch store's provenance tables as a signal log, in insertion order.

    Columns ``item_id, kind (prediction|behavior), store, statement, signal,
    ts`` (``ts`` parsed to UTC from the provenance ``created_at``); prediction
    rows come first, then behavior rows, each in SQLite rowid order. Rows of
    deleted items are gone from production's provenance (it cascades), so
    they are absent here too.

    Parameters
    ----------
    path : str or path-like
        A thatch store (SQLite, opened read-only).

    Returns
    -------
    pandas.DataFrame
        The signal log.

    Raises
    ------
    StoreSchemaError
        The file holds neither engine's tables.
    """

    parts = []
    with contextlib.closing(connect_readonly(path)) as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        for kind, items, prov, fk in (("prediction", "predictions", "prediction_provenance", "prediction_id"),
                                      ("behavior", "behaviors", "behavior_provenance", "behavior_id")):
            if items not in names or prov not in names:
                continue
            rows = conn.execute(
                f"SELECT p.{fk}, i.store, i.statement, p.signal, p.created_at FROM {prov} p "
                f"LEFT JOIN {items} i ON i.id = p.{fk} ORDER BY p.rowid").fetchall()
            df = pd.DataFrame(rows, columns=["item_id", "store", "statement", "signal", "ts"], dtype=object)
            df.insert(1, "kind", kind)
            parts.append(df)
    if not parts:
        raise StoreSchemaError(f"{path}: no thatch provenance tables found; expected "
                               "'predictions' + 'prediction_provenance' or 'behaviors' + 'behavior_provenance'")
    out = pd.concat(parts, ignore_index=True)
    out["ts"] = pd.to_datetime(out["ts"], utc=True, format="ISO8601").dt.as_unit("ns")
    return out[["item_id", "kind", "store", "statement", "signal", "ts"]]
