# SPDX-License-Identifier: GPL-3.0-or-later
"""What the solver accepts (contract D1, D4) and its supported range.

A point is 3 real numbers in order: a tuple, list, ``mathutils.Vector``, 1-D numpy array, other
sequence or one-shot iterator. Text, bytes-like objects, mappings and sets iterate but are not
points, and a numpy masked array's mask cannot be honoured. A real number is an int, float, bool,
numpy real, Fraction or Decimal: not None, text, bytes or complex.

Supported range (contract D4): coordinates, lengths, tolerance and twist at most ``LIMIT`` (1e40)
in size, ``a + b`` at least ``TINY`` (1e-30), and a tolerance below ``TINY`` counts as ``TINY``
(D2). Blender's float32 values lie far inside it, and inside it no square, product or quotient
the solve takes leaves the normal float range, so D5 and D8 hold with no rescaling.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Set
from typing import Any

LIMIT = 1e40
TINY = 1e-30

_NOT_REAL = (str, bytes, bytearray, memoryview, complex)
_NOT_POINT = (str, bytes, bytearray, memoryview, Mapping, Set)


def is_masked(value: Any) -> bool:
    """True for a numpy masked array or numpy's masked constant (numpy is not imported for it)."""
    ma = sys.modules.get("numpy.ma")
    return ma is not None and isinstance(value, ma.MaskedArray)


def not_a_point(value: Any) -> bool:
    """True for values that iterate but are not points (text, bytes, mappings, sets, masked)."""
    return isinstance(value, _NOT_POINT) or is_masked(value)


def real(value: Any, name: str, minimum: float = -LIMIT, maximum: float = LIMIT) -> float:
    """``value`` as a float from ``minimum`` to ``maximum``, else ValueError naming ``name``."""
    if type(value) is not float:
        if value is None or isinstance(value, _NOT_REAL) or is_masked(value):
            raise ValueError(f"{name} must be a real number, got {value!r}")
        try:
            value = float(value)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"{name} must be a real number, got {value!r}") from None
    if not minimum <= value <= maximum:
        raise ValueError(f"{name} must be finite and from {minimum:g} to {maximum:g}, got {value!r}")
    return value


def point(value: Any, name: str) -> tuple[float, float, float]:
    """``value`` as 3 floats (contract D1), else ValueError naming ``name``."""
    if type(value) not in (tuple, list) and not_a_point(value):
        raise ValueError(f"{name} must be 3 real numbers (not text, bytes, a mapping, a set, a masked array)")
    try:
        x, y, z = value
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be 3 real numbers, got {value!r}") from None
    if type(x) is float and type(y) is float and type(z) is float and abs(x) + abs(y) + abs(z) <= LIMIT:
        return x, y, z  # the common case, checked at once (a NaN or inf fails the sum's test)
    return real(x, name), real(y, name), real(z, name)


def settings(tolerance: Any, twist: Any, softness: Any) -> tuple[float, float, float]:
    """The keyword settings, checked in this order: tolerance >= 0 (below TINY it is TINY), twist,
    0 <= softness <= 1."""
    if type(tolerance) is float and type(twist) is float and type(softness) is float:
        if TINY <= tolerance <= LIMIT and twist == 0.0 and softness == 0.0:
            return tolerance, 0.0, 0.0  # the common case: the defaults
    tolerance = max(real(tolerance, "tolerance", 0.0), TINY)
    return tolerance, real(twist, "twist"), real(softness, "softness", 0.0, 1.0)
