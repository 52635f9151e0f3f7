"""The ``thatchlab`` command.

Verbs: ``run`` (the main job), ``replay``, ``sweep``, ``fit``, ``calibrate``,
``mine``, ``export``, ``import``, ``merge``, ``synth`` and ``demo``. Logs are
read as JSONL, CSV or Parquet and tables written as CSV, Parquet or JSON, by
suffix. Every verb has ``--help``; bad input ends with one line naming the
problem and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from thatchlab.core.errors import ThatchlabError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="thatchlab: replay, measure, tune and export the math behind agent memory.")


@app.callback()
def _root():
    """thatchlab: replay, measure, tune and export the math behind agent memory."""


@app.command()
def run(data: Path = typer.Option(Path("data"), help="directory holding the sample logs"),
        out: Path = typer.Option(Path("reports/run"), help="directory for the report and the export"),
        config: Path = typer.Option(None, help="JSON or TOML file of per-engine parameters")):
    """The main job: replay every engine, sweep, fit, report and export."""
    from thatchlab.run import run_all

    res = run_all(data, out, config=config)
    for name, secs in res.timings.items():
        typer.echo(f"  {name:<28} {secs:6.1f} s")
    if res.skipped:
        typer.echo(f"  skipped (no log): {', '.join(res.skipped)}")
    typer.echo(f"report: {res.report_path}   export: {res.export_path}   manifest: {res.manifest_path}")


@app.command()
def demo(out: Path = typer.Option(Path("reports/demo"), help="directory for the exported store"),
         version: str = typer.Option("0.1.0", help="seed version stamped on default behaviors")):
    """Scripted session through both scoring engines with the bundled model.

    Prints the replies and nudge blocks and exports the store.
    """
    from thatchlab.cli.demo import run_demo

    result = run_demo(out, version=version)
    typer.echo(result.text())


def _write_frame(df, path: Path):
    """Write a DataFrame as CSV, Parquet or JSON (by suffix)."""
    from thatchlab.core.errors import InputError

    suffix = path.suffix.lower()
    out = df.copy()
    if "embedding" in out.columns and suffix != ".parquet":
        out = out.drop(columns=["embedding"])
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".csv":
        out.to_csv(path, index=False)
    elif suffix == ".parquet":
        out = out.assign(**{c: out[c].map(lambda v: None if v is None else list(map(float, v)))
                            for c in out.columns if c == "embedding"})
        out.to_parquet(path, index=False)
    elif suffix == ".json":
        out.to_json(path, orient="records", indent=1, date_format="iso")
    else:
        raise InputError(f"{path}: unknown output format {suffix!r}; expected .csv, .parquet or .json")


@app.command("import")
def import_(path: Path = typer.Argument(..., help="a thatch or thatchlab SQLite file (opened read-only)"),
            out: Path = typer.Option(None, help="directory to write every table into"),
            fmt: str = typer.Option("csv", "--format", help="csv, parquet or json")):
    """Read a store and print what it holds; optionally write its tables out."""
    from thatchlab.store import import_sqlite

    contents = import_sqlite(path)
    typer.echo(f"{path}")
    if contents.meta:
        typer.echo(f"  thatchlab export, model {contents.meta.get('model')!r}, "
                   f"engines {contents.meta.get('engines')}")
    for key in ("prediction", "behavior"):
        eng = getattr(contents, key)
        if eng is None:
            continue
        tables = eng.tables
        counts = ", ".join(f"{name} {len(df)}" for name, df in tables.items())
        typer.echo(f"  {key}: {counts}")
        if out is not None:
            for name, df in tables.items():
                _write_frame(df, out / f"{key}_{name}.{fmt}")
    for key in ("beliefs", "calibration", "patterns"):
        obj = getattr(contents, key)
        if obj is None:
            continue
        frames = obj if isinstance(obj, dict) else {key: getattr(obj, "frame", obj)}
        for name, df in frames.items():
            if hasattr(df, "to_csv"):
                typer.echo(f"  {key}: {name} {len(df)}")
                if out is not None:
                    _write_frame(df, out / f"{name}.{fmt}")
    if out is not None:
        typer.echo(f"tables written to {out}")


@app.command()
def merge(export: Path = typer.Argument(..., help="a thatchlab export"),
          production: Path = typer.Argument(..., help="the production thatch file to update"),
          backup: bool = typer.Option(True, help="keep <production>.bak")):
    """Replace the exported engines' rows in a production file, keeping every other table."""
    from thatchlab.store import merge_into

    res = merge_into(export, production, backup=backup)
    for table, n in res.replaced.items():
        typer.echo(f"  {table}: {res.removed.get(table, 0)} rows replaced by {n}")
    typer.echo(f"merged {', '.join(res.engines)} into {res.path}"
               + (f" (backup: {res.backup_path})" if res.backup_path else ""))


