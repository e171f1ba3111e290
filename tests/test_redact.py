"""Tests of ``hermes_core/redact.py``.

Credential never shows its key; redaction catches exact secrets and key-shaped strings.
"""

from __future__ import annotations

import logging
import pickle

from hermes_core.redact import RedactingFilter, redact
from hermes_core.types import Credential, Prompt, Usage

KEY = "sk-proj-AbCdEf0123456789XYZ"


def test_credential_repr_str_show_fingerprint_only():
    c = Credential("openai", KEY, max_rpm=10)
    for text in (repr(c), str(c), f"{c}", repr([c]), repr({"c": c})):
        assert KEY not in text and c.fingerprint in text
    assert c.fingerprint == Credential("x", KEY).fingerprint  # stable across providers
    assert pickle.loads(pickle.dumps(c)).secret == KEY


def test_redact_exact_and_patterns():
    assert KEY not in redact(f"bad key {KEY}!", [KEY])
    assert "sk-ant-api03-secretsecret" not in redact("x sk-ant-api03-secretsecret y")
    assert redact("Authorization: Bearer abcdefghijklmnopqrstuv") .endswith("[REDACTED]")
    assert redact("nothing secret here") == "nothing secret here"


def test_logging_filter(caplog):
    logger = logging.getLogger("hermes_core.test_redact")
    logger.addFilter(RedactingFilter())
    with caplog.at_level(logging.INFO, logger="hermes_core.test_redact"):
        logger.info("using %s", KEY)
    assert KEY not in caplog.text and "[REDACTED]" in caplog.text


def test_usage_arithmetic_and_ratio():
    u = Usage(10, 5, cache_read_tokens=90) + Usage(0, 1, cache_write_tokens=100)
    assert u.total_input_tokens == 200 and u.output_tokens == 6
    assert u.cache_hit_ratio == 0.45
    assert Usage().cache_hit_ratio == 0.0


def test_prompt_prefix_hash_depends_on_system_only():
    a = Prompt(system="S", messages=(), context="ctx one")
    b = Prompt(system="S", messages=(), context="ctx two")
    assert a.prefix_sha256 == b.prefix_sha256
    assert Prompt(system="T", messages=()).prefix_sha256 != a.prefix_sha256


def test_public_api_resolves_lazily():
    import subprocess
    import sys

    import hermes_core

    for name in hermes_core.__all__:
        assert getattr(hermes_core, name) is not None, name
    # importing the package alone loads neither SDK nor torch
    code = ("import sys, hermes_core; "
            "print(any(m in sys.modules for m in ('openai', 'anthropic', 'torch')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_stream_redactor_catches_a_key_split_across_pieces():
    from hermes_core.redact import StreamRedactor

    scrub = StreamRedactor()
    pieces = ["your key is sk-proj-AbCd", "Ef0123456789", "XYZ and more", " text"]
    out = "".join(scrub.feed(p) for p in pieces) + scrub.flush()
    assert KEY not in out and "[REDACTED]" in out
    assert out.startswith("your key is ") and out.endswith(" and more text")


def test_prompt_cli_never_prints_a_key_from_memory(tmp_path, capsys):
    from hermes_core.cli.main import main

    (tmp_path / "MEMORY.md").write_text(f"- the staging key is {KEY}\n", encoding="utf-8")
    for args in (["--json"], []):
        assert main(["prompt", "hello", "--home", str(tmp_path), *args]) == 0
        out = capsys.readouterr().out
        assert KEY not in out and "[REDACTED]" in out


def test_cli_logging_scrubs_keys_from_every_logger():
    import subprocess
    import sys

    code = ("import logging; from hermes_core.cli.main import main; main(['-v']); "
            f"logging.getLogger('httpx').warning('Authorization: Bearer {KEY}')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert KEY not in out.stderr and "[REDACTED]" in out.stderr
