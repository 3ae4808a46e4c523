"""Chapter 8's quiz and exam questions (quizzes/08_roofline_vs_reality_quiz.ipynb): problems 8.101, 8.105 and
8.107-8.110 (8.102-8.104 and 8.106, on collectives, moved to Chapter 9's bank as 9.101-9.104 when issue 49 split the
chapter; their ids are not reused).

Released only through nbgrader (``nbgrader-source quizzes``); most numbers vary per student. Every expected value
is computed from the library, as in ``ch08.py``.
"""

from __future__ import annotations

import sympy as sp

from lecture_lib import collectives, hardware, models, roofline

from ..registry import Mistake, Problem, Vary, register


def _experts_touched(batch: int = 16) -> float:
    deepseek = models.get("deepseek-v3")
    return float(roofline.EXPECTED_EXPERTS(n_experts=deepseek.n_routed_experts, k_active=deepseek.experts_per_token,
                                           B=batch))


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


BATCH = Vary("batch", "the batch (tokens in the step)", 16, (4, 8, 32, 64), "tokens")
register("8.101", Problem(
    "DeepSeek-V3's experts touched by a small batch", "number", _experts_touched, rtol=0.02, unit="experts",
    variants=(BATCH,),
    mistakes=(Mistake(lambda batch=16: float(min(batch * 8, 256)),
                      "That assumes no two tokens share an expert; some do, by chance."),)))
register("8.105", Problem(
    "What DeepSeek-V3 reads at batch 1", "choice", _batch_one_reads, options=("a", "b", "c", "d"),
    nudges={"b": "One token touches only its 8 routed experts per layer (roofline.PARAMS_READ at B = 1)."}))


def _spec_depth(acceptance: float = 0.8) -> float:
    return float(roofline.best_draft_depth(acceptance=acceptance, draft_cost=0.05)["depth"])


def _cache_lift(hit_rate: float = 0.6) -> float:
    from lecture_lib.symbols import hit

    cold, warm = roofline.T_PREFILL.rhs.subs(hit, 0), roofline.T_PREFILL.rhs.subs(hit, sp.nsimplify(hit_rate))
    return float(sp.simplify(cold / warm))


def _plain_step_ratio(batch: int) -> float:
    h200 = collectives.deployment(hardware.get("H200"), n_chips=1)
    plain = roofline.decode_bound(models.get("llama-3-70b"), h200, batch=batch, len_ctx=4096, weight_dtype="fp8",
                                  kv_dtype="fp8")
    return plain["t_compute"] / (plain["t_weights"] + plain["t_kv"])


def _depth_at_a_big_batch() -> str:
    def depth(batch):
        return roofline.best_draft_depth(acceptance=0.8, draft_cost=0.05, compute_ratio=_plain_step_ratio(batch))["depth"]

    one, many = depth(1), depth(128)
    if many == 0:
        return "d"
    return "a" if many > one else ("b" if many == one else "c")


def _absorbed_share(context: int = 16384) -> float:
    deepseek = models.get("deepseek-v3")
    return roofline.attention_flops(deepseek, context, absorbed=True) / (2 * deepseek.params_active)


ACCEPTANCE = Vary("acceptance", "the acceptance rate", 0.8, (0.6, 0.7, 0.85, 0.9))
HIT = Vary("hit_rate", "the prefix-cache hit rate", 0.6, (0.3, 0.4, 0.7, 0.8))
CONTEXT = Vary("context", "the context length", 16384, (2048, 4096, 65536), "tokens")

register("8.107", Problem(
    "How deep to draft at batch 1", "number", _spec_depth, rtol=0.01, unit="draft tokens", variants=(ACCEPTANCE,),
    wrong_hint="roofline.best_draft_depth(acceptance=..., draft_cost=0.05): at one sequence rho is about 0."))
register("8.108", Problem(
    "What a prefix cache lifts", "number", _cache_lift, rtol=0.02, variants=(HIT,),
    mistakes=(Mistake(lambda hit_rate=0.6: hit_rate, "That is the hit rate itself, not how much it lifts the bound."),
              Mistake(lambda hit_rate=0.6: 1 / hit_rate, "Divide by the share of tokens still to compute, 1 − h."))))
register("8.109", Problem(
    "Drafting at a big batch", "choice", _depth_at_a_big_batch, options=("a", "b", "c", "d"),
    nudges={"a": "At 128 sequences verifying γ + 1 tokens each multiplies the step's compute time: look at ρ.",
            "b": "The acceptance rate is the same, but the verifying step is not free any more at 128 sequences."}))
register("8.110", Problem(
    "Absorbed attention against the weights", "number", _absorbed_share, rtol=0.02, unit="of 2 N_active",
    variants=(CONTEXT,),
    mistakes=(Mistake(lambda context=16384: roofline.attention_flops(models.get("deepseek-v3"), context)
                      / (2 * models.get("deepseek-v3").params_active),
                      "That is the un-absorbed form prefill runs. Decode kernels attend in the 512-wide latent."),)))

