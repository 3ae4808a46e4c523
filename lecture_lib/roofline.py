"""Chapter 1: how batch size sets the cost and speed of a token (lecture 00:00:00-00:32:09).

A roofline model of one decode step on a rack of accelerators (lecture notes §1.1): the step
takes at least as long as the matrix units need (compute) and at least as long as HBM needs to
stream every weight once plus every sequence's KV cache (memory)::

    t >= max(t_compute, t_weights + t_kv)

Convention: ``FLOPs`` is vendor FLOP/s, 2 per multiply-add, so ``t_compute = 2 B N_active / FLOPs``.
The board writes ``B N_active / FLOPs`` counting multiplies; :data:`T_COMPUTE_BOARD` is that form and
the notebook shows the two agree once ``FLOPs_board = FLOPs / 2``. ``FLOPs`` and ``mem_bw`` are those
of all chips working on the step together (one chip, or a whole rack).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from . import validate
from .formula import Formula
from .symbols import (B, B_star, FLOPs, N_active, N_total, batch_ratio, bytes_param, bytes_tok,
                      cost_token, hbm_capacity, len_ctx, len_ctx_star, mem_bw, mfu, mults, n_chips,
                      price_chip_hour, price_ratio, ratio_hw, speed_ratio, t, t_compute, t_drain,
                      t_kv, t_mem, t_step, t_wait, t_weights, t_worst, throughput)

SECONDS_PER_HOUR = 3600

LECTURE = "https://youtu.be/xmkSf5IS-zw"

# --- The two times (E1.2, E1.3) -----------------------------------------------------------------
T_COMPUTE_BOARD = Formula(t_compute, B * N_active / mults,
                          source="lecture 00:04:13 (E1.2), multiplies per second as on the board")
T_COMPUTE = Formula(t_compute, 2 * B * N_active / FLOPs,
                    source="lecture 00:04:13 (E1.2), with 2 FLOPs per multiply-add")
T_WEIGHTS = Formula(t_weights, N_total * bytes_param / mem_bw,
                    source="lecture 00:06:39 (E1.3), weight-fetch term")
T_KV = Formula(t_kv, B * len_ctx * bytes_tok / mem_bw,
               source="lecture 00:06:39 (E1.3), KV-fetch term")
T_MEM = Formula(t_mem, T_WEIGHTS.rhs + T_KV.rhs, source="lecture 00:06:39 (E1.3)")
T_STEP = Formula(t, sp.Max(T_COMPUTE.rhs, T_MEM.rhs), source="lecture 00:03:41 (E1.1), roofline bound")

# --- Cost per token (E1.4) ----------------------------------------------------------------------
COST_OF_STEP = Formula(cost_token, t * n_chips * price_chip_hour / (SECONDS_PER_HOUR * B),
                       source="lecture 00:14:31 (E1.4): rent n chips for t seconds, get B tokens")
COST_PER_TOKEN = Formula(cost_token, COST_OF_STEP.rhs.subs(t, T_STEP.rhs),
                         source="lecture 00:14:31 (E1.4) with the roofline step time")

# --- Balance batch (E1.5) -----------------------------------------------------------------------
HARDWARE_RATIO = Formula(ratio_hw, FLOPs / 2 * bytes_param / mem_bw,
                         source="lecture 00:18:48: multiplies/s x bytes per weight / bytes/s, 'around 300'")
BALANCE_BATCH = Formula(B_star, sp.solve(sp.Eq(T_COMPUTE.rhs, T_WEIGHTS.rhs), B)[0],
                        source="lecture 00:16:56-00:19:36 (E1.5): t_compute = t_weights solved for B")
BALANCE_BATCH_WITH_KV = Formula(B_star, sp.solve(sp.Eq(T_COMPUTE.rhs, T_MEM.rhs), B)[0],
                                source="lecture 00:19:36: the KV term pushes the balance batch up",
                                note="only meaningful while the compute slope exceeds the KV slope",
                                domain=sp.diff(T_KV.rhs, B) < sp.diff(T_COMPUTE.rhs, B))
GOLDILOCKS_CONTEXT = Formula(
    len_ctx_star,
    sp.solve(sp.Eq(sp.diff(T_KV.rhs, B), sp.diff(T_COMPUTE.rhs, B)), len_ctx)[0],
    source="lecture 00:13:06: the context where the KV slope equals the compute slope")
MFU = Formula(mfu, T_COMPUTE.rhs / T_STEP.rhs, source="model FLOPs utilisation = t_compute / t")

# --- Cadence, drain time, throughput (E1.6-E1.8) ------------------------------------------------
HBM_DRAIN_TIME = Formula(t_drain, hbm_capacity / mem_bw, source="lecture 00:23:43 (E1.7)")
THROUGHPUT = Formula(throughput, B / t_step, source="lecture 00:26:56 (E1.8): B tokens every step")
WORST_CASE_LATENCY = Formula(t_worst, t_wait + t_step,
                             source="lecture 00:21:44-00:22:59 (E1.6): wait for the train, then ride it; "
                                    "t_wait <= t_step")

# --- Fast Mode (lecture 00:01:35; the toy model is the course's, lecture notes §1.2) --------------
FAST_MODE_BATCH_RATIO = Formula(batch_ratio, price_ratio * speed_ratio,
                                source="course derivation: price ∝ t/B and speed ∝ 1/t on fixed hardware")


def _flops_for(chip, compute_dtype: str) -> float:
    available = dict(chip.flops)
    if not isinstance(compute_dtype, str) or compute_dtype not in available:
        raise ValueError(f"compute_dtype must be one of {sorted(available)} for {chip.name}, "
                         f"got {compute_dtype!r}")
    return available[compute_dtype]


def balance_batch(chip, *, weight_bytes: float, compute_dtype: str, sparsity: float = 1.0) -> float:
    """The batch B* where weight-fetch time equals compute time on one chip (lecture E1.5).

    ``B* = (FLOPs/2) * weight_bytes / mem_bw * sparsity``: the hardware ratio (about 300 on
    most accelerators) times ``sparsity = N_total / N_active``. ``weight_bytes`` is bytes per stored
    weight (2 for bf16, 1 for fp8, 0.5 for fp4); ``compute_dtype`` picks the chip's dense FLOP/s.
    KV traffic is ignored here, as on the board; see :data:`BALANCE_BATCH_WITH_KV`.
    """
    from . import hardware

    chip = hardware.resolve_chip(chip)
    validate.number("weight_bytes", weight_bytes)
    sparsity = validate.number("sparsity", sparsity)
    if np.any(np.less(sparsity, 1)):
        raise ValueError(f"sparsity must be >= 1 (N_total / N_active), got {sparsity!r}")
    ratio = HARDWARE_RATIO(FLOPs=_flops_for(chip, compute_dtype), bytes_param=weight_bytes,
                           mem_bw=chip.hbm_bandwidth, called_as={"bytes_param": "weight_bytes"})
    return ratio * sparsity


def hardware_ratio(chip, compute_dtype: str, weight_bytes: float) -> float:
    """The lecture's dimensionless ratio for one chip and number format (≈300)."""
    return balance_batch(chip, weight_bytes=weight_bytes, compute_dtype=compute_dtype)


