"""Anki flashcards of the course: each chapter's key formulas, key numbers and conceptual questions.

``python -m lecture_lib.practice.flashcards OUT.apkg`` (or ``make flashcards``) writes one Anki package with a
sub-deck per chapter. Three kinds of card, all built from the library when the deck is exported, so
a card says what the code computes:

- **formula**: every module-level :class:`~lecture_lib.formula.Formula` of the chapter's modules.
  Front: the quantity (its meaning from :mod:`lecture_lib.symbols`); back: the equation in LaTeX,
  between Anki's MathJax delimiters ``\\( \\)``, and the formula's source.
- **number**: a few back-of-the-envelope numbers per chapter (:data:`KEY_NUMBERS`), computed from
  the presets, each with the sources the preset carries.
- **concept**: the chapter's choice problems (:mod:`lecture_lib.practice.checks`), with the problem
  statement read from ``solutions/NN_*.ipynb`` when that folder is at hand. (So the deck holds
  those problems' answers: hand it out after the exercises, or use ``--no-concepts``.)

Re-importing an updated deck updates cards rather than duplicating them: each note's GUID is
``genanki.guid_for`` of a stable key (``formula:roofline.T_COMPUTE``, ``number:1.h100-ratio``,
``concept:1.9``), and the deck and model ids are fixed numbers. genanki is an optional extra
(``pip install -e '.[flashcards]'``); importing this module works without it, exporting does not.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import html
import importlib
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from lecture_lib import units, validate

DECK_NAME = "LLM training and serving math"
ROOT_DECK_ID = 1_746_002_016_000          # fixed: Anki matches decks by id
MODEL_ID = 1_746_002_016_100             # fixed: a changed id would make a second note type
GUID_NAMESPACE = "lecture_lib"
KINDS = ("formula", "number", "concept")

CHAPTER_MODULES = {1: ("roofline",), 2: ("moe",), 3: ("pipeline",), 4: ("pipeline_memory",),
                   5: ("scaling",), 6: ("context",), 7: ("reversible",), 8: (),
                   9: ("collectives", "topology", "training_layout"), 10: (), 11: ()}
"""Which library modules hold each chapter's formulas (Chapter 8's are all in :mod:`lecture_lib.roofline`, see
:data:`CHAPTER_FORMULAS`; Chapter 10, the planner, and Chapter 11, the lab after Chapter 1,
which measures with Chapter 1's formulas, add none: their cards are key numbers and concepts)."""

CHAPTER_FORMULAS = {8: {"roofline": ("EXPECTED_EXPERTS", "PARAMS_READ", "T_WEIGHTS_READ", "T_COMPUTE_VERIFY",
                                     "DECODE_THROUGHPUT", "SPEC_TOKENS", "SPEC_SPEEDUP", "T_ATTENTION", "T_PREFILL",
                                     "BATCH_THAT_FITS")},
                    9: {"roofline": ("WEIGHTS_PER_DEVICE", "KV_REPLICATION", "KV_PER_DEVICE", "T_WEIGHTS_PER_DEVICE")}}
"""Formulas a later chapter added to an earlier chapter's module: they go to the later chapter's
sub-deck (and not to the module's own chapter)."""

_REPO = Path(__file__).resolve().parents[2]
"""The checkout: lecture_lib/practice/flashcards.py is two folders below it (``solutions/`` and ``notebooks/``
sit beside ``lecture_lib/``)."""


@dataclass(frozen=True)
class Card:
    """One note: ``key`` (stable, gives the GUID), chapter, kind, front, back and source (HTML)."""

    key: str
    chapter: int
    kind: str
    front: str
    back: str
    source: str = ""

    @property
    def guid(self) -> str:
        import genanki

        return genanki.guid_for(GUID_NAMESPACE, self.key)


# ================================================================================ text helpers

def _math(text: str) -> str:
    """Markdown math to Anki's MathJax delimiters: ``$$x$$`` -> ``\\[x\\]``, ``$x$`` -> ``\\(x\\)``."""
    text = re.sub(r"\$\$(.+?)\$\$", lambda m: r"\[" + m.group(1) + r"\]", text, flags=re.S)
    return re.sub(r"(?<![\\$])\$([^$\n]+?)\$", lambda m: r"\(" + m.group(1) + r"\)", text)


def _text(text: str) -> str:
    """Plain text as card HTML: escaped, and a dollar sign as ``&#36;`` (MathJax never reads it as math)."""
    return html.escape(text, quote=False).replace("$", "&#36;")


def _markdown(text: str) -> str:
    """Just enough Markdown for a card: escaped HTML, **bold**, *italic*, `code`, [links](https://...), math,
    line breaks."""
    text = html.escape(text, quote=False)
    text = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", text, flags=re.S)
    text = re.sub(r"(?<![*\w\\])\*(\w[^*$\n]*?)\*(?![*\w])", r"<i>\1</i>", text)
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    text = re.sub(r"\[([^\]\n]+)\]\((https?://[^)\s]+)\)", r'<a href="\2">\1</a>', text)
    text = _math(text)
    return "<br>".join(line for line in text.strip().split("\n"))


def _sources(sources, fields: tuple[str, ...] | None = None) -> str:
    """Readable source text: a preset's per-field sources (a mapping) grouped so that each distinct
    source appears once, after the fields it backs ("hbm_bandwidth, hbm_capacity: NVIDIA H100
    datasheet ..."); ``fields`` keeps only those fields. Anything else as plain text."""
    if isinstance(sources, Mapping):
        grouped: dict[str, list[str]] = {}
        for key, text in sources.items():
            if fields is None or key in fields:
                grouped.setdefault(str(text), []).append(str(key))
        return "<br>".join(f"{html.escape(', '.join(keys).replace('_', ' '))}: {html.escape(text)}"
                           for text, keys in grouped.items())
    return html.escape(str(sources))


