"""hf_config.from_hf_config: published config.json files in, the course's counts out.

Each CONFIGS entry holds the fields of a published ``config.json`` that bear on the counts, typed
from the file on the Hugging Face Hub named in the key (huggingface.co/<key>/blob/main/config.json);
fields that play no part (token ids, rope scaling, dropout...) are left out, which also tests that
the reader needs nothing else. Gemma 3's file nests the text model under ``text_config``.
"""

import json
import os
import re

import pytest

from lecture_lib import hf_config, models

CONFIGS = {
    # ---- the course's presets (their shapes were typed from these same files)
    "meta-llama/Llama-3.1-8B": {
        "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
        "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
        "vocab_size": 128256, "tie_word_embeddings": False, "attention_bias": False,
        "mlp_bias": False, "head_dim": 128, "hidden_act": "silu"},
    "meta-llama/Meta-Llama-3-70B": {
        "model_type": "llama", "hidden_size": 8192, "intermediate_size": 28672,
        "num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8,
        "vocab_size": 128256, "tie_word_embeddings": False},
    "meta-llama/Llama-3.1-405B": {
        "model_type": "llama", "hidden_size": 16384, "intermediate_size": 53248,
        "num_hidden_layers": 126, "num_attention_heads": 128, "num_key_value_heads": 8,
        "vocab_size": 128256, "tie_word_embeddings": False},
    "deepseek-ai/DeepSeek-V3": {
        "model_type": "deepseek_v3", "hidden_size": 7168, "intermediate_size": 18432,
        "moe_intermediate_size": 2048, "num_hidden_layers": 61, "num_attention_heads": 128,
        "num_key_value_heads": 128, "n_routed_experts": 256, "n_shared_experts": 1,
        "num_experts_per_tok": 8, "first_k_dense_replace": 3, "moe_layer_freq": 1,
        "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64,
        "qk_nope_head_dim": 128, "v_head_dim": 128, "vocab_size": 129280,
        "tie_word_embeddings": False, "num_nextn_predict_layers": 1},
    "moonshotai/Kimi-K2-Instruct": {
        "model_type": "kimi_k2", "hidden_size": 7168, "intermediate_size": 18432,
        "moe_intermediate_size": 2048, "num_hidden_layers": 61, "num_attention_heads": 64,
        "num_key_value_heads": 64, "n_routed_experts": 384, "n_shared_experts": 1,
        "num_experts_per_tok": 8, "first_k_dense_replace": 1, "moe_layer_freq": 1,
        "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64,
        "qk_nope_head_dim": 128, "v_head_dim": 128, "vocab_size": 163840,
        "tie_word_embeddings": False},
    "Qwen/Qwen3-235B-A22B": {
        "model_type": "qwen3_moe", "hidden_size": 4096, "intermediate_size": 12288,
        "moe_intermediate_size": 1536, "num_hidden_layers": 94, "num_attention_heads": 64,
        "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128, "num_experts_per_tok": 8,
        "decoder_sparse_step": 1, "mlp_only_layers": [], "vocab_size": 151936,
        "tie_word_embeddings": False, "attention_bias": False, "use_sliding_window": False,
        "sliding_window": None},
    "openai/gpt-oss-120b": {
        "model_type": "gpt_oss", "hidden_size": 2880, "intermediate_size": 2880,
        "num_hidden_layers": 36, "num_attention_heads": 64, "num_key_value_heads": 8,
        "head_dim": 64, "num_local_experts": 128, "num_experts_per_tok": 4,
        "sliding_window": 128, "vocab_size": 201088, "tie_word_embeddings": False,
        "attention_bias": True,
        "layer_types": ["sliding_attention", "full_attention"] * 18},
    "google/gemma-3-27b-it": {
        "model_type": "gemma3",
        "text_config": {"model_type": "gemma3_text", "hidden_size": 5376,
                        "intermediate_size": 21504, "num_hidden_layers": 62,
                        "num_attention_heads": 32, "num_key_value_heads": 16, "head_dim": 128,
                        "sliding_window": 1024, "query_pre_attn_scalar": 168},
        "vision_config": {"hidden_size": 1152, "num_hidden_layers": 27}},
    "mistral-community/Mixtral-8x22B-v0.1": {
        "model_type": "mixtral", "hidden_size": 6144, "intermediate_size": 16384,
        "num_hidden_layers": 56, "num_attention_heads": 48, "num_key_value_heads": 8,
        "num_local_experts": 8, "num_experts_per_tok": 2, "vocab_size": 32000,
        "tie_word_embeddings": False, "sliding_window": None},
    # ---- other families, checked against their publishers' parameter counts
    "mistralai/Mistral-7B-v0.1": {
        "model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336,
        "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
        "sliding_window": 4096, "vocab_size": 32000, "tie_word_embeddings": False},
    "mistralai/Mixtral-8x7B-v0.1": {
        "model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336,
        "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
        "num_local_experts": 8, "num_experts_per_tok": 2, "vocab_size": 32000,
        "tie_word_embeddings": False, "sliding_window": None},
    "meta-llama/Llama-2-7b-hf": {
        "model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,
        "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
        "vocab_size": 32000, "tie_word_embeddings": False},
    "Qwen/Qwen3-8B": {
        "model_type": "qwen3", "hidden_size": 4096, "intermediate_size": 12288,
        "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8,
        "head_dim": 128, "vocab_size": 151936, "tie_word_embeddings": False,
        "attention_bias": False, "use_sliding_window": False},
    "Qwen/Qwen1.5-MoE-A2.7B": {
        "model_type": "qwen2_moe", "hidden_size": 2048, "intermediate_size": 5632,
        "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632,
        "num_hidden_layers": 24, "num_attention_heads": 16, "num_key_value_heads": 16,
        "num_experts": 60, "num_experts_per_tok": 4, "decoder_sparse_step": 1,
        "vocab_size": 151936, "tie_word_embeddings": False, "use_sliding_window": False},
    "deepseek-ai/DeepSeek-V2": {
        "model_type": "deepseek_v2", "hidden_size": 5120, "intermediate_size": 12288,
        "moe_intermediate_size": 1536, "num_hidden_layers": 60, "num_attention_heads": 128,
        "num_key_value_heads": 128, "n_routed_experts": 160, "n_shared_experts": 2,
        "num_experts_per_tok": 6, "first_k_dense_replace": 1, "moe_layer_freq": 1,
        "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64,
        "qk_nope_head_dim": 128, "v_head_dim": 128, "vocab_size": 102400,
        "tie_word_embeddings": False},
    "openai/gpt-oss-20b": {
        "model_type": "gpt_oss", "hidden_size": 2880, "intermediate_size": 2880,
        "num_hidden_layers": 24, "num_attention_heads": 64, "num_key_value_heads": 8,
        "head_dim": 64, "num_local_experts": 32, "num_experts_per_tok": 4,
        "sliding_window": 128, "vocab_size": 201088, "tie_word_embeddings": False,
        "attention_bias": True,
        "layer_types": ["sliding_attention", "full_attention"] * 12},
    "google/gemma-2-9b": {
        "model_type": "gemma2", "hidden_size": 3584, "intermediate_size": 14336,
        "num_hidden_layers": 42, "num_attention_heads": 16, "num_key_value_heads": 8,
        "head_dim": 256, "sliding_window": 4096, "vocab_size": 256000},
    # ---- families added by issue 30 (each typed from huggingface.co/<key>/blob/main/config.json)
    # https://huggingface.co/microsoft/Phi-3-mini-4k-instruct/blob/main/config.json
    "microsoft/Phi-3-mini-4k-instruct": {
        "model_type": "phi3", "hidden_size": 3072, "intermediate_size": 8192,
        "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
        "sliding_window": 2047, "vocab_size": 32064, "tie_word_embeddings": False,
        "torch_dtype": "bfloat16"},
    # https://huggingface.co/microsoft/Phi-3-medium-4k-instruct/blob/main/config.json
    "microsoft/Phi-3-medium-4k-instruct": {
        "model_type": "phi3", "hidden_size": 5120, "intermediate_size": 17920,
        "num_hidden_layers": 40, "num_attention_heads": 40, "num_key_value_heads": 10,
        "sliding_window": 2047, "vocab_size": 32064, "tie_word_embeddings": False,
        "torch_dtype": "bfloat16"},
    # https://huggingface.co/microsoft/phi-4/blob/main/config.json
    "microsoft/phi-4": {
        "model_type": "phi3", "hidden_size": 5120, "intermediate_size": 17920,
        "num_hidden_layers": 40, "num_attention_heads": 40, "num_key_value_heads": 10,
        "sliding_window": 16384, "vocab_size": 100352, "tie_word_embeddings": False,
        "attention_bias": False, "torch_dtype": "bfloat16"},
    # https://huggingface.co/allenai/OLMo-2-1124-7B/blob/main/config.json
    "allenai/OLMo-2-1124-7B": {
        "model_type": "olmo2", "hidden_size": 4096, "intermediate_size": 11008,
        "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
        "vocab_size": 100352, "tie_word_embeddings": False, "attention_bias": False},
    # https://huggingface.co/allenai/OLMo-2-0325-32B/blob/main/config.json
    "allenai/OLMo-2-0325-32B": {
        "model_type": "olmo2", "hidden_size": 5120, "intermediate_size": 27648,
        "num_hidden_layers": 64, "num_attention_heads": 40, "num_key_value_heads": 8,
        "vocab_size": 100352, "tie_word_embeddings": False, "attention_bias": False},
    # https://huggingface.co/allenai/Olmo-3-1025-7B/blob/main/config.json
    "allenai/Olmo-3-1025-7B": {
        "model_type": "olmo3", "hidden_size": 4096, "intermediate_size": 11008,
        "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
        "sliding_window": 4096, "vocab_size": 100278, "tie_word_embeddings": False,
        "attention_bias": False,
        "layer_types": ["sliding_attention"] * 3 + ["full_attention"] + (
            ["sliding_attention"] * 3 + ["full_attention"]) * 7},
    # https://huggingface.co/tiiuae/falcon-7b/blob/main/config.json (no tie_word_embeddings:
    # transformers ties them)
    "tiiuae/falcon-7b": {
        "model_type": "falcon", "hidden_size": 4544, "num_hidden_layers": 32,
        "num_attention_heads": 71, "multi_query": True, "new_decoder_architecture": False,
        "parallel_attn": True, "bias": False, "alibi": False, "vocab_size": 65024,
        "torch_dtype": "bfloat16"},
    # https://huggingface.co/tiiuae/falcon-40b/blob/main/config.json
    "tiiuae/falcon-40b": {
        "model_type": "falcon", "hidden_size": 8192, "num_hidden_layers": 60,
        "num_attention_heads": 128, "num_kv_heads": 8, "new_decoder_architecture": True,
        "parallel_attn": True, "bias": False, "alibi": False, "vocab_size": 65024,
        "torch_dtype": "bfloat16"},
    # https://huggingface.co/tiiuae/falcon-180B/blob/main/config.json
    "tiiuae/falcon-180B": {
        "model_type": "falcon", "hidden_size": 14848, "num_hidden_layers": 80,
        "num_attention_heads": 232, "num_kv_heads": 8, "new_decoder_architecture": True,
        "parallel_attn": True, "bias": False, "alibi": False, "vocab_size": 65024,
        "torch_dtype": "bfloat16"},
    # https://huggingface.co/meta-llama/Llama-4-Scout-17B-16E/blob/main/config.json
    "meta-llama/Llama-4-Scout-17B-16E": {
        "model_type": "llama4",
        "text_config": {"model_type": "llama4_text", "hidden_size": 5120, "intermediate_size": 8192,
                        "intermediate_size_mlp": 16384, "num_hidden_layers": 48,
                        "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
                        "num_local_experts": 16, "num_experts_per_tok": 1,
                        "interleave_moe_layer_step": 1, "attention_chunk_size": 8192,
                        "use_qk_norm": True, "vocab_size": 202048, "torch_dtype": "bfloat16"},
        "vision_config": {"hidden_size": 1408, "num_hidden_layers": 34}},
    # https://huggingface.co/meta-llama/Llama-4-Maverick-17B-128E/blob/main/config.json
    "meta-llama/Llama-4-Maverick-17B-128E": {
        "model_type": "llama4",
        "text_config": {"model_type": "llama4_text", "hidden_size": 5120, "intermediate_size": 8192,
                        "intermediate_size_mlp": 16384, "num_hidden_layers": 48,
                        "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
                        "num_local_experts": 128, "num_experts_per_tok": 1,
                        "interleave_moe_layer_step": 2, "attention_chunk_size": 8192,
                        "use_qk_norm": False, "vocab_size": 202048, "torch_dtype": "bfloat16"},
        "vision_config": {"hidden_size": 1408, "num_hidden_layers": 34}},
    # https://huggingface.co/zai-org/GLM-4.5-Air/blob/main/config.json
    "zai-org/GLM-4.5-Air": {
        "model_type": "glm4_moe", "hidden_size": 4096, "intermediate_size": 10944,
        "moe_intermediate_size": 1408, "num_hidden_layers": 46, "num_attention_heads": 96,
        "num_key_value_heads": 8, "head_dim": 128, "n_routed_experts": 128, "n_shared_experts": 1,
        "num_experts_per_tok": 8, "first_k_dense_replace": 1, "attention_bias": True,
        "use_qk_norm": False, "num_nextn_predict_layers": 1, "vocab_size": 151552,
        "tie_word_embeddings": False, "torch_dtype": "bfloat16"},
    # https://huggingface.co/zai-org/GLM-4.5/blob/main/config.json
    "zai-org/GLM-4.5": {
        "model_type": "glm4_moe", "hidden_size": 5120, "intermediate_size": 12288,
        "moe_intermediate_size": 1536, "num_hidden_layers": 92, "num_attention_heads": 96,
        "num_key_value_heads": 8, "head_dim": 128, "n_routed_experts": 160, "n_shared_experts": 1,
        "num_experts_per_tok": 8, "first_k_dense_replace": 3, "attention_bias": True,
        "use_qk_norm": True, "num_nextn_predict_layers": 1, "vocab_size": 151552,
        "tie_word_embeddings": False, "torch_dtype": "bfloat16"},
    # https://huggingface.co/Qwen/Qwen3-Next-80B-A3B-Instruct/blob/main/config.json
    "Qwen/Qwen3-Next-80B-A3B-Instruct": {
        "model_type": "qwen3_next", "hidden_size": 2048, "intermediate_size": 5120,
        "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512,
        "num_hidden_layers": 48, "num_attention_heads": 16, "num_key_value_heads": 2,
        "head_dim": 256, "num_experts": 512, "num_experts_per_tok": 10, "decoder_sparse_step": 1,
        "mlp_only_layers": [], "full_attention_interval": 4, "linear_num_key_heads": 16,
        "linear_num_value_heads": 32, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
        "linear_conv_kernel_dim": 4, "vocab_size": 151936, "tie_word_embeddings": False,
        "attention_bias": False, "torch_dtype": "bfloat16"},
}

