"""How well recall tells a follow-up from a new question, on pairs its rule was not tuned on
(review s55rC of decision 263).

    python benchmarks/follow_up_pairs.py --json

Decision 263 measured ``episodic/follow_up.is_follow_up`` on 153 labelled pairs, and added the
words of its misses to its lists; the pairs were not shipped. These 30 were written for the review
before any rule was run on them: English, simplified and traditional Chinese, acknowledgements.
Each rule is scored on the same pairs: ``length`` (the rule before 263: a message is a follow-up
when it is too short, ``follow_up.too_short``) is the baseline; ``rule`` is ``is_follow_up``.
``*_follow_ups`` counts follow-ups read as such, ``*_new_alone`` new questions read alone.
"""

from __future__ import annotations

import argparse
import json

from hermes_core.agent.episodic.follow_up import is_follow_up, too_short

NGINX = "How do I set up nginx as a reverse proxy for my node app?"
DEDUPE = "Write a python function that dedupes a list while keeping order"
TCP = "What's the difference between TCP and UDP?"
REBASE = "Explain how git rebase works"
WW1 = "Summarize the main causes of World War I"
DOCKER = "怎么用 docker compose 部署 postgres？"
LEAVE = "帮我写一封请假邮件"
TAIPEI = "介紹一下台北的夜市"
GRADIENT = "解释一下什么是梯度下降"

#: (previous user message, message, the message leans on the previous one)
PAIRS: tuple[tuple[str, str, bool], ...] = (
    (NGINX, "what about websockets?", True),
    (NGINX, "does it need a restart after?", True),
    (DEDUPE, "now in rust", True),
    (DEDUPE, "can you add type hints", True),
    (TCP, "which one does DNS use?", True),
    (REBASE, "show me the interactive version", True),
    (REBASE, "is that safe on a shared branch?", True),
    (WW1, "shorter please", True),
    (NGINX, "best sushi in Tokyo", False),
    (DEDUPE, "how tall is Mount Everest", False),
    (TCP, "convert 30 celsius to fahrenheit", False),
    (REBASE, "symptoms of vitamin D deficiency", False),
    (WW1, "set a reminder for my dentist appointment", False),
    (TCP, "good names for a golden retriever puppy", False),
    (DOCKER, "数据怎么持久化", True),
    (DOCKER, "那 mysql 呢", True),
    (LEAVE, "语气再客气一点", True),
    (LEAVE, "改成英文版", True),
    (TAIPEI, "哪一個最好吃？", True),
    (TAIPEI, "那交通怎麼去", True),
    (GRADIENT, "能画个图吗", True),
    (DOCKER, "今晚吃什么好", False),
    (LEAVE, "上海到杭州高铁多久", False),
    (TAIPEI, "明天會下雨嗎", False),
    (GRADIENT, "推荐几本科幻小说", False),
    (GRADIENT, "红烧肉的做法", False),
    (LEAVE, "那年夏天的电影推荐", False),
    (NGINX, "thanks, that worked 🙏", True),
    (DOCKER, "好的，明白了", True),
    (REBASE, "🤔", True),
)


def _length(message: str, previous: str) -> bool:
    return bool(previous.strip()) and too_short(message)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    out: dict[str, int | list[str]] = {
        "follow_ups": sum(y for _, _, y in PAIRS), "new": sum(not y for _, _, y in PAIRS)}
    for name, rule in (("length", _length), ("rule", is_follow_up)):
        got = [(m, y, rule(m, p)) for p, m, y in PAIRS]
        out[f"{name}_follow_ups"] = sum(y and g for _, y, g in got)
        out[f"{name}_new_alone"] = sum(not y and not g for _, y, g in got)
        out[f"{name}_wrong"] = [m for m, y, g in got if y != g]
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
    else:
        for key, value in out.items():
            print(f"{key:>20}  {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
