"""Claude Code transcripts as Claude Code writes them: calls that never ran, typed text, store names, growth."""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pytest

from tests._ingest import DATA, cli, replay, sample_embedder
from thatchlab import logs
from thatchlab.core.errors import LogValidationError
from thatchlab.embed import LookupEmbedder
from thatchlab.logs import ingest
from thatchlab.logs.ingest import detect_repo, parse_git_url
from thatchlab.replay import fidelity
from thatchlab.replay.fidelity import same_model

CC = DATA / "claude-code"
PROJECT = CC / "-home-dev-weather-app"
S1, S2, S3 = (PROJECT / f"{s}.jsonl" for s in ("259efac3-e81d-5c04-813b-128efac41db0",
                                              "7194b8bc-82e5-56ca-814c-67ced03e8186",
                                              "41107194-b48c-5aa0-a275-8da2c787fea3"))


@pytest.fixture(scope="module")
def emb():
    return sample_embedder()


@pytest.fixture(scope="module")
def cc():
    return ingest.claude_code(CC)


def records(path):
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:  # the cut-off last line of a session being written
            continue
    return out


def write(path, recs, tail=""):
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in recs) + tail)
    return path


# ------------------------------------------------------------------ what is read and what is not
def test_rows_kinds_and_what_is_skipped(cc):
    log = cc.log
    assert len(log) == 30 and log["ts"].is_monotonic_increasing and log["record_id"].is_unique
    assert log["kind"].value_counts().to_dict() == {
        "message": 10, "prediction_update": 10, "behavior_feedback": 3, "prediction_list": 2, "behavior_codify": 2,
        "prediction_query": 1, "behavior_list": 1, "prediction_delete": 1}
    # the sub-agent's file is read by default (issue 32: its thatch calls are rows); its delegation prompt is not
    assert dict(cc.skipped) == {"sub-agent prompt (a delegation from the main agent, not typed by the user)": 1,
                                "interruption record": 2, "meta record": 1,
                                "command or local-command record": 2, "incomplete last line": 1,
                                "compaction summary": 1, "duplicate record": 1}
    assert dict(cc.not_run) == {"rejected by the user": 2, "tool error": 1, "no result recorded": 1}
    assert cc.read["files"] == 4 and cc.read["prompts"] == 10 and cc.read["other tool calls"] == 1
    assert cc.read["prompts with thatch's hook output"] == 6


def test_calls_that_never_ran_are_rows_a_replay_skips(cc, emb):
    log = cc.log
    skipped = log[log["skip_reason"].notna()]
    assert skipped[["kind", "skip_reason"]].values.tolist() == [
        ["prediction_update", "rejected by the user"], ["prediction_update", "tool error"],
        ["prediction_delete", "rejected by the user"], ["prediction_update", "no result recorded"]]
    assert skipped["logged_reply"].iloc[0].startswith("The user doesn't want to proceed with this tool use")
    assert skipped["logged_reply"].iloc[1].startswith("Invalid arguments: signal")
    assert skipped["logged_reply"].iloc[3] is None
    assert log.loc[log["skip_reason"].isna(), "skip_reason"].isna().all()
    applied = log[log["skip_reason"].isna()]
    for path in ("events", "vectorised"):
        res = replay(log, "prediction", emb, path=path)
        assert len(res.events) == len(log)  # one events row per log row
        assert res.events.loc[skipped.index, "action"].eq("skipped").all()
        assert res.events.loc[skipped.index, "confidence"].isna().all()
        # issue 36 point 4: calls that never ran are their own count, apart from short messages
        assert (res.metrics["n_calls_not_run"], res.metrics["n_skipped"]) == (4, 1)  # 1 short prompt
        alone = replay(applied, "prediction", emb, path=path)
        assert alone.metrics["n_calls_not_run"] == 0
        assert res.tables["items"][["statement", "confirm_count", "disconfirm_count", "confidence"]].equals(
            alone.tables["items"][["statement", "confirm_count", "disconfirm_count", "confidence"]])
        items = res.tables["items"].set_index("statement")
        # the rejected disconfirm and the delete did not happen: the fixture prediction kept its counts
        assert items.loc["use pytest fixtures instead of unittest classes", ["confirm_count", "disconfirm_count"]
                         ].tolist() == [4.0, 0.25]
        assert "use short snake_case module names" in items.index


