"""History compaction: cut points, large cache-stable steps, summaries and the facts they keep."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from hermes_core.agent.agent import Agent
from hermes_core.agent.prompt.compaction import (
    CompactionReport,
    CompactionState,
    HistoryCompactor,
    choose_cut,
    cut_points,
    fit_summary,
    fold_history,
)
from hermes_core.agent.prompt.token_count import BpeCounter, message_cost, tools_json
from hermes_core.providers.offline import OfflineProvider
from hermes_core.tokens import count_tokens
from hermes_core.types import Message, Prompt, ToolCall, ToolSpec, TurnContext

from .conftest import FILLER, SMALL_MODEL, WindowedFake, chat


def long_chat(compactor: HistoryCompactor, said: Callable[[int], str],
              turns: int) -> list[tuple[CompactionReport, int]]:
    """``turns`` turns through ``compactor`` alone (no provider): each turn's report and what its
    summary message cost."""
    history: list[Message] = []
    out = []
    for t in range(turns):
        message = Message("user", said(t))
        fitted = compactor.fit(Prompt(system="You are helpful.", messages=(*history, message)),
                               history, model=SMALL_MODEL)
        report = compactor.last
        assert report is not None
        summary = fitted.messages[0] if fitted.summary_index == 0 else None
        out.append((report, message_cost(summary, BpeCounter()) if summary else 0))
        history += [message, Message("assistant", "Noted: " + said(t)[:80])]
    return out


# --------------------------------------------------------------------------- pure parts

def test_cut_points_are_turn_starts_that_never_split_a_tool_call_from_its_result():
    history = [Message("user", "find the skill"),
               Message("assistant", "", tool_calls=(ToolCall("c1", "skill_view", "{}"),)),
               Message("tool", "skill body", tool_call_id="c1"),
               Message("assistant", "done"),
               Message("user", "next"),
               Message("assistant", "", tool_calls=(ToolCall("c2", "skill_view", "{}"),)),
               Message("user", "an interjection before the result"),   # malformed but possible
               Message("tool", "late result", tool_call_id="c2"),
               Message("user", "last"),
               Message("assistant", "ok")]
    points = cut_points(history)
    assert points == [0, 4, 8]           # 6 would leave call c2 before the cut, its result after
    for p in points:
        before = {c.id for m in history[:p] for c in m.tool_calls}
        after = {m.tool_call_id for m in history[p:] if m.role == "tool"}
        assert not before & after


def test_choose_cut_reaches_the_target_in_one_large_step_and_keeps_recent_turns():
    costs = [10, 90] * 10                       # ten turns of 100 tokens
    points = list(range(0, 20, 2))
    assert choose_cut(costs, points, target=350, keep_turns=2) == 14   # 3 turns = 300 <= 350
    # the last keep_turns turns stay even when they alone exceed the target
    assert choose_cut(costs, points, target=50, keep_turns=2) == 16
    assert choose_cut(costs, [0], target=50, keep_turns=1) is None      # nothing to fold


@pytest.mark.parametrize("last_turn, ceiling, cut", [
    (100, 400, 16),      # the two kept turns (200) within the ceiling: kept
    (100, 150, 18),      # over it: one fewer kept, down to the target
    (2000, 1000, 20),    # the last turn alone over it (a pasted log): all of it folded
    (200, 250, 18),      # the last turn over the target but within the ceiling: it stays
    (2000, None, 16),    # no ceiling: the kept turns stay whatever they cost
])
def test_kept_turns_over_the_ceiling_give_way_down_to_the_whole_history(
        last_turn: int, ceiling: int | None, cut: int):
    costs = [10, 90] * 9 + [last_turn - 10, 10]
    points = [*range(0, 20, 2), 20]              # 20: the history's end, the new message's turn
    assert choose_cut(costs, points, target=150, keep_turns=2, ceiling=ceiling) == cut


THAI = "บันทึกไม่มีอะไรใหม่ในวันนี้ "


def thai_prompt() -> tuple[Prompt, list[Message]]:
    """A prompt as the builder gives it (its counts in o200k_base), in Thai, where cl100k_base
    spends ~3x o200k's tokens."""
    history = [Message("user", THAI * 3), Message("assistant", THAI * 2)]
    turn = TurnContext(skills_block=THAI * 4, clock_line="now")
    prompt = Prompt(system=THAI * 20, messages=(*history, Message("user", THAI * 5)),
                    context=turn.render(), turn=turn,
                    tools=(ToolSpec("lookup", "ค้นหา " * 10),))
    o200k = {"system": count_tokens(prompt.system), "context": count_tokens(prompt.context),
             "skills": count_tokens(turn.skills_block), "message": count_tokens(THAI * 5),
             "history": 1, "tools": 1, "total": 1}
    return replace(prompt, tokens=o200k), history


