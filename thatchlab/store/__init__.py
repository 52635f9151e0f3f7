"""SQLite export, import, merge and restore in the production schemas.

``export_sqlite`` writes engine state as a file production opens unchanged
(atomically, with integrity checks and a manifest); ``import_sqlite`` reads
one back read-only, validating every cell; ``merge_into`` ships an export
into a live production file (one transaction under production's write lock,
WAL honoured, a backup taken under that lock) without losing the tables
thatchlab does not model; ``restore`` puts such a backup back.

What an export records. ``export_sqlite``'s ``params`` default to each engine's own; every value
that differs from what production runs (the parameter reference,
:func:`thatchlab.core.params.production.production_params`) and that no decision shipped is
listed in the manifest under ``unreviewed`` (``{engine: {parameter: value}}``) — never as an
environment line or a recommended change — and ``merge_into`` refuses the export unless allowed.
A ``decision`` (a :class:`thatchlab.decide.Decision` or ``{engine: Decision}``) makes the engine's
parameters the decision's ``params`` (its default with only the shipped values changed);
``params`` given for the same engine must equal them (else :class:`InputError` naming each
parameter). The manifest's ``decisions[engine]`` holds one record per parameter and one
``"parameter": "combined"`` record (the shipped configuration as a whole); each shipped parameter
appears as an ``environment`` line (a setting production reads) or under
``recommended_production_changes`` (a constant in its code). A decision that ships a parameter
production has no setting for is refused. ``declared`` (``{engine: params}`` production already
runs, e.g. a ``--config`` it was started with) is listed under ``declared``, the reference for
``unreviewed``, never shipped; a decision's ``default`` is declared the same way. The scoring
engines' ``confidence`` column is recomputed under ``production_constants`` (the K, P0 and soft
weight production runs; its hard-coded ones by default) — the ones production applies to the next
signal — so the shipped rows agree with what production computes later; a tuned K or P0 appears in
the manifest as a recommended production change (``recommended_production_changes``), never baked
into the rows. ``log_end`` (a datetime or ISO-8601 text) is recorded as ISO-8601 UTC in
``thatchlab_meta`` and the manifest; a merge refuses to replace production rows that changed after
it. Declaring a ``production_model`` other than the vectors' own raises
:class:`~thatchlab.core.errors.ModelMismatchError` unless ``allow_model_mismatch=True``.
"""

from thatchlab.store._backups import list_backups, prune_backups
from thatchlab.store._core import StoreContents, check_export_target, import_sqlite
from thatchlab.store._export import ExportResult, export_sqlite
from thatchlab.store._merge import MergeResult, RestoreResult, merge_into, restore

__all__ = ["ExportResult", "MergeResult", "RestoreResult", "StoreContents", "export_sqlite", "import_sqlite",
           "merge_into", "restore", "list_backups", "prune_backups", "check_export_target"]
