"""Predict, then reveal: a guess box and a reveal panel that cannot spoil a prediction.

A chapter asks a question ("at what batch does the bold line bend?"), shows :meth:`Prediction.ask`
(a text box for the guess and a **Reveal** button), derives the answer, and later shows
:meth:`Prediction.reveal` (the panel where the answer appears). Two rules make it honest:

- **Run All never spoils.** Until the learner has typed a guess, the reveal panel says "enter a guess
  first" and offers a **Show anyway** button; the answer is computed only when it is asked for.
- **The answer does not follow the sliders.** It is computed from the library's Formulas with the
  fixed constants of the question, never from an explorer's live state, so moving a slider before
  revealing changes nothing. Where the bold line of an explorer does something different at its
  defaults (the KV cache moves B*), the reveal says so beside the answer.
- **The reveal says where the answer comes from.** "The lecture's numbers" only for the lecture's
  own figure; a course preset or measurement is named as such, and where the lecture's figure
  differs (the board's 8× link ratio against a preset's 18×) both are shown and a guess of either
  is graded right.
- **No answer is printed before its reveal.** Worked numbers that give the answer away go into
  :meth:`Prediction.details`, an output area hidden until the reveal.

One factory per question of the chapters (``board_balance_batch()``, ``two_rack_slowdown()``, ...)
builds the :class:`Prediction` with its constants; the notebooks call those, so the tests can check
every reveal in process.
"""

from __future__ import annotations

import html
import math
import numbers
import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from lecture_lib import units

__all__ = ["Prediction", "cover", "parse_guess", "verdict", "FACTORIES"]

_SUFFIXES = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}


def parse_guess(text) -> float | None:
    """A learner's guess as a number: ``"1000"``, ``"1,000"``, ``"2e3"``, ``"2k"``, ``"25%"``,
    ``"1/4"``, ``"3x"``, ``"2 × 10⁵"``, a size ``"2 KB"`` (2000), ``"1.5 KiB"`` (1536) or ``"100 bytes"``; ``None``
    for an empty box. (A bare ``"100B"`` is 100 billion, as parameter counts are written.) Arithmetic on numbers is
    read as ``check()`` reads it (:func:`lecture_lib.symbols.parse`): ``"2^11"``, ``"2**11"``, ``"3·10^4"``,
    ``"(8+8)*2"``, ``"√2"``. Anything else is a ``ValueError``."""
    from lecture_lib import validate

    if text is None:
        return None
    if isinstance(text, numbers.Real) and not isinstance(text, (bool, np.bool_)):
        value = validate.scalar("text", text, positive=False)
    elif not isinstance(text, str):
        raise ValueError(f"text must be a guess written as text or a number, got {validate._describe(text)}")
    else:
        cleaned = str(text).strip().replace(",", "").replace("_", "").replace(" ", "")
        cleaned = units.e_notation(cleaned).rstrip("×xX")
        scale = 1.0
        binary = re.fullmatch(r"([0-9.eE+-]+)([kKmMgGtT])iB(?:/token)?", cleaned)
        if binary:      # "1.7 KiB": powers of 1024
            cleaned, scale = binary.group(1), 1024.0 ** ("kmgt".index(binary.group(2).lower()) + 1)
        size = re.fullmatch(r"([0-9.eE+-]+)([kKmMgGtT])B(?:/token)?|([0-9.eE+-]+)(?:bytes?)(?:/token)?", cleaned)
        if size:        # bytes with a decimal prefix, as the lecture writes sizes: "2KB" is 2000, "100bytes" 100
            cleaned = size.group(1) + size.group(2) if size.group(1) else size.group(3)
        if not cleaned:
            return None
        if cleaned.endswith("%"):
            cleaned, scale = cleaned[:-1], 0.01
        elif cleaned[-1].lower() in _SUFFIXES and re.fullmatch(r"[0-9.eE+-]+[kKmMbBgGtT]", cleaned):
            cleaned, scale = cleaned[:-1], _SUFFIXES[cleaned[-1].lower()]
        match = re.fullmatch(r"([0-9.eE+-]+)/([0-9.eE+-]+)", cleaned)
        try:
            value = (float(match.group(1)) / float(match.group(2)) if match else float(cleaned)) * scale
        except (ValueError, ZeroDivisionError):
            value = _arithmetic(cleaned, text) * scale
    if not math.isfinite(value):
        raise ValueError(f"text must be a finite number, got {str(text)[:40]!r}")
    return value


def _arithmetic(cleaned: str, text) -> float:
    """Arithmetic on numbers only (``2^11``), through the checker's allow-list parser; never evaluated as Python."""
    from lecture_lib import symbols

    try:
        expression = symbols.parse(cleaned)
        if expression.free_symbols:
            raise ValueError
        return float(expression)
    except (ValueError, TypeError, ZeroDivisionError, OverflowError):
        raise ValueError(f"text: could not read {str(text)[:40]!r} as a number") from None


