"""Tests of ``hermes_core/agent/prompt_builder.py``: the stable prefix.

SOUL, MEMORY, USER and project context in their fixed order and nothing per turn; the project
file nearest the working folder (and which links it may follow); files that are not files or
folders deleted under the builder; the cut of each file in another model's encoding.
"""

from __future__ import annotations

import logging
import os
import stat
from dataclasses import replace
from pathlib import Path

import pytest

from hermes_core.agent.prompt_builder import DEFAULT_IDENTITY, SECTION_SEPARATOR, PromptBuilder
from hermes_core.config import load_settings
from hermes_core.tokens import count_tokens
from hermes_core.types import Message
from tests.agent.prompt_builder.conftest import (
    a_minute_later,
    builder,
    clock,
    conversation,
    settled_builder,
    write,
)


def test_sections_in_fixed_order_joined_by_separator(marked_home: Path, project: Path) -> None:
    write(project / "HERMES.md", "Project rule: run `make check` before committing.\n")
    b = builder(marked_home, project)
    system = b.build("hi").system
    parts = system.split(SECTION_SEPARATOR)
    assert len(parts) == 4
    assert parts[0] == "I am Hermes-of-the-test, a careful assistant."
    assert "ops/deploy.sh" in parts[1] and "Staging is eu-west-1" in parts[1]
    assert "Ada" in parts[2]
    assert "make check" in parts[3] and "HERMES.md" in parts[3]
    assert system.index("Hermes-of-the-test") < system.index("deploy") < system.index("Ada") \
        < system.index("make check")


def test_default_identity_when_soul_missing(hermes_home: Path, project: Path) -> None:
    b = builder(hermes_home, project)
    p = b.build("hi")
    assert p.system == DEFAULT_IDENTITY
    assert b.events == ()


def test_empty_soul_falls_back_with_warning(hermes_home: Path, project: Path) -> None:
    write(hermes_home / "SOUL.md", "  \n\n")
    b = builder(hermes_home, project)
    assert b.build("hi").system == DEFAULT_IDENTITY
    assert any("SOUL.md" in e.file and "empty" in e.reason for e in b.events)


def test_system_holds_no_date_session_or_model(marked_home: Path, project: Path) -> None:
    b = builder(marked_home, project)
    p = b.build("hi", session_id="sess-42", model="claude-sonnet-4-5", provider_kind="anthropic")
    for needle in ("2031", "07-04", "Friday", "sess-42", "claude-sonnet"):
        assert needle not in p.system
        assert needle in p.context
    assert p.context.startswith("Current date and time: 2031-07-04 12:30 UTC (Friday)")


def test_same_prefix_for_different_messages_models_and_providers(marked_home: Path, project: Path) -> None:
    b = builder(marked_home, project)
    a = b.build("what is the weather?", model="gpt-4o")
    c = b.build("写一首诗", history=conversation(3), session_id="x", model="claude-opus-4-1",
                provider_kind="anthropic")
    assert a.system == c.system
    assert a.prefix_sha256 == c.prefix_sha256
    assert a.context != c.context


def test_messages_are_history_plus_user_message(marked_home: Path, project: Path) -> None:
    hist = conversation(2)
    p = builder(marked_home, project).build("next", hist)
    assert p.messages == (*hist, Message("user", "next"))


def test_token_estimates_per_section(marked_home: Path, project: Path) -> None:
    write(project / "AGENTS.md", "Agents file.\n")
    p = builder(marked_home, project).build("hello there", conversation(2))
    t = p.tokens
    assert t["system"] == count_tokens(p.system)
    assert t["context"] == count_tokens(p.context)
    assert t["message"] == count_tokens("hello there")
    assert t["history"] == sum(count_tokens(m.content) for m in conversation(2))
    assert t["soul"] > 0 and t["memory"] > 0 and t["user"] > 0 and t["project"] > 0
    assert t["total"] == t["system"] + t["context"] + t["history"] + t["message"]


