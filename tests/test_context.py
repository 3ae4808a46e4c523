"""Chapter 6 (lecture_lib.context): long-context costs inferred from API prices.

Golden numbers are the lecture's (lecture notes §6.2) and published configs (cited per test);
SymPy identities check every derivation; Hypothesis checks the tier envelope and the inference.
"""


import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from lecture_lib import context, hardware, models, roofline
from lecture_lib.formula import same
from lecture_lib.symbols import (B, FLOPs, N_active, bw_tier, bytes_param, bytes_tok, cap_tier, len_ctx,
                                 len_pass, mem_bw, mults, ratio_hw)


# ------------------------------------------------------------------ E6.2 the 1.7 KB derivation

def test_the_batch_cancels_in_the_inferred_bytes_per_token():
    for formula in (context.KV_BYTES_FROM_PRICE_STEP, context.KV_BYTES_FROM_PRICE_STEP_BOARD,
                    context.KV_BYTES_FROM_RATIO):
        assert B not in formula.rhs.free_symbols


def test_inferred_bytes_is_mem_bw_over_flops_times_active_over_context():
    assert same(context.KV_BYTES_FROM_PRICE_STEP_BOARD.rhs, mem_bw / mults * N_active / len_ctx)
    # Course convention: FLOPs = 2 x multiplies gives the same number.
    assert same(context.KV_BYTES_FROM_PRICE_STEP.rhs.subs(FLOPs, 2 * mults),
                context.KV_BYTES_FROM_PRICE_STEP_BOARD.rhs)


def test_lecture_numbers_give_1667_bytes():
    """Lecture 01:37:52: 1/300 x 100B/200K = 1,667 bytes ('almost two kilobytes')."""
    board = context.KV_BYTES_FROM_PRICE_STEP_BOARD(mem_bw=1, mults=300, N_active=100e9, len_ctx=200e3)
    assert board == pytest.approx(1666.67, rel=1e-4)
    assert context.infer_kv_bytes(crossover_context=200e3) == pytest.approx(board, rel=1e-12)


def test_fp4_compute_halves_the_answer():
    fp8 = context.infer_kv_bytes(crossover_context=200e3, bytes_per_multiply=1)
    fp4 = context.infer_kv_bytes(crossover_context=200e3, bytes_per_multiply=0.5)
    assert fp4 == pytest.approx(fp8 / 2)
    gb200 = hardware.get("GB200")   # 5 PFLOP/s fp8, 10 fp4 dense, 8 TB/s
    on_chip = context.infer_kv_bytes_on(gb200, crossover_context=200e3, compute_dtype="fp8")
    assert on_chip == pytest.approx(2 * 8e12 * 100e9 / (5e15 * 200e3))      # 1,600 B
    assert context.infer_kv_bytes_on(gb200, crossover_context=200e3, compute_dtype="fp4") == pytest.approx(on_chip / 2)


def test_ratio_form_is_the_price_step_form():
    flops_from_ratio = sp.solve(sp.Eq(roofline.HARDWARE_RATIO.rhs, ratio_hw), FLOPs)[0]
    assert same(context.KV_BYTES_FROM_PRICE_STEP.rhs.subs(FLOPs, flops_from_ratio), context.KV_BYTES_FROM_RATIO.rhs)
    assert same(context.KV_BYTES_FROM_RATIO.rhs, N_active * bytes_param / (ratio_hw * len_ctx))


def test_board_slip_has_context_on_the_wrong_side():
    slip = context.KV_BYTES_BOARD_SLIP.rhs
    right = context.KV_BYTES_FROM_PRICE_STEP_BOARD.rhs
    assert same(slip / right, len_ctx ** 2)
    value = context.KV_BYTES_BOARD_SLIP(mem_bw=1, mults=300, N_active=100e9, len_ctx=200e3)
    assert value > 1e13    # tens of terabytes per token: absurd, which is how the slip was caught


