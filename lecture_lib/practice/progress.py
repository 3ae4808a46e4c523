"""Your progress through the practice problems: what ``check()`` saw, kept in a local JSON file.

Each time :func:`lecture_lib.practice.checks.check` reaches a verdict on an answered problem it calls
:func:`record`, which adds one attempt to that problem and, the first time the answer is correct,
notes the time. Nothing else is stored: no answer (yours or the expected one), no feedback text.
:func:`progress` shows a per-chapter table (or, for one chapter, a per-problem table)::

    from lecture_lib.practice.progress import progress
    progress()              # every chapter: problems, attempted, solved, attempts, first solved
    progress(chapter=1)     # Chapter 1 problem by problem
    progress(reset=True)    # forget everything (deletes the file; same as clear())

Where the file lives: ``$LECTURE_PROGRESS_FILE`` if set (the tests point it at a temporary
folder), otherwise ``~/.lecture_lib/progress.json``. Setting ``LECTURE_PROGRESS_FILE=off``
turns recording off.

Whose work is recorded (:func:`recording`): only the learner's own attempts. Nothing is recorded

- while nbgrader validates or autogrades (``NBGRADER_EXECUTION`` set): the grader's machine;
- in a kernel that has run a worked-solutions cell, i.e. a cell holding nbgrader's
  ``### BEGIN SOLUTION`` marker. Every work cell of ``solutions/NN_*.ipynb`` (and of an nbgrader
  source notebook) has one; ``make exercises`` and nbgrader strip them from what learners get, so
  running the solutions never counts as solving the problems;
- under pytest (``PYTEST_CURRENT_TEST`` set) unless ``LECTURE_PROGRESS_FILE`` names a file: tests
  never write the learner's ``~/.lecture_lib/progress.json``.

The file is never allowed to harm anything:

- Only a regular file (or no file yet) is used. A folder, a symbolic link, a FIFO, a device or a
  socket at that path is left exactly as it is (never read, renamed or replaced); a warning says
  so once and nothing is recorded. The file is opened with ``O_NOFOLLOW | O_NONBLOCK`` and checked
  with ``fstat`` before a byte is read, and a file above 1 MB is not read.
- Every change happens under an exclusive lock (``fcntl.flock`` on ``.progress.json.lock`` beside
  it, waited for at most 10 s), re-reads the file inside the lock and writes a temporary file then
  ``os.replace``: kernels checking at the same instant lose no attempt, and an interrupted write
  never leaves half a file. (Without ``fcntl``, e.g. on Windows or in JupyterLite, only the
  threads of one process are serialised.)
- A file that is not what this module writes (not JSON, too deeply nested, a field of the wrong
  type, a date that cannot be shown) is set aside as ``progress.json.corrupt`` and progress
  starts afresh; a later bad file becomes ``progress.json.corrupt.2``, then ``.3``, so none
  replaces another.
- A read-only ``progress.json`` (``chmod 444``) is read and shown but never replaced, renamed or
  deleted: a warning says once that nothing is recorded. A writable file keeps its permissions
  when it is rewritten.
- When nothing can be saved (a read-only home, a full disk) ``check()`` still works and a warning
  says, once, that progress is not being saved. Recording never makes ``check()`` fail.

Command line: ``python -m lecture_lib.practice.progress`` prints the table; ``--reset`` clears it.
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
import stat
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from lecture_lib import validate

from . import problems, registry  # noqa: F401 (importing problems registers every chapter's)

try:   # POSIX; absent on Windows and in JupyterLite (Pyodide)
    import fcntl
except ImportError:   # pragma: no cover - exercised only where fcntl is missing
    fcntl = None

ENV_VAR = "LECTURE_PROGRESS_FILE"
DEFAULT_PATH = Path("~/.lecture_lib/progress.json")
OFF = "off"
VERSION = 1
RECORDED = ("correct", "wrong", "invalid")   # an attempt; "unanswered" (still ...) is not one
SOLUTION_MARKER = "### BEGIN SOLUTION"       # nbgrader's marker: only worked solutions run it
MAX_BYTES = 1_000_000                        # a real progress file is a few kB
LOCK_SECONDS = 10.0

__all__ = ["ENV_VAR", "ProgressReport", "ProgressWarning", "load", "clear", "path", "progress", "record",
           "recording"]

_ID = re.compile(r"\d+\.\d+")
_FIELDS = {"attempts", "first_attempt", "first_correct", "last_attempt", "last_status", "attempts_to_correct"}


class ProgressWarning(UserWarning):
    """Progress is not being recorded (the file is refused, busy or cannot be written)."""


_warned: set[str] = set()
_thread_lock = threading.Lock()


def _warn_once(key: str, message: str) -> None:
    if key in _warned:
        return
    _warned.add(key)
    warnings.warn(message, ProgressWarning, stacklevel=3)


# ================================================================================ whose work

_kernel = {"shell": None, "scanned": 0, "solutions": False}


def _running_solutions() -> bool:
    """True once this IPython kernel has run a cell holding :data:`SOLUTION_MARKER`.

    Only the kernel's own input history is read (new cells since the last call), never files.
    Outside IPython (a plain script) there is no history and this is False.
    """
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()
        if shell is None:
            return False
        if shell is not _kernel["shell"]:
            _kernel.update(shell=shell, scanned=0, solutions=False)
        if _kernel["solutions"]:
            return True
        history = shell.history_manager.input_hist_raw
        for cell in history[_kernel["scanned"]:]:
            if SOLUTION_MARKER in cell:
                _kernel["solutions"] = True
                break
        _kernel["scanned"] = len(history)
        return _kernel["solutions"]
    except Exception:
        return False


def recording() -> bool:
    """Whether :func:`record` would keep an attempt now (see "Whose work is recorded" above)."""
    if path() is None or os.environ.get("NBGRADER_EXECUTION"):
        return False
    if os.environ.get("PYTEST_CURRENT_TEST") and not os.environ.get(ENV_VAR, "").strip():
        return False
    return not _running_solutions()


# ================================================================================ the file

def path() -> Path | None:
    """The progress file in use, or None when recording is off (``LECTURE_PROGRESS_FILE=off``)."""
    chosen = os.environ.get(ENV_VAR, "").strip()
    if chosen.lower() == OFF:
        return None
    return Path(chosen).expanduser() if chosen else DEFAULT_PATH.expanduser()


def _empty() -> dict:
    return {"version": VERSION, "problems": {}}


def _kind(mode: int) -> str:
    for test, words in ((stat.S_ISDIR, "a folder"), (stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"),
                        (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                        (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return words
    return "not a regular file"


def _refusal(file: Path) -> str | None:
    """Why ``file`` must not be touched (it exists and is not a regular file), or None."""
    try:
        mode = os.lstat(file).st_mode
    except OSError:
        return None   # absent (or unreachable: the write that follows reports that)
    if stat.S_ISREG(mode):
        return None
    return _kind(mode)


def _write_protected(file: Path) -> int | None:
    """The permission bits of ``file`` if it is a regular file its owner may not write (``chmod 444``),
    else None. Such a file is read but never replaced, renamed or deleted: someone made it read-only."""
    try:
        info = os.lstat(file)
    except OSError:
        return None
    if stat.S_ISREG(info.st_mode) and not info.st_mode & stat.S_IWUSR:
        return stat.S_IMODE(info.st_mode)
    return None


def _leave_read_only(file: Path, mode: int) -> None:
    _warn_once(f"read-only:{file}", f"Progress is not recorded: {file} is read-only (mode {mode:04o}), so "
                                    f"lecture_lib leaves it as it is. Make it writable (chmod u+w) to record "
                                    f"again, or set {ENV_VAR}=off to turn recording off.")


def _refuse(file: Path, kind: str) -> None:
    _warn_once(f"refuse:{file}", f"Progress is not recorded: {file} is {kind}, not a regular file, so "
                                 f"lecture_lib leaves it untouched. Point {ENV_VAR} at a file "
                                 f"(or set {ENV_VAR}=off to turn recording off).")


def _stamp_ok(value) -> bool:
    if not (isinstance(value, str) and len(value) <= 40):
        return False
    try:
        moment = datetime.fromisoformat(value)
        if moment.tzinfo is None:
            return False
        moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    except (ValueError, OverflowError):
        return False
    return True


def _count_ok(value, minimum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and minimum <= value <= 10**9


def _valid(data) -> bool:
    """True only for the shape this module writes: every field of the right type and range."""
    if not (isinstance(data, dict) and set(data) == {"version", "problems"} and data["version"] == VERSION
            and not isinstance(data["version"], bool) and isinstance(data["problems"], dict)):
        return False
    for key, entry in data["problems"].items():
        if not (isinstance(key, str) and _ID.fullmatch(key) and isinstance(entry, dict) and set(entry) <= _FIELDS
                and _count_ok(entry.get("attempts"), 0)):
            return False
        if any(entry.get(name) is not None and not _stamp_ok(entry[name])
               for name in ("first_attempt", "last_attempt", "first_correct")):
            return False
        if entry.get("last_status", "correct") not in RECORDED:
            return False
        if "attempts_to_correct" in entry and not _count_ok(entry["attempts_to_correct"], 1):
            return False
    return True


def _read(file: Path):
    """``("absent", None)``, ``("ok", data)``, ``("garbage", None)`` or ``("refused", kind)``.

    Opens with O_NOFOLLOW and O_NONBLOCK (a symlink fails, a FIFO does not block) and checks
    ``fstat`` before reading, so only a regular file of at most :data:`MAX_BYTES` is ever read.
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    kind = _refusal(file)
    if kind is not None:
        return "refused", kind
    try:
        handle = os.open(file, flags)
    except FileNotFoundError:
        return "absent", None
    except OSError as error:
        kind = _refusal(file)
        if kind is not None:
            return "refused", kind
        raise error
    with os.fdopen(handle, "rb") as stream:
        info = os.fstat(stream.fileno())
        if not stat.S_ISREG(info.st_mode):
            return "refused", _kind(info.st_mode)
        if info.st_size > MAX_BYTES:
            return "garbage", None
        raw = stream.read(MAX_BYTES + 1)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError, MemoryError):
        return "garbage", None
    return ("ok", data) if _valid(data) else ("garbage", None)


