"""The record's own normalising: tags, ids and the text its content hash is computed over."""

from __future__ import annotations

from hermes_core.agent.episodic.records import memory_id_for, normalise_tags, normalise_text


def test_normalise_tags() -> None:
    assert normalise_tags(" a, b ,,A，c、d ") == ("a", "b", "c", "d")
    assert normalise_tags(["x,y", "z"]) == ("x", "y", "z")
    assert len(normalise_tags(",".join(f"t{i}" for i in range(40)))) == 16


def test_memory_ids_are_deterministic() -> None:
    # pinned: the same id on every machine and after every restart
    assert memory_id_for("s1") == "d2f709a4e6582b10"
    assert memory_id_for("会话-1") == "791d9abdcc0425a2"


def test_normalise_text_keeps_valid_pairs_and_replaces_lone_halves() -> None:
    assert normalise_text("ok 💥 \ud83d\udca5 \udc80") == "ok 💥 💥 \ufffd"
