"""Bounded reads of the sessions database: document-frequency counts and newest-first search."""

from __future__ import annotations

from pathlib import Path

from hermes_core.agent.context_engine import ContextEngine
from hermes_core.agent.episodic import ranking


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
