"""A script that ends while the background warm-up is still loading the embedding model exits
quietly: no "dense layer ... unavailable: cannot schedule new futures after interpreter shutdown"
warning (the model loader's thread pool refuses work once the interpreter is shutting down).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent("""
    import logging, sys, threading, time
    from concurrent.futures import ThreadPoolExecutor
    import numpy as np
    from hermes_core.testing.retrieval import SAMPLE_SKILLS as SKILLS, HashingEmbedder
    from hermes_core.retrieval.retriever import SkillRetriever

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    started = threading.Event()

    class SlowLoadingEmbedder(HashingEmbedder):
        # loads like transformers does: work handed to a thread pool, after a while
        def embed_documents(self, texts):
            started.set()
            time.sleep(0.5)
            with ThreadPoolExecutor(1) as pool:
                return pool.submit(super().embed_documents, texts).result()

    r = SkillRetriever(skills=SKILLS, embedders=[SlowLoadingEmbedder()])
    r.warm_up(background=True)
    started.wait(10)
    print("main done", flush=True)
""")


def test_exit_during_warm_up_is_quiet(tmp_path: Path) -> None:
    script = tmp_path / "quick_script.py"
    script.write_text(SCRIPT, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "main done" in done.stdout
    assert "unavailable" not in done.stderr and "Traceback" not in done.stderr, done.stderr
