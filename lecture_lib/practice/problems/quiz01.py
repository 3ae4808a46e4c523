"""Chapter 1's quiz and exam questions (quizzes/01_batch_size_cost_and_speed_quiz.ipynb): problems 1.101-1.106.

Not in the practice set (solutions/): they are released only through nbgrader (``nbgrader-source quizzes``), and
most numbers vary per student. Every expected value is computed from the library, as in ``ch01.py``.
"""

from __future__ import annotations

from lecture_lib import hardware, models, roofline

from ..registry import Mistake, Problem, Vary, register


def _h100_balance(sparsity: float = 16) -> float:
    return roofline.balance_batch(hardware.get("H100"), weight_bytes=1, compute_dtype="fp8", sparsity=sparsity)


def _llama405_floor(gpus: int = 8) -> float:
    model = models.get("llama-3-405b")
    return roofline.T_WEIGHTS(N_total=model.params_total, bytes_param=1, mem_bw=gpus * hardware.get("H200").hbm_bandwidth)


def _box_step(model: str, chip: str, bytes_param: float, gpus: int = 8) -> float:
    n = models.get(model).params_total
    return roofline.T_WEIGHTS(N_total=n, bytes_param=bytes_param, mem_bw=gpus * hardware.get(chip).hbm_bandwidth)


def _dense_cost(batch: float = 64, price: float = 2.5, *, n_chips: int = 8) -> float:
    step = _box_step("llama-3-70b", "H100", 2)
    return roofline.cost_per_token(step_time=step, batch=batch, n_chips=n_chips, price_chip_hour=price) * 1e6


def _bandwidth_doubled() -> str:
    base = dict(FLOPs=1.0, N_total=8.0, bytes_param=1.0, N_active=1.0)
    ratio = roofline.BALANCE_BATCH(mem_bw=2.0, **base) / roofline.BALANCE_BATCH(mem_bw=1.0, **base)
    return {0.5: "a", 1.0: "b", 2.0: "c", 4.0: "d"}[round(float(ratio), 6)]


def _cost_below_balance() -> str:
    model, chip = models.get("llama-3-70b"), hardware.get("H100")
    inputs = dict(n_chips=1, price_chip_hour=2.0, N_active=model.params_active, N_total=model.params_total,
                  FLOPs=chip.flops["bf16"], mem_bw=chip.hbm_bandwidth, bytes_param=2, bytes_tok=1, len_ctx=1)   # KV left out: one byte of context
    small, large = roofline.COST_PER_TOKEN(B=32, **inputs), roofline.COST_PER_TOKEN(B=64, **inputs)
    ratio = float(large / small)
    return "a" if abs(ratio - 0.5) < 1e-3 else "b" if ratio < 1 else "c" if abs(ratio - 1) < 1e-3 else "d"


def _per_user_speed(batch: float = 1024) -> float:
    model, chip = models.get("llama-3-70b"), hardware.get("H200")
    step = roofline.T_STEP(B=batch, N_active=model.params_active, FLOPs=8 * chip.flops["fp8"], bytes_tok=1, len_ctx=1,
                           mem_bw=8 * chip.hbm_bandwidth, N_total=model.params_total, bytes_param=1)
    return 1.0 / float(step)


SPARSITY = Vary("sparsity", "the sparsity N_total / N_active", 16, (4, 6, 8, 12, 24, 32, 48))
GPUS = Vary("gpus", "the H200 GPUs the weights are spread over", 8, (4, 6, 12, 16, 24), "GPUs")
DENSE_BATCH = Vary("batch", "the batch B", 64, (16, 24, 32, 48, 96, 128), "sequences")
DENSE_PRICE = Vary("price", "the price per GPU-hour", 2.5, (1.5, 2.0, 3.0, 3.5, 4.0), "dollars")
BIG_BATCH = Vary("batch", "the batch B", 1024, (512, 768, 1536, 2048, 3072), "sequences")

register("1.101", Problem(
    "The balance batch of a sparser MoE", "number", _h100_balance, rtol=0.02, unit="sequences",
    variants=(SPARSITY,),
    mistakes=(Mistake(lambda sparsity=16: _h100_balance(1),
                      "That is the hardware ratio alone; the balance batch also grows with the sparsity."),
              Mistake(lambda sparsity=16: 2 * _h100_balance(sparsity),
                      "Off by 2: the H100's FLOP/s count 2 per multiply-add."))))
register("1.102", Problem(
    "The latency floor of Llama 3 405B on H200s", "number", _llama405_floor, rtol=0.02, unit="seconds",
    variants=(GPUS,),
    mistakes=(Mistake(lambda gpus=8: _llama405_floor(1),
                      "That is one GPU's bandwidth; every GPU reads its share of the weights at once."),)))
register("1.103", Problem(
    "A dense model's cost per million tokens on a rented box", "number", _dense_cost, rtol=0.02,
    unit="dollars per million tokens", variants=(DENSE_BATCH, DENSE_PRICE),
    mistakes=(Mistake(lambda batch=64, price=2.5: _dense_cost(batch, price, n_chips=1),
                      "That pays for one GPU; the step runs on all eight."),)))
register("1.104", Problem(
    "Double the bandwidth", "choice", _bandwidth_doubled, options=("a", "b", "c", "d"),
    nudges={"c": "More bandwidth makes the weight fetch shorter, so fewer sequences are needed to cover it.",
            "b": "The bandwidth is in the formula: look where mem_bw sits in roofline.BALANCE_BATCH."}))
register("1.105", Problem(
    "Below the balance batch, a bigger batch", "choice", _cost_below_balance, options=("a", "b", "c", "d"),
    nudges={"c": "Below the balance batch the step time does not grow with B: what does that do per token?",
            "d": "Below the balance batch the step is the weight fetch, the same for any B."}))
register("1.106", Problem(
    "Per-user speed above the balance batch", "number", _per_user_speed, rtol=0.02, unit="tokens per second",
    variants=(BIG_BATCH,),
    mistakes=(Mistake(lambda batch=1024: 1.0 / _box_step("llama-3-70b", "H200", 1),
                      "That is the weight-fetch floor. Above the balance batch the compute sets the step."),)))
