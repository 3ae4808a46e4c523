"""Progress (lecture_lib.progress): check() records attempts and first-correct times, progress() shows them."""

import json
import os
import subprocess
import sys

import pytest

from lecture_lib import checks, progress
from lecture_lib.checks import PROBLEMS, check


@pytest.fixture(autouse=True)
def progress_file(tmp_path, monkeypatch):
    """A fresh progress file per test, lenient checks."""
    file = tmp_path / "sub" / "progress.json"
    monkeypatch.setenv(progress.ENV_VAR, str(file))
    monkeypatch.delenv("LECTURE_STRICT", raising=False)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    return file


def expected(problem_id):
    return PROBLEMS[problem_id].expected()


def test_default_location_is_per_user(monkeypatch):
    monkeypatch.delenv(progress.ENV_VAR)
    assert progress.path() == progress.DEFAULT_PATH.expanduser()
    monkeypatch.setenv(progress.ENV_VAR, "off")
    assert progress.path() is None


def test_check_records_attempts_and_the_first_correct_time(progress_file):
    check("1.1", expected("1.1") * 3)          # wrong
    check("1.1", ...)                           # unanswered: not an attempt
    assert progress.load()["problems"]["1.1"]["first_correct"] is None
    check("1.1", expected("1.1"))               # correct
    check("1.1", expected("1.1"))               # correct again: the first time stays
    entry = json.loads(progress_file.read_text())["problems"]["1.1"]
    assert entry["attempts"] == 3
    assert entry["attempts_to_correct"] == 2
    assert entry["first_correct"] and entry["last_status"] == "correct"
    assert set(json.loads(progress_file.read_text())["problems"]) == {"1.1"}


def test_the_file_never_holds_an_answer(progress_file):
    for problem_id in ("1.1", "1.3", "1.4", "1.9"):
        check(problem_id, expected(problem_id))
        check(problem_id, "nonsense")
    text = progress_file.read_text()
    for problem_id in ("1.1", "1.3"):
        value = expected(problem_id)
        for form in (repr(value), f"{value:.6g}", f"{value:.3g}"):
            assert form not in text
    assert str(expected("1.4")) not in text and "nonsense" not in text
    assert json.loads(text)["problems"]["1.9"].keys() <= {
        "attempts", "first_attempt", "first_correct", "last_attempt", "last_status", "attempts_to_correct"}


def test_unknown_problems_and_the_grader_are_not_recorded(progress_file, monkeypatch):
    check("99.1", 3)
    assert not progress_file.exists()
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with pytest.raises(AssertionError):
        check("1.1", 1.0)
    assert not progress_file.exists()


def test_a_corrupt_file_does_not_break_check(progress_file):
    progress_file.parent.mkdir(parents=True)
    for garbage in ("{not json", json.dumps({"version": 1, "problems": {"1.1": {"attempts": "x"}}}), "[]"):
        progress_file.write_text(garbage)
        assert check("1.1", expected("1.1")).status == "correct"
        assert progress.load()["problems"]["1.1"]["attempts"] == 1
        assert (progress_file.parent / "progress.json.corrupt").read_text() == garbage


def test_an_unwritable_location_does_not_break_check(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(progress.ENV_VAR, str(blocker / "progress.json"))   # its parent is a file
    assert check("1.1", expected("1.1")).status == "correct"
    assert progress.record("1.1", "correct") is False


def test_writes_are_atomic_and_leave_no_temporary_files(progress_file):
    for _ in range(5):
        check("1.2", 1.0)
    assert [p.name for p in progress_file.parent.iterdir()] == ["progress.json"]


def test_the_per_chapter_table(progress_file):
    check("1.1", expected("1.1"))
    check("1.2", 1.0)
    check("2.1", expected("2.1"))
    report = progress.progress()
    rows = {row[0]: row for row in report.rows}
    chapters = sorted({int(pid.split(".")[0]) for pid in checks.problem_ids()})
    assert list(rows) == [str(c) for c in chapters] + ["all"]
    assert rows["1"][1:5] == (str(len(checks.problem_ids(chapter=1))), "2", "1", "2")
    assert rows["2"][2:5] == ("1", "1", "1") and "UTC" in rows["2"][5]
    assert rows["3"][2:6] == ("0", "0", "0", "—")
    assert report.totals == {"problems": len(checks.problem_ids()), "attempted": 3, "solved": 2, "attempts": 3}
    html_text = report._repr_html_()
    assert "<table" in html_text and "progress(reset=True)" in html_text and str(progress_file) in html_text
    assert "attempted" in str(report) and "first solved" in str(report)


def test_the_per_problem_table_and_reset(progress_file):
    check("1.3", 1.0)
    check("1.3", expected("1.3"))
    rows = {row[0]: row for row in progress.progress(chapter=1).rows}
    assert rows["1.3"][2:5] == ("yes", "2", "2")
    assert rows["1.1"][2:] == ("no", "0", "—", "—")
    empty = progress.progress(reset=True)
    assert not progress_file.exists() and empty.totals["attempts"] == 0
    assert progress.clear() is False


@pytest.mark.parametrize("kwargs, word", [({"chapter": 0}, "chapter"), ({"chapter": 42}, "chapter"),
                                          ({"chapter": "1"}, "chapter"), ({"reset": "yes"}, "reset")])
def test_bad_arguments_name_the_parameter(kwargs, word):
    with pytest.raises(ValueError, match=word):
        progress.progress(**kwargs)


def test_command_line(progress_file):
    progress.record("1.1", "correct")
    env = {**os.environ, progress.ENV_VAR: str(progress_file)}
    shown = subprocess.run([sys.executable, "-m", "lecture_lib.progress"], env=env,
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0 and "Practice problems by chapter" in shown.stdout
    cleared = subprocess.run([sys.executable, "-m", "lecture_lib.progress", "--reset"], env=env,
                             capture_output=True, text=True, timeout=120)
    assert cleared.returncode == 0 and not progress_file.exists()
