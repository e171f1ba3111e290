"""The files of a skill's folder, served to the model one at a time (progressive disclosure).

A SKILL.md says "read FORMS.md" or links ``reference/guide.md``; ``skill_view(name, file_path)``
serves that file. Only regular files inside the skill's own folder are served: an absolute path, a
``..`` that climbs out, or a symlink whose target lies outside are refused, whatever the model
asks. Files are read at most ``MAX_FILE_BYTES`` deep and clipped like a body.
"""

from __future__ import annotations

import dataclasses
import os
import stat
from pathlib import Path, PurePosixPath

from hermes_core.retrieval.result import RetrievalResult
from hermes_core.retrieval.skills import SKILL_FILE, current_platform, platform_mismatch, read_skill_md
from hermes_core.types import Skill

#: The most of one file read (a larger one is cut, with a note).
MAX_FILE_BYTES = 256_000
#: The most of one file handed to the model at once (as for a skill body).
MAX_FILE_CHARS = 40_000
#: Files named in a body's listing (a skill vendoring a whole package would flood the context).
MAX_LISTED = 60
_MAX_DEPTH = 4
_SKIPPED = frozenset({"node_modules", "__pycache__", ".git"})


class SkillFileError(ValueError):
    """A file that cannot be served; the message is what the model is told."""


def _skill_file(skill: Skill) -> Path | None:
    return Path(skill.path) if skill.path and skill.path.endswith(SKILL_FILE) else None


def still_there(skill: Skill) -> bool:
    """Whether ``skill``'s SKILL.md is still on disk (a catalog line has none: always)."""
    path = _skill_file(skill)
    return path is None or path.is_file()


def skill_now(skill: Skill) -> Skill:
    """``skill`` as its SKILL.md reads now; raises :class:`SkillFileError` (what the model is told).

    The index is refreshed a turn after a change is noticed (decision 16), so the skill a hint or
    ``skill_view`` found may have been edited, broken or deleted since: serving the indexed copy
    gave a deleted skill's old body, and "has no folder of files" for one of its files. One read
    of one file (a catalog line, which has no file, is served as indexed). The message names the
    file as "its SKILL.md", never by the home's absolute path; the refresh logs that. What the read
    would warn (a long description, a name unlike its folder) is dropped: this runs on every
    ``skill_view`` and every turn a trigger fires, and the index's read already said it once (a
    refresh says it again when the file changes). A file edited to name platforms that leave this
    machine out is refused as the refresh will set it apart (``Catalog.unavailable``): until then
    its new body was served, triggers and all, on a machine it says it is not for.
    """
    path = _skill_file(skill)
    if path is None:
        return skill
    try:
        fresh = read_skill_md(path, notes=[])
    except FileNotFoundError:
        raise SkillFileError(f"error: skill {skill.name!r} is gone: its SKILL.md was deleted after "
                             "the skill list was read; do not use it") from None
    except OSError as e:
        raise SkillFileError(f"error: cannot read skill {skill.name!r}: "
                             f"{e.strerror or type(e).__name__}") from None
    except (ValueError, RecursionError) as e:
        line = getattr(e, "line", None)
        at = f", line {line}" if line else ""
        reason = str(e) if isinstance(e, ValueError) else "nested too deeply to read"
        raise SkillFileError(f"error: skill {skill.name!r} cannot be loaded: its SKILL.md{at}: "
                             f"{reason}") from None
    why = platform_mismatch(fresh, current_platform())
    if why is not None:
        raise SkillFileError(f"error: skill {skill.name!r} is not available on this machine: its "
                             f"SKILL.md now says it is {why}; do not use it")
    return fresh


def as_on_disk(result: RetrievalResult) -> RetrievalResult:
    """``result`` without the skills deleted since the index was built, and a trigger's
    auto-loaded skill as its SKILL.md reads now (left out when broken): the index is a turn behind
    a change (decision 16), and a hint naming a deleted skill, or the old body of an edited one
    auto-loaded, is worse than none. A stat per hinted skill; one read when a trigger fired."""
    if not result.skills:
        return result
    if result.layer == "L1":
        try:
            fresh = skill_now(result.skills[0])
        except SkillFileError:
            return dataclasses.replace(result, skills=(), scores=())
        return dataclasses.replace(result, skills=(fresh, *result.skills[1:]))
    kept = [i for i, s in enumerate(result.skills) if still_there(s)]
    if len(kept) == len(result.skills):
        return result
    scores = tuple(result.scores[i] for i in kept) if len(result.scores) == len(result.skills) \
        else result.scores
    return dataclasses.replace(result, skills=tuple(result.skills[i] for i in kept), scores=scores)


def skill_folder(skill: Skill) -> Path | None:
    """The folder of a SKILL.md skill (None for a JSONL catalog line, which has no folder)."""
    if not skill.path or not skill.path.endswith("SKILL.md"):
        return None
    folder = Path(skill.path).parent
    return folder if folder.is_dir() else None


def _inside(root: str, path: str) -> bool:
    try:
        return os.path.commonpath([root, path]) == root
    except ValueError:   # different drives
        return False


