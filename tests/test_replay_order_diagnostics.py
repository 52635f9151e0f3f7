"""Replays run in time order whatever the file order, and explain themselves when silent."""

import warnings

import numpy as np
import pandas as pd
import pytest

from tests._vectors import assert_same_metrics
from thatchlab import replay
from thatchlab.embed import LookupEmbedder
from thatchlab.logs import read_interaction_log


@pytest.fixture(scope="module")
def sample(repo_root, real_embedder):
    log = read_interaction_log(repo_root / "data" / "interactions.jsonl")
    return log, real_embedder


def test_a_shuffled_log_replays_like_the_sorted_one_with_a_warning(sample):
    log, emb = sample
    assert not log["ts"].duplicated().any()  # without ties the order is fully determined
    ref = replay.run(log, "prediction", embedder=emb)
    shuffled = log.sample(frac=1.0, random_state=7).reset_index(drop=True)
    moved = int((np.argsort(shuffled["ts"].to_numpy(), kind="stable") != np.arange(len(log))).sum())
    with pytest.warns(UserWarning, match=f"not in time order: {moved} of {len(log)} rows were reordered"):
        again = replay.run(shuffled, "prediction", embedder=emb)
    pd.testing.assert_frame_equal(again.events, ref.events)
    pd.testing.assert_frame_equal(again.nudges, ref.nudges)
    assert_same_metrics(again.metrics, ref.metrics)
    for name in ref.tables:
        pd.testing.assert_frame_equal(again.tables[name], ref.tables[name])


def test_sorting_is_stable_on_tied_times_and_silent_when_sorted(sample):
    log, emb = sample
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*not in time order")  # a sorted log: no word
        replay.run(log.iloc[:40], "prediction", embedder=emb)
    from thatchlab.logs import sort_by_time

    ts = pd.to_datetime(["2026-01-02", "2026-01-01", "2026-01-02", "2026-01-01"], utc=True)
    frame = pd.DataFrame({"ts": ts, "row": ["a", "b", "c", "d"]})
    with pytest.warns(UserWarning, match="4 of 4 rows were reordered"):
        out = sort_by_time(frame)
    # rows with equal ts keep their file order: b before d, a before c
    assert out["row"].tolist() == ["b", "d", "a", "c"] and out.attrs["reordered"] == 4
    assert frame["row"].tolist() == ["a", "b", "c", "d"]  # the input is not modified


def _silent_log():
    t = pd.Timestamp("2026-03-02T09:00:00Z")
    rows = [{"ts": t, "session": "s0", "kind": "prediction_update", "matcher": "writing tests",
             "statement": "use pytest", "signal": "confirm"}]
    for i in range(10):
        rows.append({"ts": t + pd.Timedelta(minutes=i + 1), "session": f"s{i + 1}", "kind": "message",
                     "text": f"a paraphrase about tests number {i}"})
    return pd.DataFrame(rows)


def test_a_mostly_silent_replay_names_the_cosines_and_the_threshold():
    # every prompt sits at cosine 0.45 from the one matcher: under the 0.60 default
    angle = np.arccos(0.45)
    vecs = {"writing tests": [1.0, 0.0, 0.0], "use pytest": [0.0, 0.0, 1.0]}
    vecs.update({f"a paraphrase about tests number {i}": [0.45, float(np.sin(angle)), 0.0]
                 for i in range(10)})
    emb = LookupEmbedder(vecs, name="toy")
    with pytest.warns(UserWarning, match="surfaced nothing"):
        res = replay.run(_silent_log(), "prediction", embedder=emb)
    text = " ".join(res.diagnostics)
    assert res.diagnostics[0] == "100% of the 10 scored messages surfaced nothing (regime 'none')."
    assert "median 0.450, 90th percentile 0.450, against a nudge threshold of 0.6" in text
    assert "transfer_threshold" in text and "does not match the threshold" in text
    # both paths explain themselves the same way
    with pytest.warns(UserWarning, match="surfaced nothing"):
        assert replay.run(_silent_log(), "prediction", embedder=emb, path="events").diagnostics == res.diagnostics


