"""The practice-problem checker: ``check("1.3", answer)`` says kindly whether an answer is right.

Every problem of ``solutions/NN_*.ipynb`` (and so of the generated ``exercises/``) ends with a check
cell such as ``check("1.3", answer)``. The expected answer is **not** in the notebook: it lives in
:data:`PROBLEMS`, where it is computed from the library (a chip preset, a model preset, a Formula)
when the check runs. A learner who reads this file can of course find it; the point is only that
working the exercise notebook never shows it.

Three kinds of answer:

- ``"number"``: a float within a relative tolerance chosen per problem.
- ``"expression"``: a SymPy expression, or text such as
  ``"FLOPs*N_total*bytes_param/(2*N_active*mem_bw)"`` read by :func:`lecture_lib.symbols.parse`
  (numbers, the course's symbols, ``+ - * / ** ^``, brackets and sqrt/exp/log/Max/Min only, in the
  notations people write: ``2B``, ``2(B+1)``, ``×``, ``·``, ``B²``, ``10⁻³``, ``√B``, ``−``; text
  is parsed, never run), accepted when it is *equivalent* to the expected one: the two agree at six
  random positive values of every symbol (a disagreement there is decisive), or, where they cannot
  be evaluated, ``simplify`` of the difference is zero.
- ``"choice"``: a word or short phrase, compared ignoring case, spaces, hyphens and punctuation,
  with alternate spellings allowed.

Feedback is one of four statuses: ``correct``; ``unanswered`` (the answer is still ``...`` or
``None``; or the cell run just before the check stopped with an error; or it is the very answer just
judged for another problem, and wrong here: the work cell may not have run, so ``answer`` still holds
the previous problem's value); ``wrong``, with a nudge
that never contains the answer (off by ~1000×: check units; off by 2: FLOPs vs multiplies; off by
8: bits vs bytes or per GPU vs per node; upside down: a step time where a rate is wanted; wrong sign; known
mistakes of that problem, which come before any generic guess for the same factor, and all of them where two
give the same value; an expression problem's special cases (:class:`~lecture_lib.practice.registry.Probe`),
evaluated on the learner's own expression; otherwise only "too high" or "too low"); ``invalid`` (a list, a
string where a number belongs, "2,400" with its separator, NaN, text that does not parse, with its cause where
a scan can tell: an unbalanced bracket, a stray character...). Nothing the learner passes produces a traceback.

Time limit: the judgement of anything symbolic (an expression problem, or a SymPy object as the
answer) runs in a forked copy of the kernel that is killed after ``$LECTURE_CHECK_SECONDS``
(default 10 s); an answer not decided by then is ``invalid`` with "Could not check this form:
expand or simplify it". Where ``os.fork`` is missing (Windows, JupyterLite) a SIGALRM limit is
used in the main thread, and nothing bounds a check elsewhere. A check is recorded in
:mod:`lecture_lib.practice.progress` (attempts and first-correct time, nothing else).

Strict mode: with the environment variable ``LECTURE_STRICT=1`` (the tests run the solutions that
way), or while nbgrader validates or autogrades (``NBGRADER_EXECUTION`` set), anything but
``correct`` raises ``AssertionError``.
"""

from __future__ import annotations

import html
import math
import numbers
import os
import random
import re

import sympy as sp

from lecture_lib import symbols as _symbols
from lecture_lib import units as _units

from . import problems  # noqa: F401 (importing it registers every chapter's problems)
from . import progress as _progress
from .registry import KINDS, PROBLEMS, Mistake, Problem, register, problem_ids  # noqa: F401 (re-exported)

__all__ = ["CheckFailed", "CheckResult", "Mistake", "PROBLEMS", "Problem", "UnknownProblemError", "check",
           "problem_ids", "strict_mode", "verdict"]

STATUSES = ("correct", "wrong", "unanswered", "invalid")


# ================================================================================ the result

class UnknownProblemError(KeyError, AssertionError):
    """Raised in strict mode for an id that is not in :data:`PROBLEMS` (a KeyError and an
    AssertionError, so either ``except`` catches it)."""

    def __str__(self) -> str:   # KeyError would print the repr of the message
        return str(self.args[0]) if self.args else ""


_ICONS = {"correct": "✅", "wrong": "❌", "unanswered": "✏️", "invalid": "⚠️"}
_COLOURS = {"correct": ("#2ca02c", "#f3faf3"), "wrong": ("#d62728", "#fff5f5"),
            "unanswered": ("#7f7f7f", "#f7f7f7"), "invalid": ("#ff7f0e", "#fff8f0")}


class CheckResult:
    """What :func:`check` decided: ``.status`` (one of ``correct``, ``wrong``, ``unanswered``,
    ``invalid``), ``.message`` (the feedback shown) and ``.problem_id``. It never holds the
    expected answer."""

    def __init__(self, problem_id: str, status: str, message: str):
        if status not in STATUSES:
            raise ValueError(f"status must be one of {list(STATUSES)}, got {status!r}")
        self.problem_id = problem_id
        self.status = status
        self.message = message
        self._shown_in = None   # execution count of the cell that already displayed it

    @property
    def correct(self) -> bool:
        return self.status == "correct"

    def text(self) -> str:
        return f"{_ICONS[self.status]} Problem {self.problem_id}: {self.message}"

    def __repr__(self) -> str:
        return f"CheckResult(problem_id={self.problem_id!r}, status={self.status!r})"

    def _repr_html_(self) -> str:
        border, background = _COLOURS[self.status]
        return (f"<div style='border-left:4px solid {border};background:{background};padding:6px 12px'>"
                f"{_ICONS[self.status]} <b>Problem {html.escape(self.problem_id)}</b>: "
                f"{html.escape(self.message)}</div>")

    def _mimebundle(self) -> dict:
        return {"text/plain": self.text(), "text/html": self._repr_html_()}

    def _ipython_display_(self):
        """Show the feedback, unless :func:`check` already showed it in this same cell (so the
        result returned by the last line of a check cell does not appear twice)."""
        from IPython.display import display

        if self._shown_in is not None and self._shown_in == _execution_count():
            return
        display(self._mimebundle(), raw=True)


def _execution_count():
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    return None if shell is None else shell.execution_count


def _show(result: CheckResult) -> None:
    """HTML (with a plain-text twin) under IPython; a printed line anywhere else."""
    try:
        from IPython import get_ipython
        shell = get_ipython()
    except ImportError:
        shell = None
    if shell is None:
        print(result.text())
        return
    from IPython.display import display

    display(result._mimebundle(), raw=True)
    result._shown_in = shell.execution_count


