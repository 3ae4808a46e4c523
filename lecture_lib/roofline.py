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

from dataclasses import dataclass

import numpy as np
import sympy as sp

from . import collectives, validate
from .formula import Formula, simplify, solve
from .symbols import (B, B_star, alpha_acc, c_draft, n_draft, rho_step, spec_speedup, FLOPs, FLOPs_attn, FLOPs_expert, L_moe, N_active, N_body, N_dense, N_emb, N_expert,
                      N_fixed, N_read, N_total, batch_ratio, bytes_expert, bytes_param, bytes_tok, c_kv, c_weights,
                      cost_token, d_model, flops_attn, hbm_capacity, hit, k_active, kv_heads, len_ctx, len_ctx_star,
                      len_in, mem_bw, mfu, mults, n_chips, n_ep, n_experts, n_redundant, n_shards, n_touched, n_tp,
                      n_verify, n_vocab, price_chip_hour, price_ratio, r_kv, ratio_hw, speed_ratio, t, t_compute,
                      t_drain, t_kv, t_mem, t_prefill, t_step, t_wait, t_weights, t_worst, tau, throughput)

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
BALANCE_BATCH = Formula(B_star, solve(sp.Eq(T_COMPUTE.rhs, T_WEIGHTS.rhs), B)[0],
                        source="lecture 00:16:56-00:19:36 (E1.5): t_compute = t_weights solved for B")
BALANCE_BATCH_WITH_KV = Formula(B_star, solve(sp.Eq(T_COMPUTE.rhs, T_MEM.rhs), B)[0],
                                source="lecture 00:19:36: the KV term pushes the balance batch up",
                                note="only meaningful while the compute slope exceeds the KV slope",
                                domain=sp.diff(T_KV.rhs, B) < sp.diff(T_COMPUTE.rhs, B))
