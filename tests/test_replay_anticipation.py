"""Tests of the anticipation replay: daily runs at 06:30 UTC, next-day prefetch, ROI metrics."""

from __future__ import annotations

import pandas as pd
import pytest

from thatchlab.core.errors import LogValidationError
from thatchlab.core.params import AnticipationParams
from thatchlab.replay import run_anticipation
from thatchlab.synth import PatternWorld

D0 = pd.Timestamp("2026-01-01T10:00:00Z")
DAY = pd.Timedelta(days=1)


@pytest.fixture
def daily_streams():
    """Ten daily sessions at 10:00: deploy, then runbook recalled at 10:30; 'other' on days 0, 3, 6, 9."""
    days = range(10)
    events = pd.DataFrame({"ts": [D0 + d * DAY for d in days], "workspace": "w",
                           "session": [f"d{d}" for d in days], "name": "deploy", "entities": None})
    rows = [(D0 + d * DAY + pd.Timedelta("30min"), f"d{d}", "runbook") for d in days]
    rows += [(D0 + d * DAY + pd.Timedelta("40min"), f"d{d}", "other") for d in days if d % 3 == 0]
    recalls = pd.DataFrame({"ts": [r[0] for r in rows], "workspace": "w", "session": [r[1] for r in rows],
                            "fact_id": [r[2] for r in rows], "entities": None})
    return events, recalls


def test_replay_metrics_on_a_known_stream(daily_streams):
    res = run_anticipation(*daily_streams, warmup="3d")
    # first run: the first 06:30 UTC at least 3 days after the start → 2026-01-05 06:30
    assert res.runs.run_at.iloc[0] == pd.Timestamp("2026-01-05T06:30Z")
    assert res.sessions.session.tolist() == [f"d{d}" for d in range(4, 10)]
    assert (res.sessions.run_at == res.sessions.t0.dt.floor("D") + pd.Timedelta("6h30min")).all()
    # every session gets exactly the runbook (runbook → deploy is an event target: never prefetched)
    assert res.sessions.prefetched.tolist() == [["runbook"]] * 6
    m = res.metrics
    assert m["sessions"] == 6 and m["runs"] == 6
    assert m["hit_rate_at_k"] == 1.0
    assert m["precision_at_k"] == pytest.approx(1 / 3)
    assert m["prefetch_precision"] == 1.0
    assert m["recall_at_k"] == pytest.approx((4 + 0.5 + 0.5) / 6)
    assert m["recalls_per_session"] == pytest.approx(8 / 6)
    assert m["round_trips_saved_per_session"] == 1.0
    assert m["tokens_saved_per_session"] == 150.0
    assert m["latency_saved_ms_per_session"] == 200.0
    assert m["false_prefetches"] == 0
    assert all(isinstance(v, (int, float)) for v in m.values())
    roi = res.roi()
    assert roi.loc["saved", "tokens / session"] == 150.0
    assert roi.loc["without anticipation", "recall round-trips / session"] == pytest.approx(8 / 6)


def test_replay_respects_lookback_and_costs(daily_streams):
    # a 2-day lookback never holds 3 observations: nothing is prefetched
    res = run_anticipation(*daily_streams, AnticipationParams(lookback="2d"), warmup="3d")
    assert res.metrics["hit_rate_at_k"] == 0.0
    assert res.metrics["prefetched_per_session"] == 0.0
    cheap = run_anticipation(*daily_streams, AnticipationParams(tokens_per_recall=10,
                                                                 latency_ms_per_recall=50), warmup="3d")
    assert cheap.metrics["tokens_saved_per_session"] == 10.0
    assert cheap.metrics["latency_saved_ms_per_session"] == 50.0


def test_replay_never_uses_the_future(daily_streams):
    events, recalls = daily_streams
    # on day 4 'runbook' is replaced by 'secret': it is recalled for the first time, so never prefetched
    recalls = recalls.copy()
    recalls.loc[recalls.session == "d4", "fact_id"] = "secret"
    res = run_anticipation(events, recalls, warmup="3d")
    assert "secret" not in {f for p in res.sessions.prefetched for f in p}
    assert res.sessions.iloc[0].hit == False  # noqa: E712  (numpy bool)


def test_replay_validates_streams(daily_streams):
    events, recalls = daily_streams
    bad = recalls.copy()
    bad.loc[2, "fact_id"] = ""
    with pytest.raises(LogValidationError, match="row 2, column 'fact_id'"):
        run_anticipation(events, bad)


def test_replay_on_a_pattern_world_beats_nothing():
    ev, rc = PatternWorld(n_workspaces=1, days=28, seed=3).generate()
    a = run_anticipation(ev, rc)
    b = run_anticipation(ev, rc, AnticipationParams(k=1))
    assert 0 < a.metrics["hit_rate_at_k"] <= 1
    assert b.metrics["prefetched_per_session"] <= 1
    assert b.metrics["hit_rate_at_k"] <= a.metrics["hit_rate_at_k"]
    again = run_anticipation(ev, rc)
    assert again.metrics == a.metrics


def test_replay_edge_cases(daily_streams):
    from thatchlab.core.errors import InputError

    events, recalls = daily_streams
    no_events = run_anticipation(events.iloc[0:0], recalls, warmup="3d")
    assert no_events.metrics["sessions"] == 6
    assert no_events.metrics["hit_rate_at_k"] == 0.0  # nothing but runbook → runbook (exactly 24 h)
    with pytest.raises(InputError, match="recall stream is empty"):
        run_anticipation(events, recalls.iloc[0:0])