def _fmt(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) >= 1e7 or abs(value) < 1e-3:      # never e-notation: "3 × 10⁻⁹", "2.6 × 10¹⁴"
        return units.power_of_ten(value)
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def _ratio_log10(guess: float, actual: float) -> float:
    """log10 of how many times apart two positive numbers are, computed in logs so that no pair of
    finite numbers (1e-320 against 1000) overflows to an infinite factor."""
    return abs(math.log10(guess) - math.log10(actual))


def verdict(guess: float | None, actual: float, *, against: str = "") -> str:
    """One kind sentence comparing a guess with the answer (plain text). ``against`` names the
    answer when a question has more than one (e.g. "the lecture's figure")."""
    from lecture_lib import validate

    actual = validate.scalar("actual", actual, positive=False)
    if not isinstance(against, str):
        raise ValueError(f"against must be text naming the answer, got {validate._describe(against)}")
    if guess is not None:
        guess = validate.scalar("guess", guess, positive=False)
    if guess is None:
        return "No guess was made: next time, write one down first, it makes the answer stick."
    if guess <= 0 or actual <= 0:
        return f"You guessed {_fmt(guess)}."
    decades = _ratio_log10(guess, actual)
    target = f" of {against}" if against else ""
    if decades < math.log10(1.005):
        return f"You guessed {_fmt(guess)}: spot on{target and ', exactly ' + against}."
    if decades < math.log10(1.25):          # 2 KB against 1,667 B is close, not spot on
        word = "spot on" if decades <= math.log10(1.1) + 1e-12 else "close"
        return f"You guessed {_fmt(guess)}: {word} (within {math.ceil(100 * (10 ** decades - 1) - 1e-9)}%{target})."
    if decades < math.log10(3):
        return f"You guessed {_fmt(guess)}: the right ballpark, off by {units.factor(10 ** decades, 2)}{target and ' from ' + against}."
    factor = f"{10 ** decades:,.0f}×" if decades < 6 else f"about {units.ten_to_the(round(decades))}×"
    if actual < 1 < guess <= 100:      # a share typed as a percentage without its % sign
        return (f"You guessed {_fmt(guess)}: off by {factor}{target and ' from ' + against}. This answer is a "
                f"fraction between 0 and 1: if you meant {_fmt(guess)}%, type {_fmt(guess)}% (or {_fmt(guess / 100)}).")
    return (f"You guessed {_fmt(guess)}: off by {factor}{target and ' from ' + against}. "
            "Worth finding which term you over- or under-estimated.")


