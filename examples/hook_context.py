"""A pre_llm_call hook that adds context to every turn (after the cache breakpoint).

The hook sees the user message and the prompt about to be sent, and returns extra text for the
per-turn context block: here, the open tickets that mention a word of the message. Returning text
never touches the cached system prompt. Run: python examples/hook_context.py
"""

from __future__ import annotations

import sys
from pathlib import Path

from hermes_core.agent.agent import Agent
from hermes_core.types import Prompt

HOME = Path(__file__).parent / "home"
TICKETS = {
    "deploy": "OPS-112: deploys to staging fail on the migration step since Monday",
    "invoice": "FIN-7: the reimbursement portal rejects PDFs over 5 MB",
}


def ticket_context(message: str, prompt: Prompt) -> str | None:
    hits = [t for word, t in TICKETS.items() if word in message.lower()]
    return "## Open tickets\n" + "\n".join(f"- {t}" for t in hits) if hits else None


def main() -> int:
    # ``with``: close() records the session and lets the background model load finish before exit
    with Agent.from_config(None, home=HOME, offline=True, pre_llm_call=ticket_context) as agent:
        reply = agent.chat("Why does the deploy keep failing?")
    assert reply.prompt is not None and "OPS-112" in reply.prompt.context
    print("per-turn context sent with this message:\n" + reply.prompt.context)
    assert "OPS-112" not in reply.prompt.system  # the cached prefix is untouched
    return 0


if __name__ == "__main__":
    sys.exit(main())
