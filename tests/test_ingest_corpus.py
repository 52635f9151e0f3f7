"""Ingest over a corpus of transcripts in the shapes real Claude Code (1.0.98 – 2.1.229) and opencode files have.

The corpus (``tests/data/ingest_corpus``, built by ``make_corpus.py`` there; its README cites the public
fixtures and source each shape comes from) holds 25 transcript files in 18 cases. Every number below is
written by hand from what each case was built to hold (see the case's docstring in ``make_corpus.py``),
not read back from the code under test.

Shapes and the sources they come from (repo, path, commit):

- queued prompts: ``queue-operation`` enqueue (metaphori-ai/claudefu jsonl-examples/main-session/
  queue-operation.jsonl @ad964161; simonw/claude-code-transcripts issue #98), ``remove`` with
  ``reason: "absorbed_mid_turn"`` and no ``user`` record (stablyai/orca PR #16121), ``queued_command``
  attachments without uuid (kenn-io/agentsview PR #406), a dequeue no user record follows
  (anthropics/claude-code issue #86614), a queued ``/compact`` never run (anthropics/claude-code issue #85697);
- sub-agents: ``<session>/subagents/agent-<id>.jsonl`` and ``agent-acompact-<id>.jsonl`` of 2.1.39
  (marot/spotter test/fixtures/transcripts/4d5611e5-…/subagents/ @53a088d2), ``agent-<id>.jsonl`` beside
  the session in 2.0 (jeremedia/claude-code-log-format source-docs/JSONL_LOGGING.md @006ad802), 1.0's
  inline ``isSidechain`` records;
- worktrees: ``cwd`` under ``<repo>-worktrees/`` with its ``gitBranch`` (marot/spotter, as above);
- resumed sessions repeat the earlier records (Lewik/gromozeka docs/session-management.md);
- opencode: ``session_message`` (anomalyco/opencode packages/core/src/session/message.ts @08e3e1f9,
  message-backfill.ts @9a7198e6), the permission refusal text (packages/opencode/src/permission/next.ts
  @0fab91b7).
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from tests._ingest import cli
from thatchlab import logs
from thatchlab.core.errors import StoreSchemaError
from thatchlab.logs import ingest

CORPUS = Path(__file__).resolve().parent / "data" / "ingest_corpus"
COPIED = "record repeated from another session's transcript (resumed or forked: counted where first written)"
SUB = "sub-agent prompt (a delegation from the main agent, not typed by the user)"
NOTICE = "queued host notice (task notification or another session's message)"

#: case → (transcript files, prompts, calls by kind[:signal], not run, skipped, stores, warnings)
EXPECTED = {
    "c01-queue-absorbed": (1, 3, {"prediction_update:create": 1}, {}, {
        "queued prompt taken back to the input box (popAll: never sent)": 1,
        "queued prompt still waiting at the end of the file (never sent)": 1, NOTICE: 1},
        {"acme/orbit": 4}, 0),
    "c02-queue-attachments": (1, 3, {"behavior_feedback": 1}, {}, {
        "queued message from another agent (origin not human)": 1, NOTICE: 1,
        "queued prompt without text (an image or empty)": 1}, {"orbit": 4}, 1),
    "c03-queue-lost": (1, 2, {"prediction_update:confirm": 1}, {}, {
        "queued prompt taken from the queue but never sent (no user record followed)": 1,
        "queued slash command (not a prompt)": 1}, {"orbit": 3}, 1),
    "c04-subagents-2x": (3, 1, {"prediction_query": 1, "prediction_update:confirm": 1}, {}, {
        SUB: 1, "compaction agent prompt (Claude Code's own summary writer)": 1, "meta record": 1,
        "compaction summary": 1}, {"orbit": 3}, 1),
    "c05-sidechain-1x": (1, 1, {"behavior_codify": 1}, {}, {SUB: 1}, {"acme/orbit": 2}, 0),
    "c06-agent-file-20x": (2, 1, {"behavior_list": 1}, {}, {SUB: 1}, {"acme/orbit": 2}, 0),
    "c07-worktrees": (3, 3, {"prediction_update:create": 1, "prediction_update:confirm": 1, "behavior_list": 1}, {},
                      {}, {"acme/lumen": 6}, 0),
    "c08-worktree-beside": (1, 1, {"prediction_update:create": 1}, {}, {}, {"kiln": 2}, 1),
    "c09-resumed": (2, 3, {"prediction_update:create": 1, "prediction_update:confirm": 1}, {}, {COPIED: 5},
                    {"acme/orbit": 5}, 0),
    "c10-forked": (2, 3, {"prediction_update:create": 1, "prediction_update:disconfirm": 1}, {}, {COPIED: 3},
                   {"acme/orbit": 5}, 0),
    "c11-plugin-names": (1, 1, {"prediction_update:soft": 1, "behavior_codify": 1}, {}, {}, {"acme/orbit": 3}, 0),
    "c12-plain-names": (1, 1, {"behavior_codify": 1, "prediction_delete": 1}, {}, {}, {"acme/orbit": 3}, 0),
    "c13-other-server": (1, 1, {}, {}, {}, {"orbit": 1}, 2),
    "c14-never-ran": (1, 1, {"prediction_update:create": 1, "prediction_update:maybe": 1, "prediction_delete": 1,
                             "prediction_list": 1, "behavior_list": 1},
                      {"rejected by the user": 1, "tool error": 2},
                      {"interruption record": 1, "duplicate record": 1, "command or local-command record": 1},
                      {"acme/orbit": 6}, 0),
    "o01-v1-rejected": (1, 1, {"prediction_update:create": 1, "prediction_query": 1, "behavior_codify": 1,
                               "prediction_update:soft": 1}, {"rejected by the user": 1}, {SUB: 1},
                        {"acme/orbit": 5}, 0),
    "o02-v2": (1, 2, {"prediction_update:create": 1, "behavior_feedback": 1}, {"rejected by the user": 1},
               {"shell command (the user's ! command: not a prompt)": 1, "compaction summary": 1}, {"acme/orbit": 4}, 0),
    "o03-v2-backfill": (1, 2, {"prediction_update:create": 1}, {}, {}, {"acme/orbit": 3}, 0),
}


def _ingest(case: Path, **kw):
    return ingest.opencode(case, **kw) if case.name.startswith("o") else ingest.claude_code(case, **kw)


def _calls(log) -> dict:
    rows = log[log["kind"] != "message"]
    return dict(Counter(k if k != "prediction_update" else f"{k}:{s}" for k, s in zip(rows["kind"], rows["signal"])))


def _files(case: Path) -> int:
    return sum(1 for f in case.rglob("*") if f.suffix in (".jsonl", ".db"))


def test_the_corpus_holds_at_least_twenty_transcripts():
    assert sum(_files(CORPUS / c) for c in EXPECTED) + _files(CORPUS / "o04-unknown-schema") == 25


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_case_gives_its_prompts_calls_reasons_and_store(name):
    files, prompts, calls, not_run, skipped, stores, warnings = EXPECTED[name]
    case = CORPUS / name
    res = _ingest(case)
    log = res.log
    assert _files(case) == files
    assert int((log["kind"] == "message").sum()) == prompts
    assert _calls(log) == calls
    assert dict(res.not_run) == not_run
    assert dict(res.skipped) == skipped
    assert dict(Counter(log["store"])) == stores
    assert len(res.warnings) == warnings


def test_queued_prompts_are_rows_with_their_own_time_and_an_unknown_nudge():
    log = _ingest(CORPUS / "c01-queue-absorbed").log
    msgs = log[log["kind"] == "message"]
    assert msgs["text"].tolist() == ["add retries to the upload client", "also cover the retry path in the tests",
                                     "use the staging config"]
    # the absorbed prompt: the attachment's record (the remove repeats it), at the time it was accepted
    assert msgs["ts"].dt.strftime("%H:%M:%S").tolist() == ["10:00:00", "10:01:00", "10:04:21"]
    assert msgs["logged_nudge"].tolist()[0].startswith("[thatch] User decision model")
    assert msgs["logged_nudge"].isna().tolist() == [False, True, True]
    res = _ingest(CORPUS / "c02-queue-attachments")
    assert res.read["queued prompts recorded twice (queue record and attachment: one row)"] == 1
    ids = res.log.loc[res.log["kind"] == "message", "record_id"].tolist()
    assert ids[1].startswith("claude-code-queued:")  # an attachment without a uuid gets a content id


def test_subagent_calls_are_rows_of_the_subagent_in_its_parents_order():
    log = _ingest(CORPUS / "c04-subagents-2x").log
    assert log[["kind", "subagent"]].values.tolist() == [["message", None], ["prediction_query", "task"],
                                                         ["prediction_update", "task"]]
    parent = log["session"].iloc[0]
    assert log["session"].tolist()[1:] == [f"{parent}:a71c0de"] * 2
    side = _ingest(CORPUS / "c05-sidechain-1x").log
    assert side["session"].iloc[1].startswith(side["session"].iloc[0] + ":sidechain-")
    # what each setting does
    every = _ingest(CORPUS / "c04-subagents-2x", subagents="all")
    assert every.log.loc[every.log["kind"] == "message", "text"].tolist() == [
        "find every caller of the retry helper", "List every caller of retry_upload"]
    assert every.skipped["compaction agent prompt (Claude Code's own summary writer)"] == 1  # never a row
    none = _ingest(CORPUS / "c04-subagents-2x", subagents="none")
    assert none.log["kind"].tolist() == ["message"] and none.skipped["subagent transcript file"] == 2
    assert _ingest(CORPUS / "c04-subagents-2x", subagents=True).log.shape == every.log.shape
    oc = _ingest(CORPUS / "o01-v1-rejected", subagents="all").log
    assert oc.loc[oc["subagent"].eq("task"), "kind"].tolist() == ["message", "prediction_update"]


def test_worktrees_share_their_repositorys_store():
    res = _ingest(CORPUS / "c07-worktrees")
    assert res.read["sessions whose store is: named by production in another worktree of the repository"] == 2
    beside = _ingest(CORPUS / "c08-worktree-beside")
    assert beside.warnings[0].startswith("store named after the main checkout of the worktree its sessions ran in "
                                         "for 'kiln'")
    assert ingest.worktree_main("/home/dev/lumen/worktrees/docs-pass") is None  # no branch shown: not a guess


def test_resumed_and_forked_sessions_keep_each_records_first_session(tmp_path):
    for name, first_rows in (("c09-resumed", 3), ("c10-forked", 3)):
        case = CORPUS / name
        log = _ingest(case).log
        files = sorted(case.rglob("*.jsonl"))
        original = min(files, key=lambda f: f.stat().st_size).stem  # the session the other file repeats
        assert int((log["session"] == original).sum()) == first_rows
        # the files renamed so that the order they are listed in flips: the same rows, the same sessions
        flipped = tmp_path / name / "-home-dev-orbit"
        flipped.mkdir(parents=True)
        for f, new in zip(files, ("zz-later", "aa-earlier")):
            shutil.copy(f, flipped / f"{new}.jsonl")
        again = _ingest(tmp_path / name)
        assert again.log[["record_id", "session"]].equals(log[["record_id", "session"]])
        assert dict(again.skipped) == dict(_ingest(case).skipped)


def test_tool_names_under_every_prefix_and_server():
    assert ingest.claude_code(CORPUS / "c13-other-server", server="prefs").log["kind"].tolist() == [
        "message", "prediction_update"]
    warned = ingest.claude_code(CORPUS / "c13-other-server").warnings[0]
    assert "mcp__prefs__prediction_update" in warned and "--server" in warned
    plugin = ingest.claude_code(CORPUS / "c11-plugin-names", server="mcp__plugin_thatch_thatch__")
    assert plugin.read["thatch tool calls named mcp__<server>__<tool>"] == 2
    plain = ingest.claude_code(CORPUS / "c12-plain-names")
    assert plain.read["thatch tool calls named <tool> (no prefix)"] == 2


def test_opencode_session_message_rejections_and_an_unknown_schema():
    v2 = _ingest(CORPUS / "o02-v2").log
    assert v2["surfaced"].iloc[0] == ["use exponential backoff with jitter"]  # the synthetic nudge message
    assert v2["skip_reason"].tolist() == [None, None, "rejected by the user", None]
    assert v2["record_id"].tolist() == ["msg_v2a", "call_v2a", "call_v2b", "msg_v2g"]
    bf = _ingest(CORPUS / "o03-v2-backfill")
    assert bf.read["message rows of a session also in session_message (its session_message rows read)"] == 2
    with pytest.raises(StoreSchemaError, match=r"schema version ingest does not know \(2 migrations applied, the "
                                               r"latest created at 1799000000000\)"):
        _ingest(CORPUS / "o04-unknown-schema")


def test_reingesting_the_corpus_is_byte_identical(tmp_path, capsys):
    for name in sorted(EXPECTED):
        case = CORPUS / name
        a, b = tmp_path / f"{name}.a.jsonl", tmp_path / f"{name}.b.jsonl"
        logs.write_interaction_log(_ingest(case).log, a)
        logs.write_interaction_log(_ingest(case).log, b)
        assert a.read_bytes() == b.read_bytes(), name
        source = "opencode" if name.startswith("o") else "claude-code"
        out = tmp_path / f"{name}.cli.jsonl"
        assert cli(["ingest", source, str(case), "--out", str(out)], capsys)[0] == 0
        first = out.read_bytes()
        code, text, _ = cli(["ingest", source, str(case), "--out", str(out)], capsys)
        assert code == 0 and "unchanged" in text and out.read_bytes() == first, name
