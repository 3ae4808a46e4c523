"""Chapter 9's planner: every number is the chapter function it names, Chapter 8's rows are reproduced,
and the command line and bad input behave (issue 22 §2-3)."""

import html
import json
import re
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lecture_lib import collectives, hardware, hf_config, measurements, models, moe, pipeline, pipeline_memory, roofline
from lecture_lib import plan as planner
from plan_cli import run_cli as _cli

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def deepseek_plan():
    return planner.plan("deepseek-v3", "HGX H200", n_systems=2, price_per_gpu_hour=3.5, len_ctx=8192,
                        latency_target=0.02, memory_utilization=1.0, weight_dtype="fp8")


def test_every_number_is_the_chapter_function_it_names(deepseek_plan):
    p, m = deepseek_plan, models.get("deepseek-v3")
    d = collectives.deployment(hardware.get_system("HGX H200"), n_systems=2)
    n = d.n_chips
    got = p.numbers
    common = dict(weight_dtype=1.0, expert_weight_dtype=1.0, compute_dtype="fp8", expert_compute_dtype=None,
                  kv_dtype="bf16", tokens_per_step=1.0, layout="dp_ep")
    assert planner.auto_layout(m, d) == "dp_ep"      # the default for an MoE model on several GPUs
    # capacity, per layout
    for key, layout in {"pooled": None, "tp": "tp", "dp_ep": "dp_ep",
                        "tp_domain": roofline.Layout(attention_tp=8)}.items():
        held = roofline.device_memory(m, d, layout=layout, weight_dtype="fp8", kv_dtype="bf16")
        assert got["capacity"][f"{key}_weights_per_gpu"] == held["weights"]
        assert got["capacity"][f"{key}_kv_room"] == held["free"]
        assert got["capacity"][f"{key}_max_batch"] == math.floor(roofline.batch_that_fits(
            m, d, len_ctx=8192, weight_bytes="fp8", kv_dtype="bf16", layout=layout))
    bytes_tok = m.kv_bytes_per_token("bf16", context_len=8192)
    micro = pipeline_memory.max_micro_batch(hbm_capacity=d.chip.hbm_capacity, n_total=m.params_total, bytes_param=1,
                                            len_ctx=8192, bytes_tok=bytes_tok, expert_parallel=8, stages=2)
    assert got["capacity"]["pp_max_batch"] == math.floor(2 * micro)
    # decode
    assert got["decode"]["balance_batch"] == roofline.balance_batch(d.chip, weight_bytes=1, compute_dtype="fp8",
                                                                    sparsity=m.sparsity)
    assert got["decode"]["balance_batch_with_kv"] == roofline.balance_batch_with_kv(
        n_active=m.params_active, n_total=m.params_total, flops=d.flops["fp8"], mem_bw=d.hbm_bandwidth,
        bytes_param=1, len_ctx=8192, bytes_tok=m.kv_bytes_read_per_token("bf16", context_len=8192))
    floor = roofline.decode_bound(m, d, batch=1, len_ctx=8192, **common)
    assert got["decode"]["latency_floor"] == floor["t"]
    batch = got["decode"]["batch"]
    at = roofline.decode_bound(m, d, batch=batch, len_ctx=8192, **common)
    above = roofline.decode_bound(m, d, batch=batch + 1, len_ctx=8192, **common)
    assert at["t"] <= 0.02 < above["t"], "the operating batch is the largest that meets the target"
    assert got["decode"]["tokens_per_s_per_gpu"] == at["tokens_per_s"] / n
    assert got["decode"]["tokens_per_s_per_user"] == at["tokens_per_s_per_seq"]
    # prefill and cost
    pre = roofline.prefill_bound(m, d, len_in=8192, compute_dtype="fp8")
    assert got["prefill"]["t_prefill"] == pre["t_prefill"]
    assert got["cost"]["usd_per_million_input"] == pytest.approx(
        1e6 * roofline.COST_OF_STEP(t=pre["t_prefill"], n_chips=n, price_chip_hour=3.5, B=8192), rel=1e-12)
    assert got["cost"]["usd_per_million_output"] == pytest.approx(
        1e6 * roofline.cost_per_token(step_time=at["t"], batch=batch, n_chips=n, price_chip_hour=3.5), rel=1e-12)
    # layouts compared
    assert got["layouts"]["pp_decode_idle_one_micro"] == pipeline.decode_idle_fraction(stages=2, microbatches=1)
    assert got["layouts"]["cross_rack_fraction"] == moe.CROSS_RACK_FRACTION(n_racks=2)
    a2a = moe.a2a_layer_time(tokens_per_gpu=batch / n, bytes_per_token=moe.a2a_bytes_per_token(m, bytes_per_value=1),
                             racks=2, scale_up_bw=d.chip.scale_up_bandwidth,
                             scale_out_bw=hardware.get_system("HGX H200").scale_out_bandwidth)
    assert got["layouts"]["a2a_per_step"] == pytest.approx(a2a["total"] * m.n_moe_layers, rel=1e-12)
    # reality: the band is Chapter 8's rows of this plan's class, applied to the headline rate
    regime = "compute" if at["t_compute"] >= at["t_weights"] + at["t_kv"] else "memory"
    band = measurements.reality_band(kind="decode", moe=True, regime=regime, hbm_fraction=1.0)
    assert got["reality"]["decode_band"] == band
    assert got["reality"]["decode_expected"]["median"] == pytest.approx(band["median"] * at["tokens_per_s"] / n)


def test_throughput_target_runs_at_the_largest_whole_batch_that_fits():
    p = planner.plan("llama-3-70b", "H200", n_chips=2, price_per_gpu_hour=3, len_ctx=4096, memory_utilization=1.0)
    fit = roofline.batch_that_fits("llama-3-70b", collectives.deployment(hardware.get("H200"), n_chips=2),
                                   len_ctx=4096, weight_bytes="fp8", kv_dtype="bf16")
    assert p.numbers["decode"]["batch"] == math.floor(fit)
    assert p.numbers["layouts"]["cross_rack_fraction"] is None      # dense: no all-to-all


