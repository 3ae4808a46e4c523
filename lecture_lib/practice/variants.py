"""Per-student numbers for graded work: each student gets their own numbers for a problem that varies.

A problem that varies lists its numbers as :class:`~lecture_lib.practice.registry.Vary` (the text's value and
the other values it may take, all inside the range where the chapter's reasoning is unchanged). For graded work,
:func:`draw` picks one of the other values for each, from a hash of the course's seed, the student's id and the
problem's id: the same student always gets the same numbers, a classmate almost always gets others (see
:func:`share_alike`), and no student gets the text's own numbers, so the worked solution's number and a
classmate's score 0 unless they happen to match.

Two places call :func:`draw` with the same arguments and so agree: the student's notebook (through
:func:`lecture_lib.practice.answers.your_numbers`, which finds the student's id in the environment, only to show
it) and the grader (:mod:`lecture_lib.practice.grading`, which takes the id nbgrader filed the submission under,
never one the notebook reports). The numbers are not secret; the answers for them are computed by the grader.

PrairieLearn's per-student question variants are the model (https://prairielearn.readthedocs.io/en/latest/question/).
"""

from __future__ import annotations

import getpass
import hashlib
import math
import os
import re

from . import problems  # noqa: F401 (importing it registers every chapter's problems)
from .registry import PROBLEMS, Problem

__all__ = ["STUDENT_ENV", "draw", "everything_for", "share_alike", "student_id"]

#: Set by the pretend-student walkthrough (docs/instructor.md) and by the grader's sandbox; on a hub the login name.
STUDENT_ENV = "LECTURE_STUDENT"
_ID = re.compile(r"[A-Za-z0-9_.@+-]{1,100}")


def student_id() -> str:
    """The student this kernel works for: ``$LECTURE_STUDENT``, else ``$JUPYTERHUB_USER`` (a hub's login), else
    the login name (nbgrader files a submission under the login name too)."""
    for name in (STUDENT_ENV, "JUPYTERHUB_USER"):
        value = os.environ.get(name, "").strip()
        if value:
            return value
    try:
        return getpass.getuser()
    except Exception:                   # no login name (some containers): everyone shares the text's numbers
        return "student"


def _problem(problem_id) -> Problem:
    if not isinstance(problem_id, str) or problem_id not in PROBLEMS:
        raise KeyError(f"problem_id must be one of the course's problems such as '1.3', got {problem_id!r}")
    return PROBLEMS[problem_id]


def draw(problem_id: str, student: str, *, seed: str = "") -> dict:
    """The numbers ``student`` works ``problem_id`` with: one of each variant's ``choices`` (never the text's
    ``default``), chosen by SHA-256 of ``seed``, ``student`` and ``problem_id``. ``{}`` for a problem that does
    not vary. ``seed`` lets a course (or a term) draw other numbers than another with the same students."""
    problem = _problem(problem_id)
    if not isinstance(student, str) or not _ID.fullmatch(student):
        raise ValueError(f"student must be an id of letters, digits and _.@+- (as nbgrader files it), got {student!r}")
    if not isinstance(seed, str):
        raise ValueError(f"seed must be a str, got {type(seed).__name__}")
    numbers = {}
    for vary in problem.variants:
        digest = hashlib.sha256(f"{seed}|{student}|{problem_id}|{vary.name}".encode()).digest()
        numbers[vary.name] = vary.choices[int.from_bytes(digest[:8], "big") % len(vary.choices)]
    return numbers


def share_alike(problem_id: str) -> float:
    """The chance that two students draw the same numbers for ``problem_id`` (1 for a problem that does not
    vary): the product over its variants of 1 / number of choices."""
    problem = _problem(problem_id)
    return math.prod(1 / len(vary.choices) for vary in problem.variants)


def everything_for(student: str, *, seed: str = "") -> dict:
    """``{problem id: {"values", "labels", "defaults", "units"}}`` for every problem that varies: what a student's
    numbers boxes show. The grader hands this to the sandbox, where the answer key itself is not available."""
    found = {}
    for problem_id, problem in PROBLEMS.items():
        if problem.variants:
            found[problem_id] = {"values": draw(problem_id, student, seed=seed),
                                 "labels": {v.name: v.label for v in problem.variants},
                                 "defaults": problem.defaults(), "units": {v.name: v.unit for v in problem.variants}}
    return found
