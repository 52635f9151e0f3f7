"""``thatchlab replay`` (one engine over one log) and ``thatchlab sweep`` (a parameter space, scored out of sample)."""

from __future__ import annotations

import contextlib
import json
import math
import warnings
from pathlib import Path

import pandas as pd
import typer

from thatchlab import replay as rp
from thatchlab import sweep as sweeps
from thatchlab.cli._inputs import (
    REPLAY_ENGINES,
    SCORING,
    check_count,
    choice,
    engine_params,
    get_embedder,
    load_log,
)
from thatchlab.cli._io import (
    check_distinct,
    check_file_out,
    check_not_inputs,
    check_out,
    echo_pairs,
    read_mapping,
    write_atomic,
    write_out,
)
from thatchlab.core.display import plural
from thatchlab.core.errors import InputError
from thatchlab.core.schema import ENGINE_TABLES
from thatchlab.decide import decide as run_decide
from thatchlab.store import import_sqlite
from thatchlab.sweep import best, get_engine, load_sweep, save_sweep
from thatchlab.sweep.persist import sidecar_path

__all__ = ["replay", "sweep", "decide", "parse_space", "MAX_SEED", "MAX_TRIALS", "MAX_BOOT"]

#: The largest ``--seed`` of sweep and decide (optuna's samplers take seeds below 2**32).
MAX_SEED = 2**32 - 1
#: The most configurations ``sweep --n-trials`` draws.
MAX_TRIALS = 100_000
#: The most session resamples ``decide --n-boot`` draws (each is a row of the resample matrix).
MAX_BOOT = 100_000


def replay(log: Path = typer.Argument(..., help="the log (JSONL, CSV or Parquet); for anticipation, the event stream"),
           engine: str = typer.Option(..., help="prediction, behavior, belief, calibration or anticipation"),
           recalls: Path = typer.Option(None, help="anticipation: the recall stream"),
           config: Path = typer.Option(None, help="JSON/TOML parameters: {engine: {...}} or this engine's fields"),
           lookup: Path = typer.Option(None, help="prediction/behavior: table of text, embedding used instead "
                                                  "of the bundled model"),
           events_out: Path = typer.Option(None, help="write the per-event outputs (.csv, .parquet or .json)"),
           metrics_out: Path = typer.Option(None, help="write the metrics (.csv, .parquet or .json)"),
           initial: Path = typer.Option(None, help="prediction/behavior: a thatch store (SQLite) to start from, "
                                                   "e.g. a snapshot of production taken before the log began")):
    """Replay a log through one engine and print its metrics."""
    choice("--engine", engine, REPLAY_ENGINES)
    check_out(events_out, metrics_out)
    check_distinct(("--events-out", events_out), ("--metrics-out", metrics_out))
    check_not_inputs([("--events-out", events_out), ("--metrics-out", metrics_out)],
                     [("LOG", log), ("--recalls", recalls), ("--config", config), ("--lookup", lookup),
                      ("--initial", initial)])
    start = None
    if initial is not None:
        if engine not in SCORING:
            raise InputError(f"--initial: only the prediction and behavior engines start from a store, not {engine!r}")
        start = import_sqlite(initial)
        if getattr(start, engine) is None:
            raise InputError(f"--initial {initial}: holds none of the {engine} engine's tables "
                             f"({', '.join(_engine_tables(engine))}), only {_held(start)}; expected a thatch "
                             f"store or a thatchlab export of the {engine} engine to start the replay from")
    params = engine_params(engine, config)
    with warnings.catch_warnings(record=True) as caught:  # the reader's warnings too (e.g. time order)
        warnings.simplefilter("always", UserWarning)
        data = load_log(engine, log, recalls)
        if engine in SCORING:
            res = rp.run(data, engine=engine, params=params, embedder=get_embedder(lookup), initial=start)
            events = res.events
        elif engine == "belief":
            res = rp.run_belief(data, params)
            events = res.events
        elif engine == "calibration":
            res = rp.run_calibration(data, params)
            events = res.events
        else:
            with _short_streams(log):
                res = rp.run_anticipation(*data, params)
            events = res.sessions
    diagnostics = list(getattr(res, "diagnostics", []) or [])
    for w in caught:  # one plain line each on stderr; the diagnostics get their own lines below
        if issubclass(w.category, UserWarning) and not str(w.message).startswith("replay: "):
            typer.echo(f"warning: {w.message}", err=True)
    for sentence in diagnostics:
        typer.echo(f"diagnostic: {sentence}", err=True)
    metrics = {k: v for k, v in res.metrics.items() if v is None or isinstance(v, (int, float, str))}
    echo_pairs(metrics.items())
    if events_out is not None:
        write_out(events, events_out)
    if metrics_out is not None:
        _write_metrics(metrics, metrics_out)


