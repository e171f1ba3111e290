"""Tests of ``hermes_core/agent/routing/classifier.py``.

The optional TF-IDF + LinearSVC route classifier, its confidence gate and ``route train``.
"""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import pytest

from hermes_core.agent.routing.classifier import FORMAT, Example, RouteClassifier, read_examples
from hermes_core.agent.smart_routing import Router
from hermes_core.cli.main import main
from hermes_core.config import load_settings
from hermes_core.errors import ConfigError

CODE = ["fix this python traceback in my function", "refactor the class to use dataclasses",
        "why does my rust borrow checker complain", "write a unit test for this method",
        "the java build fails with a null pointer exception", "optimize this sql join query",
        "debug the segfault in my c program", "convert this loop to a list comprehension",
        "帮我修复这个python函数的bug", "这段代码为什么报空指针异常"]
CHAT = ["what is a good name for a cat", "tell me a joke about penguins",
        "how is the weather in paris in spring", "recommend a novel for a long flight",
        "what should i cook for dinner tonight", "say good morning in french",
        "who won the world cup in 2010", "give me a fun fact about octopuses",
        "今天晚饭吃什么好", "推荐一本适合旅行读的小说"]


def write_train(path: Path) -> Path:
    rows = [{"text": t, "label": "code_model"} for t in CODE] + [
        {"text": t, "label": "fast"} for t in CHAT]
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n")
    return path


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> RouteClassifier:
    data = write_train(tmp_path_factory.mktemp("clf") / "train.jsonl")
    return RouteClassifier.train(read_examples(data))


def test_classifier_separates_held_out_requests(trained: RouteClassifier) -> None:
    assert trained.labels == ("code_model", "fast")
    assert trained.predict("my python function throws an exception, please debug")[0] == "code_model"
    assert trained.predict("tell me a fun fact about cats")[0] == "fast"
    label, confidence = trained.predict("hello")
    assert 0.0 <= confidence <= 1.0 and label in trained.labels


def test_confidence_gate_decides_between_classifier_and_rules(trained: RouteClassifier) -> None:
    settings = load_settings({"llm": {"routing": {
        "default_model": "big", "fast_model": "small", "code_model": "coder",
        "classifier": {"min_confidence": 0.0}}}})
    eager = Router(settings.llm.routing, trained)
    d = eager.select("debug the exception in my java method")
    assert d.model == "coder" and d.reason.startswith("classifier: code_model")
    strict = Router(settings.with_overrides(**{"llm.routing.classifier.min_confidence": 1.0})
                    .llm.routing, trained)
    d = strict.select("debug the exception in my java method")
    # the rules decided (and read the same request as asking for code)
    assert d.model == "coder" and d.reason.startswith("rule 1: has_code or asks_for_code")


@pytest.mark.parametrize(
    ("content", "message", "line"),
    [
        ('{"text": "a", "label": "x"}\nnot json\n', "not valid JSON", 2),
        ('{"text": "", "label": "x"}\n', "'text' must be a non-empty string", 1),
        ('{"text": "a"}\n', "'label' must be a non-empty string", 1),
        ('["a", "b"]\n', "each line must be an object", 1),
    ],
)
def test_bad_training_lines_name_file_and_line(tmp_path: Path, content: str, message: str,
                                               line: int) -> None:
    f = tmp_path / "bad.jsonl"
    f.write_text(content)
    with pytest.raises(ConfigError, match=message) as ei:
        read_examples(f)
    assert ei.value.line == line and ei.value.file == str(f)


def test_a_training_path_that_is_a_folder_or_a_pipe_is_named_as_such(tmp_path: Path) -> None:
    """Not "training file not found": the path is there, it is the wrong kind of thing."""
    import os
    fifo = tmp_path / "train.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match="not a regular file"):
        read_examples(fifo)
    with pytest.raises(ConfigError, match="is a directory"):
        read_examples(tmp_path)
    with pytest.raises(ConfigError, match="not found"):
        read_examples(tmp_path / "missing.jsonl")