def test_paraphrases_under_the_bundled_model_get_a_diagnostic(real_embedder):
    log = _silent_log()
    log.loc[1:, "text"] = ["could you add some unit tests for this module",
                           "please cover this function with tests",
                           "I need a test suite for the parser",
                           "write checks that this class behaves",
                           "add regression coverage for the bug we fixed",
                           "make sure the helpers are exercised by tests",
                           "verify the new endpoint with automated checks",
                           "can you test the edge cases here",
                           "build tests around the date handling",
                           "set up testing for the CLI"]
    with pytest.warns(UserWarning, match="surfaced nothing"):
        res = replay.run(log, "prediction", embedder=real_embedder)
    assert res.metrics["interruption_rate"] > 0.5
    assert any("against a nudge threshold of 0.6" in s for s in res.diagnostics)


def test_a_replay_that_surfaces_things_has_no_diagnostics(sample):
    log, emb = sample
    res = replay.run(log, "prediction", embedder=emb)
    assert res.diagnostics == [] or res.metrics["interruption_rate"] > 0.5


def test_the_cli_prints_the_diagnostics_and_the_reordering(tmp_path, capsys):
    from thatchlab import logs
    from thatchlab.cli import main

    angle = np.arccos(0.45)
    vecs = {"writing tests": [1.0, 0.0, 0.0], "use pytest": [0.0, 0.0, 1.0]}
    vecs.update({f"a paraphrase about tests number {i}": [0.45, float(np.sin(angle)), 0.0]
                 for i in range(10)})
    logs.write_table(pd.DataFrame({"text": list(vecs), "embedding": list(vecs.values())}),
                     tmp_path / "lookup.csv")
    log = _silent_log().iloc[::-1].reset_index(drop=True)  # newest first
    logs.write_interaction_log(log, tmp_path / "log.jsonl")
    with pytest.raises(SystemExit) as done:
        main(["replay", str(tmp_path / "log.jsonl"), "--engine", "prediction",
              "--lookup", str(tmp_path / "lookup.csv")])
        raise SystemExit(0)
    assert done.value.code in (0, None)
    err = capsys.readouterr().err.splitlines()
    assert any("log.jsonl was not in time order: 10 of 11" in line and line.startswith("warning: ") for line in err)
    assert "diagnostic: 100% of the 10 scored messages surfaced nothing (regime 'none')." in err
    assert any("median 0.450" in line for line in err if line.startswith("diagnostic: "))


# ----------------------------------------------------------------- fitter inputs from replays
def test_replay_results_hand_each_fitter_its_input(sample, repo_root):
    from thatchlab.fit import DeriveWeightsFitter, HalfLifeFitter, PriorFitter
    from thatchlab.logs import read_memory_log, read_recall_log

    log, emb = sample
    res = replay.run(log, "prediction", embedder=emb)
    signals = res.prior_signals()
    assert list(signals.columns) == ["item_id", "signal", "ts"]
    assert len(signals) == len(res.tables["provenance"])
    fit = PriorFitter().fit(signals)
    by_hand = PriorFitter().fit(res.tables["provenance"].rename(columns={"prediction_id": "item_id"}))
    assert fit.k_ == by_hand.k_ and fit.p0_ == by_hand.p0_

    belief = replay.run_belief(read_memory_log(repo_root / "data" / "memory_log.jsonl"))
    ex = belief.exposures()
    assert {"memory_id", "group", "duration_days", "event"} <= set(ex.columns)
    hl = HalfLifeFitter().fit(ex["duration_days"], ex["event"], ex["group"])
    assert set(hl.summary_.index) == set(ex["group"])

    calib = replay.run_calibration(read_recall_log(repo_root / "data" / "recall_log.jsonl"))
    rows = calib.derive_rows()
    assert list(rows.columns) == ["ts", "age_days", "is_atom", "corroboration", "consumed"]
    assert len(rows) == int(calib.log["consumed"].notna().sum())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert DeriveWeightsFitter().fit(rows).n_ == len(rows)


def test_run_anticipation_on_a_tiny_stream_raises_a_typed_error(repo_root):
    from thatchlab.core.errors import InputError
    from thatchlab.logs import read_event_log, read_recall_stream

    ev = read_event_log(repo_root / "data" / "events.jsonl").iloc[:1]
    rc = read_recall_stream(repo_root / "data" / "recalls.jsonl").iloc[:2]
    with pytest.raises(InputError, match="warm-up"):
        replay.run_anticipation(ev, rc)
