"""Build a :class:`~lecture_lib.models.Model` from a Hugging Face ``config.json``.

Bring your own model: ``hf_config.from_hf_config("path/to/config.json")`` (or the parsed dict) reads
the shapes the course needs and nothing else. It knows these families, by ``model_type``:

==================  =======================================================================
family              what it reads beyond the common fields
==================  =======================================================================
llama               GQA (``num_key_value_heads``); Llama 2, 3, 3.1, 3.2
mistral             GQA; ``sliding_window`` on every layer when set (Mistral 7B v0.1: 4096)
mixtral             MoE: ``num_local_experts``, ``num_experts_per_tok``; ``intermediate_size``
                    is per expert
qwen2, qwen3        dense; Qwen2 has Q/K/V biases
qwen2_moe,          MoE: ``num_experts``, ``moe_intermediate_size``, Qwen2-MoE's
qwen3_moe           ``shared_expert_intermediate_size``, ``decoder_sparse_step``, ``mlp_only_layers``
deepseek_v2,        MLA (``kv_lora_rank``, ``q_lora_rank``, the rope/nope/v head dims), dense first
deepseek_v3,        layers (``first_k_dense_replace``), shared experts (``n_shared_experts``)
kimi_k2
gpt_oss             MoE, biases, attention sinks, banded layers from ``layer_types``
gemma2, gemma3,     ``head_dim`` != hidden/heads, local layers (``layer_types`` or
gemma3_text         ``sliding_window_pattern``), tied embeddings; Gemma 3's ``text_config``
==================  =======================================================================

Where a published file leaves a field out, the family's default in Hugging Face ``transformers``
(the ``configuration_<family>.py`` that reads the file) applies; ``FAMILY_DEFAULTS`` lists each one
used. Unknown fields are ignored. The file is untrusted input: it is read as JSON only (never
evaluated), capped in size, and every field is checked for type and range, so a wrong or absurd
value is a ``ValueError`` that names the field and the family.

What the course's ``Model`` does not represent is left out and said so in ``Model.notes``: Qwen2's
missing O-projection bias (``attention_bias`` adds Q/K/V/O biases; the O bias is d_model per layer,
under 0.01 %), Qwen2-MoE's shared-expert gate (d_model per layer), the QK-norms and extra norms of
Qwen3 and Gemma, expert and router biases, and multi-token-prediction modules.
"""

from __future__ import annotations

import json
import os
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
    "decoder_sparse_step": 10_000, "moe_layer_freq": 10_000,
}

FAMILIES = ("llama", "mistral", "mixtral", "qwen2", "qwen3", "qwen2_moe", "qwen3_moe",
            "deepseek_v2", "deepseek_v3", "kimi_k2", "gpt_oss", "gemma2", "gemma3", "gemma3_text")

#: Defaults from transformers' configuration classes (v4.57, ``src/transformers/models/<family>/
#: configuration_<family>.py``) for fields that published files sometimes omit.
FAMILY_DEFAULTS = {
    "llama": {"tie_word_embeddings": False, "attention_bias": False},
    "mistral": {"tie_word_embeddings": False, "sliding_window": None},
    "mixtral": {"tie_word_embeddings": False, "sliding_window": None},
    "qwen2": {"tie_word_embeddings": False, "use_sliding_window": False},
    "qwen3": {"tie_word_embeddings": False, "attention_bias": False, "use_sliding_window": False},
    "qwen2_moe": {"tie_word_embeddings": False, "decoder_sparse_step": 1, "mlp_only_layers": [],
                  "shared_expert_intermediate_size": 0, "use_sliding_window": False},
    "qwen3_moe": {"tie_word_embeddings": False, "attention_bias": False, "decoder_sparse_step": 1,
                  "mlp_only_layers": [], "use_sliding_window": False},
    "deepseek_v2": {"tie_word_embeddings": False, "first_k_dense_replace": 0, "moe_layer_freq": 1,
                    "n_shared_experts": 0},
    "deepseek_v3": {"tie_word_embeddings": False, "first_k_dense_replace": 0, "moe_layer_freq": 1,
                    "n_shared_experts": 0},
    "kimi_k2": {"tie_word_embeddings": False, "first_k_dense_replace": 0, "moe_layer_freq": 1,
                "n_shared_experts": 0},
    "gpt_oss": {"tie_word_embeddings": False, "sliding_window": 128},
    "gemma2": {"tie_word_embeddings": True, "sliding_window": 4096, "vocab_size": 256000},
    "gemma3_text": {"tie_word_embeddings": True, "sliding_window": 4096, "vocab_size": 262208,
                    "sliding_window_pattern": 6},
}
FAMILY_DEFAULTS["gemma3"] = FAMILY_DEFAULTS["gemma3_text"]


# ----------------------------------------------------------------------------- reading the file

