"""Chapter 5: because of RL, models may be 100x over-trained beyond Chinchilla-optimal
(lecture 01:18:59-01:33:02).

SymPy first, in the board's order (lecture notes §5.1):

1. **The heuristic** (E5.1, 01:20:48): a sum of a falling and a rising cost is smallest roughly
   where the two are equal. Exact for ``a/x + b x``; for power laws ``a x^-p + b x^q`` the optimum
   has ``p A = q B`` instead, so the terms are equal only "within factors" (q/p).
2. **Three compute costs** (E5.2, 01:22:30): pre-training ``6 N D`` (2 forward + 4 backward),
   RL ``(2 to 6) N D_RL x inefficiency``, inference ``2 N D_inference x inefficiency``.
3. **Equal costs** (E5.3, 01:24:28-01:27:11), solved with ``sp.solve``: with RL multiplier 3 and
   decode at 1/3 of training MFU, ``D_pretrain = 1.5 D_RL = D_inference``.
4. **Counting inference tokens** (E5.4, 01:29:40): traffic x deployment life / family split,
   about 2.6e14 for the lecture's numbers.
5. **Chinchilla** (E5.5, 01:31:35): 20 tokens per parameter, 2T for 100 B active, so ~100x.

Beyond the lecture: the Chinchilla loss ``L = E + A/N^alpha + B/D^beta`` with its published fits,
the compute-optimal allocation it implies (closed form, from ``sp.solve``), and the
inference-aware optimum of Sardana et al. (2023): the model that reaches a target loss for the
least training-plus-inference compute, found numerically (vectorised bisection on the SymPy
derivative) because it has no closed form.

Convention: FLOPs count 2 per multiply-add, as in the lecture's 6ND and 2ND. ``ineff`` is
training MFU / decode MFU, so RL and inference FLOPs are expressed in training-equivalent cost.
``N`` here is ``N_active``: per-token compute, which is what the lecture compares (for a dense
model, as in the Chinchilla papers, active = total).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import sympy as sp

from . import validate
from .catalogue import Catalogue
from .formula import Formula, lambdified, simplify, solve
from .symbols import (A_loss, B_loss, C_inference, C_pretrain, C_RL, C_total, C_train, D_chinchilla,
                      D_inference, D_opt, D_pretrain, D_RL, E_loss, L_loss, N_active, N_opt, alpha_board,
                      alpha_loss, beta_board, beta_loss, coef_a, coef_b, cost_sum, ineff, k_RL, n_family,
                      overtrain, p_fall, penalty, q_rise, t_deploy, tokens_per_param, traffic, x_alloc,
                      x_equal, x_star)

SECONDS_PER_DAY = 86_400
DAYS_PER_MONTH = 30            # the lecture's "2 months" is 60 days (notes §5.2: 5e7 x 60 x 86,400)
CHINCHILLA_TOKENS_PER_PARAM = 20   # Hoffmann et al. 2022 (arXiv 2203.15556): Chinchilla, 70 B params on 1.4 T tokens



def _positive_root(equation, unknown) -> sp.Expr:
    """The one positive solution of ``equation`` for ``unknown`` (``sp.solve`` without its slow
    verification step; every symbol is positive, so the other roots are 0 or negative)."""
    roots = [root for root in solve(equation, unknown, check=False) if root.is_positive]
    if len(roots) != 1:
        raise ArithmeticError(f"expected one positive root for {unknown}, got {roots}")
    return roots[0]


# --- E5.1 The heuristic: minimise a sum by making its terms equal (lecture 01:20:48) ------------
SUM_SIMPLE = Formula(cost_sum, coef_a / x_alloc + coef_b * x_alloc,
                     source="lecture 01:20:48 (E5.1): '1/x and x'")
SIMPLE_OPTIMUM = Formula(x_star, _positive_root(sp.diff(SUM_SIMPLE.rhs, x_alloc), x_alloc),
                         source="course: d(cost)/dx = 0 for a/x + b x")
FALLING_TERM = coef_a * x_alloc ** -p_fall
RISING_TERM = coef_b * x_alloc ** q_rise
FALLING_COST = Formula(cost_sum, FALLING_TERM, source="lecture 01:20:48 (E5.1): the falling cost A(x)")
RISING_COST = Formula(cost_sum, RISING_TERM, source="lecture 01:20:48 (E5.1): the rising cost B(x)")
SUM_POWER = Formula(cost_sum, FALLING_TERM + RISING_TERM,
                    source="lecture 01:20:48 (E5.1): 'things that follow power laws tend to have this property'")
POWER_OPTIMUM = Formula(x_star, _positive_root(sp.diff(SUM_POWER.rhs, x_alloc), x_alloc),
                        source="course: d(cost)/dx = 0 for a x^-p + b x^q")
POWER_EQUAL = Formula(x_equal, _positive_root(sp.Eq(FALLING_TERM, RISING_TERM), x_alloc),
                      source="lecture 01:20:48: the heuristic, set the two costs equal")
# The penalty does not depend on a and b (measure x in units of x_equal and the cost in units of
# the common term value there), so it is derived with a = b = 1; the tests check other a, b.
_UNIT = {coef_a: 1, coef_b: 1}
HEURISTIC_PENALTY = Formula(
    penalty,
    simplify(SUM_POWER.rhs.subs(x_alloc, POWER_EQUAL.rhs).subs(_UNIT)
                / SUM_POWER.rhs.subs(x_alloc, POWER_OPTIMUM.rhs).subs(_UNIT)),
    source="course: how much more the sum costs at the crossing than at the true minimum")

# --- E5.2 Three compute costs (lecture 01:22:30-01:23:20) --------------------------------------
FLOPS_FORWARD = 2    # one multiply + one add per parameter per token
FLOPS_BACKWARD = 4   # gradients with respect to the activations and to the weights: twice the forward
COST_PRETRAIN = Formula(C_pretrain, (FLOPS_FORWARD + FLOPS_BACKWARD) * N_active * D_pretrain,
                        source="lecture 01:22:30 (E5.2): 6 N D, 2 forward + 4 backward")
COST_RL = Formula(C_RL, k_RL * N_active * D_RL * ineff,
                  source="lecture 01:23:20 (E5.2): (2 to 6) N D_RL x inefficiency")
COST_INFERENCE = Formula(C_inference, FLOPS_FORWARD * N_active * D_inference * ineff,
                         source="lecture 01:23:20 (E5.2): 2 N D_inference x inefficiency")
RL_MULTIPLIER_RANGE = (2.0, 6.0)   # generate every rollout (2); train on all of them too (+4)

# --- E5.3 Equal costs: "a good ballpark is a 33% split" (lecture 01:24:28-01:27:11) -------------
_EQUAL = solve([sp.Eq(COST_PRETRAIN.rhs, COST_INFERENCE.rhs), sp.Eq(COST_RL.rhs, COST_INFERENCE.rhs)],
                  [D_pretrain, D_RL], dict=True, check=False)[0]
PRETRAIN_TOKENS = Formula(D_pretrain, _EQUAL[D_pretrain],
                          source="lecture 01:24:28 (E5.3): C_pretrain = C_RL = C_inference solved for D_pretrain")
RL_TOKENS = Formula(D_RL, _EQUAL[D_RL],
                    source="lecture 01:28:14 (E5.3): RL gets fewer tokens because it is less machine-efficient")
FLASHCARD = {"k_RL": 3, "ineff": 3}   # Dwarkesh's flashcard: RL multiplier 3, decode MFU 1/3 of training

# --- Issue 49 §5: rollouts decode, training trains (a refinement of E5.2) -----------------------
# The board charges all k_RL FLOPs of an RL token at decode MFU. Only the rollout (2 FLOPs per parameter, forward,
# token by token) is decoded; the (k_RL - 2) of training on it run as a training step, at training MFU.
COST_RL_SPLIT = Formula(
    C_RL, (FLOPS_FORWARD * ineff + (k_RL - FLOPS_FORWARD)) * N_active * D_RL,
    source="course, refining lecture 01:23:20 (E5.2): rollouts are decoded (2 N per token at decode MFU, so x "
           "inefficiency); training on them, k_RL - 2 = 0 to 4, runs at training MFU",
    note="equals COST_RL at k_RL = 2 (generate only) and is below it for k_RL > 2, where the board charges the "
         "training part at decode MFU too",
    domain=k_RL >= FLOPS_FORWARD)
RL_TOKENS_SPLIT = Formula(
    D_RL, solve(sp.Eq(COST_RL_SPLIT.rhs, COST_INFERENCE.rhs), D_RL, check=False)[0],
    source="course: C_RL (split by MFU) = C_inference solved for D_RL")

# --- Issue 49 §5: three bills, one knob (E5.1 applied to E5.2) ------------------------------------
# At a fixed quality the knob is the model size N. Pre-training is the cost that falls as N grows (a bigger model
# needs fewer tokens); RL and inference, at given token counts, both rise with N. Section 1's rule pairs one falling
# cost with one rising cost, so with three bills it sets pre-training against the SUM of the other two.
PRETRAIN_TOKENS_ONE_KNOB = Formula(
    D_pretrain, solve(sp.Eq(COST_PRETRAIN.rhs, COST_RL.rhs + COST_INFERENCE.rhs), D_pretrain, check=False)[0],
    source="course, from lecture E5.1 and E5.3: the falling bill (pre-training) equal to the sum of the rising "
           "ones (RL + inference, both proportional to N at given token counts)",
    note="the lecture's '33% split' sets all three equal; with RL and inference equal to each other this rule "
         "gives 50/25/25 ('thirty-three versus twenty-five is only a small factor off')")

# The on-air version (01:25:28): pre-training + RL against inference (Dwarkesh's 50/50 framing),
# divided through by 6N so it reads D_pretrain + alpha D_RL = beta D_inference.
_FIFTY_FIFTY = sp.expand(solve(sp.Eq(COST_PRETRAIN.rhs + COST_RL.rhs, COST_INFERENCE.rhs), D_pretrain, check=False)[0])
ALPHA_BOARD = Formula(alpha_board, -_FIFTY_FIFTY.coeff(D_RL),
                      source="lecture 01:25:28-01:27:11 (E5.3), corrected: alpha = k_RL x inefficiency / 6")
BETA_BOARD = Formula(beta_board, _FIFTY_FIFTY.coeff(D_inference),
                     source="lecture 01:25:28-01:27:11 (E5.3), corrected: beta = inefficiency / 3")
LECTURE_MFU = 0.3   # "MFU ~30%" (lecture 01:25:28), used on air as the decode efficiency

# --- E5.4 Counting inference tokens (lecture 01:29:40-01:30:51) ---------------------------------
INFERENCE_TOKENS = Formula(D_inference, traffic * t_deploy / n_family,
                           source="lecture 01:29:40 (E5.4): tokens/s x deployment life, shared by a family")
LECTURE_TRAFFIC = 5e8        # "maybe 500M tokens/s" across the family (lecture 01:30:25)
LECTURE_MONTHS = 2           # "a model is deployed for 2 months"
LECTURE_FAMILY_SPLIT = 10    # "÷5-10"; the lecture's 50M tokens/s per model is ÷10
LECTURE_N_ACTIVE = 100e9     # "could be in the range of a hundred billion" (lecture 01:31:35)

# --- E5.5 Chinchilla comparison (lecture 01:31:35-01:32:13) -------------------------------------
CHINCHILLA_TOKENS = Formula(D_chinchilla, tokens_per_param * N_active,
                            source="lecture 01:31:35 (E5.5): 20 tokens per parameter (Hoffmann et al. 2022)")
OVERTRAINING = Formula(overtrain, D_pretrain / D_chinchilla,
                       source="lecture 01:32:13 (E5.5): 200T / 2T = 100x")
OVERTRAINING_FROM_TRAFFIC = Formula(
    overtrain, (PRETRAIN_TOKENS.rhs / CHINCHILLA_TOKENS.rhs).subs(D_inference, INFERENCE_TOKENS.rhs),
    source="lecture 01:29:40-01:32:13: E5.3, E5.4 and E5.5 chained")

# --- Beyond the lecture: the Chinchilla loss and its optimum ------------------------------------
LOSS = Formula(L_loss, E_loss + A_loss / N_active ** alpha_loss + B_loss / D_pretrain ** beta_loss,
               source="Hoffmann et al. 2022 (arXiv 2203.15556), eq. 2 / Appendix D.2")
TRAINING_COMPUTE = Formula(C_train, COST_PRETRAIN.rhs, source="C = 6 N D (Kaplan et al. 2020; Hoffmann et al. 2022)")
_LOSS_AT_BUDGET = LOSS.rhs.subs(D_pretrain, solve(sp.Eq(TRAINING_COMPUTE.rhs, C_train), D_pretrain, check=False)[0])
OPTIMAL_PARAMS = Formula(N_opt, _positive_root(sp.diff(_LOSS_AT_BUDGET, N_active), N_active),
                         source="Hoffmann et al. 2022, eq. 4: minimise L subject to 6 N D = C")
OPTIMAL_TOKENS = Formula(D_opt, C_train / (6 * OPTIMAL_PARAMS.rhs),
                         source="Hoffmann et al. 2022, eq. 4: D_opt = C / (6 N_opt)")
PARAM_TERM = A_loss / N_active ** alpha_loss
DATA_TERM = B_loss / D_pretrain ** beta_loss
TOKENS_WHERE_OPTIMAL = Formula(
    D_opt, _positive_root(sp.Eq(alpha_loss * PARAM_TERM, beta_loss * DATA_TERM), D_pretrain),
    source="course: the p A = q B identity at the optimum, solved for the tokens that make N optimal")
COST_TOTAL = Formula(C_total, COST_PRETRAIN.rhs + COST_RL.rhs + COST_INFERENCE.rhs,
                     source="lecture 01:22:30-01:24:28 (E5.2-E5.3): the three bills of one model, summed; "
                            "the equal-split rule is the lecture's shortcut to its minimum")
TRAIN_PLUS_INFERENCE = Formula(C_total, COST_PRETRAIN.rhs + COST_INFERENCE.rhs,
                               source="Sardana et al. 2023 (arXiv 2401.00448), eq. 3, with the lecture's inefficiency")
# One root; it is real only when L - E - A/N^alpha > 0 (tokens_for_loss checks that), so it is not "positive" for SymPy.
TOKENS_FOR_LOSS = Formula(D_pretrain, solve(sp.Eq(LOSS.rhs, L_loss), D_pretrain, check=False)[0],
                          source="course: L(N, D) = target solved for D, the tokens a model of size N needs "
                                 "(Sardana et al. 2023's constraint)",
                          domain=L_loss > E_loss + A_loss / N_active ** alpha_loss)


@dataclass(frozen=True)
class LossFit:
    """A published fit of ``L(N, D) = E + A/N^alpha + B/D^beta`` (N parameters, D tokens)."""

    name: str
    E: float
    A: float
    B: float
    alpha: float
    beta: float
    source: str

    def __post_init__(self):
        for name in ("name", "source"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise ValueError(f"{name} must be a non-empty str, got {validate._describe(getattr(self, name))}")
        for name in ("E", "A", "B", "alpha", "beta"):
            object.__setattr__(self, name, validate.scalar(name, getattr(self, name), maximum=1e12))

    def values(self, *, with_E: bool = True) -> dict:
        """Keyword arguments for the Formulas: ``LOSS(**fit.values(), N_active=..., D_pretrain=...)``.
        The optimum does not depend on E, so ``with_E=False`` leaves it out."""
        values = {"A_loss": self.A, "B_loss": self.B, "alpha_loss": self.alpha, "beta_loss": self.beta}
        return {"E_loss": self.E, **values} if validate.boolean("with_E", with_E) else values

    def __str__(self) -> str:
        return (f"{self.name}: E={self.E:g}, A={self.A:g}, B={self.B:g}, "
                f"alpha={self.alpha:g}, beta={self.beta:g}")


FITS: dict[str, LossFit] = {
    fit.name: fit for fit in (
        LossFit("hoffmann-2022", 1.69, 406.4, 410.7, 0.34, 0.28,
                "Hoffmann et al. 2022, 'Training Compute-Optimal Large Language Models', arXiv 2203.15556, "
                "Appendix D.2 (Approach 3), as printed in the paper (rounded)"),
        LossFit("hoffmann-2022-unrounded", 1.6934, 406.4, 410.7, 0.3392, 0.2849,
                "the same fit with the unrounded E, alpha, beta of the paper's TeX source, as reported by "
                "Besiroglu et al. 2024 (arXiv 2404.10102)"),
        LossFit("besiroglu-2024", 1.8172, 482.01, 2085.43, 0.3478, 0.3658,
                "Besiroglu, Erdil, Barnett, You 2024, 'Chinchilla Scaling: A replication attempt' (Epoch AI), "
                "arXiv 2404.10102: refit of Approach 3 on data reconstructed from Hoffmann et al.'s figure"),
    )
}
DEFAULT_FIT = "besiroglu-2024"


_FIT_CATALOGUE = Catalogue("loss fit", FITS)


def get_fit(name: str | LossFit = DEFAULT_FIT) -> LossFit:
    """A fit by name (``"hoffmann-2022"``, ``"hoffmann-2022-unrounded"``, ``"besiroglu-2024"``)."""
    return _FIT_CATALOGUE.resolve(name, "fit")


# --- Public functions: the lecture's chain ------------------------------------------------------
def _rl_multiplier(value):
    value = validate.number("rl_multiplier", value)
    low, high = RL_MULTIPLIER_RANGE
    if np.any(np.less(value, low)) or np.any(np.greater(value, high)):
        raise ValueError(f"rl_multiplier must be between {low:g} (generate only) and {high:g} "
                         f"(train on every rollout), got {value!r}")
    return value


def _inefficiency(value):
    value = validate.number("inefficiency", value)
    if np.any(np.less(value, 1)):
        raise ValueError(f"inefficiency must be >= 1 (training MFU / decode MFU), got {value!r}")
    return value


def inefficiency_from_mfu(decode_mfu_ratio):
    """``inefficiency = 1 / (decode MFU / training MFU)``: decode at 1/3 of training MFU -> 3."""
    ratio = validate.fraction("decode_mfu_ratio", decode_mfu_ratio)
    if np.any(np.less(ratio, 1e-6)):
        raise ValueError(f"decode_mfu_ratio must be >= 1e-6 (decode a million times slower at most), got {decode_mfu_ratio!r}")
    return 1.0 / ratio


@validate.reports_inputs
def inference_tokens(*, tokens_per_second, deployment_months, family_split=1.0):
    """Tokens one model serves in its life: ``traffic x t_deploy / n_family`` (lecture E5.4, 01:29:40).

    ``tokens_per_second`` is the traffic of the whole family; months are 30 days. The lecture's
    5e8 tokens/s x 2 months / 10 gives about 2.6e14 ("around two hundred trillion").
    """
    tokens_per_second = validate.number("tokens_per_second", tokens_per_second, maximum=1e15)
    deployment_months = validate.number("deployment_months", deployment_months, maximum=1200)
    split = validate.number("family_split", family_split, maximum=1e6)
    if np.any(np.less(split, 1)):
        raise ValueError(f"family_split must be >= 1 (models sharing the traffic), got {family_split!r}")
    seconds = np.multiply(deployment_months, DAYS_PER_MONTH * SECONDS_PER_DAY)
    return INFERENCE_TOKENS(traffic=tokens_per_second, t_deploy=seconds, n_family=split,
                            called_as={"traffic": "tokens_per_second", "t_deploy": "deployment_months",
                                       "n_family": "family_split"})


@validate.reports_inputs
def equal_cost_tokens(*, d_inference, rl_multiplier=3.0, inefficiency=3.0) -> dict:
    """Pre-training and RL tokens that make the three compute costs equal (lecture E5.3, 01:24:28).

    ``D_pretrain = inefficiency x D_inference / 3`` and ``D_RL = 2 D_inference / k_RL``; with the
    flashcard's k_RL = 3 and inefficiency 3, ``D_pretrain = 1.5 D_RL = D_inference``.
    """
    d_inference = validate.number("d_inference", d_inference)
    k, waste = _rl_multiplier(rl_multiplier), _inefficiency(inefficiency)
    names = {"D_inference": "d_inference", "ineff": "inefficiency", "k_RL": "rl_multiplier"}
    return {"D_pretrain": PRETRAIN_TOKENS(D_inference=d_inference, ineff=waste,
                                          called_as=validate.called_as(PRETRAIN_TOKENS, names)),
            "D_RL": RL_TOKENS(D_inference=d_inference, k_RL=k, called_as=validate.called_as(RL_TOKENS, names))}


@validate.reports_inputs
def compute_costs(*, n_active, d_pretrain, d_rl, d_inference, rl_multiplier=3.0, inefficiency=3.0) -> dict:
    """The three costs of lecture E5.2 in training-equivalent FLOPs: 6ND, k N D_RL x ineff, 2 N D x ineff."""
    n_active, d_pretrain, d_rl, d_inference = (
        validate.number(name, value)
        for name, value in dict(n_active=n_active, d_pretrain=d_pretrain, d_rl=d_rl, d_inference=d_inference).items())
    k, waste = _rl_multiplier(rl_multiplier), _inefficiency(inefficiency)
    names = {"N_active": "n_active", "D_pretrain": "d_pretrain", "D_RL": "d_rl", "D_inference": "d_inference",
             "k_RL": "rl_multiplier", "ineff": "inefficiency"}
    return {"pretrain": COST_PRETRAIN(N_active=n_active, D_pretrain=d_pretrain,
                                      called_as=validate.called_as(COST_PRETRAIN, names)),
            "RL": COST_RL(N_active=n_active, D_RL=d_rl, k_RL=k, ineff=waste,
                          called_as=validate.called_as(COST_RL, names)),
            "inference": COST_INFERENCE(N_active=n_active, D_inference=d_inference, ineff=waste,
                                        called_as=validate.called_as(COST_INFERENCE, names))}


@validate.reports_inputs
def overtraining(*, d_pretrain, n_active, tokens_per_param=CHINCHILLA_TOKENS_PER_PARAM):
    """How many times Chinchilla's token count a model is trained on: ``D / (20 N)`` (lecture E5.5)."""
    d_pretrain = validate.number("d_pretrain", d_pretrain)
    n_active = validate.number("n_active", n_active)
    tokens_per_param = validate.number("tokens_per_param", tokens_per_param)
    chinchilla = CHINCHILLA_TOKENS(tokens_per_param=tokens_per_param, N_active=n_active,
                                   called_as={"N_active": "n_active"})
    return OVERTRAINING(D_pretrain=d_pretrain, D_chinchilla=chinchilla,
                        called_as={"D_pretrain": "d_pretrain", "D_chinchilla": "n_active x tokens_per_param"})


