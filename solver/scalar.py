# SPDX-License-Identifier: GPL-3.0-or-later
"""Scalar two-bone IK solve on plain Python floats (SPEC "Function solveTwoBoneIK", D1-D8).

Pure Python: no numpy, no bpy, no mathutils. The common case (float inputs of everyday size)
runs inline below; anything else (bad input, other number types, tolerance below 2**-100,
magnitudes beyond 2**200) goes to the checked path in solver/_scaled.py, which validates and
gives identical numbers wherever both apply.
"""

from __future__ import annotations

from math import sqrt
from typing import NamedTuple, Protocol

from ._limits import NEAR_LINE, NORM2_HIGH, REACH_HIGH, REACH_LOW, TOLERANCE_LOW
from ._pole import fallback_axis, near_line_pole, two_diff
from ._scaled import solve_scaled
from ._validate import validated

Vector3 = tuple[float, float, float]


class Point(Protocol):
    """Three real coordinates: a tuple, a list, a mathutils.Vector, a numpy array... (SPEC D1)."""

    def __len__(self) -> int: ...

    def __getitem__(self, index: int, /) -> float: ...


class TwoBoneIKResult(NamedTuple):
    """The solved chain (SPEC D1), in the same space and units as the inputs.

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
        ``eps = tolerance * (a + b)`` (SPEC D2).
    """

    joint: Vector3
    end: Vector3
    reachable: bool


_FLOAT_MAX = 1.7976931348623157e308
_new_result = tuple.__new__  # skips the named tuple's Python-level __new__ (hot path)


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

    Implements SPEC "Function solveTwoBoneIK", "Unreachable targets clamp", "Degenerate inputs"
    and decisions D1-D5, D7, D8. The solve is space-agnostic (SPEC D6): every point must be in
    the same frame, and the result comes back in it; the Blender side passes armature space.
    Units are the inputs' own (Blender units = metres); the solve is scale-invariant.

    Parameters
    ----------
    root : sequence of 3 real numbers
        The chain's root (hip, shoulder).
    target : sequence of 3 real numbers
        The point the end should reach.
    pole_hint : sequence of 3 real numbers
        A point (not a direction) on the side the joint bends towards.
    upper_length : float
        a, the root-joint bone's length, >= 0. Bones never stretch.
    lower_length : float
        b, the joint-end bone's length, >= 0; not both lengths 0.
    tolerance : float, keyword-only, default 1e-9
        Relative tolerance, >= 0: ``eps = tolerance * (a + b)`` (SPEC D2). Blender stores
        float32, so the Blender side passes 1e-6.

    Returns
    -------
    TwoBoneIKResult
        ``(joint, end, reachable)``, 3-tuples of float and a bool, in the inputs' frame.

    Raises
    ------
    ValueError
        Naming the argument (SPEC D4): a point that is not 3 real numbers or is not finite, a
        length that is negative or not finite, both lengths 0, a tolerance that is negative or
        not finite. Also when the solved chain itself would lie outside the float range
        (only possible with coordinates or lengths near 1e308). Nothing else raises.

    Notes
    -----
    - forward is the unit vector root -> target; within eps of the root it is +X and d = 0.
    - d = |target - root| is clamped to ``[|a - b|, a + b]``; a clamped chain is exactly
      straight (too far) or folded (too close) along forward.
    - The pole direction is the pole hint's part perpendicular to forward; when it is within
      ``tolerance * max(|pole_hint - root|, a + b)`` of the line, the axis least aligned with
      forward (ties X, Y, Z), made perpendicular (SPEC D3).
    - With equal bones and the target at the root, the joint is ``root + a * pole`` (SPEC D5).
    - reachable implies ``|end - target| <= eps``, or ``<= 3 eps`` when the target is within eps
      of the root (forward is then +X whatever the target's direction; SPEC D5 says 2 eps).
    - Accuracy (SPEC D8): within 1e-10 * max(a + b, |root|) of exact arithmetic on the same
      binary inputs, 5e-8 within 1e-6 of full extension or fold. The height comes from Heron's
      formula in Kahan's form, and a pole hint near the line from an exact cross product.
    - Threshold decisions (at the root, on the line, reachable) are made in floating point, so
      inputs within a few ulps of a threshold may fall on either side of it.
    - Deterministic and stateless (SPEC D7): same inputs, same bits.

    Examples
    --------
    A 5-5-6 triangle: the knee bends 4 units towards the pole hint.

    >>> solve_two_bone_ik((0, 0, 0), (6, 0, 0), (0, 1, 0), 5.0, 5.0)
    TwoBoneIKResult(joint=(3.0, 4.0, 0.0), end=(6.0, 0.0, 0.0), reachable=True)

    A target out of reach: the chain straightens towards it.

    >>> solve_two_bone_ik((0, 0, 0), (5, 0, 0), (0, 1, 0), 1.0, 1.0)
    TwoBoneIKResult(joint=(1.0, 0.0, 0.0), end=(2.0, 0.0, 0.0), reachable=False)
    """
    # Fast path for float inputs of everyday size. A NaN or inf anywhere makes dd, qq or reach
    # nan or inf, and other number types fail the type test or raise: the checked path then
    # validates (naming the argument) and solves on scaled values.
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
        fast = (
            type(dd + qq + reach + tolerance) is float
            and dd < NORM2_HIGH
            and qq < NORM2_HIGH
            and REACH_LOW < reach < REACH_HIGH
            and a >= 0.0
            and b >= 0.0
            and TOLERANCE_LOW <= tolerance <= _FLOAT_MAX
        )
    except Exception:
        fast = False
    if not fast:
        try:  # points already unpacked (a one-shot iterator cannot be read twice)
            root = rx, ry, rz
            target = tx, ty, tz
            pole_hint = px, py, pz
        except NameError:
            pass
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

    # Forward (SPEC, D2): the unit vector root -> target, or +X with d = 0 at the root.
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

    # Pole (SPEC D2, D3): q's part perpendicular to forward, or the fallback axis on the line.
    along_q = qx * fx + qy * fy + qz * fz
    ux, uy, uz = qx - along_q * fx, qy - along_q * fy, qz - along_q * fz
    pp = ux * ux + uy * uy + uz * uz
    limit2 = reach * reach
    if qq > limit2:
        limit2 = qq
    threshold2 = tolerance * tolerance * limit2
    if pp < NEAR_LINE * qq:
        # Rare: rebuild the direction from exact differences (SPEC D8 near the line).
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

    # Triangle (SPEC "Unreachable targets clamp", D5); same steps as solver._scaled.triangle.
    if d > reach:
        d = reach
        along, height = a, 0.0
    elif d < fold:
        d = fold
        along, height = (a if diff > 0.0 else -a), 0.0
    elif at_root:
        # Equal bones folded flat on the root: t = 90 degrees (SPEC D5).
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


def _exact_difference(
    x: float, y: float, z: float, rx: float, ry: float, rz: float
) -> tuple[Vector3, Vector3]:
    """(x, y, z) - root as exact (hi, lo) triples."""
    (xh, xl), (yh, yl), (zh, zl) = two_diff(x, rx), two_diff(y, ry), two_diff(z, rz)
    return (xh, yh, zh), (xl, yl, zl)
