"""Chapter 9: plan a deployment with everything chapters 1-8 taught, and see how far real systems land from it.

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
import html
import json
import math
import os
import sys
from dataclasses import dataclass, field

from . import (collectives, hardware, hf_config, measurements, models, moe, pipeline, pipeline_memory, roofline, units,
               validate)

#: Sections of a plan, in the order they are printed.
SECTIONS = ("inputs", "capacity", "decode", "prefill", "cost", "layouts", "reality")
TITLES = {"inputs": "Inputs", "capacity": "Capacity (per layout)", "decode": "Decode (bound)",
          "prefill": "Prefill (bound)", "cost": "Cost (bound)", "layouts": "Layouts compared",
          "reality": "Reality (Chapter 8's dataset)"}
#: Where each section's numbers come from (the notebook links these chapters).
CHAPTERS = {"capacity": "Chapters 1, 4 and 8", "decode": "Chapters 1 and 8", "prefill": "Chapter 8",
            "cost": "Chapter 1", "layouts": "Chapters 2, 3 and 4", "reality": "Chapter 8"}
MAX_BATCH = 10**9   # the operating-batch search stops here (a bound past a billion sequences says nothing)
PER_MILLION = 1e6


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
    decode_settings: dict = field(default_factory=dict)     # what the headline decode figures were computed with

    def decode_step(self, batch: float) -> dict:
        """``roofline.decode_bound`` at ``batch`` with exactly the plan's layout, formats and context:
        the curve a chart of this plan draws passes through its headline numbers."""
        return roofline.decode_bound(self.model, self.deployment, batch=batch, **self.decode_settings)

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
        """Every row as ``{"label", "value", "text", "source"}``, grouped by section, in order."""
        return {name: {row.key: {"label": row.label, "value": _plain(row.value), "text": row.text,
                                 "source": row.source} for row in self.section(name)} for name in SECTIONS}

    def to_json(self, indent: int = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def text(self) -> str:
        """The plan as a plain-text table, one block per section."""
        width = max(len(row.label) for row in self.rows)
        lines = [f"Plan: {self.model.name} on {self.deployment.name}"]
        for name in SECTIONS:
            rows = self.section(name)
            if not rows:
                continue
            lines += ["", TITLES[name] + (f"  [{CHAPTERS[name]}]" if name in CHAPTERS else ""),
                      "-" * (width + 40)]
            lines += [f"  {row.label.ljust(width)}  {row.text}" for row in rows]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        parts = [f"<b>Plan: {html.escape(self.model.name)} on {html.escape(self.deployment.name)}</b>",
                 "<table style='font-size:13px;border-collapse:collapse'>"]
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


def _plain(value):
    """A JSON-ready value: floats stay floats (inf as the string "inf"), everything else as it is."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if hasattr(value, "item"):
        return value.item()
    return value


# --- inputs -----------------------------------------------------------------------------------------

def resolve_model(model):
    """``model`` as a :class:`models.Model`: the object, a preset name, or a Hugging Face config.json
    (a path to one, or its parsed dict: :func:`hf_config.from_hf_config`, which checks every field)."""
    if isinstance(model, models.Model):
        return model
    if isinstance(model, dict) or isinstance(model, os.PathLike) or (
            isinstance(model, str) and (model.endswith(".json") or os.sep in model)):
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
        raise ValueError(f"model must be a models preset name ({', '.join(models.names())}) or a path to a "
                         f"config.json, got {model!r}") from None


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
    if chosen.attention_tp is None:
        return "TP"
    if chosen.attention_tp == 1:
        return "DP replicas" if dense else "DP-attention + EP"
    return f"TP{chosen.attention_tp} per domain + DP" + ("" if dense else ", EP")


def _layouts_for(deployment) -> dict:
    """The layouts a plan compares: ``{"tp", "dp_ep"}``, plus TP inside each scale-up domain with data
    parallelism across domains when there are several (``roofline.Layout(attention_tp=chips_per_domain)``)."""
    out = {"tp": roofline.LAYOUTS["tp"], "dp_ep": roofline.LAYOUTS["dp_ep"]}
    if deployment.n_domains > 1:
        out["tp_domain"] = roofline.Layout(attention_tp=deployment.chips_per_domain)
    return out


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


