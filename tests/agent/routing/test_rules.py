"""Tests of ``hermes_core/agent/routing/rules.py``.

Router: features, the safe rule language, rule/classifier/default selection, candidates.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hermes_core.agent.routing.reasoning import reasoning_cue
from hermes_core.agent.routing.rules import (
    candidates_for,
    compile_condition,
    context_window,
    extract_features,
    long_context_fallback,
    validate_condition,
)
from hermes_core.agent.smart_routing import Router
from hermes_core.config import load_settings, parse_yaml
from hermes_core.errors import ConfigError
from hermes_core.types import Candidate, Message, Prompt


@pytest.mark.parametrize(
    ("text", "field", "expected"),
    [
        ("hello world", "words", 2),
        ("hello world", "token_estimate", 2),
        ("see ```py\nprint(1)\n```", "has_code_block", True),
        ("no code here", "has_code_block", False),
        ("read https://example.com/x please", "has_url", True),
        ("please run this command for me", "requires_shell_execution", True),
        ("$ ls -la", "requires_shell_execution", True),
        ("git clone the repo", "requires_shell_execution", True),
        ("帮我在终端执行这个脚本", "requires_shell_execution", True),
        ("what a lovely morning run", "requires_shell_execution", False),
        ("运行这个脚本", "requires_shell_execution", True),
        ("把测试跑一下", "requires_shell_execution", True),
        ("请执行以下命令", "requires_shell_execution", True),
        ("打开命令行", "requires_shell_execution", True),
        # "run"/"execute"/"script" as everyday words, as "run" alone is in English
        ("这个程序运行很慢，怎么提高执行力", "requires_shell_execution", False),
        ("公司的运行成本太高了", "requires_shell_execution", False),
        ("这部电影的脚本写得很好", "requires_shell_execution", False),
        ("他的执行力很强", "requires_shell_execution", False),
        ("我喜欢吃苹果", "words", 6),
        ("我喜欢吃苹果", "cjk_ratio", 1.0),
        ("Привет, как дела? 猫", "cjk_ratio", 0.0714),   # Russian with one Chinese character
        ("a\nb\nc", "lines", 3),
        # code pasted bare, and asking for code, apart from talking about it
        ("    at com.acme.Main.run(Main.java:42)", "has_code", True),
        ('payload: {"id": 3, "ok": true}', "has_code", True),
        ("from pathlib import Path", "has_code", True),
        ("I will select a gift from the shop and update you", "has_code", False),
        ("Python's history begins in 1989", "has_code", False),
        ("see ```py\nprint(1)\n```", "has_code", True),
        ("debug the exception in my java method", "asks_for_code", True),
        ("把这段代码改成异步的", "asks_for_code", True),
        ("这段代码为什么报错", "asks_for_code", True),
        ("このスクリプトを修正して", "asks_for_code", True),
        # Japanese, as the Chinese: the code pointed at or named, run where commands run
        ("この関数を説明して", "asks_for_code", True),
        ("このコードが何をしているか解説してください", "asks_for_code", True),
        ("Pythonでファイル名を一括変更する方法は？", "asks_for_code", True),
        ("この関数電卓の使い方を説明して", "asks_for_code", False),
        ("この関数のグラフを説明して：y=x²", "asks_for_code", False),
        ("Pythonの歴史を教えてください", "asks_for_code", False),
        ("テストを実行して", "requires_shell_execution", True),
        ("ターミナルで次のコマンドを実行して", "requires_shell_execution", True),
        ("来週テストを実施します", "requires_shell_execution", False),
        ("計画を実行に移すには？", "requires_shell_execution", False),
        ("What is the code of conduct here?", "asks_for_code", False),
        ("how to say thank you in French", "asks_for_code", False),
        ("给妈妈写一封生日贺卡", "asks_for_code", False),
        # a how-to in a named language without 用 before it, as "How do I ... in Python?"
        ("python怎么反转列表", "asks_for_code", True),
        ("Python如何读取文件", "asks_for_code", True),
        ("python 里怎么读取json", "asks_for_code", True),
        ("python中如何删除字典的键", "asks_for_code", True),
        ("SQL怎么去重", "asks_for_code", True),
        # an opinion of the language, or learning it, is not a request for code
        ("Python怎么样", "asks_for_code", False),
        ("java怎么学", "asks_for_code", False),
        ("python是什么", "asks_for_code", False),
    ],
)
def test_features_table(text: str, field: str, expected: object) -> None:
    assert getattr(extract_features(text), field) == expected


def test_features_of_a_prompt_count_everything_but_look_at_last_user_message() -> None:
    prompt = Prompt(system="You are a careful assistant. " * 200, context="ctx",
                    messages=(Message("user", "```old code```"), Message("assistant", "ok"),
                              Message("user", "thanks")))
    f = extract_features(prompt, requires_tools=True, turn_count=3, attachments=1)
    # the cached system prefix counts against the context window, not as request size
    assert f.prompt_tokens > 1000 and f.token_estimate < 20 and not f.has_code_block
    assert (f.requires_tools, f.turn_count, f.attachments) == (True, 3, 1)


@pytest.mark.parametrize(
    ("cond", "env", "expected"),
    [
        ("token_estimate < 500 and not requires_tools", {"token_estimate": 10}, True),
        ("token_estimate < 500 and not requires_tools", {"token_estimate": 10,
                                                         "requires_tools": True}, False),
        ("has_code_block or requires_shell_execution", {"requires_shell_execution": True}, True),
        ("token_estimate > 50000", {"token_estimate": 60000}, True),
        ("100 < chars <= 200", {"chars": 150}, True),
        ("chars / words > 10", {"chars": 100, "words": 5}, True),
        ("chars / words > 10", {"chars": 100, "words": 0}, False),   # division by zero is 0
        ("'translate' in message", {"message": "please translate this"}, True),
        ("'translate' not in message", {"message": "hi"}, True),
        ("-turn_count < -2", {"turn_count": 3}, True),
        ("turn_count == 0 or attachments != 0", {"turn_count": 1, "attachments": 0}, False),
    ],
)
def test_condition_evaluation(cond: str, env: dict[str, object], expected: bool) -> None:
    base = {**extract_features("").as_dict(), "message": ""}
    assert compile_condition(cond)({**base, **env}) is expected


@pytest.mark.parametrize(
    ("cond", "message"),
    [
        ("tokens < 5", "unknown name 'tokens'"),
        ("__import__('os').system('x')", "Call is not allowed"),
        ("message.upper() == 'X'", "not allowed"),
        ("chars ** 2 > 3", "operator Pow is not allowed"),
        ("chars // 2 > 3", "operator FloorDiv is not allowed"),
        ("chars is None", "comparison Is is not allowed"),
        ("[1][0]", "Subscript is not allowed"),
        ("lambda: 1", "Lambda is not allowed"),
        ("chars <", "not a valid expression"),
        ("", "empty"),
        ("chars > " + "1" * 600, "longer than"),
        ("message > 3", "cannot be evaluated"),
        ("chars if words else 1", "IfExp is not allowed"),
        ("~chars", "Invert is not allowed"),
        # text repeated: a MemoryError when the config loads, or gigabytes on every turn
        ('"ab" * 99999999999 == ""', "text cannot be multiplied"),
        ('message * 999999999 == ""', "text cannot be multiplied"),
        ('3 * message == ""', "text cannot be multiplied"),
    ],
)
def test_condition_rejections(cond: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        validate_condition(cond)


def test_bad_rule_is_a_config_error_naming_rule_and_line(tmp_path: Path) -> None:
    cfg = tmp_path / "config.yaml"
    cfg.write_text("llm:\n  routing:\n    rules:\n      - condition: chars > 1\n        model: a\n"
                   "      - condition: tokenz > 5\n        model: b\n")
    with pytest.raises(ConfigError) as ei:
        load_settings(cfg)
    msg = str(ei.value)
    assert "rule 2" in msg and "tokenz" in msg and "llm.routing.rules[1].condition" in msg
    assert ei.value.line == 6 and str(cfg) in msg


ROUTING = """
llm:
  routing:
    default_model: gpt-4o
    fast_model: gpt-4o-mini
    code_model: claude-sonnet-4
    long_context_model: gpt-4.1
    providers:
      - {name: openai, priority: 1, models: [gpt-4o, gpt-4o-mini, gpt-4.1]}
      - {name: anthropic, priority: 2, models: [claude-sonnet-4, claude-haiku],
         equivalents: {gpt-4o-mini: claude-haiku}}
      - {name: local, priority: 3, models: [llama3], endpoint: "http://127.0.0.1:11434/v1"}
