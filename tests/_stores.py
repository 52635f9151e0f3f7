"""Test helper: an export with SQL run against it afterwards (corrupted on purpose)."""

import sqlite3

from thatchlab.store import export_sqlite


def edited_export(tmp_path, *sql, prediction=None, behavior=None):
    """Export the engines to ``tmp_path / "t.db"``, run each statement of ``sql`` on the file, return its path."""
    path = export_sqlite(tmp_path / "t.db", prediction=prediction, behavior=behavior, overwrite=True).path
    con = sqlite3.connect(path)
    for stmt in sql:
        con.execute(stmt)
    con.commit()
    con.close()
    return path
