"""Routing rules: request features, the safe condition language and provider candidates.

Rule conditions are a tiny expression language, parsed with :mod:`ast` and interpreted here over a
whitelist of names and operators: never ``eval``. :func:`validate_condition` runs when the config
loads, so a typo fails at start-up naming the rule, not mid-conversation. This module depends on
nothing but value types, so the config can validate rules without importing the router.
"""

from __future__ import annotations

import ast
import functools
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from hermes_core.agent.routing.code_cues import (
    CODE_BLOCK,
    PASTED_CODE,
    URL,
    asks_for_code,
)
from hermes_core.agent.routing.joke_cues import without_joke_topics
from hermes_core.agent.routing.reasoning import reasoning_cue
from hermes_core.agent.routing.shell_cues import names_a_shell
from hermes_core.ast_guard import parse_expression
from hermes_core.tokenize import cjk_ratio, is_cjk
from hermes_core.tokens import DEFAULT_ENCODING, count_tokens
from hermes_core.types import Candidate, Prompt

if TYPE_CHECKING:
    from hermes_core.config import RoutingSettings

# --------------------------------------------------------------------------- request features

# What the code shapes and the request for code are looked for in: a message's head and tail. A
# request says what it wants at its start or end, and a 150,000-character document pasted between
# would otherwise cost more to scan than to count (a document that size routes on its size).
CODE_SCAN_CHARS = 8_000


def _ends(text: str) -> str:
    if len(text) <= 2 * CODE_SCAN_CHARS:
        return text
    return text[:CODE_SCAN_CHARS] + "\n" + text[-CODE_SCAN_CHARS:]


@dataclass(frozen=True, slots=True)
class RequestFeatures:
    """What the rules and the audit log know about a request (never its text).

    ``token_estimate`` is the conversation this turn adds to the model's reading: the per-turn
    context, the history and the message, without the cached system prefix and tool list (a
    2,000-token persona must not make every "hi" a long request). ``prompt_tokens`` is everything
    sent, system prefix included: what matters against a model's context window.
    """

    token_estimate: int = 0
    prompt_tokens: int = 0
    chars: int = 0
    words: int = 0
    lines: int = 0
    has_code_block: bool = False
    has_code: bool = False            # a fenced block, or code pasted bare (see PASTED_CODE)
    asks_for_code: bool = False       # a request to write, fix or explain code (any language)
    needs_reasoning: bool = False     # a proof, derivation, trade-off analysis... (see reasoning)
    reasoning_cue: str = ""           # which of those, to say in the route's reason
    has_url: bool = False
    requires_tools: bool = False
    requires_shell_execution: bool = False
    turn_count: int = 0
    attachments: int = 0
    cjk_ratio: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """The features by name. Every field is a scalar, so no deep copy (``dataclasses.asdict``
        recursed and copied on every route)."""
        return {name: getattr(self, name) for name in _FEATURE_FIELDS}


_FEATURE_FIELDS = tuple(f.name for f in fields(RequestFeatures))


def last_user_text(prompt: Prompt) -> str:
    for m in reversed(prompt.messages):
        if m.role == "user":
            return m.content
    return prompt.messages[-1].content if prompt.messages else ""


def request_size(prompt_or_text: Prompt | str,
                 encoding: str = DEFAULT_ENCODING) -> tuple[int, int]:
    """``(conversation, total)`` tokens of the request (see :class:`RequestFeatures`), counted in
    ``encoding``; a Prompt the builder counted (``tokens["total"]``) keeps its counts, made in
    the encoding the agent built it in."""
    if isinstance(prompt_or_text, Prompt):
        p = prompt_or_text
        if p.tokens and "total" in p.tokens:
            total = int(p.tokens["total"])
            conversation = total - int(p.tokens.get("system", 0)) - int(p.tokens.get("tools", 0))
            return conversation, total
        conversation = count_tokens("\n".join([p.context, *(m.content for m in p.messages)]),
                                    encoding)
        return conversation, conversation + count_tokens(p.system, encoding)
    n = count_tokens(prompt_or_text, encoding)
    return n, n


