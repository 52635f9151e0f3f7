"""The memory and recall validators read typed columns (booleans, nullable and Arrow numbers, text
dtypes, categoricals) without a pass per cell, and give exactly what the same cells give as objects."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from thatchlab.core.errors import LogValidationError
from thatchlab.logs import validate_memory_log, validate_recall_log

TS = pd.date_range("2026-01-01", periods=4, freq="h", tz="UTC")


def _memory() -> pd.DataFrame:
    return pd.DataFrame({
        "ts": TS, "memory_id": ["m1", "m2", "m1", "m3"], "kind": ["write", "write", "restated", "read"],
        "text": ["likes tea", "runs daily", None, None], "belief_class": ["preference", "plan", None, None],
        "user_asserted": [True, False, False, True], "half_life_days": [30.0, np.nan, 7.0, np.nan],
        "confirmed": [None, None, None, None], "still_true": [None, None, None, True],
        "source_authority": [5, 2, None, 1], "evidence_families": [np.nan] * 4, "eligible": [True, None, False, None],
    })


def _recall() -> pd.DataFrame:
    return pd.DataFrame({
        "ts": TS, "recall_id": ["r1", "r1", "r2", "r3"], "memory_id": ["m1", "m2", "m1", "m2"],
        "namespace": ["work", "work", "home", "work"], "source": ["user", "api", "user", "user"],
        "caller_confidence": [0.5, 0.9, 0.1, 1.0], "created_at": TS - pd.Timedelta(days=1),
        "is_atom": [True, False, True, False], "corroboration": [0, 2, 1, 0], "consumed": [True, None, False, None],
    })


def _objects(df: pd.DataFrame) -> pd.DataFrame:
    """Every non-time column as Python objects, None for a missing cell."""
    out = df.copy()
    for c in df.columns:
        if not isinstance(df[c].dtype, pd.DatetimeTZDtype):
            s = df[c].astype(object)
            out[c] = s.where(df[c].notna(), None)
    return out


MEMORY_TYPED = {
    "user_asserted": ["bool", "boolean", "bool[pyarrow]", "category"], "still_true": ["boolean", "bool[pyarrow]"],
    "eligible": ["boolean", "bool[pyarrow]"], "source_authority": ["Int64", "int64[pyarrow]", "float64"],
    "half_life_days": ["double[pyarrow]", "Float64"],
    "belief_class": ["string[pyarrow]", "category", pd.ArrowDtype(pa.dictionary(pa.int32(), pa.string()))],
    "text": ["string[pyarrow]", "category"], "evidence_families": ["float64", pd.ArrowDtype(pa.null())],
}


@pytest.mark.parametrize("column, dtype", [(c, d) for c, ds in MEMORY_TYPED.items() for d in ds])
def test_a_typed_memory_log_column_validates_as_its_objects_do(column, dtype):
    df = _memory()
    typed = df.copy()
    typed[column] = df[column].astype(dtype) if column != "evidence_families" else pd.Series(
        [None] * len(df), dtype=dtype)
    want = validate_memory_log(_objects(df))
    pd.testing.assert_frame_equal(validate_memory_log(typed), want)
    assert want["source_authority"].tolist() == [5, 2, pd.NA, 1]
    assert want["user_asserted"].tolist() == [True, False, False, True]


def test_a_categorical_class_with_one_category_is_valid():
    """It used to fail every row: the null test of a categorical came back categorical."""
    df = _memory().iloc[:2].assign(belief_class=["plan", "plan"])
    typed = df.assign(belief_class=pd.Categorical(["plan", "plan"]))
    pd.testing.assert_frame_equal(validate_memory_log(typed), validate_memory_log(df))


@pytest.mark.parametrize("column, value, expected", [
    ("source_authority", pd.array([5, 6, None, 1], dtype="Int64"), "an integer from 0 to 5"),
    ("source_authority", pd.Series([5.0, 2.5, np.nan, 1.0]), "an integer from 0 to 5"),
    ("source_authority", pd.Series([5.0, np.inf, np.nan, 1.0], dtype="double[pyarrow]"), "an integer from 0 to 5"),
    ("belief_class", pd.Series(["plan", "", None, None], dtype="string[pyarrow]"), "one of"),
    ("memory_id", pd.Series(["m1", "", "m1", "m3"], dtype="category"), "a non-empty text id"),
])
def test_a_bad_typed_memory_cell_is_named(column, value, expected):
    df = _memory().assign(**{column: value})
    with pytest.raises(LogValidationError, match=f"row 1, column '{column}': expected {expected}"):
        validate_memory_log(df)
    with pytest.raises(LogValidationError, match=f"row 1, column '{column}': expected {expected}"):
        validate_memory_log(_objects(df))


RECALL_TYPED = {"is_atom": ["bool", "boolean", "bool[pyarrow]", "category"],
                "consumed": ["boolean", "bool[pyarrow]", "category"],
                "recall_id": ["string[pyarrow]", "category"], "namespace": ["string[pyarrow]", "category"]}


@pytest.mark.parametrize("column, dtype", [(c, d) for c, ds in RECALL_TYPED.items() for d in ds])
def test_a_typed_recall_log_column_validates_as_its_objects_do(column, dtype):
    df = _recall()
    want = validate_recall_log(_objects(df))
    pd.testing.assert_frame_equal(validate_recall_log(df.assign(**{column: df[column].astype(dtype)})), want)
    assert want["consumed"].tolist() == [True, pd.NA, False, pd.NA]


@pytest.mark.parametrize("column, value", [
    ("is_atom", pd.array([True, None, True, False], dtype="boolean")),
    ("is_atom", pd.Series([True, None, True, False], dtype="bool[pyarrow]")),
    ("recall_id", pd.Series(["r1", "", "r2", "r3"], dtype="string[pyarrow]")),
])
def test_a_bad_typed_recall_cell_is_named(column, value):
    with pytest.raises(LogValidationError, match=f"row 1, column '{column}'"):
        validate_recall_log(_recall().assign(**{column: value}))
