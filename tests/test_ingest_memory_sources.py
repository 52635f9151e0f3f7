"""The memory-system adapters (omi, ai-memory, mnemo) on the bundled samples and on what they refuse or count."""

from __future__ import annotations

import decimal
import json
import shutil
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from tests._ingest import DATA, cli
from thatchlab import logs
from thatchlab.core.errors import LogValidationError, StoreSchemaError
from thatchlab.logs import ingest
from thatchlab.replay import run_belief

OMI = DATA / "omi_memories.json"
AI = DATA / "ai-memory.db"


def one_error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


# ------------------------------------------------------------------ omi
def omi_file(tmp_path, rows, name="m.json") -> Path:
    f = tmp_path / name
    f.write_text(json.dumps(rows), encoding="utf-8")
    return f


def tolerance(currencies) -> float:
    """Half a unit of the last digit the file's currencies were written with (1e-9 at full precision)."""
    digits = max(max(0, -decimal.Decimal(repr(float(c))).as_tuple().exponent) for c in currencies)
    return max(0.5 * 10.0 ** -digits, 1e-9)


def replayed_vs_exported(res):
    """(replayed, exported) currency of every read row of an omi ingest."""
    reads = res.log[res.log["kind"] == "read"]
    ev = run_belief(res.log).events
    assert ev["memory_id"].tolist() == reads["memory_id"].tolist()
    return ev["currency"].to_numpy(), reads["currency"].to_numpy()


def memory(mid, **kw) -> dict:
    """A /v3/memories row with the belief overlay, as omi's MemoryDB writes it."""
    row = {"id": mid, "uid": "u1", "content": f"memory {mid}", "category": "system", "visibility": "private",
           "tags": [], "created_at": "2026-08-01T00:00:00+00:00", "updated_at": "2026-08-01T00:00:00+00:00",
           "manually_added": False, "invalid_at": None, "superseded_by": None, "belief_class": "state",
           "half_life_days": 30.0, "as_of": "2026-08-01T00:00:00+00:00",
           "belief_computed_at": "2026-08-16T00:00:00+00:00", "currency": 0.7071067811865476,
           "currency_band": "current"}
    row.update(kw)
    return row


@pytest.fixture(scope="module")
def omi():
    return ingest.omi_memories(OMI)


def test_omi_sample_rows_and_counts(omi):
    log = omi.log
    assert len(log) == 24 and dict(omi.skipped) == {} and omi.warnings == []
    assert not any("not omi's band" in k or "does not use" in k for k in omi.read)
    assert log["kind"].value_counts().to_dict() == {"write": 10, "read": 9, "restated": 4, "contradicted": 1}
    assert omi.read["memories omi read without a currency (unclassified: no read row)"] == 1
    assert omi.read["locked memories (content cut to 70 characters by omi)"] == 1
    assert log["record_id"].is_unique and log["ts"].is_monotonic_increasing
    raw = json.loads(OMI.read_text())
    assert not any(k in r for r in raw for k in ingest._omi.NOT_IN_RESPONSE)  # the sample is omi's shape
    assert {r["currency_band"] for r in raw} <= {"current", "fading", "history", None}
    assert {r["category"] for r in raw} <= set(ingest._omi.OMI_CATEGORIES[:4])


def test_omi_read_rows_go_at_belief_computed_at_and_the_replay_gives_omis_currency(omi):
    raw = {r["id"]: r for r in json.loads(OMI.read_text())}
    reads = omi.log[omi.log["kind"] == "read"]
    assert (reads["ts"] == pd.Timestamp("2026-01-15T09:30:12.345678Z")).all()
    rep = run_belief(omi.log)
    assert rep.metrics["n_missing"] == 0 and len(rep.events) == len(reads) == 9
    tol = tolerance(r["currency"] for r in raw.values() if r["currency"] is not None)
    for mid, cur, band in rep.events[["memory_id", "currency", "band"]].itertuples(index=False):
        assert abs(cur - raw[mid]["currency"]) <= tol, mid
        assert band == raw[mid]["currency_band"], mid
    assert reads["currency"].tolist() == [raw[m]["currency"] for m in reads["memory_id"]]
    assert reads["currency_band"].tolist() == [raw[m]["currency_band"] for m in reads["memory_id"]]


