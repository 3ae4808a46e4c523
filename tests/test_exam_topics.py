"""Issue 49 §5: reasoning a held-out exam found missing, each taught where it belongs (a derivation from the library's
Formulas in the chapter) and practised (a problem with a hidden solution): the copies an all-to-all keeps on the
sending GPU (Ch2, 2.15), one routed expert's own roofline (Ch2, 2.16), experts whose count does not divide the GPUs
(Ch2, 2.17), recomputing KV at a realistic MFU (Ch6, 6.14),
and what pipelining does to the KV per GPU when the global batch, not the micro-batch, is held fixed (Ch4, 4.13)."""

from pathlib import Path

import nbformat
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
