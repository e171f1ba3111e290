"""Skill catalog: SKILL.md discovery, JSONL catalogs, and the incremental index.

A bad file never stops the catalog from loading: it becomes a :class:`CatalogIssue` naming the path
(and line for JSONL) plus the reason, is logged as a warning, and is skipped. Duplicate names keep the
first skill in search order (folders in the order given, paths sorted inside a folder), so the winner
does not depend on the file system's listing order.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import re
import stat
import sys
import time
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_core.atomic_write import read_cache, write_cache
from hermes_core.look_alike import name_key, one_alphabet
from hermes_core.retrieval import cache_sweep
from hermes_core.retrieval.catalog_memo import BLANK, CatalogMemo, LastRead, ParsedLine
from hermes_core.types import Skill
from hermes_core.yaml_safe import YamlLimitError, load_yaml

log = logging.getLogger(__name__)

MAX_NAME = 64
MAX_DESCRIPTION = 1024
# a JSONL catalog keeps names over MAX_NAME (other ecosystems' dotted ids), but not a page of text:
# the name is printed on every hint line and by 'skills list'
MAX_LENIENT_NAME = 256
MAX_INT_DIGITS = 100   # no field of a skill record needs a longer number
MAX_SKILL_FILE_BYTES = 1_000_000
MAX_CATALOG_BYTES = 64_000_000   # a JSONL catalog of tens of thousands of skills is a few MB
# The most of a skill body handed to the model at once (about 10k tokens). A SKILL.md may hold up to
# 1 MB; sent whole on every turn its trigger fires, it would overflow the context window.
MAX_BODY_CHARS = 40_000
SKILL_FILE = "SKILL.md"


@dataclass(frozen=True, slots=True)
class CatalogIssue:
    """One skipped file or line: where it is and why it was skipped."""

    path: str
    reason: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.reason}"


@dataclass(frozen=True, slots=True)
class Catalog:
    """The loaded skills (unique names, deterministic order) and every issue met on the way."""

    skills: tuple[Skill, ...]
    issues: tuple[CatalogIssue, ...] = ()
    # skills left out on this machine, each with the reason (another platform's)
    unavailable: tuple[tuple[Skill, str], ...] = ()


class _Invalid(ValueError):
    """A skill record refused; ``line`` is where in the file, when known."""

    def __init__(self, reason: str, line: int | None = None) -> None:
        super().__init__(reason)
        self.line = line


def user_path(path: str | os.PathLike[str]) -> Path:
    """A configured folder or catalog file as a path: ``~/skills`` means the user's."""
    return Path(os.path.expanduser(os.fspath(path)))


def sources_present(folders: Iterable[str | os.PathLike[str]],
                    catalogs: Iterable[str | os.PathLike[str]]) -> bool:
    """Every configured skills folder and catalog file is there (one unmounted for a moment
    takes its skills with it, which is not their deletion)."""
    try:
        return (all(user_path(f).is_dir() for f in folders)
                and all(user_path(c).is_file() for c in catalogs))
    except OSError:
        return False


# zero-width (non-)joiners: part of how emoji sequences and Persian or Indic words are written
_JOINERS = frozenset("\u200c\u200d")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _clean(text: str) -> str:
    """Replace lone UTF-16 surrogates by U+FFFD.

    JSON ("\\ud83d") and YAML escapes can carry half an emoji (a JavaScript ``slice`` cut one in
    two); such a string cannot be encoded as UTF-8, so hashing, caching or sending it would crash.
    """
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


def _str_tuple(value: Any, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple):
        raise _Invalid(f"'{key}' must be a string or a list of strings")
    out = []
    for item in value:
        if not isinstance(item, str | int | float) or isinstance(item, bool):
            raise _Invalid(f"'{key}' must be a list of strings (got {type(item).__name__})")
        text = _clean(str(item)).strip()
        if text:
            out.append(text)
    return tuple(out)


_PLATFORM_ALIASES = {"darwin": "macos", "mac": "macos", "osx": "macos", "macosx": "macos",
                     "win32": "windows", "win": "windows", "cygwin": "windows",
                     "linux2": "linux"}


def normalise_platform(name: str) -> str:
    """``darwin``/``osx`` -> ``macos``, ``win32`` -> ``windows``; others lower-cased."""
    key = name.strip().lower()
    return _PLATFORM_ALIASES.get(key, key)


