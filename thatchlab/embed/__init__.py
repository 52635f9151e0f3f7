"""Text embeddings for the scoring engines: a protocol, a lookup table, real models.

Production thatch embeds prompts, matchers, predictions
and behaviors with one sentence model and compares them by cosine. thatchlab
models that with the :class:`Embedder` protocol: float32 rows of unit length,
queries (prompts, ``query`` contexts) optionally prefixed, passages (stored
texts) raw. :class:`LookupEmbedder` replays vectors read from a table or a
production store with no model at all; :class:`SentenceTransformerEmbedder`
runs a real model, with a persistent on-disk cache (:class:`EmbeddingCache`).

Thresholds tuned on one model do not transfer to another, so every embedder
has a ``name`` that results and exports record.
"""

from thatchlab.embed._cache import EmbeddingCache, default_cache_dir, weights_hash
from thatchlab.embed._identity import (
    FINGERPRINT_TEXTS,
    embedder_identity,
    fingerprint,
    model_basename,
    same_model_name,
)
from thatchlab.embed._lookup import Embedder, LookupEmbedder
from thatchlab.embed._models import (
    BGE_QUERY_PREFIX,
    DEFAULT_MODEL_NAME,
    CachedEmbedder,
    SentenceTransformerEmbedder,
    default_embedder,
)
from thatchlab.embed._vectors import as_blob, as_texts, check_vectors, from_blob, normalise_rows

__all__ = [
    "Embedder",
    "LookupEmbedder",
    "CachedEmbedder",
    "SentenceTransformerEmbedder",
    "default_embedder",
    "EmbeddingCache",
    "default_cache_dir",
    "weights_hash",
    "check_vectors",
    "normalise_rows",
    "as_blob",
    "from_blob",
    "as_texts",
    "BGE_QUERY_PREFIX",
    "DEFAULT_MODEL_NAME",
    "FINGERPRINT_TEXTS",
    "fingerprint",
    "embedder_identity",
    "model_basename",
    "same_model_name",
]
