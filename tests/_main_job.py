"""One run of the main job on the bundled samples per test session, shared by the modules that read it.

A session-scoped fixture defined in one test module is not shared with
another (each module gets its own), so the modules call :func:`main_job`,
which runs the job once into a session temporary directory and caches the
result. Tests must not write into its ``out_dir``: copy it first.
"""

from __future__ import annotations

_CACHE: dict = {}


def main_job(tmp_path_factory, embedder):
    """The RunResult of ``run_all(samples, <session tmp>/run, embedder=embedder)``, run once."""
    if "result" not in _CACHE:
        from thatchlab.datasets import samples_dir
        from thatchlab.run import run_all

        _CACHE["result"] = run_all(samples_dir(), tmp_path_factory.mktemp("run"), embedder=embedder)
    return _CACHE["result"]
