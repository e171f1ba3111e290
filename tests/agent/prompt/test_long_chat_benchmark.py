"""The long-chat benchmark runs and its billing model behaves as a prefix cache (a short run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[3] / "benchmarks" / "long_chat.py"


def test_billing_reads_the_longest_prefix_written_at_a_breakpoint(load_script):
    from hermes_core.tokens import count_tokens
    from hermes_core.types import CachePlan, Message, Prompt

    bench = load_script(BENCH)
    biller = bench.Biller()
    msgs = (Message("user", "a" * 400), Message("assistant", "b" * 400), Message("user", "c"))
    first = Prompt(system="s" * 4000, messages=msgs, cache=CachePlan(system=True, message_indices=(1,)))
    assert biller.bill(first).cache_read_tokens == 0
    again = Prompt(system="s" * 4000, messages=(*msgs, Message("assistant", "d"), Message("user", "e")))
    usage = biller.bill(again)
    cost = [count_tokens(b) + 4 for b in bench.blocks(again)]
    assert usage.cache_read_tokens == sum(cost[:3])          # the system and messages 0-1
    changed = Prompt(system="s" * 4000, messages=(Message("user", "x"), *msgs[1:]))
    assert biller.bill(changed).cache_read_tokens == cost[0]   # the system only


def test_billing_bills_the_tokens_a_tokenizer_counts_not_the_character_estimate(load_script):
    """The estimate put JSON at about half its real count and Thai far under it: a biller
    billing it made every compaction look cheaper than it is."""
    from hermes_core.tokenize import estimate_tokens
    from hermes_core.tokens import count_tokens
    from hermes_core.types import Message, Prompt

    bench = load_script(BENCH)
    system = "บันทึกไม่มีอะไรใหม่ในวันนี้ " * 50
    answer = json.dumps([{"id": i, "sha": f"{i * 7919:08x}"} for i in range(200)])
    prompt = Prompt(system=system, messages=(Message("user", answer),))
    usage = bench.Biller().bill(prompt)
    blocks = bench.blocks(prompt)
    assert usage.input_tokens == sum(count_tokens(b) + 4 for b in blocks)
    assert usage.input_tokens > 1.5 * sum(estimate_tokens(b) + 4 for b in blocks)


def test_benchmark_prints_one_json_object(capsys: pytest.CaptureFixture[str], load_script):
    assert load_script(BENCH).main(["--turns", "151", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for mode in ("none", "sliding", "hermes"):
        row = out["modes"][mode]
        for key in ("failed_turns", "max_prompt_tokens", "input_tokens_total", "cached_tokens_total",
                    "cache_hit_ratio", "compactions", "facts_recalled", "compaction_ms_p50"):
            assert key in row
    assert out["modes"]["hermes"]["failed_turns"] == 0
    assert out["modes"]["none"]["failed_turns"] > 0
