"""The installed package behaves as a package wherever Python starts (a kernel starts in notebooks/)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _import_from(directory):
    probe = "import lecture_lib; print(lecture_lib.__file__); print(len(lecture_lib._SUBMODULES))"
    result = subprocess.run([sys.executable, "-c", probe], cwd=directory, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    init, count = result.stdout.split()
    return Path(init), int(count)


def test_import_from_another_directory_runs_the_package_init(tmp_path):
    init, count = _import_from(tmp_path)
    assert init.resolve() == ROOT / "lecture_lib" / "__init__.py"   # strict editable installs link to the source
    assert count >= 10


def test_import_from_notebooks_runs_the_package_init():
    init, _ = _import_from(ROOT / "notebooks")
    assert init.resolve() == ROOT / "lecture_lib" / "__init__.py"


def test_a_stray_lecture_lib_directory_does_not_shadow_the_package(tmp_path):
    """A directory named lecture_lib without __init__.py (a leftover __pycache__ after a branch switch)
    would be a namespace package that an import hook placed after it never gets to override; the
    Makefile's strict editable install puts a real path entry on sys.path instead."""
    (tmp_path / "lecture_lib" / "__pycache__").mkdir(parents=True)
    init, count = _import_from(tmp_path)
    assert init.resolve() == ROOT / "lecture_lib" / "__init__.py"
    assert count >= 10


def test_every_registered_submodule_exists():
    import lecture_lib

    for name in lecture_lib._SUBMODULES:
        assert ((ROOT / "lecture_lib" / f"{name}.py").exists() or (ROOT / "lecture_lib" / name / "__init__.py").exists()), \
            f"_SUBMODULES lists {name!r} but there is no such module or package"


def test_make_lab_installs_notebook_7_as_the_docs_say():
    import tomllib

    lab = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["lab"]
    assert any(requirement.replace(" ", "").startswith("notebook>=7") for requirement in lab), lab
    assert "Jupyter Notebook 7" in (ROOT / "README.md").read_text()


def test_shell_commands_in_the_docs_name_the_venvs_python():
    # outside an activated venv a bare `python -m lecture_lib...` fails (no such module); the one exception
    # is the nbgrader walkthrough, whose blocks start with `source .venv/bin/activate`
    import re

    for name in ("README.md", "docs/instructor.md", "docs/library.md"):
        text = (ROOT / name).read_text()
        bare = [m.group(0) for m in re.finditer(r"(?<![\w/.])python -m lecture_lib\S*", text)]
        allowed = 1 if name == "docs/instructor.md" else 0
        assert len(bare) <= allowed, (name, bare)
