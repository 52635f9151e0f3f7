"""The calibration report of each ai-memory release, on a database in production's schema.

Releases (``thatchlab.core.params.RELEASES["ai-memory"]``), all in ``alphaonedev/ai-memory-mcp``:

* ``v0.7.0``: ``src/confidence/calibrate.rs`` and ``src/cli/commands/calibrate_confidence.rs`` of
  release/v0.7.0 (ff8caac8): count / median / mean / buckets per (namespace, source); the table has
  no UTIL column; ``days`` goes to ``chrono::Duration::days`` unchecked.
* ``a78a228``: ``src/confidence/calibrate.rs`` @a78a2284 with ``src/confidence/shadow.rs`` @05359fe0:
  the sweep backfills ``recall_outcome`` from ``recall_observations`` first, then reports
  ``consumption_utility`` and ``consume_access_divergence`` (a LEFT JOIN on ``memories`` for
  ``COALESCE(access_count, 0)``; ``unconsumed_count = judged − consumed``; the unconsumed access sum
  covers only ``recall_outcome = 'unconsumed'`` rows).
* ``0a5770a``: ``src/confidence/calibrate.rs`` @0a5770af: ``CalibrationAudience``; admin = a78a228;
  a caller INNER JOINs ``memories``, applies ``storage::visibility_clause`` (scope_idx / agent_id_idx /
  target_agent_id_idx, team/unit/org subtree by ``LIKE``), ``models::lifecycle_visible_clause`` and
  ``visibility::substrate_exclusion_sql`` on ``o.namespace`` and ``m.namespace``, and skips the
  backfill; ``CALLER_REQUIRED_REFUSAL`` for an empty / anonymous / ill-shaped caller.

The fixture's DDL follows production's ``memories`` (with the v10/v14 generated columns),
``confidence_shadow_observations`` (v40, with ``source``) and ``recall_observations``.
"""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pandas as pd
import pytest

from tests._ingest import cli as run
from thatchlab.calibration import (
    CALLER_REQUIRED_REFUSAL,
    CalibrationAudience,
    CalibrationReport,
    CallerRequiredError,
    calibrate_from_shadow,
)
from thatchlab.core.errors import InputError, ThatchlabError
from thatchlab.core.params import CalibrationParams
from thatchlab.logs.ai_memory import read_ai_memory

NOW = "2026-03-20T00:00:00Z"
ALICE = "acme/eng/alice"            # ancestors: acme/eng/alice (private), acme/eng (team), acme (unit)

SCHEMA = """
CREATE TABLE memories (
    id TEXT PRIMARY KEY, tier TEXT NOT NULL, namespace TEXT NOT NULL DEFAULT 'global', title TEXT NOT NULL,
    content TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '[]', priority INTEGER NOT NULL DEFAULT 5,
    confidence REAL NOT NULL DEFAULT 1.0, source TEXT NOT NULL DEFAULT 'api',
    access_count INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
    last_accessed_at TEXT, expires_at TEXT, metadata TEXT NOT NULL DEFAULT '{}',
    confidence_source TEXT NOT NULL DEFAULT 'caller_provided', confidence_signals TEXT,
    confidence_decayed_at TEXT, lifecycle_state TEXT NOT NULL DEFAULT 'open',
    scope_idx TEXT GENERATED ALWAYS AS (CASE WHEN json_valid(metadata)
        THEN COALESCE(json_extract(metadata, '$.scope'), 'private') ELSE 'private' END) VIRTUAL,
    agent_id_idx TEXT GENERATED ALWAYS AS (CASE WHEN json_valid(metadata)
        THEN json_extract(metadata, '$.agent_id') ELSE NULL END) VIRTUAL,
    target_agent_id_idx TEXT GENERATED ALWAYS AS (CASE WHEN json_valid(metadata)
        THEN json_extract(metadata, '$.target_agent_id') ELSE NULL END) VIRTUAL);
CREATE TABLE confidence_shadow_observations (
    id INTEGER PRIMARY KEY AUTOINCREMENT, memory_id TEXT NOT NULL, namespace TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT 'unknown', caller_confidence REAL NOT NULL, derived_confidence REAL NOT NULL,
    signals TEXT NOT NULL, recall_outcome TEXT, observed_at TEXT NOT NULL,
    FOREIGN KEY(memory_id) REFERENCES memories(id) ON DELETE CASCADE);
CREATE TABLE recall_observations (recall_id TEXT NOT NULL, memory_id TEXT NOT NULL, retriever TEXT NOT NULL,
    rank INTEGER NOT NULL, score REAL NOT NULL, consumed INTEGER NOT NULL DEFAULT 0, consumed_by TEXT,
    observed_at TEXT NOT NULL);
"""

