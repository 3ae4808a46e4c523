"""lecture_lib: the shared library of the course "The math behind how LLMs are trained and served".

The course follows Reiner Pope's blackboard lecture on the Dwarkesh Podcast (2026-04-29,
https://youtu.be/xmkSf5IS-zw). Every formula lives here once, as a SymPy expression
(see :mod:`lecture_lib.formula`); notebooks show it, explorers evaluate it, tests check it.

The package has three rooms, by who uses them. Here, at the top level, the lecture's physics and
the presets (``roofline``, ``moe``, ``pipeline`` ... ``hardware``, ``models``, ``symbols``), which
notebooks and learners import by name; in :mod:`lecture_lib.explorers`, everything drawn in the
page; in :mod:`lecture_lib.practice`, the problems and what judges, records and delivers them.
The physics imports neither of the other two, and the explorers never import practice.

Submodules load on first use, so ``import lecture_lib`` stays cheap::

    from lecture_lib import hardware, models, roofline
    from lecture_lib.explorers.roofline import BatchExplorer
    from lecture_lib.practice.checks import check
"""

import importlib
import importlib.util
import pkgutil
import warnings

__version__ = "0.1.0"

#: What the numeric half of the library needs beyond SymPy (import name -> distribution name).
NUMERIC_DEPENDENCIES = {"numpy": "numpy", "matplotlib": "matplotlib", "PIL": "pillow"}


def missing_dependencies() -> list[str]:
    """The distributions of :data:`NUMERIC_DEPENDENCIES` that cannot be imported here."""
    missing = []
    for module, distribution in NUMERIC_DEPENDENCIES.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):        # a module blocked or half-installed
            found = False
        if not found:
            missing.append(distribution)
    return missing


_MISSING = missing_dependencies()
if _MISSING:
    # Loud, once, at import (JupyterLite: `%pip install lecture-lib` cannot report a failed fetch itself).
    warnings.warn(
        f"lecture_lib: {', '.join(_MISSING)} could not be found, so the explorers, plots and numeric functions "
        f"will fail with ModuleNotFoundError. In JupyterLite these come from Pyodide's package CDN: open the site "
        f"online once, or install them (%pip install {' '.join(_MISSING)}). Without them only the SymPy side "
        f"works: lecture_lib.symbols and the derivations that use sympy alone.",
        RuntimeWarning, stacklevel=2)

# Every module of the package, found on disk, so one added later loads as an attribute without being listed
# (lecture_lib.measurements, .predict and .collectives once raised AttributeError, missing from a hand-kept list).
_SUBMODULES = tuple(sorted(info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_")))

__all__ = list(_SUBMODULES)


def __getattr__(name):
    if name in _SUBMODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'lecture_lib' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_SUBMODULES))
