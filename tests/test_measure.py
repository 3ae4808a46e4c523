"""Chapter 11's lab: measuring this machine (lecture_lib.measure), drawing it (explorers.lab), and the machine as a
chip (hardware.register_chip).

The goals of issue 50 are held here with wide tolerances, because the tests share a busy 2-core machine with
other work; ``make bench`` (tools/bench.py, "lab" section) reports them against their strict values.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from lecture_lib import hardware, measure, roofline
from lecture_lib.roofline import T_COMPUTE, T_WEIGHTS

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "11_lab_roofline_on_your_machine.ipynb"


@pytest.fixture(scope="module")
def smoke():
    return measure.profile("smoke", threads=1)


@pytest.fixture
def registry():
    """Leaves the session's registered chips as it found them."""
    before = dict(hardware._USER_CHIPS)
    yield
    hardware._USER_CHIPS.clear()
    hardware._USER_CHIPS.update(before)


# --- the machine as a chip -------------------------------------------------------------------------------------

def test_a_registered_chip_is_found_listed_and_forgotten(registry):
    chip = hardware.custom_chip(name="Ada's laptop", hbm_capacity=16e9, hbm_bandwidth=25e9, flops={"fp32": 1.6e11})
    assert hardware.register_chip(chip) == "Ada's laptop"
    assert hardware.get("ada's-LAPTOP") is chip and hardware.resolve_chip("Ada's laptop") is chip
    assert hardware.chip_names()[-1] == "Ada's laptop" and "Ada's laptop" not in hardware.CHIPS
    assert roofline.balance_batch("Ada's laptop", weight_bytes=4, compute_dtype="fp32") == pytest.approx(
        1.6e11 / 2 * 4 / 25e9)
    hardware.forget_chip("ada's laptop")
    assert hardware.chip_names() == list(hardware.CHIPS)
    with pytest.raises(KeyError, match="Ada"):
        hardware.get("Ada's laptop")


def test_registering_refuses_preset_names_and_non_chips(registry):
    with pytest.raises(ValueError, match="preset"):
        hardware.register_chip(hardware.custom_chip(name="h100", base="H100"))
    with pytest.raises(ValueError, match="preset"):
        hardware.register_chip(hardware.custom_chip(name="NVL72", base="H100"))
    with pytest.raises(ValueError, match="chip"):
        hardware.register_chip({"name": "x"})
    with pytest.raises(KeyError):
        hardware.forget_chip("never registered")


def test_the_measured_machine_is_a_chip_in_chapter_1s_explorer(smoke, registry):
    from lecture_lib.explorers.roofline import BatchExplorer

    chip = smoke.chip()
    assert chip.flops == {"fp32": pytest.approx(smoke.flops)} and chip.hbm_bandwidth == pytest.approx(smoke.mem_bw)
    hardware.register_chip(chip)
    explorer = BatchExplorer(chip="my machine", n_chips=1)
    assert explorer.controls["chip"].value == "my machine" and "my machine" in explorer.controls["chip"].options
    assert "fp32" in explorer.readout.value or "my machine" in explorer.readout.value


# --- the profile: structure, saving, loading --------------------------------------------------------------------

def test_a_profile_holds_every_figure_and_round_trips_through_json(smoke, tmp_path):
    assert smoke.mode == "smoke" and smoke.machine["cores"] >= 1 and smoke.machine["blas"]["library"]
    for stat in (smoke.peak["float32"], smoke.peak["float64"], smoke.bandwidth):
        assert 0 < stat.low <= stat.median <= stat.high and len(stat.samples) >= 2
    d = smoke.decode
    assert d["batches"] == list(measure.MODES["smoke"].batches) and all(s > 0 for s in d["seconds"])
    assert all(f <= m <= s for f, m, s in zip(d["fastest"], d["seconds"], d["slowest"]))
    path = smoke.save(tmp_path / "mine.json")
    again = measure.load_profile(path)
    assert again.summary()["balance_batch"] == pytest.approx(smoke.summary()["balance_batch"])
    assert json.loads(open(path).read())["chip"]["tflops"]["fp32"] == pytest.approx(smoke.flops / 1e12)
    assert hardware.chip_from_json(json.loads(open(path).read())["chip"]).name == "my machine"


