"""Chapter 4: why "pipelining is not wise" (lecture 01:03:37-01:18:59).

Pipeline parallelism buys memory **capacity**: P racks each hold 1/P of the layers. This module
writes the lecture's capacity and latency algebra once, in SymPy (lecture notes §4.1):

- (E4.1) ``C_mem = N_total bytes_param + B len_ctx bytes_tok``: weights plus every sequence's KV;
- (E4.2) per GPU, with E-way expert parallelism inside a rack and P stages: ``C_mem / (E P)``;
- (E4.3) decode keeps every stage busy only with ``n_micro = P`` micro-batches in flight, so the
  global batch is ``B = P b``;
- (E4.4) substitute, and **the P's cancel** in the KV term: weights per GPU fall as 1/P, KV per GPU
  stays ``b len_ctx bytes_tok / E`` whatever P is;
- (E4.6) every stage boundary is a network hop, so a token takes ``t_step + P t_hop``;
- (E4.5) only GPUs reading at the same time add bandwidth: the weight-fetch floor of a token is
  ``N_total bytes_param / (E bw_GPU)`` with or without pipelining, so "pipelining solves
  capacity, scale-up solves bandwidth".

Units are SI (bytes, seconds, bytes/s). ``E`` counts GPUs of one stage, ``b`` sequences.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from . import hardware, models, validate
from .formula import Formula, simplify, solve
from .roofline import T_WEIGHTS
from .symbols import (B, C_mem, E, N_total, P, b, bw_gpu, bytes_param, bytes_tok, c_kv, c_mem, c_weights,
                      hbm_capacity, len_ctx, mem_bw, n_micro, n_up, t_hop, t_hops, t_next_token, t_stage, t_step,
                      t_weights)

# --- The lecture's numbers (lecture notes §4.2) -----------------------------------------------------
LECTURE_EXPERT_PARALLEL = 64      # "E, e.g. 64 GPUs" of a 72-GPU rack (01:05:34; Chapter 2: 256 experts / 64)
LECTURE_STAGES = 4                # "Is 4 a realistic number ...? Yes" (01:05:34)
LECTURE_MICRO_BATCH = 300 * 8     # b ≈ 300 × sparsity, the "20-millisecond train" (01:08:08; E1.5)
LECTURE_STEP_TIME = 20e-3         # "if it goes from 20 ..." (01:15:40)
LECTURE_TOKEN_TIME = 30e-3        # "... to 30" ms per token (01:15:40)
LECTURE_CONTEXT = 100_000         # the worked example's context (lecture notes §4.2 [I]; 100K is typical)
SCALE_UP_SIZES = {"Hopper (HGX, 8)": 8, "Blackwell (NVL72)": 72, "Rubin Ultra (NVL576)": 576}
"""Scale-up domain sizes the lecture names (00:41:16, 01:18:12): 8 → 72 → "500 and something".
NVL576 counts GPU dies (NVIDIA GTC 2025 Rubin Ultra announcement); Chapter 2 discusses the count."""

# --- Capacity (E4.1 - E4.4) --------------------------------------------------------------------------
MEMORY_TOTAL = Formula(C_mem, N_total * bytes_param + B * len_ctx * bytes_tok,
                       source="lecture 01:04:45 (E4.1): all weights plus every sequence's KV cache")
MEMORY_PER_GPU = Formula(c_mem, MEMORY_TOTAL.rhs / (E * P),
                         source="lecture 01:05:34-01:06:08 (E4.2): spread over E GPUs per rack and P racks",
                         note="weights split perfectly; the KV caches are split the same way "
                              "('I'll hand-wave exactly how')")
GLOBAL_BATCH = Formula(B, n_micro * b, source="lecture 01:08:08 (E4.3): n_micro micro-batches of b sequences")
DECODE_MICROBATCHES = Formula(n_micro, P,
                              source="lecture 01:09:11 (E4.3): 'proof by visual', the decode loop needs one "
                                     "micro-batch per stage to keep every stage busy")
MEMORY_PER_GPU_PIPELINED = Formula(
    c_mem, sp.expand(MEMORY_PER_GPU.rhs.subs(B, GLOBAL_BATCH.rhs).subs(n_micro, DECODE_MICROBATCHES.rhs)),
    source="lecture 01:10:27 (E4.4): substitute B = P b, and 'the P's cancel'")
WEIGHTS_PER_GPU = Formula(c_weights, MEMORY_PER_GPU_PIPELINED.rhs.subs(len_ctx, 0),
                          source="lecture 01:10:27 (E4.4): the weight term, falling as 1/P")
KV_PER_GPU = Formula(c_kv, simplify(MEMORY_PER_GPU_PIPELINED.rhs - WEIGHTS_PER_GPU.rhs),
                     source="lecture 01:11:49 (E4.4): the KV term, 'those exactly cancel'")
KV_PER_GPU_FIXED_BATCH = Formula(c_kv, sp.expand(MEMORY_PER_GPU.rhs.subs(B, b)) - WEIGHTS_PER_GPU.rhs,
                                 source="course contrast: keep one micro-batch (B = b) and the KV would "
                                        "shrink as 1/P, but P - 1 of the P stages would sit idle")
MAX_MICRO_BATCH = Formula(b, solve(sp.Eq(MEMORY_PER_GPU_PIPELINED.rhs, hbm_capacity), b)[0],
                          source="course derivation from E4.4: the largest micro-batch that fits in HBM",
                          note="negative when the weights alone overflow HBM; max_micro_batch() reports 0 there")
MAX_MICRO_BATCH_FIXED_BATCH = Formula(
    b, solve(sp.Eq(WEIGHTS_PER_GPU.rhs + KV_PER_GPU_FIXED_BATCH.rhs, hbm_capacity), b)[0],
    source="course derivation, the contrast above: the largest batch that fits when B = b (one micro-batch, its KV "
           "split over the P stages)",
    note="P times MAX_MICRO_BATCH: the same HBM left over by the weights, each GPU holding 1/P of the batch's KV")

# The identity the chapter is about, asserted here once so the module cannot drift from it.
assert sp.diff(KV_PER_GPU.rhs, P) == 0, "KV per GPU must not depend on P"
assert simplify(WEIGHTS_PER_GPU.rhs * P - WEIGHTS_PER_GPU.rhs.subs(P, 1)) == 0, "weights per GPU ∝ 1/P"
assert simplify(MAX_MICRO_BATCH_FIXED_BATCH.rhs - P * MAX_MICRO_BATCH.rhs) == 0, "B = b fits P times the micro-batch"

# --- Latency (E4.5, E4.6) -------------------------------------------------------------------------
# Training pays hops too, but fewer (issue 49 §5): in a GPipe step the hops lie on the critical path only in the fill
# (P - 1 boundaries before the last stage starts) and the drain (P - 1 on the way back); between them each send
# overlaps other micro-batches' work. Checked on the Chapter 3 simulator (pipeline.simulate(hop_time=...)).
TRAIN_HOP_TIME = Formula(t_hops, 2 * (P - 1) * t_hop,
                         source="course derivation: a GPipe step crosses P - 1 boundaries in its fill and P - 1 in its "
                                "drain; the simulator with hop_time agrees for every P, m and hop (1F1B pays more)",
                         domain=P >= 1)
TOKEN_TIME = Formula(t_next_token, t_step + P * t_hop,
                     source="lecture 01:15:02-01:16:09 (E4.6): decode is sequential, so hop latencies add",
                     note="the board's approximation: a token crosses P stage boundaries per loop "
                          "(P - 1 forward and one back to stage 0); with P = 1 there is no hop at all")
SCALE_UP_BANDWIDTH = Formula(mem_bw, n_up * bw_gpu,
                             source="lecture 01:17:07 (E4.5): only GPUs reading at the same time add bandwidth")
WEIGHT_FETCH_TIME = Formula(t_weights, T_WEIGHTS.rhs.subs(mem_bw, SCALE_UP_BANDWIDTH.rhs),
                            source="lecture 01:17:07 (E4.5): t_mem = N_total / mem_bw with the scale-up "
                                   "domain's bandwidth")
STAGE_WEIGHT_TIME = Formula(t_stage, WEIGHT_FETCH_TIME.rhs.subs({N_total: N_total / P, n_up: E}),
                            source="lecture 01:17:07 (E4.5): one stage's E GPUs read its 1/P of the weights")
PIPELINED_WEIGHT_FETCH = Formula(t_weights, simplify(P * STAGE_WEIGHT_TIME.rhs),
                                 source="lecture 01:17:07-01:18:27 (E4.5): the P stages run one after another "
                                        "for a token, so their fetch times add and P cancels")

assert sp.diff(PIPELINED_WEIGHT_FETCH.rhs, P) == 0, "pipelining must not change the weight-fetch floor"


# --- Numbers -------------------------------------------------------------------------------------------
def _broadcast(a, b):
    """Two results as floats, or as NumPy arrays of one shape when either is an array."""
    if np.ndim(a) == 0 and np.ndim(b) == 0:
        return float(a), float(b)
    return tuple(np.array(x, dtype=float) for x in np.broadcast_arrays(a, b))


@validate.reports_inputs
def memory_per_gpu(*, n_total, bytes_param, micro_batch, len_ctx, bytes_tok, expert_parallel, stages) -> dict:
    """Bytes per GPU of a pipelined decode deployment (lecture E4.4), as numbers or NumPy arrays.

    ``weights = N_total bytes_param / (E P)`` and ``kv = b len_ctx bytes_tok / E``, where the
    global batch is ``B = P b`` because decode keeps ``n_micro = P`` micro-batches in flight.
    ``expert_parallel`` is E (GPUs per stage), ``stages`` is P, ``micro_batch`` is b (sequences).
    Returns ``{"weights", "kv", "total"}`` in bytes. Arrays broadcast together.
    """
    values = dict(n_total=n_total, bytes_param=bytes_param, micro_batch=micro_batch, len_ctx=len_ctx,
                  bytes_tok=bytes_tok, expert_parallel=expert_parallel, stages=stages)
    n_total, bytes_param, micro_batch, len_ctx, bytes_tok, expert_parallel, stages = (
        validate.number(name, value) for name, value in values.items())
    weights = WEIGHTS_PER_GPU(N_total=n_total, bytes_param=bytes_param, n_ep=expert_parallel, P=stages,
                              called_as={"N_total": "n_total", "n_ep": "expert_parallel", "P": "stages"})
    kv = KV_PER_GPU(b=micro_batch, len_ctx=len_ctx, bytes_tok=bytes_tok, n_ep=expert_parallel,
                    called_as={"b": "micro_batch", "n_ep": "expert_parallel"})
    weights, kv = _broadcast(weights, kv)
    return {"weights": weights, "kv": kv, "total": weights + kv}


def max_micro_batch(*, hbm_capacity, n_total, bytes_param, len_ctx, bytes_tok, expert_parallel, stages,
                    pipelined: bool = True) -> float:
    """The largest micro-batch b whose weights + KV fit in one GPU's HBM (solved from E4.4).

    ``b_max = (E C_HBM - N_total bytes_param / P) / (len_ctx bytes_tok)`` (:data:`MAX_MICRO_BATCH`): decode keeps
    P micro-batches in flight, so each GPU holds a whole micro-batch's KV. With ``pipelined=False`` the batch is one
    micro-batch (B = b, P − 1 stages idle) whose KV is split over the P stages, and b can be P times larger
    (:data:`MAX_MICRO_BATCH_FIXED_BATCH`). Returns 0.0 when the weights alone do not fit. ``hbm_capacity`` is
    bytes per GPU.
    """
    pipelined = validate.boolean("pipelined", pipelined)
    values = dict(hbm_capacity=hbm_capacity, n_total=n_total, bytes_param=bytes_param, len_ctx=len_ctx,
                  bytes_tok=bytes_tok, expert_parallel=expert_parallel, stages=stages)
    hbm_capacity, n_total, bytes_param, len_ctx, bytes_tok, expert_parallel, stages = (
        validate.number(name, value) for name, value in values.items())
    fit = (MAX_MICRO_BATCH if pipelined else MAX_MICRO_BATCH_FIXED_BATCH)(
        hbm_capacity=hbm_capacity, N_total=n_total, bytes_param=bytes_param, len_ctx=len_ctx, bytes_tok=bytes_tok,
        n_ep=expert_parallel, P=stages, called_as={"N_total": "n_total", "n_ep": "expert_parallel", "P": "stages"})
    fit = np.maximum(fit, 0.0)
    return float(fit) if np.ndim(fit) == 0 else fit


@validate.reports_inputs
def token_time(*, step_time, stages, hop_time):
    """Seconds between two tokens of one sequence with P pipeline stages (lecture E4.6).

    ``t_token ≈ t_step + P t_hop``: the step's own work is the same with or without pipelining
    (each stage does 1/P of it), and every stage boundary adds a scale-out hop of "a few ms".
    """
    step_time = validate.number("step_time", step_time)
    stages = validate.number("stages", stages)
    hop_time = validate.number("hop_time", hop_time)
    return TOKEN_TIME(t_step=step_time, P=stages, t_hop=hop_time,
                      called_as={"t_step": "step_time", "P": "stages", "t_hop": "hop_time"})


@validate.reports_inputs
def weight_fetch_time(*, n_total, bytes_param, gpus_reading, hbm_bandwidth):
    """The latency floor of a token: all weights read once by the GPUs working at that moment (E4.5).

    ``t = N_total bytes_param / (n_up bw_GPU)``. With pipelining, pass the GPUs of **one** stage:
    the stages take turns, so P racks read no faster than one (:data:`PIPELINED_WEIGHT_FETCH`).
    ``hbm_bandwidth`` is bytes/s per GPU.
    """
    n_total, bytes_param, gpus_reading, hbm_bandwidth = (
        validate.number(name, value) for name, value in dict(n_total=n_total, bytes_param=bytes_param,
                                                             gpus_reading=gpus_reading,
                                                             hbm_bandwidth=hbm_bandwidth).items())
    return WEIGHT_FETCH_TIME(N_total=n_total, bytes_param=bytes_param, n_up=gpus_reading, bw_gpu=hbm_bandwidth,
                             called_as={"N_total": "n_total", "n_up": "gpus_reading", "bw_gpu": "hbm_bandwidth"})


def deployment(*, model: str = "deepseek-v3", weights: str = "fp8", kv: str = "fp8",
               expert_parallel: int = LECTURE_EXPERT_PARALLEL, stages=(1, 2, 4), len_ctx: float = LECTURE_CONTEXT,
               micro_batch: float = LECTURE_MICRO_BATCH, chip: str = "GB200") -> list[dict]:
    """The chapter's worked example, one row per pipeline degree (lecture notes §4.2 [I]).

    Default: DeepSeek-V3 with FP8 weights and an FP8 MLA cache, E = 64 GPUs per rack, P = 1, 2, 4,
    100K context, the lecture's micro-batch b = 300 × 8 = 2,400, on GB200 GPUs (186 GB of HBM).
    Each row: ``stages, gpus, global_batch, weights, kv, total, hbm, fits, weights_share``
    (bytes per GPU; ``weights_share`` = weights / total).
    """
    spec = models.resolve(model)
    gpu = hardware.resolve_chip(chip)
    weight_bytes = validate.choice("weights", weights, list(hardware.BYTES_PER_VALUE))
    validate.choice("kv", kv, list(hardware.BYTES_PER_VALUE))
    expert_parallel = validate.integer("expert_parallel", expert_parallel)
    len_ctx = validate.scalar("len_ctx", len_ctx, maximum=1e9)
    micro_batch = validate.scalar("micro_batch", micro_batch, maximum=1e9)
    if not isinstance(stages, (list, tuple, range)) or not stages:
        raise ValueError(f"stages must be a non-empty list of pipeline degrees, got {validate._describe(stages)}")
    rows = []
    for p in stages:
        p = validate.integer("stages", p)
        per_gpu = memory_per_gpu(n_total=spec.params_total, bytes_param=hardware.BYTES_PER_VALUE[weight_bytes],
                                 micro_batch=micro_batch, len_ctx=len_ctx,
                                 bytes_tok=spec.kv_bytes_per_token(kv, context_len=max(1, int(len_ctx))),
                                 expert_parallel=expert_parallel, stages=p)
        rows.append({"stages": p, "gpus": expert_parallel * p, "global_batch": p * micro_batch,
                     "weights": per_gpu["weights"], "kv": per_gpu["kv"], "total": per_gpu["total"],
                     "hbm": gpu.hbm_capacity, "fits": per_gpu["total"] <= gpu.hbm_capacity,
                     "weights_share": per_gpu["weights"] / per_gpu["total"]})
    return rows


def decode_utilisation(*, stages: int, microbatches: int, tokens: int = 6) -> float:
    """Share of the steady-state time the stages are busy in the decode loop, measured on the simulator.

    Runs :func:`lecture_lib.pipeline.simulate` with the ``"inference"`` schedule (the loop wraps from
    the last stage back to the first) and measures every stage over whole loops of micro-batch 0,
    from its second token to its last, leaving out the pipeline's fill and drain. 1.0 means no stage
    ever waits, which needs ``microbatches >= stages`` (lecture 01:09:11).
    """
    from . import pipeline

    stages = validate.integer("stages", stages)
    microbatches = validate.integer("microbatches", microbatches)
    tokens = validate.integer("tokens", tokens, minimum=3)
    timeline = pipeline.simulate(schedule="inference", stages=stages, microbatches=microbatches, tokens=tokens)
    loop_starts = sorted(task.start for task in timeline.tasks if task.stage == 0 and task.microbatch == 0)
    return 1.0 - timeline.idle_fraction(start=loop_starts[1], end=loop_starts[-1])


def fewest_decode_microbatches(*, stages: int) -> int:
    """The fewest micro-batches that keep every stage of the decode loop busy, found by simulation.

    Tries 1, 2, ... micro-batches in :func:`decode_utilisation` and returns the first that reaches
    full utilisation. The lecture's "proof by visual" (01:09:11) says it is P.
    """
    stages = validate.integer("stages", stages, maximum=32)   # up to 4P + 1 simulations: keep it interactive
    for m in range(1, 4 * stages + 2):
        if decode_utilisation(stages=stages, microbatches=m) >= 1 - 1e-9:
            return m
    raise RuntimeError(f"no micro-batch count up to {4 * stages + 1} filled {stages} stages")


@validate.reports_inputs
def kv_per_stage(*, model: str, stages: int, len_ctx: float, kv: str = "fp8") -> np.ndarray:
    """KV bytes each pipeline stage holds for one sequence, with the layers cut into P contiguous runs.

    Models that interleave sliding-window and global layers (Gemma 3: five local layers of window
    1024, then one global; arXiv 2503.19786) put very different KV loads on different layers, so
    equal layer counts give unequal stages, and the busiest stage sets the pace of the whole
    pipeline (lecture notes §4.3, from Dwarkesh's notes). Global layer i is every
    ``(n_layers // n_global_layers)``-th layer, as in the presets' published patterns.
    """
    spec = models.resolve(model)
    stages = validate.integer("stages", stages)
    if stages > spec.n_layers:
        raise ValueError(f"stages must be <= n_layers={spec.n_layers} for {spec.name}, got {stages}")
    len_ctx = validate.scalar("len_ctx", len_ctx)
    bytes_value = hardware.BYTES_PER_VALUE[validate.choice("kv", kv, list(hardware.BYTES_PER_VALUE))]
    layers = np.arange(spec.n_layers)
    if spec.n_local_layers:
        period = spec.n_layers // spec.n_global_layers
        is_global = (layers + 1) % period == 0
        if is_global.sum() != spec.n_global_layers:
            raise ValueError(f"{spec.name}: cannot place {spec.n_global_layers} global layers every {period}")
        tokens = np.where(is_global, len_ctx, min(spec.sliding_window, len_ctx))
    else:
        tokens = np.full(spec.n_layers, len_ctx, dtype=float)
    per_layer = tokens * spec.kv_values_per_layer() * bytes_value
    return np.array([per_layer[run].sum() for run in np.array_split(layers, stages)])
