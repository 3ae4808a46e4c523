"""Chapter 7 (lecture_lib.reversible and its explorers): Feistel blocks, avalanche, RevNets, memory.

Golden numbers: the scaling book's activation rule of thumb ("about 2·20·B·T·D·L bytes in bf16:
BT = 4M, L = 64, D = 8192 gives ≈ 84 TB"; block remat "≈ 4.2 TB"; remat raises 6·N·T to ≈ 8·N·T;
How to Scale Your Model, "All the Transformer Math You Need to Know", read 2026-11) and DeepSeek-V3's
MLA cache of 576 values per layer × 61 layers (DeepSeek-V3 config.json).
"""


import re

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lecture_lib import hardware, models, roofline
from lecture_lib import reversible as rv
from lecture_lib.explorers import reversible as rx
from lecture_lib.formula import same
from lecture_lib.symbols import B, act_values, bytes_value, d_model, k_seg, len_seq, n_layers

UNSIGNED = [np.uint8, np.uint16, np.uint32, np.uint64]

# ------------------------------------------------------------------ Feistel on integers


def _non_invertible(kind: str, dtype):
    """Many-to-one functions: a square, a constant, a shift that drops bits, a random bit-MLP."""
    if kind == "square":
        return lambda x: (x * x).astype(dtype)
    if kind == "constant":
        return lambda x: np.full_like(x, 0xA5)
    if kind == "shift":
        return lambda x: (x >> dtype(3)).astype(dtype)
    mlp = rv.random_bit_mlp(n_bits=8, seed=4)
    return lambda x: mlp(x).astype(dtype)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), dtype=st.sampled_from(UNSIGNED), kind=st.sampled_from(["square", "constant", "shift", "mlp"]))
def test_integer_feistel_inverts_exactly_for_any_f(data, dtype, kind):
    shape = data.draw(hnp.array_shapes(max_dims=2, max_side=16))
    x = data.draw(hnp.arrays(dtype, shape))
    y = data.draw(hnp.arrays(dtype, shape))
    f = _non_invertible(kind, dtype)
    same_x, z = rv.feistel_xor(x, y, f)
    back_x, back_y = rv.feistel_xor_inverse(same_x, z, f)
    assert np.array_equal(back_x, x) and np.array_equal(back_y, y)
    assert back_y.dtype == y.dtype


def test_feistel_is_a_bijection_even_though_f_is_not():
    f = rv.random_bit_mlp(n_bits=8, seed=1)
    every = np.arange(256, dtype=np.uint8)
    assert len(np.unique(f(every))) < 200           # f loses information
    x, y = np.repeat(every, 256), np.tile(every, 256)
    out_x, out_z = rv.feistel_xor(x, y, f)
    assert len(np.unique(out_x.astype(np.uint32) << 8 | out_z)) == 65536   # the block does not


# ------------------------------------------------------------------ Feistel on floats

floats = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False, width=32)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), dtype=st.sampled_from([np.float16, np.float32, np.float64]), scale=st.sampled_from([1e-3, 1, 50]))
def test_float_feistel_inverts_within_the_stated_bound(data, dtype, scale):
    rows = data.draw(st.integers(1, 12))
    x = data.draw(hnp.arrays(dtype, (rows, 4), elements=st.floats(-4, 4, width=16)))
    y = data.draw(hnp.arrays(dtype, (rows, 3), elements=st.floats(-1000, 1000, width=16)))
    f = rv.random_mlp(n_in=4, n_hidden=8, n_out=3, seed=2, scale=scale)
    _, z = rv.feistel_add(x, y, f)
    _, y_back = rv.feistel_add_inverse(x, z, f)
    error = np.abs(y_back.astype(float) - y.astype(float))
    assert np.all(error <= rv.roundtrip_error_bound(y, z))


def test_float_error_is_real_and_float64_is_far_better():
    rng = np.random.default_rng(0)
    f = rv.random_mlp(n_in=4, n_hidden=16, n_out=4, seed=0)
    errors = {}
    for dtype in (np.float32, np.float64):
        x, y = rng.normal(size=(2, 2000, 4)).astype(dtype)
        _, z = rv.feistel_add(x, y, f)
        errors[dtype] = np.max(np.abs(rv.feistel_add_inverse(x, z, f)[1] - y))
    assert 0 < errors[np.float32] < 1e-6 and errors[np.float64] < 1e-15


