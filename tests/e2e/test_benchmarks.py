"""The prompt-build benchmark runs and measures what it claims (a short run)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "prompt_build.py"


def test_benchmark_json_shape(capsys: pytest.CaptureFixture[str],
                              load_script: Callable[[Path], ModuleType]) -> None:
    module = load_script(BENCH)
    assert module.main(["--rounds", "30", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["cached_us_p50"] > 0 and out["rebuild_us_p50"] > 0
    # speedup comes from the unrounded medians; recomputed from the printed (rounded) ones it can
    # land on the other side of a .x5 boundary, so allow one step of the last digit
    assert out["speedup"] == pytest.approx(out["rebuild_us_p50"] / out["cached_us_p50"], abs=0.1)
    assert out["file_reads_per_cached_turn"] == 0
    assert out["file_reads_per_rebuild"] == 4  # SOUL, MEMORY, USER, HERMES.md


def test_window_benchmark_runs_within_the_configs_bounds(capsys: pytest.CaptureFixture[str],
                                                         load_script: Callable[[Path], ModuleType]) -> None:
    """Its key's max_tpm (10**12) was past the bound config loading puts on every number, so
    every run ended in a ConfigError before measuring anything."""
    module = load_script(BENCH.with_name("window.py"))
    assert module.main(["--sizes", "10,40", "--samples", "5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [row["in_window"] for row in out["sizes"]] == [10, 40]
    assert all(row["acquire_us_p50"] > 0 for row in out["sizes"]) and out["growth"] > 0
