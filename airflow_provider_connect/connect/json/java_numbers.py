"""Numbers written as Java writes them, so JSON output matches Kafka's JsonConverter byte
for byte.

Jackson writes a ``double`` with ``Double.toString`` and a ``float`` with
``Float.toString``. Since JDK 19 both print the shortest digits that read back to the same
value (as Python's ``repr`` finds them), except that when one digit would do, Java prints
the closest two-digit decimal instead (``4.9E-324`` rather than ``5E-324``; this only
changes subnormal values). The notation is plain when the magnitude is in [1e-3, 1e7) and
``d.dddE±n`` otherwise, always with a fractional digit. Non-finite
values are written as the strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"`` (Jackson's
default ``WRITE_NAN_AS_STRINGS``).
"""

from __future__ import annotations

import decimal
import math
import struct

_PACK_FLOAT = struct.Struct("<f")
NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _non_finite(x: float) -> str:
    if math.isnan(x):
        return '"NaN"'
    return '"Infinity"' if x > 0 else '"-Infinity"'


def _significant_digits(text: str) -> int:
    return len(decimal.Decimal(text).normalize().as_tuple().digits)


def _java_notation(shortest: str) -> str:
    """``shortest`` (any decimal text of the shortest digits) in Java's notation."""
    sign, digit_tuple, exponent = decimal.Decimal(shortest).as_tuple()
    assert isinstance(exponent, int)  # the text of a finite number
    digits = "".join(map(str, digit_tuple))
    sci_exp = exponent + len(digits) - 1
    digits = digits.rstrip("0") or "0"
    prefix = "-" if sign else ""
    if -3 <= sci_exp < 7:
        if sci_exp >= 0:
            whole = digits[: sci_exp + 1].ljust(sci_exp + 1, "0")
            return f"{prefix}{whole}.{digits[sci_exp + 1 :] or '0'}"
        return f"{prefix}0.{'0' * (-sci_exp - 1)}{digits}"
    return f"{prefix}{digits[0]}.{digits[1:] or '0'}E{sci_exp}"


def format_double(x: float) -> str:
    """The JSON text Jackson writes for the double ``x``."""
    if not math.isfinite(x):
        return _non_finite(x)
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    shortest = repr(x)
    if _significant_digits(shortest) == 1:
        shortest = f"{x:.1e}"  # the closest two-digit decimal; it reads back to x too
    return _java_notation(shortest)


def to_float32(x: float) -> float:
    """``x`` rounded to the nearest float32 (infinite beyond its range)."""
    try:
        rounded: float = _PACK_FLOAT.unpack(_PACK_FLOAT.pack(x))[0]
        return rounded
    except OverflowError:
        return math.copysign(math.inf, x)


def format_float(x: float) -> str:
    """The JSON text Jackson writes for ``x`` as a Java float (float32)."""
    f = to_float32(x)
    if not math.isfinite(f):
        return _non_finite(f)
    if f == 0:
        return "-0.0" if math.copysign(1.0, f) < 0 else "0.0"
    precision = next(p for p in range(1, 10) if to_float32(float(f"{f:.{p}g}")) == f)
    return _java_notation(f"{f:.{max(precision, 2)}g}")