def test_floats_forget_what_rounding_drops():
    y = np.array([5.0], dtype=np.float32)
    _, z = rv.feistel_add(np.zeros(1, np.float32), y, lambda x: np.full_like(x, 1e8))
    _, back = rv.feistel_add_inverse(np.zeros(1, np.float32), z, lambda x: np.full_like(x, 1e8))
    assert back[0] == 8.0          # float32 spacing at 1e8 is 8: the 5 became 8
    assert abs(back[0] - y[0]) <= rv.roundtrip_error_bound(y, z)[0]


def test_unit_roundoff():
    assert rv.unit_roundoff(np.float32) == 2.0 ** -24 and rv.unit_roundoff(np.float64) == 2.0 ** -53


# ------------------------------------------------------------------ the toy cipher and the avalanche


@pytest.mark.parametrize("round_function", rv.ROUND_FUNCTIONS)
@pytest.mark.parametrize("half_bits", [8, 16, 32])
def test_cipher_decrypts_what_it_encrypts(round_function, half_bits):
    cipher = rv.toy_cipher(rounds=8, half_bits=half_bits, round_function=round_function, seed=3)
    blocks = rv.random_blocks(500, cipher.block_bits, seed=1)
    assert np.array_equal(cipher.decrypt(cipher.encrypt(blocks)), blocks)
    assert not np.array_equal(cipher.encrypt(blocks), blocks)


@pytest.mark.parametrize("round_function, rounds", [("sbox", 6), ("mlp", 12)])
def test_avalanche_fraction_approaches_one_half(round_function, rounds):
    cipher = rv.toy_cipher(rounds=16, round_function=round_function, seed=0)
    for bit in (0, 7, 16, 31):
        curve = rv.avalanche_curve(cipher, bit=bit, n_samples=4096, seed=2)
        assert curve[0] == pytest.approx(1 / 32)                      # one input bit
        assert np.all(np.abs(curve[rounds:] - 0.5) < 0.02), (bit, curve)


def test_feistel_structure_shows_in_the_first_round():
    cipher = rv.toy_cipher(rounds=4, seed=0)
    left_bit = rv.avalanche_profile(cipher, bit=20, n_samples=256)
    assert left_bit[1].sum() == pytest.approx(1.0)   # a left-half bit just moves to the right half
    assert left_bit[1][20 - 16] == 1.0


def test_differential_is_certain_after_one_round_and_gone_after_many():
    cipher = rv.toy_cipher(rounds=16, seed=0)
    difference, probability = rv.top_difference_probability(cipher, input_difference=1 << 20, rounds=1)
    assert probability == 1.0 and difference == 1 << 4
    _, late = rv.top_difference_probability(cipher, input_difference=1 << 20, rounds=8, n_samples=4096)
    assert late < 5 / 4096


def test_gf2_derivative_of_a_linear_map_is_constant():
    def linear(v):
        return v ^ ((v << np.uint32(3)) | (v >> np.uint32(29)))

    x = rv.random_blocks(100, 32, seed=5).astype(np.uint32)
    derivative = rv.gf2_derivative(linear, x, 0x1234)
    assert np.all(derivative == linear(np.array([0x1234], dtype=np.uint32))[0])


def test_residual_network_with_small_weights_does_not_avalanche():
    small = rv.network_avalanche(kind="residual", weight_scale=0.1, depth=16, bit=5)
    assert np.all(small["flip_fraction"] < 0.05)
    assert np.all(np.abs(small["amplification"] - 1) < 0.05)
    chaotic = rv.network_avalanche(kind="plain", weight_scale=4.0, depth=16, bit=5)
    assert chaotic["flip_fraction"][-1] > 0.4


def test_rounds_to_avalanche():
    assert rv.rounds_to_avalanche(np.array([0.03, 0.2, 0.46, 0.5])) == 2
    assert rv.rounds_to_avalanche(np.array([0.03, 0.2])) is None


# ------------------------------------------------------------------ RevNets


@pytest.fixture(scope="module")
def revnet_case():
    net = rv.random_revnet(n_layers=5, width=6, hidden=12, seed=0)
    rng = np.random.default_rng(1)
    x1, x2, d_y1, d_y2 = rng.normal(size=(4, 3, 6))
    return net, x1, x2, d_y1, d_y2


