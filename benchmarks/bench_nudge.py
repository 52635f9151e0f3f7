"""Nudge over many matchers: thatchlab's vectorised scan against production's row loop.

The baseline follows production row by row: for each matcher of the
searched stores it computes the cosine in a Python loop over the vector's
elements (as production's JavaScript does), drops cosines below the noise
floor, rounds, sorts, keeps the top five, applies the threshold, then walks
the edges, orders by statement, scores, keeps each item's best row and the
first five. Both must return identical items.

    python benchmarks/bench_nudge.py          # 1k, 10k, 100k matchers
    python benchmarks/bench_nudge.py --ci     # small sizes, seconds
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import parse, timed  # noqa: E402

from thatchlab.core.jsfmt import js_round  # noqa: E402
from thatchlab.embed import LookupEmbedder  # noqa: E402
from thatchlab.scoring import PredictionEngine  # noqa: E402

DIM = 384


def build(n: int, seed: int = 0):
    """An engine with n matchers (half project, half global), one prediction each
    and a second edge for every tenth matcher; plus queries near some matchers."""
    rng = np.random.default_rng(seed)
    m = rng.normal(size=(n, DIM)).astype(np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    items = rng.normal(size=(n, DIM)).astype(np.float32)
    stores = np.where(np.arange(n) % 2 == 0, "project", "global")
    ts = "2026-01-01T00:00:00.000Z"
    c = rng.integers(0, 6, n).astype(float)
    d = rng.integers(0, 4, n) + 0.25 * rng.integers(0, 3, n)
    matchers = pd.DataFrame({"id": [f"m{i}" for i in range(n)], "store": stores,
                             "description": [f"situation {i}" for i in range(n)],
                             "embedding": list(m), "model": "random", "created_at": ts, "updated_at": ts})
    preds = pd.DataFrame({"id": [f"p{i}" for i in range(n)], "store": stores,
                          "statement": [f"preference {i % (n // 3 + 1)}" for i in range(n)], "rationale": None,
                          "embedding": list(items), "model": "random",
                          "confidence": (c + 2.5) / (c + d + 5), "confirm_count": c, "disconfirm_count": d,
                          "created_at": ts, "updated_at": ts})
    src = list(range(n)) + list(range(0, n, 10))
    dst = list(range(n)) + [(i * 7 + 3) % n for i in range(0, n, 10)]
    edges = pd.DataFrame({"matcher_id": [f"m{i}" for i in src], "prediction_id": [f"p{j}" for j in dst],
                          "weight": 1.0, "created_at": ts}).drop_duplicates(["matcher_id", "prediction_id"])
    tables = {"stores": pd.DataFrame({"name": ["global", "project"]}), "matchers": matchers,
              "items": preds, "edges": edges,
              "provenance": pd.DataFrame(columns=["id", "prediction_id", "signal", "detail", "created_at"])}
    queries = {}
    for j, target in enumerate(rng.choice(n, size=3, replace=False)):
        q = m[target] + rng.normal(scale=0.03, size=DIM).astype(np.float32)
        queries[f"query number {j}"] = q
    emb = LookupEmbedder({"unused": np.ones(DIM)}, queries=queries, name="random")
    return PredictionEngine.from_tables(tables, embedder=emb), tables, queries


def baseline_nudge(tables, q, stores=("project", "global"), threshold=0.6, noise=0.01, top=5, max_items=5):
    """Production's scan, one matcher at a time, in plain Python."""
    qv = [float(x) for x in q]
    scored = []
    for row in tables["matchers"].itertuples(index=False):
        if row.store not in stores:
            continue
        v = [float(x) for x in row.embedding]
        dot = na = nb = 0.0
        for a, b in zip(qv, v):
            dot += a * b
            na += a * a
            nb += b * b
        cos = 0.0 if na == 0 or nb == 0 else dot / (math.sqrt(na) * math.sqrt(nb))
        if cos < noise:
            continue
        scored.append((js_round(cos * 1000) / 1000, row.id, row.description))
    scored.sort(key=lambda r: -r[0])
    matched = [r for r in scored[:top] if r[0] >= threshold]
    edges = tables["edges"]
    items = tables["items"].set_index("id")
    rows = []
    for rc, mid, _desc in matched:
        for e in edges[edges["matcher_id"] == mid].itertuples(index=False):
            it = items.loc[e.prediction_id]
            rows.append((it["statement"], rc, e.weight, float(it["confidence"]), e.prediction_id, mid))
    rows.sort(key=lambda r: r[0])
    rows = [(js_round(rc * w * conf * 1000) / 1000, s, pid, mid) for s, rc, w, conf, pid, mid in rows]
    rows.sort(key=lambda r: -r[0])
    seen, out = set(), []
    for score, _s, pid, mid in rows:
        if pid in seen:
            continue
        seen.add(pid)
        out.append((pid, mid, score))
    return out[:max_items]


def main():
    args = parse(__doc__)
    sizes = [500, 2_000] if args.ci else [1_000, 10_000, 100_000]
    ratio = None
    for n in sizes:
        eng, tables, queries = build(n)
        base_s = ours_s = 0.0
        for text, q in queries.items():
            t_base, expected = timed(baseline_nudge, tables, q)
            t_ours, nudge = timed(eng.nudge, text, repeat=3)
            got = list(zip(nudge.items["item_id"], nudge.items["matcher_id"], nudge.items["score"]))
            if got != expected:
                print(f"MISMATCH at n={n}: {got} != {expected}")
                sys.exit(1)
            if not got:
                print(f"EMPTY nudge at n={n}: the benchmark would compare nothing")
                sys.exit(1)
            base_s += t_base
            ours_s += t_ours
        ratio = base_s / ours_s
        print(f"matchers={n} queries={len(queries)} baseline_s={base_s:.4f} ours_s={ours_s:.4f} "
              f"ratio={ratio:.1f} identical=yes")
    print(f"RESULT bench=nudge matchers={sizes[-1]} ratio={ratio:.1f}")


if __name__ == "__main__":
    main()
