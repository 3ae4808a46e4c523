"""Bad input, fuzzed (DESIGN.md, "Bad input"): every public function and every Formula of lecture_lib.

Both are discovered by walking the package, so a function or Formula added later is fuzzed without
anyone listing it. Each one first gets a *baseline*: a call that works (its defaults, plus a value
found for each required parameter from a short list of candidates). Hypothesis then replaces one
parameter at a time with a bad or extreme value, and the outcome must be one of:

- a ``ValueError`` that names the parameter (or a ``KeyError`` for a name that is not known);
- for a value of the wrong type (complex, text, bool, datetime, None, object arrays...), nothing
  else: accepting it silently is a failure;
- for a real number out of the usual range (0, -1, 1e300, 1e308, 1e-320, 10**400, 10**9...) or of
  another real type (NumPy float16/int8/uint64 scalars, ``Fraction``, ``Decimal``), a refusal as
  above or a result whose every number is finite and >= 0 (``inf`` only where a function documents it).

Two more sweeps: every working call is repeated with each number of its baseline written in another
exact type (``np.float16(4096)``, ``np.int8(5)``, ``np.uint64(7)``, ``Fraction``, ``Decimal``), and
the answer must be the same (a function that computes with the raw value instead of the validated
float overflows in float16 or int8); and the public data classes are built with one bad field at a
time, which must be refused or give an object whose every property is finite and >= 0.

Every call runs under a wall-clock alarm, so a hang fails the test instead of stalling it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import decimal
import fractions
import functools
import importlib
import inspect
import json
import math
import numbers
import os
import pkgutil
import re
import signal
import tempfile
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lecture_lib
from lecture_lib.formula import Formula

pytestmark = pytest.mark.slow      # every public function and Formula, fed bad values by Hypothesis

CALL_SECONDS = 3.0

# Functions that do a lot of honest work in one call, with the CPU seconds they get instead of
# CALL_SECONDS and why. The limit still fails a real hang; it only stops a slow baseline from
# passing for one (``find_baseline`` then finds none and the function would go unfuzzed).
SLOW = {
    "practice.flashcards.cards": (30.0, "builds every card of the course: imports every chapter's problem module, "
                               "typesets every Formula, solves each chapter's key numbers with SymPy and reads "
                               "the solution notebooks (1 to 3 s of CPU on an idle machine, more under load)"),
}


def seconds_for(label: str) -> float:
    """The CPU seconds one call of ``label`` may take: :data:`SLOW`'s figure, else CALL_SECONDS."""
    return SLOW.get(label, (CALL_SECONDS, ""))[0]


def warm_up() -> None:
    """Pay matplotlib's one-time setup (font list and cache, the Agg canvas: a second or more, far more
    with a cold cache) before any call is timed, so it is not charged to whichever function draws the
    first figure (explorers.pipeline_memory.decode_loop_figure, in the order functions are met)."""
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots()
    axis.text(0.5, 0.5, "warm-up")
    axis.broken_barh([(0, 1)], (0, 1))
    figure.canvas.draw()
    plt.close(figure)

# Functions whose input is not data: widget and figure plumbing, notebook tooling, decorators and
# SymPy helpers (each is tested in its own module's tests). Everything else public is fuzzed.
NOT_DATA = {
    "explorers.base": "builds widgets from literal slider settings written in the explorer code",
    "explorers.sliders": "builds widgets from literal slider settings written in the explorer code",
    "explorers.plots": "matplotlib styling helpers",
    "explorers.ahead": "widget plumbing: predicted frames keyed by the page's slider positions (tests/test_ahead.py)",
    "explorers.live_figure": "matplotlib renderer internals (a figure and its artists in; tests/test_live_figure.py)",
    "practice.exercises": "notebook tooling over files and cells (tests/test_exercises.py)",
    "practice.registry.register": "takes a Problem object written by a course author (tests/test_checks.py)",
    "explorers.tables.html_table": "lays out cells the table functions already escaped (tests/test_tables.py)",
    "formula.same": "compares SymPy expressions", "formula.show": "typesets SymPy expressions",
    "formula.lambdified": "SymPy's lambdify on SymPy expressions (tests/test_formula.py)",
    "formula.solve": "SymPy's solve on SymPy equations, remembered on disk (tests/test_formula.py: text refused)",
    "formula.simplify": "SymPy's simplify, remembered on disk (tests/test_formula.py: text refused)",
    "catalogue.loose_name": "string normaliser used by every preset lookup",
    "practice.checks.check": "never raises by design; fuzzed by test_check_never_raises_on_any_answer",
    "validate": "the checks themselves (tests/test_units_and_validate.py); every fuzzed call goes through them",
    "reversible.feistel_xor": "takes a round function", "reversible.feistel_xor_inverse": "takes a round function",
    "reversible.feistel_add": "takes a round function", "reversible.feistel_add_inverse": "takes a round function",
    "reversible.gf2_derivative": "takes a round function",
    "practice.flashcards.main": "command-line entry point; tests/test_flashcards.py runs it",
    "practice.progress.main": "command-line entry point; tests/test_progress.py runs it",
    "plan.main": "command-line entry point; tests/test_plan.py runs it with good and bad arguments",
    "practice.flashcards.export": "writes the Anki file behind flashcards.main (tests/test_flashcards.py); its inputs are fuzzed through cards()",
    "practice.progress.record": "check()'s notebook hook: never raises by design (tests/test_progress.py), like checks.check",
    "explorers.predict.cover": "a widget over Prediction objects and other widgets (tests/test_reveals_and_readouts.py)",
    "practice.grading.configure": "writes nbgrader's configuration object (tests/test_graded_work.py)",
    "practice.notebook_client": "wraps a kernel client's channels (tests/test_notebook_client.py)",
    "practice.grading.recorded_answer": "reads a notebook cell's outputs (tests/test_graded_work.py)",
    "practice.grading.verdict_outputs": "builds a check cell's outputs from a verdict (tests/test_graded_work.py)",
    "practice.sandbox.command": "wraps a kernel's command for bwrap; the sandbox's tests run it (tests/test_sandbox.py)",
    "practice.sandbox.main": "command-line entry point; tests/test_sandbox.py runs it",
    "practice.answers.record": "a notebook cell's hook; takes any object and never judges it (tests/test_graded_work.py)",
    "practice.gradebook_export.main": "command-line entry point; tests/test_gradebook_export.py runs it",
    "practice.checks.verdict": "judges any object, like check(); its answers are fuzzed through the grader's tests "
                               "(tests/test_graded_work.py) and test_check_never_raises_on_any_answer",
    "practice.grading.judge": "takes a recorded payload (a dict from a notebook's output), fuzzed in tests/test_graded_work.py",
    "practice.answers.said": "formats a recorded payload for record() (tests/test_graded_work.py)",
    "safe_srepr.loads": "reads hostile text by design; tests/test_formula.py feeds it code in srepr form",
    "safe_srepr.dumps": "sympy.srepr of any value, written for safe_srepr.loads (tests/test_formula.py round-trips it)",
    "practice.grading.safe_cell": "cleans a notebook cell of a submission (tests/test_graded_work.py)",
    "practice.gradebook_export.read_gradebook": "reads an nbgrader gradebook.db (tests/test_gradebook_export.py)",
    "practice.gradebook_export.render": "formats the grades read from a gradebook (tests/test_gradebook_export.py)",
    "practice.gradebook_export.write": "reads a gradebook and writes a file (tests/test_gradebook_export.py)",
    "explorers.lab": "draws a measure.Profile the lab measured (tests/test_measure.py), whose inputs are fuzzed here",
    "hardware.register_chip": "changes the session's chip registry, which other tests read; tests/test_measure.py",
    "hardware.forget_chip": "changes the session's chip registry, which other tests read; tests/test_measure.py",
    "measure.torch_profile": "needs PyTorch (not a test dependency); tests/test_measure.py runs it where installed",
    "measure.torch_decode_times": "needs PyTorch (not a test dependency); tests/test_measure.py runs it where installed",
}

