"""The sliders and dropdowns every explorer is built from: log sliders over a list of stops (the
lesson's value, round numbers and the ends), linear and integer sliders, preset dropdowns, and the
typing a log slider's readout accepts ("2,500", "1.7 KB", "5 × 10¹⁵").

Each is bounded to the range its explorer gives and refuses a starting value outside it with a
``ValueError`` naming the control. :mod:`lecture_lib.explorers.base` lays them out beside the
figure; :mod:`lecture_lib.explorers.ahead` reads their positions to predict the next frame.
"""

from __future__ import annotations

import pathlib

import ipywidgets as widgets
import traitlets

from lecture_lib import units

SLIDER_STYLE = {"description_width": "150px"}
SLIDER_LAYOUT = {"width": "440px"}
TRACK_WIDTH = 290         # px left for a slider's track and readout beside its label
LABEL_PX_PER_CHAR = 7.2   # 13 px system sans-serif, generous, so no label is cut off ("context length (toke…")


# --- Controls -----------------------------------------------------------------------------------
def _check_range(description, value, low, high, *, kind: str = "number"):
    """The checks every slider helper makes (issue 20: a ValueError naming the parameter, the value
    and what is allowed, never ipywidgets' TraitError)."""
    from lecture_lib import validate

    if not isinstance(description, str):
        raise ValueError(f"description must be a text label, got {validate._describe(description)}")
    if kind == "integer":
        low = validate.integer("low", low, minimum=-validate.COUNT_LIMIT)
        high = validate.integer("high", high, minimum=-validate.COUNT_LIMIT)
        value = validate.integer("value", value, minimum=-validate.COUNT_LIMIT)
    else:
        positive = kind == "log"
        low = validate.scalar("low", low, positive=positive)
        high = validate.scalar("high", high, positive=positive)
        value = validate.scalar("value", value, positive=positive)
    if not high > low:
        raise ValueError(f"high must be greater than low, got low={low!r} and high={high!r}")
    if not low <= value <= high:
        raise ValueError(f"value must lie between low={low!r} and high={high!r}, got {value!r}")
    return value, low, high


def _declare(control, value):
    """Record the value the lesson declared (the browser test checks the page shows it first) and
    tag the control's element with its model id, so a test can pair page and kernel exactly."""
    control.declared = value
    control.add_class(f"lecture-control-{control.model_id}")
    return control


STOP_SERIES = {3: (1, 2, 5), 6: (1, 1.5, 2, 3, 5, 7), 10: (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8)}
NEAR_STOP = 1.1        # a round stop closer than this factor to an end or the lesson's value is left out


def _is_power_of_two(value: float) -> bool:
    import math

    return value >= 2 and value == int(value) and 2 ** round(math.log2(value)) == value


def nice_stops(value: float, low: float, high: float, *, steps_per_decade: int = 3) -> tuple[float, ...]:
    """The positions of a log slider: values a person would type, plus the lesson's own.

    Powers of two when the lesson's value is one (1,024 tokens, a batch of 2,048), otherwise round
    numbers per decade (1-2-5 by default; ``steps_per_decade`` 6 or 10 gives finer E-series-like
    steps); always the ends and ``value`` itself, so the slider starts exactly on the lesson's number.
    """
    import math

    if _is_power_of_two(value):
        stops = {2.0 ** k for k in range(math.ceil(math.log2(low) - 1e-9), math.floor(math.log2(high) + 1e-9) + 1)}
    else:
        series = STOP_SERIES[min(STOP_SERIES, key=lambda n: (abs(n - steps_per_decade), n))]
        stops = set()
        for decade in range(math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 1):
            for mantissa in series:
                stop = float(f"{mantissa}e{decade}")         # 2e-3 exactly as typed, not 2 * 10**-3
                if low <= stop <= high:
                    stops.add(stop)
    kept = {float(low), float(high), float(value)}
    # A round stop within 10 % of an end or the lesson's value is a second position for almost the same number
    # (1,000,000 beside a top of 1,048,576 read as a mistake to a learner); the finest series steps by 20 %.
    stops = {s for s in stops if all(max(s, k) / min(s, k) >= NEAR_STOP for k in kept)}
    return tuple(sorted(stops | kept))


