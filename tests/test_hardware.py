"""Tests for lecture_lib.hardware: golden numbers against published figures, lookups, invariants.

Golden values name their source; tolerances cover the rounding the sources themselves use
(scaling book 9.9e14 vs 989.4e12, 3.35 vs 3.4 TB/s, and so on).
"""

import dataclasses
import re
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lecture_lib import hardware

REQUIRED_CHIPS = ["A100", "H100", "H200", "B200", "GB200", "Rubin",
                  "TPU v4p", "TPU v5e", "TPU v5p", "TPU v6e", "TPU7x"]
REQUIRED_SYSTEMS = ["HGX H100", "HGX B200", "GB200 NVL72", "Vera Rubin NVL144",
                    "TPU v5e-256", "TPU v5p pod", "TPU v6e-256", "TPU7x pod"]


def rel(a, b):
    return abs(a - b) / abs(b)


# --- Golden numbers -------------------------------------------------------------------------

def test_h100_bf16_ratio_295_scaling_book_ch1_q5_and_lecture_notes():
    # 989 TF -> 494.5e12 MAC/s x 2 B / 3.35 TB/s ≈ 295 (scaling book Ch1 Q5, Ch12 Q3)
    assert rel(hardware.get("H100").ops_per_byte("bf16"), 295) < 0.02


def test_h100_fp8_weights_give_590_per_byte_scaling_book_ch12_q3():
    # Ch12 Q3 quotes 590 for fp8 *compute* with bf16-sized accounting; here: fp8 MACs x 2 B
    h100 = hardware.get("H100")
    assert rel(h100.ops_per_byte("fp8", bytes_per_value=2), 590) < 0.02


def test_b200_fp4_ratio_281_scaling_book_ch12_q3():
    # 9 PF dense FP4 = 4.5e15 MAC/s x 0.5 B / 8 TB/s = 281
    assert rel(hardware.get("B200").ops_per_byte("fp4"), 281) < 0.03


def test_gb200_fp4_ratio_about_312_lecture_notes_hardware_ratio_check():
    # ≈10 PF dense FP4 per GPU (NVL72 1,440 PF sparse / 72 / 2) over 8 TB/s -> ≈312
    assert rel(hardware.get("GB200").ops_per_byte("fp4"), 312) < 0.03


def test_a100_bf16_ratio_153_on_the_80gb_sxm_part_lecture_notes():
    a100 = hardware.get("A100")
    assert a100.hbm_bandwidth == pytest.approx(2.039e12)  # NVIDIA A100 80GB SXM datasheet
    assert rel(a100.ops_per_byte("bf16"), 153) < 0.02


def test_h100_drain_time_24_ms_lecture_notes():
    # 80 GB / 3.35 TB/s ≈ 23.9 ms, the "≈ 20 ms" rule of thumb (lecture 00:23:43)
    assert hardware.get("H100").hbm_drain_time == pytest.approx(23.9e-3, rel=0.02)


def test_rubin_drain_time_vendor_22_tbs_and_lecture_20_tbs():
    rubin = hardware.get("Rubin")
    assert rubin.hbm_capacity == pytest.approx(288e9)
    # stored vendor figure (NVIDIA, CES 2026): 288 GB / 22 TB/s ≈ 13.1 ms
    assert rubin.hbm_drain_time == pytest.approx(rubin.hbm_capacity / rubin.hbm_bandwidth)
    assert 12e-3 < rubin.hbm_drain_time < 15e-3
    # the lecture's board figure (00:24:00): 288 GB / 20 TB/s = 14.4 ms
    board = dataclasses.replace(rubin, hbm_bandwidth=20e12)
    assert board.hbm_drain_time == pytest.approx(14.4e-3, rel=1e-9)
    assert "20 TB/s" in rubin.notes


def test_gb200_nvl72_rack_totals_match_nvidia_spec():
    nvl72 = hardware.get_system("GB200 NVL72")
    assert nvl72.n_chips == 72
    assert rel(nvl72.hbm_bandwidth, 576e12) < 0.01          # NVIDIA: 576 TB/s
    assert 13e12 <= nvl72.hbm_capacity <= 14e12             # NVIDIA: 13.4 TB (lecture notes: 13.4-13.5)
    assert rel(2 * nvl72.scale_up_bandwidth, 130e12) < 0.02  # NVIDIA: 130 TB/s counts both directions
    assert rel(nvl72.flops["fp4"], 1440e15 / 2) < 0.01      # 1,440 PF sparse = 720 PF dense


