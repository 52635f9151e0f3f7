"""Test helper: an export with SQL run against it afterwards (corrupted on purpose)."""

import sqlite3

import numpy as np

from thatchlab.store import export_sqlite


def edited_export(tmp_path, *sql, prediction=None, behavior=None, keep_manifest=False):
    """Export the engines to ``tmp_path / "t.db"``, run each statement of ``sql`` on the file, return its path.

    The manifest is removed (the edited file no longer matches it, which import and merge
    refuse first) unless ``keep_manifest``."""
    res = export_sqlite(tmp_path / "t.db", prediction=prediction, behavior=behavior, overwrite=True)
    path = res.path
    if not keep_manifest:
        res.manifest_path.unlink()
    con = sqlite3.connect(path)
    for stmt in sql:
        con.execute(stmt)
    con.commit()
    con.close()
    return path


#: The table thatch's schema creates on every open from the releases after v0.1.30 on (sysread/thatch
#: src/db.ts @2ed97f2a, stored version 09b805fe read): a production file holding it is one today's
#: thatch (07ecf87) opened, the release exports default to. IF NOT EXISTS: the DDL may come to hold it.
PAIRS_DDL = ("CREATE TABLE IF NOT EXISTS prediction_dedup_pairs (store TEXT NOT NULL, id_a TEXT NOT NULL, "
             "id_b TEXT NOT NULL, status TEXT NOT NULL, checked_at TEXT NOT NULL DEFAULT "
             "(strftime('%Y-%m-%dT%H:%M:%SZ','now')), PRIMARY KEY (store, id_a, id_b))")


def production_ddl(kind, release="07ecf87") -> list:
    """The statements that create ``kind``'s tables as production thatch ``release`` has them
    (07ecf87 adds ``prediction_dedup_pairs`` beside the prediction tables)."""
    from thatchlab.core.schema import thatch_ddl

    extra = [PAIRS_DDL] if kind == "prediction" and release != "v0.1.30" else []
    return [*thatch_ddl(kind), *extra]


def toy_export_and_production(tmp_path, name="prod.db"):
    """A one-prediction export (store ``repo``) and a production file ``name`` holding the thatch
    tables, the ``global`` store and one memory in ``entries``."""
    from thatchlab.core.schema import STORES_DDL
    from thatchlab.embed import LookupEmbedder
    from thatchlab.scoring import PredictionEngine
    from thatchlab.store import export_sqlite

    eng = PredictionEngine(LookupEmbedder({"writing tests": np.eye(8)[0], "use pytest": np.eye(8)[1]}, name="toy"),
                           project_store="repo")
    eng.update("writing tests", "use pytest", "confirm", "x", now="2026-02-01T10:00:00Z")
    export = export_sqlite(tmp_path / "export.db", prediction=eng).path
    prod = tmp_path / name
    con = sqlite3.connect(prod)
    con.execute(STORES_DDL)
    for kind in ("prediction", "behavior"):
        for stmt in production_ddl(kind):
            con.execute(stmt)
    con.execute("INSERT INTO stores VALUES ('global')")
    con.execute("CREATE TABLE entries (id INTEGER PRIMARY KEY, body TEXT)")
    con.execute("INSERT INTO entries (body) VALUES ('a memory')")
    con.commit()
    con.close()
    return export, prod


def rows(path, sql) -> list:
    """The rows ``sql`` returns from the SQLite file at ``path`` (its own connection, closed after)."""
    con = sqlite3.connect(path)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()