def test_revnet_inverse_reconstructs_the_inputs(revnet_case):
    net, x1, x2, _, _ = revnet_case
    y1, y2 = rv.revnet_forward(net, x1, x2)
    back1, back2 = rv.revnet_inverse(net, y1, y2)
    assert np.max(np.abs(back1 - x1)) < 1e-12 and np.max(np.abs(back2 - x2)) < 1e-12


def test_low_precision_reconstruction_drifts_with_depth():
    rng = np.random.default_rng(3)
    errors = []
    for depth in (1, 16, 64):
        net = rv.random_revnet(n_layers=depth, width=16, hidden=64, seed=0, dtype=np.float32)
        x1, x2 = rng.normal(size=(2, 32, 16)).astype(np.float32)
        y1, y2 = rv.revnet_forward(net, x1, x2)
        assert y1.dtype == np.float32
        back1, back2 = rv.revnet_inverse(net, y1, y2)
        errors.append(max(np.max(np.abs(back1 - x1)), np.max(np.abs(back2 - x2))))
    assert 0 < errors[0] < errors[-1] < 1e-4


def test_reversible_backward_matches_stored_activation_backprop(revnet_case):
    net, x1, x2, d_y1, d_y2 = revnet_case
    stored = rv.revnet_backward(net, x1, x2, d_y1, d_y2, method="stored")
    rebuilt = rv.revnet_backward(net, x1, x2, d_y1, d_y2, method="reversible")
    assert np.allclose(rebuilt.x1, x1, atol=1e-12) and np.allclose(rebuilt.x2, x2, atol=1e-12)
    assert np.allclose(rebuilt.d_x1, stored.d_x1, atol=1e-10) and np.allclose(rebuilt.d_x2, stored.d_x2, atol=1e-10)
    for layer in range(net.n_layers):
        for name in rv.BLOCK_PARAMS:
            assert np.allclose(rebuilt.d_f[layer][name], stored.d_f[layer][name], atol=1e-10)
            assert np.allclose(rebuilt.d_g[layer][name], stored.d_g[layer][name], atol=1e-10)


@pytest.mark.parametrize("layer, block, name, index", [
    (0, "f", "w_in", (1, 2)), (2, "g", "gain", (3,)), (4, "f", "b_out", (0,)), (1, "g", "w_out", (5, 1)),
    (3, "f", "bias", (2,)),
])
def test_one_gradient_agrees_with_finite_differences(revnet_case, layer, block, name, index):
    net, x1, x2, d_y1, d_y2 = revnet_case
    numeric = rv.finite_difference(net, x1, x2, d_y1, d_y2, layer=layer, block=block, name=name, index=index)
    grads = rv.revnet_backward(net, x1, x2, d_y1, d_y2, method="reversible")
    analytic = (grads.d_f if block == "f" else grads.d_g)[layer][name][index]
    assert analytic == pytest.approx(numeric, rel=1e-6, abs=1e-8)


def test_input_gradient_agrees_with_finite_differences(revnet_case):
    net, x1, x2, d_y1, d_y2 = revnet_case
    step = np.zeros_like(x1)
    step[1, 4] = 1e-6
    numeric = (rv.revnet_objective(net, x1 + step, x2, d_y1, d_y2)
               - rv.revnet_objective(net, x1 - step, x2, d_y1, d_y2)) / 2e-6
    assert rv.revnet_backward(net, x1, x2, d_y1, d_y2).d_x1[1, 4] == pytest.approx(numeric, rel=1e-6)


def test_reversible_memory_is_constant_in_depth_and_stored_grows():
    rng = np.random.default_rng(0)
    x1, x2, d1, d2 = rng.normal(size=(4, 4, 8))
    held = {}
    for depth in (2, 4, 8):
        net = rv.random_revnet(n_layers=depth, width=8, hidden=16, seed=depth)
        held[depth] = {m: rv.revnet_backward(net, x1, x2, d1, d2, method=m).activation_bytes
                       for m in ("stored", "reversible")}
    assert held[2]["reversible"] == held[4]["reversible"] == held[8]["reversible"]
    assert held[8]["stored"] - held[4]["stored"] == 2 * (held[4]["stored"] - held[2]["stored"]) > 0