def extract_features(prompt_or_text: Prompt | str, *, requires_tools: bool = False,
                     turn_count: int = 0, attachments: int = 0,
                     encoding: str = DEFAULT_ENCODING) -> RequestFeatures:
    """Features of the request. For a Prompt, size counts everything sent (system, context,
    history), while code/URL/shell intent look at the latest user message only. ``encoding``:
    the tokenizer the size is counted in (the router passes the model's own family's)."""
    text = last_user_text(prompt_or_text) if isinstance(prompt_or_text, Prompt) else prompt_or_text
    conversation, total = request_size(prompt_or_text, encoding)
    ratio = cjk_ratio(text) if text else 0.0
    words = len(text.split())
    if ratio:  # a CJK character reads as a word; the rest splits on whitespace
        cjk = sum(1 for ch in text if is_cjk(ch))
        words = cjk + len("".join(" " if is_cjk(ch) else ch for ch in text).split())
    fenced = bool(CODE_BLOCK.search(text))
    ends = _ends(text)
    has_code = fenced or bool(PASTED_CODE.search(ends))
    has_url, shell_named = bool(URL.search(text)), names_a_shell(text)
    # a shell a joke is about ("Tell me a bash joke") is none to run
    shell = shell_named and ((masked := without_joke_topics(text)) is text or names_a_shell(masked))
    # the cue need not look again for the shapes just searched for; a long text's head and tail
    # are joined at a cut that may make one (a line start, a word edge), so it looks there
    cue = reasoning_cue(ends, code_shapes=ends is not text or has_code or has_url or shell_named)
    return RequestFeatures(
        token_estimate=int(conversation), prompt_tokens=int(total), chars=len(text), words=words,
        lines=text.count("\n") + 1 if text else 0,
        has_code_block=fenced, has_code=has_code,
        asks_for_code=asks_for_code(ends), needs_reasoning=bool(cue), reasoning_cue=cue,
        has_url=has_url,
        requires_tools=requires_tools, requires_shell_execution=shell,
        turn_count=turn_count, attachments=attachments, cjk_ratio=round(ratio, 4))


# --------------------------------------------------------------------------- the rule language

FEATURE_NAMES = tuple(RequestFeatures.__dataclass_fields__)
NAMES = (*FEATURE_NAMES, "message")   # ``message``: the latest user text, lower-cased
MAX_CONDITION_CHARS = 500
MAX_CONDITION_DEPTH = 100   # the checker and the evaluator recurse once (or twice) a level

_BOOL_OPS: dict[type[ast.boolop], str] = {ast.And: "and", ast.Or: "or"}
_CMP_OPS: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}
_BIN_OPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: lambda a, b: _times(a, b),
    ast.Div: lambda a, b: a / b if b else 0.0}
_UNARY_OPS: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.Not: operator.not_, ast.USub: operator.neg}

Condition = Callable[[Mapping[str, Any]], bool]


def _times(a: Any, b: Any) -> Any:
    """Numbers only: ``"ab" * 99999999999`` is a MemoryError when the config loads, and
    ``message * 999999999`` passes the trial run on an empty message, then builds gigabytes on
    every turn. No routing rule needs text repeated."""
    if isinstance(a, str) or isinstance(b, str):
        raise TypeError("text cannot be multiplied")
    return a * b


