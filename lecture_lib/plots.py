"""Shared figure style, so every chapter's plots look alike (colours, sizes, fonts).

Figures are built with ``matplotlib.figure.Figure`` on the Agg canvas, never through pyplot's
global state, so explorers can own one figure each and redraw it in place.
"""

from __future__ import annotations

STYLE = {
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.25,
    "legend.fontsize": 8.5,
    "legend.frameon": False,
    "lines.linewidth": 1.8,
}

# One colour per idea, the same in every chapter.
COLORS = {
    "compute": "#1f77b4",   # blue: matrix units
    "weights": "#d62728",   # red: weight fetch
    "kv": "#2ca02c",        # green: KV-cache fetch
    "memory": "#ff7f0e",    # orange: weights + KV
    "total": "#111111",     # black: the bound that wins (the board's bold line)
    "marker": "#7f7f7f",    # grey: the learner's current setting
    "balance": "#9467bd",   # purple: balance points (B*, Goldilocks)
}

def presentation_scale() -> float:
    """How much larger figures are drawn for a projector: ``LECTURE_PRESENT`` unset, empty or 0 -> 1;
    ``1``/``true``/``yes`` -> 1.35 (`make present` sets it: a 9-inch figure is then ~970 px wide
    with ~18 px text, sized for 1280x800); a number such as ``1.5`` -> that scale (1 to 3)."""
    import os

    value = os.environ.get("LECTURE_PRESENT", "").strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return 1.0
    if value in ("1", "true", "yes", "on"):
        return 1.35
    try:
        return min(3.0, max(1.0, float(value)))
    except ValueError:
        return 1.0


# fewer pixels per frame: explorer frames encode, travel and decode faster; more in presentation mode
# (every size is in points or inches, so a higher DPI scales text, lines and figure alike)
DPI = round(80 * presentation_scale())


def new_figure(width: float = 9.0, height: float = 3.6, ncols: int = 1, nrows: int = 1):
    """A Figure on the Agg canvas with the course style, and its axes (a list)."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(width, height), dpi=DPI)
        FigureCanvasAgg(figure)
        axes = figure.subplots(nrows, ncols, squeeze=False).ravel().tolist()
        figure.subplots_adjust(left=0.16 / ncols + 0.03, right=0.98, bottom=0.15, top=0.9, wspace=0.3)
    return figure, axes


def styled(function):
    """Run ``function`` under the course's rc style (artists created inside inherit it)."""
    import matplotlib

    def wrapper(*args, **kwargs):
        with matplotlib.rc_context(STYLE):
            return function(*args, **kwargs)

    wrapper.__name__ = function.__name__
    wrapper.__doc__ = function.__doc__
    return wrapper


def to_image(figure):
    """A static figure as an ``IPython.display.Image`` (works under any matplotlib backend)."""
    import io

    from IPython.display import Image

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI)
    return Image(data=buffer.getvalue(), format="png")


@styled
def train_timetable(t_step: float = 20e-3, arrival: float = 21e-3, n_trains: int = 4):
    """The lecture's "train" (00:21:44): a batch departs every ``t_step``; a request arriving at
    ``arrival`` waits for the next departure, then rides one step. Returns the Figure."""
    from . import validate

    validate.number("t_step", t_step)
    validate.number("arrival", arrival, allow_zero=True)
    figure, (axis,) = new_figure(9.0, 2.2)
    ms = 1e3
    for k in range(n_trains):
        axis.broken_barh([(k * t_step * ms, t_step * ms * 0.97)], (0.6, 0.8),
                         color=COLORS["compute"], alpha=0.35 + 0.15 * (k % 2))
        axis.text((k + 0.5) * t_step * ms, 1.0, f"batch {k + 1}", ha="center", va="center", fontsize=9)
    departure = (int(arrival // t_step) + 1) * t_step
    done = departure + t_step
    axis.annotate("", xy=(departure * ms, 1.9), xytext=(arrival * ms, 1.9),
                  arrowprops=dict(arrowstyle="->", color=COLORS["weights"]))
    axis.text((arrival + departure) / 2 * ms, 2.15, f"wait {(departure - arrival) * ms:.0f} ms", ha="center",
              color=COLORS["weights"], fontsize=9)
    axis.annotate("", xy=(done * ms, 1.9), xytext=(departure * ms, 1.9),
                  arrowprops=dict(arrowstyle="->", color=COLORS["total"]))
    axis.text((departure + done) / 2 * ms, 2.15, f"ride {t_step * ms:.0f} ms", ha="center", fontsize=9)
    axis.axvline(arrival * ms, color=COLORS["weights"], ls=":", lw=1)
    axis.set(xlim=(0, n_trains * t_step * ms), ylim=(0.3, 2.6), yticks=[], xlabel="time (ms)",
             title=f"a batch departs every {t_step * ms:.0f} ms: worst case ≈ {2 * t_step * ms:.0f} ms")
    axis.grid(False)
    figure.subplots_adjust(bottom=0.25, top=0.85, left=0.03, right=0.98)
    return figure