# ================================================================================ formulas

def _chapter_number(chapter) -> int:
    """A chapter with cards (:func:`chapters`), or a ``ValueError`` naming ``chapter``."""
    return validate.choice("chapter", validate.integer("chapter", chapter, minimum=0, maximum=10**6), chapters())


def _directory(solutions_dir) -> Path | None:
    """None, or an existing directory given as text or a path; a ``ValueError`` naming ``solutions_dir`` otherwise."""
    if solutions_dir is None:
        return None
    if not isinstance(solutions_dir, (str, os.PathLike)) or not str(solutions_dir) or not Path(solutions_dir).is_dir():
        raise ValueError(f"solutions_dir must be an existing directory, got {validate._describe(solutions_dir)}")
    return Path(solutions_dir)


def formula_cards(chapter: int) -> list[Card]:
    """A card per module-level Formula of the chapter's modules, in definition order."""
    from lecture_lib import symbols
    from lecture_lib.formula import Formula

    chapter = _chapter_number(chapter)
    claimed = {(module_name, name) for owner, selection in CHAPTER_FORMULAS.items() if owner != chapter
               for module_name, names in selection.items() for name in names}
    selections = [(module_name, None) for module_name in CHAPTER_MODULES.get(chapter, ())]
    selections += list(CHAPTER_FORMULAS.get(chapter, {}).items())
    cards = []
    for module_name, only in selections:
        module = importlib.import_module(f"lecture_lib.{module_name}")
        for name, value in vars(module).items():
            if not (isinstance(value, Formula) and name.isupper()):
                continue
            if (module_name, name) in claimed or (only is not None and name not in only):
                continue
            row = symbols.TABLE.get(value.name)
            meaning = f" ({html.escape(row.meaning)})" if row else ""
            note = f"<br><small>{_markdown(value.note)}</small>" if value.note else ""
            lhs = symbols.TABLE[value.name].latex if row else value.name
            cards.append(Card(
                key=f"formula:{module_name}.{name}", chapter=chapter, kind="formula",
                front=f"Chapter {chapter} · formula <code>{module_name}.{name}</code><br>\\({lhs}\\){meaning} = ?",
                back=f"\\[{value.latex()}\\]{note}",
                source=html.escape(value.source)))
    return cards


# ================================================================================ numbers

@dataclass(frozen=True)
class KeyNumber:
    """A number worth knowing by heart, computed from the library with its source."""

    key: str
    chapter: int
    question: str
    value: Callable[[], float]
    show: Callable[[float], str]
    source: Callable[[], object]
    fields: tuple[str, ...] | None = None   # the preset fields the number uses (their sources only)


def _lab_example():
    from lecture_lib import measure
    return measure.example_profile()


def _chip(name):
    from lecture_lib import hardware
    return hardware.get(name)


def _system(name):
    from lecture_lib import hardware
    return hardware.get_system(name)


def _model(name):
    from lecture_lib import models
    return models.get(name)


def _ratio(value: float) -> str:
    return f"≈ {value:,.0f}" if value >= 10 else f"≈ {value:.2g}"


def _plain_step_ratio(batch: int) -> float:
    """rho = t_compute / t_mem of Llama-3-70B's plain decode step on one H200 (FP8 weights and KV, 4,096 tokens)."""
    from lecture_lib import collectives, roofline

    plain = roofline.decode_bound(_model("llama-3-70b"), collectives.deployment(_chip("H200"), n_chips=1), batch=batch,
                                  len_ctx=4096, weight_dtype="fp8", kv_dtype="fp8")
    return plain["t_compute"] / (plain["t_weights"] + plain["t_kv"])


