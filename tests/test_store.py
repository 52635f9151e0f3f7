"""SQLite export/import of the scoring engines in the production thatch schema."""

import json
import sqlite3

import numpy as np
import pandas as pd
import pytest

from tests._stores import edited_export
from tests._vectors import basis
from thatchlab.core.errors import (
    ExportExistsError,
    ModelMismatchError,
    StoreSchemaError,
    StoreWriteError,
    ThatchlabError,
)
from thatchlab.core.params import ScoringParams
from thatchlab.embed import LookupEmbedder
from thatchlab.scoring import BehaviorEngine, PredictionEngine
from thatchlab.store import export_sqlite, import_sqlite

T = "2026-11-29T21:00:00.123Z"


@pytest.fixture
def engines():
    vecs = {"writing tests": basis(0), "use pytest": basis(1), "committing": basis(2),
            "run the linter": basis(3), "editing docs": basis(4), "use British spelling": basis(5)}
    emb = LookupEmbedder(vecs, name="toy-model")
    pred = PredictionEngine(emb, project_store="repo")
    pred.update("writing tests", "use pytest", "confirm", "said so", now=T)
    pred.update("writing tests", "use pytest", "soft", None, now="2026-11-30T10:00:00Z")
    pred.update("editing docs", "use British spelling", "create", "seen in PR", store="global", now=T)
    beh = BehaviorEngine(emb, project_store="repo")
    beh.codify("committing", "run the linter", "caught issues", now=T)
    beh.feedback("run the linter", False, "docs-only change", now=T)
    return pred, beh


def _same_tables(a, b):
    for name in ("stores", "matchers", "items", "edges", "provenance"):
        x, y = a.tables[name], b.tables[name]
        assert list(x.columns) == list(y.columns), name
        assert len(x) == len(y), name
        for col in x.columns:
            if col == "embedding":
                assert [np.asarray(u).tobytes() for u in x[col]] == [np.asarray(v).tobytes() for v in y[col]]
            else:
                assert x[col].tolist() == y[col].tolist(), (name, col)


def test_round_trip_equals_input(tmp_path, engines):
    pred, beh = engines
    res = export_sqlite(tmp_path / "thatch.db", prediction=pred, behavior=beh)
    back = import_sqlite(res.path, embedder=pred.embedder)
    _same_tables(pred, back.prediction)
    _same_tables(beh, back.behavior)
    assert back.prediction.project_store == "repo"
    assert back.meta["engines"] == ["prediction", "behavior"]
    assert back.meta["model"] == "toy-model"
    # the imported engine keeps working
    assert back.prediction.update("writing tests", "use pytest", "confirm", None, now=T).text == \
        '[confirm] "use pytest" confidence=0.62 (2/0.25)'


def test_file_has_production_ddl_blobs_and_timestamps(tmp_path, engines):
    pred, beh = engines
    path = export_sqlite(tmp_path / "t.db", prediction=pred, behavior=beh).path
    con = sqlite3.connect(path)
    assert con.execute("SELECT name FROM stores ORDER BY rowid").fetchall() == [("global",), ("repo",)]
    blob, model, created = con.execute(
        "SELECT embedding, model, created_at FROM prediction_matchers").fetchone()
    assert blob == np.asarray(basis(0), dtype="<f4").tobytes() and len(blob) == 8 * 4
    assert model == "toy-model" and created == "2026-11-29T21:00:00.123Z"
    assert con.execute("SELECT created_at FROM prediction_provenance ORDER BY rowid LIMIT 1").fetchone() == \
        ("2026-11-29T21:00:00Z",)
    dflt = {r[1]: r[4] for r in con.execute("PRAGMA table_info(predictions)")}
    assert dflt["confidence"] == "0.5" and dflt["confirm_count"] == "0"
    assert "strftime" in dflt["created_at"]


