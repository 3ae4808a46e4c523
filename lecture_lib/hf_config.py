"""Build a :class:`~lecture_lib.models.Model` from a Hugging Face ``config.json``.

Bring your own model: ``hf_config.from_hf_config("path/to/config.json")`` (or the folder that holds
it, or the parsed dict) reads the shapes the course needs and nothing else. It knows these
families, by ``model_type``:

==================  =======================================================================
family              what it reads beyond the common fields
==================  =======================================================================
llama               GQA (``num_key_value_heads``); Llama 2, 3, 3.1, 3.2
mistral             GQA; ``sliding_window`` on every layer when set (Mistral 7B v0.1: 4096)
mixtral             MoE: ``num_local_experts``, ``num_experts_per_tok``; ``intermediate_size``
                    is per expert
phi3                Phi-3-mini/medium, phi-4: Llama's shapes with fused ``qkv_proj`` and
                    ``gate_up_proj`` (the same counts); ``sliding_window`` on every layer
qwen2, qwen3        dense; Qwen2 has Q/K/V biases
olmo2, olmo3        Llama's shapes with QK-norm weights; OLMo 3's ``layer_types`` (3 sliding-
                    window layers, then 1 full)
falcon              Falcon-7B: multi-query, parallel attention, a non-gated 4x MLP, tied
                    embeddings; ``new_decoder_architecture`` (40B, 180B): ``num_kv_heads``
qwen2_moe,          MoE: ``num_experts``, ``moe_intermediate_size``, Qwen2-MoE's
qwen3_moe           ``shared_expert_intermediate_size``, ``decoder_sparse_step``, ``mlp_only_layers``
qwen3_next          Qwen3-Next: Gated DeltaNet linear attention on 3 layers of 4
                    (``layer_types`` / ``full_attention_interval``), gated attention, MoE with
                    a shared expert; a fixed state per sequence instead of KV in linear layers
deepseek_v2,        MLA (``kv_lora_rank``, ``q_lora_rank``, the rope/nope/v head dims), dense first
deepseek_v3,        layers (``first_k_dense_replace``), shared experts (``n_shared_experts``)
kimi_k2
glm4_moe            GLM-4.5 / 4.5-Air: GQA with Q/K/V biases, ``first_k_dense_replace`` dense
                    layers, shared and routed experts
llama4,             Llama 4 Scout/Maverick: MoE with a shared expert, dense layers between MoE
llama4_text         ones (``interleave_moe_layer_step``, ``moe_layers``), chunked attention
gpt_oss             MoE, biases, attention sinks, banded layers from ``layer_types``
gemma2, gemma3,     ``head_dim`` != hidden/heads, local layers (``layer_types`` or
gemma3_text         ``sliding_window_pattern``), tied embeddings
==================  =======================================================================

A file that nests the text model under ``text_config`` (Gemma 3, Llama 4, Kimi-K2.5's
``kimi_k25`` around a ``kimi_k2`` text model) is read for its text model; the vision tower is left
out and the notes say so. Any other ``model_type`` is refused, naming it and the families read.

Where a published file leaves a field out, the family's default in Hugging Face ``transformers``
(the ``configuration_<family>.py`` that reads the file) applies; ``FAMILY_DEFAULTS`` lists each one,
and ``Model.notes`` names those a file relied on. Unknown fields are ignored. The file is
untrusted input: it is read as JSON only (never evaluated), capped in size, and every field read
is checked for type and range, so a wrong or absurd value is a ``ValueError`` that names the field
and the family.

The weight format comes from ``torch_dtype`` (or ``dtype``) and ``quantization_config``
(:func:`_weight_format`): bf16/fp16/fp32, FP8 with block scales (DeepSeek-V3), MXFP4 (gpt-oss's
experts), NVFP4 (ModelOpt or compressed-tensors), AWQ and GPTQ int4 with their group scales and
zeros, and compressed-tensors. The result is ``Model.weight_format`` (in words) and
``Model.weight_bytes_per_param`` (average stored bytes per parameter, scales included).

What the course's ``Model`` does not represent is left out and said so in ``Model.notes``: Qwen2's
missing O-projection bias (``attention_bias`` adds Q/K/V/O biases; the O bias is d_model per layer,
under 0.01 %), shared-expert gates (d_model per layer), the QK-norms and extra norms of Qwen3,
OLMo and Gemma, LayerNorm biases (Falcon), expert and router biases, and multi-token-prediction
modules.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import stat
from pathlib import Path

from . import models
from .validate import _describe

#: The largest config.json read from disk; published ones are a few kilobytes.
MAX_FILE_BYTES = 1_000_000

#: Upper bounds on the shapes, far above any published model, so a typo or an attack is caught
#: by name before anything is allocated or multiplied.
_LIMITS = {
    "num_hidden_layers": 10_000, "hidden_size": 1_000_000, "intermediate_size": 10_000_000,
    "num_attention_heads": 100_000, "num_key_value_heads": 100_000, "head_dim": 100_000,
    "vocab_size": 100_000_000, "moe_intermediate_size": 10_000_000,
    "shared_expert_intermediate_size": 100_000_000, "num_experts": 1_000_000,
    "num_local_experts": 1_000_000, "n_routed_experts": 1_000_000, "num_experts_per_tok": 1_000_000,
    "n_shared_experts": 10_000, "first_k_dense_replace": 10_000, "kv_lora_rank": 1_000_000,
    "q_lora_rank": 1_000_000, "qk_rope_head_dim": 100_000, "qk_nope_head_dim": 100_000,
    "v_head_dim": 100_000, "sliding_window": 1_000_000_000, "sliding_window_pattern": 10_000,
    "decoder_sparse_step": 10_000, "moe_layer_freq": 10_000, "num_kv_heads": 100_000,
    "n_head_kv": 100_000, "ffn_hidden_size": 10_000_000, "intermediate_size_mlp": 10_000_000,
    "interleave_moe_layer_step": 10_000, "no_rope_layer_interval": 10_000,
    "attention_chunk_size": 1_000_000_000, "num_nextn_predict_layers": 10_000,
    "full_attention_interval": 10_000, "linear_num_key_heads": 100_000,
    "linear_num_value_heads": 100_000, "linear_key_head_dim": 100_000,
    "linear_value_head_dim": 100_000, "linear_conv_kernel_dim": 1_000,
}

#: The text families read, by ``model_type``; "gemma3" and "llama4" are also read when their
#: multimodal files nest the text model under ``text_config``.
FAMILIES = ("llama", "mistral", "mixtral", "phi3", "qwen2", "qwen3", "olmo2", "olmo3", "falcon",
            "qwen2_moe", "qwen3_moe", "qwen3_next", "deepseek_v2", "deepseek_v3", "kimi_k2",
            "glm4_moe", "llama4", "llama4_text", "gpt_oss", "gemma2", "gemma3", "gemma3_text")

#: A multimodal wrapper whose ``text_config`` names no ``model_type`` of its own: the text family.
_TEXT_FAMILY = {"gemma3": "gemma3_text", "llama4": "llama4_text"}

#: Defaults from transformers' configuration classes (v4.57, ``src/transformers/models/<family>/
#: configuration_<family>.py``) for fields that published files sometimes omit.
FAMILY_DEFAULTS = {
    "llama": {"tie_word_embeddings": False, "attention_bias": False},
    "mistral": {"tie_word_embeddings": False, "sliding_window": None},
    "mixtral": {"tie_word_embeddings": False, "sliding_window": None},
    "phi3": {"tie_word_embeddings": False, "sliding_window": None},
    "qwen2": {"tie_word_embeddings": False, "use_sliding_window": False},
    "qwen3": {"tie_word_embeddings": False, "attention_bias": False, "use_sliding_window": False},
    "olmo2": {"tie_word_embeddings": False, "attention_bias": False},
    "olmo3": {"tie_word_embeddings": False, "attention_bias": False, "sliding_window": 4096},
    # FalconConfig: no tie_word_embeddings argument, so PretrainedConfig's True; ffn_hidden_size
    # defaults to 4 x hidden_size (read in _falcon)
    "falcon": {"tie_word_embeddings": True, "multi_query": True, "parallel_attn": True,
               "new_decoder_architecture": False, "bias": False, "alibi": False},
    "qwen2_moe": {"tie_word_embeddings": False, "decoder_sparse_step": 1, "mlp_only_layers": [],
                  "shared_expert_intermediate_size": 0, "use_sliding_window": False},
    "qwen3_moe": {"tie_word_embeddings": False, "attention_bias": False, "decoder_sparse_step": 1,
                  "mlp_only_layers": [], "use_sliding_window": False},
    "qwen3_next": {"tie_word_embeddings": False, "attention_bias": False, "decoder_sparse_step": 1,
                   "mlp_only_layers": [], "head_dim": 256, "full_attention_interval": 4,
                   "linear_num_key_heads": 16, "linear_num_value_heads": 32,
                   "linear_key_head_dim": 128, "linear_value_head_dim": 128,
                   "linear_conv_kernel_dim": 4},
    "deepseek_v2": {"tie_word_embeddings": False, "first_k_dense_replace": 0, "moe_layer_freq": 1,
                    "n_shared_experts": 0, "q_lora_rank": 1536},
    "deepseek_v3": {"tie_word_embeddings": False, "first_k_dense_replace": 0, "moe_layer_freq": 1,
                    "n_shared_experts": 0, "q_lora_rank": 1536},
    "kimi_k2": {"tie_word_embeddings": False, "first_k_dense_replace": 0, "moe_layer_freq": 1,
                "n_shared_experts": 0},
    "glm4_moe": {"tie_word_embeddings": False, "attention_bias": False, "n_shared_experts": 1,
                 "first_k_dense_replace": 1, "use_qk_norm": False},
    "llama4_text": {"tie_word_embeddings": False, "num_experts_per_tok": 1,
                    "interleave_moe_layer_step": 1, "no_rope_layer_interval": 4,
                    "attention_chunk_size": 8192},
    "gpt_oss": {"tie_word_embeddings": False, "sliding_window": 128, "head_dim": 64, "num_key_value_heads": 8},
    "gemma2": {"tie_word_embeddings": True, "sliding_window": 4096, "vocab_size": 256000, "head_dim": 256},
    "gemma3_text": {"tie_word_embeddings": True, "sliding_window": 4096, "vocab_size": 262208,
                    "sliding_window_pattern": 6, "head_dim": 256},
}
FAMILY_DEFAULTS["gemma3"] = FAMILY_DEFAULTS["gemma3_text"]
FAMILY_DEFAULTS["llama4"] = FAMILY_DEFAULTS["llama4_text"]


# ----------------------------------------------------------------------------- reading the file

def read_config(source) -> dict:
    """``source`` as a config dict: a dict is used as given; a path is read as JSON.

    The path must be a regular file (not a FIFO or device) of at most ``MAX_FILE_BYTES``, or a
    folder that holds one named ``config.json`` (a downloaded checkpoint); NaN and Infinity
    literals and nesting too deep to parse are refused. Every error names ``source``.
    """
    if isinstance(source, dict):
        if not source or not all(isinstance(key, str) for key in source):
            raise ValueError(f"source must be a config dict of named fields (as config.json holds), got "
                             f"{_describe(source)}")
        try:
            long_integer = _find_long_integer(source)
        except RecursionError:
            raise ValueError("source is nested too deeply to be a config") from None
        if long_integer:
            raise ValueError(f"source: field {long_integer[0]!r:.80} is an integer of about "
                             f"{long_integer[1]:,} digits; no config.json field needs more than {_MAX_DIGITS}")
        return source
    if not isinstance(source, (str, os.PathLike)):
        raise ValueError(f"source must be a config.json path or a dict, got {type(source).__name__}: "
                         f"{_describe(source)}")
    try:
        name = os.fspath(source)
    except TypeError:   # an os.PathLike whose __fspath__ returns no text
        raise ValueError(f"source must be a config.json path or a dict, got {_describe(source)}") from None
    if not isinstance(name, str) or not name:
        raise ValueError(f"source must be a config.json path or a dict, got {_describe(source)}")
    shown = f"source={name!r:.200}"
    path = Path(name)
    try:
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):   # a checkpoint folder: its config.json
            inside = path / "config.json"
            try:
                info = inside.stat()
            except FileNotFoundError:
                raise ValueError(f"{shown} is a folder with no config.json in it") from None
            path, shown = inside, f"{shown} (its config.json)"
    except (OSError, ValueError) as error:   # missing, no permission, a name too long or with a NUL byte
        if isinstance(error, ValueError) and str(error).startswith(shown):
            raise
        raise ValueError(f"{shown} cannot be read: {getattr(error, 'strerror', None) or error}") from None
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"{shown} is not a regular file")
    if info.st_size > MAX_FILE_BYTES:
        raise ValueError(f"{shown} is {info.st_size:,} bytes; a config.json is "
                         f"a few kB (limit {MAX_FILE_BYTES:,})")
    try:
        with path.open("rb") as file:   # at most the limit, even if the file grew since stat()
            text = file.read(MAX_FILE_BYTES + 1).decode("utf-8", errors="replace")
    except OSError as error:
        raise ValueError(f"{shown} cannot be read: {error.strerror or error}") from None
    if len(text) > MAX_FILE_BYTES:
        raise ValueError(f"{shown} is over {MAX_FILE_BYTES:,} bytes; a config.json is a few kB")
    return parse_config_text(text, where=shown)


def _refuse_constant(where, name):
    raise ValueError(f"{where} has {name}, which is not a JSON number")


#: The most digits an integer in a config.json may have: the largest field limit has 10, and Python
#: itself refuses to convert more than 4,300 (with a message that names no field).
_MAX_DIGITS = 30


class _LongInteger:
    """Stands in for an integer literal of more than ``_MAX_DIGITS`` digits while the JSON is parsed,
    so the field that holds it can be named afterwards (json's hook does not know the field)."""

    def __init__(self, digits: int):
        self.digits = digits


def _parse_int(text: str):
    digits = len(text.lstrip("-"))
    return _LongInteger(digits) if digits > _MAX_DIGITS else int(text)


def _find_long_integer(value, path: str = ""):
    """(the dotted path of the first over-long integer in ``value``, its digit count), or None."""
    if isinstance(value, _LongInteger):
        return path or "(top level)", value.digits
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**_MAX_DIGITS:
        return path or "(top level)", int(value.bit_length() * 0.30103) + 1   # a dict given directly
    children = (value.items() if isinstance(value, dict)
                else ((f"[{index}]", item) for index, item in enumerate(value)) if isinstance(value, list)
                else ())
    for key, item in children:
        inner = f"{path}{key}" if key.startswith("[") else (f"{path}.{key}" if path else key)
        found = _find_long_integer(item, inner)
        if found:
            return found
    return None


def parse_config_text(text: str, *, where: str = "text") -> dict:
    """The JSON text of a config.json as a dict; anything else is a ``ValueError``.

    ``where`` is what the messages call the text (by default the parameter, "text")."""
    if not isinstance(where, str) or not where.strip():
        raise ValueError(f"where must be a non-empty string naming the text, got {_describe(where)}")
    if not isinstance(text, str):
        raise ValueError(f"text must be the JSON text of a config.json (a str), got {type(text).__name__}: "
                         f"{_describe(text)}")
    if len(text) > MAX_FILE_BYTES:
        raise ValueError(f"{where} is {len(text):,} characters; a config.json is a few kB "
                         f"(limit {MAX_FILE_BYTES:,})")
    try:
        data = json.loads(text, parse_constant=lambda name: _refuse_constant(where, name),
                          parse_int=_parse_int)
    except RecursionError:
        raise ValueError(f"{where} is nested too deeply to be a config.json") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{where} is not valid JSON: {error.msg} at line {error.lineno}") from None
    try:
        long_integer = _find_long_integer(data)
    except RecursionError:
        raise ValueError(f"{where} is nested too deeply to be a config.json") from None
    if long_integer:
        field, digits = long_integer
        raise ValueError(f"{where}: field {field!r:.80} is an integer of {digits:,} digits; no "
                         f"config.json field needs more than {_MAX_DIGITS} (checked in every field, "
                         f"read or not)")
    if not isinstance(data, dict):
        raise ValueError(f"{where} must hold a JSON object, got a {type(data).__name__}")
    return data


# ----------------------------------------------------------------------------- checked fields

class _Fields:
    """The config's fields, read with the family's defaults and checked by name.

    ``defaulted`` records each default a file relied on (for the notes); ``notes`` collects what a
    builder leaves out of the counts.
    """

    def __init__(self, config: dict, family: str):
        self.config, self.family = config, family
        self.defaults = FAMILY_DEFAULTS.get(family, {})
        self.defaulted: dict = {}
        self.notes: list[str] = []

    def _raw(self, key, required):
        if key in self.config and self.config[key] is not None:
            return self.config[key]
        if key in self.defaults:
            if self.defaults[key] not in (None, []):   # an empty list changes nothing worth saying
                self.defaulted[key] = self.defaults[key]
            return self.defaults[key]
        if required:
            raise ValueError(f"config.json field {key!r} is required for a {self.family} model "
                             f"and is missing")
        return None

    def has(self, key) -> bool:
        return self.config.get(key) is not None

    def whole(self, key, *, required=True, minimum=1, default=0) -> int:
        value = self._raw(key, required)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (
                isinstance(value, float) and not value.is_integer()):
            raise ValueError(f"config.json field {key!r} must be a whole number for a "
                             f"{self.family} model, got {_describe(value)}")
        value = int(value)
        limit = _LIMITS.get(key, 10**9)
        if not minimum <= value <= limit:
            shown = (f"{value:,}" if abs(value) < 10**_MAX_DIGITS
                     else f"an integer of about {int(value.bit_length() * 0.30103) + 1:,} digits")
            raise ValueError(f"config.json field {key!r} must be between {minimum} and {limit:,} "
                             f"for a {self.family} model, got {shown}")
        return value

    def flag(self, key, *, default=False) -> bool:
        value = self._raw(key, required=False)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise ValueError(f"config.json field {key!r} must be true or false for a "
                             f"{self.family} model, got {_describe(value)}")
        return value

    def strings(self, key) -> list[str] | None:
        value = self._raw(key, required=False)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ValueError(f"config.json field {key!r} must be a list of strings for a "
                             f"{self.family} model")
        return value

    def wholes(self, key) -> list[int]:
        value = self._raw(key, required=False) or []
        if not isinstance(value, list) or not all(
                isinstance(item, int) and not isinstance(item, bool) for item in value):
            raise ValueError(f"config.json field {key!r} must be a list of layer indices for a "
                             f"{self.family} model")
        return value

    def layer_indices(self, key, n_layers: int) -> set[int] | None:
        """A list of layer indices, each below ``n_layers``; None if the file has no such list."""
        if not self.has(key) and key not in self.defaults:
            return None
        indices = self.wholes(key)
        if any(not 0 <= index < n_layers for index in indices):
            raise ValueError(f"config.json field {key!r} must hold layer indices below "
                             f"num_hidden_layers={n_layers} for a {self.family} model")
        return set(indices)

    def kinds(self, key, n_layers: int, allowed: tuple[str, ...]) -> list[str] | None:
        """A per-layer list of kinds (``layer_types``), one of ``allowed`` for each layer."""
        kinds = self.strings(key)
        if kinds is None:
            return None
        if len(kinds) != n_layers:
            raise ValueError(f"config.json field {key!r} must list num_hidden_layers={n_layers} "
                             f"layers for a {self.family} model, got {len(kinds)}")
        unknown = sorted(set(kinds) - set(allowed))
        if unknown:
            raise ValueError(f"config.json field {key!r} has layer kinds {unknown} that a "
                             f"{self.family} model does not have (known: {', '.join(allowed)})")
        return kinds


def _family(config: dict) -> str:
    family = config.get("model_type")
    if not isinstance(family, str) or not family:
        raise ValueError("config.json field 'model_type' is required and must be a string "
                         f"naming the family; the families read are: {', '.join(FAMILIES)}")
    if family not in FAMILIES:
        raise ValueError(f"config.json model_type {family!r:.60} is not a family the course reads; "
                         f"the families read are: {', '.join(FAMILIES)}")
    return family


def _text_model(config: dict) -> tuple[dict, str, str | None]:
    """(the fields of the text model, its family, the multimodal wrapper's model_type or None).

    A file with a ``text_config`` object (Gemma 3, Llama 4, Kimi-K2.5) is read for that object:
    its own ``model_type`` if it names a family read, else the wrapper's text family
    (``_TEXT_FAMILY``). Fields the text model leaves out are not taken from the wrapper, except
    the weight format (``torch_dtype``, ``quantization_config``), which :func:`_weight_format` reads
    from either.
    """
    text = config.get("text_config")
    outer = config.get("model_type")
    if text is None:
        return config, _family(config), None
    if not isinstance(text, dict):
        raise ValueError(f"config.json field 'text_config' must be an object for a {outer!r:.60} model")
    inner = text.get("model_type")
    if inner is not None and not isinstance(inner, str):
        raise ValueError(f"config.json field 'text_config.model_type' must be a string, got {inner!r:.60}")
    if inner in FAMILIES:
        family = inner
    elif isinstance(outer, str) and outer in _TEXT_FAMILY:
        family = _TEXT_FAMILY[outer]
    else:
        shown = f"{outer!r:.60}" + (f" (text_config model_type {inner!r:.60})" if inner else "")
        raise ValueError(f"config.json model_type {shown} is not a family the course reads; "
                         f"the families read are: {', '.join(FAMILIES)}")
    return text, family, (outer if isinstance(outer, str) and outer else "multimodal")


def _local_layers(fields: _Fields, n_layers: int, *, every_layer: bool = False,
                  pattern_key: str | None = None, global_every: int = 0,
                  alternate: bool = False) -> tuple[int, int]:
    """(sliding_window, number of local layers) from ``layer_types`` or the family's rule.

    Rules: ``every_layer`` (Mistral, Phi-3: all layers when a window is set), every
    ``pattern_key``-th or ``global_every``-th layer global (Gemma 3: 6, OLMo 3: 4), or
    ``alternate`` (layers 0, 2, 4... local: Gemma 2, gpt-oss).
    """
    kinds = fields.kinds("layer_types", n_layers, ("sliding_attention", "full_attention"))
    window = fields.whole("sliding_window", required=False, minimum=1)
    if kinds is not None:
        local = kinds.count("sliding_attention")
    elif every_layer:
        local = n_layers if window else 0
    elif pattern_key or global_every:
        pattern = fields.whole(pattern_key) if pattern_key else global_every
        local = n_layers - n_layers // pattern       # every pattern-th layer is global
    elif alternate:
        local = (n_layers + 1) // 2                  # layers 0, 2, 4, ... are local
    else:
        local = 0
    if local and not window:
        raise ValueError(f"config.json field 'sliding_window' is required for a {fields.family} "
                         f"model with local-attention layers")
    return (window, local) if local else (0, 0)


# ----------------------------------------------------------------------------- the families

def _common(fields: _Fields) -> dict:
    n_heads = fields.whole("num_attention_heads")
    d_model = fields.whole("hidden_size")
    n_kv = fields.whole("num_key_value_heads", required=False, default=n_heads)
    if not fields.has("num_key_value_heads") and "num_key_value_heads" not in fields.defaults:
        fields.notes.append(f"num_key_value_heads is not in the file: read as one KV head per attention head "
                            f"({n_heads}), transformers' fallback for a missing value.")
    head_dim = fields.whole("head_dim", required=False, default=0)
    if not head_dim:
        if d_model % n_heads:
            raise ValueError(f"config.json field 'head_dim' is required for this {fields.family} "
                             f"model: hidden_size={d_model} is not a multiple of "
                             f"num_attention_heads={n_heads}")
        head_dim = d_model // n_heads
        fields.defaulted["head_dim"] = head_dim   # transformers: hidden_size // num_attention_heads
    return dict(n_layers=fields.whole("num_hidden_layers"), d_model=d_model, n_heads=n_heads,
                n_kv_heads=n_kv, d_head=head_dim, vocab_size=fields.whole("vocab_size"),
                tied_embeddings=fields.flag("tie_word_embeddings"))


def _dense(fields: _Fields) -> dict:
    """Llama-shaped dense models: Llama, Mistral, Phi-3, Qwen2/3, OLMo 2/3."""
    shape = _common(fields)
    shape["d_ff"] = fields.whole("intermediate_size")
    family = fields.family
    if family == "qwen2":
        shape["attention_bias"] = True
    elif family in ("llama", "qwen3", "olmo2", "olmo3"):
        shape["attention_bias"] = fields.flag("attention_bias")
    if family in ("mistral", "phi3"):
        window, local = _local_layers(fields, shape["n_layers"], every_layer=True)
    elif family == "olmo3":
        window, local = _local_layers(fields, shape["n_layers"], global_every=4)
    elif family.startswith("qwen"):
        _refuse_qwen_window(fields)
        window, local = 0, 0
    else:
        window, local = 0, 0
    shape.update(sliding_window=window, n_local_layers=local)
    return shape


def _refuse_qwen_window(fields: _Fields) -> None:
    """Qwen2/3 dense and MoE: ``use_sliding_window`` true turns on a window for the layers above
    ``max_window_layers``, a rule the course does not model, so such a file is refused."""
    if fields.flag("use_sliding_window"):
        raise ValueError(f"config.json field 'use_sliding_window' = true is not supported for a "
                         f"{fields.family} model (its max_window_layers rule is not modelled)")


def _falcon(fields: _Fields) -> dict:
    """Falcon (transformers' ``FalconAttention`` and ``FalconMLP``).

    The fused ``query_key_value`` projection is ``hidden x (n_heads + 2·n_kv)·head_dim``: one K/V
    head with ``multi_query`` (Falcon-7B), ``num_kv_heads`` groups with
    ``new_decoder_architecture`` (Falcon-40B/180B), every head otherwise. head_dim is
    hidden_size / num_attention_heads. The MLP is GELU, 2 matrices of ``ffn_hidden_size``
    (4 x hidden_size by default). ``parallel_attn`` and ``alibi`` change no count.
    """
    n_heads = fields.whole("num_attention_heads")
    d_model = fields.whole("hidden_size")
    if d_model % n_heads:
        raise ValueError(f"config.json field 'hidden_size' must be a multiple of num_attention_heads="
                         f"{n_heads} for a falcon model (head_dim = hidden_size / heads), got {d_model}")
    new_architecture = fields.flag("new_decoder_architecture")
    multi_query = fields.flag("multi_query")
    fields.flag("parallel_attn"), fields.flag("alibi")   # checked; they change no count
    if new_architecture or not multi_query:
        key = "n_head_kv" if fields.has("n_head_kv") and not fields.has("num_kv_heads") else "num_kv_heads"
        n_kv = fields.whole(key, required=False, default=n_heads)
    else:
        n_kv = 1
    bias = fields.flag("bias")
    if bias:
        fields.notes.append("bias = true: the Q/K/V/O biases are counted, the MLP biases are not.")
    if new_architecture:
        fields.notes.append("Each layer's two LayerNorms (ln_attn, ln_mlp) are counted as two weight "
                            "vectors; their biases and the final LayerNorm's bias are not.")
    else:
        fields.notes.append("LayerNorm biases are not counted (d_model per LayerNorm).")
    return dict(n_layers=fields.whole("num_hidden_layers"), d_model=d_model, n_heads=n_heads,
                n_kv_heads=n_kv, d_head=d_model // n_heads, vocab_size=fields.whole("vocab_size"),
                tied_embeddings=fields.flag("tie_word_embeddings"), gated_mlp=False,
                d_ff=fields.whole("ffn_hidden_size", required=False, default=4 * d_model),
                attention_bias=bias)


def _local_experts(fields: _Fields, **local_rule) -> dict:
    """Mixtral and gpt-oss: every layer MoE, ``num_local_experts`` experts of ``intermediate_size`` each."""
    shape = _common(fields)
    per_expert = fields.whole("intermediate_size")
    window, local = _local_layers(fields, shape["n_layers"], **local_rule)
    shape.update(d_ff=per_expert, d_ff_expert=per_expert,
                 n_routed_experts=fields.whole("num_local_experts"),
                 experts_per_token=fields.whole("num_experts_per_tok"),
                 sliding_window=window, n_local_layers=local)
    return shape


def _mixtral(fields: _Fields) -> dict:
    return _local_experts(fields, every_layer=True)


def _qwen_moe(fields: _Fields) -> dict:
    shape = _common(fields)
    n_layers = shape["n_layers"]
    per_expert = fields.whole("moe_intermediate_size")
    step = fields.whole("decoder_sparse_step")
    dense_only = fields.layer_indices("mlp_only_layers", n_layers) or set()
    moe_layers = sum(1 for i in range(n_layers) if i not in dense_only and (i + 1) % step == 0)
    shared_size = fields.whole("shared_expert_intermediate_size", required=False, minimum=0)
    if shared_size % per_expert:
        raise ValueError(f"config.json field 'shared_expert_intermediate_size' must be a multiple "
                         f"of moe_intermediate_size={per_expert} for a {fields.family} model "
                         f"(the course counts shared experts in expert-sized units), got {shared_size}")
    dense_layers = n_layers - moe_layers
    _refuse_qwen_window(fields)
    # checked even when no layer is dense, so a malformed value never passes unseen
    dense_size = fields.whole("intermediate_size", required=bool(dense_layers))
    shape.update(d_ff=dense_size if dense_layers else 0,
                 d_ff_expert=per_expert, n_routed_experts=fields.whole("num_experts"),
                 experts_per_token=fields.whole("num_experts_per_tok"),
                 n_shared_experts=shared_size // per_expert, n_dense_layers=dense_layers,
                 attention_bias=fields.family == "qwen2_moe" or fields.flag("attention_bias"))
    return shape


def _qwen3_next(fields: _Fields) -> dict:
    """Qwen3-Next: Qwen3-MoE's experts (with a shared expert) and two token mixers.

    ``layer_types`` ("linear_attention" / "full_attention"), else every
    ``full_attention_interval``-th layer is full (transformers' ``Qwen3NextConfig``). Full layers
    are gated attention (Q's projection doubled for the output gate); the others are Gated
    DeltaNet, shaped by the ``linear_*`` fields.
    """
    shape = _qwen_moe(fields)
    n_layers = shape["n_layers"]
    kinds = fields.kinds("layer_types", n_layers, ("linear_attention", "full_attention"))
    if kinds is not None:
        linear = kinds.count("linear_attention")
    else:
        interval = fields.whole("full_attention_interval")
        linear = n_layers - n_layers // interval
    shape.update(attention_output_gate=True, n_linear_layers=linear,
                 linear_k_heads=fields.whole("linear_num_key_heads"),
                 linear_v_heads=fields.whole("linear_num_value_heads"),
                 linear_k_dim=fields.whole("linear_key_head_dim"),
                 linear_v_dim=fields.whole("linear_value_head_dim"),
                 linear_conv_kernel=fields.whole("linear_conv_kernel_dim"))
    return shape


def _deepseek(fields: _Fields) -> dict:
    shape = _common(fields)
    if shape["n_kv_heads"] != shape["n_heads"]:   # MLA: every head reads the one latent
        raise ValueError(f"config.json field 'num_key_value_heads' must equal num_attention_heads="
                         f"{shape['n_heads']} for a {fields.family} model (MLA has no KV-head groups), "
                         f"got {shape['n_kv_heads']}")
    if fields.whole("moe_layer_freq") != 1:
        raise ValueError(f"config.json field 'moe_layer_freq' must be 1 for a {fields.family} "
                         f"model (every layer after the dense ones is MoE)")
    _mtp_note(fields)
    shape.update(
        d_ff=fields.whole("intermediate_size"),
        d_ff_expert=fields.whole("moe_intermediate_size"),
        n_routed_experts=fields.whole("n_routed_experts"),
        experts_per_token=fields.whole("num_experts_per_tok"),
        n_shared_experts=fields.whole("n_shared_experts", minimum=0),
        n_dense_layers=fields.whole("first_k_dense_replace", minimum=0),
        kv_lora_rank=fields.whole("kv_lora_rank"),
        q_lora_rank=_q_lora_rank(fields),
        qk_rope_head_dim=fields.whole("qk_rope_head_dim"),
        qk_nope_head_dim=fields.whole("qk_nope_head_dim"),
        v_head_dim=fields.whole("v_head_dim"),
        d_head=fields.whole("qk_rope_head_dim") + fields.whole("qk_nope_head_dim"),
    )
    return shape


def _q_lora_rank(fields: _Fields) -> int:
    """``q_lora_rank``: null in the file is a full-rank Q (0, noted); a missing field takes the family's transformers
    default (1536 for deepseek_v2/v3), noted like every default."""
    if "q_lora_rank" in fields.config and fields.config["q_lora_rank"] is None:
        fields.notes.append("q_lora_rank is null: the queries are full rank (no low-rank Q projection).")
        return 0
    return fields.whole("q_lora_rank", required=False, minimum=0)


def _mtp_note(fields: _Fields) -> None:
    """Say that ``num_nextn_predict_layers`` multi-token-prediction layers are left out."""
    mtp = fields.whole("num_nextn_predict_layers", required=False, minimum=0)
    if mtp:
        fields.notes.append(f"The {mtp} multi-token-prediction layer(s) (num_nextn_predict_layers) "
                            f"are not counted; the Hub's safetensors total includes them.")


def _glm4_moe(fields: _Fields) -> dict:
    """GLM-4.5 / 4.5-Air (transformers' ``Glm4MoeAttention``, ``Glm4MoeMoE``): GQA with Q/K/V
    biases (no O bias), ``first_k_dense_replace`` dense layers, then MoE layers of
    ``n_routed_experts`` routed and ``n_shared_experts`` shared experts of
    ``moe_intermediate_size``."""
    shape = _common(fields)
    bias = fields.flag("attention_bias")
    if bias:
        fields.notes.append("Q/K/V biases counted with an O bias the model lacks (d_model per layer).")
    if fields.flag("use_qk_norm"):
        fields.notes.append("QK-norms not counted.")
    fields.notes.append("The routers' expert-score correction biases are not counted.")
    _mtp_note(fields)
    shape.update(d_ff=fields.whole("intermediate_size"),
                 d_ff_expert=fields.whole("moe_intermediate_size"),
                 n_routed_experts=fields.whole("n_routed_experts"),
                 experts_per_token=fields.whole("num_experts_per_tok"),
                 n_shared_experts=fields.whole("n_shared_experts", minimum=0),
                 n_dense_layers=fields.whole("first_k_dense_replace", minimum=0),
                 attention_bias=bias)
    return shape


def _llama4(fields: _Fields) -> dict:
    """Llama 4 text model (transformers' ``Llama4TextConfig``, ``Llama4TextMoe``).

    MoE layers are ``moe_layers`` if listed, else every ``interleave_moe_layer_step``-th layer
    (Scout: 1, all 48; Maverick: 2, the odd layers). Each has ``num_local_experts`` routed experts
    of ``intermediate_size`` and one shared expert of the same size; the other layers have a dense
    MLP of ``intermediate_size_mlp``. Chunked attention (RoPE layers; every
    ``no_rope_layer_interval``-th layer is NoPE and global) is modelled as a sliding window of
    ``attention_chunk_size``, the most a chunk holds.
    """
    shape = _common(fields)
    n_layers = shape["n_layers"]
    moe_layers = fields.layer_indices("moe_layers", n_layers)
    if moe_layers is None:
        step = fields.whole("interleave_moe_layer_step")
        moe_layers = set(range(step - 1, n_layers, step))
    if not moe_layers:
        raise ValueError("config.json fields 'moe_layers' / 'interleave_moe_layer_step' leave no MoE "
                         "layer in this llama4 model")
    dense = n_layers - len(moe_layers)
    kinds = fields.kinds("layer_types", n_layers, ("chunked_attention", "full_attention"))
    rope_layers = fields.wholes("no_rope_layers")
    if kinds is not None:
        chunked = kinds.count("chunked_attention")
    elif rope_layers:   # 1 = a RoPE layer, which attends within its chunk; 0 = NoPE, global
        if len(rope_layers) != n_layers or not set(rope_layers) <= {0, 1}:
            raise ValueError(f"config.json field 'no_rope_layers' must list 0 or 1 for each of the "
                             f"num_hidden_layers={n_layers} layers of a llama4 model")
        chunked = sum(rope_layers)
    else:
        interval = fields.whole("no_rope_layer_interval")
        chunked = n_layers - n_layers // interval
    chunk = fields.whole("attention_chunk_size", required=False, minimum=1)
    if not chunk:
        chunked = 0
    else:
        fields.notes.append(f"Chunked attention ({chunked} layers, chunks of {chunk:,} tokens) is "
                            f"modelled as a sliding window of {chunk:,}, the most a chunk holds.")
    if dense:
        fields.notes.append(f"The {dense} dense layers sit between MoE layers, not first; the counts "
                            f"are the same.")
    fields.notes.append("The QK-norm is a weightless L2 norm (nothing to count).")
    shape.update(d_ff=fields.whole("intermediate_size_mlp", required=bool(dense)),
                 d_ff_expert=fields.whole("intermediate_size"),
                 n_routed_experts=fields.whole("num_local_experts"),
                 experts_per_token=fields.whole("num_experts_per_tok"),
                 n_shared_experts=1, n_dense_layers=dense,
                 attention_bias=fields.flag("attention_bias"),
                 sliding_window=chunk if chunked else 0, n_local_layers=chunked)
    return shape


def _gpt_oss(fields: _Fields) -> dict:
    shape = _local_experts(fields, alternate=True)
    shape.update(attention_bias=fields.flag("attention_bias", default=True), attention_sinks=True)
    return shape


def _gemma(fields: _Fields) -> dict:
    shape = _common(fields)
    shape["d_ff"] = fields.whole("intermediate_size")
    if fields.family == "gemma2":
        window, local = _local_layers(fields, shape["n_layers"], alternate=True)
    else:
        window, local = _local_layers(fields, shape["n_layers"], pattern_key="sliding_window_pattern")
    shape.update(sliding_window=window, n_local_layers=local)
    return shape


#: The true/false fields some builder reads; :func:`_check_every_field` checks each one a file has.
_FLAGS = ("tie_word_embeddings", "attention_bias", "use_sliding_window", "multi_query", "parallel_attn",
          "new_decoder_architecture", "bias", "alibi", "use_qk_norm")


def _check_every_field(fields: _Fields) -> None:
    """Check each shape and flag field the file has, whether or not this family's builder used it
    (a dense size in an all-MoE model, ``num_kv_heads`` in a multi-query Falcon): a field the
    reader knows is never wrong unseen. The builders' own, stricter minimums still apply."""
    for key in _LIMITS:
        if fields.has(key):
            fields.whole(key, required=False, minimum=0)
    for key in _FLAGS:
        if fields.has(key):
            fields.flag(key)


_BUILDERS = {
    "llama": _dense, "mistral": _dense, "phi3": _dense, "qwen2": _dense, "qwen3": _dense,
    "olmo2": _dense, "olmo3": _dense, "falcon": _falcon, "mixtral": _mixtral,
    "qwen2_moe": _qwen_moe, "qwen3_moe": _qwen_moe, "qwen3_next": _qwen3_next,
    "deepseek_v2": _deepseek, "deepseek_v3": _deepseek, "kimi_k2": _deepseek,
    "glm4_moe": _glm4_moe, "llama4": _llama4, "llama4_text": _llama4, "gpt_oss": _gpt_oss,
    "gemma2": _gemma, "gemma3": _gemma, "gemma3_text": _gemma,
}

_NOT_COUNTED = {
    "phi3": "The fused qkv_proj and gate_up_proj hold the same weights as separate matrices.",
    "qwen2": "Q/K/V biases counted with an O bias the model lacks (d_model per layer).",
    "qwen2_moe": ("Q/K/V biases counted with an O bias the model lacks, and the shared-expert "
                  "gate (each d_model per layer) is not counted."),
    "qwen3": "QK-norms not counted.",
    "qwen3_moe": "QK-norms not counted.",
    "qwen3_next": ("QK-norms and the shared-expert gate (d_model per MoE layer) not counted; "
                   "the multi-token-prediction module (mtp.*) is not counted."),
    "olmo2": "QK-norm weights (n_heads·d_head + n_kv_heads·d_head per layer) not counted.",
    "olmo3": "QK-norm weights (n_heads·d_head + n_kv_heads·d_head per layer) not counted.",
    "gpt_oss": "Expert and router biases are not counted.",
    "gemma2": "Post-norms not counted.",
    "gemma3": "Post-norms and QK-norms not counted.",
    "gemma3_text": "Post-norms and QK-norms not counted.",
}


# ----------------------------------------------------------------------------- weight format

#: Bytes per value of ``torch_dtype`` (or ``dtype``) as transformers writes it.
_DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "half": 2, "float32": 4, "float": 4,
                "float8_e4m3fn": 1, "float8_e5m2": 1}

