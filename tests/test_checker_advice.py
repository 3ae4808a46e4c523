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