def test_hermes_md_nearest_to_cwd_wins_up_to_git_root(marked_home: Path, project: Path) -> None:
    write(project / "HERMES.md", "root level\n")
    write(project / "src" / ".hermes.md", "src level\n")
    write(project.parent / "HERMES.md", "outside the repo\n")
    system = builder(marked_home, project / "src" / "pkg").build("hi").system
    assert "src level" in system
    assert "root level" not in system and "outside the repo" not in system


def test_agents_md_only_when_no_hermes_md(marked_home: Path, project: Path) -> None:
    write(project / "src" / "pkg" / "AGENTS.md", "agents near\n")
    write(project / "HERMES.md", "hermes far\n")
    system = builder(marked_home, project / "src" / "pkg").build("hi").system
    assert "hermes far" in system and "agents near" not in system
    (project / "HERMES.md").unlink()
    b = builder(marked_home, project / "src" / "pkg")
    assert "agents near" in b.build("hi").system
    assert "AGENTS.md" in b.build("hi").system


def test_no_git_root_searches_only_cwd(marked_home: Path, tmp_path: Path) -> None:
    cwd = tmp_path / "loose" / "dir"
    cwd.mkdir(parents=True)
    write(tmp_path / "loose" / "HERMES.md", "parent file\n")
    assert "parent file" not in builder(marked_home, cwd).build("hi").system


def test_project_file_appearing_and_disappearing(marked_home: Path, project: Path) -> None:
    b = builder(marked_home, project)
    first = b.build("hi").system
    write(project / "AGENTS.md", "new agents file\n")
    assert "new agents file" in b.build("hi").system
    write(project / "HERMES.md", "hermes wins now\n")
    second = b.build("hi").system
    assert "hermes wins now" in second and "new agents file" not in second
    (project / "HERMES.md").unlink()
    (project / "AGENTS.md").unlink()
    assert b.build("hi").system == first
    assert b.rebuilds == 4


def test_the_system_prompt_is_the_same_bytes_whatever_each_turn_recalls_and_after_a_restart(
        marked_home: Path, project: Path, tmp_path: Path) -> None:
    """Provider prompt caching matches an exact prefix: recalled sessions, a touched but unchanged
    file and a new process must leave the system prompt's bytes as they were."""
    from hermes_core.agent.context_engine import ContextEngine

    write(project / "HERMES.md", "Use tabs.\n")
    with ContextEngine(tmp_path / "sessions.db", clock=lambda: 1_800_000_000.0) as engine:
        engine.add("a", "Chose PostgreSQL for the billing service", created_at=1_799_000_000.0)
        engine.add("b", "部署了 kubernetes 集群并修好了 DNS", created_at=1_799_500_000.0)
        b = builder(marked_home, project / "src" / "pkg", memory_source=engine)
        first = b.build("which database did we choose for billing?", session_id="s1")
        second = b.build("kubernetes 集群的 DNS 怎么修的？", session_id="s1")
        assert "PostgreSQL" in first.context and "kubernetes" in second.context
        memory = marked_home / "MEMORY.md"
        st = memory.stat()
        os.utime(memory, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))   # touched only
        third = b.build("anything else?", session_id="s1")
        again = builder(marked_home, project / "src" / "pkg", memory_source=engine).build(
            "a new process", session_id="s2")
    systems = {p.system.encode("utf-8") for p in (first, second, third, again)}
    assert len(systems) == 1
    assert b.rebuilds == 1


def test_a_project_file_linking_to_nothing_is_a_warning_not_a_silent_fallback(
        hermes_home: Path, project: Path, tmp_path: Path) -> None:
    """HERMES.md linked into a shared rules repo that moved: the project's rules left the prompt
    (or AGENTS.md took their place) without a word."""
    gone = tmp_path / "shared-rules" / "HERMES.md"
    (project / "HERMES.md").symlink_to(gone)
    b = settled_builder(hermes_home, project)
    assert "## Project context" not in b.build("hi").system
    warned = [e for e in b.events if e.file == str(project / "HERMES.md")]
    assert len(warned) == 1 and f"a link to {gone}, which does not exist" in warned[0].reason
    write(project / "AGENTS.md", "Run the tests with make check.\n")
    system = b.build("hi").system
    assert "make check" in system                       # the fallback is used, and said why
    assert [e.file for e in b.events] == [str(project / "HERMES.md")]
    write(gone, "Use tabs.\n")
    system = b.build("hi").system
    assert "Use tabs." in system and "make check" not in system
    assert not [e for e in b.events if e.kind == "warning"]