# Parameters where None is a documented value although the parameter has no default.
NONE_ALLOWED = {("explorers.predict.parse_guess", "text"): "None is an empty answer box",
                ("explorers.predict.verdict", "guess"): "None is no guess made",
                ("plan.plan", "layout"): "None pools the devices into one big chip (documented; --layout pooled)",
                ("measurements.realistic_table", "moe"): "None is every comparable row, MoE and dense (documented)",
                ("measurements.realistic_table_html", "moe"): "None is every comparable row (documented)"}

# Text parameters that also read bytes as UTF-8 text, by design: bytes there are not a wrong type.
BYTES_ARE_TEXT = {("symbols.parse", "text"): "parse() decodes bytes (errors='replace') as checks.check does an "
                                             "answer, and formula's _to_sympy hands it text as str or bytes"}

# Parameters that only label an error message (the resolvers' ``parameter``).
LABELS = {"parameter"}

# Results that are documented as possibly infinite or negative for valid input.
MAY_BE_INFINITE = {"roofline.balance_batch_with_kv"}   # documented: no balance point past the Goldilocks context
MAY_BE_NEGATIVE_FORMULAS = {"pipeline_memory.MAX_MICRO_BATCH"}   # documented: < 0 when the weights overflow HBM
MAY_BE_NEGATIVE = {"scaling.inference_aware_optimum",   # "saving" < 0 when the optimum costs more
                   "reversible.revnet_objective", "reversible.finite_difference",   # an objective and a gradient
                   "reversible.block_forward", "reversible.block_backward", "reversible.revnet_forward",
                   "reversible.revnet_inverse", "reversible.revnet_backward",       # activations and gradients
                   "reversible.random_blocks", "TinyMoE.expert", "TinyMoE.forward", "MLP.__call__",
                   "explorers.predict.parse_guess"}   # a parser: "-3" reads as -3 (verdict() answers a guess <= 0)


def _modules():
    """Every module of the three rooms but the problem sets (data, checked by tests/test_checks.py)."""
    names = sorted(info.name for info in pkgutil.walk_packages(lecture_lib.__path__, "lecture_lib.")
                   if not info.ispkg)
    return [importlib.import_module(name) for name in names if not name.startswith("lecture_lib.practice.problems.")]


def _short(module) -> str:
    """The module's name inside the package: "roofline", "explorers.roofline", "practice.checks"."""
    return module.__name__.removeprefix("lecture_lib.")


def public_functions() -> dict:
    found = {}
    for module in _modules():
        if _short(module) in NOT_DATA:
            continue
        for name, function in vars(module).items():
            if (inspect.isfunction(function) and not name.startswith("_") and function.__module__ == module.__name__
                    and f"{_short(module)}.{name}" not in NOT_DATA):
                found[f"{_short(module)}.{name}"] = function
    return found


def public_formulas() -> dict:
    found, seen = {}, set()
    for module in _modules():
        for name, value in vars(module).items():
            if isinstance(value, Formula) and not name.startswith("_") and id(value) not in seen:
                seen.add(id(value))
                found[f"{_short(module)}.{name}"] = value
    return found


