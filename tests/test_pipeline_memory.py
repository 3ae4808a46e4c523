"""Chapter 4 (lecture_lib.pipeline_memory): the P's cancel, golden numbers, latency, the decode loop
on the Chapter 3 simulator, bad input, and the two explorers."""


import re

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from lecture_lib import formula, hardware, models, pipeline, roofline
from lecture_lib import pipeline_memory as pm
from lecture_lib.explorers import pipeline_memory as px
from lecture_lib.symbols import (B, E, N_total, P, b, bw_gpu, bytes_param, bytes_tok, hbm_capacity, len_ctx, n_up)

# --- SymPy identities ------------------------------------------------------------------------------


def test_the_ps_cancel_kv_per_gpu_does_not_depend_on_p():
    """Lecture 01:10:27-01:11:49 (E4.4): 'those exactly cancel'."""
    assert sp.diff(pm.KV_PER_GPU.rhs, P) == 0
    assert formula.same(pm.KV_PER_GPU.rhs, b * len_ctx * bytes_tok / E)


def test_weights_per_gpu_fall_as_one_over_p():
    assert formula.same(pm.WEIGHTS_PER_GPU.rhs, N_total * bytes_param / (E * P))
    assert formula.same(pm.WEIGHTS_PER_GPU.rhs.subs(P, 2 * P), pm.WEIGHTS_PER_GPU.rhs / 2)


def test_substituting_b_equals_p_b_gives_the_boards_split():
    board = N_total * bytes_param / (E * P) + b * len_ctx * bytes_tok / E
    assert formula.same(pm.MEMORY_PER_GPU_PIPELINED.rhs, board)
    assert formula.same(pm.WEIGHTS_PER_GPU.rhs + pm.KV_PER_GPU.rhs, pm.MEMORY_PER_GPU_PIPELINED.rhs)
    by_hand = pm.MEMORY_PER_GPU.rhs.subs(B, P * b)
    assert formula.same(by_hand, board)


def test_per_gpu_memory_times_gpus_is_the_total():
    assert formula.same(pm.MEMORY_PER_GPU.rhs * E * P, pm.MEMORY_TOTAL.rhs)


def test_with_one_micro_batch_the_kv_would_shrink_as_one_over_p():
    assert formula.same(pm.KV_PER_GPU_FIXED_BATCH.rhs * P, pm.KV_PER_GPU.rhs)


def test_at_the_largest_micro_batch_memory_equals_hbm():
    at_max = pm.MEMORY_PER_GPU_PIPELINED.rhs.subs(b, pm.MAX_MICRO_BATCH.rhs)
    assert formula.same(at_max, hbm_capacity)


def test_pipelining_does_not_change_the_weight_fetch_floor():
    """Lecture 01:17:07-01:18:27 (E4.5): stages take turns, so P cancels; only E adds bandwidth."""
    assert sp.diff(pm.PIPELINED_WEIGHT_FETCH.rhs, P) == 0
    assert formula.same(pm.PIPELINED_WEIGHT_FETCH.rhs, pm.WEIGHT_FETCH_TIME.rhs.subs(n_up, E))
    assert formula.same(pm.WEIGHT_FETCH_TIME.rhs, roofline.T_WEIGHTS.rhs.subs(roofline.mem_bw, n_up * bw_gpu))


def test_decode_micro_batches_equal_stages_in_the_formula():
    assert pm.DECODE_MICROBATCHES.rhs == P
    assert formula.same(pm.GLOBAL_BATCH.rhs.subs(pm.n_micro, pm.DECODE_MICROBATCHES.rhs), P * b)


# --- The decode loop on the Chapter 3 simulator ---------------------------------------------------------


@pytest.mark.parametrize("stages", range(1, 9))
def test_the_simulator_needs_exactly_p_micro_batches(stages):
    """Lecture 01:09:11 'proof by visual': n_micro = P keeps every stage busy, P - 1 does not."""
    assert pm.fewest_decode_microbatches(stages=stages) == stages


