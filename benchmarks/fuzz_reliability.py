"""Reliability fuzz: bad inputs into every reader and every verb, each outcome classified.

Every case starts from a fresh folder holding small copies of the bundled
samples (logs, ingest sources, a store and its backup), damages one input —
its bytes (empty, blank, cut, flipped, NUL, not UTF-8), one value (odd
numbers, times at pandas' range edges, deep nesting, surrogates), its
columns or rows, or its path (missing, a directory, a FIFO, a symbolic link
loop, a file where a directory belongs) — or one argument (bad or nested
JSON, odd numbers and times), then runs one reader or one verb and sorts
the outcome into:

* **typed**: a :class:`~thatchlab.core.errors.ThatchlabError` (a verb: exit 2
  and exactly one ``error:`` line, no ``[Errno`` text);
* **ok**: a reader's valid frame, a verb's exit 0 whose outputs read back;
* **raw**: any other exception, exit code or error text, a traceback, or
  more than :data:`TIME_LIMIT` seconds (unbounded time);
* **silently wrong**: success where the case must fail (a missing input, a
  source with no row) or outputs that do not read back (a log of no row, an
  export import cannot open);
* **data loss**: a file that was there before changed or vanished, other
  than the outputs of a verb that succeeded.

Cases are drawn from ``random.Random(seed)``: the same size and seed give the
same cases and the same counts. ``python benchmarks/fuzz_reliability.py``
runs the full size (the README's reliability figures); ``--ci`` the size the
tests run (tests/test_fuzz.py).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import warnings
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
#: Seconds one case may take before it counts as unbounded time (raw).
TIME_LIMIT = 30
#: Cases per target: the README's figures, and the CI run.
FULL, CI = 24, 3
OUTCOMES = ("typed", "ok", "raw", "silently wrong", "data loss")

#: Odd values written into one field of one row.
ODD = [None, "", " ", "\x00", "x\x00y", "\udcff", True, 0, -1, 2 ** 63, -(2 ** 63) - 1, 10 ** 400 // 10 ** 380,
       1e308, -1e308, "NaN", "Infinity", "1677-09-22T00:00:00Z", "2262-04-10T00:00:00Z", "1677-09-21T00:12:43Z",
       "2262-04-11T23:47:16.854775Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2026-13-45", "now",
       "2026-01-01T09:00:00", [], ["a", 1], {"a": 1}, "[" * 5000 + "]" * 5000]


def _text_mutations():
    return ["empty", "blank", "cut", "flip", "nul", "latin1", "value", "value", "value", "drop_column",
            "extra_column", "shuffle", "duplicate", "deep_line", "missing", "directory", "fifo", "loop"]


class Case:
    """One run: a target, the damage done, the argv or the reader, and what must hold afterwards."""

    def __init__(self, target, damage, run, inputs=(), outputs=(), must_fail=False, check=None):
        self.target, self.damage, self.run = target, damage, run
        self.inputs, self.outputs, self.must_fail, self.check = list(inputs), list(outputs), must_fail, check


# ---------------------------------------------------------------------------------------------- damage
def _jsonl_rows(path):
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        with contextlib.suppress(ValueError):  # a sample's cut-off last line (a session being written)
            rows.append(json.loads(line))
    return [r for r in rows if isinstance(r, dict)]


def _write_jsonl(path, rows):
    path.write_bytes("".join(json.dumps(r, ensure_ascii=True) + "\n" for r in rows).encode("utf-8",
                                                                                           "surrogatepass"))


def damage_file(path: Path, how: str, rng: random.Random) -> bool:
    """Damage the file at ``path`` in place; True when the damage makes it unreadable as a path
    (missing, directory, FIFO, loop), i.e. every consumer must fail."""
    if how == "missing":
        path.unlink()
        return True
    if how == "directory":
        path.unlink()
        path.mkdir()
        return True
    if how == "fifo":
        path.unlink()
        os.mkfifo(path)
        return True
    if how == "loop":
        path.unlink()
        other = path.with_name(path.name + ".other")
        os.symlink(other, path)
        os.symlink(path, other)
        return True
    data = path.read_bytes()
    if how == "empty":
        path.write_bytes(b"")
    elif how == "blank":
        path.write_bytes(b"\n \n\n")
    elif how == "cut":
        path.write_bytes(data[: rng.randrange(max(1, len(data)))])
    elif how == "flip":
        b = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(b))
            b[i] = rng.randrange(256)
        path.write_bytes(bytes(b))
    elif how == "nul":
        i = rng.randrange(len(data) + 1)
        path.write_bytes(data[:i] + b"\x00" * rng.randint(1, 4) + data[i:])
    elif how == "latin1":
        path.write_bytes(data.replace(b"e", b"\xe9", rng.randint(1, 5)))
    elif path.suffix == ".jsonl":
        rows = _jsonl_rows(path)
        if not rows:
            return False
        if how == "value":
            r = rng.choice(rows)
            r[rng.choice(sorted(r))] = rng.choice(ODD)
        elif how == "drop_column":
            col = rng.choice(sorted(rows[0]))
            rows = [{k: v for k, v in r.items() if k != col} for r in rows]
        elif how == "extra_column":
            for r in rows:
                r[rng.choice(["extra", "\udcffcol", "ts "])] = rng.choice(ODD[:12])
        elif how == "shuffle":
            rng.shuffle(rows)
        elif how == "duplicate":
            rows = rows + rows[: rng.randint(1, len(rows))]
        elif how == "deep_line":
            rows.insert(rng.randrange(len(rows) + 1), {"ts": "[" * 100_000 + "]" * 100_000})
        _write_jsonl(path, rows)
        if how == "deep_line":
            text = path.read_text(encoding="utf-8").replace('"' + "[" * 100_000 + "]" * 100_000 + '"',
                                                            "[" * 100_000 + "]" * 100_000)
            path.write_text(text, encoding="utf-8")
    else:  # JSON, CSV, SQLite: a value is a few flipped bytes
        b = bytearray(data)
        for _ in range(3):
            i = rng.randrange(len(b))
            b[i] = rng.randrange(256)
        path.write_bytes(bytes(b))
    return False


# ---------------------------------------------------------------------------------------------- setup
def _head(src: Path, dst: Path, n: int):
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    dst.write_text("".join(lines[:n]), encoding="utf-8")
    return dst


def prepare(folder: Path) -> dict:
    """The samples a case starts from, small enough for hundreds of runs."""
    import numpy as np

    f = {}
    f["interactions"] = _head(DATA / "interactions.jsonl", folder / "interactions.jsonl", 80)
    f["memory"] = _head(DATA / "memory_log.jsonl", folder / "memory.jsonl", 200)
    f["recall"] = _head(DATA / "recall_log.jsonl", folder / "recall.jsonl", 200)
    f["events"] = _head(DATA / "events.jsonl", folder / "events.jsonl", 200)
    f["recalls"] = _head(DATA / "recalls.jsonl", folder / "recalls.jsonl", 200)
    texts = sorted({v for r in _jsonl_rows(f["interactions"]) for v in r.values() if isinstance(v, str)})
    rng = np.random.default_rng(0)
    f["lookup"] = folder / "lookup.jsonl"
    _write_jsonl(f["lookup"], [{"text": t, "embedding": [float(x) for x in rng.normal(size=8)]} for t in texts])
    ing = DATA / "ingest"
    shutil.copytree(ing / "claude-code", folder / "claude-code")
    f["claude-code"] = next((folder / "claude-code").rglob("*.jsonl"))
    shutil.copytree(ing / "opencode", folder / "opencode")
    f["opencode"] = folder / "opencode" / "opencode.db"
    for name in ("omi_memories.json", "ai-memory.db", "mnemo_events.csv", "mnemo_recalls.csv"):
        shutil.copy(ing / name, folder / name)
    f["omi"], f["ai-memory"] = folder / "omi_memories.json", folder / "ai-memory.db"
    f["mnemo"], f["mnemo_recalls"] = folder / "mnemo_events.csv", folder / "mnemo_recalls.csv"
    return f


def _store_pair(folder: Path) -> tuple[Path, Path]:
    """A one-prediction export and a production file holding thatch's tables (tests/_stores.py's toy)."""
    sys.path.insert(0, str(ROOT))
    from tests._stores import toy_export_and_production

    return toy_export_and_production(folder)


# ---------------------------------------------------------------------------------------------- the cases
READERS = {"interaction": ("interactions", "read_interaction_log"), "memory": ("memory", "read_memory_log"),
           "recall": ("recall", "read_recall_log"), "events": ("events", "read_event_log"),
           "recalls": ("recalls", "read_recall_stream")}
INGEST = {"claude-code": "claude_code", "opencode": "opencode", "omi": "omi_memories", "ai-memory": "ai_memory"}


def _reads_back(reader):
    def check(path):
        from thatchlab import logs

        out = getattr(logs, reader)(path)
        return len(out) > 0
    return check


def _table_reads_back(path):
    import pandas as pd

    suffix = Path(path).suffix
    if suffix == ".json":  # a table's records, or a verb's metrics as one object
        return isinstance(json.loads(Path(path).read_text(encoding="utf-8")), (list, dict))
    df = pd.read_csv(path) if suffix == ".csv" else pd.read_parquet(path)
    return df is not None


def _store_reads_back(path):
    from thatchlab.store import import_sqlite

    import_sqlite(path)
    return True


def _verb_cases(f, tmp: Path, rng: random.Random):
    """``{target: [(file key damaged or None, argv maker, outputs and checks)]}``: what each verb reads."""
    lk = str(f["lookup"])
    return {
        "replay prediction": ("interactions", lambda: ["replay", str(f["interactions"]), "--engine", "prediction",
                                                       "--lookup", lk, "--events-out", str(tmp / "e.csv")],
                              [(tmp / "e.csv", _table_reads_back)]),
        "replay behavior": ("interactions", lambda: ["replay", str(f["interactions"]), "--engine", "behavior",
                                                     "--lookup", lk, "--metrics-out", str(tmp / "m.json")],
                            [(tmp / "m.json", _table_reads_back)]),
        "replay belief": ("memory", lambda: ["replay", str(f["memory"]), "--engine", "belief"], []),
        "replay calibration": ("recall", lambda: ["replay", str(f["recall"]), "--engine", "calibration"], []),
        "replay anticipation": ("events", lambda: ["replay", str(f["events"]), "--engine", "anticipation",
                                                   "--recalls", str(f["recalls"])], []),
        "sweep belief": ("memory", lambda: ["sweep", str(f["memory"]), "--engine", "belief", "--space",
                                            '{"state": [5, 10]}', "--metric", "brier", "--out",
                                            str(tmp / "rows.parquet")], [(tmp / "rows.parquet", _table_reads_back)]),
        "fit prior": ("interactions", lambda: ["fit", "prior", str(f["interactions"]), "--lookup", lk], []),
        "fit halflife": ("memory", lambda: ["fit", "halflife", str(f["memory"]), "--out", str(tmp / "h.csv")],
                         [(tmp / "h.csv", _table_reads_back)]),
        "fit derive": ("recall", lambda: ["fit", "derive", str(f["recall"])], []),
        "calibrate": ("recall", lambda: ["calibrate", str(f["recall"]), "--json"], []),
        "mine": ("events", lambda: ["mine", str(f["events"]), str(f["recalls"]), "--out", str(tmp / "p.parquet")],
                 [(tmp / "p.parquet", _table_reads_back)]),
        "mine recalls": ("recalls", lambda: ["mine", str(f["events"]), str(f["recalls"])], []),
        "export": ("interactions", lambda: ["export", str(f["interactions"]), "--engine", "behavior", "--out",
                                            str(tmp / "x.db"), "--lookup", lk, "--overwrite"],
                   [(tmp / "x.db", _store_reads_back)]),
        "ingest claude-code": ("claude-code", lambda: ["ingest", "claude-code", str(f["claude-code"]), "--out",
                                                       str(tmp / "cc.jsonl"), "--project-store", "cwd"],
                               [(tmp / "cc.jsonl", _reads_back("read_interaction_log"))]),
        "ingest opencode": ("opencode", lambda: ["ingest", "opencode", str(f["opencode"]), "--out",
                                                 str(tmp / "oc.jsonl"), "--project-store", "cwd"],
                            [(tmp / "oc.jsonl", _reads_back("read_interaction_log"))]),
        "ingest omi": ("omi", lambda: ["ingest", "omi", str(f["omi"]), "--out", str(tmp / "omi.jsonl")],
                       [(tmp / "omi.jsonl", _reads_back("read_memory_log"))]),
        "ingest ai-memory": ("ai-memory", lambda: ["ingest", "ai-memory", str(f["ai-memory"]), "--out",
                                                   str(tmp / "am.jsonl")],
                             [(tmp / "am.jsonl", _reads_back("read_recall_log"))]),
        "ingest mnemo": ("mnemo", lambda: ["ingest", "mnemo", str(f["mnemo"]), "--recalls", str(f["mnemo_recalls"]),
                                           "--out", str(tmp / "mn.jsonl")],
                         [(tmp / "mn.events.jsonl", _reads_back("read_event_log"))]),
    }


#: Argument damage: (target, argv maker given the samples and folder, must fail).
def _argument_cases(f, tmp: Path, rng: random.Random):
    deep = "[" * 50_000 + "]" * 50_000
    odd_num = rng.choice(["nan", "inf", "-1", "1e308", "-0", "99999999999999999999", "abc", ""])
    odd_time = rng.choice(["1677-09-21T00:12:43Z", "2262-04-11T23:47:16Z", "2262-04-10T00:00:00Z", "now",
                           "2026-01-01T00:00:00", "9999-01-01T00:00:00Z", "1677-09-22T00:00:00Z"])
    space = rng.choice(["{bad", "[]", "{}", '{"a": ' + deep + "}", '{"state": []}', '{"state": "x"}',
                        '{"state": {"low": 1}}', '{"nope": [1]}', str(tmp / "nowhere.json")])
    afile, adir = tmp / "afile", tmp / "adir"
    afile.write_text("x")
    adir.mkdir(exist_ok=True)
    return [
        ("sweep --space", ["sweep", str(f["memory"]), "--engine", "belief", "--metric", "brier", "--space", space],
         space not in ('{"state": [5]}',)),
        ("sweep --seed", ["sweep", str(f["memory"]), "--engine", "belief", "--metric", "brier", "--space",
                          '{"state": [5, 10]}', "--seed", odd_num], odd_num not in ("-0",)),
        ("calibrate --now", ["calibrate", str(f["recall"]), "--now", odd_time], False),
        ("calibrate --days", ["calibrate", str(f["recall"]), "--days", odd_num], odd_num not in ("-0",)),
        ("mine --now", ["mine", str(f["events"]), str(f["recalls"]), "--now", odd_time], False),
        ("mine --window", ["mine", str(f["events"]), str(f["recalls"]), "--window", rng.choice(["0h", "-1h", "x", "1e308d", ""])], False),
        ("replay --config", ["replay", str(f["memory"]), "--engine", "belief", "--config",
                             str(_config(tmp, rng, deep))], True),
        ("run --data file", ["run", "--data", str(afile), "--out", str(tmp / "run")], True),
        ("run --out file", ["run", "--data", str(adir), "--out", str(afile)], True),
        ("import --out file", ["import", str(tmp / "prod.db"), "--out", str(afile)], True),
        ("synth --out", ["synth", rng.choice(["preference", "belief", "recall", "patterns", "nope"]), "--out",
                         str(rng.choice([adir, afile / "s.jsonl", tmp / "s.txt"])), "--size",
                         str(rng.choice([-1, 0, 3, 10 ** 9]))], True),
        ("replay --events-out", ["replay", str(f["memory"]), "--engine", "belief", "--events-out",
                                 str(rng.choice([adir, afile / "e.csv", tmp / "e.txt"]))], True),
        ("ingest --out", ["ingest", "omi", str(f["omi"]), "--out", str(rng.choice([adir, afile / "o.jsonl"]))], True),
        ("decide", ["decide", str(rng.choice([afile, adir, tmp / "none.parquet"])), "--metric", "brier", "--out",
                    str(tmp / "d.json")], True),
        ("restore", ["restore", str(rng.choice([afile, adir, tmp / "none.bak"])), str(tmp / "prod.db")], True),
        ("prune-backups", ["prune-backups", str(tmp / "prod.db"), "--keep", rng.choice(["-1", "0", "x"])], False),
        ("merge", ["merge", str(rng.choice([afile, adir, tmp / "none.db"])), str(tmp / "prod.db")], True),
    ]


def _config(tmp, rng, deep):
    p = tmp / "config.json"
    p.write_text(rng.choice(["{bad", "[]", '{"belief": {"nope": 1}}', '{"a": ' + deep + "}", "",
                             '{"belief": {"state": "x"}}', '{"belief": []}']))
    return p


# ---------------------------------------------------------------------------------------------- running
class _Timeout(BaseException):
    pass


@contextlib.contextmanager
def _limit(seconds):
    def fire(signum, frame):
        raise _Timeout()
    old = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _snapshot(folder: Path) -> dict:
    out = {}
    for p in folder.rglob("*"):
        if p.is_symlink() or not p.is_file():
            continue
        with contextlib.suppress(OSError):
            out[p] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _invoke(argv):
    """``(exit code, stderr, exception or None)`` of ``thatchlab ARGV`` through :func:`thatchlab.cli.main`."""
    import io

    from thatchlab.cli import main

    out, err = io.StringIO(), io.StringIO()
    code, exc = 0, None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(argv)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except _Timeout:
            raise
        except BaseException as e:  # noqa: BLE001 - anything main lets through is a raw outcome
            exc, code = e, 1
    return code, err.getvalue(), exc


LAST: list = []  # the last verb's exit and error line, for -v


def _verb_outcome(argv, outputs, must_fail, before, folder) -> str:
    try:
        with _limit(TIME_LIMIT), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            code, err, exc = _invoke(argv)
    except _Timeout:
        LAST[:] = ["timed out"]
        return "raw"
    last_line = (err.strip().splitlines() or [""])[-1][:160]
    LAST[:] = [f"exit {code}: {last_line}" + (f" ({exc!r})"[:200] if exc else "")]
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("warning: ")]
    after = _snapshot(folder)
    written = {Path(p) for p, _ in outputs} | {p for p in before if p.name.endswith((".bak", ".bak.json"))}
    lost = [p for p, h in before.items() if after.get(p) != h and (code != 0 or p not in written)
            and not (code == 0 and p.name.startswith(("prod.db",)))]
    if lost:
        return "data loss"
    if exc is not None or code not in (0, 2):
        return "raw"
    if code == 2:
        ok = len(lines) == 1 and lines[0].startswith("error: ") and "Errno" not in lines[0] \
            and not lines[0].startswith("error: unexpected")
        return "typed" if ok else "raw"
    if must_fail:
        return "silently wrong"
    for path, check in outputs:
        if not Path(path).exists():
            continue
        try:
            if not check(path):
                return "silently wrong"
        except Exception:
            return "silently wrong"
    return "ok"


def _reader_outcome(reader, path) -> str:
    import pandas as pd

    from thatchlab import logs
    from thatchlab.core.errors import ThatchlabError

    try:
        with _limit(TIME_LIMIT), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = getattr(logs, reader)(path)
    except ThatchlabError:
        return "typed"
    except (_Timeout, Exception):
        return "raw"
    return "ok" if isinstance(out, pd.DataFrame) and "ts" in out.columns else "silently wrong"


def _ingest_outcome(name, path) -> str:
    from thatchlab.core.errors import ThatchlabError
    from thatchlab.logs import ingest

    try:
        with _limit(TIME_LIMIT), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kw = {"project_store": "cwd"} if name in ("claude-code", "opencode") else {}
            getattr(ingest, INGEST[name])(path, **kw)
    except ThatchlabError:
        return "typed"
    except (_Timeout, Exception):
        return "raw"
    return "ok"


def run_fuzz(per_target: int = FULL, seed: int = 0, verbose: bool = False) -> Counter:
    """The outcome counts of ``per_target`` cases for each reader, adapter, verb and argument family."""
    rng = random.Random(seed)
    counts: Counter = Counter()
    by_target: dict = {}
    mutations = _text_mutations()

    def note(target, damage, outcome):
        counts["tried"] += 1
        counts[outcome] += 1
        by_target.setdefault(target, Counter())[outcome] += 1
        if verbose and outcome in ("raw", "silently wrong", "data loss"):
            print(f"  {outcome}: {target} ({damage})" + (f" — {LAST[0]}" if LAST else ""), flush=True)
        LAST[:] = []

    with tempfile.TemporaryDirectory(prefix="thatchlab-fuzz-") as base:
        base = Path(base)
        pristine = base / "pristine"
        pristine.mkdir()
        prepare(pristine)
        n = 0

        def fresh():
            nonlocal n
            n += 1
            folder = base / f"case{n}"
            shutil.copytree(pristine, folder, symlinks=True)
            return folder, {k: folder / v.relative_to(pristine) for k, v in prepare_paths(pristine).items()}

        for kind, (key, reader) in READERS.items():
            for i in range(per_target):
                folder, f = fresh()
                how = mutations[(i + rng.randrange(len(mutations))) % len(mutations)]
                damage_file(f[key], how, rng)
                note(f"read {kind}", how, _reader_outcome(reader, f[key]))
                shutil.rmtree(folder, ignore_errors=True)
        for name in INGEST:
            for i in range(per_target):
                folder, f = fresh()
                how = mutations[(i + rng.randrange(len(mutations))) % len(mutations)]
                damage_file(f[name], how, rng)
                note(f"ingest.{INGEST[name]}", how, _ingest_outcome(name, f[name]))
                shutil.rmtree(folder, ignore_errors=True)
        names = list(_verb_cases(prepare_paths(pristine), pristine, rng))
        for target in names:
            for i in range(per_target):
                folder, f = fresh()
                key, argv, outputs = _verb_cases(f, folder, rng)[target]
                how = mutations[(i + rng.randrange(len(mutations))) % len(mutations)]
                must_fail = damage_file(f[key], how, rng)
                if target.startswith("ingest") and how in ("empty", "blank"):
                    must_fail = True  # a source of no record never gives a log of no row
                before = _snapshot(folder)
                before = {p: h for p, h in before.items() if p != f[key]}
                note(target, how, _verb_outcome(argv(), outputs, must_fail, before, folder))
                shutil.rmtree(folder, ignore_errors=True)
        for _ in range(per_target):
            folder, f = fresh()
            _store_pair(folder)  # prod.db, which the store arguments name
            for target, argv, must_fail in _argument_cases(f, folder, rng):
                before = _snapshot(folder)
                note(target, " ".join(argv[-2:])[:60], _verb_outcome(argv, [], must_fail, before, folder))
            shutil.rmtree(folder, ignore_errors=True)
        for _ in range(per_target):  # stores: damaged export, production and backup
            folder, f = fresh()
            export, prod = _store_pair(folder)
            code, _, _ = _invoke(["merge", str(export), str(prod)])
            bak = next(folder.glob("prod.db.*.bak"), None)
            if bak is None:  # the undamaged merge failed: nothing to damage
                note("merge", "undamaged", "raw" if code != 2 else "typed")
                shutil.rmtree(folder, ignore_errors=True)
                continue
            victim = rng.choice([export, prod, bak])
            how = rng.choice(["empty", "cut", "flip", "nul", "missing", "directory", "loop"])
            must_fail = damage_file(victim, how, rng)
            before = _snapshot(folder)
            before = {p: h for p, h in before.items() if p != victim}
            reads = {"merge": {export, prod}, "restore": {bak, prod}, "import": {victim}, "prune-backups": set()}
            for target, argv in (("merge", ["merge", str(export), str(prod)]),
                                 ("restore", ["restore", str(bak), str(prod)]),
                                 ("import", ["import", str(victim)]),
                                 ("prune-backups", ["prune-backups", str(prod), "--keep", "0"])):
                fail = must_fail and (victim in reads[target] or (target == "prune-backups" and how == "loop"
                                                                  and victim == prod))
                outcome = _verb_outcome(argv, [], fail, before, folder)
                note(target, f"{how} {victim.name}", outcome)
                before = _snapshot(folder)
            shutil.rmtree(folder, ignore_errors=True)
    counts["by_target"] = by_target
    return counts


def prepare_paths(folder: Path) -> dict:
    """The sample paths of a prepared folder (as :func:`prepare` returned them)."""
    f = {"interactions": folder / "interactions.jsonl", "memory": folder / "memory.jsonl",
         "recall": folder / "recall.jsonl", "events": folder / "events.jsonl", "recalls": folder / "recalls.jsonl",
         "lookup": folder / "lookup.jsonl", "opencode": folder / "opencode" / "opencode.db",
         "omi": folder / "omi_memories.json", "ai-memory": folder / "ai-memory.db",
         "mnemo": folder / "mnemo_events.csv", "mnemo_recalls": folder / "mnemo_recalls.csv"}
    f["claude-code"] = next((folder / "claude-code").rglob("*.jsonl"))
    return f


def table(counts: Counter) -> str:
    """The README's line: tried / typed / raw / silently wrong / data loss."""
    return (f"tried {counts['tried']:,} / typed {counts['typed']:,} / raw {counts['raw']:,} / silently wrong "
            f"{counts['silently wrong']:,} / data loss {counts['data loss']:,} (ok {counts['ok']:,})")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ci", action="store_true", help=f"the tests' size ({CI} cases per target)")
    ap.add_argument("--per-target", type=int, default=None, help=f"cases per target (default {FULL})")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-v", "--verbose", action="store_true", help="print every raw, wrong or lossy case")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TQDM_DISABLE", "1")
    per = args.per_target or (CI if args.ci else FULL)
    counts = run_fuzz(per, args.seed, verbose=args.verbose)
    for target, c in sorted(counts["by_target"].items()):
        print(f"{target:<22} " + "  ".join(f"{k} {c[k]}" for k in OUTCOMES if c[k]))
    print(table(counts))
    bad = counts["raw"] + counts["silently wrong"] + counts["data loss"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
