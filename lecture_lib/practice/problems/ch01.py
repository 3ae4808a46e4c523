"""Chapter 1's practice problems (solutions/01_batch_size_cost_and_speed.ipynb).

Every expected value is computed from the library's presets and Formulas, with the inputs the
problem statement names; see :mod:`lecture_lib.practice.checks` for how answers are judged.
"""

from __future__ import annotations

import sympy as sp

from lecture_lib import hardware, models, roofline
from lecture_lib import symbols as _symbols

from ..registry import Mistake, Probe, Problem, Vary, register


def _deepseek():
    return models.get("deepseek-v3")


def _board_balance() -> float:
    """The board's B* for DeepSeek: the round hardware ratio 300 times the lecture's sparsity 8 (2,400)."""
    return roofline.BALANCE_BATCH(FLOPs=2 * 300, bytes_param=1, mem_bw=1, N_total=8, N_active=1)


def _h100_drain() -> float:
    return hardware.get("H100").hbm_drain_time


def _gb300_worst_case() -> float:
    step = hardware.get_system("GB300 NVL72").hbm_drain_time
    return roofline.WORST_CASE_LATENCY(t_wait=step, t_step=step)


def _a100_ratio() -> float:
    return roofline.hardware_ratio(hardware.get("A100"), "bf16", 2)


def _deepseek_balance(sparsity: float | None = None) -> float:
    used = _deepseek().sparsity if sparsity is None else sparsity
    return roofline.balance_batch(hardware.get("H100"), weight_bytes=1, compute_dtype="fp8", sparsity=used)


def _kimi_floor(*, params: str = "total", chips: int | None = None) -> float:
    kimi = models.get("kimi-k2")
    rack = hardware.get_system("GB200 NVL72")
    n = kimi.params_total if params == "total" else kimi.params_active
    bandwidth = rack.hbm_bandwidth if chips is None else rack.chip.hbm_bandwidth * chips
    return roofline.T_WEIGHTS(N_total=n, bytes_param=1, mem_bw=bandwidth)


def _rack_throughput(step: float | None = None, *, batch: float = 3000) -> float:
    if step is None:
        step = hardware.get_system("GB200 NVL72").hbm_drain_time
    return roofline.THROUGHPUT(B=batch, t_step=step)


def _cost_per_million(n_chips: int = 72, *, batch: float = 2400, price: float = 2.0) -> float:
    return roofline.cost_per_token(step_time=20e-3, batch=batch, n_chips=n_chips, price_chip_hour=price) * 1e6


# Graded work draws these per student (lecture_lib.practice.variants): batches well above the rack's balance
# batch's order of magnitude and prices within the lecture's "about $2 an hour" range keep the reasoning unchanged.
RACK_BATCH = Vary("batch", "the batch B", 3000, (1200, 1800, 2400, 3600, 4200, 4800, 5400, 6000), "sequences")
COST_BATCH = Vary("batch", "the batch B", 2400, (1200, 1600, 2000, 2800, 3200, 3600, 4000, 4800), "sequences")
COST_PRICE = Vary("price", "the price per GPU-hour", 2.0, (1.5, 2.5, 3.0, 3.5, 4.0), "dollars")


FIT_CANDIDATES = ("llama-3-405b", "deepseek-v3", "qwen3-235b-a22b", "mixtral-8x22b")


def _does_not_fit() -> str:
    capacity = hardware.get_system("HGX H200").hbm_capacity
    too_big = [name for name in FIT_CANDIDATES if models.get(name).weight_bytes("bf16") > capacity]
    if len(too_big) != 1:
        raise RuntimeError(f"problem 1.9 needs exactly one model that does not fit, got {too_big}")
    return too_big[0]


def _kv_equals_weights_batch() -> sp.Expr:
    B = _symbols.B
    return sp.solve(sp.Eq(roofline.T_KV.rhs, roofline.T_WEIGHTS.rhs), B)[0]


def _goldilocks_deepseek() -> float:
    deepseek, chip = _deepseek(), hardware.get("GB200")
    return roofline.GOLDILOCKS_CONTEXT(N_active=deepseek.params_active, FLOPs=chip.flops["fp8"],
                                       mem_bw=chip.hbm_bandwidth, bytes_tok=deepseek.kv_bytes_per_token("fp8"))


# The figure of problem 1.12: DeepSeek-V3 on a GB200 NVL72, fp4 weights and multiplies, fp8 KV cache.
PLOT_CONTEXTS = {"left": 1024, "right": 32768}
PLOT_MAX_BATCH = 65536


def _memory_bound_panels() -> str:
    deepseek, rack = _deepseek(), hardware.get_system("GB200 NVL72")
    stuck = []
    for panel, context in PLOT_CONTEXTS.items():
        kink = roofline.balance_batch_with_kv(
            n_active=deepseek.params_active, n_total=deepseek.params_total, flops=rack.flops["fp4"],
            mem_bw=rack.hbm_bandwidth, bytes_param=0.5, len_ctx=context,
            bytes_tok=deepseek.kv_bytes_per_token("fp8", context_len=context))
        if kink > PLOT_MAX_BATCH:
            stuck.append(panel)
    if len(stuck) == 1:
        return stuck[0]
    return "both" if stuck else "neither"