def test_vera_rubin_rack_totals_nvidia_ces_2026():
    rack = hardware.get_system("Vera Rubin NVL144")
    assert rack.n_chips == 72                               # 72 packages, 144 dies
    assert rel(rack.hbm_capacity, 20.7e12) < 0.01           # 20.7 TB HBM4
    assert rel(2 * rack.scale_up_bandwidth, 260e12) < 0.01  # 260 TB/s NVLink 6


def test_hgx_h100_holds_640_gb_dgx_h100():
    assert hardware.get_system("HGX H100").hbm_capacity == pytest.approx(640e9)


def test_hgx_b200_matches_dgx_b200_datasheet():
    # DGX B200: 1,440 GB, 64 TB/s, FP4 72 PF dense
    box = hardware.get_system("HGX B200")
    assert box.hbm_capacity == pytest.approx(1440e9)
    assert box.hbm_bandwidth == pytest.approx(64e12)
    assert box.flops["fp4"] == pytest.approx(72e15)


@pytest.mark.parametrize("system, all_reduce", [("TPU v5e-256", 51.2e12), ("TPU v6e-256", 102.4e12)])
def test_tpu_pod_ici_totals_match_google_all_reduce_bandwidth(system, all_reduce):
    # cloud.google.com/tpu/docs/v5e and v6e: "All-reduce bandwidth per Pod" 51.2 / 102.4 TB/s
    assert hardware.get_system(system).scale_up_bandwidth == pytest.approx(all_reduce)


@pytest.mark.parametrize("name, bf16, hbm_bw, hbm_gb, pod", [
    # scaling book tpus.md "TPU specs" table (2026 revision); tolerance covers 9.18 vs 9.20e14 etc.
    ("TPU v4p", 2.75e14, 1.2e12, 32, 4096),
    ("TPU v5e", 1.97e14, 8.2e11, 16, 256),
    ("TPU v5p", 4.59e14, 2.8e12, 96, 8960),
    ("TPU v6e", 9.20e14, 1.6e12, 32, 256),
    ("TPU7x", 2.30e15, 7.4e12, 192, 9216),
])
def test_tpus_agree_with_scaling_book_table(name, bf16, hbm_bw, hbm_gb, pod):
    chip = hardware.get(name)
    assert rel(chip.flops["bf16"], bf16) < 0.01
    assert rel(chip.hbm_bandwidth, hbm_bw) < 0.03
    assert rel(chip.hbm_capacity, hbm_gb * 1e9) < 0.02
    assert chip.scale_up_domain == pod


@pytest.mark.parametrize("name, bf16, hbm_bw, hbm_gb", [
    # scaling book gpus.md "Summary of GPU specs" (B200 capacity there is the 192 GB physical part)
    ("A100", 3.1e14, 2.0e12, 80),
    ("H100", 9.9e14, 3.35e12, 80),
    ("H200", 9.9e14, 4.8e12, 141),
    ("B200", 2.25e15, 8.0e12, 180),
])
def test_gpus_agree_with_scaling_book_table(name, bf16, hbm_bw, hbm_gb):
    chip = hardware.get(name)
    assert rel(chip.flops["bf16"], bf16) < 0.01
    assert rel(chip.hbm_bandwidth, hbm_bw) < 0.02
    assert rel(chip.hbm_capacity, hbm_gb * 1e9) < 0.01


@pytest.mark.parametrize("name, nvlink_one_way, domain", [
    ("H100", 450e9, 8), ("B200", 900e9, 8), ("GB200", 900e9, 72), ("Rubin", 1.8e12, 72),
])
def test_nvlink_one_direction_and_domains(name, nvlink_one_way, domain):
    chip = hardware.get(name)
    assert chip.scale_up_bandwidth == pytest.approx(nvlink_one_way)
    assert chip.scale_up_domain == domain


def test_h100_scale_out_is_one_400g_nic_per_gpu():
    assert hardware.get("H100").scale_out_bandwidth == pytest.approx(400e9 / 8)


# --- Names and lookups -----------------------------------------------------------------------

