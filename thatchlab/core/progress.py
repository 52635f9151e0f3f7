"""Progress bars for long work (tqdm), switched off by ``TQDM_DISABLE=1``.

Notebooks and tests set ``TQDM_DISABLE=1`` so stored outputs re-run identically.
"""

from __future__ import annotations

import os

__all__ = ["progress", "progress_enabled"]


def progress_enabled(flag=None) -> bool:
    if flag is not None:
        return bool(flag)
    return os.environ.get("TQDM_DISABLE", "").strip().lower() not in ("1", "true", "yes")


def progress(iterable=None, *, total=None, desc=None, enabled=None, **kw):
    """Wrap ``iterable`` in a tqdm bar unless progress bars are off.

    The plain text bar is used everywhere (it renders in notebooks too and
    needs no widget library).
    """
    from tqdm.std import tqdm

    return tqdm(iterable, total=total, desc=desc, disable=not progress_enabled(enabled),
                leave=False, **kw)
