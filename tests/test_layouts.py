"""Issue 21 §2, items 1-4: embedding rows, len_ctx = 0, mixed precision completed, layouts.

Hand counts come from the presets' published shapes; identities are checked in SymPy.
"""

import math

import numpy as np
import pytest
import sympy as sp

from lecture_lib import collectives, formula, hardware, models, roofline
from lecture_lib.symbols import (B, FLOPs, FLOPs_attn, FLOPs_expert, L_moe, N_dense, N_expert,
                                 N_fixed, N_total, bytes_expert, bytes_param, hbm_capacity, mem_bw,
                                 n_chips, n_ep, n_experts, n_redundant, n_tp, n_vocab, r_kv, d_model)

n = sp.Symbol("n", positive=True)


def _deepseek_decode_unit():
    """DeepSeek's decode deployment unit: 18 H800 nodes, EP144 (open-infra-index, 202502OpenSourceWeek day 6)."""
    return collectives.deployment(hardware.get_system("HGX H800"), n_systems=18)


DEEPSEEK_DECODE = roofline.Layout(attention_tp=1, redundant_experts=32)


# --- 1. Embedding rows ------------------------------------------------------------------------------

def test_embedding_rows_at_b_equal_vocab_or_more_are_the_whole_table():
    table = n_vocab * d_model
    assert formula.same(roofline.EMBEDDING_ROWS_READ.rhs.subs(B, n_vocab), table)
    extra = sp.Symbol("extra", positive=True)
    assert formula.same(roofline.EMBEDDING_ROWS_READ.rhs.subs(B, n_vocab + extra), table)


def test_gpt_oss_batch_one_reads_its_published_active_count():
    """gpt-oss model card (arXiv 2508.10925, Table 1): 5.13 B active, unembedding counted, embedding not.

    A batch-1 step reads exactly that plus one 2,880-value embedding row; the table (201,088 x 2,880 = 0.58 B)
    is no longer read in full."""
    m = models.get("gpt-oss-120b")
    now = roofline.params_read(m, tokens=1)
    before = roofline.params_read(m, tokens=1, embedding_rows=False)
    assert before - now == 201088 * 2880 - 2880
    assert now == m.params_active + 2880
    assert now == pytest.approx(5.13e9, rel=2e-3)


def test_llama_8b_batch_one_reads_6_5_percent_less_than_n_total():
    m = models.get("llama-3.1-8b")
    saved = 1 - roofline.params_read(m, tokens=1) / m.params_total
    assert saved == pytest.approx((128256 - 1) * 4096 / m.params_total)
    assert saved == pytest.approx(0.065, abs=0.001)


def test_a_tied_table_is_read_once_in_full_for_the_head():
    m = models.get("gemma-3-27b")
    assert roofline.params_read(m, tokens=1) == m.params_total
    assert roofline.params_read(m, tokens=1, embedding_rows=False) == m.params_total


def test_rows_read_grow_with_tokens_and_stop_at_the_table():
    m = models.get("llama-3-70b")
    tokens = np.array([1.0, 10.0, 1e3, 128256.0, 1e6])
    read = roofline.params_read(m, tokens=tokens)
    assert np.all(np.diff(read) >= 0) and read[-1] == read[-2] == m.params_total
    assert read[1] - read[0] == pytest.approx(9 * 8192)


def test_the_decode_bound_at_batch_one_is_never_slower_than_with_the_whole_table():
    h200 = hardware.get("H200")
    for name in ("llama-3-70b", "llama-3.1-8b", "gpt-oss-120b", "gemma-3-27b"):
        kw = dict(batch=1, len_ctx=1024, weight_dtype="fp8")
        now = roofline.decode_bound(models.get(name), h200 if name != "gpt-oss-120b" else "B200", **kw)
        old = roofline.decode_bound(models.get(name), h200 if name != "gpt-oss-120b" else "B200",
                                    embedding_rows=False, **kw)
        assert now["t"] <= old["t"]
        assert old["params_read"] - now["params_read"] == (0 if models.get(name).tied_embeddings
                                                           else (models.get(name).vocab_size - 1)
                                                           * models.get(name).d_model)


