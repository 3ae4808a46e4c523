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

from lecture_lib import (checks, context, hardware, models, moe, pipeline, pricing, reversible, roofline, scaling,
                         units, validate)


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
    assert {"measurements", "predict", "collectives"} <= set(names)
    probe = ("import lecture_lib, types; names = %r; missing = [n for n in names "
             "if not isinstance(getattr(lecture_lib, n, None), types.ModuleType)]; "
             "assert set(names) <= set(dir(lecture_lib)), 'dir'; print(missing)") % names
    result = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True, text=True, timeout=300,
                            env={**__import__("os").environ, "MPLBACKEND": "Agg"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_memory_explorer_refuses_an_infinite_context():
    """MemoryExplorer(len_ctx=inf) raised OverflowError from int(inf)."""
    from lecture_lib import pipeline_memory_explorers

    for bad in (math.inf, math.nan, -1):
        with pytest.raises(ValueError, match="len_ctx"):
            pipeline_memory_explorers.MemoryExplorer(len_ctx=bad)
