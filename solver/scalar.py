# SPDX-License-Identifier: GPL-3.0-or-later
"""Scalar two-bone IK solve on plain Python floats (docs/contract.md, D1-D8).

Pure Python: no numpy, no bpy, no mathutils. The common case (float inputs of everyday size,
points given as tuples, lists or mathutils.Vector) runs inline below; anything else (bad input,
other point or number types, tolerance below 2**-100, magnitudes beyond 2**200) goes to the
checked path in solver/_validate.py and solver/_scaled.py, which validates and gives identical
numbers wherever both apply.
"""

from __future__ import annotations

import sys
from math import sqrt
from typing import Any, NamedTuple, Protocol

from ._limits import NEAR_LINE, NORM2_HIGH, REACH_HIGH, REACH_LOW, TOLERANCE_LOW
from ._pole import fallback_axis, near_line_pole, two_diff
from ._scaled import solve_scaled
from ._validate import validated

Vector3 = tuple[float, float, float]


class Point(Protocol):
    """Three real coordinates: a tuple, a list, a mathutils.Vector, a numpy array... (contract D1)."""

    def __len__(self) -> int: ...

    def __getitem__(self, index: int, /) -> float: ...


class TwoBoneIKResult(NamedTuple):
    """The solved chain (contract D1), in the same space and units as the inputs.

    Attributes
    ----------
    joint : tuple of 3 float
        Position of the joint (knee, elbow); ``|joint - root| = upper_length``.
    end : tuple of 3 float
        Position of the chain's end (ankle, wrist); ``|end - joint| = lower_length``. It lies on
        the ray from the root towards the target, at the distance clamped to
        ``[|a - b|, a + b]``.
    reachable : bool
        True when ``|a - b| - eps <= |target - root| <= a + b + eps`` with
        ``eps = tolerance * (a + b)`` (contract D2).
    """

    joint: Vector3
    end: Vector3
    reachable: bool


_new_result = tuple.__new__  # skips the named tuple's Python-level __new__ (hot path)

# Point types the fast path unpacks itself; any other goes to the checked path, which rejects
# iterables that are not points (bytes, str, mappings, sets: solver/_validate.py). The solver
# imports no mathutils: mathutils.Vector joins the first time the checked path sees one. Its
# coordinates are floats, on which both paths give identical bits, so results do not depend on
# whether it has joined yet (contract D7).
_FAST_POINTS: set[type] = {tuple, list}