def test_prompt_text_is_what_the_user_typed(cc):
    msgs = cc.log[cc.log["kind"] == "message"]
    assert not msgs["text"].str.contains("<ide_|<system-reminder>|Request interrupted|being continued").any()
    assert msgs["text"].tolist()[:2] == ["Can you add unit tests for the forecast parser module?",
                                         "Write more tests for the radar tile loader please"]
    assert "update the README docs for the radar endpoint" in msgs["text"].tolist()  # the tag inline, same block
    # the prompt compaction wrote again (same uuid) is one record: its <ide_selection> counts once (issue 32)
    assert dict(cc.stripped) == {"ide_opened_file": 1, "ide_selection": 2}


def test_nudges_from_thatchs_hook_output(cc):
    msgs = cc.log[cc.log["kind"] == "message"].reset_index(drop=True)
    assert msgs["logged_nudge"][1] == ("[thatch] User decision model\n- [0.50 conf, 0 tests] When writing unit tests "
                                       "for Python code: you may prefer use pytest fixtures instead of unittest classes")
    assert msgs["surfaced"][1] == ["use pytest fixtures instead of unittest classes"]
    assert msgs["logged_items"][1] == [{"engine": "prediction", "statement": "use pytest fixtures instead of unittest "
                                        "classes", "matcher": "writing unit tests for Python code",
                                        "confidence": 0.5, "tests": 0}]
    # thatch's hook ran and surfaced nothing (it printed its write nudge): known empty
    assert (msgs["logged_nudge"][0], msgs["surfaced"][0], msgs["logged_items"][0]) == ("", [], [])
    assert msgs["text"][4] == "yes" and msgs["surfaced"][4] == []
    # 1.0.98 recorded no hook output: what production surfaced is unknown
    assert msgs["logged_nudge"][6:].isna().all() and msgs["surfaced"][6:].isna().all()


def test_engine_filter_and_subagents():
    beh = ingest.claude_code(CC, engine="behavior").log
    surfaced = beh.loc[beh["kind"] == "message", "surfaced"].dropna().tolist()
    assert ["run the full test suite and read the failures"] in surfaced and all(
        "use pytest fixtures instead of unittest classes" not in s for s in surfaced)
    sub = ingest.claude_code(CC, subagents=True)
    assert len(sub.log) == 31 and "subagent transcript file" not in sub.skipped
    row = sub.log[sub.log["session"].str.contains(":a4f2c1e")]
    assert row["text"].tolist() == ["List the chart helper files"] and row["store"].tolist() == ["acme/weather-app"]


# ------------------------------------------------------------------ stores
def test_stores_are_named_as_production_named_them(cc):
    assert cc.log["store"].eq("acme/weather-app").all()
    assert cc.read["sessions whose store is: named by production's replies in the session"] == 2
    assert cc.read["sessions whose store is: named by production in another session of the directory"] == 1
    assert cc.warnings == []
    cwd = ingest.claude_code(CC, project_store="cwd")
    assert cwd.log["store"].eq("weather-app").all()
    assert ingest.claude_code(CC, project_store=None).log["store"].isna().all()


def _bare_session(tmp_path, cwd, replies=False):
    recs = [r for r in records(S3) if r.get("type") != "summary"]
    for r in recs:
        if "cwd" in r:
            r["cwd"] = cwd
    return write(tmp_path / "s.jsonl", recs)


def test_store_from_the_session_start_reminder_alone(tmp_path):
    recs = records(S2)
    keep = [r for r in recs if not (r.get("type") == "user" and isinstance(r.get("message", {}).get("content"), list)
                                    and any(b.get("type") == "tool_result" for b in r["message"]["content"]))]
    res = ingest.claude_code(write(tmp_path / "s.jsonl", keep))  # no replies: only the hook names the store
    assert res.log["store"].eq("acme/weather-app").all()
    assert res.read["sessions whose store is: named by production's replies in the session"] == 1


