"""The command line: every verb has --help, bad input gives one clear line and a non-zero exit."""

import subprocess
import sys

import pytest

from thatchlab.cli import main


def run(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
        raise SystemExit(0)
    out = capsys.readouterr()
    return exc.value.code or 0, out.out, out.err


def test_demo_import_merge_round_trip(tmp_path, capsys, real_embedder):
    code, out, _ = run(["demo", "--out", str(tmp_path / "demo")], capsys)
    assert code == 0
    assert "[thatch] User decision model" in out and f"Exported store: {tmp_path / 'demo' / 'thatch.db'}" in out
    code, out, _ = run(["import", str(tmp_path / "demo" / "thatch.db"), "--out", str(tmp_path / "t"),
                        "--format", "parquet"], capsys)
    assert code == 0 and "prediction: stores 2, matchers 4, items 3" in out
    assert (tmp_path / "t" / "prediction_items.parquet").exists()
    prod = tmp_path / "prod.db"
    prod.write_bytes((tmp_path / "demo" / "thatch.db").read_bytes())
    code, out, _ = run(["merge", str(tmp_path / "demo" / "thatch.db"), str(prod)], capsys)
    assert code == 0 and "merged prediction, behavior into" in out and (tmp_path / "prod.db.bak").exists()


@pytest.mark.parametrize("argv, needle", [
    (["import", "/nonexistent/store.db"], "no such file"),
    (["merge", "/nonexistent/a.db", "/nonexistent/b.db"], "no such file"),
    (["demo", "--bogus"], "No such option"),
])
def test_bad_input_is_one_line_and_nonzero(argv, needle, capsys):
    code, _, err = run(argv, capsys)
    assert code != 0
    lines = [ln for ln in err.strip().splitlines() if ln]
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0]


def test_corrupt_store_into_import(tmp_path, capsys):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"garbage" * 500)
    code, _, err = run(["import", str(bad)], capsys)
    assert code == 2 and err.startswith("error: ") and "not a readable SQLite" in err


@pytest.mark.parametrize("verb", ["demo", "import", "merge"])
def test_every_verb_has_help(verb):
    proc = subprocess.run([sys.executable, "-m", "thatchlab.cli", verb, "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "Usage" in proc.stdout
