"""Chapter 5's practice problems (solutions/05_rl_overtraining_beyond_chinchilla.ipynb).

Every expected value is computed from :mod:`lecture_lib.scaling` with the inputs the problem
statement names; see :mod:`lecture_lib.checks` for how answers are judged.
"""

from __future__ import annotations

from . import scaling
from .checks import Mistake, Problem, _register

DAY = scaling.SECONDS_PER_DAY


def _fewest_tokens() -> str:
    tokens = scaling.equal_cost_tokens(d_inference=1.0, **{"rl_multiplier": scaling.FLASHCARD["k_RL"],
                                                          "inefficiency": scaling.FLASHCARD["ineff"]})
    tokens["D_inference"] = 1.0
    fewest = min(tokens, key=tokens.get)
    return {"D_pretrain": "pre-training", "D_RL": "RL", "D_inference": "inference"}[fewest]


# Problem 5.2: a family serving 800M tokens/s over four models, each deployed for 90 days.
def _family_tokens(split: float = 4) -> float:
    return scaling.INFERENCE_TOKENS(traffic=8e8, t_deploy=90 * DAY, n_family=split)


# Problem 5.3: train on every rollout (k = 6), decode at a quarter of training MFU.
def _pretrain_per_rl_token(inefficiency: float = 4.0) -> float:
    tokens = scaling.equal_cost_tokens(d_inference=1e14, rl_multiplier=6, inefficiency=inefficiency)
    return tokens["D_pretrain"] / tokens["D_RL"]


def _pretrain_per_rl_slip() -> float:
    """The on-air slip: multiplying by the MFU (1/4) instead of dividing by it."""
    return float(scaling.ALPHA_BOARD(k_RL=6, ineff=0.25))


# Problem 5.5: 70B active, a family at 300M tokens/s split five ways, 3 months, flashcard values.
def _overtraining_70b(split: float = 5, tokens_per_param: float = 20) -> float:
    d_inference = scaling.INFERENCE_TOKENS(traffic=3e8, t_deploy=90 * DAY, n_family=split)
    tokens = scaling.equal_cost_tokens(d_inference=d_inference, rl_multiplier=3, inefficiency=3)
    return scaling.overtraining(d_pretrain=tokens["D_pretrain"], n_active=70e9, tokens_per_param=tokens_per_param)


# Problem 5.6: the heuristic explorer at p = 0.5, q = 1.5.
def _which_side() -> str:
    ratio = scaling.heuristic_gap(p=0.5, q=1.5)["x_ratio"]
    return "left" if ratio < 1 else "right" if ratio > 1 else "at the crossing"


# Problem 5.8: the two loss terms at Chinchilla's compute optimum, Hoffmann et al.'s printed fit.
def _term_ratio(fit: str = "hoffmann-2022", *, inverted: bool = False) -> float:
    best = scaling.compute_optimal(compute=5.76e23, fit=fit)
    f = scaling.get_fit(fit)
    param_term = f.A / best["n_params"] ** f.alpha
    data_term = f.B / best["tokens"] ** f.beta
    return data_term / param_term if inverted else param_term / data_term


# Problem 5.9: compute-optimal size at 1e25 FLOPs.
def _optimal_size(fit: str = "besiroglu-2024") -> float:
    return scaling.compute_optimal(compute=1e25, fit=fit)["n_params"]


def _twenty_tokens_rule() -> float:
    return (1e25 / (6 * scaling.CHINCHILLA_TOKENS_PER_PARAM)) ** 0.5


# Problem 5.10: Sardana et al.'s optimum for a Chinchilla-optimal 70B model's loss and 1e13 tokens.
def _sardana_target() -> float:
    return scaling.loss(n_params=70e9, tokens=scaling.chinchilla_tokens_for(n_params=70e9))


def _sardana_tokens_per_param(key: str = "tokens_per_param") -> float:
    return scaling.inference_aware_optimum(target_loss=_sardana_target(), inference_tokens=1e13)[key]