def test_all_required_names_present_in_a_stable_vendor_then_generation_order():
    names = hardware.chip_names()
    assert set(REQUIRED_CHIPS) <= set(names)
    assert names == list(hardware.CHIPS) == [c.name for c in hardware.CHIPS.values()]
    assert names.index("A100") < names.index("H100") < names.index("B200") < names.index("Rubin")
    assert names.index("Rubin") < names.index("TPU v4p") < names.index("TPU v5e") < names.index("TPU7x")
    assert set(REQUIRED_SYSTEMS) <= set(hardware.system_names())
    assert hardware.system_names() == list(hardware.SYSTEMS)
    assert hardware.chip_names() is not hardware.chip_names()  # callers may mutate their copy


@pytest.mark.parametrize("spelling, canonical", [
    ("tpu-v5e", "TPU v5e"), ("TPU V5E", "TPU v5e"), ("tpuv5e", "TPU v5e"), ("tpu_v5e", "TPU v5e"),
    (" TPU v5e ", "TPU v5e"), ("Ironwood", "TPU7x"), ("tpu7x", "TPU7x"), ("Trillium", "TPU v6e"),
    ("TPU v4", "TPU v4p"), ("tpu-v4p", "TPU v4p"), ("h100", "H100"), ("gb-200", "GB200"),
    ("Vera Rubin", "Rubin"),
])
def test_chip_name_normalisation(spelling, canonical):
    assert hardware.get(spelling) is hardware.CHIPS[canonical]
    assert hardware.get(spelling).name == canonical


@pytest.mark.parametrize("spelling, canonical", [
    ("gb200-nvl72", "GB200 NVL72"), ("Vera Rubin NVL72", "Vera Rubin NVL144"),
    ("tpu v5e 256", "TPU v5e-256"), ("DGX H100", "HGX H100"), ("tpu7x_pod", "TPU7x pod"),
])
def test_system_name_normalisation(spelling, canonical):
    assert hardware.get_system(spelling) is hardware.SYSTEMS[canonical]


def test_unknown_chip_keyerror_lists_every_known_name():
    with pytest.raises(KeyError) as info:
        hardware.get("Z100")
    message = str(info.value)
    assert "Z100" in message
    for name in hardware.chip_names():
        assert name in message


def test_unknown_system_keyerror_lists_every_known_name():
    with pytest.raises(KeyError) as info:
        hardware.get_system("H100")  # a chip, not a system
    for name in hardware.system_names():
        assert name in str(info.value)


@pytest.mark.parametrize("name", ["GB300 NVL72", "gb200-nvl72", "NVL72", "TPU v5e-256"])
def test_a_systems_name_given_to_the_chip_lookup_points_to_get_system(name):
    """Issue 31: hardware.get("GB300 NVL72") in a work cell raised a KeyError that only listed chips."""
    for lookup in (hardware.get, hardware.resolve_chip):
        with pytest.raises(KeyError) as info:
            lookup(name)
        message = str(info.value)
        assert f"hardware.get_system({name!r})" in message and "names a system" in message
        assert all(chip in message for chip in hardware.chip_names())


@pytest.mark.parametrize("name", ["H100", "gb300", "TPU v5e"])
def test_a_chips_name_given_to_the_system_lookup_points_to_get(name):
    for lookup in (hardware.get_system, hardware.resolve_system):
        with pytest.raises(KeyError) as info:
            lookup(name)
        assert f"hardware.get({name!r})" in str(info.value) and "names a chip" in str(info.value)


def test_a_name_known_nowhere_gets_no_pointer():
    for lookup in (hardware.get, hardware.get_system):
        with pytest.raises(KeyError) as info:
            lookup("Z100")
        assert "hardware.get" not in str(info.value) and "names a" not in str(info.value)


@pytest.mark.parametrize("bad", [None, 100, b"H100", ["H100"]])
def test_non_string_names_are_refused_with_the_parameter_named(bad):
    with pytest.raises((TypeError, ValueError), match="name"):
        hardware.get(bad)
    with pytest.raises((TypeError, ValueError), match="name"):
        hardware.get_system(bad)


# --- Data integrity --------------------------------------------------------------------------

@pytest.mark.parametrize("chip", hardware.CHIPS.values(), ids=hardware.chip_names())
def test_every_field_has_a_dated_source(chip):
    for field in hardware.SOURCED_FIELDS:
        source = chip.sources[field]
        assert isinstance(source, str) and len(source) > 20, field
        assert re.search(r"20\d\d", source), f"{chip.name}.{field} source has no date"
    if chip.price_per_hour is None:
        assert "no public" in chip.sources["price_per_hour"]


