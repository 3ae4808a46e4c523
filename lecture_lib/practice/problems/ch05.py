"""Chapter 5's practice problems (solutions/05_rl_overtraining_beyond_chinchilla.ipynb).

Every expected value is computed from :mod:`lecture_lib.scaling` with the inputs the problem
statement names; see :mod:`lecture_lib.practice.checks` for how answers are judged.
"""

from __future__ import annotations

import sympy as sp

from lecture_lib import scaling
from lecture_lib import symbols as _symbols

from ..registry import Mistake, Probe, Problem, register

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
def _pretrain_per_rl_token(inefficiency: float = 4.0, rl_multiplier: float = 6) -> float:
    tokens = scaling.equal_cost_tokens(d_inference=1e14, rl_multiplier=rl_multiplier, inefficiency=inefficiency)
    return tokens["D_pretrain"] / tokens["D_RL"]


def _pretrain_per_rl_slip() -> float:
    """The on-air slip: multiplying by the MFU (1/4) instead of dividing by it."""
    return float(scaling.ALPHA_BOARD(k_RL=6, ineff=0.25))


# Problem 5.5: 70B active, a family at 300M tokens/s split five ways, 3 months, flashcard values.
def _overtraining_70b(split: float = 5, tokens_per_param: float = 20, *, inefficiency: float = 3, days: float = 90,
                      phase: str = "D_pretrain") -> float:
    d_inference = scaling.INFERENCE_TOKENS(traffic=3e8, t_deploy=days * DAY, n_family=split)
    tokens = scaling.equal_cost_tokens(d_inference=d_inference, rl_multiplier=3, inefficiency=inefficiency)
    return scaling.overtraining(d_pretrain=tokens[phase], n_active=70e9, tokens_per_param=tokens_per_param)


def _overtraining_times_flashcard_ratio() -> float:
    """The slip of reading the flashcard's 1.5 (D_pretrain / D_RL) as D_pretrain / D_inference."""
    return _overtraining_70b() * float(scaling.ALPHA_BOARD(**{"k_RL": 3, "ineff": 3}))


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
def _optimal_size(fit: str = "besiroglu-2024", key: str = "n_params") -> float:
    return scaling.compute_optimal(compute=1e25, fit=fit)[key]


def _optimal_size_without_the_six() -> float:
    """N_opt = G (C/6)^(beta/(alpha+beta)) with C in place of C/6."""
    f = scaling.get_fit("besiroglu-2024")
    return _optimal_size() * 6 ** (f.beta / (f.alpha + f.beta))


def _twenty_tokens_rule() -> float:
    return (1e25 / (6 * scaling.CHINCHILLA_TOKENS_PER_PARAM)) ** 0.5


# Problem 5.10: Sardana et al.'s optimum for a Chinchilla-optimal 70B model's loss and 1e13 tokens.
def _sardana_target(fit: str = scaling.DEFAULT_FIT) -> float:
    return scaling.loss(n_params=70e9, tokens=scaling.chinchilla_tokens_for(n_params=70e9, fit=fit), fit=fit)


def _sardana_tokens_per_param(key: str = "tokens_per_param", *, fit: str = scaling.DEFAULT_FIT,
                              inefficiency: float = 1.0) -> float:
    return scaling.inference_aware_optimum(target_loss=_sardana_target(fit), inference_tokens=1e13, fit=fit,
                                           inefficiency=inefficiency)[key]


register("5.1", Problem(
    "Which phase gets the fewest tokens?", "choice", _fewest_tokens,
    options=("pre-training", "RL", "inference"),
    alternates={"pre-training": ("pretraining", "pretrain", "pre-train"),
                "RL": ("reinforcement learning", "rl", "RL training", "RL rollouts", "rollouts", "post-training"),
                "inference": ("serving",)},
    wrong_hint="Equal cost means fewer tokens where each token costs more. Price one token of each phase: its FLOPs "
               "per parameter, times the inefficiency if that phase is decoded (RL rollouts and inference both are)."))
