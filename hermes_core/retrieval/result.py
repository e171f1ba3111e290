"""What one retrieval decided, and how that decision reads in the prompt.

Kept apart from the retriever so that what is shown (a trigger's auto-loaded body, a hint list,
the full list when retrieval is off) can change without touching how skills are ranked, and so
readers of a result (the agent, the REPL, the CLI) need not import the ranking machinery.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from hermes_core.injection import (
    INJECTION_CATEGORIES,
    InjectionFinding,
    description_notice,
    guard_cached,
)
from hermes_core.injection.memo import GuardMemo
from hermes_core.injection.memo_log import DESCRIPTIONS
from hermes_core.retrieval.fusion import UNJUDGED, GateDecision
from hermes_core.retrieval.skills import MAX_DESCRIPTION, skill_body
from hermes_core.retrieval.triggers import TriggerHit
from hermes_core.retrieval.usage import UsageScores
from hermes_core.types import Skill

HINT_RATIO = 0.5
HINT_MARGIN = 0.0
HINT_REACH = 2.0

AUTO_LOAD_NOTE = ("(System note: this skill was loaded automatically because the message matched "
                  "its trigger; follow it if it applies.)")
HINT_NOTE = ("These skills may help with this message. Load one with skill_view(name) if it "
             "applies, or ignore them.")
# Description verdicts remembered, most recent kept: a 2,000-skill full list eight times over.
DESCRIPTION_MEMO = 16_384


@dataclass(frozen=True, slots=True)
class RetrievalResult:
    """One retrieval: what was chosen, by which layer, and why."""

    query: str
    layer: str                                   # "L1", "L5", "none" (no skills), "disabled"
    skills: tuple[Skill, ...] = ()
    scores: tuple[float, ...] = ()               # fused score per returned skill
    contributions: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    answered: tuple[str, ...] = ()               # layers that answered (not abstained)
    gated: bool = False                          # the gate rejected the best candidate
    gate: GateDecision | None = None
    trigger: TriggerHit | None = None
    timings_ms: Mapping[str, float] = field(default_factory=dict)
    candidates: tuple[str, ...] = ()             # ranking before the gate (explain / eval)
    usage: UsageScores | None = None             # the usage layer's evidence, when it answered
    translation: str = ""                        # the request translated for the gate's second
    second_opinion: GateDecision | None = None   # opinion, and that translation's own decision

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.skills)


def render_auto_loaded(skill: Skill, scan: tuple[str, ...] = INJECTION_CATEGORIES) -> str:
    """The skill's body for the prompt, each hostile paragraph replaced by a BLOCKED notice: a
    SKILL.md from a shared folder is as untrusted as any context file (``scan``: the injection
    categories, () with ``prompt.injection_scan: false``)."""
    body = skill_body(skill)
    if scan:
        body = guard_cached(body, f"SKILL.md of {skill.name}", scan).text
    return f"## Auto-loaded Skill: {skill.name}\n{AUTO_LOAD_NOTE}\n\n{body}\n"


def hint_description(skill: Skill, limit: int = MAX_DESCRIPTION) -> str:
    """The description as a hint shows it: clipped at the agentskills limit (a longer one is kept
    in the catalog, and whole in skill_view, but must not crowd the per-turn context)."""
    d = one_line(skill.description)
    return d if len(d) <= limit else d[: limit - 1].rstrip() + "…"


def one_line(text: str) -> str:
    """``text`` with its line breaks and runs of white space as one space, as the loader folds a
    description: a skill given in code (``SkillRetriever(skills=...)``) is not read through it,
    and a line break in its name or description forged headings, fences, tables and skill lines
    in the middle of the list. A printable text (every loaded one) is returned as it is."""
    return text if text.isprintable() else " ".join(text.split())


#: The scan of each description shown, by a digest of the text (not the skill's name: a renamed
#: skill is not scanned again), shared by every retriever in the process: the full list of a large
#: catalog is scanned once, on its first turn, and a hint costs a digest per skill after. The clean
#: verdicts are kept in the home too (``memo_log``, attached with the learned scorer's by
#: ``use_home_cache``): a restart scans none of the descriptions it found clean.
DESCRIPTION_VERDICTS = GuardMemo(DESCRIPTION_MEMO, DESCRIPTIONS)


def shown_descriptions(skills: Sequence[Skill], scan: tuple[str, ...] = INJECTION_CATEGORIES,
                       ) -> list[tuple[str, InjectionFinding | None]]:
    """What a list shows of each skill's description, and why it was withheld (None when shown):
    the clipped description, scanned like a body (a third-party SKILL.md's front matter reaches
    every turn that hints it), or a BLOCKED notice in its place. Shared by the model's lists and
    ``skills list``, so the user sees what the model is shown."""
    shown = [hint_description(s) for s in skills]
    if not scan:
        return [(d, None) for d in shown]
    guarded = DESCRIPTION_VERDICTS.guard(shown, name="skill description", categories=scan)
    return [(description_notice(one_line(s.name), g.findings[0]), g.findings[0]) if g.findings
            else (d, None) for s, d, g in zip(skills, shown, guarded, strict=True)]


def skill_lines(skills: Sequence[Skill], scan: tuple[str, ...] = INJECTION_CATEGORIES) -> list[str]:
    """One ``- name: description`` line per skill (:func:`shown_descriptions`); a hostile
    description is shown as a BLOCKED notice after the name, never dropped: the user sees why a
    skill has no description, and skill_view still loads (and scans) its body."""
    return [f"- {one_line(s.name)}: {d}"
            for s, (d, _why) in zip(skills, shown_descriptions(skills, scan), strict=True)]


def render_hint(skills: Sequence[Skill], scan: tuple[str, ...] = INJECTION_CATEGORIES) -> str:
    if not skills:
        return ""
    return "## Skill Retrieval Hint\n" + HINT_NOTE + "\n" + "\n".join(skill_lines(skills, scan)) + "\n"


def render_full_list(skills: Sequence[Skill], scan: tuple[str, ...] = INJECTION_CATEGORIES) -> str:
    """The fallback when retrieval is disabled: every skill, as before retrieval existed (each
    description scanned, as in a hint)."""
    if not skills:
        return ""
    return ("## Available Skills\nLoad one with skill_view(name) if it applies.\n"
            + "\n".join(skill_lines(skills, scan)) + "\n")


def render(result: RetrievalResult, scan: tuple[str, ...] = INJECTION_CATEGORIES) -> str:
    if result.layer == "L1" and result.skills:
        return render_auto_loaded(result.skills[0], scan)
    if result.layer == "disabled" or (result.gate is not None and result.gate.rule == UNJUDGED):
        return render_full_list(result.skills, scan)
    return render_hint(result.skills, scan)


def lexical_evidence(words: np.ndarray, *others: np.ndarray | None) -> np.ndarray:
    """:func:`hint_cut`'s evidence when no dense layer answered: 0 for a skill that shares a word
    with the request (``LexicalTurn.words``) or that another layer scores above 0 (a synonym, past
    use), -inf for one the request meets through single characters alone. So beside a best that
    shares a word, only skills that share one too are listed; a best that shares none (nothing
    tells the ranked skills apart) lists as before. Without it, lexical-only hints on
    ``examples/home`` listed Chinese skills beside docker-debugging for a container request
    (退出 -> 出, 怎么办 -> 怎, 么, 办), their fused scores within the ratio of the winner's."""
    backed = np.asarray(words, dtype=bool).copy()
    for other in others:
        if other is not None and len(other) == len(backed):
            backed |= np.asarray(other, dtype=np.float64) > 0
    return np.where(backed, 0.0, -np.inf)


