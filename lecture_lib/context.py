"""Chapter 6: deducing long-context memory costs from API pricing (lecture 01:33:02-02:04:02).

The same roofline as Chapter 1 (:mod:`lecture_lib.roofline`), read along new axes:

- **context length** (E6.1): compute per step is flat, memory is an offset (weights) plus a slope
  (KV), so the cost per token has a kink where the KV slope takes over. A provider that prices near
  cost puts a price step there: Gemini 3.1 Pro's step at 200K tokens.
- **the price step, inverted** (E6.2): at the kink, KV time = compute time, and the batch cancels,
  so ``bytes_tok = mem_bw/FLOPs x N_active/len_ctx`` ≈ 1/300 x 100B/200K ≈ 1.7 kB.
- **architecture** (E6.3): bytes per token = unique-KV layers x 2 x d_head x KV heads x bytes.
- **tokens per pass** (E6.4): prefill (many tokens per pass) is compute-bound, decode (one) is
  memory-bound; output priced 5x input means decode runs at ~1/5 of prefill's MFU.
- **attention's own FLOPs** (E6.5): linear in context per token, small until very long contexts.
- **where to keep KV** (E6.6, E6.7): each storage tier costs ``C_retrieve + T_hold C_hold``; a
  tier's two costs balance at its drain time Cap/BW, and the lower envelope picks the tier.

Conventions as in Chapter 1: ``FLOPs`` is vendor FLOP/s (2 per multiply-add); the board's "FLOPs"
are multiplies (``mults``). The lecture's 1/300 is multiplies per *FP8* byte: see
:data:`KV_BYTES_FROM_RATIO`, where the weight bytes per multiply make the FP8/FP4 difference explicit.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import sympy as sp

from . import hardware, models, roofline, validate
from .catalogue import Catalogue
from .formula import Formula, simplify, solve
from .symbols import (B, FLOPs, N_active, T_hold, attn_layers, attn_sparsity, bw_tier,
                      bytes_kv, bytes_tok, c_hold, c_retrieve, cap_tier, cost_kv, cost_rel, cost_token,
                      flops_attn, head_dim, kv_heads, kv_layers, len_attn, len_cover, len_ctx, len_ctx_star,
                      len_kink, len_pass, mem_bw, mfu_decode, mfu_prefill, mults, price_device, price_input,
                      price_output, price_step, q_heads, ratio_hw, t, t_compute, t_drain_tier, t_token,
                      B_live, B_pool, pool_saving, r_out_in, r_slow, util)

SECONDS_PER_HOUR = 3600
PER_MILLION = 1e6

# --- The lecture's numbers (lecture notes §6.2) ---------------------------------------------------
LECTURE_N_ACTIVE = 100e9        # "say 100 billion active parameters" (01:37:28)
LECTURE_CROSSOVER = 200e3       # Gemini 3.1 Pro's price step (01:33:24)
LECTURE_RATIO = 300             # multiplies per byte, "1/300" (01:37:28)
LECTURE_OUTPUT_TO_INPUT = 5     # output priced 5x input (01:41:23, 01:47:43)
LECTURE_GPU_PRICE = 2.0         # "$2/hour per GPU or something like that" (00:14:31)
LECTURE_DRAIN_TIMES = {"HBM": 20e-3, "host DRAM": 3.0, "flash": 60.0, "disk": 3600.0}
"""Reiner's drain times (02:01:44): HBM 20 ms, DDR "1-10 s" (3 s: the middle in log), flash ~1 min, disk ~1 hour."""
LECTURE_DRAIN_LABELS = {"HBM": "20 ms", "host DRAM": "1-10 s", "flash": "~1 min", "disk": "~1 hour"}

# =============================================================== E6.1 cost against context length
T_COMPUTE = roofline.T_COMPUTE
T_MEM = roofline.T_MEM
T_STEP = roofline.T_STEP
KINK_CONTEXT = Formula(len_kink, solve(sp.Eq(roofline.T_COMPUTE.rhs, roofline.T_MEM.rhs), len_ctx)[0],
                       source="lecture 01:34:24 (E6.1): the context where t_mem catches up with the flat t_compute",
                       note="at a finite batch the weight fetch uses some bandwidth, so the kink comes earlier "
                            "than the large-batch (Goldilocks) context",
                       domain=roofline.T_COMPUTE.rhs > roofline.T_WEIGHTS.rhs)
RELATIVE_COST = Formula(cost_rel, sp.Max(1, len_ctx / len_ctx_star),
                        source="lecture 01:34:24-01:35:36: at a large batch, cost per token is flat up to the "
                               "crossover and grows in proportion to context after it")
LONG_TIER_COVERS = Formula(len_cover, solve(sp.Eq(RELATIVE_COST.rhs.args[1], price_step), len_ctx)[0],
                           source="course derivation from E6.1: a long-context price r times the short one "
                                  "pays for contexts up to r times the crossover")

# =============================================================== E6.2 bytes per token from the price step
_T_KV_BOARD = B * len_ctx * bytes_tok / mem_bw
KV_BYTES_FROM_PRICE_STEP_BOARD = Formula(
    bytes_tok, solve(sp.Eq(_T_KV_BOARD, roofline.T_COMPUTE_BOARD.rhs), bytes_tok)[0],
    source="lecture 01:36:14-01:37:52 (E6.2): KV time = compute time at the price step; B cancels")
