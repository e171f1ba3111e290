"""Tests of ``hermes_core/agent/context_engine.py``: keys kept out of the archive.

A key pasted into a chat is stored neither in a summary, a tag nor a session id; rows stored
before the key was configured are redacted on every way out and rewritten in the file, leaving
no copy in its freed pages. (The engine's other tests are in ``test_context_engine.py``.)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hermes_core.agent.context_engine import ContextEngine
from hermes_core.cli.main import main
from hermes_core.redact import Redactor
from hermes_core.types import Message
from tests.agent.conftest import NOW

KEY = "sk-proj-Zx81kQ0pLm3vNc7RtY6uWe2sAd9fGh4j"


def _all_text(db: Path) -> str:
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT summary, tags FROM sessions").fetchall()
    rows += conn.execute("SELECT summary, tags FROM sessions_fts").fetchall()
    conn.close()
    return "\n".join(" ".join(r) for r in rows)


def test_pasted_key_is_not_stored_by_record_session(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    msgs = [Message("user", f"My OpenAI key is {KEY} and the billing dashboard rejects it."),
            Message("assistant", "That key format is for projects; check the billing dashboard.")]
    with ContextEngine(db, clock=lambda: NOW) as engine:
        res = engine.record_session("s1", msgs)
        assert res.status == "inserted"
        block = engine.memories_block("billing dashboard key")
    assert "billing dashboard" in block
    assert KEY not in block and KEY not in _all_text(db)
    assert KEY[:12] not in _all_text(db)


@pytest.mark.parametrize("secret", [KEY, "zq9-Horse7-battery-Staple"])
def test_no_piece_of_a_pasted_key_becomes_a_tag(tmp_path: Path, secret: str) -> None:
    """Tags are words of the chat: a key split at its hyphens ("zq9", "horse7", "battery",
    "staple") or its random run lower-cased is the key stored piece by piece, searchable."""
    from hermes_core.redact import Redactor

    db = tmp_path / "sessions.db"
    msgs = [Message("user", f"Deploy the proxy with key {secret} to staging; the key {secret} "
                            "is for staging only."),
            Message("assistant", "Deployed the proxy to staging.")]
    with ContextEngine(db, clock=lambda: NOW, redactor=Redactor([secret])) as engine:
        engine.record_session("s1", msgs)
        assert [f.session_id for f in engine.retrieve("staging proxy")] == ["s1"]
    stored = _all_text(db).lower()
    pieces = [p.lower() for p in secret.split("-") if len(p) >= 3 and p not in ("proj",)]
    assert pieces and not [p for p in pieces if p in stored], stored


def test_model_summary_echoing_a_key_is_redacted(tmp_path: Path) -> None:
    from hermes_core.agent.episodic.summarise import SessionSummary

    db = tmp_path / "sessions.db"
    with ContextEngine(db, clock=lambda: NOW) as engine:
        engine.record_session("s1", [Message("user", "help with my key")],
                              lambda _m: SessionSummary(f"The user shared the key {KEY} for billing.",
                                                        ("billing", KEY)))
    assert KEY not in _all_text(db)


def test_memory_add_and_search_never_print_a_key(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "sessions.db"
    assert main(["memory", "add", "--db", str(db), "--session-id", "s1",
                 "--summary", f"rotated the staging key {KEY} today"]) == 0
    for extra in ([], ["--json"]):
        assert main(["memory", "search", "staging key", "--db", str(db), *extra]) == 0
        out = capsys.readouterr().out
        assert "staging" in out and KEY not in out and KEY[:12] not in out
    assert KEY not in _all_text(db)


def test_rows_stored_before_the_fix_are_redacted_on_output(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """A database written by an older hermes-core may hold a key: the CLI still does not print it."""
    db = tmp_path / "sessions.db"
    with ContextEngine(db, clock=lambda: NOW) as engine:
        engine.add("s0", "placeholder summary about staging")
    conn = sqlite3.connect(db)
    conn.execute("UPDATE sessions SET summary = ?", (f"old row: staging key {KEY}",))
    conn.commit()
    conn.close()
    for extra in ([], ["--json"]):
        assert main(["memory", "search", "staging", "--db", str(db), *extra]) == 0
        out = capsys.readouterr().out
        assert "staging" in out and KEY not in out


OLD_SECRET = "zq9-Horse7-battery-Staple"   # a configured key of no recognisable shape


def _row_from_before_redaction(db: Path) -> None:
    """sessions.db as a version without redaction by the secrets themselves left it: the key in
    the summary, its pieces as tags."""
    with ContextEngine(db, clock=lambda: NOW, redactor=lambda text: text) as old:
        old.add("s-old", f"Deployed the staging proxy with key {OLD_SECRET} today.",
                ["staging", "proxy", "zq9", "Horse7", "battery"])


def test_every_reader_of_rows_from_before_redaction_gets_them_redacted(tmp_path: Path) -> None:
    """retrieve() (the CLI's `memory search`, the REPL's /memory) and recall (the prompt sent to
    any provider) read rows an older version stored in clear: both scrub them, tags that are
    pieces of a configured key included."""
    from hermes_core.redact import Redactor

    db = tmp_path / "sessions.db"
    _row_from_before_redaction(db)
    with ContextEngine(db, clock=lambda: NOW, redactor=Redactor([OLD_SECRET])) as engine:
        [found] = engine.retrieve("staging proxy")
        block, shown = engine.recall("staging proxy")
    for f in (found, *shown):
        assert OLD_SECRET not in f.summary and "staging proxy" in f.summary
        assert [t for t in f.tags if t.lower() in OLD_SECRET.lower()] == [], f.tags
        assert "staging" in f.tags
    assert OLD_SECRET not in block and "Horse7" not in block and "zq9" not in block


def test_rows_from_before_a_key_was_configured_are_rewritten_in_the_file(tmp_path: Path) -> None:
    """Redacting on read is not enough: the file is backed up, synced and read by other tools.
    The first engine that knows the key rewrites the rows holding it (summary, tags, index)."""
    db = tmp_path / "sessions.db"
    _row_from_before_redaction(db)
    with ContextEngine(db, clock=lambda: NOW, redactor=Redactor([OLD_SECRET])) as engine:
        stored = engine.get("s-old")
        assert stored is not None and OLD_SECRET not in stored.summary
        assert "staging" in stored.tags and not {"zq9", "Horse7"} & set(stored.tags)
    with sqlite3.connect(db) as conn:
        dump = "\n".join(conn.iterdump())
    assert OLD_SECRET not in dump and "Horse7" not in dump


def _file_bytes(db: Path) -> bytes:
    """sessions.db and its -wal / -shm companions as they are on disk."""
    return b"".join(p.read_bytes() for p in sorted(db.parent.glob(db.name + "*")))


@pytest.mark.usefixtures("sqlite_without_secure_delete")
def test_a_rewritten_key_leaves_no_copy_in_freed_pages_of_the_file(tmp_path: Path) -> None:
    """Deleting a row leaves its bytes in the freed page unless secure_delete is on; on a SQLite
    built without it (not Debian's), the key outlived the rewrite in sessions.db."""
    db = tmp_path / "sessions.db"
    with ContextEngine(db, clock=lambda: NOW, redactor=lambda text: text) as old:
        for i in range(40):
            old.add(f"before-{i}", f"filler session {i} about cooking pasta", ["food"])
    _row_from_before_redaction(db)
    with ContextEngine(db, clock=lambda: NOW, redactor=lambda text: text) as old:
        for i in range(40):
            old.add(f"after-{i}", f"filler session {i} about cooking rice", ["food"])
    assert OLD_SECRET.encode() in _file_bytes(db)
    with ContextEngine(db, clock=lambda: NOW, redactor=Redactor([OLD_SECRET])) as engine:
        assert engine.get("s-old") is not None
    raw = _file_bytes(db)
    assert OLD_SECRET.encode() not in raw and b"Horse7" not in raw


def test_tags_holding_pieces_of_a_key_are_rewritten_when_the_summary_was_redacted(
        tmp_path: Path) -> None:
    """The version before redacted the summary by the configured key but stored tags cut from
    it; the full key is then nowhere in the row, yet its pieces are, and must leave the file."""
    db = tmp_path / "sessions.db"
    with ContextEngine(db, clock=lambda: NOW, redactor=lambda text: text) as old:
        old.add("s-tags", "Rotated the staging proxy key [key-c584621c85] today.",
                ["staging", "zq9", "Horse7"])
    with ContextEngine(db, clock=lambda: NOW, redactor=Redactor([OLD_SECRET])) as engine:
        stored = engine.get("s-tags")
    assert stored is not None and stored.tags == ("staging",)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT tags FROM sessions").fetchall() == [("staging",)]
        hits = conn.execute("SELECT session_id FROM sessions_fts WHERE sessions_fts MATCH 'horse'")
        assert hits.fetchall() == []


def test_tags_that_are_pieces_of_a_configured_key_are_not_stored(tmp_path: Path) -> None:
    with ContextEngine(tmp_path / "sessions.db", clock=lambda: NOW,
                       redactor=Redactor([OLD_SECRET])) as engine:
        engine.add("s1", "rotated the proxy key", ["proxy", "horse7", "battery", "zq9"])
        stored = engine.get("s1")
    assert stored is not None and stored.tags == ("proxy",)


def test_a_short_tag_that_turns_up_inside_a_random_key_is_kept(tmp_path: Path) -> None:
    """"git" or "api" inside a random key's characters is chance, not a piece of the key: a
    configured key must not silently drop such a tag from every session recorded."""
    key = "sk-proj-Q7xGiTz9LmApi3Rt0VbN"
    with ContextEngine(tmp_path / "sessions.db", clock=lambda: NOW,
                       redactor=Redactor([key, OLD_SECRET])) as engine:
        engine.add("s1", "rebased onto main and fixed the client", ["git", "api", "horse7", "zq9"])
        stored = engine.get("s1")
    assert stored is not None and stored.tags == ("git", "api")


def test_a_session_id_holding_a_key_is_stored_and_matched_redacted(tmp_path: Path) -> None:
    # an id is written to sessions.db like the summary: a key in it (a caller's own id scheme,
    # `memory add --session-id`) is scrubbed there too, and the same id still finds its row
    key = "cu5tom.Session.Key.77ab9"
    scrub = Redactor([key])
    with ContextEngine(tmp_path / "sessions.db", clock=lambda: NOW, redactor=scrub) as engine:
        res = engine.add(f"chat-{key}", "cafe latte notes")
        engine.add("other", "latte art class")
        assert key not in res.session_id
        assert engine.get(f"chat-{key}") is not None
        found = {f.session_id for f in engine.retrieve("latte", 5, exclude_session=f"chat-{key}")}
        assert found == {"other"}
        assert engine.forget(f"chat-{key}")
    assert key.encode() not in (tmp_path / "sessions.db").read_bytes()


def test_a_key_stored_in_an_encoded_spelling_is_rewritten_though_the_key_was_scanned_for(
        tmp_path: Path) -> None:
    """A URL pasted before the key was configured holds it percent-encoded; a store already
    scanned for the key as written (by a version that knew no other spelling) is scanned again
    for the other spellings, once."""
    import urllib.parse

    from hermes_core.redact import Redactor, scrubbed_marker

    key = "p@ss:w/rd&x=1;zQ9-odd"
    encoded = urllib.parse.quote(key, safe="")
    db = tmp_path / "sessions.db"
    with ContextEngine(db, clock=lambda: NOW, redactor=lambda text: text) as old:
        old.add("s-url", f"Called https://proxy.internal/v1?key={encoded} for the report.", ["proxy"])
    with sqlite3.connect(db) as conn:   # what the older version recorded once the key was configured
        conn.execute("INSERT INTO meta(key, value) VALUES (?, '0')", (scrubbed_marker(key),))
    conn.close()
    with ContextEngine(db, clock=lambda: NOW, redactor=Redactor([key])) as engine:
        assert engine.get("s-url") is not None
    with sqlite3.connect(db) as conn:
        dump = "\n".join(conn.iterdump())
    conn.close()
    assert encoded not in dump and key not in dump and "proxy.internal" in dump
