"""The folds kept in the home: found only for the messages they summarise, scrubbed, bounded."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hermes_core.agent.prompt import fold_store
from hermes_core.agent.prompt.fold_store import FoldStore, PrefixKeys, prefix_keys
from hermes_core.redact import Redactor
from hermes_core.types import Message, ToolCall

KEY = "sk-proj-foldSTOREsecret0123456789abcdef"


def history(turns: int, tag: str = "") -> list[Message]:
    out: list[Message] = []
    for t in range(turns):
        out += [Message("user", f"question {t}{tag}"), Message("assistant", f"answer {t}")]
    return out


def state(folded: int, prose: str = "They talked about questions.") -> dict[str, object]:
    return {"folded": folded, "turns": folded // 2, "prose": prose,
            "facts": ["My name is Ada."], "source": "extractive", "compactions": 1}


@pytest.fixture
def store(tmp_path: Path) -> FoldStore:
    return FoldStore(tmp_path / "cache" / "compaction", Redactor([KEY]))


def test_a_fold_is_found_again_for_a_longer_history_that_starts_with_its_messages(
        store: FoldStore) -> None:
    chat = history(10)
    assert store.save(chat, state(8))
    found = store.find([*chat, *history(3, " later")])
    assert found is not None and found["folded"] == 8 and found["facts"] == ["My name is Ada."]


def test_the_latest_fold_of_a_chat_wins(store: FoldStore) -> None:
    chat = history(10)
    store.save(chat, state(4))
    store.save(chat, state(12))
    found = store.find(chat)
    assert found is not None and found["folded"] == 12


def test_a_fold_of_other_messages_is_not_found(store: FoldStore) -> None:
    store.save(history(10), state(8))
    assert store.find(history(10, " edited")) is None
    called = [*history(3)[:-1], Message("assistant", "", (ToolCall("c1", "f", "{}"),))]
    other = [*history(3)[:-1], Message("assistant", "", (ToolCall("c1", "f", '{"a": 1}'),))]
    assert prefix_keys([*called, Message("user", "x")]) != prefix_keys([*other, Message("user", "x")])


def test_a_stored_fold_holds_no_configured_secret(store: FoldStore) -> None:
    store.save(history(10), state(8, prose=f"The user pasted {KEY} by mistake."))
    text = "".join(p.read_text(encoding="utf-8") for p in store.folder.iterdir())
    assert KEY not in text and "pasted" in text


def test_a_damaged_or_foreign_file_is_ignored_not_raised(store: FoldStore) -> None:
    chat = history(10)
    store.save(chat, state(8))
    (path,) = store.folder.iterdir()
    path.write_bytes(b"\x00{not json")
    assert store.find(chat) is None
    path.write_bytes(b"[" * 60_000)   # JSON nested past Python's recursion limit
    assert store.find(chat) is None
    data = {**state(8), "format": 1, "key": path.stem, "facts": "not a list"}
    path.write_text(json.dumps(data), encoding="utf-8")
    assert store.find(chat) is None
    for wrong in ({"folded": 8.0}, {"turns": 4.0}, {"compactions": True}, {"format": True}):
        # equal to the count in Python, yet no count: history[8.0 - 1] would raise in the compactor
        path.write_text(json.dumps({**state(8), "format": 1, "key": path.stem, **wrong}),
                        encoding="utf-8")
        assert store.find(chat) is None, wrong


def test_a_disk_that_refuses_costs_only_the_fold(tmp_path: Path) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the folder should be", encoding="utf-8")
    store = FoldStore(blocker / "compaction", Redactor([]))
    assert store.save(history(10), state(8)) is False
    assert store.find(history(10)) is None


def test_the_folder_keeps_only_the_newest_folds(store: FoldStore,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fold_store, "MAX_FOLDS", 3)
    for n in range(5):
        store.save(history(4, f" chat {n}"), state(4))
        for i, path in enumerate(sorted(store.folder.iterdir(), key=lambda p: p.stat().st_mtime_ns)):
            os.utime(path, ns=(i * 10**9, i * 10**9))   # distinct ages, the order they came in
    assert len(list(store.folder.iterdir())) == 3
    assert store.find(history(4, " chat 4")) is not None


def test_prefix_keys_of_a_growing_history_are_the_keys_of_the_whole_and_only_the_new() -> None:
    keys = PrefixKeys()
    chat = history(6)
    first = keys.extend(chat[:5])
    later = keys.extend(chat)
    assert first is not None and later is not None
    assert {**first, **later, **keys.end()} == prefix_keys(chat) and set(later) == {6, 8, 10}
    assert set(keys.end()) == {12}                           # the whole: a fold may end there
    assert keys.extend(chat) == {}                           # nothing new
    assert keys.extend([Message(m.role, m.content) for m in chat]) == {}   # read back equal
    other = [*history(6, " other")[:-1], Message("assistant", "another answer")]
    assert keys.extend(other) is None                        # another conversation
    assert keys.extend(chat[:3]) is None                     # shorter than what was seen


def test_a_fold_is_found_by_the_keys_of_a_turns_new_prefixes(store: FoldStore) -> None:
    chat = history(10)
    store.save(chat, state(8))
    keys = prefix_keys(chat)
    assert store.find_keys({k: keys[k] for k in (6, 8)}, listed=False)["folded"] == 8
    assert store.find_keys({k: keys[k] for k in (2, 4)}, listed=False) is None
