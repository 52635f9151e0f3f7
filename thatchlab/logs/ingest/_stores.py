"""Naming a session's project store the way thatch named it.

thatch keeps one store per project, named by its ``detectRepo`` (``src/git.ts``
of sysread/thatch) from the project directory the server or plugin was
started in: ``owner/repo`` from the ``origin`` remote (the host dropped,
nested groups kept whole), else the folder name of the main checkout (so a
linked worktree shares its repository's store), else the directory's own
folder name. No lowercasing, no other normalisation.

An ingest names the store of a row whose call named none, per session, in
this order (:func:`name_stores`):

1. **what production said**: the store its own replies name in the same
   session (``[created] acme/app :: ...``, ``[codified] ...``, ``No behaviors in
   "acme/app"...``, the memory tools' ``[saved] acme/app :: ...``) and the hook
   text that names it (the session-start reminder's ``conventions for
   "acme/app"``), counting only calls that did not pass a ``store``;
2. the same, from another session of the same repository: the same project
   directory, or another worktree of the same main checkout
   (:func:`worktree_main`: a git worktree shares its repository's store);
3. :func:`detect_repo` on the project directory, when it exists on this
   machine (else on the worktree's main checkout, when that exists);
4. the store the session's calls passed explicitly (the one passed most
   often), with a warning;
5. the folder name of the main checkout (a worktree's, as thatch names a
   repository without an origin) or of the directory, with a warning naming
   the guess (it may be wrong: pass ``project_store=`` to name it).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections import Counter, defaultdict

__all__ = ["parse_git_url", "detect_repo", "folder_name", "stores_named_in", "StoreEvidence", "name_stores",
           "worktree_main"]

# parseGitUrl's four remote forms, tried in order; the host is dropped
_REMOTES = (re.compile(r"^git@([^:]+):(.+)/(.+)$"), re.compile(r"^https?://[^/]+/(.+)/(.+)$"),
            re.compile(r"^ssh://git@[^/]+/(.+)/(.+)$"), re.compile(r"^git://[^/]+/(.+)/(.+)$"))
# Texts of thatch's replies and hooks that name a store (never anchored: the first reply of a
# server may carry a warning before it).
_NAMED = (re.compile(r"\[(?:created|codified|saved|forgotten)\] (.+?) :: "),
          re.compile(r'No (?:predictions|behaviors|memories) in "([^"\n]+)"'),
          re.compile(r'No (?:prediction|behavior) matching ".*" found in "([^"\n]+)"\.'),
          re.compile(r'No memory labeled ".*" found in store "([^"\n]+)"\.'),
          re.compile(r'project architecture and conventions for "([^"\n]+)"'),
          re.compile(r'Thatch persistent memory is active with stores "([^"\n]+)" and "global"'))
_GIT_TIMEOUT = 10
#: Folders that hold a repository's worktrees inside its main checkout: Claude Code's own
#: ``claude --worktree`` (``<repo>/.claude/worktrees/<name>``) and the common ``<repo>/.worktrees/<name>``.
_INSIDE = ("/.claude/worktrees/", "/.worktrees/")
#: A folder beside the main checkout named after it (``<repo>-worktrees/<name>``, as in
#: marot/spotter test/fixtures/transcripts: ``/home/USER/projects/spotter-worktrees/spotter-dov``).
_BESIDE = re.compile(r"^(.*)/([^/]+)[-_.]worktrees/([^/]+)(/.*)?$")


def worktree_main(directory, branch=None):
    """The main checkout of a git worktree, from its path alone (None when the path shows none).

    A path inside ``<repo>/.claude/worktrees/`` or ``<repo>/.worktrees/`` is a worktree of
    ``<repo>``; one inside ``<parent>/<repo>-worktrees/`` a worktree of ``<parent>/<repo>``; one
    inside ``<repo>/worktrees/<name>`` only when the session's git branch is ``<name>`` (the
    transcript's ``gitBranch``: a folder merely called ``worktrees`` proves nothing).

    Parameters
    ----------
    directory : str
        The session's directory.
    branch : str, optional
        The session's git branch.

    Returns
    -------
    str or None
        The main checkout's path, or None.

    See Also
    --------
    detect_repo : the store named from a directory.

    Examples
    --------
    >>> worktree_main("/home/dev/app/.claude/worktrees/fix-login"), worktree_main("/p/spotter-worktrees/spotter-dov")
    ('/home/dev/app', '/p/spotter')
    >>> worktree_main("/home/dev/app/worktrees/feat-x", "feat-x"), worktree_main("/home/dev/app/worktrees/feat-x")
    ('/home/dev/app', None)
    >>> worktree_main("/home/dev/app") is None
    True
    """
    if not isinstance(directory, str) or not directory:
        return None
    d = directory.rstrip("/")
    for marker in _INSIDE:
        at = d.rfind(marker)
        if at > 0 and len(d) > at + len(marker):
            return d[:at]
    m = _BESIDE.match(d)
    if m is not None and m.group(1):
        return f"{m.group(1)}/{m.group(2)}"
    at = d.rfind("/worktrees/")
    if at > 0 and isinstance(branch, str) and branch:
        name = d[at + len("/worktrees/"):].split("/")[0]
        if branch == name or branch.endswith("/" + name):
            return d[:at]
    return None


def parse_git_url(url: str):
    """``owner/repo`` of a git remote URL as thatch's ``parseGitUrl`` reads it, or None.

    Parameters
    ----------
    url : str
        The remote's URL (scp-like, ``ssh://``, ``https://``...).

    Returns
    -------
    str or None
        ``owner/repo`` (every path part but the last as the owner), or None
        for a URL without one.

    See Also
    --------
    detect_repo : the store named from a directory.

    Examples
    --------
    >>> parse_git_url("git@github.com:acme/weather-app.git")
    'acme/weather-app'
    >>> parse_git_url("https://gitlab.example.com/group/sub/tool.git/"), parse_git_url("ssh://git@host:22/o/r")
    ('group/sub/tool', 'o/r')
    >>> parse_git_url("/srv/git/weather-app.git") is None
    True
    """
    cleaned = re.sub(r"/+$", "", url.strip())
    cleaned = re.sub(r"\.git$", "", cleaned)
    for i, pattern in enumerate(_REMOTES):
        m = pattern.match(cleaned)
        if m is not None:
            return f"{m.group(2)}/{m.group(3)}" if i == 0 else f"{m.group(1)}/{m.group(2)}"
    return None


def folder_name(directory: str) -> str:
    """The last ``/``-separated part of ``directory`` (``unknown`` when empty, as thatch does).

    >>> folder_name("/home/dev/weather-app"), folder_name("/home/dev/weather-app/"), folder_name("")
    ('weather-app', 'unknown', 'unknown')
    """
    return str(directory).split("/")[-1] or "unknown"


def _git(args, cwd):
    try:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=_GIT_TIMEOUT,
                             env={**os.environ, "GIT_TERMINAL_PROMPT": "0"}, check=False)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return out.stdout if out.returncode == 0 else None


def detect_repo(directory) -> str:
    """The store thatch's ``detectRepo`` names for ``directory`` on this machine.

    ``owner/repo`` from ``git remote get-url origin`` run in the directory;
    else the folder name of the main checkout (``git rev-parse
    --path-format=absolute --git-common-dir`` without its ``/.git``); else
    ``unknown`` when the directory does not exist (production's cache of
    earlier answers is not here); else its folder name.

    Parameters
    ----------
    directory : str or path-like
        The project directory a session ran in.

    Returns
    -------
    str
        The store name.

    See Also
    --------
    parse_git_url : how the origin's URL is read.
    worktree_main : the main checkout of a worktree path.

    Examples
    --------
    >>> import tempfile
    >>> detect_repo(tempfile.mkdtemp(prefix="plain-")).startswith("plain-")
    True
    """
    d = str(directory)
    if not os.path.isdir(d):
        return "unknown"
    url = _git(["remote", "get-url", "origin"], d)
    slug = parse_git_url(url) if url is not None else None
    if slug:
        return slug
    common = _git(["rev-parse", "--path-format=absolute", "--git-common-dir"], d)
    if common is not None and common.strip().endswith("/.git"):
        main = common.strip()[:-len("/.git")]
        base = os.path.basename(main)
        if base and base != "unknown":
            return base
    return folder_name(d)


def stores_named_in(text) -> list[str]:
    """The stores a thatch reply or hook text names, in order.

    >>> stores_named_in('[codified] acme/weather-app :: "run the tests" for "committing"')
    ['acme/weather-app']
    >>> stores_named_in('No behaviors in "acme/weather-app", "global".'), stores_named_in("[confirm] x")
    (['acme/weather-app'], [])
    """
    if not isinstance(text, str) or not text:
        return []
    found = []
    for pattern in _NAMED:
        found.extend(m.group(1) for m in pattern.finditer(text))
    return [s for s in found if s != "global"]


class StoreEvidence:
    """What a host's records say about each session's project store, gathered while reading."""

    def __init__(self):
        self.named: dict = defaultdict(Counter)  # session → store → times named
        self.first: dict = {}                    # (session, store) → order first named
        self.directory: dict = {}                # session → its project directory
        self.aliases: dict = {}                  # a subagent's session → the session whose server it used
        self.passed: dict = defaultdict(Counter)  # session → stores its calls passed explicitly
        self.branches: dict = {}                 # session → the git branch its records show

    def see(self, session, text, explicit_store=None) -> None:
        """Record the stores ``text`` (a reply or hook output) names; a reply to a call that passed
        its own ``store`` says nothing of the project store (it is remembered as a last hint)."""
        if session is None:
            return
        if explicit_store is not None:
            if isinstance(text, str) and explicit_store != "global":
                self.passed[session][explicit_store] += 1
            return
        for s in stores_named_in(text):
            self.named[session][s] += 1
            self.first.setdefault((session, s), len(self.first))

    def alias(self, session, base) -> None:
        """``session`` ran on ``base``'s server (a subagent): it has ``base``'s project store."""
        self.aliases.setdefault(session, base)

    def project_dir(self, session, directory) -> None:
        if session is not None and isinstance(directory, str) and directory and session not in self.directory:
            self.directory[session] = directory

    def branch(self, session, branch) -> None:
        if session is not None and isinstance(branch, str) and branch and session not in self.branches:
            self.branches[session] = branch

    def repo_of(self, session):
        """``(repository key, main checkout or None)``: the main checkout of a worktree, else the directory."""
        d = self.dir_of(session)
        base = self.aliases.get(session, session)
        main = worktree_main(d, self.branches.get(session, self.branches.get(base)))
        return (main if main is not None else d), main

    def dir_of(self, session):
        """The project directory of ``session`` (its base session's for a subagent)."""
        d = self.directory.get(session)
        return d if d is not None else self.directory.get(self.aliases.get(session))

    def said(self, session):
        """The store production named most often in ``session`` (first named on ties), or None."""
        c = self.named.get(session)
        if not c:
            base = self.aliases.get(session)
            return None if base is None or base == session else self.said(base)
        return min(c, key=lambda s: (-c[s], self.first[(session, s)]))


def name_stores(rows: list, evidence: StoreEvidence, project_store, result) -> None:
    """Write each session's project store on its rows that name none (see the module notes).

    ``project_store``: ``"auto"`` (the rule above), ``"cwd"`` (always the
    folder name), a store name (for every session), or None (leave them null:
    the replay's project store). Counts go to ``result.read`` and sentences
    about guesses to ``result.warnings``.
    """
    if project_store is None:
        return
    sessions = list(dict.fromkeys(r["session"] for r in rows if r["store"] is None))
    chosen, how = {}, Counter()
    by_dir = defaultdict(Counter)
    for s in evidence.named:
        key = evidence.repo_of(s)[0]
        if key is not None and evidence.said(s) is not None:
            by_dir[key][evidence.said(s)] += 1
    guessed, hinted, guessed_main, conflicting = Counter(), Counter(), Counter(), 0
    for s in sessions:
        d = evidence.dir_of(s)
        key, main = evidence.repo_of(s)
        if project_store == "cwd":
            chosen[s] = folder_name(d) if d else None
            how["folder name (--project-store cwd)"] += 1
            continue
        if project_store != "auto":
            chosen[s] = project_store
            how["given (--project-store)"] += 1
            continue
        if len(evidence.named.get(s, ())) > 1:
            conflicting += 1
        name = evidence.said(s)
        if name is not None:
            chosen[s] = name
            how["named by production's replies in the session"] += 1
        elif key is not None and by_dir.get(key):
            c = by_dir[key]
            chosen[s] = max(c, key=lambda k: (c[k], k))
            how["named by production in another session of the directory" if main is None else
                "named by production in another worktree of the repository"] += 1
        elif d is not None and os.path.isdir(d):
            chosen[s] = detect_repo(d)
            how["detectRepo on the project directory"] += 1
        elif main is not None and os.path.isdir(main):
            chosen[s] = detect_repo(main)
            how["detectRepo on the worktree's main checkout"] += 1
        elif evidence.passed.get(s):
            c = evidence.passed[s]
            chosen[s] = max(c, key=c.__getitem__)
            hinted[chosen[s]] += 1
            how["the store its calls passed (a guess)"] += 1
        elif main is not None:
            chosen[s] = folder_name(main)
            guessed_main[chosen[s]] += 1
            how["the worktree's main checkout folder name (a guess)"] += 1
        elif d is not None:
            chosen[s] = folder_name(d)
            guessed[chosen[s]] += 1
            how["folder name (a guess)"] += 1
        else:
            chosen[s] = None
            how["no project directory (left null)"] += 1
    for r in rows:
        if r["store"] is None:
            r["store"] = chosen.get(r["session"])
    for k, v in how.items():
        result.read[f"sessions whose store is: {k}"] += v
    for counts, what in ((hinted, "taken from the store the calls passed"),
                         (guessed_main, "named after the main checkout of the worktree its sessions ran in"),
                         (guessed, "named after the project folder")):
        if counts:
            names = ", ".join(f"{k!r} ({v} session{'s' if v > 1 else ''})" for k, v in sorted(counts.items()))
            result.warnings.append(
                f"store {what} for {names}: no reply of production names the project store and the directory "
                "is not on this machine, so thatch's own rule (owner/repo from the git origin) could not run; "
                "pass --project-store NAME if production used another name")
    if conflicting:
        result.warnings.append(f"{conflicting} session(s) whose replies name more than one project store; the "
                               "one named most often was taken")
