"""Chapter 9: a roofline for training layouts: FSDP (ZeRO-3), tensor parallelism, both, and pipeline stages.

Each layout splits one MLP layer's work over the chips and pays its own collectives. Following the scaling
book ("How to Parallelize a Transformer for Training", training.md §"Combining FSDP and tensor
parallelism", read at jax-ml/scaling-book 0819a7d), the **forward pass** is modelled, since it has the most
communication per FLOP (the backward pass does twice the FLOPs with at most twice the bytes). Per layer
and per chip, with X-way FSDP and Y-way TP on N = X Y chips, ``n_mats`` matrices of d_model × d_ff, B
tokens in the step and the course's one-direction bandwidths and exact ring factors::

    t_math = 2 n_mats B d_model d_ff / (N FLOPs)
    t_FSDP = n_mats d_model d_ff bytes (X − 1) / (X Y W_X)     AllGather of this chip's Y-shard of the weights
    t_TP   = 2 (B/X) d_model bytes (Y − 1) / (Y W_Y)           AllGather in + ReduceScatter out of the activations

Pure FSDP (Y = 1) is compute-bound above ``bytes (N − 1) FLOPs / (2 N W)`` tokens per chip, the same
critical batch as data parallelism (:data:`lecture_lib.collectives.DP_CRITICAL_BATCH`); pure TP needs
``d_ff > bytes (Y − 1) FLOPs / (n_mats W)`` (:data:`lecture_lib.collectives.TP_CRITICAL_D_FF`), whatever the
batch. Mixing them, FSDP's traffic falls as Y grows and TP's as X grows: the best X at fixed N is
:data:`X_OPT` (the book's ``sqrt(B N M_X / (F M_Y))``), and the layout stays compute-bound down to
:data:`MIXED_CRITICAL_TOKENS` per chip (the book's ``4 α² / (M_X M_Y F)``), which is below both.

**Pipeline stages** (Chapters 3 and 4) cut the layers instead: P stages of L/P layers each move only one
activation per micro-batch across a boundary, but idle for the bubble ``(P − 1)/(m + P − 1)``
(:data:`lecture_lib.pipeline.BUBBLE_FRACTION`), and ZeRO-3 must gather each stage's weights again for every
one of the m micro-batches (scaling book gpus.md, pipelining section). :func:`layout_step` times any
(X, Y, P); :func:`best_layouts` ranks every split of a chip count for a GPU cluster.
"""

from __future__ import annotations

import sympy as sp

from . import validate
from .formula import Formula, simplify, solve
from .pipeline import BUBBLE_FRACTION
from .symbols import (B_tok, FLOPs, P, b_chip_star, bw_fsdp, bw_link, bw_tp, bytes_value, d_ff, d_ff_star, d_model,
                      n_chip, n_fsdp, n_mats, n_micro, n_tp, t_comm, t_compute, x_opt)

BOOK_TRAINING = "https://jax-ml.github.io/scaling-book/training"

LAYOUT_MATH = Formula(t_compute, 2 * n_mats * B_tok * d_model * d_ff / (n_chip * FLOPs),
                      source=f"scaling book training.md ({BOOK_TRAINING}): T_math = 2·2·B·D·F / (N C), forward pass")
FSDP_LAYER_COMM = Formula(t_comm, n_mats * d_model * d_ff * bytes_value * (n_fsdp - 1) / (n_fsdp * n_tp * bw_fsdp),
                          source=f"scaling book training.md ({BOOK_TRAINING}): AllGather_X of W[D_X, F_Y], "
                                 "2·2·D·F / (Y W M_X), with the ring's (X-1)/X",
                          domain=n_fsdp >= 1)
TP_LAYER_COMM = Formula(t_comm, 2 * (B_tok / n_fsdp) * d_model * bytes_value * (n_tp - 1) / (n_tp * bw_tp),
                        source=f"scaling book training.md ({BOOK_TRAINING}): AllGather_Y of In[B_X, D_Y] and "
                               "ReduceScatter_Y of Out, 2·2·B·D / (X W M_Y), with the ring's (Y-1)/Y",
                        domain=n_tp >= 1)