def count_stops(high: int, marks=()) -> tuple[int, ...]:
    """Whole-number stops for a count from 1 to ``high`` that spans decades (GPUs, chips): the powers of two
    and the ``marks`` within range (the scale-up domains: 8, 72, 144, 576), for ``log_slider(whole=True)``."""
    powers = {2 ** k for k in range(int(high).bit_length())}
    return tuple(sorted({s for s in powers | set(marks) if 1 <= s <= high}))


def value_label(value: float) -> str:
    """How a log slider shows a value: as the lesson writes it, without e-notation ("1,024", "35,136", "0.05",
    "500M" for 5e8, "2.6T" for 2.6e12)."""
    value = float(value)
    magnitude = abs(value)
    if magnitude >= 1e15:                   # past trillions: "5 × 10¹⁵" (a "Q" suffix reads as quetta)
        return units.power_of_ten(value)
    if magnitude >= 1e7:
        for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
            if magnitude >= scale:
                return f"{value / scale:.4g}{suffix}"
    if magnitude >= 1000:                   # "1,024" as the lesson's text writes it
        return f"{round(value):,}"
    if value == round(value):
        return str(int(round(value)))
    return f"{value:.4g}" if magnitude >= 1e-4 else units.power_of_ten(value)


class LogSlider(widgets.FloatLogSlider):
    """A log slider whose positions are a list of values (``stops``): exactly the lesson's value,
    round numbers and the ends. In the browser it is drawn by ipywidgets' SelectionSlider view, which
    moves over positions by index, so nothing is snapped to a step grid (a plain FloatLogSlider's
    front end showed 1,017 for a kernel's 1,024). The Python side is a FloatLogSlider: ``min`` and
    ``max`` are the exponents of the ends (setting them hides the stops outside), ``base`` is 10 and
    ``step`` (0.01) is the exponent gap that counts as a different position, so
    ``max = log10(x) - step`` ends the slider on the stop below x. A value set from code or typed
    that is not a stop is kept exactly as set and becomes the one extra stop (the next such value
    replaces it, so a page sending thousands of values cannot grow the track); the readout shows it.
    A ``whole`` slider counts things (GPUs): every value it takes, set or typed, is a whole number."""

    _model_name = traitlets.Unicode("SelectionSliderModel").tag(sync=True)
    _view_name = traitlets.Unicode("SelectionSliderView").tag(sync=True)
    index = traitlets.Int(0, help="position among the stops (the browser moves this)").tag(sync=True)
    _options_labels = traitlets.Tuple(help="the readout of each stop").tag(sync=True)
    stops = traitlets.Tuple(help="the slider's positions within [base**min, base**max], ascending")

    MAX_EXPONENT = 300      # min and max are exponents: 10**300 is past every quantity in the course

    def __init__(self, *, stops, whole: bool = False, **kwargs):
        self.whole = whole
        self._moving = False
        self._own_stops = frozenset(float(s) for s in stops)
        self._every_stop = tuple(sorted(self._own_stops))
        super().__init__(**kwargs)
        self._place()

    def _visible(self, top: float | None = None) -> tuple[float, ...]:
        """The stops the slider shows, or would show with its ``max`` exponent at ``top``."""
        low = self.base ** self.min * (1 - 1e-9)
        high = self.base ** (self.max if top is None else top) * (1 + 1e-9)
        inside = tuple(s for s in self._every_stop if low <= s <= high)
        return inside or (min(self._every_stop, key=lambda s: abs(s - low)),)

    def _exponent(self, name: str, value) -> float:
        import math

        if not isinstance(value, (int, float)) or not math.isfinite(value) or abs(value) > self.MAX_EXPONENT:
            raise traitlets.TraitError(f"{name} is the exponent of the slider's {'top' if name == 'max' else 'bottom'} "
                                       f"(10**{name}); it must be a number within ±{self.MAX_EXPONENT}, got {value!r}")
        return value

    @traitlets.validate("min")
    def _validate_min(self, proposal):      # the value follows in _on_range, onto a stop
        value = self._exponent("min", proposal["value"])
        if value > self.max:
            raise traitlets.TraitError("setting min > max")
        return value

    @traitlets.validate("max")
    def _validate_max(self, proposal):
        value = self._exponent("max", proposal["value"])
        if value < self.min:
            raise traitlets.TraitError("setting max < min")
        return value

    @traitlets.validate("value")
    def _validate_value(self, proposal):
        import math

        value = float(proposal["value"])
        visible = self._visible() if getattr(self, "_every_stop", None) else ()
        # beyond an end (1e308, inf) is that end, as a typed value is; NaN is no position at all (traitlets'
        # error: an explorer's constructor names the control)
        if math.isnan(value) or (not visible and not math.isfinite(value)):
            raise traitlets.TraitError(f"a log slider's value must be a finite number, got {value!r}")
        if visible:
            value = min(max(value, visible[0]), visible[-1])
        if getattr(self, "whole", False):       # after the clamp: round(inf) is an OverflowError
            value = float(max(1, round(value)))
        if not visible:
            return value
        for stop in visible:        # an end given as base ** min (127.99999999999997) is the end
            if abs(value - stop) <= 1e-9 * stop:
                return stop
        return value

    @traitlets.observe("min", "max")
    def _on_range(self, change):
        if getattr(self, "_every_stop", None) is None:
            return
        visible = self._visible()
        if self.value not in visible:
            below = [s for s in visible if s <= self.value]
            self._moving = True
            try:
                self.value = below[-1] if below else visible[0]
            finally:
                self._moving = False
        self._place()

    @traitlets.observe("value")
    def _on_value(self, change):
        if not self._moving and getattr(self, "_every_stop", None) is not None:
            self._place()

    @traitlets.observe("index")
    def _on_index(self, change):
        if self._moving:
            return
        if not 0 <= change["new"] < len(self.stops):      # past the ends (a page's slider of one stop): back
            self._place()
            return
        self._moving = True
        try:
            self.value = self.stops[change["new"]]
        finally:
            self._moving = False

    def _should_send_property(self, key, value):
        # The browser's view reads only ``index``: a value that follows a move of the index is not
        # echoed back (one message less per move); ``value`` stays in the widget's saved state.
        if key == "value" and self._moving:
            return False
        return super()._should_send_property(key, value)

    def _place(self) -> None:
        if self.value not in self._every_stop:      # at most one stop beyond the slider's own: the latest
            self._every_stop = tuple(sorted(self._own_stops | {self.value}))
        stops = self._visible()
        labels = tuple(value_label(s) for s in stops)
        if len(labels) < 2:       # the page's slider (noUiSlider) refuses a range of one position: two, alike
            labels *= 2
        index = stops.index(self.value)
        # The page's view applies a new track only if the same message does not also move the handle (the move
        # echoes back as the view's own change, and ipywidgets then skips the rest of its update: a narrowed
        # track, or its disabled state, never reached the page). So the handle and the track travel in two
        # messages, in the order that keeps the handle on the page's track: the handle first when it fits the
        # track the page has, the track first when it does not.
        self._moving = True
        try:
            if index < len(self._options_labels):
                self.index = index
            self.stops = stops
            # A range narrowed to one stop (Fast Mode's batch below a normal batch of 2) leaves nothing to
            # move: a drag ran the page's handle off the track and blanked its readout, so it is disabled
            # until there is room again (a slider disabled by its explorer stays disabled).
            pin, unpin = len(stops) < 2 and not self.disabled, len(stops) >= 2 and getattr(self, "_pinned", False)
            if pin or unpin or labels != self._options_labels:
                with self.hold_sync():
                    if pin or unpin:
                        self.disabled, self._pinned = pin, pin
                    self._options_labels = labels
            self.index = index
        finally:
            self._moving = False

    @property
    def label(self) -> str:
        """What the readout shows now."""
        return value_label(self.value)