# --- 3. Mixed precision ---------------------------------------------------------------------------

def test_mixed_prefill_is_t_prefill_when_every_share_runs_at_one_peak():
    one_peak = roofline.T_PREFILL_MIXED.rhs.subs({FLOPs_expert: FLOPs, FLOPs_attn: FLOPs})
    assert formula.same(one_peak, roofline.T_PREFILL.rhs)


def test_prefill_defaults_reproduce_the_single_format_bound_by_hand():
    """DeepSeek-V3 on one HGX H800, 2,000-token prompts, FP8 everywhere: the pre-issue-21 form."""
    m, d = models.get("deepseek-v3"), hardware.get_system("HGX H800")
    f8 = 8 * 1978.9e12
    attn = roofline.attention_flops(m, 1000)
    by_hand = 2000 * (2 * m.params_active + attn) / f8
    assert roofline.prefill_bound(m, d, len_in=2000)["t_prefill"] == pytest.approx(by_hand, rel=1e-12)


def test_mla_prefill_attention_in_bf16_costs_its_share_twice():
    """DeepSeek: 'core MLA computations ... use the BF16 format' while the GEMMs are FP8 (day 6 overview)."""
    m, d = models.get("deepseek-v3"), hardware.get_system("HGX H800")
    f8, f16 = 8 * 1978.9e12, 8 * 989.4e12
    attn = roofline.attention_flops(m, 2000 * (1 + 0.5) / 2)
    by_hand = 2000 * 0.5 * (2 * m.params_active / f8 + attn / f16)
    got = roofline.prefill_bound(m, d, len_in=2000, hit_rate=0.5, attention_dtype="bf16")["t_prefill"]
    assert got == pytest.approx(by_hand, rel=1e-12)
    assert got > roofline.prefill_bound(m, d, len_in=2000, hit_rate=0.5)["t_prefill"]


def test_fp4_experts_fp8_elsewhere_bf16_attention_on_gb200():
    m, rack = models.get("deepseek-v3"), hardware.get_system("GB200 NVL72")
    routed = m.n_moe_layers * m.experts_per_token * m.expert_params()
    attn = roofline.attention_flops(m, 1000)
    by_hand = 2000 * (2 * (m.params_active - routed) / rack.flops["fp8"] + 2 * routed / rack.flops["fp4"]
                      + attn / rack.flops["bf16"])
    got = roofline.prefill_bound(m, rack, len_in=2000, expert_compute_dtype="fp4", attention_dtype="bf16")
    assert got["t_prefill"] == pytest.approx(by_hand, rel=1e-12)


def test_batch_that_fits_counts_fp4_experts_in_capacity():
    """NVFP4 experts (4.5 bits) and FP8 elsewhere on a GB200 NVL72: the weights take 0.66x the all-FP8 bytes."""
    m, rack = models.get("deepseek-v3"), hardware.get_system("GB200 NVL72")
    nvfp4 = 0.5 + 1 / 16
    routed = m.params_breakdown()["experts_routed"]
    weights = (m.params_total - routed) * 1 + routed * nvfp4
    per_token = m.kv_bytes_per_token("fp8")
    by_hand = (rack.hbm_capacity - weights) / (2000 * per_token)
    got = roofline.batch_that_fits(m, rack, len_ctx=2000, weight_bytes="fp8", expert_weight_bytes=nvfp4, kv_dtype="fp8")
    assert got == pytest.approx(by_hand, rel=1e-12)
    assert got > roofline.batch_that_fits(m, rack, len_ctx=2000, weight_bytes="fp8", kv_dtype="fp8")


# --- 4. Layouts -----------------------------------------------------------------------------------------

