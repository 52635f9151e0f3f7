"""Killed writers: an export or merge killed mid-write (SIGKILL) never damages the target."""

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import pytest

from thatchlab.store import import_sqlite

WRITER = textwrap.dedent("""
    import sys, numpy as np, pandas as pd
    from thatchlab.scoring import PredictionEngine
    from thatchlab.embed import LookupEmbedder
    from thatchlab.store import export_sqlite, merge_into
    mode, target, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rng = np.random.default_rng(0)
    ts = "2026-01-01T00:00:00.000Z"
    vec = list(rng.normal(size=(n, 384)).astype(np.float32))
    tables = {
        "stores": pd.DataFrame({"name": ["global", "project"]}),
        "matchers": pd.DataFrame({"id": [f"m{i}" for i in range(n)], "store": "project",
            "description": [f"d{i}" for i in range(n)], "embedding": vec, "model": "r",
            "created_at": ts, "updated_at": ts}),
        "items": pd.DataFrame({"id": [f"p{i}" for i in range(n)], "store": "project",
            "statement": [f"s{i}" for i in range(n)], "rationale": None, "embedding": vec, "model": "r",
            "confidence": 0.5, "confirm_count": 0.0, "disconfirm_count": 0.0,
            "created_at": ts, "updated_at": ts}),
        "edges": pd.DataFrame({"matcher_id": [f"m{i}" for i in range(n)],
            "prediction_id": [f"p{i}" for i in range(n)], "weight": 1.0, "created_at": ts}),
        "provenance": pd.DataFrame(columns=["id", "prediction_id", "signal", "detail", "created_at"]),
    }
    eng = PredictionEngine.from_tables(tables, embedder=LookupEmbedder({"x": [1.0] * 384}, name="r"))
    export = target + ".export.db"
    export_sqlite(export, prediction=eng, overwrite=True)
    print("ready", flush=True)
    while True:
        if mode == "export":
            export_sqlite(target, prediction=eng, overwrite=True)
        else:
            merge_into(export, target)
""")


def _start(tmp_path, mode, target, n=3000):
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    proc = subprocess.Popen([sys.executable, str(script), mode, str(target), str(n)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
    return proc


def _kill_after(proc, delay):
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


def _target_is_whole(target):
    con = sqlite3.connect(target)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        con.close()


@pytest.mark.parametrize("delay", [0.05, 0.3, 0.8])
def test_export_killed_mid_write_leaves_target_intact(tmp_path, delay):
    target = tmp_path / "store.db"
    proc = _start(tmp_path, "export", target)
    time.sleep(0.05)
    _kill_after(proc, delay)
    if target.exists():
        _target_is_whole(target)
        assert len(import_sqlite(target).prediction.tables["items"]) == 3000
    # any leftover is a hidden temp file of the database or of its manifest (a kill can land in
    # either write), never the target; the next write of each removes it
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert all(name.startswith((".store.db.", ".store.manifest.json.")) for name in leftovers), leftovers
    from thatchlab.store._core import write_bytes_atomic
    for name in ("store.db", "store.manifest.json"):
        path = tmp_path / name
        write_bytes_atomic(path, path.read_bytes() if path.exists() else b"")
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


@pytest.mark.parametrize("delay", [0.1, 0.5])
def test_merge_killed_mid_write_keeps_production(tmp_path, delay):
    prod = tmp_path / "prod.db"
    con = sqlite3.connect(prod)
    con.execute("CREATE TABLE entries (id INTEGER PRIMARY KEY, body TEXT)")
    con.executemany("INSERT INTO entries (body) VALUES (?)", [(f"memory {i}",) for i in range(500)])
    con.commit()
    con.close()
    proc = _start(tmp_path, "merge", prod)
    _kill_after(proc, delay)
    _target_is_whole(prod)
    con = sqlite3.connect(prod)
    assert con.execute("SELECT COUNT(*) FROM entries").fetchone() == (500,)
    con.close()


def test_next_export_removes_a_dead_writers_temp_files(tmp_path):
    """A writer killed inside either of an export's two atomic writes (database, then manifest)
    leaves a hidden temp file; the next export to that path removes both kinds."""
    from tests._stores import toy_export_and_production

    export, _ = toy_export_and_production(tmp_path)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = [tmp_path / f".export.db.{dead.pid}.tmp", tmp_path / f".export.manifest.json.{dead.pid}.tmp"]
    for p in stale:
        p.write_bytes(b"half a write")
    from thatchlab.store import export_sqlite

    before = import_sqlite(export).prediction.tables["items"]
    out = export_sqlite(export, prediction=import_sqlite(export).prediction, overwrite=True)
    assert [p.exists() for p in stale] == [False, False]
    assert out.manifest_path.name == "export.manifest.json"
    assert import_sqlite(export).prediction.tables["items"]["statement"].tolist() == before["statement"].tolist()
