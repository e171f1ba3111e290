"""The prefix-cache benchmark bills the SDKs' JSON as a prompt cache would (a short run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[3] / "benchmarks" / "prefix_cache.py"


def _body(system: str, *texts: str, marked: tuple[int, ...] = ()) -> dict[str, object]:
    messages = [{"role": "user" if i % 2 == 0 else "assistant",
                 "content": [{"type": "text", "text": t,
                              **({"cache_control": {"type": "ephemeral"}} if i in marked else {})}]}
                for i, t in enumerate(texts)]
    return {"system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
            "messages": messages}


def test_anthropic_billing_reads_only_what_a_breakpoint_wrote(load_script) -> None:
    bench = load_script(BENCH)
    server = bench.Server("anthropic")
    system = "rule " * 1500
    first = server.bill(_body(system, "q1 " * 50, "a1 " * 50, "q2", marked=(1,)))
    assert first["cached"] == 0 and first["write"] > 0
    again = server.bill(_body(system, "q1 " * 50, "a1 " * 50, "q2", "a2", "q3", marked=(3,)))
    assert again["cached"] == first["write"]                 # up to the earlier breakpoint
    other = server.bill(_body(system, "x", "a1 " * 50, "q2", marked=()))
    assert 1500 <= other["cached"] < first["write"]          # the system alone: q1 differs
    report = server.report()
    assert report["requests"] == 3 and report["distinct_stable_prefixes"] == 1
    assert report["breakpoints_never_read"] == 1             # a2's end


def test_openai_billing_reads_the_longest_shared_prefix_in_whole_steps(load_script) -> None:
    bench = load_script(BENCH)
    server = bench.Server("openai")
    body = {"messages": [{"role": "system", "content": "rule " * 1500},
                         {"role": "user", "content": "q1"}]}
    assert server.bill(body)["cached"] == 0
    row = server.bill({"messages": [*body["messages"], {"role": "assistant", "content": "a"},
                                    {"role": "user", "content": "q2"}]})
    assert row["cached"] > 0 and row["cached"] % bench.OPENAI_STEP == 0
    assert row["write"] == 0 and row["uncached"] == row["total"] - row["cached"]


def test_benchmark_prints_one_json_object(capsys: pytest.CaptureFixture[str], load_script) -> None:
    assert load_script(BENCH).main(["--turns", "6", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for kind in ("anthropic", "openai"):
        row = out[kind]
        assert row["requests"] == 7                         # turn 5 has a tool round
        assert row["distinct_stable_prefixes"] == 1         # tools + system never changed
        assert row["agent_cache_read_tokens"] == row["cached_tokens"] > 0
        assert row["distinct_memory_blocks"] > 1 and row["distinct_skill_blocks"] > 1


def test_scenarios_report_their_share_beside_the_chat_without_the_event(
        capsys: pytest.CaptureFixture[str], load_script) -> None:
    assert load_script(BENCH).main(["--turns", "6", "--scenario", "restart",
                                    "--scenario", "edit", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for kind in ("anthropic", "openai"):
        restart = out["scenarios"]["restart"][kind]
        assert restart["mark_resends_previous_prefix"] is True   # the new Agent's first request
        assert restart["price_vs_ideal"] == 1.0 and restart["mark_cached_tokens"] > 0
        edit = out["scenarios"]["edit"][kind]
        assert edit["distinct_stable_prefixes"] == 2              # one rebuild, then stable
        assert edit["price_vs_ideal"] > 1.0


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
def test_a_prefix_not_read_for_longer_than_the_ttl_is_paid_again(load_script, kind: str) -> None:
    """The billing servers kept every entry for good: a failover or a model switch of any length
    came back to a warm cache, where both providers drop a prefix unused for ~5 minutes."""
    bench = load_script(BENCH)
    now = [0.0]
    server = bench.Server(kind, clock=lambda: now[0])
    if kind == "anthropic":
        def request(n: int) -> dict[str, object]:
            return _body("rule " * 1500, *(f"q{i} " * 50 for i in range(n)), marked=(n - 1,))
    else:
        def request(n: int) -> dict[str, object]:
            return {"messages": [{"role": "system", "content": "rule " * 1500},
                                 *({"role": "user", "content": f"q{i} " * 50} for i in range(n))]}
    first = server.bill(request(1))
    now[0] += 240.0                                   # read within the TTL: served, refreshed
    assert server.bill(request(2))["cached"] >= first["total"] - bench.OPENAI_STEP
    now[0] += 240.0                                   # 8 minutes after the first, 4 after a read
    assert server.bill(request(3))["cached"] > 0
    now[0] += 301.0                                   # idle past the TTL: written again
    late = server.bill(request(4))
    assert late["cached"] == 0
    assert late["write" if kind == "anthropic" else "uncached"] == late["total"]


def test_with_no_ttl_an_hour_marked_prefix_does_not_expire_either(load_script) -> None:
    """``--ttl 0`` says entries never expire, yet a block marked ``"ttl": "1h"`` still expired an
    hour unread: a run without a TTL read cold where the author's 1h marker had been."""
    bench = load_script(BENCH)
    now = [0.0]
    server = bench.Server("anthropic", clock=lambda: now[0], ttl_s=float("inf"))
    body = _body("rule " * 1500, "q " * 50)
    body["system"][0]["cache_control"]["ttl"] = "1h"   # type: ignore[index]
    first = server.bill(body)
    assert first["write"] > 1000 and first["cached"] == 0
    now[0] += 2 * 3600.0
    assert server.bill(body)["cached"] == first["write"]