def _fast_mode_kv_to_weights() -> sp.Expr:
    """Normal mode's KV time / weight time implied by 6x price for 2.5x speed, memory-bound step.

    Step time in units of the weight fetch: t = 1 + x, where x = B * (KV time per sequence) / t_w.
    The fast batch is (batch ratio) times smaller, so x_normal = ratio * x_fast.
    """
    ratio = roofline.FAST_MODE_BATCH_RATIO.subs(price_ratio=6, speed_ratio=sp.Rational(5, 2))
    x = sp.Symbol("x_fast", positive=True)
    x_fast = sp.solve(sp.Eq((1 + ratio * x) / (1 + x), sp.Rational(5, 2)), x)[0]
    return ratio * x_fast


def _fast_mode_ceiling() -> float:
    return float(1 + _fast_mode_kv_to_weights())


def _tier_price() -> sp.Expr:
    s = _symbols.speed_ratio
    k = _fast_mode_kv_to_weights()
    x_fast = (1 + k) / s - 1                       # the fast step is (1 + k)/s weight-fetch times long
    batch_ratio = k / x_fast
    return sp.solve(sp.Eq(roofline.FAST_MODE_BATCH_RATIO.rhs, batch_ratio), _symbols.price_ratio)[0]


register("1.1", Problem(
    "The 20 ms rule on an H100", "number", _h100_drain, rtol=0.02, unit="seconds"))
register("1.2", Problem(
    "Waiting for the train on a GB300 NVL72", "number", _gb300_worst_case, rtol=0.02, unit="seconds",
    mistakes=(Mistake(lambda: hardware.get_system("GB300 NVL72").hbm_drain_time,
                      "That is the ride alone. A request that just missed a departure also waits on the "
                      "platform for the next one."),)))
register("1.3", Problem(
    "The hardware ratio of an A100", "number", _a100_ratio, rtol=0.02,
    wrong_hint="The ratio is multiplies per second x bytes per weight / bytes per second."))
register("1.4", Problem(
    "Derive the balance batch", "expression", lambda: roofline.BALANCE_BATCH.rhs,
    wrong_hint="Set the compute time equal to the weight-fetch time and solve for B."))
register("1.5", Problem(
    "The balance batch of the real DeepSeek-V3", "number", _deepseek_balance, rtol=0.03, unit="sequences",
    mistakes=(Mistake(_board_balance,
                      "That is the board's round figure, about 300 x 8. This problem asks for the real "
                      "H100's ratio (from its preset) and the real DeepSeek-V3's sparsity."),
              Mistake(lambda: _deepseek_balance(8),
                      "That uses the lecture's sparsity of 8. The real DeepSeek-V3 activates fewer of its "
                      "parameters: take the sparsity from the model preset."),
              Mistake(lambda: _deepseek_balance(1),
                      "That is the hardware ratio alone; B* also scales with the model's sparsity."))))
register("1.6", Problem(
    "The latency floor of Kimi K2 on a rack", "number", _kimi_floor, rtol=0.02, unit="seconds",
    mistakes=(Mistake(lambda: _kimi_floor(chips=1),
                      "That is one GPU's bandwidth. All 72 GPUs read their share of the weights at "
                      "the same time."),
              Mistake(lambda: _kimi_floor(params="active"),
                      "Every step must read all the weights, not only the active ones: different "
                      "sequences in the batch route to different experts."))))
register("1.7", Problem(
    "Tokens per second from one rack", "number", lambda batch=3000: _rack_throughput(batch=batch), rtol=0.02,
    unit="tokens per second", variants=(RACK_BATCH,),
    mistakes=(Mistake(lambda batch=3000: _rack_throughput(20e-3, batch=batch),
                      "That uses the round 20 ms. Use this rack's own drain time."),)))
register("1.8", Problem(
    "Dollars per million tokens", "number", lambda batch=2400, price=2.0: _cost_per_million(batch=batch, price=price),
    rtol=0.02, unit="dollars per million tokens", variants=(COST_BATCH, COST_PRICE),
    mistakes=(Mistake(lambda batch=2400, price=2.0: _cost_per_million(1, batch=batch, price=price),
                      "That pays for one GPU, but the step runs on the whole rack."),)))
register("1.9", Problem(
    "Which model does not fit?", "choice", _does_not_fit, options=FIT_CANDIDATES,
    alternates={"llama-3-405b": ("llama 3.1 405b", "llama-3.1-405b", "llama 405b", "llama"),
                "deepseek-v3": ("deepseek", "deepseek v3"),
                "qwen3-235b-a22b": ("qwen3-235b", "qwen3", "qwen"),
                "mixtral-8x22b": ("mixtral",)},
    wrong_hint="Compare total parameters x 2 bytes with the HBM of all 8 GPUs together."))
