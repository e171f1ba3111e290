"""Tests of ``hermes_core/agent/prompt_builder.py``: what is read again, and when.

The dirty-flag cache: nothing is read when nothing changed, one rebuild per real edit (however
it was written: a touch, a same-size edit keeping the mtime, a save by rename, a file emptied
by a writer about to write it), files changing while read, settled folders, and on the wire a
prefix that changes once per edit.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from hermes_core.agent.prompt import files as context_files
from hermes_core.agent.prompt.files import notify_file_changed
from hermes_core.agent.prompt.memory_files import MemoryStore
from hermes_core.agent.prompt_builder import SECTION_SEPARATOR, PromptBuilder
from hermes_core.config import load_settings
from hermes_core.types import Message
from tests.agent.prompt_builder.conftest import a_minute_later, builder, settle, settled_builder, write


def test_no_file_read_when_nothing_changed(marked_home: Path, project: Path) -> None:
    b = builder(marked_home, project)
    b.build("one")
    reads, rebuilds = b.file_reads, b.rebuilds
    assert (reads, rebuilds) == (3, 1)
    for i in range(5):
        b.build(f"turn {i}")
    assert (b.file_reads, b.rebuilds) == (reads, rebuilds)


def test_memory_edit_changes_prefix_rereads_only_that_file(marked_home: Path, project: Path) -> None:
    b = builder(marked_home, project)
    before = b.build("hi")
    reads = b.file_reads
    write(marked_home / "MEMORY.md", "The deploy script moved to tools/ship.py\n")
    after = b.build("hi")
    assert after.prefix_sha256 != before.prefix_sha256
    assert "tools/ship.py" in after.system and "ops/deploy.sh" not in after.system
    assert b.file_reads == reads + 1
    assert b.rebuilds == 2


def test_touch_without_content_change_rereads_but_does_not_rejoin(marked_home: Path, project: Path) -> None:
    b = builder(marked_home, project)
    b.build("hi")
    st = (marked_home / "USER.md").stat()
    os.utime(marked_home / "USER.md", ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    b.build("hi")
    assert b.file_reads == 4 and b.rebuilds == 1


def test_invalidate_rereads_everything(marked_home: Path, project: Path) -> None:
    b = builder(marked_home, project)
    b.build("hi")
    b.invalidate()
    b.build("hi")
    assert b.file_reads == 6 and b.rebuilds == 2


def test_notification_catches_a_write_the_fingerprint_cannot_see(marked_home: Path, project: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A same-size write within one timestamp tick leaves every stat field as it was (simulated
    here: mtime can be put back, ctime cannot): only the notification reveals the change."""
    from hermes_core.agent import prompt_builder

    b = builder(marked_home, project)
    b.build("hi")
    path = marked_home / "USER.md"
    before = context_files.stat_fingerprint(path)
    old = path.read_text(encoding="utf-8")
    new = old.replace("Ada", "Bob")
    assert len(new.encode()) == len(old.encode())
    with open(path, "r+", encoding="utf-8") as fh:
        fh.write(new)
    real = prompt_builder.probe
    monkeypatch.setattr(prompt_builder, "probe",
                        lambda p: (before, True) if Path(p) == path else real(p))
    assert "Ada" in b.build("hi").system  # the stat alone cannot tell
    notify_file_changed(path)
    assert "Bob" in b.build("hi").system


