"""Step 3 of the vectorised replay: every read's nudge or query items under one setting.

The engine's nudge rules as group operations on a table of candidate rows:
the (read, matcher) pairs of step 2 pass the noise floor, the threshold and
the top-``top_matchers`` cut; they join the edges alive at the read; each
item's stored confidence at the read comes from its count history; rows are
scored, ordered by score, statement, matcher id and item id (the order
production's SQL and stable sort give, :mod:`thatchlab.scoring.rules`); each
item keeps its first row; under ``07ecf87`` near-duplicate items (by
embedding) are dropped; a message keeps ``max_items``. Regimes and reply
texts follow from the surfaced rows.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, fields

import numpy as np

from thatchlab.core.jsfmt import js_round, r3, to_fixed
from thatchlab.core.params import ScoringParams
from thatchlab.core.vectors import loop_cosines
from thatchlab.replay._grouping import expand_ranges, group_rank
from thatchlab.replay._scoring_common import nudges_frame
from thatchlab.scoring import evidence_count
from thatchlab.scoring.rules import (
    NEAR_DUPLICATE_COSINE,
    drops_near_duplicates,
    nudge_line,
    query_line,
)

__all__ = ["ReadOutcomes", "nudge_reads", "ordered_rows", "item_vectors", "near_duplicate_pairs",
           "drop_near_duplicates"]

# plan -> (matcher id ranks, item id ranks): the tie order's keys (parameter-independent)
_ID_RANKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class _ItemRows:
    """Candidate (read, item) rows reached through one matcher edge each, as parallel arrays."""

    read: np.ndarray          # index into the reads
    item: np.ndarray          # index into ItemTimeline
    matcher: np.ndarray       # matcher position
    matcher_rank: np.ndarray  # the matcher's rank among the read's matchers
    edge_order: np.ndarray    # the edge's insertion number
    weight: np.ndarray
    cosine: np.ndarray        # the matcher's rounded cosine
    entry: np.ndarray         # history entry giving the item's counts at the read
    confidence: np.ndarray    # stored confidence at the read
    score: np.ndarray

    def take(self, index) -> _ItemRows:
        return _ItemRows(*(getattr(self, f.name)[index] for f in fields(self)))


@dataclass(frozen=True)
class ReadOutcomes:
    """Per read: the regime (None for queries), how many items surfaced, the reply text,
    and how many scored matchers carry another model's tag (0 when skipped)."""

    regime: np.ndarray
    n_items: np.ndarray
    reply: np.ndarray
    n_foreign_model: np.ndarray


def nudge_reads(plan, p: ScoringParams, values):
    """The nudges frame and :class:`ReadOutcomes` of every read of ``plan`` under ``p``.

    ``values`` are the history's counts and confidences under ``p``.
    """
    reads = plan.reads
    n_reads = len(reads.position)
    threshold = np.where(reads.is_query, p.query_threshold, p.threshold)
    skipped = ~reads.is_query & (reads.length < p.min_prompt_chars)
    rows = ordered_rows(plan, p, threshold, skipped, values)
    # 6. an item reached through several matchers keeps its first (best) row
    first = np.zeros(len(rows.read), dtype=bool)
    first[np.unique(rows.read * (len(plan.items.id) + 1) + rows.item, return_index=True)[1]] = True
    rows = rows.take(first)
    # 6b. 07ecf87: an item near-identical (by embedding) to a kept higher-ranked one is dropped
    if drops_near_duplicates(p):
        rows = rows.take(drop_near_duplicates(plan, rows.read, rows.item))
    # 7. a message keeps max_items items, a query all
    rank = group_rank(rows.read)
    cap = np.where(reads.is_query[rows.read], np.iinfo(np.int64).max, p.max_items)
    rows, rank = rows.take(rank < cap), rank[rank < cap]
    evidence = (evidence_count(values.confirm_count[rows.entry], values.disconfirm_count[rows.entry])
                if len(rows.entry) else np.zeros(0, dtype=np.int64))
    items, matchers = plan.items, plan.matchers
    nudges = nudges_frame({
        "position": reads.position[rows.read], "rank": rank, "item_id": items.id[rows.item],
        "statement": items.statement[rows.item], "matcher_id": matchers.id[rows.matcher],
        "matcher_description": matchers.description[rows.matcher], "store": items.store[rows.item],
        "score": rows.score, "cosine": rows.cosine, "weight": rows.weight,
        "confidence": r3(rows.confidence), "stored_confidence": rows.confidence, "evidence_count": evidence})
    n_items = np.bincount(rows.read, minlength=n_reads)
    regime = _regimes(reads, p, rows, rank, evidence, n_items, skipped)
    n_foreign = np.where(skipped, 0, reads.n_foreign_model)  # a skipped nudge scores nothing
    return nudges, ReadOutcomes(regime, n_items, _reply_texts(plan, p, rows, evidence, n_items), n_foreign)


