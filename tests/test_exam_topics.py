"""Issue 49 §5: reasoning a held-out exam found missing, each taught where it belongs (a derivation from the library's
Formulas in the chapter) and practised (a problem with a hidden solution): the copies an all-to-all keeps on the
sending GPU (Ch2, 2.15), one routed expert's own roofline (Ch2, 2.16), experts whose count does not divide the GPUs
(Ch2, 2.17), recomputing KV at a realistic MFU (Ch6, 6.14), hop latency in a training pipeline (Ch4, 4.14),
and what pipelining does to the KV per GPU when the global batch, not the micro-batch, is held fixed (Ch4, 4.13);
RL whose rollouts decode and whose training trains (Ch5, 5.14), the equal-cost rule with three bills and one knob
(Ch5, 5.15), when a slower tier is really cheaper (Ch6, 6.15), what attention's FLOPs do to the output/input price
ratio (Ch6, 6.16) and why a reversible network cannot stand in for the KV cache (Ch7, 7.14)."""

from pathlib import Path

import nbformat
import sympy as sp
import pytest

from lecture_lib import hardware, models, moe, roofline
from lecture_lib import pipeline_memory as pm
from lecture_lib.practice import checks
from lecture_lib.practice.registry import PROBLEMS
from lecture_lib.symbols import B, P, b

ROOT = Path(__file__).resolve().parents[1]


def _cells(stem: str) -> dict:
    path = next((ROOT / "notebooks").glob(f"{stem}_*.ipynb"))
    return {cell.get("id"): cell.source for cell in nbformat.read(path, as_version=4).cells}


@pytest.mark.parametrize("stem, ids", [("02", ("self-send-intro", "self-send-code", "expert-roofline-code",
                                               "expert-roofline-lesson")),
                                       ("04", ("held-fixed-intro", "held-fixed-code", "held-fixed-lesson"))])
def test_each_topic_has_its_derivation_in_the_chapter(stem, ids):
    cells = _cells(stem)
    assert set(ids) <= set(cells)


def test_the_self_send_share_is_the_same_rack_formula_with_one_gpu_per_rack():
    assert moe.SAME_RACK_PROBABILITY(n_racks=64) == pytest.approx(1 / 64)
    assert PROBLEMS["2.15"].expected() == pytest.approx(1 / 2 - 1 / 16)
    assert "cross no link" in checks.check("2.15", 0.5).message


def test_one_experts_balance_batch_is_the_chips_ratio_times_e_over_k():
    qwen, h200 = models.get("qwen3-235b-a22b"), hardware.get("H200")
    ratio = roofline.balance_batch(h200, weight_bytes=1, compute_dtype="fp8", sparsity=1)
    assert PROBLEMS["2.16"].expected() == pytest.approx(ratio * qwen.n_routed_experts / qwen.experts_per_token)
    assert "whole model's balance batch" in checks.check("2.16", ratio * qwen.sparsity).message
    assert "one expert must receive" in checks.check("2.16", ratio).message


def test_holding_the_global_batch_fixed_shrinks_the_kv_per_gpu_by_p():
    fixed_global = pm.KV_PER_GPU.rhs.subs(b, B / P)
    assert fixed_global.subs(P, 1) / fixed_global.subs(P, 4) == 4
    assert PROBLEMS["4.13"].expected() == pytest.approx(4)
    assert "holds the micro-batch fixed" in checks.check("4.13", 1).message


def test_a_recompute_at_a_realistic_mfu_costs_one_over_mfu_more():
    from lecture_lib import context

    cells = _cells("06")
    assert {"remat-mfu-intro", "remat-mfu-code"} <= set(cells) and "REMAT_COST.rhs / mfu_prefill" in cells["remat-mfu-code"]
    at_peak = context.remat_cost(n_active=models.get("deepseek-v3").params_active,
                                 flops=hardware.get("H100").flops["bf16"], price_chip_hour=2.0)
    assert PROBLEMS["6.14"].expected() == pytest.approx(at_peak / 0.4 * 1e6)
    assert "at the chip's peak" in checks.check("6.14", at_peak * 1e6).message
    assert "multiplies by the MFU" in checks.check("6.14", at_peak * 0.4 * 1e6).message