def _instances():
    """One object of every public class whose methods take data: presets and the toy models."""
    from lecture_lib import context, hardware, models, moe, pipeline, pricing, reversible, scaling

    return {"Chip": hardware.get("H100"), "System": hardware.get_system("GB200 NVL72"),
            "Model": models.get("deepseek-v3"), "PriceSheet": pricing.get(pricing.names()[0]),
            "Tier": context.TIERS[0], "LossFit": scaling.get_fit(),
            "ToyFeistelCipher": reversible.toy_cipher(rounds=4), "MLP": reversible.random_mlp(n_in=4, n_hidden=8, n_out=4),
            "TinyMoE": moe.TinyMoE.random(),
            "Routing": moe.random_routing(n_tokens=16, placement=moe.Placement(16, 2, 4), k=2),
            "Timeline": pipeline.simulate(schedule="gpipe", stages=4, microbatches=4),
            "Placement": moe.Placement(16, 2, 4), "RevNet": reversible.random_revnet(),
            "Measurement": _measurement(), "Deployment": _deployment()}


def _measurement():
    from lecture_lib import measurements

    return measurements.MEASUREMENTS[0]


def _deployment():
    from lecture_lib import collectives, hardware

    return collectives.deployment(hardware.get("H100"), n_chips=8)


def public_methods() -> dict:
    """``Class.method`` -> bound method, for every public method that takes an argument."""
    found = {}
    for kind, instance in _instances().items():
        for name in dir(type(instance)):
            attribute = getattr(type(instance), name)
            if name.startswith("_") or not inspect.isfunction(attribute):
                continue
            method = getattr(instance, name)
            if any(p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in inspect.signature(method).parameters.values()):
                found[f"{kind}.{name}"] = method
    return found


FUNCTIONS = {**public_functions(), **public_methods()}
FORMULAS = public_formulas()


# ================================================================================ time limit

class Hang(Exception):
    pass


@contextlib.contextmanager
def time_limit(seconds: float = CALL_SECONDS):
    """``seconds`` of CPU time (so a busy machine does not turn a slow call into a "hang"), and ten
    times that of wall-clock time (for a call that blocks without computing)."""
    def alarm(signum, frame):
        raise Hang(f"no answer within {seconds} s of CPU time" if signum == signal.SIGPROF
                   else f"no answer within {10 * seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm), signal.signal(signal.SIGPROF, alarm)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.setitimer(signal.ITIMER_REAL, 10 * seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous[0])
        signal.signal(signal.SIGPROF, previous[1])


# ================================================================================ baselines

def _presets():
    from lecture_lib import collectives, hardware, measurements, models, moe, pipeline, pricing, reversible

    cipher = reversible.toy_cipher(rounds=4)
    placement = moe.Placement(n_experts=16, experts_per_gpu=2, gpus_per_rack=4)
    return {
        "chip": ["H100"], "model": ["llama-3-70b", "deepseek-v3"], "system": ["GB200 NVL72"],
        "sheet": [pricing.names()[0]], "cipher": [cipher], "net": [reversible.random_revnet()],
        "timeline": [pipeline.simulate(schedule="gpipe", stages=4, microbatches=4)],
        "placement": [placement],
        "routing": [moe.random_routing(n_tokens=16, placement=placement, k=2)],
        "curve": [np.linspace(0.0, 0.5, 8)], "bits": [np.zeros((4, 8), dtype=np.uint8)],
        "blocks": [np.arange(8, dtype=np.uint64)], "y": [np.ones(4)], "z": [np.ones(4)],
        "hardware": [hardware.get("H100")], "m": [models.get("llama-3-70b")],
        "strategy": ["store", "remat", "reversible", "segments"], "schedule": ["gpipe", "1f1b"],
        "kind": ["residual", "input", "allreduce"], "weight_format": ["fp8", "bf16"], "dtype": [np.float32],
        "contexts": [np.array([1e3, 1e5])], "hold_times": [np.array([1.0, 60.0])], "hold_time": [60.0],
        "name": ["H100", "GB200 NVL72", "deepseek-v3", "HBM"], "key": [pricing.names()[0], measurements.MEASUREMENTS[0].key],
        "compute_dtype": ["bf16"], "fmt": ["bf16"], "x": [np.linspace(-1.0, 1.0, 64).reshape(4, 16)], "n_params": [1e9], "target_loss": [2.5], "values": [np.arange(8, dtype=np.uint64)],
        "unit": [hardware.get("H100"), hardware.get_system("GB200 NVL72")], "deployment": [collectives.deployment(hardware.get("H100"), n_chips=8)],
        "levels": [[(8, 450e9), (2, 400e9)]],
        "layout": ["dp", "tp", "ep"], "bytes_total": [1e9], "noun": ["GPU"],
        # hf_config.read_config / from_hf_config: a config dict, the same as a file path and as JSON text.
        "source": [dict(HF_CONFIG), _hf_config_file()], "text": ["2k", "2*B", json.dumps(HF_CONFIG)],
    }


#: The count-bearing fields of meta-llama/Llama-3.1-8B's config.json
#: (https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json; tests/test_hf_config.py).
HF_CONFIG = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
             "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
             "tie_word_embeddings": False, "head_dim": 128}


@functools.lru_cache(maxsize=None)
def _hf_config_file() -> str:
    """HF_CONFIG written to a temporary config.json, for the readers that take a path."""
    path = os.path.join(tempfile.mkdtemp(prefix="lecture-fuzz-hf-"), "config.json")
    with open(path, "w", encoding="utf-8") as file:
        json.dump(HF_CONFIG, file)
    return path