register("5.2", Problem(
    "Lifetime tokens of one model", "number", _family_tokens, rtol=0.02, unit="tokens",
    mistakes=(Mistake(lambda: _family_tokens(1),
                      "That is the traffic of the whole family. Each model serves only its share."),
              Mistake(lambda: _family_tokens() / DAY,
                      "That multiplies tokens per second by a number of days: turn the 90 days into seconds first."),
              Mistake(lambda: _family_tokens(1 / 4),
                      "That multiplies by the number of models. The family's traffic is shared among them, so "
                      "each model gets a fraction of it."))))
register("5.3", Problem(
    "Pre-training tokens per RL token", "number", _pretrain_per_rl_token, rtol=0.02, unit="tokens per RL token",
    mistakes=(Mistake(_pretrain_per_rl_slip,
                      "Two slips land here. The one made on air: multiplying RL's cost by the MFU, when a lower "
                      "decode MFU makes each RL token cost more (the inefficiency, 1/MFU, multiplies it). Or the "
                      "ratio upside down: the question asks pre-training tokens per RL token."),
              Mistake(lambda: _pretrain_per_rl_token(1.0),
                      "That leaves out the inefficiency: RL rollouts are decoded, at a quarter of training MFU."),
              Mistake(lambda: _pretrain_per_rl_token(rl_multiplier=scaling.FLASHCARD["k_RL"]),
                      "Two ways to land here: the flashcard's RL multiplier (this lab trains on every rollout, so "
                      "RL costs 6 FLOPs per parameter per token), or charging the inefficiency to the 2 generation "
                      "FLOPs only (the chapter's C_RL = k_RL N D_RL x inefficiency charges it on all of them)."),
              Mistake(lambda: _pretrain_per_rl_token(scaling.FLASHCARD["ineff"]),
                      "That uses the flashcard's decode MFU of a third; this lab decodes at a quarter of training "
                      "MFU."),
              Mistake(lambda: _pretrain_per_rl_token(scaling.FLASHCARD["ineff"], scaling.FLASHCARD["k_RL"]),
                      "That is the flashcard's ratio. This lab's RL multiplier and decode MFU are different: use "
                      "the problem's numbers."))))
register("5.4", Problem(
    "Derive D_pretrain / D_RL", "expression", lambda: scaling.PRETRAIN_TOKENS.rhs / scaling.RL_TOKENS.rhs,
    probes=(Probe({"k_RL": 3, "ineff": 3}, "the flashcard's k_RL = 3 and ineff = 3", "1.5"),),
    wrong_hint="Solve C_pretrain = C_RL = C_inference for D_pretrain and D_RL, then divide. A larger inefficiency "
               "makes RL tokens dearer, so fewer of them per pre-training token."))
register("5.5", Problem(
    "How over-trained is a 70B model?", "number", _overtraining_70b, rtol=0.03, unit="times Chinchilla",
    mistakes=(Mistake(lambda: _overtraining_70b(split=1),
                      "That gives every model the whole family's traffic: divide by the five models first."),
              Mistake(lambda: _overtraining_70b(tokens_per_param=1),
                      "That is training tokens per parameter. Over-training is measured against Chinchilla's "
                      "20 tokens per parameter: divide by it."),
              Mistake(lambda: _overtraining_70b(inefficiency=1),
                      "That leaves out the inefficiency: inference is decoded at a third of training MFU, so each "
                      "inference token costs three times its 2 N FLOPs, and equal cost buys pre-training more tokens."),
              Mistake(lambda: _overtraining_70b(phase="D_RL"),
                      "That is either RL's token count instead of pre-training's, or a 60-day deployment (the "
                      "lecture's 2 months) instead of this problem's 90 days."),
              Mistake(_overtraining_times_flashcard_ratio,
                      "The flashcard's 1.5 is D_pretrain / D_RL, not D_pretrain / D_inference. Solve the equal-cost "
                      "split for pre-training against inference."))))
register("5.6", Problem(
    "Read the plot: which side of the crossing?", "choice", _which_side,
    options=("left", "right", "at the crossing"),
    alternates={"left": ("left of the crossing", "to the left", "left side", "smaller", "below"),
                "right": ("right of the crossing", "to the right", "right side", "larger", "above"),
                "at the crossing": ("crossing", "at crossing", "same", "equal", "at")},
    wrong_hint="Find the lowest point of the black curve and compare it with the dashed grey line."))