def hint_cut(scores: np.ndarray, order: Sequence[int] | np.ndarray, ratio: float = HINT_RATIO,
             margin: float = HINT_MARGIN, evidence: np.ndarray | None = None,
             reach: float = HINT_REACH) -> list[int]:
    """The ranked skills worth listing, best first (indices into ``scores``; the best always).

    Two tests, both needed to tell a clear winner from a crowd:

    * close to the best in the fusion: above the catalog's mean (z > 0; RRF > 0: ranked by some
      layer) and >= ``ratio`` x the best's score (scale-free), or within ``margin`` of it (an
      absolute allowance in fused units, off by default: 1.5 let every skill above the catalog's
      mean through whenever the best scored under 3, as it does on every small home);
    * backed by the gate's evidence, when ``evidence`` is given (per skill, its calibrated gate
      score minus the threshold: ``DenseCalibration.own_gate_margins``): a skill the gate would
      pass on its own, or one within ``reach`` of the best's evidence. So a best that clears the
      gate by ``reach`` or more lists only skills that clear it too, and a weak best lists its
      near rivals. This is what stops a Chinese request for an English-described skill from
      listing every Chinese skill: their fused scores sit near the winner's on the raw cosine's
      language bias, their calibrated evidence does not.

    On the dev catalogs (full MetaTool and HammerBench-zh, 16-40-skill sub-catalogs in English,
    Chinese and mixed), against ratio 0.5 / margin 1.5 alone: hint_recall within 1.3 points, the
    small catalogs' lists 10-16% shorter.
    """
    idx = [int(i) for i in order]
    if not idx:
        return []
    best = float(scores[idx[0]])
    ev = np.full(len(scores), np.inf) if evidence is None else np.asarray(evidence, dtype=np.float64)
    floor = min(0.0, float(ev[idx[0]]) - reach)
    keep = [i for i in idx if scores[i] > 0 and (scores[i] >= ratio * best or scores[i] >= best - margin)
            and (i == idx[0] or float(ev[i]) >= floor)]
    return keep or [idx[0]]
