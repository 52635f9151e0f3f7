"""The documentation site: the glossary and parameter reference are complete,
the package cites no document it does not ship, and the site builds
warnings-as-errors."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
import warnings

import pytest

from tests.conftest import ROOT

DOCS = ROOT / "docs"
DATA = ROOT / "data"


def glossary_terms() -> set[str]:
    """Terms of every ``{glossary}`` block of docs/glossary.md (unindented lines)."""
    text = (DOCS / "glossary.md").read_text(encoding="utf-8")
    terms = set()
    for block in re.findall(r"```\{glossary\}\n(.*?)\n```", text, flags=re.S):
        terms.update(line.strip() for line in block.splitlines() if line and not line[0].isspace())
    return terms


@pytest.fixture(scope="module")
def printed_metric_names(real_embedder) -> set[str]:
    """Every metric name the toolkit prints, collected from the code itself."""
    from thatchlab import logs, metrics, replay
    from thatchlab.decide._core import EVIDENCE_COLUMNS
    from thatchlab.fit import HalfLifeFitter, PriorFitter
    from thatchlab.sweep import engines, get_engine, sweep

    names: set[str] = set()
    warnings.filterwarnings("ignore", category=UserWarning)  # inside pytest's per-test catch
    log = logs.read_interaction_log(DATA / "interactions.jsonl")
    res = replay.run(log, engine="prediction", embedder=real_embedder)
    names |= set(res.metrics)
    behavior = logs.read_interaction_log(DATA / "behavior_interactions.jsonl")
    names |= set(replay.run(behavior, engine="behavior", embedder=real_embedder).metrics)
    memory = logs.read_memory_log(DATA / "memory_log.jsonl")
    belief = replay.run_belief(memory)
    names |= set(belief.metrics) | set(belief.band_table.columns)
    calib = replay.run_calibration(logs.read_recall_log(DATA / "recall_log.jsonl"))
    names |= set(calib.metrics) | set(calib.reliability.columns)
    report = calib.report.to_frame()
    names |= set(report.columns) | {"window_days", "total_observations", "rows"}
    ant = replay.run_anticipation(logs.read_event_log(DATA / "events.jsonl"),
                                  logs.read_recall_stream(DATA / "recalls.jsonl"))
    names |= set(ant.metrics)
    # the sweep registry: every registered metric of every engine
    for engine in engines():
        names |= set(get_engine(engine).metrics)
    # counterfactual rows, decision evidence, fitter summaries
    cf = metrics.counterfactual_metrics(res, log, n_boot=0)
    names |= set(cf.columns) | set(cf["metric"])
    names |= set(EVIDENCE_COLUMNS) | {"p_value", "optimism", "n_configs", "unidentified"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        names |= set(HalfLifeFitter().fit_from_log(memory).summary_.columns)
        signals = res.tables["provenance"].rename(columns={"prediction_id": "item_id"})
        names |= set(PriorFitter().fit(signals[["item_id", "signal"]]).summary_.columns)
        # a sweep's own columns besides the parameters and the val_/test_ metric columns
        sw = sweep(memory, {"episodic": [3.0, 7.0]}, "brier", engine="belief")
    names |= {"coef", "se", "ci_lower", "ci_upper", "identified", "hand_set", "bound", "note"}  # DeriveWeightsFitter
    fields = {f.name for f in dataclasses.fields(belief.params)}
    names |= {c for c in sw.columns if c not in fields and not c.startswith(("val_", "test_"))}
    names |= {c.split("_", 1)[1] for c in sw.columns if c.startswith(("val_", "test_"))}
    return names


def test_glossary_covers_every_printed_metric(printed_metric_names):
    terms = glossary_terms()
    missing = sorted(printed_metric_names - terms)
    assert not missing, f"docs/glossary.md has no entry for {missing}"
    assert {"val_<metric>", "test_<metric>"} <= terms


def test_glossary_entries_are_unique():
    text = (DOCS / "glossary.md").read_text(encoding="utf-8")
    seen: list[str] = []
    for block in re.findall(r"```\{glossary\}\n(.*?)\n```", text, flags=re.S):
        seen += [line.strip().lower() for line in block.splitlines() if line and not line[0].isspace()]
    dupes = sorted({t for t in seen if seen.count(t) > 1})
    assert not dupes, f"glossary terms defined twice: {dupes}"


def test_parameter_reference_lists_every_field():
    from thatchlab.core import params

    text = (DOCS / "parameters.md").read_text(encoding="utf-8")
    sections = dict(re.findall(r"^## `(\w+)`\n(.*?)(?=^## |\Z)", text, flags=re.S | re.M))
    for cls in (params.ScoringParams, params.BeliefParams, params.CalibrationParams,
                params.AnticipationParams):
        assert cls.__name__ in sections, f"docs/parameters.md has no section for {cls.__name__}"
        listed = set(re.findall(r"^\| `(\w+)` \|", sections[cls.__name__], flags=re.M))
        fields = {f.name for f in dataclasses.fields(cls)}
        assert listed == fields, (cls.__name__, sorted(fields - listed), sorted(listed - fields))
    assert "THATCH_PREDICTION_THRESHOLD" in sections["ScoringParams"]
    assert "THATCH_BEHAVIOR_THRESHOLD" in sections["ScoringParams"]


# Citations of documents the package does not ship: design notes and seed documents.
UNSHIPPED = re.compile(r"DESIGN|seeds? 00\d|\(seeds? \d|§")


def test_package_cites_no_unshipped_document():
    hits = []
    for path in sorted((ROOT / "thatchlab").rglob("*.py")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if UNSHIPPED.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not hits, "\n".join(hits)


def test_docs_build_warnings_as_errors(tmp_path):
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-j", "1", "-q", "-E",
           "-d", str(tmp_path / "doctrees"), "-b", "html", str(DOCS), str(tmp_path / "html")]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]
    for page in ("index", "getting_started", "glossary", "parameters", "api/index",
                 "user_guide/scoring", "notebooks/00_quickstart"):
        assert (tmp_path / "html" / f"{page}.html").is_file(), page
    # the left navigation lists the section's pages wherever it is shown
    for page in ("glossary", "parameters", "api/tune", "user_guide/scoring", "notebooks/02_tuning"):
        html = (tmp_path / "html" / f"{page}.html").read_text(encoding="utf-8")
        nav = html.split('class="bd-docs-nav', 1)[1].split("</nav>", 1)[0]
        assert nav.count("toctree-l1") >= 3, page
    assert 'class="bd-docs-nav' not in (tmp_path / "html" / "getting_started.html").read_text(encoding="utf-8")
    assert (tmp_path / "html" / "_static" / "thatchlab.css").is_file()


def test_the_getting_started_tour_runs_and_writes_nothing_where_it_runs(tmp_path):
    """Every ```python block of the page, in order, as a newcomer pastes them, from an empty directory."""
    import shutil
    from pathlib import Path

    page = (ROOT / "docs" / "getting_started.md").read_text(encoding="utf-8")
    code = "\n".join(re.findall(r"```python\n(.*?)```", page, re.S))
    assert "prior_signals()" in code and "rename(columns" not in code  # the README's fitter glue
    script = tmp_path / "tour.py"
    script.write_text(code + "\nprint('OUT', out_dir)\n", encoding="utf-8")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    proc = subprocess.run([sys.executable, str(script)], cwd=cwd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out_dir = Path(proc.stdout.strip().splitlines()[-1].split(" ", 1)[1])
    assert (out_dir / "thatch.db").is_file()
    assert list(cwd.iterdir()) == []
    # the page ends with a merge and its undo (issue 36): production as it was, both backups listed
    last = page.rsplit("```python\n", 1)[1]
    assert "merge_into(" in last and "restore(" in last
    import sqlite3

    con = sqlite3.connect(out_dir / "production.db")
    try:
        assert con.execute("SELECT COUNT(*) FROM predictions").fetchone() == (0,)
        assert con.execute("SELECT body FROM entries").fetchall() == [("a memory thatchlab never touches",)]
    finally:
        con.close()
    from thatchlab.store import list_backups

    assert list(list_backups(out_dir / "production.db")["reason"]) == ["merge", "before restore"]
    shutil.rmtree(out_dir)
