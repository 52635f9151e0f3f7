"""The pyarrow path of the JSON-lines readers gives what ``json.loads`` line by line gives, or steps aside.

Each file below is one pyarrow would parse otherwise than Python's ``json``
(or one it parses the same way): the interaction log read through
``read_interaction_log`` must equal, or fail with the same message as,
``validate_interaction_log`` of the line-by-line frame, sorted by time.
"""

import json
import random
import warnings

import numpy as np
import pandas as pd
import pytest

from thatchlab.core.errors import ThatchlabError
from thatchlab.logs import (
    _core,
    _jsonl,
    read_interaction_log,
    sort_by_time,
    validate_interaction_log,
)

M = '{"ts":"2026-01-01T00:00:00Z","session":"s","kind":"message","text":"hi"}'
U = ('{"ts":"2026-01-01T00:00:01Z","session":"s","kind":"prediction_update","matcher":"m",'
     '"statement":"st","signal":"confirm"}')


def _with(extra: str, line: str = M) -> str:
    return line[:-1] + "," + extra + "}"


CASES = {
    "plain": [M, U],
    "crlf": [M + "\r", U + "\r"],
    "bom": ["\ufeff" + M, U],
    "blank lines": [M, "", "  ", U],
    "spaces around": [" " + M + " ", U],
    "two objects on a line": [M + " " + U],
    "one object over two lines": ['{"ts":"2026-01-01T00:00:00Z",', '"session":"s","kind":"message","text":"hi"}'],
    "a null line": [M, "null"],
    "an object then null": [M + " null"],
    "a key twice": ['{"ts":"2026-01-01T00:00:00Z","session":"a","session":"b","kind":"message","text":"x"}'],
    "Inf": [_with('"propensity":Inf')],
    "-NaN": [_with('"propensity":-NaN')],
    "NaN": [_with('"propensity":NaN')],
    "Infinity in a vector": [_with('"embedding":[Infinity]')],
    "-0 in a vector": [_with('"embedding":[-0, 1.5]')],
    "-0.0 in a vector": [_with('"embedding":[-0.0, 1.5]')],
    "ints in a vector": [_with('"embedding":[1, 16777217, 9007199254740993]')],
    "1e400": [_with('"propensity":1e400')],
    "extra ints": [_with('"n":1'), _with('"n":2', U)],
    "extra int beyond int64": [_with('"n":9223372036854775808'), _with('"n":2', U)],
    "extra text missing on a row": [_with('"x":"a"'), U],
    "extra text null on a row": [_with('"x":"a"'), _with('"x":null', U)],
    "extra list": [_with('"x":[1,2]'), _with('"x":[3]', U)],
    "extra object": [_with('"x":{"a":1}'), _with('"x":{"b":2}', U)],
    "extra null only": [_with('"x":null'), _with('"x":null', U)],
    "logged columns out of order": [_with('"skip_reason":null,"zz":"q","record_id":"r1"'),
                                    _with('"skip_reason":null,"zz":"q","record_id":"r2"', U)],
    "not in time order": [U, M],
}


def _reference(path):
    """``validate_interaction_log`` of the line-by-line frame, in time order (or its error message)."""
    try:
        frame = _core._numbered(_core._read_jsonl_lines(path, str(path)), path, "jsonl")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return sort_by_time(validate_interaction_log(frame, source=str(path)), str(path))
    except ThatchlabError as exc:
        return str(exc)


def _fast(path):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return read_interaction_log(path)
    except ThatchlabError as exc:
        return str(exc)


def _assert_same(got, want):
    if isinstance(want, str) or isinstance(got, str):
        assert got == want
        return
    pd.testing.assert_frame_equal(got, want)
    for col in got.columns:  # cell by cell too: types, and floats to the bit (-0.0 is not 0.0)
        if got[col].dtype == object:
            for a, b in zip(got[col], want[col]):
                assert type(a) is type(b), (col, a, b)
                if isinstance(a, np.ndarray):
                    assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), (col, a, b)
                else:
                    assert repr(a) == repr(b), (col, a, b)


@pytest.mark.parametrize("name", list(CASES))
def test_fast_read_is_the_line_by_line_read(tmp_path, name):
    path = tmp_path / "log.jsonl"
    path.write_bytes(("\n".join(CASES[name]) + "\n").encode())
    _assert_same(_fast(path), _reference(path))


def test_bytes_that_are_not_utf8_are_named_by_line(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(M.encode() + b"\n" + M.encode()[:-3] + b"\xff\"}\n")
    got = _fast(path)
    assert got == _reference(path) and "data row 1 (line 2): not UTF-8 text" in got


def test_a_lone_carriage_return_does_not_split_a_line(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes((M + "\r" + U + "\n").encode())
    assert "not valid JSON" in _fast(path) and _fast(path) == _reference(path)


def test_a_first_line_longer_than_the_sampled_head(tmp_path):
    rows = [json.loads(M) | {"text": "x" * 70_000, "zz": "a"}, json.loads(U) | {"zz": "b", "record_id": "r"}]
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    _assert_same(_fast(path), _reference(path))
    assert list(_fast(path).columns)[-2:] == ["zz", "record_id"]


def _object_lines_reference(data: bytes):
    if data.startswith(_jsonl.BOM):
        data = data[len(_jsonl.BOM):]
    if not data or data[:1] != b"{" or data[-1:] not in (b"\n", b"}"):
        return None
    pieces = data.split(b"\n")
    if pieces[-1] == b"":
        pieces.pop()
    for line in pieces:
        if not line.startswith(b"{") or not (line.endswith(b"}") or (line.endswith(b"}\r") and len(line) > 2)):
            return None
    if not data.endswith(b"\n") and pieces[-1].endswith(b"\r"):
        return None
    return len(pieces)


@pytest.mark.parametrize("block", [1, 2, 3, 7, 1 << 18])
def test_object_lines_counts_lines_that_are_one_object_each(monkeypatch, block):
    monkeypatch.setattr(_jsonl, "_BLOCK", block)
    rng = random.Random(block)
    alphabet = [b"{", b"}", b"\n", b"\r", b"x", _jsonl.BOM, b"{}", b"}\n{", b"}\r\n{"]
    for _ in range(3000):
        data = b"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10)))
        data = (b"{" if rng.random() < 0.5 else b"") + data + (b"}" if rng.random() < 0.5 else b"")
        data += b"\n" if rng.random() < 0.3 else b""
        got = _jsonl.object_lines(np.frombuffer(data, dtype=np.uint8)) if data else None
        assert got == _object_lines_reference(data), data