GOLDILOCKS_CONTEXT = Formula(
    len_ctx_star,
    solve(sp.Eq(sp.diff(T_KV.rhs, B), sp.diff(T_COMPUTE.rhs, B)), len_ctx)[0],
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


@validate.reports_inputs
def balance_batch(chip, *, weight_bytes: float, compute_dtype: str, sparsity: float = 1.0) -> float:
    """The batch B* where weight-fetch time equals compute time on one chip (lecture E1.5).

    ``B* = (FLOPs/2) * weight_bytes / mem_bw * sparsity``: the hardware ratio (about 300 on
    most accelerators) times ``sparsity = N_total / N_active``. ``weight_bytes`` is bytes per stored
    weight (2 for bf16, 1 for fp8, 0.5 for fp4); ``compute_dtype`` picks the chip's dense FLOP/s.
    KV traffic is ignored here, as on the board; see :data:`BALANCE_BATCH_WITH_KV`.
    """
    from . import hardware

    chip = hardware.resolve_chip(chip)
    weight_bytes = validate.number("weight_bytes", weight_bytes)
    sparsity = validate.number("sparsity", sparsity)
    if np.any(np.less(sparsity, 1)):
        raise ValueError(f"sparsity must be >= 1 (N_total / N_active), got {sparsity!r}")
    ratio = HARDWARE_RATIO(FLOPs=_flops_for(chip, compute_dtype), bytes_param=weight_bytes,
                           mem_bw=chip.hbm_bandwidth, called_as={"bytes_param": "weight_bytes"})
    return ratio * sparsity


def hardware_ratio(chip, compute_dtype: str, weight_bytes: float) -> float:
    """The lecture's dimensionless ratio for one chip and number format (≈300)."""
    return balance_batch(chip, weight_bytes=weight_bytes, compute_dtype=compute_dtype)


STEP_FORMS = ("max", "kv_added")


@validate.reports_inputs
def decode_step(*, batch, n_active, n_total, flops, mem_bw, bytes_param, len_ctx, bytes_tok,
                step_form: str = "max", shard: bool = False) -> dict:
    """Every time of one decode step, as numbers or NumPy arrays broadcast together.

    Returns ``{"t_compute", "t_weights", "t_kv", "t_mem", "t"}`` in seconds, each from the
    corresponding Formula of this module. ``step_form`` picks how the three times combine:

    - ``"max"`` (default, the lecture's E1.1 with E1.3): ``t = max(t_compute, t_weights + t_kv)``;
    - ``"kv_added"``: ``t = t_kv + max(t_compute, t_weights)``, the other common form, for kernels
      that stream the KV cache in attention while the matrix units wait (attention and the
      weight matmuls do not overlap). It is never shorter than ``"max"``.

    ``len_ctx = 0`` (and ``bytes_tok = 0``) mean "no KV cache": the KV term is then 0.

    ``n_active > n_total`` is refused (swapped arguments) unless ``shard=True``: then the inputs are one
    device's (its FLOP/s, its HBM bandwidth, the weights it holds as ``n_total``, its own sequences as
    ``batch``), and a device under DP attention + EP holds fewer weights than one token multiplies through
    (DeepSeek-V3 on 144 GPUs: about 22 B of the 37 B active). :func:`decode_bound` with a ``layout`` does
    this split for a whole model.
    """
    batch, n_active, n_total, flops, mem_bw, bytes_param = (
        validate.number(name, value) for name, value in dict(batch=batch, n_active=n_active, n_total=n_total,
                                                             flops=flops, mem_bw=mem_bw, bytes_param=bytes_param).items())
    len_ctx = validate.number("len_ctx", len_ctx, allow_zero=True)
    bytes_tok = validate.number("bytes_tok", bytes_tok, allow_zero=True)
    validate.choice("step_form", step_form, STEP_FORMS)
    shard = validate.boolean("shard", shard)
    if not shard and np.any(np.greater(n_active, n_total)):
        raise ValueError(f"n_active must be <= n_total (or pass shard=True for one device's share of the weights), "
                         f"got n_active={n_active!r} > n_total={n_total!r}")
    compute = T_COMPUTE(B=batch, N_active=n_active, FLOPs=flops)
    weights = T_WEIGHTS(N_total=n_total, bytes_param=bytes_param, mem_bw=mem_bw)
    kv = T_KV(B=batch, len_ctx=len_ctx, bytes_tok=bytes_tok, mem_bw=mem_bw, allow_zero=("len_ctx", "bytes_tok"))
    total = (_maximum(compute, weights + kv) if step_form == "max"
             else _plus(kv, _maximum(compute, weights)))
    return {"t_compute": compute, "t_weights": weights, "t_kv": kv, "t_mem": weights + kv, "t": total}


def _plus(a, b):
    result = a + b
    return float(result) if hasattr(result, "ndim") and result.ndim == 0 else result


def _maximum(a, b):
    import numpy as np

    result = np.maximum(a, b)
    return float(result) if np.ndim(result) == 0 else result


@validate.reports_inputs
def cost_per_token(*, step_time, batch, n_chips: float, price_chip_hour: float):
    """Dollars per generated token: rent ``n_chips`` for ``step_time`` seconds, get ``batch`` tokens."""
    step_time = validate.number("step_time", step_time)
    batch = validate.number("batch", batch)
    n_chips = validate.number("n_chips", n_chips)
    price_chip_hour = validate.number("price_chip_hour", price_chip_hour)
    return COST_OF_STEP(t=step_time, B=batch, n_chips=n_chips, price_chip_hour=price_chip_hour)


@validate.reports_inputs(may_be_infinite=True)
def balance_batch_with_kv(*, n_active, n_total, flops, mem_bw, bytes_param, len_ctx, bytes_tok) -> float:
    """B where compute time equals weight + KV time; ``inf`` when KV alone outpaces compute.

    Past the Goldilocks context the KV slope exceeds the compute slope and the step stays
    memory-bound at every batch, so no finite balance point exists (lecture 00:11:42).
    Scalars only (the answer switches to ``inf``, which an array formula cannot).
    """
    n_active, n_total, flops, mem_bw, bytes_param, len_ctx, bytes_tok = (
        validate.scalar(name, value) for name, value in dict(n_active=n_active, n_total=n_total, flops=flops,
                                                             mem_bw=mem_bw, bytes_param=bytes_param, len_ctx=len_ctx,
                                                             bytes_tok=bytes_tok).items())
    if len_ctx >= GOLDILOCKS_CONTEXT(N_active=n_active, FLOPs=flops, mem_bw=mem_bw, bytes_tok=bytes_tok):
        return float("inf")
    return BALANCE_BATCH_WITH_KV(N_active=n_active, N_total=n_total, FLOPs=flops, mem_bw=mem_bw,
                                 bytes_param=bytes_param, len_ctx=len_ctx, bytes_tok=bytes_tok)


def lecture_link(seconds: int) -> str:
    """A link to a moment of the lecture video (``seconds`` from its start, 0 to its 2:13:50 end)."""
    seconds = validate.number("seconds", seconds, allow_zero=True, maximum=8030)
    if np.ndim(seconds) != 0:
        raise ValueError(f"seconds must be a single number, got {validate._describe(seconds)}")
    return f"{LECTURE}?t={int(seconds)}"


# =================================================================================================
# Chapter 8: roofline versus reality. Additions that the comparison with published serving figures
# needs; every one reduces to a Chapter 1 formula in a limit the notebook derives.
# =================================================================================================

# --- MoE weight reads at small batch ----------------------------------------------------------------
EXPECTED_EXPERTS = Formula(
    n_touched, n_experts * (1 - (1 - k_active / n_experts) ** B),
    source="course derivation (Ch8): one token misses a given expert with probability 1 - k/E, "
           "B tokens routed independently and uniformly miss it with probability (1 - k/E)^B",
    note="B is the tokens routed through the layer in one step; k at B = 1, all E as B -> oo",
    domain=sp.Le(k_active, n_experts))
PARAMS_READ = Formula(
    N_read, N_fixed + L_moe * EXPECTED_EXPERTS.rhs * N_expert,
    source="course (Ch8): the fixed part is always read, each MoE layer reads only the experts touched",
    domain=sp.Le(k_active, n_experts))
T_WEIGHTS_READ = Formula(
    t_weights, PARAMS_READ.rhs * bytes_param / mem_bw,
    source="lecture 00:06:39 (E1.3) weight term with N_total replaced by the parameters actually read",
    domain=sp.Le(k_active, n_experts))

# --- Tokens per step > 1 (speculative decoding, multi-token prediction) ----------------------------
T_COMPUTE_VERIFY = Formula(
    t_compute, T_COMPUTE.rhs.subs(B, B * n_verify),
    source="lecture E1.2 with every sequence processing n_verify tokens per step (1 + drafted)")
DECODE_THROUGHPUT = Formula(
    throughput, B * tau / t_step,
    source="lecture 00:26:56 (E1.8) with tau accepted tokens per sequence per step "
           "(the second Fast Mode lever, lecture 00:01:35)")
SPEC_TOKENS = Formula(
    tau, (1 - alpha_acc ** (n_draft + 1)) / (1 - alpha_acc),
    source="Leviathan, Kalman and Matias 2023, Fast Inference from Transformers via Speculative Decoding "
           "(arXiv 2211.17192), eq. 1: the expected tokens one step keeps when gamma drafts are each accepted with "
           "probability alpha, independently, until the first rejection (the target's own token always counts)",
    note="1 at gamma = 0; tends to 1 / (1 - alpha) however deep the draft", domain=alpha_acc < 1)
SPEC_SPEEDUP = Formula(
    spec_speedup, SPEC_TOKENS.rhs * sp.Max(1, rho_step)
    / (sp.Max(1, (n_draft + 1) * rho_step) + n_draft * c_draft * sp.Max(1, rho_step)),
    source="Leviathan et al. 2023 (arXiv 2211.17192) Theorem 3.8, (1 - alpha^(gamma+1)) / ((1 - alpha)(gamma c + 1)), "
           "with the verifying step's cost from the roofline: gamma + 1 tokens per sequence multiply the compute time "
           "(T_COMPUTE_VERIFY): in units of the plain step's memory time t_mem a verifying step costs max(1, (gamma + 1) rho), "
           "a plain step max(1, rho) and a draft pass c times a plain step, rho = t_compute / t_mem",
    note="rho -> 0 (memory-bound) gives the paper's improvement factor; 1 at gamma = 0", domain=alpha_acc < 1)


def best_draft_depth(*, acceptance, draft_cost, compute_ratio=0.0, max_depth: int = 16) -> dict:
    """How many tokens speculative decoding should draft per step: the gamma in 0..``max_depth`` that maximises
    :data:`SPEC_SPEEDUP` (Leviathan et al. 2023, arXiv 2211.17192, section 3.5 does the same search).

    ``acceptance`` is the chance each drafted token is accepted (0 <= alpha < 1), ``draft_cost`` the time of one
    draft forward pass over one plain target step (c >= 0), ``compute_ratio`` the plain step's compute time over
    its memory time (rho >= 0; below 1 the step is memory-bound and verifying extra tokens is free until
    (gamma + 1) rho reaches 1). Returns ``depth`` (the best gamma), ``speedup`` and ``tokens_per_step`` there,
    and ``speedups``, the whole curve over gamma = 0..max_depth (a NumPy array, index = gamma).
    """
    alpha = validate.scalar("acceptance", acceptance, allow_zero=True)
    if alpha >= 1:
        raise ValueError(f"acceptance must be below 1 (every draft accepted has no best depth), got {acceptance!r}")
    cost = validate.scalar("draft_cost", draft_cost, allow_zero=True)
    rho = validate.scalar("compute_ratio", compute_ratio, allow_zero=True)
    depth = validate.integer("max_depth", max_depth, minimum=1, maximum=256)
    gammas = np.arange(depth + 1, dtype=float)
    zero = ("alpha_acc", "n_draft", "c_draft", "rho_step")     # no drafts, a free draft, a free verify: all meaningful
    named = {"alpha_acc": "acceptance", "c_draft": "draft_cost", "rho_step": "compute_ratio"}
    speedups = np.asarray(SPEC_SPEEDUP(alpha_acc=alpha, n_draft=gammas, c_draft=cost, rho_step=rho, allow_zero=zero,
                                       called_as=named), dtype=float)
    speedups = np.broadcast_to(speedups, gammas.shape).copy()
    best = int(np.argmax(speedups))
    return {"depth": best, "speedup": float(speedups[best]),
            "tokens_per_step": float(SPEC_TOKENS(alpha_acc=alpha, n_draft=best, allow_zero=("alpha_acc", "n_draft"))),
            "speedups": speedups}


T_ATTENTION = Formula(
    t_compute, B * n_verify * flops_attn / FLOPs,
    source="course (Ch8): attention FLOPs (QK and AV) of every processed token, at its context")

# --- Prefill with a prefix cache ------------------------------------------------------------------
T_PREFILL = Formula(
    t_prefill, len_in * (1 - hit) * (2 * N_active + flops_attn) / FLOPs,
    source="course (Ch8): only uncached prompt tokens are computed, each 2 N_active + attention FLOPs",
    note="hit = 0 is no cache; the weights, read once per forward pass, are neglected (large prefill batches)",
    domain=sp.Lt(hit, 1))

# --- Input-embedding rows (issue 21 §2.1) ----------------------------------------------------------
EMBEDDING_ROWS_READ = Formula(
    N_emb, sp.Min(B, n_vocab) * d_model,
    source="course (Ch8): a lookup reads one d_model row per token, so B tokens read at most min(B, V) rows "
           "of the V x d_model table, and no FLOPs",
    note="B is the tokens looked up in the step; at B >= V it is the whole table, as the lecture's N_total counts "
         "it. A tied table is read in full anyway, for the output projection, so this term is 0 then")
FIXED_READ = Formula(
    N_fixed, N_body + N_emb,
    source="course (Ch8): the parameters every step reads whatever the routing: the body (attention, dense MLPs, "
           "shared experts, router, norms, output head) in full, the input embedding only in the rows looked up")

# --- Prefill in mixed precision (issue 21 §2.3) --------------------------------------------------
_ROUTED_ACTIVE = L_moe * k_active * N_expert
T_PREFILL_MIXED = Formula(
    t_prefill, len_in * (1 - hit) * (2 * (N_active - _ROUTED_ACTIVE) / FLOPs + 2 * _ROUTED_ACTIVE / FLOPs_expert
                                     + flops_attn / FLOPs_attn),
    source="course (Ch8): T_PREFILL with each share of the FLOPs at its own format's peak: routed-expert matmuls "
           "at FLOPs_expert (FP4 on Blackwell), attention at FLOPs_attn (DeepSeek: 'core MLA computations ... use "
           "the BF16 format', github.com/deepseek-ai/open-infra-index, 202502OpenSourceWeek day 6), the rest at FLOPs",
    note="N_active - L_MoE k N_expert is every active parameter outside the routed experts",
    domain=sp.And(sp.Lt(hit, 1), N_active > _ROUTED_ACTIVE))

# --- Layouts: what each device holds and reads (issue 21 §2.4) ------------------------------------------
# A layout splits the weights outside the routed experts (N_dense) n_tp ways inside each attention group
# (tensor parallelism; the n_chips / n_tp groups are data-parallel replicas serving their own sequences) and the
# routed experts n_ep ways (expert parallelism). "tp": n_tp = n_ep = n_chips. DP attention + EP (DeepSeek's
# decode, "MLA/Shared Expert DP144, Routed Expert EP144"): n_tp = 1, n_ep = n_chips. Each part is
# collectives.WEIGHT_BYTES_PER_DEVICE (N bytes / n_shards) with its own N, bytes and n_shards.
_PER_DEVICE = collectives.WEIGHT_BYTES_PER_DEVICE.rhs
KV_REPLICATION = Formula(
    r_kv, n_tp * sp.ceiling(kv_heads / n_tp) / kv_heads,
    source="each of n_tp devices holds ceil(KV heads / n_tp) heads of every sequence in its group; with fewer KV "
           "heads than devices the heads are copied (vLLM QKVParallelLinear replicates KV heads when tp > heads). "
           "MLA caches one latent shared by all heads (kv_heads = 1): 'If we use tensor parallelism on 8 GPUs, it "
           "will lead to duplicated KV cache' (lmsys.org/blog/2024-12-04-sglang-v0-4)")
WEIGHTS_PER_DEVICE = Formula(
    c_weights,
    _PER_DEVICE.subs({N_total: N_dense, n_shards: n_tp})
    + _PER_DEVICE.subs({N_total: L_moe * (n_experts + n_redundant) * N_expert, bytes_param: bytes_expert,
                        n_shards: n_ep}),
    source="collectives.WEIGHT_BYTES_PER_DEVICE (lecture E4.2) twice: the dense part over the n_tp devices of an "
           "attention group, the routed experts (with redundant copies) over the n_ep expert-parallel devices; "
           "DeepSeek decode: 'each GPU manages 2 routed experts and 1 shared expert' (open-infra-index, day 6)")
KV_PER_DEVICE = Formula(
    c_kv, B * len_ctx * bytes_tok * r_kv / n_chips,
    source="lecture E1.3's KV bytes split over the n_chips devices, r_kv times over where heads are copied")
BATCH_THAT_FITS_PER_DEVICE = Formula(
    B, solve(sp.Eq(WEIGHTS_PER_DEVICE.rhs + KV_PER_DEVICE.rhs, hbm_capacity), B)[0],
    source="lecture 00:23:43-00:26:56 on one device: its weights and its share of the KV fill its HBM",
    note="hbm_capacity is one device's here; with n_tp = n_ep = n_chips and r_kv = 1 it is BATCH_THAT_FITS",
    domain=hbm_capacity > WEIGHTS_PER_DEVICE.rhs)
T_WEIGHTS_PER_DEVICE = Formula(
    t_weights,
    (_PER_DEVICE.subs({N_total: N_body, n_shards: n_tp}) + _PER_DEVICE.subs({N_total: N_emb, n_shards: n_chips})
     + _PER_DEVICE.subs({N_total: L_moe * n_touched * N_expert, bytes_param: bytes_expert, n_shards: n_ep})) / mem_bw,
    source="T_WEIGHTS_READ on one device: its share of the body, of the embedding rows its own tokens look up, "
           "and of the experts touched; mem_bw is one device's",
    note="an average over devices: the busiest device is never faster, so this stays a lower bound")
T_KV_PER_DEVICE = Formula(t_kv, KV_PER_DEVICE.rhs / mem_bw,
                          source="lecture E1.3's KV term on one device: its share of the KV over its own HBM")


@validate.reports_inputs
def expected_experts(*, n_experts: float, k: float, tokens) -> float:
    """Expected routed experts one MoE layer touches when ``tokens`` tokens are routed in a step.

    ``E · (1 − (1 − k/E)^B)`` (:data:`EXPECTED_EXPERTS`, course derivation, Chapter 8), assuming each
    token picks its top-k uniformly and independently. It is exactly ``k`` at B = 1 and tends to
    all ``E`` experts as B grows: the lecture's "every step reads every weight" (E1.3) is that limit.
    Real routers are not uniform, so more tokens share popular experts and fewer experts are touched;
    the formula is an upper bound on bytes read in that sense.
    """
    n_experts = validate.number("n_experts", n_experts)
    k = validate.number("k", k)
    tokens = validate.number("tokens", tokens)
    return EXPECTED_EXPERTS(n_experts=n_experts, k_active=k, B=tokens,
                            called_as={"k_active": "k", "B": "tokens"})


def _moe_split(model) -> dict:
    """The model's parameters as the read and layout formulas need them.

    ``N_dense``: every parameter outside the routed experts, as stored; ``N_table``: the input-embedding
    table when it is not tied to the head (0 when tied: the head reads it in full); ``N_body`` = N_dense − N_table;
    the MoE layers, one expert's parameters, E and k (E = k = 1 and no experts for a dense model).
    """
    routed_total = model.params_breakdown()["experts_routed"] if model.is_moe else 0
    dense = model.params_total - routed_total
    table = 0 if model.tied_embeddings else model.vocab_size * model.d_model
    split = {"N_dense": dense, "N_table": table, "N_body": dense - table}
    if not model.is_moe:
        return split | {"L_moe": 0, "N_expert": 0, "n_experts": 1, "k": 1}
    return split | {"L_moe": model.n_moe_layers, "N_expert": model.expert_params(),
                    "n_experts": model.n_routed_experts, "k": model.experts_per_token}


def _embedding_read(model, split: dict, tokens, embedding_rows: bool):
    """Input-embedding parameters a step reads for ``tokens`` lookups (:data:`EMBEDDING_ROWS_READ`)."""
    if not split["N_table"]:
        return 0.0 * np.asarray(tokens) if np.ndim(tokens) else 0.0
    if not embedding_rows:
        return float(split["N_table"]) + (0.0 * np.asarray(tokens) if np.ndim(tokens) else 0.0)
    return EMBEDDING_ROWS_READ(B=tokens, n_vocab=model.vocab_size, d_model=model.d_model,
                               called_as={"B": "tokens", "n_vocab": "model", "d_model": "model"})


def params_read(model, *, tokens, embedding_rows: bool = True) -> float:
    """Parameters one decode step reads from HBM when ``tokens`` tokens are looked up and routed in it.

    ``N_read = N_fixed + L_MoE · E(1 − (1 − k/E)^B) · N_expert`` (:data:`PARAMS_READ`, Chapter 8), with
    ``N_fixed = N_body + min(B, V) · d_model`` (:data:`FIXED_READ`, :data:`EMBEDDING_ROWS_READ`): the body
    (attention, dense MLPs, shared experts, router, norms, output head) is read in full, the input-embedding
    table only in the rows the step looks up. At B ≥ V, and for an MoE at large B, this is N_total; at batch 1
    an MoE reads the body, one embedding row and k experts per layer. A tied table counts once, in full, as the
    head. ``embedding_rows=False`` reads the whole table every step, as the lecture's N_total does.
    """
    from . import models as _models

    model = _models.resolve(model)
    tokens = validate.number("tokens", tokens)
    embedding_rows = validate.boolean("embedding_rows", embedding_rows)
    split = _moe_split(model)
    fixed = FIXED_READ(N_body=split["N_body"], N_emb=_embedding_read(model, split, tokens, embedding_rows),
                       allow_zero=("N_emb",))
    if not model.is_moe:
        return fixed
    return PARAMS_READ(N_fixed=fixed, L_moe=split["L_moe"], N_expert=split["N_expert"],
                       n_experts=split["n_experts"], k_active=split["k"], B=tokens)


def attention_flops(model, context_len, *, absorbed: bool = False) -> float:
    """Attention FLOPs (QKᵀ and AV) of one new token at ``context_len`` tokens of context.

    ``models.Model.attention_flops_per_token`` (2·n_heads·(d_qk + d_v)·L per layer, 2 FLOPs per
    multiply-add). With ``absorbed=True`` an MLA model attends in its latent space, as DeepSeek's
    decode kernels do (DeepSeek-V2, arXiv 2405.04434, §2.1.2, "absorb" W_UK into W_Q and W_UV into
    W_O): d_qk = kv_lora_rank + qk_rope_head_dim and d_v = kv_lora_rank (576 and 512 for DeepSeek-V3,
    3.4× the un-absorbed 192 + 128). ``context_len = 0`` gives 0. ``absorbed`` changes nothing for
    attention without a latent.
    """
    from . import models as _models

    model = _models.resolve(model)
    context_len = validate.scalar("context_len", context_len, allow_zero=True, maximum=validate.COUNT_LIMIT)
    absorbed = validate.boolean("absorbed", absorbed)
    if context_len < 1:
        return 0.0
    plain = model.attention_flops_per_token(int(round(context_len)))
    if absorbed and model.kv_lora_rank:
        unabsorbed = model.qk_nope_head_dim + model.qk_rope_head_dim + model.v_head_dim
        latent = 2 * model.kv_lora_rank + model.qk_rope_head_dim
        return plain * latent / unabsorbed
    return plain


def _unit(deployment):
    """``deployment`` as something with flops, hbm_bandwidth and n_chips: a collectives.Deployment as
    it is, else a chip or system (object or preset name) as :func:`hardware.resolve_chip` finds it."""
    from . import collectives, hardware

    if isinstance(deployment, collectives.Deployment):
        return deployment
    return hardware.resolve_chip(deployment, "deployment")


def _peak(unit, fmt: str, name: str = "compute_dtype") -> float:
    available = dict(unit.flops)
    if not isinstance(fmt, str) or fmt not in available:
        raise ValueError(f"{name} must be one of {sorted(available)} for {unit.name}, got {validate._describe(fmt)}")
    return available[fmt]


# --- Layouts (issue 21 §2.4) ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Layout:
    """How a deployment's n devices share one model (Chapter 8).

    - ``attention_tp``: how many devices split the weights outside the routed experts (attention, dense
      MLPs, shared experts, router, embeddings, head) by tensor parallelism. The n devices form
      n / attention_tp data-parallel groups; each group holds one full copy of those weights and decodes its
      own share of the batch. ``None`` means all n ("tp": everything sharded n ways); 1 is DP attention
      (every device a full copy: DeepSeek's "MLA/Shared Expert DP144").
    - The routed experts are always spread over all n devices (expert parallelism; tensor-parallel experts
      hold and read the same bytes per device), with ``redundant_experts`` extra expert copies per MoE layer
      (DeepSeek's decode: 32, so (256 + 32) / 144 = 2 per GPU).
    - ``pipeline_stages``: how many of an attention group's ``attention_tp`` devices are pipeline stages
      (default 1). A group of ``tp × pp`` devices holds its weights ``tp · pp`` ways, but each KV head is split
      only over the ``tp`` devices of one stage, so KV heads are copied only where ``tp`` exceeds them
      (:data:`KV_REPLICATION` with ``n_tp = attention_tp / pipeline_stages``).

    ``roofline.LAYOUTS["tp"]`` and ``roofline.LAYOUTS["dp_ep"]`` are the two usual ones; every ``layout=``
    argument also takes their names.
    """

    attention_tp: int | None = None
    redundant_experts: int = 0
    pipeline_stages: int = 1

    def __post_init__(self):
        if self.attention_tp is not None:
            object.__setattr__(self, "attention_tp", validate.integer("attention_tp", self.attention_tp))
        object.__setattr__(self, "pipeline_stages", validate.integer("pipeline_stages", self.pipeline_stages))
        if self.pipeline_stages > 1 and (self.attention_tp is None or self.attention_tp % self.pipeline_stages):
            raise ValueError(f"pipeline_stages must divide attention_tp (the group of tp x pp devices), got "
                             f"pipeline_stages={self.pipeline_stages}, attention_tp={self.attention_tp}")
        object.__setattr__(self, "redundant_experts",
                           validate.integer("redundant_experts", self.redundant_experts, minimum=0))

    @property
    def name(self) -> str:
        dense = "tp" if self.attention_tp is None else ("dp_ep" if self.attention_tp == 1
                                                         else f"dp_tp{self.attention_tp}_ep")
        return (dense + (f"_pp{self.pipeline_stages}" if self.pipeline_stages > 1 else "")
                + (f"+{self.redundant_experts} redundant" if self.redundant_experts else ""))


LAYOUTS = {"tp": Layout(), "dp_ep": Layout(attention_tp=1)}


def resolve_layout(layout=None) -> Layout | None:
    """``layout`` as a :class:`Layout`: one itself, a name from :data:`LAYOUTS` ("tp", "dp_ep"), or None
    (the pooled bound: n devices act as one big chip, KV split evenly; every bound before issue 21)."""
    if layout is None or isinstance(layout, Layout):
        return layout
    if isinstance(layout, str) and layout in LAYOUTS:
        return LAYOUTS[layout]
    raise ValueError(f"layout must be None, a roofline.Layout or one of {sorted(LAYOUTS)}, "
                     f"got {validate._describe(layout)}")


def _devices(deployment):
    """(one device, how many) of a deployment, a hardware.System or a bare chip."""
    n = int(getattr(deployment, "n_chips", 1))
    return getattr(deployment, "chip", deployment), n


def _placement(model, deployment, chosen: Layout | None) -> dict:
    """n_tp, n_ep, n_chips, redundant experts, KV replication and one device, for the layout formulas."""
    device, n = _devices(deployment)
    if chosen is None:
        return {"n_tp": n, "n_ep": n, "n_chips": n, "n_redundant": 0, "r_kv": 1.0, "device": device}
    n_tp = n if chosen.attention_tp is None else chosen.attention_tp
    if n % n_tp:
        raise ValueError(f"layout attention_tp must divide the deployment's {n} devices, got {n_tp}")
    heads = 1 if model.kv_lora_rank else model.n_kv_heads
    return {"n_tp": n_tp, "n_ep": n, "n_chips": n, "n_redundant": chosen.redundant_experts if model.is_moe else 0,
            "r_kv": KV_REPLICATION(n_tp=n_tp // chosen.pipeline_stages, kv_heads=heads), "device": device}


def _weights_per_device(split: dict, place: dict, bytes_w: float, bytes_e: float, called_as=None) -> float:
    """``called_as`` names the caller's parameters behind ``bytes_param``/``bytes_expert`` in an error."""
    return WEIGHTS_PER_DEVICE(N_dense=split["N_dense"], bytes_param=bytes_w, n_tp=place["n_tp"],
                              L_moe=split["L_moe"], n_experts=split["n_experts"], n_redundant=place["n_redundant"],
                              N_expert=split["N_expert"], bytes_expert=bytes_e, n_ep=place["n_ep"],
                              allow_zero=("L_moe", "N_expert", "n_redundant"), called_as=called_as)


def device_memory(model, deployment, *, layout=None, batch=0, len_ctx=0, weight_dtype="fp8",
                  expert_weight_dtype=None, kv_dtype="bf16") -> dict:
    """What one device of ``deployment`` holds under ``layout``: weights, KV cache of ``batch`` sequences of
    ``len_ctx`` tokens (the whole deployment's batch), and the room left.

    ``c_weights = N_dense · bytes / n_tp + L_MoE (E + redundant) N_expert · bytes_expert / n_ep``
    (:data:`WEIGHTS_PER_DEVICE`) and ``c_kv = B · len_ctx · bytes_tok · r_kv / n`` (:data:`KV_PER_DEVICE`,
    :data:`KV_REPLICATION`). Returns ``{"weights", "kv", "total", "free", "fits", "r_kv", "n_tp", "n_ep",
    "n_chips", "layout"}``, bytes per device (``free``: HBM left, 0 when it overflows; ``fits``: total <= HBM).
    ``batch = 0`` or ``len_ctx = 0``: no KV.
    """
    from . import models as _models

    model = _models.resolve(model)
    deployment = _unit(deployment)
    chosen = resolve_layout(layout)
    batch = validate.scalar("batch", batch, allow_zero=True, maximum=validate.COUNT_LIMIT)
    len_ctx = validate.scalar("len_ctx", len_ctx, allow_zero=True, maximum=validate.COUNT_LIMIT)
    bytes_w = _models._bytes_per("weight_dtype", weight_dtype)
    bytes_e = bytes_w if expert_weight_dtype is None else _models._bytes_per("expert_weight_dtype",
                                                                              expert_weight_dtype)
    _models._bytes_per("kv_dtype", kv_dtype)
    split, place = _moe_split(model), _placement(model, deployment, chosen)
    weights = _weights_per_device(split, place, bytes_w, bytes_e, called_as={
        "bytes_param": "weight_dtype",
        "bytes_expert": "weight_dtype" if expert_weight_dtype is None else "expert_weight_dtype"})
    kv = 0.0
    if batch > 0 and len_ctx > 0:
        stored = model.kv_bytes_per_token(kv_dtype, context_len=max(1, int(round(len_ctx))))
        kv = KV_PER_DEVICE(B=batch, len_ctx=len_ctx, bytes_tok=stored, r_kv=place["r_kv"], n_chips=place["n_chips"])
    capacity = place["device"].hbm_capacity
    return {"weights": weights, "kv": kv, "total": weights + kv, "free": max(0.0, capacity - weights - kv),
            "fits": weights + kv <= capacity, "r_kv": place["r_kv"], "n_tp": place["n_tp"], "n_ep": place["n_ep"],
            "n_chips": place["n_chips"], "layout": "pooled" if chosen is None else chosen.name}


def _default_compute_dtype(weight_dtype, compute_dtype):
    """The format the matmuls run in: ``compute_dtype``, or the weights' own format when it is a name
    (``ValueError`` when the weights are given as a byte count and no compute format is)."""
    if compute_dtype is not None:
        return compute_dtype
    if not isinstance(weight_dtype, str):
        raise ValueError(f"compute_dtype must be given when weight_dtype is a byte count, got "
                         f"weight_dtype={weight_dtype!r} and no compute_dtype")
    return weight_dtype


@validate.reports_inputs
def decode_bound(model, deployment, *, batch, len_ctx, weight_dtype: str = "fp8",
                 expert_weight_dtype: str | None = None, compute_dtype: str | None = None,
                 expert_compute_dtype: str | None = None, attention_dtype: str | None = None,
                 kv_dtype: str = "bf16", tokens_per_step: float = 1.0, tokens_verified: float | None = None,
                 attention: bool = True, absorbed: bool = True, expected_experts_read: bool = True,
                 step_form: str = "max", layout=None, embedding_rows: bool = True) -> dict:
    """The roofline bound on one decode step of ``model`` on ``deployment``, with Chapter 8's fixes.

    ``deployment`` is anything with ``flops``, ``hbm_bandwidth`` and ``n_chips`` (a
    :class:`lecture_lib.collectives.Deployment`, a ``hardware.System``; a bare chip counts as one).
    ``batch`` sequences share the deployment, each with ``len_ctx`` tokens of context (0: no KV).

    Number formats (mixed precision): ``weight_dtype`` is every weight outside the routed experts
    (attention, dense MLPs, shared experts, router, embeddings, head), ``expert_weight_dtype`` the routed
    experts' (default: the same); ``compute_dtype``, ``expert_compute_dtype`` and ``attention_dtype`` pick
    the peak FLOP/s of each share of the matmuls.

    ``layout`` (None, "tp", "dp_ep" or a :class:`Layout`) says what each device holds and reads: the
    times are then one device's, which all devices share (:data:`T_WEIGHTS_PER_DEVICE`,
    :data:`T_KV_PER_DEVICE`). None pools the devices into one big chip (weights and KV split evenly).

    Times (seconds), all from this module's Formulas:

    - compute: ``2 B n_verify N/FLOPs`` per number format (:data:`T_COMPUTE_VERIFY`), plus attention
      ``B n_verify FLOP_attn / FLOPs`` (:data:`T_ATTENTION`, MLA absorbed when ``absorbed``); spread evenly
      over the devices, so it is the same for every layout;
    - weights: the body in full, min(B n_verify, V) input-embedding rows (:data:`EMBEDDING_ROWS_READ`; the
      whole table with ``embedding_rows=False``) and the expected experts touched by ``B · n_verify``
      routed tokens (:data:`PARAMS_READ`; all of them with ``expected_experts_read=False``), each device
      reading its share;
    - KV: ``B len_ctx bytes_tok r_kv / (n mem_bw)`` per device, sliding windows counted, in ``kv_dtype``.

    Combined as in :func:`decode_step` (``step_form``). ``tokens_per_step`` (τ) is the tokens each
    sequence gains per step (accepted drafts + 1); ``tokens_verified`` (default τ) the tokens it
    processes. Returns the times, ``"tokens_per_s"`` = B τ / t (:data:`DECODE_THROUGHPUT`),
    ``"tokens_per_s_per_seq"``, ``"params_read"``, ``"experts_touched"``, ``"n_chips"`` and what one device
    holds (:func:`device_memory`: ``"weights_per_device"``, ``"kv_per_device"``, ``"fits"``, ``"layout"``).
    """
    from . import models as _models

    model = _models.resolve(model)
    deployment = _unit(deployment)
    batch = validate.scalar("batch", batch, maximum=validate.COUNT_LIMIT)
    len_ctx = validate.scalar("len_ctx", len_ctx, allow_zero=True, maximum=validate.COUNT_LIMIT)
    tokens_per_step = validate.scalar("tokens_per_step", tokens_per_step, maximum=validate.COUNT_LIMIT)
    verified = tokens_per_step if tokens_verified is None else tokens_verified
    verified = validate.scalar("tokens_verified", verified, maximum=validate.COUNT_LIMIT)
    _models._bytes_per("kv_dtype", kv_dtype)
    attention = validate.boolean("attention", attention)
    absorbed = validate.boolean("absorbed", absorbed)
    expected_experts_read = validate.boolean("expected_experts_read", expected_experts_read)
    embedding_rows = validate.boolean("embedding_rows", embedding_rows)
    chosen = resolve_layout(layout)
    if verified < tokens_per_step:
        raise ValueError(f"tokens_verified must be >= tokens_per_step (a step cannot accept more tokens "
                         f"than it processes), got {verified!r} < {tokens_per_step!r}")
    validate.choice("step_form", step_form, STEP_FORMS)
    _models._bytes_per("weight_dtype", weight_dtype)
    compute_dtype = _default_compute_dtype(weight_dtype, compute_dtype)
    expert_compute_dtype = compute_dtype if expert_compute_dtype is None else expert_compute_dtype
    attention_dtype = compute_dtype if attention_dtype is None else attention_dtype
    expert_weight_dtype = weight_dtype if expert_weight_dtype is None else expert_weight_dtype
    for name, fmt in (("compute_dtype", compute_dtype), ("expert_compute_dtype", expert_compute_dtype),
                      ("attention_dtype", attention_dtype)):
        _peak(deployment, fmt, name)
    bytes_w = _models._bytes_per("weight_dtype", weight_dtype)
    bytes_e = _models._bytes_per("expert_weight_dtype", expert_weight_dtype)
    tokens = batch * verified

    split = _moe_split(model)
    place = _placement(model, deployment, chosen)
    routed_active = split["L_moe"] * split["k"] * split["N_expert"]
    other_active = model.params_active - routed_active
    compute = T_COMPUTE_VERIFY(B=batch, n_verify=verified, N_active=other_active,
                               FLOPs=_peak(deployment, compute_dtype))
    if routed_active:
        compute = compute + T_COMPUTE_VERIFY(B=batch, n_verify=verified, N_active=routed_active,
                                             FLOPs=_peak(deployment, expert_compute_dtype, "expert_compute_dtype"))
    attn = attention_flops(model, len_ctx, absorbed=absorbed) if attention else 0.0
    if attn:
        compute = compute + T_ATTENTION(B=batch, n_verify=verified, flops_attn=attn,
                                        FLOPs=_peak(deployment, attention_dtype, "attention_dtype"))

    if model.is_moe and expected_experts_read:
        touched = expected_experts(n_experts=split["n_experts"], k=split["k"], tokens=tokens)
    else:
        touched = split["n_experts"] if model.is_moe else 0
    embedding = _embedding_read(model, split, tokens, embedding_rows)
    device_bw = place["device"].hbm_bandwidth
    weights = T_WEIGHTS_PER_DEVICE(N_body=split["N_body"], N_emb=embedding, bytes_param=bytes_w, n_tp=place["n_tp"],
                                   n_chips=place["n_chips"], L_moe=split["L_moe"], n_touched=touched,
                                   N_expert=split["N_expert"], bytes_expert=bytes_e, n_ep=place["n_ep"],
                                   mem_bw=device_bw, allow_zero=("N_emb", "L_moe", "n_touched", "N_expert"))

    if len_ctx > 0:
        bytes_tok_value = model.kv_bytes_read_per_token(kv_dtype, context_len=max(1, int(round(len_ctx))))
        kv = T_KV_PER_DEVICE(B=batch, len_ctx=len_ctx, bytes_tok=bytes_tok_value, r_kv=place["r_kv"],
                             n_chips=place["n_chips"], mem_bw=device_bw)
    else:
        kv = 0.0
    total = max(compute, weights + kv) if step_form == "max" else kv + max(compute, weights)
    rate = DECODE_THROUGHPUT(B=batch, tau=tokens_per_step, t_step=total)
    held = device_memory(model, deployment, layout=chosen, batch=batch, len_ctx=len_ctx, weight_dtype=bytes_w,
                         expert_weight_dtype=bytes_e, kv_dtype=kv_dtype)
    return {"t_compute": compute, "t_weights": weights, "t_kv": kv, "t": total, "tokens_per_s": rate,
            "tokens_per_s_per_seq": rate / batch,
            "params_read": split["N_body"] + embedding + split["L_moe"] * touched * split["N_expert"],
            "experts_touched": touched, "n_chips": place["n_chips"], "weights_per_device": held["weights"],
            "kv_per_device": held["kv"], "fits": held["fits"], "layout": held["layout"]}


@validate.reports_inputs
def prefill_bound(model, deployment, *, len_in, hit_rate: float = 0.0, compute_dtype: str = "fp8",
                  expert_compute_dtype: str | None = None, attention_dtype: str | None = None,
                  attention: bool = True, layout=None, weight_dtype="fp8", expert_weight_dtype=None,
                  dense_devices: int | None = None, expert_devices: int | None = None) -> dict:
    """The compute bound on prefilling prompts of ``len_in`` tokens, with a prefix-cache hit rate.

    ``t_prefill = len_in (1 − h) (2 N_other / FLOPs + 2 N_routed / FLOPs_expert + FLOP_attn / FLOPs_attn)``
    per request (:data:`T_PREFILL_MIXED`; :data:`T_PREFILL` when every share runs at one peak), with
    ``N_routed = L_MoE k N_expert`` the routed-expert active parameters and ``N_other`` the rest. Routed-expert
    matmuls run in ``expert_compute_dtype``, attention in ``attention_dtype`` (DeepSeek runs core MLA in BF16
    while the GEMMs are FP8), both defaulting to ``compute_dtype``. Cached tokens are not recomputed (their KV
    is read instead, which is neglected here, as is the one weight read per forward pass). The uncached tokens
    attend to contexts from ``h·len_in`` to ``len_in``, so FLOP_attn is taken at the mean context
    ``len_in (1 + h) / 2`` (un-absorbed form: prefill runs attention in full width).

    The compute is spread evenly over the devices under every ``layout`` (a stream of prompts keeps every
    device busy); the layout (with ``weight_dtype`` and ``expert_weight_dtype``, the stored formats) sets only
    what each device holds: ``"weights_per_device"`` and ``"fits"`` (the weights alone against one device's HBM).
    One request alone runs on its own replica: ``dense_devices`` (its TP group; pipeline stages run one after
    another) for attention and everything but the routed experts, ``expert_devices`` (its EP group) for those;
    each peak is then that many devices' share of the deployment's.
    Returns ``{"t_prefill", "input_tokens_per_s", "computed_tokens_per_s", ...}``: input tokens/s counts
    cached tokens too, as providers report it (DeepSeek's 73.7k/s "including cache hits").
    """
    from . import models as _models

    model = _models.resolve(model)
    deployment = _unit(deployment)
    len_in = validate.scalar("len_in", len_in, maximum=validate.COUNT_LIMIT)
    hit_rate = validate.scalar("hit_rate", hit_rate, allow_zero=True)
    attention = validate.boolean("attention", attention)
    chosen = resolve_layout(layout)
    if hit_rate >= 1:
        raise ValueError(f"hit_rate must be in [0, 1) (1 would mean nothing to compute), got {hit_rate!r}")
    expert_compute_dtype = compute_dtype if expert_compute_dtype is None else expert_compute_dtype
    attention_dtype = compute_dtype if attention_dtype is None else attention_dtype
    n_all = getattr(deployment, "n_chips", 1)
    dense_share, expert_share = (1.0 if count is None else validate.integer(label, count, maximum=n_all) / n_all
                                 for label, count in (("dense_devices", dense_devices),
                                                      ("expert_devices", expert_devices)))
    split = _moe_split(model)
    attn = attention_flops(model, len_in * (1 + hit_rate) / 2) if attention else 0.0
    seconds = T_PREFILL_MIXED(len_in=len_in, hit=hit_rate, N_active=model.params_active, L_moe=split["L_moe"],
                              k_active=split["k"], N_expert=split["N_expert"], flops_attn=attn,
                              FLOPs=_peak(deployment, compute_dtype) * dense_share,
                              FLOPs_expert=_peak(deployment, expert_compute_dtype, "expert_compute_dtype")
                              * expert_share,
                              FLOPs_attn=_peak(deployment, attention_dtype, "attention_dtype") * dense_share,
                              allow_zero=("hit", "flops_attn", "L_moe", "N_expert"))
    held = device_memory(model, deployment, layout=chosen, weight_dtype=weight_dtype,
                         expert_weight_dtype=expert_weight_dtype)
    return {"t_prefill": seconds, "input_tokens_per_s": len_in / seconds,
            "computed_tokens_per_s": len_in * (1 - hit_rate) / seconds,
            "weights_per_device": held["weights"], "fits": held["fits"], "layout": held["layout"]}


# --- How many sequences fit (the capacity wall that caps B in a throughput bound) ------------------
BATCH_THAT_FITS = Formula(
    B, (hbm_capacity - N_total * bytes_param) / (len_ctx * bytes_tok),
    source="lecture 00:23:43-00:26:56: HBM holds the weights once and every sequence's KV cache",
    domain=hbm_capacity > N_total * bytes_param)


@validate.reports_inputs
def batch_that_fits(model, deployment, *, len_ctx, weight_bytes: float, kv_dtype="bf16",
                    expert_weight_bytes=None, layout=None) -> float:
    """The largest batch whose KV caches fit beside the weights in the deployment's HBM.

    Pooled (``layout=None``): ``B_fit = (C_HBM − N_total · bytes_param) / (len_ctx · bytes_tok)``
    (:data:`BATCH_THAT_FITS`). With a layout, each device holds its :data:`WEIGHTS_PER_DEVICE` and its share
    of the KV, r_kv times over where KV heads are copied (:data:`BATCH_THAT_FITS_PER_DEVICE`): DP attention
    stores the dense weights once per device, which leaves less room for KV. ``weight_bytes`` is the format of
    the weights outside the routed experts, ``expert_weight_bytes`` the experts' (default: the same).
    Activations, fragmentation and the engine's reserve are ignored, so the real batch is smaller.
    ``ValueError`` if the weights alone do not fit.
    """
    from . import models as _models

    model = _models.resolve(model)
    deployment = _unit(deployment)
    len_ctx = validate.scalar("len_ctx", len_ctx, maximum=validate.COUNT_LIMIT)
    size = _models._bytes_per("weight_bytes", weight_bytes)
    size_e = size if expert_weight_bytes is None else _models._bytes_per("expert_weight_bytes", expert_weight_bytes)
    chosen = resolve_layout(layout)
    _models._bytes_per("kv_dtype", kv_dtype)
    split, place = _moe_split(model), _placement(model, deployment, chosen)
    weights = _weights_per_device(split, place, size, size_e)
    capacity = place["device"].hbm_capacity
    if weights >= capacity:
        raise ValueError(f"weight_bytes={weight_bytes!r}: {model.name}'s weights per device "
                         f"({weights / 1e9:.0f} GB) do not fit in {capacity / 1e9:.0f} GB "
                         f"(layout {'pooled' if chosen is None else chosen.name})")
    per_token = model.kv_bytes_per_token(kv_dtype, context_len=max(1, int(round(len_ctx))))
    return BATCH_THAT_FITS_PER_DEVICE(
        N_dense=split["N_dense"], bytes_param=size, n_tp=place["n_tp"], L_moe=split["L_moe"],
        n_experts=split["n_experts"], n_redundant=place["n_redundant"], N_expert=split["N_expert"],
        bytes_expert=size_e, n_ep=place["n_ep"], len_ctx=len_ctx, bytes_tok=per_token, r_kv=place["r_kv"],
        n_chips=place["n_chips"], hbm_capacity=capacity, allow_zero=("L_moe", "N_expert", "n_redundant"),
        called_as={"bytes_param": "weight_bytes", "bytes_expert": "expert_weight_bytes"})
