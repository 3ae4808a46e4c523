"""Input checks shared by every public function and explorer.

Bad input fails loudly and early, with a message that names the parameter, the value it got and
what is allowed (DESIGN.md, "Bad input"). Arrays are accepted wherever a number is, so the same
checks guard the sliders' vectorised curves.
"""

from __future__ import annotations

import decimal
import math
import numbers

import numpy as np


def _describe(value) -> str:
    try:
        text = repr(value)
    except Exception:   # e.g. an int too long for repr
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 60 else text[:57] + "..."


def _real_scalar(name: str, value) -> float:
    """A Python or NumPy real scalar as a float; huge ints (10**400) are refused, not overflowed."""
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"{name} must be a number of ordinary size, got {_describe(value)}") from None
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number, got {_describe(value)}") from None


def _real_array(name: str, value) -> np.ndarray:
    """A list or array of real numbers as a float array; text, complex, bool, datetime and object
    elements are refused instead of being cast (NumPy would read "4" as 4.0 and drop 1j)."""
    try:
        array = np.asarray(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be a number or an array of numbers, got {_describe(value)}") from None
    if array.dtype.kind not in "iuf":
        what = {"c": "complex", "b": "yes/no", "U": "text", "S": "text", "M": "datetime", "m": "timedelta",
                "O": "non-numeric or oversized"}.get(array.dtype.kind, str(array.dtype))
        raise ValueError(f"{name} must be a real number or an array of them, got {what} values: "
                         f"{_describe(value)}")
    if array.size == 0:
        raise ValueError(f"{name} must hold at least one number, got an empty array")
    return array.astype(float)


_SMALLEST_NORMAL = float(np.finfo(float).tiny)   # 2.2e-308: below it floats lose precision, then vanish


def number(name: str, value, *, positive: bool = True, allow_zero: bool = False,
           maximum: float | None = None):
    """Return ``value`` (a real number or an array of them) if it is finite and in range.

    Only real numbers count (Python ints and floats, NumPy scalars of any real dtype, ``Fraction``
    and ``Decimal``, or lists and arrays of them): booleans, strings, bytes, complex numbers,
    datetimes, None and object arrays are refused rather than converted. ``positive`` requires > 0
    (or >= 0 with ``allow_zero``); ``maximum`` is an inclusive bound. Raises ``ValueError`` naming
    ``name``, the value and what is allowed.

    The value returned is what to compute with: a Python ``float`` for one number (whatever its
    type: ``np.float16(4096)`` squared overflows, ``np.int8(5) * 1000`` raises OverflowError) and a
    ``float64`` array for several. Callers rebind their parameter to it.
    """
    fast = _number_fast(value, positive, allow_zero, maximum)
    if fast is not None:
        return fast
    if isinstance(value, (bool, np.bool_, str, bytes)) or value is None:
        raise ValueError(f"{name} must be a number, got {_describe(value)}")
    if isinstance(value, (numbers.Real, decimal.Decimal)) and not isinstance(value, np.ndarray):
        array = None
        as_float = _real_scalar(name, value)
        values = (as_float,)
    else:
        array = _real_array(name, value)
        values = array.ravel()
    finite = np.isfinite(values)
    if not np.all(finite):
        raise ValueError(f"{name} must be finite, got {_describe(value)}")
    tiny = np.not_equal(values, 0) & np.less(np.abs(values), _SMALLEST_NORMAL)
    if np.any(tiny):
        raise ValueError(f"{name} must be 0 or at least {_SMALLEST_NORMAL:.3g} in size (a subnormal number "
                         f"underflows in any arithmetic), got {_describe(value)}")
    if positive:
        low_ok = np.greater_equal(values, 0) if allow_zero else np.greater(values, 0)
        if not np.all(low_ok):
            bound = ">= 0" if allow_zero else "> 0"
            raise ValueError(f"{name} must be {bound}, got {_describe(value)}")
    if maximum is not None and not np.all(np.less_equal(values, maximum)):
        raise ValueError(f"{name} must be <= {maximum:g}, got {_describe(value)}")
    return as_float if array is None else array


def _number_fast(value, positive: bool, allow_zero: bool, maximum):
    """What :func:`number` returns for a plain float or int or a float64 array that passes every
    check, decided with the fewest operations (explorers call it ~150 times per slider move);
    None sends any other value, or one that fails a check, down the full path and its message."""
    kind = type(value)
    if kind is float or (kind is int and -2 ** 53 <= value <= 2 ** 53):
        v = float(value)
        if not math.isfinite(v) or (v != 0 and abs(v) < _SMALLEST_NORMAL):
            return None
        if positive and not (v >= 0 if allow_zero else v > 0):
            return None
        if maximum is not None and not v <= maximum:
            return None
        return v
    if kind is np.ndarray and value.dtype == np.float64 and value.size and positive and not allow_zero:
        low, high = value.min(), value.max()      # NaN makes both comparisons false
        if low >= _SMALLEST_NORMAL and high <= (np.inf if maximum is None else maximum) and high < np.inf:
            return value.copy()      # a copy, as the full path's astype gives: the caller's array stays theirs
    return None


def scalar(name: str, value, **limits) -> float:
    """One real number (not an array), checked as :func:`number` checks it with ``limits``."""
    if isinstance(value, (np.ndarray, list, tuple)) and np.ndim(value) != 0:
        raise ValueError(f"{name} must be a single number here, got {_describe(value)}")
    return float(number(name, value, **limits))


def finite_result(what: str, value, **inputs):
    """``value`` if every number in it is finite; else a ``ValueError`` naming the caller's ``inputs``.

    For results computed outside a :class:`~lecture_lib.formula.Formula` (which checks its own): a
    quotient of valid inputs can still overflow (1e308 x 10) or divide by an underflow (1 / 1e-320),
    and the learner should hear which inputs did it, not see ``inf`` or a ZeroDivisionError.
    """
    with np.errstate(all="ignore"):
        ok = np.all(np.isfinite(np.asarray(value, dtype=float)))
    if not ok:
        given = ", ".join(f"{name}={_describe(item)}" for name, item in inputs.items())
        raise ValueError(f"{what} has no finite value at {given} (an overflow or a division by a number too "
                         "close to 0): use inputs of ordinary size")
    return value


def fraction(name: str, value):
    """A number in (0, 1], e.g. an efficiency such as MFU."""
    return number(name, value, maximum=1.0)


COUNT_LIMIT = 10**12
"""The default upper bound of :func:`integer`: no count in the course comes near it, and anything
that sizes an array or a loop passes its own, much smaller ``maximum``."""


def integer(name: str, value, *, minimum: int = 1, maximum: int | None = COUNT_LIMIT) -> int:
    """A whole number in ``[minimum, maximum]`` as a Python ``int`` (4.0, ``np.int8(4)`` and
    ``Decimal(4)`` are accepted as 4; bools, text, complex and fractions are refused). ``maximum``
    bounds every count or size, so nothing hangs or exhausts memory. Compute with the returned int,
    never the value passed: NumPy's fixed-width integers overflow."""
    for bound, limit in (("minimum", minimum), ("maximum", maximum)):   # the caller's own bounds
        if not (limit is None and bound == "maximum") and (
                isinstance(limit, (bool, np.bool_)) or not isinstance(limit, numbers.Integral)):
            raise ValueError(f"{bound} (the allowed range of {name}) must be a whole number"
                             f"{' or None' if bound == 'maximum' else ''}, got {_describe(limit)}")
    if (isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, decimal.Decimal))
            or isinstance(value, np.ndarray)):
        raise ValueError(f"{name} must be a whole number, got {_describe(value)}")
    as_float = _real_scalar(name, value)
    if not math.isfinite(as_float) or as_float != int(value):
        raise ValueError(f"{name} must be a whole number, got {_describe(value)}")
    if int(value) < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {_describe(value)}")
    if maximum is not None and int(value) > maximum:
        raise ValueError(f"{name} must be <= {maximum:,}, got {_describe(value)}")
    return int(value)


