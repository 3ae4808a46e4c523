"""The practice-problem checker (lecture_lib.practice.checks): verdicts, nudges, odd inputs, strict mode."""

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from lecture_lib.practice import checks
from lecture_lib import hardware, roofline
from lecture_lib.practice.checks import PROBLEMS, CheckResult, Mistake, Problem, UnknownProblemError, check
from lecture_lib.symbols import B, FLOPs, N_active, N_total, bytes_param, mem_bw, speed_ratio


@pytest.fixture(autouse=True)
def lenient(monkeypatch):
    """Every test starts outside strict mode, whatever the environment running pytest says, and with
    no answer judged before it (check() compares an answer with the one it judged last)."""
    monkeypatch.delenv("LECTURE_STRICT", raising=False)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    monkeypatch.setattr(checks, "_last_judged", [])


def expected(problem_id):
    return PROBLEMS[problem_id].expected()


NUMBER = "1.1"        # H100 drain time, seconds, rtol 2%
EXPRESSION = "1.4"    # the balance batch B*
CHOICE = "1.9"        # which model does not fit


# ------------------------------------------------------------------ the registry

def test_chapter_one_has_at_least_eight_problems_of_all_three_kinds():
    ids = checks.problem_ids(chapter=1)
    assert len(ids) >= 8
    assert ids == sorted(ids, key=lambda pid: int(pid.split(".")[1]))
    assert {PROBLEMS[pid].kind for pid in ids} == {"number", "expression", "choice"}


@pytest.mark.parametrize("problem_id", checks.problem_ids())
def test_every_problem_accepts_its_own_expected_answer(problem_id):
    result = check(problem_id, expected(problem_id))
    assert result.status == "correct", result.message


@pytest.mark.parametrize("problem_id", [pid for pid in checks.problem_ids() if PROBLEMS[pid].kind == "number"])
def test_number_answers_are_finite_and_positive(problem_id):
    value = expected(problem_id)
    assert isinstance(value, float) and math.isfinite(value) and value > 0


def test_problem_definitions_are_validated():
    with pytest.raises(ValueError, match="kind"):
        Problem("t", "essay", lambda: 1)
    with pytest.raises(ValueError, match="callable"):
        Problem("t", "number", 3.0)
    with pytest.raises(ValueError, match="rtol"):
        Problem("t", "number", lambda: 1, rtol=0)
    with pytest.raises(ValueError, match="options"):
        Problem("t", "choice", lambda: "a")
    with pytest.raises(ValueError, match="twice"):
        checks.register("1.1", Problem("t", "number", lambda: 1))
    with pytest.raises(ValueError, match="look like"):
        checks.register("one", Problem("t", "number", lambda: 1))


def test_a_problem_does_not_print_its_answer():
    text = repr(PROBLEMS["1.3"]) + str(PROBLEMS["1.3"])
    assert f"{expected('1.3'):.3g}" not in text


# ------------------------------------------------------------------ numbers

def test_within_tolerance_is_correct_and_outside_is_not():
    value = expected(NUMBER)
    assert check(NUMBER, value * 1.015).status == "correct"
    assert check(NUMBER, value * 0.985).status == "correct"
    assert check(NUMBER, value * 1.03).status == "wrong"


@pytest.mark.parametrize("factor", [1e3, 1e-3, 1e6, 1e-6, 1e9, 1e-9])
def test_off_by_powers_of_a_thousand_says_check_units(factor):
    result = check(NUMBER, expected(NUMBER) * factor)
    assert result.status == "wrong"
    assert "units" in result.message


@pytest.mark.parametrize("factor", [2, 0.5])
def test_off_by_two_asks_flops_or_multiplies(factor):
    result = check("1.3", expected("1.3") * factor)
    assert result.status == "wrong" and "FLOPs vs multiplies" in result.message


@pytest.mark.parametrize("factor", [8, 1 / 8])
def test_off_by_eight_asks_bits_or_bytes(factor):
    result = check(NUMBER, expected(NUMBER) * factor)
    assert result.status == "wrong" and "bits vs bytes" in result.message


def test_off_by_an_hour_asks_hours_or_seconds():
    assert "hours vs seconds" in check("1.8", expected("1.8") * 3600).message


