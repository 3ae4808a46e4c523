"""The registry of practice problems: what each problem is and how its answer is computed.

:class:`Problem` and :class:`Mistake` describe one problem; each chapter's module in
:mod:`lecture_lib.practice.problems` (``ch01.py`` ...) registers its problems here with :func:`register`
when it is imported, and importing that package imports every chapter, in order.
:mod:`lecture_lib.practice.checks` judges answers against this registry and
:mod:`lecture_lib.practice.progress` lists it in the progress table; both import the problems
package, and nothing here imports them back (checks -> progress -> problems -> registry).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["KINDS", "Mistake", "PROBLEMS", "Probe", "Problem", "Vary", "problem_ids", "register"]

KINDS = ("number", "expression", "choice")


# ================================================================================ registry types

@dataclass(frozen=True)
class Mistake:
    """A wrong value learners often reach, and what to tell them when they do.

    ``value`` is computed from the library like the expected answer (a callable), so the nudge
    follows the presets. For a number problem it returns a number, matched within ``rtol``; for an expression
    problem it returns a SymPy expression, matched when the answer is equivalent to it. Two mistakes that give the
    same value are both named (the checker cannot tell which slip was made).
    """

    value: Callable[[], float]
    message: str
    rtol: float = 0.01


@dataclass(frozen=True)
class Probe:
    """A special case an expression problem's answer must pass, checked on the learner's own expression.

    ``at`` sets some symbols (by name) to values (``{"B": 1}``); ``label`` says it as the problem's text would
    ("B = 1") and ``gives`` says what the right answer is there, in words a learner can check ("k, since one
    token touches exactly k experts"). The checker evaluates both expressions there (any other symbol at random
    positive values) and says whether the learner's passes, so the advice is true of the answer it is given.
    """

    at: dict
    label: str
    gives: str


@dataclass(frozen=True)
class Vary:
    """One number of a problem that graded work draws per student (:mod:`lecture_lib.practice.variants`).

    ``name`` is the keyword the problem's ``expected`` (and each mistake's ``value``) takes; ``default`` is the
    number the problem's text states (what self-study and the worked solution use); ``choices`` are the other
    values a student may get, all within the range where the chapter's reasoning holds unchanged. ``label``
    says what the number is, as the problem's text names it ("E, the GPUs the experts are spread over"), and
    ``unit`` how to read it.
    """

    name: str
    label: str
    default: float
    choices: tuple
    unit: str = ""

    def __post_init__(self):
        if not re.fullmatch(r"[a-z_][a-z0-9_]*", self.name):
            raise ValueError(f"a Vary's name must be a Python keyword argument, got {self.name!r}")
        if len(self.choices) < 3 or self.default in self.choices or len(set(self.choices)) != len(self.choices):
            raise ValueError(f"{self.name}: choices must be at least 3 distinct values other than the default")


@dataclass(frozen=True)
class Problem:
    """One practice problem: its kind, how to compute its answer, and how to judge one.

    ``expected`` is a zero-argument callable (evaluated at check time, never stored in a notebook):
    a float for ``"number"``, a SymPy expression for ``"expression"``, a string for ``"choice"``.
    ``options`` lists every allowed choice (an answer outside them is "invalid", not "wrong");
    ``alternates`` maps a choice to other spellings that mean the same thing; ``nudges`` maps a
    tempting wrong choice to what to tell a learner who picks it (never the answer). ``wrong_hint`` is
    added to the feedback of any wrong answer, so it must be true whatever the answer was; ``unit`` names what a number
    is measured in. ``probes`` (expression problems) are special cases the checker tries on the learner's expression
    (:class:`Probe`), and ``letters`` maps a board letter the chapter writes to the symbol it means in this
    problem (``{"E": "n_experts"}``), so a string in the chapter's notation reads as the problem's symbols.
    """

    title: str
    kind: str
    expected: Callable[[], Any]
    rtol: float = 0.02
    unit: str = ""
    mistakes: tuple[Mistake, ...] = ()
    options: tuple[str, ...] = ()
    alternates: dict[str, tuple[str, ...]] = field(default_factory=dict)
    wrong_hint: str = ""
    nudges: dict[str, str] = field(default_factory=dict)
    variants: tuple[Vary, ...] = ()
    probes: tuple[Probe, ...] = ()
    letters: dict[str, str] = field(default_factory=dict)

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {list(KINDS)}, got {self.kind!r}")
        if not callable(self.expected):
            raise ValueError("expected must be a zero-argument callable (computed, not typed in)")
        if not (isinstance(self.rtol, (int, float)) and 0 < self.rtol < 1):
            raise ValueError(f"rtol must be a number in (0, 1), got {self.rtol!r}")
        if self.kind == "choice" and not self.options:
            raise ValueError("a choice problem needs its options")
        stray = sorted(set(self.nudges) - set(self.options))
        if stray:
            raise ValueError(f"nudges are keyed by options; {stray} are not among {list(self.options)}")

    def __repr__(self) -> str:   # keeps the expected answer out of casual printing
        return f"Problem({self.title!r}, kind={self.kind!r})"

    def defaults(self) -> dict:
        """The numbers the problem's text states, by keyword (empty when nothing varies)."""
        return {vary.name: vary.default for vary in self.variants}

    def bound(self, numbers: dict | None = None) -> "Problem":
        """This problem for one set of numbers (a student's variant): ``expected`` and each mistake's ``value``
        take no arguments again. ``numbers`` must name exactly the problem's variants; ``None`` or ``{}`` on a
        problem without variants returns the problem itself."""
        if not self.variants:
            if numbers:
                raise ValueError(f"{self.title!r} has no variants, got numbers {sorted(numbers)}")
            return self
        numbers = dict(self.defaults() if numbers is None else numbers)
        if set(numbers) != {vary.name for vary in self.variants}:
            raise ValueError(f"numbers must name {sorted(self.defaults())}, got {sorted(numbers)}")
        expected, mistakes = self.expected, self.mistakes
        return dataclasses.replace(
            self, variants=(), expected=lambda: expected(**numbers),
            mistakes=tuple(dataclasses.replace(m, value=lambda m=m: m.value(**numbers)) for m in mistakes))