#: The parts of ``Model.params_breakdown`` that quantizers turn into low-bit matrices by default
#: (every linear layer but the output head); the embedding, norms and routers stay in the
#: unquantized dtype (DeepSeek-V3 keeps its gates in bf16; so do gpt-oss and Kimi K2).
_LINEAR_PARTS = ("attention", "linear_attention", "dense_mlp", "experts_routed", "experts_shared")

#: The fields that list modules a quantizer left alone, by method.
_SKIP_FIELDS = ("modules_to_not_convert", "ignore", "ignored_layers", "exclude_modules")


def _part_of(module: str) -> str | None:
    """The ``params_breakdown`` part that a module name (or ``re:`` pattern) of a skip list names."""
    name = module.removeprefix("re:")
    if "lm_head" in name:
        return "unembedding"
    if "embed" in name:
        return "embedding"
    if "linear_attn" in name:
        return "linear_attention"
    if "attn" in name or "attention" in name:
        return "attention"
    if "shared_expert" in name:
        return "experts_shared"
    if "router" in name or re.search(r"\.gate\$?$", name):
        return "router"
    if "expert" in name:
        return "experts_routed"
    if re.search(r"mlp\.(gate_up|gate|up|down)_proj", name):
        return "dense_mlp"
    return None


class _Quant:
    """The ``quantization_config`` object, read field by field with checks naming each field."""

    def __init__(self, quant: dict, family: str):
        self.quant, self.family = quant, family

    def _error(self, key, what, value):
        return ValueError(f"config.json field 'quantization_config.{key}' must be {what} for a "
                          f"{self.family} model, got {_describe(value)}")

    def whole(self, key, default, *, minimum=1, maximum=1 << 20) -> int:
        value = self.quant.get(key, default)
        if value is None:
            value = default
        if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
            raise self._error(key, f"a whole number from {minimum} to {maximum:,}", value)
        return value

    def text(self, key, default=None) -> str | None:
        value = self.quant.get(key, default)
        if value is not None and not isinstance(value, str):
            raise self._error(key, "a string", value)
        return value

    def flag(self, key, default) -> bool:
        value = self.quant.get(key, default)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self._error(key, "true or false", value)
        return value

    def skipped(self) -> set[str]:
        """The parts named by the method's list of modules left unquantized."""
        parts = set()
        for key in _SKIP_FIELDS:
            value = self.quant.get(key)
            if value is None:
                continue
            if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
                raise self._error(key, "a list of module names", value)
            parts |= {part for part in map(_part_of, value) if part}
        return parts

    def block(self, key) -> tuple[int, int] | None:
        value = self.quant.get(key)
        if value is None:
            return None
        if (not isinstance(value, list) or len(value) != 2 or not all(
                isinstance(side, int) and not isinstance(side, bool) and 1 <= side <= 1 << 16
                for side in value)):
            raise self._error(key, "a pair of block sides such as [128, 128]", value)
        return value[0], value[1]