# ----------------------------------------------------------------- shared helpers of the verbs
_SCORING = ("prediction", "behavior")
_REPLAY_ENGINES = ("prediction", "behavior", "belief", "calibration", "anticipation")
_TIME_UNITS = ("ms", "s", "m", "min", "h", "d", "w")


def _choice(option: str, value: str, allowed) -> str:
    from thatchlab.core.errors import InputError

    if value not in allowed:
        raise InputError(f"{option}: expected one of {', '.join(allowed)}, got {value!r}")
    return value


def _is_sqlite(path: Path) -> bool:
    """True when ``path`` has a SQLite suffix or starts with SQLite's file header."""
    if Path(path).suffix.lower() in (".db", ".sqlite", ".sqlite3"):
        return True
    try:
        with open(path, "rb") as fh:
            return fh.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def _read_mapping(path: Path, what: str) -> dict:
    """A JSON or TOML file (by suffix) holding a mapping."""
    import json

    from thatchlab.core.errors import InputError

    if not Path(path).is_file():
        raise InputError(f"{path}: no such {what} file")
    try:
        text = Path(path).read_text(encoding="utf-8")
        if Path(path).suffix.lower() == ".toml":
            import tomllib

            data = tomllib.loads(text)
        else:
            data = json.loads(text)
    except (ValueError, OSError) as exc:
        raise InputError(f"{path}: cannot read the {what} ({exc}); expected JSON or TOML") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a mapping in the {what} file, got {type(data).__name__}")
    return data


def _engine_params(engine: str, path: Path | None):
    """Parameters of ``engine`` from a config file.

    The file is either ``thatchlab run``'s per-engine config (``{engine: {...}}``,
    other sections ignored) or a flat mapping of this engine's parameters.
    """
    from thatchlab.core.errors import ParamsError
    from thatchlab.run import _PARAMS

    cls = _PARAMS[engine]
    if path is None:
        return cls()
    cfg = _read_mapping(path, "config")
    sections = set(_PARAMS) | {"sweep"}
    if set(cfg) <= sections and all(isinstance(v, dict) for v in cfg.values()):
        cfg = cfg.get(engine, {})
    try:
        return cls.from_dict(cfg)
    except ParamsError as exc:
        raise ParamsError(f"{path}: {exc}") from None


def _embedder(lookup: Path | None):
    """A LookupEmbedder from a ``text, embedding`` table, else the bundled model."""
    if lookup is None:
        from thatchlab.embed import default_embedder

        return default_embedder()
    from thatchlab.core.errors import InputError
    from thatchlab.embed import LookupEmbedder
    from thatchlab.logs import read_table

    table = read_table(lookup, json_columns=["embedding"])
    missing = {"text", "embedding"} - set(table.columns)
    if missing:
        raise InputError(f"{lookup}: missing column(s) {sorted(missing)}; expected a table with text and embedding")
    return LookupEmbedder(table[["text", "embedding"]], name=Path(lookup).stem)


def _load_log(engine: str, path: Path, recalls: Path | None = None):
    """Read and validate the log ``engine`` replays (anticipation: the two streams)."""
    from thatchlab import logs
    from thatchlab.core.errors import InputError

    if engine in _SCORING:
        return logs.read_interaction_log(path)
    if engine == "belief":
        return logs.read_memory_log(path)
    if engine == "calibration":
        return logs.read_recall_log(path)
    if recalls is None:
        raise InputError("--recalls: the anticipation engine needs the recall stream (LOG is the event stream)")
    return logs.read_event_log(path), logs.read_recall_stream(recalls)


def _fmt_value(v) -> str:
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def _echo_pairs(pairs) -> None:
    """Print ``name value`` lines with the names padded to one width."""
    pairs = list(pairs)
    width = max((len(str(k)) for k, _ in pairs), default=0)
    for k, v in pairs:
        typer.echo(f"{str(k):<{width}}  {_fmt_value(v)}")