@dataclass
class Prediction:
    """One predict-then-reveal question.

    ``answer`` is a zero-argument callable computed from library Formulas with the question's fixed
    constants, and ``source`` says truthfully where it comes from: "the lecture's numbers" only when
    it is the lecture's own figure, otherwise e.g. "the course's GB200 NVL72 preset" or "the course's
    measurement". ``also_right`` are further ``(label, callable)`` answers a guess is graded against
    as well (the lecture's own figure where the course's differs: a guess of it is right), shown
    beside the answer; ``comparisons`` are rows shown but not graded (e.g. what the explorer's bold
    line does at its defaults), and ``note`` one closing sentence of explanation. ``giveaways`` are
    phrases, besides the numbers, that state the answer (the tests check that none is printed before
    the reveal). Nothing is computed until the reveal is asked for.
    """

    name: str
    answer: Callable[[], float]
    unit: str = ""
    comparisons: tuple[tuple[str, Callable[[], float]], ...] = ()
    note: str = ""
    example: str = "e.g. 1000"
    source: str = "the lecture's numbers"
    also_right: tuple[tuple[str, Callable[[], float]], ...] = ()
    giveaways: tuple[str, ...] = ()
    guess: float | None = field(default=None, init=False)
    state: str = field(default="waiting", init=False)   # waiting, guessed, needs_guess, revealed
    problem: str = field(default="", init=False)        # why the last text typed could not be read
    _percent: bool = field(default=False, init=False, repr=False)   # the guess was typed as a percentage
    _views: list = field(default_factory=list, init=False, repr=False)
    _details: list = field(default_factory=list, init=False, repr=False)
    _covers: list = field(default_factory=list, init=False, repr=False)

    def __repr__(self) -> str:   # never shows the answer
        return f"Prediction({self.name!r}, state={self.state!r})"

    # ---------------------------------------------------------------- what the buttons do
    def set_guess(self, text) -> None:
        """Record what is typed in the guess box (empty clears it). Once revealed, the recorded guess
        stays what it was: editing the box afterwards cannot turn a miss into a hit."""
        if self.state == "revealed":
            return
        try:
            self.guess = parse_guess(text)
            self.problem = ""
            self._percent = isinstance(text, str) and text.strip().endswith("%")
        except ValueError as error:
            self.guess, self.problem, self._percent = None, str(error), False
        self.state = "guessed" if self.guess is not None else "waiting"
        self._render()

    def press_reveal(self) -> None:
        """The Reveal button: reveals when a guess is in, otherwise asks for one first."""
        self.state = "revealed" if self.guess is not None else "needs_guess"
        self._render()

    def press_show_anyway(self) -> None:
        """The Show anyway button: reveal without a guess."""
        self.state = "revealed"
        self._render()

    # ---------------------------------------------------------------- what is shown
    def message_html(self) -> str:
        """The panel's current HTML. It holds the answer only once the state is "revealed"."""
        unit = f" {self.unit}" if self.unit else ""
        if self.state == "revealed":
            graded = self.graded()
            label, actual = graded[0]
            if self.guess is not None and self.guess > 0 and len(graded) > 1:   # grade against the closest answer
                label, actual = min((pair for pair in graded if pair[1] > 0),
                                    key=lambda pair: _ratio_log10(self.guess, pair[1]), default=graded[0])
            against = label if len(graded) > 1 else ""
            rows = [f"<b>{html.escape(self.name)}</b>: {html.escape(verdict(self.guess, actual, against=against))}"]
            for label, value in graded:
                rows.append(f"Answer, from {html.escape(label)}: <b>{html.escape(self._answer_text(value) + unit)}</b>")
            for label, value in self.comparisons:
                rows.append(f"{html.escape(label)}: <b>{html.escape(_fmt(float(value())) + unit)}</b>")
            if self.note:
                rows.append(html.escape(self.note))
            return "<br>".join(rows)
        problem = f"{html.escape(self._problem_text())}. " if self.problem else ""
        if self.state == "guessed":
            return (f"Your guess, <b>{html.escape(_fmt(self.guess) + unit)}</b>, is saved.{self._guess_hint()} "
                    "Press <b>Reveal</b> when ready.")
        if self.state == "needs_guess":
            return (f"{problem}✏️ <b>Enter a guess first</b> in the guess box, then press Reveal; "
                    "or press <b>Show anyway</b>.")
        return (f"{problem}✏️ <b>Enter a guess first</b> in the guess box, then press "
                "Reveal. The answer stays hidden until then; <b>Show anyway</b> reveals it without a guess.")

    def graded(self) -> list[tuple[str, float]]:
        """Every answer a guess is graded against, ``(where it comes from, value)``: the answer
        first, then ``also_right``. Computed on call (the reveal asks for it)."""
        return [(self.source, float(self.answer()))] + [(label, float(value())) for label, value in self.also_right]

    def answer_texts(self) -> list[str]:
        """The ways an output could state an answer before its reveal: each graded value as the
        reveal writes it, as a percentage (fractions), with a × (factors), plus the giveaways.
        Small whole numbers (1-9) are listed only with their ×, as a bare "4" is everywhere."""
        texts = set(self.giveaways)
        for _label, value in self.graded():
            if 0 < value < 1:
                texts |= {_fmt(value), f"{value:.0%}", f"{value:.1%}", units.percent(value), f"{value:.2f}", f"{value:.3f}"}
            elif 1 <= value < 100:
                texts |= {f"{value:.1f}×", f"{value:g}×", f"{value:.0f}×", f"{value:.1f}x", f"{value:.0f}x"}
                if value >= 10 or value != round(value):
                    texts.add(_fmt(value))
            elif value >= 100:
                texts |= {_fmt(value), f"{value:.0f}"}
        return sorted(texts)

    def details(self):
        """An output area hidden until the answer is revealed: print the worked numbers into it
        (``details = guess.details()``, ``with details: print(...)``, then
        ``display(guess.reveal(), details)``), so a Run All
        shows them only after Reveal."""
        import ipywidgets as widgets

        from .capture import KernelOutput

        area = KernelOutput(layout=widgets.Layout(display=None if self.state == "revealed" else "none"))
        area.add_class("lecture-reveal-details")
        self._details.append(area)
        return area

    def cover(self, *items, what: str = "what follows"):
        """A cover over outputs that would give the answer away (a figure, a readout, a table, a
        sentence): visibly held back, with one button to open it, until the prediction is revealed.

        ``items`` are widgets, explorers or anything ``display`` can show; more can be printed into
        the cover with ``with cover: ...``. Leave the cover as the cell's last expression (or
        ``display`` it). Its button is the reveal panel's Show anyway: opening a cover skips the
        guess, so the reveal panel and every other cover of this prediction open with it. ``what``
        names what is held back ("the schedule chart"), shown on the cover."""
        return cover(self, *items, what=what)

    def _problem_text(self) -> str:
        """Why the box's text could not be read, for a learner: without the API's parameter name ("text: ..."), and
        with the forms the box takes."""
        reason = self.problem[len("text: "):] if self.problem.startswith("text: ") else self.problem
        reason = reason[:1].upper() + reason[1:]
        return f"{reason}; write a number such as {self.example[len('e.g. '):]} (2k, 25%, 1/4, 2^11 and 2 kB work too)"

    def _answer_text(self, value: float) -> str:
        """An answer as the reveal writes it; a share also as the percentage the explorers print ("0.429 (42.9%)")."""
        if self.example.startswith("e.g. 0.") and 0 < value < 1:
            return f"{_fmt(value)} ({value:.1%})"
        return _fmt(value)

    def _guess_hint(self) -> str:
        """For a question whose answer is a share (its example is "e.g. 0.5"), a guess above 1 and at most 100 was
        most likely a percentage typed without its sign: say so before the reveal, while it can still be changed.
        For any other question, a guess typed as a percentage is read as a fraction: say that too (a learner's walk
        typed 40% for a number of bytes per token and got 0.4)."""
        if not self.example.startswith("e.g. 0.") and self._percent and self.guess is not None:
            return (f" A percentage reads as a fraction: {html.escape(_fmt(self.guess * 100))}% is "
                    f"{html.escape(_fmt(self.guess))}. If you meant {html.escape(_fmt(self.guess * 100))}, type it "
                    "without the % sign.")
        if self.example.startswith("e.g. 0.") and self.guess is not None and 1 < self.guess <= 100:
            return (f" This answer is a fraction between 0 and 1: for {html.escape(_fmt(self.guess))}%, type "
                    f"{html.escape(_fmt(self.guess))}% (or {html.escape(_fmt(self.guess / 100))}).")
        return ""

    def _style(self) -> str:
        colour = "#9467bd" if self.state == "revealed" else "#7f7f7f"
        return f"border-left:4px solid {colour};padding:4px 10px"

    def ask_message_html(self) -> str:
        """The line under the guess box: short, and never the reveal panel's paragraph again (the two
        often sit one above the other, in Voila too). Once revealed, only the verdict."""
        unit = f" {self.unit}" if self.unit else ""
        if self.problem:
            return f"{html.escape(self._problem_text())}."
        if self.state == "revealed":
            graded = self.graded()
            label, actual = graded[0]
            if self.guess is not None and self.guess > 0 and len(graded) > 1:
                label, actual = min((pair for pair in graded if pair[1] > 0),
                                    key=lambda pair: _ratio_log10(self.guess, pair[1]), default=graded[0])
            return html.escape(verdict(self.guess, actual, against=label if len(graded) > 1 else ""))
        if self.state == "guessed":
            return f"Your guess, <b>{html.escape(_fmt(self.guess) + unit)}</b>, is saved.{self._guess_hint()}"
        return "✏️ <b>Enter a guess first</b>: type it here; <b>Reveal</b> is in the reveal panel."

    def _render(self) -> None:
        text = f"<div style='{self._style()}'>{self.message_html()}</div>"
        for area in self._details:
            area.layout.display = None if self.state == "revealed" else "none"
        for cover in self._covers:
            cover.show(self.state == "revealed")
        for view in self._views:
            if view.kind == "ask":
                view.status.value = f"<div style='padding:2px 10px;color:#444'>{self.ask_message_html()}</div>"
                continue
            view.status.value = text
            view.reveal_button.layout.display = "none" if self.state == "revealed" else None
            view.anyway_button.layout.display = None if self.state in ("waiting", "needs_guess") else "none"

    def _view(self, kind: str, label: str = "your guess"):
        import ipywidgets as widgets

        # description_width "initial": the label keeps its whole width ("your g…" on the projector, issue 31 §5)
        box = widgets.Text(value="" if self.guess is None else _fmt(self.guess), placeholder=self.example,
                           description=label, continuous_update=True, style={"description_width": "initial"},
                           layout=widgets.Layout(width="auto", min_width="280px"))
        reveal_button = widgets.Button(description="Reveal", button_style="primary", icon="eye")
        anyway_button = widgets.Button(description="Show anyway", tooltip="reveal without a guess")
        status = widgets.HTML()
        box.observe(lambda change: self.set_guess(change["new"]), names="value")
        reveal_button.on_click(lambda _button: self.press_reveal())
        anyway_button.on_click(lambda _button: self.press_show_anyway())
        # The guess box alone under the question; Reveal and Show anyway only in the reveal panel, so a page
        # that shows both (Voila, the projector) has one Reveal button and one paragraph per question.
        row = [box] if kind == "ask" else [reveal_button, anyway_button]
        view = _view_class()([widgets.HBox(row), status])
        view.kind, view.box, view.status = kind, box, status
        view.reveal_button, view.anyway_button = reveal_button, anyway_button
        self._views.append(view)
        self._render()
        return view

    def ask(self, label: str = "your guess"):
        """The widget under the question: the guess box and a one-line status (never the panel's paragraph).
        ``label`` names the box where a chapter asks two questions at once ("your guess, question 1")."""
        return self._view("ask", label)

    def reveal(self):
        """The widget where the answer appears: "enter a guess first" until there is one."""
        return self._view("reveal")


