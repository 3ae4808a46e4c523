"""The lab's practice problems (solutions/11_lab_roofline_on_your_machine.ipynb): Chapter 1's roofline on a CPU.

Every number a problem states is the lab's own measurement of the course's reference machine (a 2-core AMD EPYC
virtual machine, NumPy with OpenBLAS), :func:`lecture_lib.measure.example_profile`, rounded to three significant
digits as the problems print them. The lab's decode stack holds float32 weights, 4 bytes each. Every expected value is
computed with Chapter 1's functions (:mod:`lecture_lib.roofline`) and the lab's (:mod:`lecture_lib.measure`).
"""

from __future__ import annotations

from lecture_lib import hardware, measure, roofline

from ..problem_data import LAB_BANDWIDTH as BANDWIDTH
from ..problem_data import LAB_N_PARAMS as N_PARAMS
from ..problem_data import LAB_PEAK as PEAK
from ..problem_data import LAB_STEPS as STEPS
from ..problem_data import LAB_WEIGHT_BYTES as WEIGHT_BYTES
from ..registry import Mistake, Problem, Vary, register

_BW_DEFAULT = BANDWIDTH / 1e9                  # GB/s, as the problems print it

BW_VARY = Vary("bandwidth", "the read bandwidth", _BW_DEFAULT,
               tuple(v for v in (8, 10, 12, 14, 20, 24, 28) if v != _BW_DEFAULT)[:6], "GB/s")
PRICE_VARY = Vary("price", "the VM's price per hour", 0.10, (0.05, 0.08, 0.12, 0.15, 0.20), "dollars")


def _chip(bandwidth: float = _BW_DEFAULT, peak: float = PEAK):
    return hardware.custom_chip(name="lab machine", hbm_capacity=16e9, hbm_bandwidth=bandwidth * 1e9,
                                flops={"fp32": peak})


def _balance(bandwidth: float = _BW_DEFAULT, weight_bytes: float = 4, peak: float = PEAK) -> float:
    return roofline.balance_batch(_chip(bandwidth, peak), weight_bytes=weight_bytes, compute_dtype="fp32")


def _step(batch: float, part: str = "t", flops: float = PEAK, mem_bw: float = BANDWIDTH) -> float:
    return float(measure.predicted_times(batches=batch, n_params=N_PARAMS, flops=flops, mem_bw=mem_bw)[part])


def _knee() -> float:
    """The two ends' knee (11.4, 11.5): the construction a learner can do by hand, not the lab's fitted knee."""
    return measure.ends_knee(list(STEPS), list(STEPS.values()))


def _cost(price: float = 0.10, batch: int = 256) -> float:
    return 1e6 * roofline.cost_per_token(step_time=STEPS[batch], batch=batch, n_chips=1, price_chip_hour=price)


register("11.1", Problem(
    "Predict your machine's balance batch", "number", lambda bandwidth=_BW_DEFAULT: _balance(bandwidth), rtol=0.02,
    unit="sequences", variants=(BW_VARY,),
    mistakes=(Mistake(lambda bandwidth=_BW_DEFAULT: _balance(bandwidth, peak=2 * PEAK),
                      "That counts every FLOP as a multiply. B* compares multiplies per second with bytes per second: "
                      "halve the FLOP/s first (2 FLOPs per multiply-add)."),
              Mistake(lambda bandwidth=_BW_DEFAULT: _balance(bandwidth, weight_bytes=2),
                      "That takes 2 bytes per weight (bf16). The lab's weights are float32: 4 bytes each."),
              Mistake(lambda bandwidth=_BW_DEFAULT: _balance(bandwidth) / 1e9,
                      "Check the units: FLOP/s and bytes/s both in SI, or both in G, so that B* comes out as a "
                      "number of sequences."))))
