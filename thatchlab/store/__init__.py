"""SQLite export, import, merge and restore in the production schemas.

``export_sqlite`` writes engine state as a file production opens unchanged
(atomically, with integrity checks and a manifest); ``import_sqlite`` reads
one back read-only, validating every cell; ``merge_into`` ships an export
into a live production file (one transaction under production's write lock,
WAL honoured, a backup taken under that lock) without losing the tables
thatchlab does not model; ``restore`` puts such a backup back.
"""

from thatchlab.store._backups import list_backups, prune_backups
from thatchlab.store._core import (
    ExportResult,
    StoreContents,
    check_export_target,
    export_sqlite,
    import_sqlite,
)
from thatchlab.store._merge import MergeResult, RestoreResult, merge_into, restore

__all__ = ["ExportResult", "MergeResult", "RestoreResult", "StoreContents", "export_sqlite", "import_sqlite",
           "merge_into", "restore", "list_backups", "prune_backups", "check_export_target"]
