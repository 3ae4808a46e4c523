"""Issue 30, the engineer's walk: a practitioner planned three real configs (phi-4 bf16 dense, Qwen3-30B-A3B MoE,
Qwen3-32B-AWQ) and found these; each test failed before its fix."""

import json
import re

import pytest

from engineer_configs import PHI_4, QWEN3_30B_A3B, QWEN3_32B_AWQ
from lecture_lib import collectives, hardware, measurements, roofline
from lecture_lib import plan as planner
from plan_cli import run_cli as _cli


def _plan(config, system="H100", **kwargs):
    args = dict(price_per_gpu_hour=2, len_ctx=8192) | kwargs
    return planner.plan(config, system, **args)


# --- 1. pipeline stages ---------------------------------------------------------------------------

def test_pp8_on_phi4_holds_the_pooled_capacity_not_the_tp8_row_its_kv_heads_refuse():
    """PP8 × TP1: each GPU holds 5 of phi-4's 40 layers with all 10 KV heads, so nothing is copied and the batch
    that fits is the pooled one (before: 203, the TP8 row, a layout the 10 KV heads refuse)."""
    p = _plan(PHI_4, n_chips=8, pp=8)
    got = p.numbers
    assert got["decode"]["fit_limit"] == pytest.approx(got["capacity"]["pooled_max_batch"], rel=0.02)
    assert got["decode"]["fit_limit"] > 1.5 * 203       # the TP8 figure it gave before
    assert got["capacity"]["tp_max_batch"] is None      # and the TP8 row itself is refused (10 KV heads)
    assert "PP 8" in p.section("inputs")[[r.key for r in p.section("inputs")].index("layout")].text


def test_pp8_on_an_moe_model_copies_no_kv_and_its_floor_is_one_gpus():
    """Qwen3-30B-A3B (4 KV heads) on 8 H100s with PP8: no KV copies (TP1 per stage), and a token passes all
    stages in turn, so the latency floor is one GPU's (before: 900 µs, the DP+EP floor, and the TP8 capacity)."""
    pp8 = _plan(QWEN3_30B_A3B, n_chips=8, pp=8)
    one = _plan(QWEN3_30B_A3B, n_chips=1)
    assert pp8.numbers["decode"]["latency_floor"] == pytest.approx(one.numbers["decode"]["latency_floor"])
    assert pp8.numbers["decode"]["latency_floor"] > 1.5e-3
    d = collectives.deployment(hardware.get("H100"), n_chips=8)
    fit_layout = pp8.pipeline["fit_layout"]
    assert roofline.device_memory(pp8.model, d, layout=fit_layout, batch=1, len_ctx=100)["r_kv"] == 1
    assert pp8.numbers["decode"]["fit_limit"] == pytest.approx(pp8.numbers["capacity"]["pooled_max_batch"],
                                                               rel=0.02)


def test_pp_given_is_described_not_called_unneeded():
    p = _plan(PHI_4, n_chips=8, pp=8)
    texts = " ".join(row.text for row in p.section("layouts"))
    assert "none needed" not in texts
    assert p.numbers["layouts"]["pp_micro_batches_needed"] == 8


def test_pp_throughput_is_pp_micro_batches_of_one_stage_group():
    """A cycle is one micro-batch of B/pp passing every stage: pp × the stage group's tokens/s."""
    p = _plan(PHI_4, n_chips=8, pp=8, batch=64)
    one = planner.plan(PHI_4, "H100", n_chips=1, price_per_gpu_hour=2, len_ctx=8192, batch=8)
    assert p.numbers["decode"]["step_time"] == pytest.approx(one.numbers["decode"]["step_time"])
    assert p.numbers["decode"]["tokens_per_s"] == pytest.approx(8 * one.numbers["decode"]["tokens_per_s"])
    assert p.decode_step(64)["t"] == p.numbers["decode"]["step_time"]


# --- 2. refused layouts, and no price for what does not fit ------------------------------------------

def test_the_capacity_table_shows_a_layout_the_heads_refuse_as_refused():
    """phi-4 (10 KV heads) on 4 TPU v5e chips: TP4 is refused by the plan's own checks, so its row says so
    (before: 28 sequences)."""
    p = planner.plan(PHI_4, "TPU v5e", n_chips=4, price_per_gpu_hour=1.2, len_ctx=4096)
    row = next(r for r in p.section("capacity") if r.key == "tp_max_batch")
    assert row.value is None and row.text.startswith("refused:") and "10 KV heads" in row.text
    assert "tp_weights_per_gpu" not in p.numbers["capacity"]
    # the headline layout (TP 2 × DP 2) is in the table too
    assert p.numbers["capacity"]["headline_max_batch"] == p.numbers["decode"]["fit_limit"]


def test_a_deployment_that_does_not_fit_has_no_price():
    """The headline does not fit (operating batch none): no $ per million input tokens (before: $0.0507). (On 4 TPU
    v5e the auto layout now finds pipeline stages that hold phi-4, so the TP layout is asked for.)"""
    p = planner.plan(PHI_4, "TPU v5e", n_chips=4, price_per_gpu_hour=1.2, len_ctx=4096, tp=2)
    assert p.numbers["decode"]["batch"] is None
    assert p.numbers["cost"]["usd_per_million_input"] is None
    assert "usd_per_million_output" not in p.numbers["cost"]
    assert "does not fit" in p.to_dict()["cost"]["usd_per_million_input"]["text"]


# --- 3. the auto layout on a pod ----------------------------------------------------------------------

def test_auto_layout_on_a_tpu_pod_picks_the_cheapest_valid_tp_and_says_why():
    """Qwen3-32B-AWQ on TPU v5e-256: TP 64 × DP 4 copied each of the 8 KV heads 8× (46.7 tok/s per chip); the auto
    layout now takes the TP width with the most tokens/s per chip, here TP 8 (as --tp 8 gives)."""
    auto = planner.plan(QWEN3_32B_AWQ, "TPU v5e-256", price_per_gpu_hour=1.2, len_ctx=8192)
    tp8 = planner.plan(QWEN3_32B_AWQ, "TPU v5e-256", price_per_gpu_hour=1.2, len_ctx=8192, tp=8)
    assert auto.numbers["inputs"]["parallel"] == {"tp": 8, "pp": 1, "ep": 1, "dp": 32}
    assert auto.numbers["decode"]["tokens_per_s_per_gpu"] == pytest.approx(tp8.numbers["decode"]["tokens_per_s_per_gpu"])
    tp64 = planner.plan(QWEN3_32B_AWQ, "TPU v5e-256", price_per_gpu_hour=1.2, len_ctx=8192, tp=64)
    assert auto.numbers["cost"]["usd_per_million_output"] < tp64.numbers["cost"]["usd_per_million_output"] / 5
    notes = " ".join(r.text for r in auto.rows if r.key.startswith("parallel_note"))
    assert "most decode tokens/s per chip" in notes and "TP 64" in notes


