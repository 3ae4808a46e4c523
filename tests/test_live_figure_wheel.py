"""The explorers' page scripts are package data: a wheel built from the checkout carries every .js file under
lecture_lib/, and from a wheel install (not the editable one, whose link tree points into the checkout) the live
figure's anywidget loads live_figure.js and the controls' script reads controls.js (issue 48 §3)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel of the course built from a copy of the checkout's sources (the build writes build/ and *.egg-info
    beside what it builds: in a scratch folder, not in the checkout)."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "lecture_lib", source / "lecture_lib",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tmp_path_factory.mktemp("wheel")
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(source)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    (built,) = out.glob("lecture_lib-*.whl")
    return built


def test_the_wheel_carries_every_page_script(wheel):
    scripts = sorted(path.relative_to(ROOT).as_posix() for path in (ROOT / "lecture_lib").rglob("*.js"))
    assert "lecture_lib/explorers/live_figure.js" in scripts and "lecture_lib/explorers/controls.js" in scripts
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        assert not [name for name in scripts if name not in names], sorted(names)
        for name in scripts:        # the same bytes as the checkout's
            assert archive.read(name) == (ROOT / name).read_bytes(), name


def test_a_wheel_install_loads_the_scripts_from_its_own_files(wheel, tmp_path):
    target = tmp_path / "installed"
    result = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(target),
                             str(wheel)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    probe = """
import lecture_lib
from lecture_lib.explorers import live_figure, sliders
widget = live_figure.widget_class()()
print(lecture_lib.__file__)
print(live_figure.ESM_PATH)
print(widget._esm == live_figure.ESM_PATH.read_text(encoding="utf-8") and "export default" in widget._esm)
print(sliders.ARIA_VALUETEXT_SCRIPT == sliders.CONTROLS_SCRIPT_PATH.read_text(encoding="utf-8"))
"""
    # PYTHONPATH comes before the editable install's path entry: the installed copy is the one imported
    result = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                            env={**_environment(), "PYTHONPATH": str(target)})
    assert result.returncode == 0, result.stderr
    init, esm_path, loaded, controls = result.stdout.split()
    assert Path(init).is_relative_to(target) and Path(esm_path).is_relative_to(target), result.stdout
    assert loaded == "True" and controls == "True", result.stdout


def _environment() -> dict:
    import os

    return {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