def log_slider(description: str, value: float, low: float, high: float, *, steps_per_decade: int = 3,
               stops=None, readout_format: str | None = None, whole: bool = False) -> LogSlider:
    """A slider over a quantity spanning decades (batch, context, parameters).

    It starts exactly on ``value`` and moves over :func:`nice_stops` (or the ``stops`` given, to
    which ``value`` and the ends are added). ``readout_format`` is kept for the static site's
    listing; the live readout is :func:`value_label`. ``whole``: a count (GPUs), whose stops must be
    whole numbers and whose typed values are rounded to one. Bad input raises ValueError naming it.
    """
    import math

    value, low, high = _check_range(description, value, low, high, kind="log")
    from lecture_lib import validate

    validate.integer("steps_per_decade", steps_per_decade, minimum=1, maximum=20)
    if stops is None:
        stops = nice_stops(value, low, high, steps_per_decade=steps_per_decade)
    else:
        if isinstance(stops, (str, bytes)) or not hasattr(stops, "__iter__"):
            raise ValueError(f"stops must be a list of numbers, got {validate._describe(stops)}")
        given = [validate.scalar("stops", s) for s in stops]
        stops = sorted({s for s in given if low <= s <= high} | {low, high, value})
    if whole and any(s != round(s) or s < 1 for s in stops):
        raise ValueError(f"a whole-number slider's stops, ends and value must be whole numbers >= 1, got {stops!r}")
    if readout_format is None:
        readout_format = ".0f" if low >= 1 and high <= 1e7 else ".3g"
    control = LogSlider(stops=stops, whole=whole, value=value, base=10, min=math.log10(low), max=math.log10(high),
                        step=0.01, description=description, readout_format=readout_format,
                        continuous_update=True, style=SLIDER_STYLE, layout=SLIDER_LAYOUT)
    control.add_class(LOG_SLIDER_CLASS)     # ARIA_VALUETEXT_SCRIPT gives it the real value for screen readers
    _accept_typing(control)
    return _declare(control, value)


