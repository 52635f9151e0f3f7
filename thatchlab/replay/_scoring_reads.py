"""Step 2 of the vectorised replay: every read's cosines to the matchers (thatch).

Messages (and, for predictions, queries) are embedded once per unique text
(a logged embedding is used as is); one float32 product per chunk finds
every (text, matcher) pair that can reach a threshold, and those pairs are
recomputed in float64 with the engine's own cosine, so rounding decisions
match the engine's. Pairs are then spread over the reads of each text and
masked to matchers that existed at the read, in its store or ``global``.
As in the engine, a matcher's model tag filters nothing (unless the
engine's ``strict_model``); each read also counts the scored matchers whose
tag names another model than the embedder.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from thatchlab.core.errors import InputError
from thatchlab.core.vectors import MARGIN, exact_cosines
from thatchlab.logs import applied
from thatchlab.replay._dedup_lookup import unit_rows
from thatchlab.replay._grouping import expand_ranges

__all__ = ["ReadCosines", "MatcherPairs"]

#: Cells of one float32 block of the (text × matcher) product.
_BLOCK_CELLS = 4_000_000


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
    length : text length per read (the prompt-length gate).
    n_foreign_model : per read, the matchers it scores (alive, in reach, of its
        dimension) whose model tag is set and is not the embedder's.
    """

    def __init__(self, log, engine: str, stores: np.ndarray, eng, matchers):
        kinds = log["kind"].to_numpy(object)
        is_read = ((kinds == "message") | ((kinds == "prediction_query") & (engine == "prediction"))) \
            & applied(log).to_numpy(dtype=bool)
        self.position = np.flatnonzero(is_read)
        self.is_query = kinds[self.position] == "prediction_query"
        texts = log["text"].to_numpy(object)[self.position]
        self.length = np.asarray([len(t) for t in texts], dtype=np.int64)
        self._text_of_read, self._texts64 = self._embed(texts, log["embedding"].to_numpy(object)[self.position],
                                                        eng)
        dim = self._texts64.shape[1]
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
        """Each read's row in one float64 matrix: its logged vector, or its text's query
        vector (each unique text embedded once)."""
        row_of_text, vectors, to_embed = {}, [], []
        text_of_read = np.zeros(len(texts), dtype=np.int64)
        for j, (text, vec) in enumerate(zip(texts, logged)):
            if vec is not None:
                text_of_read[j] = len(vectors)
                vectors.append(np.asarray(vec, dtype=np.float32))
                continue
            if text not in row_of_text:
                row_of_text[text] = len(vectors)
                vectors.append(None)
                to_embed.append(text)
            text_of_read[j] = row_of_text[text]
        if to_embed:
            for text, vec in zip(to_embed, eng.embed_queries(to_embed)):
                vectors[row_of_text[text]] = vec
        dims = {len(v) for v in vectors}
        if len(dims) > 1:
            raise InputError(f"embedding: query vectors of several dimensions {sorted(dims)}; expected one")
        dim = dims.pop() if dims else 0
        return text_of_read, (np.vstack(vectors).astype(np.float64) if vectors else np.zeros((0, dim)))

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
        texts = self._texts64
        norms = np.sqrt(np.einsum("ij,ij->i", texts, texts))
        texts32 = np.divide(texts, norms[:, None], out=np.zeros_like(texts),
                            where=norms[:, None] > 0).astype(np.float32)
        text_rows, matcher_rows = [], []
        block = max(1, _BLOCK_CELLS // max(1, len(self._matchers32)))
        for s in range(0, len(texts), block):
            a, b = np.nonzero(texts32[s:s + block] @ self._matchers32.T >= floor - MARGIN)
            text_rows.append(a + s)
            matcher_rows.append(b)
        text_rows = np.concatenate(text_rows) if text_rows else np.zeros(0, dtype=np.int64)
        matcher_rows = np.concatenate(matcher_rows) if matcher_rows else np.zeros(0, dtype=np.int64)
        # exact float64 cosines, production's dot / (|a| |b|)
        cos = exact_cosines(self._matchers64[matcher_rows], texts[text_rows])
        matcher = self._matcher_index[matcher_rows] if len(matcher_rows) else matcher_rows
        by_text = np.lexsort((matcher, text_rows))
        return MatcherPairs(text_rows[by_text], matcher[by_text], cos[by_text])

    def _spread(self, text_pairs: MatcherPairs) -> MatcherPairs:
        """The pairs of each read's text, kept where the matcher existed and is in reach."""
        bounds = np.searchsorted(text_pairs.read, np.arange(len(self._texts64) + 1))
        t = self._text_of_read
        read, idx = expand_ranges(bounds[t], bounds[t + 1] - bounds[t])
        pairs = MatcherPairs(read, text_pairs.matcher[idx], text_pairs.cosine[idx])
        store = self._matcher_store[pairs.matcher]
        alive = self._matcher_created_at[pairs.matcher] < self.position[pairs.read]
        reach = (store == self._read_store[pairs.read]) | (store == self._global)
        return pairs.take(alive & reach)