def test_experts_that_do_not_divide_the_gpus():
    """Ch2: an uneven spread leaves the busiest GPU ceil(n/72) experts, as many as the even layout for every preset
    printed there; for DeepSeek-V2's 160 it is 3 against the even layout's 4 (problem 2.17)."""
    import math

    assert {"uneven-intro", "uneven-code", "uneven-lesson"} <= set(_cells("02"))
    for name in ("deepseek-v3", "kimi-k2", "qwen3-235b-a22b"):
        n = models.get(name).n_routed_experts
        assert math.ceil(n / 72) == moe.layout(n_experts=n, n_gpus=72)["experts_per_gpu"]
    assert PROBLEMS["2.17"].expected() == pytest.approx(4 / 3)
    assert "busiest GPU" in checks.check("2.17", 1.8).message


@pytest.mark.parametrize("stages, micro, hop", [(2, 1, 0.3), (4, 4, 1.0), (4, 8, 0.5), (8, 32, 2.0), (6, 3, 5.0)])
def test_a_gpipe_step_pays_its_hops_only_in_the_fill_and_the_drain(stages, micro, hop):
    """Ch4 §6 (TRAIN_HOP_TIME = 2 (P - 1) t_hop) against the Chapter 3 simulator with a hop time, a hop longer than a
    stage-time included; 1F1B pays more."""
    from lecture_lib import pipeline

    def step(schedule, hop_time):
        return pipeline.simulate(schedule=schedule, stages=stages, microbatches=micro, forward_time=1.0,
                                 backward_time=2.0, hop_time=hop_time).makespan

    assert step("gpipe", hop) - step("gpipe", 0.0) == pytest.approx(pm.TRAIN_HOP_TIME(P=stages, t_hop=hop))
    assert step("1f1b", hop) - step("1f1b", 0.0) >= pm.TRAIN_HOP_TIME(P=stages, t_hop=hop) - 1e-9
    assert {"train-hops-intro", "train-hops-code", "train-hops-lesson"} <= set(_cells("04"))


def test_problem_4_14_names_the_every_micro_batch_slip():
    assert PROBLEMS["4.14"].expected() == pytest.approx(2 * 7 * 2e-3 / ((32 + 7) * 12e-3))
    assert "overlaps other micro-batches" in checks.check("4.14", 2 * 7 * 32 * 2e-3 / ((32 + 7) * 12e-3)).message


# ------------------------------------------------------------------ Chapters 5-7 (issue 49 §5, second batch)
def _markdown_before(stem: str, first_id: str, reveal_id: str) -> tuple[list[str], str]:
    """The chapter's cell ids in order, and the plain text of the topic's cells outside its folded reading."""
    import re

    path = next((ROOT / "notebooks").glob(f"{stem}_*.ipynb"))
    cells = nbformat.read(path, as_version=4).cells
    ids = [cell.get("id") for cell in cells]
    text = " ".join(re.sub(r"<details>.*?</details>", "", cell.source, flags=re.S)
                    for cell in cells[ids.index(first_id):ids.index(reveal_id) + 1])
    return ids, text


def test_rl_rollouts_decode_and_training_trains():
    """Ch5 §2 (COST_RL_SPLIT): the rollout's 2 FLOPs pay the inefficiency, the training step's k_RL - 2 do not. With the
    flashcard's k_RL = 3 and inefficiency 3 an RL token costs 7/6 of a pre-training token (the board: 9/6), the rollout
    is 6/7 of RL's bill and RL's equal-cost tokens rise from 2/3 to 6/7 of the inference tokens. Problem 5.14."""
    from lecture_lib import scaling
    from lecture_lib.symbols import D_RL, D_inference, N_active, ineff, k_RL

    flashcard = {k_RL: 3, ineff: 3}
    per_token = (scaling.COST_RL_SPLIT.rhs / (6 * N_active * D_RL)).subs(flashcard)
    assert per_token == sp.Rational(7, 6)
    assert (scaling.COST_RL.rhs / (6 * N_active * D_RL)).subs(flashcard) == sp.Rational(3, 2)
    assert (2 * ineff * N_active * D_RL / scaling.COST_RL_SPLIT.rhs).subs(flashcard) == sp.Rational(6, 7)
    assert (scaling.RL_TOKENS_SPLIT.rhs / D_inference).subs(flashcard) == sp.Rational(6, 7)
    assert scaling.COST_RL_SPLIT.rhs.subs(k_RL, 2) == scaling.COST_RL.rhs.subs(k_RL, 2)
    assert PROBLEMS["5.14"].expected() == pytest.approx(2.0)             # (2/0.1 + 4/0.4) / (6/0.4)
    assert checks.check("5.14", 2.0).correct
    assert "as the board's C_RL does" in checks.check("5.14", 4.0).message
    assert "counts FLOPs only" in checks.check("5.14", 1.0).message
    assert "rollout alone" in checks.check("5.14", 8 / 6).message
    ids, text = _markdown_before("05", "rl-mfu-intro", "rl-mfu-lesson")
    assert ids.index("cell-13") < ids.index("rl-mfu-intro") < ids.index("cell-14")      # in §2, after the three bills
    assert "Think first" in text and "7/6" not in text and "6/7" not in text           # the numbers stay folded
    assert "7/6" in _cells("05")["rl-mfu-lesson"] and "6/7" in _cells("05")["rl-mfu-lesson"]