def test_auto_tp_on_one_hgx_is_still_all_eight():
    p = planner.plan("llama-3-70b", "HGX H100", price_per_gpu_hour=2, len_ctx=4096)
    assert p.numbers["inputs"]["parallel"] == {"tp": 8, "pp": 1, "ep": 1, "dp": 1}


# --- 5. past the model's max_position_embeddings -------------------------------------------------

def test_a_context_past_max_position_embeddings_is_warned_in_text_json_and_sweeps(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(PHI_4))
    p = _plan(PHI_4, n_chips=8, len_ctx=32768)
    assert p.numbers["inputs"]["context_warning"] == {"max_position_embeddings": 16384, "longest_context": 32768}
    assert "16,384" in p.text() and "WARNING" in p.text()
    assert "context_warning" not in _plan(PHI_4, n_chips=8, len_ctx=8192).numbers["inputs"]
    assert "context_warning" in _plan(PHI_4, n_chips=8, len_in=16000, len_out=1000).numbers["inputs"]
    out = _cli(str(path), "H100", "--gpus", "8", "--price", "2", "--context", "8192", "--sweep-context",
               "8192,32768", "--json")
    assert out.returncode == 0, out.stderr
    sweep = json.loads(out.stdout)["sweep_context"]
    assert [row["past_max_position_embeddings"] for row in sweep] == [False, True]
    text = _cli(str(path), "H100", "--gpus", "8", "--price", "2", "--context", "32768").stdout
    assert "max_position_embeddings" in text


# --- 6. named formats with scales -----------------------------------------------------------------

@pytest.mark.parametrize("name, bytes_", [("int4", 0.5 + 2.5 / 128), ("int4-g64", 0.5 + 2.5 / 64),
                                          ("awq", 0.5 + 2.5 / 128), ("NVFP4", 0.5625), ("mxfp4", 0.53125)])
def test_named_formats_with_scales_are_the_config_readers_bytes(name, bytes_):
    assert planner.format_name(name, "weight_dtype") == pytest.approx(bytes_)
    p = planner.plan(PHI_4, "B200", price_per_gpu_hour=2, len_ctx=8192, weight_dtype=name)
    assert p.numbers["capacity"]["pooled_weights_per_gpu"] == pytest.approx(p.model.params_total * bytes_)


def test_the_cli_takes_int4_nvfp4_and_mxfp4_and_lists_them_in_help(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(PHI_4))
    for name, compute in (("int4", "bf16"), ("nvfp4", "fp4"), ("mxfp4", "fp4")):
        out = _cli(str(path), "B200", "--price", "2", "--context", "8192", "--weights", name, "--json")
        assert out.returncode == 0, out.stderr       # before: "must be a format name (bf16, ...) or bytes per value"
        got = json.loads(out.stdout)
        assert got["inputs"]["formats"]["text"].startswith(name) and got["inputs"]["formats"]["text"].endswith(compute)
    help_text = _cli("--help").stdout
    assert "int4" in help_text and "nvfp4" in help_text and "mxfp4" in help_text


def test_given_weights_are_what_the_notes_say_is_used():
    """Before: the notes said "Weights: bfloat16 (torch_dtype)." as if in use under --weights fp8."""
    p = planner.plan(PHI_4, "H100", price_per_gpu_hour=2, len_ctx=8192, weight_dtype="fp8")
    assert "Not used by this plan: the config's weights: bfloat16 (torch_dtype)." in p.model_notes
    assert "This plan's weights: as given (fp8)" in p.model_notes
    assert p.to_dict()["notes"] == p.model_notes and p.model_notes in p.text()
    assert "Not used" not in planner.plan(PHI_4, "H100", price_per_gpu_hour=2, len_ctx=8192).model_notes


def test_the_explorer_takes_format_names_and_names_system_counts():
    from lecture_lib.explorers import plan as px
    assert px.PlanExplorer(model="llama-3.1-8b", system="2 × B200", weights="MXFP4").values["weights"] == 0.53125
    with pytest.raises(ValueError, match=r"system .*N one of 1, 2, 4, 8.*'3 × H100'"):
        px.PlanExplorer(model="llama-3.1-8b", system="3 × H100")


# --- 7. a batch that does not fit, and the layout in the JSON --------------------------------------

def test_a_given_batch_that_does_not_fit_reports_no_throughput():
    """Before: "10,000 sequences (as given; more than fits)" with tokens/s, $/M output and "fit: no"."""
    p = _plan(PHI_4, n_chips=8, batch=10000)
    decode = p.numbers["decode"]
    assert decode["batch"] is None and "does not fit" in p.section("decode")[-1].text
    for key in ("tokens_per_s", "tokens_per_s_per_gpu", "step_time", "fits_at_batch"):
        assert key not in decode
    assert "usd_per_million_output" not in p.numbers["cost"]
    assert _plan(PHI_4, n_chips=8, batch=100).numbers["decode"]["batch"] == 100


@pytest.mark.parametrize("config, kwargs, degrees", [
    (PHI_4, dict(n_chips=8), {"tp": 2, "pp": 1, "ep": 1, "dp": 4}),
    (QWEN3_30B_A3B, dict(n_chips=8), {"tp": 1, "pp": 1, "ep": 8, "dp": 8}),
    ("llama-3-70b", dict(n_chips=8), {"tp": 8, "pp": 1, "ep": 1, "dp": 1}),
])
def test_the_json_gives_the_layout_used_without_explicit_degrees(config, kwargs, degrees):
    """Before: inputs.parallel was missing unless tp, pp or ep were given."""
    got = _plan(config, **kwargs).to_dict()
    assert got["inputs"]["parallel"]["value"] == degrees
    pooled = _plan(config, layout=None, **kwargs).to_dict()
    assert pooled["inputs"]["parallel"]["value"] is None and "pooled" in pooled["inputs"]["parallel"]["text"]


