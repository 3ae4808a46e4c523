"""Topology: switched node, ring and torus collectives, and collectives over an already sharded axis."""

import pytest
import sympy as sp

from lecture_lib import collectives, formula, topology
from lecture_lib.symbols import bytes_msg, n_axes, n_long, n_ring, w_link

V = 1e9


@pytest.mark.parametrize("n", [2, 4, 6, 8, 16, 64])
def test_ring_all_to_all_equals_a_chunk_by_chunk_hop_count_for_even_rings(n):
    counted = topology.ring_all_to_all_hops(n) * (V / n**2) / (2 * n * 1e9)   # hop-bytes over 2n directed links
    assert topology.collective_time("alltoall", topology="ring", dims=n, bytes_total=V, link_bandwidth=1e9) == \
        pytest.approx(counted)


@pytest.mark.parametrize("n", [3, 5, 7, 15])
def test_odd_rings_are_n2_minus_1_over_n2_of_the_books_form(n):
    counted = topology.ring_all_to_all_hops(n) * (V / n**2) / (2 * n * 1e9)
    book = topology.collective_time("alltoall", topology="ring", dims=n, bytes_total=V, link_bandwidth=1e9)
    assert counted == pytest.approx(book * (n**2 - 1) / n**2)


def test_hop_counts_by_hand():
    assert topology.ring_all_to_all_hops(4) == 4 * (1 + 2 + 1)
    assert topology.ring_all_to_all_hops(5) == 5 * (1 + 2 + 2 + 1)


@pytest.mark.parametrize("n", [4, 8, 16, 64])
def test_on_a_ring_all_to_all_is_about_n_over_4_slower_than_on_a_switch_of_the_same_egress(n):
    switch = topology.collective_time("alltoall", topology="switch", dims=n, bytes_total=V, link_bandwidth=2e9)
    ring = topology.collective_time("alltoall", topology="ring", dims=n, bytes_total=V, link_bandwidth=1e9)
    assert ring / switch == pytest.approx(n**2 / (4 * (n - 1)))
    # ... while the neighbour-only collectives cost the same on both
    for kind in ("allgather", "reducescatter", "allreduce"):
        assert topology.collective_time(kind, topology="ring", dims=n, bytes_total=V, link_bandwidth=1e9) == \
            pytest.approx(topology.collective_time(kind, topology="switch", dims=n, bytes_total=V, link_bandwidth=2e9))


def test_bidirectional_ring_all_gather_by_hand():
    """Odd ring of 7: (7-1)/2 = 3 steps, each forwarding one V/7 shard each way over a link of w."""
    by_hand = 3 * (V / 7) / 1e9
    assert topology.collective_time("allgather", topology="ring", dims=7, bytes_total=V, link_bandwidth=1e9) == \
        pytest.approx(by_hand)


def test_a_ring_is_a_torus_with_one_axis_and_the_books_limits():
    for kind in topology.KINDS:
        one_axis = topology.TORUS[kind].rhs.subs({n_axes: 1, n_long: n_ring})
        assert formula.same(one_axis, topology.RING[kind])
    w_ici = 2 * w_link                          # the book's bidirectional link bandwidth
    assert sp.limit(topology.TORUS_ALL_GATHER.rhs, n_ring, sp.oo) == bytes_msg / (n_axes * w_ici)
    assert formula.same(topology.TORUS_ALL_TO_ALL.rhs, bytes_msg * n_long / (4 * n_ring * w_ici))
    assert formula.same(topology.RING_ALL_TO_ALL, bytes_msg / (4 * w_ici))


