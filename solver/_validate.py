# SPDX-License-Identifier: GPL-3.0-or-later
"""Input checks for the scalar solver: the slow path that names the bad argument (SPEC D4)."""

from __future__ import annotations

import math
from typing import Any

Inputs = tuple[float, float, float, float, float, float, float, float, float, float, float, float]

_NOT_REAL = (str, bytes, bytearray, complex)


def _real(value: Any, name: str) -> float:
    if isinstance(value, _NOT_REAL):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be a real number, got {value!r}") from None


def _point(value: Any, name: str) -> tuple[float, float, float]:
    if isinstance(value, _NOT_REAL):
        raise ValueError(f"{name} must be a 3-sequence of real numbers, got {value!r}")
    try:
        coordinates = tuple(value)
    except TypeError:
        raise ValueError(f"{name} must be a 3-sequence of real numbers, got {value!r}") from None
    if len(coordinates) != 3:
        raise ValueError(f"{name} must have 3 coordinates, got {len(coordinates)}: {value!r}")
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
    """The twelve inputs as floats, or ValueError naming the first bad argument (SPEC D4).

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
