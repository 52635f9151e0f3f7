"""Test helpers: the bundled ingest samples, their vectors, a quiet replay, and the verb runner the CLI tests share."""

import warnings
from pathlib import Path

import pytest

from thatchlab import logs
from thatchlab.cli import main
from thatchlab.embed import LookupEmbedder
from thatchlab.replay import run

DATA = Path(__file__).resolve().parents[1] / "data" / "ingest"


def sample_embedder() -> LookupEmbedder:
    """The vectors the samples were made with (``data/ingest/lookup.jsonl``)."""
    return LookupEmbedder(logs.read_table(DATA / "lookup.jsonl", json_columns=["embedding"]), name="sample-lookup")


def replay(log, engine, emb, **kw):
    """``replay.run`` without its time-order and silence warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return run(log, engine, embedder=emb, **kw)


def cli(argv, capsys):
    """``(exit code, stdout, stderr)`` of ``thatchlab ARGV``."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
        raise SystemExit(0)
    out = capsys.readouterr()
    return exc.value.code or 0, out.out, out.err
