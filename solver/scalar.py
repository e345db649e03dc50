# SPDX-License-Identifier: GPL-3.0-or-later
"""Scalar two-bone IK solve on plain Python floats (SPEC "Function solveTwoBoneIK", D1-D8)."""

from __future__ import annotations

import math
from typing import NamedTuple, Sequence

Vector3 = tuple[float, float, float]


class TwoBoneIKResult(NamedTuple):
    """The solved chain (SPEC D1), in the same space as the inputs.

    joint:     position of the joint (knee, elbow); 3-tuple of float.
    end:       position of the chain's end (ankle, wrist); 3-tuple of float.
    reachable: True when |a - b| - eps <= |target - root| <= a + b + eps (SPEC D2).
    """

    joint: Vector3
    end: Vector3
    reachable: bool


def _point(value: Sequence[float], name: str) -> Vector3:
    try:
        x, y, z = (float(c) for c in value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a 3-sequence of real numbers, got {value!r}") from None
    if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
        raise ValueError(f"{name} must be finite, got {(x, y, z)!r}")
    return x, y, z


def _length(value: float, name: str) -> float:
    try:
        length = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number, got {value!r}") from None
    if not math.isfinite(length) or length < 0.0:
        raise ValueError(f"{name} must be a finite length >= 0, got {length!r}")
    return length


def solve_two_bone_ik(
    root: Sequence[float],
    target: Sequence[float],
    pole_hint: Sequence[float],
    upper_length: float,
    lower_length: float,
    *,
    tolerance: float = 1e-9,
) -> TwoBoneIKResult:
    """Solve a two-bone chain root -> joint -> end so the end reaches the target.

    The space is whatever the inputs share (SPEC D6: the Blender side passes armature space);
    units are the inputs' units (Blender units = metres).

    Parameters
    ----------
    root, target, pole_hint : 3-sequences of real numbers
        The chain's root (hip, shoulder), the point the end should reach, and a point (not a
        direction) on the side the joint should bend towards.
    upper_length, lower_length : float
        Bone lengths a and b, >= 0 and not both 0. Bones never stretch.
    tolerance : float
        Relative tolerance; eps = tolerance * (a + b) (SPEC D2). Blender data is float32, so the
        Blender side passes 1e-6.

    Returns
    -------
    TwoBoneIKResult
        ``(joint, end, reachable)``: |joint - root| = a and |end - joint| = b always; an
        unreachable target clamps d to [|a - b|, a + b] along the root->target line.

    Raises
    ------
    ValueError
        Naming the argument: a non-finite or non-3 point, a negative or non-finite length, both
        lengths zero, or a negative or non-finite tolerance (SPEC D4). Nothing else raises.

    Notes
    -----
    Degenerate rules (SPEC "Degenerate inputs", D2, D3, D5): a target within eps of the root uses
    forward = +X and d = 0 before clamping; a pole hint within tolerance of the root-target line
    uses the axis least aligned with forward (ties X, Y, Z), made perpendicular. The joint's
    height above the line comes from the triangle's area (Kahan's Heron form, sides sorted), not
    from sqrt(1 - cos^2), which keeps it accurate to ~1e-16 relative (SPEC D8).
    """
    rx, ry, rz = _point(root, "root")
    tx, ty, tz = _point(target, "target")
    px, py, pz = _point(pole_hint, "pole_hint")
    a = _length(upper_length, "upper_length")
    b = _length(lower_length, "lower_length")
    if a == 0.0 and b == 0.0:
        raise ValueError("upper_length and lower_length are both 0: there is no chain to solve")
    try:
        tolerance = float(tolerance)
    except (TypeError, ValueError):
        raise ValueError(f"tolerance must be a real number, got {tolerance!r}") from None
    if not math.isfinite(tolerance) or tolerance < 0.0:
        raise ValueError(f"tolerance must be finite and >= 0, got {tolerance!r}")

    reach = a + b
    fold = abs(a - b)
    eps = tolerance * reach

    # Forward: unit vector root -> target, +X when the target is at the root (SPEC, D2).
    dx, dy, dz = tx - rx, ty - ry, tz - rz
    distance = math.hypot(dx, dy, dz)
    reachable = fold - eps <= distance <= reach + eps
    if distance <= eps:
        fx, fy, fz = 1.0, 0.0, 0.0
        d = 0.0
    else:
        fx, fy, fz = dx / distance, dy / distance, dz / distance
        d = distance
    # Clamp (SPEC "Unreachable targets clamp").
    if d > reach:
        d = reach
    elif d < fold:
        d = fold

    # Pole: the hint's part perpendicular to forward; fallback axis when on the line (D2, D3).
    qx, qy, qz = px - rx, py - ry, pz - rz
    along = qx * fx + qy * fy + qz * fz
    ux, uy, uz = qx - along * fx, qy - along * fy, qz - along * fz
    perpendicular = math.hypot(ux, uy, uz)
    if perpendicular <= tolerance * max(math.hypot(qx, qy, qz), reach) or perpendicular == 0.0:
        ux, uy, uz = _fallback_axis(fx, fy, fz)
    else:
        ux, uy, uz = ux / perpendicular, uy / perpendicular, uz / perpendicular

    # Joint = root + (a cos t) forward + (a sin t) pole (D5).
    if a == 0.0:
        along_line, height = 0.0, 0.0
    elif d == 0.0:
        # Equal bones folded flat on the root: t = 90 degrees.
        along_line, height = 0.0, a
    else:
        along_line = ((a - b) * (a + b) + d * d) / (2.0 * d)
        height = _triangle_height(a, b, d)
        # Rounding may push a cos t past a (cos t > 1): clamp it (D5).
        if along_line > a:
            along_line = a
        elif along_line < -a:
            along_line = -a

    joint = (
        rx + along_line * fx + height * ux,
        ry + along_line * fy + height * uy,
        rz + along_line * fz + height * uz,
    )
    end = (rx + d * fx, ry + d * fy, rz + d * fz)
    return TwoBoneIKResult(joint, end, reachable)


def _fallback_axis(fx: float, fy: float, fz: float) -> Vector3:
    """The axis least aligned with forward (ties to X, Y, Z), made perpendicular (SPEC D3)."""
    ax, ay, az = abs(fx), abs(fy), abs(fz)
    if ax <= ay and ax <= az:
        ex, ey, ez = 1.0, 0.0, 0.0
        component = fx
    elif ay <= az:
        ex, ey, ez = 0.0, 1.0, 0.0
        component = fy
    else:
        ex, ey, ez = 0.0, 0.0, 1.0
        component = fz
    ux, uy, uz = ex - component * fx, ey - component * fy, ez - component * fz
    norm = math.hypot(ux, uy, uz)
    return ux / norm, uy / norm, uz / norm


def _triangle_height(a: float, b: float, d: float) -> float:
    """Height of the joint above the root-end line: 2 * area / d, area by Kahan's Heron form.

    Sides sorted x >= y >= z; each factor is formed without cancellation, so the height keeps
    full relative precision even for slivers near full extension or full fold (SPEC D8).
    """
    x, y, z = sorted((a, b, d), reverse=True)
    first = (x + (y + z)) * (z + (x - y))
    second = (z - (x - y)) * (x + (y - z))
    if second <= 0.0:
        return 0.0
    return math.sqrt(first) * math.sqrt(second) / (2.0 * d)