def plan(model, system, *, price_per_gpu_hour, len_ctx, latency_target=None, batch=None, n_systems: int = 1,
         n_chips: int | None = None, weight_dtype="fp8", expert_weight_dtype=None, kv_dtype="bf16",
         compute_dtype: str | None = None, expert_compute_dtype: str | None = None, layout="auto",
         attention_dtype: str | None = None, tokens_per_step: float = 1.0) -> Plan:
    """Plan serving ``model`` on ``system``: capacity, decode, prefill, cost, layouts and the reality band.

    - ``model``: a preset name (``models.names()``), a path to a Hugging Face ``config.json`` (or its dict),
      or a :class:`models.Model`.
    - ``system``: a ``hardware.System`` preset name or object, times ``n_systems``; or a chip name or
      object with ``n_chips`` (default 1), split into whole scale-up domains (:func:`collectives.deployment`).
    - ``price_per_gpu_hour``: USD per GPU-hour. ``len_ctx``: tokens of context per sequence (decode reads
      its KV; prefill computes it).
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

    Bad input is a ``ValueError`` naming the parameter.
    """
    model = resolve_model(model)
    deployment = resolve_deployment(system, n_systems=n_systems, n_chips=n_chips)
    price = validate.scalar("price_per_gpu_hour", price_per_gpu_hour, maximum=1e6)
    len_ctx = validate.scalar("len_ctx", len_ctx, maximum=validate.COUNT_LIMIT)
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
    auto = isinstance(layout, str) and layout == "auto"
    chosen = roofline.resolve_layout(auto_layout(model, deployment) if auto else layout)
    bytes_w, bytes_e, compute = _formats(model, deployment, weight_dtype, expert_weight_dtype, kv_dtype,
                                         compute_dtype, expert_compute_dtype)
    expert_compute = expert_compute_dtype
    chip, n = deployment.chip, deployment.n_chips
    result = Plan(model, deployment)
    add = result.add

    # Inputs -------------------------------------------------------------------------------------
    add("inputs", "model", "model", model.name,
        f"{model.name}: {units.count(model.params_total)} params, {units.count(model.params_active)} active",
        "models.Model.params_total, params_active")
    add("inputs", "deployment", "hardware", deployment.name,
        f"{n} x {chip.name} ({deployment.n_domains} scale-up domain{'s' if deployment.n_domains > 1 else ''} "
        f"of {deployment.chips_per_domain})", "collectives.deployment")
    add("inputs", "n_chips", "GPUs", n, units.whole(n), "collectives.Deployment.n_chips")
    add("inputs", "price_per_gpu_hour", "price per GPU-hour", price, units.dollars(price))
    add("inputs", "len_ctx", "context per sequence", len_ctx, units.tokens(len_ctx))
    add("inputs", "formats", "weights / experts / KV / compute", None,
        f"{weight_dtype} / {expert_weight_dtype or weight_dtype} / {kv_dtype} / {compute}"
        + (f" (experts {expert_compute})" if expert_compute else ""))
    add("inputs", "target", "target", latency_target if latency_target is not None else batch,
        (f"latency ≤ {units.seconds(latency_target)} per token" if latency_target is not None
         else f"fixed batch of {units.whole(batch)}" if batch is not None else "throughput (largest batch that fits)"))
    add("inputs", "layout", "headline layout", None if chosen is None else chosen.name, _layout_label(chosen, model)
        + (" (one big chip: weights and KV split evenly, an optimistic bound)" if chosen is None else "")
        + (" (chosen for this model and system)" if auto else ""))

    # Capacity -------------------------------------------------------------------------------------
    per_token_kv = model.kv_bytes_per_token(kv_dtype, context_len=max(1, int(round(len_ctx))))
    add("capacity", "kv_bytes_per_token", "KV cache per token", per_token_kv, units.bytes_(per_token_kv),
        "models.Model.kv_bytes_per_token")
    add("capacity", "hbm_per_gpu", "HBM per GPU", chip.hbm_capacity, units.bytes_(chip.hbm_capacity),
        "hardware.Chip.hbm_capacity")
    for name, lay in {"pooled": None, **_layouts_for(deployment)}.items():
        held = roofline.device_memory(model, deployment, layout=lay, weight_dtype=bytes_w,
                                      expert_weight_dtype=bytes_e, kv_dtype=kv_dtype)
        fit = _fits_batch(model, deployment, lay, len_ctx=len_ctx, bytes_w=bytes_w, bytes_e=bytes_e, kv_dtype=kv_dtype)
        label = _layout_label(lay, model)
        add("capacity", f"{name}_weights_per_gpu", f"{label}: weights per GPU", held["weights"],
            f"{units.bytes_(held['weights'])} ({'fits' if held['fits'] else 'does NOT fit'})",
            "roofline.device_memory")
        add("capacity", f"{name}_fits", f"{label}: weights fit", bool(held["fits"]), "yes" if held["fits"] else "no",
            "roofline.device_memory")
        add("capacity", f"{name}_kv_room", f"{label}: room for KV per GPU", held["free"], units.bytes_(held["free"]),
            "roofline.device_memory")
        add("capacity", f"{name}_max_batch", f"{label}: largest batch at this context", fit,
            units.whole(math.floor(fit)) + " sequences", "roofline.batch_that_fits")
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
        add("capacity", "pp_max_batch", f"{label}: largest batch ({stages} micro-batches)", total_pp,
            units.whole(math.floor(total_pp)) + " sequences", "pipeline_memory.max_micro_batch, GLOBAL_BATCH")

    # Decode ------------------------------------------------------------------------------------------
    common = dict(weight_dtype=bytes_w, expert_weight_dtype=bytes_e, compute_dtype=compute,
                  expert_compute_dtype=expert_compute, attention_dtype=attention_dtype, kv_dtype=kv_dtype,
                  tokens_per_step=tau, layout=chosen)
    result.decode_settings = dict(common, len_ctx=len_ctx)

    def step(b):
        return roofline.decode_bound(model, deployment, batch=b, len_ctx=len_ctx, **common)

    b_star = roofline.balance_batch(chip, weight_bytes=bytes_avg, compute_dtype=compute, sparsity=model.sparsity)
    bytes_read_tok = model.kv_bytes_read_per_token(kv_dtype, context_len=max(1, int(round(len_ctx))))
    b_star_kv = roofline.balance_batch_with_kv(n_active=model.params_active, n_total=model.params_total,
                                               flops=deployment.flops[compute], mem_bw=deployment.hbm_bandwidth,
                                               bytes_param=bytes_avg, len_ctx=len_ctx, bytes_tok=bytes_read_tok)
    add("decode", "balance_batch", "B* (weights only, × sparsity)", b_star, units.whole(b_star) + " sequences",
        "roofline.balance_batch")
    add("decode", "balance_batch_with_kv", "B* with KV at this context", b_star_kv,
        "none: KV outpaces compute at every batch" if math.isinf(b_star_kv) else units.whole(b_star_kv) + " sequences",
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
    fit = _fits_batch(model, deployment, chosen, len_ctx=len_ctx, bytes_w=bytes_w, bytes_e=bytes_e, kv_dtype=kv_dtype)
    add("decode", "fit_limit", "largest batch that fits (headline layout)", fit,
        units.whole(math.floor(fit)) + " sequences", "roofline.batch_that_fits")
    operating, why = _operating_batch(step, fit=fit, batch=batch, latency_target=latency_target)
    add("decode", "batch", "operating batch", operating,
        (units.whole(operating) + " sequences" if operating else "none") + f" ({why})")
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
    pre = roofline.prefill_bound(model, deployment, len_in=len_ctx, compute_dtype=compute,
                                 expert_compute_dtype=expert_compute, attention_dtype=attention_dtype,
                                 layout=chosen, weight_dtype=bytes_w,
                                 expert_weight_dtype=bytes_e)
    add("prefill", "t_prefill", "time to prefill the context", pre["t_prefill"],
        units.seconds(pre["t_prefill"]) + ("" if pre["fits"] else " (if it fitted: the weights do not)"),
        "roofline.prefill_bound")
    add("prefill", "input_tokens_per_s", "input tokens/s, whole deployment", pre["input_tokens_per_s"],
        units.rate(pre["input_tokens_per_s"]), "roofline.prefill_bound")
    add("prefill", "input_tokens_per_s_per_gpu", "input tokens/s per GPU", pre["input_tokens_per_s"] / n,
        units.rate(pre["input_tokens_per_s"] / n), "roofline.prefill_bound")

    # Cost --------------------------------------------------------------------------------------------
    cost_in = roofline.cost_per_token(step_time=pre["t_prefill"], batch=len_ctx, n_chips=n,
                                      price_chip_hour=price) * PER_MILLION
    add("cost", "usd_per_million_input", "$ per million input tokens", cost_in, units.dollars(cost_in),
        "roofline.cost_per_token (COST_OF_STEP) with the prefill time")
    if operating:
        cost_out = roofline.cost_per_token(step_time=at["t"], batch=operating * tau, n_chips=n,
                                           price_chip_hour=price) * PER_MILLION
        add("cost", "usd_per_million_output", "$ per million output tokens", cost_out, units.dollars(cost_out),
            "roofline.cost_per_token (COST_OF_STEP) at the operating batch")

    # Layouts compared ---------------------------------------------------------------------------------
    if stages > 1:
        idle = pipeline.decode_idle_fraction(stages=stages, microbatches=1)
        need = pipeline.MIN_DECODE_MICROBATCHES(P=stages)
        add("layouts", "pp_decode_idle_one_micro", f"PP over {stages} domains: idle with 1 micro-batch", idle,
            f"{idle:.0%} of the time", "pipeline.decode_idle_fraction")
        add("layouts", "pp_micro_batches_needed", "PP: micro-batches needed to keep every stage busy", need,
            units.whole(need), "pipeline.MIN_DECODE_MICROBATCHES")
    else:
        add("layouts", "pp_decode_idle_one_micro", "pipeline stages", None,
            "none needed: one scale-up domain holds the model's devices")
    if model.is_moe and n == 1:
        add("layouts", "cross_rack_fraction", "expert all-to-all", None, "none: one GPU holds every expert")
    elif model.is_moe:
        per_token = moe.a2a_bytes_per_token(model, bytes_per_value=moe.ACTIVATION_BYTES["fp8"])
        tokens_gpu = (operating or 1) * tau / n
        scale_out = resolve_unit(system, n_chips=n_chips).scale_out_bandwidth   # a System may set its own
        a2a = moe.a2a_layer_time(tokens_per_gpu=tokens_gpu, bytes_per_token=per_token, racks=stages,
                                 scale_up_bw=chip.scale_up_bandwidth, scale_out_bw=scale_out)
        one = moe.a2a_layer_time(tokens_per_gpu=tokens_gpu, bytes_per_token=per_token, racks=1,
                                 scale_up_bw=chip.scale_up_bandwidth, scale_out_bw=scale_out)
        per_step = a2a["total"] * model.n_moe_layers
        add("layouts", "cross_rack_fraction", "EP: share of dispatched tokens that leave their domain",
            a2a["cross_fraction"], f"{a2a['cross_fraction']:.0%}", "moe.CROSS_RACK_FRACTION")
        add("layouts", "a2a_per_step", "EP: all-to-all time per decode step (FP8 dispatch)", per_step,
            units.seconds(per_step) + (f" ({per_step / at['t']:.0%} of the step bound)" if operating else ""),
            "moe.a2a_layer_time × MoE layers")
        add("layouts", "a2a_slowdown", "EP: all-to-all against one domain", a2a["total"] / one["total"],
            f"{a2a['total'] / one['total']:.1f}×", "moe.a2a_layer_time(racks) / moe.a2a_layer_time(racks=1)")
    else:
        add("layouts", "cross_rack_fraction", "expert all-to-all", None, "none: a dense model routes no tokens")

    # Reality -----------------------------------------------------------------------------------------
    kind = "latency" if operating == 1 else "decode"
    if operating:
        _band(add, kind, "decode", "output tokens/s per GPU", per_gpu)
    _band(add, "prefill", "prefill", "input tokens/s per GPU", pre["input_tokens_per_s"] / n)
    return result


def _band(add, kind: str, key: str, what: str, bound: float) -> None:
    band = measurements.efficiency_summary(kind=kind)
    add("reality", f"{key}_band", f"{kind} rows: share of the bound reached", band,
        f"measured systems reach {band['low']:.0%}–{band['high']:.0%} of this bound; median {band['median']:.0%} "
        f"({band['n']} rows, of {', '.join(band['models'])} only: a guide, not a forecast for this model)",
        f"measurements.efficiency_summary(kind={kind!r})")
    add("reality", f"{key}_expected", f"{what}: what that band suggests",
        {k: bound * band[k] for k in ("low", "median", "high")},
        f"{units.rate(bound * band['low'])} to {units.rate(bound * band['high'])}, median "
        f"{units.rate(bound * band['median'])} (bound {units.rate(bound)})",
        "bound × efficiency_summary")


def _operating_batch(step, *, fit: float, batch, latency_target) -> tuple[float | None, str]:
    """The batch the plan runs at, and why (see :func:`plan`)."""
    if fit < 1:
        return None, "the weights, or one sequence's KV, do not fit"
    if batch is not None:
        return batch, "as given" + ("" if batch <= fit else "; more than fits")
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
        self.exit(2, f"{self.prog}: error: {message}\n")


def _number_or_name(text: str):
    try:
        return float(text)
    except ValueError:
        return text


def main(argv=None) -> int:
    """``python -m lecture_lib.plan MODEL SYSTEM --price USD --context TOKENS [...]``: print a plan."""
    parser = _Parser(prog="python -m lecture_lib.plan",
                     description="Plan an LLM deployment with the course's bounds (text table, or --json).")
    parser.add_argument("model", help="a model preset name or a path to a Hugging Face config.json")
    parser.add_argument("system", help="a system preset (e.g. 'HGX H100') or a chip name with --gpus")
    parser.add_argument("--price", type=float, required=True, help="USD per GPU-hour")
    parser.add_argument("--context", type=float, required=True, help="tokens of context per sequence")
    parser.add_argument("--latency-ms", type=float, help="target milliseconds per output token")
    parser.add_argument("--batch", type=float, help="a fixed operating batch instead of a target")
    parser.add_argument("--gpus", type=int, help="how many chips, when SYSTEM names a chip")
    parser.add_argument("--systems", type=int, default=1, help="how many copies of SYSTEM (default 1)")
    parser.add_argument("--weights", default="fp8", type=_number_or_name, help="weight format (default fp8)")
    parser.add_argument("--expert-weights", type=_number_or_name, help="routed-expert weight format")
    parser.add_argument("--kv", default="bf16", type=_number_or_name, help="KV-cache format (default bf16)")
    parser.add_argument("--compute", help="compute format (default: the weight format)")
    parser.add_argument("--layout", choices=["auto", "pooled"] + sorted(roofline.LAYOUTS), default="auto",
                        help="headline layout (default auto: dp_ep for an MoE model on several GPUs, else tp)")
    parser.add_argument("--attention", help="attention's compute format (default: the compute format)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    try:
        result = plan(args.model, args.system, price_per_gpu_hour=args.price, len_ctx=args.context,
                      latency_target=None if args.latency_ms is None else args.latency_ms / 1e3, batch=args.batch,
                      n_systems=args.systems, n_chips=args.gpus, weight_dtype=args.weights,
                      expert_weight_dtype=args.expert_weights, kv_dtype=args.kv, compute_dtype=args.compute,
                      layout=None if args.layout == "pooled" else args.layout, attention_dtype=args.attention)
    except (ValueError, KeyError) as error:
        message = str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)
        print(f"{parser.prog}: error: {' '.join(message.split())}", file=sys.stderr)
        return 2
    print(result.to_json() if args.json else result.text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