def _check_out(*paths) -> None:
    """Fail before any work when an output file has an unknown suffix."""
    from thatchlab.core.errors import InputError

    for path in paths:
        if path is not None and Path(path).suffix.lower() not in (".csv", ".parquet", ".json"):
            raise InputError(f"{path}: unknown output format {Path(path).suffix!r}; "
                             "expected .csv, .parquet or .json")


def _write_out(df, path: Path) -> None:
    """:func:`_write_frame`, turning the writers' own errors into one clear InputError."""
    from thatchlab.core.errors import InputError, ThatchlabError

    try:
        _write_frame(df, path)
    except ThatchlabError:
        raise
    except Exception as exc:  # pyarrow / OS errors
        raise InputError(f"{path}: cannot write ({type(exc).__name__}: {exc})") from None


def _parse_time(value: str | None, option: str):
    from thatchlab.core.time import as_utc

    return None if value is None else as_utc(value, what=option)


# ----------------------------------------------------------------- replay
@app.command()
def replay(log: Path = typer.Argument(..., help="the log (JSONL, CSV or Parquet); for anticipation, the event stream"),
           engine: str = typer.Option(..., help="prediction, behavior, belief, calibration or anticipation"),
           recalls: Path = typer.Option(None, help="anticipation: the recall stream"),
           config: Path = typer.Option(None, help="JSON/TOML parameters: {engine: {...}} or this engine's fields"),
           lookup: Path = typer.Option(None, help="prediction/behavior: table of text, embedding used instead "
                                                  "of the bundled model"),
           events_out: Path = typer.Option(None, help="write the per-event outputs (.csv, .parquet or .json)"),
           metrics_out: Path = typer.Option(None, help="write the metrics (.csv, .parquet or .json)")):
    """Replay a log through one engine and print its metrics."""
    import json

    import pandas as pd

    from thatchlab import replay as rp

    _choice("--engine", engine, _REPLAY_ENGINES)
    _check_out(events_out, metrics_out)
    params = _engine_params(engine, config)
    data = _load_log(engine, log, recalls)
    if engine in _SCORING:
        res = rp.run(data, engine=engine, params=params, embedder=_embedder(lookup))
        events = res.events
    elif engine == "belief":
        res = rp.run_belief(data, params)
        events = res.events
    elif engine == "calibration":
        res = rp.run_calibration(data, params)
        events = res.events
    else:
        res = rp.run_anticipation(*data, params)
        events = res.sessions
    metrics = {k: v for k, v in res.metrics.items() if v is None or isinstance(v, (int, float, str))}
    _echo_pairs(metrics.items())
    if events_out is not None:
        _write_out(events, events_out)
    if metrics_out is not None:
        if metrics_out.suffix.lower() == ".json":
            metrics_out.parent.mkdir(parents=True, exist_ok=True)
            metrics_out.write_text(json.dumps(metrics, indent=1, default=float) + "\n", encoding="utf-8")
        else:
            def number(v):
                return isinstance(v, (int, float)) and not isinstance(v, bool)

            _write_out(pd.DataFrame({
                "metric": list(metrics),
                "value": pd.Series([float(v) if number(v) else None for v in metrics.values()], dtype="float64"),
                "text": [None if number(v) or v is None else str(v) for v in metrics.values()]}), metrics_out)


# ----------------------------------------------------------------- sweep
def _space(text: str) -> dict:
    """A search space from JSON text or a JSON/TOML file; ``{"low", "high", "log"}`` objects become ranges."""
    import json

    from thatchlab.core.errors import InputError

    if not text.lstrip().startswith(("{", "[")):
        space = _read_mapping(Path(text), "space")
    else:
        try:
            space = json.loads(text)
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