"""


@pytest.fixture
def router() -> Router:
    return Router.from_settings(parse_yaml(ROUTING))


@pytest.mark.parametrize(
    ("text", "kwargs", "model", "reason"),
    [
        ("hi", {}, "gpt-4o-mini", "rule 3"),
        ("hi", {"requires_tools": True}, "gpt-4o", "default_model"),
        ("fix ```x = 1```", {}, "claude-sonnet-4", "rule 2"),
        ("word " * 60_000, {}, "gpt-4.1", "rule 1"),
        ("hi", {"requested_model": "o3"}, "o3", "requested model"),
    ],
)
def test_select_table(router: Router, text: str, kwargs: dict[str, object], model: str,
                      reason: str) -> None:
    d = router.select(text, **kwargs)  # type: ignore[arg-type]
    assert d.model == model and d.reason.startswith(reason)


def test_candidates_priority_then_equivalents(router: Router) -> None:
    assert router.select("hi").candidates == (
        Candidate("openai", "gpt-4o-mini"), Candidate("anthropic", "claude-haiku"),
        Candidate("local", "llama3"))
    assert router.select("hi", requires_tools=True).candidates == (
        Candidate("openai", "gpt-4o"), Candidate("anthropic", "claude-sonnet-4"),
        Candidate("local", "llama3"))


def test_candidates_without_providers_guess_from_model_name() -> None:
    routing = parse_yaml("").llm.routing
    assert candidates_for("claude-x", routing) == (Candidate("anthropic", "claude-x"),)
    assert candidates_for("gpt-4o", routing) == (Candidate("openai", "gpt-4o"),)


def test_explicit_rules_and_literal_models() -> None:
    s = parse_yaml("""