def ordered_rows(plan, p: ScoringParams, threshold: np.ndarray, skipped: np.ndarray, values) -> _ItemRows:
    """Steps 3–5 for every read (its own ``threshold``; none for ``skipped`` reads), the rows
    of a read ordered by score, then statement, matcher id and item id (production's SQL
    order under its stable score sort, in one key), reads in order."""
    rows = _join_items(plan, p, _top_matchers(plan.reads, p, threshold, skipped), values)
    matcher_rank, item_rank = _id_ranks(plan)
    order = np.lexsort((item_rank[rows.item], matcher_rank[rows.matcher], plan.items.statement_rank[rows.item],
                        -rows.score, rows.read))
    return rows.take(order)


def _id_ranks(plan) -> tuple:
    """Each matcher's and item's id rank in code-point order (equal ids share one)."""
    hit = _ID_RANKS.get(plan)
    if hit is None:
        hit = tuple(np.unique(np.asarray(ids, dtype=object).astype(str), return_inverse=True)[1]
                    .astype(np.int64).reshape(-1) if len(ids) else np.zeros(0, dtype=np.int64)
                    for ids in (plan.matchers.id, plan.items.id))
        _ID_RANKS[plan] = hit
    return hit


def item_vectors(eng, items, before: dict) -> list:
    """The vector of every item of a write pass's :class:`ItemTimeline` (``None`` when it has
    none): an item still in ``eng``'s state has its stored vector; one deleted during the pass
    has the vector it had at the start (``before``: id → vector) or, created by the pass, its
    statement's passage vector (the one the write stored)."""
    state = eng.state
    out = []
    missing = []
    for j, (iid, statement) in enumerate(zip(items.id.tolist(), items.statement.tolist())):
        pos = state.item_position(iid)
        if pos is not None:
            out.append(state.vector("items", pos))
        elif iid in before:
            out.append(before[iid])
        else:
            out.append(None)
            missing.append((j, statement))
    if missing:
        texts = sorted({t for _, t in missing})
        vecs = dict(zip(texts, eng.embed_passages(texts)))
        for j, t in missing:
            out[j] = np.asarray(vecs[t], dtype=np.float32)
    return out