@validate.reports_inputs
def lecture_estimate(*, tokens_per_second=LECTURE_TRAFFIC, deployment_months=LECTURE_MONTHS,
                     family_split=LECTURE_FAMILY_SPLIT, rl_multiplier=3.0, decode_mfu_ratio=1 / 3,
                     n_active=LECTURE_N_ACTIVE, tokens_per_param=CHINCHILLA_TOKENS_PER_PARAM) -> dict:
    """The whole back-of-the-envelope of lecture 01:18:59-01:33:02, defaults as on the board.

    Returns the token counts (``D_inference``, ``D_pretrain``, ``D_RL``, ``D_chinchilla``), the
    ``overtraining`` ratio, the per-model ``tokens_per_second``, the ``inefficiency`` and each
    phase's compute (``C_pretrain``, ``C_RL``, ``C_inference``, training-equivalent FLOPs).
    """
    waste = inefficiency_from_mfu(decode_mfu_ratio)
    d_inf = inference_tokens(tokens_per_second=tokens_per_second, deployment_months=deployment_months,
                             family_split=family_split)
    tokens = equal_cost_tokens(d_inference=d_inf, rl_multiplier=rl_multiplier, inefficiency=waste)
    n_active = validate.scalar("n_active", n_active, maximum=1e15)
    tokens_per_param = validate.scalar("tokens_per_param", tokens_per_param, maximum=1e6)
    tokens_per_second = validate.scalar("tokens_per_second", tokens_per_second)
    family_split = validate.scalar("family_split", family_split)
    d_chin = CHINCHILLA_TOKENS(tokens_per_param=tokens_per_param, N_active=n_active, called_as={"N_active": "n_active"})
    costs = compute_costs(n_active=n_active, d_pretrain=tokens["D_pretrain"], d_rl=tokens["D_RL"],
                          d_inference=d_inf, rl_multiplier=rl_multiplier, inefficiency=waste)
    return {"D_inference": d_inf, "D_pretrain": tokens["D_pretrain"], "D_RL": tokens["D_RL"],
            "D_chinchilla": d_chin,
            "overtraining": OVERTRAINING(D_pretrain=tokens["D_pretrain"], D_chinchilla=d_chin,
                                         called_as={"D_chinchilla": "n_active x tokens_per_param"}),
            "tokens_per_second": tokens_per_second / family_split, "inefficiency": waste,
            "C_pretrain": costs["pretrain"], "C_RL": costs["RL"], "C_inference": costs["inference"]}


