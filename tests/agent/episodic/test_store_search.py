"""Tests of ``hermes_core/agent/episodic/store.py``: searching and counting terms.

Document frequencies up to a cap and when they are counted again, the newest rows, planted
sessions among common ones, and whom an error of a search blames: the query or the file.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from hermes_core.agent.context_engine import ContextEngine
from hermes_core.agent.episodic import ranking
from hermes_core.agent.episodic.store import SessionDatabaseUnusable, SessionRecord, SessionStore
from hermes_core.errors import SessionQueryInvalid


def engine_with(tmp_path: Path, n_common: int) -> ContextEngine:
    eng = ContextEngine(tmp_path / "sessions.db", clock=lambda: 2_000_000_000.0)
    for i in range(n_common):
        eng.add(f"c{i}", f"routine deploy of the billing service number {i}", created_at=1_900_000_000.0 + i)
    return eng


def test_term_df_counts_up_to_the_cap_and_is_refreshed_by_a_write(tmp_path: Path) -> None:
    eng = engine_with(tmp_path, 12)
    try:
        store = eng.store
        assert store.term_df("billing", 100) == 12
        assert store.term_df("billing", 5) == 6          # counted no further than cap + 1
        assert store.term_df("nowhere", 100) == 0
        eng.add("x", "billing dispute with the bank", created_at=1_950_000_000.0)
        assert store.term_df("billing", 100) == 13       # the write invalidated the cached count
    finally:
        eng.close()


def test_term_dfs_asks_once_whether_the_database_changed_and_counts_only_new_terms(
        tmp_path: Path, statements_of: Callable[[SessionStore], AbstractContextManager[list[str]]]
) -> None:
    eng = engine_with(tmp_path, 3)
    try:
        store = eng.store
        assert store.term_dfs(["billing", "nowhere"], 100) == {"billing": 3, "nowhere": 0}
        with statements_of(store) as ours:
            assert store.term_dfs(["nowhere", "billing", "deploy"], 100) == {
                "nowhere": 0, "billing": 3, "deploy": 3}
        assert ours[0] == "PRAGMA data_version"
        assert len(ours) == 2 and '"deploy"' in ours[1]    # only 'deploy' was counted
        eng.add("x", "billing dispute with the bank", created_at=1_950_000_000.0)
        assert store.term_dfs(["billing", "bank"], 100) == {"billing": 4, "bank": 1}
    finally:
        eng.close()


def test_term_dfs_of_an_empty_archive_count_nothing_until_a_session_is_added(
        tmp_path: Path, statements_of: Callable[[SessionStore], AbstractContextManager[list[str]]]
) -> None:
    eng = ContextEngine(tmp_path / "sessions.db", clock=lambda: 2_000_000_000.0)
    try:
        store = eng.store
        assert store.term_dfs(["billing"], 100) == {"billing": 0}
        with statements_of(store) as ours:
            assert store.term_dfs(["billing", "deploy"], 100) == {"billing": 0, "deploy": 0}
        assert ours == ["PRAGMA data_version"]               # no count of a term: nothing to count
        eng.add("x", "billing dispute with the bank", created_at=1_950_000_000.0)
        assert store.term_dfs(["billing", "deploy"], 100) == {"billing": 1, "deploy": 0}
    finally:
        eng.close()


def test_a_session_another_connection_adds_to_an_empty_archive_is_found_next_turn(
        tmp_path: Path) -> None:
    reader = ContextEngine(tmp_path / "sessions.db", clock=lambda: 2_000_000_000.0)
    writer = ContextEngine(tmp_path / "sessions.db", clock=lambda: 2_000_000_000.0)
    try:
        assert reader.retrieve("the zorblax quota") == []      # empty: remembered as such
        writer.add("elsewhere", "the zorblax quota ran out", created_at=1_950_000_000.0)
        assert [f.session_id for f in reader.retrieve("the zorblax quota")] == ["elsewhere"]
    finally:
        reader.close()
        writer.close()


def test_search_recent_returns_the_newest_rows_up_to_the_limit(tmp_path: Path) -> None:
    eng = engine_with(tmp_path, 10)
    try:
        hits = eng.store.search_recent('"billing"', 3)
        assert [h.session_id for h in hits] == ["c9", "c8", "c7"]
        assert all(h.bm25 < 0 for h in hits)               # FTS5 bm25 still computed per row
    finally:
        eng.close()


def test_planted_sessions_are_found_among_common_ones(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The recall probe in small: with the common-term cut far below the archive size, a session
    holding the message's rare words is still the first one found."""
    monkeypatch.setattr("hermes_core.agent.context_engine.COMMON_DF", 5)
    eng = engine_with(tmp_path, 40)
    try:
        eng.add("planted", "the billing service deploy failed on a zorblax quota", created_at=1_800_000_000.0)
        found = eng.retrieve("why did the billing deploy hit the zorblax quota?", max_results=3)
        assert found[0].session_id == "planted"
        only_common = eng.retrieve("billing deploy service", max_results=3)
        assert only_common and all(f.session_id.startswith("c") for f in only_common)
        assert ranking.COMMON_DF == 1_000   # the module default is untouched
    finally:
        eng.close()


