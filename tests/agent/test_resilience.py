"""The audit log keeps its file open between attempts and follows a rotated or deleted file."""

from __future__ import annotations

import json
from pathlib import Path

from hermes_core.agent.resilience import AuditLog
from hermes_core.errors import Attempt


def attempt(status: str) -> Attempt:
    return Attempt("openai", "gpt-x", "fp1234", status, 12.5)


def test_lines_are_written_through_one_open_file(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "audit.jsonl"
    log = AuditLog(path)
    log.write("r1", attempt("ok"), 1.0)
    handle = log._file
    log.write("r2", attempt("rate_limited"), 2.0)
    assert log._file is handle and handle is not None        # not reopened per attempt
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [(r["request_id"], r["status"]) for r in rows] == [("r1", "ok"), ("r2", "rate_limited")]
    log.close()
    assert log._file is None


def test_a_deleted_or_rotated_file_is_reopened(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path)
    log.write("r1", attempt("ok"), 1.0)
    path.rename(tmp_path / "audit.jsonl.1")                   # rotation
    log.write("r2", attempt("ok"), 2.0)
    assert [json.loads(x)["request_id"] for x in path.read_text(encoding="utf-8").splitlines()] == ["r2"]
    path.unlink()                                             # deletion
    log.write("r3", attempt("ok"), 3.0)
    assert [json.loads(x)["request_id"] for x in path.read_text(encoding="utf-8").splitlines()] == ["r3"]
    log.close()


def test_no_path_writes_nothing(tmp_path: Path) -> None:
    log = AuditLog(None)
    log.write("r1", attempt("ok"), 1.0)
    assert log._file is None and list(tmp_path.iterdir()) == []
