"""Tests of ``hermes_core/agent/routing/shell_cues.py``: a shell command or a place to type one,
and a bare "shell", "terminal" or "bash" that is a person's (a party, an airport, an illness)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hermes_core.agent.routing.code_cues import technical_starts
from hermes_core.agent.routing.rules import extract_features

from .conftest import CpuOf

# A bare word among a party's, a crowd's, an illness's, a company's or a war's words; each went
# to the code model as a command to run.
EVERYDAY_SHELL_WORDS: tuple[tuple[str, str], ...] = (
    ("Why did they cancel the bash?", "fast"),
    ("Write an invitation for the bash on Friday", "fast"),
    ("We are throwing a bash on Saturday, any ideas?", "fast"),
    ("What should I wear to the bash?", "fast"),
    ("How many guests are coming to the bash?", "fast"),
    ("Why is the terminal so crowded today?", "default"),
    ("Why is the terminal so busy this morning?", "default"),
    ("The terminal was packed with passengers", "fast"),
    ("Is there a taxi rank outside the terminal?", "fast"),
    ("Why is my grandmother terminal?", "default"),
    ("Is his cancer terminal?", "fast"),
    ("He was shell-shocked after the war", "fast"),
    ("They hid the money in a shell company", "fast"),
    ("Why did the army shell the town?", "default"),
    # Review s54rC: each of these went to the code model on ae32676e. "bash" said of people, a
    # shy child's shell, money or peas shelled, a terminal degree or station, and Chinese 终端 of
    # a shop's till, a phone, an end customer or an airport
    ("Don't bash me for asking, but is pineapple on pizza ok?", "fast"),
    ("Why do people bash vegans so much?", "default"), ("The critics bash the new movie", "fast"),
    ("My son won't come out of his shell at school", "fast"),
    ("I had to shell out a lot of money for rent", "fast"), ("How do I shell peas quickly?", "fast"),
    ("Is an MFA a terminal degree?", "fast"), ("How do I get to Grand Central Terminal?", "fast"),
    ("我们的销售终端覆盖了多少城市?", "fast"), ("移动终端市场份额是多少", "fast"),
    ("终端消费者更喜欢哪个品牌?", "fast"), ("机场终端在哪里", "fast"),
    # and a party's or an airport's words in Chinese or Japanese, the word glued to them or not
    ("派对 bash", "fast"), ("Terminal 2在机场哪里", "fast"), ("周五的bash派对穿什么?", "fast"),
    ("パーティーのbashに何を着ていく?", "fast"), ("机场的terminal在哪里", "fast"),
)

# Their twins, a computer's: a command, a prompt, an error or a script around the same word.
TECHNICAL_SHELL_WORDS: tuple[str, ...] = (
    "Why did the bash script cancel the job?",
    "Why is the terminal so slow when I run git status?",
    "my terminal at the airport cannot ssh",
    "How do I change the bash prompt colour?",
    "Why is my terminal showing an error after the update?",
    "open a shell in the container",
    "The terminal is packed with output from the build",
    # the review's rows in the same phrasings and languages, beside a computer's words
    "Don't bash the script, fix the prompt", "How do I shell out to git from Python?",
    "打开终端运行ls", "在终端里怎么切换目录", "终端显示乱码怎么办", "Mac终端怎么打开",
    "Stop bash from saving history", "Save money on cloud bills with a bash script",
    "Can you bash me a quick one-liner", "在移动终端上怎么运行命令",
    # the word glued to Chinese letters (no \b between 的 and b): went to the fast model
    "bash脚本怎么写", "zsh配置文件在哪", "bash里怎么写循环",
)


@pytest.mark.parametrize(("text", "slot"), EVERYDAY_SHELL_WORDS)
def test_a_bare_shell_word_among_a_party_s_a_crowd_s_or_an_illness_s_words_keeps_its_slot(
        text: str, slot: str, tier_of: Callable[..., str]) -> None:
    assert not extract_features(text).requires_shell_execution, text
    assert tier_of(text) == slot
    assert [text[i:i + 8] for i in technical_starts(text, text.lower())] == [], text


@pytest.mark.parametrize("text", TECHNICAL_SHELL_WORDS)
def test_the_same_word_beside_a_computer_s_names_a_shell(
        text: str, tier_of: Callable[..., str]) -> None:
    assert extract_features(text).requires_shell_execution, text
    assert tier_of(text) == "code"


# The party's, the crowd's and the illness's words repeated beside bare shell words: 80,000
# characters cost about four times what 20,000 do (each bare word looks up its neighbours).
@pytest.mark.parametrize("unit", [
    "cancel the bash ", "terminal so crowded ", "is my nan terminal ", "is my " * 8 + "terminal ",
    "shell company shell ls ", "people bash me ", "out of my shell ", "销售终端终端",
])
def test_a_bare_shell_word_among_a_crowd_s_or_a_party_s_words_is_read_in_linear_time(
        unit: str, cpu_of: CpuOf) -> None:
    from hermes_core.agent.routing.shell_cues import names_a_shell

    def read(text: str) -> object:
        names_a_shell(text)
        return technical_starts(text, text.lower())

    small, large = (cpu_of(read, unit, n) for n in (20_000, 80_000))
    assert large < 8 * small + 0.05, (small, large)