MIXED_LAYER_COMM = Formula(t_comm, FSDP_LAYER_COMM.rhs + TP_LAYER_COMM.rhs,
                           source="scaling book training.md: T_comms = T_FSDP + T_TP (the two axes not overlapped)",
                           domain=sp.And(n_fsdp >= 1, n_tp >= 1))

# Pure FSDP: Y = 1, X = N. Solve t_FSDP = t_math for the tokens per chip.
_per_chip = sp.Symbol("tokens_per_chip", positive=True)
FSDP_CRITICAL_TOKENS = Formula(
    b_chip_star,
    solve(sp.Eq(FSDP_LAYER_COMM.rhs.subs({n_tp: 1, n_fsdp: n_chip, bw_fsdp: bw_link}),
                   LAYOUT_MATH.rhs.subs(B_tok, _per_chip * n_chip)), _per_chip)[0],
    source="t_FSDP = t_math solved for B/N; scaling book training.md: B/X > C/W_ici (2550 on v5p)",
    domain=n_chip >= 1)
# Pure TP: X = 1, Y = N. The batch cancels; solve for the MLP width.
TP_CRITICAL_WIDTH = Formula(
    d_ff_star,
    solve(sp.Eq(TP_LAYER_COMM.rhs.subs({n_fsdp: 1, n_tp: n_chip, bw_tp: bw_link}), LAYOUT_MATH.rhs), d_ff)[0],
    source="t_TP = t_math solved for d_ff; scaling book training.md: Y < F / (C/W)",
    domain=n_chip >= 1)

# Mixed, many chips on each axis ((X-1)/X and (Y-1)/Y -> 1, as the book does), Y = N / X.
_MIXED_LARGE = (FSDP_LAYER_COMM.rhs.subs(n_fsdp - 1, n_fsdp) + TP_LAYER_COMM.rhs.subs(n_tp - 1, n_tp)).subs(
    n_tp, n_chip / n_fsdp)
X_OPT = Formula(x_opt, solve(sp.diff(_MIXED_LARGE, n_fsdp), n_fsdp)[0],
                source=f"d T_comms / dX = 0; scaling book training.md ({BOOK_TRAINING}): "
                       "X_opt = sqrt(B N M_X / (F M_Y))")
MIXED_CRITICAL_TOKENS = Formula(
    b_chip_star,
    solve(sp.Eq(_MIXED_LARGE.subs(n_fsdp, X_OPT.rhs).subs(B_tok, _per_chip * n_chip),
                   LAYOUT_MATH.rhs.subs(B_tok, _per_chip * n_chip)), _per_chip)[0],
    source=f"t_comm(X_opt) = t_math solved for B/N; scaling book training.md ({BOOK_TRAINING}): "
           "B/N > 4 alpha^2 / (M_X M_Y F)")


_NAMES = {"B_tok": "batch_tokens", "d_model": "d_model", "d_ff": "d_ff", "n_mats": "matrices",
          "bytes_value": "bytes_per_value", "FLOPs": "flops", "n_chip": "n_chips", "n_fsdp": "fsdp", "n_tp": "tp",
          "bw_fsdp": "fsdp_bandwidth", "bw_tp": "tp_bandwidth"}
"""Each Formula input as the public functions' parameter, so an error names what the caller passed."""


def _model_dims(d_model, d_ff, matrices, bytes_per_value):
    return (validate.scalar("d_model", d_model), validate.scalar("d_ff", d_ff),
            validate.integer("matrices", matrices, maximum=8), validate.scalar("bytes_per_value", bytes_per_value))


