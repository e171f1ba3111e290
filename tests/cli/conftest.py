"""Fixtures for the command tests: a home whose stores hold a key configured only afterwards; and
the offline agent, the terminal stdin and the typed lines the REPL's test files share."""

from __future__ import annotations

import io
import itertools
from collections.abc import Callable
from pathlib import Path

import pytest

from hermes_core.agent.agent import Agent
from hermes_core.testing.retrieval import skill_md, write_skill

_SERIAL = itertools.count()


def home_with_a_key_stored_before_it_was_configured(tmp_path: Path, secret: str) -> Path:
    """A home whose sessions.db and usage.sqlite3 hold ``secret`` in clear (recorded while nothing
    knew it was a key), and whose config now names it as a credential."""
    from hermes_core.agent.context_engine import ContextEngine
    from hermes_core.retrieval.usage import USAGE_FILE, UsageStore
    home = tmp_path / "home"
    home.mkdir()
    with ContextEngine(home / "sessions.db") as engine:
        engine.add("s1", f"my deploy token is {secret} please remember", tags=("deploy",))
    usage = UsageStore(home / USAGE_FILE)
    usage.record(f"deploy with token {secret} to staging", "deploy", "trigger")
    usage.close()
    write_skill(home / "skills", "deploy", skill_md("deploy", "Deploy the service to staging or production"))
    (home / "config.yaml").write_text(
        "llm:\n  routing:\n    providers: [{name: custom, type: openai, endpoint: 'http://127.0.0.1:9/v1'}]\n"
        f"credentials:\n  custom:\n    keys: [{{key: '{secret}'}}]\n"
        "skill_utils:\n  embeddings: false\n", encoding="utf-8")
    return home


def store_state(home: Path) -> dict[str, tuple[bytes, int]]:
    """Bytes and mtime of the home's two stores, and what their write-ahead logs hold (a write
    may sit in the -wal until a checkpoint). A read-only SQLite reader of a WAL database may leave
    an empty -wal and a -shm, as any reader does: an empty -wal counts as none."""
    state = {name: ((home / name).read_bytes(), (home / name).stat().st_mtime_ns)
             for name in ("sessions.db", "usage.sqlite3")}
    for name in ("sessions.db", "usage.sqlite3"):
        wal = home / f"{name}-wal"
        state[wal.name] = (wal.read_bytes() if wal.exists() else b"", 0)
    return state


@pytest.fixture
def stored_key_home(tmp_path: Path) -> Callable[[], tuple[Path, str]]:
    """A factory: (home, secret), the secret new to this process (keys are registered process
    wide once configured, and a known one would be redacted when the stores are filled)."""
    def make() -> tuple[Path, str]:
        secret = f"zq81-STOREDTOKEN{next(_SERIAL)}-{tmp_path.name[-6:]}-77xx"
        home = home_with_a_key_stored_before_it_was_configured(tmp_path, secret)
        before = store_state(home)
        assert all(secret.encode() in before[name][0] for name in ("sessions.db", "usage.sqlite3"))
        return home, secret
    return make


# The REPL's test files share these (test_repl*.py).
def offline_agent(home: Path) -> Agent:
    """An offline agent on ``home`` with the skills off: a REPL with no network and no model."""
    return Agent.from_config({"home": str(home), "skill_utils": {"enabled": False}}, offline=True)


class Terminal(io.StringIO):
    """Standard input that says it is a terminal: the REPL then reads with ``input`` (patched)."""

    def isatty(self) -> bool:
        return True


def typing_at_terminal(monkeypatch: pytest.MonkeyPatch, script: list[object], *,
            editing: bool = True) -> None:
    """``input`` returns the script's lines in turn (consumed from ``script``); a tuple
    ``("^C", typed)`` is Ctrl-C pressed with ``typed`` on the line (``("^C", "", "erased")``: a
    line typed and erased before it); EOFError (Ctrl-D) at its end.
    ``editing=False`` is a terminal whose output is not one (``chat | tee -i log``): ``input``
    then reads without readline, the kernel holds the typed line, readline's buffer stays empty."""
    import readline

    buffer = [""]
    edited = [False]
    monkeypatch.setattr("hermes_core.cli.repl._line_editing", lambda: editing, raising=False)
    monkeypatch.setattr("hermes_core.cli.repl._keys_pressed", lambda readline: edited[0],
                        raising=False)

    def fake_input(prompt: str) -> str:
        if not script:
            raise EOFError
        key = script.pop(0)
        if isinstance(key, tuple):
            buffer[0] = key[1] if editing else ""
            edited[0] = editing and (bool(key[1]) or key[2:] == ("erased",))
            raise KeyboardInterrupt
        assert isinstance(key, str)
        return key

    monkeypatch.setattr("builtins.input", fake_input)
    monkeypatch.setattr(readline, "get_line_buffer", lambda: buffer[0])