def test_a_cloned_project_file_linking_out_of_its_repository_is_not_read(
        hermes_home: Path, project: Path, tmp_path: Path) -> None:
    """A repository's HERMES.md committed as a link to ../../.aws/credentials put the user's keys
    in the system prompt sent to the provider; the file it leads to is skipped, and said why."""
    secrets = tmp_path / ".aws" / "credentials"
    write(secrets, "[default]\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n")
    (project / "HERMES.md").symlink_to(os.path.relpath(secrets, project))
    write(project / "AGENTS.md", "Run the tests with make check.\n")
    b = settled_builder(hermes_home, project)
    system = b.build("hi").system
    assert "EXAMPLEKEY" not in system
    assert "make check" in system          # the next candidate serves, as for a dangling link
    warned = [e for e in b.events if e.file == str(project / "HERMES.md")]
    assert len(warned) == 1 and "outside the repository" in warned[0].reason
    assert str(secrets) in warned[0].reason


def test_a_project_file_may_link_inside_its_repository_or_to_markdown_outside(
        hermes_home: Path, project: Path, tmp_path: Path) -> None:
    write(project / "docs" / "agent-rules.txt", "Use tabs.\n")
    (project / "HERMES.md").symlink_to("docs/agent-rules.txt")
    b = builder(hermes_home, project / "src")
    assert "Use tabs." in b.build("hi").system
    (project / "HERMES.md").unlink()
    write(tmp_path / "shared" / "rules.md", "Prefer small commits.\n")
    (project / "HERMES.md").symlink_to(tmp_path / "shared" / "rules.md")
    b.invalidate()
    assert "Prefer small commits." in b.build("hi").system
    assert not [e for e in b.events if e.kind == "warning"]


THAI_LINE = "ผู้ใช้ชอบกาแฟดำและทำงานที่สำนักงานกรุงเทพทุกวันจันทร์\n"


def thai_builder(home: Path, tmp_path: Path) -> PromptBuilder:
    write(home / "MEMORY.md", THAI_LINE * 200)
    settings = load_settings({"home": str(home), "prompt": {"file_token_budget": 300,
                                                            "injection_scan": False}}, env={})
    return PromptBuilder(home, settings, cwd=tmp_path, clock=clock)


def test_a_build_in_gpt4s_encoding_cuts_the_files_and_counts_in_it(hermes_home: Path,
                                                                    tmp_path: Path) -> None:
    builder = thai_builder(hermes_home, tmp_path)
    wide = builder.build("hi")
    narrow = builder.build("hi", encoding="cl100k_base")
    assert wide.tokens["memory"] <= 340 < count_tokens(wide.system, "cl100k_base")
    assert narrow.tokens["memory"] <= 340 and narrow.tokens["system"] == count_tokens(
        narrow.system, "cl100k_base")
    assert narrow.turn is not None and narrow.turn.encoding == "cl100k_base"
    assert {s.key: s.tokens for s in builder.sources("cl100k_base")}["memory"] == narrow.tokens["memory"]
    # each encoding's prefix is the same bytes every turn (its cache keeps hitting)
    assert builder.build("again").system == wide.system
    assert builder.build("again", encoding="cl100k_base").system == narrow.system


def test_recut_gives_the_prefix_a_build_in_that_encoding_gives(hermes_home: Path,
                                                               tmp_path: Path) -> None:
    builder = thai_builder(hermes_home, tmp_path)
    built = builder.build("hi")
    recut = builder.recut(built, "cl100k_base")
    assert recut.system == builder.build("hi", encoding="cl100k_base").system
    assert recut.turn is not None and recut.turn.encoding == "cl100k_base"
    assert builder.recut(recut, "cl100k_base") is recut
    hooked = builder.recut(replace(built, system="a hook's own system prompt"), "cl100k_base")
    assert hooked.system == "a hook's own system prompt"