def _key_numbers() -> tuple[KeyNumber, ...]:
    from lecture_lib import collectives, context, moe, pipeline, reversible, roofline, scaling

    return (
        KeyNumber("h100-ratio", 1, "H100 hardware ratio: multiplies per byte of HBM traffic (fp8 compute, 1-byte "
                  "weights), the lecture's \"≈ 300\"",
                  lambda: roofline.hardware_ratio(_chip("H100"), "fp8", 1), _ratio, lambda: _chip("H100").sources,
                  ("flops", "hbm_bandwidth")),
        KeyNumber("h100-drain", 1, "H100: time to read all of HBM once (capacity / bandwidth)",
                  lambda: _chip("H100").hbm_drain_time, units.seconds, lambda: _chip("H100").sources,
                  ("hbm_bandwidth", "hbm_capacity")),
        KeyNumber("nvl72-drain", 1, "GB200 NVL72: time to read all of the rack's HBM once (the \"20 ms train\")",
                  lambda: _system("GB200 NVL72").hbm_drain_time, units.seconds,
                  lambda: {**_system("GB200 NVL72").chip.sources, **_system("GB200 NVL72").sources},
                  ("n_chips", "hbm_bandwidth", "hbm_capacity")),
        KeyNumber("deepseek-sparsity", 1, "DeepSeek-V3's real sparsity N_total / N_active (the lecture's example, routing 32 of 256 experts, uses 8)",
                  lambda: _model("deepseek-v3").sparsity, lambda v: f"{v:.1f}", lambda: _model("deepseek-v3").source),
        KeyNumber("nvl72-link-ratio", 2, "GB200 NVL72: scale-up (NVLink) over scale-out bandwidth per GPU "
                  "(the board uses ≈ 8)",
                  lambda: moe.link_ratio_of(_system("GB200 NVL72")), _ratio, lambda: _system("GB200 NVL72").chip.sources,
                  ("scale_up_bandwidth", "scale_out_bandwidth")),
        KeyNumber("deepseek-experts", 2, "DeepSeek-V3: routed experts per MoE layer (it routes 8 of them per token)",
                  lambda: float(_model("deepseek-v3").n_routed_experts), lambda v: f"{v:.0f}",
                  lambda: _model("deepseek-v3").source),
        KeyNumber("bubble-4x16", 3, "Pipeline bubble (idle fraction) of a training step with 4 stages and "
                  "16 micro-batches, GPipe or 1F1B: (S − 1) / (M + S − 1)",
                  lambda: pipeline.bubble_fraction(stages=4, microbatches=16), lambda v: f"{v:.0%}",
                  lambda: "lecture 00:58:59 (E3.3); Huang et al. 2019 (GPipe), arXiv 1811.06965"),
        KeyNumber("llama405-kv", 4, "Llama 3 405B: KV cache bytes per token of context, bf16 (GQA, all layers)",
                  lambda: _model("llama-3-405b").kv_bytes_per_token(2), units.bytes_,
                  lambda: _model("llama-3-405b").source),
        KeyNumber("deepseek-kv", 4, "DeepSeek-V3: KV cache bytes per token of context, 8-bit (MLA latent, all layers)",
                  lambda: _model("deepseek-v3").kv_bytes_per_token(1), units.bytes_,
                  lambda: _model("deepseek-v3").source),
        KeyNumber("chinchilla", 5, "Chinchilla-optimal training tokens per parameter",
                  lambda: float(scaling.CHINCHILLA_TOKENS_PER_PARAM), lambda v: f"≈ {v:.0f}",
                  lambda: "Hoffmann et al. 2022, arXiv 2203.15556"),
        KeyNumber("train-flops", 5, "Training FLOPs per parameter per token (forward + backward)",
                  lambda: float(scaling.FLOPS_FORWARD + scaling.FLOPS_BACKWARD), lambda v: f"{v:.0f}",
                  lambda: "2 forward + 4 backward; Kaplan et al. 2020, arXiv 2001.08361"),
        KeyNumber("gemini-kv", 6, "KV bytes per token implied by a price step at 200K context (100 B active, "
                  "ratio 300): the lecture's inference",
                  lambda: context.infer_kv_bytes(crossover_context=context.LECTURE_CROSSOVER), units.bytes_,
                  lambda: "lecture 01:37:28; lecture_lib.context.infer_kv_bytes"),
        KeyNumber("act-values", 7, "Activation values stored per layer per token, in units of d_model "
                  "(the scaling book's rule of thumb c_act)",
                  lambda: float(reversible.ACTIVATION_VALUES_PER_LAYER), lambda v: f"≈ {v:.0f}",
                  lambda: "How to Scale Your Model (Austin et al.)"),
        KeyNumber("recompute-overhead", 7, "Extra training compute of recomputing activations (one more forward): "
                  "8·N vs 6·N FLOPs per token",
                  lambda: reversible.training_flops_per_token(strategy="reversible", n_active=1.0)
                  / reversible.training_flops_per_token(strategy="standard", n_active=1.0) - 1,
                  lambda v: f"+{v:.0%}", lambda: "Gomez et al. 2017, arXiv 1707.04585; Chen et al. 2016"),
        KeyNumber("deepseek-batch1-read", 8, "DeepSeek-V3 at batch 1: share of its total parameters one decode "
                  "step reads (the shared part plus the 8 routed experts each MoE layer touches)",
                  lambda: roofline.params_read(_model("deepseek-v3"), tokens=1) / _model("deepseek-v3").params_total,
                  lambda v: f"{v:.1%}", lambda: _model("deepseek-v3").source),
        KeyNumber("deepseek-experts-64", 8, "DeepSeek-V3: expected experts (of 256) one MoE layer touches when 64 "
                  "tokens are routed, k = 8 each: E·(1 − (1 − k/E)^B)",
                  lambda: roofline.expected_experts(n_experts=_model("deepseek-v3").n_routed_experts,
                                                    k=_model("deepseek-v3").experts_per_token, tokens=64),
                  lambda v: f"≈ {v:.0f}", lambda: _model("deepseek-v3").source),
        KeyNumber("spec-depth-batch1", 8, "Llama-3-70B decoding one sequence on one H200 (FP8, 4,096 tokens): how many "
                  "tokens speculative decoding should draft per step when each is accepted with probability 0.8 and "
                  "a draft pass costs 5% of a step",
                  lambda: float(roofline.best_draft_depth(acceptance=0.8, draft_cost=0.05,
                                                          compute_ratio=_plain_step_ratio(1))["depth"]),
                  lambda v: f"{v:.0f} draft tokens",
                  lambda: "Leviathan et al. 2023, arXiv 2211.17192; lecture_lib.roofline.best_draft_depth"),
        KeyNumber("h100-dp-critical", 9, "H100 over NVLink, 8-way data parallel, bf16 gradients: tokens per GPU "
                  "above which the gradient all-reduce hides behind the backward pass",
                  lambda: collectives.dp_critical_batch(dp=8, flops=_chip("H100").flops["bf16"],
                                                        link_bandwidth=_chip("H100").scale_up_bandwidth),
                  lambda v: f"≈ {v:,.0f}", lambda: _chip("H100").sources, ("flops", "scale_up_bandwidth")),
        KeyNumber("deepseek-dp-ep-weights", 10, "DeepSeek-V3 in FP8 on one HGX H200 under DP attention + EP: weights "
                  "each GPU holds (a full copy of attention and the shared expert, 1/8 of the routed experts)",
                  lambda: roofline.device_memory("deepseek-v3", _system("HGX H200"), layout="dp_ep",
                                                 weight_dtype="fp8")["weights"],
                  units.bytes_, lambda: _system("HGX H200").chip.sources, ("hbm_capacity",)),
        KeyNumber("hgx-h200-hbm", 10, "One HGX H200 node (8 GPUs): HBM it holds in all, the budget for weights "
                  "and KV cache",
                  lambda: _system("HGX H200").hbm_capacity, units.bytes_,
                  lambda: {**_system("HGX H200").chip.sources, **_system("HGX H200").sources},
                  ("n_chips", "hbm_capacity")),
        KeyNumber("deepseek-h200-floor", 10, "DeepSeek-V3 in FP8 on one HGX H200: the latency floor, every weight "
                  "byte read once per step at the node's HBM bandwidth (N_total · 1 byte / mem_bw)",
                  lambda: roofline.T_WEIGHTS(N_total=_model("deepseek-v3").params_total, bytes_param=1,
                                             mem_bw=_system("HGX H200").hbm_bandwidth),
                  units.seconds, lambda: {**_system("HGX H200").chip.sources, **_system("HGX H200").sources},
                  ("n_chips", "hbm_bandwidth")),
        KeyNumber("deepseek-h200-balance", 10, "DeepSeek-V3 in FP8 on H200: the balance batch B* (sequences per "
                  "step at which compute time equals weight-fetch time), ≈ hardware ratio × sparsity",
                  lambda: roofline.balance_batch(_chip("H200"), weight_bytes=1, compute_dtype="fp8",
                                                 sparsity=_model("deepseek-v3").sparsity),
                  lambda v: f"≈ {v:,.0f}", lambda: _chip("H200").sources, ("flops", "hbm_bandwidth")),
        KeyNumber("lab-reference-balance", 11, "The course's 2-core reference machine, measured by the lab (float32 "
                  "weights and multiplies): its balance batch B* from the measured peak and read bandwidth",
                  lambda: _lab_example().balance_batch(), lambda v: f"≈ {v:.0f}",
                  lambda: "lecture_lib/measure.py example_profile (the lab's full-mode run, 2026-12-06)"),
        KeyNumber("lab-h100-over-cpu", 11, "How many times larger an H100's hardware ratio (bf16) is than the course's "
                  "reference CPU's (float32), both as multiplies per byte of weights",
                  lambda: roofline.hardware_ratio(_chip("H100"), "bf16", 2) / _lab_example().balance_batch(),
                  lambda v: f"≈ {v:.0f}×",
                  lambda: {**_chip("H100").sources, "lab": "lecture_lib/measure.py example_profile"},
                  ("flops", "hbm_bandwidth", "lab")),
        KeyNumber("llama70-bf16-weights", 10, "Llama 3 70B in bf16: bytes of weights alone, so the fewest 80 GB "
                  "GPUs that hold them is their ratio rounded up",
                  lambda: _model("llama-3-70b").params_total * 2, units.bytes_,
                  lambda: _model("llama-3-70b").source),
        KeyNumber("deepseek-tp-kv-copies", 10, "DeepSeek-V3 (MLA) under TP 8: how many times each sequence's KV "
                  "latent is stored across the node (why DP attention fits more sequences)",
                  lambda: roofline.device_memory("deepseek-v3", _system("HGX H200"), layout="tp")["r_kv"],
                  lambda v: f"{v:.0f}×", lambda: _system("HGX H200").chip.sources, ("hbm_capacity",)),
        KeyNumber("worked-operating-batch", 10, f"{_worked_words()}: the operating batch (the largest whose step "
                  "bound meets the target and whose weights and KV fit)",
                  lambda: _worked("decode", "batch"), lambda v: f"{v:,.0f} sequences",
                  lambda: _worked_source("decode", "batch")),
        KeyNumber("worked-tokens-per-gpu", 10, f"{_worked_words()}: output tokens/s per GPU at the operating batch "
                  "(a bound)",
                  lambda: _worked("decode", "tokens_per_s_per_gpu"), units.rate,
                  lambda: _worked_source("decode", "tokens_per_s_per_gpu")),
        KeyNumber("worked-cost-output", 10, f"{_worked_words()}: dollars per million output tokens at the "
                  "operating batch (a bound: the rented GPU-hours over the tokens they make)",
                  lambda: _worked("cost", "usd_per_million_output"), units.dollars,
                  lambda: _worked_source("cost", "usd_per_million_output")),
        KeyNumber("worked-pp-idle", 10, f"{_worked_words()}, laid out as a pipeline over the "
                  f"{WORKED_PLAN['n_systems']} nodes: share of the time each stage idles in decode with one "
                  "micro-batch in flight",
                  lambda: _worked("layouts", "pp_decode_idle_one_micro"), units.percent,
                  lambda: _worked_source("layouts", "pp_decode_idle_one_micro")),
        KeyNumber("worked-cross-node", 10, f"{_worked_words()}, experts spread over both nodes: share of the "
                  "tokens each all-to-all dispatches that leave their node (over the slow links)",
                  lambda: _worked("layouts", "cross_rack_fraction"), units.percent,
                  lambda: _worked_source("layouts", "cross_rack_fraction")),
        KeyNumber("dp-over-tp-one-node", 10, f"{_model(WORKED_PLAN['model']).name} on one {WORKED_PLAN['system']} "
                  f"at {WORKED_PLAN['len_ctx']:,} tokens of context: how many times more sequences fit under DP "
                  "attention + EP than under plain TP (the chapter's prediction)",
                  lambda: _one_node_capacity("dp_ep_max_batch") / _one_node_capacity("tp_max_batch"),
                  lambda v: f"≈ {v:.1f}×",
                  lambda: "lecture_lib/plan.py (plan(...).numbers['capacity'], from roofline.batch_that_fits with "
                          "layout='dp_ep' and 'tp'); notebooks/10_plan_a_deployment.ipynb, Predict first"),
        KeyNumber("memory-utilization", 10, "Share of each GPU's HBM a plan gives to weights and KV (the rest is the "
                  "runtime's reserve for activations, CUDA graphs and fragmentation)",
                  lambda: _plan_module().MEMORY_UTILIZATION, units.percent,
                  lambda: "vLLM's gpu_memory_utilization default; lecture_lib/plan.py MEMORY_UTILIZATION"),
        KeyNumber("moe-decode-band", 10, "Published MoE serving systems in memory-bound decode: the median share of "
                  "their roofline bound they reached (Chapter 8's dataset, the band a plan applies)",
                  lambda: _moe_decode_band()["median"], units.percent,
                  lambda: f"lecture_lib/measurements.py reality_band(kind='decode', moe=True, regime='memory', "
                          f"hbm_fraction={_plan_module().MEMORY_UTILIZATION}): {_moe_decode_band()['n']} rows"),
    )