def test_kv_replication_hand_counts():
    """MLA has one latent 'KV head': TP 8 copies it 8 times (lmsys.org/blog/2024-12-04-sglang-v0-4);
    8 GQA heads over 8 devices are not copied, over 16 each is held twice."""
    assert roofline.KV_REPLICATION(n_tp=8, kv_heads=1) == 8
    assert roofline.KV_REPLICATION(n_tp=8, kv_heads=8) == 1
    assert roofline.KV_REPLICATION(n_tp=16, kv_heads=8) == 2
    assert roofline.KV_REPLICATION(n_tp=1, kv_heads=1) == 1


def test_layout_capacity_formula_is_the_pooled_one_when_everything_is_split_n_ways():
    pooled_share = {n_tp: n, n_ep: n, n_chips: n, r_kv: 1, n_redundant: 0, bytes_expert: bytes_param,
                    hbm_capacity: hbm_capacity / n, N_dense: N_total - L_moe * n_experts * N_expert}
    assert formula.same(roofline.BATCH_THAT_FITS_PER_DEVICE.rhs.subs(pooled_share), roofline.BATCH_THAT_FITS.rhs)


def test_layout_read_formula_is_the_pooled_one_when_everything_is_split_n_ways():
    pooled_share = {n_tp: n, n_ep: n, n_chips: n, bytes_expert: bytes_param, mem_bw: mem_bw / n}
    pooled = roofline.T_WEIGHTS_READ.rhs.subs(N_fixed, roofline.FIXED_READ.rhs)
    touched = roofline.EXPECTED_EXPERTS.lhs
    per_device = roofline.T_WEIGHTS_PER_DEVICE.rhs.subs(pooled_share).subs(touched, roofline.EXPECTED_EXPERTS.rhs)
    assert formula.same(per_device, pooled)


@pytest.mark.parametrize("name", ["llama-3.1-8b", "deepseek-v3", "gpt-oss-120b", "gemma-3-27b"])
def test_tp_on_one_chip_is_todays_single_chip_bound(name):
    m = models.get(name)
    kw = dict(batch=64, len_ctx=2048, weight_dtype="fp8", compute_dtype="fp8")
    for chip in ("B200", hardware.get("B200"), collectives.deployment(hardware.get("B200"), n_chips=1)):
        one = roofline.decode_bound(m, chip, layout="tp", **kw)
        pooled = roofline.decode_bound(m, "B200", **kw)
        for key in ("t", "t_compute", "t_weights", "t_kv", "tokens_per_s", "params_read"):
            assert one[key] == pytest.approx(pooled[key], rel=1e-12)
    if m.params_total < 180e9:
        assert roofline.batch_that_fits(m, "B200", len_ctx=2048, weight_bytes=1, layout="dp_ep") == pytest.approx(
            roofline.batch_that_fits(m, "B200", len_ctx=2048, weight_bytes=1), rel=1e-12)


def test_tp_equals_the_pooled_bound_when_there_are_enough_kv_heads():
    """Llama 3.1 405B has 8 KV heads: TP 8 on an HGX H200 splits the KV evenly, as the pooled bound assumes."""
    m, node = models.get("llama-3-405b"), hardware.get_system("HGX H200")
    kw = dict(batch=128, len_ctx=4096, weight_dtype="fp8", kv_dtype="fp8")
    assert roofline.decode_bound(m, node, layout="tp", **kw)["t"] == pytest.approx(
        roofline.decode_bound(m, node, **kw)["t"], rel=1e-12)


def test_mla_under_tp_copies_the_kv_cache_to_every_device():
    m, node = models.get("deepseek-v3"), hardware.get_system("HGX H200")
    kw = dict(batch=64, len_ctx=4096, weight_dtype="fp8")
    tp = roofline.decode_bound(m, node, layout="tp", **kw)
    pooled = roofline.decode_bound(m, node, **kw)
    assert tp["t_kv"] == pytest.approx(8 * pooled["t_kv"])
    assert tp["kv_per_device"] == pytest.approx(8 * pooled["kv_per_device"])


