"""Chapter 3's practice problems (solutions/03_pipeline_parallelism.ipynb).

Every expected value is computed from the library (the pipeline Formulas, the schedule simulator,
the hardware and model presets) with the inputs the problem statement names.
"""

from __future__ import annotations

import math

import sympy as sp

from lecture_lib import hardware, models, pipeline, roofline
from lecture_lib import symbols as _symbols

from ..registry import Mistake, Problem, register

# 3.2: a GPipe step with real times
STEP = dict(stages=4, microbatches=8, forward_time=5e-3, backward_time=10e-3)


def _gpipe_step(**changes) -> float:
    return pipeline.simulate(schedule="gpipe", **{**STEP, **changes}).makespan


def _gpipe_step_with_bubble(fill: float, drain: float) -> float:
    """3.2's slips: m (t_F + t_B) of work plus a fill of ``fill`` forward and a drain of ``drain``
    backward stage-times (the right step has P - 1 of each)."""
    return (STEP["microbatches"] * (STEP["forward_time"] + STEP["backward_time"])
            + fill * STEP["forward_time"] + drain * STEP["backward_time"])


# 3.4: the chart to read (drawn by problem_data.mystery_gantt, so the exercise never names its schedule)
_MYSTERY = dict(schedule="1f1b", stages=4, microbatches=6)
SCHEDULE_OPTIONS = ("gpipe", "1f1b", "interleaved", "inference")


def _mystery_schedule() -> str:
    return pipeline.simulate(**_MYSTERY).schedule


# 3.5: which quantity per rack does pipelining reduce? The one whose formula still depends on P.
SAVINGS = ("compute time", "memory time", "memory capacity")


def _what_pipelining_saves() -> str:
    P, N_active = _symbols.P, _symbols.N_active
    per_token = {
        "compute time": P * (roofline.T_COMPUTE.rhs.subs(N_active, N_active / P)),   # P stages, 1/P each
        "memory time": pipeline.T_WEIGHTS_PIPELINED.subs(bytes_stage=pipeline.WEIGHT_BYTES_PER_STAGE.rhs),
        "memory capacity": pipeline.WEIGHT_BYTES_PER_STAGE.rhs,
    }
    falling = [name for name, expr in per_token.items() if P in sp.simplify(expr).free_symbols]
    if len(falling) != 1:
        raise RuntimeError(f"problem 3.5 needs exactly one quantity that depends on P, got {falling}")
    return falling[0]


# 3.6: activation memory, from the simulator
MEMORY = dict(stages=4, microbatches=12)


def _activation_ratio() -> float:
    gpipe = pipeline.simulate(schedule="gpipe", **MEMORY).peak_in_flight
    one_f_one_b = pipeline.simulate(schedule="1f1b", **MEMORY).peak_in_flight
    return gpipe / one_f_one_b


def _gpipe_peak() -> float:
    return float(pipeline.simulate(schedule="gpipe", **MEMORY).peak_in_flight)


# 3.7: micro-batches for a small bubble
TARGET = dict(P=8, bubble=0.05)


def _microbatches_needed(*, naive: bool = False) -> float:
    if naive:   # (P-1)/m <= target: forgets that the bubble is part of the total time
        return float(math.ceil((TARGET["P"] - 1) / TARGET["bubble"] - 1e-9))
    return float(math.ceil(pipeline.MIN_MICROBATCHES(**TARGET) - 1e-9))


# 3.8: interleaving
INTERLEAVED = dict(stages=8, microbatches=16, chunks=4)


def _interleaved_bubble() -> float:
    return pipeline.bubble_fraction(**INTERLEAVED)


def _plain_bubble() -> float:
    return pipeline.bubble_fraction(stages=INTERLEAVED["stages"], microbatches=INTERLEAVED["microbatches"])


def _interleaved_idle_over_useful() -> float:
    """Bubble time over useful time, (P - 1) / (v m): the fraction without the bubble in its denominator."""
    fraction = _interleaved_bubble()
    return fraction / (1 - fraction)


# 3.9 and 3.10: the stage boundary with real hardware
def _deepseek():
    return models.get("deepseek-v3")


def _smallest_stage(*, scale_up_ratio: float | None = None, round_trip: bool = True) -> float:
    ratio = pipeline.bandwidth_ratio(hardware.get("GB200")) if scale_up_ratio is None else scale_up_ratio
    layers = pipeline.min_layers_per_stage(k_active=_deepseek().experts_per_token, scale_up_ratio=ratio)
    return layers if round_trip else 2 * layers


def _longest_pipeline(*, whole_layers: bool = True, scale_up_ratio: float | None = None,
                      dense_too: bool = False) -> float:
    deepseek = _deepseek()
    moe_layers = deepseek.n_layers - (0 if dense_too else deepseek.n_dense_layers)
    smallest = _smallest_stage(scale_up_ratio=scale_up_ratio)
    per_stage = math.ceil(smallest) if whole_layers else smallest
    return float(math.floor(moe_layers / per_stage))


