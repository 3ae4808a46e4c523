"""Issue 20 §7: when numpy, matplotlib or pillow cannot be loaded (JupyterLite offline), importing the
course says so at once, with the reason and what still works, instead of a bare ModuleNotFoundError later."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _import_with_blocked(*modules: str) -> subprocess.CompletedProcess:
    block = "".join(f"sys.modules[{m!r}] = None; " for m in modules)
    code = f"import sys, warnings; warnings.simplefilter('always'); {block}import lecture_lib.symbols"
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def test_a_missing_numeric_dependency_is_announced_at_import_with_what_still_works():
    done = _import_with_blocked("numpy", "PIL")
    assert done.returncode == 0, done.stderr            # the SymPy side still imports
    assert "numpy, pillow could not be found" in done.stderr
    assert "Pyodide" in done.stderr and "lecture_lib.symbols" in done.stderr


def test_nothing_is_said_when_everything_is_there():
    done = _import_with_blocked()
    assert done.returncode == 0 and "could not be found" not in done.stderr, done.stderr
