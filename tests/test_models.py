"""Tests for lecture_lib.models: parameter counts, KV bytes, presets and input checks.

Published figures come from each preset's ``source`` (model card, paper or Hub count). The
tolerance is 2 %, because publishers round ("8B", "37B") and leave small tensors out.
"""

import dataclasses
import math
import re

import pytest
from hypothesis import given, settings, strategies as st

from lecture_lib import models
from lecture_lib.models import Model

TOLERANCE = 0.02


def within(ours, published, tol=TOLERANCE):
    return abs(ours / published - 1) <= tol


# --------------------------------------------------------------------------- independent reference

def matrices(*, n_layers, d_model, d_ff, n_heads, n_kv_heads, d_head, vocab_size,
             gated_mlp=True, tied_embeddings=False):
    """Every weight tensor of a dense decoder, by name and shape, written out one by one."""
    shapes = {"embed_tokens": (vocab_size, d_model), "final_norm": (d_model,)}
    if not tied_embeddings:
        shapes["lm_head"] = (d_model, vocab_size)
    for i in range(n_layers):
        p = f"layers.{i}."
        shapes[p + "attn_norm"] = (d_model,)
        shapes[p + "q_proj"] = (d_model, n_heads * d_head)
        shapes[p + "k_proj"] = (d_model, n_kv_heads * d_head)
        shapes[p + "v_proj"] = (d_model, n_kv_heads * d_head)
        shapes[p + "o_proj"] = (n_heads * d_head, d_model)
        shapes[p + "mlp_norm"] = (d_model,)
        shapes[p + "up_proj"] = (d_model, d_ff)
        shapes[p + "down_proj"] = (d_ff, d_model)
        if gated_mlp:
            shapes[p + "gate_proj"] = (d_model, d_ff)
    return shapes


def count(shapes):
    return sum(math.prod(shape) for shape in shapes.values())


TINY = dict(n_layers=2, d_model=16, d_ff=40, n_heads=4, n_kv_heads=4, d_head=4, vocab_size=50)


def test_tiny_mha_matches_explicit_matrices():
    m = Model(name="tiny", **TINY)
    assert m.attention_kind == "MHA"
    assert m.params_total == count(matrices(**TINY))
    # by hand: L·(3·D·F + 4·D·N·H + 2·D) + 2·D·V + D (final norm)
    assert m.params_total == 2 * (3 * 16 * 40 + 4 * 16 * 4 * 4 + 2 * 16) + 2 * 16 * 50 + 16 == 7568


def test_tiny_dense_active_leaves_out_only_the_embedding_lookup():
    m = Model(name="tiny", **TINY)
    assert m.params_active == m.params_total - TINY["vocab_size"] * TINY["d_model"]
    assert m.params_active_with_embedding == m.params_total


@pytest.mark.parametrize("gated_mlp", [True, False])
@pytest.mark.parametrize("tied_embeddings", [True, False])
@pytest.mark.parametrize("n_kv_heads", [4, 2, 1])
def test_variants_match_explicit_matrices(gated_mlp, tied_embeddings, n_kv_heads):
    shape = dict(TINY, n_kv_heads=n_kv_heads)
    m = Model(name="tiny", gated_mlp=gated_mlp, tied_embeddings=tied_embeddings, **shape)
    assert m.params_total == count(matrices(gated_mlp=gated_mlp,
                                            tied_embeddings=tied_embeddings, **shape))


def test_non_gated_mlp_drops_one_matrix_per_layer():
    gated = Model(name="tiny", **TINY)
    plain = Model(name="tiny", gated_mlp=False, **TINY)
    assert gated.params_total - plain.params_total == 2 * 16 * 40       # L · D · F
    assert gated.params_active - plain.params_active == 2 * 16 * 40


def test_tied_embeddings_drop_the_output_head_from_total_only():
    untied = Model(name="tiny", **TINY)
    tied = Model(name="tiny", tied_embeddings=True, **TINY)
    assert untied.params_total - tied.params_total == 50 * 16           # V · D
    assert tied.params_active == untied.params_active                   # the head still multiplies
    assert tied.params_active == tied.params_total                      # so a tied dense model is
    assert tied.sparsity == 1.0                                         # fully "active"