@app.command()
def sweep(log: Path = typer.Argument(..., help="the engine's log; for anticipation, the event stream"),
          engine: str = typer.Option(..., help="prediction, behavior, belief, calibration or anticipation"),
          space: str = typer.Option(..., help="JSON text or a JSON/TOML file: parameter → list of values "
                                              "(or {\"low\": a, \"high\": b, \"log\": true} for random/optuna)"),
          metric: str = typer.Option(..., help="the metric to optimise (direction taken from the engine)"),
          search: str = typer.Option("grid", help="grid, random or optuna"),
          n_trials: int = typer.Option(None, help="configurations drawn by random or optuna search"),
          holdout: float = typer.Option(0.2, help="fraction of the log in each of validation and test"),
          seed: int = typer.Option(0, help="seed of random search and optuna"),
          recalls: Path = typer.Option(None, help="anticipation: the recall stream"),
          config: Path = typer.Option(None, help="JSON/TOML base parameters for the fields not swept"),
          lookup: Path = typer.Option(None, help="prediction/behavior: table of text, embedding"),
          cache: Path = typer.Option(None, help="Parquet file of finished configurations (resumes a rerun)"),
          out: Path = typer.Option(None, help="write every configuration's row (.csv, .parquet or .json)")):
    """Score a parameter space out of sample and print the best configuration."""
    from thatchlab.core.errors import InputError
    from thatchlab.tune import best, get_engine
    from thatchlab.tune import sweep as run_sweep

    _choice("--engine", engine, _REPLAY_ENGINES)
    _choice("--search", search, ("grid", "random", "optuna"))
    _check_out(out)
    directions = get_engine(engine).metrics
    if metric not in directions:
        raise InputError(f"--metric: engine {engine!r} has no metric {metric!r}; expected one of "
                         f"{', '.join(directions)}")
    grid = _space(space)
    base = _engine_params(engine, config)
    data = _load_log(engine, log, recalls)
    results = run_sweep(data, grid, metric, engine=engine, search=search, n_trials=n_trials, holdout=holdout,
                        seed=seed, cache=None if cache is None else str(cache), base=base,
                        embedder=_embedder(lookup) if engine in _SCORING else None)
    winner = best(results, metric, minimize=directions[metric] == "min")
    typer.echo(f"{len(results)} configurations of {engine}; best by validation {metric} "
               f"({'lower' if directions[metric] == 'min' else 'higher'} is better):")
    _echo_pairs([(k, getattr(winner.params, k)) for k in grid]
                + [(f"val_{metric}", winner.val), (f"test_{metric}", winner.test)])
    if out is not None:
        _write_out(results, out)


# ----------------------------------------------------------------- fit
@app.command()
def fit(what: str = typer.Argument(..., help="prior, halflife or derive"),
        input: Path = typer.Argument(..., help="prior: a thatch store or an interaction log; halflife: a memory "
                                               "log; derive: a recall log"),
        engine: str = typer.Option("prediction", help="prior from an interaction log: prediction or behavior"),
        lookup: Path = typer.Option(None, help="prior from an interaction log: table of text, embedding"),
        out: Path = typer.Option(None, help="write the fitted summary (.csv, .parquet or .json)")):
    """Fit the prior (K, P0), the belief half-lives or the derive coefficients and print the summary."""
    import pandas as pd

    from thatchlab import logs
    from thatchlab.tune import DeriveWeightsFitter, HalfLifeFitter, PriorFitter

    _choice("WHAT", what, ("prior", "halflife", "derive"))
    _check_out(out)
    if what == "prior":
        _choice("--engine", engine, _SCORING)
        if _is_sqlite(input):
            signals = logs.signals_from_store(input)
            signals = signals[signals["kind"] == engine]
            fitter = PriorFitter().fit(signals)
        else:
            from thatchlab.replay import run as run_replay

            res = run_replay(logs.read_interaction_log(input), engine=engine, embedder=_embedder(lookup))
            prov = res.tables["provenance"].rename(columns={f"{engine}_id": "item_id"})
            fitter = PriorFitter(soft_weight=res.params.soft_weight).fit(prov[["item_id", "signal"]])
    elif what == "halflife":
        fitter = HalfLifeFitter().fit_from_log(logs.read_memory_log(input))
    else:
        fitter = DeriveWeightsFitter().fit(logs.read_recall_log(input))
    summary = fitter.summary_
    typer.echo(summary.to_string(float_format=lambda x: f"{x:.6g}"))
    if out is not None:
        if summary.index.name is None and not isinstance(summary.index, pd.RangeIndex):
            summary = summary.rename_axis("param")
        _write_out(summary.reset_index() if summary.index.name else summary, out)