def _view_class():
    """A VBox whose plain-text form is what its panel says (a front end without widgets, and the
    tests reading an executed notebook, see "Enter a guess first", not a truncated widget repr)."""
    import ipywidgets as widgets

    global _VIEW
    if _VIEW is None:
        class PredictionView(widgets.VBox):
            def __repr__(self) -> str:
                text = re.sub(r"<[^>]+>", "", self.status.value.replace("<br>", " · ") if hasattr(self, "status") else "")
                return "Prediction: " + html.unescape(text).replace("✏️ ", "")

        _VIEW = PredictionView
    return _VIEW


_VIEW = None


def cover(*args, what: str = "what follows"):
    """``cover(prediction, ..., *items, what=...)``: a cover that opens once **every** prediction
    given is revealed (a table that states two answers); see :meth:`Prediction.cover`."""
    from lecture_lib import validate

    predictions = [arg for arg in args if isinstance(arg, Prediction)]
    items = [arg for arg in args if not isinstance(arg, Prediction)]
    if not predictions:
        raise ValueError("cover needs at least one Prediction to wait for")
    if not isinstance(what, str) or not what.strip():
        raise ValueError(f"what must be a short text naming what is covered, got {validate._describe(what)}")
    made = _cover_class()(predictions, items, what.strip())
    for prediction in predictions:
        prediction._covers.append(made)
        prediction._render()
    return made