register("3.1", Problem(
    "A half-empty decode loop", "number",
    lambda: pipeline.decode_idle_fraction(stages=6, microbatches=2), rtol=0.02, unit="fraction (0 to 1)",
    mistakes=(Mistake(lambda: 1 - pipeline.decode_idle_fraction(stages=6, microbatches=2),
                      "That is the fraction of the time each rack is busy. The question asks for the idle "
                      "fraction."),
              Mistake(lambda: pipeline.bubble_fraction(stages=6, microbatches=2),
                      "That is the training bubble (P − 1)/(m + P − 1), with its fill and drain. A decode loop "
                      "keeps running: count, per trip around the loop, the stage-times a rack has no work."),
              Mistake(lambda: 100 * pipeline.decode_idle_fraction(stages=6, microbatches=2),
                      "That looks like a percentage. Give the fraction, a number between 0 and 1."))))
register("3.2", Problem(
    "How long is a GPipe training step?", "number", _gpipe_step, rtol=0.02, unit="seconds",
    mistakes=(Mistake(lambda: STEP["microbatches"] * (STEP["forward_time"] + STEP["backward_time"]),
                      "That is the useful work of one rack, as if there were no bubble. The first micro-batch "
                      "needs time to reach the last rack, and the last backward to come back down."),
              Mistake(lambda: _gpipe_step(backward_time=STEP["forward_time"]),
                      "That treats the backward pass as fast as the forward one; it takes twice as long."),
              Mistake(lambda: _gpipe_step(stages=STEP["stages"] + 1),
                      "One stage-time too many at each end: the first micro-batch reaches the last of P racks "
                      "after P − 1 forward passes, not P."),
              Mistake(lambda: _gpipe_step_with_bubble(fill=STEP["stages"] - 1, drain=0),
                      "You counted the fill but not the drain: the last backward also has to come back down "
                      "the P − 1 racks above rack 0, at the backward pass's pace."),
              Mistake(lambda: _gpipe_step_with_bubble(fill=0, drain=STEP["stages"] - 1),
                      "You counted the drain but not the fill: rack 0's backward passes cannot start until the "
                      "first micro-batch has gone up to the last rack."))))
register("3.3", Problem(
    "Derive the bubble fraction", "expression", lambda: pipeline.BUBBLE_FRACTION.rhs,
    letters={"m": "n_micro"},   # the statement's m micro-batches (the course's m is Chapter 8's tokens per expert)
    wrong_hint="Idle time per stage divided by the stage's total time (idle + useful). Use the symbols "
               "P and n_micro; the forward and backward times should cancel."))
register("3.4", Problem(
    "Read the Gantt chart", "choice", _mystery_schedule, options=SCHEDULE_OPTIONS,
    alternates={"gpipe": ("g pipe", "gpipe schedule"), "1f1b": ("one forward one backward", "1f 1b",
                                                                "pipedream flush", "pipedream-flush",
                                                                "1f1b schedule", "non-interleaved 1f1b",
                                                                "one f one b"),
                "interleaved": ("interleaved 1f1b", "interleaving"),
                "inference": ("decode", "decode loop")},
    wrong_hint="Look at the order of blue and red boxes on rack 0, and at whether any red box starts before "
               "the last blue one."))
register("3.5", Problem(
    "What does pipelining save?", "choice", _what_pipelining_saves, options=SAVINGS,
    alternates={"memory capacity": ("capacity", "hbm capacity", "memory", "hbm", "memory per rack",
                                    "memory footprint", "weight memory", "weights per rack", "hbm per rack",
                                    "storage"),
                "memory time": ("memory bandwidth", "bandwidth", "weight fetch time"),
                "compute time": ("compute", "flops")},
    wrong_hint="A token still visits every stage in turn. Which per-rack quantity really shrinks as P grows?"))
register("3.6", Problem(
    "Activation memory: GPipe against 1F1B", "number", _activation_ratio, rtol=0.02, unit="times",
    mistakes=(Mistake(lambda: 1.0, "The two schedules have the same bubble and the same step time, but not "
                                   "the same memory: run the simulator and look at peak_in_flight."),
              Mistake(lambda: 1 / _activation_ratio(), "That is 1F1B over GPipe, upside down."),
              Mistake(_gpipe_peak, "That is GPipe's peak alone (or a comparison of the last stage, where 1F1B "
                                   "holds a single micro-batch). Divide GPipe's peak by 1F1B's peak, each taken "
                                   "over all stages."))))
register("3.7", Problem(
    "Micro-batches for a 5% bubble", "number", _microbatches_needed, rtol=0.004, unit="micro-batches",
    mistakes=(Mistake(lambda: _microbatches_needed(naive=True),
                      "That solves (P-1)/m <= 5%. The bubble fraction's denominator is m + P - 1, "
                      "the whole step including the bubble.", rtol=0.004),)))
