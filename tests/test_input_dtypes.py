"""Every public input gives the same results whatever dtypes its columns arrive in.

pandas 3 reads text as ``str`` (Arrow-backed, missing as NaN); ``read_parquet(dtype_backend="pyarrow")``,
polars' ``to_pandas`` and DuckDB's ``.df()`` give ``string[pyarrow]`` or ``ArrowDtype`` columns and
Arrow timestamps; a hand-built frame on pandas 2 has object columns; a researcher may make
repeated names categorical. Each bundled sample log is rebuilt in each of those forms and must
give exactly what its object form gives: the replay's metrics and tables, the calibration report,
the mined patterns and the fitted half-lives.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from thatchlab import datasets, logs, replay
from thatchlab.anticipation import mine
from thatchlab.calibration import calibrate_from_shadow
from thatchlab.embed import LookupEmbedder
from thatchlab.fit import HalfLifeFitter


def _str_dtype():
    """pandas 3's default text dtype (on pandas 2.2 its forerunner, ``pyarrow_numpy``)."""
    try:
        return pd.StringDtype("pyarrow", na_value=np.nan)
    except TypeError:  # pandas 2.2
        return pd.StringDtype("pyarrow_numpy")


#: the forms of a text column, and of a time column alongside
FORMS = {
    "object": (object, "ns"),
    "str": (_str_dtype(), "us"),
    "string[pyarrow]": (pd.StringDtype("pyarrow"), "ns"),
    "arrow": (pd.ArrowDtype(pa.string()), "arrow"),
    "category": ("category", "iso"),
    # Arrow's categorical: polars' Categorical through to_pandas(use_pyarrow_extension_array=True),
    # read_parquet(read_dictionary=...)
    "arrow-dictionary": (pd.ArrowDtype(pa.dictionary(pa.int32(), pa.string())), "arrow"),
}


def _is_text(s: pd.Series) -> bool:
    if isinstance(s.dtype, pd.StringDtype) or s.dtype == object and len(s):
        values = s.dropna()
        return len(values) > 0 and all(isinstance(v, str) for v in values)
    return False


def _as(df: pd.DataFrame, form: str) -> pd.DataFrame:
    """``df`` with every text column in ``form``'s dtype and every time column in its unit (or as
    ISO text), nulls as that dtype's missing value; other columns as they are."""
    text_dtype, unit = FORMS[form]
    out = {}
    for col in df.columns:
        s = df[col]
        if isinstance(s.dtype, pd.DatetimeTZDtype):
            if unit == "arrow":
                s = s.astype(pd.ArrowDtype(pa.timestamp("us", tz="UTC")))
            elif unit == "iso":
                s = pd.Series([None if v is pd.NaT else v.isoformat() for v in s], index=s.index, dtype=object)
            else:
                s = s.dt.as_unit(unit)
        elif _is_text(s):
            s = s.astype(object).where(s.notna(), None).astype(text_dtype)
        out[col] = s
    return pd.DataFrame(out, index=df.index)


def _plain(df: pd.DataFrame) -> dict:
    """A frame's cells by column, as Python values with times in ns. A missing value is None, except
    in an object column, where it keeps its kind (None and NaN are different cells there)."""
    out = {}
    for col in df.columns:
        s = df[col]
        if isinstance(s.dtype, pd.DatetimeTZDtype):
            s = s.dt.as_unit("ns")
        kind = (lambda v: f"missing {type(v).__name__}") if s.dtype == object else (lambda v: None)
        out[col] = [kind(v) if _missing(v) else _plain_value(v) for v in s.astype(object).tolist()]
    return out


def _missing(v) -> bool:
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def _plain_value(v):
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (np.generic,)):
        return v.item()
    if isinstance(v, pd.Timestamp):
        return v.as_unit("ns")
    return v


def _same_frame(a: pd.DataFrame, b: pd.DataFrame, what: str):
    assert list(a.columns) == list(b.columns), what
    assert len(a) == len(b), what
    pa_, pb = _plain(a), _plain(b)
    for col in a.columns:
        assert pa_[col] == pb[col], (what, col)


def _same_metrics(a: dict, b: dict, what: str):
    assert a.keys() == b.keys(), what
    for k in a:
        x, y = a[k], b[k]
        if isinstance(x, float) and isinstance(y, float) and np.isnan(x) and np.isnan(y):
            continue
        assert x == y, (what, k, x, y)


@pytest.fixture(scope="module")
def samples():
    return {"interactions": datasets.load_interactions().head(1500), "behavior": datasets.load_behavior_interactions(),
            "memory": datasets.load_memory_log(), "recall": datasets.load_recall_log(),
            "events": datasets.load_events(), "recalls": datasets.load_recalls()}


@pytest.fixture(scope="module")
def embedder(samples):
    """Seeded vectors for every text of both interaction samples (the replay, not the model, is tested)."""
    texts = set()
    for log in (samples["interactions"], samples["behavior"]):
        for col in ("text", "matcher", "statement"):
            texts.update(v for v in log[col].dropna())
    rng = np.random.default_rng(0)
    return LookupEmbedder({t: rng.normal(size=8) for t in sorted(texts)})


def _interaction_results(log, engine, emb):
    res = replay.run(logs.validate_interaction_log(log), engine, embedder=emb)
    return res.metrics, {"events": res.events, "nudges": res.nudges, "items": res.tables["items"]}


def _belief_results(log):
    res = replay.run_belief(logs.validate_memory_log(log))
    fit = HalfLifeFitter().fit_from_log(logs.validate_memory_log(log))
    return res.metrics, {"events": res.events, "bands": res.band_table.reset_index(),
                         "half-lives": fit.summary_.reset_index()}


