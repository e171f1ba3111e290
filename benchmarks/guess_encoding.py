"""How often a context file's encoding is guessed right: this tree's ``guess_encoding`` against
the same module at a baseline commit, on the same lines in the same run.

Lines: short gettext messages (1-3 words, up to ``--per-language`` a language, seed 1) from the
machine's ``/usr/share/locale`` catalogues, each encoded in its language's Windows or CJK code
page (skipped when the page cannot write it, or when it is ASCII: no guess is made for those);
and ``--jieba`` random words of jieba's dictionary (Han only, 2-6 characters), encoded GBK. For
each line: right (the text and its page, or the same text in an equal page such as ISO-8859-7
for cp1253's letters), misread (another text) or skipped (no guess); ``differ`` counts the
lines whose guess (text and codec) is not the baseline's, so 0 says the two guess alike. The
baseline module and the helper it imports (``letter_tables.py``, where the commit has it) are
read with ``git show REF:path`` and loaded apart (they import only the standard library and
charset-normalizer), so both versions see the same lines.

    python benchmarks/guess_encoding.py [--baseline main] [--per-language 150] [--jieba 20000]
                                        [--json]
"""

from __future__ import annotations

import argparse
import gettext
import importlib.util
import json
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
MODULE = "hermes_core/agent/prompt/guess_encoding.py"
#: The modules it imports, each loaded from the same tree or commit before it.
HELPERS = ("hermes_core/agent/prompt/letter_tables.py",)
LOCALE = Path("/usr/share/locale")
#: Each language measured and the page its Windows (or Unix, for EUC-JP) saves it in.
PAGES: dict[str, tuple[str, ...]] = {
    "cs": ("cp1250",), "pl": ("cp1250",), "sk": ("cp1250",), "hu": ("cp1250",),
    "hr": ("cp1250",), "sl": ("cp1250",), "ro": ("cp1250",),
    "fr": ("cp1252",), "de": ("cp1252",), "es": ("cp1252",), "it": ("cp1252",),
    "pt": ("cp1252",),
    "ru": ("cp1251",), "uk": ("cp1251",), "bg": ("cp1251",), "sr": ("cp1251",),
    "el": ("cp1253",),
    "zh_CN": ("gbk",), "zh_TW": ("big5",), "ja": ("cp932", "euc_jp"), "ko": ("cp949",),
}
#: Pages a guess may name for the same text (the module reads GBK as GB18030, etc.).
SAME = {"gbk": "gb18030", "iso8859_7": "cp1253"}