@pytest.mark.parametrize("chip", hardware.CHIPS.values(), ids=hardware.chip_names())
def test_flops_keys_allowed_read_only_and_positive(chip):
    assert set(chip.flops) <= set(hardware.BYTES_PER_VALUE)
    assert all(v > 0 for v in chip.flops.values())
    with pytest.raises(TypeError):
        chip.flops["bf16"] = 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        chip.hbm_bandwidth = 1.0


@pytest.mark.parametrize("name, fmt, dense", [
    # datasheets print 2:4-sparse peaks (H100 "1,979" bf16, B200 "18 PF" fp4); only half is stored
    ("H100", "bf16", 989.4e12), ("H100", "fp8", 1978.9e12), ("B200", "fp4", 9e15),
    ("GB200", "fp4", 10e15), ("A100", "bf16", 312e12),
])
def test_dense_not_sparse_peaks(name, fmt, dense):
    assert hardware.get(name).flops[fmt] == pytest.approx(dense)


@pytest.mark.parametrize("name", ["A100", "TPU v4p", "TPU v5e", "TPU v5p", "TPU v6e"])
def test_no_fp8_where_the_hardware_has_none(name):
    chip = hardware.get(name)
    assert "fp8" not in chip.flops
    with pytest.raises(ValueError, match=r"fp8.*bf16|bf16.*fp8"):
        chip.ops_per_byte("fp8")


@pytest.mark.parametrize("name", ["A100", "H100", "H200", "TPU v4p", "TPU7x"])
def test_no_fp4_before_blackwell(name):
    assert "fp4" not in hardware.get(name).flops


def test_bytes_per_value_is_exported_and_read_only():
    assert dict(hardware.BYTES_PER_VALUE) == {"fp32": 4, "bf16": 2, "fp8": 1, "int8": 1, "fp4": 0.5}
    with pytest.raises(TypeError):
        hardware.BYTES_PER_VALUE["fp4"] = 0.5625


def test_format_errors_name_the_format_and_what_is_available():
    h100 = hardware.get("H100")
    with pytest.raises(ValueError, match="fp4") as info:
        h100.macs("fp4")
    assert "bf16" in str(info.value) and "fp8" in str(info.value)
    with pytest.raises(ValueError, match="fp16"):
        h100.ops_per_byte("fp16")
    with pytest.raises(ValueError):
        h100.ops_per_byte(2)
    with pytest.raises(ValueError, match="bytes_per_value"):
        h100.ops_per_byte("bf16", bytes_per_value=0)
    assert h100.macs("BF16") == h100.macs("bf16") == pytest.approx(989.4e12 / 2)


def test_chip_is_keyword_only_and_validates_its_numbers():
    base = hardware.get("H100")
    with pytest.raises(TypeError):
        hardware.Chip("H100")  # keyword-only
    with pytest.raises(ValueError, match="flops"):
        dataclasses.replace(base, flops={"fp16": 1e15})
    with pytest.raises(ValueError, match="hbm_bandwidth"):
        dataclasses.replace(base, hbm_bandwidth=-1.0)
    with pytest.raises(ValueError, match="source"):
        dataclasses.replace(base, sources={"flops": "x, 2026"})


def test_system_validation_and_defaults():
    h100 = hardware.get("H100")
    box = hardware.System(name="my box", chip=h100, n_chips=4)
    assert box.scale_out_bandwidth == h100.scale_out_bandwidth
    assert box.price_per_hour is None
    with pytest.raises(ValueError, match="n_chips"):
        hardware.System(name="too big", chip=h100, n_chips=9)  # beyond the NVLink domain of 8
    with pytest.raises(ValueError, match="n_chips"):
        hardware.System(name="empty", chip=h100, n_chips=0)
    with pytest.raises(ValueError, match="chip"):
        hardware.System(name="no chip", chip="H100", n_chips=1)


def test_preset_system_prices_are_per_chip_list_price_times_chips():
    assert hardware.get_system("HGX H100").price_per_hour == pytest.approx(8 * 3.99)
    assert hardware.get_system("TPU v5e-256").price_per_hour == pytest.approx(256 * 1.20)
    assert hardware.get_system("GB200 NVL72").price_per_hour is None


def test_import_is_light():
    code = "import sys, lecture_lib.hardware; print('numpy' in sys.modules, 'sympy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


# --- Properties ------------------------------------------------------------------------------

chips = st.sampled_from(list(hardware.CHIPS.values()))