PRESET_OF = {
    "meta-llama/Llama-3.1-8B": "llama-3.1-8b",
    "meta-llama/Meta-Llama-3-70B": "llama-3-70b",
    "meta-llama/Llama-3.1-405B": "llama-3-405b",
    "deepseek-ai/DeepSeek-V3": "deepseek-v3",
    "moonshotai/Kimi-K2-Instruct": "kimi-k2",
    "Qwen/Qwen3-235B-A22B": "qwen3-235b-a22b",
    "openai/gpt-oss-120b": "gpt-oss-120b",
    "google/gemma-3-27b-it": "gemma-3-27b",
    "mistral-community/Mixtral-8x22B-v0.1": "mixtral-8x22b",
}

# Published (total, active, does the active figure include the input embedding?) with sources.
PUBLISHED = {
    # mistral.ai/news/announcing-mistral-7b (2023-09-27): "a 7.3B parameter model"
    "mistralai/Mistral-7B-v0.1": (7.3e9, None, None),
    # mistral.ai/news/mixtral-of-experts (2023-12-11): "46.7B total parameters but only uses
    # 12.9B parameters per token"
    "mistralai/Mixtral-8x7B-v0.1": (46.7e9, 12.9e9, True),
    # the Hub's safetensors count for the checkpoint (huggingface.co/meta-llama/Llama-2-7b-hf)
    "meta-llama/Llama-2-7b-hf": (6.74e9, None, None),
    # huggingface.co/Qwen/Qwen3-8B model card: "Number of Parameters: 8.2B"
    "Qwen/Qwen3-8B": (8.2e9, None, None),
    # huggingface.co/Qwen/Qwen1.5-MoE-A2.7B model card: 14.3B in total, 2.7B activated
    "Qwen/Qwen1.5-MoE-A2.7B": (14.3e9, 2.7e9, True),
    # DeepSeek-V2 paper, arXiv 2405.04434: 236B total, 21B activated per token
    "deepseek-ai/DeepSeek-V2": (236e9, 21e9, False),
    # gpt-oss model card, arXiv 2508.10925, Table 1: 20.91B total, 3.61B active (unembedding
    # counted towards active, embeddings not)
    "openai/gpt-oss-20b": (20.91e9, 3.61e9, False),
    # Gemma 2 report, arXiv 2408.00118, Table 2: 9B = 917,504,000 embedding + 8,324,201,984
    # non-embedding parameters
    "google/gemma-2-9b": (9.2417e9, None, None),
    # Phi-3 Technical Report, arXiv 2404.14219: "phi-3-mini, a 3.8 billion parameter language
    # model"; phi-3-medium is its 14B model (also the model cards' "3.8B" and "14B")
    "microsoft/Phi-3-mini-4k-instruct": (3.8e9, None, None),
    "microsoft/Phi-3-medium-4k-instruct": (14e9, None, None),
    # the Hub's safetensors count for microsoft/phi-4: 14.7B (six bf16 shards, 29.3 GB); the
    # phi-4 report (arXiv 2412.08905) rounds it to "14B"
    "microsoft/phi-4": (14.7e9, None, None),
    # the Hub's safetensors counts for the checkpoints: OLMo 2 7B 7.3B, 32B 32.2B; Olmo 3 7B 7.3B
    "allenai/OLMo-2-1124-7B": (7.3e9, None, None),
    "allenai/OLMo-2-0325-32B": (32.2e9, None, None),
    "allenai/Olmo-3-1025-7B": (7.3e9, None, None),
    # Falcon-180B model card (huggingface.co/tiiuae/falcon-180B): a 180B-parameter causal
    # decoder-only model
    "tiiuae/falcon-180B": (180e9, None, None),
    # Llama 4 model card (huggingface.co/meta-llama/Llama-4-Maverick-17B-128E): 17B activated,
    # 400B total; the vision encoder is not counted here (see the Scout test below)
    "meta-llama/Llama-4-Maverick-17B-128E": (400e9, None, None),
    # GLM-4.5 model card (huggingface.co/zai-org/GLM-4.5): GLM-4.5 has 355B total parameters
    # (32B active), GLM-4.5-Air 106B total (12B active); neither counts the MTP layer
    "zai-org/GLM-4.5": (355e9, None, None),
    "zai-org/GLM-4.5-Air": (106e9, None, None),
    # Qwen3-Next-80B-A3B-Instruct model card: 80B parameters in total, 3B activated
    "Qwen/Qwen3-Next-80B-A3B-Instruct": (80e9, None, None),
}


