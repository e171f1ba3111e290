"""The trigger automaton returns exactly the hits of trying every rule in turn."""

from __future__ import annotations

import random

from hermes_core.retrieval.triggers import TriggerHit, TriggerIndex, _rule, _subsequence_at, normalize


def rule_by_rule(triggers: dict[str, list[str]], query: str) -> list[TriggerHit]:
    """Every rule tried against the query, best tier per rule (the definition)."""
    q = normalize(query)
    hits: list[TriggerHit] = []
    for skill in sorted(triggers):
        for t in triggers[skill]:
            r = _rule(skill, t)
            if r is None:
                continue
            pos = r.find(q)
            if pos != -1:
                hits.append(TriggerHit(r.skill, r.trigger, 1, pos, len(r.norm)))
                continue
            if r.cjk_subseq:
                pos = _subsequence_at(q, r.norm)
                if pos != -1:
                    hits.append(TriggerHit(r.skill, r.trigger, 2, pos, len(r.norm)))
                    continue
            if r.fuzzy is not None:
                m = r.fuzzy.search(q)
                if m is not None:
                    hits.append(TriggerHit(r.skill, r.trigger, 3, m.start(), len(r.norm)))
    hits.sort(key=TriggerHit.sort_key)
    return hits


PIECES = ["git", "commit", "pr", "print", "send", "mail", "email", "a", "pdf", "转换", "查", "违章",
          "记录", "一下", "预约", "会议室", "发送", "邮件", " ", " ", "-", "."]


def test_automaton_hits_equal_rule_by_rule_hits() -> None:
    rng = random.Random(4)
    triggers = {
        "git": ["git", "git commit"], "pr": ["pr"], "mail": ["send mail", "发送 邮件"],
        "pdf": ["PDF转换", "pdf"], "fines": ["查违章", "查 违章 记录"], "room": ["预约 会议室"],
    }
    idx = TriggerIndex(triggers)
    tiers = set()
    for _ in range(400):
        q = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 12)))
        got = idx.matches(q)
        assert got == rule_by_rule(triggers, q)
        tiers |= {h.tier for h in got}
    assert tiers == {1, 2, 3}   # the random queries exercised every tier


def test_word_boundaries_are_checked_after_the_match() -> None:
    idx = TriggerIndex({"git": ["git"], "pr": ["pr"]})
    assert idx.match("what digit is it") is None
    assert idx.match("print this") is None
    hit = idx.match("print the pr please")
    assert hit is not None and (hit.skill, hit.position) == ("pr", 10)
    hit = idx.match("git")
    assert hit is not None and hit.position == 0


def test_first_valid_occurrence_is_the_position() -> None:
    hit = TriggerIndex({"git": ["git"]}).match("digit, then git")
    assert hit is not None and hit.position == 12


def test_empty_index_and_empty_query() -> None:
    assert TriggerIndex().match("anything") is None
    assert TriggerIndex({"a": ["x"]}).match("") is None
    assert len(TriggerIndex({"a": ["  "]})) == 0
