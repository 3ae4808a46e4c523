"""Chapter 7's quiz and exam questions (quizzes/07_neural_nets_and_cryptography_quiz.ipynb): 7.101-7.106.

Released only through nbgrader (``nbgrader-source quizzes``); most numbers vary per student. Every expected value
is computed from the library, as in ``ch07.py``.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from lecture_lib import hardware, models
from lecture_lib import reversible as rev

from ..registry import Mistake, Problem, Vary, register


def _llama8b():
    return models.get("llama-3.1-8b")


def _checkpoint_memory(len_seq: float = 8192, *, strategy: str = "checkpoint") -> float:
    model = _llama8b()
    return float(rev.activation_memory(strategy=strategy, n_layers=model.n_layers, d_model=model.d_model,
                                       len_seq=len_seq))


def _segment(n_layers: int = 80) -> float:
    return float(rev.K_SEGMENT_BEST(act_values=20, n_layers=n_layers))


def _feistel_undone() -> str:
    x = np.arange(256, dtype=np.uint8)
    y = x[::-1].copy()
    f = lambda v: (v & 0x0F) * 0
    g = lambda v: v & 0xF0
    exact = all(np.array_equal(np.stack(rev.feistel_xor_inverse(*rev.feistel_xor(x, y, h), h)), np.stack((x, y)))
                for h in (f, g))
    return "a" if exact else "b"


def _recompute_flops() -> str:
    ratio = sp.nsimplify(rev.FLOPS_RECOMPUTE.rhs / rev.FLOPS_STANDARD.rhs)
    return {sp.Integer(1): "a", sp.Rational(4, 3): "b", sp.Integer(2): "c", sp.Integer(3): "d"}[ratio]


def _kv_advantage(kv_bytes: float = 1) -> float:
    llama, h100 = models.get("llama-3-70b"), hardware.get("H100")
    return float(rev.KV_ADVANTAGE(N_active=llama.params_active, mem_bw=h100.hbm_bandwidth, FLOPs=h100.flops["fp8"],
                                  bytes_tok=llama.kv_bytes_per_token(kv_bytes)))


def _reversible_memory(batch: int = 8) -> float:
    model = _llama8b()
    return float(rev.activation_memory(strategy="reversible", n_layers=model.n_layers, d_model=model.d_model,
                                       len_seq=8192, batch=batch))


SEQ = Vary("len_seq", "the sequence length", 8192, (2048, 4096, 16384, 32768), "tokens")
LAYERS = Vary("n_layers", "the layers", 80, (32, 48, 64, 126), "layers")
KV_FORMAT = Vary("kv_bytes", "the bytes per cached value", 1, (0.5, 2, 4), "bytes")
BATCH = Vary("batch", "the batch", 8, (2, 4, 12, 16, 32), "sequences")

register("7.101", Problem(
    "Checkpointed activations of Llama 3.1 8B", "number", _checkpoint_memory, rtol=0.02, unit="bytes",
    variants=(SEQ,),
    mistakes=(Mistake(lambda len_seq=8192: _checkpoint_memory(len_seq, strategy="standard"),
                      "That keeps every layer's activations: the question checkpoints at the best segment length."),)))
register("7.102", Problem(
    "The best checkpoint segment", "number", _segment, rtol=0.02, unit="layers", variants=(LAYERS,),
    wrong_hint="Minimise held activations over the segment length: rev.K_SEGMENT_BEST."))
register("7.103", Problem(
    "A Feistel block with a lossy f", "choice", _feistel_undone, options=("a", "b", "c", "d"),
    nudges={"b": "Try it: rev.feistel_xor_inverse undoes rev.feistel_xor whatever f is, since x passes through.",
            "c": "XOR on integers is exact: nothing is rounded."}))
register("7.104", Problem(
    "What reversibility costs in FLOPs", "choice", _recompute_flops, options=("a", "b", "c", "d"),
    nudges={"c": "The backward pass is already 4 N of the 6 N: recomputing the forward adds 2 N more."}))
register("7.105", Problem(
    "Recompute or read Llama 3 70B's KV", "number", _kv_advantage, rtol=0.02, variants=(KV_FORMAT,),
    mistakes=(Mistake(lambda kv_bytes=1: 1 / _kv_advantage(kv_bytes), "Upside down: recompute time over read time."),)))
register("7.106", Problem(
    "Reversible activations for a batch", "number", _reversible_memory, rtol=0.02, unit="bytes",
    variants=(BATCH,),
    mistakes=(Mistake(lambda batch=8: _reversible_memory(1), "That is one sequence; the batch holds several."),)))
