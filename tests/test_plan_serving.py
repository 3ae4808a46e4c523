"""Issue 51: the planner a serving engineer trusts. Inputs an engineer has (no price, TTFT and TPOT limits, a
scenario, lengths always stated), chips from presets or flags, model aliases, the formats in the headline, and the
realistic estimate beside the bound."""

import json

import pytest
from plan_cli import run_cli as _cli

from lecture_lib import hardware, measurements, models, realistic
from lecture_lib import plan as planner


def test_price_is_optional_and_without_it_there_are_no_cost_lines():
    out = _cli("llama-3-70b", "HGX H200", "--input-len", "1000", "--output-len", "200")
    assert out.returncode == 0, out.stderr
    assert "Cost (bound)" not in out.stdout and "$" not in out.stdout
    assert "no cost lines" in out.stdout
    priced = _cli("llama-3-70b", "HGX H200", "--input-len", "1000", "--output-len", "200", "--price", "3")
    assert "$ per million output tokens" in priced.stdout
    assert planner.plan("llama-3-70b", "HGX H200", len_ctx=1000).numbers["cost"] == {}


def test_a_plan_with_default_lengths_says_so_in_its_first_line():
    out = _cli("llama-3-70b", "HGX H200")
    first = out.stdout.splitlines()[0]
    assert "DEFAULT request lengths 1,000 in / 1,000 out" in first
    given = _cli("llama-3-70b", "HGX H200", "--input-len", "3000", "--output-len", "500").stdout.splitlines()[0]
    assert "requests of 3,000 in / 500 out tokens" in given and "DEFAULT" not in given
    context = _cli("llama-3-70b", "HGX H200", "--context", "8192").stdout.splitlines()[0]
    assert "decode context 8,192 tokens as given" in context
    p = planner.plan("llama-3-70b", "HGX H200")
    assert p.lengths == {"input": 1000, "output": 1000, "context": 1500, "defaulted": True, "context_given": False}
    assert json.loads(p.to_json())["lengths"]["defaulted"] is True


def test_ttft_and_tpot_limits_give_the_largest_batch_that_meets_both_and_say_which_binds():
    p = planner.plan("llama-3-70b", "HGX H200", len_in=2000, len_out=500, ttft_target=2.0, tpot_target=0.03)
    b = p.numbers["decode"]["batch"]
    assert 1 < b < p.numbers["decode"]["fit_limit"]
    loaded = p.numbers["requests"]
    assert loaded["tpot_under_load"] <= 0.03 and loaded["ttft_under_load"] <= 2.0
    assert "time per output token" in p.numbers["decode"]["binds"]
    one_more = planner.plan("llama-3-70b", "HGX H200", len_in=2000, len_out=500, batch=b + 1)
    assert one_more.numbers["requests"]["tpot_under_load"] > 0.03      # the next sequence breaks the limit
    assert "bound by the time per output token limit" in p.headline[2]


def test_the_formulas_under_load_are_the_throughput_accounting():
    p = planner.plan("llama-3-70b", "HGX H200", len_in=2000, len_out=500, batch=64)
    req, dec = p.numbers["requests"], p.numbers["decode"]
    # B output tokens per TPOT across the deployment is the throughput of requests
    assert 64 / req["tpot_under_load"] == pytest.approx(req["output_tokens_per_s"], rel=1e-9)
    assert req["ttft_under_load"] == pytest.approx(req["ttft"] + dec["step_time"])


def test_a_ttft_limit_below_the_prompts_own_prefill_leaves_no_batch():
    p = planner.plan("llama-3-70b", "HGX H100", len_in=100_000, len_out=100, ttft_target=0.01)
    assert p.numbers["decode"]["batch"] is None and "time to first token" in p.numbers["decode"]["binds"]