# --- 4. communication beside the step bound --------------------------------------------------------

def test_the_step_bound_says_what_communication_it_leaves_out_and_how_much():
    """Before: the EP all-to-all was "33% of the step bound" but never added, and TP all-reduces not modelled."""
    moe_plan = planner.plan(QWEN3_30B_A3B, "HGX H100", n_systems=2, price_per_gpu_hour=2, len_ctx=8192)
    got = moe_plan.numbers
    assert got["decode"]["step_time_if_not_overlapped"] == pytest.approx(
        got["decode"]["step_time"] + got["layouts"]["a2a_per_step"] + got["decode"]["tp_all_reduce"])
    assert "not in it" in next(r.text for r in moe_plan.rows if r.key == "a2a_per_step")
    dense = planner.plan("llama-3-70b", "HGX H100", price_per_gpu_hour=2, len_ctx=8192)
    d, batch = dense.numbers["decode"], dense.numbers["decode"]["batch"]
    base, hop = collectives.nccl_latency("nvlink")
    assert d["tp_all_reduce"] == pytest.approx(collectives.tp_all_reduce_time(
        dense.model, tp=8, batch_tokens=batch, bytes_per_value=2, link_bandwidth=hardware.get("H100").scale_up_bandwidth,
        hop_latency=hop, base_latency=base))
    assert d["step_time_if_not_overlapped"] == pytest.approx(d["step_time"] + d["tp_all_reduce"])
    assert "overlap" in dense.text()


# --- 8. TPUs are chips ------------------------------------------------------------------------------

def test_a_tpu_plan_says_chip_not_gpu_and_an_unquoted_name_gets_a_hint():
    p = planner.plan(PHI_4, "TPU v5e", n_chips=8, price_per_gpu_hour=1, len_ctx=4096)
    assert "each chip's 16 GB" in p.text() and "GPU" not in p.text().replace("gpu_memory_utilization", "")
    assert "hbm_per_gpu" in p.numbers["capacity"]          # the keys stay
    assert "each GPU's" in planner.plan(PHI_4, "H100", price_per_gpu_hour=1, len_ctx=4096).text()
    out = _cli("llama-3.1-8b", "TPU", "v5e", "--gpus", "4", "--price", "1", "--context", "4096")
    assert out.returncode == 2 and '"TPU v5e"' in out.stderr and len(out.stderr.strip().splitlines()) == 1


# --- the second engineer's walk (2026-12-02): three real configs again -----------------------------------------

def test_the_headline_moe_layout_is_never_one_the_capacity_table_refuses():
    """Qwen3-30B-A3B's 128 experts on a 72-GPU NVL72: before, the headline ran "DP 72, EP 72" while the table
    refused that very layout (128 % 72). Now every GPU holds 2 expert slots (16 redundant copies, as an EP load
    balancer places them), the table and the headline agree, and the plan says so."""
    p = _plan(QWEN3_30B_A3B, "GB200 NVL72", len_ctx=4500)
    got = p.numbers
    assert got["inputs"]["parallel"] == {"tp": 1, "pp": 1, "ep": 72, "dp": 72}
    assert got["capacity"]["dp_ep_max_batch"] is not None
    assert got["decode"]["fit_limit"] == got["capacity"]["dp_ep_max_batch"]
    notes = " ".join(row.text for row in p.rows if row.key.startswith("parallel_note"))
    assert "2 expert slots" in notes and "16 of the 144" in notes
    d = collectives.deployment(hardware.get_system("GB200 NVL72"))
    padded = roofline.device_memory(p.model, d, layout=roofline.Layout(attention_tp=1, redundant_experts=16),
                                    weight_dtype=2.0, kv_dtype="bf16")
    assert got["capacity"]["dp_ep_weights_per_gpu"] == pytest.approx(padded["weights"])
    plain = roofline.device_memory(p.model, d, layout="dp_ep", weight_dtype=2.0, kv_dtype="bf16")
    assert padded["weights"] > plain["weights"]          # the copies cost memory
    # and the same layout is accepted when given: --ep 72 with DP attention
    explicit = _plan(QWEN3_30B_A3B, "GB200 NVL72", len_ctx=4500, tp=1, ep=72)
    assert explicit.numbers["decode"]["fit_limit"] == got["decode"]["fit_limit"]


def test_time_to_first_token_runs_one_request_on_its_own_replica():
    """phi-4 on 8 H100s as TP2 × DP4: a lone request's prefill runs on its TP pair, so it takes 4× what the
    whole deployment spends per prompt when every replica is busy (before, 7.36 ms instead of about 29 ms)."""
    p = _plan(PHI_4, n_chips=8, tp=2, len_ctx=None, len_in=2000, len_out=500)
    lone = p.numbers["requests"]["ttft"]
    d = collectives.deployment(hardware.get("H100"), n_chips=8)
    shared = roofline.prefill_bound(p.model, d, len_in=2000, compute_dtype="bf16", weight_dtype=2.0)["t_prefill"]
    assert lone == pytest.approx(4 * shared, rel=1e-9)
    assert "on its own 2 GPUs" in next(row.text for row in p.rows if row.key == "ttft")
    # serving throughput still counts each prompt's share of the whole deployment, not the lone request's time
    serving = p.numbers["requests"]["output_tokens_per_s"]
    at = p.numbers["decode"]
    assert serving == pytest.approx(500 / (shared + 500 * at["step_time"] / at["batch"]), rel=1e-9)


def test_an_moe_request_alone_runs_its_experts_over_the_ep_group_and_the_rest_on_one_gpu():
    p = _plan(QWEN3_30B_A3B, "GB200 NVL72", len_ctx=None, len_in=4000, len_out=1000)
    d = collectives.deployment(hardware.get_system("GB200 NVL72"))
    lone = roofline.prefill_bound(p.model, d, len_in=4000, compute_dtype="bf16", weight_dtype=2.0,
                                  dense_devices=1, expert_devices=72)["t_prefill"]
    spread = roofline.prefill_bound(p.model, d, len_in=4000, compute_dtype="bf16", weight_dtype=2.0)["t_prefill"]
    assert p.numbers["requests"]["ttft"] == pytest.approx(lone)
    assert lone > 10 * spread
    assert "on its own GPU (experts over 72)" in next(row.text for row in p.rows if row.key == "ttft")


