# SPDX-License-Identifier: GPL-3.0-or-later
"""Input checks for the scalar solver: the slow path that names the bad argument (contract D4).

A point is an ordered collection of exactly 3 real numbers: a tuple, a list, a
``mathutils.Vector``, a 1-D numpy array, any other sequence, or a one-shot iterator (read once).
Not a point, though iterable: text and bytes-like objects (their characters or byte values),
mappings (their keys) and sets (no order), and numpy masked arrays (the solver cannot honour a
mask). A real number is an int, a float, a bool, a numpy real scalar, a Fraction, a Decimal or
anything else ``float()`` accepts, except text, bytes-like objects, complex numbers and numpy's
masked constant.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Set
from itertools import islice
from typing import Any

Inputs = tuple[float, float, float, float, float, float, float, float, float, float, float, float]

_NOT_REAL = (str, bytes, bytearray, memoryview, complex)
NOT_POINT = (str, bytes, bytearray, memoryview, Mapping, Set)


def is_masked(value: Any) -> bool:
    """True for a numpy masked array or numpy's masked constant (without importing numpy)."""
    ma = sys.modules.get("numpy.ma")
    return ma is not None and isinstance(value, ma.MaskedArray)


def not_a_point(value: Any) -> str | None:
    """Why value, although perhaps iterable, is not a point; None if it may be one."""
    if isinstance(value, NOT_POINT):
        return "text, bytes, mappings and sets are not points"
    if is_masked(value):
        return "a masked array's mask cannot be honoured"
    return None


def not_a_real(value: Any) -> bool:
    """True for values float() would take but that are not real numbers (text, bytes, complex,
    None, numpy's masked constant)."""
    return value is None or isinstance(value, _NOT_REAL) or is_masked(value)


def _real(value: Any, name: str) -> float:
    if not_a_real(value):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be a real number, got {value!r}") from None


def _point(value: Any, name: str) -> tuple[float, float, float]:
    reason = not_a_point(value)
    if reason is not None:
        raise ValueError(f"{name} must be a 3-sequence of real numbers ({reason}), got {value!r}")
    try:
        # At most 4 items: enough to tell a wrong count, and an endless iterator cannot hang.
        coordinates = tuple(islice(value, 4))
    except TypeError:
        raise ValueError(f"{name} must be a 3-sequence of real numbers, got {value!r}") from None
    if len(coordinates) != 3:
        try:
            count = str(len(value))
        except TypeError:  # an iterator: now partly consumed
            count = "more than 3" if len(coordinates) > 3 else str(len(coordinates))
        raise ValueError(f"{name} must have 3 coordinates, got {count}: {value!r}")
    x, y, z = (_real(c, name) for c in coordinates)
    if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
        raise ValueError(f"{name} must be finite, got {(x, y, z)!r}")
    return x, y, z


def _length(value: Any, name: str) -> float:
    length = _real(value, name)
    if not math.isfinite(length) or length < 0.0:
        raise ValueError(f"{name} must be a finite length >= 0, got {length!r}")
    return length


def validated(
    root: Any, target: Any, pole_hint: Any, upper_length: Any, lower_length: Any, tolerance: Any
) -> Inputs:
    """The twelve inputs as floats, or ValueError naming the first bad argument (contract D4).

    Order of the checks: root, target, pole_hint, upper_length, lower_length, both lengths zero,
    tolerance.
    """
    rx, ry, rz = _point(root, "root")
    tx, ty, tz = _point(target, "target")
    px, py, pz = _point(pole_hint, "pole_hint")
    a = _length(upper_length, "upper_length")
    b = _length(lower_length, "lower_length")
    if a == 0.0 and b == 0.0:
        raise ValueError("upper_length and lower_length are both 0: there is no chain to solve")
    tol = _real(tolerance, "tolerance")
    if not math.isfinite(tol) or tol < 0.0:
        raise ValueError(f"tolerance must be finite and >= 0, got {tol!r}")
    return rx, ry, rz, tx, ty, tz, px, py, pz, a, b, tol
