"""Generate the exercise notebooks from the solution notebooks (``make exercises``).

``solutions/NN_<topic>.ipynb`` is the single source of each chapter's problems. Each problem is a
markdown cell starting ``### Problem N.M`` (an optional hint inside ``<details>``), a work cell
whose answer sits between nbgrader's markers ``### BEGIN SOLUTION`` and ``### END SOLUTION``, and a
check cell calling ``check("N.M", answer)``. A problem may put figure or set-up code cells between
its heading and its work cell.

``exercises/NN_<topic>.ipynb`` is the same notebook with

- every solution region (markers included) replaced by the stub ``answer = ...  # your work here``
  at the indentation of its ``BEGIN`` marker. As in nbgrader, any line *containing* a marker is a
  marker line, so markers may appear nowhere else (not in markdown, not in strings);
- outputs and execution counts removed, and the ``execution`` timing metadata dropped;
- the solutions' banner cell (tagged ``banner``) replaced by a banner for learners;

and nothing else changed: markdown, cell ids and other metadata are kept. The output is
deterministic (nbformat's JSON layout with sorted keys, plus a final newline), so regenerating a
clean tree changes nothing. Command line::

    python -m lecture_lib.practice.exercises generate solutions exercises
    python -m lecture_lib.practice.exercises check solutions exercises    # exit 1 if generate would change anything
    python -m lecture_lib.practice.exercises nbgrader-source solutions COURSE_DIR [--chapter 1] [--points 1] \
        [--exchange /srv/nbgrader/exchange]

``nbgrader-source`` writes an nbgrader course directory: ``COURSE_DIR/source/chNN/NN_<topic>.ipynb``
with nbgrader's cell metadata already set (see :func:`nbgrader_notebook`),
``COURSE_DIR/nbgrader_config.py`` and ``COURSE_DIR/students/nbgrader_config.py`` (both naming the
exchange folder), so that ``nbgrader generate_assignment chNN`` works with no
clicking in the *Create Assignment* toolbar.

Only nbformat and the standard library are used.
"""

from __future__ import annotations

import argparse
import copy
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
STUB = "answer = ...  # your work here"
BANNER_TAG = "banner"
BANNER_ID = "exercises-banner"
NOTEBOOK_GLOB = "[0-9][0-9]_*.ipynb"