register("1.10", Problem(
    "When the KV cache outweighs the weights", "expression", _kv_equals_weights_batch,
    wrong_hint="Set the KV-fetch time equal to the weight-fetch time and solve for B."))
register("1.11", Problem(
    "DeepSeek-V3's Goldilocks context", "number", _goldilocks_deepseek, rtol=0.02, unit="tokens",
    wrong_hint="Remember which format the KV cache is stored in."))
register("1.12", Problem(
    "Read the plot: memory-bound for good?", "choice", _memory_bound_panels,
    options=("left", "right", "both", "neither"),
    alternates={"left": ("left panel", "1024", "1k"), "right": ("right panel", "32768", "32k")},
    wrong_hint="Look for a place where the grey step-time curve leaves the orange memory line for the blue compute line."))
register("1.13", Problem(
    "Fast Mode's ceiling", "number", _fast_mode_ceiling, rtol=0.01,
    mistakes=(Mistake(lambda: float(_fast_mode_kv_to_weights()),
                      "That is the ratio of KV time to weight time in normal mode, a step on the way. "
                      "Now ask how short the step could get."),
              Mistake(lambda: float(roofline.FAST_MODE_BATCH_RATIO(price_ratio=6, speed_ratio=2.5)),
                      "That is how much smaller the fast batch is, not how much faster its steps are."))))
register("1.14", Problem(
    "Pricing another speed tier", "expression", _tier_price,
    # Checked on the learner's own expression (a hint that always said "check it at 5/2" was given to answers that
    # pass there too).
    probes=(Probe({"speed_ratio": sp.Rational(5, 2)}, "speed_ratio = 5/2", "6, the price ratio of Fast Mode"),
            Probe({"speed_ratio": 1}, "speed_ratio = 1", "1, the normal tier's own price")),
    wrong_hint="Build it from the same equations as Fast Mode's 6x for 2.5x, with the speed ratio left as a symbol."))


# --- 'Why' problems (issue 13): conceptual choices, each with a nudge for every tempting wrong letter.
# The expected letter is checked against the library where the reason is a computation.

WHY_OPTIONS = ('a', 'b', 'c', 'd')


def _unamortised() -> str:
    """1.15: the per-token times (t / B) with no B left in them cannot be amortised."""
    B = _symbols.B
    flat = frozenset(name for name, f in (("compute", roofline.T_COMPUTE), ("weights", roofline.T_WEIGHTS),
                                          ("kv", roofline.T_KV)) if B not in sp.simplify(f.rhs / B).free_symbols)
    return {frozenset({"weights"}): "a", frozenset({"compute", "kv"}): "b",
            frozenset({"compute", "kv", "weights"}): "c", frozenset(): "d"}[flat]


def _twenty_ms() -> str:
    """1.16: the ~20 ms step is HBM capacity / bandwidth, the same order on every recent chip."""
    drains = [hardware.get(name).hbm_drain_time for name in ("H100", "B200", "GB200")]
    if not all(0.01 < t < 0.03 for t in drains):
        raise RuntimeError(f"problem 1.16 assumes drain times near 20 ms, got {drains}")
    return "d"


def _speed_cap() -> str:
    """1.17: the largest of the step's times at B = 1 for the board's model on a GB200 NVL72 (fp4)."""
    rack, deepseek = hardware.get_system("GB200 NVL72"), _deepseek()
    step = roofline.decode_step(batch=1, n_active=37e9, n_total=8 * 37e9, flops=rack.flops["fp4"],
                                mem_bw=rack.hbm_bandwidth, bytes_param=0.5, len_ctx=1024,
                                bytes_tok=deepseek.kv_bytes_per_token(1, context_len=1024))
    largest = max(("t_compute", "t_kv", "t_weights"), key=step.get)
    return {"t_compute": "a", "t_kv": "b", "t_weights": "c"}[largest]


register('1.15', Problem(
    "Why can't Slow Mode be much cheaper?", "choice", _unamortised, options=WHY_OPTIONS,
    nudges={
            'a': 'The weight fetch is the one cost a batch shares: per token it is divided by B, so it falls.',
            'c': 'Divide each time by B: one of them keeps a 1/B and falls as the batch grows.',
            'd': 'Then Slow Mode would be nearly free. Which work is unique to each sequence?'}))

register('1.16', Problem(
    'Why about 20 ms per step?', "choice", _twenty_ms, options=WHY_OPTIONS,
    nudges={
            'a': 'Hops between racks are not part of a step on one rack (Chapter 4 counts them separately).',
            'b': "Latency matters to users, but the 20 ms comes out of two numbers on a chip's datasheet.",
            'c': 'Compute time depends on the batch and the model; the 20 ms is about the same for most models on a chip.'}))

register('1.17', Problem(
    "Why can't 100× the price buy 100× the speed?", "choice", _speed_cap, options=WHY_OPTIONS,
    nudges={
            'a': 'At B = 1 the compute is tiny: compare 2·N_active/FLOPs with N_total·bytes/mem_bw on this rack.',
            'b': "One sequence's KV cache is small beside the whole model's weights.",
            'd': 'Something must still be read from HBM on every step.'}))
