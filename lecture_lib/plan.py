"""Chapter 10: plan a deployment with everything chapters 1-9 taught, and see how far real systems land from it.

``plan(model, system, price_per_gpu_hour=..., len_ctx=...)`` puts the chapters' functions together in
one table (issue 22 §2). Every number is computed by a function the chapters already use; nothing is
retyped here:

- **Capacity** per layout (Chapter 8's :func:`roofline.device_memory` and :func:`roofline.batch_that_fits`
  with ``layout=``; pipeline stages over the scale-up domains with Chapter 4's
  :func:`pipeline_memory.memory_per_gpu` and :func:`pipeline_memory.max_micro_batch`).
- **Decode**: Chapter 1's balance batch B* (:func:`roofline.balance_batch`, with the model's sparsity) and
  with KV (:func:`roofline.balance_batch_with_kv`); the latency floor (:func:`roofline.decode_bound` at
  batch 1); tokens/s per GPU and per user at the operating batch.
- **Prefill**: :func:`roofline.prefill_bound` for one request of ``len_ctx`` tokens.
- **Cost**: :func:`roofline.cost_per_token` (:data:`roofline.COST_OF_STEP`) for output and input tokens.
- **Layouts compared**: Chapter 3's decode idle fraction (:func:`pipeline.decode_idle_fraction`) and
  Chapter 2's cross-rack all-to-all (:func:`moe.a2a_layer_time`, :data:`moe.CROSS_RACK_FRACTION`).
- **Reality**: Chapter 8's dataset (:func:`measurements.efficiency_summary`): the band of this bound that
  published systems reached, applied to the headline rates so a bound is never read as a forecast.

The headline decode and prefill figures use ``layout`` (default "auto": DP attention with expert parallelism
for an MoE model on several devices, as DeepSeek and SGLang serve them, tensor parallelism otherwise; Chapter 8's
rows are bounded under their publishers' layouts the same way, so its band applies to them as it is).

Run from a shell: ``python -m lecture_lib.plan deepseek-v3 "HGX H200" --price 3.5 --context 8192``
(``--help`` lists the options; ``--json`` prints the same numbers as JSON).
"""

from __future__ import annotations

import argparse
import dataclasses
import html
import json
import math
import os
import re
import sys
from dataclasses import dataclass, field

import sympy as sp

from . import (
    collectives,
    hardware,
    hf_config,
    measurements,
    models,
    moe,
    pipeline,
    pipeline_memory,
    realistic,
    roofline,
    units,
    validate,
)
from .formula import Formula

#: Sections of a plan, in the order they are printed.
SECTIONS = ("inputs", "capacity", "decode", "prefill", "requests", "cost", "layouts", "reality", "realistic")
TITLES = {"inputs": "Inputs", "capacity": "Capacity (per layout)", "decode": "Decode (bound)",
          "prefill": "Prefill (bound)", "requests": "Requests of --input-len + --output-len tokens (bound)",
          "cost": "Cost (bound; REALISTIC lines at the realistic estimate)", "layouts": "Layouts compared", "reality": "Reality (Chapter 8's dataset)",
          "realistic": "Realistic estimate (the terms the bound leaves out, each switchable)"}
#: Where each section's numbers come from (the notebook links these chapters).
CHAPTERS = {"capacity": "Chapters 1, 4 and 8", "decode": "Chapters 1 and 8", "prefill": "Chapter 8",
            "requests": "Chapter 8",
            "cost": "Chapter 1", "layouts": "Chapters 2, 3 and 4", "reality": "Chapter 8", "realistic": "Chapters 8 and 9"}
MAX_BATCH = 10**9   # the operating-batch search stops here (a bound past a billion sequences says nothing)
PER_MILLION = 1e6
#: The share of each GPU's HBM a plan gives to weights and KV by default; the rest is the runtime's reserve for
#: activations, CUDA graphs and fragmentation (vLLM's ``gpu_memory_utilization`` defaults to 0.9).
MEMORY_UTILIZATION = 0.9
#: The most GPUs a plan takes (a million; more says nothing about a real deployment).
MAX_GPUS = 10**6
#: The request a plan assumes when it is given neither lengths nor a context (its first line says so): 1,000 prompt
#: and 1,000 output tokens, the lengths TensorRT-LLM's performance tables lead with (Chapter 8's TensorRT-LLM rows).
DEFAULT_LENGTHS = (1000, 1000)
#: "offline": the largest throughput that fits; "server": the largest that meets time-to-first-token and
#: time-per-output-token limits (MLPerf Inference's two datacentre scenarios for LLMs).
SCENARIOS = ("offline", "server")

_t_pre_alone, _t_pre_busy, _t_step, _ttft, _tpot = sp.symbols("t_alone t_busy t_step t_TTFT t_TPOT", positive=True)
_b, _tau, _l_out = sp.symbols("B tau L_out", positive=True)
TTFT_UNDER_LOAD = Formula(
    _ttft, _t_pre_alone + _t_step,
    source="course (Ch 10): a prompt that arrives waits for the decode step in flight, then prefills on its own "
           "replica (roofline.prefill_bound with dense_devices / expert_devices)",
    note="a bound: no queue of other prompts ahead of it")
TPOT_UNDER_LOAD = Formula(
    _tpot, _t_step / _tau + _b * _t_pre_busy / _l_out,
    source="course (Ch 10): in steady state B / L_out requests finish, and as many start, per step; their prefills "
           "(t_prefill,busy each, every GPU on prompts) share the GPUs with the step, so each output token waits "
           "t_step / tau plus that share",
    note="the same accounting as the throughput of requests: B tau output tokens per (t_step + B tau t_busy / L_out)")


@dataclass(frozen=True)
class Row:
    """One line of a plan: ``value`` is the raw number (SI units: seconds, bytes, tokens/s, dollars),
    ``text`` how a person reads it, ``source`` the course function it came from."""

    section: str
    key: str
    label: str
    value: object
    text: str
    source: str = ""


@dataclass
class Plan:
    """A deployment plan: rows by section (:data:`SECTIONS`), and the raw numbers in :attr:`numbers`.

    ``plan.numbers["decode"]["tokens_per_s_per_gpu"]`` is a raw number; :meth:`text` is a plain table,
    :meth:`to_dict` / :meth:`to_json` the same numbers for a program, and a notebook shows the HTML table.
    """

    model: object
    deployment: object
    rows: list = field(default_factory=list)
    title: str = ""
    decode_settings: dict = field(default_factory=dict)     # what the headline decode figures were computed with
    pipeline: dict = field(default_factory=lambda: {"pp": 1, "fit_layout": None})   # pipeline stages, if any
    notes: str | None = None                                 # the model notes as this plan used them
    headline: list = field(default_factory=list)             # the first lines: lengths, formats, throughput
    lengths: dict = field(default_factory=dict)              # {"input", "output", "context", "defaulted"}
    realistic: dict | None = None                            # the realistic estimate, when there is one
    given_name: str | None = None                            # the model name as given, when a preset was named
    read_as: str | None = None                               # the preset whose shapes a named model was read as

    def decode_step(self, batch: float) -> dict:
        """``roofline.decode_bound`` at ``batch`` with exactly the plan's layout, formats and context (over
        pipeline stages, :func:`_pipeline_step`): the curve a chart of this plan draws passes through its headline
        numbers."""
        return _pipeline_step(self.model, self.deployment, batch=batch, **self.pipeline, **self.decode_settings)

    def add(self, section: str, key: str, label: str, value, text: str, source: str = "") -> None:
        self.rows.append(Row(section, key, label, value, text, source))

    @property
    def numbers(self) -> dict:
        """``{section: {key: raw value}}``."""
        out: dict = {name: {} for name in SECTIONS}
        for row in self.rows:
            out[row.section][row.key] = row.value
        return out

    def section(self, name: str) -> list:
        validate.choice("name", name, SECTIONS)
        return [row for row in self.rows if row.section == name]

    def to_dict(self) -> dict:
        """``{"title", "notes", section: {key: {"label", "value", "text", "source"}}}``, sections in order. Strict
        JSON: a value that is not a finite number (an infinite balance batch) is None, with ``"reason"`` (the
        row's text) beside it."""
        out: dict = {"title": self.heading, "headline": list(self.headline), "lengths": dict(self.lengths),
                     "notes": self.model_notes}
        for name in SECTIONS:
            out[name] = {}
            for row in self.section(name):
                value, finite = _plain(row.value)
                out[name][row.key] = {"label": row.label, "value": value, "text": row.text, "source": row.source}
                if not finite:
                    out[name][row.key]["reason"] = f"not a finite number: {row.text}"
        return out

    def to_json(self, indent: int = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, allow_nan=False)

    @property
    def model_notes(self) -> str:
        """The model's notes as this plan used them (a format given in place of the config's says so)."""
        return self.model.notes if self.notes is None else self.notes

    @property
    def heading(self) -> str:
        """The first line: model, hardware and the request lengths (a default said as one)."""
        first = (f"Plan: {self.title or self.given_name or self.model.name}"
                 + (f" (read as {self.read_as}'s shapes)" if self.read_as and not self.title else "")
                 + f" on {self.deployment.name}")
        return first + (f" · {self.headline[0]}" if self.headline else "")

    def text(self) -> str:
        """The plan as a plain-text table: the headline, then one block per section."""
        width = max(len(row.label) for row in self.rows)
        lines = [self.heading] + ["  " + line for line in self.headline[1:]]
        for name in SECTIONS:
            rows = self.section(name)
            if not rows:
                continue
            lines += ["", TITLES[name] + (f"  [{CHAPTERS[name]}]" if name in CHAPTERS else ""),
                      "-" * (width + 40)]
            lines += [f"  {row.label.ljust(width)}  {row.text}" for row in rows]
        if self.model_notes:
            lines += ["", "Model notes", "-" * (width + 40), "  " + self.model_notes]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        parts = ([f"<b>{html.escape(self.heading)}</b>"] + [f"<br>{html.escape(line)}" for line in self.headline[1:]]
                 + ["<table style='font-size:13px;border-collapse:collapse'>"])
        for name in SECTIONS:
            rows = self.section(name)
            if not rows:
                continue
            chapter = f" <span style='font-weight:normal'>({CHAPTERS[name]})</span>" if name in CHAPTERS else ""
            parts.append(f"<tr><th colspan='2' style='text-align:left;padding:8px 8px 2px 0;"
                         f"border-bottom:1px solid #999'>{html.escape(TITLES[name])}{chapter}</th></tr>")
            for row in rows:
                title = f" title='{html.escape(row.source, quote=True)}'" if row.source else ""
                parts.append(f"<tr{title}><td style='text-align:left;padding:1px 12px 1px 0'>"
                             f"{html.escape(row.label)}</td><td style='text-align:left'><b>{html.escape(row.text)}"
                             f"</b></td></tr>")
        parts.append("</table>")
        return "".join(parts)


def _plain(value) -> tuple:
    """(a strict-JSON value, whether every number in it was finite): NaN and infinities become None, NumPy
    scalars plain numbers; dicts and lists are walked."""
    if isinstance(value, dict):
        pairs = {key: _plain(item) for key, item in value.items()}
        return {key: got for key, (got, _) in pairs.items()}, all(ok for _, ok in pairs.values())
    if isinstance(value, (list, tuple)):
        items = [_plain(item) for item in value]
        return [got for got, _ in items], all(ok for _, ok in items)
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None, False
    return value, True


# --- inputs -----------------------------------------------------------------------------------------

def _looks_like_config(model) -> bool:
    return isinstance(model, dict) or isinstance(model, os.PathLike) or (
        isinstance(model, str) and (model.strip().startswith("{") or model.endswith(".json") or os.sep in model
                                    or os.path.isdir(model)))


def config_title(model) -> str | None:
    """The title a config gives a plan: its ``_name_or_path``, else the folder that holds it (for a path), else
    None (a dict or JSON text without ``_name_or_path``, or a file that cannot be read: the model's own name
    stands)."""
    if not isinstance(model, (str, os.PathLike, dict)):
        raise ValueError(f"model must be a config.json path, its folder, its dict or its JSON text, got "
                         f"{validate._describe(model)}")
    try:
        config = hf_config.parse_config_text(model) if isinstance(model, str) and model.strip().startswith("{") \
            else hf_config.read_config(model)
    except ValueError:
        return None
    named = config.get("_name_or_path")
    if isinstance(named, str) and named.strip():
        return named.strip()
    if isinstance(model, (str, os.PathLike)) and not (isinstance(model, str) and model.strip().startswith("{")):
        path = os.path.abspath(os.fspath(model))
        folder = path if os.path.isdir(path) else os.path.dirname(path)
        return os.path.basename(folder.rstrip(os.sep)) or None
    return None


def config_max_context(model) -> int | None:
    """The longest context a config says its model takes: ``max_position_embeddings`` (of ``text_config`` for a
    multimodal config), or None (a preset, a ``models.Model``, or a config without it)."""
    if not isinstance(model, (str, os.PathLike, dict, models.Model)):
        raise ValueError(f"model must be a config.json path, its folder, its dict or its JSON text (or a preset name "
                         f"or models.Model, which give None), got {validate._describe(model)}")
    if not _looks_like_config(model):
        return None
    try:
        config = hf_config.parse_config_text(model) if isinstance(model, str) and model.strip().startswith("{") \
            else hf_config.read_config(model)
    except ValueError:
        return None
    for where in (config, config.get("text_config") if isinstance(config.get("text_config"), dict) else {}):
        value = where.get("max_position_embeddings")
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _loose(name: str) -> str:
    """A model name as the presets compare names (case, spaces, hyphens, underscores and dots ignored)."""
    return models.loose_name(name)


_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*")


def _hub_id_error(model: str) -> str | None:
    """The error for a Hugging Face model id given as ``model`` ("meta-llama/Llama-3.1-70B", not a file here): the
    planner reads no network, so it says how to pass the config instead (and the preset, if one has its name)."""
    if not _HUB_ID.fullmatch(model) or model.endswith(".json") or os.path.exists(model):
        return None
    repos = {repo.lower(): name for name, (_, repo) in models.SAME_ARCHITECTURE.items()}
    tail = model.split("/", 1)[1]
    preset = repos.get(model.lower())
    if preset is None:
        for candidate in (tail, tail.removesuffix("-Instruct"), tail.removesuffix("-instruct")):
            try:
                preset = models.get(candidate).name
                break
            except (KeyError, ValueError):
                continue
    return (f"model {model!r} looks like a Hugging Face model id, and the planner uses no network, so it cannot fetch "
            f"it: download its config.json (https://huggingface.co/{model}/blob/main/config.json, or "
            f"`huggingface-cli download {model} config.json --local-dir DIR`; gated repos need your token) and pass "
            f"that file or its folder" + (f", or use the preset {preset!r}, which has its shapes" if preset else
                                          f"; the presets are: {', '.join(models.names())}"))


def resolve_model(model):
    """``model`` as a :class:`models.Model`: the object, a preset name, or a Hugging Face config.json (a path to
    one, the folder that holds it, its parsed dict or its JSON text: :func:`hf_config.from_hf_config`, which
    checks every field). A Hugging Face model id ("org/name") that is not a local path is refused with how to pass
    its config: the planner uses no network."""
    if isinstance(model, models.Model):
        return model
    if isinstance(model, str) and _hub_id_error(model):
        raise ValueError(_hub_id_error(model))
    if _looks_like_config(model):
        if isinstance(model, str) and model.strip().startswith("{"):
            try:
                model = hf_config.parse_config_text(model, where="model")
            except ValueError as error:
                raise ValueError(f"model must be a readable Hugging Face config.json (a path or its dict): "
                                 f"{error}") from None
        try:
            return hf_config.from_hf_config(model)
        except ValueError as error:   # from_hf_config names its own parameter ("source"): say "model"
            raise ValueError(f"model must be a readable Hugging Face config.json (a path or its dict): "
                             f"{error}") from None
    if not isinstance(model, str):
        raise ValueError(f"model must be a models preset name, a config.json path or a Model, got "
                         f"{validate._describe(model)}")
    try:
        return models.get(model)
    except KeyError:
        raise ValueError(f"model must be a models preset name ({', '.join(models.names())}), a model with a preset's "
                         f"shapes ({', '.join(models.SAME_ARCHITECTURE)}) or a path to a config.json, got {model!r}") \
            from None


def resolve_unit(system, *, n_chips: int | None = None):
    """``system`` as a ``hardware.System`` or ``hardware.Chip``: the object, or a preset name (a system
    preset unless ``n_chips`` is given, then a chip). ``n_chips`` is None or a whole number >= 1."""
    if n_chips is not None:
        n_chips = validate.integer("n_chips", n_chips)
    if isinstance(system, (hardware.System, hardware.Chip)):
        return system
    if not isinstance(system, str):
        raise ValueError(f"system must be a hardware.System, a hardware.Chip or the name of one, got "
                         f"{validate._describe(system)}")
    if n_chips is None:
        try:
            return hardware.get_system(system)
        except KeyError:
            pass
    try:
        return hardware.get(system)
    except KeyError:
        pass
    if n_chips is not None and _is_system_name(system):
        raise ValueError(f"n_chips counts chips, so system must then name a chip ({', '.join(hardware.chip_names())}), "
                         f"got the system preset {system!r} with n_chips={n_chips}: leave n_chips out (use n_systems)")
    raise ValueError(f"system must be a system preset ({', '.join(hardware.system_names())}) or a "
                     f"chip ({', '.join(hardware.chip_names())}), got {system!r}")


def _is_system_name(name: str) -> bool:
    try:
        hardware.get_system(name)
    except KeyError:
        return False
    return True


def resolve_deployment(system, *, n_systems: int = 1, n_chips: int | None = None) -> collectives.Deployment:
    """``system`` as a :class:`collectives.Deployment` (:func:`collectives.deployment`): a
    ``hardware.System`` (or its preset name) times ``n_systems``, or a chip (or its name) times ``n_chips``
    (default 1)."""
    n_systems = validate.integer("n_systems", n_systems)
    if n_chips is not None:
        n_chips = validate.integer("n_chips", n_chips)
    unit = resolve_unit(system, n_chips=n_chips)
    if isinstance(unit, hardware.Chip) and n_chips is None:
        n_chips = 1
    return collectives.deployment(unit, n_systems=n_systems, n_chips=n_chips)


