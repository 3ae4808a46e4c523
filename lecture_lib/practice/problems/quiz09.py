"""Chapter 9's quiz and exam questions (quizzes/09_communication_and_training_layouts_quiz.ipynb): problems
9.101-9.106.

Problems 9.101-9.104 were Chapter 8's bank questions 8.102, 8.103, 8.104 and 8.106 before issue 49 split that
chapter. Released only through nbgrader (``nbgrader-source quizzes``); most numbers vary per student. Every expected
value is computed from the library, as in ``ch09.py``.
"""

from __future__ import annotations

import sympy as sp

from lecture_lib import collectives, hardware

from ..registry import Mistake, Problem, Vary, register


def _nvlink(chip: str = "H100") -> float:
    return hardware.get(chip).scale_up_bandwidth


def _all_reduce(n_ring: int = 8, *, kind=None) -> float:
    formula = kind or collectives.ALL_REDUCE
    return float(formula(bytes_msg=1e9, n_ring=n_ring, bw_link=_nvlink()))


def _ep_width(ep: int = 8) -> float:
    return float(collectives.ep_critical_d_ff(ep=ep, flops=hardware.get("H100").flops["fp8"], link_bandwidth=_nvlink(),
                                              bytes_per_value=1))


def _reduce_against_gather() -> str:
    ratio = sp.simplify(collectives.ALL_REDUCE.rhs / collectives.ALL_GATHER.rhs)
    return {sp.Integer(1): "a", sp.Integer(2): "b", sp.Rational(1, 2): "d"}.get(ratio, "c")


def _small_all_reduce(message: float = 2e6) -> float:
    base, hop = collectives.nccl_latency()
    return float(collectives.collective_latency_time("allreduce", bytes_total=message, n_devices=8,
                                                     link_bandwidth=_nvlink(), hop_latency=hop, base_latency=base))


def _bigger_model_critical_batch() -> str:
    """How the data-parallel critical batch moves with the parameter count: read off DP_CRITICAL_BATCH's inputs."""
    inputs = {str(s) for s in collectives.DP_CRITICAL_BATCH.rhs.free_symbols}
    return "c" if "N_total" not in inputs and "N_active" not in inputs else "a"


def _b200_dp(dp: int = 16, many_way: bool = False) -> float:
    b200 = hardware.get("B200")
    if many_way:        # FLOPs / W, the limit for many replicas
        return b200.flops["bf16"] / b200.scale_up_bandwidth
    return collectives.dp_critical_batch(dp=dp, flops=b200.flops["bf16"], link_bandwidth=b200.scale_up_bandwidth)


RING = Vary("n_ring", "the GPUs in the ring", 8, (2, 4, 16, 32), "GPUs")
EP = Vary("ep", "the expert-parallel degree", 8, (4, 16, 32, 64), "GPUs")
MESSAGE = Vary("message", "the message size", 2e6, (5e5, 1e6, 5e6, 1e7, 3e7), "bytes")
DP = Vary("dp", "the data-parallel replicas", 16, (4, 8, 12, 24), "GPUs")

register("9.101", Problem(
    "A ring all-reduce of 1 GB", "number", _all_reduce, rtol=0.02, unit="seconds", variants=(RING,),
    mistakes=(Mistake(lambda n_ring=8: _all_reduce(n_ring, kind=collectives.ALL_GATHER),
                      "That is an all-gather; an all-reduce is a reduce-scatter and then an all-gather."),)))
register("9.102", Problem(
    "How wide must an expert be to hide its all-to-all?", "number", _ep_width, rtol=0.02, unit="d_ff",
    variants=(EP,),
    wrong_hint="collectives.ep_critical_d_ff(ep=..., flops=..., link_bandwidth=..., bytes_per_value=1)."))
register("9.103", Problem(
    "All-reduce against all-gather", "choice", _reduce_against_gather, options=("a", "b", "c", "d"),
    nudges={"a": "An all-reduce is a reduce-scatter followed by an all-gather.",
            "c": "The ring's size cancels: compare collectives.ALL_REDUCE with collectives.ALL_GATHER."}))
register("9.104", Problem(
    "A small all-reduce with latency", "number", _small_all_reduce, rtol=0.02, unit="seconds", variants=(MESSAGE,),
    mistakes=(Mistake(lambda message=2e6: _all_reduce(8) * message / 1e9,
                      "That is the bandwidth term alone; small messages also pay NCCL's per-step latency."),)))
register("9.105", Problem(
    "A bigger model under data parallelism", "choice", _bigger_model_critical_batch, options=("a", "b", "c", "d"),
    nudges={"a": "The all-reduce carries one gradient per parameter, and the backward pass does 4 FLOPs per parameter "
                 "per token: both grow with the model.",
            "b": "Write both times per device and divide: what is left of the parameter count?"}))
register("9.106", Problem(
    "Data-parallel training on a B200 node", "number", _b200_dp, rtol=0.02, unit="tokens per GPU", variants=(DP,),
    mistakes=(Mistake(lambda dp=16: _b200_dp(dp, many_way=True),
                      "That is the many-replica limit FLOPs / W. A ring of this many GPUs moves (DP − 1)/DP of the "
                      "gradients, so the critical batch is that share of it."),)))
