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
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from hermes_core.agent.routing.reasoning import reasoning_cue
from hermes_core.ast_guard import parse_expression
from hermes_core.tokenize import cjk_ratio, is_cjk
from hermes_core.tokens import DEFAULT_ENCODING, count_tokens
from hermes_core.types import Candidate, Prompt

if TYPE_CHECKING:
    from hermes_core.config import RoutingSettings

# --------------------------------------------------------------------------- request features

_CODE_BLOCK = re.compile(r"```|~~~")
_URL = re.compile(r"\bhttps?://[^\s<>\"']+", re.IGNORECASE)
_ZH_WHICH = "(?:这个|这些|那个|那些|该|以下|下面的?|我的|这段|一个)?"
_ZH_RUNNABLE = "(?:命令|指令|脚本|程序|单元测试|测试|代码|迁移)"
_SHELL = re.compile(
    r"\b(?:run|execute|exec)\s+(?:this|the|that|a|an|my|these)?\s*"
    r"(?:command|commands|script|shell|program|tests?|binary|migration)s?\b"
    r"|\b(?:shell|terminal|bash|zsh|powershell|command[- ]line|cmd\.exe)\b"
    r"|(?m:^[^\S\n]*\$[^\S\n]+\S)"
    r"|\bsudo\s+\S"
    r"|\b(?:pip|npm|pnpm|yarn|apt|apt-get|brew|docker|kubectl|git|make|cargo|uv)\s+"
    r"(?:install|run|build|clone|push|pull|apply|exec|commit|up|test)\b"
    # Chinese, as the English: a place to type commands, or running names what is run (运行/执行
    # alone are also "operating" and "carrying out", 脚本 a film's script)
    r"|终端|命令行"
    rf"|(?:运行|执行|跑)(?:一下|一遍)?{_ZH_WHICH}{_ZH_RUNNABLE}"
    rf"|[把将]{_ZH_WHICH}{_ZH_RUNNABLE}[^。！？，,.!?\n]{{0,6}}?(?:运行|执行|跑)"
    # Japanese: the command line, or a thing that runs run (実行 alone also carries out a plan,
    # a school test is 実施, and a ターミナル is also an airport's)
    r"|コマンドライン"
    r"|(?:コマンド|スクリプト|テスト|プログラム|マイグレーション|ビルド)を?(?:実行|走らせ)",
    re.IGNORECASE)

# Code pasted without fences: a traceback, a diff, a SQL statement, a JSON object, a definition.
# A line start's indent is ``[^\S\n]*`` (spaces and tabs), never ``\s*``: that spans newlines and
# made n blank lines cost n² steps (100,000 took 28 s).
# Each shape is one a person's prose does not take (SQL keywords in capitals, a JSON key quoted
# before its colon, a definition at the start of a line), so talking about code is not code.
_PASTED_CODE = re.compile(
    r"Traceback \(most recent call last\)|^[^\S\n]*File \"[^\"\n]+\", line \d+"
    r"|^[^\S\n]+at [\w$.<>]+\([^)\n]*:\d+(?::\d+)?\)"                        # Java / JavaScript frames
    r"|^diff --git |^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@|^--- \S[^\n]*\n\+\+\+ \S"
    r"|\b(?:SELECT\s+(?:DISTINCT\s+)?[\w*.\"`]+(?:\s*,\s*[\w*.\"`()]+)*\s+FROM|INSERT\s+INTO"
    r"|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(?:TABLE|INDEX|VIEW))\s"
    r"|[{\[]\s*\"[^\"\n]{1,80}\"\s*:\s*(?:\"|-?\d|\[|\{|true\b|false\b|null\b)"
    # a definition's header ends as code does (``:``, ``-> T:``, ``{``, or the line), so
    # "function f(x) = x^2" and "function f(x) is continuous" are maths
    r"|^[^\S\n]*(?:async\s+def|def|function|func|fn)\s+\w+\s*\([^)\n]*\)"
    r"(?:\s*(?:->[^\n:]*)?:|[^\n=]*\{|[^\S\n]*$)"
    r"|^[^\S\n]*(?:#include\s*[<\"]|from\s+[\w.]+\s+import\s+\w|import\s+[\w.]+;?\s*$)"
    r"|^[^\S\n]*(?:public|private|protected)\s+(?:static\s+)?(?:class|void|int|[A-Z]\w*)\s",
    re.MULTILINE)