#: Other spellings of the format names (``torch_dtype`` names and the like), read case-insensitively.
FORMAT_ALIASES = {"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32", "float": "fp32",
                  "float8": "fp8", "e4m3": "fp8", "fp8e4m3": "fp8", "float8e4m3fn": "fp8", "float4": "fp4"}
#: What a plan picks for the matmuls, best first, when the weights' own format is not one the chip computes in.
_COMPUTE_PREFERENCE = ("bf16", "fp16", "fp8", "int8", "fp32", "fp4")


#: Weight formats with scales, by name, read as a config's ``quantization_config`` would be (:func:`hf_config._scheme`,
#: so the bytes are the config reader's): ``{name: (quantization_config, the format its matmuls wish for)}``.
#: "int4" is AWQ/GPTQ int4 in groups of 128 ("int4-g64": groups of 64), an fp16 scale and a 4-bit zero point each.
QUANTIZED_FORMATS = {"nvfp4": ({"quant_method": "modelopt", "quant_algo": "NVFP4"}, "fp4"),
                     "mxfp4": ({"quant_method": "mxfp4"}, "fp4"),
                     "int4": ({"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True}, None)}
_QUANT_ALIASES = {"awq": "int4", "gptq": "int4", "w4a16": "int4"}


def quantized_format(value: str) -> tuple | None:
    """``(name, bytes per value, description, compute wish)`` for a named format with scales
    (:data:`QUANTIZED_FORMATS`; "int4-g64" picks the group size), else None. ``value`` is a str."""
    if not isinstance(value, str):
        raise ValueError(f"value must be a format name (a str), got {validate._describe(value)}")
    return _quantized(value)


def _quantized(value) -> tuple | None:
    """:func:`quantized_format` for any value (None for one that is not a str)."""
    if not isinstance(value, str):
        return None
    spaced = "".join(value.lower().split()).replace("_", "-")
    # GPTQ's and AWQ's own spelling of a group: a size >= 1, or -1 for one group per column (per-channel). The
    # sign is read, not dropped: "int4-g-1" is per-channel, "int4-g-64" no format at all.
    group = re.fullmatch(r"(?:int4|awq|gptq|w4a16)-?g(-?\d{1,5})", spaced)
    key = _QUANT_ALIASES.get(spaced.replace("-", ""), spaced.replace("-", ""))
    if group:
        key, size = "int4", int(group.group(1))
    elif key in QUANTIZED_FORMATS:
        size = None
    else:
        return None
    config, wish = QUANTIZED_FORMATS[key]
    if size is not None:
        if size < 1 and size != -1:
            return None
        config = dict(config, group_size=size) if size > 0 else {"quant_method": "gptq", "bits": 4, "group_size": -1}
    description, per_value = hf_config._scheme(hf_config._Quant(config, "format"), 2)[:2]
    return key if size is None else f"int4-g{size}", per_value, description, wish


def _format_names() -> str:
    return ", ".join(sorted(models.BYTES_PER_VALUE) + sorted(QUANTIZED_FORMATS))


def format_name(value, name: str = "value"):
    """A number format as plans read it everywhere (weights, experts, KV, compute, attention): a name, with case,
    spaces, hyphens and underscores ignored and :data:`FORMAT_ALIASES` applied ("FP8", "bfloat16"), or a byte
    count (a number; the command line reads "0.53125" as one). ``ValueError`` names ``name`` (the parameter or flag
    being read) otherwise."""
    if not isinstance(name, str):
        raise ValueError(f"name must be a str (the parameter or flag being read), got {validate._describe(name)}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return models._bytes_per(name, value)
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a format name ({_format_names()}) or bytes per value, got "
                         f"{validate._describe(value)}")
    key = "".join(value.lower().split()).replace("-", "").replace("_", "")
    key = FORMAT_ALIASES.get(key, key)
    if key in models.BYTES_PER_VALUE:
        return key
    quantized = quantized_format(value)
    if quantized is not None:   # a stored format with scales: its bytes per value (no chip computes in it)
        return quantized[1]
    raise ValueError(f"{name} must be a format name ({_format_names()}) or bytes per value, got {value!r}")


def _best_compute(chip, wanted=None) -> str:
    """``wanted`` if the chip computes in it, else the first of :data:`_COMPUTE_PREFERENCE` it has."""
    if wanted in chip.flops:
        return wanted
    return next(fmt for fmt in _COMPUTE_PREFERENCE if fmt in chip.flops)


#: The format each model preset's checkpoint is released in, with its model card (the engineer's walk, finding 11):
#: ``{preset: (format as released, model card URL, the publisher's own FP8 release or None, config for a release
#: stored below 16 bits or None)}``. A release stored below 16 bits is planned in it (its ``quantization_config``
#: read as :func:`hf_config.from_hf_config` reads the release's config.json, so the preset and the file agree); a
#: 16-bit release is planned in FP8, the course's serving default, and the plan names the release's format.
PRESET_CHECKPOINTS = {
    "gpt-oss-120b": ("MXFP4 on routed experts, BF16 elsewhere", "https://huggingface.co/openai/gpt-oss-120b", None,
                     {"torch_dtype": "bfloat16", "family": "gpt_oss", "quantization_config": {
                         "quant_method": "mxfp4", "modules_to_not_convert": [
                             "model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens",
                             "lm_head"]}}),
    "deepseek-v3": ("FP8 (e4m3, 128x128 block scales)", "https://huggingface.co/deepseek-ai/DeepSeek-V3", None, None),
    "kimi-k2": ("FP8 (e4m3, 128x128 block scales)", "https://huggingface.co/moonshotai/Kimi-K2-Instruct", None, None),
    "llama-3.1-8b": ("BF16", "https://huggingface.co/meta-llama/Llama-3.1-8B", None, None),
    "llama-3-70b": ("BF16", "https://huggingface.co/meta-llama/Meta-Llama-3-70B", None, None),
    "llama-3-405b": ("BF16", "https://huggingface.co/meta-llama/Llama-3.1-405B",
                     "https://huggingface.co/meta-llama/Llama-3.1-405B-Instruct-FP8", None),
    "qwen3-235b-a22b": ("BF16", "https://huggingface.co/Qwen/Qwen3-235B-A22B",
                        "https://huggingface.co/Qwen/Qwen3-235B-A22B-FP8", None),
    "qwen3-30b-a3b": ("BF16", "https://huggingface.co/Qwen/Qwen3-30B-A3B", "https://huggingface.co/Qwen/Qwen3-30B-A3B-FP8",
                      None),
    "gemma-3-27b": ("BF16", "https://huggingface.co/google/gemma-3-27b-it", None, None),
    "mixtral-8x22b": ("BF16", "https://huggingface.co/mistral-community/Mixtral-8x22B-v0.1", None, None),
    "mixtral-8x7b": ("BF16", "https://huggingface.co/mistralai/Mixtral-8x7B-v0.1", None, None),
    "llama-2-70b": ("FP16", "https://huggingface.co/meta-llama/Llama-2-70b-hf", None, None),
    "llama-4-scout": ("BF16", "https://huggingface.co/meta-llama/Llama-4-Scout-17B-16E", None, None),
    "llama-4-maverick": ("BF16", "https://huggingface.co/meta-llama/Llama-4-Maverick-17B-128E",
                         "https://huggingface.co/meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8", None),
}


def _checkpoint_model(model):
    """``model`` (as :func:`resolve_model` gives it) with its release's stored format when it is a preset released
    below 16 bits (:data:`PRESET_CHECKPOINTS`: gpt-oss-120b's MXFP4 experts); anything else as it is."""
    if not isinstance(model, models.Model):
        raise ValueError(f"model must be a models.Model, got {validate._describe(model)}")
    entry = PRESET_CHECKPOINTS.get(model.name)
    if entry is None or entry[3] is None or model.weight_format:
        return model
    try:
        if model != models.get(model.name):   # a Model built by hand under a preset's name keeps what it says
            return model
    except KeyError:
        return model
    stated = dict(entry[3])
    return hf_config._with_checkpoint_format(model, torch_dtype=stated.pop("torch_dtype"), family=stated.pop("family"),
                                            **stated)


def default_formats(model, chip, *, weight_dtype=None, compute_dtype=None) -> tuple:
    """(weights, compute, why): the formats a plan uses when flags leave them out (issue 30 §2).

    Weights: ``weight_dtype`` if given; else the format the config states (``model.weight_bytes_per_param``, from
    ``torch_dtype`` / ``quantization_config``); else FP8 on a chip that computes in FP8, otherwise BF16 (A100,
    TPUs), or the chip's best. Compute: ``compute_dtype`` if given; else the weights' own format when the chip has
    it, else the best format the chip has (BF16 for int4 or FP8 weights on an A100). ``why`` says which was used.
    ``model`` as :func:`plan` takes it; ``chip`` a ``hardware.Chip`` or its name."""
    model = resolve_model(model)
    if isinstance(chip, str):
        try:
            chip = hardware.get(chip)
        except KeyError:
            raise ValueError(f"chip must be a chip preset ({', '.join(hardware.chip_names())}), got {chip!r}") from None
    if not isinstance(chip, hardware.Chip):
        raise ValueError(f"chip must be a hardware.Chip or its name, got {validate._describe(chip)}")
    quantized = _quantized(weight_dtype)
    weight_dtype = None if weight_dtype is None else format_name(weight_dtype, "weight_dtype")
    compute_dtype = None if compute_dtype is None else format_name(compute_dtype, "compute_dtype")
    if weight_dtype is not None:
        models._bytes_per("weight_dtype", weight_dtype)
    if compute_dtype is not None and compute_dtype not in chip.flops:
        raise ValueError(f"compute_dtype must be one of {sorted(chip.flops)} for {chip.name}, got {compute_dtype!r}")
    why = []
    if weight_dtype is None:
        if getattr(model, "weight_bytes_per_param", 0):
            weight_dtype = model.weight_bytes_per_param
            text = model.weight_format.lower()
            wanted = ("fp4" if "fp4" in text else "fp8" if "fp8" in text or "float8" in text else
                      "int8" if "int8" in text else "fp32" if "float32" in text or "fp32" in text else "bf16")
            released = PRESET_CHECKPOINTS.get(model.name)
            where = (f"as released, {released[1]}" if released and released[3] is not None
                     and model.source != "Hugging Face config.json" else "as the config states them")
            label = hf_config.format_label(model.weight_format)
            why.append(f"weights {where} ({label}" + (f": {model.weight_format}" if " " in model.weight_format
                                                        else f", torch_dtype {model.weight_format}"
                                                        if label.lower() != model.weight_format.lower() else "")
                       + (f"; {weight_dtype:.3g} bytes per parameter with scales" if not float(weight_dtype).is_integer()
                          else "")
                       + ("; --weights fp8 plans it as an engine that quantizes it to FP8 on loading serves it"
                          if float(weight_dtype) >= 2 and "fp8" in chip.flops else "") + ")")
        elif "fp8" in chip.flops:
            weight_dtype, wanted = "fp8", "fp8"
            released = PRESET_CHECKPOINTS.get(model.name)
            if released and released[0].startswith("FP8"):
                why.append(f"weights in FP8, as released ({released[0]}, {released[1]})")
            elif released:
                why.append(f"weights in FP8 (the course's serving default: engines quantize a {released[0]} checkpoint "
                           f"to FP8 as they load it; the release, {released[1]}, is {released[0]}"
                           + (f", and its publisher's FP8 release is {released[2]}" if released[2] else "")
                           + f"; --weights {released[0].lower()} plans the release as it is)")
            else:
                why.append("weights in FP8 (the course's default; the chip computes in it)")
        else:
            weight_dtype = wanted = _best_compute(chip)
            why.append(f"weights in {weight_dtype.upper()}: {chip.name} has no FP8, so the best format it has")
    else:
        wanted = weight_dtype if isinstance(weight_dtype, str) else None
        if quantized is not None:
            wanted = quantized[3]
            given = f"{quantized[2]}, {_per_value(quantized[1])} per value"
        else:
            given = _fmt(weight_dtype)
        stated = getattr(model, "weight_format", "")
        why.append(f"weights as given ({given})" + (f", not the config's ({stated})" if stated else ""))
    if compute_dtype is None:
        compute_dtype = _best_compute(chip, wanted)
        if wanted is not None and compute_dtype != wanted:
            why.append(f"matmuls in {compute_dtype.upper()}: {chip.name} does not compute in {wanted.upper()}")
        elif not isinstance(weight_dtype, str) and wanted is None:
            why.append(f"matmuls in {compute_dtype.upper()}")
    else:
        why.append("compute as given")
    return weight_dtype, compute_dtype, "; ".join(why)


def explicit_layout(model, deployment, *, tp=None, pp=None, ep=None) -> tuple:
    """The layout the bound uses for explicit parallel degrees, checked as engines check them (issue 30 §2).

    ``tp`` splits attention and dense layers, ``pp`` the layers into stages, ``ep`` the routed experts; DP is what
    remains, ``n / (tp · pp)`` replicas. Returns ``(step_layout, fit_layout, degrees, notes)``:

    - ``step_layout``, for the step time of one *stage group* of ``n / pp`` devices (``tp × dp``; the whole
      deployment without pipeline stages): ``roofline.Layout(attention_tp=tp)``, or "tp" when dp = 1. With
      ``pp`` stages and ``pp`` micro-batches in flight, a token passes every stage in turn and each device reads
      its stage's weights once per micro-batch, so a cycle takes what one tp-wide copy of the whole model takes
      for one micro-batch of ``B / pp`` sequences (Chapter 3; :func:`_pipeline_step`).
    - ``fit_layout``, for what each device holds: ``Layout(attention_tp=tp · pp, pipeline_stages=pp)`` (a stage
      holds 1/pp of the layers and their KV; KV heads are split over the tp devices of a stage only).
    - Checks: tp · pp divides the GPUs; attention heads by tp; KV heads by tp, or tp by the KV heads (then each
      KV head is replicated tp / KV-heads times, as vLLM and TensorRT-LLM do, and the notes say so); layers by
      pp; routed experts by ep, and ep by the GPUs; with DP replicas an MoE model's experts span every GPU
      (ep = n: DP attention with expert parallelism, the layout the bound knows); a dense model has ep = 1.
    """
    model = resolve_model(model)
    if not isinstance(deployment, collectives.Deployment):
        raise ValueError(f"deployment must be a collectives.Deployment (resolve_deployment makes one), got "
                         f"{validate._describe(deployment)}")
    n = deployment.n_chips
    tp = 1 if tp is None else validate.integer("tp", tp, maximum=MAX_GPUS)
    pp = 1 if pp is None else validate.integer("pp", pp, maximum=MAX_GPUS)
    if (tp * pp) > n or n % (tp * pp):
        raise ValueError(f"tp × pp must divide the {n} GPUs, got tp={tp}, pp={pp}")
    dp = n // (tp * pp)
    notes = []
    if model.n_heads % tp:
        raise ValueError(f"tp must divide the model's {model.n_heads} attention heads, got {tp}")
    if model.kv_lora_rank:
        if tp > 1:
            notes.append(f"MLA: every one of the {tp} tensor-parallel GPUs keeps the whole latent KV (replicated "
                         f"{tp}×)")
    elif tp > model.n_kv_heads:
        if tp % model.n_kv_heads:
            raise ValueError(f"tp must divide the model's {model.n_kv_heads} KV heads or be a multiple of them, "
                             f"got {tp}")
        notes.append(f"KV heads replicated {tp // model.n_kv_heads}×: tp={tp} exceeds the model's "
                     f"{model.n_kv_heads} KV heads, so each GPU keeps one whole head, as engines do")
    elif model.n_kv_heads % tp:
        allowed = [w for w in range(1, n + 1) if n % w == 0 and model.n_heads % w == 0
                   and (model.n_kv_heads % w == 0 or w % model.n_kv_heads == 0)]
        raise ValueError(f"tp must divide the model's {model.n_kv_heads} KV heads, got {tp} (the widths its heads "
                         f"and the {n} GPUs allow: {', '.join(map(str, allowed))})")
    if model.n_layers % pp:
        raise ValueError(f"pp must divide the model's {model.n_layers} layers, got {pp}")
    redundant = 0
    if model.is_moe:
        ep = (n if dp > 1 else tp * pp) if ep is None else validate.integer("ep", ep, maximum=MAX_GPUS)
        if model.n_routed_experts % ep:   # engines pad with copies of the busiest experts (vLLM's and SGLang's EPLB)
            per_gpu = -(-model.n_routed_experts // ep)
            redundant = per_gpu * ep - model.n_routed_experts
            notes.append(f"EP {ep} does not divide the model's {model.n_routed_experts} routed experts: each GPU "
                         f"holds {per_gpu} expert slots per MoE layer, {redundant} of the {per_gpu * ep} redundant "
                         f"copies (as an expert-parallel load balancer places them)")
        if n % ep:
            raise ValueError(f"ep must divide the {n} GPUs, got {ep}")
        if dp > 1 and ep != n:
            raise ValueError(f"ep must be the GPU count ({n}) when tp × pp < GPUs (DP replicas): the bound spreads "
                             f"routed experts over every GPU (DP attention + EP), got {ep}")
        if pp > 1 and dp > 1:
            raise ValueError(f"pp with DP replicas is not modelled for an MoE model: use tp × pp = {n}, got "
                             f"tp={tp}, pp={pp}")
    else:
        ep = 1 if ep is None else validate.integer("ep", ep, maximum=MAX_GPUS)
        if ep != 1:
            raise ValueError(f"ep must be 1 for a dense model (it has no routed experts), got {ep}")
    if pp > 1:
        notes.append(f"PP: {pp} stages need at least {pp} micro-batches in flight; the step time is one cycle")
    if dp == 1 and not redundant:
        step = roofline.LAYOUTS["tp"]
    else:
        step = roofline.Layout(attention_tp=tp if dp > 1 else None, redundant_experts=redundant)
    if pp == 1:
        fit = step
    else:
        fit = roofline.Layout(attention_tp=tp * pp, pipeline_stages=pp, redundant_experts=redundant)
    return step, fit, {"tp": tp, "pp": pp, "ep": ep, "dp": dp}, notes


def _stage_group(deployment, pp: int) -> collectives.Deployment:
    """The ``n / pp`` devices one token's micro-batch meets at each pipeline stage (``deployment`` itself for
    ``pp = 1``): the unit :func:`_pipeline_step` bounds a cycle on."""
    pp = validate.integer("pp", pp, maximum=MAX_GPUS)
    n = deployment.n_chips
    if pp == 1:
        return deployment
    if n % pp:
        raise ValueError(f"pp must divide the {n} GPUs, got {pp}")
    count = n // pp
    per_domain = math.gcd(count, deployment.chips_per_domain)
    return dataclasses.replace(deployment, name=f"{count} × {deployment.chip.name} (one of {pp} stages)",
                               chips_per_domain=per_domain, n_domains=count // per_domain)


def _pipeline_step(model, deployment, *, batch, pp: int = 1, layout=None, fit_layout=None, **settings) -> dict:
    """``roofline.decode_bound`` for ``batch`` sequences over ``pp`` pipeline stages (Chapter 3).

    With ``pp`` micro-batches in flight, a cycle is one micro-batch of ``max(B / pp, 1)`` sequences passing every
    stage in turn: :func:`roofline.decode_bound` on one stage group (:func:`_stage_group`, ``layout`` the
    ``step_layout`` of :func:`explicit_layout`) at that micro-batch. The cycle yields ``B · τ`` tokens, so
    tokens/s is ``pp`` times the group's for ``B ≥ pp``; at batch 1 the latency floor is one token through every
    stage, one group's floor (stages take turns, they do not split one token's time). What each device holds comes
    from ``fit_layout`` on the whole deployment. ``pp = 1`` is :func:`roofline.decode_bound` itself."""
    if pp == 1:
        return roofline.decode_bound(model, deployment, batch=batch, layout=layout, **settings)
    micro = max(batch / pp, 1.0)
    out = roofline.decode_bound(model, _stage_group(deployment, pp), batch=micro, layout=layout, **settings)
    held = roofline.device_memory(model, deployment, layout=fit_layout, batch=batch, len_ctx=settings["len_ctx"],
                                  weight_dtype=settings["weight_dtype"],
                                  expert_weight_dtype=settings.get("expert_weight_dtype"),
                                  kv_dtype=settings.get("kv_dtype", "bf16"))
    rate = out["tokens_per_s"] * batch / micro
    return dict(out, tokens_per_s=rate, tokens_per_s_per_seq=rate / batch, n_chips=deployment.n_chips,
                fits=held["fits"], weights_per_device=held["weights"], kv_per_device=held["kv"],
                layout=held["layout"], micro_batch=micro)


def _formats(model, deployment, weight_dtype, expert_weight_dtype, kv_dtype, compute_dtype, expert_compute_dtype):
    bytes_w = models._bytes_per("weight_dtype", weight_dtype)
    bytes_e = bytes_w if expert_weight_dtype is None else models._bytes_per("expert_weight_dtype",
                                                                            expert_weight_dtype)
    models._bytes_per("kv_dtype", kv_dtype)
    compute_dtype = roofline._default_compute_dtype(weight_dtype, compute_dtype)
    available = sorted(deployment.chip.flops)
    for name, fmt in (("compute_dtype", compute_dtype), ("expert_compute_dtype", expert_compute_dtype)):
        if fmt is not None and (not isinstance(fmt, str) or fmt not in available):
            raise ValueError(f"{name} must be one of {available} for {deployment.chip.name}, got "
                             f"{validate._describe(fmt)}")
    return bytes_w, bytes_e, compute_dtype


def _effective_bytes_per_param(model, bytes_w: float, bytes_e: float) -> float:
    """Bytes per stored parameter averaged over the model (mixed precision: experts in ``bytes_e``,
    the rest in ``bytes_w``); ``bytes_w`` itself when the two agree. Chapter 1's and Chapter 4's
    single-format formulas take this."""
    routed = model.params_breakdown()["experts_routed"] if model.is_moe else 0
    if bytes_e == bytes_w or not routed:
        return bytes_w
    return ((model.params_total - routed) * bytes_w + routed * bytes_e) / model.params_total


def _fits_batch(model, deployment, layout, *, len_ctx, bytes_w, bytes_e, kv_dtype) -> float:
    """roofline.batch_that_fits, or 0.0 when the weights alone overflow a device."""
    try:
        return roofline.batch_that_fits(model, deployment, len_ctx=len_ctx, weight_bytes=bytes_w, kv_dtype=kv_dtype,
                                        expert_weight_bytes=bytes_e, layout=layout)
    except ValueError as error:
        if "do not fit" in str(error):
            return 0.0
        raise


def _layout_label(layout, model=None) -> str:
    """A short name for a layout: "pooled", "TP", "DP-attention + EP" (DP replicas for a dense model),
    "TP8 per domain + DP"."""
    chosen = roofline.resolve_layout(layout)
    dense = model is not None and not model.is_moe
    if chosen is None:
        return "pooled"
    extra = f" ({chosen.redundant_experts} redundant experts)" if chosen.redundant_experts and not dense else ""
    if chosen.attention_tp is None:
        return "TP" + extra
    if chosen.attention_tp == 1:
        return ("DP replicas" if dense else "DP-attention + EP") + extra
    return f"TP{chosen.attention_tp} per domain + DP" + ("" if dense else ", EP") + extra


def _degrees_text(degrees: dict) -> str:
    """"TP 2 × DP 4", "TP 1 × PP 8": the degrees above 1 (TP always)."""
    return " × ".join([f"TP {degrees['tp']}"] + [f"{key.upper()} {degrees[key]}" for key in ("pp", "dp")
                                                  if degrees[key] > 1])


def _layouts_for(deployment) -> dict:
    """The layouts a plan compares: ``{"tp", "dp_ep"}``, plus TP inside each scale-up domain with data
    parallelism across domains when there are several (``roofline.Layout(attention_tp=chips_per_domain)``)."""
    out = {"tp": roofline.LAYOUTS["tp"], "dp_ep": roofline.LAYOUTS["dp_ep"]}
    if deployment.n_domains > 1:
        out["tp_domain"] = roofline.Layout(attention_tp=deployment.chips_per_domain)
    return out


#: Widths whose tokens/s per GPU (all-reduces charged) come within this share of the best count as a tie, and a tie
#: goes to the narrowest: fewer all-reduces, each over fewer GPUs, and a replica that survives a GPU's loss.
LAYOUT_TIE = 0.02


def _cheapest_tp(model, deployment, *, refused, len_ctx, batch, latency_target, bytes_w, bytes_e, kv_dtype,
                 settings) -> tuple:
    """The auto layout of a model split by tensor parallelism (issue 30, issue 51 §1): of the TP widths that divide
    the GPUs, stay inside one scale-up domain and pass :func:`explicit_layout`'s checks, the one with the most
    output tokens/s per GPU at its operating batch *once its TP all-reduces are charged* (the step bound plus
    :func:`realistic.communication_time`'s all-reduces, not overlapped), DP replicas for the rest.

    The step bound alone ties every width that fits (a memory-bound step reads each GPU's share of the weights
    whatever the split), and the tie used to go to the widest, TP over all 8 GPUs, which pays two all-reduces per
    layer that DP replicas never pay. Real engines deploy the other way: AMD's MLPerf Llama-2-70B runs one vLLM
    replica per MI300X/MI325X (Chapter 8's ``mlperf41-llama2-70b-mi300x8`` row, "DP replicas"), TensorRT-LLM's
    performance tables run Llama 3.3 70B FP8 as TP1 on an H200 and TP2 on H100s (the TP the weights need, no
    more). So widths within :data:`LAYOUT_TIE` of the best count as tied and the narrowest wins. When none fits,
    the widest. Returns :func:`explicit_layout`'s four values, with a note saying why."""
    n = deployment.n_chips
    widths = [w for w in range(n, 0, -1) if n % w == 0 and w <= deployment.chips_per_domain]
    tried = []
    for width in widths:
        try:
            step_layout, fit_layout, degrees, notes = explicit_layout(model, deployment, tp=width)
        except ValueError:
            continue
        fit = _fits_batch(model, deployment, fit_layout, len_ctx=len_ctx, bytes_w=bytes_w, bytes_e=bytes_e,
                          kv_dtype=kv_dtype)

        def step(b, layout=step_layout):
            return roofline.decode_bound(model, deployment, batch=b, layout=layout, **settings)

        operating = _operating_batch(step, fit=fit, batch=batch, latency_target=latency_target)[0]
        rate = bound_rate = all_reduce = 0.0
        if operating:
            at = step(operating)
            all_reduce = realistic.communication_time(model, deployment, tokens=operating * settings["tokens_per_step"],
                                                      layout=step_layout)["tp_all_reduce"]
            bound_rate = at["tokens_per_s"] / n
            rate = bound_rate * at["t"] / (at["t"] + all_reduce)
        tried.append({"rate": rate, "width": width, "bound": bound_rate, "all_reduce": all_reduce,
                      "layout": (step_layout, fit_layout, degrees, notes)})
    if not tried:
        raise ValueError(f"n_chips: no tensor-parallel width that divides the {n} GPUs within a scale-up domain of "
                         f"{deployment.chips_per_domain} passes the model's head counts; give another GPU count")
    if max(t["rate"] for t in tried) == 0 and n > 1:   # no TP × DP fits: try pipeline stages (the engineer's walk, 6)
        staged = _cheapest_pp(model, deployment, len_ctx=len_ctx, batch=batch, latency_target=latency_target,
                              bytes_w=bytes_w, bytes_e=bytes_e, kv_dtype=kv_dtype, settings=settings)
        if staged is not None:
            return staged
    best = max(t["rate"] for t in tried)
    if best > 0:
        chosen = min((t for t in tried if t["rate"] >= best * (1 - LAYOUT_TIE)), key=lambda t: t["width"])
    else:
        chosen = max(tried, key=lambda t: t["width"])
    width, rate = chosen["width"], chosen["rate"]
    step_layout, fit_layout, degrees, notes = chosen["layout"]
    if len(tried) == 1:
        why = f"TP {width} × DP {n // width}: the only TP width the model's heads and the GPUs allow"
    elif rate == 0:
        why = f"TP {width} × DP {n // width}: the widest TP the model's heads allow; no width fits"
    else:
        others = ", ".join(
            f"TP {t['width']}: " + (f"{units.rate(t['rate'])} ({units.rate(t['bound'])} in the step bound, "
                                    f"before {units.seconds(t['all_reduce'])} of all-reduces per step)" if t["all_reduce"]
                                    else units.rate(t["rate"]) if t["rate"] else "does not fit")
            for t in sorted(tried, key=lambda t: -t["width"]) if t["width"] != width)
        tie = "" if rate == best else (f" (within {LAYOUT_TIE:.0%} of the best, {units.rate(best)}: a tie goes to "
                                       f"the narrowest, the fewest all-reduces)")
        if width == 1:
            reason = (f"the model fits on one GPU, so {n} data-parallel replicas run with no all-reduce at all "
                      f"(as AMD's MLPerf Llama-2-70B runs one vLLM replica per GPU){tie}")
        else:
            reason = f"the most decode tokens/s per GPU{tie}"
        why = (f"TP {width} × DP {n // width}: {reason}: {units.rate(rate)} per GPU with its "
               f"all-reduces charged ({others})")
    if refused is not None and width != n:
        why += f"; TP over all {n} GPUs would not divide the model's heads"
    elif width != n and n > deployment.chips_per_domain:
        why += f"; TP stays inside a scale-up domain of {deployment.chips_per_domain}"
    return step_layout, fit_layout, degrees, notes + [why]


def _cheapest_pp(model, deployment, *, len_ctx, batch, latency_target, bytes_w, bytes_e, kv_dtype, settings):
    """When no TP × DP layout holds the weights: the fewest pipeline stages ``pp`` (dividing the GPUs and the
    layers) whose TP × PP layout fits, TP inside one scale-up domain, and of those the most output tokens/s per GPU
    at its operating batch (:func:`_pipeline_step`). Returns :func:`explicit_layout`'s four values with a note
    saying why, or None when no staging fits either."""
    n = deployment.n_chips
    for pp in (p for p in range(2, n + 1) if n % p == 0 and model.n_layers % p == 0):
        found = []
        for width in (w for w in range(n // pp, 0, -1) if (n // pp) % w == 0 and w <= deployment.chips_per_domain):
            try:
                step_layout, fit_layout, degrees, notes = explicit_layout(model, deployment, tp=width, pp=pp)
            except ValueError:
                continue
            fit = _fits_batch(model, deployment, fit_layout, len_ctx=len_ctx, bytes_w=bytes_w, bytes_e=bytes_e,
                              kv_dtype=kv_dtype)
            if fit < 1:
                continue

            def step(b, step_layout=step_layout, fit_layout=fit_layout):
                return _pipeline_step(model, deployment, batch=b, pp=pp, layout=step_layout, fit_layout=fit_layout,
                                      **settings)

            operating = _operating_batch(step, fit=fit, batch=batch, latency_target=latency_target)[0]
            rate = step(operating)["tokens_per_s"] / n if operating else 0.0
            found.append((rate, width, (step_layout, fit_layout, degrees, notes)))
        if found:
            rate, width, (step_layout, fit_layout, degrees, notes) = max(found, key=lambda t: (t[0], -t[1]))
            why = (f"TP {width} × PP {pp} × DP {degrees['dp']}: no TP × DP layout holds the weights, so the fewest "
                   f"pipeline stages that do ({pp}; {units.rate(rate)} decode tokens/s per GPU in the step bound"
                   + ("" if rate else ", though no batch meets the target") + ")")
            return step_layout, fit_layout, degrees, notes + [why]
    return None


# --- the plan ---------------------------------------------------------------------------------------

def auto_layout(model, deployment) -> str:
    """The layout a plan uses by default: "dp_ep" (DP attention, experts over every device) for an MoE model on
    several devices, as DeepSeek's and SGLang's published deployments run, else "tp".

    ``model`` as :func:`plan` takes it (a preset name, a config.json or a ``models.Model``); ``deployment`` a
    :class:`collectives.Deployment` (:func:`resolve_deployment` makes one)."""
    model = resolve_model(model)
    if not isinstance(deployment, collectives.Deployment):
        raise ValueError(f"deployment must be a collectives.Deployment (resolve_deployment makes one), got "
                         f"{validate._describe(deployment)}")
    return "dp_ep" if model.is_moe and deployment.n_chips > 1 else "tp"


def _active_params_why(model: models.Model) -> str:
    """Why a plan's active count differs from the total, in a few words (empty when they agree): a dense
    model's stored input embedding is a lookup that does no FLOPs (models.Model.params_active)."""
    if model.params_active == model.params_total:
        return ""
    if model.is_moe:
        return " (per token: the routed experts and the shared layers, without the input-embedding lookup)"
    return " (all but the input-embedding table, a lookup that does no FLOPs)"


def plan(model, system, *, price_per_gpu_hour=None, len_ctx=None, latency_target=None, batch=None, n_systems: int = 1,
         n_chips: int | None = None, weight_dtype=None, expert_weight_dtype=None, kv_dtype=None,
         compute_dtype: str | None = None, expert_compute_dtype: str | None = None, layout="auto",
         attention_dtype: str | None = None, tokens_per_step: float = 1.0, tp: int | None = None,
         pp: int | None = None, ep: int | None = None, len_in=None, len_out=None, hit_rate: float = 0.0,
         memory_utilization: float = MEMORY_UTILIZATION, name: str | None = None, ttft_target=None, tpot_target=None,
         scenario: str | None = None, realistic_terms=None, max_seqs_per_instance=None) -> Plan:
    """Plan serving ``model`` on ``system``: capacity, decode, prefill, cost, layouts and the reality band.

    - ``model``: a preset name (``models.names()``), a path to a Hugging Face ``config.json`` (or its dict),
      or a :class:`models.Model`.
    - ``system``: a ``hardware.System`` preset name or object, times ``n_systems``; or a chip name or
      object with ``n_chips`` (default 1), split into whole scale-up domains (:func:`collectives.deployment`).
    - ``price_per_gpu_hour``: USD per GPU-hour, or None (default): no cost lines. ``len_ctx``: tokens of context
      per sequence (decode reads its KV; prefill computes it).
    - ``scenario``: "offline" (the largest throughput, no latency limit) or "server" (the largest throughput that
      meets ``ttft_target`` and ``tpot_target``, seconds: time to first token and time per output token under load,
      :data:`TTFT_UNDER_LOAD` and :data:`TPOT_UNDER_LOAD`; the plan says which limit binds). Default: "server" when
      a limit is given, else "offline".
    - ``realistic_terms``: the terms of the realistic estimate that are on (:data:`realistic.TERMS`; default all).
    - ``max_seqs_per_instance``: the concurrent sequences one engine instance (a DP replica or DP-attention rank)
      schedules, for the realistic estimate's ``engine_batch_cap`` term (default
      :data:`realistic.ENGINE_MAX_SEQS` of :data:`realistic.DEFAULT_ENGINE`: TensorRT-LLM's 2048).
    - The operating batch: ``batch`` if given (sequences decoding together across the deployment); else with
      ``latency_target`` (seconds per output token) the largest whole batch whose step bound meets it and
      that fits; else the largest whole batch that fits (throughput).
    - Number formats: ``weight_dtype`` (weights outside the routed experts; a name or bytes per value),
      ``expert_weight_dtype`` (routed experts; default the same), ``kv_dtype``, ``compute_dtype`` (peak FLOP/s
      used; default ``weight_dtype``), ``expert_compute_dtype`` and ``attention_dtype`` (attention's matmuls;
      MLA attention often runs in BF16 while the GEMMs run in FP8).
    - ``layout``: the layout of the headline decode and prefill figures: "auto" (default: "dp_ep" for an MoE
      model on several devices, else "tp"), "tp", "dp_ep", a ``roofline.Layout``, or None to pool the devices
      into one big chip (the optimistic bound of Chapter 1).
    - ``tokens_per_step``: tokens each sequence gains per step (1 without speculative decoding).
    - ``tp``, ``pp``, ``ep``: explicit parallel degrees (:func:`explicit_layout`, which checks them); DP is the
      rest. They replace ``layout``.
    - ``len_in`` and ``len_out``: a request's input and output tokens. With them the plan gives time to first
      token, end-to-end latency and the throughput of requests (prefill plus decode), and ``len_ctx`` defaults to
      the mean decode context ``len_in + len_out / 2``. With neither lengths nor ``len_ctx`` the plan takes
      :data:`DEFAULT_LENGTHS` and its first line says so. ``hit_rate``: the prefix cache's share of input tokens.
    - ``memory_utilization``: the share of each GPU's HBM for weights and KV (default 0.9, vLLM's default); the
      rest is the runtime's reserve.
    - ``weight_dtype`` None (default): the config's stated format, else FP8, else the chip's best
      (:func:`default_formats`); the plan says which. Format names are read case-insensitively (:func:`format_name`).
    - ``name``: the plan's title (default: the config's ``_name_or_path``, its folder, or the model's name).

    Bad input is a ``ValueError`` naming the parameter.
    """
    title = name if name is not None else (config_title(model) if _looks_like_config(model) else None)
    max_context = config_max_context(model) if isinstance(model, (str, dict, os.PathLike)) else None
    if title is not None and (not isinstance(title, str) or not title.strip()):
        raise ValueError(f"name must be a non-empty string, got {validate._describe(name)}")
    given_name = model.strip() if isinstance(model, str) and not _looks_like_config(model) else None
    model = _checkpoint_model(resolve_model(model))   # a preset released below 16 bits: in its release's format
    full = resolve_deployment(system, n_systems=n_systems, n_chips=n_chips)
    utilization = validate.scalar("memory_utilization", memory_utilization, maximum=1.0)
    deployment = measurements.with_hbm_fraction(full, utilization)
    price = None if price_per_gpu_hour is None else validate.scalar("price_per_gpu_hour", price_per_gpu_hour,
                                                                       maximum=1e6)
    if (len_in is None) != (len_out is None):
        raise ValueError("len_in and len_out must be given together (a request's input and output tokens)")
    lengths_defaulted = len_in is None and len_ctx is None
    if lengths_defaulted:
        len_in, len_out = DEFAULT_LENGTHS
    for label, value in (("len_in", len_in), ("len_out", len_out)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or (math.isfinite(value) and not float(value).is_integer())):
            raise ValueError(f"{label} must be a whole number of tokens, got {validate._describe(value)}")
    limits = {label: None if value is None else validate.scalar(label, value, maximum=1e4)
              for label, value in (("ttft_target", ttft_target), ("tpot_target", tpot_target))}
    if scenario is None:
        scenario = "server" if any(v is not None for v in limits.values()) or latency_target is not None else "offline"
    validate.choice("scenario", scenario, SCENARIOS)
    if scenario == "offline" and (any(v is not None for v in limits.values()) or latency_target is not None):
        raise ValueError("scenario 'offline' takes no latency limit (it is the largest throughput that fits): use "
                         "scenario 'server' with ttft_target / tpot_target, or leave the limits out")
    if scenario == "server" and all(v is None for v in limits.values()) and latency_target is None \
            and batch is None:
        raise ValueError("scenario 'server' needs a limit: ttft_target and/or tpot_target (seconds)")
    if any(v is not None for v in limits.values()) and (batch is not None or latency_target is not None):
        raise ValueError("ttft_target and tpot_target search for the batch: give them without batch and "
                         "latency_target")
    if limits["ttft_target"] is not None and len_in is None:
        raise ValueError("ttft_target needs len_in and len_out (the prompt sets the time to first token)")
    terms_on = realistic._terms(realistic_terms)
    if max_seqs_per_instance is None:
        max_seqs_per_instance = realistic.ENGINE_MAX_SEQS[realistic.DEFAULT_ENGINE]
    elif isinstance(max_seqs_per_instance, bool) or not isinstance(max_seqs_per_instance, (int, float)) \
            or not math.isfinite(max_seqs_per_instance) or max_seqs_per_instance < 1 \
            or not float(max_seqs_per_instance).is_integer():
        raise ValueError(f"max_seqs_per_instance must be a whole number of sequences, at least 1, got "
                         f"{validate._describe(max_seqs_per_instance)}")
    max_seqs_per_instance = validate.scalar("max_seqs_per_instance", max_seqs_per_instance,
                                            maximum=validate.COUNT_LIMIT)
    context_given = len_ctx is not None
    if len_in is not None:
        len_in = validate.scalar("len_in", len_in, maximum=validate.COUNT_LIMIT)
        len_out = validate.scalar("len_out", len_out, maximum=validate.COUNT_LIMIT)
        if len_ctx is None:
            len_ctx = len_in + len_out / 2
    if len_ctx is None:
        raise ValueError("len_ctx must be given (or len_in and len_out, whose mean decode context it then is)")
    len_ctx = validate.scalar("len_ctx", len_ctx, maximum=validate.COUNT_LIMIT)
    hit = validate.scalar("hit_rate", hit_rate, allow_zero=True)
    if hit >= 1:
        raise ValueError(f"hit_rate must be in [0, 1), got {hit_rate!r}")
    if latency_target is not None:
        latency_target = validate.scalar("latency_target", latency_target, maximum=1e4)
    if batch is not None:
        batch = validate.scalar("batch", batch, maximum=MAX_BATCH)
        if latency_target is not None:
            raise ValueError("batch and latency_target cannot both be given: batch fixes the operating point, "
                             "latency_target searches for it")
    tau = validate.scalar("tokens_per_step", tokens_per_step, maximum=64)
    if tau < 1:
        raise ValueError(f"tokens_per_step must be >= 1, got {tokens_per_step!r}")
    kv_dtype_given = kv_dtype is not None
    kv_dtype = "bf16" if kv_dtype is None else kv_dtype
    weights_named = _quantized(weight_dtype)
    experts_named = _quantized(expert_weight_dtype)
    weights_given = weight_dtype
    weight_dtype, expert_weight_dtype, kv_dtype, compute_dtype, expert_compute_dtype, attention_dtype = (
        None if value is None else format_name(value, label) for label, value in (
            ("weight_dtype", weight_dtype), ("expert_weight_dtype", expert_weight_dtype), ("kv_dtype", kv_dtype),
            ("compute_dtype", compute_dtype), ("expert_compute_dtype", expert_compute_dtype),
            ("attention_dtype", attention_dtype)))
    for label, value in (("compute_dtype", compute_dtype), ("expert_compute_dtype", expert_compute_dtype),
                         ("attention_dtype", attention_dtype)):
        if value is not None and not isinstance(value, str):
            raise ValueError(f"{label} must be a format name the chip computes in "
                             f"({', '.join(sorted(deployment.chip.flops))}), got {value!r}")
    weight_dtype, compute_dtype, formats_why = default_formats(
        model, deployment.chip, weight_dtype=weights_given if weights_named else weight_dtype,
        compute_dtype=compute_dtype)
    if weights_given is None and model.weight_format and not isinstance(weight_dtype, str):
        weights_named = (hf_config.format_label(model.weight_format),)   # by name, not "4.464 bits" (finding 11)
    bytes_w, bytes_e, compute = _formats(model, deployment, weight_dtype, expert_weight_dtype, kv_dtype,
                                         compute_dtype, expert_compute_dtype)
    explicit = any(degree is not None for degree in (tp, pp, ep))
    auto = isinstance(layout, str) and layout == "auto"
    layout_notes, degrees = [], None
    if explicit:
        if not auto:
            raise ValueError(f"layout must be 'auto' when tp, pp or ep are given (they set it), got "
                             f"{layout!r}")
        chosen, fit_layout, degrees, layout_notes = explicit_layout(model, deployment, tp=tp, pp=pp, ep=ep)
        auto = False
    elif auto and model.is_moe and deployment.n_chips > 1:   # DP attention + EP, redundant experts where needed
        chosen, fit_layout, degrees, layout_notes = explicit_layout(model, deployment, tp=1)
    else:
        chosen = roofline.resolve_layout(auto_layout(model, deployment) if auto else layout)
        fit_layout = chosen
        if chosen is not None and chosen.attention_tp is None and deployment.n_chips > 1:
            n_all = deployment.n_chips
            try:   # every layer split over all n GPUs: the same checks as an explicit tp = n
                layout_notes = explicit_layout(model, deployment, tp=n_all)[3]
                refused = None
            except ValueError as error:
                if not auto:
                    raise ValueError(f"n_chips: every layer is split over all {n_all} GPUs (TP {n_all}), and "
                                     f"{error}; give tp (DP is what remains) or another GPU count") from None
                refused = str(error)
            if auto:
                chosen, fit_layout, degrees, layout_notes = _cheapest_tp(
                    model, deployment, refused=refused, len_ctx=len_ctx, batch=batch,
                    # a time-per-output-token limit searches the widths as a step limit (its prefill share aside)
                    latency_target=latency_target if latency_target is not None or limits["tpot_target"] is None
                    else limits["tpot_target"] * tau,
                    bytes_w=bytes_w, bytes_e=bytes_e, kv_dtype=kv_dtype,
                    settings=dict(weight_dtype=bytes_w, expert_weight_dtype=bytes_e, compute_dtype=compute,
                                  expert_compute_dtype=expert_compute_dtype, attention_dtype=attention_dtype,
                                  kv_dtype=kv_dtype, tokens_per_step=tau, len_ctx=len_ctx))
    if degrees is None and chosen is not None:   # the layout used, as degrees (issue 30: JSON gives it always)
        width = deployment.n_chips if chosen.attention_tp is None else chosen.attention_tp
        degrees = {"tp": width, "pp": 1, "ep": deployment.n_chips if model.is_moe else 1,
                   "dp": deployment.n_chips // width}
    expert_compute = expert_compute_dtype
    chip, n = deployment.chip, deployment.n_chips
    result = Plan(model, deployment, title=(title or "").strip()[:200])
    stated = model.notes.rfind("Weights")
    if weights_given is not None and stated >= 0:   # the config's format is not the one in use: say so
        result.notes = (model.notes[:stated] + "Not used by this plan: the config's w" + model.notes[stated + 1:]
                        + f" This plan's weights: {formats_why.split(';')[0].removeprefix('weights ')}.")
    add = result.add

    # Inputs -------------------------------------------------------------------------------------
    shapes = models.architecture_of(model.name)
    aliased = given_name is not None and _loose(given_name) != _loose(model.name)
    if shapes or aliased:   # a name read as a preset's shapes is said in the first line (issue 51 §4)
        result.given_name, result.read_as = (given_name or model.name), (shapes or model.name)
    add("inputs", "model", "model", model.name,
        (f"{given_name}, read as {model.name} (a name the presets take for it: the same shapes); " if aliased else "")
        + f"{model.name}" + (f" ({shapes}'s architecture: the same shapes)" if shapes else "")
        + f": {units.count(model.params_total)} params, {units.count(model.params_active)} active"
        + _active_params_why(model), "models.Model.params_total, params_active")
    add("inputs", "deployment", "hardware", deployment.name,
        f"{n} × {chip.name} ({deployment.n_domains} scale-up domain{'s' if deployment.n_domains > 1 else ''} "
        f"of {deployment.chips_per_domain})", "collectives.deployment")
    if chip.name not in hardware.CHIPS:
        add("inputs", "custom_chip", "custom chip", chip.name,
            f"{chip.notes} {units.bytes_(full.chip.hbm_capacity)} at {units.bytes_(chip.hbm_bandwidth)}/s; "
            + ", ".join(f"{fmt.upper()} {units.flops(value)}" for fmt, value in chip.flops.items()),
            "hardware.custom_chip")
    one_by_default = n_chips is None and isinstance(resolve_unit(system), hardware.Chip)
    add("inputs", "n_chips", "GPUs", n, units.whole(n) + (" (a chip named without a count: give --gpus N, or "
                                                          "n_chips=N in Python, for more)" if one_by_default else ""),
        "collectives.Deployment.n_chips")
    add("inputs", "price_per_gpu_hour", "price per GPU-hour", price,
        units.dollars(price) if price is not None else "not given: no cost lines (--price USD per GPU-hour adds them)")
    add("inputs", "scenario", "scenario", scenario,
        "offline: the largest throughput that fits, no latency limit" if scenario == "offline" else
        "server: the largest throughput that meets the latency limits")
    add("inputs", "len_ctx", "context per sequence", len_ctx, units.tokens(len_ctx))
    add("inputs", "formats", "weights / experts / KV / compute", None,
        f"{_fmt(weight_dtype, weights_named)} / "
        f"{_fmt(expert_weight_dtype, experts_named) if expert_weight_dtype else _fmt(weight_dtype, weights_named)} / "
        f"{_fmt(kv_dtype)} / {compute}"
        + (f" (experts {expert_compute})" if expert_compute else ""))
    add("inputs", "formats_why", "why these formats", None, formats_why, "plan.default_formats")
    add("inputs", "memory_utilization", "HBM for weights and KV", utilization,
        f"{utilization:.0%} of each GPU's {units.bytes_(full.chip.hbm_capacity)}: {units.bytes_(chip.hbm_capacity)}"
        f" (the rest is the runtime's reserve for activations and graphs; vLLM's gpu_memory_utilization)")
    longest = max(len_ctx, len_in + len_out if len_in is not None else 0)
    if max_context is not None and longest > max_context:
        add("inputs", "context_warning", "WARNING: past the model's context", {"max_position_embeddings": max_context,
                                                                               "longest_context": longest},
            f"{units.tokens(longest)} is more than the {units.tokens(max_context)} the config allows "
            f"(max_position_embeddings): the model is not built for it, though the bound computes it anyway",
            "config.json max_position_embeddings")
    if len_in is not None:
        mean = len_in + len_out / 2
        add("inputs", "lengths", "request lengths", {"input": len_in, "output": len_out},
            f"{units.tokens(len_in)} in, {units.tokens(len_out)} out (decode context: "
            f"{units.tokens(len_ctx)}{', the mean' if len_ctx == mean else ''}"
            + (f", as given by --context: it wins over these lengths' mean decode context, {units.tokens(mean)}"
               if context_given and len_ctx != mean else "") + ")")
    if hit:
        add("inputs", "hit_rate", "prefix-cache hit rate", hit, f"{hit:.0%} of input tokens")
    if tau != 1:
        add("inputs", "tokens_per_step", "tokens per step (speculative decoding)", tau, f"{tau:g}")
    wanted = [f"time to first token ≤ {units.seconds(limits['ttft_target'])}"] if limits["ttft_target"] else []
    wanted += [f"time per output token ≤ {units.seconds(limits['tpot_target'])}"] if limits["tpot_target"] else []
    add("inputs", "target", "target",
        latency_target if latency_target is not None else batch if batch is not None else
        ({k: v for k, v in limits.items() if v is not None} or None),
        (f"latency ≤ {units.seconds(latency_target)} per step" if latency_target is not None
         else f"fixed batch of {units.whole(batch)}" if batch is not None
         else " and ".join(wanted) + " (largest throughput that meets them)" if wanted
         else "throughput (largest batch that fits)"))
    add("inputs", "layout", "headline layout", None if chosen is None else fit_layout.name,
        (_degrees_text(degrees) if degrees is not None and degrees["pp"] > 1 else _layout_label(chosen, model))
        + (" (one big chip: weights and KV split evenly, an optimistic bound)" if chosen is None else "")
        + (" (chosen for this model and system)" if auto else ""))
    if degrees is not None:
        add("inputs", "parallel", "parallel degrees", degrees,
            f"TP {degrees['tp']} × PP {degrees['pp']} × DP {degrees['dp']}" + (f", EP {degrees['ep']}" if model.is_moe
                                                                               else ""), "plan.explicit_layout")
    else:
        add("inputs", "parallel", "parallel degrees", None, "none: pooled, the devices act as one big chip")
    for index, note in enumerate(layout_notes):
        add("inputs", f"parallel_note_{index}", "layout note", None, note, "plan.explicit_layout")

    # Capacity -------------------------------------------------------------------------------------
    per_token_kv = model.kv_bytes_per_token(kv_dtype, context_len=max(1, int(round(len_ctx))))
    add("capacity", "kv_bytes_per_token", "KV cache per token", per_token_kv, units.bytes_(per_token_kv),
        "models.Model.kv_bytes_per_token")
    add("capacity", "hbm_per_gpu", "HBM per GPU", chip.hbm_capacity, units.bytes_(chip.hbm_capacity),
        "hardware.Chip.hbm_capacity")
    compared, refusals = {"pooled": None}, {}
    widths = {"tp": n, "tp_domain": deployment.chips_per_domain, "dp_ep": 1}
    for name, lay in _layouts_for(deployment).items():
        compared[name] = lay
        if n > 1:
            try:   # the layout as the checks place it (redundant experts included); refused ones are shown so
                compared[name] = explicit_layout(model, deployment, tp=widths[name])[1]
            except ValueError as error:
                refusals[name] = str(error)
    if chosen is not None and fit_layout not in compared.values():
        compared["headline"] = fit_layout
    for name, lay in compared.items():
        label = (f"headline ({_degrees_text(degrees)})" if name == "headline" else _layout_label(lay, model))
        if name in refusals:    # a layout this model's heads refuse is shown refused, not with numbers (issue 30)
            add("capacity", f"{name}_max_batch", f"{label}: largest batch at this context", None,
                f"refused: {refusals[name]}", "plan.explicit_layout")
            continue
        held = roofline.device_memory(model, deployment, layout=lay, weight_dtype=bytes_w,
                                      expert_weight_dtype=bytes_e, kv_dtype=kv_dtype)
        fit = _fits_batch(model, deployment, lay, len_ctx=len_ctx, bytes_w=bytes_w, bytes_e=bytes_e, kv_dtype=kv_dtype)
        add("capacity", f"{name}_weights_per_gpu", f"{label}: weights per GPU", held["weights"],
            f"{units.bytes_(held['weights'])} ({'fits' if held['fits'] else 'does NOT fit'})",
            "roofline.device_memory")
        add("capacity", f"{name}_fits", f"{label}: weights fit", bool(held["fits"]), "yes" if held["fits"] else "no",
            "roofline.device_memory")
        add("capacity", f"{name}_kv_room", f"{label}: room for KV per GPU", held["free"], units.bytes_(held["free"]),
            "roofline.device_memory")
        add("capacity", f"{name}_max_batch", f"{label}: largest batch at this context", math.floor(fit),
            _sequences(math.floor(fit)), "roofline.batch_that_fits")
    stages = deployment.n_domains
    bytes_avg = _effective_bytes_per_param(model, bytes_w, bytes_e)
    if stages > 1:
        micro = pipeline_memory.max_micro_batch(hbm_capacity=chip.hbm_capacity, n_total=model.params_total,
                                                bytes_param=bytes_avg, len_ctx=len_ctx, bytes_tok=per_token_kv,
                                                expert_parallel=deployment.chips_per_domain, stages=stages)
        weights_pp = pipeline_memory.memory_per_gpu(n_total=model.params_total, bytes_param=bytes_avg, micro_batch=1,
                                                    len_ctx=len_ctx, bytes_tok=per_token_kv,
                                                    expert_parallel=deployment.chips_per_domain,
                                                    stages=stages)["weights"]
        total_pp = pipeline_memory.GLOBAL_BATCH(n_micro=stages, b=micro) if micro > 0 else 0.0
        label = f"PP over {stages} domains"
        add("capacity", "pp_weights_per_gpu", f"{label}: weights per GPU", weights_pp,
            units.bytes_(weights_pp), "pipeline_memory.memory_per_gpu")
        add("capacity", "pp_max_batch", f"{label}: largest batch ({stages} micro-batches)", math.floor(total_pp),
            _sequences(math.floor(total_pp)), "pipeline_memory.max_micro_batch, GLOBAL_BATCH")

    # Decode ------------------------------------------------------------------------------------------
    common = dict(weight_dtype=bytes_w, expert_weight_dtype=bytes_e, compute_dtype=compute,
                  expert_compute_dtype=expert_compute, attention_dtype=attention_dtype, kv_dtype=kv_dtype,
                  tokens_per_step=tau, layout=chosen)
    result.decode_settings = dict(common, len_ctx=len_ctx)

    pp = degrees["pp"] if degrees is not None else 1
    result.pipeline = {"pp": pp, "fit_layout": fit_layout}

    def step(b):
        return result.decode_step(b)

    b_star = roofline.balance_batch(chip, weight_bytes=bytes_avg, compute_dtype=compute, sparsity=model.sparsity)
    bytes_read_tok = model.kv_bytes_read_per_token(kv_dtype, context_len=max(1, int(round(len_ctx))))
    b_star_kv = roofline.balance_batch_with_kv(n_active=model.params_active, n_total=model.params_total,
                                               flops=deployment.flops[compute], mem_bw=deployment.hbm_bandwidth,
                                               bytes_param=bytes_avg, len_ctx=len_ctx, bytes_tok=bytes_read_tok)
    add("decode", "balance_batch", "B* (weights only, × sparsity)", b_star, _sequences(b_star),
        "roofline.balance_batch")
    add("decode", "balance_batch_with_kv", "B* with KV at this context", b_star_kv,
        "none: KV outpaces compute at every batch" if math.isinf(b_star_kv) else _sequences(b_star_kv),
        "roofline.balance_batch_with_kv")
    floor = step(1)
    if floor["fits"]:
        unfit = ""
    elif floor["weights_per_device"] > chip.hbm_capacity:
        unfit = " (if it fitted: the weights do not)"
    else:
        unfit = " (if it fitted: one sequence's KV cache at this context does not)"
    add("decode", "latency_floor", "latency floor (batch 1)", floor["t"],
        units.seconds(floor["t"]) + " per token" + unfit, "roofline.decode_bound(batch=1)")
    add("decode", "tokens_per_s_per_user_at_floor", "tokens/s per user at batch 1", floor["tokens_per_s_per_seq"],
        units.rate(floor["tokens_per_s_per_seq"]), "roofline.decode_bound(batch=1)")
    fit = _fits_batch(model, deployment, fit_layout, len_ctx=len_ctx, bytes_w=bytes_w, bytes_e=bytes_e,
                      kv_dtype=kv_dtype)
    add("decode", "fit_limit", "largest batch that fits (headline layout)", math.floor(fit),
        _sequences(math.floor(fit)), "roofline.batch_that_fits")
    pre_alone = pre_busy = None
    group = {}
    if len_in is not None:   # one request alone: its TP group for attention and dense layers, its EP group for experts
        group = ({} if degrees is None else
                 {"dense_devices": degrees["tp"], "expert_devices": max(1, degrees["ep"] // degrees["pp"])})
        prefill_settings = dict(hit_rate=hit, compute_dtype=compute, expert_compute_dtype=expert_compute,
                                attention_dtype=attention_dtype, layout=fit_layout, weight_dtype=bytes_w,
                                expert_weight_dtype=bytes_e)
        lone = roofline.prefill_bound(model, deployment, len_in=len_in, **prefill_settings, **group)
        # a prompt alone also reads its GPUs' weights once: the longer of the two (realistic.T_PREFILL_ALONE, issue 51)
        pre_compute = lone["t_prefill"]
        pre_alone = realistic.prefill_alone(t_compute=pre_compute, weights_per_device=lone["weights_per_device"],
                                            hbm_bandwidth=chip.hbm_bandwidth)
        pre_busy = roofline.prefill_bound(model, deployment, len_in=len_in, **prefill_settings)["t_prefill"]

    def under_load(b):
        """Time to first token and time per output token at batch ``b`` (TTFT_UNDER_LOAD, TPOT_UNDER_LOAD)."""
        t = step(b)["t"]
        out = {"tpot": t / tau if pre_busy is None else TPOT_UNDER_LOAD(
            t_step=t, tau=tau, B=b, t_busy=pre_busy, L_out=len_out)}
        if pre_alone is not None:
            out["ttft"] = TTFT_UNDER_LOAD(t_alone=pre_alone, t_step=t)
        return out

    binds = None
    if any(v is not None for v in limits.values()):
        operating, why, binds = _batch_for_limits(under_load, fit=fit, ttft=limits["ttft_target"],
                                                  tpot=limits["tpot_target"])
    else:
        operating, why = _operating_batch(step, fit=fit, batch=batch, latency_target=latency_target)
    add("decode", "batch", "operating batch", operating,
        (_sequences(operating) if operating else "none") + f" ({why})")
    if binds is not None:
        add("decode", "binds", "what binds the batch", binds, binds, "plan.TTFT_UNDER_LOAD, plan.TPOT_UNDER_LOAD")
    if operating:
        at = step(operating)
        per_gpu = at["tokens_per_s"] / n
        add("decode", "step_time", "step time at that batch", at["t"], units.seconds(at["t"]),
            "roofline.decode_bound")
        add("decode", "bound_by", "bound by", None,
            "compute" if at["t_compute"] >= at["t_weights"] + at["t_kv"] else "memory (weights + KV)",
            "roofline.decode_bound")
        add("decode", "tokens_per_s", "tokens/s, whole deployment", at["tokens_per_s"], units.rate(at["tokens_per_s"]),
            "roofline.decode_bound")
        add("decode", "tokens_per_s_per_gpu", "tokens/s per GPU", per_gpu, units.rate(per_gpu), "roofline.decode_bound")
        add("decode", "tokens_per_s_per_user", "tokens/s per user", at["tokens_per_s_per_seq"],
            units.rate(at["tokens_per_s_per_seq"]), "roofline.decode_bound")
        add("decode", "fits_at_batch", "weights + KV fit at that batch", bool(at["fits"]),
            "yes" if at["fits"] else "no", "roofline.device_memory")

    # Prefill -----------------------------------------------------------------------------------------
    pre = roofline.prefill_bound(model, deployment, len_in=len_ctx, hit_rate=hit, compute_dtype=compute,
                                 expert_compute_dtype=expert_compute, attention_dtype=attention_dtype,
                                 layout=fit_layout, weight_dtype=bytes_w,
                                 expert_weight_dtype=bytes_e)
    add("prefill", "t_prefill", "prefill time per context, every GPU busy with prompts", pre["t_prefill"],
        units.seconds(pre["t_prefill"]) + ("" if pre["fits"] else " (if it fitted: the weights do not)"),
        "roofline.prefill_bound")
    add("prefill", "input_tokens_per_s", "input tokens/s, whole deployment", pre["input_tokens_per_s"],
        units.rate(pre["input_tokens_per_s"]), "roofline.prefill_bound")
    add("prefill", "input_tokens_per_s_per_gpu", "input tokens/s per GPU", pre["input_tokens_per_s"] / n,
        units.rate(pre["input_tokens_per_s"] / n), "roofline.prefill_bound")

    # Requests --------------------------------------------------------------------------------------
    serving = None
    if len_in is not None:
        ttft = pre_alone
        on = ""
        if group:
            width = group["dense_devices"]
            on = " on its own GPU" if width == 1 else f" on its own {units.whole(width)} GPUs"
            if model.is_moe and group["expert_devices"] != width:
                on += f" (experts over {units.whole(group['expert_devices'])})"
        read_bound = pre_alone > pre_compute
        add("requests", "ttft", "time to first token (one request alone)", ttft, units.seconds(ttft) + on
            + (f": one read of each GPU's {units.bytes_(lone['weights_per_device'])} of weights (its compute, "
               f"{units.seconds(pre_compute)}, is shorter)" if read_bound else
               f": its compute (one read of the weights, {units.seconds(lone['weights_per_device'] / chip.hbm_bandwidth)}"
               f", is shorter)"),
            "realistic.T_PREFILL_ALONE with roofline.prefill_bound(len_in, dense_devices, expert_devices)")
        if operating:
            decode_time = len_out * at["t"] / tau
            add("requests", "end_to_end", "end-to-end latency per request", ttft + decode_time,
                f"{units.seconds(ttft + decode_time)} ({units.seconds(ttft)} + {units.whole(len_out)} tokens at "
                f"{units.seconds(at['t'] / tau)} each, at the operating batch)",
                "prefill_bound + len_out × decode_bound")
            # Each request: its prefill's share of the whole deployment (a stream of prompts keeps every GPU
            # busy), then len_out steps shared with the batch (Chapter 8's "serving" rows are bounded the same way).
            busy = pre_busy
            loaded = under_load(operating)
            add("requests", "ttft_under_load", "time to first token under load", loaded["ttft"],
                f"{units.seconds(loaded['ttft'])} (the step in flight, then its prefill)", "plan.TTFT_UNDER_LOAD")
            add("requests", "tpot_under_load", "time per output token under load", loaded["tpot"],
                f"{units.seconds(loaded['tpot'])} (the step, plus the prompts prefilled meanwhile)",
                "plan.TPOT_UNDER_LOAD")
            seconds = busy + len_out * at["t"] / (operating * tau)
            serving = len_out / seconds
            add("requests", "output_tokens_per_s", "output tokens/s, whole deployment (prefill included)", serving,
                units.rate(serving), "len_out / (t_prefill + len_out · t_step / (B · tokens per step))")
            add("requests", "output_tokens_per_s_per_gpu", "output tokens/s per GPU (prefill included)", serving / n,
                units.rate(serving / n), "the line above / GPUs")
            add("requests", "requests_per_s", "requests/s, whole deployment", serving / len_out,
                units.rate(serving / len_out, "requests/s"), "the line above / len_out")

    # Cost --------------------------------------------------------------------------------------------
    if price is None:
        pass
    elif fit >= 1:
        cost_in = roofline.cost_per_token(step_time=pre["t_prefill"], batch=len_ctx, n_chips=n,
                                          price_chip_hour=price) * PER_MILLION
        add("cost", "usd_per_million_input", "$ per million input tokens (bound)", cost_in, units.dollars(cost_in),
            "roofline.cost_per_token (COST_OF_STEP) with the prefill time")
    else:   # no price for a deployment that does not fit (issue 30)
        add("cost", "usd_per_million_input", "$ per million input tokens", None,
            "none: the deployment does not fit (the weights, or one sequence's KV)")
    if operating and price is not None:
        cost_out = roofline.cost_per_token(step_time=at["t"], batch=operating * tau, n_chips=n,
                                           price_chip_hour=price) * PER_MILLION
        add("cost", "usd_per_million_output", "$ per million output tokens (bound)", cost_out, units.dollars(cost_out),
            "roofline.cost_per_token (COST_OF_STEP) at the operating batch")

    # Layouts compared ---------------------------------------------------------------------------------
    if pp > 1 or stages > 1:
        given = pp > 1
        n_stages = pp if given else stages
        idle = pipeline.decode_idle_fraction(stages=n_stages, microbatches=1)
        need = pipeline.MIN_DECODE_MICROBATCHES(P=n_stages)
        what = f"PP {pp} (as given)" if given else f"PP over {stages} domains"
        why = (" (the decode figures assume them; a token passes every stage in turn, so the latency floor is one "
               "stage group's)") if given else ""
        add("layouts", "pp_decode_idle_one_micro", f"{what}: idle with 1 micro-batch", idle,
            f"{idle:.0%} of the time", "pipeline.decode_idle_fraction")
        add("layouts", "pp_micro_batches_needed", "PP: micro-batches needed to keep every stage busy", need,
            units.whole(need) + why, "pipeline.MIN_DECODE_MICROBATCHES")
    else:
        add("layouts", "pp_decode_idle_one_micro", "pipeline stages", None,
            "none needed: one scale-up domain holds the model's devices")
    a2a_step = 0.0
    if model.is_moe and n == 1:
        add("layouts", "cross_rack_fraction", "expert all-to-all", None, "none: one GPU holds every expert")
    elif model.is_moe and n // pp == 1:
        add("layouts", "cross_rack_fraction", "expert all-to-all", None,
            "none: each pipeline stage's GPU holds every expert of its layers")
    elif model.is_moe:
        per_token = moe.a2a_bytes_per_token(model, bytes_per_value=moe.ACTIVATION_BYTES["fp8"])
        tokens_gpu = (operating or 1) * tau / n
        scale_out = resolve_unit(system, n_chips=n_chips).scale_out_bandwidth   # a System may set its own
        a2a = moe.a2a_layer_time(tokens_per_gpu=tokens_gpu, bytes_per_token=per_token, racks=stages,
                                 scale_up_bw=chip.scale_up_bandwidth, scale_out_bw=scale_out)
        one = moe.a2a_layer_time(tokens_per_gpu=tokens_gpu, bytes_per_token=per_token, racks=1,
                                 scale_up_bw=chip.scale_up_bandwidth, scale_out_bw=scale_out)
        per_step = a2a_step = a2a["total"] * model.n_moe_layers
        add("layouts", "cross_rack_fraction", "EP: share of dispatched tokens that leave their domain",
            a2a["cross_fraction"], f"{a2a['cross_fraction']:.0%}", "moe.CROSS_RACK_FRACTION")
        add("layouts", "a2a_per_step", "EP: all-to-all time per decode step (FP8 dispatch)", per_step,
            units.seconds(per_step) + (f" ({per_step / at['t']:.0%} of the step bound; not in it)" if operating else ""),
            "moe.a2a_layer_time × MoE layers")
        add("layouts", "a2a_slowdown", "EP: all-to-all against one domain", a2a["total"] / one["total"],
            units.factor(a2a["total"] / one["total"]), "moe.a2a_layer_time(racks) / moe.a2a_layer_time(racks=1)")
    else:
        add("layouts", "cross_rack_fraction", "expert all-to-all", None, "none: a dense model routes no tokens")

    # Communication: reported beside the step bound, not in it (Chapter 8's collectives) ---------------
    if operating:
        _communication(add, model, deployment, degrees, at=at, batch=operating, tau=tau, a2a_step=a2a_step)

    # Reality -----------------------------------------------------------------------------------------
    if operating:
        regime = "compute" if at["t_compute"] >= at["t_weights"] + at["t_kv"] else "memory"
        if serving is not None:
            _band(add, "serving", "requests", "output tokens/s, whole deployment (prefill included)", serving,
                  model=model, regime=regime, fraction=utilization, chip=chip)
        else:
            _band(add, "latency" if operating == 1 else "decode", "decode", "output tokens/s per GPU", per_gpu,
                  model=model, regime=regime, fraction=utilization, chip=chip)
    _band(add, "prefill", "prefill", "input tokens/s per GPU", pre["input_tokens_per_s"] / n, model=model,
          regime="compute", fraction=utilization, chip=chip)
    # Realistic estimate ----------------------------------------------------------------------------
    result.realistic = None
    if operating:
        result.realistic = _realistic(add, model, deployment, system=system, n_chips=n_chips, batch=operating,
                                      len_ctx=len_ctx, len_in=len_in, len_out=len_out, hit=hit, tau=tau,
                                      terms=terms_on, decode=common, bound=serving if serving is not None else
                                      at["tokens_per_s"], prefill=dict(
                                          compute_dtype=compute, expert_compute_dtype=expert_compute,
                                          attention_dtype=attention_dtype, layout=fit_layout, weight_dtype=bytes_w,
                                          expert_weight_dtype=bytes_e), full_hbm=full.chip.hbm_capacity,
                                      group=group, limits=limits,
                                      instances=degrees["dp"] if degrees is not None else 1,
                                      per_instance=max_seqs_per_instance, pp=pp,
                                      # a given --ep below the GPUs splits each expert over the rest (MoE TP)
                                      expert_parallel=(degrees["ep"] if model.is_moe and degrees is not None
                                                       and pp == 1 and degrees["ep"] < n else None))
    if price is not None and result.realistic is not None:   # the engineer's walk, finding 1: price the realistic too
        _realistic_cost(add, result.realistic, n=n, tau=tau, price=price, len_ctx=len_ctx,
                        bound_out=result.numbers["cost"].get("usd_per_million_output"),
                        bound_in=result.numbers["cost"].get("usd_per_million_input"), lengths=len_in is not None)

    # Headline: the first lines a reader sees --------------------------------------------------------
    result.lengths = {"input": len_in, "output": len_out, "context": len_ctx, "defaulted": lengths_defaulted,
                      "context_given": context_given}
    shown = _fmt(weight_dtype, weights_named) + (
        f" (routed experts {_fmt(expert_weight_dtype, experts_named)})" if expert_weight_dtype is not None
        and _fmt(expert_weight_dtype, experts_named) != _fmt(weight_dtype, weights_named) else "")
    result.headline = _headline(result, chip=chip, formats_why=formats_why, weights=shown,
                                kv=_fmt(kv_dtype), compute=compute, kv_given=kv_dtype_given, binds=binds,
                                operating=operating, serving=serving, n=n,
                                bound=(at["tokens_per_s"] if operating else None))
    hardware_said = []   # the engineer's walk, finding 15: what SYSTEM was read as, in the first lines
    unit = resolve_unit(system, n_chips=n_chips)
    if isinstance(system, str) and _loose(system) != _loose(unit.name):
        hardware_said.append(f"{system.strip()!r} read as the {unit.name} preset")
    if one_by_default:
        hardware_said.append(f"ONE {chip.name}: SYSTEM names a chip and no GPU count was given (--gpus N, or n_chips=N "
                             f"in Python, for more; or a system preset such as "
                             f"{_system_of(chip.name) or 'HGX H100'!r})")
    if hardware_said:
        result.headline.insert(2, "hardware: " + "; ".join(hardware_said))   # after the formats line
    costs = result.numbers["cost"]
    if costs.get("usd_per_million_output_realistic") is not None:   # the price a reader takes away: the realistic
        all_in = costs.get("usd_per_million_output_all_in_realistic")
        result.headline.append(
            f"cost: {units.dollars(all_in if all_in is not None else costs['usd_per_million_output_realistic'])} per "
            f"million output tokens at the realistic estimate" + (", prefill included (decode alone: "
                                                                  f"{units.dollars(costs['usd_per_million_output_realistic'])})"
                                                                  if all_in is not None else "")
            + f"; the bound's decode-only {units.dollars(costs['usd_per_million_output'])} is a floor no engine reaches")
    if chip.name.upper().startswith("TPU"):   # a TPU is a chip, not a GPU (issue 30): the words, not the keys
        result.rows = [dataclasses.replace(row, label=_chip_words(row.label), text=_chip_words(row.text))
                       for row in result.rows]
        result.headline = [_chip_words(line) for line in result.headline]
    return result


def _realistic(add, model, deployment, *, system, n_chips, batch, len_ctx, len_in, len_out, hit, tau, terms, decode,
               bound, prefill, full_hbm, group=None, limits=None, instances: int = 1, pp: int = 1,
               expert_parallel: int | None = None,
               per_instance: float = realistic.ENGINE_MAX_SEQS[realistic.DEFAULT_ENGINE]) -> dict:
    """The realistic estimate beside the bound (:mod:`lecture_lib.realistic`), with what each term costs: the rate
    with every chosen term, and with each one switched off in turn; and its own time to first token and time per
    output token under load (:data:`TTFT_UNDER_LOAD`, :data:`TPOT_UNDER_LOAD` with the realistic step and prefills,
    the engine factor stretching both as it shrinks the rate). With latency limits (server scenario) the realistic
    batch is the largest up to the bound's that meets them realistically: the bound's batch meets them only in the
    bound (issue 51 §3)."""
    n = deployment.n_chips
    scale_out = resolve_unit(system, n_chips=n_chips).scale_out_bandwidth
    engine = measurements.engine_efficiency(deployment.chip.generation)
    # stage hand-offs stay on the scale-up links when every stage group shares one domain, else cross the network
    chip_link = deployment.chip.scale_up_bandwidth if n <= deployment.chips_per_domain else scale_out
    limits = {key: value for key, value in (limits or {}).items() if value is not None}
    busy_cache = {}

    def busy(chosen, b=None):
        """A request's share of prefill time, every GPU on prompts; with DP-attention ranks of an MoE model, times
        the wait for the rank prefilling the most (realistic.DP_PREFILL_WAIT) at batch ``b``."""
        if chosen not in busy_cache:
            busy_cache[chosen] = prefill_at(len_in, chosen)
        return busy_cache[chosen] * realistic.prefill_wait_factor(
            model, deployment, layout=decode.get("layout"), batch=batch if b is None else b, len_out=len_out,
            tokens_per_step=tau, terms=chosen)

    def prefill_at(tokens, chosen, alone=False):
        """Seconds of prefill for a prompt of ``tokens``: every GPU on prompts (its share), or ``alone`` on its own
        group. With pipeline stages, on one tp-wide stage group holding the whole model (as decode_at), the pp
        groups each taking 1/pp of the layers in turn; prompts in flight keep every stage busy, so a prompt's share
        is the group's time / pp, while one prompt alone passes every stage: the group's whole time."""
        if pp == 1:
            return realistic.prefill_time(model, deployment, len_in=tokens, hit_rate=hit, terms=chosen,
                                          scale_out_bandwidth=scale_out, **prefill,
                                          **((group or {}) if alone else {}))["t_prefill"]
        stage = _stage_group(deployment, pp)
        settings = dict(prefill, layout=decode.get("layout"))
        if alone:   # the prompt on its stage group's devices (its experts too, for an MoE model)
            settings["dense_devices"] = stage.n_chips
            if model.is_moe:
                settings["expert_devices"] = stage.n_chips
        seconds = realistic.prefill_time(model, stage, len_in=tokens, hit_rate=hit, terms=chosen,
                                         scale_out_bandwidth=scale_out, **settings)["t_prefill"]
        return seconds if alone else seconds / pp

    def decode_at(b, chosen):
        if pp == 1:
            return realistic.decode_step(model, deployment, batch=b, len_ctx=len_ctx, terms=chosen, engine=engine,
                                         scale_out_bandwidth=scale_out, expert_parallel=expert_parallel, **decode)
        # Pipeline stages (Chapter 3, as _pipeline_step bounds them): a cycle is one micro-batch of B / pp passing
        # every stage in turn on one tp-wide stage group; each stage hands its micro-batch's activations to the
        # next (pipeline.T_SCALE_OUT_STAGE per boundary, pp per cycle, not overlapped when "communication" is on);
        # fewer micro-batches in flight than stages leave stages idle (pipeline.decode_idle_fraction).
        micro = max(b / pp, 1.0)
        one = realistic.decode_step(model, _stage_group(deployment, pp), batch=micro, len_ctx=len_ctx, terms=chosen,
                                    engine=engine, scale_out_bandwidth=scale_out, **decode)
        send = 0.0
        if "communication" in chosen:
            link = chip_link
            send = pp * pipeline.T_SCALE_OUT_STAGE(
                bytes_act=micro * tau * model.d_model * models.BYTES_PER_VALUE["bf16"], bw_out=link)
        idle = pipeline.decode_idle_fraction(stages=pp, microbatches=int(min(max(math.floor(b), 1), pp)))
        seconds = one["t"] + send
        rate = one["tokens_per_s"] * (b / micro) * (one["t"] / seconds) * (1 - idle)
        return dict(one, t=seconds, tokens_per_s=rate,
                    pieces=dict(one["pieces"], pp_send=send, pp_idle=idle, micro_batch=micro))

    def under_load(b, chosen=terms):
        step = decode_at(b, chosen)
        stretch = step["engine"]                   # the engine factor: a share of the rate, so a stretch of time
        out = {"tpot": step["t"] / tau / stretch}
        if len_in is not None:
            out["tpot"] = TPOT_UNDER_LOAD(t_step=step["t"] / stretch, tau=tau, B=b,
                                          t_busy=busy(chosen, b) / stretch, L_out=len_out)
            alone = prefill_at(len_in, chosen, alone=True)
            out["ttft"] = TTFT_UNDER_LOAD(t_alone=alone / stretch, t_step=step["t"] / stretch)
        return out

    # The engine's cap on concurrent sequences (realistic.ENGINE_BATCH): each engine instance schedules at most
    # per_instance sequences, whatever fits in HBM (the engineer's walk, finding 5).
    bound_batch = batch
    capped = realistic.engine_batch(batch=batch, instances=instances, per_instance=per_instance)
    cap_source = (f"realistic.ENGINE_BATCH; {realistic.ENGINE_MAX_SEQS_SOURCES[realistic.DEFAULT_ENGINE]}"
                  if per_instance == realistic.ENGINE_MAX_SEQS[realistic.DEFAULT_ENGINE] else "realistic.ENGINE_BATCH")
    cap_words = (f"{_sequences(per_instance)} per engine instance × {units.whole(instances)} instance"
                 f"{'s' if instances != 1 else ''} = {_sequences(instances * per_instance)}"
                 + (f" ({realistic.DEFAULT_ENGINE}'s default max_batch_size; vLLM's max_num_seqs is "
                    f"{realistic.ENGINE_MAX_SEQS['vLLM']}; --max-seqs sets yours)"
                    if per_instance == realistic.ENGINE_MAX_SEQS[realistic.DEFAULT_ENGINE] else " (as given)"))
    if "engine_batch_cap" not in terms:
        add("realistic", "engine_batch_cap", "engine cap on concurrent sequences", None,
            f"off: the realistic estimate runs the bound's batch of {_sequences(batch)}", "realistic.ENGINE_BATCH")
    elif capped < batch:
        add("realistic", "engine_batch_cap", "engine cap on concurrent sequences BINDS",
            {"per_instance": per_instance, "instances": instances, "batch": capped},
            f"{cap_words}: the realistic estimate runs {_sequences(capped)}, not the {_sequences(batch)} that fit "
            f"in HBM", cap_source)
    else:
        add("realistic", "engine_batch_cap", "engine cap on concurrent sequences",
            {"per_instance": per_instance, "instances": instances, "batch": batch},
            f"{cap_words}: does not bind (the batch of {_sequences(batch)} is within it)", cap_source)
    searched = {}

    def batch_for(chosen):
        """The batch the realistic estimate runs with the terms ``chosen``: the bound's, capped by the engine when
        that term is on, and with latency limits the largest up to it that meets them realistically."""
        top = capped if "engine_batch_cap" in chosen else bound_batch
        if not limits:
            return top, None
        if top not in searched:
            found, _, why = _batch_for_limits(lambda b: under_load(b, chosen), fit=top,
                                              ttft=limits.get("ttft_target"), tpot=limits.get("tpot_target"))
            searched[top] = (found, why)
        return searched[top]

    binds = None
    if limits:
        found, binds = batch_for(terms)
        if found is None:
            add("realistic", "batch", "realistic operating batch", None,
                f"none: even batch 1 breaks the {binds} limit once the terms the bound leaves out are counted (the "
                f"bound's batch of {units.whole(bound_batch)} meets the limits only in the bound)", "plan._realistic")
            return None
        if found < min(bound_batch, capped if "engine_batch_cap" in terms else bound_batch):
            add("realistic", "batch", "realistic operating batch", found,
                f"{_sequences(found)}: the largest that meets the limits realistically (the bound's "
                f"{units.whole(bound_batch)} breaks {binds.split(' (')[0]})", "plan._realistic")
    batch = batch_for(terms)[0]

    def rate(chosen):
        b = batch_for(chosen)[0] or batch
        step = decode_at(b, chosen)
        if len_in is None:
            return step["tokens_per_s"], step
        seconds = busy(chosen, b) + len_out * step["t"] / (b * tau)
        return len_out / seconds * step["engine"], step

    value, step = rate(terms)
    what = "output tokens/s per GPU" + (" (prefill included)" if len_in is not None else "")
    source = "realistic.decode_step" + (" + realistic.prefill_time" if len_in is not None else "")
    add("realistic", "tokens_per_s_per_gpu", f"realistic {what}", value / n,
        f"{units.rate(value / n)}: {value / bound:.0%} of the bound's {units.rate(bound / n)}", source)
    add("realistic", "share_of_bound", "realistic / bound", value / bound, f"{value / bound:.0%}", source)
    latency = under_load(batch)
    if "ttft" in latency:
        add("realistic", "ttft_under_load", "realistic time to first token under load", latency["ttft"],
            f"{units.seconds(latency['ttft'])} at a batch of {units.whole(batch)} (the realistic step in flight, then "
            f"its prefill on its own GPUs, at least one read of their weights)", "plan.TTFT_UNDER_LOAD, realistic")
    add("realistic", "tpot_under_load", "realistic time per output token under load", latency["tpot"],
        f"{units.seconds(latency['tpot'])} at a batch of {units.whole(batch)}"
        + (" (the realistic step, plus the prompts prefilled meanwhile)" if len_in is not None else ""),
        "plan.TPOT_UNDER_LOAD, realistic" if len_in is not None else "realistic.decode_step")
    if binds:
        add("realistic", "binds", "what binds the realistic batch", binds, binds, "plan._realistic")
    pieces = step["pieces"]
    for term in realistic.TERMS:
        if term not in terms:
            add("realistic", f"term_{term}", f"off: {term}", None, realistic.TERM_TITLES[term] + " (switched off)",
                source)
            continue
        without, _ = rate(terms - {term})
        cost = 1 - value / without
        detail = ""
        if term == "imbalance" and model.is_moe:
            detail = f"; busiest device ×{pieces['imbalance'] * pieces['routing_skew']:.2f} the mean"
        elif term == "small_matmuls" and model.is_moe:
            detail = (f"; {pieces['tokens_per_expert']:.0f} tokens per expert, tiles {pieces['tile_efficiency']:.0%} "
                      f"full" + (", weights streamed at a small matmul's bandwidth"
                                 if pieces["small_matmul_reads"] else ""))
        elif term == "dp_prefill_wait" and value != without:
            factor = realistic.prefill_wait_factor(model, deployment, layout=decode.get("layout"), batch=batch,
                                                   len_out=len_out, tokens_per_step=tau, terms=terms)
            detail = (f"; the busiest rank prefills ×{factor:.1f} the mean prompts per step (prefill disaggregated "
                      f"from decode, as DeepSeek and SGLang serve, avoids it: --without dp_prefill_wait)")
        elif term == "communication":
            detail = (f"; all-to-all {units.seconds(pieces['a2a'])}, TP all-reduces "
                      f"{units.seconds(pieces['tp_all_reduce'])} per step"
                      + (f", pipeline hand-offs {units.seconds(pieces['pp_send'])} per cycle ({pp} stage boundaries,"
                         f" pipeline.T_SCALE_OUT_STAGE)" if pp > 1 else ""))
        elif term == "engine":
            generation = deployment.chip.generation
            own = generation.split()[0] in measurements.ENGINE_GENERATIONS
            detail = (f"; factor {step['engine']:.2f}, measured on Chapter 8's dense {generation} rows" if own else
                      f"; factor {step['engine']:.2f}, BORROWED: Chapter 8 has no comparable dense {generation} row, so "
                      f"it is the median over every dense row (NVIDIA's)")
        add("realistic", f"term_{term}", f"term: {term}", cost,
            f"costs {cost:.0%} — {realistic.TERM_TITLES[term]}{detail}", source)
    if model.is_moe:
        _against_rows(add, step, full_hbm=full_hbm)
    context_prefill = prefill_at(len_ctx, terms)
    return {"tokens_per_s": value, "share_of_bound": value / bound, "step": step, "batch": batch, "binds": binds,
            "prefill_context_seconds": context_prefill,
            "capped": capped if "engine_batch_cap" in terms and capped < bound_batch else None, **latency}


def _realistic_cost(add, real: dict, *, n: int, tau: float, price: float, len_ctx: float, bound_out, bound_in,
                    lengths: bool) -> None:
    """The cost lines at the realistic estimate, beside the bound's (:func:`roofline.cost_per_token`, the same
    COST_OF_STEP): output tokens at the realistic decode step and batch; input tokens at the realistic prefill of a
    context; and, with request lengths, every GPU-hour charged to output tokens at the realistic rate with prefill
    included (what a price per output token must cover when input tokens are not billed apart)."""
    step = real["step"]
    seconds = step["t"] / step["engine"]         # the engine factor: a share of the rate, so a stretch of the step
    out = roofline.cost_per_token(step_time=seconds, batch=real["batch"] * tau, n_chips=n,
                                  price_chip_hour=price) * PER_MILLION
    add("cost", "usd_per_million_output_realistic", "$ per million output tokens, REALISTIC", out,
        units.dollars(out) + (f" ({out / bound_out:.1f}× the bound's {units.dollars(bound_out)}; the realistic decode "
                              f"step at a batch of {units.whole(real['batch'])})" if bound_out else ""),
        "roofline.cost_per_token (COST_OF_STEP) at realistic.decode_step")
    t_in = real["prefill_context_seconds"] / step["engine"]
    cost_in = roofline.cost_per_token(step_time=t_in, batch=len_ctx, n_chips=n, price_chip_hour=price) * PER_MILLION
    add("cost", "usd_per_million_input_realistic", "$ per million input tokens, REALISTIC", cost_in,
        units.dollars(cost_in) + (f" ({cost_in / bound_in:.1f}× the bound's {units.dollars(bound_in)})"
                                  if bound_in else ""),
        "roofline.cost_per_token (COST_OF_STEP) with realistic.prefill_time")
    if lengths:
        all_in = roofline.cost_per_token(step_time=1.0, batch=real["tokens_per_s"], n_chips=n,
                                         price_chip_hour=price) * PER_MILLION
        add("cost", "usd_per_million_output_all_in_realistic",
            "$ per million output tokens, REALISTIC, prefill included", all_in,
            f"{units.dollars(all_in)} (every GPU-hour charged to output tokens at the realistic "
            f"{units.rate(real['tokens_per_s'])}, prompts' prefill included)",
            "roofline.cost_per_token (COST_OF_STEP): one second buys the realistic output tokens/s")


def _against_rows(add, step, *, full_hbm: float) -> None:
    """How the realistic estimate did on Chapter 8's published MoE figures (:func:`measurements.realistic_table`),
    and, where this plan is of a class it misses, why (:data:`measurements.REALISTIC_MISSES`)."""
    table = measurements.realistic_table()
    inside = [row for row in table if row["within"]]
    out = [row for row in table if not row["within"]]
    high = f"; it runs high (×{min(r['ratio'] for r in out):.1f}–{max(r['ratio'] for r in out):.1f}) on " + \
        ", ".join(f"{r['model']} on {r['hardware']}" for r in out) if out else ""
    add("realistic", "against_rows", "against Chapter 8's MoE rows", {"within": len(inside), "rows": len(table)},
        f"this estimate's method lands within ±{measurements.REALISTIC_TOLERANCE:.0%} of {len(inside)} of "
        f"{len(table)} published MoE figures{high} (measurements.REALISTIC_MISSES says why)",
        "measurements.realistic_table")
    held = step["bound"].get("weights_per_device")
    caveats = []
    if held and full_hbm <= 96e9 and held / full_hbm > 0.3:
        caveats.append(("memory_tight", (
            f"memory-tight: the weights take {held / full_hbm:.0%} of each GPU's {units.bytes_(full_hbm)}, and the "
            f"estimate gives all the rest (at the plan's HBM share) to KV and runs the largest batch that fits; an "
            f"engine's reserve beside the weights (activations, graphs, MoE workspaces) cuts that batch, and on Chapter "
            f"8's memory-tight H100 MoE rows the estimate ran 1.7–2.3× high (measurements.REALISTIC_MISSES)")))
    for key, text in caveats:
        add("realistic", f"caveat_{key}", "this plan is of a class the estimate misses", None, text,
            "measurements.REALISTIC_MISSES")


def _headline(result, *, chip, formats_why, weights, kv, compute, kv_given, binds, operating, serving, n, bound):
    """The plan's first lines: the request lengths (and whether they are a default), the formats with the KV's
    beside the weights' (and a format the chip lacks), the throughput bound beside the realistic estimate, and what
    binds the batch."""
    lengths = result.lengths
    if lengths["defaulted"]:
        said = (f"DEFAULT request lengths {units.whole(lengths['input'])} in / {units.whole(lengths['output'])} out "
                f"tokens (none given: --input-len and --output-len change them)")
    elif lengths["input"] is not None:
        said = f"requests of {units.whole(lengths['input'])} in / {units.whole(lengths['output'])} out tokens"
        mean = lengths["input"] + lengths["output"] / 2
        if lengths.get("context_given") and lengths["context"] != mean:   # the engineer's walk, finding 14
            said += (f"; decode context {units.tokens(lengths['context'])} as given (--context wins: these lengths' "
                     f"mean decode context would be {units.tokens(mean)})")
    else:
        said = (f"decode context {units.tokens(lengths['context'])} as given; no request lengths (--input-len and "
                f"--output-len add time to first token and request rates)")
    lines = [said]
    lacks = [part.strip() for part in formats_why.split(";") if "does not compute in" in part]
    released = PRESET_CHECKPOINTS.get(result.model.name)
    if released and released[3] is None and weights == "fp8" and not released[0].startswith("FP8") \
            and "weights in FP8 (the course's serving default" in formats_why:
        weights += f" (the release is {released[0]}: --weights {released[0].lower()} plans it as released)"
    lines.append(f"formats: weights {weights} · KV {kv}"
                 + ("" if kv_given else " (the planner's default, not read from the checkpoint or your engine: "
                                        "--kv fp8 if your engine stores an FP8 KV cache)")
                 + f" · matmuls {compute.upper()}" + (f" — {lacks[0]}" if lacks else ""))
    if operating:
        rate = serving if serving is not None else bound
        what = "output tokens/s" + (", prefill included" if serving is not None else "")
        whole = f"{units.whole(n)}-GPU deployment" if n > 1 else "deployment of 1 GPU"
        text = (f"throughput bound {units.rate(rate / n)} per GPU = {units.rate(rate)} per {whole} ({what}, batch "
                f"{units.whole(operating)} across the deployment)")
        if result.realistic is not None:
            real = result.realistic
            capped = real.get("capped")
            text += (f"; realistic {units.rate(real['tokens_per_s'] / n)} per GPU = {units.rate(real['tokens_per_s'])}"
                     f" per deployment ({real['share_of_bound']:.0%} of the bound"
                     + (f", at a batch of {units.whole(real['batch'])} that meets the limits realistically"
                        if real["batch"] != operating and (capped is None or real["batch"] < capped) else
                        f", at the engine's cap of {units.whole(real['batch'])} concurrent sequences (--max-seqs)"
                        if real["batch"] != operating else "") + ")")
            if any(row.key == "term_engine" and "BORROWED" in row.text for row in result.rows):
                text += (f" — LOOSE on {chip.name}: its engine factor is BORROWED from other chips' rows (Chapter 8 "
                         f"has no comparable dense row of its generation)")
        elif any(row.key == "batch" and row.section == "realistic" for row in result.rows):
            text += "; realistic: no batch meets the limits once the terms the bound leaves out are counted"
        if binds:
            text += f"; the bound's batch is bound by {binds}"
        lines.append(text)
    else:
        row = next((row for row in result.rows if row.key == "batch"), None)
        lines.append("no operating batch: " + (row.text if row is not None else "see Decode"))
    return lines


def _system_of(chip_name: str) -> str | None:
    """The first system preset built of ``chip_name``'s chips, if any."""
    return next((name for name in hardware.system_names() if hardware.get_system(name).chip.name == chip_name), None)


def _chip_words(text: str) -> str:
    """``text`` with "GPU" said as "chip" (for TPUs)."""
    return re.sub(r"\bGPU(s?)(?=\b|-)", r"chip\1", text)


def _communication(add, model, deployment, degrees, *, at, batch, tau, a2a_step) -> None:
    """The collectives a decode step needs and the bound leaves out: the step bound assumes they overlap the
    matmuls and weight reads entirely. TP: two all-reduces per layer of each replica's micro-batch
    (:func:`collectives.tp_all_reduce_time`, :data:`collectives.TP_ALL_REDUCE_PER_STEP_ALPHA_BETA`, BF16
    activations, NCCL's LL latencies on GPUs, about 1 µs per ICI hop on TPUs); EP: the all-to-all above
    (:func:`moe.a2a_layer_time`). The step if none of it overlapped is their sum with the bound."""
    chip, n = deployment.chip, deployment.n_chips
    tp_time, tp_text = 0.0, "none"
    if degrees is not None and degrees["tp"] > 1:
        tp, tpu = degrees["tp"], chip.name.upper().startswith("TPU")
        inside = tp <= deployment.chips_per_domain
        if tpu:
            base, hop = 0.0, collectives.TPU_ICI_HOP_LATENCY
        else:
            base, hop = collectives.nccl_latency("nvlink" if inside else "network")
        tokens = batch * tau / (degrees["pp"] * degrees["dp"])
        tp_time = collectives.tp_all_reduce_time(
            model, tp=tp, batch_tokens=tokens, bytes_per_value=models.BYTES_PER_VALUE["bf16"],
            link_bandwidth=chip.scale_up_bandwidth if inside else chip.scale_out_bandwidth, hop_latency=hop,
            base_latency=base)
        tp_text = (f"{units.seconds(tp_time)} (2 per layer over TP {tp}, {units.whole(tokens)} tokens per replica, "
                   f"{'ICI' if tpu else scale_up_link_name(chip) if inside else 'the network'})")
    add("decode", "tp_all_reduce", "TP all-reduces per step (not in the step bound)", tp_time, tp_text,
        "collectives.tp_all_reduce_time (TP_ALL_REDUCE_PER_STEP_ALPHA_BETA)")
    extra = tp_time + a2a_step
    serial = at["t"] + extra
    add("decode", "step_time_if_not_overlapped", "step time if communication does not overlap", serial,
        (f"{units.seconds(serial)}: {extra / at['t']:.0%} more than the step bound, which assumes that the "
         + " and the ".join(part for part, time in (("TP all-reduces", tp_time), ("EP all-to-all", a2a_step)) if time)
         + (" hide" if tp_time and a2a_step else " hides") + " entirely behind compute and memory")
        if extra else f"{units.seconds(serial)}: no collectives to add", "step bound + TP all-reduce + EP all-to-all")


def _sequences(count: float) -> str:
    """``count`` sequences as words: "1 sequence", "1,013 sequences"."""
    return units.whole(count) + (" sequence" if units.whole(count) == "1" else " sequences")


def _fmt(value, named=None) -> str:
    """A format as the plan prints it: its name, or a named format with scales and its bytes, or the bytes."""
    if named is not None and len(named) == 1:   # a format a config states, by name (hf_config.format_label)
        return named[0] if float(value).is_integer() else f"{named[0]}: {value:.3g} bytes per parameter on average"
    if named is not None:
        return f"{named[0]} ({_per_value(value)})"
    return value if isinstance(value, str) else _per_value(value)


def _per_value(value: float) -> str:
    """Bytes per value as a reader checks them: 0.53125 -> "4.25 bits (0.531 bytes)"; whole bytes stay bytes."""
    if float(value).is_integer():
        return f"{value:g} bytes"
    return f"{value * 8:.4g} bits ({value:.3g} bytes)"


def _band(add, kind: str, key: str, what: str, bound: float, *, model, regime: str, fraction: float, chip) -> None:
    """The reality band from Chapter 8's rows of this plan's class (:func:`measurements.reality_band`)."""
    vendor = measurements._vendor(chip)
    band = measurements.reality_band(kind=kind, moe=model.is_moe, regime=regime, hbm_fraction=fraction,
                                     vendor=vendor)
    source = f"measurements.reality_band(kind={kind!r}, moe={model.is_moe}, regime={regime!r}, vendor={vendor!r})"
    if band["borrowed"]:
        add("reality", f"{key}_borrowed", f"{kind} rows: BORROWED from other vendors", band["borrowed"],
            band["borrowed"], source)
    if band.get("skipped"):   # reference rows that do not fit at the plan's --memory-utilization: left out, said
        skipped = band["skipped"]
        add("reality", f"{key}_skipped", f"{kind} rows left out at this HBM share", skipped,
            f"{len(skipped)} of Chapter 8's rows no longer fit at {fraction:.0%} of their GPUs' HBM (--memory-utilization"
            f"), so they are not in the band: {', '.join(skipped[:6])}{', …' if len(skipped) > 6 else ''}", source)
    if not band["n"]:
        add("reality", f"{key}_band", f"{kind} rows: share of the bound reached", band,
            f"no band: {band['widened']}", source)
        return
    caveat = f"; {band['widened']}" if band["widened"] else ""
    rows_of = (f"{band['class']} {kind} rows" if not band["widened"]      # a widened band is not of the plan's class
               else f"{kind} rows, widened from {band['class']}")
    add("reality", f"{key}_band", f"{rows_of}: share of the bound", band,
        f"measured systems reach {band['low']:.0%}–{band['high']:.0%} of their bound; median {band['median']:.0%} "
        f"({band['n']} rows{caveat}; a guide, not a forecast)", source)
    add("reality", f"{key}_rows", "rows behind that band", band["keys"], ", ".join(band["keys"]), source)
    add("reality", f"{key}_expected", f"{what}: what that band suggests",
        {k: bound * band[k] for k in ("low", "median", "high")},
        f"{units.rate(bound * band['low'])} to {units.rate(bound * band['high'])}, median "
        f"{units.rate(bound * band['median'])} (bound {units.rate(bound)})",
        "bound × reality_band")


_LIMIT_WORDS = {"ttft": "time to first token", "tpot": "time per output token"}


def _batch_for_limits(under_load, *, fit: float, ttft, tpot) -> tuple:
    """The largest whole batch that fits and whose time to first token and time per output token under load
    (``under_load(b)``, both rising with the batch) meet ``ttft`` and ``tpot`` (seconds; None: no limit).
    Returns ``(batch or None, why, what binds)``: "memory" when the largest batch that fits meets both, else the
    limit the next batch would break."""
    wanted = {key: value for key, value in (("ttft", ttft), ("tpot", tpot)) if value is not None}

    def broken(b):
        got = under_load(b)
        return [key for key, limit in wanted.items() if got[key] > limit]

    if fit < 1:
        return None, "the weights, or one sequence's KV, do not fit", "memory"
    largest = min(math.floor(fit), MAX_BATCH)
    first = broken(1)
    if first:
        names = " and ".join(_LIMIT_WORDS[key] for key in first)
        return None, f"even batch 1 breaks the {names} limit", " and ".join(_LIMIT_WORDS[key] for key in first)
    if not broken(largest):
        return largest, "largest that fits; it meets every limit", "memory (the largest batch that fits)"
    low, high = 1, largest            # low meets every limit, high does not
    while high - low > 1:
        middle = (low + high) // 2
        if broken(middle):
            high = middle
        else:
            low = middle
    names = " and ".join(_LIMIT_WORDS[key] for key in broken(high))
    return low, "largest that meets every limit", f"the {names} limit (one more sequence breaks it)"


def _operating_batch(step, *, fit: float, batch, latency_target) -> tuple[float | None, str]:
    """The batch the plan runs at, and why (see :func:`plan`)."""
    if fit < 1:
        return None, "the weights, or one sequence's KV, do not fit"
    if batch is not None:
        if batch > fit:   # no throughput or price for a batch that does not fit (issue 30)
            return None, (f"the given batch of {units.whole(batch)} does not fit: at most "
                          f"{units.whole(math.floor(fit))} at this context")
        return batch, "as given"
    largest = min(math.floor(fit), MAX_BATCH)
    if latency_target is None:
        return largest, "largest that fits"
    if step(1)["t"] > latency_target:
        return None, "the target is below the latency floor"
    if step(largest)["t"] <= latency_target:
        return largest, "largest that fits; it meets the target"
    # step(low) meets the target, step(high) does not, and the step time rises with B. Guess where the line
    # through the two ends crosses the target (the bound is piecewise linear in B, so this lands within a
    # step or two), and bisect whenever a guess fails to halve the bracket.
    low, high = 1, largest
    t_low, t_high = step(low)["t"], step(high)["t"]
    halve = False
    while high - low > 1:
        if halve:
            middle = (low + high) // 2
        else:
            guess = low + (latency_target - t_low) * (high - low) / (t_high - t_low)
            middle = min(high - 1, max(low + 1, math.floor(guess)))
        width = high - low
        t_middle = step(middle)["t"]
        if t_middle <= latency_target:
            low, t_low = middle, t_middle
        else:
            high, t_high = middle, t_middle
        halve = not halve and (high - low) * 2 > width
    return low, "largest whose step bound meets the target"


# --- command line -------------------------------------------------------------------------------------

class _Parser(argparse.ArgumentParser):
    def error(self, message):   # one line on stderr, exit code 2 (argparse's code)
        hint = ""
        if "unrecognized arguments" in message:   # "TPU v5e" typed without quotes arrives as two words
            hint = (" (a name with spaces needs quotes: e.g. \"TPU v5e\" or 'HGX H100')")
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())}{hint}\n")


#: The flag behind each of plan()'s parameters, so an error names what the user typed.
FLAGS = {"price_per_gpu_hour": "--price", "len_ctx": "--context", "latency_target": "--latency-ms",
         "batch": "--batch", "n_chips": "--gpus", "n_systems": "--systems", "weight_dtype": "--weights",
         "expert_weight_dtype": "--expert-weights", "kv_dtype": "--kv", "compute_dtype": "--compute",
         "expert_compute_dtype": "--compute", "attention_dtype": "--attention", "tokens_per_step": "--tokens-per-step",
         "len_in": "--input-len", "len_out": "--output-len", "hit_rate": "--hit-rate",
         "memory_utilization": "--memory-utilization", "tp": "--tp", "pp": "--pp", "ep": "--ep",
         "ttft_target": "--ttft-ms", "tpot_target": "--tpot-ms", "scenario": "--scenario",
         "realistic_terms": "--without", "layout": "--layout", "max_seqs_per_instance": "--max-seqs"}
_PARAMETER = re.compile(r"(?<![\w'-])(" + "|".join(sorted(FLAGS, key=len, reverse=True)) + r")(?![\w'-])")
#: plan()'s positional parameters, as the command line's usage line names them (at the start of a message).
_POSITIONAL = re.compile(r"(?<![\w'-])(model|system)(?= must\b)|^(name)(?= must\b)")
#: Flags given in milliseconds: plan() takes those limits in seconds, so a unit it states is the flag's instead.
_MS_FLAGS = ("--ttft-ms", "--tpot-ms", "--latency-ms")


def flag_message(message: str) -> str:
    """``message`` on one line with plan()'s parameter names replaced by the flags that set them."""
    if not isinstance(message, str):
        raise ValueError(f"message must be a str, got {validate._describe(message)}")
    message = re.sub(r"\bgot (-?\d+)\.0\b", r"got \1", " ".join(str(message).split()))   # as typed: -1, not -1.0
    message = _POSITIONAL.sub(lambda match: "--name" if match.group(2) else match.group(1).upper(), message)
    message = _PARAMETER.sub(lambda match: FLAGS[match.group(1)], message)
    if any(flag in message for flag in _MS_FLAGS):   # the engineer's walk, finding 12: "(seconds)" for ms flags
        message = message.replace("(seconds)", "(milliseconds)")
    return message


def scale_up_link_name(chip) -> str:
    """What a chip's scale-up links are called: NVLink on NVIDIA's GPUs, Infinity Fabric (xGMI) on AMD's
    Instinct parts, ICI on TPUs, "the scale-up links" for a chip described by hand."""
    from lecture_lib import hardware

    if not isinstance(chip, hardware.Chip):
        raise ValueError(f"chip must be a hardware.Chip (hardware.get('H100')), got {validate._describe(chip)}")
    name = chip.name
    if name.startswith("MI"):
        return "Infinity Fabric"
    if name.upper().startswith("TPU"):
        return "ICI"
    return "NVLink" if getattr(chip, "generation", "") in NVIDIA_GENERATIONS else "the scale-up links"


NVIDIA_GENERATIONS = ("Ampere", "Hopper", "Blackwell", "Blackwell Ultra", "Rubin", "Rubin Ultra")


def _number(flag: str, kind=float, *, minimum=None):
    """An argparse type: a number for ``flag``, refused in one line (too large, not a number)."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} must be a {'whole ' if kind is int else ''}number, "
                                             f"got {text!r}") from None
        if kind is int and value > MAX_GPUS:
            raise argparse.ArgumentTypeError(f"{flag} is too large: at most {MAX_GPUS:,}, got {text[:20]}"
                                             f"{'…' if len(text) > 20 else ''}")
        if kind is float and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{flag} must be a finite number, got {text!r}")
        if minimum is not None and value < minimum:
            raise argparse.ArgumentTypeError(f"{flag} must be at least {minimum}, got {text!r}")
        return value
    return parse


def _format(flag: str):
    def parse(text: str):
        try:
            number = float(text)
        except ValueError:
            pass
        else:
            try:
                return models._bytes_per(flag, number)
            except ValueError as error:
                raise argparse.ArgumentTypeError(str(error)) from None
        try:
            value = format_name(text, flag)
            return text if quantized_format(text) is not None else value   # plan() names it and picks its compute
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
    return parse


def _whole(flag: str):
    """An argparse type: a whole number of tokens for ``flag`` (``1e3`` is 1000; ``2.5`` is refused)."""
    def parse(text: str):
        value = _number(flag)(text)
        if not float(value).is_integer() or value < 1:
            raise argparse.ArgumentTypeError(f"{flag} must be a whole number of tokens (at least 1), got {text!r}")
        return value
    return parse


def _tflops(text: str) -> dict:
    """--tflops "bf16=1307.4,fp8=2614.9": dense TFLOP/s per format."""
    out = {}
    for part in text.replace(" ", "").split(","):
        fmt, _, value = part.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if fmt.lower() not in models.BYTES_PER_VALUE or not math.isfinite(number) or number <= 0:
            raise argparse.ArgumentTypeError(f"--tflops must be FORMAT=TFLOPS pairs separated by commas, formats among "
                                             f"{sorted(models.BYTES_PER_VALUE)} (e.g. bf16=1307.4,fp8=2614.9), got "
                                             f"{text!r}")
        out[fmt.lower()] = number
    return out


_CHIP_FLAGS = {"hbm_gb": ("hbm_capacity", 1e9), "hbm_tbs": ("hbm_bandwidth", 1e12), "scale_up": ("scale_up_domain", 1),
               "scale_up_gbs": ("scale_up_bandwidth", 1e9), "scale_out_gbs": ("scale_out_bandwidth", 1e9)}


def _custom_system(args):
    """SYSTEM as the command line gives it: a chip JSON file, a custom chip from the chip flags (a chip preset named
    as SYSTEM is their base), or the preset name itself."""
    given = {field: getattr(args, flag) * scale if field != "scale_up_domain" else getattr(args, flag)
             for flag, (field, scale) in _CHIP_FLAGS.items() if getattr(args, flag) is not None}
    if args.tflops is not None:
        given["flops"] = {fmt: value * 1e12 for fmt, value in args.tflops.items()}
    if args.system.lower().endswith(".json"):
        if given:
            raise ValueError("give a chip JSON file or the chip flags (--hbm-gb, --tflops, ...), not both")
        return hardware.chip_from_json(args.system)
    if not given:
        return args.system
    try:
        base = hardware.get(args.system)
    except KeyError:
        base = None
    try:
        return hardware.custom_chip(name=args.system if base is None else f"{base.name} (custom)", base=base, **given)
    except ValueError as error:
        names = {"hbm_capacity": "--hbm-gb", "hbm_bandwidth": "--hbm-tbs", "flops": "--tflops",
                 "scale_up_domain": "--scale-up", "scale_up_bandwidth": "--scale-up-gbs",
                 "scale_out_bandwidth": "--scale-out-gbs",
                 # the engineer's walk, finding 13: the command line starts from a preset by naming it as SYSTEM
                 r"give base=a preset name to start from": "name a chip preset as SYSTEM to start from its numbers, "
                                                           "e.g. MI300X --hbm-gb 256",
                 r"^name must": "SYSTEM must"}
        raise ValueError(re.sub("|".join(names), lambda match: names[next(key for key in names if re.fullmatch(
            key, match.group(0)))], str(error))) from None


def _contexts(text: str) -> list:
    parts = text.replace(" ", "").split(",")
    if any(not part for part in parts):
        raise argparse.ArgumentTypeError(f"--sweep-context must be tokens separated by single commas (e.g. "
                                         f"1024,8192,65536), got {text!r}: an empty entry")
    try:
        values = [float(part) for part in parts]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--sweep-context must be tokens separated by commas (e.g. "
                                         f"1024,8192,65536), got {text!r}") from None
    if not values or len(values) > 64 or not all(math.isfinite(v) and v >= 1 for v in values):
        raise argparse.ArgumentTypeError(f"--sweep-context must list 1 to 64 context lengths of at least 1 token, "
                                         f"got {text!r}")
    return values


_LENGTHS = """lengths:
  --context       tokens each sequence holds in its KV cache while it decodes (what decode reads every step,
                  and what the prefill rows compute).
  --input-len     a request's prompt tokens: prefilled once, giving the time to first token.
  --output-len    a request's generated tokens: decoded one step at a time (or --tokens-per-step at a time).
  With --input-len and --output-len, --context defaults to their mean decode context, input + output / 2, and
  the plan adds time to first token, end-to-end latency and output tokens/s with prefill included. With neither
  lengths nor --context the plan takes 1,000 in and 1,000 out, and its first line says they are the default.
limits (--scenario server):
  --ttft-ms       time to first token under load: the step in flight, then the prompt's own prefill.
  --tpot-ms       time per output token under load: the step, plus its share of the prompts prefilled meanwhile.
  The plan runs the largest batch that meets both and says which binds (or memory, when the largest that fits does).
a chip JSON file (SYSTEM ending in .json): {"name": "...", "base": "MI300X", "hbm_gb": 256, "hbm_tb_s": 6,
  "tflops": {"bf16": 1307.4, "fp8": 2614.9}, "scale_up": 8, "scale_up_gb_s": 448, "scale_out_gb_s": 50}
  (dense TFLOP/s; bandwidths per chip, one direction; what is left out comes from "base", else a default said so).
formats (--weights, --expert-weights, --kv, --compute, --attention), case-insensitive:
  """ + ", ".join(sorted(models.BYTES_PER_VALUE)) + """ (also bfloat16, float16, float8), or bytes per value.
  Stored formats with their scales (--weights, --expert-weights; bytes as a config's quantization_config gives
  them): """ + ", ".join(f"{key} ({quantized_format(key)[1]:.5g})" for key in sorted(QUANTIZED_FORMATS)) + """;
  int4 is AWQ/GPTQ in groups of 128 (int4-g64 for groups of 64, int4-g-1 for GPTQ's one group per column;
  awq and gptq name it too).
  --compute and --attention must be formats the chip computes in.
  Without --weights a plan uses the format the config states, else FP8, else the chip's best (A100, TPUs: BF16)."""


def main(argv=None) -> int:
    """``python -m lecture_lib.plan MODEL SYSTEM --price USD --context TOKENS [...]``: print a plan."""
    parser = _Parser(prog="python -m lecture_lib.plan", formatter_class=argparse.RawDescriptionHelpFormatter,
                     description="Plan an LLM deployment with the course's bounds (text table, or --json).",
                     epilog=_LENGTHS)
    parser.add_argument("model", help=f"a model preset name ({', '.join(models.names())}), a model with a preset's "
                                      f"shapes ({', '.join(models.SAME_ARCHITECTURE)}), a Hugging Face config.json, "
                                      f"or the folder holding one (no network: a Hub id like org/name is refused with "
                                      f"how to download its config.json)")
    parser.add_argument("system", help="a system preset (e.g. 'HGX H100') or a chip name with --gpus")
    parser.add_argument("--price", type=_number("--price"),
                        help="USD per GPU-hour (optional: without it, no cost lines)")
    parser.add_argument("--scenario", choices=SCENARIOS,
                        help="offline: the largest throughput that fits; server: the largest that meets --ttft-ms and "
                             "--tpot-ms (default: server when a limit is given, else offline)")
    parser.add_argument("--ttft-ms", type=_number("--ttft-ms"),
                        help="limit on the time to first token under load, milliseconds (p99 limits are stricter "
                             "than the mean this bounds)")
    parser.add_argument("--tpot-ms", type=_number("--tpot-ms"),
                        help="limit on the time per output token under load, milliseconds")
    parser.add_argument("--without", action="append", choices=realistic.TERMS, default=[], metavar="TERM",
                        help="switch a term of the realistic estimate off (repeatable): " + ", ".join(realistic.TERMS))
    parser.add_argument("--max-seqs", type=_number("--max-seqs", int, minimum=1), metavar="N",
                        help=f"concurrent sequences one engine instance (a DP replica or DP-attention rank) schedules, "
                             f"for the realistic estimate (default {realistic.ENGINE_MAX_SEQS['TensorRT-LLM']}, "
                             f"TensorRT-LLM's max_batch_size; vLLM's max_num_seqs is "
                             f"{realistic.ENGINE_MAX_SEQS['vLLM']} on 80 GB-class GPUs; --without engine_batch_cap "
                             f"lifts it)")
    parser.add_argument("--context", type=_number("--context"),
                        help="tokens of context per sequence while decoding (see 'lengths' below)")
    parser.add_argument("--input-len", type=_whole("--input-len"), help="prompt tokens per request")
    parser.add_argument("--output-len", type=_whole("--output-len"), help="generated tokens per request")
    parser.add_argument("--sweep-context", type=_contexts, metavar="T1,T2,...",
                        help="also print a table over these context lengths")
    parser.add_argument("--latency-ms", type=_number("--latency-ms"),
                        help="target milliseconds for one decode step alone (the bound's time per token with no "
                             "prompts arriving); for time per output token under load, with prefill, use --tpot-ms")
    parser.add_argument("--batch", type=_number("--batch"), help="a fixed operating batch instead of a target")
    parser.add_argument("--gpus", type=_number("--gpus", int), help="how many chips, when SYSTEM names a chip")
    chip = parser.add_argument_group("a chip the presets lack (SYSTEM is then its name, or a chip preset to start "
                                     "from; SYSTEM may also be a chip JSON file, see hardware.chip_from_json)")
    chip.add_argument("--hbm-gb", type=_number("--hbm-gb", minimum=0.001), help="HBM capacity per chip, GB")
    chip.add_argument("--hbm-tbs", type=_number("--hbm-tbs", minimum=0.001), help="HBM bandwidth per chip, TB/s")
    chip.add_argument("--tflops", type=_tflops, metavar="FMT=TFLOPS,...",
                      help="dense peak TFLOP/s per format, e.g. bf16=1307.4,fp8=2614.9 (halve 'with sparsity' figures)")
    chip.add_argument("--scale-up", type=_number("--scale-up", int), help="chips in one scale-up domain (NVLink, "
                                                                         "Infinity Fabric)")
    chip.add_argument("--scale-up-gbs", type=_number("--scale-up-gbs", minimum=0.001),
                      help="scale-up bandwidth per chip, one direction, GB/s")
    chip.add_argument("--scale-out-gbs", type=_number("--scale-out-gbs", minimum=0.001),
                      help="network bandwidth per chip, one direction, GB/s")
    parser.add_argument("--systems", type=_number("--systems", int), default=1,
                        help="how many copies of SYSTEM (default 1)")
    parser.add_argument("--tp", type=_number("--tp", int), help="tensor-parallel degree (DP is what remains)")
    parser.add_argument("--pp", type=_number("--pp", int), help="pipeline-parallel degree (stages)")
    parser.add_argument("--ep", type=_number("--ep", int),
                        help="expert-parallel degree (MoE models); below the GPU count, each expert is also split by "
                             "TP over the rest (TensorRT-LLM's min-latency layout, e.g. TP 8 with EP 2)")
    parser.add_argument("--weights", type=_format("--weights"),
                        help="weight format (default: the config's; a preset released below 16 bits, e.g. "
                             "gpt-oss-120b's MXFP4, in its release format; else fp8, else the chip's best)")
    parser.add_argument("--expert-weights", type=_format("--expert-weights"), help="routed-expert weight format")
    parser.add_argument("--kv", type=_format("--kv"), help="KV-cache format (default bf16; printed beside the "
                                                              "weights' in the plan's second line)")
    parser.add_argument("--compute", type=_format("--compute"),
                        help="compute format (default: the weight format if the chip has it, else its best)")
    parser.add_argument("--attention", type=_format("--attention"),
                        help="attention's compute format (default: the compute format)")
    parser.add_argument("--tokens-per-step", type=_number("--tokens-per-step", minimum=1), default=1.0,
                        help="accepted tokens per decode step with speculative decoding or MTP (default 1)")
    parser.add_argument("--hit-rate", type=_number("--hit-rate", minimum=0), default=0.0,
                        help="prefix-cache hit rate: the share of input tokens already cached (default 0)")
    parser.add_argument("--memory-utilization", type=_number("--memory-utilization"), default=MEMORY_UTILIZATION,
                        help=f"share of each GPU's HBM for weights and KV (default {MEMORY_UTILIZATION}, like vLLM's "
                             f"gpu_memory_utilization); the rest is kept for activations and graphs")
    parser.add_argument("--layout", choices=["auto", "pooled"] + sorted(roofline.LAYOUTS), default="auto",
                        help="headline layout without --tp/--pp/--ep (default auto: dp_ep for an MoE model on "
                             "several GPUs, else tp)")
    parser.add_argument("--name", help="the plan's title (default: the config's _name_or_path or its folder)")
    parser.add_argument("--json", action="store_true", help="print strict JSON instead of a table")
    args = parser.parse_args(argv)
    if (args.input_len is None) != (args.output_len is None):
        parser.error("--input-len and --output-len go together")
    for flag in ("latency_ms", "ttft_ms", "tpot_ms"):
        value = getattr(args, flag)
        if value is not None and not 0 < value <= 1e7:   # milliseconds: plan() checks seconds, up to 10,000
            parser.error(f"--{flag.replace('_', '-')} must be > 0 and at most 10,000,000 ms, got {value:g}")
    try:
        system = _custom_system(args)
    except ValueError as error:
        parser.error(str(error))
    kwargs = dict(price_per_gpu_hour=args.price, scenario=args.scenario,
                  ttft_target=None if args.ttft_ms is None else args.ttft_ms / 1e3,
                  tpot_target=None if args.tpot_ms is None else args.tpot_ms / 1e3,
                  realistic_terms=[term for term in realistic.TERMS if term not in args.without],
                  max_seqs_per_instance=args.max_seqs,
                  latency_target=None if args.latency_ms is None else args.latency_ms / 1e3, batch=args.batch,
                  n_systems=args.systems, n_chips=args.gpus, weight_dtype=args.weights,
                  expert_weight_dtype=args.expert_weights, kv_dtype=args.kv, compute_dtype=args.compute,
                  layout=None if args.layout == "pooled" else args.layout, attention_dtype=args.attention,
                  tokens_per_step=args.tokens_per_step, tp=args.tp, pp=args.pp, ep=args.ep, len_in=args.input_len,
                  len_out=args.output_len, hit_rate=args.hit_rate, memory_utilization=args.memory_utilization,
                  name=args.name)
    try:
        result = plan(args.model, system, len_ctx=args.context, **kwargs)
        sweep = [] if not args.sweep_context else [
            (context, plan(args.model, system, len_ctx=context, **kwargs)) for context in args.sweep_context]
    except (ValueError, KeyError) as error:
        message = str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)
        print(f"{parser.prog}: error: {flag_message(message)}", file=sys.stderr)
        return 2
    if args.json:
        out = result.to_dict()
        if sweep:
            out["sweep_context"] = [_sweep_row(context, swept) for context, swept in sweep]
        text = json.dumps(out, indent=2, ensure_ascii=False, allow_nan=False)
    else:
        text = result.text() + ("\n\n" + _sweep_table(sweep) if sweep else "")
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:   # `| head` closed the pipe: stop quietly, and keep Python's exit flush quiet too
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def _sweep_row(context: float, swept: Plan) -> dict:
    decode, cost = swept.numbers["decode"], swept.numbers["cost"]
    limit = swept.numbers["inputs"].get("context_warning")
    row = {"context": context, "past_max_position_embeddings": bool(limit), "largest_batch": decode.get("fit_limit"), "batch": decode.get("batch"),
           "step_time": decode.get("step_time"), "tokens_per_s_per_gpu": decode.get("tokens_per_s_per_gpu"),
           "tokens_per_s_per_user": decode.get("tokens_per_s_per_user"),
           "usd_per_million_output": cost.get("usd_per_million_output"),
           "usd_per_million_output_realistic": cost.get("usd_per_million_output_realistic")}
    return _plain(row)[0]


def _sweep_table(sweep) -> str:
    """The --sweep-context table: one line per context length."""
    priced = any(swept.numbers["inputs"].get("price_per_gpu_hour") is not None for _, swept in sweep)
    head = ("context", "batch", "step", "tok/s per GPU", "tok/s per user") + (
        ("$/M out (bound)", "$/M out (realistic)") if priced else ())
    lines = []
    for context, swept in sweep:
        row = _sweep_row(context, swept)
        have = row["batch"] is not None
        cost = tuple(units.dollars(row[key]) if have and row[key] is not None else "-"
                     for key in ("usd_per_million_output", "usd_per_million_output_realistic"))
        lines.append((units.tokens(context) + (" (past the model's limit)" if row["past_max_position_embeddings"]
                                               else ""), units.whole(row["batch"]) if have else "none (does not fit)",
                      units.seconds(row["step_time"]) if have else "-",
                      units.rate(row["tokens_per_s_per_gpu"]) if have else "-",
                      units.rate(row["tokens_per_s_per_user"]) if have else "-") + (cost if priced else ()))
    widths = [max(len(head[i]), *(len(line[i]) for line in lines)) for i in range(len(head))]
    out = ["Sweep over context (--sweep-context; every other input as above)",
           "  " + "  ".join(h.ljust(w) for h, w in zip(head, widths))]
    out += ["  " + "  ".join(cell.ljust(w) for cell, w in zip(line, widths)) for line in lines]
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