def test_a_target_below_the_floor_gives_no_operating_batch():
    p = planner.plan("llama-3-70b", "H200", n_chips=2, price_per_gpu_hour=3, len_ctx=4096, latency_target=1e-4)
    assert p.numbers["decode"]["batch"] is None
    assert "usd_per_million_output" not in p.numbers["cost"]
    assert "below the latency floor" in p.text()


def _row_plan(row, batch):
    return planner.plan(row.model, row.system, n_systems=row.n_systems, n_chips=row.n_chips, price_per_gpu_hour=1,
                        len_ctx=row.len_ctx, batch=batch, weight_dtype=row.weight_dtype,
                        expert_weight_dtype=row.expert_weight_dtype, compute_dtype=row.compute_dtype,
                        expert_compute_dtype=row.expert_compute_dtype, kv_dtype=row.kv_dtype,
                        tokens_per_step=row.tokens_per_step, layout=row.bound_layout,
                        attention_dtype=row.attention_dtype, memory_utilization=1.0)


DECODE_ROWS = [row for row in measurements.MEASUREMENTS if row.kind in ("decode", "latency")]


@pytest.mark.parametrize("row", DECODE_ROWS, ids=[row.key for row in DECODE_ROWS])
def test_planning_a_chapter_8_row_gives_the_bound_it_reports(row):
    """Each decode/latency row's model, system, formats and batch (or the largest that fits) planned
    with the row's own layout and attention format give the row's bound."""
    detail = row.bound_detail()
    p = _row_plan(row, row.batch)
    if row.batch is None:       # the row runs at the fit limit; the plan reports that limit
        assert math.floor(p.numbers["decode"]["fit_limit"]) == detail["batch"]
        assert p.numbers["decode"]["batch"] == detail["batch"]
        p = _row_plan(row, detail["batch"])
    got = p.numbers["decode"]
    if row.kind == "latency":
        assert got["tokens_per_s_per_user"] == pytest.approx(row.bound, rel=1e-12)
    else:
        assert got["tokens_per_s"] / row.divisor == pytest.approx(row.bound, rel=1e-12)


def test_views_agree_with_the_numbers(deepseek_plan):
    text, data, page = deepseek_plan.text(), deepseek_plan.to_dict(), deepseek_plan._repr_html_()
    for section in planner.SECTIONS:
        if deepseek_plan.section(section):
            assert planner.TITLES[section] in text and html.escape(planner.TITLES[section]) in page
    assert data["decode"]["batch"]["value"] == deepseek_plan.numbers["decode"]["batch"]
    assert math.isinf(deepseek_plan.numbers["decode"]["balance_batch_with_kv"])    # past the Goldilocks context
    strict = json.loads(deepseek_plan.to_json(), parse_constant=lambda name: pytest.fail(f"non-JSON {name}"))
    infinite = strict["decode"]["balance_batch_with_kv"]
    assert infinite["value"] is None and "KV outpaces compute" in infinite["reason"]
    assert '"inf"' not in deepseek_plan.to_json()
    assert not re.search(r"\d[eE][+-]?\d", text + page), "no e-notation in the table"
    assert "measured systems reach" in text


def test_config_json_model_and_model_object(tmp_path):
    config = {"model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
              "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000, "head_dim": 128,
              "_name_or_path": "example/mistral-like"}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    from_path = planner.plan(str(path), "H100", price_per_gpu_hour=2, len_ctx=2048)
    from_dict = planner.plan(config, "H100", price_per_gpu_hour=2, len_ctx=2048)
    from_model = planner.plan(hf_config.from_hf_config(config), "H100", price_per_gpu_hour=2, len_ctx=2048)
    assert from_path.numbers == from_dict.numbers == from_model.numbers
    assert from_path.numbers["inputs"]["model"] == "example/mistral-like"


@pytest.mark.parametrize("kwargs, name", [
    (dict(price_per_gpu_hour=-1), "price_per_gpu_hour"),
    (dict(price_per_gpu_hour="a lot"), "price_per_gpu_hour"),
    (dict(len_ctx=0), "len_ctx"),
    (dict(len_ctx=float("nan")), "len_ctx"),
    (dict(latency_target=0), "latency_target"),
    (dict(batch=0), "batch"),
    (dict(batch=8, latency_target=0.05), "batch and latency_target"),
    (dict(n_systems=1.5), "n_systems"),
    (dict(weight_dtype="fp7"), "weight_dtype"),
    (dict(kv_dtype="int3"), "kv_dtype"),
    (dict(compute_dtype="fp64"), "compute_dtype"),
    (dict(layout="ring"), "layout"),
    (dict(tokens_per_step=0.5), "tokens_per_step"),
])
def test_bad_input_names_the_parameter(kwargs, name):
    args = dict(price_per_gpu_hour=2, len_ctx=1024) | kwargs
    with pytest.raises(ValueError, match=name):
        planner.plan("llama-3.1-8b", "H100", **args)


def test_bad_model_and_system_names_the_parameter(tmp_path):
    with pytest.raises(ValueError, match="model"):
        planner.plan("no-such-model", "H100", price_per_gpu_hour=2, len_ctx=1024)
    with pytest.raises(ValueError, match="model"):
        planner.plan(42, "H100", price_per_gpu_hour=2, len_ctx=1024)
    with pytest.raises(ValueError, match="system"):
        planner.plan("llama-3.1-8b", "no-such-gpu", price_per_gpu_hour=2, len_ctx=1024)
    with pytest.raises(ValueError, match="n_chips"):
        planner.plan("llama-3.1-8b", hardware.get_system("HGX H100"), n_chips=4, price_per_gpu_hour=2, len_ctx=1024)


