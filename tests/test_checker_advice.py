"""Issue 49 §4: a checker whose advice runs. A failed work cell never lets the next check judge a leftover answer;
every nudge that proposes code proposes code that runs; the walkthrough's slips each get their own nudge; the
exercise notebooks reach no problem module's helpers, and a problem's figure does not print its answer."""

import ast
import math
import re
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from lecture_lib import symbols
from lecture_lib.practice import answers, checks, problem_data
from lecture_lib.practice.registry import PROBLEMS

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------ a failed work cell
class FakeShell:
    """What check() reads of IPython: whether the cell run before failed, and that cell's source."""

    def __init__(self, succeeded: bool, source: str):
        self.last_execution_succeeded = succeeded
        self.last_execution_result = SimpleNamespace(info=SimpleNamespace(raw_cell=source))
        self.execution_count = 7
        self.user_ns = {"In": ["", source, "check('2.12', answer)"]}


@pytest.fixture
def shell(monkeypatch):
    def install(succeeded: bool, source: str = "answer = 2·8·7168"):
        fake = FakeShell(succeeded, source)
        monkeypatch.setattr("IPython.get_ipython", lambda: fake)
        return fake
    return install


def _choice_answer(problem_id: str) -> str:
    return str(PROBLEMS[problem_id].expected())


@pytest.mark.parametrize("problem_id, answer", [("2.12", None), ("1.1", 3.0), ("4.3", "N_total/(E*P)")])
def test_a_check_under_a_failed_work_cell_judges_nothing_choices_included(shell, problem_id, answer):
    """The walkthrough: `answer = 2·8·7168` raised a SyntaxError and the check under it judged the choice "b" left
    from 2.12. Now any answer, right or wrong, choice or number, is not judged after a failed cell."""
    answer = _choice_answer(problem_id) if answer is None else answer
    shell(False, "answer = 2·8·7168")
    result = checks.check(problem_id, answer)
    assert result.status == "unanswered" and "stopped with an error" in result.message
    shell(True, "answer = 1")
    assert checks.check(problem_id, answer).status != "unanswered" or problem_id != "2.12"


def test_a_right_choice_after_a_failed_cell_is_not_judged_either(shell):
    right = _choice_answer("2.12")
    shell(False, "answer = 1.468*10^-4")
    assert checks.check("2.12", right).status == "unanswered"
    shell(True)
    assert checks.check("2.12", right).status == "correct"


def test_a_failed_check_cell_run_again_is_judged(shell):
    """A strict check raises by design: running it again is not a failed work cell."""
    shell(False, "check('2.12', answer)")
    assert checks.check("2.12", _choice_answer("2.12")).status == "correct"


def test_record_gives_the_same_advice_and_records_the_same_thing(shell):
    shell(False, "answer = 2·8·7168")
    payload = answers._payload("2.12", "b")
    said = answers.said("2.12", payload, "b")
    assert "stopped with an error" in said and payload == {"problem": "2.12", "kind": "text", "value": "b"}
    shell(True, "answer = 'b'")
    assert "stopped with an error" not in answers.said("2.12", payload, "b")


# ------------------------------------------------------------------ advice that runs
LEARNER_ARITHMETIC = ["2·8·7168", "1.468×10^-4", "1.468×10**-4", "1.468 × 10⁻⁴", "10⁻³·5", "1.5552*10^15",
                      "2(3+4)", "√2", "2 × 10⁵", "3e5", "2^11", "−4", "2 ^ 3 - 2", "(8 + 8)·2", "7168 ⋅ 2 / 4",
                      "2.5×10^{-3}", "1/2^3"]
PROPOSES = re.compile(r"(?:write it in Python: |without quotes as )(\S+(?: [-+] \S+)*)")


def _runs(code: str) -> float:
    tree = ast.parse(code, mode="eval")
    assert all(isinstance(node, (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.operator, ast.unaryop))
               for node in ast.walk(tree)), code
    return checks._arithmetic(tree.body)        # walked, not run


