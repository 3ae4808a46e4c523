"""Your progress through the practice problems: what ``check()`` saw, kept in a local JSON file.

Each time :func:`lecture_lib.checks.check` reaches a verdict on an answered problem it calls
:func:`record`, which adds one attempt to that problem and, the first time the answer is correct,
notes the time. Nothing else is stored: no answer (yours or the expected one), no feedback text.
:func:`progress` shows a per-chapter table (or, for one chapter, a per-problem table)::

    from lecture_lib.progress import progress
    progress()              # every chapter: problems, attempted, solved, attempts, first solved
    progress(chapter=1)     # Chapter 1 problem by problem
    progress(reset=True)    # forget everything (deletes the file; same as clear())

Where the file lives: ``$LECTURE_PROGRESS_FILE`` if set (the tests point it at a temporary
folder), otherwise ``~/.lecture_lib/progress.json``. Setting ``LECTURE_PROGRESS_FILE=off``
turns recording off. Nothing is recorded while nbgrader validates or autogrades
(``NBGRADER_EXECUTION`` set): that is the grader's machine, not the learner's.

The file is written atomically (a temporary file in the same folder, then ``os.replace``), so an
interrupted write never leaves half a file. A file that is unreadable or not what this module
wrote is set aside as ``progress.json.corrupt`` and progress starts afresh; recording never makes
``check()`` fail. Two kernels checking at the same instant may lose one attempt (last write wins).

Command line: ``python -m lecture_lib.progress`` prints the table; ``--reset`` clears it.
"""

from __future__ import annotations

import html
import json
import os
import re
import sys
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from . import validate

ENV_VAR = "LECTURE_PROGRESS_FILE"
DEFAULT_PATH = Path("~/.lecture_lib/progress.json")
OFF = "off"
VERSION = 1
RECORDED = ("correct", "wrong", "invalid")   # an attempt; "unanswered" (still ...) is not one

__all__ = ["ENV_VAR", "ProgressReport", "load", "clear", "path", "progress", "record"]

_ID = re.compile(r"\d+\.\d+")


# ================================================================================ the file

def path() -> Path | None:
    """The progress file in use, or None when recording is off (``LECTURE_PROGRESS_FILE=off``)."""
    chosen = os.environ.get(ENV_VAR, "").strip()
    if chosen.lower() == OFF:
        return None
    return Path(chosen).expanduser() if chosen else DEFAULT_PATH.expanduser()


def _empty() -> dict:
    return {"version": VERSION, "problems": {}}


def _valid(data) -> bool:
    if not (isinstance(data, dict) and data.get("version") == VERSION and isinstance(data.get("problems"), dict)):
        return False
    for key, entry in data["problems"].items():
        if not (_ID.fullmatch(str(key)) and isinstance(entry, dict)
                and isinstance(entry.get("attempts"), int) and entry["attempts"] >= 0):
            return False
    return True


def load(file: Path | None = None) -> dict:
    """The recorded progress ``{"version": 1, "problems": {"1.3": {...}}}``; empty if there is none.

    A corrupt file is renamed to ``*.corrupt`` (so nothing is silently destroyed) and an empty
    record is returned. Never raises for a bad file.
    """
    if file is not None and (not isinstance(file, (str, os.PathLike)) or not str(file)):
        raise ValueError(f"file must be a path (text or pathlib.Path) or None, got {validate._describe(file)}")
    file = path() if file is None else Path(file)
    if file is None or not file.exists():
        return _empty()
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        data = None
    if _valid(data):
        return data
    try:
        os.replace(file, file.with_name(file.name + ".corrupt"))
    except OSError:
        pass
    return _empty()


def _save(data: dict, file: Path) -> None:
    """Write ``data`` to ``file`` atomically: a temporary file beside it, then ``os.replace``."""
    file.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{file.name}.", suffix=".tmp", dir=file.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(data, stream, indent=1, sort_keys=True)
            stream.write("\n")
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
    recorded. The first correct verdict stamps ``first_correct`` (UTC, ISO 8601). Called by
    ``check()``; never raises (a full disk or a read-only home must not break a check cell).
    """
    try:
        if not (isinstance(problem_id, str) and _ID.fullmatch(problem_id)) or status not in RECORDED:
            return False
        if os.environ.get("NBGRADER_EXECUTION"):
            return False
        file = path()
        if file is None:
            return False
        stamp = when or _now()
        data = load(file)
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
    except Exception:
        return False


def clear() -> bool:
    """Delete the progress file; True if there was one."""
    file = path()
    if file is None or not file.exists():
        return False
    file.unlink()
    return True


# ================================================================================ the table

def _chapter(problem_id: str) -> int:
    return int(problem_id.split(".")[0])


def _short_time(stamp: str | None) -> str:
    """An ISO stamp as "2026-05-01 14:03 UTC", or "—"."""
    if not stamp:
        return "—"
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return "—"
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


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
        from .tables import _html_table

        caption = (f"{html.escape(self.title)}. Recorded by <code>check()</code> in "
                   f"<code>{html.escape(self.file)}</code>; <code>progress(reset=True)</code> clears it.")
        return _html_table(list(self.header), [[html.escape(cell) for cell in row] for row in self.rows],
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
    come from the registry in :mod:`lecture_lib.checks`, so unattempted ones count too.
    """
    from . import checks

    if chapter is not None:
        chapter = validate.integer("chapter", chapter)
        if not checks.problem_ids(chapter=chapter):
            known = sorted({_chapter(pid) for pid in checks.problem_ids()})
            raise ValueError(f"chapter must be one with practice problems {known}, got {chapter!r}")
    reset = validate.boolean("reset", reset)
    if reset:
        clear()
    file = path()
    where = "nowhere (LECTURE_PROGRESS_FILE=off)" if file is None else str(file)
    seen = load(file)["problems"] if file is not None else {}
    registered = checks.problem_ids()
    totals = {"problems": len(registered),
              "attempted": sum(1 for pid in registered if seen.get(pid, {}).get("attempts")),
              "solved": sum(1 for pid in registered if seen.get(pid, {}).get("first_correct")),
              "attempts": sum(int(seen.get(pid, {}).get("attempts", 0)) for pid in registered)}
    if chapter is not None:
        rows = []
        for pid in checks.problem_ids(chapter=chapter):
            entry = seen.get(pid, {})
            solved = bool(entry.get("first_correct"))
            rows.append((pid, checks.PROBLEMS[pid].title, "yes" if solved else "no",
                         str(entry.get("attempts", 0)),
                         str(entry.get("attempts_to_correct", "—")) if solved else "—",
                         _short_time(entry.get("first_correct"))))
        return ProgressReport(f"Chapter {chapter}: practice problems",
                              ("problem", "title", "solved", "attempts", "attempts to solve", "first solved"),
                              tuple(rows), where, totals)
    rows = []
    for number in sorted({_chapter(pid) for pid in registered}):
        ids = checks.problem_ids(chapter=number)
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

    parser = argparse.ArgumentParser(prog="python -m lecture_lib.progress",
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