def test_scenarios():
    assert planner.plan("llama-3-70b", "HGX H200", len_ctx=1000).numbers["inputs"]["scenario"] == "offline"
    assert planner.plan("llama-3-70b", "HGX H200", len_ctx=1000,
                        tpot_target=0.05).numbers["inputs"]["scenario"] == "server"
    with pytest.raises(ValueError, match="offline"):
        planner.plan("llama-3-70b", "HGX H200", len_ctx=1000, scenario="offline", tpot_target=0.05)
    with pytest.raises(ValueError, match="needs a limit"):
        planner.plan("llama-3-70b", "HGX H200", len_ctx=1000, scenario="server")
    out = _cli("llama-3-70b", "HGX H200", "--scenario", "server")
    assert out.returncode == 2 and "--scenario" in out.stderr
    out = _cli("llama-3-70b", "HGX H200", "--scenario", "server", "--tpot-ms", "40", "--ttft-ms", "1500")
    assert out.returncode == 0 and "server: the largest throughput" in out.stdout
    with pytest.raises(ValueError, match="len_in"):
        planner.plan("llama-3-70b", "HGX H200", len_ctx=1000, ttft_target=1.0)


def test_model_aliases_share_a_presets_shapes_and_the_plan_says_so():
    r1 = models.get("DeepSeek-R1")
    assert r1.name == "deepseek-r1" and r1.params_total == models.get("deepseek-v3").params_total
    assert models.architecture_of("deepseek-r1") == "deepseek-v3" and models.architecture_of("deepseek-v3") is None
    out = _cli("deepseek-r1", "HGX B200", "--input-len", "1000", "--output-len", "3700")
    assert out.returncode == 0 and "deepseek-r1 (deepseek-v3's architecture" in out.stdout
    assert "huggingface.co/deepseek-ai/DeepSeek-R1" in out.stdout
    with pytest.raises(KeyError, match="deepseek-r1"):
        models.get("deepseek-r2")


def test_a_format_the_chip_lacks_is_said_in_the_headline_with_the_kv_beside_the_weights():
    p = planner.plan("llama-3-70b", "HGX H200", weight_dtype="fp4", len_ctx=1000)
    assert "H200 does not compute in FP4" in p.headline[1]
    assert "weights fp4" in p.headline[1] and "KV bf16 (the planner's default" in p.headline[1]
    fp8 = planner.plan("llama-3-70b", "HGX H200", kv_dtype="fp8", len_ctx=1000)
    assert "KV fp8 ·" in fp8.headline[1] and "does not compute" not in fp8.headline[1]


@pytest.mark.parametrize("system", ["MI325X platform", "MI355X platform", "HGX B300", "H200 NVL 4-way"])
def test_the_new_presets_plan(system):
    p = planner.plan("deepseek-r1" if "H200" not in system else "llama-3-70b", system, len_in=1000, len_out=1000)
    assert p.numbers["decode"]["batch"] and p.realistic["tokens_per_s"] < p.numbers["requests"]["output_tokens_per_s"]


def test_a_custom_chip_from_flags_or_a_json_file(tmp_path):
    flags = _cli("deepseek-r1", "MI300X", "--gpus", "8", "--hbm-gb", "256", "--hbm-tbs", "6")
    assert flags.returncode == 0 and "custom chip" in flags.stdout and "256 GB at 6 TB/s" in flags.stdout
    path = tmp_path / "chip.json"
    path.write_text(json.dumps({"name": "MyChip", "hbm_gb": 256, "hbm_tb_s": 6,
                                "tflops": {"bf16": 1307.4, "fp8": 2614.9}, "scale_up": 8, "scale_up_gb_s": 448}))
    from_file = _cli("llama-3-70b", str(path), "--gpus", "8")
    assert from_file.returncode == 0 and "8 × MyChip" in from_file.stdout
    missing = _cli("llama-3-70b", "NewChip", "--hbm-gb", "80")
    assert missing.returncode == 2 and "--hbm-tbs" in missing.stderr and "--tflops" in missing.stderr
    bad = _cli("llama-3-70b", "NewChip", "--hbm-gb", "80", "--hbm-tbs", "3", "--tflops", "fp6=100")
    assert bad.returncode == 2 and "--tflops" in bad.stderr
    same = planner.plan("llama-3-70b", hardware.custom_chip(name="h100-again", base="H100"), n_chips=8, len_ctx=1000)
    ref = planner.plan("llama-3-70b", "H100", n_chips=8, len_ctx=1000)
    assert same.numbers["decode"]["tokens_per_s"] == ref.numbers["decode"]["tokens_per_s"]


