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

DPI = 96


def new_figure(width: float = 9.0, height: float = 3.6, ncols: int = 1, nrows: int = 1):
    """A Figure on the Agg canvas with the course style, and its axes (a list)."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(width, height), dpi=DPI)
        FigureCanvasAgg(figure)
        axes = figure.subplots(nrows, ncols, squeeze=False).ravel().tolist()
        figure.subplots_adjust(left=0.08, right=0.98, bottom=0.15, top=0.9, wspace=0.28)
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
