"""Frames whose columns each arrive in a different backing give the object form's answers.

A frame assembled from several sources mixes backings column by column: pandas 3's ``str`` next to a
categorical, Arrow timestamps in another zone next to ISO text, nullable and Arrow numbers, Arrow
text in the ``large_string``, ``string_view`` or dictionary layout, lists in Arrow's list layouts,
Arrow columns in several chunks. For each sample and entry point, seeded draws pick one backing per
column; the answer must equal the object form's exactly. (This is
how ``string_view`` text was found to be refused by the log validators, and to raise raw Arrow
errors in the replays, the shadow sampler and the miners: it is now read as ``large_string`` at the
boundary, :func:`thatchlab.core.frames.plain_columns`.)
"""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from tests.test_input_dtypes import _same_frame, _same_metrics, _str_dtype
from thatchlab import anticipation, calibration, datasets, logs, replay
from thatchlab.embed import LookupEmbedder
from thatchlab.fit import DeriveWeightsFitter, HalfLifeFitter

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")   # the samples' own notes


def _arrow(values: list, arrow_type) -> pd.Series:
    return pd.Series(pd.arrays.ArrowExtensionArray(pa.array(values, type=arrow_type)))


def _text_forms(s: pd.Series) -> dict:
    vals = s.astype(object).where(s.notna(), None)
    cells = vals.tolist()
    return {"object": lambda: vals, "str": lambda: vals.astype(_str_dtype()),
            "string": lambda: vals.astype("string"), "string[pyarrow]": lambda: vals.astype("string[pyarrow]"),
            "large_string": lambda: _arrow(cells, pa.large_string()),
            "string_view": lambda: _arrow(cells, pa.string_view()),
            "category": lambda: vals.astype("category"),
            "dictionary": lambda: pd.Series(pd.arrays.ArrowExtensionArray(pa.array(cells).dictionary_encode())),
            "view dictionary": lambda: pd.Series(pd.arrays.ArrowExtensionArray(
                pa.array(cells, type=pa.string_view()).dictionary_encode()))}


def _time_forms(s: pd.Series) -> dict:
    return {"ns": lambda: s.dt.as_unit("ns"), "us": lambda: s.dt.as_unit("us"),
            "Paris": lambda: s.dt.tz_convert("Europe/Paris"),
            "Arrow us": lambda: s.astype(pd.ArrowDtype(pa.timestamp("us", tz="UTC"))),
            "Arrow ns New York": lambda: s.dt.tz_convert("America/New_York").astype(
                pd.ArrowDtype(pa.timestamp("ns", tz="America/New_York"))),
            "ISO text": lambda: pd.Series([None if v is pd.NaT else v.isoformat() for v in s], dtype=object)}


def _number_forms(s: pd.Series) -> dict:
    forms = {"as is": lambda: s}
    if pd.api.types.is_bool_dtype(s.dtype):
        forms.update({"boolean": lambda: s.astype("boolean"), "Arrow bool": lambda: s.astype(pd.ArrowDtype(pa.bool_()))})
    elif pd.api.types.is_float_dtype(s.dtype):
        forms.update({"Float64": lambda: s.astype("Float64"), "Arrow double": lambda: s.astype(pd.ArrowDtype(pa.float64()))})
        whole = s.dropna()
        if whole.eq(whole.round()).all():
            forms.update({"Int64": lambda: s.astype("Int64"), "Arrow int64": lambda: s.astype(pd.ArrowDtype(pa.int64()))})
    elif pd.api.types.is_integer_dtype(s.dtype):
        forms.update({"Int64": lambda: s.astype("Int64"), "Arrow int32": lambda: s.astype(pd.ArrowDtype(pa.int32())),
                      "float64": lambda: s.astype(np.float64)})
    return forms


def _list_forms(s: pd.Series) -> dict:
    cells = [None if v is None or isinstance(v, float) else list(v) for v in s]
    forms = {"objects": lambda: s}
    for t in (pa.list_(pa.string()), pa.large_list(pa.large_string()), pa.list_(pa.string_view()),
              pa.list_view(pa.string()), pa.list_view(pa.string_view())):
        forms[str(t)] = lambda t=t: _arrow(cells, t)
    return forms


def _is_list(s: pd.Series) -> bool:
    return s.dtype == object and any(isinstance(v, (list, tuple, np.ndarray)) for v in s)


def _is_text(s: pd.Series) -> bool:
    if isinstance(s.dtype, pd.StringDtype) or s.dtype == object:
        values = s.dropna()
        return len(values) > 0 and all(isinstance(v, str) for v in values)
    return False


def _mixed(df: pd.DataFrame, rnd: random.Random) -> tuple[pd.DataFrame, dict]:
    """``df`` with one backing drawn per column, and the draws."""
    cols, picks = {}, {}
    for col in df.columns:
        s = df[col].reset_index(drop=True)
        forms = (_time_forms(s) if isinstance(s.dtype, pd.DatetimeTZDtype) else _text_forms(s) if _is_text(s)
                 else _list_forms(s) if _is_list(s) else _number_forms(s))
        picks[col] = rnd.choice(sorted(forms))
        cols[col] = forms[picks[col]]().reset_index(drop=True)
    return pd.DataFrame(cols), picks


