# SPDX-License-Identifier: GPL-3.0-or-later
"""The contract's rules evaluated in decimal arithmetic (80 digits) from the exact binary inputs.

This is the "exact arithmetic" of contract D8: every float converts to Decimal exactly, and at 80
digits the differences, products and square roots below are exact or within ~1e-78 relative.
Written straight from the contract's text (law of cosines, sin from cos), independent of the solver.
"""

from __future__ import annotations

from decimal import Decimal, localcontext
from typing import NamedTuple

DIGITS = 80

Vec = tuple[Decimal, ...]  # three coordinates


class Reference(NamedTuple):
    joint: Vec
    end: Vec
    reachable: bool
    forward: Vec  # unit vector used as forward (+X at the root)
    pole: Vec  # unit bend direction (the pole's perpendicular part or the fallback axis)
    at_root: bool
    on_line: bool
    d: Decimal  # clamped distance
    reach: Decimal
    fold: Decimal
    # Relative distances of the threshold decisions from their thresholds: decisions closer
    # than a few ulps may legitimately go the other way in floating point.
    root_margin: float
    line_margin: float
    reach_margin: float
    tie_margin: float
    # min(|d - (a + b)|, |d - |a - b||) / (a + b): the joint is ill-conditioned below ~1e-6.
    edge: float


def _dot(u: Vec, v: Vec) -> Decimal:
    return u[0] * v[0] + u[1] * v[1] + u[2] * v[2]


def _cross(u: Vec, v: Vec) -> Vec:
    return (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])


def _norm(u: Vec) -> Decimal:
    return _dot(u, u).sqrt()


def _relative(x: Decimal, y: Decimal) -> float:
    size = max(abs(x), abs(y))
    return float(abs(x - y) / size) if size else float("inf")


def solve_reference(root, target, pole_hint, upper_length, lower_length, tolerance=1e-9) -> Reference:
    """The contract's joint, end and reachable for float inputs, with the decisions' margins."""
    with localcontext() as context:
        context.prec = DIGITS
        r = tuple(Decimal(float(c)) for c in root)
        t = tuple(Decimal(float(c)) for c in target)
        p = tuple(Decimal(float(c)) for c in pole_hint)
        # docs/contract.md D2: a tolerance below 1e-30 counts as 1e-30.
        a, b = Decimal(float(upper_length)), Decimal(float(lower_length))
        tol = Decimal(max(float(tolerance), 1e-30))
        zero, one = Decimal(0), Decimal(1)

        reach = a + b
        fold = abs(a - b)
        eps = tol * reach
        dvec = tuple(x - y for x, y in zip(t, r, strict=True))
        distance = _norm(dvec)
        reachable = fold - eps <= distance <= reach + eps
        reach_margin = min(_relative(distance, fold - eps), _relative(distance, reach + eps))
        at_root = distance <= eps
        root_margin = _relative(distance, eps)
        forward: Vec
        if at_root:
            forward = (one, zero, zero)
            d = zero
        else:
            forward = tuple(x / distance for x in dvec)
            d = distance
        d = min(max(d, fold), reach)

        # q's part perpendicular to forward as D x (q x D) / |D|^2: exact products of exact
        # differences, so a pole hint exactly on the line gives exactly zero.
        qvec = tuple(x - y for x, y in zip(p, r, strict=True))
        line = (one, zero, zero) if at_root else dvec
        cross = _cross(qvec, line)
        length = _norm(cross) / _norm(line)
        limit = tol * max(_norm(qvec), reach)
        on_line = length <= limit or all(c == 0 for c in cross)
        line_margin = _relative(length, limit)
        perpendicular = _cross(line, cross)
        length = _norm(perpendicular)
        sizes = sorted(abs(f) for f in forward)
        tie_margin = _relative(sizes[0], sizes[1])
        if on_line:
            # Contract D3: the axis with the smallest |forward component|, ties X, Y, Z.
            smallest = min(range(3), key=lambda i: (abs(forward[i]), i))
            axis = tuple(one if i == smallest else zero for i in range(3))
            component = forward[smallest]
            perpendicular = tuple(e - component * f for e, f in zip(axis, forward, strict=True))
            length = _norm(perpendicular)
        pole = tuple(x / length for x in perpendicular)

        offset: Vec
        if a == 0:
            offset = (zero, zero, zero)
        elif d == 0:
            offset = tuple(a * u for u in pole)
        else:
            cosine = (a * a + d * d - b * b) / (2 * a * d)
            cosine = min(max(cosine, -one), one)
            sine = (one - cosine * cosine).sqrt()
            offset = tuple(a * (cosine * f + sine * u) for f, u in zip(forward, pole, strict=True))
        joint = tuple(x + y for x, y in zip(r, offset, strict=True))
        end = tuple(x + d * f for x, f in zip(r, forward, strict=True))
        edge = float(min(abs(d - reach), abs(d - fold)) / reach)
        return Reference(
            joint,
            end,
            reachable,
            forward,
            pole,
            at_root,
            on_line,
            d,
            reach,
            fold,
            root_margin,
            line_margin,
            reach_margin,
            tie_margin,
            edge,
        )


def distance_to(point, reference: Vec) -> float:
    """|point - reference| for a float point, evaluated in decimal."""
    with localcontext() as context:
        context.prec = DIGITS
        return float(_norm(tuple(Decimal(float(x)) - y for x, y in zip(point, reference, strict=True))))
