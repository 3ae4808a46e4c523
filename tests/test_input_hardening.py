"""The bad inputs issues 15 and 20 named, one by one, with the behaviour each now has (the fuzz in
test_fuzz.py covers the rest of the API). Each case failed before the fix."""

import decimal
import fractions
import math
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lecture_lib.practice import checks
from lecture_lib import context, hardware, models, moe, pipeline, pricing, reversible, roofline, scaling, units, validate


# ---------------------------------------------------------------------------- 1. real numbers only, bounded sizes
@pytest.mark.parametrize("bad", [3 + 0j, 2j, np.complex128(4), np.datetime64("2026-01-01"), ["4"], [1, "2"],
                                 np.array(["4"]), np.array([4], dtype=object), np.array([True]), [], None])
def test_number_refuses_values_numpy_would_have_cast(bad):
    with pytest.raises(ValueError, match="batch"):
        validate.number("batch", bad)


def test_number_keeps_real_arrays_and_numpy_scalars():
    assert validate.number("x", np.float32(2.5)) == 2.5
    assert validate.number("x", np.int64(7)) == 7.0
    assert validate.number("x", [1, 2]).tolist() == [1.0, 2.0]


@pytest.mark.parametrize("huge", [10**400, [10**400]])
def test_a_huge_int_is_a_value_error_not_an_overflow(huge):
    with pytest.raises(ValueError, match="n_tokens"):
        validate.number("n_tokens", huge)
    with pytest.raises(ValueError, match="n_tokens"):
        validate.integer("n_tokens", 10**400)


def test_integer_has_an_upper_bound_and_refuses_text():
    assert validate.integer("depth", 16, maximum=1024) == 16
    with pytest.raises(ValueError, match="depth must be <= 1,024"):
        validate.integer("depth", 10**9, maximum=1024)
    with pytest.raises(ValueError, match="whole number"):
        validate.integer("depth", "16")


@pytest.mark.parametrize("call", [
    lambda: reversible.network_avalanche(depth=10**9),
    lambda: reversible.network_avalanche(n_samples=10**9),
    lambda: reversible.random_revnet(n_layers=10**6),
    lambda: moe.measure_cross_rack_fraction(n_racks=10**9),
    lambda: moe.random_routing(n_tokens=10**9, placement=moe.Placement(16, 2, 4), k=2),
    lambda: pipeline.simulate(schedule="gpipe", stages=10**6, microbatches=4),
    lambda: pipeline.simulate(schedule="gpipe", stages=256, microbatches=4096),
], ids=["depth", "samples", "revnet", "racks", "routing", "stages", "tasks"])
def test_sizes_that_would_hang_or_exhaust_memory_are_refused_at_once(call):
    start = time.perf_counter()
    with pytest.raises(ValueError, match="must be <=|too large"):
        call()
    assert time.perf_counter() - start < 1.0


# ---------------------------------------------------------------------------- 2. formulas stay in their domain
def _h100(**extra):
    chip = hardware.get("H100")
    return dict(N_active=37e9, FLOPs=chip.flops["bf16"], mem_bw=chip.hbm_bandwidth, bytes_tok=70e3, **extra)


def test_balance_batch_with_kv_is_refused_at_and_past_goldilocks_and_the_wrapper_says_inf():
    goldilocks = roofline.GOLDILOCKS_CONTEXT(**_h100())
    assert goldilocks == pytest.approx(3579.37, rel=1e-4)   # 2 x 37e9 x 3.35e12 / (989.4e12 x 70e3)
    below = roofline.BALANCE_BATCH_WITH_KV(**_h100(N_total=37e9, bytes_param=2, len_ctx=goldilocks / 2))
    assert below > 0
    for context_len in (goldilocks, 2 * goldilocks):
        with pytest.raises(ValueError, match="defined only where"):
            roofline.BALANCE_BATCH_WITH_KV(**_h100(N_total=37e9, bytes_param=2, len_ctx=context_len))
    wrapped = dict(n_active=37e9, n_total=37e9, flops=_h100()["FLOPs"], mem_bw=_h100()["mem_bw"], bytes_param=2,
                   bytes_tok=70e3)
    assert roofline.balance_batch_with_kv(**wrapped, len_ctx=2 * goldilocks) == math.inf
    assert roofline.balance_batch_with_kv(**wrapped, len_ctx=goldilocks / 2) == pytest.approx(below)


def test_tokens_for_loss_below_the_reachable_loss_is_a_value_error_naming_the_domain():
    fit = scaling.get_fit().values()
    with pytest.raises(ValueError, match="defined only where L_loss > "):
        scaling.TOKENS_FOR_LOSS(N_active=1e9, L_loss=1.0, **fit)
    with pytest.raises(ValueError, match="target_loss must be above the irreducible loss"):
        scaling.tokens_for_loss(n_params=1e9, target_loss=1.0)
    assert scaling.tokens_for_loss(n_params=1e9, target_loss=2.5) > 0


def test_rate_rev_is_refused_where_a_revnet_saves_no_memory():
    inputs = dict(N_active=1e9, d_model=4096, bytes_value=2.0, act_values=20)
    assert reversible.RATE_REV(n_layers=32, **inputs) > 0
    with pytest.raises(ValueError, match="defined only where"):   # one layer: the RevNet holds more, not less
        reversible.RATE_REV(n_layers=1, **inputs)


def test_a_formula_never_returns_inf():
    with pytest.raises(ValueError, match="no finite real value"):
        roofline.T_COMPUTE(B=1e300, N_active=1e300, FLOPs=1.0)


# ---------------------------------------------------------------------------- 3. one resolver, real flags
@pytest.mark.parametrize("resolve, name, kind", [
    (hardware.resolve_chip, "h100", hardware.Chip), (hardware.resolve_system, "nvl72", hardware.System),
    (models.resolve, "DeepSeek V3", models.Model), (pricing.resolve, pricing.names()[0], pricing.PriceSheet)])