def _source(ref: str | None, path: str) -> str | None:
    """``path``'s text in this tree (``ref`` None) or at commit ``ref`` (None: not there)."""
    if ref is None:
        file = ROOT / path
        return file.read_text(encoding="utf-8") if file.exists() else None
    done = subprocess.run(["git", "-C", str(ROOT), "show", f"{ref}:{path}"],
                          check=False, capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else None


def load(ref: str | None) -> ModuleType:
    """The module of this tree (``ref`` None) or of commit ``ref``, with the helper modules it
    imports (:data:`HELPERS`) from the same tree or commit: imported by their own names they
    would be this tree's on both sides. A commit from before a helper was split out has none
    (its module held it)."""
    tag = (ref or "tree").replace("-", "_").replace("/", "_").replace("~", "_").replace("^", "_")
    loaded: dict[str, str] = {}   # a helper's package path -> the name it was loaded under
    for path in (*HELPERS, MODULE):
        source = _source(ref, path)
        if source is None:
            if path != MODULE:
                continue
            raise SystemExit(f"guess_encoding.py: no {MODULE} at baseline {ref!r} in {ROOT}; "
                             "pass --baseline HEAD or a commit")
        for dotted, name in loaded.items():
            source = source.replace(f"from {dotted} import", f"from {name} import")
        name = f"{Path(path).stem}_{tag}"
        spec = importlib.util.spec_from_loader(name, loader=None)
        assert spec is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module   # dataclasses and functools look the module up by name
        exec(compile(source, f"{ref or 'tree'}:{path}", "exec"), module.__dict__)
        loaded[path.removesuffix(".py").replace("/", ".")] = name
    return module


def gettext_lines(lang: str, count: int, rng: random.Random) -> list[str]:
    """Up to ``count`` distinct 1-3-word messages past ASCII of ``lang``'s catalogues."""
    found: set[str] = set()
    for mo in sorted((LOCALE / lang / "LC_MESSAGES").glob("*.mo")):
        try:
            with mo.open("rb") as f:
                catalog = gettext.GNUTranslations(f)._catalog  # type: ignore[attr-defined]
        except (OSError, UnicodeDecodeError):   # an unreadable catalogue: none of its lines
            continue
        for key, value in catalog.items():
            if not key or not isinstance(value, str):
                continue
            for line in value.splitlines():
                line = line.strip()
                if line and not line.isascii() and 1 <= len(line.split()) <= 3:
                    found.add(line)
    lines = sorted(found)
    rng.shuffle(lines)
    return lines[:count]


def jieba_words(count: int, rng: random.Random) -> list[str]:
    import jieba

    path = Path(jieba.__file__).parent / "dict.txt"
    words = [w for w in (line.split(" ", 1)[0] for line in
                         path.read_text(encoding="utf-8").splitlines())
             if 2 <= len(w) <= 6 and all("\u4e00" <= c <= "\u9fff" for c in w)]
    return rng.sample(words, min(count, len(words)))


def verdict(got: tuple[str, str] | None, text: str) -> tuple[str, str]:
    """("right" | "misread" | "skipped", the page guessed) of the guess ``got`` for ``text``."""
    if got is None:
        return "skipped", ""
    return ("right" if got[0] == text else "misread"), got[1]


def measure(modules: dict[str, ModuleType], cases: list[tuple[str, str, str]]
            ) -> dict[str, dict[str, object]]:
    """Per module and set: counts, the pages misread into, and rows that changed."""
    out: dict[str, dict[str, object]] = {}
    by_set: dict[str, list[tuple[str, str]]] = {}
    for name, text, page in cases:
        by_set.setdefault(name, []).append((text, page))
    for name, rows in by_set.items():
        guesses = {label: [m.guess_decode(text.encode(page)) for text, page in rows]
                   for label, m in modules.items()}
        results = {label: [verdict(got, text) for got, (text, _) in zip(g, rows, strict=True)]
                   for label, g in guesses.items()}
        entry: dict[str, object] = {}
        for label, got in results.items():
            counts = Counter(v for v, _ in got)
            misread_as = Counter(p for v, p in got if v == "misread")
            entry[label] = {"right": counts["right"], "misread": counts["misread"],
                            "skipped": counts["skipped"], "misread_as": dict(misread_as)}
        base, tree = results["baseline"], results["tree"]
        entry["worse"] = [rows[i][0] for i in range(len(rows))
                          if (base[i][0] == "right" and tree[i][0] != "right")
                          or (base[i][0] == "skipped" and tree[i][0] == "misread")]
        entry["better"] = [rows[i][0] for i in range(len(rows))
                           if (tree[i][0] == "right" and base[i][0] != "right")
                           or (tree[i][0] == "skipped" and base[i][0] == "misread")]
        entry["differ"] = sum(a != b for a, b in zip(guesses["baseline"], guesses["tree"],
                                                     strict=True))
        out[name] = entry
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", default="main")
    parser.add_argument("--per-language", type=int, default=150)
    parser.add_argument("--jieba", type=int, default=20_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    modules = {"baseline": load(args.baseline), "tree": load(None)}
    cases: list[tuple[str, str, str]] = []
    for lang, pages in PAGES.items():
        lines = gettext_lines(lang, args.per_language, random.Random(1))
        for page in pages:
            for line in lines:
                try:
                    line.encode(page)
                except UnicodeEncodeError:
                    continue
                cases.append((f"{lang}:{page}", line, page))
    cases += [("jieba:gbk", w, "gbk") for w in jieba_words(args.jieba, random.Random(1))]
    sets = measure(modules, cases)
    right = {label: sum(e[label]["right"] for e in sets.values())   # type: ignore[index]
             for label in modules}
    result = {"baseline": args.baseline, "lines": len(cases),
              "worse": sum(len(e["worse"]) for e in sets.values()),   # type: ignore[arg-type]
              "better": sum(len(e["better"]) for e in sets.values()),   # type: ignore[arg-type]
              "differ": sum(e["differ"] for e in sets.values()),   # type: ignore[misc]
              "right_ratio": round(right["tree"] / max(right["baseline"], 1), 4), "sets": sets}
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
        return 0
    print(f"{result['lines']} lines: worse {result['worse']}, better {result['better']}, "
          f"differ {result['differ']}, "
          f"right {result['right_ratio']} of the baseline's")
    for name, entry in sets.items():
        b, t = entry["baseline"], entry["tree"]
        print(f"{name:14} right/misread/skipped {b['right']}/{b['misread']}/{b['skipped']} -> "
              f"{t['right']}/{t['misread']}/{t['skipped']}  worse {len(entry['worse'])} "
              f"better {len(entry['better'])}  {t['misread_as']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