# ------------------------------------------------------------------ memory formulas


def test_memory_formulas_scale_as_L_sqrt_L_and_constant():
    assert same(rv.ACT_STANDARD.rhs.subs(n_layers, 4 * n_layers) / rv.ACT_STANDARD.rhs, 4)
    assert same(rv.ACT_CHECKPOINT_BEST.rhs.subs(n_layers, 4 * n_layers) / rv.ACT_CHECKPOINT_BEST.rhs, 2)
    assert sp.diff(rv.ACT_REVERSIBLE.rhs, n_layers) == 0
    assert same(rv.K_SEGMENT_BEST.rhs, sp.sqrt(n_layers / act_values))
    # k* minimises: the second derivative is positive there
    second = sp.diff(rv.ACT_CHECKPOINT.rhs, k_seg, 2).subs(k_seg, rv.K_SEGMENT_BEST.rhs)
    assert sp.simplify(second).is_positive


def test_reversible_beats_checkpointing_beyond_six_layers():
    crossing = sp.solve(sp.Eq(rv.ACT_CHECKPOINT_BEST.rhs, rv.ACT_REVERSIBLE.rhs), n_layers)[0]
    assert same(crossing, (act_values + 2) ** 2 / (4 * act_values))
    assert float(crossing.subs(act_values, 20)) == pytest.approx(6.05)


def test_golden_scaling_book_activation_numbers():
    no_remat = rv.activation_memory(strategy="standard", n_layers=64, d_model=8192, len_seq=4e6, bytes_per_value=2)
    assert no_remat == pytest.approx(84e12, rel=0.01)                      # "≈ 84 TB"
    layer_inputs = (n_layers / k_seg) * B * len_seq * d_model * bytes_value
    block_remat = float(layer_inputs.subs({n_layers: 64, k_seg: 1, B: 1, len_seq: 4e6, d_model: 8192, bytes_value: 2}))
    assert block_remat == pytest.approx(4.2e12, rel=0.01)                  # "~4.2 TB"
    assert same(layer_inputs, rv.ACT_CHECKPOINT.rhs.subs(act_values, 0))
    ratio = rv.FLOPS_RECOMPUTE(N_active=1e9) / rv.FLOPS_STANDARD(N_active=1e9)
    assert ratio == pytest.approx(8 / 6)                                   # "6·N·T to ≈ 8·N·T"


def test_llama_70b_numbers_by_hand():
    llama = models.get("llama-3-70b")
    memory = rv.reversible_trade(llama, len_seq=8192)
    assert memory["memory_standard"] == 80 * 8192 * 20 * 8192 * 2
    assert memory["memory_reversible"] == 8192 * 22 * 8192 * 2
    assert memory["memory_checkpoint"] == pytest.approx(2 * 8192 * 8192 * 2 * np.sqrt(80 * 20))


def test_kv_trade_is_chapter_one_goldilocks_context():
    assert same(rv.KV_ADVANTAGE.rhs, roofline.GOLDILOCKS_CONTEXT.rhs)
    deepseek, h100 = models.get("deepseek-v3"), hardware.get("H100")
    trade = rv.kv_trade(deepseek, h100)
    assert trade["bytes"] == 576 * 61                                       # MLA latent + RoPE key, fp8
    assert trade["advantage"] == pytest.approx(trade["t_recompute"] / trade["t_read"])
    golden = roofline.GOLDILOCKS_CONTEXT(N_active=deepseek.params_active, FLOPs=h100.flops["fp8"],
                                         mem_bw=h100.hbm_bandwidth, bytes_tok=trade["bytes"])
    assert trade["advantage"] == pytest.approx(golden)
    assert trade["advantage"] > 1000           # storing wins by three orders of magnitude


def test_the_kv_deal_beats_the_revnet_deal():
    llama = models.get("llama-3-70b")
    assert rv.kv_trade(llama, hardware.get("H100"), kv_format="bf16")["flops_per_byte"] > \
        50 * rv.reversible_trade(llama, len_seq=8192)["flops_per_byte"]