def test_production_writes_without_defaults_succeed(tmp_path, engines):
    pred, beh = engines
    path = export_sqlite(tmp_path / "t.db", prediction=pred, behavior=beh).path
    con = sqlite3.connect(path)
    con.execute("PRAGMA foreign_keys = ON")
    pid = con.execute("SELECT id FROM predictions LIMIT 1").fetchone()[0]
    con.execute("INSERT INTO prediction_provenance (id, prediction_id, signal, detail) "
                "VALUES ('p-new', ?, 'confirm', 'from production')", (pid,))
    con.execute("INSERT INTO prediction_matchers (id, store, description) VALUES ('m-new', 'repo', 'x')")
    con.execute("INSERT INTO behaviors (id, store, statement) VALUES ('b-new', 'global', 'y')")
    con.commit()
    created = con.execute("SELECT created_at FROM prediction_provenance WHERE id='p-new'").fetchone()[0]
    assert len(created) == 20 and created.endswith("Z")
    assert con.execute("SELECT confidence, confirm_count FROM behaviors WHERE id='b-new'").fetchone() == (0.5, 0)
    assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_values_no_decision_shipped_are_unreviewed_never_environment_or_recommended(tmp_path, engines):
    pred, beh = engines
    params = {"prediction": ScoringParams(k=8, p0=0.4, threshold=0.55), "behavior": ScoringParams(threshold=0.65)}
    res = export_sqlite(tmp_path / "tuned.db", prediction=pred, behavior=beh, params=params)
    manifest = json.loads(res.manifest_path.read_text())
    assert res.manifest_path.name == "tuned.manifest.json"
    assert manifest["environment"] == [] and manifest["recommended_production_changes"] == {}
    assert manifest["unreviewed"] == {"prediction": {"k": 8.0, "p0": 0.4, "threshold": 0.55},
                                      "behavior": {"threshold": 0.65}}
    assert manifest["params"]["prediction"]["k"] == 8.0
    assert manifest["model"] == "toy-model"
    assert manifest["counts"]["predictions"] == 2 and manifest["counts"]["behaviors"] == 1
    assert any("hard-codes K=5" in n for n in manifest["notes"])
    assert any("unreviewed" in n and "--allow-unreviewed" in n for n in manifest["notes"])
    assert not any("tuned" in n for n in manifest["notes"])
    # the exported confidence is what production computes: its own K=5, P0=0.5
    con = sqlite3.connect(res.path)
    conf = con.execute("SELECT confidence FROM predictions WHERE statement='use pytest'").fetchone()[0]
    assert conf == (1 + 5 * 0.5) / (1 + 0.25 + 5)
    assert manifest["production_constants"] == {"k": 5.0, "p0": 0.5, "soft_weight": 0.25}
    assert "decisions" not in manifest
    # inside the file too, where a merge reads it
    assert import_sqlite(res.path).meta["unreviewed"] == manifest["unreviewed"]


def test_declared_production_constants_are_used_for_confidence(tmp_path, engines):
    pred, _ = engines
    res = export_sqlite(tmp_path / "declared.db", prediction=pred, params=ScoringParams(k=8, p0=0.4),
                        production_constants={"k": 8, "p0": 0.4})
    manifest = json.loads(res.manifest_path.read_text())
    con = sqlite3.connect(res.path)
    conf = con.execute("SELECT confidence FROM predictions WHERE statement='use pytest'").fetchone()[0]
    assert conf == pytest.approx((1 + 8 * 0.4) / (1 + 0.25 + 8))
    assert manifest["recommended_production_changes"] == {} and manifest["unreviewed"] == {}
    assert manifest["declared"] == {"prediction": {"k": 8.0, "p0": 0.4}}
    with pytest.raises(ThatchlabError, match="production_constants"):
        export_sqlite(tmp_path / "bad.db", prediction=pred, production_constants={"k": -1})
    assert not (tmp_path / "bad.db").exists()


class _FakeDecision:
    """The duck type export_sqlite takes from decide (tested against the real one there)."""

    engine = "prediction"

    def __init__(self, params, shipped, records):
        self.params, self._shipped, self._records = params, shipped, records

    def shipped_parameters(self):
        return list(self._shipped)

    def to_records(self):
        return list(self._records)


def test_decision_ships_only_what_it_shipped(tmp_path, engines):
    pred, beh = engines
    record = {"parameter": "threshold", "default": 0.6, "candidate": 0.55, "shipped": False,
              "reason": "interval includes 0", "metric": "interruption_rate", "delta": -0.01,
              "ci_lower": -0.03, "ci_upper": 0.01, "n_clusters": 40, "detectable": 0.02}
    kept = _FakeDecision(ScoringParams(), [], [record])
    res = export_sqlite(tmp_path / "kept.db", prediction=pred, behavior=beh, decision=kept)
    manifest = json.loads(res.manifest_path.read_text())
    # no threshold shipped for predictions, and behaviors keep production's default: no lines
    assert manifest["environment"] == []
    assert manifest["decisions"]["prediction"][0] == record
    combined = manifest["decisions"]["prediction"][1]
    assert combined["parameter"] == "combined" and combined["shipped"] is False
    assert manifest["params"]["prediction"] == ScoringParams().to_dict() and manifest["unreviewed"] == {}
    shipped = _FakeDecision(ScoringParams(threshold=0.55), ["threshold"], [dict(record, shipped=True)])
    res = export_sqlite(tmp_path / "shipped.db", prediction=pred, decision=shipped)
    manifest = json.loads(res.manifest_path.read_text())
    assert manifest["environment"] == ["THATCH_PREDICTION_THRESHOLD=0.55"]
    assert manifest["decisions"]["prediction"][0]["shipped"] is True
    with pytest.raises(ThatchlabError, match="no behavior engine"):
        export_sqlite(tmp_path / "x.db", prediction=pred, decision={"behavior": kept})


