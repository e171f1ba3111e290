"""``hermes-core route MESSAGE`` (decision and reason) and ``hermes-core route train FILE.jsonl``.

``route train X.jsonl`` (exactly two words, the first ``train``) trains the classifier; any other
message is routed. To route the literal text "train X", pass it as one quoted argument.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from hermes_core.cli.argtypes import (
    json_text,
    model_name,
    non_negative_int,
    shorten,
    stdin_text,
    terminal_safe,
)
from hermes_core.config import load_settings
from hermes_core.errors import ConfigError


def register(sub: Any) -> None:
    p = sub.add_parser("route", help="show which model and providers a message would go to",
                       description="Route MESSAGE, or train the classifier: route train FILE.jsonl",
                       examples=("hermes-core route 'refactor this module and add tests'",
                                 "hermes-core route 帮我写周报 --turn 3 --json",
                                 "hermes-core route train examples.jsonl --out route.pkl"))
    p.add_argument("words", nargs="+", metavar="MESSAGE",
                   help="the message; '-' reads it from stdin (or: train FILE.jsonl)")
    p.add_argument("--home", metavar="DIR", help="HERMES_HOME (default: $HERMES_HOME or ~/.hermes)")
    p.add_argument("--config", help="config YAML (default: HERMES_HOME/config.yaml)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--tools", action="store_true", help="the request needs tool calls")
    p.add_argument("--turn", type=non_negative_int, default=0, help="turn count of the conversation")
    p.add_argument("--model", type=model_name, help="an explicitly requested model")
    p.add_argument("--out", help="train: where to write the model (default: the configured "
                                 "llm.routing.classifier.path, else HERMES_HOME/route_classifier.pkl)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if len(args.words) == 2 and args.words[0] == "train":
        return train(args, args.words[1])
    from hermes_core.agent.prompt_builder import PromptBuilder
    from hermes_core.agent.smart_routing import Router
    from hermes_core.types import clean_text

    settings = load_settings(args.config, home=args.home)
    router = Router.from_settings(settings)
    # "-": the message is piped in (one argument holds at most 128 KB; a pasted log is more)
    message = stdin_text() if args.words == ["-"] else " ".join(args.words)
    # routed as the agent routes it: inside the home's system prompt and the project's context
    # files (a large SOUL.md leaves no room in a small fast model); not the turn's skill hint and
    # recalled sessions, which would load the retriever (their budgets are small)
    builder = PromptBuilder(settings.home_path, settings)
    prompt = builder.build(clean_text(message), model=args.model,
                           encoding=router.encoding(args.model or settings.llm.routing.default_model))
    d = router.select(prompt, requested_model=args.model, requires_tools=args.tools,
                      turn_count=args.turn)
    if args.json:
        print(json_text({"model": d.model, "reason": d.reason,
                          "candidates": [{"provider": c.provider, "model": c.model}
                                         for c in d.candidates],
                          "features": dict(d.features)}))
    else:   # names come from the config and the command line: shown, never sent as escapes
        print(terminal_safe(f"model: {shorten(d.model)}"))
        print(terminal_safe(f"reason: {d.reason}"))
        print(terminal_safe("candidates: " + ", ".join(f"{c.provider}/{shorten(c.model)}"
                                                       for c in d.candidates)))
    return 0


def train(args: argparse.Namespace, file: str) -> int:
    from hermes_core.agent.routing.classifier import Example, RouteClassifier, read_examples

    settings = load_settings(args.config, home=args.home)
    out = args.out or settings.llm.routing.classifier.path or "route_classifier.pkl"
    path = Path(out).expanduser()
    if not path.is_absolute() and not args.out:
        path = settings.home_path / path
    if args.out and not os.path.exists(path.parent):   # a typo, never a new folder (before training)
        raise ConfigError(f"--out: the folder {path.parent} does not exist (create it first, or "
                          "check the spelling)", file=str(path))
    # examples copied from real requests may quote a key, and the model file keeps every word it
    # was trained on: scrubbed as any stored text is (a key is no word worth routing by)
    scrub = settings.redactor()
    examples = [Example(scrub(e.text), e.label) for e in read_examples(file)]
    clf = RouteClassifier.train(examples, source=file)
    clf.save(path)
    summary = {"examples": len(examples), "labels": list(clf.labels), "path": str(path)}
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"trained on {len(examples)} examples ({', '.join(clf.labels)}); saved to {path}")
        if not settings.llm.routing.classifier.path:
            print("set llm.routing.classifier.path in config.yaml to use it")
    return 0