def test_three_bills_one_knob_doubles_the_pretraining_tokens():
    """Ch5 §3 (PRETRAIN_TOKENS_ONE_KNOB): pre-training set against RL + inference. With RL's equal-cost tokens it gives
    twice the three-way split's pre-training tokens whatever k_RL and the inefficiency; with no RL the two-phase rule.
    Problem 5.15: 100 B active, 200 T served, 100 T RL tokens, k_RL = 3, inefficiency 3 -> 350 T, 175x Chinchilla."""
    from lecture_lib import scaling
    from lecture_lib.symbols import D_RL, D_inference, D_pretrain, ineff

    one_knob = scaling.PRETRAIN_TOKENS_ONE_KNOB.rhs
    assert sp.simplify(one_knob.subs(D_RL, scaling.RL_TOKENS.rhs) / scaling.PRETRAIN_TOKENS.rhs) == 2
    assert sp.simplify(one_knob.subs(D_RL, 0) - sp.solve(sp.Eq(scaling.COST_PRETRAIN.rhs,
                                                               scaling.COST_INFERENCE.rhs), D_pretrain)[0]) == 0
    assert one_knob.subs(D_RL, 0) == ineff * D_inference / 3
    assert PROBLEMS["5.15"].expected() == pytest.approx(175)
    assert checks.check("5.15", 175).correct
    assert "three-way split" in checks.check("5.15", 100).message
    assert "on-air version" in checks.check("5.15", 25).message
    assert "leaves out the inefficiency" in checks.check("5.15", 350 / 6).message
    ids, text = _markdown_before("05", "three-bills-intro", "three-bills-lesson")
    assert ids.index("cell-17") < ids.index("three-bills-intro") < ids.index("count-heading") < ids.index("cell-19")
    assert _cells("05")["count-heading"].startswith("## 4 · Count the inference tokens")
    assert "Think first" in text and "50/25/25" not in text and "Twice" not in text


def test_a_slow_tier_saves_by_pooling_only_below_the_balance_batch():
    """Ch6 §4 (context.POOLING_SAVING, IDLE_TIER_PRICE): with no KV, pooling a live batch below B* to one at or above
    it saves B*/B_live, and nothing once the live batch is at B*; each sequence's KV read is not shared. Problem 6.15:
    Llama-3-70B on 8 H100s (FP8), 16 sequences of 2,048 tokens pooled to 512: 10.0x (18.7x without the KV, 32x if
    cost fell as 1/B all the way)."""
    from lecture_lib import context

    llama, h100 = models.get("llama-3-70b"), hardware.get("H100")
    serving = dict(N_active=llama.params_active, N_total=llama.params_total, bytes_param=1,
                   FLOPs=8 * h100.flops["fp8"], mem_bw=8 * h100.hbm_bandwidth, bytes_tok=llama.kv_bytes_per_token(1))
    b_star = roofline.BALANCE_BATCH(**{k: serving[k] for k in ("N_active", "N_total", "bytes_param", "FLOPs", "mem_bw")})
    no_kv = dict(len_ctx=0, allow_zero="len_ctx", **serving)
    assert context.POOLING_SAVING(B_live=16, B_pool=512, **no_kv) == pytest.approx(b_star / 16)
    assert context.POOLING_SAVING(B_live=600, B_pool=2400, **no_kv) == pytest.approx(1)
    assert context.IDLE_TIER_PRICE(util=0.5) == pytest.approx(0.5)
    assert PROBLEMS["6.15"].expected() == pytest.approx(10.02, rel=1e-3)
    assert checks.check("6.15", 10.0).correct
    assert "leaves out the KV cache" in checks.check("6.15", b_star / 16).message
    assert "1/B all the way" in checks.check("6.15", 32).message
    assert "Chapter 1's answer" in checks.check("6.15", 1).message
    ids, text = _markdown_before("06", "slow-tier-intro", "slow-tier-lesson")
    assert ids.index("cell-30") < ids.index("slow-tier-intro") < ids.index("cell-31")   # end of §4, before §5
    assert "Think first" in text and "hundred times cheaper" not in text