@pytest.mark.parametrize("stages, microbatches", [(4, 1), (4, 2), (4, 3), (5, 2), (6, 6), (3, 7)])
def test_simulated_decode_utilisation_matches_the_closed_form(stages, microbatches):
    closed = 1 - pipeline.decode_idle_fraction(stages=stages, microbatches=microbatches)
    assert pm.decode_utilisation(stages=stages, microbatches=microbatches) == pytest.approx(closed, abs=1e-12)


# --- Golden numbers ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def example():
    return {row["stages"]: row for row in pm.deployment()}


def test_deepseek_v3_kv_bytes_per_token_in_fp8_is_61_times_576():
    """DeepSeek-V3 config (arXiv 2412.19437): MLA caches 512 latent + 64 RoPE values in each of 61 layers."""
    assert models.get("deepseek-v3").kv_bytes_per_token("fp8") == 61 * 576 == 35_136


def test_worked_example_weights_per_gpu(example):
    """671 B params (DeepSeek-V3 model card) in FP8 over 64 GPUs: ≈ 10.5 GB (lecture notes §4.2)."""
    assert example[1]["weights"] == pytest.approx(10.48e9, rel=2e-3)
    assert example[2]["weights"] == pytest.approx(example[1]["weights"] / 2)
    assert example[4]["weights"] == pytest.approx(2.62e9, rel=2e-3)


def test_worked_example_kv_per_gpu_is_131_gb_at_every_p(example):
    """2,400 sequences × 100K tokens × 35,136 B / 64 GPUs = 131.8 GB (lecture notes §4.2: ≈131 GB)."""
    for row in example.values():
        assert row["kv"] == pytest.approx(2400 * 100_000 * 35_136 / 64)
        assert row["kv"] == pytest.approx(131.76e9, rel=1e-4)


def test_worked_example_fits_a_gb200_but_kv_dominates(example):
    assert [row["gpus"] for row in example.values()] == [64, 128, 256]
    assert [row["global_batch"] for row in example.values()] == [2400, 4800, 9600]
    assert all(row["fits"] for row in example.values())        # 186 GB of HBM per GB200
    assert example[1]["weights_share"] == pytest.approx(0.0737, abs=1e-3)
    assert example[4]["weights_share"] < 0.02


def test_a_1t_fp8_model_is_about_7_percent_of_an_nvl72():
    """Lecture notes §4.2 [I]: 1 TB of weights in a 13.4 TB NVL72 rack."""
    rack = hardware.get_system("GB200 NVL72")
    assert 1e12 / rack.hbm_capacity == pytest.approx(0.075, abs=0.003)


def test_hop_latency_takes_20_ms_to_30_ms_with_four_stages():
    """Lecture 01:15:40: 'if it goes from 20 to 30'; four stages at 2.5 ms a hop ('a few ms')."""
    assert pm.token_time(step_time=20e-3, stages=4, hop_time=2.5e-3) == pytest.approx(30e-3)


def test_weight_fetch_floor_on_an_h100_box_vs_an_nvl72():
    """Lecture 01:18:55: a very sparse model on 'a little H100 box' has high latency. Kimi K2 (1.03 T)."""
    kimi = models.get("kimi-k2")
    h100, gb200 = hardware.get("H100"), hardware.get("GB200")
    box = pm.weight_fetch_time(n_total=kimi.params_total, bytes_param=1, gpus_reading=8,
                               hbm_bandwidth=h100.hbm_bandwidth)
    rack = pm.weight_fetch_time(n_total=kimi.params_total, bytes_param=1, gpus_reading=72,
                                hbm_bandwidth=gb200.hbm_bandwidth)
    assert box == pytest.approx(kimi.params_total / (8 * 3.35e12))
    assert 35e-3 < box < 40e-3 and 1.5e-3 < rack < 2e-3


