"""The cues that a request needs reasoning, and the everyday words they must not take."""

from __future__ import annotations

import pytest

from hermes_core.agent.routing.reasoning import reasoning_cue


@pytest.mark.parametrize(("text", "cue"), [
    ("Prove that there are infinitely many primes", "proof"),
    ("证明根号2是无理数", "proof"),
    ("Derive the formula for the variance of a binomial distribution", "derivation"),
    ("推导一元二次方程的求根公式", "derivation"),
    ("Find all integer solutions of x^2 - 2y^2 = 1", "problem solving"),
    ("Weigh the trade-offs of event sourcing versus CRUD", "trade-off analysis"),
    ("分析微服务和单体架构各自的优缺点", "trade-off analysis"),
    ("Think step by step: are all bloops lazzies?", "step-by-step reasoning"),
    ("请逐步推理", "step-by-step reasoning"),
    ("Is P equal to NP? Give a rigorous argument", "rigour"),
    ("Design a distributed rate limiter", "system design"),
])
def test_each_kind_of_hard_request_is_named_by_its_cue(text: str, cue: str) -> None:
    assert reasoning_cue(text) == cue


@pytest.mark.parametrize("text", [
    "How do I prove my address to open a bank account?",   # prove, no maths
    "What documents count as proof of income?",
    "Who proved Fermat's Last Theorem?",                   # a fact about a proof
    "谁证明了费马大定理？",
    "帮我开一个在职证明",                                    # a certificate
    "怎么证明我是我？",
    "Can you show that photo again?",
    "Solve my crossword clue: a large cat, 4 letters",
    "Step by step, how do I boil an egg?",                  # a how-to, not reasoning
    "一步一步教我煮鸡蛋",
    "What is the derivative of x^2?",                       # maths, one fact
    "Give me a 5-star review, show that it matters",       # "5-s" is no formula
    "",
])
def test_an_everyday_use_of_a_cue_word_is_no_cue(text: str) -> None:
    assert reasoning_cue(text) == ""


def test_step_by_step_looks_for_its_verb_within_a_bounded_window() -> None:
    far = "Step by step " + "x " * 200 + "why?"
    near = "Step by step, why does ice float?"
    assert reasoning_cue(near) == "step-by-step reasoning" and reasoning_cue(far) == ""
