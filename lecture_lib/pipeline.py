"""Chapter 3: pipeline parallelism across racks (lecture 00:47:12-01:03:37).

Three things live here, SymPy first:

1. **The parallelism menu** (lecture 00:48:00-00:53:39): which dimension of the model each kind of
   parallelism cuts. "The cutting matches the model architecture."
2. **The stage-boundary requirement** (E3.1, lecture 00:50:51-00:52:09): inside a rack a token fans
   out to ``k_active`` experts in every MoE layer, twice (dispatch and combine); across the rack
   boundary it is sent once per stage, over a link about 8x slower. The rack boundary stays cheaper
   than the work inside the rack when ``(1/8) * k_active * L_stage * 2 >= 1``.
3. **Pipeline schedules**: the bubble fraction ``(P-1)/(m+P-1)`` (GPipe, Huang et al. 2019,
   arXiv:1811.06965), its interleaved form ``(P-1)/(v*m+P-1)`` (Narayanan et al. 2021,
   arXiv:2104.04473) and an event simulator of GPipe, 1F1B (PipeDream-Flush, Narayanan et al. 2021,
   arXiv:2006.09503), interleaved 1F1B and the decode loop
   that wraps around (lecture 00:56:51 and 00:58:59), whose idle time the tests check against the
   formulas.

Times in the simulator are in units of one micro-batch's forward pass through one full stage
(``forward_time=1``) unless you pass seconds.
"""

from __future__ import annotations

import math

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import sympy as sp

from . import validate
from .formula import Formula, simplify, solve
from .symbols import (L_stage, L_stage_min, N_total, P, bubble, bw_out, bw_up, bytes_act, bytes_param,
                      bytes_stage, k_active, mem_bw, n_micro, n_micro_min, link_ratio, r_stage, t_backward,
                      t_forward, t_scale_out, t_scale_up, t_weights, v_chunks)

LECTURE = "https://youtu.be/xmkSf5IS-zw"

# --- 1. The parallelism menu (lecture 00:48:00-00:53:39) -------------------------------------------
PARALLELISM_MENU = (
    {"name": "expert (EP)", "cuts": "the experts of each MoE layer",
     "traffic": "all-to-all dispatch and combine in every MoE layer",
     "fits": "inside one scale-up domain (rack)",
     "lecture": "the standard practice and the best solution for MoE layers (00:34:07, 00:48:00)"},
    {"name": "tensor (TP)", "cuts": "d_model / d_ff inside each matrix",
     "traffic": "all-reduces of the activations in every layer",
     "fits": "inside one scale-up domain",
     "lecture": "'much less relevant' now that experts are small (00:48:00)"},
    {"name": "data (DP)", "cuts": "the batch: each replica holds the whole model",
     "traffic": "gradients once per training step",
     "fits": "across racks (scale-out)",
     "lecture": "a good fit for using multiple racks (00:48:00)"},
    {"name": "pipeline (PP)", "cuts": "the layers: consecutive layers on consecutive racks",
     "traffic": "each token's activation once per stage boundary",
     "fits": "across racks (scale-out)",
     "lecture": "'change rack' every few layers (00:48:31); saves memory capacity, not time (00:55:48)"},
)
"""Each kind of parallelism, the model dimension it cuts and where its traffic can live."""

# --- 2. The stage-boundary requirement (E3.1) ------------------------------------------------------
SCALE_UP_RATIO_LECTURE = 8
"""Scale-up (NVLink) bandwidth / scale-out bandwidth: "typically about eight times" (lecture 00:39:13).

Reality check: NVLink 5 gives 900 GB/s per direction per Blackwell GPU; a 400-800 Gb/s NIC gives
50-100 GB/s, so 9-18x (lecture notes §2.2, NVIDIA GB200 NVL72 specifications, 2025)."""

T_SCALE_UP_STAGE = Formula(t_scale_up, 2 * k_active * L_stage * bytes_act / bw_up,
                           source="lecture 00:50:51-00:51:48 (E3.1): each token goes to k_active experts "
                                  "and back (x2) in each of the stage's L_stage MoE layers")
