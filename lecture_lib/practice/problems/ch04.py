"""Chapter 4's practice problems (solutions/04_pipelining_is_not_wise.ipynb).

Every expected value is computed from the library's presets, Formulas and the Chapter 3 schedule
simulator, with the inputs the problem statement names; see :mod:`lecture_lib.practice.checks`.
"""

from __future__ import annotations

import math

import sympy as sp

from lecture_lib import hardware, models, pipeline, roofline
from lecture_lib import pipeline_memory as pm
from lecture_lib import symbols as _symbols

from ..registry import Mistake, Problem, Vary, register

CONTEXT = 100_000
MICRO_BATCH = 2400


def _deepseek():
    return models.get("deepseek-v3")


def _weights_per_gpu(*, params: str = "total", bytes_param: float = 1.0, gpus: int = 64) -> float:
    model = _deepseek()
    n = model.params_total if params == "total" else model.params_active
    return pm.WEIGHTS_PER_GPU(N_total=n, bytes_param=bytes_param, n_ep=gpus, P=1)


def _kv_per_gpu(*, kv_bytes: float = 1.0, batch: str = "pipelined", spread_over_stages: bool = True,
                context: float = CONTEXT, micro_batch: float = MICRO_BATCH, gpus: float = 64) -> float:
    """KV per GPU with E GPUs per stage and P = 4. The defaults give the right answer (E4.4)."""
    bytes_tok = _deepseek().kv_bytes_per_token(kv_bytes)
    if batch == "fixed":   # one micro-batch in flight: B = b, spread over E P GPUs
        return pm.KV_PER_GPU_FIXED_BATCH(b=micro_batch, len_ctx=context, bytes_tok=bytes_tok, n_ep=gpus, P=4)
    per_gpu = pm.KV_PER_GPU(b=micro_batch, len_ctx=context, bytes_tok=bytes_tok, n_ep=gpus)
    return per_gpu if spread_over_stages else 4 * per_gpu


# Graded work draws these per student (lecture_lib.practice.variants). Any E up to a rack, any micro-batch of
# thousands and any context of tens to hundreds of thousands of tokens leave the chapter's reasoning unchanged.
GPUS = Vary("gpus", "E, the GPUs the experts are spread over", 64,
            (8, 12, 16, 18, 24, 28, 32, 36, 40, 48, 56, 60), "GPUs")
MICRO = Vary("micro_batch", "b, the sequences per micro-batch", MICRO_BATCH, (1200, 1600, 2000, 2800, 3200, 3600),
             "sequences")
LONG = Vary("context", "the context per sequence", CONTEXT, (50_000, 60_000, 80_000, 120_000, 150_000, 200_000),
            "tokens")


def _decode_idle(*, stages: int = 6, microbatches: int = 4) -> float:
    return 1.0 - pm.decode_utilisation(stages=stages, microbatches=microbatches)


STAGE_BUDGET = dict(deadline=25e-3, step=20e-3, hop=1.2e-3)


def _stage_budget(*, rounding=math.floor) -> float:
    P = pm.P
    most = sp.solve(sp.Eq(pm.TOKEN_TIME.rhs.subs({pm.t_step: STAGE_BUDGET["step"], pm.t_hop: STAGE_BUDGET["hop"]}),
                          STAGE_BUDGET["deadline"]), P)[0]
    return float(rounding(most)) if rounding else float(most)


def _kimi_on_h100(*, gpus: int = 8, params: str = "total") -> float:
    kimi = models.get("kimi-k2")
    n = kimi.params_total if params == "total" else kimi.params_active
    return pm.weight_fetch_time(n_total=n, bytes_param=1, gpus_reading=gpus,
                                hbm_bandwidth=hardware.get("H100").hbm_bandwidth)


FIT_OPTIONS = ("more stages", "fp4 weights", "fp4 kv cache")