def test_omi_fields_land_where_omi_means_them(omi):
    w = omi.log[omi.log["kind"] == "write"].set_index("memory_id")
    assert w.loc["om-01", "valid_to"] == pd.Timestamp("2026-01-10T09:00:00Z")  # invalid_at
    assert w.loc["om-04", "valid_to"] == pd.Timestamp("2026-02-28T23:59:59Z")
    assert w["user_asserted"].tolist().count(True) == 2 and bool(w.loc["om-07", "user_asserted"])  # manually_added
    assert w.loc["om-05", "half_life_days"] == 400.0  # its own half-life
    assert pd.isna(w.loc["om-03", "half_life_days"])  # 180 = the preference prior: left to the prior
    assert w.loc["om-01", "memory_kind"] == "fact" and w.loc["om-01", "subject_scope"] == "primary_user"
    assert w.loc["om-08", "belief_class"] is None and w.loc["om-02", "category"] == "manual"
    # as_of later than created_at: one restated at as_of, the evidence clock
    rest = omi.log[omi.log["kind"] == "restated"].set_index("memory_id")["ts"]
    assert rest.to_dict() == {"om-05": pd.Timestamp("2025-11-20T10:00:00Z"),
                              "om-01": pd.Timestamp("2025-12-20T18:00:00Z"),
                              "om-03": pd.Timestamp("2026-01-03T07:30:00.25Z"),
                              "om-10": pd.Timestamp("2026-01-12T06:00:00Z")}


def test_omi_supersession_is_an_inferred_event_that_leaves_currency_alone(omi):
    sup = omi.log[omi.log["kind"] == "contradicted"].iloc[0]
    assert (sup["memory_id"], sup["target_memory_id"], sup["ts"]) == ("om-07", "om-01",
                                                                       pd.Timestamp("2026-01-10T09:00:00Z"))
    assert pd.isna(sup["authority"]) and sup["record_id"] == "om-01#superseded_by:om-07"
    assert omi.log.loc[omi.log["record_id"] == "om-01", "superseded_by"].tolist() == ["om-07"]
    ev = run_belief(omi.log).events.set_index("memory_id")
    assert ev.loc["om-01", "status"] == "superseded" and ev.loc["om-01", "currency"] == 0.0
    without = run_belief(omi.log[omi.log["kind"] != "contradicted"]).events.set_index("memory_id")
    assert without["currency"].equals(ev["currency"])


def test_omi_fields_the_response_does_not_carry_are_ignored_and_counted(tmp_path):
    f = omi_file(tmp_path, [memory("a", corroboration_count=5, last_corroborated_at="2026-08-10T00:00:00Z",
                                   valid_to="2026-08-02T00:00:00Z", user_asserted=True, shoe_size=42)])
    res = ingest.omi_memories(f)
    assert res.log["kind"].tolist() == ["write", "read"]  # no restatements made from a count
    w = res.log.iloc[0]
    assert pd.isna(w["valid_to"]) and not w["user_asserted"]
    for key in ("corroboration_count", "last_corroborated_at", "valid_to", "user_asserted"):
        assert res.read[f"field /v3/memories does not carry (ignored): {key}"] == 1
    assert res.read["field not in omi's MemoryDB (ignored): shoe_size"] == 1
    got, want = replayed_vs_exported(res)
    assert abs(got - want).max() <= 1e-12


def test_omi_read_rows_that_cannot_be_placed_are_not_made(tmp_path):
    f = omi_file(tmp_path, [
        memory("old", belief_computed_at=None),  # an older server: the read time is unknown
        memory("unclassified", belief_class=None, half_life_days=None, currency=None, currency_band=None),
        memory("legacy", **{k: None for k in ("belief_class", "half_life_days", "as_of", "belief_computed_at",
                                              "currency", "currency_band")}),
    ])
    res = ingest.omi_memories(f)
    assert res.log["kind"].tolist() == ["write"] * 3
    assert res.read["currency without belief_computed_at (older server, read time unknown: no read row)"] == 1
    assert res.read["memories omi read without a currency (unclassified: no read row)"] == 1