# ----------------------------------------------------------------- calibrate
@app.command()
def calibrate(input: Path = typer.Argument(..., help="a recall log, or an ai-memory SQLite database"),
              days: float = typer.Option(30.0, help="window in days (observed_at >= now - days)"),
              now: str = typer.Option(None, help="aware ISO time closing the window (default: a recall log's "
                                                 "last replayed report; a database's last observation)"),
              json_: bool = typer.Option(False, "--json", help="print the report as JSON")):
    """Print the confidence calibration report of a recall log's replay or of an ai-memory database."""
    from thatchlab.calibration import calibrate_from_shadow

    at = _parse_time(now, "--now")
    if _is_sqlite(input):
        from thatchlab.logs.ai_memory import read_shadow_observations

        obs = read_shadow_observations(input)
        if at is None:
            at = obs["observed_at"].max() if len(obs) else _epoch()
        report = calibrate_from_shadow(obs, at, days=days)
    else:
        from thatchlab.core.params import CalibrationParams
        from thatchlab.logs import read_recall_log
        from thatchlab.replay import run_calibration

        res = run_calibration(read_recall_log(input), CalibrationParams(window_days=days))
        obs = res.state.observations
        if at is None and res.reports:
            report = res.reports[-1]
        else:
            if at is None:
                at = obs["observed_at"].max() if len(obs) else _epoch()
            report = calibrate_from_shadow(obs, at, days=days)
    typer.echo(report.to_json(indent=1) if json_ else report.to_ascii().rstrip("\n"))


def _epoch():
    """The Unix epoch in UTC (the window's end when there is nothing to report)."""
    import pandas as pd

    return pd.Timestamp(0, tz="UTC")


# ----------------------------------------------------------------- mine
@app.command()
def mine(events: Path = typer.Argument(..., help="the event stream (JSONL, CSV or Parquet)"),
         recalls: Path = typer.Argument(..., help="the recall stream (JSONL, CSV or Parquet)"),
         now: str = typer.Option(None, help="aware ISO time; patterns are mined over [now - lookback, now) "
                                            "(default: one second after the last event or recall)"),
         mode: str = typer.Option("fraction", help="sequential confidence: fraction or seed"),
         window: str = typer.Option("24h", help="how soon B must follow A (e.g. 24h, 90min)"),
         lookback: str = typer.Option("30d", help="how far back to mine"),
         out: Path = typer.Option(None, help="write the patterns (.csv, .parquet or .json)")):
    """Mine sequential, periodic, conditional and co-occurrence patterns and count them."""
    import pandas as pd

    from thatchlab.anticipation import PATTERN_TYPES
    from thatchlab.anticipation import mine as mine_all
    from thatchlab.core.params import AnticipationParams
    from thatchlab.logs import read_event_log, read_recall_stream

    _choice("--mode", mode, ("fraction", "seed"))
    _check_out(out)
    params = AnticipationParams(window=window, lookback=lookback, mode=mode)
    ev, rc = read_event_log(events), read_recall_stream(recalls)
    at = _parse_time(now, "--now")
    if at is None:
        last = pd.concat([ev["ts"], rc["ts"]]).max()
        at = _epoch() if pd.isna(last) else last + pd.Timedelta(seconds=1)
    patterns = mine_all(ev, rc, at, params)
    counts = patterns["type"].value_counts()
    typer.echo(f"patterns mined over [{(at - pd.Timedelta(lookback)).isoformat()}, {at.isoformat()}):")
    _echo_pairs([(t, int(counts.get(t, 0))) for t in PATTERN_TYPES] + [("total", len(patterns))])
    if out is not None:
        patterns = patterns.copy()
        patterns.attrs = {}
        _write_out(patterns, out)


# ----------------------------------------------------------------- export
@app.command()
def export(log: Path = typer.Argument(..., help="an interaction log (JSONL, CSV or Parquet)"),
           engine: str = typer.Option(..., help="prediction or behavior"),
           out: Path = typer.Option(..., help="the SQLite file to write"),
           params: Path = typer.Option(None, help="JSON/TOML parameters of the engine (replay and export)"),
           overwrite: bool = typer.Option(False, help="replace an existing file"),
           production_model: str = typer.Option(None, help="the embedding model production will use"),
           allow_model_mismatch: bool = typer.Option(False, help="export even if the vectors' model differs"),
           lookup: Path = typer.Option(None, help="table of text, embedding used instead of the bundled model")):
    """Replay an interaction log and export the final state as a production SQLite store."""
    from thatchlab.core.errors import ExportExistsError
    from thatchlab.replay import run as run_replay
    from thatchlab.replay.scoring import engine_class
    from thatchlab.store import export_sqlite

    _choice("--engine", engine, _SCORING)
    p = _engine_params(engine, params)
    emb = _embedder(lookup)
    res = run_replay(_load_log(engine, log), engine=engine, params=p, embedder=emb)
    state = engine_class(engine).from_tables(res.tables, embedder=emb, params=res.params)
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        result = export_sqlite(out, **{engine: state}, params={engine: p}, overwrite=overwrite,
                               production_model=production_model, allow_model_mismatch=allow_model_mismatch)
    except ExportExistsError:
        raise ExportExistsError(f"{out}: the file exists; pass --overwrite to replace it") from None
    _echo_pairs(sorted(result.counts.items()))
    typer.echo(f"exported {', '.join(result.engines)} (model {result.model!r}) to {result.path}; "
               f"manifest: {result.manifest_path}")