def test_wrong_sign_and_zero():
    assert "sign" in check(NUMBER, -expected(NUMBER)).message
    assert check(NUMBER, 0).status == "wrong"


def test_otherwise_only_a_direction():
    high = check(NUMBER, expected(NUMBER) * 1.4)
    low = check(NUMBER, expected(NUMBER) * 0.6)
    assert high.status == low.status == "wrong"
    assert "too high" in high.message and "too low" in low.message


def test_known_mistakes_get_their_own_nudge():
    lecture_sparsity = roofline.balance_batch(hardware.get("H100"), weight_bytes=1,
                                              compute_dtype="fp8", sparsity=8)
    assert "sparsity" in check("1.5", lecture_sparsity).message
    one_gpu = check("1.6", expected("1.6") * 72)
    assert "one GPU" in one_gpu.message
    ride_only = check("1.2", expected("1.2") / 2)
    assert "waits" in ride_only.message   # not the generic "FLOPs vs multiplies"


@pytest.mark.parametrize("factor", [1e3, 2, 8, -1, 1.4, 0.6, 3600])
@pytest.mark.parametrize("problem_id", [pid for pid in checks.problem_ids() if PROBLEMS[pid].kind == "number"])
def test_wrong_feedback_never_contains_the_answer(problem_id, factor):
    value = expected(problem_id)
    result = check(problem_id, value * factor)
    assert result.status == "wrong"
    for shown in {f"{value:.2g}", f"{value:.3g}", f"{value:.4g}", f"{value:,.0f}", f"{value * 1e3:.3g}"}:
        if sum(ch.isdigit() for ch in shown) >= 2:
            assert shown not in result.message, (shown, result.message)


@pytest.mark.parametrize("answer", [
    np.float64(0.0239), np.float32(0.0239), np.array([0.0239]), np.array([[0.0239]]), sp.Float(0.0239),
    sp.Rational(239, 10000), Fraction(239, 10000), Decimal("0.0239"), 0.0239 + 0j,
])
def test_numeric_types_are_read(answer):
    assert check(NUMBER, answer).status == "correct"


@pytest.mark.parametrize("answer", [
    "0.0239", "24 ms", b"0.0239", "", [0.0239], (0.0239,), {0.0239}, {"answer": 0.0239}, range(3),
    np.array([0.02, 0.03]), np.array(["a"]), np.array([]), True, False, np.bool_(True), 1j, 2 + 3j,
    float("nan"), np.nan, sp.nan, float("inf"), -math.inf, sp.oo, sp.zoo, sp.Symbol("x"),
    sp.Eq(sp.Symbol("x"), 1), object(), print, CheckResult("1.1", "correct", "ok"),
])
def test_odd_answers_give_a_friendly_invalid(answer):
    result = check(NUMBER, answer)
    assert result.status == "invalid"
    assert result.message and "Traceback" not in result.message


def test_specific_messages_for_nan_infinity_and_text():
    assert "NaN" in check(NUMBER, float("nan")).message
    assert "infinite" in check(NUMBER, float("inf")).message
    assert "quotes" in check(NUMBER, "0.0239").message
    assert "array of 2" in check(NUMBER, np.array([1.0, 2.0])).message


@pytest.mark.parametrize("problem_id", [NUMBER, EXPRESSION, CHOICE])
@pytest.mark.parametrize("answer", [..., None])
def test_ellipsis_and_none_are_not_answered_yet(problem_id, answer):
    result = check(problem_id, answer)
    assert result.status == "unanswered"
    assert "Not answered yet" in result.message


anything = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True)
    # No "*" or "^" in the text: "22**22**22" is a legal SymPy power too large to evaluate.
    | st.complex_numbers() | st.text(alphabet="abcBN_/+-()0123456789. ", max_size=20) | st.binary(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=2)
    | st.tuples(inner),
    max_leaves=5,
)


@settings(max_examples=80, deadline=None)
@given(answer=anything, problem_id=st.sampled_from([NUMBER, EXPRESSION, CHOICE, "1.12", "1.14"]))
def test_no_answer_ever_raises(answer, problem_id):
    result = check(problem_id, answer)
    assert result.status in checks.STATUSES
    assert isinstance(result.message, str) and result.message