KV_BYTES_FROM_PRICE_STEP = Formula(
    bytes_tok, solve(sp.Eq(roofline.T_KV.rhs, roofline.T_COMPUTE.rhs), bytes_tok)[0],
    source="lecture 01:36:14 (E6.2), with 2 FLOPs per multiply-add")
_FLOPS_FROM_RATIO = solve(sp.Eq(roofline.HARDWARE_RATIO.rhs, ratio_hw), FLOPs)[0]
KV_BYTES_FROM_RATIO = Formula(
    bytes_tok, simplify(KV_BYTES_FROM_PRICE_STEP.rhs.subs(FLOPs, _FLOPS_FROM_RATIO)),
    source="lecture 01:37:28: 1/300 x 100B/200K, with the hardware ratio R = multiplies x bytes per weight "
           "/ bytes per second",
    note="bytes_param is the width of the multiplies: 1 for FP8 (the lecture's 1/300 per byte), 0.5 for FP4, "
         "which halves the answer")
KV_BYTES_BOARD_SLIP = Formula(
    bytes_tok, mem_bw * N_active * len_ctx / mults,
    source="lecture ≈01:37:00: len_ctx first written in the numerator, then corrected "
           "('Length of the context should be on the denominator')")

# =============================================================== E6.3 bytes per token from architecture
KV_BYTES_ARCHITECTURE = Formula(bytes_tok, kv_layers * 2 * head_dim * kv_heads * bytes_kv,
                                source="lecture 01:38:48-01:40:13 (E6.3): unique-KV layers x (K and V) x d_head "
                                       "x KV heads x bytes")
KV_BYTES_READ_SPARSE = Formula(bytes_tok, KV_BYTES_ARCHITECTURE.rhs / attn_sparsity,
                               source="lecture 01:40:38: sparse attention reads 1/sparsity of the stored KV")

# =============================================================== E6.4 prefill and decode
T_COMPUTE_PASS = Formula(t_compute, 2 * B * len_pass * N_active / FLOPs,
                         source="lecture 01:41:23-01:45:04 (E6.4): every new token multiplies every active weight")
T_STEP_PASS = Formula(t, sp.Max(T_COMPUTE_PASS.rhs, roofline.T_MEM.rhs),
                      source="lecture 01:43:20 (E6.4): the pass reads weights and the stored KV once; the "
                             "new tokens' own KV stays on chip")
TIME_PER_TOKEN = Formula(t_token, T_STEP_PASS.rhs / (B * len_pass),
                         source="lecture 01:45:13 (P6.2): time per token against len_pass")
PASS_CROSSOVER = Formula(len_pass, solve(sp.Eq(T_COMPUTE_PASS.rhs, roofline.T_MEM.rhs), len_pass)[0],
                         source="lecture 01:47:43: 'it still crosses': the len_pass where memory per token "
                                "drops below compute per token")
_prefill_time = 2 * N_active / FLOPs / mfu_prefill     # time per prefill token at its MFU
_decode_time = 2 * N_active / FLOPs / mfu_decode
DECODE_MFU_FROM_PRICES = Formula(
    mfu_decode, solve(sp.Eq(_decode_time / _prefill_time, price_output / price_input), mfu_decode)[0],
    source="lecture 01:41:23-01:47:43: prices ∝ time per token, so output/input = 5 means decode MFU ≈ 1/5 "
           "of prefill's")

# =============================================================== E6.5 attention's own FLOPs
ATTENTION_FLOPS = Formula(flops_attn, 4 * attn_layers * q_heads * head_dim * len_ctx,
                          source="lecture 01:51:01 (E6.5); QK^T and AV, 2 FLOPs per multiply-add per head per "
                                 "layer per earlier token")
ATTENTION_EQUALS_WEIGHTS = Formula(len_attn, solve(sp.Eq(ATTENTION_FLOPS.rhs, 2 * N_active), len_ctx)[0],
                                   source="course derivation from E6.5: the context where attention FLOPs "
                                          "equal the weights' 2 N_active")

# Issue 49 §5: what attention's FLOPs do to the output/input price ratio as the context grows. Prices ∝ time per
# token (E6.4). A prefill token is compute-bound and, counting attention, does 2 N_active + FLOP_attn; a decode token
# of a batch of B does the same FLOPs but waits for the larger of that and its share of the step's memory reads.
_FLOPS_PER_TOKEN = 2 * N_active + ATTENTION_FLOPS.rhs
_PREFILL_TOKEN_TIME = _FLOPS_PER_TOKEN / FLOPs
_DECODE_TOKEN_TIME = sp.Max(_FLOPS_PER_TOKEN / FLOPs, roofline.T_MEM.rhs / B)
OUTPUT_INPUT_RATIO = Formula(
    r_out_in, _DECODE_TOKEN_TIME / _PREFILL_TOKEN_TIME,
    source="course, from lecture E6.4 (prices ∝ time per token) and E6.5 (attention FLOPs, linear in context): "
           "decode time / prefill time per token, both at the chip's peak",
    note="without attention FLOPs (q_heads -> 0) the memory branch grows in proportion to the context without "
         "limit; with them both times grow linearly and the ratio levels off at OUTPUT_INPUT_LIMIT")
