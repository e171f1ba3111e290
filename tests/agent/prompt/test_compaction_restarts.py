"""History compaction across restarts and models: a new process folds where the old one did, a
kept fold is taken up under another model or window, and each model counts with its own
billed ratio."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from hermes_core.agent.agent import Agent
from hermes_core.agent.prompt import fold_store
from hermes_core.agent.prompt.calibration_store import CalibrationStore
from hermes_core.agent.prompt.compaction import (
    HistoryCompactor,
)
from hermes_core.agent.prompt.fold_store import FoldStore
from hermes_core.agent.prompt.token_count import BpeCounter, prompt_cost
from hermes_core.types import Completion, Message, Prompt, Usage

from .conftest import FILLER, SMALL_MODEL, WindowedFake, chat


def _reloaded(history: list[Message]) -> list[Message]:
    """``history`` as a process that saved it and read it back holds it: equal, not the same."""
    return [Message(m.role, m.content, m.tool_calls, m.tool_call_id, m.name) for m in history]


def test_a_new_agent_on_the_same_home_and_history_sends_what_the_old_one_would(
        small_agent: Callable[..., Agent]):
    """A new process on a compacted chat folded it again from nothing: one more summary request,
    another summary, and the whole history after the system prompt written to the cache again."""
    old_fake, new_fake = WindowedFake(), WindowedFake()
    old = small_agent(old_fake)
    replies = chat(old, 40)
    assert any(r.compaction.compaction is not None for r in replies)
    saved = _reloaded(old.history)
    old.chat("And what about the flaky billing test?")
    new = small_agent(new_fake)
    new.history = saved
    reply = new.chat("And what about the flaky billing test?")
    assert reply.compaction.compaction is None            # nothing folded again
    assert new_fake.summary_requests == []                # no summary paid for again
    assert new_fake.turn_requests[0].prompt.messages == old_fake.turn_requests[-1].prompt.messages
    new.close(summarize=False)
    old.close(summarize=False)


def _fed(compactor: HistoryCompactor, turns: int, said: Callable[[int], str], *,
         echoes: int) -> list[Message]:
    """The history of ``turns`` turns fitted one by one through ``compactor`` for the small model,
    each answer echoing its question ``echoes`` times."""
    history: list[Message] = []
    for t in range(turns):
        message = Message("user", said(t))
        compactor.fit(Prompt(system="You are helpful.", messages=(*history, message)), history,
                      model=SMALL_MODEL)
        history += [message, Message("assistant", "Noted: " + message.content * echoes)]
    return history


def test_a_history_read_back_equal_keeps_its_summary(
        small_compactor: Callable[..., HistoryCompactor]):
    """The summary was dropped when ``history[folded - 1]`` was not the very object folded: a
    caller that reloads its saved chat into the same agent paid a fold for an equal history."""
    compactor = small_compactor()
    history = _fed(compactor, 60, lambda t: FILLER[t % len(FILLER)] + f" ({t})", echoes=3)
    state = compactor.state
    assert state.folded > 0
    history = _reloaded(history)
    message = Message("user", "and then?")
    fitted = compactor.fit(Prompt(system="You are helpful.", messages=(*history, message)),
                           history, model=SMALL_MODEL)
    assert compactor.state == state
    assert fitted.messages[0] == state.message()


class _DenserFake(WindowedFake):
    """Bills 1.3x our o200k count, as a provider whose tokenizer is denser (Anthropic's on
    English is ~1.1-1.3x): the count is calibrated on its bills."""

    def _reply(self, prompt: Prompt, model: str) -> Any:
        got = super()._reply(prompt, model)
        if isinstance(got, Completion) and prompt.purpose != "summary":
            return replace(got, usage=Usage(int(got.usage.input_tokens * 1.3), 60))
        return got


def test_a_second_process_folds_where_the_first_did(small_agent: Callable[..., Agent]):
    """The billed-token ratio lived in memory only: a new process on the chat counted the history
    uncalibrated (smaller, here) and sent it whole on turns the old process had folded, so the
    two sent other requests for the same chat. Each turn a new Agent on the same home and history
    goes first (an Agent a request, as a web server makes them), then the long-lived one."""
    old_fake, new_fake = _DenserFake(), _DenserFake()
    old = small_agent(old_fake)
    chat(old, 2)
    folds = []
    for t in range(30):
        text = FILLER[t % len(FILLER)] + f" (part {t})"
        new = small_agent(new_fake)
        new.history = _reloaded(old.history)
        new.chat(text)
        new.close(summarize=False)
        folds.append(old.chat(text).compaction.compaction is not None)
        assert new_fake.turn_requests[-1].prompt.messages == \
            old_fake.turn_requests[-1].prompt.messages, f"turn {t}"
    assert any(folds)
    old.close(summarize=False)


def test_a_new_process_folds_where_a_long_lived_one_did_that_held_its_small_drifts_back(
        small_agent: Callable[..., Agent], tmp_path: Path):
    """Since decision 127 a long-lived process writes a drift within 2% at most every 300 s, so
    the file lags its newest bill; a new Agent still sends what it sends. Each turn's new Agent
    goes first and its write is undone, so the file holds only the long-lived one's writes."""
    old_fake, new_fake = _DenserFake(), _DenserFake()
    old = small_agent(old_fake)
    chat(old, 2)
    path = tmp_path / "home" / "cache" / "calibration.json"
    lagged, folds = 0, []
    for t in range(30):
        text = FILLER[t % len(FILLER)] + f" (part {t})"
        kept = path.read_bytes()
        new = small_agent(new_fake)
        new.history = _reloaded(old.history)
        new.chat(text)
        new.close(summarize=False)
        path.write_bytes(kept)
        folds.append(old.chat(text).compaction.compaction is not None)
        assert new_fake.turn_requests[-1].prompt.messages == \
            old_fake.turn_requests[-1].prompt.messages, f"turn {t}"
        lagged += json.loads(kept)["ratios"][SMALL_MODEL] != old.compactor.ratios[SMALL_MODEL]
    assert any(folds) and lagged >= 20
    old.close(summarize=False)