_COVER = None
COVER_CLASS = "lecture-cover"


def _cover_class():
    """The Cover widget: a bar saying what is held back and a button to open it, over a box holding
    the covered outputs (hidden until the reveal). Its plain-text form is the bar, so a front end
    without widgets and the tests reading an executed notebook see "Covered ...", not the answer."""
    import ipywidgets as widgets

    global _COVER
    if _COVER is None:
        class Cover(widgets.VBox):
            def __init__(self, predictions, items, what):
                self.predictions, self.what = predictions, what
                from .capture import KernelOutput

                self.output = KernelOutput()     # filled in the kernel: no client routes outputs (capture.py)
                self._explorers = [item for item in items if hasattr(item, "widget") and hasattr(item, "controls")]
                shown = []
                for item in items:
                    if isinstance(item, widgets.Widget):
                        shown.append(item)
                    elif item in self._explorers:
                        shown.append(item.widget)
                    else:
                        with self.output:
                            from IPython.display import display

                            display(item)
                self.content = widgets.VBox(shown + [self.output], layout=widgets.Layout(display="none"))
                self.content.add_class("lecture-cover-content")
                self.bar_text = widgets.HTML(
                    f"<div style='border-left:4px solid #7f7f7f;padding:4px 10px;background:#f6f6f6'>"
                    f"<b>Covered until you reveal your guess</b> ({html.escape(self._names())}): "
                    f"{html.escape(what)} would give the answer away. <i>Show it anyway</i> skips your guess and "
                    f"opens the answer with it.</div>", tooltip=what)
                self.button = widgets.Button(description="Show it anyway", icon="eye",
                                             tooltip="opens this and skips your guess: the answer is revealed too",
                                             layout=widgets.Layout(width="auto", flex="0 0 auto"))  # never cut to "Show it …"
                self.button.on_click(lambda _button: [p.press_show_anyway() for p in predictions])
                self.bar = widgets.HBox([self.bar_text, self.button])
                self.bar.add_class("lecture-cover-bar")
                super().__init__([self.bar, self.content])
                self.add_class(COVER_CLASS)

            def _names(self) -> str:
                return "; ".join(p.name for p in self.predictions)

            def show(self, _opened: bool = False) -> None:
                opened = all(p.state == "revealed" for p in self.predictions)
                self.content.layout.display = None if opened else "none"
                self.bar.layout.display = "none" if opened else None

            @property
            def opened(self) -> bool:
                return self.content.layout.display != "none"

            def __enter__(self):
                return self.output.__enter__()

            def __exit__(self, *exc):
                return self.output.__exit__(*exc)

            def _ipython_display_(self):
                from IPython.display import Javascript, display

                from .sliders import ARIA_VALUETEXT_SCRIPT

                display(self._repr_mimebundle_(), raw=True)    # the widget, then the explorers' keyboard fixes
                if self._explorers:
                    display(Javascript(ARIA_VALUETEXT_SCRIPT))

            def _repr_mimebundle_(self, **kwargs):
                data = super()._repr_mimebundle_(**kwargs) or {}
                data["text/plain"] = repr(self)     # whole: the tests read it
                return data

            def __repr__(self) -> str:
                if self.opened:
                    return f"Cover (opened): {self.what}"
                return f"Covered until you reveal your guess ({self._names()}): {self.what}"

        _COVER = Cover
    return _COVER


