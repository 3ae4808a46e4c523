"""Issue 19 (§1, §5, §6) and issue 20 (§4), without a browser: log sliders start exactly on the
lesson's value and move over values a person would type; the slider helpers refuse bad input with a
ValueError naming the parameter; every figure, explorer or static, has a text alternative that
states its real axes; figures fit the notebook column; tick labels never run together."""

import math

import ipywidgets as widgets
import numpy as np
import pytest
import traitlets

from lecture_lib.explorers import base, sliders, plots
from lecture_lib.explorers.base import explorer_classes
from pristine import pristine

EXPLORERS = explorer_classes()
IDS = lambda c: f"{c.__module__.rpartition('.')[2]}.{c.__name__}"


def _nice(value: float, declared: float, low: float, high: float) -> bool:
    """A stop a person would type: an end, the lesson's value, a scale-up domain the lecture names (8, 72, 576
    GPUs), an hour of seconds (Ch6's 1-hour cache, a value its text asks for), a power of two, or m x 10^k with m
    in the 1-2-5 (or finer E-series) list."""
    from lecture_lib.pipeline_memory import SCALE_UP_SIZES

    if value in (declared, low, high) or value in SCALE_UP_SIZES.values() or sliders._is_power_of_two(value) \
            or value == 3600.0:
        return True
    exponent = math.floor(math.log10(value))
    mantissa = round(value / 10 ** exponent, 9)
    return any(mantissa == m for series in sliders.STOP_SERIES.values() for m in series)


@pytest.mark.parametrize("cls", EXPLORERS, ids=IDS)
def test_log_sliders_start_on_the_declared_value_and_stop_on_round_numbers(cls):
    explorer = pristine(cls)
    logs = {n: c for n, c in explorer.controls.items() if isinstance(c, widgets.FloatLogSlider)}
    for name, control in logs.items():
        assert isinstance(control, sliders.LogSlider), name
        low, high = control.base ** control.min, control.base ** control.max
        assert control.value == control.declared, (name, control.value, control.declared)
        assert control.stops[control.index] == control.value
        assert control._options_labels[control.index] == sliders.value_label(control.declared)
        assert list(control.stops) == sorted(set(control.stops))
        odd = [s for s in control.stops if not _nice(s, control.declared, control.stops[0], control.stops[-1])]
        assert not odd, (name, odd)
        # no two positions for almost one number (a learner's walk: 1,000,000 beside a top of 1,048,576)
        twins = [(a, b) for a, b in zip(control.stops, control.stops[1:]) if b / a < sliders.NEAR_STOP]
        assert not twins, (name, twins)
        assert control.stops[0] == pytest.approx(low) and control.stops[-1] <= high * (1 + 1e-9)
        assert all("e" not in label for label in control._options_labels), control._options_labels
    for name, control in logs.items():       # the browser moves the index: every position is an exact stop
        for index in (0, len(control.stops) - 1, control.stops.index(control.declared)):
            control.index = index
            assert control.value == control.stops[index]
        control.value = control.declared


@pytest.mark.parametrize("cls", EXPLORERS, ids=IDS)
def test_a_linear_slider_s_readout_shows_each_position_to_a_tenth_of_its_step(cls):
    """A learner's walk read "11.8" for $11.75 per GPU-hour (3 significant digits over a 0.25 step): every position
    of every linear slider, written as its readout writes it, is within a tenth of a step of the value used."""
    explorer = pristine(cls)
    for name, control in explorer.controls.items():
        if not isinstance(control, widgets.FloatSlider) or isinstance(control, widgets.FloatLogSlider):
            continue
        positions = np.arange(control.min, control.max + control.step / 2, control.step)
        off = [(v, format(v, control.readout_format)) for v in positions
               if abs(float(format(v, control.readout_format)) - v) > control.step / 10]
        assert not off, (name, control.readout_format, off[:3])