def current_platform(sys_platform: str | None = None) -> str:
    """This machine's platform in skill front matter terms (macos, linux, windows, ...)."""
    raw = sys_platform if sys_platform is not None else sys.platform
    return normalise_platform("linux" if raw.startswith("linux") else raw)


def platform_mismatch(skill: Skill, platform: str) -> str | None:
    """Why ``skill`` is not for ``platform`` (None when it is, or names no platform)."""
    if not skill.platforms or normalise_platform(platform) in skill.platforms:
        return None
    return f"for {', '.join(skill.platforms)} only; this machine is {normalise_platform(platform)}"


def _metadata(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _Invalid("'metadata' must be a mapping")
    return {str(k): v for k, v in value.items()}


def _allowed_tools(value: Any) -> tuple[str, ...]:
    """``allowed-tools`` is a space-separated string in the agentskills spec; lists are read too."""
    if isinstance(value, str):
        return tuple(t for t in value.replace(",", " ").split() if t)
    return _str_tuple(value, "allowed-tools")


def skill_from_mapping(data: Mapping[str, Any], *, body: str = "", path: str | None = None,
                       strict_lengths: bool = True, notes: list[str] | None = None) -> Skill:
    """Validate one skill record (front matter or a JSONL line); raises ValueError with the reason.

    ``strict_lengths=False`` (JSONL catalogs) keeps over-long names with a warning instead of
    skipping them: tool catalogs from other ecosystems use dotted ids longer than the agentskills
    limit of 64, and dropping a skill makes it unreachable. A description over the limit is always
    kept with a warning (it is clipped in hints): real skills (Anthropic's own ``claude-api``)
    exceed it, and a dropped skill is a silent loss.

    Those warnings are logged here, naming ``path``; with ``notes`` they are appended to it instead,
    without the place, for a caller that logs them where the record is (a JSONL line, which may
    move, ``catalog_memo``).
    """
    if not isinstance(data, Mapping):
        raise _Invalid("expected a mapping with 'name' and 'description'")
    name = data.get("name")
    desc = data.get("description")
    if isinstance(name, int | float) and not isinstance(name, bool):
        name = str(name)  # YAML reads `name: 2048` as a number; the skill is still called "2048"
    if name is not None and not isinstance(name, str):
        raise _Invalid(f"'name' must be a string (got {type(name).__name__}); quote it")
    if not isinstance(name, str) or not name.strip():
        raise _Invalid("missing or empty 'name'")
    if desc is not None and not isinstance(desc, str):  # `description: yes` is YAML's True
        raise _Invalid(f"'description' must be text (got {type(desc).__name__}); quote it")
    if not isinstance(desc, str) or not desc.strip():
        raise _Invalid("missing or empty 'description'")
    name, desc = _clean(name).strip(), " ".join(_clean(desc).split())
    # a printable ASCII name holds no control, separator or formatting character: the two scans
    # below, a category lookup a character, were a third of reading a 20,000-line catalog
    plain = name.isascii() and name.isprintable()
    if not plain and any(unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in name):
        # the name is printed on one line of the hint: a newline could forge a prompt heading
        raise _Invalid("'name' must be one line without control characters")
    hidden = None if plain else next(
        (c for c in name if unicodedata.category(c) == "Cf" and c not in _JOINERS), None)
    if hidden is not None:
        # a bidi override prints "abc<RLO>dcba" as "abcabcd" in `skills list` and the hint; a
        # zero-width space makes a name the model types back and skill_view cannot find
        raise _Invalid(f"'name' holds an invisible formatting character (U+{ord(hidden):04X}); "
                       "remove it")
    for key, value, limit in (("name", name, MAX_NAME), ("description", desc, MAX_DESCRIPTION)):
        if len(value) > limit:
            msg = f"'{key}' is {len(value)} characters (limit {limit})"
            if key == "name" and (strict_lengths or len(value) > MAX_LENIENT_NAME):
                raise _Invalid(msg if strict_lengths else f"'name' is {len(value)} characters "
                               f"(limit {MAX_LENIENT_NAME} in a catalog)")
            note = f"{msg}; kept{' (clipped in hints)' if key == 'description' else ''}"
            if notes is None:
                log.warning("%s: %s", path or "<catalog>", note)
            else:
                notes.append(note)
    category = data.get("category")
    if category is not None and not isinstance(category, str):
        raise _Invalid("'category' must be a string")
    raw_body = data.get("body", body)
    if not isinstance(raw_body, str):
        raise _Invalid("'body' must be a string")
    if category is not None:
        category = _clean(category)
    metadata = _metadata(data.get("metadata"))
    tags = _str_tuple(data.get("tags"), "tags") + _str_tuple(metadata.get("tags"), "metadata.tags")
    licence = data.get("license")
    if licence is not None and not isinstance(licence, str):
        raise _Invalid("'license' must be a string")
    return Skill(name=name, description=desc, body=_clean(raw_body).strip(),
                 triggers=_str_tuple(data.get("triggers"), "triggers"),
                 synonyms=_str_tuple(data.get("synonyms"), "synonyms"),
                 tags=tuple(dict.fromkeys(tags)), category=category, path=path,
                 platforms=tuple(dict.fromkeys(normalise_platform(p) for p in
                                               _str_tuple(data.get("platforms"), "platforms"))),
                 metadata=metadata,
                 allowed_tools=_allowed_tools(data.get("allowed-tools", data.get("allowed_tools"))),
                 license=_clean(licence).strip() or None if licence is not None else None)


def skill_body(skill: Skill, limit: int = MAX_BODY_CHARS) -> str:
    """The body the model reads (the description if there is none), cut at ``limit`` characters
    with a note saying so: a silently cut manual reads as a complete one."""
    body = skill.body.strip() or skill.description
    if len(body) <= limit:
        return body
    return f"{body[:limit]}\n\n[... truncated: the first {limit} of {len(body)} characters are shown]"


def _lines(text: str) -> list[str]:
    """Lines split on LF (CRLF tolerated) only.

    ``str.splitlines`` also splits on U+2028, U+2029, form feed, NEL and other separators that are
    legal inside a JSON string or a Markdown body; splitting there tears a JSONL record in two (and
    shifts every later line number) or silently rewrites a body.
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


# the key a record error is about: every reason names it first, quoted ("'tags' must be ...")
_REASON_KEY = re.compile(r"(?:missing or empty )?'([^']+)'")


def _folder_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a SKILL.md skill's name, which is its folder's (the agentskills
    rule): ``skill_view`` prints it before a file path, and ``sub/dir`` or ``..`` there reads as
    a path the model may try to walk."""
    if "/" in name or "\\" in name:
        return f"'name' holds a path separator ({name!r}); a skill's name is one folder name"
    if name in (".", ".."):
        return f"'name' cannot be {name!r}"
    return None


def parse_skill_md(text: str, path: str, notes: list[str] | None = None) -> Skill:
    """Parse a SKILL.md: ``---`` YAML front matter, then the Markdown body.

    A refusal carries the line of the file it is about (the front matter's text starts on
    line 2): the fence, the YAML error, or the field at fault. What is kept but said (a long
    description, a name unlike its folder) is logged naming ``path``, or with ``notes`` appended
    to it instead, as :func:`skill_from_mapping` does."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = _lines(text)
    if not lines or lines[0].strip() != "---":
        toml = bool(lines) and lines[0].strip() == "+++"
        raise _Invalid("TOML front matter ('+++') is not read; write YAML between '---' lines"
                       if toml else "no YAML front matter (the file must start with a '---' line)",
                       1)
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        raise _Invalid("front matter is not closed by a '---' line", 1)
    try:  # depth, alias expansion and size are bounded: one hostile file costs milliseconds
        meta, key_lines = load_yaml("\n".join(lines[1:end]), max_chars=MAX_SKILL_FILE_BYTES)
    except YamlLimitError as e:
        line = e.line + 1 if e.line is not None else None   # the issue reads path:line: ...
        if e.reason.startswith("invalid YAML"):
            raise _Invalid("front matter is not valid YAML", line) from None
        raise _Invalid(f"front matter: {e.reason}", line) from None
    if not isinstance(meta, dict):
        raise _Invalid("front matter must be a YAML mapping", 2)
    meta = {k: v for k, v in meta.items() if k != "body"}
    folder = Path(path).parent.name if path.endswith(SKILL_FILE) else ""
    try:
        skill = skill_from_mapping(meta, body="\n".join(lines[end + 1:]), path=path, notes=notes)
        problem = _folder_name_problem(skill.name)
        if problem:
            raise _Invalid(problem)
    except _Invalid as e:
        key = _REASON_KEY.match(str(e))
        at = key_lines.get(key.group(1)) if key else None
        reason = str(e)
        if reason == "missing or empty 'name'" and folder:
            reason += f"; add 'name: {folder}' (the folder's name)"
        raise _Invalid(reason, at + 1 if at is not None else None) from None
    if folder and skill.name != folder:
        # the agentskills rule; Anthropic's own template-skill breaks it. Kept (a dropped skill is
        # a silent loss), but said: skill_view and the hint know it by this name, not the folder's
        note = f"'name' {skill.name!r} differs from its folder {folder!r}; loaded as {skill.name!r}"
        if notes is None:
            log.warning("%s: %s", path, note)
        else:
            notes.append(note)
    return skill


def _read_text(path: Path) -> str:
    """The file's text, read at most ``MAX_SKILL_FILE_BYTES`` (+1) bytes deep.

    Only regular files are opened: a named pipe called SKILL.md would block the open forever, and a
    link to a device (``/dev/zero``) reports size 0 yet never ends.
    """
    st = path.stat()
    if not stat.S_ISREG(st.st_mode):
        raise _Invalid("not a regular file")
    if st.st_size > MAX_SKILL_FILE_BYTES:
        raise _Invalid(f"file is {st.st_size} bytes (limit {MAX_SKILL_FILE_BYTES})")
    with open(path, "rb") as f:
        raw = f.read(MAX_SKILL_FILE_BYTES + 1)
    if len(raw) > MAX_SKILL_FILE_BYTES:  # grew after the stat
        raise _Invalid(f"file is over {MAX_SKILL_FILE_BYTES} bytes (limit {MAX_SKILL_FILE_BYTES})")
    if raw.startswith((b"\xff\xfe", b"\xfe\xff", b"-\x00-\x00-\x00", b"\x00-\x00-\x00-")):
        # Windows Notepad's "Unicode": text, but full of NUL bytes; "binary" would mislead
        raise _Invalid("UTF-16 text; save the file as UTF-8")
    if b"\x00" in raw:
        raise _Invalid("binary file, not text")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _Invalid("not valid UTF-8") from None


#: How deep below a configured folder SKILL.md files are looked for, and how many folders holding
#: no SKILL.md one walk may visit: a symlink to ``~`` (or a checkout with node_modules) inside
#: skills/ must not turn every refresh, and the per-turn change check, into a walk of the whole
#: disk.
MAX_WALK_DEPTH = 6
MAX_WALK_DIRS = 5_000
_SKIPPED_DIRS = frozenset({"node_modules", "__pycache__", "venv", "site-packages"})


def _skill_files(folder: Path, seen: set[str] | None = None) -> tuple[list[Path], list[CatalogIssue]]:
    """Every SKILL.md under ``folder``, sorted; a missing or vanished folder yields none.

    Symlinked folders are followed (``ln -s ~/src/my-skills/deploy skills/deploy`` is how skills
    are shared), each real directory once, so a link cycle or a second link to the same folder
    neither hangs nor duplicates a skill. A folder that cannot be listed (permissions) is an issue:
    its skills would otherwise vanish without a word. ``seen`` (real directories already walked) is
    shared across configured folders, so a folder listed twice, or inside another, is read once.
    The walk stops ``MAX_WALK_DEPTH`` levels down and after ``MAX_WALK_DIRS`` folders (an issue
    says so); hidden folders and package trees (node_modules, virtualenvs) are not entered.
    """
    found: list[Path] = []
    seen = set() if seen is None else seen
    issues: list[CatalogIssue] = []
    base_depth = len(folder.parts)
    visited = 0

    def onerror(e: OSError) -> None:
        if not isinstance(e, FileNotFoundError):  # vanished mid-walk: simply gone
            issues.append(CatalogIssue(str(e.filename or folder), f"cannot list folder: {e.strerror or e}"))

    try:
        for root, dirs, files in os.walk(folder, onerror=onerror, followlinks=True):
            real = os.path.realpath(root)
            if real in seen:
                dirs[:] = []
                continue
            seen.add(real)
            if SKILL_FILE in files:
                found.append(Path(root) / SKILL_FILE)
                # a skill's folders (references/, scripts/, assets/, a vendored copy of an old
                # package) belong to it: a SKILL.md below is one of its files, not another skill
                dirs[:] = []
                continue
            # only a folder that holds no skill counts against the budget: 5,000 skills in one
            # folder are what the walk is for, a link to ~ is what the budget stops
            visited += 1
            if visited > MAX_WALK_DIRS:
                issues.append(CatalogIssue(str(folder), f"stopped looking for skills after {MAX_WALK_DIRS} "
                                           "folders without one (a link to a large tree inside it?)"))
                break
            miscased = next((f for f in sorted(files) if f.casefold() == SKILL_FILE.casefold()), None)
            if miscased is not None:   # skill.md: passed over in silence, the skill was just missing
                issues.append(CatalogIssue(str(Path(root) / miscased),
                                           f"not loaded: a skill's file must be named {SKILL_FILE} "
                                           "(upper case); rename it"))
            if len(Path(root).parts) - base_depth >= MAX_WALK_DEPTH:
                dirs[:] = []
                continue
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED_DIRS)
    except OSError:
        return [], issues
    return sorted(found), issues


def skill_paths(folders: Iterable[str | os.PathLike[str]]) -> tuple[list[Path], list[CatalogIssue]]:
    """Every SKILL.md below each folder, in folder order, and the folders that could not be listed.

    ``seen`` (real directories walked) is shared, so a folder configured twice is listed once.
    """
    paths: list[Path] = []
    issues: list[CatalogIssue] = []
    seen: set[str] = set()
    for folder in folders:
        base = user_path(folder)
        try:
            if not base.is_dir():
                if base.exists():
                    issues.append(CatalogIssue(str(base), "not a directory"))
                continue
        except OSError as e:  # a parent we may not enter: pathlib raises instead of saying False
            issues.append(CatalogIssue(str(base), f"cannot list folder: {e.strerror or e}"))
            continue
        found, unlisted = _skill_files(base, seen)
        paths.extend(found)
        issues.extend(unlisted)
    return paths, issues


def sources_fingerprint(folders: Iterable[str | os.PathLike[str]],
                        files: Iterable[str | os.PathLike[str]] = ()) -> tuple[object, ...]:
    """What the catalog is made of, by ``stat`` only (no file is read): every SKILL.md under the
    folders and each extra file (JSONL catalogs), with inode, size, mtime and ctime. Equal
    fingerprints mean a refresh would read the same bytes; a skill added, removed or edited (even
    with its mtime put back) changes it."""
    paths = skill_paths(folders)[0] + [user_path(f) for f in files]
    out: list[object] = []
    for path in paths:
        try:
            st = path.stat()
        except OSError:
            out.append((str(path), None))
            continue
        out.append((str(path), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(out)


def read_skill_md(path: Path, notes: list[str] | None = None) -> Skill:
    """The skill one SKILL.md holds; raises ValueError (with ``line`` when known), OSError, or
    RecursionError. ``notes``: as :func:`parse_skill_md`'s."""
    return parse_skill_md(_read_text(path), str(path), notes)


def load_skill_folders(folders: Iterable[str | os.PathLike[str]], notes: list[str] | None = None,
                       ) -> tuple[list[Skill], list[CatalogIssue]]:
    """Read every SKILL.md below each folder, in folder order; bad files become issues. What a
    kept skill warns is logged, or with ``notes`` appended to it as ``path: note``."""
    skills: list[Skill] = []
    paths, issues = skill_paths(folders)
    for path in paths:
        said: list[str] | None = None if notes is None else []
        try:
            skills.append(read_skill_md(path, said))
            if notes is not None and said:
                notes.extend(f"{path}: {n}" for n in said)
        except (_Invalid, ValueError) as e:
            issues.append(CatalogIssue(str(path), str(e), getattr(e, "line", None)))
        except RecursionError:
            issues.append(CatalogIssue(str(path), "nested too deeply to read"))
        except FileNotFoundError as e:   # a dangling link, or vanished between listing and reading
            issues.append(CatalogIssue(str(path), _missing(path) or f"cannot read: {e.strerror or e}"))
        except OSError as e:  # permissions, a link loop, ...
            issues.append(CatalogIssue(str(path), f"cannot read: {e.strerror or e}"))
    return skills, issues


def _missing(path: Path) -> str | None:
    """What a SKILL.md that `ls` lists but no read finds is: a link to a file moved away."""
    try:
        return f"a link to {os.readlink(path)}, which does not exist" if path.is_symlink() else None
    except OSError:
        return None


def _bounded_int(text: str) -> int:
    """json's integer hook: past 4,300 digits Python's own error advises calling
    ``sys.set_int_max_str_digits``, which means nothing to the person editing the catalog."""
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _Invalid(f"a number of {digits} digits (limit {MAX_INT_DIGITS})")
    return int(text)


def load_jsonl_catalog(path: str | os.PathLike[str],
                       memo: CatalogMemo | None = None) -> tuple[list[Skill], list[CatalogIssue]]:
    """Read a JSONL catalog: one ``{"name", "description", ...}`` object per line.

    With ``memo`` (a retriever's), a line read before is not parsed again and its warnings are
    logged once per change, not on every read (``catalog_memo``); skills, paths, issues and the
    warnings' texts are those of a read without it.
    """
    p = user_path(path)  # config paths may say ~/..., as folders do
    try:   # a pipe or device is never opened: the read would block every load, or never end
        st = p.stat()
        if not stat.S_ISREG(st.st_mode):
            kind = "is a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file (a pipe or device?)"
            return _unread(memo, p, f"{kind}, not a JSONL catalog")
        if st.st_size > MAX_CATALOG_BYTES:
            return _unread(memo, p, f"file is {st.st_size} bytes (limit {MAX_CATALOG_BYTES})")
        with open(p, "rb") as f:
            raw = f.read(MAX_CATALOG_BYTES)
    except OSError as e:
        return _unread(memo, p, f"cannot read: {e.strerror or e}")
    if raw.startswith(b"\xef\xbb\xbf"):  # a BOM would make line 1 invalid JSON
        raw = raw[3:]
    if memo is None:
        return _read_lines(str(p), raw.split(b"\n"), LastRead())[:2]
    with memo.lock:
        lines = raw.split(b"\n")
        skills, issues, read = _read_lines(str(p), lines, memo.last(str(p), lines))
        memo.keep(str(p), read)
    return skills, issues


def _unread(memo: CatalogMemo | None, p: Path, reason: str) -> tuple[list[Skill], list[CatalogIssue]]:
    if memo is not None:
        with memo.lock:
            memo.forget(str(p))
    return [], [CatalogIssue(str(p), reason)]


def _read_lines(file: str, lines: list[bytes],
                last: LastRead) -> tuple[list[Skill], list[CatalogIssue], LastRead]:
    """Each line's skill or issue, parsing only lines ``last`` does not hold, and logging a line's
    warnings only where ``last`` did not have it at that place; and the read to keep."""
    skills: list[Skill] = []
    issues: list[CatalogIssue] = []
    parsed: dict[bytes, ParsedLine] = {}
    for lineno, line_bytes in enumerate(lines, start=1):
        if len(line_bytes) > MAX_SKILL_FILE_BYTES:   # a record may be as long as a SKILL.md file
            issues.append(CatalogIssue(file, f"line is {len(line_bytes)} bytes (limit "
                                       f"{MAX_SKILL_FILE_BYTES}); skipped unread", lineno))
            continue
        where = f"{file}:{lineno}"
        line = parsed.get(line_bytes) or last.parsed.get(line_bytes) or _parse_line(line_bytes, where)
        if line.skill is not None:
            skill = line.skill
            if skill.path != where:   # the same line, moved (or twice in the file)
                skill = skill.at(where)
                line = ParsedLine(skill, None, line.notes)
            skills.append(skill)
        elif line.reason is not None:
            issues.append(CatalogIssue(file, line.reason, lineno))
        if line.notes and not last.same_place(lineno, line_bytes):
            for note in line.notes:
                log.warning("%s: %s", where, note)
        parsed[line_bytes] = line
    return skills, issues, LastRead(tuple(lines), parsed)


def _parse_line(line_bytes: bytes, where: str) -> ParsedLine:
    """What one catalog line holds (``ParsedLine``); its skill is placed at ``where``."""
    try:
        line = line_bytes.decode("utf-8")
    except UnicodeDecodeError as e:
        return ParsedLine(reason=f"not valid UTF-8 (byte 0x{line_bytes[e.start]:02x} at column "
                          f"{e.start + 1}); save the file as UTF-8")
    if not line.strip():
        return BLANK
    notes: list[str] = []   # kept when a later check refuses the record: a fresh read logs them
    try:
        data = json.loads(line, parse_int=_bounded_int)
        skill = skill_from_mapping(data, path=where, strict_lengths=False, notes=notes)
    except json.JSONDecodeError as e:
        return ParsedLine(reason=f"not valid JSON ({e.msg})")
    except (_Invalid, ValueError) as e:  # also an integer over 4,300 digits
        return ParsedLine(reason=str(e)[:200], notes=tuple(notes))
    except RecursionError:  # a line of 100,000 nested brackets
        return ParsedLine(reason="nested too deeply to read")
    return ParsedLine(skill, None, tuple(notes))


def look_alike_key(name: str) -> str:
    """What ``name`` looks like (:func:`~hermes_core.look_alike.name_key`): two names with one key
    and different letters read the same to the model and to whoever reads the hint."""
    return name.casefold() if name.isascii() else _name_key(name)


_name_key = functools.lru_cache(maxsize=65_536)(name_key)


def _disguise(name: str, like: str) -> str:
    """The first character of ``name`` that makes it look like ``like`` without being it (a
    non-ASCII one first; a Latin letter in a Greek or Cyrillic name otherwise)."""
    c = next((c for c in name if not c.isascii() and c not in like),
             next((c for c in name if c not in like), None))
    return "" if c is None else f" (U+{ord(c):04X} {unicodedata.name(c, 'unnamed character')})"


def dedupe(skills: Sequence[Skill]) -> tuple[list[Skill], list[CatalogIssue]]:
    """Keep the first skill of each name (search order); each loser becomes an issue naming both.
    So is a later name that only looks like a kept one (``dеploy`` with a Cyrillic е, a zero-width
    joiner or a full-width letter beside ``deploy``): the model would see two skills of one name,
    and load whichever it typed back. Names that differ by case alone are kept as written
    (``Deploy`` and ``deploy`` read differently, and skill_view asks which is meant), and so are
    two names written in one alphabet other than Latin (:func:`~hermes_core.look_alike.one_alphabet`)."""
    seen: dict[str, Skill] = {}
    looks: dict[str, Skill] = {}
    issues: list[CatalogIssue] = []
    for s in skills:
        first = seen.get(s.name)
        if first is None:
            key = look_alike_key(s.name)
            like = looks.get(key)
            if (like is None or like.name.casefold() == s.name.casefold()
                    or ((alphabet := one_alphabet(s.name)) is not None
                        and alphabet == one_alphabet(like.name))):
                seen[s.name] = s
                looks.setdefault(key, s)
                continue
            issues.append(CatalogIssue(s.path or "<catalog>", f"skill name {s.name!r} looks like "
                                       f"{like.name!r}{_disguise(s.name, like.name)}; keeping "
                                       f"{like.path or '<catalog>'}"))
            continue
        issues.append(CatalogIssue(s.path or "<catalog>",
                                   f"duplicate skill name '{s.name}'; keeping {first.path or '<catalog>'}"))
    return list(seen.values()), issues


def load_catalog(folders: Iterable[str | os.PathLike[str]] = (),
                 catalogs: Iterable[str | os.PathLike[str]] = (), *, warn: bool = True,
                 platform: str | None = None, warned: set[str] | None = None,
                 memo: CatalogMemo | None = None) -> Catalog:
    """Skills from folders (SKILL.md) then JSONL catalogs, de-duplicated, with issues logged
    (each once, when the caller keeps a ``warned`` set across loads: a catalog is re-read on every
    refresh, and one bad file is one warning; so is a SKILL.md kept with a warning, whatever
    ``warn``, as before). ``memo`` keeps what each JSONL line parsed to for
    the next load (``catalog_memo``).

    A skill whose ``platforms`` leave out this machine's (``platform``, default the running one)
    is set apart in ``Catalog.unavailable`` with the reason: neither hinted nor loadable here.
    """
    notes: list[str] = []   # kept but said (a long description, a name unlike its folder)
    skills, issues = load_skill_folders(folders, notes)
    for note in notes:   # every refresh re-reads each SKILL.md: an unchanged one is not said again
        if warned is None or note not in warned:
            log.warning("%s", note)
            if warned is not None:
                warned.add(note)
    read: set[str] = set()
    for cat in catalogs:
        real = os.path.realpath(os.path.expanduser(os.fspath(cat)))
        if real in read:  # configured twice: one read, or every skill would be its own duplicate
            continue
        read.add(real)
        more, bad = load_jsonl_catalog(cat, memo)
        skills.extend(more)
        issues.extend(bad)
    unique, dupes = dedupe(skills)
    issues.extend(dupes)
    if warn:
        for issue in issues:
            if warned is not None:
                if str(issue) in warned:
                    continue
                warned.add(str(issue))
            log.warning("skipping skill: %s", issue)
    here = current_platform() if platform is None else platform
    usable: list[Skill] = []
    unavailable: list[tuple[Skill, str]] = []
    for s in unique:
        why = platform_mismatch(s, here)
        if why is None:
            usable.append(s)
        else:
            unavailable.append((s, why))
    return Catalog(tuple(usable), tuple(issues), tuple(unavailable))


@dataclass(frozen=True, slots=True)
class IndexDelta:
    """What a refresh changed, by skill id."""

    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.added or self.changed or self.removed)


