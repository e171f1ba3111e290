"""Every benchmark that runs in seconds at a tiny size runs here, each in a process of its own
with ``--json``: it must exit 0 and print one JSON object holding the keys it promises, its
baseline and its same-run ratio among them. A benchmark rots when the code it drives is renamed
(``turn.py`` called a generator ``memory.py`` no longer had; ``memory_write_upkeep.py`` took a
median of no writes on an archive the open re-indexes whole) and nothing else notices. No figure
is judged here (no timing assertion): speed and quality are the benchmarks' own business.

Each process runs with the network blocked as the test suite's is (a ``sitecustomize`` calling
``hermes_core.testing.pytest_plugin.block_network``, inherited by the workers a benchmark
spawns): loopback only, model hubs offline.

Run in-process by other test modules, so not here: ``prompt_build``, ``token_count``,
``window``, ``memory``, ``usage_open``, ``flaky_auth``, ``stream_redact``,
``retrieval_lexical`` (tests/e2e/test_benchmarks.py); ``injection``, ``injection_learned``,
``hostile_config`` (tests/e2e/test_injection_benchmark.py); ``long_chat``, ``prefix_cache``
(tests/agent/prompt/). ``_baseline_injection.py`` is a frozen module, not a script.

Left out as too slow even at their smallest (each was run by hand and works): ``retrieval.py``
(10,000 skills and the embedding models whatever ``--queries``: over two minutes), ``cold.py``
(fresh processes loading torch and the models: ~65 s), ``turn_home.py`` (builds a 2,000-skill,
20,000-session home: ~20 s), ``shared_pool.py`` and ``fleet_fairness.py`` (a redis-server and
spawned workers: 7-10 s each), ``injection_first_scan.py`` (four fresh interpreters importing the
scanner a run: ~12 s), which together would take this module past a minute.
``turn.py``, ``gate_sizes.py`` and ``han_fold.py`` read the dev data (../shared/eval) and say so
when it is absent.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
EVAL = next((p for p in (ROOT.parent / "shared" / "eval", ROOT.parent.parent / "shared" / "eval")
             if p.is_dir()), None)

SITE = ("from hermes_core.testing.pytest_plugin import block_network\n"
        "block_network()\n")

# script, its tiny arguments ({tmp}: a private folder, {root}: this checkout), the keys it
# promises (dotted: into nested objects and lists), what it reads that a checkout may lack
CASES: list[tuple[str, list[str], list[str], str | None]] = [
    ("turn.py", ["--sizes", "3x40", "--queries", "2", "--cache-dir", "{tmp}"],
     ["mode", "all_planted_found", "sizes.0.prepare_ms_p50", "sizes.0.bm25_ms_p50",
      "sizes.0.bm25_vs_bm25s", "sizes.0.episodic_ms_p50", "sizes.0.bare_fts_ms_p50",
      "sizes.0.planted_found"], "eval"),
    ("tool_specs.py", ["--tools", "3", "--samples", "5"],
     ["specs_us_p50", "fresh_us_p50", "specs_vs_fresh"], None),
    ("method_tools.py", ["--samples", "5", "--rounds", "1", "--baseline", "{root}"],
     ["branch_first_read_us_p50", "baseline_first_read_us_p50", "first_read_us_p50_vs_baseline",
      "generator_answer_us_p50_vs_baseline", "output_schema_us_p50_vs_baseline"], None),
    ("han_fold.py", ["--reps", "1"],
     ["turn_keys_us_with_fold", "turn_keys_us_without_fold", "ratio_with_over_without"],
     "eval"),
    ("stream_watch.py", ["--events", "5", "--repeat", "1"],
     ["identity.bare_us_per_chunk_p50", "identity.watched_us_per_chunk_p50", "identity.ratio",
      "gzip.ratio", "gzip-whole.ratio"], None),
    ("stream_shells.py", ["--events", "5", "--repeat", "1"],
     ["shell_us_per_chunk_p50", "driven_us_per_chunk_p50", "ratio", "stepped_ratio",
      "deltas.text", "deltas.draft", "deltas.tool_call", "deltas.usage"], None),
    ("test_inventory.py", ["--no-collect", "{root}/tests"],   # an inventory: counts, no baseline
     ["files", "test_files", "test_functions", "asserts", "raises"], None),
    ("memory_upkeep.py", ["--sessions", "200", "--samples", "3", "--rounds", "1"],
     ["stats.ratio", "insert.ratio", "retention.ratio_step_to_forget",
      "long_summaries.long.whole.recall_ms_p50", "long_summaries.long.passages.recall_ms_p50"],
     None),
    ("memory_write_upkeep.py",
     ["--sessions", "200", "--writes", "5", "--rounds", "1", "--baseline-tree", "{root}"],
     ["write.after_ms", "write.before_ms", "write.ratio", "write.open_ratio",
      "pending.writes_to_finish",
      "pending.ratio_to_plain_write", "heal.ratio", "heal.healed_in_sync"], None),
    ("memory_rehome.py", ["--sessions", "50", "--rounds", "1", "--baseline-tree", "{root}"],
     ["after.opens", "before.opens", "ratio.opens_ms", "ratio.longest_write_ms",
      "after.first_open_ratio"], None),
    ("memory_open.py", ["--sessions", "50", "--scale", "3", "--rounds", "1", "--baseline-tree", "{root}"],
     ["after.scale_ratio.open_ms", "ratio.large.start_ms", "bump.large.first_open_ms"], None),
    ("reindex_writer.py", ["--sessions", "200", "--baseline", "{root}"],
     ["baseline_figures.reindex_s", "this_tree.reindex_s", "this_tree.rows_ok",
      "reindex_s_ratio", "write_ms_max_ratio"], None),
    ("retrieval_rebuild.py", ["--sizes", "20", "--repeats", "1"],
     ["baseline_20_ms", "dense_rebuild_20_ratio", "refresh_one_changed_20_ratio",
      "restart_one_added_20_ratio", "first_refresh_20_ratio", "calibrate_lexical_edit_20_ratio",
      "read_catalog_changed_20_ratio", "read_catalog_restart_changed_20_ratio"], None),
    ("bm25_rewrite.py", ["--sizes", "80", "--repeats", "1", "--changed", "4", "--against", "{root}"],
     ["rewrite_80_ratio", "decoded_80", "against_rewrite_80_ratio"], None),
    ("big_memory.py", ["--bytes", "20000", "--turns", "1", "--baseline-tree", "{root}"],
     ["idle_us_p50", "append_vs_idle", "touch_vs_idle", "rebuilds", "append_ms_p50_vs_baseline",
      "baseline.touch_ms_p50"], None),
    ("token_file.py", ["--size", "40", "--rounds", "1"],
     ["lazy_ms", "eager_ms", "ratio", "ratio_min", "load_ms"], None),
    ("pool.py", ["--samples", "10", "--seconds", "1", "--variants", "threads32,redis4_restart",
                 "--headerless", ""],
     ["bare_sdk_ms_p50", "full_path_ms_p50", "overhead_ms_p50",
      "threads32_max_rpm_matched.goodput_ratio", "threads32_max_rpm_unset.rpm_violations",
      "redis4_restart_max_rpm_matched.violations_after_kill_s"], None),
    ("gate_sizes.py", ["--catalog", "{eval}/metatool/skills.jsonl",
                       "--queries", "{eval}/metatool/queries.dev.jsonl",
                       "--negatives", "{eval}/metatool/negatives.dev.jsonl", "--sizes", "25",
                       "--seeds", "1", "--limit", "5", "--off-limit", "5", "--no-embeddings",
                       "--home", "{tmp}"],
     ["rows.0.keep", "rows.0.reject_negatives", "rows.0.reject_other", "medians.25.keep"], "eval"),
    ("async_throughput.py", ["--concurrency", "2", "--seconds", "0.2", "--min-requests", "1",
                             "--rounds", "1", "--latency-ms", "1"],
     ["bare_rps_median", "loop_rps_median", "achat_rps_median", "loop_vs_bare", "achat_vs_bare"],
     None),
    ("outbound_scrub.py", ["--pairs", "3", "--turns", "3", "--tools", "2"],
     ["whole_ms_p50", "memo_ms_p50", "memo_tools_each_turn_ms_p50", "ratio", "tools_ratio",
      "texts_scrubbed_by_memo"], None),
    ("route_features.py", ["--small"],
     ["kinds.english.10KB.features_ms", "kinds.one_line.100KB.ratio", "growth"], None),
    ("reasoning_cue.py", ["--reps", "1", "--loops", "1", "--chars", "2000", "--baseline", "HEAD"],
     ["short_whys", "short_us.tree", "short_ratio", "runs_s.zh_person.ratio"], None),
    ("hint_scan.py", ["--rounds", "1", "--skills", "20", "--hinted", "3"],
     ["hint_cold_ms", "hint_warm_ratio", "list_off_ms", "list_cold_ratio", "list_warm_ratio",
      "withheld_per_round"], None),
    ("guess_encoding.py", ["--per-language", "3", "--jieba", "30", "--baseline", "HEAD"],
     ["worse", "better", "right_ratio", "sets.jieba:gbk.tree.right",
      "sets.jieba:gbk.baseline.right"], None),
]


def _at(obj: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        obj = obj[int(part)] if isinstance(obj, list) else obj[part]
    return obj


def _missing_data(need: str | None) -> str | None:
    if need == "eval" and EVAL is None:
        return "needs the dev catalogs under ../shared/eval"
    return None


@pytest.mark.parametrize(("script", "argv", "keys", "needs"), CASES, ids=[c[0] for c in CASES])
def test_a_benchmark_prints_one_json_object_with_the_keys_it_promises(
        script: str, argv: list[str], keys: list[str], needs: str | None, tmp_path: Path) -> None:
    missing = _missing_data(needs)
    if missing is not None:
        pytest.skip(missing)
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITE, encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "home").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    env.update(PYTHONPATH=os.pathsep.join([str(site), str(ROOT)]), OMP_NUM_THREADS="1",
               HOME=str(tmp_path), HERMES_HOME=str(tmp_path / "home"))
    if EVAL is not None:
        env["HERMES_EVAL_DIR"] = str(EVAL)
    args = [a.format(tmp=work, root=ROOT, eval=EVAL) for a in argv]
    done = subprocess.run([sys.executable, str(BENCH / script), *args, "--json"], cwd=work, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)        # the whole of stdout: one object, nothing beside it
    assert isinstance(out, dict)
    absent = []
    for key in keys:
        try:
            _at(out, key)
        except (KeyError, IndexError, TypeError):
            absent.append(key)
    assert not absent, f"{script} --json lacks {absent}: {sorted(out)}"


def _bench_module(script: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"_bench_{Path(script).stem}", BENCH / script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_stream_shells_stops_when_a_loop_yields_other_deltas_than_the_shell() -> None:
    """Equal text is not enough: a loop that drops the usage (or a draft, or a tool call) measures
    another thing, and the run must stop naming it instead of printing a ratio."""
    bench = _bench_module("stream_shells.py")
    events = bench.sdk_events(3)

    def no_usage(evs: list[Any]) -> Any:
        return (d for d in bench.stepped(evs) if d.usage is None)

    counts = bench.same_deltas((("shell", bench.shell), ("stepped", bench.stepped)), events)
    assert counts == {"text": 1, "draft": 4, "tool_call": 1, "usage": 1}
    with pytest.raises(SystemExit, match=r"no_usage yields other deltas than shell .*#8"):
        bench.same_deltas((("shell", bench.shell), ("no_usage", no_usage)), events)


def test_guess_encoding_names_a_baseline_the_checkout_lacks_instead_of_a_traceback() -> None:
    """A clean clone of one branch has no ``main``, the default baseline: the run stopped with
    git's CalledProcessError traceback (failed before); it now names the ref and the way out."""
    bench = _bench_module("guess_encoding.py")
    with pytest.raises(SystemExit, match=r"no-such-ref-x.*--baseline HEAD"):
        bench.load("no-such-ref-x")


