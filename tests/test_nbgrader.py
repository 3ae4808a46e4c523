"""Turnkey nbgrader (``python -m lecture_lib.exercises nbgrader-source``): the metadata it writes, and
a whole course round trip through nbgrader 0.9 (generate -> release -> fetch/submit by two students ->
collect -> autograde -> export) that must give one student a partial score and the other zero."""

import csv
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from lecture_lib import checks, exercises

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS_DIR = ROOT / "solutions"
NAMES = [path.name for path in sorted(SOLUTIONS_DIR.glob(exercises.NOTEBOOK_GLOB))]
CHAPTER = "01_batch_size_cost_and_speed.ipynb"


def read(path):
    return nbformat.read(path, as_version=4)


@pytest.mark.parametrize("name", NAMES)
def test_source_notebooks_carry_nbgrader_metadata(name):
    solution = read(SOLUTIONS_DIR / name)
    source = exercises.nbgrader_notebook(solution, name=name, points=2)
    found = exercises.problems(source, where=name)
    assert [p.problem_id for p in found] == checks.problem_ids(chapter=int(name[:2]))
    metas = [cell.metadata["nbgrader"] for cell in source.cells]
    assert all(m["schema_version"] == 3 for m in metas)
    ids = [m["grade_id"] for m in metas]
    assert len(ids) == len(set(ids)), "grade ids must be unique"
    for problem in found:
        work, test = source.cells[problem.work].metadata.nbgrader, source.cells[problem.check].metadata.nbgrader
        suffix = problem.problem_id.replace(".", "-")
        assert work == {"grade": False, "grade_id": f"answer-{suffix}", "locked": False, "schema_version": 3,
                        "solution": True, "task": False}
        assert test == {"grade": True, "grade_id": f"check-{suffix}", "locked": True, "points": 2.0,
                        "schema_version": 3, "solution": False, "task": False}
    graded = {p.work for p in found} | {p.check for p in found}
    for index, cell in enumerate(source.cells):
        if index not in graded:
            assert cell.metadata.nbgrader["locked"] and not cell.metadata.nbgrader["solution"]
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None
    # The banner: the solutions' one (which links the solutions) is replaced by the assignment's.
    assert source.cells[0].id == exercises.NBGRADER_BANNER_ID and "Assignment" in source.cells[0].source
    assert "solutions/" not in source.cells[0].source
    assert not any("banner" in cell.metadata.get("tags", []) for cell in source.cells)
    assert len(source.cells) == len(solution.cells)
    # The solution regions stay: nbgrader's generate_assignment removes them.
    assert sum(exercises.has_solution(cell.source) for cell in source.cells) == len(found)


def test_nbgrader_accepts_the_metadata():
    nbgraderformat = pytest.importorskip("nbgrader.nbgraderformat")
    source = exercises.nbgrader_notebook(read(SOLUTIONS_DIR / CHAPTER), name=CHAPTER)
    nbgraderformat.MetadataValidator().validate_nb(source)


def test_the_command_writes_a_course_directory(tmp_path):
    completed = subprocess.run([sys.executable, "-m", "lecture_lib.exercises", "nbgrader-source", "solutions",
                                str(tmp_path), "--chapter", "1", "--chapter", "2", "--points", "3"],
                               cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert written == ["nbgrader_config.py", f"source/ch01/{CHAPTER}", f"source/ch02/{NAMES[1]}"]
    config = (tmp_path / "nbgrader_config.py").read_text()
    assert exercises.STUB in config and exercises.COURSE_ID in config
    compile(config, "nbgrader_config.py", "exec")
    assert "points\": 3.0" in (tmp_path / "source" / "ch01" / CHAPTER).read_text()
    every = exercises.nbgrader_source(SOLUTIONS_DIR, tmp_path / "all")
    assert len(every) == len(NAMES) + 1


@pytest.mark.parametrize("kwargs, word", [({"chapters": [42]}, "chapters"), ({"chapters": ["x"]}, "chapters"),
                                          ({"points": 0}, "points"), ({"points": "1"}, "points")])
def test_bad_arguments_name_the_parameter(tmp_path, kwargs, word):
    with pytest.raises(ValueError, match=word):
        exercises.nbgrader_source(SOLUTIONS_DIR, tmp_path, **kwargs)


def test_a_notebook_without_problems_is_refused():
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("just text")])
    with pytest.raises(exercises.FormatError, match="nothing to grade"):
        exercises.nbgrader_notebook(notebook, name="99_x.ipynb")


