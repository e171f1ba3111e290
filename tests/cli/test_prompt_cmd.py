"""``hermes-core prompt --history ... --json`` shows compaction and which token counter was used."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_core.cli.main import main


def _history(path: Path, turns: int) -> Path:
    messages = []
    for t in range(turns):
        messages.append({"role": "user", "content": f"Question {t}: how do I make docker builds "
                                                    "faster when the cache keeps missing?"})
        messages.append({"role": "assistant", "content": "Order layers by how often they change, "
                         "use a cache mount for the package manager and pin base images. " * 3})
    messages[2]["content"] = "My name is Ada Okafor and our codename is BLUEFIN-7."
    path.write_text(json.dumps(messages), encoding="utf-8")
    return path


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], turns: int) -> dict:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(
        "llm:\n  routing:\n    context_windows:\n      gpt-4o: 4000\n"
        "skill_utils:\n  enabled: false\ncontext_engine:\n  enabled: false\n", encoding="utf-8")
    hist = _history(tmp_path / "history.json", turns)
    assert main(["prompt", "and now?", "--home", str(home), "--model", "gpt-4o",
                 "--history", str(hist), "--cwd", str(tmp_path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_long_history_is_compacted_in_the_preview(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    out = _run(tmp_path, capsys, 40)
    c = out["compaction"]
    assert c["budget"]["window"] == 4000 and c["budget"]["window_source"] == "configured"
    assert c["compacted_now"]["folded_turns"] > 0 and c["compacted_now"]["source"] == "extractive"
    assert c["history_tokens"] <= c["budget"]["available"]
    assert out["summary_index"] == 0
    assert out["messages"][0]["content"].startswith("[Conversation so far")
    assert "BLUEFIN-7" in out["messages"][0]["content"]          # a stated fact survives
    assert out["token_counter"] in ("estimate", "tiktoken:o200k_base")


def test_a_short_history_is_sent_verbatim(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    out = _run(tmp_path, capsys, 2)
    assert out["compaction"]["compacted_now"] is None and out["summary_index"] is None
    assert len(out["messages"]) == 5
