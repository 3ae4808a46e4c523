"""Input checks shared by every public function and explorer.

Bad input fails loudly and early, with a message that names the parameter, the value it got and
what is allowed (DESIGN.md, "Bad input"). Arrays are accepted wherever a number is, so the same
checks guard the sliders' vectorised curves.
"""

from __future__ import annotations

import math
import numbers

import numpy as np


def _describe(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def number(name: str, value, *, positive: bool = True, allow_zero: bool = False,
           maximum: float | None = None):
    """Return ``value`` (a real number or an array of them) if it is finite and in range.

    ``positive`` requires > 0 (or >= 0 with ``allow_zero``); ``maximum`` is an inclusive bound.
    Raises ``ValueError`` naming ``name`` otherwise. Booleans and strings are refused.
    """
    if isinstance(value, (bool, np.bool_)) or isinstance(value, (str, bytes)):
        raise ValueError(f"{name} must be a number, got {_describe(value)}")
    if isinstance(value, numbers.Real):
        array = None
        as_float = float(value)
        values = (as_float,)
    else:
        try:
            array = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a number or an array of numbers, "
                             f"got {_describe(value)}") from None
        values = array.ravel()
    finite = np.isfinite(values)
    if not np.all(finite):
        raise ValueError(f"{name} must be finite, got {_describe(value)}")
    if positive:
        low_ok = np.greater_equal(values, 0) if allow_zero else np.greater(values, 0)
        if not np.all(low_ok):
            bound = ">= 0" if allow_zero else "> 0"
            raise ValueError(f"{name} must be {bound}, got {_describe(value)}")
    if maximum is not None and not np.all(np.less_equal(values, maximum)):
        raise ValueError(f"{name} must be <= {maximum:g}, got {_describe(value)}")
    return as_float if array is None else array


def fraction(name: str, value):
    """A number in (0, 1], e.g. an efficiency such as MFU."""
    return number(name, value, maximum=1.0)


def integer(name: str, value, *, minimum: int = 1) -> int:
    """A whole number >= ``minimum`` (bools refused; 4.0 is accepted as 4)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a whole number, got {_describe(value)}")
    if not math.isfinite(float(value)) or float(value) != int(value):
        raise ValueError(f"{name} must be a whole number, got {_describe(value)}")
    if int(value) < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {_describe(value)}")
    return int(value)


def choice(name: str, value, allowed):
    """``value`` if it is one of ``allowed``; otherwise a ``ValueError`` listing them."""
    allowed = list(allowed)
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {_describe(value)}")
    return value
