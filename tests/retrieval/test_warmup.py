"""Tests of ``hermes_core/retrieval/warmup.py``: when a retriever builds (first use, a background
warm-up, a change check on a later turn), that a turn never waits for either, and that a thread
outliving the main thread reads as the process exiting."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hermes_core.agent.skill_tool import SkillSelection
from hermes_core.retrieval.retriever import SkillRetriever
from hermes_core.retrieval.warmup import exiting
from hermes_core.testing import FakeClock
from hermes_core.testing.retrieval import SAMPLE_SKILLS, HashingEmbedder, skill_md, write_skill


def test_a_thread_outliving_the_main_thread_reads_as_the_process_exiting() -> None:
    # the warm-up thread is not a daemon: it runs on after the main thread ends, and must then
    # load nothing more (a model loader's thread pools refuse work during shutdown)
    assert not exiting()
    script = ("import threading, time\n"
              "from hermes_core.retrieval.warmup import exiting\n"
              "def late():\n"
              "    time.sleep(0.3)\n"
              "    print('exiting' if exiting() else 'running', flush=True)\n"
              "print('running' if not exiting() else 'exiting', flush=True)\n"
              "threading.Thread(target=late, daemon=False).start()\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
                         check=True).stdout.split()
    assert out == ["running", "exiting"]


def test_warm_up_in_background_builds_index() -> None:
    r = SkillRetriever(skills=SAMPLE_SKILLS, embedders=[HashingEmbedder()])
    t = r.warm_up(background=True)
    assert t is not None
    t.join(timeout=30)
    assert r.embedded_docs == len(SAMPLE_SKILLS)


def _held_at_embedding(release: threading.Event) -> SkillRetriever:
    """A retriever whose skills' embedding waits for ``release`` (a slow model load), every
    lexical answer let through the gate."""

    class Slow(HashingEmbedder):
        def embed_documents(self, texts):  # type: ignore[no-untyped-def]
            assert release.wait(timeout=30)
            return super().embed_documents(texts)

    return SkillRetriever(skills=SAMPLE_SKILLS, embedders=[Slow("test:slow")],
                          gate_thresholds={"lexical": 0.0, "dense": -1.0})


def test_background_warm_up_serves_lexical_layers_while_dense_embeds() -> None:
    release = threading.Event()
    r = _held_at_embedding(release)
    t = r.warm_up(background=True)
    assert t is not None
    res = r.retrieve("extract tables from a pdf")  # not blocked by the embedding
    assert res.names[0] == "pdf-extract" and "dense" not in res.answered
    release.set()
    t.join(timeout=30)
    res = r.retrieve("extract tables from a pdf")
    assert "dense" in res.answered


def _retriever_live_refresh(root: Path, clock: FakeClock, interval: float | None = 2.0) -> SkillRetriever:
    return SkillRetriever(folders=[root], embedders=[HashingEmbedder()], clock=clock,
                          refresh_interval_s=interval)


def test_a_skill_added_mid_chat_is_offered_on_a_later_turn(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "weather", skill_md("weather-forecast", "Weather forecast for a city."))
    clock = FakeClock(100.0)
    r = _retriever_live_refresh(root, clock)
    sel = SkillSelection(r)
    assert [s.name for s in r.skills] == ["weather-forecast"]
    sel.select("hello", [], "hello")               # a turn: checked (in the background), no change
    assert r.wait_warm(10)
    write_skill(root, "invoice", skill_md("invoice-pdf", "Create a PDF invoice for a customer."))
    clock.t += 1.0
    sel.select("make an invoice pdf for ACME", [], "make an invoice pdf for ACME")
    assert r.wait_warm(10)
    assert sel.find("invoice-pdf") is None        # within the interval: not re-checked yet
    clock.t += 2.5
    sel.select("make an invoice pdf for ACME", [], "make an invoice pdf for ACME")  # starts the check
    assert r.wait_warm(10)
    block = sel.select("make an invoice pdf for ACME", [], "make an invoice pdf for ACME")
    assert "invoice-pdf" in block and sel.find("invoice-pdf") is not None


def test_an_edit_and_a_delete_are_seen_and_an_idle_turn_reads_nothing(tmp_path: Path,
                                                                     monkeypatch) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "skills"
    p = write_skill(root, "deploy", skill_md("deploy", "Deploy the service to staging."))
    write_skill(root, "weather", skill_md("weather-forecast", "Weather forecast for a city."))
    clock = FakeClock(100.0)
    r = _retriever_live_refresh(root, clock)
    r.ensure_built()
    reads: list[str] = []
    real_read = Path.read_bytes

    def counting(self: Path) -> bytes:
        reads.append(str(self))
        return real_read(self)

    monkeypatch.setattr(Path, "read_bytes", counting)
    for _ in range(3):                             # idle turns: stat only, nothing re-read
        clock.t += 5
        assert r.refresh_if_changed() is None
    assert reads == []
    st = p.stat()
    p.write_text(skill_md("deploy", "Deploy the service to production."), encoding="utf-8")
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))   # mtime put back (cp -p, rsync -t)
    clock.t += 5
    delta = r.refresh_if_changed()
    assert delta is not None and len(delta.changed) == 1
    assert next(s for s in r.skills if s.name == "deploy").description.endswith("production.")
    (root / "weather" / "SKILL.md").unlink()
    clock.t += 5
    delta = r.refresh_if_changed()
    assert delta is not None and len(delta.removed) == 1
    assert [s.name for s in r.skills] == ["deploy"]


def test_refresh_can_be_turned_off_and_static_skills_are_never_walked(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "a", skill_md("alpha", "First skill."))
    clock = FakeClock(100.0)
    r = _retriever_live_refresh(root, clock, interval=None)
    r.ensure_built()
    write_skill(root, "b", skill_md("beta", "Second skill."))
    clock.t += 100
    assert r.refresh_if_changed() is None and [s.name for s in r.skills] == ["alpha"]
    assert r.refresh() is not None and [s.name for s in r.skills] == ["alpha", "beta"]


def test_the_turn_does_not_wait_for_the_check(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The stat walk runs on a background thread: a slow one (a big skills tree, a network
    filesystem) must not delay the turn that started it."""
    import threading

    from hermes_core.retrieval import retriever as retriever_mod

    root = tmp_path / "skills"
    write_skill(root, "a", skill_md("alpha", "First skill."))
    clock = FakeClock(100.0)
    r = _retriever_live_refresh(root, clock)
    r.ensure_built()
    gate = threading.Event()
    real = retriever_mod.sources_fingerprint

    def slow(*args, **kwargs):  # type: ignore[no-untyped-def]
        assert gate.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(retriever_mod, "sources_fingerprint", slow)
    clock.t += 5
    _, res = r.select("first skill please")        # returns while the check is blocked
    assert res.layer == "L5" and not r.wait_warm(0.05)
    first = r._warm
    clock.t += 5
    r.select("again")                               # a check under way: no second thread
    assert r._warm is first
    gate.set()
    assert r.wait_warm(10)


