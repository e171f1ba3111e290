"""Build the query adapter's training data from pinned public tool-use datasets (Apache-2.0).

Reads git snapshots of the source repositories (the ``fetch`` mirrors under ``/work/.mirror``, or
any clone: ``--mirror DIR`` holding ``<owner>+<name>/repo``) at the commits pinned below and writes

* ``pairs.jsonl``: one English request and its gold tool (``source``, ``query``, ``tool``: the gold's
  line number in ``catalog.jsonl`` from 0, ``url``);
* ``catalog.jsonl``: every tool a source offers (``source``, ``name``, ``description``, ``url``):
  the gold tools and, for BFCL, the other functions each request was offered beside its gold one.

Sources (one per line of ``SOURCES``): BFCL v4 live_simple / live_multiple (functions and requests
contributed by users) and simple_python / multiple (written by the authors), from
ShishirPatil/gorilla, whose data README declares apache-2.0; APIBench torchhub_train from the same
repository; ToolAlpaca's eval_simulated / eval_real (tangqiaoyu/ToolAlpaca, Apache-2.0). Dropped:
requests that are not English, over 600 characters, duplicates within a source, multi-call golds,
and any tool whose normalised name is a MetaTool skill name (none of these sets holds ChatGPT
plugins; descriptions were also checked against MetaTool's by MiniLM cosine, none above 0.9).
MetaTool, HammerBench, ACEBench and Seal-Tools are never read.

``--extra`` adds ``EXTRA_SOURCES`` (5,614 pairs, 3,537 tools in all): the rest of BFCL's
single-function parts (parallel calls of one function, Java, JavaScript, the unused executable
sets), APIBench's torchhub eval, Hugging Face and TF Hub sets, and the single-tool (G1) queries of
ToolBench as pinned by THUNLP-MT/StableToolBench (Apache-2.0; a RapidAPI tool is one document: its
category and every endpoint offered with it). Leave-one-source-out they did not help, so the
shipped weights are fitted without them (decision 49 in ``docs/architecture.md``).

    python tests/data/adapter/build_pairs.py [--mirror /work/.mirror] [--metatool skills.jsonl] [--extra]
"""

from __future__ import annotations

import argparse
import ast
import functools
import json
import re
import subprocess
import unicodedata
from pathlib import Path
from typing import Any

Offer = tuple[str, str, list[tuple[str, str]], str]   # request, gold name, tools offered, source URL

HERE = Path(__file__).resolve().parent
GORILLA = ("ShishirPatil/gorilla", "6ea57973c7a6097fd7c5915698c54c17c5b1b6c8")
TOOLALPACA = ("tangqiaoyu/ToolAlpaca", "189069998d64a7baf1b4a1c3c4b2e75eb9d05532")
STABLETOOLBENCH = ("THUNLP-MT/StableToolBench", "aa4ed9f4737ad98bd706663f01d63623c3427812")
BFCL = "berkeley-function-call-leaderboard/bfcl_eval/data/"
BFCL_UNUSED = BFCL + "unused_datasets/question/"
STB = "solvable_queries/test_instruction/"
SOURCES = [
    ("bfcl_live", GORILLA, BFCL + "BFCL_v4_live_simple.json"),
    ("bfcl_live", GORILLA, BFCL + "BFCL_v4_live_multiple.json"),
    ("bfcl_synth", GORILLA, BFCL + "BFCL_v4_simple_python.json"),
    ("bfcl_synth", GORILLA, BFCL + "BFCL_v4_multiple.json"),
    ("toolalpaca", TOOLALPACA, "data/eval_simulated.json"),
    ("toolalpaca", TOOLALPACA, "data/eval_real.json"),
    ("apibench_torchhub", GORILLA, "data/apibench/torchhub_train.json"),
]
# Read only with --extra: measured and not used for the shipped weights (decision 49)
EXTRA_SOURCES = [
    ("bfcl_more", GORILLA, BFCL + "BFCL_v4_parallel.json"),
    ("bfcl_more", GORILLA, BFCL + "BFCL_v4_parallel_multiple.json"),
    ("bfcl_more", GORILLA, BFCL + "BFCL_v4_live_parallel.json"),
    ("bfcl_more", GORILLA, BFCL + "BFCL_v4_live_parallel_multiple.json"),
    ("bfcl_more", GORILLA, BFCL + "BFCL_v4_simple_java.json"),
    ("bfcl_more", GORILLA, BFCL + "BFCL_v4_simple_javascript.json"),
    ("bfcl_more", GORILLA, BFCL_UNUSED + "BFCL_v4_exec_simple.json"),
    ("bfcl_more", GORILLA, BFCL_UNUSED + "BFCL_v4_exec_multiple.json"),
    ("bfcl_more", GORILLA, BFCL_UNUSED + "BFCL_v4_exec_parallel.json"),
    ("bfcl_more", GORILLA, BFCL_UNUSED + "BFCL_v4_exec_parallel_multiple.json"),
    ("apibench_torchhub", GORILLA, "data/apibench/torchhub_eval.json"),
    ("apibench_hf", GORILLA, "data/apibench/huggingface_eval.json"),
    ("apibench_tfhub", GORILLA, "data/apibench/tensorflow_eval.json"),
    ("toolbench", STABLETOOLBENCH, STB + "G1_instruction.json"),
    ("toolbench", STABLETOOLBENCH, STB + "G1_category.json"),
    ("toolbench", STABLETOOLBENCH, STB + "G1_tool.json"),
]
MAX_QUERY_CHARS = 600
MAX_DESCRIPTION_CHARS = 1000


