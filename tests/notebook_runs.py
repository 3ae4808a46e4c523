"""Each notebook executed once per test run, whichever tests read its outputs.

``executed(path, **env)`` runs the notebook headless (``MPLBACKEND=Agg`` plus ``env``) the first time any
test asks for it, and hands every later caller the same outputs, across pytest-xdist's workers too: the
result is kept in a folder shared by the run (``LECTURE_TEST_SHARED``, made by conftest.py) under a lock
per notebook, so two workers asking at once wait for one execution instead of running two.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import json
import os
import tempfile
import threading
import sys
import time
from pathlib import Path

import nbformat

from lecture_lib.practice.notebook_client import SlicedPollClient

TIMEOUT_SECONDS = 180   # per cell


def shared_folder() -> Path:
    folder = os.environ.get("LECTURE_TEST_SHARED") or os.path.join(tempfile.gettempdir(), "lecture-tests-solo")
    path = Path(folder) / "executed"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _key(path: Path, env: dict) -> str:
    digest = hashlib.sha256(path.read_bytes())
    digest.update(json.dumps(sorted(env.items())).encode())
    return f"{path.parent.name}-{path.stem}-{digest.hexdigest()[:16]}"


def run(path: Path, **env) -> tuple[nbformat.NotebookNode, float]:
    """Execute ``path`` now (no sharing): the notebook with its outputs and the seconds it took.

    The client runs on a thread of its own with a fresh event loop, whatever loop the calling thread has
    (Playwright's sync API leaves one running; nbclient's fallback for that case stalled for minutes)."""
    notebook = nbformat.read(path, as_version=4)
    client = SlicedPollClient(notebook, timeout=TIMEOUT_SECONDS, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    failure: list[BaseException] = []

    def execute() -> None:
        try:
            asyncio.run(client.async_execute(env={**os.environ, "MPLBACKEND": "Agg", **env}))
        except BaseException as error:      # raised again in the caller's thread
            failure.append(error)

    started = time.perf_counter()
    worker = threading.Thread(target=execute, name=f"notebook {path.name}")
    worker.start()
    worker.join()
    if failure:
        raise failure[0]
    return notebook, time.perf_counter() - started


def executed(path: Path, **env) -> tuple[nbformat.NotebookNode, float]:
    """``path`` executed with ``env``, once per test run: (the notebook with outputs, seconds it took).

    A run that raised (a cell error under ``LECTURE_STRICT=1``, a timeout) is not kept, so the next
    caller sees the same failure for itself."""
    path = Path(path)
    folder = shared_folder()
    key = _key(path, env)
    result, seconds_file = folder / f"{key}.ipynb", folder / f"{key}.seconds"
    with open(folder / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not result.exists():
                notebook, seconds = run(path, **env)
                nbformat.write(notebook, str(result) + ".partial")
                seconds_file.write_text(f"{seconds:.3f}")
                os.replace(str(result) + ".partial", result)
            return nbformat.read(result, as_version=4), float(seconds_file.read_text())
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
