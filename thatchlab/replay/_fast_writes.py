"""Dedup searches by lookup for the vectorised replay's write pass (DESIGN §11).

The write pass runs every write through the engine's own ``_write`` /
``feedback`` / ``delete``. Each of them searches the nearest matcher or item
by raw cosine (``_nearest``). Instead of scanning all rows per write, this
engine subclass looks candidates up in float32 cosine matrices computed once
among all write texts and the initial rows, keeps those within ``MARGIN`` of
the best (the rule of :meth:`thatchlab.core.vectors.VectorRows.candidates`), and
recomputes them with the engine's own float64 :meth:`VectorRows.exact`, so the
decision is the engine's.
"""

from __future__ import annotations

import numpy as np

from thatchlab.core.vectors import MARGIN

__all__ = ["fast_write_class", "attach_lookups", "MAX_LOOKUP"]


def _unit32(mat64: np.ndarray) -> np.ndarray:
    norms = np.sqrt(np.einsum("ij,ij->i", mat64, mat64)) if len(mat64) else np.zeros(0)
    out = np.divide(mat64, norms[:, None], out=np.zeros_like(mat64), where=norms[:, None] > 0)
    return out.astype(np.float32)


class _Side:
    """Lookup state of one row kind (matchers or items)."""

    def __init__(self, rows, initial_vecs, texts, vecs, model, stores):
        n0 = len(initial_vecs)
        self.col_of_text = {t: n0 + j for j, t in enumerate(texts)}
        dim = rows._dim
        if dim is None:
            dim = len(vecs[texts[0]]) if texts else 0
        cols = [v if v is not None and len(v) == dim else np.zeros(dim) for v in initial_vecs]
        cols += [vecs[t] if len(vecs[t]) == dim else np.zeros(dim) for t in texts]
        R = _unit32(np.vstack(cols).astype(np.float64)) if cols else np.zeros((0, dim), np.float32)
        Q = R[n0:]
        self.C = Q @ R.T if len(Q) else np.zeros((0, len(R)), np.float32)  # text row × column
        cap = n0 + len(texts) + 1
        self.col = np.zeros(cap, dtype=np.int64)
        self.ok = np.zeros(cap, dtype=bool)
        self.store = np.zeros(cap, dtype=np.int64)
        self.n = 0
        self.model = model
        self.stores = stores
        for j in range(len(rows)):
            self.append(rows, j, j, rows._models[j])
        self.store_of_row = None

    def append(self, rows, pos, col, model):
        if pos >= len(self.col):  # one text may become a row in several stores
            grow = max(2 * len(self.col), pos + 1)
            self.col, self.ok, self.store = (np.resize(a, grow) for a in (self.col, self.ok, self.store))
        self.col[pos] = col
        ok = bool(rows._ok[pos]) if pos < len(rows._ok) else False
        self.ok[pos] = ok and (self.model is None or model is None or model == self.model)
        self.n = pos + 1

    def delete(self, pos):
        for arr in (self.col, self.ok, self.store):
            arr[pos:self.n - 1] = arr[pos + 1:self.n]
        self.n -= 1


def fast_write_class(base):
    """A subclass of engine class ``base`` whose dedup searches use lookups when attached."""

    class FastWrites(base):
        _fast = None

        def _add_matcher_row(self, mid, store, description, vec, model, created_at, updated_at):
            pos = super()._add_matcher_row(mid, store, description, vec, model, created_at, updated_at)
            st = self._fast
            if st is not None and st["m"] is not None:
                side = st["m"]
                side.append(self._m_vec, pos, side.col_of_text[description], model)
            return pos

        def _add_item_row(self, iid, store, statement, *args):
            pos = super()._add_item_row(iid, store, statement, *args)
            st = self._fast
            if st is not None and st["i"] is not None:
                side = st["i"]
                side.append(self._i_vec, pos, side.col_of_text[statement], args[2])
                side.store[pos] = st["codes"].setdefault(store, len(st["codes"]))
            return pos

        def _delete_item(self, pos: int):
            super()._delete_item(pos)
            if self._fast is not None and self._fast["i"] is not None:
                self._fast["i"].delete(pos)

        def _item_mask(self, stores):
            st = self._fast
            if st is None or st["i"] is None:
                return super()._item_mask(stores)
            side = st["i"]
            codes = [st["codes"][s] for s in stores if s in st["codes"]]
            return np.isin(side.store[:side.n], codes)

        def _nearest(self, rows, vec, mask):
            st = self._fast
            kind = "m" if rows is self._m_vec else "i"
            text = None if st is None or st[kind] is None else st["current"].get(kind)
            if text is None or rows._dim is None or len(vec) != rows._dim:
                return super()._nearest(rows, vec, mask)
            side = st[kind]
            ok = side.ok[:side.n] & mask
            pos = np.flatnonzero(ok)
            if pos.size == 0:
                return None, float("nan")
            approx = side.C[side.col_of_text[text] - (side.C.shape[1] - side.C.shape[0]), side.col[pos]]
            if approx.size > 1:
                pos = pos[approx >= approx.max() - MARGIN]
            cos = rows.exact(vec, pos)
            j = int(np.argmax(cos))
            if cos[j] >= self.params.dedup_cosine:
                return int(pos[j]), float(cos[j])
            return None, float(cos[j])

    FastWrites.__name__ = f"FastWrites{base.__name__}"
    return FastWrites


#: Largest lookup matrix (entries) built per side; beyond it the engine scans as usual.
MAX_LOOKUP = 60_000_000


def attach_lookups(eng, matcher_texts, item_texts, vecs, max_entries: int = MAX_LOOKUP):
    """Precompute the lookup matrices for ``eng`` (a :func:`fast_write_class` engine).

    A side (matchers, items) whose matrix would exceed ``max_entries`` float32
    cells keeps the engine's own scan, so memory stays bounded.
    """
    model = eng.model_name
    m_init = [eng._m_vec.vector(j) for j in range(len(eng._m_vec))]
    i_init = [eng._i_vec.vector(j) for j in range(len(eng._i_vec))]
    codes = {}

    def side(rows, init, texts):
        if len(texts) * (len(init) + len(texts)) > max_entries:
            return None
        return _Side(rows, init, texts, vecs, model, None)

    st = {"m": side(eng._m_vec, m_init, matcher_texts), "i": side(eng._i_vec, i_init, item_texts),
          "codes": codes, "current": {}}
    if st["i"] is not None:
        for j, s in enumerate(eng._i["store"]):
            st["i"].store[j] = codes.setdefault(s, len(codes))
    eng._fast = st
    return st