def _engine_tables(engine: str) -> list:
    """The production tables of a scoring engine, as a thatch file names them."""
    t = ENGINE_TABLES[engine]
    return ["stores", t["matchers"], t["items"], t["edges"], t["provenance"]]


def _held(contents) -> str:
    """What an imported file holds, in words (``the calibration engine's tables``)."""
    names = {"prediction": "prediction", "behavior": "behavior", "beliefs": "belief", "calibration": "calibration",
             "patterns": "anticipation"}
    held = [names[k] for k in names if getattr(contents, k, None) is not None]
    if not held:
        return "no engine's tables"
    if len(held) == 1:
        return f"the {held[0]} engine's tables"
    return f"the tables of the {', '.join(held[:-1])} and {held[-1]} engines"


@contextlib.contextmanager
def _short_streams(log):
    """Streams too short to hold a session after the anticipation replay's warm-up are an InputError.

    (The replay itself fails on them with pandas' "No objects to concatenate".)
    """
    try:
        yield
    except ValueError as exc:
        if isinstance(exc, InputError) or "No objects to concatenate" not in str(exc):
            raise
        raise InputError(f"{log}: no session of the recall stream starts after the anticipation replay's "
                         "warm-up; expected streams spanning more days") from None


def _write_metrics(metrics: dict, path: Path) -> None:
    """Write replay metrics: a JSON object, or a ``metric, value, text`` table (numbers in ``value``)."""
    if path.suffix.lower() == ".json":
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(metrics, indent=1, default=float) + "\n"
        write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
        return

    def number(v):
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    write_out(pd.DataFrame({
        "metric": list(metrics),
        "value": pd.Series([float(v) if number(v) else None for v in metrics.values()], dtype="float64"),
        "text": [None if number(v) or v is None else str(v) for v in metrics.values()]}), path)


def _is_file(text: str) -> bool:
    try:
        return Path(text).is_file()
    except (OSError, ValueError):
        return False


def parse_space(text: str) -> dict:
    """A search space from JSON text or a JSON/TOML file.

    Parameters
    ----------
    text : str
        JSON text of parameter → list of values, or the path of such a file;
        ``{"low": a, "high": b, "log": true}`` objects become ranges.

    Returns
    -------
    dict
        Parameter → list of values, ``(low, high)`` or ``(low, high, "log")``.

    Examples
    --------
    >>> parse_space('{"k": [2, 5], "p0": {"low": 0.1, "high": 0.9}, "w": {"low": 1, "high": 9, "log": true}}')
    {'k': [2, 5], 'p0': (0.1, 0.9), 'w': (1, 9, 'log')}
    """
    if not text.lstrip().startswith(("{", "[")):
        space = read_mapping(Path(text), "space")
    else:
        try:
            space = json.loads(text)
        except RecursionError:
            raise InputError("--space: nests arrays or objects too deeply to read; expected e.g. "
                             "'{\"k\": [2, 5, 10]}'") from None
        except ValueError as exc:
            raise InputError(f"--space: not valid JSON ({exc}); expected e.g. '{{\"k\": [2, 5, 10]}}' "
                             "or a JSON file") from None
    if not isinstance(space, dict) or not space:
        raise InputError("--space: expected a non-empty JSON object of parameter → values")
    out = {}
    for name, values in space.items():
        if isinstance(values, dict):
            if not {"low", "high"} <= set(values):
                raise InputError(f"--space: {name!r}: a range needs 'low' and 'high'")
            out[name] = (values["low"], values["high"], "log") if values.get("log") else (values["low"], values["high"])
        elif isinstance(values, list) and values:
            out[name] = values
        else:
            raise InputError(f"--space: {name!r}: expected a non-empty list of values or "
                             f"{{\"low\": .., \"high\": ..}}, got {values!r}")
    return out