# id, namespace, metadata, lifecycle_state, access_count; what caller ALICE may read
MEMORIES = [
    ("m1", "acme/eng", {"agent_id": ALICE}, "open", 4),                                 # private, hers
    ("m2", "acme/eng", {"scope": "team", "agent_id": "acme/eng/bob"}, "active", 10),    # her team
    ("m3", "ACME/ENG/tools", {"scope": "team"}, "done", 2),          # under her team by LIKE (ASCII case)
    ("m4", "acme/ops", {"scope": "team"}, "open", 6),                # another team: hidden
    ("m5", "acme/ops", {"scope": "unit"}, "open", 8),                # her unit acme: readable
    ("m6", "acme/eng", {"agent_id": "acme/eng/bob"}, "open", 3),     # bob's private: hidden
    ("m7", "acme/eng", {"agent_id": "acme/eng/bob", "target_agent_id": ALICE}, "blocked", 5),  # her inbox
    ("m8", "_messages/acme/eng/alice", {"scope": "collective"}, "open", 1),   # substrate: hidden
    ("m9", "acme/eng", {"scope": "collective"}, "quarantined", 7),   # lifecycle: hidden
    ("m10", "acme/eng", {"scope": "shared"}, "open", 9),             # no SQL arm for 'shared': hidden
    ("m11", "acme/eng", "not json", "open", 2),                      # private without owner: hidden
]
# memory_id, namespace, source, derived_confidence, recall_outcome, observed_at
OBSERVATIONS = [
    ("m1", "acme/eng", "user", 0.62, None, "2026-03-01T10:00:00+00:00"),
    ("m2", "acme/eng", "user", 0.70, None, "2026-03-02T10:00:00+00:00"),
    ("m3", "acme/eng", "assistant", 0.35, None, "2026-03-03T10:00:00+00:00"),
    ("m4", "acme/ops", "user", 0.50, None, "2026-03-04T10:00:00+00:00"),
    ("m5", "acme/ops", "user", 0.81, None, "2026-03-05T10:00:00+00:00"),
    ("m6", "acme/eng", "user", 0.44, None, "2026-03-06T10:00:00+00:00"),
    ("m7", "acme/eng", "user", 0.58, "recalled", "2026-03-07T10:00:00+00:00"),   # a legacy outcome
    ("m8", "_messages/acme/eng/alice", "api", 0.90, None, "2026-03-08T10:00:00+00:00"),
    ("m9", "acme/eng", "user", 0.20, None, "2026-03-09T10:00:00+00:00"),
    ("m10", "acme/eng", "user", 0.30, None, "2026-03-10T10:00:00+00:00"),
    ("m11", "acme/eng", "user", 0.10, None, "2026-03-11T10:00:00+00:00"),
    ("gone", "acme/eng", "user", 0.66, None, "2026-03-12T10:00:00+00:00"),       # memory deleted: an orphan
    ("m1", "_agents", "api", 0.50, None, "2026-03-13T10:00:00+00:00"),           # substrate namespace stamped
    ("m2", "acme/eng", "user", 0.75, None, "2026-01-01T10:00:00+00:00"),         # before the window
]
# recall_id, memory_id, consumed
LEDGER = [("r1", "m1", 1), ("r1", "m2", 0), ("r2", "m6", 1), ("r2", "m5", 0), ("r3", "m5", 1),
          ("r3", "gone", 0), ("r4", "m4", 0)]


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "ai-memory.db"
    with sqlite3.connect(path) as c:
        c.executescript(SCHEMA)
        for mid, ns, meta, life, acc in MEMORIES:
            c.execute("INSERT INTO memories (id, tier, namespace, title, content, access_count, created_at, "
                      "updated_at, metadata, lifecycle_state) VALUES (?,?,?,?,?,?,?,?,?,?)",
                      (mid, "long", ns, mid, "c", acc, "2026-02-01T00:00:00+00:00", "2026-02-01T00:00:00+00:00",
                       meta if isinstance(meta, str) else json.dumps(meta), life))
        for mid, ns, src, d, out, at in OBSERVATIONS:
            c.execute("INSERT INTO confidence_shadow_observations (memory_id, namespace, source, caller_confidence, "
                      "derived_confidence, signals, recall_outcome, observed_at) VALUES (?,?,?,?,?,?,?,?)",
                      (mid, ns, src, 0.9, d, "{}", out, at))
        for rid, mid, consumed in LEDGER:
            c.execute("INSERT INTO recall_observations VALUES (?,?,?,?,?,?,?,?)",
                      (rid, mid, "hybrid", 1, 0.5, consumed, None, "2026-03-14T00:00:00+00:00"))
    return path