@pytest.mark.parametrize("text", LEARNER_ARITHMETIC)
def test_every_proposed_python_runs_and_means_what_was_typed(text):
    """The walkthrough was told "remove the quotes: 2·8·7168" and "write it without quotes as 1.468×10**-4":
    neither runs. Every proposal now parses as Python and gives the number the learner typed."""
    try:
        meant = float(symbols.parse(text))
    except Exception:
        pytest.skip(f"{text!r} is not arithmetic the checker reads")
    message = checks.check("1.1", text).message
    proposal = PROPOSES.search(message)
    assert proposal, message
    code = proposal.group(1).rstrip(".")
    assert math.isclose(_runs(code), meant, rel_tol=1e-9), (text, code)
    assert not re.search(r"[×·⋅−⁰¹²³⁴⁵⁶⁷⁸⁹⁻^√]", code), code


def test_the_walkthroughs_two_proposals_are_now_python():
    assert checks._advice_for_quoted_arithmetic("2·8·7168").endswith(": 2*8*7168")
    assert "as 1.468*10**-4 " in checks._advice_for_quoted_arithmetic("1.468×10^-4")


def _messages():
    for pid, problem in PROBLEMS.items():
        for mistake in problem.mistakes:
            yield pid, mistake.message
        yield from ((pid, text) for text in problem.nudges.values())
        if problem.wrong_hint:
            yield pid, problem.wrong_hint


def test_code_quoted_in_every_problem_message_parses():
    """Code a nudge writes in backticks, or a call it names in brackets ("loads.mean()", "sp.solve(...)[0]"),
    is Python that parses."""
    found = 0
    for pid, text in _messages():
        for code in re.findall(r"`([^`]+)`", text) + re.findall(r"\(([\w.]+\([^()]*\)(?:\[\d\])?)\)", text):
            found += 1
            ast.parse(code.replace("...", "x"), mode="eval")
    assert found


# ------------------------------------------------------------------ each slip its own nudge
def test_problem_2_9_sum_for_mean_is_named():
    layer, tokens = problem_data.tiny_router_layer()
    loads = layer.route(tokens).gpu_loads()
    message = checks.check("2.9", loads.max() / loads.sum()).message
    assert "sum of the loads" in message and "bits vs bytes" not in message


def test_problem_4_1_active_for_total_with_the_boards_37_b():
    for active in (37e9, 36.6e9):
        message = checks.check("4.1", active / 64).message
        assert "active parameters" in message, (active, message)


def test_problem_4_3_reads_a_strings_E_as_the_chapters_E():
    """The chapter imports E (symbols.E is n_ep, the GPUs of expert parallelism): a string's E means the same."""
    from lecture_lib import pipeline_memory as pm

    assert symbols.E is symbols.n_ep
    typed = str(pm.MEMORY_PER_GPU_PIPELINED.rhs).replace("n_ep", "E")
    assert "E" in typed and checks.check("4.3", typed).status == "correct"
    wrong = checks.check("4.3", "N_total*bytes_param/(E*P)")
    assert wrong.status == "wrong" and "does not define" not in wrong.message and "Euler" not in wrong.message


def test_a_strings_E_is_the_loss_where_the_answer_uses_the_loss():
    expected = symbols.E_loss + symbols.A_loss
    assert checks._as_expression("E + A_loss", expected) == expected


# ------------------------------------------------------------------ what an exercise notebook reaches
EXERCISES = sorted((ROOT / "exercises").glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("path", EXERCISES, ids=[p.stem[:2] for p in EXERCISES])
def test_no_exercise_imports_a_problem_module(path):
    """`ch02._kimi_experts_per_gpu()` was one Tab away in the chapter 2 exercises: the notebooks import the
    problems' inputs from lecture_lib.practice.problem_data, which computes no answer."""
    code = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
    assert not re.search(r"practice\.problems\b|practice import problems\b", code)


def test_problem_data_defines_no_answer():
    public = [name for name in vars(problem_data) if not name.startswith("_")]
    assert set(problem_data.__all__) <= set(public)
    assert not any(name.startswith(("_busiest", "_red_lines", "_kimi", "_smallest", "_two_rack")) for name in vars(problem_data))


def test_no_problem_figure_prints_its_answer():
    """2.10's figure title said "46% of these copies": the solutions draw routing figures without the share."""
    for path in sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            for call in re.findall(r"routing_figure\([^\n]*", cell.source):
                assert "show_share=False" in call, (path.name, call)


@pytest.mark.slow
def test_in_a_real_kernel_the_walkthroughs_failed_cells_are_not_judged():
    """The walkthrough's two failed work cells, in an IPython kernel: `answer = 2·8·7168` (SyntaxError, raised before
    the cell runs) and `1.468*10^-4` (TypeError, raised while it runs). The checks under them judge nothing, though
    `answer` still holds 2.12's right choice; once a work cell runs, its check judges again."""
    from nbclient import NotebookClient

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in (
        "from lecture_lib.practice.checks import check", "answer = 'b'", "check('2.12', answer)",
        "answer = 2·8·7168", "check('1.1', answer)", "answer = 1.468*10^-4", "check('1.3', answer)",
        "answer = 5", "check('1.1', answer)")]
    NotebookClient(notebook, timeout=120, kernel_name="python3", allow_errors=True).execute()
    said = ["".join(output.get("data", {}).get("text/plain", "")) for cell in notebook.cells[4::2]
            for output in cell.outputs]
    assert len(said) == 3
    assert all("Not judged: the cell run just before" in text for text in said[:2]), said
    assert "Problem 1.1: Not quite" in said[2]