def test_scaling_book_formula_for_dense_mha():
    # Scaling book Ch. 4: L(3DF + 4DNH + 2D) + 2DV, plus our final norm D.
    L, D, F, N, H, V = 12, 768, 3072, 12, 64, 50257
    m = Model(name="gpt2-ish", n_layers=L, d_model=D, d_ff=F, n_heads=N, n_kv_heads=N,
              d_head=H, vocab_size=V)
    assert m.params_total == L * (3 * D * F + 4 * D * N * H + 2 * D) + 2 * D * V + D


def test_tiny_moe_counts_all_experts_in_total_and_top_k_in_active():
    m = Model(name="tiny-moe", **TINY, n_routed_experts=8, n_shared_experts=1,
              experts_per_token=2, d_ff_expert=8, n_dense_layers=1)
    one_expert = 3 * 16 * 8
    dense_layer_mlp = 3 * 16 * 40
    parts = m.params_breakdown()
    assert m.n_moe_layers == 1
    assert parts["dense_mlp"] == dense_layer_mlp
    assert parts["experts_routed"] == 8 * one_expert
    assert parts["experts_shared"] == one_expert
    assert parts["router"] == 16 * 8
    assert m.active_breakdown()["experts_routed"] == 2 * one_expert
    assert m.params_total - m.params_active == 6 * one_expert + 50 * 16   # idle experts + lookup
    assert m.is_moe and m.sparsity > 1


def test_mla_attention_by_hand():
    # DeepSeek-V3, per layer (DeepSeek-V2 section 2.1 layout)
    q = 7168 * 1536 + 1536 * 128 * (128 + 64)
    kv_down = 7168 * (512 + 64)
    kv_up = 512 * 128 * (128 + 128)
    out = 128 * 128 * 7168
    assert models.get("deepseek-v3").attention_params_per_layer() == q + kv_down + kv_up + out


def test_breakdowns_sum_to_the_totals():
    for name in models.names():
        m = models.get(name)
        assert sum(m.params_breakdown().values()) == m.params_total
        assert sum(m.active_breakdown().values()) == m.params_active
        assert set(m.params_breakdown()) == {"embedding", "unembedding", "attention",
                                             "dense_mlp", "experts_routed", "experts_shared",
                                             "router", "norms"}


# --------------------------------------------------------------------------- published figures

@pytest.mark.parametrize("name", models.names())
def test_total_within_2_percent_of_published(name):
    m = models.get(name)
    assert within(m.params_total, m.published_params_total), m.vs_published()


@pytest.mark.parametrize("name", models.names())
def test_active_within_2_percent_of_published(name):
    """Compared under the publisher's own convention on the input embedding (module docstring)."""
    m = models.get(name)
    ours = (m.params_active_with_embedding if m.published_active_includes_embedding
            else m.params_active)
    assert within(ours, m.published_params_active), m.vs_published()
    assert abs(m.vs_published()["active"] - 1) <= TOLERANCE


@pytest.mark.parametrize("name", ["deepseek-v3", "gpt-oss-120b", "mixtral-8x22b",
                                  "qwen3-235b-a22b"])
def test_moe_params_active_itself_within_2_percent(name):
    m = models.get(name)
    assert within(m.params_active, m.published_params_active)


def test_deepseek_v3_matches_readme_weights():
    # README_WEIGHTS.md: main model 671B; 36.6B activated, including the 0.9B output head
    m = models.get("deepseek-v3")
    assert within(m.params_total, 671e9, 0.001)
    assert within(m.params_active, 36.6e9, 0.002)
    assert m.n_moe_layers == 58
    assert m.active_breakdown()["experts_routed"] == 58 * 8 * 3 * 7168 * 2048
    assert within(m.params_breakdown()["unembedding"], 0.9e9, 0.05)


def test_deepseek_v3_sparsity_is_about_18_not_the_lectures_8():
    assert 17.5 < models.get("deepseek-v3").sparsity < 19


def test_dense_llama_published_size_counts_the_embedding():
    m = models.get("llama-3.1-8b")
    assert within(m.params_active_with_embedding, 8.03e9, 0.001)
    assert not within(m.params_active, 8.03e9)          # 7.5B: the lookup is 6.5 % of this model


def test_kimi_k2_published_convention_is_recorded():
    m = models.get("kimi-k2")
    assert within(m.params_total, 1.04e12)
    assert within(m.params_active_with_embedding, 32.6e9)
    assert m.published_active_includes_embedding


