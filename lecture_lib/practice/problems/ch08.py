"""Chapter 8's practice problems (solutions/08_roofline_vs_reality.ipynb).

Every expected value is computed from the library's presets, Formulas and dataset with the inputs the
problem statement names; see :mod:`lecture_lib.practice.checks` for how answers are judged.
"""

from __future__ import annotations

import dataclasses

import sympy as sp

from lecture_lib import collectives, hardware, measurements, models, roofline
from lecture_lib import symbols as _symbols

from ..registry import Mistake, Probe, Problem, register

#: MXFP4 as gpt-oss stores its experts: 4-bit values plus one 8-bit scale per 32 (4.25 bits).
MXFP4_BYTES = 4.25 / 8


def _deepseek():
    return models.get("deepseek-v3")


def _deepseek_batch_one_read(form: str = "rows") -> float:
    m = _deepseek()
    if form == "table":         # the whole input-embedding table, as the lecture's N_total counts it
        return roofline.params_read(m, tokens=1, embedding_rows=False)
    if form == "total":
        return float(m.params_total)
    return roofline.params_read(m, tokens=1)


def _tokens_for_ninety_percent() -> float:
    m = _deepseek()
    expr = roofline.EXPECTED_EXPERTS.subs(n_experts=m.n_routed_experts, k_active=m.experts_per_token)
    return float(sp.nsolve(expr - sp.Rational(9, 10) * m.n_routed_experts, _symbols.B, 70))


def _gpt_oss_batch_one(all_experts: bool = False) -> float:
    d = collectives.deployment(hardware.get("B200"), n_chips=4)
    out = roofline.decode_bound(models.get("gpt-oss-120b"), d, batch=1, len_ctx=1024, weight_dtype=MXFP4_BYTES,
                                compute_dtype="fp8", kv_dtype="bf16", expected_experts_read=not all_experts)
    return out["tokens_per_s"]


def _implied_tau() -> float:
    row = measurements.get("trtllm-llama70b-h200-batch1-spec")
    return row.measured / row.bound


def _cache_lift(attention: bool = True) -> float:
    row = measurements.get("deepseek-prefill-h800")
    m = models.get(row.model)
    warm = roofline.prefill_bound(m, row.deployment, len_in=row.len_in, hit_rate=row.hit_rate, attention=attention)
    cold = roofline.prefill_bound(m, row.deployment, len_in=row.len_in, attention=attention)
    return warm["input_tokens_per_s"] / cold["input_tokens_per_s"]


def _absorbed_ratio() -> float:
    m = _deepseek()
    return roofline.attention_flops(m, 8192, absorbed=True) / roofline.attention_flops(m, 8192)


CLOSEST_CANDIDATES = ("deepseek-decode-h800", "sglang-prefill-96xh100", "trtllm-llama405b-fp8-h200-2k",
                      "trtllm-llama70b-h200-batch1")


def _closest() -> str:
    return max(CLOSEST_CANDIDATES, key=lambda key: measurements.get(key).efficiency)


def _kv_added_ratio() -> float:
    m, rack = _deepseek(), hardware.get_system("GB200 NVL72")
    kw = dict(batch=16384, n_active=m.params_active, n_total=m.params_total, flops=rack.flops["fp4"],
              mem_bw=rack.hbm_bandwidth, bytes_param=0.5, len_ctx=1024, bytes_tok=m.kv_bytes_per_token("fp8"))
    return roofline.decode_step(step_form="kv_added", **kw)["t"] / roofline.decode_step(**kw)["t"]


def _experts_times_b():
    """The slip of multiplying the miss probability by B instead of raising it to the power B."""
    E, k, B = _symbols.n_experts, _symbols.k_active, _symbols.B
    return E * (1 - (1 - k / E) * B)


register("8.1", Problem(
    "Derive the expected experts touched", "expression", lambda: roofline.EXPECTED_EXPERTS.rhs,
    # The chapter writes E for the routed experts (n_experts) and k for k_active: "E(1-(1-k/E)^B)" is its notation.
    letters={"E": "n_experts", "k": "k_active"},
    mistakes=(Mistake(_experts_times_b,
                      "All B tokens miss a given expert with probability (1 − k/E) to the power B, not times B: "
                      "the tokens choose independently, so their probabilities multiply."),),
    probes=(Probe({"B": 1}, "B = 1", "k, since a single token touches exactly k experts"),),
    wrong_hint="Find the probability that one given expert is missed by all B tokens, then use linearity of "
               "expectation over the E experts."))
register("8.2", Problem(
    "What DeepSeek-V3 reads at batch 1", "number", _deepseek_batch_one_read, rtol=0.01, unit="parameters",
    mistakes=(Mistake(lambda: _deepseek_batch_one_read("total"),
                      "That is every parameter: the lecture's large-batch form. At batch 1 each MoE layer "
                      "reads only the experts its one token is routed to."),
              Mistake(lambda: _deepseek_batch_one_read("table"),
                      "That reads the whole input-embedding table; a lookup reads one row per token."))))
register("8.3", Problem(
    "Tokens to touch 90% of the experts", "number", _tokens_for_ninety_percent, rtol=0.02, unit="tokens",
    wrong_hint="Set the expected experts touched equal to 0.9 E and solve for B; a logarithm appears."))
register("8.4", Problem(
    "gpt-oss-120b at batch 1 on four B200s", "number", _gpt_oss_batch_one, rtol=0.03, unit="tokens per second",
    mistakes=(Mistake(lambda: _gpt_oss_batch_one(all_experts=True),
                      "That bound reads all 128 experts of every layer. One token touches only 4 of them."),)))