# Classes of bad input the fuzzer (tests/test_fuzz.py) found (issue 20 §4): each is refused with a
# ValueError naming the caller's parameter, never an AttributeError or NumPy's "truth value" error.
@pytest.mark.parametrize("kwargs, name", [
    (dict(compute_dtype=np.array([1.0, 2.0])), "compute_dtype"),          # an array where a format name goes
    (dict(expert_compute_dtype=np.array([1.0, 2.0])), "expert_compute_dtype"),
    (dict(compute_dtype=8), "compute_dtype"),
    (dict(layout=np.array([1.0, 2.0])), "layout"),
    (dict(layout=["tp"]), "layout"),
    (dict(n_chips=0), "n_chips"),                                          # counts: whole numbers >= 1
    (dict(n_chips=2.5), "n_chips"),
    (dict(n_chips=float("nan")), "n_chips"),
    (dict(n_chips="8"), "n_chips"),
    (dict(n_chips=True), "n_chips"),
    (dict(n_chips=10**400), "n_chips"),
])
def test_wrong_types_name_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        planner.plan("llama-3.1-8b", "H100", price_per_gpu_hour=2, len_ctx=1024, **kwargs)


@pytest.mark.parametrize("n_chips", [8, np.int64(8), np.float32(8.0), np.uint64(8), 8.0])
def test_a_system_preset_with_n_chips_names_n_chips(n_chips):
    """n_chips counts chips: with a system preset's name it is refused in its own words, whatever its type."""
    for call in (lambda: planner.resolve_unit("HGX H100", n_chips=n_chips),
                 lambda: planner.resolve_deployment("HGX H100", n_chips=n_chips),
                 lambda: planner.plan("llama-3.1-8b", "HGX H100", n_chips=n_chips, price_per_gpu_hour=2,
                                      len_ctx=1024)):
        with pytest.raises(ValueError, match="n_chips"):
            call()


@pytest.mark.parametrize("n_chips", [np.int64(8), np.float32(8.0), np.uint64(8), 8.0])
def test_n_chips_in_another_real_type_is_the_same_deployment(n_chips):
    assert planner.resolve_deployment("H100", n_chips=n_chips) == planner.resolve_deployment("H100", n_chips=8)
    assert planner.resolve_unit("H100", n_chips=n_chips) is planner.resolve_unit("H100", n_chips=8)


@pytest.mark.parametrize("bad", [0, -1, 2.5, "8", None, True])
def test_resolve_unit_checks_n_chips(bad):
    if bad is None:   # None is the documented "a system preset" case
        assert planner.resolve_unit("HGX H100", n_chips=None) is hardware.get_system("HGX H100")
        return
    with pytest.raises(ValueError, match="n_chips"):
        planner.resolve_unit("H100", n_chips=bad)


def test_a_config_dict_that_is_not_a_config_names_model():
    for bad in ({}, {"hidden_size": 4096}):
        with pytest.raises(ValueError, match="model"):
            planner.resolve_model(bad)
        with pytest.raises(ValueError, match="model"):
            planner.plan(bad, "H100", price_per_gpu_hour=2, len_ctx=1024)


def test_auto_layout_checks_its_inputs():
    d = planner.resolve_deployment("H100", n_chips=8)
    assert planner.auto_layout("deepseek-v3", d) == planner.auto_layout(models.get("deepseek-v3"), d) == "dp_ep"
    assert planner.auto_layout("llama-3-70b", d) == "tp"
    for bad in (None, "8 x H100", 8, hardware.get("H100"), hardware.get_system("HGX H100")):
        with pytest.raises(ValueError, match="deployment"):
            planner.auto_layout("deepseek-v3", bad)
    for bad in (None, 3.0, "no-such-model", {}):
        with pytest.raises(ValueError, match="model"):
            planner.auto_layout(bad, d)


def test_layout_none_is_the_documented_pooled_bound():
    pooled = planner.plan("llama-3.1-8b", "HGX H100", price_per_gpu_hour=2, len_ctx=1024, layout=None)
    assert pooled.numbers["inputs"]["layout"] is None
    assert "pooled" in pooled.section("inputs")[-1].text


LLAMA = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
         "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256}


@pytest.mark.parametrize("text, field", [
    (json.dumps(LLAMA)[:-1], "config"),                                          # not JSON
    (json.dumps(LLAMA | {"hidden_size": "big"}), "hidden_size"),                 # wrong type
    (json.dumps(LLAMA | {"hidden_size": 10**300}), "hidden_size"),               # absurd size
    (json.dumps({k: v for k, v in LLAMA.items() if k != "num_hidden_layers"}), "num_hidden_layers"),   # missing
    (json.dumps(LLAMA | {"model_type": "rwkv"}), "model_type"),                  # unknown family
    ("[1, 2, 3]", "config"),                                                     # not an object
])
def test_a_malformed_config_json_is_a_clear_error(tmp_path, text, field):
    path = tmp_path / "config.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=field):
        planner.plan(str(path), "H100", price_per_gpu_hour=2, len_ctx=1024)


def test_a_missing_config_path_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="cannot be read"):
        planner.plan(str(tmp_path / "nope.json"), "H100", price_per_gpu_hour=2, len_ctx=1024)


def test_the_planner_runs_as_a_command():
    """The real command, in its own process: the same text as ``main`` in this one, exit status 0,
    and 2 with one line on stderr for a bad flag."""
    args = ["llama-3-70b", "H200", "--gpus", "2", "--price", "3", "--context", "4096"]
    command = subprocess.run([sys.executable, "-m", "lecture_lib.plan", *args], capture_output=True, text=True,
                             cwd=ROOT, timeout=120)
    assert command.returncode == 0, command.stderr
    assert command.stdout == _cli(*args).stdout
    bad = subprocess.run([sys.executable, "-m", "lecture_lib.plan", *args[:-1], "-5"], capture_output=True,
                         text=True, cwd=ROOT, timeout=120)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--context" in bad.stderr


