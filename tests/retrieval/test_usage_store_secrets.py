"""Keys kept out of the history of skill use (``hermes_core/retrieval/usage_store.py``): a query
redacted before it is cut and stored, a key configured after it was recorded scrubbed from the file
once (in every spelling, with no copy left in freed space), redacted in memory where the file is
read-only, and the rows an older version cut before redacting re-redacted on open. The store's
other behaviour is in ``test_usage_store.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes_core.retrieval import usage as U
from hermes_core.retrieval.retriever import build_retriever
from hermes_core.retrieval.usage_store import UsageStore
from tests.retrieval.conftest import old_usage_file


def test_store_records_redacts_and_reads_back() -> None:
    st = UsageStore(None, clock=lambda: 42.0)
    assert st.record("use key sk-abcdefghijklmnopqrstuvwxyz123456 to send mail", "email-send", "view")
    [e] = st.events()
    assert "sk-abcdefghijklmnopqrstuvwxyz123456" not in e.query and "send mail" in e.query
    assert (e.skill, e.kind, e.good, e.at) == ("email-send", "view", True, 42.0)


@pytest.mark.parametrize("secret", ["correct-horse-battery-staple-42", "sk-proj-Abc123Def456Ghi789Jkl0Mno"])
@pytest.mark.parametrize("at", [U.MAX_QUERY_CHARS - 20, U.MAX_QUERY_CHARS - 5, U.MAX_QUERY_CHARS - 1])
def test_a_secret_across_the_stored_querys_cut_leaves_no_piece_of_itself(secret: str, at: int) -> None:
    """The query was cut at MAX_QUERY_CHARS before it was redacted: a configured key (any shape)
    or a key-shaped string across the cut was no longer whole, so its head was stored in clear."""
    st = UsageStore(None, secrets=[secret])
    assert st.record("x" * at + " " + secret + " please send the mail", "email-send")
    [e] = st.events()
    assert len(e.query) <= U.MAX_QUERY_CHARS and secret[:12] not in e.query and secret[-12:] not in e.query


def test_a_key_configured_after_it_was_recorded_is_redacted_in_the_file_on_open(tmp_path: Path) -> None:
    path = tmp_path / U.USAGE_FILE
    secret = "zq81-PLAINTOKEN-77xx"            # no known key shape: recorded in clear
    first = UsageStore(path)
    first.record(f"deploy with token {secret} to staging", "deploy", "trigger")
    first.record("check the docker logs", "docker-debugging", "view")
    first.close()
    again = UsageStore(path, secrets=[secret])  # the same history, the key now configured
    assert [e.query for e in again.events()] == ["deploy with token [key-2b7344ca85] to staging",
                                                 "check the docker logs"]
    again.close()
    import sqlite3
    with sqlite3.connect(path) as conn:
        assert secret not in repr(conn.execute("SELECT * FROM usage_events").fetchall())


def _traced_opens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every SQL statement the usage stores opened from now on run."""
    import sqlite3
    statements: list[str] = []
    real = sqlite3.connect

    def connect(*args: Any, **kw: Any) -> sqlite3.Connection:
        conn = real(*args, **kw)
        conn.set_trace_callback(statements.append)
        return conn
    monkeypatch.setattr(sqlite3, "connect", connect)
    return statements


