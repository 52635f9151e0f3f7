"""A column with no value in it, as Arrow hands it over (``null[pyarrow]``), is an all-missing column.

``read_parquet(dtype_backend="pyarrow")``, polars (``pl.Null``) and DuckDB give a column that holds no
value Arrow's ``null`` type; pandas' NumPy reader gives the same column as objects, all ``None``. Every
public entry point that takes a frame must give the same answer (or the same error) for both. Before
this was so, the validators refused such a ``belief_class`` or ``signal`` column, an event log's
``entities`` raised a raw ``TypeError``, a caller's calibration report changed with an empty
``lifecycle_state``, and the prefetcher raised raw errors. Also here: whole samples read back from
Parquet with the Arrow backend and through polars give what the object form gives, the fitters
included (``recall_features`` read Arrow timestamps through ``.asi8`` and raised).
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from tests.test_input_dtypes import _same_frame, _same_metrics
from thatchlab import anticipation, calibration, datasets, logs, replay
from thatchlab.belief import BeliefStore
from thatchlab.core.errors import InputError, ThatchlabError
from thatchlab.core.frames import is_arrow_null, need_columns, plain_columns
from thatchlab.fit import DeriveWeightsFitter, PriorFitter

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")   # the samples' own notes


def _nulls(n: int, index) -> pd.Series:
    return pd.Series(pd.arrays.ArrowExtensionArray(pa.nulls(n)), index=index)


def _nones(n: int, index) -> pd.Series:
    return pd.Series([None] * n, dtype=object, index=index)


def test_null_columns_become_object_nones_and_the_input_is_kept():
    df = pd.DataFrame({"a": [1, 2]}, index=[5, 6])
    df["b"] = _nulls(2, df.index)
    df.attrs["source"] = "x.parquet"
    out = plain_columns(df)
    assert out["b"].dtype == object and out["b"].tolist() == [None, None]
    assert out.index.tolist() == [5, 6] and out.attrs == {"source": "x.parquet"}
    assert str(df["b"].dtype) == "null[pyarrow]"                # the input is not modified
    plain = pd.DataFrame({"a": [1]})
    assert plain_columns(plain) is plain                  # nothing to change: the frame itself
    assert is_arrow_null(pd.ArrowDtype(pa.null())) and not is_arrow_null(pd.ArrowDtype(pa.string()))


def test_duplicate_names_keep_their_places():
    df = pd.DataFrame([[1, None]], columns=["x", "x"])
    df.isetitem(1, _nulls(1, df.index))
    out = plain_columns(df)
    assert list(out.columns) == ["x", "x"] and out.iloc[0, 0] == 1 and out.iloc[0, 1] is None


def test_need_columns_names_what_is_missing():
    with pytest.raises(InputError, match=r"events: missing column\(s\) \['ws'\]; expected columns \['ts', 'ws'\]"):
        need_columns(pd.DataFrame({"ts": []}), "events", ["ts", "ws"])
    with pytest.raises(InputError, match="events: expected a pandas DataFrame, got list"):
        need_columns([], "events", ["ts"])


@pytest.fixture(scope="module")
def inputs():
    recall = datasets.load_recall_log().head(400)
    obs = replay.run_calibration(logs.validate_recall_log(recall)).observations
    mem = pd.DataFrame({"id": obs["memory_id"].unique()})
    mem["access_count"] = np.arange(len(mem)) % 7
    mem["namespace"] = obs.groupby("memory_id")["namespace"].first().reindex(mem["id"]).to_numpy()
    mem["metadata"] = [f'{{"agent_id": "a{i % 3}"}}' for i in range(len(mem))]
    mem["lifecycle_state"] = "active"
    ledger = pd.DataFrame({"memory_id": obs["memory_id"].iloc[::3].to_numpy(),
                           "consumed": np.arange(len(obs.iloc[::3])) % 2})
    events, recalls = datasets.load_events().head(300), datasets.load_recalls().head(300)
    ev, rc = logs.validate_event_log(events), logs.validate_recall_stream(recalls)
    now = ev["ts"].max() + pd.Timedelta(seconds=1)
    signals = pd.DataFrame({"item_id": list("aabbc") * 20,
                            "signal": ["confirm", "disconfirm", "confirm", "confirm", "disconfirm"] * 20,
                            "session": "s1"})
    memory = datasets.load_memory_log().head(300)
    return {"interactions": datasets.load_interactions().head(300), "behavior": datasets.load_behavior_interactions().head(300),
            "memory": memory, "recall": recall, "events": events, "recalls": recalls, "obs": obs,
            "mem": mem, "ledger": ledger, "signals": signals, "patterns": anticipation.mine(ev, rc, now),
            "now_obs": obs["observed_at"].max(), "ev": ev, "rc": rc, "now": now,
            "store": replay.run_belief(logs.validate_memory_log(memory)).state.memories}


#: entry point -> (the input whose columns are emptied, what the entry point returns)
ENTRIES = {
    "validate_interaction_log": ("interactions", lambda d, x: logs.validate_interaction_log(d)),
    "validate_interaction_log (behavior)": ("behavior", lambda d, x: logs.validate_interaction_log(d)),
    "validate_memory_log": ("memory", lambda d, x: logs.validate_memory_log(d)),
    "validate_recall_log": ("recall", lambda d, x: logs.validate_recall_log(d)),
    "validate_event_log": ("events", lambda d, x: logs.validate_event_log(d)),
    "validate_recall_stream": ("recalls", lambda d, x: logs.validate_recall_stream(d)),
    "recall_features": ("recall", lambda d, x: calibration.recall_features(d)),
    "shadow_sample": ("recall", lambda d, x: calibration.shadow_sample(d, 0.5, 3)),
    "backfill_recall_outcomes": ("obs", lambda d, x: calibration.backfill_recall_outcomes(d, x["ledger"])),
    "backfill_recall_outcomes (ledger)": ("ledger", lambda d, x: calibration.backfill_recall_outcomes(x["obs"], d)),
    "gc_observations": ("obs", lambda d, x: calibration.gc_observations(d, x["now_obs"], 10)),
    "calibrate_from_shadow": ("obs", lambda d, x: calibration.calibrate_from_shadow(
        d, x["now_obs"], days=30).to_frame(wide=True)),
    "calibrate_from_shadow (caller's memories)": ("mem", lambda d, x: calibration.calibrate_from_shadow(
        x["obs"], x["now_obs"], days=30, audience="a1", memories=d).to_frame(wide=True)),
    "calibrate_from_shadow (ledger)": ("ledger", lambda d, x: calibration.calibrate_from_shadow(
        x["obs"], x["now_obs"], days=30, memories=x["mem"], ledger=d).to_frame(wide=True)),
    "PriorFitter.fit": ("signals", lambda d, x: PriorFitter().fit(d).summary_),
    "mine_sequential": ("ev", lambda d, x: anticipation.mine_sequential(d)),
    "mine_periodic": ("rc", lambda d, x: anticipation.mine_periodic(d)),
    "mine_conditional (events)": ("ev", lambda d, x: anticipation.mine_conditional(d, x["rc"])),
    "mine_cooccurrence": ("rc", lambda d, x: anticipation.mine_cooccurrence(d)),
    "Prefetcher": ("patterns", lambda d, x: anticipation.Prefetcher(d).edges),
    "BeliefStore": ("store", lambda d, x: BeliefStore(d).memories),
}


def _outcome(fn, frame, x):
    try:
        return "ok", fn(frame, x)
    except ThatchlabError as e:
        return "error", f"{type(e).__name__}: {e}"


def _same(a, b, what):
    if isinstance(a, pd.DataFrame):
        _same_frame(a.reset_index(drop=True), b.reset_index(drop=True), what)
    elif isinstance(a, tuple):
        for i, (p, q) in enumerate(zip(a, b, strict=True)):
            _same(p, q, f"{what}[{i}]")
    elif isinstance(a, dict):
        _same_metrics(a, b, what)
    else:
        assert a == b, what


@pytest.mark.parametrize("entry", list(ENTRIES))
def test_an_empty_column_in_arrows_null_type_is_an_object_column_of_nones(entry, inputs):
    key, fn = ENTRIES[entry]
    frame = inputs[key]
    checked = 0
    for col in frame.columns:
        as_objects, as_nulls = frame.copy(), frame.copy()
        as_objects[col] = _nones(len(frame), frame.index)
        as_nulls[col] = _nulls(len(frame), frame.index)
        want, got = _outcome(fn, as_objects, inputs), _outcome(fn, as_nulls, inputs)
        assert want[0] == got[0], (entry, col, want[1] if want[0] == "error" else got[1])
        if want[0] == "error":
            assert want[1] == got[1], (entry, col)
        else:
            _same(want[1], got[1], f"{entry}: {col}")
            checked += 1
    assert checked > 0, entry                # some column can be empty without an error


def _parquet(df: pd.DataFrame, backend: str) -> pd.DataFrame:
    buf = io.BytesIO()
    df.to_parquet(buf)
    buf.seek(0)
    return pd.read_parquet(buf, dtype_backend=backend)


def _polars(df: pd.DataFrame) -> pd.DataFrame:
    pl = pytest.importorskip("polars")
    buf = io.BytesIO()
    df.to_parquet(buf)
    buf.seek(0)
    return pl.read_parquet(buf).to_pandas(use_pyarrow_extension_array=True)


READ_BACK = {"pyarrow": lambda d: _parquet(d, "pyarrow"), "numpy_nullable": lambda d: _parquet(d, "numpy_nullable"),
             "polars": _polars}

FITS = {
    "recall_features": ("recall", lambda d: calibration.recall_features(d)),
    "validate_interaction_log (behavior)": ("behavior", lambda d: logs.validate_interaction_log(d)),
    "run_belief": ("memory", lambda d: (lambda r: (r.metrics, r.events))(replay.run_belief(logs.validate_memory_log(d)))),
}


@pytest.mark.parametrize("form", list(READ_BACK))
@pytest.mark.parametrize("fit", list(FITS))
def test_samples_read_back_by_arrow_readers_give_the_object_forms_answers(fit, form, inputs):
    key, fn = FITS[fit]
    frame = inputs[key]
    _same(fn(frame.copy()), fn(READ_BACK[form](frame)), f"{fit} from {form}")


def test_the_derive_fitter_fits_a_log_read_back_with_the_arrow_backend(inputs):
    """It fits on :func:`recall_features`, which raised on Arrow timestamps (one form suffices here)."""
    recall = inputs["recall"]
    want = DeriveWeightsFitter().fit(recall.copy()).summary_
    _same(want, DeriveWeightsFitter().fit(_parquet(recall, "pyarrow")).summary_, "derive fit")


def test_recall_features_reads_arrow_times_as_pandas_times(inputs):
    recall = inputs["recall"]
    arrow = recall.assign(ts=recall["ts"].astype(pd.ArrowDtype(pa.timestamp("us", tz="UTC"))),
                          created_at=recall["created_at"].astype(pd.ArrowDtype(pa.timestamp("ms", tz="UTC"))))
    want, got = calibration.recall_features(recall), calibration.recall_features(arrow)
    assert str(got["ts"].dtype) == "datetime64[ns, UTC]"
    assert got["age_days"].tolist() == want["age_days"].tolist()
    assert got["ts"].tolist() == want["ts"].tolist()


MINERS = {
    "mine_periodic": lambda ev, rc: anticipation.mine_periodic(rc),
    "co_recall_count": lambda ev, rc: anticipation.co_recall_count(rc),
    "mine_cooccurrence": lambda ev, rc: anticipation.mine_cooccurrence(rc),
    "mine_conditional": lambda ev, rc: anticipation.mine_conditional(ev, rc),
}


@pytest.mark.parametrize("miner", list(MINERS))
@pytest.mark.parametrize("col", ["workspace", "fact_id", "ts"])
def test_a_miner_names_a_missing_key_instead_of_counting_it_with_another_group(miner, col, inputs):
    """Before: ``factorize`` coded a missing workspace or fact -1, which the output read as the
    last value (``mine_periodic`` gave its recalls to another workspace; ``co_recall_count``
    raised a raw IndexError), and a missing time counted as the earliest instant."""
    rc = inputs["rc"].copy()
    rc.loc[7, col] = None if col != "ts" else pd.NaT
    expected = (r"recalls\.ts: null timestamps; expected an aware time on every row" if col == "ts" else
                rf"recalls: row 7, column '{col}': expected a value, got null")
    with pytest.raises(InputError, match=expected):
        MINERS[miner](inputs["ev"], rc)


def test_a_caller_report_refuses_a_memory_without_an_id(inputs):
    mem = inputs["mem"].copy()
    mem.loc[3, "id"] = None
    with pytest.raises(InputError, match=r"memories: row 3, column 'id': expected a memory id, got null"):
        calibration.calibrate_from_shadow(inputs["obs"], inputs["now_obs"], days=30, audience="a1", memories=mem)
