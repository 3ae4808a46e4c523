"""Collective latency (the α–β form), the exact ring figures beside the rules of thumb, and Deployment's checks."""

import pytest
import sympy as sp

from lecture_lib import collectives, formula, hardware, models, roofline
from lecture_lib.symbols import alpha_base, alpha_step, n_ring


def test_nccl_figures_are_the_tuning_table_of_nccl():
    """NVIDIA/nccl src/graph/tuning.cc, ncclTunerConstantsDefaults: ring base 6.6/14/8.4 µs, NVLink 0.6/1.9/3.4,
    network 2.7/4.0/14 (LL/LL128/Simple)."""
    assert collectives.nccl_latency() == (6.6e-6, 0.6e-6)
    assert collectives.nccl_latency("nvlink", "Simple") == (8.4e-6, 3.4e-6)
    assert collectives.nccl_latency("network", "LL128") == (14.0e-6, 4.0e-6)


def test_an_empty_eight_gpu_all_reduce_costs_fifteen_microseconds_by_hand():
    base, hop = collectives.nccl_latency()
    by_hand = 6.6e-6 + 2 * (8 - 1) * 0.6e-6          # NCCL: base + nsteps x hw latency, nsteps = 2 (nRanks - 1)
    got = collectives.collective_latency_time("allreduce", bytes_total=0, n_devices=8, link_bandwidth=450e9,
                                              hop_latency=hop, base_latency=base)
    assert got == pytest.approx(by_hand) and got == pytest.approx(15e-6)
    gather = collectives.collective_latency_time("allgather", bytes_total=1e6, n_devices=8, link_bandwidth=450e9,
                                                 hop_latency=hop, base_latency=base)
    assert gather == pytest.approx(6.6e-6 + 7 * 0.6e-6 + 1e6 * 7 / 8 / 450e9)


def test_alpha_beta_without_latency_is_the_bandwidth_formula():
    for kind, ab in collectives.ALPHA_BETA.items():
        assert formula.same(ab.rhs.subs({alpha_base: 0, alpha_step: 0}), collectives.KINDS[kind].rhs)
    steps = sp.diff(collectives.ALPHA_BETA["allreduce"].rhs, alpha_step)
    assert sp.simplify(steps - 2 * (n_ring - 1)) == 0


def test_tp_all_reduce_with_latency_against_a_hand_count():
    m = models.get("llama-3-70b")                       # 80 layers, d_model 8192
    base, hop = collectives.nccl_latency()
    bandwidth = 2 * 80 * (2 * (4 * 8192 * 2) * 7 / 8 / 450e9)
    latency = 2 * 80 * (base + 2 * 7 * hop)
    got = collectives.tp_all_reduce_time(m, tp=8, batch_tokens=4, bytes_per_value=2, link_bandwidth=450e9,
                                         hop_latency=hop, base_latency=base)
    assert got == pytest.approx(bandwidth + latency)
    assert collectives.tp_all_reduce_time(m, tp=8, batch_tokens=4, bytes_per_value=2, link_bandwidth=450e9) == \
        pytest.approx(bandwidth)
    assert collectives.tp_all_reduce_time(m, tp=1, batch_tokens=4, bytes_per_value=2, link_bandwidth=450e9,
                                          hop_latency=hop, base_latency=base) == 0


@pytest.mark.parametrize("name", ["llama-3-70b", "llama-3-405b"])
def test_at_one_to_eleven_sequences_the_alpha_term_dominates(name):
    """TP 8 on an HGX H200: the bandwidth term is tens to hundreds of µs, NCCL's latency term milliseconds."""
    m = models.get(name)
    base, hop = collectives.nccl_latency()
    node = collectives.deployment(hardware.get_system("HGX H200"))
    for batch in (1, 11):
        kw = dict(tp=8, batch_tokens=batch, bytes_per_value=2, link_bandwidth=hardware.get("H200").scale_up_bandwidth)
        bandwidth_only = collectives.tp_all_reduce_time(m, **kw)
        with_latency = collectives.tp_all_reduce_time(m, **kw, hop_latency=hop, base_latency=base)
        latency = with_latency - bandwidth_only
        assert latency > 10 * bandwidth_only
        step = roofline.decode_bound(m, node, batch=batch, len_ctx=2048, weight_dtype="fp8", kv_dtype="fp8")["t"]
        assert bandwidth_only < 0.06 * step                 # invisible without α ...
        assert latency > 0.3 * step                         # ... a third of the step or more with it


def test_latency_inputs_are_checked():
    base, hop = collectives.nccl_latency()
    with pytest.raises(ValueError, match="kind"):
        collectives.collective_latency_time("alltoall", bytes_total=1, n_devices=8, link_bandwidth=1e9, hop_latency=hop)
    with pytest.raises(ValueError, match="hop_latency"):
        collectives.collective_latency_time("allreduce", bytes_total=1, n_devices=8, link_bandwidth=1e9, hop_latency=-1)
    with pytest.raises(ValueError, match="base_latency"):
        collectives.tp_all_reduce_time("llama-3-70b", tp=8, batch_tokens=1, bytes_per_value=2, link_bandwidth=1e9,
                                       base_latency=float("nan"))
    with pytest.raises(ValueError, match="link"):
        collectives.nccl_latency("pcie")
    with pytest.raises(ValueError, match="protocol"):
        collectives.nccl_latency("nvlink", "ll")
    assert collectives.collective_latency_time("allgather", bytes_total=1e9, n_devices=1, link_bandwidth=1e9,
                                               hop_latency=hop) == 0


def test_exact_ring_figures_beside_the_rules_of_thumb():
    """An 8-GPU H100 node gives 7/8 of the scaling book's ~2200: 1,924 tokens per GPU; TP 8 needs d_ff/8 > 1,924."""
    h100 = hardware.get("H100")
    c, w = h100.flops["bf16"], h100.scale_up_bandwidth
    assert round(collectives.dp_critical_batch(dp=8, flops=c, link_bandwidth=w)) == 1924
    assert round(c / w) == 2199
    assert collectives.tp_critical_d_ff(tp=8, flops=c, link_bandwidth=w) / 8 == pytest.approx(1924, abs=0.5)
    assert round(collectives.tp_critical_d_ff(tp=8, flops=c, link_bandwidth=w, matrices=3), -1) == 10260
    for text in (collectives.dp_critical_batch.__doc__, collectives.tp_critical_d_ff.__doc__):
        assert "1,924" in text


def test_deployment_constructor_checks_its_fields():
    h100 = hardware.get("H100")
    assert collectives.Deployment("8 x H100", h100, 8, 1).n_chips == 8
    assert collectives.Deployment("16 x H100", h100, 8.0, 2).chips_per_domain == 8
    for args, name in [(("x", "H100", 8, 1), "chip"), (("x", h100, 9, 1), "chips_per_domain"),
                       (("x", h100, 0, 1), "chips_per_domain"), (("x", h100, 8, 0), "n_domains"),
                       (("x", h100, 8, 1.5), "n_domains"), (("x", h100, 8, float("nan")), "n_domains"),
                       (("", h100, 8, 1), "name"), ((None, h100, 8, 1), "name"), (("x", h100, True, 1), "chips_per_domain")]:
        with pytest.raises(ValueError, match=name):
            collectives.Deployment(*args)
