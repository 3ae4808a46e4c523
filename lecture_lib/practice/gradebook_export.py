"""Write nbgrader's grades as the CSV a learning-management system imports: Canvas or Moodle.

    python -m lecture_lib.practice.gradebook_export COURSE_DIR --format canvas -o canvas-grades.csv
    python -m lecture_lib.practice.gradebook_export COURSE_DIR --format moodle -o moodle-grades.csv \
        [--assignment ch01 --assignment quiz01] [--percent] [--section "Spring 2027"]

COURSE_DIR is the nbgrader course directory (the one ``nbgrader-source`` wrote); its ``gradebook.db`` is read
through nbgrader's own API (:class:`nbgrader.api.Gradebook`), never changed. One row per student the gradebook
knows, one column per assignment (all of them, or those named with ``--assignment``, in the order given); a
student with no submission for an assignment scores 0 there, as in nbgrader's own ``nbgrader export``. Scores are
points (``--percent``: per cent of the assignment's maximum).

The two layouts, as their publishers document the import:

- **Canvas** ("How do I import grades in the Gradebook?", Instructure's Instructor Guide,
  https://community.canvaslms.com/t5/Instructor-Guide/How-do-I-import-grades-in-the-Gradebook/ta-p/807; the
  columns as a university's guide lists them: https://teaching.resources.osu.edu/toolsets/carmencanvas/guides/calculating-final-grades/import-csv-file-carmen-grades):
  the columns ``Student`` (``Last, First``), ``ID`` (Canvas's user id), ``SIS User ID``, ``SIS Login ID`` and
  ``Section``, then one column per assignment; Canvas needs only one of the student columns to find the
  student, and a column whose name matches no assignment becomes a new assignment. A second row,
  ``Points Possible``, states each assignment's maximum, as in Canvas's own export. Here ``ID`` is the
  student's ``lms_user_id`` in the gradebook (empty unless you filled it in), ``SIS Login ID`` and
  ``SIS User ID`` the id nbgrader filed the submissions under (the hub's login name).
- **Moodle** ("Grade import", MoodleDocs, https://docs.moodle.org/en/Grade_import): the import takes a CSV with a
  header row and lets you map one column to the user's identity (user id, username, ID number or email
  address) and each other column to a grade item. Here: ``First name``, ``Last name``, ``Username`` (the
  nbgrader id), ``ID number`` (``lms_user_id``), ``Email address``, then one column per assignment. At the import,
  set "Map from" to ``Username`` and "Map to" to ``username`` (or email to ``useremail``), and map each
  assignment column to its grade item, whose maximum should be the assignment's (or use ``--percent`` with
  items out of 100).

Only the standard library and nbgrader are used.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["FORMATS", "Grades", "main", "read_gradebook", "render", "write"]

FORMATS = ("canvas", "moodle")
CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MOODLE_IDENTITY = ("First name", "Last name", "Username", "ID number", "Email address")


@dataclass(frozen=True)
class Grades:
    """What the gradebook holds, as plain data: the assignments (name, maximum score) in column order, the
    students (id, first name, last name, email, LMS user id) and each (student id, assignment) score."""

    assignments: tuple[tuple[str, float], ...]
    students: tuple[tuple[str, str, str, str, str], ...]
    scores: dict


def _gradebook_url(course_dir: Path) -> str:
    course_dir = Path(course_dir)
    database = course_dir / "gradebook.db"
    if not course_dir.is_dir():
        raise ValueError(f"course_dir must be an nbgrader course directory, got {str(course_dir)!r} (no such folder)")
    if not database.is_file():
        raise ValueError(f"course_dir {str(course_dir)!r} has no gradebook.db: run `nbgrader autograde ASSIGNMENT "
                         "--create` there first")
    return f"sqlite:///{database.resolve()}"


def _alembic_on_path() -> None:
    """nbgrader's Gradebook runs ``alembic`` from PATH; a venv's python run without ``activate`` has it beside
    itself, so put that folder on PATH when alembic is not found otherwise."""
    if shutil.which("alembic") is None and (Path(sys.executable).parent / "alembic").exists():
        os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])


def read_gradebook(course_dir, *, assignments=None) -> Grades:
    """The grades of the course directory ``course_dir`` (its ``gradebook.db``), read with nbgrader's API.

    ``assignments``: the names to export, in that order (None: every assignment, in the gradebook's order).
    An unknown name is a ValueError that lists the known ones."""
    from nbgrader.api import Gradebook, MissingEntry

    _alembic_on_path()
    with Gradebook(_gradebook_url(course_dir)) as gradebook:
        known = [assignment.name for assignment in gradebook.assignments]
        if assignments is None:
            names = known
        else:
            names = [str(name) for name in assignments]
            unknown = [name for name in names if name not in known]
            if unknown or len(set(names)) != len(names):
                raise ValueError(f"assignments must be distinct names among {known}, got {names}")
        chosen = tuple((name, float(gradebook.find_assignment(name).max_score)) for name in names)
        students, scores = [], {}
        for student in sorted(gradebook.students, key=lambda s: s.id):
            students.append((student.id, student.first_name or "", student.last_name or "", student.email or "",
                             student.lms_user_id or ""))
            for name, _ in chosen:
                try:
                    score = float(gradebook.find_submission(name, student.id).score)
                except MissingEntry:
                    score = 0.0
                scores[(student.id, name)] = score
    return Grades(chosen, tuple(students), scores)


def _number(value: float) -> str:
    return f"{value:.6g}"


def render(grades: Grades, fmt: str, *, percent: bool = False, section: str = "") -> str:
    """The CSV text (UTF-8, comma-separated, a header row) in ``fmt``: ``"canvas"`` or ``"moodle"``."""
    if fmt not in FORMATS:
        raise ValueError(f"fmt must be one of {list(FORMATS)}, got {fmt!r}")
    if not isinstance(section, str):
        raise ValueError(f"section must be a str, got {type(section).__name__}")

    def score(student_id: str, name: str, maximum: float) -> str:
        value = grades.scores[(student_id, name)]
        if percent:
            value = 100.0 * value / maximum if maximum > 0 else 0.0
        return _number(value)

    names = [name for name, _ in grades.assignments]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    if fmt == "canvas":
        writer.writerow([*CANVAS_IDENTITY, *names])
        writer.writerow(["Points Possible", "", "", "", "",
                         *(_number(100.0 if percent else maximum) for _, maximum in grades.assignments)])
        for student_id, first, last, _email, lms_id in grades.students:
            shown = f"{last}, {first}" if (first or last) else student_id
            writer.writerow([shown, lms_id, student_id, student_id, section,
                             *(score(student_id, name, maximum) for name, maximum in grades.assignments)])
    else:
        writer.writerow([*MOODLE_IDENTITY, *names])
        for student_id, first, last, email, lms_id in grades.students:
            writer.writerow([first, last, student_id, lms_id, email,
                             *(score(student_id, name, maximum) for name, maximum in grades.assignments)])
    return buffer.getvalue()


def write(course_dir, fmt: str, output, *, assignments=None, percent: bool = False, section: str = "") -> Path:
    """Read ``course_dir``'s gradebook and write ``output`` in ``fmt``; returns the path written."""
    text = render(read_gradebook(course_dir, assignments=assignments), fmt, percent=percent, section=section)
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf-8")
    return output


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lecture_lib.practice.gradebook_export",
        description="Write an nbgrader course's grades (gradebook.db) as the CSV Canvas or Moodle imports.")
    parser.add_argument("course_dir", type=Path, help="the nbgrader course directory (holds gradebook.db)")
    parser.add_argument("--format", choices=FORMATS, required=True, help="the LMS whose import layout to write")
    parser.add_argument("-o", "--output", type=Path, required=True, help="the CSV file to write")
    parser.add_argument("--assignment", action="append", default=None,
                        help="export only this assignment (repeatable, in this order; default every assignment)")
    parser.add_argument("--percent", action="store_true",
                        help="scores as per cent of each assignment's maximum (default: points)")
    parser.add_argument("--section", default="", help="canvas only: the Section column's value (default empty)")
    args = parser.parse_args(argv)
    try:
        path = write(args.course_dir, args.format, args.output, assignments=args.assignment,
                     percent=args.percent, section=args.section)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    grades = read_gradebook(args.course_dir, assignments=args.assignment)
    print(f"wrote {path}: {len(grades.students)} students x {len(grades.assignments)} assignments "
          f"({args.format} layout)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
