"""Every result says which production release it replayed (issue 31, points 5 and 6): exports and
their manifests name each engine's release, ``import_sqlite`` opens a file in the release it was
made for (or the one asked for, or the one a production file's schema shows), and a merge refuses
an export made for another release than production runs.

The schema rule: thatch's ``src/db.ts`` (sysread/thatch @2ed97f2a; stored version 09b805fe read)
creates ``prediction_dedup_pairs`` on every open; v0.1.30 has no such table.
"""

import json
import sqlite3

import numpy as np
import pytest

from tests._ingest import cli as run
from tests._stores import PAIRS_DDL, production_ddl
from thatchlab.belief import BeliefStore
from thatchlab.core.errors import ReleaseMismatchError
from thatchlab.core.params import BeliefParams, ReleaseError, ScoringParams
from thatchlab.core.schema import STORES_DDL, thatch_ddl
from thatchlab.embed import LookupEmbedder
from thatchlab.scoring import PredictionEngine
from thatchlab.store import export_sqlite, import_sqlite, merge_into

T = "2026-02-01T10:00:00Z"


def _engine(release="latest"):
    vecs = {"writing tests": np.eye(8)[0], "use pytest": np.eye(8)[1]}
    eng = PredictionEngine(LookupEmbedder(vecs, name="toy"), params=ScoringParams(release=release),
                           project_store="repo")
    eng.update("writing tests", "use pytest", "confirm", "x", now=T)
    return eng


def _production(path, release="07ecf87", meta=False):
    con = sqlite3.connect(path)
    con.execute(STORES_DDL)
    for kind in ("prediction", "behavior"):
        for stmt in production_ddl(kind, release):
            con.execute(stmt)
    con.execute("INSERT INTO stores VALUES ('global')")
    con.execute("CREATE TABLE entries (id INTEGER PRIMARY KEY, body TEXT)")
    con.execute("INSERT INTO entries (body) VALUES ('a memory')")
    con.commit()
    con.close()
    return path


def test_an_export_names_each_engine_s_release_in_its_meta_and_manifest(tmp_path):
    beliefs = BeliefStore(params=BeliefParams(release="4d5d5c5"))
    res = export_sqlite(tmp_path / "e.db", prediction=_engine("v0.1.30"), beliefs=beliefs)
    manifest = json.loads(res.manifest_path.read_text())
    assert manifest["releases"] == {"prediction": "v0.1.30", "belief": "4d5d5c5"}
    back = import_sqlite(res.path)
    assert back.meta["releases"] == {"belief": "4d5d5c5", "prediction": "v0.1.30"}
    # the release is the context the values are compared under: never unreviewed, never shipped
    assert manifest["unreviewed"] == {} and manifest["environment"] == []
    res = export_sqlite(tmp_path / "n.db", prediction=_engine())
    assert json.loads(res.manifest_path.read_text())["releases"] == {"prediction": "07ecf87"}


def test_a_value_is_unreviewed_against_production_of_its_own_release(tmp_path):
    eng = _engine("v0.1.30")
    res = export_sqlite(tmp_path / "e.db", prediction=eng, params=ScoringParams(release="v0.1.30", k=2.0))
    assert json.loads(res.manifest_path.read_text())["unreviewed"] == {"prediction": {"k": 2.0}}


def test_import_opens_the_release_the_file_names_or_the_one_asked_for(tmp_path):
    path = export_sqlite(tmp_path / "e.db", prediction=_engine("v0.1.30")).path
    got = import_sqlite(path)
    # every export holds thatch's tables; the empty behavior section follows the release named for thatch
    assert got.prediction.params.release == "v0.1.30"
    assert got.releases == {"prediction": "v0.1.30", "behavior": "v0.1.30"}
    got = import_sqlite(path, release="07ecf87")
    assert got.prediction.params.release == "07ecf87" and got.prediction.params.item_dedup_scope == "store+global"
    path = export_sqlite(tmp_path / "n.db", prediction=_engine()).path
    eng = import_sqlite(path, embedder=None, release="v0.1.30").prediction
    assert eng.params.release == "v0.1.30" and eng.params.item_dedup_scope == "store"
    assert import_sqlite(path, release={"thatch": "latest"}).prediction.params.release == "07ecf87"


