"""A sweep result on disk: its rows, and beside them what :func:`~thatchlab.decide.decide` needs.

A sweep frame's rows fit any table format, but a decision also needs the
frame's ``attrs``: the per-session sums of every configuration
(:class:`~thatchlab.sweep.ClusterStats`), the holdout, which metrics were
scored and which parameters they cannot see. :func:`save_sweep` writes the
rows (CSV, Parquet or JSON, by suffix) and ``<rows>.decide.npz`` beside them
(the sums in their compact form and the other attrs as JSON);
:func:`load_sweep` reads both back into a frame ``decide`` takes.

>>> import tempfile, pathlib, numpy as np
>>> from thatchlab.decide import decide, planted_sweep
>>> frame = planted_sweep(12, -0.05, np.random.default_rng(1))
>>> with tempfile.TemporaryDirectory() as tmp:
...     path = save_sweep(frame, pathlib.Path(tmp) / "rows.csv")
...     back = load_sweep(path)
>>> decide(back, "log_loss", n_boot=200).params == decide(frame, "log_loss", n_boot=200).params
True
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from thatchlab.core.errors import InputError
from thatchlab.sweep.resampling import ClusterStats

__all__ = ["save_sweep", "load_sweep", "sidecar_path"]

_KIND = "thatchlab.sweep-sums"


def sidecar_path(path) -> Path:
    """Where :func:`save_sweep` puts the sums of the rows at ``path``: ``<path>.decide.npz``.

    Parameters
    ----------
    path : str or Path
        The rows' file.

    Returns
    -------
    Path
        The sidecar's path.
    """
    path = Path(path)
    return path.with_name(path.name + ".decide.npz")


def _key(metric: str, segment: str) -> str:
    return f"{metric}\x1f{segment}"


_SUFFIXES = (".csv", ".parquet", ".json")


def _suffix(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in _SUFFIXES:
        raise InputError(f"{path}: unknown sweep format {suffix!r}; expected .csv, .parquet or .json")
    return suffix


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def save_sweep(results: pd.DataFrame, path) -> Path:
    """Write a sweep's rows to ``path`` (``.csv``, ``.parquet`` or ``.json``) and its sums beside them.

    Parameters
    ----------
    results : DataFrame
        A sweep result (its ``attrs`` go to the sidecar, :func:`sidecar_path`).
    path : str or Path
        The rows' file; the suffix picks the format.

    Returns
    -------
    Path
        The rows' path.

    Raises
    ------
    InputError
        When the suffix is not ``.csv``, ``.parquet`` or ``.json``.

    See Also
    --------
    load_sweep : Read them back.

    Examples
    --------
    >>> import tempfile, pathlib, numpy as np
    >>> from thatchlab.decide import planted_sweep
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = save_sweep(planted_sweep(8, 0.0, np.random.default_rng(0)), pathlib.Path(tmp) / "r.csv")
    ...     path.name, sidecar_path(path).exists()
    ('r.csv', True)
    """
    path = Path(path)
    suffix = _suffix(path)
    rows = pd.DataFrame(results)
    rows.attrs = {}
    buf = io.BytesIO()
    if suffix == ".csv":
        buf.write(rows.to_csv(index=False, quoting=csv.QUOTE_NONNUMERIC).encode("utf-8"))
    elif suffix == ".parquet":
        rows.to_parquet(buf, index=False)
    else:
        buf.write(rows.to_json(orient="records", indent=1).encode("utf-8"))
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_atomic(path, buf.getvalue())
    stats = results.attrs.get("clusters")
    attrs = {k: v for k, v in results.attrs.items() if k != "clusters"}
    arrays = {"meta": np.frombuffer(json.dumps({"kind": _KIND, "attrs": attrs}, default=str).encode(), np.uint8)}
    if stats is not None:
        arrays["stats"] = np.frombuffer(json.dumps({
            "unit": stats.unit, "config_ids": list(stats.config_ids),
            "segments": list(stats.distinct), "keys": [list(k) for k in stats.num_index]}).encode(), np.uint8)
        for seg, rows in stats.distinct.items():
            arrays[f"distinct/{seg}"] = rows
            arrays[f"labels/{seg}"] = np.asarray(stats.labels[seg]).astype(str)
        for k in stats.num_index:
            arrays[f"num/{_key(*k)}"] = stats.num_index[k]
            arrays[f"den/{_key(*k)}"] = stats.den_index[k]
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    _write_atomic(sidecar_path(path), buf.getvalue())
    return path


def load_sweep(path) -> pd.DataFrame:
    """Read rows written by :func:`save_sweep` (or ``thatchlab sweep --out``) with their attrs.

    The sidecar must be there: without it the rows would carry no sums, and a decision needs them.

    Parameters
    ----------
    path : str or Path
        The rows' file.

    Returns
    -------
    DataFrame
        The rows with their attrs (``clusters`` a :class:`~thatchlab.sweep.ClusterStats`).

    Raises
    ------
    InputError
        When the file is missing, unreadable or of an unknown format, or its sidecar is missing
        or unreadable.

    See Also
    --------
    save_sweep : Write them.

    Examples
    --------
    >>> import tempfile, pathlib, numpy as np
    >>> from thatchlab.decide import planted_sweep
    >>> frame = planted_sweep(8, 0.0, np.random.default_rng(0))
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     back = load_sweep(save_sweep(frame, pathlib.Path(tmp) / "r.parquet"))
    >>> back.attrs["clusters"].unit, back["config_id"].tolist() == frame["config_id"].tolist()
    ('session', True)
    """
    path = Path(path)
    suffix = _suffix(path)
    if path.is_dir():
        raise InputError(f"{path}: is a directory; expected a sweep's rows file")
    if not path.is_file():
        raise InputError(f"{path}: no such sweep file")
    try:
        frame = (pd.read_csv(path, keep_default_na=True) if suffix == ".csv" else
                 pd.read_parquet(path) if suffix == ".parquet" else pd.read_json(path, orient="records"))
    except Exception as exc:  # the readers' own errors: one clear line
        raise InputError(f"{path}: not a readable sweep table ({type(exc).__name__}: {exc})") from None
    side = sidecar_path(path)
    if not side.is_file():
        raise InputError(f"{path}: no {side.name} beside it: a decision needs each configuration's "
                         "per-session sums, which `thatchlab sweep --out ROWS` (thatchlab.sweep.save_sweep) writes there")
    try:
        with np.load(side, allow_pickle=False) as z:
            meta = json.loads(bytes(z["meta"]).decode())
            if meta.get("kind") != _KIND:
                raise ValueError("not a thatchlab sweep sidecar")
            frame.attrs.update(meta["attrs"])
            if "stats" in z:
                st = json.loads(bytes(z["stats"]).decode())
                keys = [tuple(k) for k in st["keys"]]
                frame.attrs["clusters"] = ClusterStats.from_rows(
                    st["unit"], {s: z[f"labels/{s}"] for s in st["segments"]}, st["config_ids"],
                    {s: z[f"distinct/{s}"] for s in st["segments"]},
                    {k: z[f"num/{_key(*k)}"] for k in keys}, {k: z[f"den/{_key(*k)}"] for k in keys})
    except InputError:
        raise
    except (MemoryError, RecursionError, Exception) as exc:  # truncated zip, bad arrays, missing keys...
        raise InputError(f"{side}: not a readable sweep sidecar ({type(exc).__name__}: "
                         f"{' '.join(str(exc).split())[:200]}); expected the .decide.npz `thatchlab sweep --out` "
                         "writes beside its rows") from None
    if "config_id" in frame.columns:
        frame["config_id"] = frame["config_id"].astype(str)
    return frame