def _dtype(config: dict, outer: dict, family: str) -> tuple[str | None, float]:
    """(``torch_dtype`` or ``dtype`` as written, its bytes per value), from the text model or else
    the multimodal wrapper; (None, 0) when the file states neither."""
    for where in (config, outer):
        for key in ("torch_dtype", "dtype"):
            value = where.get(key)
            if value is None:
                continue
            if not isinstance(value, str) or value.removeprefix("torch.") not in _DTYPE_BYTES:
                raise ValueError(f"config.json field {key!r} must be one of {sorted(_DTYPE_BYTES)} for a "
                                 f"{family} model, got {_describe(value)}")
            name = value.removeprefix("torch.")
            return name, _DTYPE_BYTES[name]
    return None, 0


def _scheme(quant: _Quant, dtype_bytes: float) -> tuple[str, float, tuple[str, ...], bool] | None:
    """(description, bytes per quantized value, parts quantized, output head quantized?) for the
    methods read; None for a method that is not.

    Bytes per value, scales included (the sources are the formats' own definitions):

    - ``fp8`` (DeepSeek-V3, README_WEIGHTS.md): 1 byte, plus one fp32 scale per
      ``weight_block_size`` block: 1 + 4 / (128·128) = 1.000244.
    - ``mxfp4`` (OCP Microscaling spec v1.0; gpt-oss): 4-bit values and one 8-bit scale per 32,
      4.25 bits = 0.53125 bytes; only the MoE experts.
    - ``awq`` / ``gptq``: ``bits``/8, plus per ``group_size`` group an fp16 scale and a packed
      ``bits``-wide zero point (AWQ without ``zero_point``: the scale alone). GPTQ's g_idx (4 bytes
      per input channel per matrix) is not counted; ``group_size`` -1 is one group per column, whose
      scales are negligible.
    - ``modelopt``: ``quant_algo`` FP8 (1 byte, per-tensor scales) or NVFP4 (4 bits plus an FP8
      scale per 16: 0.5625 bytes).
    - ``compressed-tensors``: one weight scheme in ``config_groups``: ``num_bits``/8 plus, for the
      ``group`` and ``tensor_group`` strategies, a scale per ``group_size`` (FP8 for 4-bit floats,
      NVFP4; else the model's dtype) and a zero point when not ``symmetric``; ``block`` adds an
      fp32 scale per ``block_structure``; ``channel`` and ``tensor`` scales are negligible.
    """
    method = quant.text("quant_method")
    if method == "fp8":
        block = quant.block("weight_block_size")
        fmt = quant.text("fmt", "e4m3")
        if block:
            return (f"fp8 ({fmt}), one fp32 scale per {block[0]}x{block[1]} block",
                    1 + 4 / (block[0] * block[1]), _LINEAR_PARTS, False)
        return f"fp8 ({fmt}), per-tensor scales", 1.0, _LINEAR_PARTS, False
    if method == "mxfp4":
        return ("mxfp4: 4-bit values, one 8-bit scale per 32 (4.25 bits)", 0.53125,
                ("experts_routed", "experts_shared"), False)
    if method in ("awq", "gptq"):
        bits = quant.whole("bits", 4, maximum=16)
        group = quant.whole("group_size", 128, minimum=-1)
        if group == 0:
            raise quant._error("group_size", "a whole number >= 1, or -1 (one group per column)", 0)
        zero = quant.flag("zero_point", True) if method == "awq" else True
        per_group = 2 + (bits / 8 if zero else 0)
        overhead = per_group / group if group > 0 else 0.0
        grouping = f"groups of {group}" if group > 0 else "one group per column"
        return (f"{method} int{bits}, {grouping}, an fp16 scale" + (" and a zero point" if zero else "")
                + " per group", bits / 8 + overhead, _LINEAR_PARTS,
                method == "gptq" and quant.flag("lm_head", False))
    if method == "modelopt":
        algo = quant.text("quant_algo")
        if algo == "FP8":
            return "fp8 (ModelOpt), per-tensor scales", 1.0, _LINEAR_PARTS, False
        if algo == "NVFP4":
            group = quant.whole("group_size", 16)
            return (f"nvfp4 (ModelOpt): 4-bit values, an fp8 scale per {group}", 0.5 + 1 / group,
                    _LINEAR_PARTS, False)
        return None
    if method == "compressed-tensors":
        return _compressed_tensors(quant, dtype_bytes)
    return None


