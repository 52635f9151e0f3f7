"""A growable matrix of row vectors for cosine scans (matchers, items).

Rows are appended as they are written; deleted rows are removed in place.
Production compares a query only with rows of the same dimension (a store
may hold vectors of several models and sizes), so rows are kept in one
matrix per dimension; each row also keeps its model tag, which only a
research mode that asks for it filters on.

Production computes each cosine in float64 as dot / (‖a‖ ‖b‖), 0 when a norm
is 0, and rounds it to three decimals. Scanning a large matrix in float64 is
memory-bound, so :meth:`VectorRows.candidates` scans normalised float32 rows
and keeps every row that could matter within a margin far above float32
error; :meth:`VectorRows.exact` then recomputes those few in float64, so
results equal production's. :meth:`VectorRows.scan` does both for a mask the
caller has already checked (the engine keeps its masks between writes).
"""

from __future__ import annotations

import numpy as np

from thatchlab.core.docstrings import fill_doc

__all__ = ["VectorRows", "MARGIN", "exact_cosines", "loop_cosines"]

# the Returns of the two row-wise cosine functions (filled in by fill_doc)
_ROWWISE_RETURNS = """
Returns
-------
numpy.ndarray
    ``n`` float64 cosines, row ``i`` of ``a`` with row ``i`` of ``b``.
"""

# the cosine searches' shared parameters and returns, written once (filled in by fill_doc)
_FLOOR_TOP = """
floor : float, optional
    The lowest cosine that matters.
top : int, optional
    How many of the largest cosines matter.
"""
_QUERY_PARAMS = """
q : array-like
    The query vector.
rows : numpy.ndarray of bool, optional
    A mask of rows to consider.
model : str, optional
    Consider only rows of this model tag (and untagged rows).
""" + _FLOOR_TOP.lstrip("\n")
_EXACT_RETURNS = """
Returns
-------
positions : numpy.ndarray
    Candidate row positions, ascending.
cosines : numpy.ndarray
    Their exact float64 cosines.
"""

#: Rows normalised per step when many are appended at once (the float64 scratch
#: stays a few MB, small enough to be reused from cache between steps).
_CHUNK = 1024
_FLOAT32 = np.dtype(np.float32)
#: Slack around float32 cosines: > one rounding step (0.001) plus twice the float32 error.
MARGIN = 2e-3