OUTPUT_INPUT_LIMIT = Formula(
    r_out_in, sp.limit(roofline.T_MEM.rhs / B / _PREFILL_TOKEN_TIME, len_ctx, sp.oo),
    source="course: the memory branch of OUTPUT_INPUT_RATIO as len_ctx -> oo: KV bytes read per token of context "
           "against attention FLOPs per token of context, at the chip's FLOPs per byte")

# =============================================================== E6.6-E6.7 storage tiers
HOLD_COST = Formula(c_hold, bytes_tok * price_device / cap_tier,
                    source="lecture 01:56:50 (E6.6): the fraction of the device the token occupies x its cost")
RETRIEVE_COST = Formula(c_retrieve, bytes_tok * price_device / bw_tier,
                        source="lecture 01:57:51 (E6.6): retrieve = bytes / BW of the device's time")
REMAT_COST = Formula(c_retrieve, 2 * N_active / FLOPs * price_device,
                     source="lecture 01:50:07 (E6.6): recompute the KV from token IDs, one forward pass per token")
COST_OF_HOLD = Formula(cost_kv, c_retrieve + T_hold * c_hold,
                       source="lecture 01:55:39 (E6.6): Cost(T_hold) = C_retrieve + T_hold C_hold")
DRAIN_TIME_RULE = Formula(
    T_hold, solve(sp.Eq(RETRIEVE_COST.rhs, T_hold * HOLD_COST.rhs), T_hold)[0],
    source="lecture 02:00:35-02:02:49 (E6.7): hold cost = retrieve cost when T_hold = Cap / BW")
TIER_DRAIN_TIME = Formula(t_drain_tier, cap_tier / bw_tier, source="lecture 02:01:44: the tier's drain time")

# Issue 49 §5: when a slower, cheaper tier really is cheaper. Chapter 1's cost per token is the step time over the
# batch (roofline.COST_OF_STEP). A deployment with little traffic has only B_live sequences in flight; served at once,
# each step reads every weight for them. A slow tier lets requests wait until B_pool are gathered.
_TIME_PER_SEQUENCE = roofline.T_STEP.rhs / B
POOLING_SAVING = Formula(
    pool_saving, _TIME_PER_SEQUENCE.subs(B, B_live) / _TIME_PER_SEQUENCE.subs(B, B_pool),
    source="course, from lecture E1.1-E1.5 (00:14:31 cost per token, 00:16:16 'Slow Mode'): cost per token at the "
           "live batch over cost per token at the pooled batch, same chips and price",
    note="at short context and B_live < B* <= B_pool this is B*/B_live; at or above B* it is 1 (Chapter 1's "
         "answer: a Slow Mode saves little); long contexts add a per-sequence KV read that no pooling shares; "
         "the saving is chip-time per token, money only if the chip-time freed is put to other work")
FLEET_COST_PER_TOKEN = Formula(
    cost_token, roofline.COST_PER_TOKEN.rhs / util,
    source="course: a fleet paid for by the hour but busy a share u of its hours spreads the idle hours over the "
           "tokens it does serve")
IDLE_TIER_PRICE = Formula(
    r_slow, simplify(roofline.COST_PER_TOKEN.rhs / FLEET_COST_PER_TOKEN.rhs),
    source="course: a token run in hours the fleet would sit idle needs only the busy-hour cost; against the "
           "standard token's cost (busy-hour cost / u) it can be priced at u times",
    note="the 50% batch discounts of Anthropic, OpenAI and Google (pricing.py's docstring) match a fleet busy about "
         "half its hours; a provider may also price below cost, so this reads a possibility, not its books")


# ================================================================== numeric helpers (validated)
def _check(**values):
    """The validated values, in order (Python floats or float arrays): compute with these, not the raw input."""
    return tuple(validate.number(name, value) for name, value in values.items())


# The caller's names for the Formula inputs, so an error names what the learner passed.
_CALLER_NAMES = {"N_active": "n_active", "N_total": "n_total", "FLOPs": "flops", "B": "batch",
                 "bytes_param": "bytes_param", "bytes_tok": "bytes_tok", "len_ctx": "len_ctx", "len_pass": "len_pass"}


def _caller_names(formula, **extra) -> dict:
    """:data:`_CALLER_NAMES` (and ``extra``) for the inputs ``formula`` has, as its ``called_as``."""
    return {k: v for k, v in {**_CALLER_NAMES, **extra}.items() if k in formula.input_names}


@validate.reports_inputs
def infer_kv_bytes(*, crossover_context, n_active=LECTURE_N_ACTIVE, ratio=LECTURE_RATIO,
                   bytes_per_multiply=1.0) -> float:
    """KV bytes per token implied by a price step at ``crossover_context`` (lecture E6.2).

    ``bytes_tok = N_active x bytes_per_multiply / (R x len_ctx)`` (:data:`KV_BYTES_FROM_RATIO`): R is
    the hardware ratio (≈300 multiplies per weight byte), ``bytes_per_multiply`` the width of the
    numbers multiplied (1 for FP8, which is the lecture's 1/300 per byte; 0.5 for FP4, which halves
    the answer). The lecture's numbers give 100e9 / (300 x 200e3) ≈ 1,667 bytes.
    """
    crossover_context, n_active, ratio, bytes_per_multiply = _check(
        crossover_context=crossover_context, n_active=n_active, ratio=ratio, bytes_per_multiply=bytes_per_multiply)
    return KV_BYTES_FROM_RATIO(N_active=n_active, bytes_param=bytes_per_multiply, ratio_hw=ratio,
                               len_ctx=crossover_context,
                               called_as={"N_active": "n_active", "bytes_param": "bytes_per_multiply",
                                          "ratio_hw": "ratio", "len_ctx": "crossover_context"})


