"""The ``skill_view`` tool, and the adapter between the skill retriever and the PromptBuilder.

The retriever hints at skills by name only (a few lines instead of thousands of tokens); the model
loads a skill's full body with ``skill_view(name)`` when it decides one applies, and one file of
the skill's folder (a reference the body names) with ``skill_view(name, file_path)``. The tool is offered
on every turn of an agent that has skills, not only on turns with a hint: tools sit before the
system prompt in the cached prefix, so a tool list that came and went would break the cache.
"""

from __future__ import annotations

import difflib
import json
import logging
import re
from collections.abc import Sequence
from typing import Any

from hermes_core.injection import INJECTION_CATEGORIES, guard_cached
from hermes_core.retrieval.served import served_catalog
from hermes_core.retrieval.skill_files import (
    SkillFileError,
    files_listing,
    read_skill_file,
    skill_now,
)
from hermes_core.retrieval.skills import skill_body
from hermes_core.types import Message, RetrievalQuery, Skill, ToolCall, ToolSpec

log = logging.getLogger("hermes_core.agent.skills")

SKILL_VIEW = ToolSpec(
    name="skill_view",
    description=("Load the full instructions of a skill named in the Skill Retrieval Hint. Call it "
                 "only when that skill clearly applies to the user's request. With file_path, "
                 "load one file of the skill's folder that its instructions name."),
    parameters={"type": "object",
                "properties": {"name": {"type": "string", "description": "the skill's name"},
                               "file_path": {"type": "string", "description": (
                                   "optional: a file of the skill, relative to its folder, "
                                   "e.g. references/guide.md")}},
                "required": ["name"]},
)


class SkillSelection:
    """Wraps a retriever as the PromptBuilder's skill selector.

    It keeps no per-turn state: :meth:`select_turn` hands the retrieval result back with the
    block, and the builder carries it on the prompt (``Prompt.turn.retrieval``).
    """

    def __init__(self, retriever: Any, *, learn: bool = True) -> None:
        self.retriever = retriever
        # False for a preview (`hermes-core prompt`): a message only shown, never sent, is no use
        # of a skill, and a preview writes nothing to the home.
        self.learn = learn
        # What the latest selection offered (the user's message, the hinted names): learning needs
        # it to tell a skill_view that followed a hint (a use) from one the model chose unprompted.
        # The turn's own result travels on the prompt; this is only the learner's memory.
        self._offered: tuple[str, tuple[str, ...]] = ("", ())

    def select_turn(self, query: RetrievalQuery) -> tuple[str, Any]:
        block, result = self.retriever.select(query)
        layer, names = getattr(result, "layer", None), tuple(getattr(result, "names", ()))
        self._offered = (query.message, names if layer == "L5" else ())
        if layer == "L1" and names:
            self.record(names[0], "trigger")   # a trigger hit is a use of that skill
        return str(block), result

    def select(self, query: str, history: Sequence[Message], message: str) -> str:
        """The older selector form (a weighted query text): the block only."""
        return self.select_turn(RetrievalQuery.of(message, history))[0]

    def record(self, skill: str, kind: str, *, good: bool = True, message: str | None = None) -> bool:
        """Tell the retriever that ``skill`` served ``message`` (default: the last retrieved one);
        the usage layer learns from it. False when there is nothing to learn from or learning is off."""
        query = self._offered[0] if message is None else message
        recorder = getattr(self.retriever, "record_use", None)
        if not self.learn or not isinstance(query, str) or not query.strip() or recorder is None:
            return False
        return bool(recorder(query, skill, kind, good=good))

    def viewed(self, skill: Skill) -> None:
        """``skill_view(name)`` loaded ``skill``: a use, when the last hint offered it."""
        if skill.name in self._offered[1]:
            self.record(skill.name, "view")

    def has_skills(self) -> bool:
        try:
            return bool(self.retriever.skills)
        except Exception as e:  # a broken catalog costs the tool, not the turn
            log.warning("skills unavailable: %s", e)
            return False

    def catalog(self) -> list[Skill]:
        """The skills skill_view serves: the index, or with retrieval off the list every turn
        shows, read fresh (no index, no model)."""
        return list(served_catalog(self.retriever).skills)

    def find(self, name: str) -> Skill | None:
        """The skill called ``name``; case is forgiven only when no skill has the exact name and
        one skill alone matches without it (``Deploy`` and ``deploy`` may both exist: dedupe keys
        on the exact name)."""
        skills = self.catalog()
        wanted = name.strip()
        found = _match(wanted, skills)
        bare = _unmarked(wanted)
        return found if found is not None or bare == wanted else _match(bare, skills)