register("3.8", Problem(
    "The interleaved bubble", "number", _interleaved_bubble, rtol=0.02, unit="fraction (0 to 1)",
    mistakes=(Mistake(_plain_bubble, "That is the bubble without interleaving (v = 1)."),
              Mistake(lambda: _plain_bubble() / INTERLEAVED["chunks"],
                      "Interleaving divides the bubble *time* by v, not the bubble fraction: the useful time "
                      "stays the same, so recompute idle / (useful + idle)."),
              Mistake(_interleaved_idle_over_useful,
                      "Close: that is bubble time over useful time. The fraction of the time divides by the "
                      "whole step, useful plus idle."))))
register("3.9", Problem(
    "The smallest stage on a real GB200 NVL72", "number", _smallest_stage, rtol=0.02, unit="MoE layers",
    mistakes=(Mistake(lambda: _smallest_stage(scale_up_ratio=pipeline.SCALE_UP_RATIO_LECTURE),
                      "That uses the board's 8x. Take the scale-up and scale-out bandwidths from the GB200 "
                      "preset."),
              Mistake(lambda: _smallest_stage(round_trip=False),
                      "Two ways to land here: each token goes to its experts and comes back (dispatch and "
                      "combine, a factor of 2 in the in-rack traffic), or NVIDIA's 1.8 TB/s NVLink figure, "
                      "which counts both directions (the presets store one direction)."),
              Mistake(lambda: float(math.ceil(_smallest_stage())),
                      "That is rounded up to whole layers (problem 3.10 does that). Here give the exact value."),
              Mistake(lambda: _smallest_stage(scale_up_ratio=pipeline.bandwidth_ratio(
                          hardware.get_system("GB300 NVL72").chip)),
                      "That uses the GB300's faster NIC. This problem takes the GB200's bandwidths."))))
register("3.10", Problem(
    "How many racks can DeepSeek-V3's pipeline use?", "number", _longest_pipeline, rtol=0.01, unit="racks",
    mistakes=(Mistake(lambda: _longest_pipeline(whole_layers=False),
                      "A stage holds whole layers: round the smallest stage up to a whole number first."),
              Mistake(lambda: _longest_pipeline(scale_up_ratio=pipeline.SCALE_UP_RATIO_LECTURE),
                      "That is the board's 8x, where one layer per rack suffices. Use the GB200's real "
                      "bandwidth ratio."),
              Mistake(lambda: _longest_pipeline(dense_too=True),
                      "That counts all the layers. Pipeline only the MoE ones: n_layers - n_dense_layers."),
              Mistake(lambda: float(math.ceil(_smallest_stage())),
                      "That is the layers per stage. The question asks how many stages (racks)."))))


# --- 'Why' problems (issue 13): conceptual choices, each with a nudge for every tempting wrong letter.
# The expected letter is checked against the library where the reason is a computation.

WHY_OPTIONS = ('a', 'b', 'c', 'd')


def _stage_boundary() -> str:
    """3.11: with DeepSeek's 8 routed experts, even one layer per stage keeps scale-up the bottleneck."""
    if not pipeline.stage_ratio(k_active=8, layers_per_stage=1) >= 1:
        raise RuntimeError("problem 3.11 assumes one layer per stage is enough")
    return "b"


def _hard_stop() -> str:
    """3.12: the GPipe bubble is positive and does not depend on the forward or backward times."""
    fraction = pipeline.BUBBLE_FRACTION.rhs
    if _symbols.t_forward in fraction.free_symbols or not pipeline.bubble_fraction(stages=4, microbatches=4) > 0:
        raise RuntimeError("problem 3.12 assumes a positive bubble independent of the pass times")
    return "c"


def _latency_neutral() -> str:
    """3.13: the pipelined weight fetch, stage after stage, does not depend on P."""
    total = pipeline.T_WEIGHTS_PIPELINED.rhs.subs(_symbols.bytes_stage, pipeline.WEIGHT_BYTES_PER_STAGE.rhs)
    if _symbols.P in sp.simplify(total).free_symbols:
        raise RuntimeError("problem 3.13 assumes the P cancels")
    return "b"


register('3.11', Problem(
    'Why may a pipeline stage boundary cross racks?', "choice", _stage_boundary, options=WHY_OPTIONS,
    nudges={
            'a': 'No compression is assumed; count the transfers instead.',
            'c': "They are about 8× slower (the lecture's rule of thumb); the argument works despite that.",
            'd': 'Each stage hands its activations to the next: one transfer per token per boundary.'}))

register('3.12', Problem(
    "Why can't the training bubble be overlapped with the next batch?", "choice", _hard_stop, options=WHY_OPTIONS,
    nudges={
            'a': 'The forward and backward times cancel out of the bubble fraction (P − 1)/(m + P − 1).',
            'b': 'Memory limits how many micro-batches you keep, not whether batches may overlap.',
            'd': 'GPipe has a hard stop; its bubble (P − 1)/(m + P − 1) is what that stop costs.'}))

register('3.13', Problem(
    'Why is pipelining neutral for decode latency?', "choice", _latency_neutral, options=WHY_OPTIONS,
    nudges={
            'a': 'Only GPUs that work at the same time add bandwidth; a token visits the stages one after another.',
            'c': 'Nothing gets faster: the same bytes are read, only on different racks.',
            'd': "Every token passes through every stage's layers."}))