# ==================================================================================== the chapters
# Each factory fixes the question's constants; the answer is a Formula of the library evaluated at them.

BOARD_CONTEXT = 1024        # the BatchExplorer's default context length (tokens)
BOARD_KV_BYTES = 1          # its default KV-cache format, fp8 (bytes per value)
LECTURE_HARDWARE_RATIO = 300   # lecture 00:18:48: FLOPs/2 x bytes per weight / mem_bw is "around 300"
BOARD_LINK_RATIO = 8           # lecture 00:39:13: scale-out is "typically about eight times slower"


def board_balance_batch() -> Prediction:
    """Ch1 §4: B* for the board's DeepSeek (37 B active, sparsity 8) on one GB200 NVL72 in fp4."""
    from lecture_lib import hardware, models, roofline

    rack = hardware.get_system("GB200 NVL72")
    n_active, n_total = 37e9, 8 * 37e9

    def weights_only() -> float:
        return roofline.BALANCE_BATCH(FLOPs=rack.flops["fp4"], mem_bw=rack.hbm_bandwidth, bytes_param=0.5,
                                      N_total=n_total, N_active=n_active)

    def with_kv() -> float:
        bytes_tok = models.get("deepseek-v3").kv_bytes_per_token(BOARD_KV_BYTES, context_len=BOARD_CONTEXT)
        return roofline.balance_batch_with_kv(n_active=n_active, n_total=n_total, flops=rack.flops["fp4"],
                                              mem_bw=rack.hbm_bandwidth, bytes_param=0.5,
                                              len_ctx=BOARD_CONTEXT, bytes_tok=bytes_tok)

    def rule_of_thumb() -> float:
        return LECTURE_HARDWARE_RATIO * n_total / n_active

    return Prediction(
        "B* on the board's example (weights only, as on the board)", weights_only, "sequences",
        source="the board's formula with the course's GB200 NVL72 preset (fp4 FLOP/s, HBM bandwidth)",
        also_right=(("the lecture's rule of thumb, B* ≈ 300 × sparsity", rule_of_thumb),),
        comparisons=((f"where the explorer's bold line really bends at its defaults (B* with the KV cache, "
                      f"{BOARD_CONTEXT:,} tokens of context, fp8 KV)", with_kv),),
        note="The board's B* ignores the KV fetch. With a KV cache the memory line slopes upward, so the bold "
             "line meets the compute line later: the long-dashed B* with KV in the explorer sits to the right of the "
             "dotted weights-only one, and the gap grows with the context length.")


def two_rack_slowdown() -> Prediction:
    """Ch2: how many times longer an MoE layer's all-to-all takes on two GB200 NVL72 racks than on one."""
    from lecture_lib import hardware, moe

    def slowdown() -> float:
        rack = hardware.get_system("GB200 NVL72")
        return moe.A2A_SLOWDOWN(n_racks=2, link_ratio=moe.link_ratio_of(rack))

    def on_the_board() -> float:
        return moe.A2A_SLOWDOWN(n_racks=2, link_ratio=BOARD_LINK_RATIO)

    return Prediction("two racks instead of one, GB200 NVL72 links", slowdown, "× slower", example="e.g. 2",
                      source="the course's GB200 NVL72 preset (NVLink 18× faster than its NIC)",
                      also_right=(("the lecture's rule of thumb, scale-out about 8× slower", on_the_board),),
                      note="Both are right: the lecture rounds the link ratio to 8, the GB200 NVL72 preset's NVLink "
                           "is 18 times its 400 Gb/s NIC, and the slowdown is half the link ratio.")


def decode_idle() -> Prediction:
    """Ch3: the idle fraction of a rack when one request at a time runs through 4 pipeline stages."""
    from lecture_lib import pipeline

    return Prediction("idle fraction, one request at a time on 4 racks",
                      lambda: pipeline.decode_idle_fraction(stages=4, microbatches=1), example="e.g. 0.5",
                      source="the lecture's numbers (P = 4 racks, one micro-batch; 'three-quarters of the time')",
                      giveaways=("three-quarters", "idle 3/4"))


def training_bubble() -> Prediction:
    """Ch3: the GPipe bubble with P = 4 stages and m = 4 micro-batches."""
    from lecture_lib import pipeline

    return Prediction("GPipe bubble, P = m = 4", lambda: pipeline.bubble_fraction(stages=4, microbatches=4),
                      example="e.g. 0.25",
                      source="the bubble formula (P − 1)/(m + P − 1) of GPipe (Huang et al. 2019) at P = m = 4")