def near_duplicate_pairs(vectors: list, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Bool per item pair ``(a[k], b[k])``: both have vectors of one length and production's
    cosine of them is ≥ 0.85 (:func:`~thatchlab.core.vectors.loop_cosines`).

    Each distinct pair is decided once; a float64 dot of unit vectors (within far less than
    1e-9 of the loop's value) rules out the pairs clearly below, and the loop decides the rest.
    """
    out = np.zeros(len(a), dtype=bool)
    if not len(a):
        return out
    dims = np.array([-1 if v is None else len(v) for v in vectors], dtype=np.int64)
    n = len(vectors)
    key = a.astype(np.int64) * n + b
    uniq, back = np.unique(key, return_inverse=True)
    ua, ub = uniq // n, uniq % n
    dup = np.zeros(len(uniq), dtype=bool)
    same = (dims[ua] == dims[ub]) & (dims[ua] >= 0) & (ua != ub)
    for d in np.unique(dims[ua][same]).tolist():
        members = np.flatnonzero(dims == d)
        row = np.full(n, -1, dtype=np.int64)
        row[members] = np.arange(len(members))
        mat = np.stack([np.asarray(vectors[i], dtype=np.float64) for i in members.tolist()])
        norms = np.sqrt(np.einsum("ij,ij->i", mat, mat))
        unit = np.divide(mat, norms[:, None], out=np.zeros_like(mat), where=norms[:, None] > 0)
        k = np.flatnonzero(same & (dims[ua] == d))
        for s in range(0, len(k), 65536):
            part = k[s:s + 65536]
            x, y = row[ua[part]], row[ub[part]]
            near = np.einsum("ij,ij->i", unit[x], unit[y]) >= NEAR_DUPLICATE_COSINE - 1e-9
            part, x, y = part[near], x[near], y[near]
            if len(part):
                dup[part] = loop_cosines(mat[x], mat[y]) >= NEAR_DUPLICATE_COSINE
    out[:] = dup[back.reshape(-1)]
    return out


def _plan_vectors(plan) -> list:
    vectors = getattr(plan, "item_vectors", None)
    if vectors is None:
        raise ValueError("this plan holds no item vectors (prepared for a release without the near-duplicate rule)")
    return vectors


def drop_near_duplicates(plan, read: np.ndarray, item: np.ndarray, keep: np.ndarray | None = None) -> np.ndarray:
    """Bool per row (rows grouped by read, in rank order, each item once per read): whether it
    stays after production's near-duplicate rule; ``keep`` (default all) marks the rows that
    take part (the others neither stay nor drop anything)."""
    n = len(read)
    keep = np.ones(n, dtype=bool) if keep is None else keep.copy()
    if n < 2:
        return keep
    pairs = within_read_pairs(plan, read, item)
    return greedy_keep(keep, *pairs)


def within_read_pairs(plan, read: np.ndarray, item: np.ndarray) -> tuple:
    """The (earlier row, later row) pairs of one read whose items are near duplicates."""
    vectors = _plan_vectors(plan)
    start = np.flatnonzero(np.r_[True, read[1:] != read[:-1]]) if len(read) else np.zeros(0, dtype=np.int64)
    size = np.diff(np.r_[start, len(read)])
    big = size > 1
    if not big.any():
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    # every (i, j) with i < j inside a block, as flat row indices
    firsts, seconds = [], []
    for s, k in zip(start[big].tolist(), size[big].tolist()):
        i, j = np.triu_indices(k, 1)
        firsts.append(i + s)
        seconds.append(j + s)
    i, j = np.concatenate(firsts), np.concatenate(seconds)
    dup = near_duplicate_pairs(vectors, item[i], item[j])
    return i[dup], j[dup]


def greedy_keep(keep: np.ndarray, earlier: np.ndarray, later: np.ndarray) -> np.ndarray:
    """Production's greedy pass over near-duplicate pairs: in rank order, a taking-part row
    is dropped when one of its earlier near duplicates stayed."""
    keep = keep.copy()
    if not len(earlier):
        return keep
    order = np.lexsort((earlier, later))
    earlier, later = earlier[order], later[order]
    for r in np.unique(later).tolist():
        if not keep[r]:
            continue
        lo, hi = np.searchsorted(later, r), np.searchsorted(later, r, side="right")
        if keep[earlier[lo:hi]].any():
            keep[r] = False
    return keep


def _top_matchers(reads, p: ScoringParams, threshold: np.ndarray, skipped: np.ndarray):
    """Steps 3–4: per read, the top ``top_matchers`` matchers by rounded cosine (ties in
    insertion order) at or above its threshold; returns (pairs, rounded cosines, ranks)."""
    floor = max(p.noise_floor, float(threshold.min()) if len(threshold) else p.threshold)
    pairs = reads.pairs(floor)
    rounded = r3(pairs.cosine)
    # the threshold before the top-k cut keeps the same matchers: both follow one order
    passed = (pairs.cosine >= p.noise_floor) & (rounded >= threshold[pairs.read]) & ~skipped[pairs.read]
    pairs, rounded = pairs.take(passed), rounded[passed]
    order = np.lexsort((pairs.matcher, -rounded, pairs.read))
    pairs, rounded = pairs.take(order), rounded[order]
    rank = group_rank(pairs.read)
    top = rank < p.top_matchers
    return pairs.take(top), rounded[top], rank[top]


def _join_items(plan, p: ScoringParams, matched, values) -> _ItemRows:
    """Step 5: the matched matchers' edges alive at the read, into items not yet deleted,
    with the item's stored confidence at the read (and min_confidence, off by default)."""
    pairs, rounded, rank = matched
    edges = plan.edges
    starts, ends = edges.start[pairs.matcher], edges.start[pairs.matcher + 1]
    pair, edge = expand_ranges(starts, ends - starts)
    position = plan.reads.position[pairs.read[pair]]
    item = edges.item[edge]
    alive = (edges.created_at[edge] < position) & (plan.items.deleted_at[item] > position)
    pair, edge, position, item = pair[alive], edge[alive], position[alive], item[alive]
    entry = plan.history.entry_before(item, position)
    conf = values.confidence[entry] if len(entry) else np.zeros(0)
    ok = conf >= p.min_confidence
    pair, edge, item, entry, conf = pair[ok], edge[ok], item[ok], entry[ok], conf[ok]
    cosine, weight = rounded[pair], edges.weight[edge]
    score = np.asarray(r3(cosine * weight * conf)) if len(conf) else np.zeros(0)
    return _ItemRows(pairs.read[pair], item, pairs.matcher[pair], rank[pair], edges.order[edge], weight, cosine,
                     entry, conf, score)


def _regimes(reads, p: ScoringParams, rows: _ItemRows, rank, evidence, n_items, skipped) -> np.ndarray:
    """``skipped`` / ``none`` / ``ambiguous`` / ``strong`` per message (None for queries)."""
    regime = np.where(skipped, "skipped", np.where(n_items == 0, "none", "ambiguous")).astype(object)
    regime[reads.is_query] = None
    top = np.flatnonzero(rank == 0)  # the first row of every read with items
    if not len(top):
        return regime
    top_read = rows.read[top]
    group_size = np.diff(np.r_[top, len(rows.read)])
    thousandths = js_round(rows.score * 1000).astype(np.int64)
    top_thousandths = np.repeat(thousandths[top], group_size)
    top_matcher = np.repeat(rows.matcher[top], group_size)
    # competing: another surfaced item from the top item's matcher within the margin
    competing_row = ((rank > 0) & (rows.matcher == top_matcher)
                     & (top_thousandths - thousandths <= int(js_round(p.conflict_margin * 1000))))
    competing = np.bincount(rows.read[competing_row], minlength=len(n_items)) > 0
    strong = ((rows.confidence[top] >= p.strong_confidence) & (evidence[top] >= p.strong_evidence)
              & ~competing[top_read] & ~reads.is_query[top_read])
    regime[top_read[strong]] = "strong"
    return regime


def _reply_texts(plan, p: ScoringParams, rows: _ItemRows, evidence, n_items) -> np.ndarray:
    """The nudge block of each message and the reply of each query (lines as ``p``'s release
    prints them)."""
    cfg, reads = plan.config, plan.reads
    shown = r3(rows.confidence) if len(rows.confidence) else rows.confidence
    fixed = {v: to_fixed(v, 2) for v in np.unique(shown)}
    is_query = reads.is_query[rows.read]
    lines = [(query_line if q else lambda *a: nudge_line(p.release, *a))(
                 fixed[c], n, cfg.verb_untested if n == 0 else cfg.verb_tested, d, s)
             for q, c, n, d, s in zip(is_query.tolist(), shown.tolist(), evidence.tolist(),
                                      plan.matchers.description[rows.matcher], plan.items.statement[rows.item])]
    out = np.empty(len(n_items), dtype=object)
    out[:] = ""
    bounds = np.r_[0, np.cumsum(n_items)]
    for j in np.flatnonzero(n_items):
        block = lines[bounds[j]:bounds[j + 1]]
        out[j] = "\n".join(block) if reads.is_query[j] else "\n".join([cfg.header] + ["- " + s for s in block])
    out[reads.is_query & (n_items == 0)] = f"No matching {cfg.plural} found."
    return out