#: How many set-aside copies are numbered before the last number is reused.
MAX_SET_ASIDE = 100


def _set_aside(file: Path) -> Path | None:
    """Rename a bad regular file to ``NAME.corrupt``, or ``NAME.corrupt.2``, ``.3``... when earlier
    ones exist, so no bad file ever replaces another (nothing is silently destroyed). A read-only
    file is left where it is. Returns the new path, or None if nothing was moved."""
    if _refusal(file) is not None or _write_protected(file) is not None:
        return None
    target = file.with_name(file.name + ".corrupt")
    number = 1
    while os.path.lexists(target) and number < MAX_SET_ASIDE:
        number += 1
        target = file.with_name(f"{file.name}.corrupt.{number}")
    os.replace(file, target)
    return target


@contextlib.contextmanager
def _locked(file: Path):
    """Hold the exclusive lock of ``file`` (``.NAME.lock`` beside it); raise TimeoutError after
    :data:`LOCK_SECONDS`. The lock file is opened like the data file: never through a link."""
    with _thread_lock:
        if fcntl is None:
            yield
            return
        lock = file.with_name(f".{file.name}.lock")
        flags = (os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
                 | getattr(os, "O_CLOEXEC", 0))
        handle = os.open(lock, flags, 0o600)
        try:
            mode = os.fstat(handle).st_mode
            if not stat.S_ISREG(mode):
                raise IsADirectoryError(f"{lock} is {_kind(mode)}")
            deadline = time.monotonic() + LOCK_SECONDS
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"{lock} stayed locked for {LOCK_SECONDS:g} s") from None
                    time.sleep(0.005)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
        finally:
            os.close(handle)


