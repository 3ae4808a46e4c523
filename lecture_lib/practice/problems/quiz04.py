"""Chapter 4's quiz and exam questions (quizzes/04_pipelining_is_not_wise_quiz.ipynb): problems 4.101-4.106.

Released only through nbgrader (``nbgrader-source quizzes``); most numbers vary per student. Every expected value
is computed from the library, as in ``ch04.py``.
"""

from __future__ import annotations

import sympy as sp

from lecture_lib import hardware, models
from lecture_lib import pipeline_memory as pm

from ..registry import Mistake, Problem, Vary, register


def _token_time(stages: int = 4) -> float:
    return float(pm.token_time(step_time=20e-3, stages=stages, hop_time=1e-3))


def _max_micro(context: float = 64_000, *, stages: int = 4) -> float:
    deepseek = models.get("deepseek-v3")
    return float(pm.max_micro_batch(hbm_capacity=hardware.get("GB200").hbm_capacity, n_total=deepseek.params_total,
                                    bytes_param=1, len_ctx=context, bytes_tok=deepseek.kv_bytes_per_token("fp8"),
                                    expert_parallel=64, stages=stages))


def _llama_per_gpu(boxes: int = 2, *, gpus: int = 8) -> float:
    return float(pm.WEIGHTS_PER_GPU(N_total=models.get("llama-3-405b").params_total, bytes_param=1, n_ep=gpus, P=boxes))


def _what_shrinks() -> str:
    P = pm.P
    parts = sp.Add.make_args(sp.expand(pm.MEMORY_PER_GPU_PIPELINED.rhs))
    weights = [part for part in parts if pm.N_total in part.free_symbols]
    kv = [part for part in parts if pm.N_total not in part.free_symbols]
    shrinks = (any(sp.diff(p, P) != 0 for p in weights), any(sp.diff(p, P) != 0 for p in kv))
    return {(True, False): "a", (False, True): "b", (True, True): "c", (False, False): "d"}[shrinks]


def _fixed_batch_kv() -> str:
    slope = sp.diff(pm.KV_PER_GPU_FIXED_BATCH.rhs, pm.P)
    sign = sp.sign(slope.subs({s: 1 for s in slope.free_symbols}))
    return {-1: "a", 1: "b", 0: "c"}[int(sign)]


def _stage_fetch(boxes: int = 4) -> float:
    return float(pm.STAGE_WEIGHT_TIME(N_total=models.get("llama-3-405b").params_total, bytes_param=1, P=boxes,
                                      bw_gpu=hardware.get("H100").hbm_bandwidth, n_ep=8))


STAGES = Vary("stages", "P, the pipeline stages", 4, (2, 3, 6, 8), "stages")
CONTEXT = Vary("context", "the context per sequence", 64_000, (32_000, 48_000, 128_000, 200_000), "tokens")
BOXES = Vary("boxes", "P, the boxes (stages)", 2, (3, 4, 6, 8), "boxes")
BOXES_H100 = Vary("boxes", "P, the boxes (stages)", 4, (2, 3, 6, 8), "boxes")

register("4.101", Problem(
    "A token's time through the stages", "number", _token_time, rtol=0.02, unit="seconds", variants=(STAGES,),
    mistakes=(Mistake(lambda stages=4: 20e-3 * stages,
                      "The stages share the 20 ms of work between them (a P-th each): only the hops add up."),)))
register("4.102", Problem(
    "The largest micro-batch that fits at a shorter context", "number", _max_micro, rtol=0.02, unit="sequences",
    variants=(CONTEXT,),
    mistakes=(Mistake(lambda context=64_000: _max_micro(context, stages=1),
                      "That is one stage; with P = 4 stages each holds a quarter of the weights."),)))
register("4.103", Problem(
    "Llama 3 405B pipelined over H200 boxes", "number", _llama_per_gpu, rtol=0.02, unit="bytes",
    variants=(BOXES,),
    mistakes=(Mistake(lambda boxes=2: _llama_per_gpu(1), "That is one box holding the whole model."),)))
register("4.104", Problem(
    "Which memory shrinks with more stages", "choice", _what_shrinks, options=("a", "b", "c", "d"),
    nudges={"b": "Each stage holds its layers for all P micro-batches in flight: the P's cancel in the KV term.",
            "c": "Substitute B = P b in pm.MEMORY_PER_GPU and look for P in each term."}))
register("4.105", Problem(
    "One micro-batch in flight", "choice", _fixed_batch_kv, options=("a", "b", "c", "d"),
    nudges={"c": "With one micro-batch the global batch does not grow with P: see pm.KV_PER_GPU_FIXED_BATCH."}))
register("4.106", Problem(
    "A stage's weight fetch on H100 boxes", "number", _stage_fetch, rtol=0.02, unit="seconds",
    variants=(BOXES_H100,),
    mistakes=(Mistake(lambda boxes=4: _stage_fetch(1), "That reads the whole model; a stage reads only its layers."),)))
