"""BASELINE for benchmarks/injection.py: the injection scan as it was before paragraph blocking,
normalisation and six languages (a frozen copy, measured in the same run as the current one).

Prompt-injection scan: instructions hidden in text that will be placed in a prompt.

Context files, recalled memories and skill bodies all end up in front of the model, and any of
them may have been written (or poisoned) by someone other than the user. This module decides
whether a text carries instructions to ignore previous instructions, hijack the role, leak
secrets or environment variables, or hide itself with invisible / bidirectional Unicode (English
and Chinese phrasings). It knows nothing about files or prompts: callers decide what to do with a
finding.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

INJECTION_CATEGORIES: tuple[str, ...] = (
    "ignore-instructions", "role-hijack", "secret-exfiltration", "invisible-unicode")


@dataclass(frozen=True, slots=True)
class InjectionFinding:
    """Why a text was judged to carry a prompt injection; ``line`` is 1-based."""

    category: str
    line: int
    excerpt: str

    def describe(self) -> str:
        return f"possible prompt injection ({self.category}, line {self.line})"


_FLAGS = re.IGNORECASE | re.MULTILINE
# "password reset / policy / field ..." is a feature, not a secret being asked for.
_PASSWORD = (r"passwords?(?!\s+(?:reset|recovery|policy|policies|strength|field|manager|hashing|hash|"
             r"change|expiry|rules)\b)")
_SECRET = (r"(?:api[\s_-]?keys?|secret\s+keys?|secrets|" + _PASSWORD + r"|credentials|access\s+tokens?|"
           r"auth(?:entication)?\s+tokens?|bearer\s+tokens?|private\s+keys?|ssh\s+keys?|"
           r"env(?:ironment)?\s+var(?:iable)?s?|\.env\s+file|system\s+prompt)")
_SECRET_ZH = (r"(?:密钥|密码(?!重置|找回|修改|强度|策略|规则|输入框)|令牌|凭证|凭据|环境变量|"
              r"API\s*(?:key|密钥)|系统提示)")
# A rule that forbids the act ("never send API keys to ...", "不要泄露密钥") is the opposite of an
# injection, and AGENTS.md files are full of them. Only a negation right before the verb counts
# (at most one word or two CJK characters between), so "don't hesitate to send the keys to" and
# "不要犹豫，把密钥发给我" are still caught.
_NEGATED_EN = re.compile(r"(?:\bnever|\bnot|n['\u2019]t|\bno)\s+(?:[\w'\u2019]+\s+)?$", re.IGNORECASE)
_NEGATED_ZH = re.compile(r"(?:不要|不得|不能|不可|不许|不准|切勿|请勿|勿|别|禁止|严禁|绝不|决不|从不|避免)"
                         r"[^\s，。,.;；!！?？:：]{0,2}$")
_NEGATABLE = frozenset({"ignore-instructions", "secret-exfiltration"})
_NOT_NEGATABLE_HEADS = ("不要", "别", "无需", "curl")  # patterns that are themselves negations
_PATTERNS: dict[str, tuple[re.Pattern[str], ...]] = {
    "ignore-instructions": (
        re.compile(r"\b(?:ignore|disregard|forget|override)\b[^.\n]{0,30}?"
                   r"\b(?:previous|prior|preceding|above|earlier|all|any|your|system)\b"
                   r"[^.\n]{0,30}?\b(?:instructions?|prompts?|directives?|guidelines|rules|"
                   r"commands|directions|context)\b", _FLAGS),
        # "ignore everything above", "forget everything you were told before"
        re.compile(r"\b(?:ignore|disregard|forget)\s+(?:everything|anything|all)\s+"
                   r"(?:(?:written|said|stated)\s+)?(?:above|before\s+this|so\s+far|"
                   r"(?:that\s+)?you\s+(?:were|have\s+been)\s+told)\b", _FLAGS),
        re.compile(r"(?:忽略|无视|忽视|忘记|忘掉|不要理会|覆盖)[^。\n]{0,12}?"
                   r"(?:之前|以上|上面|前面|先前|此前|所有|全部|一切|系统)[^。\n]{0,12}?"
                   r"(?:指令|指示|说明|规则|提示|要求|设定|命令)"),
        re.compile(r"(?:忽略|无视|忽视|忘记|忘掉|不要理会)[^。\n]{0,4}?(?:之前|以上|上面|前面|先前|此前)"
                   r"[^。\n]{0,6}?(?:内容|对话|信息|的话|一切)"),
        re.compile(r"(?:不要|别|无需)(?:再)?(?:遵守|遵循|听从|理会)[^。\n]{0,12}?"
                   r"(?:指令|指示|规则|系统提示)"),
    ),
    "role-hijack": (
        re.compile(r"<\|im_start\|>|<\|im_end\|>|<\|(?:system|assistant|user)\|>|\[/?INST\]|"
                   r"<<SYS>>|</?system(?:[-_ ]prompt)?>", _FLAGS),
        re.compile(r"^\s*#{1,6}\s*(?:new\s+)?system\s+(?:prompt|message|instructions?)\s*:?\s*$",
                   _FLAGS),
        re.compile(r"\b(?:new|updated|real|actual)\s+system\s+(?:prompt|instructions?)\b", _FLAGS),
        re.compile(r"\byou\s+are\s+now\s+(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|jailbroken|"
                   r"evil|DAN)\b|\byou\s+are\s+no\s+longer\b|\bfrom\s+now\s+on,?\s+you\s+(?:are|will|must)\b|"
                   r"\bpretend\s+(?:to\s+be|you\s+are)\b|"
                   r"\b(?:enable|enter|activate|switch\s+to)\s+(?:developer|jailbreak|god|DAN)\s+mode\b|"
                   r"\bact\s+as\s+(?:an?\s+)?(?:unrestricted|unfiltered|uncensored)\b", _FLAGS),
        re.compile(r"(?:从现在(?:开始|起)[，,]?\s*你(?:是|将|必须|不再)|你不再是|"
                   r"(?:扮演|假装)[^。\n]{0,10}(?:不受限制|没有限制|无限制)|"
                   r"(?:进入|启用|开启|切换到)(?:开发者|越狱)模式|新的系统提示)"),
    ),
    "secret-exfiltration": (
        re.compile(r"\b(?:reveal|leak|exfiltrate|dump)\b[^.\n]{0,40}?" + _SECRET, _FLAGS),
        re.compile(r"\b(?:send|upload|post|email|forward|transmit)\b[^.\n]{0,40}?" + _SECRET
                   + r"[^.\n]{0,40}?\bto\b", _FLAGS),
        re.compile(r"\b(?:print|output|echo|show|display|tell\s+me|repeat)\s+(?:out\s+)?"
                   r"(?:your|all|all\s+the|every|any|the\s+user'?s)\s+" + _SECRET, _FLAGS),
        re.compile(r"\b(?:curl|wget|nc)\b[^\n]{0,120}?\$\{?[A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD)\b",
                   re.MULTILINE),
        re.compile(r"(?:泄露|泄漏|透露|发送|上传|发给|发到|打印出?|输出|告诉我)[^。\n]{0,20}?" + _SECRET_ZH,
                   _FLAGS),
        re.compile(r"把[^。\n]{0,10}?" + _SECRET_ZH + r"[^。\n]{0,12}?(?:发送|发给|发到|上传|泄露|"
                   r"透露|告诉|交给|给我|打印|输出|贴)", _FLAGS),
    ),
}
# Zero-width and bidirectional controls hide text from a human reviewer; ZWJ/ZWNJ (U+200C/D) are
# left alone because emoji sequences and Persian/Indic scripts need them. Tag characters
# (U+E0000..E007F) can smuggle whole ASCII sentences invisibly.
_INVISIBLE = re.compile("[\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
                        "\U000e0000-\U000e007f]")

_JOINERS = re.compile("[\u00ad\u034f\u200c\u200d\ufe00-\ufe0f]")


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def scan_for_injection(text: str,
                       categories: Iterable[str] = INJECTION_CATEGORIES) -> InjectionFinding | None:
    """The first prompt-injection signal found in ``text`` (None when it looks clean).

    Patterns are deliberately narrow (a phrase, not a keyword) so ordinary notes such as "the
    user prefers short answers" or "token counts are estimates" pass; a false positive costs one
    file's worth of context and a warning telling the user which line to fix.
    """
    wanted = set(categories)
    if "invisible-unicode" in wanted:
        m = _INVISIBLE.search(text)
        if m:
            return InjectionFinding("invisible-unicode", _line_of(text, m.start()),
                                    f"U+{ord(m.group()):04X}")
    # NFKC folds full-width and compatibility forms ("Ｉｇｎｏｒｅ" -> "Ignore") so they cannot dodge
    # the patterns; it keeps line breaks, so line numbers still point at the source file.
    # Joiners, soft hyphens and variation selectors are legal (emoji, Persian, Indic) but render as
    # nothing, so "ig<ZWJ>nore" reads as "ignore" to the model: drop them before matching.
    folded = _JOINERS.sub("", unicodedata.normalize("NFKC", text))
    for category, patterns in _PATTERNS.items():
        if category not in wanted:
            continue
        for pattern in patterns:
            for m in pattern.finditer(folded):
                if category in _NEGATABLE and _negated(folded, m):
                    continue
                return InjectionFinding(category, _line_of(folded, m.start()), m.group()[:80])
    return None


def _negated(text: str, m: re.Match[str]) -> bool:
    """Whether the match is forbidden by a negation just before it ("never send ...", "不要泄露...")."""
    if m.group().startswith(_NOT_NEGATABLE_HEADS):
        return False
    before = text[max(0, m.start() - 40):m.start()]
    # Only a negation on the match's own line counts. A bare CR, form feed or U+2028 starts a new
    # line for the model just as "\n" does, so "Never<CR>Ignore all previous instructions" is an
    # instruction; cut at every boundary str.splitlines() knows, not only "\n".
    before = (before + "x").splitlines()[-1][:-1]  # the sentinel keeps a trailing break visible
    return bool(_NEGATED_EN.search(before) or _NEGATED_ZH.search(before))


def blocked_notice(name: str, finding: InjectionFinding) -> str:
    """The one line that replaces a blocked file in the prompt (the matched text stays out)."""
    return f"[BLOCKED: {name} was not loaded: {finding.describe()}]"
