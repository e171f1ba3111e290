"""Tests of ``hermes_core/cli/route_cmd.py``.

``hermes-core route`` and ``hermes-core keys status``: output shapes, errors, no secrets.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from hermes_core.cli.main import main
from tests.cli.conftest import store_state

CONFIG = """
llm:
  routing:
    default_model: gpt-4o
    fast_model: gpt-4o-mini
    code_model: claude-sonnet-4
    providers:
      - {name: openai, priority: 1, models: [gpt-4o, gpt-4o-mini]}
      - {name: anthropic, priority: 2, models: [claude-sonnet-4]}
credentials:
  openai:
    keys:
      - {key: sk-cli-one-SECRET, max_rpm: 60}
      - {key: sk-cli-two-SECRET, weight: 2}
"""


@pytest.fixture(autouse=True)
def _private_home_and_cwd(hermes_home: Path) -> None:
    """``route`` builds the home's system prompt and reads the project's context files from the
    cwd up to its git root: without a home and a cwd of their own, these tests routed inside the
    session's shared default home and whatever AGENTS.md the folder pytest ran in holds."""


@pytest.fixture
def cfg(tmp_path: Path) -> Path:
    p = tmp_path / "config.yaml"
    p.write_text(CONFIG)
    return p


def test_route_json(cfg: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["route", "please", "run", "this", "command", "--config", str(cfg), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model"] == "claude-sonnet-4"
    assert out["reason"].startswith("rule 1: has_code or asks_for_code or requires_shell_execution")
    assert out["candidates"] == [{"provider": "anthropic", "model": "claude-sonnet-4"},
                                 {"provider": "openai", "model": "gpt-4o"}]
    assert out["features"]["requires_shell_execution"] is True


@pytest.mark.parametrize(("message", "model", "said"), [
    ("Implement binary search in Go", "claude-sonnet-4", "-> code_model, because asks_for_code"),
    ("证明根号2是无理数", "gpt-4o", "default_model: needs reasoning (proof)"),
    # the turn's context (date line) counts, as in the agent's own route: not the bare "hi"'s 1
    ("hi", "gpt-4o-mini", "-> fast_model, because token_estimate="),
])
def test_route_says_which_feature_chose_the_model(cfg: Path, capsys: pytest.CaptureFixture[str],
                                                  message: str, model: str, said: str) -> None:
    assert main(["route", message, "--config", str(cfg)]) == 0
    out = capsys.readouterr().out
    assert f"model: {model}\n" in out and said in out, out


def test_route_text_and_flags(cfg: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["route", "hi", "--config", str(cfg), "--tools"]) == 0
    out = capsys.readouterr().out
    assert "model: gpt-4o\n" in out and "reason: default_model" in out
    assert main(["route", "hi", "--config", str(cfg), "--model", "o3"]) == 0
    assert "reason: requested model" in capsys.readouterr().out


def test_route_bad_rule_is_one_clear_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "bad.yaml"
    p.write_text("llm:\n  routing:\n    rules:\n      - {condition: 'open(1)', model: x}\n")
    assert main(["route", "hi", "--config", str(p)]) == 1
    err = capsys.readouterr().err
    assert "rule 1" in err and "Call is not allowed" in err and f"{p}:4" in err


def test_keys_status_shows_fingerprints_only(cfg: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["keys", "status", "--config", str(cfg), "--json"]) == 0
    raw = capsys.readouterr().out
    data = json.loads(raw)
    assert [k["state"] for k in data["keys"]] == ["ok", "ok"]
    assert set(data["keys"][0]) >= {"fingerprint", "state", "blocked_until",
                                    "requests_last_minute"}
    assert main(["keys", "status", "--config", str(cfg)]) == 0
    table = capsys.readouterr().out
    assert data["keys"][0]["fingerprint"] in table
    for text in (raw, table):
        assert "SECRET" not in text


def test_keys_status_without_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "c.yaml"
    p.write_text("llm: {}\n")
    assert main(["keys", "status", "--config", str(p)]) == 0
    assert "no API keys configured" in capsys.readouterr().out


def test_keys_without_subcommand_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["keys"]) == 2
    assert "status" in capsys.readouterr().err   # a usage error: on stderr, like argparse's


def test_route_and_keys_read_the_config_of_the_home_named_by_home(
        cfg: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HERMES_HOME", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert main(["route", "please", "run", "this", "command", "--home", str(tmp_path),
                 "--json"]) == 0   # cfg is the home's config.yaml: its code rule answers
    assert json.loads(capsys.readouterr().out)["model"] == "claude-sonnet-4"
    assert main(["keys", "status", "--home", str(tmp_path), "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["keys"]) == 2
    assert main(["keys", "status", "--home", str(tmp_path / "typo")]) == 1
    err = capsys.readouterr().err
    assert "typo" in err and "does not exist" in err


@pytest.mark.parametrize("argv", [["route", "deploy to staging"], ["route", "deploy", "--json"],
                                  ["keys", "status"], ["keys", "status", "--json"]])
def test_routing_and_key_status_leave_the_stores_as_they_were_and_print_no_key(
        argv: list[str], stored_key_home: Any, capsys: pytest.CaptureFixture[str]) -> None:
    home, secret = stored_key_home()
    before = store_state(home)
    assert main(["-vv", *argv, "--home", str(home)]) == 0
    out, err = capsys.readouterr()
    assert out and secret not in out + err
    assert store_state(home) == before


def test_a_negative_turn_count_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """``--turn -5`` was accepted: a conversation has no negative number of turns."""
    with pytest.raises(SystemExit) as info:
        main(["route", "hi", "--turn", "-5"])
    assert info.value.code == 2 and "--turn" in capsys.readouterr().err


def test_a_model_name_s_escape_sequence_is_shown_not_sent_to_the_terminal(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The routing report printed the model name raw: one from a shared config (or pasted) with
    OSC 52 in it wrote the clipboard of whoever ran ``hermes-core route``. Such a name is no
    model's and is now a usage error, which shows it escaped too."""
    with pytest.raises(SystemExit) as info:
        main(["route", "hi", "--model", "gpt-4o\x1b]52;c;ZXZpbA==\x07"])
    assert info.value.code == 2
    captured = capsys.readouterr()
    shown = captured.out + captured.err
    assert "\x1b" not in shown and "\x07" not in shown and "\\x1b]52" in shown


def test_train_out_in_a_folder_that_does_not_exist_is_an_error_and_creates_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``route train X.jsonl --out ~/hremes/m.pkl`` (a typo) created the folder and saved the
    model where the configured classifier.path would never find it."""
    examples = tmp_path / "train.jsonl"
    examples.write_text("".join(json.dumps({"text": f"{word} {i}", "label": label}) + "\n"
                                for i in range(4)
                                for word, label in (("write code", "code"), ("hello", "chat"))),
                        encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    out = tmp_path / "typo" / "m.pkl"
    assert main(["route", "train", str(examples), "--home", str(home), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "--out" in err and str(out.parent) in err and "does not exist" in err
    assert not (tmp_path / "typo").exists()


def test_route_model_of_10000_characters_is_shown_by_its_head_and_length(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "home"
    home.mkdir()
    assert main(["route", "hi", "--home", str(home), "--model", "m" * 10_000]) == 0
    out = capsys.readouterr().out
    assert "model: mmmm" in out and "(10000 characters)" in out
    assert "m" * 200 not in out


def test_a_trained_classifier_file_holds_no_key_the_examples_quoted(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Examples copied from real requests quote keys; the model file keeps every word it saw
    (its vocabulary is pickled), so a configured key and a key-shaped string are scrubbed from
    the examples before training, as from any other stored text."""
    configured, pasted = "zorblaxquintvex7", "sk-proj-mnbvcxzlkjhgfdsapoiuytrewq9"
    config = tmp_path / "config.yaml"
    config.write_text(f"credentials:\n  openai:\n    keys:\n      - key: {configured}\n",
                      encoding="utf-8")
    examples = tmp_path / "train.jsonl"
    examples.write_text("".join(
        json.dumps({"text": text, "label": label}) + "\n" for i in range(4) for text, label in (
            (f"write python code {i} with key {configured}", "code"),
            (f"hello {i}, my token is {pasted}", "chat"))), encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    out = tmp_path / "m.pkl"
    assert main(["route", "train", str(examples), "--home", str(home), "--config", str(config),
                 "--out", str(out)]) == 0
    assert "trained on 8 examples" in capsys.readouterr().out
    stored = out.read_bytes()
    for piece in ("zorblaxquintvex", "mnbvcxzlkjhgfdsapoiuytrewq"):
        assert piece.encode() not in stored, piece
    assert main(["route", "write python code please", "--home", str(home), "--config",
                 str(config), "--json"]) == 0


@pytest.mark.parametrize("text", ["hi\r\n", "为什么天空是蓝色的？" * 100_000, "why " * 250_000])
def test_a_message_of_dash_is_read_from_stdin_so_a_megabyte_request_can_be_explained(
        cfg: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        text: str) -> None:
    # one argument is at most 128 KB (the system's limit): a 1 MB request could not be routed,
    # and "-" was routed as the one-character message "-", as prompt's "-" is not
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8"))))
    assert main(["route", "-", "--config", str(cfg), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["features"]["chars"] == len(text.replace("\r\n", "\n").removesuffix("\n"))


FAILOVER_CONFIG = """
llm:
  routing:
    default_model: gpt-4o
    fast_model: gpt-4o-mini
    providers:
      - {name: primary, type: openai, endpoint: "https://primary.test/v1", priority: 1,
         models: [gpt-4o, gpt-4o-mini]}
      - {name: backup, type: openai, endpoint: "https://backup.test/v1", priority: 2,
         models: [llama-70b, llama-8b], equivalents: {gpt-4o: llama-70b, gpt-4o-mini: llama-8b}}
credentials:
  primary: {keys: [{key: sk-primary-test-0001}]}
  backup: {keys: [{key: sk-backup-test-0002}]}
prompt: {injection_scan: false}
skill_utils: {enabled: false, embeddings: false}
context_engine: {enabled: false}
"""


@pytest.mark.parametrize("tied", [False, True])
@pytest.mark.parametrize("primary_fails", [False, True])
@pytest.mark.parametrize(("message", "route_model"), [
    ("hi", "gpt-4o-mini"), ("证明根号2是无理数", "gpt-4o"),
])
def test_what_route_explains_is_what_the_agent_sends_on_failover_too(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], respx_mock: Any,
        message: str, route_model: str, primary_fails: bool, tied: bool) -> None:
    """``hermes-core route``'s model and candidates against the request bodies on the wire
    (respx over the openai SDK): the primary is sent the route's model, and after its 401 the
    backup the model the route listed for it (its equivalent), not the model's own name. Tied
    priorities keep the listed order, in the explanation and on the wire."""
    import httpx

    from hermes_core.agent.agent import Agent
    from hermes_core.config import load_settings
    from hermes_core.testing import openai_chat_completion, openai_error

    cfg = tmp_path / "config.yaml"
    cfg.write_text(FAILOVER_CONFIG.replace("priority: 2", "priority: 1") if tied
                   else FAILOVER_CONFIG)
    assert main(["route", message, "--config", str(cfg), "--json"]) == 0
    explained = json.loads(capsys.readouterr().out)
    assert explained["model"] == route_model
    assert [c["provider"] for c in explained["candidates"]] == ["primary", "backup"]
    sent: list[tuple[str, str]] = []

    def answer(name: str, status: int) -> Any:
        def reply(request: httpx.Request) -> httpx.Response:
            sent.append((name, json.loads(request.content)["model"]))
            return (httpx.Response(status, json=openai_error(status, "bad key")) if status != 200
                    else httpx.Response(200, json=openai_chat_completion("ok")))
        return reply

    respx_mock.post("https://primary.test/v1/chat/completions").mock(
        side_effect=answer("primary", 401 if primary_fails else 200))
    respx_mock.post("https://backup.test/v1/chat/completions").mock(side_effect=answer("backup", 200))
    (tmp_path / "home").mkdir()
    settings = load_settings(str(cfg), home=str(tmp_path / "home"), env={})
    with Agent(settings, loop_options={"sleep": lambda s: None, "audit_path": False}) as agent:
        agent.chat(message)
        decision = agent.last_decision
        first, sent[:] = list(sent), []
        agent.chat(message)   # the primary's only key was removed by its 401: not asked again
    assert decision is not None and decision.model == explained["model"]
    assert [{"provider": c.provider, "model": c.model} for c in decision.candidates] \
        == explained["candidates"]
    tried = explained["candidates"][: 2 if primary_fails else 1]
    assert first == [(c["provider"], c["model"]) for c in tried]
    assert sent == [(c["provider"], c["model"]) for c in tried[-1:]]


def test_route_counts_the_home_s_system_prompt_as_the_agent_does(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A home whose SOUL.md is ~3,000 tokens and a fast model of 2,000: the agent skips the fast
    model for "hi" (its system prompt alone is too large for it) while ``hermes-core route``,
    counting the bare message, said "fast_model, because token_estimate=1"."""
    from hermes_core.agent.agent import Agent
    from hermes_core.config import load_settings
    from hermes_core.testing import FakeProvider

    home = tmp_path / "home"
    home.mkdir()
    (home / "SOUL.md").write_text("You are a careful assistant who explains each step. " * 300)
    (home / "config.yaml").write_text(
        "llm:\n  routing:\n    default_model: gpt-4o\n    fast_model: tiny-fast\n"
        "    context_windows: {tiny-fast: 2000}\n"
        "prompt: {file_token_budget: 20000, injection_scan: false}\n"
        "skill_utils: {enabled: false, embeddings: false}\ncontext_engine: {enabled: false}\n")
    monkeypatch.chdir(tmp_path)
    assert main(["route", "hi", "--home", str(home), "--json"]) == 0
    explained = json.loads(capsys.readouterr().out)
    fake = FakeProvider(["ok"], name="openai")
    with Agent(load_settings(None, home=str(home), env={}), provider=fake,
               loop_options={"audit_path": False}) as agent:
        agent.chat("hi")
        decision = agent.last_decision
    assert decision is not None and decision.model == "gpt-4o"
    assert explained["model"] == decision.model, explained["reason"]


class _Endless(io.RawIOBase):
    """``route - < /dev/zero`` (or ``yes |``): a stream with no end."""

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        b[:] = b"\0" * len(b)
        return len(b)

    def readall(self) -> bytes:
        raise AssertionError("read to the end of a stream that has none: memory grows until OOM")


def test_an_endless_stdin_is_refused_at_the_limit_not_read_until_memory_runs_out(
        cfg: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_core.cli.argtypes import MAX_STDIN_BYTES

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(_Endless())))
    assert main(["route", "-", "--config", str(cfg)]) == 1
    err = capsys.readouterr().err
    assert "stdin" in err and f"{MAX_STDIN_BYTES:,}" in err


class _Terminal(io.TextIOWrapper):
    def isatty(self) -> bool:
        return True


def test_route_dash_at_a_terminal_says_it_waits_for_the_message(
        cfg: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # `route -` typed at a shell sat silent until Ctrl-D: it looked hung
    monkeypatch.setattr(sys, "stdin", _Terminal(io.BytesIO(b"why is the sky blue\n")))
    assert main(["route", "-", "--config", str(cfg), "--json"]) == 0
    captured = capsys.readouterr()
    assert "Ctrl-D" in captured.err and "stdin" in captured.err
    assert json.loads(captured.out)["features"]["chars"] == len("why is the sky blue")


def test_route_dash_from_a_pipe_says_nothing_on_stderr(
        cfg: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"why\n")))
    assert main(["route", "-", "--config", str(cfg), "--json"]) == 0
    assert capsys.readouterr().err == ""