register("5.7", Problem(
    "Derive the minimum of a power-law sum", "expression", lambda: scaling.POWER_OPTIMUM.rhs,
    # The statement writes a x^-p + b x^q; b is otherwise the course's micro-batch.
    letters={"a": "coef_a", "b": "coef_b", "p": "p_fall", "q": "q_rise", "x": "x_alloc"},
    mistakes=(Mistake(lambda: (_symbols.coef_a / _symbols.coef_b) ** (1 / (_symbols.p_fall + _symbols.q_rise)),
                      "That is where the two costs are equal (the crossing), not where their sum is least: the "
                      "derivative brings each exponent down as a factor, p_fall and q_rise."),),
    probes=(Probe({"p_fall": 1, "q_rise": 1}, "p_fall = q_rise = 1", "sqrt(coef_a/coef_b)"),),
    wrong_hint="Differentiate coef_a*x_alloc**(-p_fall) + coef_b*x_alloc**q_rise with respect to x_alloc, set it "
               "to zero and solve."))
register("5.8", Problem(
    "Chinchilla's two terms at the optimum", "number", _term_ratio, rtol=0.02,
    mistakes=(Mistake(lambda: 1.0,
                      "That is the heuristic's answer (equal terms). At a power-law optimum the terms are weighted "
                      "by their exponents."),
              Mistake(lambda: _term_ratio(inverted=True),
                      "That is the data term over the parameter term (or the exponents weighted the wrong way "
                      "round): turn it over."),
              Mistake(lambda: _term_ratio("besiroglu-2024"),
                      "That uses Besiroglu et al.'s refit (the default fit of scaling.compute_optimal). This problem "
                      "is about Hoffmann et al.'s printed fit: pass fit=\"hoffmann-2022\"."),
              Mistake(lambda: _term_ratio("besiroglu-2024", inverted=True),
                      "That uses Besiroglu et al.'s refit, and turns the ratio over. This problem wants Hoffmann "
                      "et al.'s printed fit, parameter term over data term."))))
register("5.9", Problem(
    "Compute-optimal size for 1e25 FLOPs", "number", _optimal_size, rtol=0.03, unit="parameters",
    mistakes=(Mistake(lambda: _optimal_size("hoffmann-2022"),
                      "That uses Hoffmann et al.'s printed fit; this problem asks for Besiroglu et al.'s refit."),
              Mistake(_twenty_tokens_rule, "That is the 20-tokens-per-parameter rule of thumb, close but not the "
                                           "fit: use the closed form for N_opt with the fit's constants."),
              Mistake(lambda: _optimal_size("hoffmann-2022-unrounded"),
                      "That uses Hoffmann et al.'s fit; this problem asks for Besiroglu et al.'s refit."),
              Mistake(lambda: _optimal_size(key="tokens"),
                      "That is the number of training tokens D, not of parameters N."),
              Mistake(_optimal_size_without_the_six,
                      "Check the budget: with C = 6 N D, the closed form uses C/6, not C."))))
register("5.10", Problem(
    "Tokens per parameter once inference counts", "number", _sardana_tokens_per_param, rtol=0.03,
    unit="tokens per parameter",
    mistakes=(Mistake(lambda: _sardana_tokens_per_param("chinchilla_tokens_per_param"),
                      "That is the Chinchilla-optimal model of the same loss: it ignores the inference demand."),
              Mistake(lambda: float(scaling.CHINCHILLA_TOKENS_PER_PARAM),
                      "That is Chinchilla's rule of thumb, which ignores inference. Find the size that minimises "
                      "training plus inference compute at the target loss."),
              Mistake(lambda: _sardana_tokens_per_param(fit="hoffmann-2022"),
                      "That uses Hoffmann et al.'s fit; this problem uses Besiroglu et al.'s refit (the default of "
                      "scaling) for both the target loss and the optimum."),
              Mistake(lambda: _sardana_tokens_per_param(inefficiency=scaling.FLASHCARD["ineff"]),
                      "That charges inference an inefficiency of 3; this problem counts inference at 2 N FLOPs per "
                      "token with no inefficiency."),
              Mistake(lambda: _sardana_tokens_per_param("n_params"),
                      "That is the optimal model's size N. The question asks for its training tokens per parameter."),
              Mistake(lambda: _sardana_tokens_per_param("tokens"),
                      "That is the optimal model's training tokens D. The question asks for D per parameter."),
              Mistake(lambda: _sardana_tokens_per_param("saving"),
                      "That is the compute saved against the Chinchilla-optimal model. The question asks for "
                      "training tokens per parameter."))))