def test_largest_micro_batch_at_100k_context_is_below_the_balance_batch():
    """At 100K context the real DeepSeek-V3's B* (≈ 300 × 18) does not fit on GB200s, whatever P is."""
    deepseek, gb200 = models.get("deepseek-v3"), hardware.get("GB200")
    fits = [pm.max_micro_batch(hbm_capacity=gb200.hbm_capacity, n_total=deepseek.params_total, bytes_param=1,
                               len_ctx=100_000, bytes_tok=35_136, expert_parallel=64, stages=p) for p in (1, 2, 4, 16)]
    b_star = roofline.balance_batch(gb200, weight_bytes=1, compute_dtype="fp8", sparsity=deepseek.sparsity)
    assert all(f < b_star for f in fits)
    assert fits == sorted(fits) and fits[-1] / fits[0] < 1.1    # more stages barely help
    assert 3000 < fits[0] < 3500


def test_with_one_micro_batch_the_largest_batch_that_fits_fills_hbm_and_is_p_times_larger():
    """B = b (one micro-batch, its KV split over the stages): the largest b fills one GPU's HBM exactly, as the
    explorer's bars show, and is P times the pipelined micro-batch; at P = 1 the two are the same."""
    deepseek, gb300 = models.get("deepseek-v3"), hardware.get("GB300")
    common = dict(hbm_capacity=gb300.hbm_capacity, n_total=deepseek.params_total, bytes_param=1, len_ctx=250_000,
                  bytes_tok=35_136, expert_parallel=64)
    for stages in (1, 4, 16):
        pipelined = pm.max_micro_batch(**common, stages=stages)
        fixed = pm.max_micro_batch(**common, stages=stages, pipelined=False)
        assert fixed == pytest.approx(stages * pipelined)
        weights = pm.WEIGHTS_PER_GPU(N_total=deepseek.params_total, bytes_param=1, n_ep=64, P=stages)
        kv = pm.KV_PER_GPU_FIXED_BATCH(b=fixed, len_ctx=250_000, bytes_tok=35_136, n_ep=64, P=stages)
        assert weights + kv == pytest.approx(gb300.hbm_capacity)
    with pytest.raises(ValueError, match="pipelined"):
        pm.max_micro_batch(**common, stages=4, pipelined="no")


def test_the_memory_explorers_largest_b_follows_the_batch_mode():
    """A learner's walk found "largest b that fits at P = 4: 1,336" beside "✓ fits" at b = 2,400 once the batch mode
    was B = b: the row now answers for the mode shown."""
    from lecture_lib.explorers.pipeline_memory import MemoryExplorer

    explorer = MemoryExplorer(len_ctx=250_000, b=2_400, P=4)
    try:
        def largest():
            row = next(line for line in explorer.readout.value.split("</tr>") if "largest b that fits" in line)
            return float(re.search(r"([\d,]+) sequences", row).group(1).replace(",", ""))

        pipelined = largest()
        explorer.controls["batch_mode"].value = "fixed"
        assert "✓ fits:" in explorer.readout.value         # b = 2,400 fits, and the largest b is larger
        assert largest() == pytest.approx(4 * pipelined, abs=4) and largest() > 2_400
    finally:
        explorer.view.figure.clear()


# --- Properties -----------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.floats(1e9, 5e12), st.floats(0.5, 2), st.floats(1, 1e5), st.floats(128, 2e6), st.floats(1e3, 1e6),
       st.integers(1, 576), st.integers(1, 32))
def test_more_stages_never_add_memory_per_gpu_and_kv_never_moves(n, bp, micro, ctx, kv, e, p):
    one = pm.memory_per_gpu(n_total=n, bytes_param=bp, micro_batch=micro, len_ctx=ctx, bytes_tok=kv,
                            expert_parallel=e, stages=p)
    more = pm.memory_per_gpu(n_total=n, bytes_param=bp, micro_batch=micro, len_ctx=ctx, bytes_tok=kv,
                             expert_parallel=e, stages=p + 1)
    assert more["total"] < one["total"]
    assert more["kv"] == pytest.approx(one["kv"], rel=1e-12)
    assert one["total"] == pytest.approx(one["weights"] + one["kv"])