def _check(node: ast.AST) -> None:
    if isinstance(node, ast.Expression):
        _check(node.body)
    elif isinstance(node, ast.BoolOp):
        if type(node.op) not in _BOOL_OPS:
            raise ValueError(f"operator {type(node.op).__name__} is not allowed")
        for v in node.values:
            _check(v)
    elif isinstance(node, ast.Compare):
        for op in node.ops:
            if type(op) not in _CMP_OPS:
                raise ValueError(f"comparison {type(op).__name__} is not allowed "
                                 "(use <, <=, >, >=, ==, !=, in, not in)")
        _check(node.left)
        for c in node.comparators:
            _check(c)
    elif isinstance(node, ast.BinOp):
        if type(node.op) not in _BIN_OPS:
            raise ValueError(f"operator {type(node.op).__name__} is not allowed (use + - * /)")
        _check(node.left)
        _check(node.right)
    elif isinstance(node, ast.UnaryOp):
        if type(node.op) not in _UNARY_OPS:
            raise ValueError(f"operator {type(node.op).__name__} is not allowed (use not, -)")
        _check(node.operand)
    elif isinstance(node, ast.Name):
        if node.id not in NAMES:
            raise ValueError(f"unknown name '{node.id}'; known names: {', '.join(NAMES)}")
    elif isinstance(node, ast.Constant):
        if not isinstance(node.value, bool | int | float | str):
            raise ValueError(f"constant {node.value!r} is not allowed")
    else:
        raise ValueError(f"{type(node).__name__} is not allowed in a rule condition "
                         "(names, numbers, strings, and/or/not, comparisons, + - * / only)")


def _eval(node: ast.AST, env: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Expression):
        return _eval(node.body, env)
    if isinstance(node, ast.BoolOp):
        if isinstance(node.op, ast.And):
            return all(_eval(v, env) for v in node.values)
        return any(_eval(v, env) for v in node.values)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, env)
        for op, comp in zip(node.ops, node.comparators, strict=True):
            right = _eval(comp, env)
            if not _CMP_OPS[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.BinOp):
        return _BIN_OPS[type(node.op)](_eval(node.left, env), _eval(node.right, env))
    if isinstance(node, ast.UnaryOp):
        return _UNARY_OPS[type(node.op)](_eval(node.operand, env))
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.Constant):
        return node.value
    raise ValueError(f"{type(node).__name__} is not allowed")  # unreachable after _check


def _depth(tree: ast.AST) -> int:
    """How many levels the tree nests, counted without recursion."""
    deepest, level = 0, [tree]
    while level:
        deepest += 1
        level = [child for node in level for child in ast.iter_child_nodes(node)]
    return deepest


@functools.lru_cache(maxsize=256)
def _parsed(text: str) -> ast.Expression:
    """The checked tree of a condition, parsed once per text (under the process-wide AST guard:
    see :mod:`hermes_core.ast_guard`); the tree is only read, never changed, after this."""
    try:
        tree = parse_expression(text)
    except SyntaxError as e:
        raise ValueError(f"not a valid expression: {e.msg} at column {e.offset}") from None
    except ValueError as e:
        raise ValueError(f"not a valid expression: {e}") from None
    if _depth(tree) > MAX_CONDITION_DEPTH:
        raise ValueError(f"not a valid expression: nested more than {MAX_CONDITION_DEPTH} levels deep")
    _check(tree)
    return tree