@pytest.mark.parametrize("bad", [{"format": "other"}, [], "no-such-file.json", {"format": measure.FORMAT}])
def test_loading_a_broken_profile_says_so(bad):
    with pytest.raises(ValueError, match="source"):
        measure.load_profile(bad)


def test_predictions_come_from_chapter_1s_formulas(smoke):
    d = smoke.decode
    predicted = smoke.predicted()
    batch = np.asarray(d["batches"], dtype=float)
    compute = T_COMPUTE(B=batch, N_active=d["n_params"], FLOPs=smoke.flops)
    weights = T_WEIGHTS(N_total=d["n_params"], bytes_param=4, mem_bw=smoke.mem_bw)
    assert np.allclose(predicted["t"], np.maximum(compute, weights))
    assert smoke.balance_batch() == pytest.approx(roofline.HARDWARE_RATIO(FLOPs=smoke.flops, bytes_param=4,
                                                                          mem_bw=smoke.mem_bw))


def test_the_knee_is_where_the_floor_meets_the_compute_line():
    batches = [1, 2, 4, 8, 16, 32, 64, 128]
    seconds = [max(0.010, 0.001 * b) for b in batches]          # a perfect roofline with B* = 10
    assert measure.measured_knee(batches, seconds) == pytest.approx(10)
    assert measure.measured_knee([1, 2, 4], [1.0, 1.0, 1.0]) == math.inf     # never left the floor
    with pytest.raises(ValueError, match="batches"):
        measure.measured_knee([1, 2], [1.0, 2.0])


def test_cost_per_million_tokens_uses_the_measured_step(smoke):
    d = smoke.decode
    best = int(np.argmin(np.asarray(d["seconds"]) / np.asarray(d["batches"])))
    expected = d["seconds"][best] * 0.10 / 3600 / d["batches"][best] * 1e6
    assert smoke.cost_per_million(0.10) == pytest.approx(expected)
    assert smoke.cost_per_million(0.10, batch=1) == pytest.approx(d["seconds"][0] * 0.10 / 3600 * 1e6)
    with pytest.raises(ValueError, match="batch"):
        smoke.cost_per_million(0.10, batch=3)


# --- bad input and small machines -------------------------------------------------------------------------------