def test_deepseek_decode_weights_per_gpu_by_hand():
    """EP144 with 32 redundant experts: 'each GPU manages 2 routed experts and 1 shared expert' per layer,
    and a full copy of attention, the 3 dense layers, router, norms, embedding and head (MLA DP144)."""
    m, unit = models.get("deepseek-v3"), _deepseek_decode_unit()
    parts = m.params_breakdown()
    replicated = sum(v for k, v in parts.items() if k != "experts_routed")
    by_hand = replicated * 1 + 58 * 2 * 3 * 7168 * 2048 * 1          # FP8: 1 byte per weight
    held = roofline.device_memory(m, unit, layout=DEEPSEEK_DECODE, weight_dtype="fp8")
    assert held["weights"] == pytest.approx(by_hand)
    attention_dense_shared = parts["attention"] + parts["dense_mlp"] + parts["experts_shared"]
    assert attention_dense_shared / 1e9 == pytest.approx(15.1, abs=0.1)     # the "~15 GB/GPU"
    assert held["weights"] / 1e9 == pytest.approx(22.2, abs=0.1)
    pooled = roofline.device_memory(m, unit, weight_dtype="fp8")
    assert pooled["weights"] == pytest.approx(m.params_total / 144)


def test_deepseek_decode_bound_with_dp_attention_is_about_a_fifth_lower():
    """The pooled bound leaves out each GPU's copy of the dense weights; with it the bound drops ~20%."""
    m, unit = models.get("deepseek-v3"), _deepseek_decode_unit()
    kw = dict(len_ctx=4096, weight_dtype="fp8", kv_dtype="bf16")
    fits = {lay: roofline.batch_that_fits(m, unit, len_ctx=4096, weight_bytes="fp8", layout=lay)
            for lay in (None, DEEPSEEK_DECODE)}
    pooled = roofline.decode_bound(m, unit, batch=fits[None], **kw)
    dp = roofline.decode_bound(m, unit, batch=fits[DEEPSEEK_DECODE], layout=DEEPSEEK_DECODE, **kw)
    drop = 1 - dp["tokens_per_s"] / pooled["tokens_per_s"]
    assert 0.15 < drop < 0.3
    h800 = hardware.get("H800")
    per_token = m.kv_bytes_per_token("bf16")
    free = h800.hbm_capacity - dp["weights_per_device"]
    assert fits[DEEPSEEK_DECODE] == pytest.approx(144 * free / (4096 * per_token))
    assert dp["fits"] and dp["kv_per_device"] == pytest.approx(free)
    # by hand: every GPU reads its whole dense copy, the embedding rows of its own sequences and, at this batch,
    # both of its experts in each MoE layer; then its own sequences' KV
    parts = m.params_breakdown()
    body = sum(v for k, v in parts.items() if k not in ("experts_routed", "embedding"))
    batch = fits[DEEPSEEK_DECODE]
    touched = roofline.expected_experts(n_experts=256, k=8, tokens=batch)
    read = body + min(batch, m.vocab_size) * 7168 / 144 + 58 * touched * m.expert_params() / 144
    step = max(dp["t_compute"], read / 3.35e12 + free / 3.35e12)
    assert dp["t"] == pytest.approx(step)


def test_decode_step_accepts_one_gpu_shard_and_matches_the_layout_bound():
    """Under DP attention + EP a GPU holds fewer weights than one token multiplies through."""
    m, unit = models.get("deepseek-v3"), _deepseek_decode_unit()
    out = roofline.decode_bound(m, unit, batch=144 * 100, len_ctx=0, weight_dtype="fp8", layout=DEEPSEEK_DECODE,
                                attention=False, expected_experts_read=False)
    shard = roofline.decode_step(batch=100, n_active=m.params_active, n_total=out["t_weights"] * 3.35e12,
                                 flops=1978.9e12, mem_bw=3.35e12, bytes_param=1, len_ctx=0, bytes_tok=0, shard=True)
    assert m.params_active > out["t_weights"] * 3.35e12
    assert shard["t"] == pytest.approx(out["t"]) and shard["t_compute"] == pytest.approx(out["t_compute"])
    with pytest.raises(ValueError, match="shard=True"):
        roofline.decode_step(batch=100, n_active=m.params_active, n_total=20e9, flops=1978.9e12, mem_bw=3.35e12,
                             bytes_param=1, len_ctx=0, bytes_tok=0)


