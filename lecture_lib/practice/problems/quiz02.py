"""Chapter 2's quiz and exam questions (quizzes/02_moe_across_racks_quiz.ipynb): problems 2.101-2.106.

Released only through nbgrader (``nbgrader-source quizzes``); most numbers vary per student. Every expected value
is computed from the library, as in ``ch02.py``.
"""

from __future__ import annotations

import math

from lecture_lib import hardware, models, moe

from ..registry import Mistake, Problem, Vary, register


def _experts_per_gpu(gpus: int = 32) -> float:
    return float(moe.EXPERTS_PER_GPU(n_experts=models.get("deepseek-v3").n_routed_experts, n_ep=gpus))


def _kimi_a2a(racks: int = 4, tokens: int = 512, *, part: str = "total") -> float:
    gb200 = hardware.get("GB200")
    times = moe.a2a_layer_time(tokens_per_gpu=tokens, bytes_per_token=moe.a2a_bytes_per_token(models.get("kimi-k2"),
                                                                                               bytes_per_value=1),
                               racks=racks, scale_up_bw=gb200.scale_up_bandwidth, scale_out_bw=gb200.scale_out_bandwidth)
    return float(times[part])


def _gpus_to_hold(params: float = 3e12, *, share: float = 0.7) -> float:
    per_gpu = moe.MAX_PARAMS_THAT_FIT(hbm_capacity=hardware.get("GB200").hbm_capacity, weight_share=share,
                                      bytes_param=0.5)
    return float(math.ceil(params / per_gpu))


def _scale_out_doubled() -> str:
    ratio = moe.link_ratio_of(hardware.get_system("GB200 NVL72"))
    before = moe.A2A_SLOWDOWN(n_racks=2, link_ratio=ratio)
    after = moe.A2A_SLOWDOWN(n_racks=2, link_ratio=ratio / 2)
    change = round(float(after / before), 6)
    return {0.5: "a", 1.0: "b", 2.0: "c", 0.25: "d"}[change]


def _what_the_domain_holds() -> str:
    kimi = models.get("kimi-k2")
    fit = moe.scale_up_fit(kimi, hardware.get_system("GB200 NVL72"), bytes_per_param=1)
    if math.isclose(fit["weight_bytes"], kimi.params_total * 1, rel_tol=1e-6):
        return "b"
    return "a" if math.isclose(fit["weight_bytes"], kimi.params_active, rel_tol=1e-6) else "c"


def _off_rack_experts(racks: int = 4) -> float:
    k = models.get("deepseek-v3").experts_per_token
    return float(k * moe.CROSS_RACK_FRACTION(n_racks=racks))


GPUS = Vary("gpus", "E, the GPUs DeepSeek-V3's experts are spread over", 32, (8, 16, 64, 128, 256), "GPUs")
RACKS = Vary("racks", "the racks the layer spans", 4, (2, 3, 6, 8), "racks")
TOKENS = Vary("tokens", "the tokens per GPU", 512, (128, 256, 1024, 2048), "tokens")
PARAMS = Vary("params", "the model's total parameters", 3e12, (1e12, 2e12, 4e12, 5e12, 6e12), "parameters")
SPREAD = Vary("racks", "the racks the experts are spread over", 4, (3, 5, 6, 8), "racks")   # not 2: half on, half off

register("2.101", Problem(
    "Experts per GPU for DeepSeek-V3", "number", _experts_per_gpu, rtol=0.01, unit="experts", variants=(GPUS,),
    wrong_hint="Routed experts only (the preset's n_routed_experts), divided over the GPUs."))
register("2.102", Problem(
    "Kimi K2's all-to-all over several racks", "number", _kimi_a2a, rtol=0.02, unit="seconds",
    variants=(RACKS, TOKENS),
    mistakes=(Mistake(lambda racks=4, tokens=512: _kimi_a2a(racks, tokens, part="inside"),
                      "That is the traffic inside the rack; the slower scale-out links set the time."),)))
register("2.103", Problem(
    "GPUs to hold a bigger MoE", "number", _gpus_to_hold, rtol=0.01, unit="GPUs", variants=(PARAMS,),
    mistakes=(Mistake(lambda params=3e12: _gpus_to_hold(params, share=1.0),
                      "That fills every byte of HBM with weights; the question keeps 30% for the KV cache."),)))
register("2.104", Problem(
    "Double the scale-out bandwidth", "choice", _scale_out_doubled, options=("a", "b", "c", "d"),
    nudges={"b": "The cross-rack half of the traffic goes over the scale-out links: their speed matters.",
            "c": "Faster links make the slow part shorter, not longer."}))
register("2.105", Problem(
    "What the scale-up domain must hold", "choice", _what_the_domain_holds, options=("a", "b", "c", "d"),
    nudges={"a": "Different tokens in a batch go to different experts: which experts may a step need?"}))
register("2.106", Problem(
    "Experts a token reaches off its rack", "number", _off_rack_experts, rtol=0.01, unit="experts",
    variants=(SPREAD,),
    mistakes=(Mistake(lambda racks=4: float(models.get("deepseek-v3").experts_per_token / racks),
                      "That counts the experts on the token's own rack."),)))