def _compressed_tensors(quant: _Quant, dtype_bytes: float):
    groups = quant.quant.get("config_groups")
    if not isinstance(groups, dict) or not groups or not all(isinstance(g, dict) for g in groups.values()):
        raise quant._error("config_groups", "an object of quantization groups", groups)
    schemes = []
    for group in groups.values():
        weights = group.get("weights")
        if weights is None:
            continue
        if not isinstance(weights, dict):
            raise quant._error("config_groups.weights", "an object", weights)
        schemes.append(weights)
    if len(schemes) != 1:
        return None   # several weight schemes, or none: which modules get which is not modelled
    scheme = _Quant(schemes[0], quant.family)
    bits = scheme.whole("num_bits", 8, maximum=16)
    kind = scheme.text("type", "int")
    strategy = scheme.text("strategy", "tensor")
    symmetric = scheme.flag("symmetric", True)
    scale_bytes = 1 if (kind == "float" and bits == 4) else (dtype_bytes or 2)
    per_value = bits / 8
    if strategy in ("group", "tensor_group"):
        group = scheme.whole("group_size", 128)
        per_value += (scale_bytes + (0 if symmetric else bits / 8)) / group
        grouping = f"a scale per {group}"
    elif strategy == "block":
        block = scheme.block("block_structure") or (128, 128)
        per_value += 4 / (block[0] * block[1])
        grouping = f"a scale per {block[0]}x{block[1]} block"
    else:
        grouping = f"{strategy} scales"
    fmt = quant.text("format", "") or ""
    return (f"compressed-tensors {fmt} {kind}{bits}, {grouping}".replace("  ", " "), per_value,
            _LINEAR_PARTS, False)


