# SPDX-License-Identifier: GPL-3.0-or-later
"""The bend direction when the pole hint is on or near the root-target line (contract D2, D3, D8).

Scalar helpers on plain floats; solver/_batch_core.py repeats every operation in the same order
on numpy arrays, so the two forms give equal numbers.
"""

from __future__ import annotations

from math import sqrt

from ._limits import SPLIT

Vector3 = tuple[float, float, float]


def fallback_axis(fx: float, fy: float, fz: float) -> Vector3:
    """The axis least aligned with forward (ties to X, Y, Z), made perpendicular (contract D3).

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


def two_diff(x: float, y: float) -> tuple[float, float]:
    """x - y as hi + lo exactly (Knuth's TwoSum)."""
    s = x - y
    bb = s - x
    return s, (x - (s - bb)) - (y + bb)


def _two_prod(x: float, y: float) -> tuple[float, float]:
    """x * y as hi + lo exactly (Dekker, no FMA needed); |x|, |y| < 2**996."""
    p = x * y
    c = SPLIT * x
    xh = c - (c - x)
    xl = x - xh
    c = SPLIT * y
    yh = c - (c - y)
    yl = y - yh
    return p, (((xh * yh - p) + xh * yl) + xl * yh) + xl * yl


def _cross_term(
    ah: float, al: float, bh: float, bl: float, ch: float, cl: float, eh: float, el: float
) -> float:
    """(ah + al)(bh + bl) - (ch + cl)(eh + el), rounded once at the end (lo * lo terms dropped)."""
    p, pe = _two_prod(ah, bh)
    m, me = _two_prod(ch, eh)
    s = p - m
    bb = s - p
    se = (p - (s - bb)) - (m + bb)
    return s + (se + ((pe - me) + ((ah * bl + al * bh) - (ch * el + cl * eh))))


def near_line_pole(
    dh: Vector3, dl: Vector3, qh: Vector3, ql: Vector3, forward: Vector3, threshold2: float, dd: float
) -> Vector3:
    """Unit bend direction for a pole hint near the line, from C = q x D computed exactly.

    ``dh + dl`` is target - root exactly (or +X when the target is at the root) and ``qh + ql`` is
    pole_hint - root exactly, both possibly scaled by powers of two. ``threshold2 * dd`` is the
    squared on-the-line limit (tolerance * max(|q|, a + b))**2 * |D|**2 in the same units as |C|**2.
    Returns the fallback axis when |q_perp| is within it, else D x C normalised, which is q's part
    perpendicular to D with full relative precision (the projection q - (q.f) f would cancel).
    """
    dxh, dyh, dzh = dh
    dxl, dyl, dzl = dl
    qxh, qyh, qzh = qh
    qxl, qyl, qzl = ql
    cx = _cross_term(qyh, qyl, dzh, dzl, qzh, qzl, dyh, dyl)
    cy = _cross_term(qzh, qzl, dxh, dxl, qxh, qxl, dzh, dzl)
    cz = _cross_term(qxh, qxl, dyh, dyl, qyh, qyl, dxh, dxl)
    cc = cx * cx + cy * cy + cz * cz
    # `cc == 0.0` also covers threshold2 = 0 * inf = nan (tolerance 0, absurd scales).
    if cc <= threshold2 * dd or cc == 0.0:
        return fallback_axis(*forward)
    ux = dyh * cz - dzh * cy
    uy = dzh * cx - dxh * cz
    uz = dxh * cy - dyh * cx
    norm = sqrt(ux * ux + uy * uy + uz * uz)
    return ux / norm, uy / norm, uz / norm
