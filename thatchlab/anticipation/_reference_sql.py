"""mnemo's production sequential-mining SQL, kept as the reference our seed mode is checked against.

Two renderings of one query over a table ``mnemo_event(workspace_id, name,
occurred_at)``: pairs (A, B) in one workspace with B strictly after A and
strictly before A + 24 h, every pair counted, confidence = pairs / count(A)
in the workspace, kept when pairs ≥ 3 and confidence > 0.5. thatchlab adds
the workspace to SELECT and GROUP BY (mnemo's GROUP BY omits it, which would
merge workspaces that share a trigger count).

``SEED_SEQUENTIAL_DUCKDB`` keeps mnemo's ``LATERAL`` count (casts with
``::DOUBLE``; DuckDB's ``FLOAT`` is 4 bytes). SQLite has no ``LATERAL``, so
``SEED_SEQUENTIAL_SQLITE`` joins per-(workspace, name) counts instead and
reads times as integer microseconds (``occurred_us``). Used by the fidelity
test and the anticipation benchmark; no engine runs them.
"""

__all__ = ["SEED_SEQUENTIAL_DUCKDB", "SEED_SEQUENTIAL_SQLITE"]

SEED_SEQUENTIAL_DUCKDB = """
SELECT e1.workspace_id AS workspace, e1.name AS trigger, e2.name AS target,
       COUNT(*) AS observations,
       COUNT(*)::DOUBLE / total.cnt AS confidence,
       AVG(EXTRACT(EPOCH FROM e2.occurred_at - e1.occurred_at))::DOUBLE AS avg_delay_s
FROM mnemo_event e1
JOIN mnemo_event e2 ON e2.workspace_id = e1.workspace_id
  AND e2.occurred_at > e1.occurred_at
  AND e2.occurred_at < e1.occurred_at + INTERVAL '24 hours'
CROSS JOIN LATERAL (
  SELECT COUNT(*) AS cnt FROM mnemo_event
  WHERE name = e1.name AND workspace_id = e1.workspace_id
) total
GROUP BY e1.workspace_id, e1.name, e2.name, total.cnt
HAVING COUNT(*) >= 3 AND COUNT(*)::DOUBLE / total.cnt > 0.5
"""

SEED_SEQUENTIAL_SQLITE = """
WITH total AS (
  SELECT workspace_id, name, COUNT(*) AS cnt FROM mnemo_event GROUP BY workspace_id, name
)
SELECT e1.workspace_id AS workspace, e1.name AS trigger, e2.name AS target,
       COUNT(*) AS observations,
       CAST(COUNT(*) AS REAL) / total.cnt AS confidence,
       AVG((e2.occurred_us - e1.occurred_us) / 1e6) AS avg_delay_s
FROM mnemo_event e1
JOIN mnemo_event e2 ON e2.workspace_id = e1.workspace_id
  AND e2.occurred_us > e1.occurred_us
  AND e2.occurred_us < e1.occurred_us + 86400000000
JOIN total ON total.workspace_id = e1.workspace_id AND total.name = e1.name
GROUP BY e1.workspace_id, e1.name, e2.name, total.cnt
HAVING COUNT(*) >= 3 AND CAST(COUNT(*) AS REAL) / total.cnt > 0.5
"""
