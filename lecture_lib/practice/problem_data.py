"""The inputs some practice problems hand to the learner, and nothing else: no expected answers, no helpers that
compute one.

An exercise notebook imports this module, not a problem module (:mod:`lecture_lib.practice.problems`), so the
names one Tab away are the problem's data (a tiny MoE layer and its tokens, a published ``config.json``, a
figure to read), never a function that prints the answer (issue 49 §4). The problem modules import their inputs
from here, so each is written once.
"""

from __future__ import annotations

import numpy as np

__all__ = ["LAB_BANDWIDTH", "LAB_N_PARAMS", "LAB_PEAK", "LAB_STEPS", "LAB_WEIGHT_BYTES", "QWEN3_30B_A3B_CONFIG",
           "figure_routing", "mystery_gantt", "tiny_router_layer"]


def tiny_router_layer():
    """Problem 2.9's layer and tokens: 16 experts, 2 per GPU, 2 GPUs per rack, top-2; 4,000 tokens.
    Returns ``(layer, tokens)``: a :class:`lecture_lib.moe.TinyMoE` and a (4000, 16) array."""
    from lecture_lib import moe

    layer = moe.TinyMoE.random(d_model=16, d_ff=32, n_experts=16, k=2, experts_per_gpu=2, gpus_per_rack=2, seed=7)
    tokens = np.random.default_rng(2026).normal(size=(4000, 16))
    return layer, tokens


def figure_routing():
    """Problem 2.10's routing: the default TinyMoE (seed 1) on 64 random tokens (seed 5); a
    :class:`lecture_lib.moe.Routing`."""
    from lecture_lib import moe

    layer = moe.TinyMoE.random(seed=1)
    _, routing = layer.forward(np.random.default_rng(5).normal(size=(64, layer.d_model)))
    return routing


def mystery_gantt():
    """The figure of problem 3.4: one simulated schedule, P = 4 and m = 6, its name withheld (the title asks
    which it is). The schedule's settings stay in the problem module, read here only when the figure is drawn; where
    the answer key is out of reach (graded work at autograde, whose sandbox covers it), a sentence says so instead."""
    from lecture_lib import pipeline
    from lecture_lib.explorers import pipeline as pipeline_explorers
    from lecture_lib.explorers import plots

    try:
        from lecture_lib.practice.problems import ch03
    except ImportError:
        return ("The chart of problem 3.4 is drawn in your own copy of this notebook; where the grader runs it, "
                "the problems are out of reach and it is not drawn.")

    timeline = pipeline.simulate(**ch03._MYSTERY)
    return plots.to_image(pipeline_explorers.gantt_figure(timeline, title="which schedule is this?"))


#: The published config.json of Qwen3-30B-A3B (huggingface.co/Qwen/Qwen3-30B-A3B, config.json), the fields the
#: course reads, typed from the file: the model Chapter 10's problems plan.
QWEN3_30B_A3B_CONFIG = {
    "_name_or_path": "Qwen/Qwen3-30B-A3B", "model_type": "qwen3_moe", "hidden_size": 2048,
    "intermediate_size": 6144, "moe_intermediate_size": 768, "num_hidden_layers": 48, "num_attention_heads": 32,
    "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128, "num_experts_per_tok": 8,
    "decoder_sparse_step": 1, "mlp_only_layers": [], "vocab_size": 151936, "tie_word_embeddings": False,
    "use_sliding_window": False, "max_position_embeddings": 40960}


def _three_digits(value: float) -> float:
    return float(f"{value:.3g}")


# The lab's practice problems (Chapter 11) work on the lab's own measurement of the course's reference machine,
# measure.example_profile(), rounded to three significant digits as the problems print them.
def _lab_profile():
    from lecture_lib import measure

    return measure.example_profile()


_LAB = _lab_profile()
#: float32 matmul peak of the reference machine, FLOP/s
LAB_PEAK = _three_digits(_LAB.flops)
#: its read-only memory bandwidth, bytes/s
LAB_BANDWIDTH = _three_digits(_LAB.mem_bw)
#: the lab's decode stack: its float32 weights, and their bytes (4 each)
LAB_N_PARAMS = int(_LAB.decode["n_params"])
LAB_WEIGHT_BYTES = 4 * LAB_N_PARAMS
#: measured decode-step times (seconds) at the batches the problems print
LAB_STEPS = {b: _three_digits(s) for b, s in zip(_LAB.decode["batches"], _LAB.decode["seconds"])
             if b in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)}
