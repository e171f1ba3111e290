"""A joke, pun or riddle asked for about programming: its topic is no request for code.

"Tell me a bash joke", "Write a SQL joke", "Write a joke about pandas groupby", 讲一个关于bash脚本的
笑话, コードについてのジョークを書いて ask for something funny to read; the shell, query or library
they name is what the joke is about, as "a poem about Python" names Python. So before the code
cues read a text, :func:`without_joke_topics` blanks the topic of each joke asked for: the words
between the joke's article and its noun ("a *bash* joke"), the phrase after it ("a joke *about
the terminal*") up to its clause's end or the next request ("…, then write a recursive
function"), and in Chinese and Japanese the words before the noun in its clause (关于bash脚本的
笑话, コードについてのジョーク).

The joke must be the thing asked for, so a request for code that tells one stays code: "Write a
Python function that prints a joke" (the joke is the function's object), "a joke generator", "a
joke API", 打印笑话的Python函数, ジョークを表示する関数; and a language used to write it is the
code's ("Write a joke in Python", 用Python写一个笑话, Pythonでジョークを書いて name no topic).

Linear: each window is bounded, and a text naming no joke's noun is returned at once.
"""

from __future__ import annotations

import re

# The nouns of a joke in the three languages: a text naming none is returned untouched.
# (each place's first letter looked at first: a case-blind alternation tried at every place cost
# 4 us on a short line)
_JOKE_NOUN = re.compile(
    r"(?=[JjPpRrLlGgQqMmKkWw笑段谜謎急梗ジダ駄冗なギ小川])"
    r"(?:(?i:jokes?|puns?|riddles?|limericks?|gags?|quips?|memes?|knock[\s-]knock|wisecracks?)"
    r"|笑话|笑話|段子|谜语|謎語|急转弯|急轉彎|梗|ジョーク|ダジャレ|駄洒落|冗談|なぞなぞ|ギャグ|小話"
    r"|笑い話|川柳)")

# What a joke asked for in English looks like: a verb of telling or making (or "any", "here's"),
# a few articles and adjectives, up to three topic words (no relative word, preposition or
# program's kind among them: "a Python function that prints a joke" asks for the function), the
# joke's noun (not one made into a program: a joke generator, bot, API), then its topic phrase.
_EN_VERB = (r"tell|tells|write|make\s+up|make|give|share|come\s+up\s+with|think\s+of|know|hear"
            r"|need|want|send|got|any|here'?s|here\s+is|do\s+you\s+have|have\s+you\s+heard")
_EN_ARTICLE = (r"a|an|another|one|some|two|three|few|more|your|my|the|best|good|funny|short"
               r"|quick|new|great|bad|dad|cheesy|nerdy|geeky|clever|silly|terrible|favou?rite")
_NOT_A_TOPIC_WORD = (r"(?!(?:that|which|who|why|what|how|when|where|whether|if|to|in|with|using"
                     r"|for|and|or|then|about|on|of|functions?|scripts?|programs?|bots?|apps?|class(?:es)?|methods?"
                     r"|generators?|apis?)\b)")
_EN_JOKE_NOUN = (r"(?:jokes?|puns?|riddles?|limericks?|gags?|quips?|memes?|wisecracks?"
                 r"|knock[\s-]knock(?:\s+jokes?)?)")
# The joke's noun is the thing asked for when nothing or a word that opens a phrase or a clause
# follows it ("a bash joke about…", "a SQL joke for my team", "a bash joke?"); a noun after it
# makes the joke a program's object: a generator, bot, API, a scraper, a model, a query (review
# s55rF: a list of those kinds let "Write a Python joke scraper" lose its Python)
_THE_JOKE_IS_ASKED = (r"(?!-)(?=\s*(?:$|[^\w\s]|[^\x00-\x7f]|(?:about|on|involving|regarding"
                      r"|featuring|concerning|for|to|that|which|who|whose|where|when|with|without"
                      r"|in|from|of|like|as|at|by|and|or|then|but|so|please|pls|plz|now|today"
                      r"|tonight|again|too|also|ever|i|you|he|she|we|they|it|me|us|my|your|our|his"
                      r"|her|their|is|are|was|were|will|would|can|could|here|there|lol|haha|this"
                      r"|a|an|the)\b))")
# The topic after the noun ends at its clause, or where another request starts ("…, then write
# a function", "… and then implement a queue", "… while you write a parser"), a how-to ("… and
# how to list files") or a program asked for with no verb ("… and a recursive function in
# Python")
_NEXT_REQUEST = (r"\s+(?:and|then|but|also|so|plus|while|as\s+well\s+as)\s+(?:then\s+)?"
                 r"(?:please\s+)?(?:(?:you|i|we)\s+(?:can\s+|could\s+)?)?"
                 r"(?:(?:write|implement|make|create|build|fix|show|give|run|explain|convert|code"
                 r"|generate|add|debug|refactor|tell|send|sort|reverse|parse|how)\b"
                 r"|(?:an?|the|some|one|my)\s+(?:[\w+#.'-]+\s+){0,3}?(?:functions?|scripts?"
                 r"|programs?|class(?:es)?|methods?|quer(?:y|ies)|regex(?:es)?|snippets?|code"
                 r"|implementations?|parsers?|apps?)\b)")