@pytest.mark.parametrize("n_layers", [4, 16, 30])
def test_memory_timeline_reproduces_the_lecture_drawing(n_layers):
    standard = rv.memory_timeline(strategy="standard", n_layers=n_layers)
    checkpoint = rv.memory_timeline(strategy="checkpoint", n_layers=n_layers, k_seg=4)
    reversible = rv.memory_timeline(strategy="reversible", n_layers=n_layers)
    assert len(standard["held"]) == 2 * n_layers and standard["held"].max() == n_layers
    assert len(checkpoint["held"]) == len(reversible["held"]) == 3 * n_layers      # one extra forward
    assert np.all(reversible["held"] == 1 + 2 / 20)                              # flat in time and depth
    assert checkpoint["held"].max() <= 4 + np.ceil(n_layers / 4) / 20
    for timeline in (standard, checkpoint, reversible):                          # every layer backpropagated once
        assert sorted(timeline["layer"][timeline["phase"] == "backward"]) == list(range(1, n_layers + 1))


def test_memory_timeline_figure_has_three_panels():
    figure = rx.memory_timeline_figure(n_layers=8, k_seg=2)
    assert len(figure.axes) == 3 and "peak 8)" in figure.axes[0].get_title()


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize("call, words", [
    (lambda: rv.toy_cipher(rounds=0), "rounds"),
    (lambda: rv.toy_cipher(rounds=2.5), "rounds"),
    (lambda: rv.toy_cipher(half_bits=6), "half_bits"),
    (lambda: rv.toy_cipher(half_bits=4), "half_bits"),
    (lambda: rv.toy_cipher(round_function="aes"), "round_function"),
    (lambda: rv.toy_cipher(seed=-1), "seed"),
    (lambda: rv.toy_cipher(rounds=4).encrypt(np.arange(3, dtype=np.uint64), rounds=0), "rounds"),
    (lambda: rv.toy_cipher(rounds=4).encrypt(np.arange(3, dtype=np.uint64), rounds=5), "rounds"),
    (lambda: rv.toy_cipher(rounds=4).encrypt(np.arange(3.0)), "blocks"),
    (lambda: rv.toy_cipher(rounds=4).encrypt(np.array([1 << 40], dtype=np.uint64)), "blocks"),
    (lambda: rv.feistel_xor(np.arange(3.0), np.arange(3, dtype=np.uint8), lambda x: x), "x"),
    (lambda: rv.feistel_xor(np.arange(3, dtype=np.uint8), [1, 2, 3], lambda x: x), "y"),
    (lambda: rv.feistel_xor(np.arange(3, dtype=np.uint8), np.arange(3, dtype=np.uint8), lambda x: x[:2]), "f"),
    (lambda: rv.feistel_xor(np.arange(3, dtype=np.uint8), np.arange(3, dtype=np.uint16), lambda x: x), "f"),
    (lambda: rv.feistel_xor(np.arange(3, dtype=np.uint8), np.arange(3, dtype=np.uint8), 3), "f"),
    (lambda: rv.feistel_add(np.arange(3), np.ones(3), np.sin), "x"),
    (lambda: rv.feistel_add(np.ones(3), np.arange(3), np.sin), "y"),
    (lambda: rv.feistel_add(np.ones(3), np.ones(3, np.float16), lambda x: x * 1e6), "f"),
    (lambda: rv.feistel_add_inverse(np.ones(3), np.ones(3, dtype=np.int32), np.sin), "z"),
    (lambda: rv.avalanche_curve(rv.toy_cipher(rounds=2), bit=32), "bit"),
    (lambda: rv.avalanche_curve("DES", bit=3), "cipher"),
    (lambda: rv.avalanche_curve(rv.toy_cipher(rounds=2), bit=1, n_samples=0), "n_samples"),
    (lambda: rv.network_avalanche(kind="cnn"), "kind"),
    (lambda: rv.network_avalanche(depth=0), "depth"),
    (lambda: rv.network_avalanche(weight_scale=-1), "weight_scale"),
    (lambda: rv.network_avalanche(width=8, bit=8), "bit"),
    (lambda: rv.random_revnet(n_layers=0), "n_layers"),
    (lambda: rv.random_revnet(dtype="int8"), "dtype"),
    (lambda: rv.revnet_forward(rv.random_revnet(width=4), np.ones((2, 5)), np.ones((2, 5))), "x1"),
    (lambda: rv.revnet_forward(rv.random_revnet(width=4), np.ones((2, 4)), np.ones((3, 4))), "same shape"),
    (lambda: rv.revnet_forward(rv.random_revnet(width=4), np.ones((2, 4), dtype=int), np.ones((2, 4))), "x1"),
    (lambda: rv.revnet_backward(rv.random_revnet(width=4), *np.ones((4, 2, 4)), method="magic"), "method"),
    (lambda: rv.activation_memory(strategy="offload", n_layers=4, d_model=8, len_seq=8), "strategy"),
    (lambda: rv.activation_memory(strategy="standard", n_layers=4, d_model=8, len_seq=-8), "len_seq"),
    (lambda: rv.activation_memory(strategy="standard", n_layers=4, d_model=8, len_seq=8, bytes_per_value=0),
     "bytes_per_value"),
    (lambda: rv.activation_memory(strategy="standard", n_layers=4, d_model=8, len_seq=8, batch=float("nan")), "batch"),
    (lambda: rv.activation_memory(strategy="standard", n_layers="80", d_model=8, len_seq=8), "n_layers"),
    (lambda: rv.training_flops_per_token(strategy="standard", n_active=0), "n_active"),
    (lambda: rv.memory_timeline(strategy="offload", n_layers=4), "strategy"),
    (lambda: rv.memory_timeline(strategy="checkpoint", n_layers=4, k_seg=0), "k_seg"),
    (lambda: rv.memory_timeline(strategy="standard", n_layers=0), "n_layers"),
    (lambda: rv.kv_trade(models.get("llama-3-70b"), hardware.get("A100"), compute_format="fp8"), "compute_format"),
    (lambda: rv.kv_trade(models.get("llama-3-70b"), hardware.get("H100"), kv_format="fp7"), "kv_format"),
])
def test_bad_input_names_the_parameter(call, words):
    with pytest.raises(ValueError, match=words):
        call()


