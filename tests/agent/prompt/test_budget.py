"""The history budget: window - max_tokens - fixed parts - margin; compaction at the high-water mark."""

from __future__ import annotations

import pytest

from hermes_core.agent.prompt.budget import history_budget, model_window
from hermes_core.config import CompactionSettings, RoutingSettings, load_settings
from hermes_core.errors import ConfigError


def test_budget_arithmetic():
    cfg = CompactionSettings()
    b = history_budget(window=16_000, max_tokens=1024, fixed_tokens=1976, settings=cfg)
    assert b.margin == 800                                  # 5% of the window
    assert b.available == 16_000 - 1024 - 1976 - 800 == 12_200
    assert b.high_water == int(12_200 * 0.75) == 9150       # default high-water mark: 75%
    assert b.target == int(12_200 * 0.35)
    assert not b.over(9150) and b.over(9151)


def test_fixed_parts_larger_than_the_window_leave_no_budget():
    b = history_budget(window=4000, max_tokens=1024, fixed_tokens=5000, settings=CompactionSettings())
    assert b.available == 0 and b.over(1)


def test_high_water_is_configurable():
    settings = load_settings({"prompt": {"compaction": {"high_water": 0.5, "target": 0.2}}}, env={})
    b = history_budget(window=10_000, max_tokens=0, fixed_tokens=0,
                       settings=settings.prompt.compaction)
    assert b.high_water == int(b.available * 0.5)


def test_target_above_high_water_is_a_config_error_naming_the_key():
    with pytest.raises(ConfigError) as info:
        load_settings({"prompt": {"compaction": {"high_water": 0.5, "target": 0.6}}}, env={})
    assert "prompt.compaction" in str(info.value) and "target" in str(info.value)


def test_window_comes_from_config_then_the_known_table_then_the_default():
    cfg = CompactionSettings(default_window=20_000)
    routing = RoutingSettings(context_windows={"my-local-8k": 8192})
    assert model_window("my-local-8k", routing, cfg) == (8192, "configured")
    assert model_window("gpt-4o-mini", routing, cfg) == (128_000, "known")
    assert model_window("mystery-model", routing, cfg) == (20_000, "default")


def test_overflow_is_how_far_the_fixed_parts_alone_exceed_the_window():
    cfg = CompactionSettings()
    fits = history_budget(window=4000, max_tokens=1000, fixed_tokens=2800, settings=cfg)
    assert fits.overflow == 0                               # 4000 - 1000 - 200 = 2800 fits
    over = history_budget(window=4000, max_tokens=1000, fixed_tokens=2801, settings=cfg)
    assert over.overflow == 1 and over.available == 0
    words = over.describe_overflow("m-small")
    assert "2801 tokens" in words and "m-small" in words and "4000" in words
