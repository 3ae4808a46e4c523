"""Chapter 3's explorers: the pipeline Gantt chart the lecture drew (00:56:51, 00:58:59) and the
stage-boundary requirement (00:50:51).

The Gantt chart is :func:`lecture_lib.pipeline.simulate`'s timeline; the bubble curve and the
stage-ratio curve are the chapter's Formulas evaluated over NumPy arrays. Each figure is drawn once;
a change of a control replaces the vertices of a few collections and redraws them over a cached
background.
"""

from __future__ import annotations

import math

import matplotlib
import numpy as np
from matplotlib.collections import PolyCollection

from lecture_lib import models, pipeline, units

from . import base, plots, sliders
from .plots import COLORS

SCHEDULE_LABELS = {
    "GPipe (training)": "gpipe",
    "1F1B (training)": "1f1b",
    "interleaved 1F1B (training)": "interleaved",
    "decode loop (inference)": "inference",
}
MAX_STAGES = 8
MAX_MICROBATCHES = 16
MAX_CHUNKS = 4
DECODE_TOKENS = 3
FORWARD, BACKWARD = 1.0, 2.0          # t_F = 1, t_B = 2 t_F (a backward pass does twice the matmuls)
BUBBLE_COLOR = "#bdbdbd"
MIN_LABEL_PIXELS = 18                  # label a box "F3"/"B3" only if it is this wide (pixels at 1x)
_TIME_LIMITS = (3, 6, 12, 24, 48, 96)   # time-axis widths: 3 whole-number tick steps each
TICKS = np.linspace(0, 1, 4)             # the time axes run over [0, 1] of the current width

_CHUNK_SHADES = {   # chunk k of an interleaved device: the same hue, lighter as k grows
    kind: np.array([(1 - w) * np.array(matplotlib.colors.to_rgba(COLORS[name])) + w * np.ones(4)
                    for w in np.linspace(0, 0.55, MAX_CHUNKS)])
    for kind, name in (("F", "compute"), ("B", "weights"))}


def _time_limit(makespan: float) -> float:
    """Snap the time axis to a few fixed widths (3 ticks of 1, 2, 4, ... time units)."""
    return next((limit for limit in _TIME_LIMITS if limit >= makespan), makespan)


def _boxes(starts, ends, rows, height):
    """Rectangles (as vertex arrays) from ``starts`` to ``ends`` at row positions ``rows``."""
    bottom, top = rows - height / 2, rows + height / 2
    return np.stack([np.column_stack([starts, bottom]), np.column_stack([starts, top]),
                     np.column_stack([ends, top]), np.column_stack([ends, bottom])], axis=1)


def snapped_microbatches(schedule: str, stages: int, microbatches: int, chunks: int) -> int:
    """Interleaving needs m to be a multiple of P (Megatron-LM): round m up to the next one."""
    from lecture_lib import validate

    validate.choice("schedule", schedule, pipeline.SCHEDULES)
    stages = validate.integer("stages", stages)
    microbatches = validate.integer("microbatches", microbatches)
    chunks = validate.integer("chunks", chunks)
    if schedule == "interleaved" and chunks > 1 and microbatches % stages:
        return microbatches + stages - microbatches % stages
    return microbatches


