"""Table definitions: production thatch DDL and thatchlab's own export tables.

The thatch DDL is production's, defaults included: production inserts rows
without ``created_at``/``updated_at``/counts and relies on the defaults, so a
file without them breaks production's later writes.
"""

from __future__ import annotations

__all__ = ["NOW_S", "thatch_ddl", "STORES_DDL", "META_DDL", "PREDICTION_DEDUP_PAIRS_DDL", "SCHEMA_VERSION", "ENGINE_TABLES", "OBSERVATION_COLUMNS", "OBSERVED_AT_TEXT"]

SCHEMA_VERSION = 1

#: SQLite's "now" as production writes it (second ISO text with Z).
NOW_S = "(strftime('%Y-%m-%dT%H:%M:%SZ','now'))"

STORES_DDL = "CREATE TABLE IF NOT EXISTS stores (name TEXT PRIMARY KEY)"

META_DDL = "CREATE TABLE IF NOT EXISTS thatchlab_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"

#: Production table names per scoring engine: matchers, items, edges, provenance, item fk column.
ENGINE_TABLES = {
    "prediction": dict(matchers="prediction_matchers", items="predictions",
                       edges="prediction_edges", provenance="prediction_provenance",
                       item_fk="prediction_id"),
    "behavior": dict(matchers="behavior_matchers", items="behaviors",
                     edges="behavior_edges", provenance="behavior_provenance",
                     item_fk="behavior_id"),
}


def thatch_ddl(engine: str) -> list[str]:
    """The four production tables of one scoring engine (``prediction`` or ``behavior``).

    Parameters
    ----------
    engine : {"prediction", "behavior"}
        The scoring engine.

    Returns
    -------
    list of str
        ``CREATE TABLE IF NOT EXISTS`` statements: matchers, items, edges, provenance.
    """
    t = ENGINE_TABLES[engine]
    return [
        f"""CREATE TABLE IF NOT EXISTS {t['matchers']} (
    id TEXT PRIMARY KEY,
    store TEXT NOT NULL REFERENCES stores(name),
    description TEXT NOT NULL,
    embedding BLOB,
    model TEXT,
    created_at TEXT NOT NULL DEFAULT {NOW_S},
    updated_at TEXT NOT NULL DEFAULT {NOW_S}
)""",
        f"""CREATE TABLE IF NOT EXISTS {t['items']} (
    id TEXT PRIMARY KEY,
    store TEXT NOT NULL REFERENCES stores(name),
    statement TEXT NOT NULL,
    rationale TEXT,
    embedding BLOB,
    model TEXT,
    confidence REAL NOT NULL DEFAULT 0.5,
    confirm_count REAL NOT NULL DEFAULT 0,
    disconfirm_count REAL NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL DEFAULT {NOW_S},
    updated_at TEXT NOT NULL DEFAULT {NOW_S}
)""",
        f"""CREATE TABLE IF NOT EXISTS {t['edges']} (
    matcher_id TEXT NOT NULL,
    {t['item_fk']} TEXT NOT NULL,
    weight REAL NOT NULL DEFAULT 1.0,
    created_at TEXT NOT NULL DEFAULT {NOW_S},
    PRIMARY KEY (matcher_id, {t['item_fk']}),
    FOREIGN KEY (matcher_id) REFERENCES {t['matchers']}(id) ON DELETE CASCADE,
    FOREIGN KEY ({t['item_fk']}) REFERENCES {t['items']}(id) ON DELETE CASCADE
)""",
        f"""CREATE TABLE IF NOT EXISTS {t['provenance']} (
    id TEXT PRIMARY KEY,
    {t['item_fk']} TEXT NOT NULL,
    signal TEXT NOT NULL,
    detail TEXT,
    created_at TEXT NOT NULL DEFAULT {NOW_S},
    FOREIGN KEY ({t['item_fk']}) REFERENCES {t['items']}(id) ON DELETE CASCADE
)""",
    ]

#: The pair verdicts of ``prediction_mark_checked`` (thatch ``07ecf87`` on; sysread/thatch src/db.ts
#: @2ed97f2a as its design note gives the DDL, and src/prediction.ts's upsert on (store, id_a, id_b)):
#: the ids in canonical (sorted) order, ``status`` the verdict.
PREDICTION_DEDUP_PAIRS_DDL = f"""CREATE TABLE IF NOT EXISTS prediction_dedup_pairs (
    store TEXT NOT NULL,
    id_a TEXT NOT NULL,
    id_b TEXT NOT NULL,
    status TEXT NOT NULL,
    checked_at TEXT NOT NULL DEFAULT {NOW_S},
    PRIMARY KEY (store, id_a, id_b)
)"""

# Further export tables (belief_memories, ai-memory confidence columns and
# shadow observations, temporal_patterns) are defined beside their store
# sections in thatchlab/store/ and listed here as they land.

#: Columns of ai-memory's ``confidence_shadow_observations`` as thatchlab holds them.
OBSERVATION_COLUMNS = ("memory_id", "namespace", "source", "observed_at", "caller_confidence",
                       "derived_confidence", "signals", "recall_outcome")

#: Optional column with the ``observed_at`` text exactly as a database stored it
#: (production compares that text, not the parsed time); the ai-memory reader fills it.
OBSERVED_AT_TEXT = "observed_at_text"