# ================================================================================ Chapter 10's worked plan

WORKED_PLAN = {"model": "deepseek-v3", "system": "HGX H200", "n_systems": 2, "price_per_gpu_hour": 3.5,
               "len_ctx": 8192, "latency_target": 0.020}
"""The plan Chapter 10 works through (notebooks/10_plan_a_deployment.ipynb §1); its cards quote what
:func:`lecture_lib.plan.plan` computes for it."""


def _plan_module():
    from lecture_lib import plan

    return plan


@functools.lru_cache(maxsize=None)
def _worked_plan():
    settings = dict(WORKED_PLAN)
    return _plan_module().plan(settings.pop("model"), settings.pop("system"), **settings)


def _worked_words() -> str:
    """The worked plan's inputs in words, from :data:`WORKED_PLAN`."""
    plan = WORKED_PLAN
    return (f"Chapter 10's worked plan ({_model(plan['model']).name} on {plan['n_systems']} × {plan['system']}, "
            f"{units.dollars(plan['price_per_gpu_hour'])} per GPU-hour, {plan['len_ctx']:,} tokens of context, "
            f"at most {units.seconds(plan['latency_target'])} per token)")


def _worked(section: str, key: str) -> float:
    return float(_worked_plan().numbers[section][key])


def _worked_source(section: str, key: str) -> str:
    row = next(row for row in _worked_plan().section(section) if row.key == key)
    computed = f"{row.source}, put together by " if row.source else ""
    return f"{computed}lecture_lib/plan.py (the row \"{row.label}\"); notebooks/10_plan_a_deployment.ipynb §1"