def test_store_by_detect_repo_on_a_directory_here(tmp_path):
    repo = tmp_path / "checkouts" / "weather"
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "remote", "add", "origin", "git@github.com:acme/weather-app.git"],
                   check=True)
    res = ingest.claude_code(_bare_session(tmp_path, str(repo)))
    assert res.log["store"].eq("acme/weather-app").all() and res.warnings == []
    assert res.read["sessions whose store is: detectRepo on the project directory"] == 1
    plain = tmp_path / "notes"
    plain.mkdir()
    assert detect_repo(plain) == "notes" and detect_repo(tmp_path / "gone") == "unknown"


def test_store_falls_back_to_the_folder_name_with_a_warning(tmp_path, capsys):
    f = _bare_session(tmp_path, "/nowhere/on/this/machine/weather-app")
    res = ingest.claude_code(f)
    assert res.log["store"].eq("weather-app").all()
    assert len(res.warnings) == 1 and "'weather-app' (1 session)" in res.warnings[0]
    code, _, err = cli(["ingest", "claude-code", str(f), "--out", str(tmp_path / "o.jsonl")], capsys)
    assert code == 0 and "warning: store named after the project folder" in err
    assert ingest.claude_code(f, project_store="acme/x").log["store"].eq("acme/x").all()


@pytest.mark.parametrize("url, slug", [
    ("git@github.com:acme/weather-app.git", "acme/weather-app"), ("https://github.com/acme/weather-app", "acme/weather-app"),
    ("https://gitlab.com/g/sub/repo.git/", "g/sub/repo"), ("ssh://git@host:22/o/r.git", "o/r"),
    ("git://host/o/r", "o/r"), ("https://user:tok@host:8443/o/r", "o/r"), ("gitlab@host:o/r", None),
    ("/srv/git/weather-app.git", None), ("git@host:repo", None)])
def test_parse_git_url_as_thatch(url, slug):
    assert parse_git_url(url) == slug


# ------------------------------------------------------------------ ids and growth
def test_prompts_without_uuid_get_stable_content_ids(tmp_path):
    recs = [r for r in records(S3) if r.get("type") != "summary"]
    prompts = [i for i, r in enumerate(recs) if r.get("type") == "user" and isinstance(r["message"]["content"], str)
               and r["message"]["content"].startswith(("write tests", "now the tests"))]
    for i in prompts:
        del recs[i]["uuid"]
    first = ingest.claude_code(write(tmp_path / "a.jsonl", recs)).log
    ids = first.loc[first["kind"] == "message", "record_id"].tolist()
    assert len(set(ids)) == 4 and sum(i.startswith("claude-code-prompt:") for i in ids) == 2
    # an earlier prompt without a uuid appearing does not shift the later ones' ids
    early = dict(recs[prompts[0]], timestamp="2026-01-08T10:00:00.000Z")
    early["message"] = {"role": "user", "content": "an earlier question about the alerts"}
    again = ingest.claude_code(write(tmp_path / "a.jsonl", [early] + recs)).log
    assert set(ids) < set(again["record_id"])


def test_duplicate_uuids_are_read_once(cc):
    assert cc.skipped["duplicate record"] == 1  # the compaction wrote the first prompt again
    assert cc.log["text"].eq("add tests for the wind chart helpers").sum() == 1


def _grown_pair(tmp_path):
    """A copy of session 1 cut before a tool result and a hook output arrived, and the whole of it."""
    lines = S1.read_text().splitlines()
    cut = next(i for i, ln in enumerate(lines) if '"tool_result"' in ln and "mcp__thatch" not in ln
               and "[codified] acme" in ln)
    folder = tmp_path / "projects" / "-home-dev-weather-app"
    folder.mkdir(parents=True)
    return folder / S1.name, "\n".join(lines[:cut]) + "\n", S1.read_text()