@pytest.mark.parametrize("enabled", [True, False])
@pytest.mark.parametrize("model, encoding", [("gpt-4", "cl100k_base"), ("gpt-4o", "o200k_base")])
def test_a_prompts_counts_are_in_the_encoding_of_the_model_it_is_fitted_for(
        small_compactor: Callable[..., HistoryCompactor], model: str, encoding: str,
        enabled: bool) -> None:
    """Prompt.tokens stayed o200k counts for gpt-4: its exact cl100k total was only in the
    compaction report."""
    prompt, history = thai_prompt()
    compactor = small_compactor(enabled=enabled)
    for fitted_for in ("gpt-4o", model):   # a model switch counts again, not from the last one
        fitted = compactor.fit(prompt, history, model=fitted_for, provider_kind="openai")
    t = fitted.tokens
    counter = BpeCounter(encoding, exact=True)
    assert t["system"] == count_tokens(prompt.system, encoding)
    assert t["context"] == count_tokens(prompt.context, encoding)
    assert t["skills"] == count_tokens(THAI * 4, encoding)
    assert t["message"] == count_tokens(THAI * 5, encoding)
    assert t["history"] == sum(message_cost(m, counter) for m in history)
    assert t["tools"] == count_tokens(tools_json(prompt.tools), encoding) > 1
    assert t["total"] == t["system"] + t["context"] + t["history"] + t["message"] + t["tools"]


@pytest.mark.parametrize("enabled", [True, False])
def test_a_prompt_a_hook_changed_is_counted_again_with_its_history_as_fitted(
        small_compactor: Callable[..., HistoryCompactor], enabled: bool) -> None:
    """A hook's text beside the fitted history: counted once, the history's count and messages
    kept while they fit, and said not to fit once the text leaves them no room."""
    prompt, history = thai_prompt()
    compactor = small_compactor(enabled=enabled)
    fitted = compactor.fit(prompt, history, model=SMALL_MODEL)
    before = compactor.last
    hooked = replace(fitted, context=fitted.context + "\n\n## Ticket\nOPS-7 is open")
    counted, fits = compactor.rebudget(hooked, SMALL_MODEL, "openai")
    assert fits and counted.messages is fitted.messages
    grew = count_tokens(hooked.context) - count_tokens(fitted.context)
    assert counted.tokens["context"] == fitted.tokens["context"] + grew
    assert counted.tokens["history"] == fitted.tokens["history"]
    assert counted.tokens["total"] == fitted.tokens["total"] + grew
    if not enabled:
        assert compactor.last is None
        return
    assert before is not None and compactor.last is not None
    assert compactor.last.budget.fixed == before.budget.fixed + grew
    assert compactor.last.history_tokens == before.history_tokens
    _, fits = compactor.rebudget(replace(fitted, context=" word" * 2500), SMALL_MODEL, "openai")
    assert not fits


# --------------------------------------------------------------------------- through the Agent

