"""Issue 31 §1: the checker reads maths as people write it, and catches an answer left over from the
problem before.

``^`` has power's precedence (``B^2+1`` is no longer ``B**3``); products may be ``×``, ``·`` or
implicit; powers may be superscripts; roots may be ``√``; the minus may be U+2212. Every registered
expression problem accepts its answer in each notation and still refuses a wrong one written the
same way. An answer identical to the one just judged for another problem, and wrong here, is
reported as a work cell that may not have run (never when it is right: some problems share answers).
"""

import re
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from lecture_lib import symbols
from lecture_lib.practice import checks, progress
from lecture_lib.practice.checks import PROBLEMS, check
from lecture_lib.symbols import B, FLOPs, N_active, N_total


@pytest.fixture(autouse=True)
def lenient(monkeypatch):
    """Outside strict mode, and no answer judged before the test (check() remembers the last one)."""
    monkeypatch.delenv("LECTURE_STRICT", raising=False)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    monkeypatch.setattr(checks, "_last_judged", [])


def expected(problem_id):
    return PROBLEMS[problem_id].expected()


# ------------------------------------------------------------------ each notation, read alone

@pytest.mark.parametrize("text, meant", [
    ("B^2+1", B**2 + 1),
    ("2*B^2", 2 * B**2),
    ("-B^2", -(B**2)),
    ("2^3^2", sp.Integer(512)),
    ("B^-1", 1 / B),
    ("(B+1)^2/(4B)", (B + 1)**2 / (4 * B)),
    ("4 B", 4 * B),
    ("2B", 2 * B),
    ("2(B+1)", 2 * (B + 1)),
    ("(B+1)(B-1)", (B + 1) * (B - 1)),
    ("2·B", 2 * B),
    ("2×B", 2 * B),
    ("2⋅B", 2 * B),
    ("2∗B", 2 * B),
    ("B²", B**2),
    ("B³", B**3),
    ("2B²", 2 * B**2),
    ("-B²", -(B**2)),
    ("(B+1)²", (B + 1)**2),
    ("N_total²/N_active³", N_total**2 / N_active**3),
    ("10⁻³", sp.Rational(1, 1000)),
    ("1.5×10⁻³ B", sp.Float("1.5") / 1000 * B),
    ("B⁻¹", 1 / B),
    ("√B", sp.sqrt(B)),
    ("√(B+1)", sp.sqrt(B + 1)),
    ("sqrt(B)", sp.sqrt(B)),
    ("2√B", 2 * sp.sqrt(B)),
    ("√B√N_total", sp.sqrt(B) * sp.sqrt(N_total)),
    ("√√B", B**sp.Rational(1, 4)),
    ("√exp(B)", sp.sqrt(sp.exp(B))),
    ("−B", -B),
    ("B − 1", B - 1),
    ("B^−2", B**-2),
    ("2\u00a0B", 2 * B),
    ("FLOPs × N_total / (2 · N_active)", FLOPs * N_total / (2 * N_active)),
    ("2ᴮ", 2**B),                                     # a superscript letter is a power, not the name "2B" or "xB"
    ("N_totalᴮ", N_total**B),
    ("(B+1)ⁿ⁻¹", (B + 1)**(sp.Symbol("n", positive=True) - 1)),
    ("B⁽²⁺¹⁾", B**3),
    ("B ÷ 2", B / 2),
    ("FLOPs ÷ (2N_active)", FLOPs / (2 * N_active)),
    ("[B+1]²", (B + 1)**2),
    ("2[B+1]", 2 * (B + 1)),
    ("N_total[1 − (1 − 1/N_total)^B]", N_total * (1 - (1 - 1 / N_total)**B)),
])
def test_each_notation_reads_as_meant(text, meant):
    parsed = symbols.parse(text, unknown="symbol")
    assert sp.simplify(parsed - meant) == 0
    assert parsed == meant