def load(file: Path | None = None) -> dict:
    """The recorded progress ``{"version": 1, "problems": {"1.3": {...}}}``; empty if there is none.

    A file that is not what this module writes is renamed to ``*.corrupt`` (so nothing is silently
    destroyed) and an empty record is returned; a path that is not a regular file is left alone
    (with a :class:`ProgressWarning`). Never raises for a bad file.
    """
    if file is not None and (not isinstance(file, (str, os.PathLike)) or not str(file)):
        raise ValueError(f"file must be a path (text or pathlib.Path) or None, got {validate._describe(file)}")
    file = path() if file is None else Path(file)
    if file is None:
        return _empty()
    try:
        state, data = _read(file)
        if state == "garbage":
            with _locked(file):
                state, data = _read(file)   # another kernel may have replaced it meanwhile
                if state == "garbage":
                    _set_aside(file)
    except (OSError, TimeoutError):
        return _empty()
    if state == "refused":
        _refuse(file, data)
    return data if state == "ok" else _empty()


def _save(data: dict, file: Path) -> None:
    """Write ``data`` to ``file`` atomically: a temporary file beside it, then ``os.replace``."""
    handle, temporary = tempfile.mkstemp(prefix=f".{file.name}.", suffix=".tmp", dir=file.parent)
    try:
        with contextlib.suppress(OSError):   # keep the permissions the file had (mkstemp makes 0600)
            os.fchmod(handle, stat.S_IMODE(os.lstat(file).st_mode))
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(data, stream, indent=1, sort_keys=True)
            stream.write("\n")
        kind = _refusal(file)
        if kind is not None:
            raise IsADirectoryError(f"{file} became {kind}")
        os.replace(temporary, file)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def record(problem_id: str, status: str, *, when: str | None = None) -> bool:
    """Count one attempt at ``problem_id`` with verdict ``status``; True if something was written.

    Only ``correct``, ``wrong`` and ``invalid`` verdicts are attempts; ``unanswered`` is not
    recorded, nor is anything while :func:`recording` is False. The first correct verdict stamps
    ``first_correct`` (UTC, ISO 8601). Called by ``check()``; never raises (a full disk or a
    read-only home must not break a check cell): when nothing can be saved it warns once.
    """
    try:
        if not (isinstance(problem_id, str) and _ID.fullmatch(problem_id)) or status not in RECORDED:
            return False
        if not recording():
            return False
        file = path()
        stamp = when if _stamp_ok(when) else _now()
        kind = _refusal(file)
        if kind is not None:
            _refuse(file, kind)
            return False
        mode = _write_protected(file)
        if mode is not None:
            _leave_read_only(file, mode)
            return False
        file.parent.mkdir(parents=True, exist_ok=True)
        with _locked(file):
            state, data = _read(file)   # inside the lock: nobody else's attempt is overwritten
            if state == "refused":
                _refuse(file, data)
                return False
            mode = _write_protected(file)
            if mode is not None:
                _leave_read_only(file, mode)
                return False
            if state == "garbage":
                _set_aside(file)
            if state != "ok":
                data = _empty()
            entry = data["problems"].setdefault(problem_id, {"attempts": 0, "first_attempt": stamp,
                                                             "first_correct": None})
            entry["attempts"] = int(entry.get("attempts", 0)) + 1
            entry["last_attempt"] = stamp
            entry["last_status"] = status
            if status == "correct" and not entry.get("first_correct"):
                entry["first_correct"] = stamp
                entry["attempts_to_correct"] = entry["attempts"]
            _save(data, file)
        return True
    except Exception as error:
        where = getattr(error, "filename", None) or path()
        reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
        _warn_once(f"save:{path()}", f"Progress is not being saved ({reason}: {where}). check() still works; "
                                    f"set {ENV_VAR} to a writable file to keep your progress, or "
                                    f"{ENV_VAR}=off to silence this.")
        return False


