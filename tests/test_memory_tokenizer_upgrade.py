"""A tokenizer change must not strand the memories indexed before it: the database records which
tokenizer built its full-text index, and an open with another one rebuilds the index once."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.agent.context_engine import ContextEngine
from hermes_core.agent.episodic import migrations as memory_migrations
from hermes_core.agent.episodic import store as context_store
from hermes_core.agent.episodic.store import SessionStore
from hermes_core.tokenize import TOKENIZER_VERSION

NOW = 1_750_000_000.0
TEXT = "明天下午3点和John开会讨论预算"


def _old_segment(text: str) -> str:
    """How the first tokenizer cut mixed text: Chinese glued to a digit or a Latin word stayed one
    token (3点和John开会 -> one term), so '开会' never matched it."""
    return text.lower()


def v1_database(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sessions.db as the first release left it: schema 1, rows indexed by the old tokenizer."""
    with monkeypatch.context() as m:
        m.setattr(memory_migrations, "MIGRATIONS", memory_migrations.MIGRATIONS[:1])
        m.setattr(context_store, "LATEST_VERSION", 1)
        with SessionStore(path, clock=lambda: NOW, segment=_old_segment) as store:
            from hermes_core.agent.episodic.store import SessionRecord
            store.upsert(SessionRecord("s-old", TEXT, ("预算",), NOW))
            assert store.search("开会", 5) == []   # the stale index cannot find it


def test_opening_an_old_database_reindexes_it_once(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "sessions.db"
    v1_database(path, monkeypatch)
    with SessionStore(path) as store:
        assert store.reindexed == 1
        assert [h.session_id for h in store.search("开会", 5)] == ["s-old"]
        assert store.connection.execute("SELECT value FROM meta WHERE key = 'tokenizer'").fetchone() == (
            f"hermes-tokenize-{TOKENIZER_VERSION}",)
        assert store.stats()["index_in_sync"]
    with SessionStore(path) as again:          # recorded: nothing to do the second time
        assert again.reindexed == 0
    with ContextEngine(path, clock=lambda: NOW) as engine:
        assert [m.session_id for m in engine.retrieve("John 开会")] == ["s-old"]


def test_a_store_with_a_custom_segmenter_never_rebuilds(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    with SessionStore(path, segment=_old_segment) as store:
        from hermes_core.agent.episodic.store import SessionRecord
        store.upsert(SessionRecord("s1", TEXT, (), NOW))
        assert store.reindexed == 0
    with SessionStore(path, segment=_old_segment) as again:
        assert again.reindexed == 0
    with SessionStore(path, segment=_old_segment, segment_id="mine-1") as named:
        assert named.reindexed == 1                      # a named segmenter is compared
    with SessionStore(path, segment=_old_segment, segment_id="mine-1") as named_again:
        assert named_again.reindexed == 0
