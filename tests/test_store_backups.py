"""Production files are sacred, second pass: backups never lost, restore that cannot destroy,
triggers kept out, per-store replacement, rows newer than the log, value domains, versions."""

import json
import sqlite3

import pytest

from tests._stores import production_ddl
from tests._stores import rows as _rows
from tests._vectors import basis
from thatchlab.core.errors import StoreConflictError, StoreSchemaError
from thatchlab.core.schema import STORES_DDL
from thatchlab.embed import LookupEmbedder
from thatchlab.scoring import PredictionEngine
from thatchlab.store import (
    export_sqlite,
    import_sqlite,
    list_backups,
    merge_into,
    prune_backups,
    restore,
)

T = "2026-02-01T10:00:00Z"
OLD = "2026-01-15T08:00:00Z"


def _production(path, stores=("repo-a", "repo-b")):
    con = sqlite3.connect(path)
    con.execute(STORES_DDL)
    for kind in ("prediction", "behavior"):
        for stmt in production_ddl(kind):
            con.execute(stmt)
    con.execute("INSERT INTO stores VALUES ('global')")
    for s in stores:
        con.execute("INSERT INTO stores VALUES (?)", (s,))
        con.execute("INSERT INTO predictions (id, store, statement, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
                    (f"p-{s}", s, f"learned in {s}", OLD, OLD))
        con.execute("INSERT INTO prediction_matchers (id, store, description, created_at, updated_at) "
                    "VALUES (?, ?, ?, ?, ?)", (f"m-{s}", s, f"when in {s}", OLD, OLD))
        con.execute("INSERT INTO prediction_edges (matcher_id, prediction_id, created_at) VALUES (?, ?, ?)",
                    (f"m-{s}", f"p-{s}", OLD))
    con.execute("CREATE TABLE entries (id INTEGER PRIMARY KEY, body TEXT)")
    con.execute("INSERT INTO entries (body) VALUES ('a memory')")
    con.commit()
    con.close()
    return path


def _export(tmp_path, store="repo-a", name="e.db", **kw):
    vecs = {"writing tests": basis(0), "use pytest": basis(1)}
    eng = PredictionEngine(LookupEmbedder(vecs, name="toy"), project_store=store)
    eng.update("writing tests", "use pytest", "confirm", "x", now=T)
    return export_sqlite(tmp_path / name, prediction=eng, overwrite=True, **kw).path


def _dump(path):
    con = sqlite3.connect(path)
    try:
        return list(con.iterdump())
    finally:
        con.close()


def test_every_merge_writes_its_own_backup_and_a_failed_one_loses_none(tmp_path):
    prod = _production(tmp_path / "p.db")
    first_state = _dump(prod)
    a = merge_into(_export(tmp_path), prod)
    b = merge_into(_export(tmp_path, store="repo-b", name="f.db"), prod)
    assert a.backup_path != b.backup_path and a.backup_path.exists() and b.backup_path.exists()
    assert _dump(a.backup_path) == first_state
    kept = {p: p.read_bytes() for p in tmp_path.glob("p.db.*.bak")}
    # a merge that fails after its backup: the earlier backups stay exactly as they were
    bad = _export(tmp_path, name="g.db")
    con = sqlite3.connect(bad)
    con.execute("ALTER TABLE predictions ADD COLUMN extra TEXT")
    con.commit()
    con.close()
    (tmp_path / "g.manifest.json").unlink()
    before = prod.read_bytes()
    with pytest.raises(StoreSchemaError):
        merge_into(bad, prod, verify_manifest=False)
    assert prod.read_bytes() == before
    assert {p: p.read_bytes() for p in kept} == kept
    table = list_backups(prod)
    assert len(table) >= 2 and table["intact"].all() and set(table["reason"]) == {"merge"}
    assert table["taken_at"].is_monotonic_increasing
    marker = json.loads((a.backup_path.parent / (a.backup_path.name + ".json")).read_text())
    assert marker["production"] == str(prod.resolve()) and marker["tables"]["predictions"] == 2
    # --no-backup writes none and touches none
    n = len(list(tmp_path.glob("p.db.*.bak")))
    merge_into(_export(tmp_path), prod, backup=False)
    assert len(list(tmp_path.glob("p.db.*.bak"))) == n