def test_a_few_long_turns_over_the_mark_are_folded_and_searched_for_in_the_store_once(
        small_compactor: Callable[..., HistoryCompactor], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch):
    """A few long turns, fewer than ``keep_turns``, over the mark: nothing could be folded, so
    every turn listed the fold folder and hashed the whole history again to look for another
    process's fold, and the history grew until the provider refused it. They are folded now
    (the kept turns alone were over the mark): the folder is listed once, by the first search,
    which hashes each message once; after it a turn hashes only what a fold it makes keeps
    (the folded messages, for the key), never the history again."""
    compactor = small_compactor(keep_turns=12)
    compactor.store = FoldStore(tmp_path / "home" / "cache" / "compaction", lambda s: s)
    hashed, listed = [], []
    real_bytes, real_listdir = fold_store._message_bytes, os.listdir
    monkeypatch.setattr(fold_store, "_message_bytes", lambda m: hashed.append(m) or real_bytes(m))
    monkeypatch.setattr(os, "listdir", lambda p: listed.append(p) or real_listdir(p))
    history: list[Message] = []
    over, expected = 0, 0
    for t in range(10):
        message = Message("user", f"Here is log {t}: " + "ERROR disk full on node-7 " * 60)
        searches = len(listed)
        compactor.fit(Prompt(system="You are helpful.", messages=(*history, message)), history,
                      model=SMALL_MODEL)
        report = compactor.last
        assert report is not None
        over += report.budget.over(report.history_tokens)
        expected += len(history) * (len(listed) - searches)            # a search: each once
        expected += compactor.state.folded if report.compaction is not None else 0   # the key
        history += [message, Message("assistant", "Noted.")]
    assert over == 0 and compactor.state.compactions >= 2   # each turn within its mark
    assert len(listed) == 1 and len(hashed) == expected


@pytest.mark.parametrize("model, window", [("m-large", 6000), ("m-tiny", 2200)])
def test_a_kept_fold_is_taken_up_under_another_model_or_window_and_folded_further_if_needed(
        tmp_path: Path, model: str, window: int):
    """Decided: a kept fold is the chat's summary, not the model's: it was written by the fast
    model (or extracted) from the chat alone, and folding again from nothing would summarise the
    whole chat in one step from a clipped transcript (and pay a summary request). So a process on
    another model or window takes it up when its history is over its own budget: as it is when
    that is enough (a larger window), folded further from it when not (a smaller one), its
    summary then fitted to the smaller window's share."""
    from hermes_core.config import load_settings

    def compactor(name: str) -> HistoryCompactor:
        settings = load_settings({
            "home": str(tmp_path / "home"),
            "llm": {"max_tokens": 256, "routing": {"default_model": SMALL_MODEL, "context_windows": {
                SMALL_MODEL: 3000, "m-large": 6000, "m-tiny": 2200}}},
            "prompt": {"compaction": {"use_model": False}}}, env={})
        return HistoryCompactor(settings, store=FoldStore(
            tmp_path / "home" / "cache" / "compaction", lambda s: s))

    (tmp_path / "home").mkdir()
    first = compactor(SMALL_MODEL)
    history = _fed(first, 80, lambda t: FILLER[t % len(FILLER)] + f" My ticket is T-{t}.",
                   echoes=2)
    kept = first.state
    assert kept.compactions >= 2
    message = Message("user", "and then?")
    other = compactor(model)
    fitted = other.fit(Prompt(system="You are helpful.", messages=(*history, message)),
                       _reloaded(history), model=model)
    report = other.last
    assert report is not None and not report.budget.over(report.history_tokens)
    if window > 3000:
        assert other.state == kept and report.compaction is None     # taken up as it is
        assert fitted.messages[0] == kept.message()
    else:
        assert report.compaction is not None                          # folded further from it
        assert other.state.compactions == kept.compactions + 1
        assert other.state.folded > kept.folded
        assert fitted.tokens["summary"] <= int(report.budget.available * 0.2)   # summary_share


