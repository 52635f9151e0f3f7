"""Which embedding space a set of vectors lives in: a model's name, its dimension and a fingerprint.

Production compares the vectors of its queries with the vectors stored in its
rows, so every stored vector must come from the model production embeds
queries with. A name alone does not say that (a local copy of a model has the
name of its directory; two publishers ship the same weights), so an export
also records a *fingerprint*: the vectors of a few fixed texts, rounded to
1e-4 so float noise across machines and thread counts does not change it,
hashed.
"""

from __future__ import annotations

import hashlib

import numpy as np

from thatchlab.core.errors import ThatchlabError

__all__ = ["FINGERPRINT_TEXTS", "fingerprint", "embedder_identity", "model_basename", "same_model_name"]

#: The texts whose vectors make an embedder's fingerprint (passages: no query prefix).
FINGERPRINT_TEXTS = (
    "the user prefers pytest over unittest",
    "run the linter before every commit",
    "deploys happen on Tuesday mornings",
    "a quiet sentence about nothing in particular",
)
#: The rounding step of the fingerprinted vector components.
FINGERPRINT_STEP = 1e-4


def fingerprint(vectors) -> str:
    """The fingerprint of the vectors of :data:`FINGERPRINT_TEXTS`: sha256 of the components rounded
    to :data:`FINGERPRINT_STEP` (and of the shape), first 16 hex digits.

    Parameters
    ----------
    vectors : array-like
        The vectors of :data:`FINGERPRINT_TEXTS`, one row per text.

    Returns
    -------
    str
        16 hex digits.

    See Also
    --------
    embedder_identity

    Examples
    --------
    >>> v = np.eye(4, 8, dtype=np.float32)
    >>> fingerprint(v) == fingerprint(v + 1e-7), fingerprint(v) == fingerprint(v + 1e-3)
    (True, False)
    """
    arr = np.asarray(vectors, dtype=np.float64)
    steps = np.rint(arr / FINGERPRINT_STEP).astype(np.int64)
    steps[steps == 0] = 0  # -0 and 0 are one step
    digest = hashlib.sha256(f"{steps.shape}".encode())
    digest.update(steps.tobytes())
    return digest.hexdigest()[:16]


def embedder_identity(embedder) -> dict:
    """``{"name", "dim", "fingerprint"}`` of an embedder; ``fingerprint`` is ``None`` when it cannot
    embed the fixed texts (a lookup table without them).

    Parameters
    ----------
    embedder : Embedder
        Any embedder.

    Returns
    -------
    dict
        ``name``, ``dim`` (None when unknown) and ``fingerprint`` (None when it cannot be made).

    See Also
    --------
    fingerprint

    Examples
    --------
    >>> from thatchlab.embed import LookupEmbedder
    >>> embedder_identity(LookupEmbedder({"a": [1.0, 0.0]}, name="toy"))
    {'name': 'toy', 'dim': 2, 'fingerprint': None}
    """
    name = getattr(embedder, "name", None)
    try:
        vecs = np.asarray(embedder.embed_passages(list(FINGERPRINT_TEXTS)))
    except (ThatchlabError, KeyError, LookupError):
        vecs = None
    if vecs is not None and vecs.ndim == 2 and vecs.shape[0] == len(FINGERPRINT_TEXTS):
        return {"name": name, "dim": int(vecs.shape[1]), "fingerprint": fingerprint(vecs)}
    try:
        dim = int(embedder.dim)
    except (ThatchlabError, AttributeError, TypeError, ValueError):
        dim = None
    return {"name": name, "dim": dim, "fingerprint": None}


def model_basename(name) -> str:
    """The part of a model name or path that names the weights: its last component, lower case.

    Parameters
    ----------
    name : str or os.PathLike
        A model name (``publisher/model``) or a path.

    Returns
    -------
    str
        The last component, lower case.

    See Also
    --------
    same_model_name

    Examples
    --------
    >>> model_basename("Xenova/bge-small-en-v1.5"), model_basename("/models/BGE-small-en-v1.5/")
    ('bge-small-en-v1.5', 'bge-small-en-v1.5')
    """
    return str(name).rstrip("/\\").replace("\\", "/").split("/")[-1].lower()


def same_model_name(a, b) -> bool:
    """Whether two model names name the same weights (any publisher or local directory of them).

    Parameters
    ----------
    a, b : str
        Model names or paths.

    Returns
    -------
    bool
        True when both are non-empty and their :func:`model_basename` agree.

    See Also
    --------
    model_basename

    Examples
    --------
    >>> same_model_name("BAAI/bge-small-en-v1.5", "Xenova/bge-small-en-v1.5")
    True
    >>> same_model_name("sentence-transformers/all-MiniLM-L6-v2", "Xenova/bge-small-en-v1.5")
    False
    """
    if not (isinstance(a, str) and a and isinstance(b, str) and b):
        return False
    return model_basename(a) == model_basename(b)