def test_existing_target_is_refused_and_kept(tmp_path, engines):
    pred, _ = engines
    target = tmp_path / "t.db"
    target.write_bytes(b"precious")
    with pytest.raises(ExportExistsError):
        export_sqlite(target, prediction=pred)
    assert target.read_bytes() == b"precious"
    with pytest.raises(ExportExistsError, match="is not a thatchlab export"):  # not even with overwrite (issue 36)
        export_sqlite(target, prediction=pred, overwrite=True)
    assert target.read_bytes() == b"precious"
    target.unlink()
    export_sqlite(target, prediction=pred)
    export_sqlite(target, prediction=pred, overwrite=True)  # an earlier export is replaced
    assert import_sqlite(target).prediction is not None


@pytest.mark.parametrize("where", ["missing_dir", "file_as_dir", "proc"])
def test_unwritable_location_raises_and_writes_nothing(tmp_path, engines, where):
    pred, _ = engines
    if where == "missing_dir":
        target = tmp_path / "nope" / "t.db"
    elif where == "file_as_dir":
        (tmp_path / "afile").write_text("x")
        target = tmp_path / "afile" / "t.db"
    else:
        target = "/proc/thatchlab-test.db"
    with pytest.raises(StoreWriteError):
        export_sqlite(target, prediction=pred)
    assert sorted(p.name for p in tmp_path.iterdir()) in ([], ["afile"])


def test_failed_export_leaves_old_target_and_no_temp(tmp_path, engines, monkeypatch):
    pred, _ = engines
    target = tmp_path / "t.db"
    export_sqlite(target, prediction=pred)
    before = target.read_bytes()
    from thatchlab.store import thatch_prediction

    def boom(conn, engine, params):
        conn.execute("INSERT INTO stores(name) VALUES ('half-written')")
        raise OSError("disk full")

    monkeypatch.setattr(thatch_prediction, "write", boom)
    with pytest.raises(StoreWriteError, match="disk full"):
        export_sqlite(target, prediction=pred, overwrite=True)
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.db", "t.manifest.json"]


def test_model_mismatch_is_refused_unless_allowed(tmp_path, engines):
    pred, _ = engines
    with pytest.raises(ModelMismatchError):
        export_sqlite(tmp_path / "a.db", prediction=pred, production_model="Xenova/bge-small-en-v1.5")
    res = export_sqlite(tmp_path / "a.db", prediction=pred, production_model="Xenova/bge-small-en-v1.5",
                        allow_model_mismatch=True)
    assert json.loads(res.manifest_path.read_text())["model"] == "Xenova/bge-small-en-v1.5"


def test_corrupt_foreign_and_incomplete_files(tmp_path):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreSchemaError, match="not a readable SQLite"):
        import_sqlite(bad)
    foreign = tmp_path / "foreign.db"
    con = sqlite3.connect(foreign)
    con.execute("CREATE TABLE customers (id INTEGER)")
    con.commit()
    con.close()
    with pytest.raises(StoreSchemaError, match="no thatchlab or thatch tables"):
        import_sqlite(foreign)
    partial = tmp_path / "partial.db"
    con = sqlite3.connect(partial)
    con.execute("CREATE TABLE stores (name TEXT PRIMARY KEY)")
    con.execute("INSERT INTO stores VALUES ('global')")
    con.execute("CREATE TABLE predictions (id TEXT PRIMARY KEY, store TEXT, statement TEXT)")
    con.commit()
    con.close()
    with pytest.raises(StoreSchemaError, match="partial.db: missing table 'prediction_matchers'"):
        import_sqlite(partial)
    con = sqlite3.connect(partial)
    for ddl in ("CREATE TABLE prediction_matchers (id TEXT, store TEXT, description TEXT, embedding BLOB, "
                "model TEXT, created_at TEXT, updated_at TEXT)",
                "CREATE TABLE prediction_edges (matcher_id TEXT, prediction_id TEXT, weight REAL, created_at TEXT)",
                "CREATE TABLE prediction_provenance (id TEXT, prediction_id TEXT, signal TEXT, detail TEXT, "
                "created_at TEXT)"):
        con.execute(ddl)
    con.commit()
    con.close()
    with pytest.raises(StoreSchemaError, match=r"'predictions' lacks column\(s\) \['rationale'"):
        import_sqlite(partial)
    with pytest.raises(StoreSchemaError, match="no such file"):
        import_sqlite(tmp_path / "missing.db")


