"""The calibration report on Arrow-backed, ``string`` and categorical columns equals the object path
(issue 33 point 2): same rows, same JSON, the same window decisions, no per-row pass."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from thatchlab.calibration import calibrate_from_shadow, gc_observations
from thatchlab.calibration._report import _codes

NOW = "2026-06-01T00:00:00Z"


def _observations(n=400, seed=3):
    rng = np.random.default_rng(seed)
    now = pd.Timestamp(NOW)
    ns = np.array(["alpha", "beta", None, "gamma/é"], dtype=object)[rng.integers(0, 4, n)]
    src = np.array(["user", "api", "tool"], dtype=object)[rng.integers(0, 3, n)]
    out = np.array([None, "consumed", "unconsumed", "recalled"], dtype=object)[rng.integers(0, 4, n)]
    seconds = rng.integers(0, 50 * 86_400, n)
    at = pd.Series(now - pd.to_timedelta(seconds, unit="s")).dt.as_unit("ns").copy()
    at.iloc[5] = pd.NaT
    return pd.DataFrame({"memory_id": [f"m{i % 37}" for i in range(n)], "namespace": ns, "source": src,
                         "observed_at": at,
                         "derived_confidence": np.round(rng.beta(3, 3, n), 3), "recall_outcome": out})


def _backed(obs, backing):
    out = obs.copy()
    text = ["memory_id", "namespace", "source", "recall_outcome"]
    if backing == "category":
        return out.astype({c: "category" for c in text})
    if backing == "fresh-object":         # a new str per cell, as rows fetched one by one from sqlite3
        for c in text:
            out[c] = pd.Series([v.encode().decode() if isinstance(v, str) else v for v in out[c]], dtype=object)
        return out
    if backing == "arrow-dictionary":     # built by Arrow: pandas' astype to it needs pyarrow >= 25
        for c in text:
            coded = pa.array(out[c].to_numpy(dtype=object, na_value=None), type=pa.large_string()).dictionary_encode()
            out[c] = pd.Series(pd.arrays.ArrowExtensionArray(coded), index=out.index)
        return out
    dtype = {"string": "string", "string[pyarrow]": "string[pyarrow]",
             "arrow": pd.ArrowDtype(pa.large_string()), "arrow-view": pd.ArrowDtype(pa.string_view())}[backing]
    out = out.astype({c: dtype for c in text})
    if backing == "arrow":
        out["observed_at"] = out["observed_at"].astype(pd.ArrowDtype(pa.timestamp("us", tz="UTC")))
        out["derived_confidence"] = out["derived_confidence"].astype(pd.ArrowDtype(pa.float64()))
    return out


BACKINGS = ["string", "string[pyarrow]", "arrow", "arrow-view", "arrow-dictionary", "category", "fresh-object"]


@pytest.mark.parametrize("backing", BACKINGS)
@pytest.mark.parametrize("release", ["v0.7.0", "a78a228", "0a5770a"])
def test_report_equals_object_path(backing, release):
    obs = _observations()
    want = calibrate_from_shadow(obs, NOW, days=30, release=release)
    got = calibrate_from_shadow(_backed(obs, backing), NOW, days=30, release=release)
    assert got.total_observations == want.total_observations
    assert got.to_json() == want.to_json()
    assert got.to_ascii() == want.to_ascii()
    pd.testing.assert_frame_equal(got.to_frame(wide=True), want.to_frame(wide=True))


def test_report_literal_values_on_arrow_frame():
    got = calibrate_from_shadow(_backed(_observations(), "arrow"), NOW, days=30)
    assert got.total_observations == 241
    lines = got.to_ascii().splitlines()
    assert lines[3] == "alpha                     api               26    0.52    0.51    0.25  #########."
    assert lines[-1] == "                          user              18    0.50    0.48    0.25  ..#######."
    last = got.to_dict()["rows"][-1]
    assert last["namespace"] is None and last["buckets"] == [0, 0, 3, 2, 5, 5, 1, 1, 1, 0]
    assert last["median"] == 0.4985
    assert last["consume_access_divergence"] == {"consumed_count": 3, "unconsumed_count": 9,
                                                 "mean_access_consumed": 0.0, "mean_access_unconsumed": 0.0}


@pytest.mark.parametrize("backing", [b for b in BACKINGS if b != "fresh-object"])
def test_text_times_compare_as_text_on_every_backing(backing):
    # production compares text: 'Z' > '.' keeps a row 0.89 s before the cutoff (calibrate.rs, see _shadow)
    obs = pd.DataFrame({"namespace": ["a", "a", "a"], "source": ["u", "u", "u"],
                        "observed_at": ["2025-12-11T19:19:39Z", "2025-12-11T19:19:38Z", None],
                        "derived_confidence": [0.5, 0.25, 0.75], "recall_outcome": [None, "consumed", None]})
    dtype = {"string": "string", "string[pyarrow]": "string[pyarrow]", "arrow": pd.ArrowDtype(pa.string()),
             "arrow-view": pd.ArrowDtype(pa.string_view()), "category": "category",
             "arrow-dictionary": pd.ArrowDtype(pa.dictionary(pa.int32(), pa.string()))}[backing]
    typed = obs.astype({"observed_at": dtype, "namespace": dtype, "source": dtype, "recall_outcome": dtype})
    for frame in (obs, typed):
        rep = calibrate_from_shadow(frame, "2025-12-12T19:19:39.890849474Z", days=1)
        assert rep.total_observations == 1
        assert gc_observations(frame, "2025-12-12T19:19:39.890849474Z", 1)[1] == 1


def test_stored_text_column_in_arrow():
    from thatchlab.core.schema import OBSERVED_AT_TEXT

    obs = pd.DataFrame({"namespace": ["a", "a", "a"], "source": ["u", "u", "u"],
                        "observed_at": pd.to_datetime(["2025-12-11T19:19:39Z", "2025-12-11T19:19:39Z",
                                                       "2025-12-11T19:19:41Z"], utc=True),
                        OBSERVED_AT_TEXT: ["2025-12-11T19:19:39Z", None, None],
                        "derived_confidence": [0.5, 0.25, 0.75]})
    want = calibrate_from_shadow(obs, "2025-12-12T19:19:39.890849474Z", days=1)
    typed = obs.astype({OBSERVED_AT_TEXT: "string[pyarrow]"})
    typed["observed_at"] = typed["observed_at"].astype(pd.ArrowDtype(pa.timestamp("ns", tz="UTC")))
    got = calibrate_from_shadow(typed, "2025-12-12T19:19:39.890849474Z", days=1)
    # row 0 by its stored text (inside), row 1 by its instant (0.89 s before: outside), row 2 inside
    assert want.total_observations == got.total_observations == 2
    assert got.to_json() == want.to_json()


def test_fresh_objects_are_hashed_by_value_once():
    # a column with a new object per cell skips grouping by reference, with pd.factorize's answer
    obs = _backed(_observations(n=2_000), "fresh-object")
    col = obs["namespace"]
    assert col.map(id).nunique() > 1_000                   # the objects really are fresh
    rows = np.arange(0, 2_000, 3)
    for sort in (False, True):
        for na in (False, True):
            codes, uniques = _codes(col, rows, sort=sort, na_sentinel=na)
            want_codes, want_uniques = pd.factorize(col.to_numpy(object)[rows], sort=sort, use_na_sentinel=na)
            assert codes.tolist() == want_codes.tolist()
            assert [u if isinstance(u, str) else None for u in uniques] == \
                [u if isinstance(u, str) else None for u in want_uniques]
    assert sorted(u for u in uniques if isinstance(u, str)) == ["alpha", "beta", "gamma/é"]