@validate.reports_inputs
def mixed_optimum(*, n_chips, batch_tokens, d_model, d_ff, flops, fsdp_bandwidth, tp_bandwidth, matrices: int = 2,
                  bytes_per_value: float = 2) -> dict:
    """The book's continuous optimum of FSDP + TP: ``{"x_opt", "y_opt", "critical_tokens_per_chip",
    "fsdp_critical_tokens_per_chip", "tp_critical_d_ff"}`` (:data:`X_OPT`, :data:`MIXED_CRITICAL_TOKENS`;
    X and Y may be fractional here; :func:`best_layouts` picks whole divisors). The FSDP and TP figures use
    the exact (N − 1)/N of one axis of all ``n_chips``, at ``fsdp_bandwidth`` and ``tp_bandwidth``.
    """
    n = validate.integer("n_chips", n_chips)
    batch = validate.scalar("batch_tokens", batch_tokens)
    d, f, mats, size = _model_dims(d_model, d_ff, matrices, bytes_per_value)
    c = validate.scalar("flops", flops)
    wx, wy = validate.scalar("fsdp_bandwidth", fsdp_bandwidth), validate.scalar("tp_bandwidth", tp_bandwidth)
    x = X_OPT(B_tok=batch, n_chip=n, n_mats=mats, d_ff=f, bw_fsdp=wx, bw_tp=wy,
              called_as={"B_tok": "batch_tokens", "n_chip": "n_chips", "n_mats": "matrices",
                         "bw_fsdp": "fsdp_bandwidth", "bw_tp": "tp_bandwidth"})
    mixed = MIXED_CRITICAL_TOKENS(bytes_value=size, FLOPs=c, n_mats=mats, d_ff=f, bw_fsdp=wx, bw_tp=wy,
                                  called_as={"bytes_value": "bytes_per_value", "FLOPs": "flops", "n_mats": "matrices",
                                             "bw_fsdp": "fsdp_bandwidth", "bw_tp": "tp_bandwidth"})
    fsdp = 0.0 if n == 1 else FSDP_CRITICAL_TOKENS(bytes_value=size, n_chip=n, FLOPs=c, bw_link=wx,
                                                   called_as=validate.called_as(FSDP_CRITICAL_TOKENS, {
                                                       **_NAMES, "bw_link": "fsdp_bandwidth"}))
    tp = 0.0 if n == 1 else TP_CRITICAL_WIDTH(bytes_value=size, n_chip=n, FLOPs=c, bw_link=wy, n_mats=mats,
                                              called_as=validate.called_as(TP_CRITICAL_WIDTH, {
                                                  **_NAMES, "bw_link": "tp_bandwidth"}))
    return {"x_opt": x, "y_opt": n / x, "critical_tokens_per_chip": mixed, "fsdp_critical_tokens_per_chip": fsdp,
            "tp_critical_d_ff": tp}


#: Training-state bytes per parameter with mixed-precision Adam: BF16 weights and gradients (2 + 2) and FP32
#: master weights, momentum and variance (12): ZeRO, Rajbhandari et al. 2019 (arXiv 1910.02054) §3.1.
STATE_BYTES = {"weights_and_grads": 4, "optimizer": 12}
DATA_MODES = ("fsdp", "dp")