def test_omi_superseded_by_a_memory_outside_the_export_makes_no_event(tmp_path):
    res = ingest.omi_memories(omi_file(tmp_path, [memory("a", superseded_by="zz")]))
    assert "contradicted" not in res.log["kind"].tolist()
    assert res.read["superseded_by a memory not in the export (no event)"] == 1
    assert res.log["superseded_by"].iloc[0] == "zz"


def test_omi_replay_agrees_at_the_files_precision_and_odd_bands_are_counted(tmp_path):
    rounded = ingest.omi_memories(omi_file(tmp_path, [memory("a", currency=0.7071)], "r.json"))
    got, want = replayed_vs_exported(rounded)
    assert abs(got - want).max() <= tolerance(want) == 0.00005
    odd = ingest.omi_memories(omi_file(tmp_path, [memory("a", currency_band="fading"),
                                                  memory("b", currency_band="fresh")], "w.json"))
    assert odd.read["currency_band that is not omi's band of its currency (kept as given)"] == 1
    assert odd.read["currency_band omi does not use (kept as given): 'fresh'"] == 1
    assert odd.log.loc[odd.log["kind"] == "read", "currency_band"].tolist() == ["fading", "fresh"]
    early = ingest.omi_memories(omi_file(tmp_path, [memory("a", as_of="2026-07-01T00:00:00+00:00",
                                                           currency=0.5 ** (46 / 30), currency_band="fading")],
                                         "e.json"))
    assert early.read["as_of before created_at (the evidence clock cannot precede the write)"] == 1
    got, want = replayed_vs_exported(early)  # the clock cannot go before the write: not reproduced
    assert got[0] == pytest.approx(0.7071067811865476) and want[0] == pytest.approx(0.3455, abs=1e-4)


def test_omi_skips_are_counted(tmp_path):
    res = ingest.omi_memories(omi_file(tmp_path, [
        memory("a"), memory("a"), memory("b", content=""), memory("c", created_at="soon"),
        {"content": "no id"}, memory("d", deleted=True), 7]))
    assert dict(res.skipped) == {"repeated memory id (first kept)": 1, "memory without content": 1,
                                 "memory without a readable created_at": 1, "memory without an id": 1,
                                 "memory marked deleted (older omi field 'deleted')": 1,
                                 "record that is not a JSON object": 1}
    assert res.log["memory_id"].unique().tolist() == ["a"]


