"""Arrow-backed, ``string`` and categorical columns read without a per-row pass (issue 33 point 2)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from thatchlab.core.dtypes import (
    all_text,
    bool_values,
    factorize,
    float_values,
    is_arrow_dictionary,
    is_text_dtype,
    native_times,
    present,
    text_equal,
)
from thatchlab.core.time import utc_column

TEXT = ["b", None, "a", "b", "é", None, "a"]
#: every backing a text column reaches thatchlab with
BACKINGS = {
    "object": lambda v: pd.Series(v, dtype=object),
    "string": lambda v: pd.Series(v, dtype="string"),
    "string[pyarrow]": lambda v: pd.Series(v, dtype="string[pyarrow]"),
    "arrow": lambda v: pd.Series(v, dtype=pd.ArrowDtype(pa.string())),
    "arrow-large": lambda v: pd.Series(v, dtype=pd.ArrowDtype(pa.large_string())),
    "category": lambda v: pd.Series(v, dtype="category"),
    "chunked": lambda v: pd.Series(pd.arrays.ArrowExtensionArray(
        pa.chunked_array([pa.array(v[:3], pa.string()), pa.array(v[3:], pa.string())]))),
    # polars' own text: Arrow's take and set lookup have no view kernels, so it is read as large_string
    "arrow-view": lambda v: pd.Series(v, dtype=pd.ArrowDtype(pa.string_view())),
    # Arrow's categorical (polars' Categorical, read_parquet(read_dictionary=...)): coded by its indices
    "arrow-dictionary": lambda v: pd.Series(v, dtype=pd.ArrowDtype(pa.dictionary(pa.int32(), pa.string()))),
}


@pytest.mark.parametrize("backing", list(BACKINGS))
@pytest.mark.parametrize("sort", [False, True])
@pytest.mark.parametrize("na", [False, True])
def test_factorize_equals_object_factorize(backing, sort, na):
    s = BACKINGS[backing](TEXT)
    rows = np.array([0, 1, 2, 4, 6])
    codes, uniques = factorize(s, rows, sort=sort, use_na_sentinel=na)
    want_codes, want_uniques = pd.factorize(np.array(TEXT, dtype=object)[rows], sort=sort, use_na_sentinel=na)
    assert codes.tolist() == want_codes.tolist()
    assert [None if u != u else u for u in uniques.tolist()] == \
        [None if u != u else u for u in want_uniques.tolist()]
    # literal: sorted, missing last as nan
    if sort and not na:
        assert codes.tolist() == [1, 3, 0, 2, 0]
        assert uniques[:3].tolist() == ["a", "b", "é"] and uniques[3] != uniques[3]


@pytest.mark.parametrize("backing", ["string[pyarrow]", "arrow", "chunked", "arrow-view", "arrow-dictionary"])
@pytest.mark.parametrize("case", ["few", "few, none missing", "late value", "many"])
def test_factorize_of_a_few_rows_of_a_long_column(backing, case):
    # at most 60 % of the rows: they are taken before coding; with few distinct values their codes
    # are looked up in the set of the first 4,096 rows, and a value seen only later (or many
    # distinct values) falls back to Arrow's dictionary encoding; every way gives pd.factorize's codes
    rng = np.random.default_rng(7)
    n = 12_000
    pool = np.array(["ns-b", "ns-a", "x", "", "é"], dtype=object)
    values = pool[rng.integers(0, len(pool), n)]
    values[rng.random(n) < 0.1] = None
    if case == "few, none missing":
        values = pool[rng.integers(0, len(pool), n)]
    elif case == "late value":
        values[11_000] = "zz-late"
    elif case == "many":
        values = np.array([f"id{i % 5000}" for i in range(n)], dtype=object)
    cells = values.tolist()
    s = (BACKINGS[backing](cells) if backing != "chunked" else pd.Series(pd.arrays.ArrowExtensionArray(
        pa.chunked_array([pa.array(cells[:5000], pa.string()), pa.array(cells[5000:], pa.string())]))))
    rows = np.sort(rng.choice(n, size=6_000, replace=False))
    if case == "late value":
        rows = np.union1d(rows[:-1], [11_000])
    for sort in (False, True):
        for na in (False, True):
            codes, uniques = factorize(s, rows, sort=sort, use_na_sentinel=na)
            want_codes, want_uniques = pd.factorize(values[rows], sort=sort, use_na_sentinel=na)
            assert codes.tolist() == want_codes.tolist()
            assert [None if u != u else u for u in uniques.tolist()] == \
                [None if u != u else u for u in want_uniques.tolist()]
    if case == "late value":
        assert "zz-late" in uniques.tolist()


def test_factorize_whole_column_first_appearance():
    s = BACKINGS["string[pyarrow]"](TEXT)
    codes, uniques = factorize(s)
    assert codes.tolist() == [0, -1, 1, 0, 2, -1, 1]
    assert uniques.tolist() == ["b", "a", "é"]


def test_text_dtypes_and_cells():
    assert [is_text_dtype(BACKINGS[b](TEXT).dtype) for b in BACKINGS] == [False] + [True] * 8
    assert is_text_dtype(pd.Series([1, 2], dtype="category").dtype) is False
    assert [all_text(BACKINGS[b](["x", "y"])) for b in BACKINGS] == [True] * 9
    assert [all_text(BACKINGS[b](TEXT)) for b in BACKINGS] == [False] * 9
    for b in BACKINGS:
        s = BACKINGS[b](TEXT)
        assert text_equal(s, "b").tolist() == [True, False, False, True, False, False, False], b
        assert present(s).tolist() == [True, False, True, True, True, False, True], b


def test_bool_values_reads_nulls_as_false_at_any_offset():
    arr = pa.array([True, None, False, True, True, None, True, False, True, True])
    assert bool_values(arr).tolist() == [True, False, False, True, True, False, True, False, True, True]
    assert bool_values(arr.slice(3, 5)).tolist() == [True, True, False, True, False]


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
def test_native_times_keeps_unit_zone_and_nulls(unit):
    s = pd.Series([0, None, 1_700_000_000], dtype=pd.ArrowDtype(pa.timestamp("s", tz="Europe/Paris")))
    s = s.astype(pd.ArrowDtype(pa.timestamp(unit, tz="Europe/Paris")))
    out = native_times(s)
    assert str(out.dtype) == f"datetime64[{unit}, Europe/Paris]"
    assert out.isna().tolist() == [False, True, False]
    assert out.iloc[2].isoformat() == "2023-11-14T23:13:20+01:00"
    assert out.equals(s.astype(pd.DatetimeTZDtype(unit, "Europe/Paris")))
    naive = native_times(pd.Series([5, None], dtype=pd.ArrowDtype(pa.timestamp(unit))))
    assert str(naive.dtype) == f"datetime64[{unit}]"


def test_utc_column_takes_arrow_times_and_text():
    want = utc_column(pd.Series(["2026-01-01T00:00:00Z", "2026-01-02T00:00:00.5Z"]), "t")
    arrow_ts = pd.Series(pd.to_datetime(["2026-01-01T00:00:00Z", "2026-01-02T00:00:00.5Z"], format="ISO8601"),
                         dtype=pd.ArrowDtype(pa.timestamp("ms", tz="UTC")))
    for s in (arrow_ts, pd.Series(["2026-01-01T00:00:00Z", "2026-01-02T00:00:00.5Z"], dtype="string[pyarrow]")):
        got = utc_column(s, "t")
        assert str(got.dtype) == "datetime64[ns, UTC]"
        assert got.tolist() == want.tolist()
    from thatchlab.core.errors import TimeError
    with pytest.raises(TimeError, match="naive"):
        utc_column(pd.Series([1], dtype=pd.ArrowDtype(pa.timestamp("us"))), "t")


def test_epoch_ns_reads_aware_nanosecond_columns_only():
    from thatchlab.core.dtypes import epoch_ns

    aware = pd.Series(pd.to_datetime(["2026-01-01T00:00:00.000000001Z", None], utc=True, format="ISO8601"))
    want = [1767225600000000001, np.iinfo(np.int64).min]
    assert epoch_ns(aware).tolist() == want
    paris = aware.dt.tz_convert("Europe/Paris")
    assert epoch_ns(paris).tolist() == want                  # instants, whatever the zone shown
    arrow = aware.astype(pd.ArrowDtype(pa.timestamp("ns", tz="Europe/Paris")))
    assert epoch_ns(arrow).tolist() == want
    assert epoch_ns(aware.dt.floor("us").astype(pd.ArrowDtype(pa.timestamp("us", tz="UTC")))) is None
    assert epoch_ns(pd.Series([1, 2])) is None


def test_float_values_reads_missing_as_nan_from_every_backing():
    want = [1.5, np.nan, -0.0, 2.0, np.nan]
    arr = pa.array([9.0, 1.5, None, -0.0, 2.0, None], type=pa.float64()).slice(1)   # an offset, two chunks
    chunked = pd.Series(pd.arrays.ArrowExtensionArray(pa.chunked_array([arr.slice(0, 2), arr.slice(2)])))
    for s in (chunked, pd.Series(want), pd.Series(want, dtype="Float64"), pd.Series(want, dtype="float32[pyarrow]"),
              pd.Series([1.5, None, -0.0, 2.0, None], dtype="double[pyarrow]")):
        got = float_values(s)
        assert got.dtype == np.float64, s.dtype
        np.testing.assert_array_equal(got, want)
        assert np.signbit(got[2]), s.dtype                  # -0.0 read as it is


@pytest.mark.parametrize("index_type", ["uint8", "uint32", "int8", "int64"])
def test_a_null_in_an_unsigned_dictionary_index_is_missing(index_type):
    """Arrow allows unsigned dictionary indices: a null among them is missing, never code 255."""
    cells = ["x", None, "y", "x", None]
    arr = pa.array(cells).dictionary_encode().cast(pa.dictionary(getattr(pa, index_type)(), pa.string()))
    s = pd.Series(pd.arrays.ArrowExtensionArray(arr))
    for na in (True, False):
        codes, uniques = factorize(s, sort=True, use_na_sentinel=na)
        want_codes, _ = pd.factorize(np.array(cells, dtype=object), sort=True, use_na_sentinel=na)
        assert codes.tolist() == want_codes.tolist(), na
    assert present(s).tolist() == [c is not None for c in cells]
    assert text_equal(s, "x").tolist() == [True, False, False, True, False]


def test_an_arrow_dictionary_is_read_from_its_indices_whatever_its_entries():
    # two chunks with different dictionaries, one repeating a value and one holding a null entry:
    # the codes are pd.factorize's of the cells, the lookups and presence follow the cells
    first = pa.DictionaryArray.from_arrays(pa.array([0, 1, 2, None, 1], pa.int32()), pa.array(["b", "a", "b"]))
    second = pa.DictionaryArray.from_arrays(pa.array([1, 0, 2], pa.int32()), pa.array(["é", None, "a"]))
    s = pd.Series(pd.arrays.ArrowExtensionArray(pa.chunked_array([first, second])))
    cells = ["b", "a", "b", None, "a", None, "é", "a"]
    assert is_text_dtype(s.dtype) and is_arrow_dictionary(s.dtype)
    assert present(s).tolist() == [c is not None for c in cells]
    assert text_equal(s, "b").tolist() == [c == "b" for c in cells]
    rows = np.array([7, 0, 3, 6, 1, 2])
    for sort in (False, True):
        for na in (False, True):
            codes, uniques = factorize(s, rows, sort=sort, use_na_sentinel=na)
            want_codes, want_uniques = pd.factorize(np.array(cells, dtype=object)[rows], sort=sort,
                                                    use_na_sentinel=na)
            assert codes.tolist() == want_codes.tolist(), (sort, na)
            assert [u if isinstance(u, str) else None for u in uniques] == \
                [u if isinstance(u, str) else None for u in want_uniques]
    assert factorize(s, rows, sort=True)[1].tolist() == ["a", "b", "é"]
    # one chunk (no unifying): a repeated value shares its first entry's code, a null entry is missing
    one = pd.Series(pd.arrays.ArrowExtensionArray(pa.chunked_array([pa.DictionaryArray.from_arrays(
        pa.array([2, 0, 3, 1, 0], pa.int32()), pa.array(["b", "a", "b", None]))])))
    assert factorize(one).__repr__() == factorize(pd.Series(["b", "b", None, "a", "b"], dtype=object)).__repr__()
    assert present(one).tolist() == [True, True, False, True, True]
