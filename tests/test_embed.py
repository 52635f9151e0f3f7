"""Tests for thatchlab.embed: lookup tables, vector checks, BLOBs, the cache, the real model."""

from __future__ import annotations

import hashlib
import pickle
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from thatchlab.core.errors import EmbeddingError, EmbeddingLookupError, InputError
from thatchlab.embed import (
    DEFAULT_MODEL_NAME,
    CachedEmbedder,
    Embedder,
    EmbeddingCache,
    LookupEmbedder,
    SentenceTransformerEmbedder,
    as_blob,
    check_vectors,
    default_cache_dir,
    from_blob,
    normalise_rows,
    weights_hash,
)


def toy_vector(text: str, dim: int = 8) -> np.ndarray:
    """A deterministic unit vector for a text (same in every process)."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    v = np.random.default_rng(seed).standard_normal(dim)
    return (v / np.linalg.norm(v)).astype(np.float32)


class CountingEmbedder(CachedEmbedder):
    """A fake model: records every text it is asked to encode."""

    dim = 8

    def __init__(self, cache, key="toy|sha256:1", query_prefix=""):
        self.key = key
        super().__init__("toy", query_prefix=query_prefix, cache=cache)
        self.calls: list[list[str]] = []

    def _model_key(self):
        return self.key

    def _encode(self, texts):
        self.calls.append(list(texts))
        return np.vstack([toy_vector(t) * 3.0 for t in texts])

    @property
    def encoded(self) -> list[str]:
        return [t for call in self.calls for t in call]


@pytest.fixture
def lookup():
    return LookupEmbedder({"tea": [3.0, 4.0], "coffee": [0.0, 2.0], "void": [0.0, 0.0]},
                          queries={"tea": [1.0, 0.0]}, name="prod-model")


@pytest.fixture
def cache_dir(tmp_path):
    return tmp_path / "cache"


# -- LookupEmbedder ------------------------------------------------------------

def test_lookup_hit_normalises_and_keeps_zero(lookup):
    out = lookup.embed_passages(["tea", "coffee", "void", "tea"])
    assert out.dtype == np.float32 and out.shape == (4, 2)
    np.testing.assert_array_equal(out, np.array(
        [[0.6, 0.8], [0.0, 1.0], [0.0, 0.0], [0.6, 0.8]], dtype=np.float32))
    assert lookup.dim == 2 and lookup.name == "prod-model" and lookup.query_prefix == ""
    assert isinstance(lookup, Embedder)


def test_lookup_single_string_is_one_row(lookup):
    assert lookup.embed_passages("coffee").tolist() == [[0.0, 1.0]]
    assert lookup.embed_passages([]).shape == (0, 2)


def test_lookup_miss_names_the_text(lookup):
    with pytest.raises(EmbeddingLookupError, match="'green tea'") as info:
        lookup.embed_passages(["tea", "green tea"])
    assert info.value.text == "green tea"
    assert "1 of 2 texts missing" in str(info.value)


def test_lookup_queries_first_then_vectors(lookup):
    q = lookup.embed_queries(["tea", "coffee"])
    assert q.tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert lookup.embed_passages(["tea"]).tolist() == [[pytest.approx(0.6), pytest.approx(0.8)]]
    with pytest.raises(EmbeddingLookupError, match="query vector for text 'milk'"):
        lookup.embed_queries(["milk"])


def test_lookup_query_only_text_is_not_a_passage():
    emb = LookupEmbedder({"a": [1.0, 0.0]}, queries={"prompt": [0.0, 2.0]})
    assert emb.embed_queries(["prompt", "a"]).tolist() == [[0.0, 1.0], [1.0, 0.0]]
    with pytest.raises(EmbeddingLookupError):
        emb.embed_passages(["prompt"])
    assert emb.texts == ["a"] and emb.query_texts == ["prompt"] and len(emb) == 1


def test_lookup_output_is_a_copy(lookup):
    out = lookup.embed_passages(["tea"])
    out[:] = 7.0
    assert lookup.embed_passages(["tea"])[0, 0] == pytest.approx(0.6)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_lookup_rejects_non_finite_naming_text(bad):
    with pytest.raises(EmbeddingError, match="'b'"):
        LookupEmbedder({"a": [1.0, 0.0], "b": [bad, 1.0]})


def test_lookup_rejects_mixed_dimensions():
    with pytest.raises(EmbeddingError, match="text 'b': expected dimension 2, got 3"):
        LookupEmbedder({"a": [1.0, 0.0], "b": [1.0, 0.0, 0.0]})
    with pytest.raises(EmbeddingError, match="query vector for text 'q'"):
        LookupEmbedder({"a": [1.0, 0.0]}, queries={"q": [1.0, 0.0, 0.0]})


def test_lookup_rejects_bad_inputs():
    with pytest.raises(EmbeddingError, match="no vectors"):
        LookupEmbedder({})
    assert LookupEmbedder({}, dim=4).embed_passages([]).shape == (0, 4)
    with pytest.raises(InputError):
        LookupEmbedder([[1.0, 0.0]])
    with pytest.raises(InputError, match="str texts"):
        LookupEmbedder({1: [1.0, 0.0]})
    with pytest.raises(EmbeddingError, match="'a'"):
        LookupEmbedder({"a": "not a vector"})
    with pytest.raises(InputError, match=r"texts\[1\]"):
        LookupEmbedder({"a": [1.0]}).embed_passages(["a", None])


def test_lookup_duplicates_must_agree():
    frame = pd.DataFrame({"text": ["a", "a"], "embedding": [[1.0, 0.0], [2.0, 0.0]]})
    assert LookupEmbedder(frame).embed_passages("a").tolist() == [[1.0, 0.0]]
    frame.loc[1, "embedding"] = [0.0, 1.0]
    with pytest.raises(EmbeddingError, match="'a' appears twice"):
        LookupEmbedder(frame)


def test_lookup_from_frame_with_blobs_and_series():
    frame = pd.DataFrame({"text": ["x", "y"],
                          "embedding": [as_blob([0.0, 5.0]), np.array([1.0, 0.0])]})
    before = frame.copy()
    emb = LookupEmbedder(frame, name="Xenova/bge-small-en-v1.5")
    assert emb.embed_passages(["x", "y"]).tolist() == [[0.0, 1.0], [1.0, 0.0]]
    pd.testing.assert_frame_equal(frame, before)
    series = pd.Series({"x": [0.0, 5.0], "y": [2.0, 0.0]})
    assert LookupEmbedder(series).embed_passages("y").tolist() == [[1.0, 0.0]]
    with pytest.raises(InputError, match="'embedding'"):
        LookupEmbedder(frame.rename(columns={"embedding": "vec"}))


# -- vectors, normalisation, BLOBs --------------------------------------------

def test_check_vectors_errors_name_what():
    assert check_vectors([[1, 2]], dim=2).dtype == np.float32
    with pytest.raises(EmbeddingError, match=r"matcher embedding: expected dimension 3, got 2"):
        check_vectors([[1.0, 2.0]], dim=3, what="matcher embedding")
    with pytest.raises(EmbeddingError, match=r"row 1, position 0"):
        check_vectors([[1.0, 2.0], [np.inf, 0.0]])
    with pytest.raises(EmbeddingError, match="shape"):
        check_vectors(np.zeros((2, 2, 2)))
    with pytest.raises(EmbeddingError):
        check_vectors([[1.0, 2.0], [1.0]])
    with pytest.raises(EmbeddingError, match="non-empty"):
        check_vectors([])
    with pytest.raises(EmbeddingError):
        check_vectors(["a", "b"])


def test_check_vectors_does_not_modify_input():
    a = np.array([[1.0, 2.0]])
    out = check_vectors(a)
    out[0, 0] = 9.0
    assert a[0, 0] == 1.0


def test_blob_exact_bytes():
    assert as_blob([1.0, -2.0, 0.5]) == bytes.fromhex("0000803f000000c00000003f")
    assert from_blob(bytes.fromhex("0000803f000000c00000003f")).tolist() == [1.0, -2.0, 0.5]
    assert from_blob(memoryview(as_blob([3.0]))).dtype == np.float32
    with pytest.raises(EmbeddingError, match="multiple of 4"):
        from_blob(b"\x00\x00\x80")
    with pytest.raises(EmbeddingError, match="NULL"):
        from_blob(None)
    with pytest.raises(EmbeddingError, match="one vector"):
        as_blob([[1.0], [2.0]])
    with pytest.raises(EmbeddingError):
        as_blob([float("nan")])


@settings(max_examples=50, deadline=None)
@given(arrays(np.float32, st.integers(1, 64),
              elements=st.floats(-1e6, 1e6, width=32, allow_nan=False)))
def test_blob_round_trip_is_exact(vec):
    blob = as_blob(vec)
    assert len(blob) == 4 * vec.size
    back = from_blob(blob)
    assert back.tobytes() == vec.astype("<f4").tobytes()
    assert as_blob(back) == blob


@settings(max_examples=50, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 16)),
              elements=st.floats(-1e3, 1e3, allow_nan=False)))
def test_normalise_rows_unit_or_zero_and_same_direction(mat):
    out = normalise_rows(mat)
    norms = np.linalg.norm(out.astype(np.float64), axis=1)
    in_norms = np.linalg.norm(mat, axis=1)
    assert out.dtype == np.float32
    assert np.all((np.abs(norms - 1.0) < 1e-5) | ((in_norms == 0) & (norms == 0)))
    big = in_norms > 1e-3
    cos = np.sum(out[big] * mat[big], axis=1) / in_norms[big]
    assert np.all(cos > 1 - 1e-5)


# -- the cache -----------------------------------------------------------------

def test_second_call_computes_nothing(cache_dir):
    emb = CountingEmbedder(cache_dir)
    texts = ["alpha", "beta", "alpha", "gamma"]
    first = emb.embed_passages(texts)
    assert emb.calls == [["alpha", "beta", "gamma"]]
    second = emb.embed_passages(texts)
    assert emb.calls == [["alpha", "beta", "gamma"]]
    np.testing.assert_array_equal(first, second)
    np.testing.assert_allclose(first[0], toy_vector("alpha"), atol=1e-7)
    again = CountingEmbedder(cache_dir)          # a fresh object, same machine cache
    again.embed_passages(["gamma", "delta"])
    assert again.encoded == ["delta"]
    assert again.cache.count() == 4 and again.cache.count("query") == 0


def test_queries_use_prefix_and_their_own_kind(cache_dir):
    emb = CountingEmbedder(cache_dir, query_prefix="Q: ")
    q = emb.embed_queries(["alpha"])
    p = emb.embed_passages(["alpha"])
    assert emb.encoded == ["Q: alpha", "alpha"]
    np.testing.assert_allclose(q[0], toy_vector("Q: alpha"), atol=1e-7)
    np.testing.assert_allclose(p[0], toy_vector("alpha"), atol=1e-7)
    assert emb.cache.count("query") == 1 and emb.cache.count("passage") == 1


def test_cache_off_computes_every_time(cache_dir):
    emb = CountingEmbedder(cache=False)
    emb.embed_passages(["a"])
    emb.embed_passages(["a"])
    assert emb.encoded == ["a", "a"] and emb.cache is None
    assert not cache_dir.exists()


def test_changed_weights_hash_is_a_miss(cache_dir):
    CountingEmbedder(cache_dir, key="toy|sha256:1").embed_passages(["a"])
    other = CountingEmbedder(cache_dir, key="toy|sha256:2")
    other.embed_passages(["a"])
    assert other.encoded == ["a"]


def test_corrupt_cache_file_warns_and_still_embeds(cache_dir):
    cache_dir.mkdir()
    (cache_dir / EmbeddingCache.FILENAME).write_bytes(b"this is not a sqlite file" * 100)
    emb = CountingEmbedder(cache_dir)
    with pytest.warns(RuntimeWarning, match="unusable"):
        out = emb.embed_passages(["a", "b"])
    np.testing.assert_allclose(out[1], toy_vector("b"), atol=1e-7)
    assert emb.cache.enabled is False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        emb.embed_passages(["a"])                 # no second warning, just computes
    assert emb.encoded == ["a", "b", "a"]


def test_cache_api(tmp_path):
    cache = EmbeddingCache(tmp_path / "vectors.db", key="k")
    assert cache.file == tmp_path / "vectors.db"
    cache.put_many("passage", ["x", "y"], np.array([[1.0, 0.0], [0.0, 1.0]]))
    cache.put_many("passage", ["x"], np.array([[0.5, 0.5]]))     # first value is kept
    got = cache.get_many("passage", ["x", "y", "z"])
    assert sorted(got) == ["x", "y"] and got["x"].tolist() == [1.0, 0.0]
    assert cache.get_many("query", ["x"]) == {}
    with pytest.raises(InputError, match="kind"):
        cache.get_many("title", ["x"])
    with pytest.raises(InputError, match="2 vectors"):
        cache.put_many("passage", ["a", "b"], np.zeros((1, 2)))
    with pytest.raises(EmbeddingError):
        cache.put_many("passage", ["a"], np.array([[np.nan, 0.0]]))
    with pytest.raises(InputError):
        EmbeddingCache(tmp_path, key="")
    cache.clear()
    assert cache.count() == 0
    assert pickle.loads(pickle.dumps(cache)).get_many("passage", ["x"]) == {}


def test_default_cache_dir_honours_env(monkeypatch, tmp_path):
    monkeypatch.setenv("THATCHLAB_CACHE_DIR", str(tmp_path))
    assert default_cache_dir() == tmp_path
    monkeypatch.delenv("THATCHLAB_CACHE_DIR")
    assert default_cache_dir().parts[-3:] == (".cache", "thatchlab", "embeddings")


WRITER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {tests!r})
    from test_embed import CountingEmbedder
    start, stop = int(sys.argv[1]), int(sys.argv[2])
    emb = CountingEmbedder({cache!r})
    texts = [f"text {{i}}" for i in range(start, stop)]
    for i in range(0, len(texts), 20):          # many small transactions interleave
        emb.embed_passages(texts[i:i + 20])
        emb.embed_queries(texts[i:i + 20])
    print(len(emb.encoded))
""")