@pytest.mark.parametrize("call, name", [
    (lambda: measure.profile("fast"), "mode"), (lambda: measure.profile("smoke", threads=0), "threads"),
    (lambda: measure.profile("smoke", name=""), "name"), (lambda: measure.peak_flops("float16"), "dtype"),
    (lambda: measure.peak_flops(size=10**9), "size"), (lambda: measure.read_bandwidth(mb=0.5), "mb"),
    (lambda: measure.decode_times(batches=[0, 4]), "batches"), (lambda: measure.decode_times(weight_mb=1e300), "weight_mb"),
    (lambda: measure.decode_times(repeats=10**9), "repeats"), (lambda: measure.profile("smoke", progress=3), "progress"),
])
def test_bad_input_is_refused_by_name(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_too_little_memory_shrinks_the_arrays_and_says_so(monkeypatch):
    monkeypatch.setattr(measure, "_memory", lambda: (8e9, 400e6))        # 400 MB free: 160 MB may be used
    notes = []
    assert measure._fit_in_memory("decode weights", 512e6, 128e6, notes) == pytest.approx(160e6)
    assert "only 400 MB is free" in notes[0] and "used 160 MB" in notes[0]
    monkeypatch.setattr(measure, "_memory", lambda: (8e9, 100e6))
    with pytest.raises(MemoryError, match="only 100 MB of memory is free"):
        measure._fit_in_memory("decode weights", 512e6, 128e6, [])


def test_asked_directly_for_more_memory_than_is_free_a_measurement_says_so_and_uses_less(monkeypatch):
    """§6: a learner calling read_bandwidth or decode_times with a size the machine cannot spare gets a smaller array
    and a sentence saying so, not a crash; with nothing to spare, a MemoryError naming the parameter."""
    monkeypatch.setattr(measure, "_memory", lambda: (8e9, 250e6))         # 250 MB free: 100 MB may be used
    with pytest.warns(ResourceWarning, match="only 250 MB is free; used 100 MB instead"):
        got = measure.read_bandwidth(mb=256, repeats=1, threads=1)
    assert got.median > 0
    with pytest.warns(ResourceWarning, match="weight_mb: asked for 512 MB"):
        decode = measure.decode_times(batches=(1, 2), weight_mb=512, repeats=1)
    assert decode["n_params"] * 4 <= 105e6 and "used 100 MB instead" in decode["notes"][0]
    monkeypatch.setattr(measure, "_memory", lambda: (8e9, 1e6))
    for call, name in ((lambda: measure.read_bandwidth(mb=64, repeats=1), "mb"),
                       (lambda: measure.decode_times(weight_mb=64, repeats=1), "weight_mb")):
        with pytest.raises(MemoryError, match=f"{name}: only 1 MB of memory is free"):
            call()


def test_a_busy_machine_says_so_and_measures_on_its_free_cores():
    assert measure.free_cores({"cores": 2, "load_average": 1.2}) == 1
    assert measure.free_cores({"cores": 8, "load_average": 0.1}) == 8
    assert measure.free_cores({"cores": 2, "load_average": 9.0}) == 1
    assert measure.free_cores({"cores": 4, "load_average": None}) == 4


# --- the goals, with tolerances for a shared machine --------------------------------------------------------------

@pytest.mark.slow
def test_quick_mode_lands_near_the_roofline_it_predicts():
    """Issue 50's goals (strict: 15%, 15%, 2x, in make bench), held within 2.5x here: one BLAS thread, so a
    second thread waiting for a descheduled one cannot turn a busy machine's numbers into noise."""
    # make test runs this beside other workers on the same cores: a run they crowd is measured again (up to three
    # runs), as a learner on a busy machine would; one run within the bounds is what the lab promises.
    def within(summary) -> bool:
        return (summary["seconds"] < 60 and 1 / 2.5 < summary["batch1_ratio"] < 2.5
                and 1 / 2.5 < summary["large_batch_ratio"] < 2.5
                and 1 / 6 < summary["knee"] / summary["balance_batch"] < 6
                and summary["peak_fp32"] > summary["peak_fp64"] * 0.9)

    tried = []
    for _ in range(3):
        tried.append(measure.profile("quick", threads=1).summary())
        if within(tried[-1]):
            break
    assert within(tried[-1]), tried


# --- drawing ------------------------------------------------------------------------------------------------------

def test_the_lab_draws_the_measurement_and_the_class(smoke):
    from lecture_lib.explorers import lab

    figure = lab.roofline_figure(smoke)
    labels = [text.get_text() for text in figure.legends[0].get_texts()] if figure.legends else \
        [line.get_label() for line in figure.axes[0].get_lines()]
    assert any("predicted B*" in label for label in labels) and any("roofline" in label for label in labels)
    other = measure.load_profile({**smoke.as_dict(), "name": "Grace's desktop"})
    assert "Grace" in lab.class_table([smoke, other]) and lab.class_figure([smoke, other]).axes
    assert "batch" in lab.gap_table(smoke) and "BLAS" in lab.report_html(smoke)
    with pytest.raises(ValueError, match="profiles"):
        lab.class_figure([])


def test_the_progress_bar_moves_forward_to_the_end():
    from lecture_lib.explorers import lab

    bar = lab.ProgressBar()
    measure.profile("smoke", threads=1, progress=bar)
    fractions = [fraction for fraction, _ in bar.stages]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0 and bar.bar.value == 1.0
    assert len(bar.stages) >= 6


# --- PyTorch, where installed -------------------------------------------------------------------------------------

def test_without_pytorch_the_lab_says_what_it_would_measure(monkeypatch):
    """Issue 50 §5: no PyTorch (simulated here by hiding it) -> one sentence naming every figure the GPU path would
    take, and the GPU functions raise that sentence instead of failing on an import."""
    monkeypatch.setitem(sys.modules, "torch", None)          # `import torch` now raises ImportError
    sentence = measure.torch_status()
    assert "not installed" in sentence
    for words in ("bf16", "fp8", "read bandwidth", "decode step", "batch 1 to 1,024", "synchronisation",
                  "roofline.decode_step"):
        assert words in sentence, words
    for call in (measure.torch_profile, measure.torch_decode_times):
        with pytest.raises(RuntimeError, match="not installed"):
            call()
    assert "batch 1 to 1,024" in measure.torch_plan() and "d_model 4,096" in measure.torch_plan()


def _small_torch_run(**options):
    """The GPU path at a size the CPU device runs in a second: 8 MB of weights, d_model 128."""
    small = {"fmt": "fp32", "size": 128, "read_mb": 8, "repeats": 2, "batches": (1, 4, 16, 64), "weight_mb": 8,
             "d_model": 128, "d_ff": 352}
    return measure.torch_profile("cpu", **{**small, **options})


def test_the_gpu_path_runs_on_pytorchs_cpu_device_and_predicts_with_chapter_1():
    pytest.importorskip("torch")
    got = _small_torch_run()
    assert got["device"] == "cpu" and got["flops"]["fp32"].median > 1e7 and got["bandwidth"].median > 1e7
    d = got["decode"]["fp32"]
    assert d["batches"] == [1, 4, 16, 64] and d["bytes_param"] == 4 and d["fmt"] == "fp32"
    assert d["n_params"] == d["n_layers"] * (4 * 128 * 128 + 3 * 128 * 352)
    assert d["n_layers"] == round(8e6 / ((4 * 128 * 128 + 3 * 128 * 352) * 4))
    assert all(f <= m <= s for f, m, s in zip(d["fastest"], d["seconds"], d["slowest"]))
    predicted = measure.torch_predicted(got, "fp32")
    expected = roofline.decode_step(batch=np.asarray(d["batches"], dtype=float), n_active=d["n_params"],
                                    n_total=d["n_params"], flops=got["flops"]["fp32"].median,
                                    mem_bw=got["bandwidth"].median, bytes_param=4, len_ctx=0, bytes_tok=0)
    assert np.allclose(predicted["t"], expected["t"])
    with pytest.raises(ValueError, match="fmt"):
        measure.torch_predicted(got, "bf16")
    bf16 = measure.torch_decode_times("cpu", fmt="bf16", batches=(1, 8), weight_mb=4, repeats=2, d_model=128, d_ff=352)
    assert bf16["bytes_param"] == 2 and bf16["n_params"] * 2 == pytest.approx(4e6, rel=0.3)


def test_the_gpu_path_synchronises_the_device_around_every_timed_step(monkeypatch):
    """A GPU runs kernels asynchronously: without a synchronisation inside the timed region the clock reads the
    launch. Every repeat (and the warm-up) must end with one."""
    pytest.importorskip("torch")
    calls = []
    monkeypatch.setattr(measure, "_torch_sync", lambda torch, device: lambda: calls.append(device))
    measure.torch_decode_times("cpu", fmt="fp32", batches=(1, 2, 4), weight_mb=2, repeats=3, d_model=64, d_ff=176)
    # per batch: one before the clock starts, then the warm-up and 3 repeats each end with one
    assert len(calls) == 3 * (1 + 1 + 3) and set(calls) == {"cpu"}


def test_the_gpu_path_refuses_what_it_cannot_run(monkeypatch):
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError, match="fmt"):
        measure.torch_decode_times("cpu", fmt="int4")
    with pytest.raises(ValueError, match="device"):
        measure.torch_decode_times("tpu")
    with pytest.raises(ValueError, match="batches"):
        measure.torch_decode_times("cpu", batches=[0.5])
    if not torch.cuda.is_available() and not (torch.backends.mps.is_available()):
        with pytest.raises(RuntimeError, match="no GPU"):
            measure.torch_profile()
    # too little memory for the weights asked: a smaller stack, said in the notes; less than one layer: an error
    monkeypatch.setattr(measure, "_torch_free_bytes", lambda torch, device: 10e6)
    notes = []
    got = measure.torch_decode_times("cpu", fmt="fp32", batches=(1, 2), weight_mb=64, repeats=1, d_model=64,
                                     d_ff=176, notes=notes)
    assert got["n_params"] * 4 <= 0.4 * 10e6 * 1.2 and "only 10 MB is free" in notes[0]
    with pytest.raises(MemoryError, match="less than one"):
        measure.torch_decode_times("cpu", fmt="fp32", batches=(1,), weight_mb=64, d_model=2048, d_ff=5632)