@dataclass
class SkillIndex:
    """Skills by deterministic id with their content hashes; a refresh reports only the difference.

    Callers (the layer indexes) delete ``removed`` and ``changed`` ids first, then upsert ``added``
    and ``changed`` ones, so a changed skill never appears twice.
    """

    skills: dict[str, Skill] = field(default_factory=dict)
    hashes: dict[str, str] = field(default_factory=dict)

    def refresh(self, skills: Sequence[Skill]) -> IndexDelta:
        new = {s.id: s for s in skills}
        new_hashes = {sid: s.content_hash for sid, s in new.items()}
        delta = index_delta(self.hashes, new_hashes)
        # every skill as read now, not only the changed ones: a skill whose content is unchanged
        # may have moved (a line added above it in a JSONL file, its folder renamed), and its
        # path is where skill_view finds its files and what a fresh load would say
        self.skills, self.hashes = new, new_hashes
        return delta

    def ordered(self) -> list[Skill]:
        """Skills in :func:`index_order`."""
        return index_order(self.skills.values())


def index_order(skills: Iterable[Skill]) -> list[Skill]:
    """Skills sorted by name: the order every layer index uses, and the skill list shows."""
    return sorted(skills, key=lambda s: s.name)


def index_delta(old: Mapping[str, str], new: Mapping[str, str]) -> IndexDelta:
    """What turns the catalog ``old`` into ``new`` (skill id -> content hash)."""
    return IndexDelta(tuple(sorted(sid for sid in new if sid not in old)),
                      tuple(sorted(sid for sid in new if sid in old and old[sid] != new[sid])),
                      tuple(sorted(sid for sid in old if sid not in new)))


