"""Chapter 8: published serving measurements, each held against the bound the course computes.

Every row records where its figure was published (URL and date), the figure exactly as quoted, and
the setup (model, chip, how many, batch or concurrency, formats, lengths, engine). Anything the source
does not state but the bound needs is listed in ``assumed``; a figure we could not find quoted is not
in the table at all. The URL is the page the quote was read on (``via`` names the original when the
page is a faithful mirror or summary of it).

The bound is computed through the public API only (:mod:`lecture_lib.roofline`,
:mod:`lecture_lib.collectives`, presets from :mod:`lecture_lib.hardware` and :mod:`lecture_lib.models`):
a deployment of several nodes is ``collectives.deployment(system, n_systems=...)``, never a hand-made
multiple. ``efficiency = measured / bound``; above 1 means the row beats its bound, which the table
allows only with a written reason (``beats_bound_because``).

Four kinds of figure:

- ``"decode"``: output tokens/s of a decode pool at large batch; the bound is
  :func:`roofline.decode_bound` at the largest batch that fits (:func:`roofline.batch_that_fits`).
- ``"prefill"``: input tokens/s of a prefill pool; the bound is :func:`roofline.prefill_bound`
  (cached tokens counted as input, as providers count them).
- ``"serving"``: output tokens/s of GPUs that both prefill and decode requests of ``len_in`` input and
  ``len_out`` output tokens (engine max-throughput benchmarks): per request, the prefill time plus
  ``len_out`` decode steps' share at the largest batch that fits.
- ``"latency"``: tokens/s seen by one sequence at batch ``batch`` (batch-1 decode).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from . import collectives, hardware, models, roofline, validate

KINDS = ("decode", "prefill", "serving", "latency")
#: Bytes per gpt-style block-scaled 4-bit weight (NVFP4: 4 bits + one 8-bit scale per 16 values).
NVFP4_BYTES = 0.5 + 1 / 16


@dataclass(frozen=True, kw_only=True)
class Measurement:
    """One published serving figure and its setup. ``measured`` is in tokens/s per ``per``."""

    key: str
    model: str
    system: str              # a hardware.get_system() preset (or a chip name with n_chips)
    n_systems: int = 1
    n_chips: int | None = None  # only when ``system`` names a bare chip
    per: str                 # "node", "GPU", "deployment" or "sequence": what the figure is divided by
    kind: str
    measured: float
    quote: str
    url: str
    date: str
    engine: str
    batch: float | None = None   # sequences decoded together, when stated (latency rows)
    len_in: float = 0
    len_out: float = 0
    len_ctx: float = 0          # decode context used in the bound
    hit_rate: float = 0.0
    weight_dtype: object = "fp8"
    expert_weight_dtype: object = None
    compute_dtype: str = "fp8"
    expert_compute_dtype: str | None = None
    kv_dtype: object = "bf16"
    tokens_per_step: float = 1.0
    via: str = ""
    assumed: str = ""
    beats_bound_because: str = ""
    notes: str = ""

    def __post_init__(self):
        validate.choice("kind", self.kind, KINDS)
        validate.choice("per", self.per, ("node", "GPU", "deployment", "sequence"))
        validate.number("measured", self.measured)
        for name in ("quote", "url", "date", "engine"):
            if not isinstance(getattr(self, name), str) or len(getattr(self, name)) < 4:
                raise ValueError(f"{self.key}: {name} must be a non-empty str")

    # -- what the course computes -----------------------------------------------------------------
    @property
    def deployment(self) -> collectives.Deployment:
        if self.n_chips is not None:
            return collectives.deployment(hardware.get(self.system), n_chips=self.n_chips,
                                          n_systems=self.n_systems)
        return collectives.deployment(hardware.get_system(self.system), n_systems=self.n_systems)

    @property
    def divisor(self) -> float:
        """How many units the deployment-wide bound is divided by to match ``per``."""
        d = self.deployment
        return {"node": d.n_domains if self.n_chips is None else max(1, d.n_chips // 8), "GPU": d.n_chips,
                "deployment": 1, "sequence": 1}[self.per]

    def _decode(self, batch, len_ctx):
        return roofline.decode_bound(
            models.get(self.model), self.deployment, batch=batch, len_ctx=len_ctx,
            weight_dtype=self.weight_dtype, expert_weight_dtype=self.expert_weight_dtype,
            compute_dtype=self.compute_dtype, expert_compute_dtype=self.expert_compute_dtype,
            kv_dtype=self.kv_dtype, tokens_per_step=self.tokens_per_step)

    def _batch_that_fits(self, len_ctx) -> float:
        return roofline.batch_that_fits(models.get(self.model), self.deployment, len_ctx=len_ctx,
                                        weight_bytes=self.weight_dtype, kv_dtype=self.kv_dtype)

    def bound_detail(self) -> dict:
        """The bound (tokens/s per ``per``) and the pieces it came from."""
        m, d = models.get(self.model), self.deployment
        if self.kind == "latency":
            step = self._decode(self.batch or 1, self.len_ctx)
            return {"bound": step["tokens_per_s_per_seq"], "batch": self.batch or 1, **step}
        if self.kind == "decode":
            batch = self._batch_that_fits(self.len_ctx)
            step = self._decode(batch, self.len_ctx)
            return {"bound": step["tokens_per_s"] / self.divisor, "batch": batch, **step}
        if self.kind == "prefill":
            pre = roofline.prefill_bound(m, d, len_in=self.len_in, hit_rate=self.hit_rate,
                                         compute_dtype=self.compute_dtype,
                                         expert_compute_dtype=self.expert_compute_dtype)
            return {"bound": pre["input_tokens_per_s"] / self.divisor, **pre}
        # serving: prefill each request, then decode it at the batch that fits at its mean context
        pre = roofline.prefill_bound(m, d, len_in=self.len_in, compute_dtype=self.compute_dtype,
                                     expert_compute_dtype=self.expert_compute_dtype)
        context = self.len_in + self.len_out / 2
        batch = self._batch_that_fits(context)
        step = self._decode(batch, context)
        seconds_per_request = pre["t_prefill"] + self.len_out * step["t"] / (batch * self.tokens_per_step)
        return {"bound": self.len_out / seconds_per_request / self.divisor, "batch": batch,
                "t_prefill": pre["t_prefill"], **step}

    @property
    def bound(self) -> float:
        return _bound(self)

    @property
    def efficiency(self) -> float:
        """measured / bound: the share of the roofline the published system reached."""
        return self.measured / self.bound


@lru_cache(maxsize=None)
def _bound(row: Measurement) -> float:
    return row.bound_detail()["bound"]


_DS_DAY6 = ("https://github.com/deepseek-ai/open-infra-index/blob/main/202502OpenSourceWeek/"
            "day_6_one_more_thing_deepseekV3R1_inference_system_overview.md")
_LMSYS_96 = "https://lmsys.org/blog/2025-05-05-large-scale-ep/"
_LMSYS_GB200 = "https://lmsys.org/blog/2025-10-14-sa-inference-max"
_TRT_PERF = "https://nvidia.github.io/TensorRT-LLM/performance/perf-overview.html"
_TRT_VIA = "read through the movatter.jp proxy of the live page (the 'FP4 Models' throughput table)"
_TRT_DATE = "2025 (inferred: the page lists GB200 and Llama 3.3; its own date is not in the text we read)"
_LAYOUTS = ("deployment units from the DeepSeek overview as summarised in a public course text (prefill 4 nodes EP32, "
            "decode 18 nodes EP144; SGLang 3 prefill : 9 decode nodes), found by full-text search of public GitHub "
            "files, not in the original; read 2026-12-01")
_NV_405B = ("NVIDIA Technical Blog post on Llama 3.1 405B with TensorRT Model Optimizer (its own URL not verified "
            "here), as summarised by blockchain.news on 2024-08-29 and mirrored by 3acesnews.com")
_NV_SPEC = ("https://developer.nvidia.com/blog/boost-llama-3-3-70b-inference-throughput-3x-with-nvidia-"
            "tensorrt-llm-speculative-decoding/")

MEASUREMENTS: tuple[Measurement, ...] = (
    # --- DeepSeek's own service (provider disclosure) -------------------------------------------
    Measurement(
        key="deepseek-decode-h800", model="deepseek-v3", system="HGX H800", n_systems=18, per="node",
        kind="decode", measured=14.8e3, len_ctx=4096, weight_dtype="fp8", kv_dtype="bf16",
        quote="Throughput per H800 node: 73.7k input tokens per second (prefill), 14.8k output tokens "
              "per second (decode).",
        url="https://aiposthub.cc/5152", via=_DS_DAY6, date="2025-03-01",
        engine="DeepSeek in-house (DeepEP, DeepGEMM, EPLB); decode EP144 over 18 nodes",
        assumed="context 4096 tokens (not published); KV latent in bf16 ('BF16 for core MLA'); "
                "batch = what fits in HBM; no MTP; " + _LAYOUTS,
        notes="A 24-hour average of a live service, load varying through the day: not a peak."),
    Measurement(
        key="deepseek-prefill-h800", model="deepseek-v3", system="HGX H800", n_systems=4, per="node",
        kind="prefill", measured=73.7e3, len_in=2000, hit_rate=0.563, compute_dtype="fp8",
        quote="Total input tokens: 608B (56.3% cache hit rate). [...] Throughput per H800 node: 73.7k "
              "input tokens per second (prefill)",
        url="https://aiposthub.cc/5152", via=_DS_DAY6, date="2025-03-01",
        engine="DeepSeek in-house; prefill EP32 over 4 nodes",
        assumed="prompt length 2000 (not published); the day's 56.3% hit rate applied to every prompt; "
                + _LAYOUTS,
        notes="Input tokens include cache hits, so the prefix cache lifts the bound by 1/(1 - 0.563)."),
    # --- SGLang reproduces it on H100 ----------------------------------------------------------
    Measurement(
        key="sglang-decode-96xh100", model="deepseek-v3", system="HGX H100", n_systems=9, per="node",
        kind="decode", measured=22.3e3, len_ctx=2000, weight_dtype="fp8", kv_dtype="bf16",
        quote="achieving a speed of 52.3k input tokens per second and 22.3k output tokens per second per "
              "node for 2000-token input sequences",
        url="https://vuink.com/post/yzflf-d-dbet/blog/2025-05-05-large-scale-ep", via=_LMSYS_96,
        date="2025-05-05", engine="SGLang, PD disaggregation, DeepEP, EPLB; 9 decode nodes (EP72)",
        assumed="context 2000 (the input length; output length not in the quote); bf16 KV; batch = what "
                "fits in HBM; " + _LAYOUTS),
    Measurement(
        key="sglang-prefill-96xh100", model="deepseek-v3", system="HGX H100", n_systems=3, per="node",
        kind="prefill", measured=52.3e3, len_in=2000, compute_dtype="fp8",
        quote="achieving a speed of 52.3k input tokens per second and 22.3k output tokens per second per "
              "node for 2000-token input sequences",
        url="https://vuink.com/post/yzflf-d-dbet/blog/2025-05-05-large-scale-ep", via=_LMSYS_96,
        date="2025-05-05", engine="SGLang, PD disaggregation; 3 prefill nodes",
        assumed="no prefix-cache hits (synthetic prompts); the per-node bound does not depend on the node "
                "count; " + _LAYOUTS),
    # --- SGLang on a GB200 NVL72 ---------------------------------------------------------------
    Measurement(
        key="sglang-decode-gb200", model="deepseek-v3", system="GB200 NVL72", per="GPU",
        kind="decode", measured=13e3, len_ctx=2000, weight_dtype="fp8", expert_weight_dtype=NVFP4_BYTES,
        compute_dtype="fp8", expert_compute_dtype="fp4", kv_dtype="fp8",
        quote="On an NVIDIA GB200 NVL72 system, SGLang served the DeepSeek R1 models at an incredible 26k "
              "input and 13k output tokens per second per GPU for prefill and decode, respectively.",
        url=_LMSYS_GB200, date="2025-10-14", engine="SGLang, PD disaggregation, wide EP, NVFP4 MoE",
        assumed="context 2000; FP8 KV ('FP8 attention'); NVFP4 experts, FP8 elsewhere; batch = what fits"),
    Measurement(
        key="sglang-prefill-gb200", model="deepseek-v3", system="GB200 NVL72", per="GPU",
        kind="prefill", measured=26e3, len_in=2000, compute_dtype="fp8", expert_compute_dtype="fp4",
        quote="On an NVIDIA GB200 NVL72 system, SGLang served the DeepSeek R1 models at an incredible 26k "
              "input and 13k output tokens per second per GPU for prefill and decode, respectively.",
        url=_LMSYS_GB200, date="2025-10-14", engine="SGLang, PD disaggregation, wide EP, NVFP4 MoE",
        assumed="prompt length 2000; no cache hits; expert matmuls at the FP4 peak"),
    # --- TensorRT-LLM max-throughput tables (dense 70B, one GPU) ------------------------------
    Measurement(
        key="trtllm-llama70b-fp4-b200", model="llama-3-70b", system="B200", n_chips=1, per="GPU",
        kind="serving", measured=10613.84, len_in=128, len_out=128, weight_dtype=NVFP4_BYTES,
        compute_dtype="fp4", kv_dtype="fp8",
        quote="Llama 3.3 70B FP4 [...] GPU: B200 GB200 TP Size 1 1 ISL, OSL 128, 128 10,613.84 11,100.97",
        url=_TRT_PERF, via=_TRT_VIA, date=_TRT_DATE,
        engine="TensorRT-LLM trtllm-bench, max load, nvidia/Llama-3.3-70B-Instruct-FP4",
        assumed="FP8 KV cache; Llama-3.3-70B shares Llama-3-70B's shapes",
        notes="TotalOutputThroughput with requests fed at an infinite rate."),
    Measurement(
        key="trtllm-llama70b-fp4-gb200", model="llama-3-70b", system="GB200", n_chips=1, per="GPU",
        kind="serving", measured=11100.97, len_in=128, len_out=128, weight_dtype=NVFP4_BYTES,
        compute_dtype="fp4", kv_dtype="fp8",
        quote="Llama 3.3 70B FP4 [...] GPU: B200 GB200 TP Size 1 1 ISL, OSL 128, 128 10,613.84 11,100.97",
        url=_TRT_PERF, via=_TRT_VIA, date=_TRT_DATE,
        engine="TensorRT-LLM trtllm-bench, max load, nvidia/Llama-3.3-70B-Instruct-FP4",
        assumed="FP8 KV cache; Llama-3.3-70B shares Llama-3-70B's shapes"),
    # --- Llama 3.1 405B on an HGX H200, tensor parallel over 8 ----------------------------------
    Measurement(
        key="trtllm-llama405b-h200-2k", model="llama-3-405b", system="HGX H200", per="deployment",
        kind="serving", measured=463.1, len_in=2048, len_out=128, weight_dtype="fp8", kv_dtype="fp8",
        quote="Maximum Throughput Performance – Output Tokens/Second 8 NVIDIA H200 Tensor Core GPUs | "
              "Input | Output Sequence Lengths | 2,048 | 128 | 32,768 | 2,048 | 120,000 | 2,048 | "
              "TensorRT Model Optimizer FP8 | 463.1 | 320.1 | 71.5 |",
        url="https://3acesnews.com/nvidia-enhances-llama-3-1-405b-performance-with-tensorrt-model-optimizer",
        via=_NV_405B, date="2024-08-29", engine="TensorRT-LLM, FP8 weights and FP8 KV cache, TP8",
        assumed="tensor parallelism over all 8 GPUs (the HGX H200 preset)"),
    Measurement(
        key="trtllm-llama405b-h200-32k", model="llama-3-405b", system="HGX H200", per="deployment",
        kind="serving", measured=320.1, len_in=32768, len_out=2048, weight_dtype="fp8", kv_dtype="fp8",
        quote="Input | Output Sequence Lengths | 2,048 | 128 | 32,768 | 2,048 | 120,000 | 2,048 | "
              "TensorRT Model Optimizer FP8 | 463.1 | 320.1 | 71.5 |",
        url="https://3acesnews.com/nvidia-enhances-llama-3-1-405b-performance-with-tensorrt-model-optimizer",
        via=_NV_405B, date="2024-08-29", engine="TensorRT-LLM, FP8 weights and FP8 KV cache, TP8",
        assumed="tensor parallelism over all 8 GPUs"),
    Measurement(
        key="trtllm-llama405b-h200-120k", model="llama-3-405b", system="HGX H200", per="deployment",
        kind="serving", measured=71.5, len_in=120000, len_out=2048, weight_dtype="fp8", kv_dtype="fp8",
        quote="Input | Output Sequence Lengths | 2,048 | 128 | 32,768 | 2,048 | 120,000 | 2,048 | "
              "TensorRT Model Optimizer FP8 | 463.1 | 320.1 | 71.5 |",
        url="https://3acesnews.com/nvidia-enhances-llama-3-1-405b-performance-with-tensorrt-model-optimizer",
        via=_NV_405B, date="2024-08-29", engine="TensorRT-LLM, FP8 weights and FP8 KV cache, TP8",
        assumed="tensor parallelism over all 8 GPUs",
        notes="At 120k tokens of prompt, attention is a large share of the FLOPs: the bound needs it."),
    # --- Batch-1 decode, with and without speculative decoding ----------------------------------
    Measurement(
        key="trtllm-llama70b-h200-batch1", model="llama-3-70b", system="H200", n_chips=1, per="sequence",
        kind="latency", measured=51.14, batch=1, len_ctx=1024, weight_dtype="fp8", kv_dtype="fp8",
        quote="using a draft model increases throughput from 51.14 tokens per second to 181.74 tokens per "
              "second, achieving a speedup of 3.55 times.",
        url="https://bitcoinnewsinvest.com/nvidia-enhances-llama-3-3-70b-model-performance-with-tensorrt-llm",
        via=_NV_SPEC, date="2024-12-17", engine="TensorRT-LLM, FP8, no draft model",
        assumed="one H200 (the summary says 'NVIDIA's H200 Tensor Core GPU'), batch 1, context ~1k: the "
                "table's footnote with these settings is not in the text we could read",
        notes="Tokens/s includes the time to the first token, which lowers it a little."),
    Measurement(
        key="trtllm-llama70b-h200-batch1-spec", model="llama-3-70b", system="H200", n_chips=1,
        per="sequence", kind="latency", measured=181.74, batch=1, len_ctx=1024, weight_dtype="fp8",
        kv_dtype="fp8",
        quote="using a draft model increases throughput from 51.14 tokens per second to 181.74 tokens per "
              "second, achieving a speedup of 3.55 times.",
        url="https://bitcoinnewsinvest.com/nvidia-enhances-llama-3-3-70b-model-performance-with-tensorrt-llm",
        via=_NV_SPEC, date="2024-12-17", engine="TensorRT-LLM, FP8, Llama 3.2 1B draft model (draft-target)",
        assumed="as the row above; the bound is the one-token-per-step bound (tau = 1)",
        beats_bound_because="speculative decoding: the 1B draft proposes several tokens and the 70B model "
                            "verifies them in one step, so each step reads the weights once but emits "
                            "tau > 1 tokens. The bound with tau = 1 does not apply; measured / bound is a "
                            "lower limit on the accepted tokens per step."),
)


def get(key: str) -> Measurement:
    """The row with this key; ``KeyError`` listing the keys otherwise."""
    if not isinstance(key, str):
        raise KeyError(f"key must be a measurement's name, got {validate._describe(key)}; known: "
                       f"{[row.key for row in MEASUREMENTS]}")
    for row in MEASUREMENTS:
        if row.key == key:
            return row
    raise KeyError(f"unknown measurement {key!r}; known: {[row.key for row in MEASUREMENTS]}")


def table() -> list[dict]:
    """One dict per row: key, model, hardware, kind, measured, bound, efficiency, date, url."""
    rows = []
    for row in MEASUREMENTS:
        d = row.deployment
        rows.append({"key": row.key, "model": row.model, "hardware": d.name, "kind": row.kind,
                     "per": row.per, "measured": row.measured, "bound": row.bound,
                     "efficiency": row.efficiency, "date": row.date, "url": row.url, "via": row.via,
                     "beats_bound_because": row.beats_bound_because})
    return rows


def table_html(*, second_look: float = 1.3) -> "IPython.display.HTML":
    """The dataset as an HTML table: setup, published figure, bound, efficiency, date and source.

    Rows within ``second_look`` × of their bound (or above it) are flagged.
    """
    from .tables import _html_table, _link

    second_look = validate.scalar("second_look", second_look)
    body = []
    for row in MEASUREMENTS:
        eff = row.efficiency
        flag = " ⚠ beats its bound (see reason)" if eff > 1 else (" ⚠ second look" if eff * second_look >= 1 else "")
        body.append([row.key, row.model, row.deployment.name, f"{row.kind} / {row.per}",
                     f"{row.measured:,.1f}", f"{row.bound:,.1f}", f"{eff:.0%}{flag}", row.date,
                     _link(row.url)])
    return _html_table(["key", "model", "hardware", "kind / per", "published tok/s", "bound tok/s",
                        "efficiency", "date", "source"], body,
                       caption="Bounds from lecture_lib.roofline through lecture_lib.measurements; "
                               "assumptions per row in measurements.get(key).assumed.")
