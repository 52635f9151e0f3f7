"""merge_into: ship an export into a production file that holds more than thatchlab knows.

The later tests inject faults (a failure inside the transaction, a real file
size limit, SIGKILL, a second merge, a busy writer) and compare every table's
rows: production holds exactly the old content or exactly the new one.
"""

import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from tests._stores import production_ddl
from tests._stores import rows as _rows
from tests._vectors import basis
from thatchlab.core.errors import StoreSchemaError, StoreWriteError
from thatchlab.core.schema import STORES_DDL
from thatchlab.embed import LookupEmbedder
from thatchlab.scoring import BehaviorEngine, PredictionEngine
from thatchlab.store import _merge as merge_module
from thatchlab.store import export_sqlite, import_sqlite, merge_into, restore

T = "2026-02-01T10:00:00Z"


def _production(path, wal=False):
    con = sqlite3.connect(path)
    if wal:
        con.execute("PRAGMA journal_mode=WAL")
    con.execute(STORES_DDL)
    for kind in ("prediction", "behavior"):
        for stmt in production_ddl(kind):
            con.execute(stmt)
    # the rows production learned before the export's log ended (T), in the store the export replaces
    old = "'2026-01-15T08:00:00Z', '2026-01-15T08:00:00Z'"
    con.execute("INSERT INTO stores VALUES ('global'), ('new-repo')")
    con.execute("INSERT INTO predictions (id, store, statement, created_at, updated_at) "
                f"VALUES ('old-p', 'new-repo', 'old prediction', {old})")
    con.execute("INSERT INTO prediction_matchers (id, store, description, created_at, updated_at) "
                f"VALUES ('old-m', 'new-repo', 'old m', {old})")
    con.execute("INSERT INTO prediction_edges (matcher_id, prediction_id) VALUES ('old-m', 'old-p')")
    con.execute("INSERT INTO behaviors (id, store, statement, created_at, updated_at) "
                f"VALUES ('keep-b', 'global', 'a user rule', {old})")
    con.execute("CREATE TABLE entries (id INTEGER PRIMARY KEY, body TEXT, embedding BLOB)")
    con.execute("CREATE TABLE dedup_pairs (a INTEGER, b INTEGER)")
    con.execute("CREATE TABLE something_else (k TEXT, v TEXT)")
    con.executemany("INSERT INTO entries (body) VALUES (?)", [(f"memory {i}",) for i in range(50)])
    con.execute("INSERT INTO dedup_pairs VALUES (1, 2)")
    con.execute("INSERT INTO something_else VALUES ('x', 'y')")
    con.commit()
    return con


def _export(tmp_path):
    vecs = {"writing tests": basis(0), "use pytest": basis(1)}
    eng = PredictionEngine(LookupEmbedder(vecs, name="toy"), project_store="new-repo")
    eng.update("writing tests", "use pytest", "confirm", "x", now=T)
    return export_sqlite(tmp_path / "export.db", prediction=eng).path, eng


def test_merge_replaces_only_exported_engine_and_keeps_everything_else(tmp_path):
    prod = tmp_path / "thatch.db"
    _production(prod).close()
    before_entries = _rows(prod, "SELECT * FROM entries ORDER BY id")
    before_dump = list(sqlite3.connect(prod).iterdump())
    export, eng = _export(tmp_path)
    res = merge_into(export, prod)
    assert _rows(prod, "SELECT statement FROM predictions") == [("use pytest",)]
    assert _rows(prod, "SELECT id FROM behaviors") == [("keep-b",)]  # prediction-only export
    assert _rows(prod, "SELECT * FROM entries ORDER BY id") == before_entries
    assert _rows(prod, "SELECT * FROM dedup_pairs") == [(1, 2)]
    assert _rows(prod, "SELECT * FROM something_else") == [("x", "y")]
    assert _rows(prod, "SELECT name FROM stores ORDER BY rowid") == [("global",), ("new-repo",)]
    assert _rows(prod, "SELECT COUNT(*) FROM prediction_edges") == [(1,)]
    assert _rows(prod, "PRAGMA integrity_check") == [("ok",)]
    assert list(sqlite3.connect(res.backup_path).iterdump()) == before_dump
    assert res.removed["predictions"] == 1 and res.replaced["predictions"] == 1
    assert res.engines == ["prediction"]
    ids = eng.tables["items"]["id"].tolist()
    assert _rows(prod, "SELECT id FROM predictions") == [(ids[0],)]