def read_config(source) -> dict:
    """``source`` as a config dict: a dict is used as given; a path is read as JSON.

    The path must be a regular file (not a directory, FIFO or device) of at most
    ``MAX_FILE_BYTES``; NaN and Infinity literals and nesting too deep to parse are refused. Every
    error names ``source``.
    """
    if isinstance(source, dict):
        if not source or not all(isinstance(key, str) for key in source):
            raise ValueError(f"source must be a config dict of named fields (as config.json holds), got "
                             f"{_describe(source)}")
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
    except (OSError, ValueError) as error:   # missing, no permission, a name too long or with a NUL byte
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
        data = json.loads(text, parse_constant=lambda name: _refuse_constant(where, name))
    except RecursionError:
        raise ValueError(f"{where} is nested too deeply to be a config.json") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{where} is not valid JSON: {error.msg} at line {error.lineno}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{where} must hold a JSON object, got a {type(data).__name__}")
    return data


# ----------------------------------------------------------------------------- checked fields

class _Fields:
    """The config's fields, read with the family's defaults and checked by name."""

    def __init__(self, config: dict, family: str):
        self.config, self.family = config, family
        self.defaults = FAMILY_DEFAULTS.get(family, {})

    def _raw(self, key, required):
        if key in self.config and self.config[key] is not None:
            return self.config[key]
        if key in self.defaults:
            return self.defaults[key]
        if required:
            raise ValueError(f"config.json field {key!r} is required for a {self.family} model "
                             f"and is missing")
        return None

    def whole(self, key, *, required=True, minimum=1, default=0) -> int:
        value = self._raw(key, required)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (
                isinstance(value, float) and not value.is_integer()):
            raise ValueError(f"config.json field {key!r} must be a whole number for a "
                             f"{self.family} model, got {value!r:.60}")
        value = int(value)
        limit = _LIMITS.get(key, 10**9)
        if not minimum <= value <= limit:
            raise ValueError(f"config.json field {key!r} must be between {minimum} and {limit:,} "
                             f"for a {self.family} model, got {value:,}")
        return value

    def flag(self, key, *, default=False) -> bool:
        value = self._raw(key, required=False)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise ValueError(f"config.json field {key!r} must be true or false for a "
                             f"{self.family} model, got {value!r:.60}")
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


def _family(config: dict) -> str:
    family = config.get("model_type")
    if not isinstance(family, str) or not family:
        raise ValueError("config.json field 'model_type' is required and must be a string "
                         f"naming the family; known: {', '.join(FAMILIES)}")
    if family not in FAMILIES:
        raise ValueError(f"config.json model_type {family!r:.60} is not a family the course reads; "
                         f"known: {', '.join(FAMILIES)}")
    return family


def _local_layers(fields: _Fields, n_layers: int, *, every_layer: bool = False,
                  pattern_key: str | None = None, alternate: bool = False) -> tuple[int, int]:
    """(sliding_window, number of local layers) from ``layer_types`` or the family's rule."""
    layer_types = fields.strings("layer_types")
    window = fields.whole("sliding_window", required=False, minimum=1)
    if layer_types is not None:
        if len(layer_types) != n_layers:
            raise ValueError(f"config.json field 'layer_types' must list num_hidden_layers="
                             f"{n_layers} layers for a {fields.family} model, got {len(layer_types)}")
        local = sum(kind == "sliding_attention" for kind in layer_types)
    elif every_layer:
        local = n_layers if window else 0
    elif pattern_key:
        pattern = fields.whole(pattern_key)
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
    head_dim = fields.whole("head_dim", required=False, default=0)
    if not head_dim:
        if d_model % n_heads:
            raise ValueError(f"config.json field 'head_dim' is required for this {fields.family} "
                             f"model: hidden_size={d_model} is not a multiple of "
                             f"num_attention_heads={n_heads}")
        head_dim = d_model // n_heads
    return dict(n_layers=fields.whole("num_hidden_layers"), d_model=d_model, n_heads=n_heads,
                n_kv_heads=n_kv, d_head=head_dim, vocab_size=fields.whole("vocab_size"),
                tied_embeddings=fields.flag("tie_word_embeddings"))


def _dense(fields: _Fields) -> dict:
    shape = _common(fields)
    shape["d_ff"] = fields.whole("intermediate_size")
    family = fields.family
    if family == "qwen2":
        shape["attention_bias"] = True
    elif family in ("llama", "qwen3"):
        shape["attention_bias"] = fields.flag("attention_bias")
    if family == "mistral":
        window, local = _local_layers(fields, shape["n_layers"], every_layer=True)
    elif family.startswith("qwen") and fields.flag("use_sliding_window"):
        raise ValueError(f"config.json field 'use_sliding_window' = true is not supported for a "
                         f"{family} model (its max_window_layers rule is not modelled)")
    else:
        window, local = 0, 0
    shape.update(sliding_window=window, n_local_layers=local)
    return shape


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
    dense_only = set(fields.wholes("mlp_only_layers"))
    if any(not 0 <= index < n_layers for index in dense_only):
        raise ValueError(f"config.json field 'mlp_only_layers' must hold layer indices below "
                         f"num_hidden_layers={n_layers} for a {fields.family} model")
    moe_layers = sum(1 for i in range(n_layers) if i not in dense_only and (i + 1) % step == 0)
    shared_size = fields.whole("shared_expert_intermediate_size", required=False, minimum=0)
    if shared_size % per_expert:
        raise ValueError(f"config.json field 'shared_expert_intermediate_size' must be a multiple "
                         f"of moe_intermediate_size={per_expert} for a {fields.family} model "
                         f"(the course counts shared experts in expert-sized units), got {shared_size}")
    dense_layers = n_layers - moe_layers
    shape.update(d_ff=fields.whole("intermediate_size") if dense_layers else 0,
                 d_ff_expert=per_expert, n_routed_experts=fields.whole("num_experts"),
                 experts_per_token=fields.whole("num_experts_per_tok"),
                 n_shared_experts=shared_size // per_expert, n_dense_layers=dense_layers,
                 attention_bias=fields.family == "qwen2_moe" or fields.flag("attention_bias"))
    return shape


