"""Arrow buffers read as NumPy arrays: validity bitmaps and fixed-width values, no copy where none is needed."""

from __future__ import annotations

import numpy as np

__all__ = ["fixed_values", "validity_bits"]


def fixed_values(arr, missing) -> np.ndarray:
    """A fixed-width Arrow array's values (integers or floats) as NumPy, read from its buffer, with
    ``missing`` at its nulls; a read-only view of the buffer when there is no null."""
    width = np.dtype(arr.type.to_pandas_dtype())
    values = np.frombuffer(arr.buffers()[1], dtype=width, count=len(arr), offset=arr.offset * width.itemsize)
    if arr.null_count:              # one pass that copies and fills (a masked assignment is two)
        if values.dtype.kind == "u" and missing < 0:     # unsigned dictionary indices: -1 needs a sign
            values = values.astype(np.int64)
        values = np.where(validity_bits(arr.buffers()[0], arr.offset, len(arr)), values, missing)
    return values


def validity_bits(buffer, offset: int, n: int) -> np.ndarray:
    """``n`` bits of an Arrow bitmap from bit ``offset`` as a NumPy bool array (no buffer: all True)."""
    if buffer is None:
        return np.ones(n, dtype=bool)
    raw = np.frombuffer(buffer, dtype=np.uint8)
    return np.unpackbits(raw, bitorder="little", count=offset + n)[offset:].view(bool)