def _weight_format(model: models.Model, config: dict, outer: dict, family: str) -> tuple[str, float, str]:
    """(``weight_format``, ``weight_bytes_per_param``, a note) for ``model`` built from ``config``
    (the text model's fields; ``outer`` is the whole file, which holds ``quantization_config``).

    Unquantized parts take ``torch_dtype``'s bytes. Quantized parts are those the method turns
    into low-bit matrices (:func:`_scheme`) less those its skip list names
    (``modules_to_not_convert``, ``ignore``, ``exclude_modules``...): a part counts as skipped when
    any module of it is named (Kimi K2's first, dense layer; every attention layer). The
    average over ``params_breakdown`` is the bytes per parameter. (0, "") when the file states
    neither a dtype nor a quantization read here.
    """
    dtype, dtype_bytes = _dtype(config, outer, family)
    raw = config.get("quantization_config", outer.get("quantization_config"))
    if raw is None:
        if not dtype:
            return "", 0.0, "No torch_dtype in the file: the weight format is not known."
        return dtype, float(dtype_bytes), f"Weights: {dtype} (torch_dtype)."
    if not isinstance(raw, dict):
        raise ValueError(f"config.json field 'quantization_config' must be an object for a {family} model")
    quant = _Quant(raw, family)
    scheme = _scheme(quant, dtype_bytes)
    method = quant.text("quant_method")
    if scheme is None:
        return (f"{method} (not read)", 0.0,
                f"quantization_config quant_method {method!r:.40} is not read: the weight bytes are not known.")
    description, per_value, parts, head = scheme
    rest_bytes = dtype_bytes or 2
    quantized = (set(parts) | ({"unembedding"} if head else set())) - quant.skipped()
    breakdown = model.params_breakdown()
    total = sum(count * (per_value if part in quantized else rest_bytes) for part, count in breakdown.items())
    shown = sorted(part for part in quantized if breakdown.get(part))
    rest = dtype or "bfloat16 (no torch_dtype in the file; assumed)"
    text = f"{description} on {', '.join(shown) or 'no part'}; {rest} elsewhere"
    return (text, total / model.params_total,
            f"Weights (quantization_config, {method}): {text}; {per_value:.5g} bytes per quantized value.")


