"""Issue 31 §4: under nbgrader an answer read off the checker's own key scores 0 and says why, an
honest answer still scores, and a failed check is one line, not a traceback through the checker."""

import json
import os
import subprocess
import sys

import pytest

from lecture_lib.practice import checks, integrity

_KERNEL = """
import json, sys
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
outcomes = []
for cell in json.loads(sys.argv[1]):
    result = shell.run_cell(cell, store_history=True)
    error = result.error_in_exec
    outcomes.append([result.success, str(error) if error is not None else "",
                     error._render_traceback_() if hasattr(error, "_render_traceback_") else None])
print("OUTCOMES " + json.dumps(outcomes))
"""

SETUP = "from lecture_lib.practice import checks\nfrom lecture_lib.practice.checks import check"


def _run(cells, execution="autograde", tmp_path=None):
    env = {key: value for key, value in os.environ.items() if key not in ("LECTURE_STRICT", "PYTEST_CURRENT_TEST")}
    env.update(LECTURE_PROGRESS_FILE="off", PYTHONDONTWRITEBYTECODE="1")
    if execution:
        env["NBGRADER_EXECUTION"] = execution
    else:
        env.pop("NBGRADER_EXECUTION", None)
    run = subprocess.run([sys.executable, "-c", _KERNEL, json.dumps(cells)], env=env, capture_output=True,
                         text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    line = [text for text in run.stdout.splitlines() if text.startswith("OUTCOMES ")][-1]
    return json.loads(line.removeprefix("OUTCOMES ")), run.stdout


def test_the_answer_key_scores_zero_at_autograde_honest_work_scores_and_failures_are_one_line(tmp_path):
    cells = [SETUP,
             # honest work with the library's presets and formulas scores
             "from lecture_lib import hardware, roofline\nh100 = hardware.get('H100')\n"
             "answer = roofline.HBM_DRAIN_TIME(hbm_capacity=h100.hbm_capacity, mem_bw=h100.hbm_bandwidth)",
             "check('1.1', answer)",
             "answer = checks._expected(checks.PROBLEMS['1.1'])", "check('1.1', answer)",
             "answer = checks.PROBLEMS['1.3'].expected()", "check('1.3', answer)",
             "f = getattr(checks, 'PROB' + 'LEMS')['1.4']\nanswer = getattr(f, 'exp' + 'ected')()",
             "check('1.4', answer)",
             "from lecture_lib.practice.problems import ch01 as c\nanswer = getattr(c, '_h100_drain')()",
             "check('1.2', answer)",
             "answer = 123.0", "check('1.5', answer)"]
    outcomes, shown = _run(cells, tmp_path=tmp_path)
    assert outcomes[2][0], outcomes[2]
    for index in (4, 6, 8, 10):
        passed, error, lines = outcomes[index]
        assert not passed and "No credit when autograded" in error and "answer key" in error, outcomes[index]
        assert lines == [f"✗ Problem {error.split(':')[0].split()[-1]} not passed (invalid): "
                         "the checker's message above says why."]
    assert "PROBLEMS['1.1'].expected was called outside check()" in outcomes[4][1]
    assert "ch01._h100_drain was called outside check()" in outcomes[10][1]
    assert shown.count("No credit when autograded") >= 4          # the check cell's own output says why
    passed, error, lines = outcomes[12]
    assert not passed and error.startswith("Problem 1.5: wrong:")
    assert lines == ["✗ Problem 1.5 not passed (wrong): the checker's message above says why."]


def test_text_naming_the_key_is_caught_even_if_nothing_was_wrapped_and_outside_nbgrader_nothing_is(tmp_path):
    # without NBGRADER_EXECUTION nothing is wrapped and the key's answer passes (self-study is not policed)
    cells = [SETUP, "answer = checks._expected(checks.PROBLEMS['1.1'])", "check('1.1', answer)",
             "print('wrapped:', hasattr(checks.PROBLEMS['1.1'].expected, '__lecture_watched__'))",
             # set only after the import: no wrappers, but the text of the cells still tells
             "import os\nos.environ['NBGRADER_EXECUTION'] = 'autograde'",
             "answer = checks._expected(checks.PROBLEMS['1.3'])", "check('1.3', answer)"]
    outcomes, shown = _run(cells, execution=None, tmp_path=tmp_path)
    assert all(passed for passed, _, _ in outcomes[:6]), outcomes
    assert "wrapped: False" in shown
    assert not outcomes[6][0] and "the cells run for it use checks._expected" in outcomes[6][1]


def test_in_this_process_a_strict_failure_is_a_check_failed(monkeypatch):
    monkeypatch.setenv("LECTURE_STRICT", "1")
    monkeypatch.setenv("LECTURE_PROGRESS_FILE", "off")
    with pytest.raises(AssertionError) as caught:
        checks.check("1.1", 1e-30)
    assert isinstance(caught.value, checks.CheckFailed)
    assert caught.value._render_traceback_()[0].startswith("✗ Problem 1.1 not passed")
    assert integrity.verdict("1.1") is None or integrity.watching()


def test_the_text_rule_reads_code_not_comments():
    assert integrity._named_in(["# the expected value, from the model registry and PROBLEMS\nanswer = 3"]) is None
    assert integrity._named_in(["from lecture_lib.practice.registry import PROBLEMS"]) is not None
    assert integrity._named_in(["answer = checks._expected(p)  # just checking"]) == "checks._expected"
    assert integrity._named_in(["from lecture_lib.practice.problems.ch01 import _h100_drain"]) is not None
    assert integrity._named_in(["expected_value = 3\nanswer = expected_value"]) is None
