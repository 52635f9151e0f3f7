"""What the scoring engine's tools return: typed write results, replies and nudges.

A write (update, codify, feedback, delete) produces a :class:`WriteResult`,
the structured account of what it did; the reply text production prints is
formatted from it (:attr:`WriteResult.text`), never the other way round. The
:class:`Reply` a tool returns carries that text, its familiar fields and the
result itself; :class:`Nudge` is the auto-fire result for one prompt.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from thatchlab.core.jsfmt import js_number, to_fixed

__all__ = ["EdgeRow", "WriteResult", "WRITE_ACTIONS", "Reply", "Nudge", "counts_text", "ITEM_COLUMNS",
           "ITEM_DTYPES", "item_arrays", "items_frame"]

#: The values of :attr:`WriteResult.action`.
WRITE_ACTIONS = ("created", "linked", "applied", "deleted", "not_found", "marked")


def counts_text(confidence: float, confirm_count: float, disconfirm_count: float) -> str:
    """The counts part of a write reply, as production prints it.

    Parameters
    ----------
    confidence : float
        The stored confidence (printed with two decimals).
    confirm_count, disconfirm_count : float
        The counts (printed as JavaScript numbers).

    Returns
    -------
    str
        ``confidence=<c> (<confirms>/<disconfirms>)``.

    Examples
    --------
    >>> counts_text(3.5 / 6, 1.0, 0.0)
    'confidence=0.58 (1/0)'
    >>> counts_text(0.4, 0.0, 1.25)
    'confidence=0.40 (0/1.25)'
    """
    return f"confidence={fixed2(confidence)} ({number_text(confirm_count)}/{number_text(disconfirm_count)})"


@lru_cache(maxsize=8192)
def fixed2(x: float) -> str:
    """``to_fixed(x, 2)``, remembered (replies print a bounded set of confidences;
    0.0 and -0.0 both print ``0.00``)."""
    return to_fixed(x, 2)


@lru_cache(maxsize=8192)
def number_text(x: float) -> str:
    """``js_number(x)``, remembered (counts take few values; 1 and 1.0 print ``1``)."""
    return js_number(x)


@dataclass(frozen=True)
class EdgeRow:
    """One matcher → item edge as written (production's edge columns; the item
    foreign key is called ``item_id`` whatever the engine).

    Parameters
    ----------
    matcher_id : str
        The matcher's id.
    item_id : str
        The item's id.
    weight : float
        The edge's weight.
    created_at : str
        When it was written (ISO text, milliseconds).
    """

    matcher_id: str
    item_id: str
    weight: float
    created_at: str


@dataclass(frozen=True)
class WriteResult:
    """What one write did, field by field.

    Parameters
    ----------
    action : str
        ``created`` (a new item), ``linked`` (an existing item under the
        confidence-neutral signal), ``applied`` (an existing item whose counts
        the signal changed), ``deleted``, ``not_found`` or ``marked`` (a pair
        verdict of ``prediction_mark_checked``, release ``07ecf87`` on).
    store : str
        The item's store; for ``not_found``, the store searched.
    item_id, statement : str or None, default=None
        The item written or deleted and its statement as stored.
    matcher_id : str or None, default=None
        The matcher of an update or codify (None for feedback and deletes).
    matcher_created, item_created : bool, default=False
        Whether this write added the matcher / the item.
    signal : str or None, default=None
        The signal recorded in provenance (None for deletes and not found).
    counts_changed : bool, default=False
        Whether the signal changed the counts (confirm, disconfirm, soft).
    confirm_count, disconfirm_count, confidence : float or None, default=None
        The item's counts and stored confidence after the write (None for
        deletes and not found).
    new_edges : tuple of EdgeRow, default=()
        Edges this write added (an existing edge is never re-added).
    reply_prefix : str, default=""
        The reply text without its counts part.
    shows_counts : bool, default=False
        Whether the reply ends with :func:`counts_text` of the final counts.

    Attributes
    ----------
    text : str
        The reply text production prints (the fields above are attributes too).

    Examples
    --------
    >>> from thatchlab.embed import LookupEmbedder
    >>> from thatchlab.scoring import PredictionEngine
    >>> eng = PredictionEngine(LookupEmbedder({"writing tests": [1, 0], "use pytest": [0, 1]}))
    >>> res = eng.update("writing tests", "use pytest", "confirm", now="2026-01-01T00:00:00Z").result
    >>> res.action, res.item_created, res.matcher_created, res.counts_changed, len(res.new_edges)
    ('created', True, True, True, 1)
    >>> res.reply_prefix, res.shows_counts, res.text
    ('[created + confirm] "use pytest"', True, '[created + confirm] "use pytest" confidence=0.58 (1/0)')
    """

    action: str
    store: str
    item_id: str | None = None
    statement: str | None = None
    matcher_id: str | None = None
    matcher_created: bool = False
    item_created: bool = False
    signal: str | None = None
    counts_changed: bool = False
    confirm_count: float | None = None
    disconfirm_count: float | None = None
    confidence: float | None = None
    new_edges: tuple = ()
    reply_prefix: str = ""
    shows_counts: bool = False

    @property
    def text(self) -> str:
        """The reply text production prints for this write."""
        if not self.shows_counts:
            return self.reply_prefix
        return f"{self.reply_prefix} {counts_text(self.confidence, self.confirm_count, self.disconfirm_count)}"


@dataclass
class Reply:
    """A tool reply: ``text`` exactly as production prints it, plus its fields.

    ``action`` is the engine's label (``created``, ``codified``,
    ``created+confirm``, ``linked``, ``confirm``, ``deleted``, ``not_found``,
    ``query``, ``list``...); ``result`` is the :class:`WriteResult` of a
    write (None for queries and lists). ``n_foreign_model`` is set on
    query replies only: how many of the matchers the query scored carry a
    model tag other than the embedder's (see :attr:`Nudge.n_foreign_model`).

    Parameters
    ----------
    text : str
        The reply text.
    action : str, default=""
        The engine's label.
    store : str or None, default=None
        The store written, searched or listed.
    item_id, matcher_id : str or None, default=None
        The item and matcher of a write.
    signal : str or None, default=None
        The signal recorded.
    confidence, confirm_count, disconfirm_count : float or None, default=None
        The item's stored confidence and counts after a write.
    items : DataFrame or None, default=None
        The rows of a query or list.
    result : WriteResult or None, default=None
        The write's result.
    n_foreign_model : int or None, default=None
        Query replies: matchers scored with another model's tag.
    """

    text: str
    action: str = ""
    store: str | None = None
    item_id: str | None = None
    matcher_id: str | None = None
    signal: str | None = None
    confidence: float | None = None
    confirm_count: float | None = None
    disconfirm_count: float | None = None
    items: pd.DataFrame | None = None
    result: WriteResult | None = None
    n_foreign_model: int | None = None

    def __str__(self):
        return self.text


class Nudge:
    """The auto-fire result for one prompt.

    ``items`` has the columns of :data:`~thatchlab.scoring.ITEM_COLUMNS`
    (``confidence`` is the 3-decimal rounded stored confidence, ``score`` the
    rounded score); ``text`` is the block production injects (empty when
    nothing surfaced); ``regime`` is ``strong``, ``ambiguous``, ``none`` or
    ``skipped``.

    ``n_foreign_model`` counts the matchers this nudge scored (every matcher
    of ``stores`` with a vector of the prompt's dimension) whose model tag is
    set and differs from the embedder's name. Production never filters on
    the tag, so such rows are scored like any other; a count above 0 means
    cosines compared vectors of two models (0 for a skipped nudge, which
    scores nothing).

    The engine hands over the items as columns (``columns``: lists or arrays
    in :data:`~thatchlab.scoring.ITEM_COLUMNS` order); the DataFrame is built
    on the first read of ``items`` and kept, so a caller that reads only
    ``text`` or ``regime`` never pays for it. :meth:`records` gives the rows
    as dicts without building it.

    Parameters
    ----------
    prompt : str
        The prompt.
    items : DataFrame or None
        The items, or None when ``columns`` are given.
    text : str
        The injected block.
    regime : str
        ``strong``, ``ambiguous``, ``none`` or ``skipped``.
    stores : list of str, default=None
        The stores searched (empty when None).
    n_foreign_model : int, default=0
        Matchers scored with another model's tag.
    columns : list, default=None
        The items as columns, when ``items`` is None.

    Attributes
    ----------
    prompt, text, regime, stores, n_foreign_model
        As given.
    items : DataFrame
        The surfaced items.
    """

    __slots__ = ("prompt", "text", "regime", "stores", "n_foreign_model", "_items", "_columns")

    def __init__(self, prompt: str, items: pd.DataFrame | None, text: str, regime: str, stores=None,
                 n_foreign_model: int = 0, *, columns: list | None = None):
        if items is None and columns is None:
            raise TypeError("Nudge needs items (a DataFrame) or columns")
        self.prompt = prompt
        self.text = text
        self.regime = regime
        self.stores = [] if stores is None else stores
        self.n_foreign_model = n_foreign_model
        self._items = items
        self._columns = None if items is not None else columns

    @property
    def items(self) -> pd.DataFrame:
        """The surfaced items, one row each (built on first access, then kept)."""
        if self._items is None:
            self._items = items_frame(self._columns)
            self._columns = None
        return self._items

    @items.setter
    def items(self, frame: pd.DataFrame):
        self._items, self._columns = frame, None

    def records(self) -> list:
        """The rows of :attr:`items` as dicts of Python values (``items.to_dict(orient="records")``).

        Returns
        -------
        list of dict
            One dict per item, keys :data:`ITEM_COLUMNS`.
        """
        if self._columns is None:
            return self.items.to_dict(orient="records")
        values = [c.tolist() if isinstance(c, np.ndarray) else c for c in self._columns]
        return [dict(zip(ITEM_COLUMNS, row)) for row in zip(*values)]

    def __str__(self):
        return self.text

    def __len__(self):
        return len(self._columns[0]) if self._columns is not None else len(self._items)

    def __repr__(self):
        return (f"Nudge(prompt={self.prompt!r}, items=<{len(self)} rows>, text={self.text!r}, "
                f"regime={self.regime!r}, stores={self.stores!r}, n_foreign_model={self.n_foreign_model!r})")


#: Columns of the items DataFrame returned by nudges and queries.
ITEM_COLUMNS = ["confidence", "evidence_count", "matcher_description", "statement", "score",
                "item_id", "matcher_id", "store", "cosine", "weight", "stored_confidence"]


#: The dtype of each of :data:`ITEM_COLUMNS` (numbers float64, evidence int64, texts object).
ITEM_DTYPES = (np.float64, np.int64, object, object, np.float64, object, object, object, np.float64, np.float64,
               np.float64)


def item_arrays(columns: list) -> list:
    """Typed arrays (:data:`ITEM_DTYPES`) of item columns given as lists or arrays.

    Parameters
    ----------
    columns : list
        Columns in :data:`ITEM_COLUMNS` order.

    Returns
    -------
    list of ndarray
        One array per column.

    See Also
    --------
    items_frame : The columns as a DataFrame.
    """
    out = []
    for values, dtype in zip(columns, ITEM_DTYPES):
        if dtype is object:
            arr = np.empty(len(values), dtype=object)
            arr[:] = values
        else:
            arr = np.asarray(values, dtype=dtype)
        out.append(arr)
    return out


def items_frame(columns: list) -> pd.DataFrame:
    """The items frame from columns in :data:`ITEM_COLUMNS` order (lists or arrays), typed
    by :func:`item_arrays`.

    On pandas 3 the frame is assembled from three typed blocks by the public
    ``create_dataframe_from_blocks`` (:func:`_frame_of_blocks`, about 7x faster for
    a nudge's few rows); on pandas 2 the typed arrays are handed to
    ``pd.DataFrame`` as a dict with ``copy=False`` (each array its own column,
    no copy, no consolidation). Either way texts are ``object`` columns.

    Parameters
    ----------
    columns : list
        Columns in :data:`ITEM_COLUMNS` order.

    Returns
    -------
    DataFrame
        The items frame.

    See Also
    --------
    item_arrays : The typed arrays.
    """
    if _from_blocks is not None:
        try:
            return _frame_of_blocks(columns)
        except Exception:  # noqa: BLE001 - any surprise from the block constructor: the public one below
            pass
    return pd.DataFrame(dict(zip(ITEM_COLUMNS, item_arrays(columns))), copy=False)


try:  # pandas >= 3: the public block constructor pyarrow's to_pandas uses
    from pandas.api.internals import create_dataframe_from_blocks as _from_blocks
except ImportError:  # pandas 2: the dict constructor
    _from_blocks = None
#: Positions of the float64, text and count columns of :data:`ITEM_COLUMNS` (one block each).
_FLOAT_AT = np.array([i for i, t in enumerate(ITEM_DTYPES) if t is np.float64], dtype=np.intp)
_TEXT_AT = np.array([i for i, t in enumerate(ITEM_DTYPES) if t is object], dtype=np.intp)
_INT_AT = np.array([i for i, t in enumerate(ITEM_DTYPES) if t is np.int64], dtype=np.intp)
_ITEM_INDEX = pd.Index(ITEM_COLUMNS)        # immutable: every items frame may share it


def _frame_of_blocks(columns: list) -> pd.DataFrame:
    """The items frame from three blocks (floats, texts, the count) through pandas' public
    ``pandas.api.internals.create_dataframe_from_blocks`` (pandas 3): a nudge's few rows then
    cost a fraction of ``pd.DataFrame(dict)``'s per-column checks, which a caller reading
    ``.items`` after every nudge otherwise pays each time. Same columns, dtypes and values as
    :func:`item_arrays` gives."""
    n = len(columns[0])
    floats = np.array([columns[i] for i in _FLOAT_AT], dtype=np.float64).reshape(len(_FLOAT_AT), n)
    texts = np.empty((len(_TEXT_AT), n), dtype=object)
    for row, i in enumerate(_TEXT_AT):
        texts[row, :] = columns[i]
    counts = np.array([columns[i] for i in _INT_AT], dtype=np.int64).reshape(len(_INT_AT), n)
    return _from_blocks([(floats, _FLOAT_AT), (texts, _TEXT_AT), (counts, _INT_AT)], index=pd.RangeIndex(n),
                        columns=_ITEM_INDEX)
