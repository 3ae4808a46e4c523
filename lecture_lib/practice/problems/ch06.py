"""Chapter 6's practice problems (solutions/06_long_context_from_api_pricing.ipynb).

Every expected value is computed from the library (price sheets, model presets, tiers, Formulas)
with the inputs the problem statement names; see :mod:`lecture_lib.practice.checks` for how answers are judged.
"""

from __future__ import annotations

import dataclasses

from lecture_lib import context, hardware, models, pricing

from ..registry import Mistake, Problem, register

TIER_OPTIONS = ("rematerialise", "HBM", "host DRAM", "flash", "disk")


def _gpt_step_bytes(*, bytes_per_multiply: float = 1.0, slip: bool = False) -> float:
    step = pricing.get("gpt-5.4").long_context_threshold
    if slip:
        return context.KV_BYTES_BOARD_SLIP(mem_bw=1, mults=context.LECTURE_RATIO, N_active=100e9, len_ctx=step)
    return context.infer_kv_bytes(crossover_context=step, n_active=100e9, bytes_per_multiply=bytes_per_multiply)


def _gpt_decode_mfu(mfu_prefill: float = 0.5, *, long_context: bool = False) -> float:
    sheet = pricing.get("gpt-5.4")
    price_input, price_output = (sheet.long_input, sheet.long_output) if long_context else (sheet.input, sheet.output)
    return context.decode_mfu_from_prices(price_input=price_input, price_output=price_output, mfu_prefill=mfu_prefill)


def _lecture_ratio_decode_mfu() -> float:
    """Decode MFU from the lecture's "output priced 5x input" instead of GPT-5.4's own ratio."""
    return context.decode_mfu_from_prices(price_input=1.0, price_output=5.0, mfu_prefill=0.5)


def _shared_mqa(share: int = 4, kv_heads: int | None = 1) -> float:
    llama = models.get("llama-3-70b")
    model = dataclasses.replace(llama, n_kv_heads=kv_heads or llama.n_kv_heads, kv_share_group=share)
    return model.kv_bytes_per_token("fp8")


def _gemma_bytes(context_len: int | None = 131_072) -> float:
    return models.get("gemma-3-27b").kv_bytes_per_token("bf16", context_len=context_len)


def _gemma_global_layers_only() -> float:
    gemma = models.get("gemma-3-27b")
    return _gemma_bytes(None) * (gemma.n_layers - gemma.n_local_layers) / gemma.n_layers


def _qwen_attention_parity(*, active: float | None = None, heads: str = "query", width: str = "heads") -> float:
    qwen = models.get("qwen3-235b-a22b")
    n_heads = qwen.n_heads if heads == "query" else qwen.n_kv_heads
    head_dim = qwen.d_head if width == "heads" else qwen.d_model / n_heads   # "d_model": q_heads x d_head -> d_model
    return context.ATTENTION_EQUALS_WEIGHTS(N_active=active or qwen.params_active, attn_layers=qwen.n_layers,
                                            q_heads=n_heads, head_dim=head_dim)


def _deepseek_pass_crossover(*, batch: float = 64, kv_format: float = 1.0, flops_format: str = "fp8",
                             bytes_param: float = 1, weights: str = "total", bytes_tok: float | None = None) -> float:
    deepseek, rack = models.get("deepseek-v3"), hardware.get_system("GB200 NVL72")
    n_read = deepseek.params_total if weights == "total" else deepseek.params_active
    times = context.pass_times(len_pass=1, batch=batch, n_active=deepseek.params_active,
                               n_total=n_read, flops=rack.flops[flops_format], mem_bw=rack.hbm_bandwidth,
                               bytes_param=bytes_param, len_ctx=32_768,
                               bytes_tok=bytes_tok or deepseek.kv_bytes_per_token(kv_format))
    return times["crossover"]


TIER_SETTINGS = dict(bytes_tok=context.infer_kv_bytes(crossover_context=context.LECTURE_CROSSOVER),
                     n_active=100e9, price_chip_hour=2.0)


def _tier_kw():
    return dict(TIER_SETTINGS, flops=hardware.get("GB200").flops["fp8"])


def _envelope_switch(before: str = "HBM", after: str = "host DRAM") -> float:
    steps = context.envelope_crossovers(**_tier_kw())
    return next(when for when, left, right in steps if (left, right) == (before, after))