@validate.reports_inputs
def layout_step(*, fsdp: int, tp: int, stages: int = 1, micro_batches: int = 1, batch_tokens, d_model, d_ff,
                n_layers: int, flops, fsdp_bandwidth, tp_bandwidth, pp_bandwidth=None, matrices: int = 2,
                bytes_per_value: float = 2, data: str = "fsdp") -> dict:
    """One training step of an MLP-only model on ``fsdp × tp × stages`` chips, per chip, in seconds.

    Forward pass per layer as in the module docstring; the backward pass does twice the math, gathers the
    weights again and reduce-scatters the gradients (twice FSDP's forward bytes) and repeats TP's two
    collectives (scaling book training.md, FSDP and TP algorithms). Each pass is a roofline,
    ``max(math, comm)``. With ``stages`` P > 1 each chip holds L/P layers, the FSDP weight gather repeats for
    each of the ``micro_batches`` m (ZeRO-3 under pipelining, scaling book gpus.md), each boundary sends the
    chip's 1/Y of the activations once per micro-batch at ``pp_bandwidth``, and the step stretches by
    ``1/(1 − bubble)`` with ``bubble = (P − 1)/(m + P − 1)`` (Chapter 3). ``data="dp"`` replicates the
    weights over the ``fsdp`` axis instead (ZeRO-1, what pipelined runs use, gpus.md): no forward gather,
    one gradient all-reduce per step (the cost of two gathers), optimizer state still sharded. Returns the
    per-pass times, ``t_step``, ``bubble``, ``comm_bound`` (either pass limited by its collectives),
    ``tokens_per_chip`` and ``state_bytes_per_chip`` (weights, gradients and Adam state, :data:`STATE_BYTES`;
    activations not counted).
    """
    x = validate.integer("fsdp", fsdp)
    y = validate.integer("tp", tp)
    p = validate.integer("stages", stages, maximum=10**4)
    m = validate.integer("micro_batches", micro_batches, maximum=10**6)
    batch = validate.scalar("batch_tokens", batch_tokens)
    d, f, mats, size = _model_dims(d_model, d_ff, matrices, bytes_per_value)
    layers = validate.integer("n_layers", n_layers, maximum=10**5)
    c = validate.scalar("flops", flops)
    wx, wy = validate.scalar("fsdp_bandwidth", fsdp_bandwidth), validate.scalar("tp_bandwidth", tp_bandwidth)
    if p > layers:
        raise ValueError(f"stages must be <= n_layers={layers}, got {p}")
    if p > 1 and pp_bandwidth is None:
        raise ValueError("pp_bandwidth must be given when stages > 1")
    wp = None if pp_bandwidth is None else validate.scalar("pp_bandwidth", pp_bandwidth)
    if batch / (x * m) < 1:
        raise ValueError(f"batch_tokens={batch:g} must give each of the fsdp={x} FSDP groups at least one token "
                         f"per micro-batch (micro_batches={m}): use fewer FSDP groups or more tokens")
    n = x * y * p
    per_stage = layers / p
    names = {**_NAMES, "n_chip": "fsdp x tp x stages"}
    math_fwd = layers * LAYOUT_MATH(n_mats=mats, B_tok=batch, d_model=d, d_ff=f, n_chip=n, FLOPs=c,
                                    called_as=validate.called_as(LAYOUT_MATH, names))
    validate.choice("data", data, list(DATA_MODES))
    gather = per_stage * FSDP_LAYER_COMM(n_mats=mats, d_model=d, d_ff=f, bytes_value=size, n_fsdp=x, n_tp=y,
                                         bw_fsdp=wx, called_as=validate.called_as(FSDP_LAYER_COMM, names)
                                         ) if x > 1 else 0.0
    if data == "fsdp":
        gathers = m if p > 1 else 1
        fsdp_fwd, fsdp_bwd = gathers * gather, (gathers + 1) * gather
    else:
        fsdp_fwd, fsdp_bwd = 0.0, 2 * gather
    params = layers * mats * d * f
    sharded = STATE_BYTES["optimizer"] * params / n
    held = STATE_BYTES["weights_and_grads"] * params / (n if data == "fsdp" else y * p)
    tp_one = per_stage * TP_LAYER_COMM(B_tok=batch, n_fsdp=x, d_model=d, bytes_value=size, n_tp=y, bw_tp=wy,
                                       called_as=validate.called_as(TP_LAYER_COMM, names)) if y > 1 else 0.0
    pp_one = (batch / x) * d * size / (y * wp) if p > 1 else 0.0
    comm_fwd, comm_bwd = fsdp_fwd + tp_one + pp_one, fsdp_bwd + tp_one + pp_one
    bubble = float(BUBBLE_FRACTION.rhs.subs({P: p, n_micro: m})) if p > 1 else 0.0
    busy = max(math_fwd, comm_fwd) + max(2 * math_fwd, comm_bwd)
    return {"fsdp": x, "tp": y, "stages": p, "micro_batches": m, "data": data, "n_chips": n,
            "tokens_per_chip": batch / n, "state_bytes_per_chip": sharded + held,
            "t_math": 3 * math_fwd, "t_fsdp": fsdp_fwd + fsdp_bwd, "t_tp": 2 * tp_one, "t_pp": 2 * pp_one,
            "bubble": bubble, "t_step": busy / (1 - bubble),
            "comm_bound": comm_fwd > math_fwd or comm_bwd > 2 * math_fwd}


