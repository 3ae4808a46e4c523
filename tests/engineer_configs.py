"""Hugging Face config.json files of three real models a practitioner planned with (issue 30, the engineer's walk),
as dicts. Each is the file as published on the model's page (the URL beside it)."""

#: Source: https://huggingface.co/microsoft/phi-4/blob/main/config.json
PHI_4 = {
    "_name_or_path": "microsoft/phi-4",
    "architectures": [
        "Phi3ForCausalLM"
    ],
    "attention_bias": False,
    "attention_dropout": 0.0,
    "auto_map": {},
    "bos_token_id": 100257,
    "embd_pdrop": 0.0,
    "eos_token_id": 100257,
    "hidden_act": "silu",
    "hidden_size": 5120,
    "initializer_range": 0.02,
    "intermediate_size": 17920,
    "max_position_embeddings": 16384,
    "model_type": "phi3",
    "num_attention_heads": 40,
    "num_hidden_layers": 40,
    "num_key_value_heads": 10,
    "original_max_position_embeddings": 16384,
    "pad_token_id": 100257,
    "resid_pdrop": 0.0,
    "rms_norm_eps": 1e-05,
    "rope_scaling": None,
    "rope_theta": 250000,
    "sliding_window": None,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "transformers_version": "4.47.0",
    "use_cache": True,
    "vocab_size": 100352
}

#: Source: https://huggingface.co/Qwen/Qwen3-30B-A3B/blob/main/config.json
QWEN3_30B_A3B = {
    "architectures": [
        "Qwen3MoeForCausalLM"
    ],
    "attention_bias": False,
    "attention_dropout": 0.0,
    "bos_token_id": 151643,
    "decoder_sparse_step": 1,
    "eos_token_id": 151645,
    "head_dim": 128,
    "hidden_act": "silu",
    "hidden_size": 2048,
    "initializer_range": 0.02,
    "intermediate_size": 6144,
    "max_position_embeddings": 40960,
    "max_window_layers": 48,
    "mlp_only_layers": [],
    "model_type": "qwen3_moe",
    "moe_intermediate_size": 768,
    "norm_topk_prob": True,
    "num_attention_heads": 32,
    "num_experts": 128,
    "num_experts_per_tok": 8,
    "num_hidden_layers": 48,
    "num_key_value_heads": 4,
    "output_router_logits": False,
    "rms_norm_eps": 1e-06,
    "rope_scaling": None,
    "rope_theta": 1000000.0,
    "router_aux_loss_coef": 0.001,
    "sliding_window": None,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "transformers_version": "4.51.0",
    "use_cache": True,
    "use_sliding_window": False,
    "vocab_size": 151936
}

#: Source: https://huggingface.co/Qwen/Qwen3-32B-AWQ/blob/main/config.json
QWEN3_32B_AWQ = {
    "architectures": [
        "Qwen3ForCausalLM"
    ],
    "attention_bias": False,
    "attention_dropout": 0.0,
    "bos_token_id": 151643,
    "dtype": "float16",
    "eos_token_id": 151645,
    "head_dim": 128,
    "hidden_act": "silu",
    "hidden_size": 5120,
    "initializer_range": 0.02,
    "intermediate_size": 25600,
    "layer_types": ["full_attention"] * 64,
    "max_position_embeddings": 40960,
    "max_window_layers": 64,
    "model_type": "qwen3",
    "num_attention_heads": 64,
    "num_hidden_layers": 64,
    "num_key_value_heads": 8,
    "pad_token_id": None,
    "quantization_config": {
        "bits": 4,
        "group_size": 128,
        "modules_to_not_convert": None,
        "quant_method": "awq",
        "version": "gemm",
        "zero_point": True
    },
    "rms_norm_eps": 1e-06,
    "rope_parameters": {
        "rope_theta": 1000000,
        "rope_type": "default"
    },
    "sliding_window": None,
    "tie_word_embeddings": False,
    "transformers_version": "5.7.0",
    "use_cache": True,
    "use_sliding_window": False,
    "vocab_size": 151936
}