T_SCALE_OUT_STAGE = Formula(t_scale_out, bytes_act / bw_out,
                            source="lecture 00:50:51 (E3.1): each token's activation crosses the rack "
                                   "boundary once per stage")
STAGE_RATIO = Formula(r_stage, sp.cancel((T_SCALE_UP_STAGE.rhs / T_SCALE_OUT_STAGE.rhs).subs(bw_up, link_ratio * bw_out)),
                      source="lecture 00:50:51-00:52:09 (E3.1): t_scale-up / t_scale-out = "
                             "(1/8) k_active L_stage 2, required >= 1")
MIN_LAYERS_PER_STAGE = Formula(L_stage_min, solve(sp.Eq(STAGE_RATIO.rhs, 1), L_stage)[0],
                               source="lecture 00:52:09: the smallest stage whose in-rack traffic "
                                      "outweighs the rack-boundary traffic")


def bandwidth_ratio(chip) -> float:
    """Scale-up / scale-out bandwidth per chip of a hardware preset (the board rounds it to 8).

    E.g. ``bandwidth_ratio(hardware.get("GB200"))``: NVLink 5 900 GB/s over a 400 Gb/s NIC = 18.
    """
    from . import hardware

    chip = hardware.resolve_chip(chip)
    for name in ("scale_up_bandwidth", "scale_out_bandwidth"):
        if not hasattr(chip, name):
            raise ValueError(f"chip must be a hardware preset with {name}, got {chip!r}")
    return validate.number("scale_up_bandwidth", chip.scale_up_bandwidth) / validate.number(
        "scale_out_bandwidth", chip.scale_out_bandwidth)


@validate.reports_inputs
def stage_ratio(*, k_active, layers_per_stage, scale_up_ratio=SCALE_UP_RATIO_LECTURE):
    """``t_scale_up / t_scale_out`` at one stage boundary (E3.1, lecture 00:50:51-00:52:09).

    ``k_active * layers_per_stage * 2 / scale_up_ratio``: the board's (1/8) k_active L_stage 2. The
    rack boundary is not the bottleneck when this is >= 1. ``scale_up_ratio`` is scale-up / scale-out
    bandwidth (8 on the board). Numbers or NumPy arrays.
    """
    return STAGE_RATIO(k_active=k_active, L_stage=_positive("layers_per_stage", layers_per_stage),
                       link_ratio=_positive("scale_up_ratio", scale_up_ratio))


def min_layers_per_stage(*, k_active, scale_up_ratio=SCALE_UP_RATIO_LECTURE):
    """The smallest stage (in MoE layers) with ``stage_ratio >= 1``: ``scale_up_ratio / (2 k_active)``.

    With the board's 8x and DeepSeek-V3's k_active = 8 it is 0.5: one MoE layer per rack already
    suffices (lecture 00:52:09).
    """
    return MIN_LAYERS_PER_STAGE(k_active=k_active, link_ratio=_positive("scale_up_ratio", scale_up_ratio))


def _positive(name, value):
    return validate.number(name, value)


# --- 3. Bubble fractions ---------------------------------------------------------------------------
# Every stage does n_micro forwards and backwards of its own work (the useful time); the first
# micro-batch needs (P-1) stage-times to reach the last stage on the way up and (P-1) to come back
# down, and nothing can fill those slots before the optimizer's hard stop (lecture 00:58:59).
T_USEFUL = n_micro * (t_forward + t_backward)
T_BUBBLE_GPIPE = (P - 1) * (t_forward + t_backward)
BUBBLE_FRACTION = Formula(bubble, sp.factor(sp.cancel(T_BUBBLE_GPIPE / (T_USEFUL + T_BUBBLE_GPIPE))),
                          source="lecture 00:58:59 (E3.3); GPipe, Huang et al. 2019 (arXiv:1811.06965); "
                                 "1F1B (PipeDream-Flush, Narayanan et al. 2021, arXiv:2006.09503) has the same bubble",
                          domain=P >= 1)