def test_gemma_3_27b_text_only_vs_headline():
    m = models.get("gemma-3-27b")
    siglip = 417e6                                      # Gemma 3 tech report, Table 1
    assert within(m.params_total + siglip, 27.4e9)      # the headline includes the vision encoder
    assert within(m.params_breakdown()["embedding"], 1_416e6)
    non_embedding = m.params_total - m.params_breakdown()["embedding"]
    assert within(non_embedding, 25_600e6, 0.001)


def test_gpt_oss_embed_plus_unembed_matches_model_card():
    # gpt-oss model card, Table 1: embed + unembed 1.16B
    parts = models.get("gpt-oss-120b").params_breakdown()
    assert within(parts["embedding"] + parts["unembedding"], 1.16e9, 0.005)


def test_mixtral_8x22b_total_and_active():
    m = models.get("mixtral-8x22b")
    assert m.attention_kind == "GQA"
    assert within(m.params_total, 141e9) and within(m.params_active, 39e9)


# --------------------------------------------------------------------------- KV cache

def test_kv_llama_3_1_8b_bf16_golden():
    assert models.get("llama-3.1-8b").kv_bytes_per_token(2) == 131072 == 32 * 2 * 8 * 128 * 2


def test_kv_llama_3_70b_bf16_golden():
    assert models.get("llama-3-70b").kv_bytes_per_token("bf16") == 327680


@pytest.mark.parametrize("bytes_per_value", [1, 2, "fp8", "bf16"])
def test_kv_deepseek_v3_is_the_latent_not_2x_heads(bytes_per_value):
    size = models.BYTES_PER_VALUE.get(bytes_per_value, bytes_per_value)
    m = models.get("deepseek-v3")
    assert m.kv_bytes_per_token(bytes_per_value) == (512 + 64) * 61 * size
    # a GQA-style formula with 128 heads of 128 dims would be 2·128·128 per layer: 57x more
    assert m.kv_values_per_layer() == 576


def test_kv_format_names_are_case_insensitive():
    m = models.get("llama-3.1-8b")
    assert m.kv_bytes_per_token("BF16") == m.kv_bytes_per_token(2)
    assert m.kv_bytes_per_token("fp4") == m.kv_bytes_per_token(2) / 4


def test_kv_sliding_window_gemma_3():
    m = models.get("gemma-3-27b")
    per_layer = 2 * 16 * 128 * 2                        # bf16
    assert m.kv_bytes_per_token(2) == 62 * per_layer    # no context: every layer full
    assert m.kv_bytes_per_token(2, context_len=1024) == 62 * per_layer
    ctx = 128 * 1024
    expected = per_layer * (10 + 52 * 1024 / ctx)
    assert math.isclose(m.kv_bytes_per_token(2, context_len=ctx), expected)


def test_kv_sliding_window_gpt_oss():
    m = models.get("gpt-oss-120b")
    assert m.kv_bytes_per_token(2) == 36 * 2 * 8 * 64 * 2
    ctx = 131072
    assert math.isclose(m.kv_bytes_per_token(2, context_len=ctx),
                        (18 + 18 * 128 / ctx) * 2 * 8 * 64 * 2)


def test_context_len_changes_nothing_without_local_layers():
    m = models.get("llama-3-70b")
    assert m.kv_bytes_per_token(2, context_len=100_000) == m.kv_bytes_per_token(2)


def test_weight_bytes():
    m = models.get("deepseek-v3")
    assert m.weight_bytes("fp8") == m.params_total
    assert m.weight_bytes(2) == 2 * m.params_total


# --------------------------------------------------------------------------- properties