def test_merge_sees_uncheckpointed_wal_content(tmp_path):
    prod = tmp_path / "thatch.db"
    con = _production(prod, wal=True)  # left open: its writes may live in the WAL
    con.execute("INSERT INTO entries (body) VALUES ('written last')")
    con.commit()
    export, _ = _export(tmp_path)
    merge_into(export, prod, backup=False)
    con.close()
    assert _rows(prod, "SELECT body FROM entries ORDER BY id DESC LIMIT 1") == [("written last",)]
    assert not list(tmp_path.glob("thatch.db.*.bak"))


def test_failed_merge_leaves_production_untouched(tmp_path):
    prod = tmp_path / "thatch.db"
    _production(prod).close()
    before = prod.read_bytes()
    not_export = tmp_path / "plain.db"
    sqlite3.connect(not_export).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(StoreSchemaError, match="not a thatchlab export"):
        merge_into(not_export, prod)
    assert prod.read_bytes() == before
    export, _ = _export(tmp_path)
    # a production table lacking an exported column: the transaction is refused
    con = sqlite3.connect(prod)
    con.execute("DROP TABLE prediction_provenance")
    con.execute("CREATE TABLE prediction_provenance (id TEXT PRIMARY KEY, prediction_id TEXT, signal TEXT)")
    con.commit()
    con.close()
    before = prod.read_bytes()
    with pytest.raises(StoreSchemaError, match="lacks column"):
        merge_into(export, prod)
    assert prod.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_merge_behaviors_leaves_predictions(tmp_path):
    prod = tmp_path / "thatch.db"
    _production(prod).close()
    vecs = {"committing": basis(0), "run the linter": basis(1)}
    beh = BehaviorEngine(LookupEmbedder(vecs, name="toy"))
    beh.codify("committing", "run the linter", "r", now=T)
    export = export_sqlite(tmp_path / "b.db", behavior=beh).path
    res = merge_into(export, prod)
    # the export holds behaviors of its project store only: the user's rule in 'global' stays
    assert sorted(_rows(prod, "SELECT statement FROM behaviors")) == [("a user rule",), ("run the linter",)]
    assert res.kept_rows["behaviors"] == 1 and res.removed["behaviors"] == 0
    assert _rows(prod, "SELECT statement FROM predictions") == [("old prediction",)]


# ------------------------------------------------------------------ nothing lost on the way to production
ROOT = Path(__file__).resolve().parents[1]


def _snapshot(path):
    """Every table's schema and rows, in rowid order: what "exactly the same content" means."""
    con = sqlite3.connect(path)
    try:
        out = {}
        for name, sql in con.execute("SELECT name, sql FROM sqlite_master WHERE type='table' ORDER BY name"):
            out[name] = (sql, con.execute(f'SELECT * FROM "{name}" ORDER BY rowid').fetchall())
        return out
    finally:
        con.close()


def _wal_production(path, n_wal_rows=40):
    """A production file in WAL mode whose last ``n_wal_rows`` entries live only in ``-wal``.

    Returns the connection that wrote them, still open (closing the last
    connection would checkpoint the WAL into the file).
    """
    _production(path, wal=True).close()
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_autocheckpoint = 0")
    for i in range(n_wal_rows):
        con.execute("INSERT INTO entries (body) VALUES (?)", (f"wal-only {i}",))
        con.commit()
    # one frame per commit at least; the file itself is never opened here: closing a file
    # descriptor of it would drop this process's SQLite locks
    assert os.path.getsize(str(path) + "-wal") >= n_wal_rows * con.execute("PRAGMA page_size").fetchone()[0]
    return con