def strict_mode() -> bool:
    """True when a non-correct answer must raise: ``LECTURE_STRICT=1``, or nbgrader validating or
    autograding the notebook (it sets ``NBGRADER_EXECUTION``)."""
    flag = os.environ.get("LECTURE_STRICT", "").strip().lower()
    return flag in {"1", "true", "yes", "on"} or bool(os.environ.get("NBGRADER_EXECUTION"))


# ================================================================================ check()

class _Verdict(Exception):
    """Internal: carries a (status, message) out of the judging code."""

    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def check(problem_id, answer) -> CheckResult:
    """Judge ``answer`` for ``problem_id``, show kind feedback, and return a :class:`CheckResult`.

    Never raises for a bad answer (whatever its type), except in strict mode
    (:func:`strict_mode`), where anything but a correct answer raises ``AssertionError``. An answer
    that repeats the one just judged for another problem, and is wrong for this one, is
    ``unanswered`` (not recorded as an attempt): its work cell may not have run. Choice problems
    are not compared that way.
    """
    key = _normalise_id(problem_id)
    if key not in PROBLEMS:
        known = ", ".join(problem_ids()) or "none"
        message = (f"There is no problem {problem_id!r}. Check the first argument of check(); "
                   f"known problems: {known}.")
        if isinstance(problem_id, numbers.Real) and not isinstance(problem_id, (bool, numbers.Integral)):
            message = (f"Pass the problem id as a string, e.g. check(\"1.10\", answer): as a number, "
                       f"{problem_id!r} cannot tell 1.1 from 1.10. Known problems: {known}.")
        result = CheckResult(str(problem_id), "invalid", message)
        _show(result)
        if strict_mode():
            raise UnknownProblemError(message)
        return result
    problem = PROBLEMS[key].bound()   # the numbers the problem's text states
    if previous_cell_failed():        # answer may be left over from an earlier problem: judge nothing, choices included
        status, message = "unanswered", FAILED_CELL
    else:
        status, message = _timed_outcome(problem, answer)
        status, message = _with_caret_advice(answer, status, message)
        previous = _stale_for(key, problem, answer, status)
        if previous is None:
            _last_judged[:] = [key, answer]
        else:
            status, message = "unanswered", STALE.format(previous=previous)
    result = CheckResult(key, status, message)
    _progress.record(key, status)   # attempts and first-correct time only (lecture_lib.practice.progress)
    _show(result)
    if strict_mode() and status != "correct":
        raise CheckFailed(key, status, message)
    return result


# ---------------------------------------------------------------- autograding: no credit for the answer key

class CheckFailed(AssertionError):
    """A check that failed in strict mode (nbgrader, ``LECTURE_STRICT``). IPython shows it as its one
    line of text (``_render_traceback_``), so a feedback page says what was wrong without a traceback
    through the checker's internals and the instructor's paths."""

    def __init__(self, problem_id: str, status: str, message: str):
        super().__init__(f"Problem {problem_id}: {status}: {message}")
        self.problem_id, self.status = problem_id, status

    def _render_traceback_(self) -> list[str]:
        return [f"✗ Problem {self.problem_id} not passed ({self.status}): the checker's message above says why."]


def verdict(problem_id: str, answer, numbers: dict | None = None) -> tuple[str, str]:
    """``(status, message)`` for ``answer`` to ``problem_id`` worked with ``numbers`` (a student's variant, see
    :mod:`lecture_lib.practice.variants`; None: the numbers the text states). Nothing is shown or recorded, and
    the message never holds the expected answer. This is the grader's judge (:mod:`lecture_lib.practice.grading`),
    run in the instructor's process; raises ``KeyError`` for an unknown problem."""
    key = _normalise_id(problem_id)
    if key not in PROBLEMS:
        raise KeyError(f"problem_id must be one of the course's problems, got {problem_id!r}")
    return _timed_outcome(PROBLEMS[key].bound(numbers), answer)


def _timed_outcome(problem: Problem, answer) -> tuple[str, str]:
    if _needs_time_limit(problem, answer):
        return _outcome_within(problem, answer, _time_budget())
    return _outcome(problem, answer)


def _outcome(problem: Problem, answer) -> tuple[str, str]:
    """(status, message) for ``answer``; never raises for a learner's odd object."""
    try:
        return _judge(problem, answer)
    except _Verdict as verdict:
        return verdict.status, verdict.message
    except Exception as error:   # a learner's odd object must never produce a traceback
        return "invalid", (f"The checker could not read this answer ({type(error).__name__}). "
                           f"{_what_to_pass(problem)}")


# ---------------------------------------------------------------- an answer left over from the problem before
# When a work cell raises before it assigns ``answer`` (a typo, a KeyError), the variable still holds
# the previous problem's answer, and the check cell below would judge that ("too low"). So check()
# remembers the answer it last judged, and when the very same answer comes back for another problem
# and is wrong there, it says the work cell may not have run instead of nudging. A correct answer is
# never refused (some problems share an answer), an invalid one keeps its own message (it says what
# form is wanted), and choices are left alone (a few options, so the same letter twice in a row is
# common and says nothing).

STALE = ("This looks like Problem {previous}'s answer: it is the very answer just checked there. The work "
         "cell above may not have run (did it stop with an error?), so answer may still hold Problem "
         "{previous}'s value. Run the work cell, fixing any error it shows, then this check again. If you "
         "did mean this answer, it is not the one for this problem.")

_last_judged: list = []   # [problem id, answer] of the last answer check() judged

# The surer sign: IPython knows whether the cell run just before this one raised (a SyntaxError from
# "answer = 2·8·7168", a TypeError from "1.468*10^-4"). Then nothing is judged, whatever the answer's kind.
FAILED_CELL = ("Not judged: the cell run just before this check stopped with an error, so answer may still hold "
               "an earlier problem's value. Fix the error in the work cell above (its message says where), run "
               "it, then run this check again.")

_CHECK_CALL = re.compile(r"\b(?:check|record)\s*\(")


def previous_cell_failed() -> bool:
    """True when an IPython kernel reports that the cell run just before the one running now raised
    (``shell.last_execution_succeeded``), unless that cell was itself a check or a record (a strict check raises
    by design, and running it twice is not a failed work cell). False outside IPython. Never raises."""
    try:
        from IPython import get_ipython

        shell = get_ipython()
        if shell is None or getattr(shell, "last_execution_succeeded", True) is not False:
            return False
        result = getattr(shell, "last_execution_result", None)
        source = getattr(getattr(result, "info", None), "raw_cell", None) or ""
        return not _CHECK_CALL.search(source)
    except Exception:
        return False


