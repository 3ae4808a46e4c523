"""hf_config.from_hf_config: published config.json files in, the course's counts out.

Each CONFIGS entry holds the fields of a published ``config.json`` that bear on the counts, typed
from the file on the Hugging Face Hub named in the key (huggingface.co/<key>/blob/main/config.json);
fields that play no part (token ids, rope scaling, dropout...) are left out, which also tests that
the reader needs nothing else. Gemma 3's file nests the text model under ``text_config``.
"""

import json
import os

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
    with pytest.raises(ValueError, match="not a regular file"):
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