@given(chips, st.data())
def test_ops_per_byte_is_macs_times_bytes_over_bandwidth(chip, data):
    fmt = data.draw(st.sampled_from(list(chip.flops)))
    expected = chip.flops[fmt] / 2 * hardware.BYTES_PER_VALUE[fmt] / chip.hbm_bandwidth
    assert chip.ops_per_byte(fmt) == pytest.approx(expected)
    assert chip.macs(fmt) == pytest.approx(chip.flops[fmt] / 2)


@given(st.sampled_from(["H100", "H200", "B200", "GB200", "TPU7x"]), st.sampled_from(["fp8", "fp4"]))
def test_precision_cancels_in_the_hardware_ratio(name, narrow):
    # Halving the bytes per weight doubles the MAC rate: bf16 and fp8 (and fp4) give one ratio
    chip = hardware.get(name)
    if narrow not in chip.flops:
        narrow = "fp8"
    assert rel(chip.ops_per_byte(narrow), chip.ops_per_byte("bf16")) < 0.01


@given(chips, st.floats(min_value=0.1, max_value=10.0))
def test_ratio_is_inverse_in_bandwidth_and_drain_time_too(chip, k):
    faster = dataclasses.replace(chip, hbm_bandwidth=chip.hbm_bandwidth * k)
    fmt = next(iter(chip.flops))
    assert faster.ops_per_byte(fmt) == pytest.approx(chip.ops_per_byte(fmt) / k)
    assert faster.hbm_drain_time == pytest.approx(chip.hbm_drain_time / k)


@settings(max_examples=60)
@given(st.sampled_from(hardware.chip_names()), st.data())
def test_any_case_space_hyphen_underscore_spelling_resolves(name, data):
    spelled = ""
    for char in name:
        spelled += data.draw(st.sampled_from([char.lower(), char.upper()]))
        spelled += data.draw(st.sampled_from(["", "", " ", "-", "_"]))
    assert hardware.get(spelled).name == name


@given(chips, st.data())
def test_system_aggregates_scale_linearly_with_chip_count(chip, data):
    n = data.draw(st.integers(min_value=1, max_value=chip.scale_up_domain))
    system = hardware.System(name="test", chip=chip, n_chips=n)
    assert system.hbm_bandwidth == pytest.approx(n * chip.hbm_bandwidth)
    assert system.hbm_capacity == pytest.approx(n * chip.hbm_capacity)
    assert system.scale_up_bandwidth == pytest.approx(n * chip.scale_up_bandwidth)
    assert system.flops == pytest.approx({f: n * v for f, v in chip.flops.items()})
    assert system.hbm_drain_time == pytest.approx(chip.hbm_drain_time)


# --- Rubin Ultra NVL576 (added for Chapter 2) --------------------------------------------------

def test_rubin_ultra_nvl576_matches_nvidia_gtc_2025_figures():
    # GTC 2025 roadmap: 144 packages x 4 dies = "NVL576", 1 TB HBM4e per package, rack 4.6 PB/s,
    # 5 EF FP8 training, NVLink 7 1.5 PB/s (both directions)
    rack = hardware.get_system("Rubin Ultra NVL576")
    assert rack.n_chips == 144 and rack.chip.scale_up_domain == 144
    assert rack.hbm_capacity == pytest.approx(144e12)
    assert rack.hbm_bandwidth == pytest.approx(4.6e15)
    assert rack.flops["fp8"] == pytest.approx(5e18)
    assert 2 * rack.scale_up_bandwidth == pytest.approx(1.5e15)
    assert hardware.get_system("NVL576") is rack
    assert hardware.get("rubin-ultra") is rack.chip


def test_rubin_ultra_sits_after_rubin_and_its_assumed_figures_say_so():
    names = hardware.chip_names()
    assert names.index("Rubin Ultra") == names.index("Rubin") + 1
    chip = hardware.get("Rubin Ultra")
    assert "assumed" in chip.sources["scale_out_bandwidth"]
    assert "2 x fp8" in chip.sources["flops"]
    assert chip.hbm_drain_time == pytest.approx(1e12 / (4.6e15 / 144))


# --- Issue 51: the chips serving engineers run, and chips the presets lack ---------------------------

