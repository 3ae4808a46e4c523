"""Graded work, the grader's side: answers judged in the instructor's process, never in the student's kernel.

A graded release (``nbgrader-source``, docs/instructor.md) has ``record("N.M", answer)`` check cells
(:mod:`lecture_lib.practice.answers`). ``nbgrader autograde`` then runs, with the course's configuration
(:func:`configure`, written into the course directory's ``nbgrader_config.py``), these steps per submission:

1. nbgrader's own sanitising: outputs cleared, every read-only cell (the check cells included) put back as
   released, a deleted check cell added back commented out;
2. :class:`SandboxedExecute`: the notebook runs in a kernel inside :mod:`lecture_lib.practice.sandbox`; a cell that
   runs past its time is interrupted, a kernel that dies or runs out of its notebook budget leaves the rest of the
   notebook unrun, and output beyond a cap is dropped; nothing of this stops the class's grading;
3. :class:`JudgeAnswers`, here in the instructor's process: each check cell's output is read for the one answer
   recorded there (plain data, :data:`answers.MIME`), which is judged by :func:`judge` against the answer for
   this student's numbers (:func:`variants.draw`, from the id nbgrader filed the submission under). The cell's
   outputs are then *replaced* by the verdict: a correct answer leaves no error (full points), anything else an
   error line (0 points), so what the student's code printed, raised or returned decides nothing;
4. nbgrader's ``SaveAutoGrades`` stores those points in the gradebook.

So a grade depends only on the recorded answers and on what the instructor's process computes: rebinding
``record`` or ``check``, patching modules, environment variables, input transformers, objects that lie about
their value, emptied or deleted check cells, forged records (a forged answer is an answer: right or not), reading
the course's files (not in the sandbox) all come to the same thing, an answer that is right or is not.
"""

from __future__ import annotations

import time

from . import answers, checks, variants

__all__ = ["configure", "judge", "recorded_answer", "verdict_outputs"]

NO_RECORD = ("No answer was recorded for this problem: its check cell did not run to its end (an error or a "
             "stop above it, or the cell was deleted or changed), so there was nothing to judge.")


def judge(problem_id: str, recorded: dict | None, student: str, *, seed: str = "",
          vary: bool = True) -> tuple[str, str]:
    """``(status, message)`` for the answer ``recorded`` (a payload of :func:`answers.record`, or None) to
    ``problem_id``, for ``student``'s numbers (the text's when ``vary`` is False). The message never holds the
    expected answer; the statuses are :func:`checks.check`'s."""
    if recorded is None:
        return "unanswered", NO_RECORD
    kind = recorded.get("kind")
    if kind == "none":
        return "unanswered", "Not answered: the work cell still held ... (or None) when it was recorded."
    numbers = variants.draw(problem_id, student, seed=seed) if vary else None
    try:
        if kind == "number" and isinstance(recorded.get("value"), (int, float)):
            answer = float(recorded["value"])
        elif kind == "text" and isinstance(recorded.get("value"), str):
            answer = recorded["value"]
        elif kind == "sympy" and isinstance(recorded.get("srepr"), str):
            return _judge_expression_text(problem_id, recorded["srepr"], numbers)
        else:
            why = recorded.get("why") if kind == "unreadable" else None
            return "invalid", f"The recorded answer could not be read{f' ({why})' if isinstance(why, str) else ''}."
    except (TypeError, ValueError, OverflowError):
        return "invalid", "The recorded answer could not be read."
    return checks.verdict(problem_id, answer, numbers)


#: The grader's bound on reading back and judging one recorded expression (a student can record Pow(3, 10**8)
#: unevaluated: building it is the slow part), and on the memory it may use.
EXPRESSION_SECONDS = 10.0
EXPRESSION_MEMORY = 2 * 2**30


def _judge_expression_text(problem_id: str, text: str, numbers: dict | None) -> tuple[str, str]:
    """A recorded ``srepr`` read back and judged in a forked child with a time and memory limit, so no answer can
    stall or exhaust the class's grading."""
    from lecture_lib import safe_srepr

    problem = checks.PROBLEMS[problem_id].bound(numbers)

    def work():
        try:
            answer = safe_srepr.loads(text)
        except safe_srepr.UnsafeText:
            return "invalid", "The recorded expression could not be read back as SymPy data."
        except MemoryError:
            return "invalid", "The recorded expression is too large to judge: expand or simplify it."
        return checks._outcome(problem, answer)

    return checks._outcome_within(problem, None, EXPRESSION_SECONDS, work=work, memory_bytes=EXPRESSION_MEMORY)


def recorded_answer(cell, problem_id: str) -> tuple[dict | None, str | None]:
    """The one answer recorded for ``problem_id`` in ``cell``'s outputs, as ``(payload, None)``; or
    ``(None, reason)`` when there is none or there are several different ones."""
    found = []
    for output in cell.get("outputs", []):
        if output.get("output_type") not in ("display_data", "execute_result"):
            continue
        payload = output.get("data", {}).get(answers.MIME)
        if isinstance(payload, dict) and payload.get("problem") == problem_id:
            if payload not in found:
                found.append(payload)
    if not found:
        return None, None
    if len(found) > 1:
        return None, "More than one different answer was recorded in this problem's check cell; none was judged."
    return found[0], None


