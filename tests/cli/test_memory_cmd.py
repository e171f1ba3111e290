"""Tests of ``hermes_core/cli/memory_cmd.py``.

``hermes-core memory``: search / add / stats / rebuild, in process and as a real subprocess.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hermes_core.agent.episodic.migrations import LATEST_VERSION
from hermes_core.cli.main import main
from tests.cli.conftest import store_state

REPO = Path(__file__).resolve().parents[2]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_add_then_search_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "m.db")
    code, out, _ = run(capsys, "memory", "add", "--db", db, "--session-id", "s1",
                       "--summary", "我喜欢吃苹果，也喜欢香蕉", "--tags", "水果, food",
                       "--created-at", "2020-01-01T00:00:00Z", "--json")
    assert code == 0
    added = json.loads(out)
    assert added["status"] == "inserted" and added["session_id"] == "s1" and added["db"] == db
    run(capsys, "memory", "add", "--db", db, "--session-id", "s2", "--summary", "Deployed kubernetes")
    code, out, _ = run(capsys, "memory", "search", "苹果", "--db", db, "--json")
    assert code == 0
    got = json.loads(out)
    assert [f["session_id"] for f in got] == ["s1"]
    assert got[0]["summary"] == "我喜欢吃苹果，也喜欢香蕉"
    assert got[0]["tags"] == ["水果", "food"]
    assert got[0]["age_days"] > 365 and got[0]["score"] > 0
    assert set(got[0]) == {"session_id", "summary", "tags", "score", "age_days"}


def test_search_text_output_and_no_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "m.db")
    run(capsys, "memory", "add", "--db", db, "--session-id", "s1", "--summary", "Deployed kubernetes")
    code, out, _ = run(capsys, "memory", "search", "kubernetes", "--db", db)
    assert code == 0 and "s1" in out and "Deployed kubernetes" in out
    code, out, _ = run(capsys, "memory", "search", "espresso", "--db", db)
    assert code == 0 and out.strip() == "no matching sessions"
    code, out, _ = run(capsys, "memory", "search", 'NEAR( "AND summary:*', "--db", db, "--json")
    assert code == 0 and json.loads(out) == []


def test_search_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "m.db")
    for i in range(4):
        run(capsys, "memory", "add", "--db", db, "--session-id", f"s{i}", "--summary", f"espresso {i}")
    code, out, _ = run(capsys, "memory", "search", "espresso", "--db", db, "--json",
                       "--max-results", "2", "--exclude-session", "s3")
    ids = [f["session_id"] for f in json.loads(out)]
    assert code == 0 and len(ids) == 2 and "s3" not in ids


def test_re_add_replaces_and_duplicate_is_reported(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "m.db")
    run(capsys, "memory", "add", "--db", db, "--session-id", "a", "--summary", "first text")
    code, out, _ = run(capsys, "memory", "add", "--db", db, "--session-id", "a", "--summary", "second text")
    assert code == 0 and out.startswith("replaced session a")
    code, out, _ = run(capsys, "memory", "add", "--db", db, "--session-id", "b", "--summary", "second text")
    assert code == 0 and "already holds this exact summary" in out and "session a" in out


def test_stats_and_rebuild(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "m.db")
    run(capsys, "memory", "add", "--db", db, "--session-id", "a", "--summary", "我喜欢吃苹果",
        "--created-at", "2026-01-02")
    run(capsys, "memory", "add", "--db", db, "--session-id", "b", "--summary", "kubernetes",
        "--created-at", "2026-03-04T05:06:07+00:00")
    code, out, _ = run(capsys, "memory", "stats", "--db", db, "--json")
    stats = json.loads(out)
    assert code == 0
    assert stats["sessions"] == 2 and stats["indexed"] == 2 and stats["index_in_sync"] is True
    assert stats["oldest"] == "2026-01-02T00:00:00Z" and stats["newest"] == "2026-03-04T05:06:07Z"
    assert stats["schema_version"] == LATEST_VERSION and stats["journal_mode"] == "wal"
    code, out, _ = run(capsys, "memory", "stats", "--db", db)
    assert code == 0 and "sessions" in out and "schema_version" in out
    code, out, _ = run(capsys, "memory", "rebuild", "--db", db, "--json")
    assert code == 0 and json.loads(out) == {"reindexed": 2, "db": db}
    code, out, _ = run(capsys, "memory", "rebuild", "--db", db)
    assert code == 0 and out.startswith("re-indexed 2 session(s)")
    code, out, _ = run(capsys, "memory", "search", "苹果", "--db", db, "--json")
    assert [f["session_id"] for f in json.loads(out)] == ["a"]


@pytest.mark.parametrize("action", [["search", "x"], ["stats"], ["rebuild"]])
def test_missing_database_is_a_clear_error_and_not_created(tmp_path: Path, action: list[str],
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "none.db"
    code, out, err = run(capsys, "memory", *action, "--db", str(db))
    assert code == 1 and out == ""
    assert err.startswith("hermes-core: memory database ") and str(db) in err and "does not exist" in err
    assert "Traceback" not in err
    assert not db.exists()


def test_add_to_a_db_in_a_folder_that_does_not_exist_is_an_error_and_creates_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--db ~/hremes/sessions.db`` (a typo) created the folder ``hremes`` and a fresh database
    in it, so the session went where no later search looks, as a mistyped --home once did."""
    db = tmp_path / "typo" / "deeper" / "sessions.db"
    code, out, err = run(capsys, "memory", "add", "--db", str(db), "--session-id", "a",
                         "--summary", "espresso")
    assert code == 1 and out == ""
    assert err.startswith("hermes-core: ") and str(db.parent) in err and "--db" in err
    assert "does not exist" in err and not (tmp_path / "typo").exists()