def _stale_for(key: str, problem: Problem, answer, status: str) -> str | None:
    """The id of the problem whose answer ``answer`` repeats, when it was judged just before for a
    different problem and is wrong for this one (``status``), else None. Never raises."""
    if status != "wrong" or problem.kind == "choice" or len(_last_judged) != 2:
        return None
    previous, previous_answer = _last_judged
    if previous == key or not _same_answer(answer, previous_answer):
        return None
    return previous


def _same_answer(a, b) -> bool:
    """Whether two answers are the same one: the same object, equal numbers, equal text (spaces at
    the ends ignored) or structurally equal SymPy objects. Anything else is compared by identity
    only, and a comparison that fails counts as different."""
    if a is None or a is Ellipsis:
        return False
    if a is b:
        return True
    try:
        if isinstance(a, (str, bytes)) and isinstance(b, (str, bytes)):
            return _as_text(a).strip() == _as_text(b).strip()
        if _plain_value(a) and _plain_value(b):
            return bool(a == b)
    except Exception:
        pass
    return False


def _as_text(value: str | bytes) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else value


def _plain_value(value) -> bool:
    """A number (Python, NumPy, Fraction, Decimal) or a SymPy object: compared by value."""
    return isinstance(value, (numbers.Number, sp.Basic)) and not isinstance(value, bool)


# ---------------------------------------------------------------- one time limit around the whole check
# SymPy has no way to stop a simplify, an evalf or a huge power half-way, and a signal only lands
# between Python bytecodes, so the judgement of anything symbolic runs in a forked copy of this
# process, which is killed when the budget is spent. The learner's answer and the problem reach the
# copy through fork itself (nothing is pickled); only the verdict (two strings) comes back through a
# pipe. Plain numbers and choices are judged here, without a fork (they cannot hang).

TIME_ENV_VAR = "LECTURE_CHECK_SECONDS"
DEFAULT_SECONDS = 10.0
TIMED_OUT = ("Could not check this form: expand or simplify it (for example with sp.expand(...) or "
             "sp.simplify(...)), then check again. The checker gives each answer {seconds:g} s.")


def _time_budget() -> float:
    """Seconds one check may take: ``$LECTURE_CHECK_SECONDS`` (0.1 to 600) or :data:`DEFAULT_SECONDS`."""
    try:
        seconds = float(os.environ.get(TIME_ENV_VAR, "") or DEFAULT_SECONDS)
    except ValueError:
        return DEFAULT_SECONDS
    return min(max(seconds, 0.1), 600.0) if math.isfinite(seconds) else DEFAULT_SECONDS


def _needs_time_limit(problem: Problem, answer) -> bool:
    if answer is None or answer is Ellipsis:
        return False
    return problem.kind == "expression" or isinstance(answer, sp.Basic)


def _outcome_within(problem: Problem, answer, seconds: float, *, work=None,
                    memory_bytes: int | None = None) -> tuple[str, str]:
    """:func:`_outcome` in a forked child killed after ``seconds``; where there is no ``os.fork``
    (Windows, JupyterLite), in this process under a SIGALRM limit when that exists (main thread). ``work``, a
    zero-argument callable returning ``(status, message)``, replaces ``_outcome(problem, answer)`` (the grader reads a
    recorded expression back inside the child, since building it may itself never end), and ``memory_bytes`` bounds
    the child's address space."""
    if work is None:
        def work():
            return _outcome(problem, answer)
    if not hasattr(os, "fork"):
        return _outcome_with_alarm(problem, answer, seconds)
    import json
    import select
    import signal
    import time
    import warnings

    read_end, write_end = os.pipe()
    with warnings.catch_warnings():   # Python 3.12+ warns about fork in a threaded kernel; the child runs no threads
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:   # the child: judge, send the verdict, exit without running any cleanup of the parent's
        try:
            os.close(read_end)
            import gc

            gc.disable()   # no finalizer of a parent object (sockets, files) runs here
            warnings.simplefilter("ignore")
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            if memory_bytes:
                import resource

                resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
            payload = json.dumps(work()).encode()
            while payload:
                payload = payload[os.write(write_end, payload):]
        finally:
            os._exit(0)
    os.close(write_end)
    chunks, deadline, finished = [], time.monotonic() + seconds, False
    poller = select.poll()   # not select.select: a busy kernel may hold descriptors above FD_SETSIZE
    poller.register(read_end, select.POLLIN | select.POLLHUP)
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not poller.poll(max(1, int(remaining * 1000))):
                break
            chunk = os.read(read_end, 65536)
            if not chunk:
                finished = True
                break
            chunks.append(chunk)
    finally:
        os.close(read_end)
        if not finished:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        os.waitpid(pid, 0)
    if not finished:
        return "invalid", TIMED_OUT.format(seconds=seconds)
    try:
        status, message = json.loads(b"".join(chunks).decode())
        if status in STATUSES and isinstance(message, str):
            return status, message
    except ValueError:
        pass
    return "invalid", f"The checker could not read this answer (it stopped while judging). {_what_to_pass(problem)}"


def _outcome_with_alarm(problem: Problem, answer, seconds: float) -> tuple[str, str]:
    import signal
    import threading

    if not hasattr(signal, "SIGALRM") or threading.current_thread() is not threading.main_thread():
        return _outcome(problem, answer)

    class _TimeUp(BaseException):
        pass

    def alarm(signum, frame):
        raise _TimeUp()

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return _outcome(problem, answer)
    except _TimeUp:
        return "invalid", TIMED_OUT.format(seconds=seconds)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _normalise_id(problem_id) -> str:
    """The id as registered ("1.3"). Only text is looked up: a float such as 1.10 has already lost
    its trailing zero, so it is never matched (check() says to pass a string)."""
    if isinstance(problem_id, (bool, numbers.Number)):
        return f"<{type(problem_id).__name__} {problem_id!r}>"
    return str(problem_id).strip().removeprefix("Problem ").strip()


def _a(noun: str) -> str:
    return f"an {noun}" if noun[:1].lower() in "aeiou" else f"a {noun}"


def _what_to_pass(problem: Problem) -> str:
    if problem.kind == "number":
        unit = f" in {problem.unit}" if problem.unit else ""
        return f"This problem wants one number{unit}, e.g. answer = 0.25."
    if problem.kind == "expression":
        return ("This problem wants a SymPy expression built from the course's symbols "
                "(from lecture_lib.symbols import ...), or a string such as \"N_total / N_active\".")
    return f"This problem wants one of: {', '.join(repr(o) for o in problem.options)}."