# Interleaving: each device holds v chunks of 1/v of its layers; the fill and drain now pass through
# (P-1) chunk-times of 1/v stage-time each (Narayanan et al. 2021, §2.2.2).
T_BUBBLE_INTERLEAVED = T_BUBBLE_GPIPE / v_chunks
INTERLEAVED_BUBBLE_FRACTION = Formula(
    bubble, sp.factor(sp.cancel(T_BUBBLE_INTERLEAVED / (T_USEFUL + T_BUBBLE_INTERLEAVED))),
    source="interleaved 1F1B, Narayanan et al. 2021 (arXiv:2104.04473) §2.2.2: bubble time / v",
    domain=P >= 1)
DECODE_IDLE_FRACTION = Formula(bubble, sp.Max(0, (P - n_micro) / P),
                               source="lecture 00:56:51 and 01:07:43-01:09:11: the decode loop wraps "
                                      "around; with m < P micro-batches each stage idles (P-m)/P")

MIN_MICROBATCHES = Formula(n_micro_min, sp.factor(solve(sp.Eq(bubble, BUBBLE_FRACTION.rhs), n_micro)[0]),
                           source="BUBBLE_FRACTION solved for m: micro-batches needed for a target bubble "
                                  "(why pipelined training wants large batches, lecture 01:00:10)",
                           domain=sp.And(P >= 1, bubble < 1))
MIN_DECODE_MICROBATCHES = Formula(n_micro_min, solve(sp.Eq((P - n_micro) / P, 0), n_micro)[0],
                                  source="lecture 01:09:11: 'proof by visual', the decode loop needs P "
                                         "micro-batches in flight")

# --- 4. What pipelining buys: capacity, not time (lecture 00:55:48) ------------------------------
WEIGHT_BYTES_PER_STAGE = Formula(bytes_stage, N_total * bytes_param / P,
                                 source="lecture 00:55:48 and 01:02:32: each rack needs 'a quarter of the "
                                        "model' with 4 stages")
T_WEIGHTS_PIPELINED = Formula(t_weights, P * bytes_stage / mem_bw,
                              source="lecture 00:55:48: P racks in turn, each reading its 1/P of the weights "
                                     "at one rack's bandwidth mem_bw; substitute bytes_stage and the P cancels "
                                     "('moving the memory time from one chip to another')")


def bubble_fraction(*, stages, microbatches, chunks=1):
    """Idle fraction of a training pipeline: ``(P-1)/(m+P-1)``, or ``(P-1)/(v*m+P-1)`` interleaved.

    ``stages`` = P, ``microbatches`` = m, ``chunks`` = v model chunks per device (interleaved 1F1B;
    1 for GPipe and 1F1B, which share this bubble). Lecture 00:58:59 (E3.3); Huang et al. 2019;
    Narayanan et al. 2021. Numbers or NumPy arrays of whole numbers >= 1.
    """
    for name, value in (("stages", stages), ("microbatches", microbatches), ("chunks", chunks)):
        _whole_numbers(name, value)
    if np.ndim(chunks) == 0 and chunks == 1:
        return BUBBLE_FRACTION(P=stages, n_micro=microbatches)
    return INTERLEAVED_BUBBLE_FRACTION(P=stages, n_micro=microbatches, v_chunks=chunks)


def decode_idle_fraction(*, stages, microbatches):
    """Steady-state idle fraction of the decode loop: ``max(0, (P-m)/P)`` (lecture 01:09:11).

    Zero once there are at least as many micro-batches in flight as stages.
    """
    _whole_numbers("stages", stages)
    _whole_numbers("microbatches", microbatches)
    return DECODE_IDLE_FRACTION(P=stages, n_micro=microbatches)


def _whole_numbers(name, value):
    if np.ndim(value) == 0:
        return validate.integer(name, value)
    array = validate.number(name, value)
    if not np.all(array == np.round(array)) or np.any(array < 1):
        raise ValueError(f"{name} must be whole numbers >= 1, got {value!r}")
    return array


