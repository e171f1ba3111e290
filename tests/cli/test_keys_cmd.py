"""Tests of ``hermes_core/cli/keys_cmd.py``: ``hermes-core keys status`` over a shared (Redis) pool
shows a key quarantined by another process as such, with its next recheck, by fingerprint only.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_core.agent.credential_pool import CredentialPool
from hermes_core.cli.main import main
from hermes_core.config import load_settings

SECRET = "sk-keys-status-SECRET-0001"


def test_keys_status_shows_a_quarantined_key_and_its_next_recheck(
        tmp_path: Path, redis_url: str, redis_prefix: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "config.yaml"
    cfg.write_text(
        "credentials:\n  openai:\n    keys:\n      - key: " + SECRET + "\n"
        "credential_pool:\n  backend: redis\n  redis_url: '" + redis_url + "'\n"
        "  redis_key_prefix: '" + redis_prefix + "'\n  auth_recheck_s: 600\n",
        encoding="utf-8")
    worker = CredentialPool.from_settings(load_settings(str(cfg), env={}))
    lease = worker.acquire("openai")
    worker.remove(lease, "after HTTP 401")          # another process of the fleet saw a 401
    fp = lease.fingerprint

    assert main(["keys", "status", "--config", str(cfg), "--json"]) == 0
    raw = capsys.readouterr().out
    [row] = json.loads(raw)["keys"]
    assert row["fingerprint"] == fp and row["state"] == "quarantined"
    assert row["auth_failures"] == 1
    now = worker.now()
    assert 590.0 < row["recheck_at"] - now <= 600.0
    assert main(["keys", "status", "--config", str(cfg)]) == 0
    table = capsys.readouterr().out
    assert fp in table and "quarantined" in table and "(rejected 1x)" in table
    for text in (raw, table):
        assert SECRET not in text and SECRET[:12] not in text


def test_keys_status_shows_a_provider_name_s_escapes_and_aligns_chinese_names(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Provider names are free text in the config: one named with ESC [2J cleared the screen as
    the table printed, and a Chinese one (two columns a character) pushed its row's key column
    five columns right of the others."""
    from wcwidth import wcswidth
    cfg = tmp_path / "config.yaml"
    cfg.write_text(
        "llm:\n  routing:\n    providers:\n"
        "      - {name: \"阿里云百炼\", type: openai, endpoint: \"http://127.0.0.1:9/v1\"}\n"
        "      - {name: \"evil\\e[2Jx\", type: openai, endpoint: \"http://127.0.0.1:9/v1\"}\n"
        "      - {name: openai, type: openai}\n"
        "credentials:\n"
        "  \"阿里云百炼\": {keys: [{key: sk-keys-zh-SECRET-0000000001}]}\n"
        "  \"evil\\e[2Jx\": {keys: [{key: sk-keys-esc-SECRET-000000002}]}\n"
        "  openai: {keys: [{key: sk-keys-oa-SECRET-0000000003}]}\n", encoding="utf-8")
    assert main(["keys", "status", "--config", str(cfg), "--home", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "evil\\x1b[2Jx" in out and "阿里云百炼" in out
    lines = out.splitlines()
    key_column = {wcswidth(line[:line.index("key")]) for line in lines[:1]} | {
        wcswidth(line[:line.index("key-")]) for line in lines[1:]}
    assert len(key_column) == 1, out
