# SPDX-License-Identifier: GPL-3.0-or-later
"""The two-bone solve on Python floats (docs/contract.md, D1-D10). solver/batch.py mirrors it."""

from __future__ import annotations

from fractions import Fraction
from math import cos, expm1, hypot, sin, sqrt
from typing import Any, NamedTuple

from ._inputs import TINY, point, real, settings

Vector3 = tuple[float, float, float]

# |q_perp|^2 < NEAR_LINE |q|^2, the pole hint within 1e-4 rad of the line: the float projection
# loses up to ulp |q| / |q_perp| of the bend direction, so it is computed exactly instead.
NEAR_LINE = 1e-8


class TwoBoneIKResult(NamedTuple):
    """The solved chain (contract D1), in the inputs' frame and units.

    Attributes
    ----------
    joint : tuple of 3 float
        The joint (knee, elbow); ``|joint - root| = upper_length``.
    end : tuple of 3 float
        The chain's end (ankle, wrist); ``|end - joint| = lower_length``. On the ray from the root
        towards the target, at the distance clamped to ``[|a - b|, a + b]`` (and eased by softness).
    reachable : bool
        ``|a - b| - eps <= |target - root| <= a + b + eps``, ``eps = tolerance * (a + b)`` (D2).
    """

    joint: Vector3
    end: Vector3
    reachable: bool


def solve_two_bone_ik(
    root: Any,
    target: Any,
    pole_hint: Any,
    upper_length: float,
    lower_length: float,
    *,
    tolerance: float = 1e-9,
    twist: float = 0.0,
    softness: float = 0.0,
) -> TwoBoneIKResult:
    """Solve a two-bone chain root -> joint -> end so the end reaches the target.

    The rules are docs/contract.md's, D1-D10. The solve is space-agnostic (D6): all points in one
    frame, the result in it (the driver passes armature space). Units are the inputs' own
    (Blender units = metres); angles are radians.

    Parameters
    ----------
    root, target, pole_hint : 3 real numbers each
        The chain's root (hip, shoulder), the point the end should reach, and a point (not a
        direction) on the side the joint bends towards. A tuple, list, ``mathutils.Vector``,
        numpy array or other sequence (D1).
    upper_length, lower_length : float
        a and b, the bones' lengths, >= 0 and not both 0. Bones never stretch.
    tolerance : float, default 1e-9
        Relative, >= 0: ``eps = tolerance * (a + b)`` (D2). The driver passes 1e-6 (float32).
    twist : float, default 0
        Radians: turns the bend plane about root -> target, right-handed, from the pole's (D9).
    softness : float, default 0
        0 (off) to 1: the last ``softness * (a + b)`` of reach eases to full extension (D10).

    Returns
    -------
    TwoBoneIKResult
        ``(joint, end, reachable)``: 3-tuples of float and a bool.

    Raises
    ------
    ValueError
        Naming the first bad argument (D4): a point that is not 3 real numbers, a number that
        is not real, NaN, inf or past 1e40 in size, a negative length or tolerance, a + b below
        1e-30 (both 0 included), softness outside [0, 1].

    Notes
    -----
    Within the supported range D5 and D8 hold as stated; threshold decisions (at the root, on
    the line, reachable) are made in floating point, so inputs within a few ulps of a threshold
    may fall on either side. Same inputs, same bits (D7).

    Examples
    --------
    A 5-5-6 triangle: the knee bends 4 units towards the pole hint.

    >>> solve_two_bone_ik((0, 0, 0), (6, 0, 0), (0, 1, 0), 5.0, 5.0)
    TwoBoneIKResult(joint=(3.0, 4.0, 0.0), end=(6.0, 0.0, 0.0), reachable=True)

    Out of reach the chain points straight at the target; a twist of 90 degrees turns the bend.

    >>> solve_two_bone_ik((0, 0, 0), (5, 0, 0), (0, 1, 0), 1.0, 1.0)
    TwoBoneIKResult(joint=(1.0, 0.0, 0.0), end=(2.0, 0.0, 0.0), reachable=False)
    >>> from math import pi
    >>> [round(c, 12) for c in solve_two_bone_ik((0, 0, 0), (6, 0, 0), (0, 1, 0), 5, 5, twist=pi / 2).joint]
    [3.0, 0.0, 4.0]
    """
    rx, ry, rz = point(root, "root")
    tx, ty, tz = point(target, "target")
    px, py, pz = point(pole_hint, "pole_hint")
    a = real(upper_length, "upper_length", 0.0)
    b = real(lower_length, "lower_length", 0.0)
    reach = a + b
    if reach < TINY:
        raise ValueError(f"upper_length + lower_length must be at least 1e-30, got {reach!r}")
    tolerance, twist, softness = settings(tolerance, twist, softness)

    # Forward (D2): the unit vector root -> target, or +X with d = 0 when the target is at the root.
    diff = a - b
    fold = abs(diff)
    eps = tolerance * reach
    dx, dy, dz = tx - rx, ty - ry, tz - rz
    distance = sqrt(dx * dx + dy * dy + dz * dz)
    reachable = fold - eps <= distance <= reach + eps
    at_root = distance <= eps
    if at_root:
        fx, fy, fz, d = 1.0, 0.0, 0.0, 0.0
    else:
        inverse = 1.0 / distance
        fx, fy, fz, d = dx * inverse, dy * inverse, dz * inverse, distance

    # Bend direction (D2, D3): q's part perpendicular to forward, scaled to unit length through the
    # height below (one multiply instead of three); near the line exactly, on it the fallback axis.
    qx, qy, qz = px - rx, py - ry, pz - rz
    qq = qx * qx + qy * qy + qz * qz
    along_q = qx * fx + qy * fy + qz * fz
    ux, uy, uz = qx - along_q * fx, qy - along_q * fy, qz - along_q * fz
    pp = ux * ux + uy * uy + uz * uz
    threshold2 = tolerance * tolerance * max(reach * reach, qq)
    unit = 1.0
    if pp < NEAR_LINE * qq:
        target_or_x = None if at_root else (tx, ty, tz)
        ux, uy, uz = near_line_pole((rx, ry, rz), target_or_x, (px, py, pz), (fx, fy, fz), threshold2)
    elif pp <= threshold2:
        ux, uy, uz = fallback_axis(fx, fy, fz)
    else:
        unit = 1.0 / sqrt(pp)
    if twist:
        c, s = cos(twist), sin(twist)
        ux, uy, uz = (
            c * ux + s * (fy * uz - fz * uy),
            c * uy + s * (fz * ux - fx * uz),
            c * uz + s * (fx * uy - fy * ux),
        )

    d, along, height = triangle(a, b, soften(d, reach, fold, softness) if softness else d, at_root)
    bend = height * unit
    return TwoBoneIKResult(
        (rx + (along * fx + bend * ux), ry + (along * fy + bend * uy), rz + (along * fz + bend * uz)),
        (rx + d * fx, ry + d * fy, rz + d * fz),
        reachable,
    )


