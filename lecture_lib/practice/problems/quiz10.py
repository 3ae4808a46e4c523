"""Chapter 10's quiz and exam questions (quizzes/10_plan_a_deployment_quiz.ipynb): problems 10.101-10.106.

Released only through nbgrader (``nbgrader-source quizzes``); most numbers vary per student. Every expected value
is computed with the planner (:func:`lecture_lib.plan.plan`), as in ``ch10.py``.
"""

from __future__ import annotations

from lecture_lib import models, plan

from ..registry import Mistake, Problem, Vary, register


def _numbers(*args, **kwargs) -> dict:
    return plan.plan(*args, **kwargs).numbers


def _fit(context: int = 8192) -> float:
    return float(_numbers("llama-3.1-8b", "H100", len_ctx=context)["capacity"]["tp_max_batch"])


def _floor(gpus: int = 4) -> float:
    return float(_numbers("gpt-oss-120b", "H100", n_chips=gpus)["decode"]["latency_floor"])


def _output_price(price: float = 3.0, *, side: str = "output") -> float:
    return float(_numbers("llama-3-70b", "HGX H200", price_per_gpu_hour=price)["cost"][f"usd_per_million_{side}"])


def _layout() -> str:
    chosen = plan.auto_layout(models.get("qwen3-235b-a22b"), plan.resolve_deployment("HGX H200"))
    return {"tp": "a", "pp": "b", "dp_ep": "c"}[chosen]


def _longer_context() -> str:
    ratio = _fit(8192) / _fit(4096)
    for letter, value in (("a", 0.5), ("b", 2.0), ("c", 1.0), ("d", 0.25)):
        if abs(ratio / value - 1) < 0.05:
            return letter
    raise RuntimeError(f"problem 10.105: unexpected ratio {ratio}")


def _prefill(len_in: int = 4096) -> float:
    return float(_numbers("llama-3-70b", "HGX H100", len_in=len_in, len_out=512)["prefill"]["t_prefill"])


CONTEXT = Vary("context", "the context per sequence", 8192, (2048, 4096, 16384, 32768), "tokens")
GPUS = Vary("gpus", "the H100 GPUs", 4, (1, 2, 8), "GPUs")
PRICE = Vary("price", "the price per GPU-hour", 3.0, (1.5, 2.0, 4.0, 5.0), "dollars")
PROMPT = Vary("len_in", "the prompt length", 4096, (1024, 2048, 8192, 16384), "tokens")

register("10.101", Problem(
    "How many Llama 3.1 8B sequences fit on one H100", "number", _fit, rtol=0.02, unit="sequences",
    variants=(CONTEXT,),
    wrong_hint="plan.plan(model, chip, len_ctx=...).numbers['capacity']: the planner keeps 10% of HBM free."))
register("10.102", Problem(
    "gpt-oss-120b's latency floor on a few H100s", "number", _floor, rtol=0.02, unit="seconds", variants=(GPUS,),
    wrong_hint="plan.plan(model, 'H100', n_chips=...).numbers['decode']['latency_floor']."))
register("10.103", Problem(
    "Llama 3 70B's output price on a rented H200 box", "number", _output_price, rtol=0.02,
    unit="dollars per million tokens", variants=(PRICE,),
    mistakes=(Mistake(lambda price=3.0: _output_price(price, side="input"),
                      "That is the price of input (prefill) tokens; the question asks for output tokens."),
              Mistake(lambda price=3.0: _output_price(price, side="output_realistic"),
                      "That is the realistic estimate's price; the question asks for the bound's (the lines marked "
                      "'(bound)')."),
              Mistake(lambda price=3.0: _output_price(price, side="output_all_in_realistic"),
                      "That is the headline's realistic price, prefill included; the question asks for the bound's "
                      "decode-only price (the lines marked '(bound)')."))))
register("10.104", Problem(
    "The planner's layout for an MoE on one box", "choice", _layout, options=("a", "b", "c", "d"),
    nudges={"a": "Tensor parallelism splits every matrix; what does an MoE's many experts suggest instead?",
            "b": "Chapter 4: pipelining buys no latency and no room for sequences."}))
register("10.105", Problem(
    "Twice the context, how many sequences?", "choice", _longer_context, options=("a", "b", "c", "d"),
    nudges={"c": "The KV cache of a sequence grows with its context, and the room for it does not."}))
register("10.106", Problem(
    "Prefill time of a longer prompt", "number", _prefill, rtol=0.02, unit="seconds", variants=(PROMPT,),
    wrong_hint="plan.plan(model, system, len_in=..., len_out=...).numbers['prefill']['t_prefill']."))