@pytest.mark.parametrize("key", sorted(PRESET_OF))
def test_published_config_reproduces_the_preset_exactly(key):
    preset = models.get(PRESET_OF[key])
    built = hf_config.from_hf_config(CONFIGS[key])
    assert built.params_total == preset.params_total
    assert built.params_active == preset.params_active
    assert built.params_breakdown() == preset.params_breakdown()
    for dtype in ("bf16", "fp8"):
        assert built.kv_bytes_per_token(dtype) == preset.kv_bytes_per_token(dtype)
        assert built.kv_bytes_per_token(dtype, context_len=8192) == \
            preset.kv_bytes_per_token(dtype, context_len=8192)
    assert built.attention_kind == preset.attention_kind


@pytest.mark.parametrize("key", sorted(PUBLISHED))
def test_other_families_match_their_published_counts_within_1_percent(key):
    total, active, with_embedding = PUBLISHED[key]
    built = hf_config.from_hf_config(CONFIGS[key])
    assert abs(built.params_total / total - 1) <= 0.01
    if active is not None:
        ours = built.params_active_with_embedding if with_embedding else built.params_active
        assert abs(ours / active - 1) <= 0.01


def test_family_specific_readings():
    gemma2 = hf_config.from_hf_config(CONFIGS["google/gemma-2-9b"])
    assert (gemma2.d_head, gemma2.n_local_layers, gemma2.tied_embeddings) == (256, 21, True)
    assert gemma2.d_head != gemma2.d_model // gemma2.n_heads
    mistral = hf_config.from_hf_config(CONFIGS["mistralai/Mistral-7B-v0.1"])
    assert (mistral.sliding_window, mistral.n_local_layers) == (4096, 32)
    # at 32k context each layer holds only the last 4,096 tokens: an eighth of the full cache
    assert mistral.kv_bytes_per_token(2, context_len=32768) == pytest.approx(
        mistral.kv_bytes_per_token(2) / 8)
    qwen_moe = hf_config.from_hf_config(CONFIGS["Qwen/Qwen1.5-MoE-A2.7B"])
    assert (qwen_moe.n_shared_experts, qwen_moe.attention_bias) == (4, True)
    v2 = hf_config.from_hf_config(CONFIGS["deepseek-ai/DeepSeek-V2"])
    assert (v2.attention_kind, v2.n_dense_layers, v2.kv_bytes_per_token(2)) == ("MLA", 1, 576 * 60 * 2)