@st.composite
def any_model(draw):
    n_kv_heads = draw(st.sampled_from([1, 2, 4, 8]))
    n_heads = n_kv_heads * draw(st.integers(1, 8))
    n_layers = draw(st.integers(1, 64))
    shape = dict(name="random", n_layers=n_layers, d_model=draw(st.integers(1, 8192)),
                 d_ff=draw(st.integers(1, 32768)), n_heads=n_heads, n_kv_heads=n_kv_heads,
                 d_head=draw(st.sampled_from([32, 64, 128, 256])),
                 vocab_size=draw(st.integers(1, 300_000)),
                 gated_mlp=draw(st.booleans()), tied_embeddings=draw(st.booleans()))
    if draw(st.booleans()):
        experts = draw(st.integers(1, 512))
        shape.update(n_routed_experts=experts, experts_per_token=draw(st.integers(1, experts)),
                     n_shared_experts=draw(st.integers(0, 2)),
                     d_ff_expert=draw(st.integers(1, 4096)),
                     n_dense_layers=draw(st.integers(0, n_layers - 1)))
    if draw(st.booleans()):
        shape.update(kv_lora_rank=draw(st.integers(1, 1024)),
                     q_lora_rank=draw(st.integers(0, 2048)),
                     qk_rope_head_dim=draw(st.integers(1, 128)),
                     qk_nope_head_dim=draw(st.integers(1, 256)),
                     v_head_dim=draw(st.integers(1, 256)))
    if draw(st.booleans()):
        shape.update(sliding_window=draw(st.integers(1, 8192)),
                     n_local_layers=draw(st.integers(1, n_layers)))
    return Model(**shape)


@settings(max_examples=200, deadline=None)
@given(any_model())
def test_active_never_exceeds_total(m):
    assert 0 < m.params_active <= m.params_total
    assert m.params_active <= m.params_active_with_embedding
    assert m.sparsity >= 1


@settings(max_examples=100, deadline=None)
@given(any_model(), st.floats(models.MIN_BYTES_PER_VALUE, 64), st.floats(models.MIN_BYTES_PER_VALUE, 64))
def test_kv_bytes_scale_linearly_with_bytes_per_value(m, a, b):
    assert math.isclose(m.kv_bytes_per_token(a) * b, m.kv_bytes_per_token(b) * a, rel_tol=1e-12)


@settings(max_examples=100, deadline=None)
@given(any_model(), st.integers(1, 10**7))
def test_local_layers_never_increase_kv(m, context_len):
    full = m.kv_bytes_per_token(2)
    assert 0 < m.kv_bytes_per_token(2, context_len=context_len) <= full
    if m.sliding_window and context_len <= m.sliding_window:
        assert math.isclose(m.kv_bytes_per_token(2, context_len=context_len), full)


@given(st.sampled_from([1, 2, 4, 8]), st.integers(1, 16), st.integers(1, 128),
       st.sampled_from([64, 128, 256]), st.sampled_from([1, 2, "fp8"]))
def test_gqa_divides_kv_by_the_group_size(n_kv_heads, group, n_layers, d_head, size):
    n_heads = n_kv_heads * group
    mha = Model(name="mha", n_layers=n_layers, d_model=1024, d_ff=4096, n_heads=n_heads,
                n_kv_heads=n_heads, d_head=d_head, vocab_size=1000)
    gqa = dataclasses.replace(mha, name="gqa", n_kv_heads=n_kv_heads)
    ratio = mha.kv_bytes_per_token(size) / gqa.kv_bytes_per_token(size)
    assert ratio == n_heads / n_kv_heads


# --------------------------------------------------------------------------- kinds and presets

def test_attention_kinds():
    assert models.get("deepseek-v3").attention_kind == "MLA"
    assert models.get("kimi-k2").attention_kind == "MLA"
    assert models.get("llama-3.1-8b").attention_kind == "GQA"
    assert Model(name="t", **TINY).attention_kind == "MHA"
    assert Model(name="t", **dict(TINY, n_kv_heads=1)).attention_kind == "MQA"


def test_required_presets_exist():
    required = {"deepseek-v3", "llama-3-70b", "llama-3-405b", "llama-3.1-8b", "kimi-k2",
                "qwen3-235b-a22b", "gpt-oss-120b", "gemma-3-27b", "mixtral-8x22b"}
    assert required <= set(models.names())
    assert set(models.MODELS) == set(models.names())
    assert all(isinstance(m, Model) for m in models.MODELS.values())


@pytest.mark.parametrize("name", models.names())
def test_every_preset_cites_a_dated_source(name):
    m = models.get(name)
    assert "config" in m.source and re.search(r"\d{4}-\d{2}-\d{2}", m.source)
    assert m.notes and m.published_params_total > 0 and m.published_params_active > 0


@pytest.mark.parametrize("spelling", ["deepseek-v3", "DeepSeek V3", "deepseek_v3",
                                      "DEEPSEEK-V3", " deepseek v3 "])
