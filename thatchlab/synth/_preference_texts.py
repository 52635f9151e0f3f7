"""Our own situation, preference and behavior texts for the synthetic worlds.

Each situation has several ways of saying it (so matchers, prompts and the
embedder's notion of similarity matter), two competing preferences a user may
hold, and one agent behavior that genuinely helps there.
"""

from __future__ import annotations

#: (ways of naming the situation, preference A, preference B, a helpful behavior)
SITUATIONS = [
    (("writing unit tests", "adding tests for a module", "creating test cases"),
     "use pytest with plain assert statements", "use unittest TestCase classes",
     "run the whole test file after adding a case"),
    (("reviewing a pull request", "looking over a colleague's patch", "doing a code review"),
     "leave comments inline on the diff", "summarise the review in one message",
     "read the linked issue before commenting"),
    (("naming a git branch", "creating a new branch", "picking a branch name"),
     "prefix branches with the ticket number", "use short descriptive branch names",
     "check the branch list for an existing name"),
    (("writing a commit message", "committing staged changes", "describing a commit"),
     "write commit subjects in the imperative mood", "start commits with a conventional type tag",
     "show the staged diff before committing"),
    (("formatting SQL queries", "writing a database query", "laying out a SELECT statement"),
     "write SQL keywords in upper case", "write SQL keywords in lower case",
     "explain the query plan for slow queries"),
    (("choosing a logging level", "adding log statements", "instrumenting code with logs"),
     "log routine events at debug level", "log routine events at info level",
     "avoid logging secrets or tokens"),
    (("storing configuration", "adding a settings file", "handling app configuration"),
     "keep configuration in TOML files", "keep configuration in environment variables",
     "document every new setting in the README"),
    (("plotting experiment results", "making a chart of the metrics", "visualising benchmark numbers"),
     "use matplotlib with a white background", "use seaborn with its default theme",
     "label both axes with units"),
    (("documenting a public function", "writing a docstring", "adding API documentation"),
     "write numpydoc style docstrings", "write short Google style docstrings",
     "include a runnable example in the docstring"),
    (("setting up a Python environment", "creating a virtualenv", "installing project dependencies"),
     "use uv to manage the environment", "use plain pip and venv",
     "pin dependency versions in a lock file"),
    (("refactoring a long function", "splitting up a big method", "cleaning up tangled code"),
     "extract small private helper functions", "keep the logic inline with comments",
     "run the tests before and after the refactor"),
    (("handling an HTTP timeout", "dealing with a slow API call", "retrying a failed request"),
     "retry with exponential backoff", "fail fast and report the error",
     "set an explicit timeout on every request"),
    (("saving data to disk", "serialising results to a file", "persisting intermediate outputs"),
     "save tables as parquet files", "save tables as CSV files",
     "write files atomically through a temp file"),
    (("formatting dates in output", "printing timestamps", "showing times to the user"),
     "show dates in ISO 8601 format", "show dates in a friendly long form",
     "always state the time zone"),
    (("naming variables", "choosing identifiers", "picking names for new functions"),
     "use long descriptive names", "use short conventional names",
     "follow the naming already used in the file"),
    (("writing the project README", "updating the readme file", "explaining how to install the project"),
     "put a quick start example at the top", "start with a detailed overview section",
     "test every command shown in the README"),
    (("handling secrets", "storing API keys", "managing credentials for a service"),
     "read secrets from a vault at run time", "read secrets from a local dotenv file",
     "never print credentials in the terminal"),
    (("scheduling a batch job", "setting up a nightly task", "running work on a timer"),
     "schedule jobs with cron", "schedule jobs with a workflow orchestrator",
     "make the job safe to run twice"),
    (("handling errors in a script", "adding exception handling", "catching failures in code"),
     "raise specific exception classes", "return error codes instead of raising",
     "keep the original traceback when re-raising"),
    (("writing a data pipeline", "building an ETL step", "transforming raw records"),
     "use pandas dataframes for the transforms", "use plain Python loops and dicts",
     "validate the input schema first"),
]

#: Ways a matcher ("when ...") is phrased; ``{s}`` is a name of the situation.
MATCHER_TEMPLATES = ("{s}", "when {s}", "whenever the user is {s}", "while {s}", "if the task is {s}")
#: Ways a user prompt mentions the situation.
PROMPT_TEMPLATES = ("can you help me with {s}?", "I'm {s} right now", "next up: {s}",
                    "let's get going on {s}", "I need a hand with {s} today", "time for {s}, please assist")
