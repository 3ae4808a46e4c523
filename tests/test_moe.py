"""Chapter 2 (lecture_lib.moe and lecture_lib.explorers.moe): golden numbers, SymPy identities, the NumPy MoE
against the formulas, bad input, and the explorers' sliders."""


import re

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from lecture_lib import hardware, models, moe
from lecture_lib.explorers import moe as mx
from lecture_lib.formula import same
from lecture_lib.symbols import (bw_out, bw_up, bytes_a2a, bytes_value, d_model, k_active, link_ratio, n_racks,
                                 tokens_gpu)


def rel(a, b):
    return abs(a - b) / abs(b)


# --- Golden numbers ----------------------------------------------------------------------------

def test_deepseek_v3_has_4_experts_per_gpu_on_64_of_an_nvl72_lecture_00_34_07():
    deepseek = models.get("deepseek-v3")                     # 256 routed experts (config.json)
    placed = moe.layout(n_experts=deepseek.n_routed_experts, n_gpus=hardware.get_system("NVL72").n_chips)
    assert placed == {"gpus_used": 64, "gpus_idle": 8, "experts_per_gpu": 4}
    assert moe.EXPERTS_PER_GPU(n_experts=256, n_ep=64) == 4


def test_deepseek_v3_fp8_all_to_all_bytes_per_token_per_moe_layer():
    # DeepSeek-V3 config.json: hidden_size 7168, num_experts_per_tok 8, n_shared_experts 1.
    # Dispatch + combine, 1 byte per value (FP8): 2 x k x 7168.
    deepseek = models.get("deepseek-v3")
    assert moe.a2a_bytes_per_token(deepseek, bytes_per_value=1) == 2 * 8 * 7168 == 114_688      # 8 routed
    assert moe.a2a_bytes_per_token(deepseek, bytes_per_value=1, shared_travels=True) == 2 * 9 * 7168  # + shared
    assert moe.a2a_bytes_per_token(deepseek, bytes_per_value=1, k=32) == 2 * 32 * 7168 == 458_752  # the board's 32
    assert moe.a2a_bytes_per_token(deepseek, bytes_per_value=2) == 2 * 114_688                   # BF16


def test_scale_out_is_about_8_to_18_times_slower_than_nvlink_lecture_00_39_13():
    # lecture: "typically about eight times slower"; lecture notes: NVLink 900 GB/s vs 400-800 Gb NICs -> 9-18x
    assert moe.link_ratio_of("HGX H100") == pytest.approx(450e9 / 50e9) == pytest.approx(9)
    assert moe.link_ratio_of("GB200 NVL72") == pytest.approx(18)
    assert moe.link_ratio_of("GB300 NVL72") == pytest.approx(9)
    for name in mx.RACK_SYSTEMS:
        assert 8 <= moe.link_ratio_of(name) <= 18, name


def test_two_racks_send_half_the_traffic_across_and_slow_the_all_to_all_4x_at_the_boards_8x():
    assert moe.CROSS_RACK_FRACTION(n_racks=2) == 0.5                         # lecture 00:39:13
    assert moe.A2A_SLOWDOWN(n_racks=2, link_ratio=8) == pytest.approx(4)
    assert moe.A2A_SLOWDOWN(n_racks=1, link_ratio=8) == pytest.approx(1)


def test_rubin_ultra_nvl576_counts_dies_a_genuine_4x_over_nvl72_lecture_00_41_53():
    nvl576, nvl72 = hardware.get_system("Rubin Ultra NVL576"), hardware.get_system("GB200 NVL72")
    dies = nvl576.n_chips * mx.DIES_PER_PACKAGE["Rubin Ultra"]
    assert dies == 576                                                          # NVIDIA's name (GTC 2025)
    assert dies / (nvl72.n_chips * mx.DIES_PER_PACKAGE["GB200"]) == 4            # "a genuine 4x"
    assert nvl576.hbm_capacity == pytest.approx(144e12)                         # 144 x 1 TB HBM4e
    assert nvl576.hbm_bandwidth == pytest.approx(4.6e15)                        # 4.6 PB/s HBM4e
    assert 2 * nvl576.scale_up_bandwidth == pytest.approx(1.5e15)               # NVLink 7, 1.5 PB/s


def test_blackwell_rack_fits_dwarkeshs_5t_model_but_8_hoppers_do_not_fit_gpt4_class():
    # lecture 00:45:35-00:45:48: 8 Hoppers = 640 GB; a Blackwell rack "10-20 TB, enough for a 5T model"
    assert hardware.get_system("HGX H100").hbm_capacity == pytest.approx(640e9)
    assert moe.MAX_PARAMS_THAT_FIT(weight_share=1, hbm_capacity=640e9, bytes_param=1) < 1e12
    rack = hardware.get_system("GB200 NVL72")
    assert 10e12 <= rack.hbm_capacity <= 20e12
    assert 5e12 * 1 <= moe.MAX_PARAMS_THAT_FIT(weight_share=0.5, hbm_capacity=rack.hbm_capacity, bytes_param=1)