@fill_doc(rowwise_returns=_ROWWISE_RETURNS)
def exact_cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosines of two float64 matrices of the same shape: dot / (‖a‖ ‖b‖), 0
    when a norm is 0.

    Every exact cosine in thatchlab goes through this one function (row-wise
    ``einsum``, never a BLAS call whose summation order depends on the batch
    shape), so the engine and the vectorised replay agree to the last bit.

    Parameters
    ----------
    a, b : numpy.ndarray
        float64 matrices of the same shape ``(n, dim)``.

    {rowwise_returns}

    See Also
    --------
    loop_cosines : The same summed in production's loop order.

    Examples
    --------
    >>> exact_cosines(np.array([[3.0, 4.0], [0.0, 0.0]]), np.array([[4.0, 3.0], [1.0, 0.0]])).tolist()
    [0.96, 0.0]
    """
    dots = np.einsum("ij,ij->i", a, b)
    norms = np.sqrt(np.einsum("ij,ij->i", a, a)) * np.sqrt(np.einsum("ij,ij->i", b, b))
    out = np.zeros(len(a), dtype=np.float64)
    np.divide(dots, norms, out=out, where=norms > 0)
    return out


@fill_doc(rowwise_returns=_ROWWISE_RETURNS)
def loop_cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosines computed the way production's loop does, to the last bit.

    thatch's ``cosineSimilarity`` (``src/vector-math.ts``) walks the float32
    components once, adding ``a[i]·b[i]``, ``a[i]²`` and ``b[i]²`` to three
    double accumulators in index order, then divides the dot by
    ``sqrt(Σa²)·sqrt(Σb²)`` (0 when that is 0). A float32 × float32 product
    is exact in double, so the only roundings are the running additions, the
    square roots and the division; a running sum along each row
    (``np.add.accumulate``) makes the same additions in the same order.
    :func:`exact_cosines` sums in another order and may differ in the last
    bit, which matters only for a cosine sitting exactly on a threshold (the
    nudge's near-duplicate cut at 0.85 compares with this function).

    Parameters
    ----------
    a, b : array-like
        Matrices of the same shape ``(n, dim)`` (float32 values, as production stores them).

    {rowwise_returns}

    See Also
    --------
    exact_cosines

    Examples
    --------
    >>> float(loop_cosines(np.array([[3.0, 4.0]]), np.array([[4.0, 3.0]]))[0])
    0.96
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape[1] == 0:
        return np.zeros(len(a), dtype=np.float64)
    dots = np.add.accumulate(a * b, axis=1)[:, -1]
    norms = np.sqrt(np.add.accumulate(a * a, axis=1)[:, -1]) * np.sqrt(np.add.accumulate(b * b, axis=1)[:, -1])
    out = np.zeros(len(a), dtype=np.float64)
    np.divide(dots, norms, out=out, where=norms != 0)
    return out


class VectorRows:
    """Row vectors in insertion order, one unit-normalised float32 matrix per dimension.

    Created empty; rows come from :meth:`append` and :meth:`extend`.

    Attributes
    ----------
    models : numpy.ndarray
        Every row's model tag (object array, None where untagged).

    Examples
    --------
    >>> rows = VectorRows()
    >>> rows.extend([[3.0, 4.0], None, [1.0, 0.0, 0.0], [0.0, 2.0]], ["a", None, "b", "a"])
    >>> rows.usable(2).tolist(), rows.usable(3).tolist()
    ([True, False, False, True], [False, False, True, False])
    >>> rows.delete([0])
    >>> rows.usable(2).tolist(), rows.vector(2).tolist()
    ([False, False, True], [0.0, 2.0])
    """

    def __init__(self):
        self._vecs: list = []                              # original float32 vectors (or None)
        self._models: list = []
        self._model_arr = None
        self._dims = np.zeros(0, dtype=np.int64)           # per row: its dimension (0 = none)
        self._blocks: dict[int, np.ndarray] = {}           # dim → unit rows (zero elsewhere)
        self._n = 0

    def __len__(self):
        return self._n

    def _reserve(self, need: int):
        cap = self._dims.shape[0]
        if need <= cap:
            return
        new = max(need, 2 * cap, 64)
        dims = np.zeros(new, dtype=np.int64)
        dims[:cap] = self._dims
        self._dims = dims
        for dim, mat in self._blocks.items():
            grown = np.zeros((new, dim), dtype=np.float32)
            grown[:cap] = mat
            self._blocks[dim] = grown

    def _block(self, dim: int) -> np.ndarray:
        if dim not in self._blocks:
            self._blocks[dim] = np.zeros((self._dims.shape[0], dim), dtype=np.float32)
        return self._blocks[dim]

    def append(self, vec, model=None):
        """Append one row (``vec`` may be None); the same arithmetic as :meth:`extend`
        without its bulk bookkeeping (engine writes add one row at a time).

        Parameters
        ----------
        vec : array-like or None
            The row's vector; None makes a row no scan can use.
        model : str, optional
            The row's model tag.

        See Also
        --------
        extend
        """
        v = None if vec is None else np.asarray(vec, dtype=np.float32)
        if v is not None and v.ndim != 1:
            self.extend([vec], [model])
            return
        pos = self._n
        self._vecs.append(v)
        self._models.append(model)
        self._n += 1
        self._model_arr = None
        self._reserve(self._n)
        if v is not None and len(v):
            block = v.astype(np.float64)[None, :]
            _to_unit(block)
            self._block(len(v))[pos] = block[0]
            self._dims[pos] = len(v)

    def extend(self, vecs, models):
        """Append rows (a ``None`` vector is a row no scan can use).

        Cells that are already 1-d float32 arrays are kept as they are (no
        per-row conversion); anything else goes through ``np.asarray``. Each
        dimension's rows are normalised in float64 a chunk at a time through
        one reused buffer, so a large load allocates little besides the
        matrices themselves.

        Parameters
        ----------
        vecs : iterable of array-like or None
            The rows' vectors.
        models : iterable of str or None
            One model tag per row.

        See Also
        --------
        append
        """
        vecs = list(vecs)
        if not vecs:
            return
        dims = _dims(vecs)
        for j in np.flatnonzero(dims < 0).tolist():     # cells that are not float32 arrays yet
            vecs[j] = np.asarray(vecs[j], dtype=np.float32)
            dims[j] = len(vecs[j])
        models = list(models)
        start = self._n
        self._vecs.extend(vecs)
        self._models.extend(models)
        self._n += len(vecs)
        self._model_arr = None
        self._reserve(self._n)
        for dim, rows in _rows_by_dim(dims):
            self._normalise_into(self._block(dim), start, vecs, rows, dim)

    def _normalise_into(self, mat: np.ndarray, start: int, vecs: list, rows, dim: int):
        """Write the unit rows of ``vecs[rows]`` (a slice or sorted positions) into
        ``mat`` at ``start + position``, and record their dimension."""
        if isinstance(rows, slice):
            lo_all, hi_all = rows.start, rows.stop
            n = hi_all - lo_all
        else:
            n = len(rows)
        buf = np.empty((min(n, _CHUNK), dim), dtype=np.float64)
        for lo in range(0, n, _CHUNK):
            hi = min(lo + _CHUNK, n)
            if isinstance(rows, slice):
                part = vecs[lo_all + lo: lo_all + hi]
                idx = slice(start + lo_all + lo, start + lo_all + hi)
            else:
                js = rows[lo:hi]
                part = [vecs[j] for j in js.tolist()]
                idx = start + js
            block = buf[: hi - lo]
            # float32 → float64 is exact, so this equals stacking and casting
            np.concatenate(part, out=block.reshape(-1))
            _to_unit(block)
            mat[idx] = block
            self._dims[idx] = dim

    def delete(self, positions):
        """Remove rows (later rows shift up); the matrices are compacted in place, not rebuilt.

        Parameters
        ----------
        positions : iterable of int
            The rows to remove (repeats are ignored).
        """
        drop = np.unique(np.asarray([int(p) for p in positions], dtype=np.int64))
        if drop.size == 0:
            return
        keep = np.ones(self._n, dtype=bool)
        keep[drop] = False
        n_new = int(keep.sum())
        self._vecs = [v for v, k in zip(self._vecs, keep) if k]
        self._models = [m for m, k in zip(self._models, keep) if k]
        self._model_arr = None
        self._dims[:n_new] = self._dims[: self._n][keep]
        self._dims[n_new: self._n] = 0
        for mat in self._blocks.values():
            mat[:n_new] = mat[: self._n][keep]
            mat[n_new: self._n] = 0
        self._n = n_new

    @property
    def models(self) -> np.ndarray:
        """Every row's model tag, as an object array (None where untagged)."""
        if self._model_arr is None:
            arr = np.empty(len(self._models), dtype=object)
            arr[:] = self._models
            self._model_arr = arr
        return self._model_arr

    def vector(self, i):
        """Row ``i``'s vector as stored.

        Parameters
        ----------
        i : int
            The row's position.

        Returns
        -------
        numpy.ndarray or None
            The float32 vector (not normalised), or None.
        """
        return self._vecs[i]

    def cells(self) -> np.ndarray:
        """Every row's vector as stored (None for a row without one), as an object array.

        Returns
        -------
        numpy.ndarray
            Object array of float32 vectors and None, one per row.
        """
        return np.fromiter(self._vecs, dtype=object, count=self._n)

    def usable(self, dim: int, rows=None, model=None) -> np.ndarray:
        """Boolean mask of rows with a vector of ``dim`` (and the same model when named).

        Parameters
        ----------
        dim : int
            The vector length.
        rows : numpy.ndarray of bool, optional
            A mask the result is restricted to.
        model : str, optional
            Keep only rows of this model tag (and untagged rows).

        Returns
        -------
        numpy.ndarray
            One bool per row.
        """
        ok = self._dims[: self._n] == int(dim)
        if rows is not None:
            ok &= rows
        if model is not None:
            m = self.models
            ok &= (m == model) | (m == None)  # noqa: E711 - elementwise on an object array
        return ok

    @fill_doc(query_params=_QUERY_PARAMS)
    def candidates(self, q, rows=None, model=None, *, floor=None, top=None):
        """Rows that may have cosine ≥ ``floor`` and rank among the ``top`` largest.

        Returns ``(positions, approx)`` in ascending position order; ``approx``
        are float32 cosines. Every row whose exact cosine could pass ``floor``
        or belong to the top ``top`` (after 3-decimal rounding) is included.

        Parameters
        ----------
        {query_params}

        Returns
        -------
        positions : numpy.ndarray
            Row positions, ascending.
        approx : numpy.ndarray
            Their float32 cosines.

        See Also
        --------
        exact : Recompute candidates exactly.
        cosines : Both steps.
        """
        q = np.asarray(q, dtype=np.float64)
        ok = self.usable(len(q), rows, model)
        return self._select(q, ok, int(np.count_nonzero(ok)), floor, top)

    @fill_doc(floor_top=_FLOOR_TOP, exact_returns=_EXACT_RETURNS)
    def scan(self, q, mask, n_usable: int, *, floor=None, top=None):
        """:meth:`cosines` over a mask already checked: ``(positions, exact cosines)``.

        ``mask`` must be a subset of ``usable(len(q))`` (as
        :meth:`~thatchlab.scoring.EngineState.usable` gives) holding
        ``n_usable`` rows; when it holds every row, the float32 product is
        filtered by the floor alone (no mask pass). The candidates and their
        exact float64 cosines are those :meth:`cosines` finds.

        Parameters
        ----------
        q : array-like
            The query vector.
        mask : numpy.ndarray of bool
            The rows to consider, a subset of ``usable(len(q))``.
        n_usable : int
            The number of True cells in ``mask``.
        {floor_top}

        {exact_returns}
        """
        q = np.asarray(q, dtype=np.float64)
        pos, _ = self._select(q, mask, n_usable, floor, top)
        return pos, self.exact(q, pos)

    def _select(self, q: np.ndarray, ok: np.ndarray, n_ok: int, floor, top):
        """:meth:`candidates` of the ``n_ok`` rows of mask ``ok`` (a subset of ``usable(len(q))``)."""
        if n_ok == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        qn = np.sqrt(q @ q)
        qu = (q / qn if qn > 0 else q).astype(np.float32)
        mat = self._blocks[len(q)][: self._n]
        if n_ok > self._n // 4:
            # one product over the whole matrix; the floor and the mask are applied
            # together, so only the survivors are gathered
            full = mat @ qu
            if floor is None:
                keep = ok
            elif n_ok == self._n:   # every row usable: the floor is the only filter
                keep = full >= floor - MARGIN
            else:
                keep = ok & (full >= floor - MARGIN)
            pos = np.flatnonzero(keep)
            approx = full[pos]
        else:
            pos = np.flatnonzero(ok)
            approx = mat[pos] @ qu
            if floor is not None:
                keep = approx >= floor - MARGIN
                pos, approx = pos[keep], approx[keep]
        if top is not None and approx.size > top:
            kth = np.partition(approx, approx.size - top)[approx.size - top]
            keep = approx >= kth - MARGIN
            pos, approx = pos[keep], approx[keep]
        return pos, approx

    def exact(self, q, positions) -> np.ndarray:
        """Cosines in float64, dot / (‖a‖ ‖b‖), 0 when a norm is 0 (production's formula).

        Parameters
        ----------
        q : array-like
            The query vector.
        positions : array-like of int
            The rows to compare with.

        Returns
        -------
        numpy.ndarray
            One float64 cosine per position.
        """
        if len(positions) == 0:
            return np.zeros(0, dtype=np.float64)
        vecs = self._vecs
        block = np.array([vecs[p] for p in np.asarray(positions, dtype=np.int64).tolist()], dtype=np.float64)
        query = np.empty_like(block)
        query[...] = np.asarray(q, dtype=np.float64)   # one float64 copy of q per row
        return exact_cosines(block, query)

    @fill_doc(query_params=_QUERY_PARAMS, exact_returns=_EXACT_RETURNS)
    def cosines(self, q, rows=None, model=None, *, floor=None, top=None):
        """``(positions, exact cosines)`` of the candidate rows.

        Parameters
        ----------
        {query_params}

        {exact_returns}

        See Also
        --------
        candidates, exact
        """
        pos, _ = self.candidates(q, rows, model, floor=floor, top=top)
        return pos, self.exact(q, pos)


