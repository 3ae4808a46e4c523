"""Chapter 9: a communication roofline, and deployments larger than one scale-up domain.

Collective times on a **switched** scale-up domain (an NVSwitch node or rack: every device reaches every
other at its full egress), run as the ring algorithm over N devices, each sending at W bytes/s in one
direction at the link level the collective crosses, for an array of V bytes in total (scaling book,
"Sharded Matrices", and its GPU chapter; course notes §3.3 and §5,
/work/shared/reference/scaling_book_notes.md). Rings and tori (TPU slices), where an AllToAll's chunks
travel several hops, are in :mod:`lecture_lib.topology`::

    AllGather = ReduceScatter = V (N − 1) / (N W)
    AllReduce                 = 2 V (N − 1) / (N W)        (a ReduceScatter then an AllGather)
    AllToAll                  = V (N − 1) / (N² W)         (each device keeps 1/N, sends the rest in 1/N pieces)

W here is per-direction egress per device (GPU convention: 450 GB/s for an H100 over NVLink). The
scaling book's TPU formulas use bidirectional W and drop the (N − 1)/N factor; they agree at large N.
A collective spanning several link levels (NVLink inside a node, the network between nodes) takes the
slowest level: ``V · max_i (D_i − 1) / (D_i W_i)`` (scaling book GPU chapter).

These are bandwidth terms only. Every step of a collective's algorithm also pays a start-up latency α,
and the launch a fixed α_0: the α–β form :data:`ALPHA_BETA` (``α_0 + n_steps α + bandwidth term``),
with NCCL's own per-step latencies for NVLink and InfiniBand in :data:`NCCL_LATENCY`. Small messages
(TP all-reduces at a few sequences) are all α.

Where each layout turns communication-bound: ``t_comm = t_compute`` solved with ``sympy.solve`` for the
tokens per device (data parallelism, :data:`DP_CRITICAL_BATCH`) or, where the batch cancels, for the MLP
width (tensor and expert parallelism, :data:`TP_CRITICAL_D_FF`, :data:`EP_CRITICAL_D_FF`); and what each
device holds and reads when the weights are replicated or sharded (:data:`WEIGHT_BYTES_PER_DEVICE`).
"""

from __future__ import annotations

from dataclasses import dataclass

import math

from . import validate
from .hardware import ChipAggregate
from .formula import Formula, simplify, solve
import sympy as sp

from .symbols import (B, FLOPs, N_total, alpha_base, alpha_step, b_dev, b_dev_star, bw_link, bytes_grad,
                      bytes_msg, bytes_param, bytes_value, d_ff, d_ff_star, d_model, k_active, mem_bw, n_dp, n_ep,
                      n_layers, n_mats, n_ring, n_shards, n_tp, t_coll, t_comm, t_compute, t_weights, w_dev)

ALL_GATHER = Formula(t_coll, bytes_msg * (n_ring - 1) / (n_ring * bw_link),
                     source="scaling book sharding.md / gpus.md: ring AllGather, V (N-1) / (N W)",
                     domain=n_ring >= 1)
REDUCE_SCATTER = Formula(t_coll, ALL_GATHER.rhs,
                         source="scaling book sharding.md: the transpose of an AllGather, same cost",
                         domain=n_ring >= 1)
ALL_REDUCE = Formula(t_coll, REDUCE_SCATTER.rhs + ALL_GATHER.rhs,
                     source="scaling book sharding.md: AllReduce = ReduceScatter + AllGather (no SHARP)",
                     domain=n_ring >= 1)
ALL_TO_ALL = Formula(t_coll, bytes_msg * (n_ring - 1) / (n_ring ** 2 * bw_link),
                     source="scaling book gpus.md: in-node AllToAll, B (N-1) / (W N^2)",
                     domain=n_ring >= 1)
#: Tensor parallelism (Megatron layout) all-reduces the activations twice per layer (after attention
#: and after the MLP), in every one of the L layers.
TP_ALL_REDUCE_PER_STEP = Formula(
    t_coll, 2 * n_layers * ALL_REDUCE.rhs.subs(bytes_msg, B * d_model * bytes_value),
    source="Megatron-LM (Shoeybi et al. 2019, arXiv 1909.08053) §3: two all-reduces per layer; "
           "scaling book inference.md",
    domain=n_ring >= 1)