def _biggest_lever() -> str:
    deepseek, gb200 = _deepseek(), hardware.get("GB200")
    base = dict(hbm_capacity=gb200.hbm_capacity, n_total=deepseek.params_total, bytes_param=1.0, len_ctx=CONTEXT,
                bytes_tok=deepseek.kv_bytes_per_token("fp8"), expert_parallel=64, stages=1)
    options = {"more stages": dict(base, stages=2),
               "fp4 weights": dict(base, bytes_param=0.5),
               "fp4 kv cache": dict(base, bytes_tok=deepseek.kv_bytes_per_token("fp4"))}
    fits = {name: pm.max_micro_batch(**kwargs) for name, kwargs in options.items()}
    return max(fits, key=fits.get)


def _smallest_fitting_stages(*, part: str = "total", kv_format: str = "fp8") -> float:
    """Llama-3-405B, bf16 weights, fp8 KV, H100s, E = 8, b = 128, 8192-token context.

    ``part="weights"`` (only the weights must fit) and ``kv_format="bf16"`` give 4.9's known slips."""
    llama, h100 = models.get("llama-3-405b"), hardware.get("H100")
    for p in range(1, 65):
        memory = pm.memory_per_gpu(n_total=llama.params_total, bytes_param=2, micro_batch=128, len_ctx=8192,
                                   bytes_tok=llama.kv_bytes_per_token(kv_format), expert_parallel=8, stages=p)
        if memory[part] <= h100.hbm_capacity:
            return float(p)
    raise RuntimeError("problem 4.9 needs a pipeline depth that fits")


register("4.1", Problem(
    "DeepSeek-V3's weights on one GPU", "number", lambda gpus=64: _weights_per_gpu(gpus=gpus), rtol=0.02,
    unit="bytes", variants=(GPUS,),
    # 4% wide: the board's rounded 37 B active (1.1% above the preset's 36.6 B) is the same slip
    mistakes=(Mistake(lambda gpus=64: _weights_per_gpu(params="active", gpus=gpus),
                      "Those are the active parameters. Every expert must live somewhere, so memory holds "
                      "all of them.", rtol=0.04),
              Mistake(lambda gpus=64: _weights_per_gpu(bytes_param=2, gpus=gpus),
                      "That stores each weight in 2 bytes; the problem says FP8."),
              Mistake(lambda gpus=64: _weights_per_gpu(gpus=72),
                      "The rack has 72 GPUs, but the experts are spread over the GPUs the problem names."))))


def _kv_4_2(micro_batch=MICRO_BATCH, context=CONTEXT, **slip):
    return _kv_per_gpu(micro_batch=micro_batch, context=context, **slip)


register("4.2", Problem(
    "KV cache per GPU with four stages", "number", _kv_4_2, rtol=0.01, unit="bytes", variants=(MICRO, LONG),
    mistakes=(Mistake(lambda **n: _kv_4_2(**n, batch="fixed"),
                      "That keeps one micro-batch in flight. Decode needs one micro-batch per stage, so the "
                      "global batch is P times b."),
              Mistake(lambda **n: _kv_4_2(**n, spread_over_stages=False),
                      "Each GPU holds only its own stage's layers, so only its share of every cache."),
              Mistake(lambda **n: _kv_4_2(**n, kv_bytes=2),
                      "That stores the cache in 2 bytes per value; the problem says FP8."),
              # These two lie 0.4% apart (and 2% above the answer): keep their tolerances tight.
              Mistake(lambda micro_batch=MICRO_BATCH, context=CONTEXT: _kv_4_2(micro_batch, context * 1.024),
                      "That reads K as 1024. Here 100K means 100 000 tokens (and 80K 80 000).", rtol=0.002),
              Mistake(lambda **n: _kv_4_2(**n) * 64 / 72,
                      "The rack has 72 GPUs, but each stage spreads its cache over the 64 the problem names."),
              Mistake(lambda **n: _kv_4_2(**n) + _weights_per_gpu() / 4,
                      "That includes the GPU's share of the weights. The question asks for the KV cache alone.",
                      rtol=0.002))))