# --- 5. The schedule simulator ----------------------------------------------------------------------
SCHEDULES = ("gpipe", "1f1b", "interleaved", "inference")
MAX_TASKS = 20_000     # about a second to simulate; the explorers need at most 8 x 16 x 4 x 2
MAX_STAGES = 256       # the sweep below is quadratic in the stages: 2,048 took 7 s


@dataclass(frozen=True)
class Task:
    """One box of the Gantt chart: ``kind`` "F" (forward) or "B" (backward) of one micro-batch on one
    stage (device), from ``start`` to ``end``. ``chunk`` is the model chunk (interleaved), ``token``
    the decode step (inference)."""

    stage: int
    microbatch: int
    kind: str
    start: float
    end: float
    chunk: int = 0
    token: int = 0


@dataclass(frozen=True)
class Timeline:
    """The simulated schedule: every task, and what it implies for idle time and activation memory."""

    schedule: str
    stages: int
    microbatches: int
    tasks: tuple
    chunks: int = 1
    tokens: int = 1
    forward_time: float = 1.0
    backward_time: float = 2.0

    def __post_init__(self):
        validate.choice("schedule", self.schedule, SCHEDULES)
        for name in ("stages", "microbatches", "chunks", "tokens"):
            object.__setattr__(self, name, validate.integer(name, getattr(self, name), maximum=MAX_TASKS))
        for name in ("forward_time", "backward_time"):
            object.__setattr__(self, name, validate.scalar(name, getattr(self, name)))
        tasks = self.tasks
        if (not isinstance(tasks, (tuple, list)) or not tasks
                or not all(isinstance(task, Task) and 0 <= task.stage < self.stages for task in tasks)):
            raise ValueError(f"tasks must be a non-empty tuple of pipeline.Task on stages 0 to {self.stages - 1} "
                             f"(as simulate() builds them), got {validate._describe(tasks)}")
        object.__setattr__(self, "tasks", tuple(tasks))

    @cached_property
    def makespan(self) -> float:
        """Time from the first task's start to the last task's end."""
        return max(task.end for task in self.tasks)

    def busy_time(self, stage: int) -> float:
        """Total time ``stage`` spends computing."""
        stage = validate.integer("stage", stage, minimum=0)
        if stage >= self.stages:
            raise ValueError(f"stage must be < stages={self.stages}, got {stage}")
        return float(sum(task.end - task.start for task in self.tasks if task.stage == stage))

    @cached_property
    def bubble_fraction(self) -> float:
        """Idle device-time / total device-time over the makespan (all stages)."""
        busy = sum(task.end - task.start for task in self.tasks)
        return 1.0 - busy / (self.stages * self.makespan)

    def idle_fraction(self, *, start: float, end: float) -> float:
        """Idle fraction of all stages inside the time window [start, end] (e.g. the steady state)."""
        start = validate.scalar("start", start, allow_zero=True)
        end = validate.scalar("end", end)
        if end <= start:
            raise ValueError(f"end must be > start, got start={start!r}, end={end!r}")
        starts, ends = self.arrays["start"], self.arrays["end"]
        busy = np.clip(np.minimum(ends, end) - np.maximum(starts, start), 0, None).sum()
        return float(1.0 - busy / (self.stages * (end - start)))

    def steady_idle_fraction(self) -> float:
        """Decode loop only: idle fraction once the loop is running, over whole loops from the second
        token to the last (needs ``tokens >= 3``). Equals ``max(0, (P-m)/P)``."""
        if self.schedule != "inference" or self.tokens < 3:
            raise ValueError("steady_idle_fraction needs schedule='inference' and tokens >= 3, got "
                             f"schedule={self.schedule!r}, tokens={self.tokens}")
        loop = max(self.microbatches, self.stages) * self.forward_time
        return self.idle_fraction(start=loop, end=(self.tokens - 1) * loop)

    @cached_property
    def arrays(self) -> dict:
        """The tasks as NumPy arrays (``stage``, ``microbatch``, ``start``, ``end``, ``chunk``,
        ``token`` and boolean ``forward``), for plotting without Python loops."""
        tasks = self.tasks
        return {
            "stage": np.array([task.stage for task in tasks]),
            "microbatch": np.array([task.microbatch for task in tasks]),
            "start": np.array([task.start for task in tasks], dtype=float),
            "end": np.array([task.end for task in tasks], dtype=float),
            "chunk": np.array([task.chunk for task in tasks]),
            "token": np.array([task.token for task in tasks]),
            "forward": np.array([task.kind == "F" for task in tasks]),
        }

    def in_flight(self, stage: int) -> tuple[np.ndarray, np.ndarray]:
        """Micro-batches whose forward activations ``stage`` holds, as a step function of time.

        Returns ``(times, held)``: from ``times[i]`` on, ``held[i]`` micro-batches' activations are
        held (from the start of a forward to the end of its backward). With interleaving a chunk
        counts 1/chunks, so the unit is always one micro-batch's activations for a whole stage.
        Inference holds none: no backward pass waits for them.
        """
        stage = validate.integer("stage", stage, minimum=0)
        if stage >= self.stages:
            raise ValueError(f"stage must be < stages={self.stages}, got {stage}")
        if self.schedule == "inference":
            return np.array([0.0]), np.array([0.0])
        weight = 1.0 / self.chunks
        events = sorted([(task.start, 1, +weight) if task.kind == "F" else (task.end, 0, -weight)
                         for task in self.tasks if task.stage == stage])   # releases sort first
        times = np.array([0.0] + [time for time, _, _ in events])
        held = np.cumsum([0.0] + [change for _, _, change in events])
        return times, np.round(held, 9)

    @cached_property
    def peak_in_flight(self) -> float:
        """Max over stages and time of micro-batches whose activations are held for their backward.

        GPipe holds all m on stage 0; 1F1B at most P (Narayanan et al. 2021, §2.2.1).
        """
        return float(max(self.in_flight(stage)[1].max() for stage in range(self.stages)))

    @property
    def peak_held_text(self) -> str:
        """:attr:`peak_in_flight` for people: "4 micro-batches", or with interleaving, where each chunk holds
        1/v of a stage's layers and so 1/v of a micro-batch's activations there, "5.5 micro-batches' worth"."""
        from . import units

        peak = self.peak_in_flight
        if self.chunks > 1:
            return (f"{peak:.3g} micro-batches' worth (each of the {self.chunks} chunks holds 1/{self.chunks} "
                    f"of a micro-batch's activations)")
        return units.plural(round(peak), "micro-batch", "micro-batches")

    @property
    def bubble_fraction_formula(self) -> float:
        """What the closed form predicts for this schedule (training: (P-1)/(v m+P-1);
        inference: (P-1)/(tokens m+P-1) when m >= P, the fill and drain of the whole run)."""
        if self.schedule == "inference":
            if self.microbatches < self.stages:
                raise ValueError("the closed form assumes microbatches >= stages; "
                                 "see decode_idle_fraction for the steady state")
            return bubble_fraction(stages=self.stages, microbatches=self.tokens * self.microbatches)
        return bubble_fraction(stages=self.stages, microbatches=self.microbatches, chunks=self.chunks)