@pytest.mark.parametrize("sql, message", [
    (["UPDATE predictions SET confidence = 'not a number' WHERE rowid = 2"],
     r"t.db: table 'predictions', row id='.*' \(rowid 2\), column 'confidence' holds TEXT 'not a number'; "
     r"expected a number \(REAL or INTEGER\)"),
    (["UPDATE predictions SET confirm_count = 9e999"], r"column 'confirm_count' holds REAL Inf"),
    (["UPDATE prediction_matchers SET embedding = '0.1,0.2'"],
     r"table 'prediction_matchers', row id=.*, column 'embedding' holds TEXT '0.1,0.2'; expected a BLOB or NULL"),
    (["UPDATE predictions SET embedding = X'010203' WHERE rowid = 1"],
     r"table 'predictions', row id=.* \(rowid 1\), column 'embedding' holds 3 bytes; expected float32"),
    (["UPDATE predictions SET embedding = X'0000C07F0000C07F0000C07F0000C07F0000C07F0000C07F0000C07F0000C07F'"],
     r"table 'predictions', row id=.*, column 'embedding' holds NaN or infinite values"),
    (["UPDATE prediction_edges SET created_at = X'00'"],
     r"table 'prediction_edges', row 1, column 'created_at' holds BLOB X'00'; expected text"),
    (["UPDATE thatchlab_meta SET value = '\"prediction\"' WHERE key = 'engines'"],
     r"table 'thatchlab_meta', row 'engines', column 'value' is 'prediction'; expected a JSON list"),
    (["UPDATE thatchlab_meta SET value = '[\"prediction\", \"belief\"]' WHERE key = 'engines'"],
     r"lists \['belief'\] but the file holds no tables of it"),
])
def test_import_rejects_cells_production_would_choke_on(tmp_path, engines, sql, message):
    path = edited_export(tmp_path, *sql, prediction=engines[0])
    with pytest.raises(StoreSchemaError, match=message):
        import_sqlite(path)


def test_import_rejects_bad_cells_of_the_other_sections(tmp_path):
    from thatchlab.store import belief, calibration, patterns

    cases = [
        (belief.DDL, "INSERT INTO belief_memories (id, text, captured_at, confidence) "
                     "VALUES ('m1', 'x', '2026-01-01T00:00:00Z', 'high')",
         r"table 'belief_memories', row id='m1' \(rowid 1\), column 'confidence' holds TEXT 'high'"),
        (calibration.DDL, "INSERT INTO memories (id, confidence) VALUES ('m1', 'very')",
         r"table 'memories', row id='m1' \(rowid 1\), column 'confidence' holds TEXT 'very'"),
        (patterns.DDL, "INSERT INTO temporal_patterns (id, type, workspace, trigger_name, target_name, "
                       "confidence, observations) VALUES (0, 'sequential', 'w', 'a', 'b', 'not a number', 3)",
         r"table 'temporal_patterns', row id=0 \(rowid 0\), column 'confidence' holds TEXT 'not a number'"),
        (patterns.DDL, "INSERT INTO temporal_patterns (id, type, workspace, trigger_name, target_name, "
                       "confidence, observations) VALUES (0, 'sequential', 'w', 'a', 'b', 0.5, 2.5)",
         r"column 'observations' holds REAL 2.5; expected an INTEGER"),
    ]
    for i, (ddl, insert, message) in enumerate(cases):
        path = tmp_path / f"s{i}.db"
        con = sqlite3.connect(path)
        for stmt in ddl:
            con.execute(stmt)
        con.execute(insert)
        con.commit()
        con.close()
        with pytest.raises(StoreSchemaError, match=message):
            import_sqlite(path)


