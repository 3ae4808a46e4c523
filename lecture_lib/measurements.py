"""Chapter 8: published serving measurements, each held against the bound the course computes.

Every row records the publisher's own page (``url``), where its text was read (``read_at``: the
page's source in the publisher's repository, or the page itself), the date, the figure as the
publisher wrote it (``quote``, checked word for word against that text) and the setup the bound
needs: model, chip, how many, parallel layout, batch or concurrency, number formats, lengths, engine.
Whatever the publisher does not state but the bound needs is written in ``assumed`` as a plain
statement of the setup used. Where the primary text could not be read here, ``primary_read`` is
False and ``checked_against`` says where the quote was checked instead; Chapter 8 counts those rows.

The bound is computed through the public API only (:mod:`lecture_lib.roofline`,
:mod:`lecture_lib.collectives`, presets from :mod:`lecture_lib.hardware` and :mod:`lecture_lib.models`)
from the row's fields: a deployment of several nodes is ``collectives.deployment(system, n_systems=...)``,
never a hand-made multiple, and no bound is typed. ``efficiency = measured / bound``; above 1 means the
row beats its bound, which the table allows only with a written reason (``beats_bound_because``).

Each row's bound uses the layout its publisher states (``bound_layout``, a :class:`roofline.Layout`):
DeepSeek's "MLA/Shared Expert DP144" with 32 redundant routed experts, SGLang's DP attention with EPLB's
288 experts, TensorRT-LLM's attention DP, tensor parallelism for the TP rows. What each device holds and
reads, and the batch that fits beside it, follow from the layout (``layout`` is the row's plain label and
must agree with it). ``attention_dtype`` is attention's format where the publisher states one (DeepSeek:
"core MLA computations ... use the BF16 format").

Four kinds of figure:

- ``"decode"``: output tokens/s of a decode pool; the bound is :func:`roofline.decode_bound` at the
  stated batch (``batch``, sequences decoding together across the deployment), or at the largest whole batch
  that fits (:func:`roofline.batch_that_fits`, rounded down) when the publisher gives none.
- ``"prefill"``: input tokens/s of a prefill pool; the bound is :func:`roofline.prefill_bound`
  (cached tokens counted as input, as providers count them).
- ``"serving"``: output tokens/s of GPUs that both prefill and decode requests of ``len_in`` input and
  ``len_out`` output tokens (engine max-throughput benchmarks, MLPerf Offline): per request, the
  prefill time plus ``len_out`` decode steps' share at the stated batch (or the largest that fits)
  at the mean context ``len_in + len_out / 2``.
- ``"latency"``: tokens/s seen by one sequence at batch ``batch`` (batch-1 decode), at context ``len_ctx``.
"""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlparse

from . import collectives, hardware, models, realistic, roofline, validate

KINDS = ("decode", "prefill", "serving", "latency")
PER = ("node", "GPU", "deployment", "sequence")
#: Bytes per block-scaled 4-bit weight (NVFP4: 4 bits + one 8-bit scale per 16 values).
NVFP4_BYTES = 0.5 + 1 / 16

#: Publishers whose own pages and repositories the dataset may cite: host -> allowed first path part
#: (None: any path). Mirrors, aggregators and news summaries are not on it.
PUBLISHERS: dict[str, tuple[str, ...] | None] = {
    "github.com": ("deepseek-ai", "lm-sys", "NVIDIA", "mlcommons", "AI-Hypercomputer", "google", "ROCm",
                   "sgl-project", "vllm-project"),
    "lmsys.org": None,
    "developer.nvidia.com": None,
    "nvidia.github.io": None,
    "arxiv.org": None,
    "mlcommons.org": None,
    "cloud.google.com": None,
    "rocm.blogs.amd.com": None,
}


def _publisher_ok(url: str) -> bool:
    """True if ``url`` is an https page of a publisher on :data:`PUBLISHERS`."""
    parts = urlparse(url)
    if parts.scheme != "https" or parts.hostname not in PUBLISHERS:
        return False
    owners = PUBLISHERS[parts.hostname]
    first = parts.path.strip("/").split("/")[0]
    return owners is None or first in owners


_DATE = re.compile(r"^(20\d\d)-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?$")
_LAYOUTS = ("single GPU", "TP", "DP-attention + EP", "TP + EP", "DP replicas")


#: Tokens one decode step can emit per sequence: speculative decoding accepts a handful (EAGLE-3 and MTP report
#: 2-7); 64 leaves room for any draft tree while keeping the step's arithmetic in range.
MAX_TOKENS_PER_STEP = 64.0


def _check_layout(key: str, label: str, chosen) -> None:
    """The layout the bound uses must be the one the row's label names: TP rows shard everything
    (attention_tp None, "tp"), DP-attention and DP-replica rows hold a full copy of the weights outside the
    routed experts on every device (attention_tp 1), single-GPU rows need none."""
    if label == "single GPU":
        return
    if chosen is None:
        raise ValueError(f"{key}: bound_layout must be given for a {label!r} row (None would pool the devices "
                         f"into one big chip)")
    if label in ("TP", "TP + EP") and chosen.attention_tp is not None:
        raise ValueError(f"{key}: bound_layout must shard attention over every device for a {label!r} row "
                         f"(roofline.LAYOUTS['tp']), got {chosen.name!r}")
    if label in ("DP-attention + EP", "DP replicas") and chosen.attention_tp != 1:
        raise ValueError(f"{key}: bound_layout must have attention_tp=1 for a {label!r} row, got {chosen.name!r}")


def _text(key: str, name: str, value, *, minimum: int = 4) -> None:
    if not isinstance(value, str) or len(value.strip()) < minimum:
        raise ValueError(f"{key}: {name} must be a str of at least {minimum} characters, got "
                         f"{validate._describe(value)}")


