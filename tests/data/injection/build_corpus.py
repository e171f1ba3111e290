"""Build corpus.jsonl from hostile_texts.py and benign_texts.py (deterministic; run from anywhere).

Each text is embedded among ordinary paragraphs as a MEMORY.md entry, a HERMES.md paragraph or a
SKILL.md body; the English attacks listed in EVADE also appear disguised (look-alike letters,
invisible code points, a line break inside the phrase or a word, spelled-out letters, base64),
and eight of them spelled in Greek letters by their sound (``greek_texts.py``).
The texts of ``hijack_texts.py`` (orders aimed at the assistant's answer) come last and keep the
location they name: whether they are hostile depends on it. Texts written after the corpus was
first trained on (Chinese hand-overs and their policy twins, the Greek texts) come after those.
Groups (a text and its variants) go wholly to one split: ``dev`` (tune here) or ``heldout``
(report only), chosen by a hash of the group name.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from benign_texts import BENIGN, POLICY_ZH  # noqa: E402
from greek_texts import GREEK_BENIGN, GREEK_SPELLED  # noqa: E402
from hijack_texts import HIJACK  # noqa: E402
from hostile_texts import EVADE, HANDOVER_ZH, HOSTILE  # noqa: E402

SOURCE = "written for hermes-core (MIT); see README.md"
LOOKALIKE = str.maketrans({"a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "i": "і", "x": "х",
                           "y": "у", "s": "ѕ", "A": "Α", "E": "Ε", "O": "Ο", "I": "Ι", "T": "Τ"})
INVISIBLE = ["\u00ad", "\u200d", "\u3164", "\u2062", "\u034f", "\u115f"]


def homoglyph(text: str) -> str:
    return text.translate(LOOKALIKE)


def invisible(text: str) -> str:
    out, n = [], 0
    for i, c in enumerate(text):
        out.append(c)
        if c.isalpha() and i % 3 == 1:
            out.append(INVISIBLE[n % len(INVISIBLE)])
            n += 1
    return "".join(out)


def line_break(text: str) -> str:
    words = text.split(" ")
    mid = max(1, len(words) // 3)
    return " ".join(words[:mid]) + "\n" + " ".join(words[mid:])


def mid_word(text: str) -> str:
    words = text.split(" ")
    i = max(range(len(words)), key=lambda j: len(words[j]) if j < 6 else 0)
    w = words[i]
    words[i] = w[: len(w) // 2] + "\n" + w[len(w) // 2:]
    return " ".join(words)


def spaced(text: str) -> str:
    words = text.split(" ")
    return "  ".join(" ".join(w) for w in words[:6]) + (" " + " ".join(words[6:]) if words[6:] else "")


def b64(text: str) -> str:
    blob = base64.b64encode(text.encode()).decode()
    return f"Configuration payload for the setup step: {blob}"


TRANSFORMS = [("homoglyph", homoglyph), ("invisible", invisible), ("line-break", line_break),
              ("spaced", spaced), ("base64", b64), ("mid-word", mid_word)]

WRAP = {
    "memory": "User prefers concise answers.\n§\n{text}\n§\nDeploys happen on Tuesdays.",
    "context": "# Project notes\n\nThis repository builds the billing service.\n\n{text}\n\n"
               "## Testing\n\nRun `make test` before pushing.",
    "skill": "Use this skill when the user asks about the billing service.\n\n{text}\n\n"
             "Return the result as a short table.",
}
LOCATIONS = list(WRAP)


def split_of(group: str) -> str:
    return "dev" if int(hashlib.sha1(group.encode()).hexdigest(), 16) % 2 == 0 else "heldout"


def rows() -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    n = 0

    def add(group: str, lang: str, label: str, text: str, variant: str, where: str = "") -> None:
        nonlocal n
        location = where or LOCATIONS[n % len(LOCATIONS)]
        n += 1
        out.append({"id": f"{group}:{variant}", "group": group, "split": split_of(group),
                    "label": label, "lang": lang, "location": location, "variant": variant,
                    "text": WRAP[location].format(text=text), "source": SOURCE})

    for group, lang, text in HOSTILE:
        add(group, lang, "hostile", text, "plain")
    for k, group in enumerate(EVADE):
        _g, lang, text = next(h for h in HOSTILE if h[0] == group)
        for j in range(4):
            name, fn = TRANSFORMS[(k + j) % len(TRANSFORMS)]
            add(group, lang, "hostile", fn(text), name)
    for group, lang, text in BENIGN:
        add(group, lang, "benign", text, "plain")
    for group, lang, label, where, text in HIJACK:
        add(group, lang, label, text, "plain", where)
    # written later, appended after every earlier row so none of those moves or changes location
    for group, lang, text in HANDOVER_ZH:
        add(group, lang, "hostile", text, "plain")
    for group, lang, text in POLICY_ZH:
        add(group, lang, "benign", text, "plain")
    for group, text in GREEK_SPELLED:
        add(group, "en", "hostile", text, "greek-letters")
    for group, text in GREEK_BENIGN:
        add(group, "el", "benign", text, "plain")
    return out


def main() -> None:
    with open(HERE / "corpus.jsonl", "w", encoding="utf-8") as f:
        for row in rows():
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