def test_a_warm_up_that_fails_logs_a_warning_not_a_thread_traceback(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    import logging
    import threading
    crashes: list[Any] = []
    monkeypatch.setattr(threading, "excepthook", crashes.append)  # what prints "Exception in thread"
    r = SkillRetriever(folders=[tmp_path])

    def broken(**kw: Any) -> Any:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(r, "load_catalog", broken)
    with caplog.at_level(logging.WARNING, logger="hermes_core.retrieval.warmup"):
        t = r.warm_up(background=True)
        assert t is not None
        t.join(10)
    assert crashes == []
    assert "warm-up failed" in caplog.text and "Input/output error" in caplog.text


def test_a_child_forked_during_a_background_warm_up_builds_and_retrieves(
        in_forked_child: Callable[[Callable[[], object]], object]) -> None:
    """A preloaded app warmed its skills up on the background thread and the server forked its
    workers meanwhile: the warm-up thread is not in a worker, its refresh lock stayed held."""
    release = threading.Event()
    r = _held_at_embedding(release)
    t = r.warm_up(background=True)
    assert t is not None and r.retrieve("extract tables from a pdf").names[0] == "pdf-extract"

    def child() -> object:
        release.set()   # the child's own embedding goes through
        res = r.retrieve("extract tables from a pdf")
        return res.names[0], "dense" in res.answered

    try:
        assert in_forked_child(child) == ("pdf-extract", True)
    finally:
        release.set()
        t.join(timeout=30)
