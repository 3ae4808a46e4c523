"""Chapter 3's pipeline formulas and schedule simulator: identities, goldens, properties, bad input."""

import itertools
import re

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from lecture_lib import formula, pipeline
from lecture_lib.symbols import L_stage, P, k_active, n_micro, link_ratio, v_chunks

TRAINING = ("gpipe", "1f1b")


def _text(explorer) -> str:
    """An explorer's readout as the page shows it (the HTML's tags, which keep numbers with their units, removed)."""
    return re.sub(r"<[^>]+>", "", explorer.readout.value)


# --- SymPy identities ------------------------------------------------------------------------------


def test_bubble_formula_is_the_textbook_form():
    """Huang et al. 2019 (GPipe, arXiv:1811.06965) §2.3: bubble O((K-1)/(M+K-1))."""
    assert formula.same(pipeline.BUBBLE_FRACTION, (P - 1) / (n_micro + P - 1))


def test_interleaved_formula_reduces_to_plain_bubble_for_one_chunk():
    assert formula.same(pipeline.INTERLEAVED_BUBBLE_FRACTION.rhs.subs(v_chunks, 1), pipeline.BUBBLE_FRACTION.rhs)


def test_interleaved_bubble_time_is_plain_bubble_time_over_v():
    """Narayanan et al. 2021 (arXiv:2104.04473) §2.2.2: bubble/ideal = (1/v)(p-1)/m."""
    f = pipeline.INTERLEAVED_BUBBLE_FRACTION.rhs
    assert formula.same(f / (1 - f), (P - 1) / (v_chunks * n_micro))


def test_bubble_vanishes_with_many_microbatches_and_is_total_with_one_stage_per_microbatch():
    assert sp.limit(pipeline.BUBBLE_FRACTION.rhs, n_micro, sp.oo) == 0
    assert formula.same(pipeline.BUBBLE_FRACTION.rhs.subs(n_micro, 1), (P - 1) / P)


def test_stage_ratio_is_the_board_expression():
    """Lecture 00:50:51-00:52:09: (1/8) * k_active * L_stage * 2."""
    assert formula.same(pipeline.STAGE_RATIO.rhs.subs(link_ratio, 8), sp.Rational(1, 8) * k_active * L_stage * 2)


def test_smallest_stage_makes_the_ratio_exactly_one():
    assert formula.same(pipeline.STAGE_RATIO.rhs.subs(L_stage, pipeline.MIN_LAYERS_PER_STAGE.rhs), 1)


# --- Lecture numbers ---------------------------------------------------------------------------------


def test_one_moe_layer_per_rack_suffices_with_eight_active_experts():
    """Lecture 00:52:09: 'k_active could be 8 by itself', so one layer per rack is enough."""
    assert pipeline.min_layers_per_stage(k_active=8) == pytest.approx(0.5)
    assert pipeline.stage_ratio(k_active=8, layers_per_stage=1) == pytest.approx(2.0)
    # the board's '32 or 16' experts give even more headroom
    assert pipeline.stage_ratio(k_active=32, layers_per_stage=1) == pytest.approx(8.0)


def test_naive_four_rack_inference_idles_three_quarters():
    """Lecture 00:56:51: one request at a time on 4 racks: 'three-quarters of the time ... doing nothing'."""
    assert pipeline.decode_idle_fraction(stages=4, microbatches=1) == pytest.approx(0.75)
    timeline = pipeline.simulate(schedule="inference", stages=4, microbatches=1, tokens=6)
    assert timeline.bubble_fraction == pytest.approx(0.75)


def test_golden_bubble_four_stages_four_microbatches():
    """GPipe with K=4, M=4: 3/7 of the device-time idle (the lecture's 4-rack training picture)."""
    assert pipeline.bubble_fraction(stages=4, microbatches=4) == pytest.approx(3 / 7)


def test_megatron_interleaved_example():
    """Narayanan et al. 2021 §2.2.2: bubble/ideal = (p-1)/(v m); p=8, m=16, v=4 -> 7/64."""
    f = pipeline.bubble_fraction(stages=8, microbatches=16, chunks=4)
    assert f / (1 - f) == pytest.approx(7 / 64)


# --- Simulator against the formulas ---------------------------------------------------------------


@pytest.mark.parametrize("schedule", TRAINING)
@pytest.mark.parametrize("stages,microbatches", list(itertools.product(range(1, 7), range(1, 11))))
def test_simulated_bubble_equals_formula(schedule, stages, microbatches):
    timeline = pipeline.simulate(schedule=schedule, stages=stages, microbatches=microbatches)
    expected = pipeline.bubble_fraction(stages=stages, microbatches=microbatches)
    assert timeline.bubble_fraction == pytest.approx(expected, abs=1e-12)
    assert timeline.bubble_fraction_formula == pytest.approx(expected)