def test_foreign_file_is_refused_and_untouched(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "notes.db"
    db.write_text("shopping list: milk, eggs\n")
    for argv in (["add", "--session-id", "a", "--summary", "x"], ["search", "milk"], ["stats"]):
        code, _, err = run(capsys, "memory", *argv, "--db", str(db))
        assert code == 1 and str(db) in err and "not an SQLite database" in err
    assert db.read_text() == "shopping list: milk, eggs\n"


@pytest.mark.parametrize(("argv", "message"), [
    (["--created-at", "yesterday"], "not an ISO 8601"),
    # a typo of the year (2062 for 2026) ranked the session as brand new for decades
    (["--created-at", "2099-01-01"], "is in the future"),
    (["--relevance", "-1"], "must be >= 0"),
    (["--relevance", "abc"], "not a number"),
])
def test_add_bad_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                           message: str) -> None:
    with pytest.raises(SystemExit) as e:
        main(["memory", "add", "--db", str(tmp_path / "m.db"), "--session-id", "a", "--summary", "x", *argv])
    assert e.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "m.db").exists()


@pytest.mark.parametrize(("field", "value"), [("--session-id", "  "), ("--summary", "")])
def test_add_blank_values(tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: str) -> None:
    args = {"--session-id": "a", "--summary": "x", field: value}
    code, _, err = run(capsys, "memory", "add", "--db", str(tmp_path / "m.db"),
                       *[p for kv in args.items() for p in kv])
    assert code == 2 and "must not be empty" in err
    assert not (tmp_path / "m.db").exists()


def test_search_max_results_must_be_positive(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["memory", "search", "x", "--db", str(tmp_path / "m.db"), "--max-results", "0"])
    assert "must be at least 1" in capsys.readouterr().err


def test_default_path_is_hermes_home(hermes_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "memory", "add", "--session-id", "a", "--summary", "espresso", "--json")
    assert code == 0 and json.loads(out)["db"] == str(hermes_home / "sessions.db")
    assert (hermes_home / "sessions.db").is_file()


def test_home_flag_and_config_db_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("context_engine:\n  db_path: memory/episodes.db\n  max_results: 1\n")
    for i in range(3):
        run(capsys, "memory", "add", "--home", str(home), "--session-id", f"s{i}",
            "--summary", f"espresso {i}")
    assert (home / "memory" / "episodes.db").is_file()
    code, out, _ = run(capsys, "memory", "search", "espresso", "--home", str(home), "--json")
    assert code == 0 and len(json.loads(out)) == 1  # context_engine.max_results from the config


