"""Turnkey nbgrader (``python -m lecture_lib.practice.exercises nbgrader-source``): the metadata it writes, and
a whole course round trip through nbgrader 0.9 (generate for every chapter, checking
that students' copies never mention or link the solutions); the full round trip runs the instructor
guide's commands in tests/test_instructor_guide.py."""

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from lecture_lib.practice import checks, exercises

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
    varied = [p for p in found if checks.PROBLEMS[p.problem_id].variants]
    graded = {p.work for p in found} | {p.check for p in found}
    for index, cell in enumerate(source.cells):
        if index not in graded:
            assert cell.metadata.nbgrader["locked"] and not cell.metadata.nbgrader["solution"]
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None
    # The banner: the solutions' one (which links the solutions) is replaced by the assignment's.
    assert source.cells[0].id == exercises.NBGRADER_BANNER_ID and "Graded assignment" in source.cells[0].source
    assert "solutions/" not in source.cells[0].source
    assert not any("banner" in cell.metadata.get("tags", []) for cell in source.cells)
    assert len(source.cells) == len(solution.cells) + len(varied), "one cell of the student's numbers per variant"
    for problem in varied:
        numbers = source.cells[problem.work - 1]
        assert numbers.source.startswith(f"mine = your_numbers({problem.problem_id!r}")
        assert numbers.metadata.nbgrader["locked"] and not numbers.metadata.nbgrader["grade"]
    # The solution regions stay: nbgrader's generate_assignment removes them.
    assert sum(exercises.has_solution(cell.source) for cell in source.cells) == len(found)


def test_nbgrader_accepts_the_metadata():
    nbgraderformat = pytest.importorskip("nbgrader.nbgraderformat")
    source = exercises.nbgrader_notebook(read(SOLUTIONS_DIR / CHAPTER), name=CHAPTER)
    nbgraderformat.MetadataValidator().validate_nb(source)


def test_the_command_writes_a_course_directory(tmp_path):
    completed = subprocess.run([sys.executable, "-m", "lecture_lib.practice.exercises", "nbgrader-source", "solutions",
                                str(tmp_path), "--chapter", "1", "--chapter", "2", "--points", "3"],
                               cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")
                     if p.is_file() and not p.is_relative_to(tmp_path / "mathjax"))
    assert written == ["nbgrader_config.py", f"source/ch01/{CHAPTER}", f"source/ch02/{NAMES[1]}",
                       "students/nbgrader_config.py", "templates/lecture-feedback/conf.json",
                       "templates/lecture-feedback/mathjax.html.j2"]
    assert (tmp_path / "mathjax" / "MathJax.js").is_file(), "MathJax for feedback pages read offline"
    config = (tmp_path / "nbgrader_config.py").read_text()
    assert exercises.STUB in config and exercises.COURSE_ID in config
    assert f"c.Exchange.root = {exercises.DEFAULT_EXCHANGE!r}" in config, "the exchange is set, not commented"
    student = (tmp_path / "students" / "nbgrader_config.py").read_text()
    assert exercises.COURSE_ID in student and f"c.Exchange.root = {exercises.DEFAULT_EXCHANGE!r}" in student
    for text in (config, student):
        compile(text, "nbgrader_config.py", "exec")
    assert "points\": 3.0" in (tmp_path / "source" / "ch01" / CHAPTER).read_text()
    every = exercises.nbgrader_source(SOLUTIONS_DIR, tmp_path / "all", exchange=tmp_path / "ex")
    assert len(every) == len(NAMES) + 2 + 3     # the two configs, the feedback template's two files, MathJax
    assert f"c.Exchange.root = {str(tmp_path / 'ex')!r}" in (tmp_path / "all" / "nbgrader_config.py").read_text()


@pytest.mark.parametrize("kwargs, word", [({"chapters": [42]}, "chapters"), ({"chapters": ["x"]}, "chapters"),
                                          ({"points": 0}, "points"), ({"points": "1"}, "points"),
                                          ({"exchange": "relative/dir"}, "exchange"), ({"exchange": 5}, "exchange")])
def test_bad_arguments_name_the_parameter(tmp_path, kwargs, word):
    with pytest.raises(ValueError, match=word):
        exercises.nbgrader_source(SOLUTIONS_DIR, tmp_path, **kwargs)


def test_a_notebook_without_problems_is_refused():
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("just text")])
    with pytest.raises(exercises.FormatError, match="nothing to grade"):
        exercises.nbgrader_notebook(notebook, name="99_x.ipynb")


# ------------------------------------------------------------------ what students get (issue 20 §1)
# The whole course round trip (release, two students, autograde, feedback, export) runs the instructor
# guide's commands as written: tests/test_instructor_guide.py.

