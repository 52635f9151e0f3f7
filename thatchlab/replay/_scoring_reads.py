"""Step 2 of the vectorised replay: every read's cosines to the matchers (thatch).

Messages (and, for predictions, queries) are embedded once per unique text
(a logged embedding is used as is). A float32 product finds every (text,
matcher) pair that can reach a threshold: texts in order of their last read,
a block at a time, each block against only the matchers that exist by its
last read (matchers are added in log order, so those are a prefix). Those
pairs are recomputed in float64 with the engine's own cosine, so rounding
decisions match the engine's. Pairs are then spread over the reads of each
text and masked to matchers that existed at the read, in its store or
``global``. As in the engine, a matcher's model tag filters nothing (unless
the engine's ``strict_model``); each read also counts the scored matchers
whose tag names another model than the embedder.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
import pandas as pd

from thatchlab.core.errors import InputError
from thatchlab.core.vectors import MARGIN, exact_cosines
from thatchlab.logs import applied
from thatchlab.replay._dedup_lookup import unit_rows
from thatchlab.replay._grouping import expand_ranges

__all__ = ["ReadCosines", "MatcherPairs"]

#: Cells of one float32 block of the (text × matcher) product (small enough that the
#: comparison reads the block from cache).
_BLOCK_CELLS = 1 << 20
#: Pairs whose exact cosines are computed together (float64 rows of a few MB).
_EXACT_ROWS = 2048


@dataclass(frozen=True)
class MatcherPairs:
    """(read, matcher) pairs with their exact float64 cosines, as parallel arrays."""

    read: np.ndarray     # index into ReadCosines' reads
    matcher: np.ndarray  # matcher position in the final state
    cosine: np.ndarray

    def take(self, index) -> MatcherPairs:
        return MatcherPairs(*(getattr(self, f.name)[index] for f in fields(self)))


class ReadCosines:
    """The reads of one log and their matcher cosines.

    Attributes
    ----------
    position : log positions of the reads (messages, and queries of the prediction engine).
    is_query : bool per read.
    length : text length per read, what the prompt-length gate compares; −1 for a
        message production's hook gave no nudge (``hook_skipped``), so every gate skips it.
    hook_skipped : bool per read: a message the hook of the release skipped
        (:mod:`thatchlab.replay._hook`; all False when ``hook_skipped`` is not given).
    n_foreign_model : per read, the matchers it scores (alive, in reach, of its
        dimension) whose model tag is set and is not the embedder's.
    """

    def __init__(self, log, engine: str, stores: np.ndarray, eng, matchers, hook_skipped=None):
        kinds = log["kind"].to_numpy(object)
        is_read = ((kinds == "message") | ((kinds == "prediction_query") & (engine == "prediction"))) \
            & applied(log).to_numpy(dtype=bool)
        self.position = np.flatnonzero(is_read)
        self.is_query = kinds[self.position] == "prediction_query"
        texts = log["text"].to_numpy(object)[self.position]
        self.length = np.asarray([len(t) for t in texts], dtype=np.int64)
        self.hook_skipped = (np.zeros(len(self.position), dtype=bool) if hook_skipped is None
                             else np.asarray(hook_skipped, dtype=bool)[self.position] & ~self.is_query)
        self.length[self.hook_skipped] = -1
        self._text_of_read, self._texts = self._embed(texts, log["embedding"].to_numpy(object)[self.position],
                                                      eng)
        dim = self._texts.shape[1]
        usable = eng.state.usable("matchers", dim, model=eng.scan_model)
        self._matcher_index = np.flatnonzero(usable)  # rows of the matrices below → matcher positions
        vectors = [eng.state.vector("matchers", int(j)) for j in self._matcher_index]
        self._matchers64 = np.vstack(vectors).astype(np.float64) if vectors else np.zeros((0, dim))
        self._matchers32 = unit_rows(self._matchers64)
        codes = {s: j for j, s in enumerate(sorted(set(matchers.store) | set(stores) | {"global"}))}
        self._matcher_store = np.asarray([codes[s] for s in matchers.store], dtype=np.int64)
        self._read_store = np.asarray([codes[s] for s in stores[self.position]], dtype=np.int64)
        self._global = codes["global"]
        self._matcher_created_at = matchers.created_at
        # each text's last read: a block of texts needs only the matchers created before its last one
        self._text_last = np.full(len(self._texts), -1, dtype=np.int64)
        np.maximum.at(self._text_last, self._text_of_read, self.position)
        self.n_foreign_model = self._count_foreign(usable & eng.state.foreign_model("matchers", eng.model_name))
        self._cache_floor: float | None = None
        self._cache: MatcherPairs | None = None

    def _count_foreign(self, foreign: np.ndarray) -> np.ndarray:
        """Per read, the ``foreign`` matchers alive at it in its store or ``global``
        (one sorted search per store holding such matchers)."""
        out = np.zeros(len(self.position), dtype=np.int64)
        f = np.flatnonzero(foreign)
        if not f.size:
            return out
        f_store, f_created = self._matcher_store[f], self._matcher_created_at[f]
        for s in np.unique(f_store).tolist():
            created = np.sort(f_created[f_store == s])
            alive = np.searchsorted(created, self.position, side="left")  # created before the read
            reach = np.ones(len(out), dtype=bool) if s == self._global else self._read_store == s
            out += np.where(reach, alive, 0)
        return out

    @staticmethod
    def _embed(texts, logged, eng) -> tuple[np.ndarray, np.ndarray]:
        """Each read's row in one float32 matrix: its logged vector, or its text's query
        vector (each unique text embedded once, all in one call, written in place).
        Rows: the unique texts in order of first appearance, then one per logged vector."""
        n = len(texts)
        is_logged = np.fromiter((v is not None for v in logged), dtype=bool, count=n)
        plain, with_vector = np.flatnonzero(~is_logged), np.flatnonzero(is_logged)
        codes, uniques = pd.factorize(np.asarray(texts, dtype=object)[plain])
        if (codes < 0).any():  # a read without text or vector: the embedder says what is wrong
            missing = texts[int(plain[np.argmax(codes < 0)])]
            eng.embed_queries([missing])
            raise InputError(f"text: expected a text or a logged embedding for every read, got {missing!r}")
        text_of_read = np.empty(n, dtype=np.int64)
        text_of_read[plain] = codes
        text_of_read[with_vector] = len(uniques) + np.arange(len(with_vector))
        embedded = eng.embed_queries(list(uniques)) if len(uniques) else None
        vectors = [np.asarray(logged[j], dtype=np.float32) for j in with_vector.tolist()]
        dims = {len(v) for v in vectors} | ({embedded.shape[1]} if embedded is not None else set())
        if len(dims) > 1:
            raise InputError(f"embedding: query vectors of several dimensions {sorted(dims)}; expected one")
        out = np.empty((len(uniques) + len(vectors), dims.pop() if dims else 0), dtype=np.float32)
        if embedded is not None:
            out[: len(uniques)] = embedded
        if vectors:
            out[len(uniques):] = vectors
        return text_of_read, out

    def pairs(self, floor: float) -> MatcherPairs:
        """Every (read, matcher) pair whose float32 cosine is ≥ ``floor`` − MARGIN, with
        its exact cosine, for matchers alive at the read and in its store or ``global``
        (cached: a higher ``floor`` reuses the pairs of a lower one)."""
        if self._cache is not None and self._cache_floor <= floor:
            return self._cache
        text_pairs = self._text_pairs(floor)
        self._cache_floor, self._cache = floor, self._spread(text_pairs)
        return self._cache

    def _text_pairs(self, floor: float) -> MatcherPairs:
        """(unique text, matcher) pairs above the float32 floor, exact cosines, sorted by
        text then matcher."""
        texts, m32 = self._texts, self._matchers32
        n_texts, n_matchers = len(texts), len(m32)
        created = self._matcher_created_at[self._matcher_index]
        order = np.argsort(self._text_last, kind="stable")
        if len(created) and (np.diff(created) >= 0).all():   # matchers in order of creation
            alive = np.searchsorted(created, self._text_last[order], side="left")
        else:  # pragma: no cover - the write pass appends matchers in log order
            alive = np.full(n_texts, n_matchers, dtype=np.int64)
        # a text's float32 cosine reaches the cut when its product with the unit matcher rows
        # reaches cut × its norm (no pass to normalise the texts; a zero text has cosine 0)
        cut = np.float32(floor - MARGIN)
        norms = np.sqrt(np.einsum("ij,ij->i", texts, texts))
        bars = np.where(norms > 0, cut * norms, np.float32(0.0) if cut <= 0 else np.float32(np.inf))
        block = max(1, _BLOCK_CELLS // max(1, n_matchers))
        scratch = np.empty(block * n_matchers + 8, dtype=bool)
        text_rows, matcher_rows = [], []
        for s in range(0, n_texts, block):
            rows = order[s:s + block]
            k = int(alive[s + len(rows) - 1])  # the block's last read sees the most matchers
            if k == 0:
                continue
            a, b = _at_least(texts[rows] @ m32[:k].T, bars[rows], scratch)
            text_rows.append(rows[a])
            matcher_rows.append(b)
        text_rows = np.concatenate(text_rows) if text_rows else np.zeros(0, dtype=np.int64)
        matcher_rows = np.concatenate(matcher_rows) if matcher_rows else np.zeros(0, dtype=np.int64)
        # exact float64 cosines, production's dot / (|a| |b|) (float32 → float64 is exact),
        # row-wise, a cache-sized chunk of pairs at a time
        cos = np.empty(len(text_rows), dtype=np.float64)
        for s in range(0, len(text_rows), _EXACT_ROWS):
            m, t = matcher_rows[s:s + _EXACT_ROWS], text_rows[s:s + _EXACT_ROWS]
            cos[s:s + _EXACT_ROWS] = exact_cosines(self._matchers64[m], texts[t].astype(np.float64))
        matcher = self._matcher_index[matcher_rows] if len(matcher_rows) else matcher_rows
        by_text = np.lexsort((matcher, text_rows))
        return MatcherPairs(text_rows[by_text], matcher[by_text], cos[by_text])

    def _spread(self, text_pairs: MatcherPairs) -> MatcherPairs:
        """The pairs of each read's text, kept where the matcher existed and is in reach."""
        bounds = np.searchsorted(text_pairs.read, np.arange(len(self._texts) + 1))
        t = self._text_of_read
        read, idx = expand_ranges(bounds[t], bounds[t + 1] - bounds[t])
        pairs = MatcherPairs(read, text_pairs.matcher[idx], text_pairs.cosine[idx])
        store = self._matcher_store[pairs.matcher]
        alive = self._matcher_created_at[pairs.matcher] < self.position[pairs.read]
        reach = (store == self._read_store[pairs.read]) | (store == self._global)
        return pairs.take(alive & reach)


def _at_least(block: np.ndarray, bars: np.ndarray, scratch: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.nonzero(block >= bars[:, None])`` of a 2-d block, found eight cells at a time.

    The comparison is written into ``scratch`` (bool, ``block.size + 8`` cells or
    more), viewed as 64-bit words; only the few words holding a hit are opened,
    which is several times cheaper than ``nonzero`` over every cell when hits are rare.
    """
    n_rows, n_cols = block.shape
    size = block.size
    flags = scratch[: size + (-size % 8)]
    np.greater_equal(block, bars[:, None], out=flags[:size].reshape(n_rows, n_cols))
    flags[size:] = False
    words = np.flatnonzero(flags.view(np.uint64))
    cells = (words[:, None] * 8 + np.arange(8)).reshape(-1)
    cells = cells[flags[cells]]
    return cells // n_cols, cells % n_cols
