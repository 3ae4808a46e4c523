"""The grade export (lecture_lib.practice.gradebook_export): nbgrader's gradebook as Canvas's and Moodle's CSV.

The gradebook is made with nbgrader's own API in tmp_path, as `nbgrader autograde` would leave it: two
assignments (ch01 worth 3 points, quiz01 worth 2), three students, one of whom never submitted quiz01.
"""

import csv
import io
import os
import subprocess
import sys

import pytest

pytest.importorskip("nbgrader", reason="nbgrader is optional (the grade extra)")

from lecture_lib.practice import gradebook_export


def _assignment(gradebook, name, points):
    gradebook.add_assignment(name)
    gradebook.add_notebook("nb", name)
    for index, value in enumerate(points):
        gradebook.add_grade_cell(f"check-{index}", "nb", name, max_score=value, cell_type="code")


def _grade(gradebook, name, student, earned):
    submission = gradebook.add_submission(name, student)
    notebook = submission.notebooks[0]
    for grade, value in zip(sorted(notebook.grades, key=lambda g: g.name), earned):
        grade.auto_score = value
    gradebook.db.commit()


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """Made once for the module (nbgrader's alembic migration takes seconds); no test changes it."""
    from nbgrader.api import Gradebook

    tmp_path = tmp_path_factory.mktemp("gradebook")
    with pytest.MonkeyPatch.context() as patch:
        # nbgrader runs `alembic` from PATH (docs/instructor.md activates the venv for this reason)
        patch.setenv("PATH", os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]))
        yield _make(tmp_path, Gradebook)


def _make(tmp_path, Gradebook):
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gradebook:
        _assignment(gradebook, "ch01", [1, 1, 1])
        _assignment(gradebook, "quiz01", [1, 1])
        gradebook.add_student("alice", first_name="Alice", last_name="Liddell", email="alice@example.org",
                              lms_user_id="1001")
        gradebook.add_student("bob")
        gradebook.add_student("carol", first_name="Carol", last_name="Ng, Jr.")
        _grade(gradebook, "ch01", "alice", [1, 1, 0])
        _grade(gradebook, "quiz01", "alice", [1, 1])
        _grade(gradebook, "ch01", "bob", [0, 1, 0])
        _grade(gradebook, "quiz01", "bob", [0, 0])
        _grade(gradebook, "ch01", "carol", [1, 1, 1])
    return tmp_path


def rows(text):
    return list(csv.reader(io.StringIO(text)))


def test_the_gradebook_is_read_with_missing_work_as_zero(course):
    grades = gradebook_export.read_gradebook(course)
    assert grades.assignments == (("ch01", 3.0), ("quiz01", 2.0))
    assert [s[0] for s in grades.students] == ["alice", "bob", "carol"]
    assert grades.scores[("alice", "ch01")] == 2 and grades.scores[("alice", "quiz01")] == 2
    assert grades.scores[("bob", "ch01")] == 1 and grades.scores[("carol", "quiz01")] == 0


def test_canvas_layout(course, tmp_path):
    out = tmp_path / "out" / "canvas.csv"
    assert gradebook_export.main([str(course), "--format", "canvas", "-o", str(out), "--section", "S1"]) == 0
    table = rows(out.read_text(encoding="utf-8"))
    assert table[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "ch01", "quiz01"]
    assert table[1] == ["Points Possible", "", "", "", "", "3", "2"]
    assert table[2] == ["Liddell, Alice", "1001", "alice", "alice", "S1", "2", "2"]
    assert table[3] == ["bob", "", "bob", "bob", "S1", "1", "0"]
    assert table[4][0] == "Ng, Jr., Carol" and table[4][-2:] == ["3", "0"]   # a comma in a name stays one field
    assert len(table) == 5


def test_moodle_layout_and_percent(course, tmp_path):
    out = tmp_path / "moodle.csv"
    assert gradebook_export.main([str(course), "--format", "moodle", "-o", str(out), "--percent",
                                  "--assignment", "quiz01", "--assignment", "ch01"]) == 0
    table = rows(out.read_text(encoding="utf-8"))
    assert table[0] == ["First name", "Last name", "Username", "ID number", "Email address", "quiz01", "ch01"]
    assert table[1] == ["Alice", "Liddell", "alice", "1001", "alice@example.org", "100", "66.6667"]
    assert table[2] == ["", "", "bob", "", "", "0", "33.3333"]
    assert len(table) == 4


def test_the_gradebook_is_not_changed(course, tmp_path):
    before = (course / "gradebook.db").read_bytes()
    gradebook_export.write(course, "canvas", tmp_path / "a.csv")
    assert (course / "gradebook.db").read_bytes() == before


def test_bad_input_is_named(course, tmp_path, capsys):
    with pytest.raises(ValueError, match="assignments must be distinct names among"):
        gradebook_export.read_gradebook(course, assignments=["ch09"])
    with pytest.raises(ValueError, match="fmt must be one of"):
        gradebook_export.render(gradebook_export.read_gradebook(course), "blackboard")
    assert gradebook_export.main([str(tmp_path / "nowhere"), "--format", "moodle", "-o", str(tmp_path / "x.csv")]) == 2
    assert "no such folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert gradebook_export.main([str(tmp_path / "empty"), "--format", "moodle", "-o", str(tmp_path / "x.csv")]) == 2
    assert "has no gradebook.db" in capsys.readouterr().err


def test_the_command_runs_as_a_module(course, tmp_path):
    out = tmp_path / "m.csv"
    done = subprocess.run([sys.executable, "-m", "lecture_lib.practice.gradebook_export", str(course),
                           "--format", "moodle", "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "3 students x 2 assignments" in done.stdout and out.exists()