def test_inference_inverts_the_goldilocks_context():
    """Solving E6.2 for bytes and Chapter 1's Goldilocks context for len_ctx are the same equation."""
    inferred = context.KV_BYTES_FROM_PRICE_STEP.rhs
    assert same(roofline.GOLDILOCKS_CONTEXT.rhs.subs(bytes_tok, inferred), len_ctx)


# ------------------------------------------------------------------ E6.1 cost against context

def test_kink_tends_to_the_goldilocks_context_at_large_batch():
    assert same(sp.limit(context.KINK_CONTEXT.rhs, B, sp.oo), roofline.GOLDILOCKS_CONTEXT.rhs)
    # At the kink the two times are equal.
    step = roofline.T_COMPUTE.rhs - roofline.T_MEM.rhs
    assert sp.simplify(step.subs(len_ctx, context.KINK_CONTEXT.rhs)) == 0


def test_compute_is_flat_and_memory_linear_in_context():
    assert sp.diff(roofline.T_COMPUTE.rhs, len_ctx) == 0
    assert sp.diff(roofline.T_MEM.rhs, len_ctx, 2) == 0 and sp.diff(roofline.T_MEM.rhs, len_ctx) != 0


def test_relative_cost_and_what_a_price_step_covers():
    costs = context.relative_cost(np.array([50e3, 200e3, 400e3]), crossover=200e3)
    assert costs.tolist() == [1.0, 1.0, 2.0]
    assert context.LONG_TIER_COVERS(price_step=2, len_ctx_star=200e3) == 400e3


def test_kink_context_numbers():
    kw = dict(n_active=37e9, n_total=671e9, flops=5e15 * 72, mem_bw=8e12 * 72, bytes_param=1, bytes_tok=35136)
    large = context.crossover_context(n_active=37e9, bytes_tok=35136, flops=5e15 * 72, mem_bw=8e12 * 72)
    kinks = [context.kink_context(batch=b, **kw) for b in (5e3, 5e4, 5e8)]
    assert kinks[0] < kinks[1] < kinks[2] < large and kinks[2] == pytest.approx(large, rel=1e-3)
    assert context.kink_context(batch=1, **kw) == 0.0    # weight-bound at every context


# ------------------------------------------------------------------ E6.3 bytes per token from architecture

def test_lecture_architecture_example_is_2048_bytes():
    """01:40:13: one unique-KV layer x 2 x 128 x 8 KV heads (1 byte each) = 2,048 ≈ 2 KB."""
    assert context.KV_BYTES_ARCHITECTURE(kv_layers=1, head_dim=128, kv_heads=8, bytes_kv=1) == 2048


VARIANT_HAND_COUNTS = {
    # name: (hand count of bytes stored per token at 200K context in fp8, what decode reads per token)
    "MHA (Llama-3-70B, 64 KV heads)": (80 * 2 * 128 * 64, 80 * 2 * 128 * 64),
    "GQA (Llama-3-70B, 8 KV heads)": (80 * 2 * 128 * 8, 80 * 2 * 128 * 8),
    "MQA (Llama-3-70B, 1 KV head)": (80 * 2 * 128 * 1, 80 * 2 * 128 * 1),
    "MLA (DeepSeek-V3)": (61 * (512 + 64), 61 * (512 + 64)),
    "GQA + KV shared by 2 layers": (40 * 2 * 128 * 8, 40 * 2 * 128 * 8),
    # 10 global layers hold all 200K tokens; 52 local layers hold their 1,024-token window.
    "local/global (Gemma 3 27B)": ((10 + 52 * 1024 / 200e3) * 2 * 128 * 16,) * 2,
    # DSA stores every token but reads 2,048 of them.
    "sparse top-2048 (DeepSeek-V3.2-style)": (61 * 576, 61 * 576 * 2048 / 200e3),
    # 80 layers: 66 local + 14 global, KV shared in groups of 3 -> 22 local + 5 global caches, MQA.
    "Character.AI-style (MQA, 5:1 local, share 3)": ((5 + 22 * 1024 / 200e3) * 2 * 128,) * 2,
}