def test_a_caret_and_a_double_star_read_alike_everywhere():
    for text in ["B^2+1", "2*B^2", "-B^2", "2^3^2", "B^N_total^2", "(B+1)^2/B", "2^-1", "-2^2"]:
        assert symbols.parse(text) == symbols.parse(text.replace("^", "**")), text


def test_the_examples_of_the_issue_are_judged_correct():
    assert check("7.7", "(act_values + 2)^2/(4*act_values)").correct
    assert check("7.7", "(act_values + 2)²/(4 act_values)").correct
    assert check("8.1", "n_experts*(1 - (1 - k_active/n_experts)^B)").correct
    assert check("8.1", "n_experts·(1 − (1 − k_active/n_experts)ᴮ)").correct        # found by a learner's walk
    assert check("8.1", "n_experts[1 − (1 − k_active/n_experts)^B]").correct
    assert check("1.4", "FLOPs·N_total·bytes_param ÷ (2 N_active·mem_bw)").correct


@pytest.mark.parametrize("text, words", [
    ("B +* N_total", "×"),
    ("B²²²²²²²²²²²²²²²²²²²²²²²²²²²²²²²", "digits"),
    ("B⁹⁹⁹⁹", "exponent"),
    ("(10³⁰)¹⁰⁰⁰", "digits"),
    ("√" * 45 + "B", ""),
    ("√", "√B"),
    ("√-B", "√B"),
    ("B⁻", "√"),
    ("__root__ * B", "underscore"),
    ("__root__ B^2", ""),
    ("√B.name", "attribute"),
    ("√open('x')", "functions"),
    ("1..2", ""),              # a typo, not 1. × .2
    ("2 3", ""),               # two numbers side by side are no product
])
def test_the_new_notations_keep_every_limit(text, words):
    with pytest.raises(symbols.ParseError) as caught:
        symbols.parse(text)
    assert words in caught.value.reason


def test_unreadable_text_is_told_which_notations_are_read():
    result = check("1.4", "FLOPs * (N_total")
    assert result.status == "invalid"
    for notation in ("*", "×", "·", "**", "^", "²", "√", "sqrt"):
        assert notation in result.message, notation


# ------------------------------------------------------------------ every expression problem, in every notation

def written(expression: sp.Expr, notation: str) -> str:
    """``expression`` as a learner might type it. SymPy's ``sstr`` gives Python's spelling (names,
    numbers, ``+ - * / **``, brackets, ``sqrt(...)``); each notation rewrites one of those
    unambiguous pieces: ``**`` (never part of a name or a number), a lone ``*``, ``-`` or ``sqrt(``."""
    text = sp.sstr(expression)
    lone_star = r"(?<!\*)\*(?!\*)"
    if notation == "python":
        return text
    if notation == "caret":
        return text.replace("**", "^")
    if notation == "times":
        return re.sub(lone_star, " × ", text)
    if notation == "dot":
        return re.sub(lone_star, "·", text)
    if notation == "implicit":
        return re.sub(lone_star, " ", text)
    if notation == "superscript":
        return _superscripts(text)
    if notation == "root":
        return re.sub(r"sqrt\((\w+)\)", r"√\1", text).replace("sqrt(", "√(")
    if notation == "minus":
        return text.replace("-", "−")
    if notation == "divide":
        return text.replace("/", " ÷ ")
    if notation == "square":
        return text.replace("(", "[").replace(")", "]")
    if notation == "board":   # all at once, as a board writes it
        return written_board(text)
    raise ValueError(f"notation must be one of {NOTATIONS}, got {notation!r}")


def _superscripts(text: str) -> str:
    """``x**2`` -> ``x²``, ``x**(-3)`` -> ``x⁻³``: every whole-number exponent as superscripts."""
    raised = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
    text = re.sub(r"\*\*\((-\d+)\)", lambda m: m.group(1).translate(raised), text)
    return re.sub(r"\*\*(\d+)(?![\d.])", lambda m: m.group(1).translate(raised), text)


