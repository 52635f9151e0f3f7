"""The :class:`Embedder` protocol and :class:`LookupEmbedder`, vectors read from a table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import pandas as pd

from thatchlab.core.docstrings import fill_doc
from thatchlab.core.errors import EmbeddingError, EmbeddingLookupError, InputError
from thatchlab.embed._vectors import (
    EMBED_PASSAGES_DOC,
    EMBED_QUERIES_DOC,
    as_texts,
    from_blob,
    normalise_rows,
)

__all__ = ["Embedder", "LookupEmbedder"]


@runtime_checkable
class Embedder(Protocol):
    """What the engines need from an embedding model.

    Attributes
    ----------
    name : str
        Model name recorded in results and stores.
    dim : int
        Length of every vector.
    query_prefix : str
        Text put before each query (``""`` for none).

    Methods
    -------
    embed_queries(texts) -> ndarray of float32, shape (n, dim)
        Prompts and query contexts, with ``query_prefix``.
    embed_passages(texts) -> ndarray of float32, shape (n, dim)
        Stored texts (matchers, predictions, behaviors), raw.

    Rows are L2-normalised, ``v / ||v||``; a zero vector stays zero, so a
    cosine is a dot product.

    Any object with these attributes and methods is an ``Embedder``
    (``isinstance`` checks them); the protocol itself is never instantiated.

    Parameters
    ----------
    *args, **kwargs
        Unused: the protocol is not instantiated.

    See Also
    --------
    LookupEmbedder : Vectors read from a table.
    SentenceTransformerEmbedder : A real model.
    default_embedder : The bundled model.

    Examples
    --------
    >>> isinstance(LookupEmbedder({"tea": [1.0, 0.0]}), Embedder)
    True
    >>> isinstance("tea", Embedder)
    False
    """

    name: str
    dim: int
    query_prefix: str

    @fill_doc(embed_queries=EMBED_QUERIES_DOC)
    def embed_queries(self, texts) -> np.ndarray:
        """Vectors of prompts and query contexts, each prefixed with ``query_prefix``.

        {embed_queries}
        """
        ...

    @fill_doc(embed_passages=EMBED_PASSAGES_DOC)
    def embed_passages(self, texts) -> np.ndarray:
        """Vectors of stored texts (matchers, predictions, behaviors), raw.

        {embed_passages}
        """
        ...


def _one_vector(value, text: str, what: str) -> np.ndarray:
    if isinstance(value, bytes | bytearray | memoryview):
        try:
            return from_blob(value).astype(np.float64)
        except EmbeddingError as exc:
            raise EmbeddingError(f"{what} for text {text!r}: {exc}") from None
    try:
        v = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise EmbeddingError(
            f"{what} for text {text!r}: expected a vector of numbers, got {type(value).__name__}"
        ) from None
    if v.ndim != 1 or v.size == 0:
        raise EmbeddingError(f"{what} for text {text!r}: expected a non-empty 1-D vector, got shape {v.shape}")
    return v


def _pairs(vectors, what: str) -> list[tuple[str, object]]:
    """(text, raw vector) pairs from a dict, DataFrame or Series."""
    if isinstance(vectors, pd.DataFrame):
        missing = [c for c in ("text", "embedding") if c not in vectors.columns]
        if missing:
            raise InputError(f"{what}: expected columns 'text' and 'embedding', missing {missing}")
        pairs = list(zip(vectors["text"].tolist(), vectors["embedding"].tolist(), strict=True))
    elif isinstance(vectors, pd.Series):
        pairs = list(zip(vectors.index.tolist(), vectors.tolist(), strict=True))
    elif isinstance(vectors, Mapping):
        pairs = list(vectors.items())
    else:
        raise InputError(
            f"{what}: expected a dict text -> vector, a DataFrame with 'text' and 'embedding' "
            f"columns or a Series indexed by text, got {type(vectors).__name__}")
    for text, _ in pairs:
        if not isinstance(text, str):
            raise InputError(f"{what}: expected str texts, got {type(text).__name__} {text!r}")
    return pairs


def _table(vectors, what: str, dim: int | None) -> tuple[dict[str, int], np.ndarray]:
    """Validate a text -> vector table into (text -> row, unit float32 matrix)."""
    pairs = _pairs(vectors, what)
    rows = [_one_vector(v, t, what) for t, v in pairs]
    for (text, _), v in zip(pairs, rows, strict=True):
        if dim is None:
            dim = v.shape[0]
        if v.shape[0] != dim:
            raise EmbeddingError(f"{what} for text {text!r}: expected dimension {dim}, got {v.shape[0]}")
    if not rows:
        return {}, np.zeros((0, dim or 0), dtype=np.float32)
    mat = np.vstack(rows)
    bad = ~np.isfinite(mat).all(axis=1)
    if bad.any():
        text = pairs[int(np.argmax(bad))][0]
        raise EmbeddingError(f"{what} for text {text!r}: expected finite values, found NaN or inf")
    mat = normalise_rows(mat)
    index: dict[str, int] = {}
    keep: list[int] = []
    for i, (text, _) in enumerate(pairs):
        j = index.get(text)
        if j is None:
            index[text] = len(keep)
            keep.append(i)
        elif not np.allclose(mat[keep[j]], mat[i], atol=1e-6):
            raise EmbeddingError(f"{what}: text {text!r} appears twice with different vectors")
    return index, mat[keep]


class LookupEmbedder:
    """An embedder that looks vectors up in a table instead of running a model.

    Use it to replay with the exact vectors of a production store (pass the
    production model's name as ``name``) or with synthetic vectors in tests.
    Vectors are validated at construction (same dimension, finite), stored as
    float32 and returned L2-normalised, ``v / ||v||`` (a zero vector stays zero).

    Parameters
    ----------
    vectors : dict, DataFrame or Series
        text -> vector, as a dict, a DataFrame with ``text`` and ``embedding``
        columns (vectors as sequences or little-endian float32 BLOBs), or a
        Series indexed by text. Used for passages, and for queries that are
        not in ``queries``.
    queries : same types, optional
        text -> vector for queries (e.g. prompts embedded with a query prefix).
        A query text is looked up here first, then in ``vectors``.
    name : str
        Model name recorded in results and stores.
    dim : int, optional
        Required dimension; needed only when both tables are empty.

    Raises
    ------
    EmbeddingError
        NaN/inf, mixed dimensions, or one text with two different vectors.
    EmbeddingLookupError
        At embed time, for a text in neither table (``.text`` names it).

    Attributes
    ----------
    name : str
        Model name recorded in results and stores.
    dim : int
        Length of every vector.
    query_prefix : str
        Always ``""``: query vectors are looked up as given.
    texts : list of str
        Texts that have a passage vector, in table order.
    query_texts : list of str
        Texts that have a dedicated query vector, in table order.

    See Also
    --------
    Embedder : The protocol it follows.
    default_embedder : A real model.

    Examples
    --------
    >>> emb = LookupEmbedder({"tea": [3.0, 4.0], "coffee": [0.0, 2.0]})
    >>> emb.embed_passages(["tea", "coffee"]).tolist()
    [[0.6000000238418579, 0.800000011920929], [0.0, 1.0]]
    >>> emb.dim, emb.name
    (2, 'lookup')
    >>> emb.embed_queries("juice")
    Traceback (most recent call last):
    ...
    thatchlab.core.errors.EmbeddingLookupError: no query vector for text 'juice' in LookupEmbedder 'lookup' (1 of 1 texts missing)
    """

    query_prefix = ""

    def __init__(self, vectors, queries=None, name: str = "lookup", *, dim: int | None = None):
        if not isinstance(name, str) or not name:
            raise InputError(f"name: expected a non-empty str, got {name!r}")
        self.name = name
        self._index, self._matrix = _table(vectors, "passage vector", dim)
        d = self._matrix.shape[1] if self._index else dim
        if queries is None:
            self._qindex, self._qmatrix = {}, np.zeros((0, d or 0), dtype=np.float32)
        else:
            self._qindex, self._qmatrix = _table(queries, "query vector", d)
            if d is None and self._qindex:
                d = self._qmatrix.shape[1]
        if not d:
            raise EmbeddingError("LookupEmbedder: no vectors given; pass dim= for an empty table")
        self.dim = int(d)
        if not self._index:
            self._matrix = np.zeros((0, self.dim), dtype=np.float32)
        self._query_all = None

    def __repr__(self) -> str:
        return (f"LookupEmbedder(name={self.name!r}, dim={self.dim}, passages={len(self._index)}, "
                f"queries={len(self._qindex)})")

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, text) -> bool:
        return text in self._index

    @property
    def texts(self) -> list[str]:
        """Texts that have a passage vector, in table order."""
        return list(self._index)

    @property
    def query_texts(self) -> list[str]:
        """Texts that have a dedicated query vector, in table order."""
        return list(self._qindex)

    def _lookup(self, texts, kind: str) -> np.ndarray:
        items = as_texts(texts)
        if kind == "query" and self._qindex:
            if self._query_all is None:
                # query table first, then passage rows offset after it
                off = len(self._qindex)
                index = {t: i + off for t, i in self._index.items()}
                index.update(self._qindex)
                self._query_all = (index, np.vstack([self._qmatrix, self._matrix]))
            index, source = self._query_all
        else:
            index, source = self._index, self._matrix
        rows = [index.get(t, -1) for t in items]
        if -1 in rows:
            missing = [t for t, r in zip(items, rows) if r < 0]
            raise EmbeddingLookupError(
                f"no {kind} vector for text {missing[0]!r} in LookupEmbedder {self.name!r} "
                f"({len(missing)} of {len(items)} texts missing)", text=missing[0])
        return source[rows] if rows else np.zeros((0, self.dim), dtype=np.float32)

    @fill_doc(embed_queries=EMBED_QUERIES_DOC)
    def embed_queries(self, texts: Sequence[str] | str) -> np.ndarray:
        """Query vectors, shape (n, dim): from ``queries`` if present, else ``vectors``.

        {embed_queries}

        Raises
        ------
        EmbeddingLookupError
            A text in neither table.

        See Also
        --------
        embed_passages
        """
        return self._lookup(texts, "query")

    @fill_doc(embed_passages=EMBED_PASSAGES_DOC)
    def embed_passages(self, texts: Sequence[str] | str) -> np.ndarray:
        """Passage vectors, shape (n, dim), from ``vectors``.

        {embed_passages}

        Raises
        ------
        EmbeddingLookupError
            A text not in ``vectors``.

        See Also
        --------
        embed_queries
        """
        return self._lookup(texts, "passage")