@validate.reports_inputs
def best_layouts(*, n_chips: int, batch_tokens, d_model, d_ff, n_layers: int, chip, matrices: int = 2,
                 bytes_per_value: float = 2, micro_batches: int = 8, max_stages: int = 8, fmt: str = "bf16") -> list:
    """Every split ``fsdp × tp × stages = n_chips`` of a GPU cluster, fastest step first (:func:`layout_step`).

    ``chip`` is a hardware preset (its scale-up domain is the node). TP stays inside one domain at the
    NVLink bandwidth; FSDP runs at NVLink while ``fsdp × tp`` fits one domain, otherwise it crosses the
    network, where the node's egress (domain × scale-out per chip) is shared by the ``tp``-way shards:
    ``W_X = min(scale-up, domain × scale-out / tp)`` (scaling book gpus.md: with Y inside a node, the
    network time of the outer axis is ``bytes / W_node``, not reduced by Y). Stage boundaries cross the
    network. ``micro_batches`` applies when ``stages > 1``. Each split is tried with the data axis sharded
    (``data="fsdp"``, ZeRO-3) and replicated (``data="dp"``, ZeRO-1); a layout whose training state does
    not fit the chip's HBM is dropped (activations are not counted).
    """
    from . import hardware

    chip = hardware.resolve_chip(chip)
    n = validate.integer("n_chips", n_chips, maximum=10**6)
    max_stages = validate.integer("max_stages", max_stages, maximum=10**3)
    m = validate.integer("micro_batches", micro_batches, maximum=10**6)
    layers = validate.integer("n_layers", n_layers, maximum=10**5)
    batch = validate.scalar("batch_tokens", batch_tokens)
    d, f, mats, size = _model_dims(d_model, d_ff, matrices, bytes_per_value)
    validate.choice("fmt", fmt, list(chip.flops))
    domain = chip.scale_up_domain
    rows, tried = [], 0
    for p in range(1, min(max_stages, n, layers) + 1):
        if n % p:
            continue
        for y in range(1, min(domain, n // p) + 1):
            x = n // p // y
            micro = m if p > 1 else 1
            if (n // p) % y or batch / (x * micro) < 1:
                continue
            tried += 1
            in_domain = x * y <= domain
            wx = chip.scale_up_bandwidth if in_domain else min(chip.scale_up_bandwidth,
                                                                domain * chip.scale_out_bandwidth / y)
            for data in DATA_MODES:
                row = layout_step(fsdp=x, tp=y, stages=p, micro_batches=micro, batch_tokens=batch, d_model=d,
                                  d_ff=f, n_layers=layers, flops=chip.flops[fmt], fsdp_bandwidth=wx,
                                  tp_bandwidth=chip.scale_up_bandwidth, pp_bandwidth=chip.scale_out_bandwidth,
                                  matrices=mats, bytes_per_value=size, data=data)
                if row["state_bytes_per_chip"] <= chip.hbm_capacity and (data == "fsdp" or x > 1):
                    rows.append({**row, "fsdp_bandwidth": wx})
    if not tried:
        raise ValueError(f"batch_tokens={batch:g} gives no split of n_chips={n} at least one token per FSDP group "
                         f"and micro-batch (micro_batches={m} when stages > 1): use more tokens or fewer chips")
    if not rows:
        params = layers * mats * d * f
        total = sum(STATE_BYTES.values()) * params
        raise ValueError(f"the training state of n_layers x matrices x d_model x d_ff = {layers} x {mats} x {d:g} x "
                         f"{f:g} = {params:.3g} parameters ({total:.3g} bytes) exceeds the {chip.hbm_capacity:.3g} "
                         f"bytes of HBM per chip on every split of n_chips={n} (max_stages={max_stages}): "
                         "use more chips or a smaller model")
    return sorted(rows, key=lambda row: row["t_step"])
