"""Issue 48 §2: Run All never waits on a lost reply.

Covers and reveal details were ipywidgets ``Output`` areas captured with ``with``: nbclient then sends a comm message on
the shell channel for every output it routes there, while it awaits the cell's reply on that socket, and on a busy
machine the reply's wake-up is lost until the cell's timeout (lecture_lib/explorers/capture.py says how). They are now
:class:`capture.KernelOutput`, filled by the kernel itself. tests/test_stress.py runs
every chapter, nbgrader's autograde and Voila under a CPU load of two busy loops, in ``make test-class``."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

_KERNEL = r"""
import json
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
shell.run_cell('''
from IPython.display import display, HTML
from lecture_lib.explorers.capture import KernelOutput
from lecture_lib.explorers import predict
area = KernelOutput()
with area:
    print("first")
    display(HTML("<b>second</b>"))
    print("third")
guess = predict.Prediction("q", answer=2.0, example="e.g. 2")
details = guess.details()
with details:
    print("worked")
cover = guess.cover("held back", what="the table")
with cover:
    print("covered line")
''', store_history=False)
ns = shell.user_ns
print("RESULT " + json.dumps({
    "area": [dict(o) for o in ns["area"].outputs], "msg_id": ns["area"].msg_id,
    "details": [dict(o) for o in ns["details"].outputs],
    "cover": [dict(o) for o in ns["cover"].output.outputs]}))
"""


def test_a_kernel_output_keeps_order_and_asks_no_client_for_routing():
    import json

    done = subprocess.run([sys.executable, "-c", _KERNEL], capture_output=True, text=True, timeout=120,
                          env={"MPLBACKEND": "Agg", "PATH": "/usr/bin:/bin", "LECTURE_PROGRESS_FILE": "off"})
    line = [text for text in done.stdout.splitlines() if text.startswith("RESULT ")]
    assert line, done.stdout[-2000:] + done.stderr[-2000:]
    result = json.loads(line[-1][len("RESULT "):])
    kinds = [(o["output_type"], o.get("text") or o["data"].get("text/html")) for o in result["area"]]
    assert kinds == [("stream", "first\n"), ("display_data", "<b>second</b>"), ("stream", "third\n")]
    assert result["msg_id"] == "", "no msg_id: nothing for a client to route"
    assert [o["text"] for o in result["details"]] == ["worked\n"]
    texts = [o.get("text") or "" for o in result["cover"]]
    assert "covered line\n" in texts and any(o["output_type"] == "display_data" for o in result["cover"])


def test_the_library_never_captures_with_a_plain_output():
    offenders = []
    for path in (ROOT / "lecture_lib").rglob("*.py"):
        if path.name != "capture.py" and "widgets.Output(" in path.read_text():
            offenders.append(str(path.relative_to(ROOT)))
    assert not offenders, f"use capture.KernelOutput (headless runs stall otherwise): {offenders}"