def test_a_configured_key_is_scrubbed_from_the_history_once_not_on_every_open(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scan for a configured key reads every stored query: done on the first open after the
    key is configured, then recorded as done (as the episodic store does), so a later open of a
    large history costs one read of the markers, and writes nothing."""
    path = tmp_path / U.USAGE_FILE
    secret = "zq81-PLAINTOKEN-77xx"
    first = UsageStore(path)
    first.record(f"deploy with token {secret} to staging", "deploy", "trigger")
    first.close()
    statements = _traced_opens(monkeypatch)
    scrubbing = UsageStore(path, secrets=[secret])
    assert len(scrubbing) == 1 and secret not in repr(scrubbing.events())
    scrubbing.close()
    assert any("instr(query" in s for s in statements)
    statements.clear()
    again = UsageStore(path, secrets=[secret])
    assert len(again) == 1
    again.close()
    assert statements and not [s for s in statements if "instr(query" in s or "UPDATE" in s
                               or "INSERT" in s]


def test_a_key_configured_later_is_scrubbed_though_the_others_are_done(tmp_path: Path) -> None:
    path = tmp_path / U.USAGE_FILE
    old, new = "zq81-PLAINTOKEN-77xx", "wv42-OTHERTOKEN-19yy"
    st = UsageStore(path, secrets=[old])
    assert len(st) == 0
    st.close()
    UsageStore(path).record(f"ship it with {new} today", "deploy", "trigger")   # before it was configured
    both = UsageStore(path, secrets=[old, new])
    assert [e.query for e in both.events()] == ["ship it with [key-b42d0f078f] today"]
    both.close()


def test_a_read_only_history_is_redacted_in_memory_and_scrubbed_by_the_next_writable_open(
        tmp_path: Path) -> None:
    path = tmp_path / U.USAGE_FILE
    secret = "zq81-PLAINTOKEN-77xx"
    first = UsageStore(path)
    first.record(f"deploy with token {secret} to staging", "deploy", "trigger")
    first.close()
    before = path.read_bytes()
    preview = UsageStore(path, secrets=[secret], read_only=True)
    assert [e.query for e in preview.events()] == ["deploy with token [key-2b7344ca85] to staging"]
    assert preview.read_only and not preview.record("another use", "deploy")
    preview.close()
    assert path.read_bytes() == before
    writable = UsageStore(path, secrets=[secret])
    assert secret not in repr(writable.events())
    writable.close()
    import sqlite3
    with sqlite3.connect(path) as conn:
        assert secret not in repr(conn.execute("SELECT * FROM usage_events").fetchall())


@pytest.mark.usefixtures("sqlite_without_secure_delete")
def test_a_key_redacted_on_open_leaves_no_copy_in_freed_space_of_the_file(tmp_path: Path) -> None:
    """An UPDATE leaves the old query's bytes in the page's free space unless secure_delete is
    on; on a SQLite built without it (not Debian's) the key outlived the redaction."""
    path = tmp_path / U.USAGE_FILE
    secret = "zq81-PLAINTOKEN-77xx"
    first = UsageStore(path)
    for i in range(30):
        first.record(f"check the docker logs of service {i}", "docker-debugging", "view")
    first.record(f"deploy with token {secret} to staging", "deploy", "trigger")
    for i in range(30):
        first.record(f"check the nginx logs of service {i}", "docker-debugging", "view")
    first.close()
    assert secret.encode() in b"".join(p.read_bytes() for p in tmp_path.glob(U.USAGE_FILE + "*"))
    again = UsageStore(path, secrets=[secret])
    assert secret not in repr(again.events())
    again.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.glob(U.USAGE_FILE + "*"))
    assert secret.encode() not in raw


_OLD_SECRET = "zq9Horse7battery.Staple-42"   # a configured key of no recognisable shape


def test_rows_of_an_older_version_are_re_redacted_once_on_open(tmp_path: Path) -> None:
    path = tmp_path / U.USAGE_FILE
    pad = "please send the mail " + "y" * (U.MAX_QUERY_CHARS - 32)
    cut_key = (pad + " sk-proj-Abc123Def456Ghi789Jkl0Mno")[:U.MAX_QUERY_CHARS]
    cut_secret = (pad + "ab " + _OLD_SECRET)[:U.MAX_QUERY_CHARS]
    chinese = "请帮我发送邮件" * 200
    old_usage_file(path, ["send the mail", f"mail with key {_OLD_SECRET} now", cut_key, cut_secret,
                           chinese[:U.MAX_QUERY_CHARS], "Abc123x9" * (U.MAX_QUERY_CHARS // 8)])
    assert cut_key.endswith(" sk-proj-Ab") and cut_secret.endswith(" zq9Horse")   # heads of keys

    st = UsageStore(path, secrets=[_OLD_SECRET])
    queries = [e.query for e in st.events()]
    st.close()
    assert len(queries) == 5              # the row that was one cut token (a key's head?) is dropped
    assert queries[0] == "send the mail" and queries[4] == chinese[:U.MAX_QUERY_CHARS]
    assert _OLD_SECRET not in queries[1] and queries[1].startswith("mail with key [key-")
    assert all("sk-proj" not in q and "zq9Horse" not in q and "Horse7" not in q for q in queries)
    assert queries[2].startswith("please send the mail") and queries[3].startswith("please send")

    import sqlite3
    conn = sqlite3.connect(path)   # a row written after the migration is not touched again
    assert conn.execute("PRAGMA user_version").fetchone()[0] == U.USAGE_SCHEMA_VERSION
    with conn:
        conn.execute("INSERT INTO usage_events (at, query, skill, kind, good) "
                     "VALUES (2.0, 'the word zq9Horse stays', 'email-send', 'view', 1)")
    conn.close()
    again = UsageStore(path, secrets=[_OLD_SECRET])
    assert again.events()[-1].query == "the word zq9Horse stays"
    again.close()


def test_the_retrievers_usage_store_scrubs_the_configured_secrets(tmp_path: Path) -> None:
    from hermes_core.config import load_settings
    home = tmp_path / "home"
    home.mkdir()
    short = "Zq9x-k2"   # configured, below the length registered process-wide
    s = load_settings({"home": str(home), "skill_utils": {"embeddings": False},
                       "credentials": {"openai": {"keys": [{"key": short}]}}}, env={})
    r = build_retriever(s)
    assert r.usage is not None
    r.usage.store.record(f"send mail with {short} please", "email-send")
    assert short not in r.usage.store.events()[0].query


def test_a_key_stored_in_an_encoded_spelling_is_scrubbed_from_the_file_once(tmp_path: Path) -> None:
    """The scan looks for every spelling of the key (a percent-encoded one in a pasted URL), also
    in a history already marked done for the key as written."""
    import sqlite3
    import urllib.parse

    from hermes_core.redact import scrubbed_marker

    path = tmp_path / U.USAGE_FILE
    key = "p@ss:w/rd&x=1;zQ9-odd"
    encoded = urllib.parse.quote(key, safe="")
    st = UsageStore(path)
    st.record(f"fetch https://proxy.internal/v1?key={encoded} report", "fetch", "trigger")
    st.close()
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO usage_meta (key, value) VALUES (?, '0')", (scrubbed_marker(key),))
    conn.close()
    UsageStore(path, secrets=[key]).close()
    with sqlite3.connect(path) as conn:
        dump = "\n".join(conn.iterdump())
    conn.close()
    assert encoded not in dump and "proxy.internal" in dump