def test_reingesting_a_grown_transcript_completes_rows_in_place(tmp_path, capsys):
    target, early, whole = _grown_pair(tmp_path)
    target.write_text(early)
    out = tmp_path / "log.jsonl"
    code, text, _ = cli(["ingest", "claude-code", str(target), "--out", str(out)], capsys)
    before = logs.read_interaction_log(out)
    assert code == 0 and before["skip_reason"].tolist().count("no result recorded") == 1
    pending = before.loc[before["skip_reason"] == "no result recorded", "record_id"].iloc[0]
    target.write_text(whole)
    code, text, _ = cli(["ingest", "claude-code", str(target), "--out", str(out)], capsys)
    after = logs.read_interaction_log(out)
    fresh = ingest.claude_code(target).log
    assert code == 0 and "completed (a reply, nudge or result arrived)" in text and "new" in text
    assert after["record_id"].is_unique and after["record_id"].tolist() == fresh["record_id"].tolist()
    row = after.set_index("record_id").loc[pending]
    assert row["skip_reason"] is None and row["logged_reply"].startswith("[codified] acme/weather-app :: ")
    once = tmp_path / "once.jsonl"  # a fresh ingest of the grown file, row for row the same
    assert cli(["ingest", "claude-code", str(target), "--out", str(once)], capsys)[0] == 0
    assert out.read_bytes() == once.read_bytes()
    code, text, _ = cli(["ingest", "claude-code", str(target), "--out", str(out)], capsys)
    assert code == 0 and f"{out}: unchanged ({len(fresh)} rows, as the source holds them)" in text


def test_reingest_never_shrinks_the_log(tmp_path, capsys):
    folder = tmp_path / "p"
    folder.mkdir()
    shutil.copy(S1, folder / S1.name)
    shutil.copy(S3, folder / S3.name)
    out = tmp_path / "log.csv"
    assert cli(["ingest", "claude-code", str(folder), "--out", str(out)], capsys)[0] == 0
    n = len(logs.read_interaction_log(out))
    (folder / S3.name).unlink()
    code, text, _ = cli(["ingest", "claude-code", str(folder), "--out", str(out)], capsys)
    assert code == 0 and len(logs.read_interaction_log(out)) == n and "no longer in the source (kept)" in text


def test_dry_run_prints_the_summary_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "log.jsonl"
    code, text, _ = cli(["ingest", "claude-code", str(CC), "--out", str(out), "--dry-run"], capsys)
    assert code == 0 and not out.exists()
    assert "calls that never ran (kept as rows a replay skips, skip_reason set):" in text
    assert "rejected by the user" in text and "stripped from prompts" in text
    assert f"would write 30 rows to {out}" in text and "dry run: nothing written" in text


# ------------------------------------------------------------------ fidelity
@pytest.mark.parametrize("engine, n_replies", [("prediction", 10), ("behavior", 6)])
def test_replayed_replies_and_nudges_agree_with_the_logged_ones(cc, emb, engine, n_replies):
    for path in ("events", "vectorised"):
        rep = fidelity(replay(cc.log, engine, emb, path=path), cc.log)
        m = rep.metrics
        assert (m["n_replies"], m["n_logged_replies"], m["n_nudges"], m["n_logged_nudges"]) == (n_replies, n_replies,
                                                                                                10, 6)
        for key in ("reply_agreement", "nudge_agreement", "nudge_item_agreement", "item_jaccard", "regime_agreement"):
            assert m[key] == 1.0, key
        assert rep.nudges["known"].tolist() == [True] * 6 + [False] * 4


def test_fidelity_over_nothing_logged_is_nan_with_its_counts(cc, emb):
    bare = cc.log.drop(columns=["logged_nudge", "logged_items", "logged_reply"])
    m = fidelity(replay(bare, "prediction", emb), bare).metrics
    assert (m["n_logged_replies"], m["n_logged_nudges"]) == (0, 0)
    assert all(np.isnan(m[k]) for k in ("reply_agreement", "nudge_agreement", "nudge_item_agreement",
                                        "item_jaccard", "regime_agreement", "headline"))
    assert isinstance(m["n_logged_nudges"], int) and isinstance(m["n_logged_replies"], int)


def test_fidelity_reads_known_nudges_back_from_csv(cc, emb, tmp_path):
    p = tmp_path / "log.csv"
    logs.write_interaction_log(cc.log, p)
    back = logs.read_interaction_log(p)
    assert fidelity(replay(back, "prediction", emb), back).metrics["n_logged_nudges"] == 6