llm:
  routing:
    default_model: base
    rules:
      - {condition: "'translate' in message", model: translator-1}
      - {condition: "turn_count > 10", model: long_context_model}
""")
    r = Router.from_settings(s)
    assert r.select("Translate this").model == "translator-1"
    d = r.select("x", turn_count=20)   # long_context_model unset: that rule is skipped
    assert d.model == "base" and d.reason == "default_model"


def test_context_windows_and_fallback() -> None:
    routing = parse_yaml("llm: {routing: {long_context_model: gpt-4.1, "
                         "context_windows: {my-model: 4096}}}").llm.routing
    assert context_window("gpt-4o-mini", routing) == 128_000
    assert context_window("my-model", routing) == 4096
    assert context_window("mystery", routing) is None
    assert long_context_fallback("gpt-4o", routing) == "gpt-4.1"
    assert long_context_fallback("gpt-4.1", routing) is None
    assert long_context_fallback("mystery", routing) == "gpt-4.1"


def test_missing_classifier_file_is_a_config_error(tmp_path: Path) -> None:
    s = load_settings({"home": str(tmp_path), "llm": {"routing": {"classifier": {
        "path": "nope.pkl"}}}})
    with pytest.raises(ConfigError, match="classifier file not found"):
        Router.from_settings(s)


# --------------------------------------------------------------------------- property: any condition

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from hermes_core.agent.routing.rules import NAMES  # noqa: E402

_WORDS = st.sampled_from([*NAMES, "1", "0", "1e308", "-", "+", "*", "/", "<", ">", "==", "!=", "in",
                          "not", "and", "or", "(", ")", "'a'", '""', "True", "None", "9" * 30, "[",
                          "]", ",", "**", "//", "%", "~", "lambda", "if", "else", "f'{x}'", "..."])


@settings(max_examples=200, deadline=None)
@given(st.lists(_WORDS, max_size=30).map(" ".join) | st.text(max_size=120))
def test_any_condition_compiles_or_is_one_value_error_and_runs_on_any_message(text: str) -> None:
    """A rule comes from the user's config: whatever it says, loading it is a condition or a
    ValueError (a ConfigError naming the rule), and a compiled one never raises past the router's
    TypeError/ArithmeticError guard, whatever the message."""
    try:
        condition = compile_condition(text)
    except ValueError:
        return
    for message in ("", "hello", "x" * 1000, "写一段代码 ```py\nprint(1)\n```"):
        try:
            assert condition({**extract_features(message).as_dict(), "message": message.lower()}) in (
                True, False)
        except (TypeError, ArithmeticError):
            pass


def test_code_is_looked_for_at_a_long_messages_ends() -> None:
    filler = "经济学家认为，利率的变化会影响居民的消费和储蓄。" * 2000
    assert extract_features(filler + "\n" + "def parse(path):\n    return 1").has_code
    assert extract_features("修复我代码里的bug\n" + filler).asks_for_code
    assert not extract_features(filler + "def parse(path):\n" + filler).has_code


def test_providers_of_equal_priority_are_tried_in_the_order_listed() -> None:
    routing = parse_yaml("""