def test_a_long_chat_never_fails_and_compacts_in_large_steps(small_agent: Callable[..., Agent]):
    fake = WindowedFake()
    agent = small_agent(fake)
    replies = chat(agent, 60)
    events = [r.compaction.compaction for r in replies if r.compaction.compaction is not None]
    assert 1 <= len(events) <= 12                         # large steps, not one per turn
    assert all(e.folded_turns >= 3 for e in events)
    assert len(agent.history) == 120                      # the agent keeps every message
    assert all(r.compaction.history_tokens <= r.compaction.budget.available for r in replies)


def test_a_history_swapped_for_another_conversation_is_measured_afresh(
        small_agent: Callable[..., Agent]):
    """Message costs were remembered by position: a caller that put another saved conversation
    into ``agent.history`` (same length, longer messages) was measured by the old messages'
    sizes, nothing was compacted, and the provider refused the request as over its window."""
    fake = WindowedFake()
    agent = small_agent(fake)
    assert any(r.compaction.compaction is not None for r in chat(agent, 40))
    long = ("The ledger export from the warehouse has 40 columns, and each nightly run "
            "rewrites the reconciliation table while the auditors read it. ") * 4
    saved = [Message(m.role, f"{long} ({i})") for i, m in enumerate(agent.history)]
    agent.history[:] = saved
    reply = agent.chat("Where were we with the ledger export?")
    assert reply.compaction.compaction is not None
    assert reply.compaction.history_tokens <= reply.compaction.budget.available
    sent = " ".join(m.content for m in fake.requests[-1].prompt.messages)
    assert "ledger export" in sent
    assert not any(f in sent for f in FILLER)   # no summary of the conversation swapped out


def test_without_compaction_the_same_chat_fails(small_agent: Callable[..., Agent]):
    from hermes_core.errors import HermesError

    agent = small_agent(WindowedFake(), enabled=False)
    failed = 0
    for t in range(60):
        try:
            agent.chat(FILLER[t % len(FILLER)])
        except HermesError:
            failed += 1
    assert failed > 0                                     # the control: the window is real


def test_the_message_prefix_is_byte_identical_between_compactions(small_agent: Callable[..., Agent]):
    fake = WindowedFake()
    agent = small_agent(fake)
    replies = chat(agent, 50)
    turns = fake.turn_requests
    assert len(turns) == len(replies)
    stable = 0
    for prev, cur, reply in zip(turns, turns[1:], replies[1:], strict=False):
        if reply.compaction.compaction is None:
            assert cur.prompt.messages[:len(prev.prompt.messages)] == prev.prompt.messages
            assert cur.prompt.system == prev.prompt.system
            stable += 1
    assert stable >= 40


def test_the_summary_leads_the_messages_and_is_marked_for_the_cache(small_agent: Callable[..., Agent]):
    fake = WindowedFake()
    agent = small_agent(fake)
    replies = chat(agent, 40)
    last = replies[-1]
    assert last.prompt.summary_index == 0
    assert last.prompt.messages[0].content.startswith("[Conversation so far")
    assert last.prompt.messages[1].role == "user"         # verbatim turns start at a turn start


def test_facts_survive_many_compactions_offline(small_agent: Callable[..., Agent]):
    agent = small_agent(OfflineProvider())
    assert agent.offline
    facts = {3: "By the way, my name is Ada Okafor and our codename is BLUEFIN-7.",
             20: "We decided the launch budget is 48,500 euros."}
    replies = chat(agent, 70, facts)
    assert agent.compactor.state.compactions >= 2
    assert agent.compactor.state.source == "extractive"
    sent = replies[-1].prompt
    text = "\n".join(m.content for m in sent.messages)
    assert "BLUEFIN-7" in text and "48,500" in text and "Ada Okafor" in text


