"""Replay of an interaction log: the vectorised path against its floor and event-by-event.

A production-like starting store (matchers half in the project store, half
in ``global``, one prediction each) and a log of messages interleaved with
prediction updates (new and existing matchers, every signal) are replayed
both ways with random unit vectors (a LookupEmbedder, no model). Messages
are noisy copies of matcher vectors so nudges fire. The two results must be
identical (events, nudges, tables), else the script exits non-zero.

* **ours**: ``replay.run(log, "prediction", path="vectorised")``, all of it:
  validating the log, the write pass, embedding lookups, the cosine pairs,
  the nudges, the events frame and the metrics;
* **floor**: the arithmetic no exact replay can skip, on the same vectors:
  one float32 GEMM of every message vector × the final matcher matrix, plus,
  per write, one float32 mat-vec of the write's statement vector against
  the item matrix at its final size (the dedup search, at its largest). The
  GEMM is timed two ways, in one call (into an output buffer allocated
  before the clock) and in cache-sized row blocks into one reused buffer;
  the floor is the faster;
* **events**: ``path="events"``, the engine's public tools one event at a
  time (the reference); ``ratio`` is its time over ours.

``write_ms`` is the write pass alone (the engine's tools run once per write
with precomputed vectors and dedup cosines) per write; it starts from a
fresh engine each run.

Fair clocks: BLAS/OpenMP threads are pinned to the same count for every side
(``benchmarks/_util.py``, printed). Ours, the floor and the write pass are
timed with ``_util.best_of`` with the same ``repeat`` and one untimed
warm-up each; the events path (minutes at full size) runs once, after ours
has warmed every import. Vectors are looked up by every side from the same
in-memory embedder.

The run also times loading a large starting store: ``load_s`` is
``PredictionEngine.from_tables`` of a 100,000-matcher store (100,000
predictions, 110,000 edges, 384-d vectors; 5,000 matchers with ``--ci``),
checked to give back the same tables. ``store_load_s`` is
``store.import_sqlite`` of a 10,000-matcher SQLite file of the same shape
(1,000 with ``--ci``): reading and validating the file, then the same
``from_tables``; the engine it gives must hold the exported tables.

    python benchmarks/bench_replay.py          # 50,000 messages, 2,000 matchers
    python benchmarks/bench_replay.py --ci     # small sizes, seconds

Last line: ``RESULT bench=replay events=<n> ratio=<events_s / ours_s> floor_ratio=<ours_s / floor_s>
write_ms=<ms per write> vectorised_s=.. floor_s=.. events_s=.. load_matchers=<n> load_s=<s>
store_matchers=<n> store_load_s=<s> arrow_ratio=<vectorised_s / the same replay of the log Arrow-backed>``
(one line).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _util  # noqa: E402,I001  (pins threads before numpy starts its pools)

import numpy as np
import pandas as pd

from thatchlab.core.params import ScoringParams
from thatchlab.embed import LookupEmbedder
from thatchlab.replay import run
from thatchlab.scoring import PredictionEngine

DIM = 384


def build(n_messages: int, n_matchers: int, n_updates: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    m = rng.normal(size=(n_matchers, DIM)).astype(np.float32)
    items = rng.normal(size=(n_matchers, DIM)).astype(np.float32)
    stores = np.where(np.arange(n_matchers) % 2 == 0, "project", "global")
    ts = "2026-01-01T00:00:00.000Z"
    c = rng.integers(0, 6, n_matchers).astype(float)
    d = rng.integers(0, 4, n_matchers) + 0.25 * rng.integers(0, 3, n_matchers)
    stmt = [f"preference {i}" for i in range(n_matchers)]
    tables = {
        "stores": pd.DataFrame({"name": ["global", "project"]}),
        "matchers": pd.DataFrame({"id": [f"m{i}" for i in range(n_matchers)], "store": stores,
                                  "description": [f"situation {i}" for i in range(n_matchers)],
                                  "embedding": list(m), "model": "random", "created_at": ts, "updated_at": ts}),
        "items": pd.DataFrame({"id": [f"p{i}" for i in range(n_matchers)], "store": stores, "statement": stmt,
                               "rationale": None, "embedding": list(items), "model": "random",
                               "confidence": (c + 2.5) / (c + d + 5), "confirm_count": c,
                               "disconfirm_count": d, "created_at": ts, "updated_at": ts}),
        "edges": pd.DataFrame({"matcher_id": [f"m{i}" for i in range(n_matchers)],
                               "prediction_id": [f"p{i}" for i in range(n_matchers)], "weight": 1.0,
                               "created_at": ts}),
        "provenance": pd.DataFrame(columns=["id", "prediction_id", "signal", "detail", "created_at"])}
    passages = {f"situation {i}": m[i] for i in range(n_matchers)}
    passages.update({s: v for s, v in zip(stmt, items)})
    n_new = max(1, n_updates // 5)
    new_m = rng.normal(size=(n_new, DIM)).astype(np.float32)
    new_i = rng.normal(size=(n_new, DIM)).astype(np.float32)
    passages.update({f"new situation {j}": new_m[j] for j in range(n_new)})
    passages.update({f"new preference {j}": new_i[j] for j in range(n_new)})
    all_m = np.vstack([m, new_m])
    queries, rows = {}, []
    n = n_messages + n_updates
    upd_at = set(rng.choice(n, size=n_updates, replace=False).tolist())
    t0 = pd.Timestamp("2026-02-01T00:00:00Z")
    signals = np.array(["confirm", "disconfirm", "soft", "create"])
    k_new = 0
    for j in range(n):
        row = {"ts": t0 + pd.Timedelta(seconds=30 * j), "session": f"s{j // 4}"}
        if j in upd_at:
            if k_new < n_new and rng.random() < 0.2:
                row.update(kind="prediction_update", matcher=f"new situation {k_new}",
                           statement=f"new preference {k_new}", signal=str(rng.choice(signals)))
                k_new += 1
            else:
                i = int(rng.integers(n_matchers))
                row.update(kind="prediction_update", matcher=f"situation {i}", statement=stmt[i],
                           signal=str(rng.choice(signals[:3])), store=str(stores[i]))
        else:
            target = int(rng.integers(n_matchers + k_new))
            q = all_m[target] / np.linalg.norm(all_m[target]) + rng.normal(scale=0.04, size=DIM)
            text = f"message number {j}"
            queries[text] = q.astype(np.float32)
            row.update(kind="message", text=text)
        rows.append(row)
    emb = LookupEmbedder(passages, queries=queries, name="random")
    initial = PredictionEngine.from_tables(tables, embedder=emb)
    return pd.DataFrame(rows), emb, initial


def time_load(n: int):
    """Seconds to load an n-matcher store into an engine, and whether it reads back the same."""
    from bench_nudge import build as build_store  # the nudge benchmark's 100k-matcher store

    _, tables, _ = build_store(n)
    t = time.perf_counter()
    eng = PredictionEngine.from_tables(tables)
    load_s = time.perf_counter() - t
    back = eng.tables
    ok = all(back[name][col].tolist() == tables[name][col].tolist()
             for name, cols in (("matchers", ["id", "store", "description", "model"]),
                                ("items", ["id", "statement", "confidence", "confirm_count"]),
                                ("edges", ["matcher_id", "prediction_id", "weight"])) for col in cols)
    ok = ok and all(np.array_equal(back["items"]["embedding"].iloc[j], tables["items"]["embedding"].iloc[j])
                    for j in range(0, n, max(1, n // 100)))
    return load_s, ok


def time_store_load(n: int):
    """Seconds to import an n-matcher SQLite store into an engine, and whether it holds
    the tables that were exported."""
    import tempfile

    from bench_nudge import build as build_store

    from thatchlab.store import export_sqlite, import_sqlite

    eng, _, _ = build_store(n)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "store.db"
        export_sqlite(path, prediction=eng, allow_model_mismatch=True)
        t = time.perf_counter()
        back = import_sqlite(path).prediction
        load_s = time.perf_counter() - t
    given, got = eng.tables, back.tables
    cols = {"matchers": ["id", "store", "description", "model", "created_at"],
            "items": ["id", "store", "statement", "confirm_count", "disconfirm_count"],
            "edges": ["matcher_id", "prediction_id", "weight"]}
    ok = all(got[name][col].tolist() == given[name][col].tolist() for name, cs in cols.items() for col in cs)
    ok = ok and all(np.array_equal(u, v) for name in ("matchers", "items")
                    for u, v in zip(got[name]["embedding"], given[name]["embedding"]))
    return load_s, ok


def same(a, b) -> bool:
    try:
        pd.testing.assert_frame_equal(a.events, b.events)
        pd.testing.assert_frame_equal(a.nudges, b.nudges)
        for name in a.tables:
            x, y = a.tables[name], b.tables[name]
            if list(x.columns) != list(y.columns) or len(x) != len(y):
                return False
            for col in x.columns:
                for u, v in zip(x[col].tolist(), y[col].tolist()):
                    if isinstance(u, np.ndarray) or isinstance(v, np.ndarray):
                        if not np.array_equal(u, v):
                            return False
                    elif not (u == v or (u is None and v is None) or (u != u and v != v)):
                        return False
    except AssertionError as exc:
        print(f"MISMATCH: {exc}")
        return False
    return True


def floor_of(log: pd.DataFrame, emb, res):
    """The floor's inputs (made outside the clock) and two ways to time it: the product
    in one call, and in row blocks into a reused buffer (faster here: the output stays
    in cache); each adds the dedup mat-vecs."""
    tables = res.tables
    matchers = np.vstack(tables["matchers"]["embedding"].to_list()).astype(np.float32)
    items = np.vstack(tables["items"]["embedding"].to_list()).astype(np.float32)
    messages = log["text"][log["kind"] == "message"].tolist()
    queries = np.asarray(emb.embed_queries(messages), dtype=np.float32)
    statements = log["statement"][log["kind"] == "prediction_update"].tolist()
    writes = list(np.asarray(emb.embed_passages(statements), dtype=np.float32))
    out = np.empty((len(queries), len(matchers)), dtype=np.float32)
    rows = max(1, (1 << 20) // len(matchers))
    buf = np.empty((rows, len(matchers)), dtype=np.float32)

    def one_call():
        np.matmul(queries, matchers.T, out=out)
        for v in writes:
            items @ v

    def blocked():
        for s in range(0, len(queries), rows):
            part = queries[s:s + rows]
            np.matmul(part, matchers.T, out=buf[: len(part)])
        for v in writes:
            items @ v
    return one_call, blocked, (len(queries), len(matchers), len(items), len(writes))


def write_pass(log, emb, initial):
    """The vectorised replay's write pass alone, from a fresh engine."""
    from thatchlab.replay._scoring_plan import _stores
    from thatchlab.replay._scoring_writes import run_writes
    from thatchlab.replay.scoring import ENGINE_KINDS, initial_engine

    eng = initial_engine(initial, "prediction", emb, ScoringParams())
    return run_writes(eng, log, _stores(log, eng.project_store), ENGINE_KINDS["prediction"])