def solve_two_bone_ik(
    root: Point,
    target: Point,
    pole_hint: Point,
    upper_length: float,
    lower_length: float,
    *,
    tolerance: float = 1e-9,
) -> TwoBoneIKResult:
    """Solve a two-bone chain root -> joint -> end so the end reaches the target.

    Implements contract "Function solveTwoBoneIK", "Unreachable targets clamp", "Degenerate inputs"
    and decisions D1-D5, D7, D8. The solve is space-agnostic (contract D6): every point must be in
    the same frame, and the result comes back in it; the Blender side passes armature space.
    Units are the inputs' own (Blender units = metres); the solve is scale-invariant.

    Parameters
    ----------
    root : sequence of 3 real numbers
        The chain's root (hip, shoulder). A point is a tuple, list, ``mathutils.Vector``, numpy
        array, other sequence or one-shot iterator of exactly 3 real numbers (int, float, bool,
        numpy real, Fraction, Decimal); see Notes.
    target : sequence of 3 real numbers
        The point the end should reach.
    pole_hint : sequence of 3 real numbers
        A point (not a direction) on the side the joint bends towards.
    upper_length : float
        a, the root-joint bone's length, >= 0. Bones never stretch.
    lower_length : float
        b, the joint-end bone's length, >= 0; not both lengths 0.
    tolerance : float, keyword-only, default 1e-9
        Relative tolerance, >= 0: ``eps = tolerance * (a + b)`` (contract D2). Blender stores
        float32, so the Blender side passes 1e-6.

    Returns
    -------
    TwoBoneIKResult
        ``(joint, end, reachable)``, 3-tuples of float and a bool, in the inputs' frame.

    Raises
    ------
    ValueError
        Naming the argument (contract D4): a point that is not 3 real numbers (text, bytes, a
        mapping, a set or a masked array included) or is not finite, a length that is negative
        or not finite, both lengths 0, a tolerance that is negative or not finite. Also when the
        solved chain itself would lie outside the float range (only possible with a root or
        lengths near 1e308). Nothing else raises.

    Notes
    -----
    - forward is the unit vector root -> target; within eps of the root it is +X and d = 0.
    - d = |target - root| is clamped to ``[|a - b|, a + b]``; a clamped chain is exactly
      straight (too far) or folded (too close) along forward.
    - The pole direction is the pole hint's part perpendicular to forward; when it is within
      ``tolerance * max(|pole_hint - root|, a + b)`` of the line, the axis least aligned with
      forward (ties X, Y, Z), made perpendicular (contract D3).
    - With equal bones and the target at the root, the joint is ``root + a * pole`` (contract D5).
    - reachable implies ``|end - target| <= eps``, or ``<= 3 eps`` when the target is within eps
      of the root (forward is then +X whatever the target's direction; contract D5 says 2 eps).
    - Accuracy (contract D8): within 1e-10 * max(a + b, |root|) of exact arithmetic on the same
      binary inputs, 5e-8 within 1e-6 of full extension or fold. The height comes from Heron's
      formula in Kahan's form, and a pole hint near the line from an exact cross product.
    - Threshold decisions (at the root, on the line, reachable) are made in floating point, so
      inputs within a few ulps of a threshold may fall on either side of it.
    - Deterministic and stateless (contract D7): same inputs, same bits.
    - Points: text, bytes-like objects, mappings and sets are iterable but not points (their
      characters, byte values or keys, sets in no defined order), and a numpy masked array's
      mask cannot be honoured: all are rejected, as is a coordinate that is None, text, bytes,
      complex or numpy's masked constant. Tuples, lists and ``mathutils.Vector`` of floats are
      solved inline; any other point type is validated first (the same numbers, slower). Ints
      and Fractions in a tuple or list are differenced and squared exactly inline, so past 2**26
      (or for fractions that are not binary) the last bits may differ from the same values
      given as floats, both within D8.
    - Every finite input solves, bar a chain beyond the float range. Beyond the clamp only the
      directions of target - root and pole_hint - root matter, and each is scaled by its own
      power of two, as are the chain's sides, so a chain of 1e-300 next to a target or pole
      hint at 1e308 keeps contract D5 and D8.
    - Subnormal chains (decision): floats are spaced 2**-1074 (about 4.9e-324) apart near 0,
      so contract D5's 1e-12 * max(a + b, |root|) cannot hold once it is below that spacing (a + b
      and |root| under about 1e-311). For every chain the bone lengths hold to
      1e-12 * max(a + b, |root|) + 4 * 2**-1074, and reachable implies |end - target| <= 3 eps
      + 1e-12 * max(a + b, |root|) + 4 * 2**-1074; eps = tolerance * (a + b) is itself rounded
      (to 0 when it underflows) and the threshold decisions use it as rounded. The extra
      4 * 2**-1074 is below 1e-12 * (a + b) from a + b = 2**-1022 (about 2.2e-308) up, where D5
      and D8 hold as stated.

    Examples
    --------
    A 5-5-6 triangle: the knee bends 4 units towards the pole hint.

    >>> solve_two_bone_ik((0, 0, 0), (6, 0, 0), (0, 1, 0), 5.0, 5.0)
    TwoBoneIKResult(joint=(3.0, 4.0, 0.0), end=(6.0, 0.0, 0.0), reachable=True)

    A target out of reach: the chain straightens towards it.

    >>> solve_two_bone_ik((0, 0, 0), (5, 0, 0), (0, 1, 0), 1.0, 1.0)
    TwoBoneIKResult(joint=(1.0, 0.0, 0.0), end=(2.0, 0.0, 0.0), reachable=False)
    """
    # Fast path for float inputs of everyday size in tuples, lists or Vectors. A NaN or inf
    # anywhere makes dd, qq or reach nan or inf, and other number types fail the type test or
    # raise: the checked path then validates (naming the argument) and solves on scaled values.
    fast = False
    if type(root) in _FAST_POINTS and type(target) in _FAST_POINTS and type(pole_hint) in _FAST_POINTS:
        try:
            # (Unpacking goes through __getitem__: mathutils.Vector's stubs declare no __iter__.)
            rx, ry, rz = root  # type: ignore[misc]
            tx, ty, tz = target  # type: ignore[misc]
            px, py, pz = pole_hint  # type: ignore[misc]
            a = upper_length
            b = lower_length
            dx, dy, dz = tx - rx, ty - ry, tz - rz
            qx, qy, qz = px - rx, py - ry, pz - rz
            dd = dx * dx + dy * dy + dz * dz
            qq = qx * qx + qy * qy + qz * qz
            reach = a + b
            # With tolerance >= TOLERANCE_LOW and reach >= REACH_LOW, eps >= 2**-300: a target or
            # pole hint so close to the root that its square underflows is then surely within it.
            # All four terms of the sum are >= 0 here, so it bounds dd, qq and the tolerance.
            total = dd + qq + reach + tolerance
            fast = (
                type(total) is float
                and total < NORM2_HIGH
                and REACH_LOW < reach < REACH_HIGH
                and a >= 0.0
                and b >= 0.0
                and tolerance >= TOLERANCE_LOW
            )
        except Exception:
            pass
    if not fast:
        _admit_vectors(root, target, pole_hint)
        return _new_result(
            TwoBoneIKResult,
            solve_scaled(*validated(root, target, pole_hint, upper_length, lower_length, tolerance)),
        )

    diff = a - b
    if diff >= 0.0:
        fold, high, low = diff, a, b
    else:
        fold, high, low = -diff, b, a
    eps = tolerance * reach

    # Forward (contract, D2): the unit vector root -> target, or +X with d = 0 at the root.
    distance = sqrt(dd)
    reachable = fold - eps <= distance <= reach + eps
    if distance > eps:
        at_root = False
        inverse = 1.0 / distance
        fx, fy, fz = dx * inverse, dy * inverse, dz * inverse
        d = distance
    else:
        at_root = True
        fx, fy, fz = 1.0, 0.0, 0.0
        d = 0.0

    # Pole (contract D2, D3): q's part perpendicular to forward, or the fallback axis on the line.
    along_q = qx * fx + qy * fy + qz * fz
    ux, uy, uz = qx - along_q * fx, qy - along_q * fy, qz - along_q * fz
    pp = ux * ux + uy * uy + uz * uz
    limit2 = reach * reach
    if qq > limit2:
        limit2 = qq
    threshold2 = tolerance * tolerance * limit2
    if pp < NEAR_LINE * qq:
        # Rare: rebuild the direction from exact differences (contract D8 near the line).
        qh, ql = _exact_difference(px, py, pz, rx, ry, rz)
        if at_root:
            ux, uy, uz = near_line_pole(
                (1.0, 0.0, 0.0), (0.0, 0.0, 0.0), qh, ql, (fx, fy, fz), threshold2, 1.0
            )
        else:
            dh, dl = _exact_difference(tx, ty, tz, rx, ry, rz)
            ux, uy, uz = near_line_pole(dh, dl, qh, ql, (fx, fy, fz), threshold2, dd)
        pole_scale = 1.0
    elif pp <= threshold2:
        ux, uy, uz = fallback_axis(fx, fy, fz)
        pole_scale = 1.0
    else:
        pole_scale = 1.0 / sqrt(pp)  # applied to the height: one multiply instead of three

    # Triangle (contract "Unreachable targets clamp", D5); same steps as solver._scaled.triangle.
    if d > reach:
        d = reach
        along, height = a, 0.0
    elif d < fold:
        d = fold
        along, height = (a if diff > 0.0 else -a), 0.0
    elif at_root:
        # Equal bones folded flat on the root: t = 90 degrees (contract D5).
        along, height = 0.0, a
    else:
        half_inverse = 0.5 / d
        along = (diff * reach + d * d) * half_inverse
        if along > a:
            along = a
        elif along < -a:
            along = -a
        # Kahan's Heron: the small factors have exact inner differences (solver._scaled.triangle).
        extension_gap = low - (d - high)  # a + b - d
        fold_gap = d - (high - low) if d < low else low - (high - d)  # d - |a - b|
        area16 = ((reach + d) * (d + fold)) * (extension_gap * fold_gap)
        height = sqrt(area16) * half_inverse if area16 > 0.0 else 0.0

    bend = height * pole_scale
    return _new_result(
        TwoBoneIKResult,
        (
            (rx + (along * fx + bend * ux), ry + (along * fy + bend * uy), rz + (along * fz + bend * uz)),
            (rx + d * fx, ry + d * fy, rz + d * fz),
            reachable,
        ),
    )


def _admit_vectors(*points: Any) -> None:
    """Let mathutils.Vector points take the fast path from now on (see _FAST_POINTS)."""
    vector = getattr(sys.modules.get("mathutils"), "Vector", None)
    if isinstance(vector, type) and vector not in _FAST_POINTS and any(type(p) is vector for p in points):
        _FAST_POINTS.add(vector)


def _exact_difference(
    x: float, y: float, z: float, rx: float, ry: float, rz: float
) -> tuple[Vector3, Vector3]:
    """(x, y, z) - root as exact (hi, lo) triples."""
    (xh, xl), (yh, yl), (zh, zl) = two_diff(x, rx), two_diff(y, ry), two_diff(z, rz)
    return (xh, yh, zh), (xl, yl, zl)
