"""``hermes-core chat``: the REPL on a home folder and a config."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from hermes_core.agent.agent import Agent
from hermes_core.cli.argtypes import model_name


def add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--home", help="HERMES_HOME folder (default: $HERMES_HOME or ~/.hermes)")
    p.add_argument("--config", help="config YAML (default: HOME/config.yaml when present)")


def run_chat(args: argparse.Namespace) -> int:
    from hermes_core.cli.repl import Repl
    from hermes_core.cli.repl_commands import looks_like_key, unknown_model_note

    home = Path(args.home).expanduser() if args.home else None
    agent = Agent.from_config(args.config, home=home, offline=args.offline, model=args.model)
    if args.model and looks_like_key(agent, args.model):   # known once the config's keys are
        agent.close(wait_warm=False)
        print("hermes-core: chat: --model looks like a key, not a model name; nothing was sent",
              file=sys.stderr)
        return 2
    if args.model and (note := unknown_model_note(agent, args.model)):
        print(note.strip(), file=sys.stderr)
    stream = False if args.no_stream else None
    code = Repl(agent, stream=stream).run()
    warm = getattr(agent.retriever, "_warm", None)
    if getattr(args, "process_entry", False) and warm is not None and warm.is_alive():
        # The session is recorded and the stores closed; only a model load is left (torch's
        # import cannot be interrupted). End the process now rather than wait for it: _exit
        # skips interpreter teardown, which is also what a model loading on a thread would trip.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("chat", help="chat with the agent (offline when no key is set)",
                       examples=("hermes-core chat --home examples/home --offline",
                                 "hermes-core chat --model gpt-4o-mini --no-stream",
                                 "printf '帮我查一下快递\\n/skills\\n' | hermes-core chat --offline"))
    add_common(p)
    p.add_argument("--model", type=model_name, help="use this model for every turn (default: routing)")
    p.add_argument("--offline", action="store_true", help="never call a provider")
    p.add_argument("--no-stream", action="store_true", help="print whole replies")
    p.set_defaults(handler=run_chat)
