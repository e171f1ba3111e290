"""Lone surrogates (a terminal paste decoded with surrogateescape, a broken clipboard) in session
text must not crash recording at session end: SQLite and the content hash need valid UTF-8."""

from __future__ import annotations

from pathlib import Path

from hermes_core.agent.context_engine import ContextEngine
from hermes_core.agent.episodic.store import SessionRecord, normalise_text
from hermes_core.types import Message

NOW = 1_760_000_000.0


def test_record_session_with_lone_surrogates_is_stored(tmp_path: Path) -> None:
    engine = ContextEngine(tmp_path / "s.db", clock=lambda: NOW)
    msgs = [Message(role="user", content="please deploy \udcff the kubernetes cluster with helm"),
            Message(role="assistant", content="Deployed the kubernetes cluster \ud800 with helm.")]
    res = engine.record_session("sess-\udc80", msgs)
    assert res.status == "inserted"
    hits = engine.retrieve("kubernetes helm")
    assert [h.session_id for h in hits] == ["sess-\ufffd"]
    assert "\ufffd" in hits[0].summary and "\udcff" not in hits[0].summary
    assert engine.get("sess-\udc80") is not None      # looked up by the same (scrubbed) id
    assert engine.retrieve("kubernetes", exclude_session="sess-\udc80") == []
    assert engine.forget("sess-\udc80") is True
    engine.close()


def test_add_and_add_many_with_surrogates(tmp_path: Path) -> None:
    engine = ContextEngine(tmp_path / "s.db", clock=lambda: NOW)
    assert engine.add("a", "broken \udcfe paste of a stack trace", "tag\udcff,ok").status == "inserted"
    got = engine.get("a")
    assert got is not None and got.tags == ("tag\ufffd", "ok")
    n = engine.add_many([SessionRecord("b\ud801", "raw \udc00 record about redis", ("x\udc01",), NOW)])
    assert n == 1
    assert [f.session_id for f in engine.retrieve("redis")] == ["b\ufffd"]
    engine.close()


def test_normalise_text_keeps_valid_pairs_and_replaces_lone_halves() -> None:
    assert normalise_text("ok 💥 \ud83d\udca5 \udc80") == "ok 💥 💥 \ufffd"
