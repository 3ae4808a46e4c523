"""Chapter 8: a communication roofline, and deployments larger than one scale-up domain.

Collective times on a ring of N devices, each sending at W bytes/s in one direction at the link level
the collective crosses, for an array of V bytes in total (scaling book, "Sharded Matrices", and its
GPU chapter; course notes §3.3 and §5, /work/shared/reference/scaling_book_notes.md)::

    AllGather = ReduceScatter = V (N − 1) / (N W)
    AllReduce                 = 2 V (N − 1) / (N W)        (a ReduceScatter then an AllGather)
    AllToAll                  = V (N − 1) / (N² W)         (each device keeps 1/N, sends the rest in 1/N pieces)

W here is per-direction egress per device (GPU convention: 450 GB/s for an H100 over NVLink). The
scaling book's TPU formulas use bidirectional W and drop the (N − 1)/N factor; they agree at large N.
A collective spanning several link levels (NVLink inside a node, the network between nodes) takes the
slowest level: ``V · max_i (D_i − 1) / (D_i W_i)`` (scaling book GPU chapter).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

from . import validate
from .formula import Formula
from .symbols import B, bw_link, bytes_msg, bytes_value, d_model, n_layers, n_ring, t_coll

ALL_GATHER = Formula(t_coll, bytes_msg * (n_ring - 1) / (n_ring * bw_link),
                     source="scaling book sharding.md / gpus.md: ring AllGather, V (N-1) / (N W)")
REDUCE_SCATTER = Formula(t_coll, ALL_GATHER.rhs,
                         source="scaling book sharding.md: the transpose of an AllGather, same cost")
ALL_REDUCE = Formula(t_coll, REDUCE_SCATTER.rhs + ALL_GATHER.rhs,
                     source="scaling book sharding.md: AllReduce = ReduceScatter + AllGather (no SHARP)")
ALL_TO_ALL = Formula(t_coll, bytes_msg * (n_ring - 1) / (n_ring ** 2 * bw_link),
                     source="scaling book gpus.md: in-node AllToAll, B (N-1) / (W N^2)")
#: Tensor parallelism (Megatron layout) all-reduces the activations twice per layer (after attention
#: and after the MLP), in every one of the L layers.
TP_ALL_REDUCE_PER_STEP = Formula(
    t_coll, 2 * n_layers * ALL_REDUCE.rhs.subs(bytes_msg, B * d_model * bytes_value),
    source="Megatron-LM (Shoeybi et al. 2019, arXiv 1909.08053) §3: two all-reduces per layer; "
           "scaling book inference.md")

KINDS = {"allgather": ALL_GATHER, "reducescatter": REDUCE_SCATTER, "allreduce": ALL_REDUCE,
         "alltoall": ALL_TO_ALL}


def collective_time(kind: str, *, bytes_total, levels) -> float:
    """Seconds for one collective over one or more link levels; the slowest level sets the time.

    ``kind`` is "allgather", "reducescatter", "allreduce" or "alltoall" (:data:`KINDS`);
    ``bytes_total`` is V, the full array; ``levels`` is a list of ``(devices, bytes_per_s)``, one per
    link level, with the per-direction bandwidth of one device (or one node) at that level. A level
    of 1 device costs nothing. Equation: ``max_i T_kind(V, D_i, W_i)`` (scaling book gpus.md).
    """
    validate.choice("kind", kind, list(KINDS))
    validate.number("bytes_total", bytes_total, allow_zero=True)
    if not levels:
        raise ValueError("levels must list at least one (devices, bytes_per_s) pair, got none")
    worst = 0.0
    for devices, bandwidth in levels:
        devices = validate.integer("devices", devices)
        validate.number("bytes_per_s", bandwidth)
        if devices == 1 or bytes_total == 0:
            continue
        worst = max(worst, KINDS[kind](bytes_msg=bytes_total, n_ring=devices, bw_link=bandwidth))
    return worst


def tp_all_reduce_time(model, *, tp: int, batch_tokens, bytes_per_value: float, link_bandwidth: float) -> float:
    """Seconds per step of tensor-parallel all-reduces: 2 per layer of ``batch_tokens × d_model`` values.

    ``2 L · 2 V (tp − 1) / (tp W)`` with ``V = B d_model bytes`` (:data:`TP_ALL_REDUCE_PER_STEP`,
    Megatron-LM §3; ring AllReduce as in the scaling book). At batch 1 the bytes are tiny and the
    real cost is latency (a few µs per all-reduce), which this bandwidth term does not show.
    """
    tp = validate.integer("tp", tp)
    validate.number("batch_tokens", batch_tokens)
    validate.number("bytes_per_value", bytes_per_value)
    validate.number("link_bandwidth", link_bandwidth)
    if tp == 1:
        return 0.0
    return TP_ALL_REDUCE_PER_STEP(n_layers=model.n_layers, B=batch_tokens, d_model=model.d_model,
                                  bytes_value=bytes_per_value, n_ring=tp, bw_link=link_bandwidth)


def dp_gradient_sync_time(*, n_params, bytes_per_grad: float, dp: int, link_bandwidth: float) -> float:
    """Seconds to all-reduce one copy of the gradients over ``dp`` data-parallel replicas.

    ``2 V (dp − 1) / (dp W)`` with ``V = n_params · bytes_per_grad`` (:data:`ALL_REDUCE`).
    """
    validate.number("n_params", n_params)
    validate.number("bytes_per_grad", bytes_per_grad)
    return collective_time("allreduce", bytes_total=n_params * bytes_per_grad,
                           levels=[(dp, link_bandwidth)])


@dataclass(frozen=True)
class Deployment:
    """``n_domains`` scale-up domains of one chip (e.g. 12 HGX H100 nodes = 96 GPUs), as one unit.

    Aggregate peaks scale with the chip count; ``levels`` are the two link levels a collective over
    every chip crosses: the scale-up domain (NVLink/ICI, per chip) and the network between domains
    (per domain: chips × scale-out bandwidth per chip).
    """

    name: str
    chip: object
    chips_per_domain: int
    n_domains: int

    @property
    def n_chips(self) -> int:
        return self.chips_per_domain * self.n_domains

    @property
    def flops(self) -> Mapping[str, float]:
        return MappingProxyType({fmt: v * self.n_chips for fmt, v in self.chip.flops.items()})

    @property
    def hbm_bandwidth(self) -> float:
        return self.chip.hbm_bandwidth * self.n_chips

    @property
    def hbm_capacity(self) -> float:
        return self.chip.hbm_capacity * self.n_chips

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

    n_systems = validate.integer("n_systems", n_systems)
    if isinstance(unit, hardware.System):
        if n_chips is not None:
            raise ValueError("n_chips is only for a bare chip; a System brings its own n_chips")
        return Deployment(f"{n_systems} x {unit.name}", unit.chip, unit.n_chips, n_systems)
    if not isinstance(unit, hardware.Chip):
        raise ValueError(f"unit must be a hardware.Chip or hardware.System, got {unit!r}")
    count = validate.integer("n_chips", 1 if n_chips is None else n_chips) * n_systems
    per_domain = min(count, unit.scale_up_domain)
    if count % per_domain:
        raise ValueError(f"n_chips must fill whole {unit.name} scale-up domains of {unit.scale_up_domain}, "
                         f"got {count}")
    return Deployment(f"{count} x {unit.name}", unit, per_domain, count // per_domain)