#: The same 2 L all-reduces with their latency: each pays α_0 + 2 (N − 1) α before its bytes.
TP_ALL_REDUCE_PER_STEP_ALPHA_BETA = Formula(
    t_coll, 2 * n_layers * (alpha_base + 2 * (n_ring - 1) * alpha_step
                            + ALL_REDUCE.rhs.subs(bytes_msg, B * d_model * bytes_value)),
    source="Megatron-LM §3 (two all-reduces per layer) with NCCL's ring latency model (src/graph/tuning.cc)",
    domain=n_ring >= 1)

KINDS = {"allgather": ALL_GATHER, "reducescatter": REDUCE_SCATTER, "allreduce": ALL_REDUCE,
         "alltoall": ALL_TO_ALL}

# --- Latency: the α–β form -----------------------------------------------------------------------------
#: Sequential steps of the ring algorithm, as NCCL counts them to predict a collective's time
#: (src/graph/tuning.cc: nsteps = 2 (nRanks − 1) for AllReduce, nRanks − 1 for AllGather/ReduceScatter).
#: AllToAll is a set of point-to-point sends with no step count in NCCL's model, so it has no entry.
LATENCY_STEPS = {"allgather": n_ring - 1, "reducescatter": n_ring - 1, "allreduce": 2 * (n_ring - 1)}
NCCL_TUNING = "https://github.com/NVIDIA/nccl/blob/master/src/graph/tuning.cc"
#: α–β: a fixed launch latency α_0, α per sequential step, then the bytes over the bandwidth
#: (NCCL's own time model: ``time = latency + bytes / bandwidth``, with latency = base + nsteps × hw
#: latency; src/graph/tuning.cc, ncclTopoGetAlgoTime and ncclTopoTuneModel).
ALPHA_BETA = {kind: Formula(t_coll, alpha_base + steps * alpha_step + KINDS[kind].rhs,
                            source=f"NCCL's ring time model ({NCCL_TUNING}): base + nsteps x per-step latency "
                                   "+ bytes / bandwidth; bandwidth term as in the scaling book",
                            domain=n_ring >= 2)
              for kind, steps in LATENCY_STEPS.items()}
#: Published per-step latencies, in seconds: NCCL's default tuning constants (ncclTunerConstantsDefaults in
#: src/graph/tuning.cc, NVIDIA/nccl, read at commit 5067397 of 2026-06-11), ring algorithm, per protocol.
#: "base" is the fixed launch latency α_0 of a ring collective; "nvlink" the per-step α inside a node;
#: "network" the per-step α between nodes (InfiniBand/RoCE). NCCL picks the protocol per message size:
#: LL for small messages (the TP all-reduces of a few sequences), Simple for large ones.
NCCL_LATENCY = {
    "base": {"LL": 6.6e-6, "LL128": 14.0e-6, "Simple": 8.4e-6},
    "nvlink": {"LL": 0.6e-6, "LL128": 1.9e-6, "Simple": 3.4e-6},
    "network": {"LL": 2.7e-6, "LL128": 4.0e-6, "Simple": 14.0e-6},
}
#: TPU ICI: about 1 µs per hop (scaling book tpus.md; course notes §3.2), no separate launch figure.
TPU_ICI_HOP_LATENCY = 1e-6


def nccl_latency(link: str = "nvlink", protocol: str = "LL") -> tuple[float, float]:
    """``(α_0, α)`` in seconds from NCCL's tuning table (:data:`NCCL_LATENCY`) for a ring collective.

    ``link`` is "nvlink" (inside a node) or "network" (between nodes); ``protocol`` is "LL" (small
    messages), "LL128" or "Simple" (large ones). E.g. ``nccl_latency()`` = (6.6 µs, 0.6 µs), so an
    8-GPU ring AllReduce starts at 6.6 + 2·7·0.6 = 15 µs before a single byte counts.
    """
    validate.choice("link", link, ["nvlink", "network"])
    validate.choice("protocol", protocol, ["LL", "LL128", "Simple"])
    return NCCL_LATENCY["base"][protocol], NCCL_LATENCY[link][protocol]