def _behavior_export(tmp_path, name="b.db"):
    vecs = {"committing": basis(0), "run the linter": basis(1)}
    beh = BehaviorEngine(LookupEmbedder(vecs, name="toy"))
    beh.codify("committing", "run the linter", "r", now=T)
    return export_sqlite(tmp_path / name, behavior=beh).path


def _run_py(code, *, wait=True, **kw):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    args = [sys.executable, "-c", textwrap.dedent(code)]
    if not wait:
        return subprocess.Popen(args, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    return subprocess.run(args, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120, **kw)


def test_a_failure_inside_the_transaction_keeps_wal_rows_and_old_content(tmp_path, monkeypatch):
    prod = tmp_path / "thatch.db"
    writer = _wal_production(prod)
    export, _ = _export(tmp_path)
    before = _snapshot(prod)
    real = merge_module._replace_thatch

    def fail_after_writing(con, engine, result):
        real(con, engine, result)  # the rows are replaced inside the transaction, then the disk fails
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(merge_module, "_replace_thatch", fail_after_writing)
    with pytest.raises(StoreWriteError, match="rolled back and production was left as it was"):
        merge_into(export, prod)
    assert _snapshot(prod) == before
    assert len(_rows(prod, "SELECT * FROM entries WHERE body LIKE 'wal-only%'")) == 40
    assert (tmp_path / "thatch.db-wal").exists()
    # a failure of the final checks rolls back too
    monkeypatch.setattr(merge_module, "_replace_thatch", real)
    monkeypatch.setattr(merge_module, "_check_merged", lambda *a: (_ for _ in ()).throw(
        StoreWriteError("integrity check failed (injected)")))
    with pytest.raises(StoreWriteError, match="injected"):
        merge_into(export, prod)
    assert _snapshot(prod) == before
    writer.execute("INSERT INTO entries (body) VALUES ('production still writes')")
    writer.commit()
    writer.close()


@pytest.mark.parametrize("where", ["transaction", "backup"])
def test_a_real_file_size_limit_mid_merge_keeps_wal_rows(tmp_path, where):
    """The reported case: 40 committed rows only in production's WAL, then `ulimit -f` during the merge."""
    prod = tmp_path / "thatch.db"
    writer = _wal_production(prod)
    export, _ = _export(tmp_path)
    before = _snapshot(prod)
    wal = os.path.getsize(str(prod) + "-wal")
    # room for the backup but not for the transaction's WAL frames, or no room for the backup
    limit = wal + 100 if where == "transaction" else 4096
    pages, page_size = (writer.execute(f"PRAGMA {x}").fetchone()[0] for x in ("page_count", "page_size"))
    assert where == "backup" or limit > pages * page_size  # the backup's size
    proc = _run_py(f"""
        import resource
        from thatchlab.store import merge_into
        resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
        merge_into({str(export)!r}, {str(prod)!r})
    """)
    assert proc.returncode != 0 and "StoreWriteError" in proc.stderr, proc.stderr[-2000:]
    assert "production was left as it was" in proc.stderr
    assert _snapshot(prod) == before
    assert len(_rows(prod, "SELECT * FROM entries WHERE body LIKE 'wal-only%'")) == 40
    writer.close()
    assert _snapshot(prod) == before


def test_sigkill_of_a_merging_process_leaves_the_old_content(tmp_path):
    prod = tmp_path / "thatch.db"
    _production(prod).close()
    export, _ = _export(tmp_path)
    before = _snapshot(prod)
    marker = tmp_path / "inside"
    proc = _run_py(f"""
        import pathlib, time
        import thatchlab.store._merge as m
        real = m._check_merged
        def stall(*a):
            pathlib.Path({str(marker)!r}).touch()
            time.sleep(60)
        m._check_merged = stall
        m.merge_into({str(export)!r}, {str(prod)!r})
    """, wait=False)
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        assert time.monotonic() < deadline
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert _snapshot(prod) == before
    merge_into(export, prod)  # the lock died with the process: the next merge goes through
    assert _rows(prod, "SELECT statement FROM predictions") == [("use pytest",)]


def test_two_concurrent_merges_both_survive(tmp_path):
    prod = tmp_path / "thatch.db"
    _production(prod).close()
    exports = [_export(tmp_path)[0], _behavior_export(tmp_path)]
    procs = [_run_py(f"""
        import time
        import thatchlab.store._merge as m
        real = m._apply
        def slow(*a, **kw):  # hold the write lock long enough for the other merge to queue behind it
            time.sleep(0.5)
            real(*a, **kw)
        m._apply = slow
        r = m.merge_into({str(e)!r}, {str(prod)!r}, timeout=60)
        print(r.engines)
    """, wait=False) for e in exports]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()[-2000:]
    assert _rows(prod, "SELECT statement FROM predictions") == [("use pytest",)]
    assert sorted(_rows(prod, "SELECT statement FROM behaviors")) == [("a user rule",), ("run the linter",)]
    assert _rows(prod, "SELECT COUNT(*) FROM entries") == [(50,)]
    # each merge wrote its own backup; the second ran on the first one's result, so its
    # backup holds exactly one of the updates
    baks = sorted(tmp_path.glob("thatch.db.*.bak"))
    assert len(baks) == 2
    got = [(_rows(b, "SELECT statement FROM predictions"), sorted(_rows(b, "SELECT statement FROM behaviors")))
           for b in baks]
    assert ([("old prediction",)], [("a user rule",)]) in got


def test_a_merge_waits_for_a_busy_production_then_fails_cleanly(tmp_path):
    prod = tmp_path / "thatch.db"
    _production(prod).close()
    export, _ = _export(tmp_path)
    before = _snapshot(prod)
    holder = sqlite3.connect(prod, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("INSERT INTO entries (body) VALUES ('uncommitted')")
    t0 = time.monotonic()
    with pytest.raises(StoreWriteError, match="production is busy"):
        merge_into(export, prod, timeout=0.3)
    assert 0.25 <= time.monotonic() - t0 < 10
    assert not list(tmp_path.glob("thatch.db.*.bak"))
    holder.execute("COMMIT")
    holder.close()
    before["entries"][1].append((51, "uncommitted", None))
    assert _snapshot(prod) == before
    merge_into(export, prod, timeout=0.3)  # once the writer is done the merge goes through
    assert _rows(prod, "SELECT statement FROM predictions") == [("use pytest",)]


def test_wal_only_rows_survive_the_merge_and_the_backup(tmp_path):
    prod = tmp_path / "thatch.db"
    writer = _wal_production(prod)
    export, _ = _export(tmp_path)
    before = _snapshot(prod)
    res = merge_into(export, prod)
    assert (tmp_path / "thatch.db-wal").exists()  # never deleted while production has it open
    assert len(_rows(prod, "SELECT * FROM entries WHERE body LIKE 'wal-only%'")) == 40
    assert _snapshot(res.backup_path) == before
    assert not Path(str(res.backup_path) + "-wal").exists()
    # production's own connection keeps working and sees the merge
    writer.execute("INSERT INTO entries (body) VALUES ('after the merge')")
    writer.commit()
    assert writer.execute("SELECT statement FROM predictions").fetchall() == [("use pytest",)]
    writer.close()
    assert _rows(prod, "SELECT COUNT(*) FROM entries") == [(91,)]


@pytest.mark.parametrize("name", ["p#1", "q?x=1", "pct%41", "a b", "ünï-çødé"])
def test_special_characters_in_both_paths(tmp_path, name):
    src, dst = tmp_path / f"export {name}", tmp_path / f"prod {name}"
    src.mkdir()
    dst.mkdir()
    export, _ = _export(src)
    prod = dst / f"thatch{name}.db"
    _production(prod).close()
    before_names = {p.name for p in tmp_path.rglob("*")}
    before = _snapshot(prod)
    dry = merge_into(export, prod, dry_run=True)
    assert dry.replaced["predictions"] == 1 and _snapshot(prod) == before
    res = merge_into(export, prod)
    assert _rows(prod, "SELECT statement FROM predictions") == [("use pytest",)]
    assert _snapshot(res.backup_path) == before
    marker = res.backup_path.name + ".json"
    assert {p.name for p in tmp_path.rglob("*")} == before_names | {res.backup_path.name, marker}
    back = restore(res.backup_path, prod)
    assert _snapshot(prod) == before
    safety = {back.safety_path.name, back.safety_path.name + ".json"}
    assert {p.name for p in tmp_path.rglob("*")} == before_names | {res.backup_path.name, marker} | safety


def test_owner_and_mode_of_production_and_backup_are_kept(tmp_path):
    prod = tmp_path / "thatch.db"
    _production(prod).close()
    export, _ = _export(tmp_path)
    os.chmod(prod, 0o600)
    if os.geteuid() == 0:
        os.chown(prod, 65534, 65534)  # nobody
    want = (os.stat(prod).st_uid, os.stat(prod).st_gid, 0o600)

    def owner_mode(p):
        st = os.stat(p)
        return st.st_uid, st.st_gid, st.st_mode & 0o7777

    res = merge_into(export, prod)
    assert owner_mode(prod) == want and owner_mode(res.backup_path) == want
    restore(res.backup_path, prod)
    assert owner_mode(prod) == want


def test_a_flipped_bit_is_refused_by_the_manifest_sha256(tmp_path):
    prod = tmp_path / "thatch.db"
    _production(prod).close()
    export, _ = _export(tmp_path)
    before = prod.read_bytes()
    data = bytearray(export.read_bytes())
    at = data.index(b"use pytest")
    data[at] ^= 0x01  # "use pytest" becomes "tse pytest": still a valid database
    export.write_bytes(bytes(data))
    # import checks the manifest as merge does: the database and its manifest do not belong together
    with pytest.raises(StoreSchemaError, match="do not belong together"):
        import_sqlite(export)
    with pytest.raises(StoreSchemaError, match="sha256 .* differs .* export.manifest.json"):
        merge_into(export, prod)
    assert prod.read_bytes() == before and not list(tmp_path.glob("thatch.db.*.bak"))
    manifest = tmp_path / "export.manifest.json"
    manifest.unlink()
    with pytest.raises(StoreSchemaError, match="no manifest export.manifest.json"):
        merge_into(export, prod)
    merge_into(export, prod, verify_manifest=False)  # the caller's explicit choice
    assert _rows(prod, "SELECT statement FROM predictions") == [("tse pytest",)]


@pytest.mark.parametrize("sql, message", [
    ("UPDATE predictions SET confidence = 'not a number'",
     r"table 'predictions', row id='.*' \(rowid 1\), column 'confidence' holds TEXT 'not a number'"),
    ("UPDATE predictions SET embedding = '[0.1, 0.2]'",
     r"table 'predictions', row id=.*, column 'embedding' holds TEXT"),
    ("UPDATE prediction_matchers SET embedding = X'010203'",
     r"table 'prediction_matchers', row id=.* \(rowid 1\), column 'embedding' holds 3 bytes"),
    ("UPDATE predictions SET embedding = X'0000803F0000803F'",
     r"table 'predictions', row id=.*, column 'embedding' holds 2 float32 values \(8 bytes\) but the vectors "
     r"of model 'toy' have dimension 8"),
    ("ALTER TABLE predictions DROP COLUMN rationale", r"'predictions' lacks column\(s\) \['rationale'\]"),
    ("UPDATE thatchlab_meta SET value = '[]' WHERE key = 'engines'", r"lists no engine"),
    ("UPDATE thatchlab_meta SET value = 'prediction' WHERE key = 'engines'", r"expected a JSON list"),
    ("UPDATE thatchlab_meta SET value = '[\"prediction\", \"oracle\"]' WHERE key = 'engines'",
     r"unknown engine\(s\) \['oracle'\]"),
])
def test_bad_exports_are_refused_like_import_refuses_them(tmp_path, sql, message):
    prod = tmp_path / "thatch.db"
    _production(prod).close()
    export, _ = _export(tmp_path)
    con = sqlite3.connect(export)
    con.execute(sql)
    con.commit()
    con.close()
    # re-sign the changed file: validation, not the checksum, must refuse it
    manifest = tmp_path / "export.manifest.json"
    m = json.loads(manifest.read_text())
    m["sha256"] = hashlib.sha256(export.read_bytes()).hexdigest()
    manifest.write_text(json.dumps(m))
    before = prod.read_bytes()
    with pytest.raises(StoreSchemaError, match=message):
        merge_into(export, prod)
    if "lists no engine" not in message:
        with pytest.raises(StoreSchemaError, match=message):
            import_sqlite(export)
    assert prod.read_bytes() == before and not list(tmp_path.glob("thatch.db.*.bak"))


@pytest.mark.parametrize("content", [b"x", b"", b"not a database at all" * 40])
def test_a_production_file_that_is_not_a_database_is_refused(tmp_path, content):
    prod = tmp_path / "thatch.db"
    prod.write_bytes(content)
    export, _ = _export(tmp_path)
    with pytest.raises(StoreSchemaError, match="not a .*database|empty"):
        merge_into(export, prod)
    assert prod.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.db", "export.manifest.json", "thatch.db"]


def test_dry_run_reports_and_writes_nothing(tmp_path):
    prod = tmp_path / "thatch.db"
    _production(prod).close()
    export, _ = _export(tmp_path)
    before, stat = prod.read_bytes(), os.stat(prod)
    names = sorted(p.name for p in tmp_path.iterdir())
    dry = merge_into(export, prod, dry_run=True)
    assert prod.read_bytes() == before and os.stat(prod).st_mtime_ns == stat.st_mtime_ns
    assert sorted(p.name for p in tmp_path.iterdir()) == names
    assert dry.dry_run and dry.backup_path is None and dry.stores == ["new-repo"]
    assert dry.added == {"prediction_matchers": 1, "predictions": 1, "prediction_edges": 1,
                         "prediction_provenance": 1}
    assert dry.removed["predictions"] == 1 and dry.kept_rows["predictions"] == 0
    assert {"entries", "dedup_pairs", "something_else", "behaviors"} <= set(dry.kept)
    assert "predictions" not in dry.kept and "stores" in dry.kept  # no store to add
    real = merge_into(export, prod)
    assert (dry.replaced, dry.removed, dry.kept) == (real.replaced, real.removed, real.kept)


def test_restore_puts_the_backup_back_into_a_live_wal_file(tmp_path):
    prod = tmp_path / "thatch.db"
    writer = _wal_production(prod)
    export, _ = _export(tmp_path)
    before = _snapshot(prod)
    res = merge_into(export, prod)
    assert _snapshot(prod) != before
    back = restore(res.backup_path, prod)
    assert _snapshot(prod) == before and back.counts["entries"] == 90
    assert writer.execute("SELECT statement FROM predictions").fetchall() == [("old prediction",)]
    writer.execute("INSERT INTO entries (body) VALUES ('after restore')")
    writer.commit()
    holder = sqlite3.connect(prod, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    with pytest.raises(StoreWriteError, match="busy"):
        restore(res.backup_path, prod, timeout=0.2)
    holder.execute("ROLLBACK")
    holder.close()
    writer.close()
    bad = tmp_path / "bad.bak"
    bad.write_bytes(b"x")
    with pytest.raises(StoreSchemaError, match="not a readable SQLite"):
        restore(bad, prod)
    with pytest.raises(StoreSchemaError, match="same file"):
        restore(prod, prod)
    # only a backup thatchlab took of this file is restored; a plain copy is refused
    shutil.copy(prod, tmp_path / "copy.db")
    with pytest.raises(StoreSchemaError, match="not a backup thatchlab took"):
        restore(tmp_path / "copy.db", prod)


# ------------------------------------------------------------------ one embedding space per production file (issue 36)
def _tagged_production(path, model, dim, n=2):
    """A production file whose predictions were embedded by ``model`` (``dim``-d vectors)."""
    con = _production(path)
    vecs = [np.eye(dim, dtype=np.float32)[i % dim].tobytes() for i in range(n)]
    con.executemany("INSERT INTO predictions (id, store, statement, embedding, model, created_at, updated_at) "
                    "VALUES (?, 'global', ?, ?, ?, '2026-01-10T00:00:00Z', '2026-01-10T00:00:00Z')",
                    [(f"bge-{i}", f"learned {i}", v, model) for i, v in enumerate(vecs)])
    con.commit()
    con.close()
    return path


def _named_export(tmp_path, name, dim=8, file="named.db"):
    from thatchlab.embed import FINGERPRINT_TEXTS

    texts = ["writing tests", "use pytest", *FINGERPRINT_TEXTS]
    vecs = {t: np.eye(max(dim, len(texts)), dtype=np.float32)[i][:dim] + 0.01 for i, t in enumerate(texts)}
    eng = PredictionEngine(LookupEmbedder(vecs, name=name), project_store="new-repo")
    eng.update("writing tests", "use pytest", "confirm", "x", now=T)
    return export_sqlite(tmp_path / file, prediction=eng, overwrite=True), vecs


def test_an_export_records_its_embedder_name_dimension_and_fingerprint(tmp_path):
    from thatchlab.embed import FINGERPRINT_TEXTS, fingerprint

    res, vecs = _named_export(tmp_path, "toy-model")
    want = {"name": "toy-model", "dim": 8,
            "fingerprint": fingerprint(LookupEmbedder(vecs).embed_passages(list(FINGERPRINT_TEXTS)))}
    assert json.loads(res.manifest_path.read_text())["embedder"] == want
    assert import_sqlite(res.path).meta["embedder"] == want
    # a lookup table without the fixed texts: name and dimension, no fingerprint
    export, _ = _export(tmp_path)
    assert import_sqlite(export).meta["embedder"] == {"name": "toy", "dim": 8, "fingerprint": None}


def test_merge_refuses_vectors_of_another_model_than_productions(tmp_path):
    """Production's rows are tagged Xenova/bge-small-en-v1.5; an export of all-MiniLM-L6-v2 vectors of
    the same length merged silently before, and every nudge after it compared vectors of two models."""
    from thatchlab.core.errors import ModelMismatchError

    prod = _tagged_production(tmp_path / "thatch.db", "Xenova/bge-small-en-v1.5", 8)
    before = prod.read_bytes()
    minilm, _ = _named_export(tmp_path, "sentence-transformers/all-MiniLM-L6-v2")
    with pytest.raises(ModelMismatchError) as err:
        merge_into(minilm.path, prod)
    msg = str(err.value)
    assert msg.startswith(f"{prod}: its rows were embedded by 'Xenova/bge-small-en-v1.5' (8-d) but the export "
                          "named.db's by 'sentence-transformers/all-MiniLM-L6-v2' (8-d) (fingerprint ")
    assert "--embedder" in msg and "--allow-model-mismatch" in msg and msg.endswith("production was not touched")
    assert prod.read_bytes() == before and not list(tmp_path.glob("thatch.db.*.bak*"))
    with pytest.raises(ModelMismatchError, match="were embedded by"):
        merge_into(minilm.path, prod, dry_run=True)
    # the same weights from another publisher (or a local directory of them) are the same space
    bge, _ = _named_export(tmp_path, "BAAI/bge-small-en-v1.5", file="bge.db")
    assert merge_into(bge.path, prod, backup=False).model_mismatch is None
    # the same name with vectors of another length is not
    prod2 = _tagged_production(tmp_path / "other.db", "Xenova/bge-small-en-v1.5", 8)
    wide, _ = _named_export(tmp_path, "Xenova/bge-small-en-v1.5", dim=16, file="wide.db")
    with pytest.raises(ModelMismatchError, match=r"'Xenova/bge-small-en-v1.5' \(8-d\) but .*\(16-d\)"):
        merge_into(wide.path, prod2)
    res = merge_into(minilm.path, prod2, allow_model_mismatch=True)
    assert res.model_mismatch.startswith(f"{prod2}: its rows were embedded by")
    assert res.production_models == {"Xenova/bge-small-en-v1.5": [8]}