def test_batches_in_the_json_are_whole_sequences():
    p = _plan(QWEN3_32B_AWQ, "A100", n_chips=1)
    got = json.loads(p.to_json())
    rows = [got["decode"]["fit_limit"]] + [v for k, v in got["capacity"].items() if k.endswith("max_batch")]
    assert len(rows) > 2 and all(isinstance(row["value"], int) or row["value"] is None for row in rows), rows


@pytest.mark.parametrize("count", [0, 9, 2.5])
def test_prefill_devices_are_checked_by_name(count):
    d = collectives.deployment(hardware.get("H100"), n_chips=8)
    with pytest.raises(ValueError, match="dense_devices"):
        roofline.prefill_bound("llama-3-70b", d, len_in=1000, compute_dtype="bf16", dense_devices=count)


def test_a_chip_named_without_a_count_says_it_plans_one():
    lone = _plan(PHI_4, "H100")
    row = next(row for row in lone.rows if row.key == "n_chips")
    assert row.value == 1 and "give --gpus" in row.text
    counted = _plan(PHI_4, "H100", n_chips=1)
    assert "give --gpus" not in next(row.text for row in counted.rows if row.key == "n_chips")
    system = _plan(PHI_4, "HGX H100")
    assert "give --gpus" not in next(row.text for row in system.rows if row.key == "n_chips")


def test_a_tp_the_kv_heads_refuse_is_told_the_widths_that_work():
    with pytest.raises(ValueError, match=r"10 KV heads, got 4 \(the widths its heads and the 8 GPUs allow: 1, 2\)"):
        _plan(PHI_4, n_chips=8, tp=4)


def test_the_plan_explorer_lists_each_layouts_batch_so_the_chapter_9_answer_can_be_checked():
    """A learner walk: Ch9's answer (DP attention + EP over TP, 5.26×) could not be checked anywhere after the reveal;
    the explorer's cover promised each layout's batch and showed only the headline's. Its readout now lists them,
    and their ratio is the prediction's answer."""
    import re

    from lecture_lib.explorers import predict
    from lecture_lib.explorers.plan import PlanExplorer

    explorer = PlanExplorer(model="deepseek-v3", system="HGX H200", len_ctx=8192)
    rows, _ = explorer.update(explorer.values)
    listed = dict(row[:2] for row in rows)["largest batch, layout by layout"]
    batches = {name.strip(): int(count.replace(",", "")) for name, count in re.findall(r"([^:·]+): ([\d,]+)", listed)}
    assert set(batches) >= {"TP", "DP-attention + EP"}, listed
    assert batches["DP-attention + EP"] / batches["TP"] == pytest.approx(predict.layout_capacity().answer())


def test_the_model_row_says_why_active_is_below_the_total():
    """A learner saw Ch9's Mistral read "7.24 B params, 7.11 B active" with nothing saying why a dense model has an
    active count at all: the untied input embedding is stored but is a lookup (models.Model.params_active)."""
    def model_row(plan):
        return next(row.text for row in plan.rows if row.key == "model")

    dense = model_row(_plan(PHI_4))
    assert "active (all but the input-embedding table, a lookup that does no FLOPs)" in dense
    assert "routed experts" in model_row(_plan(QWEN3_30B_A3B))
    tied = dict(PHI_4, tie_word_embeddings=True, _name_or_path="tied")
    assert "(" not in model_row(_plan(tied)).split("active", 1)[1]      # tied: active = total, nothing to explain


def test_a_widened_reality_band_is_not_labelled_with_the_plans_class():
    """A learner read "dense, compute-bound prefill rows: share of the bound" above a list of MoE rows: the band had
    widened to every prefill row (measurements.reality_band), and only the value's note said so."""
    plan = _plan(PHI_4)
    for row in plan.rows:
        if row.key.endswith("_band") and isinstance(row.value, dict) and row.value.get("widened"):
            assert "widened from" in row.label, row.label
        elif row.key.endswith("_band") and isinstance(row.value, dict) and row.value.get("n"):
            assert row.value["class"] in row.label
    assert any(row.key.endswith("_band") and row.value.get("widened") for row in plan.rows
               if isinstance(row.value, dict)), "phi-4's prefill band widens (no dense, compute-bound prefill row)"


# --- issue 51 §1: the auto layout deploys what real engines deploy ------------------------------------------

def test_auto_layout_runs_dp_replicas_when_the_model_fits_one_gpu_as_mlperf_amd_does():
    """MLPerf Llama-2-70B on 8 MI325X: the auto layout took TP 8 on a tie of the step bound and charged its all-reduces,
    so the realistic estimate came out 2.12x below the published figure (1.00 with --tp 1). AMD runs one vLLM replica
    per GPU (Chapter 8's mlperf41-llama2-70b-mi300x8 row, layout "DP replicas"): the auto layout now charges each
    width's all-reduces and takes TP 1 × DP 8, and the plan says why."""
    row = measurements.get("mlperf41-llama2-70b-mi300x8")
    assert row.layout == "DP replicas"
    for system in ("MI300X platform", "MI325X platform"):
        auto = planner.plan("llama-2-70b", system, len_in=500, len_out=294, weight_dtype="fp8", kv_dtype="fp8")
        tp8 = planner.plan("llama-2-70b", system, len_in=500, len_out=294, weight_dtype="fp8", kv_dtype="fp8", tp=8)
        assert auto.numbers["inputs"]["parallel"] == {"tp": 1, "pp": 1, "ep": 1, "dp": 8}
        assert auto.realistic["tokens_per_s"] > 1.9 * tp8.realistic["tokens_per_s"]
        notes = " ".join(r.text for r in auto.rows if r.key.startswith("parallel_note"))
        assert "fits on one GPU" in notes and "no all-reduce" in notes and "TP 8:" in notes and "all-reduces" in notes
        if system == "MI300X platform":   # the published MI300X figure, against the realistic estimate (±35 %)
            assert abs(auto.realistic["tokens_per_s"] / row.measured - 1) < measurements.REALISTIC_TOLERANCE