def test_every_resolver_takes_a_name_or_the_object_and_nothing_else(resolve, name, kind):
    preset = resolve(name)
    assert isinstance(preset, kind) and resolve(preset) is preset
    with pytest.raises(ValueError, match="thing must be"):
        resolve(4, "thing")
    with pytest.raises(KeyError, match="known"):
        resolve("no such preset")


def test_functions_that_took_only_objects_now_take_names_too():
    assert roofline.balance_batch("H100", weight_bytes=2, compute_dtype="bf16") == pytest.approx(
        roofline.balance_batch(hardware.get("H100"), weight_bytes=2, compute_dtype="bf16"))
    assert pipeline.bandwidth_ratio("GB200") == pytest.approx(18.0)
    with pytest.raises(ValueError, match="chip must be"):
        roofline.balance_batch(3.0, weight_bytes=2, compute_dtype="bf16")


def test_shared_travels_must_be_a_real_bool():
    # DeepSeek-V3: 8 routed destinations, 9 with the shared expert; 2 x k x 7168 x 1 byte
    assert moe.a2a_bytes_per_token("deepseek-v3", bytes_per_value=1) == 2 * 8 * 7168
    assert moe.a2a_bytes_per_token("deepseek-v3", bytes_per_value=1, shared_travels=True) == 2 * 9 * 7168
    for flag in ("False", "True", 0, 1, None):
        with pytest.raises(ValueError, match="shared_travels must be True or False"):
            moe.a2a_bytes_per_token("deepseek-v3", bytes_per_value=1, shared_travels=flag)


# ---------------------------------------------------------------------------- 4. the caller's names
@pytest.mark.parametrize("call, name", [
    (lambda: scaling.loss(n_params=0, tokens=1e12), "n_params"),
    (lambda: scaling.loss(n_params=1e9, tokens=-1), "tokens"),
    (lambda: scaling.compute_optimal(compute=0), "compute"),
    (lambda: moe.a2a_layer_time(tokens_per_gpu=0, bytes_per_token=1, racks=2, scale_up_bw=1, scale_out_bw=1),
     "tokens_per_gpu"),
    (lambda: context.infer_kv_bytes(crossover_context=1e-300), "crossover_context"),
    (lambda: roofline.balance_batch("H100", weight_bytes=1e300, compute_dtype="bf16"), "weight_bytes"),
])
def test_errors_use_the_public_parameter_names(call, name):
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        call()


def test_called_as_renames_formula_inputs_in_errors():
    with pytest.raises(ValueError, match="n_params must be > 0"):
        scaling.LOSS(N_active=0, D_pretrain=1e12, **scaling.get_fit().values(), called_as={"N_active": "n_params"})


# ---------------------------------------------------------------------------- 5. check() reads, never runs
def test_check_refuses_a_float_problem_id_and_says_to_pass_text(capsys):
    result = checks.check(1.10, 42)
    assert result.status == "invalid" and '"1.10"' in result.message


@pytest.mark.parametrize("text", ["__import__('os').system('touch /tmp/i15_pwned')", "().__class__.__bases__",
                                  "open('x')", "9**9**9", "(9**9)**(9**9)", "exp(1)**10**6", "N_total" * 80,
                                  "1" * 40 + "*B", "B!"])
def test_check_never_runs_or_hangs_on_an_expression_string(text, capsys, tmp_path):
    expression_problem = next(pid for pid in checks.problem_ids() if checks.PROBLEMS[pid].kind == "expression")
    start = time.perf_counter()
    result = checks.check(expression_problem, text)
    assert result.status == "invalid", result.message
    assert time.perf_counter() - start < 3.0
    assert not (tmp_path.parent / "i15_pwned").exists()


def test_check_still_reads_ordinary_expressions(capsys):
    assert checks.check("1.4", "FLOPs*N_total*bytes_param/(2*N_active*mem_bw)").status == "correct"
    assert checks.check("1.4", "FLOPs*N_total*bytes_param/(2*N_active*mem_bw)^1").status == "correct"


ANSWERS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.complex_numbers(), st.text(max_size=30),
                    st.binary(max_size=10), st.lists(st.integers(), max_size=3),
                    st.sampled_from(["9**9**9", "__import__('os')", "N_total/N_active", "B*", "1e400", "nan"]))


