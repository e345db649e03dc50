# SPDX-License-Identifier: GPL-3.0-or-later
"""The scalar solve on power-of-two scaled values: valid for every finite input.

Same formulas, same order as the fast path in solver/scalar.py, but target - root, pole - root
and the triangle's sides are each scaled by their own power of two before squaring, so nothing
overflows or underflows. Scaling by a power of two is exact, so wherever the fast path is valid
both give identical numbers (tests/solver/test_scaled_path.py checks this). solver/_batch_core.py
repeats these steps on arrays.

Each scale is the chain's own or a direction's own: beyond the clamp only the directions of
target - root and pole_hint - root matter, so a chain of 1e-300 solves at full precision next to
a target or pole hint at 1e308. Two steps keep the float range:

- a difference such as target - root that overflows (both points near 1e308, on opposite sides)
  is taken from the halved points instead, and its scale doubled;
- bones longer than 2**1000 are taken times 2**-64, so that a + b and eps stay finite: the
  lengths, the distance to the target and the triangle are then in those units, and the joint's
  and end's offsets from the root are multiplied back before they are added to it.

The solved chain is finite unless its own coordinates exceed the float range (a root near 1e308
with the chain pointing outwards): that, and only that, raises.
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
_FLOAT_MAX = 1.7976931348623157e308


def scale_pair(magnitude: float) -> tuple[float, float]:
    """(2**-k, 2**k) with 2**k <= magnitude < 2**(k + 1), k clamped to +-1000 (k = -1000 below normals).

    The batch form takes k from the float's exponent bits, which this matches exactly.
    """
    k = frexp(magnitude)[1] - 1 if magnitude >= _SMALLEST_NORMAL else SCALE_EXPONENT_MIN
    k = min(max(k, SCALE_EXPONENT_MIN), SCALE_EXPONENT_MAX)
    return 2.0**-k, 2.0**k


def _clamp(a: float, along: float) -> float:
    """a cos t clamped to [-a, a]: rounding can push cos t past 1 (contract D5)."""
    return a if along > a else -a if along < -a else along


def _sides(a: float, b: float, d: float, diff: float) -> tuple[float, float, float]:
    """(longer bone, shorter bone, d - |a - b|), the last with an exact inner difference (Sterbenz)."""
    high, low = (a, b) if diff >= 0.0 else (b, a)
    return high, low, d - (high - low) if d < low else low - (high - d)


def triangle(a: float, b: float, d: float, reach: float, diff: float, fold: float) -> tuple[float, float]:
    """(a cos t, a sin t) of the joint for fold <= d <= reach, d > 0 (contract D5, D8).

    a cos t by the law of cosines, clamped to [-a, a]; a sin t = 2 * area / d with the area from
    Heron's formula in Kahan's cancellation-free arrangement: every factor that can be small is
    `small - (big - mid)` with an exact inner difference (Sterbenz), so the height keeps full
    relative precision next to full extension and full fold.
    """
    half_inverse = 0.5 / d
    along = _clamp(a, (diff * reach + d * d) * half_inverse)
    high, low, fold_gap = _sides(a, b, d, diff)
    # 16 area^2 = (a + b + d)(d + |a - b|)(a + b - d)(d - |a - b|)
    extension_gap = low - (d - high)
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
    along = _clamp(a, 0.5 * (reach * (diff / d) + d))  # |diff| <= d after the clamp
    high, low, fold_gap = _sides(a, b, d, diff)
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
    # Lengths (a, b, eps, distances, the triangle) times 2**-64 for bones past 2**1000, so that
    # a + b stays finite. Points keep their own scale: scaling them too would underflow a
    # target or pole hint close to the root, whose direction still counts with tolerance 0.
    length_scale = length_unscale = 1.0
    if a > HUGE_INPUT or b > HUGE_INPUT:
        a, b = a * PRESCALE, b * PRESCALE
        length_scale, length_unscale = PRESCALE, UNPRESCALE

    # target - root and pole_hint - root; one that overflows comes from the halved points
    # (exact but for subnormal parts, which vanish next to a difference near 1e308).
    d_half = q_half = 1.0
    dx, dy, dz = tx - rx, ty - ry, tz - rz
    d_max = max(abs(dx), abs(dy), abs(dz))
    if d_max > _FLOAT_MAX:
        d_half = 0.5
        dx, dy, dz = tx * 0.5 - rx * 0.5, ty * 0.5 - ry * 0.5, tz * 0.5 - rz * 0.5
        d_max = max(abs(dx), abs(dy), abs(dz))
    qx, qy, qz = px - rx, py - ry, pz - rz
    q_max = max(abs(qx), abs(qy), abs(qz))
    if q_max > _FLOAT_MAX:
        q_half = 0.5
        qx, qy, qz = px * 0.5 - rx * 0.5, py * 0.5 - ry * 0.5, pz * 0.5 - rz * 0.5
        q_max = max(abs(qx), abs(qy), abs(qz))
    reach = a + b
    diff = a - b
    fold = diff if diff >= 0.0 else -diff
    eps = tolerance * reach

    # Forward (contract, D2): the unit vector root -> target, or +X with d = 0 at the root.
    down, up = scale_pair(d_max)
    sx, sy, sz = dx * down, dy * down, dz * down
    dd = sx * sx + sy * sy + sz * sz
    norm = sqrt(dd)
    distance = norm * (up / d_half * length_scale)  # inf: too far, and forward still exact
    reachable = fold - eps <= distance <= reach + eps
    # (With bones past 2**1000 a distance below ~2**-1010 underflows in their units; it counts
    # only when eps is 0, and then any nonzero target - root is away from the root.)
    at_root = not (distance > eps or (eps == 0.0 and norm > 0.0))
    if at_root:
        fx, fy, fz = 1.0, 0.0, 0.0
        d = 0.0
    else:
        inverse = 1.0 / norm
        fx, fy, fz = sx * inverse, sy * inverse, sz * inverse
        d = distance

    # Pole (contract D2, D3): q's part perpendicular to forward, or the fallback axis on the line.
    down_q, _ = scale_pair(q_max)
    wx, wy, wz = qx * down_q, qy * down_q, qz * down_q
    qq = wx * wx + wy * wy + wz * wz
    along_q = wx * fx + wy * fy + wz * fz
    ux, uy, uz = wx - along_q * fx, wy - along_q * fy, wz - along_q * fz
    pp = ux * ux + uy * uy + uz * uz
    reach_q = reach * (down_q * q_half) * length_unscale
    limit2 = reach_q * reach_q
    if qq > limit2:
        limit2 = qq
    threshold2 = tolerance * tolerance * limit2
    if pp < NEAR_LINE * qq:
        qh, ql = _exact_difference((px, py, pz), (rx, ry, rz), q_half, down_q)
        if at_root:
            dh, dl, dd_exact = (1.0, 0.0, 0.0), (0.0, 0.0, 0.0), 1.0
        else:
            dh, dl = _exact_difference((tx, ty, tz), (rx, ry, rz), d_half, down)
            dd_exact = dd
        ux, uy, uz = near_line_pole(dh, dl, qh, ql, (fx, fy, fz), threshold2, dd_exact)
        pole_scale = 1.0
    elif pp <= threshold2 or pp == 0.0:
        ux, uy, uz = fallback_axis(fx, fy, fz)
        pole_scale = 1.0
    else:
        # Normalise (ux, uy, uz) through the height, after bringing it near unit length (a no-op
        # for everyday rigs): a pole hint's scale far from the chain's would otherwise underflow
        # or overflow the height times pole_scale.
        down_u, _ = scale_pair(max(abs(ux), abs(uy), abs(uz)))
        ux, uy, uz = ux * down_u, uy * down_u, uz * down_u
        pole_scale = 1.0 / sqrt(ux * ux + uy * uy + uz * uz)

    # Triangle (contract "Unreachable targets clamp", D5): a clamped chain is exactly straight.
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
    unscale = length_unscale
    joint = (
        rx + (along * fx + bend * ux) * unscale,
        ry + (along * fy + bend * uy) * unscale,
        rz + (along * fz + bend * uz) * unscale,
    )
    end = (rx + d * fx * unscale, ry + d * fy * unscale, rz + d * fz * unscale)
    if (unscale != 1.0 or max(abs(rx), abs(ry), abs(rz)) > HUGE_INPUT) and not all(
        abs(c) <= _FLOAT_MAX for c in joint + end
    ):
        raise ValueError(
            "root, upper_length, lower_length: the solved chain lies outside the float range "
            f"(joint {joint!r}, end {end!r})"
        )
    return joint, end, reachable


def _exact_difference(
    point: tuple[float, float, float], root: tuple[float, float, float], half: float, down: float
) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """point * half - root * half as (hi, lo) triples, both times the power of two `down`."""
    (xh, xl), (yh, yl), (zh, zl) = (two_diff(p * half, r * half) for p, r in zip(point, root, strict=True))
    return (xh * down, yh * down, zh * down), (xl * down, yl * down, zl * down)
