"""Steps 3–7 of a nudge or query: a query vector → the ranked item rows (private).

The production rules, in order: every usable matcher's cosine (float64
``dot / (|a| |b|)``), those below the noise floor dropped, rounded to three
decimals, a stable sort by rounded cosine (ties in insertion order), the
top ``top_matchers`` kept and then those below the threshold dropped; each
kept matcher's edges into existing items give the candidate rows, in the
order production's SQL returns them (statement, then matcher id, then item
id: :func:`~thatchlab.scoring.rules.row_order_key`), scored
``r3(r3(cosine) × weight × confidence)``, ordered by score (stably); an item
keeps its first row; under ``07ecf87`` an item whose vector is a near
duplicate (cosine ≥ 0.85) of a kept higher-ranked item's is dropped
(:func:`~thatchlab.scoring.rules.keep_flags`); at most ``max_items`` items stay.

Only matchers whose rounded cosine reaches the threshold can surface, and
the top cut keeps a prefix of one order, so the float32 scan looks for
candidates at ``max(noise_floor, threshold)``: the first ``top_matchers`` of
those are the same matchers. Their cosines are exact, so every decision is
made on production's numbers. A nudge weighs a handful of rows, so from
there on the rules run on Python floats (the same IEEE double operations
as numpy's, one at a time), which costs less than numpy's per-call overhead.
"""

from __future__ import annotations

import math

import numpy as np

from thatchlab.scoring.confidence import evidence_count
from thatchlab.scoring.rules import drops_near_duplicates, keep_flags, row_order_key

__all__ = ["rank_columns", "js_round1", "r3_1", "score_key"]


def js_round1(x: float) -> float:
    """:func:`~thatchlab.core.jsfmt.js_round` of one float, as a float (the same
    number: ``floor``, then up when the remainder is ≥ 0.5; ±0 keep their sign,
    NaN and infinities pass through).

    >>> js_round1(2.5), js_round1(-2.5), js_round1(0.49999999999999994), js_round1(-0.0)
    (3.0, -2.0, 0.0, -0.0)
    """
    x = float(x)
    if x - x != 0.0 or x == 0.0:   # NaN, ±inf (x - x is NaN) and ±0 are their own rounding
        return x
    fl = float(math.floor(x))      # exact: an integral double
    return fl + 1.0 if x - fl >= 0.5 else fl


def r3_1(x: float) -> float:
    """:func:`~thatchlab.core.jsfmt.r3` of one float: ``js_round(x * 1000) / 1000``."""
    return js_round1(float(x) * 1000.0) / 1000.0


def score_key(score: float) -> tuple:
    """Sort key of a descending stable sort by score that orders like numpy's
    ``argsort(-score, kind="stable")``: NaN last, ties (and ±0) in input order."""
    return (score != score, -score)


def _evidence(c: float, d: float) -> int:
    """:func:`~thatchlab.scoring.evidence_count` of one item's counts, as the array
    form computes it (non-finite sums go through numpy itself)."""
    total = c + d
    if total - total == 0.0:
        return int(js_round1(total))
    return int(evidence_count(np.array([c]), np.array([d]))[0])


def rank_columns(state, p, qvec: np.ndarray, stores, threshold: float, max_items: int | None, *,
                 scan_model, own_model) -> tuple[list, int]:
    """The items of one nudge or query as lists in ``ITEM_COLUMNS`` order, and how many
    scored matchers carry a model tag other than ``own_model``.

    ``state`` is the :class:`~thatchlab.scoring.EngineState`, ``p`` the
    :class:`~thatchlab.core.params.ScoringParams`; ``scan_model`` is the
    model tag a row must carry (None: any, as production); ``max_items``
    None keeps every item (queries). The lists hold Python values
    (:func:`~thatchlab.scoring.results.item_arrays` types them).
    """
    dim = len(qvec)
    n_foreign = state.n_foreign_model("matchers", dim, own_model, stores=stores, model=scan_model)
    # 3. float32 scan for candidates, exact float64 cosines for the few that can matter
    pos, cos = state.cosines("matchers", qvec, stores=stores, model=scan_model,
                             floor=max(p.noise_floor, threshold), top=p.top_matchers)
    noise = p.noise_floor
    found = [(m, r3_1(c)) for m, c in zip(pos.tolist(), cos.tolist()) if c >= noise]
    # 4. stable sort by rounded cosine (ties keep insertion order), top_matchers, threshold
    found.sort(key=lambda r: -r[1])
    matched = [r for r in found[: p.top_matchers] if r[1] >= threshold]
    # 5. each matched matcher's edges into existing items, in the order production's SQL
    #    returns them: statement, then matcher id, then item id (rules.row_order_key)
    which, item, weight, conf = state.edges_from([m for m, _ in matched])
    items, matchers = state.items, state.matchers
    statement = items.cells("statement", item)
    matched_ids = matchers.cells("id", [m for m, _ in matched])
    item_ids = items.cells("id", item)
    rows = []
    min_conf = p.min_confidence
    for j in sorted(range(len(item)),
                    key=lambda j: row_order_key(statement[j], matched_ids[which[j]], item_ids[j])):
        if conf[j] >= min_conf:  # filters only when a study sets min_confidence
            cosine = matched[which[j]][1]
            rows.append((r3_1(cosine * weight[j] * conf[j]), j, cosine))
    rows.sort(key=lambda r: score_key(r[0]))
    # 6. an item reached through several matchers keeps its first (best) row, scores not summed
    seen: set = set()
    first = [r for r in rows if not (item[r[1]] in seen or seen.add(item[r[1]]))]
    # 6b. 07ecf87: an item near-identical (by embedding) to a kept higher-ranked one is dropped
    if drops_near_duplicates(p) and len(first) > 1:
        keep = keep_flags([state.vector("items", item[j]) for _, j, _ in first])
        first = [r for r, k in zip(first, keep) if k]
    # 7. at most max_items items (queries keep all)
    kept = first if max_items is None else first[:max_items]
    rows_item = [item[j] for _, j, _ in kept]
    rows_matcher = [matched[which[j]][0] for _, j, _ in kept]
    rows_conf = [conf[j] for _, j, _ in kept]
    evidence = [_evidence(c, d) for c, d in zip(items.cells("confirm_count", rows_item),
                                                items.cells("disconfirm_count", rows_item))]
    columns = [
        [r3_1(c) for c in rows_conf], evidence, matchers.cells("description", rows_matcher),
        [statement[j] for _, j, _ in kept], [s for s, _, _ in kept], items.cells("id", rows_item),
        matchers.cells("id", rows_matcher), items.cells("store", rows_item), [c for _, _, c in kept],
        [weight[j] for _, j, _ in kept], rows_conf]
    return columns, n_foreign