def _deepseek(fields: _Fields) -> dict:
    shape = _common(fields)
    if fields.whole("moe_layer_freq") != 1:
        raise ValueError(f"config.json field 'moe_layer_freq' must be 1 for a {fields.family} "
                         f"model (every layer after the dense ones is MoE)")
    shape.update(
        d_ff=fields.whole("intermediate_size"),
        d_ff_expert=fields.whole("moe_intermediate_size"),
        n_routed_experts=fields.whole("n_routed_experts"),
        experts_per_token=fields.whole("num_experts_per_tok"),
        n_shared_experts=fields.whole("n_shared_experts", minimum=0),
        n_dense_layers=fields.whole("first_k_dense_replace", minimum=0),
        kv_lora_rank=fields.whole("kv_lora_rank"),
        q_lora_rank=fields.whole("q_lora_rank", required=False, minimum=0),   # null: full-rank Q
        qk_rope_head_dim=fields.whole("qk_rope_head_dim"),
        qk_nope_head_dim=fields.whole("qk_nope_head_dim"),
        v_head_dim=fields.whole("v_head_dim"),
        d_head=fields.whole("qk_rope_head_dim") + fields.whole("qk_nope_head_dim"),
    )
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


_BUILDERS = {
    "llama": _dense, "mistral": _dense, "qwen2": _dense, "qwen3": _dense, "mixtral": _mixtral,
    "qwen2_moe": _qwen_moe, "qwen3_moe": _qwen_moe, "deepseek_v2": _deepseek,
    "deepseek_v3": _deepseek, "kimi_k2": _deepseek, "gpt_oss": _gpt_oss, "gemma2": _gemma,
    "gemma3": _gemma, "gemma3_text": _gemma,
}

_NOT_COUNTED = {
    "qwen2": "Q/K/V biases counted with an O bias the model lacks (d_model per layer).",
    "qwen2_moe": ("Q/K/V biases counted with an O bias the model lacks, and the shared-expert "
                  "gate (each d_model per layer) is not counted."),
    "qwen3": "QK-norms not counted.",
    "qwen3_moe": "QK-norms not counted.",
    "deepseek_v3": "The multi-token-prediction module (num_nextn_predict_layers) is not counted.",
    "gpt_oss": "Expert and router biases are not counted.",
    "gemma2": "Post-norms not counted.",
    "gemma3": "Post-norms and QK-norms not counted; the vision tower is left out.",
    "gemma3_text": "Post-norms and QK-norms not counted.",
}


def from_hf_config(source, *, name: str | None = None) -> models.Model:
    """A :class:`~lecture_lib.models.Model` from a Hugging Face ``config.json`` (path or dict).

    ``name`` defaults to the config's ``_name_or_path``, else its ``model_type``. The counts then
    follow the course's rules (:mod:`lecture_lib.models`): ``params_total``, ``params_active`` and
    ``kv_bytes_per_token`` of the result match the course's presets exactly when given their
    published configs (tests/test_hf_config.py).
    """
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise ValueError(f"name must be a non-empty string or None, got {_describe(name)}")
    config = read_config(source)   # its errors name source
    try:
        family = _family(config)
        fields_config = config
        if family == "gemma3" and "text_config" in config:
            if not isinstance(config["text_config"], dict):
                raise ValueError("config.json field 'text_config' must be an object for a gemma3 model")
            fields_config = dict(config["text_config"])
        fields = _Fields(fields_config, family)
        shape = _BUILDERS[family](fields)
        if name is None:
            name = config.get("_name_or_path") or family
            if not isinstance(name, str) or not name.strip():
                raise ValueError(f"config.json field '_name_or_path' must be a non-empty string, got "
                                 f"{_describe(name)}")
        notes = (f"Read from a Hugging Face config.json (model_type {family}). "
                 + _NOT_COUNTED.get(family, ""))
        try:
            return models.Model(name=name.strip()[:200], source="Hugging Face config.json",
                                notes=notes.strip(), **shape)
        except ValueError as error:
            raise ValueError(f"this {family} config.json describes no valid model: {error}") from None
    except ValueError as error:   # what is wrong is inside the config the caller passed: say so
        raise ValueError(f"source: {error}") from None
