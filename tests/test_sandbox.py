"""Issue 46 §3: student code at autograde runs where it cannot read the course, write outside its scratch folder,
reach the network, or run forever, fork, fill memory or disk, or outlive its notebook (lecture_lib.practice.sandbox).

Each test runs a real process through ``sandbox.command``: bubblewrap and prlimit, as autograde starts a kernel.
Without bwrap the tests are skipped locally and fail in CI (``.ci/run`` installs Debian's bubblewrap)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from lecture_lib.practice import sandbox

ROOT = Path(__file__).resolve().parents[1]

if sandbox.problem() is not None:
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the sandbox tests: {sandbox.problem()}", pytrace=False)
    pytest.skip(f"the autograde sandbox cannot run here: {sandbox.problem()}", allow_module_level=True)


def run_inside(code: str, tmp_path: Path, *, limits=sandbox.Limits(), timeout=120) -> dict:
    """Run ``code`` in the sandbox; it prints one JSON line, returned as a dict."""
    run_dir = sandbox.private_run_dir()
    try:
        argv = sandbox.command([sys.executable, "-c", textwrap.dedent(code)], run_dir=run_dir, student="mallory",
                               limits=limits)
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=tmp_path)
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, f"no report from inside the sandbox:\n{done.stdout}\n{done.stderr}"
    return json.loads(lines[-1])


def test_the_course_the_gradebook_and_other_files_are_out_of_reach(tmp_path):
    course = tmp_path / "course"
    (course / "submitted" / "bob").mkdir(parents=True)
    (course / "gradebook.db").write_text("grades")
    (course / "submitted" / "bob" / "answer.ipynb").write_text("{}")
    report = run_inside(f"""
        import json, os, pathlib
        seen = {{}}
        for place in [{str(course)!r}, {str(ROOT / 'solutions')!r}, {str(ROOT / '.git')!r}, '/srv',
                      {str(Path.home() / '.ssh')!r}, {str(Path.home() / '.local/share/jupyter')!r},
                      {str(Path.home() / '.bashrc')!r}, {str(Path.home() / '.jupyter')!r}]:
            seen[place] = os.path.exists(place) and (os.path.isfile(place) or bool(os.listdir(place)))
        writes = {{}}
        for place in [{str(course / 'gradebook.db')!r}, {str(ROOT / 'lecture_lib' / 'planted.py')!r},
                      '/usr/planted', '/etc/planted', 'scratch.txt', '/tmp/scratch.txt']:
            try:
                open(place, 'a').close(); writes[place] = True
            except OSError:
                writes[place] = False
        import lecture_lib.roofline                      # the library itself is readable
        print(json.dumps({{"seen": seen, "writes": writes, "uid": os.getuid(), "cwd": os.getcwd(),
                          "student": os.environ.get("LECTURE_STUDENT"), "env": sorted(os.environ)}}))
        """, tmp_path)
    assert not any(report["seen"].values()), report["seen"]
    writes = report["writes"]
    assert writes["scratch.txt"] and writes["/tmp/scratch.txt"], "its own scratch folders are writable"
    assert not any(v for k, v in writes.items() if k not in ("scratch.txt", "/tmp/scratch.txt")), writes
    assert (course / "gradebook.db").read_text() == "grades"
    assert not (ROOT / "lecture_lib" / "planted.py").exists()
    assert report["cwd"] == sandbox.HOME and report["student"] == "mallory"
    if os.geteuid() == 0:
        assert report["uid"] in sandbox.SANDBOX_UIDS, "as root the kernel drops to a user id of its own"
    assert not {"SSH_AUTH_SOCK", "JUPYTERHUB_API_TOKEN", "AWS_SECRET_ACCESS_KEY"} & set(report["env"])


def test_no_network(tmp_path):
    report = run_inside("""
        import json, socket
        result = {}
        for host, port in [("1.1.1.1", 80), ("127.0.0.1", 22), ("::1", 8888)]:
            try:
                socket.create_connection((host, port), timeout=2).close(); result[host] = "connected"
            except OSError as error:
                result[host] = type(error).__name__
        print(json.dumps(result))
        """, tmp_path)
    assert "connected" not in report.values(), report


def test_a_fork_bomb_memory_hog_and_disk_filler_are_bounded(tmp_path):
    report = run_inside("""
        import json, os, time
        forks = 0
        try:
            while forks < 100_000:
                if os.fork() == 0:
                    time.sleep(30); os._exit(0)
                forks += 1
        except OSError as error:
            stopped = type(error).__name__
        try:
            hog = bytearray(16 * 2**30); memory = "allocated"
        except MemoryError:
            memory = "MemoryError"
        written = 0
        try:
            with open("fill", "wb") as stream:
                while written < 2**31:
                    stream.write(b"x" * 2**20); stream.flush(); written += 2**20
        except OSError as error:
            disk = type(error).__name__
        print(json.dumps({"forks": forks, "stopped": stopped, "memory": memory, "disk": disk, "written": written}), flush=True)
        os._exit(0)
        """, tmp_path)
    assert report["forks"] < sandbox.Limits().tasks + 50 and report["stopped"] == "BlockingIOError", report
    assert report["memory"] == "MemoryError"
    assert report["written"] <= sandbox.Limits().scratch_bytes and report["disk"] in ("OSError", "IOError"), report


def _processes_of(marker: str) -> list[str]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and marker in Path(f"/proc/{entry}/cmdline").read_bytes().decode(errors="replace"):
                found.append(entry)
        except OSError:
            continue
    return found


def test_no_process_outlives_the_kernel(tmp_path):
    marker = f"lecture-left-behind-{os.getpid()}"
    report = run_inside(f"""
        import json, subprocess, os
        child = subprocess.Popen(["sleep", "300", {marker!r}], start_new_session=True)
        if os.fork() == 0:
            os.setsid(); time_ = __import__("time"); time_.sleep(300); os._exit(0)
        print(json.dumps({{"child": child.pid}}))
        """, tmp_path)
    assert report["child"]
    deadline = time.monotonic() + 10
    while _processes_of(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _processes_of(marker), "a process started by student code outlived it"


def test_cpu_time_is_bounded(tmp_path):
    started = time.monotonic()
    run_dir = sandbox.private_run_dir()
    try:
        argv = sandbox.command([sys.executable, "-c", "while True: pass"], run_dir=run_dir,
                               limits=sandbox.Limits(cpu_seconds=2))
        done = subprocess.run(argv, capture_output=True, timeout=60)
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    assert done.returncode != 0 and time.monotonic() - started < 30


def test_without_bwrap_nothing_runs_and_the_error_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    reason = sandbox.problem()
    assert "bubblewrap" in reason and "apt-get install bubblewrap" in reason
    with pytest.raises(sandbox.SandboxUnavailable, match="Nothing was run unsandboxed"):
        sandbox.command(["python", "-c", "1"], run_dir=tmp_path)


@pytest.mark.parametrize("field, value", [("memory_bytes", 0), ("tasks", -1), ("cpu_seconds", 1.5),
                                          ("scratch_bytes", True)])
def test_limits_are_positive_whole_numbers(field, value):
    with pytest.raises(ValueError, match=field):
        sandbox.Limits(**{field: value})


def test_the_check_command_says_the_sandbox_works():
    done = subprocess.run([sys.executable, "-m", "lecture_lib.practice.sandbox"], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "network: none" in done.stdout and "works here" in done.stdout
    assert "solutions" not in done.stdout, "the checkout's other folders are not there"


def test_only_the_environment_and_the_library_are_readable_whatever_is_on_sys_path(tmp_path, monkeypatch):
    """nbgrader puts the course directory on sys.path (it loads nbgrader_config.py from it): a sandbox built from
    sys.path bound the gradebook and the source notebooks read-only into every student's kernel."""
    course = tmp_path / "course"
    course.mkdir()
    monkeypatch.syspath_prepend(str(course))
    monkeypatch.syspath_prepend(str(ROOT))
    places = sandbox.readable_paths()
    assert not [p for p in places if p == course or course.is_relative_to(p) and p != Path("/")], places
    assert ROOT not in places, "the checkout's root holds solutions/"
    assert not [p for p in places if (p / "solutions").exists() and p == ROOT]


def test_a_huge_output_cannot_fill_the_graders_memory():
    """A red-team walk printed 500 MB in one message and drove nbgrader to 1.6 GB: the grader's sockets refuse any
    message over sandbox.MAX_MESSAGE_BYTES (the cell then times out and the rest of the notebook is left unrun)."""
    import asyncio
    import resource

    async def run():
        km = sandbox.SandboxKernelManager(kernel_name="python3")
        await km.start_kernel(extra_arguments=["--HistoryManager.hist_file=:memory:"])
        client = km.client()
        client.start_channels()
        try:
            await client.wait_for_ready(timeout=120)
            small = await client.execute_interactive("print('small')", timeout=60)
            assert small["content"]["status"] == "ok"
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            with pytest.raises(TimeoutError):
                await client.execute_interactive(f"print('x' * {4 * sandbox.MAX_MESSAGE_BYTES})", timeout=20)
            grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024
            assert grown < 2 * sandbox.MAX_MESSAGE_BYTES, f"the grader grew by {grown / 2**20:.0f} MB"
        finally:
            client.stop_channels()
            await km.shutdown_kernel(now=True)

    asyncio.run(run())
