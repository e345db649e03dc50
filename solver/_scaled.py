# SPDX-License-Identifier: GPL-3.0-or-later
"""The scalar solve on power-of-two scaled values: valid for every finite input.

Same formulas, same order as the fast path in solver/scalar.py, but target - root, pole - root
and the triangle's sides are each scaled by a power of two before squaring, so nothing overflows
or underflows. Scaling by a power of two is exact, so wherever the fast path is valid both give
identical numbers (tests/solver/test_scaled_path.py checks this). solver/_batch_core.py repeats
these steps on arrays.
"""

from __future__ import annotations

from math import frexp, sqrt

from ._limits import (
    HUGE_INPUT,
    NEAR_LINE,
    PRESCALE,
    SCALE_EXPONENT_MAX,
    SCALE_EXPONENT_MIN,
    THIN_SIDE,
    UNPRESCALE,
)
from ._pole import fallback_axis, near_line_pole, two_diff

_SMALLEST_NORMAL = 2.0**-1022


def scale_pair(magnitude: float) -> tuple[float, float]:
    """(2**-k, 2**k) with 2**k <= magnitude < 2**(k + 1), k clamped to +-1000 (k = -1000 below normals).

    The batch form takes k from the float's exponent bits, which this matches exactly.
    """
    k = frexp(magnitude)[1] - 1 if magnitude >= _SMALLEST_NORMAL else SCALE_EXPONENT_MIN
    k = min(max(k, SCALE_EXPONENT_MIN), SCALE_EXPONENT_MAX)
    return 2.0**-k, 2.0**k


def triangle(a: float, b: float, d: float, reach: float, diff: float, fold: float) -> tuple[float, float]:
    """(a cos t, a sin t) of the joint for fold <= d <= reach, d > 0 (SPEC D5, D8).

    a cos t by the law of cosines, clamped to [-a, a]; a sin t = 2 * area / d with the area from
    Heron's formula in Kahan's cancellation-free arrangement: every factor that can be small is
    `small - (big - mid)` with an exact inner difference (Sterbenz), so the height keeps full
    relative precision next to full extension and full fold.
    """
    half_inverse = 0.5 / d
    along = (diff * reach + d * d) * half_inverse
    if along > a:
        along = a
    elif along < -a:
        along = -a
    if diff >= 0.0:
        high, low = a, b
    else:
        high, low = b, a
    # 16 area^2 = (a + b + d)(d + |a - b|)(a + b - d)(d - |a - b|)
    extension_gap = low - (d - high)
    fold_gap = d - (high - low) if d < low else low - (high - d)
    area16 = ((reach + d) * (d + fold)) * (extension_gap * fold_gap)
    height = sqrt(area16) * half_inverse if area16 > 0.0 else 0.0
    return along, height


def thin_triangle(
    a: float, b: float, d: float, reach: float, diff: float, fold: float, down: float, up: float
) -> tuple[float, float]:
    """``triangle`` for d < THIN_SIDE * (a + b), unscaled, via ratios to d that stay in range.

    Only reachable with tolerance < 2**-100 (else d > eps = tolerance * (a + b)), where the scaled
    d * d and area would underflow. ``down``/``up`` are scale_pair(reach).
    """
    along = 0.5 * (reach * (diff / d) + d)  # |diff| <= d after the clamp
    if along > a:
        along = a
    elif along < -a:
        along = -a
    if diff >= 0.0:
        high, low = a, b
    else:
        high, low = b, a
    fold_gap = d - (high - low) if d < low else low - (high - d)
    ratios = (fold_gap / d) * ((d + fold) / d)
    d_s = d * down
    outer = (reach * down + d_s) * (low * down - (d_s - high * down))
    height = 0.5 * sqrt(outer) * up * sqrt(ratios) if outer > 0.0 and ratios > 0.0 else 0.0
    return along, height