def clear() -> bool:
    """Delete the progress file; True if there was one. A path that is not a regular file, or a
    read-only file, is left alone (with a warning)."""
    file = path()
    if file is None:
        return False
    kind = _refusal(file)
    if kind is not None:
        _refuse(file, kind)
        return False
    mode = _write_protected(file)
    if mode is not None:
        _leave_read_only(file, mode)
        return False
    try:
        file.unlink()
    except FileNotFoundError:
        return False
    return True


# ================================================================================ the table

def _chapter(problem_id: str) -> int:
    return int(problem_id.split(".")[0])


def _short_time(stamp: str | None) -> str:
    """An ISO stamp as "2026-05-01 14:03 UTC", or "—"."""
    if not stamp:
        return "—"
    try:
        return datetime.fromisoformat(stamp).astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    except (TypeError, ValueError, OverflowError):
        return "—"


@dataclass(frozen=True)
class ProgressReport:
    """What :func:`progress` returns: a table that shows itself as HTML in a notebook and as text
    elsewhere. ``header`` and ``rows`` (lists of strings) hold the same table for code."""

    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    file: str
    totals: dict

    def _repr_html_(self) -> str:
        from lecture_lib.explorers.tables import html_table

        caption = (f"{html.escape(self.title)}. Recorded by <code>check()</code> in "
                   f"<code>{html.escape(self.file)}</code>; <code>progress(reset=True)</code> clears it.")
        return html_table(list(self.header), [[html.escape(cell) for cell in row] for row in self.rows],
                           caption=caption).data

    def __str__(self) -> str:
        widths = [max(len(h), *(len(row[i]) for row in self.rows)) if self.rows else len(h)
                  for i, h in enumerate(self.header)]
        line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()   # noqa: E731
        body = [line(self.header), line(["-" * w for w in widths])] + [line(row) for row in self.rows]
        return "\n".join([self.title, *body, f"(recorded in {self.file})"])

    def __repr__(self) -> str:
        return str(self)


