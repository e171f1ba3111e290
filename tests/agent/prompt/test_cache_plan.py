"""The cache planner: the summary of compacted history gets a breakpoint before recent turns."""

from __future__ import annotations

from hermes_core.agent.prompt.cache_plan import min_cacheable_tokens, plan_cache
from hermes_core.types import Message


def _plan(pinned: tuple[int, ...], breakpoints: int = 2, system_tokens: int = 2000):
    messages = [Message("user", "[Conversation so far] ..."), *(
        Message("user" if i % 2 == 0 else "assistant", f"m{i}") for i in range(8)),
        Message("user", "now")]
    return plan_cache(provider_kind="anthropic", model="claude-sonnet-4-5", enabled=True,
                      ttl="5m", prefix_sha256="0" * 64, prefix_tokens=system_tokens,
                      messages=messages, message_tokens=[300] * len(messages),
                      message_breakpoints=breakpoints, pinned=pinned)


def test_the_summary_gets_a_breakpoint_besides_the_recent_ones():
    plan = _plan((0,))
    assert plan.system and 0 in plan.message_indices
    assert len(plan.message_indices) == 3                  # summary + the two recent breakpoints


def test_without_a_summary_the_plan_is_unchanged():
    assert 0 not in _plan(()).message_indices and len(_plan(()).message_indices) == 2


def test_never_more_than_four_breakpoints():
    plan = _plan((0,), breakpoints=3)
    assert int(plan.system) + len(plan.message_indices) == 4 and 0 in plan.message_indices


def test_a_summary_below_the_cacheable_minimum_is_not_marked():
    plan = _plan((0,), system_tokens=10)
    assert 0 not in plan.message_indices                    # 10 + 300 tokens: too short to cache


def _tool_rounds(rounds: int) -> list[Message]:
    from hermes_core.types import ToolCall

    out = [Message("user", "earlier"), Message("assistant", "earlier answer"),
           Message("user", "look these up")]
    for r in range(rounds):
        out += [Message("assistant", "", tool_calls=(ToolCall(f"c{r}", "lookup", "{}"),)),
                Message("tool", f"a long result {r}", tool_call_id=f"c{r}")]
    return out


def _plan_rounds(messages: list[Message], breakpoints: int = 2):
    return plan_cache(provider_kind="anthropic", model="claude-sonnet-4-5", enabled=True,
                      ttl="5m", prefix_sha256="0" * 64, prefix_tokens=2000,
                      messages=messages, message_tokens=[600] * len(messages),
                      message_breakpoints=breakpoints)


def test_a_tool_round_marks_its_end_for_the_next_round_to_read():
    """Each follow-up request of a turn resent the turn's earlier rounds uncached: only messages
    before a user message were marked, and a tool round adds none."""
    second = _plan_rounds(_tool_rounds(1))
    assert second.message_indices == (1, 4)      # the turn's start (read) and this round's end
    third = _plan_rounds(_tool_rounds(2))
    assert third.message_indices == (4, 6)       # the last round's end (read) and this one's
    assert 2 not in third.message_indices        # the user message carries the per-turn context


def test_a_round_end_is_marked_even_for_an_empty_tool_answer():
    messages = _tool_rounds(1)
    messages[-1] = Message("tool", "", tool_call_id="c0")
    assert 4 in _plan_rounds(messages).message_indices


def test_no_message_breakpoints_means_none_in_tool_rounds_either():
    assert _plan_rounds(_tool_rounds(2), breakpoints=0).message_indices == ()


def test_minimum_table() -> None:
    assert min_cacheable_tokens("anthropic", "claude-sonnet-4-5-20250929") == 1024
    assert min_cacheable_tokens("anthropic", "claude-opus-4-5") == 4096
    assert min_cacheable_tokens("anthropic", "claude-haiku-4-5") == 4096
    assert min_cacheable_tokens("anthropic", "claude-3-5-haiku-latest") == 2048
    assert min_cacheable_tokens("anthropic", None) == 1024
    assert min_cacheable_tokens("openai", "gpt-4o") == 1024
    assert min_cacheable_tokens("offline", "x") is None


def test_plan_cache_minimum_with_slack() -> None:
    from hermes_core.agent.prompt.cache_plan import plan_cache

    msgs = (Message("user", "x"),)

    def plan(prefix: int, slack: float, model: str = "claude-sonnet-4-5"):
        return plan_cache(provider_kind="anthropic", model=model, enabled=True, ttl="5m",
                          prefix_sha256="ab" * 32, prefix_tokens=prefix, messages=msgs,
                          message_tokens=[1], min_slack=slack)

    assert plan(1024, 0.0).system is True
    assert plan(1023, 0.0).system is False
    assert plan(900, 0.15).system is True      # 900 >= 0.85 * 1024: estimate may undercount
    assert plan(850, 0.15).system is False
    assert plan(3500, 0.15, "claude-haiku-4-5").system is True
    assert plan(3400, 0.15, "claude-haiku-4-5").system is False
    assert plan(100, 0.15).message_indices == ()