_LINK = re.compile(r"(?<!!)\[([^\]\n]+)\]\(([^)\s]+)\)")
_EXTERNAL = re.compile(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*:|#|/)")

_PROBLEM_HEADING = re.compile(r"^###\s+Problem\s+(\d+\.\d+)\b[ \t:.·—-]*(.*)$")
_LEVEL_LINE = re.compile(r"^\*\*Level:\*\*\s*(.*)$")
_LEVEL = re.compile(r"^(core|optional) · (★{1,3}☆{0,2})$")
LEVELS = ("core", "optional")
_CHECK_CALL = re.compile(r"""\b(?:check|record)\(\s*["'](\d+\.\d+)["']\s*,\s*answer\s*\)""")


class FormatError(ValueError):
    """A solutions notebook breaks the problem format (unbalanced markers, a problem without its
    work or check cell, ...). The message names the notebook and the cell."""


# ================================================================================ one code cell

def _marker_line(line: str, marker: str) -> bool:
    """nbgrader's rule: a line containing the marker anywhere is a marker line."""
    return marker in line


def strip_solutions(source: str, *, where: str = "a cell") -> str:
    """``source`` with each solution region (markers included) replaced by :data:`STUB`.

    The stub takes the indentation of its ``BEGIN`` marker. Unbalanced or nested markers raise
    :class:`FormatError`.
    """
    out: list[str] = []
    inside = False
    for number, line in enumerate(source.split("\n"), start=1):
        if _marker_line(line, BEGIN):
            if inside:
                raise FormatError(f"{where}, line {number}: nested {BEGIN!r}")
            inside = True
            indent = line[: len(line) - len(line.lstrip())]
            out.append(indent + STUB)
        elif _marker_line(line, END):
            if not inside:
                raise FormatError(f"{where}, line {number}: {END!r} without {BEGIN!r}")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise FormatError(f"{where}: {BEGIN!r} is never closed by {END!r}")
    return "\n".join(out)


def solution_regions(source: str) -> list[str]:
    """The text inside each solution region of a cell (markers excluded)."""
    regions, current = [], None
    for line in source.split("\n"):
        if _marker_line(line, BEGIN):
            current = []
        elif _marker_line(line, END) and current is not None:
            regions.append("\n".join(current))
            current = None
        elif current is not None:
            current.append(line)
    return regions


def has_solution(source: str) -> bool:
    return any(_marker_line(line, BEGIN) for line in source.split("\n"))


# ================================================================================ problems

@dataclass(frozen=True)
class ProblemCells:
    """Where one problem sits in a notebook: indices of its heading, work and check cells, and its
    level: ``"core"`` or ``"optional"`` with a difficulty of 1 to 3 stars, read from the line
    ``**Level:** core · ★★☆`` right after the heading (``None`` when the problem has none)."""

    problem_id: str
    title: str
    heading: int
    work: int
    check: int
    hint: bool
    level: str | None = None
    difficulty: int | None = None


def level_line(level: str, difficulty: int) -> str:
    """The markdown line that labels a problem: ``**Level:** core · ★★☆``."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    if isinstance(difficulty, bool) or not isinstance(difficulty, int) or not 1 <= difficulty <= 3:
        raise ValueError(f"difficulty must be 1, 2 or 3, got {difficulty!r}")
    return f"**Level:** {level} · {'★' * difficulty}{'☆' * (3 - difficulty)}"


def parse_level(source: str, *, where: str = "a problem") -> tuple[str | None, int | None]:
    """``(level, difficulty)`` from a problem's heading cell; ``(None, None)`` without a level line.
    A level line in the wrong place or form is a :class:`FormatError`."""
    lines = source.split("\n")
    found = [i for i, line in enumerate(lines) if _LEVEL_LINE.match(line.strip())]
    if not found:
        return None, None
    if found != [1]:
        raise FormatError(f"{where}: the **Level:** line must be the line right after the heading, once")
    match = _LEVEL.match(_LEVEL_LINE.match(lines[1].strip()).group(1).strip())
    if not match or len(match.group(2)) != 3:
        raise FormatError(f"{where}: write the level as '**Level:** core · ★★☆' (core or optional, "
                          f"1-3 filled stars of 3), got {lines[1]!r}")
    return match.group(1), match.group(2).count("★")


def problems(notebook, *, where: str = "notebook") -> list[ProblemCells]:
    """Parse the problem format of a solutions (or exercises) notebook; :class:`FormatError` if broken.

    After each ``### Problem N.M`` heading come optional code cells (figures, set-up), the work
    cell (the first code cell with a solution region, or in an exercise the stub), and the check
    cell ``check("N.M", answer)``, before the next markdown cell. Ids must be unique.
    """
    found: list[ProblemCells] = []
    cells = notebook.cells
    seen = set()
    index = 0
    while index < len(cells):
        cell = cells[index]
        first = cell.source.split("\n", 1)[0] if cell.cell_type == "markdown" else ""
        match = _PROBLEM_HEADING.match(first)
        if not match:
            if cell.cell_type == "code" and has_solution(cell.source):
                raise FormatError(f"{where}, cell {index}: a solution region outside any problem")
            index += 1
            continue
        problem_id, title = match.group(1), match.group(2).strip()
        if problem_id in seen:
            raise FormatError(f"{where}, cell {index}: problem {problem_id} appears twice")
        seen.add(problem_id)
        hint = "<summary>" in cell.source
        if hint:
            _check_hint_layout(cell.source, f"{where}, cell {index} (problem {problem_id})")
        work = check = None
        j = index + 1
        while j < len(cells) and cells[j].cell_type == "code":
            source = cells[j].source
            if work is None and (has_solution(source) or _is_stub_cell(source)):
                if len(solution_regions(source)) > 1:
                    raise FormatError(f"{where}, cell {j}: problem {problem_id} has two solution regions")
                work = j
            elif _CHECK_CALL.search(source):
                called = _CHECK_CALL.search(source).group(1)
                if called != problem_id:
                    raise FormatError(f"{where}, cell {j}: problem {problem_id} checks {called!r}")
                if work is None:
                    raise FormatError(f"{where}, cell {j}: problem {problem_id} checks before its work cell")
                check = j
                break
            elif has_solution(source):
                raise FormatError(f"{where}, cell {j}: problem {problem_id} has a second solution cell")
            j += 1
        if work is None or check is None:
            missing = "work cell" if work is None else "check cell"
            raise FormatError(f"{where}, cell {index}: problem {problem_id} has no {missing}")
        level, difficulty = parse_level(cell.source, where=f"{where}, cell {index} (problem {problem_id})")
        found.append(ProblemCells(problem_id, title, index, work, check, hint, level, difficulty))
        index = check + 1
    return found


def _is_stub_cell(source: str) -> bool:
    return any(line.strip() == STUB for line in source.split("\n"))


def _check_hint_layout(source: str, where: str) -> None:
    """``<details>`` and ``<summary>`` on their own lines with blank lines around, so that JupyterLab
    renders the markdown inside (jupyterlab #7527)."""
    lines = source.split("\n")
    for tag in ("<details>", "</details>"):
        positions = [i for i, line in enumerate(lines) if line.strip() == tag]
        if len(positions) != 1:
            raise FormatError(f"{where}: the hint needs exactly one {tag} on a line of its own")
        i = positions[0]
        before_ok = i == 0 or lines[i - 1].strip() == ""
        after_ok = i == len(lines) - 1 or lines[i + 1].strip() == ""
        if not (before_ok and after_ok):
            raise FormatError(f"{where}: put a blank line before and after {tag}")
    summary = [i for i, line in enumerate(lines) if line.strip().startswith("<summary>")]
    if len(summary) != 1 or lines[summary[0] + 1].strip() != "":
        raise FormatError(f"{where}: put <summary>...</summary> on its own line, followed by a blank line")


# ================================================================================ notebooks

def banner_text(solution_name: str) -> str:
    return (
        "<div style=\"border-left:4px solid #1f77b4;padding:6px 12px;background:#f5f9ff\">\n"
        "\n"
        "**Exercises.** Work each problem in its cell: replace `answer = ...` with your own work, then run "
        "the check cell below it. The check says whether you are right and, if not, gives a nudge, never "
        "the answer. Hints unfold under each problem.\n"
        "\n"
        f"Worked solutions: [`solutions/{solution_name}`](../solutions/{solution_name}). This notebook is "
        "generated from that one by `make exercises`, so edits here are yours alone; to change a problem, "
        "edit the solutions notebook.\n"
        "\n"
        "</div>"
    )


def exercise_notebook(solution, *, name: str):
    """The exercise version of a solutions notebook (a new NotebookNode; the input is unchanged)."""
    notebook = copy.deepcopy(solution)
    problems(notebook, where=name)   # refuse to publish a broken format
    banner = nbformat.v4.new_markdown_cell(banner_text(name))
    banner["id"] = BANNER_ID
    cells = []
    replaced = False
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code" and (BEGIN in cell.source or END in cell.source):
            raise FormatError(f"{name}, cell {index}: solution markers belong in code cells only "
                              "(nbgrader would treat this text as a solution region)")
        if BANNER_TAG in cell.get("metadata", {}).get("tags", []):
            if not replaced:
                cells.append(banner)
                replaced = True
            continue
        if cell.cell_type == "code":
            cell.source = strip_solutions(cell.source, where=f"{name}, cell {index}")
            cell.outputs = []
            cell.execution_count = None
        cell.get("metadata", {}).pop("execution", None)
        cells.append(cell)
    if not replaced:
        cells.insert(0, banner)
    notebook.cells = cells
    nbformat.validate(notebook)
    return notebook


def serialise(notebook) -> bytes:
    """nbformat's own layout (indent 1, sorted keys), one final newline, UTF-8."""
    text = nbformat.writes(notebook, version=nbformat.NO_CONVERT)
    if not text.endswith("\n"):
        text += "\n"
    return text.encode("utf-8")


def render(solutions_dir: Path) -> dict[str, bytes]:
    """Every exercise notebook's bytes, by file name, from ``solutions_dir``."""
    rendered = {}
    for path in sorted(Path(solutions_dir).glob(NOTEBOOK_GLOB)):
        solution = nbformat.read(path, as_version=nbformat.NO_CONVERT)
        rendered[path.name] = serialise(exercise_notebook(solution, name=path.name))
    return rendered


def generate(solutions_dir, exercises_dir) -> list[Path]:
    """Write ``exercises_dir/NN_*.ipynb`` from ``solutions_dir``; returns the files that changed."""
    exercises_dir = Path(exercises_dir)
    exercises_dir.mkdir(parents=True, exist_ok=True)
    changed = []
    for name, data in render(Path(solutions_dir)).items():
        target = exercises_dir / name
        if not target.exists() or target.read_bytes() != data:
            target.write_bytes(data)
            changed.append(target)
    return changed


def differences(solutions_dir, exercises_dir) -> list[str]:
    """What :func:`generate` would change, one line per file (empty when up to date)."""
    exercises_dir = Path(exercises_dir)
    rendered = render(Path(solutions_dir))
    problems_found = []
    for name, data in rendered.items():
        target = exercises_dir / name
        if not target.exists():
            problems_found.append(f"{target}: missing")
        elif target.read_bytes() != data:
            problems_found.append(f"{target}: differs from what {Path(solutions_dir) / name} generates")
    for path in sorted(exercises_dir.glob(NOTEBOOK_GLOB)):
        if path.name not in rendered:
            problems_found.append(f"{path}: has no source in {solutions_dir}")
    return problems_found


# ================================================================================ levels

MINUTES_PER_STAR = 5
"""The instructor guide's planning rule: a problem takes about 5 minutes per star of difficulty
(an estimate for planning, not a measurement)."""


def levels(solutions_dir) -> list[tuple[str, ProblemCells]]:
    """``(notebook name, problem)`` for every problem of every solutions notebook, in order."""
    found = []
    for path in sorted(Path(solutions_dir).glob(NOTEBOOK_GLOB)):
        notebook = nbformat.read(path, as_version=nbformat.NO_CONVERT)
        found += [(path.name, problem) for problem in problems(notebook, where=path.name)]
    return found


def level_table(solutions_dir) -> str:
    """The instructor guide's table of problems (markdown), one row per chapter: its core and
    optional problems with their stars, and the planning time of each group."""
    rows = ["| chapter | core problems | optional problems | core time | optional time |",
            "|---|---|---|---|---|"]
    by_chapter: dict[str, list[ProblemCells]] = {}
    for name, problem in levels(solutions_dir):
        if problem.level is None:
            raise FormatError(f"{name}: problem {problem.problem_id} has no **Level:** line")
        by_chapter.setdefault(name, []).append(problem)
    for name, found in by_chapter.items():
        cells = []
        for level in LEVELS:
            chosen = [p for p in found if p.level == level]
            cells.append(", ".join(f"{p.problem_id} {'★' * p.difficulty}" for p in chosen) or "—")
        times = [sum(p.difficulty for p in found if p.level == level) * MINUTES_PER_STAR for level in LEVELS]
        rows.append(f"| {name[:2]} | {cells[0]} | {cells[1]} | {times[0]} min | {times[1]} min |")
    return "\n".join(rows)


# ================================================================================ nbgrader

NBGRADER_SCHEMA = 3          # nbgrader 0.9's cell-metadata schema_version
COURSE_ID = "llm-serving-math"
NBGRADER_BANNER_ID = "nbgrader-banner"
_GRADE_ID = re.compile(r"[^A-Za-z0-9_-]+")
_MENTIONS_SOLUTIONS = re.compile(r"\bsolutions\b", re.IGNORECASE)

DEFAULT_EXCHANGE = "/srv/nbgrader/exchange"

NBGRADER_CONFIG = '''\
"""nbgrader configuration of the course directory (the instructor's), written by
`python -m lecture_lib.practice.exercises nbgrader-source` (regenerate rather than edit by hand).

The source notebooks in source/chNN/ already carry nbgrader's cell metadata: each problem's work
cell is a solution cell, each check cell an autograded test.{mode_note}
"""
c = get_config()
c.CourseDirectory.course_id = "{course_id}"
# The same stub as `make exercises`, so released notebooks match exercises/.
c.ClearSolutions.code_stub = {{"python": "{stub}"}}
# Where release/fetch/submit/collect exchange files. Students' nbgrader must use the same folder:
# install students/nbgrader_config.py where every user's Jupyter reads it (docs/instructor.md).
c.Exchange.root = {exchange!r}
# Students, if you want them in the gradebook before they submit (or run `nbgrader autograde chNN --create`):
# c.CourseDirectory.db_students = [dict(id="alice"), dict(id="bob")]
# Feedback pages (`nbgrader generate_feedback`) load MathJax from this machine, never from a CDN: the
# lecture-feedback template in templates/ is nbgrader's feedback page with a local MathJax loader.
import os as _os
import nbgrader as _nbgrader
c.HTMLExporter.template_name = "lecture-feedback"
c.HTMLExporter.extra_template_basedirs = [
    _os.path.join(_os.path.dirname(_nbgrader.__file__), "server_extensions", "formgrader", "templates"),
    _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "templates"),
]
{grading}'''

GRADED_NOTE = """
Graded release: a check cell is `record("N.M", answer)`, which only writes the answer down. At
`nbgrader autograde` each submission runs in the sandbox (lecture_lib/practice/sandbox.py: no course
files, no network, bounded time, memory, processes and disk), and the course's grader judges each
recorded answer here, in your process, for that student's own numbers (lecture_lib/practice/grading.py)."""
PRACTICE_NOTE = """
Practice release: the check cells are the self-study check(), which judges in the student's kernel and so
can be fooled by the student's code. Nothing in it is graded (the check cells carry no points)."""
GRADING_CONFIG = """
# Autograde the course's way: student code in the sandbox, answers judged by the course's grader in this
# process (docs/instructor.md, "What is protected"). Remove these lines and nbgrader would score the notebook's
# own outputs, which a student's code controls.
from lecture_lib.practice import grading as _grading
_grading.configure(c, seed={seed!r}, vary={vary!r})
"""

# The feedback template: nbgrader's own ("feedback"), with nbconvert's mathjax macro replaced. A feedback
# page is read in two places, so the loader tries, in order: the Jupyter server that serves the page
# (jupyter-server-mathjax, in the grade extra, at <base>/static/jupyter_server_mathjax/: a student opening
# ~/chNN/feedback/<time>/NAME.html from JupyterLab), then the course directory's own copy three folders up
# (the instructor's feedback/<student>/chNN/NAME.html). Neither reaches the network.
FEEDBACK_TEMPLATE = "lecture-feedback"
FEEDBACK_CONF = '{"base_template": "feedback", "mimetypes": {"text/html": true}}\n'
FEEDBACK_MATHJAX = """\
{%- macro mathjax(url=None) -%}
    <!-- MathJax from this machine (lecture_lib.practice.exercises.FEEDBACK_MATHJAX), never a CDN -->
    <script type="text/x-mathjax-config">
    MathJax.Hub.Config({
        tex2jax: {inlineMath: [["$", "$"], ["\\\\(", "\\\\)"]], displayMath: [["$$", "$$"], ["\\\\[", "\\\\]"]],
                  processEscapes: true, processEnvironments: true},
        "HTML-CSS": {availableFonts: ["STIX-Web"], preferredFont: "STIX-Web", webFont: "STIX-Web", imageFont: null},
        SVG: {font: "STIX-Web"}, messageStyle: "none"
    });
    </script>
    <script>
    (function () {
        var places = [], path = window.location.pathname, at = path.search(/\\/(files|view|tree|lab\\/tree)\\//);
        if (at >= 0) places.push(path.slice(0, at) + "/static/jupyter_server_mathjax/MathJax.js");
        places.push("../../../mathjax/MathJax.js");
        function load(index) {
            if (index >= places.length) return;
            var script = document.createElement("script");
            script.src = places[index] + "?config=TeX-AMS-MML_HTMLorMML-full,Safe";
            script.onerror = function () { script.remove(); load(index + 1); };
            document.head.appendChild(script);
        }
        load(0);
    })();
    </script>
{%- endmacro %}
"""


def write_feedback_template(course_dir: Path) -> list[Path]:
    """The lecture-feedback template under ``course_dir/templates``, and a copy of MathJax in
    ``course_dir/mathjax`` when jupyter-server-mathjax is installed; the files written (the copy as one)."""
    folder = Path(course_dir) / "templates" / FEEDBACK_TEMPLATE
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "conf.json").write_text(FEEDBACK_CONF, encoding="utf-8")
    (folder / "mathjax.html.j2").write_text(FEEDBACK_MATHJAX, encoding="utf-8")
    written = [folder / "conf.json", folder / "mathjax.html.j2"]
    try:
        import jupyter_server_mathjax
    except ImportError:
        return written
    source = Path(jupyter_server_mathjax.__file__).parent / "static"
    target = Path(course_dir) / "mathjax"
    if not (target / "MathJax.js").is_file():
        shutil.copytree(source, target, dirs_exist_ok=True)
    return written + [target]

STUDENT_CONFIG = '''\
"""nbgrader configuration for the course's students, written by
`python -m lecture_lib.practice.exercises nbgrader-source`. Install it where every student's Jupyter reads
it, e.g. /etc/jupyter/nbgrader_config.py on the hub (docs/instructor.md), so that
`nbgrader fetch_assignment chNN`, `submit` and `fetch_feedback` find the course with no config of
their own.
"""
c = get_config()
c.CourseDirectory.course_id = "{course_id}"
c.Exchange.root = {exchange!r}
'''


def relative_links(source: str) -> list[str]:
    """The targets of the markdown links in ``source`` that point at a file beside this notebook
    (not a web address, not an anchor in the page)."""
    return [m.group(2) for m in _LINK.finditer(source) if not _EXTERNAL.match(m.group(2))]


def unlink_relative(source: str) -> str:
    """``source`` with every relative markdown link ``[text](../notebooks/x.ipynb)`` reduced to its
    text: a released assignment is a folder holding only its notebook, so such links would break."""
    return _LINK.sub(lambda m: m.group(0) if _EXTERNAL.match(m.group(2)) else m.group(1), source)


def nbgrader_banner_text(points_each: float, n_problems: int, *, graded: bool = True, varies: bool = False) -> str:
    points = f"{points_each:g} point" + ("" if points_each == 1 else "s")
    if not graded:
        return (
            "<div style=\"border-left:4px solid #1f77b4;padding:6px 12px;background:#f5f9ff\">\n"
            "\n"
            "**Practice.** Work each problem in its cell: replace `answer = ...` with your own work, then run "
            "the check cell below it. The check says whether you are right and, if not, gives a nudge, never "
            "the answer. Hints unfold under each problem. Nothing here is graded.\n"
            "\n"
            "</div>"
        )
    numbers = ("Some problems give **your own numbers** in a box under the problem (they differ from "
               "student to student and from the text's): work those problems with them.\n\n" if varies else "")
    return (
        "<div style=\"border-left:4px solid #1f77b4;padding:6px 12px;background:#f5f9ff\">\n"
        "\n"
        "**Graded assignment.** Work each problem in its cell: replace `answer = ...` with your own work, then "
        "run the cell under it, `record(\"N.M\", answer)`. It writes your answer down and says whether it could "
        "be read (a number, an expression, one of the choices), but not whether it is right: that is judged "
        "after you submit, and the feedback says how each answer did. Hints unfold under each problem.\n"
        "\n"
        f"{numbers}"
        f"Each of the {n_problems} problems is worth {points}: a correct recorded answer scores, anything else "
        "(wrong, missing, unreadable) scores 0. Add cells for your own work as you like; the other cells are "
        "read-only. Run every cell before you submit.\n"
        "\n"
        "</div>"
    )


def _nbgrader_meta(grade_id: str, *, solution: bool = False, grade: bool = False, locked: bool = False,
                   points: float | None = None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": NBGRADER_SCHEMA,
            "solution": solution, "task": False}
    if grade:
        meta["points"] = points
    return meta


# The chapters' "how to work a problem" text, rewritten for a graded release: its check cell records, never judges.
_GRADED_WORDING = (
    (re.compile(r"run the `check\(\.\.\.\)` cell under it\."), "run the `record(...)` cell under it."),
    (re.compile(r"It tells you\s+whether you are right and, if not, nudges you\s+without giving the answer\s+away\."),
     "It records your answer for grading; whether it is right comes with the feedback after you submit."),
    (re.compile(r"The checker says\s+whether you are right and nudges you\s+if not, without giving the answer\s+away\."),
     "Your answers are judged after you submit."),
)


def graded_wording(source: str) -> str:
    """A chapter's markdown with the self-study checker's promises rewritten for a graded release."""
    for pattern, replacement in _GRADED_WORDING:
        source = pattern.sub(replacement, source)
    return source


_SETUP_IMPORT = "from lecture_lib.practice.checks import check"
_GRADED_IMPORT = "from lecture_lib.practice.answers import record, your_numbers"


def nbgrader_notebook(solution, *, name: str, points: float = 1, graded: bool = True, seed: str = "",
                      vary: bool = True, keep=None):
    """The nbgrader *source* version of a solutions notebook (a new NotebookNode).

    Each problem's work cell becomes a solution cell (``grade_id`` ``answer-N-M``) and every other cell is
    locked read-only (``cell-<id>``). ``graded`` (the default): each check cell becomes ``record("N.M", answer)``,
    an autograded test (``check-N-M``) worth ``points``, judged by the course's grader
    (:mod:`lecture_lib.practice.grading`); a problem with variants gets a locked cell above its work cell showing
    the student's own numbers (``numbers-N-M``; ``vary=False`` leaves them out), drawn with ``seed``. Not
    ``graded``: a practice release whose check cells are the self-study ``check()`` and carry no points.
    ``keep``: the problem ids to release (None: all); the others' cells are left out. The solutions banner is
    replaced by an assignment banner, and relative links are reduced to their text, since a student's fetched
    folder holds only this notebook; no cell may mention the solutions. The solution regions stay (nbgrader's
    ``generate_assignment`` replaces them with the stub), outputs and execution counts are removed.
    """
    from lecture_lib import validate

    from . import problems as _registers_every_problem  # noqa: F401
    from .registry import PROBLEMS

    points = validate.number("points", points)
    notebook = copy.deepcopy(solution)
    found = problems(notebook, where=name)
    if keep is not None:
        unknown = sorted(set(keep) - {p.problem_id for p in found})
        if unknown:
            raise ValueError(f"{name}: problems {unknown} are not in this notebook")
        dropped = {i for p in found if p.problem_id not in keep for i in range(p.heading, p.check + 1)}
        found = [p for p in found if p.problem_id in keep]
    else:
        dropped = set()
    if not found:
        raise FormatError(f"{name}: no problems, so nothing to grade")
    work = {p.work: p.problem_id for p in found}
    tests = {p.check: p.problem_id for p in found}
    varied = {p.problem_id for p in found if graded and vary and PROBLEMS.get(p.problem_id) is not None
              and PROBLEMS[p.problem_id].variants}
    banner = nbformat.v4.new_markdown_cell(nbgrader_banner_text(points, len(found), graded=graded,
                                                                varies=bool(varied)))
    banner["id"] = NBGRADER_BANNER_ID
    cells, replaced, used = [], False, set()

    def add(cell, grade_id, **meta):
        if grade_id in used:
            raise FormatError(f"{name}: nbgrader grade_id {grade_id!r} is used twice")
        used.add(grade_id)
        cell.setdefault("metadata", {})["nbgrader"] = _nbgrader_meta(grade_id, **meta)
        cells.append(cell)

    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code" and (BEGIN in cell.source or END in cell.source):
            raise FormatError(f"{name}, cell {index}: solution markers belong in code cells only")
        if index in dropped:
            continue
        metadata = cell.setdefault("metadata", {})
        metadata.pop("execution", None)
        if BANNER_TAG in metadata.get("tags", []):
            if not replaced:
                cells.append(banner)
                replaced = True
            continue
        if cell.cell_type == "markdown":
            cell.source = unlink_relative(cell.source)
            if graded:
                cell.source = graded_wording(cell.source)
            if _MENTIONS_SOLUTIONS.search(cell.source):
                raise FormatError(f"{name}, cell {index}: students' copies must not mention the solutions "
                                  f"notebooks: {_MENTIONS_SOLUTIONS.search(cell.source).group(0)!r}")
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
            if has_solution(cell.source) and index not in work:
                raise FormatError(f"{name}, cell {index}: a solution region outside a problem's work cell")
            if graded and _SETUP_IMPORT in cell.source:
                cell.source = cell.source.replace(_SETUP_IMPORT, _GRADED_IMPORT)
        if index in work:
            problem_id = work[index]
            if problem_id in varied:
                numbers = nbformat.v4.new_code_cell(f"mine = your_numbers({problem_id!r}, seed={seed!r})\nmine")
                numbers["id"] = "numbers-" + problem_id.replace(".", "-")
                add(numbers, numbers["id"], locked=True)
            add(cell, "answer-" + problem_id.replace(".", "-"), solution=True)
        elif index in tests:
            grade_id = "check-" + tests[index].replace(".", "-")
            if graded:
                cell.source = _CHECK_CALL.sub(lambda m: f'record("{m.group(1)}", answer)', cell.source)
                add(cell, grade_id, grade=True, locked=True, points=points)
            else:
                add(cell, grade_id, locked=True)
        else:
            add(cell, "cell-" + _GRADE_ID.sub("-", str(cell.get("id") or index)), locked=True)
    if not replaced:
        cells.insert(0, banner)
    banner.metadata["nbgrader"] = _nbgrader_meta("cell-" + NBGRADER_BANNER_ID, locked=True)
    notebook.cells = cells
    nbformat.validate(notebook)
    return notebook


def assignment_name(notebook_name: str) -> str:
    """nbgrader's assignment id for a notebook: a chapter's ``01_batch...ipynb`` -> ``ch01``; a quiz of the bank,
    ``01_batch..._quiz.ipynb`` -> ``quiz01``; the bank's exam ``99_final_exam.ipynb`` -> ``final``."""
    stem = notebook_name.rsplit(".", 1)[0]
    if stem.endswith("_exam"):
        return "final"
    return f"{'quiz' if stem.endswith('_quiz') else 'ch'}{notebook_name[:2]}"


def assignment_seed(seed: str, assignment: str) -> str:
    """The seed of one assignment's per-student numbers: the course's, except for the final exam, whose questions
    come from the quizzes and so get numbers of their own (the grader derives it the same way)."""
    return f"{seed}/final" if assignment == "final" else seed


def nbgrader_source(solutions_dir, course_dir, *, chapters=None, points: float = 1,
                    exchange: str | Path = DEFAULT_EXCHANGE, graded: bool = True, vary: bool = True,
                    seed: str | None = None, problem_ids=None, core_only: bool = False) -> list[Path]:
    """Write an nbgrader course directory from ``solutions_dir``; returns the files written.

    ``course_dir/source/chNN/NN_<topic>.ipynb`` for each chapter (all, or those in ``chapters``; with
    ``problem_ids`` or ``core_only``, only the chapters that keep a problem), ``course_dir/nbgrader_config.py``
    (the instructor's: course id, stub, ``Exchange.root = exchange`` and, when ``graded``, the course's grader:
    :func:`lecture_lib.practice.grading.configure` with ``seed`` (default: the course id) and ``vary``) and
    ``course_dir/students/nbgrader_config.py`` (the students': course id and the same exchange). ``problem_ids``
    (e.g. ``["1.1", "1.4"]``) or ``core_only`` pick the problems released (see :func:`nbgrader_notebook`).
    ``exchange`` must be an absolute path. Existing files are overwritten; nothing else is touched.
    """
    from lecture_lib import validate

    if not isinstance(exchange, (str, Path)) or not str(exchange) or not Path(exchange).is_absolute():
        raise ValueError(f"exchange must be an absolute folder path, got {exchange!r}")
    exchange = str(exchange)
    seed = COURSE_ID if seed is None else seed
    if not isinstance(seed, str) or not re.fullmatch(r"[A-Za-z0-9_.-]{0,64}", seed):
        raise ValueError(f"seed must be up to 64 letters, digits, '_', '.' or '-', got {seed!r}")
    if problem_ids is not None and core_only:
        raise ValueError("problem_ids and core_only pick the problems two ways: give one of them")
    wanted_ids = None
    if problem_ids is not None:
        wanted_ids = {str(pid).strip() for pid in problem_ids}
        if not wanted_ids or not all(re.fullmatch(r"\d+\.\d+", pid) for pid in wanted_ids):
            raise ValueError(f"problem_ids must be problem ids such as 1.4, got {sorted(wanted_ids)}")

    paths = sorted(Path(solutions_dir).glob(NOTEBOOK_GLOB))
    if chapters is not None:
        wanted = {validate.integer("chapters", chapter) for chapter in chapters}
        known = sorted(int(path.name[:2]) for path in paths)
        unknown = sorted(wanted - set(known))
        if unknown:
            raise ValueError(f"chapters must be among {known}, got {unknown}")
        paths = [path for path in paths if int(path.name[:2]) in wanted]
    if not paths:
        raise ValueError(f"solutions_dir has no {NOTEBOOK_GLOB} notebooks: {solutions_dir}")
    course_dir = Path(course_dir)
    written, released = [], set()
    for path in paths:
        solution = nbformat.read(path, as_version=nbformat.NO_CONVERT)
        present = problems(solution, where=path.name)
        if core_only:
            keep = {p.problem_id for p in present if p.level == "core"}
        elif wanted_ids is not None:
            keep = wanted_ids & {p.problem_id for p in present}
        else:
            keep = None
        if keep is not None and not keep:
            continue
        name = assignment_name(path.name)
        if name == "final" and (problem_ids is not None or core_only) and \
                (chapters is None or 99 not in {int(c) for c in chapters}):
            continue                # the exam holds quiz questions: a selection of them goes to the quizzes only
        released |= keep or {p.problem_id for p in present}
        target = course_dir / "source" / assignment_name(path.name) / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(serialise(nbgrader_notebook(solution, name=path.name, points=points, graded=graded,
                                                       seed=assignment_seed(seed, name), vary=vary, keep=keep)))
        written.append(target)
    if wanted_ids is not None and wanted_ids - released:
        raise ValueError(f"problem_ids {sorted(wanted_ids - released, key=_id_order)} are not in the chapters "
                         "released")
    values = {"course_id": COURSE_ID, "stub": STUB, "exchange": exchange,
              "mode_note": GRADED_NOTE if graded else PRACTICE_NOTE,
              "grading": GRADING_CONFIG.format(seed=seed, vary=vary) if graded else ""}
    config = course_dir / "nbgrader_config.py"
    config.write_text(NBGRADER_CONFIG.format(**values), encoding="utf-8")
    students = course_dir / "students" / "nbgrader_config.py"
    students.parent.mkdir(parents=True, exist_ok=True)
    students.write_text(STUDENT_CONFIG.format(**values), encoding="utf-8")
    written += [config, students] + write_feedback_template(course_dir)
    return written


def _id_order(problem_id: str) -> tuple:
    return tuple(int(part) for part in problem_id.split("."))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lecture_lib.practice.exercises",
        description="Write exercises/ from solutions/ (solution regions become stubs, outputs stripped).")
    parser.add_argument("command", choices=["generate", "check", "nbgrader-source", "levels"],
                        help="generate: write the exercise notebooks; check: exit 1 if they are stale; "
                             "nbgrader-source: write an nbgrader course directory (source/ + nbgrader_config.py); "
                             "levels: print the table of problem levels (docs/instructor.md)")
    parser.add_argument("solutions", type=Path, help="folder of solutions/NN_*.ipynb")
    parser.add_argument("exercises", type=Path, nargs="?", default=None,
                        help="folder of exercises/NN_*.ipynb (for nbgrader-source: the course directory)")
    parser.add_argument("--chapter", type=int, action="append", default=None,
                        help="nbgrader-source only: this chapter (repeatable; default every chapter)")
    parser.add_argument("--points", type=float, default=1.0,
                        help="nbgrader-source only: points per check cell (default 1)")
    parser.add_argument("--exchange", default=DEFAULT_EXCHANGE,
                        help=f"nbgrader-source only: the exchange folder, an absolute path (default {DEFAULT_EXCHANGE})")
    parser.add_argument("--practice", action="store_true",
                        help="nbgrader-source only: a practice release (the self-study check(), nothing graded) "
                             "instead of a graded one")
    parser.add_argument("--no-variants", action="store_true",
                        help="nbgrader-source only: every student gets the text's numbers (default: each student "
                             "their own numbers for the problems that vary)")
    parser.add_argument("--seed", default=None,
                        help=f"nbgrader-source only: seed of the per-student numbers (default {COURSE_ID!r}; a new "
                             "one for each term gives new numbers)")
    picked = parser.add_mutually_exclusive_group()
    picked.add_argument("--problems", default=None,
                        help="nbgrader-source only: release only these problems, e.g. 1.1,1.4,4.2")
    picked.add_argument("--core-only", action="store_true",
                        help="nbgrader-source only: release only the core problems")
    args = parser.parse_args(argv)
    if not args.solutions.is_dir():
        parser.error(f"no such folder: {args.solutions}")
    if args.command == "levels":
        try:
            print(level_table(args.solutions))
        except FormatError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        return 0
    if args.exercises is None:
        parser.error("the exercises folder (or, for nbgrader-source, the course directory) is required")
    try:
        if args.command == "nbgrader-source":
            chosen = None
            if args.problems is not None:
                chosen = [part.strip() for part in args.problems.split(",")]
                if not all(re.fullmatch(r"\d+\.\d+", part) for part in chosen):
                    parser.error(f"--problems takes problem ids separated by commas, e.g. 1.1,1.4; got "
                                 f"{args.problems!r}")
            written = nbgrader_source(args.solutions, args.exercises, chapters=args.chapter, points=args.points,
                                      exchange=args.exchange, graded=not args.practice, vary=not args.no_variants,
                                      seed=args.seed, problem_ids=chosen, core_only=args.core_only)
            for path in written:
                print(f"wrote {path}")
            names = sorted({path.parent.name for path in written if path.suffix == ".ipynb"})
            print(f"next: cd {args.exercises} && " + " && ".join(f"nbgrader generate_assignment {name}"
                                                                 for name in names) + "; see docs/instructor.md")
            return 0
        if args.command == "generate":
            changed = generate(args.solutions, args.exercises)
            for path in changed:
                print(f"wrote {path}")
            if not changed:
                print(f"{args.exercises}: up to date")
            return 0
        stale = differences(args.solutions, args.exercises)
    except (FormatError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if stale:
        print("exercises are out of date; run `make exercises`:", file=sys.stderr)
        for line in stale:
            print(f"  {line}", file=sys.stderr)
        return 1
    print(f"{args.exercises}: up to date with {args.solutions}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