def test_fp8_runs_where_the_device_has_it_and_says_so_where_not():
    torch = pytest.importorskip("torch")
    if measure._torch_fp8_ok(torch, "cpu"):
        got = measure.torch_decode_times("cpu", fmt="fp8", batches=(1, 16, 17), weight_mb=2, repeats=1, d_model=64,
                                         d_ff=176)
        assert got["bytes_param"] == 1 and len(got["seconds"]) == 3
        peaks = measure.torch_profile("cpu", fmt="bf16", size=100, read_mb=4, repeats=1, batches=())["flops"]
        assert set(peaks) == {"bf16", "fp8"} and peaks["fp8"].median > 0      # 100 is cut to 96 for fp8's kernels
    else:
        with pytest.raises(RuntimeError, match="no fp8"):
            measure.torch_decode_times("cpu", fmt="fp8", batches=(1,), weight_mb=2, d_model=64, d_ff=176)
        assert any(note.startswith("fp8:") for note in _small_torch_run(batches=())["notes"])


def test_the_lab_reports_a_gpu_run_against_its_roofline_without_needing_pytorch():
    """The GPU report is plain arithmetic on torch_profile()'s dict: a made-up H100-like run (989 TFLOP/s bf16, 3.35
    TB/s: NVIDIA's H100 SXM datasheet) whose steps sit exactly on the roofline reads 1.00x everywhere."""
    from lecture_lib.explorers import lab

    def stat(value, unit):
        return measure.Stat(value, value * 0.98, value * 1.01, unit, (value * 0.98, value, value * 1.01))

    batches = [1, 16, 256, 1024]
    n_params = 5 * (4 * 4096**2 + 3 * 4096 * 11264)
    t = [max(2 * n_params * b / 989e12, n_params * 2 / 3.35e12) for b in batches]
    result = {"device": "cuda", "flops": {"bf16": stat(989e12, "FLOP/s")}, "bandwidth": stat(3.35e12, "B/s"),
              "notes": [], "decode": {"bf16": {"batches": batches, "seconds": t, "fastest": t, "slowest": t,
                                               "n_params": n_params, "bytes_param": 2, "n_layers": 5}}}
    assert np.allclose(measure.torch_predicted(result)["t"], t)
    page = lab.gpu_report_html(result)
    assert page.count("1.00×") == 4 and "predicted B* 295" in page and "bf16 decode steps" in page