def test_lookup_ignores_case_spaces_hyphens_underscores(spelling):
    assert models.get(spelling) is models.MODELS["deepseek-v3"]


def test_lookup_dots_and_aliases():
    assert models.get("Llama 3.1 8B") is models.get("llama-3.1-8b")
    assert models.get("llama31_8b") is models.get("llama-3.1-8b")
    assert models.get("Llama-3.1-70B") is models.get("llama-3-70b")
    assert models.get("llama-3.1-405b") is models.get("llama-3-405b")
    assert models.get("gemma-3-27b-it") is models.get("gemma-3-27b")


def test_a_name_that_is_not_a_string_is_a_value_error_naming_the_parameter():
    for bad in (None, 3):
        with pytest.raises(ValueError, match="name must be a string"):
            models.get(bad)


@pytest.mark.parametrize("bad", ["gpt-5", ""])
def test_unknown_name_lists_known_names(bad):
    with pytest.raises(KeyError) as info:
        models.get(bad)
    assert "deepseek-v3" in str(info.value) and "llama-3.1-8b" in str(info.value)


def test_model_is_frozen_and_keyword_only():
    m = Model(name="t", **TINY)
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.n_layers = 3
    with pytest.raises(TypeError):
        Model("t", 2, 16, 40, 4, 4, 4, 50)


# --------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("field, value", [
    ("n_layers", 0), ("n_layers", -1), ("n_layers", 2.0), ("n_layers", True),
    ("d_model", "16"), ("d_head", None), ("vocab_size", 0), ("n_heads", 0),
])
def test_bad_sizes_name_the_field(field, value):
    with pytest.raises(ValueError, match=field) as info:
        Model(name="t", **dict(TINY, **{field: value}))
    assert repr(value) in str(info.value)


@pytest.mark.parametrize("changes, field", [
    (dict(n_kv_heads=3), "n_kv_heads"),                         # 4 heads, 3 KV heads
    (dict(n_kv_heads=8), "n_kv_heads"),                         # more KV heads than heads
    (dict(n_routed_experts=4, experts_per_token=5, d_ff_expert=8), "experts_per_token"),
    (dict(n_routed_experts=4, experts_per_token=0, d_ff_expert=8), "experts_per_token"),
    (dict(n_routed_experts=4, experts_per_token=2), "d_ff_expert"),
    (dict(experts_per_token=2, d_ff_expert=8), "n_routed_experts"),
    (dict(n_routed_experts=4, experts_per_token=2, d_ff_expert=8, n_dense_layers=2),
     "n_dense_layers"),
    (dict(n_dense_layers=1), "n_dense_layers"),
    (dict(d_ff=0), "d_ff"),
    (dict(q_lora_rank=64), "q_lora_rank"),
    (dict(kv_lora_rank=64, qk_rope_head_dim=16, qk_nope_head_dim=16), "v_head_dim"),
    (dict(sliding_window=128), "n_local_layers"),
    (dict(sliding_window=128, n_local_layers=3), "n_local_layers"),
    (dict(n_local_layers=1), "sliding_window"),
    (dict(gated_mlp=1), "gated_mlp"),
    (dict(published_params_total=-1), "published_params_total"),
    (dict(published_params_active=float("nan")), "published_params_active"),
    (dict(name=""), "name"),
])
def test_inconsistent_models_are_refused(changes, field):
    with pytest.raises(ValueError, match=field):
        Model(**dict(dict(TINY, name="t"), **changes))


def test_all_moe_model_may_leave_d_ff_zero():
    m = Model(name="t", **dict(TINY, d_ff=0), n_routed_experts=4, experts_per_token=1,
              d_ff_expert=8)
    assert m.params_breakdown()["dense_mlp"] == 0


@pytest.mark.parametrize("bad", [-1, 0, float("nan"), float("inf"), "abc", True, None, [2]])
def test_kv_bytes_per_value_is_checked(bad):
    with pytest.raises(ValueError, match="bytes_per_value"):
        models.get("llama-3.1-8b").kv_bytes_per_token(bad)


@pytest.mark.parametrize("bad", [0, -5, 1.5, True, "8k"])
def test_context_len_is_checked(bad):
    for name in ("gemma-3-27b", "llama-3.1-8b"):
        with pytest.raises(ValueError, match="context_len"):
            models.get(name).kv_bytes_per_token(2, context_len=bad)


