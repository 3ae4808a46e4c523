"""Model presets and their parameter and KV-cache accounting.

The lecture needs three numbers per model:

- ``params_total``: every weight. It sets HBM capacity and the bytes fetched per decode step.
- ``params_active``: the weights one token multiplies through. It sets FLOPs
  (forward FLOPs per token ≈ 2 · params_active).
- ``kv_bytes_per_token``: bytes of KV cache that one token of context adds.

    >>> from lecture_lib import models
    >>> m = models.get("deepseek-v3")
    >>> round(m.params_total / 1e9), round(m.params_active / 1e9, 1)
    (671, 36.6)
    >>> m.kv_bytes_per_token("bf16")          # (512 + 64) values x 61 layers x 2 bytes
    70272.0

Counting rules (formulas in each method's docstring):

- Attention (MHA/GQA/MQA): ``d_model·d_head·(2·n_heads + 2·n_kv_heads)`` per layer, which is
  Q, K, V and O. This is the scaling book's 2D(N+K)H (Ch. 4, "Transformers").
- MLA (DeepSeek-V2/V3, Kimi K2): the low-rank Q and KV projections, as in DeepSeek-V2
  (arXiv 2405.04434) section 2.1.
- MLP: 3·d_model·d_ff when gated (SwiGLU/GeGLU: gate, up, down), else 2·d_model·d_ff.
  Forgetting the third matrix is a known calculator bug (EleutherAI cookbook #36).
- MoE: every expert counts toward the total, but only ``experts_per_token`` routed experts
  count toward the active params. Shared experts and the router (d_model·n_routed_experts per
  MoE layer) count toward both.
- Norms: two RMSNorm vectors per layer plus the final norm, and for MLA the two latent norms.
  Extra norms are not counted (Gemma 3's post-norms, Qwen3's and Gemma 3's QK-norm); they
  are under 0.01 % of the total.
- Biases: Q/K/V/O biases and per-head attention sinks are counted when a preset sets them
  (gpt-oss). Expert and router biases are not (gpt-oss: about 0.04 B, 0.03 %).
- Linear attention (Qwen3-Next's Gated DeltaNet): ``n_linear_layers`` layers mix tokens with a
  fixed-size recurrent state instead of softmax attention. Their weights are counted by
  :meth:`Model.linear_attention_params_per_layer`; they add no KV per token, only a fixed state
  per sequence (:meth:`Model.state_bytes_per_sequence`).
- Embeddings: ``vocab_size·d_model`` for the input table, and the same again for the output
  head unless tied. The input table is in the total but **not** in the active params, since a
  lookup reads one row and does no FLOPs. The output head is in both.

Publishers differ on that last point. DeepSeek (README_WEIGHTS.md: "36.6B, including 0.9B for
the output head") and OpenAI (gpt-oss model card, Table 1) leave the input embedding out of their
active counts; a dense model's headline size keeps it in. Each preset records its publisher's
convention in ``published_active_includes_embedding``, so :meth:`Model.vs_published` compares
like with like.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass, field

from .catalogue import Catalogue, loose_name

#: Bytes per stored value for the usual number formats. Block-scaled formats carry a little
#: more (MXFP4 is 4.25 bits per value); pass the exact number if that matters.
BYTES_PER_VALUE = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "fp4": 0.5}

_REQUIRED_SIZES = ("n_layers", "d_model", "n_heads", "n_kv_heads", "d_head", "vocab_size")
_OPTIONAL_SIZES = ("d_ff", "n_routed_experts", "n_shared_experts", "experts_per_token",
                   "d_ff_expert", "n_dense_layers", "kv_lora_rank", "q_lora_rank",
                   "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim", "sliding_window",
                   "n_local_layers", "n_linear_layers", "linear_k_heads", "linear_v_heads",
                   "linear_k_dim", "linear_v_dim", "linear_conv_kernel")
_LINEAR_SHAPE = ("linear_k_heads", "linear_v_heads", "linear_k_dim", "linear_v_dim",
                 "linear_conv_kernel")
_FLAGS = ("gated_mlp", "tied_embeddings", "attention_bias", "attention_sinks",
          "attention_output_gate", "published_active_includes_embedding")


def _describe(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _whole(name: str, value, *, minimum: int, maximum: int = 10**12) -> int:
    """``value`` as an int if it is a whole number in [``minimum``, ``maximum``] (bools refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not minimum <= value <= maximum:
        raise ValueError(f"{name} must be an int from {minimum} to {maximum:,}, got {_describe(value)}")
    return int(value)


#: The fewest bytes a stored value may take: half a bit. Below it a byte count is a typo (1e-320 is no format), and
#: the sizes it gives underflow.
MIN_BYTES_PER_VALUE = 1 / 16


def _bytes_per(name: str, value) -> float:
    """A positive, finite byte count, or a format name from :data:`BYTES_PER_VALUE`."""
    if isinstance(value, str):
        key = value.strip().lower()
        if key in BYTES_PER_VALUE:
            return BYTES_PER_VALUE[key]
        raise ValueError(f"{name} must be a positive number of bytes or one of "
                         f"{sorted(BYTES_PER_VALUE)}, got {_describe(value)}")
    try:
        as_float = math.nan if isinstance(value, bool) or not isinstance(value, numbers.Real) else float(value)
    except OverflowError:   # 10**400
        as_float = math.inf
    if not math.isfinite(as_float) or as_float < MIN_BYTES_PER_VALUE or as_float > 64:
        raise ValueError(f"{name} must be a number of bytes from {MIN_BYTES_PER_VALUE} (half a bit) to 64 (or one "
                         f"of {sorted(BYTES_PER_VALUE)}), got {_describe(value)}")
    return as_float


@dataclass(frozen=True, kw_only=True)
class Model:
    """A decoder-only transformer's shapes, with sources.

    Sizes follow the Hugging Face ``config.json`` names loosely:

    - ``d_ff``: the intermediate size of a *dense* MLP layer (``intermediate_size``). It may be
      0 for a model whose every layer is MoE.
    - ``d_head``: the per-head dimension as published (``head_dim``). It is never derived from
      d_model / n_heads, because many models differ (Gemma 3 27B: 5376 / 32 = 168, but
      head_dim = 128).
    - MoE: ``n_routed_experts``, ``n_shared_experts``, ``experts_per_token`` (routed top-k),
      ``d_ff_expert`` (per-expert intermediate size; shared experts use the same size), and
      ``n_dense_layers`` (leading layers with a dense MLP; DeepSeek's ``first_k_dense_replace``).
    - MLA: ``kv_lora_rank`` (latent KV width), ``q_lora_rank`` (0 = full-rank Q),
      ``qk_rope_head_dim``, ``qk_nope_head_dim``, ``v_head_dim``. For MLA models ``n_kv_heads``
      and ``d_head`` are recorded but not used in any count.
    - Local attention: ``n_local_layers`` layers attend to the last ``sliding_window`` tokens
      only (Gemma 3: 5 local : 1 global, window 1024; gpt-oss: alternating, window 128).
    - ``attention_bias`` adds Q/K/V/O biases. ``attention_sinks`` adds one learned logit per
      head per layer (gpt-oss).
    - Cross-layer KV sharing: ``kv_share_group`` consecutive layers (of the same kind, local or
      global) read one shared KV cache, so only one of them stores it (Cross-Layer Attention,
      Brandon et al. 2024, arXiv 2405.12981; Character.AI's serving note of 2024-06-20 shares KV
      across 2-3 neighbouring layers). 1 = no sharing. Parameter counts are unchanged.
    - ``attention_output_gate``: Q's projection is twice as wide and its second half gates the
      attention output (Qwen3-Next's gated attention), so each attention layer has
      ``d_model·n_heads·d_head`` more weights. The KV cache is unchanged.
    - Linear attention: ``n_linear_layers`` layers (Qwen3-Next: 3 of every 4) replace softmax
      attention with Gated DeltaNet (Yang et al. 2024, arXiv 2412.06464), shaped by
      ``linear_k_heads``, ``linear_v_heads``, ``linear_k_dim``, ``linear_v_dim`` and
      ``linear_conv_kernel``. They store no KV per token but a fixed state per sequence. Local
      layers (``n_local_layers``) are counted among the other, softmax-attention layers.
    - Sparse attention: ``attention_topk`` > 0 means each new token attends to (and reads) at most
      that many earlier tokens per layer, picked by an indexer (DeepSeek-V3.2's DSA, index_topk
      = 2048). Every token is still *stored*; only the bytes *read* and the attention FLOPs shrink.
      The indexer's own key cache (about 8 KB per token for DeepSeek-V3.2, more than the sparse
      read itself) and weights are not counted here; :func:`lecture_lib.context.kv_bytes_read` adds
      the cache.
    - Weight format of a published checkpoint (set by :func:`lecture_lib.hf_config.from_hf_config`
      from ``torch_dtype`` and ``quantization_config``): ``weight_format`` says in words what is
      stored (e.g. "fp8 (e4m3), one fp32 scale per 128x128 block, on ..."), and
      ``weight_bytes_per_param`` is the average stored bytes per parameter over the whole model,
      scales included (0 = not known). :attr:`stored_weight_bytes` multiplies it out.
    """

    name: str
    n_layers: int
    d_model: int
    d_ff: int
    n_heads: int
    n_kv_heads: int
    d_head: int
    vocab_size: int
    gated_mlp: bool = True
    tied_embeddings: bool = False
    # Mixture of experts
    n_routed_experts: int = 0
    n_shared_experts: int = 0
    experts_per_token: int = 0
    d_ff_expert: int = 0
    n_dense_layers: int = 0
    # Multi-head latent attention
    kv_lora_rank: int = 0
    q_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    qk_nope_head_dim: int = 0
    v_head_dim: int = 0
    # Attention pattern and extras
    sliding_window: int = 0
    n_local_layers: int = 0
    attention_bias: bool = False
    attention_sinks: bool = False
    attention_output_gate: bool = False
    # Linear-attention (Gated DeltaNet) layers: a fixed state per sequence instead of KV per token
    n_linear_layers: int = 0
    linear_k_heads: int = 0
    linear_v_heads: int = 0
    linear_k_dim: int = 0
    linear_v_dim: int = 0
    linear_conv_kernel: int = 0
    # KV sharing across layers and sparse attention (Chapter 6; defaults change nothing)
    kv_share_group: int = 1
    attention_topk: int = 0
    # Metadata: published figures (0 = not published) and where every number came from
    published_params_total: float = field(default=0, repr=False)
    published_params_active: float = field(default=0, repr=False)
    published_active_includes_embedding: bool = field(default=False, repr=False)
    source: str = field(default="", repr=False)
    notes: str = field(default="", repr=False)
    # What a published checkpoint stores (0 = not known); see the class docstring
    weight_format: str = field(default="", repr=False)
    weight_bytes_per_param: float = field(default=0, repr=False)

    def __post_init__(self):
        set_ = object.__setattr__   # the dataclass is frozen; normalise ints once, here
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"name must be a non-empty str, got {_describe(self.name)}")
        for name in _REQUIRED_SIZES:
            set_(self, name, _whole(name, getattr(self, name), minimum=1))
        for name in _OPTIONAL_SIZES:
            set_(self, name, _whole(name, getattr(self, name), minimum=0))
        for name in _FLAGS:
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False, "
                                 f"got {_describe(getattr(self, name))}")
        for name in ("published_params_total", "published_params_active"):
            value = getattr(self, name)
            try:      # compared as a Python float: a float16 would overflow casting 1e15 (and warn)
                as_float = float(value) if isinstance(value, numbers.Real) and not isinstance(value, bool) else None
            except OverflowError:                                   # 10**400
                as_float = math.inf
            if as_float is None or not (as_float == 0 or 1 <= as_float <= 1e15):   # also refuses NaN and inf
                raise ValueError(f"{name} must be 0 (not published) or a parameter count from 1 to 1e15, "
                                 f"got {_describe(value)}")
            set_(self, name, float(value))
        bytes_per_param = self.weight_bytes_per_param
        if (isinstance(bytes_per_param, bool) or not isinstance(bytes_per_param, numbers.Real)
                or not (bytes_per_param == 0 or 0 < bytes_per_param <= 64)):
            raise ValueError(f"weight_bytes_per_param must be 0 (not known) or a number of bytes above 0 "
                             f"and up to 64, got {_describe(bytes_per_param)}")
        set_(self, "weight_bytes_per_param", float(bytes_per_param))
        for name in ("source", "notes", "weight_format"):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"{name} must be a str, got {_describe(getattr(self, name))}")
        set_(self, "kv_share_group", _whole("kv_share_group", self.kv_share_group, minimum=1))
        if self.kv_share_group > self.n_layers:
            raise ValueError(f"kv_share_group must be between 1 and n_layers={self.n_layers}, "
                             f"got {self.kv_share_group}")
        set_(self, "attention_topk", _whole("attention_topk", self.attention_topk, minimum=0))
        self._check_attention()
        self._check_moe()
        self._check_linear_attention()
        self._check_local_attention()

    def _check_attention(self):
        mla_parts = ("q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim")
        if self.kv_lora_rank:
            for name in mla_parts[1:]:
                if getattr(self, name) < 1:
                    raise ValueError(f"{name} must be >= 1 for an MLA model (kv_lora_rank > 0), "
                                     f"got {getattr(self, name)}")
            return
        for name in mla_parts:
            if getattr(self, name):
                raise ValueError(f"{name} must be 0 unless kv_lora_rank > 0 (MLA), "
                                 f"got {getattr(self, name)}")
        if self.n_kv_heads > self.n_heads or self.n_heads % self.n_kv_heads:
            raise ValueError(f"n_kv_heads must divide n_heads={self.n_heads} "
                             f"(1 = MQA, n_heads = MHA), got {self.n_kv_heads}")

    def _check_moe(self):
        if not (self.n_routed_experts or self.experts_per_token or self.d_ff_expert
                or self.n_shared_experts):
            if self.n_dense_layers:
                raise ValueError(f"n_dense_layers must be 0 for a dense model (no experts), "
                                 f"got {self.n_dense_layers}")
            if self.d_ff < 1:
                raise ValueError(f"d_ff must be >= 1 for a dense model, got {self.d_ff}")
            return
        if self.n_routed_experts < 1:
            raise ValueError(f"n_routed_experts must be >= 1 when any MoE field is set, "
                             f"got {self.n_routed_experts}")
        if not 1 <= self.experts_per_token <= self.n_routed_experts:
            raise ValueError(f"experts_per_token must be between 1 and n_routed_experts="
                             f"{self.n_routed_experts}, got {self.experts_per_token}")
        if self.d_ff_expert < 1:
            raise ValueError(f"d_ff_expert must be >= 1 for an MoE model, got {self.d_ff_expert}")
        if self.n_dense_layers >= self.n_layers:
            raise ValueError(f"n_dense_layers must be < n_layers={self.n_layers} "
                             f"(an MoE model needs an MoE layer), got {self.n_dense_layers}")
        if self.n_dense_layers and self.d_ff < 1:
            raise ValueError(f"d_ff must be >= 1 when n_dense_layers > 0, got {self.d_ff}")

    def _check_linear_attention(self):
        if not self.n_linear_layers:
            for name in _LINEAR_SHAPE:
                if getattr(self, name):
                    raise ValueError(f"{name} must be 0 unless n_linear_layers > 0, "
                                     f"got {getattr(self, name)}")
            return
        if self.n_linear_layers >= self.n_layers:
            raise ValueError(f"n_linear_layers must be below n_layers={self.n_layers} (at least one "
                             f"softmax-attention layer), got {self.n_linear_layers}")
        for name in _LINEAR_SHAPE:
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1 when n_linear_layers > 0, got {getattr(self, name)}")
        if self.linear_v_heads % self.linear_k_heads:
            raise ValueError(f"linear_v_heads must be a multiple of linear_k_heads={self.linear_k_heads}, "
                             f"got {self.linear_v_heads}")
        if self.kv_lora_rank:
            raise ValueError("n_linear_layers must be 0 for an MLA model (kv_lora_rank > 0)")

    def _check_local_attention(self):
        if self.sliding_window and not 1 <= self.n_local_layers <= self.n_attention_layers:
            raise ValueError(f"n_local_layers must be between 1 and the {self.n_attention_layers} "
                             f"softmax-attention layers when sliding_window > 0, got {self.n_local_layers}")
        if self.n_local_layers and not self.sliding_window:
            raise ValueError(f"sliding_window must be >= 1 when n_local_layers > 0, "
                             f"got {self.sliding_window}")

    # ------------------------------------------------------------------ shape facts

    @property
    def is_moe(self) -> bool:
        return self.n_routed_experts > 0

    @property
    def n_moe_layers(self) -> int:
        """Layers whose MLP is a mixture of experts: n_layers - n_dense_layers (0 if dense)."""
        return self.n_layers - self.n_dense_layers if self.is_moe else 0

    @property
    def attention_kind(self) -> str:
        """"MLA" if kv_lora_rank > 0, else "MHA" (n_kv_heads = n_heads), "MQA" (1) or "GQA"."""
        if self.kv_lora_rank:
            return "MLA"
        if self.n_kv_heads == self.n_heads:
            return "MHA"
        return "MQA" if self.n_kv_heads == 1 else "GQA"

    @property
    def n_attention_layers(self) -> int:
        """Layers with softmax attention (and so a KV cache): n_layers - n_linear_layers."""
        return self.n_layers - self.n_linear_layers

    @property
    def n_global_layers(self) -> int:
        """Layers with full (global) attention: n_layers - n_linear_layers - n_local_layers."""
        return self.n_attention_layers - self.n_local_layers

    # ------------------------------------------------------------------ parameter counts

    def attention_params_per_layer(self) -> int:
        """Attention weights in one layer.

        MHA/GQA/MQA: ``d_model·n_heads·d_head`` (Q) + ``2·d_model·n_kv_heads·d_head`` (K, V)
        + ``n_heads·d_head·d_model`` (O) = ``d_model·d_head·(2·n_heads + 2·n_kv_heads)``
        (scaling book Ch. 4: 2D(N+K)H). With biases add
        ``n_heads·d_head + 2·n_kv_heads·d_head + d_model``; with sinks add ``n_heads``.

        MLA (DeepSeek-V2 section 2.1), with r = qk_rope_head_dim, n = qk_nope_head_dim,
        v = v_head_dim:
        Q = ``d_model·q_lora_rank + q_lora_rank·n_heads·(n + r)``
        (or ``d_model·n_heads·(n + r)`` when q_lora_rank = 0),
        KV down = ``d_model·(kv_lora_rank + r)``, KV up = ``kv_lora_rank·n_heads·(n + v)``,
        O = ``n_heads·v·d_model``.
        The two latent norms are counted under "norms".

        With ``attention_output_gate`` (Qwen3-Next) Q's projection also yields a gate:
        add ``d_model·n_heads·d_head``.
        """
        h, d = self.n_heads, self.d_model
        if self.kv_lora_rank:
            qk = self.qk_nope_head_dim + self.qk_rope_head_dim
            if self.q_lora_rank:
                q = d * self.q_lora_rank + self.q_lora_rank * h * qk
            else:
                q = d * h * qk
            kv_down = d * (self.kv_lora_rank + self.qk_rope_head_dim)
            kv_up = self.kv_lora_rank * h * (self.qk_nope_head_dim + self.v_head_dim)
            out = h * self.v_head_dim * d
            count = q + kv_down + kv_up + out
        else:
            count = d * self.d_head * (2 * h + 2 * self.n_kv_heads)
            if self.attention_bias:
                count += (h + 2 * self.n_kv_heads) * self.d_head + d
            if self.attention_output_gate:
                count += d * h * self.d_head
        if self.attention_sinks:
            count += h
        return count

    def linear_attention_params_per_layer(self) -> int:
        """Weights of one Gated DeltaNet layer (Qwen3-Next), 0 without linear attention.

        With key width K = linear_k_heads·linear_k_dim, value width V = linear_v_heads·linear_v_dim
        and kernel c (transformers' ``Qwen3NextGatedDeltaNet``):
        in_proj_qkvz ``d_model·(2K + 2V)`` (Q, K, V and the output gate Z), in_proj_ba
        ``d_model·2·linear_v_heads`` (the β and decay inputs), a depthwise causal conv over Q, K, V
        ``(2K + V)·c``, the per-head ``dt_bias`` and ``A_log`` (2·linear_v_heads), the gated
        RMSNorm ``linear_v_dim`` and out_proj ``V·d_model``.
        """
        if not self.n_linear_layers:
            return 0
        d = self.d_model
        k_width = self.linear_k_heads * self.linear_k_dim
        v_width = self.linear_v_heads * self.linear_v_dim
        return (d * (2 * k_width + 2 * v_width) + d * 2 * self.linear_v_heads
                + (2 * k_width + v_width) * self.linear_conv_kernel + 2 * self.linear_v_heads
                + self.linear_v_dim + v_width * d)

    def _mlp_matrices(self) -> int:
        return 3 if self.gated_mlp else 2

    def expert_params(self) -> int:
        """One expert's weights: (3 if gated else 2) · d_model · d_ff_expert."""
        return self._mlp_matrices() * self.d_model * self.d_ff_expert

    def params_breakdown(self) -> dict[str, int]:
        """Every parameter, by part. The values sum to :attr:`params_total`.

        - embedding = vocab_size·d_model
        - unembedding = vocab_size·d_model, or 0 if tied to the embedding
        - attention = (n_layers - n_linear_layers) · :meth:`attention_params_per_layer`
        - linear_attention = n_linear_layers · :meth:`linear_attention_params_per_layer`, a key
          present only when the model has linear-attention layers
        - dense_mlp = (n_layers - n_moe_layers) · (3 if gated else 2) · d_model · d_ff
        - experts_routed = n_moe_layers · n_routed_experts · :meth:`expert_params`
        - experts_shared = n_moe_layers · n_shared_experts · :meth:`expert_params`
        - router = n_moe_layers · d_model · n_routed_experts
        - norms = 2·d_model per layer (+ q_lora_rank + kv_lora_rank for MLA) + d_model final

        This is the scaling book's L(3DF + 4DNH + 2D) + 2DV for a dense MHA model with untied
        embeddings (Ch. 4), extended to GQA, MLA and MoE.
        """
        d, v = self.d_model, self.vocab_size
        moe = self.n_moe_layers
        parts = {
            "embedding": v * d,
            "unembedding": 0 if self.tied_embeddings else v * d,
            "attention": self.n_attention_layers * self.attention_params_per_layer(),
            "dense_mlp": (self.n_layers - moe) * self._mlp_matrices() * d * self.d_ff,
            "experts_routed": moe * self.n_routed_experts * self.expert_params(),
            "experts_shared": moe * self.n_shared_experts * self.expert_params(),
            "router": moe * d * self.n_routed_experts,
            "norms": self.n_layers * (2 * d + self.q_lora_rank + self.kv_lora_rank) + d,
        }
        if self.n_linear_layers:
            parts["linear_attention"] = self.n_linear_layers * self.linear_attention_params_per_layer()
        return parts

    def active_breakdown(self) -> dict[str, int]:
        """Parameters one token multiplies through, by part. Sums to :attr:`params_active`.

        Same keys as :meth:`params_breakdown`, except that:

        - embedding is 0, because a lookup reads one row and does no FLOPs;
        - unembedding is vocab_size·d_model even when tied, because the shared table does the
          output matmul;
        - experts_routed is n_moe_layers · experts_per_token · :meth:`expert_params`.
        """
        parts = self.params_breakdown()
        parts["embedding"] = 0
        parts["unembedding"] = self.vocab_size * self.d_model
        parts["experts_routed"] = self.n_moe_layers * self.experts_per_token * self.expert_params()
        return parts

    @property
    def params_total(self) -> int:
        """Every parameter: what sits in HBM and is fetched once per decode step."""
        return sum(self.params_breakdown().values())

    @property
    def params_active(self) -> int:
        """Parameters touched per token; forward FLOPs per token ≈ 2 · params_active.

        Leaves out the input-embedding lookup, as DeepSeek's and OpenAI's published active
        counts do. :attr:`params_active_with_embedding` adds it back.
        """
        return sum(self.active_breakdown().values())

    @property
    def params_active_with_embedding(self) -> int:
        """params_active plus the input-embedding table (unchanged if it is tied to the head).

        Some publishers count active parameters this way (the "8B" of a dense 8B model does).
        """
        extra = 0 if self.tied_embeddings else self.vocab_size * self.d_model
        return self.params_active + extra

    @property
    def sparsity(self) -> float:
        """params_total / params_active: the lecture's "sparsity" in B* ≈ 300 x sparsity.

        It is 1 for a dense model with tied embeddings, and slightly above 1 for a dense
        model with untied ones (Llama-3.1-8B: 1.07), because the input table is stored but does
        no FLOPs. DeepSeek-V3: about 18, not the lecture's 8.
        """
        return self.params_total / self.params_active

    def weight_bytes(self, bytes_per_param) -> float:
        """Bytes of weights: params_total · bytes_per_param.

        ``bytes_per_param`` is a number (2 for bf16) or a format name such as "fp8".
        """
        return self.params_total * _bytes_per("bytes_per_param", bytes_per_param)

    @property
    def stored_weight_bytes(self) -> float:
        """Bytes of weights as the published checkpoint stores them: params_total ·
        weight_bytes_per_param (scales of block formats included); 0 when the format is not known."""
        return self.params_total * self.weight_bytes_per_param

    def vs_published(self) -> dict[str, float | None]:
        """Our count divided by the published one: ``{"total": ..., "active": ...}``.

        "active" uses the publisher's convention on the input embedding
        (``published_active_includes_embedding``). A figure that was not published gives None.
        """
        active = (self.params_active_with_embedding if self.published_active_includes_embedding
                  else self.params_active)
        return {
            "total": (self.params_total / self.published_params_total
                      if self.published_params_total else None),
            "active": (active / self.published_params_active
                       if self.published_params_active else None),
        }

    # ------------------------------------------------------------------ KV cache

    def kv_values_per_layer(self) -> int:
        """Values cached per token in one full-attention layer.

        GQA/MHA/MQA: 2 · n_kv_heads · d_head (a K and a V vector per KV head; scaling book
        Ch. 7). MLA: kv_lora_rank + qk_rope_head_dim. MLA caches one latent vector and one
        RoPE key per token, shared by all heads, so there is no factor 2 (DeepSeek-V2
        section 2.1.2).
        """
        if self.kv_lora_rank:
            return self.kv_lora_rank + self.qk_rope_head_dim
        return 2 * self.n_kv_heads * self.d_head

    def state_values_per_sequence(self) -> int:
        """Values of fixed state one sequence keeps in the linear-attention layers (0 without them).

        Per Gated DeltaNet layer: the recurrent state, one linear_k_dim x linear_v_dim matrix per
        value head (``linear_v_heads·linear_k_dim·linear_v_dim``), plus the causal conv's last
        ``linear_conv_kernel - 1`` inputs (``(2·K + V)·(c - 1)``, K and V as in
        :meth:`linear_attention_params_per_layer`). It does not grow with the context: this is
        what replaces the KV cache in those layers (Qwen3-Next-80B-A3B: 36 layers x 548,864 values).
        """
        if not self.n_linear_layers:
            return 0
        k_width = self.linear_k_heads * self.linear_k_dim
        v_width = self.linear_v_heads * self.linear_v_dim
        recurrent = self.linear_v_heads * self.linear_k_dim * self.linear_v_dim
        conv = (2 * k_width + v_width) * (self.linear_conv_kernel - 1)
        return self.n_linear_layers * (recurrent + conv)

    def state_bytes_per_sequence(self, bytes_per_value) -> float:
        """Bytes of fixed linear-attention state per sequence: :meth:`state_values_per_sequence`
        · bytes_per_value. Servers often keep the recurrent state in fp32 (4 bytes) even when the KV
        cache is bf16."""
        return self.state_values_per_sequence() * _bytes_per("bytes_per_value", bytes_per_value)

    @property
    def n_kv_global_layers(self) -> int:
        """Global layers that store their own KV cache: ceil(n_global_layers / kv_share_group)."""
        return -(-self.n_global_layers // self.kv_share_group)

    @property
    def n_kv_local_layers(self) -> int:
        """Local layers that store their own KV cache: ceil(n_local_layers / kv_share_group)."""
        return -(-self.n_local_layers // self.kv_share_group)

    @property
    def n_kv_layers(self) -> int:
        """Layers with a unique KV cache (the lecture's "unique-KV layers", 01:38:48).

        n_layers without cross-layer sharing (less the linear-attention layers, which keep no KV);
        ceil(n_global / g) + ceil(n_local / g) with ``kv_share_group`` = g.
        """
        return self.n_kv_global_layers + self.n_kv_local_layers

    def kv_values_per_token(self, *, context_len=None) -> float:
        """Values cached per token of context, summed over the layers that store a KV cache.

        Without ``context_len``, every layer counts as full: each token is cached in every
        softmax-attention layer, which is what one token adds while the context is shorter than
        the window. Linear-attention layers cache nothing per token (their fixed state is
        :meth:`state_values_per_sequence`).
        With ``context_len``, a sliding-window layer holds only min(window, context_len)
        tokens, so on average per token of context it costs
        min(window, context_len) / context_len of a full layer. Layers that share a KV cache
        (``kv_share_group`` > 1) count once per group.
        """
        per_layer = self.kv_values_per_layer()
        if context_len is None or not self.n_local_layers:
            if context_len is not None:
                _whole("context_len", context_len, minimum=1)
            return float(self.n_kv_layers * per_layer)
        context_len = _whole("context_len", context_len, minimum=1)
        local_share = min(self.sliding_window, context_len) / context_len
        return per_layer * (self.n_kv_global_layers + self.n_kv_local_layers * local_share)

    def kv_bytes_per_token(self, bytes_per_value, *, context_len=None) -> float:
        """KV-cache bytes per token of context: :meth:`kv_values_per_token` · bytes_per_value.

        ``bytes_per_value`` is a number (2 for bf16) or one of "fp32", "bf16", "fp16", "fp8",
        "int8", "fp4". GQA: 2 · n_layers · n_kv_heads · d_head · bytes (Llama-3.1-8B in bf16:
        2 · 32 · 8 · 128 · 2 = 131,072 B). MLA: (kv_lora_rank + qk_rope_head_dim) · n_layers ·
        bytes (DeepSeek-V3: 576 · 61 · bytes). Without ``context_len`` every layer counts as
        full; with it, sliding-window layers are scaled as in :meth:`kv_values_per_token`.
        """
        size = _bytes_per("bytes_per_value", bytes_per_value)
        return self.kv_values_per_token(context_len=context_len) * size

    def kv_bytes_read_per_token(self, bytes_per_value, *, context_len) -> float:
        """KV bytes one decode step *reads* per token of context (what memory bandwidth pays).

        Equal to :meth:`kv_bytes_per_token` at ``context_len`` for dense attention. With sparse
        attention (``attention_topk`` = k) a global layer reads min(k, L) of its L stored tokens
        and a sliding-window layer min(k, window, L), so per token of context the read is
        per-layer bytes · (n_global · min(k, L) + n_local · min(k, window, L)) / L: the lecture's
        "times a 1/sparsity factor" (01:40:38), with sparsity = L / k. The indexer that picks the
        k tokens (DeepSeek-V3.2's DSA) keeps a small key cache of its own, read in full every
        step; it is not part of the model's KV and is counted by
        :func:`lecture_lib.context.kv_bytes_read`.
        """
        _whole("context_len", context_len, minimum=1)
        stored = self.kv_bytes_per_token(bytes_per_value, context_len=context_len)
        if not self.attention_topk:
            return stored
        context_len = _whole("context_len", context_len, minimum=1)
        size = _bytes_per("bytes_per_value", bytes_per_value)
        k = self.attention_topk
        local_read = min(k, self.sliding_window, context_len) if self.n_local_layers else 0
        tokens_read = self.n_kv_global_layers * min(k, context_len) + self.n_kv_local_layers * local_read
        return self.kv_values_per_layer() * size * tokens_read / context_len

    def attention_flops_per_token(self, context_len) -> float:
        """FLOPs of attention itself (QKᵀ and AV) for one new token at ``context_len``.

        Per layer, each query head takes a dot product with every key it attends to (d_qk
        multiply-adds each) and sums as many values (d_v each): 2·n_heads·(d_qk + d_v)·L_eff
        FLOPs (2 per multiply-add), with L_eff = context_len for a global layer,
        min(window, context_len) for a local one, and at most ``attention_topk`` with sparse
        attention. d_qk = d_v = d_head for MHA/GQA/MQA; for MLA d_qk = qk_nope_head_dim +
        qk_rope_head_dim and d_v = v_head_dim (the un-absorbed form, DeepSeek-V2 section 2.1;
        decode kernels that absorb the up-projections attend in the 576/512-wide latent space
        instead, about 3.4x these FLOPs). Linear in the context per token, so quadratic over a whole sequence (lecture 01:51:01).
        Linear-attention layers are left out: their work per token does not grow with the context.
        """
        context_len = _whole("context_len", context_len, minimum=1)
        if self.kv_lora_rank:
            d_qk, d_v = self.qk_nope_head_dim + self.qk_rope_head_dim, self.v_head_dim
        else:
            d_qk = d_v = self.d_head
        cap = self.attention_topk or context_len
        global_len = min(cap, context_len)
        local_len = min(cap, self.sliding_window, context_len) if self.n_local_layers else 0
        attended = self.n_global_layers * global_len + self.n_local_layers * local_len
        return float(2 * self.n_heads * (d_qk + d_v) * attended)


# ---------------------------------------------------------------------------------- presets
# Shapes come from each model's published config.json; "published" figures from its model card
# or paper. The dates are release dates.

_PRESETS = [
    Model(
        name="deepseek-v3", n_layers=61, d_model=7168, d_ff=18432, n_heads=128,
        n_kv_heads=128, d_head=192, vocab_size=129280,
        n_routed_experts=256, n_shared_experts=1, experts_per_token=8, d_ff_expert=2048,
        n_dense_layers=3,
        kv_lora_rank=512, q_lora_rank=1536, qk_rope_head_dim=64, qk_nope_head_dim=128,
        v_head_dim=128,
        published_params_total=671e9, published_params_active=37e9,
        source=("config: huggingface.co/deepseek-ai/DeepSeek-V3 config.json and "
                "inference/configs/config_671B.json (released 2024-12-26). Published: "
                "DeepSeek-V3 Technical Report, arXiv 2412.19437 (2024-12-27), 671B total / "
                "37B activated; README_WEIGHTS.md in the same repo: main model 671B, "
                "36.6B activated including the 0.9B output head."),
        notes=("Not counted: the multi-token-prediction (MTP) module (num_nextn_predict_layers "
               "= 1; about 14B in the paper, 11.5B unique in README_WEIGHTS.md). The 671B leaves "
               "it out too; the Hub's '685B' includes it. d_head = 192 is the Q/K head dim "
               "(nope 128 + rope 64); MLA counts do not use it. The lecture's '32 of 256 "
               "experts' is really 8 routed + 1 shared."),
    ),
    Model(
        name="llama-3.1-8b", n_layers=32, d_model=4096, d_ff=14336, n_heads=32,
        n_kv_heads=8, d_head=128, vocab_size=128256,
        published_params_total=8.03e9, published_params_active=8.03e9,
        published_active_includes_embedding=True,
        source=("config: huggingface.co/meta-llama/Llama-3.1-8B config.json (released "
                "2024-07-23). Published: 8.03B params, the Hub's safetensors count for the "
                "checkpoint."),
        notes="Dense: the published '8B' counts the input embedding (0.53B), so it is "
              "params_active_with_embedding that matches it.",
    ),
    Model(
        name="llama-3-70b", n_layers=80, d_model=8192, d_ff=28672, n_heads=64,
        n_kv_heads=8, d_head=128, vocab_size=128256,
        published_params_total=70.6e9, published_params_active=70.6e9,
        published_active_includes_embedding=True,
        source=("config: huggingface.co/meta-llama/Meta-Llama-3-70B config.json (released "
                "2024-04-18); Llama 3.1 70B (2024-07-23) has the same shapes. Published: "
                "70.6B params, the Hub's safetensors count."),
        notes=("The Llama 3 70B config has no head_dim (transformers uses 8192 / 64 = 128); "
               "Llama 3.1 configs state head_dim = 128. Dense: the published size counts the "
               "input embedding (1.05B)."),
    ),
    Model(
        name="llama-3-405b", n_layers=126, d_model=16384, d_ff=53248, n_heads=128,
        n_kv_heads=8, d_head=128, vocab_size=128256,
        published_params_total=405e9, published_params_active=405e9,
        published_active_includes_embedding=True,
        source=("config: huggingface.co/meta-llama/Llama-3.1-405B config.json (released "
                "2024-07-23; the 405B shipped only as Llama 3.1). Published: 405B, "
                "'The Llama 3 Herd of Models', arXiv 2407.21783 (2024-07-23)."),
        notes=("num_key_value_heads = 8. Some early copies of the config and some libraries "
               "say 16, a layout that duplicates KV heads for 16-way model parallelism "
               "(litgpt issue #1942)."),
    ),
    Model(
        name="kimi-k2", n_layers=61, d_model=7168, d_ff=18432, n_heads=64,
        n_kv_heads=64, d_head=192, vocab_size=163840,
        n_routed_experts=384, n_shared_experts=1, experts_per_token=8, d_ff_expert=2048,
        n_dense_layers=1,
        kv_lora_rank=512, q_lora_rank=1536, qk_rope_head_dim=64, qk_nope_head_dim=128,
        v_head_dim=128,
        published_params_total=1.04e12, published_params_active=32.6e9,
        published_active_includes_embedding=True,
        source=("config: huggingface.co/moonshotai/Kimi-K2-Instruct config.json (released "
                "2025-07-11; kimi_k2 = DeepSeek-V3 layout) and the model summary in "
                "github.com/MoonshotAI/Kimi-K2 README.md. Published: 1.04T total / 32.6B "
                "activated, Kimi K2 tech report, arXiv 2507.20534 (2025-07-28), section 2.3, "
                "Table 2; the model card rounds to 1T / 32B."),
        notes=("The convention is inferred, not stated: Moonshot's 32.6B matches our count "
               "with the input embedding (32.9B, +0.8 %) better than without it (31.7B, "
               "-2.8 %). No MTP module (num_nextn_predict_layers = 0)."),
    ),
    Model(
        name="qwen3-235b-a22b", n_layers=94, d_model=4096, d_ff=12288, n_heads=64,
        n_kv_heads=4, d_head=128, vocab_size=151936,
        n_routed_experts=128, experts_per_token=8, d_ff_expert=1536,
        published_params_total=235e9, published_params_active=22e9,
        published_active_includes_embedding=True,
        source=("config: huggingface.co/Qwen/Qwen3-235B-A22B config.json (released "
                "2025-04-29). Published: model card, '235B in total and 22B activated'."),
        notes=("Every layer is MoE (no shared expert); d_ff = 12288 is the config's unused "
               "intermediate_size. The convention is inferred: 22B matches our count with the "
               "input embedding (22.2B) better than without (21.6B). QK-norm not counted."),
    ),
    Model(
        name="gpt-oss-120b", n_layers=36, d_model=2880, d_ff=2880, n_heads=64,
        n_kv_heads=8, d_head=64, vocab_size=201088,
        n_routed_experts=128, experts_per_token=4, d_ff_expert=2880,
        sliding_window=128, n_local_layers=18, attention_bias=True, attention_sinks=True,
        published_params_total=116.83e9, published_params_active=5.13e9,
        source=("config: huggingface.co/openai/gpt-oss-120b config.json and "
                "original/config.json (released 2025-08-05). Published: gpt-oss-120b & "
                "gpt-oss-20b Model Card, arXiv 2508.10925 (2025-08-05), Table 1: 116.83B "
                "total, 5.13B active; 'Unembedding parameters are counted towards active, "
                "but not embeddings.'"),
        notes=("Attention alternates a 128-token banded window with full attention (layer 0 "
               "is banded), so 18 of 36 layers are local. Counted: QKVO biases, one sink per "
               "head. Not counted: expert and router biases (about 0.04B). d_ff = 2880 is the "
               "config's intermediate_size, which is per expert here; no layer is dense. "
               "MoE weights ship in MXFP4 (4.25 bits)."),
    ),
    Model(
        name="gemma-3-27b", n_layers=62, d_model=5376, d_ff=21504, n_heads=32,
        n_kv_heads=16, d_head=128, vocab_size=262208, tied_embeddings=True,
        sliding_window=1024, n_local_layers=52,
        published_params_total=27.016e9, published_params_active=27.016e9,
        source=("config: huggingface.co/google/gemma-3-27b-it config.json, text_config "
                "(released 2025-03-12). Published: Gemma 3 Technical Report, arXiv 2503.19786 "
                "(2025-03-25), Table 1: '1,416M' embedding + '25,600M' non-embedding params (1.42 B + 25.6 B), plus "
                "a 417M SigLIP vision encoder."),
        notes=("Text model only. The headline 27.4B includes the 417M vision encoder, which "
               "is left out here. Pattern: 5 local (window 1024) then 1 global, "
               "sliding_window_pattern = 6, so 62 layers hold 52 local + 10 global. Tied "
               "embeddings; GeGLU MLP (3 matrices). d_head = 128, although 5376 / 32 = 168. "
               "Post-norms and QK-norm not counted."),
    ),
    Model(
        name="mixtral-8x22b", n_layers=56, d_model=6144, d_ff=16384, n_heads=48,
        n_kv_heads=8, d_head=128, vocab_size=32000,
        n_routed_experts=8, experts_per_token=2, d_ff_expert=16384,
        published_params_total=141e9, published_params_active=39e9,
        source=("config: huggingface.co/mistral-community/Mixtral-8x22B-v0.1 config.json "
                "(weights released 2024-04-10; mistralai/Mixtral-8x22B-v0.1 has the same "
                "shapes). Published: Mistral AI announcement, mistral.ai/news/mixtral-8x22b "
                "(2024-04-17): 39B active out of 141B."),
        notes=("d_head = 128 = 6144 / 48; the config has no head_dim (the GGUF rope dimension "
               "is 128). Instruct-v0.1 has vocab 32768. Every layer is MoE; d_ff is the "
               "config's intermediate_size, which is per expert."),
    ),
]

_PRESETS += [
    # Added for Chapter 8's MLPerf rows (the benchmark models of MLPerf Inference v4.1).
    Model(
        name="llama-2-70b", n_layers=80, d_model=8192, d_ff=28672, n_heads=64,
        n_kv_heads=8, d_head=128, vocab_size=32000,
        published_params_total=68.98e9, published_params_active=68.98e9,
        published_active_includes_embedding=True,
        source=("config: huggingface.co/meta-llama/Llama-2-70b-hf config.json (released 2023-07-18; "
                "MLPerf uses Llama-2-70b-chat-hf, same shapes). Published: 'Llama 2: Open Foundation and "
                "Fine-Tuned Chat Models', arXiv 2307.09288 (2023-07-18), '70B'; 68.98B is the Hub's "
                "safetensors count."),
        notes=("Llama-3-70B's shapes with a 32,000-token vocabulary instead of 128,256. Dense: the "
               "published size counts the input embedding (0.26B)."),
    ),
    Model(
        name="mixtral-8x7b", n_layers=32, d_model=4096, d_ff=14336, n_heads=32,
        n_kv_heads=8, d_head=128, vocab_size=32000,
        n_routed_experts=8, experts_per_token=2, d_ff_expert=14336,
        published_params_total=46.7e9, published_params_active=12.9e9,
        published_active_includes_embedding=True,
        source=("config: huggingface.co/mistralai/Mixtral-8x7B-v0.1 config.json (released 2023-12-11). "
                "Published: Mistral AI, mistral.ai/news/mixtral-of-experts (2023-12-11), 46.7B total "
                "parameters, 12.9B used per token; 'Mixtral of Experts', arXiv 2401.04088."),
        notes=("Every layer is MoE (8 experts, top-2, no shared expert); d_ff is the config's "
               "intermediate_size, which is per expert. The convention is inferred: 12.9B matches "
               "our count with the input embedding better than without it."),
    ),
]

_PRESETS += [
    # Added for Chapter 8's TensorRT-LLM perf-overview rows (issue 30 §3), so the reality band rests on
    # models of every class, dense and MoE, large and small.
    Model(
        name="qwen3-30b-a3b", n_layers=48, d_model=2048, d_ff=0, n_heads=32,
        n_kv_heads=4, d_head=128, vocab_size=151936,
        n_routed_experts=128, experts_per_token=8, d_ff_expert=768,
        published_params_total=30.5e9, published_params_active=3.3e9,
        published_active_includes_embedding=True,
        source=("config: huggingface.co/Qwen/Qwen3-30B-A3B config.json (released 2025-04-29). "
                "Published: model card, '30.5B in total and 3.3B activated'."),
        notes=("Every layer is MoE: 128 experts of 768, 8 routed per token, no shared expert. The "
               "convention is inferred: 3.3B matches our count with the input embedding (3.35B) "
               "better than without it (3.04B). QK-norm not counted."),
    ),
    Model(
        name="llama-4-scout", n_layers=48, d_model=5120, d_ff=16384, n_heads=40,
        n_kv_heads=8, d_head=128, vocab_size=202048,
        n_routed_experts=16, n_shared_experts=1, experts_per_token=1, d_ff_expert=8192,
        sliding_window=8192, n_local_layers=36,
        published_params_total=109e9, published_params_active=17e9,
        published_active_includes_embedding=True,
        source=("config: huggingface.co/meta-llama/Llama-4-Scout-17B-16E config.json, text_config "
                "(released 2025-04-05). Published: model card, '17B activated, 109B total'."),
        notes=("Text model only: the published 109B includes the vision encoder, so ours is about "
               "1 % lower. Every layer is MoE (16 experts of 8,192, top-1, plus one shared expert of "
               "the same size); d_ff is intermediate_size_mlp, unused here. Chunked attention on 36 of "
               "48 layers (chunks of 8,192) is counted as a sliding window of 8,192."),
    ),
    Model(
        name="llama-4-maverick", n_layers=48, d_model=5120, d_ff=16384, n_heads=40,
        n_kv_heads=8, d_head=128, vocab_size=202048,
        n_routed_experts=128, n_shared_experts=1, experts_per_token=1, d_ff_expert=8192,
        n_dense_layers=24, sliding_window=8192, n_local_layers=36,
        published_params_total=400e9, published_params_active=17e9,
        published_active_includes_embedding=True,
        source=("config: huggingface.co/meta-llama/Llama-4-Maverick-17B-128E config.json, text_config "
                "(released 2025-04-05). Published: model card, '17B activated, 400B total'."),
        notes=("Text model only. MoE on every other layer (interleave_moe_layer_step = 2: 128 experts "
               "of 8,192, top-1, plus a shared expert); the other 24 layers have a dense MLP of 16,384. "
               "The dense layers sit between MoE layers, not first; the counts are the same. Chunked "
               "attention on 36 of 48 layers is counted as a sliding window of 8,192."),
    ),
]

MODELS: dict[str, Model] = {m.name: m for m in _PRESETS}

_ALIASES = {
    "llama-3-8b": "llama-3.1-8b",
    "llama-3.1-70b": "llama-3-70b",
    "llama-3.1-405b": "llama-3-405b",
    "kimi-k2-instruct": "kimi-k2",
    "kimi-k2-base": "kimi-k2",
    "qwen3-235b": "qwen3-235b-a22b",
    "gemma-3-27b-it": "gemma-3-27b",
    "gemma-3-27b-pt": "gemma-3-27b",
    "mixtral-8x22b-v0.1": "mixtral-8x22b",
    "llama-2-70b-chat": "llama-2-70b",
    "mixtral-8x7b-v0.1": "mixtral-8x7b",
    "llama-4-scout-17b-16e": "llama-4-scout",
    "llama-4-maverick-17b-128e": "llama-4-maverick",
}


_CATALOGUE = Catalogue("model", MODELS, _ALIASES)

#: Models published with exactly a preset's shapes (the same config.json fields, other weights): ``get`` returns the
#: preset under the model's own name, with a note saying whose architecture it is. Sources: each model's
#: config.json on the Hugging Face Hub (huggingface.co/<repo>/blob/main/config.json), read 2026-12.
SAME_ARCHITECTURE = {
    "deepseek-r1": ("deepseek-v3", "deepseek-ai/DeepSeek-R1"),
    "deepseek-r1-0528": ("deepseek-v3", "deepseek-ai/DeepSeek-R1-0528"),
    "deepseek-v3-0324": ("deepseek-v3", "deepseek-ai/DeepSeek-V3-0324"),
    "deepseek-v3.1": ("deepseek-v3", "deepseek-ai/DeepSeek-V3.1"),
    "llama-3.3-70b": ("llama-3-70b", "meta-llama/Llama-3.3-70B-Instruct"),
    "qwen3-235b-a22b-instruct-2507": ("qwen3-235b-a22b", "Qwen/Qwen3-235B-A22B-Instruct-2507"),
    "qwen3-235b-a22b-thinking-2507": ("qwen3-235b-a22b", "Qwen/Qwen3-235B-A22B-Thinking-2507"),
}
_SAME = {loose_name(name): name for name in SAME_ARCHITECTURE}


def architecture_of(name: str) -> str | None:
    """The preset whose shapes ``name`` shares (``"deepseek-r1"`` -> ``"deepseek-v3"``), or None when ``name`` is
    a preset itself or unknown (:data:`SAME_ARCHITECTURE`)."""
    if not isinstance(name, str):
        raise ValueError(f"name must be a model name (a str), got {_describe(name)}")
    found = _SAME.get(loose_name(name))
    return None if found is None else SAME_ARCHITECTURE[found][0]


def names() -> list[str]:
    """The preset names, as :func:`get` accepts them."""
    return list(MODELS)


def resolve(model, parameter: str = "model") -> Model:
    """``model`` as a :class:`Model`: the object itself (a preset or your own) or a preset name
    looked up as in :func:`get`; anything else is a ``ValueError`` naming ``parameter``."""
    if isinstance(model, str) and loose_name(model) in _SAME:
        return get(model)
    return _CATALOGUE.resolve(model, parameter)


def get(name: str) -> Model:
    """A preset by name. Case, spaces, hyphens, underscores and dots are ignored, so
    "DeepSeek V3", "deepseek_v3" and "deepseek-v3" are the same model.

    A model that shares a preset's shapes (:data:`SAME_ARCHITECTURE`: "deepseek-r1" is DeepSeek-V3's architecture)
    is that preset under its own name, and its notes say whose shapes it has. An unknown name raises ``KeyError``
    listing the known names (and those aliases); a non-string, ``ValueError``.
    """
    if isinstance(name, str) and loose_name(name) in _SAME:
        own = _SAME[loose_name(name)]
        base, repo = SAME_ARCHITECTURE[own]
        preset = MODELS[base]
        note = (f"{own} has {base}'s architecture (the same config.json shapes, huggingface.co/{repo}); "
                f"the counts are {base}'s.")
        return dataclasses.replace(preset, name=own, notes=(note + " " + preset.notes).strip())
    try:
        return _CATALOGUE.find(name)
    except KeyError as error:
        raise KeyError(f"{error.args[0]}; models with a preset's shapes: {', '.join(SAME_ARCHITECTURE)}") from None
