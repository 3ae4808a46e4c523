"""Chapter 9: where the devices of a collective sit: a switched node, a ring, or a 2-D/3-D torus.

:mod:`lecture_lib.collectives` times collectives on a **switched** domain (an NVSwitch node or NVL72 rack),
where every device reaches every other one in one hop at its full egress. A TPU slice is a **torus**: each
chip has two links per axis, one to each neighbour, and a message to a chip k places away travels k hops.
AllGather, ReduceScatter and AllReduce are ring algorithms that only ever talk to neighbours, so they cost
about the same on a ring as on a switch of the same per-chip egress. An AllToAll is different: its chunks
go to every chip, so on a ring or torus they cross several links each and load them N/4 times over.

Conventions (scaling book sharding.md "Sharded Matrices", tpus.md, gpus.md; course notes §3.3, §3.11,
/work/shared/reference/scaling_book_notes.md): ``V`` is the bytes of the whole array, ``w`` the
**one-direction** bandwidth of one link (a torus chip has ``2 n_axes`` of them), ``N`` the devices. The
book writes its torus formulas with the bidirectional ``W_ici = 2w``::

    ring / torus AllGather = ReduceScatter = V (N − 1) / (2 n_axes N w)      (book: V / (n_axes W_ici))
    ring / torus AllReduce                 = 2 × that
    ring / torus AllToAll                  = V n_long / (8 N w)               (book: V max(A,B,C) / (4 N W_ici))

A ring is the torus with one axis (``n_axes = 1``, ``n_long = N``): its AllToAll is ``V/(8w)`` whatever
N, against ``V (N − 1)/(N² · 2w)`` on a switch with the same egress ``2w``: the ring is about N/4 times
slower, the mean number of hops a chunk travels. :func:`ring_all_to_all_hops` counts those hops one by one.

An array already sharded over an inner axis Y (e.g. the weights of FSDP+TP, sharded over TP inside a
node) needs less bandwidth per chip for a collective over the outer axis: on a torus the bytes per axis fall
by 1/Y; on GPU nodes only the levels whose sub-tree is narrower than Y gain (gpus.md:
``bytes · max_i (D_i − 1) / (D_i · max(Y, S_{i−1}) · W_link,i)``, :func:`sharded_collective_time`).
"""

from __future__ import annotations

import math

import sympy as sp

from . import validate
from .collectives import ALL_GATHER, ALL_REDUCE, ALL_TO_ALL, REDUCE_SCATTER
from .formula import Formula
from .symbols import bytes_msg, n_axes, n_long, n_ring, t_coll, w_link

SCALING_BOOK = "https://jax-ml.github.io/scaling-book"

TORUS_ALL_GATHER = Formula(t_coll, bytes_msg * (n_ring - 1) / (2 * n_axes * n_ring * w_link),
                           source=f"scaling book sharding.md ({SCALING_BOOK}/sharding): AllGather over n_axes "
                                  "bidirectional axes, V / (n_axes W_ici) with W_ici = 2w, and the exact (N-1)/N",
                           domain=sp.And(n_ring >= 1, n_axes >= 1))
TORUS_REDUCE_SCATTER = Formula(t_coll, TORUS_ALL_GATHER.rhs,
                               source="scaling book sharding.md: the transpose of an AllGather, same cost",
                               domain=TORUS_ALL_GATHER.domain)
TORUS_ALL_REDUCE = Formula(t_coll, 2 * TORUS_ALL_GATHER.rhs,
                           source="scaling book sharding.md: AllReduce = ReduceScatter + AllGather",
                           domain=TORUS_ALL_GATHER.domain)
TORUS_ALL_TO_ALL = Formula(t_coll, bytes_msg * n_long / (8 * n_ring * w_link),
                           source=f"scaling book sharding.md ({SCALING_BOOK}/sharding): AllToAll on a torus, "
                                  "V max(A,B,C) / (4 N W_ici) with W_ici = 2w; on a ring (n_long = N) V / (4 W_ici)",
                           domain=sp.And(n_ring >= 1, n_long >= 1))
RING = {"allgather": TORUS_ALL_GATHER.rhs.subs(n_axes, 1), "reducescatter": TORUS_REDUCE_SCATTER.rhs.subs(n_axes, 1),
        "allreduce": TORUS_ALL_REDUCE.rhs.subs(n_axes, 1), "alltoall": TORUS_ALL_TO_ALL.rhs.subs(n_long, n_ring)}
