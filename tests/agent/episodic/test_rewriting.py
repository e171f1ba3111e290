"""The rows a secret is in, and their rewrite inside the store's write transaction."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from hermes_core.agent.episodic import rewriting
from hermes_core.agent.episodic.store import SessionRecord, SessionStore

NOW = 1_700_000_000.0


def _store(tmp_path: Path) -> SessionStore:
    store = SessionStore(tmp_path / "m.db", clock=lambda: NOW)
    store.upsert(SessionRecord("s1", "token zq9-Horse7-battery for staging", (), NOW))
    store.upsert(SessionRecord("s2", "nothing to hide here", ("horse7",), NOW))
    store.upsert(SessionRecord("zq9-Horse7-battery", "an id made of the key", (), NOW))
    store.upsert(SessionRecord("s4", "a horse is no key", ("horse",), NOW))
    return store


def test_the_rows_holding_a_key_are_those_with_it_in_text_or_id_or_a_tag_of_its_pieces(
        tmp_path: Path) -> None:
    with _store(tmp_path) as store:
        conn = store.connection
        ids = {conn.execute("SELECT session_id FROM sessions WHERE rowid = ?", (r,)).fetchone()[0]
               for r in rewriting.rows_holding(conn, "zq9-Horse7-battery")}
    assert ids == {"s1", "s2", "zq9-Horse7-battery"}


def test_a_row_the_cleaner_leaves_as_it_was_is_not_rewritten_and_the_marker_is_done(
        tmp_path: Path) -> None:
    with _store(tmp_path) as store, store.connection as conn:
        n = rewriting.rewrite_pending(conn, {"m1": "zq9-Horse7-battery"}, lambda r: r,
                                      clock=lambda: NOW, segment=lambda t: t,
                                      upsert=SessionStore._upsert_one)
        assert n == 0
        assert [r[0] for r in conn.execute(rewriting.DONE_SQL)] == [rewriting.SCRUBBED + "m1"]


def test_a_rewritten_row_is_stored_again_through_the_upsert_given(tmp_path: Path) -> None:
    stored: list[str] = []

    def upsert(conn, rec, chash, tags, seg_summary, seg_tags):  # type: ignore[no-untyped-def]
        stored.append(rec.summary)
        return SessionStore._upsert_one(conn, rec, chash, tags, seg_summary, seg_tags)

    with _store(tmp_path) as store:
        with store.connection as conn:
            n = rewriting.rewrite_rows(
                conn, rewriting.rows_holding(conn, "zq9-Horse7-battery")[:1],
                lambda r: replace(r, summary=r.summary.replace("zq9-Horse7-battery", "[k]")),
                clock=lambda: NOW, segment=lambda t: t, upsert=upsert)
        assert n == 1 and stored == ["token [k] for staging"]
        got = store.get("s1")
        assert got is not None and got.summary == "token [k] for staging"
