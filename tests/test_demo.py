"""The demo runs through both engines with the real model and exports a readable store."""

from thatchlab.cli.demo import run_demo
from thatchlab.store import import_sqlite


def test_demo_with_the_real_model(tmp_path, real_embedder):
    res = run_demo(tmp_path / "demo", embedder=real_embedder)
    regimes = {prompt: (pn.regime, bn.regime) for prompt, pn, bn in res.nudges}
    assert regimes["ok"] == ("skipped", "skipped")
    assert regimes["write the commit message for these changes"][0] == "strong"
    assert res.replies[0] == '[created + confirm] "use pytest fixtures instead of unittest classes" confidence=0.58 (1/0)'
    text = res.text()
    assert "[thatch] User decision model" in text and "[thatch] Situational behaviors" in text
    assert "- [0.72 conf, 4 tests] When writing a commit message: you tend to keep the subject line under fifty characters" in text
    back = import_sqlite(res.export_path, embedder=real_embedder)
    assert len(back.prediction.tables["items"]) == 3
    assert back.meta["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    # running it again replaces its own earlier output
    again = run_demo(tmp_path / "demo", embedder=real_embedder)
    assert again.export_path == res.export_path