def test_two_processes_write_one_cache(cache_dir, tmp_path, repo_root):
    script = tmp_path / "writer.py"
    script.write_text(WRITER.format(tests=str(repo_root / "tests"), cache=str(cache_dir)))
    procs = [subprocess.Popen([sys.executable, str(script), a, b], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
             for a, b in (("0", "300"), ("150", "450"))]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in outs]
    reader = EmbeddingCache(cache_dir, key="toy|sha256:1")
    texts = [f"text {i}" for i in range(450)]
    for kind in ("passage", "query"):
        got = reader.get_many(kind, texts)
        assert len(got) == 450
        for t in texts:
            np.testing.assert_allclose(got[t], toy_vector(t), atol=1e-7)
    assert reader.count() == 900
    # each process encoded its 600 inputs at most once; the overlap may be shared
    assert all(600 - 300 <= int(out) <= 600 for out, _ in outs)


def test_weights_hash_follows_bytes(tmp_path):
    model = tmp_path / "m"
    (model / "1_Pooling").mkdir(parents=True)
    (model / "model.safetensors").write_bytes(b"\x00" * 64)
    (model / "1_Pooling" / "config.json").write_text("{}")
    h1 = weights_hash(model)
    assert h1.startswith("sha256:") and len(h1) == 71 and weights_hash(model) == h1
    (model / "README.md").write_text("a model card does not change the vectors")
    assert weights_hash(model) == h1
    (model / "model.safetensors").write_bytes(b"\x01" + b"\x00" * 63)
    assert weights_hash(model) != h1
    with pytest.raises(InputError, match="does not exist"):
        weights_hash(tmp_path / "missing")