@pytest.mark.parametrize("stages,chunks,groups", list(itertools.product(range(2, 6), (2, 3, 4), (1, 2, 3))))
def test_interleaved_bubble_equals_its_formula_and_beats_1f1b(stages, chunks, groups):
    microbatches = stages * groups
    timeline = pipeline.simulate(schedule="interleaved", stages=stages, microbatches=microbatches, chunks=chunks)
    expected = pipeline.bubble_fraction(stages=stages, microbatches=microbatches, chunks=chunks)
    assert timeline.bubble_fraction == pytest.approx(expected, abs=1e-12)
    assert timeline.bubble_fraction < pipeline.bubble_fraction(stages=stages, microbatches=microbatches)


@settings(max_examples=40, deadline=None)
@given(schedule=st.sampled_from(("gpipe", "1f1b", "interleaved")), stages=st.integers(1, 6),
       groups=st.integers(1, 3), chunks=st.integers(1, 3),
       forward_time=st.floats(0.1, 5), backward_time=st.floats(0.1, 5))
def test_formula_holds_for_any_forward_and_backward_times(schedule, stages, groups, chunks, forward_time,
                                                          backward_time):
    chunks = chunks if schedule == "interleaved" else 1
    microbatches = stages * groups
    timeline = pipeline.simulate(schedule=schedule, stages=stages, microbatches=microbatches, chunks=chunks,
                                 forward_time=forward_time, backward_time=backward_time)
    expected = pipeline.bubble_fraction(stages=stages, microbatches=microbatches, chunks=chunks)
    assert timeline.bubble_fraction == pytest.approx(expected, abs=1e-9)
    # every stage does exactly its share of the work
    for stage in range(stages):
        assert timeline.busy_time(stage) == pytest.approx(microbatches * (forward_time + backward_time))


@pytest.mark.parametrize("stages,microbatches", list(itertools.product(range(1, 7), range(1, 11))))
def test_1f1b_holds_no_more_activations_than_gpipe(stages, microbatches):
    """Narayanan et al. 2021 §2.2.1: 1F1B keeps at most P micro-batches in flight; GPipe keeps all m."""
    gpipe = pipeline.simulate(schedule="gpipe", stages=stages, microbatches=microbatches)
    one_f_one_b = pipeline.simulate(schedule="1f1b", stages=stages, microbatches=microbatches)
    assert one_f_one_b.peak_in_flight <= gpipe.peak_in_flight
    assert gpipe.peak_in_flight == microbatches
    assert one_f_one_b.peak_in_flight == min(stages, microbatches)


def test_makespan_and_dependencies_of_a_small_gpipe():
    timeline = pipeline.simulate(schedule="gpipe", stages=3, microbatches=2, forward_time=1, backward_time=2)
    assert timeline.makespan == pytest.approx((2 + 3 - 1) * 3)
    ends = {(t.kind, t.stage, t.microbatch): t for t in timeline.tasks}
    for task in timeline.tasks:
        if task.kind == "F" and task.stage > 0:
            assert task.start >= ends[("F", task.stage - 1, task.microbatch)].end
        if task.kind == "B" and task.stage < 2:
            assert task.start >= ends[("B", task.stage + 1, task.microbatch)].end
    # the hard stop: on the last stage every forward ends before any backward begins
    last = [t for t in timeline.tasks if t.stage == 2]
    assert max(t.end for t in last if t.kind == "F") <= min(t.start for t in last if t.kind == "B")


def test_no_stage_runs_two_tasks_at_once():
    for schedule, chunks in (("gpipe", 1), ("1f1b", 1), ("interleaved", 2), ("inference", 1)):
        timeline = pipeline.simulate(schedule=schedule, stages=4, microbatches=8, chunks=chunks,
                                     tokens=3 if schedule == "inference" else 1)
        for stage in range(4):
            boxes = sorted((t.start, t.end) for t in timeline.tasks if t.stage == stage)
            assert all(a_end <= b_start + 1e-12 for (_, a_end), (b_start, _) in zip(boxes, boxes[1:]))


