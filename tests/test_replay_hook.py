"""thatch's prompt hook per release in replays (thatchlab.replay._hook and both replay paths).

Rules, from production's code:

- 07ecf87: sysread/thatch src/runtime.ts @07ecf879, ``onChatMessage``: a chat transcript echo
  (``isChatEchoParts``: text starting ``[chat] ``) returns before any nudge; a session with a
  parent that is not thatch's extraction child (``childToParent.has(id) &&
  !extractionChildren.has(id)``) returns before the recall/prediction/behavior nudges; there is
  no model-facing extraction nudge ("there is deliberately NO model-facing extraction nudge").
- v0.1.30: the hook printed the extraction nudge and returned while tool interactions were
  queued (sysread/thatch bin/thatch ``flush-tools`` "Tier 1: extraction nudge" … ``break``,
  stored copy @03a2a713; the opencode plugin's tier (a) in src/index.ts), so a prompt whose
  logged hook output holds an extraction nudge got no other nudge.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

from thatchlab.core.params import ReleaseError, ScoringParams
from thatchlab.embed import LookupEmbedder
from thatchlab.replay import prepare, run
from thatchlab.replay._hook import CHAT_ECHO_PREFIX, HOOK_SKIPS, hook_skipped, hook_skips

EMB = LookupEmbedder({"writing tests": [1, 0], "use pytest": [0, 1], "I am writing tests now": [1, 0.1],
                      "[chat] ju-no-2 wrote about writing tests": [1, 0.12], "tests?": [1, 0.2]})
NUDGE = "[thatch] User decision model\n- [0.58 conf, 1 tests] When writing tests: you tend to use pytest"
EXTRACTION = ("[thatch] Spawn a background sub-agent to run the thatch-fact-extractor skill on 2 queued tool "
              "interactions. After dispatching, call mcp__thatch__extraction_done to acknowledge.")


def hook_log():
    """An update, then four prompts: plain, a chat echo, a task sub-agent's, one after an extraction nudge."""
    ts = [f"2026-03-02T10:0{i}:00Z" for i in range(6)]
    return pd.DataFrame({
        "ts": ts, "session": ["s1", "s1", "s1", "s1:agent-3", "s1", "s1"],
        "kind": ["prediction_update", "message", "message", "message", "message", "message"],
        "matcher": ["writing tests", None, None, None, None, None],
        "statement": ["use pytest", None, None, None, None, None],
        "signal": ["confirm", None, None, None, None, None],
        "text": [None, "I am writing tests now", "[chat] ju-no-2 wrote about writing tests", "I am writing tests now",
                 "I am writing tests now", "I am writing tests now"],
        "subagent": [None, None, None, "task", None, None],
        "logged_extraction": [None, None, None, None, EXTRACTION, None]})


def quiet_run(log, release, path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return run(log, embedder=EMB, params=ScoringParams(release=release), path=path)


def test_hook_skips_per_release():
    log = hook_log()
    assert hook_skips(log, "07ecf87").tolist() == [None, None, "chat_echo", "subagent", None, None]
    assert hook_skips(log, "latest").tolist() == [None, None, "chat_echo", "subagent", None, None]
    assert hook_skips(log, "v0.1.30").tolist() == [None, None, None, None, "extraction", None]
    assert hook_skipped(log, "v0.1.30").tolist() == [False, False, False, False, True, False]
    assert CHAT_ECHO_PREFIX == "[chat] " and set(HOOK_SKIPS) == {"chat_echo", "subagent", "extraction"}


def test_hook_rules_only_touch_messages_and_need_their_columns():
    log = hook_log()
    log.loc[0, "subagent"] = "task"          # a sub-agent's tool call still runs
    log.loc[1, "subagent"] = "extraction"    # thatch's own extraction child is nudged (07ecf87)
    assert hook_skips(log, "07ecf87").tolist() == [None, None, "chat_echo", "subagent", None, None]
    bare = log.drop(columns=["subagent", "logged_extraction"])   # a log without them: only the echo rule applies
    assert hook_skips(bare, "07ecf87").tolist() == [None, None, "chat_echo", None, None, None]
    assert hook_skips(bare, "v0.1.30").tolist() == [None] * 6
    # the prefix is exact: "[chat]" without its space, or later in the text, is a prompt
    other = log.assign(text=[None, "[chat]no space here", "see [chat] later", "x" * 12, "y" * 12, "z" * 12])
    assert hook_skips(other, "07ecf87").tolist() == [None, None, None, "subagent", None, None]
    with pytest.raises(ReleaseError, match="no release 'v9'"):
        hook_skips(log, "v9")


@pytest.mark.parametrize("path", ["events", "vectorised"])
def test_replays_follow_the_hook_of_their_release(path):
    log = hook_log()
    new = quiet_run(log, "07ecf87", path).events
    assert new["regime"].tolist() == [None, "ambiguous", "skipped", "skipped", "ambiguous", "ambiguous"]
    assert new["reply"].tolist()[1:] == [NUDGE, "", "", NUDGE, NUDGE]
    assert new["n_items"].tolist()[1:] == [1.0, 0.0, 0.0, 1.0, 1.0]
    assert new["n_foreign_model"].tolist()[1:] == [0.0] * 5
    old = quiet_run(log, "v0.1.30", path)
    assert old.events["regime"].tolist() == [None, "ambiguous", "ambiguous", "ambiguous", "skipped", "ambiguous"]
    assert old.events["reply"].tolist()[1:] == [NUDGE, NUDGE, NUDGE, "", NUDGE]
    assert old.nudges["position"].tolist() == [1, 2, 3, 5]
    assert old.metrics["n_skipped"] == 1 and quiet_run(log, "07ecf87", path).metrics["n_skipped"] == 2


def test_both_paths_agree_and_a_plan_serves_its_release_only():
    log = hook_log()
    for release in ("v0.1.30", "07ecf87"):
        a, b = quiet_run(log, release, "events"), quiet_run(log, release, "vectorised")
        pd.testing.assert_frame_equal(a.events, b.events)
        pd.testing.assert_frame_equal(a.nudges, b.nudges)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        plan = prepare(log, embedder=EMB, release="v0.1.30")
    assert plan.reads.hook_skipped.tolist() == [False, False, False, True, False]
    assert plan.reads.length.tolist() == [22, 40, 22, -1, 22]
    # min_prompt_chars=0 turns the length gate off; the hook's skip stays
    res = plan.run(ScoringParams(release="v0.1.30", min_prompt_chars=0))
    assert res.events["regime"].tolist()[4] == "skipped"


def test_short_prompts_and_hook_skips_both_read_as_skipped():
    log = hook_log()
    log.loc[1, "text"] = "tests?"  # under min_prompt_chars
    ev = quiet_run(log, "07ecf87", "vectorised").events
    assert ev["regime"].tolist() == [None, "skipped", "skipped", "skipped", "ambiguous", "ambiguous"]
    assert np.isnan(ev["n_items"][0])