def test_torus_figures_for_a_v5e_256_slice():
    """16 x 16 torus, w = 50 GB/s per link one way (Google: 4 ports, 400 GB/s both ways per chip)."""
    t = topology.chip_topology("TPU v5e", 256, dims=(16, 16))
    assert t == {"topology": "torus", "dims": (16, 16), "link_bandwidth": 50e9}
    ag = topology.collective_time("allgather", topology="torus", dims=(16, 16), bytes_total=V, link_bandwidth=50e9)
    assert ag == pytest.approx(V * 255 / 256 / (2 * 2 * 50e9))
    a2a = topology.collective_time("alltoall", topology="torus", dims=(16, 16), bytes_total=V, link_bandwidth=50e9)
    assert a2a == pytest.approx(V * 16 / (4 * 256 * 100e9))          # book: V max(A,B) / (4 N W_ici)
    slow = topology.collective_time("allgather", topology="torus", dims=(16, 16), bytes_total=V, link_bandwidth=50e9,
                                    hop_latency=collectives.TPU_ICI_HOP_LATENCY)
    assert slow - ag == pytest.approx((8 + 8) * 1e-6)                  # sum of n_i / 2 hops of ~1 us (tpus.md)


def test_switch_is_the_collectives_module():
    for kind in topology.KINDS:
        assert topology.collective_time(kind, topology="switch", dims=8, bytes_total=V, link_bandwidth=450e9) == \
            collectives.collective_time(kind, bytes_total=V, levels=[(8, 450e9)])
    t = topology.chip_topology("H100", 8)
    assert t == {"topology": "switch", "dims": (8,), "link_bandwidth": 450e9}


def test_sharded_collective_reproduces_the_scaling_books_pop_quiz():
    """gpus.md Pop Quiz 3: AllGather_X(bf16[D_X, F_Y]) on one SU of 32 nodes; D = 8192, F = 32768."""
    d, f = 8192, 32768
    levels = [(8, 450e9), (32, 400e9)]          # per-GPU NVLink egress, per-node network egress
    inner = topology.sharded_collective_time("allgather", bytes_total=2 * d * f, inner_shards=1, levels=levels)
    assert inner == collectives.collective_time("allgather", bytes_total=2 * d * f, levels=levels)
    for y in (2, 4, 8):                          # Y inside a node: the leaf is still the bottleneck
        got = topology.sharded_collective_time("allgather", bytes_total=2 * d * f, inner_shards=y, levels=levels)
        assert got == pytest.approx(2 * d * f * 31 / (32 * 400e9))
    for y in (16, 64):                           # Y spanning nodes: 2DF / (Y 50 GB/s), with the ring's 31/32
        got = topology.sharded_collective_time("allgather", bytes_total=2 * d * f, inner_shards=y, levels=levels)
        assert got == pytest.approx(2 * d * f * 31 / 32 / (y * 50e9))


def test_bad_topology_input_names_the_parameter():
    kw = dict(bytes_total=V, link_bandwidth=1e9)
    for call, name in [(lambda: topology.collective_time("allgather", topology="mesh", dims=8, **kw), "topology"),
                       (lambda: topology.collective_time("allgather", topology="ring", dims=(4, 4), **kw), "dims"),
                       (lambda: topology.collective_time("allgather", topology="torus", dims=(2, 2, 2, 2), **kw), "dims"),
                       (lambda: topology.collective_time("allgather", topology="torus", dims=(4, 0), **kw), "dims"),
                       (lambda: topology.collective_time("gather", topology="ring", dims=4, **kw), "kind"),
                       (lambda: topology.collective_time("allgather", topology="ring", dims=4, bytes_total=V,
                                                         link_bandwidth=0), "link_bandwidth"),
                       (lambda: topology.sharded_collective_time("allgather", bytes_total=V, inner_shards=0,
                                                                 levels=[(8, 1e9)]), "inner_shards"),
                       (lambda: topology.sharded_collective_time("allgather", bytes_total=V, inner_shards=2,
                                                                 levels=[]), "levels"),
                       (lambda: topology.chip_topology("TPU v5e", 256, dims=(16, 8)), "dims"),
                       (lambda: topology.chip_topology("H100", 8, dims=(2, 4)), "dims"),
                       (lambda: topology.chip_topology("H100", 16), "n_chips"),
                       (lambda: topology.ring_all_to_all_hops(0), "n")]:
        with pytest.raises(ValueError, match=name):
            call()
    assert topology.collective_time("alltoall", topology="torus", dims=(1, 1), **kw) == 0