def collective_latency_time(kind: str, *, bytes_total, n_devices: int, link_bandwidth, hop_latency,
                            base_latency=0.0) -> float:
    """Seconds for one ring collective with latency: ``α_0 + n_steps α + bandwidth term`` (:data:`ALPHA_BETA`).

    ``kind`` is "allgather", "reducescatter" or "allreduce"; ``hop_latency`` is α per step and
    ``base_latency`` α_0 (``nccl_latency()`` gives NCCL's figures). ``bytes_total`` may be 0: the
    latency alone. One device costs nothing.
    """
    validate.choice("kind", kind, list(ALPHA_BETA))
    bytes_total = validate.scalar("bytes_total", bytes_total, allow_zero=True)
    n_devices = validate.integer("n_devices", n_devices)
    link_bandwidth = validate.scalar("link_bandwidth", link_bandwidth)
    hop_latency = validate.scalar("hop_latency", hop_latency, allow_zero=True)
    base_latency = validate.scalar("base_latency", base_latency, allow_zero=True)
    if n_devices == 1:
        return 0.0
    return ALPHA_BETA[kind](alpha_base=base_latency, alpha_step=hop_latency, bytes_msg=bytes_total,
                            n_ring=n_devices, bw_link=link_bandwidth,
                            allow_zero=("alpha_base", "alpha_step", "bytes_msg"),
                            called_as={"alpha_base": "base_latency", "alpha_step": "hop_latency",
                                       "bytes_msg": "bytes_total", "n_ring": "n_devices",
                                       "bw_link": "link_bandwidth"})


def collective_time(kind: str, *, bytes_total, levels) -> float:
    """Seconds for one collective over one or more link levels; the slowest level sets the time.

    ``kind`` is "allgather", "reducescatter", "allreduce" or "alltoall" (:data:`KINDS`);
    ``bytes_total`` is V, the full array; ``levels`` is a list of ``(devices, bytes_per_s)``, one per
    link level, with the per-direction bandwidth of one device (or one node) at that level. A level
    of 1 device costs nothing. Equation: ``max_i T_kind(V, D_i, W_i)`` (scaling book gpus.md).
    """
    validate.choice("kind", kind, list(KINDS))
    bytes_total = validate.scalar("bytes_total", bytes_total, allow_zero=True)
    if (not isinstance(levels, (list, tuple)) or not levels
            or not all(isinstance(level, (list, tuple)) and len(level) == 2 for level in levels)):
        raise ValueError(f"levels must list at least one (devices, bytes_per_s) pair, got {validate._describe(levels)}")
    worst = 0.0
    for i, (devices, bandwidth) in enumerate(levels):
        devices = validate.integer(f"levels[{i}] devices", devices)
        bandwidth = validate.scalar(f"levels[{i}] bytes_per_s", bandwidth)
        if devices == 1 or bytes_total == 0:
            continue
        worst = max(worst, KINDS[kind](bytes_msg=bytes_total, n_ring=devices, bw_link=bandwidth,
                                       called_as={"bytes_msg": "bytes_total", "n_ring": f"levels[{i}] devices",
                                                  "bw_link": f"levels[{i}] bytes_per_s"}))
    return worst


def tp_all_reduce_time(model, *, tp: int, batch_tokens, bytes_per_value: float, link_bandwidth: float,
                       hop_latency=0.0, base_latency=0.0) -> float:
    """Seconds per step of tensor-parallel all-reduces: 2 per layer of ``batch_tokens × d_model`` values.

    ``2 L · 2 V (tp − 1) / (tp W)`` with ``V = B d_model bytes`` (:data:`TP_ALL_REDUCE_PER_STEP`,
    Megatron-LM §3; ring AllReduce as in the scaling book). That is bandwidth only. With
    ``hop_latency`` (α per ring step) and ``base_latency`` (α_0 per all-reduce), each all-reduce
    also pays ``α_0 + 2 (tp − 1) α`` (:data:`TP_ALL_REDUCE_PER_STEP_ALPHA_BETA`; NCCL's figures from
    :func:`nccl_latency`): at a few sequences that latency is most of the time.
    """
    from . import models

    model = models.resolve(model)
    tp = validate.integer("tp", tp)
    batch_tokens = validate.number("batch_tokens", batch_tokens)
    bytes_per_value = validate.number("bytes_per_value", bytes_per_value)
    link_bandwidth = validate.number("link_bandwidth", link_bandwidth)
    hop_latency = validate.scalar("hop_latency", hop_latency, allow_zero=True)
    base_latency = validate.scalar("base_latency", base_latency, allow_zero=True)
    if tp == 1:
        return 0.0
    names = {"B": "batch_tokens", "bytes_value": "bytes_per_value", "n_ring": "tp", "bw_link": "link_bandwidth",
             "n_layers": "model", "d_model": "model"}
    values = dict(n_layers=model.n_layers, B=batch_tokens, d_model=model.d_model, bytes_value=bytes_per_value,
                  n_ring=tp, bw_link=link_bandwidth)
    if hop_latency == 0 and base_latency == 0:
        return TP_ALL_REDUCE_PER_STEP(**values, called_as=names)
    return TP_ALL_REDUCE_PER_STEP_ALPHA_BETA(**values, alpha_step=hop_latency, alpha_base=base_latency,
                                             allow_zero=("alpha_step", "alpha_base"),
                                             called_as={**names, "alpha_step": "hop_latency",
                                                        "alpha_base": "base_latency"})


