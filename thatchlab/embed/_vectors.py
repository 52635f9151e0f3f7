"""Vector plumbing shared by every embedder: validation, L2 normalisation, BLOBs.

Production thatch stores each embedding as a little-endian float32
BLOB and compares vectors by cosine, so thatchlab keeps vectors as float32
rows of unit length. Public names are re-exported by :mod:`thatchlab.embed`.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from thatchlab.core.errors import EmbeddingError, InputError

__all__ = ["as_texts", "normalise_rows", "check_vectors", "as_blob", "from_blob"]

_LE_F32 = np.dtype("<f4")


def as_texts(texts) -> list[str]:
    """Return ``texts`` as a list of str; a single str becomes a one-item list.

    Parameters
    ----------
    texts : str or iterable of str
        The texts.

    Returns
    -------
    list of str
        The texts, in order.

    Raises
    ------
    InputError
        ``texts`` is not iterable, or an item is not a str (the message names the position of
        the first one: None, NaN, a number...).

    Examples
    --------
    >>> as_texts("tea"), as_texts(("tea", "coffee"))
    (['tea'], ['tea', 'coffee'])
    """
    if isinstance(texts, str):
        return [texts]
    if texts is None or not isinstance(texts, Iterable):
        raise InputError(f"texts: expected a str or a sequence of str, got {type(texts).__name__}")
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise InputError(f"texts[{i}]: expected str, got {type(t).__name__} {t!r}")
    return out


def normalise_rows(arr: np.ndarray) -> np.ndarray:
    """L2-normalise each row of a 2-D array as float32; a zero row stays zero.

    ``out[i] = arr[i] / ||arr[i]||_2`` when the norm is positive, else ``arr[i]``.
    The norm is taken in float64 so float32 rounding does not bias it.

    Parameters
    ----------
    arr : array-like
        Rows of numbers (the last axis is the vector).

    Returns
    -------
    numpy.ndarray
        float32 array of ``arr``'s shape.

    See Also
    --------
    check_vectors : Validate vectors first.

    Examples
    --------
    >>> normalise_rows(np.array([[3.0, 4.0], [0.0, 0.0]])).tolist()
    [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]
    """
    a = np.asarray(arr, dtype=np.float64)
    # scale by the largest magnitude first so tiny rows do not underflow when squared
    scale = np.max(np.abs(a), axis=-1, keepdims=True) if a.shape[-1] else np.zeros(a.shape[:-1] + (1,))
    scaled = a / np.where(scale > 0.0, scale, 1.0)
    norms = np.sqrt(np.einsum("...i,...i->...", scaled, scaled))[..., None]
    safe = np.where(norms > 0.0, norms, 1.0)
    return (scaled / safe).astype(np.float32)


def check_vectors(arr, dim: int | None = None, what: str = "embedding") -> np.ndarray:
    """Validate vectors and return them as a float32 array (same shape).

    Accepts one vector (shape ``(d,)``) or a matrix of row vectors (shape
    ``(n, d)``). Values must be finite real numbers and, when ``dim`` is given,
    ``d == dim``. The result is a new float32 array; the input is not modified.

    Parameters
    ----------
    arr : array-like
        Vector or matrix of vectors.
    dim : int, optional
        Required dimension of each vector.
    what : str
        Name used in error messages (e.g. ``"matcher embedding"``).

    Returns
    -------
    numpy.ndarray
        float32, the input's shape.

    Raises
    ------
    EmbeddingError
        Non-numeric, ragged, NaN/inf values, not 1-D/2-D, or the wrong dimension.

    See Also
    --------
    normalise_rows

    Examples
    --------
    >>> check_vectors([[1, 0], [0, 2]], dim=2).dtype
    dtype('float32')
    >>> check_vectors([1.0, float("nan")])
    Traceback (most recent call last):
    ...
    thatchlab.core.errors.EmbeddingError: embedding: expected finite values, found NaN or inf at position 1
    """
    try:
        a = np.array(arr, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise EmbeddingError(f"{what}: expected an array of numbers of one dimension, got {exc}") from None
    if a.ndim not in (1, 2):
        raise EmbeddingError(f"{what}: expected a vector or a 2-D array of vectors, got shape {a.shape}")
    d = a.shape[-1]
    if dim is not None and d != dim:
        raise EmbeddingError(f"{what}: expected dimension {dim}, got {d} (shape {a.shape})")
    if d == 0:
        raise EmbeddingError(f"{what}: expected a non-empty vector, got shape {a.shape}")
    bad = ~np.isfinite(a)
    if bad.any():
        pos = np.argwhere(bad)[0]
        where = f"row {pos[0]}, position {pos[1]}" if a.ndim == 2 else f"position {pos[0]}"
        raise EmbeddingError(f"{what}: expected finite values, found NaN or inf at {where}")
    if np.abs(a).max(initial=0.0) > np.finfo(np.float32).max:
        raise EmbeddingError(f"{what}: expected values within float32 range")
    return a.astype(np.float32)


def as_blob(vec) -> bytes:
    """Encode one vector as production stores it: little-endian float32 bytes.

    ``len(as_blob(v)) == 4 * len(v)``. The vector is validated first.

    Parameters
    ----------
    vec : array-like
        One vector.

    Returns
    -------
    bytes
        ``4 * len(vec)`` bytes.

    Raises
    ------
    EmbeddingError
        Not one finite vector.

    See Also
    --------
    from_blob : The inverse.

    Examples
    --------
    >>> as_blob([1.0, -2.0]).hex()
    '0000803f000000c0'
    """
    v = check_vectors(vec, what="embedding BLOB")
    if v.ndim != 1:
        raise EmbeddingError(f"embedding BLOB: expected one vector, got shape {v.shape}")
    return v.astype(_LE_F32).tobytes()


def from_blob(blob) -> np.ndarray:
    """Decode a little-endian float32 BLOB into a new native float32 vector.

    Parameters
    ----------
    blob : bytes, bytearray or memoryview
        The BLOB, a multiple of 4 bytes.

    Returns
    -------
    numpy.ndarray
        float32 vector.

    Raises
    ------
    EmbeddingError
        None, not bytes, or a length that is not a multiple of 4.

    See Also
    --------
    as_blob : The inverse.

    Examples
    --------
    >>> from_blob(bytes.fromhex("0000803f000000c0")).tolist()
    [1.0, -2.0]
    """
    if blob is None:
        raise EmbeddingError("embedding BLOB: expected bytes, got NULL/None")
    if not isinstance(blob, bytes | bytearray | memoryview):
        raise EmbeddingError(f"embedding BLOB: expected bytes, got {type(blob).__name__}")
    raw = bytes(blob)
    if len(raw) % 4:
        raise EmbeddingError(
            f"embedding BLOB: expected a multiple of 4 bytes (float32), got {len(raw)} bytes")
    return np.frombuffer(raw, dtype=_LE_F32).astype(np.float32)


def _embed_doc(what: str) -> str:
    """The Parameters and Returns of an embedder's method over ``what`` (queries or passages)."""
    return ("Parameters\n----------\ntexts : str or sequence of str\n"
            f"    The {what}.\n\n"
            "Returns\n-------\nnumpy.ndarray\n    float32, shape (n, dim), unit rows (or zero).\n")


# the sections every embedder's two methods share (filled in by fill_doc)
EMBED_QUERIES_DOC = _embed_doc("queries")
EMBED_PASSAGES_DOC = _embed_doc("passages")