def test_attention_flops_level_off_the_output_input_ratio():
    """Ch6 §6 (context.OUTPUT_INPUT_RATIO, OUTPUT_INPUT_LIMIT): counting attention FLOPs, the ratio tends to the chip's
    FLOPs per byte times KV bytes over attention FLOPs per token of context, n_KV bytes_KV / (2 n_Q) for GQA; without
    them it grows without limit. Problem 6.16: Llama-3.1-8B on H100, FP8: 590.7 x 8 / 64 = 73.8."""
    from lecture_lib import context
    from lecture_lib.symbols import B, FLOPs, len_ctx, q_heads

    memory_branch = roofline.T_MEM.rhs / B / ((2 * roofline.N_active + context.ATTENTION_FLOPS.rhs) / FLOPs)
    assert sp.simplify(sp.limit(memory_branch, len_ctx, sp.oo) - context.OUTPUT_INPUT_LIMIT.rhs) == 0
    assert sp.limit(memory_branch.subs(q_heads, 0), len_ctx, sp.oo) == sp.oo
    h100 = hardware.get("H100")
    assert PROBLEMS["6.16"].expected() == pytest.approx(h100.flops["fp8"] / h100.hbm_bandwidth * 8 / 64)
    assert PROBLEMS["6.16"].expected() == pytest.approx(73.84, rel=1e-3)
    assert "counts multiplies" in checks.check("6.16", 36.92).message
    assert "grouped-query" in checks.check("6.16", 295.4).message
    assert "BF16" in checks.check("6.16", 147.7).message
    ids, text = _markdown_before("06", "ratio-attn-intro", "ratio-attn-lesson")
    assert ids.index("cell-36") < ids.index("ratio-attn-intro") < ids.index("cell-37")  # end of §6, before §7
    assert "Think first" in text and "1/16" not in text


def test_a_reversible_network_cannot_rebuild_other_tokens_kv_cheaply():
    """Ch7 §7 (reversible.FLOPS_DECODE_REVERSIBLE): without a cache every earlier token is inverted at every step,
    1 + len_ctx forward passes per generated token, the remat row's work; its time over reading the cache is
    KV_ADVANTAGE. Problem 7.14: Llama-3-70B at 32,768 tokens -> 32,769x."""
    from lecture_lib import reversible as rv
    from lecture_lib.symbols import FLOPs, len_ctx

    assert sp.simplify(rv.FLOPS_DECODE_REVERSIBLE.rhs / rv.FLOPS_DECODE_CACHED.rhs - (1 + len_ctx)) == 0
    extra = (rv.FLOPS_DECODE_REVERSIBLE.rhs - rv.FLOPS_DECODE_CACHED.rhs) / len_ctx
    assert sp.simplify(extra - rv.T_KV_RECOMPUTE.rhs * FLOPs) == 0
    assert PROBLEMS["7.14"].expected() == pytest.approx(32_769)
    assert checks.check("7.14", 32_769).correct
    assert "for free" in checks.check("7.14", 1).message
    assert "one inversion of the new token's" in checks.check("7.14", 2).message
    assert "reversible training" in checks.check("7.14", 4 / 3).message
    ids, text = _markdown_before("07", "rev-kv-intro", "rev-kv-lesson")
    assert ids.index("cell-48") < ids.index("rev-kv-intro") < ids.index("cell-49")      # §7, after the KV trade
    assert "Think first" in text and "Only the new token's" not in text
    assert "other* tokens" in _cells("07")["rev-kv-lesson"]
