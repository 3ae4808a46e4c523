"""Chapter 10's practice problems (solutions/10_plan_a_deployment.ipynb): plan a model the course has not shown.

The model is Qwen3-30B-A3B, read from its published ``config.json`` (huggingface.co/Qwen/Qwen3-30B-A3B,
config.json; model card: "30.5B in total and 3.3B activated", 48 layers, 32 query and 4 KV heads, 128 experts,
8 activated). Every expected value is computed with :func:`lecture_lib.plan.plan` or the chapter functions it
calls, from the inputs the problem statement names; see :mod:`lecture_lib.practice.checks` for how answers are judged.
"""

from __future__ import annotations

import dataclasses
import math

from lecture_lib import collectives, hardware, hf_config, roofline
from lecture_lib import plan as planner

from ..problem_data import QWEN3_30B_A3B_CONFIG
from ..registry import Mistake, Problem, register

CHIP = "H100"
CONTEXT = 8192
PRICE = 2.5            # USD per GPU-hour, the problems' assumption
TARGET = 0.010         # 10 ms per output token


def qwen3_30b():
    return hf_config.from_hf_config(QWEN3_30B_A3B_CONFIG)


def _fit(kv_heads: int | None = None, weights: str = "fp8") -> float:
    m = qwen3_30b()
    if kv_heads is not None:
        m = dataclasses.replace(m, n_kv_heads=kv_heads)
    d = collectives.deployment(hardware.get(CHIP), n_chips=1)
    return roofline.batch_that_fits(m, d, len_ctx=CONTEXT, weight_bytes=weights, kv_dtype="bf16")


def _floor_rate(all_experts: bool = False) -> float:
    d = collectives.deployment(hardware.get(CHIP), n_chips=1)
    return roofline.decode_bound(qwen3_30b(), d, batch=1, len_ctx=CONTEXT,
                                 expected_experts_read=not all_experts)["tokens_per_s_per_seq"]


def _plan(latency_target=TARGET):
    return planner.plan(qwen3_30b(), CHIP, n_chips=1, price_per_gpu_hour=PRICE, len_ctx=CONTEXT,
                        latency_target=latency_target)


def _cost(per: str = "output", scale: float = 1.0, at: str = "") -> float:
    """The plan's price per million ``per`` tokens: at the bound, or with ``at="_realistic"`` at the realistic
    estimate, the price the plan's first lines quote."""
    got = _plan().numbers["cost"]
    return scale * got[("usd_per_million_output" if per == "output" else "usd_per_million_input") + at]


_REALISTIC_PRICE = ("That is the realistic estimate's price, the one the plan's first lines quote. The question asks "
                    "for the bound's: the cost lines marked (bound).")


register("10.1", Problem(
    # A whole number of sequences: the room divided by one sequence's cache, rounded down (61). The tolerance,
    # 0.5% (±0.3 sequence), takes only that whole number: 62 does not fit, and 61.4 is not rounded.
    "How many Qwen3-30B-A3B sequences fit on one H100", "number", lambda: float(math.floor(_fit())),
    rtol=0.005, unit="sequences",
    mistakes=(Mistake(_fit, "That is the room divided by one sequence's cache before rounding: a fraction of a "
                            "sequence cannot be served. Round down to whole sequences.", rtol=0.004),
              Mistake(lambda: math.ceil(_fit()), "That rounds up: the last sequence's cache would not fit in the HBM "
                                                 "left. Round down to whole sequences.", rtol=0.004),
              Mistake(lambda: _fit(kv_heads=32),
                      "That caches K and V for all 32 query heads. The config's num_key_value_heads is 4 (GQA): "
                      "each layer stores only 4 heads' keys and values.", rtol=0.1),
              Mistake(lambda: _fit(weights="bf16"),
                      "That stores the weights in BF16. The problem says FP8: one byte per weight.", rtol=0.03))))
register("10.2", Problem(
    "The batch-1 latency floor of Qwen3-30B-A3B, as tokens per second", "number", _floor_rate, rtol=0.02,
    unit="tokens/s per user",
    mistakes=(Mistake(lambda: _floor_rate(all_experts=True),
                      "That reads every expert at batch 1. One token routes to 8 of the 128 experts per layer; "
                      "the others stay in HBM (Chapter 8's expected experts touched)."),
              Mistake(lambda: 1e3 / _floor_rate(),
                      "That is the time per token in milliseconds. The question asks for its inverse, tokens per "
                      "second for one user."))))