def test_model_key_holds_name_pooling_and_weights(tmp_path):
    dirs = []
    for i in range(2):
        d = tmp_path / f"copy{i}" / "mini"
        d.mkdir(parents=True)
        (d / "model.safetensors").write_bytes(bytes([i]) * 16)
        dirs.append(d)
    a = SentenceTransformerEmbedder(dirs[0], cache=tmp_path / "c")
    b = SentenceTransformerEmbedder(dirs[1], cache=tmp_path / "c")
    c = SentenceTransformerEmbedder(dirs[0], pooling="mean", cache=tmp_path / "c")
    assert a.name == b.name == "mini"
    assert a.cache.key != b.cache.key and a.cache.key != c.cache.key
    assert a.cache.key.startswith("mini|pooling=model|sha256:")
    assert not a.loaded


def test_sentence_transformer_bad_arguments(tmp_path):
    with pytest.raises(InputError, match="pooling"):
        SentenceTransformerEmbedder("x", pooling="sum")
    with pytest.raises(InputError, match="batch_size"):
        SentenceTransformerEmbedder("x", batch_size=0)
    broken = SentenceTransformerEmbedder(tmp_path / "empty", cache=False)
    with pytest.raises(EmbeddingError, match="could not load"):
        broken.embed_passages(["a"])