def report(db, release, audience=None, days=30):
    t = read_ai_memory(db)
    return calibrate_from_shadow(t.observations, NOW, days, audience=audience, memories=t.memories,
                                 ledger=t.ledger, release=release)


ADMIN_TABLE = (
    "CONFIDENCE CALIBRATION REPORT (window: 30 days, observations: 13)\n"
    "\n"
    "NAMESPACE                 SOURCE         COUNT  MEDIAN    MEAN    UTIL  HISTOGRAM (0.0..1.0)\n"
    "_agents                   api                1    0.50    0.50    1.00  .....#....\n"
    "_messages/acme/eng/alice  api                1    0.90    0.90     n/a  .........#\n"
    "acme/eng                  assistant          1    0.35    0.35     n/a  ...#......\n"
    "acme/eng                  user               8    0.51    0.45    0.40  .#######..\n"
    "acme/ops                  user               2    0.66    0.66    0.50  .....#..#.\n")


def test_v070_reports_no_utility_and_prints_no_util_column(db):
    """release/v0.7.0: ``PerSourceBaseline`` has namespace, source, count, median, mean, buckets only, and
    ``render_table`` has no UTIL column; the sweep neither backfills nor joins memories."""
    rep = report(db, "v0.7.0")
    assert rep.release == "v0.7.0"
    assert rep.to_ascii() == (
        "CONFIDENCE CALIBRATION REPORT (window: 30 days, observations: 13)\n"
        "\n"
        "NAMESPACE                 SOURCE         COUNT  MEDIAN    MEAN  HISTOGRAM (0.0..1.0)\n"
        "_agents                   api                1    0.50    0.50  .....#....\n"
        "_messages/acme/eng/alice  api                1    0.90    0.90  .........#\n"
        "acme/eng                  assistant          1    0.35    0.35  ...#......\n"
        "acme/eng                  user               8    0.51    0.45  .#######..\n"
        "acme/ops                  user               2    0.66    0.66  .....#..#.\n")
    doc = json.loads(rep.to_json())
    assert list(doc["rows"][0]) == ["namespace", "source", "count", "median", "mean", "buckets"]
    assert doc["rows"][3] == {"namespace": "acme/eng", "source": "user", "count": 8, "median": 0.51,
                              "mean": pytest.approx(3.6 / 8), "buckets": [0, 1, 1, 1, 1, 1, 2, 1, 0, 0]}
    assert list(rep.rows.columns) == ["namespace", "source", "count", "median", "mean", "buckets"]
    assert "consumed_count" not in rep.to_frame(wide=True).columns


def test_v070_window_is_not_range_checked(db):
    """``now - Duration::days(days)`` with no bound: a negative window starts after now (nothing here),
    beyond 100 years is fine; a78a228 and later refuse both (``checked_days_ago``, 0..=36500)."""
    assert report(db, "v0.7.0", days=-1).to_ascii().splitlines()[0] == \
        "CONFIDENCE CALIBRATION REPORT (window: -1 days, observations: 0)"
    assert report(db, "v0.7.0", days=36501).total_observations == 14
    for rel in ("a78a228", "0a5770a"):
        for days in (-1, 36501):
            with pytest.raises(InputError, match=r"days: expected a number of days in 0\.\.=36500"):
                report(db, rel, days=days)


