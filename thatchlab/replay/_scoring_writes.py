"""Step 1 of the vectorised replay: the write pass (DESIGN §11; seeds 000, 003).

Every write of the log (updates, codify, feedback, deletes) runs once, in log
order, through the engine's own write path, with passage vectors embedded in
one batch and dedup searches answered by lookup (:mod:`._fast_writes`). The
pass records, independently of K, P0, W_SOFT and thresholds: per matcher,
item and edge the log position where it appeared (and an item's deletion);
per item the history of count increments (confirm, hard disconfirm, soft),
from which any parameter setting recomputes counts and stored confidence;
and per write what its reply needs.
"""

from __future__ import annotations

import numpy as np

from thatchlab.replay._fast_writes import attach_lookups
from thatchlab.replay.scoring import ENGINE_KINDS

__all__ = ["WritePass"]

_SIGNALS = ("confirm", "disconfirm", "soft")


def group_rank(keys):
    """Rank of each element within runs of equal ``keys`` (keys already grouped)."""
    n = len(keys)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    start = np.r_[True, keys[1:] != keys[:-1]]
    first = np.maximum.accumulate(np.where(start, np.arange(n), 0))
    return np.arange(n) - first


class WritePass:
    """Mixin of :class:`~thatchlab.replay._scoring_plan.ScoringPlan` holding step 1."""

    def _writes(self, eng):
        from thatchlab.core.progress import progress

        log, cfg = self.log, eng.config
        kinds = log["kind"].to_numpy(object)
        wkinds = [k for k in ENGINE_KINDS[self.engine] if k != "prediction_query"]
        wpos = np.flatnonzero(np.isin(kinds, wkinds))
        m_texts = set(log["matcher"].to_numpy(object)[wpos])
        i_texts = set(log["statement"].to_numpy(object)[wpos])
        m_texts.discard(None)
        i_texts.discard(None)
        texts = sorted(m_texts | i_texts)
        vecs = dict(zip(texts, eng._embed(texts, "passage"))) if texts else {}
        lookups = attach_lookups(eng, sorted(m_texts), sorted(i_texts), vecs)
        items = {"id": [], "statement": [], "store": [], "deleted": []}
        index = {}
        hist = {"item": [], "pos": [], "dc": [], "dd": [], "soft": [], "fixed": []}
        last = []

        def add_hist(i, pos, dc, dd, soft, fixed):
            hist["item"].append(i)
            hist["pos"].append(pos)
            hist["dc"].append(dc)
            hist["dd"].append(dd)
            hist["soft"].append(soft)
            hist["fixed"].append(fixed)
            last[i] = len(hist["item"]) - 1

        def add_item(iid, pos):
            i = len(items["id"])
            index[iid] = i
            ipos = eng._i_pos[iid]
            items["id"].append(iid)
            items["statement"].append(eng._i["statement"][ipos])
            items["store"].append(eng._i["store"][ipos])
            items["deleted"].append(self._big)
            last.append(-1)
            return i

        for iid, c, d, conf in zip(eng._i["id"], eng._i["confirm_count"], eng._i["disconfirm_count"],
                                   eng._i["confidence"]):
            add_hist(add_item(iid, -1), -1, float(c), float(d), 0.0, float(conf))
        m_created = [-1] * len(eng._m["id"])
        edges = {"m": list(eng._e["matcher_id"]), "i": list(eng._e["item_id"]),
                 "w": list(eng._e["weight"]), "pos": [-1] * len(eng._e["matcher_id"])}
        n_e = len(eng._e["matcher_id"])
        w = {"position": [], "action": [], "item_id": [], "matcher_id": [], "signal": [], "text": [],
             "counts": [], "after": [], "before": []}
        ts = log["ts"].tolist()
        records = log.iloc[wpos].to_dict(orient="records")
        for ev, pos in zip(progress(records, total=len(wpos), desc="replay writes"), wpos.tolist()):
            eng.project_store = self.stores[pos]
            lookups["current"] = {"m": ev["matcher"], "i": ev["statement"]}
            kind, now = ev["kind"], ts[pos]
            if kind in ("prediction_update", "behavior_codify"):
                signal = ev["signal"] if kind == "prediction_update" else cfg.create_signal
                reply = eng._write(ev["matcher"], ev["statement"], signal, ev["rationale"], None, now,
                                   vectors=(vecs[ev["matcher"]], vecs[ev["statement"]]))
            elif kind == "behavior_feedback":
                reply = eng.feedback(ev["statement"], bool(ev["relevant"]), ev["text"] or "", now=now,
                                     vector=vecs[ev["statement"]])
            else:
                reply = eng.delete(ev["statement"], vector=vecs[ev["statement"]])
            m_created.extend([pos] * (len(eng._m["id"]) - len(m_created)))
            before = -1
            if reply.action == "deleted":
                items["deleted"][index[reply.item_id]] = pos
                n_e = len(eng._e["matcher_id"])
            elif reply.action != "not_found":
                if reply.item_id not in index:
                    add_hist(add_item(reply.item_id, pos), pos, 0.0, 0.0, 0.0, np.nan)
                i = index[reply.item_id]
                for j in range(n_e, len(eng._e["matcher_id"])):
                    edges["m"].append(eng._e["matcher_id"][j])
                    edges["i"].append(eng._e["item_id"][j])
                    edges["w"].append(eng._e["weight"][j])
                    edges["pos"].append(pos)
                n_e = len(eng._e["matcher_id"])
                if reply.signal in _SIGNALS:
                    before = last[i]
                    add_hist(i, pos, 1.0 if reply.signal == "confirm" else 0.0,
                             1.0 if reply.signal == "disconfirm" else 0.0,
                             1.0 if reply.signal == "soft" else 0.0, np.nan)
            counts = reply.confidence is not None and " confidence=" in reply.text
            w["position"].append(pos)
            w["action"].append(reply.action)
            w["item_id"].append(reply.item_id)
            w["matcher_id"].append(reply.matcher_id)
            w["signal"].append(reply.signal)
            w["text"].append(reply.text.rsplit(" confidence=", 1)[0] if counts else reply.text)
            w["counts"].append(counts)
            w["after"].append(last[index[reply.item_id]] if reply.signal is not None else -1)
            w["before"].append(before)
        lookups["current"] = {}
        self._tables = eng.tables
        self._final_item_ids = list(eng._i["id"])
        # items, matchers, edges as arrays
        self.i_id = np.asarray(items["id"], dtype=object)
        self.i_statement = np.asarray(items["statement"], dtype=object)
        self.i_store = np.asarray(items["store"], dtype=object)
        self.i_deleted = np.asarray(items["deleted"], dtype=np.int64)
        order = sorted(set(items["statement"]))
        rank = {s: j for j, s in enumerate(order)}
        self.i_stmt_rank = np.asarray([rank[s] for s in items["statement"]], dtype=np.int64)
        self.m_id = np.asarray(eng._m["id"], dtype=object)
        self.m_desc = np.asarray(eng._m["description"], dtype=object)
        self.m_store = np.asarray(eng._m["store"], dtype=object)
        self.m_created = np.asarray(m_created, dtype=np.int64)
        mpos = {mid: j for j, mid in enumerate(eng._m["id"])}
        e_m = np.asarray([mpos[m] for m in edges["m"]], dtype=np.int64)
        e_seq = np.arange(len(e_m), dtype=np.int64)
        eo = np.lexsort((e_seq, e_m))
        self.e_m, self.e_seq = e_m[eo], e_seq[eo]
        self.e_i = np.asarray([index[i] for i in edges["i"]], dtype=np.int64)[eo]
        self.e_w = np.asarray(edges["w"], dtype=np.float64)[eo]
        self.e_pos = np.asarray(edges["pos"], dtype=np.int64)[eo]
        self.e_ptr = np.searchsorted(self.e_m, np.arange(len(self.m_id) + 1))
        # history sorted by item, chronological within an item
        h_item = np.asarray(hist["item"], dtype=np.int64)
        seq = np.arange(len(h_item))
        ho = np.lexsort((seq, h_item))
        inv = np.empty_like(ho)
        inv[ho] = np.arange(len(ho))
        self.h_item = h_item[ho]
        self.h_pos = np.asarray(hist["pos"], dtype=np.int64)[ho]
        self.h_dc = np.asarray(hist["dc"], dtype=np.float64)[ho]
        self.h_dd = np.asarray(hist["dd"], dtype=np.float64)[ho]
        self.h_soft = np.asarray(hist["soft"], dtype=np.float64)[ho]
        self.h_fixed = np.asarray(hist["fixed"], dtype=np.float64)[ho]
        self.h_rank = group_rank(self.h_item)
        self.h_key = self.h_item * self._big + (self.h_pos + 1)
        self.w = {k: np.asarray(v, dtype=object) for k, v in w.items()}
        for k in ("after", "before"):
            raw = np.asarray(w[k], dtype=np.int64)
            self.w[k] = np.where(raw >= 0, inv[np.maximum(raw, 0)] if len(inv) else raw, -1)
        self.w["position"] = np.asarray(w["position"], dtype=np.int64)
        self.w["counts"] = np.asarray(w["counts"], dtype=bool)
