"""Chapter 1's formulas: SymPy identities, the lecture's numbers, real-chip goldens, properties."""

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from lecture_lib import formula, hardware, roofline
from lecture_lib.symbols import (B, FLOPs, N_active, N_total, bytes_tok, len_ctx, mem_bw, mults,
                                 ratio_hw, sparsity)

# --- SymPy identities ---------------------------------------------------------------------------


def test_board_form_equals_flop_form_once_flops_count_two_per_multiply():
    assert formula.same(roofline.T_COMPUTE_BOARD.rhs.subs(mults, FLOPs / 2), roofline.T_COMPUTE.rhs)


def test_at_balance_batch_compute_time_equals_weight_fetch_time():
    at_star = roofline.T_COMPUTE.rhs.subs(B, roofline.BALANCE_BATCH.rhs)
    assert formula.same(at_star, roofline.T_WEIGHTS.rhs)


def test_balance_batch_is_hardware_ratio_times_sparsity():
    as_product = (ratio_hw * sparsity).subs({ratio_hw: roofline.HARDWARE_RATIO.rhs, sparsity: N_total / N_active})
    assert formula.same(roofline.BALANCE_BATCH.rhs, as_product)


def test_balance_batch_does_not_depend_on_model_scale_only_on_sparsity():
    scaled = roofline.BALANCE_BATCH.rhs.subs({N_total: 10 * N_total, N_active: 10 * N_active})
    assert formula.same(scaled, roofline.BALANCE_BATCH.rhs)


def test_kv_term_pushes_balance_batch_up():
    with_kv, without = roofline.BALANCE_BATCH_WITH_KV.rhs, roofline.BALANCE_BATCH.rhs
    assert formula.same(with_kv.subs(len_ctx, 0), without) or formula.same(sp.limit(with_kv, len_ctx, 0), without)
    values = dict(FLOPs=2e15, N_total=600e9, N_active=40e9, bytes_param=1, mem_bw=8e12, len_ctx=4096, bytes_tok=3e4)
    assert roofline.BALANCE_BATCH_WITH_KV(**values) > roofline.BALANCE_BATCH(
        **{k: v for k, v in values.items() if k in roofline.BALANCE_BATCH.input_names})


def test_goldilocks_context_equalises_the_two_slopes():
    slope_kv = sp.diff(roofline.T_KV.rhs, B).subs(len_ctx, roofline.GOLDILOCKS_CONTEXT.rhs)
    assert formula.same(slope_kv, sp.diff(roofline.T_COMPUTE.rhs, B))


def test_cost_per_token_at_large_batch_is_the_compute_or_kv_floor():
    per_token = [sp.expand(term / B) for term in roofline.T_STEP.rhs.args]
    floor = sp.Max(*[sp.limit(term, B, sp.oo) for term in per_token])
    assert formula.same(floor, sp.Max(2 * N_active / FLOPs, len_ctx * bytes_tok / mem_bw))


# --- The lecture's numbers ----------------------------------------------------------------------


def test_lecture_balance_batch_300_times_sparsity_8_is_2400():
    """Lecture 00:19:36: B* ≈ 300 × sparsity = 2,400 for sparsity 8."""
    star = roofline.BALANCE_BATCH(FLOPs=600, mem_bw=1, bytes_param=1, N_total=8, N_active=1)
    assert star == pytest.approx(2400)


def test_lecture_balance_batch_on_blackwell_fp4_is_about_2400():
    """GB200 at dense FP4 with FP4 weights: the ratio is ≈300 (lecture 00:18:48), so B* ≈ 2,400."""
    star = roofline.balance_batch(hardware.get("GB200"), weight_bytes=0.5, compute_dtype="fp4", sparsity=8)
    assert star == pytest.approx(2400, rel=0.12)


def test_h100_bf16_ratio_is_295():
    """Scaling book Ch.1/Ch.12: H100 HBM critical intensity ≈ 295 (989 TFLOP/s bf16, 3.35 TB/s)."""
    ratio = roofline.hardware_ratio(hardware.get("H100"), "bf16", 2)
    assert ratio == pytest.approx(295, rel=0.02)


def test_ratio_is_invariant_to_precision_when_weights_match_the_multiplies():
    h100 = hardware.get("H100")
    assert roofline.hardware_ratio(h100, "fp8", 1) == pytest.approx(roofline.hardware_ratio(h100, "bf16", 2), rel=0.02)


def test_rubin_hbm_drain_time_as_on_the_board():
    """Lecture 00:24:00: 288 GB / 20 TB/s ≈ 15 ms (exactly 14.4 ms)."""
    assert roofline.HBM_DRAIN_TIME(hbm_capacity=288e9, mem_bw=20e12) == pytest.approx(14.4e-3)


def test_throughput_at_2000_sequences_is_128k_tokens_per_second():
    """Lecture 00:26:56: 64 steps per second × 2,000 sequences = 128,000 tokens/s."""
    assert roofline.THROUGHPUT(B=2000, t_step=1 / 64) == pytest.approx(128_000)


def test_train_worst_case_latency_is_40_ms():
    """Lecture 00:22:59: wait up to one 20 ms step, then ride one: 40 ms."""
    assert roofline.WORST_CASE_LATENCY(t_wait=20e-3, t_step=20e-3) == pytest.approx(40e-3)


def test_fast_mode_six_times_price_for_two_and_a_half_speed_needs_a_15x_smaller_batch():
    assert roofline.FAST_MODE_BATCH_RATIO(price_ratio=6, speed_ratio=2.5) == pytest.approx(15)