@pytest.mark.parametrize("name", list(VARIANT_HAND_COUNTS))
def test_variant_bytes_per_token_match_hand_counts(name):
    model = context.variants()[name]
    stored, read = VARIANT_HAND_COUNTS[name]
    assert model.kv_bytes_per_token("fp8", context_len=200_000) == pytest.approx(stored, rel=1e-12)
    assert model.kv_bytes_read_per_token("fp8", context_len=200_000) == pytest.approx(read, rel=1e-12)


def test_sparse_attention_still_reads_its_indexer_keys():
    """DSA (DeepSeek-V3.2-Exp config: index_n_heads 64, index_head_dim 128) scores every earlier token with one FP8
    key of 128 values + a 4-byte scale per layer, so those keys are read in full at every decode step."""
    dsa = context.variants()["sparse top-2048 (DeepSeek-V3.2-style)"]
    assert context.indexer_bytes_per_token(dsa) == 61 * (128 + 4)
    assert context.kv_bytes_read(dsa, "fp8", context_len=200_000) == pytest.approx(
        61 * 576 * 2048 / 200e3 + 61 * 132, rel=1e-12)
    assert context.kv_bytes_read(dsa, "fp8", context_len=200_000) > 4 * context.infer_kv_bytes(crossover_context=200e3)
    assert context.indexer_flops_per_token(dsa, 200_000) == pytest.approx(2 * 64 * 128 * 61 * 200_000, rel=1e-12)
    attention = dsa.attention_flops_per_token(200_000) + 2 * 64 * 128 * 61 * 200_000
    assert context.attention_share(dsa, context_len=200_000) == pytest.approx(attention / (2 * dsa.params_active))
    for name, dense in context.variants().items():                     # nothing changes without top-k
        if not dense.attention_topk:
            assert context.indexer_bytes_per_token(dense) == 0
            assert context.indexer_flops_per_token(dense, 1000) == 0
            assert context.kv_bytes_read(dense, 1, context_len=200_000) == dense.kv_bytes_read_per_token(
                1, context_len=200_000)


def test_variants_cover_every_kind_the_lecture_names():
    kinds = {m.attention_kind for m in context.variants().values()}
    assert kinds == {"MHA", "GQA", "MQA", "MLA"}
    shapes = list(context.variants().values())
    assert any(m.kv_share_group > 1 for m in shapes) and any(m.n_local_layers for m in shapes)
    assert any(m.attention_topk for m in shapes)


def test_real_models_store_far_more_than_the_inferred_1_7_kb():
    inferred = context.infer_kv_bytes(crossover_context=200e3)
    for name in ("llama-3-70b", "deepseek-v3", "qwen3-235b-a22b"):
        assert models.get(name).kv_bytes_per_token("fp8") > 10 * inferred


# ------------------------------------------------------------------ E6.4 prefill and decode

def test_compute_per_token_is_flat_in_len_pass_and_memory_falls_as_its_inverse():
    compute = context.T_COMPUTE_PASS.rhs / (B * len_pass)
    memory = roofline.T_MEM.rhs / (B * len_pass)
    assert sp.diff(compute, len_pass) == 0
    assert same(memory * len_pass, roofline.T_MEM.rhs / B)
    at_cross = context.PASS_CROSSOVER.rhs
    assert same(compute, memory.subs(len_pass, at_cross))


def test_output_five_times_input_means_decode_mfu_one_fifth():
    assert context.decode_mfu_from_prices(price_input=5, price_output=25) == pytest.approx(0.2)
    assert context.decode_mfu_from_prices(price_input=2, price_output=12, mfu_prefill=0.6) == pytest.approx(0.1)