@functools.lru_cache(maxsize=None)
def _one_node_plan():
    """The worked plan's model on one of its systems (the chapter's prediction compares its layouts)."""
    plan = WORKED_PLAN
    return _plan_module().plan(plan["model"], plan["system"], price_per_gpu_hour=plan["price_per_gpu_hour"],
                               len_ctx=plan["len_ctx"])


def _one_node_capacity(key: str) -> float:
    return float(_one_node_plan().numbers["capacity"][key])


@functools.lru_cache(maxsize=None)
def _moe_decode_band() -> dict:
    from lecture_lib import measurements

    return measurements.reality_band(kind="decode", moe=True, regime="memory",
                                     hbm_fraction=_plan_module().MEMORY_UTILIZATION)


# ================================================================================ concepts in words

@dataclass(frozen=True)
class Concept:
    """A question about why, answered in a sentence or two whose numbers the library computes when the deck is
    exported (``answer`` is called then)."""

    key: str
    chapter: int
    question: str
    answer: Callable[[], str]
    source: str


def _dp_attention_answer() -> str:
    from lecture_lib import roofline

    node = _system(WORKED_PLAN["system"])
    copies = roofline.device_memory(WORKED_PLAN["model"], node, layout="tp")["r_kv"]
    return (f"MLA caches one latent per token and layer, shared by every head, so TP cannot split it by head: each "
            f"GPU stores every sequence's latent ({copies:.0f} copies across the {node.n_chips} GPUs). DP attention "
            f"keeps each sequence's cache on one GPU. It pays with a full copy of attention and the shared expert on "
            f"every GPU ({units.bytes_(_one_node_capacity('dp_ep_weights_per_gpu'))} of weights per GPU against "
            f"{units.bytes_(_one_node_capacity('tp_weights_per_gpu'))} under TP), so the gain is "
            f"{_one_node_capacity('dp_ep_max_batch') / _one_node_capacity('tp_max_batch'):.1f}×, not {copies:.0f}×.")