def test_short_files_are_not_databases(tmp_path):
    one = tmp_path / "one.db"
    one.write_bytes(b"x")  # SQLite itself would open this as an empty database
    with pytest.raises(StoreSchemaError, match="not a readable SQLite database"):
        import_sqlite(one)
    assert one.read_bytes() == b"x" and sorted(p.name for p in tmp_path.iterdir()) == ["one.db"]


def test_import_is_read_only(tmp_path, engines):
    pred, _ = engines
    path = export_sqlite(tmp_path / "t.db", prediction=pred).path
    before = path.read_bytes()
    back = import_sqlite(path)
    back.prediction  # noqa: B018
    assert path.read_bytes() == before


def test_export_does_not_modify_engine(tmp_path, engines):
    pred, _ = engines
    before = {k: v.drop(columns=["embedding"], errors="ignore") for k, v in pred.tables.items()}
    export_sqlite(tmp_path / "t.db", prediction=pred, params=ScoringParams(k=20))
    for k, v in pred.tables.items():
        pd.testing.assert_frame_equal(before[k], v.drop(columns=["embedding"], errors="ignore"))


def test_reimport_under_another_model_name_answers_like_the_original(tmp_path, engines):
    # a LookupEmbedder over the store's own vectors, named like another model: production
    # matches on dimension only, so the re-imported engines answer exactly like the originals
    pred, beh = engines
    path = export_sqlite(tmp_path / "t.db", prediction=pred, behavior=beh).path
    plain = import_sqlite(path)
    vectors = {}
    for eng in (plain.prediction, plain.behavior):
        t = eng.tables
        vectors.update(zip(t["matchers"]["description"], t["matchers"]["embedding"]))
        vectors.update(zip(t["items"]["statement"], t["items"]["embedding"]))
    back = import_sqlite(path, embedder=LookupEmbedder(vectors, name="Xenova/bge-small-en-v1.5"))
    assert back.meta["model"] == "toy-model"
    for original, reimported, prompts, n_tagged in (
            (pred, back.prediction, ["writing tests", "editing docs", "use British spelling"], 2),
            (beh, back.behavior, ["committing", "run the linter"], 1)):
        for prompt in prompts:
            a, b = original.nudge(prompt), reimported.nudge(prompt)
            pd.testing.assert_frame_equal(a.items, b.items)
            assert (a.text, a.regime) == (b.text, b.regime)
            # every scored matcher (project and global) is tagged toy-model: foreign to the new name
            assert (a.n_foreign_model, b.n_foreign_model) == (0, n_tagged)
    assert back.prediction.nudge("writing tests").items["statement"].tolist() == ["use pytest"]
    assert back.prediction.nudge("editing docs").items["statement"].tolist() == ["use British spelling"]
    assert back.prediction.query("writing tests").text == pred.query("writing tests").text
    strict = import_sqlite(path, embedder=LookupEmbedder(vectors, name="Xenova/bge-small-en-v1.5"))
    strict.prediction.set_params(strict_model=True)
    assert len(strict.prediction.nudge("writing tests")) == 0


def test_export_overwrite_replaces_only_an_earlier_export(tmp_path):
    """overwrite=True onto a production store wiped its memories (issue 36); now only an export,
    or an empty file, is replaced, and the error points to a merge."""
    import shutil

    from tests._stores import toy_export_and_production
    from thatchlab.core.errors import ExportExistsError

    export, prod = toy_export_and_production(tmp_path)
    engine = import_sqlite(export).prediction
    before = prod.read_bytes()
    with pytest.raises(ExportExistsError, match=r"is not a thatchlab export \(it holds tables no export writes: "
                                                r"entries\).*thatchlab merge EXPORT"):
        export_sqlite(prod, prediction=engine, overwrite=True)
    assert prod.read_bytes() == before
    bare = tmp_path / "bare.db"  # the thatch tables alone, no thatchlab_meta: a production store too
    con = sqlite3.connect(prod)
    con.execute("DROP TABLE entries")
    con.commit()
    con.close()
    shutil.copy(prod, bare)
    with pytest.raises(ExportExistsError, match="no thatchlab_meta table: a production store"):
        export_sqlite(bare, prediction=engine, overwrite=True)
    log = tmp_path / "log.jsonl"
    log.write_text('{"ts": "2026-01-01T00:00:00Z"}\n')
    with pytest.raises(ExportExistsError, match="not a SQLite database: a log or another file"):
        export_sqlite(log, prediction=engine, overwrite=True)
    assert export_sqlite(export, prediction=engine, overwrite=True).path == export
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    assert export_sqlite(empty, prediction=engine, overwrite=True).path == empty
