"""Named production releases each engine can replay, oldest first, with the source they follow.

Production systems move: thatch's nudge and write rules changed after v0.1.30, omi's evidence gate
learned source authority, ai-memory's calibration report learned audiences. A replay must say which
code it reproduces, so every params class carries ``release`` (default: the system's newest known
release; ``"latest"`` names it) and the rules that depend on it (not free parameters) follow it.

Each release is pinned to the public files it follows: a :class:`Source` names the repository, the
path and the commit (or git blob id, ``kind="blob"``) read. mnemo has no public code: the seed's SQL
is its only production, named ``"seed"``.

>>> latest_release("thatch")
'07ecf87'
>>> resolve_release("thatch", "latest"), resolve_release("thatch", "v0.1.30")
('07ecf87', 'v0.1.30')
>>> release_names("ai-memory")
('v0.7.0', 'a78a228', '0a5770a')
>>> at_least("thatch", "v0.1.30", "07ecf87")
False
"""

from __future__ import annotations

import re
from typing import NamedTuple

from thatchlab.core.errors import ParamsError

__all__ = ["Source", "Release", "RELEASES", "SYSTEMS", "ReleaseError", "release_names",
           "latest_release", "resolve_release", "release_info", "at_least", "system_of"]


class ReleaseError(ParamsError):
    """An unknown release name (the message lists the known ones)."""


class Source(NamedTuple):
    """One public file a release follows.

    Parameters
    ----------
    repo : str
        The repository, ``owner/name``.
    path : str
        The file's path inside the repository.
    commit : str
        A commit id, a tag, or a git blob id when ``kind == "blob"``.
    kind : str, default="commit"
        What ``commit`` is: ``"commit"``, ``"tag"`` or ``"blob"``.

    Examples
    --------
    >>> str(Source("sysread/thatch", "src/db.ts", "2ed97f2a"))
    'sysread/thatch:src/db.ts @2ed97f2a'
    """

    repo: str
    path: str
    commit: str
    kind: str = "commit"

    def __str__(self) -> str:
        at = "blob " if self.kind == "blob" else "@"
        return f"{self.repo}:{self.path} {at}{self.commit}"


class Release(NamedTuple):
    """A named production release.

    Parameters
    ----------
    system : str
        The production system (``"thatch"``, ``"omi"``, ``"ai-memory"``, ``"mnemo"``).
    name : str
        The release's name (a tag or a short commit id).
    sources : tuple of Source
        The public files it follows.
    changes : str
        What differs from the previous release, in words.

    See Also
    --------
    release_info : The record of a release by name.
    """

    system: str
    name: str
    sources: tuple
    changes: str


_THATCH = "sysread/thatch"
_OMI = "BasedHardware/omi"
_AIM = "alphaonedev/ai-memory-mcp"
_OMI_MEM = "backend/utils/memory"

#: ``{system: (Release, ...)}``, oldest first; the last one is the default of every params class.
RELEASES = {
    "thatch": (
        Release("thatch", "v0.1.30", (Source(_THATCH, "src/scoring-engine.ts", "v0.1.30 (2c35704)", "tag"),
                                      Source(_THATCH, "src/prediction.ts", "v0.1.30 (2c35704)", "tag"),
                                      Source(_THATCH, "src/behavior.ts", "v0.1.30 (2c35704)", "tag"),
                                      Source(_THATCH, "src/runtime.ts", "v0.1.30 (2c35704)", "tag")),
                "item dedup searches the target store only; the hook stops after an extraction nudge "
                "while tool interactions are pending"),
        Release("thatch", "07ecf87", (Source(_THATCH, "src/scoring-engine.ts", "0182ac19"),
                                      Source(_THATCH, "src/prediction.ts", "97212df2"),
                                      Source(_THATCH, "src/tool-defs.ts", "2ed97f2a"),
                                      Source(_THATCH, "src/prompts.ts", "2ed97f2a"),
                                      Source(_THATCH, "src/db.ts", "2ed97f2a"),
                                      Source(_THATCH, "src/runtime.ts", "07ecf879")),
                "nudge items deduplicated by embedding; writes search the target store and global and "
                "write where the item lives; 'unknown' resolves to global; behavior feedback/delete "
                "resolve by statement then situation; lists cover project and global; new nudge line "
                "rendering; the hook skips chat echoes and sub-agent sessions and has no extraction "
                "gate; prediction_dedup_pairs and prediction_mark_checked"),
    ),
    "omi": (
        Release("omi", "4d5d5c5", (Source(_OMI, f"{_OMI_MEM}/belief_evidence.py", "4d5d5c53"),
                                   Source(_OMI, f"{_OMI_MEM}/belief_model.py", "275b9e2f", "blob")),
                "the evidence gate: the judge sees the nearest rows, a judgment naming no target "
                "applies to the top neighbour"),
        Release("omi", "17fecf7", (Source(_OMI, f"{_OMI_MEM}/belief_evidence.py", "17fecf7a", "blob"),
                                   Source(_OMI, f"{_OMI_MEM}/belief_source_policy.py", "d3bbcc94"),
                                   Source(_OMI, f"{_OMI_MEM}/belief_model.py", "275b9e2f", "blob")),
                "only eligible records reach the judge; candidates need independent authoritative "
                "evidence; the judge must name a candidate; a less authoritative claim writes "
                "nothing; the event time is the later original evidence time; automation pause"),
    ),
    "ai-memory": (
        Release("ai-memory", "v0.7.0", (Source(_AIM, "src/confidence/calibrate.rs", "release/v0.7.0 (ff8caac8)",
                                               "tag"),),
                "the v0.7.0 calibration report and shadow table"),
        Release("ai-memory", "a78a228", (Source(_AIM, "src/confidence/calibrate.rs", "a78a2284"),
                                         Source(_AIM, "src/confidence/shadow.rs", "05359fe0")),
                "consumption utility, recall-outcome backfill, consume/access divergence"),
        Release("ai-memory", "0a5770a", (Source(_AIM, "src/confidence/calibrate.rs", "0a5770af"),),
                "calibrate_from_shadow takes an audience (admin or one caller)"),
    ),
    "mnemo": (
        Release("mnemo", "seed", (), "the seed's SQL: the only production mnemo has (no public code)"),
    ),
}