def test_message_is_searched_and_history_only_breaks_ties(tmp_path: Path) -> None:
    from hermes_core.types import Message, RetrievalQuery

    eng = ContextEngine(tmp_path / "sessions.db", clock=lambda: 2_000_000_000.0)
    try:
        eng.add("rebase", "resolved a git rebase conflict in the billing repo", created_at=1_999_000_000.0)
        eng.add("pg", "postgres query slow after deploy: added an index", created_at=1_999_000_000.0)
        hist = [Message("user", "How do I fix a git rebase conflict?"), Message("assistant", "...")]
        got = eng.retrieve(RetrievalQuery.of("my postgres query got slow after the deploy", hist))
        assert [f.session_id for f in got] == ["pg"]
        follow = eng.retrieve(RetrievalQuery.of("why?", hist))
        assert [f.session_id for f in follow] == ["rebase"]
    finally:
        eng.close()


@pytest.mark.parametrize("expression", ['"unbalanced', "NEAR(", "tags:", "*", "", "(a OR", 'a"\x00"'])
def test_a_search_expression_fts5_cannot_parse_is_blamed_on_the_query_not_the_file(
        tmp_path: Path, expression: str) -> None:
    """``SessionStore.search`` takes FTS5 syntax: one it cannot parse is the caller's mistake,
    said as such (a ``ValueError`` too), never "the database is unusable", and nothing changes."""
    with SessionStore(tmp_path / "s.db") as store:
        store.upsert(SessionRecord("a", "hello world", (), 1.0))
        for ask in (lambda: store.search(expression, 5), lambda: store.search([expression], 5),
                    lambda: store.search_recent(expression, 5)):
            with pytest.raises(SessionQueryInvalid, match="search expression") as caught:
                ask()
            assert isinstance(caught.value, ValueError)
            assert not isinstance(caught.value, SessionDatabaseUnusable)
        assert [h.session_id for h in store.search('"hello"', 5)] == ["a"]


def test_a_search_of_a_file_whose_index_is_gone_still_says_the_file_is_at_fault(
        tmp_path: Path) -> None:
    with SessionStore(tmp_path / "s.db") as store:
        store.upsert(SessionRecord("a", "hello world", (), 1.0))
        store.connection.execute("DROP TABLE sessions_fts")
        with pytest.raises(SessionDatabaseUnusable):
            store.search('"hello"', 5)


@pytest.mark.parametrize("shadow", ["sessions_fts_idx", "sessions_fts_docsize"])
def test_a_valid_search_of_an_index_missing_a_shadow_table_blames_the_file(
        tmp_path: Path, shadow: str) -> None:
    """An index whose rows still read but whose term table is gone fails a MATCH with the same
    SQLITE_ERROR as a bad expression: a plain read answering did not clear the file, and
    ``'"hello"'`` was called "not a valid FTS5 search expression" instead of pointing at the
    file (and ``memory rebuild``)."""
    with SessionStore(tmp_path / "s.db") as store:
        store.upsert(SessionRecord("a", "hello world", (), 1.0))
        store.connection.execute(f"DROP TABLE {shadow}")
        asks = [lambda: store.search('"hello"', 5), lambda: store.search_recent('"hello"', 5)]
        if shadow == "sessions_fts_idx":       # a count reads no sizes: it still answers then
            asks.append(lambda: store.term_df("hello", 5))
        for ask in asks:
            with pytest.raises(SessionDatabaseUnusable):
                ask()