register("10.3", Problem(
    "Dollars per million output tokens at a 10 ms target", "number", _cost, rtol=0.02, unit="USD per million tokens",
    mistakes=(Mistake(lambda: _cost("input"),
                      "That is the input (prefill) price. The question asks for output tokens, made by decode steps "
                      "at the operating batch."),
              Mistake(lambda: _cost(scale=1e-6),
                      "That is dollars per token; the question asks per million tokens."),
              Mistake(lambda: _cost(at="_realistic"), _REALISTIC_PRICE))))


# --- More of the plan, piece by piece ----------------------------------------------------------------------

def _balance(sparsity: bool = True, compute: str = "fp8") -> float:
    m = qwen3_30b()
    return roofline.balance_batch(hardware.get(CHIP), weight_bytes=1, compute_dtype=compute,
                                  sparsity=m.sparsity if sparsity else 1.0)


def _prefill(n_params: str = "active") -> float:
    m = qwen3_30b()
    if n_params == "total":
        m = dataclasses.replace(m, n_routed_experts=m.n_routed_experts, experts_per_token=m.n_routed_experts)
    d = collectives.deployment(hardware.get(CHIP), n_chips=1)
    return roofline.prefill_bound(m, d, len_in=CONTEXT, compute_dtype="fp8")["t_prefill"]


def _reality(kind: str = "decode", applied: bool = True) -> float:
    """The bound's tokens/s per GPU times the median share of the plan's band: Chapter 8's rows of the plan's
    class (MoE, memory- or compute-bound at the operating point), decode or prefill."""
    got = _plan().numbers
    rate = got["decode"]["tokens_per_s_per_gpu"]
    return rate * got["reality"][f"{kind}_band"]["median"] if applied else rate


NODE = "HGX H100"


def _tp_batch(layout="tp") -> float:
    d = collectives.deployment(hardware.get_system(NODE))
    return roofline.batch_that_fits(qwen3_30b(), d, len_ctx=CONTEXT, weight_bytes="fp8", kv_dtype="bf16",
                                    layout=layout)


register("10.4", Problem(
    "Qwen3-30B-A3B's balance batch on an H100", "number", _balance, rtol=0.02, unit="sequences",
    mistakes=(Mistake(lambda: _balance(sparsity=False),
                      "That is the H100's hardware ratio alone, the balance batch of a dense model. An MoE stores "
                      "N_total but computes with N_active: multiply by the sparsity."),
              Mistake(lambda: _balance(compute="bf16"),
                      "That uses the BF16 peak. FP8 weights multiply at the FP8 peak, twice as fast."))))
register("10.5", Problem(
    "Time to prefill 8,192 tokens of Qwen3-30B-A3B on one H100", "number", _prefill, rtol=0.02, unit="seconds",
    mistakes=(Mistake(lambda: _prefill("total"),
                      "That computes with every expert. Each prompt token goes through 8 of the 128 experts per "
                      "layer: prefill FLOPs are 2 N_active per token, plus attention."),
              Mistake(lambda: 1e3 * _prefill(),
                      "That is in milliseconds; give seconds."))))
register("10.6", Problem(
    "What the reality band suggests at the 10 ms operating point", "number", _reality, rtol=0.02,
    unit="tokens/s per GPU",
    mistakes=(Mistake(lambda: _reality(applied=False),
                      "That is the bound itself. Chapter 8's decode rows reached only a share of it: apply the median."),
              # no slip for the prefill rows' median: with the rows as they are it lands within 1% of the decode
              # rows', inside the answer's tolerance, so it is judged right and a nudge for it could never show
              )))
register("10.7", Problem(
    "Tensor parallelism over eight H100s: how many sequences fit", "number", _tp_batch, rtol=0.02, unit="sequences",
    mistakes=(Mistake(lambda: _tp_batch(layout=None),
                      "That pools the eight GPUs' HBM and splits the KV evenly. Qwen3-30B-A3B has 4 KV heads: with "
                      "TP over 8 GPUs, each head is kept on two GPUs, so the KV cache is stored twice."),
              Mistake(lambda: _tp_batch(layout="dp_ep"),
                      "That is DP attention + EP: every GPU holds its own sequences' whole cache. The question is "
                      "plain tensor parallelism."))))
register("10.8", Problem(
    "Dollars per million input tokens", "number", lambda: _cost("input"), rtol=0.02, unit="USD per million tokens",
    mistakes=(Mistake(lambda: _cost("output"),
                      "That is the output price. Input tokens are computed by prefill, many per step."),
              Mistake(lambda: _cost("input", scale=1e-6),
                      "That is dollars per token; the question asks per million tokens."),
              Mistake(lambda: _cost("input", at="_realistic"), _REALISTIC_PRICE))))
