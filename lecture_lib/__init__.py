"""lecture_lib: the shared library of the course "The math behind how LLMs are trained and served".

The course follows Reiner Pope's blackboard lecture on the Dwarkesh Podcast (2026-04-29,
https://youtu.be/xmkSf5IS-zw). Every formula lives here once, as a SymPy expression
(see :mod:`lecture_lib.formula`); notebooks show it, explorers evaluate it, tests check it.

Submodules load on first use, so ``import lecture_lib`` stays cheap::

    from lecture_lib import hardware, models, roofline
"""

import importlib

__version__ = "0.1.0"

_SUBMODULES = (
    "catalogue",
    "checks",
    "context",
    "context_explorers",
    "exercises",
    "explore",
    "flashcards",
    "formula",
    "hardware",
    "hf_config",
    "models",
    "moe",
    "moe_explorers",
    "pipeline",
    "pipeline_explorers",
    "pipeline_memory",
    "pipeline_memory_explorers",
    "plots",
    "pricing",
    "progress",
    "reversible",
    "reversible_explorers",
    "roofline",
    "roofline_explorers",
    "scaling",
    "scaling_explorers",
    "symbols",
    "tables",
    "units",
    "validate",
)

__all__ = list(_SUBMODULES)


def __getattr__(name):
    if name in _SUBMODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'lecture_lib' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_SUBMODULES))