@pytest.mark.parametrize("stages,microbatches", list(itertools.product(range(1, 7), range(1, 10))))
def test_decode_loop_steady_state_idle(stages, microbatches):
    """Lecture 01:07:43-01:09:11: with m >= P micro-batches the loop never idles; with m < P it idles (P-m)/P."""
    tokens = 8
    timeline = pipeline.simulate(schedule="inference", stages=stages, microbatches=microbatches, tokens=tokens)
    steady = timeline.idle_fraction(start=stages, end=(tokens - 1) * stages)
    expected = max(0, (stages - microbatches) / stages)
    assert steady == pytest.approx(expected, abs=1e-12)
    assert pipeline.decode_idle_fraction(stages=stages, microbatches=microbatches) == pytest.approx(expected)
    if microbatches >= stages:
        assert timeline.bubble_fraction == pytest.approx(timeline.bubble_fraction_formula)


def test_decode_loop_wraps_around():
    timeline = pipeline.simulate(schedule="inference", stages=3, microbatches=3, tokens=2)
    by_key = {(t.stage, t.microbatch, t.token): t for t in timeline.tasks}
    assert by_key[(0, 0, 1)].start == pytest.approx(by_key[(2, 0, 0)].end)
    assert timeline.peak_in_flight == 0
    assert all(t.kind == "F" for t in timeline.tasks)


def test_in_flight_step_function_starts_and_ends_empty():
    times, held = pipeline.simulate(schedule="1f1b", stages=4, microbatches=6).in_flight(0)
    assert times.shape == held.shape and held[0] == 0 and held[-1] == 0
    assert np.all(np.diff(times) >= 0)


def test_bubble_fraction_broadcasts_over_arrays():
    m = np.arange(1, 65)
    values = pipeline.bubble_fraction(stages=4, microbatches=m)
    assert values.shape == m.shape and np.all(np.diff(values) < 0)


# --- Bad input -------------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs,name", [
    (dict(schedule="gpipe", stages=0, microbatches=4), "stages"),
    (dict(schedule="gpipe", stages=4, microbatches=-1), "microbatches"),
    (dict(schedule="zero-bubble", stages=4, microbatches=4), "schedule"),
    (dict(schedule="1f1b", stages=4, microbatches=4, chunks=2), "chunks"),
    (dict(schedule="interleaved", stages=4, microbatches=6, chunks=2), "microbatches"),
    (dict(schedule="gpipe", stages=4, microbatches=4, tokens=3), "tokens"),
    (dict(schedule="gpipe", stages=4.5, microbatches=4), "stages"),
    (dict(schedule="gpipe", stages=4, microbatches=4, forward_time=-1), "forward_time"),
    (dict(schedule="gpipe", stages=4, microbatches=4, backward_time=float("nan")), "backward_time"),
    (dict(schedule="inference", stages=4, microbatches=4, tokens=0), "tokens"),
    (dict(schedule="gpipe", stages=1000, microbatches=1000), "too large"),
])
def test_simulate_rejects_bad_input_naming_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        pipeline.simulate(**kwargs)


@pytest.mark.parametrize("kwargs,name", [
    (dict(stages=0, microbatches=4), "stages"),
    (dict(stages=4, microbatches=-1), "microbatches"),
    (dict(stages=4, microbatches=4, chunks=0), "chunks"),
    (dict(stages="4", microbatches=4), "stages"),
    (dict(stages=4, microbatches=np.array([1, 2.5])), "microbatches"),
])
def test_bubble_fraction_rejects_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=name):
        pipeline.bubble_fraction(**kwargs)


def test_stage_helpers_reject_bad_input():
    with pytest.raises(ValueError, match="k_active"):
        pipeline.stage_ratio(k_active=0, layers_per_stage=1)
    with pytest.raises(ValueError, match="layers_per_stage"):
        pipeline.stage_ratio(k_active=8, layers_per_stage=-2)
    with pytest.raises(ValueError, match="scale_up_ratio"):
        pipeline.min_layers_per_stage(k_active=8, scale_up_ratio=float("inf"))
    timeline = pipeline.simulate(schedule="gpipe", stages=2, microbatches=2)
    with pytest.raises(ValueError, match="stage"):
        timeline.busy_time(2)


# --- What pipelining buys ---------------------------------------------------------------------------


def test_pipelining_saves_capacity_not_time():
    """Lecture 00:55:48: P stages each read 1/P of the weights in turn; the time is one rack's."""
    from lecture_lib import roofline
    from lecture_lib.symbols import bytes_stage

    total = pipeline.T_WEIGHTS_PIPELINED.rhs.subs(bytes_stage, pipeline.WEIGHT_BYTES_PER_STAGE.rhs)
    assert formula.same(total, roofline.T_WEIGHTS)
    assert P in pipeline.WEIGHT_BYTES_PER_STAGE.rhs.free_symbols