def main():
    args = _util.parse(__doc__.splitlines()[0])
    _util.pin_threads()
    print(_util.describe_threads())
    n_messages, n_matchers, n_updates = (1_000, 200, 100) if args.ci else (50_000, 2_000, 2_000)
    repeat = args.repeat or 3
    log, emb, initial = build(n_messages, n_matchers, n_updates)
    params = ScoringParams()
    import sklearn.metrics  # noqa: F401  - warm the lazy import both paths' metrics use
    print(f"sizes: messages={n_messages} matchers={n_matchers} updates={n_updates} dim={DIM} repeat={repeat}")
    t_vec, vec = _util.best_of(run, log, "prediction", params, embedder=emb, initial=initial, path="vectorised",
                               repeat=repeat, warmup=1)
    one_call, blocked, shape = floor_of(log, emb, vec)
    t_one, _ = _util.best_of(one_call, repeat=repeat, warmup=1)
    t_blocked, _ = _util.best_of(blocked, repeat=repeat, warmup=1)
    t_floor = min(t_one, t_blocked)  # the faster way to do the floor's arithmetic
    from thatchlab.logs import sort_by_time
    from thatchlab.replay.scoring import check_log

    checked = sort_by_time(check_log(log), "interaction log")
    t_writes, written = _util.best_of(write_pass, checked, emb, initial, repeat=repeat, warmup=1)
    n_writes = len(written.writes.position)
    print(f"vectorised: {t_vec:.3f} s  floor: {t_floor:.3f} s (GEMM {shape[0]} x {shape[1]} x {DIM} "
          f"in one call {t_one:.3f} s, in row blocks {t_blocked:.3f} s; + {shape[3]} mat-vecs over "
          f"{shape[2]} items)  floor_ratio: {t_vec / t_floor:.2f}  "
          f"write pass: {t_writes:.3f} s for {n_writes} writes ({1e3 * t_writes / n_writes:.3f} ms a write)")
    arrow_log = _util.arrow_backed(log)
    t_arrow, by_arrow = _util.best_of(run, arrow_log, "prediction", params, embedder=emb, initial=initial,
                                      path="vectorised", repeat=repeat, warmup=1)
    if not same(vec, by_arrow):
        print("MISMATCH: the replay of the Arrow-backed log differs")
        sys.exit(1)
    print(f"on the Arrow-backed log: {t_arrow:.3f} s (arrow_ratio {t_vec / t_arrow:.3f}, target >= 0.8); identical")
    t_ev, ev = _util.timed(run, log, "prediction", params, embedder=emb, initial=initial, path="events")
    ok = same(vec, ev)
    print(f"vectorised: {t_vec:.3f} s  events: {t_ev:.3f} s  nudged items: {len(vec.nudges)}  "
          f"regimes: {vec.events['regime'].value_counts().to_dict()}  identical: {ok}")
    if not ok:
        sys.exit(1)
    n_load = 5_000 if args.ci else 100_000
    load_s, load_ok = time_load(n_load)
    print(f"loading a {n_load:,}-matcher store: {load_s:.3f} s; reads back the same tables: {load_ok}")
    if not load_ok:
        sys.exit(1)
    n_store = 1_000 if args.ci else 10_000
    store_s, store_ok = time_store_load(n_store)
    print(f"importing a {n_store:,}-matcher SQLite store: {store_s:.3f} s; holds the exported tables: {store_ok}")
    if not store_ok:
        sys.exit(1)
    print(_util.result("replay", events=n_messages, ratio=t_ev / t_vec, floor_ratio=t_vec / t_floor,
                       write_ms=1e3 * t_writes / n_writes, vectorised_s=t_vec, floor_s=t_floor,
                       gemm_one_call_s=t_one, gemm_blocked_s=t_blocked, events_s=t_ev,
                       load_matchers=n_load, load_s=load_s, store_matchers=n_store, store_load_s=store_s,
                       arrow_ratio=t_vec / t_arrow))


if __name__ == "__main__":
    main()