def test_omi_reads_an_array_json_lines_and_a_memories_object_alike(tmp_path):
    rows = [memory("a"), memory("b", belief_class="episodic", half_life_days=7.0, currency=0.25,
                               currency_band="fading", belief_computed_at="2026-08-15T00:00:00Z")]
    arr = ingest.omi_memories(omi_file(tmp_path, rows)).log
    (tmp_path / "m.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    (tmp_path / "one.jsonl").write_text(json.dumps(rows[0]) + "\n")
    obj = omi_file(tmp_path, {"memories": rows, "created_count": 2}, "o.json")
    pd.testing.assert_frame_equal(ingest.omi_memories(tmp_path / "m.jsonl").log, arr)
    pd.testing.assert_frame_equal(ingest.omi_memories(obj).log, arr)
    assert len(ingest.omi_memories(tmp_path / "one.jsonl").log) == 2


@pytest.mark.parametrize("text, needle", [
    ('[{"id": "a",\n "content": }]', "line 2: not valid JSON"),
    ('{"id": "a", "content": "x"}\n{"id": "b", "content": "y"}\n{"id": oops}\n', "line 3: not valid JSON"),
    ('{"data": []}', "expected a JSON array of memories"),
    ("42", "expected a JSON array of memories, got int"),
])
def test_omi_bad_files_are_typed_errors_and_the_cli_writes_nothing(tmp_path, capsys, text, needle):
    f = tmp_path / "bad.json"
    f.write_text(text)
    with pytest.raises(LogValidationError, match=needle) as exc:
        ingest.omi_memories(f)
    assert exc.value.file == str(f)
    code, _, err = cli(["ingest", "omi", str(f), "--out", str(tmp_path / "o.jsonl")], capsys)
    assert code == 2 and needle in one_error_line(err) and str(f) in err
    assert not (tmp_path / "o.jsonl").exists()


def test_omi_successive_exports_grow_a_history(tmp_path, capsys):
    out = tmp_path / "o.jsonl"
    first = omi_file(tmp_path, [memory("a")], "1.json")
    later = omi_file(tmp_path, [memory("a", as_of="2026-08-20T00:00:00+00:00",
                                       belief_computed_at="2026-09-19T00:00:00+00:00", currency=0.5,
                                       currency_band="fading")], "2.json")
    assert cli(["ingest", "omi", str(first), "--out", str(out)], capsys)[0] == 0
    code, text, _ = cli(["ingest", "omi", str(later), "--out", str(out)], capsys)
    assert code == 0 and "2 new" in text and "1 no longer in the source (kept)" in text
    log = logs.read_memory_log(out)
    assert log["kind"].tolist() == ["write", "read", "restated", "read"]
    assert run_belief(log).events["currency"].tolist() == pytest.approx([0.7071067811865476, 0.5], abs=1e-12)


# ------------------------------------------------------------------ ai-memory
def ai_db(tmp_path, memories="", ledger="", *, name="ai.db", memory_cols=None) -> Path:
    """A database with ai-memory's DDL for the columns the adapter reads."""
    p = tmp_path / name
    cols = memory_cols or ("id TEXT PRIMARY KEY, namespace TEXT NOT NULL DEFAULT 'global', "
                           "source TEXT NOT NULL DEFAULT 'api', confidence REAL NOT NULL DEFAULT 1.0, "
                           "created_at TEXT NOT NULL")
    with sqlite3.connect(p) as c:
        c.executescript(f"""
        CREATE TABLE memories ({cols});
        CREATE TABLE recall_observations (recall_id TEXT, memory_id TEXT, retriever TEXT, rank INTEGER,
            score REAL, consumed INTEGER, observed_at TEXT);
        {memories}
        {ledger}""")
    return p


def test_ai_memory_sample(capsys):
    res = ingest.ai_memory(AI)
    log = res.log
    assert len(log) == 7 and dict(res.skipped) == {
        "ledger row of an unknown memory": 1,
        "ledger row whose memory confidence is outside [0, 1] (refused, not clipped)": 1}
    assert len(res.warnings) == 1 and "'am-6' (1.3)" in res.warnings[0]
    by = log.drop_duplicates("memory_id").set_index("memory_id")
    assert by["is_atom"].to_dict() == {"am-1": False, "am-2": True, "am-3": False, "am-4": True, "am-5": False}
    assert by["corroboration"].to_dict() == {"am-1": 1, "am-2": 1, "am-3": 1, "am-4": 0, "am-5": 0}
    assert by["source"].to_dict() == {"am-1": "user", "am-2": "claude", "am-3": "user", "am-4": "api",
                                      "am-5": "import"}
    assert log["consumed"].tolist() == [True, False, True, False, True, False, True]
    assert log["record_id"].tolist()[:2] == ["rc-01/am-1", "rc-01/am-2"]
    obs, out = res.tables["observations"], res.tables["outcomes"]
    assert obs["record_id"].tolist() == ["1", "2", "3", "4"] and len(out) == 9
    assert out["record_id"].is_unique and (out["ts"] == out["observed_at"]).all()


def test_ai_memory_time_formats_are_read_to_the_nanosecond(tmp_path):
    p = ai_db(tmp_path, "INSERT INTO memories VALUES ('m1', 'ns', 'user', 0.5, "
                        "'2026-05-15T12:00:05.123456789+00:00');",
              "INSERT INTO recall_observations VALUES ('r1', 'm1', 'fts5', 1, 1.0, 1, '2026-05-15T12:00:00.123Z'),"
              "('r2', 'm1', 'hnsw', 1, 1.0, 0, '2026-05-15T12:00:00Z'),"
              "('r3', 'm1', 'hybrid', 1, 1.0, 0, '2026-05-15T12:00:00.5+00:00');")
    log = ingest.ai_memory(p).log
    assert log["ts"].tolist() == [pd.Timestamp("2026-05-15T12:00:00Z"), pd.Timestamp("2026-05-15T12:00:00.123Z"),
                                  pd.Timestamp("2026-05-15T12:00:00.5Z")]
    assert log["created_at"].iloc[0] == pd.Timestamp("2026-05-15T12:00:05.123456789Z")
    assert log["created_at"].iloc[0].nanosecond == 789


def test_ai_memory_null_consumed_is_a_typed_error(tmp_path, capsys):
    p = ai_db(tmp_path, "INSERT INTO memories VALUES ('m1', 'ns', 'user', 0.5, '2026-01-01T00:00:00Z');",
              "INSERT INTO recall_observations VALUES ('r1', 'm1', 'fts5', 1, 1.0, 1, '2026-01-02T00:00:00Z'),"
              "('r2', 'm1', 'fts5', 1, 1.0, NULL, '2026-01-03T00:00:00Z');")
    with pytest.raises(StoreSchemaError, match=r"table 'recall_observations', row 1 \(recall_id='r2', "
                                               r"memory_id='m1'\), column 'consumed': expected 0 or 1.*got NULL"):
        ingest.ai_memory(p)
    with pytest.raises(StoreSchemaError, match="got NULL"):
        logs.read_recall_observations(p)
    out = tmp_path / "a.jsonl"
    code, _, err = cli(["ingest", "ai-memory", str(p), "--out", str(out)], capsys)
    assert code == 2 and "'consumed'" in one_error_line(err) and str(p) in err
    assert not list(tmp_path.glob("a*.jsonl"))


@pytest.mark.parametrize("bad", [5.0, -3.0])
def test_ai_memory_confidence_outside_0_1_is_refused_not_clipped(tmp_path, bad):
    p = ai_db(tmp_path, f"INSERT INTO memories VALUES ('m1', 'ns', 'user', 0.5, '2026-01-01T00:00:00Z'),"
                        f"('m2', 'ns', 'user', {bad}, '2026-01-01T00:00:00Z');",
              "INSERT INTO recall_observations VALUES ('r1', 'm1', 'fts5', 1, 1.0, 1, '2026-01-02T00:00:00Z'),"
              "('r1', 'm2', 'fts5', 2, 0.5, 0, '2026-01-02T00:00:00Z');")
    res = ingest.ai_memory(p)
    assert res.log["memory_id"].tolist() == ["m1"] and res.log["caller_confidence"].tolist() == [0.5]
    assert res.skipped["ledger row whose memory confidence is outside [0, 1] (refused, not clipped)"] == 1
    assert f"'m2' ({bad!r})" in res.warnings[0]
    assert len(res.tables["outcomes"]) == 2  # the ledger itself is kept as stored


def test_ai_memory_text_where_a_number_belongs_is_a_typed_error(tmp_path):
    p = ai_db(tmp_path, "INSERT INTO memories VALUES ('m1', 'ns', 'user', 'high', '2026-01-01T00:00:00Z');")
    with pytest.raises(StoreSchemaError, match=r"table 'memories', row 0 \(id='m1'\), column 'confidence': "
                                               "expected a number, got 'high'"):
        ingest.ai_memory(p)
    p = ai_db(tmp_path, "INSERT INTO memories VALUES ('m1', 'ns', 'user', 0.5, '2026-01-01T00:00:00Z');",
              "INSERT INTO recall_observations VALUES ('r1', 'm1', 'fts5', 1, 'high', 1, '2026-01-02T00:00:00Z');",
              name="score.db")
    with pytest.raises(StoreSchemaError, match=r"recall_observations', row 0 \(recall_id='r1', memory_id='m1'\), "
                                               "column 'score': expected a number"):
        ingest.ai_memory(p)


def test_ai_memory_without_created_at_is_a_schema_error(tmp_path, capsys):
    p = ai_db(tmp_path, "INSERT INTO memories VALUES ('m1', 0.5);", memory_cols="id TEXT PRIMARY KEY, confidence REAL")
    with pytest.raises(StoreSchemaError, match=r"ai\.db: table 'memories' lacks column 'created_at'"):
        ingest.ai_memory(p)
    code, _, err = cli(["ingest", "ai-memory", str(p), "--out", str(tmp_path / "a.jsonl")], capsys)
    line = one_error_line(err)
    assert code == 2 and "created_at" in line and "unexpected" not in line and str(p) in line


def test_ai_memory_null_namespace_and_source_are_counted(tmp_path):
    p = ai_db(tmp_path, "INSERT INTO memories VALUES ('m1', NULL, NULL, 0.5, '2026-01-01T00:00:00Z');",
              "INSERT INTO recall_observations VALUES ('r1', 'm1', 'fts5', 1, 1.0, 0, '2026-01-02T00:00:00Z');",
              memory_cols="id TEXT PRIMARY KEY, namespace TEXT, source TEXT, confidence REAL, created_at TEXT")
    res = ingest.ai_memory(p)
    assert res.log[["namespace", "source"]].values.tolist() == [["global", "unknown"]]
    assert res.read["ledger rows whose memory has no source (read as 'unknown')"] == 1
    assert res.read["ledger rows whose memory has no namespace (read as 'global', ai-memory's default)"] == 1


def test_ai_memory_reingest_keeps_ledger_rows_deleted_from_the_source(tmp_path, capsys):
    db = tmp_path / "ai-memory.db"
    shutil.copy(AI, db)
    out = tmp_path / "f.jsonl"
    code, text, _ = cli(["ingest", "ai-memory", str(db), "--out", str(out)], capsys)
    assert code == 0 and f"wrote 7 rows to {out}" in text
    with sqlite3.connect(db) as c:
        c.execute("DELETE FROM recall_observations WHERE recall_id = 'rc-01' AND memory_id = 'am-2'")
        c.execute("DELETE FROM confidence_shadow_observations WHERE id = 1")
    code, text, _ = cli(["ingest", "ai-memory", str(db), "--out", str(out)], capsys)
    assert code == 0
    assert f"wrote 7 rows to {out} (" in text and "1 no longer in the source (kept)" in text
    assert "wrote 4 rows to" in text and "wrote 9 rows to" in text
    recalls = logs.read_recall_log(out)
    assert "rc-01/am-2" in recalls["record_id"].tolist() and recalls["record_id"].is_unique
    assert logs.read_table(tmp_path / "f.observations.jsonl")["record_id"].astype(str).tolist().count("1") == 1
    assert len(logs.read_table(tmp_path / "f.outcomes.jsonl")) == 9


# ------------------------------------------------------------------ mnemo
def test_mnemo_sample():
    res = ingest.mnemo_events(DATA / "mnemo_events.csv", DATA / "mnemo_recalls.csv")
    ev, rc = res.tables["events"], res.tables["recalls"]
    assert (len(ev), len(rc)) == (16, 8)
    assert dict(res.skipped) == {"events row without a time, workspace or name": 1}
    assert res.read["rows with an inferred session"] == 10
    assert res.read["events rows without an id (content ids made)"] == 4
    assert res.read["recalls rows without an id (content ids made)"] == 8
    first = ev[ev["workspace"] == "ws-ops"].iloc[:3]
    assert first["session"].tolist() == ["s-ops-0", "s-ops-0", "ws-ops:2026-01-05T13:50:00Z"]
    assert first["entities"].tolist() == [["prod", "billing"], ["prod"], ["prod", "pager"]]
    day1 = rc[(rc["workspace"] == "ws-ops") & (rc["ts"].dt.day == 6)]
    assert day1["session"].tolist() == ["ws-ops:2026-01-06T08:50:00Z"]  # shares the events' inferred session
    for df in (ev, rc):
        ids = df["record_id"]
        assert ids.is_unique and not ids.isin(["None", "nan", ""]).any()
    assert ev.loc[ev["name"] == "incident.opened", "record_id"].str.startswith("mnemo-events:").all()
    assert ev.loc[ev["name"] != "incident.opened", "record_id"].str.startswith("ev-").all()


EV_HEAD = "name,workspace_id,occurred_at,session_id\n"
EV_ROWS = ["deploy.started,w1,2026-01-05 09:00:00+00,\n", "deploy.success,w1,2026-01-05 09:10:00+00,\n",
           "deploy.started,w1,2026-01-05 09:00:00+00,\n"]  # the same event twice: #2


def test_mnemo_content_ids_do_not_shift_when_an_earlier_row_appears(tmp_path, capsys):
    f = tmp_path / "ev.csv"
    f.write_text(EV_HEAD + "".join(EV_ROWS))
    before = ingest.mnemo_events(f).log
    assert before["record_id"].is_unique and before["record_id"].str.startswith("mnemo-events:").all()
    assert before["record_id"].str.endswith("#2").sum() == 1
    f.write_text(EV_HEAD + "pr.merged,w1,2026-01-05 08:00:00+00,\n" + "".join(EV_ROWS))
    after = ingest.mnemo_events(f).log
    assert len(after) == 4 and set(before["record_id"]) < set(after["record_id"])
    # the same through the command line: the grown log keeps every earlier id
    f.write_text(EV_HEAD + "".join(EV_ROWS))
    out = tmp_path / "m.jsonl"
    assert cli(["ingest", "mnemo", str(f), "--out", str(out)], capsys)[0] == 0
    f.write_text(EV_HEAD + "pr.merged,w1,2026-01-05 08:00:00+00,\n" + "".join(EV_ROWS))
    code, text, _ = cli(["ingest", "mnemo", str(f), "--out", str(out)], capsys)
    assert code == 0 and "wrote 4 rows" in text and "1 new" in text and "no longer in the source" not in text
    assert logs.read_event_log(tmp_path / "m.events.jsonl")["record_id"].is_unique


def test_mnemo_own_ids_are_kept_and_repeats_counted(tmp_path):
    f = tmp_path / "ev.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in [
        {"id": 7, "name": "a", "workspace_id": "w", "occurred_at": "2026-01-05T09:00:00Z"},
        {"id": None, "name": "b", "workspace_id": "w", "occurred_at": "2026-01-05T09:01:00Z"},
        {"id": 7, "name": "c", "workspace_id": "w", "occurred_at": "2026-01-05T09:02:00Z"}]))
    res = ingest.mnemo_events(f)
    assert res.log["name"].tolist() == ["a", "b"] and res.log["record_id"].iloc[0] == "7"
    assert res.log["record_id"].iloc[1].startswith("mnemo-events:")
    assert res.skipped["events row repeating an id (first kept)"] == 1


def test_mnemo_missing_column_names_it_and_its_aliases(tmp_path, capsys):
    f = tmp_path / "ev.csv"
    f.write_text("name,occurred_at\ndeploy,2026-01-05 09:00:00+00\n")
    with pytest.raises(LogValidationError, match="no column for \\['workspace'\\].*workspace_id, workspace") as exc:
        ingest.mnemo_events(f)
    assert exc.value.column == "workspace" and exc.value.file == str(f)
    code, _, err = cli(["ingest", "mnemo", str(f), "--out", str(tmp_path / "m.jsonl")], capsys)
    assert code == 2 and "workspace_id" in one_error_line(err)
    assert not list(tmp_path.glob("m*.jsonl"))
