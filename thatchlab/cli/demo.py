"""A short scripted session through both scoring engines with the real model.

Used by ``thatchlab demo``: it writes a few predictions and behaviors,
seeds the default behaviors, nudges a handful of prompts, and exports the
resulting store, so a newcomer sees the engines' real texts in seconds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import pandas as pd

from thatchlab.embed import default_embedder
from thatchlab.scoring import BehaviorEngine, PredictionEngine
from thatchlab.store import export_sqlite

__all__ = ["run_demo", "DemoResult", "DEMO_START"]

#: Demo time starts here and advances one minute per step (engines never read the clock).
DEMO_START = pd.Timestamp("2026-01-05T09:00:00Z")


@dataclass
class DemoResult:
    """What :func:`run_demo` did: the engines' replies, the nudges, and where the store went.

    Parameters
    ----------
    replies : list of str, default=[]
        The reply text of every write, in order (predictions, then behaviors and feedback).
    nudges : list of tuple, default=[]
        ``(prompt, prediction Nudge, behavior Nudge)`` for each scripted prompt.
    export_path : pathlib.Path or None, default=None
        The exported ``thatch.db``.
    manifest_path : pathlib.Path or None, default=None
        Its manifest.

    See Also
    --------
    run_demo : the session that fills it.
    """

    replies: list = field(default_factory=list)
    nudges: list = field(default_factory=list)   # (prompt, prediction Nudge, behavior Nudge)
    export_path: Path | None = None
    manifest_path: Path | None = None

    def text(self) -> str:
        """The demo as ``thatchlab demo`` prints it.

        Returns
        -------
        str
            The writes' replies, each prompt with the blocks both engines
            surfaced ("(nothing surfaced)" when neither did), then the export's paths.
        """
        lines = ["# Writes"] + [f"  {r}" for r in self.replies] + ["", "# Nudges"]
        for prompt, pn, bn in self.nudges:
            lines.append(f'> "{prompt}"  (predictions: {pn.regime}, behaviors: {bn.regime})')
            for block in (pn.text, bn.text):
                if block:
                    lines.extend("  " + ln for ln in block.splitlines())
            if not pn.text and not bn.text:
                lines.append("  (nothing surfaced)")
        if self.export_path is not None:
            lines += ["", f"Exported store: {self.export_path}", f"Manifest:       {self.manifest_path}"]
        return "\n".join(lines)


def _script() -> dict:
    return json.loads(resources.files("thatchlab").joinpath("data/demo_session.json").read_text("utf-8"))


def run_demo(out_dir="reports/demo", embedder=None, version: str = "0.1.0") -> DemoResult:
    """Run the scripted session and export ``<out_dir>/thatch.db`` (replacing an earlier demo).

    The script writes a few predictions and behaviors, seeds the default
    behaviors, gives feedback and nudges a handful of prompts; time starts at
    :data:`DEMO_START` and advances one minute per step.

    Parameters
    ----------
    out_dir : str or path-like, default="reports/demo"
        The folder the store and its manifest are exported to (made when missing).
    embedder : Embedder, optional
        The embedder of both engines (default: the bundled model,
        :func:`thatchlab.embed.default_embedder`).
    version : str, default="0.1.0"
        The seed version stamped on the default behaviors.

    Returns
    -------
    DemoResult
        The replies, the nudges and the export's paths.
    """
    emb = embedder if embedder is not None else default_embedder()
    script = _script()
    step = iter(range(10_000))

    def now():
        return DEMO_START + pd.Timedelta(minutes=next(step))

    pred = PredictionEngine(emb, project_store="demo-repo")
    beh = BehaviorEngine(emb, project_store="demo-repo")
    res = DemoResult()
    for row in script["predictions"]:
        res.replies.append(pred.update(row["matcher"], row["prediction"], row["signal"], row["rationale"],
                                       now=now()).text)
    beh.seed_defaults(version, now=now())
    for row in script["behaviors"]:
        res.replies.append(beh.codify(row["situation"], row["behavior"], row["rationale"], now=now()).text)
    for row in script["feedback"]:
        res.replies.append(beh.feedback(row["behavior"], row["relevant"], row["context"], now=now()).text)
    for prompt in script["prompts"]:
        res.nudges.append((prompt, pred.nudge(prompt), beh.nudge(prompt)))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    exported = export_sqlite(out / "thatch.db", prediction=pred, behavior=beh, overwrite=True)
    res.export_path, res.manifest_path = exported.path, exported.manifest_path
    return res