# --- the learner's own profile is never written by a test -----------------------------------------------------------

def test_the_profile_goes_where_lecture_profile_says(monkeypatch, tmp_path, smoke):
    monkeypatch.setenv("LECTURE_PROFILE", str(tmp_path / "elsewhere.json"))
    assert measure.profile_path() == str(tmp_path / "elsewhere.json")
    assert smoke.save() == str(tmp_path / "elsewhere.json")
    assert measure.load_profile().summary()["balance_batch"] == pytest.approx(smoke.balance_batch())
    monkeypatch.delenv("LECTURE_PROFILE")
    assert measure.profile_path().startswith(tempfile.gettempdir())       # a test: never the learner's file
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    assert measure.profile_path() == os.path.expanduser("~/.lecture_lib/my_machine.json")


def _home_profile():
    """The learner's profile file as it stands: (size, modification time), or None when there is none. (The progress
    file beside it has its own guard, tested with the checker.)"""
    path = os.path.expanduser(measure.DEFAULT_PROFILE)
    return (os.stat(path).st_size, os.stat(path).st_mtime_ns) if os.path.exists(path) else None


def test_a_test_run_and_its_kernels_leave_the_learners_profile_alone(smoke, tmp_path):
    """Issue 50: tests, and the Run All of the lab that they start in a kernel, write the profile to a temporary
    place. The lab's own save cell runs here in a child process with a home folder of its own, the way a kernel
    started by a test inherits the environment; then once more as a learner's (no test running) to show the home
    folder is where it would otherwise have gone."""
    before = _home_profile()
    saved = smoke.save()
    assert not saved.startswith(os.path.expanduser("~/.lecture_lib")) and os.path.exists(saved)
    notebook = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    save_cell = next("".join(c["source"]) for c in notebook["cells"]
                     if c["cell_type"] == "code" and "mine.save()" in "".join(c["source"]))
    save_line = next(line for line in save_cell.splitlines() if "mine.save()" in line)
    script = ("from lecture_lib import measure\nmine = measure.example_profile()\n" + save_line)
    for inside_a_test in (True, False):
        home = tmp_path / ("test" if inside_a_test else "learner")
        home.mkdir()
        env = {k: v for k, v in os.environ.items() if k != "LECTURE_PROFILE"}
        env["HOME"] = str(home)
        if not inside_a_test:
            env.pop("PYTEST_CURRENT_TEST", None)
        run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120,
                             check=False)
        assert run.returncode == 0, run.stderr
        assert (home / ".lecture_lib" / "my_machine.json").exists() is (not inside_a_test), run.stdout
    assert _home_profile() == before