def test_auto_layout_breaks_near_ties_toward_less_communication():
    p = planner.plan("llama-3-70b", "HGX H200", len_in=1000, len_out=1000)
    assert p.numbers["inputs"]["parallel"]["tp"] < 8     # TP 8 pays 2 all-reduces per layer over 8 GPUs for nothing
    one_hgx = planner.plan("llama-3-70b", "HGX H100", len_ctx=4096)   # the weights need the room TP 8 gives
    assert one_hgx.numbers["inputs"]["parallel"]["tp"] == 8
    assert 0 < planner.LAYOUT_TIE < 0.1


# --- the second engineer's walk (issue 51): findings and the kind of each ----------------------------------------

@pytest.mark.parametrize("model, system, share", [("llama-3.1-8b", "HGX H100", 0.5), ("llama-3.1-8b", "HGX H100", 0.3),
                                                  ("deepseek-v3", "GB200 NVL72", 0.6), ("llama-3.1-8b", "H100", 0.05)])
def test_a_low_memory_utilization_never_fails_the_plan_because_of_chapter_8s_rows(model, system, share):
    """Finding 3: at --memory-utilization 0.5 every plan failed with an error naming another model (a Chapter 8 row
    re-bounded at the user's reserve no longer fitted). The user's plan stands; the rows that no longer fit are left
    out of the band and named."""
    out = _cli(model, system, "--memory-utilization", str(share))
    assert out.returncode == 0, out.stderr
    assert "llama-3-70b" not in out.stderr
    p = planner.plan(model, system, memory_utilization=share)
    skipped = [row for row in p.section("reality") if row.key.endswith("_skipped")]
    if share in (0.5, 0.3):   # at 5 % the 8B weights do not fit one H100 either: no decode band, nothing skipped
        assert skipped and "--memory-utilization" in skipped[0].text
        assert all(key in skipped[0].text for key in skipped[0].value[:6])
    band = measurements.reality_band(kind="serving", moe=False, regime="memory", hbm_fraction=0.3)
    assert band["skipped"] and not set(band["skipped"]) & set(band["keys"])
    assert measurements.reality_band(kind="serving", moe=False, regime="memory")["skipped"] == []


def test_a_band_of_the_plans_own_vendor_is_not_said_to_be_borrowed_with_an_empty_name():
    """Finding 9: "prefill rows: BORROWED from other vendors … so the band is 's rows" on an NVIDIA plan whose
    prefill rows are all NVIDIA's. Nothing is borrowed then; an AMD plan still says whose rows stand in."""
    p = planner.plan("llama-2-70b", "HGX H100", len_in=295, len_out=290)
    text = p.text()
    assert "'s rows" not in text.replace("vendor's rows", "") and "BORROWED" not in text
    for kind in measurements.BAND_KINDS:
        for moe in (True, False):
            for regime in ("memory", "compute"):
                for vendor in ("NVIDIA", "AMD", "Google", "custom"):
                    said = measurements.reality_band(kind=kind, moe=moe, regime=regime, vendor=vendor)["borrowed"]
                    assert " 's" not in said and "()" not in said, (kind, moe, regime, vendor, said)
    amd = planner.plan("llama-2-70b", "MI300X platform", len_in=295, len_out=290)
    assert "NVIDIA" in amd.numbers["reality"]["requests_borrowed"]


def _help_flags():
    return set(re.findall(r"--[a-z][a-z-]*", _cli("--help").stdout)) - {"--help"}


#: Every error path of the command line a user can reach, each one run: (arguments, a flag or positional it names).
ERROR_PATHS = [
    (["llama-3.1-70b", "HGX H100", "--scenario", "server"], "--ttft-ms"),
    (["llama-3.1-70b", "MyChip2", "--gpus", "8", "--hbm-gb", "192", "--hbm-tbs", "5"], "SYSTEM"),
    (["llama-3.1-70b", "MyChip2", "--gpus", "8", "--tflops", "bf16=1000"], "--hbm-gb"),
    (["llama-3.1-70b", "HGX H100", "--layout", "tp", "--tp", "4"], "--layout"),
    (["llama-3.1-70b", "HGX H100", "--name", " "], "--name"),
    (["llama-3.1-70b", "HGX H100", "--gpus", "8"], "--gpus"),
    (["no-such-model", "HGX H100"], "MODEL"),
    (["llama-3.1-70b", "HGX H1"], "SYSTEM"),
    (["llama-3.1-70b", "HGX H100", "--scenario", "offline", "--tpot-ms", "50"], "--scenario"),
    (["llama-3.1-70b", "HGX H100", "--tpot-ms", "50", "--batch", "8"], "--batch"),
    (["llama-3.1-70b", "HGX H100", "--ttft-ms", "500", "--context", "1000"], "--input-len"),
    (["llama-3.1-70b", "HGX H100", "--latency-ms", "50", "--batch", "8"], "--latency-ms"),
    (["llama-3.1-70b", "HGX H100", "--hit-rate", "1"], "--hit-rate"),
    (["llama-3.1-70b", "HGX H100", "--tp", "3"], "--tp"),
    (["llama-3.1-70b", "HGX H100", "--pp", "3"], "--pp"),
    (["llama-3.1-70b", "HGX H100", "--ep", "2"], "--ep"),
    (["mixtral-8x7b", "HGX H100", "--tp", "2", "--pp", "2", "--ep", "8"], "--pp"),
    (["llama-3.1-70b", "HGX H100", "--weights", "fp7"], "--weights"),
    (["llama-3.1-70b", "HGX H100", "--compute", "fp4"], "--compute"),
    (["llama-3.1-70b", "HGX H100", "--attention", "fp4"], "--attention"),
    (["llama-3.1-70b", "HGX H100", "--memory-utilization", "0"], "--memory-utilization"),
    (["llama-3.1-70b", "HGX H100", "--memory-utilization", "1.5"], "--memory-utilization"),
    (["llama-3.1-70b", "HGX H100", "--tokens-per-step", "0.5"], "--tokens-per-step"),
    (["llama-3.1-70b", "HGX H100", "--input-len", "100"], "--input-len"),
    (["llama-3.1-70b", "HGX H100", "--ttft-ms", "0"], "--ttft-ms"),
    (["llama-3.1-70b", "HGX H100", "--tpot-ms", "1e9"], "--tpot-ms"),
    (["llama-3.1-70b", "HGX H100", "--price", "-1"], "--price"),
    (["llama-3.1-70b", "HGX H100", "--context", "-5"], "--context"),
    (["llama-3.1-70b", "H100", "--gpus", "3", "--layout", "tp"], "--gpus"),
    (["llama-3.1-70b", "chip.json", "--hbm-gb", "80"], "--hbm-gb"),
    (["llama-3.1-70b", "H100", "--scale-up", "0", "--hbm-gb", "80"], "--scale-up"),
]
#: plan()'s and custom_chip()'s Python names, which the command line has no flag for.
PYTHON_NAMES = re.compile(r"(?<![\w'-])(" + "|".join(sorted(set(planner.FLAGS) | {
    "hbm_capacity", "hbm_bandwidth", "flops", "scale_up_domain", "scale_up_bandwidth", "scale_out_bandwidth",
    "n_chips", "len_ctx"}, key=len, reverse=True)) + r")(?![\w'-])|base=")