def compile_condition(text: str) -> Condition:
    """Parse and whitelist-check a condition; returns a function of the feature mapping.

    Raises ValueError naming the unknown name or operator, a syntax error, nesting deeper than
    :data:`MAX_CONDITION_DEPTH`, or a type error found by a trial run on an empty request (e.g.
    ``message > 3``)."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("the condition is empty")
    if len(text) > MAX_CONDITION_CHARS:
        raise ValueError(f"the condition is longer than {MAX_CONDITION_CHARS} characters")
    tree = _parsed(text.strip())

    def condition(env: Mapping[str, Any]) -> bool:
        return bool(_eval(tree, env))

    try:
        condition({**RequestFeatures().as_dict(), "message": ""})
    except (TypeError, ArithmeticError) as e:
        raise ValueError(f"the condition cannot be evaluated: {e}") from None
    return condition


def condition_names(text: str) -> tuple[str, ...]:
    """The feature names a valid condition reads, in order of first use (for a route's reason)."""
    seen: dict[str, None] = {}
    for node in ast.walk(_parsed(text.strip())):
        if isinstance(node, ast.Name) and node.id != "message":
            seen.setdefault(node.id, None)
    return tuple(seen)


def validate_condition(text: str) -> None:
    """Raise ValueError with a clear message when ``text`` is not a valid rule condition."""
    compile_condition(text)


# --------------------------------------------------------------------------- candidates

KNOWN_CONTEXT_WINDOWS: tuple[tuple[str, int], ...] = (
    # (model name prefix, tokens); the longest matching prefix wins, so a family member with
    # another window is listed by its own name (gpt-4-32k is not gpt-4's 8,192): a window too
    # small here refuses, before sending, a request the model takes
    ("gpt-4.1", 1_047_576), ("gpt-4.5", 128_000), ("gpt-4o", 128_000), ("gpt-4-turbo", 128_000),
    ("gpt-4-1106", 128_000), ("gpt-4-0125", 128_000), ("gpt-4-vision", 128_000),
    ("gpt-4-32k", 32_768), ("gpt-4", 8_192),
    ("gpt-3.5-turbo-instruct", 4_096), ("gpt-3.5-turbo", 16_385), ("gpt-5", 400_000),
    ("o1-mini", 128_000), ("o1-preview", 128_000), ("o1", 200_000), ("o3", 200_000),
    ("o4", 200_000), ("claude", 200_000),
)


def context_window(model: str, routing: RoutingSettings | None = None) -> int | None:
    """A model's context window: configured first, then the known table, else None."""
    if routing is not None and model in routing.context_windows:
        return routing.context_windows[model]
    best: tuple[int, int] | None = None
    for prefix, size in KNOWN_CONTEXT_WINDOWS:
        if model.startswith(prefix) and (best is None or len(prefix) > best[0]):
            best = (len(prefix), size)
    return best[1] if best else None


def long_context_fallback(model: str, routing: RoutingSettings) -> str | None:
    """The model to move to after a context-window 400, when it is larger (unknown = larger)."""
    target = routing.long_context_model
    if not target or target == model:
        return None
    have, want = context_window(model, routing), context_window(target, routing)
    if have is not None and want is not None and want <= have:
        return None
    return target


def guess_provider(model: str) -> str:
    return "anthropic" if model.startswith("claude") else "openai"


def candidates_for(model: str, routing: RoutingSettings) -> tuple[Candidate, ...]:
    """Providers serving ``model`` by priority (lower number first; config order breaks ties),
    then every other provider with its equivalent model (``equivalents`` mapping, else its first
    listed model). A provider listing no models serves any model."""
    providers = sorted(routing.providers, key=lambda p: p.priority)
    if not providers:
        return (Candidate(guess_provider(model), model),)
    serving = [p for p in providers if not p.models or model in p.models]
    out = [Candidate(p.name, model) for p in serving]
    for p in providers:
        if p in serving:
            continue
        eq = p.equivalents.get(model) or (p.models[0] if p.models else None)
        if eq:
            out.append(Candidate(p.name, eq))
    return tuple(out)


SLOT_NAMES = ("default_model", "fast_model", "code_model", "long_context_model")


def unserved_models(routing: RoutingSettings,
                    named: frozenset[str] | set[str] | None = None) -> tuple[tuple[str, str], ...]:
    """``(key path, model)`` of each model the routing names that no provider lists or maps.

    :func:`candidates_for` sends such a model's requests to each provider's first listed model,
    so a misspelt ``fast_model`` silently cost every short request the dearer model while the
    route still named the cheap one. Only when every provider lists its models (one that lists
    none serves any model); ``named``: the slots set in the file (an unset default is not the
    person's typo)."""
    if not routing.providers or any(not p.models for p in routing.providers):
        return ()
    served = {m for p in routing.providers for m in (*p.models, *p.equivalents)}
    out: list[tuple[str, str]] = []
    for slot in SLOT_NAMES:
        model = getattr(routing, slot)
        if model and model not in served and (named is None or slot in named):
            out.append((f"llm.routing.{slot}", model))
    for i, rule in enumerate(routing.rules):
        target = rule.model
        if target not in SLOT_NAMES and f"{target}_model" not in SLOT_NAMES \
                and target not in served:
            out.append((f"llm.routing.rules[{i}].model", target))
    return tuple(out)