def _expected(problem: Problem):
    """The problem's expected answer; a failure here is the library's fault, and is said so."""
    try:
        return problem.expected()
    except Exception as error:
        raise _Verdict("invalid", f"The checker could not work out this problem's own answer "
                                  f"({type(error).__name__}: {error}). That is a bug in lecture_lib, not "
                                  "in your work; please report it.") from None


def _judge(problem: Problem, answer) -> tuple[str, str]:
    if answer is None or answer is Ellipsis:
        return "unanswered", ("Not answered yet: in the work cell above, replace the ... after "
                              "'answer =' with your answer, run that cell, then run this check again.")
    judge = {"number": _judge_number, "expression": _judge_expression, "choice": _judge_choice}
    return judge[problem.kind](problem, answer)


# ================================================================================ numbers

_SCALES = [(1e3, "1,000"), (1e6, "a million"), (1e9, "a billion"), (1e12, "10¹²")]


def _advice_for_quoted_arithmetic(text: str) -> str | None:
    """For quoted arithmetic such as "1.5552*10^15" (a learner's walk): how to write it as a Python number, with
    ``**`` for a power, since an unquoted ``10^15`` is Python's bitwise XOR. None when the text is not arithmetic."""
    from lecture_lib import symbols

    try:
        value = symbols.parse(text)
    except Exception:           # words, units, names: the caller's advice stands
        return None
    if getattr(value, "free_symbols", None) or not getattr(value, "is_number", False):
        return None
    python = python_form(text, value)
    if "^" in text:
        return f"write it without quotes as {python} (in Python ^ is not a power; ** is)"
    return f"remove the quotes and write it in Python: {python}"


_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")


def python_form(text: str, value=None) -> str:
    """Arithmetic as a learner writes it ("2·8·7168", "1.468×10^-4", "10⁻³") rewritten as Python that runs and gives
    the same number (2*8*7168, 1.468*10**-4, 10**-3): × and · become *, ^ and superscripts become **, − becomes -.
    When the rewrite would not run as Python (an implicit product "2(3+4)", a root "√2"), the number itself,
    written as Python writes a float. ``value``: the number ``text`` means, if already parsed."""
    from lecture_lib import symbols, validate

    if not isinstance(text, str):
        raise ValueError(f"text must be arithmetic as a str, got {validate._describe(text)}")
    if value is None:
        value = symbols.parse(text)
    elif isinstance(value, (str, bytes, bool)) or not isinstance(value, (numbers.Number, sp.Basic)):
        raise ValueError(f"value must be the number text means (or None), got {validate._describe(value)}")
    python = text.strip()
    for sign in ("×", "·", "⋅", "∙", "✕"):
        python = python.replace(sign, "*")
    python = python.replace("−", "-").replace("–", "-")
    python = re.sub(r"[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+", lambda m: "**" + m.group(0).translate(_SUPERSCRIPTS), python)
    python = re.sub(r"\s*\^\s*", "**", python)
    python = re.sub(r"\s*\*\s*\*\s*", "**", python)
    python = re.sub(r"\s*([*/+])\s*(?!\*)", lambda m: m.group(1), python)
    if _runs_as(python, value):
        return python
    number = float(value)
    return repr(int(number)) if number.is_integer() and abs(number) < 1e16 else repr(number)


def _runs_as(python: str, value) -> bool:
    """True when ``python`` is arithmetic on number literals only that evaluates to ``value`` (to 1e-9)."""
    import ast

    try:
        tree = ast.parse(python, mode="eval")
    except SyntaxError:
        return False
    allowed = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.operator, ast.unaryop)
    if not all(isinstance(node, allowed) for node in ast.walk(tree)):
        return False
    if any(isinstance(node, ast.Constant) and not isinstance(node.value, (int, float)) for node in ast.walk(tree)):
        return False
    try:
        return math.isclose(float(_arithmetic(tree.body)), float(value), rel_tol=1e-9, abs_tol=0.0)
    except Exception:
        return False