@dataclass(frozen=True, kw_only=True)
class Measurement:
    """One published serving figure and its setup. ``measured`` is in tokens/s per ``per``.

    Every field is checked on construction; bad input is a ``ValueError`` naming the field.
    """

    key: str
    model: str               # a models.get() preset
    system: str              # a hardware.get_system() preset, or a chip name with n_chips
    n_systems: int = 1
    n_chips: int | None = None  # only when ``system`` names a bare chip
    layout: str = "single GPU"  # how the model is split: one of _LAYOUTS, recorded for the bound
    tp: int = 1                 # tensor-parallel degree (attention and dense layers)
    ep: int = 1                 # expert-parallel degree (routed experts)
    bound_layout: object = None  # what the bound computes with: a roofline.Layout, "tp", "dp_ep", or None (pooled)
    per: str                 # "node", "GPU", "deployment" or "sequence": what the figure is divided by
    kind: str
    measured: float
    quote: str
    url: str                 # the publisher's own page or repository file
    read_at: str = ""        # where its text was read, when not at ``url`` itself
    primary_read: bool = True
    checked_against: str = ""   # where the quote was checked when the primary could not be read
    date: str
    engine: str
    batch: float | None = None  # sequences decoding together across the deployment, when stated
    len_in: float = 0
    len_out: float = 0
    len_ctx: float = 0          # decode context used in the bound
    hit_rate: float = 0.0
    weight_dtype: object = "fp8"
    expert_weight_dtype: object = None
    compute_dtype: str = "fp8"
    expert_compute_dtype: str | None = None
    attention_dtype: str | None = None  # attention's matmuls, when the publisher states a format (MLA in BF16)
    kv_dtype: object = "bf16"
    tokens_per_step: float = 1.0
    speculative: str = ""       # the multi-token-prediction or speculative method the publisher ran, if any
    lower_limit: bool = False   # the bound leaves out a cost the publisher did not state: efficiency is a floor
    assumed: str = ""
    beats_bound_because: str = ""
    notes: str = ""

    def __post_init__(self):
        if not isinstance(self.key, str) or not re.fullmatch(r"[a-z0-9][a-z0-9.-]{3,60}", self.key):
            raise ValueError(f"key must be lower-case letters, digits, dots and hyphens (4-61 characters), "
                             f"got {validate._describe(self.key)}")
        k = self.key
        try:
            models.get(self.model)
        except (KeyError, ValueError) as error:
            raise ValueError(f"{k}: model must be a models preset name, got {validate._describe(self.model)}") \
                from error
        validate.integer(f"{k}: n_systems", self.n_systems)
        if self.n_chips is None:
            try:
                hardware.get_system(self.system)
            except (KeyError, ValueError) as error:
                raise ValueError(f"{k}: system must be a hardware system preset (or a chip with n_chips), got "
                                 f"{validate._describe(self.system)}") from error
        else:
            validate.integer(f"{k}: n_chips", self.n_chips)
            try:
                hardware.get(self.system)
            except (KeyError, ValueError) as error:
                raise ValueError(f"{k}: system must be a chip preset when n_chips is given, got "
                                 f"{validate._describe(self.system)}") from error
        validate.choice(f"{k}: layout", self.layout, _LAYOUTS)
        try:
            chosen = roofline.resolve_layout(self.bound_layout)
        except ValueError as error:
            raise ValueError(f"{k}: bound_layout must be None, a roofline.Layout or one of "
                             f"{sorted(roofline.LAYOUTS)}, got {validate._describe(self.bound_layout)}") from error
        _check_layout(k, self.layout, chosen)
        validate.integer(f"{k}: tp", self.tp)
        validate.integer(f"{k}: ep", self.ep)
        validate.choice(f"{k}: kind", self.kind, KINDS)
        validate.choice(f"{k}: per", self.per, PER)
        validate.scalar(f"{k}: measured", self.measured)
        for name in ("quote", "engine"):
            _text(k, name, getattr(self, name))
        _text(k, "url", self.url)
        if not _publisher_ok(self.url):
            raise ValueError(f"{k}: url must be an https page of a publisher in measurements.PUBLISHERS "
                             f"(no mirrors or aggregators), got {self.url!r}")
        if not isinstance(self.date, str) or not _DATE.match(self.date):
            raise ValueError(f"{k}: date must be 'YYYY-MM-DD' or 'YYYY-MM', got {validate._describe(self.date)}")
        validate.boolean(f"{k}: primary_read", self.primary_read)
        validate.boolean(f"{k}: lower_limit", self.lower_limit)
        for name in ("read_at", "checked_against", "assumed", "beats_bound_because", "notes", "speculative"):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"{k}: {name} must be a str, got {validate._describe(getattr(self, name))}")
        if not self.primary_read and len(self.checked_against.strip()) < 20:
            raise ValueError(f"{k}: checked_against must say where the quote was checked when primary_read is "
                             f"False, got {self.checked_against!r}")
        if self.primary_read and self.checked_against:
            raise ValueError(f"{k}: checked_against is only for rows whose primary could not be read "
                             f"(primary_read=False), got {self.checked_against!r}")
        if self.batch is not None:
            validate.scalar(f"{k}: batch", self.batch)
        for name in ("len_in", "len_out", "len_ctx"):
            tokens = validate.scalar(f"{k}: {name}", getattr(self, name), allow_zero=True, maximum=validate.COUNT_LIMIT)
            if 0 < tokens < 1:
                raise ValueError(f"{k}: {name} must be 0 (none) or at least 1 token, got {getattr(self, name)!r}")
            object.__setattr__(self, name, tokens)
        if self.batch is not None:
            batch = validate.scalar(f"{k}: batch", self.batch, maximum=validate.COUNT_LIMIT)
            if batch < 1:
                raise ValueError(f"{k}: batch must be at least 1 sequence, got {self.batch!r}")
            object.__setattr__(self, "batch", batch)
        object.__setattr__(self, "measured", validate.scalar(f"{k}: measured", self.measured))
        hit = validate.scalar(f"{k}: hit_rate", self.hit_rate, allow_zero=True)
        if hit >= 1:
            raise ValueError(f"{k}: hit_rate must be in [0, 1), got {self.hit_rate!r}")
        for name in ("weight_dtype", "kv_dtype") + (("expert_weight_dtype",) if self.expert_weight_dtype is not None
                                                    else ()):
            models._bytes_per(f"{k}: {name}", getattr(self, name))
        for name in ("compute_dtype",) + tuple(name for name in ("expert_compute_dtype", "attention_dtype")
                                               if getattr(self, name) is not None):
            validate.choice(f"{k}: {name}", getattr(self, name), tuple(hardware.BYTES_PER_VALUE))
        tau = validate.scalar(f"{k}: tokens_per_step", self.tokens_per_step, maximum=MAX_TOKENS_PER_STEP)
        if tau < 1:
            raise ValueError(f"{k}: tokens_per_step must be >= 1, got {self.tokens_per_step!r}")
        object.__setattr__(self, "tokens_per_step", tau)
        # What each kind of figure needs to have a bound at all.
        if self.kind == "prefill" and not self.len_in:
            raise ValueError(f"{k}: len_in must be > 0 for a prefill row")
        if self.kind == "serving" and not (self.len_in and self.len_out):
            raise ValueError(f"{k}: len_in and len_out must be > 0 for a serving row")
        if self.kind == "latency" and self.batch is None:
            raise ValueError(f"{k}: batch must be stated for a latency row")
        if (self.kind == "latency") != (self.per == "sequence"):
            raise ValueError(f"{k}: per must be 'sequence' exactly for latency rows, got per={self.per!r} "
                             f"for kind={self.kind!r}")

    # -- what the course computes -----------------------------------------------------------------
    @property
    def deployment(self) -> collectives.Deployment:
        if self.n_chips is not None:
            return collectives.deployment(hardware.get(self.system), n_chips=self.n_chips,
                                          n_systems=self.n_systems)
        return collectives.deployment(hardware.get_system(self.system), n_systems=self.n_systems)

    def deployment_at(self, hbm_fraction: float = 1.0) -> collectives.Deployment:
        """:attr:`deployment` with each device's HBM scaled by ``hbm_fraction`` (a runtime reserve: 0.9 leaves a
        tenth of every device for activations and graphs, like vLLM's ``gpu_memory_utilization=0.9``)."""
        return with_hbm_fraction(self.deployment, hbm_fraction)

    @property
    def divisor(self) -> float:
        """How many units the deployment-wide bound is divided by to match ``per``."""
        d = self.deployment
        return {"node": d.n_domains if self.n_chips is None else max(1, d.n_chips // 8), "GPU": d.n_chips,
                "deployment": 1, "sequence": 1}[self.per]

    @property
    def source(self) -> str:
        """One plain line: the primary, and where the quote was checked."""
        if self.primary_read:
            where = f" (read at {self.read_at})" if self.read_at else ""
            return f"primary: {self.url}{where}; quote checked word for word against it"
        return f"primary: {self.url}; quote checked against {self.checked_against}"

    def _decode(self, batch, len_ctx, fraction=1.0):
        return roofline.decode_bound(
            models.get(self.model), self.deployment_at(fraction), batch=batch, len_ctx=len_ctx,
            weight_dtype=self.weight_dtype, expert_weight_dtype=self.expert_weight_dtype,
            compute_dtype=self.compute_dtype, expert_compute_dtype=self.expert_compute_dtype,
            attention_dtype=self.attention_dtype, kv_dtype=self.kv_dtype, tokens_per_step=self.tokens_per_step,
            layout=self.bound_layout)

    def _batch(self, len_ctx, fraction=1.0) -> float:
        """The stated batch, or the largest whole batch that fits in each device's HBM beside the weights it holds
        under the row's layout (whole sequences, as Chapter 10's planner runs them)."""
        if self.batch is not None:
            return self.batch
        return float(math.floor(roofline.batch_that_fits(
            models.get(self.model), self.deployment_at(fraction), len_ctx=len_ctx, weight_bytes=self.weight_dtype,
            expert_weight_bytes=self.expert_weight_dtype, kv_dtype=self.kv_dtype, layout=self.bound_layout)))

    def _prefill(self, hit_rate):
        return roofline.prefill_bound(
            models.get(self.model), self.deployment, len_in=self.len_in, hit_rate=hit_rate,
            compute_dtype=self.compute_dtype, expert_compute_dtype=self.expert_compute_dtype,
            attention_dtype=self.attention_dtype, layout=self.bound_layout, weight_dtype=self.weight_dtype,
            expert_weight_dtype=self.expert_weight_dtype)

    def bound_detail(self, hbm_fraction: float = 1.0) -> dict:
        """The bound (tokens/s per ``per``) and the pieces it came from; ``hbm_fraction`` < 1 keeps that share of
        each device's HBM for weights and KV (the batch that fits shrinks; a stated batch stays)."""
        fraction = validate.scalar("hbm_fraction", hbm_fraction, maximum=1.0)
        if self.kind == "latency":
            step = self._decode(self.batch, self.len_ctx, fraction)
            return {"bound": step["tokens_per_s_per_seq"], "batch": self.batch, **step}
        if self.kind == "decode":
            batch = self._batch(self.len_ctx, fraction)
            step = self._decode(batch, self.len_ctx, fraction)
            return {"bound": step["tokens_per_s"] / self.divisor, "batch": batch, **step}
        if self.kind == "prefill":
            pre = self._prefill(self.hit_rate)
            return {"bound": pre["input_tokens_per_s"] / self.divisor, **pre}
        # serving: prefill each request, then decode it at the batch at its mean context
        pre = self._prefill(0.0)
        context = self.len_in + self.len_out / 2
        batch = self._batch(context, fraction)
        step = self._decode(batch, context, fraction)
        seconds_per_request = pre["t_prefill"] + self.len_out * step["t"] / (batch * self.tokens_per_step)
        return {"bound": self.len_out / seconds_per_request / self.divisor, "batch": batch,
                "t_prefill": pre["t_prefill"], **step}

    def realistic_detail(self, terms=None, *, engine: float | None = None) -> dict:
        """The realistic estimate of this row's figure (tokens/s per ``per``) beside its bound (issue 51 §4).

        The row's own setup through :func:`realistic.decode_step` and :func:`realistic.prefill_time`: attention
        apart from the matmuls, kernels at their published share of peak, communication not overlapped, the busiest
        expert-parallel device, small per-expert matmuls, and the engine factor (``engine``; default
        :func:`engine_efficiency`, measured on the dense rows). ``terms`` picks which are on (default all).
        Returns ``{"realistic", "bound", "ratio" (realistic / measured), "batch", "decode", "prefill"}``."""
        factor = (engine_efficiency(self.deployment.chip.generation) if engine is None
                  else validate.scalar("engine", engine, maximum=1.0))
        chosen = realistic._terms(terms)
        factor = factor if "engine" in chosen else 1.0
        shared = {"compute_dtype": self.compute_dtype, "expert_compute_dtype": self.expert_compute_dtype,
                  "attention_dtype": self.attention_dtype, "layout": self.bound_layout,
                  "weight_dtype": self.weight_dtype, "expert_weight_dtype": self.expert_weight_dtype}
        detail = self.bound_detail()
        out = {"bound": detail["bound"], "batch": detail.get("batch"), "decode": None, "prefill": None}
        if self.kind == "prefill":
            pre = realistic.prefill_time(models.get(self.model), self.deployment, len_in=self.len_in,
                                         hit_rate=self.hit_rate, terms=chosen, **shared)
            out["prefill"] = pre
            value = pre["input_tokens_per_s"] * factor / self.divisor
        else:
            context = self.len_ctx if self.kind in ("decode", "latency") else self.len_in + self.len_out / 2
            batch = detail["batch"]
            step = realistic.decode_step(models.get(self.model), self.deployment, batch=batch, len_ctx=context,
                                         terms=chosen, kv_dtype=self.kv_dtype, tokens_per_step=self.tokens_per_step,
                                         **shared)
            out["decode"] = step
            if self.kind == "serving":
                pre = realistic.prefill_time(models.get(self.model), self.deployment, len_in=self.len_in,
                                             terms=chosen, **shared)
                out["prefill"] = pre
                out["prefill_wait"] = realistic.prefill_wait_factor(
                    models.get(self.model), self.deployment, layout=self.bound_layout, batch=batch,
                    len_out=self.len_out, tokens_per_step=self.tokens_per_step, terms=chosen)
                seconds = (pre["t_prefill"] * out["prefill_wait"]
                           + self.len_out * step["t"] / (batch * self.tokens_per_step))
                value = self.len_out / seconds * factor / self.divisor
            elif self.kind == "latency":
                value = step["tokens_per_s"] / batch * factor
            else:
                value = step["tokens_per_s"] * factor / self.divisor
        out["realistic"] = value
        out["ratio"] = value / self.measured
        return out

    @property
    def realistic(self) -> float:
        """The realistic estimate with every term on (:meth:`realistic_detail`)."""
        return _realistic(self)

    @property
    def bound(self) -> float:
        return _bound(self)

    @property
    def efficiency(self) -> float:
        """measured / bound: the share of the roofline the published system reached."""
        return self.measured / self.bound

    def efficiency_at(self, hbm_fraction: float = 1.0) -> float:
        """measured / the bound with ``hbm_fraction`` of each device's HBM usable (see :meth:`bound_detail`)."""
        return self.measured / _bound(self, validate.scalar("hbm_fraction", hbm_fraction, maximum=1.0))

    def regime(self, hbm_fraction: float = 1.0) -> str:
        """"compute" or "memory": which side of the roofline binds at the row's operating point (its decode
        step at the stated or fitted batch; a prefill row is compute)."""
        return _regime(self, validate.scalar("hbm_fraction", hbm_fraction, maximum=1.0))


@lru_cache(maxsize=None)
def _bound(row: Measurement, hbm_fraction: float = 1.0) -> float:
    return row.bound_detail(hbm_fraction)["bound"]


@lru_cache(maxsize=None)
def _realistic(row: Measurement) -> float:
    return row.realistic_detail()["realistic"]


@lru_cache(maxsize=None)
def _regime(row: Measurement, hbm_fraction: float = 1.0) -> str:
    if row.kind == "prefill":
        return "compute"
    step = row.bound_detail(hbm_fraction)
    return "compute" if step["t_compute"] >= step["t_weights"] + step["t_kv"] else "memory"


def with_hbm_fraction(deployment, hbm_fraction: float):
    """``deployment`` (a :class:`collectives.Deployment`) whose chips keep only ``hbm_fraction`` of their HBM for
    weights and KV: the rest is the runtime's reserve (activations, CUDA graphs, fragmentation)."""
    import dataclasses

    if not isinstance(deployment, collectives.Deployment):
        raise ValueError(f"deployment must be a collectives.Deployment, got {validate._describe(deployment)}")
    fraction = validate.scalar("hbm_fraction", hbm_fraction, maximum=1.0)
    if fraction == 1.0:
        return deployment
    chip = dataclasses.replace(deployment.chip, hbm_capacity=deployment.chip.hbm_capacity * fraction)
    return dataclasses.replace(deployment, chip=chip)


# --- Sources ------------------------------------------------------------------------------------
_DS = ("https://github.com/deepseek-ai/open-infra-index/blob/main/202502OpenSourceWeek/"
       "day_6_one_more_thing_deepseekV3R1_inference_system_overview.md")
_DS_QUOTE = ("Each H800 node delivers an average throughput of ~73.7k tokens/s input (including cache hits) "
             "during prefilling or ~14.8k tokens/s output during decoding.")
_DS_LAYOUT = ("DeepSeek's document: prefill units of 4 nodes (routed experts EP32, MLA and shared expert DP32), "
              "decode units of 18 nodes (routed experts EP144, MLA and shared expert DP144)")
#: DeepSeek's units hold MLA, the dense layers and the shared expert whole on every GPU ("MLA/Shared Expert DP144",
#: "DP32") and spread 256 + 32 redundant routed experts per layer over the unit ("with 32 redundant routed experts").
_DS_DECODE_LAYOUT = roofline.Layout(attention_tp=1, redundant_experts=32)
_DS_PREFILL_LAYOUT = roofline.Layout(attention_tp=1, redundant_experts=32)
#: SGLang's 96 x H100: DP attention, DP dense FFN and LM head, EPLB over 288 experts (256 + 32 redundant).
_SGL_LAYOUT = roofline.Layout(attention_tp=1, redundant_experts=32)
_SGL_DS_BATCH = ("SGLang's decode table (same post as the SGLang rows, 'Profile Results') gives DeepSeek's blog "
                 "'Batch Size | 128' at 'KV Cache Length | 4,989' on '18' nodes, the same per-GPU batch column "
                 "as its own 256")
_LMSYS_EP = "https://lmsys.org/blog/2025-05-05-large-scale-ep/"
_LMSYS_EP_SRC = "github.com/lm-sys/lm-sys.github.io, blog/2025-05-05-large-scale-ep.md"
_LMSYS_GB = "https://lmsys.org/blog/2025-09-25-gb200-part-2/"
_LMSYS_GB_SRC = "github.com/lm-sys/lm-sys.github.io, blog/2025-09-25-gb200-part-2.md"
_LMSYS_GB_QUOTE = ("SGLang achieves 26,156 input and 13,386 output tokens per second per NVIDIA Blackwell GPU "
                   "for prefill and decode, respectively, on DeepSeek V3/R1 for 2000-token input sequences")
_LMSYS_GB_QUOTE16 = ("For traditional precision (BF16 for attention and FP8 for GEMM), SGLang still achieves "
                     "18,471 input and 9,087 output tokens per second.")
_TRT_PERF = "https://github.com/NVIDIA/TensorRT-LLM/blob/v0.21.0/docs/source/performance/perf-overview.md"
_TRT_PERF_SRC = ("the repository's docs/source/performance/perf-overview.md, the version that says "
                 "'The data collected for the v0.21 benchmarks' (published as "
                 "nvidia.github.io/TensorRT-LLM/performance/perf-overview.html); the page carries no date, "
                 "2025-07 is the month of the v0.21 release")
_TRT_ENGINE = "TensorRT-LLM v0.21 trtllm-bench throughput, PyTorch backend, requests fed at an infinite rate"
_TRT_DS = ("https://github.com/NVIDIA/TensorRT-LLM/blob/01c4ece911eb569e72cf4177f83238a0520641c2/"
           "docs/source/blogs/Best_perf_practice_on_DeepSeek-R1_in_TensorRT-LLM.md")
_TRT_DS_SRC = ("the file at that commit; the guide carries no date (its figures were refreshed after first "
               "publication), so 2025-08 is an estimate of this version's month")
_MLPERF = "https://github.com/mlcommons/inference_results_v4.1/blob/main/closed/"
_MLPERF_LEN = ("The results do not give the prompt lengths (the dataset caps them at 1,024 tokens), so the bound "
               "counts no prefill and a context of half the mean output, 294.45 tokens per sample (the reference "
               "run's 'Tokens per sample' in github.com/mlcommons/inference language/llama2-70b/README.md): no "
               "prompt length could give more, so the efficiency is a lower limit")
_MLPERF_OUT = 294.45
_NV_SPEC = ("https://developer.nvidia.com/blog/boost-llama-3-3-70b-inference-throughput-3x-with-nvidia-"
            "tensorrt-llm-speculative-decoding/")
_NV_SPEC_CHECK = ("a news summary of the post (Rebeca Moen, 2024-12-17), whose sentence is quoted: the "
                  "post's own table and its caption (GPU count, tensor-parallel size, lengths) were not "
                  "readable here, only its opening paragraphs")
_NV_SPEC_SETUP = ("one H200 with FP8 weights and KV cache, batch 1, about 1,000 tokens of context. The GPU count is "
                  "in the primary table's caption, which could not be read; one GPU is consistent with the "
                  "figure (51 tokens/s is 75% of one H200's bound, 19% of four)")
_JETSTREAM = "https://github.com/AI-Hypercomputer/jetstream-pytorch/blob/main/benchmarks/summary.md"

#: TensorRT-LLM's perf overview as of v1.0 (the version that adds "(NEW for v1.0) RTX 6000 Pro Blackwell Server
#: Edition Benchmarks"), pinned to the commit whose file was read.
_TRT_V1_COMMIT = "00f37686aa854010d68bcbd0f4ab000221541ca6"
_TRT_V1 = f"https://github.com/NVIDIA/TensorRT-LLM/blob/{_TRT_V1_COMMIT}/docs/source/performance/perf-overview.md"
_TRT_V1_SRC = ("the file at that commit; it carries no date, and 2025-09 is an estimate of the v1.0 release month. "
               "Its tables report 'Total Output Throughput (tokens/sec)' of trtllm-bench with requests fed at an "
               "infinite rate; every request has exactly the stated lengths ('--input-stdev=0 --output-stdev=0')")
_TRT_V1_ENGINE = "TensorRT-LLM v1.0 trtllm-bench throughput, PyTorch backend, requests fed at an infinite rate"
#: Each table: its heading, its 1000/1000 row as printed, and the columns (chip, GPUs, format) in the printed order.
_TRT_V1_TABLES = {
    "llama-4-scout": ("Llama 4 Scout", "| 1000/1000 | 10,591 | 7,738 | 21,636 | 12,129 |",
                      (("B200", 1, "fp4"), ("GB200", 1, "fp4"), ("H200", 4, "fp8"), ("H100", 4, "fp8"))),
    "llama-3-70b": ("Llama 3.3 70B", "| 1000/1000 | 7,007 | 7,326 | 2,909 | 4,205 |",
                    (("B200", 1, "fp4"), ("GB200", 1, "fp4"), ("H200", 1, "fp8"), ("H100", 2, "fp8"))),
    "qwen3-235b-a22b": ("Qwen3-235B-A22B", "| 1000/1000 | 42,391 | 23,789 | 14,898 |",
                        (("B200", 8, "fp4"), ("H200", 8, "fp8"), ("H100", 8, "fp8"))),
    "qwen3-30b-a3b": ("Qwen3-30B-A3B", "| 1000/1000 | 25,828 | 17,481 |",
                      (("B200", 1, "fp4"), ("GB200", 1, "fp4"))),
    "llama-4-maverick": ("Llama 4 Maverick", "| 1000/1000 | 79,617 | 31,782 | 9,677 |",
                         (("B200", 8, "fp4"), ("H200", 8, "fp8"), ("H100", 8, "fp8"))),
    "llama-3.1-8b": ("Llama 3.1 8B", "| 1000/1000 | 17,744 | 15,220 |", (("H200", 1, "fp8"), ("H100", 1, "fp8"))),
}


def _trt_v1_rows() -> tuple:
    """One serving row per GPU column of each model's 1000/1000 line in TensorRT-LLM's v1.0 perf overview."""
    out = []
    for model, (heading, line, columns) in _TRT_V1_TABLES.items():
        figures = [float(cell.replace(",", "")) for cell in line.strip("| ").split(" | ")[1:]]
        moe = models.get(model).is_moe
        for (chip, n, fmt), figure in zip(columns, figures):
            fp4 = fmt == "fp4"
            weights = NVFP4_BYTES if fp4 else "fp8"
            label = ("single GPU" if n == 1 else ("TP + EP" if moe else "TP"))
            out.append(Measurement(
                key=f"trtllm-v1-{model}-{chip.lower()}x{n}", model=model, system=chip, n_chips=n, per="deployment",
                layout=label, tp=n, ep=n if moe else 1, bound_layout=None if n == 1 else "tp", kind="serving",
                measured=figure, len_in=1000, len_out=1000, weight_dtype=weights, compute_dtype=fmt, kv_dtype="fp8",
                quote=line, url=_TRT_V1, read_at=_TRT_V1_SRC, date="2025-09", engine=_TRT_V1_ENGINE,
                assumed=(f"{n} {chip} (the column '{chip} TP{n} ({fmt.upper()})' under '{heading}'), 1,000 input and "
                         f"1,000 output tokens per request; {'NVFP4' if fp4 else 'FP8'} weights and matmuls (the "
                         f"nvidia/...-{fmt.upper()} checkpoints the page lists), FP8 KV cache (not stated on the "
                         f"page); the batch is the largest that fits"),
                notes=f"The quote is the '1000/1000' row of the '{heading}' table; this row is its {chip} column."))
    return tuple(out)


MEASUREMENTS: tuple[Measurement, ...] = (
    # --- DeepSeek's own service (provider disclosure, 24-hour average) ----------------------------
    Measurement(
        key="deepseek-decode-h800", model="deepseek-v3", system="HGX H800", n_systems=18, per="node",
        layout="DP-attention + EP", ep=144, bound_layout=_DS_DECODE_LAYOUT, kind="decode", measured=14.8e3,
        batch=128 * 144, len_ctx=4989, weight_dtype="fp8", attention_dtype="bf16", kv_dtype="bf16",
        quote=_DS_QUOTE, url=_DS, date="2025-03-01",
        engine="DeepSeek in-house (DeepEP, DeepGEMM, EPLB)",
        assumed=("18 H800 nodes per decode unit (" + _DS_LAYOUT + "), 32 redundant routed experts, so each GPU "
                 "holds MLA, the dense layers and the shared expert whole plus 2 routed experts per layer; "
                 "context 4,989 tokens, the document's average KV-cache length per output token; 128 sequences "
                 "per GPU (DeepSeek's document gives no batch; " + _SGL_DS_BATCH + "); FP8 weights and "
                 "matmuls, core MLA in BF16 ('core MLA computations and combine transmissions use the BF16 "
                 "format'), KV cache in BF16; no MTP"),
        notes="A 24-hour average of a live service, load varying through the day: not a peak."),
    Measurement(
        key="deepseek-prefill-h800", model="deepseek-v3", system="HGX H800", n_systems=4, per="node",
        layout="DP-attention + EP", ep=32, bound_layout=_DS_PREFILL_LAYOUT, kind="prefill", measured=73.7e3,
        len_in=4989, hit_rate=342 / 608, compute_dtype="fp8", attention_dtype="bf16", quote=_DS_QUOTE, url=_DS,
        date="2025-03-01", engine="DeepSeek in-house (DeepEP, DeepGEMM, EPLB)",
        assumed=("4 H800 nodes per prefill unit (" + _DS_LAYOUT + "), 32 redundant routed experts, 9 per GPU; the "
                 "day's cache hit rate, 342B of 608B input tokens, applied to every prompt; prompts of 4,989 "
                 "tokens (the document gives the average KV length, not the prompt length); FP8 matmuls, core "
                 "MLA in BF16 as the document states"),
        notes="Input tokens include cache hits, so the prefix cache lifts the bound by about 1/(1 - 0.563)."),
    # --- SGLang reproduces it on 96 H100 (measured per phase) ------------------------------------
    Measurement(
        key="sglang-decode-96xh100", model="deepseek-v3", system="HGX H100", n_systems=9, per="node",
        layout="DP-attention + EP", ep=72, bound_layout=_SGL_LAYOUT, kind="decode", measured=22282,
        batch=256 * 72, len_ctx=2000, weight_dtype="fp8", kv_dtype="bf16",
        quote="Evaluated on 9 nodes (9×8×H100, EP72; half the scale of DeepSeek), the system achieved 22,282 "
              "tokens/sec per node for 2K inputs",
        url=_LMSYS_EP, read_at=_LMSYS_EP_SRC, date="2025-05-05",
        engine="SGLang, PD disaggregation, DeepEP, DeepGEMM, EPLB, two-batch overlap",
        assumed=("9 HGX H100 nodes, 256 sequences per GPU at 2,000 tokens of KV cache (the post's decode table: "
                 "batch size 256, KV cache length 2,000); DP attention, DP dense FFN and DP LM head, experts by "
                 "EPLB over 288 (256 + 32 redundant, 'a pool of 288 experts'); FP8 weights, BF16 KV cache")),
    Measurement(
        key="sglang-prefill-96xh100", model="deepseek-v3", system="HGX H100", n_systems=4, per="node",
        layout="DP-attention + EP", ep=32, bound_layout=_SGL_LAYOUT, kind="prefill", measured=54543, len_in=2000, compute_dtype="fp8",
        quote="On 4 nodes (4×8×H100, EP32), the system achieved per-node throughputs of 57,674, 54,543, and "
              "50,302 tokens per second for prompt lengths of 1K, 2K, and 4K, respectively.",
        url=_LMSYS_EP, read_at=_LMSYS_EP_SRC, date="2025-05-05",
        engine="SGLang, PD disaggregation, DeepEP, DeepGEMM, two-batch overlap",
        assumed=("4 HGX H100 nodes (DP attention, 288 experts by EPLB), prompts of 2,000 tokens, no prefix-cache "
                 "hits, FP8 matmuls, attention too (the post does not state its format)")),
    Measurement(
        key="sglang-prefill-96xh100-4k", model="deepseek-v3", system="HGX H100", n_systems=4, per="node",
        layout="DP-attention + EP", ep=32, bound_layout=_SGL_LAYOUT, kind="prefill", measured=50302, len_in=4096, compute_dtype="fp8",
        quote="On 4 nodes (4×8×H100, EP32), the system achieved per-node throughputs of 57,674, 54,543, and "
              "50,302 tokens per second for prompt lengths of 1K, 2K, and 4K, respectively.",
        url=_LMSYS_EP, read_at=_LMSYS_EP_SRC, date="2025-05-05",
        engine="SGLang, PD disaggregation, DeepEP, DeepGEMM, two-batch overlap",
        assumed=("4 HGX H100 nodes (DP attention, 288 experts by EPLB), prompts of 4,096 tokens, no prefix-cache "
                 "hits, FP8 matmuls, attention too (the post does not state its format)")),
    # --- SGLang on a GB200 NVL72 ------------------------------------------------------------------
    Measurement(
        key="sglang-decode-gb200", model="deepseek-v3", system="GB200", n_chips=48, per="GPU",
        layout="DP-attention + EP", ep=48, bound_layout="dp_ep", kind="decode", measured=13386, batch=1408 * 48, len_ctx=2000,
        weight_dtype="fp8", expert_weight_dtype=NVFP4_BYTES, compute_dtype="fp8", expert_compute_dtype="fp4",
        kv_dtype="fp8", quote=_LMSYS_GB_QUOTE, url=_LMSYS_GB, read_at=_LMSYS_GB_SRC, date="2025-09-25",
        engine="SGLang, PD disaggregation, wide EP, FP8 attention, NVFP4 MoE",
        assumed=("48 GB200 GPUs of one NVL72 rack decoding ('for decode, we use 48 ranks'), 1,408 sequences per "
                 "GPU ('1408 for 2k ISL', chosen to fill the KV cache) at 2,000 tokens of context; NVFP4 experts, "
                 "FP8 elsewhere, FP8 KV cache")),
    Measurement(
        key="sglang-prefill-gb200", model="deepseek-v3", system="GB200", n_chips=2, per="GPU",
        layout="DP-attention + EP", ep=2, bound_layout="dp_ep", kind="prefill", measured=26156, len_in=2000,
        compute_dtype="fp8", expert_compute_dtype="fp4", expert_weight_dtype=NVFP4_BYTES, quote=_LMSYS_GB_QUOTE, url=_LMSYS_GB, read_at=_LMSYS_GB_SRC,
        date="2025-09-25", engine="SGLang, PD disaggregation, NVFP4 MoE, weights offloaded to host memory",
        assumed=("prefill instances of 2 GB200 GPUs ('2 for low-precision'), prompts of 2,000 tokens, no cache "
                 "hits; expert matmuls at the FP4 peak, the rest at FP8")),
    Measurement(
        key="sglang-decode-gb200-bf16attn", model="deepseek-v3", system="GB200", n_chips=48, per="GPU",
        layout="DP-attention + EP", ep=48, bound_layout="dp_ep", kind="decode", measured=9087, len_ctx=2000,
        weight_dtype="fp8", compute_dtype="fp8", attention_dtype="bf16", kv_dtype="bf16", quote=_LMSYS_GB_QUOTE16, url=_LMSYS_GB, read_at=_LMSYS_GB_SRC,
        date="2025-09-25", engine="SGLang, PD disaggregation, wide EP, BF16 attention, FP8 GEMMs",
        assumed=("48 GB200 GPUs decoding at 2,000 tokens of context; FP8 weights, BF16 KV cache; the batch is the "
                 "largest that fits (the post gives batch sizes only for the low-precision runs)")),
    Measurement(
        key="sglang-prefill-gb200-bf16attn", model="deepseek-v3", system="GB200", n_chips=4, per="GPU",
        layout="DP-attention + EP", ep=4, bound_layout="dp_ep", kind="prefill", measured=18471, len_in=2000,
        compute_dtype="fp8", attention_dtype="bf16",
        quote=_LMSYS_GB_QUOTE16, url=_LMSYS_GB, read_at=_LMSYS_GB_SRC, date="2025-09-25",
        engine="SGLang, PD disaggregation, BF16 attention, FP8 GEMMs",
        assumed="prefill instances of 4 GB200 GPUs ('4 ranks per instance for high-precision'), prompts of "
                "2,000 tokens, no cache hits, FP8 matmuls"),
    # --- TensorRT-LLM's max-throughput tables (v0.21) ---------------------------------------------
    Measurement(
        key="trtllm-llama70b-fp4-b200", model="llama-3-70b", system="B200", n_chips=1, per="GPU",
        kind="serving", measured=10613.84, len_in=128, len_out=128, weight_dtype=NVFP4_BYTES,
        compute_dtype="fp4", kv_dtype="fp8",
        quote="| 128, 128                     |    | 10,613.84 | 11,100.97     |",
        url=_TRT_PERF, read_at=_TRT_PERF_SRC, date="2025-07", engine=_TRT_ENGINE,
        assumed=("one B200 (TP size 1, 'B200 180GB (DGX B200)'), nvidia/Llama-3.3-70B-Instruct-FP4 (Llama-3-70B's "
                 "shapes), 128 input and 128 output tokens per request; NVFP4 weights and matmuls, FP8 KV "
                 "cache; the batch is the largest that fits"),
        notes="The quote is the table's '128, 128' row under the 'Llama 3.3 70B FP4' heading, B200 then GB200."),
    Measurement(
        key="trtllm-llama70b-fp4-gb200", model="llama-3-70b", system="GB200", n_chips=1, per="GPU",
        kind="serving", measured=11100.97, len_in=128, len_out=128, weight_dtype=NVFP4_BYTES,
        compute_dtype="fp4", kv_dtype="fp8",
        quote="| 128, 128                     |    | 10,613.84 | 11,100.97     |",
        url=_TRT_PERF, read_at=_TRT_PERF_SRC, date="2025-07", engine=_TRT_ENGINE,
        assumed=("one GB200 GPU (TP size 1, 'GB200 192GB (GB200 NVL72)'), 128 input and 128 output tokens; NVFP4 "
                 "weights and matmuls, FP8 KV cache; the batch is the largest that fits")),
    Measurement(
        key="trtllm-llama70b-fp8-h200-tp2", model="llama-3-70b", system="H200", n_chips=2, per="deployment",
        layout="TP", tp=2, bound_layout="tp", kind="serving", measured=4773.33, len_in=1000, len_out=1000, weight_dtype="fp8",
        compute_dtype="fp8", kv_dtype="fp8",
        quote="| 1000, 1000                   |    | 4,181.06         | 4,773.33          |",
        url=_TRT_PERF, read_at=_TRT_PERF_SRC, date="2025-07", engine=_TRT_ENGINE,
        assumed=("two H200 with tensor parallelism (TP size 2), nvidia/Llama-3.3-70B-Instruct-FP8, 1,000 input and "
                 "1,000 output tokens; FP8 weights, matmuls and KV cache; the batch is the largest that fits"),
        notes="The quote is the '1000, 1000' row under 'Llama 3.3 70B FP8', H100 then H200; the figure is for both GPUs."),
    Measurement(
        key="trtllm-llama405b-fp8-h200-2k", model="llama-3-405b", system="HGX H200", per="deployment",
        layout="TP", tp=8, bound_layout="tp", kind="serving", measured=441.35, len_in=2048, len_out=128, weight_dtype="fp8",
        compute_dtype="fp8", kv_dtype="fp8",
        quote="| 2048, 128                    |    | 433.47           | 441.35            |",
        url=_TRT_PERF, read_at=_TRT_PERF_SRC, date="2025-07", engine=_TRT_ENGINE,
        assumed=("eight H200 with tensor parallelism (TP size 8), nvidia/Llama-3.1-405B-Instruct-FP8, 2,048 input and "
                 "128 output tokens; FP8 weights, matmuls and KV cache; the batch is the largest that fits"),
        notes="The quote is the '2048, 128' row under 'Llama 3.1 405B FP8', H100 then H200."),
    Measurement(
        key="trtllm-llama405b-fp8-h200-20k", model="llama-3-405b", system="HGX H200", per="deployment",
        layout="TP", tp=8, bound_layout="tp", kind="serving", measured=509.87, len_in=20000, len_out=2000, weight_dtype="fp8",
        compute_dtype="fp8", kv_dtype="fp8",
        quote="| 20000, 2000                  |    | 363.27           | 509.87            |",
        url=_TRT_PERF, read_at=_TRT_PERF_SRC, date="2025-07", engine=_TRT_ENGINE,
        assumed=("eight H200, TP size 8, 20,000 input and 2,000 output tokens; FP8 weights, matmuls and KV cache; "
                 "the batch is the largest that fits"),
        notes="At 20k tokens of prompt, attention is a large share of the FLOPs: the bound needs it."),
    # --- TensorRT-LLM's DeepSeek-R1 reproduction guide (batch 1 and max throughput) -----------------
    Measurement(
        key="trtllm-dsr1-b200-batch1", model="deepseek-v3", system="HGX B200", per="sequence", layout="TP + EP",
        tp=8, ep=2, bound_layout="tp", kind="latency", measured=274.7188, batch=1, len_ctx=1024 + 2048 / 2,
        weight_dtype="fp8", expert_weight_dtype=NVFP4_BYTES, compute_dtype="fp8", expert_compute_dtype="fp4",
        kv_dtype="bf16", quote="Per User Output Throughput (tokens/sec/user):     274.7188",
        url=_TRT_DS, read_at=_TRT_DS_SRC, date="2025-08", engine="TensorRT-LLM trtllm-bench, nvidia/DeepSeek-R1-FP4, MTP with 3 draft layers",
        speculative="multi-token prediction, 3 draft layers (acceptance not published)",
        assumed=("eight B200 (--tp 8 --ep 2), 'Batch = 1, ISL = 1K, OSL = 2K' from a real dataset, so the mean "
                 "context is 2,048 tokens; NVFP4 experts, FP8 elsewhere, BF16 KV cache (the FP4 checkpoint "
                 "before R1-0528); the bound is one token per step (tau = 1)"),
        notes=("Multi-token prediction adds accepted tokens per step (tau > 1), which the tau = 1 bound leaves out; "
               "the gap is larger than it looks. The guide labels the block 'Expected Results'.")),
    Measurement(
        key="trtllm-dsr1-h200-batch1", model="deepseek-v3", system="HGX H200", per="sequence", layout="TP + EP",
        tp=8, ep=4, bound_layout="tp", kind="latency", measured=158.1196, batch=1, len_ctx=1024 + 2048 / 2,
        weight_dtype="fp8", compute_dtype="fp8", kv_dtype="bf16",
        quote="Per User Output Throughput (tokens/sec/user):     158.1196",
        url=_TRT_DS, read_at=_TRT_DS_SRC, date="2025-08", engine="TensorRT-LLM trtllm-bench, deepseek-ai/DeepSeek-R1 (FP8), MTP with 3 draft layers",
        speculative="multi-token prediction, 3 draft layers (acceptance not published)",
        assumed=("eight H200 (--tp 8 --ep 4), 'Batch = 1, ISL = 1K, OSL = 2K', mean context 2,048 tokens; FP8 weights "
                 "and matmuls, BF16 KV cache; the bound is one token per step (tau = 1)")),
    Measurement(
        key="trtllm-dsr1-b200-maxtput", model="deepseek-v3", system="HGX B200", per="deployment",
        layout="DP-attention + EP", ep=8, bound_layout="dp_ep", kind="serving", measured=43146.2042, batch=7168, len_in=1024, len_out=2048,
        weight_dtype="fp8", expert_weight_dtype=NVFP4_BYTES, compute_dtype="fp8", expert_compute_dtype="fp4",
        kv_dtype="fp8", quote="Total Output Throughput (tokens/sec):             43146.2042",
        url=_TRT_DS, read_at=_TRT_DS_SRC, date="2025-08", engine="TensorRT-LLM trtllm-bench, nvidia/DeepSeek-R1-0528-FP4, attention DP, no MTP",
        assumed=("eight B200 (--tp 8 --ep 8, enable_attention_dp), 7,168 requests in flight (--concurrency 7168), "
                 "1,024 input and 2,048 output tokens; NVFP4 experts, FP8 elsewhere, FP8 KV cache")),
    Measurement(
        key="trtllm-dsr1-h200-maxtput", model="deepseek-v3", system="HGX H200", per="deployment",
        layout="DP-attention + EP", ep=8, bound_layout="dp_ep", kind="serving", measured=11489.2671, batch=1024, len_in=1024, len_out=2048,
        weight_dtype="fp8", compute_dtype="fp8", kv_dtype="bf16",
        quote="Total Output Throughput (tokens/sec):             11489.2671",
        url=_TRT_DS, read_at=_TRT_DS_SRC, date="2025-08", engine="TensorRT-LLM trtllm-bench, deepseek-ai/DeepSeek-R1 (FP8), attention DP, no MTP",
        assumed=("eight H200 (--tp 8 --ep 8, enable_attention_dp), 'Batch = 1024, ISL = 1K, OSL = 2K'; FP8 weights and "
                 "matmuls, BF16 KV cache")),
    # --- MLPerf Inference v4.1, closed division, Offline scenario ------------------------------------
    Measurement(
        key="mlperf41-llama2-70b-h200x8", lower_limit=True, model="llama-2-70b", system="HGX H200", per="deployment", layout="TP",
        tp=8, bound_layout="tp", kind="decode", measured=31302.7, len_out=_MLPERF_OUT, len_ctx=_MLPERF_OUT / 2, weight_dtype="fp8",
        compute_dtype="fp8", kv_dtype="fp8", quote="Tokens per second: 31302.7",
        url=_MLPERF + "NVIDIA/results/H200-SXM-141GBx8_TRT/llama2-70b-99/Offline/performance/run_1/mlperf_log_summary.txt",
        date="2024-08-28", engine="NVIDIA TensorRT-LLM (MLPerf submission, 'llama2-70b-Offline-SUT')",
        assumed=("eight H200 SXM 141GB; FP8 weights, matmuls and KV cache (NVIDIA's closed-division recipe; the summary "
                 "file does not state formats); the batch is the largest that fits. " + _MLPERF_LEN)),
    Measurement(
        key="mlperf41-llama2-70b-b200x1", lower_limit=True, model="llama-2-70b", system="B200", n_chips=1, per="GPU",
        kind="decode", measured=11264.4, len_out=_MLPERF_OUT, len_ctx=_MLPERF_OUT / 2, weight_dtype=NVFP4_BYTES,
        compute_dtype="fp4", kv_dtype="fp8", quote="Tokens per second: 11264.4",
        url=_MLPERF + "NVIDIA/results/B200-SXM-180GBx1_TRT/llama2-70b-99/Offline/performance/run_1/mlperf_log_summary.txt",
        date="2024-08-28", engine="NVIDIA TensorRT-LLM (MLPerf preview submission)",
        assumed=("one B200 SXM 180GB; FP4 weights and matmuls with FP8 KV cache (NVIDIA's preview submission ran FP4; "
                 "the summary file does not state formats); the batch is the largest that fits. " + _MLPERF_LEN)),
    Measurement(
        key="mlperf41-llama2-70b-mi300x8", lower_limit=True, model="llama-2-70b", system="MI300X platform", per="deployment",
        layout="DP replicas", bound_layout="dp_ep", kind="decode", measured=23514.8, len_out=_MLPERF_OUT, len_ctx=_MLPERF_OUT / 2, weight_dtype="fp8",
        compute_dtype="fp8", kv_dtype="fp8", quote="Tokens per second: 23514.8",
        url=_MLPERF + "AMD/results/8xMI300X_2xEPYC-9374F/llama2-70b-99/Offline/performance/run_1/mlperf_log_summary.txt",
        date="2024-08-28", engine="vLLM 0.4.3 on ROCm 6.1.2 (AMD's MLPerf submission, code path 'VllmFp8')",
        assumed=("eight MI300X of one platform, FP8 weights, matmuls and KV cache (the submission's code directory is "
                 "test_VllmFp8); the batch is the largest that fits. " + _MLPERF_LEN)),
    Measurement(
        key="mlperf41-llama2-70b-mi300x1", lower_limit=True, model="llama-2-70b", system="MI300X", n_chips=1, per="GPU",
        kind="decode", measured=3062.72, len_out=_MLPERF_OUT, len_ctx=_MLPERF_OUT / 2, weight_dtype="fp8",
        compute_dtype="fp8", kv_dtype="fp8", quote="Tokens per second: 3062.72",
        url=_MLPERF + "AMD/results/1xMI300X_2xEPYC-9374F/llama2-70b-99.9/Offline/performance/run_1/mlperf_log_summary.txt",
        date="2024-08-28", engine="vLLM 0.4.3 on ROCm 6.1.2 (AMD's MLPerf submission)",
        assumed=("one MI300X, FP8 weights, matmuls and KV cache, the 99.9%-accuracy variant; the batch is the largest "
                 "that fits. " + _MLPERF_LEN)),
    Measurement(
        key="mlperf41-mixtral-8x7b-h200x8", lower_limit=True, model="mixtral-8x7b", system="HGX H200", per="deployment",
        layout="TP + EP", tp=8, bound_layout="tp", kind="decode", measured=59022.3, len_out=59022.3 / 404.431, len_ctx=59022.3 / 404.431 / 2,
        weight_dtype="fp8", compute_dtype="fp8", kv_dtype="fp8",
        quote="Samples per second: 404.431\nTokens per second: 59022.3",
        url=_MLPERF + "NVIDIA/results/H200-SXM-141GBx8_TRT/mixtral-8x7b/Offline/performance/run_1/mlperf_log_summary.txt",
        date="2024-08-28", engine="NVIDIA TensorRT-LLM (MLPerf submission, 'mixtral-8x7b-Offline-SUT')",
        assumed=("eight H200 SXM 141GB; FP8 weights, matmuls and KV cache (not stated in the summary file); output "
                 "146 tokens per sample (tokens per second / samples per second in the same log). The prompt lengths "
                 "are not in the results, so the bound counts no prefill and a context of half the output: no "
                 "prompt length could give more, so the efficiency is a lower limit; the batch is the largest "
                 "that fits")),
    # --- TPU: JetStream on a TPU v5e-8 -------------------------------------------------------------
    Measurement(
        key="jetstream-llama3-8b-v5e8", lower_limit=True, model="llama-3.1-8b", system="TPU v5e", n_chips=8, per="deployment",
        layout="TP", tp=8, bound_layout="tp", kind="decode", measured=8249, batch=128, len_ctx=1024, weight_dtype="bf16",
        compute_dtype="bf16", kv_dtype="bf16",
        quote="2024-04-24 | TPU v5e-8 | bfloat16 | 128 | 2048 | 1024 | 1024 | 8249",
        url=_JETSTREAM, date="2024-04-24", engine="JetStream-PyTorch on Cloud TPU, ShareGPT prompts",
        assumed=("eight TPU v5e chips (v5e-8), Llama 3 8B (the Llama-3.1-8B preset's shapes), batch 128, cache "
                 "length 2,048, max input 1,024 and max output 1,024 tokens; BF16 weights and KV cache; the bound is "
                 "decode only at 1,024 tokens of context, so it leaves prefill out and is generous"),
        notes="The table's throughput column is 'throughput (token/s)' of JetStream's serving benchmark."),
    # --- Batch-1 decode with and without speculative decoding (primary not readable here) ------------
    Measurement(
        key="trtllm-llama70b-h200-batch1", model="llama-3-70b", system="H200", n_chips=1, per="sequence",
        kind="latency", measured=51.14, batch=1, len_ctx=1024, weight_dtype="fp8", kv_dtype="fp8",
        quote="using a draft model increases throughput from 51.14 tokens per second to 181.74 tokens per "
              "second, achieving a speedup of 3.55 times.",
        url=_NV_SPEC, primary_read=False, checked_against=_NV_SPEC_CHECK, date="2024-12-17",
        engine="TensorRT-LLM, FP8, no draft model", assumed=_NV_SPEC_SETUP,
        notes="Tokens/s includes the time to the first token, which lowers it a little."),
    Measurement(
        key="trtllm-llama70b-h200-batch1-spec", model="llama-3-70b", system="H200", n_chips=1,
        per="sequence", kind="latency", measured=181.74, batch=1, len_ctx=1024, weight_dtype="fp8",
        kv_dtype="fp8",
        quote="using a draft model increases throughput from 51.14 tokens per second to 181.74 tokens per "
              "second, achieving a speedup of 3.55 times.",
        url=_NV_SPEC, primary_read=False, checked_against=_NV_SPEC_CHECK, date="2024-12-17",
        engine="TensorRT-LLM, FP8, Llama 3.2 1B draft model (draft-target)",
        speculative="a Llama 3.2 1B draft model (draft-target); acceptance not published",
        assumed=_NV_SPEC_SETUP + "; the bound is the one-token-per-step bound (tau = 1)",
        beats_bound_because="speculative decoding: the 1B draft proposes several tokens and the 70B model "
                            "verifies them in one step, so each step reads the weights once but emits "
                            "tau > 1 tokens. The bound with tau = 1 does not apply; measured / bound is a "
                            "lower limit on the accepted tokens per step."),
) + _trt_v1_rows()


def get(key: str) -> Measurement:
    """The row with this key; ``KeyError`` listing the keys otherwise."""
    if not isinstance(key, str):
        raise KeyError(f"key must be a measurement's name, got {validate._describe(key)}; known: "
                       f"{[row.key for row in MEASUREMENTS]}")
    for row in MEASUREMENTS:
        if row.key == key:
            return row
    raise KeyError(f"unknown measurement {key!r}; known: {[row.key for row in MEASUREMENTS]}")


def unread_primaries() -> list[Measurement]:
    """The rows whose primary text could not be read here (their quote was checked elsewhere)."""
    return [row for row in MEASUREMENTS if not row.primary_read]


def efficiency_summary(rows=None, *, kind: str | None = None) -> dict:
    """Share of the bound reached by ``rows`` (default: every row of the dataset).

    Returns ``{"n", "low", "high", "median"}`` over ``measured / bound``, and the ``"models"`` and row ``"keys"``
    behind them (a band from one model's deployments says little about another's). Left out: rows that beat their
    bound (speculative decoding: their bound is a different one), rows whose efficiency is only a
    lower limit (``lower_limit``: the publisher did not state a cost the bound needs), rows whose primary
    source could not be read, and multi-token-prediction or speculative rows held against a one-token bound
    (:func:`comparable`). ``kind`` filters.
    """
    if rows is None:
        rows = MEASUREMENTS
    elif isinstance(rows, (str, bytes)) or not hasattr(rows, "__iter__"):
        raise ValueError(f"rows must be an iterable of Measurement rows, got {validate._describe(rows)}")
    rows = tuple(rows)
    if not all(isinstance(row, Measurement) for row in rows):
        raise ValueError(f"rows must hold only Measurement rows, got {validate._describe(rows)}")
    if kind is not None:
        validate.choice("kind", kind, KINDS)
    kept = [row for row in rows if _comparable(row) and (kind is None or row.kind == kind)]
    eff = [row.efficiency for row in kept]
    if not eff:
        raise ValueError(f"rows must hold at least one row of kind {kind!r} that does not beat its bound")
    return {"n": len(eff), "low": min(eff), "high": max(eff), "median": statistics.median(eff),
            "models": sorted({row.model for row in kept}), "keys": [row.key for row in kept]}


def comparable(row: Measurement) -> bool:
    """Whether a row may stand in a band: its primary was read, its efficiency is not only a lower limit, it does
    not beat its bound, and a speculative or multi-token-prediction row is held against its own tokens-per-step
    bound (``tokens_per_step`` > 1), not the one-token bound."""
    if not isinstance(row, Measurement):
        raise ValueError(f"row must be a Measurement, got {validate._describe(row)}")
    return (row.primary_read and not row.lower_limit and not row.beats_bound_because
            and not (row.speculative and row.tokens_per_step == 1))


_comparable = comparable
#: Which kinds of figure share a band: output tokens/s at a batch (decode pools and engines that also prefill),
#: one sequence's tokens/s, input tokens/s.
BAND_KINDS = {"decode": ("decode", "serving"), "serving": ("decode", "serving"), "latency": ("latency",),
              "prefill": ("prefill",)}
#: A band of fewer rows than this says so and widens.
MIN_BAND_ROWS = 3


def _vendor(chip) -> str:
    """"AMD", "Google" or "NVIDIA" by the chip's generation ("custom" for a custom chip without a base preset)."""
    generation = chip.generation
    if generation.startswith("CDNA"):
        return "AMD"
    if generation.startswith("TPU"):
        return "Google"
    return "custom" if generation == "custom" else "NVIDIA"


def _at_fraction(row: Measurement, fraction: float):
    """``(regime, efficiency)`` of ``row`` with ``fraction`` of each device's HBM usable, or None when the row's own
    setup no longer fits there (its weights, or one sequence's KV, outgrow the smaller HBM): such a row is skipped
    from a band at that reserve, never an error in the plan that asked (the engineer's walk, finding 3)."""
    try:
        return row.regime(fraction), row.efficiency_at(fraction)
    except ValueError:
        return None


def reality_band(*, kind: str, moe: bool, regime: str, hbm_fraction: float = 1.0, vendor: str | None = None) -> dict:
    """The share of the bound that comparable published systems reached, for a plan of this class (issue 30 §3).

    Rows are those of :data:`BAND_KINDS` ``[kind]`` that may stand in a band (:func:`comparable`), of the same
    class: dense or MoE (``moe``), and memory- or compute-bound (``regime``) at their operating point. Each
    efficiency is measured / the row's bound with ``hbm_fraction`` of HBM usable, the plan's own reserve. With
    fewer than :data:`MIN_BAND_ROWS` such rows the band widens, first to either regime, then to either class,
    and ``widened`` says so; with none at all ``n`` is 0 and the shares are None. ``vendor`` ("NVIDIA", "AMD",
    "Google"; default None, every vendor) keeps that vendor's chips' rows when at least :data:`MIN_BAND_ROWS` of
    them are of the plan's class; otherwise the band is every vendor's, and ``borrowed`` says so (an AMD plan held
    to NVIDIA's engines). A row whose own setup does not fit at ``hbm_fraction`` (its weights outgrow the smaller
    HBM) is left out and named in ``skipped``. Returns ``{"n", "low", "high", "median", "keys", "models", "class",
    "widened", "borrowed", "skipped"}``.
    """
    validate.choice("kind", kind, tuple(BAND_KINDS))
    validate.boolean("moe", moe)
    validate.choice("regime", regime, ("memory", "compute"))
    fraction = validate.scalar("hbm_fraction", hbm_fraction, maximum=1.0)
    pool, skipped, at = [], [], {}
    for row in MEASUREMENTS:
        if row.kind in BAND_KINDS[kind] and comparable(row):
            at[row.key] = _at_fraction(row, fraction)
            (pool if at[row.key] is not None else skipped).append(row if at[row.key] is not None else row.key)
    label = f"{'MoE' if moe else 'dense'}, {regime}-bound"
    borrowed = ""
    if vendor is not None:
        validate.choice("vendor", vendor, ("NVIDIA", "AMD", "Google", "custom"))
        own = [row for row in pool if _vendor(row.deployment.chip) == vendor]
        own_class = [row for row in own if models.get(row.model).is_moe == moe and at[row.key][0] == regime]
        if len(own_class) >= MIN_BAND_ROWS:
            pool = own
        else:
            others = sorted({_vendor(row.deployment.chip) for row in pool} - {vendor})
            lower = [row.key for row in MEASUREMENTS if row.kind in BAND_KINDS[kind]
                     and _vendor(row.deployment.chip) == vendor and not comparable(row)]
            # the band is every vendor's rows: the plan's own vendor's too, with too few of its class to stand alone
            whose = " and ".join(sorted(set(others) | ({vendor} if own else set())))
            borrowed = (f"Chapter 8 has {len(own_class) or 'no'} comparable {vendor} {kind} row"
                        f"{'' if len(own_class) == 1 else 's'} of this class (a band needs {MIN_BAND_ROWS}), so the "
                        f"band is every vendor's rows ({whose})"
                        + (f" ({', '.join(lower)}: lower limits only, so not in a band)" if lower else ""))
            if not others:      # nothing borrowed from another vendor: the vendor's own rows of every class
                borrowed = ""
    same_class = [row for row in pool if models.get(row.model).is_moe == moe]
    same = [row for row in same_class if at[row.key][0] == regime]
    widened = ""
    if len(same) < MIN_BAND_ROWS:
        named = f"{kind} {label}"          # "no prefill dense, …": Chapter 8's class counts are of other kinds' rows
        widened = (f"no {named} row" if not same else f"only {len(same)} {named} row{'s' if len(same) != 1 else ''}")
        if len(same_class) >= MIN_BAND_ROWS:
            same, widened = same_class, widened + f": widened to every {'MoE' if moe else 'dense'} row"
        else:
            same, widened = pool, widened + f": widened to every {kind} row"
    if not same:
        return {"n": 0, "low": None, "high": None, "median": None, "keys": [], "models": [], "class": label,
                "widened": f"no comparable {kind} row in Chapter 8's dataset (rows whose primary could not be read "
                           f"and one-token bounds of speculative rows are left out)", "borrowed": borrowed,
                "skipped": skipped}
    eff = [at[row.key][1] for row in same]
    return {"n": len(eff), "low": min(eff), "high": max(eff), "median": statistics.median(eff),
            "keys": [row.key for row in same], "models": sorted({row.model for row in same}), "class": label,
            "widened": widened, "borrowed": borrowed, "skipped": skipped}


#: Chip generations the engine factor is measured for apart (their engines and kernels matured at different
#: times); a generation with too few dense rows uses every dense row.
ENGINE_GENERATIONS = ("Hopper", "Blackwell")


@lru_cache(maxsize=None)
def engine_efficiency(generation: str | None = None) -> float:
    """The engine factor of the realistic estimate: the median, over Chapter 8's comparable *dense* rows on chips of
    ``generation`` ("Hopper", "Blackwell"; None or any other: every dense row), of the measured figure over the
    realistic estimate with every other term on (:mod:`lecture_lib.realistic`).

    It is what scheduling, sampling, launches, kernels younger than the chip and batches below the largest that
    fits cost a real engine beyond the modelled terms. Measured on dense rows only, so the MoE rows the estimate is
    held against did not set it."""
    if generation is not None and not isinstance(generation, str):
        raise ValueError(f"generation must be a chip generation name or None, got {validate._describe(generation)}")
    rows = [row for row in MEASUREMENTS if comparable(row) and not models.get(row.model).is_moe]
    family = generation.split()[0] if generation else None      # "Blackwell Ultra" is measured with "Blackwell"
    same = [row for row in rows if row.deployment.chip.generation.split()[0] == family]
    terms = [term for term in realistic.TERMS if term != "engine"]
    chosen = same if len(same) >= MIN_BAND_ROWS else rows
    return statistics.median(row.measured / row.realistic_detail(terms, engine=1.0)["realistic"] for row in chosen)


#: The share either way the realistic estimate aims to land within (issue 51: ±35 %).
REALISTIC_TOLERANCE = 0.35

_MEMORY_TIGHT = ("memory-tight: the FP8 weights take {share} of each H100's 80 GB, and the estimate gives all the rest "
                 "to KV and runs the largest batch that fits. The memory the engine keeps beside the weights (activations "
                 "for the largest step, captured GPU programs, MoE scratch space) is not on the page, and on an 80 GB GPU it cuts the "
                 "batch the most: at half the fitted batch the estimate would be {half} of the published figure. The "
                 "H200 column of the same table, with {room} the room for KV, lands within ±35%")
_GB200_COLUMN = ("the same table's B200 column is {ratio} this GB200 column, while for dense Llama 3.3 70B the GB200 "
                 "column is 1.05× the B200's; the GB200 has at least the B200's HBM bandwidth and FLOP/s "
                 "(hardware.get), so no term of the chip explains it: the GB200 runs differ in a setup the page does "
                 "not state (engine build, MoE backend or batch)")
#: Why the realistic estimate misses the rows it misses by more than :data:`REALISTIC_TOLERANCE`: each cause is a
#: reason found, not a term fitted to the row (issue 51 §4). A row here must be outside the band and a row outside
#: the band must be here (tests/test_reality.py); a new term that brings one in removes it (realistic's
#: ``dp_prefill_wait`` brought TensorRT-LLM's two in-flight-batched DeepSeek-R1 rows in: 1.51 and 1.48 before).
REALISTIC_MISSES = {
    "trtllm-v1-llama-4-scout-gb200x1": _GB200_COLUMN.format(ratio="1.37×"),
    "trtllm-v1-qwen3-30b-a3b-gb200x1": _GB200_COLUMN.format(ratio="1.48×"),
    "trtllm-v1-qwen3-30b-a3b-b200x1": (
        "the smallest experts of the dataset (Qwen3-30B-A3B: 128 experts of 768 columns per layer, 8 routed, about 3 B "
        "active): one GPU, so no communication or imbalance; the step is mostly KV reads and 48 layers of short "
        "kernels (attention, router, a grouped GEMM over 128 small experts) whose launch and routing costs weigh "
        "most at 3 B active parameters. No published kernel figure for these shapes was found, so the estimate "
        "leaves it out; its GB200 column is lower still (see that row)"),
    "trtllm-v1-llama-4-scout-h100x4": _MEMORY_TIGHT.format(share="34%", half="1.35×", room="2.2×"),
    "trtllm-v1-llama-4-maverick-h100x8": _MEMORY_TIGHT.format(share="63%", half="1.59×", room="3×"),
}


def realistic_table(*, moe: bool | None = True, terms=None) -> list[dict]:
    """One dict per comparable row (:func:`comparable`; MoE rows by default, dense with ``moe=False``, all with
    None): key, model, hardware, kind, measured, bound, realistic, ``ratio`` = realistic / measured,
    ``within`` (the ratio within :data:`REALISTIC_TOLERANCE`), ``bound_share`` = measured / bound, and ``why``: the
    reason a row outside the band misses (:data:`REALISTIC_MISSES`; empty inside it)."""
    if moe is not None:
        validate.boolean("moe", moe)
    out = []
    for row in MEASUREMENTS:
        if not comparable(row) or (moe is not None and models.get(row.model).is_moe != moe):
            continue
        detail = row.realistic_detail(terms) if terms is not None else {"realistic": row.realistic}
        value = detail["realistic"]
        ratio = value / row.measured
        out.append({"key": row.key, "model": row.model, "hardware": row.deployment.name, "kind": row.kind,
                    "per": row.per, "measured": row.measured, "bound": row.bound, "realistic": value,
                    "ratio": ratio, "within": abs(ratio - 1) <= REALISTIC_TOLERANCE,
                    "bound_share": row.efficiency,
                    "why": "" if abs(ratio - 1) <= REALISTIC_TOLERANCE else REALISTIC_MISSES.get(
                        row.key, "not yet explained")})
    return out


def realistic_table_html(*, moe: bool | None = True) -> "IPython.display.HTML":
    """:func:`realistic_table` as a compact HTML table: figure, published, bound, realistic, realistic / published."""
    import html

    from IPython.display import HTML

    cell = "padding:2px 6px;text-align:left"
    head = "".join(f"<th style='{cell}'>{h}</th>" for h in
                   ("figure", "published tok/s", "bound", "realistic", "realistic / published", "published / bound"))
    body = []
    rows = realistic_table(moe=moe)
    for row in rows:
        mark = "" if row["within"] else " ✗"
        body.append(f"<tr><td style='{cell}'><b>{html.escape(row['model'])}</b> · {html.escape(row['hardware'])} "
                    f"<span style='color:#555'>({html.escape(row['kind'])} per {html.escape(row['per'])})</span></td>"
                    f"<td style='{cell}'>{sig(row['measured'])}</td><td style='{cell}'>{sig(row['bound'])}</td>"
                    f"<td style='{cell}'>{sig(row['realistic'])}</td><td style='{cell}'>{row['ratio']:.2f}{mark}</td>"
                    f"<td style='{cell}'>{row['bound_share']:.0%}</td></tr>")
    inside = sum(row["within"] for row in rows)
    for row in rows:
        if not row["within"]:
            body.append(f"<tr><td colspan='6' style='{cell};color:#555;font-size:11px'>✗ {html.escape(row['key'])}: "
                        f"{html.escape(row['why'])}</td></tr>")
    factors = ", ".join(f"{name} {engine_efficiency(name):.2f}" for name in ENGINE_GENERATIONS)
    caption = (f"{inside} of {len(rows)} rows within ±{REALISTIC_TOLERANCE:.0%} (✗: outside); engine factor "
               f"measured on the dense rows of each generation ({factors}); measurements.realistic_table()")
    return HTML(f"<table style='font-size:12px;border-collapse:collapse'><caption style='caption-side:bottom;"
                f"text-align:left'>{html.escape(caption)}</caption><thead><tr>{head}</tr></thead><tbody>"
                f"{''.join(body)}</tbody></table>")


def table() -> list[dict]:
    """One dict per row: key, model, hardware, layout (label and the one the bound uses), kind, measured,
    bound, efficiency, date, url, source."""
    rows = []
    for row in MEASUREMENTS:
        d = row.deployment
        chosen = roofline.resolve_layout(row.bound_layout)
        rows.append({"key": row.key, "model": row.model, "hardware": d.name, "layout": row.layout,
                     "bound_layout": "pooled" if chosen is None else chosen.name,
                     "kind": row.kind, "per": row.per, "measured": row.measured, "bound": row.bound,
                     "efficiency": row.efficiency, "date": row.date, "url": row.url,
                     "primary_read": row.primary_read, "lower_limit": row.lower_limit, "source": row.source,
                     "beats_bound_because": row.beats_bound_because})
    return rows


def sig(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant figures with thousands separators: 14,800 -> '14,800',
    87,685.7 -> '87,700', 51.14 -> '51.1', 0.5 -> '0.5'. No trailing zeros after the point (no false
    precision)."""
    value = validate.scalar("value", value)
    digits = validate.integer("digits", digits, maximum=15)
    rounded = float(f"{value:.{digits}g}")
    decimals = max(0, digits - 1 - int(f"{rounded:e}".split("e")[1]))
    text = f"{rounded:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _short_source(url: str) -> str:
    parts = urlparse(url)
    host = parts.hostname.removeprefix("www.")
    if host == "github.com":
        owner_repo = "/".join(parts.path.strip("/").split("/")[:2])
        return f"github.com/{owner_repo}"
    return host + ("/" + parts.path.strip("/").split("/")[0] if parts.path.strip("/") else "")


def table_html(*, second_look: float = 1.3) -> "IPython.display.HTML":
    """The dataset as a compact HTML table that fits the notebook column.

    Columns: figure (model, hardware, what is counted), published and bound tokens/s to three
    significant figures, efficiency, and the source (the publisher, linked; ``*`` where the primary
    could not be read). Rows within ``second_look`` × of their bound (or above it) are flagged.
    """
    import html

    from IPython.display import HTML

    second_look = validate.scalar("second_look", second_look)
    cell = "padding:2px 6px;vertical-align:top;text-align:left"
    head = "".join(f"<th style='{cell}'>{h}</th>" for h in
                   ("figure", "published tok/s", "bound tok/s", "share", "source"))
    body = []
    for row in MEASUREMENTS:
        eff = row.efficiency
        flag = " ⚠ above (reason given)" if eff > 1 else (" ⚠ second look" if eff * second_look >= 1 else "")
        flag += " (at least)" if row.lower_limit else ""
        figure = (f"<b>{html.escape(row.model)}</b> · {html.escape(row.deployment.name)}<br>"
                  f"<span style='color:#555'>{html.escape(row.kind)} per {html.escape(row.per)} · "
                  f"{html.escape(row.date)}</span>")
        star = "" if row.primary_read else " *"
        source = (f"<a href='{html.escape(row.url)}' target='_blank'>{html.escape(_short_source(row.url))}</a>"
                  f"{star}")
        body.append(f"<tr><td style='{cell}'>{figure}</td><td style='{cell}'>{sig(row.measured)}</td>"
                    f"<td style='{cell}'>{sig(row.bound)}</td><td style='{cell}'>{eff:.0%}{flag}</td>"
                    f"<td style='{cell};word-break:break-all'>{source}</td></tr>")
    unread = len(unread_primaries())
    caption = (f"Bounds computed by lecture_lib.measurements from each row's setup (measurements.get(key)); "
               f"* = primary not readable here, quote checked elsewhere ({unread} of {len(MEASUREMENTS)} rows).")
    return HTML(f"<div style='max-width:100%;overflow-x:auto'><table style='font-size:12px;border-collapse:"
                f"collapse;width:100%'><caption style='caption-side:bottom;text-align:left;font-size:90%'>"
                f"{html.escape(caption)}</caption><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody>"
                f"</table></div>")