@pytest.mark.parametrize("rev", ["HEAD", "32fd49d"])
def test_stream_watch_times_the_revision_s_watch_not_this_tree_s(rev: str) -> None:
    """``--against REV`` loads REV's ``deadline.py``; since the watch and the inflaters moved
    to ``watch.py`` and ``inflate.py`` it imported this tree's, so a change to the watch was
    timed on both sides and the ratio said ~1 whatever it cost. REV's own watch is loaded (a
    revision from before the split, whose deadline.py held it, still loads)."""
    from hermes_core.providers import watch

    against = _bench_module("stream_watch.py").load_at(rev)
    if rev == "HEAD":
        assert against.Watch is not watch.Watch
        assert against.Watch.__module__ != "hermes_core.providers.watch"
    assert hasattr(against, "DeadlineTransport") and hasattr(against, "bounded")


@pytest.mark.parametrize("rev", ["HEAD", "20a46ea6"])
def test_guess_encoding_loads_the_baseline_s_letter_tables_not_this_tree_s(rev: str) -> None:
    """Since the letter tables moved to ``letter_tables.py``, a baseline's ``guess_encoding``
    imported by its own import line would weigh readings with this tree's tables, and a change
    there would be measured on both sides. The baseline's own helper is loaded; a commit from
    before the split (20a46ea6, one file) still loads."""
    from hermes_core.agent.prompt import letter_tables

    baseline = _bench_module("guess_encoding.py").load(rev)
    if rev == "HEAD":
        assert baseline.best_single is not letter_tables.best_single
        assert baseline.best_single.__module__ != "hermes_core.agent.prompt.letter_tables"
    assert baseline.guess_decode("Děkuji".encode("cp1250")) == ("Děkuji", "cp1250")