# --- 'Why' problems (issue 13): conceptual choices, each with a nudge for every tempting wrong letter.
# The expected letter is checked against the library where the reason is a computation.

WHY_OPTIONS = ('a', 'b', 'c', 'd')


def _smaller_for_serving() -> str:
    """5.11: the serving bill rises with N_active for every served token."""
    if not sp.diff(scaling.COST_INFERENCE.rhs, _symbols.N_active).is_positive:
        raise RuntimeError("problem 5.11 assumes serving cost grows with N_active")
    return "b"


def _fewer_rl_tokens() -> str:
    """5.12: at equal cost the RL token count is below the pre-training one."""
    tokens = scaling.equal_cost_tokens(d_inference=1.0)
    if not tokens["D_RL"] < tokens["D_pretrain"]:
        raise RuntimeError(f"problem 5.12 assumes fewer RL tokens, got {tokens}")
    return "c"


def _roughly_equal() -> str:
    """5.13: at a power-law optimum the terms differ by q/p."""
    gap = scaling.heuristic_gap(p=1, q=2)
    if abs(float(gap["term_ratio"]) - 2) > 1e-9:
        raise RuntimeError(f"problem 5.13 assumes a term ratio q/p = 2, got {gap}")
    return "a"


register('5.11', Problem(
    'Why does serving push toward a smaller model trained on more tokens?', "choice", _smaller_for_serving, options=WHY_OPTIONS,
    nudges={
            'a': 'The opposite: a bigger model reaches a given loss with fewer tokens; the smaller one needs more.',
            'c': 'Chinchilla optimises training compute alone and ignores serving; serving is what moves the optimum.',
            'd': 'They can; the question is what each served token costs.'}))

register('5.12', Problem(
    'Why does RL get fewer tokens than pre-training at equal cost?', "choice", _fewer_rl_tokens, options=WHY_OPTIONS,
    nudges={
            'a': 'The argument is about cost per token, not about how well RL learns.',
            'b': 'If each RL token were cheaper, equal cost would buy more of them, not fewer.',
            'd': 'Pre-training, RL and serving run the same model: N_active cancels from the equal-cost equations.'}))

register('5.13', Problem(
    'Why is "set the costs equal" only roughly optimal?', "choice", _roughly_equal, options=WHY_OPTIONS,
    nudges={
            'b': 'Try A = 1/x and B = x²: at the minimum, are the two terms equal?',
            'c': 'Even with exact costs the rule is approximate; the shapes of the curves decide.',
            'd': 'Both are costs in the same units (FLOPs or dollars).'}))


# --- Issue 49 §5: RL whose rollouts and training run at different MFUs.
# 5.14: every rollout is trained on (k_RL = 6); rollouts decode at 10% MFU, training runs at 40% (inefficiency 4).
# GPU-time of one RL token over one pre-training token: COST_RL_SPLIT / COST_PRETRAIN per token.
RL_SPLIT = dict(k_RL=6, mfu_decode=0.10, mfu_train=0.40)


def _rl_token_over_pretrain_token(*, formula=None, ineff: float | None = None) -> float:
    waste = RL_SPLIT["mfu_train"] / RL_SPLIT["mfu_decode"] if ineff is None else ineff
    rl = (formula or scaling.COST_RL_SPLIT)(k_RL=RL_SPLIT["k_RL"], ineff=waste, N_active=1.0, D_RL=1.0)
    return float(rl / scaling.COST_PRETRAIN(N_active=1.0, D_pretrain=1.0))