def _hbm_to_dram() -> float:
    return _envelope_switch("HBM", "host DRAM")


def _one_hour_tier() -> str:
    return context.cheapest_tier(3600, **_tier_kw())


register("6.1", Problem(
    "Which price went up 50%?", "choice", lambda: "output", options=("input", "output", "both", "neither"),
    alternates={"output": ("output price", "outputs", "the output price", "output tokens", "output token price")},
    wrong_hint="Compare pricing.get('gemini-3.1-pro').long_input / .input with .long_output / .output."))
register("6.2", Problem(
    "Bytes per token from GPT-5.4's price step", "number", _gpt_step_bytes, rtol=0.02, unit="bytes per token",
    mistakes=(Mistake(lambda: _gpt_step_bytes(slip=True),
                      "The context is on the wrong side of the fraction: the lecture's own slip. More context at "
                      "the same crossover must mean fewer bytes per token."),
              Mistake(lambda: context.infer_kv_bytes(crossover_context=200e3),
                      "That is the lecture's 200K step. This sheet's step is elsewhere: read it from the sheet."),
              Mistake(lambda: _gpt_step_bytes(bytes_per_multiply=0.5),
                      "Half: that is a ratio of 600 per byte (fp4 multiplies, or FLOPs counted instead of "
                      "multiplies). The problem fixes 300 FP8 multiplies per byte."))))
register("6.3", Problem(
    "Derive bytes per token from the crossover", "expression", lambda: context.KV_BYTES_FROM_PRICE_STEP_BOARD.rhs,
    wrong_hint="Set the KV-fetch time B len_ctx bytes_tok / mem_bw equal to the board's compute time "
               "B N_active / mults and solve for bytes_tok: B should cancel."))
register("6.4", Problem(
    "Decode MFU from GPT-5.4's prices", "number", _gpt_decode_mfu, rtol=0.02,
    mistakes=(Mistake(lambda: _gpt_decode_mfu(1.0),
                      "That is decode MFU relative to prefill. The problem gives prefill's own MFU: scale by it."),
              Mistake(lambda: 0.5 * pricing.get("gpt-5.4").output_to_input,
                      "Decode is slower per token, so its MFU is lower than prefill's: divide by the price ratio."),
              Mistake(_lecture_ratio_decode_mfu,
                      "That uses the lecture's output/input ratio of 5. GPT-5.4's own ratio is on its price sheet."),
              Mistake(lambda: _gpt_decode_mfu(long_context=True),
                      "That uses the long-context prices (above the threshold). Use the base input and output prices."),
              Mistake(lambda: pricing.get("gpt-5.4").output_to_input,
                      "That is the output/input price ratio itself. Turn it into decode's MFU."),
              Mistake(lambda: _gpt_decode_mfu() * 100,
                      "That looks like a percentage: give a fraction (0.25 for 25%)."))))
register("6.5", Problem(
    "MQA with KV shared by 4 layers", "number", _shared_mqa, rtol=0.02, unit="bytes per token",
    mistakes=(Mistake(lambda: _shared_mqa(1),
                      "That is MQA alone. With 4 layers sharing one cache, only one layer in 4 stores it."),
              Mistake(lambda: _shared_mqa(4) / 2,
                      "Keys and values are both stored: a factor 2 for K and V."),
              Mistake(lambda: _shared_mqa(4, kv_heads=None),
                      "That keeps Llama 3 70B's 8 KV heads. MQA means a single KV head shared by all query heads."),
              Mistake(lambda: _shared_mqa(1, kv_heads=None),
                      "That is Llama 3 70B as it is. Apply both changes: one KV head, and one cache per group of "
                      "4 layers."))))
register("6.6", Problem(
    "Gemma 3 27B's KV at 128K tokens", "number", _gemma_bytes, rtol=0.02, unit="bytes per token",
    mistakes=(Mistake(lambda: _gemma_bytes(None),
                      "That counts every layer as global. The 52 local layers keep only their last 1,024 tokens."),
              Mistake(lambda: models.get("gemma-3-27b").kv_bytes_per_token("bf16", context_len=131_072) / 2,
                      "Half of it: bf16 is 2 bytes per value, and every layer stores both K and V."),
              Mistake(_gemma_global_layers_only,
                      "Nearly: that counts the 10 global layers only. The local layers are small per token of "
                      "context, but not zero: each still holds 1,024 tokens."),
              Mistake(lambda: _gemma_bytes() * 131_072,
                      "That is the whole cache of the 131,072-token context. The question asks per token of "
                      "context."))))
