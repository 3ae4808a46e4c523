"""Presets found by a loosely spelled name: chips, systems, models, price sheets, storage tiers, fits.

One matching rule for the whole course (case, spaces, hyphens, underscores and dots ignored) and
one pair of errors: ``ValueError`` naming the parameter for a name that is not a string,
``KeyError`` listing the known names for an unknown one. Standard library only, so the preset
modules stay light to import.
"""

from __future__ import annotations

import re
from typing import Generic, Mapping, TypeVar


def _describe(value) -> str:
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 60 else text[:57] + "..."


def _a(noun: str) -> str:
    return f"an {noun}" if noun[:1].lower() in "aeiou" else f"a {noun}"


def loose_name(name: str) -> str:
    """The form presets are matched by: case, spaces, hyphens, underscores and dots ignored."""
    return re.sub(r"[\s_\-.]+", "", name).lower()


Preset = TypeVar("Preset")


class Catalogue(Generic[Preset]):
    """Presets found by a loosely spelled name (chips, systems, models, price sheets, tiers, fits).

    ``find("TPU v5e")`` and ``find("tpu-v5e")`` are the same preset; ``aliases`` map other names to
    a canonical one. A name that is not a string raises ``ValueError`` naming ``parameter``; an
    unknown name raises ``KeyError`` listing the known ones. Two names that match loosely the
    same are refused when the catalogue is built.
    """

    def __init__(self, kind: str, presets: Mapping[str, Preset], aliases: Mapping[str, str] | None = None,
                 *, parameter: str = "name"):
        self.kind, self.parameter, self.presets = kind, parameter, presets
        self._index: dict[str, str] = {}
        for name, target in [(key, key) for key in presets] + list((aliases or {}).items()):
            if target not in presets or self._index.get(loose_name(name), target) != target:
                raise ValueError(f"{kind} name {name!r} -> {target!r} is unknown or clashes with another name")
            self._index[loose_name(name)] = target

    def find(self, name, *, elsewhere: Mapping[str, "Catalogue"] | None = None) -> Preset:
        """The preset ``name`` gives. ``elsewhere`` maps a lookup function's name to the catalogue
        it searches (``{"hardware.get_system": systems}``): an unknown name that one of them knows
        gets a ``KeyError`` pointing there."""
        if not isinstance(name, str):
            raise ValueError(f"{self.parameter} must be a string naming a {self.kind}, got {name!r}")
        key = self._index.get(loose_name(name))
        if key is None:
            raise KeyError(f"unknown {self.kind} {name!r}{self._pointer(name, elsewhere)}; "
                           f"known {self.kind}s: {', '.join(self.presets)}")
        return self.presets[key]

    def knows(self, name) -> bool:
        """Whether ``name`` is a string that gives one of these presets."""
        return isinstance(name, str) and loose_name(name) in self._index

    def _pointer(self, name: str, elsewhere: Mapping[str, "Catalogue"] | None) -> str:
        """": 'GB300 NVL72' names a system, so use hardware.get_system('GB300 NVL72')" when a
        catalogue of ``elsewhere`` knows ``name``, else ""."""
        for function, other in (elsewhere or {}).items():
            if other.knows(name):
                return f": {name!r} names {_a(other.kind)}, so use {function}({name!r})"
        return ""

    def resolve(self, value, parameter: str | None = None, *, also=(),
                elsewhere: Mapping[str, "Catalogue"] | None = None) -> Preset:
        """The preset ``value`` names, or ``value`` itself when it already is one (or an instance of
        a type in ``also``). Anything else raises ``ValueError`` naming ``parameter``; an unknown
        name raises ``KeyError`` listing the known ones (pointing to a lookup of ``elsewhere`` that
        knows it, as :meth:`find` does). The one resolver behind every public argument that takes
        a chip, a system, a model, a price sheet, a tier or a fit."""
        parameter = parameter or self.parameter
        kinds = tuple({type(preset) for preset in self.presets.values()}) + tuple(also)
        if isinstance(value, kinds):
            return value
        if not isinstance(value, str):
            raise ValueError(f"{parameter} must be a {self.kind} or the name of one, got {_describe(value)}")
        key = self._index.get(loose_name(value))
        if key is None:
            raise KeyError(f"unknown {self.kind} {value!r} for {parameter}{self._pointer(value, elsewhere)}; "
                           f"known {self.kind}s: {', '.join(self.presets)}")
        return self.presets[key]

    def names(self) -> list[str]:
        return list(self.presets)