def test_prune_keeps_the_first_and_the_newest(tmp_path):
    prod = _production(tmp_path / "p.db")
    paths = [merge_into(_export(tmp_path), prod).backup_path for _ in range(5)]
    assert list(list_backups(prod)["path"]) == paths
    removed = prune_backups(prod, keep=3)
    assert removed == paths[1:3]
    assert list(list_backups(prod)["path"]) == [paths[0], paths[3], paths[4]]
    assert prune_backups(prod, keep=0) == [paths[3]]
    assert list(list_backups(prod)["path"]) == [paths[0], paths[4]]


def test_restore_refuses_anything_but_a_backup_of_this_file_and_takes_a_safety_copy(tmp_path):
    prod = _production(tmp_path / "p.db")
    other = _production(tmp_path / "other.db")
    export = _export(tmp_path)
    res = merge_into(export, prod)
    now = prod.read_bytes()
    for backup, target, message in ((export, prod, "is a thatchlab export, not a backup"),
                                    (prod, res.backup_path, "is itself a backup"),
                                    (res.backup_path, other, "is a backup of .*p.db, not of")):
        with pytest.raises(StoreSchemaError, match=message):
            restore(backup, target)
    assert prod.read_bytes() == now and res.backup_path.exists()
    back = restore(res.backup_path, prod)
    assert back.safety_path.exists() and back.safety_path != res.backup_path
    assert _rows(back.safety_path, "SELECT COUNT(*) FROM predictions") == [(2,)]  # what was there before
    assert _rows(prod, "SELECT statement FROM predictions ORDER BY id") == [("learned in repo-a",),
                                                                          ("learned in repo-b",)]
    # a backup edited after it was taken is refused
    data = bytearray(res.backup_path.read_bytes())
    data[data.index(b"learned in repo-b")] ^= 1  # still a valid database, another content
    res.backup_path.write_bytes(bytes(data))
    with pytest.raises(StoreSchemaError, match="changed since it was taken"):
        restore(res.backup_path, prod)


def test_production_triggers_never_fire_inside_a_merge(tmp_path):
    prod = _production(tmp_path / "p.db")
    con = sqlite3.connect(prod)
    con.execute("CREATE TABLE prediction_tags (prediction_id TEXT, tag TEXT)")
    con.executemany("INSERT INTO prediction_tags VALUES (?, ?)", [("p-repo-a", f"t{i}") for i in range(88)])
    con.execute("CREATE TRIGGER clear_tags AFTER DELETE ON predictions BEGIN DELETE FROM prediction_tags; END")
    con.commit()
    con.close()
    dry = merge_into(_export(tmp_path), prod, dry_run=True)
    assert dry.triggers == ["clear_tags"]
    res = merge_into(_export(tmp_path), prod)
    assert res.triggers == ["clear_tags"] and "prediction_tags" in res.kept
    assert _rows(prod, "SELECT COUNT(*) FROM prediction_tags") == [(88,)]
    assert _rows(prod, "SELECT name FROM sqlite_master WHERE type = 'trigger'") == [("clear_tags",)]
    # the trigger still works for production afterwards
    con = sqlite3.connect(prod)
    con.execute("DELETE FROM predictions WHERE store = 'repo-b'")
    con.commit()
    con.close()
    assert _rows(prod, "SELECT COUNT(*) FROM prediction_tags") == [(0,)]


def test_a_merge_replaces_only_the_stores_the_export_holds(tmp_path):
    prod = _production(tmp_path / "p.db")
    res = merge_into(_export(tmp_path, store="repo-a"), prod)
    assert res.stores == ["repo-a"]
    got = _rows(prod, "SELECT store, statement FROM predictions ORDER BY store")
    assert got == [("repo-a", "use pytest"), ("repo-b", "learned in repo-b")]
    assert res.removed["predictions"] == 1 and res.added["predictions"] == 1 and res.kept_rows["predictions"] == 1
    assert _rows(prod, "SELECT matcher_id FROM prediction_edges WHERE matcher_id = 'm-repo-b'") == [("m-repo-b",)]
    everything = merge_into(_export(tmp_path, store="repo-a"), prod, all_stores=True)
    assert _rows(prod, "SELECT store FROM predictions") == [("repo-a",)]
    assert everything.all_stores and "repo-b" in everything.stores