# ------------------------------------------------------------------ bad input
def test_broken_lines_are_counted_or_refused(tmp_path):
    lines = S1.read_text().splitlines()
    f = tmp_path / "s.jsonl"
    f.write_text("\n".join(lines[:3] + ['{"type": "assistant", "message": {"content": [{"name": "Bash"'] + lines[3:])
                 + "\n")
    assert ingest.claude_code(f).skipped["malformed line"] == 1
    f.write_text("\n".join(lines[:3] + ["[1, 2, 3]"] + lines[3:]) + "\n")
    assert ingest.claude_code(f).skipped["line that is not a JSON object"] == 1
    f.write_text("\n".join(lines[:3] + ['{"type":"user","message":{"content":"half a pro'] + lines[3:]) + "\n")
    with pytest.raises(LogValidationError, match=r"s\.jsonl: line 4: not a valid JSON record") as exc:
        ingest.claude_code(f)
    assert exc.value.file == str(f) and exc.value.row == 3
    with pytest.raises(LogValidationError, match="no such transcript"):
        ingest.claude_code(tmp_path / "absent")


def test_a_record_without_a_timestamp_is_counted(tmp_path):
    recs = records(S1)
    first = next(r for r in recs if r.get("type") == "user")
    del first["timestamp"]
    res = ingest.claude_code(write(tmp_path / "s.jsonl", recs))
    assert res.skipped["record without a timestamp"] == 1 and res.read["prompts"] == 2