def test_bad_config_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("context_engine:\n  recency_bias: -2\n")
    code, _, err = run(capsys, "memory", "stats", "--config", str(cfg), "--db", str(tmp_path / "m.db"))
    assert code == 1 and str(cfg) in err and "context_engine.recency_bias" in err


def test_memory_without_action_prints_usage(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "memory")
    assert code == 2 and "search" in err and "rebuild" in err


def test_real_subprocess(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    (tmp_path / "home").mkdir()   # a named home must exist; a typo is an error, never created
    env = {**os.environ, "PYTHONPATH": str(REPO), "HERMES_HOME": str(tmp_path / "home")}
    cmd = [sys.executable, "-m", "hermes_core.cli", "memory"]
    added = subprocess.run([*cmd, "add", "--db", str(db), "--session-id", "proc-1",
                            "--summary", "在上海讨论了数据库索引的设计", "--tags", "数据库"],
                           capture_output=True, text=True, env=env, timeout=120)
    assert added.returncode == 0, added.stderr
    found = subprocess.run([*cmd, "search", "索引", "--db", str(db), "--json"],
                           capture_output=True, text=True, env=env, timeout=120)
    assert found.returncode == 0, found.stderr
    assert [f["session_id"] for f in json.loads(found.stdout)] == ["proc-1"]
    missing = subprocess.run([*cmd, "stats", "--db", str(tmp_path / "nope.db")],
                             capture_output=True, text=True, env=env, timeout=120)
    assert missing.returncode == 1 and "does not exist" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_a_key_stored_before_it_was_configured_leaves_the_file_and_the_output(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Pasted into a chat while nothing knew it was a key, it was stored in clear; once it is a
    configured credential, a search shows it redacted (no tag made of its pieces either) and
    leaves the file alone, and the next command that writes the memory rewrites those rows."""
    secret = "zq81-PLAINTOKEN-77xx"
    home = tmp_path / "home"
    home.mkdir()
    run(capsys, "memory", "add", "--home", str(home), "--session-id", "s1",
        "--summary", f"my deploy token is {secret} please remember", "--tags", "deploy, plaintoken, 77xx")
    db = home / "sessions.db"
    with sqlite3.connect(db) as conn:
        assert secret in conn.execute("SELECT summary FROM sessions").fetchone()[0]
    (home / "config.yaml").write_text(
        "llm:\n  routing:\n    providers: [{name: custom, type: openai, endpoint: 'http://127.0.0.1:9/v1'}]\n"
        f"credentials:\n  custom:\n    keys: [{{key: '{secret}'}}]\n", encoding="utf-8")
    code, out, err = run(capsys, "memory", "search", "deploy token", "--home", str(home), "--json")
    assert code == 0
    got = json.loads(out)
    assert [f["session_id"] for f in got] == ["s1"]
    assert secret not in out + err and "[key-" in got[0]["summary"]
    assert got[0]["tags"] == ["deploy"]              # "plaintoken", "77xx": pieces of the key
    with sqlite3.connect(db) as conn:
        assert secret in conn.execute("SELECT summary FROM sessions").fetchone()[0]
    run(capsys, "memory", "add", "--home", str(home), "--session-id", "s2", "--summary", "later")
    with sqlite3.connect(db) as conn:
        stored = conn.execute("SELECT summary, tags FROM sessions").fetchall()
        indexed = conn.execute("SELECT summary FROM sessions_fts").fetchall()
    assert secret not in repr(stored) and "PLAINTOKEN" not in repr(indexed).upper()


def test_search_shows_control_characters_of_a_stored_summary_instead_of_sending_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A summary holds what a chat said (a pasted page, a tool's output): an escape sequence in it
    printed raw would clear the screen, retitle the terminal or write the clipboard (OSC 52)."""
    db = str(tmp_path / "m.db")
    run(capsys, "memory", "add", "--db", db, "--session-id", "s\x1b[31m1",
        "--summary", "staging \x1b[2J\x1b]52;c;ZXZpbA==\x07 notes \x9b6n", "--tags", "de\x1bploy")
    code, out, _ = run(capsys, "memory", "search", "staging", "--db", db)
    assert code == 0 and "staging" in out
    assert not any(c in out for c in "\x1b\x07\x9b")
    assert "\\x1b[2J" in out


def test_add_never_sends_a_stored_session_ids_escape_sequence_to_the_terminal(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`memory add` echoed session ids as they were: one holding an OSC 52 sequence (written
    through the API by a web front end) rewrote the clipboard when a duplicate named it."""
    db = str(tmp_path / "m.db")
    hostile = "web\x1b]52;c;ZXZpbA==\x07-42"
    for sid in (hostile, "mine\x1b[2J"):
        code, out, _ = run(capsys, "memory", "add", "--db", db, "--session-id", sid,
                           "--summary", "Rotated the staging certificates")
        assert code == 0 and "\x1b" not in out and "\x07" not in out
    assert "not stored: session web" in out and "-42 already holds" in out


@pytest.mark.parametrize("argv", [["search", "deploy token"], ["search", "deploy token", "--json"],
                                  ["stats"], ["stats", "--json"]])
def test_reading_memory_leaves_the_stores_as_they_were_and_prints_no_key(
        argv: list[str], stored_key_home: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """A key configured after it was stored is scrubbed from the file by the next chat, not by
    a command that only reads: the files keep their bytes and mtime, the output is redacted."""
    home, secret = stored_key_home()
    before = store_state(home)
    assert main(["-vv", "memory", *argv, "--home", str(home)]) == 0
    out, err = capsys.readouterr()
    assert secret not in out + err
    if argv[0] == "search":
        assert "please remember" in out
    assert store_state(home) == before


@pytest.mark.parametrize("argv", [
    ["--created-at", "x" * 10_000],
    ["--created-at", "9" * 4 + "-01-01" + "x" * 10_000],
    ["--relevance", "a" * 10_000],
    ["--relevance", "1" + "0" * 10_000],
])
def test_add_bad_argument_of_10000_characters_is_shown_by_its_head_and_length(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    with pytest.raises(SystemExit):
        main(["memory", "add", "--db", str(tmp_path / "m.db"), "--session-id", "a", "--summary", "x", *argv])
    err = capsys.readouterr().err
    assert "characters)" in err and len(err) < 2_000


def test_forget_removes_a_session_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "m.db")
    run(capsys, "memory", "add", "--db", db, "--session-id", "s1", "--summary", "Deployed kubernetes")
    run(capsys, "memory", "add", "--db", db, "--session-id", "s2", "--summary", "Brewed espresso")
    code, out, _ = run(capsys, "memory", "forget", "s1", "--db", db)
    assert code == 0 and "forgot session s1" in out
    code, out, _ = run(capsys, "memory", "search", "kubernetes", "--db", db, "--json")
    assert json.loads(out) == []
    code, out, _ = run(capsys, "memory", "forget", "s2", "--db", db, "--json")
    assert code == 0 and json.loads(out) == {"forgotten": True, "session_id": "s2", "db": db}


@pytest.mark.parametrize("session_id", ["nope", "-", "NEAR(x)", "会话 1"])
def test_forget_of_a_session_not_stored_is_an_error_that_names_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], session_id: str) -> None:
    db = str(tmp_path / "m.db")
    run(capsys, "memory", "add", "--db", db, "--session-id", "s1", "--summary", "Deployed kubernetes")
    before = (tmp_path / "m.db").stat().st_size
    code, out, err = run(capsys, "memory", "forget", "--db", db, "--", session_id)
    assert code == 1 and out == ""
    assert f"no session {session_id!r} is stored in {db}" in err
    assert (tmp_path / "m.db").stat().st_size == before


@pytest.mark.parametrize("session_id", ["x" * 10_000, "会话" * 5_000])
def test_forget_of_a_10000_character_id_not_stored_names_it_by_its_head_and_length(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], session_id: str) -> None:
    # the whole id was quoted back: one 10,000-character line burying "no session ... is stored"
    db = str(tmp_path / "m.db")
    run(capsys, "memory", "add", "--db", db, "--session-id", "s1", "--summary", "Deployed kubernetes")
    code, out, err = run(capsys, "memory", "forget", "--db", db, "--", session_id)
    assert code == 1 and out == ""
    assert f"({len(session_id)} characters)" in err and f"is stored in {db}" in err
    assert len(err) < 500 and err.count("\n") == 1


def test_forget_without_a_database_does_not_create_one(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "m.db"
    code, _, err = run(capsys, "memory", "forget", "s1", "--db", str(db))
    assert code != 0 and "does not exist" in err and not db.exists()


@pytest.mark.parametrize("blank", ["", "   "])
def test_forget_of_a_blank_id_is_a_usage_error_and_opens_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], blank: str) -> None:
    db = tmp_path / "m.db"
    code, out, err = run(capsys, "memory", "forget", blank, "--db", str(db))
    assert code == 2 and out == "" and "ID must not be empty" in err and not db.exists()


def test_prune_deletes_what_the_retention_settings_no_longer_keep(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "m.db")
    for i, day in enumerate(("2026-01-01", "2026-01-02", "2026-01-03", "2026-01-04")):
        run(capsys, "memory", "add", "--db", db, "--session-id", f"s{i}", "--summary",
            f"session {i} notes", "--created-at", day)
    code, _, err = run(capsys, "memory", "prune", "--db", db)
    assert code == 2 and "context_engine.max_sessions" in err
    config = tmp_path / "config.yaml"
    config.write_text("context_engine:\n  max_sessions: 2\n", encoding="utf-8")
    code, out, _ = run(capsys, "memory", "prune", "--db", db, "--config", str(config), "--json")
    assert code == 0 and json.loads(out) == {"pruned": 2, "db": db}
    code, out, _ = run(capsys, "memory", "stats", "--db", db, "--json")
    assert json.loads(out)["sessions"] == 2 and json.loads(out)["oldest"] == "2026-01-03T00:00:00Z"


@pytest.mark.parametrize(("argv", "code", "says"), [
    (["add", "--session-id", " ", "--summary", "x"], 2, "--session-id must not be empty"),
    (["add", "--session-id", "a", "--summary", ""], 2, "--summary must not be empty"),
    (["forget", ""], 2, "ID must not be empty"),
    (["forget", "no-such-session"], 1, "no session 'no-such-session' is stored"),
    (["prune"], 2, "nothing to prune"),
])
def test_a_refusal_under_json_is_one_json_object_on_stdout_too(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], code: int,
        says: str) -> None:
    """The checks memory makes itself (a blank id, an unknown session, no retention set) said so
    on stderr only: a script reading ``--json`` got nothing, unlike any other error."""
    db = tmp_path / "m.db"
    assert run(capsys, "memory", "add", "--db", str(db), "--session-id", "a", "--summary",
               "espresso")[0] == 0
    got, out, err = run(capsys, "memory", *argv, "--db", str(db), "--json")
    assert got == code and says in err
    assert json.loads(out) == {"error": err.strip(), "kind": "error" if code == 1 else "usage",
                               "exit_code": code}


def _search_lines(capsys: pytest.CaptureFixture[str], db: str, query: str) -> list[str]:
    code, out, _ = run(capsys, "memory", "search", query, "--db", db)
    assert code == 0
    return [line for line in out.splitlines() if not line.startswith(" " * 12)]


@pytest.mark.parametrize("typed", [
    "93c7e6d2",                                # a prefix
    "93c7e6d2a142-4b1f  [db, ops]",            # the id and its tags, as search printed them
    "  93c7e6d2a142-4b1f  ",                   # copied with the spaces around it
    "whole line",                              # the whole line search printed
])
def test_forget_takes_the_id_as_memory_search_printed_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], typed: str) -> None:
    db = str(tmp_path / "m.db")
    run(capsys, "memory", "add", "--db", db, "--session-id", "93c7e6d2a142-4b1f", "--summary",
        "Deployed kubernetes", "--tags", "db,ops")
    run(capsys, "memory", "add", "--db", db, "--session-id", "s2", "--summary", "Brewed espresso")
    if typed == "whole line":
        [typed] = _search_lines(capsys, db, "kubernetes")
    code, out, err = run(capsys, "memory", "forget", "--db", db, "--", typed)
    assert (code, err) == (0, "")
    assert "forgot session 93c7e6d2a142-4b1f" in out
    assert json.loads(run(capsys, "memory", "search", "kubernetes", "--db", db, "--json")[1]) == []
    assert json.loads(run(capsys, "memory", "search", "espresso", "--db", db, "--json")[1]) != []


def test_forget_takes_an_id_with_a_control_character_as_search_escaped_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "m.db")
    run(capsys, "memory", "add", "--db", db, "--session-id", "chat\x1b7", "--summary", "Deployed kubernetes")
    [line] = _search_lines(capsys, db, "kubernetes")
    assert line.endswith("chat\\x1b7")
    code, out, _ = run(capsys, "memory", "forget", "--db", db, "--", "chat\\x1b7")
    assert code == 0 and "forgot session chat\\x1b7" in out


def test_forget_of_an_ambiguous_prefix_names_the_sessions_and_forgets_none(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "m.db")
    for sid in ("93c7e6d2a142", "93c7e6d2ffff"):
        run(capsys, "memory", "add", "--db", db, "--session-id", sid, "--summary", f"notes {sid}")
    code, out, err = run(capsys, "memory", "forget", "--db", db, "--", "93c7e6d2")
    assert code == 1 and out == ""
    assert "'93c7e6d2' is ambiguous: 2 sessions start with it (93c7e6d2a142, 93c7e6d2ffff)" in err
    assert json.loads(run(capsys, "memory", "stats", "--db", db, "--json")[1])["sessions"] == 2


def test_forget_of_a_short_prefix_forgets_nothing(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Forgetting cannot be undone: a prefix names a session from four characters on, as git
    takes an abbreviated commit id, so "s" does not forget the only session starting with it."""
    db = str(tmp_path / "m.db")
    run(capsys, "memory", "add", "--db", db, "--session-id", "session-one", "--summary", "espresso")
    code, _, err = run(capsys, "memory", "forget", "--db", db, "--", "ses")
    assert code == 1 and "no session 'ses' is stored" in err
    assert "at least 4 characters" in err


def _home_with_a_key_in_a_session_id(tmp_path: Path) -> tuple[Path, str]:
    """A home whose session id holds a key stored before the config named it (as a web front end
    may put a token in an id); `memory search` shows that id with the key redacted."""
    from hermes_core.agent.context_engine import ContextEngine
    secret = f"zq81-IDTOKEN-{tmp_path.name[-8:]}-55rc"
    home = tmp_path / "home"
    home.mkdir()
    with ContextEngine(home / "sessions.db") as engine:
        engine.add(f"web-{secret}", "Deployed kubernetes")
        engine.add("s2", "Brewed espresso")
    (home / "config.yaml").write_text(
        "llm:\n  routing:\n    providers: [{name: custom, type: openai, endpoint: 'http://127.0.0.1:9/v1'}]\n"
        f"credentials:\n  custom:\n    keys: [{{key: '{secret}'}}]\n"
        "skill_utils:\n  embeddings: false\n", encoding="utf-8")
    return home, secret


@pytest.mark.parametrize("typed", ["prefix", "as printed", "whole line"])
@pytest.mark.parametrize("as_json", [False, True])
def test_forget_of_a_session_whose_id_holds_a_key_forgets_it_and_prints_no_key(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], typed: str, as_json: bool) -> None:
    """The id's prefix found the session, then `forget` redacted the id it was handed again and
    deleted nothing ("no session ... is stored"); the id as search printed it (the key shown
    redacted) named no session at all (review s55rC)."""
    home, secret = _home_with_a_key_in_a_session_id(tmp_path)
    code, out, _ = run(capsys, "memory", "search", "kubernetes", "--home", str(home))
    line = out.splitlines()[0]
    assert code == 0 and secret not in out and "web-" in line
    typed_id = {"prefix": "web-", "as printed": line.split()[-1], "whole line": line}[typed]
    code, out, err = run(capsys, "memory", "forget", "--home", str(home), *(["--json"] * as_json),
                         "--", typed_id)
    assert code == 0, err
    assert secret not in out + err
    code, out, _ = run(capsys, "memory", "search", "kubernetes", "--home", str(home), "--json")
    assert json.loads(out) == []
    assert json.loads(run(capsys, "memory", "stats", "--home", str(home), "--json")[1])["sessions"] == 1