def test_arrays_broadcast():
    out = pm.memory_per_gpu(n_total=671e9, bytes_param=1, micro_batch=2400, len_ctx=1e5, bytes_tok=35_136,
                            expert_parallel=64, stages=np.arange(1, 9))
    assert out["weights"].shape == out["kv"].shape == (8,)
    assert np.allclose(out["kv"], out["kv"][0])


# --- Bad input ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, value", [("stages", 0), ("stages", -2), ("micro_batch", float("nan")),
                                         ("len_ctx", "100k"), ("expert_parallel", -64), ("bytes_tok", True)])
def test_memory_per_gpu_refuses_bad_input_by_name(name, value):
    args = dict(n_total=671e9, bytes_param=1, micro_batch=2400, len_ctx=1e5, bytes_tok=35_136,
                expert_parallel=64, stages=4)
    args[name] = value
    with pytest.raises(ValueError, match=name):
        pm.memory_per_gpu(**args)


def test_other_functions_refuse_bad_input():
    with pytest.raises(ValueError, match="hop_time"):
        pm.token_time(step_time=0.02, stages=4, hop_time=-1)
    with pytest.raises(ValueError, match="gpus_reading"):
        pm.weight_fetch_time(n_total=1e12, bytes_param=1, gpus_reading=0, hbm_bandwidth=8e12)
    with pytest.raises(ValueError, match="hbm_capacity"):
        pm.max_micro_batch(hbm_capacity=float("inf"), n_total=1e12, bytes_param=1, len_ctx=1e5, bytes_tok=1e4,
                           expert_parallel=64, stages=1)
    with pytest.raises(ValueError, match="stages"):
        pm.fewest_decode_microbatches(stages=2.5)
    with pytest.raises(ValueError, match="weights"):
        pm.deployment(weights="fp7")
    with pytest.raises(ValueError, match="stages"):
        pm.deployment(stages=(1, 0))
    with pytest.raises(KeyError):
        pm.deployment(model="gpt-9")
    with pytest.raises(KeyError):
        pm.deployment(chip="Z100")


def test_max_micro_batch_is_zero_when_weights_alone_overflow():
    assert pm.max_micro_batch(hbm_capacity=80e9, n_total=1e12, bytes_param=2, len_ctx=1e5, bytes_tok=1e4,
                              expert_parallel=8, stages=1) == 0.0


# --- Explorers ------------------------------------------------------------------------------------------------

EXPLORERS = [px.MemoryExplorer, px.LatencyExplorer]


@pytest.fixture(scope="module")
def built():
    return {cls: cls() for cls in EXPLORERS}


def test_memory_bars_are_the_library_formula(built):
    explorer = built[px.MemoryExplorer]
    values = explorer.values
    heights = np.array([bar.get_height() for bar in explorer.kv_bars])
    expected = pm.KV_PER_GPU(b=values["b"], len_ctx=values["len_ctx"], bytes_tok=values["bytes_tok"],
                             n_ep=values["E"]) / 1e9
    assert np.allclose(heights, expected)


def test_picking_a_model_sets_its_kv_bytes():
    explorer = px.MemoryExplorer()
    explorer.controls["model"].value = "llama-3-70b"
    expected = models.get("llama-3-70b").kv_bytes_per_token("fp8", context_len=100_000)
    assert explorer.controls["bytes_tok"].value == pytest.approx(expected, rel=0.01)


def test_unknown_control_is_refused():
    with pytest.raises(ValueError, match="unknown control"):
        px.MemoryExplorer(stages=3)


def test_static_figures_draw():
    assert px.decode_loop_figure(stages=4, microbatches=2, tokens=2).axes
    assert px.hop_path_figure().axes


# --- Uneven stages and the problems' nudges ------------------------------------------------------------------