def test_an_edited_file_is_cut_again_in_each_encoding(hermes_home: Path, tmp_path: Path) -> None:
    builder = thai_builder(hermes_home, tmp_path)
    before = builder.build("hi", encoding="cl100k_base").system
    lines = [f"{i} {THAI_LINE}" for i in range(200)]
    write(hermes_home / "MEMORY.md", "".join(lines))
    builder.invalidate(hermes_home / "MEMORY.md")
    after = builder.build("hi", encoding="cl100k_base").system
    assert after != before and "0 ผู้ใช้" in after


def _not_a_file(path: Path, kind: str) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:   # a character device, as /dev/null is (making one needs root)
        try:
            os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        except PermissionError:
            pytest.skip("making a device file needs root")


@pytest.mark.parametrize("kind", ["fifo", "directory", "device"])
def test_a_project_file_that_is_not_a_file_is_named_in_one_warning(
        marked_home: Path, project: Path, kind: str, caplog: pytest.LogCaptureFixture) -> None:
    """A HERMES.md that is a FIFO, a folder or a device is passed over (never opened: a FIFO
    would block the turn) for the next candidate, and said once, naming it: it was passed over
    without a word, so a user whose rules were not loaded had nothing to go on."""
    odd = project / "src" / "HERMES.md"
    _not_a_file(odd, kind)
    write(project / "AGENTS.md", "agents rules\n")
    b = builder(marked_home, project / "src" / "pkg")
    with caplog.at_level(logging.WARNING, logger="hermes_core.prompt"):
        first = b.build("hi").system
        assert b.build("again").system == first
    assert "agents rules" in first and "Staging is eu-west-1" in first
    said = [r.getMessage() for r in caplog.records if str(odd) in r.getMessage()]
    assert len(said) == 1, said
    assert ("is a directory" if kind == "directory" else "not a regular file") in said[0]
    assert [str(e) for e in b.events if e.file == str(odd)] == said


def test_a_project_file_turned_into_a_fifo_mid_session_is_said_and_the_turn_goes_on(
        marked_home: Path, project: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = project / "HERMES.md"
    write(path, "project rules\n")
    b = builder(marked_home, project)
    assert "project rules" in b.build("hi").system
    path.unlink()
    os.mkfifo(path)
    with caplog.at_level(logging.WARNING, logger="hermes_core.prompt"):
        system = b.build("again").system
        b.build("and again")
    assert "project rules" not in system and "Staging is eu-west-1" in system
    assert len([r for r in caplog.records if str(path) in r.getMessage()]) == 1


def test_a_builder_made_in_a_deleted_folder_warns_once_and_builds_the_rest(
        marked_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """``hermes-core chat`` started in a folder another shell removed: ``Path.cwd()`` raised
    FileNotFoundError out of the constructor, a traceback instead of a chat."""
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    with caplog.at_level(logging.WARNING, logger="hermes_core.prompt"):
        b = PromptBuilder(marked_home, clock=clock, file_clock=a_minute_later)
        system = b.build("hi").system
        b.build("again")
    assert "Hermes-of-the-test" in system and "Staging is eu-west-1" in system
    said = [r.getMessage() for r in caplog.records if "no longer exists" in r.getMessage()]
    assert len(said) == 1 and "project context" in said[0]


def test_a_working_folder_deleted_under_the_builder_is_said_once(
        marked_home: Path, project: Path, caplog: pytest.LogCaptureFixture) -> None:
    cwd = project / "src" / "pkg"
    write(cwd / "HERMES.md", "package rules\n")
    b = builder(marked_home, cwd)
    assert "package rules" in b.build("hi").system
    (cwd / "HERMES.md").unlink()
    cwd.rmdir()
    with caplog.at_level(logging.WARNING, logger="hermes_core.prompt"):
        system = b.build("again").system
        b.build("and again")
    assert "package rules" not in system and "Staging is eu-west-1" in system
    said = [r.getMessage() for r in caplog.records if str(cwd) in r.getMessage()]
    assert len(said) == 1 and "no longer exists" in said[0]
