"""Session summaries for episodic memory: the Summarizer seam, a model-backed one, and the fallback.

At session end the Agent passes a :data:`Summarizer` that asks the fast model (through the normal
provider path, so key rotation and failover apply). Offline, or when that call fails or answers in
a shape we cannot parse, :func:`extractive_summary` picks the session's most characteristic
sentences instead, so a session is never lost just because the model was unavailable.

A model's answer is accepted only when it reads as a summary of *this* conversation
(:func:`summary_problem`): an empty reply, a bare acknowledgement ("ok", "Sure!") or text sharing no
words with the conversation is rejected, and the extractive summary is used instead. Summary
requests carry ``Prompt.purpose == "summary"`` so providers, logs and test doubles can tell them
from the user's turns.

Summaries aim at 200-500 words (counted by :func:`count_words`: English words plus one word per two
Chinese characters); a short session yields a shorter summary, never padding.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hermes_core.agent.episodic.ranking import STOPWORDS
from hermes_core.agent.episodic.store import normalise_tags
from hermes_core.errors import SummaryFailed
from hermes_core.tokenize import is_cjk, tokenize
from hermes_core.types import Completion, Message, Prompt

MIN_WORDS = 200
TARGET_WORDS = 350
MAX_WORDS = 500
MAX_TAGS = 8


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """A session's summary and tags; ``source`` says who wrote it (``model`` or ``extractive``)."""

    summary: str
    tags: tuple[str, ...] = ()
    source: str = "model"


#: What :meth:`ContextEngine.record_session` calls to summarise a finished session.
Summarizer = Callable[[Sequence[Message]], SessionSummary]


# --------------------------------------------------------------------------- words and sentences

_ASCII_WORD = re.compile(r"[A-Za-z0-9]+(?:['’.\-][A-Za-z0-9]+)*")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？；;])\s+|(?<=[。！？；])|\n+")
_CODE_FENCE = re.compile(r"```.*?(```|$)", re.DOTALL)


def count_words(text: str) -> int:
    """English words plus ceil(CJK characters / 2): one rough scale for mixed text."""
    cjk = sum(1 for ch in text if is_cjk(ch))
    return len(_ASCII_WORD.findall(text)) + math.ceil(cjk / 2)


def clip_words(text: str, max_words: int = MAX_WORDS) -> str:
    """At most ``max_words`` (by :func:`count_words`), cut at a sentence end when one is near."""
    text = text.strip()
    if count_words(text) <= max_words:
        return text
    kept: list[str] = []
    used = 0
    for sentence in split_sentences(text):
        n = count_words(sentence)
        if used + n > max_words:
            if not kept:  # one giant sentence: cut by characters, proportionally
                ratio = max_words / max(n, 1)
                kept.append(sentence[: max(1, int(len(sentence) * ratio))].rstrip() + "…")
            break
        kept.append(sentence)
        used += n
    return " ".join(kept)


def split_sentences(text: str) -> list[str]:
    """Sentences of mixed text (ASCII and Chinese punctuation, line breaks); code blocks dropped."""
    text = _CODE_FENCE.sub(" ", text)
    return [s.strip() for s in _SENTENCE_END.split(text) if s and len(s.strip()) > 1]


def _terms(text: str) -> list[str]:
    """Content terms; identifiers stay whole (``SQLite``, not ``sq`` + ``lite``) so tags read well."""
    return [t for t in tokenize(text, split_camel=False, fold=False)
            if t not in STOPWORDS and not t.isdigit() and (len(t) >= 3 or (len(t) >= 2 and is_cjk(t[0])))]


def _tag_terms(terms: list[str]) -> list[str]:
    """Terms fit to be tags: jieba's search mode also yields fragments of longer words (``线网`` of
    ``无线网络``), so a Chinese term inside a longer term of the same sentence is dropped."""
    cjk = {t for t in terms if is_cjk(t[0])}
    return [t for t in terms if not (t in cjk and any(t != u and t in u for u in cjk))]


# --------------------------------------------------------------------------- extractive fallback

