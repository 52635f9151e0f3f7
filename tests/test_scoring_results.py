"""The items frame of a nudge: typed columns, the same on every pandas path (issue 33 point 4)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.scoring import results as R


def test_items_frame_columns_and_dtypes():
    cols = [[0.5, 0.25], [3, 1], ["a", "x"], ["b", None], [0.3, 0.1], ["i", "j"], ["m", "n"], ["s", "t"],
            [0.9, 0.8], [1.0, 1.0], [0.4, 0.2]]
    got = R.items_frame(cols)
    want = pd.DataFrame({c: pd.Series(v, dtype=object if t is object else t)
                         for c, v, t in zip(R.ITEM_COLUMNS, cols, R.ITEM_DTYPES)})
    pd.testing.assert_frame_equal(got, want)
    assert got["statement"].tolist() == ["b", None] and got["evidence_count"].tolist() == [3, 1]
    got.iloc[0, 0] = 9.0                       # a frame of its own: writable, the input untouched
    assert cols[0] == [0.5, 0.25] and got.iloc[0, 0] == 9.0
    if R._from_blocks is not None:              # pandas 3: the block path gives the very same frame
        pd.testing.assert_frame_equal(R._frame_of_blocks(cols), want)


def test_empty_items_frame():
    got = R.items_frame([[] for _ in R.ITEM_COLUMNS])
    assert list(got.columns) == R.ITEM_COLUMNS and len(got) == 0
    assert [str(t) for t in got.dtypes] == ["float64", "int64", "object", "object", "float64", "object", "object",
                                            "object", "float64", "float64", "float64"]
    assert np.isfinite(got["score"].to_numpy()).all()