_LANGS = (r"python|javascript|typescript|java|golang|c\+\+|c#|php|kotlin"
          r"|haskell|scala|sql|bash|powershell|html|css|lua|perl|matlab"
          # names that are also words count only where a language goes ("in Go" ending a phrase,
          # "a Go function", "Go code", 用Go写); Go and R only capitalised ("go to the store")
          r"|rust|ruby|swift|dart|julia|(?-i:Go|GO|R)")
# C is also a musical key ("a song in C", "a scale in C"): only after a verb of programming
_C_LANG = r"(?-i:C)(?!\+\+|#)"
# A code verb near a code noun. Only nouns that name code alone ("code", "regex", "a Python
# script") count after any verb; "function", "method", "script", "program", "algorithm", "test"
# also name a liver's function, a wedding script, a concert program, a school test: those count
# after a making verb when a purpose clause follows ("a script to rename files", "a function that
# returns") or when they point at something pasted ("this function"), and after refactor/debug.
# "explain" and "review" take only the nouns that name code alone.
_EN_MAKE_VERB = r"write|writing|implement|fix|rewrite|port|generate|optimi[sz]e"
_EN_TALK_VERB = r"review|explain"
_EN_CODE_ONLY_VERB = r"refactor|debug"
_EN_CODE_VERB = rf"{_EN_MAKE_VERB}|{_EN_TALK_VERB}|{_EN_CODE_ONLY_VERB}"
_EN_WEAK_NOUN = r"functions?|methods?|scripts?|programs?|algorithms?|quer(?:y|ies)|tests?|class(?:es)?"
_EN_CODE_NOUN = (r"code(?!\s+of\b)|regex(?:es)?|regular expressions?|unit tests?|snippets?|sql"
                 r"|endpoints?|parsers?|lexers?|compilers?|codebase"
                 r"|(?:recursive|iterative|async|asynchronous|lambda|callback|helper)\s+"
                 r"(?:functions?|methods?)"
                 r"|(?:this|these|the following|the above)\s+(?:" + _EN_WEAK_NOUN + r")"
                 r"|my\s+(?:functions?|methods?|scripts?|quer(?:y|ies)|algorithms?)"
                 r"|(?:" + _LANGS + "|" + _C_LANG + r")\s+(?:" + _EN_WEAK_NOUN + r")"
                 r"|classes? (?:in|for) (?:" + _LANGS + r")")
# Chinese (simplified and traditional) and Japanese put the verb and the thing in either order.
# 函数 is also school maths (函数f(x)=x²), 算法题 a puzzle, 接口人 a contact person, a video's
# 脚本 its script: those are not code. 解释 takes only the nouns that name code alone.
_ZH_CODE_VERB = (r"写|寫|编写|編寫|实现|實現|修复|修復|修改|调试|調試|重构|重構|优化|優化|生成"
                 r"|改")
_ZH_TALK_VERB = r"解释|解釋"
_ZH_CODE_ONLY_NOUN = r"代码|代碼|程式碼|正则|正則|单元测试|單元測試|bug|SQL|sql"
_ZH_CODE_NOUN = (_ZH_CODE_ONLY_NOUN
                 + r"|(?:函数|函數)(?!\s*[a-zA-Z]\s*[(=（])|(?:算法|演算法)(?![题題])|接口(?!人)"
                 r"|(?:脚本|腳本)(?<!(?:视频|視頻|直播|电影|電影|广告|廣告|带货|帶貨)..)"
                 r"(?<!(?:视频|視頻|直播|电影|電影|广告|廣告|带货|帶貨)的..)")