@settings(max_examples=40, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(problem=st.sampled_from(["1.1", "1.4", "2.1", "5.3"]), answer=ANSWERS)
def test_check_never_raises_on_any_answer(problem, answer):
    result = checks.check(problem, answer)
    assert result.status in checks.STATUSES


# ---------------------------------------------------------------------------- 6. hold time 0, formatting
def test_storage_costs_and_cheapest_tier_accept_a_hold_time_of_zero():
    kw = dict(bytes_tok=70e3, n_active=37e9, flops=989e12, price_chip_hour=2.0)
    lines = context.tier_lines(**kw)
    at_zero = context.storage_costs(0, **kw)
    assert {name: float(cost) for name, cost in at_zero.items()} == pytest.approx(
        {name: retrieve for name, (retrieve, _) in lines.items()})
    assert context.cheapest_tier(0, **kw) == "HBM"
    with pytest.raises(ValueError, match="hold_time"):
        context.cheapest_tier(-1, **kw)


def test_units_refuse_what_they_cannot_show_but_show_inf():
    assert units.seconds(math.inf) == "inf s"
    for bad in (math.nan, "4", None, np.True_):
        with pytest.raises(ValueError, match="value"):
            units.seconds(bad)
    with pytest.raises(ValueError, match="digits"):
        units.count(5, digits=2.5)


# ---------------------------------------------------------------------------- 7. issue 20 §4: the validated value
def _kink(**extra):
    chip = hardware.get("H100")
    return dict(n_active=37e9, n_total=671e9, flops=chip.flops["bf16"], mem_bw=chip.hbm_bandwidth, bytes_param=1,
                bytes_tok=70e3, **extra)


@pytest.mark.parametrize("call, plain", [
    (lambda batch: context.kink_context(batch=batch, **_kink()), 4096),
    (lambda split: scaling.lecture_estimate(family_split=split)["tokens_per_second"], 2),
    (lambda k: moe.measure_cross_rack_fraction(n_racks=8, k=k)["measured"], 5),
], ids=["kink_context", "lecture_estimate", "cross_rack"])
@pytest.mark.parametrize("retype", [np.float16, np.int8, np.uint64, np.float32, fractions.Fraction, decimal.Decimal],
                         ids=lambda t: t.__name__)
def test_a_number_of_another_type_is_computed_as_the_plain_number(call, plain, retype):
    """np.float16(4096) squared overflows float16 and np.int8(5) * 1000 overflows int8: the functions
    computed with what was passed instead of the validated float (NaN, inf, OverflowError before)."""
    if retype is np.int8 and plain > 127:
        pytest.skip("4096 does not fit in int8")
    assert call(retype(plain)) == pytest.approx(call(plain), rel=1e-12)
    assert math.isfinite(call(retype(plain)))


def test_validators_return_python_numbers_to_compute_with():
    assert type(validate.number("x", np.float16(4096))) is float
    assert type(validate.integer("k", np.int8(5))) is int
    assert validate.number("x", decimal.Decimal("2.5")) == 2.5 and validate.integer("k", decimal.Decimal(4)) == 4
    assert validate.number("x", fractions.Fraction(3, 2)) == 1.5
    with pytest.raises(ValueError, match="k must be a whole number"):
        validate.integer("k", decimal.Decimal("2.5"))


def _deployment():
    from lecture_lib import collectives

    return collectives.deployment(hardware.get("H100"), n_chips=8)


@pytest.mark.parametrize("call, name", [
    (lambda: roofline.prefill_bound("deepseek-v3", _deployment(), len_in=1e-320), "len_in"),
    (lambda: roofline.decode_bound("deepseek-v3", _deployment(), batch=1e-320, len_ctx=1000), "batch"),
    (lambda: roofline.balance_batch("H100", weight_bytes=1, compute_dtype="fp8", sparsity=1e308), "sparsity"),
    (lambda: __import__("lecture_lib.pipeline_memory").pipeline_memory.kv_per_stage(
        model="gemma-3-27b", stages=2, len_ctx=1e308), "len_ctx"),
    (lambda: context.kink_context(batch=1e308, **_kink()), "batch"),
    (lambda: context.kink_context(batch=4096, **{**_kink(), "bytes_tok": 1e-320}), "bytes_tok"),
    (lambda: scaling.overtraining(d_pretrain=1e12, n_active=1e-320), "n_active"),
    (lambda: scaling.compute_costs(n_active=1e308, d_pretrain=1e12, d_rl=1e12, d_inference=1e12), "n_active"),
    (lambda: moe.a2a_layer_time(tokens_per_gpu=64, bytes_per_token=1e5, racks=2, scale_up_bw=1e-320,
                                scale_out_bw=1e9), "scale_up_bw"),
], ids=["prefill_len_in", "decode_batch", "balance_sparsity", "kv_per_stage", "kink_batch", "kink_bytes_tok",
        "overtraining", "compute_costs", "a2a"])
def test_overflow_and_underflow_are_value_errors_naming_the_callers_parameter(call, name):
    """Before: ZeroDivisionError, an array of inf, inf, or an error blaming N_total, which the caller never passed."""
    with pytest.raises(ValueError, match=rf"(?<![A-Za-z_]){name}(?![A-Za-z_])"):
        call()


def test_reports_inputs_turns_what_goes_wrong_inside_into_the_callers_words():
    @validate.reports_inputs
    def ratio(*, top, bottom):
        return top / bottom

    @validate.reports_inputs(may_be_infinite=True)
    def open_ended(*, x):
        return math.inf if x > 1 else x

    assert ratio(top=1.0, bottom=4.0) == 0.25
    with pytest.raises(ValueError, match="bottom=0.0"):
        ratio(top=1.0, bottom=0.0)                 # ZeroDivisionError
    with pytest.raises(ValueError, match="top=1e\\+308, bottom=1e-10"):
        ratio(top=1e308, bottom=1e-10)             # inf
    assert open_ended(x=2.0) == math.inf


# ---------------------------------------------------------------------------- 8. constructors and methods
@pytest.mark.parametrize("build, name", [
    (lambda: pipeline.Timeline("gpipe", 0, 4, ()), "stages"),
    (lambda: pipeline.Timeline("gpipe", 4, 4, ()), "tasks"),
    (lambda: pipeline.Timeline("gpipe", 4, 4, pipeline.simulate(schedule="gpipe", stages=4, microbatches=4).tasks,
                               forward_time=math.nan), "forward_time"),
    (lambda: pipeline.simulate(schedule="gpipe", stages=4096, microbatches=4), "stages"),
    (lambda: scaling.LossFit("x", 1.7, -400.0, 400.0, 0.34, 0.28, "src"), "A"),
    (lambda: scaling.LossFit("x", 1.7, 400.0, 400.0, math.inf, 0.28, "src"), "alpha"),
    (lambda: reversible.ToyFeistelCipher(16, (1 << 20,)), "round_keys"),
    (lambda: reversible.ToyFeistelCipher(13, (1, 2)), "half_bits"),
    (lambda: reversible.ToyFeistelCipher(16, (1, 2), "mlp"), "bit_mlp"),
    (lambda: moe.TinyMoE(np.ones((4, 8)), np.ones((8, 4, 6)), np.ones((8, 6, 4)), 9, moe.Placement(8, 2, 2)), "k"),
    (lambda: moe.TinyMoE(np.ones((4, 8)), np.ones((8, 4, 6)), np.ones((8, 5, 4)), 2, moe.Placement(8, 2, 2)),
     "w_down"),
    (lambda: moe.TinyMoE(np.full((4, 8), np.nan), np.ones((8, 4, 6)), np.ones((8, 6, 4)), 2, moe.Placement(8, 2, 2)),
     "w_router"),
    (lambda: moe.Routing(np.array([[0, 99]]), np.ones((1, 2)), moe.Placement(16, 2, 4)), "experts"),
    (lambda: reversible.MLP(np.ones((4, 8)), np.ones(7), np.ones((8, 2)), np.ones(2)), "shapes"),
], ids=["timeline_stages", "timeline_tasks", "timeline_time", "simulate_stages", "lossfit_A", "lossfit_alpha",
        "cipher_keys", "cipher_bits", "cipher_mlp", "moe_k", "moe_shape", "moe_nan", "routing", "mlp"])
def test_constructors_refuse_bad_fields(build, name):
    with pytest.raises(ValueError, match=name):
        build()


@pytest.mark.parametrize("bad", [math.nan, -1, 10**6, 1.5, True, "3"])
def test_placement_gpu_of_refuses_what_is_not_an_expert(bad):
    placement = moe.Placement(16, 2, 4)
    assert placement.gpu_of(5) == 2 and placement.gpu_of(np.array([0, 15])).tolist() == [0, 7]
    with pytest.raises(ValueError, match="expert"):
        placement.gpu_of(bad)
    with pytest.raises(ValueError, match="gpu"):
        placement.rack_of_gpu(bad)


def test_placement_keeps_python_ints():
    placement = moe.Placement(np.int8(16), np.uint64(2), np.float32(4))
    assert all(type(v) is int for v in (placement.n_experts, placement.experts_per_gpu, placement.gpus_per_rack))


# ---------------------------------------------------------------------------- 9. every module is an attribute
def test_every_module_loads_as_an_attribute_of_the_package():
    """lecture_lib.measurements, .predict and .collectives raised AttributeError (missing from a hand-kept list).
    Checked in a fresh interpreter: once imported elsewhere, a submodule is an attribute anyway."""
    import pathlib
    import subprocess
    import sys

    root = pathlib.Path(__file__).resolve().parents[1]
    names = sorted(p.stem for p in (root / "lecture_lib").glob("*.py") if not p.stem.startswith("_"))
    names += sorted(p.parent.name for p in (root / "lecture_lib").glob("*/__init__.py"))   # the two rooms
    assert {"measurements", "collectives", "explorers", "practice"} <= set(names)
    probe = ("import lecture_lib, types; names = %r; missing = [n for n in names "
             "if not isinstance(getattr(lecture_lib, n, None), types.ModuleType)]; "
             "assert set(names) <= set(dir(lecture_lib)), 'dir'; print(missing)") % names
    result = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True, text=True, timeout=300,
                            env={**__import__("os").environ, "MPLBACKEND": "Agg"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_memory_explorer_refuses_an_infinite_context():
    """MemoryExplorer(len_ctx=inf) raised OverflowError from int(inf)."""
    from lecture_lib.explorers import pipeline_memory as pipeline_memory_explorers

    for bad in (math.inf, math.nan, -1):
        with pytest.raises(ValueError, match="len_ctx"):
            pipeline_memory_explorers.MemoryExplorer(len_ctx=bad)


# ---------------------------------------------------------------------------- 10. the fuzz's last findings (issue 20 §4)
def _sheet(**fields):
    base = pricing.get("claude-opus-4.6")
    kept = {f: getattr(base, f) for f in ("key", "provider", "model", "as_of", "source", "input", "output",
                                          "cache_write_5m", "cache_write_1h", "cache_read", "fast_input",
                                          "fast_output")}
    return pricing.PriceSheet(**{**kept, **fields})


@pytest.mark.parametrize("field", ["input", "output", "cache_read", "fast_input", "fast_output"])
@pytest.mark.parametrize("retype", [decimal.Decimal, fractions.Fraction, np.float16, np.float32],
                         ids=lambda t: t.__name__)
def test_price_sheet_keeps_the_validated_float(field, retype):
    """PriceSheet(input=Decimal('2.5')) raised TypeError in its ratios (Decimal / float)."""
    plain = _sheet(**{field: 2.5})
    sheet = _sheet(**{field: retype(2.5) if retype is not fractions.Fraction else fractions.Fraction(5, 2)})
    assert type(getattr(sheet, field)) is float
    assert sheet.output_to_input == plain.output_to_input and sheet.fast_multiplier == plain.fast_multiplier
    assert sheet.cache_read_discount == plain.cache_read_discount


@pytest.mark.parametrize("fields, name", [
    ({"input": [3, 4]}, "input"), ({"cache_read": [3, 4]}, "cache_read"), ({"fast_output": np.array([1.0, 2.0])},
                                                                           "fast_output"),
    ({"input": 1e308}, "input"), ({"cache_read": 2.5e-308}, "cache_read"), ({"output": 1e-320}, "output"),
], ids=["input_list", "cache_list", "fast_array", "input_huge", "cache_tiny", "output_subnormal"])
def test_price_sheet_refuses_lists_and_prices_whose_ratios_overflow(fields, name):
    """A list was taken as an array of prices (TypeError later); input=1e308 gave cache_read_discount = inf."""
    with pytest.raises(ValueError, match=rf"(?<![A-Za-z_]){name}(?![A-Za-z_])"):
        _sheet(**fields)


def test_price_sheet_long_tier_cache_price_does_not_overflow_first():
    sheet = pricing.get("claude-opus-4.6-1m-beta")
    step = sheet.long_input / sheet.input
    assert sheet.price_per_token("cache_read", prompt_tokens=10**6) == pytest.approx(sheet.cache_read * step / 1e6)
    with pytest.raises(ValueError, match="cache_write_1h"):   # 1e308 x 2 on the long tier: inf before
        __import__("dataclasses").replace(sheet, cache_write_1h=1e308)


@pytest.mark.parametrize("kwargs, name", [
    (dict(n_systems=10**9), "n_systems"), (dict(n_chips=10**9), "n_chips"),
    (dict(n_chips=8, n_systems=2 * 10**7), "n_systems"),
], ids=["systems", "chips", "product"])
def test_deployment_names_the_callers_count_not_n_domains(kwargs, name):
    from lecture_lib import collectives

    with pytest.raises(ValueError, match=name) as caught:
        collectives.deployment(hardware.get("H100"), **kwargs)
    assert "n_domains" not in str(caught.value)
    with pytest.raises(ValueError, match="n_systems"):
        collectives.deployment(hardware.get_system("GB200 NVL72"), n_systems=10**9)
    assert collectives.deployment(hardware.get("H100"), n_chips=8, n_systems=10**7).n_domains == 10**7


_COLLECTIVE_CALLS = {   # each with numbers that float16, Fraction and Decimal hold exactly
    "collective_latency_time": (lambda **k: __import__("lecture_lib.collectives").collectives.collective_latency_time(
        "allreduce", **k), dict(bytes_total=4096, n_devices=8, link_bandwidth=2048, hop_latency=0.5, base_latency=2)),
    "collective_time": (lambda bandwidth, **k: __import__("lecture_lib.collectives").collectives.collective_time(
        "allgather", levels=[(8, bandwidth)], **k), dict(bytes_total=4096, bandwidth=2048)),
    "tp_all_reduce_time": (lambda **k: __import__("lecture_lib.collectives").collectives.tp_all_reduce_time(
        "llama-3-70b", **k), dict(tp=8, batch_tokens=4096, bytes_per_value=2, link_bandwidth=2048, hop_latency=0.5,
                                  base_latency=2)),
    "dp_critical_batch": (lambda **k: __import__("lecture_lib.collectives").collectives.dp_critical_batch(**k),
                          dict(dp=8, flops=4096, link_bandwidth=2048, bytes_per_grad=2)),
    "tp_critical_d_ff": (lambda **k: __import__("lecture_lib.collectives").collectives.tp_critical_d_ff(**k),
                         dict(tp=8, flops=4096, link_bandwidth=2048, bytes_per_value=2)),
    "ep_critical_d_ff": (lambda **k: __import__("lecture_lib.collectives").collectives.ep_critical_d_ff(**k),
                         dict(ep=8, flops=4096, link_bandwidth=2048, bytes_per_value=2)),
    "weights_per_device": (lambda **k: __import__("lecture_lib.collectives").collectives.weights_per_device(
        layout="tp", chip="H100", **k)["t_weights"], dict(n_params=4096, bytes_per_param=2, n_devices=8)),
}


@pytest.mark.parametrize("label", sorted(_COLLECTIVE_CALLS))
@pytest.mark.parametrize("retype", [np.float16, np.int8, fractions.Fraction, decimal.Decimal], ids=lambda t: t.__name__)
def test_collectives_compute_with_the_validated_numbers(label, retype):
    """Retyped one at a time, each input gives the plain answer (a guard: the Formulas these call
    re-validate their inputs, so the raw values that collectives passed on did no harm yet; the next
    test is the one that failed)."""
    call, kwargs = _COLLECTIVE_CALLS[label]
    plain = call(**kwargs)
    for name, value in kwargs.items():
        if retype is np.int8 and (value != int(value) or value > 127):
            continue
        got = call(**{**kwargs, name: retype(value) if retype is not decimal.Decimal else decimal.Decimal(str(value))})
        assert got == pytest.approx(plain, rel=1e-12) and math.isfinite(got), name


@pytest.mark.parametrize("module", ["collectives", "topology", "training_layout", "pricing"])
def test_no_validated_value_is_thrown_away(module):
    """``validate.number(name, x)`` returns the float to compute with; a bare call as a statement checks x
    and then computes with x itself (a Decimal, a float16). collectives.py had nine such calls."""
    import ast
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[1] / "lecture_lib" / f"{module}.py"
    discarded = [f"line {node.lineno}: {ast.unparse(node)}" for node in ast.walk(ast.parse(path.read_text()))
                 if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
                 and isinstance(node.value.func, ast.Attribute) and isinstance(node.value.func.value, ast.Name)
                 and node.value.func.value.id == "validate"
                 and node.value.func.attr in ("number", "scalar", "integer", "fraction")]
    assert not discarded, discarded


@pytest.mark.parametrize("kwargs, name", [
    (dict(weight_dtype=1e-320), "weight_dtype"), (dict(expert_weight_dtype=1e-320), "expert_weight_dtype"),
], ids=["weights", "experts"])
def test_device_memory_names_the_dtype_the_caller_passed(kwargs, name):
    """It blamed bytes_expert, a Formula input the caller never sees."""
    with pytest.raises(ValueError, match=rf"(?<![A-Za-z_]){name}(?![A-Za-z_])") as caught:
        roofline.device_memory("deepseek-v3", _deployment(), **kwargs)
    assert "bytes_expert" not in str(caught.value)


def test_topology_collective_time_refuses_an_overflowing_latency():
    from lecture_lib import topology

    with pytest.raises(ValueError, match="hop_latency"):
        topology.collective_time("allreduce", dims=8, bytes_total=1e9, link_bandwidth=1e11, hop_latency=1e308)
    with pytest.raises(ValueError, match="hop_latency"):
        topology.collective_time("alltoall", dims=(16, 16), topology="torus", bytes_total=1e9, link_bandwidth=1e11,
                                 hop_latency=1e308)


def test_ring_all_to_all_hops_answers_large_rings_at_once():
    """np.float16(4096) took n² = 16.8 million steps (past the fuzz's 3 s); it now counts one sender's
    distances and multiplies by the n identical senders."""
    from lecture_lib import topology

    start = time.process_time()
    assert topology.ring_all_to_all_hops(np.float16(4096)) == 4096 * 4096**2 // 4   # n · n²/4, n even
    assert topology.ring_all_to_all_hops(10**5 + 1) == (10**5 + 1) * ((10**5 + 1) ** 2 - 1) // 4   # odd
    assert time.process_time() - start < 1.0
    for n in range(1, 40):   # against the chunk-by-chunk count it replaced
        assert topology.ring_all_to_all_hops(n) == sum(min(d, n - d) for _ in range(n) for d in range(1, n))


def _layout_step(**changes):
    from lecture_lib import training_layout

    kwargs = dict(fsdp=4, tp=4, batch_tokens=4, d_model=4, d_ff=4, n_layers=4, flops=4, fsdp_bandwidth=4,
                  tp_bandwidth=4)
    return training_layout.layout_step(**{**kwargs, **changes})


def _best_layouts(**changes):
    from lecture_lib import training_layout

    kwargs = dict(n_chips=4, batch_tokens=4, d_model=4, d_ff=4, n_layers=4, chip="H100")
    return training_layout.best_layouts(**{**kwargs, **changes})


@pytest.mark.parametrize("call, name", [
    (lambda: _layout_step(fsdp=10**9), "fsdp"), (lambda: _layout_step(fsdp=np.int8(5)), "fsdp"),
    (lambda: _layout_step(batch_tokens=1e308), "batch_tokens"),
    (lambda: _layout_step(bytes_per_value=1e308), "bytes_per_value"),
    (lambda: _best_layouts(n_chips=np.float16(4096)), "n_chips"),
    (lambda: _best_layouts(batch_tokens=1e308), "batch_tokens"),
    (lambda: _best_layouts(d_model=1e9), "d_model"), (lambda: _best_layouts(d_ff=1e15), "d_ff"),
    (lambda: _best_layouts(d_model=np.uint64(2**63)), "d_model"),
    (lambda: _best_layouts(bytes_per_value=1e308), "bytes_per_value"),
], ids=["fsdp_huge", "fsdp_int8", "step_batch", "step_bytes", "chips", "batch", "d_model", "d_ff", "d_model_u64",
        "bytes"])
def test_training_layouts_name_the_callers_parameter(call, name):
    """Before: "batch_tokens must give each of the 7 FSDP groups ..." (no fsdp), "t_compute() has no finite
    real value at B_tok=..." and "fits no layout" whatever the reason."""
    with pytest.raises(ValueError, match=rf"(?<![A-Za-z_]){name}(?![A-Za-z_])"):
        call()


def test_best_layouts_still_ranks_a_real_cluster():
    rows = _best_layouts(n_chips=64, batch_tokens=2**20, d_model=8192, d_ff=28672, n_layers=80)
    assert rows and rows == sorted(rows, key=lambda row: row["t_step"])
    assert all(row["fsdp"] * row["tp"] * row["stages"] == 64 for row in rows)


_LLAMA_8B = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
             "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
             "tie_word_embeddings": False, "head_dim": 128}   # meta-llama/Llama-3.1-8B config.json


@pytest.mark.parametrize("bad", [None, 4, 1e308, b"config.json", [3, 4], np.array([1.0]), {}, {1: 2}, "",
                                 "/no/such/config.json", "a\0b"],
                         ids=["none", "int", "float", "bytes", "list", "array", "empty", "int_keys", "blank",
                              "missing", "nul"])
def test_hf_config_readers_name_source(bad):
    """They said "config must be ..." or "config file ... cannot be read", naming no parameter; a NUL in
    the path raised the ValueError of os.stat, {} was read as a config."""
    from lecture_lib import hf_config

    for call in (hf_config.read_config, hf_config.from_hf_config):
        with pytest.raises(ValueError, match="source"):
            call(bad)


def test_hf_config_content_errors_name_source_and_the_field(tmp_path):
    from lecture_lib import hf_config

    with pytest.raises(ValueError, match="source.*'vocab_size'"):
        hf_config.from_hf_config({k: v for k, v in _LLAMA_8B.items() if k != "vocab_size"})
    path = tmp_path / "config.json"
    path.write_text("{\"model_type\": NaN}")
    with pytest.raises(ValueError, match="source=.*NaN"):
        hf_config.read_config(path)
    path.write_text(__import__("json").dumps(_LLAMA_8B))
    assert hf_config.read_config(str(path)) == _LLAMA_8B
    assert hf_config.from_hf_config(path).params_total == hf_config.from_hf_config(_LLAMA_8B).params_total


@pytest.mark.parametrize("kwargs, name", [
    (dict(text=None), "text"), (dict(text=b"{}"), "text"), (dict(text=4), "text"), (dict(text="[1]"), "text"),
    (dict(text="{", where=None), "where"), (dict(text="{}", where=4), "where"),
], ids=["none", "bytes", "int", "list", "where_none", "where_int"])
def test_parse_config_text_names_text_and_where(kwargs, name):
    """text=None raised TypeError from json.loads; a bad where was used as is."""
    from lecture_lib import hf_config

    with pytest.raises(ValueError, match=name):
        hf_config.parse_config_text(**kwargs)


@pytest.mark.parametrize("name", [4, "", True])
def test_from_hf_config_refuses_a_bad_name_before_reading(name):
    from lecture_lib import hf_config

    with pytest.raises(ValueError, match="name"):
        hf_config.from_hf_config(_LLAMA_8B, name=name)
    assert hf_config.from_hf_config(_LLAMA_8B, name="4").name == "4"


@pytest.mark.parametrize("bad", [np.array([1.0, 2.0]), ["error"], None, 1])
def test_symbols_parse_names_unknown(bad):
    """unknown=np.array([1., 2.]) raised "The truth value of an array ... is ambiguous", naming nothing."""
    from lecture_lib import symbols

    with pytest.raises(ValueError, match="unknown"):
        symbols.parse("2*B", unknown=bad)
    assert symbols.parse(b"2*B") == symbols.parse("2*B")   # bytes are read as text, by design


@pytest.mark.parametrize("bad", ["01", "i4,", "(2)f", None, "int32"])
def test_unit_roundoff_refuses_text_numpy_cannot_read_as_a_float_dtype(bad):
    """dtype='01' raised NumPy's SyntaxError (found by the fuzz's generated text)."""
    with pytest.raises(ValueError, match="dtype"):
        reversible.unit_roundoff(bad)
    assert reversible.unit_roundoff(np.float32) == 2.0**-24


# ---------------------------------------------------------------------------- issue 31 §3: the fuzz's leftovers
def _board():
    from lecture_lib.explorers import roofline as roofline_explorers
    return roofline_explorers.board_example()


def _long_context():
    from lecture_lib.explorers import context as context_explorers
    return context_explorers.lecture_workload()


def _reality(**overrides):
    from lecture_lib.explorers import reality
    return reality.RealityExplorer(**overrides)


@pytest.mark.parametrize("call, name", [
    (lambda: pipeline.simulate(schedule="gpipe", stages=4, microbatches=4, forward_time=1e308), "forward_time"),
    (lambda: pipeline.simulate(schedule="1f1b", stages=4, microbatches=8, backward_time=1e307), "backward_time"),
    (lambda: _board().kv_bytes_per_token(1, "3"), "context_len"),
    (lambda: _board().kv_bytes_per_token(1, math.nan), "context_len"),
    (lambda: _long_context().kv_stored(math.nan, 1000), "kv_bytes"),
    (lambda: _long_context().kv_stored(1, "1000"), "len_ctx"),
    (lambda: _long_context().kv_read(-1, [1000, 2000]), "kv_bytes"),
    (lambda: _long_context().kv_read(1, [1000, math.inf]), "contexts"),
    (lambda: _long_context().kv_stored(np.float16(4096), 1000), "kv_bytes"),
    (lambda: validate.integer("n", 5, minimum=math.nan), "minimum"),
    (lambda: validate.integer("n", 5, minimum=1, maximum=2.5), "maximum"),
    (lambda: _reality(second_look=math.nan), "second_look"),
    (lambda: _reality(second_look=5), "second_look"),
    (lambda: _reality(tau="2"), "tau"),
    (lambda: _reality(row="no such measurement"), "row"),
])
def test_the_earlier_fuzz_findings_are_refused_by_name(call, name):
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        call()


def test_what_those_functions_accept_still_works():
    assert pipeline.simulate(schedule="gpipe", stages=4, microbatches=4, forward_time=1e300).tasks[-1].end < math.inf
    assert _board().kv_bytes_per_token(1, 3) == _board().kv_bytes_per_token(1.0, 3.0) > 0
    stored = _long_context().kv_stored(np.float16(1), np.float16(1000))
    assert type(stored) is float and stored == _long_context().kv_stored(1, 1000)
    assert np.all(_long_context().kv_read(1, [1000, 2000]) > 0)
    assert validate.integer("n", 5, minimum=0, maximum=None) == 5
    assert _reality(second_look=2).values["second_look"] == 2


# ---------------------------------------------------------------------------- issue 48 §4: the fuzz's findings
def _explorer_controls():
    from lecture_lib.explorers import base

    return [(cls, name) for cls in base.explorer_classes() for name in cls().controls]


def test_a_whole_number_log_slider_takes_inf_as_its_end_and_refuses_nan_by_name():
    """OverflowError (round(inf)) from five explorers' count sliders (chips, E, depth L); beyond an end is that end,
    as for every other log slider, and NaN is refused naming the control."""
    from lecture_lib.explorers import base

    found = 0
    for cls in base.explorer_classes():
        for name, control in cls().controls.items():
            if not getattr(control, "whole", False):
                continue
            found += 1
            low, high = control.stops[0], control.stops[-1]
            assert cls(**{name: math.inf}).values[name] == high and cls(**{name: 1e308}).values[name] == high
            assert cls(**{name: -math.inf}).values[name] == low
            assert isinstance(cls(**{name: math.inf}).values[name], int)
            with pytest.raises(ValueError, match=rf"\b{name}\b"):
                cls(**{name: math.nan})
    assert found >= 5


BAD_POSITIONS = [math.inf, -math.inf, math.nan, 1e308, -1e308, 10**400, 1e-320, "3", None, True, [1.0], 3 + 0j]


def test_predict_refuses_a_position_its_control_cannot_take_by_name():
    """Explorer.predict with inf, NaN or 1e308 raised OverflowError, IndexError, TypeError, KeyError or a ValueError
    naming an inner function's parameter ("batch must be finite"); now a ValueError naming the control."""
    from lecture_lib.explorers import base
    from pristine import pristine

    for cls in base.explorer_classes():
        explorer = pristine(cls)
        for name in explorer.controls:
            for bad in BAD_POSITIONS:
                with pytest.raises(ValueError, match=rf"\b{name}\b"):
                    explorer.predict(name, bad)
        with pytest.raises(ValueError, match="controls"):
            explorer.predict("no such control", 1)


def test_predict_still_takes_every_position_on_a_track():
    from lecture_lib.explorers import ahead, base
    from pristine import pristine

    for cls in base.explorer_classes()[:6]:
        explorer = pristine(cls)
        for name, control in explorer.controls.items():
            for _, value in ahead.neighbours(control, 1):
                explorer.predict(name, value)        # a frame, or None where it needs a new background


def test_the_decode_loop_figure_costs_little_at_any_size_the_simulator_takes():
    """decode_loop_figure(microbatches=1000) took over 60 s (12,000 tasks, a bar and a text artist each) though the
    simulator's own limit is 20,000 tasks: the bars are one collection, the numbers written only where they fit."""
    from lecture_lib.explorers import pipeline_memory, plots

    for kwargs in (dict(microbatches=1000), dict(microbatches=pipeline.MAX_TASKS // 12),
                   dict(stages=64, microbatches=pipeline.MAX_TASKS // 192), dict(stages=64, microbatches=2, tokens=1)):
        started = time.process_time()
        figure = pipeline_memory.decode_loop_figure(**kwargs)
        plots.to_image(figure)
        spent = time.process_time() - started
        assert spent < 3.0, (kwargs, spent)
        assert len(figure.axes[0].texts) <= pipeline_memory.DECODE_MAX_LABELS
    lecture = pipeline_memory.decode_loop_figure(stages=4, microbatches=4, tokens=3)
    assert len(lecture.axes[0].texts) == 4 * 4 * 3      # the lecture's sizes keep every number
    with pytest.raises(ValueError, match="tasks"):
        pipeline_memory.decode_loop_figure(microbatches=10_000)


def _page_messages(explorer, messages, *, seconds: float, monkeypatch, cost: float = 0.0) -> dict:
    """Play ``messages`` ((delay s, content) pairs) to the explorer as a page would, in an event loop, then let the
    predictions run out; counts the predictions computed (by position) and the most rounds pending at once. Each
    prediction takes ``cost`` seconds more (an explorer dearer than this one: Chapter 4's Gantt, 10-20 ms)."""
    import asyncio
    from collections import Counter

    from lecture_lib.explorers import ahead, base

    monkeypatch.setattr(base, "_kernel_loop", lambda: asyncio.get_running_loop())     # as inside a kernel
    explorer.view.widget.send = lambda content, buffers=None: None
    computed = Counter()
    predict = explorer.predict

    def counted(name, value, **kwargs):
        computed[name, value] += 1
        time.sleep(cost)
        return predict(name, value, **kwargs)

    explorer.predict = counted
    most = 0

    async def play():
        nonlocal most
        loop = asyncio.get_running_loop()
        for delay, content in messages:
            if delay:
                await asyncio.sleep(delay)
            explorer._on_page_message(None, content, [])
            pending = [t for t in loop._scheduled if not t.cancelled()]      # CPython's timer heap
            most = max(most, len(pending) + (explorer.lookahead._round == explorer.lookahead.generation))
        await asyncio.sleep(ahead.DELAY_SECONDS + seconds)

    asyncio.run(play())
    return {"computed": computed, "most": most}


def _two_log_sliders(kind: str = "roofline.ContextExplorer"):
    import importlib

    from lecture_lib.explorers import sliders

    module, name = kind.split(".")
    explorer = getattr(importlib.import_module(f"lecture_lib.explorers.{module}"), name)()
    if not explorer.view.live:
        pytest.skip("anywidget is not installed")
    held = [c for c in explorer.controls.values() if isinstance(c, (sliders.LogSlider, sliders.widgets.IntSlider))][:2]
    assert len(held) == 2
    return explorer, held


@pytest.mark.parametrize("kind", ["roofline.ContextExplorer", "pipeline_memory.LatencyExplorer"])
def test_holds_alternating_every_150_ms_compute_each_position_once(monkeypatch, kind):
    """{"ahead": "hold"} alternating between two controls every 150 ms started 671 predictions in 10 s (each hold
    voided the round under way and started another, which computed its nearest positions again; in Chapter 4's
    latency explorer the positions whose new axes had no background to spare were computed at every hold). Now a
    page message never starts a round while one is pending or under way, and no position is computed twice (a
    position that needed a background is tried again only where one can be drawn)."""
    explorer, held = _two_log_sliders(kind)
    messages = [(0.15, {"ahead": "hold", "control": held[i % 2].model_id}) for i in range(20)]
    result = _page_messages(explorer, messages, seconds=3.0, monkeypatch=monkeypatch, cost=0.015)
    assert result["most"] <= 1, result["most"]
    twice = {position: n for position, n in result["computed"].items() if n > 2}
    assert not twice, twice
    tracks = sum(len(sliders_track) for sliders_track in (_track(c) for c in held))
    assert sum(result["computed"].values()) <= tracks + 2 * len(explorer.controls) * 2


def _track(control):
    from lecture_lib.explorers import ahead

    return ahead.neighbours(control, ahead.HAND_REACH)


def test_requests_for_every_frame_never_compute_a_frame_again(monkeypatch):
    """20,000 {"ahead": "please"}, and a trickle of them every 60 ms (each once voided the round and emptied what
    had been sent, so the kernel computed the nearest frames again and again): one round at a time, and the frames
    a new view asks for are sent again from those kept, not computed again."""
    explorer, held = _two_log_sliders()
    flood = [(0.0, {"ahead": "please"})] * 20_000
    first = _page_messages(explorer, flood, seconds=2.0, monkeypatch=monkeypatch)
    assert first["most"] <= 1 and first["computed"] and max(first["computed"].values()) == 1
    trickle = [(0.06, {"ahead": "please"})] * 30
    again = _page_messages(explorer, trickle, seconds=1.0, monkeypatch=monkeypatch)
    assert again["most"] <= 1
    assert not again["computed"], f"computed again: {dict(again['computed'])}"


def test_the_routing_figure_costs_little_at_any_size_a_routing_can_have():
    """The same finding in Chapter 2's routing figure: 1,000 tokens with 8 copies each over 256 experts drew 8,000
    lines and 1,256 labels (7.7 s), and a placement of 10**11 experts laid out an array per expert. Now at most
    ROUTING_MAX_LINES lines (the title says how many tokens), and labels only where their rows can be read."""
    from lecture_lib.explorers import moe as moe_explorers, plots

    wide = moe.random_routing(n_tokens=1000, placement=moe.Placement(n_experts=256, experts_per_gpu=1,
                                                                     gpus_per_rack=64), k=8, seed=1)
    many_racks = moe.random_routing(n_tokens=1000, placement=moe.Placement(n_experts=4096, experts_per_gpu=1,
                                                                           gpus_per_rack=1), k=2, seed=1)
    huge = moe.Routing(experts=np.array([[0, 5]]), gates=np.array([[0.5, 0.5]]),
                       placement=moe.Placement(n_experts=10**11, experts_per_gpu=1, gpus_per_rack=1))
    for routing in (wide, many_racks, huge):
        started = time.process_time()
        figure = moe_explorers.routing_figure(routing, n_tokens=1000)
        plots.to_image(figure)
        assert time.process_time() - started < 3.0
        axis = figure.axes[0]
        assert len(axis.lines) <= moe_explorers.ROUTING_MAX_LINES + moe_explorers.ROUTING_MAX_BOXES
        assert len(axis.texts) <= 200
    assert moe_explorers.routing_figure(wide, n_tokens=1000).axes[0].get_title().startswith(
        f"dispatch of {moe_explorers.ROUTING_MAX_LINES // 8} tokens")
    small = moe.random_routing(n_tokens=32, placement=moe.Placement(n_experts=16, experts_per_gpu=2, gpus_per_rack=4),
                               k=2, seed=1)
    labels = [t.get_text() for t in moe_explorers.routing_figure(small, n_tokens=12).axes[0].texts]
    assert {"rack 0", "rack 1", "GPU 7", "expert 15"} <= set(labels) and sum(t.startswith("token") for t in labels) == 12