@validate.reports_inputs
def heuristic_gap(*, p, q) -> dict:
    """How far "set the costs equal" lands from the minimum of ``a x^-p + b x^q`` (E5.1).

    Returns ``x_ratio = x_star / x_equal = (p/q)^(1/(p+q))`` (independent of a and b), the
    ``penalty`` (sum at the crossing / true minimum) and ``term_ratio`` (falling / rising term at
    the optimum, which is q/p: ``p A = q B``).
    """
    p = validate.number("p", p)
    q = validate.number("q", q)
    ratio = POWER_OPTIMUM(coef_a=1.0, coef_b=1.0, p_fall=p, q_rise=q, called_as={"p_fall": "p", "q_rise": "q"})   # x_equal = 1 when a = b = 1
    names = {"p_fall": "p", "q_rise": "q"}
    return {"x_ratio": ratio, "penalty": HEURISTIC_PENALTY(p_fall=p, q_rise=q, called_as=names),
            "term_ratio": validate.finite_result("term_ratio = q / p", np.divide(q, p), p=p, q=q)}


# --- Public functions: Chinchilla and beyond ----------------------------------------------------
@validate.reports_inputs
def loss(*, n_params, tokens, fit=DEFAULT_FIT):
    """Predicted pre-training loss ``E + A/N^alpha + B/D^beta`` (Hoffmann et al. 2022, eq. 2)."""
    n_params = validate.number("n_params", n_params)
    tokens = validate.number("tokens", tokens)
    return LOSS(N_active=n_params, D_pretrain=tokens, **get_fit(fit).values(),
                called_as={"N_active": "n_params", "D_pretrain": "tokens"})


