"""Test helper: an export with SQL run against it afterwards (corrupted on purpose)."""

import sqlite3

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