def _rollouts_only() -> float:
    waste = RL_SPLIT["mfu_train"] / RL_SPLIT["mfu_decode"]
    return scaling.FLOPS_FORWARD * waste / (scaling.FLOPS_FORWARD + scaling.FLOPS_BACKWARD)


register("5.14", Problem(
    "Rollouts decode, training trains", "number", _rl_token_over_pretrain_token, rtol=0.02,
    unit="pre-training tokens' worth of GPU-time",
    mistakes=(Mistake(lambda: _rl_token_over_pretrain_token(formula=scaling.COST_RL),
                      "That charges all six FLOPs at decode MFU, as the board's C_RL does. Only the rollout is "
                      "decoded; the training step on it runs at training MFU."),
              Mistake(lambda: _rl_token_over_pretrain_token(ineff=1.0),
                      "That counts FLOPs only. A FLOP done at 10% MFU takes four times as long as one at 40%."),
              Mistake(_rollouts_only,
                      "That is the rollout alone. Every rollout is trained on too: add its training step."),
              Mistake(lambda: _rl_token_over_pretrain_token(ineff=RL_SPLIT["mfu_decode"] / RL_SPLIT["mfu_train"]),
                      "That multiplies by the MFU ratio. Work done at a lower MFU takes longer, so it costs more.")),
    wrong_hint="Split the six FLOPs per parameter: 2 generated at decode MFU, 4 trained at training MFU. Compare "
               "the time with a pre-training token's 6 at training MFU."))


# --- Issue 49 §5: the equal-cost rule with three phases, with the model size as the one knob.
# 5.15: pre-training (the falling bill) equal to RL + inference (the rising ones): PRETRAIN_TOKENS_ONE_KNOB, then the
# over-training against Chinchilla's 20 tokens per parameter.
ONE_KNOB = dict(n_active=100e9, d_inference=200e12, d_rl=100e12, k_RL=3, ineff=3)


def _one_knob_overtraining(*, rule: str = "one knob", ineff: float | None = None) -> float:
    waste = ONE_KNOB["ineff"] if ineff is None else ineff
    if rule == "one knob":
        d_pre = scaling.PRETRAIN_TOKENS_ONE_KNOB(ineff=waste, k_RL=ONE_KNOB["k_RL"], D_RL=ONE_KNOB["d_rl"],
                                                 D_inference=ONE_KNOB["d_inference"])
    elif rule == "three equal":           # the flashcard's 33% split: C_pretrain = C_inference
        d_pre = scaling.PRETRAIN_TOKENS(ineff=waste, D_inference=ONE_KNOB["d_inference"])
    else:                                  # the on-air side: D_pretrain + alpha D_RL = beta D_inference
        d_pre = (scaling.BETA_BOARD(ineff=waste) * ONE_KNOB["d_inference"]
                 - scaling.ALPHA_BOARD(k_RL=ONE_KNOB["k_RL"], ineff=waste) * ONE_KNOB["d_rl"])
    return float(scaling.overtraining(d_pretrain=d_pre, n_active=ONE_KNOB["n_active"]))


register("5.15", Problem(
    "Three bills, one knob", "number", _one_knob_overtraining, rtol=0.02, unit="× Chinchilla",
    mistakes=(Mistake(lambda: _one_knob_overtraining(rule="three equal"),
                      "That sets pre-training equal to inference alone (the three-way split, or no RL at all). "
                      "The problem's rule sets it equal to RL and inference together."),
              Mistake(lambda: _one_knob_overtraining(rule="on air"),
                      "That puts RL on pre-training's side, as the on-air version did. At given token counts RL "
                      "grows with the model size, like inference: it belongs on the rising side."),
              Mistake(lambda: _one_knob_overtraining(ineff=1.0),
                      "That leaves out the inefficiency: RL rollouts and served tokens are decoded, at a third of "
                      "training MFU, so each costs three times its FLOPs.")),
    wrong_hint="Solve 6 N D_pretrain = k_RL N D_RL × inefficiency + 2 N D_inference × inefficiency for D_pretrain, "
               "then divide by 20 N."))