def test_rows_learned_after_the_log_ended_are_not_replaced_silently(tmp_path):
    prod = _production(tmp_path / "p.db")
    con = sqlite3.connect(prod)
    con.execute("UPDATE predictions SET updated_at = '2026-03-01T12:00:00.000Z' WHERE store = 'repo-a'")
    con.commit()
    con.close()
    export = _export(tmp_path, log_end="2026-02-15T00:00:00Z")
    assert json.loads((tmp_path / "e.manifest.json").read_text())["log_end"] == "2026-02-15T00:00:00.000Z"
    before = prod.read_bytes()
    with pytest.raises(StoreConflictError, match=r"1 prediction row\(s\) .*repo-a.*2026-02-15") as err:
        merge_into(export, prod)
    assert err.value.count == 1 and prod.read_bytes() == before
    with pytest.raises(StoreConflictError):
        merge_into(export, prod, dry_run=True)
    res = merge_into(export, prod, replace_newer=True)
    assert res.newer == 1
    # a newer row in a store the export does not hold is no conflict
    con = sqlite3.connect(prod)
    con.execute("UPDATE predictions SET updated_at = '2026-03-01T12:00:00Z' WHERE store = 'repo-b'")
    con.commit()
    con.close()
    assert merge_into(export, prod).newer == 0
    # without log_end the export records the newest change among its own rows
    auto = json.loads(export_sqlite(tmp_path / "x.db", prediction=import_sqlite(export).prediction)
                      .manifest_path.read_text())["log_end"]
    assert auto.startswith("2026-02-01T10:00:00")


@pytest.mark.parametrize("sql, message", [
    ("UPDATE predictions SET confidence = 5", r"column 'confidence' holds 5(\.0)?; expected a number in \[0, 1\]"),
    ("UPDATE predictions SET confirm_count = -7", "column 'confirm_count' holds -7(.0)?; expected a number >= 0"),
    ("UPDATE predictions SET created_at = 12345", "column 'created_at' holds '12345'; expected a UTC time"),
    ("UPDATE predictions SET created_at = 'yesterday'", "column 'created_at' holds 'yesterday'; expected a UTC time"),
    ("UPDATE predictions SET updated_at = '2026-13-45T10:00:00Z'", "column 'updated_at' .*expected a UTC time"),
    ("UPDATE thatchlab_meta SET value = '99' WHERE key = 'schema_version'", "schema_version.*'99'|schema_version.*99"),
    ("UPDATE thatchlab_meta SET value = '\"9.9.9\"' WHERE key = 'thatchlab_version'", "thatchlab_version.*9.9.9"),
])
def test_out_of_domain_cells_and_unknown_versions_are_refused_by_import_and_merge(tmp_path, sql, message):
    prod = _production(tmp_path / "p.db")
    export = _export(tmp_path)
    (tmp_path / "e.manifest.json").unlink()
    con = sqlite3.connect(export)
    con.execute(sql)
    con.commit()
    con.close()
    with pytest.raises(StoreSchemaError, match=message):
        import_sqlite(export)
    before = prod.read_bytes()
    with pytest.raises(StoreSchemaError, match=message) as err:
        merge_into(export, prod, verify_manifest=False)
    assert str(err.value).startswith(str(export))  # the export's own path, not an in-memory copy's label
    assert prod.read_bytes() == before


def test_both_production_time_formats_are_accepted(tmp_path):
    prod = _production(tmp_path / "p.db")
    con = sqlite3.connect(prod)
    con.execute("UPDATE predictions SET created_at = '2026-01-15T08:00:00.123Z' WHERE store = 'repo-b'")
    con.commit()
    con.close()
    got = import_sqlite(prod).prediction.tables["items"]
    assert sorted(got["created_at"].astype(str))[0].startswith("2026-01-15")
    assert import_sqlite(prod).manifest is None  # a production file: no manifest, and that is fine


def test_a_ctrl_c_after_the_commit_is_held_back_and_said(tmp_path):
    import signal

    from thatchlab.store._merge import _SigintDeferred

    # Python's own Ctrl-C handler (a shell that starts the suite in the background may pass
    # SIGINT down ignored)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        _check_deferred(_SigintDeferred)
    finally:
        signal.signal(signal.SIGINT, previous)
    prod = _production(tmp_path / "p.db")
    assert merge_into(_export(tmp_path), prod).interrupted is False


def _check_deferred(_SigintDeferred):
    import os
    import signal

    with _SigintDeferred() as held:
        os.kill(os.getpid(), signal.SIGINT)  # delivered to the handler, not raised
    assert held.hit and not held.active
    with pytest.raises(KeyboardInterrupt):  # outside, Ctrl-C works as before
        os.kill(os.getpid(), signal.SIGINT)
        signal.sigtimedwait([], 0.05) if hasattr(signal, "sigtimedwait") else None
        raise AssertionError("no KeyboardInterrupt")


