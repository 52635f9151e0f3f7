"""Tests of the anticipation miners and prefetch (DESIGN §6), including seed fidelity in DuckDB."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from thatchlab.anticipation import (
    Prefetcher,
    co_recall_count,
    cooccurrence_groups,
    mine,
    mine_conditional,
    mine_cooccurrence,
    mine_periodic,
    mine_sequential,
    slot_of,
)
from thatchlab.anticipation._reference_sql import SEED_SEQUENTIAL_DUCKDB
from thatchlab.core.errors import InputError, ParamsError
from thatchlab.core.params import AnticipationParams

T0 = pd.Timestamp("2026-01-05T09:00:00Z")  # a Monday
H = pd.Timedelta(hours=1)


def ev(rows, ws="w"):
    """rows: (hours after T0, name) → an event frame."""
    return pd.DataFrame({"ts": [T0 + h * H for h, _ in rows], "workspace": ws,
                         "session": [f"s{i}" for i in range(len(rows))], "name": [n for _, n in rows]})


# ---------------------------------------------------------------- sequential


def test_sequential_window_is_strict_on_both_ends():
    # b exactly 24 h after a and b at the same instant as a are not followers
    e = ev([(0, "a"), (0, "b"), (24, "b"), (100, "a"), (123.999, "b"), (200, "a"), (201, "b")])
    out = mine_sequential(e, min_obs=1, min_conf=0.0, mode="seed")
    row = out[(out.trigger == "a") & (out.target == "b")].iloc[0]
    assert row.observations == 2
    assert row.confidence == pytest.approx(2 / 3)
    assert row.avg_delay_s == pytest.approx((23.999 * 3600 + 3600) / 2)
    assert row.last_seen == T0 + 201 * H


def test_seed_counts_pairs_fraction_counts_triggers():
    e = ev([(0, "a"), (1, "b"), (2, "b"), (3, "b"), (48, "a"), (49, "b"), (96, "a")])
    seed = mine_sequential(e, min_obs=1, min_conf=0.0, mode="seed").set_index(["trigger", "target"])
    frac = mine_sequential(e, min_obs=1, min_conf=0.0, mode="fraction").set_index(["trigger", "target"])
    assert seed.loc[("a", "b"), "observations"] == 4
    assert seed.loc[("a", "b"), "confidence"] == pytest.approx(4 / 3)
    assert seed.loc[("a", "b"), "avg_delay_s"] == pytest.approx((1 + 2 + 3 + 1) * 3600 / 4)
    assert frac.loc[("a", "b"), "observations"] == 2
    assert frac.loc[("a", "b"), "confidence"] == pytest.approx(2 / 3)
    # delay to the first b only; last_seen = latest counted (first) b
    assert frac.loc[("a", "b"), "avg_delay_s"] == pytest.approx(3600.0)
    assert frac.loc[("a", "b"), "last_seen"] == T0 + 49 * H
    assert seed.loc[("a", "b"), "last_seen"] == T0 + 49 * H
    # trigger == target is kept: b → b pairs (1→2, 1→3, 2→3)
    assert seed.loc[("b", "b"), "observations"] == 3
    assert frac.loc[("b", "b"), "observations"] == 2


def test_sequential_thresholds_are_inclusive_obs_strict_confidence():
    # a occurs 6 times, followed by b 3 times: confidence exactly 0.5 is dropped
    rows = [(i * 48, "a") for i in range(6)] + [(i * 48 + 1, "b") for i in range(3)]
    e = ev(rows)
    assert mine_sequential(e, min_obs=3, min_conf=0.5).query("trigger == 'a' and target == 'b'").empty
    kept = mine_sequential(e, min_obs=3, min_conf=0.49).query("trigger == 'a' and target == 'b'")
    assert kept.observations.tolist() == [3]
    assert mine_sequential(e, min_obs=4, min_conf=0.0).query("trigger == 'a' and target == 'b'").empty


def test_sequential_separates_workspaces_and_kinds():
    e = pd.concat([ev([(0, "a"), (1, "b")], ws="w1"), ev([(0.5, "b")], ws="w2")], ignore_index=True)
    out = mine_sequential(e, min_obs=1, min_conf=0.0)
    assert out[["workspace", "trigger", "target"]].values.tolist() == [["w1", "a", "b"]]
    e2 = ev([(0, "x"), (1, "x")])
    e2["kind"] = ["event", "fact"]
    out2 = mine_sequential(e2, min_obs=1, min_conf=0.0)
    assert out2[["trigger_kind", "target_kind"]].values.tolist() == [["event", "fact"]]


def test_sequential_rejects_bad_input():
    with pytest.raises(InputError, match="missing column"):
        mine_sequential(pd.DataFrame({"ts": [T0]}))
    with pytest.raises(InputError, match="mode"):
        mine_sequential(ev([(0, "a")]), mode="pairs")
    naive = pd.DataFrame({"ts": [pd.Timestamp("2026-01-01")], "workspace": "w", "name": "a"})
    with pytest.raises(Exception, match="naive"):
        mine_sequential(naive)
    assert mine_sequential(ev([])).empty


SEED_SQL = SEED_SEQUENTIAL_DUCKDB + "ORDER BY 1, 2, 3\n"


def _random_stream(seed, n=3000, n_ws=6, names="abcdefg"):
    rng = np.random.default_rng(seed)
    us = rng.integers(0, 20 * 86400 * 10**6 // 1000, n) * 1000  # ms grid: ties happen
    us[: n // 20] = us[0]
    ts = pd.to_datetime(pd.Timestamp("2026-01-01T00:00Z").value // 1000 + us, unit="us", utc=True)
    return pd.DataFrame({"ts": ts, "workspace": rng.choice([f"w{i}" for i in range(n_ws)], n),
                         "name": rng.choice(list(names), n, p=np.linspace(2, 1, len(names)) / np.linspace(
                             2, 1, len(names)).sum())})


@pytest.mark.parametrize("seed", [0, 1])
def test_seed_mode_reproduces_the_seed_sql_in_duckdb(seed):
    events = _random_stream(seed)
    ours = mine_sequential(events, window="24h", min_obs=3, min_conf=0.5, mode="seed")
    con = duckdb.connect()
    con.register("mnemo_event", pd.DataFrame({"workspace_id": events["workspace"], "name": events["name"],
                                              "occurred_at": events["ts"].dt.tz_convert(None)}))
    ref = con.execute(SEED_SQL).df()
    con.close()
    assert len(ref) > 50 and (ref["confidence"] > 1).any()  # the seed's confidence exceeds 1
    assert ours[["workspace", "trigger", "target"]].values.tolist() == \
        ref[["workspace", "trigger", "target"]].values.tolist()
    assert ours["observations"].tolist() == ref["observations"].astype(int).tolist()
    np.testing.assert_allclose(ours["confidence"], ref["confidence"], rtol=1e-9, atol=0)
    np.testing.assert_allclose(ours["avg_delay_s"], ref["avg_delay_s"], rtol=1e-9, atol=0)


def _fraction_reference(events, window, min_obs, min_conf):
    """Row-loop reference of fraction mode."""
    w = pd.Timedelta(window)
    rows = {}
    e = events.sort_values("ts", kind="stable")
    for ws, g in e.groupby("workspace"):
        ts, nm = g["ts"].tolist(), g["name"].tolist()
        for i in range(len(ts)):
            seen = set()
            for j in range(len(ts)):
                if ts[i] < ts[j] < ts[i] + w and nm[j] not in seen:
                    seen.add(nm[j])
                    key = (ws, nm[i], nm[j])
                    n, d = rows.get(key, (0, 0.0))
                    rows[key] = (n + 1, d + (ts[j] - ts[i]).total_seconds())
    out = {k: (n, n / counts_of(events, k), d / n) for k, (n, d) in rows.items()}
    return {k: v for k, v in out.items() if v[0] >= min_obs and v[1] > min_conf}


def counts_of(events, key):
    ws, a, _ = key
    return int(((events["workspace"] == ws) & (events["name"] == a)).sum())


def test_fraction_mode_matches_a_row_loop_reference():
    events = _random_stream(3, n=300, n_ws=2, names="abcd")
    ours = mine_sequential(events, window="12h", min_obs=2, min_conf=0.3)
    ref = _fraction_reference(events, "12h", 2, 0.3)
    got = {(r.workspace, r.trigger, r.target): (r.observations, r.confidence, r.avg_delay_s)
           for r in ours.itertuples()}
    assert got.keys() == ref.keys()
    for k in ref:
        assert got[k][0] == ref[k][0]
        assert got[k][1] == pytest.approx(ref[k][1], rel=1e-12)
        assert got[k][2] == pytest.approx(ref[k][2], rel=1e-9)


stream = st.lists(st.tuples(st.integers(0, 200), st.sampled_from("abc"), st.sampled_from(["w1", "w2"])),
                  min_size=0, max_size=40)


@settings(max_examples=60, deadline=None)
@given(stream, st.randoms(use_true_random=False))
def test_sequential_properties(rows, rnd):
    e = pd.DataFrame({"ts": [T0 + h * pd.Timedelta(minutes=30) for h, _, _ in rows],
                      "name": [n for _, n, _ in rows], "workspace": [w for _, _, w in rows]})
    frac = mine_sequential(e, min_obs=1, min_conf=0.0)
    seed = mine_sequential(e, min_obs=1, min_conf=0.0, mode="seed")
    assert ((frac.confidence > 0) & (frac.confidence <= 1)).all()
    # every fraction pattern is a seed pattern with at least as many observations
    m = frac.merge(seed, on=["workspace", "trigger", "target"], suffixes=("_f", "_s"))
    assert len(m) == len(frac)
    assert (m.observations_s >= m.observations_f).all()
    # row order does not matter
    idx = list(range(len(e)))
    rnd.shuffle(idx)
    pd.testing.assert_frame_equal(mine_sequential(e.iloc[idx], min_obs=1, min_conf=0.0), frac)


# ---------------------------------------------------------------- periodic


def rc(rows, ws="w"):
    """rows: (timestamp, session, fact_id[, entities]) → a recall frame."""
    return pd.DataFrame({"ts": [pd.Timestamp(r[0]) for r in rows], "workspace": ws,
                         "session": [r[1] for r in rows], "fact_id": [r[2] for r in rows],
                         "entities": [list(r[3]) if len(r) > 3 else [] for r in rows]})


def test_periodic_slot_share_and_weeks():
    rows = [("2026-01-05T08:10Z", "s1", "m"), ("2026-01-05T09:59Z", "s1", "m"),
            ("2026-01-12T08:00Z", "s2", "m"), ("2026-01-12T09:00Z", "s2", "x"),
            ("2026-01-05T10:00Z", "s3", "y")]  # 10:00 falls in the next bucket
    out = mine_periodic(rc(rows))
    assert out[["slot", "target", "observations", "weeks"]].values.tolist() == [["0:4", "m", 3, 2]]
    assert out.confidence.tolist() == [0.75]
    assert out.trigger.tolist() == ["0:4"]
    assert out.last_seen.tolist() == [pd.Timestamp("2026-01-12T08:00Z")]
    # all three recalls in one ISO week: not periodic
    assert mine_periodic(rc(rows[:2] + [("2026-01-05T09:30Z", "s9", "m")])).empty
    # share exactly at min_share is kept (>=)
    assert len(mine_periodic(rc(rows), min_share=0.75)) == 1
    assert mine_periodic(rc(rows), min_share=0.76).empty


def test_periodic_timezone_and_slot_hours():
    # 23:30 UTC Sunday is 00:30 Monday in Paris (UTC+1 in January)
    ts = pd.Series(pd.to_datetime(["2026-01-04T23:30Z"], utc=True))
    assert slot_of(ts).tolist() == ["6:11"]
    assert slot_of(ts, timezone="Europe/Paris").tolist() == ["0:0"]
    assert slot_of(ts, slot_hours=6).tolist() == ["6:3"]


# ---------------------------------------------------------------- conditional


def test_conditional_counts_mentions_before_first_recall():
    events = pd.DataFrame({
        "ts": [T0, T0, T0, T0 + 2 * H], "workspace": "w", "session": ["s1", "s2", "s3", "s4"],
        "name": "msg", "entities": [["prod"], ["prod"], ["prod"], ["prod"]]})
    recalls = rc([(T0 + H, "s1", "rb"), (T0 + H, "s2", "rb"), (T0 - H, "s3", "rb"),
                  (T0 + H, "s3", "rb"),                      # s3: first recall before the mention
                  (T0 + H, "s4", "rb"),                      # s4: mention after the recall
                  (T0 + H, "s5", "rb", ["prod"]),            # s5: mention only on rb's own row
                  (T0, "s6", "other", ["prod"]), (T0 + H, "s6", "rb")])  # s6: via another recall
    out = mine_conditional(events, recalls, min_obs=1, min_conf=0.0)
    row = out[(out.trigger == "prod") & (out.target == "rb")].iloc[0]
    assert row.observations == 3            # s1, s2, s6
    assert row.trigger_sessions == 6        # s1..s6 all mention prod somewhere
    assert row.confidence == pytest.approx(0.5)
    assert mine_conditional(events, recalls, min_obs=3, min_conf=0.5).empty  # 0.5 is not > 0.5
    assert row.last_seen == T0 + H


# ---------------------------------------------------------------- co-occurrence


def test_cooccurrence_confidence_and_groups():
    rows = []
    for i in range(4):
        rows += [(T0 + i * 24 * H, f"s{i}", "a"), (T0 + i * 24 * H + H, f"s{i}", "b")]
    rows += [(T0 + 10 * 24 * H, "t0", "a"), (T0 + 10 * 24 * H, "t0", "a")]   # a alone (twice)
    for i in range(3):
        rows += [(T0 + (20 + i) * 24 * H, f"u{i}", "c"), (T0 + (20 + i) * 24 * H, f"u{i}", "b")]
    rows += [(T0 + 30 * 24 * H, "v", "x"), (T0 + 30 * 24 * H, "v", "y")]
    r = rc(rows)
    co = co_recall_count(r).set_index(["trigger", "target"])
    assert co.loc[("a", "b"), "co_recall_count"] == 4
    assert co.loc[("a", "b"), "sessions_trigger"] == 5
    out = mine_cooccurrence(r)
    assert out[["trigger", "target", "observations"]].values.tolist() == [["a", "b", 4], ["b", "c", 3]]
    # confidence = co / min(sessions): a-b 4 / min(5, 7); b-c 3 / min(7, 3)
    assert out.confidence.tolist() == pytest.approx([4 / 5, 1.0])
    assert out.group.tolist() == ["a", "a"]
    assert out.last_seen.tolist()[0] == T0 + 3 * 24 * H + H
    assert cooccurrence_groups(out).facts.tolist() == [["a", "b", "c"]]


# ---------------------------------------------------------------- mine + prefetch


def _daily(days=6, ws="w"):
    events = pd.DataFrame({"ts": [T0 + d * 24 * H for d in range(days)], "workspace": ws,
                           "session": [f"d{d}" for d in range(days)], "name": "deploy",
                           "entities": [["prod"]] * days})
    recalls = rc([(T0 + d * 24 * H + 0.5 * H, f"d{d}", "runbook") for d in range(days)], ws=ws)
    return events, recalls


def test_mine_stacks_types_over_the_lookback():
    events, recalls = _daily(6)
    now = T0 + 5 * 24 * H  # the day-5 rows sit exactly at now: excluded
    p = mine(events, recalls, now)
    assert set(p.type) == {"sequential", "conditional"}
    cond = p[p.type == "conditional"].iloc[0]
    assert (cond.trigger, cond.target, cond.observations, cond.trigger_kind) == ("prod", "runbook", 5, "entity")
    seq = p[(p.type == "sequential") & (p.trigger == "deploy") & (p.target == "runbook")].iloc[0]
    assert (seq.observations, seq.target_kind, seq.avg_delay_s) == (5, "fact", 1800.0)
    # a 3-day lookback [now - 3d, now) keeps days 2, 3, 4
    p3 = mine(events, recalls, now, AnticipationParams(lookback="3d"))
    assert p3[p3.type == "conditional"].observations.tolist() == [3]
    assert mine(events, recalls, now, AnticipationParams(lookback="2d")).empty
    assert list(p.columns[:7]) == ["type", "workspace", "trigger", "target", "confidence", "observations",
                                   "last_seen"]
    assert ((p.confidence >= 0) & (p.confidence <= 1)).all()


def test_prefetcher_ranks_by_best_confidence_then_fact_id():
    pats = pd.DataFrame({
        "type": ["sequential", "sequential", "conditional", "periodic", "co-occurrence", "sequential"],
        "workspace": "w", "trigger": ["deploy", "deploy", "prod", "0:4", "a", "deploy"],
        "target": ["zeta", "alpha", "zeta", "beta", "b", "billing.spike"],
        "confidence": [0.6, 0.9, 0.9, 0.9, 0.95, 0.99],
        "trigger_kind": ["event", "event", "entity", "slot", "fact", "event"],
        "target_kind": ["fact", "fact", "fact", "fact", "fact", "event"]})
    pf = Prefetcher(pats)
    out = pf.prefetch({"workspace": "w", "events": ["deploy"], "entities": ["prod"],
                       "ts": "2026-01-05T09:00Z"}, k=2)
    assert out.fact_id.tolist() == ["alpha", "beta"]  # 0.9 ties broken by fact id; events never prefetched
    full = pf.prefetch({"workspace": "w", "events": ["deploy"], "entities": ["prod"],
                        "ts": "2026-01-05T09:00Z"}, k=5)
    assert full.fact_id.tolist() == ["alpha", "beta", "zeta"]
    zeta = full.iloc[2]
    assert zeta.score == 0.9 and zeta.types == ["conditional", "sequential"] and zeta.pattern_ids == [2, 0]
    # co-occurrence works in both directions; recalled facts are not prefetched again
    assert pf.prefetch({"workspace": "w", "recalled": ["b"]}).fact_id.tolist() == ["a"]
    assert pf.prefetch({"workspace": "w", "recalled": ["a", "b"]}).empty
    assert pf.prefetch({"workspace": "other", "events": ["deploy"]}).empty
    with pytest.raises(InputError):
        pf.prefetch({"events": ["deploy"]})


def test_params_validation():
    p = AnticipationParams()
    assert AnticipationParams.from_dict(p.to_dict()) == p
    for bad in (dict(window="-1h"), dict(window="soon"), dict(slot_hours=5), dict(timezone="Mars/Base"),
                dict(mode="pairs"), dict(min_share=1.5), dict(k=0), dict(min_obs=0)):
        with pytest.raises(ParamsError):
            AnticipationParams(**bad)


def test_sparse_aggregation_and_long_span_paths_agree(monkeypatch):
    import thatchlab.anticipation._sequential as seq

    events = _random_stream(5, n=800, n_ws=3)
    for mode in ("seed", "fraction"):
        dense = mine_sequential(events, min_obs=2, min_conf=0.2, mode=mode)
        monkeypatch.setattr(seq, "_DENSE_BINS", 1)
        monkeypatch.setattr(seq, "_CHUNK_PAIRS", 97)
        sparse = mine_sequential(events, min_obs=2, min_conf=0.2, mode=mode)
        monkeypatch.undo()
        pd.testing.assert_frame_equal(dense, sparse)
    # a 250-year span with two workspaces overflows the combined search key: per-workspace search
    far = pd.DataFrame({"ts": pd.to_datetime(["1800-01-01T00:00Z", "1800-01-01T01:00Z", "2050-01-01T00:00Z",
                                              "2050-01-01T02:00Z"], utc=True),
                        "workspace": ["w1", "w1", "w2", "w2"], "name": ["a", "b", "a", "b"]})
    out = mine_sequential(far, min_obs=1, min_conf=0.0)
    assert out[["workspace", "trigger", "target", "avg_delay_s"]].values.tolist() == [
        ["w1", "a", "b", 3600.0], ["w2", "a", "b", 7200.0]]


recall_rows = st.lists(st.tuples(st.integers(0, 24 * 60), st.integers(0, 5), st.sampled_from("abcd"),
                                 st.lists(st.sampled_from(["x", "y"]), max_size=2)),
                       min_size=0, max_size=40)


@settings(max_examples=40, deadline=None)
@given(recall_rows, st.randoms(use_true_random=False))
def test_recall_miners_properties(rows, rnd):
    r = pd.DataFrame({"ts": [T0 + pd.Timedelta(hours=h) for h, _, _, _ in rows], "workspace": "w",
                      "session": [f"s{s}" for _, s, _, _ in rows], "fact_id": [f for _, _, f, _ in rows],
                      "entities": [e for _, _, _, e in rows]})
    e = r.rename(columns={"fact_id": "name"}).iloc[0:0]
    idx = list(range(len(r)))
    rnd.shuffle(idx)
    for miner in (lambda x: mine_periodic(x, min_obs=1, min_share=0.0, min_weeks=1),
                  lambda x: mine_conditional(e, x, min_obs=1, min_conf=0.0),
                  lambda x: mine_cooccurrence(x, min_obs=1, min_conf=0.0)):
        out = miner(r)
        assert ((out.confidence > 0) & (out.confidence <= 1)).all()
        pd.testing.assert_frame_equal(miner(r.iloc[idx]), out)
    co = mine_cooccurrence(r, min_obs=1, min_conf=0.0)
    assert (co.trigger < co.target).all()


def test_sequential_names_null_rows():
    e = ev([(0, "a"), (1, None)])
    with pytest.raises(InputError, match="row 1, column 'name'"):
        mine_sequential(e)
