"""Deterministic row ids: the uuid5 names thatchlab gives the rows it writes.

An id is derived from the row's table, store and text and from how many rows
with the same key came before it, so a replay of the same writes names its
rows the same way every time. Provenance rows use :func:`prov_text` as their text.
"""

from __future__ import annotations

import hashlib
import uuid

__all__ = ["ID_NAMESPACE", "deterministic_id", "prov_text"]

#: The fixed namespace of every deterministic id thatchlab derives.
ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_DNS, "thatchlab.ids")
_NAMESPACE_BYTES = ID_NAMESPACE.bytes


def deterministic_id(table: str, store: str, text: str, n: int) -> str:
    """uuid5 over :data:`ID_NAMESPACE` and ``table␟store␟text␟n``.

    ``n`` counts earlier rows with the same (table, store, text), deleted
    ones included, so replays reproduce the same ids.

    Parameters
    ----------
    table : str
        The production table name.
    store : str
        The row's store.
    text : str
        The row's text.
    n : int
        How many rows with the same key came before.

    Returns
    -------
    str
        The id, in uuid text form.

    Examples
    --------
    >>> deterministic_id("predictions", "project", "use tabs", 0) == deterministic_id(
    ...     "predictions", "project", "use tabs", 0)
    True
    """
    # uuid5 written out (RFC 4122: SHA-1 of namespace + name, version 5, variant bits):
    # the same text as str(uuid.uuid5(...)) without building a UUID object
    digest = bytearray(hashlib.sha1(_NAMESPACE_BYTES + "\x1f".join([table, store, text, str(n)]).encode()).digest())
    digest[6] = (digest[6] & 0x0F) | 0x50
    digest[8] = (digest[8] & 0x3F) | 0x80
    h = digest[:16].hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def prov_text(item_id: str, signal: str, detail) -> str:
    """The text a provenance row's id is derived from."""
    return f"{item_id}\x1f{signal}\x1f{detail if detail is not None else ''}"