def verdict_outputs(problem_id: str, status: str, message: str) -> list:
    """The check cell's outputs after judging: the verdict, and for anything but correct one error line (which
    nbgrader scores 0; no traceback, no path of the grader's machine)."""
    import nbformat

    result = checks.CheckResult(problem_id, status, message)
    outputs = [nbformat.v4.new_output("display_data", data=result._mimebundle())]
    if status != "correct":
        outputs.append(nbformat.v4.new_output(
            "error", ename="NotPassed", evalue=f"Problem {problem_id}: {status}",
            traceback=[f"✗ Problem {problem_id} not passed ({status}): the grader's message above says why."]))
    return outputs


#: What a submission's outputs may show in the feedback page and the formgrader: text and bitmaps. HTML, JavaScript,
#: SVG and Markdown outputs can carry scripts that would run in the instructor's (or the student's) browser.
SAFE_MIME = ("text/plain", "image/png", "image/jpeg", "image/gif")


def safe_cell(cell) -> None:
    """Strip ``cell`` (of a submission, after its run) of anything a browser would execute: rich outputs are cut
    to :data:`SAFE_MIME`, a cell the student added or changed in Markdown or raw form is shown as escaped text."""
    import html

    import nbformat

    if cell.cell_type in ("markdown", "raw") and not cell.get("metadata", {}).get("nbgrader", {}).get("locked"):
        text = cell.source
        cell.cell_type, cell.source = "markdown", html.escape(text)
        cell.pop("outputs", None)
        cell.pop("execution_count", None)
        cell.pop("attachments", None)
        return
    if cell.cell_type != "code":
        return
    kept = []
    for output in cell.get("outputs", []):
        if output.get("output_type") in ("display_data", "execute_result"):
            data = {mime: value for mime, value in output.get("data", {}).items() if mime in SAFE_MIME}
            if not data:
                data = {"text/plain": "(an output the feedback does not show: only text and images are shown)"}
            output["data"] = data
            output["metadata"] = {}
        elif output.get("output_type") not in ("stream", "error"):
            output = nbformat.v4.new_output("stream", name="stdout", text="(an output the feedback does not show)\n")
        kept.append(output)
    cell.outputs = kept


def _problem_of(cell) -> str | None:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    grade_id = meta.get("grade_id", "")
    if not meta.get("grade") or not grade_id.startswith("check-"):
        return None
    return grade_id.removeprefix("check-").replace("-", ".")


# ------------------------------------------------------------------ the nbgrader preprocessors