def dp_gradient_sync_time(*, n_params, bytes_per_grad: float, dp: int, link_bandwidth: float) -> float:
    """Seconds to all-reduce one copy of the gradients over ``dp`` data-parallel replicas.

    ``2 V (dp − 1) / (dp W)`` with ``V = n_params · bytes_per_grad`` (:data:`ALL_REDUCE`).
    """
    n_params = validate.scalar("n_params", n_params)
    bytes_per_grad = validate.scalar("bytes_per_grad", bytes_per_grad)
    dp = validate.integer("dp", dp)
    link_bandwidth = validate.scalar("link_bandwidth", link_bandwidth)
    if not math.isfinite(n_params * bytes_per_grad):
        raise ValueError(f"n_params * bytes_per_grad must be finite, got {n_params!r} * {bytes_per_grad!r}")
    if dp == 1:
        return 0.0
    return ALL_REDUCE(bytes_msg=n_params * bytes_per_grad, n_ring=dp, bw_link=link_bandwidth,
                      called_as={"bytes_msg": "n_params * bytes_per_grad", "n_ring": "dp", "bw_link": "link_bandwidth"})


MAX_DOMAINS = 10**7
"""The most scale-up domains a :class:`Deployment` may hold: far past any cluster built (the largest
announced are a few hundred thousand GPUs, i.e. tens of thousands of 8-GPU domains), and small enough
that every count and product of the deployment stays an ordinary number."""


@dataclass(frozen=True)
class Deployment(ChipAggregate):
    """``n_domains`` scale-up domains of one chip (e.g. 12 HGX H100 nodes = 96 GPUs), as one unit.

    Aggregate peaks scale with the chip count; ``levels`` are the two link levels a collective over
    every chip crosses: the scale-up domain (NVLink/ICI, per chip) and the network between domains
    (per domain: chips × scale-out bandwidth per chip).
    """

    name: str
    chip: object
    chips_per_domain: int
    n_domains: int

    def __post_init__(self):
        from . import hardware

        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a non-empty string, got {validate._describe(self.name)}")
        if not isinstance(self.chip, hardware.Chip):
            raise ValueError(f"chip must be a hardware.Chip, got {validate._describe(self.chip)}")
        per_domain = validate.integer("chips_per_domain", self.chips_per_domain, maximum=self.chip.scale_up_domain)
        domains = validate.integer("n_domains", self.n_domains, maximum=MAX_DOMAINS)
        object.__setattr__(self, "chips_per_domain", per_domain)
        object.__setattr__(self, "n_domains", domains)

    @property
    def n_chips(self) -> int:
        return self.chips_per_domain * self.n_domains

    @property
    def levels(self) -> list[tuple[int, float]]:
        return [(self.chips_per_domain, self.chip.scale_up_bandwidth),
                (self.n_domains, self.chip.scale_out_bandwidth * self.chips_per_domain)]