_SUFFIXES = {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}


def parse_typed(text: str) -> float:
    """A number as a learner types it into a readout: "3000", "3,000", "3 000", "2.5e8", "500M",
    "2.6T" (k, M, B or G, T), "5 × 10¹⁵" or "5x10^15" (as readouts write large numbers). Raises
    ValueError for anything else."""
    if not isinstance(text, str):
        raise ValueError(f"a typed value must be text, got {type(text).__name__}")
    cleaned = text.strip().replace(",", "").replace("_", "").replace(" ", "").replace("\u202f", "")
    scale = 1.0
    written = units.e_notation(cleaned)
    if written != cleaned:
        cleaned = written
    elif cleaned and cleaned[-1] in _SUFFIXES:
        cleaned, scale = cleaned[:-1], _SUFFIXES[cleaned[-1]]
    if not cleaned or len(cleaned) > 40 or any(c not in "0123456789.eE+-" for c in cleaned):
        raise ValueError(f"not a number: {text!r}")
    try:
        value = float(cleaned) * scale
    except ValueError:
        raise ValueError(f"not a number: {text!r}") from None
    if not value == value or value in (float("inf"), float("-inf")):
        raise ValueError(f"not a finite number: {text!r}")
    return value


def _accept_typing(control: "LogSlider") -> None:
    """Let the learner type a value into a log slider's readout (issue 19: "a value typed into the
    readout is kept as typed"). The browser's SelectionSlider readout is plain text, so
    ARIA_VALUETEXT_SCRIPT makes it editable and, on Enter, hands the text to a hidden Text widget
    (``control.typed``, shown with the explorer's controls); its value is parsed here. A value
    inside the slider's range is kept exactly and becomes a stop; a number beyond either end moves the
    slider to that end, as a bounded number box does, and says so in the slider's tooltip; text that is
    not a number leaves the slider where it was and the readout shows its value again."""
    typed = widgets.Text(value="", continuous_update=False, layout=widgets.Layout(display="none"))
    typed.add_class(f"lecture-typed-{control.model_id}")

    def submitted(change):
        text = change["new"]
        if not text.strip():
            return
        try:
            value = parse_typed(text)
            low, high = control.base ** control.min, control.base ** control.max
            end = low if value < low * (1 - 1e-9) else high if value > high * (1 + 1e-9) else None
            control.tooltip = (None if end is None else
                               f"{text.strip()} is beyond this slider's range, {value_label(low)} to {value_label(high)}: "
                               f"set to {value_label(end)}")
            target = value if end is None else end
            if control.value == target:       # already there ("2e4" at 20,000): no change, so put the readout back
                raise ValueError("no change")
            control.value = target
        except ValueError:
            # the page redraws its readout only on a change: the same label with a trailing space
            # (restored at the next move) puts the slider's own value back where the text was typed
            labels = list(control._options_labels)
            labels[control.index] += " "
            control._options_labels = tuple(labels)
        typed.value = ""        # empty again, so the next entry is a change whatever it is (and no message per move)

    typed.observe(submitted, names="value")
    control.typed = typed