def test_problem_data_draws_no_answer_where_the_key_is_hidden(monkeypatch):
    """At autograde the sandbox covers lecture_lib/practice/problems: 3.4's chart says it is not drawn there instead
    of raising; the other inputs need no problem module at all."""
    import sys

    from lecture_lib.practice import problems

    monkeypatch.setitem(sys.modules, "lecture_lib.practice.problems.ch03", None)
    monkeypatch.delattr(problems, "ch03")
    assert "not drawn" in problem_data.mystery_gantt()
    layer, tokens = problem_data.tiny_router_layer()
    assert tokens.shape == (4000, 16) and problem_data.figure_routing().experts.shape[0] == 64


# ------------------------------------------------------------------ a learner's walk of chapters 8 and 9
# Findings 24-31 of the walk: the chapter's own notation, nudges true of the answer given, parse failures that name
# their cause, unit and reciprocal nudges, a problem's own slip before a generic guess, slips that give one value,
# numbers written with separators, and one answer per question.

def _board_text(problem_id: str) -> str:
    """The expected expression as the chapter writes it: each symbol by its board letter (the notation table's
    letter, or the problem's own ``letters``), else by its name."""
    import sympy as sp

    problem = PROBLEMS[problem_id]
    expected = problem.bound().expected()
    own = {name: letter for letter, name in problem.letters.items()}
    swap = {}
    for symbol in expected.free_symbols:
        latex = symbols.TABLE[symbol.name].latex
        swap[symbol] = sp.Symbol(own.get(symbol.name) or (latex if latex.isidentifier() else symbol.name))
    return str(expected.xreplace(swap))


EXPRESSION_PROBLEMS = [pid for pid, p in PROBLEMS.items() if p.kind == "expression"]


def test_8_1_in_the_chapters_own_notation_is_right():
    """Finding 24: "E(1-(1-k/E)^B)" was read as a call of E, and "E*(1-(1-k/E)^B)" as the GPUs of expert
    parallelism. The chapter's E and k are this problem's n_experts and k_active."""
    for text in ("E(1-(1-k/E)^B)", "E*(1-(1-k/E)^B)", "E (1 − (1 − k/E)^B)", "n_experts(1-(1-k_active/n_experts)^B)"):
        assert checks.check("8.1", text).status == "correct", text


def test_a_known_symbol_before_a_bracket_is_a_product_as_a_number_is():
    """The parse message promises 2(B+1) is a product; E(...), k(...) and B(...) are too. A function is still called,
    and another name before a bracket is refused by name, with the product it might have meant."""
    letter_e = symbols.parse("E", unknown="symbol")
    assert symbols.parse("E(1+B)", unknown="symbol") == letter_e * (1 + symbols.B)
    assert symbols.parse("n_ep(1+B)") == symbols.n_ep * (1 + symbols.B)
    assert symbols.parse("B(B+1)") == symbols.B * (symbols.B + 1)
    assert symbols.parse("k(2)", unknown="symbol").free_symbols == {symbols.parse("k", unknown="symbol")}
    assert symbols.parse("sqrt(B)") == symbols.parse("B^(1/2)")
    with pytest.raises(symbols.ParseError, match=r"Sqrt\(\.\.\.\) reads as calling Sqrt.*Sqrt\*\(\.\.\.\)"):
        symbols.parse("Sqrt(B)")


