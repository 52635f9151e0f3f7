"""Step 3 of the vectorised replay: every read's nudge or query items under one setting.

The engine's nudge rules as group operations on a table of candidate rows:
the (read, matcher) pairs of step 2 pass the noise floor, the threshold and
the top-``top_matchers`` cut; they join the edges alive at the read; each
item's stored confidence at the read comes from its count history; rows are
scored, ordered by score, statement, matcher rank and edge order; each item
keeps its first row and a message keeps ``max_items``. Regimes and reply
texts follow from the surfaced rows.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from thatchlab.core.jsfmt import js_round, r3, to_fixed
from thatchlab.core.params import ScoringParams
from thatchlab.replay._grouping import expand_ranges, group_rank
from thatchlab.replay._scoring_common import nudges_frame
from thatchlab.scoring import evidence_count

__all__ = ["ReadOutcomes", "nudge_reads", "ordered_rows"]


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
    return nudges, ReadOutcomes(regime, n_items, _reply_texts(plan, rows, evidence, n_items), n_foreign)


def ordered_rows(plan, p: ScoringParams, threshold: np.ndarray, skipped: np.ndarray, values) -> _ItemRows:
    """Steps 3–5 for every read (its own ``threshold``; none for ``skipped`` reads), the rows
    of a read ordered by score, then statement, matcher rank and edge order (the engine's
    stable sorts, in one key), reads in order."""
    rows = _join_items(plan, p, _top_matchers(plan.reads, p, threshold, skipped), values)
    order = np.lexsort((rows.edge_order, rows.matcher_rank, plan.items.statement_rank[rows.item], -rows.score,
                        rows.read))
    return rows.take(order)


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


def _reply_texts(plan, rows: _ItemRows, evidence, n_items) -> np.ndarray:
    """The nudge block of each message and the reply of each query."""
    cfg, reads = plan.config, plan.reads
    shown = r3(rows.confidence) if len(rows.confidence) else rows.confidence
    fixed = {v: to_fixed(v, 2) for v in np.unique(shown)}
    lines = [f"[{fixed[c]} conf, {n} tests] When {d}: {cfg.verb_untested if n == 0 else cfg.verb_tested} {s}"
             for c, n, d, s in zip(shown.tolist(), evidence.tolist(), plan.matchers.description[rows.matcher],
                                   plan.items.statement[rows.item])]
    out = np.empty(len(n_items), dtype=object)
    out[:] = ""
    bounds = np.r_[0, np.cumsum(n_items)]
    for j in np.flatnonzero(n_items):
        block = lines[bounds[j]:bounds[j + 1]]
        out[j] = "\n".join(block) if reads.is_query[j] else "\n".join([cfg.header] + ["- " + s for s in block])
    out[reads.is_query & (n_items == 0)] = f"No matching {cfg.plural} found."
    return out