LOG_SLIDER_CLASS = "lecture-log-slider"

# Every control's handle gets what a keyboard and a screen reader need, from one page script (controls.js,
# beside this module) shown with each explorer (it installs itself once per page, in JupyterLab, Notebook 7
# and Voila):
# * aria-valuetext: the readout beside the slider with its label ("1024 (context length (tokens))"),
#   since noUiSlider announces its own position (an index, or 0.33000000000000007);
# * data-lm-suppress-shortcuts on each slider handle and <select>: JupyterLab's and Notebook 7's
#   keyboard shortcuts (arrows move between cells in command mode) then leave the keys to the control.
CONTROLS_SCRIPT_PATH = pathlib.Path(__file__).resolve().with_name("controls.js")     # `make lint` reads it too
ARIA_VALUETEXT_SCRIPT = CONTROLS_SCRIPT_PATH.read_text(encoding="utf-8")


def slider(description: str, value: float, low: float, high: float, step: float, *,
           readout_format: str = ".3") -> widgets.FloatSlider:
    """A linear slider for a quantity within one decade (price, efficiency).

    ``readout_format`` is a d3-format spec, as the page reads it: the default ``.3`` (no type: d3's ``~g``) writes
    0.5 as "0.5", where d3's plain ``g`` keeps trailing zeros ("0.500") and Python's drops them."""
    from lecture_lib import validate

    value, low, high = _check_range(description, value, low, high)
    step = validate.scalar("step", step)
    if step > high - low:
        raise ValueError(f"step must be at most high - low = {high - low:g}, got {step!r}")
    if not isinstance(readout_format, str):
        raise ValueError(f"readout_format must be a format such as '.2f', got {validate._describe(readout_format)}")
    try:
        format(1.0, readout_format)
    except ValueError:
        raise ValueError(f"readout_format must be a format such as '.2f', got {readout_format!r}") from None
    control = widgets.FloatSlider(value=value, min=low, max=high, step=step, description=description,
                                  readout_format=readout_format, continuous_update=True,
                                  style=SLIDER_STYLE, layout=SLIDER_LAYOUT)
    return _declare(control, value)


def int_slider(description: str, value: int, low: int, high: int, step: int = 1) -> widgets.IntSlider:
    """A slider over whole numbers (stages, racks, layers)."""
    from lecture_lib import validate

    value, low, high = _check_range(description, value, low, high, kind="integer")
    step = validate.integer("step", step, minimum=1, maximum=max(1, high - low))
    control = widgets.IntSlider(value=value, min=low, max=high, step=step, description=description,
                                continuous_update=True, style=SLIDER_STYLE, layout=SLIDER_LAYOUT)
    return _declare(control, value)


def dropdown(description: str, options, value=None) -> widgets.Dropdown:
    """A preset picker; ``options`` are names or (label, value) pairs."""
    from lecture_lib import validate

    if not isinstance(description, str):
        raise ValueError(f"description must be a text label, got {validate._describe(description)}")
    if isinstance(options, (str, bytes)) or not hasattr(options, "__iter__"):
        raise ValueError(f"options must be a list of names or (label, value) pairs, got {validate._describe(options)}")
    options = list(options)
    if not options:
        raise ValueError("options must hold at least one choice, got none")
    values = [o[1] if isinstance(o, tuple) and len(o) == 2 else o for o in options]
    if value is None:
        value = values[0]
    elif not any(value is v or value == v for v in values):
        raise ValueError(f"value must be one of the options {values}, got {validate._describe(value)}")
    control = PresetDropdown(options=options, value=value, description=description,
                             style=SLIDER_STYLE, layout=SLIDER_LAYOUT)
    return _declare(control, value)


class PresetDropdown(widgets.Dropdown):
    """A dropdown that always has a choice: a page message of ``index: null`` (which traitlets would
    let past every validator) is ignored, and the page is sent the current choice again."""

    def set_state(self, sync_data):
        if "index" in sync_data and sync_data["index"] is None and self.index is not None:
            sync_data = {key: value for key, value in sync_data.items() if key != "index"}
            self.send_state("index")
        super().set_state(sync_data)