@pytest.mark.parametrize("problem_id", EXPRESSION_PROBLEMS)
def test_every_expression_problem_takes_its_answer_in_the_board_letters(problem_id):
    """The kind of finding 24: each expression problem accepts the answer written with the letters its chapter
    writes (3.3's m, 5.7's a, b, p, q, 8.1's E and k), not only the course's names."""
    text = _board_text(problem_id)
    assert checks.verdict(problem_id, text)[0] == "correct", text


def test_a_letter_read_as_another_quantity_is_told_which_names_to_write():
    message = checks.check("8.1", "n_ep*(1-(1-k/n_ep)^B)").message
    assert "uses n_ep and not n_experts" in message and "E for n_experts" in message


def test_8_1_times_b_slip_has_its_own_nudge_and_no_false_check():
    """Finding 25: the slip (1 - k/E)·B passes the B = 1 check, yet was told to check B = 1."""
    message = checks.check("8.1", "n_experts*(1-(1-k_active/n_experts)*B)").message
    assert "to the power B, not times B" in message and "does not give" not in message


def _wrong_forms(expected):
    import sympy as sp

    first = sorted(expected.free_symbols, key=lambda s: s.name)[0]
    return [2 * expected, expected + 1, expected.xreplace({first: 2 * first}), expected ** 2, 1 / expected,
            expected.xreplace({first: first + 1}), sp.Integer(3) * first]


@pytest.mark.parametrize("problem_id", [pid for pid in EXPRESSION_PROBLEMS if PROBLEMS[pid].probes])
def test_every_probe_nudge_is_true_of_the_answer_it_is_given(problem_id):
    """The kind of finding 25: a special case ("at B = 1 it must give k") is evaluated on the learner's own
    expression; the message says it fails there exactly when it does, and never tells a passing answer to check it."""
    problem = PROBLEMS[problem_id]
    expected = problem.bound().expected()
    names = {row.symbol.name: row.symbol for row in symbols.TABLE.values()}
    for given in _wrong_forms(expected):
        status, message = checks.verdict(problem_id, given)
        if status != "wrong":
            continue
        for probe in problem.probes:
            at = {names[name]: value for name, value in probe.at.items()}
            agree = checks._spot_check(given.subs(at), expected.subs(at))
            said_fails = f"At {probe.label} your expression does not give" in message
            assert said_fails == (agree is False), (given, probe.label, message)


def test_no_hint_tells_every_wrong_answer_to_run_a_check():
    """A wrong_hint is added to every wrong answer, so it cannot claim a check the answer may pass: such checks are
    probes now."""
    for pid, problem in PROBLEMS.items():
        assert not re.search(r"must give|\bCheck:", problem.wrong_hint), pid


@pytest.mark.parametrize("text, cause", [
    ("n_experts*(1-(1-k_active/n_experts)^B", "unbalanced brackets"),
    ("n_experts*(1-(1-k_active/n_experts))^B)", "closes nothing"),
    ("E(1-(1-k/E)^B) $", "stray character"),
    ("E*(1-(1-k/E)^B) +", "ends with '+'"),
    ("x = E*(1-(1-k/E)^B)", "not an equation"),
])
def test_a_parse_failure_names_its_cause(text, cause):
    """Finding 26: a missing bracket got only the list of what is read."""
    result = checks.check("8.1", text)
    assert result.status == "invalid" and cause in result.message, result.message


def test_a_step_time_for_a_rate_is_called_upside_down():
    """Finding 27: 8.4 answered with the step's time in seconds got only "too low"."""
    expected = PROBLEMS["8.4"].bound().expected()
    message = checks.check("8.4", 1 / expected).message
    assert "1 over the expected one" in message and "tokens per second" in message
    assert "1 over" in checks.check("8.4", 1000 / expected).message          # in milliseconds
    far = checks.check("8.4", expected / 300).message
    assert "rate in tokens per second" in far and "step's time" in far


