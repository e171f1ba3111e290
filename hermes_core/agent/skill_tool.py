"""The ``skill_view`` tool, and the adapter between the skill retriever and the PromptBuilder.

The retriever hints at skills by name only (a few lines instead of thousands of tokens); the model
loads a skill's full body with ``skill_view(name)`` when it decides one applies. The tool is offered
on every turn of an agent that has skills, not only on turns with a hint: tools sit before the
system prompt in the cached prefix, so a tool list that came and went would break the cache.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from hermes_core.retrieval.skills import skill_body
from hermes_core.types import Message, Skill, ToolCall, ToolSpec

log = logging.getLogger("hermes_core.agent.skills")

SKILL_VIEW = ToolSpec(
    name="skill_view",
    description=("Load the full instructions of a skill named in the Skill Retrieval Hint. Call it "
                 "only when that skill clearly applies to the user's request."),
    parameters={"type": "object",
                "properties": {"name": {"type": "string", "description": "the skill's name"}},
                "required": ["name"]},
)


class SkillSelection:
    """Wraps a retriever as the PromptBuilder's skill selector and remembers the last result."""

    def __init__(self, retriever: Any) -> None:
        self.retriever = retriever
        self.last: Any = None
        self.last_message: str | None = None

    def select(self, query: str, history: Sequence[Message], message: str) -> str:
        block, result = self.retriever.select(message, history, query=query)
        self.last = result
        self.last_message = message   # what is learnt from: the user's words, not the fuller query
        if getattr(result, "layer", None) == "L1" and getattr(result, "names", ()):
            self.record(result.names[0], "trigger")   # a trigger hit is a use of that skill
        return str(block)

    def record(self, skill: str, kind: str, *, good: bool = True) -> bool:
        """Tell the retriever that ``skill`` served the last retrieved message (the usage layer
        learns from it). False when there is nothing to learn from or learning is off."""
        query = self.last_message
        recorder = getattr(self.retriever, "record_use", None)
        if not isinstance(query, str) or not query.strip() or recorder is None:
            return False
        return bool(recorder(query, skill, kind, good=good))

    def viewed(self, skill: Skill) -> None:
        """``skill_view(name)`` loaded ``skill``: a use, when the last hint offered it."""
        last = self.last
        hinted = getattr(last, "names", ()) if getattr(last, "layer", None) == "L5" else ()
        if skill.name in hinted:
            self.record(skill.name, "view")

    def has_skills(self) -> bool:
        try:
            return bool(self.retriever.skills)
        except Exception as e:  # a broken catalog costs the tool, not the turn
            log.warning("skills unavailable: %s", e)
            return False

    def find(self, name: str) -> Skill | None:
        """The skill called ``name``; case is forgiven only when no skill has the exact name
        (``Deploy`` and ``deploy`` may both exist: dedupe keys on the exact name)."""
        wanted = name.strip()
        last = self.last
        if last is not None and getattr(last, "layer", None) == "disabled":
            skills = list(last.skills)   # the list this turn showed, read fresh (no index, no model)
        else:
            skills = self.retriever.skills
        exact: Skill | None = next((s for s in skills if s.name == wanted), None)
        if exact is not None:
            return exact
        folded = wanted.casefold()
        return next((s for s in skills if s.name.casefold() == folded), None)


def _argument_name(call: ToolCall) -> str:
    try:
        args = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        return ""
    value = args.get("name") if isinstance(args, dict) else None
    return value if isinstance(value, str) else ""


def answer_tool_calls(calls: Sequence[ToolCall], skills: SkillSelection) -> tuple[Message, ...]:
    """One tool-result message per call: the skill's body, or a short error the model can read."""
    out: list[Message] = []
    for call in calls:
        if call.name != SKILL_VIEW.name:
            text = f"error: unknown tool {call.name!r}; the only tool is skill_view(name)"
        else:
            name = _argument_name(call).strip()
            skill = skills.find(name) if name else None
            if not name:  # "no skill named ''" would not tell the model what it got wrong
                text = 'error: skill_view needs a \'name\' argument, e.g. {"name": "SKILL"}'
            elif skill is None:
                known = ", ".join(sorted(s.name for s in skills.retriever.skills)[:50])
                text = f"error: no skill named {name!r}. Known skills: {known}"
            else:
                text = f"# Skill: {skill.name}\n\n{skill_body(skill)}"
                skills.viewed(skill)
        out.append(Message("tool", text, tool_call_id=call.id, name=call.name))
    return tuple(out)