def extractive_summary(messages: Sequence[Message], *, target_words: int = TARGET_WORDS,
                       max_words: int = MAX_WORDS, max_tags: int = MAX_TAGS) -> SessionSummary:
    """A summary made of the session's own sentences, chosen by term weight; needs no model.

    The first user sentence (usually the task) always leads. Other sentences are scored by the
    session-wide frequency of their content terms over the square root of their length, user
    sentences slightly favoured, then kept in their original order until ``target_words``. A
    sentence repeated word for word is one sentence (its first occurrence), weighed once.
    Tags are the most frequent content terms.
    """
    sentences: list[tuple[int, str, str]] = []  # (order, role, text)
    seen: set[str] = set()
    for m in messages:
        if m.role not in ("user", "assistant") or not m.content.strip():
            continue
        for s in split_sentences(m.content):
            # a sentence said again (a pasted log's repeated line, a reply repeated) counts once:
            # every copy scored as high as the first, and the summary was that line over and over
            key = " ".join(s.casefold().split())
            if key not in seen:
                seen.add(key)
                sentences.append((len(sentences), m.role, s[:600]))
    if not sentences:
        return SessionSummary("", (), "extractive")
    tf: Counter[str] = Counter()
    tag_tf: Counter[str] = Counter()
    sent_terms = []
    for _, _, s in sentences:
        terms = _terms(s)
        sent_terms.append(terms)
        tf.update(terms)
        tag_tf.update(_tag_terms(terms))

    def score(i: int) -> float:
        terms = set(sent_terms[i])
        base = sum(tf[t] for t in terms) / math.sqrt(1 + len(sent_terms[i]))
        return base * (1.2 if sentences[i][1] == "user" else 1.0)

    first_user = next((i for i, (_, role, _) in enumerate(sentences) if role == "user"), 0)
    chosen = {first_user}
    used = count_words(sentences[first_user][2])
    for i in sorted(range(len(sentences)), key=lambda i: (-score(i), i)):
        if used >= target_words:
            break
        if i in chosen:
            continue
        n = count_words(sentences[i][2])
        if used + n > max_words:
            continue
        chosen.add(i)
        used += n
    parts: list[str] = []
    last_role = None
    for i in sorted(chosen):
        _, role, text = sentences[i]
        if role != last_role:
            parts.append(("User: " if role == "user" else "Assistant: ") + text)
            last_role = role
        else:
            parts[-1] += " " + text
    order = {t: i for i, t in reversed(list(enumerate(t for ts in sent_terms for t in ts)))}
    top = sorted(tag_tf, key=lambda t: (-tag_tf[t], order[t]))[:max_tags]
    return SessionSummary(clip_words(" ".join(parts), max_words), normalise_tags(top), "extractive")


# --------------------------------------------------------------------------- model-backed

SUMMARY_INSTRUCTIONS = """You write the memory of a finished conversation so that a later conversation \
can recall it. Summarise the conversation below in 200 to 500 words: the user's goal, the facts, \
decisions and names that matter, what was done, and what was left open. Write in the conversation's \
main language. Do not invent anything. Then give 3 to 8 short topic tags.

Answer in exactly this format:
SUMMARY:
<the summary>
TAGS: <tag>, <tag>, <tag>"""

_SUMMARY_HEAD = re.compile(r"^\s*#*\s*\**\s*(summary|摘要)\s*\**\s*[:：]\s*\**\s*",
                           re.IGNORECASE | re.MULTILINE)
_TAGS_LINE = re.compile(r"^\s*#*\s*\**\s*(tags|标签)\s*\**\s*[:：]\s*\**\s*(?P<tags>.*)$",
                        re.IGNORECASE | re.MULTILINE)


def transcript(messages: Sequence[Message], *, max_chars: int = 24_000) -> str:
    """The conversation as ``USER:``/``ASSISTANT:`` lines; the middle is elided when too long."""
    lines = [f"{m.role.upper()}: {m.content.strip()}" for m in messages
             if m.role in ("user", "assistant") and m.content.strip()]
    text = "\n\n".join(lines)
    if len(text) <= max_chars:
        return text
    half = max_chars // 2
    return text[:half] + "\n\n[... middle of the conversation omitted ...]\n\n" + text[-half:]