def list_files(folder: Path, limit: int = MAX_LISTED) -> tuple[list[str], int]:
    """Relative POSIX paths of the regular files in ``folder`` (SKILL.md, hidden files, links that
    leave the folder or lead nowhere, pipes and devices excluded: the listing offers only what
    skill_view serves), sorted, at most ``limit``; and how many there are in all."""
    root = os.path.realpath(folder)
    found: list[str] = []
    for dirpath, dirs, files in os.walk(folder):
        rel_dir = os.path.relpath(dirpath, folder)
        depth = 0 if rel_dir == "." else rel_dir.count(os.sep) + 1
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED
                         and depth < _MAX_DEPTH)
        for name in files:
            if name.startswith(".") or (depth == 0 and name == "SKILL.md"):
                continue
            full = os.path.join(dirpath, name)
            if not _inside(root, os.path.realpath(full)) or not os.path.isfile(full):
                continue   # leaves the folder, or nothing read_skill_file serves (dangling link, pipe)
            found.append(PurePosixPath(*Path(os.path.relpath(full, folder)).parts).as_posix())
    found.sort()
    return found[:limit], len(found)


def _within(folder: Path, absolute: str) -> PurePosixPath | None:
    """An absolute path as the relative path it is inside ``folder`` (as the folder was found, or
    where its links lead), or None: a body naming its files by absolute path is copied as written.
    Judged on the normalised text; where the file's own links lead is checked after, as for any
    relative path."""
    target = os.path.normpath(absolute)
    for base in (os.path.abspath(folder), os.path.realpath(folder)):
        if target != base and _inside(base, target):
            return PurePosixPath(Path(os.path.relpath(target, base)).as_posix())
    return None


def _named(file_path: str, limit: int = 120) -> str:
    """``file_path`` as an error quotes it: the model wrote it, and a 5,000-character name sent
    back whole would cost as much again in the next request."""
    return repr(file_path if len(file_path) <= limit else file_path[:limit] + "...")


def _exists(path: Path) -> bool:
    """Whether ``path`` exists; a name the file system refuses (too long: ENAMETOOLONG) names no
    file, which is what the model is told, not an OSError quoting the home's absolute path."""
    try:
        return path.exists()
    except OSError:
        return False


def _resolve(folder: Path, file_path: str) -> Path:
    raw = file_path.strip().replace("\\", "/")
    if not raw:
        raise SkillFileError("error: file_path is empty")
    if "\x00" in raw:
        raise SkillFileError(f"error: {_named(file_path)} holds a NUL character; no file is named so")
    rel = PurePosixPath(raw)
    if rel.is_absolute():
        rel = _within(folder, raw) or rel
    if rel.is_absolute() or ".." in rel.parts or (rel.parts and rel.parts[0].endswith(":")):
        raise SkillFileError(f"error: {_named(file_path)} is not a path inside the skill's folder")
    root = os.path.realpath(folder)
    candidate = Path(folder, *rel.parts)
    if not _exists(candidate):
        # a body that says "read FORMS.md" next to a forms.md: the case is forgiven when unique
        listed, _ = list_files(folder, limit=10_000)
        matches = [p for p in listed if p.casefold() == rel.as_posix().casefold()]
        if len(matches) != 1:
            raise SkillFileError(f"error: the skill has no file {_named(file_path)}")
        candidate = Path(folder, *PurePosixPath(matches[0]).parts)
    if not _inside(root, os.path.realpath(candidate)):
        raise SkillFileError(f"error: {_named(file_path)} leads outside the skill's folder; not served")
    return candidate


def read_skill_file(skill: Skill, file_path: str) -> str:
    """The text of ``file_path`` in ``skill``'s folder, clipped; raises :class:`SkillFileError`."""
    folder = skill_folder(skill)
    if folder is None:
        raise SkillFileError(f"error: skill {skill.name!r} has no folder of files")
    path = _resolve(folder, file_path)
    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode):
            raise SkillFileError(f"error: {_named(file_path)} is not a regular file")
        with open(path, "rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        raise SkillFileError(f"error: cannot read {_named(file_path)}: {e.strerror or e}") from None
    cut = len(raw) > MAX_FILE_BYTES
    raw = raw[:MAX_FILE_BYTES]
    if b"\x00" in raw:
        raise SkillFileError(f"error: {_named(file_path)} is a binary file, not text")
    text = raw.decode("utf-8", errors="replace")
    if cut or len(text) > MAX_FILE_CHARS:
        total = f"{st.st_size} bytes" if cut else f"{len(text)} characters"
        text = (f"{text[:MAX_FILE_CHARS]}\n\n[... truncated: the first {MAX_FILE_CHARS} characters "
                f"of {total} are shown]")
    return text


def files_listing(skill: Skill) -> str:
    """The note under a body naming the files the model may load (empty when there are none)."""
    folder = skill_folder(skill)
    if folder is None:
        return ""
    files, total = list_files(folder)
    if not files:
        return ""
    more = f"\n- ... and {total - len(files)} more" if total > len(files) else ""
    return ("## Files in this skill\nLoad one with skill_view(name, file_path), e.g. "
            f"skill_view({skill.name!r}, {files[0]!r}):\n"
            + "\n".join(f"- {p}" for p in files) + more)