def test_the_fast_model_writes_the_summary_when_it_can(small_agent: Callable[..., Agent]):
    summary = ("The user asked about flaky integration tests in the billing service, slow docker "
               "builds, nginx 502 errors and cron jobs that run twice.")
    fake = WindowedFake(summaries=[summary] * 20)
    agent = small_agent(fake)
    replies = chat(agent, 40)
    assert fake.summary_requests and all(r.purpose == "summary" for r in fake.summary_requests)
    assert agent.compactor.state.source == "model"
    assert summary in replies[-1].prompt.messages[0].content
    assert fake.last_request.purpose == "turn"


def test_a_declined_summary_request_falls_back_and_says_so(small_agent: Callable[..., Agent]):
    fake = WindowedFake()                                 # no scripted summaries: it declines
    agent = small_agent(fake)
    replies = chat(agent, 40)
    event = next(r.compaction.compaction for r in replies if r.compaction.compaction is not None)
    assert event.source == "extractive" and "SummaryFailed" in event.reason
    assert fake.summary_requests                          # it was asked


def test_the_report_describes_the_budget_in_words(small_agent: Callable[..., Agent]):
    agent = small_agent(WindowedFake())
    replies = chat(agent, 40)
    compacted = next(r for r in replies if r.compaction.compaction is not None)
    words = compacted.compaction.describe()
    assert "counted by o200k_base calibrated on the last reply" in words
    assert "this turn folded" in words and "compacts at 75%" in words
    assert compacted.compaction.as_dict()["compacted_now"]["folded_turns"] >= 3


def test_reset_forgets_the_summary(small_agent: Callable[..., Agent]):
    agent = small_agent(WindowedFake())
    chat(agent, 40)
    assert agent.compactor.state.folded > 0
    agent.reset()
    reply = agent.chat("hello again")
    assert reply.prompt.summary_index is None and len(reply.prompt.messages) == 1


def test_compaction_can_be_switched_off(small_agent: Callable[..., Agent]):
    agent = small_agent(WindowedFake(window=100_000), enabled=False)
    replies = chat(agent, 30)
    assert all(r.prompt.summary_index is None for r in replies)
    assert len(replies[-1].prompt.messages) == 59


def test_a_summary_full_of_facts_stays_within_its_share_of_the_budget_over_500_turns(
        small_compactor: Callable[..., HistoryCompactor]):
    """Every turn stating a fact: the facts list under the prose was not counted against the
    summary's room, so the summary grew to 1.6x its share and compaction ran every third turn."""
    compactor = small_compactor()
    turns = long_chat(compactor, lambda t: (
        f"My project Falcon{t} has a budget of {t * 1000 + 17} euros and I decided to ship it on "
        f"day {t} with the Orion{t} team."), 500)
    room = int(turns[-1][0].budget.available * compactor.settings.prompt.compaction.summary_share)
    assert max(cost for _, cost in turns) <= room
    assert all(r.history_tokens <= r.budget.high_water for r, _ in turns)
    assert compactor.state.compactions <= 500 // 8          # large steps, not one every few turns
    assert compactor.state.facts                            # facts are trimmed, not all dropped


def test_a_chinese_chat_is_compacted_in_large_steps_not_every_turn(
        small_compactor: Callable[..., HistoryCompactor]):
    """Chinese facts have no spaces, so none is ever "already in the prose": the facts alone
    outgrew the room (2.5x) and the history was compacted on 481 of 500 turns, a cold cache each."""
    compactor = small_compactor()
    turns = long_chat(compactor, lambda t: (
        f"我决定把项目{t}的预算定为{t * 1000}元，我们的团队会在第{t}天完成所有的测试和部署工作。"), 500)
    room = int(turns[-1][0].budget.available * compactor.settings.prompt.compaction.summary_share)
    assert max(cost for _, cost in turns) <= room
    # each compaction frees a fifth of the budget (high water 75% -> target 35% + summary 20%):
    # about seven turns of this chat
    assert compactor.state.compactions <= 500 // 6