def summary_prompt(messages: Sequence[Message], *, max_chars: int = 24_000) -> Prompt:
    """The prompt a model summariser sends (exposed so a test or a caller can inspect it)."""
    return Prompt(system=SUMMARY_INSTRUCTIONS,
                  messages=(Message("user", "<conversation>\n" + transcript(messages, max_chars=max_chars)
                                    + "\n</conversation>"),), purpose="summary")


# --------------------------------------------------------------------------- is it a summary?

#: Replies that acknowledge instead of summarising (compared without case and punctuation).
ACKNOWLEDGEMENTS = frozenset((
    "ok", "okay", "ok thanks", "sure", "sure thing", "done", "noted", "got it", "understood",
    "yes", "no", "thanks", "thank you", "will do", "alright", "all right", "fine", "great",
    "hello", "hi", "summary", "n a", "none", "nothing", "no summary",
    "好", "好的", "嗯", "明白", "明白了", "收到", "知道了", "可以", "没问题", "谢谢"))
_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)
#: At least this share of a summary's content terms must occur in the conversation.
MIN_OVERLAP = 0.2


def summary_problem(text: str, messages: Sequence[Message]) -> str | None:
    """Why ``text`` is not a usable summary of ``messages`` (None when it is).

    Rejected: empty text; a bare acknowledgement; text none of whose content terms, or fewer than
    :data:`MIN_OVERLAP` of them, occur in the conversation (a canned reply, another chat's summary).
    """
    body = " ".join(text.split())
    if not body:
        return "empty"
    bare = _NON_WORD.sub(" ", body.lower()).strip()
    if bare in ACKNOWLEDGEMENTS or (count_words(body) < 3 and not any(ch.isdigit() for ch in body)):
        return f"a bare acknowledgement ({body[:40]!r})"
    said = {t for m in messages if m.role in ("user", "assistant") for t in _terms(m.content)}
    if not said:
        return None   # nothing to compare with
    terms = set(_terms(body))
    shared = terms & said
    if not shared or (len(terms) >= 5 and len(shared) / len(terms) < MIN_OVERLAP):
        return "unrelated to the conversation (it shares almost no words with it)"
    return None


def parse_summary_reply(text: str, *, max_words: int = MAX_WORDS) -> SessionSummary:
    """``SUMMARY: ... TAGS: a, b`` -> SessionSummary; :class:`SummaryFailed` if no summary text."""
    tags: tuple[str, ...] = ()
    m = _TAGS_LINE.search(text)
    body = text
    if m:
        tags = normalise_tags(m.group("tags").strip().strip("*").strip())
        body = text[: m.start()] + text[m.end():]
    head = _SUMMARY_HEAD.search(body)
    if head:
        body = body[head.end():]
    summary = " ".join(body.split())
    if not summary:
        raise SummaryFailed("the summariser returned no summary text")
    return SessionSummary(clip_words(summary, max_words), tags, "model")


class ModelSummarizer:
    """A :data:`Summarizer` that asks a model through a ``complete(prompt) -> Completion`` callable.

    The Agent builds it around its call loop with the fast model, e.g.
    ``ModelSummarizer(lambda p: agent.call(p, model=fast_model))``, so retries, key rotation and
    failover are the same as for any turn. Any failure propagates, including a reply that is not a
    summary (:func:`summary_problem`); ``record_session`` logs it and falls back to
    :func:`extractive_summary`.
    """

    def __init__(self, complete: Callable[[Prompt], Completion | str], *,
                 max_transcript_chars: int = 24_000) -> None:
        self._complete = complete
        self._max_chars = max_transcript_chars

    def __call__(self, messages: Sequence[Message]) -> SessionSummary:
        reply = self._complete(summary_prompt(messages, max_chars=self._max_chars))
        text = reply.text if isinstance(reply, Completion) else reply
        if not isinstance(text, str):
            raise SummaryFailed(f"the summariser returned {type(text).__name__}, not text")
        parsed = parse_summary_reply(text)
        problem = summary_problem(parsed.summary, messages)
        if problem is not None:
            raise SummaryFailed(f"the model's summary was rejected: {problem}")
        return parsed