def deployment(unit, *, n_systems: int = 1, n_chips: int | None = None) -> Deployment:
    """A deployment from a preset: ``n_systems`` copies of a ``hardware.System``, or ``n_chips`` of a chip.

    ``deployment(hardware.get_system("HGX H100"), n_systems=12)`` is SGLang's 96-GPU cluster;
    ``deployment(hardware.get("B200"), n_chips=4)`` four B200s inside one node. Chips beyond one
    scale-up domain are split into whole domains (``ValueError`` if they do not divide evenly).
    """
    from . import hardware

    n_systems = validate.integer("n_systems", n_systems, maximum=MAX_DOMAINS)
    if isinstance(unit, hardware.System):
        if n_chips is not None:
            raise ValueError("n_chips is only for a bare chip; a System brings its own n_chips")
        return Deployment(f"{n_systems} × {unit.name}", unit.chip, unit.n_chips, n_systems)
    if not isinstance(unit, hardware.Chip):
        raise ValueError(f"unit must be a hardware.Chip or hardware.System, got {unit!r}")
    count = validate.integer("n_chips", 1 if n_chips is None else n_chips) * n_systems
    per_domain = min(count, unit.scale_up_domain)
    if count % per_domain:
        raise ValueError(f"n_chips must fill whole {unit.name} scale-up domains of {unit.scale_up_domain}, "
                         f"got {count}")
    if count // per_domain > MAX_DOMAINS:   # named here: Deployment() would blame its own n_domains
        raise ValueError(f"n_chips x n_systems must be at most {MAX_DOMAINS:,} {unit.name} scale-up domains of "
                         f"{per_domain} ({MAX_DOMAINS * per_domain:,} chips), got n_chips={n_chips!r}, "
                         f"n_systems={n_systems!r} ({count:,} chips)")
    return Deployment(f"{count} × {unit.name}", unit, per_domain, count // per_domain)


# --- The critical batch of a parallel layout (scaling book training.md and gpus.md) -------------------
# Each layout's collectives take t_comm and its matmuls t_compute on one device; solving
# t_comm = t_compute gives the point below which the layout is communication-bound. FLOPs is one
# device's peak (2 FLOPs per multiply-add), W its one-direction bandwidth at the link level crossed.

#: Data parallelism in training: the gradient all-reduce (one value per parameter) overlaps the backward
#: pass, which costs 4 FLOPs per parameter per token (two of the 6 N per token are the forward pass).
DP_COMM = Formula(t_comm, ALL_REDUCE.rhs.subs({bytes_msg: N_total * bytes_grad, n_ring: n_dp}),
                  source="scaling book training.md, data parallelism: AllReduce of the gradients",
                  domain=n_dp >= 1)
DP_COMPUTE = Formula(t_compute, 4 * b_dev * N_total / FLOPs,
                     source="scaling book training.md: the backward pass, 4 FLOPs per parameter per token")
DP_CRITICAL_BATCH = Formula(b_dev_star, solve(sp.Eq(DP_COMM.rhs, DP_COMPUTE.rhs), b_dev)[0],
                            source="t_comm = t_compute solved for b_dev; scaling book training.md "
                                   "(B/X > C/W_ici) and gpus.md (~2200 tokens per H100 in a node as DP -> oo; "
                                   "1,924 exactly for DP = 8)",
                            domain=n_dp >= 1)

#: Tensor parallelism (Megatron MLP): each device holds 1/TP of the n_mats d_model x d_ff matrices,
#: and the block ends with one all-reduce of the B x d_model activations.
TP_COMM = Formula(t_comm, ALL_REDUCE.rhs.subs({bytes_msg: B * d_model * bytes_value, n_ring: n_tp}),
                  source="Megatron-LM §3: one all-reduce per MLP block; scaling book training.md",
                  domain=n_tp >= 1)
TP_COMPUTE = Formula(t_compute, 2 * B * n_mats * d_model * d_ff / (n_tp * FLOPs),
                     source="2 FLOPs per multiply-add over 1/TP of the MLP's weights")
TP_CRITICAL_D_FF = Formula(d_ff_star, solve(sp.Eq(TP_COMM.rhs, TP_COMPUTE.rhs), d_ff)[0],
                           source="t_comm = t_compute solved for d_ff (B cancels); scaling book "
                                  "training.md (F/Y > C/W) and gpus.md (Y < F/2200 on H100 NVLink as TP -> oo; "
                                  "d_ff/8 > 1,924 exactly at TP = 8)",
                           domain=n_tp >= 1)

#: Expert parallelism: each of E devices holds n_experts/E experts. b_dev tokens leave each device's
#: router, k copies each, are dispatched and combined (two all-to-alls of b_dev k d_model values per device).
EP_COMM = Formula(t_comm, 2 * ALL_TO_ALL.rhs.subs({bytes_msg: n_ep * b_dev * k_active * d_model * bytes_value,
                                                   n_ring: n_ep}),
                  source="scaling book gpus.md, expert parallelism: dispatch and combine AllToAlls",
                  domain=n_ep >= 1)
EP_COMPUTE = Formula(t_compute, 2 * b_dev * k_active * n_mats * d_model * d_ff / FLOPs,
                     source="with even routing each device runs b_dev k expert-token products of 2 N_expert FLOPs")
EP_CRITICAL_D_FF = Formula(d_ff_star, solve(sp.Eq(EP_COMM.rhs, EP_COMPUTE.rhs), d_ff)[0],
                           source="t_comm = t_compute solved for the expert's d_ff (b_dev cancels); scaling "
                                  "book gpus.md (EP is cheap when F > 8 C/W_node across nodes)",
                           domain=n_ep >= 1)


def _alpha(flops, link_bandwidth):
    """``flops`` and ``link_bandwidth`` validated, as the values to compute with."""
    return validate.number("flops", flops), validate.number("link_bandwidth", link_bandwidth)


def dp_critical_batch(*, dp: int, flops, link_bandwidth, bytes_per_grad: float = 2) -> float:
    """Tokens per device per training step below which data parallelism is communication-bound.

    ``b* = bytes_grad (DP − 1) FLOPs / (2 DP W)`` (:data:`DP_CRITICAL_BATCH`): the gradient all-reduce
    ``2 N bytes_grad (DP − 1)/(DP W)`` equals the backward pass ``4 b_dev N / FLOPs``. The parameter count
    cancels. With BF16 gradients it is ``(DP − 1)/DP · FLOPs/W``, which tends to the scaling book's rule
    FLOPs/W for many replicas (training.md: B/X > C/W_ici; gpus.md: 990e12 / 450e9 ≈ 2200 tokens per H100
    inside a node, 2475 across nodes). The exact figure for one 8-GPU H100 node is 7/8 of it:
    989.4e12 / 450e9 × 7/8 ≈ 1,924 tokens per GPU (2,199 as DP → ∞).
    ``flops`` and ``link_bandwidth`` are one device's (one direction). ``dp = 1`` needs no sync: 0.
    """
    dp = validate.integer("dp", dp)
    flops, link_bandwidth = _alpha(flops, link_bandwidth)
    bytes_per_grad = validate.number("bytes_per_grad", bytes_per_grad)
    if dp == 1:
        return 0.0
    return DP_CRITICAL_BATCH(n_dp=dp, FLOPs=flops, bw_link=link_bandwidth, bytes_grad=bytes_per_grad,
                             called_as={"n_dp": "dp", "FLOPs": "flops", "bw_link": "link_bandwidth",
                                        "bytes_grad": "bytes_per_grad"})


def tp_critical_d_ff(*, tp: int, flops, link_bandwidth, bytes_per_value: float = 2, matrices: int = 2) -> float:
    """The MLP width d_ff below which ``tp``-way tensor parallelism is communication-bound.

    ``d_ff* = bytes_value (TP − 1) FLOPs / (n_mats W)`` (:data:`TP_CRITICAL_D_FF`): one all-reduce of
    ``B d_model`` values per MLP block against ``2 B n_mats d_model d_ff / TP`` FLOPs per device. The
    batch cancels, so no batch rescues a thin layer: the condition is on ``d_ff / TP``, which must exceed
    ``(TP − 1)/TP · FLOPs/W`` for BF16 activations and two matrices: the scaling book's rule FLOPs/W
    (training.md: Y < F / (C/W); gpus.md: Y < F/2200 on H100 NVLink) is its many-way limit. At 8 ways on
    H100 NVLink the exact figure is 7/8 of it, d_ff/8 > 1,924 (d_ff > 15,390); a gated MLP
    (``matrices=3``) needs 2/3 of that, d_ff > 10,260.
    """
    tp = validate.integer("tp", tp)
    matrices = validate.integer("matrices", matrices)
    flops, link_bandwidth = _alpha(flops, link_bandwidth)
    bytes_per_value = validate.number("bytes_per_value", bytes_per_value)
    if tp == 1:
        return 0.0
    return TP_CRITICAL_D_FF(n_tp=tp, FLOPs=flops, bw_link=link_bandwidth, bytes_value=bytes_per_value,
                            n_mats=matrices, called_as={"n_tp": "tp", "FLOPs": "flops", "bw_link": "link_bandwidth",
                                                        "bytes_value": "bytes_per_value", "n_mats": "matrices"})


def ep_critical_d_ff(*, ep: int, flops, link_bandwidth, bytes_per_value: float = 1, matrices: int = 3) -> float:
    """The expert width d_ff below which ``ep``-way expert parallelism is communication-bound.

    ``d_ff* = bytes_value (E − 1) FLOPs / (n_mats E W)`` (:data:`EP_CRITICAL_D_FF`): dispatch plus
    combine, ``2 b_dev k d_model bytes_value (E − 1)/(E W)``, against ``2 b_dev k n_mats d_model d_ff / FLOPs``
    of expert matmuls. The tokens per device and k cancel, as for TP (scaling book gpus.md: EP is cheap
    when F > 8 C/W_node across nodes, a rule for its own count of bytes and matrices). The exact figure
    here keeps the (E − 1)/E of a ring of E and the ``bytes_value/n_mats`` of the layout: e.g. FP8
    dispatch and gated experts over H800 InfiniBand at E = 64 give 63/64 · 1/3 · FLOPs/W ≈ 13,000.
    Defaults: FP8 dispatch, gated experts (DeepSeek-V3).
    """
    ep = validate.integer("ep", ep)
    matrices = validate.integer("matrices", matrices)
    flops, link_bandwidth = _alpha(flops, link_bandwidth)
    bytes_per_value = validate.number("bytes_per_value", bytes_per_value)
    if ep == 1:
        return 0.0
    return EP_CRITICAL_D_FF(n_ep=ep, FLOPs=flops, bw_link=link_bandwidth, bytes_value=bytes_per_value,
                            n_mats=matrices, called_as={"n_ep": "ep", "FLOPs": "flops", "bw_link": "link_bandwidth",
                                                        "bytes_value": "bytes_per_value", "n_mats": "matrices"})


# --- Replicated vs sharded weights ---------------------------------------------------------------------
#: Data parallelism replicates (n_shards = 1: every replica holds and reads every weight); TP and EP shard
#: (n_shards = TP or E: each device holds and reads 1/n of them). Chapter 4's E4.2 divides the same way.
WEIGHT_BYTES_PER_DEVICE = Formula(w_dev, N_total * bytes_param / n_shards,
                                  source="lecture 01:05:34 (E4.2): the weights divide over the devices "
                                         "that share them; a replica shares with none")
T_WEIGHT_READ_PER_DEVICE = Formula(t_weights, WEIGHT_BYTES_PER_DEVICE.rhs / mem_bw,
                                   source="lecture 00:06:39 (E1.3) on one device: its own weights over its own HBM")

LAYOUTS = ("dp", "tp", "ep")


def weights_per_device(*, n_params, bytes_per_param: float, layout: str, n_devices: int, chip) -> dict:
    """Weight bytes per device, and the time to read them once, for a replicated or sharded layout.

    ``layout`` is "dp" (replicated: each of the ``n_devices`` replicas holds all ``n_params``), "tp" or
    "ep" (sharded: each holds 1/``n_devices``). ``w_dev = N bytes / n_shards`` and
    ``t_weights = w_dev / mem_bw`` with one device's HBM bandwidth (:data:`WEIGHT_BYTES_PER_DEVICE`,
    :data:`T_WEIGHT_READ_PER_DEVICE`). EP shards only the experts in a real model; pass the expert
    parameters as ``n_params`` then. Returns ``{"bytes", "t_weights", "fits", "n_shards"}``, where
    ``fits`` compares the bytes with the chip's HBM capacity (nothing left for KV cache is still "fits").
    """
    from . import hardware

    n_params = validate.number("n_params", n_params)
    bytes_per_param = validate.number("bytes_per_param", bytes_per_param)
    validate.choice("layout", layout, LAYOUTS)
    n_devices = validate.integer("n_devices", n_devices)
    chip = hardware.resolve_chip(chip)
    shards = 1 if layout == "dp" else n_devices
    names = {"N_total": "n_params", "bytes_param": "bytes_per_param", "n_shards": "n_devices", "mem_bw": "chip"}
    per_device = WEIGHT_BYTES_PER_DEVICE(N_total=n_params, bytes_param=bytes_per_param, n_shards=shards,
                                         called_as={k: v for k, v in names.items() if k != "mem_bw"})
    read = T_WEIGHT_READ_PER_DEVICE(N_total=n_params, bytes_param=bytes_per_param, n_shards=shards,
                                    mem_bw=chip.hbm_bandwidth, called_as=names)
    return {"bytes": per_device, "t_weights": read, "fits": per_device <= chip.hbm_capacity, "n_shards": shards}
