"""The installed package behaves as a package wherever Python starts (a kernel starts in notebooks/)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_from_another_directory_runs_the_package_init(tmp_path):
    probe = "import lecture_lib; print(lecture_lib.__file__); print(len(lecture_lib._SUBMODULES))"
    result = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    init, count = result.stdout.split()
    assert Path(init) == ROOT / "lecture_lib" / "__init__.py"
    assert int(count) >= 10


def test_every_registered_submodule_exists():
    import lecture_lib

    for name in lecture_lib._SUBMODULES:
        assert (ROOT / "lecture_lib" / f"{name}.py").exists(), f"_SUBMODULES lists {name!r} but there is no such module"
