"""Rules of a nudge that depend on the thatch release replayed (public: the replay shares them).

Three rules, each written once so the event-by-event engine and the
vectorised replay apply the same one:

* **Ties.** Production reads a nudge's candidate rows with one query over
  the edges joined to the items, ``ORDER BY p.statement``, and sorts them by
  rounded score with JavaScript's stable sort (sysread/thatch
  ``src/scoring-engine.ts`` ``scoreItems``, v0.1.30 and @0182ac19 alike).
  Rows whose score and statement are equal keep the order SQLite returns
  them in. Its plan reads the edges through their primary key index
  ``(matcher_id, item_id)`` (one probe per matcher id of the ``IN`` list,
  in increasing id order), looks up each item by id, then sorts on the
  statement with a sort that keeps equal keys in the order they came. So
  among equal statements the rows come out by matcher id, then item id,
  both compared as text byte by byte: :func:`row_order_key`. Where the ids
  come from (thatchlab's uuid5, production's random uuid4) does not
  matter; the ids themselves decide.
* **Near-duplicate items** (``07ecf87``): after each item keeps its best
  row, an item whose embedding has cosine ≥ :data:`NEAR_DUPLICATE_COSINE`
  with a higher-ranked item already kept is dropped (only vectors of the
  same length are compared; an item without a vector is never dropped and
  never drops another), before the nudge's top-``max_items`` cut; the
  query tool shares the scoring and so drops them too
  (:func:`keep_flags`, production's loop arithmetic:
  :func:`~thatchlab.core.vectors.loop_cosines`).
* **Line text.** ``v0.1.30`` prints ``When {matcher}: {verb} {statement}``;
  ``07ecf87``'s nudge block does not prefix "When" to a matcher that already
  starts with it and leaves out the verb when the statement already starts
  with it (a plain prefix test, so a behavior statement beginning with the
  letters "do", e.g. "document the change", loses the "do"; see
  :func:`nudge_line`). Query replies keep the ``v0.1.30`` form in both.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

import numpy as np

from thatchlab.core.docstrings import fill_doc
from thatchlab.core.params import at_least

__all__ = ["NEAR_DUPLICATE_COSINE", "drops_near_duplicates", "keep_flags", "row_order_key",
           "nudge_line", "query_line"]

# the parameters of the two line builders, written once (filled in by fill_doc)
_LINE_PARAMS = """
conf_text : str
    The confidence as printed.
n_tests : int
    The evidence count.
verb : str
    The engine's verb for that count.
description : str
    The matcher's text.
statement : str
    The item's text.