def written_board(text: str) -> str:
    text = re.sub(r"sqrt\((\w+)\)", r"√\1", _superscripts(text)).replace("sqrt(", "√(")
    return re.sub(r"(?<!\*)\*(?!\*)", "·", text).replace("**", "^").replace("-", "−")


NOTATIONS = ("python", "caret", "times", "dot", "implicit", "superscript", "root", "minus", "divide", "square",
             "board")
EXPRESSION_PROBLEMS = [pid for pid in checks.problem_ids() if PROBLEMS[pid].kind == "expression"]


def test_the_printer_writes_each_notation():
    example = -(B + 1)**2 * sp.sqrt(N_total) / (2 * sp.sqrt(B + N_active) * FLOPs**3)
    assert written(example, "caret").count("^") == 2 and "**" not in written(example, "caret")
    assert "²" in written(example, "superscript") and "³" in written(example, "superscript")
    assert "√N_total" in written(example, "root") and "√(B + N_active)" in written(example, "root")
    assert "−" in written(example, "minus") and "-" not in written(example, "minus")
    for notation in ("times", "dot", "implicit"):
        assert "*" not in written(example, notation).replace("**", ""), notation


ROUND_TRIP = [
    -(B + 1)**2 * sp.sqrt(N_total) / (2 * sp.sqrt(B + N_active) * FLOPs**3),
    1 / sp.sqrt(B) - B**-3 + 2**B,
    (B - N_total)**3 * (B + 1)**-2,
    sp.sqrt(B**2 + N_active**2) ** 3,
    -B**2 - 2 * B * N_total,
    (B**2)**N_active,
]


@pytest.mark.parametrize("notation", NOTATIONS)
@pytest.mark.parametrize("expression", ROUND_TRIP + [expected(pid) for pid in EXPRESSION_PROBLEMS], ids=str)
def test_every_notation_reads_back_what_the_printer_wrote(expression, notation):
    text = written(expression, notation)
    assert checks._equivalent(symbols.parse(text, unknown="symbol"), expression), (notation, text)


@pytest.mark.parametrize("problem_id", EXPRESSION_PROBLEMS)
def test_every_expression_problem_accepts_its_answer_in_every_notation_and_refuses_a_wrong_one(problem_id):
    right = expected(problem_id)
    for notation in NOTATIONS:
        text = written(right, notation)
        result = check(problem_id, text)
        assert result.correct, (notation, text, result.message)
        wrong = written(2 * right, notation)
        result = check(problem_id, wrong)
        assert result.status == "wrong", (notation, wrong, result.message)


def test_some_notation_applies_to_every_expression_problem():
    """So the test above exercises more than Python's spelling: every problem's answer is written
    differently in some notation, and some are written with ``^`` and with ``²``."""
    for problem_id in EXPRESSION_PROBLEMS:
        right = expected(problem_id)
        assert len({written(right, notation) for notation in NOTATIONS}) >= 2, problem_id
    assert any("^" in written(expected(pid), "caret") for pid in EXPRESSION_PROBLEMS)
    assert any("²" in written(expected(pid), "superscript") for pid in EXPRESSION_PROBLEMS)


# ------------------------------------------------------------------ an answer left over from the problem before

def test_a_stale_answer_is_caught_without_a_misleading_nudge():
    """Problem 1.2's work cell raised (hardware.get("GB300 NVL72")), so answer is still 1.1's."""
    answer = expected("1.1")
    assert check("1.1", answer).correct
    result = check("1.2", answer)
    assert result.status == "unanswered"
    assert "Problem 1.1" in result.message and "work cell above may not have run" in result.message
    for leak in ("too low", "too high", "factor", f"{expected('1.2'):.3g}", f"{expected('1.2'):.2g}"):
        assert leak not in result.message