def test_illustrative_cost_033_dollars_per_million_tokens():
    """Lecture notes §1.2: NVL72 at $2/GPU-h, 20 ms step, B = 2,400 → ≈ $0.33 per million tokens."""
    cost = roofline.cost_per_token(step_time=20e-3, batch=2400, n_chips=72, price_chip_hour=2.0)
    assert cost * 1e6 == pytest.approx(0.333, rel=0.01)


def test_deepseek_fp8_weight_fetch_floor_on_64_blackwells_is_about_1_3_ms():
    """Lecture notes §1.2: 671 GB over 64 × 8 TB/s ≈ 1.3 ms."""
    floor = roofline.T_WEIGHTS(N_total=671e9, bytes_param=1, mem_bw=64 * 8e12)
    assert floor == pytest.approx(1.31e-3, rel=0.02)


# --- Properties ---------------------------------------------------------------------------------

positive = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False, allow_infinity=False)
SYSTEM = dict(N_active=37e9, N_total=671e9, FLOPs=72 * 5e15, mem_bw=72 * 8e12, bytes_param=1.0)


@settings(max_examples=60, deadline=None)
@given(b1=st.floats(1, 1e5), b2=st.floats(1, 1e5), ctx=st.floats(1, 1e6), kv=st.floats(1, 1e6))
def test_cost_per_token_never_rises_with_batch(b1, b2, ctx, kv):
    lo, hi = sorted((b1, b2))
    cost = lambda b: roofline.COST_PER_TOKEN(B=b, len_ctx=ctx, bytes_tok=kv, n_chips=72, price_chip_hour=2, **SYSTEM)
    assert cost(hi) <= cost(lo) * (1 + 1e-12)


@settings(max_examples=60, deadline=None)
@given(b1=st.floats(1, 1e5), b2=st.floats(1, 1e5), c1=st.floats(1, 1e6), c2=st.floats(1, 1e6))
def test_step_time_never_falls_with_batch_or_context(b1, b2, c1, c2):
    step = lambda b, c: roofline.T_STEP(B=b, len_ctx=c, bytes_tok=7e4, **SYSTEM)
    b_lo, b_hi = sorted((b1, b2))
    c_lo, c_hi = sorted((c1, c2))
    assert step(b_hi, c_lo) >= step(b_lo, c_lo)
    assert step(b_lo, c_hi) >= step(b_lo, c_lo)


@settings(max_examples=40, deadline=None)
@given(s=st.floats(1, 100))
def test_balance_batch_scales_linearly_with_sparsity(s):
    chip = hardware.get("B200")
    one = roofline.balance_batch(chip, weight_bytes=0.5, compute_dtype="fp4")
    assert roofline.balance_batch(chip, weight_bytes=0.5, compute_dtype="fp4", sparsity=s) == pytest.approx(one * s)


def test_decode_step_vectorises_over_batch():
    step = roofline.decode_step(batch=np.array([1.0, 1e3, 1e5]), n_active=37e9, n_total=671e9, flops=72 * 5e15,
                                mem_bw=72 * 8e12, bytes_param=1, len_ctx=4096, bytes_tok=7e4)
    assert step["t"].shape == (3,)
    assert np.all(step["t"] >= step["t_compute"]) and np.all(step["t"] >= step["t_mem"])


def test_no_finite_balance_past_goldilocks():
    kw = dict(n_active=37e9, n_total=671e9, flops=72 * 5e15, mem_bw=72 * 8e12, bytes_param=1, bytes_tok=7e4)
    assert math.isinf(roofline.balance_batch_with_kv(len_ctx=1e7, **kw))
    assert math.isfinite(roofline.balance_batch_with_kv(len_ctx=100, **kw))


# --- Bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, name", [
    (dict(weight_bytes=-1, compute_dtype="bf16"), "weight_bytes"),
    (dict(weight_bytes=float("nan"), compute_dtype="bf16"), "weight_bytes"),
    (dict(weight_bytes="2", compute_dtype="bf16"), "weight_bytes"),
    (dict(weight_bytes=2, compute_dtype="fp3"), "compute_dtype"),
    (dict(weight_bytes=2, compute_dtype="bf16", sparsity=0.5), "sparsity"),
])
def test_balance_batch_bad_input_names_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        roofline.balance_batch(hardware.get("H100"), **kwargs)


def test_fp4_on_hopper_is_refused_with_the_formats_it_has():
    with pytest.raises(ValueError, match="compute_dtype.*bf16"):
        roofline.balance_batch(hardware.get("H100"), weight_bytes=0.5, compute_dtype="fp4")


@pytest.mark.parametrize("name, value", [("batch", 0), ("batch", -5), ("len_ctx", math.nan), ("mem_bw", -1e12)])
def test_decode_step_bad_input(name, value):
    kw = dict(batch=10, n_active=1e9, n_total=2e9, flops=1e15, mem_bw=1e12, bytes_param=1, len_ctx=100, bytes_tok=1e3)
    kw[name] = value
    with pytest.raises(ValueError, match=name):
        roofline.decode_step(**kw)


def test_active_above_total_is_refused():
    with pytest.raises(ValueError, match="n_active"):
        roofline.decode_step(batch=1, n_active=3e9, n_total=1e9, flops=1, mem_bw=1, bytes_param=1, len_ctx=1, bytes_tok=1)