@pytest.mark.parametrize("args, named", ERROR_PATHS, ids=[" ".join(a[2:]) or a[0] for a, _ in ERROR_PATHS])
def test_every_cli_error_names_a_real_flag_in_its_own_units(args, named):
    """Findings 12 and 13, and their kind: each error path the command line reaches names a flag the parser has (or
    MODEL / SYSTEM), never a Python parameter (base=, ttft_target, n_chips, ...), and a millisecond flag is never
    said to be in seconds."""
    out = _cli(*args)
    err = out.stderr.strip()
    assert out.returncode == 2 and out.stdout == "" and len(err.splitlines()) == 1, err
    flags = set(re.findall(r"--[a-z][a-z-]*", err))
    assert named in err and flags <= _help_flags() | {"--help"}, err
    assert flags or "MODEL" in err or "SYSTEM" in err, err
    assert not PYTHON_NAMES.search(err.split(" got ")[0].split(": error: ", 1)[1]), err
    if any(flag in err for flag in ("--ttft-ms", "--tpot-ms", "--latency-ms")):
        assert "(seconds)" not in err, err


def test_context_given_with_request_lengths_says_it_wins_in_the_first_line():
    """Finding 14: --context 4096 with --input-len/--output-len 1000 silently decoded at 4,096 (the lengths' mean is
    1,500). The first line says which is used; equal values say nothing extra (--sweep-context passes both)."""
    first = _cli("llama-3.1-8b", "HGX H100", "--context", "4096", "--input-len", "1000",
                 "--output-len", "1000").stdout.splitlines()[0]
    assert "decode context 4,096 tokens as given (--context wins" in first and "1,500" in first
    p = planner.plan("llama-3.1-8b", "HGX H100", len_ctx=4096, len_in=1000, len_out=1000)
    assert p.lengths["context_given"]
    assert "as given by --context" in next(r.text for r in p.section("inputs") if r.key == "lengths")
    same = _cli("llama-3.1-8b", "HGX H100", "--context", "1500", "--input-len", "1000", "--output-len", "1000")
    assert "wins" not in same.stdout.splitlines()[0]


def test_a_chip_without_a_count_and_a_name_read_as_a_preset_are_said_in_the_first_lines():
    """Finding 15: "llama-3.1-70b H100" planned one GPU with no word in the first lines; "NVL72" became "GB200
    NVL72" silently; "1 sequences"."""
    head = _cli("llama-3.1-70b", "H100").stdout.splitlines()[:3]
    assert any("ONE H100" in line and "--gpus" in line and "HGX H100" in line for line in head), head
    nvl = _cli("gpt-oss-120b", "NVL72").stdout.splitlines()[:3]
    assert any("'NVL72' read as the GB200 NVL72 preset" in line for line in nvl), nvl
    quiet = _cli("llama-3.1-70b", "hgx-h100").stdout.splitlines()[:3]
    assert not any(line.strip().startswith("hardware:") for line in quiet), quiet
    one = _cli("llama-3.1-70b", "H100", "--batch", "1").stdout
    assert "1 sequence (as given)" in one and "1 sequences" not in one


def test_the_cost_is_also_priced_at_the_realistic_estimate_in_text_json_and_sweeps():
    """Finding 1: "$ per million output tokens" came from the bound only (2.5–3× too cheap). The realistic decode
    step's price stands beside it, the all-in price (prefill included) in the first lines, in the JSON and the
    sweep; all through roofline.cost_per_token, the one COST_OF_STEP."""
    args = ["llama-3.1-70b", "HGX H100", "--input-len", "1000", "--output-len", "1000", "--price", "2.5", "--kv",
            "fp8"]
    p = planner.plan("llama-3.1-70b", "HGX H100", len_in=1000, len_out=1000, price_per_gpu_hour=2.5, kv_dtype="fp8")
    cost, real = p.numbers["cost"], p.realistic
    step = real["step"]
    assert cost["usd_per_million_output_realistic"] == pytest.approx(
        2.5 * 8 / 3600 / (real["batch"] / (step["t"] / step["engine"])) * 1e6)
    assert cost["usd_per_million_output_all_in_realistic"] == pytest.approx(2.5 * 8 / 3600 / real["tokens_per_s"] * 1e6)
    assert cost["usd_per_million_output_realistic"] > 2 * cost["usd_per_million_output"]
    assert cost["usd_per_million_input_realistic"] > cost["usd_per_million_input"]
    text = _cli(*args).stdout
    assert "cost:" in "\n".join(text.splitlines()[:5]) and "REALISTIC" in text
    data = json.loads(_cli(*args, "--json").stdout)
    assert data["cost"]["usd_per_million_output_realistic"]["value"] == pytest.approx(
        cost["usd_per_million_output_realistic"])
    swept = json.loads(_cli(*args, "--json", "--sweep-context", "2000").stdout)["sweep_context"][0]
    assert swept["usd_per_million_output_realistic"] > swept["usd_per_million_output"]
    assert "$/M out (realistic)" in _cli(*args, "--sweep-context", "2000").stdout
    assert "usd_per_million_output_realistic" not in planner.plan("llama-3.1-70b", "HGX H100").numbers["cost"]


