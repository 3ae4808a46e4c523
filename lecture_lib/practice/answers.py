"""Graded work, the student's side: ``record("1.3", answer)`` writes the answer down; it never judges it.

In a graded release (``nbgrader-source``, docs/instructor.md) each problem's check cell is ``record("N.M",
answer)`` instead of ``check("N.M", answer)``. It shows what was recorded, and advice on the answer's *form*
(no answer yet, not a number, ``^`` where ``**`` was meant, the same answer as the problem before), but never
whether it is right: a graded notebook is not an oracle a student can probe. The answer goes into the cell's
output as plain data, a JSON object under the MIME type :data:`MIME`:

- ``{"problem": "1.3", "kind": "number", "value": 1.2e11}`` (a finite float);
- ``{"problem": "1.3", "kind": "sympy", "srepr": "Mul(Symbol('B', positive=True), ...)"}``;
- ``{"problem": "1.3", "kind": "text", "value": "b"}`` (a choice, or an expression typed as text);
- ``{"problem": "1.3", "kind": "none"}`` (``...`` or ``None``) or ``"kind": "unreadable"``.

At autograde the grader (:mod:`lecture_lib.practice.grading`), in the instructor's process, reads this data from
the check cell's output and judges it against the answer for the student's own numbers (:mod:`variants`). A
student's code can change what is recorded (that is only an answer: it scores if it is right) but nothing the
grader computes. :func:`your_numbers` shows a student the numbers of a problem that varies.
"""

from __future__ import annotations

import html
import math
import numbers
import os

__all__ = ["MIME", "Numbers", "record", "your_numbers"]

MIME = "application/vnd.lecture-lib.answer+json"
#: At autograde, the student's numbers of every problem that varies, as JSON, set by the grader in the sandbox.
NUMBERS_ENV = "LECTURE_NUMBERS"
MAX_TEXT = 4000

_last_recorded: list = []          # [problem id, payload] of the answer recorded last


class NotJudgedHere(AssertionError):
    """Raised by :func:`record` while nbgrader autogrades, so that a course whose grader is not configured scores
    0, never full marks. The course's grader replaces the cell's output with its own verdict."""

    def _render_traceback_(self) -> list[str]:
        return [str(self)]


def _payload(problem_id: str, answer) -> dict:
    base = {"problem": problem_id}
    if answer is None or answer is Ellipsis:
        return {**base, "kind": "none"}
    if isinstance(answer, bool):
        return {**base, "kind": "unreadable", "why": "True or False is not an answer here"}
    if isinstance(answer, (str, bytes)):
        text = answer.decode(errors="replace") if isinstance(answer, bytes) else answer
        if len(text) > MAX_TEXT:
            return {**base, "kind": "unreadable", "why": f"text longer than {MAX_TEXT:,} characters"}
        return {**base, "kind": "text", "value": text}
    try:
        import sympy as sp
    except ImportError:                       # pragma: no cover (sympy is a dependency)
        sp = None
    if sp is not None and isinstance(answer, sp.Basic):
        from lecture_lib import safe_srepr

        text = safe_srepr.dumps(answer)
        if len(text) > 200_000:
            return {**base, "kind": "unreadable", "why": "the expression is too large to record: simplify it"}
        return {**base, "kind": "sympy", "srepr": text}
    if isinstance(answer, numbers.Number) or hasattr(answer, "__float__"):
        try:
            value = float(answer)
        except (TypeError, ValueError, OverflowError):
            return {**base, "kind": "unreadable", "why": f"a {type(answer).__name__} that is not one number"}
        if not math.isfinite(value):
            return {**base, "kind": "unreadable", "why": "not a finite number"}
        return {**base, "kind": "number", "value": value}
    return {**base, "kind": "unreadable",
            "why": f"a {type(answer).__name__}: give one number, a SymPy expression, or a word from the choices"}


def _advice(problem_id: str, payload: dict, answer) -> str:
    """Advice on the answer's form only: it must read the same whether the answer is right or wrong."""
    from . import checks

    kind = payload["kind"]
    if kind == "none":
        return ("Not answered yet: in the work cell above, replace the ... after 'answer =' with your answer, "
                "run that cell, then run this cell again.")
    if kind == "unreadable":
        return f"This cannot be recorded ({payload['why']}). Nothing was recorded for this problem."
    notes = []
    failed = checks.previous_cell_failed()
    if failed:       # advice only: what is recorded stays what answer holds
        notes.append("The cell run just before this one stopped with an error, so answer may still hold an earlier "
                     "problem's value. Fix the error in the work cell above, run it, then run this cell again.")
    if kind == "number" and isinstance(answer, numbers.Integral) \
            and any(checks._uses_caret(cell) for cell in checks._recent_cells()):
        notes.append(checks.CARET)
    if kind == "text":
        advice = checks._advice_for_quoted_arithmetic(payload["value"])
        if advice:
            notes.append(f"This is text; if you meant a number, {advice}.")
    if not failed and len(_last_recorded) == 2 and _last_recorded[0] != problem_id and \
            {k: v for k, v in _last_recorded[1].items() if k != "problem"} == \
            {k: v for k, v in payload.items() if k != "problem"} and kind != "text":
        notes.append(f"This is the very answer recorded for Problem {_last_recorded[0]}: if the work cell above "
                     "stopped with an error, answer still holds that one. Run the work cell, then this one again.")
    return " ".join(notes)