register("4.3", Problem(
    "Substitute the global batch", "expression", lambda: pm.MEMORY_PER_GPU_PIPELINED.rhs,
    wrong_hint="Start from C_mem / (E P), replace B by n_micro b, then n_micro by P, and expand. (E, as the "
               "chapter imports it, is the course's n_ep, in a string too.)"))
register("4.4", Problem(
    "Too few micro-batches in the decode loop", "number", _decode_idle, rtol=0.02,
    mistakes=(Mistake(lambda: pipeline.bubble_fraction(stages=6, microbatches=4),
                      "That is the training bubble (P − 1)/(m + P − 1), with its hard stop. The decode loop "
                      "has no hard stop: measure the steady state on the simulator."),
              Mistake(lambda: 1 - _decode_idle(),
                      "That is the share of time a stage is busy; the question asks for the idle share."),
              Mistake(lambda: _decode_idle() / (1 - _decode_idle()),
                      "That divides the idle time by the busy time. The fraction of the time divides by the "
                      "whole loop, busy plus idle.")),
    wrong_hint="On the simulator, measure whole loops of the steady state only: leave out the first loop "
               "(filling up) and the last (draining)."))
register("4.5", Problem(
    "How many stages fit in a latency budget?", "number", _stage_budget, rtol=0.02, unit="stages",
    mistakes=(Mistake(lambda: _stage_budget(rounding=None),
                      "Stages come in whole numbers, and the budget is a ceiling: round the right way."),
              Mistake(lambda: _stage_budget(rounding=math.ceil),
                      "With that many stages the token would arrive after the deadline."))))
register("4.6", Problem(
    "The latency floor of Kimi K2 on H100 boxes", "number", _kimi_on_h100, rtol=0.02, unit="seconds",
    mistakes=(Mistake(lambda: _kimi_on_h100(gpus=16),
                      "That reads only half the weights, or lets both boxes read at once. Two boxes hold the "
                      "model, but they take turns: each reads its half while the other waits."),
              Mistake(lambda: _kimi_on_h100(gpus=1),
                      "That is one GPU's bandwidth. The 8 GPUs of a box read their shares at the same time."),
              Mistake(lambda: pm.weight_fetch_time(n_total=models.get("kimi-k2").params_total, bytes_param=2,
                                                   gpus_reading=8, hbm_bandwidth=hardware.get("H100").hbm_bandwidth),
                      "That reads 2 bytes per weight (BF16); the problem says FP8."),
              Mistake(lambda: _kimi_on_h100(params="active"),
                      "A step of a large batch touches every expert, so it reads all the weights."))))
register("4.7", Problem(
    "The largest micro-batch that fits", "expression", lambda: pm.MAX_MICRO_BATCH.rhs,
    wrong_hint="Set the per-GPU memory (with B = P b) equal to the HBM capacity and solve for b. (E, as the "
               "chapter imports it, is the course's n_ep, in a string too.)"))
register("4.8", Problem(
    "Which lever makes room for more sequences?", "choice", _biggest_lever, options=FIT_OPTIONS,
    alternates={"more stages": ("more pipeline stages", "p = 2", "double p", "stages", "pipelining"),
                "fp4 weights": ("fp4 weight", "weights in fp4", "4-bit weights", "weights fp4", "fp4 params",
                                "quantize weights", "quantise weights"),
                "fp4 kv cache": ("fp4 kv", "kv in fp4", "fp4 cache", "4-bit kv cache", "kv cache", "kv fp4",
                                 "kv cache in fp4", "kv cache fp4", "quantize kv cache", "quantise kv cache",
                                 "4-bit kv")},
    wrong_hint="Compute the largest micro-batch that fits for each option, with pipeline_memory.max_micro_batch."))
