"""Tests of ``hermes_core/ast_guard.py``: no AST of ours is built while another of ours is, and
none is interrupted by a garbage collection (CPython gh-106905 on 3.11 before 3.11.8)."""

from __future__ import annotations

import ast
import gc
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hermes_core.agent.routing.rules import compile_condition
from hermes_core.ast_guard import holding_ast, parse_expression
from hermes_core.retrieval.gate_store import read_sealed, write_sealed


def test_holding_ast_holds_collection_off_and_restores_it_as_it_was() -> None:
    assert gc.isenabled()
    with holding_ast():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with holding_ast():
            pass
        assert not gc.isenabled()   # off before: left off
    finally:
        gc.enable()


def test_an_expression_too_deep_for_the_stack_is_a_value_error_not_a_crash() -> None:
    def at_depth(n: int) -> BaseException | None:
        if n:
            return at_depth(n - 1)
        try:
            parse_expression("-" * 900 + "1")
        except BaseException as e:
            return e
        return None

    error = at_depth(sys.getrecursionlimit() - 100)
    assert isinstance(error, ValueError) and "nested too deeply" in str(error)
    with pytest.raises(SyntaxError):
        parse_expression("1 +")


def _in_a_thread_while_this_one_parses(work: Callable[[], object], parse: Callable[[], object]) -> object:
    """Run ``work`` on a second thread; at the first garbage collection inside an ``ast.parse`` it
    makes, let this thread run ``parse`` to the end: the hand-over that trips the shared count."""
    result: list[object] = []
    in_parse = threading.Event()
    parsed = threading.Event()

    def in_collection(phase: str, info: dict[str, int]) -> None:
        if (phase == "start" and threading.current_thread() is not threading.main_thread()
                and sys._getframe(1).f_code is ast.parse.__code__ and not in_parse.is_set()):
            in_parse.set()
            parsed.wait(10)

    def worker() -> None:
        try:
            result.append(work())
        except BaseException as e:
            result.append(e)
        in_parse.set()

    threshold = gc.get_threshold()
    gc.callbacks.append(in_collection)
    gc.set_threshold(1)
    try:
        t = threading.Thread(target=worker)
        t.start()
        in_parse.wait(10)
        parse()
        parsed.set()
        t.join()
    finally:
        gc.set_threshold(*threshold)
        gc.callbacks.remove(in_collection)
    return result[0]


def test_a_sealed_cache_read_on_the_warm_up_thread_is_not_tripped_by_a_condition_compiled_meanwhile(
        tmp_path: Path) -> None:
    """np.load parses each .npy header with ast.literal_eval: on the skill warm-up thread, a
    condition compiled on the chat's thread meanwhile made it raise SystemError, and the cache
    read as unreadable (computed again, with a warning)."""
    path = tmp_path / "rows.npz"
    assert write_sealed(path, 1, {"n": 3}, {"rows": np.arange(3.0)}, "rows")
    read = _in_a_thread_while_this_one_parses(
        lambda: read_sealed(path, 1, "rows"),
        lambda: compile_condition("has_url and turn_count > 2 or token_estimate < 7"))
    assert isinstance(read, tuple), read
    assert read[0]["n"] == 3 and read[1]["rows"].tolist() == [0.0, 1.0, 2.0]



def test_the_query_adapter_is_read_under_the_ast_guard(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """load_adapter's np.load parses .npy headers with ast.literal_eval, as a sealed cache read
    does, so it is held under :func:`holding_ast` too (collection off, the lock held): outside it,
    a condition compiled on another thread meanwhile could make it raise SystemError and the
    adapter would be dropped (the plain model served, with a warning)."""
    from hermes_core.retrieval import adapter

    path = tmp_path / "adapter.npz"
    np.savez(path, model_id=np.array("test:hashing"), a=np.zeros((8, 2), dtype=np.float32),
             b=np.zeros((2, 8), dtype=np.float32))
    guarded: list[bool] = []
    real_load = np.load

    def load(*args: Any, **kwargs: Any) -> Any:
        guarded.append(not gc.isenabled())
        return real_load(*args, **kwargs)

    monkeypatch.setattr(adapter.np, "load", load)
    got = adapter.load_adapter(path)
    assert got is not None and got.model_id == "test:hashing"
    assert guarded == [True]


@pytest.mark.parametrize("module, model", [("learned", "LearnedScorer"), ("semantic", "SemanticModel")])
def test_the_injection_models_are_read_under_the_ast_guard(module: str, model: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The learned scorer and the e5 stage load on first use, which may be on a warm-up thread:
    their np.load parses .npy headers with ast.literal_eval, so it is held under
    :func:`holding_ast` as the retrieval caches' reads are."""
    import importlib
    from importlib import resources

    mod = importlib.import_module(f"hermes_core.injection.{module}")
    guarded: list[bool] = []
    real_load = np.load

    def load(*args: Any, **kwargs: Any) -> Any:
        guarded.append(not gc.isenabled())
        return real_load(*args, **kwargs)

    monkeypatch.setattr(mod.np, "load", load)
    with resources.as_file(resources.files("hermes_core").joinpath("data", mod.MODEL_FILE)) as path:
        got = getattr(mod, model).from_file(path)
    assert got is not None and guarded == [True]


def test_routing_parses_its_conditions_when_the_router_is_built_and_never_per_request(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard's module doc bounds when a parse of ours can meet a foreign one: rule conditions
    are parsed when the router is built, once per text; a routed request parses nothing."""
    from hermes_core.agent.smart_routing import Router
    from hermes_core.config import parse_yaml

    router = Router(parse_yaml("""
llm:
  routing:
    default_model: gpt-4o
    fast_model: gpt-4o-mini
    rules: [{condition: "words < 3 and not needs_reasoning and turn_count >= 0", model: fast_model}]
""").llm.routing)

    def no_parse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an AST was built while routing a request")

    monkeypatch.setattr(ast, "parse", no_parse)
    for text in ("hi", "Why does ice float on water?", "证明任意两个奇数之和是偶数"):
        router.select(text)
    compile_condition("words < 3 and not needs_reasoning and turn_count >= 0")   # cached text


def test_a_child_forked_while_a_thread_was_parsing_parses_and_collects(
        in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    """The skill warm-up thread loading an ``.npz`` (its headers parsed under the guard) when a
    server forked its workers: the guard's lock stayed held in the child, and collection stayed
    off for the child's whole life, the block that turns it on again being on a thread the
    child does not have."""
    assert gc.isenabled()

    def child() -> object:
        was = gc.isenabled()
        return was, ast.dump(parse_expression("1 + 1").body) == ast.dump(ast.parse("1 + 1", mode="eval").body)

    with held_by_a_thread(holding_ast()):
        assert in_forked_child(child) == (True, True)
    assert gc.isenabled()