def test_a_stale_answer_keeps_being_caught_until_the_work_cell_runs():
    answer = expected("1.1")
    check("1.1", answer)
    assert check("1.2", answer).status == "unanswered"
    assert check("1.2", answer).status == "unanswered"   # running the check again does not make it fresh
    assert "Problem 1.1" in check("1.3", answer).message
    assert check("1.2", expected("1.2")).correct
    assert check("1.2", 1e-9).status == "wrong"


def test_a_stale_answer_is_not_recorded_as_an_attempt(tmp_path, monkeypatch):
    file = tmp_path / "progress.json"
    monkeypatch.setenv(progress.ENV_VAR, str(file))
    check("1.1", expected("1.1"))
    check("1.2", expected("1.1"))
    assert "1.2" not in progress.load(file)["problems"]
    assert progress.load(file)["problems"]["1.1"]["attempts"] == 1


def test_a_stale_answer_still_raises_in_strict_mode(monkeypatch):
    check("1.1", expected("1.1"))
    monkeypatch.setenv("LECTURE_STRICT", "1")
    with pytest.raises(AssertionError, match="Problem 1.1"):
        check("1.2", expected("1.1"))


@pytest.mark.parametrize("answer, again", [
    (0.5, 0.5), (3, 3.0), (Fraction(1, 2), 0.5), (np.float64(0.5), 0.5), (sp.Float(0.5), 0.5),
    (sp.Rational(1, 2), sp.Rational(1, 2)), (" 12 ", "12"), (b"N_total", "N_total"),
])
def test_the_same_value_counts_as_the_same_answer(answer, again):
    assert checks._same_answer(again, answer)


class Unequal:
    def __eq__(self, other):
        raise RuntimeError("no comparing me")

    __hash__ = object.__hash__


@pytest.mark.parametrize("answer, again", [
    (0.5, 0.25), ("N_total", "N_active"), (0.5, "0.5"), (True, 1), (None, None), (..., ...),
    (np.array([0.5, 1.0]), np.array([0.5, 1.0])), (Unequal(), Unequal()), (Unequal(), 0.5), (0.5, Unequal()),
    (B, "B"), ([0.5], [0.5]),
])
def test_different_or_incomparable_answers_never_count_as_the_same(answer, again):
    assert not checks._same_answer(again, answer)


def test_expressions_repeated_as_text_or_sympy_are_caught():
    check("1.4", "N_total / N_active")
    assert check("1.10", " N_total / N_active").status == "unanswered"
    checks._last_judged[:] = []
    check("2.3", N_total / N_active)
    assert "Problem 2.3" in check("3.3", N_total / N_active).message


def test_a_number_left_for_an_expression_problem_is_caught():
    check("1.3", expected("1.3"))
    result = check("1.4", expected("1.3"))
    assert result.status == "unanswered" and "plain number" not in result.message


def test_the_same_problem_checked_again_gets_the_usual_nudge():
    check("1.1", 1.0)
    assert check("1.1", 1.0).status == "wrong"


def test_ellipsis_and_none_stay_not_answered_yet():
    for answer in (..., None):
        check("1.1", answer)
        assert "Not answered yet" in check("1.2", answer).message


def test_an_invalid_answer_keeps_its_own_message():
    check("1.1", "0.02")
    assert "quotes" in check("1.2", "0.02").message


def test_choices_are_not_compared_with_the_answer_before():
    """6.12 and 6.13 share their answer; a letter given twice is normal for choices, right or wrong."""
    assert check("6.12", "a").status == "wrong"
    result = check("6.13", "a")
    assert result.status == "wrong" and "work cell" not in result.message