def _band_answer() -> str:
    band = _moe_decode_band()
    bound = _worked("decode", "tokens_per_s_per_gpu")
    return (f"Every number of a plan is a bound: kernel launches, synchronisation, the collectives' latency, "
            f"scheduling and fragmentation are left out. Published MoE systems in memory-bound decode reached "
            f"{units.percent(band['low'])} to {units.percent(band['high'])} of such a bound (median "
            f"{units.percent(band['median'])}, {band['n']} rows), so the worked plan's {units.rate(bound)} per GPU "
            f"suggests about {units.rate(band['median'] * bound)}.")


def _pipeline_answer() -> str:
    return (f"Capacity, not speed. In the worked plan two stages over the nodes fit "
            f"{_worked('capacity', 'pp_max_batch'):,.0f} sequences, as many as the pooled layout "
            f"({_worked('capacity', 'pooled_max_batch'):,.0f}: Chapter 4's P's cancel), but with one micro-batch in flight "
            f"each stage idles {units.percent(_worked('layouts', 'pp_decode_idle_one_micro'))} of the time; it takes "
            f"{_worked('layouts', 'pp_micro_batches_needed'):.0f} micro-batches in flight to keep every stage busy, "
            f"and each token still passes through every stage.")


def _operating_batch_answer() -> str:
    fit = _worked("decode", "fit_limit")
    step_at_fit = _worked_plan().decode_step(fit)["t"]
    return (f"It is the largest batch whose step bound meets the latency target and whose weights and KV fit. In "
            f"the worked plan {fit:,.0f} sequences fit, but their step would take {units.seconds(step_at_fit)}, over "
            f"the {units.seconds(WORKED_PLAN['latency_target'])} target; {_worked('decode', 'batch'):,.0f} sequences "
            f"meet it (step {units.seconds(_worked('decode', 'step_time'))}).")


def _kv_balance_answer() -> str:
    with_kv = _worked("decode", "balance_batch_with_kv")
    shown = f"{with_kv:,.0f}" if with_kv < float("inf") else "none"
    return (f"Each sequence adds its KV fetch to the step as well as its compute. When reading one sequence's KV "
            f"takes longer than computing its token, adding sequences never lets compute catch up with memory, and "
            f"no batch balances the two. In the worked plan ({WORKED_PLAN['len_ctx']:,} tokens, "
            f"{units.bytes_(_worked('capacity', 'kv_bytes_per_token'))} of KV per token) B* with KV is {shown}, "
            f"against {_worked('decode', 'balance_batch'):,.0f} for the weights alone.")


def _lab_read_answer() -> str:
    return ("A decode step at batch 1 only reads its weights: each is streamed from memory once and multiplied once, "
            "and nothing of that size is written back. A copy (or a copy-and-add, 'triad') also writes, and a write "
            "costs memory traffic of its own, so its bandwidth understates how fast a step can read. The lab's probe "
            "reads an array many times larger than the last-level cache, on as many threads as the matrix library "
            "uses.")


def _tp_batch_answer() -> str:
    from lecture_lib import collectives

    h100 = _chip("H100")
    width = collectives.tp_critical_d_ff(tp=8, flops=h100.flops["bf16"], link_bandwidth=h100.scale_up_bandwidth,
                                         matrices=3)
    return ("Data parallelism's all-reduce carries the gradients, a fixed size, while its backward pass grows with the "
            "tokens: enough tokens per device always hide it. Tensor parallelism's all-reduce carries the B × d_model "
            "activations, which grow with the batch exactly as its matmuls do, so B cancels and only the MLP's width "
            f"decides: at TP 8 over H100 NVLink a BF16 gated MLP must be wider than {width:,.0f} (a DeepSeek-V3 expert "
            "is 2,048).")


def _concepts() -> tuple[Concept, ...]:
    return (
        Concept("tp-batch-cancels", 9, "Why can no batch size make tensor parallelism pay for a thin MLP, when a "
                "big enough batch always makes data parallelism pay?", _tp_batch_answer,
                "lecture_lib/collectives.py TP_CRITICAL_D_FF and DP_CRITICAL_BATCH; "
                "notebooks/09_communication_and_training_layouts.ipynb §2"),
        Concept("lab-read-probe", 11, "Why does the lab measure bandwidth with a read-only pass, not a copy, to "
                "predict a decode step at batch 1?", _lab_read_answer,
                "lecture_lib/measure.py read_bandwidth; notebooks/11_lab_roofline_on_your_machine.ipynb §1"),
        Concept("dp-attention", 10, f"{_model(WORKED_PLAN['model']).name} (MLA) on one "
                f"{_system(WORKED_PLAN['system']).n_chips}-GPU node: why does DP attention + EP fit more sequences "
                f"than plain tensor parallelism, and why not {_system(WORKED_PLAN['system']).n_chips}× more?",
                _dp_attention_answer,
                "lecture_lib/roofline.py device_memory (layouts 'tp' and 'dp_ep'); lecture_lib/plan.py; "
                "notebooks/10_plan_a_deployment.ipynb, Predict first"),
        Concept("bound-not-forecast", 10, "Why does a plan quote its tokens/s beside Chapter 8's band, and never alone?",
                _band_answer, "lecture_lib/measurements.py reality_band; lecture_lib/plan.py (the reality section); "
                "notebooks/10_plan_a_deployment.ipynb §4 and Caveats"),
        Concept("pipeline-decode", 10, "In decode, what does a pipeline over two nodes buy, and what does it cost?",
                _pipeline_answer, "lecture_lib/pipeline.py decode_idle_fraction, MIN_DECODE_MICROBATCHES; "
                "lecture_lib/plan.py (layouts compared); notebooks/10_plan_a_deployment.ipynb §1"),
        Concept("operating-batch", 10, "How does the planner pick the operating batch, and why is it not simply the "
                "largest batch that fits?", _operating_batch_answer,
                "lecture_lib/plan.py _operating_batch; lecture_lib/roofline.py decode_bound; "
                "notebooks/10_plan_a_deployment.ipynb §1"),
        Concept("no-balance-with-kv", 10, "Why can long-context decode stay memory-bound at every batch size?",
                _kv_balance_answer, "lecture_lib/roofline.py balance_batch_with_kv; lecture_lib/plan.py (decode); "
                "notebooks/10_plan_a_deployment.ipynb §1"),
    )