def _show(mirror: Path, repo: tuple[str, str], path: str) -> str:
    git_dir = mirror / f"{repo[0].replace('/', '+')}" / "repo"
    return subprocess.run(["git", "-C", str(git_dir), "show", f"{repo[1]}:{path}"],
                          capture_output=True, check=True).stdout.decode()


def _url(repo: tuple[str, str], path: str, anchor: str) -> str:
    return f"https://github.com/{repo[0]}/blob/{repo[1]}/{path}#{anchor}"


def _english(text: str) -> bool:
    return not any(ord(c) > 0x2FF and unicodedata.category(c).startswith("L") for c in text)


def _flat(text: str, limit: int) -> str:
    return " ".join(str(text).split())[:limit]


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _call_name(call: object) -> str:
    """The function a ground-truth call names: ``{name: args}`` or an executable ``name(...)``."""
    return next(iter(call)) if isinstance(call, dict) else str(call).split("(", 1)[0].strip()


def _bfcl(mirror: Path, repo: tuple[str, str], path: str) -> list[Offer]:
    questions = [json.loads(x) for x in _show(mirror, repo, path).splitlines() if x.strip()]
    answer_path = (path.replace("unused_datasets/question/", "unused_datasets/possible_answer/")
                   if "unused_datasets/question/" in path
                   else path.replace(BFCL, BFCL + "possible_answer/"))
    lines = _show(mirror, repo, answer_path).splitlines()
    answers = {a["id"]: a for a in (json.loads(x) for x in lines if x.strip())}
    out = []
    for q in questions:
        a = answers.get(q["id"])
        # one function, called once or several times in parallel; two different ones are two golds
        names = {_call_name(c) for c in a["ground_truth"]} if a else set()
        if len(names) != 1:
            continue
        gold = names.pop()
        funcs = [(f["name"], f.get("description", "")) for f in q["function"]]
        user = [m["content"] for turn in q["question"] for m in turn if m.get("role") == "user"]
        if user and gold in dict(funcs):
            out.append((user[-1], gold, funcs, _url(repo, path, q["id"])))
    return out


def _toolalpaca(mirror: Path, repo: tuple[str, str], path: str) -> list[Offer]:
    out = []
    for api in json.loads(_show(mirror, repo, path)):
        instructions = api["Instructions"]
        if isinstance(instructions, str):
            instructions = ast.literal_eval(instructions)
        for i, text in enumerate(instructions):
            out.append((text, api["Name"], [(api["Name"], api["Description"])],
                        _url(repo, path, f"{api['Name']}/{i}")))
    return out


