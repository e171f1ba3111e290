"""Tests of `hermes_core/types.py` (value types and their reprs) and the public API surface."""

from __future__ import annotations

import dataclasses
import hashlib
import pickle

import pytest

from hermes_core.types import Credential, Message, Prompt, Skill, Usage, clean_text

KEY = "sk-proj-AbCdEf0123456789XYZ"


def test_credential_repr_str_show_fingerprint_only():
    c = Credential("openai", KEY, max_rpm=10)
    for text in (repr(c), str(c), f"{c}", repr([c]), repr({"c": c})):
        assert KEY not in text and c.fingerprint in text
    assert c.fingerprint == Credential("x", KEY).fingerprint  # stable across providers
    assert pickle.loads(pickle.dumps(c)).secret == KEY


def test_usage_arithmetic_and_ratio():
    u = Usage(10, 5, cache_read_tokens=90) + Usage(0, 1, cache_write_tokens=100)
    assert u.total_input_tokens == 200 and u.output_tokens == 6
    assert u.cache_hit_ratio == 0.45
    assert Usage().cache_hit_ratio == 0.0


def test_usage_sums_reasoning_tokens_and_stays_unreported_once_any_part_was() -> None:
    total = Usage(3, 9, reasoning_tokens=7) + Usage(1, 2, reasoning_tokens=1)
    assert (total.output_tokens, total.reasoning_tokens, total.reported) == (11, 8, True)
    assert not (total + Usage(reported=False)).reported


def test_usage_sums_say_a_part_was_counted_by_us_and_how_much_is_an_estimate() -> None:
    ours = Usage(13, 4, reported=False, counted=True, estimated_tokens=4)
    total = Usage(100, 20) + ours + Usage(50, 5, reported=False, counted=True, estimated_tokens=55)
    assert (total.input_tokens, total.output_tokens) == (163, 29)
    assert total.counted and not total.reported and total.estimated_tokens == 59
    assert not (Usage(1, 1) + Usage(2, 2)).counted


def test_prompt_prefix_hash_depends_on_system_only():
    a = Prompt(system="S", messages=(), context="ctx one")
    b = Prompt(system="S", messages=(), context="ctx two")
    assert a.prefix_sha256 == b.prefix_sha256
    assert Prompt(system="T", messages=()).prefix_sha256 != a.prefix_sha256


def test_public_api_resolves_lazily():
    import subprocess
    import sys

    import hermes_core

    for name in hermes_core.__all__:
        assert getattr(hermes_core, name) is not None, name
    # importing the package alone loads neither SDK nor torch
    code = ("import sys, hermes_core; "
            "print(any(m in sys.modules for m in ('openai', 'anthropic', 'torch')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(("text", "cleaned"), [
    ("plain ascii", "plain ascii"),
    ("中文和 emoji \U0001f600", "中文和 emoji \U0001f600"),
    ("a\ud800b", "a\ufffdb"),                          # a lone surrogate (bytes read as Latin-1)
    ("中\udfff文\ud83d\ude00", "中\ufffd文\ufffd\ufffd"),   # every surrogate code point, paired or not
])
def test_clean_text_replaces_each_surrogate_and_nothing_else(text: str, cleaned: str) -> None:
    assert clean_text(text) == cleaned
    assert clean_text(cleaned).encode("utf-8")


def test_prefix_hash_is_the_sha256_of_the_system_text_each_time_it_changes() -> None:
    for system in ("You are Hermes.", "You are Hermes!", "You are Hermes."):
        prompt = Prompt(system=system, messages=(Message("user", "hi"),))
        assert prompt.prefix_sha256 == hashlib.sha256(system.encode("utf-8")).hexdigest()


def test_a_skills_content_hash_is_remembered_and_a_replaced_skill_hashes_its_own_content() -> None:
    def make(description: str) -> Skill:
        return Skill("beta", description, body="steps", triggers=("fly",), tags=("travel",))
    skill = make("book a flight")
    first = skill.content_hash
    assert skill.content_hash is first and len(first) == 64
    assert make("book a flight").content_hash == first
    edited = dataclasses.replace(skill, description="book a flight or a train")
    assert edited.content_hash != first
    assert edited.content_hash == make("book a flight or a train").content_hash
    assert edited == dataclasses.replace(skill, description="book a flight or a train")   # not compared
    assert "content_hash" not in repr(skill) and pickle.loads(pickle.dumps(skill)) == skill


def test_a_skill_read_at_another_place_keeps_its_content_and_its_remembered_hash() -> None:
    fields = {"body": "steps", "triggers": ("fly",), "synonyms": ("plane",), "tags": ("travel",),
              "category": "trips", "platforms": ("linux",), "metadata": {"v": 1},
              "allowed_tools": ("Bash",), "license": "MIT"}
    skill = Skill("flights", "book a flight", path="catalog.jsonl:3", **fields)  # type: ignore[arg-type]
    digest = skill.content_hash
    moved = skill.at("catalog.jsonl:4")
    assert moved == Skill("flights", "book a flight", path="catalog.jsonl:4", **fields)  # type: ignore[arg-type]
    assert moved.metadata == {"v": 1} and skill.path == "catalog.jsonl:3"
    assert moved.content_hash is digest
    assert Skill("x", "y").at("c:1").content_hash == Skill("x", "y").content_hash   # none yet: worked out
