"""What a name asked for answered as: learned from replies, kept per provider, bounded."""

from __future__ import annotations

from hermes_core.agent.served_as import ServedAs


def test_a_name_never_answered_for_is_itself() -> None:
    assert ServedAs().get("azure", "prod-chat") == "prod-chat"


def test_a_reply_teaches_what_its_name_runs_per_provider_and_the_latest_wins() -> None:
    served = ServedAs()
    served.learn("azure", "prod-chat", "gpt-4o-2024-05-13")
    served.learn("azure", "prod-chat", "gpt-4o-2024-08-06")   # the deployment was moved
    assert served.get("azure", "prod-chat") == "gpt-4o-2024-08-06"
    assert served.get("azure-eu", "prod-chat") == "prod-chat"


def test_past_its_limit_the_name_learned_longest_ago_is_forgotten_first() -> None:
    served = ServedAs(limit=2)
    served.learn("p", "a", "A")
    served.learn("p", "b", "B")
    served.learn("p", "a", "A2")   # learned again: now the most recent
    served.learn("p", "c", "C")
    assert [served.get("p", n) for n in ("a", "b", "c")] == ["A2", "b", "C"]
