"""The outbound scrub of a production-size prompt: scrubbed whole each turn, against once per text.

The call loop scrubs every prompt it hands a provider
(:func:`hermes_core.agent.prompt.outbound.scrub_prompt`). Most of it repeats turn after turn:
the system prompt (SOUL.md and a MEMORY.md / USER.md grown to
~12,000 / ~5,000 characters, as ``benchmarks/turn_home.py``'s production home has them) and the
history (``--pairs`` user/assistant pairs in English and Chinese). ``--turns`` turns are played,
the history growing by a pair a turn, and each turn's scrub is timed two ways back to back:

* ``whole``: ``scrub_prompt(prompt, redactor)``, every part scrubbed;
* ``memo``: ``scrub_prompt(prompt, redactor, memo)`` with one :class:`ScrubMemo` over the turns
  (the system and the earlier messages scrubbed once, the tool definitions once too);
* ``memo_tools_each_turn``: the memo as it was before tool definitions were remembered: the
  prompt without tools through a second memo, plus the ``--tools`` definitions scrubbed.

Each turn's tool list is a new tuple of equal specs, as a turn builds it. The results are
checked equal each turn. Prints medians over the turns after the first,
``ratio = memo_ms_p50 / whole_ms_p50`` and ``tools_ratio = memo_ms_p50 /
memo_tools_each_turn_ms_p50``.

    python benchmarks/outbound_scrub.py --json [--pairs 40] [--turns 30] [--tools 24]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dataclasses import replace

from hermes_core.agent.prompt import outbound
from hermes_core.agent.prompt.outbound import ScrubMemo, scrub_prompt
from hermes_core.cli.argtypes import positive_int
from hermes_core.redact import Redactor
from hermes_core.types import Message, Prompt, ToolSpec

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "home"
KEYS = ("zq-custom-0123456789abcdef", "my secret key 42", "Zq7x")
REPLY_EN = ("Here is what I would do: first check the logs with `kubectl logs -p`, then compare "
            "the deployment's env with the secret it names; the usual cause is a renamed key. ")
REPLY_ZH = "好的，我先帮你查一下相关的记录，然后把结果整理成一份清单发给你，有问题随时告诉我。"


def grown(text: str, chars: int) -> str:
    lines = [x for x in text.splitlines() if x.strip()]
    out, k = [lines[0]], 0
    while sum(len(x) + 1 for x in out) < chars:
        out.append(f"- ({k}) {lines[1 + k % (len(lines) - 1)].lstrip('- ')}")
        k += 1
    return "\n".join(out)


def system() -> str:
    def read(name: str) -> str:
        return (EXAMPLE / name).read_text("utf-8")

    return "\n\n---\n\n".join((read("SOUL.md"), grown(read("MEMORY.md"), 12_000),
                               grown(read("USER.md"), 5_000)))


def pair(i: int) -> tuple[Message, Message]:
    zh = i % 2 == 1
    ask = f"第{i}个问题：部署为什么失败了？" if zh else f"Question {i}: why did the deploy fail?"
    return Message("user", ask), Message("assistant", (REPLY_ZH if zh else REPLY_EN) * (1 + i % 6))


def tools(n: int) -> tuple[ToolSpec, ...]:
    """``n`` tool definitions of the size the built-in tools have (a paragraph, three
    parameters with descriptions)."""
    return tuple(ToolSpec(
        f"tool_{i}", f"Tool {i}: " + REPLY_EN * 2,
        {"type": "object", "required": ["path"], "properties": {
            "path": {"type": "string", "description": "The file or folder to act on."},
            "limit": {"type": "integer", "description": "At most this many results."},
            "mode": {"type": "string", "enum": ["read", "write", "list"],
                     "description": "What to do with it."}}}) for i in range(n))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--pairs", type=positive_int, default=40, help="history pairs at the start")
    ap.add_argument("--turns", type=positive_int, default=30)
    ap.add_argument("--tools", type=positive_int, default=24)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    scrub, memo, sys_text = Redactor(KEYS), ScrubMemo(), system()
    history = [m for i in range(args.pairs) for m in pair(i)]
    old_memo = ScrubMemo()
    whole_ms, memo_ms, old_ms = [], [], []
    for t in range(args.turns):
        prompt = Prompt(system=sys_text, context=f"Current date: turn {t}\n\nskills\n\nrecalled",
                        messages=(*history, Message("user", f"turn {t}: and now? {KEYS[t % 3]}")),
                        tools=tools(args.tools))
        t0 = time.perf_counter()
        a = scrub_prompt(prompt, scrub)
        t1 = time.perf_counter()
        b = scrub_prompt(prompt, scrub, memo)
        t2 = time.perf_counter()
        c = scrub_prompt(replace(prompt, tools=()), scrub, old_memo)
        c_tools = tuple(outbound._tool(x, scrub) for x in prompt.tools)
        t3 = time.perf_counter()
        assert a == b == replace(c, tools=c_tools), "the memo changed what is sent"
        if t:
            whole_ms.append((t1 - t0) * 1000)
            memo_ms.append((t2 - t1) * 1000)
            old_ms.append((t3 - t2) * 1000)
        history += pair(args.pairs + t)
    w, m = statistics.median(whole_ms), statistics.median(memo_ms)
    o = statistics.median(old_ms)
    report = {"system_chars": len(sys_text), "messages_first": 2 * args.pairs + 1,
              "tools": args.tools, "turns": len(whole_ms), "whole_ms_p50": round(w, 4),
              "memo_ms_p50": round(m, 4), "memo_tools_each_turn_ms_p50": round(o, 4),
              "ratio": round(m / w, 4), "tools_ratio": round(m / o, 4),
              "texts_scrubbed_by_memo": memo.misses}
    print(json.dumps(report, indent=None if args.json else 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
