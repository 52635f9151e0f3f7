"""The vectorised replay of the scoring engines (DESIGN §11), built for sweeps.

:func:`prepare` does the one-time work. (1) The writes run once, in log
order, through the engine's own write path with precomputed passage vectors;
it records per matcher, item and edge the log position where it appeared (and
an item's deletion), and per item the history of count increments. None of
this depends on K, P0, W_SOFT or the thresholds. (2) Every message and query
text is embedded once; one float32 product gives all (text, matcher) cosines
and the candidates are recomputed in float64 as the engine does.
:meth:`ScoringPlan.run` then answers one parameter setting with array
operations: the posterior of the count history, the threshold and top-k
masks, the edge join, the score / statement / first-row ordering and the
regime, plus the reply texts (they print confidences, so they depend on K, P0).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.core.errors import InputError, ParamsError
from thatchlab.core.jsfmt import js_number, js_round, r3, to_fixed
from thatchlab.core.params import ScoringParams
from thatchlab.core.vectors import MARGIN, exact_cosines
from thatchlab.replay._fast_writes import fast_write_class
from thatchlab.replay._scoring_writes import WritePass, group_rank
from thatchlab.replay.scoring import (
    ENGINE_KINDS,
    EVENT_COLUMNS,
    ReplayResult,
    check_log,
    engine_class,
    events_frame,
    initial_engine,
    nudges_frame,
)
from thatchlab.scoring import evidence_count, posterior_confidence

__all__ = ["prepare", "ScoringPlan"]


def _ranges(starts, counts):
    """Flat indices of the ranges [starts[i], starts[i] + counts[i])."""
    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    owner = np.repeat(np.arange(len(counts)), counts)
    offs = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    return owner, np.asarray(starts, dtype=np.int64)[owner] + offs


def prepare(log, engine: str = "prediction", embedder=None, initial=None, dedup_cosine: float = 0.85,
            dedup_scope: str = "store+global", *, validated: bool = False) -> "ScoringPlan":
    """Run the parameter-independent part of a replay once.

    Parameters
    ----------
    log, engine, embedder, initial : as for :func:`thatchlab.replay.run`.
    dedup_cosine, dedup_scope : the dedup rule of the writes; a plan serves
        every :class:`~thatchlab.core.params.ScoringParams` with these two values.

    Returns
    -------
    ScoringPlan
        ``plan.run(params)`` → :class:`~thatchlab.replay.ReplayResult`.

    Examples
    --------
    >>> import pandas as pd
    >>> from thatchlab.embed import LookupEmbedder
    >>> from thatchlab.core.params import ScoringParams
    >>> emb = LookupEmbedder({"writing tests": [1, 0], "use pytest": [0, 1],
    ...                       "I am writing tests now": [1, 0.1]})
    >>> log = pd.DataFrame({"ts": ["2026-01-01T09:00:00Z", "2026-01-01T09:05:00Z"],
    ...     "session": ["s1", "s2"], "kind": ["prediction_update", "message"],
    ...     "matcher": ["writing tests", None], "statement": ["use pytest", None],
    ...     "signal": ["confirm", None], "text": [None, "I am writing tests now"]})
    >>> plan = prepare(log, embedder=emb)
    >>> [float(plan.run(ScoringParams(k=k)).nudges["score"].iloc[0]) for k in (1, 5, 20)]
    [0.746, 0.58, 0.521]
    """
    log = log if validated else check_log(log)
    wparams = ScoringParams(dedup_cosine=dedup_cosine, dedup_scope=dedup_scope)
    eng = initial_engine(initial, engine, embedder, wparams, cls=fast_write_class(engine_class(engine)))
    return ScoringPlan(log, engine, eng)


class ScoringPlan(WritePass):
    """The prepared replay of one log (see :func:`prepare`)."""

    def __init__(self, log: pd.DataFrame, engine: str, eng):
        self.log, self.engine = log, engine
        self.dedup_cosine, self.dedup_scope = eng.params.dedup_cosine, eng.params.dedup_scope
        self.config = eng.config
        self.embedder_name = getattr(eng.embedder, "name", None)
        n = len(log)
        self.n = n
        self._big = n + 2
        self.stores = log["store"].where(log["store"].notna(), eng.project_store).to_numpy(object)
        self._writes(eng)
        self._reads(eng)
        self._pair_cache = None

    # ------------------------------------------------------------------ step 2
    def _reads(self, eng):
        log = self.log
        kinds = log["kind"].to_numpy(object)
        is_read = (kinds == "message") | ((kinds == "prediction_query") & (self.engine == "prediction"))
        self.r_pos = np.flatnonzero(is_read)
        self.r_query = kinds[self.r_pos] == "prediction_query"
        texts = log["text"].to_numpy(object)[self.r_pos]
        self.r_len = np.asarray([len(t) for t in texts], dtype=np.int64)
        logged = log["embedding"].to_numpy(object)[self.r_pos]
        keys, vectors, u_idx, to_embed = {}, [], np.zeros(len(texts), dtype=np.int64), []
        for j, (t, v) in enumerate(zip(texts, logged)):
            if v is not None:
                u_idx[j] = len(vectors)
                vectors.append(np.asarray(v, dtype=np.float32))
                continue
            if t not in keys:
                keys[t] = len(vectors)
                vectors.append(None)
                to_embed.append(t)
            u_idx[j] = keys[t]
        if to_embed:
            for t, v in zip(to_embed, eng._embed(to_embed, "query")):
                vectors[keys[t]] = v
        dims = {len(v) for v in vectors}
        if len(dims) > 1:
            raise InputError(f"embedding: query vectors of several dimensions {sorted(dims)}; expected one")
        dim = dims.pop() if dims else 0
        self.u_idx = u_idx
        self.U64 = np.vstack(vectors).astype(np.float64) if vectors else np.zeros((0, dim))
        nm = len(self.m_id)
        self.m_ok = eng._m_vec.usable(dim, None, eng.model_name) if nm else np.zeros(0, dtype=bool)
        ok = np.flatnonzero(self.m_ok)
        self.m_ok_idx = ok
        self.M32 = eng._m_vec._mat[:nm][ok] if ok.size else np.zeros((0, dim), dtype=np.float32)
        self.M64 = (np.vstack([eng._m_vec.vector(int(j)) for j in ok]).astype(np.float64) if ok.size
                    else np.zeros((0, dim)))
        codes = {s: j for j, s in enumerate(sorted(set(self.m_store) | set(self.stores) | {"global"}))}
        self.m_scode = np.asarray([codes[s] for s in self.m_store], dtype=np.int64)
        self.r_scode = np.asarray([codes[s] for s in self.stores[self.r_pos]], dtype=np.int64)
        self.g_code = codes["global"]

    def _event_pairs(self, lo: float):
        """(read, matcher, exact cosine) for every alive, in-store pair whose
        float32 cosine is ≥ lo − MARGIN (cached; a lower ``lo`` recomputes)."""
        if self._pair_cache is not None and self._pair_cache[0] <= lo:
            return self._pair_cache[1]
        U = self.U64
        nu = len(U)
        qn = np.sqrt(np.einsum("ij,ij->i", U, U))
        U32 = np.divide(U, qn[:, None], out=np.zeros_like(U), where=qn[:, None] > 0).astype(np.float32)
        pu, pm = [], []
        step = max(1, 4_000_000 // max(1, len(self.M32)))
        for s in range(0, nu, step):
            A = U32[s:s + step] @ self.M32.T
            a, b = np.nonzero(A >= lo - MARGIN)
            pu.append(a + s)
            pm.append(b)
        pu = np.concatenate(pu) if pu else np.zeros(0, dtype=np.int64)
        pm = np.concatenate(pm) if pm else np.zeros(0, dtype=np.int64)
        # exact float64 cosines, production's dot / (|a| |b|)
        cos = exact_cosines(self.M64[pm], U[pu])
        m = self.m_ok_idx[pm] if len(pm) else pm
        # CSR by unique text, then expand to reads
        o = np.lexsort((m, pu))
        pu, m, cos = pu[o], m[o], cos[o]
        ptr = np.searchsorted(pu, np.arange(nu + 1))
        u = self.u_idx
        r, idx = _ranges(ptr[u], ptr[u + 1] - ptr[u])
        mm = m[idx]
        keep = (self.m_created[mm] < self.r_pos[r]) & (
            (self.m_scode[mm] == self.r_scode[r]) | (self.m_scode[mm] == self.g_code))
        out = (r[keep], mm[keep], cos[idx][keep])
        self._pair_cache = (lo, out)
        return out

    # ------------------------------------------------------------------ step 3
    def _history(self, p: ScoringParams):
        """Counts and stored confidence after every history entry under ``p``
        (sequential sums per item, as the engine adds)."""
        c = self.h_dc.copy()
        d = self.h_dd + p.soft_weight * self.h_soft
        for k in range(1, int(self.h_rank.max()) + 1 if len(self.h_rank) else 0):
            j = np.flatnonzero(self.h_rank == k)
            c[j] = c[j - 1] + c[j]
            d[j] = d[j - 1] + d[j]
        conf = posterior_confidence(c, d, p.k, p.p0)
        conf = np.where(np.isnan(self.h_fixed), conf, self.h_fixed)
        return np.atleast_1d(c), np.atleast_1d(d), np.atleast_1d(conf)

    def run(self, params: ScoringParams | None = None, *, metrics: bool = True) -> ReplayResult:
        """Replay under ``params`` (same dedup rule as the plan)."""
        p = ScoringParams() if params is None else params
        if not isinstance(p, ScoringParams):
            raise ParamsError(f"params: expected ScoringParams, got {type(p).__name__}")
        if p.dedup_cosine != self.dedup_cosine or p.dedup_scope != self.dedup_scope:
            raise ParamsError(f"params: this plan was prepared with dedup_cosine={self.dedup_cosine}, "
                              f"dedup_scope={self.dedup_scope!r}; prepare another plan for "
                              f"dedup_cosine={p.dedup_cosine}, dedup_scope={p.dedup_scope!r}")
        hc, hd, hconf = self._history(p)
        nudges, regime, n_items, reply_r = self._rank(p, hc, hd, hconf)
        events = self._events(p, hc, hd, hconf, regime, n_items, reply_r)
        res = ReplayResult(events=events, nudges=nudges, tables=self._final_tables(hc, hd, hconf),
                           engine=self.engine, embedder=self.embedder_name, params=p, path="vectorised")
        if metrics:
            from thatchlab.metrics.scoring import replay_metrics

            res.metrics = replay_metrics(res, self.log)
        return res

    def _rank(self, p, hc, hd, hconf):
        nr = len(self.r_pos)
        thr_r = np.where(self.r_query, p.query_threshold, p.threshold)
        skipped = ~self.r_query & (self.r_len < p.min_prompt_chars)
        lo = max(p.noise_floor, float(thr_r.min()) if nr else p.threshold)
        r, m, cos = self._event_pairs(lo)
        rc = r3(cos) if len(cos) else cos
        keep = (cos >= p.noise_floor) & (rc >= thr_r[r]) & ~skipped[r]
        r, m, rc = r[keep], m[keep], np.asarray(rc)[keep]
        o = np.lexsort((m, -rc, r))
        r, m, rc = r[o], m[o], rc[o]
        mrank = group_rank(r)
        keep = mrank < p.top_matchers
        r, m, rc, mrank = r[keep], m[keep], rc[keep], mrank[keep]
        # edges alive at the read's position
        er, eidx = _ranges(self.e_ptr[m], self.e_ptr[m + 1] - self.e_ptr[m])
        pos = self.r_pos[r][er]
        it = self.e_i[eidx]
        alive = (self.e_pos[eidx] < pos) & (self.i_deleted[it] > pos)
        er, eidx, pos, it = er[alive], eidx[alive], pos[alive], it[alive]
        hidx = np.searchsorted(self.h_key, it * self._big + (pos + 1), side="left") - 1
        conf = hconf[hidx] if len(hidx) else np.zeros(0)
        ok = conf >= p.min_confidence
        er, eidx, it, hidx, conf = er[ok], eidx[ok], it[ok], hidx[ok], conf[ok]
        rr, rcos, w = r[er], rc[er], self.e_w[eidx]
        score = np.asarray(r3(rcos * w * conf)) if len(conf) else np.zeros(0)
        o = np.lexsort((self.e_seq[eidx], mrank[er], self.i_stmt_rank[it], -score, rr))
        rr, it, eidx, hidx, conf, score, rcos, w, mm = (rr[o], it[o], eidx[o], hidx[o], conf[o], score[o],
                                                        rcos[o], w[o], m[er][o])
        first = np.ones(len(rr), dtype=bool)
        if len(rr):
            key = rr * (len(self.i_id) + 1) + it
            _, fi = np.unique(key, return_index=True)
            first[:] = False
            first[fi] = True
        rank = group_rank(rr[first])
        sel = np.flatnonzero(first)
        cap = np.where(self.r_query[rr[sel]], np.iinfo(np.int64).max, p.max_items)
        sel, rank = sel[rank < cap], rank[rank < cap]
        rr, it, hidx, conf, score, rcos, w, mm = (a[sel] for a in (rr, it, hidx, conf, score, rcos, w, mm))
        ev = evidence_count(hc[hidx], hd[hidx]) if len(hidx) else np.zeros(0, dtype=np.int64)
        nudges = nudges_frame({
            "position": self.r_pos[rr], "rank": rank, "item_id": self.i_id[it], "statement": self.i_statement[it],
            "matcher_id": self.m_id[mm], "matcher_description": self.m_desc[mm], "store": self.i_store[it],
            "score": score, "cosine": rcos, "weight": w, "confidence": r3(conf) if len(conf) else conf,
            "stored_confidence": conf, "evidence_count": ev})
        n_items = np.bincount(rr, minlength=nr)
        regime = np.where(skipped, "skipped", np.where(n_items == 0, "none", "ambiguous")).astype(object)
        regime[self.r_query] = None
        top = np.flatnonzero(rank == 0)
        if len(top):
            tr = rr[top]
            start = np.r_[top, len(rr)]
            k = js_round(score * 1000).astype(np.int64)
            tk = np.repeat(k[top], np.diff(start))
            tm = np.repeat(mm[top], np.diff(start))
            comp = (rank > 0) & (mm == tm) & (tk - k <= int(js_round(p.conflict_margin * 1000)))
            competing = np.bincount(rr[comp], minlength=nr) > 0
            strong = (conf[top] >= p.strong_confidence) & (ev[top] >= p.strong_evidence) & ~competing[tr]
            msg = ~self.r_query[tr]
            regime[tr[strong & msg]] = "strong"
        reply_r = self._read_texts(nr, rr, n_items, conf, ev, mm, it)
        return nudges, regime, n_items, reply_r

    def _read_texts(self, nr, rr, n_items, conf, ev, mm, it):
        cfg = self.config
        c3 = r3(conf) if len(conf) else conf
        fixed = {v: to_fixed(v, 2) for v in np.unique(c3)}
        lines = [f"[{fixed[c]} conf, {n} tests] When {d}: "
                 f"{cfg.verb_untested if n == 0 else cfg.verb_tested} {s}"
                 for c, n, d, s in zip(c3.tolist(), ev.tolist(), self.m_desc[mm], self.i_statement[it])]
        out = np.empty(nr, dtype=object)
        out[:] = ""
        bounds = np.r_[0, np.cumsum(n_items)]
        for j in np.flatnonzero(n_items):
            seg = lines[bounds[j]:bounds[j + 1]]
            if self.r_query[j]:
                out[j] = "\n".join(seg)
            else:
                out[j] = "\n".join([cfg.header] + ["- " + s for s in seg])
        empty = self.r_query & (n_items == 0)
        out[empty] = f"No matching {cfg.plural} found."
        return out

    def _events(self, p, hc, hd, hconf, regime, n_items, reply_r) -> pd.DataFrame:
        log, n = self.log, self.n
        kinds = log["kind"].to_numpy(object)
        col = {c: np.full(n, None, dtype=object) for c in ("regime", "action", "item_id", "matcher_id",
                                                            "signal", "reply")}
        num = {c: np.full(n, np.nan) for c in ("n_items", "forecast", "confidence")}
        own = np.isin(kinds, ENGINE_KINDS[self.engine]) | (kinds == "message")
        col["action"][~own] = "ignored"
        rp = self.r_pos
        col["regime"][rp] = regime
        num["n_items"][rp] = n_items
        col["reply"][rp] = reply_r
        col["action"][rp[self.r_query]] = "query"
        w = self.w
        wp = w["position"]
        for c in ("action", "item_id", "matcher_id", "signal"):
            col[c][wp] = w[c]
        after, before = w["after"], w["before"]
        has = after >= 0
        num["confidence"][wp[has]] = hconf[after[has]]
        fc = before >= 0
        num["forecast"][wp[fc]] = hconf[before[fc]]
        texts = w["text"].copy()
        for j in np.flatnonzero(w["counts"]):
            a = after[j]
            texts[j] = (f"{texts[j]} confidence={to_fixed(hconf[a], 2)} "
                        f"({js_number(hc[a])}/{js_number(hd[a])})")
        col["reply"][wp] = texts
        df = pd.DataFrame({"position": np.arange(n, dtype=np.int64), "ts": log["ts"].to_numpy(),
                           "session": log["session"].to_numpy(object), "store": self.stores,
                           "kind": kinds, **col, **num})
        df["ts"] = log["ts"].reset_index(drop=True)
        return events_frame(df[EVENT_COLUMNS])

    def _final_tables(self, hc, hd, hconf) -> dict:
        t = {k: v.copy() for k, v in self._tables.items()}
        items = t["items"]
        if len(items):
            idx = np.asarray([self._last_entry(i) for i in items["id"]], dtype=np.int64)
            items["confirm_count"] = hc[idx]
            items["disconfirm_count"] = hd[idx]
            items["confidence"] = hconf[idx]
        return t

    def _last_entry(self, iid):
        if not hasattr(self, "_id_index"):
            self._id_index = {x: j for j, x in enumerate(self.i_id)}
            ends = np.r_[np.flatnonzero(self.h_item[1:] != self.h_item[:-1]), len(self.h_item) - 1]
            self._last_of = dict(zip(self.h_item[ends].tolist(), ends.tolist()))
        return self._last_of[self._id_index[iid]]