# ------------------------------------------------------------------ the round trip through nbgrader

def nbgrader(*args, cwd, timeout=300):
    # nbgrader runs `alembic` (its gradebook migrations) from PATH: put this environment's bin first.
    bin_dir = os.path.dirname(sys.executable)
    env = {**os.environ, "MPLBACKEND": "Agg", "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    env.pop("LECTURE_STRICT", None)
    completed = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=cwd, env=env,
                               capture_output=True, text=True, timeout=timeout)
    assert completed.returncode == 0, f"nbgrader {' '.join(args)}:\n{completed.stdout}\n{completed.stderr}"
    return completed


SOLVED = 3   # problems the first student answers correctly


def test_generate_release_submit_collect_autograde_export(tmp_path):
    pytest.importorskip("nbgrader", reason="nbgrader is in the test extra (pip install -e '.[test]')")
    course, exchange = tmp_path / "course", tmp_path / "exchange"
    exchange.mkdir()
    exercises.nbgrader_source(SOLUTIONS_DIR, course, chapters=[1])
    shared = [f"--Exchange.root={exchange}", f"--CourseDirectory.course_id={exercises.COURSE_ID}"]

    nbgrader("generate_assignment", "ch01", cwd=course)
    released = read(course / "release" / "ch01" / CHAPTER)
    code = lambda nb: [c.source for c in nb.cells if c.cell_type == "code"]   # noqa: E731
    assert code(released) == code(read(ROOT / "exercises" / CHAPTER)), "release and exercises/ disagree"
    nbgrader("release_assignment", "ch01", *shared, cwd=course)

    solution = {cell.id: cell for cell in read(SOLUTIONS_DIR / CHAPTER).cells}
    for student, n_solved in (("alice", SOLVED), ("bob", 0)):
        home = tmp_path / student
        home.mkdir()
        nbgrader("fetch_assignment", "ch01", *shared, cwd=home)
        path = home / "ch01" / CHAPTER
        notebook = read(path)
        for problem in exercises.problems(notebook)[:n_solved]:
            work = notebook.cells[problem.work]
            work.source = exercises.solution_regions(solution[work.id].source)[0]
        nbformat.write(notebook, path)
        nbgrader("submit", "ch01", *shared, f"--student={student}", cwd=home)

    nbgrader("collect", "ch01", *shared, cwd=course)
    nbgrader("autograde", "ch01", "--create", cwd=course, timeout=400)
    nbgrader("export", cwd=course)
    with open(course / "grades.csv", newline="") as stream:
        grades = {row["student_id"]: row for row in csv.DictReader(stream)}
    n_problems = len(checks.problem_ids(chapter=1))
    assert set(grades) == {"alice", "bob"}
    assert float(grades["alice"]["max_score"]) == float(grades["bob"]["max_score"]) == n_problems
    assert float(grades["alice"]["score"]) == SOLVED, "partial credit: one point per correct check cell"
    assert float(grades["bob"]["score"]) == 0, "unanswered problems fail their check cells"


def test_the_command_refuses_an_unknown_chapter(tmp_path, capsys):
    assert exercises.main(["nbgrader-source", str(SOLUTIONS_DIR), str(tmp_path), "--chapter", "42"]) == 2
    assert "chapters must be among" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())
