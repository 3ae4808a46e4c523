"""Chapter 2: how MoE layers are laid out across GPU racks (lecture 00:32:09-00:47:12).

An MoE layer sends each token to a few of many experts (lecture notes E2.1)::

    y = x + sum_{e in TopK(router(x))} g_e(x) * W_down^e sigma(W_up^e x)

Expert parallelism puts different experts on different GPUs (E2.2), so every MoE layer needs two
all-to-alls: *dispatch* (each token to its experts' GPUs) and *combine* (the results back). Inside a
rack NVLink reaches any GPU in two hops; between racks traffic goes over scale-out links about 8x
slower, and with R racks a fraction (R-1)/R of it leaves its rack (E2.3). Hence "one rack bounds the
size of an expert layer", and total parameters are limited by the scale-up domain (E2.4).

This module holds the formulas (SymPy first, as :class:`~lecture_lib.formula.Formula` objects), the
functions that apply them to hardware and model presets, and a tiny NumPy MoE (:class:`TinyMoE`)
whose routing can be followed token -> expert -> GPU -> rack and measured.

Conventions: bandwidths are per GPU and one direction (as in :mod:`lecture_lib.hardware`); FLOPs are
vendor FLOP/s, 2 per multiply-add; bytes are SI.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sympy as sp

from . import hardware, models, validate
from .formula import Formula, simplify, solve
from .roofline import T_WEIGHTS
from .symbols import (FLOPs, N_expert, N_fit, bw_out, bw_up, bytes_a2a, bytes_value, bytes_param, d_model,
                      experts_per_gpu, f_cross, gpus_per_rack, hbm_capacity, k_active, link_ratio, n_ep,
                      n_experts, n_racks, slowdown_a2a, t_a2a, t_a2a_cross, t_a2a_in, t_experts, tokens_gpu,
                      weight_share)

__all__ = [
    "A2A_BYTES_PER_TOKEN", "A2A_SLOWDOWN", "ACTIVATION_BYTES", "WEIGHT_FETCH_FLOOR", "CROSS_RACK_FRACTION", "EXPERTS_PER_GPU", "EXPERT_COMPUTE_TIME",
    "LINK_RATIO", "MAX_PARAMS_THAT_FIT", "SAME_RACK_PROBABILITY", "T_A2A", "T_A2A_CROSS", "T_A2A_INSIDE",
    "Placement", "Routing", "TinyMoE", "a2a_bytes_per_token", "a2a_layer_time", "expert_parallel_degree",
    "layout", "link_ratio_of", "measure_cross_rack_fraction", "random_routing", "scale_up_fit",
]

# --- Expert placement (E2.2) --------------------------------------------------------------------
EXPERTS_PER_GPU = Formula(experts_per_gpu, n_experts / n_ep,
                          source="lecture 00:34:07 (E2.2): 256 experts on 64 of an NVL72's 72 GPUs -> 4 each")

# --- Bytes each token moves per MoE layer (lecture 00:35:31, all-to-all) -------------------------
A2A_BYTES_PER_TOKEN = Formula(
    bytes_a2a, 2 * k_active * d_model * bytes_value,
    source="lecture 00:35:31: dispatch sends the token's d_model-vector to each of its k experts, "
           "combine sends k results back",
    note="counts routed experts only; a shared expert adds one more copy if it lives on another GPU")

# --- Why racks: the cross-rack fraction (E2.3) --------------------------------------------------
SAME_RACK_PROBABILITY = Formula(
    sp.Symbol("p_same", positive=True), gpus_per_rack / (n_racks * gpus_per_rack),
    source="uniform routing: the destination GPU is any of R*G GPUs, G of them in the sender's rack")
CROSS_RACK_FRACTION = Formula(f_cross, sp.factor(simplify(1 - SAME_RACK_PROBABILITY.rhs)),
                              source="lecture 00:39:13 (E2.3): two racks -> half the tokens leave; "
                                     "general R from uniform routing (lecture notes [I])",
                              domain=n_racks >= 1)

LINK_RATIO = Formula(link_ratio, bw_up / bw_out,
                     source="lecture 00:39:13: scale-out is 'typically about eight times slower'")

# Each GPU sends tokens_gpu * bytes_a2a per layer; a share f_cross goes over scale-out, the rest
# over NVLink. The two kinds of link work in parallel, so the slower share sets the time.
_SHARE_INSIDE = tokens_gpu * bytes_a2a * (1 - f_cross) / bw_up
_SHARE_CROSS = tokens_gpu * bytes_a2a * f_cross / bw_out
T_A2A_INSIDE = Formula(t_a2a_in, simplify(_SHARE_INSIDE.subs(f_cross, CROSS_RACK_FRACTION.rhs)),
                       source="course model of lecture 00:39:13: the in-rack share over NVLink",
                       domain=n_racks >= 1)
T_A2A_CROSS = Formula(t_a2a_cross, simplify(_SHARE_CROSS.subs(f_cross, CROSS_RACK_FRACTION.rhs)),
                      source="course model of lecture 00:39:13: the cross-rack share over scale-out",
                      domain=n_racks >= 1)
T_A2A = Formula(t_a2a, sp.Max(T_A2A_INSIDE.rhs, T_A2A_CROSS.rhs),
                source="lecture 00:39:13 (E2.3): 'the slow link bottlenecks the all-to-all'",
                note="links in parallel; ignores the small share a GPU sends to itself, latency and congestion",
                domain=n_racks >= 1)
_ONE_RACK = T_A2A.rhs.subs(n_racks, 1)   # Max(in-rack, 0) = everything over NVLink
A2A_SLOWDOWN = Formula(
    slowdown_a2a,
    sp.Max(*[simplify((share / _ONE_RACK).subs(bw_up, link_ratio * bw_out)) for share in T_A2A.rhs.args]),
    source="course derivation from T_A2A: R racks against one (each share of the max divided by the "
           "one-rack time)")

EXPERT_COMPUTE_TIME = Formula(t_experts, 2 * tokens_gpu * k_active * N_expert / FLOPs,
                              source="each GPU receives tokens_gpu * k token-expert pairs on average, "
                                     "2 FLOPs per weight each (Chapter 1's convention)")

# --- Total parameters are limited by the scale-up domain (E2.4) ---------------------------------
MAX_PARAMS_THAT_FIT = Formula(N_fit, weight_share * hbm_capacity / bytes_param,
                              source="lecture 00:44:39-00:47:08 (E2.4): total parameters are limited "
                                     "by the scale-up size")
WEIGHT_FETCH_FLOOR = T_WEIGHTS   # Chapter 1's latency floor, N_total * bytes / mem_bw (lecture E1.3)

ACTIVATION_BYTES = {"fp8": 1.0, "bf16": 2.0}


# ================================================================================ presets → numbers

def expert_parallel_degree(*, n_experts: int, n_gpus: int) -> int:
    """GPUs to spread ``n_experts`` over in a domain of ``n_gpus``: the largest E <= n_gpus that
    divides n_experts, so that every GPU holds the same number of experts.

    Lecture 00:34:07: DeepSeek's 256 experts on a 72-GPU rack -> "we're only going to use 64 of them".
    """
    n_experts = validate.integer("n_experts", n_experts)
    n_gpus = validate.integer("n_gpus", n_gpus)
    return max(e for e in range(1, min(n_experts, n_gpus) + 1) if n_experts % e == 0)


def layout(*, n_experts: int, n_gpus: int) -> dict:
    """Expert-parallel layout of one MoE layer on a scale-up domain of ``n_gpus``.

    Returns ``{"gpus_used", "gpus_idle", "experts_per_gpu"}`` with E from
    :func:`expert_parallel_degree` and experts per GPU = n_experts / E (:data:`EXPERTS_PER_GPU`).
    """
    used = expert_parallel_degree(n_experts=n_experts, n_gpus=n_gpus)
    per_gpu = EXPERTS_PER_GPU(n_experts=n_experts, n_ep=used)
    return {"gpus_used": used, "gpus_idle": int(n_gpus) - used, "experts_per_gpu": int(round(per_gpu))}


@validate.reports_inputs
def a2a_bytes_per_token(model, *, bytes_per_value: float, k: int | None = None,
                        shared_travels: bool = False) -> float:
    """Bytes one token moves per MoE layer, dispatch plus combine: 2 * k * d_model * bytes (lecture 00:35:31).

    ``k`` defaults to the model's routed experts per token (DeepSeek-V3: 8; the lecture said 32).
    ``shared_travels=True`` adds the shared experts as extra destinations, as DeepSeek-V3 does in
    decoding, where "the shared expert is regarded as a heavy-load one that will always be selected"
    (DeepSeek-V3 technical report, arXiv 2412.19437, section 3.4.2): 9 destinations instead of 8.
    """
    model = models.resolve(model)
    if not getattr(model, "is_moe", False):
        raise ValueError(f"model must be an MoE model (n_routed_experts > 0), got {getattr(model, 'name', model)!r}")
    bytes_per_value = validate.number("bytes_per_value", bytes_per_value)
    k = model.experts_per_token if k is None else validate.integer("k", k)
    destinations = k + (model.n_shared_experts if validate.boolean("shared_travels", shared_travels) else 0)
    return A2A_BYTES_PER_TOKEN(k_active=destinations, d_model=model.d_model, bytes_value=bytes_per_value,
                               called_as={"k_active": "k", "bytes_value": "bytes_per_value"})


def link_ratio_of(system) -> float:
    """Scale-up over scale-out bandwidth per GPU of a preset system (the lecture's "about 8x")."""
    system = hardware.resolve_system(system)
    return LINK_RATIO(bw_up=system.chip.scale_up_bandwidth, bw_out=system.scale_out_bandwidth)


@validate.reports_inputs
def a2a_layer_time(*, tokens_per_gpu, bytes_per_token, racks, scale_up_bw: float, scale_out_bw: float) -> dict:
    """Time of one MoE layer's dispatch + combine when the layer spans ``racks`` racks.

    ``tokens_per_gpu`` and ``racks`` may be NumPy arrays (broadcast together). Returns seconds:
    ``{"inside", "cross", "total", "cross_fraction"}`` from :data:`T_A2A_INSIDE`, :data:`T_A2A_CROSS`,
    :data:`T_A2A` (the max of the two: the links work in parallel) and :data:`CROSS_RACK_FRACTION`.
    """
    tokens_per_gpu, bytes_per_token, scale_up_bw, scale_out_bw = (
        validate.number(name, value)
        for name, value in dict(tokens_per_gpu=tokens_per_gpu, bytes_per_token=bytes_per_token,
                                scale_up_bw=scale_up_bw, scale_out_bw=scale_out_bw).items())
    racks = validate.number("racks", racks)
    if np.any(np.asarray(racks) < 1) or np.any(np.asarray(racks) != np.round(racks)):
        raise ValueError(f"racks must be whole numbers >= 1, got {racks!r}")
    fraction = CROSS_RACK_FRACTION(n_racks=racks)
    common = dict(tokens_gpu=tokens_per_gpu, bytes_a2a=bytes_per_token, n_racks=racks)
    names = {"tokens_gpu": "tokens_per_gpu", "bytes_a2a": "bytes_per_token", "n_racks": "racks",
             "bw_up": "scale_up_bw", "bw_out": "scale_out_bw"}
    inside = T_A2A_INSIDE(bw_up=scale_up_bw, **common, called_as=validate.called_as(T_A2A_INSIDE, names))
    cross = T_A2A_CROSS(bw_out=scale_out_bw, **common, called_as=validate.called_as(T_A2A_CROSS, names))
    total = T_A2A(bw_up=scale_up_bw, bw_out=scale_out_bw, **common, called_as=validate.called_as(T_A2A, names))
    return {"inside": inside, "cross": cross, "total": total, "cross_fraction": fraction}


def scale_up_fit(model, system, *, bytes_per_param: float, weight_share: float = 1.0) -> dict:
    """Does ``model`` fit in the scale-up domain ``system``, and how fast can it go? (lecture E2.4)

    Returns ``{"fits", "weight_bytes", "capacity", "n_fit", "weight_fetch_floor", "gpus_used",
    "experts_per_gpu"}``: the weights in ``bytes_per_param`` must fit in ``weight_share`` of the
    domain's HBM (the rest holds KV cache); ``n_fit`` = :data:`MAX_PARAMS_THAT_FIT`; the floor is
    Chapter 1's weight fetch over the whole domain. Experts per GPU are for an MoE model (0 if dense).
    """
    system = hardware.resolve_system(system)
    model = models.resolve(model)
    bytes_per_param = validate.scalar("bytes_per_param", bytes_per_param, maximum=64)
    weight_share = validate.scalar("weight_share", weight_share, maximum=1.0)
    if bytes_per_param < 1 / 64:
        raise ValueError(f"bytes_per_param must be >= 1/64 (a fraction of a bit per weight is not a format), "
                         f"got {bytes_per_param!r}")
    weight_bytes = model.params_total * bytes_per_param
    n_fit = MAX_PARAMS_THAT_FIT(weight_share=weight_share, hbm_capacity=system.hbm_capacity,
                                bytes_param=bytes_per_param)
    floor = WEIGHT_FETCH_FLOOR(N_total=model.params_total, bytes_param=bytes_per_param, mem_bw=system.hbm_bandwidth)
    placed = (layout(n_experts=model.n_routed_experts, n_gpus=system.n_chips) if model.is_moe
              else {"gpus_used": system.n_chips, "experts_per_gpu": 0})
    return {"fits": model.params_total <= n_fit, "weight_bytes": weight_bytes, "capacity": system.hbm_capacity,
            "n_fit": n_fit, "weight_fetch_floor": floor, "gpus_used": placed["gpus_used"],
            "experts_per_gpu": placed["experts_per_gpu"]}


# ================================================================================ the tiny NumPy MoE

@dataclass(frozen=True)
class Placement:
    """Where experts live: ``experts_per_gpu`` consecutive experts per GPU, ``gpus_per_rack`` GPUs per rack.

    Expert e sits on GPU ``e // experts_per_gpu``, GPU g in rack ``g // gpus_per_rack``
    (lecture 00:34:07, the board's boxes around pairs of experts).
    """

    n_experts: int
    experts_per_gpu: int
    gpus_per_rack: int

    def __post_init__(self):
        for name in ("n_experts", "experts_per_gpu", "gpus_per_rack"):
            object.__setattr__(self, name, validate.integer(name, getattr(self, name)))
        if self.n_experts % self.experts_per_gpu:
            raise ValueError(f"experts_per_gpu must divide n_experts={self.n_experts}, got {self.experts_per_gpu}")
        if self.n_gpus % self.gpus_per_rack:
            raise ValueError(f"gpus_per_rack must divide the {self.n_gpus} GPUs (n_experts={self.n_experts} / "
                             f"experts_per_gpu={self.experts_per_gpu}), got {self.gpus_per_rack}")

    @property
    def n_gpus(self) -> int:
        return self.n_experts // self.experts_per_gpu

    @property
    def n_racks(self) -> int:
        return self.n_gpus // self.gpus_per_rack

    def gpu_of(self, expert):
        """The GPU holding ``expert`` (a whole number from 0 to n_experts - 1, or an array of them)."""
        return _indices("expert", expert, self.n_experts) // self.experts_per_gpu

    def rack_of_gpu(self, gpu):
        """The rack holding ``gpu`` (a whole number from 0 to n_gpus - 1, or an array of them)."""
        return _indices("gpu", gpu, self.n_gpus) // self.gpus_per_rack


def _indices(name: str, value, size: int) -> np.ndarray:
    """Whole numbers in [0, size) (one or an array) as an int array; anything else a ValueError naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or np.asarray(value).dtype.kind == "b":
        raise ValueError(f"{name} must be a whole number from 0 to {size - 1}, got {validate._describe(value)}")
    numbers = validate.number(name, value, allow_zero=True)
    if np.any(np.asarray(numbers) != np.round(numbers)) or np.any(np.asarray(numbers) > size - 1):
        raise ValueError(f"{name} must be whole numbers from 0 to {size - 1}, got {validate._describe(value)}")
    return np.asarray(numbers).astype(np.int64)


@dataclass
class Routing:
    """Where each token's k copies go: arrays of shape (tokens, k) plus each token's home GPU and rack.

    The home GPU is the one whose router handled the token (routers sit on the same GPUs as the
    experts, lecture 00:34:07); tokens are dealt to GPUs in turn.
    """

    experts: np.ndarray
    gates: np.ndarray
    placement: Placement

    def __post_init__(self):
        if not isinstance(self.placement, Placement):
            raise ValueError(f"placement must be a moe.Placement, got {validate._describe(self.placement)}")
        experts = np.asarray(self.experts)
        if experts.ndim != 2 or experts.shape[0] < 1 or experts.shape[1] < 1:
            raise ValueError(f"experts must be a (tokens, k) array of expert numbers, got {validate._describe(self.experts)}")
        self.experts = _indices("experts", experts, self.placement.n_experts)
        gates = np.asarray(validate.number("gates", self.gates, allow_zero=True))
        if gates.shape != self.experts.shape:
            raise ValueError(f"gates must have the shape of experts {self.experts.shape}, got {gates.shape}")
        self.gates = gates

    @property
    def n_tokens(self) -> int:
        return self.experts.shape[0]

    @property
    def home_gpu(self) -> np.ndarray:
        return np.arange(self.n_tokens) % self.placement.n_gpus

    @property
    def home_rack(self) -> np.ndarray:
        return self.placement.rack_of_gpu(self.home_gpu)

    @property
    def gpus(self) -> np.ndarray:
        return self.placement.gpu_of(self.experts)

    @property
    def racks(self) -> np.ndarray:
        return self.placement.rack_of_gpu(self.gpus)

    @property
    def crosses(self) -> np.ndarray:
        """True where a token's copy must leave its home rack (shape tokens x k)."""
        return self.racks != self.home_rack[:, None]

    def cross_rack_fraction(self) -> float:
        """Measured share of dispatch (and so of combine) traffic that crosses racks."""
        return float(self.crosses.mean())

    def gpu_loads(self) -> np.ndarray:
        """Token copies each GPU receives (dispatch); the busiest GPU sets the layer's pace."""
        return np.bincount(self.gpus.ravel(), minlength=self.placement.n_gpus)

    def table(self, n: int = 8) -> list[dict]:
        """The first ``n`` tokens: token -> (expert, gate, GPU, rack) for each of its k copies."""
        n = validate.integer("n", n, maximum=MAX_ROUTED_TOKENS)
        rows = []
        for token in range(min(n, self.n_tokens)):
            rows.append({"token": token, "home GPU": int(self.home_gpu[token]), "home rack": int(self.home_rack[token]),
                         "experts": self.experts[token].tolist(),
                         "gates": [round(float(g), 3) for g in self.gates[token]],
                         "GPUs": self.gpus[token].tolist(), "racks": self.racks[token].tolist(),
                         "leaves rack": self.crosses[token].tolist()})
        return rows


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


@dataclass
class TinyMoE:
    """A tiny MoE layer in NumPy, as drawn on the board (lecture 00:32:09, E2.1).

    router (a d_model x n_experts matrix) -> top-k experts -> each expert an MLP
    ``W_down relu(W_up x)`` -> gate-weighted sum -> residual ``y = x + sum``.
    Real models gate the MLP (SwiGLU) and DeepSeek-V3 scores experts with a sigmoid; the board's
    plain MLP and a softmax over the top-k scores keep it readable.
    """

    w_router: np.ndarray   # (d_model, n_experts)
    w_up: np.ndarray       # (n_experts, d_model, d_ff)
    w_down: np.ndarray     # (n_experts, d_ff, d_model)
    k: int
    placement: Placement

    def __post_init__(self):
        if not isinstance(self.placement, Placement):
            raise ValueError(f"placement must be a moe.Placement, got {validate._describe(self.placement)}")
        n, shapes = self.placement.n_experts, {}
        for name in ("w_router", "w_up", "w_down"):
            weights = np.asarray(validate.number(name, getattr(self, name), positive=False))
            setattr(self, name, weights)
            shapes[name] = weights.shape
        router, up, down = shapes["w_router"], shapes["w_up"], shapes["w_down"]
        if len(router) != 2 or router[1] != n:
            raise ValueError(f"w_router must have shape (d_model, n_experts={n}), got {router}")
        if len(up) != 3 or up[:2] != (n, router[0]):
            raise ValueError(f"w_up must have shape (n_experts={n}, d_model={router[0]}, d_ff), got {up}")
        if down != (n, up[2], router[0]):
            raise ValueError(f"w_down must have shape ({n}, {up[2]}, {router[0]}), got {down}")
        self.k = validate.integer("k", self.k, maximum=n)

    @classmethod
    def random(cls, *, d_model: int = 16, d_ff: int = 32, n_experts: int = 16, k: int = 2,
               experts_per_gpu: int = 2, gpus_per_rack: int = 4, seed: int = 0) -> "TinyMoE":
        """Random weights (scaled so activations stay O(1)) and a placement of the experts."""
        d_model, d_ff, n_experts = (validate.integer(name, value, maximum=4096) for name, value in
                                    dict(d_model=d_model, d_ff=d_ff, n_experts=n_experts).items())
        if d_model * d_ff * n_experts > MAX_ROUTING_CELLS:
            raise ValueError(f"d_model x d_ff x n_experts must be <= {MAX_ROUTING_CELLS:,} (memory), got "
                             f"{d_model} x {d_ff} x {n_experts}")
        k = validate.integer("k", k)
        if k > n_experts:
            raise ValueError(f"k must be <= n_experts={n_experts}, got {k}")
        rng = np.random.default_rng(validate.integer("seed", seed, minimum=0))
        return cls(w_router=rng.normal(size=(d_model, n_experts)) / math.sqrt(d_model),
                   w_up=rng.normal(size=(n_experts, d_model, d_ff)) / math.sqrt(d_model),
                   w_down=rng.normal(size=(n_experts, d_ff, d_model)) / math.sqrt(d_ff),
                   k=k, placement=Placement(n_experts, experts_per_gpu, gpus_per_rack))

    @property
    def n_experts(self) -> int:
        return self.w_router.shape[1]

    @property
    def d_model(self) -> int:
        return self.w_router.shape[0]

    def route(self, x: np.ndarray) -> Routing:
        """Router scores -> the top-k experts of each token and their gates (softmax over the k)."""
        x = self._check(x)
        scores = x @ self.w_router
        top = np.argpartition(-scores, self.k - 1, axis=1)[:, :self.k]
        picked = np.take_along_axis(scores, top, axis=1)
        order = np.argsort(-picked, axis=1)   # best expert first
        top, picked = np.take_along_axis(top, order, axis=1), np.take_along_axis(picked, order, axis=1)
        return Routing(experts=top, gates=_softmax(picked), placement=self.placement)

    def expert(self, e: int, x: np.ndarray) -> np.ndarray:
        """Expert e's MLP on a block of tokens: up-projection, ReLU, down-projection."""
        e = validate.integer("e", e, minimum=0, maximum=self.n_experts - 1)
        x = self._check(x)
        return np.maximum(x @ self.w_up[e], 0.0) @ self.w_down[e]

    def forward(self, x: np.ndarray, routing: Routing | None = None) -> tuple[np.ndarray, Routing]:
        """y = x + sum over each token's k experts of gate * expert(x). Returns (y, routing).

        The loop is over experts, as on real hardware: each expert ("its GPU") gets the block of tokens
        dispatched to it, runs once, and sends the results back to be combined.
        """
        x = self._check(x)
        if routing is not None and (not isinstance(routing, Routing) or routing.experts.shape[0] != x.shape[0]):
            raise ValueError(f"routing must be the Routing of these {x.shape[0]} tokens (from route), "
                             f"got {validate._describe(routing)}")
        routing = self.route(x) if routing is None else routing
        out = np.zeros_like(x)
        for e in range(self.n_experts):
            tokens, slots = np.nonzero(routing.experts == e)          # dispatch
            if tokens.size:
                result = self.expert(e, x[tokens])
                np.add.at(out, tokens, routing.gates[tokens, slots, None] * result)   # combine
        return x + out, routing

    def _check(self, x) -> np.ndarray:
        x = np.asarray(validate.number("x", x, positive=False), dtype=float)
        if x.ndim != 2 or x.shape[1] != self.d_model:
            raise ValueError(f"x must have shape (tokens, {self.d_model}), got {x.shape}")
        if not np.all(np.isfinite(x)):
            raise ValueError("x must be finite")
        return x


MAX_ROUTED_TOKENS = 1_000_000   # random routing keeps one random key per (token, expert): bounded memory
MAX_ROUTING_CELLS = 50_000_000
MAX_RACKS = 4096


def random_routing(*, n_tokens: int, placement: Placement, k: int, seed: int = 0) -> Routing:
    """Uniform random routing: each token picks k distinct experts, all equally likely.

    The assumption behind (R-1)/R; a trained router is only roughly balanced (DeepSeek-V3 adds a bias
    term to keep expert loads even). Vectorised: k smallest of a random key per (token, expert).
    """
    if not isinstance(placement, Placement):
        raise ValueError(f"placement must be a moe.Placement, got {validate._describe(placement)}")
    n_tokens = validate.integer("n_tokens", n_tokens, maximum=MAX_ROUTED_TOKENS)
    k = validate.integer("k", k)
    if n_tokens * placement.n_experts > MAX_ROUTING_CELLS:
        raise ValueError(f"n_tokens x n_experts must be <= {MAX_ROUTING_CELLS:,} (memory), got "
                         f"{n_tokens:,} x {placement.n_experts:,}")
    if k > placement.n_experts:
        raise ValueError(f"k must be <= n_experts={placement.n_experts}, got {k}")
    rng = np.random.default_rng(validate.integer("seed", seed, minimum=0))
    keys = rng.random((n_tokens, placement.n_experts))
    experts = np.argpartition(keys, k - 1, axis=1)[:, :k]
    return Routing(experts=experts, gates=np.full((n_tokens, k), 1.0 / k), placement=placement)


def measure_cross_rack_fraction(*, n_racks: int, gpus_per_rack: int = 64, experts_per_gpu: int = 4, k: int = 8,
                                n_tokens: int = 4096, seed: int = 0) -> dict:
    """Route ``n_tokens`` at random over ``n_racks`` racks and count the copies that leave their rack.

    Returns ``{"measured", "formula", "std_error"}``; the standard error is the binomial one over
    n_tokens * k copies, sqrt(f (1 - f) / (n_tokens k)): an upper bound, since a token's k experts are
    distinct (sampling without replacement varies less).
    """
    n_racks = validate.integer("n_racks", n_racks, maximum=MAX_RACKS)
    gpus_per_rack = validate.integer("gpus_per_rack", gpus_per_rack, maximum=MAX_RACKS)
    experts_per_gpu = validate.integer("experts_per_gpu", experts_per_gpu, maximum=MAX_RACKS)
    n_tokens = validate.integer("n_tokens", n_tokens, maximum=MAX_ROUTED_TOKENS)
    k = validate.integer("k", k)
    seed = validate.integer("seed", seed, minimum=0)
    if n_tokens * n_racks * gpus_per_rack * experts_per_gpu > MAX_ROUTING_CELLS:
        raise ValueError(f"n_tokens x n_racks x gpus_per_rack x experts_per_gpu must be <= {MAX_ROUTING_CELLS:,} "
                         f"(memory), got {n_tokens} x {n_racks} x {gpus_per_rack} x {experts_per_gpu}")
    placement = Placement(n_racks * gpus_per_rack * experts_per_gpu, experts_per_gpu, gpus_per_rack)
    routing = random_routing(n_tokens=n_tokens, placement=placement, k=k, seed=seed)
    formula = float(CROSS_RACK_FRACTION(n_racks=n_racks))
    return {"measured": routing.cross_rack_fraction(), "formula": formula,
            "std_error": math.sqrt(formula * (1 - formula) / (n_tokens * k))}