def number_cards(chapter: int) -> list[Card]:
    """The chapter's :data:`KEY_NUMBERS`, each computed now."""
    chapter = _chapter_number(chapter)
    cards = []
    for item in _key_numbers():
        if item.chapter != chapter:
            continue
        cards.append(Card(key=f"number:{item.chapter}.{item.key}", chapter=chapter, kind="number",
                          front=f"Chapter {chapter} · key number<br>{_text(item.question)}",
                          back=_text(item.show(float(item.value()))),
                          source=_sources(item.source(), item.fields)))
    return cards


# ================================================================================ concepts

def _statements(solutions_dir: Path | None, chapter: int) -> dict[str, str]:
    """Problem id -> the statement markdown (heading and hint removed), from solutions/NN_*.ipynb."""
    if solutions_dir is None:
        return {}
    paths = sorted(Path(solutions_dir).glob(f"{chapter:02d}_*.ipynb"))
    if not paths:
        return {}
    import nbformat

    from . import exercises

    notebook = nbformat.read(paths[0], as_version=4)
    found = {}
    for problem in exercises.problems(notebook, where=paths[0].name):
        text = notebook.cells[problem.heading].source.split("\n", 1)[1] if "\n" in \
            notebook.cells[problem.heading].source else ""
        text = re.sub(r"<details>.*?</details>", "", text, flags=re.S)
        text = re.sub(r"^\*\*Level:\*\*.*$", "", text, count=1, flags=re.M)
        found[problem.problem_id] = text.strip()
    return found


_OPTION_LINE = re.compile(r'^\s*[-*]\s*`"?([^`"]+)"?`\s*[:—–-]\s*(.+?)\s*$', re.M)


def _option_texts(statement: str) -> dict[str, str]:
    """The options a statement spells out, one per bullet line (``- `"b"`: the compute and the KV fetch``):
    ``{"b": "the compute and the KV fetch", ...}``; empty when the statement lists none that way."""
    return {match.group(1): match.group(2) for match in _OPTION_LINE.finditer(statement)}


def _repo_path(path) -> str:
    """``path`` relative to the checkout, with forward slashes (the file a card cites)."""
    path = Path(path).resolve()
    try:
        return path.relative_to(_REPO).as_posix()
    except ValueError:
        return path.as_posix()


def _problem_module(problem, chapter: int) -> str:
    """The file that registers ``problem`` (its expected-answer function's module), as a checkout path."""
    module = sys.modules.get(getattr(problem.expected, "__module__", "") or "")
    if module is not None and getattr(module, "__file__", None):
        return _repo_path(module.__file__)
    from . import problems

    return _repo_path(Path(problems.__file__).parent / f"ch{chapter:02d}.py")


def _solutions_notebook(solutions_dir: Path | None, chapter: int) -> str:
    """The chapter's solutions notebook as a checkout path (the repository's, when no folder is given)."""
    folder = solutions_dir if solutions_dir is not None else _REPO / "solutions"
    paths = sorted(Path(folder).glob(f"{chapter:02d}_*.ipynb"))
    return _repo_path(paths[0]) if paths else "solutions/"


def concept_cards(chapter: int, *, solutions_dir: Path | None = None) -> list[Card]:
    """A card per choice problem of the chapter (statement and options; back: the answer, with its option's
    text), then the chapter's :data:`CONCEPTS` questions."""
    from . import checks

    chapter = validate.integer("chapter", chapter, minimum=0, maximum=validate.last_chapter())
    solutions_dir = _directory(solutions_dir)
    statements = _statements(solutions_dir, chapter)
    notebook = _solutions_notebook(solutions_dir, chapter)
    cards = []
    for problem_id in checks.problem_ids(chapter=chapter):
        problem = checks.PROBLEMS[problem_id]
        if problem.kind != "choice":
            continue
        statement = statements.get(problem_id)
        if statement is None:
            statement = ("Options: " + ", ".join(problem.options)
                         + f"\n(The statement and each option's text are in `{notebook}`.)")
        answer = str(problem.expected())
        spelled = _option_texts(statement).get(answer)
        back = f"<b>{html.escape(answer)}</b>" + (f": {_markdown(spelled)}" if spelled else "")
        cards.append(Card(key=f"concept:{problem_id}", chapter=chapter, kind="concept",
                          front=f"<b>Problem {problem_id} · {html.escape(problem.title)}</b><br>{_markdown(statement)}",
                          back=back,
                          source=f"{_problem_module(problem, chapter)}; {notebook} for the worked reasoning"))
    for item in _concepts():
        if item.chapter == chapter:
            cards.append(Card(key=f"concept:{item.chapter}.{item.key}", chapter=chapter, kind="concept",
                              front=f"Chapter {chapter} · concept<br>{_text(item.question)}",
                              back=_text(item.answer()), source=_text(item.source)))
    return cards