def kv_shrink_factor() -> Prediction:
    """Ch4: by what factor the KV cache per GPU shrinks from P = 1 to P = 4 (every rack kept busy)."""
    from lecture_lib import pipeline_memory as pm
    from lecture_lib.symbols import P

    def factor() -> float:
        return float(pm.KV_PER_GPU.rhs.subs(P, 1) / pm.KV_PER_GPU.rhs.subs(P, 4))

    return Prediction("KV per GPU shrinks by", factor, "×", example="e.g. 4",
                      source="the lecture's formula for the KV per GPU with P micro-batches in flight",
                      giveaways=("independent of P", "does not move", "exactly cancel", "P's cancel",
                                 "pipelining does not shrink", "cannot lift the cap", "no help for the KV cache",
                                 "the green slab now shrinks too"))


BOARD_PRETRAIN_TOKENS = 200e12   # lecture 01:31:35: pre-training tokens "around two hundred trillion"



def overtraining() -> Prediction:
    """Ch5: the lecture's over-training factor for a ~100 B-active frontier model."""
    from lecture_lib import scaling

    def on_the_board() -> float:     # lecture 01:31:35: "200 trillion" over "2 trillion"
        return scaling.overtraining(d_pretrain=BOARD_PRETRAIN_TOKENS, n_active=scaling.LECTURE_N_ACTIVE)

    return Prediction("your over-training guess", on_the_board, "× Chinchilla", example="e.g. 3",
                      also_right=(("the course, the lecture's inputs unrounded (259 T tokens)",
                                   lambda: scaling.lecture_estimate()["overtraining"]),),
                      note="The lecture rounds the pre-training tokens to 200 trillion; the same inputs unrounded "
                           "(500M tokens/s, 2 months, ÷10 models) give 259 T and so 130×.")


def kv_bytes_at_price_step() -> Prediction:
    """Ch6: KV bytes per token implied by a price step at 200K for a 100 B-active model (the board)."""
    from lecture_lib import context

    return Prediction(
        "KV bytes per token at the 200K step",
        lambda: context.KV_BYTES_FROM_PRICE_STEP_BOARD(mem_bw=1, mults=300, N_active=100e9, len_ctx=200e3),
        "bytes per token", example="e.g. 50000",
        note="1,667 bytes is the 1.67 kB the explorers below write (kB = 1,000 bytes).",
        giveaways=("1.67 kB", "1.6 kB", "1.7 KB", "1.7 kB"))   # how the explorers write it


def flash_drain_minutes() -> Prediction:
    """Ch6 §8: the drain time, in minutes, of the course's flash tier (one 3.84 TB NVMe SSD read at 7 GB/s): by the
    drain-time rule, the hold time flash is the balanced tier for, to set against Anthropic's 5-minute and 1-hour caches."""
    from lecture_lib import context

    def minutes() -> float:
        return next(tier for tier in context.TIERS if tier.name == "flash").drain_time / 60

    return Prediction("drain time of one flash drive (3.84 TB NVMe at 7 GB/s)", minutes, "minutes", example="e.g. 1",
                      source="the course's flash preset (capacity / bandwidth)",
                      note="By the drain-time rule, flash is the tier for holds of minutes: a 5-minute cache and a "
                           "1-hour one both sit nearest to flash (a 24 TB disk drains in about a day).",
                      giveaways=("flash and spinning disk", "cheapest tier flash", "both durations in flash",
                                 "nearest to flash", "≈ 9 minutes"))


CIPHER_SEED = 7             # the chapter's toy cipher
AVALANCHE_SEED = 1          # the inputs its avalanche is measured on


def cipher_avalanche() -> Prediction:
    """Ch7: the fraction of output bits of the toy cipher that flip after 8 rounds when one input bit flips."""
    from lecture_lib import reversible as rv

    def fraction() -> float:
        cipher = rv.toy_cipher(rounds=16, half_bits=16, seed=CIPHER_SEED)
        return float(rv.avalanche_curve(cipher, bit=0, n_samples=4096, seed=AVALANCHE_SEED)[8])

    return Prediction("your cipher guess (after 8 rounds)", fraction, "of the output bits", example="e.g. 0.1",
                      source="the course's measurement (its toy Feistel cipher, 4,096 random blocks)",
                      note="A perfect cipher flips each output bit with probability one half; the measured share "
                           "differs from 0.5 by sampling noise.")


def network_avalanche() -> Prediction:
    """Ch7: the fraction of output signs of a 16-layer residual net (weight scale 0.3) that flip."""
    from lecture_lib import reversible as rv

    def fraction() -> float:
        return float(rv.network_avalanche(kind="residual", weight_scale=0.3, depth=16, bit=0)["flip_fraction"][-1])

    return Prediction("your network guess", fraction, "of the output signs", example="e.g. 0.1",
                      source="the course's measurement (a random 16-layer residual net, weight scale 0.3)")