def test_offline_summaries_of_summaries_do_not_stack_role_labels():
    """The summary so far was folded in as one user message, so its first sentence came back as
    "User: User: ..." and gained a label each compaction: after a hundred compactions the prose
    was nothing but labels and every word of the chat was gone."""
    state = CompactionState()
    for n in range(120):
        turn = [Message("user", f"Question {n}: how do I tune the Postgres vacuum for table t{n}?"),
                Message("assistant", f"For t{n}, lower autovacuum_vacuum_scale_factor to 0.0{n % 9 + 1}.")]
        state, *_ = fold_history(state, turn, turns=1, summarizer=None, max_words=120)
    assert "User: User:" not in state.prose and "User: Assistant:" not in state.prose
    assert "Postgres vacuum" in state.prose and "autovacuum" in state.prose


def test_a_message_larger_than_the_window_is_refused_before_any_request(
        small_agent: Callable[..., Agent]):
    """A pasted 2 MB log: the history was folded (a summary request paid for) to make room that
    could not exist, then the whole log was uploaded for the provider to refuse."""
    from hermes_core.errors import ContextWindowExceeded

    fake = WindowedFake()
    agent = small_agent(fake)
    chat(agent, 30)
    state, sent, history = agent.compactor.state, len(fake.requests), list(agent.history)
    log = "ERROR worker 7 crashed at line 42 of billing/export.py, retrying in 5s\n" * 30_000
    with pytest.raises(ContextWindowExceeded) as e:
        agent.chat(log)
    text = str(e.value)
    assert "m-small" in text and "3000" in text and "llm.max_tokens" in text
    assert len(fake.requests) == sent                      # nothing sent, no summary asked for
    assert agent.compactor.state == state and agent.history == history
    assert agent.chat("Sorry, here is just the last line: crashed at line 42.").text


def test_a_message_larger_than_the_window_goes_out_when_a_long_context_model_may_take_it(
        small_agent: Callable[..., Agent]):
    from hermes_core.errors import HermesError

    fake = WindowedFake()
    agent = small_agent(fake)
    routing = agent.settings.llm.routing
    agent.settings = agent.settings.model_copy(update={"llm": agent.settings.llm.model_copy(
        update={"routing": routing.model_copy(update={"long_context_model": "m-long"})})})
    with pytest.raises(HermesError):
        agent.chat("ERROR worker 7 crashed\n" * 5_000)   # this fake refuses it from every model
    assert fake.turn_requests                              # but it was the provider's call


def test_a_tool_call_never_answered_does_not_stop_compaction_for_good(
        small_compactor: Callable[..., HistoryCompactor]):
    """A restored history whose first turn was cut off after the model called a tool: the call
    stayed "open" forever, so no later turn start was a cut point and the history grew past the
    window with compaction reporting that nothing could be folded."""
    compactor = small_compactor()
    history = [Message("user", "run the nightly export"),
               Message("assistant", "", tool_calls=(ToolCall("c1", "shell", "{}"),)),
               Message("assistant", "(interrupted)")]
    for t in range(80):
        message = Message("user", f"Question {t}: why does nginx return 502 for the billing API?")
        fitted = compactor.fit(Prompt(system="s", messages=(*history, message)), history,
                               model=SMALL_MODEL)
        history += [message, Message("assistant", "Check proxy_read_timeout and keepalive. " * 4)]
    assert compactor.last is not None
    assert compactor.last.history_tokens <= compactor.last.budget.available
    sent = fitted.messages
    answered = {m.tool_call_id for m in sent if m.role == "tool"}
    assert all(c.id in answered for m in sent for c in m.tool_calls)   # the orphan was folded