def decode_step(*, batch, n_active, n_total, flops, mem_bw, bytes_param, len_ctx, bytes_tok) -> dict:
    """Every time of one decode step, as numbers or NumPy arrays broadcast together.

    Returns ``{"t_compute", "t_weights", "t_kv", "t_mem", "t"}`` in seconds, each from the
    corresponding Formula of this module.
    """
    for name, value in dict(batch=batch, n_active=n_active, n_total=n_total, flops=flops, mem_bw=mem_bw,
                            bytes_param=bytes_param, len_ctx=len_ctx, bytes_tok=bytes_tok).items():
        validate.number(name, value)
    if np.any(np.greater(n_active, n_total)):
        raise ValueError(f"n_active must be <= n_total, got n_active={n_active!r} > n_total={n_total!r}")
    compute = T_COMPUTE(B=batch, N_active=n_active, FLOPs=flops)
    weights = T_WEIGHTS(N_total=n_total, bytes_param=bytes_param, mem_bw=mem_bw)
    kv = T_KV(B=batch, len_ctx=len_ctx, bytes_tok=bytes_tok, mem_bw=mem_bw)
    return {"t_compute": compute, "t_weights": weights, "t_kv": kv,
            "t_mem": weights + kv, "t": _maximum(compute, weights + kv)}


def _maximum(a, b):
    import numpy as np

    result = np.maximum(a, b)
    return float(result) if np.ndim(result) == 0 else result


def cost_per_token(*, step_time, batch, n_chips: float, price_chip_hour: float):
    """Dollars per generated token: rent ``n_chips`` for ``step_time`` seconds, get ``batch`` tokens."""
    validate.number("step_time", step_time)
    validate.number("batch", batch)
    validate.number("n_chips", n_chips)
    validate.number("price_chip_hour", price_chip_hour)
    return COST_OF_STEP(t=step_time, B=batch, n_chips=n_chips, price_chip_hour=price_chip_hour)


def balance_batch_with_kv(*, n_active, n_total, flops, mem_bw, bytes_param, len_ctx, bytes_tok) -> float:
    """B where compute time equals weight + KV time; ``inf`` when KV alone outpaces compute.

    Past the Goldilocks context the KV slope exceeds the compute slope and the step stays
    memory-bound at every batch, so no finite balance point exists (lecture 00:11:42).
    Scalars only (the answer switches to ``inf``, which an array formula cannot).
    """
    for name, value in dict(n_active=n_active, n_total=n_total, flops=flops, mem_bw=mem_bw,
                            bytes_param=bytes_param, len_ctx=len_ctx, bytes_tok=bytes_tok).items():
        validate.number(name, value)
        if np.ndim(value) != 0:
            raise ValueError(f"{name} must be a single number here, got {validate._describe(value)}")
    if len_ctx >= GOLDILOCKS_CONTEXT(N_active=n_active, FLOPs=flops, mem_bw=mem_bw, bytes_tok=bytes_tok):
        return float("inf")
    return BALANCE_BATCH_WITH_KV(N_active=n_active, N_total=n_total, FLOPs=flops, mem_bw=mem_bw,
                                 bytes_param=bytes_param, len_ctx=len_ctx, bytes_tok=bytes_tok)


def lecture_link(seconds: int) -> str:
    """A link to a moment of the lecture video (``seconds`` from its start, 0 to its 2:13:50 end)."""
    validate.number("seconds", seconds, allow_zero=True, maximum=8030)
    if np.ndim(seconds) != 0:
        raise ValueError(f"seconds must be a single number, got {validate._describe(seconds)}")
    return f"{LECTURE}?t={int(seconds)}"
