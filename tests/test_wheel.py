"""The wheel works outside the checkout: built, installed into a fresh venv, run with no data directory.

The wheel is built from a copy of the project's files (what git tracks or
would track), so nothing is written into the checkout and nothing the
checkout has but the wheel lacks can help. The fresh venv gets the wheel
itself (``--no-deps --no-index``); its third-party dependencies are made
importable by one ``.pth`` line naming the test venv's site-packages, which
the machine has offline (a ``.pth`` path line adds the directory only: the
checkout's editable install, registered by a ``.pth`` file *inside* that
directory, is not activated). Then, from an empty directory, ``thatchlab
run`` (no ``--data``: the bundled samples) and ``thatchlab demo`` must
succeed, and ``thatchlab.datasets`` must load every sample.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _project_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout.split("\n")
    return [f for f in out if f and not f.startswith(("data", "docs/_build", "reports/")) and (ROOT / f).is_file()]


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory):
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs the git checkout to list the project's files")
    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"
    for rel in _project_files():
        dest = src / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, dest)
    dist = base / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                    "-q", "-w", str(dist), str(src)], check=True, capture_output=True, text=True)
    (wheel,) = dist.glob("thatchlab-*.whl")
    venv = base / "venv"
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", str(venv)],
                   check=True)
    py = venv / "bin" / "python"
    site = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([py, "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)], check=True,
                   capture_output=True, text=True)
    work = base / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(HF_HUB_OFFLINE="1", TQDM_DISABLE="1", THATCHLAB_CACHE_DIR=str(base / "cache"))
    return dict(venv=venv, py=py, work=work, env=env, wheel=wheel)


def _run(ctx, *args, timeout=600):
    return subprocess.run(list(args), cwd=ctx["work"], env=ctx["env"], capture_output=True, text=True,
                          timeout=timeout)


def test_the_wheel_holds_the_samples_and_imports_from_the_venv(wheel_venv):
    import zipfile

    names = zipfile.ZipFile(wheel_venv["wheel"]).namelist()
    for sample in ("interactions.jsonl", "recall_log.jsonl", "README.md", "ingest/ai-memory.db",
                   "ingest/claude-code/-home-dev-weather-app/41107194-b48c-5aa0-a275-8da2c787fea3.jsonl"):
        assert f"thatchlab/datasets/samples/{sample}" in names
    assert "thatchlab/py.typed" in names
    code = ("import thatchlab, thatchlab.datasets as d; print(thatchlab.__file__); "
            "print(len(d.load_interactions()), d.load_recall_log()['memory_id'].nunique(), "
            "len(d.load_claude_code().log), len(d.load_ai_memory().log)); "
            "print('Data card::' in d.load_memory_log.__doc__)")
    proc = _run(wheel_venv, str(wheel_venv["py"]), "-c", code)
    assert proc.returncode == 0, proc.stderr[-3000:]
    where, counts, card = proc.stdout.strip().splitlines()
    assert where.startswith(str(wheel_venv["venv"])), where  # the installed wheel, not the checkout
    assert counts == "6000 148 30 7"
    assert card == "True"


def test_thatchlab_run_and_demo_from_the_wheel_with_no_data_directory(wheel_venv):
    exe = str(wheel_venv["venv"] / "bin" / "thatchlab")
    version = _run(wheel_venv, exe, "--version")
    assert version.returncode == 0 and version.stdout.strip() == "thatchlab 0.1.0"
    run = _run(wheel_venv, exe, "run", "--out", "job")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    job = wheel_venv["work"] / "job"
    assert (job / "index.html").is_file()
    assert "What ships, and why" in (job / "index.html").read_text(encoding="utf-8")
    assert (job / "thatch.db").is_file()
    demo = _run(wheel_venv, exe, "demo", "--out", "demo")
    assert demo.returncode == 0, demo.stderr[-3000:]
    assert "[thatch] User decision model" in demo.stdout