class ScheduleExplorer(base.Explorer):
    """A pipeline's Gantt chart: stages (racks) against time, forward and backward boxes, idle time
    shaded; below it the activations stage 0 holds and the bubble fraction against m."""

    title = "Pipeline schedules: who works when, and where the bubbles are (lecture 00:56:51, 00:58:59)"

    def __init__(self, **overrides):
        if "schedule" in overrides and overrides["schedule"] in SCHEDULE_LABELS.values():
            overrides["schedule"] = next(k for k, v in SCHEDULE_LABELS.items() if v == overrides["schedule"])
        super().__init__(**overrides)

    def controls_(self):
        return {
            "schedule": sliders.dropdown("schedule", list(SCHEDULE_LABELS), "GPipe (training)"),
            "stages": sliders.int_slider("stages P (racks)", 4, 1, MAX_STAGES),
            "microbatches": sliders.int_slider("micro-batches m", 4, 1, MAX_MICROBATCHES),
            "chunks": sliders.int_slider("chunks v per device", 2, 1, MAX_CHUNKS),
        }

    @plots.styled
    def setup(self):
        view, (gantt,) = base.new_view(9.0, 5.0)
        figure = view.figure
        gantt.set_position([0.07, 0.51, 0.91, 0.41])
        memory = figure.add_axes([0.07, 0.09, 0.4, 0.24])
        curve_axis = figure.add_axes([0.58, 0.09, 0.4, 0.24])
        # Time is drawn in fractions of the axis width, so the limits never change and every frame blits;
        # the tick labels are animated texts that follow the current time scale.
        gantt.set(xlim=(0, 1), ylim=(0, 1), yticks=[], xticks=TICKS, xticklabels=[],
                  xlabel="time (units of one stage's forward pass, t_F = 1, t_B = 2)")
        gantt.grid(False)
        gantt.xaxis.set_label_coords(0.5, -0.1)
        self.bubbles = PolyCollection([], facecolors=BUBBLE_COLOR, edgecolors="none", label="idle (bubble)")
        self.forward = PolyCollection([], facecolors=COLORS["compute"], edgecolors="white", linewidths=0.6,
                                      label="forward")
        # Backward boxes are hatched as well as red: colour is never the only carrier of F vs B.
        self.backward = PolyCollection([], facecolors=COLORS["weights"], edgecolors="white", linewidths=0.6,
                                       hatch="/", label="backward (hatched)")
        for collection in (self.bubbles, self.forward, self.backward):
            gantt.add_collection(collection)
        self.optimizer = gantt.axvline(0, color=COLORS["total"], ls="--", lw=1.2, label="end of step / run")
        gantt.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=4, borderaxespad=0.2)
        self.stage_labels = [gantt.text(0, 0, "", ha="right", va="center", fontsize=8.5,
                                        transform=matplotlib.transforms.blended_transform_factory(
                                            gantt.transAxes, gantt.transData))
                             for _ in range(MAX_STAGES)]
        for label in self.stage_labels:
            label.set_x(-0.005)
        # One marker line per pass and micro-batch, "F3" / "B3" as the marker (the lecture's labels, so
        # forward and backward read without colour): far cheaper than a Text per box.
        self.box_labels = {(kind, j): gantt.plot([], [], ls="none", marker=f"$\\mathbf{{{kind}{j}}}$", ms=9 if j < 10 else 11.5,
                                                 color="white", markeredgewidth=0)[0]
                           for kind in "FB" for j in range(MAX_MICROBATCHES)}

        memory.set(title="activations held by stage 0", xlabel="time", ylabel="micro-batches",
                   xlim=(0, 1), ylim=(0, MAX_MICROBATCHES + 1), xticks=TICKS, xticklabels=[])
        self.tick_labels = [axis.text(x, -0.03, "", ha="center", va="top", fontsize=9,
                                      transform=matplotlib.transforms.blended_transform_factory(
                                          axis.transData, axis.transAxes))
                            for axis in (gantt, memory) for x in TICKS]
        self.held, = memory.plot([], [], drawstyle="steps-post", color=COLORS["memory"])
        self.held_peak = memory.axhline(0, color=COLORS["memory"], ls=":", lw=1)
        self.no_backward = memory.text(0.5, 0.55, "", transform=memory.transAxes, ha="center", va="center",
                                       fontsize=9, color=COLORS["marker"])
        self.memory_axis = memory

        m = np.arange(1, MAX_MICROBATCHES + 1)
        self.m_grid = m
        curve_axis.set(title="bubble fraction vs micro-batches", xlabel="micro-batches m", ylabel="idle",
                       xlim=(0.5, MAX_MICROBATCHES + 0.5), ylim=(0, 1))
        self.curve, = curve_axis.plot([], [], color=COLORS["total"], label="formula")
        self.point, = curve_axis.plot([], [], "o", color=COLORS["balance"], ms=7, label="simulated")
        curve_axis.legend(loc="upper right")
        self.gantt = gantt
        self.gantt_pixels = gantt.get_position().width * figure.get_figwidth() * figure.dpi
        view.animate(self.bubbles, self.forward, self.backward, self.optimizer, *self.stage_labels,
                     *self.box_labels.values(), self.held, self.held_peak, self.no_backward, self.curve, self.point,
                     *self.tick_labels)
        return view

    def update(self, values):
        schedule = SCHEDULE_LABELS[values["schedule"]]
        stages, chunks = values["stages"], values["chunks"]
        m_asked = values["microbatches"]
        inference = schedule == "inference"
        used_chunks = chunks if schedule == "interleaved" else 1
        m = snapped_microbatches(schedule, stages, m_asked, used_chunks)
        timeline = pipeline.simulate(schedule=schedule, stages=stages, microbatches=m, chunks=used_chunks,
                                     forward_time=FORWARD, backward_time=BACKWARD,
                                     tokens=DECODE_TOKENS if inference else 1)
        arrays = timeline.arrays
        limit = _time_limit(timeline.makespan)
        starts, ends = arrays["start"] / limit, arrays["end"] / limit     # fractions of the time axis
        height = 1.0 / stages
        rows = (arrays["stage"] + 0.5) * height
        forward = arrays["forward"]
        boxes = _boxes(starts, ends, rows, 0.86 * height)
        self.forward.set_verts(boxes[forward])
        self.backward.set_verts(boxes[~forward])
        self.forward.set_facecolor(_CHUNK_SHADES["F"][arrays["chunk"][forward]])
        self.backward.set_facecolor(_CHUNK_SHADES["B"][arrays["chunk"][~forward]])
        lanes = (np.arange(stages) + 0.5) * height
        self.bubbles.set_verts(_boxes(np.zeros(stages), np.full(stages, timeline.makespan / limit), lanes,
                                      0.86 * height))
        self.optimizer.set_xdata([timeline.makespan / limit] * 2)
        for s, label in enumerate(self.stage_labels):
            label.set_text(f"rack {s}" if s < stages else "")
            label.set_y(lanes[s] if s < stages else 0)
        self._label_boxes(starts, ends, arrays["microbatch"], rows, forward)
        for i, label in enumerate(self.tick_labels):
            label.set_text(f"{TICKS[i % len(TICKS)] * limit:g}")

        times, held = timeline.in_flight(0)
        self.held.set_data(np.append(times / limit, 1.0), np.append(held, held[-1]))
        self.held_peak.set_ydata([timeline.peak_in_flight] * 2)

        rows_out = [("schedule", f"{values['schedule']}: P = {stages}, m = {m}"
                                 + (f", v = {used_chunks}" if used_chunks > 1 else ""))]
        if m != m_asked:
            rows_out.append(("micro-batches", f"{m_asked} rounded up to {m} (interleaving needs a multiple of P)"))
        if inference:
            idle = pipeline.decode_idle_fraction(stages=stages, microbatches=m)
            curve = pipeline.DECODE_IDLE_FRACTION(P=stages, n_micro=self.m_grid)
            steady = timeline.steady_idle_fraction()
            self.curve.set_data(self.m_grid, curve)
            self.point.set_data([m], [steady])
            rows_out += [
                ("steady-state idle: simulated", f"{steady:.1%}"),
                ("steady-state idle: max(0, (P−m)/P)", f"{idle:.1%}"),
                ("micro-batches needed for no bubble", f"m = P = {stages}"),
                (f"idle over the whole {DECODE_TOKENS}-token run", f"{timeline.bubble_fraction:.1%} (fill and drain)"),
                ("activations held for a backward", "none (inference has no backward)"),
            ]
        else:
            formula = timeline.bubble_fraction_formula
            curve = pipeline.bubble_fraction(stages=stages, microbatches=self.m_grid, chunks=used_chunks)
            self.curve.set_data(self.m_grid, curve)
            self.point.set_data([m], [timeline.bubble_fraction])
            ideal = m * (FORWARD + BACKWARD)
            rows_out += [
                ("bubble: simulated idle time", f"{timeline.bubble_fraction:.1%}"),
                ("bubble: formula " + ("(P−1)/(vm+P−1)" if used_chunks > 1 else "(P−1)/(m+P−1)"), f"{formula:.1%}"),
                ("step time (no bubble would be)", f"{timeline.makespan:g} t_F  ({ideal:g} t_F)"),
                ("peak activations held (stage 0)", timeline.peak_held_text),
            ]
        if not inference:
            rows_out.append((f"interleaved with v = {chunks} would idle",
                             f"{pipeline.bubble_fraction(stages=stages, microbatches=m, chunks=chunks):.1%} (formula)"))
        else:
            rows_out.append(("chunks v", "training only: the decode loop does not interleave"
                             if chunks == 1 else f"training only (v = {chunks} not used by the decode loop)"))
        self.held.set_visible(not inference)
        self.held_peak.set_visible(not inference)
        self.no_backward.set_text("decode: no backward pass,\nso no activations wait for one" if inference else "")
        return rows_out, False

    def _label_boxes(self, starts, ends, microbatch, rows, forward):
        show = float(np.min(ends - starts)) * self.gantt_pixels >= MIN_LABEL_PIXELS
        centres = (starts + ends) / 2
        for (kind, j), marker in self.box_labels.items():
            mine = (microbatch == j) & (forward == (kind == "F")) if show else np.zeros(len(rows), bool)
            marker.set_data(centres[mine], rows[mine])