# ------------------------------------------------------------------ expressions

B_STAR = FLOPs * N_total * bytes_param / (2 * N_active * mem_bw)


@pytest.mark.parametrize("answer", [
    B_STAR,
    (FLOPs / 2) * (bytes_param / mem_bw) * (N_total / N_active),
    sp.expand(FLOPs * N_total * bytes_param / (N_active * mem_bw)) / 2,
    "FLOPs*N_total*bytes_param/(2*N_active*mem_bw)",
    " FLOPs / (2 * mem_bw) * bytes_param * N_total / N_active ",
    "FLOPs*N_total*bytes_param/(2*N_active*mem_bw)^1",
    roofline.BALANCE_BATCH,
    sp.Eq(B, B_STAR),
    sp.Symbol("FLOPs") * sp.Symbol("N_total") * sp.Symbol("bytes_param") / (2 * sp.Symbol("N_active") * sp.Symbol("mem_bw")),
    0.5 * FLOPs * N_total * bytes_param / (N_active * mem_bw),
])
def test_equivalent_expressions_are_correct(answer):
    result = check(EXPRESSION, answer)
    assert result.status == "correct", result.message


@pytest.mark.parametrize("answer, status, words", [
    (2 * B_STAR, "wrong", "FLOPs vs multiplies"),
    (B_STAR / 2, "wrong", "FLOPs vs multiplies"),
    (8 * B_STAR, "wrong", "bits vs bytes"),
    (1000 * B_STAR, "wrong", "units"),
    (-B_STAR, "wrong", "sign"),
    (1 / B_STAR, "wrong", "upside down"),
    (3 * B_STAR, "wrong", "constant factor"),
    (B_STAR * mem_bw, "wrong", "does not depend on mem_bw"),
    (B_STAR * B, "wrong", "depends on B"),
    (FLOPs * N_total / (N_active * mem_bw + bytes_param), "wrong", "numerator"),
    (2400, "wrong", "plain number"),
    ("FLOPs*Ntotal/2", "invalid", "Ntotal"),
    ("FLOPs * (N_total", "invalid", "could not parse"),
    ("", "invalid", "empty"),
    ([B_STAR], "invalid", "sp.solve"),
    (sp.solve(sp.Eq(roofline.T_COMPUTE.rhs, roofline.T_WEIGHTS.rhs), B), "invalid", "sp.solve"),
    (B_STAR / 0, "invalid", "infinity"),
    (True, "invalid", "yes/no"),
    (object(), "invalid", "not a SymPy expression"),
])
def test_wrong_or_unreadable_expressions(answer, status, words):
    result = check(EXPRESSION, answer)
    assert result.status == status, result.message
    assert words in result.message
    assert str(B_STAR) not in result.message


def test_expressions_only_simplify_cannot_settle_use_spot_checks():
    tricky = sp.Max(B_STAR, 0)   # equal for positive symbols; the numeric spot checks confirm it
    assert checks._equivalent(tricky, B_STAR)
    assert not checks._spot_check(B_STAR + 1e-3, B_STAR)


def test_a_rational_function_in_speed_ratio():
    assert check("1.14", 9 / (14 - 5 * speed_ratio)).correct
    assert check("1.14", "1.8 / (2.8 - speed_ratio)").correct
    assert check("1.14", (14 - 5 * speed_ratio) / 9).status == "wrong"


# ------------------------------------------------------------------ choices

@pytest.mark.parametrize("answer", ["deepseek-v3", "DeepSeek-V3", "  deepseek v3 ", "DEEPSEEK_V3", "deepseek"])
def test_choices_ignore_case_spacing_and_punctuation(answer):
    assert check(CHOICE, answer).correct


def test_a_wrong_choice_is_wrong_and_a_non_choice_is_invalid():
    wrong = check(CHOICE, "Llama-3-405B")
    assert wrong.status == "wrong" and "deepseek" not in wrong.message.lower()
    not_offered = check(CHOICE, "gpt-5")
    assert not_offered.status == "invalid" and "'mixtral-8x22b'" in not_offered.message
    assert check(CHOICE, 3).status == "invalid"
    assert check(CHOICE, ["deepseek-v3"]).status == "invalid"
    assert check(CHOICE, "   ").status == "invalid"


