"""Persistent on-disk cache of embeddings, shared by every process on a machine.

Embedding the same text twice with the same model is wasted work, and replays
and sweeps (often many Dask workers) embed the same prompts again and again.
Vectors live in one SQLite file (WAL journal, busy timeout, ``BEGIN
IMMEDIATE`` writes), keyed by ``(model key, kind, text)`` where the model key
holds the model's name and a hash of its weight files, so a changed model
never reuses stale vectors. Public names are re-exported by
:mod:`thatchlab.embed`.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
from pathlib import Path

import numpy as np

from thatchlab.core.errors import InputError, warn
from thatchlab.core.sqlite import connect_own
from thatchlab.embed._vectors import as_texts, check_vectors, from_blob

__all__ = ["EmbeddingCache", "default_cache_dir", "weights_hash"]

KINDS = ("query", "passage")
_CHUNK = 500  # texts per SELECT, below SQLite's bound-parameter limit
_TIMEOUT_S = 120.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model_key TEXT NOT NULL,
    kind      TEXT NOT NULL,
    text      TEXT NOT NULL,
    dim       INTEGER NOT NULL,
    vector    BLOB NOT NULL,
    PRIMARY KEY (model_key, kind, text)
);
"""


def default_cache_dir() -> Path:
    """Directory of the embedding cache.

    ``$THATCHLAB_CACHE_DIR`` when set, else ``~/.cache/thatchlab/embeddings``.

    Returns
    -------
    pathlib.Path
        The directory (not created here).

    See Also
    --------
    EmbeddingCache
    """
    env = os.environ.get("THATCHLAB_CACHE_DIR", "").strip()
    return Path(env).expanduser() if env else Path.home() / ".cache" / "thatchlab" / "embeddings"


_HASHES: dict[tuple, str] = {}
_HASH_LOCK = threading.Lock()


def _model_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    # hidden files and the model card do not change the vectors
    return sorted(
        f for f in root.rglob("*")
        if f.is_file() and not any(part.startswith(".") for part in f.relative_to(root).parts)
        and f.name.lower() != "readme.md")


def weights_hash(path) -> str:
    """SHA-256 of a model's files: each file's relative path, size and bytes.

    ``path`` is a model directory (every file under it except hidden files
    and ``README.md``) or one weights file. Memoised per process, keyed by
    the files' paths, sizes and modification times, so a model is read once.

    Parameters
    ----------
    path : str or os.PathLike
        A model directory or one weights file.

    Returns
    -------
    str
        ``"sha256:<64 hex digits>"``.

    Raises
    ------
    InputError
        ``path`` does not exist.
    """
    root = Path(path).expanduser().resolve()
    if not root.exists():
        raise InputError(f"weights_hash: expected a model file or directory, {str(root)!r} does not exist")
    files = _model_files(root)
    stats = tuple((str(f), f.stat().st_size, f.stat().st_mtime_ns) for f in files)
    with _HASH_LOCK:
        if (str(root), stats) in _HASHES:
            return _HASHES[(str(root), stats)]
    digest = hashlib.sha256()
    for f in files:
        rel = f.name if f == root else f.relative_to(root).as_posix()
        digest.update(rel.encode() + b"\0" + str(f.stat().st_size).encode() + b"\0")
        with open(f, "rb") as fh:
            for block in iter(lambda fh=fh: fh.read(1 << 20), b""):
                digest.update(block)
    out = "sha256:" + digest.hexdigest()
    with _HASH_LOCK:
        _HASHES[(str(root), stats)] = out
    return out