def _calibration_results(log):
    res = replay.run_calibration(logs.validate_recall_log(log))
    now = res.observations["observed_at"].max()
    report = calibrate_from_shadow(res.observations, now, days=30)
    return res.metrics, {"events": res.events, "observations": res.observations,
                         "report": report.to_frame(wide=True)}


def _anticipation_results(events, recalls):
    ev, rc = logs.validate_event_log(events), logs.validate_recall_stream(recalls)
    res = replay.run_anticipation(ev, rc)
    now = ev["ts"].max() + pd.Timedelta(seconds=1)
    return res.metrics, {"sessions": res.sessions, "patterns": mine(ev, rc, now)}


CASES = {
    "interactions": lambda s, emb, f: _interaction_results(_as(s["interactions"], f), "prediction", emb),
    "behavior": lambda s, emb, f: _interaction_results(_as(s["behavior"], f), "behavior", emb),
    "memory": lambda s, emb, f: _belief_results(_as(s["memory"], f)),
    "recall": lambda s, emb, f: _calibration_results(_as(s["recall"], f)),
    "streams": lambda s, emb, f: _anticipation_results(_as(s["events"], f), _as(s["recalls"], f)),
}


@pytest.mark.filterwarnings("ignore::UserWarning")  # the samples' own notes (cosines, derived authority)
@pytest.mark.parametrize("case", list(CASES))
def test_every_input_form_gives_the_object_forms_results(case, samples, embedder):
    want_metrics, want_tables = CASES[case](samples, embedder, "object")
    assert all(len(t) for t in want_tables.values()), case  # nothing vacuous
    for form in FORMS:
        if form == "object":
            continue
        got_metrics, got_tables = CASES[case](samples, embedder, form)
        _same_metrics(want_metrics, got_metrics, f"{case} as {form}")
        for name, table in want_tables.items():
            _same_frame(table, got_tables[name], f"{case} {name} as {form}")


def test_the_forms_are_what_they_say():
    df = pd.DataFrame({"ts": pd.to_datetime(["2026-01-05T09:00:00Z", None], utc=True),
                       "store": pd.Series(["a", None], dtype=object)})
    assert [str(_as(df, f)["store"].dtype) for f in FORMS] == [
        "object", str(_str_dtype()), "string", "string[pyarrow]", "category",
        "dictionary<values=string, indices=int32, ordered=0>[pyarrow]"]
    assert _as(df, "arrow")["ts"].dtype == pd.ArrowDtype(pa.timestamp("us", tz="UTC"))
    assert str(_as(df, "str")["ts"].dtype) == "datetime64[us, UTC]"
    assert _as(df, "category")["ts"].tolist() == ["2026-01-05T09:00:00+00:00", None]
    assert _as(df, "string[pyarrow]")["store"].isna().tolist() == [False, True]


@pytest.mark.parametrize("form", list(FORMS))
def test_validated_logs_type_their_texts_alike_from_every_form(form, samples):
    """Text columns a validator types come back as object with None for a missing cell (not pandas 3's
    str with NaN), whatever the input's dtype: code and tests may write ``is None``."""
    cases = [(samples["memory"], logs.validate_memory_log, ("text", "belief_class", "tier", "memory_kind",
                                                              "target_memory_id", "subject_scope")),
             (samples["interactions"], logs.validate_interaction_log, ("text", "matcher", "statement",
                                                                        "signal", "rationale"))]
    for df, validate, texts in cases:
        out = validate(_as(df, form))
        for col in texts:
            s = out[col]
            assert s.dtype == object, (form, col)
            missing = [v for v in s if not isinstance(v, str)]
            assert missing and all(v is None for v in missing), (form, col)


def _export_rows(path) -> dict:
    """Every table of an export, its rows in file order, as Python values."""
    import sqlite3

    with sqlite3.connect(path) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {n: conn.execute(f'SELECT * FROM "{n}" ORDER BY rowid').fetchall() for n in names}


@pytest.mark.filterwarnings("ignore::UserWarning")  # the samples' own notes (cosines, derived authority)
def test_every_input_form_exports_the_object_forms_store(samples, embedder, tmp_path):
    """Replays of each form, exported together (as the main job does), write the same rows; so do a
    pattern table and a belief table handed to the export in each form directly."""
    from thatchlab.scoring import PredictionEngine
    from thatchlab.store import export_sqlite

    def export(form: str):
        log = logs.validate_interaction_log(_as(samples["interactions"], form))
        res = replay.run(log, "prediction", embedder=embedder)
        ev = logs.validate_event_log(_as(samples["events"], form))
        rc = logs.validate_recall_stream(_as(samples["recalls"], form))
        patterns = mine(ev, rc, ev["ts"].max() + pd.Timedelta(seconds=1))
        path = tmp_path / f"{form}.db"
        export_sqlite(path, prediction=PredictionEngine.from_tables(res.tables, embedder=embedder, params=res.params),
                      beliefs=replay.run_belief(logs.validate_memory_log(_as(samples["memory"], form))).state,
                      calibration=replay.run_calibration(logs.validate_recall_log(_as(samples["recall"], form))).state,
                      patterns=_as(patterns, form), log_end="2026-06-01T00:00:00Z")
        return _export_rows(path)

    want = export("object")
    assert all(want[t] for t in ("prediction_matchers", "predictions", "belief_memories", "memories",
                                 "confidence_shadow_observations", "temporal_patterns")), sorted(want)
    for form in FORMS:
        if form != "object":
            got = export(form)
            assert sorted(got) == sorted(want), form
            for table, rows in want.items():
                assert got[table] == rows, f"{table} as {form}"