def test_reading_the_plot_accepts_panel_alternates():
    answer = expected("1.12")
    assert check("1.12", answer.upper()).correct
    assert check("1.12", f"{answer} panel").correct


# ------------------------------------------------------------------ ids, output, strict mode

def test_unknown_problem_lists_the_known_ones():
    result = check("7.77", 1.0)
    assert result.status == "invalid"
    assert "7.77" in result.message and "1.1" in result.message


def test_ids_may_be_written_loosely():
    assert check(" 1.4 ", B_STAR).correct
    assert check("Problem 1.4", B_STAR).correct


def test_plain_text_feedback_outside_ipython(capsys):
    result = check(NUMBER, expected(NUMBER) * 1000)
    printed = capsys.readouterr().out
    assert "Problem 1.1" in printed and "units" in printed
    assert isinstance(result, CheckResult) and result.problem_id == "1.1"
    assert result.status in repr(result)


def test_html_feedback_escapes_and_keeps_a_text_twin():
    result = CheckResult("1.1", "wrong", "a < b & c")
    bundle = result._mimebundle()
    assert "a &lt; b &amp; c" in bundle["text/html"]
    assert bundle["text/plain"].endswith("a < b & c")
    with pytest.raises(ValueError):
        CheckResult("1.1", "maybe", "")


def test_the_result_holds_no_expected_value():
    result = check(NUMBER, 1.0)
    assert set(vars(result)) == {"problem_id", "status", "message", "_shown_in"}


@pytest.mark.parametrize("variable, value", [("LECTURE_STRICT", "1"), ("NBGRADER_EXECUTION", "autograde")])
def test_strict_mode_raises_on_anything_but_correct(monkeypatch, variable, value):
    monkeypatch.setenv(variable, value)
    assert checks.strict_mode()
    assert check(NUMBER, expected(NUMBER)).correct
    for bad in (expected(NUMBER) * 1000, ..., None, "text", float("nan")):
        with pytest.raises(AssertionError, match="Problem 1.1"):
            check(NUMBER, bad)
    with pytest.raises(AssertionError):
        check(EXPRESSION, 2 * B_STAR)
    with pytest.raises(KeyError):
        check("9.99", 1)
    with pytest.raises(AssertionError):
        check("9.99", 1)


def test_unknown_problem_error_is_both_kinds():
    assert issubclass(UnknownProblemError, KeyError) and issubclass(UnknownProblemError, AssertionError)
    assert str(UnknownProblemError("no such problem")) == "no such problem"


@pytest.mark.parametrize("flag", ["0", "", "no"])
def test_strict_mode_is_off_unless_asked(monkeypatch, flag):
    monkeypatch.setenv("LECTURE_STRICT", flag)
    assert not checks.strict_mode()
    assert check(NUMBER, 1.0).status == "wrong"


def test_a_broken_expected_value_is_reported_not_raised():
    def broken():
        raise RuntimeError("library bug")

    checks.PROBLEMS["0.1"] = Problem("broken", "number", broken)
    try:
        result = check("0.1", 1.0)
    finally:
        del checks.PROBLEMS["0.1"]
    assert result.status == "invalid" and "bug in lecture_lib" in result.message


def test_mistakes_use_their_own_tolerance():
    problem = Problem("t", "number", lambda: 10.0, mistakes=(Mistake(lambda: 20.0, "doubled it", rtol=0.001),))
    checks.PROBLEMS["0.2"] = problem
    try:
        assert check("0.2", 20.0).message.endswith("doubled it")
        near = check("0.2", 20.5).message   # outside its tolerance: not matched, only named as near (issue 49 walk, 28)
        assert not near.endswith("Not quite. doubled it") and "not exactly at" in near
    finally:
        del checks.PROBLEMS["0.2"]


@pytest.mark.parametrize("rtol, shown", [(0.02, "±2%"), (0.1, "±10%"), (0.004, "±0.4%"), (0.0005, "±0.05%")])
def test_correct_feedback_states_a_tolerance_that_is_never_rounded_to_zero(rtol, shown):
    checks.PROBLEMS["0.3"] = Problem("tolerance", "number", lambda: 133.0, rtol=rtol)
    try:
        assert shown in check("0.3", 133.0).message
    finally:
        del checks.PROBLEMS["0.3"]


