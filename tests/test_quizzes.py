"""The quiz and exam bank (quizzes/, lecture_lib/practice/problems/quizNN.py): issue 47, "the instructor's kit".

- each chapter's quiz has at least 6 problems of its own (numbers N.101 and up), in the solutions' format, with
  numbers, choices and most numbers varying per student; the final exam draws from them;
- every bank problem's expected value is computed, for the text's numbers and for every number a student may draw;
- the quiz notebooks run strictly with every check correct (LECTURE_STRICT=1), and are committed without outputs;
- the release route is the practice problems' own: ``nbgrader-source quizzes COURSE`` writes quizNN and final, whose
  released copies hold no solution line, no expected value and no mention of the solutions, with ``record()``
  checks and each student's numbers; the grader credits a student's own numbers and not the text's;
- the bank stays out of the practice set (``problem_ids()``, ``make exercises``).
"""

import math
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import sympy as sp
from notebook_runs import executed

from lecture_lib.practice import checks, exercises, grading, variants
from lecture_lib.practice.registry import BANK_START, PROBLEMS

ROOT = Path(__file__).resolve().parents[1]
QUIZ_DIR = ROOT / "quizzes"
QUIZZES = sorted(QUIZ_DIR.glob("[0-9][0-9]_*_quiz.ipynb"))
EXAM = QUIZ_DIR / "99_final_exam.ipynb"
LAB = {11}     # the lab after Chapter 1 (notebooks/11_lab_...): no quiz
LECTURE_CHAPTERS = {int(path.name[:2]) for path in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")} - {0} - LAB
NOTEBOOKS = QUIZZES + [EXAM]
NAMES = [path.name for path in NOTEBOOKS]
BANK = checks.problem_ids(bank=True)


def read(path):
    return nbformat.read(path, as_version=4)


def found(path):
    return exercises.problems(read(path), where=path.name)


def numbers_for(problem_id):
    """The text's numbers, then each variant's every choice with the others at the text's values."""
    problem = PROBLEMS[problem_id]
    yield problem.defaults()
    for vary in problem.variants:
        for choice in vary.choices:
            yield {**problem.defaults(), vary.name: choice}


# ------------------------------------------------------------------ the bank's shape

def test_every_chapter_has_a_quiz_and_there_is_a_final():
    assert [path.name[:2] for path in QUIZZES] == [f"{n:02d}" for n in sorted(LECTURE_CHAPTERS)]
    assert EXAM.exists()


@pytest.mark.parametrize("path", QUIZZES, ids=[p.name for p in QUIZZES])
def test_each_quiz_has_six_new_problems_in_the_solutions_format(path):
    chapter = int(path.name[:2])
    problems = found(path)
    ids = [p.problem_id for p in problems]
    assert len(ids) >= 6 and ids == checks.problem_ids(chapter, bank=True)
    assert all(int(pid.split(".")[1]) >= BANK_START for pid in ids)
    assert not set(ids) & set(checks.problem_ids(chapter)), "a quiz question is in the practice set"
    notebook = read(path)
    kinds = [PROBLEMS[pid].kind for pid in ids]
    assert kinds.count("choice") >= 2 and kinds.count("number") >= 3, kinds
    numbers = [pid for pid in ids if PROBLEMS[pid].kind == "number"]
    assert sum(bool(PROBLEMS[pid].variants) for pid in numbers) > len(numbers) / 2, "most numbers must vary"
    texts = " ".join(notebook.cells[p.heading].source for p in problems)
    assert "lecture did not" in texts or "chapter did not" in texts, "a transfer question is missing"
    for p in problems:
        assert p.level in exercises.LEVELS and p.difficulty
        assert notebook.cells[p.check].source.strip() == f'check("{p.problem_id}", answer)'
        region = exercises.solution_regions(notebook.cells[p.work].source)[0]
        assert re.search(r"^\s*answer\s*=", region, re.MULTILINE) and "#" in region


def test_the_final_exam_draws_from_every_quiz():
    ids = [p.problem_id for p in found(EXAM)]
    assert len(ids) >= 12 and set(ids) <= set(BANK)
    assert {pid.split(".")[0] for pid in ids} == {str(n) for n in LECTURE_CHAPTERS}
    quiz_cells = {}
    for path in QUIZZES:
        notebook = read(path)
        for p in found(path):
            quiz_cells[p.problem_id] = [notebook.cells[i].source for i in (p.heading, p.work, p.check)]
    exam = read(EXAM)
    for p in found(EXAM):
        assert [exam.cells[i].source for i in (p.heading, p.work, p.check)] == quiz_cells[p.problem_id], \
            f"the exam's {p.problem_id} differs from its quiz's"


def test_the_bank_stays_out_of_the_practice_set():
    assert len(BANK) >= 54
    assert not set(BANK) & set(checks.problem_ids())
    assert all(not name.endswith("_quiz.ipynb") for name in exercises.render(ROOT / "solutions"))
    assert not list((ROOT / "exercises").glob("*quiz*")) and not list((ROOT / "exercises").glob("*exam*"))


@pytest.mark.parametrize("name", NAMES)
def test_committed_without_outputs(name):
    for cell in read(QUIZ_DIR / name).cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None


def test_assignment_names():
    assert exercises.assignment_name("01_batch_size_cost_and_speed.ipynb") == "ch01"
    assert exercises.assignment_name("01_batch_size_cost_and_speed_quiz.ipynb") == "quiz01"
    assert exercises.assignment_name("99_final_exam.ipynb") == "final"


# ------------------------------------------------------------------ computed, for every student

@pytest.mark.parametrize("problem_id", BANK)
def test_expected_is_computed_for_every_number_a_student_may_draw(problem_id):
    problem = PROBLEMS[problem_id]
    seen = set()
    for numbers in numbers_for(problem_id):
        value = problem.bound(numbers or None).expected()
        if problem.kind == "number":
            assert isinstance(value, float) and math.isfinite(value) and value > 0, (numbers, value)
            seen.add(round(value, 12))
            for mistake in problem.bound(numbers or None).mistakes:
                assert not math.isclose(mistake.value(), value, rel_tol=problem.rtol), \
                    f"{problem_id}: a mistake equals the answer for {numbers}"
        elif problem.kind == "choice":
            assert value in problem.options
        else:
            assert isinstance(value, sp.Basic)
    if problem.kind == "number" and problem.variants:
        assert len(seen) > 1, f"{problem_id}: its numbers vary but its answer does not"


@pytest.mark.parametrize("problem_id", [pid for pid in BANK if PROBLEMS[pid].variants])
def test_the_grader_credits_a_students_own_numbers_only(problem_id):
    problem = PROBLEMS[problem_id]
    text_answer = problem.bound().expected()
    for student in ("alice", "bob", "carol"):
        mine = variants.draw(problem_id, student, seed="spring-2027")
        own = problem.bound(mine).expected()
        status, message = grading.judge(problem_id, {"kind": "number", "value": float(own)}, student, seed="spring-2027")
        assert status == "correct", (student, mine, message)
        if not math.isclose(own, text_answer, rel_tol=problem.rtol):
            status, _ = grading.judge(problem_id, {"kind": "number", "value": float(text_answer)}, student,
                                      seed="spring-2027")
            assert status != "correct", f"{problem_id}: the text's answer scores for {student}"


# ------------------------------------------------------------------ the release route

@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = tmp_path_factory.mktemp("quiz-course")
    assert exercises.main(["nbgrader-source", str(QUIZ_DIR), str(course), "--exchange", str(course / "exchange"),
                           "--seed", "spring-2027"]) == 0
    return course


def _renderings(value: float) -> set[str]:
    forms = {f"{value:.3g}", f"{value:.4g}", f"{value:,.0f}", f"{value:.0f}"}
    return {form for form in forms if sum(ch.isdigit() for ch in form) >= 3}


def test_nbgrader_source_writes_each_quiz_and_the_final(course):
    names = sorted(path.name for path in (course / "source").iterdir())
    assert sorted(names) == sorted([f"quiz{n:02d}" for n in LECTURE_CHAPTERS] + ["final"])


@pytest.mark.parametrize("name", NAMES)
def test_the_released_copy_holds_no_solution_and_no_answer(course, name):
    assignment = exercises.assignment_name(name)
    source = read(course / "source" / assignment / name)
    student = [exercises.strip_solutions(cell.source) if cell.cell_type == "code" else cell.source
               for cell in source.cells]   # what nbgrader's ClearSolutions leaves (tested below with nbgrader itself)
    text = "\n".join(student)
    assert "BEGIN SOLUTION" not in text and "END SOLUTION" not in text
    assert not re.search(r"\bsolutions\b", text, re.IGNORECASE)
    student_lines = {line.strip() for source in student for line in source.split("\n") if line.strip()}
    original = read(QUIZ_DIR / name)
    for cell in original.cells:
        for region in exercises.solution_regions(cell.source):
            for line in region.split("\n"):
                line = line.strip()
                if re.search(r"[A-Za-z0-9]", line):   # a lone bracket is not a leak (the rule of test_exercises)
                    leaked = line in student_lines or (len(line) >= 20 and any(line in s for s in student))
                    assert not leaked, f"{name}: solution line released: {line!r}"
    for p in found(QUIZ_DIR / name):
        problem = PROBLEMS[p.problem_id]
        assert f'record("{p.problem_id}", answer)' in text and f'check("{p.problem_id}"' not in text
        if problem.variants:
            assert f"your_numbers({p.problem_id!r}" in text
        if problem.kind == "number":
            for form in _renderings(float(problem.expected())):
                assert not re.search(rf"(?<![\d.]){re.escape(form)}(?![\d])", text), \
                    f"{p.problem_id}: its answer {form!r} appears in the released {name}"


@pytest.mark.parametrize("name", ["01_batch_size_cost_and_speed_quiz.ipynb", "99_final_exam.ipynb"])
def test_nbgrader_generate_assignment_releases_the_quiz(course, name):
    pytest.importorskip("nbgrader", reason="nbgrader is optional (the grade extra)")
    assignment = exercises.assignment_name(name)
    done = subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", assignment, "--no-db",
                           f"--CourseDirectory.root={course}"], cwd=course, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"})
    assert done.returncode == 0, done.stdout + done.stderr
    released = read(course / "release" / assignment / name)
    text = "\n".join(cell.source for cell in released.cells)
    assert "BEGIN SOLUTION" not in text and exercises.STUB in text
    code = "\n".join(cell.source for cell in released.cells if cell.cell_type == "code")
    assert code.count('record("') == len(found(QUIZ_DIR / name))
    assert all(not cell.get("outputs") for cell in released.cells if cell.cell_type == "code")