@pytest.mark.parametrize("tail_turns", [0, 1])
def test_a_kept_fold_larger_than_this_window_s_room_is_fitted_to_it_not_sent_over(
        small_compactor: Callable[..., HistoryCompactor], tmp_path: Path, tail_turns: int):
    """A fold kept by a process on a 200k-token model has a summary of thousands of words (its
    room was a fifth of that window). Taken up on a 3,000-token model with nothing after it to
    fold (the chat's last turn ended where the fold did), it could not be folded further and the
    summary alone went out over the window: every turn of the chat refused."""
    history: list[Message] = []
    for t in range(16):
        history += [Message("user", f"{FILLER[t % len(FILLER)]} My ticket is T-{t}. " * 4),
                    Message("assistant", "Check the proxy timeouts and the retry budget. " * 6)]
    folded = len(history) - 2 * tail_turns
    prose = " ".join(f"The user asked about ticket T-{t % 12} and the billing service "
                     f"integration test number {t}." for t in range(300))
    compactor = small_compactor()   # its home made
    compactor.store = store = FoldStore(tmp_path / "home" / "cache" / "compaction", lambda s: s)
    assert store.save(history, {"folded": folded, "turns": folded // 2, "prose": prose,
                                "facts": [], "source": "model", "compactions": 3})
    message = Message("user", "and then?")
    fitted = compactor.fit(Prompt(system="You are helpful.", messages=(*history, message)),
                           _reloaded(history), model=SMALL_MODEL)
    report = compactor.last
    assert report is not None and compactor.state.compactions >= 3
    assert report.history_tokens <= report.budget.high_water
    assert fitted.tokens["summary"] <= int(report.budget.available * 0.2)   # summary_share
    assert "T-0" in fitted.messages[0].content


def test_each_model_counts_with_its_own_billed_ratio(
        small_compactor: Callable[..., HistoryCompactor]):
    """The billed-token ratio was one number for the whole process: a turn routed to another
    model counted with the last bill's ratio, whichever model it was for. Each model counts with
    its own now, and a model never billed counts unscaled."""
    compactor = small_compactor()
    message = Message("user", "Please review the deployment checklist for the billing service. " * 8)
    prompt = Prompt(system="You are helpful.", messages=(message,))
    ours = prompt_cost(prompt, BpeCounter())
    compactor.observe(prompt, Usage(round(ours * 1.3), 5), "claude-dense")
    compactor.observe(prompt, Usage(round(ours * 0.9), 5), "llama-sparse")
    plain = BpeCounter().count(message.content)
    counted = {model: compactor.fit(prompt, (), model=model, provider_kind="anthropic")
               .tokens["message"] for model in ("claude-dense", "llama-sparse", "never-billed")}
    assert counted["claude-dense"] == pytest.approx(plain * 1.3, rel=0.01)
    assert counted["llama-sparse"] == pytest.approx(plain * 0.9, rel=0.01)
    assert counted["never-billed"] == plain
    assert compactor.ratio_for("claude-dense") == pytest.approx(1.3, abs=0.01)
    assert compactor.ratio_for("llama-sparse") == pytest.approx(0.9, abs=0.01)


def _billed(compactor: HistoryCompactor, ratio: float) -> float:
    """``compactor`` shown a bill of ``ratio`` times our count of a request; the ratio it took."""
    prompt = Prompt(system="You are helpful.", messages=(Message("user", " ".join(FILLER) * 20),))
    compactor.observe(prompt, Usage(round(prompt_cost(prompt, BpeCounter()) * ratio), 10),
                      SMALL_MODEL)
    return compactor.ratios[SMALL_MODEL]


def test_a_long_lived_process_counts_with_the_home_s_ratio_while_its_bills_drift_within_it(
        small_compactor: Callable[..., HistoryCompactor], tmp_path: Path):
    """Decision 127 left: a drift under the tolerance is written at most every 300 s, and the
    long-lived process counted with its newest ratio while a new process read the file's, up to
    2% apart: at a fold's threshold the two folded a turn apart. Within the tolerance the
    long-lived one counts with the ratio the file holds; past it, it writes and both take it."""
    path = tmp_path / "home" / "cache" / "calibration.json"
    old = small_compactor()
    old.calibration = CalibrationStore(path)
    kept = _billed(old, 1.30)
    newest = _billed(old, 1.30 * 1.015)
    assert newest != kept and CalibrationStore(path).get(SMALL_MODEL) == kept   # not written
    new = small_compactor()
    new.calibration = CalibrationStore(path)
    assert old.ratio_for(SMALL_MODEL) == new.ratio_for(SMALL_MODEL) == kept
    moved = _billed(old, 1.30 * 1.05)
    assert old.ratio_for(SMALL_MODEL) == moved == CalibrationStore(path).get(SMALL_MODEL)