# ----------------------------------------------------------------------------- nudges (issue 13)

def _dimensionless_number_problem():
    for pid in checks.problem_ids():
        problem = PROBLEMS[pid]
        if problem.kind == "number" and not problem.unit and not problem.mistakes:
            return pid, problem
    raise AssertionError("expected at least one dimensionless number problem")


def test_a_units_nudge_for_a_pure_number_is_a_whole_sentence():
    """Issue 13: a dimensionless answer off by 1000 used to end "The answer is wanted." (no unit)."""
    pid, problem = _dimensionless_number_problem()
    result = check(pid, float(problem.expected()) * 1000)
    assert result.status == "wrong"
    assert "wanted." not in result.message and "wanted ." not in result.message
    assert "pure number" in result.message


def test_a_units_nudge_with_a_unit_names_it():
    result = check("1.1", float(PROBLEMS["1.1"].expected()) * 1000)
    assert "The answer is wanted in seconds." in result.message


def test_the_boards_2400_gets_its_own_nudge_in_1_5():
    message = check("1.5", 2400).message
    assert "board" in message and "300" in message
    assert check("1.5", 2400).status == "wrong"


@pytest.mark.parametrize("typo, suggestion", [("flops", "FLOPs"), ("Flops", "FLOPs"), ("N_activ", "N_active"),
                                              ("memory_bw", "mem_bw"), ("N_Total", "N_total")])
def test_near_miss_symbol_names_get_a_did_you_mean(typo, suggestion):
    text = "FLOPs*N_total*bytes_param/(2*N_active*mem_bw)".replace(
        {"flops": "FLOPs", "Flops": "FLOPs", "N_activ": "N_active", "memory_bw": "mem_bw",
         "N_Total": "N_total"}[typo], typo, 1)
    result = check("1.4", text)
    assert result.status == "invalid"
    assert f"Did you mean {suggestion}?" in result.message


def test_a_name_far_from_every_symbol_gets_no_guess():
    result = check("1.4", "FLOPs*N_total*bytes_param/(2*N_active*zzzzzz)")
    assert result.status == "invalid" and "Did you mean" not in result.message


def test_choice_nudges_are_keyed_by_wrong_options_and_never_name_the_answer():
    with pytest.raises(ValueError, match="nudges"):
        Problem("t", "choice", lambda: "a", options=("a", "b"), nudges={"c": "no"})
    for pid in checks.problem_ids():
        problem = PROBLEMS[pid]
        if problem.kind != "choice":
            continue
        expected = problem.expected()
        assert expected not in problem.nudges, f"{pid} has a nudge for its own answer"
        for option, nudge in problem.nudges.items():
            result = check(pid, option)
            assert result.status == "wrong" and nudge in result.message
            assert f"'{expected}'" not in result.message


def test_every_chapter_has_at_least_three_why_problems():
    """Issue 13: at least three conceptual choice problems per chapter, each with nudges for wrong picks."""
    for chapter in range(1, 8):
        why = [pid for pid in checks.problem_ids(chapter) if PROBLEMS[pid].kind == "choice"
               and PROBLEMS[pid].title.lower().startswith("why")]
        assert len(why) >= 3, f"chapter {chapter} has {len(why)} 'why' choice problems"
        for pid in why:
            assert PROBLEMS[pid].nudges, f"{pid} gives no nudge for a tempting wrong choice"


def test_quoted_arithmetic_is_told_how_to_write_it_in_python():
    """A learner's walk: answer = "1.5552*10^15" was called "units or words". Quoted arithmetic gets the Python
    spelling, with ** for a power (an unquoted ^ is XOR); words and units keep their own advice."""
    powered = check(NUMBER, "1.5552*10^15")
    assert powered.status == "invalid" and "1.5552*10**15" in powered.message and "not a power" in powered.message
    assert "remove the quotes and write it in Python: 1.5e15*2" in check(NUMBER, "1.5e15*2").message
    for words in ("3 GB", "2 B", "about ten"):
        assert "units or words" in check(NUMBER, words).message, words