register("6.7", Problem(
    "When Qwen3's attention FLOPs catch up", "number", _qwen_attention_parity, rtol=0.03, unit="tokens",
    mistakes=(Mistake(lambda: _qwen_attention_parity(active=models.get("qwen3-235b-a22b").params_total),
                      "Weight FLOPs per token come from the active parameters, not all 235 B."),
              Mistake(lambda: _qwen_attention_parity(heads="kv"),
                      "That uses the KV heads. Every query head does its own QKᵀ and AV, even when grouped-query "
                      "attention shares the KV heads: count query heads."),
              Mistake(lambda: _qwen_attention_parity(width="d_model"),
                      "Off by a factor of 2. Either d_model stands in for query heads x d_head (in Qwen3 they differ: "
                      "check the preset), or attention got 2 FLOPs per head-dimension per context token instead of "
                      "4 (QKᵀ and AV are a multiply-add each)."))))
register("6.8", Problem(
    "Where decode turns into prefill", "number", _deepseek_pass_crossover, rtol=0.03, unit="tokens per pass",
    mistakes=(Mistake(lambda: _deepseek_pass_crossover(kv_format=2.0),
                      "The KV cache is stored in fp8 (1 byte per value) in this problem."),
              Mistake(lambda: _deepseek_pass_crossover(flops_format="fp4"),
                      "Twice too many: either the fp4 FLOP/s (the multiplies here are fp8), or a forward pass "
                      "counted as N_active FLOPs per token instead of 2 N_active."),
              Mistake(lambda: _deepseek_pass_crossover(bytes_param=2),
                      "The weights are fp8 here: 1 byte per parameter."),
              Mistake(lambda: _deepseek_pass_crossover(weights="active"),
                      "Each pass reads all the weights, not only the active ones: across a batch of 64 sequences "
                      "every expert is used."),
              Mistake(lambda: _deepseek_pass_crossover(
                          bytes_tok=context.infer_kv_bytes(crossover_context=context.LECTURE_CROSSOVER)),
                      "That uses the lecture's 1,667 bytes per token. Use DeepSeek-V3's own KV size from the preset "
                      "(MLA, fp8)."),
              Mistake(lambda: _deepseek_pass_crossover() * 64,
                      "That counts new tokens across the whole batch. The question asks per sequence (len_pass)."),),
    wrong_hint="Compute per token is 2 N_active / FLOPs at every len_pass; memory per token is (weights + "
               "B len_ctx bytes_tok) / (B len_pass) / mem_bw. Find where they meet."))
register("6.9", Problem(
    "From HBM to host DRAM", "number", _hbm_to_dram, rtol=0.03, unit="seconds",
    mistakes=(Mistake(lambda: context.get_tier("HBM").drain_time,
                      "That is HBM's drain time, where HBM's own two costs balance. The envelope switches where "
                      "the HBM line crosses the host-DRAM line."),
              Mistake(lambda: context.get_tier("host DRAM").drain_time,
                      "That is host DRAM's drain time. Read where the two lines cross instead."),
              Mistake(lambda: _envelope_switch("host DRAM", "flash"),
                      "That is the next switch, from host DRAM to flash. The question asks where HBM gives way."))))
register("6.10", Problem(
    "Where does a 1-hour cache live?", "choice", _one_hour_tier, options=TIER_OPTIONS,
    alternates={"host DRAM": ("dram", "ddr", "host memory", "cpu memory", "cpu dram"),
                "rematerialise": ("remat", "recompute", "rematerialize"),
                "flash": ("ssd", "nvme", "flash ssd", "ssd flash", "nvme ssd", "nand", "nand flash"),
                "disk": ("hdd", "hard disk", "spinning disk")},
    wrong_hint="Set the explorer's hold time to 3,600 s and read which line is lowest there. Use the devices' real "
               "drain times (the explorer's default), not the board's round numbers."))


# --- 'Why' problems (issue 13): conceptual choices, each with a nudge for every tempting wrong letter.
# The expected letter is checked against the library where the reason is a computation.

WHY_OPTIONS = ('a', 'b', 'c', 'd')


