"""Chapter 11 (the lab after Chapter 1): measure this computer and hold Chapter 1's roofline against it.

What is measured, with NumPy's own BLAS, and how:

- **peak matmul FLOP/s** per number format NumPy multiplies in (float32 and float64): square ``n x n``
  matrix products, ``2 n^3`` FLOPs each (2 per multiply-add, the course's convention);
- **read bandwidth**: a read-only pass (``max``) over an array far larger than the last-level cache,
  split over as many threads as the BLAS uses; a decode step at batch 1 only reads its weights, so a
  read probe is the right yardstick (a copy or triad would also count writes);
- **decode steps**: a stack of random-weight layers shaped like a small transformer (attention's
  q, k, v and o projections, a gated MLP's gate, up and down: Llama's layout, arxiv.org/abs/2302.13971)
  with its weights far beyond the cache, timed at batch 1 to 1,024, optionally reading a KV cache.

Each figure is the median of repeats with its spread (fastest and slowest). The prediction of a step's time
comes from :func:`lecture_lib.roofline.decode_step` with the measured peak and bandwidth (the course's own
Formulas, never a copy), and the measured machine becomes a chip (:meth:`Profile.chip`, through
:func:`lecture_lib.hardware.chip_from_json`) that :func:`lecture_lib.hardware.register_chip` offers to every
chip dropdown. This module measures; it draws nothing (the lab's figures and progress bar are in
:mod:`lecture_lib.explorers.lab`).

Modes (:data:`MODES`): ``"quick"`` (the lab's Run All and the tests: about 10 s of measuring on the course's
2-core machine), ``"full"`` (about a minute: bigger arrays, more repeats, batch up to 1,024, a KV-cache run)
and ``"smoke"`` (two seconds, numbers too small to mean anything: for testing the code paths).
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import json
import math
import os
import platform
import sys
import time
from collections.abc import Callable, Mapping

import numpy as np

from . import hardware, roofline, units, validate

__all__ = ["MODES", "Plan", "Profile", "Stat", "blas_info", "decode_times", "example_profile", "load_profile", "machine_report",
           "ends_knee", "free_cores", "gemv_bandwidth", "measured_knee", "peak_flops", "predicted_times", "profile", "profile_path", "read_bandwidth",
           "torch_decode_times", "torch_device", "torch_plan", "torch_predicted", "torch_profile", "torch_status"]

FORMAT = "lecture-lab-profile/1"
DEFAULT_PROFILE = "~/.lecture_lib/my_machine.json"
#: Where :meth:`Profile.save` and :func:`load_profile` go instead of :data:`DEFAULT_PROFILE` (see :func:`profile_path`).
PROFILE_ENV = "LECTURE_PROFILE"
MB = 1e6
BYTES_FP32 = 4
#: The lab's transformer-shaped layer: d_model and the MLP's inner width (2.75 x d_model, a multiple of 256,
#: near Llama's 8/3 ratio; arxiv.org/abs/2302.13971 §2.2 uses 2/3 x 4d for the gated MLP).
D_MODEL, D_FF = 1024, 2816
MEMORY_SHARE = 0.4        # never take more than this share of the memory the OS says is available
MAX_MB = 4000             # the largest array a measurement may be asked for, in MB
MAX_BATCH = 2048
#: decode_times repeats a step shorter than this budget (seconds, all repeats together), up to MAX_SHORT_REPEATS times
SHORT_STEP_BUDGET = 0.25
MAX_SHORT_REPEATS = 25


@dataclasses.dataclass(frozen=True)
class Plan:
    """What one mode measures: matrix size for the peak, MB read for the bandwidth, MB of decode weights,
    the batches timed, repeats per figure, and the KV context (0 for none)."""

    matmul_n: int
    read_mb: float
    weight_mb: float
    batches: tuple
    repeats: int
    len_ctx: int = 0


MODES: Mapping[str, Plan] = {
    "smoke": Plan(matmul_n=256, read_mb=16, weight_mb=16, batches=(1, 4, 16, 64), repeats=2),
    "quick": Plan(matmul_n=1024, read_mb=256, weight_mb=128, batches=(1, 2, 4, 8, 16, 32, 64, 128, 256),
                  repeats=3),
    "full": Plan(matmul_n=2048, read_mb=1024, weight_mb=512,
                 batches=(1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 512, 1024),
                 repeats=5, len_ctx=512),
}


@dataclasses.dataclass(frozen=True)
class Stat:
    """A measured figure: the median of ``samples`` with its spread (``low`` and ``high``, the worst and the
    best sample as rates), in ``unit``."""

    median: float
    low: float
    high: float
    unit: str
    samples: tuple = ()

    @property
    def spread(self) -> float:
        """(best - worst) / median: 0.05 is a steady figure, above 0.3 a machine busy with something else."""
        return (self.high - self.low) / self.median

    def as_dict(self) -> dict:
        return {"median": self.median, "low": self.low, "high": self.high, "unit": self.unit,
                "samples": list(self.samples)}


def _rate_stat(amount: float, seconds: list, unit: str) -> Stat:
    rates = sorted(amount / s for s in seconds)
    return Stat(float(np.median(rates)), rates[0], rates[-1], unit, tuple(rates))


# ============================================================================ the machine itself

def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def _cpu_model() -> str:
    for line in _read("/proc/cpuinfo").splitlines():
        if line.lower().startswith(("model name", "hardware", "cpu model")):
            return line.split(":", 1)[1].strip()
    if platform.system() == "Darwin":
        import subprocess

        with contextlib.suppress(Exception):
            return subprocess.run(["sysctl", "-n", "machdep.cpu.brand_string"], capture_output=True, text=True,
                                  timeout=2).stdout.strip()
    return platform.processor() or platform.machine() or "unknown"


def _caches() -> list[dict]:
    """Cache levels the OS lists (Linux sysfs), one entry per level and type: size in bytes and how many
    cores share it."""
    found, base = {}, "/sys/devices/system/cpu/cpu0/cache"
    with contextlib.suppress(OSError):
        for entry in sorted(os.listdir(base)):
            if not entry.startswith("index"):
                continue
            size = _read(f"{base}/{entry}/size")
            level, kind = _read(f"{base}/{entry}/level"), _read(f"{base}/{entry}/type")
            if not size or not level:
                continue
            factor = {"K": 1024, "M": 1024**2, "G": 1024**3}.get(size[-1].upper(), 1)
            number = size[:-1] if size[-1].isalpha() else size
            shared = _read(f"{base}/{entry}/shared_cpu_list")
            found[(int(level), kind)] = {"level": int(level), "type": kind, "bytes": int(number) * factor,
                                         "shared_by": shared}
    return list(found.values())


def _memory() -> tuple[float | None, float | None]:
    """(total, available) bytes of RAM, from /proc/meminfo, psutil, or sysconf; None where unknown."""
    info = {}
    for line in _read("/proc/meminfo").splitlines():
        key, _, rest = line.partition(":")
        with contextlib.suppress(ValueError, IndexError):
            info[key] = float(rest.split()[0]) * 1024
    if "MemTotal" in info:
        return info["MemTotal"], info.get("MemAvailable")
    with contextlib.suppress(Exception):
        import psutil

        memory = psutil.virtual_memory()
        return float(memory.total), float(memory.available)
    with contextlib.suppress(Exception):
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        return float(total), None
    return None, None


def _cores() -> int:
    with contextlib.suppress(AttributeError):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _openblas():
    """NumPy's OpenBLAS as a ctypes library and the suffix of its symbols, or (None, "") when it is not
    OpenBLAS or cannot be found (threadpoolctl does this more widely; it is used first when installed)."""
    maps = _read("/proc/self/maps")
    paths = sorted({line.split()[-1] for line in maps.splitlines() if "openblas" in line.lower() and "/" in line})
    for path in paths:
        with contextlib.suppress(OSError):
            lib = ctypes.CDLL(path)
            for prefix, suffix in (("scipy_", "64_"), ("", "64_"), ("", "")):
                if hasattr(lib, f"{prefix}openblas_get_num_threads{suffix}"):
                    return lib, (prefix, suffix)
    return None, ("", "")


def blas_info() -> dict:
    """NumPy's BLAS: library, version, the kernel it chose for this CPU and its thread count, from threadpoolctl
    when installed, else from OpenBLAS itself and ``numpy.show_config``."""
    info = {"library": "unknown", "version": "", "kernel": "", "threads": None}
    with contextlib.suppress(Exception):
        config = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        info.update(library=str(config.get("name", "unknown")), version=str(config.get("version", "")))
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        threadpool_info = None
    if threadpool_info is not None:
        for pool in threadpool_info():
            if pool.get("user_api") == "blas":
                info.update(library=pool.get("internal_api", info["library"]), version=pool.get("version") or "",
                            kernel=pool.get("architecture") or "", threads=pool.get("num_threads"),
                            source="threadpoolctl")
                return info
    lib, (prefix, suffix) = _openblas()
    if lib is not None:
        corename = getattr(lib, f"{prefix}openblas_get_corename{suffix}", None)
        if corename is not None:
            corename.restype = ctypes.c_char_p
            info["kernel"] = corename().decode(errors="replace")
        info["threads"] = int(getattr(lib, f"{prefix}openblas_get_num_threads{suffix}")())
        info["source"] = "OpenBLAS's own functions"
    return info


@contextlib.contextmanager
def _blas_threads(threads: int | None):
    """Run the block with NumPy's BLAS limited to ``threads`` threads (None: leave it as it is)."""
    if threads is None:
        yield
        return
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        threadpool_limits = None
    if threadpool_limits is not None:
        with threadpool_limits(limits=threads, user_api="blas"):
            yield
        return
    lib, (prefix, suffix) = _openblas()
    if lib is None:
        yield                                      # neither threadpoolctl nor OpenBLAS: nothing to limit
        return
    before = int(getattr(lib, f"{prefix}openblas_get_num_threads{suffix}")())
    setter = getattr(lib, f"{prefix}openblas_set_num_threads{suffix}")
    setter(ctypes.c_int(threads))
    try:
        yield
    finally:
        setter(ctypes.c_int(before))