def test_log_slider_positions_values_and_code_set_values():
    control = sliders.log_slider("context (tokens)", 1024, 128, 1_048_576)
    assert control.stops == tuple(2.0 ** k for k in range(7, 21))           # the lesson uses powers of two
    assert control._options_labels[3] == "1,024" and control.index == 3
    batch = sliders.log_slider("batch", 2400, 16, 20_000)
    assert batch.stops == (16, 20, 50, 100, 200, 500, 1000, 2000, 2400, 5000, 10_000, 20_000)
    assert batch.label == "2,400"
    batch.value = 3000.0                      # set from code: kept as set, and shown as set
    assert batch.value == 3000.0 and batch.label == "3,000" and batch._options_labels[batch.index] == "3,000"
    batch.value = batch.base ** batch.max     # 20000.000000000004 from the exponent is the end itself
    assert batch.value == 20_000
    assert sliders.value_label(5e8) == "500M" and sliders.value_label(35_136) == "35,136"
    assert sliders.value_label(0.05) == "0.05" and sliders.value_label(2.6e14) == "260T"
    # past trillions and below 10⁻⁴ as prose writes them, and read back when typed
    assert sliders.value_label(5e15) == "5 × 10¹⁵" and sliders.value_label(3e-9) == "3 × 10⁻⁹"
    assert sliders.parse_typed(sliders.value_label(5e15)) == 5e15


def test_a_log_slider_range_narrowed_from_code_ends_on_the_stop_below():
    control = sliders.log_slider("fast batch", 128, 1, 100_000)
    control.max = math.log10(2048) - control.step          # FastModeExplorer keeps fast below normal
    assert control.stops[-1] == 1024 and control.value == 128
    control.value = 5000
    assert control.value == 1024                           # clamped onto the last stop
    control.max = 5
    assert control.stops[-1] == 100_000


BAD_SLIDERS = [
    (sliders.log_slider, dict(value=0), "value"),
    (sliders.log_slider, dict(low=-5), "low"),
    (sliders.log_slider, dict(high=float("inf")), "high"),
    (sliders.log_slider, dict(value=float("nan")), "value"),
    (sliders.log_slider, dict(value="10"), "value"),
    (sliders.log_slider, dict(value=500), "value"),          # outside [low, high]
    (sliders.log_slider, dict(low=100, high=10), "high"),
    (sliders.log_slider, dict(description=3), "description"),
    (sliders.log_slider, dict(steps_per_decade=0), "steps_per_decade"),
    (sliders.log_slider, dict(stops="1,2"), "stops"),
    (sliders.slider, dict(step=0), "step"),
    (sliders.slider, dict(step=1000), "step"),
    (sliders.slider, dict(value=None), "value"),
    (sliders.slider, dict(readout_format="abc"), "readout_format"),
    (sliders.slider, dict(low=float("-inf")), "low"),
    (sliders.int_slider, dict(value=2.5), "value"),
    (sliders.int_slider, dict(step=0), "step"),
    (sliders.int_slider, dict(value=50), "value"),
    (sliders.dropdown, dict(options=[]), "options"),
    (sliders.dropdown, dict(options="abc"), "options"),
    (sliders.dropdown, dict(value="nope"), "value"),
]
DEFAULTS = {sliders.log_slider: dict(description="x", value=5, low=1, high=100),
            sliders.slider: dict(description="x", value=5, low=1, high=10, step=0.5),
            sliders.int_slider: dict(description="x", value=5, low=1, high=10),
            sliders.dropdown: dict(description="x", options=["a", "b"])}


@pytest.mark.parametrize("helper, bad, name", BAD_SLIDERS, ids=lambda v: getattr(v, "__name__", str(v)))
def test_slider_helpers_refuse_bad_input_with_a_value_error_naming_it(helper, bad, name):
    arguments = dict(DEFAULTS[helper], **bad)
    with pytest.raises(ValueError, match=name) as caught:
        helper(**arguments)
    assert not isinstance(caught.value, traitlets.TraitError)


@pytest.mark.parametrize("field, value", [("hbm_capacity", float("inf")), ("hbm_capacity", 0),
                                          ("n_total", float("nan")), ("batch", -1), ("bytes_param", 1e400)])
