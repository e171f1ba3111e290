"""A skill written, edited or deleted during a chat is seen on a later turn without a restart:
select() re-checks the skill files by stat (throttled, on a background thread so the turn never
waits), and refreshes only when they changed."""

from __future__ import annotations

import os
from pathlib import Path

from retrieval_fixtures import HashingEmbedder, skill_md, write_skill

from hermes_core.agent.skill_tool import SkillSelection
from hermes_core.retrieval.retriever import SkillRetriever
from hermes_core.retrieval.skills import sources_fingerprint


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def _retriever(root: Path, clock: Clock, interval: float | None = 2.0) -> SkillRetriever:
    return SkillRetriever(folders=[root], embedders=[HashingEmbedder()], clock=clock,
                          refresh_interval_s=interval)


def test_a_skill_added_mid_chat_is_offered_on_a_later_turn(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "weather", skill_md("weather-forecast", "Weather forecast for a city."))
    clock = Clock()
    r = _retriever(root, clock)
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
    clock = Clock()
    r = _retriever(root, clock)
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
    clock = Clock()
    r = _retriever(root, clock, interval=None)
    r.ensure_built()
    write_skill(root, "b", skill_md("beta", "Second skill."))
    clock.t += 100
    assert r.refresh_if_changed() is None and [s.name for s in r.skills] == ["alpha"]
    assert r.refresh() is not None and [s.name for s in r.skills] == ["alpha", "beta"]


def test_fingerprint_changes_with_catalog_files_and_tolerates_missing_ones(tmp_path: Path) -> None:
    cat = tmp_path / "extra.jsonl"
    missing = tmp_path / "gone.jsonl"
    before = sources_fingerprint([tmp_path / "nowhere"], [cat, missing])
    cat.write_text('{"name": "x", "description": "y"}\n', encoding="utf-8")
    after = sources_fingerprint([tmp_path / "nowhere"], [cat, missing])
    assert before != after and after == sources_fingerprint([tmp_path / "nowhere"], [cat, missing])


def test_disabled_retrieval_lets_skill_view_find_a_skill_added_mid_chat(tmp_path: Path,
                                                                        monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from hermes_core.config import load_settings
    monkeypatch.setenv("HERMES_DISABLE_SKILL_RETRIEVAL", "1")
    root = tmp_path / "skills"
    write_skill(root, "a", skill_md("alpha", "First skill."))
    r = SkillRetriever(load_settings({}).skill_utils, folders=[root], embedders=[HashingEmbedder()],
                       clock=Clock())
    sel = SkillSelection(r)
    assert "alpha" in sel.select("hi", [], "hi")
    write_skill(root, "b", skill_md("beta", "Second skill."))
    assert "beta" in sel.select("hi", [], "hi")      # the full list is read every turn
    found = sel.find("beta")
    assert found is not None and found.name == "beta"
    assert not r._built                               # no index (and no model) was built


def test_the_turn_does_not_wait_for_the_check(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The stat walk runs on a background thread: a slow one (a big skills tree, a network
    filesystem) must not delay the turn that started it."""
    import threading

    from hermes_core.retrieval import retriever as retriever_mod

    root = tmp_path / "skills"
    write_skill(root, "a", skill_md("alpha", "First skill."))
    clock = Clock()
    r = _retriever(root, clock)
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