def _match(wanted: str, skills: Sequence[Skill]) -> Skill | None:
    exact: Skill | None = next((s for s in skills if s.name == wanted), None)
    if exact is not None:
        return exact
    folded = wanted.casefold()
    matches = [s for s in skills if s.name.casefold() == folded]
    # two skills equal but for case (Deploy, deploy): guessing would load, or record feedback
    # against, either one; the caller's error lists both instead
    return matches[0] if len(matches) == 1 else None


_MARKUP = re.compile(r"^(?:[-*+]\s+)?[`'\"*_]*(.*?)[`'\"*_]*:?$")


def _unmarked(name: str) -> str:
    """``name`` without the Markdown a model copies with it from the hint (``- `pdf`:``,
    ``**pdf**``, quotes): tried only when the name as given matches no skill."""
    m = _MARKUP.match(name)
    return m.group(1).strip() if m else name


def _argument(call: ToolCall, key: str) -> str:
    try:
        args = json.loads(call.arguments or "{}")
    except (ValueError, RecursionError):  # not JSON, a 5,000-digit number, nested too deep
        return ""
    value = args.get(key) if isinstance(args, dict) else None
    return value if isinstance(value, str) else ""


def _known(name: str, catalog: Sequence[Skill], limit: int = 50) -> str:
    """The names to correct a call with: the nearest to ``name`` first (in a catalog of hundreds,
    the first 50 alphabetically would rarely hold the one meant), then the rest in order."""
    names = sorted(s.name for s in catalog)
    near = difflib.get_close_matches(name.casefold(), sorted({n.casefold() for n in names}), n=5,
                                     cutoff=0.6)
    close = [n for folded in near for n in names if n.casefold() == folded]
    rest = [n for n in names if n not in close]
    listed = ", ".join((close + rest)[:limit])
    more = f" (and {len(names) - limit} more)" if len(names) > limit else ""
    return (f"Did you mean: {', '.join(close)}? " if close else "") + f"Known skills: {listed}{more}"


def render_skill(skill: Skill, scan: Sequence[str] = INJECTION_CATEGORIES) -> str:
    """What ``skill_view(name)`` answers: the body, the front matter worth knowing, the files.

    The body is scanned for prompt injection (``scan`` lists the categories; empty turns it off):
    a skill folder may come from anyone, and its body goes straight into the conversation.
    """
    body = skill_body(skill)
    if scan:
        body = guard_cached(body, f"SKILL.md of {skill.name}", tuple(scan)).text
    parts = [f"# Skill: {skill.name}", body]
    if skill.allowed_tools:
        parts.append("Tools this skill expects: " + ", ".join(skill.allowed_tools))
    listing = files_listing(skill)
    if listing:
        parts.append(listing)
    return "\n\n".join(parts)


def answer_skill_view(call: ToolCall, skills: SkillSelection) -> str:
    """The text answering one skill_view call: a body, a file, or a short error to act on."""
    name = _argument(call, "name").strip()
    skill = skills.find(name) if name else None
    if not name:  # "no skill named ''" would not tell the model what it got wrong
        return 'error: skill_view needs a \'name\' argument, e.g. {"name": "SKILL"}'
    if skill is None:
        return f"error: no skill named {name!r}. {_known(name, skills.catalog())}"
    try:   # the index may be a turn behind an edit or a deletion
        skill = skill_now(skill)
    except SkillFileError as e:
        return str(e)
    scan = tuple(getattr(skills.retriever, "scan_categories", INJECTION_CATEGORIES))
    file_path = _argument(call, "file_path").strip()
    if not file_path:
        skills.viewed(skill)
        return render_skill(skill, scan)
    try:
        text = read_skill_file(skill, file_path)
        if scan:
            text = guard_cached(text, f"{file_path} of skill {skill.name}", scan).text
        return f"# Skill: {skill.name} / {file_path}\n\n{text}"
    except SkillFileError as e:
        listing = files_listing(skill)
        return f"{e}" + (f"\n\n{listing}" if listing else "")