def compute_optimal(*, compute, fit=DEFAULT_FIT) -> dict:
    """Compute-optimal parameters and tokens for a budget ``C = 6 N D`` (Hoffmann et al. 2022, eq. 4).

    ``N_opt = G (C/6)^(beta/(alpha+beta))`` with ``G = (alpha A / (beta B))^(1/(alpha+beta))``, and
    ``D_opt = C / (6 N_opt)``. Returns ``{"n_params", "tokens", "tokens_per_param", "loss"}``.
    """
    fit = get_fit(fit)
    compute = validate.number("compute", compute)
    n = OPTIMAL_PARAMS(C_train=compute, **fit.values(with_E=False))
    d = OPTIMAL_TOKENS(C_train=compute, **fit.values(with_E=False))
    return {"n_params": n, "tokens": d, "tokens_per_param": d / n, "loss": loss(n_params=n, tokens=d, fit=fit)}


def chinchilla_tokens_for(*, n_params, fit=DEFAULT_FIT):
    """Tokens at which ``n_params`` is compute-optimal under ``fit`` (from ``alpha A/N^alpha = beta B/D^beta``)."""
    fit = get_fit(fit)
    n_params = validate.number("n_params", n_params)
    return TOKENS_WHERE_OPTIMAL(N_active=n_params, **fit.values(with_E=False))