def test_a_same_size_edit_in_the_tick_of_the_last_read_is_seen_without_a_notification(
        marked_home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """USER.md read in the same timestamp tick as its last change, then edited by another program
    (same size, same tick: every stat field as it was): the old text stayed in the prompt until
    the file changed again. A file read that soon is read again until a read finds it settled."""
    from hermes_core.agent import prompt_builder

    path = marked_home / "USER.md"
    now = [path.stat().st_mtime_ns]                         # the read happens in the write's tick
    b = builder(marked_home, project, file_clock=lambda: now[0])
    assert "Ada" in b.build("hi").system
    before = context_files.stat_fingerprint(path)
    old = path.read_text(encoding="utf-8")
    with open(path, "r+", encoding="utf-8") as fh:
        fh.write(old.replace("Ada", "Bob"))
    real = prompt_builder.probe
    monkeypatch.setattr(prompt_builder, "probe",
                        lambda p: (before, True) if Path(p) == path else real(p))
    assert "Bob" in b.build("hi").system
    monkeypatch.undo()
    now[0] += 60_000_000_000                                # a minute later: settled
    b.build("hi")
    reads, prefix = b.file_reads, b.build("hi").system
    for _ in range(3):
        assert b.build("hi").system == prefix               # byte-identical, and no file read
    assert b.file_reads == reads


def test_a_file_stamped_in_the_future_is_not_read_again_every_turn(
        marked_home: Path, project: Path) -> None:
    """A clock set back an hour after the files were written (or files unpacked with a later
    mtime) left them "changed within the last tick" for the whole hour: every turn read and
    scanned each again. The same fingerprint a tick apart settles a file whatever its mtime."""
    path = marked_home / "MEMORY.md"
    now = [path.stat().st_mtime_ns - 3_600_000_000_000]

    def set_back() -> int:
        now[0] += 1_000_000_000                      # a second a turn, an hour behind the files
        return now[0]

    b = builder(marked_home, project, file_clock=set_back)
    prefix = b.build("hi").system
    first = b.file_reads
    assert b.build("hi").system == prefix            # read once more, a tick later: settled
    reads = b.file_reads
    assert reads <= 2 * first
    for _ in range(5):
        assert b.build("hi").system == prefix
    assert b.file_reads == reads
    write(path, "Staging moved to eu-central-1\n")   # a real edit still shows
    assert "eu-central-1" in b.build("hi").system


def test_a_home_stamped_in_the_future_stops_being_searched_for_missing_files(
        hermes_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same for the folder standing for missing SOUL.md, MEMORY.md and USER.md: stamped
    ahead of the clock, it was never settled and the three were looked for every turn. A file
    created later still shows (its name moves the folder)."""
    from hermes_core.agent import prompt_builder

    future = time.time_ns() + 3_600_000_000_000
    os.utime(hermes_home, ns=(future, future))
    now = [time.time_ns()]

    def ticking() -> int:
        now[0] += 1_000_000_000
        return now[0]

    b = PromptBuilder(hermes_home, cwd=tmp_path, file_clock=ticking)
    b.build("hi")
    b.build("hi")
    looked: list[str] = []
    real = prompt_builder.probe
    monkeypatch.setattr(prompt_builder, "probe", lambda p: (looked.append(p), real(p))[1])
    for _ in range(5):
        b.build("hi")
    assert looked == []
    write(hermes_home / "USER.md", "The user is called Ada.\n")
    assert "Ada" in b.build("hi").system


def test_memory_store_write_invalidates_builder(marked_home: Path, project: Path) -> None:
    b = builder(marked_home, project)
    b.build("hi")
    b.memory_store().add("memory", "Backups run nightly at 02:00")
    p = b.build("hi")
    assert "Backups run nightly" in p.system
    assert b.rebuilds == 2 and b.file_reads == 4


def test_fifty_turn_session_prefix_stable_and_one_rebuild_per_edit(marked_home: Path, project: Path) -> None:
    """50 turns through FakeProvider: byte-identical prefix, one rebuild per edit, no idle reads."""
    import json

    from hermes_core.providers.anthropic import AnthropicProvider
    from hermes_core.providers.base import CallOptions
    from hermes_core.testing import FunctionProvider

    write(marked_home / "SOUL.md", "I am Hermes-of-the-test. " + "Be exact and kind. " * 300)
    write(project / "HERMES.md", "Use tabs.\n")
    fake = FunctionProvider(lambda prompt, model: f"reply to {prompt.messages[-1].content}")
    wire = AnthropicProvider()
    model, options = "claude-sonnet-4-5", CallOptions()
    b = builder(marked_home, project)
    history: list[Message] = []
    system_payloads: list[str] = []
    edit_turn = 25
    for turn in range(50):
        if turn == edit_turn:
            write(marked_home / "MEMORY.md", "The user switched the staging region to ap-south-1\n")
        reads, rebuilds = b.file_reads, b.rebuilds
        p = b.build(f"message {turn}", history, session_id="s1", model=model,
                    provider_kind="anthropic")
        done = fake.complete(p, model, None, options)
        request = wire.render(p, model, options)
        system_payloads.append(json.dumps(request["system"], ensure_ascii=False))
        assert request["system"][0]["cache_control"] == {"type": "ephemeral"}
        assert f"message {turn}" == request["messages"][-1]["content"][-1]["text"]
        if turn == 0:
            assert b.rebuilds == 1
        elif turn == edit_turn:
            assert b.rebuilds == rebuilds + 1
            assert b.file_reads == reads + 1
        else:
            assert b.file_reads == reads, f"turn {turn} read a file"
            assert b.rebuilds == rebuilds
        history += [Message("user", f"message {turn}"), Message("assistant", done.text)]
    prefixes = [r.prompt.system for r in fake.requests]
    assert len(prefixes) == 50
    assert len(set(prefixes[:edit_turn])) == 1 and len(set(system_payloads[:edit_turn])) == 1
    assert len(set(prefixes[edit_turn:])) == 1 and len(set(system_payloads[edit_turn:])) == 1
    assert prefixes[0] != prefixes[edit_turn]
    assert "ap-south-1" in prefixes[-1] and "ap-south-1" not in prefixes[0]
    assert fake.requests[-1].prompt.messages[-2] == Message("assistant", "reply to message 48")
    assert b.rebuilds == 2
    assert b.file_reads == 4 + 1


def test_file_changing_during_read_yields_consistent_prompt(marked_home: Path, project: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    path = marked_home / "MEMORY.md"
    real_open = open
    calls = {"n": 0}

    def racing_open(file, *args, **kwargs):
        fh = real_open(file, *args, **kwargs)
        if Path(file) == path and calls["n"] == 0:
            calls["n"] += 1
            tmp = path.with_suffix(".tmp")
            tmp.write_text("Rewritten while being read: new fact\n", encoding="utf-8")
            os.replace(tmp, path)  # new inode: the handle we return still sees the old text
        return fh

    monkeypatch.setattr(context_files, "open", racing_open, raising=False)
    b = builder(marked_home, project)
    p = b.build("hi")
    assert "Rewritten while being read" in p.system and "ops/deploy.sh" not in p.system
    assert b.file_reads == 4  # MEMORY.md read twice
    monkeypatch.undo()
    reads = b.file_reads
    b.build("again")
    assert b.file_reads == reads  # the stored fingerprint is the new file's


def test_file_that_never_settles_is_reread_next_turn(marked_home: Path, project: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    path = marked_home / "USER.md"
    real_open = open
    counter = {"n": 0}

    def churning_open(file, *args, **kwargs):
        fh = real_open(file, *args, **kwargs)
        if Path(file) == path:
            counter["n"] += 1
            path.write_text(f"version {counter['n']}" + "x" * counter["n"], encoding="utf-8")
        return fh

    monkeypatch.setattr(context_files, "open", churning_open, raising=False)
    b = builder(marked_home, project)
    b.build("hi")
    assert any("kept changing" in e.reason for e in b.events)
    monkeypatch.undo()
    p = b.build("hi")
    assert path.read_text(encoding="utf-8") in p.system


def test_concurrent_builds_see_whole_versions(marked_home: Path, project: Path) -> None:
    b = builder(marked_home, project)
    versions = [f"Fact number {i} " + "z" * (i + 1) for i in range(20)]
    seen: list[str] = []
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            seen.append(b.build("q").system)

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    store = b.memory_store()
    for v in versions:
        store.add("memory", v)
    stop.set()
    for t in threads:
        t.join()
    final = b.build("q").system
    assert [v for v in versions if v not in final] == [], final
    for s in seen:
        assert s.startswith("I am Hermes-of-the-test")
        assert s.count(SECTION_SEPARATOR) == 2


def _same_size_edit_keeping_mtime(path: Path, old: str, new: str) -> None:
    st = path.stat()
    text = path.read_text(encoding="utf-8")
    changed = text.replace(old, new)
    assert len(changed.encode()) == len(text.encode())
    with open(path, "r+", encoding="utf-8") as fh:  # in place: same inode
        fh.write(changed)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = path.stat()
    assert (after.st_mtime_ns, after.st_size, after.st_ino) == (st.st_mtime_ns, st.st_size, st.st_ino)


def test_mtime_restoring_same_size_edit_of_memory_is_seen(hermes_home: Path, tmp_path: Path) -> None:
    (hermes_home / "MEMORY.md").write_text("Staging region is eu-west-1\n", encoding="utf-8")
    b = PromptBuilder(hermes_home, cwd=tmp_path)
    assert "eu-west-1" in b.build("hi").system
    _same_size_edit_keeping_mtime(hermes_home / "MEMORY.md", "eu-west-1", "ap-south1")
    system = b.build("hi").system
    assert "ap-south1" in system and "eu-west-1" not in system
    assert b.rebuilds == 2


def test_mtime_restoring_edit_of_project_context_is_seen(hermes_home: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "HERMES.md").write_text("Indent with tabs\n", encoding="utf-8")
    b = PromptBuilder(hermes_home, cwd=repo)
    assert "Indent with tabs" in b.build("hi").system
    _same_size_edit_keeping_mtime(repo / "HERMES.md", "tabs", "4 sp")
    assert "Indent with 4 sp" in b.build("hi").system


def test_idle_turns_still_read_nothing(hermes_home: Path, tmp_path: Path) -> None:
    (hermes_home / "MEMORY.md").write_text("Staging region is eu-west-1\n", encoding="utf-8")
    b = PromptBuilder(hermes_home, cwd=tmp_path, file_clock=a_minute_later)
    b.build("hi")
    reads, rebuilds = b.file_reads, b.rebuilds
    for i in range(20):
        b.build(f"turn {i}")
    assert (b.file_reads, b.rebuilds) == (reads, rebuilds)


def _probes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    from hermes_core.agent.prompt import files

    seen: list[str] = []
    real = files._probe_link   # every probe of a name, a home file's or a project candidate's

    def counting(path: str) -> tuple[Any, bool, bool]:
        seen.append(os.path.basename(path))
        return real(path)
    monkeypatch.setattr(files, "_probe_link", counting)
    return seen


def test_missing_files_of_a_settled_folder_are_not_looked_for_each_turn(
        hermes_home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    b = builder(hermes_home, project)
    b.build("hi")
    settle(hermes_home)
    settle(project)
    seen = _probes(monkeypatch)
    b.build("hi")                      # folders remembered as settled, files looked for once more
    assert {"SOUL.md", "MEMORY.md", "USER.md", "AGENTS.md"} <= set(seen)
    seen.clear()
    b.build("hi")
    b.build("hi")
    assert seen == []                  # one stat per folder stands for every missing name in it


def test_a_file_created_in_a_settled_folder_between_turns_is_seen(
        hermes_home: Path, project: Path) -> None:
    b = settled_builder(hermes_home, project)
    write(hermes_home / "SOUL.md", "I am Hermes-of-the-settled-home.\n")
    write(project / "AGENTS.md", "Run the tests with make check.\n")
    system = b.build("hi").system
    assert "Hermes-of-the-settled-home" in system and "make check" in system
    (project / "AGENTS.md").unlink()
    assert "make check" not in b.build("hi").system


def test_a_dangling_link_whose_target_appears_is_seen_in_a_settled_folder(
        hermes_home: Path, project: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere" / "user-notes.md"
    target.parent.mkdir()
    (hermes_home / "USER.md").symlink_to(target)
    (project / "HERMES.md").symlink_to(target)
    b = settled_builder(hermes_home, project)
    write(target, "The user is called Grace.\n")   # neither folder holding a link changes
    system = b.build("hi").system
    assert "## About the user (USER.md)" in system and "## Project context (HERMES.md)" in system


def test_a_folder_changed_within_the_margin_is_not_trusted(tmp_path: Path) -> None:
    from hermes_core.agent.prompt.files import SETTLED_NS, settled_fingerprint

    folder = tmp_path / "f"
    folder.mkdir()
    mtime = os.stat(folder).st_mtime_ns
    fp, settled = settled_fingerprint(str(folder), mtime + SETTLED_NS // 2)
    assert fp is not None and not settled
    assert settled_fingerprint(str(folder), mtime + 2 * SETTLED_NS + 1)[1] == (
        mtime % 1_000_000_000 != 0)                  # whole-second times wait longer
    os.utime(folder, ns=(10**18, 10**18))           # a whole second: a coarse filesystem
    assert not settled_fingerprint(str(folder), 10**18 + 1_500_000_000)[1]
    assert settled_fingerprint(str(folder), 10**18 + 2_000_000_001)[1]
    assert settled_fingerprint(str(tmp_path / "gone"), 10**18) == (None, False)


@pytest.mark.parametrize("name", ["SOUL.md", "MEMORY.md", "USER.md", "HERMES.md"])
def test_a_file_emptied_by_a_writer_about_to_write_it_keeps_its_text_for_that_turn(
        marked_home: Path, project: Path, name: str) -> None:
    """``open(path, "w")`` (an in-place save, a script's rewrite) empties the file before writing
    it: a turn built in between sent a prompt without the file (SOUL.md: the default identity),
    and the next turn put it back: two rebuilds, two cache writes, one turn with the wrong
    prefix. An empty file stamped within a tick keeps the text it had that turn."""
    write(project / "HERMES.md", "Project rule: run `make check` before committing.\n")
    path = (project if name == "HERMES.md" else marked_home) / name
    b = builder(marked_home, project / "src" / "pkg", file_clock=time.time_ns)
    old = path.read_text(encoding="utf-8").strip()
    for _ in range(3):
        b.build("hi")
    time.sleep(0.25)
    b.build("hi")
    rebuilds = b.rebuilds
    with open(path, "w", encoding="utf-8") as fh:
        system = b.build("hi").system                       # the file is empty, written a moment ago
        fh.write(old.replace("e", "E") + "\n")
    assert old in system and b.rebuilds == rebuilds
    assert old.replace("e", "E") in b.build("hi").system
    assert b.rebuilds == rebuilds + 1


def test_a_file_emptied_for_good_is_dropped_once_it_has_settled(
        marked_home: Path, project: Path) -> None:
    path = marked_home / "MEMORY.md"
    now = [time.time_ns()]
    b = builder(marked_home, project, file_clock=lambda: now[0])
    assert "ops/deploy.sh" in b.build("hi").system
    path.write_text("", encoding="utf-8")
    now[0] = path.stat().st_mtime_ns                        # in the tick of the truncation
    assert "ops/deploy.sh" in b.build("hi").system
    now[0] += 60_000_000_000                                # a minute on: it is empty for good
    assert "Memory (MEMORY.md)" not in b.build("hi").system
    assert [e.reason for e in b.events if e.file == str(path)] == ["file is empty; skipped"]


def test_a_file_read_again_unchanged_or_grown_at_its_end_is_not_scanned_again(
        marked_home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The injection scan is most of a changed file's cost (1 MB MEMORY.md: ~2 s a change, its
    20,000-token head and tail scanned). A file rewritten with the same bytes (a sync tool, a
    checkout) was scanned whole again, and one grown at its end scanned its unchanged head."""
    from hermes_core.injection import memo as injection_memo
    scanned: list[str] = []
    real = injection_memo.guard_many

    def counting(texts: list[str], **kw: Any) -> Any:
        scanned.extend(texts)
        return real(texts, **kw)
    monkeypatch.setattr(injection_memo, "guard_many", counting)
    path = marked_home / "MEMORY.md"
    path.write_text("".join(f"scan-memo note {i}: the build server is ci-{i}\n§\n"
                            for i in range(400)), encoding="utf-8")
    settings = load_settings({"prompt": {"file_token_budget": 500}}, env={})
    b = builder(marked_home, project, settings=settings)
    assert "scan-memo note 0" in b.build("hi").system
    assert sum("scan-memo" in t for t in scanned) == 2          # its head and its tail
    scanned.clear()
    reads, rebuilds = b.file_reads, b.rebuilds
    path.write_bytes(path.read_bytes())
    b.build("hi")
    assert (b.file_reads, b.rebuilds, scanned) == (reads + 1, rebuilds, [])
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("scan-memo note new: the build server moved\n")
    assert "the build server moved" in b.build("hi").system
    assert len(scanned) == 1 and "the build server moved" in scanned[0]   # the tail alone


def _marks(body: dict[str, Any]) -> list[str]:
    """Where an Anthropic request's cache_control breakpoints sit: "system", "tools", "m<i>"."""
    out = ["system" for b in body.get("system") or () if "cache_control" in b]
    out += ["tools" for t in body.get("tools") or () if "cache_control" in t]
    for i, m in enumerate(body["messages"]):
        blocks = m["content"] if isinstance(m["content"], list) else ()
        out += [f"m{i}" for b in blocks if "cache_control" in b]
    return out


def _bare(messages: list[dict[str, Any]]) -> list[Any]:
    """Messages without their breakpoints (which move on as the conversation grows)."""
    return [{**m, "content": [{k: v for k, v in b.items() if k != "cache_control"} for b in
                              m["content"]] if isinstance(m["content"], list) else m["content"]}
            for m in messages]


def _system(kind: str, body: dict[str, Any]) -> str:
    if kind == "anthropic":
        return "".join(b["text"] for b in body["system"])
    return str(body["messages"][0]["content"])


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
def test_on_the_wire_the_prefix_changes_once_per_real_edit_and_only_grows_between(
        kind: str, marked_home: Path, tmp_path: Path, respx_mock: Any) -> None:
    """Eight turns through the Agent and the official SDK, MEMORY.md edited in between as
    editors do (a save by rename, the agent's own entry, a rewrite with the same bytes), then
    a second process on the same home: the system bytes change on each content edit and on
    nothing else, each request's history is the previous request's plus one exchange, and
    Anthropic's breakpoints (four at most) sit on the system prompt and the replies before."""
    import json

    from tests.agent.conftest import URLS, make_agent, wire_response

    write(marked_home / "SOUL.md", "You are the wire test's assistant. " * 300)  # cacheable size
    bodies: list[dict[str, Any]] = []

    def answer(request: Any) -> Any:
        bodies.append(json.loads(request.content))
        return wire_response(kind, False, text=f"answer {len(bodies)}")
    respx_mock.post(URLS[kind]).mock(side_effect=answer)
    memory = marked_home / "MEMORY.md"

    def save_by_rename() -> None:
        tmp = memory.with_name(".MEMORY.md.swp")
        tmp.write_text(memory.read_text(encoding="utf-8") + "§\nStaging moved to eu-north-1\n",
                       encoding="utf-8")
        os.replace(tmp, memory)

    edits = {2: save_by_rename, 4: lambda: MemoryStore(marked_home).add("memory", "Prod is ap-1"),
             6: lambda: memory.write_bytes(memory.read_bytes())}
    agent = make_agent(marked_home, kind)
    for turn in range(8):
        if turn in edits:
            edits[turn]()
            time.sleep(0.15)                                 # past the write's timestamp tick
        agent.chat(f"question {turn}")
    rebuilds = agent.builder.rebuilds
    second = make_agent(marked_home, kind)
    second.chat("question 0")
    systems = [_system(kind, b) for b in bodies]
    assert [systems.index(s) for s in systems] == [0, 0, 2, 2, 4, 4, 4, 4, 4]
    assert "eu-north-1" in systems[2] and "Prod is ap-1" in systems[4] and rebuilds == 3
    lead = 1 if kind == "openai" else 0                      # OpenAI's system message
    for before, after in pairwise(bodies[:-1]):          # the second agent starts afresh
        assert after.get("tools") == before.get("tools")
        history = after["messages"][lead: len(before["messages"]) - 1]
        assert _bare(history) == _bare(before["messages"][lead:-1])   # the turn before, as it was
    if kind == "anthropic":
        assert [_marks(b) for b in bodies[:4]] == [
            ["system"], ["system", "m1"], ["system", "m1", "m3"], ["system", "m3", "m5"]]
        assert all(len(_marks(b)) <= 4 and _marks(b)[0] == "system" for b in bodies)
    else:
        keys = [b.get("prompt_cache_key") for b in bodies]
        assert keys[0] and [keys.index(k) for k in keys] == [0, 0, 2, 2, 4, 4, 4, 4, 4]


def test_the_last_memory_entry_removed_by_the_agent_is_gone_the_next_turn(
        marked_home: Path, project: Path) -> None:
    """Removing the last entries leaves MEMORY.md empty, written a moment ago, and the store says
    so (``notify_file_changed``): that empty file is the agent's own finished write, not a writer
    about to write, so the next turn's prompt must not hold the removed entries."""
    b = builder(marked_home, project, file_clock=time.time_ns)
    assert "ops/deploy.sh" in b.build("hi").system
    time.sleep(0.25)
    b.build("hi")
    store = b.memory_store()
    store.remove("memory", "ops/deploy.sh")
    store.remove("memory", "eu-west-1")
    system = b.build("hi").system
    assert "ops/deploy.sh" not in system and "eu-west-1" not in system


@pytest.mark.parametrize("step_ns", [3_000_000_000, -3_600_000_000_000],
                         ids=["a turn every three seconds", "the clock set back an hour a turn"])
def test_a_file_emptied_again_at_every_turn_is_not_held_past_a_tick(
        marked_home: Path, project: Path, step_ns: int) -> None:
    """A file emptied again and again (a script truncating it in a loop) is stamped within a tick
    at every look, each time with another fingerprint: it was held at every turn, so the text it
    had once was sent for ever. A hold lasts a tick of the clock from its first turn at most, and
    a clock gone back ends it."""
    path = marked_home / "MEMORY.md"
    now = [time.time_ns()]
    b = builder(marked_home, project, file_clock=lambda: now[0])
    assert "ops/deploy.sh" in b.build("hi").system
    held = []
    for _turn in range(4):
        now[0] += step_ns
        os.truncate(path, 0)
        os.utime(path, ns=(now[0] - 1_000_000, now[0] - 1_000_000))   # emptied a moment ago
        held.append("ops/deploy.sh" in b.build("hi").system)
    assert held == [True, False, False, False]


def test_a_child_forked_while_a_thread_was_building_the_prompt_builds_its_own(
        marked_home: Path, project: Path,
        in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    """The builder's lock is held across its files' reads: a turn of the parent's under way when
    a server forked its workers hung each worker's first turn."""
    b = builder(marked_home, project)
    system = b.build("hi").system
    with held_by_a_thread(b._lock):
        assert in_forked_child(lambda: b.build("hello").system) == system


def test_a_child_forked_while_a_thread_was_telling_watchers_of_a_write_builds(
        marked_home: Path, project: Path,
        in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    system = builder(marked_home, project).build("hi").system
    with held_by_a_thread(context_files._REGISTRY.lock):
        assert in_forked_child(lambda: builder(marked_home, project).build("hi").system) == system