register("11.2", Problem(
    "The batch-1 floor: one read of the weights", "number", lambda: _step(1, "t_weights"), rtol=0.02, unit="seconds",
    mistakes=(Mistake(lambda: _step(1, "t_compute"),
                      "That is the compute time of one sequence. At batch 1 the step waits for the weights to "
                      "stream from memory."),
              Mistake(lambda: _step(1, "t_weights") / 4,
                      "That reads one byte per weight. The stack holds float32 weights: 4 bytes each."))))
register("11.3", Problem(
    "A step at batch 512", "number", lambda: _step(512), rtol=0.02, unit="seconds",
    mistakes=(Mistake(lambda: _step(512, "t_weights"),
                      "That is the weights' read alone. At batch 512 the multiplies take longer: which time wins?"),
              Mistake(lambda: _step(512, "t_compute") / 2,
                      "That counts one FLOP per multiply-add. Each weight costs 2 FLOPs per sequence."))))
register("11.4", Problem(
    "Where the two ends' lines meet", "number", _knee, rtol=0.03, unit="sequences",
    mistakes=(Mistake(lambda: STEPS[1] / (STEPS[2] / 2),
                      "That takes the slope from batch 2, still on the flat part. Read the compute slope where the "
                      "curve is straight: the largest batches."),
              Mistake(lambda: _knee() * 2,
                      "Check the slope: time per sequence is the step time divided by the batch."))))
register("11.5", Problem(
    "The ends' knee against the prediction", "number", lambda: _knee() / _balance(), rtol=0.03, unit="",
    mistakes=(Mistake(lambda: _balance() / _knee(),
                      "That is the prediction over the measurement. The question asks measured / predicted."),)))
register("11.6", Problem(
    "What bandwidth did batch 1 reach?", "number", lambda: WEIGHT_BYTES / STEPS[1], rtol=0.02, unit="bytes/s",
    mistakes=(Mistake(lambda: N_PARAMS / STEPS[1],
                      "That counts weights, not bytes. Each float32 weight is 4 bytes."),
              Mistake(lambda: WEIGHT_BYTES * STEPS[1],
                      "Bandwidth is bytes divided by seconds."),
              Mistake(lambda: STEPS[1] / WEIGHT_BYTES,
                      "That is seconds per byte, upside down: bandwidth is bytes divided by seconds."),
              Mistake(lambda: STEPS[1] / N_PARAMS,
                      "That is seconds per weight, upside down, and counts weights: divide the bytes (4 per weight) "
                      "by the seconds."))))
register("11.7", Problem(
    "Dollars per million tokens on a rented CPU", "number", lambda price=0.10: _cost(price), rtol=0.02,
    unit="dollars per million tokens", variants=(PRICE_VARY,),
    mistakes=(Mistake(lambda price=0.10: _cost(price) / 1e6,
                      "That is dollars per token; the question asks per million tokens."),
              Mistake(lambda price=0.10: _cost(price) * 256,
                      "That charges the whole step to one token. A step at batch 256 makes 256 tokens."),
              Mistake(lambda price=0.10: _cost(price) * 3600,
                      "The price is per hour: divide it by 3,600 to get dollars per second."))))


def _small_batch_dip() -> str:
    """11.8: batch 2 and 4 are slower than batch 1 while the roofline is the batch-1 floor at both."""
    flat = all(_step(b) == _step(1) for b in (2, 4))
    slower = all(STEPS[b] > STEPS[1] for b in (2, 4))
    if not (flat and slower):
        raise RuntimeError("problem 11.8 assumes a flat roofline and slower measured steps at batch 2 and 4")
    return "c"


register("11.8", Problem(
    "Why is batch 4 slower than batch 1?", "choice", _small_batch_dip, options=("a", "b", "c", "d"),
    nudges={"a": "The weights do not change size with the batch: they never fitted in the cache.",
            "b": "At batch 4 the compute time is far below the weights' read: the roofline is still flat there.",
            "d": "The lab's default run reads no KV cache, and a KV read would grow smoothly with the batch."}))