# ----------------------------------------------------------------- synth
@app.command()
def synth(kind: str = typer.Argument(..., help="preference, behavior, belief, recall or patterns"),
          out: Path = typer.Option(..., help="the log file (.jsonl, .csv or .parquet); patterns writes "
                                             "<stem>.events<suffix> and <stem>.recalls<suffix>"),
          seed: int = typer.Option(0, help="seed of the world's generator"),
          size: int = typer.Option(None, help="sessions (preference, behavior), memories (belief), recall "
                                              "rows (recall) or days (patterns)")):
    """Write a synthetic log from a seeded world with planted ground truth."""
    from thatchlab import logs
    from thatchlab import synth as worlds
    from thatchlab.core.errors import InputError

    _choice("KIND", kind, ("preference", "behavior", "belief", "recall", "patterns"))
    if size is not None and size < 1:
        raise InputError(f"--size: expected an integer >= 1, got {size}")
    logs.log_format(out)  # fail on an unknown suffix before generating anything
    out.parent.mkdir(parents=True, exist_ok=True)
    written = []
    if kind == "preference":
        log = worlds.PreferenceWorld(seed=seed).log(size or 100)
        written.append((logs.write_interaction_log(log, out), len(log)))
    elif kind == "behavior":
        log = worlds.BehaviorWorld(seed=seed).log(size or 60)
        written.append((logs.write_interaction_log(log, out), len(log)))
    elif kind == "belief":
        log = worlds.BeliefWorld(seed=seed).log(n_memories=size or 100)
        written.append((logs.write_memory_log(log, out), len(log)))
    elif kind == "recall":
        n = size or 1500
        log = worlds.RecallWorld(n_memories=max(10, n // 10), n_recalls=n, seed=seed).log
        written.append((logs.write_table(log, out), len(log)))
    else:
        ev, rc = worlds.PatternWorld(n_workspaces=2, days=size or 28, seed=seed).generate()
        for name, df in (("events", ev), ("recalls", rc)):
            written.append((logs.write_stream(df, out.with_name(f"{out.stem}.{name}{out.suffix}")), len(df)))
    for path, n in written:
        typer.echo(f"wrote {n} rows to {path}")


def main(argv=None):
    """Entry point: run the app, turning thatchlab errors into one clear line."""
    try:
        app(args=argv, standalone_mode=False)
    except ThatchlabError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except (typer.Abort, KeyboardInterrupt):
        typer.echo("aborted", err=True)
        sys.exit(130)
    except Exception as exc:  # usage errors of the (vendored) click parser
        if hasattr(exc, "show") and hasattr(exc, "exit_code"):
            msg = exc.format_message() if hasattr(exc, "format_message") else str(exc)
            if msg:
                typer.echo(f"error: {msg} (see --help)", err=True)
            sys.exit(exc.exit_code or 2)
        if type(exc).__name__ == "Exit" and hasattr(exc, "exit_code"):
            sys.exit(exc.exit_code)
        if isinstance(exc, OSError):  # unreadable/unwritable paths, full disks
            typer.echo(f"error: {exc}", err=True)
            sys.exit(2)
        if os.environ.get("THATCHLAB_DEBUG"):
            raise
        msg = " ".join(str(exc).split()) or "no message"
        typer.echo(f"error: unexpected {type(exc).__name__}: {msg} (set THATCHLAB_DEBUG=1 for the traceback)",
                   err=True)
        sys.exit(1)


if __name__ == "__main__":  # pragma: no cover
    main()