@pytest.mark.slow
def test_a_registered_machine_is_offered_by_every_chip_dropdown(registry):
    """Issue 50 §4: "your machine" can be chosen wherever a chip is chosen; every explorer built after registering
    lists it, and each draws with it (a float32-only chip: the explorers fall back to its one format)."""
    from lecture_lib.explorers import base

    chip = measure.example_profile().chip()
    hardware.register_chip(chip)
    chosen = []
    for cls in base.explorer_classes():
        explorer = cls()
        for name, control in explorer.controls.items():
            options = [str(o) for o in getattr(control, "options", ())]
            mine = [o for o in options if o == chip.name or o.endswith(f"× {chip.name}")]
            if mine:
                control.value = mine[0]
                explorer.refresh(full=True)          # raises if the explorer cannot draw with it
                chosen.append(f"{cls.__name__}.{name}")
    assert {"BatchExplorer.chip", "ContextCostExplorer.chip", "MemoryExplorer.chip", "PlanExplorer.system"} \
        <= set(chosen), chosen


def test_in_the_browser_the_lab_says_it_measures_pyodide(monkeypatch):
    """JupyterLite runs Pyodide: no threads to start, and its figures are WebAssembly NumPy's, which the profile says."""
    monkeypatch.setattr(measure.sys, "platform", "emscripten")
    got = measure.profile("smoke", threads=1)
    assert any(note.startswith("browser:") and "not your CPU's" in note for note in got.notes)
    assert measure._threads() == 1