def machine_report() -> dict:
    """What is being measured: CPU model, cores usable by this process, the BLAS and its kernel and threads,
    caches and RAM where the OS tells them, the Python and NumPy versions, and the load average (how busy
    the machine already was)."""
    total, available = _memory()
    load = None
    with contextlib.suppress(OSError, AttributeError):
        load = os.getloadavg()[0]
    return {"cpu": _cpu_model(), "cores": _cores(), "machine": platform.machine(), "system": platform.system(),
            "blas": blas_info(), "caches": _caches(), "ram_bytes": total, "ram_available_bytes": available,
            "python": platform.python_version(), "numpy": np.__version__, "load_average": load}


def _last_level_cache(report: dict) -> float:
    sizes = [cache["bytes"] for cache in report.get("caches", []) if cache["type"] != "Instruction"]
    return float(max(sizes)) if sizes else 32 * 1024**2


def _fit_in_memory(name: str, wanted: float, minimum: float, notes: list) -> float:
    """``wanted`` bytes, or less when the machine has not that much to spare (said in ``notes``); a
    ``MemoryError`` that says what to do when not even ``minimum`` fits."""
    _, available = _memory()
    if available is None or wanted <= MEMORY_SHARE * available:
        return wanted
    room = MEMORY_SHARE * available
    if room < minimum:
        raise MemoryError(f"{name}: only {available / MB:,.0f} MB of memory is free, and the smallest "
                          f"meaningful array is {minimum / MB:,.0f} MB (it must be far larger than the CPU's "
                          f"cache). Close other programs, or run on a machine with more memory.")
    notes.append(f"{name}: asked for {wanted / MB:,.0f} MB, but only {available / MB:,.0f} MB is free; "
                 f"used {room / MB:,.0f} MB instead.")
    return room


# ============================================================================ the measurements

def _time(function: Callable[[], object], repeats: int, *, warm_up: bool = True) -> list[float]:
    if warm_up:
        function()                               # warm-up: threads started, pages touched, kernels chosen
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        seconds.append(max(time.perf_counter() - start, 1e-9))
    return seconds


DTYPES = {"float32": np.float32, "float64": np.float64}


def _fit_or_warn(name: str, mb: float, notes: list | None = None, minimum_mb: float = 1) -> float:
    """``mb``, or the MB the machine can spare when it has less free (said as a warning, and in ``notes``); a
    ``MemoryError`` naming ``name`` when not even ``minimum_mb`` can be spared. profile() sizes its arrays before calling, so
    this speaks only when a learner asks a measurement for more memory than the machine has."""
    said = []
    fitted = _fit_in_memory(name, mb * MB, min(mb, minimum_mb) * MB, said) / MB
    if said:
        import warnings

        warnings.warn(said[0], ResourceWarning, stacklevel=3)
        if notes is not None:
            notes.extend(said)
    return fitted


def peak_flops(dtype: str = "float32", *, size: int = 1024, repeats: int = 5) -> Stat:
    """Matmul FLOP/s in ``dtype`` ("float32" or "float64"): ``2 size^3`` FLOPs per ``size x size`` product
    (2 per multiply-add), timed ``repeats`` times after one warm-up; the median rate with its spread."""
    validate.choice("dtype", dtype, list(DTYPES))
    size = validate.integer("size", size, minimum=16, maximum=4000)
    repeats = validate.integer("repeats", repeats, maximum=50)
    rng = np.random.default_rng(0)
    a = rng.random((size, size), dtype=DTYPES[dtype])
    b = rng.random((size, size), dtype=DTYPES[dtype])
    out = np.empty_like(a)
    return _rate_stat(2.0 * size**3, _time(lambda: np.matmul(a, b, out=out), repeats), "FLOP/s")


def _threads() -> int:
    if sys.platform == "emscripten":             # Pyodide (JupyterLite): no threads to start
        return 1
    threads = blas_info().get("threads")
    return int(threads) if threads else _cores()