register("4.9", Problem(
    "Read the explorer: how many boxes for Llama 3 405B?", "number", _smallest_fitting_stages, rtol=0.02,
    unit="stages",
    mistakes=(Mistake(lambda: _smallest_fitting_stages(part="weights"),
                      "There the weights fit, but the bar also holds the KV cache. With every stage busy "
                      "(B = P b) the KV per GPU does not shrink as P grows: add it in full."),
              Mistake(lambda: _smallest_fitting_stages(kv_format="bf16"),
                      "That stores the KV cache in BF16. The problem keeps the model's FP8 KV cache; only the "
                      "weights are BF16.")),
    wrong_hint="Find the first bar (weights + KV) that stays under the HBM line."))


# --- 'Why' problems (issue 13): conceptual choices, each with a nudge for every tempting wrong letter.
# The expected letter is checked against the library where the reason is a computation.

WHY_OPTIONS = ('a', 'b', 'c', 'd')


def _kv_flat() -> str:
    """4.10: the KV term per GPU has no P once n_micro = P; with a fixed global batch it would."""
    P = _symbols.P
    if sp.diff(pm.KV_PER_GPU.rhs, P) != 0 or sp.diff(pm.KV_PER_GPU_FIXED_BATCH.rhs, P) == 0:
        raise RuntimeError("problem 4.10 assumes the P cancels only with P micro-batches in flight")
    return "a"


def _scale_up_for_latency() -> str:
    """4.11: the pipelined weight fetch has no P, while the fetch time falls with the bandwidth of GPUs in step."""
    total = pipeline.T_WEIGHTS_PIPELINED.rhs.subs(_symbols.bytes_stage, pipeline.WEIGHT_BYTES_PER_STAGE.rhs)
    if _symbols.P in sp.simplify(total).free_symbols or sp.diff(roofline.T_WEIGHTS.rhs, _symbols.mem_bw) >= 0:
        raise RuntimeError("problem 4.11 assumes P cancels and bandwidth shortens the fetch")
    return "d"


def _little_pipelining() -> str:
    """4.12: pipelining shrinks only the weight term per GPU."""
    P = _symbols.P
    if sp.diff(pm.KV_PER_GPU.rhs, P) != 0 or not sp.diff(pm.WEIGHTS_PER_GPU.rhs, P).is_negative:
        raise RuntimeError("problem 4.12 assumes only the weights shrink with P")
    return "b"


register('4.10', Problem(
    'Why does the KV cache per GPU not shrink with P?', "choice", _kv_flat, options=WHY_OPTIONS,
    nudges={
            'b': "No copy is made: a stage stores only its own layers' KV.",
            'c': 'That holds only if the global batch stays fixed, and then P − 1 of the P stages sit idle.',
            'd': "In the lecture's picture the KV cache sits in HBM beside the weights."}))

register('4.11', Problem(
    'Why do bigger scale-up domains, not more stages, cut latency?', "choice", _scale_up_for_latency, options=WHY_OPTIONS,
    nudges={
            'a': 'Pipeline stages take turns: the weight fetch per token is the same whatever P is.',
            'b': 'Each GPU is the same chip either way; what differs is how many GPUs read at the same moment.',
            'c': 'Pipelining adds capacity, never bandwidth for one token: the stages take turns.'}))

register('4.12', Problem(
    'Why do labs serve with little or no pipelining?', "choice", _little_pipelining, options=WHY_OPTIONS,
    nudges={
            'a': 'With P micro-batches in flight every rack stays busy: throughput holds.',
            'c': 'Chapter 3 showed a stage boundary can cross racks without trouble.',
            'd': 'It stays the same; it does not grow.'}))


# --- Issue 49 §5: what pipelining does to the KV per GPU depends on what is held fixed.
# 4.13: the global batch B held fixed and split into P micro-batches of B / P (every stage still busy): substitute
# b = B / P into KV_PER_GPU. Against P = 1 the KV per GPU shrinks by P; with the micro-batch held fixed it does not.
FIXED_GLOBAL = dict(batch=9600, stages=4)