def test_a78a228_backfills_then_reports_utility_and_divergence(db):
    """@a78a2284: backfill m1/m6 consumed, m2/m4/gone unconsumed (m5: one consumed row → consumed);
    m7 keeps its legacy 'recalled'. acme/eng user judges o1 o2 o6 o7 gone: utility 2/5; consumed access
    (4 + 3) / 2; unconsumed_count 5 − 2 = 3 (the legacy row included) but its access sum is only the
    'unconsumed' rows, m2's 10 and the orphan's COALESCE 0: 10 / 3."""
    rep = report(db, "a78a228")
    assert rep.to_ascii() == ADMIN_TABLE
    doc = json.loads(rep.to_json())
    assert [r["consume_access_divergence"] for r in doc["rows"]] == [
        {"consumed_count": 1, "unconsumed_count": 0, "mean_access_consumed": 4.0, "mean_access_unconsumed": None},
        None,
        None,
        {"consumed_count": 2, "unconsumed_count": 3, "mean_access_consumed": 3.5,
         "mean_access_unconsumed": 10 / 3},
        {"consumed_count": 1, "unconsumed_count": 1, "mean_access_consumed": 8.0, "mean_access_unconsumed": 6.0},
    ]
    assert [r["consumption_utility"] for r in doc["rows"]] == [1.0, None, None, 0.4, 0.5]
    wide = rep.to_frame(wide=True)
    assert wide["consumed_count"].tolist() == [1, 0, 0, 2, 1]
    assert wide["unconsumed_count"].tolist() == [0, 0, 0, 3, 1]
    np.testing.assert_array_equal(wide["mean_access_unconsumed"], [np.nan, np.nan, np.nan, 10 / 3, 6.0])


def test_a78a228_without_memories_counts_access_zero_as_for_orphans(db):
    """The LEFT JOIN's ``COALESCE(m.access_count, 0)``: no memories given reads every row as an orphan."""
    t = read_ai_memory(db)
    rep = calibrate_from_shadow(t.observations, NOW, 30, ledger=t.ledger, release="a78a228")
    div = rep.rows["consume_access_divergence"].tolist()[3]
    assert div == {"consumed_count": 2, "unconsumed_count": 3, "mean_access_consumed": 0.0,
                   "mean_access_unconsumed": 0.0}


def test_0a5770a_admin_is_a78a228(db):
    """``CalibrationAudience::admin()`` reproduces the pre-#3507 sweep byte for byte (@0a5770af)."""
    a, b = report(db, "a78a228"), report(db, "0a5770a", audience="admin")
    assert b.to_ascii() == ADMIN_TABLE and a.to_json() == b.to_json()
    assert report(db, "latest").to_json() == b.to_json() and b.audience is None


def test_0a5770a_caller_scope_visibility_lifecycle_substrate_and_no_backfill(db):
    """A caller-scoped sweep (@0a5770af): inner join (the orphan drops), visibility (m1 own, m2 team,
    m3 team by case-folded LIKE, m5 unit, m7 inbox target; m4 other team, m6 bob's, m10 'shared', m11
    bad JSON hidden), lifecycle (m9 quarantined), substrate (m8's namespace, and o13 stamped _agents);
    no backfill, so only m7's stored legacy outcome is judged: utility 0/1, unconsumed_count 1, access
    mean 0/1 (no row is exactly 'unconsumed')."""
    rep = report(db, "0a5770a", audience=ALICE)
    assert rep.audience == ALICE
    assert rep.to_ascii() == (
        "CONFIDENCE CALIBRATION REPORT (window: 30 days, observations: 5)\n"
        "\n"
        "NAMESPACE                 SOURCE         COUNT  MEDIAN    MEAN    UTIL  HISTOGRAM (0.0..1.0)\n"
        "acme/eng                  assistant          1    0.35    0.35     n/a  ...#......\n"
        "acme/eng                  user               3    0.62    0.63    0.00  .....###..\n"
        "acme/ops                  user               1    0.81    0.81     n/a  ........#.\n")
    doc = json.loads(rep.to_json())
    assert doc["rows"][1]["consume_access_divergence"] == {
        "consumed_count": 0, "unconsumed_count": 1, "mean_access_consumed": None, "mean_access_unconsumed": 0.0}
    assert doc["rows"][1]["mean"] == pytest.approx((0.62 + 0.70 + 0.58) / 3)
    # the same observations were not backfilled: the ledger had verdicts for m1, m2, m5
    assert [r["consumption_utility"] for r in doc["rows"]] == [None, 0.0, None]


