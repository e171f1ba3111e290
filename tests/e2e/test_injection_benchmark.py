"""The injection and hostile-config benchmarks run and print the fields they promise (no goals here:
speed and quality goals are the benchmarks' business)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"{name}_bench", BENCH / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[f"{name}_bench"] = module
    spec.loader.exec_module(module)
    return module


def test_injection_benchmark_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    assert _load("injection").main(["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for split in ("heldout", "heldout_baseline", "dev", "dev_baseline"):
        r = out[split]
        assert 0 <= r["hostile_caught"] <= 1 and 0 <= r["benign_blocked"] <= 1
        assert set(r["hostile_caught_by_language"]) >= {"en", "zh", "zh-Hant", "ja", "es", "fr", "de"}
        assert set(r["hostile_caught_by_location"]) == {"memory", "context", "skill"}
    assert out["heldout"]["scan_ms_per_10kb"] > 0 and out["heldout"]["hostile"] > 0


def test_hostile_config_benchmark_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    assert _load("hostile_config").main(["--json", "--repeat", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["recursive_alias"]["outcome"].startswith("rejected")
    assert out["1mb_plus_one"]["outcome"].startswith("rejected")
    assert out["baseline_example_config"]["outcome"] == "loaded"
