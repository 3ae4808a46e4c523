"""Explorers built with their defaults, shared by the tests that only read them.

Building an explorer lays out and draws its figure (0.1–0.5 s on the 2-core machine), and about ten
tests per explorer class only look at the default one: its layout, fonts, labels, alt text and
readout. They share one instance per class and worker. The next test gets a fresh one when a control
is not where it was built, when the figure was cleared, or when its text alternative (which names the
axes' ranges) or readout differs from the built one's (a control moved and put back may leave wider
axes behind), so no test sees another's changes.
"""

_built: dict = {}


def pristine(cls):
    """A default ``cls()``, built once per worker. Tests that change it must put it back."""
    explorer, shown = _built.get(cls, (None, None))
    if explorer is None or _shown(explorer) != shown:
        explorer = cls()
        _built[cls] = (explorer, _shown(explorer))
    return explorer


def _shown(explorer) -> tuple:
    return explorer.values, bool(explorer.view.figure.axes), explorer.view.alt_text, explorer.readout.value
