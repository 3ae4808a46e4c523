"""Every chapter notebook runs top to bottom headless, with no error output (DESIGN.md layer 2)."""

import re
from pathlib import Path

import nbformat
import pytest

from notebook_runs import executed

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def execute(path: Path, env: dict | None = None) -> tuple[nbformat.NotebookNode, float]:
    """``path`` run top to bottom headless, once per test run (shared by every test that reads it)."""
    return executed(path, **(env or {}))


def error_outputs(notebook) -> list[str]:
    problems = []
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                problems.append(f"cell {index}: {output.get('ename')}: {output.get('evalue')}")
            if output.get("output_type") == "stream" and output.get("name") == "stderr" and "Traceback" in output.get("text", ""):
                problems.append(f"cell {index}: traceback on stderr")
    return problems


def spoiled_reveals(notebook) -> list[str]:
    """Issue 13: after Run All, every predict-then-reveal panel asks for a guess and shows no answer."""
    problems = []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code" or ".reveal()" not in cell.source:
            continue
        shown = "\n".join(str(output.get("data", {}).get("text/plain", "")) for output in cell.get("outputs", []))
        if "Enter a guess first" not in shown or "Answer, from the lecture" in shown:
            problems.append(f"cell {index}: the reveal panel does not wait for a guess")
    return problems


def test_every_chapter_prediction_uses_the_reveal_widget():
    """No chapter compares a guess held in a variable (which Run All would judge as 'no guess')."""
    for path in CHAPTERS:
        text = "\n".join(cell.source for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code")
        assert "reveal(my_" not in text and "= None   # your guess" not in text, path.name
        assert text.count(".ask(") >= 1 and text.count(".reveal()") >= text.count(".ask("), path.name   # .ask("label") too


CHAPTERS = [path for path in NOTEBOOKS if path.name[:2].isdigit() and path.name[:2] != "00"]


def test_the_course_has_its_start_page_its_nine_chapters_and_the_lab():
    names = {path.name for path in NOTEBOOKS}
    assert "00_start_here.ipynb" in names
    assert sorted(path.name[:2] for path in CHAPTERS) == [f"{n:02d}" for n in range(1, 12)]   # 11: the lab after Chapter 1


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


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs_headless_without_errors(path):
    notebook, seconds = execute(path)
    assert not error_outputs(notebook), error_outputs(notebook)
    assert not spoiled_reveals(notebook), spoiled_reveals(notebook)
    assert not raw_reprs(notebook), raw_reprs(notebook)
    print(f"{path.name}: {seconds:.1f} s")


# Issue 49 §3: Python's own forms where a learner expects a sentence: a dict ({'gpus_used': 64, ...}), an object's
# default repr (<... object at 0x7f...>), a KeyError's message in quotes (str(error) of a KeyError is its repr).
RAW_REPR = re.compile(r"\{'\w+': |<[\w.]+ object at 0x[0-9a-f]+>|^\s*([\"'])[^\n]{20,}\1\s*$", re.M)


def raw_reprs(notebook) -> list[str]:
    """Printed text (streams and plain-text results, not widgets or figures) that shows a raw repr."""
    found = []
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if output.get("output_type") == "stream":
                text = output.get("text", "")
            elif "text/plain" in data and "text/html" not in data and "image/png" not in data \
                    and "application/vnd.jupyter.widget-view+json" not in data:
                text = "".join(data["text/plain"])
            else:
                continue
            found += [f"cell {index}: {match.group(0)[:80]!r}" for match in RAW_REPR.finditer(text)
                      if "Math object" not in match.group(0)]
    return found


@pytest.mark.parametrize("text, raw", [("{'gpus_used': 64, 'gpus_idle': 8}", True),
                                       ("Unknown names are refused:\n \"unknown chip 'H1000'; known chips: A100\"", True),
                                       ("<lecture_lib.moe.Routing object at 0x7f3a2b>", True),
                                       ("256 experts on GB200 NVL72: 4 per GPU on 64 GPUs, 8 GPUs hold none", False),
                                       ("unknown chip 'H1000'; known chips: A100, H100", False)])
def test_the_raw_repr_scan(text, raw):
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("print(x)")]
    notebook.cells[0].outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
    assert bool(raw_reprs(notebook)) is raw


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


# ----------------------------------------------------------------------------- dollars (issue 13)

from markdown_dollars import DOLLAR, currency_problems  # noqa: E402

MARKDOWN_NOTEBOOKS = NOTEBOOKS + sorted((ROOT / "solutions").glob("*.ipynb")) + sorted((ROOT / "exercises").glob("*.ipynb"))


@pytest.mark.parametrize("text", [r"(\$30 / \$150 per million against \$5 / \$25)", "at $2 per GPU-hour",
                                  "costs $30 / $150 per million", "&#36;5 and &#36;25 per million"])
def test_the_dollar_check_catches_currency_that_renders_as_math(text):
    assert currency_problems(text)


@pytest.mark.parametrize("text", [f"{DOLLAR}30 / {DOLLAR}150 per million, and price is $\\propto t/B$",
                                  "weights fall as $1/P$ and $2 + 4 = 6$", "$$x = \\text{per token}$$ then $2N$",
                                  "`cost = $2` in code"])
def test_the_dollar_check_passes_math_and_safe_dollars(text):
    assert not currency_problems(text)


@pytest.mark.parametrize("path", MARKDOWN_NOTEBOOKS, ids=[f"{p.parent.name}/{p.name}" for p in MARKDOWN_NOTEBOOKS])
def test_markdown_dollar_amounts_render_as_dollars(path):
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type == "markdown":
            assert not currency_problems(cell.source), (cell.get("id"), currency_problems(cell.source))


@pytest.mark.parametrize("path", MARKDOWN_NOTEBOOKS, ids=[f"{p.parent.name}/{p.name}" for p in MARKDOWN_NOTEBOOKS])
def test_no_markdown_link_inside_display_math(path):
    """A walkthrough found Ch7's timestamp link inside $$...$$: MathJax typesets the link's text and
    URL as italic symbols running off the cell. Links go outside the math."""
    import re

    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type == "markdown":
            for math in re.findall(r"\$\$(.+?)\$\$", cell.source, flags=re.S):
                assert "](" not in math and "http" not in math, (cell.get("id"), math[:120])