def test_cli_prints_the_same_table_and_json():
    args = ["llama-3-70b", "H200", "--gpus", "2", "--price", "3", "--context", "4096", "--latency-ms", "30"]
    text, as_json = _cli(*args), _cli(*args, "--json")
    assert text.returncode == 0 and as_json.returncode == 0, text.stderr + as_json.stderr
    p = planner.plan("llama-3-70b", "H200", n_chips=2, price_per_gpu_hour=3, len_ctx=4096, latency_target=0.03)
    assert text.stdout.strip() == p.text()
    assert json.loads(as_json.stdout) == json.loads(p.to_json())


@pytest.mark.parametrize("args, word", [
    (["llama-3-70b", "H200", "--price", "-3", "--context", "4096"], "--price must be > 0"),
    (["llama-3-70b", "nothing", "--price", "3", "--context", "4096"], "system"),
    (["llama-3-70b", "H200", "--context", "4096", "--ttft-ms", "0"], "--ttft-ms"),
    (["missing/config.json", "H200", "--price", "3", "--context", "4096"], "cannot be read"),
])
def test_cli_errors_are_one_line_with_exit_code_2(args, word):
    result = _cli(*args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1 and word in result.stderr


def test_the_target_search_finds_the_brute_force_batch():
    """The operating batch is the largest B <= the fit limit whose decode bound meets the target, as a scan
    of every batch finds it."""
    m, d = models.get("llama-3.1-8b"), collectives.deployment(hardware.get("H100"), n_chips=1)
    fit = roofline.batch_that_fits(m, d, len_ctx=4096, weight_bytes="fp8", kv_dtype="bf16")
    times = [roofline.decode_bound(m, d, batch=b, len_ctx=4096)["t"] for b in range(1, math.floor(fit) + 1)]
    for target in (times[0] * 1.0001, times[3] * 1.01, (times[10] + times[11]) / 2, times[len(times) // 2],
                   times[-1] * 0.999, times[-1] * 2):
        expected = max(b for b, t in enumerate(times, start=1) if t <= target)
        p = planner.plan(m, d.chip, price_per_gpu_hour=2, len_ctx=4096, latency_target=target,
                         memory_utilization=1.0, weight_dtype="fp8")
        assert p.numbers["decode"]["batch"] == expected, target


def test_the_explorer_shows_the_plan_and_the_decode_bound():
    from lecture_lib.explorers import plan as px

    explorer = px.PlanExplorer(model="llama-3-70b", system="HGX H100", target_ms=40.0)
    try:
        values = explorer.values
        p = planner.plan("llama-3-70b", "HGX H100", price_per_gpu_hour=values["price"], len_ctx=values["len_ctx"],
                         latency_target=values["target_ms"] / 1e3)
        d = planner.resolve_deployment("HGX H100")
        x, y = explorer.rate_line.get_data()
        for batch, rate in zip(x, y):
            bound = roofline.decode_bound("llama-3-70b", d, batch=batch, len_ctx=values["len_ctx"])
            assert rate == pytest.approx(bound["tokens_per_s"] / 8, rel=1e-12)
        mx, my = explorer.markers[1].get_data()
        assert mx[0] == p.numbers["decode"]["batch"] and my[0] == p.numbers["decode"]["tokens_per_s_per_gpu"]
        assert html.escape(next(r.text for r in p.section("decode") if r.key == "tokens_per_s_per_gpu")) in explorer.readout.value      # tokens/s per GPU
        explorer.controls["target_ms"].value = 1.0                                       # below the floor
        assert "no operating batch" in explorer.readout.value and not explorer.markers[0].get_data()[0]
    finally:
        explorer.view.figure.clear()


@pytest.mark.parametrize("n_systems", [1, 5])
def test_the_plan_explorer_curve_passes_through_its_readout(n_systems):
    """A learner's walkthrough found the chart at ~1 ms where the readout's floor said 3.92 ms (the
    curve had its own layout and no collective latency): now both come from Plan.decode_step."""
    import matplotlib

    matplotlib.use("Agg")
    import numpy as np

    from lecture_lib.explorers.plan import PlanExplorer

    explorer = PlanExplorer(n_systems=n_systems)
    try:
        result = planner.plan("deepseek-v3", "HGX H200", n_systems=n_systems, price_per_gpu_hour=3.0, len_ctx=8192,
                              latency_target=0.030, weight_dtype="fp8", compute_dtype="fp8")
        batches, step_ms = explorer.step_line.get_data()
        assert batches[0] == 1
        assert step_ms[0] == pytest.approx(result.numbers["decode"]["latency_floor"] * 1e3, rel=1e-9)
        operating = result.numbers["decode"]["batch"]
        assert np.interp(operating, batches, step_ms) == pytest.approx(
            result.numbers["decode"]["step_time"] * 1e3, rel=0.02)
    finally:
        explorer.view.figure.clear()


# --- Issue 30 §2: the planner's inputs ---------------------------------------------------------------------

# TensorRT-LLM's v1.0 perf overview (github.com/NVIDIA/TensorRT-LLM/blob/00f37686aa854010d68bcbd0f4ab000221541ca6/
# docs/source/performance/perf-overview.md), 1000/1000 rows, Total Output Throughput in tokens/s: model, chip,
# GPUs (the column's TP size), format, figure.
TRT_FIGURES = [
    ("llama-3.1-8b", "H100", 1, "fp8", 15220),        # "Llama 3.1 8B", H100 TP1 (FP8)
    ("llama-3-70b", "H100", 2, "fp8", 4205),          # "Llama 3.3 70B", H100 TP2 (FP8)
    ("qwen3-235b-a22b", "H200", 8, "fp8", 23789),     # "Qwen3-235B-A22B", H200 TP8 (FP8)
    ("qwen3-30b-a3b", "B200", 1, "fp4", 25828),       # "Qwen3-30B-A3B", B200 TP1 (FP4)
    ("llama-4-maverick", "H200", 8, "fp8", 31782),    # "Llama 4 Maverick", H200 TP8 (FP8)
]


@pytest.mark.parametrize("model, chip, gpus, fmt, figure", TRT_FIGURES, ids=[f[0] for f in TRT_FIGURES])
def test_tensorrt_llm_figures_sit_below_the_bound_and_inside_the_expected_band(model, chip, gpus, fmt, figure):
    """The planner as an engineer would run it (the publisher's GPUs, TP and formats, 1,000 in and 1,000 out,
    the default 10% runtime reserve): its bound stays above the published figure, and the figure falls
    inside the band the plan expects from Chapter 8's rows of the same class."""
    p = planner.plan(model, chip, n_chips=gpus, price_per_gpu_hour=1, len_in=1000, len_out=1000,
                     weight_dtype=measurements.NVFP4_BYTES if fmt == "fp4" else "fp8", compute_dtype=fmt,
                     kv_dtype="fp8", tp=gpus if gpus > 1 else None)
    bound = p.numbers["requests"]["output_tokens_per_s"]
    expected = p.numbers["reality"]["requests_expected"]
    band = p.numbers["reality"]["requests_band"]
    assert bound > figure
    assert expected["low"] * (1 - 1e-9) <= figure <= expected["high"] * (1 + 1e-9), (figure, expected)
    assert band["class"] == ("MoE" if models.get(model).is_moe else "dense") + ", memory-bound"
    assert band["n"] >= 3 and not band["widened"]


def test_the_cli_runs_with_its_defaults_on_every_chip_and_system_preset():
    for chip in hardware.chip_names():
        p = planner.plan("llama-3.1-8b", chip, price_per_gpu_hour=1, len_ctx=4096)   # runs without a flag
        assert p.decode_settings["compute_dtype"] in hardware.get(chip).flops, chip
    for system in ("HGX A100", "TPU v5e-256", "TPU v4 pod"):
        result = _cli("llama-3.1-8b", system, "--price", "1.5", "--context", "4096")
        assert result.returncode == 0 and result.stderr == "", result.stderr


def test_a_chip_without_fp8_defaults_to_its_best_format_and_says_so():
    p = planner.plan("llama-3.1-8b", "A100", price_per_gpu_hour=1, len_ctx=4096)
    assert p.numbers["inputs"]["formats"] is None
    why = next(row.text for row in p.rows if row.key == "formats_why")
    assert "A100 has no FP8" in why and "BF16" in why
    assert planner.default_formats(models.get("llama-3.1-8b"), hardware.get("TPU v5e"))[:2] == ("bf16", "bf16")
    assert planner.default_formats(models.get("llama-3.1-8b"), hardware.get("H100"))[:2] == ("fp8", "fp8")
    # fp8 weights asked for on an A100: the matmuls fall back to BF16, and the plan says why
    weights, compute, why = planner.default_formats(models.get("llama-3.1-8b"), hardware.get("A100"),
                                                    weight_dtype="fp8")
    assert (weights, compute) == ("fp8", "bf16") and "does not compute in FP8" in why


def test_a_config_states_its_format_and_a_flag_overrides_it():
    config = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
              "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256, "head_dim": 128,
              "torch_dtype": "bfloat16", "tie_word_embeddings": False}
    stated = planner.plan(config, "H100", price_per_gpu_hour=1, len_ctx=4096)
    assert "bfloat16" in next(row.text for row in stated.rows if row.key == "formats_why")
    flagged = planner.plan(config, "H100", price_per_gpu_hour=1, len_ctx=4096, weight_dtype="FP8")
    assert next(row.text for row in flagged.rows if row.key == "formats_why").startswith("weights as given")
    assert flagged.numbers["capacity"]["tp_weights_per_gpu"] < 0.6 * stated.numbers["capacity"]["tp_weights_per_gpu"]


@pytest.mark.parametrize("kwargs, match", [
    (dict(n_chips=3, layout="tp"), "8 KV heads|32 attention heads"),   # TP over 3 GPUs, asked for
    (dict(n_chips=8, tp=3), "tp × pp must divide the 8 GPUs"),
    (dict(n_chips=8, tp=8, pp=3), "tp × pp must divide"),
    (dict(n_chips=6, tp=6), "attention heads|KV heads"),
    (dict(n_chips=8, pp=8, tp=1, ep=2), "ep must be 1 for a dense model"),
    (dict(n_chips=4, pp=4), None),
])
def test_explicit_degrees_are_checked_for_divisibility(kwargs, match):
    args = dict(price_per_gpu_hour=1, len_ctx=4096) | kwargs
    if match is None:
        p = planner.plan("llama-3.1-8b", "H100", **args)
        assert p.numbers["inputs"]["parallel"] == {"tp": 1, "pp": 4, "ep": 1, "dp": 1}
        return
    with pytest.raises(ValueError, match=match):
        planner.plan("llama-3.1-8b", "H100", **args)


def test_auto_layout_on_a_gpu_count_the_heads_do_not_divide_falls_back_to_tp_times_dp_and_says_so():
    p = planner.plan("llama-3.1-8b", "H100", n_chips=3, price_per_gpu_hour=1, len_ctx=4096)
    assert p.numbers["inputs"]["parallel"] == {"tp": 1, "pp": 1, "ep": 1, "dp": 3}
    assert any("would not divide the model's heads" in row.text for row in p.rows)


def test_kv_heads_are_replicated_where_tp_exceeds_them_and_the_plan_says_so():
    qwen = models.get("qwen3-235b-a22b")       # 4 KV heads
    p = planner.plan(qwen, "H200", n_chips=8, price_per_gpu_hour=1, len_ctx=4096, tp=8)
    notes = [row.text for row in p.rows if row.key.startswith("parallel_note")]
    assert any("replicated 2×" in note for note in notes)
    d = collectives.deployment(hardware.get("H200"), n_chips=8)
    assert roofline.device_memory(qwen, d, layout="tp", batch=1, len_ctx=1000, kv_dtype="bf16")["r_kv"] == 2
    with pytest.raises(ValueError, match="ep must divide the 8 GPUs"):
        planner.plan(qwen, "H200", n_chips=8, price_per_gpu_hour=1, len_ctx=4096, tp=8, ep=3)
    with pytest.raises(ValueError, match="ep must be the GPU count"):
        planner.plan(qwen, "H200", n_chips=8, price_per_gpu_hour=1, len_ctx=4096, tp=2, ep=2)


def test_pipeline_stages_hold_a_share_of_the_layers_and_match_dp_replicas_in_step_time():
    tp_pp = planner.plan("llama-3-70b", "H100", n_chips=8, price_per_gpu_hour=1, len_ctx=4096, tp=2, pp=2,
                         batch=64)
    dp = planner.plan("llama-3-70b", "H100", n_chips=8, price_per_gpu_hour=1, len_ctx=4096, tp=2, batch=64)
    assert tp_pp.numbers["decode"]["step_time"] == pytest.approx(dp.numbers["decode"]["step_time"])
    assert tp_pp.numbers["decode"]["fit_limit"] > dp.numbers["decode"]["fit_limit"]   # half the weights per GPU


def test_request_lengths_give_ttft_end_to_end_and_throughput_with_prefill():
    p = planner.plan("llama-3.1-8b", "H100", price_per_gpu_hour=1, len_in=2000, len_out=500)
    got, d = p.numbers, p.deployment
    assert got["inputs"]["len_ctx"] == 2000 + 500 / 2
    first = roofline.prefill_bound(models.get("llama-3.1-8b"), d, len_in=2000, compute_dtype="fp8", layout="tp",
                                   weight_dtype="fp8")
    assert got["requests"]["ttft"] == pytest.approx(first["t_prefill"])
    step, batch = got["decode"]["step_time"], got["decode"]["batch"]
    assert got["requests"]["end_to_end"] == pytest.approx(first["t_prefill"] + 500 * step)
    assert got["requests"]["output_tokens_per_s"] == pytest.approx(500 / (first["t_prefill"] + 500 * step / batch))
    cached = planner.plan("llama-3.1-8b", "H100", price_per_gpu_hour=1, len_in=2000, len_out=500, hit_rate=0.5)
    assert cached.numbers["requests"]["ttft"] < got["requests"]["ttft"]
    faster = planner.plan("llama-3.1-8b", "H100", price_per_gpu_hour=1, len_in=2000, len_out=500,
                          tokens_per_step=2)
    assert faster.numbers["requests"]["end_to_end"] < got["requests"]["end_to_end"]
    with pytest.raises(ValueError, match="len_in and len_out"):
        planner.plan("llama-3.1-8b", "H100", price_per_gpu_hour=1, len_in=2000)


def test_the_runtime_reserve_keeps_a_tenth_of_hbm_by_default():
    full = planner.plan("llama-3.1-8b", "H100", price_per_gpu_hour=1, len_ctx=4096, memory_utilization=1.0)
    kept = planner.plan("llama-3.1-8b", "H100", price_per_gpu_hour=1, len_ctx=4096)
    assert kept.numbers["capacity"]["hbm_per_gpu"] == pytest.approx(0.9 * full.numbers["capacity"]["hbm_per_gpu"])
    assert kept.numbers["decode"]["fit_limit"] < full.numbers["decode"]["fit_limit"]
    assert planner.MEMORY_UTILIZATION == 0.9


def test_formats_read_the_same_way_everywhere():
    for spelling in ("FP8", " fp8 ", "Fp-8", "float8"):
        assert planner.format_name(spelling, "kv_dtype") == "fp8"
    assert planner.format_name("bfloat16") == "bf16" and planner.format_name(0.53125) == 0.53125
    with pytest.raises(ValueError, match="--kv must be a format name"):
        planner.format_name("fp7", "--kv")
    p = planner.plan("llama-3.1-8b", "H100", price_per_gpu_hour=1, len_ctx=4096, kv_dtype="FP8",
                     compute_dtype="FP8", weight_dtype="BF16")
    assert p.decode_settings["compute_dtype"] == "fp8" and p.decode_settings["kv_dtype"] == "fp8"
    result = _cli("llama-3.1-8b", "H100", "--price", "2", "--context", "1024", "--kv", "FP8", "--compute", "FP8")
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("args, words", [
    (["--gpus", "1" * 60], "--gpus is too large"),
    (["--gpus", "3", "--layout", "tp"], "--gpus"),
    (["--context", "0"], "--context must be"),
    (["--tp", "3", "--gpus", "8"], "--tp × --pp must divide"),
    (["--compute", "fp4"], "--compute must be one of"),
    (["--input-len", "100"], "--input-len and --output-len go together"),
    (["--hit-rate", "1.5"], "--hit-rate must be in [0, 1)"),
    (["--memory-utilization", "1.5"], "--memory-utilization"),
])
def test_cli_errors_name_the_flag_on_one_line(args, words):
    base = ["llama-3.1-8b", "H100", "--price", "2"] + ([] if "--context" in args or "--input-len" in args
                                                       else ["--context", "1024"])
    result = _cli(*base, *args)
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1 and words in result.stderr, result.stderr
    for name in ("len_ctx", "n_chips", "price_per_gpu_hour", "compute_dtype", "Traceback"):
        assert name not in result.stderr


def test_json_is_strict_and_carries_the_title_and_the_notes(tmp_path):
    folder = tmp_path / "my-llama-8b"
    folder.mkdir()
    config = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
              "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256}
    (folder / "config.json").write_text(json.dumps(config))
    result = _cli(str(folder), "H100", "--price", "2", "--context", "200000", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout, parse_constant=lambda name: pytest.fail(f"non-JSON constant {name}"))
    assert data["title"].startswith("Plan: my-llama-8b on 1 × H100 · decode context 200,000 tokens as given")
    assert "transformers' defaults" in data["notes"]
    assert '"inf"' not in result.stdout and "Infinity" not in result.stdout
    named = _cli(str(folder / "config.json"), "H100", "--price", "2", "--context", "1024", "--name", "ours")
    assert named.stdout.startswith("Plan: ours on 1 × H100") and "Model notes" in named.stdout
    config["_name_or_path"] = "org/Some-Model"
    assert planner.plan(config, "H100", price_per_gpu_hour=1, len_ctx=1024).heading.startswith("Plan: org/Some-Model")


def test_a_closed_pipe_exits_quietly():
    command = [sys.executable, "-m", "lecture_lib.plan", "deepseek-v3", "HGX H200", "--price", "3",
               "--input-len", "1000", "--output-len", "1000", "--sweep-context",
               ",".join(str(2 ** k) for k in range(8, 40))]
    shell = subprocess.run(" ".join(f"'{part}'" for part in command) + " | head -1", shell=True, cwd=ROOT,
                           capture_output=True, text=True, timeout=300)
    assert shell.stdout.startswith("Plan:") and "Traceback" not in shell.stderr and "BrokenPipe" not in shell.stderr


def test_help_lists_the_formats_and_explains_each_length():
    result = _cli("--help")
    for word in ("fp8", "bf16", "fp4", "int8", "--input-len", "--output-len", "--context", "time to first token",
                 "--sweep-context", "--memory-utilization", "--tokens-per-step", "--hit-rate", "--tp", "--pp", "--ep"):
        assert word in result.stdout, word


def test_the_context_sweep_is_a_table_and_in_the_json():
    args = ["llama-3.1-8b", "H100", "--price", "2", "--context", "4096", "--sweep-context", "1024,8192,2000000"]
    text, as_json = _cli(*args), _cli(*args, "--json")
    assert "Sweep over context" in text.stdout and "does not fit" in text.stdout
    rows = json.loads(as_json.stdout)["sweep_context"]
    assert [row["context"] for row in rows] == [1024, 8192, 2000000] and rows[-1]["batch"] is None
    assert rows[0]["tokens_per_s_per_gpu"] > rows[1]["tokens_per_s_per_gpu"]


# --- Issue 30 §4: Chapter 9's explorer plans your own config, on 1-8 GPUs of a chip, in any format ---------

def _config_folder(tmp_path):
    folder = tmp_path / "my-8b"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({
        "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256, "torch_dtype": "bfloat16"}))
    return folder


def test_the_explorer_takes_a_config_path_a_folder_or_pasted_json(tmp_path):
    from lecture_lib.explorers import plan as px

    folder = _config_folder(tmp_path)
    explorer = px.PlanExplorer(model=str(folder / "config.json"), system="4 × H100", weights="auto")
    try:
        assert explorer.controls["model"].value == "my-8b (your config)"
        expected = planner.plan(str(folder), "H100", n_chips=4, price_per_gpu_hour=explorer.values["price"],
                                len_ctx=explorer.values["len_ctx"], latency_target=explorer.values["target_ms"] / 1e3)
        assert html.escape(next(r.text for r in expected.section("decode") if r.key == "tokens_per_s_per_gpu")) in explorer.readout.value
        assert "bfloat16" in explorer.readout.value            # the config's own format, and the plan says so
        pasted = (folder / "config.json").read_text().replace("{", '{"_name_or_path": "org/pasted", ', 1)
        assert explorer.add_model(pasted) == "org/pasted (your config)"
        assert explorer.controls["model"].value == "org/pasted (your config)"
        with pytest.raises(ValueError, match="model must be a readable"):
            px.PlanExplorer(model=str(tmp_path / "missing" / "config.json"))
    finally:
        explorer.view.figure.clear()


def test_the_explorer_plans_one_to_eight_gpus_of_a_chip_in_any_format():
    from lecture_lib.explorers import plan as px

    choices = px.hardware_choices()
    assert {f"{n} × H100" for n in (1, 2, 4, 8)} <= set(choices) and "HGX H200" in choices
    explorer = px.PlanExplorer(model="llama-3.1-8b", system="2 × B200", weights=measurements.NVFP4_BYTES)
    try:
        p = planner.plan("llama-3.1-8b", "B200", n_chips=2, price_per_gpu_hour=explorer.values["price"],
                         len_ctx=explorer.values["len_ctx"], latency_target=explorer.values["target_ms"] / 1e3,
                         weight_dtype=measurements.NVFP4_BYTES, compute_dtype="fp4")
        assert html.escape(next(r.text for r in p.section("decode") if r.key == "tokens_per_s_per_gpu")) in explorer.readout.value
        for fmt in (value for _, value in px.WEIGHT_FORMATS):
            explorer.controls["weights"].value = fmt
            assert "tokens/s per GPU" in explorer.readout.value
        explorer.controls["system"].value = "8 × A100"           # no FP8: the plan falls back and says why
        explorer.controls["weights"].value = "fp8"
        assert "does not compute in FP8" in explorer.readout.value
    finally:
        explorer.view.figure.clear()


# --- issue 48 §4: quantized formats as their tools define them; every flag's error names that flag -----------

def test_int4_g_minus_1_is_gptq_per_channel_not_groups_of_one():
    name, per_value, description, _ = planner.quantized_format("int4-g-1")
    assert name == "int4-g-1" and per_value == 0.5 and "one group per column" in description
    assert planner.quantized_format("int4g-1")[1] == 0.5 and planner.quantized_format("gptq-g-1")[1] == 0.5
    assert planner.quantized_format("int4-g1")[1] == 0.5 + 2.5 / 1      # groups of one: what "g1" says
    out = _cli("llama-3-70b", "HGX H100", "--context", "1000", "--weights", "int4-g-1")
    assert out.returncode == 0 and "int4-g-1 (4 bits (0.5 bytes))" in out.stdout


def test_a_negative_group_other_than_minus_1_is_no_format():
    assert planner.quantized_format("int4-g-64") is None              # the sign is read, not dropped
    assert planner.quantized_format("int4-g64")[0] == "int4-g64"
    with pytest.raises(ValueError, match="weight_dtype"):
        planner.format_name("int4-g-64", "weight_dtype")
    out = _cli("llama-3-70b", "HGX H100", "--context", "1000", "--weights", "int4-g-64")
    assert out.returncode == 2 and "--weights" in out.stderr


@pytest.mark.parametrize("flag", ["--weights", "--expert-weights", "--kv"])
def test_a_format_given_as_a_tiny_byte_count_names_its_own_flag(flag):
    out = _cli("deepseek-v3", "HGX H200", "--context", "1000", flag, "1e-320")
    assert out.returncode == 2
    line = out.stderr.strip().splitlines()[-1]
    assert f"argument {flag}:" in line and "half a bit" in line
    others = {"--weights", "--expert-weights", "--kv"} - {flag}
    assert not any(f"{other} " in line or f"{other}:" in line or f"{other}=" in line for other in others)


def test_sweep_context_with_an_empty_entry_is_refused_naming_the_flag():
    out = _cli("llama-3-70b", "HGX H100", "--context", "1000", "--sweep-context", "1,,2")
    assert out.returncode == 2 and "--sweep-context" in out.stderr and "empty entry" in out.stderr


@pytest.mark.parametrize("flag", ["--input-len", "--output-len"])
def test_request_lengths_must_be_whole_tokens(flag):
    args = {"--input-len": "1000", "--output-len": "100", flag: "2.5"}
    out = _cli("llama-3-70b", "HGX H100", *[part for pair in args.items() for part in pair])
    assert out.returncode == 2 and f"argument {flag}:" in out.stderr and "whole number of tokens" in out.stderr
    good = {"--input-len": "1000", "--output-len": "100", flag: "1e3"}
    assert _cli("llama-3-70b", "HGX H100", *[part for pair in good.items() for part in pair]).returncode == 0


BAD_VALUES = {"--context": "-5", "--input-len": "0", "--output-len": "0", "--latency-ms": "-1", "--batch": "0",
              "--gpus": "0", "--systems": "0", "--tp": "3", "--pp": "7", "--ep": "5", "--weights": "fp7",
              "--expert-weights": "fp7", "--kv": "fp7", "--compute": "fp4", "--attention": "fp4",
              "--tokens-per-step": "0.5", "--hit-rate": "1.5", "--memory-utilization": "2", "--price": "-3",
              "--sweep-context": "0"}


@pytest.mark.parametrize("flag", sorted(BAD_VALUES))
def test_every_flag_error_names_that_flag(flag):
    args = {"--context": "1000"}
    if flag in ("--input-len", "--output-len"):
        args = {"--input-len": "1000", "--output-len": "100"}
    args[flag] = BAD_VALUES[flag]
    system = "H100" if flag == "--gpus" else "HGX H100"
    extra = ["--gpus", "8"] if flag in ("--tp", "--pp", "--ep") else []
    model = "mixtral-8x7b" if flag == "--ep" else "llama-3-70b"
    out = _cli(model, system if not extra else "H100", *extra, *[part for pair in args.items() for part in pair])
    assert out.returncode == 2, out.stdout[:200]
    assert flag in out.stderr, out.stderr


# --- issue 51 §4: names, Hub ids, the KV default and borrowed bands said plainly -----------------------------------

def test_a_name_read_as_a_presets_shapes_is_said_in_the_first_line():
    r1 = planner.plan("deepseek-r1", "HGX H200", len_ctx=4000)
    assert "deepseek-r1 (read as deepseek-v3's shapes)" in r1.heading
    alias = planner.plan("llama-3.1-70b", "HGX H100", len_ctx=4000)
    assert "llama-3.1-70b (read as llama-3-70b's shapes)" in alias.heading
    assert "read as llama-3-70b" in alias.to_dict()["inputs"]["model"]["text"]
    plain = planner.plan("llama-3-70b", "HGX H100", len_ctx=4000)
    assert "read as" not in plain.heading


def test_a_hugging_face_model_id_is_refused_saying_no_network_is_used_and_how_to_pass_a_config():
    with pytest.raises(ValueError, match="no network") as error:
        planner.plan("meta-llama/Llama-3.3-70B-Instruct", "H100", len_ctx=1000)
    assert "config.json" in str(error.value) and "'llama-3.3-70b'" in str(error.value)
    with pytest.raises(ValueError, match="no network") as error:
        planner.plan("some-org/unknown-model", "H100", len_ctx=1000)
    assert "deepseek-v3" in str(error.value)          # the presets are listed
    result = _cli("meta-llama/Llama-3.1-70B", "H100")
    assert result.returncode == 2 and "huggingface-cli download" in result.stderr
    assert "llama-4-maverick" in _cli("--help").stdout   # --help lists the known names


def test_the_kv_default_is_said_in_the_first_lines():
    p = planner.plan("llama-3-70b", "HGX H100", len_ctx=4000)
    assert "KV bf16 (the planner's default, not read from the checkpoint" in p.headline[1] and "--kv fp8" in p.headline[1]
    given = planner.plan("llama-3-70b", "HGX H100", len_ctx=4000, kv_dtype="fp8")
    assert "default" not in given.headline[1]


def test_an_amd_plans_reality_band_says_it_borrows_nvidias_rows():
    p = planner.plan("llama-2-70b", "MI325X platform", len_in=500, len_out=300)
    got = p.numbers["reality"]
    assert "NVIDIA" in got["requests_borrowed"] and "mlperf41-llama2-70b-mi300x8" in got["requests_borrowed"]
    nvidia = planner.plan("llama-2-70b", "HGX H200", len_in=500, len_out=300)
    assert "requests_borrowed" not in nvidia.numbers["reality"]
    band = measurements.reality_band(kind="serving", moe=False, regime="memory", vendor="AMD")
    assert band["borrowed"] and band["n"] == measurements.reality_band(kind="serving", moe=False, regime="memory")["n"]
    assert "BORROWED" in p.to_dict()["realistic"]["term_engine"]["text"]