def test_training_needs_two_labels_with_two_examples(tmp_path: Path) -> None:
    from hermes_core.agent.routing.classifier import Example

    with pytest.raises(ConfigError, match="two different labels"):
        RouteClassifier.train([Example("a", "x"), Example("b", "x")])
    with pytest.raises(ConfigError, match="at least 2 examples"):
        RouteClassifier.train([Example("a", "x"), Example("b", "x"), Example("c", "y")])


def test_corrupt_model_file_is_a_config_error(tmp_path: Path) -> None:
    bad = tmp_path / "m.pkl"
    bad.write_bytes(b"not a pickle")
    with pytest.raises(ConfigError, match="cannot read classifier"):
        RouteClassifier.load(bad)


def test_cli_route_train_then_route(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_train(tmp_path / "train.jsonl")
    model = tmp_path / "clf.pkl"
    assert main(["route", "train", str(data), "--out", str(model), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["examples"] == 20 and model.is_file()
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"llm:\n  routing:\n    default_model: big\n    code_model: coder\n"
                   f"    fast_model: small\n    classifier:\n      path: {model}\n"
                   f"      min_confidence: 0.0\n")
    assert main(["route", "refactor", "this", "python", "class", "--config", str(cfg),
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model"] == "coder" and out["reason"].startswith("classifier")
    # "train X" as one quoted argument is routed, not trained
    assert main(["route", "train my dog", "--config", str(cfg)]) == 0
    assert "model:" in capsys.readouterr().out


def test_cli_route_train_bad_file_is_one_clear_line(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "t.jsonl"
    f.write_text("{oops\n")
    assert main(["route", "train", str(f), "--out", str(tmp_path / "m.pkl")]) == 1
    err = capsys.readouterr().err
    assert f"{f}:1" in err and "not valid JSON" in err and "Traceback" not in err


# The classifier file is a pickle, and unpickling runs code: a file not written by
# ``hermes-core route train`` (a downloaded .pkl, a tampered one) is refused before any of it is
# unpickled.

class _Payload:
    """Unpickling this creates ``marker`` (stands in for arbitrary code)."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, int]]:
        return (os.open, (self.marker, os.O_CREAT | os.O_WRONLY))


def _examples() -> list[Example]:
    return [Example(f"write python code {i}", "code") for i in range(6)] + \
           [Example(f"hello how are you {i}", "chat") for i in range(6)]


def test_foreign_pickle_is_refused_without_running_it(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    evil = tmp_path / "clf.pkl"
    evil.write_bytes(pickle.dumps({"format": FORMAT, "labels": ["x"], "pipeline": _Payload(str(marker))}))
    with pytest.raises(ConfigError, match="cannot read classifier") as ei:
        RouteClassifier.load(evil, key_path="llm.routing.classifier.path")
    assert str(evil) in str(ei.value)
    assert not marker.exists()


def test_tampered_file_is_refused_without_running_it(tmp_path: Path) -> None:
    path = tmp_path / "clf.pkl"
    RouteClassifier.train(_examples()).save(path)
    good = path.read_bytes()
    marker = tmp_path / "pwned"
    header, _ = good.split(b"\n", 1)
    path.write_bytes(header + b"\n" + pickle.dumps(_Payload(str(marker))))
    with pytest.raises(ConfigError, match="checksum"):
        RouteClassifier.load(path)
    assert not marker.exists()


def test_saved_file_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "clf.pkl"
    RouteClassifier.train(_examples()).save(path)
    label, conf = RouteClassifier.load(path).predict("write python code please")
    assert label == "code" and 0.0 <= conf <= 1.0


def test_cli_train_to_unwritable_path_is_a_clear_error(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from hermes_core.cli.main import main

    data = tmp_path / "train.jsonl"
    data.write_text("".join(f'{{"text": "{e.text}", "label": "{e.label}"}}\n' for e in _examples()))
    blocker = tmp_path / "afile"
    blocker.write_text("not a folder")
    out = blocker / "clf.pkl"
    assert main(["route", "train", str(data), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "cannot write classifier" in err and str(out) in err and "Traceback" not in err
    assert blocker.read_text() == "not a folder"