def test_layer_types_and_pattern_rules_agree():
    without_list = dict(CONFIGS["openai/gpt-oss-120b"])
    del without_list["layer_types"]
    assert hf_config.from_hf_config(without_list).n_local_layers == 18
    as_list = json.loads(json.dumps(CONFIGS["google/gemma-3-27b-it"]))
    as_list["text_config"]["layer_types"] = [
        "full_attention" if (i + 1) % 6 == 0 else "sliding_attention" for i in range(62)]
    assert hf_config.from_hf_config(as_list).n_local_layers == 52


def test_sparse_step_and_mlp_only_layers_make_dense_layers():
    config = dict(CONFIGS["Qwen/Qwen1.5-MoE-A2.7B"], decoder_sparse_step=2, mlp_only_layers=[1])
    built = hf_config.from_hf_config(config)
    # MoE where (i + 1) % 2 == 0 and i not in [1]: layers 3, 5, ..., 23 -> 11 of 24
    assert built.n_moe_layers == 11 and built.n_dense_layers == 13


def test_reads_a_file_and_names_the_model(tmp_path):
    path = tmp_path / "config.json"
    config = dict(CONFIGS["meta-llama/Llama-3.1-8B"], _name_or_path="meta-llama/Llama-3.1-8B",
                  some_future_field={"nested": [1, 2, 3]})
    path.write_text(json.dumps(config))
    built = hf_config.from_hf_config(path)
    assert built.name == "meta-llama/Llama-3.1-8B"
    assert hf_config.from_hf_config(str(path), name="mine").name == "mine"
    assert built.params_total == models.get("llama-3.1-8b").params_total


@pytest.mark.parametrize("field", ["hidden_size", "num_hidden_layers", "num_attention_heads",
                                   "vocab_size", "intermediate_size"])
def test_missing_required_field_names_field_and_family(field):
    config = dict(CONFIGS["meta-llama/Llama-3.1-8B"])
    del config[field]
    with pytest.raises(ValueError, match=rf"'{field}'.*llama"):
        hf_config.from_hf_config(config)


def test_missing_moe_and_mla_fields_are_named():
    config = dict(CONFIGS["deepseek-ai/DeepSeek-V3"])
    del config["kv_lora_rank"]
    with pytest.raises(ValueError, match=r"'kv_lora_rank'.*deepseek_v3"):
        hf_config.from_hf_config(config)
    config = dict(CONFIGS["mistralai/Mixtral-8x7B-v0.1"])
    del config["num_local_experts"]
    with pytest.raises(ValueError, match=r"'num_local_experts'.*mixtral"):
        hf_config.from_hf_config(config)


@pytest.mark.parametrize("field, value, message", [
    ("hidden_size", "4096", "whole number"),
    ("hidden_size", 4096.5, "whole number"),
    ("hidden_size", True, "whole number"),
    ("hidden_size", -1, "between 1"),
    ("num_hidden_layers", 10**15, "between 1"),
    ("vocab_size", [1], "whole number"),
    ("tie_word_embeddings", "yes", "true or false"),
    ("num_key_value_heads", 7, "n_kv_heads must divide"),
])
def test_wrong_types_and_absurd_sizes_are_named(field, value, message):
    config = dict(CONFIGS["meta-llama/Llama-3.1-8B"], **{field: value})
    with pytest.raises(ValueError, match=message):
        hf_config.from_hf_config(config)


def test_model_type_is_required_and_known():
    with pytest.raises(ValueError, match="model_type"):
        hf_config.from_hf_config({"hidden_size": 8})
    with pytest.raises(ValueError, match="not a family the course reads"):
        hf_config.from_hf_config({"model_type": "bert"})


def test_untrusted_files_are_refused_clearly(tmp_path):
    with pytest.raises(ValueError, match="cannot be read"):
        hf_config.from_hf_config(tmp_path / "absent.json")
    with pytest.raises(ValueError, match="folder with no config.json"):
        hf_config.from_hf_config(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="not a regular file"):
        hf_config.from_hf_config(fifo)
    big = tmp_path / "big.json"
    big.write_text(" " * 2_000_000)
    with pytest.raises(ValueError, match="a few kB"):
        hf_config.from_hf_config(big)
    broken = tmp_path / "broken.json"
    broken.write_text('{"model_type": "llama",')
    with pytest.raises(ValueError, match="not valid JSON"):
        hf_config.from_hf_config(broken)
    nan = tmp_path / "nan.json"
    nan.write_text('{"model_type": "llama", "hidden_size": NaN}')
    with pytest.raises(ValueError, match="NaN"):
        hf_config.from_hf_config(nan)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match="nested too deeply|JSON object"):
        hf_config.from_hf_config(deep)
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]")
    with pytest.raises(ValueError, match="JSON object"):
        hf_config.from_hf_config(listed)
    with pytest.raises(ValueError, match="path or a dict"):
        hf_config.from_hf_config(42)


