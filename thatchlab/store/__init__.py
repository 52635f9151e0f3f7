"""SQLite export, import and merge in the production schemas.

``export_sqlite`` writes engine state as a file production opens unchanged
(atomically, with integrity checks and a manifest); ``import_sqlite`` reads
one back read-only.
"""

from ._core import ExportResult, StoreContents, export_sqlite, import_sqlite

__all__ = ["ExportResult", "StoreContents", "export_sqlite", "import_sqlite"]