def test_caller_scope_matches_a_sql_reading_of_the_fixture(db):
    """The per-group counts equal a query over the file itself (generated columns, LIKE, IN), written
    here from the rules in the module docstring: the Python predicate reads the schema as SQLite does."""
    sql = """
        SELECT o.namespace, o.source, COUNT(*) FROM confidence_shadow_observations o
        JOIN memories m ON m.id = o.memory_id
        WHERE o.observed_at >= :cut
          AND (m.scope_idx = 'collective'
               OR (m.scope_idx = 'private' AND (m.agent_id_idx = :me OR m.target_agent_id_idx = :me))
               OR (m.scope_idx = 'team' AND (m.namespace = 'acme/eng' OR m.namespace LIKE 'acme/eng/%'))
               OR (m.scope_idx = 'unit' AND (m.namespace = 'acme' OR m.namespace LIKE 'acme/%')))
          AND (m.lifecycle_state IS NULL OR m.lifecycle_state IN ('open','active','blocked','done','abandoned'))
          AND NOT (o.namespace IN ('_agents','_agent_sessions','_standards') OR substr(o.namespace,1,10)='_messages/'
                   OR substr(o.namespace,1,7)='_inbox/' OR substr(o.namespace,1,9)='_curator/'
                   OR substr(o.namespace,1,15)='_subscriptions/' OR substr(o.namespace,1,10)='_standard:')
          AND NOT (m.namespace IN ('_agents','_agent_sessions','_standards') OR substr(m.namespace,1,10)='_messages/'
                   OR substr(m.namespace,1,7)='_inbox/' OR substr(m.namespace,1,9)='_curator/'
                   OR substr(m.namespace,1,15)='_subscriptions/' OR substr(m.namespace,1,10)='_standard:')
        GROUP BY o.namespace, o.source ORDER BY o.namespace, o.source"""
    with sqlite3.connect(db) as c:
        want = c.execute(sql, {"cut": "2026-02-18T00:00:00+00:00", "me": ALICE}).fetchall()
    rep = report(db, "0a5770a", audience=ALICE)
    got = list(zip(rep.rows["namespace"], rep.rows["source"], rep.rows["count"].tolist(), strict=True))
    assert got == [tuple(w) for w in want] == [("acme/eng", "assistant", 1), ("acme/eng", "user", 3),
                                                ("acme/ops", "user", 1)]


def test_caller_scope_reads_metadata_when_the_generated_columns_are_absent(db):
    """A memories frame without scope_idx/agent_id_idx/target_agent_id_idx computes them from metadata
    as the generated columns' expressions do."""
    t = read_ai_memory(db)
    bare = t.memories.drop(columns=["scope_idx", "agent_id_idx", "target_agent_id_idx"])
    a = calibrate_from_shadow(t.observations, NOW, 30, audience=ALICE, memories=bare, release="0a5770a")
    assert a.to_json() == report(db, "0a5770a", audience=ALICE).to_json()


@pytest.mark.parametrize("caller", ["", "   ", "anonymous:invalid", "anonymous:req-9f2c1a7b", "a b",
                                    "../etc", "/root", "x" * 129, "é"])
def test_missing_caller_is_refused_with_production_text(db, caller):
    """``CalibrationAudience::for_caller`` (@0a5770af) refuses empty, the anonymous sentinels and any
    id failing ``validate_agent_id_shape`` with ``CALLER_REQUIRED_REFUSAL``."""
    t = read_ai_memory(db)
    with pytest.raises(CallerRequiredError) as err:
        calibrate_from_shadow(t.observations, NOW, 30, audience=caller, memories=t.memories)
    assert str(err.value) == (
        "memory_calibrate_confidence requires a resolvable caller identity: the report is a caller-scoped "
        "aggregate (#3507), so it is refused rather than computed over rows the caller may not read. Set "
        "AI_MEMORY_AGENT_ID (MCP/CLI), send X-Agent-Id (HTTP), or call as a configured admin")
    assert str(err.value) == CALLER_REQUIRED_REFUSAL and isinstance(err.value, ThatchlabError)


