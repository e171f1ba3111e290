"""A basic agent on the bundled example home.

Runs offline (the offline provider reports what it would send) unless OPENAI_API_KEY or
ANTHROPIC_API_KEY is set. Run: python examples/basic_agent.py [--offline]
"""

from __future__ import annotations

import sys
from pathlib import Path

from hermes_core.agent.agent import Agent

HOME = Path(__file__).parent / "home"


def main(argv: list[str]) -> int:
    agent = Agent.from_config(None, home=HOME, offline="--offline" in argv)
    for message in ("How do I resolve a git rebase conflict?", "帮我查一下快递到哪了"):
        reply = agent.chat(message)
        print(f"> {message}\n{reply.text}\n")
        print(f"[{reply.provider}/{reply.model}, {reply.usage.total_input_tokens} tokens in]\n")
    agent.close()  # records the session into episodic memory
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