def test_pass_times_prefill_compute_bound_decode_memory_bound():
    deepseek, rack = models.get("deepseek-v3"), hardware.get_system("GB200 NVL72")
    kw = dict(batch=64, n_active=deepseek.params_active, n_total=deepseek.params_total, flops=rack.flops["fp8"],
              mem_bw=rack.hbm_bandwidth, bytes_param=1, len_ctx=32768, bytes_tok=deepseek.kv_bytes_per_token(1))
    decode = context.pass_times(len_pass=1, **kw)
    prefill = context.pass_times(len_pass=8192, **kw)
    assert decode["memory"] > decode["compute"] and prefill["compute"] > prefill["memory"]
    assert 1 < decode["crossover"] < 8192
    curve = context.pass_times(len_pass=np.array([1.0, 10.0, 100.0]), **kw)
    assert np.allclose(curve["memory"][0] / curve["memory"], [1, 10, 100])


def test_pass_times_with_no_kv_is_the_weights_alone_as_decode_step_has_it():
    """Issue 21 §2.2: len_ctx = 0 means no KV cache in pass_times as in roofline.decode_step."""
    kw = dict(batch=32, n_active=70e9, n_total=70e9, flops=1e15, mem_bw=4e12, bytes_param=1, len_ctx=0, bytes_tok=0)
    one = context.pass_times(len_pass=1, **kw)
    assert one["memory"] == pytest.approx(70e9 / 4e12 / 32)                       # weights once, over B tokens
    assert one["crossover"] == pytest.approx(1e15 * 70e9 / (2 * 32 * 70e9 * 4e12))   # FLOPs N bytes / (2 B N mem_bw)
    step = roofline.decode_step(**{k: v for k, v in kw.items()})
    assert one["total"] * 32 == pytest.approx(step["t"])
    assert context.pass_times(len_pass=1, **(kw | dict(len_ctx=4096)))["memory"] == pytest.approx(one["memory"])
    with pytest.raises(ValueError, match="len_ctx"):
        context.pass_times(len_pass=1, **(kw | dict(len_ctx=-1)))
    with pytest.raises(ValueError, match="bytes_tok"):
        context.pass_times(len_pass=1, **(kw | dict(bytes_tok=float("nan"))))


# ------------------------------------------------------------------ E6.5 attention FLOPs

def test_attention_flops_formula_and_model_method_agree():
    llama = models.get("llama-3-70b")
    formula = context.ATTENTION_FLOPS(attn_layers=80, q_heads=64, head_dim=128, len_ctx=100_000)
    assert llama.attention_flops_per_token(100_000) == pytest.approx(formula)
    equal_at = context.ATTENTION_EQUALS_WEIGHTS(N_active=llama.params_active, attn_layers=80, q_heads=64, head_dim=128)
    assert context.attention_share(llama, context_len=round(equal_at)) == pytest.approx(1, rel=1e-4)


def test_local_and_sparse_attention_cut_attention_flops():
    deepseek = models.get("deepseek-v3")
    sparse = context.variants()["sparse top-2048 (DeepSeek-V3.2-style)"]
    assert sparse.attention_flops_per_token(1_000_000) == deepseek.attention_flops_per_token(2048)
    gemma = models.get("gemma-3-27b")
    dense = models.Model(**{**gemma.__dict__, "sliding_window": 0, "n_local_layers": 0})
    ratio = gemma.attention_flops_per_token(10_000) / dense.attention_flops_per_token(10_000)
    assert ratio == pytest.approx((10 * 10_000 + 52 * 1024) / (62 * 10_000))   # 52 of 62 layers see 1,024


# ------------------------------------------------------------------ E6.6-E6.7 storage tiers

def test_drain_time_rule_is_capacity_over_bandwidth():
    assert same(context.DRAIN_TIME_RULE.rhs, cap_tier / bw_tier)
    assert same(context.DRAIN_TIME_RULE.rhs, context.TIER_DRAIN_TIME.rhs)