# ----------------------------------------------------------------------------- issue 30: families

def _kv_values(layers, kv_heads, head_dim):
    """2 (K and V) x layers x KV heads x head_dim: the values one token adds to a GQA cache."""
    return 2 * layers * kv_heads * head_dim


@pytest.mark.parametrize("key, layers, kv_heads, head_dim", [
    ("microsoft/Phi-3-mini-4k-instruct", 32, 32, 3072 // 32),
    ("microsoft/phi-4", 40, 10, 5120 // 40),
    ("allenai/OLMo-2-0325-32B", 64, 8, 5120 // 40),
    ("allenai/Olmo-3-1025-7B", 32, 32, 4096 // 32),
    ("tiiuae/falcon-7b", 32, 1, 4544 // 71),            # multi-query: one K/V head
    ("tiiuae/falcon-40b", 60, 8, 8192 // 128),          # new_decoder_architecture: num_kv_heads
    ("meta-llama/Llama-4-Scout-17B-16E", 48, 8, 128),
    ("zai-org/GLM-4.5-Air", 46, 8, 128),
    ("Qwen/Qwen3-Next-80B-A3B-Instruct", 48 // 4, 2, 256),   # only the full-attention layers
])
def test_kv_bytes_per_token_are_exact(key, layers, kv_heads, head_dim):
    built = hf_config.from_hf_config(CONFIGS[key])
    for size in (2, 1):
        assert built.kv_bytes_per_token(size) == _kv_values(layers, kv_heads, head_dim) * size


def test_phi3_is_llama_shaped_with_a_window_on_every_layer():
    mini = hf_config.from_hf_config(CONFIGS["microsoft/Phi-3-mini-4k-instruct"])
    assert (mini.sliding_window, mini.n_local_layers, mini.gated_mlp) == (2047, 32, True)
    # at its 4k context each layer keeps the last 2,047 tokens
    assert mini.kv_bytes_per_token(2, context_len=4096) == pytest.approx(
        mini.kv_bytes_per_token(2) * 2047 / 4096)
    assert "fused" in mini.notes


def test_olmo3_layer_types_and_the_default_rule_agree():
    olmo3 = hf_config.from_hf_config(CONFIGS["allenai/Olmo-3-1025-7B"])
    assert (olmo3.sliding_window, olmo3.n_local_layers, olmo3.n_global_layers) == (4096, 24, 8)
    without = {k: v for k, v in CONFIGS["allenai/Olmo-3-1025-7B"].items() if k != "layer_types"}
    assert hf_config.from_hf_config(without).n_local_layers == 24
    olmo2 = hf_config.from_hf_config(CONFIGS["allenai/OLMo-2-1124-7B"])
    assert olmo2.n_local_layers == 0 and "QK-norm" in olmo2.notes
    # the same shapes but for the vocabularies, in the embedding and the untied head
    assert olmo2.params_total == olmo3.params_total + 2 * 4096 * (100352 - 100278)


def test_falcon_7b_matches_its_checkpoint_files_which_store_the_tied_head_twice():
    falcon = hf_config.from_hf_config(CONFIGS["tiiuae/falcon-7b"])
    assert (falcon.attention_kind, falcon.gated_mlp, falcon.d_ff, falcon.tied_embeddings) == (
        "MQA", False, 4 * 4544, True)
    # huggingface.co/tiiuae/falcon-7b/tree/main: model-00001-of-00002.safetensors 9.95 GB and
    # model-00002-of-00002.safetensors 4.48 GB, in bfloat16. transformers ties lm_head to the
    # embedding (6.92B parameters, the Hub's count of a deduplicated conversion), but the files hold
    # the head as a tensor of its own.
    files = (9.95e9 + 4.48e9) / 2
    assert abs((falcon.params_total + falcon.vocab_size * falcon.d_model) / files - 1) <= 0.01
    assert falcon.weight_format == "bfloat16" and falcon.weight_bytes_per_param == 2
    forty = hf_config.from_hf_config(CONFIGS["tiiuae/falcon-40b"])
    assert (forty.attention_kind, forty.n_kv_heads, forty.d_head) == ("GQA", 8, 64)


def test_llama4_reads_the_text_model_with_its_shared_expert_and_dense_layers():
    scout = hf_config.from_hf_config(CONFIGS["meta-llama/Llama-4-Scout-17B-16E"])
    maverick = hf_config.from_hf_config(CONFIGS["meta-llama/Llama-4-Maverick-17B-128E"])
    assert (scout.n_moe_layers, scout.n_shared_experts, scout.n_routed_experts) == (48, 1, 16)
    assert (maverick.n_moe_layers, maverick.n_dense_layers, maverick.d_ff) == (24, 24, 16384)
    for model in (scout, maverick):
        assert "vision tower is left out" in model.notes
        assert (model.n_local_layers, model.sliding_window) == (36, 8192)   # 3 chunked : 1 global
        # Llama 4 model cards: 17B active parameters (embedding lookup included, as a dense count)
        assert abs(model.params_active_with_embedding / 17e9 - 1) <= 0.02
    # Scout's card says 109B total with the vision encoder; the text model alone is a little less
    assert 0.98 < scout.params_total / 109e9 < 1
    # at 128k context the 36 chunked layers hold at most a chunk each
    assert scout.kv_bytes_per_token(2, context_len=131072) == pytest.approx(
        2 * 8 * 128 * 2 * (12 + 36 * 8192 / 131072))


def test_glm4_moe_counts_dense_first_layers_and_says_mtp_is_not_counted():
    air = hf_config.from_hf_config(CONFIGS["zai-org/GLM-4.5-Air"])
    assert (air.n_dense_layers, air.n_moe_layers, air.n_shared_experts, air.attention_bias) == (
        1, 45, 1, True)
    assert "multi-token-prediction" in air.notes and "num_nextn_predict_layers" in air.notes
    full = hf_config.from_hf_config(CONFIGS["zai-org/GLM-4.5"])
    assert full.n_dense_layers == 3 and "QK-norms not counted" in full.notes


def test_qwen3_next_keeps_kv_only_on_full_attention_layers_and_a_fixed_state_elsewhere():
    config = CONFIGS["Qwen/Qwen3-Next-80B-A3B-Instruct"]
    built = hf_config.from_hf_config(config)
    assert (built.n_linear_layers, built.n_attention_layers, built.attention_output_gate) == (36, 12, True)
    # the Gated DeltaNet state: per value head a 128 x 128 matrix, plus the conv's last 3 inputs
    # over Q, K (16 heads x 128 each) and V (32 x 128)
    per_layer = 32 * 128 * 128 + (2 * 16 * 128 + 32 * 128) * (4 - 1)
    assert built.state_values_per_sequence() == 36 * per_layer
    assert built.state_bytes_per_sequence(4) == 36 * per_layer * 4
    # the state does not grow with the context; the KV cache does, on 12 layers only
    assert built.kv_bytes_per_token(2, context_len=262144) == built.kv_bytes_per_token(2)
    assert set(built.params_breakdown()) >= {"linear_attention", "attention"}
    # the same layers from layer_types as from full_attention_interval
    listed = dict(config, layer_types=(["linear_attention"] * 3 + ["full_attention"]) * 12)
    del listed["full_attention_interval"]
    assert hf_config.from_hf_config(listed).params_total == built.params_total


def test_qwen3_next_total_matches_the_published_qwen3_coder_next_count_to_the_gate():
    """Qwen3-Coder-Next has Qwen3-Next-80B-A3B's shapes; its safetensors hold 79,674,391,296
    parameters (the Hub's count, without MTP). The difference from ours is exactly what the notes
    say is left out: a shared-expert gate (d_model) in each of the 48 layers and the q/k norms
    (head_dim each) of the 12 full-attention layers."""
    built = hf_config.from_hf_config(CONFIGS["Qwen/Qwen3-Next-80B-A3B-Instruct"])
    assert built.params_total + 48 * 2048 + 12 * 2 * 256 == 79_674_391_296


def test_a_text_config_under_any_wrapper_is_read_for_its_text_model():
    # Kimi-K2.5 nests a kimi_k2 text model under a kimi_k25 wrapper with a vision tower
    wrapped = {"model_type": "kimi_k25", "text_config": dict(CONFIGS["moonshotai/Kimi-K2-Instruct"]),
               "vision_config": {"hidden_size": 1152}}
    built = hf_config.from_hf_config(wrapped)
    assert built.params_total == models.get("kimi-k2").params_total
    assert "kimi_k25" in built.notes and "vision tower is left out" in built.notes
    with pytest.raises(ValueError, match=r"'text_config' must be an object"):
        hf_config.from_hf_config({"model_type": "kimi_k25", "text_config": [1]})
    with pytest.raises(ValueError, match=r"'kimi_k25'.*'bert'.*not a family.*qwen3_next"):
        hf_config.from_hf_config({"model_type": "kimi_k25", "text_config": {"model_type": "bert"}})


def test_a_family_not_read_is_refused_by_name_with_the_families_read():
    with pytest.raises(ValueError) as caught:
        hf_config.from_hf_config({"model_type": "mamba", "hidden_size": 8})
    message = str(caught.value)
    assert "'mamba'" in message
    for family in ("phi3", "olmo2", "olmo3", "falcon", "llama4", "glm4_moe", "qwen3_next", "llama"):
        assert family in message


def test_a_checkpoint_folder_is_read_through_its_config_json(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(CONFIGS["zai-org/GLM-4.5-Air"]))
    assert hf_config.from_hf_config(tmp_path).params_total == \
        hf_config.from_hf_config(CONFIGS["zai-org/GLM-4.5-Air"]).params_total
    assert hf_config.from_hf_config(str(tmp_path)).name == "glm4_moe"


def test_transformers_defaults_used_are_named_in_the_notes():
    config = {k: v for k, v in CONFIGS["openai/gpt-oss-20b"].items() if k != "head_dim"}
    built = hf_config.from_hf_config(config)
    assert built.d_head == 64 and "head_dim=64" in built.notes
    assert "head_dim" not in hf_config.from_hf_config(CONFIGS["openai/gpt-oss-20b"]).notes.split(
        "defaults")[-1]


@pytest.mark.parametrize("key, field", [
    ("tiiuae/falcon-7b", "num_attention_heads"),
    ("meta-llama/Llama-4-Scout-17B-16E", "num_local_experts"),
    ("zai-org/GLM-4.5-Air", "n_routed_experts"),
    ("Qwen/Qwen3-Next-80B-A3B-Instruct", "num_experts"),
    ("allenai/Olmo-3-1025-7B", "intermediate_size"),
    ("microsoft/phi-4", "vocab_size"),
])
def test_new_families_name_a_missing_field_and_the_family(key, field):
    config = json.loads(json.dumps(CONFIGS[key]))
    target = config.get("text_config", config)
    del target[field]
    family = target["model_type"]
    with pytest.raises(ValueError, match=rf"'{field}'.*{family}"):
        hf_config.from_hf_config(config)


@pytest.mark.parametrize("key, field, value, message", [
    ("allenai/Olmo-3-1025-7B", "layer_types", ["sliding_attention"] * 31 + ["linear_attention"],
     "layer kinds"),
    ("Qwen/Qwen3-Next-80B-A3B-Instruct", "layer_types", ["full_attention"] * 3, "must list"),
    ("Qwen/Qwen3-Next-80B-A3B-Instruct", "linear_num_value_heads", 24, "multiple of linear_k_heads"),
    ("tiiuae/falcon-7b", "hidden_size", 4545, "multiple of num_attention_heads"),
    ("tiiuae/falcon-7b", "multi_query", "yes", "true or false"),
    ("tiiuae/falcon-40b", "num_kv_heads", 7, "n_kv_heads must divide"),
    ("zai-org/GLM-4.5-Air", "first_k_dense_replace", 46, "n_dense_layers must be"),
    ("microsoft/phi-4", "torch_dtype", "int3", "'torch_dtype'.*phi3"),
])
def test_new_families_refuse_wrong_fields_by_name(key, field, value, message):
    config = dict(CONFIGS[key], **{field: value})
    with pytest.raises(ValueError, match=message):
        hf_config.from_hf_config(config)


def test_llama4_no_rope_layers_and_moe_layers_are_checked():
    config = json.loads(json.dumps(CONFIGS["meta-llama/Llama-4-Maverick-17B-128E"]))
    config["text_config"]["no_rope_layers"] = [1, 1, 1, 0] * 12
    config["text_config"]["moe_layers"] = list(range(1, 48, 2))
    built = hf_config.from_hf_config(config)
    assert (built.n_local_layers, built.n_moe_layers) == (36, 24)
    config["text_config"]["moe_layers"] = [48]
    with pytest.raises(ValueError, match=r"'moe_layers'.*below num_hidden_layers=48.*llama4"):
        hf_config.from_hf_config(config)
    config["text_config"]["moe_layers"] = None
    config["text_config"]["no_rope_layers"] = [2] * 48
    with pytest.raises(ValueError, match=r"'no_rope_layers'.*llama4"):
        hf_config.from_hf_config(config)


# ----------------------------------------------------------------------------- issue 30: weight formats

#: gpt-oss's quantization_config (huggingface.co/openai/gpt-oss-120b/blob/main/config.json):
#: MXFP4 experts, everything else bf16.
GPT_OSS_MXFP4 = {"modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router",
                                            "model.embed_tokens", "lm_head"],
                 "quant_method": "mxfp4"}

#: DeepSeek-V3's quantization_config (huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json).
DEEPSEEK_FP8 = {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                "weight_block_size": [128, 128]}


@pytest.mark.parametrize("key, gib", [
    # gpt-oss model card, arXiv 2508.10925, Table 1: checkpoint size 60.8 GiB and 12.8 GiB
    ("openai/gpt-oss-120b", 60.8), ("openai/gpt-oss-20b", 12.8)])
def test_mxfp4_experts_give_gpt_oss_checkpoint_size(key, gib):
    config = dict(CONFIGS[key], torch_dtype="bfloat16", quantization_config=GPT_OSS_MXFP4)
    built = hf_config.from_hf_config(config)
    assert "mxfp4" in built.weight_format and "experts_routed" in built.weight_format
    assert abs(built.stored_weight_bytes / 2**30 / gib - 1) <= 0.01
    assert "mxfp4" in built.notes


def test_fp8_block_scales_add_four_bytes_per_block():
    config = dict(CONFIGS["deepseek-ai/DeepSeek-V3"], torch_dtype="bfloat16",
                  quantization_config=DEEPSEEK_FP8)
    built = hf_config.from_hf_config(config)
    parts = built.params_breakdown()
    kept = parts["embedding"] + parts["unembedding"] + parts["router"] + parts["norms"]   # bf16
    expected = (kept * 2 + (built.params_total - kept) * (1 + 4 / (128 * 128))) / built.params_total
    assert built.weight_bytes_per_param == pytest.approx(expected)
    assert "128x128" in built.weight_format and "1.0002 bytes per quantized value" in built.notes


@pytest.mark.parametrize("quant, per_value, head", [
    # Qwen/Qwen2.5-7B-Instruct-AWQ: int4, groups of 128, an fp16 scale and a 4-bit zero per group
    ({"bits": 4, "group_size": 128, "modules_to_not_convert": None, "quant_method": "awq",
      "version": "gemm", "zero_point": True}, 0.5 + (2 + 0.5) / 128, False),
    # Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4: the same grouping (GPTQ stores zeros even when sym)
    ({"bits": 4, "group_size": 128, "desc_act": False, "sym": True, "quant_method": "gptq",
      "lm_head": False}, 0.5 + (2 + 0.5) / 128, False),
    # ModelOpt NVFP4: 4-bit values and an FP8 scale per 16
    ({"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16,
      "exclude_modules": ["lm_head"]}, 0.5 + 1 / 16, False),
    # compressed-tensors NVFP4 (nvfp4-pack-quantized), the same format by another tool
    ({"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized",
      "config_groups": {"group_0": {"targets": ["Linear"], "weights": {
          "num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16,
          "symmetric": True}}}, "ignore": ["lm_head"]}, 0.5 + 1 / 16, False),
])
def test_integer_and_4_bit_formats_count_their_group_scales(quant, per_value, head):
    config = dict(CONFIGS["meta-llama/Llama-3.1-8B"], torch_dtype="float16", quantization_config=quant)
    built = hf_config.from_hf_config(config)
    parts = built.params_breakdown()
    kept = parts["embedding"] + parts["unembedding"] + parts["norms"]
    expected = (kept * 2 + (built.params_total - kept) * per_value) / built.params_total
    assert built.weight_bytes_per_param == pytest.approx(expected)
    assert "unembedding" not in built.weight_format


def test_compressed_tensors_ignore_list_keeps_attention_and_shared_experts_in_bf16():
    """Modelled on moonshotai/Kimi-K2-Thinking's quantization_config: int4 in groups of 32 with a
    bf16 scale, targets Linear, and an ignore list naming each attention module, the shared
    experts, the dense first layer's MLP and lm_head: only the routed experts are int4."""
    ignore = (["lm_head", "model.layers.0.mlp.gate_proj", "model.layers.0.mlp.up_proj",
               "model.layers.0.mlp.down_proj"]
              + [f"model.layers.{i}.self_attn.{m}" for i in range(61)
                 for m in ("q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj")]
              + [f"model.layers.{i}.mlp.shared_experts.{m}" for i in range(1, 61)
                 for m in ("gate_proj", "up_proj", "down_proj")])
    quant = {"quant_method": "compressed-tensors", "format": "pack-quantized", "ignore": ignore,
             "config_groups": {"group_0": {"targets": ["Linear"], "weights": {
                 "num_bits": 4, "type": "int", "strategy": "group", "group_size": 32,
                 "symmetric": True}}}}
    built = hf_config.from_hf_config(dict(CONFIGS["moonshotai/Kimi-K2-Instruct"], torch_dtype="bfloat16",
                                          quantization_config=quant))
    routed = built.params_breakdown()["experts_routed"]
    expected = (routed * (0.5 + 2 / 32) + (built.params_total - routed) * 2) / built.params_total
    assert built.weight_bytes_per_param == pytest.approx(expected)
    assert "on experts_routed;" in built.weight_format


def test_weight_format_without_a_quantization_read_is_said_not_known():
    plain = hf_config.from_hf_config(CONFIGS["meta-llama/Llama-3.1-8B"])
    assert (plain.weight_format, plain.weight_bytes_per_param, plain.stored_weight_bytes) == ("", 0, 0)
    assert "weight format is not known" in plain.notes
    odd = dict(CONFIGS["meta-llama/Llama-3.1-8B"], torch_dtype="bfloat16",
               quantization_config={"quant_method": "hqq", "nbits": 4})
    built = hf_config.from_hf_config(odd)
    assert built.weight_bytes_per_param == 0 and "'hqq' is not read" in built.notes


@pytest.mark.parametrize("quant, field", [
    ({"quant_method": "awq", "bits": "4"}, "quantization_config.bits"),
    ({"quant_method": "gptq", "bits": 4, "group_size": 0}, "quantization_config.group_size"),
    ({"quant_method": "fp8", "weight_block_size": [128]}, "quantization_config.weight_block_size"),
    ({"quant_method": "mxfp4", "modules_to_not_convert": "lm_head"},
     "quantization_config.modules_to_not_convert"),
    ({"quant_method": "compressed-tensors", "config_groups": []}, "quantization_config.config_groups"),
    ("fp8", "quantization_config"),
])
def test_quantization_fields_are_checked_by_name_and_family(quant, field):
    config = dict(CONFIGS["meta-llama/Llama-3.1-8B"], quantization_config=quant)
    with pytest.raises(ValueError, match=rf"'{re.escape(field)}'.*llama"):
        hf_config.from_hf_config(config)


# ---- issue 31 §3: fields from files, read or not

def test_an_integer_too_long_for_python_names_its_field_and_the_file(tmp_path):
    # Python's own message ("Exceeds the limit (4300 digits)") names neither; the reader names both,
    # also when the field is one the reader ignores, and also inside a nested object.
    for field, place in (("vocab_size", "vocab_size"), ("some_future_field", "some_future_field"),
                         ("rope_scaling", "rope_scaling.factor")):
        config = dict(CONFIGS["meta-llama/Llama-3.1-8B"])
        config[field] = {"factor": "DIGITS"} if field == "rope_scaling" else "DIGITS"
        text = json.dumps(config).replace('"DIGITS"', "9" * 5000)
        path = tmp_path / "config.json"
        path.write_text(text)
        with pytest.raises(ValueError) as caught:
            hf_config.from_hf_config(path)
        message = str(caught.value)
        assert "source=" in message and str(path) in message, message
        assert repr(place) in message and "5,000 digits" in message, message
        assert "4300" not in message
    # the same integer in a dict given directly
    config = dict(CONFIGS["meta-llama/Llama-3.1-8B"], unused=10**5000)
    with pytest.raises(ValueError, match="'unused' is an integer of about 5,00"):
        hf_config.from_hf_config(config)


def test_a_long_integer_in_a_read_field_of_a_dict_is_named_without_formatting_it():
    config = dict(CONFIGS["meta-llama/Llama-3.1-8B"], num_key_value_heads=10**29)
    with pytest.raises(ValueError, match="'num_key_value_heads' must be between"):
        hf_config.from_hf_config(config)


@pytest.mark.parametrize("key", ["Qwen/Qwen1.5-MoE-A2.7B", "Qwen/Qwen3-235B-A22B", "Qwen/Qwen3-8B"])
def test_qwen_dense_and_moe_refuse_use_sliding_window_alike(key):
    config = dict(CONFIGS[key], use_sliding_window=True)
    with pytest.raises(ValueError, match="'use_sliding_window' = true is not supported"):
        hf_config.from_hf_config(config)


@pytest.mark.parametrize("value", ["4096", -1, float("nan"), 1.5, True])
def test_intermediate_size_is_checked_when_no_layer_is_dense(value):
    config = dict(CONFIGS["Qwen/Qwen3-235B-A22B"], intermediate_size=value)
    assert hf_config.from_hf_config(CONFIGS["Qwen/Qwen3-235B-A22B"]).n_dense_layers == 0
    with pytest.raises(ValueError, match="'intermediate_size'"):
        hf_config.from_hf_config(config)


@pytest.mark.parametrize("family_key", ["deepseek-ai/DeepSeek-V3", "moonshotai/Kimi-K2-Instruct"])
def test_mla_families_refuse_kv_head_groups(family_key):
    config = dict(CONFIGS[family_key], num_key_value_heads=7)
    with pytest.raises(ValueError, match="'num_key_value_heads' must equal num_attention_heads"):
        hf_config.from_hf_config(config)


@pytest.mark.parametrize("key, field, value", [
    ("tiiuae/falcon-7b", "num_kv_heads", "8"),            # multi-query: the field is not used
    ("tiiuae/falcon-7b", "n_head_kv", -3),
    ("meta-llama/Llama-3.1-8B", "sliding_window", "4096"),   # llama reads no window
    ("meta-llama/Llama-3.1-8B", "moe_intermediate_size", float("nan")),
    ("Qwen/Qwen3-8B", "sliding_window", 2.5),              # use_sliding_window is false
    ("google/gemma-2-9b", "sliding_window_pattern", "6"),    # gemma2 alternates
    ("meta-llama/Llama-3.1-8B", "multi_query", "yes"),
    ("mistralai/Mistral-7B-v0.1", "attention_bias", 1),
])
def test_every_field_the_reader_knows_is_checked_even_when_unused(key, field, value):
    config = dict(CONFIGS[key], **{field: value})
    with pytest.raises(ValueError, match=repr(field)):
        hf_config.from_hf_config(config)


# --- issue 48 §4: every default taken for a missing field is in the notes, with transformers' own per-family value

def _without(key, field, *, inner=False):
    config = json.loads(json.dumps(CONFIGS[key]))
    (config["text_config"] if inner else config).pop(field)
    return config


def test_gpt_oss_without_kv_heads_takes_transformers_default_of_8_and_says_so():
    # transformers' GptOssConfig(num_key_value_heads=8); one KV head per attention head would be 8x the KV
    full = hf_config.from_hf_config(CONFIGS["openai/gpt-oss-120b"])
    model = hf_config.from_hf_config(_without("openai/gpt-oss-120b", "num_key_value_heads"))
    assert model.n_kv_heads == 8
    assert model.kv_bytes_per_token(2) == full.kv_bytes_per_token(2)
    assert "num_key_value_heads=8" in model.notes


def test_a_missing_kv_head_count_without_a_family_default_is_one_per_attention_head_and_said():
    model = hf_config.from_hf_config(_without("meta-llama/Meta-Llama-3-70B", "num_key_value_heads"))
    assert model.n_kv_heads == 64
    assert "num_key_value_heads is not in the file" in model.notes and "one KV head per attention head" in model.notes


def test_gemma3_without_head_dim_takes_256_and_says_so():
    model = hf_config.from_hf_config(_without("google/gemma-3-27b-it", "head_dim", inner=True))
    assert model.d_head == 256          # transformers' Gemma3TextConfig(head_dim=256), not hidden / heads = 168
    assert "head_dim=256" in model.notes


def test_deepseek_v3_without_q_lora_rank_takes_1536_and_a_null_one_is_full_rank():
    full = hf_config.from_hf_config(CONFIGS["deepseek-ai/DeepSeek-V3"])
    missing = hf_config.from_hf_config(_without("deepseek-ai/DeepSeek-V3", "q_lora_rank"))
    assert missing.q_lora_rank == 1536 and missing.params_total == full.params_total
    assert "q_lora_rank=1536" in missing.notes
    null = hf_config.from_hf_config(dict(CONFIGS["deepseek-ai/DeepSeek-V3"], q_lora_rank=None))
    assert null.q_lora_rank == 0 and "full rank" in null.notes


def test_a_missing_head_dim_read_as_hidden_over_heads_is_said():
    model = hf_config.from_hf_config(CONFIGS["meta-llama/Meta-Llama-3-70B"])   # the file has no head_dim
    assert model.d_head == 128 and "head_dim=128" in model.notes