_EN_JOKE = re.compile(
    rf"\b(?:{_EN_VERB})\s+(?:(?:me|us|you)\s+)?(?:(?:{_EN_ARTICLE})\s+){{0,3}}"
    rf"((?:{_NOT_A_TOPIC_WORD}[\w+#.'-]+\s+){{0,3}}){_EN_JOKE_NOUN}\b{_THE_JOKE_IS_ASKED}"
    rf"(\s+(?:about|on|involving|regarding|featuring|concerning)\s+"
    rf"(?:(?!{_NEXT_REQUEST})[^.?!\n;,:]){{1,100}})?")
_EN_JOKE_UNFOLDED = re.compile(_EN_JOKE.pattern, re.IGNORECASE)   # a text whose case folds longer

# Chinese: a verb of telling or writing, its measure word, then the topic up to the joke's noun
# (关于bash脚本的笑话, pandas groupby的笑话); not a joke a program prints (打印笑话的Python函数)
_ZH_JOKE = re.compile(
    r"(?:讲|講|说|說|来|來|写|寫|编|編|给我|給我|想听|想聽|听|聽|发|發|分享)"
    r"(?:[一两几兩幾]?(?:个|個|条|條|段|则|則|些))?\s*"
    r"((?:关于|關於|有关|有關)?[^。！？?!\n，,；;：:]{1,30}?)的?(?:冷|好笑的|搞笑的)?"
    r"(?:笑话|笑話|段子|谜语|謎語|脑筋急转弯|腦筋急轉彎|梗)"
    r"(?![^。！？?!\n，,；;]{0,2}?(?:的|生成|程序|函数|函數|接口|机器人|機器人|网站|網站|(?i:app|api)))")
# ... nor one a program named in the topic does something to, the joke's noun with no 的 before
# it (写个bash脚本输出笑话, 写一个Python脚本每天发笑话), where 关于bash脚本的笑话, 关于代码审查的笑话
# and 讲个bash脚本笑话 are about it
_ZH_PROGRAM_DOING = re.compile(
    r"(?:脚本|腳本|程序(?![员員猿])|程式|函数|函數|代码|代碼|爬虫|爬蟲|机器人|機器人|接口"
    r"|(?i:bot|app|api|script)).")

# Japanese: the topic before the joke's noun in its clause, the noun asked for (を書いて, 教えて,
# 言って, 作って) or ending the clause; not one written with a language (Pythonで, also an
# adjective away: Pythonで面白いジョーク) nor one a program shows (ジョークを表示する関数)
# (read from the noun back to its clause's start, at most 30 characters: a pattern trying 30
# characters ahead of every place cost 130 us on a short line)
_JA_NOUN = re.compile("ジョーク|ダジャレ|駄洒落|冗談|なぞなぞ|ギャグ|小話|笑い話|川柳")
_JA_ASKED = re.compile(
    r"を?(?:書|教え|言|作|聞かせ|考え|ください|下さい|お願い|頂戴|ちょうだい)|[。！？?!\n]|$")
_JA_CLAUSE_ENDS = frozenset("。！？?!\n、，,；;「」")
_JA_REACH = 30
_JA_WRITTEN_WITH = re.compile(r"[A-Za-z0-9+#]\s*で|(?:スクリプト|プログラム|コード|関数)で|使って")


def _ja_topics(text: str) -> list[tuple[int, int]]:
    spans = []
    for m in _JA_NOUN.finditer(text):
        start = m.start()
        if start == 0 or text[start - 1] == "で" or not _JA_ASKED.match(text, m.end()):
            continue
        begin = start
        while begin > max(0, start - _JA_REACH) and text[begin - 1] not in _JA_CLAUSE_ENDS:
            begin -= 1
        if begin < start and not _JA_WRITTEN_WITH.search(text, begin, start):
            spans.append((begin, start))
    return spans


def without_joke_topics(text: str) -> str:
    """``text`` with the topic of each joke, pun or riddle it asks for blanked (spaces, so every
    place keeps its index), or ``text`` itself when it asks for none."""
    if not _JOKE_NOUN.search(text):
        return text
    spans: list[tuple[int, int]] = []
    folded = text.lower()
    # the English look reads the lower-cased text (its places are the text's when it keeps its
    # length; else the text itself, case-blind)
    english = (_EN_JOKE.finditer(folded) if len(folded) == len(text)
               else _EN_JOKE_UNFOLDED.finditer(text))
    for m in english:
        spans += [m.span(g) for g in (1, 2) if m.start(g) >= 0]
    spans += [m.span(1) for m in _ZH_JOKE.finditer(text)
              if text[m.end(1)] == "的" or not _ZH_PROGRAM_DOING.search(text, m.start(1), m.end(1))]
    spans += _ja_topics(text)
    if not spans:
        return text
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)