register("8.5", Problem(
    "What the speculative-decoding figure implies", "number", _implied_tau, rtol=0.02,
    unit="accepted tokens per step",
    mistakes=(Mistake(lambda: 181.74 / 51.14,
                      "That is the speed-up over the measured baseline, which itself falls short of the "
                      "bound. Compare the figure with the bound instead."),)))
register("8.6", Problem(
    "What the prefix cache is worth to DeepSeek's prefill", "number", _cache_lift, rtol=0.03,
    mistakes=(Mistake(lambda: 0.563, "That is the hit rate itself, not how much it lifts the bound."),
              Mistake(lambda: 1 / 0.563, "Divide by the share of tokens still to compute, 1 − h."))))
register("8.7", Problem(
    "Absorbed MLA: how many more attention FLOPs?", "number", _absorbed_ratio, rtol=0.02,
    wrong_hint="Absorbed, every head's query meets the 576-wide latent key and the 512-wide latent value."))
register("8.8", Problem(
    "Which figure comes closest to its bound?", "choice", _closest, options=CLOSEST_CANDIDATES,
    wrong_hint="Compute measured / bound for each; one of them has no all-to-all and no tensor-parallel "
               "all-reduce on its critical path."))
register("8.9", Problem(
    "The other step form", "number", _kv_added_ratio, rtol=0.02,
    wrong_hint="Compute both step times with roofline.decode_step, once with step_form='kv_added'."))


# --- Problems on the primary-source rows (issue 21) ------------------------------------------------

#: MTP with this many draft layers can add at most this many accepted tokens to the model's own one.
MTP_DRAFT_LAYERS = 3


def _mtp_share(tau: float = MTP_DRAFT_LAYERS + 1) -> float:
    row = measurements.get("trtllm-dsr1-b200-batch1")
    return row.measured / dataclasses.replace(row, tokens_per_step=tau).bound


def _mi300x_generous_bound(dtype: str = "fp8") -> float:
    m, d = models.get("llama-2-70b"), collectives.deployment(hardware.get_system("MI300X platform"))
    ctx = measurements.get("mlperf41-llama2-70b-mi300x8").len_out / 2
    batch = roofline.batch_that_fits(m, d, len_ctx=ctx, weight_bytes=dtype, kv_dtype=dtype)
    return roofline.decode_bound(m, d, batch=batch, len_ctx=ctx, weight_dtype=dtype, compute_dtype=dtype,
                                 kv_dtype=dtype)["tokens_per_s"]


register("8.10", Problem(
    "What multi-token prediction leaves on the table", "number", _mtp_share, rtol=0.03,
    unit="of the bound",
    mistakes=(Mistake(lambda: _mtp_share(MTP_DRAFT_LAYERS),
                      "Three draft layers propose three tokens, and the verifying step also emits the model's "
                      "own next token: up to four per step."),
              Mistake(lambda: _mtp_share(1),
                      "That is the share of the one-token-per-step bound; with MTP the ceiling is higher."))))
register("8.11", Problem(
    "Llama 2 70B on eight MI300X: the most generous bound", "number", _mi300x_generous_bound, rtol=0.03,
    unit="tokens per second",
    mistakes=(Mistake(lambda: _mi300x_generous_bound(dtype="bf16"),
                      "AMD's submission ran FP8 (its code path is test_VllmFp8): one byte per weight and the FP8 peak."),
              Mistake(lambda: _mi300x_generous_bound() / 8,
                      "That is one GPU's share; the MLPerf figure is for the whole platform of eight."))))


# --- Choosing speculative decoding's depth (issue 49 §5) --------------------------------------------------------

SPEC_ACCEPTANCE = 0.8      # chance each drafted token is accepted
SPEC_DRAFT_COST = 0.05     # one draft pass over one plain target step
SPEC_SEQUENCES = 64


def _spec_compute_ratio() -> float:
    """rho = t_compute / t_mem of Llama-3-70B's plain step on one H200 (FP8 weights and KV, 4,096 tokens)."""
    h200 = collectives.deployment(hardware.get("H200"), n_chips=1)
    plain = roofline.decode_bound(models.get("llama-3-70b"), h200, batch=SPEC_SEQUENCES, len_ctx=4096,
                                  weight_dtype="fp8", kv_dtype="fp8")
    return plain["t_compute"] / (plain["t_weights"] + plain["t_kv"])


def _spec_depth(compute: bool = True, cost: bool = True) -> float:
    best = roofline.best_draft_depth(acceptance=SPEC_ACCEPTANCE, draft_cost=SPEC_DRAFT_COST if cost else 0.0,
                                     compute_ratio=_spec_compute_ratio() if compute else 0.0)
    return float(best["depth"])


register("8.12", Problem(
    "How many tokens should speculative decoding draft?", "number", _spec_depth, rtol=0.01, unit="draft tokens",
    mistakes=(Mistake(lambda: _spec_depth(compute=False),
                      "That depth would be right at one sequence, where verifying extra tokens is free. At 64 "
                      "sequences the verifying step turns compute-bound after a few drafts: take rho from the "
                      "roofline (t_compute over t_weights + t_kv) and put it in the formula."),
              Mistake(lambda: _spec_depth(compute=False, cost=False),
                      "That is the largest depth allowed: with free drafts and a free verify, deeper always keeps "
                      "more tokens. Each draft pass costs 5% of a step."),
              Mistake(lambda: roofline.best_draft_depth(acceptance=SPEC_ACCEPTANCE, draft_cost=SPEC_DRAFT_COST,
                                                        compute_ratio=_spec_compute_ratio())["speedup"],
                      "That is the speed-up at the best depth. The question asks for the depth itself: how many "
                      "tokens to draft."))))