@validate.reports_inputs
def infer_kv_bytes_on(chip, *, crossover_context, n_active=LECTURE_N_ACTIVE, compute_dtype="fp8") -> float:
    """The same inference with a real chip's FLOP/s and HBM bandwidth (lecture E6.2).

    ``bytes_tok = 2 mem_bw N_active / (FLOPs len_ctx)``; ``chip`` is a name or a hardware preset.
    """
    chip = hardware.resolve_chip(chip)
    crossover_context, n_active = _check(crossover_context=crossover_context, n_active=n_active)
    validate.choice("compute_dtype", compute_dtype, list(chip.flops))
    return KV_BYTES_FROM_PRICE_STEP(mem_bw=chip.hbm_bandwidth, N_active=n_active, FLOPs=chip.flops[compute_dtype],
                                    len_ctx=crossover_context,
                                    called_as={"N_active": "n_active", "len_ctx": "crossover_context"})


@validate.reports_inputs
def crossover_context(*, n_active, bytes_tok, flops, mem_bw) -> float:
    """The large-batch crossover (Chapter 1's Goldilocks context): where the KV slope equals compute."""
    n_active, bytes_tok, flops, mem_bw = _check(n_active=n_active, bytes_tok=bytes_tok, flops=flops, mem_bw=mem_bw)
    return roofline.GOLDILOCKS_CONTEXT(N_active=n_active, FLOPs=flops, mem_bw=mem_bw, bytes_tok=bytes_tok,
                                       called_as=_caller_names(roofline.GOLDILOCKS_CONTEXT))


@validate.reports_inputs
def kink_context(*, batch, n_active, n_total, flops, mem_bw, bytes_param, bytes_tok) -> float:
    """Where the step time bends at a finite batch (E6.1); ``inf`` if it never does, 0 if memory-bound from 0."""
    batch, n_active, n_total, flops, mem_bw, bytes_param, bytes_tok = _scalar(
        batch=batch, n_active=n_active, n_total=n_total, flops=flops, mem_bw=mem_bw, bytes_param=bytes_param,
        bytes_tok=bytes_tok)
    compute = roofline.T_COMPUTE(B=batch, N_active=n_active, FLOPs=flops, called_as=_caller_names(roofline.T_COMPUTE))
    weights = roofline.T_WEIGHTS(N_total=n_total, bytes_param=bytes_param, mem_bw=mem_bw,
                                 called_as=_caller_names(roofline.T_WEIGHTS))
    if weights >= compute:
        return 0.0
    return validate.finite_result("kink_context()", (compute - weights) * mem_bw / (batch * bytes_tok),
                                  batch=batch, n_active=n_active, flops=flops, mem_bw=mem_bw, bytes_tok=bytes_tok)


@validate.reports_inputs
def relative_cost(contexts, *, crossover) -> np.ndarray | float:
    """Cost per token over the short-context floor at a large batch: max(1, len_ctx / crossover)."""
    contexts, crossover = _check(contexts=contexts, crossover=crossover)
    return RELATIVE_COST(len_ctx=contexts, len_ctx_star=crossover,
                         called_as={"len_ctx": "contexts", "len_ctx_star": "crossover"})


@validate.reports_inputs
def decode_mfu_from_prices(*, price_input, price_output, mfu_prefill=1.0) -> float:
    """Decode MFU implied by the API's output/input price ratio (lecture 01:47:43).

    ``MFU_decode = MFU_prefill x price_input / price_output``: 5x dearer output means decode uses the
    chips about 1/5 as well as prefill. Prices in any one unit ($ per token or per million tokens).
    """
    price_input, price_output = _check(price_input=price_input, price_output=price_output)
    mfu_prefill = validate.fraction("mfu_prefill", mfu_prefill)
    return DECODE_MFU_FROM_PRICES(price_input=price_input, price_output=price_output, mfu_prefill=mfu_prefill)