llm:
  routing:
    providers:
      - {name: backup, priority: 5, endpoint: "http://127.0.0.1:9/v1"}
      - {name: openai, priority: 5}
      - {name: anthropic, priority: 1, models: [claude-sonnet-4], equivalents: {gpt-4o: claude-sonnet-4}}
""").llm.routing
    assert [c.provider for c in candidates_for("gpt-4o", routing)] == ["backup", "openai", "anthropic"]


# A command typed straight after Chinese or Japanese text (no space) is still a command: the
# tool's edge is an ASCII one, since a CJK letter is a word character too. Each True row failed.
@pytest.mark.parametrize(("text", "shell"), [
    ("他运行make test的时候报错了", True),
    ("为什么npm install装不上", True),
    ("先git pull再说", True),
    ("npm installを実行したら落ちた", True),
    ("他为什么运行得这么快", False),
    ("帮我makeup一下", False),
])
def test_a_command_written_against_cjk_text_is_a_shell_command(text: str, shell: bool) -> None:
    assert extract_features(text).requires_shell_execution is shell, text


# "up" is a command's word only after compose ("docker compose up"): "make up a story" and
# "brew up some tea" are English, and sent a story and a cup of tea to the code model (both True
# rows of a shell before).
@pytest.mark.parametrize(("text", "shell"), [
    ("Can you make up a story about a dragon?", False),
    ("Let us brew up some tea", False),
    ("Why don't scientists trust atoms? Because they make up everything.", False),
    ("run docker compose up and tell me what fails", True),
    ("docker-compose up hangs on the db service", True),
    ("make install fails with a permission error", True),
    # a tool given a flag is a command too (was False before): make -j4, npm -g, git -C
    ("why did he run make -j4", True),
    ("npm -g install fails", True),
    ("I want to make - well, bake - a cake", False),
])
def test_make_up_or_brew_up_is_english_and_compose_up_a_command(text: str, shell: bool) -> None:
    assert extract_features(text).requires_shell_execution is shell, text


def test_a_line_start_shape_never_lets_its_leading_whitespace_run_across_lines() -> None:
    # ``^\s*`` under MULTILINE spans newlines: at each of n line starts it ran to the end of the
    # blank run and backed off, n² steps. 100,000 newlines took 28.8 s in extract_features
    # (8.5 s in the code shapes' 16,000-character window, 19.8 s in the shell pattern's whole
    # text); a pasted log of blank lines must not stall a turn. Pinned on the pattern itself
    # (no timed test): the leading whitespace is horizontal only.
    from hermes_core.agent.routing import code_cues, shell_cues
    for pattern in (code_cues.PASTED_CODE, shell_cues.SHELL):
        assert re.search(r"\^\\s[*+]", pattern.pattern) is None, pattern.pattern
    # and the shapes that begin indented are still found
    assert extract_features('\n\n  File "app.py", line 3, in <module>\n').has_code
    assert extract_features("Error\n\tat com.x.Main.run(Main.java:10)\n").has_code
    assert extract_features("see\n\n    def parse(path):\n        pass").has_code
    assert extract_features("\n\n   $ ls -la").requires_shell_execution
    assert not extract_features("\n" * 5000 + " " * 5000 + "\n" * 5000).has_code


def _compile_while_another_thread_parses(condition: str, other: str) -> list[BaseException]:
    """Compile ``condition`` on this thread while, at the first garbage collection inside it, a
    second thread compiles ``other`` to the end: the hand-over a collection allows on CPython 3.11
    before 3.11.8, made certain instead of 1 run in 4. The errors either thread raised, if any."""
    import ast
    import gc
    import sys
    import threading

    go, done = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def other_thread() -> None:
        go.wait()
        try:
            compile_condition(other)
        except BaseException as e:  # reported to the test, not lost in the thread
            errors.append(e)
        done.set()

    def in_collection(phase: str, info: dict[str, int]) -> None:
        inside_parse = sys._getframe(1).f_code is ast.parse.__code__   # compile() is C: no frame
        if phase == "start" and inside_parse and not go.is_set():
            go.set()
            done.wait(10)   # the other thread runs its whole parse here, unless it must wait for us

    t = threading.Thread(target=other_thread)
    t.start()
    threshold = gc.get_threshold()
    gc.callbacks.append(in_collection)
    gc.set_threshold(1)
    try:
        compile_condition(condition)
    except BaseException as e:
        errors.append(e)
    finally:
        gc.set_threshold(*threshold)
        gc.callbacks.remove(in_collection)
        go.set()
        t.join()
    return errors


def test_two_threads_compiling_conditions_never_trip_the_shared_ast_count() -> None:
    """CPython 3.11 (before 3.11.8) counts the AST constructor's recursion in state every thread
    shares: a collection inside one thread's ast.parse let another thread's parse reset the count,
    and the first raised 'SystemError: AST constructor recursion depth mismatch' (the skill warm-up
    thread's np.load header parse did it to the chat's thread, 1 run in 4 of test_repl)."""
    long = " and ".join(f"(token_estimate > {i} or has_code)" for i in range(12))
    assert _compile_while_another_thread_parses(long, "has_url and turn_count > 2") == []


def test_a_condition_nested_deeper_than_the_stack_allows_is_a_value_error() -> None:
    """500 characters of '-' or 'not' nest hundreds of levels deep: from a deep call stack ast.parse
    or the recursive check raised RecursionError, which is not the ValueError the config's
    validation turns into a ConfigError naming the rule."""
    def at_depth(n: int, text: str) -> BaseException | None:
        if n:
            return at_depth(n - 1, text)
        try:
            compile_condition(text)
        except BaseException as e:
            return e
        return None

    import sys
    depth = sys.getrecursionlimit() - 150
    for text in ("-" * 494 + "1 > 0", "not " * 123 + "has_code", "1+" * 247 + "1>0"):
        error = at_depth(depth, text)
        assert isinstance(error, ValueError), (text[:12], error)
        assert "nested" in str(error)


def test_the_reasoning_cue_in_the_features_is_the_cue_of_the_text_read_alone() -> None:
    # the features tell the cue which code shapes they found none of, so it does not look for
    # them again; that must change no answer, whichever shapes a text holds
    from tests.agent.routing import test_reasoning as tables  # its tables: every kind of why
    texts = [row if isinstance(row, str) else row[0]
             for name in dir(tables) if name.isupper()
             for row in getattr(tables, name) if isinstance(getattr(tables, name), tuple)]
    texts += ["why did he open https://example.com/x", "why did he run npm install", "```\nx\n```"
              " why did he", "why did he paste\nTraceback (most recent call last):",
              # the joke look reads shapes as the features found them: announced or answered
              "Here's a joke: why did the intern run npm install?",
              "Why is the site down? Because https://example.com moved.",
              "Why did the chicken cross the road? Because of sudo rm."]
    assert len(texts) > 100
    for text in texts:
        assert extract_features(text).reasoning_cue == reasoning_cue(text), text


@pytest.mark.parametrize("pad", range(140, 175))
def test_the_cue_in_the_features_is_the_cue_read_alone_where_a_why_s_window_cuts_a_word(
        pad: int) -> None:
    # a why about a person reads 160 characters of its line; "shellfish" cut there was a shell
    # to the cue read alone and nothing to the features (which found no shell in the whole
    # text): the two answers differed (failed before at pad 155)
    text = ("why did he eat the " + "y " * 100)[:pad] + "shellfish at dinner"
    assert extract_features(text).reasoning_cue == reasoning_cue(text) == "", pad


@pytest.mark.parametrize("model, window", [
    ("gpt-4", 8_192), ("gpt-4-0613", 8_192),
    ("gpt-4-32k", 32_768), ("gpt-4-32k-0613", 32_768),
    ("gpt-4-1106-preview", 128_000), ("gpt-4-0125-preview", 128_000),
    ("gpt-4-vision-preview", 128_000), ("gpt-4.5-preview", 128_000),
    ("gpt-4-turbo-2024-04-09", 128_000), ("gpt-4o-2024-08-06", 128_000),
    ("gpt-3.5-turbo-instruct", 4_096), ("gpt-3.5-turbo-0125", 16_385),
    ("o1-mini", 128_000), ("o1-preview", 128_000), ("o1", 200_000),
])
def test_a_model_named_after_a_smaller_family_member_has_its_own_window(
        model: str, window: int) -> None:
    """Known windows go by the longest name prefix, and "gpt-4" (8,192) was the longest for
    gpt-4-32k and the 128k gpt-4 previews: a 20,000-token request to gpt-4-32k was refused
    before sending as too large, and a long_context_model: gpt-4-32k was skipped as "too small".
    A window too large only leaves the refusal to the provider; one too small refuses a request
    the model takes."""
    assert context_window(model) == window


@pytest.mark.parametrize("head", ["用python", "python", "在 Java 语言"])
def test_a_language_name_before_a_long_run_of_spaces_is_read_in_linear_time(head: str) -> None:
    """``用python`` then 1,000 spaces took 5 s in ``asks_for_code``: three ``\\s*`` around optional
    words split the run n² ways at each start. Twice the spaces may take about twice the time."""
    import time

    from hermes_core.agent.routing.code_cues import asks_for_code

    def took(n: int) -> float:
        start = time.process_time()
        asks_for_code(head + " " * n + "x")
        return time.process_time() - start

    small, large = took(50_000), took(100_000)
    assert large < 0.5 and large < 4 * small + 0.05, (small, large)


# review (stop 52): "shell", "terminal" and "bash" alone named a shell, so a beach find, an
# airport, an illness and a party went to the code model as commands to run. Alone, beside a
# person's things and no computer's, they are a person's; beside a computer's they stay a shell.
# Each False row failed on a26c779d.
@pytest.mark.parametrize(("text", "shell"), [
    ("I found a shell on the beach, what kind is it?", False),
    ("How do I open an oyster shell?", False),
    ("Egg shell colours for Easter", False),
    ("Shell gas station near me", False),
    ("Buy shares in Shell plc", False),
    ("The turtle hid in its shell", False),
    ("Which terminal does my flight leave from?", False),
    ("Terminal 5 at Heathrow: where is the bus stop?", False),
    ("My grandmother is terminal, how do I cope?", False),
    ("We had a bash for her birthday", False),
    ("Bash the garlic with a knife", False),
    ("Open a shell and list files", True),
    ("Which shell do I use on macOS?", True),
    ("the terminal prints an error when I type ls", True),
    ("in bash, how do I loop over files", True),
    ("my terminal at the airport wifi cannot ssh to the server", True),
    ("a bash script for my birthday party invitations", True),
])
def test_a_shell_terminal_or_bash_beside_a_person_s_things_is_no_command(
        text: str, shell: bool) -> None:
    assert extract_features(text).requires_shell_execution is shell, text
