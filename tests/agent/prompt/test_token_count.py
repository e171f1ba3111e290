"""Token counters: tiktoken only when its file is already on disk, else the calibrated estimate."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from hermes_core.agent.prompt import token_count
from hermes_core.agent.prompt.token_count import (
    EstimateCounter,
    calibration_ratio,
    choose_counter,
    fixed_cost,
    local_encoding_file,
    message_cost,
    prompt_cost,
    tiktoken_counter,
)
from hermes_core.tokenize import estimate_tokens
from hermes_core.types import Message, Prompt, ToolSpec, Usage

from .conftest import CharEncoding, EncodingFiles


def test_no_encoding_file_on_disk_means_no_tiktoken_and_no_download(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert tiktoken_counter("gpt-4o") is None            # the network guard would catch a download
    assert choose_counter("gpt-4o", "openai", None).name == "estimate"
    assert list(tmp_path.iterdir()) == []


def test_a_corrupt_cached_file_is_not_used(tmp_path: Path):
    url, _ = token_count.TIKTOKEN_FILES["o200k_base"]
    (tmp_path / hashlib.sha1(url.encode()).hexdigest()).write_bytes(b"truncated")
    assert local_encoding_file("o200k_base", str(tmp_path)) is None   # tiktoken would re-download


def test_an_intact_cached_file_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    data = b"dG9rZW4= 0\n"
    url, _ = token_count.TIKTOKEN_FILES["o200k_base"]
    monkeypatch.setitem(token_count.TIKTOKEN_FILES, "o200k_base",
                        (url, hashlib.sha256(data).hexdigest()))
    path = tmp_path / hashlib.sha1(url.encode()).hexdigest()
    path.write_bytes(data)
    assert local_encoding_file("o200k_base", str(tmp_path)) == str(path)


def test_tiktoken_counts_openai_models_only(monkeypatch: pytest.MonkeyPatch):
    pytest.importorskip("tiktoken", reason="tiktoken is an optional extra (hermes-core[tiktoken])")
    monkeypatch.setattr(token_count, "_encodings", {})
    counter = tiktoken_counter("gpt-4o", loader=lambda name: CharEncoding())
    assert counter is not None and counter.name == "tiktoken:o200k_base"
    assert counter.count("hello") == 5
    assert tiktoken_counter("claude-sonnet-4-5", loader=lambda name: CharEncoding()) is None
    assert choose_counter("claude-sonnet-4-5", "anthropic", 1.2).name == "calibrated"


def test_calibration_is_billed_prompt_tokens_over_the_estimate():
    prompt = Prompt(system="s" * 400, messages=(Message("user", "hello there " * 20),))
    estimated = prompt_cost(prompt, EstimateCounter())
    billed = Usage(input_tokens=estimated, cache_read_tokens=estimated // 2)   # both count
    ratio = calibration_ratio(prompt, billed)
    assert ratio == pytest.approx(1.5, rel=0.01)
    counter = EstimateCounter(ratio)
    assert counter.name == "calibrated"
    assert counter.count("x" * 400) == round(estimate_tokens("x" * 400) * ratio)
    assert calibration_ratio(prompt, Usage()) is None                 # nothing billed: no change
    assert calibration_ratio(prompt, Usage(input_tokens=estimated * 50)) is None   # implausible


def test_the_fixed_cost_is_the_request_without_its_messages():
    tool = ToolSpec("skill_view", "Load a skill", {"type": "object", "properties": {}})
    prompt = Prompt(system="s" * 400, context="today is Monday", tools=(tool,),
                    messages=(Message("user", "hi"), Message("assistant", "hello, how can I help")))
    counter = EstimateCounter(1.3)
    assert fixed_cost(prompt, counter) + sum(message_cost(m, counter) for m in prompt.messages) \
        == prompt_cost(prompt, counter)
    assert fixed_cost(prompt, counter) == prompt_cost(
        Prompt(system=prompt.system, context=prompt.context, tools=prompt.tools, messages=()), counter)


def test_an_encoding_loaded_once_is_not_verified_again_on_every_turn(
        encoding_files: EncodingFiles, char_tiktoken: None, monkeypatch: pytest.MonkeyPatch):
    encoding_files.arrive(monkeypatch)
    first = tiktoken_counter("gpt-4o")
    second = tiktoken_counter("gpt-4o")
    assert first is not None and second is not None
    assert second.encoding is first.encoding and second.count("token") == 5
    assert encoding_files.looked == ["o200k_base"]


def test_a_missing_encoding_file_is_looked_for_again_only_after_a_while(
        encoding_files: EncodingFiles, char_tiktoken: None, monkeypatch: pytest.MonkeyPatch):
    looked = encoding_files.looked
    assert tiktoken_counter("gpt-4o") is None
    encoding_files.arrive(monkeypatch)               # a download by another process
    assert tiktoken_counter("gpt-4o") is None          # not looked for again at once
    assert looked == ["o200k_base"]
    monkeypatch.setattr(token_count, "RECHECK_MISSING_S", 0.0)   # the while has passed
    counter = tiktoken_counter("gpt-4o")
    assert counter is not None and counter.count("token") == 5
    assert looked == ["o200k_base", "o200k_base"]


def test_after_a_miss_the_cache_folder_is_not_looked_up_again_each_turn(
        encoding_files: EncodingFiles, monkeypatch: pytest.MonkeyPatch):
    pytest.importorskip("tiktoken", reason="tiktoken is an optional extra (hermes-core[tiktoken])")
    folders: list[str | None] = []
    lookup = token_count.tiktoken_cache_dir

    def counted() -> str | None:
        folders.append(lookup())
        return folders[-1]

    monkeypatch.setattr(token_count, "tiktoken_cache_dir", counted)
    for _ in range(3):                                   # three turns
        assert tiktoken_counter("gpt-4o") is None
    assert folders == [str(encoding_files.folder)]       # the environment read once, not per turn
    assert encoding_files.looked == ["o200k_base"]


def test_a_folder_passed_in_is_looked_in_despite_a_remembered_miss(
        encoding_files: EncodingFiles, char_tiktoken: None, monkeypatch: pytest.MonkeyPatch):
    assert tiktoken_counter("gpt-4o") is None            # the default folder: missing, remembered
    encoding_files.arrive(monkeypatch)
    counter = tiktoken_counter("gpt-4o", cache_dir=str(encoding_files.folder))
    assert counter is not None and counter.count("token") == 5