@pytest.mark.parametrize("tier", context.TIERS, ids=lambda t: t.name)
def test_each_tier_balances_retrieve_and_hold_at_its_drain_time(tier):
    retrieve, hold = tier.costs(bytes_tok=1667)
    assert retrieve / hold == pytest.approx(tier.drain_time, rel=1e-12)
    assert tier.drain_time == pytest.approx(tier.capacity / tier.bandwidth)
    assert context.tier_by_drain_time(tier.drain_time) == tier.name


def test_tier_drain_times_against_the_board():
    drains = {t.name: t.drain_time for t in context.TIERS}
    assert drains["HBM"] == pytest.approx(186 / 8000)          # 23 ms vs the board's 20 ms
    assert 0.5 < drains["host DRAM"] < 10                       # board: 1-10 s
    assert 60 < drains["flash"] < 3600                          # board: ~1 min; real: ~9 min
    assert 3600 < drains["disk"] < 2 * 86400                    # board: ~1 h; real: ~1 day
    assert list(drains.values()) == sorted(drains.values())


def test_envelope_walks_the_tiers_in_order_and_picks_each_at_its_drain_time():
    kw = dict(bytes_tok=1667, n_active=100e9, flops=5e15, price_chip_hour=2.0)
    steps = context.envelope_crossovers(**kw)
    assert [s[1] for s in steps] == ["HBM", "host DRAM", "flash", "disk"]
    assert steps[-1][2] == "rematerialise"
    times = [s[0] for s in steps]
    assert times == sorted(times)
    for tier in context.TIERS[:-1]:
        assert context.cheapest_tier(tier.drain_time, **kw) == tier.name


@settings(max_examples=60, deadline=None)
@given(st.floats(100, 1e6), st.floats(1e9, 1e12), st.floats(0.5, 20), st.floats(1e-3, 1e8))
def test_envelope_is_the_minimum_of_the_lines(bytes_tok, n_active, price, hold):
    kw = dict(bytes_tok=bytes_tok, n_active=n_active, flops=5e15, price_chip_hour=price)
    costs = context.storage_costs(hold, **kw)
    best = context.cheapest_tier(hold, **kw)
    assert float(costs[best]) == min(float(v) for v in costs.values())
    steps = context.envelope_crossovers(**kw)
    before = [s for s in steps if s[0] <= hold]
    expected = before[-1][2] if before else (steps[0][1] if steps else best)
    assert float(costs[expected]) == pytest.approx(float(costs[best]), rel=1e-9)


def test_remat_cost_is_one_forward_pass():
    cost = context.remat_cost(n_active=100e9, flops=5e15, price_chip_hour=3600)   # $1 per chip-second
    assert cost == pytest.approx(2 * 100e9 / 5e15)


def test_get_tier_and_unknown_tier():
    assert context.get_tier(" flash ").name == "flash"
    with pytest.raises(KeyError, match="HBM"):
        context.get_tier("tape")


# ------------------------------------------------------------------ bad input

@pytest.mark.parametrize("call", [
    lambda: context.infer_kv_bytes(crossover_context=0),
    lambda: context.infer_kv_bytes(crossover_context=-200e3),
    lambda: context.infer_kv_bytes(crossover_context=float("nan")),
    lambda: context.infer_kv_bytes(crossover_context="200K"),
    lambda: context.relative_cost(0, crossover=200e3),
    lambda: context.decode_mfu_from_prices(price_input=-5, price_output=25),
    lambda: context.decode_mfu_from_prices(price_input=5, price_output=0),
    lambda: context.decode_mfu_from_prices(price_input=5, price_output=25, mfu_prefill=1.5),
    lambda: context.remat_cost(n_active=1e9, flops=1e15, price_chip_hour=-2),
    lambda: context.storage_costs(-1.0, bytes_tok=1667, n_active=1e11, flops=5e15, price_chip_hour=2),
    lambda: context.pass_times(len_pass=0, batch=1, n_active=1, n_total=1, flops=1, mem_bw=1, bytes_param=1,
                               len_ctx=1, bytes_tok=1),
    lambda: context.infer_kv_bytes_on("GB200", crossover_context=200e3, compute_dtype="int4"),
    lambda: models.get("llama-3-70b").attention_flops_per_token(0),
    lambda: models.get("llama-3-70b").kv_bytes_read_per_token(1, context_len=0),
    lambda: context.indexer_flops_per_token(context.variants()["sparse top-2048 (DeepSeek-V3.2-style)"], 0),
    lambda: context.kv_bytes_read(models.get("llama-3-70b"), 1, context_len=0),
])
def test_bad_input_names_the_parameter(call):
    with pytest.raises(ValueError):
        call()