def _cheap_hits() -> str:
    """6.11: reading a token's KV is faster than recomputing it (Chapter 7's kv_trade)."""
    from lecture_lib import reversible

    if not reversible.kv_trade(models.get("deepseek-v3"), hardware.get("GB200"))["advantage"] > 1:
        raise RuntimeError("problem 6.11 assumes reading beats recomputing")
    return "a"


def _output_dearer() -> str:
    """6.12: for DeepSeek-V3 on a GB200 NVL72 the compute/memory crossover pass is far longer than one token."""
    from lecture_lib import context

    rack, deepseek = hardware.get_system("GB200 NVL72"), models.get("deepseek-v3")
    crossover = context.PASS_CROSSOVER(B=64, N_total=deepseek.params_total, bytes_param=1, len_ctx=32768,
                                       bytes_tok=deepseek.kv_bytes_per_token(1), mem_bw=rack.hbm_bandwidth,
                                       N_active=deepseek.params_active, FLOPs=rack.flops["fp8"])
    if not crossover > 1:
        raise RuntimeError(f"problem 6.12 assumes decode is memory-bound, crossover {crossover}")
    return "b"


def _not_hbm() -> str:
    """6.13: HBM's drain time is far below the cache durations."""
    if not hardware.get("GB200").hbm_drain_time < 1 < 300:
        raise RuntimeError("problem 6.13 assumes HBM drains in well under a second")
    return "b"


register('6.11', Problem(
    'Why are cache hits cheap?', "choice", _cheap_hits, options=WHY_OPTIONS,
    nudges={
            'b': 'Same model; what changes is whether the KV is recomputed or read back.',
            'c': 'Output is billed separately; the discount is on input tokens found in the cache.',
            'd': 'HBM is the most expensive place to hold KV per second; that is why long caches live lower down.'}))

register('6.12', Problem(
    'Why is output priced several times input?', "choice", _output_dearer, options=WHY_OPTIONS,
    nudges={
            'a': 'Prices follow cost, not information: price near cost, or someone scoops you (≈01:33:24).',
            'c': 'Serving never runs a backward pass; that is training.',
            'd': 'How long a token is kept is priced separately, by the cache writes.'}))

register('6.13', Problem(
    'Why do 5-minute and 1-hour caches point away from HBM?', "choice", _not_hbm, options=WHY_OPTIONS,
    nudges={
            'a': 'Host DRAM loses its contents too, and it is a candidate tier; what matters is the cost of holding.',
            'c': "One prompt's KV fits easily; the issue is paying for HBM by the second.",
            'd': 'HBM is the fastest tier there is; speed is not what it lacks.'}))


# --- Issue 49 §5: recomputing KV at a realistic MFU, not at peak.
# 6.14: REMAT_COST is one forward pass at the chip's peak; a prefill runs at MFU_prefill, so each token's recompute
# costs REMAT_COST / MFU_prefill. Per million tokens, for the problem's model, chip, price and MFU.
REMAT = dict(model="deepseek-v3", chip="H100", compute="bf16", price_chip_hour=2.0, mfu=0.4)


def _remat_per_million(*, mfu: float | None = None, compute: str | None = None, per: float = 1e6) -> float:
    chip = hardware.get(REMAT["chip"])
    peak = context.remat_cost(n_active=models.get(REMAT["model"]).params_active,
                              flops=chip.flops[compute or REMAT["compute"]], price_chip_hour=REMAT["price_chip_hour"])
    return float(peak / (REMAT["mfu"] if mfu is None else mfu) * per)


register("6.14", Problem(
    "Recomputing KV at a realistic MFU", "number", _remat_per_million, rtol=0.02, unit="dollars per million tokens",
    mistakes=(Mistake(lambda: _remat_per_million(mfu=1.0),
                      "That is the recompute at the chip's peak, as REMAT_COST writes it. A prefill runs at its MFU, "
                      "so the same work takes longer and costs more."),
              Mistake(lambda: _remat_per_million(mfu=1 / REMAT["mfu"]),          # peak × MFU
                      "That multiplies by the MFU. A lower MFU makes each token slower, so divide by it."),
              Mistake(lambda: _remat_per_million(compute="fp8"),
                      "That uses the FP8 peak; the problem computes in BF16."),
              Mistake(lambda: _remat_per_million(per=1.0),
                      "That is the cost of one token. The question asks per million tokens."))))