@pytest.mark.parametrize("name, hbm_gb, tb_s, bf16, fp8, fp4, domain, source", [
    # AMD data sheets (amd.com), dense peaks; ROCm's gpu-specs table for the capacities
    ("MI325X", 256, 6.0, 1307.4e12, 2614.9e12, None, 8, "instinct-mi325x-datasheet"),
    ("MI350X", 288, 8.0, 2.3e15, 4.6e15, 9.2e15, 8, "mi350x"),
    ("MI355X", 288, 8.0, 2.5e15, 5.0e15, 10.1e15, 8, "mi355x"),
    # NVIDIA's H200 page, NVL column, 'with sparsity' halved
    ("H200 NVL", 141, 4.8, 835.5e12, 1670.5e12, None, 4, "nvidia.com/en-us/data-center/h200"),
    # NVIDIA's Blackwell Ultra post: 15 PF dense NVFP4, 288 GB, 8 TB/s
    ("B300", 288, 8.0, 2.5e15, 5e15, 15e15, 8, "inside-nvidia-blackwell-ultra"),
])
def test_issue_51_chip_presets_match_their_primary_sheets(name, hbm_gb, tb_s, bf16, fp8, fp4, domain, source):
    chip = hardware.get(name)
    assert chip.hbm_capacity == hbm_gb * 1e9 and chip.hbm_bandwidth == tb_s * 1e12
    assert chip.flops["bf16"] == bf16 and chip.flops["fp8"] == fp8
    assert chip.flops.get("fp4") == fp4
    assert chip.scale_up_domain == domain
    assert source in chip.sources["hbm_capacity"] and "2026" in chip.sources["hbm_capacity"]


def test_mi325x_is_the_mi300x_compute_with_more_faster_memory():
    old, new = hardware.get("MI300X"), hardware.get("MI325X")
    assert dict(old.flops) == dict(new.flops)
    assert new.hbm_capacity / old.hbm_capacity == 256 / 192 and new.hbm_bandwidth > old.hbm_bandwidth


@pytest.mark.parametrize("system, chip, n", [("MI325X platform", "MI325X", 8), ("MI355X platform", "MI355X", 8),
                                             ("HGX B300", "B300", 8), ("H200 NVL 4-way", "H200 NVL", 4)])
def test_issue_51_systems(system, chip, n):
    found = hardware.get_system(system)
    assert found.chip is hardware.get(chip) and found.n_chips == n


def test_a_custom_chip_from_a_base_changes_only_what_is_given_and_says_so():
    chip = hardware.custom_chip(name="bigger", base="MI300X", hbm_capacity=256e9, hbm_bandwidth=6e12)
    base = hardware.get("MI300X")
    assert chip.hbm_capacity == 256e9 and chip.hbm_bandwidth == 6e12 and dict(chip.flops) == dict(base.flops)
    assert chip.scale_up_domain == base.scale_up_domain and chip.generation == base.generation
    assert "based on the MI300X preset" in chip.notes and "hbm_capacity" in chip.notes
    assert "given by the user" in chip.sources["hbm_capacity"]


def test_a_custom_chip_without_a_base_needs_memory_and_flops_and_notes_its_defaults():
    with pytest.raises(ValueError, match="flops"):
        hardware.custom_chip(hbm_capacity=80e9, hbm_bandwidth=3e12)
    chip = hardware.custom_chip(name="x", hbm_capacity=80e9, hbm_bandwidth=3e12, flops={"BF16": 1e15})
    assert chip.flops == {"bf16": 1e15} and chip.scale_up_domain == hardware.CUSTOM_DEFAULTS["scale_up_domain"]
    assert "defaults taken" in chip.notes
    with pytest.raises(ValueError, match="flops keys"):
        hardware.custom_chip(hbm_capacity=80e9, hbm_bandwidth=3e12, flops={"fp6": 1e15})


def test_a_chip_json_file_in_spec_sheet_units(tmp_path):
    path = tmp_path / "chip.json"
    path.write_text('{"name": "MyChip", "hbm_gb": 256, "hbm_tb_s": 6, "tflops": {"bf16": 1307.4, "fp8": 2614.9}, '
                    '"scale_up": 8, "scale_up_gb_s": 448, "scale_out_gb_s": 50}')
    chip = hardware.chip_from_json(path)
    assert (chip.name, chip.hbm_capacity, chip.hbm_bandwidth) == ("MyChip", 256e9, 6e12)
    assert chip.flops["fp8"] == pytest.approx(2614.9e12) and chip.scale_up_bandwidth == 448e9
    with pytest.raises(ValueError, match="hbm_tbs|unknown|must be among"):
        hardware.chip_from_json({"name": "x", "hbm_tbs": 6})
    with pytest.raises(ValueError, match="readable"):
        hardware.chip_from_json(tmp_path / "missing.json")
