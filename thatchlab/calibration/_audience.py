"""Whose shadow observations a calibration sweep may aggregate (ai-memory ``0a5770a``).

From ``alphaonedev/ai-memory-mcp`` ``src/confidence/calibrate.rs`` @0a5770af the report is
computed for an *audience*: the admin sweep aggregates every observation (what ``a78a228`` did);
a caller-scoped sweep keeps only the rows the caller may read. It joins each observation to its
memory (an inner join: an observation whose memory is gone is dropped, since its visibility cannot
be judged), keeps the memory when the store's visibility predicate admits the caller, its
lifecycle state is one of the five readable ones (or NULL), and neither the observation's nor the
memory's namespace is substrate bookkeeping; and it never backfills recall outcomes.

The predicate is the store's SQL one, evaluated here row by row over the ``memories`` table:

* visibility (``src/storage`` ``visibility_clause``): ``scope_idx`` is the JSON ``$.scope`` of
  ``metadata`` (``'private'`` when absent, null or when ``metadata`` is not valid JSON); a
  ``collective`` row is readable; a ``private`` one when ``metadata.agent_id`` or
  ``metadata.target_agent_id`` is the caller; a ``team`` / ``unit`` / ``org`` one when its
  namespace is the caller's parent / grandparent / great-grandparent namespace or lies under it
  (``LIKE prefix || '/%'``, so the ``/``-subtree test ignores the case of ASCII letters, as
  SQLite's ``LIKE`` does); any other token reads as nobody's;
* lifecycle (``lifecycle_visible_clause``): ``lifecycle_state`` NULL or one of ``open``,
  ``active``, ``blocked``, ``done``, ``abandoned``;
* substrate (``src/visibility.rs`` ``substrate_exclusion_sql``): the namespaces ``_agents``,
  ``_agent_sessions``, ``_standards`` and everything starting ``_messages/``, ``_inbox/``,
  ``_curator/``, ``_subscriptions/`` or ``_standard:`` (a case-sensitive prefix test).

A caller is refused with production's text (:data:`CALLER_REQUIRED_REFUSAL`) when it is empty
after trimming, is ``anonymous:invalid`` or starts ``anonymous:req-``, or does not have an agent
id's shape (1–128 bytes of ASCII letters, digits and ``_-:@./``, no ``..``, not starting ``/``).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from thatchlab.core.errors import InputError

__all__ = ["CALLER_REQUIRED_REFUSAL", "CallerRequiredError", "CalibrationAudience", "ADMIN",
           "SUBSTRATE_NAMESPACES", "SUBSTRATE_PREFIXES", "READABLE_LIFECYCLE_STATES",
           "is_substrate_namespace", "readable_memories"]

#: The refusal every ai-memory surface gives when no usable caller is named (``calibrate.rs``
#: @0a5770af, ``CALLER_REQUIRED_REFUSAL``).
CALLER_REQUIRED_REFUSAL = (
    "memory_calibrate_confidence requires a resolvable caller identity: the report is a "
    "caller-scoped aggregate (#3507), so it is refused rather than computed over rows the "
    "caller may not read. Set AI_MEMORY_AGENT_ID (MCP/CLI), send X-Agent-Id (HTTP), or call "
    "as a configured admin")

#: Substrate-owned namespaces named exactly, and the prefixes that mark one (``src/visibility.rs``).
SUBSTRATE_NAMESPACES = ("_agents", "_agent_sessions", "_standards")
SUBSTRATE_PREFIXES = ("_messages/", "_inbox/", "_curator/", "_subscriptions/", "_standard:")
#: Lifecycle states an ordinary read shows (``RECALL_VISIBLE_LIFECYCLE_STATES``); NULL is shown too.
READABLE_LIFECYCLE_STATES = ("open", "active", "blocked", "done", "abandoned")

_MAX_AGENT_ID_BYTES = 128
_AGENT_ID_EXTRA = set("_-:@./")
_ANONYMOUS_INVALID = "anonymous:invalid"
_ANONYMOUS_REQ_PREFIX = "anonymous:req-"
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


class CallerRequiredError(InputError):
    """A caller-scoped calibration sweep named no usable caller.

    The message is production's refusal text (:data:`CALLER_REQUIRED_REFUSAL`).

    Parameters
    ----------
    caller : object, default=None
        What was given as the caller.

    Attributes
    ----------
    caller : object
        What was given as the caller.
    """

    def __init__(self, caller=None):
        super().__init__(CALLER_REQUIRED_REFUSAL)
        self.caller = caller


def _agent_id_shape_ok(agent_id: str) -> bool:
    """ai-memory's ``validate_agent_id_shape``: 1..=128 bytes of ASCII alphanumerics and
    ``_-:@./``, no ``..``, not starting with ``/``."""
    if not agent_id or len(agent_id.encode("utf-8")) > _MAX_AGENT_ID_BYTES:
        return False
    if not all((c.isascii() and c.isalnum()) or c in _AGENT_ID_EXTRA for c in agent_id):
        return False
    return ".." not in agent_id and not agent_id.startswith("/")


class CalibrationAudience:
    """Whose observations a sweep aggregates: :meth:`admin` (all of them) or :meth:`for_caller`.

    Build one with :meth:`admin`, :meth:`for_caller` or :meth:`coerce` rather than the
    constructor, which checks nothing.

    Parameters
    ----------
    _caller : str, default=None
        The scoped principal, already checked; ``None`` for the admin sweep.

    Attributes
    ----------
    is_admin : bool
        Whether this is the admin sweep.
    caller : str or None
        The scoped principal.

    Examples
    --------
    >>> CalibrationAudience.admin().is_admin, CalibrationAudience.for_caller(" ai:alice ").caller
    (True, 'ai:alice')
    >>> CalibrationAudience.for_caller("anonymous:req-1f2e")
    Traceback (most recent call last):
    ...
    thatchlab.calibration._audience.CallerRequiredError: memory_calibrate_confidence requires a resolvable caller identity: the report is a caller-scoped aggregate (#3507), so it is refused rather than computed over rows the caller may not read. Set AI_MEMORY_AGENT_ID (MCP/CLI), send X-Agent-Id (HTTP), or call as a configured admin
    """

    __slots__ = ("_caller",)

    def __init__(self, _caller=None):
        self._caller = _caller

    @classmethod
    def admin(cls) -> CalibrationAudience:
        """The global sweep over every observation (production's admin gate, and ``a78a228``).

        Returns
        -------
        CalibrationAudience
            The admin audience.

        See Also
        --------
        for_caller : A sweep scoped to one caller.
        """
        return cls(None)

    @classmethod
    def for_caller(cls, caller) -> CalibrationAudience:
        """The sweep scoped to ``caller`` (an agent id), trimmed; refuses an empty, anonymous or
        ill-shaped id with :class:`CallerRequiredError`.

        Parameters
        ----------
        caller : str
            The agent id; surrounding whitespace is trimmed.

        Returns
        -------
        CalibrationAudience
            The audience of that caller.

        Raises
        ------
        CallerRequiredError
            When ``caller`` is not text, is empty after trimming, is
            ``anonymous:invalid`` or starts ``anonymous:req-``, or does not
            have an agent id's shape.

        See Also
        --------
        admin : The sweep over every observation.
        """
        if not isinstance(caller, str):
            raise CallerRequiredError(caller)
        trimmed = caller.strip()
        if (not trimmed or trimmed == _ANONYMOUS_INVALID or trimmed.startswith(_ANONYMOUS_REQ_PREFIX)
                or not _agent_id_shape_ok(trimmed)):
            raise CallerRequiredError(caller)
        return cls(trimmed)

    @classmethod
    def coerce(cls, audience) -> CalibrationAudience:
        """``None`` or ``"admin"`` → :meth:`admin`; an audience stays; any other value is a caller.

        Parameters
        ----------
        audience : CalibrationAudience, str or None
            What a caller of the report passed.

        Returns
        -------
        CalibrationAudience
            The audience it names.

        Raises
        ------
        CallerRequiredError
            When a caller is named that :meth:`for_caller` refuses.
        """
        if isinstance(audience, CalibrationAudience):
            return audience
        if audience is None or (isinstance(audience, str) and audience == "admin"):
            return cls.admin()
        return cls.for_caller(audience)

    @property
    def is_admin(self) -> bool:
        """Whether this is the admin sweep (no caller)."""
        return self._caller is None

    @property
    def caller(self):
        """The scoped principal, ``None`` for the admin sweep."""
        return self._caller

    def __eq__(self, other):
        return isinstance(other, CalibrationAudience) and other._caller == self._caller

    def __hash__(self):
        return hash(("CalibrationAudience", self._caller))

    def __repr__(self):
        return "CalibrationAudience.admin()" if self.is_admin else f"CalibrationAudience.for_caller({self._caller!r})"


ADMIN = CalibrationAudience.admin()


def is_substrate_namespace(ns) -> bool | None:
    """Whether ``ns`` is substrate bookkeeping (``None`` for a missing namespace, as SQL's NULL).

    >>> is_substrate_namespace("_messages/ai:bob"), is_substrate_namespace("_shared/a->b")
    (True, False)
    """
    if not isinstance(ns, str):
        return None
    return ns in SUBSTRATE_NAMESPACES or ns.startswith(SUBSTRATE_PREFIXES)


def _ancestors(ns: str) -> list:
    """``a/b/c`` → ``[a/b/c, a/b, a]`` (ai-memory's ``namespace_ancestors``)."""
    out = []
    current = ns
    while current:
        out.append(current)
        parent, sep, _ = current.rpartition("/")
        if not sep or not parent:
            break
        current = parent
    return out


def _sql_text(v):
    """A JSON value as SQLite stores it in a TEXT generated column (None for JSON null)."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else None
    return json.dumps(v, separators=(",", ":"))


def _reject_constant(name):
    raise ValueError(name)


def _metadata_fields(metadata) -> tuple:
    """``(scope_idx, agent_id_idx, target_agent_id_idx)`` of one ``metadata`` text, as ai-memory's
    generated columns compute them."""
    if not isinstance(metadata, str):
        return "private", None, None
    try:
        doc = json.loads(metadata, parse_constant=_reject_constant)
    except ValueError:
        return "private", None, None
    if not isinstance(doc, dict):
        return "private", None, None
    scope = _sql_text(doc.get("scope"))
    return ("private" if scope is None else scope), _sql_text(doc.get("agent_id")), \
        _sql_text(doc.get("target_agent_id"))


def _subtree(ns, prefix) -> bool:
    """``ns = prefix OR ns LIKE prefix || '/%'`` (LIKE folds ASCII case only)."""
    if not isinstance(ns, str) or prefix is None:
        return False
    if ns == prefix:
        return True
    head = prefix + "/"
    return len(ns) >= len(head) and ns[:len(head)].translate(_ASCII_LOWER) == head.translate(_ASCII_LOWER)


def _column(memories: pd.DataFrame, name: str, default):
    if name in memories.columns:
        return [None if (v is None or (isinstance(v, float) and math.isnan(v))) else v
                for v in memories[name].tolist()]
    return [default] * len(memories)


def readable_memories(memories: pd.DataFrame, caller: str) -> np.ndarray:
    """Per row of ``memories``: may ``caller`` read it in a calibration sweep (visibility,
    lifecycle and the memory's own namespace outside the substrate)?

    ``scope_idx`` / ``agent_id_idx`` / ``target_agent_id_idx`` columns (ai-memory's generated
    columns, which a database read brings along) are used when present; otherwise they are
    computed from ``metadata`` (JSON text; absent = ``'{}'``). ``lifecycle_state`` absent reads
    as NULL (readable).

    >>> m = pd.DataFrame({"id": ["a", "b", "c"], "namespace": ["x", "x", "_agents"],
    ...                   "metadata": ['{"agent_id": "ai:me"}', '{"scope": "team"}', '{"scope": "collective"}']})
    >>> readable_memories(m, "ai:me").tolist()
    [True, False, False]
    """
    n = len(memories)
    generated = all(c in memories.columns for c in ("scope_idx", "agent_id_idx", "target_agent_id_idx"))
    if generated:
        scope = [("private" if v is None else str(v)) for v in _column(memories, "scope_idx", None)]
        owner = _column(memories, "agent_id_idx", None)
        target = _column(memories, "target_agent_id_idx", None)
    else:
        fields = [_metadata_fields(m) for m in _column(memories, "metadata", "{}")]
        scope = [f[0] for f in fields]
        owner = [f[1] for f in fields]
        target = [f[2] for f in fields]
    namespace = _column(memories, "namespace", None)
    lifecycle = _column(memories, "lifecycle_state", None)
    chain = _ancestors(caller)
    p = chain[0] if chain else None
    team, unit, org = (chain[i] if len(chain) > i else None for i in (1, 2, 3))
    out = np.zeros(n, dtype=bool)
    for i in range(n):
        s, ns = scope[i], namespace[i]
        if p is None or s == "collective":
            seen = True
        elif s == "private":
            seen = (owner[i] is not None and str(owner[i]) == caller) or \
                (target[i] is not None and str(target[i]) == caller)
        elif s == "team":
            seen = _subtree(ns, team)
        elif s == "unit":
            seen = _subtree(ns, unit)
        elif s == "org":
            seen = _subtree(ns, org)
        else:
            seen = False
        life = lifecycle[i]
        alive = life is None or (isinstance(life, str) and life in READABLE_LIFECYCLE_STATES)
        out[i] = seen and alive and is_substrate_namespace(ns) is False
    return out