def _to_unit(block: np.ndarray) -> None:
    """Normalise the float64 rows of ``block`` in place: a zero row stays +0.0, a row
    whose norm is NaN is left as it is."""
    norms = np.sqrt(np.einsum("ij,ij->i", block, block))
    if (norms > 0).all():
        np.divide(block, norms[:, None], out=block)
    else:
        np.divide(block, norms[:, None], out=block, where=norms[:, None] > 0)
        block[norms == 0] = 0.0


def _dims(vecs: list) -> np.ndarray:
    """Per cell: the length of a 1-d float32 array, 0 for None, -1 for anything else
    (a cell still to convert)."""
    f32, nd = _FLOAT32, np.ndarray
    return np.fromiter((len(v) if type(v) is nd and v.dtype is f32 and v.ndim == 1 else 0 if v is None else -1
                        for v in vecs), dtype=np.int64, count=len(vecs))


def _rows_by_dim(dims: np.ndarray):
    """``(dim, rows)`` for each dimension in ``dims`` (rows of dimension 0 skipped):
    ``rows`` is a slice when that dimension's rows are consecutive, else their
    sorted positions."""
    n = len(dims)
    first = int(dims[0])
    if first and (dims == first).all():
        yield first, slice(0, n)
        return
    for dim in dict.fromkeys(dims.tolist()):
        if dim:
            rows = np.flatnonzero(dims == dim)
            if rows[-1] - rows[0] == len(rows) - 1:
                yield dim, slice(int(rows[0]), int(rows[-1]) + 1)
            else:
                yield dim, rows