def simulate(*, schedule: str, stages: int, microbatches: int, chunks: int = 1,
             forward_time: float = 1.0, backward_time: float = 2.0, tokens: int = 1,
             hop_time: float = 0.0) -> Timeline:
    """Simulate one training step (or a decode run) of a pipeline and return its :class:`Timeline`.

    ``schedule``:

    - ``"gpipe"``: every stage runs all m forwards, then (after the hard stop at the top) all m
      backwards, last micro-batch first (lecture 00:58:59; Huang et al. 2019).
    - ``"1f1b"``: stage s runs P-s-1 warm-up forwards, then alternates one forward and one backward,
      then drains (PipeDream-flush; Narayanan et al. 2021). Same bubble, at most P activations held.
    - ``"interleaved"``: each device holds ``chunks`` model chunks (device d: layers of virtual stages
      d, d+P, ...), scheduled as Megatron-LM's interleaved 1F1B; needs microbatches to be a multiple
      of stages when chunks > 1. Bubble (P-1)/(chunks*m+P-1).
    - ``"inference"``: the decode loop (lecture 00:56:51, 01:07:43): micro-batch j goes through
      stages 0..P-1, then its next token starts again at stage 0; ``tokens`` tokens each. Forward
      only (``backward_time`` is not used).

    Every task starts as soon as its stage is free and its input has arrived; an input made on another device
    arrives ``hop_time`` after its task ends (default 0: no hop latency; Chapter 4 prices the hops).
    A stage's forward of a chunk takes ``forward_time / chunks``, its backward ``backward_time / chunks``.
    """
    schedule = validate.choice("schedule", schedule, SCHEDULES)
    stages = validate.integer("stages", stages)
    microbatches = validate.integer("microbatches", microbatches)
    chunks = validate.integer("chunks", chunks)
    tokens = validate.integer("tokens", tokens)
    hop_time = validate.number("hop_time", hop_time, positive=False) if hop_time else 0.0
    forward_time = validate.number("forward_time", forward_time)
    backward_time = validate.number("backward_time", backward_time)
    if not isinstance(forward_time, float) or not isinstance(backward_time, float):
        raise ValueError("forward_time and backward_time must be single numbers")
    if chunks > 1 and schedule != "interleaved":
        raise ValueError(f"chunks must be 1 for schedule={schedule!r} (only 'interleaved' splits a "
                         f"device's layers into chunks), got {chunks}")
    if tokens > 1 and schedule != "inference":
        raise ValueError(f"tokens must be 1 for schedule={schedule!r} (a training step has no decode "
                         f"loop), got {tokens}")
    if schedule == "interleaved" and chunks > 1 and microbatches % stages:
        raise ValueError(f"microbatches must be a multiple of stages={stages} for the interleaved "
                         f"schedule with chunks > 1 (as in Megatron-LM), got {microbatches}")
    n_tasks = stages * microbatches * chunks * (tokens if schedule == "inference" else 2)
    if n_tasks > MAX_TASKS:
        raise ValueError(f"stages x microbatches x chunks x tokens is too large to simulate "
                         f"({n_tasks} tasks > {MAX_TASKS}); use bubble_fraction for the closed form")
    if stages > MAX_STAGES:
        raise ValueError(f"stages is too large to simulate ({stages} > {MAX_STAGES}); use bubble_fraction for "
                         "the closed form")
    # no task ends later than all the work done one after another: keep that sum finite
    if not math.isfinite(n_tasks * max(forward_time, backward_time)):
        raise ValueError(f"forward_time={forward_time:g} and backward_time={backward_time:g} are too large: "
                         f"{n_tasks} tasks of that length would end at infinity; give times in seconds "
                         f"of ordinary size")

    if schedule == "inference":
        orders = [[("F", s, j, t) for t in range(tokens) for j in range(microbatches)] for s in range(stages)]
    elif schedule == "gpipe":
        orders = [[("F", s, j, 0) for j in range(microbatches)] +
                  [("B", s, j, 0) for j in reversed(range(microbatches))] for s in range(stages)]
    elif schedule == "1f1b" or chunks == 1:
        orders = [_one_f_one_b(s, stages, microbatches) for s in range(stages)]
    else:
        orders = [_interleaved(d, stages, microbatches, chunks) for d in range(stages)]
    virtual_stages = stages * chunks
    durations = {"F": forward_time / chunks, "B": backward_time / chunks}

    def needs(key):
        kind, vs, j, t = key
        if kind == "F":
            if vs > 0:
                return ("F", vs - 1, j, t)
            return ("F", virtual_stages - 1, j, t - 1) if t > 0 else None
        return ("F", vs, j, t) if vs == virtual_stages - 1 else ("B", vs + 1, j, t)

    ends: dict = {}
    tasks = []
    position = [0] * stages
    free = [0.0] * stages
    remaining = sum(len(order) for order in orders)
    while remaining:
        progressed = False
        for device, order in enumerate(orders):
            while position[device] < len(order):
                key = order[position[device]]
                need = needs(key)
                if need is not None and need not in ends:
                    break
                arrives = 0.0 if need is None else ends[need] + (hop_time if need[1] % stages != device else 0.0)
                start = max(free[device], arrives)
                end = start + durations[key[0]]
                ends[key] = free[device] = end
                kind, vs, j, t = key
                tasks.append(Task(stage=device, microbatch=j, kind=kind, start=start, end=end,
                                  chunk=vs // stages, token=t))
                position[device] += 1
                remaining -= 1
                progressed = True
        if not progressed:  # pragma: no cover - the orders above never deadlock
            raise RuntimeError(f"schedule {schedule!r} deadlocked; this is a bug in lecture_lib.pipeline")
    tasks.sort(key=lambda task: (task.stage, task.start))
    return Timeline(schedule=schedule, stages=stages, microbatches=microbatches, tasks=tuple(tasks),
                    chunks=chunks, tokens=tokens, forward_time=forward_time, backward_time=backward_time)


def _one_f_one_b(stage: int, stages: int, microbatches: int) -> list:
    """PipeDream-flush order for one stage: warm-up forwards, then one forward / one backward."""
    warmup = min(stages - stage - 1, microbatches)
    order = [("F", stage, j, 0) for j in range(warmup)]
    for k in range(microbatches - warmup):
        order += [("F", stage, warmup + k, 0), ("B", stage, k, 0)]
    order += [("B", stage, j, 0) for j in range(microbatches - warmup, microbatches)]
    return order


def _interleaved(device: int, stages: int, microbatches: int, chunks: int) -> list:
    """Megatron-LM's interleaved 1F1B order for one device (Narayanan et al. 2021, §2.2.2).

    Micro-batches go in groups of ``stages``: chunk 0 of the group, then chunk 1, ...; backwards
    visit the chunks in reverse. Warm-up: 2(P-d-1) + (v-1)P chunk-forwards.
    """
    total = microbatches * chunks
    group = stages * chunks

    def forward(k):
        chunk = (k % group) // stages
        j = (k // group) * stages + k % stages
        return ("F", chunk * stages + device, j, 0)

    def backward(k):
        chunk = chunks - 1 - (k % group) // stages
        j = (k // group) * stages + k % stages
        return ("B", chunk * stages + device, j, 0)

    warmup = total if microbatches == stages else min(2 * (stages - device - 1) + (chunks - 1) * stages, total)
    order = [forward(k) for k in range(warmup)]
    for k in range(total - warmup):
        order += [forward(warmup + k), backward(k)]
    order += [backward(k) for k in range(total - warmup, total)]
    return order


def describe(timeline: Timeline) -> str:
    """One line for people: schedule, bubble simulated vs formula, peak activations."""
    if not isinstance(timeline, Timeline):
        raise ValueError(f"timeline must be a pipeline.Timeline (from simulate), got {validate._describe(timeline)}")
    line = (f"{timeline.schedule}: P={timeline.stages}, m={timeline.microbatches}"
            f"{f', v={timeline.chunks}' if timeline.chunks > 1 else ''}: "
            f"bubble {timeline.bubble_fraction:.1%}")
    if timeline.schedule == "inference":
        line = line.replace("bubble", "idle over the run") + " (fill and drain included)"
        if timeline.tokens >= 3:
            line += f", steady state {timeline.steady_idle_fraction():.1%}"
    else:
        line += (f" (formula {timeline.bubble_fraction_formula:.1%}), "
                 f"peak activations held {timeline.peak_held_text}")
    return line