def boolean(name: str, value) -> bool:
    """A real flag: ``True`` or ``False`` (NumPy's too). Text such as ``"False"``, numbers and None
    are refused, since ``bool("False")`` is True."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {_describe(value)}")
    return bool(value)


def names(name: str, value) -> tuple[str, ...]:
    """A list or tuple of names (preset names, formats). A bare string is refused, since it would
    be read one letter at a time."""
    if not isinstance(value, (list, tuple)) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"{name} must be a list or tuple of names, got {_describe(value)}")
    return tuple(value)


def last_chapter() -> int:
    """The highest chapter number of the course: the last ``practice/problems/chNN.py`` module
    (so a new chapter is accepted everywhere as soon as its problems exist). The file names are read
    from disk, without importing the practice room."""
    import os
    import re

    problems = os.path.join(os.path.dirname(os.path.abspath(__file__)), "practice", "problems")
    numbers = [int(m.group(1)) for m in (re.fullmatch(r"ch(\d\d)\.py", f) for f in os.listdir(problems)) if m]
    return max(numbers, default=0)


def chapter(name: str, value) -> int | None:
    """A chapter number (0 to :func:`last_chapter`) or None for every chapter."""
    return None if value is None else integer(name, value, minimum=0, maximum=last_chapter())


def choice(name: str, value, allowed):
    """``value`` if it is one of ``allowed``; otherwise a ``ValueError`` listing them."""
    allowed = list(allowed)
    if isinstance(value, np.ndarray) or not any(value is option or (isinstance(value, type(option)) and value == option)
                                                 for option in allowed):
        raise ValueError(f"{name} must be one of {allowed}, got {_describe(value)}")
    return value


def reports_inputs(function=None, *, may_be_infinite: bool = False):
    """Decorator for a public function: whatever goes wrong inside is told in the caller's words.

    Valid inputs can still combine badly (1e308 x 10 overflows, 1 / 1e-320 divides by an underflow),
    and a helper deep inside then fails with its own names ("N_total must be > 0") or returns inf.
    The decorated function instead raises ``ValueError`` naming the caller's numeric inputs when

    - it raises ``ZeroDivisionError``, ``OverflowError`` or ``FloatingPointError``;
    - it raises a ``ValueError`` that names none of its own parameters;
    - its result holds a number that is not finite (unless ``may_be_infinite``: inf is then allowed,
      NaN is still refused).
    """
    import functools
    import inspect
    import re

    def decorate(inner):
        signature = inspect.signature(inner)
        names = [name for name, p in signature.parameters.items() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]

        def given(args, kwargs) -> str:
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError:
                return ""
            bound.apply_defaults()
            shown = [f"{name}={_describe(value)}" for name, value in bound.arguments.items()
                     if name in names and _numeric(value)]
            return ", ".join(shown)

        def names_a_parameter(text: str) -> bool:
            return any(re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", text) for name in names)

        @functools.wraps(inner)
        def wrapper(*args, **kwargs):
            try:
                with np.errstate(over="ignore", divide="ignore", invalid="ignore", under="ignore"):
                    result = inner(*args, **kwargs)
            except (ZeroDivisionError, OverflowError, FloatingPointError) as error:
                raise ValueError(f"{inner.__name__}() has no finite value at {given(args, kwargs)} ({error}): "
                                 "use inputs of ordinary size") from None
            except ValueError as error:
                text = str(error)   # a Formula's "no finite real value" lists its own inputs: add the caller's
                if names_a_parameter(text) and "no finite" not in text or text.startswith(f"{inner.__name__}()"):
                    raise
                raise ValueError(f"{inner.__name__}() cannot be computed at {given(args, kwargs)}: {text}") from None
            if _has_bad_number(result, may_be_infinite):
                raise ValueError(f"{inner.__name__}() has no finite value at {given(args, kwargs)} (an overflow or "
                                 "a division by a number too close to 0): use inputs of ordinary size")
            return result

        return wrapper

    return decorate if function is None else decorate(function)


def _numeric(value) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, (numbers.Real, decimal.Decimal)):
        return True
    return isinstance(value, np.ndarray) and value.dtype.kind in "iuf"


def _has_bad_number(result, may_be_infinite: bool) -> bool:
    """True when a result (a number, an array, or a dict/list/tuple of them) holds a NaN, or an
    infinity where none may be; arrays are checked whole, not element by element."""
    if isinstance(result, np.ndarray):
        if result.dtype.kind != "f":
            return False
        return bool(np.isnan(result).any() or (not may_be_infinite and np.isinf(result).any()))
    if isinstance(result, (bool, np.bool_, str, bytes)) or result is None:
        return False
    if isinstance(result, numbers.Real):
        try:
            value = float(result)
        except OverflowError:
            return not may_be_infinite
        return math.isnan(value) or (math.isinf(value) and not may_be_infinite)
    if isinstance(result, dict):
        return any(_has_bad_number(item, may_be_infinite) for item in result.values())
    if isinstance(result, (list, tuple)):
        return any(_has_bad_number(item, may_be_infinite) for item in result)
    return False


def called_as(formula, names: dict) -> dict:
    """The part of ``names`` (Formula input -> the caller's parameter) that ``formula`` has, for its
    ``called_as``: one mapping can then serve every Formula a function calls."""
    return {key: value for key, value in names.items() if key in formula.input_names}