_register("5.1", Problem(
    "Which phase gets the fewest tokens?", "choice", _fewest_tokens,
    options=("pre-training", "RL", "inference"),
    alternates={"pre-training": ("pretraining", "pretrain", "pre-train"), "RL": ("reinforcement learning", "rl"),
                "inference": ("serving",)},
    wrong_hint="Equal cost means fewer tokens where each token costs more: compare FLOPs per token x inefficiency."))
_register("5.2", Problem(
    "Lifetime tokens of one model", "number", _family_tokens, rtol=0.02, unit="tokens",
    mistakes=(Mistake(lambda: _family_tokens(1),
                      "That is the traffic of the whole family. Each model serves only its share."),)))
_register("5.3", Problem(
    "Pre-training tokens per RL token", "number", _pretrain_per_rl_token, rtol=0.02, unit="tokens per RL token",
    mistakes=(Mistake(_pretrain_per_rl_slip,
                      "That is the slip made on air: a lower decode MFU makes each RL token cost more, so the "
                      "inefficiency multiplies RL's cost; it is not the MFU that multiplies it."),
              Mistake(lambda: _pretrain_per_rl_token(1.0),
                      "That leaves out the inefficiency: RL rollouts are decoded, at a quarter of training MFU."))))
_register("5.4", Problem(
    "Derive D_pretrain / D_RL", "expression", lambda: scaling.PRETRAIN_TOKENS.rhs / scaling.RL_TOKENS.rhs,
    wrong_hint="Solve C_pretrain = C_RL = C_inference for D_pretrain and D_RL, then divide."))
_register("5.5", Problem(
    "How over-trained is a 70B model?", "number", _overtraining_70b, rtol=0.03, unit="times Chinchilla",
    mistakes=(Mistake(lambda: _overtraining_70b(split=1),
                      "That gives every model the whole family's traffic: divide by the five models first."),)))
_register("5.6", Problem(
    "Read the plot: which side of the crossing?", "choice", _which_side,
    options=("left", "right", "at the crossing"),
    alternates={"left": ("left of the crossing", "smaller", "below"), "right": ("right of the crossing", "larger",
                                                                              "above"),
                "at the crossing": ("crossing", "same", "equal", "at")},
    wrong_hint="Find the lowest point of the black curve and compare it with the dashed grey line."))
_register("5.7", Problem(
    "Derive the minimum of a power-law sum", "expression", lambda: scaling.POWER_OPTIMUM.rhs,
    wrong_hint="Differentiate coef_a*x_alloc**(-p_fall) + coef_b*x_alloc**q_rise with respect to x_alloc, set it "
               "to zero and solve. Check: at p_fall = q_rise = 1 it must give sqrt(coef_a/coef_b)."))
_register("5.8", Problem(
    "Chinchilla's two terms at the optimum", "number", _term_ratio, rtol=0.02,
    mistakes=(Mistake(lambda: 1.0,
                      "That is the heuristic's answer (equal terms). At a power-law optimum the terms are weighted "
                      "by their exponents."),
              Mistake(lambda: _term_ratio(inverted=True),
                      "That is the data term over the parameter term: turn it over."))))
_register("5.9", Problem(
    "Compute-optimal size for 1e25 FLOPs", "number", _optimal_size, rtol=0.03, unit="parameters",
    mistakes=(Mistake(lambda: _optimal_size("hoffmann-2022"),
                      "That uses Hoffmann et al.'s printed fit; this problem asks for Besiroglu et al.'s refit."),
              Mistake(_twenty_tokens_rule, "That is the 20-tokens-per-parameter rule of thumb, close but not the "
                                           "fit: use the closed form for N_opt with the fit's constants."),
              Mistake(lambda: _optimal_size("hoffmann-2022-unrounded"),
                      "That uses Hoffmann et al.'s fit; this problem asks for Besiroglu et al.'s refit."))))
_register("5.10", Problem(
    "Tokens per parameter once inference counts", "number", _sardana_tokens_per_param, rtol=0.03,
    unit="tokens per parameter",
    mistakes=(Mistake(lambda: _sardana_tokens_per_param("chinchilla_tokens_per_param"),
                      "That is the Chinchilla-optimal model of the same loss: it ignores the inference demand."),)))
