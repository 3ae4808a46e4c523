"""Every chapter notebook runs top to bottom headless, with no error output (DESIGN.md layer 2)."""

import os
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def execute(path: Path, env: dict | None = None) -> tuple[nbformat.NotebookNode, float]:
    notebook = nbformat.read(path, as_version=4)
    previous = dict(os.environ)
    os.environ.update({"MPLBACKEND": "Agg", **(env or {})})
    try:
        started = time.perf_counter()
        NotebookClient(notebook, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
        return notebook, time.perf_counter() - started
    finally:
        os.environ.clear()
        os.environ.update(previous)


def error_outputs(notebook) -> list[str]:
    problems = []
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                problems.append(f"cell {index}: {output.get('ename')}: {output.get('evalue')}")
            if output.get("output_type") == "stream" and output.get("name") == "stderr" and "Traceback" in output.get("text", ""):
                problems.append(f"cell {index}: traceback on stderr")
    return problems


CHAPTERS = [path for path in NOTEBOOKS if path.name[:2].isdigit() and path.name[:2] != "00"]


def test_the_course_has_its_start_page_and_all_eight_chapters():
    names = {path.name for path in NOTEBOOKS}
    assert "00_start_here.ipynb" in names
    assert sorted(path.name[:2] for path in CHAPTERS) == [f"{n:02d}" for n in range(1, 9)]


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.name for p in CHAPTERS])
def test_start_page_and_readme_link_every_chapter(path):
    """A chapter that exists is linked from the start page and the README, never 'in preparation'."""
    start = "\n".join(cell.source for cell in nbformat.read(ROOT / "notebooks" / "00_start_here.ipynb", as_version=4).cells)
    readme = (ROOT / "README.md").read_text()
    assert f"]({path.name})" in start, f"00_start_here does not link {path.name}"
    assert f"](notebooks/{path.name})" in readme, f"README does not link {path.name}"
    for text in (start, readme):
        row = next(line for line in text.splitlines() if path.name in line)
        assert "in preparation" not in row


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs_headless_without_errors(path):
    notebook, seconds = execute(path)
    assert not error_outputs(notebook), error_outputs(notebook)
    print(f"{path.name}: {seconds:.1f} s")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_committed_clean(path):
    """Committed without outputs; chapters link to their lecture moments."""
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None
    text = "\n".join(cell.source for cell in notebook.cells)
    assert "https://youtu.be/xmkSf5IS-zw?t=" in text


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.name for p in CHAPTERS])
def test_chapter_ends_with_its_practice_problems_and_the_next_step(path):
    import re

    last = nbformat.read(path, as_version=4).cells[-1].source
    assert f"(../exercises/{path.name})" in last, "the last cell should point to the chapter's exercises"
    following = re.search(r"\*\*Next:\*\* \[[^\]]+\]\(([^)]+)\)", last)
    assert following and (path.parent / following.group(1)).exists(), "the last cell should link the next notebook"