def test_import_does_not_load_torch():
    code = ("import sys, thatchlab.embed as e; e.default_embedder(); "
            "print('torch' in sys.modules, 'sentence_transformers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


# -- the real model --------------------------------------------------------------

def test_default_embedder_is_memoised(real_embedder):
    from thatchlab.embed import default_embedder

    assert default_embedder() is real_embedder
    assert real_embedder.name == DEFAULT_MODEL_NAME and real_embedder.query_prefix == ""
    assert isinstance(real_embedder, Embedder)


def test_real_model_vectors(real_embedder):
    texts = ["I like green tea in the morning", "In the morning I enjoy drinking green tea",
             "The quarterly tax filing is due next week"]
    q = real_embedder.embed_queries(texts)
    p = real_embedder.embed_passages(texts)
    assert real_embedder.dim == 384 and q.shape == (3, 384) and q.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(q, p, atol=1e-5)          # MiniLM has no query prefix
    sims = p @ p.T
    assert sims[0, 1] > 0.8 > 0.3 > sims[0, 2]


def test_real_model_pooling_can_be_replaced(real_embedder, tmp_path):
    from thatchlab.embed._models import _config_dim

    path = real_embedder.name_or_path
    cls = SentenceTransformerEmbedder(path, pooling="cls", cache=tmp_path, batch_size=2)
    assert cls.dim == 384 and not cls.loaded            # read from the config files
    assert _config_dim(cls._local, None) == 384
    texts = ["I like green tea", "Deploy on Fridays"]
    v = cls.embed_passages(texts)
    assert cls.loaded
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert np.abs(v - real_embedder.embed_passages(texts)).max() > 0.05
    pickled = pickle.loads(pickle.dumps(cls))
    assert not pickled.loaded and pickled.cache.key == cls.cache.key
    np.testing.assert_array_equal(pickled.embed_passages(texts), v)   # served by the cache
    assert not pickled.loaded


def test_memory_memo_is_bounded_and_backed_by_disk(cache_dir):
    emb = CountingEmbedder(cache_dir)
    emb.memo_size = 2
    emb.embed_passages(["a", "b", "c"])
    assert len(emb._memo) == 2 and ("passage", "a") not in emb._memo
    out = emb.embed_passages(["a", "c"])                 # "a" from disk, "c" from memory
    assert emb.encoded == ["a", "b", "c"]
    np.testing.assert_allclose(out[0], toy_vector("a"), atol=1e-7)


def test_config_dim_follows_modules(tmp_path):
    import json

    from thatchlab.embed._models import _config_dim

    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "2_Dense").mkdir()
    modules = [{"path": "", "type": "sentence_transformers.models.Transformer"},
               {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
    (tmp_path / "modules.json").write_text(json.dumps(modules))
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps(
        {"word_embedding_dimension": 384, "pooling_mode_mean_tokens": True,
         "pooling_mode_max_tokens": True, "pooling_mode_cls_token": False}))
    assert _config_dim(tmp_path, None) == 768 and _config_dim(tmp_path, "cls") == 384
    modules.append({"path": "2_Dense", "type": "sentence_transformers.models.Dense"})
    (tmp_path / "modules.json").write_text(json.dumps(modules))
    (tmp_path / "2_Dense" / "config.json").write_text(json.dumps({"out_features": 128}))
    assert _config_dim(tmp_path, None) == 128
    modules.append({"path": "", "type": "custom.Projector"})
    (tmp_path / "modules.json").write_text(json.dumps(modules))
    assert _config_dim(tmp_path, None) is None
    assert _config_dim(tmp_path / "nowhere", None) is None


def test_real_model_query_prefix_only_on_queries(real_embedder):
    from thatchlab.embed import BGE_QUERY_PREFIX

    emb = SentenceTransformerEmbedder(real_embedder.name_or_path, query_prefix=BGE_QUERY_PREFIX,
                                      name="minilm-with-prefix", cache=False)
    text = ["I like green tea"]
    np.testing.assert_allclose(emb.embed_passages(text), real_embedder.embed_passages(text),
                               atol=1e-5)
    np.testing.assert_allclose(emb.embed_queries(text),
                               real_embedder.embed_passages([BGE_QUERY_PREFIX + text[0]]), atol=1e-5)
    assert np.abs(emb.embed_queries(text) - emb.embed_passages(text)).max() > 0.01


def test_a_huge_prompt_is_clipped_before_tokenizing(real_embedder, monkeypatch):
    """Issue 36 point 7: a prompt far longer than the model reads is cut before the tokenizer sees it
    (a 50 MB prompt took 6.5 GB), and the vector is the one of the tokens the model reads."""
    from thatchlab.embed._models import clip_for_tokens

    phrase = "please add tests for the parser "
    assert real_embedder.model.max_seq_length == 256
    normal = phrase * 400  # 12,800 characters: under the bound, unchanged
    assert clip_for_tokens(normal, 256) is normal
    huge = phrase * 60_000  # 1.9 MB
    clipped = clip_for_tokens(huge, 256)
    assert huge.startswith(clipped) and len(clipped) == len(phrase) * 42 + len("please add tests for the")  # 257 words
    seen = []
    encode = real_embedder.model.encode  # tokenizes what it is given
    monkeypatch.setattr(real_embedder.model, "encode",
                        lambda texts, **kw: seen.append(max(map(len, texts))) or encode(texts, **kw))
    huge += "a text no cache holds " + str(id(seen))  # past the cut: changes the cache key, not the vector
    big, small = real_embedder.embed_queries([huge, phrase * 60 + str(id(seen))])
    assert max(seen) < 2000  # the tokenizer saw kilobytes, not the 1.9 MB
    np.testing.assert_allclose(big, small, atol=1e-6)  # both read as their first 256 tokens