@validate.reports_inputs
def pass_times(*, len_pass, batch, n_active, n_total, flops, mem_bw, bytes_param, len_ctx, bytes_tok) -> dict:
    """Times per token of one pass of ``len_pass`` new tokens per sequence (E6.4); arrays broadcast.

    Returns ``{"compute", "memory", "total"}`` in seconds per token, and ``"crossover"``, the
    len_pass where memory per token falls to compute per token. ``len_ctx = 0`` (or ``bytes_tok = 0``)
    means no KV cache, as in :func:`lecture_lib.roofline.decode_step`: memory is then the weights alone.
    """
    len_pass, batch, n_active, n_total, flops, mem_bw, bytes_param = _check(
        len_pass=len_pass, batch=batch, n_active=n_active, n_total=n_total, flops=flops, mem_bw=mem_bw,
        bytes_param=bytes_param)
    len_ctx = validate.number("len_ctx", len_ctx, allow_zero=True)
    bytes_tok = validate.number("bytes_tok", bytes_tok, allow_zero=True)
    no_kv = ("len_ctx", "bytes_tok")
    tokens = batch * np.asarray(len_pass, dtype=float)
    compute = T_COMPUTE_PASS(B=batch, len_pass=len_pass, N_active=n_active, FLOPs=flops,
                             called_as=_caller_names(T_COMPUTE_PASS)) / tokens
    memory = roofline.T_MEM(N_total=n_total, bytes_param=bytes_param, mem_bw=mem_bw, B=batch, len_ctx=len_ctx,
                            bytes_tok=bytes_tok, allow_zero=no_kv, called_as=_caller_names(roofline.T_MEM)) / tokens
    crossover = PASS_CROSSOVER(N_total=n_total, bytes_param=bytes_param, B=batch, len_ctx=len_ctx,
                               bytes_tok=bytes_tok, FLOPs=flops, N_active=n_active, mem_bw=mem_bw, allow_zero=no_kv,
                               called_as=_caller_names(PASS_CROSSOVER))
    for part in (compute, memory):
        validate.finite_result("pass_times()", part, len_pass=len_pass, batch=batch)
    total = np.maximum(compute, memory)
    scalar = np.ndim(total) == 0
    as_out = (lambda x: float(x)) if scalar else (lambda x: np.asarray(x, dtype=float))
    return {"compute": as_out(compute), "memory": as_out(memory), "total": as_out(total), "crossover": crossover}


def attention_share(model, *, context_len) -> float:
    """Attention FLOPs / weight FLOPs (2 params_active) for one new token of ``model`` at ``context_len``.

    Attention FLOPs include a sparse model's indexer (:func:`indexer_flops_per_token`).
    """
    model = models.resolve(model)
    validate.number("context_len", context_len)   # models.Model checks it is a whole number and uses int()
    attention = model.attention_flops_per_token(context_len) + indexer_flops_per_token(model, context_len)
    return attention / (2 * model.params_active)


# ----------------------------------------------------------------------------- attention variants
def variants() -> dict[str, models.Model]:
    """One config per attention variant of the lecture's E6.3, built from the presets.

    The MHA/GQA/MQA trio and the cross-layer-shared one are Llama-3-70B with its KV heads or KV
    sharing changed; MLA is DeepSeek-V3; local/global is Gemma 3 27B; sparse is DeepSeek-V3 with
    DeepSeek-V3.2's top-2048 sparse attention (DSA, huggingface.co/deepseek-ai/DeepSeek-V3.2-Exp
    config.json, index_topk = 2048, released 2025-09-29); "Character.AI-style" is Llama-3-70B with MQA,
    5 local layers per global one and KV shared by 3 neighbouring layers, after
    research.character.ai/optimizing-inference (2024-06-20); the 1,024-token window is Gemma 3's (our
    choice). GQA, MLA and local/global are real models as published; the other five are what-ifs on a
    real backbone. The Model methods leave out DSA's indexer; :func:`kv_bytes_read` and
    :func:`indexer_flops_per_token` add it.
    """
    llama, deepseek, gemma = models.get("llama-3-70b"), models.get("deepseek-v3"), models.get("gemma-3-27b")
    replace = dataclasses.replace
    return {
        "MHA (Llama-3-70B, 64 KV heads)": replace(llama, name="llama-3-70b-mha", n_kv_heads=64),
        "GQA (Llama-3-70B, 8 KV heads)": llama,
        "MQA (Llama-3-70B, 1 KV head)": replace(llama, name="llama-3-70b-mqa", n_kv_heads=1),
        "MLA (DeepSeek-V3)": deepseek,
        "GQA + KV shared by 2 layers": replace(llama, name="llama-3-70b-cla2", kv_share_group=2),
        "local/global (Gemma 3 27B)": gemma,
        "sparse top-2048 (DeepSeek-V3.2-style)": replace(deepseek, name="deepseek-v3-dsa", attention_topk=2048),
        "Character.AI-style (MQA, 5:1 local, share 3)": replace(
            llama, name="llama-3-70b-characterai", n_kv_heads=1, sliding_window=1024, n_local_layers=66,
            kv_share_group=3),
    }


# DeepSeek Sparse Attention's "lightning indexer" (DeepSeek-V3.2-Exp, huggingface.co/deepseek-ai/DeepSeek-V3.2-Exp
# config.json: index_n_heads = 64, index_head_dim = 128; its inference/model.py caches one FP8 key of 128 values and
# one fp32 scale per token per layer). To pick its top-k tokens the indexer scores *every* earlier token, so its keys
# are read in full at every decode step, and its scores cost FLOPs linear in the context.
DSA_INDEX_HEADS = 64
DSA_INDEX_HEAD_DIM = 128
DSA_INDEX_KEY_BYTES = DSA_INDEX_HEAD_DIM * 1 + 4      # FP8 key + one fp32 scale


def indexer_bytes_per_token(model: models.Model) -> float:
    """Indexer-key bytes per token of context that a sparse-attention (DSA) model stores and reads in full.

    ``n_layers x (128 FP8 values + a 4-byte scale)`` = 61 x 132 = 8,052 B for DeepSeek-V3.2; 0 for a model
    without ``attention_topk``. Not part of :meth:`lecture_lib.models.Model.kv_bytes_read_per_token`.
    """
    model = models.resolve(model)
    return float(model.n_layers * DSA_INDEX_KEY_BYTES) if model.attention_topk else 0.0