def progress(chapter: int | None = None, *, reset: bool = False) -> ProgressReport:
    """Your progress: per chapter (problems, attempted, solved, attempts, first and latest
    first-solve time), or with ``chapter=N`` per problem of that chapter.

    ``reset=True`` deletes the progress file first (so the table comes back empty). Problems
    come from :mod:`lecture_lib.practice.registry`, so unattempted ones count too.
    """
    if chapter is not None:
        chapter = validate.integer("chapter", chapter)
        if not registry.problem_ids(chapter=chapter):
            known = sorted({_chapter(pid) for pid in registry.problem_ids()})
            raise ValueError(f"chapter must be one with practice problems {known}, got {chapter!r}")
    reset = validate.boolean("reset", reset)
    if reset:
        clear()
    file = path()
    where = "nowhere (LECTURE_PROGRESS_FILE=off)" if file is None else str(file)
    seen = load(file)["problems"] if file is not None else {}
    registered = registry.problem_ids()
    totals = {"problems": len(registered),
              "attempted": sum(1 for pid in registered if seen.get(pid, {}).get("attempts")),
              "solved": sum(1 for pid in registered if seen.get(pid, {}).get("first_correct")),
              "attempts": sum(int(seen.get(pid, {}).get("attempts", 0)) for pid in registered)}
    if chapter is not None:
        rows = []
        for pid in registry.problem_ids(chapter=chapter):
            entry = seen.get(pid, {})
            solved = bool(entry.get("first_correct"))
            rows.append((pid, registry.PROBLEMS[pid].title, "yes" if solved else "no",
                         str(entry.get("attempts", 0)),
                         str(entry.get("attempts_to_correct", "—")) if solved else "—",
                         _short_time(entry.get("first_correct"))))
        return ProgressReport(f"Chapter {chapter}: practice problems",
                              ("problem", "title", "solved", "attempts", "attempts to solve", "first solved"),
                              tuple(rows), where, totals)
    rows = []
    for number in sorted({_chapter(pid) for pid in registered}):
        ids = registry.problem_ids(chapter=number)
        entries = [seen[pid] for pid in ids if pid in seen]
        solved_times = sorted(e["first_correct"] for e in entries if e.get("first_correct"))
        rows.append((str(number), str(len(ids)),
                     str(sum(1 for e in entries if e.get("attempts"))), str(len(solved_times)),
                     str(sum(int(e.get("attempts", 0)) for e in entries)),
                     _short_time(solved_times[0] if solved_times else None),
                     _short_time(solved_times[-1] if solved_times else None)))
    rows.append(("all", str(totals["problems"]), str(totals["attempted"]), str(totals["solved"]),
                 str(totals["attempts"]), "", ""))
    return ProgressReport("Practice problems by chapter",
                          ("chapter", "problems", "attempted", "solved", "attempts", "first solved",
                           "latest first solve"),
                          tuple(rows), where, totals)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m lecture_lib.practice.progress",
                                     description="Print your practice-problem progress (or clear it).")
    parser.add_argument("--chapter", type=int, default=None, help="one chapter, problem by problem")
    parser.add_argument("--reset", action="store_true", help="delete the progress file first")
    args = parser.parse_args(argv)
    try:
        print(progress(args.chapter, reset=args.reset))
    except ValueError as error:
        parser.error(str(error))
    return 0


if __name__ == "__main__":
    sys.exit(main())