"""A bidirectional ring of N as SymPy expressions: the torus with one axis of length N."""
RING_ALL_TO_ALL = Formula(t_coll, RING["alltoall"],
                          source="scaling book sharding.md: AllToAll on a bidirectional ring, V / (4 W_ici); "
                                 "N cancels")
TORUS = {"allgather": TORUS_ALL_GATHER, "reducescatter": TORUS_REDUCE_SCATTER, "allreduce": TORUS_ALL_REDUCE,
         "alltoall": TORUS_ALL_TO_ALL}
SWITCH = {"allgather": ALL_GATHER, "reducescatter": REDUCE_SCATTER, "allreduce": ALL_REDUCE,
          "alltoall": ALL_TO_ALL}
TOPOLOGIES = ("switch", "ring", "torus")
KINDS = tuple(SWITCH)
#: Torus axes of each TPU generation (scaling book tpus.md: v4 and v5p are 3-D tori with 6 neighbours,
#: v5e and v6e 2-D with 4; TPU7x pods are 4 x 4 x 576).
TORUS_AXES = {"TPU v4p": 3, "TPU v5p": 3, "TPU v5e": 2, "TPU v6e": 2, "TPU7x": 3}


def _dims(topology: str, dims) -> tuple[int, ...]:
    if isinstance(dims, (int, float)) and not isinstance(dims, bool):
        dims = (dims,)
    if not isinstance(dims, (list, tuple)) or not dims:
        raise ValueError(f"dims must be a device count or a tuple of axis lengths, got {validate._describe(dims)}")
    dims = tuple(validate.integer(f"dims[{i}]", d, maximum=10**6) for i, d in enumerate(dims))
    if topology in ("switch", "ring") and len(dims) != 1:
        raise ValueError(f"dims must be one device count for a {topology}, got {dims}")
    if topology == "torus" and len(dims) > 3:
        raise ValueError(f"dims must list 1 to 3 torus axes, got {dims}")
    return dims