def test_invalid_arguments_of_a_call_that_ran_are_counted(tmp_path):
    rec = {"type": "assistant", "uuid": "a", "sessionId": "s", "timestamp": "2026-01-01T00:00:00Z",
           "message": {"content": [{"type": "tool_use", "id": "t1", "name": "mcp__mem__prediction_update",
                                    "input": {"matcher": "x", "prediction": "y", "signal": "maybe"}},
                                   {"type": "tool_use", "id": "t2", "name": "mcp__mem__memory_remember",
                                    "input": {"content": "z"}}]}}
    result = {"type": "user", "uuid": "r", "sessionId": "s", "timestamp": "2026-01-01T00:00:01Z",
              "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}}
    res = ingest.claude_code(write(tmp_path / "s.jsonl", [rec, result]), server="mem")
    assert len(res.log) == 0 and res.read["other thatch tool calls"] == 1
    assert dict(res.skipped) == {"invalid prediction_update row (signal)": 1}


# ------------------------------------------------------------------ list rows and other models
def test_list_rows_replay_the_engines_list_reply(cc, emb):
    res = replay(cc.log, "prediction", emb)
    assert res.path == "events"  # list rows fall back to the events path
    lists = res.events[res.events["kind"] == "prediction_list"]
    assert lists["action"].tolist() == ["list", "list"]
    assert lists["reply"].iloc[0].startswith("[0.58 conf, 1 tests] use pytest fixtures instead of unittest classes\n"
                                             "  rationale: the existing tests in the repo use pytest")
    no_lists = cc.log[~cc.log["kind"].str.endswith("_list")]
    assert replay(no_lists, "prediction", emb).path == "vectorised"


def test_regimes_of_the_samples(cc, emb):
    rep = fidelity(replay(cc.log, "prediction", emb), cc.log)
    assert rep.nudges.loc[rep.nudges["known"], "logged_regime"].value_counts().to_dict() == {"none": 4,
                                                                                             "ambiguous": 2}


def test_fidelity_with_another_model_reads_regimes_first(cc, emb):
    other = LookupEmbedder({t: v for t, v in zip(emb.texts, emb.embed_passages(emb.texts) + 1.0)},
                           name="some-other-model")
    rep = fidelity(replay(cc.log, "prediction", other), cc.log)
    assert rep.metrics["headline"] == rep.metrics["regime_agreement"]
    assert "exact comparison needs the production model" in rep.note
    assert rep.metrics["nudge_agreement"] < 1.0
    assert same_model("BAAI/bge-small-en-v1.5") and not same_model("sample-lookup")


def test_fidelity_needs_the_replayed_log(cc, emb):
    res = replay(cc.log, "behavior", emb)
    with pytest.raises(Exception, match="pass the log that was replayed"):
        fidelity(res, cc.log.iloc[:5])


def test_ingested_logs_round_trip_through_the_reader(tmp_path, cc):
    for suffix in ("jsonl", "csv", "parquet"):
        p = tmp_path / f"log.{suffix}"
        logs.write_interaction_log(cc.log, p)
        back = logs.read_interaction_log(p)
        for col in ("kind", "logged_items", "logged_reply", "skip_reason", "record_id", "store"):
            assert back[col].tolist() == cc.log[col].tolist(), (suffix, col)


def test_cli_names_the_file_and_line_of_a_broken_transcript(tmp_path, capsys):
    f = tmp_path / "s.jsonl"
    f.write_text('{"type":"user","message":{"content":"cut\n{"type": "summary"}\n')
    code, _, err = cli(["ingest", "claude-code", str(f), "--out", str(tmp_path / "o.jsonl")], capsys)
    assert code == 2 and err.startswith(f"error: {f}: line 1: not a valid JSON record")
    assert not (tmp_path / "o.jsonl").exists()


def test_store_from_the_store_its_calls_passed_when_nothing_else_names_it(tmp_path):
    recs = [r for r in records(S3) if r.get("type") != "summary"]
    for r in recs:
        r["cwd"] = "/nowhere/weather-app"
        for b in (r.get("message") or {}).get("content") or []:
            if isinstance(b, dict) and b.get("type") == "tool_use" and b["name"].startswith("mcp__thatch__"):
                b["input"]["store"] = "acme/weather-app"
    res = ingest.claude_code(write(tmp_path / "s.jsonl", recs))
    assert res.log["store"].eq("acme/weather-app").all()
    assert len(res.warnings) == 1 and "the store the calls passed" in res.warnings[0]


# ------------------------------------------------------------------ file order where time cannot decide
def _call_and_prompt(ts_prompt, ts_call, result_first):
    prompt = {"type": "user", "uuid": "u1", "sessionId": "s1", "timestamp": ts_prompt, "cwd": "/x/app",
              "message": {"content": "please add tests"}}
    call = {"type": "assistant", "uuid": "x1", "sessionId": "s1", "timestamp": ts_call,
            "message": {"content": [{"type": "tool_use", "id": "toolu_1", "name": "mcp__thatch__prediction_update",
                                     "input": {"matcher": "writing tests", "prediction": "use pytest",
                                               "signal": "confirm"}}]}}
    result = {"type": "user", "uuid": "t1", "sessionId": "s1", "timestamp": ts_call,
              "message": {"content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                       "content": '[confirm] "use pytest" confidence=0.58 (1/0)'}]}}
    return [prompt, result, call] if result_first else [prompt, call, result]


@pytest.mark.parametrize("result_first", [False, True])
def test_a_result_written_before_its_call_still_pairs_with_it(tmp_path, result_first):
    """Issue 36 point 6: a tool_result that precedes its tool_use in the file answers that call."""
    recs = _call_and_prompt("2026-01-05T09:00:00Z", "2026-01-05T09:00:05Z", result_first)
    res = ingest.claude_code(write(tmp_path / "s.jsonl", recs), project_store="cwd")
    assert res.log[["kind", "logged_reply", "skip_reason"]].values.tolist() == [
        ["message", None, None], ["prediction_update", '[confirm] "use pytest" confidence=0.58 (1/0)', None]]
    assert dict(res.not_run) == {}


def test_equal_times_keep_file_order_a_prompt_before_its_calls(tmp_path):
    """Issue 36 point 6: a prompt and the call it caused in the same millisecond keep the file's order."""
    recs = _call_and_prompt("2026-01-05T09:00:00Z", "2026-01-05T09:00:00Z", result_first=True)
    res = ingest.claude_code(write(tmp_path / "s.jsonl", recs), project_store="cwd")
    assert res.log["kind"].tolist() == ["message", "prediction_update"]
    assert res.log["logged_reply"].tolist()[1] == '[confirm] "use pytest" confidence=0.58 (1/0)'
