"""Prompt-injection scan: instructions hidden in text that will be placed in a prompt.

Context files, recalled memories and skill bodies all end up in front of the model, and any of
them may have been written (or poisoned) by someone other than the user. This module decides,
paragraph by paragraph, whether a text carries instructions to ignore previous instructions,
hijack the role, leak secrets, or hide itself with invisible Unicode. It knows nothing about files
or prompts: callers decide what to do with a finding, usually :func:`guard_text`, which replaces
each hostile paragraph by a visible notice and keeps the rest (a poisoned line in MEMORY.md must
not cost the user the whole memory).

How it stays hard to evade (:mod:`hermes_core.injection.normalise`): text is matched after NFKC,
TR39 confusable folding, removal of default-ignorable code points, and in joined views where a
phrase split by line breaks, spaces or soft hyphens is whole again; base64 blobs and tag
characters are decoded and scanned too. Six languages are covered
(:mod:`hermes_core.injection.patterns`). Text the file's reader never sees (an HTML comment, an
element styled away, an ``alt`` text, a code comment, an encoded blob) is read once more on its
own, and a forged dialogue in which the model complies is a role hijack
(:mod:`hermes_core.injection.hidden`).

How it stays rarely wrong: patterns are phrases, not keywords; a rule that forbids the act
("never send API keys to ...") is not an attack; and an attack *quoted as an example* (inside a
code span, a code block, a block quote or quotation marks, in a paragraph that talks about
attacks, examples or detection) is documentation, not an instruction.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from hermes_core.injection.excuses import COMPACT_NEGATION, negated, sent_after, spoken_of
from hermes_core.injection.hidden import (
    ADDRESSED,
    ADDRESSED_ORDER,
    PHISHING_LURE,
    SET_ASIDE_CLAIM,
    HiddenSpan,
    exchange_answers,
    finished_exchange,
    forged_turn,
    hidden_spans,
    invisible,
    without_pragmas,
)
from hermes_core.injection.hijack import (
    CODE_LEAD,
    SHORT_ORDER,
    answer_convention,
    answer_hijack,
    hazardous_code,
)
from hermes_core.injection.normalise import (
    compact,
    decoded_blobs,
    flat,
    fold,
    rot13,
    unfolded,
    views,
)
from hermes_core.injection.patterns import (
    CJK_LANGUAGES,
    COMBINED,
    COMPACT,
    GATES,
    NEGATABLE,
    PERSONA_MIN,
    PERSONA_MIN_STRONG,
    PERSONA_SCENE,
    PERSONA_TRAITS,
    GatedPattern,
)
from hermes_core.injection.quotes import CODE_SPAN, QUOTE_LINE, QUOTING_SPAN, strip_quotes
from hermes_core.injection.scripts import match_scripts
from hermes_core.injection.standing import standing_order
from hermes_core.injection.verdicts import ModelRef, learned_scores, shipped_model
from hermes_core.injection.zh_grammar import negation_holds

# Opt-in: the learned scorer's e5 stage (hermes_core/injection/semantic.py), on top of "learned".
# Not a default: on the source-disjoint final texts it blocked 9.5% of role prompts (decision 50).
SEMANTIC = "learned-semantic"
# Opt-in: the same stage where it only adds, and only in data (memories): decision 66.
SEMANTIC_DATA = "learned-semantic-data"
INJECTION_CATEGORIES: tuple[str, ...] = (
    "ignore-instructions", "role-hijack", "secret-exfiltration", "invisible-unicode", "output-hijack",
    "learned")


@dataclass(frozen=True, slots=True)
class InjectionFinding:
    """Why a text was judged to carry a prompt injection; ``line`` is 1-based."""

    category: str
    line: int
    excerpt: str
    language: str = ""

    def describe(self) -> str:
        return f"possible prompt injection ({self.category}, line {self.line})"


@dataclass(frozen=True, slots=True)
class Paragraph:
    """One block of a text: a paragraph, a fenced code block, or a MEMORY.md entry."""

    text: str
    line: int          # 1-based line of its first line in the whole text
    code: bool = False


@dataclass(frozen=True, slots=True)
class GuardedText:
    """A text with each hostile paragraph replaced by a notice; ``findings`` one per blocked one."""

    text: str
    findings: tuple[InjectionFinding, ...]
    paragraphs: int

    @property
    def blocked(self) -> int:
        return len(self.findings)

    @property
    def all_blocked(self) -> bool:
        return bool(self.findings) and len(self.findings) == self.paragraphs


# --------------------------------------------------------------------------- paragraphs

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_ENTRY_SEP = re.compile(r"^\s*§\s*$")   # MEMORY.md / USER.md entry delimiter


def split_paragraphs(text: str, first_line: int = 1) -> list[Paragraph]:
    """Blank lines (and ``§`` entry lines) separate paragraphs; a fenced code block is one block
    even when it holds blank lines."""
    out: list[Paragraph] = []
    lines = text.split("\n")
    buf: list[str] = []
    fence: str | None = None

    def flush(code: bool = False) -> None:
        if any(ln.strip() for ln in buf):
            out.append(Paragraph("\n".join(buf), start, code))
        buf.clear()

    start = first_line
    for i, line in enumerate(lines, start=first_line):
        m = _FENCE.match(line)
        if fence is not None:
            buf.append(line)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
                flush(code=True)
                start = i + 1
            continue
        if m:
            flush()
            fence, start = m.group(1), i
            buf.append(line)
            continue
        if not line.strip() or _ENTRY_SEP.match(line):
            flush()
            start = i + 1
            continue
        if not buf:
            start = i
        buf.append(line)
    flush(code=fence is not None)
    return out


# --------------------------------------------------------------------------- quotation

# Words that frame quoted text as an example, a report or a detection rule, not an order.
_FRAMING = re.compile(
    r"\b(?:examples?|e\.g\.|for\s+instance|such\s+as|sample|payloads?|attacks?|attackers?|injections?|"
    r"jailbreaks?|malicious|adversarial|phrases?|patterns?|detect\w*|flag\w*|block\w*|red[\s-]team\w*|"
    r"test\s+cases?|fixtures?|quoted?|strings?\s+like|looks?\s+like|signatures?|regex\w*|phishing|"
    r"prompt\s+injection|we\s+(?:saw|see|observed)|reported|classif\w*|filter\w*|scanner|warn\w*|"
    # a warning about what pages say: "watch for pages that say \"…\"", "beware of emails that ask …"
    r"(?:watch(?:\s+out)?\s+for|beware\s+of|be\s+(?:wary|careful|suspicious)\s+of|look\s+out\s+for|(?:never|don'?t|do\s+not)\s+"
    r"trust)\s+(?:any\s+|all\s+)?(?:[\w-]+\s+){0,2}?(?:pages?|sites?|websites?|e-?mails?|messages?|documents?|posts?|comments?|"
    r"replies|inputs?|texts?|content|results?|outputs?)\s+(?:that|which)\s+(?:says?|said|tells?|reads?|contains?|asks?)|"
    # the same warning in Spanish, French and German ("cuidado con las páginas que dicen …",
    # "méfiez-vous des pages qui disent …", "Vorsicht bei Seiten, die … sagen")
    r"(?:cuidado\s+con|desconf[íi]a\s+de|desconfíe\s+de|no\s+conf[íi]es\s+en)\s+(?:los|las|cualquier)?\s*(?:p[áa]ginas?|sitios?|"
    r"correos?|mensajes?|documentos?|resultados?)\s+que\s+(?:dicen|dice|piden|pide|contienen|contiene)|"
    r"(?:méfie(?:z-vous|-toi)\s+des|attention\s+aux|ne\s+(?:faites|fais)\s+pas\s+confiance\s+aux)\s+(?:pages?|sites?|e-?mails?|"
    r"courriels?|messages?|documents?|résultats?)\s+qui\s+(?:disent|dit|demandent|demande|contiennent|contient)|"
    r"(?:vorsicht\s+(?:bei|vor)|achte\s+auf|achten\s+sie\s+auf|misstraue)\s+(?:\w+\s+)?(?:seiten|webseiten|e-?mails|nachrichten|"
    r"dokumenten?|ergebnissen?),?\s+die\b|"
    r"ejemplos?|ataques?|inyecci\w+|exemples?|attaques?|beispiele?|angriff\w*|injektion\w*|"
    r"(?:на)?пример\w*|атак\w*|инъекци\w*|злоумышленник\w*|(?:ال)?مثال|[اأ]مثل[ةه]|(?:ال)?هجوم\w*|(?:ال)?مهاجم\w*|حقن)"
    # no word boundaries in CJK text
    r"|例|比如|攻击|攻擊|注入|攻撃|インジェクション|サンプル|検出|检测|檢測|拦截|攔截|예시|예를|공격|인젝션"
    # a warning about what pages say: 注意/小心/不要相信 … 写着“…”的网页, 「…」と書かれたページに注意
    r"|(?:注意|小心|警惕|当心|當心|提防|留意|谨防|謹防|(?:不要|别|別|切勿)(?:相信|信任))(?:那些|这类|這類|任何|所有)?"
    r"(?:写着|寫著|写有|寫有|说|說|声称|聲稱|要求|包含|含有)[^。\n]{0,80}?的(?:网页|網頁|页面|頁面|网站|網站|邮件|郵件|消息|訊息|"
    r"信息|文档|文檔|帖子|评论|評論|内容|內容|结果|結果)"
    r"|(?:と書かれた|と書いてある|と書かれている|という|を求める|を含む)(?:ウェブ)?(?:ページ|サイト|メール|メッセージ|文書|"
    r"ドキュメント|投稿|コメント|結果)(?:に|には)(?:注意|気をつけ|気を付け|用心|警戒)")


def _framed(text: str) -> bool:
    """Whether a framing word occurs (matched on lower case: IGNORECASE makes the alternation
    several times slower)."""
    return _FRAMING.search(text.lower()) is not None
_FENCE_MARK = re.compile(r"^\s*(?:`{3,}|~{3,})", re.MULTILINE)
_CODE_PUNCT = re.compile(r"[{}=;<>\[\]$|\\]")


def _prose_block(block: str) -> bool:
    """Whether a fenced block holds sentences rather than code, data or a command line: long,
    with hardly any of the punctuation code is made of."""
    body = _FENCE_MARK.sub("", block)
    return len(body) > 300 and len(_CODE_PUNCT.findall(body)) * 100 < len(body)


# Reported speech: "prompt injections try to make the model ignore previous instructions".
_REPORTED = re.compile(
    r"\b(?:attackers?|attacks?|injections?|jailbreaks?|malicious|adversar\w*|payloads?|phishing)\b"
    r"[^.!?\n]{0,80}\b(?:tr(?:y|ies|ied)\s+to|attempts?\s+to|aims?\s+to|tell\w*|instruct\w*|ask\w*|"
    r"trick\w*|make|makes|get|gets|convince\w*|says?|such\s+as|like)\b", re.IGNORECASE)


def _unquote(par: Paragraph, framed: bool, context_framed: bool,
             spans: re.Pattern[str] = QUOTING_SPAN) -> str:
    """The paragraph with example material taken out, when the paragraph (``framed``: it holds a
    framing word) or one beside it (``context_framed``) frames it as an example; otherwise
    unchanged.

    In prose only the words *around* the quoted material frame it: an attack that carries
    "example" or "filter" inside its own quotation marks does not thereby become an example. A code
    block may frame itself (a comment such as ``# example payload``): test fixtures look so.
    """
    if not framed and not context_framed:
        return par.text   # the common case: nothing frames anything
    if par.code:
        # code frames itself (``# example payload``, ``detect_injection(...)``), but a fenced
        # page of prose whose own sentences say "for example" is prose addressed to the model
        return par.text if not context_framed and _prose_block(par.text) else ""
    stripped = strip_quotes(par.text, spans)
    return stripped if context_framed or _framed(stripped) else par.text


# --------------------------------------------------------------------------- matching


_CJK = re.compile("[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
_LATIN = re.compile("[a-z]")


def _match_views(views: Iterable[str], wanted: set[str]) -> tuple[str, str, str] | None:
    """(category, language, excerpt) of the first phrase found in any view."""
    unique = list(dict.fromkeys(views))
    # every view: the rendered one may hold letters the source spells as "&#73;&#103;..."
    cjk = any(_CJK.search(v) for v in unique)
    latin = any(_LATIN.search(v) for v in unique)
    for lang, table in COMBINED.items():
        if not (cjk if lang in CJK_LANGUAGES else latin):
            continue
        gates = GATES.get(lang, {})
        for category, pattern in table.items():
            if category not in wanted:
                continue
            triggers = gates.get(category)
            for view in unique:
                if triggers is not None and not triggers.search(view):
                    continue
                for m in pattern.finditer(view):
                    if (category in NEGATABLE
                            and (negated(view, m) or (lang == "zh" and spoken_of(view, m, category)))
                            and not sent_after(view, m, category)):
                        continue
                    return category, lang, m.group()[:80]
    return None


# one alternation per category: a letters-only view is searched three times, not eighteen
_COMPACT_ONE = {category: re.compile("|".join(f"(?:{p.pattern})" for p in patterns))
                for category, patterns in COMPACT.items()}


def _match_compact(text: str, wanted: set[str]) -> tuple[str, str, str] | None:
    for category, pattern in _COMPACT_ONE.items():
        if category in wanted:
            for m in pattern.finditer(text):
                before = text[max(0, m.start() - 32):m.start()]
                if (category in NEGATABLE and (negation_holds(COMPACT_NEGATION.search(before))
                                               or spoken_of(text, m, category, letters=True))
                        and not sent_after(text, m, category, letters=True)):
                    continue
                return category, "compact", m.group()[:80]
    return None


_PERSONA_ANY = GatedPattern(tuple(p.pattern for name, p in PERSONA_TRAITS.items()
                                  if name not in PERSONA_SCENE))


def _persona_jailbreak(joined: str) -> tuple[str, str, str] | None:
    """A role hijack told by its structure (see ``PERSONA_TRAITS``): enough distinct traits of a
    persona jailbreak in one paragraph, the excerpt naming them (the text itself stays out)."""
    if not _PERSONA_ANY.search(joined):
        return None   # the common case: no strong trait at all, one pass
    strong = [name for name, pattern in PERSONA_TRAITS.items()
              if name not in PERSONA_SCENE and pattern.search(joined)]
    if len(strong) < PERSONA_MIN_STRONG:
        return None   # the common case, decided without the scene traits
    scene = sum(1 for name in PERSONA_SCENE if PERSONA_TRAITS[name].search(joined))
    if len(strong) + scene >= PERSONA_MIN:
        return "role-hijack", "en", "persona jailbreak: " + ", ".join(strong)
    return None


_UNFOLDED_SCRIPTS = re.compile("[\u0400-\u04ff\u0600-\u06ff\ufb50-\ufdff\ufe70-\ufefc\uac00-\ud7af]")


def _scan_text(text: str, wanted: set[str], depth: int = 0, *,
               data: bool = False) -> tuple[str, str, str] | None:
    seen = views(text)
    folded, joined, shown = seen.folded, seen.joined, seen.shown
    found = _match_views(seen.phrase, wanted)
    if found is None and _UNFOLDED_SCRIPTS.search(text):
        # Cyrillic and Arabic phrases cannot match the folded views (decision 90)
        found = match_scripts(unfolded(text), wanted)
    for view in seen.one_line:
        if found is None and "role-hijack" in wanted:
            found = _persona_jailbreak(view)
        if found is None and "output-hijack" in wanted:
            hijack = answer_hijack(view, data=data)
            if hijack is not None:
                found = "output-hijack", hijack[0], hijack[1]
        if found is None and (order := standing_order(view, data=data, raw=text)) is not None \
                and order[0] in wanted:
            found = order[0], "standing", order[1]
    # the letters-only view only for text whose own words did not already answer: a long
    # paragraph of prose has too many accidental joins across words (the rendered view by its own
    # length: "&#32;" is two digits in the source's)
    for view in (folded, shown, *seen.readings) if shown else (folded, *seen.readings):
        if found is None and len(letters := compact(view)) <= 4000:
            found = _match_compact(letters, wanted)
    if found is None and depth == 0 and _LATIN.search(joined):
        # lines written in ROT13, read as what they say
        turned = rot13(folded)
        if turned:
            found = _scan_text(turned, wanted, depth + 1, data=data)
            if found is not None:
                return found[0], found[1], "rot13: " + found[2]
    if found is None and depth == 0:
        for blob in decoded_blobs(text):
            found = _scan_text(blob, wanted, depth + 1, data=data)
            if found is not None:
                return found[0], found[1], "base64: " + found[2]
    return found


def scan_paragraph(par: Paragraph, categories: Iterable[str] = INJECTION_CATEGORIES, *,
                   context: str = "", data: bool = False) -> InjectionFinding | None:
    """The injection in one paragraph, if any; ``context`` is the paragraph before it (an
    introduction such as "for example:" frames a quoted block); ``data`` when the text is data
    (MEMORY.md, USER.md, a recalled past session) rather than instructions for
    the assistant (a context file, a skill body): an order about "your reply" is then hostile."""
    return _scan_paragraph(par, set(categories), _framed(par.text), _framed(context), data)


def _scan_paragraph(par: Paragraph, wanted: set[str], framed: bool, context_framed: bool,
                    data: bool) -> InjectionFinding | None:
    """:func:`scan_paragraph` with the framing words already looked for (a paragraph is the
    context of both its neighbours: its framing is decided once, not three times)."""
    if "invisible-unicode" in wanted:
        m = invisible(par.text)
        if m:
            line = par.line + par.text.count("\n", 0, m.start())
            return InjectionFinding("invisible-unicode", line, f"U+{ord(m.group()):04X}")
    text = _addressed(par, framed, context_framed)
    if not text.strip():
        return None
    found = _scan_text(text, wanted, data=data)
    if found is None:
        found = _hidden(_hidden_source(par, framed, context_framed), par.code, wanted)
    if found is None and "learned" in wanted:
        found = _learned(par, framed, context_framed, data, _stage(wanted))
    if found is None:
        return None
    category, lang, excerpt = found
    return InjectionFinding(category, par.line + _line_in(par.text, excerpt), excerpt, lang)


def _hidden_source(par: Paragraph, framed: bool, context_framed: bool) -> str:
    """The paragraph as :func:`_hidden` reads it: examples set in code spans, code blocks or
    block quotes out when something frames them, but quotation marks kept (markup quotes its
    attributes: a ``style="display:none"`` is not an example)."""
    if not (framed or context_framed) or par.code:
        return _unquote(par, framed, context_framed)
    return QUOTE_LINE.sub("", CODE_SPAN.sub(" ", par.text))


def _hidden(text: str, code: bool, wanted: set[str]) -> tuple[str, str, str] | None:
    """What the paragraph hides from its human reader (:mod:`hermes_core.injection.hidden`): a
    hidden span that sets the material aside for a claim or carries a phishing lure, or that
    addresses the model and either asks something of the user or the answer or says what the
    rules catch in data; and a forged dialogue turn in which the model complies."""
    if "role-hijack" in wanted and (":" in text or "：" in text):
        turn = forged_turn(fold(text))
        if turn is not None:
            return "role-hijack", "dialogue", "forged turn: " + turn
    # an encoded blob is hidden from its reader as well as markup is
    spans = [*hidden_spans(text, code=code), *(HiddenSpan("encoded", b) for b in decoded_blobs(text))]
    for span in spans:
        for view in (span.text, *(decoded_blobs(span.text) if span.kind != "encoded" else ())):
            joined = flat(fold(view))
            if "ignore-instructions" in wanted and (m := SET_ASIDE_CLAIM.search(joined)):
                return "ignore-instructions", span.kind, m.group()[:80]
            # in a fenced block markup is shown, not rendered: a template's lockout notice there
            # is in plain sight of whoever reads the file
            if "output-hijack" in wanted and not code and (m := PHISHING_LURE.search(joined)):
                return "output-hijack", span.kind, m.group()[:80]
            if not ADDRESSED.search(joined):
                continue
            if "output-hijack" in wanted and (m := ADDRESSED_ORDER.search(joined)):
                return "output-hijack", span.kind, m.group()[:80]
            found = _scan_text(view, wanted, 1, data=True)
            if found is not None:
                return found[0], span.kind, found[2]
    return None


def _addressed(par: Paragraph, framed: bool, context_framed: bool,
               spans: re.Pattern[str] = QUOTING_SPAN) -> str:
    """What of the paragraph could address the model: quoted examples and reported speech out.
    ``spans``: the code spans that quote; the learned scorer keeps reading every code span as a
    quotation, as it was trained (a span glued into a word quotes nothing for the rules)."""
    text = _unquote(par, framed, context_framed, spans)
    if framed and text.strip() and _REPORTED.search(text) and _framed(text):
        # "attacks try to make the model ignore previous instructions": a description
        text = _REPORTED_TAIL.sub("", text)
    return text


def _learned_view(par: Paragraph, framed: bool, context_framed: bool) -> str:
    """What the learned scorer reads of a paragraph: the text the rules read, folded and
    flattened, without tool pragmas (``<!-- prettier-ignore -->``, ``# noqa``: they speak to a
    formatter or a linter, and "ignore" in them read as an attack); nothing of a code block (code
    is the rules' business: hostile code handed to the answer) unless the block is prose in a
    fence."""
    if par.code and not _prose_block(par.text):
        return ""
    return flat(fold(without_pragmas(_addressed(par, framed, context_framed, CODE_SPAN)))).strip()


# Text that speaks *of* the model in the third person ("instruct the model to ignore attempts to
# modify its instructions", "LLMs can be tricked ...") without once addressing it: documentation
# about models, not an order to one.
_ABOUT_THE_MODEL = re.compile(
    r"\b(?:the|a|an|each|any|that|this|its|their)\s+(?:\w+\s+)?(?:models?|llms?|assistants?|chatbots?|"
    r"agents?|ai\s+systems?)\b|\bllms?\b|\b(?:el|al|del|los|un)\s+modelos?\b|\b(?:le|du|au|les|un)\s+"
    r"modèles?\b|\b(?:das|dem|des|ein|einem)\s+(?:sprach)?modells?\b|模型|モデル")
_TO_THE_MODEL = re.compile(
    r"\b(?:you|your|yours|yourself|u)\b|\b(?:tú|tu|tus|te|usted|vous|tu|toi|ton|ta|tes|votre|vos|du|dich|"
    r"dir|dein\w*|sie|ihr\w*)\b|你|您|あなた|君")


def rules_excuse(view: str, *, exchanges: bool = True) -> bool:
    """Whether this paragraph (its learned view) is one the learned scorer must leave to the
    rules: a plain order about the form of the answer, which they judge by where it sits
    (:func:`~hermes_core.injection.hijack.answer_convention`); text about the model that never
    addresses it; a finished exchange (a chat example, a Q/A list closed by its answer:
    :func:`~hermes_core.injection.hidden.finished_exchange`); a short lead-in ("Add the following
    to your CI script:") whose block the rules judge, unless it hands code to the answer itself;
    or a phrase they know, forbidden by a negation ("Never reveal your API keys to anyone").
    ``exchanges=False`` leaves a finished exchange out: the scan judges its answers instead
    (:func:`_excused`)."""
    if answer_convention(view) or (_ABOUT_THE_MODEL.search(view) and not _TO_THE_MODEL.search(view)):
        return True
    if exchanges and finished_exchange(view):
        # a chat example or a Q/A list closed by its answer: a record, not a question left open
        return True
    if len(view) <= SHORT_ORDER and view.endswith((":", "：")) and not CODE_LEAD.search(view):
        # a lead-in ("add the following to your settings.py:"): what it introduces is scanned
        # on its own; one that hands code to the answer itself (CODE_LEAD) is the scorer's too
        return True
    latin, cjk = _LATIN.search(view) is not None, _CJK.search(view) is not None
    for lang, table in COMBINED.items():
        if not (cjk if lang in CJK_LANGUAGES else latin):
            continue
        for category, pattern in table.items():
            if category in NEGATABLE and any(negated(view, m) for m in pattern.finditer(view)):
                return True
    return False


def _excused(model: ModelRef, view: str, data: bool) -> bool:
    """:func:`rules_excuse`, with a finished exchange excused for its form only: its questions,
    answered, read as bare tasks in a memory, but an attack put in an answer turn ("User: hi /
    Assistant: <attack>") is what the scorer must still read, so the answers are scored alone."""
    if rules_excuse(view, exchanges=False):
        return True
    answers = exchange_answers(view)
    if answers is None:
        return False
    got = learned_scores(model, [" ".join(answers)], data)
    return got is None or got[0][0] <= got[1]


def _learned(par: Paragraph, framed: bool, context_framed: bool,
             data: bool, stage: tuple[bool, bool] = (False, False)) -> tuple[str, str, str] | None:
    """The learned scorer's verdict on what the rules let through (None when the shipped model is
    missing: the rules alone decide)."""
    model = shipped_model(*stage)
    view = _learned_view(par, framed, context_framed)
    if model is None or not view.strip():
        return None
    got = learned_scores(model, [view], data)
    if got is None:
        return None
    (score,), limit = got
    if score <= limit or _excused(model, view, data):
        return None
    return "learned", "", f"learned score {score:.2f}"


def _stage(categories: Iterable[str]) -> tuple[bool, bool]:
    """Which e5 stage the categories ask for (``shipped_model``'s arguments)."""
    cats = set(categories)
    return SEMANTIC in cats, SEMANTIC_DATA in cats


def learned_views(text: str) -> list[tuple[Paragraph, str]]:
    """Each paragraph of ``text`` with the view the learned scorer reads: the text the rules
    read (quoted examples and reported speech taken out), folded and flattened. Training
    (``tests/data/injection/train_scorer.py``) reads paragraphs through this, so it sees what
    the scan will hand the model."""
    pars = split_paragraphs(text)
    framed = [_framed(p.text) for p in pars]
    out: list[tuple[Paragraph, str]] = []
    for i, par in enumerate(pars):
        around = (i > 0 and framed[i - 1]) or (i + 1 < len(pars) and framed[i + 1])
        out.append((par, _learned_view(par, framed[i], around)))
    return out


_REPORTED_TAIL = re.compile(
    r"\b(?:attackers?|attacks?|injections?|jailbreaks?|malicious|adversar\w*|payloads?|phishing)\b"
    r"[^.!?\n]*", re.IGNORECASE)


def _line_in(text: str, excerpt: str) -> int:
    """Best guess of the line (0-based offset) an excerpt of the folded text came from."""
    lines = text.split("\n")
    if len(lines) == 1:
        return 0
    words = [w for w in re.split(r"\W+", excerpt.removeprefix("base64: ")) if len(w) > 2][:2]
    for i, line in enumerate(lines):
        folded = fold(line)
        if words and all(w in folded or w in unfolded(line) for w in words[:1]):
            return i
    return 0


def scan_paragraphs(text: str, categories: Iterable[str] = INJECTION_CATEGORIES,
                    first_line: int = 1, *,
                    data: bool = False) -> list[tuple[Paragraph, InjectionFinding | None]]:
    """Every paragraph of ``text`` with its finding (None when clean)."""
    return scan_many([text], categories, first_line, data=data)[0]


def scan_many(texts: Sequence[str], categories: Iterable[str] = INJECTION_CATEGORIES,
              first_line: int = 1, *,
              data: bool = False) -> list[list[tuple[Paragraph, InjectionFinding | None]]]:
    """:func:`scan_paragraphs` of each text, each judged on its own, with one learned scorer call
    for all (its cost is mostly per call; a recall brings several summaries and tags at once)."""
    cats = tuple(categories)
    wanted = set(cats) - {"learned", SEMANTIC, SEMANTIC_DATA}
    groups: list[list[tuple[Paragraph, InjectionFinding | None]]] = []
    frames: list[list[bool]] = []
    for text in texts:
        pars = split_paragraphs(text, first_line)
        handed = _handed_code(pars) if "output-hijack" in cats else {}
        framed = [_framed(p.text) for p in pars]
        out: list[tuple[Paragraph, InjectionFinding | None]] = []
        for i, par in enumerate(pars):
            around = (i > 0 and framed[i - 1]) or (i + 1 < len(pars) and framed[i + 1])
            finding = _scan_paragraph(par, wanted, framed[i], around, data)
            if finding is None and i in handed:
                finding = InjectionFinding("output-hijack", par.line, handed[i], "code")
            out.append((par, finding))
        groups.append(out)
        frames.append(framed)
    if "learned" in cats:
        _learned_pass(groups, frames, data, _stage(cats))
    return groups


def _learned_pass(groups: list[list[tuple[Paragraph, InjectionFinding | None]]],
                  frames: list[list[bool]], data: bool,
                  stage: tuple[bool, bool] = (False, False)) -> None:
    """The learned scorer over every paragraph of every text the rules let through, in one batch;
    a paragraph it blocks gets a ``learned`` finding."""
    model = shipped_model(*stage)
    if model is None:
        return
    todo: list[tuple[list[tuple[Paragraph, InjectionFinding | None]], int]] = []   # (text's, index)
    views: list[str] = []
    for out, framed in zip(groups, frames, strict=True):
        for i, (par, finding) in enumerate(out):
            if finding is not None:
                continue
            around = (i > 0 and framed[i - 1]) or (i + 1 < len(out) and framed[i + 1])
            view = _learned_view(par, framed[i], around)
            if view:
                todo.append((out, i))
                views.append(view)
    got = learned_scores(model, views, data) if views else None
    if got is None:
        return
    scores, limit = got
    for (out, i), view, score in zip(todo, views, scores, strict=True):
        if score > limit and not _excused(model, view, data):
            par = out[i][0]
            out[i] = (par, InjectionFinding("learned", par.line, f"learned score {score:.2f}"))


def _around(pars: list[Paragraph], i: int) -> str:
    """The paragraphs on either side of ``pars[i]``: they frame a quote ("for example:" before,
    "the quote above is ..." after)."""
    return "\n".join(p.text for p in (pars[i - 1] if i else None,
                                      pars[i + 1] if i + 1 < len(pars) else None) if p)


_LIST_ITEM = re.compile(r"^\s{0,3}(?:[-*+]|\d{1,9}[.)])\s+\S")


def list_items(par: Paragraph) -> list[Paragraph]:
    """A paragraph that is a Markdown list, one block per item (lines before the first item are
    a block of their own; continuation lines stay with their item); ``[]`` when it holds fewer
    than two items or is code. MEMORY.md and USER.md are usually one such list."""
    if par.code:
        return []
    out: list[Paragraph] = []
    buf: list[str] = []
    start = par.line
    for i, line in enumerate(par.text.split("\n"), start=par.line):
        if _LIST_ITEM.match(line) and buf:
            out.append(Paragraph("\n".join(buf), start))
            buf, start = [], i
        buf.append(line)
    out.append(Paragraph("\n".join(buf), start))
    return out if sum(1 for p in out if _LIST_ITEM.match(p.text)) >= 2 else []


def _blocked_items(par: Paragraph, finding: InjectionFinding, categories: tuple[str, ...],
                   around: str, data: bool) -> list[tuple[Paragraph, InjectionFinding | None]]:
    """A hostile list paragraph narrowed to its hostile items, so one poisoned memory entry does
    not take the others with it. Narrowed only when the paragraph's own finding lies in a blocked
    item and the items left over, read together, are clean: an attack spread over several items
    still blocks the whole list."""
    items = list_items(par)
    if not items:
        return [(par, finding)]
    context = around + "\n" + par.text
    scanned = [(it, scan_paragraph(it, categories, context=context, data=data)) for it in items]
    kept = [it for it, f in scanned if f is None]
    if not kept:
        return scanned
    if not any(f is not None and it.line <= finding.line <= it.line + it.text.count("\n")
               for it, f in scanned):
        return [(par, finding)]
    rest = Paragraph("\n".join(it.text for it in kept), kept[0].line)
    if scan_paragraph(rest, categories, context=around, data=data) is not None:
        return [(par, finding)]
    return scanned


_CODE_BLOCK_WORDS = re.compile(r"\bcode\s+blocks?\b")


def _handed_code(pars: list[Paragraph]) -> dict[int, str]:
    """Paragraphs (by index) that hand hostile code to the assistant's output: a lead-in ("add
    the following snippet to your implementation:") and the code block right after it, when that
    code spies, exfiltrates, tunnels or destroys (:func:`hazardous_code`). Both are blocked."""
    out: dict[int, str] = {}
    for i in range(1, len(pars)):
        if not pars[i].code or pars[i - 1].code:
            continue
        lead = flat(fold(pars[i - 1].text[-400:]))
        # a lead-in that presents the code as an example of an attack is documentation
        if not CODE_LEAD.search(lead) or _framed(_CODE_BLOCK_WORDS.sub(" ", lead)):
            continue
        hazard = hazardous_code(fold(pars[i].text))
        if hazard is not None:
            out[i - 1] = out[i] = "code handed to the answer: " + hazard
    return out


def scan_for_injection(text: str, categories: Iterable[str] = INJECTION_CATEGORIES, *,
                       data: bool = False) -> InjectionFinding | None:
    """The first prompt-injection signal found in ``text`` (None when it looks clean)."""
    if not text:
        return None
    for _par, finding in scan_paragraphs(text, categories, data=data):
        if finding is not None:
            return finding
    return None


def guard_text(text: str, *, name: str, categories: Iterable[str] = INJECTION_CATEGORIES,
               first_line: int = 1, data: bool = False) -> GuardedText:
    """``text`` with every hostile paragraph replaced by a one-line notice (never the whole text,
    unless every paragraph is hostile; then one notice stands for the file). ``data``: the text
    is data, not instructions (see :func:`scan_paragraph`)."""
    return guard_many([text], name=name, categories=categories, first_line=first_line, data=data)[0]


def guard_many(texts: Sequence[str], *, name: str, categories: Iterable[str] = INJECTION_CATEGORIES,
               first_line: int = 1, data: bool = False) -> list[GuardedText]:
    """:func:`guard_text` of each text, scanned together (:func:`scan_many`)."""
    cats = tuple(categories)
    return [_guarded(text, results, name, cats, first_line, data)
            for text, results in zip(texts, scan_many(texts, cats, first_line, data=data), strict=True)]


def _guarded(text: str, results: list[tuple[Paragraph, InjectionFinding | None]], name: str,
             cats: tuple[str, ...], first_line: int, data: bool) -> GuardedText:
    if not any(f for _p, f in results):
        return GuardedText(text, (), len(results))
    results = [unit for i, (par, finding) in enumerate(results)
               for unit in (_blocked_items(par, finding, cats, _around([p for p, _f in results], i), data)
                            if finding is not None else [(par, finding)])]
    findings = tuple(f for _p, f in results if f is not None)
    if len(findings) == len(results):
        return GuardedText(blocked_notice(name, findings[0]), findings, len(results))
    lines = text.split("\n")
    # replace from the bottom up so earlier line numbers stay valid
    for par, finding in reversed(results):
        if finding is None:
            continue
        first = par.line - first_line
        count = par.text.count("\n") + 1
        lines[first:first + count] = [paragraph_notice(name, finding)]
    return GuardedText("\n".join(lines), findings, len(results))


@lru_cache(maxsize=512)
def guard_cached(text: str, name: str, categories: tuple[str, ...] = INJECTION_CATEGORIES,
                 data: bool = False) -> GuardedText:
    """:func:`guard_text`, remembered: a skill body is auto-loaded turn after turn unchanged."""
    return guard_text(text, name=name, categories=categories, data=data)


def blocked_notice(name: str, finding: InjectionFinding) -> str:
    """The one line that replaces a wholly blocked file in the prompt (the matched text stays out)."""
    return f"[BLOCKED: {name} was not loaded: {finding.describe()}]"


_NOTICE = re.compile(r"\[BLOCKED: (?:a paragraph of (?P<paragraph>[^\]\n]+?) was removed|"
                     r"the description of (?P<description>[^\]\n]+?) was withheld|"
                     r"(?P<file>[^\]\n]+?) was not loaded): (?P<why>possible prompt injection "
                     r"\([^)\n]*\))\]")


def notices_in(text: str) -> list[tuple[str, str, str]]:
    """The BLOCKED notices in an assembled block: (name, why, what) for each, ``what`` being
    "file", "paragraph" or "description" (a hinted skill's), so a block put together elsewhere (an
    auto-loaded skill, a hint list) can still be reported where the user looks."""
    out: list[tuple[str, str, str]] = []
    for m in _NOTICE.finditer(text):
        what = next(k for k in ("paragraph", "description", "file") if m.group(k) is not None)
        out.append((m.group(what), m.group("why"), what))
    return out


def paragraph_notice(name: str, finding: InjectionFinding) -> str:
    """The one line that replaces one blocked paragraph; the rest of the file is kept."""
    return f"[BLOCKED: a paragraph of {name} was removed: {finding.describe()}]"



def description_notice(name: str, finding: InjectionFinding) -> str:
    """What a hint or skill list shows after a skill's name when its description is hostile: the
    skill stays listed (skill_view still scans its body), the matched text stays out."""
    return f"[BLOCKED: the description of {name} was withheld: {finding.describe()}]"