# ----------------------------------------------------------------------------- the reader

def _with_checkpoint_format(model: models.Model, *, torch_dtype: str, quantization_config: dict | None = None,
                           family: str = "llama") -> models.Model:
    """``model`` with the stored format a checkpoint's config.json states (``torch_dtype`` and
    ``quantization_config``), read exactly as :func:`from_hf_config` reads them (:func:`_weight_format`): so a
    preset planned in its release's format and that release's config.json agree (the engineer's walk, finding 11)."""
    if not isinstance(model, models.Model):
        raise ValueError(f"model must be a models.Model, got {_describe(model)}")
    if not isinstance(torch_dtype, str):
        raise ValueError(f"torch_dtype must be a str like 'bfloat16', got {_describe(torch_dtype)}")
    stub = {"torch_dtype": torch_dtype}
    if quantization_config is not None:
        stub["quantization_config"] = quantization_config
    description, bytes_per_param, note = _weight_format(model, stub, stub, family)
    return dataclasses.replace(model, notes=" ".join(part for part in (model.notes, note) if part),
                               weight_format=description, weight_bytes_per_param=bytes_per_param)


def format_label(weight_format: str) -> str:
    """A stored format as the planner prints it, by name: "bfloat16" -> "BF16"; "mxfp4: 4-bit values, … on
    experts_routed; bfloat16 elsewhere" -> "MXFP4 on routed experts, BF16 elsewhere"; "" -> ""."""
    if not isinstance(weight_format, str):
        raise ValueError(f"weight_format must be a str, got {_describe(weight_format)}")
    def name(text: str) -> str:
        key = text.strip().lower()
        named = {"bfloat16": "BF16", "float16": "FP16", "float32": "FP32", "float8": "FP8"}
        if key in named:
            return named[key]
        for word in ("nvfp4", "mxfp4", "fp8", "int4", "int8", "awq", "gptq"):
            if word in key:
                return {"awq": "INT4 (AWQ)", "gptq": "INT4 (GPTQ)"}.get(word, word.upper()) + (
                    " (AWQ)" if word == "int4" and "awq" in key else " (GPTQ)" if word == "int4" and "gptq" in key
                    else "")
        return text.strip()
    text = weight_format.strip()
    if not text:
        return ""
    parts = re.fullmatch(r"(.*?) on ([\w, ]+); (\w+) elsewhere", text)
    if parts:
        where = ", ".join(part.strip().replace("experts_routed", "routed experts").replace("experts_shared",
                                                                                          "shared experts")
                          .replace("_", " ") for part in parts.group(2).split(","))
        return f"{name(parts.group(1))} on {where}, {name(parts.group(3))} elsewhere"
    return name(text)


