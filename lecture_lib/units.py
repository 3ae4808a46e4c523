"""Format SI quantities for people: ``37e9`` params -> "37 B params", ``8e12`` B/s -> "8 TB/s".

The library computes in SI units (seconds, bytes, FLOP/s, bytes/s, dollars); only this module
turns numbers into text, at the edge (DESIGN.md, "Conventions").
"""

from __future__ import annotations

import math
import numbers
import re

_DECIMAL = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")]
_COUNT = [(1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k"), (1.0, "")]


def _checked(value, digits, unit: str = "") -> tuple[float, int]:
    """The value as a float and the digits as an int, after refusing what no formatter can show: not
    a single real number, NaN, a digit count outside 1-15, a unit that is not text. Infinite values
    are shown as "inf" (a balance batch past the Goldilocks context is one)."""
    from . import validate

    if isinstance(value, bool) or not isinstance(value, numbers.Real):   # NumPy's bool is not Real
        raise ValueError(f"value must be a single real number, got {validate._describe(value)}")
    if not isinstance(unit, str):
        raise ValueError(f"unit must be text, got {validate._describe(unit)}")
    try:
        value = float(value)
    except OverflowError:
        raise ValueError(f"value must be a number of ordinary size, got {validate._describe(value)}") from None
    if math.isnan(value):
        raise ValueError("value must be a number, got NaN")
    return value, validate.integer("digits", digits, maximum=15)


def _significant(x: float, digits: int = 3) -> str:
    if x == 0:
        return "0"
    text = f"{x:.{digits}g}"
    if "e" not in text:
        return text
    if abs(x) >= 1:                       # 1.23e+05 -> "123,450": whole numbers stay whole
        return f"{x:,.0f}"
    if abs(x) >= 1e-6:                    # 4e-05 -> "0.00004", never a bare "0"
        decimals = digits - 1 - math.floor(math.log10(abs(x)))
        return f"{x:.{decimals}f}".rstrip("0").rstrip(".")
    return power_of_ten(x, digits=digits)  # below a millionth: "3 × 10⁻⁹", never e-notation


def _scaled(value: float, scale, unit: str, digits: int) -> str:
    if not math.isfinite(value):
        return f"{value} {unit}".strip()
    magnitude = abs(value)
    for i, (factor, prefix) in enumerate(scale):
        if magnitude >= factor:
            text = _significant(value / factor, digits)
            if i > 0 and abs(float(text.replace(",", ""))) >= scale[i - 1][0] / factor:   # 999.8 M rounds to 1 B
                factor, prefix = scale[i - 1]
                text = _significant(value / factor, digits)
            return f"{text} {prefix}{unit}".strip()
    return f"{_significant(value, digits)} {unit}".strip()


def count(value: float, unit: str = "", digits: int = 3) -> str:
    """A count with k/M/B/T: ``count(37e9, "params")`` -> "37 B params"; from a thousand trillion on, a power
    of ten (``count(2.6e15, "tokens")`` -> "2.6 × 10¹⁵ tokens", not "2,600 T tokens")."""
    value, digits = _checked(value, digits, unit)
    if math.isfinite(value) and abs(value) >= 1e15 * (1 - 0.5 * 10 ** -digits):
        return power_of_ten(value, unit, digits)
    text = _scaled(value, _COUNT, "", digits)
    return f"{text} {unit}".strip() if unit else text


def bytes_(value: float, digits: int = 3) -> str:
    """Decimal bytes, as vendors state HBM: ``bytes_(288e9)`` -> "288 GB"."""
    value, digits = _checked(value, digits)
    return _scaled(value, _DECIMAL, "B", digits)


def bandwidth(value: float, digits: int = 3) -> str:
    """Bytes per second: ``bandwidth(8e12)`` -> "8 TB/s"."""
    value, digits = _checked(value, digits)
    return _scaled(value, _DECIMAL, "B/s", digits)


def flops(value: float, digits: int = 3) -> str:
    """FLOP per second: ``flops(989e12)`` -> "989 TFLOP/s"."""
    value, digits = _checked(value, digits)
    return _scaled(value, _DECIMAL, "FLOP/s", digits)


def seconds(value: float, digits: int = 3) -> str:
    """A duration in the unit that reads best: "14.4 ms", "2.1 s", "830 µs"."""
    value, digits = _checked(value, digits)
    magnitude = abs(value)
    if not math.isfinite(value):
        return f"{value} s"
    if magnitude >= 1 or magnitude == 0:
        return f"{_significant(value, digits)} s"
    if magnitude >= 1e-3:
        return f"{_significant(value * 1e3, digits)} ms"
    if magnitude >= 1e-6:
        return f"{_significant(value * 1e6, digits)} µs"
    return f"{_significant(value * 1e9, digits)} ns"


def dollars(value: float, digits: int = 3) -> str:
    """Money: ``dollars(0.33)`` -> "$0.33", ``dollars(1.2)`` -> "$1.20" (cents always, from a cent to
    $100); a fraction of a cent keeps two significant digits (``dollars(4.567e-5)`` -> "$0.000046")."""
    value, digits = _checked(value, digits)
    if round(value, 2) >= 100:
        return f"${value:,.0f}"
    if 0 < abs(value) < 0.001:                 # a fraction of a cent: two digits say enough ("$0.00063")
        digits = min(digits, 2)
    text = _significant(value, digits)
    if abs(value) >= 0.01 and "×" not in text:
        decimals = len(text.partition(".")[2])
        text = f"{value:.{max(2, decimals)}f}"
    return f"${text}"


def number(value: float, digits: int = 3) -> str:
    """A plain number a learner reads: at most ``digits`` significant digits below 1,000, whole with
    thousands separators from 1,000 (``number(1811.34)`` -> "1,811", ``number(10.025, 4)`` -> "10.03"),
    never e-notation."""
    value, digits = _checked(value, digits)
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return _significant(value, digits)


def percent(value: float, digits: int = 2) -> str:
    """A fraction as a percentage a learner can read at any size: whole from 10% (``percent(0.43)`` -> "43%"),
    ``digits`` significant digits below ("4.5%", "0.12%"), so a small share is never shown as "0%"."""
    value, digits = _checked(value, digits, "%")
    share = 100 * value
    if share == 0 or abs(share) >= 10:
        return f"{share:,.0f}%"
    return f"{_significant(share, digits)}%"


def counted(n: float, noun: str, plural: str | None = None) -> str:
    """A whole count with its noun agreeing: ``counted(1, "GPU")`` -> "1 GPU", ``counted(1024, "GPU")``
    -> "1,024 GPUs" (``plural`` for nouns that do not just take an s)."""
    value, _ = _checked(n, 3)
    if not isinstance(noun, str) or not noun:
        raise ValueError(f"noun must be a word, got {noun!r}")
    return f"{value:,.0f} {noun if round(value) == 1 else (plural or noun + 's')}"


def factor(value: float, digits: int = 3) -> str:
    """A ratio as a factor: ``factor(157.18)`` -> "157×", ``factor(19.45)`` -> "19.4×",
    ``factor(1.25)`` -> "1.25×": ``digits`` significant digits, whole above 100, never e-notation."""
    value, digits = _checked(value, digits, "factor")
    if abs(value) >= 100:
        return f"{value:,.0f}×"
    return f"{_significant(value, digits)}×"


def rate(value: float, unit: str = "tokens/s", digits: int = 3) -> str:
    """A rate such as throughput: ``rate(128e3)`` -> "128 k tokens/s"."""
    value, digits = _checked(value, digits, unit)
    return count(value, unit, digits)


def tokens(value: float) -> str:
    """A token count as people write it: ``tokens(1024)`` -> "1,024 tokens"; above a million,
    "1.05 M tokens"."""
    value, _ = _checked(value, 3)
    if abs(value) >= 1e6:
        return count(value, "tokens")
    return f"{value:,.0f} {'token' if round(value) == 1 else 'tokens'}"


def whole(value: float) -> str:
    """An integer count with thousands separators: ``whole(2499.6)`` -> "2,500"."""
    value, _ = _checked(value, 3)
    return f"{value:,.0f}"


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
_PLAIN_DIGITS = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹−", "-0123456789-")
_WRITTEN_POWER = re.compile(r"([0-9.]+)[×x*]10(?:\^|\*\*)?([-−⁻]?[0-9⁰¹²³⁴⁵⁶⁷⁸⁹]+)")


def e_notation(text: str) -> str:
    """The reverse of :func:`power_of_ten` for a typed number without spaces: "5×10¹⁵", "5x10^15" or
    "5*10**15" -> "5e15", which ``float`` reads; any other text is returned unchanged."""
    if not isinstance(text, str):
        from . import validate

        raise ValueError(f"text must be a typed number, got {validate._describe(text)}")
    written = _WRITTEN_POWER.fullmatch(text)
    return f"{written.group(1)}e{written.group(2).translate(_PLAIN_DIGITS)}" if written else text


def plural(count: int, word: str, words: str | None = None) -> str:
    """A whole count with its noun in the right number: ``plural(1, "round")`` -> "1 round",
    ``plural(3, "round")`` -> "3 rounds", ``plural(1_000, "GPU")`` -> "1,000 GPUs"."""
    from . import validate

    count = validate.integer("count", count, minimum=0)
    for name, text in (("word", word), ("words", words)):
        if not isinstance(text, str) and not (name == "words" and text is None):
            raise ValueError(f"{name} must be text, got {validate._describe(text)}")
    return f"{count:,} {word if count == 1 else (words or word + 's')}"


def ten_to_the(exponent: int) -> str:
    """10 to a whole power as prose writes it: ``ten_to_the(12)`` -> "10¹²" (never "10^12" or 1e12)."""
    from . import validate

    exponent = validate.integer("exponent", exponent, minimum=-10**9, maximum=10**9)
    return f"10{str(exponent).translate(_SUPERSCRIPT)}"


def power_of_ten(value: float, unit: str = "", digits: int = 3) -> str:
    """A number too large or too small for prefixes, as people write it in prose, never in
    e-notation: ``power_of_ten(4.27e25, "FLOPs")`` -> "4.27 × 10²⁵ FLOPs", ``power_of_ten(3e-9)`` ->
    "3 × 10⁻⁹". Between 0.001 and 100,000 the plain number is shown ("0.25", "1,234")."""
    value, digits = _checked(value, digits, unit)
    if not math.isfinite(value) or value == 0:
        text = "0" if value == 0 else str(value)
    elif 1e-3 <= abs(value) < 1e5:
        text = f"{value:,.0f}" if abs(value) >= 1000 else _significant(value, digits)
    else:
        exponent = math.floor(math.log10(abs(value)))
        mantissa = float(f"{value / 10 ** exponent:.{digits - 1}f}")
        if abs(mantissa) >= 10:                      # 9.999e25 rounds up to 10.0 × 10²⁵
            mantissa, exponent = mantissa / 10, exponent + 1
        head = f"{mantissa:.{digits - 1}f}".rstrip("0").rstrip(".")
        text = f"{head} × {ten_to_the(exponent)}"
    return f"{text} {unit}".strip()


_LONG = [(365.25 * 86400, "years", "year"), (86400, "days", "day"), (3600, "h", "h"), (60, "min", "min")]


def duration(value: float, digits: int = 2) -> str:
    """A duration that may run long: "23 h", "3.1 days", "2.5 years"; below a minute as
    :func:`seconds` ("14.4 ms")."""
    value, digits = _checked(value, digits)
    if not math.isfinite(value) or abs(value) < 60:
        return seconds(value, 3)
    for factor, plural, single in _LONG:
        if abs(value) >= factor:
            amount = value / factor
            text = _significant(amount, digits) if amount < 100 else f"{amount:,.0f}"
            return f"{text} {single if text == '1' else plural}"
    return seconds(value)