def _explicit():
    """Baselines for functions whose arguments depend on each other (arrays shaped for one network)."""
    from lecture_lib import hardware, reversible

    net = reversible.random_revnet()
    x1 = x2 = d_y1 = d_y2 = np.linspace(-1.0, 1.0, 2 * net.width).reshape(2, net.width)
    streams = dict(net=net, x1=x1, x2=x2, d_y1=d_y1, d_y2=d_y2)
    params = net.f_params[0]
    x = np.linspace(-1.0, 1.0, 2 * net.width).reshape(2, net.width) + 0.1
    _, cache = reversible.block_forward(params, x)
    name = reversible.BLOCK_PARAMS[0]
    return {
        "context.cheapest_tier": dict(hold_time=60.0, bytes_tok=1e5, n_active=37e9, flops=1e15, price_chip_hour=2.0),
        "hardware.custom_chip": dict(base="MI300X", hbm_capacity=256e9),
        "plan.scale_up_link_name": dict(chip=hardware.get("MI325X")),
        "hardware.chip_from_json": dict(source={"name": "MI325X-like", "base": "MI300X", "hbm_gb": 256,
                                                "hbm_tb_s": 6}),
        "practice.variants.draw": dict(problem_id="4.1", student="alice"),
        "practice.variants.share_alike": dict(problem_id="4.1"),
        "practice.variants.everything_for": dict(student="alice"),
        "practice.checks.python_form": dict(text="2·8·7168"),
        "practice.answers.your_numbers": dict(problem_id="4.1"),
        "reversible.revnet_forward": dict(net=net, x1=x1, x2=x2),
        "reversible.revnet_inverse": dict(net=net, y1=x1, y2=x2),
        "reversible.revnet_backward": streams, "reversible.revnet_objective": streams,
        "reversible.finite_difference": dict(**streams, layer=0, block="f", name=name,
                                             index=(0,) * np.ndim(params[name])),
        "reversible.block_forward": dict(params=params, x=x),
        "reversible.block_backward": dict(params=params, cache=cache, d_out=x),
        "reversible.cache_bytes": dict(cache=cache),
        "practice.progress.load": dict(file=os.path.join(tempfile.gettempdir(), "lecture-fuzz-no-progress.json")),
        "hf_config.read_config": dict(source=_hf_config_file()),   # a path here; a dict for from_hf_config
        "hf_config.from_hf_config": dict(source=_hf_config_file()),
        "units.plural": dict(count=3, word="round"),
        # Issue 30: the planner's new inputs and Chapter 8's band by class.
        "plan.plan": dict(model="llama-3-70b", system="GB200 NVL72", price_per_gpu_hour=2.0, len_ctx=4096.0),
        "plan.explicit_layout": dict(model="llama-3-70b", deployment=_deployment8()),
        "plan.default_formats": dict(model="llama-3-70b", chip="H100"),
        "measurements.comparable": dict(row=_first_row()),
        "measurements.reality_band": dict(kind="serving", moe=False, regime="memory"),
        "plan.flag_message": dict(message="len_ctx must be > 0"),
        "plan.quantized_format": dict(value="int4-g64"),
        # The lab's (numbered 11): measurements small enough to repeat for every bad value.
        "measure.profile": dict(mode="smoke", threads=1),
        "measure.decode_times": dict(batches=(1, 4), weight_mb=16, repeats=1),
        "measure.peak_flops": dict(dtype="float32", size=128, repeats=2),
        "measure.read_bandwidth": dict(mb=8, repeats=2, threads=1),
        "measure.measured_knee": dict(batches=[1, 2, 4, 8], seconds=[0.01, 0.01, 0.012, 0.024]),
        "measure.ends_knee": dict(batches=[1, 2, 4, 8], seconds=[0.01, 0.01, 0.012, 0.024]),
        "measure.gemv_bandwidth": dict(mb=8, repeats=2),
        "measure.predicted_times": dict(batches=[1.0, 64.0], n_params=64e6, flops=1.6e11, mem_bw=2.5e10),
        "measure.load_profile": dict(source=_lab_profile()),
        "measure.torch_predicted": dict(result=_gpu_run(), fmt="bf16"),
    }


def _lab_profile():
    from lecture_lib import measure

    return measure.example_profile().as_dict()


def _gpu_run():
    """A made-up measure.torch_profile() result (the lab's GPU run; no PyTorch needed to read one)."""
    from lecture_lib import measure

    stat = measure.Stat(1e12, 0.9e12, 1.1e12, "FLOP/s", (0.9e12, 1e12, 1.1e12))
    return {"device": "cuda", "flops": {"bf16": stat}, "bandwidth": measure.Stat(3e12, 2.9e12, 3.1e12, "B/s"),
            "notes": [], "decode": {"bf16": {"batches": [1, 16, 256], "seconds": [1e-3, 1e-3, 1.2e-3],
                                             "n_params": 1e9, "bytes_param": 2}}}


def _deployment8():
    from lecture_lib import collectives, hardware

    return collectives.deployment(hardware.get("H100"), n_chips=8)


def _first_row():
    from lecture_lib import measurements

    return measurements.MEASUREMENTS[0]


NUMBER_CANDIDATES = [4, 2.0, 0.5, 1, 64, 4096, 1e4]


def _message_names(error: Exception, names) -> str | None:
    text = str(error)
    for name in sorted(names, key=len, reverse=True):
        if re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", text):
            return name
    return None