@pytest.mark.parametrize("problem_id", [pid for pid, p in PROBLEMS.items() if p.kind == "number"])
def test_every_number_problem_names_a_reciprocal(problem_id):
    """The kind of finding 27: 1/answer (in some unit) is named upside down in every number problem, unless one of
    the problem's own slips gives that value."""
    import math

    problem = PROBLEMS[problem_id].bound()
    expected = float(problem.expected())
    if expected <= 0 or abs(math.log10(expected)) < 0.5:
        pytest.skip("an answer near 1 is its own reciprocal")
    status, message = checks.verdict(problem_id, 1 / expected)
    slips = [m.message for m in problem.mistakes]
    assert status == "wrong" and ("1 over" in message or any(s in message for s in slips)), message


def test_a_per_gpu_slip_near_its_value_beats_bits_vs_bytes():
    """Finding 28: 9.4 with one GPU's NIC (and a small slip besides) was told "bits vs bytes?"."""
    expected = PROBLEMS["9.4"].bound().expected()
    message = checks.check("9.4", expected * 8 * 32 / 31).message
    assert "node's 8 × 50 GB/s" in message and "bits vs bytes" not in message
    eighth = checks.check("9.4", expected / 8).message      # no slip of this problem: both causes are named
    assert "bits vs bytes" in eighth and "per GPU vs per node" in eighth


def test_two_slips_with_one_value_are_both_named():
    """Finding 29: 9.1 with the all-reduce's own factor 2 dropped was told it had one all-reduce per layer."""
    message = checks.check("9.1", PROBLEMS["9.1"].bound().expected() / 2).message
    assert "one all-reduce per layer" in message and "reduce-scatter and then an all-gather" in message
    assert "Two different slips" in message


@pytest.mark.parametrize("problem_id", [pid for pid, p in PROBLEMS.items() if p.kind == "number" and len(p.mistakes) > 1])
def test_every_value_two_slips_share_names_both(problem_id):
    """The kind of finding 29, in every problem: where two of its slips give the same value, both are named."""
    problem = PROBLEMS[problem_id].bound()
    values = [(float(m.value()), m.message, m.rtol) for m in problem.mistakes]
    for value, message, _ in values:
        same = [text for other, text, rtol in values if checks._near(value, other, rtol)]
        said = checks.verdict(problem_id, value)[1]
        if checks._near(value, float(problem.expected()), problem.rtol):
            continue
        assert all(text in said for text in same), (problem_id, said)


@pytest.mark.parametrize("text, number", [("2,400", 2400), ("1,200.5", 1200.5), ("2 400", 2400),
                                          ("12,345,678", 12345678), ("2\u202f400", 2400)])
def test_a_number_with_thousands_separators_is_told_the_separator_and_the_python(text, number):
    """Finding 30: "2,400" was told "the checker does not read units or words"."""
    message = checks.check("9.4", text).message
    assert "thousands separator" in message and "units or words" not in message
    proposal = PROPOSES.search(message)
    assert proposal and math.isclose(_runs(proposal.group(1).rstrip(".")), number), message


def test_2_400_unquoted_is_a_tuple_and_is_told_so():
    message = checks.check("9.4", (2, 400)).message
    assert "thousands separator" in message and "2400" in message


def test_quoted_arithmetic_for_a_number_problem_is_refused_with_python_that_runs():
    """Finding 30: "16^2/(4*15)" is refused for a number problem (consistently: a number problem takes a Python
    number, only an expression problem reads a string), and the proposal runs."""
    result = checks.check("9.3", "16^2/(4*15)")
    assert result.status == "invalid" and "only an expression problem reads a string" in result.message
    assert math.isclose(_runs(PROPOSES.search(result.message).group(1)), 16**2 / 60)


def test_8_8_takes_whole_keys_only():
    """Finding 31: any fragment ("batch1") was accepted; the statement asks for the key."""
    right = str(PROBLEMS["8.8"].expected())
    assert checks.check("8.8", right).status == "correct"
    for fragment in ("batch1", "batch 1", "405b", "deepseek decode"):
        assert checks.check("8.8", fragment).status == "invalid", fragment


def test_each_problem_statement_asks_one_question():
    """Finding 31: 9.5 and 9.8 each asked two questions for one answer. A statement (before its hint) asks one."""
    for path in sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "markdown" and cell.source.startswith("### Problem"):
                body = re.sub(r"https?://\S+|\$[^$]*\$", "", cell.source.split("<details>")[0].split("\n", 1)[1])
                assert body.count("?") <= 1 or "Why?" in body, (path.name, cell.source.splitlines()[0])