def test_an_allocation_that_fails_is_retried_smaller_and_said(monkeypatch):
    real = measure.read_bandwidth
    sizes = []

    def refuses_big(*, mb, **options):
        sizes.append(mb)
        if mb > 10:
            raise MemoryError
        return real(mb=mb, **options)

    monkeypatch.setattr(measure, "read_bandwidth", refuses_big)
    got = measure.profile("smoke", threads=1)
    assert sizes[:2] == [16, 8] and any("could not allocate 16 MB; used 8 MB" in note for note in got.notes)
    notes = []
    with pytest.raises(MemoryError, match="could not allocate"):
        measure._shrinking("decode weights", 64e6, 40e6, notes, lambda size: (_ for _ in ()).throw(MemoryError()))


# --- the learner's walk (issue 50's follow-up): what the chapter shows is computed, shown and covered --------------

def test_the_fitted_knee_finds_where_synthetic_curves_bend():
    batches = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
    for star in (3.0, 10.0, 40.0):                                   # perfect rooflines: the knee is B*
        seconds = [max(0.010, 0.010 * b / star) for b in batches]
        assert measure.measured_knee(batches, seconds) == pytest.approx(star, rel=0.02)
    rng = np.random.default_rng(3)                                   # 10% noise moves it little
    noisy = [max(0.010, 0.001 * b) * rng.uniform(0.9, 1.1) for b in batches]
    assert 7 < measure.measured_knee(batches, noisy) < 14
    # The learner's shape: batch 2 already 3.5x batch 1 and flat there up to batch 128, on a B* = 8 roofline whose
    # two ends sit on it. The ends alone still say 8; the curve bends where its raised floor meets the compute line,
    # 0.035 s / (0.01 s / 8) = 28, and the fitted knee finds that.
    bumped = [0.010] + [max(0.035, 0.010 * b / 8) for b in batches[1:]]
    assert measure.ends_knee(batches, bumped) == pytest.approx(8, rel=0.01)
    assert measure.measured_knee(batches, bumped) == pytest.approx(28, rel=0.3)
    # A curve that climbs from batch 2 on (a kernel switch), linear from there: the knee is near batch 1 to 2.
    early = [0.010] + [0.010 * 3 * b / 2 for b in batches[1:]]
    assert measure.measured_knee(batches, early) < 2.5
    assert measure.measured_knee(batches, [0.01] * len(batches)) == math.inf


def test_the_ends_knee_is_b_star_times_the_ratio_of_the_ends_gaps(smoke):
    s = smoke.summary()
    ratios = smoke.ratios()
    two_largest = sorted(ratios)[-2:]
    expected = s["balance_batch"] * s["batch1_ratio"] / float(np.median([ratios[b] for b in two_largest]))
    if math.isfinite(s["ends_knee"]):
        assert s["ends_knee"] == pytest.approx(expected, rel=1e-6)


def test_large_batches_are_the_median_over_256_and_above():
    example = measure.example_profile()
    assert example.large_batches() == [256, 512, 1024]
    ratios = example.ratios()
    assert example.summary()["large_batch_ratio"] == pytest.approx(float(np.median([ratios[b] for b in (256, 512, 1024)])))


def test_the_matrix_vector_read_is_measured_saved_and_loaded(smoke, tmp_path):
    assert smoke.gemv is not None and smoke.gemv.median > 0 and smoke.gemv.unit == "B/s"
    s = smoke.summary()
    weight_bytes = smoke.decode["n_params"] * smoke.decode["bytes_param"]
    assert s["batch1_gemv_ratio"] == pytest.approx(smoke.decode["seconds"][0] / (weight_bytes / smoke.gemv.median))
    again = measure.load_profile(smoke.save(tmp_path / "g.json"))
    assert again.gemv.median == pytest.approx(smoke.gemv.median)
    assert measure.example_profile().gemv is None and measure.example_profile().summary()["batch1_gemv_ratio"] is None
    with pytest.raises(ValueError, match="mb"):
        measure.gemv_bandwidth(mb=0.5)