def _min_params(target_loss, fit: LossFit):
    """Below this size the parameter term alone exceeds ``target_loss - E``: no amount of data helps."""
    return (fit.A / (target_loss - fit.E)) ** (1 / fit.alpha)


def tokens_for_loss(*, n_params, target_loss, fit=DEFAULT_FIT):
    """Tokens a model of ``n_params`` needs to reach ``target_loss``: ``(B / (L - E - A/N^alpha))^(1/beta)``."""
    fit = get_fit(fit)
    n = validate.number("n_params", n_params)
    target = _check_target(target_loss, fit)
    if np.any(np.less_equal(n, _min_params(target, fit))):
        raise ValueError(f"target_loss={target:g} is out of reach for n_params={n_params!r}: it needs more than "
                         f"{_min_params(target, fit):.3g} parameters under the {fit.name} fit")
    return TOKENS_FOR_LOSS(N_active=n, L_loss=target, **fit.values())


def _check_target(target_loss, fit: LossFit) -> float:
    target = validate.scalar("target_loss", target_loss, maximum=100.0)
    if target <= fit.E:
        raise ValueError(f"target_loss must be above the irreducible loss E={fit.E:g} of the {fit.name} fit, "
                         f"got {target_loss!r}")
    return target


@functools.cache
def _total_cost_slope():
    """d(C_total)/dN at fixed loss as a NumPy function, made on first use (not by every kernel that imports)."""
    return lambdified((N_active, L_loss, E_loss, A_loss, B_loss, alpha_loss, beta_loss, D_inference, ineff),
                      sp.diff(TRAIN_PLUS_INFERENCE.rhs.subs(D_pretrain, TOKENS_FOR_LOSS.rhs), N_active))


