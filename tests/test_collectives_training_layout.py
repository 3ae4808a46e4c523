"""The training-layout roofline: FSDP, TP, FSDP+TP and pipeline stages, against the scaling book and by hand."""

import pytest
import sympy as sp

from lecture_lib import collectives, formula, hardware, pipeline
from lecture_lib import training_layout as tl
from lecture_lib.symbols import (B_tok, FLOPs, bw_fsdp, bw_tp, bytes_grad, bytes_value, d_ff, n_chip, n_dp,
                                 n_mats, n_tp)

H100 = hardware.get("H100")
LLAMA70_MLP = dict(d_model=8192, d_ff=28672, n_layers=80, matrices=3)   # Llama-3-70B's gated MLP


def test_pure_fsdp_and_pure_tp_reduce_to_the_dp_and_tp_critical_points():
    dp = collectives.DP_CRITICAL_BATCH.rhs.subs({n_dp: n_chip, bytes_grad: bytes_value})
    assert formula.same(tl.FSDP_CRITICAL_TOKENS, dp)                  # the book: FSDP's rule is DP's
    assert formula.same(tl.TP_CRITICAL_WIDTH, collectives.TP_CRITICAL_D_FF.rhs.subs(n_tp, n_chip))


def test_mixed_optimum_is_the_books_with_mesh_axes_as_bandwidth_multiples():
    """training.md: X_opt = sqrt(B N M_X / (F M_Y)) and B/N > 4 alpha^2 / (M_X M_Y F), for a 2-matrix BF16 MLP."""
    m_x, m_y, w, alpha, f, b, n = sp.symbols("M_X M_Y W alpha F B N", positive=True)
    book = {n_mats: 2, bytes_value: 2, bw_fsdp: m_x * w, bw_tp: m_y * w, d_ff: f, B_tok: b, n_chip: n,
            FLOPs: alpha * w}
    assert sp.simplify(tl.X_OPT.rhs.subs(book) - sp.sqrt(b * n * m_x / (f * m_y))) == 0
    assert sp.simplify(tl.MIXED_CRITICAL_TOKENS.rhs.subs(book) - 4 * alpha**2 / (m_x * m_y * f)) == 0
    # The book's numbers: N = 64, B = 48,000, F = 32,768 on a 3-D mesh (M_X = 2, M_Y = 1): X "roughly 13.9";
    # alpha = 2550: B/N "roughly 400".
    x = tl.X_OPT(B_tok=48_000, n_chip=64, n_mats=2, d_ff=32_768, bw_fsdp=2, bw_tp=1)
    assert x == pytest.approx(13.9, rel=0.02)
    assert tl.MIXED_CRITICAL_TOKENS(bytes_value=2, FLOPs=2550, n_mats=2, d_ff=32_768, bw_fsdp=2, bw_tp=1) == \
        pytest.approx(400, rel=0.01)


def test_at_the_optimum_communication_equals_compute_at_the_critical_batch():
    per_chip = tl.MIXED_CRITICAL_TOKENS.rhs
    large = (tl.FSDP_LAYER_COMM.rhs.subs(tl.n_fsdp - 1, tl.n_fsdp)
             + tl.TP_LAYER_COMM.rhs.subs(n_tp - 1, n_tp)).subs(n_tp, n_chip / tl.n_fsdp)
    at = {tl.n_fsdp: tl.X_OPT.rhs}
    comm = large.subs(at).subs(B_tok, per_chip * n_chip)
    math = tl.LAYOUT_MATH.rhs.subs(B_tok, per_chip * n_chip)
    assert sp.simplify(comm - math) == 0
    # and X_opt is a minimum: the derivative changes sign there
    assert sp.simplify(sp.diff(large, tl.n_fsdp, 2).subs(at)) .is_positive


def test_mixing_lowers_the_critical_batch_below_fsdps():
    out = tl.mixed_optimum(n_chips=64, batch_tokens=48_000, d_model=8192, d_ff=32_768, flops=H100.flops["bf16"],
                           fsdp_bandwidth=450e9, tp_bandwidth=450e9)
    assert out["critical_tokens_per_chip"] < out["fsdp_critical_tokens_per_chip"]
    assert out["fsdp_critical_tokens_per_chip"] == pytest.approx(H100.flops["bf16"] / 450e9 * 63 / 64)
    assert out["x_opt"] * out["y_opt"] == pytest.approx(64)


def test_layout_step_by_hand():
    """X = 4, Y = 2 on 8 chips, one 2-matrix layer, all bandwidths 100 GB/s, FLOPs 1e15."""
    d, f, b, c, w = 1024, 4096, 65_536, 1e15, 100e9
    out = tl.layout_step(fsdp=4, tp=2, batch_tokens=b, d_model=d, d_ff=f, n_layers=1, flops=c, fsdp_bandwidth=w,
                         tp_bandwidth=w)
    math_fwd = 2 * 2 * b * d * f / (8 * c)
    gather = 2 * d * f * 2 * (3 / 4) / (2 * w)                 # this chip's Y-shard, 3/4 of it over the ring
    tp_one = 2 * (b / 4) * d * 2 * (1 / 2) / w
    assert out["t_math"] == pytest.approx(3 * math_fwd)
    assert out["t_fsdp"] == pytest.approx(3 * gather)            # gather, gather again, reduce-scatter
    assert out["t_tp"] == pytest.approx(2 * tp_one)
    step = max(math_fwd, gather + tp_one) + max(2 * math_fwd, 2 * gather + tp_one)
    assert out["t_step"] == pytest.approx(step)
    assert out["comm_bound"] == (gather + tp_one > math_fwd or 2 * gather + tp_one > 2 * math_fwd)
    assert out["state_bytes_per_chip"] == pytest.approx(16 * 2 * d * f / 8)
    dp = tl.layout_step(fsdp=4, tp=2, batch_tokens=b, d_model=d, d_ff=f, n_layers=1, flops=c, fsdp_bandwidth=w,
                        tp_bandwidth=w, data="dp")
    assert dp["t_fsdp"] == pytest.approx(2 * gather)             # one all-reduce of the gradients
    assert dp["state_bytes_per_chip"] == pytest.approx(12 * 2 * d * f / 8 + 4 * 2 * d * f / 2)


