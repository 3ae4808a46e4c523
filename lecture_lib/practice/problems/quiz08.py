"""Chapter 8's quiz and exam questions (quizzes/08_roofline_vs_reality_quiz.ipynb): problems 8.101-8.106.

Released only through nbgrader (``nbgrader-source quizzes``); most numbers vary per student. Every expected value
is computed from the library, as in ``ch08.py``.
"""

from __future__ import annotations

import sympy as sp

from lecture_lib import collectives, hardware, models, roofline

from ..registry import Mistake, Problem, Vary, register


def _nvlink() -> float:
    return hardware.get("H100").scale_up_bandwidth


def _experts_touched(batch: int = 16) -> float:
    deepseek = models.get("deepseek-v3")
    return float(roofline.EXPECTED_EXPERTS(n_experts=deepseek.n_routed_experts, k_active=deepseek.experts_per_token,
                                           B=batch))


def _all_reduce(n_ring: int = 8, *, kind=None) -> float:
    formula = kind or collectives.ALL_REDUCE
    return float(formula(bytes_msg=1e9, n_ring=n_ring, bw_link=_nvlink()))


def _ep_width(ep: int = 8) -> float:
    return float(collectives.ep_critical_d_ff(ep=ep, flops=hardware.get("H100").flops["fp8"], link_bandwidth=_nvlink(),
                                              bytes_per_value=1))


def _reduce_against_gather() -> str:
    ratio = sp.simplify(collectives.ALL_REDUCE.rhs / collectives.ALL_GATHER.rhs)
    return {sp.Integer(1): "a", sp.Integer(2): "b", sp.Rational(1, 2): "d"}.get(ratio, "c")


def _batch_one_reads() -> str:
    deepseek = models.get("deepseek-v3")
    per_expert = 3 * deepseek.d_model * deepseek.d_ff_expert
    fixed = deepseek.params_total - deepseek.n_moe_layers * deepseek.n_routed_experts * per_expert
    read = float(roofline.PARAMS_READ(B=1, L_moe=deepseek.n_moe_layers, N_expert=per_expert, N_fixed=fixed,
                                      k_active=deepseek.experts_per_token, n_experts=deepseek.n_routed_experts))
    to_active, to_total = abs(read / deepseek.params_active - 1), abs(read / deepseek.params_total - 1)
    if to_active < 0.1:
        return "a"
    return "b" if to_total < 0.1 else "c"


def _small_all_reduce(message: float = 2e6) -> float:
    base, hop = collectives.nccl_latency()
    return float(collectives.collective_latency_time("allreduce", bytes_total=message, n_devices=8,
                                                     link_bandwidth=_nvlink(), hop_latency=hop, base_latency=base))


BATCH = Vary("batch", "the batch (tokens in the step)", 16, (4, 8, 32, 64), "tokens")
RING = Vary("n_ring", "the GPUs in the ring", 8, (2, 4, 16, 32), "GPUs")
EP = Vary("ep", "the expert-parallel degree", 8, (4, 16, 32, 64), "GPUs")
MESSAGE = Vary("message", "the message size", 2e6, (5e5, 1e6, 5e6, 1e7, 3e7), "bytes")

register("8.101", Problem(
    "DeepSeek-V3's experts touched by a small batch", "number", _experts_touched, rtol=0.02, unit="experts",
    variants=(BATCH,),
    mistakes=(Mistake(lambda batch=16: float(min(batch * 8, 256)),
                      "That assumes no two tokens share an expert; some do, by chance."),)))
register("8.102", Problem(
    "A ring all-reduce of 1 GB", "number", _all_reduce, rtol=0.02, unit="seconds", variants=(RING,),
    mistakes=(Mistake(lambda n_ring=8: _all_reduce(n_ring, kind=collectives.ALL_GATHER),
                      "That is an all-gather; an all-reduce is a reduce-scatter and then an all-gather."),)))
register("8.103", Problem(
    "How wide must an expert be to hide its all-to-all?", "number", _ep_width, rtol=0.02, unit="d_ff",
    variants=(EP,),
    wrong_hint="collectives.ep_critical_d_ff(ep=..., flops=..., link_bandwidth=..., bytes_per_value=1)."))
register("8.104", Problem(
    "All-reduce against all-gather", "choice", _reduce_against_gather, options=("a", "b", "c", "d"),
    nudges={"a": "An all-reduce is a reduce-scatter followed by an all-gather.",
            "c": "The ring's size cancels: compare collectives.ALL_REDUCE with collectives.ALL_GATHER."}))
register("8.105", Problem(
    "What DeepSeek-V3 reads at batch 1", "choice", _batch_one_reads, options=("a", "b", "c", "d"),
    nudges={"b": "One token touches only its 8 routed experts per layer (roofline.PARAMS_READ at B = 1)."}))
register("8.106", Problem(
    "A small all-reduce with latency", "number", _small_all_reduce, rtol=0.02, unit="seconds", variants=(MESSAGE,),
    mistakes=(Mistake(lambda message=2e6: _all_reduce(8) * message / 1e9,
                      "That is the bandwidth term alone; small messages also pay NCCL's per-step latency."),)))
