"""A synthetic workspace world with planted temporal patterns (mnemo's four types).

Each workspace runs sessions (a few events, then a few recalls) among
background noise. On top of the noise the world plants, per workspace: event
→ event sequences, event → fact sequences (an event early in a session
makes a fact's recall likely), a weekly periodic fact, an entity → fact
condition and a group of facts recalled together. ``truth`` lists the
planted patterns; the miners never read it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from thatchlab.core.time import as_utc

__all__ = ["PatternWorld"]

_H = 3600.0


@dataclass
class PatternWorld:
    """Event and recall streams with planted patterns of every type plus noise.

    Parameters
    ----------
    n_workspaces, days, sessions_per_day : size of the world.
    start : first day (aware; a Monday keeps the periodic slot readable).
    p_follow : probability that a planted consequence follows its cause.
    noise_events, noise_facts, noise_entities : vocabulary sizes of the noise.
    seed : seed of the ``numpy.random.Generator``.

    Examples
    --------
    >>> w = PatternWorld(n_workspaces=1, days=14, seed=1)
    >>> events, recalls = w.generate()
    >>> sorted(w.truth()["type"].unique())
    ['co-occurrence', 'conditional', 'periodic', 'sequential']
    """

    n_workspaces: int = 3
    days: int = 56
    sessions_per_day: float = 4.0
    start: str = "2026-01-05T00:00:00Z"
    p_follow: float = 0.9
    noise_events: int = 20
    noise_facts: int = 10
    noise_entities: int = 10
    seed: int = 0

    # -- the planted truth --------------------------------------------------
    def truth(self) -> pd.DataFrame:
        """Planted patterns: (type, workspace, trigger, target, trigger_kind, target_kind).

        Returns
        -------
        pandas.DataFrame
            One row per planted pattern.

        See Also
        --------
        generate
        """
        rows = []
        for w in self._workspaces():
            for a, b in self._seq_events(w):
                rows.append(("sequential", w, a, b, "event", "event"))
            for a, f in self._seq_facts(w):
                rows.append(("sequential", w, a, f, "event", "fact"))
            rows.append(("periodic", w, "0:4", self._periodic_fact(w), "slot", "fact"))
            x, y = self._condition(w)
            rows.append(("conditional", w, x, y, "entity", "fact"))
            g = self._group(w)
            for i in range(len(g)):
                for j in range(i + 1, len(g)):
                    rows.append(("co-occurrence", w, g[i], g[j], "fact", "fact"))
        return pd.DataFrame(rows, columns=["type", "workspace", "trigger", "target", "trigger_kind",
                                           "target_kind"])

    def _workspaces(self):
        return [f"ws{i:02d}" for i in range(self.n_workspaces)]

    @staticmethod
    def _seq_events(w):
        return [("deploy.success", "billing.spike"), ("build.failed", "incident.opened")]

    @staticmethod
    def _seq_facts(w):
        return [("pr.merged", "fact:release-checklist")]

    @staticmethod
    def _periodic_fact(w):
        return "fact:weekly-metrics"

    @staticmethod
    def _condition(w):
        return "production", "fact:deploy-runbook"

    @staticmethod
    def _group(w):
        return ["fact:api-keys", "fact:oncall-rota", "fact:status-page"]

    # -- generation -----------------------------------------------------------
    def generate(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The event and recall streams ``(events, recalls)``, sorted by time.

        Returns
        -------
        events : pandas.DataFrame
            The event stream.
        recalls : pandas.DataFrame
            The recall stream.

        See Also
        --------
        truth
        """
        rng = np.random.default_rng(self.seed)
        t0 = as_utc(self.start).value / 1e9
        ev, rc = [], []
        for w in self._workspaces():
            self._workspace(rng, w, t0, ev, rc)
        events = self._frame(ev, "name")
        recalls = self._frame(rc, "fact_id")
        return events, recalls

    def _frame(self, rows, name_col):
        df = pd.DataFrame(rows, columns=["t", "workspace", "session", name_col, "entities"])
        # microsecond times, as databases store them
        df["ts"] = pd.to_datetime(np.round(df["t"].to_numpy() * 1e6).astype(np.int64), unit="us", utc=True)
        df = df.sort_values(["ts", "workspace", "session"], kind="stable").reset_index(drop=True)
        return df[["ts", "workspace", "session", name_col, "entities"]]

    def _workspace(self, rng, w, t0, ev, rc):
        p = self.p_follow
        noise_ev = [f"noise.event{i:02d}" for i in range(self.noise_events)]
        noise_f = [f"fact:note-{i:02d}" for i in range(self.noise_facts)]
        noise_x = [f"topic-{i:02d}" for i in range(self.noise_entities)]
        (a1, b1), (a2, b2) = self._seq_events(w)
        ((a3, f3),) = self._seq_facts(w)
        x, y = self._condition(w)
        group = self._group(w)
        n_sys = 0
        for day in range(self.days):
            day0 = t0 + day * 86400.0
            # weekly periodic session: Monday 08:00–10:00 in UTC
            if day % 7 == 0 and rng.random() < p:
                s = f"{w}-d{day:03d}-weekly"
                ts = day0 + 8 * _H + rng.uniform(0, 1.5 * _H)
                for dt in np.sort(rng.uniform(0, 900, 3)):
                    rc.append((ts + dt, w, s, self._periodic_fact(w), []))
            # system events with planted followers, outside sessions
            for a, b, rate in ((a1, b1, 0.35), (a2, b2, 0.3)):
                for _ in range(rng.poisson(rate)):
                    ta = day0 + rng.uniform(0, 24 * _H)
                    n_sys += 1
                    ev.append((ta, w, f"{w}-sys-{n_sys:05d}", a, []))
                    if rng.random() < p:
                        n_sys += 1
                        ev.append((ta + rng.uniform(0.5 * _H, 8 * _H), w, f"{w}-sys-{n_sys:05d}", b, []))
            for k in range(rng.poisson(self.sessions_per_day)):
                s = f"{w}-d{day:03d}-s{k:02d}"
                start = day0 + rng.uniform(6 * _H, 22 * _H)
                self._session(rng, w, s, start, ev, rc, noise_ev, noise_f, noise_x, a3, f3, x, y, group)

    def _session(self, rng, w, s, start, ev, rc, noise_ev, noise_f, noise_x, a3, f3, x, y, group):
        p = self.p_follow
        # phase 1 (first 20 min): events; phase 2 (20–60 min): recalls
        n_ev = 1  # one background event per session keeps noise pairs rare
        ev_t = np.sort(start + rng.uniform(60, 1200, n_ev))
        names = list(rng.choice(noise_ev, n_ev))
        ents = [list(rng.choice(noise_x, rng.poisson(0.6), replace=False)) for _ in range(n_ev)]
        facts = [str(f) for f in rng.choice(noise_f, 1 + rng.poisson(0.5), replace=False)]
        if rng.random() < 0.2:                 # event → fact sequence
            ev_t = np.r_[ev_t, start]  # the trigger opens the session
            names.append(a3)
            ents.append([])
            if rng.random() < p:
                facts.append(f3)
        if rng.random() < 0.2:                 # entity → fact condition
            ents[0] = sorted(set(ents[0]) | {x})
            if rng.random() < p:
                facts.append(y)
        if rng.random() < 0.15:                # facts recalled together
            facts.extend(f for f in group if rng.random() < p)
        for t, n, e in zip(ev_t, names, ents):
            ev.append((float(t), w, s, str(n), [str(v) for v in e]))
        order = rng.permutation(len(facts))
        times = np.sort(start + rng.uniform(1200, 3600, len(facts)))
        for t, i in zip(times, order):
            rc.append((float(t), w, s, facts[i], []))
