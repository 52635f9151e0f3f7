"""Progress bars for long work (tqdm): on at a terminal and in Jupyter, off elsewhere.

By default a bar is drawn only where someone watches it: when stderr is a
terminal, or inside a Jupyter kernel. Piped or redirected output (CI logs,
``2> file``) gets no bar. ``TQDM_DISABLE=1`` switches bars off everywhere
(notebooks and tests set it, so stored outputs re-run identically) and
``enabled=True``/``False`` overrides both.
"""

from __future__ import annotations

import os
import sys

from tqdm.std import tqdm

__all__ = ["progress", "progress_enabled"]


def _in_jupyter() -> bool:
    shell = sys.modules.get("IPython")
    try:
        ip = shell.get_ipython() if shell is not None else None
    except Exception:  # pragma: no cover - an unusual IPython
        return False
    return ip is not None and "IPKernelApp" in getattr(ip, "config", {})


def progress_enabled(flag=None) -> bool:
    """Whether a progress bar is drawn: ``flag`` if given, else not under ``TQDM_DISABLE``, and only
    at a terminal or in Jupyter.

    Parameters
    ----------
    flag : bool, optional
        Overrides everything when given.

    Returns
    -------
    bool
        Whether to draw.

    See Also
    --------
    progress

    Examples
    --------
    >>> progress_enabled(True), progress_enabled(False)
    (True, False)
    """
    if flag is not None:
        return bool(flag)
    if os.environ.get("TQDM_DISABLE", "").strip().lower() in ("1", "true", "yes"):
        return False
    stream = sys.stderr
    try:
        tty = stream is not None and stream.isatty()
    except (AttributeError, ValueError):  # a closed or odd stream
        tty = False
    return tty or _in_jupyter()


def progress(iterable=None, *, total=None, desc=None, enabled=None, **kw):
    """Wrap ``iterable`` in a tqdm bar unless progress bars are off (see :func:`progress_enabled`).

    The plain text bar is used everywhere (it renders in notebooks too and
    needs no widget library).

    Parameters
    ----------
    iterable : iterable, optional
        What to iterate over.
    total : int, optional
        The number of items, when ``iterable`` has no length.
    desc : str, optional
        The bar's label.
    enabled : bool, optional
        Draw or not, overriding :func:`progress_enabled`'s rules.
    **kw
        Passed on to ``tqdm``.

    Returns
    -------
    tqdm.std.tqdm
        The bar, iterating as ``iterable`` (a disabled bar draws nothing).

    See Also
    --------
    progress_enabled

    Examples
    --------
    >>> list(progress(range(3), enabled=False))
    [0, 1, 2]
    """
    return tqdm(iterable, total=total, desc=desc, disable=not progress_enabled(enabled),
                leave=False, **kw)
