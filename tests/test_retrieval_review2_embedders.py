"""Review round 2: choosing the embedders does not import torch on the caller's thread.

The agent builds its retriever, then warms it up on a background thread so the first turn is not
blocked; importing sentence-transformers (torch, transformers: seconds) while merely listing the
embedders defeated that.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from hermes_core.retrieval import retriever as retriever_mod


def test_default_embedders_do_not_import_torch() -> None:
    code = ("import json, sys\n"
            "from hermes_core.retrieval.retriever import default_embedders\n"
            "ids = [e.model_id for e in default_embedders()]\n"
            "print(json.dumps({'ids': ids, 'torch': 'torch' in sys.modules,\n"
            "                  'st': 'sentence_transformers' in sys.modules}))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    if importlib.util.find_spec("sentence_transformers") is not None:
        assert "st:all-MiniLM-L6-v2" in got["ids"]
    assert got["torch"] is False and got["st"] is False


def test_a_package_that_is_not_installed_is_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "sentence_transformers" else real(name, *a))
    ids = [e.model_id for e in retriever_mod.default_embedders()]
    assert not any(i.startswith("st:") for i in ids)
