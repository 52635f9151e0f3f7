"""The ``thatchlab`` command: replay logged agent-memory traffic through the engines, tune and export them.

``thatchlab run`` does the whole job on a directory of sample logs: it
replays every engine, sweeps and fits their parameters, writes an HTML
report and exports the tuned store for production. The other verbs
(``replay``, ``sweep``, ``fit``, ``calibrate``, ``mine``, ``export``,
``import``, ``merge``, ``synth``, ``demo``) each do one of those steps;
``thatchlab VERB --help`` lists a verb's options.
"""

from thatchlab.cli._app import app, main

__all__ = ["app", "main"]
