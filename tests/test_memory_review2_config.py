"""Review 2: ``context_engine`` numbers that are infinite or NaN (``busy_timeout_s: .inf`` for
"wait forever") are config errors naming the key and line; ``.inf`` crashed the memory database's
open with an OverflowError outside the error tree, taking the agent down at start-up."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.config import load_settings
from hermes_core.errors import ConfigError


@pytest.mark.parametrize(("yaml_body", "key"), [
    ("context_engine:\n  busy_timeout_s: .inf\n", "busy_timeout_s"),
    ("context_engine:\n  recency_bias: .inf\n", "recency_bias"),
    ("context_engine:\n  recency_bias: .nan\n", "recency_bias"),
    ("context_engine:\n  recency_weights:\n    week: .inf\n", "week"),
])
def test_non_finite_context_engine_numbers_are_config_errors(tmp_path: Path, yaml_body: str,
                                                              key: str) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(yaml_body, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_settings(path, home=tmp_path)
    assert key in str(info.value) and str(path) in str(info.value)


def test_finite_values_still_load(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("context_engine:\n  busy_timeout_s: 86400\n  recency_bias: 2.5\n", encoding="utf-8")
    s = load_settings(path, home=tmp_path)
    assert (s.context_engine.busy_timeout_s, s.context_engine.recency_bias) == (86400, 2.5)


def test_default_engine_opens_with_a_long_timeout(tmp_path: Path) -> None:
    from hermes_core.agent.context_engine import ContextEngine

    path = tmp_path / "config.yaml"
    path.write_text("context_engine:\n  busy_timeout_s: 1000000\n", encoding="utf-8")
    with ContextEngine.from_settings(load_settings(path, home=tmp_path)) as engine:
        assert engine.stats()["sessions"] == 0


@pytest.mark.parametrize("seconds", [3e6, 1e7, 1e12])
def test_a_long_busy_timeout_is_capped_not_wrapped_to_zero(tmp_path: Path, seconds: float) -> None:
    """SQLite's busy timeout is a C int of milliseconds: 3e6 s (about a month) used to wrap to 0,
    so a writer gave up at once with 'database is locked' instead of waiting longer."""
    from hermes_core.agent.episodic.store import SessionStore

    with SessionStore(tmp_path / "sessions.db", busy_timeout_s=seconds) as store:
        assert store.connection.execute("PRAGMA busy_timeout").fetchone()[0] == 2**31 - 1