def test_the_realistic_estimate_shows_each_term_and_each_can_be_switched_off():
    p = planner.plan("deepseek-r1", "HGX B200", len_in=1000, len_out=3700)
    got = p.numbers["realistic"]
    assert 0 < got["share_of_bound"] < 1
    for term in realistic.TERMS:
        assert 0 <= got[f"term_{term}"] < 1
    off = planner.plan("deepseek-r1", "HGX B200", len_in=1000, len_out=3700,
                       realistic_terms=set(realistic.TERMS) - {"engine"})
    assert off.numbers["realistic"]["term_engine"] is None
    assert off.realistic["tokens_per_s"] > p.realistic["tokens_per_s"]
    cli = _cli("deepseek-r1", "HGX B200", "--without", "engine", "--without", "kernels")
    assert cli.returncode == 0 and "off: engine" in cli.stdout and "off: kernels" in cli.stdout
    assert _cli("deepseek-r1", "HGX B200", "--without", "magic").returncode == 2


def test_with_every_term_off_the_realistic_estimate_is_the_bound():
    p = planner.plan("deepseek-r1", "HGX H200", len_ctx=4000, realistic_terms=())
    assert p.realistic["share_of_bound"] == pytest.approx(1.0, rel=1e-9)


def test_a_reasoning_moe_on_eight_b200_lands_near_a_tenth_of_its_bound():
    # TensorRT-LLM's DeepSeek-R1 max-throughput row: 14% of its bound; the realistic estimate explains most of it
    row = measurements.get("trtllm-dsr1-b200-maxtput")
    detail = row.realistic_detail()
    assert row.efficiency < 0.2 and detail["realistic"] < 0.25 * row.bound


def test_a_sweep_without_a_price_has_no_cost_column_and_json_gives_null():
    out = _cli("llama-3-70b", "HGX H100", "--context", "1000", "--sweep-context", "1024,8192")
    assert out.returncode == 0 and "$/M out" not in out.stdout and "8,192 tokens" in out.stdout
    data = json.loads(_cli("llama-3-70b", "HGX H100", "--context", "1000", "--sweep-context", "1024", "--json").stdout)
    assert data["sweep_context"][0]["usd_per_million_output"] is None


def test_a_tpu_plans_headline_says_chip():
    p = planner.plan("llama-3.1-8b", "TPU v5e-256", len_in=1000, len_out=100)
    assert "per chip" in p.headline[2] and "GPU" not in " ".join(p.headline)


@pytest.mark.parametrize("flag", ["--ttft-ms", "--tpot-ms", "--latency-ms"])
def test_millisecond_limits_are_checked_in_milliseconds(flag):
    args = ["llama-3-70b", "HGX H100", "--input-len", "100", "--output-len", "10", flag]
    for bad in ("0", "-5", "1e9"):
        out = _cli(*args, bad)
        assert out.returncode == 2 and f"{flag} must be > 0 and at most 10,000,000 ms" in out.stderr


def test_the_scale_up_links_are_named_after_the_chips_maker():
    """An engineer's walk (issue 51) found MI300X and MI325X plans calling their all-reduce links NVLink."""
    from lecture_lib import hardware, plan

    assert plan.scale_up_link_name(hardware.get("MI325X")) == "Infinity Fabric"
    assert plan.scale_up_link_name(hardware.get("H200")) == "NVLink"
    assert plan.scale_up_link_name(hardware.get("TPU v5p")) == "ICI"
    custom = hardware.custom_chip(name="my-chip", hbm_capacity=80e9, hbm_bandwidth=3e12, flops={"bf16": 1e15})
    assert plan.scale_up_link_name(custom) == "the scale-up links"


def test_an_moe_plan_says_how_the_estimate_did_on_chapter_8s_rows_and_names_a_class_it_misses():
    """Issue 51 §4: the realistic estimate misses 5 of Chapter 8's 23 MoE rows; a plan says so, and a plan of a class
    it misses (memory-tight H100s) says why (measurements.REALISTIC_MISSES)."""
    p = planner.plan("llama-4-maverick", "HGX H100", len_in=1000, len_out=1000)
    got = p.numbers["realistic"]
    table = measurements.realistic_table()
    assert got["against_rows"] == {"within": sum(row["within"] for row in table), "rows": len(table)}
    assert "memory-tight" in p.to_dict()["realistic"]["caveat_memory_tight"]["text"]
    r1 = planner.plan("deepseek-r1", "HGX B200", len_in=1024, len_out=2048)
    assert "caveat_memory_tight" not in r1.numbers["realistic"]
    # DP attention with prompts in flight: the ranks wait for the busiest one (modelled now: realistic.dp_prefill_wait)
    assert r1.numbers["realistic"]["term_dp_prefill_wait"] > 0.05
    assert "busiest rank prefills" in r1.to_dict()["realistic"]["term_dp_prefill_wait"]["text"]
    dense = planner.plan("llama-2-70b", "MI325X platform", len_in=500, len_out=300)   # DP replicas, not synchronised
    assert dense.numbers["realistic"]["term_dp_prefill_wait"] == 0
    dense = planner.plan("llama-3-70b", "HGX H100", len_in=1000, len_out=1000)
    assert "against_rows" not in dense.numbers["realistic"]