# ------------------------------------------------------------------ undo works for every export (issue 36)
@pytest.fixture(scope="module")
def engine_exports(tmp_path_factory, real_embedder):
    """The main job's own export (every engine) and one export of each engine alone, re-exported from it."""
    from tests._main_job import main_job

    main = main_job(tmp_path_factory, real_embedder).export_path
    out = {"main job": main}
    contents = import_sqlite(main)
    where = tmp_path_factory.mktemp("single")
    for key in ("prediction", "behavior", "beliefs", "calibration", "patterns"):
        out[key] = export_sqlite(where / f"{key}.db", **{key: contents[key]}).path
    return out


@pytest.mark.parametrize("which", ["main job", "prediction", "behavior", "beliefs", "calibration", "patterns"])
def test_restore_undoes_the_merge_of_every_export(tmp_path, engine_exports, which):
    """A merge's backup, listed as intact, restores: production holds exactly its rows of before in
    every table, and the tables the merge created are gone."""
    prod = _production(tmp_path / "p.db")
    con = sqlite3.connect(prod)
    con.execute("CREATE TABLE dedup_pairs (a INTEGER, b INTEGER)")
    con.execute("INSERT INTO dedup_pairs VALUES (1, 2)")
    con.commit()
    con.close()
    before = _dump(prod)
    res = merge_into(engine_exports[which], prod, allow_unreviewed=True)
    assert _dump(prod) != before
    table = list_backups(prod)
    assert list(table["path"]) == [res.backup_path]
    assert bool(table["intact"][0]) and bool(table["restorable"][0]) and table["problem"][0] is None
    marker = json.loads(res.backup_path.with_name(res.backup_path.name + ".json").read_text())
    created = {"main job": ["belief_memories", "confidence_shadow_observations", "memories", "temporal_patterns"],
               "beliefs": ["belief_memories"], "calibration": ["confidence_shadow_observations", "memories"],
               "patterns": ["temporal_patterns"]}.get(which, [])
    assert marker["merge"]["created"] == created
    assert marker["merge"]["added"] == res.added and marker["merge"]["removed"] == res.removed
    back = restore(res.backup_path, prod)
    assert _dump(prod) == before
    assert not set(created) & set(back.counts) and back.counts["dedup_pairs"] == 1
    if which == "main job":  # and the undo is undone by the safety copy the restore took
        merged = _dump(back.safety_path)
        restore(back.safety_path, prod)
        assert _dump(prod) == merged


def test_restore_list_and_restore_agree_when_production_changed_its_own_schema(tmp_path):
    prod = _production(tmp_path / "p.db")
    res = merge_into(_export(tmp_path), prod)
    con = sqlite3.connect(prod)
    con.execute("ALTER TABLE entries ADD COLUMN tags TEXT")  # production migrated its own table since
    con.commit()
    con.close()
    table = list_backups(prod)
    assert bool(table["intact"][0]) and not table["restorable"][0]
    assert "other tables differ" in table["problem"][0] and "(entries)" in table["problem"][0]
    with pytest.raises(StoreSchemaError, match=r"other tables differ .*\(entries\)"):
        restore(res.backup_path, prod)


# ------------------------------------------------------------------ no output overwrites what it should not
def test_restore_holds_one_lock_across_the_safety_copy_and_the_copy(tmp_path, monkeypatch):
    """A write that arrives once the safety copy is taken waits for the restore and lands after it.

    Before, the safety copy was taken under one lock and the restore copied under another; a
    write committed between the two was in neither (77 rows lost, with a delay forced there)."""
    import threading
    import time

    from thatchlab.store import _merge as merge_module

    prod = _production(tmp_path / "p.db")
    res = merge_into(_export(tmp_path), prod)
    real_write, real_copy = merge_module._write_backup, merge_module._backup
    writers = []

    def write_77_rows():
        con = sqlite3.connect(prod, timeout=20)
        con.executemany("INSERT INTO entries (body) VALUES (?)", [(f"late {i}",) for i in range(77)])
        con.commit()
        con.close()

    def safety_then_a_writer(*args, **kwargs):
        path = real_write(*args, **kwargs)
        if kwargs.get("locked_file") is not None or args[2:3] == ("before restore",):
            writers.append(threading.Thread(target=write_77_rows))
            writers[-1].start()
            time.sleep(0.5)
        return path

    def slow_copy(*args, **kwargs):
        time.sleep(0.5)  # the moment between the safety copy and the restore copy, if there is one
        return real_copy(*args, **kwargs)

    monkeypatch.setattr(merge_module, "_write_backup", safety_then_a_writer)
    monkeypatch.setattr(merge_module, "_backup", slow_copy)
    back = restore(res.backup_path, prod)
    writers[0].join(30)
    late = "SELECT COUNT(*) FROM entries WHERE body LIKE 'late %'"
    assert _rows(back.safety_path, late) + _rows(prod, late) in ([(0,), (77,)], [(77,), (0,)])
    assert _rows(prod, late) == [(77,)]  # it waited for the restore