# ------------------------------------------------------------------ running them

@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_quizzes_run_strictly_with_every_check_correct(name):
    notebook = executed(QUIZ_DIR / name, LECTURE_STRICT="1")[0]
    errors = [f"{out.get('ename')}: {out.get('evalue')}" for cell in notebook.cells
              for out in cell.get("outputs", []) if out.get("output_type") == "error"]
    assert not errors, errors
    feedback = {}
    for cell in notebook.cells:
        match = exercises._CHECK_CALL.search(cell.source) if cell.cell_type == "code" else None
        if match:
            feedback[match.group(1)] = "\n".join(out.get("data", {}).get("text/plain", "") for out in cell.outputs)
    assert list(feedback) == [p.problem_id for p in found(QUIZ_DIR / name)]
    for problem_id, text in feedback.items():
        assert "Correct" in text, f"problem {problem_id}: {text!r}"


# ------------------------------------------------------------------ a quiz through the whole route, and its grades

from test_graded_work import _fill, pretend_class, students_config_and_nbgrader  # noqa: E402 (as in the chapters' route test)


def _answer_code(value) -> str:
    return f"answer = {float(value)!r}" if not isinstance(value, str) else f"answer = {value!r}"


@pytest.mark.classroom
def test_a_quiz_is_released_autograded_for_each_students_numbers_and_exported(tmp_path, monkeypatch):
    """quiz01 to three students: alice answers all six for her own numbers, bob two, carol all six with the
    text's numbers (right for the two why-questions only). nbgrader autogrades in the sandbox with the course's
    grader; the Canvas export then carries 6, 2 and 2 of 6."""
    pytest.importorskip("nbgrader")
    from lecture_lib.practice import gradebook_export, sandbox

    if sandbox.problem():
        pytest.skip(f"the autograde sandbox cannot run here: {sandbox.problem()}")
    seed = "spring-2027"
    env, course, exchange = pretend_class(tmp_path)
    assert exercises.main(["nbgrader-source", str(QUIZ_DIR), str(course), "--exchange", str(exchange), "--seed", seed,
                           "--chapter", "1"]) == 0
    run = students_config_and_nbgrader(tmp_path, env, course)

    run("generate_assignment", "quiz01", cwd=course)
    run("release_assignment", "quiz01", cwd=course)
    ids = checks.problem_ids(1, bank=True)
    name = "01_batch_size_cost_and_speed_quiz.ipynb"
    for student in ("alice", "bob", "carol"):
        home = tmp_path / "students" / student
        home.mkdir(parents=True)
        run("fetch_assignment", "quiz01", "--Exchange.cache=.c", cwd=home)
        path = home / "quiz01" / name
        notebook = nbformat.read(path, as_version=4)
        for problem_id in ids if student != "bob" else ids[:2]:
            problem = PROBLEMS[problem_id]
            numbers = variants.draw(problem_id, student, seed=seed) if student != "carol" else {}
            _fill(notebook, problem_id, _answer_code(problem.bound(numbers or None).expected()))
        nbformat.write(notebook, path)
        run("submit", "quiz01", f"--student={student}", "--Exchange.cache=.c", cwd=home)
    run("collect", "quiz01", cwd=course)
    graded = subprocess.run(["nbgrader", "autograde", "quiz01", "--create"], cwd=course, env=env, capture_output=True,
                            text=True, timeout=900)
    assert "error processing assignment" not in (graded.stdout + graded.stderr).lower(), graded.stderr[-3000:]
    varied = sum(bool(PROBLEMS[pid].variants) for pid in ids)
    monkeypatch.setenv("PATH", env["PATH"])      # the export reads the gradebook through nbgrader, which runs alembic
    out = tmp_path / "canvas.csv"
    assert gradebook_export.main([str(course), "--format", "canvas", "-o", str(out)]) == 0
    import csv

    rows = list(csv.reader(out.open(encoding="utf-8")))
    assert rows[0][-1] == "quiz01" and rows[1][-1] == str(len(ids))
    scores = {row[3]: float(row[-1]) for row in rows[2:]}
    assert scores == {"alice": len(ids), "bob": 2.0, "carol": float(len(ids) - varied)}, scores