"""

#: production's ``SEMANTIC_DEDUP_COSINE`` (sysread/thatch src/scoring-engine.ts @0182ac19)
NEAR_DUPLICATE_COSINE = 0.85

# JavaScript's /^when\b/i: "when" as a whole word at the start, any case (ASCII word boundary)
_WHEN = re.compile(r"when\b", re.IGNORECASE | re.ASCII)


@lru_cache(maxsize=64)
def _since_07ecf87(release: str) -> bool:
    """``at_least("thatch", release, "07ecf87")``, remembered: the release table is fixed, and
    a nudge asks once per line (an unknown release raises each time: nothing is cached)."""
    return at_least("thatch", release, "07ecf87")


def drops_near_duplicates(params) -> bool:
    """Whether ``params``'s release drops near-duplicate items from nudges and queries.

    Parameters
    ----------
    params : ScoringParams
        Parameters naming a thatch release.

    Returns
    -------
    bool
        True from ``07ecf87`` on.

    See Also
    --------
    keep_flags : Which items stay when it does.
    """
    return _since_07ecf87(params.release)


def row_order_key(statement: str, matcher_id: str, item_id: str) -> tuple:
    """The order production's SQL returns candidate rows in (before the stable score sort):
    statement, then matcher id, then item id, each compared by code point.

    Parameters
    ----------
    statement : str
        The item's statement.
    matcher_id : str
        The matcher's id.
    item_id : str
        The item's id.

    Returns
    -------
    tuple
        A sort key.

    Examples
    --------
    >>> sorted([("b", "m1", "i1"), ("a", "m2", "i0"), ("a", "m1", "i9")], key=lambda r: row_order_key(*r))
    [('a', 'm1', 'i9'), ('a', 'm2', 'i0'), ('b', 'm1', 'i1')]
    """
    return (statement, matcher_id, item_id)


def keep_flags(vectors) -> list:
    """For item vectors in rank order (``None``: no vector), which items stay: each is dropped
    when its cosine with an earlier *kept* vector of the same length is ≥ 0.85, computed with
    production's loop arithmetic (the additions of :func:`~thatchlab.core.vectors.loop_cosines`).

    Parameters
    ----------
    vectors : iterable of array-like or None
        The items' vectors in rank order.

    Returns
    -------
    list of bool
        Whether each item stays.

    See Also
    --------
    drops_near_duplicates : Whether a release applies this.

    Examples
    --------
    >>> keep_flags([np.array([1.0, 0.0]), None, np.array([0.9, 0.1]), np.array([0.0, 1.0]),
    ...             np.array([1.0, 0.0, 0.0])])
    [True, True, False, True, True]
    """
    # loop_cosines's arithmetic pair by pair: each kept vector's running sum of squares is
    # taken once, not once per later item (a nudge compares a handful of vectors)
    kept: dict[int, list] = {}
    out = []
    for v in vectors:
        if v is None:
            out.append(True)
            continue
        v = np.asarray(v, dtype=np.float64)
        same = kept.setdefault(len(v), [])
        if not same:
            same.append((v, None))
            out.append(True)
            continue
        norm_v = _loop_norm(v)
        dup = False
        for j, (u, norm_u) in enumerate(same):
            if norm_u is None:
                norm_u = _loop_norm(u)
                same[j] = (u, norm_u)
            if _loop_cosine(u, v, norm_u, norm_v) >= NEAR_DUPLICATE_COSINE:
                dup = True
                break
        if dup:
            out.append(False)
            continue
        same.append((v, norm_v))
        out.append(True)
    return out


def _loop_norm(v: np.ndarray) -> float:
    """``sqrt`` of the running sum of squares of a float64 vector, as :func:`loop_cosines` adds them."""
    return math.sqrt(float(np.add.accumulate(v * v)[-1])) if len(v) else 0.0


def _loop_cosine(u: np.ndarray, v: np.ndarray, norm_u: float, norm_v: float) -> float:
    """:func:`loop_cosines` of one pair (``norm_*`` from :func:`_loop_norm`): the running
    dot over the product of the norms, 0 when that is 0 (the same IEEE operations)."""
    if not len(u):
        return 0.0
    dot = float(np.add.accumulate(u * v)[-1])
    norms = norm_u * norm_v
    return dot / norms if norms != 0 else 0.0


@fill_doc(line_params=_LINE_PARAMS)
def query_line(conf_text: str, n_tests: int, verb: str, description: str, statement: str) -> str:
    """One item of a query reply (both releases) and of a ``v0.1.30`` nudge block (without
    the dash a block puts before each item).

    Parameters
    ----------
    {line_params}

    Returns
    -------
    str
        ``[<conf> conf, <n> tests] When <description>: <verb> <statement>``.

    See Also
    --------
    nudge_line : A nudge block's line under a release.

    Examples
    --------
    >>> query_line("0.58", 1, "you tend to", "writing tests", "use pytest")
    '[0.58 conf, 1 tests] When writing tests: you tend to use pytest'
    """
    return f"[{conf_text} conf, {int(n_tests)} tests] When {description}: {verb} {statement}"


@fill_doc(line_params=_LINE_PARAMS)
def nudge_line(release: str, conf_text: str, n_tests: int, verb: str, description: str,
               statement: str) -> str:
    """One item of a nudge block under ``release`` (without the dash before it).

    ``07ecf87`` keeps a matcher that already starts with the word "When" as it is and
    leaves the verb out when the statement already starts with it (compared without
    case, as a plain prefix).

    Parameters
    ----------
    release : str
        The thatch release.
    {line_params}

    Returns
    -------
    str
        The line.

    See Also
    --------
    query_line : The line of a query reply.

    Examples
    --------
    >>> nudge_line("07ecf87", "0.56", 1, "you tend to", "When reviewing a tiny config PR",
    ...            "you tend to prefer the existing pattern")
    '[0.56 conf, 1 tests] When reviewing a tiny config PR: you tend to prefer the existing pattern'
    >>> nudge_line("v0.1.30", "0.56", 1, "you tend to", "When reviewing", "you tend to keep it")
    '[0.56 conf, 1 tests] When When reviewing: you tend to you tend to keep it'
    >>> nudge_line("07ecf87", "0.62", 2, "do", "editing docs", "document the change")
    '[0.62 conf, 2 tests] When editing docs: document the change'
    """
    if not _since_07ecf87(release):
        return query_line(conf_text, n_tests, verb, description, statement)
    when = description if _WHEN.match(description) else f"When {description}"
    said = statement if statement.lower().startswith(verb.lower()) else f"{verb} {statement}"
    return f"[{conf_text} conf, {int(n_tests)} tests] {when}: {said}"