@pytest.mark.slow
def test_every_released_assignment_is_safe_for_students(tmp_path):
    """nbgrader's generate_assignment over every chapter: no released notebook mentions the solutions,
    and every relative link resolves inside the released folder."""
    pytest.importorskip("nbgrader", reason="nbgrader is the grade extra (pip install -e '.[grade]')")
    from test_instructor_guide import assert_student_safe

    course = tmp_path / "course"
    exercises.nbgrader_source(SOLUTIONS_DIR, course, exchange=tmp_path / "exchange")
    script = ("import sys\n"
              "from nbgrader.apps import NbGraderAPI\n"
              "from traitlets.config import Config\n"
              "config = Config()\n"
              "config.CourseDirectory.root = sys.argv[1]\n"
              "config.ClearSolutions.code_stub = {'python': %r}\n"
              "api = NbGraderAPI(config=config)\n"
              "for name in sys.argv[2:]:\n"
              "    result = api.generate_assignment(name)\n"
              "    assert result['success'], result\n" % exercises.STUB)
    names = [exercises.assignment_name(name) for name in NAMES]
    bin_dir = os.path.dirname(sys.executable)
    env = {**os.environ, "MPLBACKEND": "Agg", "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    done = subprocess.run([sys.executable, "-c", script, str(course), *names], cwd=course, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for name, assignment in zip(NAMES, names):
        folder = course / "release" / assignment
        assert (folder / name).is_file(), f"{folder} lacks {name}"
        assert_student_safe(folder)
        released = read(folder / name)
        code = [c.source for c in released.cells
                if c.cell_type == "code" and not c.metadata.nbgrader["grade_id"].startswith("numbers-")]
        graded_exercise = [exercises._CHECK_CALL.sub(lambda m: f'record("{m.group(1)}", answer)', c.source)
                           .replace(exercises._SETUP_IMPORT, exercises._GRADED_IMPORT)
                           for c in read(ROOT / "exercises" / name).cells if c.cell_type == "code"]
        assert code == graded_exercise, f"{assignment}: release and exercises/ disagree beyond check -> record"
        assert "check(" not in "\n".join(code).replace("record(", ""), "a graded release is no oracle"


@pytest.mark.parametrize("text", ["See [`solutions/01_x.ipynb`](../solutions/01_x.ipynb).",
                                  "The worked Solutions are elsewhere."])
def test_a_cell_mentioning_the_solutions_is_refused(text):
    notebook = read(SOLUTIONS_DIR / CHAPTER)
    notebook.cells.append(nbformat.v4.new_markdown_cell(text))
    with pytest.raises(exercises.FormatError, match="solutions"):
        exercises.nbgrader_notebook(notebook, name=CHAPTER)


def test_relative_links_become_text_and_web_links_stay():
    source = ("[Chapter 1](../notebooks/01_x.ipynb), [site](https://example.org/a), [top](#top), "
              "![img](https://example.org/i.png)")
    assert exercises.unlink_relative(source) == ("Chapter 1, [site](https://example.org/a), [top](#top), "
                                                 "![img](https://example.org/i.png)")
    assert exercises.relative_links(source) == ["../notebooks/01_x.ipynb"]


def test_the_command_refuses_an_unknown_chapter(tmp_path, capsys):
    assert exercises.main(["nbgrader-source", str(SOLUTIONS_DIR), str(tmp_path), "--chapter", "42"]) == 2
    assert "chapters must be among" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


@pytest.mark.browser
def test_a_feedback_page_typesets_its_maths_with_no_network(tmp_path):
    """Issue 31 §4: the course's feedback template finds MathJax in the course directory (the instructor's
    feedback/<student>/chNN/ pages), with every request to the network refused."""
    import jinja2

    from browser_support import browser_unavailable, launch_browser

    reason = browser_unavailable()
    if reason:
        pytest.skip(reason)
    exercises.nbgrader_source(SOLUTIONS_DIR, tmp_path, chapters=[1], exchange=tmp_path / "exchange")
    macro = jinja2.Environment().from_string(
        (tmp_path / "templates" / "lecture-feedback" / "mathjax.html.j2").read_text() + "{{ mathjax() }}").render()
    page = tmp_path / "feedback" / "bob" / "ch01" / "page.html"
    page.parent.mkdir(parents=True)
    page.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'>{macro}</head>"
                    "<body><p>The balance batch $B^*$, and $$t = \\frac{N}{W}$$</p></body></html>")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch_browser(playwright)
        try:
            context = browser.new_context()
            context.route("http*://**", lambda route: route.abort())
            tab = context.new_page()
            tab.goto(page.as_uri())
            tab.wait_for_function("document.querySelectorAll('.MathJax, .MathJax_Display').length >= 2",
                                  timeout=30_000)
            assert "$B^*$" not in tab.inner_text("body")
        finally:
            browser.close()