def test_min_microbatches_inverts_the_bubble():
    from lecture_lib.symbols import bubble

    assert formula.same(pipeline.BUBBLE_FRACTION.rhs.subs(n_micro, pipeline.MIN_MICROBATCHES.rhs), bubble)
    assert pipeline.MIN_MICROBATCHES(P=8, bubble=0.05) == pytest.approx(133)
    assert pipeline.MIN_DECODE_MICROBATCHES.rhs == P


def test_bandwidth_ratio_of_presets():
    """GB200: NVLink 5 900 GB/s per direction vs a 400 Gb/s (50 GB/s) NIC = 18 (lecture notes §2.2)."""
    from lecture_lib import hardware

    assert pipeline.bandwidth_ratio(hardware.get("GB200")) == pytest.approx(18)
    assert pipeline.bandwidth_ratio("GB200") == pytest.approx(18)   # a name works as well as the preset
    with pytest.raises(ValueError, match="chip"):
        pipeline.bandwidth_ratio(18.0)


# --- Explorers ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def schedule_explorer():
    from lecture_lib.explorers.pipeline import ScheduleExplorer

    explorer = ScheduleExplorer()
    yield explorer
    explorer.view.figure.clear()


def test_gantt_boxes_are_the_simulated_tasks(schedule_explorer):
    schedule_explorer.controls["schedule"].value = "1F1B (training)"
    timeline = pipeline.simulate(schedule="1f1b", stages=schedule_explorer.values["stages"],
                                 microbatches=schedule_explorer.values["microbatches"])
    forward = [t for t in timeline.tasks if t.kind == "F"]
    verts = schedule_explorer.forward.get_paths()
    assert len(verts) == len(forward)
    from lecture_lib.explorers.pipeline import _time_limit

    width = _time_limit(timeline.makespan)      # the time axis is drawn in fractions of its width
    starts = sorted(path.vertices[:, 0].min() * width for path in verts)
    assert np.allclose(starts, sorted(t.start for t in forward))
    assert "24" in [label.get_text() for label in schedule_explorer.tick_labels]   # makespan 21 -> axis to 24
    assert "42.9%" in schedule_explorer.readout.value     # simulated and formula, P = m = 4
    schedule_explorer.controls["schedule"].value = "GPipe (training)"


def test_bubble_curve_is_the_formula(schedule_explorer):
    x, y = schedule_explorer.curve.get_data()
    assert np.allclose(y, pipeline.bubble_fraction(stages=schedule_explorer.values["stages"], microbatches=x))


def test_interleaved_rounds_microbatches_up_and_says_so(schedule_explorer):
    controls = schedule_explorer.controls
    controls["schedule"].value = "interleaved 1F1B (training)"
    controls["microbatches"].value = 5
    assert "rounded up to 8" in _text(schedule_explorer)
    assert "color:#b00" not in schedule_explorer.readout.value
    controls["microbatches"].value = 4
    controls["schedule"].value = "GPipe (training)"


def test_every_setting_renders_without_error(schedule_explorer):
    controls = schedule_explorer.controls
    for label in controls["schedule"].options:
        controls["schedule"].value = label
        for stages, microbatches, chunks in [(1, 1, 1), (8, 16, 4), (3, 7, 3), (8, 1, 2)]:
            controls["stages"].value, controls["microbatches"].value = stages, microbatches
            controls["chunks"].value = chunks
            assert "color:#b00" not in schedule_explorer.readout.value, (label, stages, microbatches, chunks)
    controls["schedule"].value = "GPipe (training)"
    controls["stages"].value, controls["microbatches"].value, controls["chunks"].value = 4, 4, 2


def test_schedule_explorer_never_relayouts(schedule_explorer):
    """Fixed axes, so every move takes the fast blitting path (timing itself is `make bench`'s job)."""
    for stages, microbatches in [(1, 1), (8, 16), (2, 9)]:   # very different time scales: the axes still do not move
        schedule_explorer.controls["stages"].value, schedule_explorer.controls["microbatches"].value = stages, microbatches
        assert schedule_explorer.update(schedule_explorer.values)[1] is False
    schedule_explorer.controls["stages"].value = 4


def test_stage_boundary_explorer_curve_is_the_formula():
    from lecture_lib.explorers.pipeline import StageBoundaryExplorer

    explorer = StageBoundaryExplorer()
    x, y = explorer.line.get_data()
    assert np.allclose(y, pipeline.STAGE_RATIO(k_active=8, L_stage=x, link_ratio=8))
    assert "up to 58 racks" in _text(explorer)       # k = 8, 8x: one layer per rack
    explorer.view.figure.clear()


def test_gantt_figure_refuses_what_is_not_a_timeline():
    from lecture_lib.explorers.pipeline import gantt_figure

    with pytest.raises(ValueError, match="timeline"):
        gantt_figure({"schedule": "gpipe"})
