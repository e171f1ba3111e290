"""Tests of ``hermes_core/tokens.py``: exact counts of OpenAI's encodings, offline.

The counts in the table were taken with tiktoken 0.14 over the vocabulary files it downloads
(sha256-checked), not with the library under test: agreement with them is the correctness check.
"""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Callable
from typing import Any

import pytest

from hermes_core.tokens import (
    ENCODINGS,
    count_tokens,
    head_tokens,
    tail_tokens,
    tokenizer,
    valid_text,
)

# text, o200k_base tokens, cl100k_base tokens (tiktoken's counts, disallowed_special=())
COUNTED = {
    "english": ("It's what we'd've done, isn't it?", 9, 12),
    "code": ("def f(x: int) -> int:\n    return x * 2  # double\n", 19, 19),
    "json": ('{"id": 42, "tags": ["a", "b"], "ok": true}', 20, 20),
    "hex": ("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", 43, 43),
    "base64": ("SGVsbG8sIHdvcmxkIQ==c29tZSBkYXRhIGhlcmU=", 27, 27),
    "chinese": ("我喜欢吃苹果，也喜欢散步。", 9, 20),
    "japanese": ("カタカナとひらがなの文章です。", 12, 14),
    "korean": ("오늘 회의는 오후 세 시에 시작합니다.", 11, 16),
    "thai": ("สวัสดีครับ วันนี้อากาศดีมาก", 11, 26),
    "hindi": ("नमस्ते, आज मौसम बहुत अच्छा है।", 11, 33),
    "arabic": ("مرحبا بكم في الاجتماع.", 7, 17),
    "emoji": ("Family 👨\u200d👩\u200d👧\u200d👦 and flags 🇫🇷🇯🇵!", 23, 33),
    "special token text": ("a <|endoftext|> b", 9, 8),
    "replacement char": ("x\ufffdy", 3, 3),
}


@pytest.mark.parametrize("kind", sorted(COUNTED))
def test_counts_agree_with_tiktoken_and_the_text_round_trips(kind: str) -> None:
    text, o200k, cl100k = COUNTED[kind]
    assert count_tokens(text, "o200k_base") == o200k
    assert count_tokens(text, "cl100k_base") == cl100k
    for enc in ENCODINGS:
        ids = tokenizer(enc).encode(text)
        assert len(ids) == count_tokens(text, enc)
        assert tokenizer(enc).decode(ids) == text


def test_hello_world_is_the_token_ids_openai_documents() -> None:
    assert tokenizer("cl100k_base").encode("hello world") == [15339, 1917]
    assert tokenizer("o200k_base").encode("hello world") == [24912, 2375]


def test_empty_text_is_no_tokens() -> None:
    assert count_tokens("") == 0
    assert head_tokens("", 5) == "" and tail_tokens("", 5) == ""


def test_a_lone_surrogate_counts_as_a_replacement_character_instead_of_raising() -> None:
    # json.loads('"\\ud800"') and surrogateescape-decoded filenames make such strings
    assert valid_text("x\ud800y") == "x\ufffdy"
    assert count_tokens("x\ud800y") == count_tokens("x\ufffdy") == 3
    assert head_tokens("ab\udfff" * 50, 10).startswith("ab")


def test_huge_text_is_counted_whole() -> None:
    # past the tiktoken-like wrapper's limits (a million characters, 200,000 tokens)
    text = "".join(f"{i:x}," for i in range(300_000))
    n = count_tokens(text)
    assert len(text) > 1_000_000 and n > 200_000
    assert n == len(tokenizer().encode(text))


def test_unknown_encoding_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="p50k_base"):
        tokenizer("p50k_base")


def _samples() -> list[str]:
    rng = random.Random(3)
    blob = rng.randbytes(600)
    return [COUNTED["emoji"][0] * 20, COUNTED["thai"][0] * 30, base64.b64encode(blob).decode(),
            json.dumps({"rows": [[i, f"名前{i}", i / 3] for i in range(80)]}, ensure_ascii=False),
            blob.hex(), "word " * 300]


@pytest.mark.parametrize("budget", [1, 7, 50, 200])
def test_the_head_is_the_longest_prefix_within_the_budget(budget: int) -> None:
    for text in _samples():
        head = head_tokens(text, budget)
        assert text.startswith(head)
        assert count_tokens(head) <= budget
        if head != text:   # one more character would not fit
            assert count_tokens(text[:len(head) + 1]) > budget or len(head) + 1 == len(text)


@pytest.mark.parametrize("budget", [1, 7, 50, 200])
def test_the_tail_is_the_longest_suffix_within_the_budget(budget: int) -> None:
    for text in _samples():
        tail = tail_tokens(text, budget)
        assert text.endswith(tail)
        assert count_tokens(tail) <= budget
        if tail != text:
            assert count_tokens(text[len(text) - len(tail) - 1:]) > budget


def test_a_budget_of_nothing_is_an_empty_cut() -> None:
    assert head_tokens("hello world", 0) == "" and tail_tokens("hello world", 0) == ""


def test_a_tool_answer_sized_text_is_remembered_and_the_cache_is_bounded_by_characters(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_core import tokens

    answer = json.dumps([{"id": i, "ok": i % 2 == 0} for i in range(5000)])   # ~100k characters
    n = count_tokens(answer)
    assert tokens._memo.get(answer, "o200k_base") == n   # the next turn does not count it again
    memo = tokens._Memo(100)
    monkeypatch.setattr(tokens, "_memo", memo)
    texts = [f"text number {i} " * 3 for i in range(4)]              # 45-48 characters each
    assert [count_tokens(t) for t in texts] == [len(tokenizer().encode(t)) for t in texts]
    assert [t for t in texts if memo.get(t, "o200k_base") is not None] == texts[2:]   # oldest out
    assert memo.chars <= 100 and len(memo.order) == 2
    assert count_tokens(texts[0], "cl100k_base") == len(tokenizer("cl100k_base").encode(texts[0]))
    assert memo.get(texts[2], "o200k_base") is None       # one limit over both encodings
    assert count_tokens(answer) == n                                 # too long to keep: counted
    assert memo.get(answer, "o200k_base") is None


def test_a_count_looked_up_again_is_the_one_remembered_without_counting(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_core import tokens

    text = "a text counted once " * 10
    counts = (count_tokens(text), count_tokens(text, "cl100k_base"))
    monkeypatch.setattr(tokens, "_count", lambda text, encoding: pytest.fail("counted again"))
    same = text[:5] + text[5:]   # equal text, another string object
    assert (count_tokens(same), count_tokens(same, "cl100k_base")) == counts


def test_a_child_forked_while_a_thread_was_loading_an_encoding_counts(
        monkeypatch: pytest.MonkeyPatch, in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    """A warm-up thread of a preloaded app loading the encoding (~90 ms, the first count) when
    the server forked its workers."""
    from hermes_core import tokens

    monkeypatch.setattr(tokens, "_tokenizers", {})          # the parent has loaded none yet
    monkeypatch.setattr(tokens, "_memo", tokens._Memo(tokens.CACHE_CHARS))
    with held_by_a_thread(tokens._load_lock):
        assert in_forked_child(lambda: count_tokens(COUNTED["english"][0])) == COUNTED["english"][1]


def test_a_child_forked_while_a_thread_was_remembering_a_count_counts(
        in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    from hermes_core import tokens

    count_tokens("loaded")
    text = f"{COUNTED['english'][0]} {random.random()}"    # a text the memo has not seen
    with held_by_a_thread(tokens._memo.lock):
        assert in_forked_child(lambda: count_tokens(text)) == count_tokens(text)