def find_baseline(function, presets, explicit=None, seconds: float = CALL_SECONDS):
    """Keyword arguments that make ``function`` return normally (within ``seconds`` of CPU), or None."""
    if explicit is not None:
        with time_limit(seconds):
            function(**explicit)
        return explicit
    signature = inspect.signature(function)
    required = [p for p in signature.parameters.values()
                if p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    options = {p.name: presets.get(p.name, []) + NUMBER_CANDIDATES for p in required}
    chosen = {name: 0 for name in options}
    for _ in range(40):
        kwargs = {name: options[name][index] for name, index in chosen.items()}
        try:
            with time_limit(seconds):
                function(**kwargs)
            return kwargs
        except (ValueError, KeyError, TypeError, Hang) as error:
            culprit = _message_names(error, options) if not isinstance(error, Hang) else None
            culprit = culprit or next(iter(options), None)
            if culprit is None or chosen[culprit] + 1 >= len(options[culprit]):
                return None
            chosen[culprit] += 1
        except Exception:
            return None
    return None


# ================================================================================ bad values

class Opaque:
    def __repr__(self):
        return "<Opaque>"


WRONG_TYPE = [
    None, "4", "False", "", b"4", True, False, np.bool_(True), 3 + 0j, 2j, np.complex128(4),
    np.datetime64("2026-01-01"), datetime.date(2026, 1, 1), [1, "2"], ["4"], np.array(["4"]),
    np.array([4], dtype=object), np.array([4 + 1j]), Opaque(), {}, float("nan"), float("inf"),
    -float("inf"), np.array([1.0, float("nan")]),
]
EXTREME = [0, -1, -0.5, 10**400, 1e300, 1e308, 10**9, 10**15, 1e-300, 1e-320, 0.5, 2.5, np.float32(3),
           np.int64(7), np.float16(2), np.float16(4096), np.int8(5), np.int8(-3), np.uint64(7), np.uint64(2**63),
           fractions.Fraction(3, 2), decimal.Decimal("2.5"), np.array([1.0, 2.0]), [3, 4]]


def _kind_for(kind: str, value, usual, annotation=None, bytes_ok: bool = False) -> str:
    """Text where text belongs (a name, a unit: the usual value is text, or the parameter is annotated
    ``str | None``; bytes too where :data:`BYTES_ARE_TEXT` says so) and a bool where a flag belongs are
    not wrong types: they may be refused or used."""
    if isinstance(value, str) and (isinstance(usual, str) or re.search(r"\bstr\b", str(annotation or ""))):
        return "extreme"
    if isinstance(value, bytes) and bytes_ok:
        return "extreme"
    if isinstance(value, (bool, np.bool_)) and isinstance(usual, bool):   # a real flag is the right type
        return "extreme"
    return kind


def bad_values():
    return st.one_of(st.sampled_from(WRONG_TYPE).map(lambda v: ("wrong", v)),
                     st.sampled_from(EXTREME).map(lambda v: ("extreme", v)),
                     st.floats(allow_nan=False, allow_infinity=False).map(lambda v: ("extreme", v)),
                     st.integers(min_value=-(10**12), max_value=10**12).map(lambda v: ("extreme", v)),
                     st.text(max_size=6).map(lambda v: ("wrong", v)),
                     st.complex_numbers(allow_nan=False, allow_infinity=False).filter(lambda c: c.imag != 0)
                     .map(lambda v: ("wrong", v)))


def _numbers_in(result):
    """Every real number inside a result (numbers, arrays, dicts, lists, tuples; other objects skipped)."""
    if isinstance(result, (bool, np.bool_, str, bytes)) or result is None:
        return []
    if isinstance(result, numbers.Real):
        try:
            return [float(result)]
        except OverflowError:   # a huge int passed through unchecked
            return [math.inf]
    if isinstance(result, np.ndarray) and result.dtype.kind in "iuf":
        return [float(v) for v in result.ravel()[:1000]]
    if isinstance(result, dict):
        return [v for item in result.values() for v in _numbers_in(item)]
    if isinstance(result, (list, tuple)):
        return [v for item in result[:1000] for v in _numbers_in(item)]
    return []


def judge(label: str, parameter: str, kind: str, value, call, *, may_be_negative: bool = False):
    """Run ``call`` and return a description of what went wrong, or None when the outcome is allowed."""
    try:
        with time_limit(seconds_for(label)):
            result = call()
    except Hang as error:
        return f"{label}({parameter}={value!r}) hangs: {error}"
    except ValueError as error:
        if parameter not in str(error):
            return f"{label}({parameter}={value!r}): ValueError does not name {parameter!r}: {error}"
        return None
    except KeyError as error:
        text = str(error)
        if parameter not in text and "known" not in text:
            return f"{label}({parameter}={value!r}): KeyError names neither {parameter!r} nor the known names: {text}"
        return None
    except Exception as error:
        return f"{label}({parameter}={value!r}) raises {type(error).__name__}: {error}"
    finally:
        import matplotlib.pyplot as plt

        plt.close("all")
    if kind == "wrong" and not (label.startswith("units.") and isinstance(value, float) and math.isinf(value)):
        return f"{label}({parameter}={value!r}) accepts a value of the wrong type"   # units shows inf as "inf"
    found = _numbers_in(result)
    if any(math.isnan(v) for v in found):
        return f"{label}({parameter}={value!r}) returns NaN"
    if label not in MAY_BE_INFINITE and any(math.isinf(v) for v in found):
        return f"{label}({parameter}={value!r}) returns inf"
    if not may_be_negative and label not in MAY_BE_NEGATIVE | MAY_BE_NEGATIVE_FORMULAS and any(v < 0 for v in found):
        return f"{label}({parameter}={value!r}) returns a negative number"
    return None


# ================================================================================ the same number, another type

VARIANT_SECONDS = 0.5


def exact_variants(value) -> list:
    """``value`` written in other real types that hold it exactly: NumPy float16/float32/int8/int64/uint64
    scalars, ``Fraction`` and ``Decimal`` (each only where the conversion loses nothing)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or isinstance(value, np.ndarray):
        return []
    plain = float(value)
    if not math.isfinite(plain):
        return []
    found = []
    for dtype in (np.float16, np.float32, np.int8, np.int64, np.uint64):
        if dtype in (np.int8, np.int64, np.uint64) and plain != int(plain):
            continue
        try:
            with np.errstate(all="ignore"):
                cast = dtype(int(plain) if plain == int(plain) and dtype not in (np.float16, np.float32) else plain)
        except (OverflowError, ValueError):
            continue
        if math.isfinite(float(cast)) and float(cast) == plain and type(cast) is not type(value):
            found.append(cast)
    return found + [fractions.Fraction(plain), decimal.Decimal(repr(plain))]


def _shape(result):
    """A result as nested plain data for comparison: numbers as floats, arrays as lists, objects by their fields."""
    if isinstance(result, (bool, np.bool_, str, bytes)) or result is None:
        return result
    if isinstance(result, numbers.Real):
        return float(result)
    if isinstance(result, np.ndarray):
        return [_shape(v) for v in result.ravel()[:1000].tolist()] if result.dtype.kind in "iufb" else repr(result)
    if isinstance(result, dict):
        return {repr(k): _shape(v) for k, v in result.items()}
    if isinstance(result, (list, tuple)):
        return [_shape(v) for v in result[:1000]]
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        return {f.name: _shape(getattr(result, f.name, None)) for f in dataclasses.fields(result)}
    return type(result).__name__


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-300)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


def numeric_arguments(function, baseline) -> dict:
    """The call's numbers (the baseline's and the numeric defaults), by parameter name."""
    found = {}
    for name, p in inspect.signature(function).parameters.items():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or name in LABELS:
            continue
        value = baseline.get(name, p.default)
        if exact_variants(value):
            found[name] = value
    return found


def judge_variants(label, function, baseline) -> list[str]:
    """Every number of a working call, retyped: the same answer, or a ValueError naming the parameter."""
    def run(kwargs):
        with time_limit():
            try:
                return _shape(function(**kwargs))
            finally:
                import matplotlib.pyplot as plt

                plt.close("all")

    try:
        start = time.perf_counter()
        expected = run(baseline)
        if time.perf_counter() - start > VARIANT_SECONDS or not _same(expected, run(baseline)):
            return []   # too slow to repeat for every variant, or random without a seed: nothing to compare
    except Exception:
        return []
    problems = []
    for name, value in numeric_arguments(function, baseline).items():
        for variant in exact_variants(value):
            shown = f"{label}({name}={type(variant).__name__}({value!r}))"
            try:
                got = run({**baseline, name: variant})
            except ValueError as error:
                if name not in str(error):
                    problems.append(f"{shown}: ValueError does not name {name!r}: {error}")
                continue
            except Exception as error:
                problems.append(f"{shown} raises {type(error).__name__}: {error}")
                continue
            if not _same(expected, got):
                problems.append(f"{shown} answers differently from {value!r}: {str(got)[:120]} vs {str(expected)[:120]}")
    return problems


# ================================================================================ constructors

# Classes whose objects may hold negative numbers (weights, activations).
CLASS_MAY_BE_NEGATIVE = {"MLP", "TinyMoE", "RevNet"}


def constructors() -> dict:
    """``Class`` -> (class, keyword arguments of a working object), for every public data class above."""
    found = {}
    for kind, instance in _instances().items():
        if dataclasses.is_dataclass(instance):
            fields = [f for f in dataclasses.fields(instance) if f.init]
            found[kind] = (type(instance), {f.name: getattr(instance, f.name) for f in fields})
    return found


def _none_allowed(cls, field: str) -> bool:
    """A field whose default is None (an unknown price, "the chip's own bandwidth") takes None."""
    return any(f.name == field and (f.default is None or "None" in str(f.type)) for f in dataclasses.fields(cls))


def _is_numeric(value) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, numbers.Real):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "iuf"
    return isinstance(value, (list, tuple)) and bool(value) and all(_is_numeric(v) for v in value)


def _read(instance, name):
    attribute = inspect.getattr_static(type(instance), name)
    return attribute.__get__(instance)() if inspect.isfunction(attribute) else getattr(instance, name)


def readable(instance) -> list[str]:
    """The public properties and argument-free methods that work on ``instance``: what a caller reads."""
    found = []
    for name in dir(type(instance)):
        attribute = inspect.getattr_static(type(instance), name)
        if name.startswith("_"):
            continue
        if inspect.isfunction(attribute):
            parameters = list(inspect.signature(attribute).parameters.values())[1:]
            if any(p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters):
                continue
        elif not isinstance(attribute, (property, functools.cached_property)):
            continue
        try:
            with time_limit():
                _read(instance, name)
        except Exception:   # e.g. Timeline.steady_idle_fraction, which only an inference schedule has
            continue
        found.append(name)
    return found


def judge_constructor(kind, cls, baseline, field, category, value, names):
    def call():
        made = cls(**{**baseline, field: value})
        seen = [made] + [_read(made, name) for name in names]
        return [_numbers_in(v) if not dataclasses.is_dataclass(v) else
                [x for f in dataclasses.fields(v) for x in _numbers_in(getattr(v, f.name))] for v in seen]

    return judge(kind, field, category, value, call, may_be_negative=kind in CLASS_MAY_BE_NEGATIVE)


def constructor_problems(kind, cls, baseline, values=None) -> list[str]:
    """Each numeric field of ``cls`` replaced by each bad value in turn (all of them, or ``values``)."""
    problems = []
    names = readable(cls(**baseline))
    for field, usual in baseline.items():
        if not _is_numeric(usual):
            continue
        for category, value in values or [("wrong", v) for v in WRONG_TYPE] + [("extreme", v) for v in EXTREME]:
            if value is None and _none_allowed(cls, field):
                continue
            problem = judge_constructor(kind, cls, baseline, field, category, value, names)
            if problem:
                problems.append(problem)
    return problems


# ================================================================================ the tests

@pytest.fixture(scope="module")
def baselines():
    presets, explicit = _presets(), _explicit()
    warm_up()
    return {label: find_baseline(function, presets, explicit.get(label), seconds_for(label))
            for label, function in FUNCTIONS.items()}


def test_discovery_finds_the_whole_api():
    assert len(FUNCTIONS) > 80 and len(FORMULAS) > 80
    assert "roofline.balance_batch" in FUNCTIONS and "reversible.network_avalanche" in FUNCTIONS
    assert "roofline.BALANCE_BATCH_WITH_KV" in FORMULAS and "scaling.TOKENS_FOR_LOSS" in FORMULAS


def test_slow_functions_are_real_and_still_time_limited():
    """SLOW raises a limit, never removes it: each entry is a fuzzed function with a reason and a finite
    limit, and the alarm still stops a call that never returns."""
    for label, (seconds, reason) in SLOW.items():
        assert label in FUNCTIONS and len(reason) > 20 and CALL_SECONDS < seconds <= 60
    with pytest.raises(Hang):
        with time_limit(0.2):
            while True:
                pass


def test_every_public_function_has_a_working_baseline(baselines):
    missing = sorted(label for label, kwargs in baselines.items() if kwargs is None)
    assert not missing, f"no valid call found for {missing}: add candidates in _presets() or list it in NOT_DATA"


FUZZ = settings(max_examples=6, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("label", sorted(FUNCTIONS))
def test_public_function_refuses_bad_input(label, baselines):
    baseline = baselines[label]
    if baseline is None:
        pytest.skip("no baseline (reported by test_every_public_function_has_a_working_baseline)")
    parameters = [name for name, p in inspect.signature(FUNCTIONS[label]).parameters.items()
                  if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and name not in LABELS]
    if not parameters:
        return

    @FUZZ
    @given(parameter=st.sampled_from(parameters), bad=bad_values())
    def fuzz(parameter, bad):
        kind, value = bad
        default = inspect.signature(FUNCTIONS[label]).parameters[parameter].default
        if value is None and (default is None or (label, parameter) in NONE_ALLOWED):
            return
        kind = _kind_for(kind, value, baseline.get(parameter, default),
                         inspect.signature(FUNCTIONS[label]).parameters[parameter].annotation,
                         (label, parameter) in BYTES_ARE_TEXT)
        kwargs = {**baseline, parameter: value}
        problem = judge(label, parameter, kind, value, lambda: FUNCTIONS[label](**kwargs))
        assert problem is None, problem

    fuzz()


@pytest.mark.parametrize("label", sorted(FUNCTIONS))
def test_a_number_in_another_real_type_gives_the_same_answer(label, baselines):
    """np.float16(4096), np.int8(5), np.uint64(7), Fraction and Decimal are the numbers they hold: the
    answer is the one for the plain float, or a ValueError naming the parameter, never NaN or an overflow."""
    if baselines[label] is None:
        pytest.skip("no baseline (reported by test_every_public_function_has_a_working_baseline)")
    problems = judge_variants(label, FUNCTIONS[label], baselines[label])
    assert not problems, "\n".join(problems)


CONSTRUCTORS = constructors()


def test_the_constructors_fuzzed_include_the_toy_models():
    assert {"Timeline", "LossFit", "ToyFeistelCipher", "TinyMoE", "Placement", "Measurement",
            "Deployment"} <= set(CONSTRUCTORS)


@pytest.mark.parametrize("kind", sorted(CONSTRUCTORS))
def test_constructor_refuses_bad_fields(kind):
    cls, baseline = CONSTRUCTORS[kind]
    problems = constructor_problems(kind, cls, baseline)
    assert not problems, "\n".join(problems[:20])


# Inputs other than 2.0 for Formulas whose domain excludes "every input 2.0", so the fuzz starts inside it.
FORMULA_BASELINES = {
    "pipeline.MIN_MICROBATCHES": {"bubble": 0.5}, "reversible.RATE_REV": {"n_layers": 4.0},
    "roofline.BALANCE_BATCH_WITH_KV": {"mem_bw": 4.0}, "roofline.BATCH_THAT_FITS": {"hbm_capacity": 16.0},
    "roofline.T_PREFILL": {"hit": 0.5}, "scaling.TOKENS_FOR_LOSS": {"L_loss": 4.0},
    "roofline.T_PREFILL_MIXED": {"hit": 0.5, "N_active": 16.0}, "roofline.BATCH_THAT_FITS_PER_DEVICE": {"hbm_capacity": 64.0},
    "roofline.SPEC_TOKENS": {"alpha_acc": 0.8}, "roofline.SPEC_SPEEDUP": {"alpha_acc": 0.8, "rho_step": 0.2},   # alpha < 1
}


def _formula_baseline(formula: Formula) -> dict:
    label = next(label for label, value in FORMULAS.items() if value is formula)
    return {**{name: 2.0 for name in formula.input_names}, **FORMULA_BASELINES.get(label, {})}


def test_every_formula_baseline_is_inside_its_domain():
    outside = []
    for label, formula in FORMULAS.items():
        try:
            formula(**_formula_baseline(formula))
        except ValueError as error:
            outside.append(f"{label}: {error}")
    assert not outside, "add inputs in FORMULA_BASELINES:\n" + "\n".join(outside)


@pytest.mark.parametrize("label", sorted(FORMULAS))
def test_formula_refuses_bad_input(label):
    formula = FORMULAS[label]
    if not formula.input_names:
        return

    @FUZZ
    @given(parameter=st.sampled_from(formula.input_names), bad=bad_values())
    def fuzz(parameter, bad):
        kind, value = bad
        kwargs = {**_formula_baseline(formula), parameter: value}
        problem = judge(label, parameter, kind, value, lambda: formula(**kwargs))
        assert problem is None, problem

    fuzz()


if __name__ == "__main__":   # a full report instead of the first failure: python tests/test_fuzz.py
    import sys

    os.environ["LECTURE_PROGRESS_FILE"] = os.path.join(tempfile.mkdtemp(prefix="lecture-fuzz-"), "progress.json")
    presets, explicit = _presets(), _explicit()
    warm_up()
    problems = []
    for label, function in sorted(FUNCTIONS.items()):
        base = find_baseline(function, presets, explicit.get(label), seconds_for(label))
        if base is None:
            problems.append(f"{label}: no baseline")
            continue
        for name, p in inspect.signature(function).parameters.items():
            if name in LABELS or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            for kind, values in (("wrong", WRONG_TYPE), ("extreme", EXTREME)):
                for value in values:
                    if value is None and (p.default is None or (label, name) in NONE_ALLOWED):
                        continue
                    problem = judge(label, name, _kind_for(kind, value, base.get(name, p.default), p.annotation, (label, name) in BYTES_ARE_TEXT), value, lambda: function(**{**base, name: value}))
                    if problem:
                        problems.append(problem)
        problems += judge_variants(label, function, base)
    for kind, (cls, baseline) in sorted(constructors().items()):
        problems += constructor_problems(kind, cls, baseline)
    for label, formula in sorted(FORMULAS.items()):
        for name in formula.input_names:
            for kind, values in (("wrong", WRONG_TYPE), ("extreme", EXTREME)):
                for value in values:
                    problem = judge(label, name, kind, value,
                                    lambda: formula(**{**_formula_baseline(formula), name: value}))
                    if problem:
                        problems.append(problem)
    print("\n".join(problems))
    print(len(problems), "problems", file=sys.stderr)
    sys.exit(1 if problems else 0)


# ---------------------------------------------------------------------------- issue 31 §3: files and starting values
_BAD_FIELD_VALUES = st.one_of(
    st.text(max_size=8), st.booleans().map(lambda flag: flag), st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-10**6, max_value=-1), st.integers(min_value=10**12, max_value=10**40),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


def _hf_config_fields():
    from lecture_lib import hf_config

    return sorted(hf_config._LIMITS) + list(hf_config._FLAGS)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(field=st.sampled_from(_hf_config_fields()), value=_BAD_FIELD_VALUES,
       family=st.sampled_from(["llama", "qwen3_moe", "deepseek_v3", "falcon", "gemma2"]))
def test_from_hf_config_refuses_any_bad_known_field_by_name_or_reads_it(field, value, family):
    """Every field the reader knows, set to junk in a config of any family, is refused by name (whether or not
    that family uses it), or is a value the field accepts and the model is finite."""
    from lecture_lib import hf_config

    base = {"llama": {"model_type": "llama", "hidden_size": 512, "intermediate_size": 1024, "num_hidden_layers": 2,
                      "num_attention_heads": 8, "num_key_value_heads": 2, "vocab_size": 1000},
            "qwen3_moe": {"model_type": "qwen3_moe", "hidden_size": 512, "intermediate_size": 1024,
                          "moe_intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 8,
                          "num_key_value_heads": 2, "vocab_size": 1000, "num_experts": 8, "num_experts_per_tok": 2},
            "deepseek_v3": {"model_type": "deepseek_v3", "hidden_size": 512, "intermediate_size": 1024,
                            "moe_intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 8,
                            "num_key_value_heads": 8, "vocab_size": 1000, "n_routed_experts": 8,
                            "num_experts_per_tok": 2, "kv_lora_rank": 64, "q_lora_rank": 96,
                            "qk_rope_head_dim": 16, "qk_nope_head_dim": 32, "v_head_dim": 32},
            "falcon": {"model_type": "falcon", "hidden_size": 512, "num_hidden_layers": 2, "num_attention_heads": 8,
                       "vocab_size": 1000},
            "gemma2": {"model_type": "gemma2", "hidden_size": 512, "intermediate_size": 1024, "num_hidden_layers": 2,
                       "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 64, "vocab_size": 1000}}[family]
    hf_config.from_hf_config(base)      # the baseline reads
    try:
        model = hf_config.from_hf_config({**base, field: value})
    except ValueError as error:
        assert repr(field) in str(error) or field in str(error), (field, value, str(error))
        return
    assert value is not None
    assert math.isfinite(model.params_total) and model.params_total > 0


@settings(max_examples=200, deadline=None)
@given(value=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=4), st.none(),
                       st.integers(min_value=-10**30, max_value=10**30)),
       name=st.sampled_from(["second_look", "tau"]))
def test_an_explorers_starting_value_is_refused_by_name_or_lands_inside_its_slider(value, name):
    from lecture_lib.explorers import reality

    try:
        explorer = reality.RealityExplorer(**{name: value})
    except ValueError as error:
        assert name in str(error), str(error)
        return
    control = explorer.controls[name]
    assert control.min <= explorer.values[name] <= control.max and explorer.values[name] == value


@settings(max_examples=300, deadline=None)
@given(minimum=st.one_of(st.floats(allow_nan=True), st.text(max_size=3), st.integers(-5, 5), st.none()),
       maximum=st.one_of(st.floats(allow_nan=True), st.integers(-5, 20), st.none()))
def test_integer_checks_its_own_bounds(minimum, maximum):
    from lecture_lib import validate

    try:
        result = validate.integer("n", 5, minimum=minimum, maximum=maximum)
    except ValueError as error:
        assert "minimum" in str(error) or "maximum" in str(error) or "n must" in str(error), str(error)
        return
    assert isinstance(minimum, int) and (maximum is None or isinstance(maximum, int))
    assert result == 5 and minimum <= 5 and (maximum is None or 5 <= maximum)
