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
    assert out["cached_us_p50"] > 0 and out["rebuild_us_p50"] > 0 and out["prepare_us_p50"] > 0
    assert out["prepare_hooked_us_p50"] > 0
    assert out["hooked_vs_plain"] == pytest.approx(
        out["prepare_hooked_us_p50"] / out["prepare_us_p50"], abs=0.002)
    # speedup comes from the unrounded medians; recomputed from the printed (rounded) ones it can
    # land on the other side of a .x5 boundary, so allow one step of the last digit
    assert out["speedup"] == pytest.approx(out["rebuild_us_p50"] / out["cached_us_p50"], abs=0.1)
    assert out["file_reads_per_cached_turn"] == 0
    assert out["file_reads_per_rebuild"] == 4  # SOUL, MEMORY, USER, HERMES.md


def test_the_token_count_benchmark_compares_both_encodings_with_the_estimate(
        capsys: pytest.CaptureFixture[str], load_script: Callable[[Path], ModuleType]) -> None:
    module = load_script(BENCH.with_name("token_count.py"))
    assert module.main(["--reps", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = out["types"]
    assert rows["json"]["o200k"] > 1.5 * rows["json"]["estimate"]       # what decision 82 measured
    assert rows["thai"]["cl100k"] > 2 * rows["thai"]["o200k"]
    assert out["spread_cl100k_over_o200k"] < out["spread_cl100k_over_estimate"]
    assert out["first_count_ms"] > 0


def test_window_benchmark_runs_within_the_configs_bounds(capsys: pytest.CaptureFixture[str],
                                                         load_script: Callable[[Path], ModuleType]) -> None:
    """Its key's max_tpm (10**12) was past the bound config loading puts on every number, so
    every run ended in a ConfigError before measuring anything."""
    module = load_script(BENCH.with_name("window.py"))
    assert module.main(["--sizes", "10,40", "--samples", "5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [row["in_window"] for row in out["sizes"]] == [10, 40]
    assert all(row["acquire_us_p50"] > 0 for row in out["sizes"]) and out["growth"] > 0


def test_the_memory_benchmark_builds_the_scaled_archive_beside_todays_in_one_run(
        capsys: pytest.CaptureFixture[str], load_script: Callable[[Path], ModuleType]) -> None:
    module = load_script(BENCH.with_name("memory.py"))
    assert module.main(["--sessions", "40", "--scale", "3", "--queries", "6", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["sessions"] == out["stored"] == 120 and out["scaling"]["small_sessions"] == 40
    assert out["segmentation_agreement"] == 1.0   # pooled sentences index as the real segmenter
    assert out["query_ms_p99"] >= out["query_ms_p50"] > 0 and out["hostile_ms_max"] > 0
    assert out["scaling"]["query_ms_p50_ratio"] == pytest.approx(
        out["query_ms_p50"] / out["scaling"]["small_query_ms_p50"], rel=0.01)


@pytest.mark.parametrize(("script", "argv", "named"), [
    ("hostile_config.py", ["--repeat", "0"], "--repeat"),
    ("window.py", ["--samples", "0"], "--samples"),
    ("window.py", ["--sizes", "100,lots"], "--sizes"),
    ("cold.py", ["--ready-timeout", "-1"], "--ready-timeout"),
    ("cold.py", ["--ready-timeout", "nan"], "--ready-timeout"),
    ("async_throughput.py", ["--rounds", "0"], "--rounds"),
    ("async_throughput.py", ["--concurrency", "0"], "--concurrency"),
    ("async_throughput.py", ["--seconds", "0"], "--seconds"),
    ("async_throughput.py", ["--variants", "bare,fast"], "--variants"),
    ("memory.py", ["--sessions", "0"], "--sessions"),
    ("memory.py", ["--queries", "0"], "--queries"),
    ("turn.py", ["--queries", "0"], "--queries"),
    ("turn.py", ["--sizes", "20xlots"], "--sizes"),
    ("retrieval.py", ["--queries", "0"], "--queries"),
    ("usage_open.py", ["--events", "0"], "--events"),
    ("flaky_auth.py", ["--seeds", "0"], "--seeds"),
    ("token_count.py", ["--reps", "0"], "--reps"),
])
def test_a_benchmark_refuses_a_meaningless_argument_naming_it(
        script: str, argv: list[str], named: str, capsys: pytest.CaptureFixture[str],
        load_script: Callable[[Path], ModuleType]) -> None:
    """A count of 0 ended in statistics.StatisticsError after the run, a size that is not a number
    in ValueError, a negative or NaN timeout and an unknown variant were measured as if meant."""
    module = load_script(BENCH.with_name(script))
    with pytest.raises(SystemExit) as exc:
        module.main(argv)
    assert exc.value.code == 2 and named in capsys.readouterr().err


@pytest.mark.parametrize("content", [b'{"text": "x", "split": "heldout"}\n{not json\n', b"\xff\xfe\x00\n",
                                     b'{"query": "a query file, not the corpus"}\n'])
def test_the_injection_benchmark_names_the_line_of_a_bad_third_party_corpus(
        content: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        load_script: Callable[[Path], ModuleType]) -> None:
    """--real naming a damaged file or another JSONL ended in a traceback (JSONDecodeError,
    UnicodeDecodeError, KeyError 'split') after the committed corpus had been measured."""
    module = load_script(BENCH.with_name("injection.py"))
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(content)
    with pytest.raises(SystemExit) as exc:
        module.main(["--real", str(path), "--json"])
    assert exc.value.code == 2 and str(path) in capsys.readouterr().err


def test_the_usage_open_benchmark_times_the_scan_and_the_marker_read(
        capsys: pytest.CaptureFixture[str], load_script: Callable[[Path], ModuleType]) -> None:
    module = load_script(BENCH.with_name("usage_open.py"))
    assert module.main(["--events", "300", "--repeat", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["events"] == 300 and out["scan_ms_p50"] > 0 and out["marked_ms_p50"] > 0
    assert out["ratio"] == round(out["scan_ms_p50"] / out["marked_ms_p50"], 1)


def test_the_flaky_auth_benchmark_sets_quarantine_beside_removal_on_the_same_traffic(
        capsys: pytest.CaptureFixture[str], load_script: Callable[[Path], ModuleType]) -> None:
    module = load_script(BENCH.with_name("flaky_auth.py"))
    assert module.main(["--requests", "2000", "--seeds", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for p in ("0.001", "0.005"):
        removal, quarantine = out[f"removal_p{p}"], out[f"quarantine_p{p}"]
        assert quarantine["valid_keys_left"] == 4 and quarantine["requests_without_key"] == 0
        assert removal["valid_keys_left"] < 4   # a stray 401 took keys out for good
        assert removal["requests_to_revoked"] == 1 < quarantine["requests_to_revoked"]


def test_the_stream_redaction_benchmark_times_pieces_against_the_whole_reply(
        capsys: pytest.CaptureFixture[str], load_script: Callable[[Path], ModuleType]) -> None:
    module = load_script(BENCH.with_name("stream_redact.py"))
    assert module.main(["--chars", "300", "--piece", "3", "--repeat", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["pieces"] == -(-out["chars"] // 3) and out["stream_ms_p50"] > 0
    assert out["whole_ms_p50"] > 0 and out["us_per_piece"] > 0


def test_the_lexical_retrieval_benchmark_times_two_trees_alternated_and_gives_their_ratio(
        capsys: pytest.CaptureFixture[str], load_script: Callable[[Path], ModuleType],
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HERMES_EVAL_DIR", str(tmp_path))     # no dev data: the shipped catalogs only
    module = load_script(BENCH.with_name("retrieval_lexical.py"))
    root = BENCH.parents[1]
    assert module.main(["--queries", "8", "--rounds", "1", "--against", str(root), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "hammerbench_zh_ms" not in out and "metatool_ms" not in out
    for name in ("anthropics", "example_home"):
        ms, other, tk = out[f"{name}_ms"], out[f"{name}_against_ms"], out[f"{name}_tokenize_ms"]
        assert ms > 0 and other > 0 and 0 < tk < ms
        assert out[f"{name}_ratio"] == pytest.approx(ms / other, abs=0.001)
        assert len(out[f"{name}_round_ms"]) == len(out[f"{name}_against_round_ms"]) == 1
        assert 0 <= out[f"{name}_multi_hint_share"] <= 1


def test_the_mid_question_benchmark_times_each_middle_against_a_log_without_marks(
        capsys: pytest.CaptureFixture[str], load_script: Callable[[Path], ModuleType]) -> None:
    module = load_script(BENCH.parent / "mid_questions.py")
    assert module.main(["--rounds", "1", "--chars", "20000", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["plain_ms"] > 0
    assert {"urls_ratio", "sql_ratio", "lost_encoding_ratio", "lost_spaced_ratio"} <= set(out)


def test_the_follow_up_pairs_benchmark_scores_both_rules_on_the_same_pairs(
        capsys: pytest.CaptureFixture[str], load_script: Callable[[Path], ModuleType]) -> None:
    module = load_script(BENCH.parent / "follow_up_pairs.py")
    assert module.main(["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["follow_ups"], out["new"]) == (18, 12)
    for rule in ("length", "rule"):
        wrong = len(out[f"{rule}_wrong"])
        assert out[f"{rule}_follow_ups"] + out[f"{rule}_new_alone"] + wrong == 30
