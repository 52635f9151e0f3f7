"""The hook through which a caller can answer the engine's dedup searches faster.

Every write searches the nearest matcher and item by raw cosine (and
feedback and deletes the nearest item). The engine finds the usable rows,
asks for an approximate cosine of each, keeps the rows within
:data:`~thatchlab.core.vectors.MARGIN` of the best and recomputes those in
float64, so the decision is always the engine's own. By default the
approximations come from a float32 scan of the state's vectors; an object
implementing :class:`DedupLookup`, set as ``engine.dedup_lookup``, may supply
them instead (the vectorised replay looks them up in cosines computed once
for all of a log's texts).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["DedupLookup"]


@runtime_checkable
class DedupLookup(Protocol):
    """Supplies approximate cosines for the engine's dedup searches.

    Parameters
    ----------
    *args, **kwargs
        Not used: a protocol is not instantiated; any object with an
        :meth:`approx_cosines` method is one.

    Examples
    --------
    A lookup that always lets the engine scan:

    >>> import numpy as np
    >>> from thatchlab.embed import LookupEmbedder
    >>> from thatchlab.scoring import DedupLookup, PredictionEngine
    >>> class Scan:
    ...     def approx_cosines(self, table, text, vector, positions):
    ...         return None
    >>> eng = PredictionEngine(LookupEmbedder({"m": [1, 0], "s": [0, 1]}))
    >>> eng.dedup_lookup = Scan()
    >>> isinstance(eng.dedup_lookup, DedupLookup)
    True
    >>> eng.update("m", "s", "create", now="2026-01-01T00:00:00Z").action
    'created'
    """

    def approx_cosines(self, table: str, text: str, vector: np.ndarray,
                       positions: np.ndarray) -> np.ndarray | None:
        """Cosines between ``text`` (embedded as ``vector``) and rows of ``table``.

        Parameters
        ----------
        table : {"matchers", "items"}
            The table searched.
        text : str
            The matcher or statement text being searched.
        vector : ndarray
            Its passage vector (float32).
        positions : ndarray of int
            Ascending positions of the usable rows of ``table`` in the
            engine's state (never empty).

        Returns
        -------
        ndarray or None
            One cosine per position, within float32 error of the exact value
            (the engine keeps every row within ``MARGIN`` of the largest), or
            None to let the engine scan its own vectors.
        """
