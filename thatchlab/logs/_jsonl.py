"""When pyarrow's parse of a JSON-lines file is the frame ``json.loads`` gives line by line.

pyarrow reads a JSON-lines file as one stream of JSON values: it takes two
objects on one line, an object spread over lines, a bare ``null`` (a row of
nulls), ``Inf``, ``-Inf`` and ``-NaN``, and does not check that text is UTF-8;
``json.loads`` on each line refuses all of these. It also stores some values
another way than pandas stores Python's: a ``-0`` integer in a float column
as ``-0.0``, integers beyond int64 as floats, nested values as arrays and
structs, and one null for a key spelled ``null`` or left out (pandas keeps
``None`` and ``NaN`` apart in object columns). The checks here find every
such file cheaply, so that the reader can read it line by line instead:

* :func:`object_lines` -- every line is ``{`` ... ``}`` (``\\r\\n`` line ends
  and a leading BOM allowed), so with as many rows as lines each line held
  exactly one object;
* :func:`is_utf8` -- the bytes are UTF-8 (what Python's decoder accepts);
* :func:`same_as_json` -- the parsed columns hold nothing stored otherwise.
"""

from __future__ import annotations

import json
from typing import Mapping

import numpy as np

__all__ = ["BOM", "object_lines", "leading_keys", "is_utf8", "same_as_json"]

BOM = b"\xef\xbb\xbf"
_NL, _CR, _OPEN, _CLOSE = ord("\n"), ord("\r"), ord("{"), ord("}")
_BLOCK = 1 << 18  # bytes looked at per step: the masks stay in cache


def object_lines(buf: np.ndarray) -> int | None:
    """The number of lines of the file whose bytes are ``buf`` (``uint8``) when each line is ``{`` ...
    ``}`` (after a leading BOM, before an optional ``\\r``), else None.

    A line end (outside strings, which hold no raw line break) follows a
    closing brace and precedes an opening one, and ``} {`` never occurs
    inside a JSON value: so each line of a file pyarrow parses holds whole
    values, and a file with as many rows as lines holds one per line.
    Blank lines, spaces around an object and a last line ending in ``\\r``
    give None too (the line-by-line reader handles them).
    """
    start = len(BOM) if _has_bom(buf) else 0
    n = len(buf)
    if n <= start or buf[start] != _OPEN or buf[-1] not in (_NL, _CLOSE):
        return None
    if buf[-1] == _NL and not _ends_object(buf, n - 1, start):
        return None
    inner = 0  # line ends with a line after them
    ends, good = np.empty(_BLOCK, dtype=bool), np.empty(_BLOCK, dtype=bool)
    for at in range(start + 1, n - 1, _BLOCK):  # line ends at at .. at + m - 1, each with a byte either side
        m = min(_BLOCK, n - 1 - at)
        e, g = ends[:m], good[:m]
        np.equal(buf[at:at + m], _NL, out=e)
        k = int(np.count_nonzero(e))
        if not k:
            continue
        inner += k
        np.equal(buf[at - 1:at - 1 + m], _CLOSE, out=g)
        g &= e
        np.equal(buf[at + 1:at + 1 + m], _OPEN, out=e)
        g &= e
        if int(np.count_nonzero(g)) != k and not _crlf_block(buf, at, m):
            return None
    return inner + 1


def _ends_object(buf: np.ndarray, end: int, start: int) -> bool:
    """True when the line end at ``end`` follows ``}`` or ``}\\r`` (after the file's first byte ``start``)."""
    i = end - 1
    if i > start and buf[i] == _CR:
        i -= 1
    return i > start and buf[i] == _CLOSE


def _crlf_block(buf: np.ndarray, at: int, m: int) -> bool:
    """True when each line end in ``buf[at:at + m]`` (not the file's last byte) follows ``}`` or ``}\\r``
    and precedes ``{``: the slow look at a block :func:`object_lines` did not pass at once."""
    ends = np.flatnonzero(buf[at:at + m] == _NL) + at
    before = buf[ends - 1]
    cr = before == _CR  # then ends - 2 >= the first byte, a "{"
    if cr.any() and (buf[ends[cr] - 2] != _CLOSE).any():
        return False
    return not ((before != _CLOSE) & ~cr).any() and not (buf[ends + 1] != _OPEN).any()