GPT_OSS_120B_CONFIG = {   # huggingface.co/openai/gpt-oss-120b config.json, the fields the reader takes
    "architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "hidden_size": 2880, "intermediate_size": 2880,
    "num_hidden_layers": 36, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64,
    "vocab_size": 201088, "num_local_experts": 128, "num_experts_per_tok": 4, "sliding_window": 128,
    "layer_types": ["sliding_attention", "full_attention"] * 18, "tie_word_embeddings": False,
    "torch_dtype": "bfloat16", "max_position_embeddings": 131072, "_name_or_path": "openai/gpt-oss-120b",
    "quantization_config": {"quant_method": "mxfp4", "modules_to_not_convert": [
        "model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"]}}


def test_a_preset_released_below_16_bits_plans_in_its_release_format_as_its_config_does():
    """Finding 11: the gpt-oss-120b preset planned FP8 while the release (and its config.json) is MXFP4 experts.
    The preset now reads its release's quantization_config through the config reader, so both plan the same."""
    kw = dict(n_chips=8, len_in=1000, len_out=1000)
    preset = planner.plan("gpt-oss-120b", "B200", **kw)
    config = planner.plan(GPT_OSS_120B_CONFIG, "B200", **kw)
    assert preset.decode_settings["weight_dtype"] == pytest.approx(config.decode_settings["weight_dtype"])
    assert preset.realistic["tokens_per_s"] == pytest.approx(config.realistic["tokens_per_s"], rel=1e-9)
    assert "MXFP4 on routed experts, BF16 elsewhere" in preset.headline[1]
    assert "as released, https://huggingface.co/openai/gpt-oss-120b" in next(
        r.text for r in preset.section("inputs") if r.key == "formats_why")
    fp8 = planner.plan("gpt-oss-120b", "B200", weight_dtype="fp8", **kw)   # a flag still wins, and says so
    assert fp8.decode_settings["weight_dtype"] == 1 and "Not used by this plan" in fp8.model_notes


def test_formats_are_printed_by_name_and_a_16_bit_release_planned_in_fp8_says_so():
    """Finding 11: "weights 4.464 bits (0.558 bytes)" and "weights 2 bytes" from a config; and the qwen3-235b preset
    (FP8) against its BF16 config.json (BF16) with nothing said. Formats are names; a preset whose release is 16-bit
    names the release, its model card and the publisher's FP8 release, and the flag that plans it as released."""
    config = planner.plan(GPT_OSS_120B_CONFIG, "B200", n_chips=8)
    assert "bits" not in config.headline[1] and "MXFP4" in config.headline[1]
    bf16 = planner.plan(QWEN3_30B_A3B, "H100")
    assert "weights BF16" in bf16.headline[1] and "2 bytes" not in bf16.headline[1]
    assert "--weights fp8" in next(r.text for r in bf16.section("inputs") if r.key == "formats_why")
    qwen = planner.plan("qwen3-235b-a22b", "B200", n_chips=8)
    assert "the release is BF16: --weights bf16" in qwen.headline[1]
    why = next(r.text for r in qwen.section("inputs") if r.key == "formats_why")
    assert "https://huggingface.co/Qwen/Qwen3-235B-A22B" in why and "Qwen3-235B-A22B-FP8" in why
    assert set(planner.PRESET_CHECKPOINTS) == set(planner.models.names())
    for name, (fmt, card, fp8, config) in planner.PRESET_CHECKPOINTS.items():
        assert card.startswith("https://huggingface.co/") and (fp8 is None or fp8.startswith("https://huggingface.co/"))
        assert fmt.split()[0] in ("BF16", "FP16", "FP8", "MXFP4"), name


def test_the_realistic_estimate_caps_concurrent_sequences_per_engine_instance_and_says_when_it_binds():
    """Finding 5: an offline plan of Mixtral on 8 B200s ran 43,224 concurrent sequences, a batch no engine
    schedules. The realistic estimate now caps each engine instance (a DP replica or DP-attention rank) at
    TensorRT-LLM's default max_batch_size (2048; vLLM's max_num_seqs is 1024), one ENGINE_BATCH formula; says when
    it binds; --max-seqs sets the cap and --without engine_batch_cap lifts it."""
    from lecture_lib import realistic
    assert realistic.ENGINE_MAX_SEQS == {"TensorRT-LLM": 2048, "vLLM": 1024}
    assert all("github.com" in src and "https://" in src for src in realistic.ENGINE_MAX_SEQS_SOURCES.values())
    assert realistic.engine_batch(batch=43224, instances=8, per_instance=2048) == 16384
    assert realistic.engine_batch(batch=100, instances=8, per_instance=2048) == 100
    kw = dict(n_chips=8, len_in=150, len_out=146, weight_dtype="nvfp4")
    p = planner.plan("mixtral-8x7b", "B200", **kw)
    assert p.numbers["decode"]["batch"] > 40_000 and p.realistic["batch"] == 16384 == p.realistic["capped"]
    row = next(r for r in p.section("realistic") if r.key == "engine_batch_cap")
    assert "BINDS" in row.label and "2,048 sequences per engine instance × 8 instances" in row.text
    assert "engine's cap of 16,384" in p.headline[2]
    assert 0 < p.numbers["realistic"]["term_engine_batch_cap"] < 1
    vllm = planner.plan("mixtral-8x7b", "B200", max_seqs_per_instance=1024, **kw)
    assert vllm.realistic["batch"] == 8192 and vllm.realistic["tokens_per_s"] < p.realistic["tokens_per_s"]
    off = planner.plan("mixtral-8x7b", "B200", realistic_terms=set(realistic.TERMS) - {"engine_batch_cap"}, **kw)
    assert off.realistic["batch"] == p.numbers["decode"]["batch"]
    small = planner.plan("llama-3.1-70b", "HGX H100", len_in=1000, len_out=1000)
    assert "does not bind" in next(r.text for r in small.section("realistic") if r.key == "engine_batch_cap")
    assert small.realistic["capped"] is None
    cli = _cli("mixtral-8x7b", "B200", "--gpus", "8", "--max-seqs", "512", "--input-len", "150", "--output-len", "146")
    assert cli.returncode == 0 and "512 sequences per engine instance" in cli.stdout
    assert "--max-seqs" in _cli("mixtral-8x7b", "B200", "--max-seqs", "0").stderr
    with pytest.raises(ValueError, match="max_seqs_per_instance"):
        planner.plan("mixtral-8x7b", "B200", max_seqs_per_instance=2.5)