def test_gemma_3_stages_get_two_or_three_global_layers():
    """Gemma 3 (arXiv 2503.19786): 5 local layers (window 1024) then 1 global; 62 layers cut into 4 runs."""
    stage_kv = pm.kv_per_stage(model="gemma-3-27b", stages=4, len_ctx=100_000, kv="bf16")
    gemma = models.get("gemma-3-27b")
    per_global, per_local = 100_000 * 4096 * 2, 1024 * 4096 * 2
    expected = [2 * per_global + 14 * per_local, 3 * per_global + 13 * per_local,
                2 * per_global + 13 * per_local, 3 * per_global + 12 * per_local]
    assert np.allclose(stage_kv, expected)
    assert stage_kv.sum() == pytest.approx(gemma.kv_bytes_per_token("bf16", context_len=100_000) * 100_000)
    assert stage_kv.max() / stage_kv.mean() == pytest.approx(1.19, abs=0.01)


def test_uniform_models_split_their_kv_evenly_up_to_a_layer():
    stage_kv = pm.kv_per_stage(model="llama-3-70b", stages=4, len_ctx=8192)
    assert stage_kv.max() / stage_kv.min() == pytest.approx(1.0)          # 80 layers, 20 each


def test_kv_per_stage_refuses_bad_input():
    with pytest.raises(ValueError, match="stages"):
        pm.kv_per_stage(model="llama-3-70b", stages=81, len_ctx=8192)
    with pytest.raises(ValueError, match="len_ctx"):
        pm.kv_per_stage(model="llama-3-70b", stages=2, len_ctx=-1)
    with pytest.raises(KeyError):
        pm.kv_per_stage(model="nope", stages=2, len_ctx=10)


def test_chapter_four_problems_nudge_the_common_slips(monkeypatch):
    from lecture_lib.practice import checks

    monkeypatch.delenv("LECTURE_STRICT", raising=False)
    kv = checks.PROBLEMS["4.2"].expected()
    assert "micro-batch" in checks.check("4.2", kv / 4).message
    assert "own stage" in checks.check("4.2", kv * 4).message
    idle = checks.PROBLEMS["4.4"].expected()
    assert "training bubble" in checks.check("4.4", pipeline.bubble_fraction(stages=6, microbatches=4)).message
    assert "busy" in checks.check("4.4", 1 - idle).message
    floor = checks.PROBLEMS["4.6"].expected()
    assert "take turns" in checks.check("4.6", floor / 2).message
    assert checks.check("4.5", 4.1667).status == "wrong"
    assert checks.check("4.8", "fp4 KV").status == "correct"
    assert checks.check("4.8", "more stages").status == "wrong"


def test_kv_legend_follows_the_batch_mode():
    explorer = px.MemoryExplorer()
    kv_label = lambda: next(t.get_text() for t in explorer.legend.get_texts() if t.get_text().startswith("KV"))  # noqa: E731
    assert kv_label().endswith("/ E")
    explorer.controls["batch_mode"].value = "fixed"
    assert kv_label().endswith("/ (E·P)")
    assert [t.get_text() for t in explorer.legend.get_texts()][1].startswith("weights")
    explorer.view.figure.clear()


def test_the_hop_latency_slider_keeps_the_bar_chart_s_axis_for_most_of_its_stops():
    """Issue 28: each stop of "hop latency" doubles the hop bars, and a top that only just held them moved the left
    chart's axis on 9 of its 21 stops there and back (a full redraw each, the slowest key moves of Chapter 4). With
    room for the next doubling when the bars outgrow the top, 5 move it, and the bars always fill a third of it."""
    explorer = px.LatencyExplorer()
    slider, left = explorer.controls["t_hop"], explorer.view.figure.axes[0]
    changed, stops = 0, [*range(slider.index - 1, -1, -1), *range(1, len(slider.stops)),
                         *range(len(slider.stops) - 2, -1, -1)]
    for index in stops:
        before = left.get_ylim()
        slider.index = index
        changed += left.get_ylim() != before
        tallest = max(bar.get_y() + bar.get_height() for bar in explorer.hop_bars)
        assert 0.3 * left.get_ylim()[1] <= tallest <= left.get_ylim()[1], (slider.stops[index], left.get_ylim())
    assert changed <= 5, f"{changed} of {len(stops)} stops moved the axis"
    explorer.view.figure.clear()