def from_hf_config(source, *, name: str | None = None) -> models.Model:
    """A :class:`~lecture_lib.models.Model` from a Hugging Face ``config.json``: a path, the folder
    that holds it, or the parsed dict.

    ``name`` defaults to the config's ``_name_or_path``, else its ``model_type``. The counts then
    follow the course's rules (:mod:`lecture_lib.models`): ``params_total``, ``params_active`` and
    ``kv_bytes_per_token`` of the result match the course's presets exactly when given their
    published configs, and published totals within 1 % for the other families
    (tests/test_hf_config.py). ``notes`` says what was read, which transformers defaults filled
    missing fields and what is not counted; ``weight_format`` and ``weight_bytes_per_param`` give
    the stored format.
    """
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise ValueError(f"name must be a non-empty string or None, got {_describe(name)}")
    config = read_config(source)   # its errors name source
    try:
        text, family, wrapper = _text_model(config)
        fields = _Fields(text, family)
        shape = _BUILDERS[family](fields)
        _check_every_field(fields)
        if name is None:
            name = config.get("_name_or_path") or config.get("model_type") or family
            if not isinstance(name, str) or not name.strip():
                raise ValueError(f"config.json field '_name_or_path' must be a non-empty string, got "
                                 f"{_describe(name)}")
        try:
            model = models.Model(name=name.strip()[:200], source="Hugging Face config.json", **shape)
        except ValueError as error:
            raise ValueError(f"this {family} config.json describes no valid model: {error}") from None
        description, bytes_per_param, weight_note = _weight_format(model, text, config, family)
        notes = [f"Read from a Hugging Face config.json (model_type {family})."]
        if wrapper:
            notes.append(f"The text model of a {wrapper} file (text_config); the vision tower is left out.")
        notes += [_NOT_COUNTED.get(family, "")] + fields.notes
        if fields.defaulted:
            notes.append("Not in the file, so transformers' defaults were used: "
                         + ", ".join(f"{key}={value!r}" for key, value in fields.defaulted.items()) + ".")
        notes.append(weight_note)
        return dataclasses.replace(model, notes=" ".join(note for note in notes if note),
                                   weight_format=description, weight_bytes_per_param=bytes_per_param)
    except ValueError as error:   # what is wrong is inside the config the caller passed: say so
        raise ValueError(f"source: {error}") from None