def _apibench(mirror: Path, repo: tuple[str, str], path: str) -> list[Offer]:
    out = []
    for i, line in enumerate(_show(mirror, repo, path).splitlines()):
        d = json.loads(line)
        # torchhub_train quotes a dict ('Instruction': ..., 'Output'); the eval files and the
        # Hugging Face / TF Hub sets write "###Instruction: ... ###Output"
        m = (re.search(r"'Instruction':\s*(.*?),\s*'Output'", d["code"], re.S)
             or re.search(r"###Instruction:\s*(.*?)\s*###Output", d["code"], re.S))
        if m:
            api = d["api_data"]
            desc = f"{api.get('functionality', '')}. {api.get('description', '')}"
            url = _url(repo, path, f"L{i + 1}")
            out.append((m.group(1), api["api_name"], [(api["api_name"], desc)], url))
    return out


@functools.cache
def _toolbench_tools(mirror: Path, repo: tuple[str, str]) -> dict[str, str]:
    """Each RapidAPI tool of the single-tool (G1) sets as one document: its category and every
    endpoint any query offers (name and description), so a tool reads the same in every query."""
    apis: dict[str, dict[str, str]] = {}
    category: dict[str, str] = {}
    for _, r, path in EXTRA_SOURCES:
        if r != repo:
            continue
        for q in json.loads(_show(mirror, repo, path)):
            for api in q["api_list"]:
                tool = api["tool_name"]
                category.setdefault(tool, api.get("category_name", ""))
                text = _flat(api.get("api_description", ""), 200)
                apis.setdefault(tool, {}).setdefault(api["api_name"], text)
    out = {}
    for tool, endpoints in apis.items():
        parts = [f"{n}: {d}" if d else n for n, d in sorted(endpoints.items())]
        out[tool] = f"{category[tool].replace('_', ' ')}. " + "; ".join(parts)
    return out


def _toolbench(mirror: Path, repo: tuple[str, str], path: str) -> list[Offer]:
    tools = _toolbench_tools(mirror, repo)
    out = []
    for q in json.loads(_show(mirror, repo, path)):
        golds = {t for t, _ in q["relevant APIs"]}
        if len(golds) != 1:
            continue
        gold = golds.pop()
        offered = sorted({a["tool_name"] for a in q["api_list"]})
        out.append((q["query"], gold, [(t, tools[t]) for t in offered],
                    _url(repo, path, f"query_id={q['query_id']}")))
    return out


def build(mirror: Path, metatool: Path | None,
          extra: bool = False) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    banned = ({_norm(json.loads(x)["name"]) for x in metatool.read_text().splitlines() if x.strip()}
              if metatool else set())
    pairs: list[dict[str, Any]] = []
    catalog: dict[tuple[str, str, str], dict[str, Any]] = {}
    seen: set[tuple[str, str]] = set()
    for source, repo, path in SOURCES + (EXTRA_SOURCES if extra else []):
        reader = (_bfcl if "bfcl" in source else _toolalpaca if source == "toolalpaca"
                  else _toolbench if source == "toolbench" else _apibench)
        for query, gold, offered, url in reader(mirror, repo, path):
            q = _flat(query, 10_000)
            if (not q or len(q) > MAX_QUERY_CHARS or not _english(q) or (source, q.lower()) in seen
                    or _norm(gold) in banned):
                continue
            desc = dict(offered)[gold]
            if not desc.strip():
                continue
            seen.add((source, q.lower()))
            for name, d in offered:
                d = _flat(d, MAX_DESCRIPTION_CHARS)
                if d and _norm(name) not in banned:
                    catalog.setdefault((source, name, d), {"source": source, "name": name,
                                                           "description": d, "url": url})
            tool = list(catalog).index((source, gold, _flat(desc, MAX_DESCRIPTION_CHARS)))
            pairs.append({"source": source, "query": q, "tool": tool, "url": url})
    return pairs, list(catalog.values())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirror", default="/work/.mirror", type=Path)
    ap.add_argument("--metatool", type=Path, default=None,
                    help="MetaTool's skills.jsonl: drop tools of the same normalised name")
    ap.add_argument("--extra", action="store_true",
                    help="also read EXTRA_SOURCES (not used for the shipped weights; decision 49)")
    a = ap.parse_args()
    pairs, catalog = build(a.mirror, a.metatool, a.extra)
    for name, rows in (("pairs.jsonl", pairs), ("catalog.jsonl", catalog)):
        with open(HERE / name, "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{len(pairs)} pairs, {len(catalog)} catalog tools")


if __name__ == "__main__":
    main()