_ZH_NOT_PROSE = (r"(?![^。！？?!\n]{0,8}?(?:文章|报告|報告|通知|方案|模板|文档|文檔|培训|培訓|流程"
                 r"|措辞|措辭|求职|求職|总结|總結|课程|課程))")
_JA_CODE_NOUN = r"関数|コード|スクリプト|正規表現|単体テスト|ユニットテスト|テストコード"
_JA_WEAK_NOUN = r"プログラム|テスト"      # also a festival's programme, a school test
_JA_CODE_VERB = r"書|実装|修正|デバッグ|作成|作っ|作る|リファクタ"
_JA_CODE_ONLY_NOUN = r"コード|正規表現|単体テスト|ユニットテスト"   # 説明 takes only these
_ASKS_FOR_CODE = re.compile(
    rf"\b(?:{_EN_CODE_VERB})\b[^.?!\n]{{0,40}}?\b(?:{_EN_CODE_NOUN})\b"
    rf"|\b(?:{_EN_MAKE_VERB})\b[^.?!\n]{{0,40}}?\b(?:{_EN_WEAK_NOUN})\s+(?:that|which|to\s+\w)"
    rf"|\b(?:{_EN_CODE_ONLY_VERB})\b[^.?!\n]{{0,40}}?\b(?:{_EN_WEAK_NOUN})\b"
    r"|\b(?:fix|debug)\b[^.?!\n]{0,40}?\bbugs?\b"
    rf"|\b(?:how\s+(?:do|can|should|would)\s+(?:i|you|we)|how\s+to|{_EN_CODE_VERB})\b"
    rf"[^.?!\n]{{0,60}}?"
    # the language ends the phrase: "with ruby stones", "with java beans", "R&D" and the bank
    # network SWIFT are not code; "with Julia", "with Ruby" are people, "starting with R" a letter
    rf"\b(?:in|using|with(?!\s+(?:julia|ruby|(?-i:R))\b))\s+(?!(?-i:SWIFT)\b)(?:{_LANGS})\b(?!\s*'s)"
    r"(?=\s*(?:$|[?.!,;:)]|(?:using|with|without|and|or|for|to|so|that|when|if|code|\d)\b))"
    rf"|\b(?:implement|implementing|port|rewrite|compile|optimi[sz]e)\b"
    # "rewrite this melody in C": a key
    r"(?![^.?!\n]{0,60}?\b(?:songs?|melod(?:y|ies)|chords?|progressions?|tunes?|scales?|music"
    r"|riffs?|pieces?|arrangements?)\b)"
    rf"[^.?!\n]{{0,60}}?"
    rf"\b(?:in|using)\s+{_C_LANG}(?=\s*(?:$|[?.!,;:)]))"
    # "Go code", "this Rust code": the language and code name code together; a bank's SWIFT
    # code ("the Swift code for HSBC") is Swift code only pointed at ("this Swift code")
    rf"|\b(?:(?:this|my|our|your|these)\s+swift|(?!swift\b)(?:{_LANGS})|{_C_LANG})\s+code\b"
    r"(?!\s+of\b)"
    # ... unless what is written is prose about code: an article, a notice, a plan, a template
    rf"|(?:{_ZH_CODE_VERB})[^。！？?!\n]{{0,20}}?(?:{_ZH_CODE_NOUN}){_ZH_NOT_PROSE}"
    rf"|(?:{_ZH_TALK_VERB})[^。！？?!\n]{{0,20}}?(?:{_ZH_CODE_ONLY_NOUN})"
    rf"|(?:{_ZH_CODE_NOUN})[^。！？?!\n]{{0,8}}?(?:报错|報錯|出错|出錯|怎么改|怎麼改|有问题|有問題"
    r"|改成|改为|改為|重构|重構|优化|優化|修复|修復|转成|轉成|翻译成|翻譯成)"
    rf"|(?:用|使用|在)\s*(?:{_LANGS}|{_C_LANG})\s*(?:语言|語言)?\s*(?:里|裡|中)?\s*"
    r"(?:写|寫|实现|實現|怎么|怎麼|如何)"
    rf"|(?:{_JA_CODE_NOUN})[^。！？?!\n]{{0,12}}?(?:{_JA_CODE_VERB})"
    rf"|(?:{_JA_WEAK_NOUN})[^。！？?!\n]{{0,12}}?(?:書|実装|修正|デバッグ|リファクタ)"
    rf"|(?:{_JA_CODE_ONLY_NOUN})[^。！？?!\n]{{0,12}}?(?:説明|解説)"
    # Pythonで書いて, Pythonでリストを逆順にする方法 (用Python写 / 怎么); "Rで始まる名前" is a letter
    rf"|(?:{_LANGS}|{_C_LANG})\s*で(?!始|終)[^。！？?!\n]{{0,20}}?"
    r"(?:書|実装|どう(?:やって|すれば)|方法|には)",
    re.IGNORECASE)

