"""Exercises with hidden solutions (DESIGN.md): the generator, the notebooks it writes, and nbgrader.

- `make exercises` is deterministic: regenerating gives the committed bytes;
- no line of a solution region, and no marker, reaches `exercises/`; nor do the expected answers;
- the solutions run top to bottom in strict mode with every check correct;
- the exercises run with their stubs and every check says "not answered yet";
- nbgrader's own `generate_assignment` removes the same regions (skipped without nbgrader).
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import sympy as sp
from lecture_lib.practice import checks, exercises
from notebook_runs import executed

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS_DIR = ROOT / "solutions"
EXERCISES_DIR = ROOT / "exercises"
SOLUTIONS = sorted(SOLUTIONS_DIR.glob(exercises.NOTEBOOK_GLOB))
NAMES = [path.name for path in SOLUTIONS]


def read(path: Path):
    return nbformat.read(path, as_version=4)


def chapter_of(name: str) -> int:
    return int(name[:2])


def execute(path: Path, **env) -> nbformat.NotebookNode:
    """``path`` run top to bottom headless, once per test run (notebook_runs.py)."""
    return executed(path, **env)[0]


def check_outputs(notebook) -> dict[str, str]:
    """Problem id -> the plain-text feedback its check cell displayed."""
    found = {}
    for cell in notebook.cells:
        match = exercises._CHECK_CALL.search(cell.source) if cell.cell_type == "code" else None
        if match:
            texts = [out.get("data", {}).get("text/plain", "") for out in cell.outputs
                     if out.get("output_type") in ("display_data", "execute_result")]
            found[match.group(1)] = "\n".join(texts)
    return found


def errors(notebook) -> list[str]:
    return [f"cell {cell.get('id')}: {out.get('ename')}: {out.get('evalue')}"
            for cell in notebook.cells for out in cell.get("outputs", []) if out.get("output_type") == "error"]


# ------------------------------------------------------------------ the tree

def test_there_are_solutions_and_each_has_its_exercise():
    assert "01_batch_size_cost_and_speed.ipynb" in NAMES
    assert sorted(p.name for p in EXERCISES_DIR.glob(exercises.NOTEBOOK_GLOB)) == NAMES


def test_regeneration_gives_no_diff(tmp_path):
    exercises.generate(SOLUTIONS_DIR, tmp_path)
    for name in NAMES:
        assert (tmp_path / name).read_bytes() == (EXERCISES_DIR / name).read_bytes(), \
            f"exercises/{name} is stale or hand-edited: run `make exercises`"


def test_generating_twice_changes_nothing(tmp_path):
    assert len(exercises.generate(SOLUTIONS_DIR, tmp_path)) == len(NAMES)
    assert exercises.generate(SOLUTIONS_DIR, tmp_path) == []


def test_check_command_passes_on_this_tree():
    completed = subprocess.run([sys.executable, "-m", "lecture_lib.practice.exercises", "check", "solutions", "exercises"],
                               cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr


def test_check_command_fails_when_an_exercise_is_stale(tmp_path, capsys):
    solutions, published = tmp_path / "solutions", tmp_path / "exercises"
    shutil.copytree(SOLUTIONS_DIR, solutions)
    shutil.copytree(EXERCISES_DIR, published)
    stale = published / NAMES[0]
    stale.write_bytes(stale.read_bytes().replace(b"answer = ...", b"answer = 42", 1))
    assert exercises.main(["check", str(solutions), str(published)]) == 1
    assert "make exercises" in capsys.readouterr().err
    (published / "99_orphan.ipynb").write_bytes(b"{}")
    assert any("no source" in line for line in exercises.differences(solutions, published))
    exercises.main(["generate", str(solutions), str(published)])
    (published / "99_orphan.ipynb").unlink()
    assert exercises.main(["check", str(solutions), str(published)]) == 0


@pytest.mark.parametrize("name", NAMES)
def test_solutions_are_committed_clean(name):
    for cell in read(SOLUTIONS_DIR / name).cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None


# ------------------------------------------------------------------ the format

@pytest.mark.parametrize("name", NAMES)
def test_the_problem_format_and_the_registry_agree(name):
    solution = read(SOLUTIONS_DIR / name)
    found = exercises.problems(solution, where=name)
    ids = [problem.problem_id for problem in found]
    assert len(ids) >= 8
    assert ids == checks.problem_ids(chapter=chapter_of(name)), "notebook and lecture_lib.practice.checks disagree"
    for problem in found:
        heading = solution.cells[problem.heading].source.split("\n", 1)[0]
        assert heading.startswith(f"### Problem {problem.problem_id}") and problem.title
        regions = exercises.solution_regions(solution.cells[problem.work].source)
        assert len(regions) == 1 and re.search(r"^\s*answer\s*=", regions[0], re.M), \
            f"problem {problem.problem_id}: the solution region must assign `answer`"
        explained = [line for line in regions[0].split("\n") if line.strip().startswith("#") or "print(" in line]
        assert explained, f"problem {problem.problem_id}: explain the reasoning in a comment or a print"
        assert solution.cells[problem.check].source.strip() == f'check("{problem.problem_id}", answer)'
    exercise = read(EXERCISES_DIR / name)
    assert [p.problem_id for p in exercises.problems(exercise, where=name)] == ids


@pytest.mark.parametrize("name", NAMES)
def test_first_code_cell_imports_the_library_and_the_checker(name):
    for notebook in (read(SOLUTIONS_DIR / name), read(EXERCISES_DIR / name)):
        first = next(cell for cell in notebook.cells if cell.cell_type == "code").source
        assert "from lecture_lib import hardware, models, roofline" in first
        assert "from lecture_lib.practice.checks import check" in first


@pytest.mark.parametrize("name", NAMES)
def test_each_notebook_has_its_own_banner(name):
    solution, exercise = read(SOLUTIONS_DIR / name), read(EXERCISES_DIR / name)
    assert "banner" in solution.cells[0].metadata.get("tags", [])
    assert "solutions" in solution.cells[0].source.lower()
    assert exercise.cells[0].id == exercises.BANNER_ID
    assert "Exercises" in exercise.cells[0].source and f"../solutions/{name}" in exercise.cells[0].source
    assert sum("banner" in c.metadata.get("tags", []) for c in exercise.cells) == 0


@pytest.mark.parametrize("name", NAMES)
def test_markdown_and_cell_ids_are_kept(name):
    solution, exercise = read(SOLUTIONS_DIR / name), read(EXERCISES_DIR / name)
    kept = solution.cells[1:]   # all but the solutions banner
    assert [c.id for c in exercise.cells[1:]] == [c.id for c in kept]
    for before, after in zip(kept, exercise.cells[1:]):
        if before.cell_type == "markdown":
            assert after.source == before.source
        else:
            assert not after.outputs and after.execution_count is None


# ------------------------------------------------------------------ nothing leaks

def _lines(text: str) -> set[str]:
    return {line.strip() for line in text.split("\n") if line.strip()}


@pytest.mark.parametrize("name", NAMES)
def test_no_solution_line_or_marker_reaches_the_exercises(name):
    solution = read(SOLUTIONS_DIR / name)
    exercise_text = (EXERCISES_DIR / name).read_text(encoding="utf-8")
    exercise_sources = [cell.source for cell in read(EXERCISES_DIR / name).cells]
    exercise_lines = set().union(*(_lines(source) for source in exercise_sources))
    assert "BEGIN SOLUTION" not in exercise_text and "END SOLUTION" not in exercise_text
    leaked = []
    for cell in solution.cells:
        for region in exercises.solution_regions(cell.source):
            for line in _lines(region):
                if not re.search(r"[A-Za-z0-9]", line):
                    continue   # a lone bracket is not a leak
                if line in exercise_lines or (len(line) >= 20 and any(line in s for s in exercise_sources)):
                    leaked.append(line)
    assert not leaked, f"solution lines visible in exercises/{name}: {leaked}"


def _renderings(value: float) -> set[str]:
    forms = {f"{value:.3g}", f"{value:.4g}", f"{value:,.0f}", f"{value:.0f}"}
    if value < 1:
        forms |= {f"{value * 1e3:.3g}", f"{value * 1e3:.2f}"}
    return {form for form in forms if sum(ch.isdigit() for ch in form) >= 3 or "." in form}


@pytest.mark.parametrize("name", NAMES)
def test_expected_answers_are_not_readable_in_the_exercises(name):
    text = "\n".join(cell.source for cell in read(EXERCISES_DIR / name).cells)
    for problem_id in checks.problem_ids(chapter=chapter_of(name)):
        problem = checks.PROBLEMS[problem_id]
        value = problem.expected()
        if problem.kind == "number":
            for form in _renderings(float(value)):
                assert not re.search(rf"(?<![\d.]){re.escape(form)}(?![\d])", text), \
                    f"problem {problem_id}: its answer {form!r} appears in exercises/{name}"
        elif problem.kind == "expression":
            for form in (str(value), sp.latex(value), str(sp.simplify(value))):
                assert form not in text, f"problem {problem_id}: its answer appears in exercises/{name}"
        # A choice's answer is one of the listed options, so it is in the text by design.


# ------------------------------------------------------------------ running them

@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_solutions_run_strictly_with_every_check_correct(name):
    notebook = execute(SOLUTIONS_DIR / name, LECTURE_STRICT="1")
    assert not errors(notebook), errors(notebook)
    feedback = check_outputs(notebook)
    assert list(feedback) == checks.problem_ids(chapter=chapter_of(name))
    for problem_id, text in feedback.items():
        assert "Correct" in text, f"problem {problem_id}: {text!r}"
        assert text.count(f"Problem {problem_id}:") == 1, "feedback shown twice"


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_exercises_run_with_stubs_and_say_not_answered_yet(name):
    notebook = execute(EXERCISES_DIR / name)
    assert not errors(notebook), errors(notebook)
    feedback = check_outputs(notebook)
    assert list(feedback) == checks.problem_ids(chapter=chapter_of(name))
    for problem_id, text in feedback.items():
        assert "Not answered yet" in text, f"problem {problem_id}: {text!r}"


# ------------------------------------------------------------------ the generator's rules

def test_stub_keeps_indentation_and_the_lines_around():
    source = "x = 1\nif x:\n    ### BEGIN SOLUTION\n    answer = 2 * x\n    ### END SOLUTION\nprint(answer)"
    assert exercises.strip_solutions(source) == "x = 1\nif x:\n    answer = ...  # your work here\nprint(answer)"


@pytest.mark.parametrize("source, words", [
    ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION", "nested"),
    ("### END SOLUTION", "without"),
    ("### BEGIN SOLUTION\nanswer = 1", "never closed"),
])
def test_unbalanced_markers_are_refused(source, words):
    with pytest.raises(exercises.FormatError, match=words):
        exercises.strip_solutions(source)


def _tiny_notebook(*cells):
    notebook = nbformat.v4.new_notebook()
    for kind, source in cells:
        maker = nbformat.v4.new_markdown_cell if kind == "md" else nbformat.v4.new_code_cell
        notebook.cells.append(maker(source))
    return notebook


def test_a_problem_without_its_check_cell_is_refused():
    notebook = _tiny_notebook(("md", "### Problem 9.1 · Lonely"), ("code", "### BEGIN SOLUTION\nanswer = 1\n### END SOLUTION"))
    with pytest.raises(exercises.FormatError, match="no check cell"):
        exercises.problems(notebook)


def test_a_check_of_the_wrong_problem_is_refused():
    notebook = _tiny_notebook(("md", "### Problem 9.1 · Mixed up"), ("code", "### BEGIN SOLUTION\nanswer = 1\n### END SOLUTION"),
                              ("code", 'check("9.2", answer)'))
    with pytest.raises(exercises.FormatError, match="checks '9.2'"):
        exercises.problems(notebook)


def test_a_hint_needs_blank_lines_around_its_tags():
    cramped = "### Problem 9.1 · Cramped\n<details>\n<summary>Hint</summary>\ntext\n</details>"
    notebook = _tiny_notebook(("md", cramped), ("code", "### BEGIN SOLUTION\nanswer = 1\n### END SOLUTION"),
                              ("code", 'check("9.1", answer)'))
    with pytest.raises(exercises.FormatError, match="blank line"):
        exercises.problems(notebook)


def test_markers_in_markdown_are_refused():
    notebook = _tiny_notebook(("md", "Write your answer after ### BEGIN SOLUTION"), ("code", "x = 1"))
    with pytest.raises(exercises.FormatError, match="code cells only"):
        exercises.exercise_notebook(notebook, name="99_x.ipynb")


# ------------------------------------------------------------------ nbgrader

NBGRADER_CONFIG = """\
c = get_config()
# Plain text markers only, no nbgrader cell metadata: the course's own format.
c.ClearSolutions.enforce_metadata = False
c.ClearHiddenTests.enforce_metadata = False
c.ClearMarkScheme.enforce_metadata = False
c.ClearSolutions.code_stub = {"python": "answer = ...  # your work here"}
"""


def test_nbgrader_generate_assignment_removes_the_same_regions(tmp_path):
    pytest.importorskip("nbgrader", reason="nbgrader is optional (pip install nbgrader)")
    source = tmp_path / "source" / "ch01"
    source.mkdir(parents=True)
    name = "01_batch_size_cost_and_speed.ipynb"
    shutil.copy(SOLUTIONS_DIR / name, source / name)
    (tmp_path / "nbgrader_config.py").write_text(NBGRADER_CONFIG)
    completed = subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", "ch01", "--no-db",
                                f"--CourseDirectory.root={tmp_path}"],
                               cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    released = read(tmp_path / "release" / "ch01" / name)
    text = "\n".join(cell.source for cell in released.cells)
    assert "BEGIN SOLUTION" not in text and "END SOLUTION" not in text
    ours = read(EXERCISES_DIR / name)
    code = lambda nb: [cell.source for cell in nb.cells if cell.cell_type == "code"]   # noqa: E731
    assert code(released) == code(ours), "nbgrader and `make exercises` disagree on the student version"
    assert all(not cell.get("outputs") for cell in released.cells if cell.cell_type == "code")


# ---- issue 31 §4: a choice problem's options do not give the answer away
_OPTION = re.compile(r'^- `"([a-z])"`: (.+)$', re.MULTILINE)
def _choice_options():
    for path in SOLUTIONS:
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "markdown" and cell.source.startswith("### Problem"):
                options = dict(_OPTION.findall(cell.source))
                if options:
                    yield cell.source.split()[2], options


def test_choice_options_are_of_similar_length_and_carry_no_justification():
    evened = set()
    for problem_id, options in _choice_options():
        assert set(options) == set(checks.PROBLEMS[problem_id].options), problem_id
        lengths = [len(text) for text in options.values()]
        answer = checks._expected(checks.PROBLEMS[problem_id])
        similar = max(lengths) <= 40 and max(lengths) <= 1.6 * min(lengths) and ":" not in options[answer]
        assert similar, (problem_id, options)
        evened.add(problem_id)
    assert {"1.15", "1.16", "1.17", "2.12", "7.13"} <= evened
