"""Nudge over many matchers: thatchlab against the floor and against a plain numpy loop.

An engine holds n matchers split over two stores (``project`` and
``global``), each tagged with a model (a tenth with another model's tag, so
the foreign-model count has work to do), one prediction each and a second
edge for every tenth matcher. Three prompts near some matchers are nudged
three ways in the same run:

* **ours**: ``PredictionEngine.nudge`` (embedding lookup, masks, float32 scan,
  exact float64 cosines for the candidates, ranking, the items frame, the
  regime and the nudge text);
* **floor**: one float32 matrix-vector product ``M @ q`` over the same
  matchers' vectors, the least any exact scan of every matcher must do;
* **peer**: what a user would write without thatchlab: a loop over the
  matchers of the searched stores calling ``np.dot`` per matcher (float64
  vectors and norms prepared beforehand), then production's rounding,
  top five, threshold, edges, scores and first five items.

Ours and the peer must return identical items (ids, matchers, scores).

    python benchmarks/bench_nudge.py          # 1k, 10k, 100k matchers
    python benchmarks/bench_nudge.py --ci     # small sizes, seconds

Last line: ``RESULT bench=nudge matchers=<n> floor_ratio=<ours/floor> peer_ratio=<peer/ours>``
(the ratio fields test at the largest size).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import parse  # noqa: E402

from thatchlab.core.jsfmt import js_round  # noqa: E402
from thatchlab.embed import LookupEmbedder  # noqa: E402
from thatchlab.scoring import PredictionEngine  # noqa: E402

DIM = 384


def build(n: int, seed: int = 0):
    """An engine with n matchers (half project, half global; a tenth tagged with
    another model), one prediction each and a second edge for every tenth
    matcher; plus queries near some matchers."""
    rng = np.random.default_rng(seed)
    m = rng.normal(size=(n, DIM)).astype(np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    items = rng.normal(size=(n, DIM)).astype(np.float32)
    stores = np.where(np.arange(n) % 2 == 0, "project", "global")
    models = np.where(np.arange(n) % 10 == 3, "older-model", "random")
    ts = "2026-01-01T00:00:00.000Z"
    c = rng.integers(0, 6, n).astype(float)
    d = rng.integers(0, 4, n) + 0.25 * rng.integers(0, 3, n)
    matchers = pd.DataFrame({"id": [f"m{i}" for i in range(n)], "store": stores,
                             "description": [f"situation {i}" for i in range(n)],
                             "embedding": list(m), "model": models, "created_at": ts, "updated_at": ts})
    preds = pd.DataFrame({"id": [f"p{i}" for i in range(n)], "store": stores,
                          "statement": [f"preference {i % (n // 3 + 1)}" for i in range(n)], "rationale": None,
                          "embedding": list(items), "model": models,
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


class Peer:
    """The per-matcher ``np.dot`` loop (inputs prepared once, outside the timing)."""

    def __init__(self, tables):
        m = tables["matchers"]
        self.rows = [(s, mid, v.astype(np.float64), float(np.sqrt(v.astype(np.float64) @ v.astype(np.float64))))
                     for s, mid, v in zip(m["store"], m["id"], m["embedding"])]
        e = tables["edges"]
        self.edges: dict = {}
        for mid, pid, w in zip(e["matcher_id"], e["prediction_id"], e["weight"]):
            self.edges.setdefault(mid, []).append((pid, float(w)))
        it = tables["items"]
        self.items = dict(zip(it["id"], zip(it["statement"], it["confidence"].astype(float))))

    def nudge(self, q, stores=("project", "global"), threshold=0.6, noise=0.01, top=5, max_items=5):
        qv = np.asarray(q, dtype=np.float64)
        qn = float(np.sqrt(qv @ qv))
        scored = []
        for store, mid, v, vn in self.rows:
            if store not in stores:
                continue
            cos = 0.0 if qn == 0 or vn == 0 else float(np.dot(qv, v)) / (qn * vn)
            if cos < noise:
                continue
            scored.append((js_round(cos * 1000) / 1000, mid))
        scored.sort(key=lambda r: -r[0])
        matched = [r for r in scored[:top] if r[0] >= threshold]
        rows = []
        for rc, mid in matched:
            for pid, w in self.edges.get(mid, ()):
                stmt, conf = self.items[pid]
                rows.append((stmt, rc, w, conf, pid, mid))
        rows.sort(key=lambda r: r[0])
        rows = [(js_round(rc * w * conf * 1000) / 1000, pid, mid) for _s, rc, w, conf, pid, mid in rows]
        rows.sort(key=lambda r: -r[0])
        seen, out = set(), []
        for score, pid, mid in rows:
            if pid in seen:
                continue
            seen.add(pid)
            out.append((pid, mid, score))
        return out[:max_items]


def clock(fn, *args):
    """(seconds, result) of one call."""
    t = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t, out


def main():
    args = parse(__doc__.splitlines()[0])
    sizes = [500, 2_000] if args.ci else [1_000, 10_000, 100_000]
    repeat = 5 if args.ci else 9
    floor_ratio = peer_ratio = None
    for n in sizes:
        eng, tables, queries = build(n)
        peer = Peer(tables)
        mat = np.vstack(tables["matchers"]["embedding"].to_list()).astype(np.float32)
        ours_s = floor_s = peer_s = 0.0
        n_foreign = 0
        for text, q in queries.items():
            q32 = np.asarray(q, dtype=np.float32)
            t_peer, expected = clock(peer.nudge, q)
            # best of several runs, ours and the floor interleaved so both see the same load
            t_ours = t_floor = float("inf")
            for _ in range(repeat):
                t, nudge = clock(eng.nudge, text)
                t_ours = min(t_ours, t)
                t_floor = min(t_floor, clock(np.matmul, mat, q32)[0])
            got = list(zip(nudge.items["item_id"], nudge.items["matcher_id"], nudge.items["score"]))
            if got != expected:
                print(f"MISMATCH at n={n}: {got} != {expected}")
                sys.exit(1)
            if not got:
                print(f"EMPTY nudge at n={n}: the benchmark would compare nothing")
                sys.exit(1)
            n_foreign += nudge.n_foreign_model
            ours_s += t_ours
            floor_s += t_floor
            peer_s += t_peer
        floor_ratio, peer_ratio = ours_s / floor_s, peer_s / ours_s
        print(f"matchers={n} queries={len(queries)} ours_s={ours_s:.4f} floor_s={floor_s:.4f} "
              f"peer_s={peer_s:.4f} floor_ratio={floor_ratio:.2f} peer_ratio={peer_ratio:.1f} "
              f"foreign_model_rows={n_foreign} identical=yes")
    print(f"RESULT bench=nudge matchers={sizes[-1]} floor_ratio={floor_ratio:.2f} peer_ratio={peer_ratio:.1f}")


if __name__ == "__main__":
    main()
