"""A memory database on a read-only filesystem (a mounted snapshot, a read-only container
volume): search and stats still work, read-only; a write says "read-only" clearly."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_core.agent.context_engine import ContextEngine
from hermes_core.agent.episodic.store import SessionStoreError
from hermes_core.cli.main import main


@pytest.fixture
def readonly_dir(tmp_path: Path) -> Iterator[tuple[Path, object]]:
    """A directory made read-only for real: a read-only remount of a tmpfs when running as root
    (root ignores permission bits), else permission bits. Yields (dir, make_readonly)."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if os.geteuid() == 0:
        if subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(mnt)], capture_output=True).returncode:
            pytest.skip("running as root without permission to mount a read-only filesystem")

        def make_ro() -> None:
            subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        try:
            yield mnt, make_ro
        finally:
            subprocess.run(["umount", str(mnt)], check=False)
    else:
        def make_ro() -> None:
            for p in mnt.iterdir():
                p.chmod(0o444)
            mnt.chmod(0o555)
        try:
            yield mnt, make_ro
        finally:
            mnt.chmod(0o755)


def test_read_only_database_can_still_be_searched(readonly_dir: tuple[Path, object],
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    mnt, make_ro = readonly_dir
    db = mnt / "sessions.db"
    with ContextEngine(db) as engine:
        engine.add("s1", "deployed the kubernetes cluster with helm charts", "k8s")
    make_ro()  # type: ignore[operator]
    with ContextEngine(db, create=False) as engine:
        assert [f.session_id for f in engine.retrieve("helm")] == ["s1"]
        assert engine.stats()["sessions"] == 1
        with pytest.raises(SessionStoreError, match="read-only"):
            engine.add("s2", "another session about redis")
    with ContextEngine(db) as engine:    # the Agent opens with create=True: still readable
        assert engine.memories_block("helm charts").count("kubernetes") == 1
    assert main(["memory", "search", "helm", "--db", str(db), "--json"]) == 0
    assert '"s1"' in capsys.readouterr().out


def test_an_old_schema_on_a_read_only_filesystem_opens_read_only(
        readonly_dir: tuple[Path, object], monkeypatch: pytest.MonkeyPatch) -> None:
    """An upgrade that brings a migration (and a re-index) must not lock a user out of a database
    it cannot write: an older schema the read path understands opens read-only, as before."""
    from test_memory_tokenizer_upgrade import v1_database

    from hermes_core.agent.episodic.store import SessionStore

    mnt, make_ro = readonly_dir
    db = mnt / "sessions.db"
    v1_database(db, monkeypatch)
    make_ro()  # type: ignore[operator]
    with SessionStore(db, create=False) as store:
        assert store.read_only and store.count() == 1
        assert [h.session_id for h in store.search('"预算"', 5)] == ["s-old"]