def collective_time(kind: str, *, dims, bytes_total, link_bandwidth, topology: str = "switch", hop_latency=0.0) -> float:
    """Seconds for one collective of ``bytes_total`` bytes on a switch, ring or torus.

    ``topology`` is "switch" (``dims`` = N devices, ``link_bandwidth`` = one device's one-direction
    egress W, :mod:`lecture_lib.collectives`' formulas), "ring" (N devices in a bidirectional ring,
    ``link_bandwidth`` = w of one link one way) or "torus" (``dims`` = axis lengths, e.g. (16, 16) or
    (4, 4, 4), w per link; tori with axes of unequal length use the longest for AllToAll and
    ``len(dims)`` axes for the rest, the scaling book's forms). ``hop_latency`` adds α per sequential
    step: N − 1 (2(N − 1) for AllReduce) on a switch's ring algorithm, Σ n_i / 2 hops on a ring or torus.
    """
    validate.choice("kind", kind, list(KINDS))
    validate.choice("topology", topology, list(TOPOLOGIES))
    dims = _dims(topology, dims)
    bytes_total = validate.scalar("bytes_total", bytes_total, allow_zero=True)
    link_bandwidth = validate.scalar("link_bandwidth", link_bandwidth)
    hop_latency = validate.scalar("hop_latency", hop_latency, allow_zero=True)
    n = math.prod(dims)
    if n == 1:
        return 0.0
    names = {"bytes_msg": "bytes_total", "n_ring": "dims"}
    if topology == "switch":
        bandwidth = SWITCH[kind](bytes_msg=bytes_total, n_ring=n, bw_link=link_bandwidth, allow_zero="bytes_msg",
                                 called_as={**names, "bw_link": "link_bandwidth"})
        steps = {"allreduce": 2 * (n - 1)}.get(kind, n - 1)
    else:
        formula = TORUS[kind]
        values = {"bytes_msg": bytes_total, "n_ring": n, "w_link": link_bandwidth}
        if kind == "alltoall":
            values["n_long"] = max(dims)
        else:
            values["n_axes"] = len(dims)
        names.update({"w_link": "link_bandwidth", "n_long": "dims", "n_axes": "dims"})
        bandwidth = formula(**values, allow_zero="bytes_msg",
                            called_as={k: v for k, v in names.items() if k in formula.input_names})
        steps = sum(d // 2 for d in dims) * (2 if kind == "allreduce" else 1)
    # Each term is finite, but the latency of many steps can overflow their sum (hop_latency=1e308).
    return validate.finite_result("collective_time()", bandwidth + steps * hop_latency, hop_latency=hop_latency,
                                  dims=dims, bytes_total=bytes_total, link_bandwidth=link_bandwidth)


def ring_all_to_all_hops(n: int) -> int:
    """Link-hops of one AllToAll on a bidirectional ring of ``n``, counted chunk by chunk.

    Every device sends one chunk to each of the other ``n − 1`` by the shorter way round; the total
    of the distances, over all senders, is what the ``2 n`` directed links carry. With chunks of
    ``V/n²`` bytes the time is ``hops · V / (n² · 2n · w)`` on evenly loaded links; this equals
    :data:`RING_ALL_TO_ALL` exactly for even ``n`` and is ``(n² − 1)/n²`` of it for odd ``n``.
    """
    n = validate.integer("n", n, maximum=10**6)
    # A ring looks the same from every device, so one sender's distances, summed, times the n senders:
    # n steps of counting instead of n², so n = 10**6 still answers at once.
    return n * sum(min(d, n - d) for d in range(1, n))


def sharded_collective_time(kind: str, *, bytes_total, inner_shards: int, levels) -> float:
    """A collective over the outer axis of an array already sharded ``inner_shards`` (Y) ways inside it.

    ``levels`` are the hardware levels from the inside out, as ``collectives.collective_time`` takes them
    (``Deployment.levels``: chips per node at one chip's egress, nodes at one node's egress). Level i's
    time is its switched time for the whole array times ``S_{i−1} / max(Y, S_{i−1})``, where ``S_{i−1}``
    is the number of chips below one unit of level i (1 for the first): the scaling book's
    ``bytes · max_i (D_i − 1) / (D_i · max(Y, S_{i−1}) · W_link,i)`` (gpus.md, "Reductions when array is
    sharded over a separate axis", with W_link,i per chip). Y inside one node helps the node level only;
    Y spanning nodes divides the network's time by Y / (chips per node).
    """
    validate.choice("kind", kind, list(KINDS))
    bytes_total = validate.scalar("bytes_total", bytes_total, allow_zero=True)
    inner = validate.integer("inner_shards", inner_shards)
    if (not isinstance(levels, (list, tuple)) or not levels
            or not all(isinstance(level, (list, tuple)) and len(level) == 2 for level in levels)):
        raise ValueError(f"levels must list at least one (devices, bytes_per_s) pair, got {validate._describe(levels)}")
    worst, below = 0.0, 1
    for i, (devices, bandwidth) in enumerate(levels):
        devices = validate.integer(f"levels[{i}] devices", devices)
        bandwidth = validate.scalar(f"levels[{i}] bytes_per_s", bandwidth)
        if devices > 1 and bytes_total > 0:
            full = SWITCH[kind](bytes_msg=bytes_total, n_ring=devices, bw_link=bandwidth,
                                called_as={"bytes_msg": "bytes_total", "n_ring": f"levels[{i}] devices",
                                           "bw_link": f"levels[{i}] bytes_per_s"})
            worst = max(worst, full * below / max(inner, below))
        below *= devices
    return worst


def chip_topology(chip, n_chips: int, *, dims=None) -> dict:
    """The topology a chip's scale-up domain gives ``n_chips`` of it: ``{"topology", "dims", "link_bandwidth"}``.

    NVIDIA chips sit on NVSwitch: a switch of ``n_chips`` at the chip's one-direction egress. A TPU is a
    torus of ``TORUS_AXES`` axes; pass ``dims`` (e.g. (16, 16) for a v5e-256), else a ring of ``n_chips``.
    The per-link bandwidth w is the chip's one-direction total over its ``2 n_axes`` links
    (hardware.Chip.scale_up_bandwidth sums every port).
    """
    from . import hardware

    chip = hardware.resolve_chip(chip)
    n_chips = validate.integer("n_chips", n_chips, maximum=chip.scale_up_domain)
    axes = TORUS_AXES.get(chip.name)
    if axes is None:
        if dims is not None:
            raise ValueError(f"dims is only for a TPU torus; {chip.name} sits on a switch")
        return {"topology": "switch", "dims": (n_chips,), "link_bandwidth": chip.scale_up_bandwidth}
    shape = (n_chips,) if dims is None else _dims("torus", dims)
    if math.prod(shape) != n_chips:
        raise ValueError(f"dims must multiply to n_chips={n_chips}, got {shape}")
    return {"topology": "torus" if len(shape) > 1 else "ring", "dims": shape,
            "link_bandwidth": chip.scale_up_bandwidth / (2 * axes)}
