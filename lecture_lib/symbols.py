"""The notation table: every symbol the course uses, with its meaning and unit.

One SymPy symbol per quantity, shared by all chapters, so that formulas from different chapters
combine without renaming. Names follow the lecture's board (lecture notes §0); ``latex`` is how the
symbol is typeset. All symbols are positive reals, which lets SymPy simplify and solve cleanly.

Units are SI: seconds, bytes, FLOP/s (2 FLOPs per multiply-add), bytes/s, dollars.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp


@dataclass(frozen=True)
class Notation:
    """One row of the notation table."""

    symbol: sp.Symbol
    latex: str
    meaning: str
    unit: str
    chapter: int

    @property
    def name(self) -> str:
        return self.symbol.name


TABLE: dict[str, Notation] = {}


def _define(name: str, latex: str, meaning: str, unit: str, chapter: int = 1) -> sp.Symbol:
    if name in TABLE:
        raise ValueError(f"symbol {name!r} is defined twice in the notation table")
    symbol = sp.Symbol(name, positive=True, real=True)
    TABLE[name] = Notation(symbol, latex, meaning, unit, chapter)
    return symbol


# --- Chapter 1: batch size, cost and speed (lecture 00:00:00-00:32:09) -------------------------
t = _define("t", r"t", "time of one forward pass: one decode step for the whole batch", "s")
t_compute = _define("t_compute", r"t_\mathrm{compute}", "time the matrix units need for the step", "s")
t_weights = _define("t_weights", r"t_\mathrm{weights}", "time to stream every weight from HBM once", "s")
t_kv = _define("t_kv", r"t_\mathrm{KV}", "time to stream the batch's KV cache from HBM", "s")
t_mem = _define("t_mem", r"t_\mathrm{mem}", "memory time: weight fetch plus KV fetch", "s")
B = _define("B", r"B", "batch: sequences decoded together, each gaining one token per step", "sequences")
N_active = _define("N_active", r"N_\mathrm{active}", "parameters touched per token", "params")
N_total = _define("N_total", r"N_\mathrm{total}", "all parameters (all must be read each step)", "params")
FLOPs = _define("FLOPs", r"\mathrm{FLOPs}", "compute throughput of the chips in use (2 FLOPs per multiply-add)", "FLOP/s")
mem_bw = _define("mem_bw", r"\mathrm{mem\_bw}", "HBM bandwidth of the chips in use", "bytes/s")
bytes_param = _define("bytes_param", r"\mathrm{bytes}_\mathrm{param}", "bytes per stored weight (2 bf16, 1 fp8, 0.5 fp4)", "bytes")
len_ctx = _define("len_ctx", r"\mathrm{len}_\mathrm{ctx}", "context length: tokens already in each sequence's KV cache", "tokens")
bytes_tok = _define("bytes_tok", r"\mathrm{bytes}_\mathrm{tok}", "KV-cache bytes per token of context, all layers", "bytes")
sparsity = _define("sparsity", r"\mathrm{sparsity}", "N_total / N_active (>= 1; 8 in the lecture's DeepSeek example)", "-")
ratio_hw = _define("ratio_hw", r"R_\mathrm{hw}", "hardware ratio: multiplies/s x bytes per weight / (bytes/s); about 300", "-")
n_chips = _define("n_chips", r"n_\mathrm{chips}", "chips (GPUs) rented for the step", "chips")
price_chip_hour = _define("price_chip_hour", r"p_\mathrm{chip}", "rental price of one chip for one hour", "$/chip-hour")
hbm_capacity = _define("hbm_capacity", r"C_\mathrm{HBM}", "HBM capacity of the chips in use", "bytes")
t_wait = _define("t_wait", r"t_\mathrm{wait}", "time a request waits for the next batch to depart", "s")
t_step = _define("t_step", r"t_\mathrm{step}", "time between batch departures (one decode step)", "s")

mults = _define("mults", r"\mathrm{FLOPs}_\mathrm{board}", "the board's 'FLOPs': multiplies per second (= FLOP/s / 2)", "multiplies/s")
mfu = _define("mfu", r"\mathrm{MFU}", "model FLOPs utilisation: t_compute / t", "-")
len_ctx_star = _define("len_ctx_star", r"\mathrm{len}^{*}_\mathrm{ctx}", "Goldilocks context: KV slope equals compute slope", "tokens")
B_star = _define("B_star", r"B^{*}", "balance batch: weight-fetch time equals compute time", "sequences")
throughput = _define("throughput", r"\mathrm{tokens/s}", "tokens produced per second by one serving unit", "tokens/s")
cost_token = _define("cost_token", r"\$/\mathrm{token}", "rental cost per generated token", "$")
t_drain = _define("t_drain", r"t_\mathrm{drain}", "time to read all of HBM once: capacity / bandwidth", "s")
t_worst = _define("t_worst", r"t_\mathrm{worst}", "worst-case latency of the fixed-cadence batch 'train'", "s")
price_ratio = _define("price_ratio", r"r_\mathrm{price}", "fast-mode price per token / normal price per token", "-")
speed_ratio = _define("speed_ratio", r"r_\mathrm{speed}", "fast-mode tokens/s per sequence / normal", "-")
batch_ratio = _define("batch_ratio", r"B_\mathrm{normal}/B_\mathrm{fast}", "how many times smaller the fast-mode batch is", "-")

# --- Chapter 2: MoE across racks (lecture_lib.moe) ---
# (chapter 2 symbols go here)

# --- Chapter 3: pipeline parallelism (lecture_lib.pipeline) ---
# (chapter 3 symbols go here)

# --- Chapter 4: pipelining is not wise (lecture_lib.pipeline) ---
# (chapter 4 symbols go here)

# --- Chapter 5: RL over-training beyond Chinchilla (lecture_lib.scaling) ---
# (chapter 5 symbols go here)

# --- Chapter 6: long context from API pricing (lecture_lib.context) ---
# (chapter 6 symbols go here)

# --- Chapter 7: neural nets and ciphers (lecture_lib.reversible) ---
# (chapter 7 symbols go here)


def rows(chapter: int | None = None) -> list[Notation]:
    """The table's rows, optionally only those a chapter introduces."""
    return [row for row in TABLE.values() if chapter is None or row.chapter == chapter]


def latex_names() -> dict[sp.Symbol, str]:
    """Symbol -> LaTeX, for ``sympy.latex(expr, symbol_names=...)``."""
    return {row.symbol: row.latex for row in TABLE.values()}
