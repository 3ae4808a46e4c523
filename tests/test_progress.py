"""Progress (lecture_lib.practice.progress): check() records attempts and first-correct times, progress() shows them."""

import json
import os
import subprocess
import stat
import sys

import pytest

from lecture_lib.practice import checks, progress
from lecture_lib.practice.checks import PROBLEMS, check


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
    kept = ("progress.json.corrupt", "progress.json.corrupt.2", "progress.json.corrupt.3")
    for garbage, name in zip(("{not json", json.dumps({"version": 1, "problems": {"1.1": {"attempts": "x"}}}),
                              "[]"), kept):
        progress_file.write_text(garbage)
        assert check("1.1", expected("1.1")).status == "correct"
        assert progress.load()["problems"]["1.1"]["attempts"] == 1
        assert (progress_file.parent / name).read_text() == garbage


def test_an_unwritable_location_does_not_break_check(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(progress.ENV_VAR, str(blocker / "progress.json"))   # its parent is a file
    with pytest.warns(progress.ProgressWarning, match="not being saved") as caught:
        assert check("1.1", expected("1.1")).status == "correct"
        assert progress.record("1.1", "correct") is False
    assert len(caught) == 1   # said once, not at every check


def test_writes_are_atomic_and_leave_no_temporary_files(progress_file):
    for _ in range(5):
        check("1.2", 1.0)
    # the data file and its lock file (kept: deleting a lock file races with its next user)
    assert sorted(p.name for p in progress_file.parent.iterdir()) == [".progress.json.lock", "progress.json"]


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
    shown = subprocess.run([sys.executable, "-m", "lecture_lib.practice.progress"], env=env,
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0 and "Practice problems by chapter" in shown.stdout
    cleared = subprocess.run([sys.executable, "-m", "lecture_lib.practice.progress", "--reset"], env=env,
                             capture_output=True, text=True, timeout=120)
    assert cleared.returncode == 0 and not progress_file.exists()


# ------------------------------------------------------------------ issue 20 §2: loses nothing, harms nothing

@pytest.fixture(autouse=True)
def fresh_warnings():
    """Each test sees the once-only warnings afresh."""
    progress._warned.clear()
    yield
    progress._warned.clear()


_WORKER = """
import os, sys, time
from lecture_lib.practice import progress
go = sys.argv[1]
while not os.path.exists(go):
    time.sleep(0.01)
for _ in range(int(sys.argv[2])):
    assert progress.record("1.1", "wrong")
"""


def test_four_processes_recording_at_once_lose_no_attempt(progress_file, tmp_path):
    go, each = tmp_path / "go", 60
    env = {**os.environ, progress.ENV_VAR: str(progress_file), "PYTHONDONTWRITEBYTECODE": "1"}
    workers = [subprocess.Popen([sys.executable, "-c", _WORKER, str(go), str(each)], env=env,
                                stderr=subprocess.PIPE, text=True) for _ in range(4)]
    go.write_text("")   # all four start writing at the same moment
    for worker in workers:
        _, err = worker.communicate(timeout=300)
        assert worker.returncode == 0, err
    assert progress.load()["problems"]["1.1"]["attempts"] == 4 * each
    assert not list(progress_file.parent.glob("*.corrupt")) and not list(progress_file.parent.glob("*.tmp"))


def _untouched_after_checks(target, describe):
    """check() twice: both judged, one warning naming the path, nothing recorded, target as before."""
    before = describe()
    with pytest.warns(progress.ProgressWarning, match="not a regular file") as caught:
        assert check("1.1", expected("1.1")).status == "correct"
        assert check("1.1", expected("1.1")).status == "correct"
    assert len([w for w in caught if issubclass(w.category, progress.ProgressWarning)]) == 1
    assert progress.load()["problems"] == {}
    assert progress.progress().totals["attempts"] == 0
    assert progress.clear() is False
    assert describe() == before
    assert not target.with_name(target.name + ".corrupt").exists()


def test_a_directory_is_left_alone(progress_file):
    progress_file.mkdir(parents=True)
    (progress_file / "keep.txt").write_text("mine")
    _untouched_after_checks(progress_file, lambda: (progress_file.is_dir(), (progress_file / "keep.txt").read_text()))


def test_a_symlink_is_neither_followed_nor_replaced(progress_file, tmp_path):
    real = tmp_path / "elsewhere.json"
    real.write_text(json.dumps({"version": 1, "problems": {}}))
    progress_file.parent.mkdir(parents=True)
    progress_file.symlink_to(real)
    _untouched_after_checks(progress_file, lambda: (progress_file.is_symlink(), os.readlink(progress_file),
                                                    real.read_text()))


def test_a_fifo_never_blocks(progress_file):
    import signal

    progress_file.parent.mkdir(parents=True)
    os.mkfifo(progress_file)

    def stuck(signum, frame):
        raise AssertionError("check() blocked on a FIFO")

    previous = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(60)
    try:
        _untouched_after_checks(progress_file, lambda: progress_file.is_fifo())
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null"])
def test_a_device_is_never_read_or_written(monkeypatch, device):
    if not os.path.exists(device):
        pytest.skip(f"{device} missing")
    from pathlib import Path

    monkeypatch.setenv(progress.ENV_VAR, device)
    _untouched_after_checks(Path(device), lambda: os.stat(device).st_rdev)


@pytest.mark.parametrize("garbage", [
    json.dumps({"version": 1, "problems": {"1.1": {"attempts": 2, "first_correct": 5}}}),
    json.dumps({"version": 1, "problems": {"1.1": {"attempts": 1, "first_correct": "9999-12-31T23:00:00-05:00"}}}),
    json.dumps({"version": 1, "problems": {"1.1": {"attempts": 1, "first_correct": "yesterday"}}}),
    json.dumps({"version": 1, "problems": {"1.1": {"attempts": True}}}),
    json.dumps({"version": 1, "problems": {"1.1": {"attempts": -3}}}),
    json.dumps({"version": 1, "problems": {"1.1": {"attempts": 1, "last_status": ["x"]}}}),
    json.dumps({"version": True, "problems": {}}),
    json.dumps({"version": 1, "problems": {"1.1": {"attempts": 1, "first_correct": "2026-01-01T00:00:00+00:00",
                                                  "attempts_to_correct": "one"}}}),
    "[" * 200_000 + "]" * 200_000,
    '{"version": 1, "problems": ' + "{\"a\": " * 5000 + "1" + "}" * 5001,
    "x" * (progress.MAX_BYTES + 10),
])
def test_a_file_of_the_wrong_shape_is_set_aside_and_progress_works(progress_file, garbage):
    progress_file.parent.mkdir(parents=True)
    progress_file.write_text(garbage)
    report = progress.progress()            # no TypeError, OverflowError or RecursionError
    assert report.totals["attempts"] == 0
    assert (progress_file.parent / "progress.json.corrupt").read_text() == garbage
    assert check("1.1", expected("1.1")).status == "correct"
    assert progress.load()["problems"]["1.1"]["attempts"] == 1
    assert progress.progress(chapter=1).totals["solved"] == 1


def test_a_far_future_utc_date_is_shown_not_fatal(progress_file):
    progress_file.parent.mkdir(parents=True)
    progress_file.write_text(json.dumps({"version": 1, "problems": {"1.1": {
        "attempts": 1, "first_attempt": "9999-12-31T23:59:59+00:00", "first_correct": "9999-12-31T23:59:59+00:00",
        "last_attempt": "9999-12-31T23:59:59+00:00", "last_status": "correct", "attempts_to_correct": 1}}}))
    assert progress.progress().totals["solved"] == 1
    assert "9999" in str(progress.progress(chapter=1))


_READ_ONLY_HOME = """
import warnings
from lecture_lib.practice.checks import PROBLEMS, check
value = PROBLEMS["1.1"].expected()
print(check("1.1", value).status, check("1.1", value).status)
"""


def _read_only(folder, on: bool) -> bool:
    """Make ``folder`` read-only (or writable again). Root ignores file modes, so as root the folder
    is made immutable with ``chattr +i`` instead (ext4, xfs, btrfs). False if that is impossible."""
    if os.geteuid() != 0:
        os.chmod(folder, 0o555 if on else 0o755)
        return True
    import shutil

    if shutil.which("chattr") is None:
        return False
    return subprocess.run(["chattr", "+i" if on else "-i", str(folder)], capture_output=True).returncode == 0


def test_a_read_only_home_still_checks_and_warns_once(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    if not _read_only(home, True):
        pytest.skip("running as root where chattr cannot make a folder immutable")
    try:
        assert not os.access(home, os.W_OK) or os.geteuid() == 0
        env = {key: value for key, value in os.environ.items()
               if key not in (progress.ENV_VAR, "PYTEST_CURRENT_TEST")}   # the learner's default file
        env.update(HOME=str(home), PYTHONDONTWRITEBYTECODE="1")
        run = subprocess.run([sys.executable, "-c", _READ_ONLY_HOME], env=env, capture_output=True, text=True,
                             timeout=300)
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip().splitlines()[-1] == "correct correct"
        assert run.stderr.count("Progress is not being saved") == 1, run.stderr
        assert list(home.iterdir()) == []
    finally:
        _read_only(home, False)


_KERNEL = """
import sys
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
for cell in sys.argv[1:]:
    result = shell.run_cell(cell, store_history=True)
    assert result.success, result
"""


def _kernel(progress_file, *cells):
    env = {**os.environ, progress.ENV_VAR: str(progress_file), "PYTHONDONTWRITEBYTECODE": "1"}
    run = subprocess.run([sys.executable, "-c", _KERNEL, *cells], env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    return progress.load(progress_file)["problems"]


def test_a_learners_exercise_cells_are_recorded(progress_file):
    seen = _kernel(progress_file, "from lecture_lib.practice.checks import check", "answer = 1.0  # your work here",
                   'check("1.2", answer)', "answer = 2.0  # your work here", 'check("1.3", answer)')
    assert {pid: entry["attempts"] for pid, entry in seen.items()} == {"1.2": 1, "1.3": 1}


def test_the_previous_problems_answer_checked_again_is_not_an_attempt(progress_file):
    """1.3's work cell did not run (it raised), so answer is still 1.2's: check() says so, records nothing."""
    seen = _kernel(progress_file, "from lecture_lib.practice.checks import check", "answer = 1.0  # your work here",
                   'check("1.2", answer)', 'check("1.3", answer)')
    assert {pid: entry["attempts"] for pid, entry in seen.items()} == {"1.2": 1}


def test_running_worked_solutions_records_nothing(progress_file):
    work = f"{'### BEGIN SOLUTION'}\nanswer = 1.0\n{'### END SOLUTION'}"
    seen = _kernel(progress_file, "from lecture_lib.practice.checks import check", "answer = 2.0", work,
                   'check("1.2", answer)', 'check("1.3", answer)')
    assert seen == {}


def test_under_pytest_the_default_file_is_never_written(monkeypatch, tmp_path):
    monkeypatch.delenv(progress.ENV_VAR)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert os.environ.get("PYTEST_CURRENT_TEST")
    assert progress.recording() is False
    assert progress.record("1.1", "correct") is False
    assert not (tmp_path / ".lecture_lib").exists()


def test_progress_and_checks_import_each_other_in_one_direction_only():
    import ast
    from pathlib import Path

    package = Path(progress.__file__).parent

    def imported(name):
        tree = ast.parse((package / f"{name}.py").read_text())
        found = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                found |= {node.module or ""} | {alias.name for alias in node.names}
            elif isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
        return found

    assert "checks" not in imported("progress") and "checks" not in imported("registry")
    assert "progress" not in imported("registry")
    run = subprocess.run([sys.executable, "-c", "import sys, lecture_lib.practice.progress as p; p.progress(); "
                                                "print('lecture_lib.practice.checks' in sys.modules)"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stdout.strip() == "False", run.stderr


# ---- issue 31 §3: bad files are kept, read-only files are respected

def test_every_corrupt_file_is_kept_under_a_name_of_its_own(progress_file):
    progress_file.parent.mkdir(parents=True)
    bad = ["{first", "[2]", '{"version": 1, "problems": 3}', "fourth}"]
    for garbage in bad:
        progress_file.write_text(garbage)
        assert check("1.1", expected("1.1")).status == "correct"
    folder = progress_file.parent
    kept = [folder / "progress.json.corrupt"] + [folder / f"progress.json.corrupt.{n}" for n in (2, 3, 4)]
    assert [name.read_text() for name in kept] == bad
    assert progress.load()["problems"]["1.1"]["attempts"] == 1


def test_a_read_only_progress_file_is_left_as_it_is_with_one_warning(progress_file):
    progress_file.parent.mkdir(parents=True)
    check("1.1", expected("1.1"))
    progress_file.chmod(0o444)
    before = progress_file.read_bytes()
    with pytest.warns(progress.ProgressWarning, match="read-only \\(mode 0444\\)") as caught:
        assert check("1.2", expected("1.2")).status == "correct"
        check("1.3", 0)
        assert progress.clear() is False
    assert len([w for w in caught if "read-only" in str(w.message)]) == 1
    assert progress_file.read_bytes() == before
    assert stat.S_IMODE(progress_file.stat().st_mode) == 0o444
    assert set(progress.load()["problems"]) == {"1.1"}          # still read and shown
    progress_file.write_text("{not json")                       # root can still write it
    progress_file.chmod(0o444)
    assert progress.load() == progress._empty()
    assert not (progress_file.parent / "progress.json.corrupt").exists()   # not renamed either


def test_a_writable_file_keeps_its_permissions_when_rewritten(progress_file):
    progress_file.parent.mkdir(parents=True)
    check("1.1", expected("1.1"))
    progress_file.chmod(0o640)
    check("1.2", expected("1.2"))
    assert stat.S_IMODE(progress_file.stat().st_mode) == 0o640
    assert set(progress.load()["problems"]) == {"1.1", "1.2"}