def test_scale_up_fit_of_deepseek_on_a_rack():
    fit = moe.scale_up_fit("deepseek-v3", "GB200 NVL72", bytes_per_param=1)
    assert fit["fits"] and fit["experts_per_gpu"] == 4 and fit["gpus_used"] == 64
    # 671 GB over 72 x 8 TB/s ≈ 1.2 ms (lecture notes: "~1-2 ms for DeepSeek-size models")
    assert 1e-3 < fit["weight_fetch_floor"] < 1.3e-3
    assert not moe.scale_up_fit("kimi-k2", "HGX H100", bytes_per_param=1)["fits"]


# --- SymPy identities --------------------------------------------------------------------------

def test_cross_rack_fraction_is_derived_from_the_same_rack_probability():
    assert same(moe.CROSS_RACK_FRACTION.rhs, (n_racks - 1) / n_racks)
    assert same(moe.CROSS_RACK_FRACTION.rhs + moe.SAME_RACK_PROBABILITY.rhs, 1)
    assert sp.limit(moe.CROSS_RACK_FRACTION.rhs, n_racks, sp.oo) == 1


def test_all_to_all_time_identities():
    one_rack = moe.T_A2A.rhs.subs(n_racks, 1)
    assert same(one_rack, tokens_gpu * bytes_a2a / bw_up)                       # everything on NVLink
    assert same(moe.A2A_SLOWDOWN.rhs.subs(n_racks, 1), 1)
    # for many racks, everything crosses and the slow link alone sets the time
    assert same(sp.limit(moe.T_A2A_CROSS.rhs, n_racks, sp.oo), tokens_gpu * bytes_a2a / bw_out)
    assert same(moe.A2A_SLOWDOWN.rhs.subs(n_racks, 2), sp.Max(sp.Rational(1, 2), link_ratio / 2))
    assert same(moe.LINK_RATIO.rhs, bw_up / bw_out)


def test_bytes_per_token_formula_is_dispatch_plus_combine():
    one_way = k_active * d_model * bytes_value          # k copies of a d_model-vector
    assert same(moe.A2A_BYTES_PER_TOKEN.rhs, one_way + one_way)
    assert sp.diff(moe.A2A_BYTES_PER_TOKEN.rhs, k_active) == moe.A2A_BYTES_PER_TOKEN.rhs.subs(k_active, 1)


# --- The NumPy MoE against the formulas --------------------------------------------------------

@pytest.mark.parametrize("racks", [1, 2, 3, 4, 8, 16])
def test_random_routing_measures_the_cross_rack_fraction_within_5_standard_errors(racks):
    result = moe.measure_cross_rack_fraction(n_racks=racks, n_tokens=4096, k=8, seed=racks)
    assert result["formula"] == pytest.approx((racks - 1) / racks)
    assert abs(result["measured"] - result["formula"]) <= 5 * result["std_error"] + 1e-12


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=1, max_value=12), st.integers(min_value=1, max_value=4), st.integers(0, 10_000))
def test_measured_fraction_tracks_the_formula_for_any_layout(racks, k, seed):
    result = moe.measure_cross_rack_fraction(n_racks=racks, gpus_per_rack=4, experts_per_gpu=2, k=k,
                                             n_tokens=2000, seed=seed)
    assert abs(result["measured"] - result["formula"]) <= 5 * result["std_error"] + 1e-12


def test_tiny_moe_forward_matches_a_token_by_token_reference():
    layer = moe.TinyMoE.random(d_model=8, d_ff=16, n_experts=8, k=2, experts_per_gpu=2, gpus_per_rack=2, seed=3)
    x = np.random.default_rng(0).normal(size=(20, 8))
    y, routing = layer.forward(x)
    for t in range(20):
        scores = x[t] @ layer.w_router
        top = np.argsort(-scores)[:2]
        gates = np.exp(scores[top] - scores[top].max())
        gates /= gates.sum()
        expected = x[t] + sum(g * np.maximum(x[t] @ layer.w_up[e], 0) @ layer.w_down[e] for g, e in zip(gates, top))
        assert np.allclose(y[t], expected)
        assert list(routing.experts[t]) == list(top)
    assert np.allclose(routing.gates.sum(axis=1), 1)


def test_routing_follows_token_expert_gpu_rack():
    placement = moe.Placement(n_experts=16, experts_per_gpu=2, gpus_per_rack=4)
    assert (placement.n_gpus, placement.n_racks) == (8, 2)
    routing = moe.Routing(experts=np.array([[0, 15], [9, 3]]), gates=np.full((2, 2), 0.5), placement=placement)
    assert routing.gpus.tolist() == [[0, 7], [4, 1]]
    assert routing.racks.tolist() == [[0, 1], [1, 0]]
    assert routing.home_gpu.tolist() == [0, 1] and routing.home_rack.tolist() == [0, 0]
    assert routing.crosses.tolist() == [[False, True], [True, False]]
    assert routing.cross_rack_fraction() == 0.5
    assert routing.table(1)[0]["racks"] == [0, 1]


