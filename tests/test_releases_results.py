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


# -- sweeps and decisions -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def two_release_sweep():
    from thatchlab.sweep import sweep
    from thatchlab.synth import PreferenceWorld

    w = PreferenceWorld(n_users=2, n_situations=4, seed=0)
    return sweep(w.log(120), {"k": [2.0, 5.0], "release": ["v0.1.30", "07ecf87"]}, "log_loss",
                 embedder=w.lookup_embedder())


def test_sweep_rows_carry_their_release_and_it_is_never_unidentified(two_release_sweep, tmp_path):
    from thatchlab.sweep import pareto
    from thatchlab.sweep.persist import load_sweep, save_sweep

    res = two_release_sweep
    assert res["release"].tolist() == ["v0.1.30", "07ecf87", "v0.1.30", "07ecf87"]
    assert res["k"].tolist() == [2.0, 2.0, 5.0, 5.0]
    # the release is the context of a row, not a parameter the metric fails to see
    assert res.attrs["unidentified"] == [] and res.attrs["identification"] == {"log_loss": []}
    save_sweep(res, tmp_path / "s.parquet")
    back = load_sweep(tmp_path / "s.parquet")
    assert back["release"].tolist() == res["release"].tolist()
    assert back["val_log_loss"].tolist() == res["val_log_loss"].tolist()
    assert set(pareto(res, ["log_loss", "brier"])["release"]) <= {"v0.1.30", "07ecf87"}


def test_decide_refuses_a_sweep_over_several_releases_and_names_the_one_it_compared_under(two_release_sweep):
    from thatchlab.core.errors import InputError
    from thatchlab.core.params.production import production_params
    from thatchlab.decide import Decision, decide

    with pytest.raises(InputError, match=r"the sweep's rows replay 2 production releases \(thatch v0.1.30, "
                                         r"thatch 07ecf87\).*results\[results\['release'\] == '07ecf87'\]"):
        decide(two_release_sweep, "log_loss", n_boot=200)
    old = two_release_sweep[two_release_sweep["release"] == "v0.1.30"]
    d = decide(old, "log_loss", n_boot=200)
    assert d.release == "v0.1.30" and d.default == production_params("prediction", release="v0.1.30")
    assert d.evidence["parameter"].tolist() == ["k"]  # the release is never a candidate
    assert d.combined_record()["release"] == "v0.1.30"
    assert d.summary().startswith("Decision(prediction, log_loss) under thatch v0.1.30: ship")
    assert "thatch v0.1.30" in d._repr_html_()
    assert Decision.from_dict(d.to_dict()).release == "v0.1.30" and d.to_dict()["release"] == "v0.1.30"
    with pytest.raises(InputError, match="default: it is production under release '07ecf87' but the sweep "
                                         "replayed release 'v0.1.30'"):
        decide(old, "log_loss", n_boot=200, default=production_params("prediction"))


# -- replay results -----------------------------------------------------------------------------------

def test_a_replay_result_says_which_release_it_replayed():
    from thatchlab.replay import run
    from thatchlab.synth import PreferenceWorld

    w = PreferenceWorld(n_users=2, n_situations=4, seed=0)
    res = run(w.log(40), params=ScoringParams(release="v0.1.30"), embedder=w.lookup_embedder())
    assert res.release == "v0.1.30" and "release='v0.1.30'" in repr(res)
    assert "thatch v0.1.30" in res._repr_html_()
    assert run(w.log(40), embedder=w.lookup_embedder()).release == "07ecf87"


def test_the_other_replay_results_name_their_release():
    from thatchlab.core.params import AnticipationParams, CalibrationParams
    from thatchlab.replay.anticipation import AnticipationReplayResult
    from thatchlab.replay.belief import run_belief
    from thatchlab.replay.calibration import run_calibration
    from thatchlab.synth.belief import BeliefWorld
    from thatchlab.synth.recall import RecallWorld

    log = BeliefWorld(seed=3).log(n_memories=20, days=30)
    assert run_belief(log, BeliefParams(release="4d5d5c5")).release == "4d5d5c5"
    assert run_belief(log).release == "17fecf7"

    cal = run_calibration(RecallWorld(n_memories=10, n_recalls=30, seed=1).log, CalibrationParams(release="v0.7.0"))
    assert cal.release == "v0.7.0"
    import pandas as pd

    ant = AnticipationReplayResult(pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), {}, AnticipationParams())
    assert ant.release == "seed"


# -- the main job ---------------------------------------------------------------------------------------

def _behavior_only(tmp_path):
    import shutil

    from thatchlab.datasets import samples_dir

    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(samples_dir() / "behavior_interactions.jsonl", data)
    return data


def _header_cells(html_text):
    import html
    import re

    head = html_text[:html_text.index("<h2>")]
    cells = re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td><td><code>(.*?)</code></td></tr>", head)
    return {html.unescape(e): html.unescape(r) for e, r, _, _ in cells}, html.unescape(re.sub(r"<[^>]+>", "", head))