def _kv_fixed_global(stages: float) -> float:
    from lecture_lib.symbols import B, b

    per_gpu = pm.KV_PER_GPU.rhs.subs(b, B / pm.P)
    bytes_tok = _deepseek().kv_bytes_per_token(1.0)
    return float(per_gpu.subs({B: FIXED_GLOBAL["batch"], pm.P: stages, pm.len_ctx: CONTEXT,
                               pm.bytes_tok: bytes_tok, pm.E: 64}))


def _kv_shrink(kind: str = "global") -> float:
    if kind == "micro":             # the micro-batch held fixed: the chapter's answer, no shrink
        return float(pm.KV_PER_GPU.rhs.subs(pm.P, 1) / pm.KV_PER_GPU.rhs.subs(pm.P, FIXED_GLOBAL["stages"]))
    return _kv_fixed_global(1) / _kv_fixed_global(FIXED_GLOBAL["stages"])


register("4.13", Problem(
    "Hold the global batch fixed instead", "number", _kv_shrink, rtol=0.02, unit="×",
    mistakes=(Mistake(lambda: _kv_shrink("micro"),
                      "That holds the micro-batch fixed, so the global batch grows with P. Here the global batch "
                      "stays 9,600 and each micro-batch shrinks as P grows."),
              Mistake(lambda: 1 / _kv_shrink(),
                      "That is upside down: give how many times smaller the KV per GPU gets at P = 4."),
              Mistake(lambda: _kv_shrink() ** 2,
                      "Each GPU holds 1/P of the layers and 1/P of the global batch is one micro-batch, but "
                      "P micro-batches are in flight: the sequences a GPU holds are the whole global batch.")),
    wrong_hint="Substitute b = B / P into the KV per GPU of section 3, then compare P = 1 with P = 4."))


# 4.14: hop latency in a training pipeline. GPipe waits for hops only in its fill and drain (TRAIN_HOP_TIME), so the
# step grows by 2 (P - 1) t_hop over (m + P - 1)(t_F + t_B).
TRAIN_HOPS = dict(stages=8, microbatches=32, forward_time=4e-3, backward_time=8e-3, hop=2e-3)


def _train_hop_share(*, crossings: float | None = None) -> float:
    t = TRAIN_HOPS
    free = pipeline.simulate(schedule="gpipe", stages=t["stages"], microbatches=t["microbatches"],
                             forward_time=t["forward_time"], backward_time=t["backward_time"]).makespan
    extra = pm.TRAIN_HOP_TIME(P=t["stages"], t_hop=t["hop"]) if crossings is None else crossings * t["hop"]
    return float(extra / free)


register("4.14", Problem(
    "Hop latency in a training pipeline", "number", _train_hop_share, rtol=0.02, unit="(a fraction of the step)",
    mistakes=(Mistake(lambda: _train_hop_share(crossings=2 * (TRAIN_HOPS["stages"] - 1) * TRAIN_HOPS["microbatches"]),
                      "That makes every micro-batch wait for its hops. Between the fill and the drain each send "
                      "overlaps other micro-batches' work: which hops are on the critical path?"),
              Mistake(lambda: _train_hop_share(crossings=TRAIN_HOPS["stages"] - 1),
                      "That counts the hops one way. The gradients cross the same boundaries back in the drain."),
              Mistake(lambda: _train_hop_share(crossings=TRAIN_HOPS["stages"]),
                      "That is decode's P hops per loop, one way. A training step crosses P - 1 boundaries up and "
                      "P - 1 back, with no loop back to stage 0."),
              Mistake(lambda: _train_hop_share(crossings=2 * TRAIN_HOPS["stages"]),
                      "There are P - 1 boundaries between P stages, each crossed once up and once back."))))