def _has_bom(buf: np.ndarray) -> bool:
    return buf[:len(BOM)].tobytes() == BOM


def leading_keys(buf: np.ndarray, limit: int = 1 << 16) -> list | None:
    """The keys of the objects on the first lines of the file whose bytes are ``buf`` (its first
    ``limit`` bytes, and at least its first line), in order of first appearance; None when one of
    those lines is not a JSON object."""
    head = buf[:limit].tobytes()
    if len(buf) > limit:  # whole lines only; the first one whatever its length
        end = head.rfind(b"\n")
        if end < 0:
            more = np.flatnonzero(buf[limit:] == _NL)
            end = limit + int(more[0]) if len(more) else len(buf)
            head = buf[:end].tobytes()
        head = head[:end]
    pieces = head.removeprefix(BOM).split(b"\n")
    if pieces[-1] == b"":  # after the last line end
        pieces.pop()
    keys: dict = {}
    try:
        for line in pieces:
            obj = json.loads(line)
            if not isinstance(obj, dict):
                return None
            keys.update(dict.fromkeys(obj))
    except (ValueError, RecursionError):
        return None
    return list(keys)


def is_utf8(buf: np.ndarray) -> bool:
    """True when the bytes ``buf`` are UTF-8 text (pyarrow's parser does not check; Arrow's check agrees
    with Python's decoder on overlong forms, surrogates and code points past U+10FFFF)."""
    if not len(buf) or int(buf.max()) < 0x80:  # ASCII
        return True
    import pyarrow as pa  # heavy: pandas 2 does not load Arrow; only Arrow paths need it

    offsets = pa.py_buffer(np.array([0, len(buf)], dtype=np.int64))
    try:
        pa.Array.from_buffers(pa.large_binary(), 1, [None, offsets, pa.py_buffer(buf)]).cast(pa.large_string())
    except (pa.ArrowInvalid, UnicodeError):
        return False
    return True


def same_as_json(table, kinds: Mapping[str, str]) -> bool:
    """True when converting pyarrow's ``table`` gives the values ``json.loads`` gives line by line.

    Float values (``kinds`` ``number`` and ``numbers`` columns, inferred float
    columns) must be finite and not ``-0.0`` (``NaN``, ``Infinity``, ``-0`` and
    the spellings Python refuses all parse to those), inferred floats below
    2**63 in size (Python keeps larger integers exact); the columns
    ``kinds`` does not name must be integers, floats, or booleans and text
    without nulls (a null there is ``None`` or, for a missing key, ``NaN``).
    """
    import pyarrow as pa  # heavy: pandas 2 does not load Arrow; only Arrow paths need it
    import pyarrow.compute as pc  # heavy: pandas 2 does not load Arrow; only Arrow paths need it

    for name in table.column_names:
        col, kind = table.column(name), kinds.get(name)
        typ = col.type
        if kind is None:
            if pa.types.is_integer(typ):
                continue
            if pa.types.is_floating(typ):
                if not _plain_floats(col, pc, below=2.0 ** 63):
                    return False
                continue
            if (pa.types.is_boolean(typ) or pa.types.is_string(typ)) and col.null_count == 0:
                continue
            return False
        if kind == "numbers" and pa.types.is_list(typ):
            col = pc.list_flatten(col)
            typ = col.type
        if pa.types.is_floating(typ) and not _plain_floats(col, pc):
            return False
    return True


def _plain_floats(col, pc, below: float | None = None) -> bool:
    """No NaN, infinity or negative zero in ``col`` (nulls aside), and every value smaller than ``below``
    (looked at chunk by chunk: an embedding column flattens to many values)."""
    for chunk in col.chunks:
        if chunk.null_count == len(chunk):
            continue
        values = (chunk if chunk.null_count == 0 else pc.drop_null(chunk)).to_numpy(zero_copy_only=False)
        if not np.isfinite(values).all() or np.signbit(values[values == 0]).any():
            return False
        if below is not None and (np.abs(values) >= below).any():
            return False
    return True