def kv_bytes_read(model: models.Model, bytes_per_value, *, context_len) -> float:
    """KV bytes a decode step reads per token of context, including a sparse model's indexer keys (E6.3).

    Dense attention: the stored KV (:meth:`~lecture_lib.models.Model.kv_bytes_read_per_token`). Sparse
    attention (lecture 01:40:38, "times a 1/sparsity factor"): the top-k tokens' KV *plus* every token's
    indexer key (:func:`indexer_bytes_per_token`), which the 1/sparsity factor leaves out.
    """
    model = models.resolve(model)
    validate.number("context_len", context_len)   # models.Model checks it is a whole number and uses int()
    return model.kv_bytes_read_per_token(bytes_per_value, context_len=context_len) + indexer_bytes_per_token(model)


def indexer_flops_per_token(model: models.Model, context_len) -> float:
    """FLOPs of a DSA indexer for one new token: 2 x 64 heads x 128 x n_layers x context_len (E6.5).

    Scores only (no weighted sum of values), so half of :data:`ATTENTION_FLOPS` with the indexer's heads
    and head dimension; run in FP8. 0 for a model without ``attention_topk``.
    """
    model = models.resolve(model)
    validate.number("context_len", context_len)   # models.Model checks it is a whole number and uses int()
    if not model.attention_topk:
        return 0.0
    return ATTENTION_FLOPS(attn_layers=model.n_layers, q_heads=DSA_INDEX_HEADS, head_dim=DSA_INDEX_HEAD_DIM,
                           len_ctx=context_len) / 2


# ----------------------------------------------------------------------------- storage tiers
_READ = "read 2026-11"


@dataclasses.dataclass(frozen=True, kw_only=True)
class Tier:
    """One place to keep KV: a device's capacity, read bandwidth and price, with sources.

    ``price_per_gb_hour`` is what a gigabyte of it costs per hour (rent or list price);
    the device's cost per second is that x capacity. ``board_drain_time`` is the lecture's figure.
    """

    name: str
    device: str
    capacity: float
    bandwidth: float
    price_per_gb_hour: float
    board_drain_time: float
    sources: dict = dataclasses.field(default_factory=dict, hash=False, repr=False)

    def __post_init__(self):
        for name in ("capacity", "bandwidth", "price_per_gb_hour", "board_drain_time"):
            object.__setattr__(self, name, validate.number(f"{self.name}: {name}", getattr(self, name)))

    @property
    def drain_time(self) -> float:
        """Cap / BW: the hold time at which this tier's retrieve and hold costs balance (E6.7)."""
        return TIER_DRAIN_TIME(cap_tier=self.capacity, bw_tier=self.bandwidth,
                               called_as={"cap_tier": "capacity", "bw_tier": "bandwidth"})

    @property
    def price_per_second(self) -> float:
        """The whole device's cost per second."""
        return validate.finite_result("price_per_second", self.price_per_gb_hour * self.capacity / 1e9 / SECONDS_PER_HOUR,
                                      price_per_gb_hour=self.price_per_gb_hour, capacity=self.capacity)

    def costs(self, *, bytes_tok) -> tuple[float, float]:
        """(retrieve $ per token, hold $ per token-second) for ``bytes_tok`` bytes of KV per token."""
        bytes_tok = validate.number("bytes_tok", bytes_tok)
        common = dict(bytes_tok=bytes_tok, price_device=self.price_per_second)
        return (RETRIEVE_COST(bw_tier=self.bandwidth, **common), HOLD_COST(cap_tier=self.capacity, **common))


_GIB = 2 ** 30 / 1e9           # Google prices per GiB; convert to per GB
_MONTH_HOURS = 730

TIERS: tuple[Tier, ...] = (
    Tier(name="HBM", device="one GB200 GPU's HBM3e", capacity=186e9, bandwidth=8e12,
         price_per_gb_hour=LECTURE_GPU_PRICE / 186, board_drain_time=LECTURE_DRAIN_TIMES["HBM"],
         sources={"capacity, bandwidth": "hardware.get('GB200') (NVIDIA GB200 NVL72 page, MLCommons)",
                  "price": "the lecture's $2 per GPU-hour (00:14:31) spread over the GPU's HBM: you rent "
                           "the whole GPU to hold KV in it"}),
    Tier(name="host DRAM", device="one Grace CPU's LPDDR5X (2 GPUs share it in GB200)", capacity=480e9,
         bandwidth=512e9, price_per_gb_hour=0.004237 / _GIB, board_drain_time=LECTURE_DRAIN_TIMES["host DRAM"],
         sources={"capacity, bandwidth": "NVIDIA GB200 NVL72 spec table: up to 17 TB LPDDR5X at up to 18.4 TB/s "
                                         "per 36 Grace CPUs = 480 GB at 512 GB/s each "
                                         f"(nvidia.com/en-us/data-center/gb200-nvl72, {_READ})",
                  "price": "Google Compute Engine N2 memory, about $0.0042 per GiB-hour on demand, us-central1 "
                           f"(cloud.google.com/compute/vm-instance-pricing, {_READ}; approximate)"}),
    Tier(name="flash", device="one 3.84 TB PCIe 4.0 NVMe SSD", capacity=3.84e12, bandwidth=7e9,
         price_per_gb_hour=0.08 / _GIB / _MONTH_HOURS, board_drain_time=LECTURE_DRAIN_TIMES["flash"],
         sources={"capacity, bandwidth": "PCIe 4.0 data-centre NVMe drives (Samsung PM1733, Kioxia CM6) read "
                                         "about 7 GB/s sequentially (techtarget.com, 2020-12); DGX nodes carry "
                                         "3.84 TB U.2 drives",
                  "price": "Google Compute Engine Local SSD, about $0.08 per GiB-month "
                           f"(cloud.google.com/compute/disks-image-pricing, {_READ}; approximate)"}),
    Tier(name="disk", device="one 24 TB 7,200 rpm hard disk (Seagate Exos X24)", capacity=24e12, bandwidth=285e6,
         price_per_gb_hour=0.04 / _GIB / _MONTH_HOURS, board_drain_time=LECTURE_DRAIN_TIMES["disk"],
         sources={"capacity, bandwidth": "Seagate Exos X24: 24 TB, 285 MB/s maximum sustained rate "
                                         "(blocksandfiles.com, 2023-10-18)",
                  "price": "Google Compute Engine standard (HDD) persistent disk, $0.04 per GiB-month: '200 GB "
                           f"... $8.00 for the whole month' (cloud.google.com/compute/disks-image-pricing, {_READ})"}),
)