# 解释这个函数 points at something pasted: code, unless the message is school maths (a formula
# f(x)=..., y=..., x², or a word of the maths class). A code identifier (parse_csv, getUser,
# load()) settles it as code either way.
_ZH_EXPLAIN_POINTED = re.compile(
    r"(?:解释|解釋|讲解|講解|说明|說明)[^。！？?!\n]{0,6}?"
    r"(?:这个|這個|这段|這段|该|該|以下|下面的?|我的|此)\s*(?:函数|函數|方法)"
    # この関数を説明して: the thing first (関数電卓 is a calculator)
    r"|(?:この|その|次の|以下の|下記の|私の)\s*(?:関数|メソッド)(?!電卓)[^。！？?!\n]{0,12}?"
    r"(?:説明|解説)")
_CODE_IDENTIFIER = re.compile(
    r"\b[A-Za-z][A-Za-z0-9]*_\w+|\b[a-z]+[A-Z]\w*|\b[A-Za-z_]\w+\s*\(\s*\)")
_SCHOOL_MATHS = re.compile(
    r"\b[a-zA-Z]\s*[(（]\s*[a-zA-Z]\s*[)）]\s*=|\b[a-zA-Z]\s*=|[²³√]|\^"
    r"|几何意义|幾何意義|单调|單調|定义域|定義域|值域|图像|圖像|极值|極值|最值|奇偶|周期|导数|導數"
    r"|零点|零點|对称轴|對稱軸"
    r"|グラフ|微分|積分|導関数|定義域|値域|単調|極値|最大値|最小値|接線|漸近線|二次関数|一次関数")


def _asks_for_code(text: str) -> bool:
    if _ASKS_FOR_CODE.search(text):
        return True
    if not _ZH_EXPLAIN_POINTED.search(text):
        return False
    return bool(_CODE_IDENTIFIER.search(text)) or not _SCHOOL_MATHS.search(text)


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
    has_code: bool = False            # a fenced block, or code pasted bare (see _PASTED_CODE)
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
    fenced = bool(_CODE_BLOCK.search(text))
    ends = _ends(text)
    cue = reasoning_cue(ends)
    return RequestFeatures(
        token_estimate=int(conversation), prompt_tokens=int(total), chars=len(text), words=words,
        lines=text.count("\n") + 1 if text else 0,
        has_code_block=fenced, has_code=fenced or bool(_PASTED_CODE.search(ends)),
        asks_for_code=_asks_for_code(ends), needs_reasoning=bool(cue), reasoning_cue=cue,
        has_url=bool(_URL.search(text)),
        requires_tools=requires_tools, requires_shell_execution=bool(_SHELL.search(text)),
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
    # (model name prefix, tokens); the longest matching prefix wins
    ("gpt-4.1", 1_047_576), ("gpt-4o", 128_000), ("gpt-4-turbo", 128_000), ("gpt-4", 8_192),
    ("gpt-3.5-turbo", 16_385), ("gpt-5", 400_000), ("o1", 200_000), ("o3", 200_000),
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