# ------------------------------------------------------------------ explorers
# (every control of both is moved by tests/test_every_explorer.py)

def test_every_bit_and_round_moves_the_avalanche_explorer():
    explorer = rx.AvalancheExplorer()
    seen = set()
    for bit in range(rx.BLOCK_BITS):
        explorer.controls["bit"].value = bit
        seen.add(explorer.view.shown())
    for rounds in range(1, rx.MAX_ROUNDS + 1):
        explorer.controls["rounds"].value = rounds
        seen.add(explorer.view.shown())
    assert len(seen) == rx.BLOCK_BITS + rx.MAX_ROUNDS - 1   # (bit 31, the default rounds) is seen twice


def test_memory_explorer_renders_every_model_and_chip():
    explorer = rx.ActivationMemoryExplorer()
    for model in explorer.controls["model"].options:
        explorer.controls["model"].value = model
        for chip in hardware.chip_names():
            explorer.controls["chip"].value = chip
            assert explorer.view.page_png()[:4] == b"\x89PNG"
            assert "color:#b00" not in explorer.readout.value


def test_memory_explorer_depth_is_a_whole_number_log_slider_fine_where_the_lines_cross():
    """A learner's walk: a slow drag of depth L (256 one-layer steps) froze the figure for 2 s after a sequence-length
    change. Depth now stops on whole round numbers spaced like its log axis, layer by layer below 9 (the lines cross
    near 6), and a typed depth between stops is kept in whole layers."""
    explorer = rx.ActivationMemoryExplorer()
    depth = explorer.controls["n_layers"]
    assert depth.whole and depth.value == 80 and len(depth.stops) <= 24
    assert {1, 2, 3, 4, 5, 6, 8, 10, 80, 256} <= set(depth.stops)
    text = lambda: " ".join(re.sub("<[^>]+>", " ", explorer.readout.value).split())
    depth.typed.value = "7"
    assert depth.value == 7 and "standard at L = 7 " in text()
    depth.value = 126.4
    assert depth.value == 126 and "checkpoint at L = 126 " in text()


def test_memory_explorer_curves_are_the_formulas():
    explorer = rx.ActivationMemoryExplorer()
    x, y = explorer.lines["checkpoint"].get_data()
    llama = models.get("llama-3-70b")
    expected = rv.ACT_CHECKPOINT_BEST(n_layers=x, d_model=llama.d_model, len_seq=8192, bytes_value=2, B=1,
                                      act_values=20)
    assert np.allclose(y, expected)
    assert "+33%" in explorer.readout.value