def test_the_auto_layout_tries_pipeline_stages_when_no_tp_dp_layout_holds_the_weights():
    """Finding 6: Llama-3-405B in BF16 on 2 HGX H100 was laid out TP 8 × DP 2 and reported "does not fit", while
    TP 8 × PP 2 fits. The auto layout now tries the fewest stages that hold the weights, and says why."""
    kw = dict(n_systems=2, weight_dtype="bf16", len_in=2048, len_out=128)
    auto = planner.plan("llama-3-405b", "HGX H100", **kw)
    given = planner.plan("llama-3-405b", "HGX H100", tp=8, pp=2, **kw)
    assert auto.numbers["inputs"]["parallel"] == {"tp": 8, "pp": 2, "ep": 1, "dp": 1}
    assert auto.numbers["decode"]["batch"] == given.numbers["decode"]["batch"] > 0
    assert auto.numbers["requests"]["output_tokens_per_s"] == pytest.approx(given.numbers["requests"]["output_tokens_per_s"])
    assert any("no TP × DP layout holds the weights" in r.text for r in auto.section("inputs"))
    fits_without = planner.plan("llama-3-405b", "HGX H100", n_systems=2, len_in=2048, len_out=128)   # FP8: no PP
    assert fits_without.numbers["inputs"]["parallel"]["pp"] == 1


def test_the_realistic_estimate_is_given_with_pipeline_stages():
    """Finding 2: with --pp the realistic estimate vanished ("the bound above is the estimate"). It is now the
    stage group's realistic step at B / pp (as the bound's _pipeline_step), plus the stage hand-offs
    (pipeline.T_SCALE_OUT_STAGE) and the idle stages of too few micro-batches (pipeline.decode_idle_fraction)."""
    from lecture_lib import pipeline, realistic
    kw = dict(n_systems=2, weight_dtype="bf16", len_in=2048, len_out=128, tp=8, pp=2)
    p = planner.plan("llama-3-405b", "HGX H100", **kw)
    assert p.realistic is not None and 0.1 < p.realistic["share_of_bound"] < 1
    assert "not_modelled" not in p.numbers["realistic"]
    assert "pipeline hand-offs" in next(r.text for r in p.section("realistic") if r.key == "term_communication")
    assert "realistic" in p.headline[2]
    pieces = p.realistic["step"]["pieces"]
    micro = pieces["micro_batch"]
    assert micro == p.realistic["batch"] / 2
    assert pieces["pp_send"] == pytest.approx(2 * micro * 16384 * 2 / hardware.get_system("HGX H100").scale_out_bandwidth)
    one = planner.plan("llama-3-405b", "HGX H100", batch=1, **{k: v for k, v in kw.items()})
    assert one.realistic["step"]["pieces"]["pp_idle"] == pipeline.decode_idle_fraction(stages=2, microbatches=1) == 0.5
    off = planner.plan("llama-3-405b", "HGX H100", realistic_terms=(), **kw)
    assert off.realistic["tokens_per_s"] == pytest.approx(off.numbers["requests"]["output_tokens_per_s"], rel=1e-6)


def test_a_given_ep_below_the_gpus_splits_experts_by_tp_in_the_realistic_estimate():
    """Finding 4 (one cause): `--tp 8 --ep 1` (or `--ep 2`) was accepted and then ignored: the realistic step still
    spread whole experts over 8 GPUs, and at batch 1 the busiest of 8 set each MoE layer (×3.6 the mean, 53% of the
    rate). TensorRT-LLM's min-latency DeepSeek-R1 runs its experts TP4 × EP2 for that balance. A given EP now sets the
    groups that can be unevenly loaded; the default (EP over every GPU) and Chapter 8's rows are unchanged."""
    from lecture_lib import realistic
    kw = dict(weight_dtype="nvfp4", len_in=1024, len_out=2048, batch=1, tp=8)
    rates = {ep: planner.plan("deepseek-r1", "HGX B200", ep=ep, **kw) for ep in (8, 2, 1)}
    share = {ep: p.numbers["realistic"]["term_imbalance"] for ep, p in rates.items()}
    assert share[1] < 1e-3 and share[1] < share[2] < share[8]   # (prefill keeps its own EP; a trace is left)
    assert rates[1].realistic["tokens_per_s"] > rates[2].realistic["tokens_per_s"] > rates[8].realistic["tokens_per_s"]
    assert rates[8].realistic["tokens_per_s"] == pytest.approx(
        planner.plan("deepseek-r1", "HGX B200", **kw).realistic["tokens_per_s"])
    assert all(p.numbers["decode"]["tokens_per_s"] == rates[8].numbers["decode"]["tokens_per_s"] for p in rates.values())
    row = measurements.get("deepseek-decode-h800")
    step = realistic.decode_step(planner.models.get(row.model), row.deployment, batch=64, len_ctx=4096,
                                 layout=row.bound_layout, weight_dtype="fp8")
    assert step["t"] == realistic.decode_step(planner.models.get(row.model), row.deployment, batch=64, len_ctx=4096,
                                              layout=row.bound_layout, weight_dtype="fp8",
                                              expert_parallel=row.deployment.n_chips)["t"]


def test_a_realistic_estimate_on_a_borrowed_engine_factor_says_it_is_loose_in_the_first_lines():
    """Finding 8: on MI300X the realistic estimate ran 1.3–1.6× high and nothing near the headline said that its
    engine factor is borrowed from NVIDIA's rows. The throughput line says so; NVIDIA plans do not."""
    amd = planner.plan("llama-2-70b", "MI300X", n_chips=8, len_in=295, len_out=290)
    assert "LOOSE on MI300X" in amd.headline[2] and "BORROWED" in amd.headline[2]
    assert "LOOSE" not in " ".join(planner.plan("llama-2-70b", "HGX H100", len_in=295, len_out=290).headline)
