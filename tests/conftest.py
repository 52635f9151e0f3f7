"""Shared fixtures. The real embedding model loads once per test session."""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TQDM_DISABLE", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("THATCHLAB_CACHE_DIR", str(Path(__file__).resolve().parents[1] / ".cache" / "embeddings"))

import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def real_embedder():
    """The bundled all-MiniLM-L6-v2 model, loaded once for the whole session."""
    from thatchlab.embed import default_embedder

    return default_embedder()
