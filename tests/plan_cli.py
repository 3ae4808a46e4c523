"""``python -m lecture_lib.plan ARGS`` run in the test's own process, for the planner's CLI tests."""

import contextlib
import io
import types

from lecture_lib import plan as planner


def run_cli(*args):
    """The planner's ``main`` as its module's ``__main__`` calls it: stdout, stderr and the exit status.
    Starting a Python per call cost a second of imports each; ``tests/test_plan.py::
    test_the_planner_runs_as_a_command`` still starts the real command and compares."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = planner.main(list(args))
        except SystemExit as stop:          # argparse's own errors and --help
            code = stop.code if isinstance(stop.code, int) else 1
    return types.SimpleNamespace(returncode=code, stdout=out.getvalue(), stderr=err.getvalue())
