"""Review round 2: a refresh that fails half-way is redone by the next one, not forgotten."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from retrieval_fixtures import skill_md, write_skill

from hermes_core.retrieval import retriever as retriever_mod
from hermes_core.retrieval.retriever import SkillRetriever


def test_a_refresh_that_failed_midway_is_completed_by_the_next(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_skill(tmp_path, "a", skill_md("alpha", "Convert currency exchange rates"))
    write_skill(tmp_path, "b", skill_md("beta", "Book a flight ticket"))
    r = SkillRetriever(folders=[tmp_path])
    assert r.retrieve("currency exchange rates").names == ("alpha",)
    write_skill(tmp_path, "a", skill_md("alpha", "Order a pizza delivery"))
    real = retriever_mod.BM25Index

    def broken(*a: Any, **kw: Any) -> Any:
        raise MemoryError("out of memory while indexing")

    monkeypatch.setattr(retriever_mod, "BM25Index", broken)
    with pytest.raises(MemoryError):
        r.refresh()
    monkeypatch.setattr(retriever_mod, "BM25Index", real)
    r.refresh()  # the skill index already holds the edit: the layers must be rebuilt all the same
    assert r.retrieve("pizza delivery").names == ("alpha",)
    assert r.retrieve("currency exchange rates").names == ()


def test_a_warm_up_that_fails_logs_a_warning_not_a_thread_traceback(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    import logging
    import threading
    crashes: list[Any] = []
    monkeypatch.setattr(threading, "excepthook", crashes.append)  # what prints "Exception in thread"
    r = SkillRetriever(folders=[tmp_path])

    def broken(**kw: Any) -> Any:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(r, "load_catalog", broken)
    with caplog.at_level(logging.WARNING, logger="hermes_core.retrieval.retriever"):
        t = r.warm_up(background=True)
        assert t is not None
        t.join(10)
    assert crashes == []
    assert "warm-up failed" in caplog.text and "Input/output error" in caplog.text
