"""A growable matrix of row vectors for cosine scans (matchers, items).

Rows are appended as they are written; deleted rows are removed. Each row
keeps its model name so a scan can skip vectors of another model or
dimension (a production store may hold vectors of two 384-d models).

Production computes each cosine in float64 as dot / (|a| |b|), 0 when a norm
is 0, and rounds it to three decimals. Scanning a large matrix in float64 is
memory-bound, so :meth:`VectorRows.candidates` scans normalised float32 rows
and keeps every row that could matter within a margin far above float32
error; :meth:`VectorRows.exact` then recomputes those few in float64, so
results equal production's.
"""

from __future__ import annotations

import numpy as np

__all__ = ["VectorRows", "MARGIN", "exact_cosines"]

#: Slack around float32 cosines: > one rounding step (0.001) plus twice the float32 error.
MARGIN = 2e-3


def exact_cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosines of two float64 matrices of the same shape: dot / (|a| |b|), 0
    when a norm is 0.

    Every exact cosine in thatchlab goes through this one function (row-wise
    ``einsum``, never a BLAS call whose summation order depends on the batch
    shape), so the engine and the vectorised replay agree to the last bit.
    """
    dots = np.einsum("ij,ij->i", a, b)
    norms = np.sqrt(np.einsum("ij,ij->i", a, a)) * np.sqrt(np.einsum("ij,ij->i", b, b))
    out = np.zeros(len(a), dtype=np.float64)
    np.divide(dots, norms, out=out, where=norms > 0)
    return out


class VectorRows:
    def __init__(self):
        self._dim: int | None = None
        self._mat = np.zeros((0, 0), dtype=np.float32)   # unit rows (zero when unusable)
        self._ok = np.zeros(0, dtype=bool)                # has a vector of the working dim
        self._vecs: list = []                             # original float32 vectors (or None)
        self._models: list = []
        self._model_arr = None
        self._n = 0

    def __len__(self):
        return self._n

    def _reserve(self, need: int):
        cap = self._mat.shape[0]
        if need <= cap:
            return
        new = max(need, 2 * cap, 64)
        mat = np.zeros((new, self._dim), dtype=np.float32)
        mat[:cap] = self._mat
        ok = np.zeros(new, dtype=bool)
        ok[:cap] = self._ok
        self._mat, self._ok = mat, ok

    def append(self, vec, model=None):
        """Append one row (``vec`` may be None)."""
        self.extend([vec], [model])

    def extend(self, vecs, models):
        vecs = [None if v is None else np.asarray(v, dtype=np.float32) for v in vecs]
        models = list(models)
        if not vecs:
            return
        if self._dim is None:
            dims = [len(v) for v in vecs if v is not None]
            if dims:
                self._dim = dims[0]
                self._mat = np.zeros((0, self._dim), dtype=np.float32)
        start = self._n
        self._vecs.extend(vecs)
        self._models.extend(models)
        self._n += len(vecs)
        self._model_arr = None
        if self._dim is None:
            return
        self._reserve(self._n)
        rows = [(start + j, v) for j, v in enumerate(vecs) if v is not None and len(v) == self._dim]
        if rows:
            idx = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            block = np.vstack([r[1] for r in rows]).astype(np.float64)
            norms = np.sqrt(np.einsum("ij,ij->i", block, block))
            block = np.divide(block, norms[:, None], out=np.zeros_like(block), where=norms[:, None] > 0)
            self._mat[idx] = block.astype(np.float32)
            self._ok[idx] = True

    def delete(self, positions):
        """Remove rows (later rows shift up)."""
        drop = set(int(p) for p in positions)
        if not drop:
            return
        vecs = [v for j, v in enumerate(self._vecs) if j not in drop]
        models = [m for j, m in enumerate(self._models) if j not in drop]
        self.__init__()
        self.extend(vecs, models)

    @property
    def models(self) -> np.ndarray:
        if self._model_arr is None:
            arr = np.empty(len(self._models), dtype=object)
            arr[:] = self._models
            self._model_arr = arr
        return self._model_arr

    def vector(self, i):
        return self._vecs[i]

    def usable(self, dim: int, rows=None, model=None) -> np.ndarray:
        """Boolean mask of rows with a vector of ``dim`` (and the same model when named)."""
        n = self._n
        if self._dim is None or dim != self._dim:
            return np.zeros(n, dtype=bool)
        ok = self._ok[:n].copy()
        if rows is not None:
            ok &= rows
        if model is not None:
            m = self.models
            ok &= (m == model) | (m == None)  # noqa: E711 - elementwise on an object array
        return ok

    def candidates(self, q, rows=None, model=None, *, floor=None, top=None):
        """Rows that may have cosine ≥ ``floor`` and rank among the ``top`` largest.

        Returns ``(positions, approx)`` in ascending position order; ``approx``
        are float32 cosines. Every row whose exact cosine could pass ``floor``
        or belong to the top ``top`` (after 3-decimal rounding) is included.
        """
        q = np.asarray(q, dtype=np.float64)
        ok = self.usable(len(q), rows, model)
        pos = np.flatnonzero(ok)
        if pos.size == 0:
            return pos, np.zeros(0, dtype=np.float32)
        qn = np.sqrt(q @ q)
        qu = (q / qn if qn > 0 else q).astype(np.float32)
        mat = self._mat[: self._n]
        approx = (mat @ qu)[pos] if pos.size > self._n // 4 else mat[pos] @ qu
        if floor is not None:
            keep = approx >= floor - MARGIN
            pos, approx = pos[keep], approx[keep]
        if top is not None and approx.size > top:
            kth = np.partition(approx, approx.size - top)[approx.size - top]
            keep = approx >= kth - MARGIN
            pos, approx = pos[keep], approx[keep]
        return pos, approx

    def exact(self, q, positions) -> np.ndarray:
        """Cosines in float64, dot / (|a| |b|), 0 when a norm is 0 (production's formula)."""
        if len(positions) == 0:
            return np.zeros(0, dtype=np.float64)
        block = np.vstack([self._vecs[int(p)] for p in positions]).astype(np.float64)
        q = np.asarray(q, dtype=np.float64)
        return exact_cosines(block, np.ascontiguousarray(np.broadcast_to(q, block.shape)))

    def cosines(self, q, rows=None, model=None, *, floor=None, top=None):
        """``(positions, exact cosines)`` of the candidate rows."""
        pos, _ = self.candidates(q, rows, model, floor=floor, top=top)
        return pos, self.exact(q, pos)