def test_capacity_row_refuses_non_finite_and_out_of_range(field, value):
    arguments = dict(n_total=7e10, bytes_param=1, batch=8, len_ctx=4096, bytes_tok=1e5, hbm_capacity=8e10)
    arguments[field] = value
    with pytest.raises(ValueError, match=field):
        base.capacity_row(**arguments)


def _static_figures():
    from lecture_lib import moe, pipeline
    from lecture_lib.explorers import moe as moe_explorers, pipeline as pipeline_explorers, pipeline_memory as pipeline_memory_explorers
    from lecture_lib.explorers import reversible as reversible_explorers

    placement = moe.Placement(n_experts=16, experts_per_gpu=2, gpus_per_rack=4)
    figures = {
        "train timetable": lambda: plots.train_timetable(),
        "gantt": lambda: pipeline_explorers.gantt_figure(
            pipeline.simulate(schedule="gpipe", stages=4, microbatches=4), title="GPipe, P = 4, m = 4"),
        "decode loop": lambda: pipeline_memory_explorers.decode_loop_figure(stages=4, microbatches=2, tokens=3),
        "hop path": lambda: pipeline_memory_explorers.hop_path_figure(),
        "memory timeline": lambda: reversible_explorers.memory_timeline_figure(),
    }
    figures["routing"] = lambda: moe_explorers.routing_figure(
        moe.random_routing(n_tokens=32, placement=placement, k=2), n_tokens=12)
    return figures


@pytest.mark.parametrize("name", list(_static_figures()))
def test_every_static_figure_has_a_text_alternative_of_its_real_axes(name):
    image = plots.to_image(_static_figures()[name]())
    data, metadata = image._repr_mimebundle_()
    assert len(image.alt) > 40 and "$" not in image.alt.replace("$/", "") and "\\" not in image.alt
    assert "untitled" not in image.alt and "Chart" in image.alt
    assert 'alt="' in data["text/html"] and "max-width:100%" in data["text/html"]
    assert data["image/png"] and data["text/plain"] == image.alt
    assert image.width <= plots.MAX_WIDTH_PX


def test_the_gantt_alternative_states_its_time_axis_and_racks():
    from lecture_lib import pipeline
    from lecture_lib.explorers import pipeline as pipeline_explorers

    timeline = pipeline.simulate(schedule="gpipe", stages=4, microbatches=4)
    alt = plots.to_image(pipeline_explorers.gantt_figure(timeline, title="GPipe")).alt
    assert f"time from 0 to {timeline.makespan * 1.01:.3g}" in alt
    assert "rack 0, rack 1, rack 2, rack 3" in alt
    explorer = pipeline_explorers.ScheduleExplorer()
    ticks = [t.get_text() for t in explorer.tick_labels if t.get_text()]
    assert float(ticks[-1]) >= timeline.makespan                       # the ticks it draws (0 .. 24) ...
    assert f"from 0 to {ticks[-1]}" in explorer.view.alt_text          # ... are what it says, not 0 to 1
    assert "rack 0" in explorer.view.alt_text


def test_plain_text_drops_tex():
    assert plots.plain_text(r"costs \$30 at $10^{3}$ tokens, $\mathbf{F0}$, a $\times$ b") == \
        "costs $30 at 10^3 tokens, F0, a × b"
    assert plots.plain_text(r"falling  $a\,x^{-p}$") == "falling a x^-p"      # a thin space is a space, not a comma


@pytest.mark.parametrize("cls", EXPLORERS, ids=IDS)
def test_explorer_alternative_has_no_tex_and_no_untitled_chart(cls):
    alt = pristine(cls).view.alt_text
    assert "\\$" not in alt and "\\" not in alt and "untitled" not in alt and "mathdefault" not in alt
    assert "Chart" in alt


