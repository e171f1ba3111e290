"""Review round 2: an unusable jieba cache folder costs the cache, not the retriever."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from hermes_core import tokenize as tok


@pytest.fixture
def fresh_jieba(monkeypatch: pytest.MonkeyPatch) -> None:
    jieba = pytest.importorskip("jieba")
    monkeypatch.setattr(tok, "_jieba", None)
    monkeypatch.setattr(tok, "_jieba_failed", False)
    monkeypatch.setattr(jieba.dt, "tmp_dir", jieba.dt.tmp_dir)  # restored after the test


def test_cache_path_that_is_a_file_falls_back_with_a_warning(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_jieba: None,
        caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    monkeypatch.setenv("HERMES_JIEBA_CACHE", str(blocker))
    with caplog.at_level(logging.WARNING, logger="hermes_core.tokenize"):
        assert tok.jieba_available()
    assert "违章" in tok.tokenize("查询违章记录")
    assert str(blocker) in caplog.text and "jieba" in caplog.text


def test_cache_folder_we_may_not_write_falls_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_jieba: None) -> None:
    theirs = tmp_path / "hermes-core-jieba"  # made by another user in a shared /tmp
    theirs.mkdir()
    monkeypatch.setenv("HERMES_JIEBA_CACHE", str(theirs))
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if os.fspath(p) == str(theirs)
                        else real_access(p, mode, **kw))
    assert tok.jieba_cache_dir() is None
    assert tok.jieba_available()