def test_findings_are_computed_from_the_profile():
    from lecture_lib.explorers import lab

    example = measure.example_profile()
    s, ratios, d = example.summary(), example.ratios(), example.decode
    text = " ".join(lab.findings(example))
    assert f"{s['batch1_ratio']:.2f}×" in text and f"{s['large_batch_ratio']:.2f}×" in text
    assert f"{d['seconds'][1] / d['seconds'][0]:.2f}× batch 1's" in text
    slow = [b for b in d["batches"] if b > 1 and ratios[b] > 1.5]
    assert f"batches {slow[0]:,} to {slow[-1]:,}" in text and "256, 512 and 1,024" in text
    assert "more than 2× off" in text            # the reference profile's knee is not within 2x of its B*


def test_the_lab_states_no_typed_claim_its_data_can_contradict():
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    text = " ".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    for claim in ("99-101%", "about 40%", "often batch 2 to 16", "batch 4 was slower than batch 1",
                  "holds on a laptop", "between 4 and 10", "in two halves", "threads=None uses every core",
                  "weights stored in bf16 are multiplied in fp32"):
        assert claim not in text, claim


def _code_cells(path):
    return ["".join(c["source"]) for c in json.loads(Path(path).read_text())["cells"] if c["cell_type"] == "code"]


def test_no_notebook_throws_a_shown_formula_away():
    """A bare ``show(...)`` that is not a cell's last statement is computed and discarded: no formula appears."""
    import ast
    import warnings

    root = NOTEBOOK.parents[1]
    thrown = []
    for path in sorted([*root.glob("notebooks/*.ipynb"), *root.glob("solutions/*.ipynb")]):
        for index, source in enumerate(_code_cells(path)):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")   # LaTeX in a cell's strings
                    tree = ast.parse(source)
            except SyntaxError:                       # cell magics
                continue
            last = tree.body[-1] if tree.body else None
            for node in ast.walk(tree):
                if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
                        and getattr(node.value.func, "id", None) == "show" and node is not last):
                    thrown.append(f"{path.name} code cell {index}, line {node.lineno}")
    assert not thrown, thrown


def test_the_printed_b_star_is_covered_and_the_mode_needs_no_edit():
    code = _code_cells(NOTEBOOK)
    # Every cell that states the learner's B* on Run All (printed, a figure's line, a readout, a table) is covered.
    stating = [source for source in code if any(mark in source for mark in (
        'print(f"B* = ', "roofline_figure(mine)", "mine.summary()", "findings_html(mine)", "BatchExplorer(chip=mine",
        "class_table(profiles)"))]
    assert len(stating) == 6 and all(".cover(" in source for source in stating)
    setup = next(source for source in code if "MODE =" in source)
    assert "LECTURE_LAB_MODE" in setup and 'MODE = "quick"' not in setup


def test_the_machine_as_a_chip_says_what_it_is_not(smoke):
    chip = smoke.chip()
    assert "not applicable" in chip.sources["scale_up_bandwidth"] and chip.scale_up_domain == 1
    assert "measured" in chip.sources["release_year"] and chip.release_year == smoke.machine["measured_year"]


def test_the_explorer_takes_fp32_weights_and_prints_a_small_b_star(registry):
    from lecture_lib.explorers.roofline import BatchExplorer

    hardware.register_chip(hardware.custom_chip(name="slow cpu", hbm_capacity=64e9, hbm_bandwidth=100e9,
                                                flops={"fp32": 20e9}))     # B* = 10e9 * 4 / 100e9 = 0.4
    explorer = BatchExplorer(chip="slow cpu", n_chips=1, weights="fp32")
    readout = explorer.readout.value
    assert "multiplied in" not in readout and "fp32 weights" in readout and "0.4" in readout


def test_an_upside_down_bandwidth_gets_its_own_nudge(monkeypatch):
    from lecture_lib.practice import checks
    from lecture_lib.practice.problem_data import LAB_STEPS, LAB_WEIGHT_BYTES

    monkeypatch.delenv("LECTURE_STRICT", raising=False)
    result = checks.check("11.6", LAB_STEPS[1] / LAB_WEIGHT_BYTES)
    assert result.status == "wrong" and "upside down" in result.message and "too low" not in result.message