def test_pipeline_stages_pay_chapter_threes_bubble_and_regather_under_zero3():
    kw = dict(fsdp=8, tp=1, batch_tokens=2**20, d_model=8192, d_ff=28672, n_layers=80, matrices=3,
              flops=H100.flops["bf16"], fsdp_bandwidth=400e9, tp_bandwidth=450e9, pp_bandwidth=50e9)
    flat = tl.layout_step(**kw)
    piped = tl.layout_step(**kw, stages=4, micro_batches=8)
    assert piped["bubble"] == pytest.approx(pipeline.bubble_fraction(stages=4, microbatches=8)) == pytest.approx(3 / 11)
    assert piped["t_math"] == pytest.approx(flat["t_math"] / 4)          # 4x the chips
    # each chip gathers 1/4 of the layers, but once per micro-batch (8 in the forward, 8 + 1 in the backward)
    assert piped["t_fsdp"] == pytest.approx(flat["t_fsdp"] / 4 * (8 + 9) / 3)
    assert piped["t_pp"] == pytest.approx(2 * 2**20 / 8 * 8192 * 2 / 50e9)


def test_best_layouts_lists_every_split_and_pipelines_only_where_communication_binds():
    big = tl.best_layouts(n_chips=1024, batch_tokens=4 * 2**20, chip="H100", **LLAMA70_MLP)
    assert all(r["fsdp"] * r["tp"] * r["stages"] == 1024 for r in big)
    assert [r["t_step"] for r in big] == sorted(r["t_step"] for r in big)
    assert all(r["state_bytes_per_chip"] <= H100.hbm_capacity for r in big)
    assert big[0]["stages"] == 1 and not big[0]["comm_bound"]            # 4M tokens: compute-bound, no bubble
    assert big[0]["t_step"] == pytest.approx(big[0]["t_math"])
    small = tl.best_layouts(n_chips=1024, batch_tokens=2**18, chip="H100", **LLAMA70_MLP)
    flat_best = min(r["t_step"] for r in small if r["stages"] == 1)
    assert small[0]["stages"] > 1 and small[0]["t_step"] < flat_best     # 256 tokens per GPU: a bubble beats the wire
    splits = {(r["fsdp"], r["tp"], r["stages"], r["data"]) for r in small}
    assert (1024, 1, 1, "fsdp") in splits and (128, 8, 1, "fsdp") in splits


def test_gpu_fsdp_bandwidth_is_shared_by_the_tp_shards_of_a_node():
    rows = tl.best_layouts(n_chips=64, batch_tokens=2**20, chip="H100", **{**LLAMA70_MLP, "n_layers": 8})
    by_split = {(r["fsdp"], r["tp"], r["stages"]): r for r in rows}
    assert by_split[(8, 1, 8)]["fsdp_bandwidth"] == 450e9                # each stage inside one node: NVLink
    assert by_split[(64, 1, 1)]["fsdp_bandwidth"] == 8 * 50e9            # across nodes: the node's egress
    assert by_split[(8, 8, 1)]["fsdp_bandwidth"] == 50e9                 # 8-way TP: each GPU's own NIC


def test_layout_inputs_are_checked():
    kw = dict(fsdp=4, tp=2, batch_tokens=1e5, d_model=1024, d_ff=4096, n_layers=4, flops=1e15, fsdp_bandwidth=1e11,
              tp_bandwidth=1e11)
    for change, name in [({"fsdp": 0}, "fsdp"), ({"tp": 2.5}, "tp"), ({"stages": 8}, "stages"),
                         ({"stages": 2}, "pp_bandwidth"), ({"batch_tokens": 2}, "batch_tokens"),
                         ({"data": "zero2"}, "data"), ({"matrices": 0}, "matrices"), ({"flops": -1}, "flops"),
                         ({"micro_batches": 0}, "micro_batches")]:
        with pytest.raises(ValueError, match=name):
            tl.layout_step(**{**kw, **change})
    with pytest.raises(ValueError, match="batch_tokens"):
        tl.best_layouts(n_chips=8, batch_tokens=0.5, chip="H100", d_model=1024, d_ff=4096, n_layers=4)
    with pytest.raises(ValueError, match="fmt"):
        tl.best_layouts(n_chips=8, batch_tokens=1e5, chip="H100", d_model=1024, d_ff=4096, n_layers=4, fmt="fp4")
    with pytest.raises(ValueError, match="n_chips"):
        tl.mixed_optimum(n_chips=0, batch_tokens=1e5, d_model=1, d_ff=1, flops=1, fsdp_bandwidth=1, tp_bandwidth=1)