def test_bad_input_messages_name_parameter_and_range():
    with pytest.raises(ValueError, match=r"crossover_context must be > 0"):
        context.infer_kv_bytes(crossover_context=0)
    with pytest.raises(ValueError, match=r"price_input must be > 0"):
        context.decode_mfu_from_prices(price_input=-1, price_output=5)
    with pytest.raises(KeyError):
        context.infer_kv_bytes_on("TPU v99", crossover_context=200e3)


# ------------------------------------------------------------------ explorers (in-process smoke)

from lecture_lib.explorers import context as cx  # noqa: E402

EXPLORERS = [cx.ContextCostExplorer, cx.PassExplorer, cx.TierExplorer, cx.PriceSheetLab]


@pytest.fixture(scope="module")
def built():
    return {cls: cls() for cls in EXPLORERS}


def test_price_sheet_lab_renders_every_sheet_and_reads_the_lecture():
    from lecture_lib import pricing

    lab = cx.PriceSheetLab()
    for name in pricing.names():
        lab.controls["sheet"].value = name
        assert "color:#b00" not in lab.readout.value
    gemini = context.price_sheet_lab("gemini-3.1-pro", chip="GB200", compute_dtype="fp8")
    assert gemini["crossover"] == 200_000 and gemini["long_step"] == (2.0, 1.5)   # +50% is the output
    assert gemini["kv_bytes"] == pytest.approx(1600)
    assert gemini["decode_mfu"] == pytest.approx(2 / 12)
    opus = context.price_sheet_lab("claude-opus-4.6")
    assert opus["decode_mfu"] == pytest.approx(0.2) and opus["cache_read_discount"] == pytest.approx(10)
    assert opus["hold_cost_5m"] == pytest.approx(1.25 / 1e6 / 300)       # ($6.25 - $5) / M tokens / 5 min
    assert (opus["board_tier_5m"], opus["board_tier_1h"]) == ("flash", "disk")


def test_curves_are_the_library_formulas(built):
    explorer = built[cx.TierExplorer]
    values = explorer.values
    x, y = explorer.lines["flash"].get_data()
    retrieve, hold = context.get_tier("flash").costs(bytes_tok=values["bytes_tok"])
    assert np.allclose(y, context.COST_OF_HOLD(c_retrieve=retrieve, c_hold=hold, T_hold=x))


@settings(max_examples=80, deadline=None)
@given(st.floats(1e3, 1e7), st.floats(1e8, 1e13), st.floats(50, 2000), st.sampled_from([0.5, 1.0, 2.0]))
def test_inference_round_trips_through_the_crossover(crossover, n_active, ratio, width):
    """Bytes inferred from a step put the Goldilocks context back at that step; doubling the step halves the bytes."""
    inferred = context.infer_kv_bytes(crossover_context=crossover, n_active=n_active, ratio=ratio,
                                      bytes_per_multiply=width)
    flops = 2 * ratio * 1e12 / width            # a chip with this ratio at 1 TB/s
    back = context.crossover_context(n_active=n_active, bytes_tok=inferred, flops=flops, mem_bw=1e12)
    assert back == pytest.approx(crossover, rel=1e-9)
    assert context.infer_kv_bytes(crossover_context=2 * crossover, n_active=n_active, ratio=ratio,
                                  bytes_per_multiply=width) == pytest.approx(inferred / 2, rel=1e-12)
