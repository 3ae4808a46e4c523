"""What autograding may credit: an answer the student worked out, not one read off the answer key.

The checker computes every expected answer from the library when it judges (``PROBLEMS[id].expected``,
the problem modules' private helpers). Those are in the student's kernel too, so
``check("1.3", checks._expected(checks.PROBLEMS["1.3"]))`` would pass every test cell. While nbgrader
executes a notebook (``NBGRADER_EXECUTION`` set: ``autograde``, or ``validate`` so a student sees it
first) this module watches for that route and :func:`verdict` makes such a check score 0, saying why:

- **calls**: every problem's ``expected`` callable and every private helper of
  ``lecture_lib.practice.problems.chNN`` is wrapped; a call made outside ``check()`` is remembered,
  for the problem it belongs to and for the next check;
- **text**: the code cells run since the previous check (the work cell of this problem), comments left
  out, are read for the checker's internals by name: ``_expected``, ``PROBLEMS``, ``.expected``,
  ``practice.registry``, ``checks._…``, ``chNN._…``.

What it cannot catch, and docs/instructor.md says so: a student may compute an answer with the
library's public functions and presets (that is allowed: it is how the worked solutions do it), and
someone determined can reach the key by routes no pattern names. Autograding proves that each
answer *is* right, not how it was found; the answer cells, which the feedback shows, say that.
Outside nbgrader nothing here is active and nothing is wrapped.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import re

#: The values of ``NBGRADER_EXECUTION`` under which the key may not be used.
WATCHED = ("autograde", "validate")

#: Names that only the answer key's route uses, searched in the code cells a student ran.
INTERNAL_PATTERNS = (
    (re.compile(r"\b_expected\b"), "checks._expected"),
    (re.compile(r"\bPROBLEMS\b"), "the problem registry (PROBLEMS)"),
    (re.compile(r"practice\s*\.\s*registry\b|\bregistry\s*\.\s*PROBLEMS\b|from\s+\.?registry\s+import"),
     "the problem registry"),
    (re.compile(r"\.\s*expected\b"), "a problem's expected answer (.expected)"),
    (re.compile(r"\bchecks\s*\.\s*_[A-Za-z]"), "the checker's private functions"),
    (re.compile(r"\bch\d\d\s*\.\s*_[A-Za-z]"), "a problem module's private helpers"),
    (re.compile(r"practice\.(?:checks|problems(?:\.ch\d\d)?)\s+import\s+[^#\n]*\b_[A-Za-z]"),
     "the checker's private helpers"),
)

MESSAGE = ("No credit when autograded: this answer was taken from the checker's own answer key ({how}), "
           "not worked out. Using the library's presets and formulas is fine; reading the checker's "
           "expected value is not. Work it out in the work cell and submit again.")

_state = {"depth": 0, "since_check": set(), "ever": set(), "cells_seen": None, "installed": False}


def watching() -> bool:
    """True while nbgrader executes the notebook (autograde or validate)."""
    return os.environ.get("NBGRADER_EXECUTION", "").strip().lower() in WATCHED


@contextlib.contextmanager
def judging():
    """Mark the checker's own calls of the key (inside ``check()``): they are not the student's."""
    _state["depth"] += 1
    try:
        yield
    finally:
        _state["depth"] -= 1


def _watched(function, problem_id: str | None, label: str):
    @functools.wraps(function)
    def call(*args, **kwargs):
        if _state["depth"] == 0:
            _state["since_check"].add(label)
            if problem_id is not None:
                _state["ever"].add(problem_id)
        return function(*args, **kwargs)

    call.__lecture_watched__ = True
    return call


def install(problems: dict, modules=()) -> bool:
    """Wrap each problem's ``expected`` and each private function of ``modules`` (the problem modules)
    so a call from outside ``check()`` is noticed; only while :func:`watching`. True if installed."""
    if not isinstance(problems, dict):
        raise TypeError(f"problems must be a dict of problem id -> Problem, got {type(problems).__name__}")
    if isinstance(modules, (str, bytes)) or not hasattr(modules, "__iter__"):
        raise TypeError(f"modules must be a list of modules, got {type(modules).__name__}")
    if not watching() or _state["installed"]:
        return _state["installed"]
    for problem_id, problem in problems.items():
        if not getattr(problem.expected, "__lecture_watched__", False):
            # Problem is a frozen dataclass: the wrapper replaces the field in place
            object.__setattr__(problem, "expected", _watched(problem.expected, problem_id,
                                                             f"PROBLEMS[{problem_id!r}].expected"))
    for module in modules:
        for name, value in list(vars(module).items()):
            if (name.startswith("_") and inspect.isfunction(value) and value.__module__ == module.__name__
                    and not getattr(value, "__lecture_watched__", False)):
                setattr(module, name, _watched(value, None, f"{module.__name__.rsplit('.', 1)[-1]}.{name}"))
    _state["installed"] = True
    return True


def _cells_since_last_check() -> list[str]:
    """The code cells IPython ran since the previous call (all of them the first time); [] outside IPython."""
    try:
        from IPython import get_ipython
    except ImportError:
        return []
    shell = get_ipython()
    history = shell.user_ns.get("In") if shell is not None else None
    if not isinstance(history, list):
        return []
    start = _state["cells_seen"] or 0
    _state["cells_seen"] = len(history)
    return [cell for cell in history[start:] if isinstance(cell, str)]


_COMMENT = re.compile(r"#[^\n]*")


def _named_in(cells: list[str]) -> str | None:
    """What the first internal name found in ``cells`` is, comments left out (a student may write about
    "the expected value" in a comment; only code counts)."""
    for cell in cells:
        code = _COMMENT.sub("", cell)
        for pattern, what in INTERNAL_PATTERNS:
            if pattern.search(code):
                return what
    return None


def verdict(problem_id: str) -> str | None:
    """The reason this check must score 0 (the answer key was used for it), or None. Called once per
    ``check()`` while :func:`watching`; it starts a fresh window for the next problem."""
    if not isinstance(problem_id, str):
        raise TypeError(f"problem_id must be a problem's id such as '1.2', got {type(problem_id).__name__}")
    if not watching():
        return None
    called = sorted(_state["since_check"])
    _state["since_check"] = set()
    named = _named_in(_cells_since_last_check())
    if problem_id in _state["ever"]:
        return MESSAGE.format(how=f"PROBLEMS[{problem_id!r}].expected was called outside check()")
    if called:
        return MESSAGE.format(how=f"{called[0]} was called outside check()")
    if named:
        return MESSAGE.format(how=f"the cells run for it use {named}")
    return None


def reset() -> None:
    """Forget what was seen (for tests); the wrappers stay."""
    _state.update(depth=0, since_check=set(), ever=set(), cells_seen=None)
