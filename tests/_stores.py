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


def toy_export_and_production(tmp_path, name="prod.db"):
    """A one-prediction export (store ``repo``) and a production file ``name`` holding the thatch
    tables, the ``global`` store and one memory in ``entries``."""
    from thatchlab.core.schema import STORES_DDL, thatch_ddl
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
        for stmt in thatch_ddl(kind):
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
