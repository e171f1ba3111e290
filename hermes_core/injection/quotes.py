"""Where a text quotes: code spans, quotation marks in the scripts the scan reads, and Markdown
quote lines. The scan takes quoted material out of a paragraph that frames it as an example, so
the patterns that find it are one job, apart from the rules that judge what is left."""

from __future__ import annotations

import re

CODE_SPAN = re.compile(r"(`+)(?:(?!\1).){1,400}?\1", re.DOTALL)
QUOTED = re.compile(r"\"[^\"\n]{1,400}\"|“[^”\n]{1,400}”|„[^“”\n]{1,400}[“”]|«[^»\n]{1,400}»|"
                    r"「[^」\n]{1,400}」|『[^』\n]{1,400}』|(?<!\w)'[^'\n]{4,400}'(?!\w)")
QUOTE_LINE = re.compile(r"^\s{0,3}>.*$", re.MULTILINE)

# a code span that quotes: not glued to the letters of a word ("Ne`w` syst`em`" quotes nothing)
QUOTING_SPAN = re.compile(r"(?<!\w)(`+)(?:(?!\1).){1,400}?\1(?!\w)", re.DOTALL)

# a quotation wrapped over at most two lines of a paragraph, as prose is wrapped in a README
QUOTED_WRAPPED = re.compile(r"\"[^\"\n]{0,400}(?:\n[^\"\n]{1,400}){0,2}\"|"
                            r"“[^”\n]{0,400}(?:\n[^”\n]{1,400}){0,2}”")


def strip_quotes(text: str, spans: re.Pattern[str] = QUOTING_SPAN) -> str:
    """The text without its quotations. The rules' reading (the default) leaves in a code span
    glued into a word and takes out a quotation wrapped over a line break; the learned scorer's
    (``spans=CODE_SPAN``) stays as it was trained."""
    text = spans.sub(" ", text)
    text = QUOTE_LINE.sub("", text)
    if spans is QUOTING_SPAN:
        text = QUOTED_WRAPPED.sub(" ", text)
    return QUOTED.sub(" ", text)