#: The production system behind each engine.
SYSTEMS = {"prediction": "thatch", "behavior": "thatch", "belief": "omi", "calibration": "ai-memory",
           "anticipation": "mnemo"}


def system_of(name: str) -> str:
    """The system of an engine name (``prediction`` → ``thatch``) or a system name itself.

    Parameters
    ----------
    name : str
        An engine name (a key of :data:`SYSTEMS`) or a system name (a key of :data:`RELEASES`).

    Returns
    -------
    str
        The system's name.

    Raises
    ------
    ParamsError
        ``name`` is neither.

    Examples
    --------
    >>> system_of("prediction"), system_of("omi")
    ('thatch', 'omi')
    """
    if name in RELEASES:
        return name
    try:
        return SYSTEMS[name]
    except KeyError:
        raise ParamsError(f"system: expected one of {sorted(RELEASES)} or an engine "
                          f"{sorted(SYSTEMS)}, got {name!r}") from None


def release_names(system: str) -> tuple:
    """The known release names of ``system`` (or of an engine's system), oldest first.

    Parameters
    ----------
    system : str
        A system name, or an engine name standing for its system.

    Returns
    -------
    tuple of str
        The names, oldest first.

    See Also
    --------
    latest_release, release_info
    """
    return tuple(r.name for r in RELEASES[system_of(system)])


def latest_release(system: str) -> str:
    """The newest known release of ``system``: what a replay follows unless told otherwise.

    Parameters
    ----------
    system : str
        A system name, or an engine name standing for its system.

    Returns
    -------
    str
        The release's name.

    See Also
    --------
    release_names, resolve_release
    """
    return release_names(system)[-1]


def resolve_release(system: str, name) -> str:
    """The canonical release name ``name`` means for ``system``.

    ``"latest"`` is the newest release; a longer commit id that starts with a release's id (as
    ``git log`` prints it, e.g. ``07ecf8794e4d``) names that release. Anything else raises
    :class:`ReleaseError` listing the known releases.

    Parameters
    ----------
    system : str
        A system name, or an engine name standing for its system.
    name : str
        A release name, ``"latest"``, or a longer commit id of a release.

    Returns
    -------
    str
        The release's canonical name.

    Raises
    ------
    ReleaseError
        ``name`` names no known release of ``system``.

    See Also
    --------
    release_info, latest_release
    """
    names = release_names(system)
    if isinstance(name, str):
        key = name.strip()
        if key == "latest":
            return names[-1]
        if key in names:
            return key
        if re.fullmatch(r"[0-9a-fA-F]{8,40}", key):
            hits = [n for n in names if re.fullmatch(r"[0-9a-f]{7,}", n) and key.lower().startswith(n)]
            if len(hits) == 1:
                return hits[0]
    raise ReleaseError(f"release: {system_of(system)} has no release {name!r}; known releases "
                       f"(oldest first): {', '.join(names)}, or 'latest' ({names[-1]})")


def release_info(system: str, name: str = "latest") -> Release:
    """The :class:`Release` record of ``name`` (resolved as :func:`resolve_release` does).

    Parameters
    ----------
    system : str
        A system name, or an engine name standing for its system.
    name : str, default="latest"
        The release, as :func:`resolve_release` takes it.

    Returns
    -------
    Release
        Its record.

    See Also
    --------
    resolve_release, release_names
    """
    key = resolve_release(system, name)
    return next(r for r in RELEASES[system_of(system)] if r.name == key)


def at_least(system: str, name: str, other: str) -> bool:
    """Whether release ``name`` is ``other`` or newer (both resolved).

    Parameters
    ----------
    system : str
        A system name, or an engine name standing for its system.
    name, other : str
        The two releases, as :func:`resolve_release` takes them.

    Returns
    -------
    bool
        True when ``name`` is ``other`` or a later release.
    """
    names = release_names(system)
    return names.index(resolve_release(system, name)) >= names.index(resolve_release(system, other))