@pytest.mark.parametrize("lines", [110, 160])
def test_a_paste_near_the_window_is_folded_with_its_turn_not_kept_over_the_mark(
        small_agent: Callable[..., Agent], lines: int):
    """A log pasted at 60-85% of the window fits its own turn, then sits among the
    ``keep_turns`` turns kept verbatim: each later turn folded one small turn around it (a
    summary request and a cold cache every turn) while the history stayed over its mark, and
    grew past the window until the provider refused every turn of the chat."""
    fake = WindowedFake()
    agent = small_agent(fake)
    chat(agent, 3)
    agent.chat("ERROR worker 7 crashed at line 42 of billing/export.py\n" * lines)
    replies = [agent.chat(f"And what about step {t} of the fix?") for t in range(6)]
    assert all(r.compaction.history_tokens <= r.compaction.budget.high_water for r in replies)
    assert sum(r.compaction.compaction is not None for r in replies) <= 1
    assert any("worker 7" in m.content for m in fake.requests[-1].prompt.messages)   # summarised


def test_a_long_last_answer_within_the_ceiling_is_kept_verbatim_for_the_next_question(
        small_compactor: Callable[..., HistoryCompactor]):
    """The last turn over the target (a long code answer on a small window) but within the
    ceiling: a fold that kept it verbatim was under the mark, yet the kept turns gave way down to
    the target, past it, and folded the whole history: the answer the user now asks about was a
    few words of summary."""
    compactor = small_compactor()
    counter = BpeCounter()
    history: list[Message] = []
    for t in range(6):
        history += [Message("user", FILLER[t % 4]),
                    Message("assistant", "Check the logs first. " * 25)]
    code = "".join(f"    row_{i} = export(ledger, {i})  # step {i}\n" for i in range(60))
    history += [Message("user", "Write the billing exporter."), Message("assistant", code)]
    message = Message("user", "What does step 3 do?")
    fitted = compactor.fit(Prompt(system="You are helpful.", messages=(*history, message)),
                           history, model=SMALL_MODEL)
    report = compactor.last
    assert report is not None and report.compaction is not None
    answer = message_cost(history[-1], counter)
    ceiling = report.budget.high_water - int(report.budget.available * 0.2)   # summary_share
    assert report.budget.target < answer <= ceiling            # the case: over the target only
    assert fitted.messages[-2:] == (history[-1], message)                  # kept verbatim
    assert report.history_tokens <= report.budget.high_water


@pytest.mark.parametrize("unit", [
    "사용자는 청구 서비스의 통합 테스트에 대해 물었다. ",           # Korean: no word counted
    "Пользователь спросил о тестах биллинга и решил выпустить в пятницу. ",
    "سأل المستخدم عن اختبارات خدمة الفوترة وقرر الإصدار يوم الجمعة. ",
    "บันทึกไม่มีอะไรใหม่ในวันนี้ ",
    "ユーザーは請求サービスの統合テストについて質問した。",
    "Key [REDACTED] was rotated for ticket T-9 today. ",
])
def test_a_summary_in_any_script_is_fitted_to_its_room(unit: str):
    """A kept fold written for a large window's room, taken up on a small one: its prose is cut
    by words, and Korean, Russian, Arabic or Thai count none (only ASCII words and Chinese
    characters are counted), so it was not cut at all and went out alone over the window. Cut,
    it is the same bytes each time and never ends inside a redaction mark."""
    counter = BpeCounter()
    state = CompactionState(folded=8, turns=4, prose=unit * 400, source="model", compactions=3)
    fitted = fit_summary(state, 600, lambda m: message_cost(m, counter))
    msg = fitted.message()
    assert msg is not None and message_cost(msg, counter) <= 600
    assert count_tokens(fitted.prose) >= 300                      # cut to its room, not emptied
    assert fitted == fit_summary(state, 600, lambda m: message_cost(m, counter))
    assert fitted.prose.count("[") == fitted.prose.count("]")