def test_a_production_file_opens_in_the_release_its_schema_shows(tmp_path):
    new = _production(tmp_path / "new.db", "07ecf87")
    old = _production(tmp_path / "old.db", "v0.1.30")
    assert import_sqlite(new).prediction.params.release == "07ecf87"
    assert import_sqlite(old).prediction.params.release == "v0.1.30"
    assert import_sqlite(old).behavior.params.release == "v0.1.30"
    assert import_sqlite(new).releases == {"prediction": "07ecf87", "behavior": "07ecf87"}
    assert import_sqlite(new, release="v0.1.30").prediction.params.release == "v0.1.30"


def test_an_unknown_or_foreign_release_is_a_typed_error_listing_the_known_ones(tmp_path):
    path = export_sqlite(tmp_path / "e.db", prediction=_engine()).path
    with pytest.raises(ReleaseError, match=r"release 'v9' is no release of the systems this file holds "
                                           r"\(thatch: v0.1.30, 07ecf87; or 'latest'\)"):
        import_sqlite(path, release="v9")
    with pytest.raises(ReleaseError, match="has no release 'v9'"):
        import_sqlite(path, release={"thatch": "v9"})
    with pytest.raises(ReleaseError, match="release given for 'omi' but the file holds no omi tables"):
        import_sqlite(path, release={"omi": "17fecf7"})
    beliefs = export_sqlite(tmp_path / "b.db", beliefs=BeliefStore()).path
    with pytest.raises(ReleaseError, match=r"\(thatch: v0.1.30, 07ecf87; omi: 4d5d5c5, 17fecf7; or 'latest'\)"):
        import_sqlite(beliefs, release="a78a228")  # an ai-memory release
    assert import_sqlite(beliefs, release="4d5d5c5").beliefs.params.release == "4d5d5c5"


def test_a_merge_refuses_an_export_made_for_another_release_unless_told(tmp_path):
    export = export_sqlite(tmp_path / "e.db", prediction=_engine("v0.1.30")).path
    prod = _production(tmp_path / "prod.db", "07ecf87")
    before = prod.read_bytes()
    with pytest.raises(ReleaseMismatchError) as exc:
        merge_into(export, prod)
    assert "the export was made prediction for thatch v0.1.30" in str(exc.value)
    assert "runs thatch 07ecf87 (its schema has a prediction_dedup_pairs table)" in str(exc.value)
    assert (exc.value.export_release, exc.value.production_release) == ("v0.1.30", "07ecf87")
    assert prod.read_bytes() == before and not list(tmp_path.glob("prod.db.*.bak"))
    res = merge_into(export, prod, allow_release_mismatch=True)
    assert res.replaced["predictions"] == 1
    # the other way round: an export for today's thatch into a v0.1.30 file
    old = _production(tmp_path / "old.db", "v0.1.30")
    newer = export_sqlite(tmp_path / "n.db", prediction=_engine()).path
    with pytest.raises(ReleaseMismatchError, match="runs thatch v0.1.30 .its schema has no prediction_dedup_pairs"):
        merge_into(newer, old)
    assert merge_into(export, old).replaced["predictions"] == 1  # the same release merges


def test_the_cli_refuses_a_release_mismatch_with_one_line_and_exit_2(tmp_path, capsys):
    export = export_sqlite(tmp_path / "e.db", prediction=_engine("v0.1.30")).path
    prod = _production(tmp_path / "prod.db", "07ecf87")
    before = prod.read_bytes()
    code, out, err = run(["merge", str(export), str(prod)], capsys)
    lines = [ln for ln in err.splitlines() if ln]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: ")
    assert "thatch v0.1.30" in lines[0] and "runs thatch 07ecf87" in lines[0]
    assert prod.read_bytes() == before
    code, out, _ = run(["merge", str(export), str(prod), "--allow-release-mismatch"], capsys)
    assert code == 0 and "merged prediction into" in out
    code, out, _ = run(["import", str(prod)], capsys)
    assert code == 0 and "releases: prediction thatch 07ecf87, behavior thatch 07ecf87" in out


def test_the_pairs_table_helper_matches_the_ddl_rule():
    assert "prediction_dedup_pairs" in PAIRS_DDL
    assert len(production_ddl("prediction", "07ecf87")) == len(thatch_ddl("prediction")) + (
        0 if any("prediction_dedup_pairs" in s for s in thatch_ddl("prediction")) else 1)
