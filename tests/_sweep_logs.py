"""A small synthetic interaction log with random unit vectors, for sweep tests."""

import numpy as np
import pandas as pd

from thatchlab.embed import LookupEmbedder


def interaction_log(n_events=400, n_situations=6, dim=48, noise=0.9, seed=0):
    """Messages near one of ``n_situations`` matchers, each followed now and then by an update.

    Each situation has a preferred statement confirmed 80 % of the time;
    the rest are disconfirms and soft signals. Returns ``(log, embedder)``.
    """
    rng = np.random.default_rng(seed)
    sit = rng.standard_normal((n_situations, dim))
    sit /= np.linalg.norm(sit, axis=1, keepdims=True)
    vectors = {f"when situation {i} comes up": sit[i] for i in range(n_situations)}
    for i in range(n_situations):
        for j in range(2):
            vectors[f"prefer option {j} for situation {i}"] = rng.standard_normal(dim)
    rows, t0 = [], pd.Timestamp("2026-01-01T00:00:00Z")
    n_msg = 0
    while len(rows) < n_events:
        i = int(rng.integers(n_situations))
        ts = t0 + pd.Timedelta(minutes=len(rows))
        text = f"prompt number {n_msg} on topic {i}"
        vectors[text] = sit[i] + noise * rng.standard_normal(dim) / np.sqrt(dim)
        session = f"s{n_msg}"
        rows.append(dict(ts=ts, session=session, kind="message", text=text))
        n_msg += 1
        if rng.random() < 0.6 and len(rows) < n_events:
            j = int(rng.random() < 0.2)
            u = rng.random()
            signal = "confirm" if u < 0.7 else ("disconfirm" if u < 0.85 else "soft")
            rows.append(dict(ts=ts + pd.Timedelta(seconds=20), session=session, kind="prediction_update",
                             matcher=f"when situation {i} comes up", statement=f"prefer option {j} for situation {i}",
                             signal=signal))
    log = pd.DataFrame(rows)
    log["ts"] = log["ts"].dt.strftime("%Y-%m-%dT%H:%M:%SZ")
    return log, LookupEmbedder({k: np.asarray(v, dtype=np.float32) for k, v in vectors.items()}, name="random-48")