class StageBoundaryExplorer(base.Explorer):
    """In-rack traffic time / rack-boundary traffic time against layers per stage (E3.1)."""

    title = "Is the rack boundary the bottleneck? (lecture 00:50:51-00:52:09)"

    LAYERS = np.linspace(0.05, 8, 200)

    def controls_(self):
        self.model = models.get("deepseek-v3")
        return {
            "k_active": sliders.int_slider("activated experts k", self.model.experts_per_token, 1, 32),
            "scale_up_ratio": sliders.slider("scale-up / scale-out bw", 8.0, 1.0, 20.0, 0.5),
            "layers_per_stage": sliders.int_slider("MoE layers per stage", 1, 1, 8),
        }

    @plots.styled
    def setup(self):
        view, (axis,) = base.new_view(6.4, 3.6)
        axis.set(xlabel="MoE layers per stage L_stage", ylabel="t_scale-up / t_scale-out", yscale="log",
                 xlim=(0, 8), ylim=(0.01, 1000), title="above 1: the work inside the rack dominates")
        axis.axhline(1, color=COLORS["total"], lw=1.0)
        axis.axhspan(0.01, 1, color=COLORS["weights"], alpha=0.08)
        axis.text(7.9, 0.5, "rack boundary is the bottleneck", ha="right", va="top", fontsize=8.5,
                  color=COLORS["weights"])
        self.line, = axis.plot([], [], color=COLORS["compute"], label="(1/ratio) · k · L_stage · 2")
        self.minimum = axis.axvline(1, color=COLORS["balance"], ls="--", label="smallest stage")
        self.marker, = axis.plot([], [], "o", color=COLORS["marker"], ms=8, label="your stage")
        axis.legend(loc="upper left")
        view.animate(self.line, self.minimum, self.marker)
        return view

    def update(self, values):
        k, ratio, layers = values["k_active"], values["scale_up_ratio"], values["layers_per_stage"]
        moe_layers = self.model.n_layers - self.model.n_dense_layers
        curve = pipeline.stage_ratio(k_active=k, layers_per_stage=self.LAYERS, scale_up_ratio=ratio)
        self.line.set_data(self.LAYERS, curve)
        smallest = pipeline.min_layers_per_stage(k_active=k, scale_up_ratio=ratio)
        self.minimum.set_xdata([smallest] * 2)
        here = pipeline.stage_ratio(k_active=k, layers_per_stage=layers, scale_up_ratio=ratio)
        self.marker.set_data([layers], [here])
        rows = [
            ("t_scale-up / t_scale-out at your stage", f"{here:.3g}"),
            ("verdict", "rack boundary is cheap" if here >= 1 else "rack boundary is the bottleneck"),
            ("smallest stage", f"{smallest:.3g} MoE layers"),
            (f"{self.model.name}: {moe_layers} MoE layers", f"up to {moe_layers // math.ceil(smallest)} racks "
                                                            f"of {units.plural(math.ceil(smallest), 'layer')} each"),
        ]
        return rows, False