PROBLEMS: dict[str, Problem] = {}
"""Every problem of every chapter, by id ("1.3" is Chapter 1, problem 3)."""


def register(problem_id: str, problem: Problem) -> None:
    """Add ``problem`` to :data:`PROBLEMS` under ``problem_id`` ("N.M": chapter N, problem M), once."""
    if not re.fullmatch(r"\d+\.\d+", problem_id):
        raise ValueError(f"problem ids look like '1.3', got {problem_id!r}")
    if problem_id in PROBLEMS:
        raise ValueError(f"problem {problem_id} is registered twice")
    PROBLEMS[problem_id] = problem


BANK_START = 101
"""Problem numbers from here on (1.101, 4.103, ...) are the quiz and exam bank (``problems/quizNN.py``,
``quizzes/``), not the practice set."""


def problem_ids(chapter: int | None = None, *, bank: bool = False) -> list[str]:
    """Registered ids in numeric order, optionally only one chapter's (a number 0-7, or None). The quiz and exam
    bank (numbers from :data:`BANK_START`) is left out unless ``bank`` is true (then only the bank's are listed)."""
    from lecture_lib import validate

    chapter = validate.chapter("chapter", chapter)
    bank = validate.boolean("bank", bank)
    ids = sorted(PROBLEMS, key=lambda pid: tuple(int(part) for part in pid.split(".")))
    return [pid for pid in ids if (chapter is None or pid.split(".")[0] == str(chapter))
            and (int(pid.split(".")[1]) >= BANK_START) == bool(bank)]