# --- Issue 49 §5: when a slower tier really is cheaper (pooling low traffic up to the balance batch).
# 6.15: Llama-3-70B on 8 H100s, FP8 weights, multiplies and KV; 16 sequences of 2,048 tokens in flight, pooled to
# 512 by a slow tier. The saving is context.POOLING_SAVING: cost per token at the live batch over the pooled one.
POOL = dict(model="llama-3-70b", chip="H100", chips=8, live=16, pooled=512, context=2048)


def _pool_inputs() -> dict:
    model, chip = models.get(POOL["model"]), hardware.get(POOL["chip"])
    return dict(N_active=model.params_active, N_total=model.params_total, bytes_param=1,
                FLOPs=POOL["chips"] * chip.flops["fp8"], mem_bw=POOL["chips"] * chip.hbm_bandwidth,
                bytes_tok=model.kv_bytes_per_token(1))


def _pooling_saving(*, context_len: float | None = None) -> float:
    length = POOL["context"] if context_len is None else context_len
    return float(context.POOLING_SAVING(B_live=POOL["live"], B_pool=POOL["pooled"], len_ctx=length,
                                        allow_zero="len_ctx", **_pool_inputs()))


register("6.15", Problem(
    "Pooling a quiet deployment", "number", _pooling_saving, rtol=0.02, unit="× cheaper per token",
    mistakes=(Mistake(lambda: _pooling_saving(context_len=0),
                      "That leaves out the KV cache. Each sequence still reads its own 2,048 tokens of KV every step, "
                      "and pooling shares none of that."),
              Mistake(lambda: POOL["pooled"] / POOL["live"],
                      "That assumes the cost per token falls as 1/B all the way. Past the balance batch the step "
                      "grows with the batch, so the last sequences added save little."),
              Mistake(lambda: 1.0,
                      "That is Chapter 1's answer for a deployment already at its balance batch. Sixteen sequences "
                      "are far below it: the steps are mostly weight reads.")),
    wrong_hint="Cost per token is the step time divided by the batch; compute it at 16 and at 512 sequences, with "
               "the step time the larger of compute and memory (weights plus every sequence's KV)."))


# --- Issue 49 §5: what counting attention FLOPs does to the output/input price ratio as the context grows.
# 6.16: the limit of context.OUTPUT_INPUT_RATIO (context.OUTPUT_INPUT_LIMIT) for Llama-3.1-8B on H100, FP8 KV and
# FP8 multiplies.
RATIO_LIMIT = dict(model="llama-3.1-8b", chip="H100", compute="fp8", bytes_kv=1)


def _ratio_limit(*, flops_scale: float = 1.0, kv_heads: float | None = None, bytes_kv: float | None = None) -> float:
    model, chip = models.get(RATIO_LIMIT["model"]), hardware.get(RATIO_LIMIT["chip"])
    heads = model.n_kv_heads if kv_heads is None else kv_heads
    width = RATIO_LIMIT["bytes_kv"] if bytes_kv is None else bytes_kv
    kv_bytes = context.KV_BYTES_ARCHITECTURE(kv_layers=model.n_layers, head_dim=model.d_head, kv_heads=heads,
                                             bytes_kv=width)
    return float(context.OUTPUT_INPUT_LIMIT(FLOPs=chip.flops[RATIO_LIMIT["compute"]] * flops_scale,
                                            mem_bw=chip.hbm_bandwidth, bytes_tok=kv_bytes,
                                            attn_layers=model.n_layers, head_dim=model.d_head, q_heads=model.n_heads))


register("6.16", Problem(
    "Where the output/input ratio levels off", "number", _ratio_limit, rtol=0.02, unit="×",
    mistakes=(Mistake(lambda: _ratio_limit(flops_scale=0.5),
                      "That is half: it counts multiplies per second. The attention FLOPs count 2 per multiply-add, "
                      "so use the chip's FLOP/s."),
              Mistake(lambda: _ratio_limit(kv_heads=models.get(RATIO_LIMIT["model"]).n_heads),
                      "That gives every query head its own keys and values. Llama-3.1-8B shares each KV head among "
                      "4 query heads (grouped-query attention)."),
              Mistake(lambda: _ratio_limit(bytes_kv=2),
                      "That stores the KV cache in BF16; the problem keeps it in FP8, one byte per value.")),
    wrong_hint="As the context grows, both times per token are dominated by their context terms: a decode token reads "
               "bytes_tok bytes per context token, a prefill token does 4 n_layers n_Q_heads d_head FLOPs per context "
               "token. Take the ratio of the two times."))