def said(problem_id: str, payload: dict, answer) -> str:
    """What :func:`record` tells the student: what was recorded and advice on its form, never a verdict."""
    advice = _advice(problem_id, payload, answer)
    if payload["kind"] in ("number", "sympy", "text"):
        shown = {"number": lambda: f"{payload['value']:.6g}", "text": lambda: repr(payload["value"][:80]),
                 "sympy": lambda: str(answer)[:120]}[payload["kind"]]()
        line = f"📝 Problem {problem_id}: recorded {shown}. It is judged after you submit; the feedback says how it did."
    else:
        line = f"✏️ Problem {problem_id}: nothing recorded."
    return f"{line} {advice}".strip()


def record(problem_id, answer) -> None:
    """Record ``answer`` for ``problem_id`` in this cell's output, as plain data for the grader, and say what was
    recorded (its form, never whether it is right). While nbgrader autogrades, raises :class:`NotJudgedHere`
    afterwards (see there)."""
    from IPython.display import display

    problem_id = str(problem_id).strip()
    payload = _payload(problem_id, answer)
    text = said(problem_id, payload, answer)
    if payload["kind"] in ("number", "sympy", "text"):
        _last_recorded[:] = [problem_id, payload]
    display({MIME: payload, "text/plain": text,
             "text/html": f"<div style='border-left:4px solid #1f77b4;background:#f5f9ff;padding:6px 12px'>"
                          f"{html.escape(text)}</div>"}, raw=True)
    if os.environ.get("NBGRADER_EXECUTION", "").strip().lower() == "autograde":
        raise NotJudgedHere(f"Problem {problem_id}: recorded for the course's grader, which judges it outside "
                            "this notebook (nbgrader's own pass/fail is not used).")


class Numbers:
    """A problem's numbers for one student, by name (``mine.gpus``); shows itself as a short table."""

    def __init__(self, problem_id: str, student: str, values: dict, labels: dict, defaults: dict, units: dict):
        self.problem_id, self.student = problem_id, student
        self._values, self._labels, self._defaults, self._units = values, labels, defaults, units
        for name, value in values.items():
            setattr(self, name, value)

    def as_dict(self) -> dict:
        return dict(self._values)

    def _lines(self) -> list[str]:
        return [f"{self._labels[name]} = {value:,g}{(' ' + self._units[name]) if self._units[name] else ''} "
                f"(the text says {self._defaults[name]:,g})" for name, value in self._values.items()]

    def __repr__(self) -> str:
        return (f"Your numbers for Problem {self.problem_id} (student {self.student}): "
                + "; ".join(self._lines()) + ". Work the problem with these.")

    def _repr_html_(self) -> str:
        rows = "".join(f"<li>{html.escape(line)}</li>" for line in self._lines())
        return (f"<div style='border-left:4px solid #9467bd;background:#faf7fd;padding:6px 12px'>"
                f"<b>Your numbers for Problem {html.escape(self.problem_id)}</b> (student "
                f"{html.escape(self.student)}): use these in place of the text's.<ul>{rows}</ul></div>")


def your_numbers(problem_id: str, *, seed: str = "") -> Numbers:
    """The numbers this student works ``problem_id`` with in graded work (:func:`variants.draw`, for the student
    :func:`variants.student_id` finds). The grader draws them again from the id nbgrader filed the submission
    under, so they need no trust in this kernel."""
    import json

    from . import variants

    student = variants.student_id()
    given = json.loads(os.environ.get(NUMBERS_ENV) or "{}").get(problem_id)
    if given:            # at autograde the answer key is not in the sandbox: the grader hands the numbers in
        return Numbers(problem_id, student, given["values"], given["labels"], given["defaults"], given["units"])
    from .registry import PROBLEMS

    problem = PROBLEMS[problem_id] if problem_id in PROBLEMS else None
    if problem is None:
        raise KeyError(f"problem_id must be one of the course's problems such as '1.3', got {problem_id!r}")
    values = variants.draw(problem_id, student, seed=seed)
    return Numbers(problem_id, student, values, {v.name: v.label for v in problem.variants},
                   problem.defaults(), {v.name: v.unit for v in problem.variants})