def sweep(log: Path = typer.Argument(..., help="the engine's log; for anticipation, the event stream"),
          engine: str = typer.Option(..., help="prediction, behavior, belief, calibration or anticipation"),
          space: str = typer.Option(..., help="JSON text or a JSON/TOML file: parameter → list of values "
                                              "(or {\"low\": a, \"high\": b, \"log\": true} for random/optuna)"),
          metric: str = typer.Option(..., help="the metric to optimise (direction taken from the engine)"),
          search: str = typer.Option("grid", help="grid, random or optuna"),
          n_trials: int = typer.Option(None, help="configurations drawn by random or optuna search "
                                                  "(1 to 100000)"),
          holdout: float = typer.Option(0.2, help="fraction of the log in each of validation and test"),
          seed: int = typer.Option(0, help="seed of random search and optuna (0 to 4294967295)"),
          recalls: Path = typer.Option(None, help="anticipation: the recall stream"),
          config: Path = typer.Option(None, help="JSON/TOML base parameters for the fields not swept"),
          lookup: Path = typer.Option(None, help="prediction/behavior: table of text, embedding"),
          cache: Path = typer.Option(None, help="Parquet file of finished configurations (resumes a rerun)"),
          out: Path = typer.Option(None, help="write every configuration's row (.csv, .parquet or .json)")):
    """Score a parameter space out of sample and print the best configuration."""
    choice("--engine", engine, REPLAY_ENGINES)
    choice("--search", search, ("grid", "random", "optuna"))
    if n_trials is not None:
        check_count("--n-trials", n_trials, 1, MAX_TRIALS, "a number of configurations")
    check_count("--seed", seed, 0, MAX_SEED, "a seed")
    check_out(out)
    side = None if out is None else sidecar_path(out)
    check_distinct(("--out", out), ("--out's sidecar", side), ("--cache", cache))
    check_not_inputs([("--out", out), ("--out's sidecar", side), ("--cache", cache)],
                     [("LOG", log), ("--recalls", recalls), ("--config", config), ("--lookup", lookup),
                      ("--space", Path(space) if _is_file(space) else None)])
    directions = get_engine(engine).metrics
    if metric not in directions:
        raise InputError(f"--metric: engine {engine!r} has no metric {metric!r}; expected one of "
                         f"{', '.join(directions)}")
    grid = parse_space(space)
    base = engine_params(engine, config)
    data = load_log(engine, log, recalls)
    with _short_streams(log):
        results = sweeps.sweep(data, grid, metric, engine=engine, search=search, n_trials=n_trials,
                            holdout=holdout, seed=seed, cache=None if cache is None else str(cache), base=base,
                            embedder=get_embedder(lookup) if engine in SCORING else None)
    winner = best(results, metric, minimize=directions[metric] == "min")
    typer.echo(f"{plural(len(results), 'configuration')} of {engine}; best by validation {metric} "
               f"({'lower' if directions[metric] == 'min' else 'higher'} is better):")
    echo_pairs([(k, getattr(winner.params, k)) for k in grid]
               + [(f"val_{metric}", winner.val), (f"test_{metric}", winner.test)])
    if out is not None:
        save_sweep(results, out)
        typer.echo(f"rows written to {out}; per-session sums for `thatchlab decide` in {sidecar_path(out).name}")


def decide(rows: Path = typer.Argument(..., help="a sweep's rows written by `thatchlab sweep --out` "
                                                 "(its .decide.npz beside them)"),
           metric: str = typer.Option(..., help="the ratio metric to decide on (log_loss, brier, "
                                                 "interruption_rate, wrong_silent_follow_rate, coverage)"),
           out: Path = typer.Option(..., help="the decision, as JSON (for `thatchlab export --decision`)"),
           constraint: list[str] = typer.Option([], help="METRIC<=VALUE or METRIC>=VALUE; repeatable"),
           default: Path = typer.Option(None, "--default",
                                        help="JSON/TOML parameters production runs (default: its own)"),
           alpha: float = typer.Option(0.05, help="family-wise error rate of the decision"),
           n_boot: int = typer.Option(1000, help="session resamples (1 to 100000)"),
           seed: int = typer.Option(0, help="seed of the resamples (0 to 4294967295)")):
    """Decide what to ship from a sweep: the candidate tested as a whole against production's default."""
    if out.suffix.lower() != ".json":
        raise InputError(f"--out {out}: expected a .json file")
    check_file_out(out, "--out")
    check_not_inputs([("--out", out)], [("ROWS", rows), ("--default", default)])
    check_count("--n-boot", n_boot, 1, MAX_BOOT, "a number of resamples")
    check_count("--seed", seed, 0, MAX_SEED, "a seed")
    rules = {}
    for text in constraint:
        for op in ("<=", ">=", "<", ">"):
            name, sep, value = text.partition(op)
            if sep:
                try:
                    bound = float(value)
                except ValueError:
                    raise InputError(f"--constraint {text!r}: expected METRIC{op}NUMBER") from None
                if not math.isfinite(bound):
                    raise InputError(f"--constraint {text!r}: expected METRIC{op}NUMBER with a finite "
                                     f"number, got {value.strip()!r}")
                rules[name.strip()] = (op, bound)
                break
        else:
            raise InputError(f"--constraint {text!r}: expected METRIC<=VALUE or METRIC>=VALUE")
    results = load_sweep(rows)
    engine = results.attrs.get("engine")
    if engine not in SCORING:
        raise InputError(f"{rows}: a sweep of engine {engine!r}; decide supports {', '.join(SCORING)}")
    base = engine_params(engine, default) if default is not None else None
    d = run_decide(results, metric, default=base, constraint=rules or None, alpha=alpha, n_boot=n_boot, seed=seed)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, lambda tmp: tmp.write_text(json.dumps(d.to_dict(), indent=1) + "\n", encoding="utf-8"))
    typer.echo(d.summary())
    for r in d.evidence.itertuples():
        typer.echo(f"  {r.parameter}: {r.reason}")
    typer.echo(f"decision written to {out}")