def test_a_report_of_a_message_too_large_for_the_window_says_so_not_a_full_history() -> None:
    """A pasted megabyte is refused before any request: ``/stats`` then read "history 0 of 0
    tokens (100%; compacts at 75%)", a full history in a chat that has none. The report of a
    budget the message alone overflows says the message did not fit, by how much."""
    from hermes_core.agent.prompt.budget import history_budget
    from hermes_core.config import CompactionSettings
    budget = history_budget(window=8000, max_tokens=1000, fixed_tokens=250_000,
                            settings=CompactionSettings())
    line = CompactionReport(counter="estimate", budget=budget, history_tokens=0).describe()
    assert "(100%" not in line and "0 of 0" not in line, line
    assert f"{budget.overflow} tokens" in line and "did not fit" in line, line


def _unpaired_on_the_wire(kind: str, body: dict[str, Any]) -> tuple[set[str], set[str]]:
    """(calls sent without their answer, answers sent without their call) in one request body."""
    calls, answers = set(), set()
    for m in body["messages"]:
        if kind == "openai":
            calls |= {c["id"] for c in m.get("tool_calls") or ()}
            if m["role"] == "tool":
                answers.add(m["tool_call_id"])
        elif isinstance(m["content"], list):
            calls |= {b["id"] for b in m["content"] if b.get("type") == "tool_use"}
            answers |= {b["tool_use_id"] for b in m["content"] if b.get("type") == "tool_result"}
    return calls - answers, answers - calls


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_fold_of_the_whole_history_never_parts_a_tool_call_from_its_answer_on_the_wire(
        kind: str, empty_home: Path, respx_mock: Any) -> None:
    """A pasted log near the window, beside turns that called a tool, makes the kept turns give
    way down to the whole history, the history's end a cut point: every request, as OpenAI's and
    Anthropic's wire formats render it, still carries each call with its answer, this turn's
    rounds too."""
    from hermes_core.config import load_settings
    from hermes_core.providers.anthropic import AnthropicProvider
    from hermes_core.providers.openai import OpenAIProvider
    from tests.agent.conftest import KEYS, MODELS, URLS, wire_response

    def fetch_log(name: str) -> str:
        """Fetch a build log."""
        return "ERROR worker 7 crashed at line 42 of billing/export.py\n" * 20

    model = MODELS[kind]
    settings = load_settings({
        "home": str(empty_home),
        "llm": {"max_tokens": 256, "routing": {"default_model": model,
                                               "context_windows": {model: 3000}}},
        "credentials": {kind: {"keys": [{"key": KEYS[kind]}]}},
        "context_engine": {"enabled": False}, "skill_utils": {"enabled": False},
        "prompt": {"compaction": {"use_model": False}}}, env={})
    replies = []
    for t in range(8):
        if t % 3 == 1:   # a turn that calls the tool, then answers
            replies += [wire_response(kind, False, "", (ToolCall(f"c{t}", "fetch_log",
                                                                 json.dumps({"name": "b"})),)),
                        wire_response(kind, False, f"The log shows worker 7 crashing ({t}).")]
        else:
            replies.append(wire_response(kind, False, f"Answer {t}: check the exporter."))
    route = respx_mock.post(URLS[kind]).mock(side_effect=replies)
    agent = Agent(settings, provider=OpenAIProvider() if kind == "openai" else AnthropicProvider(),
                  loop_options={"sleep": lambda s: None}, tools=[fetch_log])
    said = {1: "Step 1: what does the build log say?", 4: "Step 4: and the log now?",
            7: "Step 7: once more, the log?",
            2: "Here is the crash output:\n" + "ERROR worker 7 crashed in billing/export.py\n" * 150}
    reports = [agent.chat(said.get(t, FILLER[t % 4])).compaction for t in range(8)]
    assert route.call_count == len(replies)
    assert any(r.compaction is not None and r.verbatim_messages == 0 for r in reports)
    for sent in route.calls:
        assert _unpaired_on_the_wire(kind, json.loads(sent.request.content)) == (set(), set())
