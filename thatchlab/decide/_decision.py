"""The record :func:`~thatchlab.decide.decide` returns: what ships, the evidence, and its JSON form.

:class:`Decision` holds the shipped parameters, one evidence row per
parameter considered (columns :data:`EVIDENCE_COLUMNS`) and the test of the
shipped configuration as a whole; :meth:`Decision.to_dict` and
:meth:`Decision.from_dict` write and read it as JSON (``thatchlab decide
--out``). Both are re-exported by :mod:`thatchlab.decide.decide`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from thatchlab.core.display import html_block, plural
from thatchlab.core.errors import InputError
from thatchlab.core.params import SYSTEMS
from thatchlab.core.params.production import ENGINE_PARAMS

__all__ = ["Decision", "EVIDENCE_COLUMNS"]

#: The columns of :attr:`Decision.evidence`, in order (also the keys of :meth:`Decision.to_records`).
EVIDENCE_COLUMNS = ("parameter", "default", "candidate", "shipped", "reason", "metric", "delta",
                    "ci_lower", "ci_upper", "n_clusters", "cluster", "detectable")


@dataclass
class Decision:
    """What to ship, parameter by parameter, and the evidence for it (see :func:`decide`).

    Parameters
    ----------
    engine, metric : str
        The engine and the metric decided on (``"a + b"`` for merged decisions).
    params : params
        Production's default with only the shipped values changed: what to ship.
    default : params
        Production's parameters.
    candidate : params
        The best configuration on validation (under the constraint); unidentified parameters at
        their default.
    evidence : DataFrame
        One row per parameter considered, columns :data:`EVIDENCE_COLUMNS`: ``parameter`` (bare
        field name), ``default``, ``candidate``, ``shipped``, ``reason`` (words), ``metric``,
        ``delta`` (test metric of the default with this parameter alone changed, minus the
        default's), ``ci_lower``/``ci_upper`` (its interval: at ``α`` when it is the only change,
        else at its Holm level in the reduction family), ``n_clusters`` (test clusters with data),
        ``cluster`` (their unit: ``"user"``, ``"session"``, ``"memory"``), ``detectable`` (the
        smallest difference detectable with 80 % power at that level). ``shipped`` is true exactly
        for the parameters the shipped configuration changes.
    combined : dict
        The shipped configuration against the default: ``config_id`` and ``params`` (its changed
        fields; None and ``{}`` when nothing ships, and then the other keys describe the
        candidate's gate test), ``delta``, ``ci_lower``, ``ci_upper`` (its own ``1 − α``
        interval), ``p_value`` (directional, unadjusted), ``detectable``, ``n_clusters``, ``df``;
        ``candidate_config_id``, ``gate`` (the joint test), ``family`` (the reduction family: one
        dict per subset), ``constraint`` (per constrained metric: rule, the shipped or candidate
        configuration's test ``value`` and interval, ``holds``) and ``procedure`` (words).
    optimism : float
        The candidate's advantage over the default on validation minus its advantage on test,
        each advantage signed so that positive means better: ``s·(val₀ − val_c) − s·(test₀ −
        test_c)`` with ``s = +1`` for a minimised metric, ``−1`` for a maximised one. Positive:
        validation flattered the winner (selection among ``n_configs`` configurations).
    n_configs : int
        Configurations that competed for the candidate (finite validation score, constraint
        satisfied); 1 when the candidate was given (chosen without the sweep's validation scores).
    unidentified : list of str
        Swept parameters the metric cannot see (never shipped).
    alpha : float, default=0.05
        The family-wise error rate the decision was taken at.
    n_boot : int, default=1000
        Cluster resamples.
    cluster : str, default="session"
        The resampling unit.
    seed : int, default=0
        Seed of the resamples.
    constraint : dict, optional
        ``{metric: (op, value)}`` the decision was taken under.
    parts : list of Decision
        The decisions a merged decision joins (:func:`combine_decisions`); empty otherwise.
    per_user : DataFrame, optional
        When the sweep's log names users, each user's test effect of the shipped configuration
        (else the candidate) against the default, worst first (columns
        :data:`~thatchlab.decide._harm.PER_USER_COLUMNS`); None without users.
    harm : dict, optional
        The harm check of that comparison (``users``, ``share_worse``, ``worst_decile``,
        ``by_sign`` and ``by_interval`` counts of users, ``split`` (those counts in words),
        ``margin``, ``hurt``, ``allowed``, ``holds``); None without users.
    looks : int, default=0
        How many looks the ledger holds at this engine and metric, this one included (0 without
        a ledger).
    sequential : bool, default=False
        Whether the intervals are anytime-valid confidence sequences.

    Attributes
    ----------
    release : str or None
        The production release compared under (``default``'s).
    release_label : str or None
        ``"<system> <release>"``.

    See Also
    --------
    decide : What returns one.
    combine_decisions : Joins several.

    Examples
    --------
    >>> from thatchlab.decide import decide, planted_sweep
    >>> d = decide(planted_sweep(30, -0.05, np.random.default_rng(0)), "log_loss", n_boot=200)
    >>> d.shipped_parameters(), d.params.k, d.evidence.loc[0, "cluster"]
    (['k'], 20.0, 'session')
    """

    engine: str
    metric: str
    params: object
    default: object
    candidate: object
    evidence: pd.DataFrame
    combined: dict
    optimism: float
    n_configs: int
    unidentified: list
    alpha: float = 0.05
    n_boot: int = 1000
    cluster: str = "session"
    seed: int = 0
    constraint: dict | None = None
    parts: list = field(default_factory=list)
    per_user: pd.DataFrame | None = None
    harm: dict | None = None
    looks: int = 0
    sequential: bool = False

    def _repr_html_(self) -> str:
        """The decision in a notebook: what ships, the joint test, then the evidence table."""
        record = self.combined_record()
        shipped = record["params"] or "nothing"
        facts = {"engine": self.engine, "release": self.release_label, "metric": self.metric, "ships": shipped,
                 "alpha": self.alpha, "configurations": self.n_configs}
        return html_block(f"Decision: {record['reason']}", facts, {"evidence": self.evidence})

    @property
    def release(self) -> str | None:
        """The production release the configurations were compared under (what ``default`` runs)."""
        return getattr(self.default, "release", None)

    @property
    def release_label(self) -> str | None:
        """``"<system> <release>"`` (``"thatch 07ecf87"``), None for an engine without releases."""
        if self.release is None:
            return None

        system = SYSTEMS.get(self.engine.split(" + ")[0])
        return f"{system} {self.release}" if system else str(self.release)

    def shipped_parameters(self) -> list:
        """Names of the parameters whose candidate value ships.

        Returns
        -------
        list of str
            In evidence order.
        """
        ev = self.evidence
        return ev.loc[ev["shipped"].astype(bool), "parameter"].tolist()

    def to_records(self) -> list:
        """The evidence as JSON-safe dicts, for a manifest.

        Returns
        -------
        list of dict
            One per evidence row, keys :data:`EVIDENCE_COLUMNS`.
        """
        return [{c: _json(row[c]) for c in EVIDENCE_COLUMNS} for _, row in self.evidence.iterrows()]

    def combined_record(self) -> dict:
        """The shipped configuration as a whole, as one manifest record (``"parameter": "combined"``).

        Returns
        -------
        dict
            ``parameter``, ``shipped`` (something ships), ``params`` (the shipped changes),
            ``release``, ``config_id``, ``metric``, ``delta``, ``ci_lower``, ``ci_upper`` (the shipped
            configuration against the default; when nothing ships, the candidate's gate test),
            ``n_clusters``, ``detectable`` and ``reason``.
        """
        c = self.combined
        shipped = self.shipped_parameters()
        what = ", ".join(f"{k}={v!r}" for k, v in (c.get("params") or {}).items())
        if shipped:
            reason = (f"ships ({what}) as one configuration scored on the test stretch: {c.get('metric', self.metric)} "
                      f"{_num(c.get('delta'))} [{_num(c.get('ci_lower'))}, {_num(c.get('ci_upper'))}] against "
                      "the default")
        elif math.isfinite(_float(c.get("delta"))):
            reason = (f"nothing ships: the candidate changes {c.get('metric', self.metric)} by {_num(c.get('delta'))} "
                      f"[{_num(c.get('ci_lower'))}, {_num(c.get('ci_upper'))}] against the default")
        else:
            reason = "nothing ships: no configuration other than the default was scored"
        return {"parameter": "combined", "shipped": bool(shipped), "params": _jsonable(c.get("params") or {}),
                "release": self.release,
                "config_id": c.get("config_id"), "metric": c.get("metric", self.metric),
                **{k: _json(_float(c.get(k))) for k in ("delta", "ci_lower", "ci_upper", "detectable")},
                "n_clusters": _json(c.get("n_clusters")), "reason": reason}

    def to_dict(self) -> dict:
        """Everything needed to export this decision, as JSON-safe values.

        Returns
        -------
        dict
            ``kind`` ``"thatchlab.decision"``, ``version`` 1 and every field.

        See Also
        --------
        Decision.from_dict : The inverse.
        """
        return _jsonable({
            "kind": "thatchlab.decision", "version": 1, "engine": self.engine, "metric": self.metric,
            "release": self.release,
            "params": self.params.to_dict(), "default": self.default.to_dict(),
            "candidate": self.candidate.to_dict(), "evidence": self.to_records(), "combined": self.combined,
            "optimism": self.optimism, "n_configs": self.n_configs, "unidentified": list(self.unidentified),
            "alpha": self.alpha, "n_boot": self.n_boot, "cluster": self.cluster, "seed": self.seed,
            "constraint": {k: list(v) for k, v in (self.constraint or {}).items()} or None,
            "harm": self.harm, "looks": self.looks, "sequential": self.sequential,
            "parts": [d.to_dict() for d in self.parts]})

    @classmethod
    def from_dict(cls, data, source="decision") -> Decision:
        """A decision written by :meth:`to_dict` (``thatchlab decide --out``).

        Parameters
        ----------
        data : dict
            The JSON-safe dict.
        source : str, default="decision"
            Where it came from, named in errors.

        Returns
        -------
        Decision
            The decision, its parts included.

        Raises
        ------
        InputError
            When ``data`` is not a decision, cannot be read, or its params and evidence disagree
            (the file was edited or is corrupt).

        See Also
        --------
        Decision.to_dict : The inverse.

        Examples
        --------
        >>> from thatchlab.decide import decide, planted_sweep
        >>> d = decide(planted_sweep(12, -0.05, np.random.default_rng(1)), "log_loss", n_boot=200)
        >>> back = Decision.from_dict(d.to_dict())
        >>> back.params == d.params, back.shipped_parameters() == d.shipped_parameters()
        (True, True)
        """
        if not isinstance(data, dict) or data.get("kind") != "thatchlab.decision":
            raise InputError(f"{source}: not a thatchlab decision (expected the JSON `thatchlab decide` writes)")
        try:
            pcls = ENGINE_PARAMS[data["engine"]]
            evidence = pd.DataFrame(data["evidence"], columns=list(EVIDENCE_COLUMNS))
            evidence["shipped"] = evidence["shipped"].astype(bool)
            for col in ("delta", "ci_lower", "ci_upper", "detectable"):
                evidence[col] = pd.to_numeric(evidence[col], errors="coerce")
            out = cls(data["engine"], data["metric"], pcls.from_dict(data["params"]),
                      pcls.from_dict(data["default"]), pcls.from_dict(data["candidate"]), evidence,
                      _unjson(data.get("combined") or {}), _float(data.get("optimism")),
                      int(data.get("n_configs", 0)), list(data.get("unidentified") or []),
                      float(data.get("alpha", 0.05)), int(data.get("n_boot", 1000)),
                      data.get("cluster", "session"), int(data.get("seed", 0)),
                      {k: tuple(v) for k, v in (data.get("constraint") or {}).items()} or None,
                      [cls.from_dict(p, source) for p in data.get("parts") or []],
                      harm=data.get("harm"), looks=int(data.get("looks", 0)),
                      sequential=bool(data.get("sequential", False)))
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, InputError):
                raise
            raise InputError(f"{source}: not a readable decision ({type(exc).__name__}: {exc})") from None
        changed = {f for f in out.params.to_dict() if getattr(out.params, f) != getattr(out.default, f)}
        if changed != set(out.shipped_parameters()):
            raise InputError(f"{source}: its params change {sorted(changed)} but its evidence ships "
                             f"{sorted(out.shipped_parameters())}; the file was edited or is corrupt")
        return out

    def summary(self) -> str:
        """What ships, how many configurations competed, the tested configuration's interval.

        Returns
        -------
        str
            A few lines.
        """
        shipped = self.shipped_parameters()
        what = ", ".join(f"{p}={getattr(self.params, p)!r}" for p in shipped) or "nothing (production's defaults)"
        c = self.combined
        under = f" under {self.release_label}" if self.release_label else ""
        lines = [f"Decision({self.engine}, {self.metric}){under}: ship {what}",
                 f"  {plural(self.n_configs, 'configuration')} compared; optimism {self.optimism:.4g}"
                 if isinstance(self.optimism, float) and math.isfinite(self.optimism)
                 else f"  {plural(self.n_configs, 'configuration')} compared"]
        if isinstance(c.get("delta"), float) and math.isfinite(c["delta"]):
            what_ = "shipped configuration" if c.get("config_id") else "candidate"
            lines.append(f"  {what_} vs default: {c['delta']:+.4g} [{c['ci_lower']:.4g}, {c['ci_upper']:.4g}]")
        if self.unidentified:
            lines.append(f"  unidentified by the metric: {', '.join(self.unidentified)}")
        h = self.harm or {}
        if h.get("split"):
            hurt = ", ".join(map(str, h.get("hurt") or [])) or "none"
            lines.append(f"  per user ({h.get('users')}): {h['split']}; hurt beyond {h.get('margin', 0):g}: {hurt}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        cols = ["parameter", "default", "candidate", "shipped", "delta", "ci_lower", "ci_upper"]
        table = self.evidence[cols].to_string(index=False) if len(self.evidence) else "(no parameter differs)"
        reasons = "\n".join(f"  {r.parameter}: {r.reason}" for r in self.evidence.itertuples())
        return f"{self.summary()}\n{table}\n{reasons}"


def _float(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("nan")


def _num(v) -> str:
    x = _float(v)
    return f"{x:+.4g}" if math.isfinite(x) else "undefined"


def _jsonable(v):
    """``v`` with numpy scalars as Python numbers, tuples as lists and non-finite floats as None."""
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.ndarray):
        return None  # resample draws: not part of the record
    return _json(v)


_NUMBERS = {"delta", "ci_lower", "ci_upper", "p_value", "p_adjusted", "detectable", "se", "value"}


def _unjson(v, key=None):
    """The inverse of :func:`_jsonable` for a decision's ``combined`` (a None number → NaN)."""
    if isinstance(v, dict):
        return {k: _unjson(x, k) for k, x in v.items()}
    if isinstance(v, list):
        return [_unjson(x) for x in v]
    return float("nan") if v is None and key in _NUMBERS else v


def _json(v):
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v
