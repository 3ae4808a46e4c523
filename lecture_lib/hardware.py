"""Accelerator presets: per-chip peaks, and the scale-up systems they are sold in.

``get("H100")`` returns a :class:`Chip`; ``get_system("GB200 NVL72")`` a :class:`System`.
The lecture's numbers come from here: the hardware ratio ≈ 300 (lecture 00:18:48) and the
≈ 20 ms HBM drain time (lecture 00:23:43, E1.7).

Conventions
-----------
- **Dense** peak FLOP/s per chip, **2 FLOPs per multiply-add** (the vendors' and the scaling
  book's convention). Vendors often print 2:4 structured-sparsity figures; those are halved here
  and never stored. ``Chip.macs(fmt)`` gives multiplies/s, the unit the lecture writes on the board.
- A chip lists only the number formats its matrix units run natively: no FP8 on A100 or
  TPU v4/v5/v6e, no FP4 before Blackwell. ``fp32`` is the non-tensor (CUDA-core) FP32 rate.
- Bytes are SI: 1 GB = 1e9 B, 1 TB/s = 1e12 B/s. HBM capacity is the vendor's "GB" label taken
  as 1e9 B (an H100 "80 GB" is stored as 80e9), even where the stacks are physically GiB.
- ``scale_up_bandwidth`` is per chip, **one direction**, all links summed: NVLink 450 GB/s on
  H100 (NVIDIA's "900 GB/s" counts both directions); TPU ICI is Google's bidirectional per-chip
  figure halved. The scaling book's collective formulas use the bidirectional W_ici instead.
- ``scale_out_bandwidth`` is per chip to the data-centre network (NIC or DCN share), one direction.
- ``price_per_hour`` is a public on-demand list price in USD per chip-hour, ``None`` if none.
- Every number has a source and an access date in ``Chip.sources``; "2026-11" is when it was read.
  Lecture-versus-vendor differences live in ``Chip.notes`` (Rubin: 20 vs 22 TB/s).

Sources used throughout: the scaling book (Austin et al., "How to Scale Your Model",
https://jax-ml.github.io/scaling-book, tpus.md and gpus.md, 2026 revision) as summarised in the
course's reference notes, NVIDIA datasheets, AMD's MI300X data sheet and Google Cloud TPU documentation.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from types import MappingProxyType

from .catalogue import Catalogue

__all__ = [
    "BYTES_PER_VALUE",
    "CHIPS",
    "SOURCED_FIELDS",
    "SYSTEMS",
    "Chip",
    "System",
    "chip_from_json",
    "chip_names",
    "custom_chip",
    "forget_chip",
    "get",
    "get_system",
    "register_chip",
    "system_names",
]

BYTES_PER_VALUE: Mapping[str, float] = MappingProxyType(
    {"fp32": 4.0, "bf16": 2.0, "fp8": 1.0, "int8": 1.0, "fp4": 0.5}
)
"""Bytes per stored value of each number format. FP4 is 0.5 B without block scales; NVFP4 adds
one FP8 scale per 16 values (+1/16 B) and MXFP4 one byte per 32 (+1/32 B): pass
``bytes_per_value=0.5 + 1/16`` to :meth:`Chip.ops_per_byte` to include them."""

# Fields of a Chip that must each carry a source ("document or URL, access date").
SOURCED_FIELDS = ("flops", "hbm_bandwidth", "hbm_capacity", "scale_up_bandwidth",
                  "scale_up_domain", "scale_out_bandwidth", "price_per_hour", "release_year")


def _finite(value) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:   # an int such as 10**400
        return False


def _positive(owner: str, field: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not _finite(value) or value <= 0:
        raise ValueError(f"{owner}: {field} must be a finite number > 0, got {value!r}")


def _whole(owner: str, field: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10**12:
        shown = repr(value) if not isinstance(value, int) or value < 10**60 else "a number too large to show"
        raise ValueError(f"{owner}: {field} must be a whole number from 1 to 10**12, got {shown}")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Chip:
    """One accelerator package (a GPU or a TPU chip) and its per-chip peaks, in SI units."""

    name: str
    generation: str
    release_year: int
    flops: Mapping[str, float] = dataclasses.field(hash=False)
    hbm_bandwidth: float
    hbm_capacity: float
    scale_up_bandwidth: float
    scale_up_domain: int
    scale_out_bandwidth: float
    price_per_hour: float | None
    sources: Mapping[str, str] = dataclasses.field(hash=False, repr=False)
    notes: str = dataclasses.field(default="", repr=False)

    def __post_init__(self):
        flops = dict(self.flops)
        if not flops or not set(flops) <= set(BYTES_PER_VALUE):
            raise ValueError(f"{self.name}: flops keys must be a non-empty subset of "
                             f"{list(BYTES_PER_VALUE)}, got {sorted(flops)}")
        for fmt, value in flops.items():
            _positive(self.name, f"flops[{fmt!r}]", value)
        for field in ("hbm_bandwidth", "hbm_capacity", "scale_up_bandwidth", "scale_out_bandwidth"):
            _positive(self.name, field, getattr(self, field))
        _whole(self.name, "scale_up_domain", self.scale_up_domain)
        _whole(self.name, "release_year", self.release_year)
        if self.price_per_hour is not None:
            _positive(self.name, "price_per_hour", self.price_per_hour)
        missing = [f for f in SOURCED_FIELDS if f not in self.sources]
        if missing:
            raise ValueError(f"{self.name}: no source given for {missing}")
        # Keep the formats in BYTES_PER_VALUE order, and make both mappings read-only.
        ordered = {fmt: float(flops[fmt]) for fmt in BYTES_PER_VALUE if fmt in flops}
        object.__setattr__(self, "flops", MappingProxyType(ordered))
        object.__setattr__(self, "sources", MappingProxyType(dict(self.sources)))

    def _peak(self, fmt) -> float:
        if not isinstance(fmt, str) or fmt.lower() not in BYTES_PER_VALUE:
            raise ValueError(f"fmt must be one of {list(BYTES_PER_VALUE)}, got {fmt!r}")
        fmt = fmt.lower()
        if fmt not in self.flops:
            raise ValueError(f"{self.name} has no {fmt} matrix peak in hardware; "
                             f"fmt must be one of {list(self.flops)}, got {fmt!r}")
        return self.flops[fmt]

    def macs(self, fmt: str) -> float:
        """Multiply-accumulates per second in ``fmt``: dense FLOP/s / 2 (the board's "FLOPs")."""
        return self._peak(fmt) / 2

    def ops_per_byte(self, fmt: str, *, bytes_per_value: float | None = None) -> float:
        """The lecture's hardware ratio R = MAC/s × bytes per weight / HBM bytes/s (≈ 300).

        With weights stored in ``fmt`` it is the batch at which reading the weights once takes as
        long as using each weight once per sequence (lecture 00:16:56-00:18:48, E1.5). Halving the
        bytes per weight doubles the MAC rate on the same chip, so R barely moves with precision.
        ``bytes_per_value`` overrides :data:`BYTES_PER_VALUE` (e.g. to count FP4 block scales).
        """
        macs = self.macs(fmt)  # validates fmt first
        size = BYTES_PER_VALUE[fmt.lower()] if bytes_per_value is None else bytes_per_value
        _positive(self.name, "bytes_per_value", size)
        if size > 64:
            raise ValueError(f"{self.name}: bytes_per_value must be a number of bytes up to 64, got {size!r}")
        from . import validate   # here, so that importing hardware stays light (no NumPy)

        return validate.finite_result("ops_per_byte()", macs * size / self.hbm_bandwidth, fmt=fmt,
                                      bytes_per_value=size, hbm_bandwidth=self.hbm_bandwidth)

    @property
    def hbm_drain_time(self) -> float:
        """Seconds to read all of HBM once: capacity / bandwidth (lecture E1.7, ≈ 20 ms)."""
        from . import validate   # here, so that importing hardware stays light (no NumPy)

        return validate.finite_result("hbm_drain_time", self.hbm_capacity / self.hbm_bandwidth,
                                      hbm_capacity=self.hbm_capacity, hbm_bandwidth=self.hbm_bandwidth)


class ChipAggregate:
    """Peaks of ``n_chips`` copies of ``chip`` added up: what a System and a Chapter 8 Deployment share."""

    @property
    def flops(self) -> Mapping[str, float]:
        """Dense peak FLOP/s of all the chips together, per number format."""
        return MappingProxyType({fmt: v * self.n_chips for fmt, v in self.chip.flops.items()})

    @property
    def hbm_bandwidth(self) -> float:
        """Aggregate HBM bytes/s."""
        return self.chip.hbm_bandwidth * self.n_chips

    @property
    def hbm_capacity(self) -> float:
        """Aggregate HBM bytes."""
        return self.chip.hbm_capacity * self.n_chips


@dataclasses.dataclass(frozen=True, kw_only=True)
class System(ChipAggregate):
    """``n_chips`` copies of one chip joined by their scale-up network (NVLink domain, ICI pod)."""

    name: str
    chip: Chip
    n_chips: int
    scale_out_bandwidth: float | None = None  # per chip; None means the chip's own
    price_per_hour: float | None = None       # USD per hour for the whole system
    sources: Mapping[str, str] = dataclasses.field(default_factory=dict, hash=False, repr=False)
    notes: str = dataclasses.field(default="", repr=False)

    def __post_init__(self):
        if not isinstance(self.chip, Chip):
            raise ValueError(f"{self.name}: chip must be a hardware.Chip, got {self.chip!r}")
        _whole(self.name, "n_chips", self.n_chips)
        if self.n_chips > self.chip.scale_up_domain:
            raise ValueError(f"{self.name}: n_chips must be <= {self.chip.scale_up_domain} "
                             f"(the {self.chip.name} scale-up domain), got {self.n_chips}")
        if self.scale_out_bandwidth is None:
            object.__setattr__(self, "scale_out_bandwidth", self.chip.scale_out_bandwidth)
        _positive(self.name, "scale_out_bandwidth", self.scale_out_bandwidth)
        if self.price_per_hour is not None:
            _positive(self.name, "price_per_hour", self.price_per_hour)
        object.__setattr__(self, "sources", MappingProxyType(dict(self.sources)))

    @property
    def scale_up_bandwidth(self) -> float:
        """Aggregate one-direction scale-up bytes/s (vendors' "130 TB/s" for NVL72 is twice this)."""
        return self.chip.scale_up_bandwidth * self.n_chips

    @property
    def hbm_drain_time(self) -> float:
        """Seconds to read all HBM once; the same as one chip's, since both sides scale with n."""
        from . import validate   # here, so that importing hardware stays light (no NumPy)

        return validate.finite_result("hbm_drain_time", self.hbm_capacity / self.hbm_bandwidth,
                                      hbm_capacity=self.hbm_capacity, hbm_bandwidth=self.hbm_bandwidth)


# --- Sources ----------------------------------------------------------------------------------
# Each string is "where, access date". "SB" is the scaling book, read through the course notes
# /work/shared/reference/scaling_book_notes.md (§4.1 TPU table, §4.2 GPU and NVLink tables).
_READ = "2026-11"
SB_TPU = f"scaling book tpus.md 'TPU specs' table (jax-ml.github.io/scaling-book), {_READ}"
SB_GPU = f"scaling book gpus.md GPU/NVLink/node tables (jax-ml.github.io/scaling-book), {_READ}"
SB_PRICE = f"scaling book Ch8 price table (Google Cloud on-demand, Feb 2025), {_READ}"
LAMBDA = ("lambda.ai/instances on-demand, 8-GPU instance, USD per GPU-hour (page text as "
          f"transcribed 2026-09-20 in github.com/api-evangelist/lambda-labs plans file), {_READ}")
NO_PRICE = f"no public on-demand per-chip price found (Lambda, Google Cloud, AWS lists), {_READ}"

NV_A100 = ("NVIDIA A100 datasheet, 80GB SXM column (nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf"
           f", tabulated at glennklockwood.com/garden/processors/A100), {_READ}")
NV_H100 = ("NVIDIA H100 datasheet, SXM column, sparsity figures halved (tabulated at "
           "archive-lib.hpctech.co.jp/gpuproduct/nvidia-h100.html and "
           f"glennklockwood.com/garden/processors/h100), {_READ}")
NV_H200 = ("NVIDIA H200 SXM: same Hopper compute as H100, 141 GB HBM3e at 4.8 TB/s. Primary: NVIDIA's product page "
           "(nvidia.com/en-us/data-center/h200), 'the first GPU to offer 141GB of HBM3e memory at 4.8TB/s', quote "
           "checked against copies of the page's sentence in public repositories (the page itself was not readable "
           "here); capacity and NVLink also in NVIDIA's own MLPerf system description (github.com/mlcommons/"
           "inference_results_v4.1, closed/NVIDIA/systems/H200-SXM-141GBx8_TRT_MaxQ.json: '141 GB', 'HBM3e', "
           f"'18x 4th Gen NVLink, 900GB/s'), {_READ}")
NV_H800 = ("NVIDIA H800 SXM: the H100's Hopper die and HBM3 (80 GB, 3.35 TB/s, same BF16/FP8 tensor peaks) with "
           "NVLink cut to 400 GB/s both ways, i.e. 200 GB/s each way. Primary: DeepSeek, 'Insights into DeepSeek-V3' "
           "(ISCA 2025, arxiv.org/abs/2505.09343) section 4.1: 'built on the Hopper architecture, similar to the H100 "
           "GPU. However, it features reduced FP64 computational performance and NVLink bandwidth for regulatory "
           "compliance. Specifically, the NVLink bandwidth in H800 SXM nodes is reduced from 900 GB/s to 400 GB/s', "
           "and 'eight 400G Infiniband (IB) CX7 NICs' per node; quote checked against a verbatim copy of the paper's "
           "text in a public GitHub repository (the arXiv PDF was not readable here). NVIDIA publishes no H800 data "
           f"sheet that could be read here, {_READ}")
NV_DGXB200 = ("NVIDIA DGX B200 datasheet: 8 GPUs, '1,440GB' HBM3e (1.44 TB), 64 TB/s, FP4 72 PF dense, "
              "NVLink 14.4 TB/s (nvidia.com/en-us/data-center/dgx-b200, summarised at "
              f"brent-newsom-nvidia.github.io/AIPS-Boom/wiki/NVIDIA-DGX-B200), {_READ}")
NV_HGXB200 = ("NVIDIA HGX B200 per-GPU dense peaks (FP4 9, FP8/INT8 4.5, BF16 2.25 PF, FP32 75 TF; "
              f"verda.com/blog/gb300-nvl72-architecture; glennklockwood.com/garden/processors/B200), {_READ}")
NV_NVL72 = ("NVIDIA GB200 NVL72 spec table (nvidia.com/en-us/data-center/gb200-nvl72), rack totals / 72 and sparse "
            "figures halved: 'FP4 Tensor Core | 1,440 PFLOPS', 'FP8/FP6 Tensor Core | 720 PFLOPS', 'FP16/BF16 Tensor "
            "Core | 360 PFLOPS', 'FP32 | 5,760 TFLOPS', 'GPU Memory | Bandwidth | Up to 13.4 TB HBM3e | 576 TB/s', "
            "'NVLink Bandwidth | 130 TB/s'; the page was not readable here, its table checked against copies of it "
            f"in public repositories, {_READ}")
MLC_GB200 = ("MLCommons inference v6.1 system JSON GB200-NVL72_GB200-186GB (186 GB HBM3e per GPU; "
             f"github.com/mlcommons/inference_results_v6.1), {_READ}")
NV_GB300 = ("verda.com/blog/gb300-nvl72-architecture per-GPU table (dense: FP4 15, FP8 5, BF16 2.5 PF, "
            f"FP32 80 TF, 279 GB, 8 TB/s; rack 20 TB, 576 TB/s, NVLink 130 TB/s), {_READ}")
NV_RUBIN = ("NVIDIA, 'Inside the NVIDIA Rubin Platform: Six New Chips, One AI Supercomputer' (developer.nvidia.com/"
            "blog/inside-the-nvidia-rubin-platform-six-new-chips-one-ai-supercomputer, 2026-01-06): 'Up to 288 GB of "
            "HBM4 per GPU', 'Aggregate bandwidth of up to 22 TB/s', 'NVLink 6 delivers 3.6 TB/s of bidirectional "
            "GPU-to-GPU bandwidth per GPU'; quotes checked against a verbatim clipping of the page (2026-01-15) in a "
            "public GitHub repository. The rack's totals are 72 times these: 20.7 TB of HBM4 and 259 TB/s of NVLink "
            f"(both directions), {_READ}")
NV_RUBIN_FLOPS = ("NVIDIA rack training figure / 72 packages: NVFP4 2.5 EF -> 34.7 PF (NVIDIA's Rubin blog, "
                  "same page as the memory figures, lists 'NVFP4 training (PFLOPS) | 35' per GPU); the FP8 figure rests "
                  "on a secondary report, not NVIDIA's page: 1.2 EF -> 16.7 PF, GTC 2025 NVL144, megaobzor.com). The 50 PF 'NVFP4 inference' figure relies on Transformer Engine "
                  "compression (about 3:2 over dense, per SemiAnalysis as cited in greaterwrong.com "
                  f"Vladimir_Nesov shortform) and is not stored, {_READ}")
NV_RUBIN_ULTRA = ("NVIDIA GTC 2025 (2025-03-18) roadmap, Rubin Ultra NVL576 for H2 2027: 144 packages of 4 "
                  "reticle-sized GPU dies (NVIDIA counts the 576 dies), 1 TB HBM4e per package, rack 4.6 PB/s "
                  "HBM4e, 15 EF FP4 inference, 5 EF FP8 training, 365 TB fast memory, NVLink 7 1.5 PB/s, 600 kW "
                  "(futuretechstocks.com 'Nvidia lays out two-year AI roadmap'; technews.lt; semianalysis-based "
                  f"summaries quoting 4.6 PB/s), {_READ}")
NV_RUBIN_ULTRA_CHANGE = ("SemiAnalysis report (2026-06-30, summarised at c114pro.com/chip/175293.html, 2026-07-01): "
                         "the 4-die Rubin Ultra package may be replaced by a 2-die one; the GTC 2025 targets are "
                         f"kept here as announced, {_READ}")
NV_CX7 = f"DGX/HGX nodes: one 400 Gb/s ConnectX-7 NIC per GPU = 50 GB/s; {SB_GPU}"

AMD_MI300X = ("AMD Instinct MI300X data sheet (amd.com/content/dam/amd/en/documents/instinct-tech-docs/data-sheets/"
              "amd-instinct-mi300x-data-sheet.pdf, 2023-12): 192 GB HBM3 at 5.3 TB/s, 1307.4 TFLOPS FP16/BF16 and "
              "2614.9 TFLOPS FP8 dense (sparsity figures are twice these), 896 GB/s peak Infinity Fabric, "
              "750 W. The PDF itself was not readable here: the figures were checked against the MLCommons "
              "v4.1 AMD system description (github.com/mlcommons/inference_results_v4.1, closed/AMD/systems/"
              f"8xMI300X_2xEPYC-9374F.json: 'AMD Instinct MI300X-NPS1-SPX-192GB-750W', '192 GB', HBM3), {_READ}")
AMD_MI300X_IF = ("7 Infinity Fabric links per GPU to the other 7 of an 8-GPU platform, 896 GB/s peak in both "
                 f"directions together, i.e. 448 GB/s each way; {AMD_MI300X}")

#: When the sources of issue 51's presets (MI325X, MI350X, MI355X, H200 NVL, B300) were read.
_READ_51 = "2026-12"
AMD_MI325X = ("AMD Instinct MI325X data sheet (amd.com/content/dam/amd/en/documents/instinct-tech-docs/product-briefs/"
              "instinct-mi325x-datasheet.pdf, 2024-10): 256 GB HBM3E at 6 TB/s, the MI300X's CDNA 3 compute (1307.4 "
              "TFLOPS FP16/BF16 and 2614.9 TFLOPS FP8 dense; sparsity figures are twice these), the same 896 GB/s peak "
              "Infinity Fabric, 1000 W. The PDF was not readable here: capacity checked against AMD's ROCm 'GPU "
              "specifications' table (rocm.docs.amd.com/en/latest/reference/gpu-specs.html: MI325X, CDNA3, gfx942, "
              "256 GiB), bandwidth and peaks against copies of AMD's table in public pages ('6 TB/s', '2,614.9 "
              f"TFLOPS' FP8, '1,307.4 TFLOPS' FP16/BF16), {_READ_51}")
AMD_MI350 = ("AMD Instinct MI350 Series data sheets (amd.com/en/products/accelerators/instinct/mi350/mi355x.html and "
             "mi350x.html, launched 2025-06-12): 288 GB HBM3E at 8 TB/s on both; dense peaks MI355X '2.5 PF' FP16/BF16, "
             "'5.0 PF' FP8 and INT8, '10.1 PF' MXFP4/MXFP6 (1,400 W, liquid cooled), MI350X '2.3 PF, 4.6 PF and 9.2 PF' "
             "(1,000 W, air cooled); sparsity figures are twice these. AMD's pages were not readable here: capacity "
             "checked against AMD's ROCm 'GPU specifications' table (rocm.docs.amd.com, MI355X and MI350X, CDNA4, "
             "gfx950, 288 GiB), the peaks against AMD's ISSCC 2026 talk as reported (FP8 'five petaflops' on MI355X) "
             f"and copies of AMD's tables (MI350X '2,306.9 TFLOPS' FP16; MI355X FP4 '20.1 PF' with sparsity), {_READ_51}")
AMD_MI350_IF = ("Infinity Fabric of the MI350 series: 7 links per GPU to the other 7 of an 8-GPU platform, "
                "'1,075 GB/s' peak in both directions together (153.6 GB/s per link), i.e. about 538 GB/s each way; AMD's MI350 "
                f"series data sheet figure, not checked against a second copy here; {AMD_MI350}")
NV_H200_NVL = ("NVIDIA H200 product page (nvidia.com/en-us/data-center/h200), its 'H200 NVL' column: 141 GB HBM3e, "
               "4.8 TB/s, FP8 and INT8 '3,341' and BF16 '1,671 TFLOPS' with sparsity (dense: half), FP32 60 TFLOPS, "
               "'2- or 4-way NVIDIA NVLink bridge: 900GB/s per GPU', PCIe Gen5 128 GB/s, up to 600 W; the page was "
               "not readable here, its table checked against verbatim copies of it in public repositories "
               f"(transcribed 2026-07 and 2026-08), {_READ_51}")
NV_B300 = ("NVIDIA, 'Inside NVIDIA Blackwell Ultra: The Chip Powering the AI Factory Era' (developer.nvidia.com/blog/"
           "inside-nvidia-blackwell-ultra-the-chip-powering-the-ai-factory-era, 2025-08): '15 PetaFLOPS dense NVFP4', "
           "'288 GB of HBM3e per GPU', '8 TB/s per GPU', fifth-generation NVLink '1.8 TB/s of bidirectional' "
           "bandwidth per GPU; read here as stored copies of the post. FP8 and BF16 dense peaks: the Blackwell Ultra "
           f"rows of the GB300 preset (read {_READ_51})")

GC_V4 = f"cloud.google.com/tpu/docs/v4 (275 TFLOPs bf16 or int8, 32 GiB, 1200 GBps, 4096-chip pod), {_READ}"
GC_V5E = ("cloud.google.com/tpu/docs/v5e (197 TFLOPs bf16, 393 TOPs int8, 16 GB, 819 GBps, "
          f"400 GBps bidirectional ICI per chip, 256-chip pod, 2 × 100 Gbps NIC per 8-chip host), {_READ}")
GC_V5P = ("cloud.google.com/tpu/docs/v5p (459 TFLOPs bf16, 95 GB, 2765 GBps, 1200 GBps bidirectional "
          f"ICI per chip, 50 Gbps DCN per chip, 8960-chip pod), {_READ}")
GC_V6E = ("cloud.google.com/tpu/docs/v6e (918 TFLOPs bf16, 1836 TOPs int8, 32 GB, 1638 GBps, "
          f"800 GBps bidirectional ICI per chip, 256-chip pod), {_READ}")
GC_TPU7X = ("cloud.google.com/tpu/docs/tpu7x (2307 TFLOPs bf16, 4614 TFLOPs fp8, 192 GiB, 9216-chip "
            f"pod; its table lists v5p/v6e 'FP8' at the BF16 rate, i.e. no native FP8), {_READ}")
GC_IRONWOOD_ICI = ("Google Ironwood announcement (blog.google, 2025-04-09): ICI 1.2 TBps bidirectional "
                   "per chip, 1.5× Trillium (reported as 9.6 Tb/s at binaryverseai.com and "
                   f"artificial-intelligence-wiki.com), {_READ}")
GC_PRICE_V4 = ("cloud.google.com/tpu/pricing, v4 on-demand $3.22 per chip-hour (recorded 2022-08-11 "
               f"by infer-pub.com question 1114; not re-checked since), {_READ}")
GC_PRICE_V6E = ("cloud.google.com/tpu/pricing, v6e (Trillium) on-demand $2.70 per chip-hour; the "
                f"stored copies reached did not show it, so this value is unverified here, {_READ}")

_LAUNCH = f"vendor launch/announcement year (NVIDIA and Google Cloud announcements), {_READ}"


def _tpu_dcn(value_note: str) -> str:
    return f"{value_note}; {SB_TPU}"


# --- Chips, ordered by vendor then generation --------------------------------------------------
_CHIP_LIST = [
    Chip(
        name="A100", generation="Ampere", release_year=2020,
        flops={"fp32": 19.5e12, "bf16": 312e12, "int8": 624e12},
        hbm_bandwidth=2.039e12, hbm_capacity=80e9,
        scale_up_bandwidth=300e9,  # NVLink 3: 12 links × 25 GB/s each way ("600 GB/s" total)
        scale_up_domain=8, scale_out_bandwidth=25e9,  # DGX A100: one 200 Gb/s HDR NIC per GPU
        price_per_hour=2.79,
        sources={"flops": NV_A100, "hbm_bandwidth": NV_A100, "hbm_capacity": NV_A100,
                 "scale_up_bandwidth": f"NVLink 3 row (12 × 25 GB/s); {SB_GPU}",
                 "scale_up_domain": f"HGX/DGX A100 node of 8; {SB_GPU}",
                 "scale_out_bandwidth": f"DGX A100: 8 × 200 Gb/s HDR InfiniBand for 8 GPUs; {NV_A100}",
                 "price_per_hour": LAMBDA, "release_year": _LAUNCH},
        notes="80GB SXM part (2.039 TB/s); the 40GB part has 1.555 TB/s, giving R ≈ 200 not 153. "
              "No FP8 or FP4 in hardware.",
    ),
    Chip(
        name="H100", generation="Hopper", release_year=2022,
        flops={"fp32": 66.9e12, "bf16": 989.4e12, "fp8": 1978.9e12, "int8": 1978.9e12},
        hbm_bandwidth=3.35e12, hbm_capacity=80e9,
        scale_up_bandwidth=450e9, scale_up_domain=8, scale_out_bandwidth=50e9,
        price_per_hour=3.99,
        sources={"flops": NV_H100, "hbm_bandwidth": NV_H100, "hbm_capacity": NV_H100,
                 "scale_up_bandwidth": f"NVLink 4: 18 × 25 GB/s each way ('900 GB/s' both ways); {SB_GPU}",
                 "scale_up_domain": f"HGX/DGX H100 node of 8; {SB_GPU}",
                 "scale_out_bandwidth": NV_CX7, "price_per_hour": LAMBDA, "release_year": _LAUNCH},
        notes="SXM part. Scaling book rounds to 990 TFLOP/s and 3.4 TB/s in places (R = 295 with 3.35 TB/s). "
              "No FP4.",
    ),
    Chip(
        name="H200", generation="Hopper", release_year=2024,
        flops={"fp32": 66.9e12, "bf16": 989.4e12, "fp8": 1978.9e12, "int8": 1978.9e12},
        hbm_bandwidth=4.8e12, hbm_capacity=141e9,
        scale_up_bandwidth=450e9, scale_up_domain=8, scale_out_bandwidth=50e9,
        price_per_hour=3.99,
        sources={"flops": NV_H200, "hbm_bandwidth": NV_H200, "hbm_capacity": NV_H200,
                 "scale_up_bandwidth": f"Hopper NVLink 4, same as H100; {SB_GPU}",
                 "scale_up_domain": f"HGX/DGX H200 node of 8; {SB_GPU}",
                 "scale_out_bandwidth": NV_CX7,
                 "price_per_hour": "hyperstack.cloud/gpu-pricing on-demand H200 SXM $3.99/h (page "
                                   "text transcribed 2026-08-26 in github.com/api-evangelist/"
                                   f"nexgen-cloud plans file), {_READ}",
                 "release_year": _LAUNCH},
        notes="Same GH100 compute as H100 with more, faster HBM3e. No FP4.",
    ),
    Chip(
        name="H800", generation="Hopper", release_year=2023,
        flops={"fp32": 66.9e12, "bf16": 989.4e12, "fp8": 1978.9e12, "int8": 1978.9e12},
        hbm_bandwidth=3.35e12, hbm_capacity=80e9,
        scale_up_bandwidth=200e9, scale_up_domain=8, scale_out_bandwidth=50e9,
        price_per_hour=None,
        sources={"flops": NV_H800, "hbm_bandwidth": NV_H800, "hbm_capacity": NV_H800,
                 "scale_up_bandwidth": NV_H800, "scale_up_domain": f"HGX H800 node of 8; {NV_H800}",
                 "scale_out_bandwidth": f"400 Gb/s InfiniBand per GPU, as DeepSeek-V3 report §3.1 (arXiv 2412.19437); {NV_CX7}",
                 "price_per_hour": NO_PRICE, "release_year": NV_H800},
        notes="Export-control variant of the H100 (launched 2023-03-21, sales to China stopped 2023-10-17). "
              "DeepSeek-V3 was trained and is served on it. No FP4.",
    ),
    Chip(
        name="B200", generation="Blackwell", release_year=2024,
        flops={"fp32": 75e12, "bf16": 2.25e15, "fp8": 4.5e15, "int8": 4.5e15, "fp4": 9e15},
        hbm_bandwidth=8e12, hbm_capacity=180e9,
        scale_up_bandwidth=900e9, scale_up_domain=8, scale_out_bandwidth=50e9,
        price_per_hour=6.69,
        sources={"flops": NV_HGXB200, "hbm_bandwidth": NV_DGXB200, "hbm_capacity": NV_DGXB200,
                 "scale_up_bandwidth": f"NVLink 5: 18 × 50 GB/s each way ('1.8 TB/s'); {SB_GPU}",
                 "scale_up_domain": f"HGX/DGX B200 node of 8; {SB_GPU}",
                 "scale_out_bandwidth": NV_CX7, "price_per_hour": LAMBDA, "release_year": _LAUNCH},
        notes="HGX/DGX B200 (1,000 W). Capacity is the shipping 180 GB (192 GB physical, as the "
              "scaling book lists). Some tables give 7.7 TB/s; NVIDIA's DGX total 64 TB/s / 8 = 8 TB/s "
              "is what gives the scaling book's R = 281 in FP4.",
    ),
    Chip(
        name="GB200", generation="Blackwell", release_year=2024,
        flops={"fp32": 80e12, "bf16": 2.5e15, "fp8": 5e15, "int8": 5e15, "fp4": 10e15},
        hbm_bandwidth=8e12, hbm_capacity=186e9,
        scale_up_bandwidth=900e9, scale_up_domain=72, scale_out_bandwidth=50e9,
        price_per_hour=None,
        sources={"flops": NV_NVL72, "hbm_bandwidth": NV_NVL72, "hbm_capacity": MLC_GB200,
                 "scale_up_bandwidth": f"NVLink 5, 1.8 TB/s both ways per GPU; {NV_NVL72}",
                 "scale_up_domain": NV_NVL72,
                 "scale_out_bandwidth": f"GB200 NVL72 node egress 72 × 400 Gb/s; {SB_GPU}",
                 "price_per_hour": NO_PRICE, "release_year": _LAUNCH},
        notes="One Blackwell GPU of a GB200 superchip (1 Grace + 2 GPUs), as in NVL72 (1,200 W, "
              "hence ~10% above B200). R in FP4 ≈ 312 (lecture notes).",
    ),
    Chip(
        name="GB300", generation="Blackwell Ultra", release_year=2025,
        flops={"fp32": 80e12, "bf16": 2.5e15, "fp8": 5e15, "fp4": 15e15},
        hbm_bandwidth=8e12, hbm_capacity=279e9,
        scale_up_bandwidth=900e9, scale_up_domain=72, scale_out_bandwidth=100e9,
        price_per_hour=None,
        sources={"flops": NV_GB300, "hbm_bandwidth": NV_GB300, "hbm_capacity": NV_GB300,
                 "scale_up_bandwidth": f"NVLink 5, 900 GB/s each way; {NV_GB300}",
                 "scale_up_domain": NV_GB300,
                 "scale_out_bandwidth": "one 800 Gb/s ConnectX-8 per GPU (72× ConnectX-8 800G per "
                                        f"rack, ai-infrastructure.net/nvidia-blackwell-platform), {_READ}",
                 "price_per_hour": NO_PRICE, "release_year": _LAUNCH},
        notes="Blackwell Ultra in GB300 NVL72. NVIDIA's headline is 288 GB per GPU; 279 GB usable "
              "(20 TB per rack). INT8 is cut to a small fraction of FP8, so it is not listed.",
    ),
    Chip(
        name="B300", generation="Blackwell Ultra", release_year=2025,
        flops={"bf16": 2.5e15, "fp8": 5e15, "fp4": 15e15},
        hbm_bandwidth=8e12, hbm_capacity=288e9,
        scale_up_bandwidth=900e9, scale_up_domain=8, scale_out_bandwidth=100e9,
        price_per_hour=None,
        sources={"flops": f"fp4: {NV_B300}; fp8 and bf16: {NV_GB300}", "hbm_bandwidth": NV_B300,
                 "hbm_capacity": NV_B300,
                 "scale_up_bandwidth": f"NVLink 5, 1.8 TB/s both ways per GPU, 900 GB/s each way; {NV_B300}",
                 "scale_up_domain": f"HGX B300 node of 8 GPUs; {NV_B300}",
                 "scale_out_bandwidth": "one 800 Gb/s ConnectX-8 SuperNIC per GPU (HGX B300 nodes pair each GPU "
                                        f"with one, like GB300 NVL72); {NV_GB300}",
                 "price_per_hour": NO_PRICE, "release_year": NV_B300},
        notes="The Blackwell Ultra GPU in an 8-GPU HGX B300 node: GB300's chip without the Grace CPU and in a domain "
              "of 8. NVIDIA's 288 GB is stored (GB300's preset keeps the 279 GB usable figure). INT8 is cut to a "
              "small fraction of FP8 on Blackwell Ultra, so it is not listed; FP32 is left out (no matrix peak used "
              "here). Air-cooled HGX parts may hold their clocks below the liquid-cooled GB300's.",
    ),
    Chip(
        name="H200 NVL", generation="Hopper", release_year=2024,
        flops={"fp32": 60e12, "bf16": 1671e12 / 2, "fp8": 3341e12 / 2, "int8": 3341e12 / 2},
        hbm_bandwidth=4.8e12, hbm_capacity=141e9,
        scale_up_bandwidth=450e9, scale_up_domain=4, scale_out_bandwidth=50e9,
        price_per_hour=None,
        sources={"flops": f"NVIDIA's sparsity figures halved; {NV_H200_NVL}", "hbm_bandwidth": NV_H200_NVL,
                 "hbm_capacity": NV_H200_NVL,
                 "scale_up_bandwidth": f"NVLink bridge 900 GB/s per GPU both ways, 450 GB/s each way; {NV_H200_NVL}",
                 "scale_up_domain": f"a 4-way NVLink bridge joins at most 4 GPUs; {NV_H200_NVL}",
                 "scale_out_bandwidth": f"assumed one 400 Gb/s NIC per GPU, as on HGX nodes; {NV_CX7}",
                 "price_per_hour": NO_PRICE, "release_year": NV_H200_NVL},
        notes="The PCIe H200 (dual-slot, air-cooled, up to 600 W): the H200's memory with lower clocks, so about 84% "
              "of the SXM part's tensor peaks. GPUs beyond a 4-way bridge talk over PCIe and the network; the preset's "
              "scale-up domain is the bridge's 4.",
    ),
    Chip(
        name="Rubin", generation="Rubin", release_year=2026,
        flops={"fp8": 1.2e18 / 72, "fp4": 2.5e18 / 72},  # rack training figures / 72 GPUs
        hbm_bandwidth=22e12, hbm_capacity=288e9,
        scale_up_bandwidth=1.8e12, scale_up_domain=72, scale_out_bandwidth=200e9,
        price_per_hour=None,
        sources={"flops": NV_RUBIN_FLOPS, "hbm_bandwidth": NV_RUBIN, "hbm_capacity": NV_RUBIN,
                 "scale_up_bandwidth": f"NVLink 6, 3.6 TB/s both ways per GPU; {NV_RUBIN}",
                 "scale_up_domain": f"72 packages per Vera Rubin rack (NVL144 counted dies); {NV_RUBIN}",
                 "scale_out_bandwidth": "two 800 Gb/s ConnectX-9 per Rubin GPU = 1.6 Tb/s "
                                        f"(wheelersnetwork.com, 'Decoding Nvidia's Rubin Networking Math'), {_READ}",
                 "price_per_hour": f"not shipping to clouds yet; {NO_PRICE}",
                 "release_year": f"CES 2026 launch, volume H2 2026; {NV_RUBIN}"},
        notes="Vera Rubin GPU package (2 dies), NVIDIA's announced figures. The lecture uses "
              "288 GB / 20 TB/s = 14.4 ms (00:24:00); NVIDIA's latest figure is 22 TB/s, stored here "
              "(13.1 ms). 'NVL144' counted dies: 72 packages × 2; NVIDIA now calls the rack NVL72. "
              "No dense BF16 figure was found, so bf16 is not listed. fp8 and fp4 come from "
              "separately rounded rack totals, so their hardware ratios differ by about 4%.",
    ),
    Chip(
        name="Rubin Ultra", generation="Rubin Ultra", release_year=2027,
        flops={"fp8": 5e18 / 144, "fp4": 2 * 5e18 / 144},  # FP8 training figure / 144 packages
        hbm_bandwidth=4.6e15 / 144, hbm_capacity=1e12,
        scale_up_bandwidth=1.5e15 / 144 / 2, scale_up_domain=144, scale_out_bandwidth=400e9,
        price_per_hour=None,
        sources={"flops": f"FP8 5 EF training / 144 packages; fp4 = 2 x fp8 (see notes); {NV_RUBIN_ULTRA}",
                 "hbm_bandwidth": f"4.6 PB/s / 144 packages; {NV_RUBIN_ULTRA}",
                 "hbm_capacity": f"1 TB HBM4e per package (16 stacks); {NV_RUBIN_ULTRA}",
                 "scale_up_bandwidth": f"NVLink 7 1.5 PB/s both ways / 144 packages / 2; {NV_RUBIN_ULTRA}",
                 "scale_up_domain": f"144 packages = 576 dies in one NVLink domain; {NV_RUBIN_ULTRA}",
                 "scale_out_bandwidth": "not published; assumed the Rubin package's ConnectX-9 rate per die "
                                        "(2 × 800 Gb/s per 2 dies -> 4 × 800 Gb/s per 4-die package = 400 GB/s; "
                                        f"wheelersnetwork.com 'Decoding Nvidia's Rubin Networking Math'), {_READ}",
                 "price_per_hour": f"announced for H2 2027, not sold yet; {NO_PRICE}",
                 "release_year": f"planned H2 2027 (announced at GTC 2025); {NV_RUBIN_ULTRA}"},
        notes="Rubin Ultra package (4 dies) as announced at GTC 2025 for the NVL576 'Kyber' rack: the "
              "lecture's 'Rubin, 500 and something' (00:41:16). NVL576 counts dies: 144 packages × 4, "
              "against NVL72's 72 × 2 = 144 dies, hence the lecture's 'genuine 4x' (00:41:53). NVIDIA "
              "publishes FP4 only as a 15 EF 'inference' figure that relies on Transformer Engine "
              "compression (see Rubin), so fp4 is stored as 2 x the FP8 training rate, the FP4:FP8 ratio "
              "of every Blackwell preset. Scale-out is an assumption (see sources). "
              + NV_RUBIN_ULTRA_CHANGE,
    ),
    Chip(
        name="MI300X", generation="CDNA 3", release_year=2023,
        flops={"bf16": 1307.4e12, "fp8": 2614.9e12, "int8": 2614.9e12},
        hbm_bandwidth=5.3e12, hbm_capacity=192e9,
        scale_up_bandwidth=448e9, scale_up_domain=8, scale_out_bandwidth=50e9,
        price_per_hour=None,
        sources={"flops": AMD_MI300X, "hbm_bandwidth": AMD_MI300X, "hbm_capacity": AMD_MI300X,
                 "scale_up_bandwidth": AMD_MI300X_IF,
                 "scale_up_domain": f"8 MI300X on one Infinity Fabric baseboard; {AMD_MI300X}",
                 "scale_out_bandwidth": f"assumed one 400 Gb/s NIC per GPU, as on HGX nodes; {NV_CX7}",
                 "price_per_hour": NO_PRICE, "release_year": _LAUNCH},
        notes="AMD's first CDNA 3 accelerator (launched 2023-12-06). Dense peaks only, 2 FLOPs per "
              "multiply-add; INT8 runs at the FP8 rate. The FP32 vector rate is left out (not a matrix peak "
              "used here). No FP4 in hardware.",
    ),
    Chip(
        name="MI325X", generation="CDNA 3", release_year=2024,
        flops={"bf16": 1307.4e12, "fp8": 2614.9e12, "int8": 2614.9e12},
        hbm_bandwidth=6e12, hbm_capacity=256e9,
        scale_up_bandwidth=448e9, scale_up_domain=8, scale_out_bandwidth=50e9,
        price_per_hour=None,
        sources={"flops": AMD_MI325X, "hbm_bandwidth": AMD_MI325X, "hbm_capacity": AMD_MI325X,
                 "scale_up_bandwidth": f"the MI300X's Infinity Fabric, 896 GB/s both ways, 448 GB/s each way; "
                                       f"{AMD_MI325X}",
                 "scale_up_domain": f"8 MI325X on one Infinity Fabric baseboard ('UBB 2.0'); {AMD_MI325X}",
                 "scale_out_bandwidth": f"assumed one 400 Gb/s NIC per GPU, as on HGX nodes; {NV_CX7}",
                 "price_per_hour": NO_PRICE, "release_year": AMD_MI325X},
        notes="The MI300X's CDNA 3 compute with 256 GB of HBM3E at 6 TB/s (launched 2024-10-10). Dense peaks only; "
              "INT8 runs at the FP8 rate. No FP4 in hardware.",
    ),
    Chip(
        name="MI350X", generation="CDNA 4", release_year=2025,
        flops={"bf16": 2.3e15, "fp8": 4.6e15, "int8": 4.6e15, "fp4": 9.2e15},
        hbm_bandwidth=8e12, hbm_capacity=288e9,
        scale_up_bandwidth=537.6e9, scale_up_domain=8, scale_out_bandwidth=50e9,
        price_per_hour=None,
        sources={"flops": AMD_MI350, "hbm_bandwidth": AMD_MI350, "hbm_capacity": AMD_MI350,
                 "scale_up_bandwidth": AMD_MI350_IF,
                 "scale_up_domain": f"8 GPUs on one Infinity Fabric platform; {AMD_MI350}",
                 "scale_out_bandwidth": f"assumed one 400 Gb/s NIC per GPU, as on HGX nodes; {NV_CX7}",
                 "price_per_hour": NO_PRICE, "release_year": AMD_MI350},
        notes="The air-cooled CDNA 4 part (1,000 W). fp4 is MXFP4 (MXFP6 runs at the same rate). Dense peaks only.",
    ),
    Chip(
        name="MI355X", generation="CDNA 4", release_year=2025,
        flops={"bf16": 2.5e15, "fp8": 5.0e15, "int8": 5.0e15, "fp4": 10.1e15},
        hbm_bandwidth=8e12, hbm_capacity=288e9,
        scale_up_bandwidth=537.6e9, scale_up_domain=8, scale_out_bandwidth=50e9,
        price_per_hour=None,
        sources={"flops": AMD_MI350, "hbm_bandwidth": AMD_MI350, "hbm_capacity": AMD_MI350,
                 "scale_up_bandwidth": AMD_MI350_IF,
                 "scale_up_domain": f"8 GPUs on one Infinity Fabric platform; {AMD_MI350}",
                 "scale_out_bandwidth": f"assumed one 400 Gb/s NIC per GPU, as on HGX nodes; {NV_CX7}",
                 "price_per_hour": NO_PRICE, "release_year": AMD_MI350},
        notes="The liquid-cooled CDNA 4 flagship (1,400 W). fp4 is MXFP4 (MXFP6 runs at the same rate). Dense peaks "
              "only.",
    ),
    Chip(
        name="TPU v4p", generation="TPU v4", release_year=2021,
        flops={"bf16": 275e12, "int8": 275e12},
        hbm_bandwidth=1.2e12, hbm_capacity=32e9,
        scale_up_bandwidth=270e9, scale_up_domain=4096, scale_out_bandwidth=6.25e9,
        price_per_hour=3.22,
        sources={"flops": GC_V4, "hbm_bandwidth": GC_V4, "hbm_capacity": GC_V4,
                 "scale_up_bandwidth": f"6 ICI links × 45 GB/s one way; {SB_TPU}",
                 "scale_up_domain": GC_V4,
                 "scale_out_bandwidth": _tpu_dcn("DCN about 6.25 GB/s per TPU"),
                 "price_per_hour": GC_PRICE_V4, "release_year": _LAUNCH},
        notes="Google calls it 'TPU v4' (the scaling book 'v4p'). Google labels HBM '32 GiB'; "
              "stored as 32 × 10⁹ bytes like every other vendor 'GB'. INT8 runs at the BF16 rate; no FP8.",
    ),
    Chip(
        name="TPU v5e", generation="TPU v5", release_year=2023,
        flops={"bf16": 197e12, "int8": 393e12},
        hbm_bandwidth=819e9, hbm_capacity=16e9,
        scale_up_bandwidth=200e9, scale_up_domain=256, scale_out_bandwidth=3.125e9,
        price_per_hour=1.20,
        sources={"flops": GC_V5E, "hbm_bandwidth": GC_V5E, "hbm_capacity": GC_V5E,
                 "scale_up_bandwidth": f"400 GBps bidirectional / 2 (4 ports × 50 GB/s); {GC_V5E}",
                 "scale_up_domain": GC_V5E,
                 "scale_out_bandwidth": _tpu_dcn(f"2 × 100 Gbps per 8-chip host = 25 Gb/s per chip; {GC_V5E}"),
                 "price_per_hour": SB_PRICE, "release_year": _LAUNCH},
        notes="Google's table also prints '800 GiBps'; 819 GB/s is its key-spec figure and the "
              "scaling book's 820 GB/s. No FP8.",
    ),
    Chip(
        name="TPU v5p", generation="TPU v5", release_year=2023,
        flops={"bf16": 459e12, "int8": 918e12},
        hbm_bandwidth=2.765e12, hbm_capacity=95e9,
        scale_up_bandwidth=600e9, scale_up_domain=8960, scale_out_bandwidth=6.25e9,
        price_per_hour=4.20,
        sources={"flops": f"bf16: {GC_V5P}; int8 918 TFLOP/s: {SB_TPU}", "hbm_bandwidth": GC_V5P,
                 "hbm_capacity": GC_V5P,
                 "scale_up_bandwidth": f"1200 GBps bidirectional / 2 (6 ports × 100 GB/s); {GC_V5P}",
                 "scale_up_domain": GC_V5P, "scale_out_bandwidth": GC_V5P,
                 "price_per_hour": SB_PRICE, "release_year": _LAUNCH},
        notes="Scaling book lists 96 GB and 2.8 TB/s; Google's key-spec table 95 GB and 2765 GBps. "
              "Google lists 'FP8' at the BF16 rate (no native FP8), so fp8 is not listed.",
    ),
    Chip(
        name="TPU v6e", generation="TPU v6 (Trillium)", release_year=2024,
        flops={"bf16": 918e12, "int8": 1836e12},
        hbm_bandwidth=1.638e12, hbm_capacity=32e9,
        scale_up_bandwidth=400e9, scale_up_domain=256, scale_out_bandwidth=12.5e9,
        price_per_hour=2.70,
        sources={"flops": GC_V6E, "hbm_bandwidth": GC_V6E, "hbm_capacity": GC_V6E,
                 "scale_up_bandwidth": f"800 GBps bidirectional / 2 (4 ports × 100 GB/s); {GC_V6E}",
                 "scale_up_domain": GC_V6E,
                 "scale_out_bandwidth": _tpu_dcn("DCN 12.5 GB/s per chip on v6e"),
                 "price_per_hour": GC_PRICE_V6E, "release_year": _LAUNCH},
        notes="Trillium. Scaling book table: 920 TFLOP/s and 1.6 TB/s (Ch1 text: 910 TFLOP/s). "
              "Google lists 'FP8' at the BF16 rate (no native FP8), so fp8 is not listed.",
    ),
    Chip(
        name="TPU7x", generation="TPU7x (Ironwood)", release_year=2025,
        flops={"bf16": 2307e12, "fp8": 4614e12},
        hbm_bandwidth=7.4e12, hbm_capacity=192e9,
        scale_up_bandwidth=600e9, scale_up_domain=9216, scale_out_bandwidth=12.5e9,
        price_per_hour=None,
        sources={"flops": GC_TPU7X, "hbm_bandwidth": f"7.4 TB/s; {SB_TPU}",
                 "hbm_capacity": GC_TPU7X,
                 "scale_up_bandwidth": f"1.2 TBps bidirectional / 2; {GC_IRONWOOD_ICI}",
                 "scale_up_domain": f"9216 = 4 × 4 × 576; {GC_TPU7X}",
                 "scale_out_bandwidth": _tpu_dcn("DCN 12.5 GB/s per chip on TPU7x"),
                 "price_per_hour": NO_PRICE, "release_year": _LAUNCH},
        notes="Ironwood. Google's April 2025 blog said 7.2 TB/s HBM; the scaling book's 7.4 TB/s is "
              "used. The scaling book also lists int8 4.61 × 10¹⁵ FLOP/s; Google publishes only BF16 and FP8.",
    ),
]

CHIPS: dict[str, Chip] = {chip.name: chip for chip in _CHIP_LIST}
"""Every chip preset, keyed by canonical name, ordered by vendor then generation."""

_CHIP_ALIASES = {
    "A100 80GB": "A100", "A100 SXM": "A100", "H100 SXM": "H100", "H200 SXM": "H200",
    "Vera Rubin": "Rubin", "Rubin GPU": "Rubin", "Instinct MI300X": "MI300X", "Instinct MI325X": "MI325X",
    "Instinct MI350X": "MI350X", "Instinct MI355X": "MI355X", "H200 PCIe": "H200 NVL", "B300 SXM": "B300",

    "TPU v4": "TPU v4p", "v4": "TPU v4p", "v4p": "TPU v4p", "v5e": "TPU v5e", "v5p": "TPU v5p",
    "v6e": "TPU v6e", "Trillium": "TPU v6e", "TPU v7": "TPU7x", "TPU v7x": "TPU7x",
    "Ironwood": "TPU7x",
}


def _preset_system(name: str, chip: str, n_chips: int, source: str, notes: str = "") -> System:
    """A preset system; its price is n_chips x the chip's per-chip list price (when there is one)."""
    c = CHIPS[chip]
    price = None if c.price_per_hour is None else c.price_per_hour * n_chips
    return System(name=name, chip=c, n_chips=n_chips, price_per_hour=price,
                  sources={"n_chips": source, "price_per_hour": c.sources["price_per_hour"]},
                  notes=notes)


_SYSTEM_LIST = [
    # NVIDIA HGX/DGX nodes: 8 GPUs on one NVSwitch baseboard (scaling book gpus.md node table).
    _preset_system("HGX A100", "A100", 8, f"HGX/DGX A100, 8 GPUs; {SB_GPU}"),
    _preset_system("HGX H100", "H100", 8, f"HGX/DGX H100, 8 GPUs, 640 GB; {SB_GPU}"),
    _preset_system("HGX H200", "H200", 8, f"HGX/DGX H200, 8 GPUs; {SB_GPU}"),
    _preset_system("HGX H800", "H800", 8, f"HGX H800, 8 GPUs (DeepSeek's serving node); {NV_H800}"),
    _preset_system("HGX B200", "B200", 8, NV_DGXB200),
    # Rack-scale NVLink domains: 72 GPU packages each.
    _preset_system("GB200 NVL72", "GB200", 72, NV_NVL72,
                   notes="NVIDIA's 13.4 TB, 576 TB/s, 130 TB/s (NVLink, both directions)."),
    _preset_system("GB300 NVL72", "GB300", 72, NV_GB300),
    _preset_system("Vera Rubin NVL144", "Rubin", 72, NV_RUBIN,
                   notes="72 Rubin packages = 144 dies; NVIDIA's NVL144 name counted dies, and at "
                         "CES 2026 it renamed the rack Vera Rubin NVL72. 20.7 TB, 260 TB/s NVLink."),
    _preset_system("Rubin Ultra NVL576", "Rubin Ultra", 144, NV_RUBIN_ULTRA,
                   notes="144 Rubin Ultra packages = 576 dies (NVIDIA's count), planned H2 2027: 144 TB "
                         "HBM4e, 4.6 PB/s, NVLink 7 1.5 PB/s. The lecture's 'five hundred and something' "
                         "(00:41:16); die for die 576 / 144 = 4× an NVL72."),
    # AMD: 8 MI300X on one Infinity Fabric baseboard (MLPerf Inference v4.1's 8xMI300X systems).
    _preset_system("MI300X platform", "MI300X", 8, AMD_MI300X),
    _preset_system("MI325X platform", "MI325X", 8, AMD_MI325X),
    _preset_system("MI350X platform", "MI350X", 8, AMD_MI350),
    _preset_system("MI355X platform", "MI355X", 8, AMD_MI350),
    _preset_system("HGX B300", "B300", 8, NV_B300),
    _preset_system("H200 NVL 4-way", "H200 NVL", 4, NV_H200_NVL),
    # Google TPU ICI domains: full pods, or the 256-chip v5e/v6e pods.
    _preset_system("TPU v4 pod", "TPU v4p", 4096, GC_V4),
    _preset_system("TPU v5e-256", "TPU v5e", 256, GC_V5E),
    _preset_system("TPU v5p pod", "TPU v5p", 8960, GC_V5P,
                   notes="The largest single job Google schedules is 6144 chips (16x16x24)."),
    _preset_system("TPU v6e-256", "TPU v6e", 256, GC_V6E),
    _preset_system("TPU7x pod", "TPU7x", 9216, GC_TPU7X),
]

SYSTEMS: dict[str, System] = {system.name: system for system in _SYSTEM_LIST}
"""Every scale-up system preset, keyed by canonical name."""

_SYSTEM_ALIASES = {
    "DGX A100": "HGX A100", "DGX H100": "HGX H100", "DGX H200": "HGX H200", "DGX B200": "HGX B200",
    "DGX B300": "HGX B300",
    "NVL72": "GB200 NVL72", "Vera Rubin NVL72": "Vera Rubin NVL144", "Rubin NVL144": "Vera Rubin NVL144",
    "NVL576": "Rubin Ultra NVL576", "Vera Rubin Ultra NVL576": "Rubin Ultra NVL576",
    "TPU v4p pod": "TPU v4 pod", "TPU v5e pod": "TPU v5e-256", "TPU v6e pod": "TPU v6e-256",
    "Trillium pod": "TPU v6e-256", "Ironwood pod": "TPU7x pod",
}


_CHIP_CATALOGUE = Catalogue("chip", CHIPS, _CHIP_ALIASES)
_SYSTEM_CATALOGUE = Catalogue("system", SYSTEMS, _SYSTEM_ALIASES)


_SYSTEMS_INSTEAD = {"hardware.get_system": _SYSTEM_CATALOGUE}
_CHIPS_INSTEAD = {"hardware.get": _CHIP_CATALOGUE}

# --- Chips a learner adds in this session (the lab of Chapter 11: "my machine") ------------------------------
# Kept apart from CHIPS, which holds only sourced vendor presets: a registered chip is found by get() and
# resolve_chip() and listed last by chip_names(), for as long as the Python session lasts.
_USER_CHIPS: dict[str, Chip] = {}


def _user_chip(name):
    from .catalogue import loose_name

    return _USER_CHIPS.get(loose_name(name)) if isinstance(name, str) and _USER_CHIPS else None


def register_chip(chip: Chip) -> str:
    """Offer ``chip`` (from :func:`custom_chip` or :func:`chip_from_json`) wherever a chip is chosen by name in
    this session: :func:`get`, :func:`resolve_chip`, and :func:`chip_names` (which the explorers' chip dropdowns
    list when they are built). Registering again under the same name replaces it. A name that a preset or one
    of its aliases already has is refused, so "H100" always means the vendor's H100. Returns the name."""
    from .catalogue import loose_name

    if not isinstance(chip, Chip):
        raise ValueError(f"chip must be a hardware.Chip (custom_chip(...) or chip_from_json(...)), got {chip!r}")
    if _CHIP_CATALOGUE.knows(chip.name) or _SYSTEM_CATALOGUE.knows(chip.name):
        raise ValueError(f"chip name {chip.name!r} is a preset's; give your chip another name")
    _USER_CHIPS[loose_name(chip.name)] = chip
    return chip.name


def forget_chip(name: str) -> None:
    """Remove a chip added by :func:`register_chip` (a name never registered is a ``KeyError``)."""
    from .catalogue import loose_name

    if not isinstance(name, str):
        raise ValueError(f"name must be a registered chip's name, got {name!r}")
    if _USER_CHIPS.pop(loose_name(name), None) is None:
        raise KeyError(f"no registered chip {name!r}; registered: {', '.join(c.name for c in _USER_CHIPS.values())}")



def get(name: str) -> Chip:
    """The chip preset called ``name`` (case, spaces, hyphens, underscores and dots ignored).

    ``get("tpu-v5e") is get("TPU v5e")``; aliases include "TPU v4", "Trillium" and "Ironwood".
    An unknown name raises ``KeyError`` listing the known ones; a system's name ("GB300 NVL72")
    raises one that points to :func:`get_system`.
    """
    user = _user_chip(name)
    return user if user is not None else _CHIP_CATALOGUE.find(name, elsewhere=_SYSTEMS_INSTEAD)


def get_system(name: str) -> System:
    """The scale-up system preset called ``name`` (same matching rules as :func:`get`); a chip's
    name ("H100") raises a ``KeyError`` that points to :func:`get`."""
    return _SYSTEM_CATALOGUE.find(name, elsewhere=_CHIPS_INSTEAD)


def resolve_chip(chip, parameter: str = "chip"):
    """``chip`` as a preset: a :class:`Chip` (or a :class:`System`, which answers the same
    questions for the whole domain) is returned as it is, a name is looked up as in :func:`get`;
    anything else is a ``ValueError`` naming ``parameter``."""
    user = _user_chip(chip)
    return user if user is not None else _CHIP_CATALOGUE.resolve(chip, parameter, also=(System,),
                                                                  elsewhere=_SYSTEMS_INSTEAD)


def resolve_system(system, parameter: str = "system") -> System:
    """``system`` as a :class:`System`: the object itself or a name looked up as in :func:`get_system`."""
    return _SYSTEM_CATALOGUE.resolve(system, parameter, elsewhere=_CHIPS_INSTEAD)


def chip_names() -> list[str]:
    """Canonical chip names, NVIDIA then Google, each by generation; then any chip registered with
    :func:`register_chip` in this session (so every chip dropdown built afterwards offers it)."""
    return list(CHIPS) + [chip.name for chip in _USER_CHIPS.values()]


def system_names() -> list[str]:
    """Canonical system names, NVIDIA then Google, each by generation."""
    return list(SYSTEMS)


# --- Chips the presets lack (issue 51 §2) -------------------------------------------------------------
#: What a custom chip assumes for a field left out (and says so in its notes): one 8-GPU scale-up domain at the
#: H100's NVLink rate and one 400 Gb/s NIC per GPU.
CUSTOM_DEFAULTS = {"scale_up_domain": 8, "scale_up_bandwidth": 450e9, "scale_out_bandwidth": 50e9}
_GIVEN = "given by the user (command-line flags or a chip JSON file), not checked against a vendor sheet"


def custom_chip(*, name: str = "custom", base=None, hbm_capacity=None, hbm_bandwidth=None, flops=None,
                scale_up_domain=None, scale_up_bandwidth=None, scale_out_bandwidth=None) -> Chip:
    """A chip the presets lack: SI units (bytes, bytes/s, dense FLOP/s per format, one-direction bytes/s per chip).

    ``base`` (a preset name or :class:`Chip`) supplies every field not given, so ``custom_chip(base="MI300X",
    hbm_capacity=256e9)`` changes only the memory. Without a base, ``hbm_capacity``, ``hbm_bandwidth`` and ``flops``
    are required and the scale-up fields take :data:`CUSTOM_DEFAULTS`; the chip's notes list every value given and
    every default taken. Bad input is a ``ValueError`` naming the field."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"name must be a non-empty str, got {name!r}")
    start = None if base is None else resolve_chip(base, "base")
    if isinstance(start, System):
        start = start.chip
    given = {"hbm_capacity": hbm_capacity, "hbm_bandwidth": hbm_bandwidth, "flops": flops,
             "scale_up_domain": scale_up_domain, "scale_up_bandwidth": scale_up_bandwidth,
             "scale_out_bandwidth": scale_out_bandwidth}
    if flops is not None:
        if not isinstance(flops, Mapping) or not flops:
            raise ValueError(f"flops must be a non-empty mapping of format to dense FLOP/s, got {flops!r}")
        unknown = sorted(str(key) for key in flops if str(key).lower() not in BYTES_PER_VALUE)
        if unknown:
            raise ValueError(f"flops keys must be among {list(BYTES_PER_VALUE)}, got {unknown}")
        given["flops"] = {str(key).lower(): value for key, value in flops.items()}
    if start is None:
        missing = [key for key in ("hbm_capacity", "hbm_bandwidth", "flops") if given[key] is None]
        if missing:
            raise ValueError(f"{', '.join(missing)} must be given for a custom chip without a base preset "
                             f"(or give base=a preset name to start from)")
    fields, said, defaulted = {}, [], []
    for key, value in given.items():
        if value is not None:
            fields[key] = value
            said.append(key)
        elif start is not None:
            fields[key] = getattr(start, key)
        else:
            fields[key] = CUSTOM_DEFAULTS[key]
            defaulted.append(f"{key}={CUSTOM_DEFAULTS[key]:g}")
    sources = {key: (_GIVEN if key in said else (start.sources[key] if start is not None else
                                                  f"assumed (hardware.CUSTOM_DEFAULTS); {_GIVEN}"))
               for key in SOURCED_FIELDS if key not in ("price_per_hour", "release_year")}
    sources["price_per_hour"] = start.sources["price_per_hour"] if start is not None else "no price given"
    sources["release_year"] = start.sources["release_year"] if start is not None else "not known (custom chip)"
    notes = (f"A custom chip{f' based on the {start.name} preset' if start is not None else ''}: "
             f"{', '.join(said) or 'nothing'} given by the user"
             + (f"; defaults taken: {', '.join(defaulted)}" if defaulted else "") + ".")
    return Chip(name=name.strip()[:60], generation=start.generation if start is not None else "custom",
                release_year=start.release_year if start is not None else 2025,
                price_per_hour=start.price_per_hour if start is not None else None, sources=sources, notes=notes,
                **fields)


#: The fields of a chip JSON file, their units, and the factor to SI.
CHIP_JSON_FIELDS = {"hbm_gb": ("hbm_capacity", 1e9), "hbm_tb_s": ("hbm_bandwidth", 1e12),
                    "scale_up": ("scale_up_domain", 1), "scale_up_gb_s": ("scale_up_bandwidth", 1e9),
                    "scale_out_gb_s": ("scale_out_bandwidth", 1e9)}


def chip_from_json(source) -> Chip:
    """A custom chip (:func:`custom_chip`) from a small JSON file (a path) or its parsed dict, in the units spec
    sheets print::

        {"name": "MI325X-like", "base": "MI300X", "hbm_gb": 256, "hbm_tb_s": 6,
         "tflops": {"bf16": 1307.4, "fp8": 2614.9}, "scale_up": 8, "scale_up_gb_s": 448, "scale_out_gb_s": 50}

    ``tflops`` are dense TFLOP/s per format (halve a vendor's "with sparsity" figures); the bandwidths are per chip
    and one direction. Only ``name`` plus what ``custom_chip`` needs are required; unknown keys are refused."""
    import json
    import os

    if isinstance(source, (str, os.PathLike)):
        try:
            with open(source, encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, ValueError) as error:
            raise ValueError(f"source must be a readable chip JSON file, got {os.fspath(source)!r}: {error}") from None
    elif isinstance(source, Mapping):
        data = dict(source)
    else:
        raise ValueError(f"source must be a path to a chip JSON file or its dict, got {source!r}")
    if not isinstance(data, dict):
        raise ValueError(f"a chip JSON file must hold an object, got {type(data).__name__}")
    allowed = {"name", "base", "tflops", *CHIP_JSON_FIELDS}
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise ValueError(f"chip JSON keys must be among {sorted(allowed)}, got {unknown}")
    fields = {}
    for key, (field, scale) in CHIP_JSON_FIELDS.items():
        if key in data:
            value = data[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not _finite(value) or value <= 0:
                raise ValueError(f"chip JSON field {key!r} must be a number > 0, got {value!r}")
            fields[field] = int(value) if field == "scale_up_domain" else value * scale
    if "tflops" in data:
        tflops = data["tflops"]
        if not isinstance(tflops, dict) or not tflops:
            raise ValueError(f"chip JSON field 'tflops' must map formats to dense TFLOP/s, got {tflops!r}")
        for fmt, value in tflops.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not _finite(value) or value <= 0:
                raise ValueError(f"chip JSON field 'tflops' {fmt!r} must be a number > 0, got {value!r}")
        fields["flops"] = {fmt: value * 1e12 for fmt, value in tflops.items()}
    return custom_chip(name=data.get("name", "custom"), base=data.get("base"), **fields)