# ================================================================================ the deck

def chapters() -> list[int]:
    return sorted(CHAPTER_MODULES)


def cards(*, solutions_dir: Path | None = None, concepts: bool = True) -> list[Card]:
    """Every card of every chapter, in chapter order (formulas, numbers, concepts)."""
    solutions_dir = _directory(solutions_dir)
    concepts = validate.boolean("concepts", concepts)
    found = []
    for chapter in chapters():
        found += formula_cards(chapter) + number_cards(chapter)
        if concepts:
            found += concept_cards(chapter, solutions_dir=solutions_dir)
    found = _one_card_per_formula(found)
    keys = [card.key for card in found]
    duplicates = sorted({key for key in keys if keys.count(key) > 1})
    if duplicates:
        raise ValueError(f"card keys must be unique, got duplicates {duplicates}")
    return found


def _one_card_per_formula(found: list[Card]) -> list[Card]:
    """The cards with each formula once: a Formula that several modules define with the same right-hand
    side (``roofline.T_WEIGHTS``, ``moe.T_WEIGHTS``, ``pipeline_memory.T_WEIGHTS``; all-gather and
    reduce-scatter on one ring) keeps its first card, in chapter order, whose back names the others."""
    first: dict[str, int] = {}
    also: dict[int, list[str]] = {}
    kept = []
    for card in found:
        if card.kind != "formula":
            kept.append(card)
            continue
        if card.back in first:
            name = card.key.removeprefix("formula:")
            also.setdefault(first[card.back], []).append(f"<code>{html.escape(name)}</code> (Chapter {card.chapter})")
            continue
        first[card.back] = len(kept)
        kept.append(card)
    for index, names in also.items():
        card = kept[index]
        kept[index] = dataclasses.replace(card, back=card.back + "<br><small>The same formula in the library as "
                                          + ", ".join(names) + ".</small>")
    return kept


def _chapter_title(chapter: int) -> str:
    paths = sorted((_REPO / "notebooks").glob(f"{chapter:02d}_*.ipynb"))
    if paths:
        import nbformat

        first = nbformat.read(paths[0], as_version=4).cells[0].source.split("\n", 1)[0]
        title = re.sub(r"^#+\s*", "", first).strip()
        if title:
            return title
    return f"Chapter {chapter}"


def _model_():
    import genanki

    return genanki.Model(
        MODEL_ID, "lecture_lib card",
        fields=[{"name": "Front"}, {"name": "Back"}, {"name": "Source"}, {"name": "Key"}],
        templates=[{"name": "Card 1", "qfmt": "{{Front}}",
                    "afmt": "{{FrontSide}}<hr id=answer>{{Back}}<br><br><small>{{Source}}</small>"}],
        css=".card { font-family: sans-serif; font-size: 18px; text-align: left; }")


def deck_id(chapter: int) -> int:
    """Each chapter's sub-deck id: fixed, so re-import lands in the same deck."""
    chapter = _chapter_number(chapter)
    return ROOT_DECK_ID + chapter


def export(out, *, solutions_dir=None, concepts: bool = True) -> dict[int, int]:
    """Write the Anki package ``out`` (.apkg); returns the number of notes per chapter.

    ``solutions_dir`` (default: the repository's ``solutions/`` when present) supplies the
    statements of the conceptual cards.
    """
    try:
        import genanki
    except ImportError:
        raise ImportError("exporting flashcards needs genanki: pip install -e '.[flashcards]' "
                          "(or pip install genanki)") from None
    out = Path(out)
    if out.suffix != ".apkg":
        raise ValueError(f"out must be a file name ending in .apkg, got {str(out)!r}")
    if solutions_dir is None and (_REPO / "solutions").is_dir():
        solutions_dir = _REPO / "solutions"
    model = _model_()
    decks, counts = {}, {}
    for card in cards(solutions_dir=solutions_dir, concepts=concepts):
        if card.chapter not in decks:
            decks[card.chapter] = genanki.Deck(
                deck_id(card.chapter), f"{DECK_NAME}::{card.chapter:02d} {_chapter_title(card.chapter)}")
        note = genanki.Note(model=model, fields=[card.front, card.back, card.source, card.key],
                            guid=card.guid, tags=[f"chapter{card.chapter:02d}", card.kind])
        decks[card.chapter].add_note(note)
        counts[card.chapter] = counts.get(card.chapter, 0) + 1
    out.parent.mkdir(parents=True, exist_ok=True)
    genanki.Package(list(decks.values())).write_to_file(str(out))
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lecture_lib.practice.flashcards",
                                     description="Export the course's Anki deck (formulas, numbers, concepts).")
    parser.add_argument("out", type=Path, help="the .apkg file to write")
    parser.add_argument("--solutions", type=Path, default=None,
                        help="folder of solutions/NN_*.ipynb for the problem statements (default: the repo's)")
    parser.add_argument("--no-concepts", action="store_true",
                        help="leave out the conceptual cards (they hold the choice problems' answers)")
    args = parser.parse_args(argv)
    try:
        counts = export(args.out, solutions_dir=args.solutions, concepts=not args.no_concepts)
    except (ImportError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for chapter, count in sorted(counts.items()):
        print(f"chapter {chapter}: {count} cards")
    print(f"wrote {args.out} ({sum(counts.values())} cards); import it in Anki (File > Import)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
