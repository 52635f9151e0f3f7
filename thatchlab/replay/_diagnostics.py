"""Diagnostics that explain a silent replay: why most messages surfaced nothing.

The usual cause is an embedder whose cosines sit on another scale than the
threshold was set for: the bundled MiniLM's paraphrase cosines are lower
than production's BGE-small's, so production's 0.60 surfaces little under
it. When more than half of the scored messages surface nothing, the replay
reports each message's best matcher cosine (median and 90th percentile)
beside the threshold, and points to ``thatchlab.fit.transfer_threshold``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["silence_diagnostics", "silent_share", "best_cosines", "SILENT_SHARE", "MAX_PROBED"]

#: Above this share of scored messages with regime ``none`` the replay explains itself.
SILENT_SHARE = 0.5
#: At most this many messages (evenly spaced) are probed for their best cosine.
MAX_PROBED = 2000


def _unit(m: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(m, axis=1, keepdims=True)
    return np.divide(m, n, out=np.zeros_like(m), where=n > 0)


def best_cosines(log: pd.DataFrame, positions: np.ndarray, matchers: pd.DataFrame, embedder,
                 project_store: str = "project") -> np.ndarray:
    """Per message at ``positions``, the highest cosine to a matcher of the final state in its
    reach (its store or ``global``, same dimension); NaN when it has none."""
    texts = log["text"].to_numpy(object)[positions]
    logged = (log["embedding"].to_numpy(object)[positions] if "embedding" in log.columns
              else np.full(len(positions), None, dtype=object))
    need = sorted({t for t, v in zip(texts, logged) if v is None})
    embedded = dict(zip(need, embedder.embed_queries(need))) if need else {}
    q = [np.asarray(v if v is not None else embedded[t], dtype=np.float64) for t, v in zip(texts, logged)]
    out = np.full(len(positions), np.nan)
    vecs = matchers["embedding"].to_numpy(object)
    stores = matchers["store"].to_numpy(object)
    msg_store = log["store"].to_numpy(object)[positions] if "store" in log.columns else None
    dims = np.array([len(v) if v is not None else 0 for v in vecs])
    for dim in sorted({len(v) for v in q}):
        rows = np.flatnonzero(dims == dim)
        if rows.size == 0:
            continue
        mat = _unit(np.vstack([np.asarray(vecs[j], dtype=np.float64) for j in rows]))
        idx = np.flatnonzero([len(v) == dim for v in q])
        cos = _unit(np.vstack([q[i] for i in idx])) @ mat.T
        for k, i in enumerate(idx):
            store = project_store if msg_store is None or msg_store[i] is None else msg_store[i]
            reach = (stores[rows] == store) | (stores[rows] == "global")
            if reach.any():
                out[i] = float(cos[k, reach].max())
    return out


def silent_share(events: pd.DataFrame) -> float:
    """Share of scored messages (regime not ``skipped``) that surfaced nothing (NaN if none)."""
    msgs = events[(events["kind"] == "message") & (events["regime"] != "skipped")]
    return float((msgs["regime"] == "none").mean()) if len(msgs) else float("nan")


def silence_diagnostics(log: pd.DataFrame, events: pd.DataFrame, matchers: pd.DataFrame, embedder,
                        threshold: float, project_store: str = "project") -> list[str]:
    """Sentences explaining a replay where most scored messages surfaced nothing (else ``[]``).

    A message is scored when its regime is not ``skipped``; it surfaced nothing
    when its regime is ``none``. The cosines are each probed message's best
    cosine to the final state's matchers in its reach — an upper bound on what
    it could have met at its own time.
    """
    msgs = events[(events["kind"] == "message") & (events["regime"] != "skipped")]
    if msgs.empty:
        return []
    silent = float((msgs["regime"] == "none").mean())
    if silent <= SILENT_SHARE:
        return []
    pos = msgs["position"].to_numpy(np.int64)
    if pos.size > MAX_PROBED:
        pos = pos[np.linspace(0, pos.size - 1, MAX_PROBED).round().astype(np.int64)]
    best = best_cosines(log, pos, matchers, embedder, project_store)
    name = getattr(embedder, "name", "the embedder")
    out = [f"{silent:.0%} of the {len(msgs)} scored messages surfaced nothing (regime 'none')."]
    if np.isfinite(best).any():
        p50, p90 = np.nanpercentile(best, [50, 90])
        out.append(f"Each message's best matcher cosine under {name}: median {p50:.3f}, 90th "
                   f"percentile {p90:.3f}, against a nudge threshold of {threshold:g}.")
        if p90 < threshold:
            out.append("Most cosines sit below the threshold: the embedder's cosine scale does not "
                       "match the threshold (thresholds set for one model do not transfer to another). "
                       "Re-tune the threshold on this model's cosines, or move it with "
                       "thatchlab.fit.transfer_threshold(threshold, these_cosines, production_cosines) "
                       "on the same text pairs; see the embeddings and thresholds section of the docs.")
    else:
        out.append("No message had a matcher of its dimension in its store or 'global': check the "
                   "stores and the embedder's dimension.")
    return out