# --- issue 51 §3: realistic latencies under load, and a short prompt's weight read ------------------------------

def test_a_short_prompts_time_to_first_token_is_at_least_one_read_of_its_gpus_weights():
    p = planner.plan("llama-3-70b", "H100", n_chips=2, len_in=100, len_out=300)
    ttft = p.numbers["requests"]["ttft"]
    weights = p.numbers["capacity"]["headline_weights_per_gpu"] if "headline_weights_per_gpu" in \
        p.numbers["capacity"] else p.numbers["capacity"]["tp_weights_per_gpu"]
    assert ttft == pytest.approx(weights / hardware.get("H100").hbm_bandwidth, rel=1e-9)
    assert "one read of each GPU's" in p.to_dict()["requests"]["ttft"]["text"]
    long = planner.plan("llama-3-70b", "H100", n_chips=2, len_in=4000, len_out=300)
    assert long.numbers["requests"]["ttft"] > weights / hardware.get("H100").hbm_bandwidth
    assert "its compute" in long.to_dict()["requests"]["ttft"]["text"]
    # the formula: the longer of compute and one read; efficiencies only lengthen it
    assert realistic.prefill_alone(t_compute=1e-3, weights_per_device=35e9, hbm_bandwidth=3.35e12) == \
        pytest.approx(35e9 / 3.35e12)
    assert realistic.prefill_alone(t_compute=1.0, weights_per_device=35e9, hbm_bandwidth=3.35e12) == 1.0
    assert realistic.prefill_alone(t_compute=1e-3, weights_per_device=35e9, hbm_bandwidth=3.35e12,
                                   hbm_efficiency=0.5) == pytest.approx(2 * 35e9 / 3.35e12)


def test_the_realistic_estimate_meets_server_limits_with_its_own_batch_and_gives_its_latencies():
    args = dict(len_in=2000, len_out=500, ttft_target=2.0, tpot_target=0.05)
    p = planner.plan("llama-3-70b", "HGX H100", **args)
    real = p.realistic
    assert real["batch"] < p.numbers["decode"]["batch"]               # the bound's batch breaks TPOT realistically
    assert real["tpot"] <= 0.05 and real["ttft"] <= 2.0
    assert p.numbers["realistic"]["batch"] == real["batch"]
    assert "time per output token" in p.numbers["realistic"]["binds"]
    assert real["ttft"] > p.numbers["requests"]["ttft_under_load"]     # the realistic latencies exceed the bound's
    assert "meets the limits realistically" in p.headline[2]
    offline = planner.plan("llama-3-70b", "HGX H100", len_in=2000, len_out=500)
    assert offline.realistic["batch"] == offline.numbers["decode"]["batch"]
    assert offline.numbers["realistic"]["tpot_under_load"] > offline.numbers["requests"]["tpot_under_load"]
    tight = planner.plan("llama-3-70b", "HGX H100", len_in=2000, len_out=500, tpot_target=0.006)
    assert tight.numbers["decode"]["batch"] and tight.realistic is None    # meets 6 ms only in the bound
    assert tight.numbers["inputs"]["parallel"]["tp"] == 8     # a TPOT limit searches the TP widths as a step limit
    assert "none" in tight.to_dict()["realistic"]["batch"]["text"]


def test_the_headline_labels_per_gpu_and_per_deployment():
    p = planner.plan("llama-3-70b", "HGX H100", len_in=1000, len_out=1000)
    line = p.headline[2]
    assert "per GPU =" in line and "per 8-GPU deployment" in line and "per deployment" in line