def test_a_dense_model_replicated_on_every_gpu_must_fit_on_one():
    with pytest.raises(ValueError, match="do not fit"):
        roofline.batch_that_fits("llama-3-405b", hardware.get_system("HGX H200"), len_ctx=1024, weight_bytes=1,
                                 layout="dp_ep")
    held = roofline.device_memory("llama-3-405b", hardware.get_system("HGX H200"), layout="dp_ep", weight_dtype=1)
    assert not held["fits"] and held["free"] == 0


def test_attention_groups_between_tp_and_dp():
    """DP 4 x TP 2 attention on 8 GPUs: the dense weights split 2 ways, MLA's KV copied twice."""
    m, node = models.get("deepseek-v3"), hardware.get_system("HGX H200")
    parts = m.params_breakdown()
    held = roofline.device_memory(m, node, layout=roofline.Layout(attention_tp=2), batch=64, len_ctx=1000)
    dense = m.params_total - parts["experts_routed"]
    assert held["weights"] == pytest.approx(dense / 2 + parts["experts_routed"] / 8)
    assert held["r_kv"] == 2 and held["kv"] == pytest.approx(64 * 1000 * m.kv_bytes_per_token("bf16") * 2 / 8)
    assert roofline.Layout(attention_tp=2).name == "dp_tp2_ep"


def test_prefill_layout_changes_what_a_gpu_holds_not_the_compute():
    m, unit = models.get("deepseek-v3"), collectives.deployment(hardware.get_system("HGX H800"), n_systems=4)
    dp = roofline.prefill_bound(m, unit, len_in=2000, layout=roofline.Layout(attention_tp=1, redundant_experts=32))
    pooled = roofline.prefill_bound(m, unit, len_in=2000)
    assert dp["t_prefill"] == pooled["t_prefill"]
    # prefill EP32: 'each GPU handles 9 routed experts and 1 shared expert' per layer
    dense = m.params_total - m.params_breakdown()["experts_routed"]
    assert dp["weights_per_device"] == pytest.approx(dense + 58 * 9 * m.expert_params())


@pytest.mark.parametrize("bad, match", [
    (dict(layout="pp"), "layout"), (dict(layout=3), "layout"),
    (dict(layout=roofline.Layout(attention_tp=3)), "attention_tp"),
    (dict(embedding_rows="yes"), "embedding_rows"),
])
def test_decode_bound_refuses_bad_layouts_by_name(bad, match):
    with pytest.raises(ValueError, match=match):
        roofline.decode_bound("deepseek-v3", hardware.get_system("HGX H200"), batch=8, len_ctx=100, **bad)


@pytest.mark.parametrize("kwargs, match", [
    (dict(attention_tp=0), "attention_tp"), (dict(attention_tp=2.5), "attention_tp"),
    (dict(redundant_experts=-1), "redundant_experts"), (dict(attention_tp=True), "attention_tp"),
])
def test_layout_refuses_bad_fields(kwargs, match):
    with pytest.raises(ValueError, match=match):
        roofline.Layout(**kwargs)


def test_prefill_and_capacity_refuse_bad_formats_by_name():
    with pytest.raises(ValueError, match="attention_dtype"):
        roofline.prefill_bound("deepseek-v3", "H800", len_in=100, attention_dtype="fp4")
    with pytest.raises(ValueError, match="expert_weight_bytes"):
        roofline.batch_that_fits("llama-3.1-8b", "H100", len_ctx=100, weight_bytes=2, expert_weight_bytes=-1)
    assert math.isfinite(roofline.batch_that_fits("llama-3.1-8b", "H100", len_ctx=100, weight_bytes=2))