TIER_NAMES = ("rematerialise",) + tuple(tier.name for tier in TIERS)


_TIER_CATALOGUE = Catalogue("tier", {tier.name: tier for tier in TIERS})


def get_tier(name: str) -> Tier:
    """A storage tier by name ("HBM", "host DRAM", "flash", "disk"); KeyError lists them."""
    return _TIER_CATALOGUE.find(name)


def _tiers(tiers) -> tuple[Tier, ...]:
    """A non-empty list or tuple of :class:`Tier` (e.g. :data:`TIERS` or a part of it)."""
    if not isinstance(tiers, (list, tuple)) or not tiers or not all(isinstance(t, Tier) for t in tiers):
        raise ValueError(f"tiers must be a non-empty list of context.Tier, got {validate._describe(tiers)}")
    return tuple(tiers)


def _scalar(**values) -> tuple:
    """The validated single numbers, in order (Python floats): compute with these, not the raw input."""
    checked = []
    for name, value in values.items():
        checked.append(validate.number(name, value))
        if np.ndim(value) != 0:
            raise ValueError(f"{name} must be a single number here, got {validate._describe(value)}")
    return tuple(checked)


@validate.reports_inputs
def remat_cost(*, n_active, flops, price_chip_hour) -> float:
    """$ to recompute one token's KV: a forward pass at full MFU on a chip rented at ``price_chip_hour``."""
    n_active, flops, price_chip_hour = _scalar(n_active=n_active, flops=flops, price_chip_hour=price_chip_hour)
    return REMAT_COST(N_active=n_active, FLOPs=flops, price_device=price_chip_hour / SECONDS_PER_HOUR,
                      called_as=_caller_names(REMAT_COST, price_device="price_chip_hour / 3600"))


@validate.reports_inputs
def tier_lines(*, bytes_tok, n_active, flops, price_chip_hour, tiers=TIERS) -> dict[str, tuple[float, float]]:
    """Each option's (retrieve $, hold $/s) per token: rematerialise first, then the storage tiers.

    The HBM tier's price follows ``price_chip_hour`` (its capacity is the chip's HBM).
    """
    bytes_tok, n_active, flops, price_chip_hour = _scalar(bytes_tok=bytes_tok, n_active=n_active, flops=flops,
                                                          price_chip_hour=price_chip_hour)
    tiers = _tiers(tiers)
    lines = {"rematerialise": (remat_cost(n_active=n_active, flops=flops, price_chip_hour=price_chip_hour), 0.0)}
    for tier in tiers:
        if tier.name == "HBM":
            hbm_price = price_chip_hour * 1e9 / tier.capacity
            if not math.isfinite(hbm_price):
                raise ValueError(f"price_chip_hour must be of ordinary size, got {validate._describe(price_chip_hour)}")
            tier = dataclasses.replace(tier, price_per_gb_hour=hbm_price)
        lines[tier.name] = tier.costs(bytes_tok=bytes_tok)
    return lines


@validate.reports_inputs
def storage_costs(hold_times, *, bytes_tok, n_active, flops, price_chip_hour, tiers=TIERS) -> dict[str, np.ndarray]:
    """Cost(T_hold) = C_retrieve + T_hold C_hold of every option over ``hold_times`` (E6.6), in $ per token.

    A hold time of 0 (use the KV at once) is allowed: each option then costs its retrieval alone.
    """
    hold_times = validate.number("hold_times", hold_times, allow_zero=True)
    lines = tier_lines(bytes_tok=bytes_tok, n_active=n_active, flops=flops, price_chip_hour=price_chip_hour,
                       tiers=tiers)
    hold = np.asarray(hold_times, dtype=float)
    return {name: COST_OF_HOLD(c_retrieve=r, c_hold=h, T_hold=hold, allow_zero="T_hold") if h > 0
            else np.full_like(hold, r)
            for name, (r, h) in lines.items()}


@validate.reports_inputs
def cheapest_tier(hold_time, **kwargs) -> str:
    """The option on the lower envelope at one hold time (seconds, 0 allowed)."""
    if np.ndim(hold_time) != 0:
        raise ValueError(f"hold_time must be one number of seconds, got {validate._describe(hold_time)}")
    costs = storage_costs(validate.number("hold_time", hold_time, allow_zero=True), **kwargs)
    return min(costs, key=lambda name: float(costs[name]))


