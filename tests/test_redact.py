"""Tests of ``hermes_core/redact.py``.

Credential never shows its key; redaction catches exact secrets and key-shaped strings.
"""

from __future__ import annotations

import logging

from hermes_core.redact import RedactingFilter, redact

KEY = "sk-proj-AbCdEf0123456789XYZ"


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