def _arithmetic(node):
    """The value of an AST of number literals and + - * / ** (walked here, never run as code)."""
    import ast
    import operator

    binary = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
              ast.Pow: operator.pow}
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = _arithmetic(node.operand)
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp) and type(node.op) in binary:
        left, right = _arithmetic(node.left), _arithmetic(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 1000:
            raise ValueError("exponent too large")
        return binary[type(node.op)](left, right)
    raise ValueError("not arithmetic on numbers")


# An unquoted ``2^3 - 2`` is Python's bitwise XOR: the answer is 3, and the usual nudge ("off by a factor of about
# 2") sends a learner looking for a slip they did not make (a learner's walk). The check reads the cells it can see.
CARET = ("Your cell uses ^, which Python reads as bitwise XOR, not a power (2^3 is 1 there; 2**3 is 8): "
         "write ** for a power and run it again.")


def _with_caret_advice(answer, status: str, message: str) -> tuple[str, str]:
    """A whole-number answer from a cell that used ``^`` as an operator: a wrong one is told why instead of the usual
    nudge; a right one keeps its verdict, with the warning after it (XOR and the power agreed by chance)."""
    if status not in ("correct", "wrong") or not isinstance(answer, numbers.Integral) or isinstance(answer, bool):
        return status, message
    if not any(_uses_caret(cell) for cell in _recent_cells()):
        return status, message
    return (status, f"{message} Note: {CARET}") if status == "correct" else (status, f"Not quite. {CARET}")


def _recent_cells(count: int = 2) -> list[str]:
    """The source of the cell running now and the one run before it, when an IPython kernel runs them."""
    try:
        from IPython import get_ipython
    except ImportError:
        return []
    shell = get_ipython()
    inputs = shell.user_ns.get("In") if shell is not None else None
    return [text for text in inputs[-count:] if isinstance(text, str)] if isinstance(inputs, list) else []


def _uses_caret(source: str) -> bool:
    """True when ``^`` (or ``^=``) is an operator in ``source``, outside strings and comments."""
    import io
    import tokenize

    try:
        return any(token.type == tokenize.OP and token.string in ("^", "^=")
                   for token in tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return False


def _as_number(problem: Problem, answer) -> float:
    """The learner's answer as a float, or a _Verdict("invalid") saying what went wrong."""
    unit = f" in {problem.unit}" if problem.unit else ""
    if isinstance(answer, bool) or type(answer).__name__ == "bool_":
        raise _Verdict("invalid", f"{answer} is a yes/no value; this problem wants a number{unit}.")
    if isinstance(answer, (str, bytes)):
        text = answer.decode(errors="replace") if isinstance(answer, bytes) else answer
        try:
            plain = float(text)
            advice = (f"remove the quotes and write it in Python: {text.strip()}" if _runs_as(text.strip(), plain)
                      else "remove the quotes")
        except ValueError:
            advice = (_advice_for_grouped_digits(text) or _advice_for_quoted_arithmetic(text) or
                      f"the checker does not read units or words, so give a plain number{unit}")
        raise _Verdict("invalid", f"That is text ({text[:40]!r}); {advice}. A number problem takes a Python "
                                  "number, never text (only an expression problem reads a string).")
    if isinstance(answer, tuple) and _grouped_tuple(answer) is not None:
        digits = _grouped_tuple(answer)
        raise _Verdict("invalid", f"That is a tuple, {answer!r}: Python reads the comma in {digits:,} as separating "
                                  f"values, not as a thousands separator. If you meant the number {digits:,}, write "
                                  f"it in Python: {digits} (or {digits:_}).")
    if isinstance(answer, (list, tuple, set, dict, range)):
        raise _Verdict("invalid", f"That is {_a(type(answer).__name__)}; pass a single number{unit}, "
                                  "not a collection.")
    if isinstance(answer, sp.Basic):
        if getattr(answer, "free_symbols", None):
            names = ", ".join(sorted(s.name for s in answer.free_symbols))
            raise _Verdict("invalid", f"Your answer still contains symbols ({names}); substitute "
                                      f"numbers so it becomes a single number{unit}.")
        if isinstance(answer, sp.logic.boolalg.Boolean):
            raise _Verdict("invalid", f"That is an equation or a condition; pass the number{unit} itself.")
        if answer.has(sp.nan):
            value = complex(math.nan)
        elif answer.has(sp.zoo, sp.oo, -sp.oo):
            value = complex(math.inf)
        else:
            value = complex(sp.N(answer))
    elif hasattr(answer, "shape") and hasattr(answer, "dtype"):   # NumPy scalars and arrays
        import numpy as np

        array = np.asarray(answer)
        if array.size != 1:
            raise _Verdict("invalid", f"That is an array of {array.size} values; pass a single "
                                      f"number{unit} (e.g. pick one element, or use float(...)).")
        if array.dtype.kind not in "biufc":
            raise _Verdict("invalid", f"That array holds {array.dtype} values, not numbers.")
        if array.dtype.kind == "b":
            raise _Verdict("invalid", f"That is a yes/no value; this problem wants a number{unit}.")
        value = complex(array.reshape(()).item())
    elif isinstance(answer, numbers.Number):
        try:
            value = complex(answer)
        except OverflowError:   # an int or Fraction beyond the float range
            value = complex(math.inf)
    else:
        try:
            value = complex(float(answer))
        except Exception:
            raise _Verdict("invalid", f"That is {_a(type(answer).__name__)}, not a number. "
                                      f"{_what_to_pass(problem)}") from None
    if value.imag != 0:
        raise _Verdict("invalid", "That is a complex number; every answer here is real.")
    real = value.real
    if math.isnan(real):
        raise _Verdict("invalid", "Your answer is NaN (not a number): somewhere a 0/0, an inf - inf "
                                  "or a missing value crept into the calculation.")
    if math.isinf(real):
        huge = _huge(answer)
        if huge is not None:   # finite, only too large for a float: a real (and wrong) number
            sign, digits = huge
            raise _Verdict("wrong", _wrong(problem, "Check the sign: this quantity is positive." if sign < 0 else
                                           f"Your answer is about {_units.ten_to_the(digits)}, far too high: no quantity in this "
                                           f"course comes near it. {_wanted_in(problem)}"))
        raise _Verdict("invalid", "Your answer is infinite: look for a division by zero.")
    return real


# "2,400", "1,200.5", "2 400", "2 400" (a thin space), "2_400": digits grouped by three, as people write thousands.
_GROUPED = re.compile(r"\s*[-+]?\d{1,3}(?:([,\s\u2009\u202f\u00a0_])\d{3})(?:\1\d{3})*(?:\.\d+)?\s*")


def _advice_for_grouped_digits(text: str) -> str | None:
    """For a number written with thousands separators ("2,400", "1,200.5", "2 400"): that the separator is the
    problem, and the Python number it means. None for other text."""
    if not _GROUPED.fullmatch(text):
        return None
    python = re.sub(r"[,\s\u2009\u202f\u00a0_]", "", text)
    separator = "comma" if "," in text else "space"
    return (f"Python does not read a {separator} between digits as a thousands separator, so drop it and the "
            f"quotes: write it without quotes as {python}")


def _grouped_tuple(answer: tuple) -> int | None:
    """The number ``2,400`` meant when Python made it the tuple (2, 400): a first int of 1 to 3 digits, then ints
    of 100 to 999 (a group of three digits, since 2,040 would be (2, 40) and cannot be told from two values).
    None for any other tuple."""
    if not 2 <= len(answer) <= 5 or not all(type(part) is int for part in answer):
        return None
    first, rest = answer[0], answer[1:]
    if not 1 <= first <= 999 or not all(100 <= part <= 999 for part in rest):
        return None
    return int("".join(str(part) for part in answer))


def _huge(answer) -> tuple[int, int] | None:
    """(sign, decimal digits) of an exact, finite number beyond the float range, else None."""
    from decimal import Decimal
    from fractions import Fraction

    log2 = math.log10(2)
    if isinstance(answer, int) and not isinstance(answer, bool):
        return (1 if answer > 0 else -1), int(answer.bit_length() * log2)
    if isinstance(answer, Fraction):
        bits = abs(answer.numerator).bit_length() - answer.denominator.bit_length()
        return (1 if answer > 0 else -1), int(bits * log2)
    if isinstance(answer, Decimal) and answer.is_finite():
        return (1 if answer > 0 else -1), answer.adjusted()
    if isinstance(answer, sp.Basic):
        number = sp.N(answer, 15)
        if isinstance(number, sp.Float) and number.is_finite and number != 0:
            sign, _mantissa, exponent, bits = number._mpf_
            return (-1 if sign else 1), int((exponent + bits) * log2)
    return None


_TWOS = ("The usual pairs: FLOPs vs multiplies (one multiply-add is 2 FLOPs), 2 bytes vs 1 byte per value, "
         "keys and values, or both directions of a transfer.")


def _percent(rtol: float) -> str:
    """A tolerance as a learner reads it: "2%", "0.4%" (never a misleading "0%")."""
    return f"{rtol:.0%}" if rtol >= 0.01 else f"{rtol * 100:.1g}%"


def _near(value: float, target: float, rtol: float) -> bool:
    return abs(value - target) <= rtol * abs(target)


def _judge_number(problem: Problem, answer) -> tuple[str, str]:
    value = _as_number(problem, answer)
    expected = float(_expected(problem))
    if _near(value, expected, problem.rtol):
        return "correct", f"Correct (the check allows ±{_percent(problem.rtol)}). Well done."
    slips = [mistake.message for mistake in problem.mistakes if _near(value, float(mistake.value()), mistake.rtol)]
    if slips:
        return "wrong", _wrong(problem, _named_slips(slips))
    return "wrong", _wrong(problem, _number_nudge(value, expected, problem))


def _nearby_slips(value: float, expected: float, problem: Problem, tolerance: float) -> list[str]:
    """The messages of the problem's own mistakes whose value is off from ``expected`` by about the same factor
    as ``value`` (within ``tolerance``), though not close enough to match one: a generic guess ("bits vs bytes?")
    must not claim a cause when the problem names a likelier one for that factor."""
    found = []
    for mistake in problem.mistakes:
        try:
            slip = float(mistake.value())
        except Exception:
            continue
        if slip != 0 and (slip > 0) == (value > 0) and abs(value / slip - 1) <= tolerance:
            found.append(mistake.message)
    return found


def _reciprocal(value: float, expected: float) -> str | None:
    """The unit scale (words) at which ``value`` is about 1/``expected``: ``""`` for exactly, "a thousand" for
    milliseconds against seconds..., or None when it is not a reciprocal."""
    product = abs(value * expected)
    if product == 0 or (0.9 < abs(value / expected) < 1.1):
        return None
    for power, words in ((0, ""), (3, "a thousand"), (6, "a million"), (9, "a billion"),
                         (-3, "a thousand"), (-6, "a million"), (-9, "a billion")):
        if abs(product / 10.0 ** power - 1) <= 0.05:
            return words
    return None


_RATE = re.compile(r"per second|/\s*s\b")


def _number_nudge(value: float, expected: float, problem: Problem) -> str:
    if value == 0:
        return "Zero cannot be right: this quantity is not zero. Check for a factor that vanished."
    if (value > 0) != (expected > 0):
        positive = "positive" if expected > 0 else "negative"
        return f"Check the sign: this quantity is {positive}."
    ratio = abs(value / expected)
    tolerance = max(2 * problem.rtol, 0.05)

    def about(factor):
        return abs(ratio / factor - 1) <= tolerance or abs(ratio * factor - 1) <= tolerance

    factor_guess = any(about(factor) for factor in (1e3, 1e6, 1e9, 1e12, 3600, 8, 2, 2e3, 8e3))
    nearby = _nearby_slips(value, expected, problem, tolerance) if factor_guess else []
    if nearby:   # a generic guess ("bits vs bytes?") would claim a cause; the problem's own slip for it comes first
        return ("Your answer is near (not exactly at) what a known slip gives, so check this one first, then your "
                f"other factors. {_named_slips(nearby)}")
    flipped = _reciprocal(value, expected)
    if flipped is not None:
        scale = f", give or take {flipped} from a unit prefix" if flipped else ""
        wanted = f" The answer is wanted in {problem.unit}." if problem.unit else ""
        return ("Your answer is about 1 over the expected one" + scale + ": a quantity upside down, such as the "
                "time of one step (seconds per token) where a rate (tokens per second) is wanted, or the "
                f"reverse. Check which way round the ratio goes.{wanted}")
    for factor, words in _SCALES:
        if about(factor):
            return (f"You are off by a factor of about {words}: check your units (ms vs s, GB vs bytes, "
                    f"TB/s vs B/s, per token vs per million tokens). {_wanted_in(problem)}")
    if about(3600):
        return "You are off by a factor of about 3,600: hours vs seconds?"
    if about(8):
        return ("You are off by a factor of about 8: bits vs bytes (8 bits a byte), or one GPU against the 8 GPUs of "
                "a node or an 8-way split (per GPU vs per node)? Check which of the two your numbers have.")
    if about(2):
        return f"You are off by a factor of about 2. {_TWOS}"
    if about(1000 * 2) or about(1000 * 8):
        return "You are off by a unit prefix and a small factor: check units first, then FLOPs vs multiplies."
    direction = "too high" if abs(value) > abs(expected) else "too low"
    if _RATE.search(problem.unit) and not 0.1 < ratio < 10:
        return (f"Your answer is {direction}, by more than a factor of 10. This answer is a rate in {problem.unit}: "
                "a count per step becomes a rate when divided by the step's time in seconds, and a time per "
                "token is the rate's reciprocal.")
    return f"Your answer is {direction}."


def _wanted_in(problem: Problem) -> str:
    """The closing sentence of a units nudge: the unit wanted, or, for a pure number, that units cancel."""
    if problem.unit:
        return f"The answer is wanted in {problem.unit}."
    return ("This answer is a pure number (a ratio or a count), so every unit should cancel: look for "
            "a quantity whose units did not.")


def _wrong(problem: Problem, nudge: str) -> str:
    extra = f" {problem.wrong_hint}" if problem.wrong_hint else ""
    return f"Not quite. {nudge}{extra}"


# ================================================================================ expressions

def _course_symbols() -> dict[str, sp.Symbol]:
    return {name: row.symbol for name, row in _symbols.TABLE.items()}


def _aliases() -> dict[str, sp.Symbol]:
    """The symbols a chapter imports under a board name that is not the symbol's own: ``E`` is ``n_ep`` (the GPUs
    of expert parallelism; ``from lecture_lib.symbols import E``). In a string, such a name means what the import
    means, so "N_total/(E*P)" reads as the notebook's E."""
    table = {row.symbol for row in _symbols.TABLE.values()}
    return {name: value for name, value in vars(_symbols).items()
            if isinstance(value, sp.Symbol) and value in table and name != value.name}


def _as_expression(answer, expected: sp.Expr | None = None, letters: dict | None = None) -> sp.Expr:
    """``answer`` as a SymPy expression in the course's symbols. ``letters`` (a problem's own board letters,
    ``{"E": "n_experts"}``) come first; then ``expected``, when given, settles a board letter typed in a string:
    "E" is whichever symbol the expected expression writes E (n_ep, or E_loss in Chapter 5), else the one the
    notebooks import as E (n_ep)."""
    from lecture_lib.formula import Formula

    names = _course_symbols()
    if isinstance(answer, Formula):
        answer = answer.rhs
    if isinstance(answer, bool):
        raise _Verdict("invalid", "That is a yes/no value; this problem wants an expression.")
    if isinstance(answer, bytes):
        answer = answer.decode(errors="replace")
    if isinstance(answer, str):
        if not answer.strip():
            raise _Verdict("invalid", "That is an empty string; write the expression, e.g. \"N_total / N_active\".")
        try:   # parsed from an allow-list of syntax (lecture_lib.symbols.parse), never run
            answer = _symbols.parse(answer, unknown="symbol")
        except _symbols.ParseError as error:
            message = error.reason
            if message.startswith("could not parse"):
                cause = f": {error.cause}" if error.cause else ""
                raise _Verdict("invalid", f"The checker could not parse {answer.strip()[:60]!r}{cause}. It reads "
                                          f"{_symbols.READS} (B, N_active, FLOPs, mem_bw, ...).") from None
            raise _Verdict("invalid", f"The checker cannot read that expression: {message}.") from None
    if isinstance(answer, sp.Equality):
        answer = answer.rhs
    if isinstance(answer, (list, tuple, set, dict)):
        raise _Verdict("invalid", f"That is {_a(type(answer).__name__)}; if it came from sp.solve, "
                                  "take one solution, e.g. sp.solve(...)[0].")
    if isinstance(answer, (numbers.Number,)) or (hasattr(answer, "dtype") and hasattr(answer, "shape")):
        try:
            answer = sp.sympify(answer, strict=True)
        except Exception:
            raise _Verdict("invalid", "That is not something SymPy can read as an expression.") from None
    if not isinstance(answer, sp.Expr):
        raise _Verdict("invalid", f"That is {_a(type(answer).__name__)}, not a SymPy expression. Build it "
                                  "from the course's symbols (from lecture_lib.symbols import B, ...) or "
                                  "pass a string.")
    # A learner's own sp.Symbol("B") (no assumptions) means the course's B; a board name such as E means the symbol
    # the notebooks import under it (n_ep).
    aliases = _aliases()
    swap = {s: names[s.name] for s in answer.free_symbols
            if isinstance(s, sp.Symbol) and s.name in names and s != names[s.name]}
    by_letter = {}
    for symbol in getattr(expected, "free_symbols", ()):
        row = _symbols.TABLE.get(symbol.name)
        if row is not None and row.latex != symbol.name:
            by_letter.setdefault(row.latex, set()).add(symbol)
    own_letters = {letter: names[name] for letter, name in (letters or {}).items() if name in names}
    for s in answer.free_symbols:
        if isinstance(s, sp.Symbol) and s.name in own_letters:
            swap[s] = own_letters[s.name]
        elif isinstance(s, sp.Symbol) and s.name not in names:
            own = by_letter.get(s.name, set())
            if len(own) == 1:
                swap[s] = next(iter(own))
            elif s.name in aliases:
                swap[s] = aliases[s.name]
    if swap:
        answer = answer.xreplace(swap)
    unknown = sorted(s.name for s in answer.free_symbols if s.name not in names)
    if unknown:
        some = ", ".join(sorted(names)[:12])
        raise _Verdict("invalid", f"Your expression uses {', '.join(unknown)}, which the course does not "
                                  f"define.{_did_you_mean(unknown, names)} Use the names in lecture_lib.symbols "
                                  f"(e.g. {some}, ...).")
    if answer.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        raise _Verdict("invalid", "Your expression contains nan or infinity: look for a division by zero.")
    return answer


def _did_you_mean(unknown: list[str], names) -> str:
    """A "Did you mean FLOPs?" sentence for near-miss symbol names (case first, then spelling), or ""."""
    import difflib

    by_fold = {name.casefold(): name for name in names}
    guesses = []
    for name in unknown:
        match = by_fold.get(name.casefold())
        if match is None:
            close = difflib.get_close_matches(name, list(names), n=1, cutoff=0.75)
            if not close:
                folded = difflib.get_close_matches(name.casefold(), list(by_fold), n=1, cutoff=0.75)
                close = [by_fold[folded[0]]] if folded else []
            match = close[0] if close else None
            # A typo keeps a symbol's first letter ("N_activ", "flops"); "equals" is an English word, not x_equal.
            if match is not None and name.lstrip("_")[:1].casefold() != match.lstrip("_")[:1].casefold():
                match = None
        if match is not None:
            guesses.append(f"{match} (for {name})" if len(unknown) > 1 else match)
    # Words with no symbol near them ("batch equals stuff") are prose, not typos: suggest nothing.
    if not guesses or len(guesses) * 2 < len(unknown):
        return ""
    return f" Did you mean {', '.join(guesses)}?"


# ---------------------------------------------------------------- deciding equivalence
# Numbers first: both sides are evaluated at a few random positive points (fast, and decisive when
# they disagree); ``simplify`` runs only when the points cannot be evaluated. The whole judgement
# runs under one time limit (see "one time limit" below), so no form of answer can hang a check.

_TRIALS = 6


def _points(a: sp.Expr, b: sp.Expr, trials: int = _TRIALS) -> list[dict]:
    free = sorted(a.free_symbols | b.free_symbols, key=lambda s: s.name)
    rng = random.Random(20260429)
    return [{s: sp.Float(rng.uniform(0.3, 3.0)) for s in free} for _ in range(trials)]


def _values(expression: sp.Expr, points: list[dict]) -> list[complex] | None:
    """``expression`` at each point, or None when one value is not a finite number."""
    out = []
    for point in points:
        try:
            value = complex(expression.evalf(15, subs=point))
        except (TypeError, ValueError, OverflowError, ZeroDivisionError):
            return None
        if not math.isfinite(abs(value)):
            return None
        out.append(value)
    return out


def _close(x: complex, y: complex) -> bool:
    return abs(x - y) <= 1e-9 * max(abs(x), abs(y), 1e-300)


def _spot_check(a: sp.Expr, b: sp.Expr, trials: int = _TRIALS) -> bool | None:
    """True when a and b agree at several random positive points, False when they differ at one,
    None when they cannot be evaluated there (then only algebra can decide)."""
    points = _points(a, b, trials)
    xs, ys = _values(a, points), _values(b, points)
    if xs is None or ys is None:
        return None
    return all(_close(x, y) for x, y in zip(xs, ys))


def _equivalent(a: sp.Expr, b: sp.Expr) -> bool:
    agree = _spot_check(a, b)
    if agree is not None:
        return agree
    try:
        return sp.simplify(a - b) == 0
    except Exception:
        return False


# A division whose divisor is followed by an implicit product ("/4act_values", "/2 N_active mem_bw"): read left to
# right, as Python and SymPy do, that divides by the first factor only.
_DIVISOR_THEN_IMPLICIT_PRODUCT = re.compile(r"/\s*(?:\d+(?:\.\d+)?\s*[A-Za-z_(√]|[A-Za-z_]\w*\s+[A-Za-z_(√\d])")


def _judge_expression(problem: Problem, answer) -> tuple[str, str]:
    expected = sp.sympify(_expected(problem), strict=True)
    given = _as_expression(answer, expected, problem.letters)
    if _equivalent(given, expected):
        return "correct", "Correct: your expression is equivalent to the expected one. Well done."
    read_as = ""
    if isinstance(answer, str) and _DIVISOR_THEN_IMPLICIT_PRODUCT.search(answer):
        read_as = (" (Note how it was read: a/4x means (a/4)·x, left to right, as in Python; to divide by 4x, "
                   "write a/(4x).)")
    slips = [m.message for m in problem.mistakes if _equivalent(given, sp.sympify(m.value(), strict=True))]
    if slips:
        return "wrong", _wrong(problem, _named_slips(slips)) + read_as
    nudge = _expression_nudge(given, expected, problem)
    probes = _probe_report(problem, given, expected)
    return "wrong", _wrong(problem, f"{nudge} {probes}".strip()) + read_as


def _probe_report(problem: Problem, given: sp.Expr, expected: sp.Expr) -> str:
    """What each of the problem's special cases (:class:`~lecture_lib.practice.registry.Probe`) says of ``given``:
    that it fails there, or that it passes, so the slip is elsewhere. Evaluated, so it is true of this answer."""
    names = _course_symbols()
    failed, passed = [], []
    for probe in problem.probes:
        at = {names[name]: sp.nsimplify(value) for name, value in probe.at.items()}
        agree = _spot_check(given.xreplace(at), expected.xreplace(at))
        if agree is None:
            continue
        (passed if agree else failed).append(probe)
    parts = [f"At {probe.label} your expression does not give what it must: {probe.gives}." for probe in failed]
    if passed and not failed:
        checks_ = "; and at ".join(f"{probe.label} it gives {probe.gives}" for probe in passed)
        parts.append(f"Your expression passes the special case{'s' if len(passed) > 1 else ''} (at {checks_}), as "
                     "it must, so the slip is in what happens away from there.")
    return " ".join(parts)


def _named_slips(messages: list[str]) -> str:
    """One slip's message, or, when several slips give the very same value, each of them (the checker cannot tell
    which was made, so it names them all rather than claim one)."""
    unique = list(dict.fromkeys(messages))
    if len(unique) == 1:
        return unique[0]
    listed = " Or: ".join(unique)
    count = {2: "Two", 3: "Three"}.get(len(unique), str(len(unique)))
    return f"{count} different slips give this same value, so check each. One: {listed}"


def _constant(values: list[complex] | None) -> complex | None:
    """The common value when every entry is the same (to 1e-9), else None."""
    if not values or any(not _close(v, values[0]) for v in values):
        return None
    return values[0]


def _expression_nudge(given: sp.Expr, expected: sp.Expr, problem: Problem | None = None) -> str:
    """What is wrong, read from numbers: the ratio and the product of the two expressions at random
    points (a constant ratio is a missing factor, a constant product is an upside-down answer)."""
    if not given.free_symbols and expected.free_symbols:
        return ("Your answer is a plain number, but this problem wants an expression in the course's "
                "symbols (leave them as symbols).")
    points = _points(given, expected)
    xs, ys = _values(given, points), _values(expected, points)
    if xs is not None and ys is not None and all(y != 0 for y in ys):
        ratio = _constant([x / y for x, y in zip(xs, ys)])
        if ratio is not None and abs(ratio.imag) <= 1e-12 * abs(ratio) and ratio.real != 0:
            r = ratio.real
            if r < 0:
                return "Check the sign: the expected expression is positive for positive inputs."
            for factor, words in _SCALES:
                if math.isclose(r, factor, rel_tol=1e-9) or math.isclose(r, 1 / factor, rel_tol=1e-9):
                    return f"You are off by a constant factor of {words}: check your units."
            if math.isclose(r, 2, rel_tol=1e-9) or math.isclose(r, 0.5, rel_tol=1e-9):
                return f"You are off by a constant factor of 2. {_TWOS}"
            if math.isclose(r, 8, rel_tol=1e-9) or math.isclose(r, 0.125, rel_tol=1e-9):
                return ("You are off by a constant factor of 8: bits vs bytes (8 bits a byte), or one GPU against "
                        "the 8 of a node?")
            return "The symbols are right but a constant factor is off: a number went missing or appears twice."
        if _constant([x * y for x, y in zip(xs, ys)]) is not None:
            return "Your expression is upside down: swap numerator and denominator."
    missing = sorted(s.name for s in expected.free_symbols - given.free_symbols)
    extra = sorted(s.name for s in given.free_symbols - expected.free_symbols)
    if missing and extra:   # often a letter read as another symbol than the learner meant: say which names to write
        wanted = ", ".join(sorted(s.name for s in expected.free_symbols))
        letters = ""
        if problem is not None and problem.letters:
            letters = " (or the chapter's letters: " + ", ".join(f"{letter} for {name}" for letter, name
                                                                  in sorted(problem.letters.items())) + ")"
        return (f"Your expression uses {', '.join(extra)} and not {', '.join(missing)}. Write this problem's "
                f"answer in its own symbols, {wanted}{letters}; {', '.join(extra)} "
                f"{'is' if len(extra) == 1 else 'are'} another quantity of the course.")
    if missing:
        return f"Your expression does not depend on {', '.join(missing)}, but the answer does."
    if extra:
        return f"Your expression depends on {', '.join(extra)}, which the answer does not need."
    return ("The right symbols, but not an equivalent expression: check which quantities go in the "
            "numerator and which in the denominator, and each exponent.")


# ================================================================================ choices

def _loose(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", "", text.casefold())


def _judge_choice(problem: Problem, answer) -> tuple[str, str]:
    options = ", ".join(repr(o) for o in problem.options)
    if isinstance(answer, bytes):
        answer = answer.decode(errors="replace")
    if not isinstance(answer, str):
        raise _Verdict("invalid", f"That is {_a(type(answer).__name__)}; answer with a word in quotes, "
                                  f"one of: {options}.")
    given = _loose(answer)
    if not given:
        raise _Verdict("invalid", f"That is an empty string; answer with one of: {options}.")
    canonical = {}
    for option in problem.options:
        canonical[_loose(option)] = option
        for alternate in problem.alternates.get(option, ()):
            canonical[_loose(alternate)] = option
    if given not in canonical:
        raise _Verdict("invalid", f"{answer.strip()[:40]!r} is not one of the choices: {options}.")
    expected = str(_expected(problem))
    if canonical[given] == expected:
        return "correct", "Correct. Well done."
    return "wrong", _wrong(problem, problem.nudges.get(canonical[given], "That is not the one."))