def read_bandwidth(*, mb: float = 256, repeats: int = 5, threads: int | None = None) -> Stat:
    """Read-only memory bandwidth in bytes/s: ``max`` over a float32 array of ``mb`` megabytes (choose it far
    larger than the last-level cache), split over ``threads`` threads (default: as many as NumPy's BLAS
    uses, as a decode step's matrix-vector products do). NumPy's reductions release the GIL, so the
    threads read at once. Asked for more than the machine can spare (40% of the free memory), it reads a smaller
    array and says so in a ``ResourceWarning``."""
    mb = validate.scalar("mb", mb, maximum=MAX_MB)
    if mb < 1:
        raise ValueError(f"mb must be at least 1 (megabyte), got {mb!r}")
    repeats = validate.integer("repeats", repeats, maximum=50)
    threads = _threads() if threads is None else validate.integer("threads", threads, maximum=256)
    mb = _fit_or_warn("mb", mb)
    try:
        data = np.ones(int(mb * MB) // BYTES_FP32, dtype=np.float32)
    except MemoryError:
        raise MemoryError(f"mb: could not allocate {mb:,.0f} MB to read; ask for fewer MB") from None
    chunks = np.array_split(data, threads * 4)
    if threads == 1:
        def read():
            for chunk in chunks:
                chunk.max()
        return _rate_stat(data.nbytes, _time(read, repeats), "B/s")
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(threads) as pool:
        return _rate_stat(data.nbytes, _time(lambda: list(pool.map(np.max, chunks)), repeats), "B/s")


def gemv_bandwidth(*, mb: float = 256, repeats: int = 5) -> Stat:
    """The read rate NumPy's BLAS reaches in a matrix-vector product, in bytes/s: a ``(1, 1024)`` row times a float32
    matrix of ``mb`` megabytes with 1,024 rows (the layout of the lab's decode weights, ``x @ W``), on the BLAS's
    threads. A batch-1 decode step is a chain of such products, so where this falls short of
    :func:`read_bandwidth` (a plain ``max``), the batch-1 step falls short of the roofline by the same factor: the
    kernel, not the memory."""
    mb = validate.scalar("mb", mb, maximum=MAX_MB)
    if mb < 1:
        raise ValueError(f"mb must be at least 1 (megabyte), got {mb!r}")
    repeats = validate.integer("repeats", repeats, maximum=50)
    mb = _fit_or_warn("mb", mb)
    rows = 1024
    cols = max(1, int(mb * MB) // (BYTES_FP32 * rows))
    try:
        matrix = np.ones((rows, cols), dtype=np.float32)
    except MemoryError:
        raise MemoryError(f"mb: could not allocate {mb:,.0f} MB to read; ask for fewer MB") from None
    x = np.ones((1, rows), dtype=np.float32)
    return _rate_stat(matrix.nbytes, _time(lambda: x @ matrix, repeats), "B/s")


class _Stack:
    """Random float32 weights of ``n_layers`` transformer-shaped layers (see the module's docstring)."""

    def __init__(self, weight_bytes: float, *, d_model: int = D_MODEL, d_ff: int = D_FF, seed: int = 0):
        per_layer = (4 * d_model * d_model + 3 * d_model * d_ff) * BYTES_FP32
        self.d_model, self.d_ff = d_model, d_ff
        self.n_layers = max(1, round(weight_bytes / per_layer))
        rng = np.random.default_rng(seed)

        def weight(rows, cols):   # variance 1/rows keeps activations near 1 through the layers
            w = rng.random((rows, cols), dtype=np.float32)
            w -= 0.5
            w *= math.sqrt(12 / rows)
            return w

        self.layers = [(weight(d_model, 3 * d_model), weight(d_model, d_model), weight(d_model, 2 * d_ff),
                        weight(d_ff, d_model)) for _ in range(self.n_layers)]
        self.n_params = sum(w.size for layer in self.layers for w in layer)

    def kv_bytes_per_token(self) -> float:
        """K and V of every layer, float32: the KV read per token of context."""
        return 2 * self.n_layers * self.d_model * BYTES_FP32

    def step(self, x, cache=None):
        d, d_ff = self.d_model, self.d_ff
        for index, (w_qkv, w_o, w_gu, w_down) in enumerate(self.layers):
            qkv = x @ w_qkv
            h = qkv[:, :d]
            if cache is not None:                   # read this layer's K and V of every sequence once
                keys, values = cache[index]
                scores = np.matmul(keys, qkv[:, d:2 * d, None])[..., 0] * (1 / math.sqrt(d))
                h = h + np.matmul(scores[:, None, :], values)[:, 0, :]
            x = h @ w_o
            gu = x @ w_gu
            x = gu[:, :d_ff] @ w_down
        return x


_STACKS: dict = {}


def _stack(weight_bytes: float) -> _Stack:
    """One stack per size per session (building 256 MB of random weights takes a fraction of a second, and the
    lab times the same stack several times)."""
    key = int(weight_bytes)
    if key not in _STACKS:
        _STACKS.clear()                              # keep at most one stack alive
        _STACKS[key] = _Stack(weight_bytes)
    return _STACKS[key]


def decode_times(*, batches=(1, 16, 256), weight_mb: float = 256, repeats: int = 3, len_ctx: int = 0,
                 progress: Callable[[float, str], None] | None = None) -> dict:
    """Time one decode step of the lab's layer stack (``weight_mb`` MB of float32 weights) at each batch.

    Returns ``{"batches", "seconds" (medians), "fastest", "slowest", "n_params", "bytes_param" (4),
    "len_ctx", "kv_bytes_per_token"}``, and ``"notes"`` when the machine had less memory free than ``weight_mb``
    asked (a smaller stack is then timed, and a ``ResourceWarning`` says so). With ``len_ctx > 0`` every sequence also reads a KV cache of that
    many tokens in every layer (the lecture's t_kv term). ``progress(fraction, what)`` is called after each
    batch."""
    given = np.atleast_1d(validate.number("batches", batches, maximum=MAX_BATCH))
    if given.ndim != 1 or np.any(given < 1) or np.any(given != np.round(given)):
        raise ValueError(f"batches must be whole numbers from 1 to {MAX_BATCH}, got {batches!r}")
    batches = sorted({int(b) for b in given})
    weight_mb = validate.scalar("weight_mb", weight_mb, maximum=MAX_MB)
    if weight_mb < 1:
        raise ValueError(f"weight_mb must be at least 1 (megabyte), got {weight_mb!r}")
    repeats = validate.integer("repeats", repeats, maximum=50)
    len_ctx = validate.integer("len_ctx", len_ctx, minimum=0, maximum=1 << 20)
    if progress is not None and not callable(progress):
        raise ValueError(f"progress must be a function of (fraction, text) or None, got {progress!r}")
    notes: list = []
    one_layer = (4 * D_MODEL * D_MODEL + 3 * D_MODEL * D_FF) * BYTES_FP32 / MB      # the stack's smallest size
    weight_mb = _fit_or_warn("weight_mb", weight_mb, notes, minimum_mb=one_layer)
    try:
        stack = _stack(weight_mb * MB)
    except MemoryError:
        _STACKS.clear()
        raise MemoryError(f"weight_mb: could not allocate {weight_mb:,.0f} MB of weights; ask for fewer MB") from None
    kv_bytes = stack.kv_bytes_per_token() if len_ctx else 0.0
    if len_ctx and kv_bytes * len_ctx * batches[-1] > MEMORY_SHARE * (_memory()[1] or float("inf")):
        raise MemoryError(f"len_ctx: a KV cache of {len_ctx} tokens for {batches[-1]} sequences needs "
                          f"{kv_bytes * len_ctx * batches[-1] / MB:,.0f} MB; use a shorter context or smaller batches")
    rng = np.random.default_rng(1)
    # Work in proportion to the batch: the few largest batches dominate, so weigh the progress bar that way.
    work = np.array([stack.n_params * (b + 64) for b in batches], dtype=float)
    medians, fastest, slowest = [], [], []
    for index, batch in enumerate(batches):
        x = rng.standard_normal((batch, stack.d_model), dtype=np.float32)
        cache = None
        if len_ctx:
            cache = [(rng.standard_normal((batch, len_ctx, stack.d_model), dtype=np.float32),
                      rng.standard_normal((batch, len_ctx, stack.d_model), dtype=np.float32))
                     for _ in range(stack.n_layers)]
        # Warm up at the first batches only: later ones reuse the started threads and touched pages, and a
        # warm-up at the largest batches would cost as much as a repeat.
        seconds = _time(lambda: stack.step(x, cache), repeats, warm_up=index < 2)
        # A short step is cheap to repeat, and one preemption by another program (a few ms) can double it: time
        # it until SHORT_STEP_BUDGET seconds have passed (at most MAX_SHORT_REPEATS), for a steadier median.
        while sum(seconds) < SHORT_STEP_BUDGET and len(seconds) < MAX_SHORT_REPEATS:
            seconds += _time(lambda: stack.step(x, cache), 1, warm_up=False)
        seconds = sorted(seconds)
        medians.append(float(np.median(seconds)))
        fastest.append(seconds[0])
        slowest.append(seconds[-1])
        if progress is not None:
            progress(float(work[:index + 1].sum() / work.sum()), f"decode step at batch {batch}")
    return {"batches": batches, "seconds": medians, "fastest": fastest, "slowest": slowest,
            "n_params": stack.n_params, "bytes_param": BYTES_FP32, "len_ctx": len_ctx,
            "kv_bytes_per_token": kv_bytes, **({"notes": notes} if notes else {})}


def predicted_times(*, batches, n_params: float, flops: float, mem_bw: float, bytes_param: float = BYTES_FP32,
                    len_ctx: float = 0, kv_bytes_per_token: float = 0) -> dict:
    """Chapter 1's roofline for the lab's stack: :func:`lecture_lib.roofline.decode_step` (E1.1-E1.3) with
    ``N_active = N_total = n_params`` (a dense stack), the measured ``flops`` and ``mem_bw``. Arrays in, arrays
    out: ``{"t_compute", "t_weights", "t_kv", "t_mem", "t"}`` in seconds."""
    batches = np.asarray(validate.number("batches", batches), dtype=float)
    n_params, flops, mem_bw, bytes_param = (validate.scalar(name, value) for name, value in dict(
        n_params=n_params, flops=flops, mem_bw=mem_bw, bytes_param=bytes_param).items())
    len_ctx = validate.number("len_ctx", len_ctx, allow_zero=True)
    kv_bytes_per_token = validate.number("kv_bytes_per_token", kv_bytes_per_token, allow_zero=True)
    return roofline.decode_step(batch=batches, n_active=n_params, n_total=n_params, flops=flops, mem_bw=mem_bw,
                                bytes_param=bytes_param, len_ctx=len_ctx, bytes_tok=kv_bytes_per_token)


def _sorted_curve(batches, seconds) -> tuple[np.ndarray, np.ndarray]:
    """A measured curve checked (two lists of the same length, at least 3 points) and sorted by batch."""
    batches = np.asarray(validate.number("batches", batches), dtype=float)
    seconds = np.asarray(validate.number("seconds", seconds), dtype=float)
    if batches.ndim != 1 or batches.shape != seconds.shape or batches.size < 3:
        raise ValueError(f"batches and seconds must be two lists of the same length, at least 3, got "
                         f"{batches.size} and {seconds.size}")
    order = np.argsort(batches)
    return batches[order], seconds[order]


def measured_knee(batches, seconds) -> float:
    """Where the measured curve bends: the batch ``k`` of the best fit of ``t(B) = a * max(1, B / k)`` to the
    measured step times (a flat part, then a straight line through the origin), least squares on the logarithm
    of the times over every measured batch. The fit is found by trying every ``k`` on a fine log grid between the
    smallest and the largest batch (for each ``k`` the best level ``a`` is the geometric mean of
    ``t_i / max(1, B_i / k)``).

    Unlike a construction from the two ends alone (the batch-1 time over the largest batches' time per sequence,
    which is ``B*`` times the ratio of the two ends' gaps to the roofline and so lands near ``B*`` whatever the
    batches between do), every measured batch moves this knee: a curve that leaves the floor at batch 2 bends early.
    ``inf`` when the largest batch takes less than 1.5x the batch-1 time (the curve has not left the floor:
    measure larger batches)."""
    batches, seconds = _sorted_curve(batches, seconds)
    if seconds[-1] < 1.5 * seconds[0]:      # the largest batch is still near the floor: nothing bends yet
        return math.inf
    low, high = math.log(batches[0]), math.log(batches[-1])
    for _ in range(3):                          # a log grid, then two finer ones around its best point
        knees = np.exp(np.linspace(low, high, 1001))
        shape = np.log(np.maximum(1.0, batches[None, :] / knees[:, None]))      # log max(1, B / k)
        residual = np.log(seconds)[None, :] - shape
        level = residual.mean(axis=1, keepdims=True)                              # the best log a for each k
        best = int(np.argmin(((residual - level) ** 2).sum(axis=1)))
        step = (high - low) / 1000
        low, high = math.log(knees[best]) - step, math.log(knees[best]) + step
    return float(knees[best])


def ends_knee(batches, seconds) -> float:
    """The two ends' construction, built like B* itself: the flat line through the batch-1 step time meets the line
    through the origin with the median time per sequence of the two largest batches. It equals the predicted B*
    times (batch-1 ratio / large-batch ratio) to the roofline, so it says how the ends compare, not where the
    measured curve bends (that is :func:`measured_knee`). ``inf`` as :func:`measured_knee`."""
    batches, seconds = _sorted_curve(batches, seconds)
    if seconds[-1] < 1.5 * seconds[0]:
        return math.inf
    return float(seconds[0] / np.median(seconds[-2:] / batches[-2:]))


# ============================================================================ a whole profile

@dataclasses.dataclass
class Profile:
    """One machine's measurements: what the lab saves as JSON and turns into a chip."""

    name: str
    mode: str
    machine: dict
    peak: dict               # {"float32": Stat, "float64": Stat}
    bandwidth: Stat          # read-only, bytes/s
    decode: dict             # decode_times(...)'s result
    notes: list = dataclasses.field(default_factory=list)
    seconds: float = 0.0     # wall time of the whole measurement
    gemv: Stat | None = None  # the read rate of one large matrix-vector product (gemv_bandwidth); None in old profiles

    # ---------------------------------------------------------------- the roofline from these numbers
    @property
    def flops(self) -> float:
        """The float32 peak (the format of the stack's weights), FLOP/s."""
        return self.peak["float32"].median

    @property
    def mem_bw(self) -> float:
        return self.bandwidth.median

    def chip_json(self) -> dict:
        """This machine in :func:`lecture_lib.hardware.chip_from_json`'s format: RAM as "HBM", the read
        bandwidth, the float32 peak as ``fp32`` (no chip format holds float64), one chip per scale-up domain."""
        ram = self.machine.get("ram_bytes") or 16e9
        return {"name": self.name, "hbm_gb": ram / 1e9, "hbm_tb_s": self.mem_bw / 1e12,
                "tflops": {"fp32": self.flops / 1e12}, "scale_up": 1}

    def chip(self) -> hardware.Chip:
        """This machine as a course chip (float32 only); :func:`lecture_lib.hardware.register_chip` it to choose
        it in any chapter's chip dropdown. One CPU is a scale-up domain of 1, so it has no chip-to-chip links: its
        scale-up and scale-out bandwidths are placeholders no formula uses with one chip (its sources say so), and
        its release year (a chip needs one) is the year it was measured, not the CPU's."""
        chip = hardware.chip_from_json(self.chip_json())
        sources = dict(chip.sources)
        sources["scale_up_bandwidth"] = sources["scale_out_bandwidth"] = (
            "not applicable: one CPU, no links to other chips (a placeholder, unused at 1 chip)")
        sources["release_year"] = "the year this machine was measured (the CPU's own release year is not measured)"
        year = self.machine.get("measured_year") or time.localtime().tm_year
        return dataclasses.replace(chip, release_year=int(year), sources=sources)

    def balance_batch(self) -> float:
        """Predicted B* for float32 weights and multiplies: Chapter 1's :func:`lecture_lib.roofline.balance_batch`
        on :meth:`chip`."""
        return roofline.balance_batch(self.chip(), weight_bytes=BYTES_FP32, compute_dtype="fp32")

    def predicted(self, batches=None) -> dict:
        """:func:`predicted_times` at ``batches`` (default: the batches measured), with this profile's figures."""
        d = self.decode
        return predicted_times(batches=d["batches"] if batches is None else batches, n_params=d["n_params"],
                               flops=self.flops, mem_bw=self.mem_bw, bytes_param=d["bytes_param"],
                               len_ctx=d.get("len_ctx", 0), kv_bytes_per_token=d.get("kv_bytes_per_token", 0))

    def knee(self) -> float:
        """Where the measured curve bends: :func:`measured_knee` (a fit of a flat part and a straight line to every
        measured batch)."""
        return measured_knee(self.decode["batches"], self.decode["seconds"])

    def large_batches(self) -> list:
        """The batches whose ratios :meth:`summary`'s ``large_batch_ratio`` takes the median of: every measured batch of
        256 or more (256 alone in quick mode; 256, 512 and 1,024 in full), or the largest batch when none is."""
        batches = self.decode["batches"]
        return [b for b in batches if b >= 256] or [max(batches)]

    def ratios(self) -> dict:
        """Measured step time / the roofline's at each batch (1.0 is on the roofline; 1.25 is 25% slower)."""
        predicted = self.predicted()["t"]
        return {b: s / p for b, s, p in zip(self.decode["batches"], self.decode["seconds"], predicted)}

    def summary(self) -> dict:
        """The issue's goals as numbers: batch-1 and large-batch ratios, knee against B*."""
        ratios = self.ratios()
        large = [ratios[b] for b in self.large_batches()]
        gemv = self.gemv.median if self.gemv is not None else None
        weight_bytes = self.decode["n_params"] * self.decode["bytes_param"]
        return {"large_batches": self.large_batches(), "gemv_bandwidth": gemv,
                "batch1_gemv_ratio": (self.decode["seconds"][0] / (weight_bytes / gemv)
                                      if gemv and min(self.decode["batches"]) == 1 else None),
                "ends_knee": ends_knee(self.decode["batches"], self.decode["seconds"]),
                "peak_fp32": self.flops, "peak_fp64": self.peak["float64"].median if "float64" in self.peak else None, "read_bandwidth": self.mem_bw,
                "batch1_ratio": ratios[min(ratios)], "large_batch_ratio": float(np.median(large)),
                "knee": self.knee(), "balance_batch": self.balance_batch(), "seconds": self.seconds,
                "busy": any("busy" in note for note in self.notes)}

    def cost_per_million(self, price_per_hour: float, batch: float | None = None) -> float:
        """Dollars per million generated tokens on this machine rented at ``price_per_hour``, at ``batch``
        (default: the measured batch with the lowest time per token), from the measured step time and
        Chapter 1's :func:`lecture_lib.roofline.cost_per_token` (E1.4)."""
        price_per_hour = validate.scalar("price_per_hour", price_per_hour, maximum=1e6)
        d = self.decode
        if batch is None:
            index = int(np.argmin(np.asarray(d["seconds"]) / np.asarray(d["batches"])))
        else:
            if batch not in d["batches"]:
                raise ValueError(f"batch must be one of the measured batches {d['batches']}, got {batch!r}")
            index = d["batches"].index(batch)
        return 1e6 * roofline.cost_per_token(step_time=d["seconds"][index], batch=d["batches"][index], n_chips=1,
                                             price_chip_hour=price_per_hour)

    # ---------------------------------------------------------------- saving and loading
    def as_dict(self) -> dict:
        return {"format": FORMAT, "name": self.name, "mode": self.mode, "machine": self.machine,
                "peak": {k: v.as_dict() for k, v in self.peak.items()}, "bandwidth": self.bandwidth.as_dict(),
                "decode": self.decode, "notes": list(self.notes), "seconds": self.seconds,
                **({"gemv": self.gemv.as_dict()} if self.gemv is not None else {}), "chip": self.chip_json()}

    def save(self, path=None) -> str:
        """Write the profile as JSON (what an instructor collects) to ``path``, by default :func:`profile_path`
        (``~/.lecture_lib/my_machine.json``, beside the course's progress file, unless ``$LECTURE_PROFILE`` says
        otherwise or a test is running); returns the path written."""
        path = profile_path() if path is None else os.path.expanduser(os.fspath(path))
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(self.as_dict(), handle, indent=1)
        return path


def _stat(data, where: str) -> Stat:
    try:
        return Stat(float(data["median"]), float(data["low"]), float(data["high"]), str(data["unit"]),
                    tuple(float(x) for x in data.get("samples", ())))
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"source: {where} is not a measured figure ({error})") from None


# --- example profile (generated) ---
_EXAMPLE = json.loads(
    "{\"format\": \"lecture-lab-profile/1\", \"name\": \"course machine (2-core AMD EPYC VM)\", \"mode\": \"full\", \"machine\": "
    "{\"cpu\": \"AMD EPYC\", \"cores\": 2, \"machine\": \"x86_64\", \"system\": \"Linux\", \"blas\": {\"library\": \"scipy-openblas\", "
    "\"version\": \"0.3.31.188.0\", \"kernel\": \"SkylakeX\", \"threads\": 1, \"source\": \"OpenBLAS's own functions\"}, \"caches\": "
    "[{\"level\": 1, \"type\": \"Data\", \"bytes\": 32768, \"shared_by\": \"0\"}, {\"level\": 1, \"type\": \"Instruction\", \"bytes\": "
    "32768, \"shared_by\": \"0\"}, {\"level\": 2, \"type\": \"Unified\", \"bytes\": 1048576, \"shared_by\": \"0\"}, {\"level\": 3, "
    "\"type\": \"Unified\", \"bytes\": 33554432, \"shared_by\": \"0-1\"}], \"ram_bytes\": 25280000000.0, \"python\": \"3.11.7\", "
    "\"numpy\": \"2.4.6\", \"load_average\": 14.69}, \"peak\": {\"float32\": {\"median\": 61790000000.0, \"low\": 37080000000.0, "
    "\"high\": 82960000000.0, \"unit\": \"FLOP/s\", \"samples\": [37080000000.0, 41670000000.0, 43270000000.0, 56970000000.0, "
    "66610000000.0, 69160000000.0, 75200000000.0, 82960000000.0]}, \"float64\": {\"median\": 30110000000.0, \"low\": "
    "17810000000.0, \"high\": 39690000000.0, \"unit\": \"FLOP/s\", \"samples\": [17810000000.0, 18430000000.0, 24200000000.0, "
    "29500000000.0, 30720000000.0, 31460000000.0, 35080000000.0, 39690000000.0]}}, \"bandwidth\": {\"median\": "
    "16280000000.0, \"low\": 5762000000.0, \"high\": 30470000000.0, \"unit\": \"B/s\", \"samples\": [5762000000.0, 9235000000.0, "
    "12620000000.0, 15490000000.0, 15660000000.0, 16200000000.0, 16360000000.0, 16860000000.0, 17310000000.0, "
    "17390000000.0, 21420000000.0, 30470000000.0]}, \"decode\": {\"batches\": [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, "
    "96, 128, 192, 256, 512, 1024], \"seconds\": [0.06101, 0.1364, 0.1664, 0.2006, 0.1979, 0.1685, 0.2269, 0.2424, "
    "0.2504, 0.292, 0.3837, 0.4311, 0.6123, 0.525, 0.9149, 0.976, 1.829, 3.705], \"fastest\": [0.04786, 0.1162, 0.08884, "
    "0.1865, 0.1867, 0.07731, 0.1499, 0.1855, 0.2114, 0.2283, 0.1827, 0.3871, 0.3944, 0.4674, 0.7102, 0.8816, 1.796, "
    "2.589], \"slowest\": [0.06898, 0.1701, 0.2163, 0.2231, 0.2607, 0.2152, 0.2558, 0.5247, 0.3468, 0.3191, 0.7406, "
    "0.6736, 0.7684, 0.8378, 1.061, 1.218, 2.326, 3.856], \"n_params\": 128450560, \"bytes_param\": 4, \"len_ctx\": 0, "
    "\"kv_bytes_per_token\": 0.0, \"with_kv\": {\"batches\": [1, 2, 3, 4, 6, 8, 12, 16], \"seconds\": [0.028, 0.07014, 0.1673, "
    "0.1032, 0.1361, 0.1352, 0.1311, 0.1869], \"fastest\": [0.02545, 0.06914, 0.08084, 0.07724, 0.1308, 0.1041, 0.1225, "
    "0.1419], \"slowest\": [0.04854, 0.08095, 0.1734, 0.1694, 0.2246, 0.1493, 0.1881, 0.2512], \"n_params\": 128450560, "
    "\"bytes_param\": 4, \"len_ctx\": 512, \"kv_bytes_per_token\": 81920}}, \"notes\": [\"busy: the load average was 14.7 on 2 "
    "cores before measuring, so other programs compete for the CPU and its memory; expect lower and noisier figures "
    "(close them and rerun).\", \"threads: measured with 1 of 2 cores, the ones the load average left free (threads=None "
    "uses every core the BLAS would).\", \"noisy: the float32 peak varied by 74% between repeats; another program may "
    "have been running (the median is used).\", \"noisy: the read bandwidth varied by 152% between repeats; another "
    "program may have been running (the median is used).\"], \"seconds\": 90.32, \"chip\": {\"name\": \"course machine (2-core "
    "AMD EPYC VM)\", \"hbm_gb\": 25.28, \"hbm_tb_s\": 0.01628, \"tflops\": {\"fp32\": 0.06179}, \"scale_up\": 1}} ")
# --- end of example profile ---


_TEST_FOLDER: list = []


def profile_path() -> str:
    """Where :meth:`Profile.save` writes and :func:`load_profile` reads when given no path: ``$LECTURE_PROFILE`` when
    set; under pytest (``PYTEST_CURRENT_TEST`` set, as in every kernel a test starts) a file in a temporary folder of
    this process, so that tests and their Run All never write the learner's own profile; else :data:`DEFAULT_PROFILE`
    (``~/.lecture_lib/my_machine.json``, beside the course's progress file)."""
    chosen = os.environ.get(PROFILE_ENV, "").strip()
    if chosen:
        return os.path.expanduser(chosen)
    if os.environ.get("PYTEST_CURRENT_TEST"):
        if not _TEST_FOLDER:
            import tempfile

            _TEST_FOLDER.append(tempfile.mkdtemp(prefix="lecture-lab-profile-"))
        return os.path.join(_TEST_FOLDER[0], "my_machine.json")
    return os.path.expanduser(DEFAULT_PROFILE)


def load_profile(source=None) -> Profile:
    """A profile saved by :meth:`Profile.save` (a path; by default :func:`profile_path`) or its parsed dict; a
    ``ValueError`` says what is wrong."""
    if source is None:
        source = profile_path()
    if isinstance(source, (str, os.PathLike)):
        try:
            with open(os.path.expanduser(os.fspath(source)), encoding="utf-8") as handle:
                source = json.load(handle)
        except (OSError, ValueError) as error:
            raise ValueError(f"source must be a readable profile JSON file, got {os.fspath(source)!r}: {error}") \
                from None
    if not isinstance(source, Mapping) or source.get("format") != FORMAT:
        raise ValueError(f"source must be a lab profile (format {FORMAT!r}), got {str(source)[:80]!r}")
    try:
        decode = dict(source["decode"])
        batches, seconds = list(decode["batches"]), list(decode["seconds"])
        validate.number("batches", batches)
        validate.number("seconds", seconds)
        validate.scalar("n_params", decode["n_params"])
        validate.scalar("bytes_param", decode["bytes_param"])
        if len(batches) != len(seconds) or len(batches) < 3:
            raise ValueError(f"its decode batches and seconds must be two lists of one length, at least 3, got "
                             f"{len(batches)} and {len(seconds)}")
        peak = {k: _stat(v, f"peak {k}") for k, v in source["peak"].items()}
        if "float32" not in peak:
            raise ValueError("its peak has no float32 figure")
        profile = Profile(name=str(source["name"]), mode=str(source["mode"]), machine=dict(source["machine"]),
                          peak=peak, bandwidth=_stat(source["bandwidth"], "bandwidth"), decode=decode,
                          notes=list(source.get("notes", [])), seconds=float(source.get("seconds", 0)),
                          gemv=_stat(source["gemv"], "gemv") if source.get("gemv") else None)
        profile.chip()                      # the chip's own checks: positive, finite
    except (KeyError, TypeError) as error:
        raise ValueError(f"source: a lab profile lacks {error}") from None
    except ValueError as error:
        raise ValueError(f"source: not a usable lab profile: {error}") from None
    return profile


def _shrinking(name: str, size: float, minimum: float, notes: list, run: Callable[[float], object]):
    """``run(size)``, and again at half the size while the allocation fails (said in ``notes``), down to
    ``minimum`` bytes; below it the ``MemoryError`` says what to do."""
    while True:
        try:
            return run(size), size
        except MemoryError:
            if size / 2 < minimum:
                raise MemoryError(f"{name}: could not allocate {size / MB:,.0f} MB, and smaller arrays would fit in the "
                                  f"CPU's cache. Close other programs, or run on a machine with more memory.") from None
            notes.append(f"{name}: could not allocate {size / MB:,.0f} MB; used {size / 2 / MB:,.0f} MB instead.")
            _STACKS.clear()
            size /= 2


def _pooled(first: Stat, second: Stat) -> Stat:
    rates = sorted(first.samples + second.samples)
    return Stat(float(np.median(rates)), rates[0], rates[-1], first.unit, tuple(rates))


def free_cores(machine: dict | None = None) -> int:
    """The cores other programs leave free: all the process may use, minus the load average (rounded), at
    least 1. On an idle machine that is every core; on the course's busy 2-core test machine it is 1."""
    machine = machine_report() if machine is None else machine
    if not isinstance(machine, Mapping):
        raise ValueError(f"machine must be machine_report()'s dict or None, got {machine!r}")
    load = machine.get("load_average")
    if load is not None and (isinstance(load, bool) or not isinstance(load, (int, float)) or not load >= 0):
        raise ValueError(f"machine's load_average must be a number >= 0 or None, got {load!r}")
    cores = validate.integer("machine's cores", machine.get("cores") or 1, maximum=1 << 16)
    return cores if load is None else max(1, min(cores, cores - round(load)))


def example_profile() -> Profile:
    """A profile this lab measured on the course's reference machine: a 2-core AMD EPYC virtual machine (KVM), NumPy
    with OpenBLAS 0.3.31, full mode, 2026-12-06, while other jobs shared the machine (its notes and load average say
    how busy; issue 50 reports the same machine idle at 168 GFLOP/s). The class view's second machine, the practice
    problems' numbers, and what to look at where nothing can be measured (JupyterLite)."""
    return load_profile(_EXAMPLE)


def profile(mode: str = "quick", *, name: str = "my machine", threads="auto",
            progress: Callable[[float, str], None] | None = None) -> Profile:
    """Measure this machine in ``mode`` (:data:`MODES`): float32 and float64 peaks, read bandwidth, decode steps.

    ``progress(fraction, what)`` is called as the work advances (the lab passes a progress bar). Arrays are
    sized at least 8x the last-level cache, and shrunk (with a note in :attr:`Profile.notes`) when the machine
    has not the memory to spare; a machine already busy (load average above half its cores) gets a note too.
    ``threads``: "auto" uses the cores the load leaves free (:func:`free_cores`), None every core NumPy's BLAS
    would use, a number that many (BLAS threads and read threads alike)."""
    validate.choice("mode", mode, list(MODES))
    if threads is not None and threads != "auto":
        threads = validate.integer("threads", threads, maximum=256)
    if not isinstance(name, str) or not name.strip() or len(name) > 60:
        raise ValueError(f"name must be a short non-empty str naming the machine, got {name!r}")
    if progress is not None and not callable(progress):
        raise ValueError(f"progress must be a function of (fraction, text) or None, got {progress!r}")
    report = progress or (lambda fraction, what: None)
    plan = MODES[mode]
    started = time.perf_counter()
    machine = machine_report()
    notes = []
    load, cores = machine["load_average"], machine["cores"]
    if load is not None and load > 0.5 * cores:
        notes.append(f"busy: the load average was {units.number(load)} on {cores} cores before measuring, so other programs "
                     f"compete for the CPU and its memory; expect lower and noisier figures (close them and rerun).")
    if sys.platform == "emscripten":
        notes.append("browser: measured in the browser's WebAssembly Python (Pyodide, JupyterLite), one thread and no "
                     "native matrix kernels: these are Pyodide's figures, not your CPU's. Run the lab in JupyterLab "
                     "on your machine to measure it.")
    if threads == "auto":
        threads = free_cores(machine)
        if threads < machine["cores"]:
            notes.append(f"threads: measured with {threads} of {machine['cores']} cores, the ones the load average "
                         f"left free (lab.measure_with_bar(mode, threads=None) or measure.profile(mode, threads=None) uses every core the BLAS would).")
    cache = _last_level_cache(machine)
    minimum = 4 * cache if mode != "smoke" else 4 * MB
    wanted = max(plan.read_mb * MB, 8 * cache) if mode != "smoke" else plan.read_mb * MB
    read_bytes = _fit_in_memory("read bandwidth", wanted, minimum, notes)
    wanted = max(plan.weight_mb * MB, 8 * cache) if mode != "smoke" else plan.weight_mb * MB
    weight_bytes = _fit_in_memory("decode weights", wanted, minimum, notes)
    with _blas_threads(threads):
        machine["blas"] = blas_info()              # the thread count actually used
        # Half of each figure's repeats before the decode steps and half after, pooled: a machine whose load
        # changes during the run then shows it in the spread instead of skewing one side of the comparison.
        half = max(1, (plan.repeats + 3) // 2)
        report(0.0, "peak FLOP/s, float32")
        first = {dtype: peak_flops(dtype, size=plan.matmul_n, repeats=half) for dtype in DTYPES}
        report(0.12, "read bandwidth")
        first_bw, read_bytes = _shrinking("read bandwidth", read_bytes, minimum, notes,
                                          lambda size: read_bandwidth(mb=size / MB, repeats=half + 2))
        first_gemv = gemv_bandwidth(mb=read_bytes / MB, repeats=half + 2)
        report(0.18, "decode steps")
        decode, weight_bytes = _shrinking(
            "decode weights", weight_bytes, minimum, notes,
            lambda size: decode_times(batches=plan.batches, weight_mb=size / MB, repeats=plan.repeats,
                                      progress=lambda fraction, what: report(0.18 + 0.6 * fraction, what)))
        if plan.len_ctx:
            report(0.78, "decode steps reading a KV cache")
            small = [b for b in plan.batches if b <= 16]
            try:
                decode["with_kv"] = decode_times(batches=small, weight_mb=weight_bytes / MB, repeats=plan.repeats,
                                                 len_ctx=plan.len_ctx)
            except MemoryError as error:
                notes.append(f"skipped the KV-cache run: {error}")
        report(0.85, "peak FLOP/s and read bandwidth again")
        peak = {dtype: _pooled(first[dtype], peak_flops(dtype, size=plan.matmul_n, repeats=half)) for dtype in DTYPES}
        bandwidth = _pooled(first_bw, read_bandwidth(mb=read_bytes / MB, repeats=half + 2))
        gemv = _pooled(first_gemv, gemv_bandwidth(mb=read_bytes / MB, repeats=half + 2))
    for label, stat in (("float32 peak", peak["float32"]), ("read bandwidth", bandwidth)):
        if stat.spread > 0.3:
            notes.append(f"noisy: the {label} varied by {stat.spread:.0%} between repeats; another program may "
                         f"have been running (the median is used).")
    report(1.0, "done")
    machine["measured_year"] = time.localtime().tm_year
    return Profile(name=name.strip(), mode=mode, machine=machine, peak=peak, bandwidth=bandwidth, decode=decode,
                   notes=notes, seconds=time.perf_counter() - started, gemv=gemv)


# ============================================================================ a GPU, through PyTorch

TORCH_FORMATS = {"bf16": "bfloat16", "fp32": "float32", "fp16": "float16"}
TORCH_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4, "fp8": 1}
#: The GPU's decode stack: Llama-2-7B's width (d_model 4096, arxiv.org/abs/2307.09288 Table 1 gives 4096) with the lab's
#: 2.75x MLP (11,264), so that one layer is 205 M weights and a step is a few large matrix products, not hundreds of
#: small ones whose launch overhead (a few microseconds each) would hide the memory time being measured.
GPU_D_MODEL, GPU_D_FF = 4096, 11264
GPU_BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
#: 2 GB of bf16 weights: 40x an H100's 50 MB L2 cache (NVIDIA's H100 whitepaper, 2022), so every step reads from HBM.
GPU_WEIGHT_MB = 2048
FP8_ROWS = 16              # torch._scaled_mm's fp8 kernels want every dimension a multiple of 16


def torch_plan(*, fmt: str = "bf16", weight_mb: float = GPU_WEIGHT_MB, batches=GPU_BATCHES) -> str:
    """One sentence: what :func:`torch_profile` measures on a GPU (what the lab prints where it cannot run it)."""
    validate.choice("fmt", fmt, list(TORCH_BYTES))
    weight_mb = validate.scalar("weight_mb", weight_mb, maximum=64000)
    given = np.atleast_1d(validate.number("batches", batches, maximum=MAX_BATCH))
    if given.ndim != 1 or given.size == 0:
        raise ValueError(f"batches must be a non-empty list of batch sizes, got {batches!r}")
    batches = [int(b) for b in given]
    layer = (4 * GPU_D_MODEL**2 + 3 * GPU_D_MODEL * GPU_D_FF) * TORCH_BYTES[fmt]
    layers = max(1, round(weight_mb * MB / layer))
    return (f"the matmul peak in {fmt} (and fp8 on a GPU that has fp8 matrix units), the read bandwidth of the GPU's "
            f"memory, and one decode step of {layers} transformer-shaped layers (d_model {GPU_D_MODEL:,}, "
            f"{units.bytes_(weight_mb * MB)} of random {fmt} weights) at batch {min(batches):,} to {max(batches):,}, "
            f"each timed between device synchronisations and held against Chapter 1's roofline drawn from the first "
            f"two figures (roofline.decode_step)")


def torch_status() -> str:
    """Whether PyTorch is installed here and which accelerator it sees (CUDA, Apple's MPS, none), and what the lab
    measures on a GPU (:func:`torch_plan`)."""
    try:
        import torch
    except ImportError:
        return ("PyTorch is not installed, so no GPU is measured. With PyTorch and a CUDA or Apple-silicon GPU, "
                f"torch_profile() would time {torch_plan()}.")
    if torch.cuda.is_available():
        return (f"PyTorch {torch.__version__} sees CUDA GPU {torch.cuda.get_device_name(0)}; torch_profile() times "
                f"{torch_plan()}.")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return f"PyTorch {torch.__version__} sees Apple's MPS GPU; torch_profile() times {torch_plan()}."
    return (f"PyTorch {torch.__version__} is installed but sees no GPU, so no GPU is measured. With a CUDA or "
            f"Apple-silicon GPU, torch_profile() would time {torch_plan()}; torch_profile(device='cpu') runs the same "
            f"code on the CPU.")


def torch_device() -> str | None:
    """The GPU PyTorch would measure here: "cuda", "mps", or None (no PyTorch, or no GPU it can use)."""
    try:
        import torch
    except ImportError:
        return None
    if torch.cuda.is_available():
        return "cuda"
    mps = getattr(torch.backends, "mps", None)
    return "mps" if mps is not None and mps.is_available() else None


def _torch_device(torch, device):
    if device is None:
        device = ("cuda" if torch.cuda.is_available() else
                  "mps" if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()
                  else None)
        if device is None:
            raise RuntimeError(torch_status())
    return validate.choice("device", device, ["cuda", "mps", "cpu"])


def _torch_sync(torch, device: str) -> Callable[[], None]:
    """A function that waits until ``device`` has finished all queued work: GPU kernels run asynchronously, so a
    clock read without it times the launch, not the work."""
    if device == "cuda":
        return torch.cuda.synchronize
    if device == "mps":
        return torch.mps.synchronize
    return lambda: None


def _torch_free_bytes(torch, device: str) -> float | None:
    if device == "cuda":
        with contextlib.suppress(Exception):
            return float(torch.cuda.mem_get_info()[0])
        return None
    if device == "mps":
        with contextlib.suppress(Exception):
            return float(torch.mps.recommended_max_memory() - torch.mps.driver_allocated_memory())
        return None
    return _memory()[1]


def _torch_fp8_ok(torch, device: str) -> bool:
    """Whether ``torch._scaled_mm`` multiplies fp8 (e4m3) matrices on ``device`` (NVIDIA Hopper and Ada and later;
    some PyTorch builds on the CPU): tried on a 16 x 16 product."""
    if not (hasattr(torch, "float8_e4m3fn") and hasattr(torch, "_scaled_mm")):
        return False
    try:
        a = torch.ones((FP8_ROWS, FP8_ROWS), device=device).to(torch.float8_e4m3fn)
        one = torch.ones((), device=device)
        torch._scaled_mm(a, a.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        return True
    except Exception:                                # noqa: BLE001 - any failure means "no fp8 here"
        return False


def torch_decode_times(device: str | None = None, *, fmt: str = "bf16", batches=GPU_BATCHES,
                       weight_mb: float = GPU_WEIGHT_MB, repeats: int = 5, d_model: int = GPU_D_MODEL,
                       d_ff: int = GPU_D_FF, notes: list | None = None) -> dict:
    """Time one decode step on a PyTorch device: :func:`decode_times`'s layer stack (q, k, v, o and a gated MLP's
    gate, up and down) with ``weight_mb`` MB of random weights in ``fmt`` ("bf16", "fp16", "fp32", or "fp8": e4m3
    weights and activations through ``torch._scaled_mm`` with bf16 outputs, where the device has it).

    Every step is followed by a device synchronisation inside the timed region, and one warm-up step runs first.
    fp8 products pad the batch to a multiple of 16 rows (what the fp8 kernels accept); the padded rows' FLOPs are
    not counted. Returns :func:`decode_times`'s dict (``bytes_param`` 2 for bf16, 1 for fp8) plus ``device`` and
    ``fmt``. Too little free device memory for ``weight_mb``: fewer MB (said in ``notes``), or a ``MemoryError``."""
    try:
        import torch
    except ImportError:
        raise RuntimeError(torch_status()) from None
    validate.choice("fmt", fmt, list(TORCH_BYTES))
    given = np.atleast_1d(validate.number("batches", batches, maximum=MAX_BATCH))
    if given.ndim != 1 or np.any(given != np.round(given)):
        raise ValueError(f"batches must be whole numbers from 1 to {MAX_BATCH}, got {batches!r}")
    batches = sorted({int(b) for b in given})
    weight_mb = validate.scalar("weight_mb", weight_mb, maximum=64000)
    repeats = validate.integer("repeats", repeats, maximum=50)
    d_model = validate.integer("d_model", d_model, minimum=16, maximum=65536)
    d_ff = validate.integer("d_ff", d_ff, minimum=16, maximum=262144)
    if fmt == "fp8" and (d_model % FP8_ROWS or d_ff % FP8_ROWS):
        raise ValueError(f"d_model and d_ff must be multiples of {FP8_ROWS} for fp8, got {d_model} and {d_ff}")
    device = _torch_device(torch, device)
    notes = [] if notes is None else notes
    if fmt == "fp8" and not _torch_fp8_ok(torch, device):
        raise RuntimeError(f"fmt: this {device} device (PyTorch {torch.__version__}) has no fp8 matrix product "
                           f"(torch._scaled_mm); fp8 needs an NVIDIA Hopper, Ada or later GPU")
    bytes_param = TORCH_BYTES[fmt]
    per_layer = (4 * d_model * d_model + 3 * d_model * d_ff) * bytes_param
    wanted = weight_mb * MB
    free = _torch_free_bytes(torch, device)
    if free is not None and wanted > MEMORY_SHARE * free:
        if MEMORY_SHARE * free < per_layer:
            raise MemoryError(f"weight_mb: only {free / MB:,.0f} MB of {device} memory is free, less than one "
                              f"{per_layer / MB:,.0f} MB layer; free some memory or choose a smaller d_model")
        notes.append(f"{device} decode weights: asked for {wanted / MB:,.0f} MB, but only {free / MB:,.0f} MB is "
                     f"free; used {MEMORY_SHARE * free / MB:,.0f} MB instead.")
        wanted = MEMORY_SHARE * free
    n_layers = max(1, round(wanted / per_layer))
    store = torch.float8_e4m3fn if fmt == "fp8" else getattr(torch, TORCH_FORMATS[fmt])
    generator = torch.Generator(device="cpu").manual_seed(0)

    def weight(rows, cols):          # variance 1/rows keeps activations near 1 through the layers
        w = (torch.rand((rows, cols), generator=generator) - 0.5) * math.sqrt(12 / rows)
        if fmt == "fp8":             # _scaled_mm wants its second operand column-major: store W^T, pass its .t()
            return w.t().contiguous().to(device=device).to(store).t()
        return w.to(device=device, dtype=store)

    try:
        layers = [(weight(d_model, 3 * d_model), weight(d_model, d_model), weight(d_model, 2 * d_ff),
                   weight(d_ff, d_model)) for _ in range(n_layers)]
    except (MemoryError, getattr(torch, "OutOfMemoryError", MemoryError),
            getattr(torch.cuda, "OutOfMemoryError", MemoryError)):
        raise MemoryError(f"weight_mb: could not allocate {n_layers * per_layer / MB:,.0f} MB of weights on {device}; "
                          f"ask for fewer MB (weight_mb=...)") from None
    n_params = sum(w.numel() for layer in layers for w in layer)
    one = torch.ones((), device=device)

    def product(x, w):
        if fmt != "fp8":
            return x @ w
        return torch._scaled_mm(x.to(torch.float8_e4m3fn), w, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)

    def step(x):
        for w_qkv, w_o, w_gu, w_down in layers:
            qkv = product(x, w_qkv)
            x = product(qkv[:, :d_model].contiguous(), w_o)
            gu = product(x, w_gu)
            x = product(gu[:, :d_ff].contiguous(), w_down)
        return x

    sync = _torch_sync(torch, device)
    act = torch.bfloat16 if fmt == "fp8" else store
    medians, fastest, slowest = [], [], []
    with torch.inference_mode():
        for index, batch in enumerate(batches):
            rows = -(-batch // FP8_ROWS) * FP8_ROWS if fmt == "fp8" else batch
            x = torch.randn((rows, d_model), generator=generator).to(device=device, dtype=act)
            sync()

            def run(x=x):
                step(x)
                sync()

            seconds = sorted(_time(run, repeats, warm_up=True))
            medians.append(float(np.median(seconds)))
            fastest.append(seconds[0])
            slowest.append(seconds[-1])
    layers.clear()                                   # free the device's memory for the next format
    return {"batches": batches, "seconds": medians, "fastest": fastest, "slowest": slowest, "n_params": n_params,
            "bytes_param": bytes_param, "len_ctx": 0, "kv_bytes_per_token": 0.0, "device": device, "fmt": fmt,
            "n_layers": n_layers, "d_model": d_model}


def torch_profile(device: str | None = None, *, fmt: str = "bf16", size: int = 4096, read_mb: float = 1024,
                  repeats: int = 5, batches=GPU_BATCHES, weight_mb: float = GPU_WEIGHT_MB, d_model: int = GPU_D_MODEL,
                  d_ff: int = GPU_D_FF, fp8: bool = True) -> dict:
    """The lab on a PyTorch device: matmul FLOP/s in ``fmt`` (bf16, fp16 or fp32; plus fp8 through
    ``torch._scaled_mm`` where the device has it and ``fp8``), read bandwidth (``amax`` over ``read_mb`` MB), and
    :func:`torch_decode_times` at ``batches`` in each of those formats (none when ``batches`` is empty).
    ``device`` defaults to CUDA, then MPS; ``"cpu"`` runs the same code on the CPU (how the course tests it).

    Returns ``{"device", "flops": {fmt: Stat}, "bandwidth": Stat, "decode": {fmt: dict}, "notes": [...]}``; hold a
    decode run against its roofline with :func:`torch_predicted`. ``RuntimeError`` without PyTorch or a device."""
    try:
        import torch
    except ImportError:
        raise RuntimeError(torch_status()) from None
    validate.choice("fmt", fmt, list(TORCH_FORMATS))
    size = validate.integer("size", size, minimum=16, maximum=16384)
    read_mb = validate.scalar("read_mb", read_mb, maximum=64000)
    repeats = validate.integer("repeats", repeats, maximum=50)
    device = _torch_device(torch, device)
    sync = _torch_sync(torch, device)
    notes: list = []

    def timed(function):
        def run():
            function()
            sync()
        sync()
        return _time(run, repeats)

    dtype = getattr(torch, TORCH_FORMATS[fmt])
    a = torch.rand((size, size), device=device, dtype=dtype)
    b = torch.rand((size, size), device=device, dtype=dtype)
    result = {"device": device, "flops": {fmt: _rate_stat(2.0 * size**3, timed(lambda: a @ b), "FLOP/s")},
              "decode": {}, "notes": notes}
    formats = [fmt]
    if fp8 and device != "mps" and _torch_fp8_ok(torch, device):
        n8 = size // FP8_ROWS * FP8_ROWS                 # fp8 products want multiples of 16
        a8 = a[:n8, :n8].to(torch.float8_e4m3fn)
        b8 = b[:n8, :n8].t().contiguous().t().to(torch.float8_e4m3fn)
        one = torch.ones((), device=device)
        result["flops"]["fp8"] = _rate_stat(2.0 * n8**3, timed(
            lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)), "FLOP/s")
        formats.append("fp8")
        a8 = b8 = None
    elif fp8:
        notes.append(f"fp8: this {device} device has no fp8 matrix product here (NVIDIA Hopper, Ada and later do).")
    a = b = None                                     # free the device's memory for the reads and the decode steps
    free = _torch_free_bytes(torch, device)
    if free is not None and read_mb * MB > MEMORY_SHARE * free:
        notes.append(f"read bandwidth: asked for {read_mb:,.0f} MB, but only {free / MB:,.0f} MB is free; used "
                     f"{MEMORY_SHARE * free / MB:,.0f} MB instead.")
        read_mb = MEMORY_SHARE * free / MB
    data = torch.ones(max(1, int(read_mb * MB) // 2), device=device, dtype=torch.bfloat16)
    result["bandwidth"] = _rate_stat(data.numel() * 2, timed(lambda: data.amax()), "B/s")
    data = None
    if len(np.atleast_1d(batches)):
        for each in formats:
            result["decode"][each] = torch_decode_times(device, fmt=each, batches=batches, weight_mb=weight_mb,
                                                        repeats=repeats, d_model=d_model, d_ff=d_ff, notes=notes)
    return result


def torch_predicted(result: Mapping, fmt: str = "bf16") -> dict:
    """Chapter 1's roofline for :func:`torch_profile`'s decode run in ``fmt``: :func:`predicted_times` (so
    :func:`lecture_lib.roofline.decode_step`) with the device's measured ``fmt`` peak and read bandwidth, and the
    weights' bytes per parameter (2 for bf16, 1 for fp8)."""
    if not isinstance(result, Mapping) or "decode" not in result or "flops" not in result:
        raise ValueError(f"result must be torch_profile()'s dict, got {str(result)[:80]!r}")
    if fmt not in result["decode"]:
        raise ValueError(f"fmt must be one of the formats whose decode steps were timed, {list(result['decode'])}, "
                         f"got {fmt!r}")
    d = result["decode"][fmt]
    return predicted_times(batches=d["batches"], n_params=d["n_params"], flops=result["flops"][fmt].median,
                           mem_bw=result["bandwidth"].median, bytes_param=d["bytes_param"])