@pytest.mark.parametrize("bad", [-1, 0, float("nan"), "abc"])
def test_weight_bytes_per_param_is_checked(bad):
    with pytest.raises(ValueError, match="bytes_per_param"):
        models.get("llama-3.1-8b").weight_bytes(bad)


# ------------------------------------------------------------------ Chapter 6: KV sharing, sparse attention

def test_new_fields_default_to_no_change():
    for name in models.names():
        m = models.get(name)
        assert m.kv_share_group == 1 and m.attention_topk == 0
        assert m.n_kv_layers == m.n_layers
        assert m.kv_bytes_read_per_token(1, context_len=100_000) == m.kv_bytes_per_token(1, context_len=100_000)


def test_cross_layer_sharing_counts_one_cache_per_group():
    llama = models.get("llama-3-70b")
    for group, unique in ((2, 40), (3, 27), (80, 1)):
        shared = dataclasses.replace(llama, kv_share_group=group)
        assert shared.n_kv_layers == unique
        assert shared.kv_bytes_per_token(1) == unique * 2 * 8 * 128
        assert shared.params_total == llama.params_total      # sharing saves cache, not weights


def test_sharing_applies_to_local_and_global_layers_separately():
    gemma = dataclasses.replace(models.get("gemma-3-27b"), kv_share_group=2)   # 52 local + 10 global
    assert (gemma.n_kv_local_layers, gemma.n_kv_global_layers) == (26, 5)
    assert gemma.kv_bytes_per_token(2, context_len=10_240) == pytest.approx(
        (5 + 26 * 1024 / 10_240) * 2 * 16 * 128 * 2)


def test_sparse_attention_reads_top_k_but_stores_everything():
    dsa = dataclasses.replace(models.get("deepseek-v3"), attention_topk=2048)
    assert dsa.kv_bytes_per_token(1, context_len=128_000) == 61 * 576
    assert dsa.kv_bytes_read_per_token(1, context_len=128_000) == pytest.approx(61 * 576 * 2048 / 128_000)
    assert dsa.kv_bytes_read_per_token(1, context_len=1000) == 61 * 576      # shorter than k: reads all


def test_attention_flops_hand_count_llama_3_70b():
    # 80 layers x 64 query heads x (128 + 128) x 2 FLOPs x 8,192 earlier tokens
    assert models.get("llama-3-70b").attention_flops_per_token(8192) == 80 * 64 * 256 * 2 * 8192


def test_attention_flops_mla_uses_192_and_128():
    assert models.get("deepseek-v3").attention_flops_per_token(1000) == 61 * 128 * (192 + 128) * 2 * 1000


@pytest.mark.parametrize("field, value", [("kv_share_group", 0), ("kv_share_group", 81), ("kv_share_group", 1.5),
                                          ("attention_topk", -1), ("attention_topk", True)])
def test_new_fields_are_validated(field, value):
    with pytest.raises(ValueError, match=field):
        dataclasses.replace(models.get("llama-3-70b"), **{field: value})


def test_sparse_attention_on_a_sliding_window_model_reads_top_k_in_every_layer_once():
    """Gemma 3 27B with a hypothetical top-512: every layer (local window 1024 > 512, or global)
    reads 512 tokens, so per token of a 100K context: 62 layers x 2 x 16 x 128 values x 2 bytes
    x 512 / 100,000 = 2,600.5 B (hand count; the window must not shrink the local layers twice)."""
    import dataclasses

    sparse = dataclasses.replace(models.get("gemma-3-27b"), name="gemma-sparse", attention_topk=512)
    assert sparse.kv_bytes_read_per_token(2, context_len=100_000) == pytest.approx(62 * 2 * 16 * 128 * 2 * 512 / 100_000)


def test_the_library_reference_lists_every_preset():
    """docs/library.md names the presets a planner user can type; an engineer found three missing (2026-12-02)."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "library.md").read_text()
    start = text.index('m = models.get("deepseek-v3")')
    listed = text[start:text.index("models.names() lists them", start)]
    missing = [name for name in models.names() if name not in listed]
    assert not missing, f"docs/library.md's preset list leaves out {missing}"
