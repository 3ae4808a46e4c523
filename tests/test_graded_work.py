"""Issue 46: graded work is judged outside the student's kernel, for the student's own numbers.

The unit tests here are fast (record, judge, variants, the graded source notebooks, the judging preprocessor).
``test_every_route_scores_zero_and_honest_work_keeps_its_score`` is the whole nbgrader route with one pretend
student per way of scoring without solving; it takes a few minutes and is in ``make test-class``."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import sympy as sp

from lecture_lib.practice import answers, checks, exercises, grading, variants
from lecture_lib.practice.registry import Problem, Vary

ROOT = Path(__file__).resolve().parents[1]
SEED = exercises.COURSE_ID
VARIED = [pid for pid in checks.problem_ids() if checks.PROBLEMS[pid].variants]


def right_answer(problem_id: str, student: str | None):
    problem = checks.PROBLEMS[problem_id]
    numbers = variants.draw(problem_id, student, seed=SEED) if student and problem.variants else None
    return problem.bound(numbers).expected()


# ------------------------------------------------------------------ variants

def test_some_problems_of_the_graded_chapters_vary():
    assert {"1.7", "1.8", "4.1", "4.2"} <= set(VARIED)


@pytest.mark.parametrize("problem_id", VARIED)
def test_a_students_numbers_are_stable_never_the_texts_and_the_defaults_are_the_texts(problem_id):
    problem = checks.PROBLEMS[problem_id]
    for student in ("alice", "bob", "s1234567", "x.y@uni.edu"):
        numbers = variants.draw(problem_id, student, seed=SEED)
        assert numbers == variants.draw(problem_id, student, seed=SEED)
        assert all(numbers[v.name] in v.choices and numbers[v.name] != v.default for v in problem.variants)
        assert checks.verdict(problem_id, right_answer(problem_id, student), numbers)[0] == "correct"
        assert checks.verdict(problem_id, problem.expected(), numbers)[0] == "wrong", "the text's number fails"
    assert problem.bound().expected() == pytest.approx(problem.expected()), "expected() takes the text's numbers"
    for mistake in problem.mistakes:
        assert mistake.value() == pytest.approx(problem.bound().mistakes[problem.mistakes.index(mistake)].value())
    assert 0 < variants.share_alike(problem_id) <= 1 / 5


def test_other_terms_and_students_get_other_numbers():
    drawn = {json.dumps(variants.draw("4.2", f"s{i}", seed=SEED)) for i in range(60)}
    assert len(drawn) > 20
    assert any(variants.draw("4.2", "alice", seed=SEED) != variants.draw("4.2", "alice", seed=f"term{i}")
               for i in range(5))


@pytest.mark.parametrize("kwargs, word", [(dict(choices=(1, 2)), "choices"), (dict(choices=(64, 1, 2)), "choices"),
                                          (dict(name="Not a keyword"), "name")])
def test_a_vary_is_checked(kwargs, word):
    base = dict(name="gpus", label="E", default=64, choices=(8, 16, 32))
    with pytest.raises(ValueError, match=word):
        Vary(**{**base, **kwargs})


def test_bound_refuses_numbers_that_do_not_match():
    problem = checks.PROBLEMS["4.2"]
    with pytest.raises(ValueError, match="numbers must name"):
        problem.bound({"gpus": 8})
    plain = Problem("t", "number", lambda: 1.0)
    assert plain.bound() is plain
    with pytest.raises(ValueError, match="no variants"):
        plain.bound({"x": 1})


@pytest.mark.parametrize("student", ["", "a b", "../x", "x" * 101, None, 3])
def test_draw_refuses_an_odd_student_id(student):
    with pytest.raises(ValueError, match="student"):
        variants.draw("4.1", student)


def test_the_student_id_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("LECTURE_STUDENT", "carol")
    assert variants.student_id() == "carol"
    monkeypatch.delenv("LECTURE_STUDENT")
    monkeypatch.setenv("JUPYTERHUB_USER", "dave")
    assert variants.student_id() == "dave"
    mine = answers.your_numbers("4.1", seed=SEED)
    assert mine.as_dict() == variants.draw("4.1", "dave", seed=SEED) and mine.gpus == mine.as_dict()["gpus"]
    assert "the text says 64" in repr(mine) and "dave" in mine._repr_html_()


# ------------------------------------------------------------------ record: writes down, never judges

@pytest.mark.parametrize("answer, kind", [(3.5, "number"), (7, "number"), (sp.Symbol("B") * 2, "sympy"),
                                          ("b", "text"), (..., "none"), (None, "none"), (True, "unreadable"),
                                          ([1, 2], "unreadable"), (float("nan"), "unreadable"),
                                          ("x" * 5000, "unreadable")])
def test_record_writes_plain_data(answer, kind):
    payload = answers._payload("1.1", answer)
    assert payload["kind"] == kind and payload["problem"] == "1.1"
    json.dumps(payload)


def test_record_says_the_same_for_a_right_and_a_wrong_answer():
    right, wrong = checks.PROBLEMS["1.1"].expected(), checks.PROBLEMS["1.1"].expected() * 3.7
    answers._last_recorded.clear()
    said = [answers.said("1.1", answers._payload("1.1", value), value) for value in (right, wrong)]
    assert said[0].replace(f"{right:.6g}", "V") == said[1].replace(f"{wrong:.6g}", "V")
    for word in ("correct", "wrong", "too high", "too low", "off by"):
        assert word not in " ".join(said).lower()


def test_record_fails_its_cell_under_a_grader_that_is_not_configured(monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with pytest.raises(AssertionError, match="judges it outside"):
        answers.record("1.1", 1.0)
    monkeypatch.setenv("NBGRADER_EXECUTION", "validate")
    answers.record("1.1", 1.0)          # a student's Validate button sees no failure


# ------------------------------------------------------------------ judge: in the instructor's process

def test_judge_credits_only_the_students_own_right_answer():
    assert grading.judge("4.1", {"kind": "number", "value": right_answer("4.1", "alice")}, "alice", seed=SEED)[0] \
        == "correct"
    classmate = right_answer("4.1", "bob")
    assert variants.draw("4.1", "alice", seed=SEED) != variants.draw("4.1", "bob", seed=SEED)
    assert grading.judge("4.1", {"kind": "number", "value": classmate}, "alice", seed=SEED)[0] == "wrong"
    text_number = checks.PROBLEMS["4.1"].expected()
    assert grading.judge("4.1", {"kind": "number", "value": text_number}, "alice", seed=SEED, vary=False)[0] \
        == "correct"


def test_judge_reads_expressions_and_text_and_refuses_the_rest():
    expr = sp.srepr(checks.PROBLEMS["1.4"].expected())
    assert grading.judge("1.4", {"kind": "sympy", "srepr": expr}, "alice")[0] == "correct"
    assert grading.judge("1.4", {"kind": "text", "value": "FLOPs*N_total*bytes_param/(2*N_active*mem_bw)"},
                         "alice")[0] == "correct"
    for payload in ({"kind": "sympy", "srepr": "__import__('os').system('touch /tmp/x')"},
                    {"kind": "sympy", "srepr": 3}, {"kind": "number", "value": "1e9"}, {"kind": "weird"},
                    {"kind": "unreadable", "why": "a list"}):
        assert grading.judge("1.4", payload, "alice")[0] == "invalid", payload
    assert grading.judge("1.4", None, "alice")[0] == "unanswered"
    assert grading.judge("1.4", {"kind": "none"}, "alice")[0] == "unanswered"


def _check_cell(problem_id: str, outputs: list) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(f'record("{problem_id}", answer)')
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": "check-" + problem_id.replace(".", "-"),
                                 "points": 1, "locked": True, "solution": False, "schema_version": 3}
    cell.outputs = outputs
    return cell


def _recorded(payload: dict):
    return nbformat.v4.new_output("display_data", data={answers.MIME: payload, "text/plain": "x"})


def test_the_judge_replaces_whatever_the_student_code_printed():
    from nbgrader.utils import determine_grade

    good = right_answer("1.1", None)
    notebook = nbformat.v4.new_notebook(cells=[
        _check_cell("1.1", [_recorded({"problem": "1.1", "kind": "number", "value": good})]),
        # an execute_result float would be nbgrader's partial credit; a fake "correct" box; no record at all
        _check_cell("1.2", [nbformat.v4.new_output("execute_result", data={"text/plain": "1.0"}, execution_count=1),
                            nbformat.v4.new_output("display_data", data={"text/html": "✅ Correct"})]),
        # two different answers in one cell; a record for another problem in this cell
        _check_cell("1.3", [_recorded({"problem": "1.3", "kind": "number", "value": 1.0}),
                            _recorded({"problem": "1.3", "kind": "number", "value": 2.0})]),
        _check_cell("1.5", [_recorded({"problem": "1.1", "kind": "number", "value": good})]),
    ])
    judge = grading.JudgeAnswers()
    notebook, _ = judge.preprocess(notebook, {"nbgrader": {"student": "alice"}})
    scores = [determine_grade(cell)[0] for cell in notebook.cells]
    assert scores == [1.0, 0, 0, 0]
    assert "more than one different answer" in json.dumps(notebook.cells[2].outputs).lower()
    assert "no answer was recorded" in json.dumps(notebook.cells[3].outputs).lower()
    assert not [o for o in notebook.cells[1].outputs if o.output_type == "execute_result"]


# ------------------------------------------------------------------ the graded source notebooks

def _source(tmp_path, **kwargs):
    course = tmp_path / "course"
    exercises.nbgrader_source(ROOT / "solutions", course, exchange=str(tmp_path / "x"), **kwargs)
    return course


def _cells(path: Path):
    return nbformat.read(path, as_version=4).cells


def test_a_graded_release_records_shows_numbers_and_configures_the_grader(tmp_path):
    course = _source(tmp_path, chapters=[4])
    cells = _cells(course / "source" / "ch04" / "04_pipelining_is_not_wise.ipynb")
    text = "\n".join(cell.source for cell in cells)
    assert "check(" not in text.replace("record(", "") and 'record("4.1", answer)' in text
    assert "from lecture_lib.practice.answers import record, your_numbers" in text
    ids = [cell.metadata["nbgrader"]["grade_id"] for cell in cells]
    assert ids.index("numbers-4-1") == ids.index("answer-4-1") - 1 and "numbers-4-3" not in ids
    numbers = cells[ids.index("numbers-4-1")]
    assert numbers.metadata["nbgrader"]["locked"] and not numbers.metadata["nbgrader"]["grade"]
    config = (course / "nbgrader_config.py").read_text()
    assert "_grading.configure(c, seed='llm-serving-math', vary=True)" in config
    assert "Graded assignment" in cells[0].source and "your own numbers" in cells[0].source


def test_a_practice_release_keeps_check_and_grades_nothing(tmp_path):
    course = _source(tmp_path, chapters=[4], graded=False)
    cells = _cells(course / "source" / "ch04" / "04_pipelining_is_not_wise.ipynb")
    assert not any(cell.metadata["nbgrader"]["grade"] for cell in cells)
    assert 'check("4.1", answer)' in "\n".join(cell.source for cell in cells)
    assert "_grading" not in (course / "nbgrader_config.py").read_text()


def test_no_variants_and_a_seed_per_term(tmp_path):
    course = _source(tmp_path, chapters=[4], vary=False, seed="spring-2027")
    ids = [c.metadata["nbgrader"]["grade_id"] for c in _cells(course / "source/ch04/04_pipelining_is_not_wise.ipynb")]
    assert not [i for i in ids if i.startswith("numbers-")]
    assert "seed='spring-2027', vary=False" in (course / "nbgrader_config.py").read_text()


def test_the_subset_picker(tmp_path, capsys):
    course = _source(tmp_path, problem_ids=["1.1", "1.4", "4.2"])
    assert sorted(p.name for p in (course / "source").iterdir()) == ["ch01", "ch04"]
    released = exercises.problems(nbformat.read(course / "source/ch01/01_batch_size_cost_and_speed.ipynb", 4))
    assert [p.problem_id for p in released] == ["1.1", "1.4"]
    core = _source(tmp_path / "core", chapters=[4], core_only=True)
    kept = exercises.problems(nbformat.read(core / "source/ch04/04_pipelining_is_not_wise.ipynb", 4))
    levels = dict((p.problem_id, p.level) for _, p in exercises.levels(ROOT / "solutions"))
    assert kept and all(levels[p.problem_id] == "core" for p in kept)
    assert len(kept) == sum(1 for pid, level in levels.items() if pid.startswith("4.") and level == "core")
    with pytest.raises(ValueError, match="9.99"):
        _source(tmp_path / "bad", problem_ids=["1.1", "9.99"])
    with pytest.raises(SystemExit):
        exercises.main(["nbgrader-source", str(ROOT / "solutions"), str(tmp_path / "cli"), "--problems", "1.1,x",
                        "--exchange", str(tmp_path / "x")])
    assert "--problems" in capsys.readouterr().err


# ------------------------------------------------------------------ the whole route, one student per way to cheat

SOLVED = ("4.1", "4.2", "4.3")        # the honest student's answers; the partial student answers the first


def _fill(notebook, problem_id: str, source: str) -> None:
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "answer-" + problem_id.replace(".", "-"):
            cell.source = source
            return
    raise AssertionError(problem_id)


def _as_code(value) -> str:
    return f"answer = {value!r}" if isinstance(value, float) else f"answer = {str(value)!r}"


ROUTES = {
    # name: (what the work cells hold, the score it must get)
    "rebind": "check = record = lambda *a, **k: None\nanswer = 1.0",
    "patch": ("import lecture_lib.practice.answers as A, lecture_lib.practice.checks as C\n"
              "A.record = lambda *a, **k: None\nC.check = lambda *a, **k: None\nrecord = A.record\nanswer = 1.0"),
    "environment": "import os\nos.environ.pop('NBGRADER_EXECUTION', None)\nos.environ['LECTURE_STRICT'] = '0'\nanswer = 2.0",
    "transformer": ("get_ipython().input_transformers_post.append("
                    "lambda lines: [l.replace('record(', 'print(') for l in lines])\nanswer = 3.0"),
    "liar": ("class Anything(float):\n    def __eq__(self, other): return True\n    __hash__ = float.__hash__\n"
             "answer = Anything(1.0)"),
    "oracle": ("from lecture_lib.practice.checks import check\nimport os\nos.environ.pop('LECTURE_STRICT', None)\n"
               "answer = None\nfor guess in [a * 1e9 for a in range(1, 200)]:\n"
               "    if check('4.1', guess).correct:\n        answer = guess\n        break"),
    "instructor-files": ("import glob, os\nfound = glob.glob('../../../source/*/*.ipynb') + glob.glob('{course}/source/*/*')\n"
                         "print(found)\ntry:\n    open('{course}/gradebook.db', 'ab').write(b'x')\nexcept OSError as e:\n"
                         "    print('gradebook', e)\nanswer = float(len(found))"),
    "planted-cache": ("import os, pathlib\nfolder = pathlib.Path(os.environ.get('LECTURE_CACHE_DIR', '/tmp'))\n"
                      "try:\n    (folder / 'planted.pickle').write_bytes(b'x')\nexcept OSError as e:\n"
                      "    print(e)\nanswer = 4.0"),
    "infinite-loop": "while True:\n    pass",
    "fork-bomb": "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
    "disk-filler": "f = open('big', 'wb')\nwhile True:\n    f.write(b'x' * 2**20)",
    "left-behind": "import subprocess\nsubprocess.Popen(['sleep', '600', '{marker}'], start_new_session=True)\nanswer = 5.0",
    # the answer key and the checker, reached from inside the graded notebook at autograde (a red-team walk scored
    # full marks this way before the sandbox hid lecture_lib/practice/problems)
    "answer-key": ("from lecture_lib.practice import checks, variants\n"
                   "answer = checks.PROBLEMS['4.1'].bound(variants.draw('4.1', variants.student_id(), "
                   "seed='llm-serving-math')).expected()"),
    "checker-oracle": ("from lecture_lib.practice import checks\nanswer = None\n"
                       "for guess in [n * 1e9 for n in range(1, 200)]:\n"
                       "    if checks.verdict('4.1', guess, {{'gpus': 8}})[0] == 'correct':\n"
                       "        answer = guess"),
    "huge-expression": "import sympy as sp\nanswer = sp.Pow(3, 10**8, evaluate=False)",
    "script-in-feedback": ("from IPython.display import display, HTML, Javascript\n"
                           "display(HTML('<script>window.stolen = 1</script><img src=x onerror=alert(1)>'))\n"
                           "display(Javascript('window.stolen = 2'))\nanswer = 6.0"),
}


def pretend_class(tmp_path: Path) -> tuple[dict, Path, Path]:
    """The environment, course folder and exchange (mode 777, as nbgrader requires) of a class played by one OS user
    in ``tmp_path``: this environment's nbgrader first on PATH, the students' config read from tmp_path/etc."""
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "MPLBACKEND": "Agg",
           "JUPYTER_CONFIG_PATH": str(tmp_path / "etc"), "JUPYTER_DATA_DIR": str(tmp_path / "data")}
    env.pop("LECTURE_STRICT", None)
    course, exchange = tmp_path / "course", tmp_path / "exchange"
    exchange.mkdir(mode=0o777)
    exchange.chmod(0o777)
    return env, course, exchange


def students_config_and_nbgrader(tmp_path: Path, env: dict, course: Path, *, failing_ok: tuple = ()):
    """After the course's sources are written: the students' nbgrader config where the pretend class's environment
    reads it (tmp_path/etc), and ``run(*args, cwd)``, nbgrader on the command line in that environment, failing the
    test on a non-zero exit unless the command is in ``failing_ok``."""
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "nbgrader_config.py").write_text((course / "students" / "nbgrader_config.py").read_text())

    def run(*args, cwd):
        done = subprocess.run(["nbgrader", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0 or args[0] in failing_ok, \
            f"nbgrader {args}: {done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done

    return run


def _digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(folder)).encode() + path.read_bytes())
    return digest.hexdigest()


@pytest.mark.classroom
def test_every_route_scores_zero_and_honest_work_keeps_its_score(tmp_path):
    pytest.importorskip("nbgrader")
    from lecture_lib.practice import sandbox

    if sandbox.problem():
        pytest.fail(f"the sandbox must run for this test: {sandbox.problem()}")
    env, course, exchange = pretend_class(tmp_path)
    exercises.nbgrader_source(ROOT / "solutions", course, chapters=[4], exchange=str(exchange))
    run = students_config_and_nbgrader(tmp_path, env, course, failing_ok=("autograde",))
    with open(course / "nbgrader_config.py", "a") as config:     # quicker timeouts for the loops below
        config.write("c.SandboxedExecute.timeout = 15\nc.SandboxedExecute.notebook_seconds = 120\n")

    run("generate_assignment", "ch04", cwd=course)
    run("release_assignment", "ch04", cwd=course)
    marker = f"lecture-route-{os.getpid()}"
    students = {"honest": "alice", "partial": "bob", "classmate": "carol", "textbook": "dave",
                "deleted-check": "erin", "emptied-check": "fay", "forged-record": "gus",
                **{route: f"r{i:02d}" for i, route in enumerate(ROUTES)}}
    for route, student in students.items():
        home = tmp_path / "students" / student
        home.mkdir(parents=True)
        run("fetch_assignment", "ch04", "--Exchange.cache=.c", cwd=home)
        path = home / "ch04" / "04_pipelining_is_not_wise.ipynb"
        notebook = nbformat.read(path, as_version=4)
        if route in ("honest", "partial"):
            for problem_id in SOLVED[: 3 if route == "honest" else 1]:
                _fill(notebook, problem_id, _as_code(right_answer(problem_id, student)))
        elif route == "classmate":          # bob's answers, worked with bob's numbers
            for problem_id in ("4.1", "4.2"):
                assert variants.draw(problem_id, student, seed=SEED) != variants.draw(problem_id, "bob", seed=SEED)
                _fill(notebook, problem_id, _as_code(right_answer(problem_id, "bob")))
        elif route == "textbook":           # the worked solution's numbers
            for problem_id in ("4.1", "4.2"):
                _fill(notebook, problem_id, _as_code(checks.PROBLEMS[problem_id].expected()))
        elif route in ("deleted-check", "emptied-check"):   # nbgrader puts the cell back: a wrong answer stays wrong
            _fill(notebook, "4.1", "answer = 1.0")
            for cell in list(notebook.cells):
                if cell.metadata.get("nbgrader", {}).get("grade_id") == "check-4-1":
                    if route == "deleted-check":
                        notebook.cells.remove(cell)
                    else:
                        cell.source = ""
        elif route == "forged-record":     # a wrong answer recorded by hand for 4.1, and 4.2 forged in 4.1's cell
            _fill(notebook, "4.1", "from IPython.display import display\nimport lecture_lib.practice.answers as A\n"
                                   "display({A.MIME: {'problem': '4.2', 'kind': 'number', 'value': %r}}, raw=True)\n"
                                   "answer = 1.0" % right_answer("4.2", student))
        else:
            _fill(notebook, "4.1", ROUTES[route].format(course=course, marker=marker))
        nbformat.write(notebook, path)
        run("submit", "ch04", f"--student={student}", "--Exchange.cache=.c", cwd=home)
    run("collect", "ch04", cwd=course)
    submitted_before = _digest(course / "submitted")
    cache = Path(os.environ.get("LECTURE_CACHE_DIR", Path.home() / ".cache" / "lecture_lib"))
    cache_before = sorted(p.name for p in cache.rglob("*")) if cache.exists() else []
    graded = run("autograde", "ch04", "--create", cwd=course)
    log = graded.stdout + graded.stderr
    assert "error processing assignment" not in log.lower(), log[-4000:]
    run("generate_feedback", "ch04", cwd=course)
    run("export", cwd=course)

    import csv

    with open(course / "grades.csv", newline="") as stream:
        scores = {row["student_id"]: float(row["raw_score"]) for row in csv.DictReader(stream)}
    expected = {student: 0.0 for student in students.values()}
    expected.update(alice=3.0, bob=1.0)
    assert scores == expected, {route: scores.get(student) for route, student in students.items()}
    assert _digest(course / "submitted") == submitted_before, "other submissions untouched"
    assert not (course / "gradebook.db-journal").exists()
    assert (sorted(p.name for p in cache.rglob("*")) if cache.exists() else []) == cache_before
    assert not [pid for pid in os.listdir("/proc") if pid.isdigit() and marker in
                (Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
                 if Path(f"/proc/{pid}/cmdline").exists() else "")], "a student's process outlived autograde"
    looked = nbformat.read(course / "autograded" / students["instructor-files"] / "ch04" /
                           "04_pipelining_is_not_wise.ipynb", as_version=4)
    seen = [cell for cell in looked.cells if cell.metadata.get("nbgrader", {}).get("grade_id") == "answer-4-1"][0]
    printed = "".join(output.get("text", "") for output in seen.outputs)
    assert printed.startswith("[]\n") and "gradebook" in printed, f"the course was visible to student code: {printed}"
    page = (course / "feedback" / students["script-in-feedback"] / "ch04" / "04_pipelining_is_not_wise.html").read_text()
    # the code cell shows the route's source, escaped; nothing of it is a live script or image
    assert page.count("window.stolen") == 2 and "<script>window.stolen" not in page and "<img src=x" not in page, \
        "a student's script reached the feedback"
    stopped = students["fork-bomb"]          # its kernel was stopped: nothing after the bomb was recorded
    feedback = (course / "feedback" / stopped / "ch04" / "04_pipelining_is_not_wise.html").read_text()
    assert "No answer was recorded" in feedback and "not passed (unanswered)" in feedback
    honest = (course / "feedback" / "alice" / "ch04" / "04_pipelining_is_not_wise.html").read_text()
    assert honest.count("Correct") >= 3
    for student in students.values():         # no feedback page shows an expected value for that student
        page = (course / "feedback" / student / "ch04" / "04_pipelining_is_not_wise.html").read_text()
        for problem_id in ("4.1", "4.2"):
            value = right_answer(problem_id, student)
            assert f"{value:.6g}" not in page.replace(f"recorded {value:.6g}", "") or student in ("alice", "bob")


def test_the_final_draws_numbers_of_its_own_and_a_quiz_selection_leaves_it_out(tmp_path):
    """An instructor's walk found the final repeating quiz questions with the very numbers students had feedback on,
    and a quiz release by --problems also writing the final."""
    assert exercises.assignment_seed("s", "final") != exercises.assignment_seed("s", "quiz01") == "s"
    course = tmp_path / "course"
    exercises.nbgrader_source(ROOT / "quizzes", course, exchange=str(tmp_path / "x"), problem_ids=["1.101", "1.103"])
    assert sorted(p.name for p in (course / "source").iterdir()) == ["quiz01"]
    exercises.nbgrader_source(ROOT / "quizzes", course, exchange=str(tmp_path / "x"), chapters=[99],
                              problem_ids=["1.103"])
    cells = nbformat.read(course / "source" / "final" / "99_final_exam.ipynb", as_version=4).cells
    numbers = [c.source for c in cells if c.metadata["nbgrader"]["grade_id"].startswith("numbers-")]
    assert numbers and all("seed='llm-serving-math/final'" in source for source in numbers)
    judge = grading.JudgeAnswers(seed=SEED)
    problem = checks.PROBLEMS["1.103"]
    final_numbers = variants.draw("1.103", "alice", seed=f"{SEED}/final")
    right = problem.bound(final_numbers).expected()
    notebook = nbformat.v4.new_notebook(cells=[_check_cell("1.103", [_recorded(
        {"problem": "1.103", "kind": "number", "value": right})])])
    notebook, _ = judge.preprocess(notebook, {"nbgrader": {"student": "alice", "assignment": "final"}})
    assert notebook.cells[0].outputs[0]["data"]["text/plain"].startswith("✅")


def test_the_feedback_shows_only_text_and_images_of_a_submission():
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [nbformat.v4.new_output("display_data", data={"text/html": "<script>x</script>", "text/plain": "t",
                                                                 "application/javascript": "x()"}),
                    nbformat.v4.new_output("display_data", data={"image/svg+xml": "<svg onload=x()>"}),
                    nbformat.v4.new_output("stream", name="stdout", text="kept\n")]
    grading.safe_cell(cell)
    assert [o.get("data") for o in cell.outputs[:2]] == [{"text/plain": "t"}, {"text/plain": (
        "(an output the feedback does not show: only text and images are shown)")}]
    assert cell.outputs[2]["text"] == "kept\n"
    added = nbformat.v4.new_markdown_cell("<script>alert(1)</script>")
    grading.safe_cell(added)
    assert "<script>" not in added.source and "&lt;script&gt;" in added.source
    ours = nbformat.v4.new_markdown_cell("<b>locked</b>")
    ours.metadata["nbgrader"] = {"locked": True}
    grading.safe_cell(ours)
    assert ours.source == "<b>locked</b>"


def test_a_recorded_expression_cannot_stall_the_grader():
    import time

    started = time.monotonic()
    status, message = grading.judge("1.4", {"kind": "sympy", "srepr": sp.srepr(sp.Pow(3, 10**8, evaluate=False))},
                                    "alice")
    assert status == "invalid" and time.monotonic() - started < grading.EXPRESSION_SECONDS + 10


def test_the_judges_memory_is_held_under_its_stated_bound():
    """Whatever reading back or judging an answer asks for, the forked judge gets at most EXPRESSION_MEMORY of
    address space: a 3 GiB request fails in the child, the grader gets a verdict, and no child grew past the bound."""
    import resource

    problem = checks.PROBLEMS["1.4"]

    def greedy():
        hoard = [bytearray(256 * 2**20) for _ in range(12)]       # 3 GiB, page by page
        return "correct", str(len(hoard))

    status, message = checks._outcome_within(problem, None, grading.EXPRESSION_SECONDS, work=greedy,
                                             memory_bytes=grading.EXPRESSION_MEMORY)
    assert status == "invalid", message
    assert resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024 <= grading.EXPRESSION_MEMORY


def test_the_sandbox_hides_the_answer_key_and_the_grader_hands_in_the_numbers(tmp_path):
    from lecture_lib.practice import sandbox

    if sandbox.problem():
        pytest.skip(sandbox.problem())
    numbers = json.dumps(variants.everything_for("alice", seed=SEED))
    probe = ("import json\nfrom lecture_lib.practice import answers, checks\n"
             "found = {'known': checks.problem_ids(), 'numbers': answers.your_numbers('4.1').as_dict()}\n"
             "try:\n    from lecture_lib.practice.problems import ch04\n    found['key'] = 'imported'\n"
             "except ImportError:\n    found['key'] = 'hidden'\nprint(json.dumps(found))")
    run_dir = sandbox.private_run_dir()
    try:
        argv = sandbox.command([sys.executable, "-c", probe], run_dir=run_dir, student="alice",
                               env={"LECTURE_NUMBERS": numbers})
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    finally:
        import shutil

        shutil.rmtree(run_dir, ignore_errors=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["key"] == "hidden" and found["known"] == []
    assert found["numbers"] == variants.draw("4.1", "alice", seed=SEED)