# ------------------------------------------------------------------ the last reindex's catalog
# A retriever's index lives in its process: `skills reindex` starts from an empty one every run,
# so its delta alone calls every skill "added". What the last reindex indexed is kept beside the
# retriever's caches, per set of sources, and the command reports against that.
SNAPSHOT_VERSION = 1


def snapshot_path(cache_dir: str | os.PathLike[str] | None, folders: Iterable[str | os.PathLike[str]],
                  catalogs: Iterable[str | os.PathLike[str]]) -> Path | None:
    """Where the last reindex of these sources recorded its catalog; None without a cache folder."""
    if cache_dir is None:
        return None
    return Path(cache_dir) / "index" / f"catalog-{sources_key(folders, catalogs)}.json"


def sources_key(folders: Iterable[str | os.PathLike[str]], catalogs: Iterable[str | os.PathLike[str]]) -> str:
    """Names a set of skill sources (folders and catalog files, resolved): what a cache kept per
    catalog rather than per catalog version is filed under."""
    sources = [f"folder:{user_path(f).resolve()}" for f in folders]
    sources += [f"file:{user_path(f).resolve()}" for f in catalogs]
    return hashlib.sha256("\x00".join(sources).encode("utf-8", "surrogateescape")).hexdigest()[:32]


def read_snapshot(path: Path | None) -> dict[str, str] | None:
    """The catalog (skill id -> content hash) recorded at ``path``; None when there is none or it
    cannot be read (then the next reindex reports against an empty catalog, and records again)."""
    if path is None:
        return None
    cache_sweep.touch(path, time.time())   # in use: no sweep takes it (cache_upkeep)
    try:
        data = json.loads(read_cache(path).decode("utf-8"))   # a FIFO there: not read
        if data.get("version") != SNAPSHOT_VERSION:
            return None
        return {str(k): str(v) for k, v in dict(data["skills"]).items()}
    except FileNotFoundError:
        return None
    except Exception as e:   # a torn or foreign file: the counts start again from nothing
        log.warning("reindex record %s is unreadable (%s); counting every skill as added",
                    path, type(e).__name__)
        return None


def write_snapshot(path: Path | None, hashes: Mapping[str, str]) -> None:
    if path is not None:
        data = {"version": SNAPSHOT_VERSION, "skills": dict(sorted(hashes.items()))}
        write_cache(path, json.dumps(data, ensure_ascii=False).encode("utf-8"), "reindex record",
                    logger=log)