_BISECTION_STEPS = 64


def _optimal_params(target: float, fit: LossFit, demand: np.ndarray, waste) -> np.ndarray:
    """Vectorised bisection in log N on the sign of d(C_total)/dN at fixed loss, one N per demand."""
    n_min = _min_params(target, fit)
    low = np.full(np.shape(demand), np.log(n_min * (1 + 1e-9)))
    high = np.full(np.shape(demand), np.log(n_min * 1e8))
    total_cost_slope = _total_cost_slope()
    for _ in range(_BISECTION_STEPS):
        middle = 0.5 * (low + high)
        slope = total_cost_slope(np.exp(middle), target, fit.E, fit.A, fit.B, fit.alpha, fit.beta, demand, waste)
        rising = slope > 0
        high = np.where(rising, middle, high)
        low = np.where(rising, low, middle)
    return np.exp(0.5 * (low + high))


def inference_aware_optimum(*, target_loss, inference_tokens, fit=DEFAULT_FIT, inefficiency=1.0) -> dict:
    """The cheapest model that reaches ``target_loss`` and then serves ``inference_tokens`` (Sardana et al. 2023).

    Minimises ``6 N D_train + 2 N D_inference x inefficiency`` subject to ``L(N, D_train) = target``
    (arXiv 2401.00448, eq. 3; inefficiency 1 is the paper's pure-FLOPs version). No closed form, so
    a vectorised bisection finds where the SymPy derivative of the total changes sign; arrays of
    demands give arrays of answers. Returns ``n_params``, ``tokens``, ``tokens_per_param``,
    ``train_flops``, ``inference_flops``, ``total_flops`` and the same for ``chinchilla_*`` (the
    compute-optimal model at this loss, serving the same demand) plus ``saving`` (1 - ours/theirs).
    """
    fit = get_fit(fit)
    target = _check_target(target_loss, fit)
    demand = validate.number("inference_tokens", inference_tokens, allow_zero=True, maximum=1e20)
    waste = _inefficiency(validate.scalar("inefficiency", inefficiency, maximum=1e3))
    demand_array = np.asarray(demand, dtype=float)
    n = _optimal_params(target, fit, demand_array, waste)
    n_chin = _optimal_params(target, fit, np.zeros_like(demand_array), waste)
    result = {}
    for prefix, size in (("", n), ("chinchilla_", n_chin)):
        d = tokens_for_loss(n_params=size, target_loss=target, fit=fit)
        train = COST_PRETRAIN(N_active=size, D_pretrain=d)
        serve = COST_INFERENCE(N_active=size, D_inference=demand_array, ineff=waste, allow_zero="D_inference")
        result.update({f"{prefix}n_params": size, f"{prefix}tokens": d, f"{prefix}tokens_per_param": d / size,
                       f"{prefix}train_flops": train, f"{prefix}inference_flops": serve,
                       f"{prefix}total_flops": train + serve})
    result["saving"] = 1 - result["total_flops"] / result["chinchilla_total_flops"]
    if np.ndim(demand) == 0:
        result = {key: float(value) for key, value in result.items()}
    return result