def shared_answers() -> list[list[str]]:
    """Groups of problems, in order, whose expected answers are the same (to every member's tolerance)."""
    values = {pid: expected(pid) for pid in checks.problem_ids()}
    groups: list[list[str]] = []
    for pid, value in values.items():
        for group in groups:
            first = group[0]
            if PROBLEMS[first].kind != PROBLEMS[pid].kind:
                continue
            if PROBLEMS[pid].kind == "number":
                same = all(abs(values[first] - value) <= PROBLEMS[q].rtol * abs(value) for q in (first, pid))
            else:
                same = values[first] == value
            if same:
                group.append(pid)
                break
        else:
            groups.append([pid])
    return [group for group in groups if len(group) > 1]


def test_a_correct_answer_shared_by_two_problems_is_never_refused(monkeypatch):
    groups = shared_answers()
    assert any(PROBLEMS[group[0]].kind == "number" for group in groups), groups   # 3.6, 4.9, 7.3 are all 3
    monkeypatch.setenv("LECTURE_STRICT", "1")
    for group in groups:
        answer = expected(group[0])
        for pid in group:
            assert check(pid, answer).correct, pid


def test_a_sentence_gets_no_did_you_mean_but_a_typo_does():
    """Issue 29 §2: 'batch equals stuff' in 1.4 got "Did you mean x_equal (for equals)?"."""
    from lecture_lib.practice.checks import check

    sentence = check("1.4", "batch equals stuff").message
    assert "Did you mean" not in sentence and "x_equal" not in sentence
    typo = check("1.4", "N_activ").message
    assert "Did you mean N_active" in typo


@pytest.mark.parametrize("answer", ["(act_values+2)²/4act_values", "(act_values + 2)^2/4 act_values"])
def test_a_divisor_followed_by_an_implicit_product_is_wrong_and_says_how_it_was_read(answer):
    """A walker's finding: "/4act_values" is read left to right, (…/4)·act_values, as Python reads it; the answer
    stays wrong, and the nudge says how it was read and how to write the division meant."""
    from lecture_lib.practice import checks

    verdict, text = checks._judge_expression(checks.PROBLEMS["7.7"], answer)
    assert verdict == "wrong" and "left to right" in text and "a/(4x)" in text


def test_a_plain_wrong_division_gets_no_reading_note():
    from lecture_lib.practice import checks

    verdict, text = checks._judge_expression(checks.PROBLEMS["7.7"], "(act_values + 2)/(4*act_values)")
    assert verdict == "wrong" and "left to right" not in text


# ------------------------------------------------------------------ ^ in an unquoted answer (Python's XOR)

class _Shell:
    """Enough of an IPython shell for check() to read the cells run so far."""

    execution_count = 2

    def __init__(self, *cells):
        self.user_ns = {"In": ["", *cells]}


@pytest.mark.parametrize("work, problem", [("answer = 2^3 - 2", "wrong"), ("answer = 2^2 + 2", "correct")])
def test_an_answer_computed_with_a_caret_is_told_that_python_reads_it_as_xor(monkeypatch, work, problem):
    """A learner's walk: Problem 2.1's answer is 6. `2^3 - 2` is 3 in Python (XOR) and got "off by a factor of about
    2, the usual pairs: FLOPs vs multiplies"; `2^2 + 2` is 6 by chance and got a plain "Correct"."""
    import IPython

    answer = eval(work.split("=", 1)[1])      # what Python makes of the work cell
    assert (answer == expected("2.1")) == (problem == "correct")
    monkeypatch.setattr(IPython, "get_ipython", lambda: _Shell(work, 'check("2.1", answer)'))
    result = check("2.1", answer)
    assert result.status == problem and "XOR" in result.message and "**" in result.message
    assert "factor" not in result.message
    monkeypatch.setattr(IPython, "get_ipython", lambda: _Shell("answer = 2**3 - 2  # not 2^3", 'check("2.1", answer)'))
    assert "XOR" not in check("2.1", 2**3 - 3).message          # a ^ in a comment is not an operator
    monkeypatch.setattr(IPython, "get_ipython", lambda: None)
    assert "XOR" not in check("2.1", 3).message                 # outside a kernel: nothing to read