class EmbeddingCache:
    """A SQLite cache of unit vectors keyed by (model key, kind, text).

    Parameters
    ----------
    path : str or Path, optional
        A directory (the file ``embeddings.sqlite3`` is created in it) or a
        file ending in ``.sqlite``, ``.sqlite3`` or ``.db``. Default:
        :func:`default_cache_dir`.
    key : str
        The model key: its name and weights hash, e.g.
        ``"sentence-transformers/all-MiniLM-L6-v2|pooling=model|sha256:..."``.

    Attributes
    ----------
    file : pathlib.Path
        The SQLite file.
    key : str
        The model key.
    enabled : bool
        False once the file proved unusable (every lookup then misses).

    Raises
    ------
    InputError
        ``key`` is not a non-empty str.

    Notes
    -----
    Several processes may read and write the same file at once: every write
    is one ``BEGIN IMMEDIATE`` transaction of ``INSERT OR IGNORE`` rows, and
    waiting writers retry for up to two minutes. A corrupt or unreadable file
    never stops embedding: the cache warns once (``RuntimeWarning``), turns
    itself off, and callers compute every vector.

    Examples
    --------
    >>> import tempfile
    >>> cache = EmbeddingCache(tempfile.mkdtemp(), key="toy|sha256:0")
    >>> cache.put_many("passage", ["tea"], np.array([[0.6, 0.8]]))
    >>> cache.get_many("passage", ["tea", "coffee"])["tea"].tolist()
    [0.6000000238418579, 0.800000011920929]
    """

    FILENAME = "embeddings.sqlite3"

    def __init__(self, path=None, key: str = ""):
        if not isinstance(key, str) or not key:
            raise InputError(f"EmbeddingCache key: expected a non-empty str, got {key!r}")
        p = Path(path).expanduser() if path is not None else default_cache_dir()
        self.file = p if p.suffix.lower() in (".sqlite", ".sqlite3", ".db") else p / self.FILENAME
        self.key = key
        self.enabled = True
        self._ready = False

    def __repr__(self) -> str:
        return f"EmbeddingCache(file={str(self.file)!r}, key={self.key!r}, enabled={self.enabled})"

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_ready"] = False
        return state

    # -- connection -----------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        self.file.parent.mkdir(parents=True, exist_ok=True)
        conn = connect_own(self.file, timeout=_TIMEOUT_S)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(_TIMEOUT_S * 1000)}")
            if not self._ready:
                self._prepare(conn)
                self._ready = True
        except BaseException:
            conn.close()
            raise
        return conn

    @staticmethod
    def _prepare(conn: sqlite3.Connection) -> None:
        deadline = time.monotonic() + _TIMEOUT_S
        while True:
            try:
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                conn.execute("BEGIN IMMEDIATE")
                conn.execute(_SCHEMA)
                conn.execute("COMMIT")
                break
            except sqlite3.OperationalError as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                busy = "locked" in str(exc) or "busy" in str(exc)
                if not busy or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        if str(mode).lower() != "wal":  # e.g. a file system without shared memory
            conn.execute("PRAGMA journal_mode = DELETE")

    def _fail(self, exc: Exception) -> None:
        self.enabled = False
        warn(
            f"embedding cache {str(self.file)!r} is unusable ({type(exc).__name__}: {exc}); "
            "computing embeddings without it", RuntimeWarning)

    @staticmethod
    def _check_kind(kind: str) -> None:
        if kind not in KINDS:
            raise InputError(f"kind: expected one of {KINDS}, got {kind!r}")

    # -- public API -----------------------------------------------------
    def get_many(self, kind: str, texts) -> dict[str, np.ndarray]:
        """Cached vectors of ``texts`` as ``{text: float32 vector}``; misses are absent.

        Parameters
        ----------
        kind : {"query", "passage"}
            Which embedding of the texts.
        texts : str or sequence of str
            The texts looked up.

        Returns
        -------
        dict
            Text → float32 vector, for the texts found.

        See Also
        --------
        put_many
        """
        self._check_kind(kind)
        items = list(dict.fromkeys(as_texts(texts)))
        if not self.enabled or not items:
            return {}
        out: dict[str, np.ndarray] = {}
        try:
            conn = self._connect()
            try:
                for start in range(0, len(items), _CHUNK):
                    chunk = items[start:start + _CHUNK]
                    marks = ",".join("?" * len(chunk))
                    rows = conn.execute(
                        "SELECT text, dim, vector FROM embeddings WHERE model_key = ? AND kind = ? "
                        f"AND text IN ({marks})", (self.key, kind, *chunk)).fetchall()
                    for text, dim, blob in rows:
                        vec = from_blob(blob)
                        if vec.shape[0] == dim and np.isfinite(vec).all():
                            out[text] = vec
            finally:
                conn.close()
        except (sqlite3.Error, OSError, ValueError) as exc:
            self._fail(exc)
            return {}
        return out

    def put_many(self, kind: str, texts, vectors) -> None:
        """Store one vector per text (rows of ``vectors``); existing entries are kept.

        Parameters
        ----------
        kind : {"query", "passage"}
            Which embedding of the texts.
        texts : str or sequence of str
            The texts.
        vectors : array-like
            One finite row per text.

        Raises
        ------
        InputError
            An unknown ``kind``, or not one vector per text.

        See Also
        --------
        get_many
        """
        self._check_kind(kind)
        items = as_texts(texts)
        mat = check_vectors(vectors, what="cached embedding")
        if mat.ndim != 2 or mat.shape[0] != len(items):
            raise InputError(
                f"put_many: expected {len(items)} vectors (one per text), got shape {mat.shape}")
        if not self.enabled or not items:
            return
        le = mat.astype("<f4")
        rows = [(self.key, kind, t, le.shape[1], le[i].tobytes()) for i, t in enumerate(items)]
        self._write(lambda conn: conn.executemany(
            "INSERT OR IGNORE INTO embeddings (model_key, kind, text, dim, vector) "
            "VALUES (?, ?, ?, ?, ?)", rows))

    def count(self, kind: str | None = None) -> int:
        """Number of cached vectors for this key (and ``kind``, when given).

        Parameters
        ----------
        kind : {"query", "passage"}, optional
            Count only this kind.

        Returns
        -------
        int
            The number of vectors (0 when the cache is off).
        """
        if kind is not None:
            self._check_kind(kind)
        if not self.enabled:
            return 0
        try:
            conn = self._connect()
            try:
                sql = "SELECT COUNT(*) FROM embeddings WHERE model_key = ?"
                args: tuple = (self.key,)
                if kind is not None:
                    sql, args = sql + " AND kind = ?", (self.key, kind)
                return int(conn.execute(sql, args).fetchone()[0])
            finally:
                conn.close()
        except (sqlite3.Error, OSError) as exc:
            self._fail(exc)
            return 0

    def clear(self) -> None:
        """Delete every cached vector of this key (other models' vectors stay)."""
        if not self.enabled:
            return
        self._write(lambda conn: conn.execute("DELETE FROM embeddings WHERE model_key = ?", (self.key,)))

    def _write(self, statement) -> None:
        """Run ``statement(conn)`` in one ``BEGIN IMMEDIATE`` transaction; a failure turns the cache off."""
        try:
            conn = self._connect()
            try:
                conn.execute("BEGIN IMMEDIATE")
                statement(conn)
                conn.execute("COMMIT")
            finally:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                conn.close()
        except (sqlite3.Error, OSError) as exc:
            self._fail(exc)
