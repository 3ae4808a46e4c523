"""docs/teaching_plans.md (issue 47): every problem, chapter, explorer and predict question it names exists, the
problems it calls core are core, and every command of its ```bash blocks works: `nbgrader-source` is run into a
scratch course (in the document's order, so each `nbgrader generate_assignment NAME` finds NAME released by the lines
before it), the grade export and `tools/build_slides.py` parse their arguments, and `make` targets exist."""

import re
import shlex
import sys
from pathlib import Path

import pytest

from lecture_lib.explorers import predict
from lecture_lib.practice import checks, exercises, gradebook_export

PROBLEMS = checks.PROBLEMS   # importing checks registers every problem, the bank's too

ROOT = Path(__file__).resolve().parents[1]
PLANS = ROOT / "docs" / "teaching_plans.md"
TEXT = PLANS.read_text(encoding="utf-8")
BLOCKS = re.findall(r"```bash\n(.*?)```", TEXT, re.DOTALL)
LEVELS = {problem.problem_id: problem.level for _, problem in exercises.levels(ROOT / "solutions")}
LAB = {11}     # the lab after Chapter 1 (notebooks/11_lab_...): no week of its own, no quiz
LECTURE_CHAPTERS = {int(path.name[:2]) for path in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")} - {0} - LAB
"""The chapters a class is taught, one quiz each: every numbered notebook but the start page and the lab."""
WEEK_ROWS = [line for line in TEXT.splitlines() if re.match(r"\|\s*\d+\s*\|", line) and line.count("|") == 7]


def test_the_plans_have_both_schedules_and_the_rubrics():
    for heading in ("## The 6-week module", "## The 10-week course", "### Predict questions", "### Open questions"):
        assert heading in TEXT
    six = TEXT.split("## The 6-week module")[1].split("## The 10-week course")[0]
    ten = TEXT.split("## The 10-week course")[1].split("## Rubrics")[0]
    assert [int(m) for m in re.findall(r"^\|\s*(\d+)\s*\|", six, re.MULTILINE)] == list(range(1, 7))
    assert [int(m) for m in re.findall(r"^\|\s*(\d+)\s*\|", ten, re.MULTILINE)] == list(range(1, 11))
    covered = set()
    for row in WEEK_ROWS:
        chapters = row.split("|")[2]
        covered |= {int(n) for n in re.findall(r"\b(\d{1,2})\b", chapters)}
    assert covered == LECTURE_CHAPTERS | {0}, "every chapter but the lab is taught in the plans"


def test_every_problem_named_exists_and_homework_is_core():
    named = set()
    for row in WEEK_ROWS:
        cells = row.split("|")
        homework, quiz = cells[3], cells[6]
        for pid in re.findall(r"\b\d{1,2}\.\d{1,3}\b", homework):
            assert pid in PROBLEMS, f"{pid} in {row!r}"
            assert LEVELS.get(pid) == "core", f"homework {pid} is not a core problem"
            named.add(pid)
        for pid in re.findall(r"\b\d{1,2}\.\d{1,3}\b", quiz):
            assert pid in PROBLEMS and int(pid.split(".")[1]) >= 101, f"quiz {pid} is not in the bank"
            named.add(pid)
    for ids in re.findall(r"--problems ([\d.,]+)", TEXT):
        for pid in ids.split(","):
            assert pid in PROBLEMS, pid
            named.add(pid)
    for pid in re.findall(r"\(problem (\d{1,2}\.\d+)\)", TEXT):
        assert pid in PROBLEMS
    assert len(named) > 60
    # a row that says "all core" lists exactly the chapter's core problems
    for row in WEEK_ROWS:
        if "(all core)" in row:
            ids = re.findall(r"\b\d{1,2}\.\d{1,3}\b", row.split("|")[3])
            chapter = ids[0].split(".")[0]
            assert ids == [pid for pid, level in LEVELS.items() if level == "core" and pid.split(".")[0] == chapter]


def test_every_explorer_and_predict_question_named_exists():
    import importlib
    import pkgutil

    from lecture_lib import explorers

    classes = set()
    for info in pkgutil.iter_modules(explorers.__path__):
        module = importlib.import_module(f"lecture_lib.explorers.{info.name}")
        classes |= {name for name in dir(module) if name.endswith("Explorer")}
    demos = 0
    for row in WEEK_ROWS:
        cells = row.split("|")
        chapter = re.findall(r"\d+", cells[2])[-1] if re.findall(r"\d+", cells[2]) else None
        for segment in cells[5].split(";"):
            named = re.search(r"Chapter (\d+)", segment)
            chapter = named.group(1) if named else chapter
            for name in re.findall(r"`(\w+Explorer)`", segment):
                assert name in classes, name
                notebook = next((ROOT / "notebooks").glob(f"{int(chapter):02d}_*.ipynb"))
                assert f"{name}(" in notebook.read_text(encoding="utf-8"), f"{name} is not in {notebook.name}"
                demos += 1
    assert demos >= 15
    asked = set(re.findall(r"`([a-z0-9_]+)`", TEXT)) & set(predict.FACTORIES)
    assert asked == set(predict.FACTORIES), f"predict questions without a rubric: {set(predict.FACTORIES) - asked}"
    rubric = TEXT.split("### Predict questions")[1].split("### Open questions")[0]
    for name in predict.FACTORIES:
        assert f"`{name}`" in rubric, f"no rubric row for {name}"


def _commands():
    for block in BLOCKS:
        for line in block.strip().splitlines():
            yield line.strip()


def test_every_bash_command_runs_into_a_scratch_course(tmp_path, capsys):
    course, exchange = tmp_path / "course", tmp_path / "exchange"
    variables = {"CHECKOUT": str(ROOT), "COURSE": str(course), "EXCHANGE": str(exchange), "SEED": "spring-2027"}
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    released, generated, exports = set(), 0, []
    for line in _commands():
        for name, value in variables.items():
            line = line.replace(f'"${name}"', value).replace(f"${name}", value)
        words = shlex.split(line)
        if words[:1] == ["source"] or re.fullmatch(r"[A-Z]+=\S+", line) or words[:1] == ["cd"]:
            continue
        if words[:2] == ["make", "slides"] or words[:1] == ["make"]:
            assert re.search(rf"^{re.escape(words[1])}:", makefile, re.MULTILINE), line
        elif words[:3] == ["python", "-m", "lecture_lib.practice.exercises"]:
            assert exercises.main(words[3:]) == 0, line
            released = {path.name for path in (course / "source").iterdir()}
        elif words[:3] == ["python", "-m", "lecture_lib.practice.gradebook_export"]:
            exports.append(words[3:])      # run at the end, once the course exists
        elif words[:1] == ["nbgrader"]:
            assert words[1] in {"generate_assignment", "release_assignment", "collect", "autograde",
                                "generate_feedback", "release_feedback"}, line
            if words[1] == "generate_assignment":
                generated += 1
            if course.exists():
                assert words[2] in released, f"{line}: {words[2]} was not released by the lines before it"
        else:
            raise AssertionError(f"a command the test does not know: {line}")
    for argv in exports:
        # no gradebook in the scratch course (no student submitted): the arguments parse, and the command names
        # what is missing
        assert gradebook_export.main(argv) == 2, argv
        assert "has no gradebook.db" in capsys.readouterr().err
    assert len(exports) >= 2 and generated >= 16
    assert {f"ch{n:02d}" for n in LECTURE_CHAPTERS} <= released
    assert {f"quiz{n:02d}" for n in LECTURE_CHAPTERS} | {"final"} <= released


def test_the_weekly_quizzes_release_only_the_problems_named(tmp_path):
    course = tmp_path / "course"
    assert exercises.main(["nbgrader-source", str(ROOT / "quizzes"), str(course), "--exchange", str(tmp_path / "x"),
                           "--chapter", "99", "--problems", "1.103,2.105,3.105,4.104,5.104,6.103,7.103,8.105,9.103,10.104"]) == 0
    import nbformat

    final = nbformat.read(course / "source" / "final" / "99_final_exam.ipynb", as_version=4)
    assert [p.problem_id for p in exercises.problems(final)] == \
        ["1.103", "2.105", "3.105", "4.104", "5.104", "6.103", "7.103", "8.105", "9.103", "10.104"]
    assert sorted(path.name for path in (course / "source").iterdir()) == ["final"]


def test_build_slides_arguments_parse():
    sys.path.insert(0, str(ROOT / "tools"))
    import build_slides

    with pytest.raises(SystemExit) as stop:
        build_slides.main(["--help"])
    assert stop.value.code == 0
