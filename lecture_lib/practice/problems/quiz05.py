"""Chapter 5's quiz and exam questions (quizzes/05_rl_overtraining_beyond_chinchilla_quiz.ipynb): 5.101-5.106.

Released only through nbgrader (``nbgrader-source quizzes``); most numbers vary per student. Every expected value
is computed from the library, as in ``ch05.py``.
"""

from __future__ import annotations

from lecture_lib import scaling

from ..registry import Mistake, Problem, Vary, register


def _chinchilla(params: float = 30e9) -> float:
    return float(scaling.CHINCHILLA_TOKENS(N_active=params, tokens_per_param=20))


def _train_flops(tokens: float = 15e12) -> float:
    return float(scaling.TRAINING_COMPUTE(N_active=70e9, D_pretrain=tokens))


def _optimal_size(compute: float = 1e24) -> float:
    return float(scaling.compute_optimal(compute=compute)["n_params"])


def _more_traffic() -> str:
    light = scaling.inference_aware_optimum(target_loss=2.0, inference_tokens=1e12)["n_params"]
    heavy = scaling.inference_aware_optimum(target_loss=2.0, inference_tokens=1e13)["n_params"]
    return "a" if heavy < light else "b" if heavy > light else "c"


def _costlier_decode() -> str:
    slow = scaling.PRETRAIN_TOKENS(D_inference=1e13, ineff=3)
    fast = scaling.PRETRAIN_TOKENS(D_inference=1e13, ineff=1)
    return "a" if slow > fast else "b" if slow < fast else "c"


def _loss(tokens: float = 15e12) -> float:
    return float(scaling.loss(n_params=8e9, tokens=tokens))


PARAMS = Vary("params", "the model's parameters", 30e9, (8e9, 13e9, 70e9, 180e9, 400e9), "parameters")
TOKENS = Vary("tokens", "the pre-training tokens", 15e12, (2e12, 5e12, 10e12, 20e12, 36e12), "tokens")
COMPUTE = Vary("compute", "the training compute", 1e24, (1e23, 3e23, 3e24, 5e24), "FLOPs")
LOSS_TOKENS = Vary("tokens", "the pre-training tokens", 15e12, (1e12, 2e12, 5e12, 30e12), "tokens")

register("5.101", Problem(
    "Chinchilla's tokens for a 30B model", "number", _chinchilla, rtol=0.02, unit="tokens", variants=(PARAMS,)))
register("5.102", Problem(
    "Pre-training compute of a 70B model", "number", _train_flops, rtol=0.02, unit="FLOPs", variants=(TOKENS,),
    mistakes=(Mistake(lambda tokens=15e12: _train_flops(tokens) / 3,
                      "That is 2 N D, the forward pass alone; training also runs the backward pass."),)))
register("5.103", Problem(
    "The compute-optimal size for a budget", "number", _optimal_size, rtol=0.03, unit="parameters",
    variants=(COMPUTE,),
    wrong_hint="Use the course's fitted Chinchilla law: scaling.compute_optimal(compute=...)."))
register("5.104", Problem(
    "More traffic, which model?", "choice", _more_traffic, options=("a", "b", "c", "d"),
    nudges={"b": "Serving costs grow with the model's size and the traffic: which way does that push?"}))
register("5.105", Problem(
    "Costlier decode, how much pre-training?", "choice", _costlier_decode, options=("a", "b", "c", "d"),
    nudges={"b": "Look where the inefficiency sits in scaling.PRETRAIN_TOKENS."}))
register("5.106", Problem(
    "The loss of an over-trained 8B model", "number", _loss, rtol=0.001, variants=(LOSS_TOKENS,),
    wrong_hint="Use the course's fitted law: scaling.loss(n_params=..., tokens=...). Losses differ in the third digit."))