@validate.reports_inputs
def envelope_crossovers(*, bytes_tok, n_active, flops, price_chip_hour, tiers=TIERS) -> list[tuple[float, str, str]]:
    """Where the lower envelope of the Cost(T_hold) lines changes option: [(T, from, to), ...].

    Walks the envelope from T = 0: at each step the next option is the one whose line meets the
    current one soonest, T = (r_next - r_now) / (h_now - h_next) (two lines crossing).
    """
    lines = tier_lines(bytes_tok=bytes_tok, n_active=n_active, flops=flops, price_chip_hour=price_chip_hour,
                       tiers=tiers)
    current = min(lines, key=lambda name: (lines[name][0], lines[name][1]))
    now, steps = 0.0, []
    while True:
        r0, h0 = lines[current]
        best = None
        for name, (r, h) in lines.items():
            if h < h0:
                cross = (r - r0) / (h0 - h)
                if math.isfinite(cross) and cross > now and (best is None or cross < best[0]):
                    best = (cross, name)
        if best is None:
            return steps
        steps.append((best[0], current, best[1]))
        now, current = best


# ----------------------------------------------------------------------------- price sheets
def price_sheet_lab(sheet, *, n_active=LECTURE_N_ACTIVE, chip="GB200", compute_dtype="fp8",
                    price_chip_hour=LECTURE_GPU_PRICE) -> dict:
    """What one published price sheet implies, by the lecture's reasoning (E6.1-E6.7).

    ``sheet`` is a :class:`lecture_lib.pricing.PriceSheet` or its key. Returns a dict:

    - ``crossover``: the long-context threshold (tokens), or None if prices are flat;
    - ``kv_bytes``: KV bytes per token at that crossover for ``n_active`` on ``chip``
      (:func:`infer_kv_bytes_on`), or None;
    - ``long_step``: (input ratio, output ratio) above the threshold, or None; ``covers``: the context up
      to which the input step pays for the extra KV reads (:data:`LONG_TIER_COVERS`);
    - ``decode_mfu``: decode MFU relative to prefill, = input / output price;
    - ``cache_read_discount``: input price / cache-hit price (10 means a hit is 10x cheaper than
      recomputing the KV by prefill);
    - ``hold_cost_5m`` / ``hold_cost_1h``: the cache-write premium over the base input price per
      token-second of holding, $/token/s (None if not sold), and ``tier_5m`` / ``tier_1h``, the tier
      whose drain time is nearest each duration (``board_tier_5m`` / ``board_tier_1h`` with the lecture's
      drain times); ``hold_cost_storage``: an explicit storage price
      (Gemini's $ per million tokens per hour) per token-second, or None.
    """
    from . import pricing

    sheet = pricing.resolve(sheet)
    chip = hardware.resolve_chip(chip)
    validate.choice("compute_dtype", compute_dtype, list(chip.flops))
    n_active, price_chip_hour = _check(n_active=n_active, price_chip_hour=price_chip_hour)
    result = {"sheet": sheet, "crossover": sheet.long_context_threshold, "kv_bytes": None, "long_step": None,
              "covers": None}
    if sheet.long_context_threshold:
        result["kv_bytes"] = infer_kv_bytes_on(chip, crossover_context=sheet.long_context_threshold,
                                               n_active=n_active, compute_dtype=compute_dtype)
        step = sheet.long_context_step
        result["long_step"] = step
        if step:
            result["covers"] = LONG_TIER_COVERS(price_step=step[0], len_ctx_star=sheet.long_context_threshold)
    result["decode_mfu"] = decode_mfu_from_prices(price_input=sheet.input, price_output=sheet.output)
    result["cache_read_discount"] = sheet.cache_read_discount
    for label, seconds, write in (("5m", 300.0, sheet.cache_write_5m), ("1h", 3600.0, sheet.cache_write_1h)):
        premium = (write - sheet.input) / PER_MILLION if write is not None and write > sheet.input else None
        result[f"hold_cost_{label}"] = premium / seconds if premium else None
        result[f"tier_{label}"] = tier_by_drain_time(seconds)
        result[f"board_tier_{label}"] = tier_by_drain_time(seconds, board=True)
    storage = sheet.cache_storage_per_mtok_hour
    result["hold_cost_storage"] = storage / PER_MILLION / SECONDS_PER_HOUR if storage else None
    return result


@validate.reports_inputs
def tier_by_drain_time(hold_time, tiers=TIERS, *, board=False) -> str:
    """The lecture's rule of thumb (E6.7): the tier whose drain time is nearest ``hold_time`` (in log).

    ``board=True`` uses the lecture's drain times (20 ms, seconds, 1 min, 1 hour) instead of the
    devices' Cap / BW.
    """
    hold_time = validate.number("hold_time", hold_time)
    tiers = _tiers(tiers)
    if np.ndim(hold_time) != 0:
        raise ValueError(f"hold_time must be one number of seconds, got {validate._describe(hold_time)}")
    drain = (lambda tier: tier.board_drain_time) if validate.boolean("board", board) else (lambda tier: tier.drain_time)
    return min(tiers, key=lambda tier: abs(math.log(drain(tier) / hold_time))).name