def _preprocessors():
    from nbgrader.preprocessors import Execute, NbGraderPreprocessor
    from jupyter_core.utils import run_sync
    from nbclient.exceptions import CellTimeoutError, DeadKernelError
    from traitlets import Bool, Integer, Unicode

    class JudgeAnswers(NbGraderPreprocessor):
        """Judge every check cell's recorded answer in this (the instructor's) process and replace the cell's
        outputs with the verdict, so that nbgrader's scoring sees only the grader's decision."""

        seed = Unicode("", help="the course's seed for per-student numbers (variants.draw)").tag(config=True)
        vary = Bool(True, help="judge with each student's own numbers (False: the text's numbers)").tag(config=True)

        def preprocess(self, nb, resources):
            from .exercises import assignment_seed

            student = resources["nbgrader"]["student"]
            seed = assignment_seed(self.seed, resources["nbgrader"].get("assignment", ""))
            for cell in nb.cells:
                problem_id = _problem_of(cell)
                if problem_id is None or problem_id not in checks.PROBLEMS:
                    safe_cell(cell)
                    continue
                payload, reason = recorded_answer(cell, problem_id)
                if reason:
                    status, message = "invalid", reason
                else:
                    status, message = judge(problem_id, payload, student, seed=seed, vary=self.vary)
                cell.outputs = verdict_outputs(problem_id, status, message)
                self.log.info("%s: problem %s %s", student, problem_id, status)
            return nb, resources

    class SandboxedExecute(Execute):
        """nbgrader's Execute with the kernel in :mod:`lecture_lib.practice.sandbox`, a time budget for the whole
        notebook, a cap on output, and a dead kernel or spent budget leaving the rest unrun (not failing the
        class's autograde)."""

        notebook_seconds = Integer(600, help="wall-clock budget of one notebook's run").tag(config=True)
        output_chars = Integer(2_000_000, help="output kept per notebook; the rest is dropped").tag(config=True)
        require_sandbox = Bool(True, help="refuse to run student code when the sandbox cannot start; False runs "
                                          "it with the grader's rights (only inside a throwaway container)"
                               ).tag(config=True)
        seed = Unicode("", help="the course's seed for per-student numbers, handed to the sandbox").tag(config=True)
        vary = Bool(True, help="hand each student's own numbers to the sandbox").tag(config=True)

        def __init__(self, *args, **kwargs):
            from . import sandbox

            kwargs.setdefault("kernel_manager_class", sandbox.SandboxKernelManager)
            super().__init__(*args, **kwargs)

        def preprocess(self, nb, resources, km=None):
            from . import sandbox

            self._student = resources.get("nbgrader", {}).get("student", "")
            self._assignment = resources.get("nbgrader", {}).get("assignment", "")
            self._started, self._stopped, self._kept = time.monotonic(), None, 0
            if self.require_sandbox:
                reason = sandbox.problem()
                if reason:
                    raise sandbox.SandboxUnavailable(f"The autograde sandbox cannot run: {reason}. No student "
                                                     "code was run.")
            else:
                from jupyter_client.manager import AsyncKernelManager

                self.log.warning("Running student code WITHOUT the sandbox (require_sandbox = False)")
                self.kernel_manager_class = AsyncKernelManager
            return super().preprocess(nb, resources, km=km)

        def create_kernel_manager(self):
            import json

            from .exercises import assignment_seed

            km = super().create_kernel_manager()
            if hasattr(km, "student"):
                km.student = self._student
                if self.vary and self._student:       # the numbers boxes work although the key is not there
                    km.numbers = json.dumps(variants.everything_for(
                        self._student, seed=assignment_seed(self.seed, self._assignment)))
            return km

        async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
            if cell.cell_type != "code":
                return cell
            if self._stopped is None and time.monotonic() - self._started > self.notebook_seconds:
                self._stopped = f"the notebook's {self.notebook_seconds} s budget was spent"
            if self._stopped is not None:
                cell.outputs = [_note(f"Not run: {self._stopped}.")]
                return cell
            try:
                return await super().async_execute_cell(cell, cell_index, execution_count, store_history)
            except DeadKernelError:
                self._stopped = "the kernel stopped (it ran out of memory, time or processes, or exited)"
            except CellTimeoutError:
                self._stopped = "a cell ran past its time and the kernel did not answer when interrupted"
            cell.outputs.append(_note(f"Stopped here: {self._stopped}."))
            if self.km is not None:                  # the rest is not run: stop the kernel and all it started
                try:
                    await self.km.shutdown_kernel(now=True)
                except Exception as error:           # already gone
                    self.log.debug("shutting down a stopped kernel: %s", error)
            return cell

        async def async_start_new_kernel_client(self):
            from .notebook_client import poll_in_slices

            client = await super().async_start_new_kernel_client()
            poll_in_slices(client.shell_channel)      # a missed wake-up costs half a second, not the cell's limit
            poll_in_slices(client.iopub_channel)
            return client

        # nbclient binds its synchronous execute_cell to its own coroutine when the class is made: bind it to ours.
        execute_cell = run_sync(async_execute_cell)

        def output(self, outs, msg, display_id, cell_index):
            size = len(str(msg.get("content", "")))
            if self._kept + size > self.output_chars:
                if self._kept <= self.output_chars:
                    self._kept = self.output_chars + 1
                    outs.append(_note(f"Output beyond {self.output_chars:,} characters was dropped."))
                return None
            self._kept += size
            return super().output(outs, msg, display_id, cell_index)

    return JudgeAnswers, SandboxedExecute


def _note(text: str):
    import nbformat

    return nbformat.v4.new_output("stream", name="stdout", text=text + "\n")


def __getattr__(name):
    if name in ("JudgeAnswers", "SandboxedExecute"):     # built on first use: nbgrader is the grade extra's
        judge_answers, sandboxed_execute = _preprocessors()
        globals().update(JudgeAnswers=judge_answers, SandboxedExecute=sandboxed_execute)
        return globals()[name]
    raise AttributeError(name)


def configure(c, *, seed: str = "", vary: bool = True, cell_seconds: int = 60) -> None:
    """Set nbgrader's configuration ``c`` (in ``nbgrader_config.py``) to autograde the course's way: the
    sandboxed kernel, the grader's judge before nbgrader saves the scores, and deleted check cells added back."""
    from nbconvert.preprocessors import ClearMetadataPreprocessor
    from nbgrader.preprocessors import AssignLatePenalties, CheckCellMetadata, IgnorePattern, LimitOutput, \
        SaveAutoGrades

    module = globals()
    execute, judge_answers = module["__getattr__"]("SandboxedExecute"), module["__getattr__"]("JudgeAnswers")
    c.Autograde.autograde_preprocessors = [execute, IgnorePattern, ClearMetadataPreprocessor, LimitOutput,
                                           judge_answers, SaveAutoGrades, AssignLatePenalties, CheckCellMetadata]
    c.OverwriteCells.add_missing_cells = True
    c.JudgeAnswers.seed = c.SandboxedExecute.seed = seed
    c.JudgeAnswers.vary = c.SandboxedExecute.vary = vary
    c.SandboxedExecute.timeout = cell_seconds
    c.SandboxedExecute.interrupt_on_timeout = True
