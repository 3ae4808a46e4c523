"""Issue 47 §2: a real JupyterHub for a class, started by the project's own command, used in a real browser.

The hub (tools/hub.py, `sudo make hub`) is installed once under /opt/llm-serving-math and started on a free port:
JupyterHub with configurable-http-proxy from npm, PAM logins of a test class, LocalProcessSpawner, nbgrader's
Assignments tab and the idle culler. Three students log in through the login page in Chromium, open Chapter 1 and
run it, fetch ch01 from the Assignments tab, answer, and submit; the instructor collects, autogrades (in the
sandbox) and releases feedback; each student fetches theirs. Then everything is stopped. Needs root (accounts, and a
server per user as that user), npm and network access to PyPI and npm for the install: in CI, `make test-class`."""

from __future__ import annotations

import csv
import os
import pwd
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

import browser_support
from lecture_lib.practice import checks

pytestmark = [pytest.mark.classroom, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[1]
PREFIX = Path(os.environ.get("HUB_PREFIX", "/opt/llm-serving-math"))
CHAPTER = "01_batch_size_cost_and_speed.ipynb"
HUB_ARGS = "--LabApp.expose_app_in_browser=True"


def _skip_or_fail(reason: str):
    if browser_support.in_ci():
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def hub():
    if os.geteuid() != 0:
        _skip_or_fail("the hub needs root: it creates accounts and spawns each user's server as that user")
    if browser_support.browser_unavailable():
        _skip_or_fail(browser_support.browser_unavailable())
    install = subprocess.run(["/usr/bin/python3", ROOT / "tools" / "hub.py", "install", "--students", "3",
                              "--prefix", PREFIX], capture_output=True, text=True, timeout=900)
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    port = browser_support.free_port()
    log = open(PREFIX / "state" / "test-hub.log", "w")
    process = subprocess.Popen(["/usr/bin/python3", ROOT / "tools" / "hub.py", "start", "--port", str(port),
                                "--prefix", PREFIX], stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                               env={**os.environ, "HUB_SPAWNER_ARGS": HUB_ARGS})
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if requests.get(f"{base}/hub/api/", timeout=2).ok:
                break
        except requests.RequestException:
            time.sleep(0.5)
    else:
        process.kill()
        pytest.fail("the hub did not answer in 90 s:\n" + (PREFIX / "state" / "test-hub.log").read_text()[-3000:])
    passwords = dict(line.split() for line in (PREFIX / "state" / "class.txt").read_text().splitlines())
    yield {"base": base, "passwords": passwords, "process": process}
    os.killpg(process.pid, signal.SIGTERM)          # the hub stops every user's server as it exits
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
    log.close()


def as_user(user: str, *args, cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess:
    env_bin = PREFIX / "env" / "bin"
    done = subprocess.run(["runuser", "-u", user, "--", "env", "-i", f"PATH={env_bin}:/usr/bin:/bin", "LANG=C.UTF-8",
                           f"HOME={pwd.getpwnam(user).pw_dir}", "MPLBACKEND=Agg", *map(str, args)],
                          cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{user}: {args}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def reset_term(course: Path, students: list[str]) -> None:
    """A fresh term on a hub that an earlier run used: no fetched copy, submission, grade or feedback of ch01."""
    import shutil

    for student in students:
        shutil.rmtree(Path(pwd.getpwnam(student).pw_dir) / "ch01", ignore_errors=True)
    for folder in ("release", "submitted", "autograded", "feedback"):
        shutil.rmtree(course / folder / "ch01", ignore_errors=True)
        for student in students:
            shutil.rmtree(course / folder / student, ignore_errors=True)
    (course / "gradebook.db").unlink(missing_ok=True)
    exchange = Path("/srv/nbgrader/exchange/llm-serving-math")
    for folder in ("inbound", "outbound", "feedback"):
        for path in (exchange / folder).glob("*") if (exchange / folder).exists() else []:
            if "ch01" in path.name or folder == "feedback":
                shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink()


APP_READY = "() => window.jupyterapp && window.jupyterapp.started !== undefined"
NOTEBOOK_STATE = """(path) => {
  const app = window.jupyterapp;
  const widget = [...app.shell.widgets('main')].find(w => w.context && w.context.path === path);
  if (!widget || !widget.content || !widget.content.model) return null;
  const cells = widget.content.model.cells;
  let pending = 0, errors = 0;
  for (let i = 0; i < cells.length; i++) {
    const json = cells.get(i).toJSON();
    if (json.cell_type !== 'code') continue;
    if (json.execution_count === null || json.execution_count === undefined) pending++;
    for (const out of json.outputs || []) if (out.output_type === 'error') errors++;
  }
  const kernel = widget.sessionContext.session && widget.sessionContext.session.kernel;
  return {pending, errors, status: kernel ? kernel.status : 'none', dirty: widget.context.model.dirty};
}"""


def wait_notebook(page, path: str, *, done, timeout: float = 180):
    deadline = time.monotonic() + timeout
    state = None
    while time.monotonic() < deadline:
        state = page.evaluate(NOTEBOOK_STATE, path)
        if state and done(state):
            return state
        time.sleep(0.3)
    raise TimeoutError(f"{path}: {state}")


def log_in(browser, hub, user: str):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(120_000)
    page.goto(f"{hub['base']}/hub/login")
    page.fill("#username_input", user)
    page.fill("#password_input", hub["passwords"][user])
    page.click("#login_submit")
    page.wait_for_url(f"**/user/{user}/lab/tree/llm-serving-math/notebooks/00_start_here.ipynb", timeout=180_000)
    page.wait_for_function(APP_READY)
    return context, page


def click_menu(page, menu: str, item: str, attempts: int = 6) -> None:
    """Open `menu` in the menu bar and click `item`, as a hand does.

    A click that lands while JupyterLab is still laying out (a notebook just opened, a kernel
    just started) can open the menu and close it again at once; a person then clicks again,
    and so does this, up to `attempts` times, before it fails."""
    entry = page.locator(f".lm-Menu-itemLabel:text-is('{item}')")
    for _ in range(attempts):
        page.click(f".lm-MenuBar-itemLabel:text-is('{menu}')")
        try:
            entry.wait_for(state="visible", timeout=10_000)
        except Exception:
            page.keyboard.press("Escape")
            continue
        entry.click()
        return
    raise TimeoutError(f"the {menu} menu never showed {item!r} after {attempts} clicks")


def test_a_class_logs_in_runs_chapter_one_fetches_answers_submits_and_gets_feedback(hub):
    from playwright.sync_api import sync_playwright

    base = hub["base"]
    course = Path(pwd.getpwnam("instructor").pw_dir) / "course"
    students = ["student01", "student02", "student03"]
    reset_term(course, students)
    as_user("instructor", "nbgrader", "generate_assignment", "ch01", "--force", cwd=course)
    as_user("instructor", "nbgrader", "release_assignment", "ch01", "--force", cwd=course)
    right = checks.PROBLEMS["1.1"].expected()          # 1.1 does not vary: the same answer for everyone
    with sync_playwright() as playwright:
        browser = browser_support.launch_browser(playwright)
        for index, student in enumerate(students):
            context, page = log_in(browser, hub, student)
            # Chapter 1, opened and run the way a student does: the file, then Run > Run All Cells
            page.goto(f"{base}/user/{student}/lab/tree/llm-serving-math/notebooks/{CHAPTER}")
            page.wait_for_function(APP_READY)
            path = f"llm-serving-math/notebooks/{CHAPTER}"
            wait_notebook(page, path, done=lambda s: s["status"] == "idle")
            click_menu(page, "Run", "Run All Cells")
            state = wait_notebook(page, path, done=lambda s: s["pending"] == 0 and s["status"] == "idle"
                                  or s["errors"], timeout=300)
            assert state["errors"] == 0, f"{student}: Chapter 1 raised on the hub"
            # the Assignments tab (Nbgrader > Assignment List): fetch ch01
            click_menu(page, "Nbgrader", "Assignment List")
            page.click("#released_assignments_list button:text-is('Fetch')")
            page.wait_for_selector("#fetched_assignments_list .item_name:has-text('ch01')")
            # answer 1.1 in the fetched notebook (the first and third student right, the second wrong), record, save
            work = f"ch01/{CHAPTER}"
            page.evaluate("async (path) => { await window.jupyterapp.commands.execute('docmanager:open', {path}); }",
                          work)
            wait_notebook(page, work, done=lambda s: s["status"] == "idle")
            answer = right if index != 1 else right * 10
            page.evaluate(
                """([path, source]) => {
                     const app = window.jupyterapp;
                     const w = [...app.shell.widgets('main')].find(x => x.context && x.context.path === path);
                     const cells = w.content.model.cells;
                     for (let i = 0; i < cells.length; i++) {
                       const cell = cells.get(i);
                       const meta = cell.getMetadata('nbgrader') || {};
                       if (meta.grade_id === 'answer-1-1') { cell.sharedModel.setSource(source); return; }
                     }
                     throw new Error('no work cell for 1.1');
                   }""", [work, f"answer = {answer!r}"])
            click_menu(page, "Run", "Run All Cells")
            wait_notebook(page, work, done=lambda s: s["pending"] == 0 and s["status"] == "idle", timeout=300)
            page.keyboard.press("Control+s")
            wait_notebook(page, work, done=lambda s: not s["dirty"])
            click_menu(page, "Nbgrader", "Assignment List")       # back to the tab, behind the notebook
            page.click("#fetched_assignments_list button:text-is('Submit')")
            page.wait_for_selector("#submitted_assignments_list .item_name:has-text('ch01')")
            context.close()
        browser.close()
    # the instructor grades: collect, autograde in the sandbox, feedback
    for step in (["collect", "ch01"], ["autograde", "ch01", "--create"], ["generate_feedback", "ch01"],
                 ["release_feedback", "ch01"], ["export"]):
        as_user("instructor", "nbgrader", *step, cwd=course)
    with open(course / "grades.csv", newline="") as stream:
        scores = {row["student_id"]: float(row["raw_score"]) for row in csv.DictReader(stream)}
    assert scores == {"student01": 1.0, "student02": 0.0, "student03": 1.0}
    for student in students:
        home = Path(pwd.getpwnam(student).pw_dir)
        as_user(student, "nbgrader", "fetch_feedback", "ch01", cwd=home)
        pages = list((home / "ch01" / "feedback").rglob("*.html"))
        assert len(pages) == 1 and pages[0].stat().st_uid == pwd.getpwnam(student).pw_uid
    # the idle culler runs as a hub service
    log = (PREFIX / "state" / "test-hub.log").read_text()
    assert "idle-culler" in log and "Spawning" in log
    assert f"{PREFIX}/env/bin/jupyterhub-singleuser" in log