def test_a_merge_killed_while_writing_its_backup_leaves_nothing_behind(tmp_path):
    import subprocess
    import sys
    import textwrap

    from tests.conftest import ROOT

    prod = _production(tmp_path / "p.db")
    export = _export(tmp_path)
    script = textwrap.dedent(f"""
        import os, signal
        real = os.replace
        def dying_replace(src, dst, *a, **k):
            if str(dst).endswith(".bak"):  # the backup's bytes are written, its marker too
                os.kill(os.getpid(), signal.SIGKILL)
            return real(src, dst, *a, **k)
        os.replace = dying_replace
        from thatchlab.store import merge_into
        merge_into({str(export)!r}, {str(prod)!r})
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == -9, proc.stderr[-2000:]
    left = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith((".p.db", "p.db.")))
    assert any(n.endswith(".tmp") for n in left) and any(n.endswith(".bak.json") for n in left)
    assert len(list_backups(prod)) == 0  # listing removes what the dead writer left
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith((".p.db", "p.db."))) == []
    assert _rows(prod, "SELECT COUNT(*) FROM predictions") == [(2,)]  # the merge never committed


def test_rows_whose_change_time_cannot_be_read_count_as_newer(tmp_path):
    prod = _production(tmp_path / "p.db")
    con = sqlite3.connect(prod)
    con.execute("UPDATE predictions SET updated_at = 'sometime last week' WHERE store = 'repo-a'")
    con.commit()
    con.close()
    before = prod.read_bytes()
    with pytest.raises(StoreConflictError, match="1 prediction row"):
        merge_into(_export(tmp_path), prod)
    assert prod.read_bytes() == before
    res = merge_into(_export(tmp_path), prod, replace_newer=True)
    assert res.newer == 1


def test_table_and_trigger_names_with_a_double_quote_are_quoted(tmp_path):
    prod = _production(tmp_path / "p.db")
    con = sqlite3.connect(prod)
    con.execute('CREATE TABLE "odd ""name""" (x)')
    con.execute('INSERT INTO "odd ""name""" VALUES (1)')
    con.execute("CREATE TABLE audit (x)")
    con.execute('CREATE TRIGGER "on ""delete""" AFTER DELETE ON predictions BEGIN INSERT INTO audit VALUES (1); END')
    con.commit()
    con.close()
    before = _dump(prod)
    res = merge_into(_export(tmp_path), prod)
    assert res.triggers == ['on "delete"'] and 'odd "name"' in res.kept
    assert _rows(prod, "SELECT COUNT(*) FROM audit") == [(0,)]
    back = restore(res.backup_path, prod)
    assert back.counts['odd "name"'] == 1 and _dump(prod) == before


def test_restore_after_production_changed_its_page_size_says_so_and_restores(tmp_path):
    """Issue 36 point 7: a WAL-mode production vacuumed to another page size since the backup made
    SQLite's page copy fail ("attempt to write a readonly database"); restore now leaves WAL mode
    for the copy, brings back the backup's page size with its rows, returns to WAL and says so."""
    prod = _production(tmp_path / "p.db")
    con = sqlite3.connect(prod)
    con.execute("PRAGMA journal_mode=WAL")
    con.close()
    before = _dump(prod)
    res = merge_into(_export(tmp_path), prod)
    con = sqlite3.connect(prod)
    con.execute("PRAGMA journal_mode=DELETE")
    con.execute("PRAGMA page_size=8192")
    con.execute("VACUUM")
    con.execute("PRAGMA journal_mode=WAL")
    con.close()
    assert _rows(prod, "PRAGMA page_size") == [(8192,)]
    back = restore(res.backup_path, prod)
    assert back.notes == ["production's page size changed since the backup (8192 → 4096 bytes, the backup's): "
                          "restored with the backup's page size, leaving WAL mode for the copy and returning to it"]
    assert _dump(prod) == before
    assert _rows(prod, "PRAGMA page_size") == [(4096,)] and _rows(prod, "PRAGMA journal_mode") == [("wal",)]