def crossing_depth() -> Prediction:
    """Ch7 §6: the depth at which checkpointing at its best segment length and reversible layers hold the same
    activation memory (the explorer's two lines cross there, whatever the model, sequence and format)."""
    from lecture_lib import reversible as rv

    return Prediction("depth where checkpointing and reversible layers cross",
                      lambda: rv.CROSSING_DEPTH(act_values=rv.ACTIVATION_VALUES_PER_LAYER), "layers", example="e.g. 30",
                      source="the course's formulas: checkpointing at its best segment against reversible layers, "
                             "c_act = 20 activation values per token per layer (the scaling book's rule of thumb)",
                      note="Only c_act is left: the model's width, the sequence and the format cancel. Below about "
                           "half a dozen layers checkpointing holds less; a real network is far deeper, so reversible "
                           "layers hold less there, by a factor that grows as √L.",
                      giveaways=("half a dozen",))


def batch1_share() -> Prediction:
    """Ch8: the share of its bound that a tuned engine reaches decoding one sequence of a 70B model on one H200."""
    from lecture_lib import measurements

    return Prediction("batch-1 share of the bound (llama-3-70b, one H200)",
                      lambda: measurements.get("trtllm-llama70b-h200-batch1").efficiency,
                      "of the bound", example="e.g. 0.5",
                      source="the course's measurement table (a published figure divided by the course's bound)",
                      giveaways=("the highest share in the table", "dense models more than wide-EP MoE"))


def deepseek_decode_share() -> Prediction:
    """Ch8: the share of its bound that DeepSeek's published H800 decode throughput reaches."""
    from lecture_lib import measurements

    return Prediction("DeepSeek decode share of the bound (per H800 node)",
                      lambda: measurements.get("deepseek-decode-h800").efficiency,
                      "of the bound", example="e.g. 0.5",
                      source="the course's measurement table (a published figure divided by the course's bound)",
                      giveaways=("Wide-EP MoE decode gets least", "dense models more than wide-EP MoE"))


def dp_critical_batch() -> Prediction:
    """Ch9: the tokens per GPU per step above which 8-way data-parallel training on one HGX H100 node hides its
    BF16 gradient all-reduce (ring, NVLink) behind the backward pass."""
    from lecture_lib import collectives, hardware

    def critical() -> float:
        h100 = hardware.get("H100")
        return collectives.dp_critical_batch(dp=8, flops=h100.flops["bf16"], link_bandwidth=h100.scale_up_bandwidth)

    return Prediction("critical tokens per GPU, DP 8 on one HGX H100 node (BF16 gradients)", critical,
                      "tokens per GPU", example="e.g. 100",
                      source="the course's H100 preset (BF16 FLOP/s, NVLink bandwidth) in collectives.DP_CRITICAL_BATCH",
                      note="The parameter count cancels: the all-reduce and the backward pass both grow with N, so "
                           "any model gives the same answer. The scaling book rounds the many-replica limit, "
                           "FLOPs / W, to about 2,200; a ring of 8 moves only 7/8 of the array, hence 7/8 of it.",
                      giveaways=("7/8 of 2,199",))


def layout_capacity() -> Prediction:
    """Ch10: how many times more DeepSeek-V3 sequences fit on one HGX H200 at 8,192 tokens of context
    under DP attention + EP than under plain tensor parallelism (the course's planner)."""
    from lecture_lib import plan

    def dp_over_tp() -> float:
        numbers = plan.plan("deepseek-v3", "HGX H200", price_per_gpu_hour=3.5, len_ctx=8192).numbers["capacity"]
        return numbers["dp_ep_max_batch"] / numbers["tp_max_batch"]

    return Prediction("sequences that fit, DP-attention + EP over TP (DeepSeek-V3, one HGX H200)", dp_over_tp,
                      "times as many", example="e.g. 2",
                      source="the course's planner (its DeepSeek-V3 and HGX H200 presets, 8,192 tokens)")


FACTORIES = {
    "board_balance_batch": board_balance_batch, "two_rack_slowdown": two_rack_slowdown,
    "decode_idle": decode_idle, "training_bubble": training_bubble, "kv_shrink_factor": kv_shrink_factor,
    "overtraining": overtraining, "kv_bytes_at_price_step": kv_bytes_at_price_step,
    "flash_drain_minutes": flash_drain_minutes,
    "cipher_avalanche": cipher_avalanche, "network_avalanche": network_avalanche, "crossing_depth": crossing_depth,
    "batch1_share": batch1_share, "deepseek_decode_share": deepseek_decode_share,
    "dp_critical_batch": dp_critical_batch, "layout_capacity": layout_capacity,
}
"""Every chapter's prediction, by name (the tests walk it)."""