def solve_scaled(
    rx: float,
    ry: float,
    rz: float,
    tx: float,
    ty: float,
    tz: float,
    px: float,
    py: float,
    pz: float,
    a: float,
    b: float,
    tolerance: float,
) -> tuple[tuple[float, float, float], tuple[float, float, float], bool]:
    """(joint, end, reachable) for validated float inputs of any finite magnitude.

    Raises ValueError only when the solved chain itself lies outside the float range.
    """
    unprescale = 0.0
    if (
        max(abs(rx), abs(ry), abs(rz), abs(tx), abs(ty), abs(tz), abs(px), abs(py), abs(pz), a, b)
        > HUGE_INPUT
    ):
        # Keep target - root and a + b finite; the solve is scale-free, so undo it at the end.
        rx, ry, rz = rx * PRESCALE, ry * PRESCALE, rz * PRESCALE
        tx, ty, tz = tx * PRESCALE, ty * PRESCALE, tz * PRESCALE
        px, py, pz = px * PRESCALE, py * PRESCALE, pz * PRESCALE
        a, b = a * PRESCALE, b * PRESCALE
        unprescale = UNPRESCALE

    dx, dy, dz = tx - rx, ty - ry, tz - rz
    qx, qy, qz = px - rx, py - ry, pz - rz
    reach = a + b
    diff = a - b
    fold = diff if diff >= 0.0 else -diff
    eps = tolerance * reach

    # Forward (SPEC, D2): the unit vector root -> target, or +X with d = 0 at the root.
    down, up = scale_pair(max(abs(dx), abs(dy), abs(dz)))
    sx, sy, sz = dx * down, dy * down, dz * down
    dd = sx * sx + sy * sy + sz * sz
    norm = sqrt(dd)
    distance = norm * up
    reachable = fold - eps <= distance <= reach + eps
    at_root = not distance > eps
    if at_root:
        fx, fy, fz = 1.0, 0.0, 0.0
        d = 0.0
    else:
        inverse = 1.0 / norm
        fx, fy, fz = sx * inverse, sy * inverse, sz * inverse
        d = distance

    # Pole (SPEC D2, D3): q's part perpendicular to forward, or the fallback axis on the line.
    down_q, _ = scale_pair(max(abs(qx), abs(qy), abs(qz)))
    wx, wy, wz = qx * down_q, qy * down_q, qz * down_q
    qq = wx * wx + wy * wy + wz * wz
    along_q = wx * fx + wy * fy + wz * fz
    ux, uy, uz = wx - along_q * fx, wy - along_q * fy, wz - along_q * fz
    pp = ux * ux + uy * uy + uz * uz
    reach_q = reach * down_q
    limit2 = reach_q * reach_q
    if qq > limit2:
        limit2 = qq
    threshold2 = tolerance * tolerance * limit2
    if pp < NEAR_LINE * qq:
        qh, ql = _exact_difference((px, py, pz), (rx, ry, rz), down_q)
        if at_root:
            dh, dl, dd_exact = (1.0, 0.0, 0.0), (0.0, 0.0, 0.0), 1.0
        else:
            dh, dl = _exact_difference((tx, ty, tz), (rx, ry, rz), down)
            dd_exact = dd
        ux, uy, uz = near_line_pole(dh, dl, qh, ql, (fx, fy, fz), threshold2, dd_exact)
        pole_scale = 1.0
    elif pp <= threshold2 or pp == 0.0:
        ux, uy, uz = fallback_axis(fx, fy, fz)
        pole_scale = 1.0
    else:
        pole_scale = 1.0 / sqrt(pp)  # normalises (ux, uy, uz) through the height

    # Triangle (SPEC "Unreachable targets clamp", D5): a clamped chain is exactly straight.
    if d > reach:
        d = reach
        along, height = a, 0.0
    elif d < fold:
        d = fold
        along, height = (a if diff > 0.0 else -a), 0.0
    elif d == 0.0:
        along, height = 0.0, a
    else:
        down_r, up_r = scale_pair(reach)
        if d * down_r < THIN_SIDE:
            along, height = thin_triangle(a, b, d, reach, diff, fold, down_r, up_r)
        else:
            along, height = triangle(
                a * down_r, b * down_r, d * down_r, reach * down_r, diff * down_r, fold * down_r
            )
            along, height = along * up_r, height * up_r

    bend = height * pole_scale
    joint = (rx + (along * fx + bend * ux), ry + (along * fy + bend * uy), rz + (along * fz + bend * uz))
    end = (rx + d * fx, ry + d * fy, rz + d * fz)
    if unprescale:
        joint = (joint[0] * unprescale, joint[1] * unprescale, joint[2] * unprescale)
        end = (end[0] * unprescale, end[1] * unprescale, end[2] * unprescale)
        if not all(abs(c) <= 1.7976931348623157e308 for c in joint + end):
            raise ValueError(
                "root, upper_length, lower_length: the solved chain lies outside the float range "
                f"(joint {joint!r}, end {end!r})"
            )
    return joint, end, reachable


def _exact_difference(
    point: tuple[float, float, float], root: tuple[float, float, float], down: float
) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """point - root as (hi, lo) triples, both times the power of two `down`."""
    (xh, xl), (yh, yl), (zh, zl) = (two_diff(p, r) for p, r in zip(point, root, strict=True))
    return (xh * down, yh * down, zh * down), (xl * down, yl * down, zl * down)
