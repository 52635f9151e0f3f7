"""Memory log validation, belief replay and the bundled sample log."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import brier_score_loss, roc_auc_score

from thatchlab.belief import BeliefParams, BeliefStore
from thatchlab.core.errors import LogValidationError
from thatchlab.logs import read_memory_log, validate_memory_log, write_memory_log
from thatchlab.replay import run_belief
from thatchlab.synth import BeliefWorld
from thatchlab.synth.belief import sample_memory_log

T0 = pd.Timestamp("2026-01-01T00:00:00Z")


def d(n: float) -> str:
    return (T0 + pd.Timedelta(days=n)).isoformat()


@pytest.fixture(scope="module")
def world_log() -> pd.DataFrame:
    return BeliefWorld(named_date_share=0.3, seed=7).log(n_memories=120, days=90)


# -- memory log --------------------------------------------------------------------------------

def small_log():
    return pd.DataFrame({
        "ts": [d(0), d(7), d(8), d(15), d(16), d(20)],
        "memory_id": ["m1", "m1", "c1", "m1", "m1", "m1"],
        "kind": ["write", "read", "restated", "read", "review", "read"],
        "text": ["went hiking", None, None, None, None, None],
        "belief_class": ["episodic", None, None, None, None, None],
        "target_memory_id": [None, None, "m1", None, None, None],
        "confirmed": [None, None, None, None, "false", None],
        "still_true": [None, "true", None, "true", None, "false"],
    })


def test_validation_types_and_keeps_input():
    raw = small_log()
    copy = raw.copy()
    log = validate_memory_log(raw)
    pd.testing.assert_frame_equal(raw, copy)
    assert str(log["ts"].dtype) == "datetime64[ns, UTC]" and str(log["still_true"].dtype) == "boolean"
    assert log["confirmed"].tolist()[4] is False
    assert list(log.columns[:3]) == ["ts", "memory_id", "kind"] and log["authority"].isna().all()


@pytest.mark.parametrize("row, change, column", [
    (0, {"kind": "forget"}, "kind"),
    (0, {"text": None}, "text"),
    (4, {"confirmed": None}, "confirmed"),
    (0, {"still_true": True}, "still_true"),
    (0, {"belief_class": "mood"}, "belief_class"),
    (2, {"ts": "2026-01-09T00:00:00"}, "ts"),
    (0, {"memory_id": ""}, "memory_id"),
])
def test_validation_names_row_and_column(row, change, column):
    log = small_log().astype(object)
    for k, v in change.items():
        log.loc[row, k] = v
    with pytest.raises(LogValidationError) as exc:
        validate_memory_log(log, source="mem.jsonl")
    assert (exc.value.row, exc.value.column, exc.value.file) == (row, column, "mem.jsonl")
    valid, rejected = validate_memory_log(log, errors="report")
    assert rejected["row"].tolist() == [row] and len(valid) == len(log) - 1


def test_validation_rejects_bad_half_life_and_missing_columns():
    log = small_log().assign(half_life_days=[0, None, None, None, None, None])
    with pytest.raises(LogValidationError, match="half_life_days"):
        validate_memory_log(log)
    with pytest.raises(LogValidationError, match="missing column"):
        validate_memory_log(small_log().drop(columns=["kind"]))


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_log_round_trips(tmp_path, world_log, suffix):
    path = write_memory_log(world_log, tmp_path / f"mem{suffix}")
    back = read_memory_log(path)
    pd.testing.assert_frame_equal(back, world_log, check_dtype=False)


# -- replay ------------------------------------------------------------------------------------

def test_replay_literal_small_log():
    r = run_belief(small_log())
    ev = r.events
    # 7 days after capture: 0.5; restated on day 8 → 7 days later again 0.5;
    # refuting review on day 16 leaves the clock: day 20 is 12 days → 0.5 ** (12/7)
    assert ev["currency"].tolist() == pytest.approx([0.5, 0.5, 0.5 ** (12 / 7)])
    assert ev["band"].tolist() == ["fading", "fading", "fading"]           # 0.305
    assert ev["status"].tolist() == ["active", "active", "contradicted"]
    assert ev["useful_now"].tolist() == [True, True, False]
    assert r.actions["action"].tolist() == ["restated", "contradicted"]
    assert r.metrics["time_only_transitions"] == 0 and r.metrics["n_labelled"] == 3
    assert r.state.row("m1")["corroboration_count"] == 1


def test_replay_metrics_match_sklearn(world_log):
    r = run_belief(world_log)
    lab = r.events[r.events["still_true"].notna()]
    y = lab["still_true"].astype(bool)
    assert r.metrics["auc"] == pytest.approx(roc_auc_score(y, lab["currency"]))
    assert r.metrics["brier"] == pytest.approx(brier_score_loss(y, lab["currency"]))
    assert r.metrics["auc"] > 0.8
    t = r.band_table
    assert int(t["n"].sum()) == r.metrics["n_labelled"] == r.metrics["n_reads"]
    assert t.loc["current", "share_true"] > t.loc["fading", "share_true"] > t.loc["history", "share_true"]
    assert all(np.isscalar(v) for v in r.metrics.values())


def test_replay_has_no_time_only_transitions_and_reads_never_write(world_log):
    r = run_belief(world_log)
    assert r.metrics["time_only_transitions"] == 0
    kinds = {e["event"] for e in r.state.journal}
    assert "read" not in kinds and "unrelated" not in kinds
    n_evidence = int(world_log["kind"].isin(["write", "restated", "contradicted", "resolved",
                                             "review", "delete"]).sum())
    assert len(r.state.journal) <= n_evidence


def test_replay_counts_time_only_transitions_when_a_row_changes_between_reads(monkeypatch):
    # a store that (wrongly) closes rows on time alone is caught by the replay's audit
    original = BeliefStore.apply_event

    def sneaky(self, ev, i, **kw):
        out = original(self, ev, i, **kw)
        if "m1" in self._rows and ev["kind"] == "unrelated":
            self._rows["m1"]["status"] = "superseded"
        return out

    monkeypatch.setattr(BeliefStore, "apply_event", sneaky)
    log = small_log().iloc[:2]
    extra = pd.DataFrame({"ts": [d(9), d(10)], "memory_id": ["u1", "m1"], "kind": ["unrelated", "read"],
                          "still_true": [None, True]})
    r = run_belief(pd.concat([log, extra], ignore_index=True))
    assert r.metrics["time_only_transitions"] == 1


def test_replay_sorts_by_time_and_rescore_equals_a_fresh_run(world_log):
    shuffled = world_log.sample(frac=1.0, random_state=3).reset_index(drop=True)
    a, b = run_belief(world_log), run_belief(shuffled)
    assert a.metrics == b.metrics
    p = BeliefParams(preference=60, state=15, episodic=3)
    fresh, again = run_belief(world_log, p), a.rescore(p)
    pd.testing.assert_frame_equal(fresh.events, again.events)
    assert fresh.metrics == again.metrics


def test_replay_counts_missing_rows():
    log = pd.DataFrame({"ts": [d(0), d(1), d(2), d(3)], "memory_id": ["m1", "m1", "m1", "zz"],
                        "kind": ["write", "delete", "read", "restated"],
                        "text": ["x", None, None, None], "belief_class": ["state", None, None, None],
                        "still_true": [None, None, True, None]})
    r = run_belief(log)
    assert r.metrics["n_missing"] == 2 and r.metrics["n_labelled"] == 0
    assert np.isnan(r.metrics["auc"]) and len(r.state) == 0


def test_replay_missing_read_has_no_band_and_weaker_contradiction_lowers_truth():
    log = pd.DataFrame({"ts": [d(0), d(1), d(2), d(3)], "memory_id": ["m1", "c1", "m1", "zz"],
                        "kind": ["write", "contradicted", "read", "read"],
                        "text": ["x", None, None, None], "belief_class": ["state", None, None, None],
                        "authority": [2, 1, None, None], "target_memory_id": [None, "m1", None, None],
                        "still_true": [None, None, True, True]})
    # omi belief_evidence.py @4d5d5c53 (BasedHardware/omi): a weaker contradiction still lowers truth
    r = run_belief(log, BeliefParams(release="4d5d5c5"))
    assert r.actions["action"].tolist() == ["contradicted"]          # production: weaker still lowers
    assert r.state.row("m1")["confidence"] == 0.0 and r.events["status"].tolist()[0] == "contradicted"
    assert r.events["useful_now"].tolist() == [False, False]
    assert r.events["band"].tolist() == ["current", None]            # the missing read has no band
    assert int(r.band_table["n"].sum()) == 1


def test_replay_starts_from_an_initial_store():
    init = BeliefStore(pd.DataFrame([dict(id="m0", text="is a nurse", belief_class="identity",
                                          captured_at=T0)]))
    log = pd.DataFrame({"ts": [d(400)], "memory_id": ["m0"], "kind": ["read"], "still_true": [True]})
    r = run_belief(log, initial=init)
    assert r.events["currency"].tolist() == [1.0] and len(init.journal) == 1


# -- bundled sample -----------------------------------------------------------------------------

def test_sample_log_is_bundled_and_regenerates_identically(repo_root, tmp_path):
    path = Path(repo_root) / "data" / "memory_log.jsonl"
    assert path.stat().st_size < 1_000_000
    fresh = write_memory_log(sample_memory_log(), tmp_path / "memory_log.jsonl")
    assert fresh.read_bytes() == path.read_bytes()
    r = run_belief(read_memory_log(path))
    assert r.metrics["time_only_transitions"] == 0 and r.metrics["n_labelled"] > 500