@pytest.mark.filterwarnings("ignore:replay")
def test_the_main_job_runs_the_newest_releases_and_says_so(tmp_path, real_embedder):
    from thatchlab.run import run_all

    res = run_all(_behavior_only(tmp_path), tmp_path / "out", embedder=real_embedder, show_progress=False)
    rows, head = _header_cells(res.report_path.read_text())
    assert rows == {"behavior": "thatch 07ecf87 (newest)"}
    assert "production releases: thatch 07ecf87 (each system's newest)" in head
    assert json.loads(res.manifest_path.read_text())["releases"] == {"behavior": "07ecf87"}
    job = json.loads((res.out_dir / "results" / "job.json").read_text())
    assert job["releases"] == {"behavior": "07ecf87"}


@pytest.mark.filterwarnings("ignore:replay")
def test_run_release_selects_an_older_release_from_the_command_line_or_the_config(tmp_path, capsys):
    data = _behavior_only(tmp_path)
    code, out, err = run(["run", "--data", str(data), "--out", str(tmp_path / "a"), "--release", "thatch=v0.1.30"],
                         capsys)
    assert code == 0, err
    rows, head = _header_cells((tmp_path / "a" / "index.html").read_text())
    assert rows == {"behavior": "thatch v0.1.30 (newest: 07ecf87)"}
    assert "production releases: thatch v0.1.30 (not all the newest: see below)" in head
    assert json.loads((tmp_path / "a" / "thatch.manifest.json").read_text())["releases"] == {"behavior": "v0.1.30"}
    # the config file: a params field of the engine's section, or the [release] table
    cfg = tmp_path / "c.toml"
    cfg.write_text('[behavior]\nrelease = "v0.1.30"\n')
    code, out, err = run(["run", "--data", str(data), "--out", str(tmp_path / "b"), "--config", str(cfg)], capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "b" / "results" / "job.json").read_text())["releases"] == {"behavior": "v0.1.30"}


def test_run_release_errors_are_one_line(tmp_path, capsys):
    from thatchlab.core.errors import InputError
    from thatchlab.run import load_config

    for argv, needle in ((["--release", "thatch"], "expected SYSTEM=RELEASE (e.g. thatch=v0.1.30), got 'thatch'"),
                         (["--release", "thatch=v9"], "thatch has no release 'v9'; known releases (oldest first): "
                                                      "v0.1.30, 07ecf87"),
                         (["--release", "mem0=v1"], "unknown system 'mem0'; expected some of thatch, omi, "
                                                    "ai-memory, mnemo")):
        code, _, err = run(["run", "--data", str(tmp_path), "--out", str(tmp_path / "o"), *argv], capsys)
        lines = [ln for ln in err.splitlines() if ln]
        assert code == 2 and len(lines) == 1 and needle in lines[0], err
    cfg = tmp_path / "c.toml"
    cfg.write_text('[release]\nomi = "4d5d5c6"\n')
    with pytest.raises(InputError, match=r"section \[release\]: .*omi has no release '4d5d5c6'"):
        load_config(cfg)
    cfg.write_text('[release]\nomi = "latest"\nthatch = "v0.1.30"\n')
    assert load_config(cfg)["release"] == {"omi": "latest", "thatch": "v0.1.30"}


# -- the parameter reference shows values per release ------------------------------------------------------

#: The per-release tables of docs/parameters.md: one per params class, field × release.
_RELEASE_TABLES = {"ScoringParams": ("prediction", "thatch"), "BeliefParams": ("belief", "omi"),
                   "CalibrationParams": ("calibration", "ai-memory"), "AnticipationParams": ("anticipation", "mnemo")}


def release_tables() -> str:
    """The markdown of the per-release tables, from production_params(engine, release) (print it to
    regenerate the section of docs/parameters.md)."""
    import dataclasses

    from thatchlab.core.params import release_names
    from thatchlab.core.params.production import production_params

    out = []
    for name, (engine, system) in _RELEASE_TABLES.items():
        releases = release_names(system)
        params = [production_params(engine, r) for r in releases]
        out.append(f"### `{name}` ({system})\n")
        out.append("| field | " + " | ".join(f"`{r}`" for r in releases) + " |")
        out.append("|---|" + "---|" * len(releases))
        for f in dataclasses.fields(params[0]):
            out.append(f"| {f.name} | " + " | ".join(f"`{getattr(p, f.name)!r}`" for p in params) + " |")
        if name == "ScoringParams":
            out.append("| item dedup scope (the release's rule) | "
                       + " | ".join(f"`{p.item_dedup_scope!r}`" for p in params) + " |")
        out.append("")
    return "\n".join(out)


def test_the_parameter_reference_shows_values_per_release(repo_root):
    text = (repo_root / "docs" / "parameters.md").read_text(encoding="utf-8")
    assert release_tables() in text, "docs/parameters.md: regenerate the per-release tables:\n" + release_tables()


if __name__ == "__main__":  # python -m tests.test_releases_results: the per-release tables
    print(release_tables())
