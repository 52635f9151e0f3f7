"""Progress bars: drawn at a terminal or in Jupyter, never into a pipe, off under TQDM_DISABLE."""

from __future__ import annotations

import io

from thatchlab.core import progress as prog


class _Stream(io.StringIO):
    def __init__(self, tty):
        super().__init__()
        self._tty = tty

    def isatty(self):
        return self._tty


def test_bars_follow_the_terminal(monkeypatch):
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    monkeypatch.setattr(prog.sys, "stderr", _Stream(True))
    assert prog.progress_enabled() is True
    monkeypatch.setattr(prog.sys, "stderr", _Stream(False))
    assert prog.progress_enabled() is False
    monkeypatch.setattr(prog, "_in_jupyter", lambda: True)
    assert prog.progress_enabled() is True


def test_tqdm_disable_and_the_flag_win(monkeypatch):
    monkeypatch.setattr(prog.sys, "stderr", _Stream(True))
    monkeypatch.setenv("TQDM_DISABLE", "1")
    assert prog.progress_enabled() is False
    assert prog.progress_enabled(True) is True
    monkeypatch.delenv("TQDM_DISABLE")
    assert prog.progress_enabled(False) is False


def test_a_piped_run_writes_no_bar(monkeypatch):
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    err = _Stream(False)
    monkeypatch.setattr(prog.sys, "stderr", err)
    assert list(prog.progress(range(3), desc="work", file=err)) == [0, 1, 2]
    assert err.getvalue() == ""


def test_warnings_point_at_the_callers_line():
    """A warning raised inside thatchlab is attributed to this file, however deep the call."""
    import warnings

    import pandas as pd

    from thatchlab.calibration import LEDGER_ABSENT_WARNING, backfill_recall_outcomes
    from thatchlab.core.errors import warn

    obs = pd.DataFrame({"memory_id": ["m1"], "recall_outcome": [None]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        backfill_recall_outcomes(obs, None)
        warn("direct")
    assert [str(w.message) for w in caught] == [LEDGER_ABSENT_WARNING, "direct"]
    assert {w.filename for w in caught} == {__file__}