def soften(d: float, reach: float, fold: float, softness: float) -> float:
    """The end's distance eased near full extension (D10); d itself when softness is 0.

    In the soft zone, the last ``w = min(softness * reach, reach - fold)`` of reach, a target at
    ``d > reach - w`` puts the end at ``reach - w + w * (1 - exp(-(d - (reach - w)) / w))``: equal
    to d with slope 1 where the zone starts, never past the target, full extension only in the
    limit. So the knee angle's slope stays bounded where the plain solve's grows without bound.
    """
    width = min(softness * reach, reach - fold)
    start = reach - width
    if width <= 0.0 or d <= start:
        return d
    return min(d, start - width * expm1((start - d) / width))


def triangle(a: float, b: float, d: float, at_root: bool) -> tuple[float, float, float]:
    """(d clamped, a cos t, a sin t): the end's distance and the joint along and across forward.

    The clamp ("Unreachable targets clamp"): past a + b the chain is straight, below |a - b|
    folded, both exactly. Otherwise a cos t by the law of cosines, clamped to [-a, a] (D5), and
    a sin t = 2 area / d with Heron's formula in Kahan's form (D8): each factor that can be small
    is ``small - (big - mid)`` with an exact inner difference, so it keeps full precision next to
    full extension and full fold. Equal bones with the target at the root fold flat, t = 90 deg.
    """
    reach = a + b
    diff = a - b
    high, low = (a, b) if diff >= 0.0 else (b, a)
    fold = high - low
    if d > reach:
        return reach, a, 0.0
    if d < fold:
        return fold, (a if diff > 0.0 else -a), 0.0
    if at_root:
        return d, 0.0, a
    half_inverse = 0.5 / d
    along = min(max((diff * reach + d * d) * half_inverse, -a), a)
    extension_gap = low - (d - high)  # a + b - d
    fold_gap = d - (high - low) if d < low else low - (high - d)  # d - |a - b|
    area16 = ((reach + d) * (d + fold)) * (extension_gap * fold_gap)
    return d, along, sqrt(area16) * half_inverse if area16 > 0.0 else 0.0


def fallback_axis(fx: float, fy: float, fz: float) -> Vector3:
    """The axis least aligned with forward (ties X, Y, Z), made perpendicular and unit (D3).

    >>> fallback_axis(1.0, 0.0, 0.0)
    (0.0, 1.0, 0.0)
    """
    ax, ay, az = abs(fx), abs(fy), abs(fz)
    if ax <= ay and ax <= az:
        ux, uy, uz = 1.0 - fx * fx, 0.0 - fx * fy, 0.0 - fx * fz
    elif ay <= az:
        ux, uy, uz = 0.0 - fy * fx, 1.0 - fy * fy, 0.0 - fy * fz
    else:
        ux, uy, uz = 0.0 - fz * fx, 0.0 - fz * fy, 1.0 - fz * fz
    norm = sqrt(ux * ux + uy * uy + uz * uz)
    return ux / norm, uy / norm, uz / norm


def near_line_pole(
    root: Vector3, target: Vector3 | None, pole_hint: Vector3, forward: Vector3, threshold2: float
) -> Vector3:
    """Unit bend direction for a pole hint near the root-target line, in exact arithmetic (D8).

    With D = target - root (+X when ``target`` is None: at the root) and q = pole_hint - root as
    exact rationals, q's part perpendicular to D is D x (q x D) / |D|^2, computed without
    rounding and rounded once; the fallback axis of ``forward`` when that part is within the line
    tolerance (``threshold2`` is its square) or zero.
    """
    r = [Fraction(c) for c in root]
    q = [Fraction(p) - c for p, c in zip(pole_hint, r, strict=True)]
    line = [Fraction(1), Fraction(0), Fraction(0)]
    if target is not None:
        line = [Fraction(t) - c for t, c in zip(target, r, strict=True)]
    across = _cross(q, line)
    dd = _dot(line, line)
    if not any(across) or _dot(across, across) <= Fraction(threshold2) * dd:
        return fallback_axis(*forward)
    ux, uy, uz = (float(c) for c in _cross(line, across))
    norm = hypot(ux, uy, uz)  # the squares may leave the float range; hypot scales
    return ux / norm, uy / norm, uz / norm


def _cross(u: list[Fraction], v: list[Fraction]) -> list[Fraction]:
    return [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]]


def _dot(u: list[Fraction], v: list[Fraction]) -> Fraction:
    return u[0] * v[0] + u[1] * v[1] + u[2] * v[2]