@pytest.mark.parametrize("cls", EXPLORERS, ids=IDS)
def test_explorer_alternative_reads_its_readout_as_shown_and_no_e_notation(cls):
    """A learner's walk heard "0.0307/M" where the readout shows "$0.0307/M" (readout rows were read as figure TeX,
    whose "$" is a math delimiter), and "tokens from 10B to 1e+07T" (a tick label past 999T)."""
    import re

    explorer = pristine(cls)
    rows, _ = explorer.update(explorer.values)
    alt = explorer.view.alt_text
    for label, value, *_ in rows:
        assert " ".join(str(value).split()) in alt, f"{cls.__name__}: the readout's {value!r} is not in {alt!r}"
    assert not re.search(r"\d(?:\.\d+)?e[+-]?\d", alt), alt


def test_tick_labels_past_a_thousand_tera_are_powers_of_ten():
    assert plots.compact_number(1e19) == "10¹⁹" and plots.compact_number(2.5e16) == "2.5 × 10¹⁶"
    assert plots.compact_number(9.99e14) == "999T" and plots.compact_number(1.2e5) == "120k"


@pytest.mark.parametrize("cls", EXPLORERS, ids=IDS)
def test_figure_fits_the_notebook_column(cls):
    explorer = pristine(cls)
    width = int(explorer.view.widget.layout.width.rstrip("px"))
    assert width <= plots.MAX_WIDTH_PX, width


def _overlapping_ticks(figure) -> list[str]:
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    problems = []
    for axis in figure.axes:
        if not axis.get_visible():
            continue
        boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in axis.get_xticklabels()
                 if t.get_visible() and t.get_text()]
        boxes.sort(key=lambda item: item[1].x0)
        for (a, box_a), (b, box_b) in zip(boxes, boxes[1:]):
            if box_a.x1 > box_b.x0 + 0.5:
                problems.append(f"{axis.get_title()!r}: {a!r} runs into {b!r}")
    return problems


@pytest.mark.slow
@pytest.mark.parametrize("cls", EXPLORERS, ids=IDS)
def test_tick_labels_never_run_together_at_slider_extremes(cls):
    explorer = cls()
    assert not _overlapping_ticks(explorer.view.figure)
    for name, control in explorer.controls.items():
        if not isinstance(control, (widgets.FloatSlider, widgets.FloatLogSlider, widgets.IntSlider)):
            continue
        original = control.value
        ends = ([control.base ** control.min, control.base ** control.max]
                if isinstance(control, widgets.FloatLogSlider) else [control.min, control.max])
        for end in ends:
            control.value = end
            problems = _overlapping_ticks(explorer.view.figure)
            assert not problems, (name, end, problems)
        control.value = original


def test_batch_explorer_at_the_largest_batch_reads_100k():
    from lecture_lib.explorers.roofline import BatchExplorer

    explorer = BatchExplorer()
    explorer.controls["batch"].value = 100_000
    explorer.view.figure.canvas.draw()
    labels = [t.get_text() for t in explorer.view.figure.axes[0].get_xticklabels() if t.get_text()]
    assert "100k" in labels and not any(len(label) > 6 for label in labels), labels


def test_routing_figure_tells_crossings_by_dash_and_marker_not_colour_alone():
    from lecture_lib import moe
    from lecture_lib.explorers import moe as moe_explorers

    routing = moe.random_routing(n_tokens=32, placement=moe.Placement(n_experts=16, experts_per_gpu=2,
                                                                       gpus_per_rack=4), k=2)
    figure = moe_explorers.routing_figure(routing, n_tokens=12)
    lines = [line for line in figure.axes[0].get_lines() if line.get_marker() in ("x", "o")]
    crossing = {line.get_marker(): line.get_linestyle() for line in lines}
    assert set(crossing) == {"x", "o"} and crossing["x"] != crossing["o"]
    assert "dashed" in figure.axes[0].get_title()


# --- typing into a log slider's readout (issue 19 §1) -------------------------------------------
@pytest.mark.parametrize("text, value", [("3000", 3000), ("3,000", 3000), ("3 000", 3000), ("2.5e8", 2.5e8),
                                         ("500M", 5e8), ("2.6T", 2.6e12), ("64k", 64000), (" 12 ", 12),
                                         ("5 × 10¹⁵", 5e15), ("5x10^15", 5e15), ("3 × 10⁻⁹", 3e-9)])