@plots.styled
def gantt_figure(timeline: pipeline.Timeline, *, title: str | None = None, width: float = 9.0,
                 labels: bool = True):
    """A static Gantt chart of one simulated timeline (for notebooks and problems); returns the Figure.

    Stages (racks) are rows, rack 0 at the bottom as on the board; forward boxes blue, backward red,
    idle time grey. Boxes carry their micro-batch number when ``labels`` and they are wide enough.
    """
    if not isinstance(timeline, pipeline.Timeline):
        raise ValueError(f"timeline must be a pipeline.Timeline (from pipeline.simulate), got {type(timeline).__name__}")
    base = 0.45 * timeline.stages + 1.2        # inches; a title gets a line of its own above the legend
    height = base + (0.35 if title else 0.0)
    figure, (axis,) = plots.new_figure(width, height)
    arrays = timeline.arrays
    rows = arrays["stage"] + 0.5
    boxes = _boxes(arrays["start"], arrays["end"], rows, 0.86)
    forward = arrays["forward"]
    lanes = np.arange(timeline.stages) + 0.5
    axis.add_collection(PolyCollection(_boxes(np.zeros(timeline.stages), np.full(timeline.stages, timeline.makespan),
                                              lanes, 0.86), facecolors=BUBBLE_COLOR, edgecolors="none",
                                       label="idle (bubble)"))
    axis.add_collection(PolyCollection(boxes[forward], facecolors=_CHUNK_SHADES["F"][arrays["chunk"][forward]],
                                       edgecolors="white", linewidths=0.6, label="forward"))
    if (~forward).any():
        axis.add_collection(PolyCollection(boxes[~forward], facecolors=_CHUNK_SHADES["B"][arrays["chunk"][~forward]],
                                           edgecolors="white", linewidths=0.6, hatch="/",
                                           label="backward (hatched)"))
    width_pixels = 0.8 * width * plots.DPI
    if labels and float(np.min(arrays["end"] - arrays["start"])) / timeline.makespan * width_pixels >= MIN_LABEL_PIXELS:
        for kind in "FB":
            for j in range(timeline.microbatches):
                mine = (arrays["microbatch"] == j) & (forward == (kind == "F"))
                if mine.any():
                    axis.plot((arrays["start"][mine] + arrays["end"][mine]) / 2, rows[mine], ls="none",
                              marker=f"$\\mathbf{{{kind}{j}}}$", ms=9 if j < 10 else 11.5, color="white", markeredgewidth=0)
    axis.set(xlim=(0, timeline.makespan * 1.01), ylim=(0, timeline.stages), yticks=lanes,
             yticklabels=[f"rack {s}" for s in range(timeline.stages)], xlabel="time")
    axis.grid(False)
    axis.legend(loc="lower left", bbox_to_anchor=(0, 1), ncol=3)
    if title:      # above the legend, not beside it: on a narrow column the two overlapped
        figure.suptitle(title, x=0.1, y=1 - 0.06 / height, ha="left", va="top")
    figure.subplots_adjust(left=0.1, right=0.98, bottom=(0.5 + 0.12 * base) / height, top=1 - 0.2 * base / height
                           - (0.35 / height if title else 0.0))
    return figure