def test_expert_parallel_degree_prefers_equal_experts_per_gpu():
    assert moe.expert_parallel_degree(n_experts=256, n_gpus=72) == 64
    assert moe.expert_parallel_degree(n_experts=384, n_gpus=72) == 64       # Kimi K2: 6 per GPU
    assert moe.expert_parallel_degree(n_experts=8, n_gpus=72) == 8          # Mixtral: 1 per GPU
    assert moe.expert_parallel_degree(n_experts=256, n_gpus=576) == 256


# --- Bad input ---------------------------------------------------------------------------------

@pytest.mark.parametrize("call, name", [
    (lambda: moe.layout(n_experts=0, n_gpus=72), "n_experts"),
    (lambda: moe.layout(n_experts=256, n_gpus=2.5), "n_gpus"),
    (lambda: moe.a2a_bytes_per_token(models.get("deepseek-v3"), bytes_per_value=-1), "bytes_per_value"),
    (lambda: moe.a2a_bytes_per_token(models.get("llama-3-70b"), bytes_per_value=1), "model"),
    (lambda: moe.a2a_layer_time(tokens_per_gpu=64, bytes_per_token=1e5, racks=0, scale_up_bw=1e12,
                                scale_out_bw=1e11), "racks"),
    (lambda: moe.a2a_layer_time(tokens_per_gpu=64, bytes_per_token=1e5, racks=1.5, scale_up_bw=1e12,
                                scale_out_bw=1e11), "racks"),
    (lambda: moe.a2a_layer_time(tokens_per_gpu=float("nan"), bytes_per_token=1e5, racks=2, scale_up_bw=1e12,
                                scale_out_bw=1e11), "tokens_per_gpu"),
    (lambda: moe.scale_up_fit("deepseek-v3", "GB200 NVL72", bytes_per_param=1, weight_share=1.5), "weight_share"),
    (lambda: moe.CROSS_RACK_FRACTION(n_racks=-2), "n_racks"),
    (lambda: moe.Placement(n_experts=10, experts_per_gpu=3, gpus_per_rack=1), "experts_per_gpu"),
    (lambda: moe.TinyMoE.random(n_experts=4, k=5), "k"),
    (lambda: moe.TinyMoE.random(d_model=8).forward(np.ones((3, 5))), "x"),
    (lambda: moe.measure_cross_rack_fraction(n_racks="two"), "n_racks"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_unknown_presets_raise_keyerror():
    with pytest.raises(KeyError):
        moe.scale_up_fit("gpt-5", "GB200 NVL72", bytes_per_param=1)
    with pytest.raises(KeyError):
        moe.link_ratio_of("NVL9999")


# --- Explorers ---------------------------------------------------------------------------------

EXPLORERS = [mx.CrossRackExplorer, mx.ScaleUpExplorer]


@pytest.fixture(scope="module")
def built():
    return {cls: cls() for cls in EXPLORERS}


def test_cross_rack_curve_is_the_library_formula(built):
    explorer = built[mx.CrossRackExplorer]
    r = explorer.resolve(explorer.values)
    x, y = explorer.lines["total"].get_data()
    expected = moe.T_A2A(tokens_gpu=explorer.values["tokens"], bytes_a2a=r["bytes_token"], n_racks=x,
                         bw_up=r["bw_up"], bw_out=r["bw_out"]) * 1e6
    assert np.allclose(y, expected)


def test_routing_figure_draws(tmp_path):
    layer = moe.TinyMoE.random()
    _, routing = layer.forward(np.random.default_rng(0).normal(size=(32, layer.d_model)))
    figure = mx.routing_figure(routing, n_tokens=6)
    figure.savefig(tmp_path / "routing.png")
    assert (tmp_path / "routing.png").stat().st_size > 1000


def test_cross_rack_readout_describes_the_even_spread_the_formula_assumes():
    # (R-1)/R assumes the experts split evenly over the R racks; the readout must not claim a layout that
    # leaves racks empty (e.g. 256 experts "over 3 racks" on 128 GPUs that fit in two NVL72s).
    explorer = mx.CrossRackExplorer()
    explorer.controls["racks"].value = 2
    assert "2 × 64 GPUs hold experts, 2 each (128 per rack)" in re.sub(r"<[^>]+>", "", explorer.readout.value)
    explorer.controls["racks"].value = 3
    assert "do not split evenly" in explorer.readout.value
    assert mx.CrossRackExplorer._spread(8, 16, 72).startswith("16 racks, but only 8 experts")