def test_typed_numbers_are_read_as_a_person_writes_them(text, value):
    from lecture_lib.explorers import sliders

    assert sliders.parse_typed(text) == value


@pytest.mark.parametrize("text", ["", "abc", "1e999", "nan", "3,000x", "__import__('os')", "1" * 60, "--1"])
def test_anything_else_typed_is_refused(text):
    from lecture_lib.explorers import sliders

    with pytest.raises(ValueError):
        sliders.parse_typed(text)


def test_a_typed_value_is_kept_exactly_one_past_an_end_goes_to_that_end_and_text_changes_nothing():
    from lecture_lib.explorers import sliders

    control = sliders.log_slider("batch", 1024, 1, 65536)
    control.typed.value = "3,000"
    assert control.value == 3000.0 and 3000.0 in control.stops and control.stops[control.index] == 3000.0
    assert control.typed.value == "" and not control.tooltip          # ready for the next entry
    for bad in ("many", "", "1e"):
        control.typed.value = bad
        assert control.value == 3000.0 and control.typed.value == ""
    control.typed.value = "1e30"              # past the top: the top, and the tooltip says why
    assert control.value == 65536 and "1e30 is beyond this slider's range, 1 to 65,536: set to 65,536" in control.tooltip
    control.typed.value = "0.5"
    assert control.value == 1 and "set to 1" in control.tooltip
    control.typed.value = "3,000"
    assert control.value == 3000.0 and not control.tooltip
    control.value = 2048                      # dragged elsewhere, then the same text typed again: taken again
    control.typed.value = "3,000"
    assert control.value == 3000.0


# --- axis limits that stay put while a slider moves ------------------------------------------------
def test_a_steady_top_holds_while_the_data_fit_and_fill_enough_of_it():
    assert base.steady_ceiling(10.0, 7.0) == 10.0            # still holds, fills 70%
    assert base.steady_ceiling(10.0, 11.0) == 20.0           # data outgrew it: the next round number
    assert base.steady_ceiling(10.0, 3.0) == 5.0             # data under 40% of it: re-fitted
    assert base.steady_ceiling(0.0, 3.0) == 5.0              # nothing yet


def test_steady_decades_keep_the_axis_until_the_data_leave_it_or_it_is_far_too_wide():
    assert base.steady_decades((1.0, 1e4), 12.0, 9000.0) == (1.0, 1e4)      # one spare decade: kept
    assert base.steady_decades((1.0, 1e4), 12.0, 20.0) == (10.0, 100.0)     # two spare: re-fitted
    assert base.steady_decades((10.0, 1e4), 5.0, 900.0) == (1.0, 1e3)       # data left it
    assert base.steady_decades((1.0, 1.0), 5.0, 900.0, margin=1) == (0.1, 1e4)
    # back and forth across a decade boundary: one redraw, not one per move
    limits = base.steady_decades((10.0, 1e4), 9.5, 900.0)
    assert base.steady_decades(limits, 10.5, 900.0) == limits


@pytest.mark.slow
def test_a_line_drawn_in_two_panels_of_an_explorer_looks_the_same_in_both():
    """A walkthrough found Ch2's "your R" dotted in one panel and dashed in the other: a reference
    line (same label, same colour) repeated across panels keeps one dash pattern, so the legends agree."""
    from lecture_lib.explorers import base

    for cls in base.explorer_classes():
        explorer = cls()
        try:
            looks = {}
            for axis in explorer.view.figure.axes:
                for line in axis.get_lines():
                    label = line.get_label()
                    if label.startswith("_") or line.get_linestyle() == "None":
                        continue
                    key = (label, line.get_color())
                    look = line._unscaled_dash_pattern
                    assert looks.setdefault(key, look) == look, (
                        f"{cls.__name__}: {label!r} is drawn {looks[key]} in one panel and {look} in another")
        finally:
            explorer.view.figure.clear()
