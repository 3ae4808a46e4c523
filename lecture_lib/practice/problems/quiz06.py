"""Chapter 6's quiz and exam questions (quizzes/06_long_context_from_api_pricing_quiz.ipynb): 6.101-6.106.

Released only through nbgrader (``nbgrader-source quizzes``); most numbers vary per student. Every expected value
is computed from the library, as in ``ch06.py``.
"""

from __future__ import annotations

from lecture_lib import context, hardware, models

from ..registry import Mistake, Problem, Vary, register


def _kv_bytes(kv_heads: int = 8, *, bytes_kv: float = 2) -> float:
    return float(context.KV_BYTES_ARCHITECTURE(bytes_kv=bytes_kv, head_dim=128, kv_heads=kv_heads, kv_layers=80))


def _crossover(n_active: float = 37e9) -> float:
    h100 = hardware.get("H100")
    return float(context.crossover_context(n_active=n_active, bytes_tok=models.get("deepseek-v3").kv_bytes_per_token("fp8"),
                                           flops=h100.flops["fp8"], mem_bw=h100.hbm_bandwidth))


def _hold_cost(minutes: float = 60, *, tier: str = "host DRAM") -> float:
    cache_bytes = 100_000 * models.get("deepseek-v3").kv_bytes_per_token("fp8")
    return cache_bytes / 1e9 * context.get_tier(tier).price_per_gb_hour * minutes / 60


def _sparse_reads() -> str:
    shape = dict(bytes_kv=1, head_dim=128, kv_heads=8, kv_layers=32)
    read = context.KV_BYTES_READ_SPARSE(attn_sparsity=4, **shape)
    stored = context.KV_BYTES_ARCHITECTURE(**shape)
    stored_changes = "attn_sparsity" in context.KV_BYTES_ARCHITECTURE.input_names
    return {(True, False): "a", (True, True): "c", (False, True): "b", (False, False): "d"}[(read < stored, stored_changes)]


def _cheapest_long_hold() -> str:
    deepseek, gb200 = models.get("deepseek-v3"), hardware.get("GB200")
    tier = context.cheapest_tier(24 * 3600, bytes_tok=deepseek.kv_bytes_per_token("fp8"), n_active=deepseek.params_active,
                                 flops=gb200.flops["fp8"], price_chip_hour=2.0)
    return {"host DRAM": "a", "flash": "b", "disk": "c", "rematerialise": "d"}[tier]


def _decode_mfu(price_output: float = 10.0) -> float:
    return float(context.decode_mfu_from_prices(price_input=2.0, price_output=price_output, mfu_prefill=0.5))


KV_HEADS = Vary("kv_heads", "the KV heads", 8, (1, 2, 4, 16), "heads")
ACTIVE = Vary("n_active", "the model's active parameters", 37e9, (10e9, 20e9, 70e9, 100e9), "parameters")
MINUTES = Vary("minutes", "how long the cache is held", 60, (5, 10, 30, 120, 240), "minutes")
OUTPUT_PRICE = Vary("price_output", "the output price", 10.0, (4.0, 6.0, 8.0, 12.0, 15.0), "dollars per million tokens")

register("6.101", Problem(
    "KV bytes per token of a GQA model", "number", _kv_bytes, rtol=0.02, unit="bytes", variants=(KV_HEADS,),
    mistakes=(Mistake(lambda kv_heads=8: _kv_bytes(kv_heads) / 2,
                      "Keys and values are two tensors: count both."),
              Mistake(lambda kv_heads=8: _kv_bytes(kv_heads, bytes_kv=1), "BF16 is two bytes per value."))))
register("6.102", Problem(
    "Where attention's reads overtake the compute", "number", _crossover, rtol=0.02, unit="tokens",
    variants=(ACTIVE,),
    wrong_hint="context.crossover_context(n_active=..., bytes_tok=..., flops=..., mem_bw=...), FP8 on both sides."))
register("6.103", Problem(
    "What it costs to hold a cache in host DRAM", "number", _hold_cost, rtol=0.02, unit="dollars",
    variants=(MINUTES,),
    mistakes=(Mistake(lambda minutes=60: _hold_cost(minutes * 60), "The tier's price is per GB-hour, not per GB-minute."),
              Mistake(lambda minutes=60: _hold_cost(minutes, tier="HBM"), "That is HBM's price; the question holds it in host DRAM."))))
register("6.104", Problem(
    "What sparse attention saves", "choice", _sparse_reads, options=("a", "b", "c", "d"),
    nudges={"c": "A sparse attention still keeps every token's keys and values: it only reads fewer of them."}))
register("6.105", Problem(
    "Where a day-long cache lives", "choice", _cheapest_long_hold, options=("a", "b", "c", "d"),
    nudges={"a": "Host DRAM is dear to leave bytes sitting in for a day.",
            "b": "Compare a day of flash rent with the compute of one prefill of the same tokens.",
            "c": "A disk is cheap to hold bytes in, but how long does reading 100K tokens' cache back take?"}))
register("6.106", Problem(
    "Decode MFU from another provider's prices", "number", _decode_mfu, rtol=0.02, variants=(OUTPUT_PRICE,),
    mistakes=(Mistake(lambda price_output=10.0: 2.0 / price_output,
                      "That assumes prefill runs at 100% MFU; the question says 50%."),)))
