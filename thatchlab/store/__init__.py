"""SQLite export, import and merge in the production schemas.

``export_sqlite`` writes engine state as a file production opens unchanged
(atomically, with integrity checks and a manifest); ``import_sqlite`` reads
one back read-only; ``merge_into`` ships an export into a live production
file without losing the tables thatchlab does not model.
"""

from thatchlab.store._core import ExportResult, StoreContents, export_sqlite, import_sqlite
from thatchlab.store._merge import MergeResult, merge_into

__all__ = ["ExportResult", "MergeResult", "StoreContents", "export_sqlite", "import_sqlite", "merge_into"]
