"""`make lab` starts on notebooks/00_start_here.ipynb (issue 19 §8), and the three servers share a
port without colliding silently (issue 20 §7): a busy default port moves on, a busy PORT= is an error
naming PORT=."""

from __future__ import annotations

import json
import re
import shlex
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SERVE = REPO / "tools" / "serve.py"
START_PAGE = "notebooks/00_start_here.ipynb"


def make_variable(name: str, *assignments: str) -> str:
    """The value of a Makefile variable, without running any target's recipe or prerequisites."""
    printer = "print-%: ; @echo '$($*)'\n"
    done = subprocess.run(["make", "-s", "-f", "Makefile", "-f", "-", f"print-{name}", *assignments],
                          cwd=REPO, input=printer, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def busy_port():
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    return holder, holder.getsockname()[1]


def test_make_lab_sets_the_start_page_as_default_url():
    flags = make_variable("LAB_FLAGS")
    assert f"--LabApp.default_url=/lab/tree/{START_PAGE}" in flags
    assert "--LabApp.news_url=None" in flags, "the news prompt's toast covered explorer readouts (and needs a network)"
    assert (REPO / START_PAGE).is_file()
    assert "port_retries=0" not in flags, "the default port may move on to a free one"
    assert "--ServerApp.port_retries=0" in make_variable("LAB_FLAGS", "PORT=9123")


def test_make_notebook_sets_the_start_page_as_default_url():
    """Notebook 7 landed on its file list (/tree): `make notebook` gives it the lab's flags with its own default URL."""
    flags = make_variable("NOTEBOOK_FLAGS")
    assert f"--JupyterNotebookApp.default_url=/notebooks/{START_PAGE}" in flags and "LabApp" not in flags
    assert '--ServerApp.root_dir=' in flags


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX only")
@pytest.mark.parametrize("front_end, variable, landing", [("lab", "LAB_FLAGS", f"/lab/tree/{START_PAGE}"),
                                                          ("notebook", "NOTEBOOK_FLAGS", f"/notebooks/{START_PAGE}")])
def test_jupyter_with_the_makefile_flags_prints_and_redirects_to_the_start_page(front_end, variable, landing):
    pytest.importorskip("jupyterlab" if front_end == "lab" else "notebook")
    holder, _ = busy_port()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    holder.close()
    flags = shlex.split(make_variable(variable, f"PORT={port}"))
    jupyter = Path(sys.executable).with_name("jupyter")
    process = subprocess.Popen([str(jupyter), front_end, *flags, "--no-browser"], cwd=REPO,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        printed, deadline = "", time.monotonic() + 120
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            printed += line
            if "?token=" in line or process.poll() is not None:
                break
        match = re.search(r"(http://127\.0\.0\.1:\d+)(/\S*)\?token=(\w+)", printed)
        assert match, printed[-3000:]
        base, path, token = match.groups()
        assert path == landing, f"the URL {front_end} prints opens the start page"

        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args, **kwargs):
                return None

        opener = urllib.request.build_opener(NoRedirect)
        location = None
        for _ in range(60):   # the URL is printed just before the server accepts connections
            try:
                opener.open(f"{base}/?token={token}", timeout=30)
                break
            except urllib.error.HTTPError as redirect:
                location = redirect.headers.get("Location")
                break
            except urllib.error.URLError:
                time.sleep(0.5)
        assert location and location.split("?")[0].endswith(landing), location
        if front_end != "lab":
            return
        # A learner's walk (2026-12-04) was asked "get notified about official Jupyter news?" at once, its toast
        # over the page: news_url=None stops the fetch but not the question. The course's overrides answer it.
        with urllib.request.urlopen(f"{base}/lab/api/settings/@jupyterlab/apputils-extension:notification"
                                    f"?token={token}", timeout=30) as response:
            schema = json.load(response)["schema"]["properties"]
        assert schema["fetchNews"]["default"] == "false" and schema["checkForUpdates"]["default"] is False, schema
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


def test_serve_moves_on_from_a_busy_default_port(tmp_path):
    (tmp_path / "index.html").write_text("<p>hello</p>")
    holder, port = busy_port()
    try:
        process = subprocess.Popen([sys.executable, str(SERVE), str(tmp_path), "--port", str(port)],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            line = process.stdout.readline()
            served = int(re.search(r":(\d+)/", line).group(1))
            assert served != port
            with urllib.request.urlopen(f"http://127.0.0.1:{served}/index.html", timeout=10) as response:
                assert b"hello" in response.read()
        finally:
            process.terminate()
            process.wait(timeout=10)
    finally:
        holder.close()


def test_a_busy_port_chosen_with_PORT_is_an_error_naming_PORT(tmp_path):
    (tmp_path / "index.html").write_text("x")
    holder, port = busy_port()
    try:
        for args in ([str(tmp_path), "--port", str(port), "--strict"], ["--check", "--port", str(port), "--strict"]):
            done = subprocess.run([sys.executable, str(SERVE), *args], capture_output=True, text=True, timeout=30)
            assert done.returncode != 0
            assert f"port {port}" in done.stderr and "PORT=" in done.stderr, done.stderr
    finally:
        holder.close()
    assert make_variable("STRICT_PORT") == ""
    assert make_variable("STRICT_PORT", "PORT=9000") == "--strict"


def _two_busy_ports():
    """Two neighbouring busy ports (held open), for the suggestions below."""
    for _ in range(20):
        first, port = busy_port()
        second = socket.socket()
        try:
            second.bind(("127.0.0.1", port + 1))
            second.listen()
            return (first, second), port
        except OSError:
            first.close()
            second.close()
    pytest.skip("no two neighbouring free ports")


def test_a_busy_port_message_suggests_a_port_that_is_free():
    holders, port = _two_busy_ports()
    try:
        run = subprocess.run([sys.executable, str(SERVE), "--check", "--port", str(port), "--strict"],
                             capture_output=True, text=True)
        assert run.returncode == 1
        suggested = int(re.search(r"PORT=(\d+), which is free now", run.stderr).group(1))
        assert suggested not in (port, port + 1)
        probe = socket.socket()
        probe.bind(("127.0.0.1", suggested))      # it really is free
        probe.close()
    finally:
        for holder in holders:
            holder.close()


def test_make_present_says_when_it_moves_from_its_port_and_refuses_a_chosen_busy_one():
    holders, port = _two_busy_ports()
    try:
        moved = subprocess.run([sys.executable, str(SERVE), "--pick", "--port", str(port), "--variable", "PRESENT_PORT"],
                               capture_output=True, text=True)
        assert moved.returncode == 0
        taken = int(moved.stdout)
        assert taken > port + 1
        assert f"port {port} is busy, so this one starts on port {taken} instead" in moved.stderr
        assert "PRESENT_PORT=" in moved.stderr
        chosen = subprocess.run([sys.executable, str(SERVE), "--pick", "--port", str(port), "--strict",
                                 "--variable", "PRESENT_PORT"], capture_output=True, text=True)
        assert chosen.returncode != 0 and not chosen.stdout
        assert f"port {port} on 127.0.0.1 is already in use" in chosen.stderr and "make present PRESENT_PORT=" in chosen.stderr
    finally:
        for holder in holders:
            holder.close()
    free = subprocess.run([sys.executable, str(SERVE), "--pick", "--port", str(port), "--variable", "PRESENT_PORT"],
                          capture_output=True, text=True)
    assert int(free.stdout) == port and not free.stderr
    assert "$(PYTHON) tools/serve.py --pick --port $(PRESENT_PORT) $(PRESENT_STRICT) --variable PRESENT_PORT" in \
        (REPO / "Makefile").read_text()