def test_audience_object_trims_and_older_releases_take_no_caller(db):
    assert CalibrationAudience.for_caller(f"  {ALICE}\n").caller == ALICE
    assert CalibrationAudience.coerce("admin") == CalibrationAudience.admin()
    assert CalibrationAudience.for_caller("x" * 128).caller == "x" * 128
    t = read_ai_memory(db)
    for rel in ("v0.7.0", "a78a228"):
        with pytest.raises(InputError, match=rf"audience: release '{rel}' of ai-memory aggregates every"):
            calibrate_from_shadow(t.observations, NOW, 30, audience=ALICE, memories=t.memories, release=rel)
    with pytest.raises(InputError, match="memories: a sweep scoped to caller 'acme/eng/alice'"):
        calibrate_from_shadow(t.observations, NOW, 30, audience=ALICE)
    dup = pd.concat([t.memories, t.memories.iloc[:1]], ignore_index=True)
    with pytest.raises(InputError, match=r"memories: row 0, column 'id': duplicate id 'm1'"):
        calibrate_from_shadow(t.observations, NOW, 30, memories=dup)


def test_report_object_defaults_to_the_newest_release():
    assert CalibrationReport().release == "0a5770a" and CalibrationParams().release == "0a5770a"
    assert list(CalibrationReport().rows.columns)[-2:] == ["consumption_utility", "consume_access_divergence"]
    assert list(CalibrationReport(release="v0.7.0").rows.columns)[-1] == "buckets"


def test_cli_calibrate_database_per_release_and_audience(db, capsys):
    """``thatchlab calibrate DB``: the admin sweep backfills (in memory; the file is not written) and reads
    access counts; ``--audience`` scopes; a refused caller is one ``error:`` line, exit 2."""
    before = db.read_bytes()
    code, out, _ = run(["calibrate", str(db), "--now", NOW], capsys)
    assert code == 0 and out == ADMIN_TABLE
    code, out, _ = run(["calibrate", str(db), "--now", NOW, "--release", "v0.7.0"], capsys)
    assert code == 0 and "UTIL" not in out and out.splitlines()[3].startswith("_agents  ")
    code, out, _ = run(["calibrate", str(db), "--now", NOW, "--audience", ALICE, "--json"], capsys)
    assert code == 0 and json.loads(out)["total_observations"] == 5
    assert json.loads(out)["rows"][1]["consume_access_divergence"]["unconsumed_count"] == 1
    code, out, err = run(["calibrate", str(db), "--now", NOW, "--audience", "anonymous:invalid"], capsys)
    assert code == 2 and out == "" and err.strip() == f"error: {CALLER_REQUIRED_REFUSAL}"
    code, out, err = run(["calibrate", str(db), "--release", "v9"], capsys)
    assert code == 2 and err.startswith("error: ") and "v0.7.0" in err
    assert db.read_bytes() == before


def test_replay_report_follows_the_release():
    """run_calibration: a78a228+ rows carry the divergence with access = touches so far; v0.7.0 none."""
    from thatchlab.replay import run_calibration
    from thatchlab.synth.recall import RecallWorld

    log = RecallWorld(n_memories=20, n_recalls=200, seed=1).log
    new, old = run_calibration(log), run_calibration(log, CalibrationParams(release="v0.7.0"))
    assert new.report.release == "0a5770a" and old.report.release == "v0.7.0"
    assert "UTIL" in new.report.to_ascii() and "UTIL" not in old.report.to_ascii()
    assert list(old.windows.columns) == ["window_end", "namespace", "source", "count", "median", "mean", "buckets"]
    first = new.report.rows["consume_access_divergence"].iloc[0]
    assert first["consumed_count"] == 21 and first["unconsumed_count"] == 0
    assert first["mean_access_unconsumed"] is None and first["mean_access_consumed"] > 1
    same = ["namespace", "source", "count", "median", "mean"]
    pd.testing.assert_frame_equal(new.report.rows[same], old.report.rows[same])


@pytest.mark.parametrize("module", ["thatchlab.calibration._audience", "thatchlab.calibration._report"])
def test_docstring_examples_run(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