@pytest.fixture(scope="module")
def world():
    s = {"interactions": datasets.load_interactions().head(400), "memory": datasets.load_memory_log().head(2000),
         "recall": datasets.load_recall_log().head(1500), "events": datasets.load_events().head(600),
         "recalls": datasets.load_recalls().head(600)}
    texts = set()
    for col in ("text", "matcher", "statement"):
        texts.update(v for v in s["interactions"][col].dropna())
    rng = np.random.default_rng(0)
    s["embedder"] = LookupEmbedder({t: rng.normal(size=8) for t in sorted(texts)})
    s["obs"] = replay.run_calibration(logs.validate_recall_log(s["recall"])).observations
    s["now"] = s["obs"]["observed_at"].max()
    s["stream_end"] = logs.validate_event_log(s["events"])["ts"].max() + pd.Timedelta(seconds=1)
    return s


ENTRIES = {
    "prediction replay": ("interactions", lambda d, w: (lambda r: (r.metrics, r.events, r.nudges))(
        replay.run(logs.validate_interaction_log(d), "prediction", embedder=w["embedder"]))),
    "belief replay": ("memory", lambda d, w: (lambda r: (r.metrics, r.events))(replay.run_belief(logs.validate_memory_log(d)))),
    "half-life fit": ("memory", lambda d, w: HalfLifeFitter().fit_from_log(logs.validate_memory_log(d)).summary_),
    "calibration replay": ("recall", lambda d, w: (lambda r: (r.metrics, r.observations))(
        replay.run_calibration(logs.validate_recall_log(d)))),
    "derive fit": ("recall", lambda d, w: DeriveWeightsFitter().fit(d).summary_),
    "shadow sample": ("recall", lambda d, w: calibration.shadow_sample(d, 0.5, 1)),
    "calibration report": ("obs", lambda d, w: calibration.calibrate_from_shadow(d, w["now"], days=30).to_frame(wide=True)),
    "observation gc": ("obs", lambda d, w: calibration.gc_observations(d, w["now"], 20)[1]),
    "sequential miner": ("events", lambda d, w: anticipation.mine_sequential(d)),
    "periodic miner": ("recalls", lambda d, w: anticipation.mine_periodic(d)),
    "co-occurrence miner": ("recalls", lambda d, w: anticipation.mine_cooccurrence(d)),
    "every miner (events)": ("events", lambda d, w: anticipation.mine(d, w["recalls"], w["stream_end"])),
    "every miner (recalls)": ("recalls", lambda d, w: anticipation.mine(w["events"], d, w["stream_end"])),
}


def _same(a, b, what):
    if isinstance(a, pd.DataFrame):
        _same_frame(a.reset_index(drop=True), b.reset_index(drop=True), what)
    elif isinstance(a, dict):
        _same_metrics(a, b, what)
    elif isinstance(a, tuple):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{what}[{i}]")
    else:
        assert a == b, what


@pytest.mark.parametrize("entry", list(ENTRIES))
def test_mixed_backings_give_the_object_forms_answer(entry, world):
    key, fn = ENTRIES[entry]
    frame = world[key].reset_index(drop=True)
    want = fn(frame.copy(), world)
    for seed in range(3):
        rnd = random.Random(f"{entry}/{seed}")
        mixed, picks = _mixed(frame, rnd)
        if seed == 2:             # as concatenated reads give it: each Arrow column in several chunks
            cuts = [0, *sorted(rnd.sample(range(1, len(mixed)), 3)), len(mixed)]
            mixed = pd.concat([mixed.iloc[a:b] for a, b in zip(cuts, cuts[1:])], ignore_index=True)
        _same(want, fn(mixed, world), f"{entry}, seed {seed}: {picks}")


def test_every_text_backing_is_drawn():
    """The draws reach every layout of text, the view layouts included."""
    s = pd.Series(["a", None, "b"], dtype=object)
    got = {name: str(make().dtype) for name, make in _text_forms(s).items()}
    assert got["string_view"] == "string_view[pyarrow]"
    assert got["view dictionary"].startswith("dictionary<values=string_view")
    lists = pd.Series([["a"], None, []], dtype=object)
    assert _is_list(lists) and not _is_list(s)
    assert "list_view<item: string_view>[pyarrow]" in {str(make().dtype) for make in _list_forms(lists).values()}


@pytest.mark.parametrize("layout", [pa.list_(pa.string_view()), pa.large_list(pa.string_view()),
                                    pa.list_view(pa.string()), pa.list_view(pa.string_view())])
def test_entity_lists_in_every_arrow_layout_are_read_alike(layout, world):
    """Before: entity lists of view text failed validation ("got []"); a list view of views is cast
    by pyarrow 26 to an invalid array when it holds a null, so it is read as objects instead."""
    events = world["events"].reset_index(drop=True)
    cells = [None if v is None or isinstance(v, float) else list(v) for v in events["entities"]]
    arrow = events.assign(entities=_arrow(cells, layout))
    for validate in (logs.validate_event_log, lambda d: d):
        want = anticipation.mine(validate(events), world["recalls"], world["stream_end"])
        got = anticipation.mine(validate(arrow), world["recalls"], world["stream_end"])
        _same(want, got, str(layout))
