"""Lockstep machinery of :func:`~thatchlab.synth.simulate_many`: many settings, one world, as arrays.

:class:`SessionDraws` draws what no setting changes, :class:`TextSpace`
embeds every text once with the engine's exact cosines, and
:class:`Lockstep` advances the settings that share one dedup threshold
session by session. Public names inside a private module; only
:mod:`thatchlab.synth.closed_loop` uses them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.core.jsfmt import js_round, r3
from thatchlab.core.schema import ENGINE_TABLES
from thatchlab.core.vectors import exact_cosines
from thatchlab.scoring.confidence import posterior_confidence
from thatchlab.scoring.prediction import PredictionEngine
from thatchlab.scoring.rules import NEAR_DUPLICATE_COSINE
from thatchlab.scoring.state import deterministic_id
from thatchlab.synth._sessions import SESSION_GAP, object_array
from thatchlab.synth.preference import PreferenceWorld

__all__ = ["SessionDraws", "TextSpace", "pair_cosines", "Lockstep"]


class SessionDraws:
    """The random draws of :func:`~thatchlab.synth.simulate`'s sessions, which no setting changes.

    Per session: user, situation, time, prompt, the state after drift, the
    answer's uniform draw and the matcher phrasing, drawn in
    :func:`~thatchlab.synth.simulate`'s order from one generator.
    """

    def __init__(self, world: PreferenceWorld, n_sessions: int, seed: int):
        rng = np.random.default_rng(seed)
        state = world.initial_state()
        self.user, self.situation, self.prompt, self.matcher, self.draw = [], [], [], [], []
        self.ts, self.ts2, self.prefers, self.p_a, self.p_b = [], [], [], [], []
        for k in range(n_sessions):
            u, s = int(rng.integers(world.n_users)), int(rng.integers(world.n_situations))
            t = world.start + k * SESSION_GAP + pd.Timedelta(seconds=int(rng.integers(0, 600)))
            prompt = world.prompts[s][int(rng.integers(len(world.prompts[s])))]
            world.drift(rng, state, (world.stores[u], s))
            r = float(rng.random())                 # the answer's (or the stated preference's) draw
            matcher = world.draw_matcher(rng, s)
            prefers, p_a, p_b = state[(world.stores[u], s)]
            self.user.append(u)
            self.situation.append(s)
            self.prompt.append(prompt)
            self.matcher.append(matcher)
            self.draw.append(r)
            self.ts.append(t)
            self.ts2.append(t + pd.Timedelta(seconds=45))
            self.prefers.append(prefers)
            self.p_a.append(float(p_a))
            self.p_b.append(float(p_b))


class TextSpace:
    """Every text a closed loop can write or read, embedded once, and the exact cosines
    the engine would compute between them (the engine's own float64 formula)."""

    def __init__(self, world: PreferenceWorld, emb, draws: SessionDraws):
        eng = PredictionEngine(emb)
        sit = world.situations
        self.statements = sorted(set(sit["option_a"]) | set(sit["option_b"]))
        self.stmt_index = {t: j for j, t in enumerate(self.statements)}
        self.prompts = sorted(set(draws.prompt))
        self.prompt_index = {t: j for j, t in enumerate(self.prompts)}
        self.matchers = sorted(set(draws.matcher))
        self.matcher_index = {t: j for j, t in enumerate(self.matchers)}
        q = eng.embed_queries(self.prompts)
        m = eng.embed_passages(self.matchers)
        st = eng.embed_passages(self.statements)
        self.same_dim = q.shape[1] == m.shape[1] == st.shape[1] and q.shape[1] > 0
        if self.same_dim:
            self.prompt_matcher = pair_cosines(m, q)       # [prompt, matcher]: stored row vs query
            self.matcher_matcher = pair_cosines(m, m)      # [query matcher, stored matcher]
            self.stmt_stmt = pair_cosines(st, st)          # [query statement, stored statement]
        # per situation: which option each statement is (0 = a, 1 = b, 2 = neither)
        self.option_of = np.full((len(sit), len(self.statements)), 2, dtype=np.int64)
        for s, (a, b) in enumerate(zip(sit["option_a"], sit["option_b"])):
            self.option_of[s, self.stmt_index[b]] = 1
            self.option_of[s, self.stmt_index[a]] = 0       # option_a is tested first
        self.option_a = np.array([self.stmt_index[a] for a in sit["option_a"]])
        self.option_b = np.array([self.stmt_index[b] for b in sit["option_b"]])
        order = sorted(range(len(self.statements)), key=lambda j: self.statements[j])
        self.stmt_rank = np.empty(len(self.statements), dtype=np.int64)
        self.stmt_rank[order] = np.arange(len(order))

    def supports(self, dedup: float, near_duplicates: bool = False) -> bool:
        """Whether settings with this dedup threshold can run as arrays: one vector size,
        and every statement dedups to its own item once it has one; with
        ``near_duplicates`` (a release whose nudges drop near-identical items,
        :mod:`thatchlab.scoring.rules`) also no two statements near enough for that
        rule to drop one (the arrays do not model it; such worlds run per setting)."""
        ok = bool(self.same_dim and (np.diag(self.stmt_stmt) >= dedup).all())
        if ok and near_duplicates and len(self.statements) > 1:
            off = ~np.eye(len(self.statements), dtype=bool)
            ok = not bool((self.stmt_stmt[off] >= NEAR_DUPLICATE_COSINE - 1e-9).any())
        return ok


def pair_cosines(stored: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Exact cosines ``[i, j]`` of query ``i`` against stored vector ``j``, one pair per row of
    :func:`~thatchlab.core.vectors.exact_cosines` (the engine's own formula, bit for bit)."""
    nq, ns = len(query), len(stored)
    a = np.repeat(stored.astype(np.float64)[None, :, :], nq, axis=0).reshape(nq * ns, -1)
    b = np.repeat(query.astype(np.float64), ns, axis=0)
    return exact_cosines(a, b).reshape(nq, ns)


class _Settings:
    """The settings' parameters as columns, one entry per setting (what every lockstep step broadcasts
    over), and the sizes the nudge arrays need: ``n_keep`` items kept, ``top`` matchers selected at most."""

    def __init__(self, params: list, n_statements: int):
        def col(name, dtype=np.float64):
            return np.array([getattr(p, name) for p in params], dtype=dtype)

        self.k, self.p0 = col("k"), col("p0")
        self.noise_floor, self.threshold = col("noise_floor"), col("threshold")
        self.top_matchers = col("top_matchers", np.int64)
        self.max_items, self.min_conf = col("max_items", np.int64), col("min_confidence")
        self.strong_conf, self.strong_ev = col("strong_confidence"), col("strong_evidence", np.int64)
        self.margin = np.array([int(js_round(p.conflict_margin * 1000)) for p in params], dtype=np.int64)
        self.min_chars = col("min_prompt_chars", np.int64)
        self.n_keep = int(min(self.max_items.max(), n_statements))
        self.top = int(self.top_matchers.max())


class _Stores:
    """Every setting's user stores as arrays: per (setting, store, statement) the counts ``c``/``d``,
    stored confidence, existence and creation order (``serial``); edges per (setting, store, matcher
    slot, statement); per store the matcher text of each slot (shared by all settings)."""

    def __init__(self, n_settings: int, n_users: int, n_statements: int, n_matchers: int):
        shape = (n_settings, n_users, n_statements)
        self.c, self.d, self.conf = np.zeros(shape), np.zeros(shape), np.zeros(shape)
        self.exists = np.zeros(shape, dtype=bool)
        self.serial = np.zeros(shape, dtype=np.int64)
        self.edge = np.zeros((n_settings, n_users, n_matchers, n_statements), dtype=bool)
        self.slots: list[list[int]] = [[] for _ in range(n_users)]
        self.rows = np.arange(n_settings)


class Lockstep:
    """Settings sharing one dedup threshold, advanced session by session as arrays.

    State per setting ``g``, user store ``u`` and statement ``j`` (the item
    whose stored statement is ``j``; one per statement, see
    :meth:`TextSpace.supports`): counts, stored confidence, existence and
    creation order; edges per (setting, store, matcher slot, statement).
    Matcher slots are shared: their dedup depends only on the matcher texts.
    """

    def __init__(self, world: PreferenceWorld, space: TextSpace, draws: SessionDraws, params: list,
                 dedup: float):
        self.world, self.space, self.draws, self.params = world, space, draws, params
        cfg = _Settings(params, len(space.statements))
        stores = _Stores(len(params), world.n_users, len(space.statements), len(space.matchers))
        n, G = len(draws.user), len(params)
        self.surfaced = np.full((n, G, cfg.n_keep), -1, dtype=np.int64)
        self.regime = np.empty((n, G), dtype=object)
        self.statement = np.zeros((n, G), dtype=np.int64)
        self.confirm = np.zeros((n, G), dtype=bool)
        self.p_true = np.zeros((n, G))
        for i in range(n):
            n_items, top_item = self._nudge(i, cfg, stores)
            stmt, confirm = self._answer(i, n_items, top_item)
            self._write(i, cfg, stores, stmt, confirm, dedup)

    def _nudge(self, i: int, cfg: _Settings, st: _Stores) -> tuple[np.ndarray, np.ndarray]:
        """Session ``i``'s nudge under every setting at once: records the statements surfaced and the
        regime; returns per setting the number of items surfaced and the top item."""
        u, prompt = self.draws.user[i], self.draws.prompt[i]
        skipped = len(prompt) < cfg.min_chars
        n_items = np.zeros(len(self.params), dtype=np.int64)
        regime = np.where(skipped, "skipped", "none").astype(object)
        top_item = np.zeros(len(self.params), dtype=np.int64)
        if st.slots[u] and not skipped.all():
            best, best_rank, slot_t = self._item_scores(u, prompt, skipped, cfg, st)
            present = best > -np.inf
            ranked = np.lexsort((np.broadcast_to(self.space.stmt_rank, best.shape), -best), axis=1)
            n_items = np.minimum(present.sum(axis=1), cfg.max_items)
            if n_items.any():
                ranked = ranked[:, :cfg.n_keep]
                sc = np.take_along_axis(best, ranked, 1)
                who = np.take_along_axis(slot_t, np.take_along_axis(best_rank, ranked, 1), 1)
                top_item = ranked[:, 0]
                strong = self._strong(u, cfg, st, top_item, sc, who, n_items)
                has = n_items > 0
                regime[has] = np.where(strong[has], "strong", "ambiguous")
                keep = np.arange(cfg.n_keep)[None, :] < n_items[:, None]
                self.surfaced[i] = np.where(keep, ranked, -1)
        self.regime[i] = regime
        return n_items, top_item

    def _item_scores(self, u: int, prompt: str, skipped: np.ndarray, cfg: _Settings, st: _Stores):
        """Per setting and statement, the item's best score over the matchers the prompt selects
        (``-inf``: not reached), the position among the selected slots of the one giving it, and the
        selected slots in rank order."""
        space = self.space
        cos = space.prompt_matcher[space.prompt_index[prompt], st.slots[u]]
        rounded = r3(cos)
        order = np.argsort(-rounded, kind="stable")          # ties: slot (insertion) order
        cos_o, rc_o = cos[order], rounded[order]
        above = cos_o[None, :] >= cfg.noise_floor[:, None]
        sel = (above & (np.cumsum(above, axis=1) <= cfg.top_matchers[:, None])
               & (rc_o[None, :] >= cfg.threshold[:, None]))
        sel[skipped] = False
        t = min(cfg.top, len(order))
        pick = np.argsort(~sel, axis=1, kind="stable")[:, :t]  # selected slots, in rank order
        sel_t = np.take_along_axis(sel, pick, 1)
        slot_t = order[pick]
        conf_u = st.conf[:, u]
        linked = st.edge[st.rows[:, None], u, slot_t] & sel_t[:, :, None]
        linked &= (conf_u >= cfg.min_conf[:, None])[:, None, :]
        score = r3(rc_o[pick][:, :, None] * conf_u[:, None, :])
        score = np.where(linked, score, -np.inf)
        best = score.max(axis=1)
        # an item's row: its best score, among equal ones the smallest matcher id (the
        # order production's SQL returns rows in, thatchlab.scoring.rules.row_order_key)
        id_rank = self._id_ranks(u, st.slots[u])[slot_t]
        best_rank = np.where(score == best[:, None, :], id_rank[:, :, None],
                             np.iinfo(np.int64).max).argmin(axis=1)
        return best, best_rank, slot_t

    @staticmethod
    def _strong(u: int, cfg: _Settings, st: _Stores, top_item, sc, who, n_items) -> np.ndarray:
        """Per setting, whether the top item is strong: confident, with enough evidence, and no later
        item of the same matcher within the conflict margin."""
        top_k = js_round(sc[:, 0] * 1000)
        later = (np.arange(cfg.n_keep)[None, :] >= 1) & (np.arange(cfg.n_keep)[None, :] < n_items[:, None])
        competing = (later & (who == who[:, :1]) &
                     (top_k[:, None] - js_round(np.where(later, sc, 0.0) * 1000) <= cfg.margin[:, None])
                     ).any(axis=1)
        c_top, d_top, conf_top = (x[st.rows, u, top_item] for x in (st.c, st.d, st.conf))
        return (conf_top >= cfg.strong_conf) & (js_round(c_top + d_top) >= cfg.strong_ev) & ~competing

    def _answer(self, i: int, n_items: np.ndarray, top_item: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The user's answer in session ``i``, to each setting's own top item (or their stated
        preference when nothing surfaced): records and returns (statement, confirm) per setting."""
        world, draws, space = self.world, self.draws, self.space
        s = draws.situation[i]
        has = n_items > 0
        prefers = draws.prefers[i]
        if draws.draw[i] < world.noise:
            prefers = "b" if prefers == "a" else "a"
        stated = space.option_a[s] if prefers == "a" else space.option_b[s]
        stmt = np.where(has, top_item, stated)
        which = space.option_of[s, stmt]
        p = np.where(which == 0, draws.p_a[i], np.where(which == 1, draws.p_b[i], 0.0))
        p_obs = p * (1 - world.noise) + (1 - p) * world.noise
        confirm = np.where(has, draws.draw[i] < p_obs, True)
        self.statement[i], self.confirm[i], self.p_true[i] = stmt, confirm, p
        return stmt, confirm

    def _write(self, i: int, cfg: _Settings, st: _Stores, stmt: np.ndarray, confirm: np.ndarray,
               dedup: float) -> None:
        """Session ``i``'s write: matcher dedup (shared), item dedup per setting, link, signal."""
        u, space, rows = self.draws.user[i], self.space, st.rows
        mt = space.matcher_index[self.draws.matcher[i]]
        slot = None
        if st.slots[u]:
            mcos = space.matcher_matcher[mt, st.slots[u]]
            j = int(np.argmax(mcos))
            slot = j if mcos[j] >= dedup else None
        if slot is None:
            st.slots[u].append(mt)
            slot = len(st.slots[u]) - 1
        scos = np.where(st.exists[:, u], space.stmt_stmt[stmt], -np.inf)
        mx = scos.max(axis=1)
        found = mx >= dedup
        tie = st.exists[:, u] & (scos == mx[:, None])
        target = np.where(found, np.argmin(np.where(tie, st.serial[:, u], np.iinfo(np.int64).max), axis=1),
                          stmt)
        new = ~found
        st.exists[rows[new], u, target[new]] = True
        st.serial[rows[new], u, target[new]] = i
        st.edge[rows, u, slot, target] = True
        st.c[rows, u, target] += confirm
        st.d[rows, u, target] += ~confirm
        st.conf[rows, u, target] = posterior_confidence(st.c[rows, u, target], st.d[rows, u, target],
                                                        cfg.k, cfg.p0)

    def _id_ranks(self, u: int, slot_texts: list) -> np.ndarray:
        """Per matcher slot of store ``u``, the rank of its engine id among the store's slots
        (each slot's text is the first matcher of that text in the store)."""
        cache = self.__dict__.setdefault("_ids", {})
        ids = []
        for t in slot_texts:
            if (u, t) not in cache:
                cache[u, t] = deterministic_id(ENGINE_TABLES["prediction"]["matchers"], self.world.stores[u],
                                               self.space.matchers[t], 0)
            ids.append(cache[u, t])
        rank = np.empty(len(ids), dtype=np.int64)
        rank[sorted(range(len(ids)), key=ids.__getitem__)] = np.arange(len(ids))
        return rank

    def rows(self, g: int) -> list:
        """Setting ``g``'s log as :func:`~thatchlab.synth.simulate`'s row dicts (to validate one log)."""
        w, dr, sp = self.world, self.draws, self.space
        out = []
        for i in range(len(dr.user)):
            store, sess = w.stores[dr.user[i]], f"s{i:05d}"
            out.append({"ts": dr.ts[i], "session": sess, "store": store, "kind": "message",
                        "text": dr.prompt[i], "surfaced": self._surfaced(i, g), "propensity": 1.0,
                        "regime": self.regime[i, g]})
            out.append({"ts": dr.ts2[i], "session": sess, "store": store, "kind": "prediction_update",
                        "matcher": dr.matcher[i], "statement": sp.statements[self.statement[i, g]],
                        "signal": "confirm" if self.confirm[i, g] else "disconfirm",
                        "p_true": float(self.p_true[i, g])})
        return out

    def _surfaced(self, i: int, g: int) -> list:
        return [self.space.statements[j] for j in self.surfaced[i, g] if j >= 0]

    def frame(self, g: int, template: pd.DataFrame) -> pd.DataFrame:
        """Setting ``g``'s validated log: ``template`` (another setting's validated log of the
        same sessions) with the columns that depend on the setting replaced."""
        n = len(self.draws.user)
        msg, upd = np.arange(0, 2 * n, 2), np.arange(1, 2 * n, 2)
        out = template.copy()
        statements = np.asarray(self.space.statements, dtype=object)
        for name, values, at in (("surfaced", [self._surfaced(i, g) for i in range(n)], msg),
                                 ("regime", list(self.regime[:, g]), msg),
                                 ("statement", list(statements[self.statement[:, g]]), upd),
                                 ("signal", list(np.where(self.confirm[:, g], "confirm", "disconfirm")
                                                 .astype(object)), upd)):
            column = template[name].to_numpy(dtype=object).copy()
            column[at] = object_array(values)
            out[name] = pd.Series(column, index=out.index, dtype=template[name].dtype)  # not re-inferred
        p_true = template["p_true"].to_numpy(dtype=np.float64).copy()
        p_true[upd] = self.p_true[:, g]
        out["p_true"] = p_true
        return out
